/** @file cpu.c
 * arm64 CPUs: the EL1 virtual timer, the CPUs of the device tree, PSCI,
 * stopping CPUs, the CPU model.
 */
#include <arch.h>
#include <arch/asm.h>
#include <arch/mm.h>
#include <arch/interrupt.h>
#include <arch/cpu_arch.h>
#include <arch/smp_arch.h>
#include <arch/userspace.h>
#include <arch/paging.h>
#include <arch/uaccess.h>
#include <main/main.h>
#include <mm/frame.h>
#include <mm/as.h>
#include <mm/page_fault.h>
#include <syscall/syscall.h>
#include <proc/program.h>
#include <proc/scheduler.h>
#include <proc/thread.h>
#include <proc/task.h>
#include <synch/lockdep.h>
#include <time/delay.h>
#include <debug/symtab.h>
#include <lib/str.h>
#include <print.h>
#include <panic.h>
#include <arch/virt.h>
#include <genarch/gicv2.h>


/* The timer: the EL1 virtual timer, HZ interrupts a second per CPU. */

static uint64_t timer_freq;

void timer_irq_handler(unsigned vector, istate_t *istate)
{
	WRITE_SYSREG(cntv_tval_el0, timer_freq / HZ);
	clock_tick();
}

void arch_timer_start(void)
{
	WRITE_SYSREG(cntv_tval_el0, timer_freq / HZ);
	WRITE_SYSREG(cntv_ctl_el0, 1);
	isb();
}

void arch_cpus_init(cpu_t *bsp, uint64_t mem_total, size_t regions_count)
{
	gicv2_init(VIRT_GICD_PHYS, VIRT_GICC_PHYS);
	gicv2_init_cpu(INTID_VTIMER);
	bsp->arch_id = READ_SYSREG(mpidr_el1) & 0xffffff;
	cpu_count = virt_dt.cpus ? virt_dt.cpus : 1;
	if (cpu_count > 8)
		cpu_count = 8;  /* GICv2 addresses 8 CPU interfaces */
	for (unsigned i = 1; i < cpu_count; i++) {
		cpus[i].id = i;
		cpus[i].self = &cpus[i];
		cpus[i].arch_id = virt_dt.cpu_id[i] & 0xffffff;
	}
	boot_info.cpu_source = "device tree";
	timer_freq = READ_SYSREG(cntfrq_el0);
	time_init(timer_freq);
	for (unsigned i = 0; i < cpu_count; i++)
		cpus[i].timer_hz = timer_freq;
	printf("Memory: %lu MiB usable in %zu regions; CPUs: %u (%s); "
	    "generic timer %lu Hz, GICv2, PSCI by %s\n", mem_total >> 20,
	    regions_count, cpu_count, boot_info.cpu_source, timer_freq,
	    virt_dt.psci_hvc ? "HVC" : "SMC");
}

/* PSCI */

int64_t psci_call(uint64_t fn, uint64_t a1, uint64_t a2, uint64_t a3)
{
	register uint64_t x0 asm("x0") = fn;
	register uint64_t x1 asm("x1") = a1;
	register uint64_t x2 asm("x2") = a2;
	register uint64_t x3 asm("x3") = a3;
	if (virt_dt.psci_hvc)
		asm volatile ("hvc #0" : "+r" (x0) : "r" (x1), "r" (x2), "r" (x3)
		    : "memory");
	else
		asm volatile ("smc #0" : "+r" (x0) : "r" (x1), "r" (x2), "r" (x3)
		    : "memory");
	return (int64_t) x0;
}

void arch_poweroff(void)
{
	psci_call(PSCI_SYSTEM_OFF, 0, 0, 0);
}

/* CPU control */

/** Set once by cpu_arch_stop_others(). Atomics. */
static bool halt_requested;

void cpu_arch_stop_self(void)
{
	(void) interrupts_disable();
	cpu_t *cpu = CPU;
	if (cpu)
		__atomic_store_n(&cpu->state, CPU_HALTED, __ATOMIC_RELEASE);
	for (;;)
		cpu_halt();
}

void cpu_arch_stop_others(void)
{
	__atomic_store_n(&halt_requested, true, __ATOMIC_SEQ_CST);
	arch_ipi_broadcast(INTR_HALT);
}

bool cpu_arch_halt_requested(void)
{
	return __atomic_load_n(&halt_requested, __ATOMIC_SEQ_CST);
}

void cpu_arch_print_model(void)
{
	uint64_t midr = READ_SYSREG(midr_el1);
	printf("MIDR_EL1 %#lx (implementer %#lx, part %#lx)", midr,
	    (midr >> 24) & 0xff, (midr >> 4) & 0xfff);
}
