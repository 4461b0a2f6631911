/** @file cpu_arch.h
 * arm64 CPU control: stopping CPUs, the CPU model.
 */
#ifndef KERN_ARCH_CPU_ARCH_H_
#define KERN_ARCH_CPU_ARCH_H_

#include <typedefs.h>

/** Coherence granule in bytes (Cortex-A72 and most arm64 cores: 64): data
 * that CPUs write independently is aligned to it so that no line carries
 * two CPUs' writes. */
#define CACHE_LINE_SIZE 64

#ifdef CONFIG_KASAN
/* KASAN's redzones around locals make frames larger: twice the stack. */
#define KERNEL_STACK_SIZE 32768
#else
#define KERNEL_STACK_SIZE 16384
#endif

/** Header line of the `cpus` command (its columns: arch_id, timer_hz). */
#define CPU_ARCH_TABLE_HEADER \
	"cpu  mpid  state     timer-Hz  cntfrq-Hz    ticks"

struct cpu;

/** Stops the calling CPU for good (IRQs masked, wfi loop); marks it halted. */
NO_RETURN void cpu_arch_stop_self(void);
/** Asks every other CPU to stop (INTR_HALT broadcast). Panic and halt. */
void cpu_arch_stop_others(void);
/** True after cpu_arch_stop_others() was called. */
bool cpu_arch_halt_requested(void);
/** Prints the CPU model (MIDR_EL1). */
void cpu_arch_print_model(void);

#endif
