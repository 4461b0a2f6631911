/** @file userspace.h
 * amd64 user mode: segment selectors, the syscall/sysret entry and the first
 * entry of a thread into ring 3.
 *
 * GDT layout (cpu.c): 0x08 kernel code, 0x10 kernel data, 0x18 null (where
 * a 32-bit user code segment would be: none, so ring 3 cannot enter
 * compatibility mode), 0x20 user data, 0x28 user code (64-bit). STAR makes
 * `syscall` load CS 0x08/SS 0x10 and `sysretq` load CS 0x2b/SS 0x23.
 */
#ifndef KERN_ARCH_USERSPACE_H_
#define KERN_ARCH_USERSPACE_H_

#define GDT_SEL_UDATA   0x23   /**< user data | RPL 3 */
#define GDT_SEL_UCODE   0x2b   /**< 64-bit user code | RPL 3 */

/** Offsets in cpu_t used by syscall.S (checked by static asserts). */
#define CPU_OFF_SYSCALL_KSTACK 8
#define CPU_OFF_SYSCALL_USTACK 16

/** Vector number recorded in the istate of a system call. */
#define VECTOR_SYSCALL 0x100
/** Vector number recorded in the istate of a compat-mode `syscall` (CSTAR). */
#define VECTOR_SYSCALL_COMPAT 0x101

/**
 * The selector a compat-mode `syscall` entry records as the user CS (GDT slot
 * 0x18 | RPL 3). STAR[63:48] names this slot only for sysretq's arithmetic;
 * the slot holds a null descriptor, so no far transfer can load it.
 */
#define GDT_SEL_UCODE32 0x1b

#ifndef __ASSEMBLY__
#include <typedefs.h>
#include <arch/interrupt.h>

/**
 * Programs the syscall MSRs (STAR, LSTAR, FMASK, EFER.SCE) and enables SMEP
 * when CPUID reports it. Each CPU, once, from cpu_arch_init(); interrupts
 * disabled.
 */
void userspace_arch_init_cpu(void);

/**
 * Sets the kernel stack used on entry from ring 3 (TSS rsp0 and the syscall
 * stack) of the calling CPU to @a top. Interrupts disabled (scheduler hook).
 */
void userspace_set_kstack(uintptr_t top);

/**
 * Leaves for ring 3 at @a rip with stack @a rsp, rdi = @a arg0, rsi = @a arg1,
 * every other register zero, interrupts enabled in user mode. Thread context;
 * the thread's address space must be loaded. Never returns.
 */
NO_RETURN void userspace_enter(uintptr_t rip, uintptr_t rsp, uint64_t arg0,
    uint64_t arg1);

/**
 * Called by syscall_compat_entry (MSR_CSTAR, syscall.S) for a `syscall`
 * executed in 32-bit compatibility mode, on the thread's kernel stack with
 * interrupts disabled: reports and kills the task (no 32-bit ABI); the
 * calling thread exits. Never returns.
 */
NO_RETURN void syscall_compat_dispatch(istate_t *istate);

/** True when @a istate was saved on an entry from ring 3. */
static inline bool istate_from_user(const istate_t *istate)
{
	return (istate->cs & 3) != 0;
}

/**
 * Enables x87, SSE and (with XSAVE) AVX for user threads on the calling CPU:
 * CR0, CR4, XCR0 (uctx.c). @a boot_cpu: the first CPU, which records how
 * the state is saved; the others must agree (else panic). Each CPU once, from
 * userspace_arch_init_cpu(); interrupts disabled.
 */
void fpu_init_cpu(bool boot_cpu);
/** Describes the FP state's save method and size for the boot log, into @a buf. */
void fpu_describe(char *buf, size_t size);
/** True when the CPU supports and the kernel enabled UMIP. */
bool userspace_umip_enabled(void);

/** True when the CPU supports and the kernel enabled SMEP. */
bool userspace_smep_enabled(void);
/** True when the CPU supports and the kernel enabled SMAP. */
bool userspace_smap_enabled(void);

/**
 * With SMAP: lets the calling context access user pages directly (sets
 * RFLAGS.AC) or forbids it (clears it). Without SMAP nothing happens. Kernel
 * threads that entered a user address space (as_enter(): tests, benchmarks)
 * touch its pages directly; user threads never do (copy_from_user()).
 * Interrupts disabled (scheduler hook) or the calling thread's own state.
 */
void userspace_set_direct_access(bool allow);

#define RFLAGS_AC_BIT (1UL << 18)
#endif

#endif
