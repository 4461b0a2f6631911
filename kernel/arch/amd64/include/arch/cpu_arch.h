/** @file cpu_arch.h
 * amd64 per-CPU state: GDT, TSS, interrupt stacks.
 */
#ifndef KERN_ARCH_CPU_ARCH_H_
#define KERN_ARCH_CPU_ARCH_H_

#include <typedefs.h>

/** Coherence granule in bytes: data that CPUs write independently is
 * aligned to it so that no line carries two CPUs' writes. */
#define CACHE_LINE_SIZE 64

#define GDT_SEL_KCODE 0x08
#define GDT_SEL_KDATA 0x10
#define GDT_SEL_TSS   0x30

/** IST slots (1-based as the IDT encodes them). */
#define IST_DOUBLE_FAULT 1
#define IST_NMI          2
#define IST_MCE          3

#define IST_STACK_SIZE   8192
#ifdef CONFIG_KASAN
/* KASAN's redzones around locals make frames larger: twice the stack. */
#define KERNEL_STACK_SIZE 32768
#else
#define KERNEL_STACK_SIZE 16384
#endif

/** Header line of the `cpus` command (its columns: arch_id, timer_hz). */
#define CPU_ARCH_TABLE_HEADER \
	"cpu  apic  state     timer-Hz  lapic-Hz     ticks"

struct cpu;

/**
 * Sets up the calling CPU: its own GDT and TSS (with IST stacks), the IDT and the
 * GS base pointing to @a cpu. Called once per CPU with interrupts disabled.
 */
void cpu_arch_init(struct cpu *cpu);

/**
 * Sets TSS rsp0 (the stack of an interrupt from ring 3) of the calling CPU.
 * Interrupts disabled.
 */
void cpu_arch_set_rsp0(uintptr_t top);

/** Stops the calling CPU for good (interrupts off, hlt loop); marks it halted. */
NO_RETURN void cpu_arch_stop_self(void);

/** Asks every other CPU to stop (NMI broadcast). Used by panic and halt. */
void cpu_arch_stop_others(void);

/** True after cpu_arch_stop_others() was called. */
bool cpu_arch_halt_requested(void);

/** Prints the CPU model (CPUID brand string). */
void cpu_arch_print_model(void);

#endif
