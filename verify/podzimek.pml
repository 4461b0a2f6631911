/*
 * podzimek.pml -- Podzimek RCU (preemptible variant) grace-period detection.
 *
 * Models (kernel/generic/src/synch/rcu.c and rcu_podzimek.c, unless said
 * otherwise):
 *   - the reader of rcu_inline.h: rcu_read_lock() (preemption off; the
 *     outermost lock records a QS via rcu_record_qs() when last_seen_gp !=
 *     rcu_cur_gp; nesting++), rcu_read_unlock() (nesting--; the outermost
 *     leaves the preempted list through rcu_read_unlock_preempted() ->
 *     remove_preempted() and records a QS when last_seen_gp != rcu_cur_gp or
 *     is_delaying_gp);
 *   - rcu_record_qs() (memory_barrier(), last_seen_gp = cur_gp(), exchange
 *     of is_delaying_gp, delaying_cpus decrement);
 *   - podzimek_after_thread_ran() (save the count, list a reader switched out
 *     inside its section with rcu_add_preempted_locked(), record a QS) and
 *     podzimek_before_thread_runs();
 *   - the detector thread: detector_thread() serving req_gp, rcu_run_gp() with
 *     gp_start(), rcu_cpu_quiescent() (last_seen_gp), delaying_cpus starting at
 *     1 for the detector itself, the smp_call of podzimek_sample_cpu() (ack
 *     outside a reader; else count, then raise is_delaying_gp), the wait for
 *     delaying_cpus to reach 0 and wait_for_preempted_readers();
 *   - rcu_wait_for_gp() (req_gp raised, wait for completed_gp) and the
 *     reclaimer_thread() step reading cur_gp() + 1 after its memory_barrier().
 *
 * Processes: T, a reader thread on CPU 0 (NSEC sections: lock, load the
 * pointer, dereference, unlock); CPU0 (the IPI handler and the scheduler,
 * which switches T out only while its preemption is enabled, at most MAXSW
 * times); DET, the detector thread; U, the updater and its reclaimer
 * (unlink A, wait for a grace period, free A); USB, U's store buffer; LQ, T's
 * outstanding dereference. Another CPU's callbacks already asked for GP 1
 * (req_gp = 1), so a grace period may be running when U reads cur_gp.
 *
 * Memory model: as in arcu.pml. U's unlink may stay in a store buffer until a
 * full barrier (the reclaimer's memory_barrier()); T's dereference may be
 * performed late until a full barrier on CPU 0 (rcu_record_qs()'s
 * memory_barrier(), the IPI) or a release of rcu_preempt_lock by T's CPU.
 * The rest is sequentially consistent (seq_cst atomics, locks). The relaxed
 * loads of last_seen_gp and rcu_cur_gp in the inline reader are modelled as
 * plain loads of the current value (one step each).
 *
 * The idle flag as in arcu.pml: CPU 0 may idle while T is switched out
 * (seq_cst idle = true), an interrupt or the wake-up clears it first, and
 * rcu_cpu_quiescent() counts an idle CPU as quiescent.
 *
 * Abstracted away: the idle loop's details, migration, more readers, sleeps and time-outs
 * (a wait is a blocking guard; the time-out loops only re-check), the stall
 * watch, rcu_thread_exiting(), batching.
 *
 * Safety: no dereference of a freed object; the callback runs once.
 * Liveness (ltl gp_ends, pan -a -f): every started grace period completes.
 *
 * Broken variants (spin -DBROKEN_xxx):
 *   BROKEN_NO_QS_MB        rcu_record_qs() without its memory_barrier()
 *   BROKEN_SAMPLE_SKIP     podzimek_sample_cpu() acks a CPU inside a reader
 *   BROKEN_NO_WAIT_DELAYING  rcu_run_gp() does not wait for delaying_cpus == 0
 *   BROKEN_NO_WAIT_PREEMPTED rcu_run_gp() skips wait_for_preempted_readers()
 *   BROKEN_IPI_NO_BARRIER  the IPI is not ordered after T's loads
 *   BROKEN_IDLE_LATE_CLEAR CPU 0 runs T before it stores idle = false
 *   BROKEN_UNLOCK_NO_QS    the outermost unlock never records a QS (the
 *                          check skipped): a delaying CPU that is not switched
 *                          out never announces (liveness)
 *
 * Fingerprints (verify/fingerprint.py):
 *   kernel/generic/include/synch/rcu_inline.h rcu_read_lock#2 4b5c6f66c0ef
 *   kernel/generic/include/synch/rcu_inline.h rcu_read_unlock bead80dbcd1e
 *   kernel/generic/src/synch/rcu.c rcu_cpu_quiescent 4d7502c40c56
 *   kernel/generic/src/synch/rcu.c gp_start 6ba5b6e550cc
 *   kernel/generic/src/synch/rcu.c wait_for_preempted_readers 51f5bfd73d47
 *   kernel/generic/src/synch/rcu.c rcu_run_gp 4b90e4c21ef9
 *   kernel/generic/src/synch/rcu.c rcu_preempted_reader_left_locked 5016e895b4d9
 *   kernel/generic/src/synch/rcu.c rcu_add_preempted_locked 0c58b1d05303
 *   kernel/generic/src/synch/rcu.c reclaimer_thread 307b2b273369
 *   kernel/generic/src/synch/rcu_podzimek.c rcu_record_qs 86e9812894bd
 *   kernel/generic/src/synch/rcu_podzimek.c remove_preempted d79e97c796e4
 *   kernel/generic/src/synch/rcu_podzimek.c podzimek_after_thread_ran 948bd9bc935b
 *   kernel/generic/src/synch/rcu_podzimek.c podzimek_before_thread_runs f755ec852db2
 *   kernel/generic/src/synch/rcu_podzimek.c podzimek_sample_cpu 5c6d91b6808b
 *   kernel/generic/src/synch/rcu_podzimek.c rcu_alg_detect 5e576cbaeebd
 *   kernel/generic/src/synch/rcu_podzimek.c detector_thread 572fc51a00bd
 *   kernel/generic/src/synch/rcu_podzimek.c rcu_wait_for_gp c794979bc029
 */

