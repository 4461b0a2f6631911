/** @file cpu.c
 * amd64 per-CPU descriptor tables and stopping CPUs.
 */
#include <arch/cpu_arch.h>
#include <arch/asm.h>
#include <arch/apic.h>
#include <arch/interrupt.h>
#include <arch/userspace.h>
#include <cpu.h>
#include <print.h>
#include <lib/str.h>

typedef struct {
	uint32_t reserved0;
	uint64_t rsp[3];
	uint64_t reserved1;
	uint64_t ist[7];
	uint64_t reserved2;
	uint16_t reserved3;
	uint16_t iomap_base;
} PACKED tss_t;

typedef struct {
	uint16_t limit;
	uint64_t base;
} PACKED gdtr_t;

/**
 * Per-CPU descriptor tables and IST stacks. Each entry is written by its own CPU
 * in cpu_arch_init() and only read by the CPU afterwards (CPU-local).
 */
typedef struct {
	uint64_t gdt[8] ALIGNED(16);
	tss_t tss ALIGNED(16);
	uint8_t ist_stacks[3][IST_STACK_SIZE] ALIGNED(16);
} cpu_arch_t;

static cpu_arch_t cpu_arch[CONFIG_MAX_CPUS];

/** Set once by cpu_arch_stop_others(); read by NMI handlers. Atomics. */
static bool halt_requested;

void cpu_arch_init(struct cpu *cpu)
{
	cpu_arch_t *ca = &cpu_arch[cpu->id];

	memset(&ca->tss, 0, sizeof(ca->tss));
	for (int i = 0; i < 3; i++)
		ca->tss.ist[i] = (uint64_t) &ca->ist_stacks[i][IST_STACK_SIZE];
	ca->tss.rsp[0] = cpu->stack_top;
	ca->tss.iomap_base = sizeof(tss_t);

	ca->gdt[0] = 0;
	ca->gdt[1] = 0x00af9a000000ffffUL;  /* 0x08 kernel code, 64-bit */
	ca->gdt[2] = 0x00cf92000000ffffUL;  /* 0x10 kernel data */
	/*
	 * User segments: sysretq derives 0x23 (data) and 0x2b (code) from
	 * STAR[63:48] = 0x1b without reading the descriptor at 0x18. Slot 0x18
	 * is where a 32-bit user code segment would be; it stays null, so that
	 * no far jump, far return or iretq from ring 3 can enter 32-bit
	 * compatibility (or 16-bit) mode: loading it into CS is a #GP in ring
	 * 3. The kernel has no 32-bit ABI; a compat-mode `syscall` would be
	 * killed by the CSTAR entry anyway (defence in depth, userspace.c).
	 */
	ca->gdt[3] = 0;                     /* 0x18 null: no 32-bit user code */
	ca->gdt[4] = 0x00cff2000000ffffUL;  /* 0x20 user data */
	ca->gdt[5] = 0x00affa000000ffffUL;  /* 0x28 user code, 64-bit */

	uint64_t base = (uint64_t) &ca->tss;
	uint64_t limit = sizeof(tss_t) - 1;
	ca->gdt[6] = (limit & 0xffff) | ((base & 0xffffff) << 16) |
	    (0x89UL << 40) | (((limit >> 16) & 0xf) << 48) |
	    (((base >> 24) & 0xff) << 56);
	ca->gdt[7] = base >> 32;

	gdtr_t gdtr = { .limit = sizeof(ca->gdt) - 1, .base = (uint64_t) ca->gdt };
	asm volatile (
	    "lgdt %0\n"
	    "pushq %1\n"
	    "leaq 1f(%%rip), %%rax\n"
	    "pushq %%rax\n"
	    "lretq\n"
	    "1:\n"
	    "movw %w2, %%ax\n"
	    "movw %%ax, %%ds\n"
	    "movw %%ax, %%es\n"
	    "movw %%ax, %%ss\n"
	    "xorw %%ax, %%ax\n"
	    "movw %%ax, %%fs\n"
	    "movw %%ax, %%gs\n"
	    :: "m" (gdtr), "i" ((uint64_t) GDT_SEL_KCODE), "i" (GDT_SEL_KDATA)
	    : "rax", "memory");
	asm volatile ("ltr %w0" :: "r" (GDT_SEL_TSS));
	/*
	 * A null LDT, explicitly: a selector with TI=1 then faults (#GP) instead
	 * of reading descriptors from whatever LDTR held at reset (QEMU's reset
	 * LDT has base 0 and limit 0xffff: an LDT at user address 0).
	 */
	asm volatile ("lldt %w0" :: "r" (0));

	/* GS base after reloading GS (loading the selector clears the base). */
	cpu->self = cpu;
	write_msr(MSR_GS_BASE, (uint64_t) cpu);
	idt_load();
	userspace_arch_init_cpu();
}

void cpu_arch_set_rsp0(uintptr_t top)
{
	cpu_arch[CPU->id].tss.rsp[0] = top;
}

void cpu_arch_stop_self(void)
{
	asm volatile ("cli" ::: "memory");
	cpu_t *cpu = CPU;
	if (cpu)
		__atomic_store_n(&cpu->state, CPU_HALTED, __ATOMIC_RELEASE);
	for (;;)
		asm volatile ("cli; hlt" ::: "memory");
}

void cpu_arch_stop_others(void)
{
	__atomic_store_n(&halt_requested, true, __ATOMIC_SEQ_CST);
	if (lapic_ready())
		lapic_send_nmi_all_but_self();
}

bool cpu_arch_halt_requested(void)
{
	return __atomic_load_n(&halt_requested, __ATOMIC_SEQ_CST);
}

void cpu_arch_print_model(void)
{
	uint32_t regs[12];
	uint32_t a, b, c, d;

	cpuid(0x80000000, &a, &b, &c, &d);
	if (a < 0x80000004) {
		printf("unknown x86-64 CPU");
		return;
	}
	for (uint32_t i = 0; i < 3; i++)
		cpuid(0x80000002 + i, &regs[i * 4], &regs[i * 4 + 1],
		    &regs[i * 4 + 2], &regs[i * 4 + 3]);
	char name[49];
	memcpy(name, regs, 48);
	name[48] = 0;
	const char *p = name;
	while (*p == ' ')
		p++;
	printf("%s", p);
}
