/** @file asm.h
 * amd64 low-level helpers: port I/O, control registers, MSRs, interrupt flag.
 * All are safe in any context unless noted.
 */
#ifndef KERN_ARCH_ASM_H_
#define KERN_ARCH_ASM_H_

#include <typedefs.h>

#define RFLAGS_IF (1UL << 9)

static inline void outb(uint16_t port, uint8_t v)
{
	asm volatile ("outb %0, %1" :: "a" (v), "Nd" (port) : "memory");
}

static inline void outw(uint16_t port, uint16_t v)
{
	asm volatile ("outw %0, %1" :: "a" (v), "Nd" (port) : "memory");
}

static inline uint8_t inb(uint16_t port)
{
	uint8_t v;
	asm volatile ("inb %1, %0" : "=a" (v) : "Nd" (port) : "memory");
	return v;
}

/** What cycle_count() counts, as generic reports name it ("lockstat"). */
#define CYCLE_COUNT_UNIT "TSC cycles (instructions under -icount shift=0)"

/** Spin-loop hint; every busy-wait loop in the kernel calls it. */
static inline void cpu_relax(void)
{
	asm volatile ("pause" ::: "memory");
}

/** Atomically enables interrupts and halts (no wake-up lost between the two). */
static inline void cpu_sleep_enable_irq(void)
{
	asm volatile ("sti; hlt" ::: "memory");
}

static inline uint64_t read_rflags(void)
{
	uint64_t f;
	asm volatile ("pushfq; popq %0" : "=r" (f) :: "memory");
	return f;
}

/** Disables interrupts, returns the previous state for interrupts_restore(). */
static inline ipl_t interrupts_disable(void)
{
	ipl_t f = read_rflags();
	asm volatile ("cli" ::: "memory");
	return f;
}

/** Enables interrupts, returns the previous state. */
static inline ipl_t interrupts_enable(void)
{
	ipl_t f = read_rflags();
	asm volatile ("sti" ::: "memory");
	return f;
}

/** Restores the interrupt state saved by interrupts_disable()/interrupts_enable(). */
static inline void interrupts_restore(ipl_t ipl)
{
	if (ipl & RFLAGS_IF)
		asm volatile ("sti" ::: "memory");
	else
		asm volatile ("cli" ::: "memory");
}

/** True when interrupts are disabled on this CPU. */
static inline bool interrupts_disabled(void)
{
	return !(read_rflags() & RFLAGS_IF);
}

static inline uint64_t read_msr(uint32_t msr)
{
	uint32_t lo, hi;
	asm volatile ("rdmsr" : "=a" (lo), "=d" (hi) : "c" (msr));
	return ((uint64_t) hi << 32) | lo;
}

static inline void write_msr(uint32_t msr, uint64_t v)
{
	asm volatile ("wrmsr" :: "c" (msr), "a" ((uint32_t) (v & 0xffffffffu)),
	    "d" ((uint32_t) (v >> 32)) : "memory");
}

static inline uint64_t read_cr2(void)
{
	uint64_t v;
	asm volatile ("mov %%cr2, %0" : "=r" (v));
	return v;
}

static inline uint64_t read_cr3(void)
{
	uint64_t v;
	asm volatile ("mov %%cr3, %0" : "=r" (v));
	return v;
}

static inline void write_cr3(uint64_t v)
{
	asm volatile ("mov %0, %%cr3" :: "r" (v) : "memory");
}

/** CR0 (FPU control: MP, NE, EM, TS; uctx.c sets them at boot). */
static inline uint64_t read_cr0(void)
{
	uint64_t v;
	asm volatile ("mov %%cr0, %0" : "=r" (v));
	return v;
}

static inline void write_cr0(uint64_t v)
{
	asm volatile ("mov %0, %%cr0" :: "r" (v) : "memory");
}

/** CR4 (OSFXSR, OSXSAVE, SMEP, SMAP, UMIP; set per CPU at boot). */
static inline uint64_t read_cr4(void)
{
	uint64_t v;
	asm volatile ("mov %%cr4, %0" : "=r" (v));
	return v;
}

static inline void write_cr4(uint64_t v)
{
	asm volatile ("mov %0, %%cr4" :: "r" (v) : "memory");
}

static inline void invlpg(uintptr_t va)
{
	asm volatile ("invlpg (%0)" :: "r" (va) : "memory");
}

static inline uint64_t rdtsc(void)
{
	uint32_t lo, hi;
	asm volatile ("rdtsc" : "=a" (lo), "=d" (hi));
	return ((uint64_t) hi << 32) | lo;
}

/**
 * The cycle counter generic code times with (time/delay.c, lock statistics):
 * the TSC (invariant under QEMU). Any context.
 */
static inline uint64_t cycle_count(void)
{
	return rdtsc();
}

/** True when the saved interrupt state @a ipl has interrupts enabled. */
static inline bool ipl_enabled(ipl_t ipl)
{
	return (ipl & RFLAGS_IF) != 0;
}

static inline void cpuid(uint32_t leaf, uint32_t *a, uint32_t *b, uint32_t *c,
    uint32_t *d)
{
	asm volatile ("cpuid" : "=a" (*a), "=b" (*b), "=c" (*c), "=d" (*d)
	    : "a" (leaf), "c" (0));
}

static inline uintptr_t read_rbp(void)
{
	uintptr_t v;
	asm volatile ("mov %%rbp, %0" : "=r" (v));
	return v;
}

/** The caller's frame pointer, for backtrace_print_from(). */
static inline uintptr_t frame_pointer(void)
{
	return read_rbp();
}

#define MSR_EFER      0xc0000080
#define MSR_GS_BASE   0xc0000101
#define MSR_KERNEL_GS_BASE 0xc0000102
#define MSR_APIC_BASE 0x1b

#endif
