/** @file smp_arch.h
 * arm64 secondary CPUs: started by PSCI CPU_ON at ap_start (start.S).
 */
#ifndef KERN_ARCH_SMP_ARCH_H_
#define KERN_ARCH_SMP_ARCH_H_

#include <arch.h>

struct cpu;
/** C entry of a secondary CPU (start.S, MMU on, on its stack). */
NO_RETURN void ap_entry(struct cpu *cpu);

#endif
