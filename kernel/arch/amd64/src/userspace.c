/** @file userspace.c
 * amd64 user mode set-up: syscall MSRs, SMEP, the kernel stack used on entry
 * from ring 3 (TSS rsp0 and the syscall entry's stack).
 */
#include <arch.h>
#include <arch/userspace.h>
#include <arch/entry.h>
#include <arch/cpu_arch.h>
#include <arch/asm.h>
#include <cpu.h>
#include <panic.h>
#include <proc/task.h>

_Static_assert(offsetof(cpu_t, syscall_kstack) == CPU_OFF_SYSCALL_KSTACK,
    "syscall.S: cpu_t.syscall_kstack offset");
_Static_assert(offsetof(cpu_t, syscall_ustack) == CPU_OFF_SYSCALL_USTACK,
    "syscall.S: cpu_t.syscall_ustack offset");

#define MSR_STAR   0xc0000081
#define MSR_LSTAR  0xc0000082
#define MSR_CSTAR  0xc0000083
#define MSR_FMASK  0xc0000084
#define MSR_SYSENTER_CS  0x174
#define MSR_SYSENTER_ESP 0x175
#define MSR_SYSENTER_EIP 0x176
#define EFER_SCE   (1UL << 0)
#define CR4_SMEP   (1UL << 20)
#define CR4_SMAP   (1UL << 21)
#define CR4_UMIP   (1UL << 11)

#define RFLAGS_TF  (1UL << 8)
#define RFLAGS_DF  (1UL << 10)
#define RFLAGS_AC  (1UL << 18)
#define RFLAGS_NT  (1UL << 14)

/** SMEP was enabled on the CPUs (the same on all). Written at boot. */
static bool smep_enabled;
/** UMIP was enabled on the CPUs (the same on all). Written at boot. */
static bool umip_enabled;
/**
 * 1 when SMAP is enabled (every CPU, the same CPUID); read by uaccess.S and
 * isr.S to decide whether to execute stac/clac (invalid opcodes without
 * SMAP). Written by each CPU at boot before it runs anything else.
 * (Declared here for the assembly files that use it.)
 */
extern uint8_t uaccess_smap;
uint8_t uaccess_smap;

void userspace_arch_init_cpu(void)
{
	write_msr(MSR_EFER, read_msr(MSR_EFER) | EFER_SCE);
	/*
	 * STAR[47:32]: syscall CS = 0x08, SS = 0x10; STAR[63:48] = 0x18 | 3:
	 * sysretq CS = 0x18 + 16 = 0x28 | 3, SS = 0x18 + 8 = 0x20 | 3.
	 */
	write_msr(MSR_STAR, ((uint64_t) (0x18 | 3) << 48) |
	    ((uint64_t) GDT_SEL_KCODE << 32));
	write_msr(MSR_LSTAR, (uint64_t) syscall_entry);
	/*
	 * Every system-call entry MSR has a defined value. CSTAR: `syscall`
	 * from compat mode kills the task. SYSENTER_CS = 0: `sysenter` raises #GP(0) in ring 3 (Intel,
	 * and QEMU with an Intel vendor; AMD CPUs raise #UD in long mode), so
	 * it never enters ring 0; EIP and ESP are 0 so that no stale value
	 * is ever a target.
	 */
	write_msr(MSR_CSTAR, (uint64_t) syscall_compat_entry);
	write_msr(MSR_SYSENTER_CS, 0);
	write_msr(MSR_SYSENTER_ESP, 0);
	write_msr(MSR_SYSENTER_EIP, 0);
	write_msr(MSR_FMASK, RFLAGS_IF | RFLAGS_TF | RFLAGS_DF | RFLAGS_AC |
	    RFLAGS_NT);
	/* The user GS base starts at 0 (swapgs exchanges it with the kernel's). */
	write_msr(MSR_KERNEL_GS_BASE, 0);

	uint32_t a, b, c, d;
	cpuid(0, &a, &b, &c, &d);
	if (a >= 7) {
		cpuid(7, &a, &b, &c, &d);
		if (b & (1U << 7)) {
			write_cr4(read_cr4() | CR4_SMEP);
			__atomic_store_n(&smep_enabled, true, __ATOMIC_RELAXED);
		}
		if (b & (1U << 20)) {
			__atomic_store_n(&uaccess_smap, 1, __ATOMIC_RELAXED);
			asm volatile ("clac" ::: "memory");
			write_cr4(read_cr4() | CR4_SMAP);
		}
		/*
		 * UMIP (CPUID.(7,0):ECX[2]): sgdt, sidt, sldt, str and smsw
		 * raise #GP in ring 3 (`protection fault`) instead of telling
		 * a task where the kernel's tables are.
		 */
		if (c & (1U << 2)) {
			write_cr4(read_cr4() | CR4_UMIP);
			__atomic_store_n(&umip_enabled, true, __ATOMIC_RELAXED);
		}
	}
	fpu_init_cpu(CPU->id == 0);
}

bool userspace_umip_enabled(void)
{
	return __atomic_load_n(&umip_enabled, __ATOMIC_RELAXED);
}

bool userspace_smep_enabled(void)
{
	return __atomic_load_n(&smep_enabled, __ATOMIC_RELAXED);
}

bool userspace_smap_enabled(void)
{
	return __atomic_load_n(&uaccess_smap, __ATOMIC_RELAXED) != 0;
}

const char *userspace_access_guard(void)
{
	return userspace_smap_enabled() ? "SMAP" : NULL;
}

void userspace_set_direct_access(bool allow)
{
	if (!userspace_smap_enabled())
		return;
	if (allow)
		asm volatile ("stac" ::: "memory", "cc");
	else
		asm volatile ("clac" ::: "memory", "cc");
}

void userspace_set_kstack(uintptr_t top)
{
	cpu_t *c = CPU;
	c->syscall_kstack = top;
	cpu_arch_set_rsp0(top);
}

void syscall_compat_dispatch(istate_t *istate)
{
	/* Interrupts are still disabled (FMASK cleared IF). */
	/* A compat-mode syscall: there is no 32-bit ABI. */
	task_user_fault(istate, UFAULT_NO_ABI, istate->rip);
	/* The task is killed: this thread exits here. */
	task_user_return();
	panic_istate(istate, "compat-mode syscall: the task was not killed");
}
