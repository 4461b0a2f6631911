/** @file main.c
 * Kernel initialization: the boot sequence of the BSP (calling the
 * architecture at the points arch.h names) and the AP entry.
 */
#include <main/main.h>
#include <debug/sections.h>
#include <arch.h>
#include <console/console.h>
#include <console/kconsole.h>
#include <debug/kcsan.h>
#include <mm/frame.h>
#include <mm/malloc.h>
#include <time/delay.h>
#include <lib/str.h>
#include <print.h>
#include <panic.h>
#include <cpu.h>
#include <synch/rcu.h>
#include <synch/workqueue.h>
#include <adt/cht.h>
#include <mm/as.h>
#include <proc/task.h>
#include <proc/program.h>

#include <smp/smp_call.h>
#include <proc/thread.h>
#include <proc/scheduler.h>
#include <time/timeout.h>
#include <debug/kasan.h>

boot_info_t boot_info;

#define MAX_REGIONS 64
/** Usable RAM the architecture found; BSP only, during boot. */
static phys_region_t regions[MAX_REGIONS];
static size_t regions_count;

void clock_tick(void)
{
	cpu_t *c = CPU;
	/*
	 * The slab reclaimer's tick protocol (mm/slab_reclaim.c, "Flushing another
	 * CPU's magazines"): release, so that the stores of a magazine operation
	 * before this tick are visible to whoever sees the new count (no later
	 * store-store reordering: needed on arm64); then a full fence, so that a
	 * magazine operation after this tick loads flush_req only after the new
	 * count is visible (no store-load reordering: the store-buffering
	 * pattern with the reclaimer's fence in slab_reclaim.c).
	 */
	__atomic_store_n(&c->ticks, c->ticks + 1, __ATOMIC_RELEASE);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	timeout_process();
	scheduler_tick();
}

static void kconsole_thread(void *arg)
{
	kconsole_run();
}

void main_bsp(uintptr_t boot_arg0, uintptr_t boot_arg1)
{
	cpu_t *bsp = &cpus[0];

	/* CPU (the per-CPU base register) must work before the first printf. */
	bsp->self = bsp;
	bsp->id = 0;
	arch_percpu_init(bsp);
	bsp->stack_top = (uintptr_t) boot_stack_top;

	console_init();
	printf("\nBooting HelenOS-style SMP kernel %s (%s build, rev %s)\n",
	    KERNEL_VERSION, CONFIG_BUILD, KERNEL_GIT_REV);

	regions_count = arch_boot_memory(boot_arg0, boot_arg1, regions,
	    MAX_REGIONS);
#ifdef CONFIG_KASAN
	/* The direct map's shadow, out of RAM before the frame allocator sees it. */
	kasan_init_shadow(regions, regions_count);
#endif
	arch_interrupts_init(bsp);

	frame_init(regions, regions_count);
	heap_init();
	scheduler_init();
	smp_call_init();
	thread_init();
	scheduler_init_cpu();

	cpu_count = 1;
	arch_cpus_init(bsp, boot_info.mem_total, regions_count);
	arch_timer_start();
	atomic_inc(&cpu_active_count);
	__atomic_store_n(&bsp->state, CPU_ONLINE, __ATOMIC_RELEASE);
	console_enable_input_irq();
	interrupts_enable();

	unsigned online = smp_start_aps();
	smp_boot_finish();
	printf("SMP: %u of %u CPUs online\n", online, cpu_count);

	kconsole_init();
	/* KCSAN finds each CPU through its per-CPU base: all are set now. */
	kcsan_init();
	rcu_init();
	rcu_start_threads();
	workq_global_init();
	as_init();
	task_init();
	thread_t *kcon = thread_create(kconsole_thread, NULL, "kconsole",
	    THREAD_FLAG_NONE);
	if (!kcon)
		panic("Cannot create the kconsole thread");
	thread_start(kcon);
	scheduler_idle_loop();
}

void main_ap(void)
{
	scheduler_init_cpu();
	scheduler_idle_loop();
}
