/*
 * arcu.pml -- A-RCU grace-period detection with preemptible readers.
 *
 * Models (kernel/generic/src/synch/rcu.c and rcu_arcu.c unless said otherwise):
 *   - the reader section of rcu_inline.h, CONFIG_RCU_A_RCU: rcu_read_lock()
 *     (one addq on the CPU's nesting count), arcu_read_unlock_sub() (subq),
 *     arcu_read_unlock_check() (cmpq; the slow path
 *     rcu_read_unlock_preempted(), interrupts off, under rcu_preempt_lock);
 *   - the scheduler hooks arcu_after_thread_ran() (switch-out: save the
 *     count, mark and list a preempted reader, take a "zero, preempted"
 *     thread off its list, rcu_add_preempted_locked(), record_cs_qs() with its
 *     memory_barrier()) and arcu_before_thread_runs() (switch-in);
 *   - the detector: rcu_wait_for_gp() under gp_mutex, rcu_run_gp(), gp_start()
 *     (next_preempted moved to rcu_cur_preempted under the lock),
 *     rcu_cpu_quiescent() (last_seen_gp only), the smp_call of arcu_sample_cpu()
 *     and its re-poll loop, wait_for_preempted_readers();
 *   - the reclaimer_thread() step that reads cur_gp() + 1 for a batch after
 *     its memory_barrier(), and exec_batch() running the callback.
 *
 * Processes: T, a reader thread on CPU 0 (NSEC sections: lock, load the
 * protected pointer, dereference it, unlock); CPU0, the rest of CPU 0:
 * interrupts (the smp_call IPI) and the scheduler (T switched out for another
 * thread and back, at most MAXSW times); U, an updater on CPU 1 (unlinks
 * object A by storing ptr = B, then as its CPU's reclaimer waits for a grace
 * period and frees A in the callback); D, the reclaimer of another CPU that
 * needs a grace period at the same time (either may become the detector:
 * gp_mutex); USB, U's store buffer; LQ, T's outstanding dereference.
 *
 * Memory model (weakly ordered CPU, only where the code relies on a barrier):
 *   - U's unlink store sits in a store buffer (USB) until drained: a later
 *     load of U (cur_gp) may be performed first. memory_barrier() in
 *     reclaimer_thread() (and the context switch to the reclaimer) drains it.
 *   - T's dereference of the object (a load) may be performed late, after
 *     T's later stores have become visible (LQ performs it at any time). A
 *     full barrier waits for it: record_cs_qs()'s memory_barrier() and the
 *     IPI (an interrupt is taken precisely: the smp_call is a full barrier
 *     on the target, smp/smp_call.h).
 *   - T's nesting count is read only on CPU 0 (the IPI handler, the
 *     scheduler hooks), so T's reader section needs no fence: it is modelled
 *     as CPU-local and the hooks and handler run between T's instructions.
 *   - Everything else (seq_cst atomics, spinlocked data) is sequentially
 *     consistent here; a change of T's list membership made on CPU 0 under
 *     rcu_preempt_lock waits for T's outstanding dereference (the unlock's
 *     release orders T's earlier loads before it).
 *
 * The idle flag: while T is switched out, CPU 0 may enter the idle loop
 * (scheduler_idle_loop(): idle = true, seq_cst); an interrupt
 * (interrupt_dispatch()) or the wake-up that switches T back in stores
 * idle = false first; rcu_cpu_quiescent() counts an idle CPU as quiescent.
 *
 * Abstracted away: the idle loop's steal and hlt details, migration (T
 * stays on CPU 0), more than one reader thread, the expedite flag and the
 * sleeps (a sleep is only a delay), the stall watch, rcu_thread_exiting(),
 * callback batching (one callback), the rcu_cpu_quiescent() of the detector's own
 * CPU and of U's CPU (no readers there).
 *
 * Safety: a reader never dereferences a freed object (assertion in LQ), the
 * callback runs once (assertion in U). Liveness (ltl gp_ends, run with
 * pan -a -f): every started grace period completes.
 *
 * Broken variants (spin -DBROKEN_xxx): each must fail.
 *   BROKEN_SAMPLE_SKIP    arcu_sample_cpu() acknowledges without listing a
 *                         reader it finds running (the check skipped)
 *   BROKEN_ALWAYS_NEXT    rcu_add_preempted_locked() always uses next_preempted
 *   BROKEN_NO_WAIT_PREEMPTED  rcu_run_gp() skips wait_for_preempted_readers()
 *   BROKEN_NO_CS_MB       record_cs_qs() without its memory_barrier()
 *   BROKEN_IPI_NO_BARRIER the IPI handler not ordered after T's loads
 *   BROKEN_CB_NO_MB       no full barrier between the unlink and the read of
 *                         cur_gp for the callback's grace period
 *   BROKEN_IDLE_LATE_CLEAR  CPU 0 leaves the idle loop and runs T before it
 *                         stores idle = false (the detector may skip a CPU
 *                         whose reader began before the grace period)
 *   BROKEN_UNLOCK_NO_CHECK  rcu_read_unlock() without arcu_read_unlock_check():
 *                         a reader the IPI listed never leaves the list (the
 *                         grace period never ends: liveness, and the detector
 *                         blocks for good: invalid end state)
 *
 * Fingerprints (verify/fingerprint.py):
 *   kernel/generic/include/synch/rcu_inline.h rcu_read_lock 4459c91b7332
 *   kernel/generic/include/synch/rcu_inline.h arcu_read_unlock_sub d6e79683133c
 *   kernel/generic/include/synch/rcu_inline.h arcu_read_unlock_check e89c013ce1d6
 *   kernel/generic/src/synch/rcu.c rcu_cpu_quiescent 4d7502c40c56
 *   kernel/generic/src/synch/rcu.c gp_start 6ba5b6e550cc
 *   kernel/generic/src/synch/rcu.c wait_for_preempted_readers 51f5bfd73d47
 *   kernel/generic/src/synch/rcu.c rcu_run_gp 4b90e4c21ef9
 *   kernel/generic/src/synch/rcu.c rcu_preempted_reader_left_locked 5016e895b4d9
 *   kernel/generic/src/synch/rcu.c rcu_add_preempted_locked 0c58b1d05303
 *   kernel/generic/src/synch/rcu.c reclaimer_thread 307b2b273369
 *   kernel/generic/src/synch/rcu_arcu.c record_cs_qs 060df78a589f
 *   kernel/generic/src/synch/rcu_arcu.c rcu_read_unlock_preempted 157710455e61
 *   kernel/generic/src/synch/rcu_arcu.c arcu_after_thread_ran caedef071dad
 *   kernel/generic/src/synch/rcu_arcu.c arcu_before_thread_runs e3fe88d591ec
 *   kernel/generic/src/synch/rcu_arcu.c arcu_sample_cpu a4f005676b46
 *   kernel/generic/src/synch/rcu_arcu.c rcu_alg_detect 86a0cf2ed028
 *   kernel/generic/src/synch/rcu_arcu.c rcu_wait_for_gp 53c2b7b86418
 */

