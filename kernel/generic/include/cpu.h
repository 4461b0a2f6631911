/** @file cpu.h
 * Per-CPU structures.
 *
 * Each CPU has one cpu_t in the cpus[] array, indexed by the logical CPU id (0 is the
 * bootstrap processor). The GS base of every CPU points at its own cpu_t, so CPU
 * (the current CPU) is one %gs-relative load. Fields say what protects them.
 */
#ifndef KERN_CPU_H_
#define KERN_CPU_H_

#include <typedefs.h>
#include <atomic.h>
#include <adt/list.h>
#include <synch/spinlock.h>
#include <synch/rcu_types.h>
#include <arch/cpu_arch.h>

struct thread;

/** Number of run-queue priority levels (HelenOS uses 16). */
#define RQ_LEVELS 16

/** One priority level of a CPU's run queue. Protected by runq_t.lock. */
typedef struct {
	list_t threads;
	size_t n;
} rq_level_t;

/**
 * A CPU's run queue. Protected by @c lock (IRQ spinlock): the owning CPU's
 * scheduler and other CPUs (wake-ups, work stealing) take it.
 */
typedef struct {
	/*
	 * On a line of its own (as the whole run queue): other CPUs take the
	 * lock (wake-ups, stealing) and read nrdy (stealing: every idle tick),
	 * and must not share a line with the owner's per-tick fields.
	 */
	irq_spinlock_t lock __attribute__((aligned(CACHE_LINE_SIZE)));
	rq_level_t level[RQ_LEVELS];
	/** Ready threads in all levels. Written under lock; read racily by stealers. */
	size_t nrdy;
} runq_t;

#ifndef CONFIG_MAX_CPUS
#define CONFIG_MAX_CPUS 64
#endif

/** CPU life cycle states, see cpu_t.state. */
typedef enum {
	CPU_ABSENT = 0,  /**< Listed in MADT but not (yet) started. */
	CPU_STARTING,    /**< INIT-SIPI-SIPI sent, not acknowledged yet. */
	CPU_ONLINE,      /**< Running kernel code, interrupts on. */
	CPU_FAILED,      /**< Did not acknowledge the start-up in time. */
	CPU_HALTED       /**< Stopped by panic or halt. */
} cpu_state_t;

typedef struct cpu {
	/*
	 * Fields are grouped by who writes them, each group on lines of its own,
	 * so that what one CPU writes often never shares a line with what
	 * other CPUs read (docs/SHARING.md: a shared line costs a transfer per
	 * write on real hardware).
	 *
	 * First group: written often, by this CPU only.
	 */
	/** Points to itself; must stay the first member (read as %gs:0). */
	struct cpu *self;
	/**
	 * Kernel stack top of the running thread, loaded by the syscall entry
	 * (offset CPU_OFF_SYSCALL_KSTACK, checked in arch/amd64/src/userspace.c).
	 * Written by this CPU's scheduler hook with interrupts disabled (CPU-local).
	 */
	uintptr_t syscall_kstack;
	/** Scratch: the user stack pointer during the syscall entry. CPU-local. */
	uintptr_t syscall_ustack;
	/** Nesting count of preemption_disable(). CPU-local (interrupts or preemption off). */
	unsigned preemption_disabled;
	/** Interrupt nesting depth. CPU-local. */
	unsigned irq_nesting;
	/** Thread running on this CPU (NULL before the scheduler starts). CPU-local. */
	struct thread *thread;
	/** Thread that ran before the last context switch; CPU-local. */
	struct thread *prev_thread;

	/* Read by other CPUs, written rarely. */
	/** Logical id. Set once before the CPU starts. */
	unsigned id __attribute__((aligned(CACHE_LINE_SIZE)));
	/** Local APIC id. Set once before the CPU starts. */
	uint32_t apic_id;
	/** Life cycle state; atomics (written by the CPU itself and by the BSP at boot). */
	cpu_state_t state;
	/** LAPIC timer input frequency in Hz (calibrated against the PIT). Set once. */
	uint64_t lapic_hz;
	/** Top of the boot/idle stack of this CPU. Set once. */
	uintptr_t stack_top;
	/** This CPU's idle thread. Set once. */
	struct thread *idle_thread;
	/** User address space loaded in CR3 (NULL: the kernel's). CPU-local;
	 * written on address-space switches. */
	struct as *as;
	/** Number of test IPIs received (ipi1); atomics. */
	atomic_t ipi_test_count;

	/** The run queue (its own lines, see runq_t). */
	runq_t rq;

	/** Set by the timer when the running thread's quantum is over. CPU-local.
	 * Starts a new cache line: this group is written on every timer tick and
	 * must not share a line with the run queue, which idle CPUs read. */
	bool need_resched __attribute__((aligned(CACHE_LINE_SIZE)));
	/** The CPU is halted in its idle loop; wakers send VECTOR_WAKEUP. Atomics. */
	bool idle;
	/** Ticks until the next starvation-avoidance relink. CPU-local. */
	unsigned relink_countdown;
	/** Timer ticks seen by this CPU. CPU-local writes; others read with atomics. */
	uint64_t ticks;
	/** Statistics; CPU-local writes, racy reads. */
	uint64_t context_switches;
	uint64_t migrations_in;
	uint64_t idle_ticks;

	/** Timeouts of this CPU, sorted by deadline. Protected by timeout_lock. */
	irq_spinlock_t timeout_lock;
	list_t timeouts;

	/** RCU state of this CPU (see synch/rcu_types.h). Own lines: the
	 * grace-period detector reads it from other CPUs. */
	rcu_cpu_t rcu __attribute__((aligned(CACHE_LINE_SIZE)));

	/** Pending SMP calls for this CPU; protected by smp_calls_lock. Own
	 * line: other CPUs queue calls here. */
	irq_spinlock_t smp_calls_lock __attribute__((aligned(CACHE_LINE_SIZE)));
	list_t smp_calls;
} __attribute__((aligned(CACHE_LINE_SIZE))) cpu_t;

/* Each cpu_t starts a cache line, so no line holds two CPUs' fields (a line
 * one CPU writes on every tick would otherwise move to its neighbour). */
_Static_assert(sizeof(cpu_t) % CACHE_LINE_SIZE == 0, "cpu_t: whole cache lines");

/** All CPUs; entries [0, cpu_count) are valid. Protected by: written during boot only. */
extern cpu_t cpus[CONFIG_MAX_CPUS];
/** Number of CPUs found in the MADT (or MP table). Set once at boot. */
extern unsigned cpu_count;
/** Number of CPUs that are online (atomic). */
extern atomic_t cpu_active_count;

/** Returns the current CPU. Meaningful when the caller cannot migrate. */
static inline cpu_t *cpu_current(void)
{
	cpu_t *c;
	asm volatile ("movq %%gs:0, %0" : "=r" (c));
	return c;
}

#define CPU (cpu_current())

/** Id of the current CPU: one %gs-relative load. Any context; the thread
 * may be on another CPU by the time it uses the value unless preemption is
 * disabled. */
static inline size_t cpu_current_id(void)
{
	/* movl zero-extends into the 64-bit register: no extra instruction. */
	size_t id;
	asm volatile ("movl %%gs:%c1, %k0" : "=r" (id) :
	    "i" (__builtin_offsetof(cpu_t, id)));
	return id;
}

/** True when @a id names a CPU that is online. */
bool cpu_is_online(unsigned id);

#endif