#define NSEC   2
#define MAXSW  1
#define NONE   2

byte ptr = 0;
bool freed[2];
bool usb_full;

/* CPU 0 */
byte c0_nesting;
byte c0_last_seen;
bool c0_is_delaying;
byte t_nesting;         /* thread_t.rcu_nesting */
bool t_preempted;       /* thread_t.rcu_preempted */
bool t_on_cur, t_on_next;
bool running_T = 1;
bool c0_idle;           /* cpu_t.idle (seq_cst) */
bool pd;                /* T's preemption is disabled */
byte rpend = NONE;
byte nsw;
bool t_done;

/* detection */
byte cur_gp, completed_gp;
byte req_gp = 1;
byte delaying_cpus;
bool ipi_pending;
byte ipi_gp;
bool u_done;

#ifdef BROKEN_IPI_NO_BARRIER
#define IPI_BARRIER true
#else
#define IPI_BARRIER (rpend == NONE)
#endif
#ifdef BROKEN_NO_QS_MB
#define QS_BARRIER true
#else
#define QS_BARRIER (rpend == NONE)
#endif

ltl gp_ends { [] ((cur_gp > completed_gp) -> <> (cur_gp == completed_gp)) }

/* rcu_record_qs() on CPU 0; guard: the context may run (T running, or the
 * scheduler). */
inline record_qs(guard, was) {
	atomic { guard && QS_BARRIER -> c0_last_seen = cur_gp };
	atomic { guard -> was = c0_is_delaying; c0_is_delaying = 0 };
	if
	:: was -> atomic { guard -> delaying_cpus-- }
	:: else
	fi
}

active proctype T() {
	byte p, i;
	bool rec, was, z;
	for (i : 1 .. NSEC) {
		/* rcu_read_lock() */
		atomic { running_T -> pd = 1 };
		atomic { running_T -> rec = (c0_nesting == 0 && c0_last_seen != cur_gp) };
		if
		:: rec -> record_qs(running_T, was)
		:: else
		fi;
		atomic { running_T -> c0_nesting++ };
		atomic { running_T -> pd = 0 };
		/* the section */
		atomic { running_T -> p = ptr };
		atomic { running_T && rpend == NONE -> rpend = p };
		/* rcu_read_unlock() */
		atomic { running_T -> pd = 1 };
		atomic { running_T -> c0_nesting--; z = (c0_nesting == 0) };
		if
		:: z ->
			atomic { running_T -> rec = t_preempted };
			if
			:: rec ->
				/* remove_preempted(): interrupts off, under the lock */
				atomic {
					running_T && rpend == NONE ->
					if
					:: t_preempted ->
						t_on_cur = 0; t_on_next = 0; t_preempted = 0
					:: else
					fi
				}
			:: else
			fi;
#ifndef BROKEN_UNLOCK_NO_QS
			atomic { running_T -> rec = (c0_last_seen != cur_gp || c0_is_delaying) };
#else
			rec = 0;
#endif
			if
			:: rec -> record_qs(running_T, was)
			:: else
			fi
		:: else
		fi;
		atomic { running_T -> pd = 0 }
	}
	t_done = 1
}