#define NSEC   2
#define MAXSW  2
#define NONE   2        /* object ids: 0 = A (unlinked, freed), 1 = B */
#define CNT_INC 2       /* RCU_CNT_INC */
#define WAS_PREEMPTED 1 /* RCU_WAS_PREEMPTED */

byte ptr = 0;           /* the protected pointer, in memory */
bool freed[2];
bool usb_full;          /* U's store "ptr = 1" not yet visible */

/* CPU 0 */
byte c0_nesting;        /* cpu_t.rcu.nesting (the running thread's count) */
byte c0_last_seen;      /* cpu_t.rcu.last_seen_gp */
byte t_nesting;         /* thread_t.rcu_nesting of T (saved at switch-out) */
bool running_T = 1;     /* T is CPU 0's thread (else another, nesting 0) */
bool c0_idle;           /* cpu_t.idle (seq_cst): CPU 0 in the idle loop */
bool t_on_cur;          /* T on rcu_cur_preempted */
bool t_on_next;         /* T on next_preempted */
byte rpend = NONE;      /* T's dereference issued, not yet performed */
byte nsw;               /* switch-outs of T so far */
bool t_done;

/* the detection */
byte cur_gp;            /* rcu_cur_gp */
byte completed_gp;
bool gp_mutex;
bool ipi_pending;       /* smp_call(0, arcu_sample_cpu, &gp) in flight */
byte ipi_gp;
bool u_done, d_done;

