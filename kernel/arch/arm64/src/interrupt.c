/** @file interrupt.c
 * arm64 interrupt handlers: registration, counts, the GIC IRQ dispatch.
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


/* Interrupt dispatch */

static iroutine_t handlers[IVT_ITEMS];
static const char *handler_names[IVT_ITEMS];
/** Per-CPU counts; each CPU writes its own row (relaxed), others sum. */
static uint64_t interrupt_counts[CONFIG_MAX_CPUS][IVT_ITEMS] ALIGNED(64);

void interrupt_register(unsigned vector, const char *name, iroutine_t handler)
{
	handlers[vector] = handler;
	handler_names[vector] = name;
}

uint64_t interrupt_count(unsigned vector)
{
	uint64_t sum = 0;
	if (vector >= IVT_ITEMS)
		return 0;
	for (unsigned i = 0; i < CONFIG_MAX_CPUS; i++)
		sum += __atomic_load_n(&interrupt_counts[i][vector],
		    __ATOMIC_RELAXED);
	return sum;
}

void istate_print(const istate_t *is)
{
	printf("PC=%016lx ", is->elr);
	symtab_print_addr(is->elr);
	printf("\nSP=%016lx SPSR=%08lx ESR=%08lx FAR=%016lx\n", is->sp,
	    is->spsr, is->esr, is->far);
	for (int i = 0; i < 31; i++)
		printf("x%-2d=%016lx%s", i, is->x[i], (i % 4 == 3) ? "\n" : " ");
	printf("\n");
}

void irq_dispatch(istate_t *istate)
{
	cpu_t *cpu = CPU;
	uint32_t iar = gicv2_ack();
	unsigned intid = iar & 0x3ff;
	if (intid >= GICV2_INTID_SPURIOUS)
		return;  /* spurious */
	if (intid < IVT_ITEMS)
		__atomic_fetch_add(&interrupt_counts[cpu->id][intid], 1,
		    __ATOMIC_RELAXED);
	/*
	 * As amd64's interrupt_dispatch(): an idle CPU is no longer idle (the
	 * grace-period detector takes an idle CPU as quiescent without asking
	 * it, and this handler may enter a reader section). On amd64 the
	 * seq_cst store is an xchg, a full barrier; on arm64 it is an STLR,
	 * which later loads may pass: the fence keeps the handler's reader
	 * loads after the store (no store-load reordering), the detector's
	 * side being its seq_cst load of the flag after it started the GP.
	 */
	if (__atomic_load_n(&cpu->idle, __ATOMIC_RELAXED)) {
		__atomic_store_n(&cpu->idle, false, __ATOMIC_SEQ_CST);
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
	}
	cpu->irq_nesting++;
	lockdep_hardirq_enter(intid);
	/*
	 * End of interrupt before the handler: it may not return (halt), and
	 * a cross-call may send IPIs. An SGI of the same id sent meanwhile
	 * stays pending (IRQs are masked until the exception returns).
	 */
	gicv2_eoi(iar);
	if (intid < IVT_ITEMS && handlers[intid])
		handlers[intid](intid, istate);
	lockdep_hardirq_exit(intid);
	cpu->irq_nesting--;
	if (cpu->need_resched && !(istate->spsr & DAIF_I))
		scheduler_preempt_check();
	if (istate_from_user(istate))
		task_user_return();
}