active proctype LQ() {
	do
	:: atomic { rpend != NONE -> assert(!freed[rpend]); rpend = NONE }
	:: t_done && rpend == NONE -> break
	od
}

active proctype CPU0() {
	bool was;
	do
	:: atomic {
		/* podzimek_sample_cpu() in the IPI handler */
		ipi_pending && IPI_BARRIER ->
		c0_idle = 0;            /* interrupt_dispatch() */
#ifndef BROKEN_SAMPLE_SKIP
		if
		:: c0_nesting == 0 -> c0_last_seen = ipi_gp
		:: else ->
			if
			:: c0_last_seen != ipi_gp && !c0_is_delaying ->
				delaying_cpus++; c0_is_delaying = 1
			:: else
			fi
		fi;
#else
		c0_last_seen = ipi_gp;
#endif
		ipi_pending = 0
	   }
	:: atomic {
		/* podzimek_after_thread_ran(T); listing T is under the lock */
		running_T && !pd && nsw < MAXSW &&
		(rpend == NONE || c0_nesting == 0 || t_preempted) ->
		running_T = 0;
		nsw++;
		t_nesting = c0_nesting;
		if
		:: t_nesting > 0 && !t_preempted ->
			t_preempted = 1;
			if
			:: c0_last_seen != cur_gp -> t_on_cur = 1
			:: else -> t_on_next = 1
			fi
		:: else
		fi;
		c0_nesting = 0
	   };
		record_qs(true, was)
	:: atomic {
		/* scheduler_idle_loop(): idle = true (seq_cst) */
		!running_T && !c0_idle && rpend == NONE -> c0_idle = 1
	   }
	:: !running_T && !c0_idle ->
		/* the other thread switched out, then podzimek_before_thread_runs(T) */
		record_qs(true, was);
		atomic { c0_nesting = t_nesting; running_T = 1 }
	:: !running_T && c0_idle ->
		/* woken from idle: idle = false (seq_cst), then T runs */
#ifndef BROKEN_IDLE_LATE_CLEAR
		c0_idle = 0;
		atomic { c0_nesting = t_nesting; running_T = 1 }
#else
		atomic { c0_nesting = t_nesting; running_T = 1 };
		c0_idle = 0
#endif
	:: u_done && running_T -> break
	od
}

active proctype DET() {
	byte gp;
	do
	:: req_gp > completed_gp ->
		/* run_gp(): gp_start() */
		atomic {
			cur_gp = cur_gp + 1; gp = cur_gp;
			if
			:: t_on_next -> t_on_next = 0; t_on_cur = 1
			:: else
			fi
		};
		delaying_cpus = 1;      /* the detector's own reference */
		if
		:: !(c0_last_seen == gp || c0_idle) ->     /* cpu_quiescent() */
			atomic { ipi_gp = gp; ipi_pending = 1 };
			!ipi_pending
		:: else
		fi;
		delaying_cpus--;
#ifndef BROKEN_NO_WAIT_DELAYING
		delaying_cpus == 0;
#endif
#ifndef BROKEN_NO_WAIT_PREEMPTED
		!t_on_cur;              /* wait_for_preempted_readers() */
#endif
		completed_gp = gp
	:: u_done && req_gp <= completed_gp -> break
	od
}

active proctype USB() {
	atomic { usb_full -> ptr = 1; usb_full = 0 }
}

active proctype U() {
	byte target;
	usb_full = 1;                   /* unlink A (store buffered) */
	!usb_full;                      /* reclaimer_thread(): memory_barrier() */
	target = cur_gp + 1;
	/* wait_for_gp(): raise req_gp under req_lock, wait for completion */
	atomic { if :: req_gp < target -> req_gp = target :: else fi };
	completed_gp >= target;
	atomic { assert(!freed[0]); freed[0] = 1 };
	u_done = 1
}