#ifdef BROKEN_IPI_NO_BARRIER
#define IPI_BARRIER true
#else
#define IPI_BARRIER (rpend == NONE)
#endif
#ifdef BROKEN_NO_CS_MB
#define CS_BARRIER true
#else
#define CS_BARRIER (rpend == NONE)
#endif

ltl gp_ends { [] ((cur_gp > completed_gp) -> <> (cur_gp == completed_gp)) }

/* run_gp() with gp_start() inlined; the caller holds gp_mutex. sb: the
 * caller's store buffer is empty (gp_start()'s lock, seq_cst store and
 * memory_barrier() drain it). */
inline run_gp(gp, pending, sb) {
	/* gp_start(): under rcu_preempt_lock, seq_cst store, then a barrier */
	atomic {
		sb ->
		cur_gp = cur_gp + 1;
		gp = cur_gp;
		if
		:: t_on_next -> t_on_next = 0; t_on_cur = 1
		:: else
		fi
	}
#ifndef BROKEN_RCU_NO_WAIT
	pending = !(c0_last_seen == gp || c0_idle);     /* cpu_quiescent() */
	/* thread_usleep(DETECT_SLEEP_US): a delay, nothing to model */
	do
	:: !pending -> break
	:: else ->
		if
		:: !(c0_last_seen == gp || c0_idle) ->
			/* smp_call(): the function runs on CPU 0, we wait for it */
			atomic { ipi_gp = gp; ipi_pending = 1 };
			!ipi_pending
		:: else
		fi;
		pending = !(c0_last_seen == gp || c0_idle)
	od;
#ifndef BROKEN_NO_WAIT_PREEMPTED
	/* wait_for_preempted_readers(): sleeps until the list is empty */
	!t_on_cur;
#endif
#endif
	completed_gp = gp
}

/* wait_for_gp() */
inline wait_for_gp(target, gp, pending, sb) {
	do
	:: completed_gp >= target -> break
	:: else ->
		atomic { !gp_mutex -> gp_mutex = 1 };
		if
		:: completed_gp < target -> run_gp(gp, pending, sb)
		:: else
		fi;
		gp_mutex = 0
	od
}

/* The reader thread on CPU 0: each step is one instruction and runs only
 * while T is CPU 0's thread (interrupts and switches fall between). */
active proctype T() {
	byte p, i;
	bool preempted;
	for (i : 1 .. NSEC) {
		atomic { running_T -> c0_nesting = c0_nesting + CNT_INC }  /* addq */
		atomic { running_T -> p = ptr }                    /* load the pointer */
		atomic { running_T && rpend == NONE -> rpend = p } /* dereference it */
		atomic { running_T -> c0_nesting = c0_nesting - CNT_INC }  /* subq */
#ifndef BROKEN_UNLOCK_NO_CHECK
		atomic { running_T -> preempted = (c0_nesting == WAS_PREEMPTED) } /* cmpq */
#endif
		if
		:: preempted ->
			/* rcu_read_unlock_preempted(): interrupts off, under
			 * rcu_preempt_lock (its release orders T's loads) */
			atomic {
				running_T && rpend == NONE ->
				if
				:: c0_nesting == WAS_PREEMPTED ->
					t_on_cur = 0; t_on_next = 0; c0_nesting = 0
				:: else
				fi
			}
		:: else
		fi
	}
	t_done = 1
}

