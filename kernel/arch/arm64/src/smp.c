/** @file smp.c
 * arm64 SMP: IPIs (SGIs), their handlers, secondary CPUs started by PSCI
 * CPU_ON.
 */
#include <arch.h>
#include <arch/asm.h>
#include <arch/mm.h>
#include <arch/interrupt.h>
#include <arch/entry.h>
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


/* IPIs: SGIs through GICD_SGIR. */

static void smp_call_handler(unsigned vector, istate_t *istate)
{
	smp_call_ipi_receive();
}

#ifdef CONFIG_TEST
/* The ipi1 test counts these (kernel/test/smp/ipi1.c). */
static void ipi_test_handler(unsigned vector, istate_t *istate)
{
	atomic_inc(&CPU->ipi_test_count);
}
#endif

static void halt_ipi_handler(unsigned vector, istate_t *istate)
{
	cpu_arch_stop_self();
}

static void wakeup_ipi_handler(unsigned vector, istate_t *istate)
{
}

static unsigned intr_id(intr_kind_t kind)
{
	switch (kind) {
	case INTR_TIMER:
		return INTID_VTIMER;
	case INTR_SMP_CALL:
		return INTID_SMP_CALL;
	case INTR_WAKEUP:
		return INTID_WAKEUP;
	case INTR_IPI_TEST:
		return INTID_IPI_TEST;
	case INTR_HALT:
		return INTID_HALT;
	}
	return 0;
}

void arch_ipi_send(const cpu_t *c, intr_kind_t kind)
{
	/* QEMU virt: GIC CPU interface number = cpus[] index. */
	gicv2_send_sgi((1U << (16 + c->id)) | intr_id(kind));
}

void arch_ipi_broadcast(intr_kind_t kind)
{
	/* TargetListFilter 1: every CPU but the sender. */
	gicv2_send_sgi((1U << 24) | intr_id(kind));
}

uint64_t arch_intr_count(intr_kind_t kind)
{
	return interrupt_count(intr_id(kind));
}

void arch_interrupts_init(cpu_t *bsp)
{
	(void) bsp;
	interrupt_register(INTID_VTIMER, "timer", timer_irq_handler);
	interrupt_register(INTID_SMP_CALL, "smp-call", smp_call_handler);
#ifdef CONFIG_TEST
	interrupt_register(INTID_IPI_TEST, "ipi-test", ipi_test_handler);
#endif
	interrupt_register(INTID_HALT, "halt", halt_ipi_handler);
	interrupt_register(INTID_WAKEUP, "wakeup", wakeup_ipi_handler);
}

/* Secondary CPUs */

/**
 * The stack a starting secondary loads (start.S); one start at a time.
 * (Declared here for the assembly file.)
 */
extern uint64_t ap_boot_sp;
uint64_t ap_boot_sp;

/** Physical address of ap_start (start.S; linked there, out of adrp's reach). */
static uintptr_t ap_start_phys(void)
{
	uintptr_t a;
	asm ("ldr %0, =ap_start" : "=r" (a));
	return a;
}

#define AP_START_TIMEOUT_US 5000000UL

unsigned smp_start_aps(void)
{
	for (unsigned i = 1; i < cpu_count; i++) {
		cpu_t *c = &cpus[i];
		uintptr_t stack = frame_alloc(KERNEL_STACK_SIZE / PAGE_SIZE,
		    FRAME_ZERO);
		if (!stack) {
			c->state = CPU_FAILED;
			continue;
		}
		c->stack_top = (uintptr_t) PA2KA(stack) + KERNEL_STACK_SIZE;
		ap_boot_sp = c->stack_top;
		/* Release: the secondary's acquire of its state sees the above. */
		__atomic_store_n(&c->state, CPU_STARTING, __ATOMIC_RELEASE);
		/* The entry runs with the MMU off: ap_start's physical address. */
		int64_t rc = psci_call(PSCI_CPU_ON, virt_dt.cpu_id[i],
		    ap_start_phys(), i);
		uint64_t start = uptime_us();
		while (rc == 0 && __atomic_load_n(&c->state, __ATOMIC_ACQUIRE) !=
		    CPU_ONLINE && uptime_us() - start < AP_START_TIMEOUT_US)
			cpu_relax();
		if (__atomic_load_n(&c->state, __ATOMIC_ACQUIRE) != CPU_ONLINE) {
			printf("smp: CPU %u (MPIDR %#lx) did not start (PSCI %ld)\n",
			    i, virt_dt.cpu_id[i], rc);
			__atomic_store_n(&c->state, CPU_FAILED, __ATOMIC_RELEASE);
		}
	}
	return (unsigned) atomic_get(&cpu_active_count);
}

void smp_boot_finish(void)
{
	/*
	 * Nothing to drop: each CPU loaded the empty table into TTBR0 right
	 * after its branch to the direct map (start.S, drop_identity). The boot
	 * tables stay for a CPU that PSCI starts later.
	 */
}

void ap_entry_index(unsigned idx)
{
	cpu_t *cpu = &cpus[idx];
	arch_percpu_init(cpu);
	ap_entry(cpu);
}

void ap_entry(cpu_t *cpu)
{
	gicv2_init_cpu(INTID_VTIMER);
	arch_timer_start();
	/* TTBR0 holds the empty table already: start.S, drop_identity. */
	atomic_inc(&cpu_active_count);
	/* Acknowledge: the BSP goes on with the next CPU. */
	__atomic_store_n(&cpu->state, CPU_ONLINE, __ATOMIC_RELEASE);
	main_ap();
}