/* T's dereference is performed some time after T issued it. */
active proctype LQ() {
	do
	:: atomic { rpend != NONE -> assert(!freed[rpend]); rpend = NONE }
	:: t_done && rpend == NONE -> break
	od
}

/* CPU 0's interrupts and scheduler. */
active proctype CPU0() {
	byte n;
	do
	:: atomic {
		/* arcu_sample_cpu() in the IPI handler */
		ipi_pending && IPI_BARRIER ->
		/* interrupt_dispatch(): an idle CPU is not idle any more */
		c0_idle = 0;
		n = c0_nesting;
#ifndef BROKEN_SAMPLE_SKIP
		if
		:: n >= CNT_INC && (n & WAS_PREEMPTED) == 0 ->
			c0_nesting = n | WAS_PREEMPTED;
			t_on_cur = 1                /* T is the running thread */
		:: else
		fi;
#endif
		c0_last_seen = ipi_gp;
		ipi_pending = 0
	   }
	:: atomic {
		/* arcu_after_thread_ran(T): the list work is under
		 * rcu_preempt_lock, whose release orders T's earlier loads
		 * before it; a count of 0 takes no lock */
		running_T && nsw < MAXSW && (rpend == NONE || c0_nesting == 0) ->
			running_T = 0;
			nsw++;
			n = c0_nesting;
			c0_nesting = 0;
			if
			:: n == WAS_PREEMPTED ->
				t_on_cur = 0; t_on_next = 0; n = 0
			:: n >= CNT_INC && (n & WAS_PREEMPTED) == 0 ->
				n = n | WAS_PREEMPTED;
#ifndef BROKEN_ALWAYS_NEXT
				if
				:: c0_last_seen != cur_gp -> t_on_cur = 1
				:: else -> t_on_next = 1
				fi
#else
				t_on_next = 1
#endif
			:: else
			fi;
			t_nesting = n
	   };
		/* record_cs_qs(): memory_barrier(), then the seq_cst store */
		atomic { CS_BARRIER -> c0_last_seen = cur_gp }
	:: atomic {
		/* scheduler_idle_loop(): idle = true (seq_cst, after all that
		 * CPU 0 did before) */
		!running_T && !c0_idle && rpend == NONE -> c0_idle = 1
	   }
	:: !running_T && !c0_idle ->
		/* the other thread is switched out (record_cs_qs), then
		 * arcu_before_thread_runs(T) */
		atomic { c0_last_seen = cur_gp };
		atomic { c0_nesting = t_nesting; running_T = 1 }
	:: !running_T && c0_idle ->
		/* woken from idle: the wake-up interrupt (or the idle loop)
		 * stores idle = false (seq_cst), then the scheduler switches
		 * to T: arcu_before_thread_runs(T) */
#ifndef BROKEN_IDLE_LATE_CLEAR
		c0_idle = 0;
		atomic { c0_nesting = t_nesting; running_T = 1 }
#else
		atomic { c0_nesting = t_nesting; running_T = 1 };
		c0_idle = 0
#endif
	:: u_done && d_done && running_T -> break
	od
}

/* U's store buffer: the unlink becomes visible. */
active proctype USB() {
	atomic { usb_full -> ptr = 1; usb_full = 0 }
}

/* The updater and its CPU's reclaimer. */
active proctype U() {
	byte target, gp;
	bool pending;
	usb_full = 1;                   /* unlink A: ptr = B (store buffered) */
	/* rcu_call(); the reclaimer moves it to next: memory_barrier(), then
	 * next_cbs_gp = cur_gp() + 1 */
#ifndef BROKEN_CB_NO_MB
	!usb_full;
#endif
	target = cur_gp + 1;
	wait_for_gp(target, gp, pending, !usb_full);
	/* exec_batch(): the callback frees A, once */
	atomic { assert(!freed[0]); freed[0] = 1 };
	u_done = 1
}

/* Another CPU's reclaimer needing a grace period too. */
active proctype D() {
	byte target, gp;
	bool pending;
	target = cur_gp + 1;
	wait_for_gp(target, gp, pending, true);
	d_done = 1
}
