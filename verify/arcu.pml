/*
 * arcu.pml -- A-RCU grace-period detection with preemptible readers.
 *
 * Models (kernel/generic/src/synch/rcu.c and rcu_arcu.c unless said otherwise):
 *   - the reader section of rcu_arcu_inline.h (CONFIG_RCU_A_RCU): rcu_read_lock()
 *     (one instruction on the running thread's count: amd64 an addq on
 *     %gs:cpu_t.rcu.nesting, arm64 an add on register x18),
 *     arcu_read_unlock_sub() (subq / sub), arcu_read_unlock_check() (cmpq
 *     with RCU_WAS_PREEMPTED / tbnz on x18's sign, the same test in
 *     arm64's encoding, arch/rcu_arch.h; the slow path
 *     rcu_read_unlock_preempted(), interrupts off, under rcu_preempt_lock);
 *     the count is read and written by the hooks and the IPI handler
 *     through arcu_nesting() and arcu_nesting_set();
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
 *     rcu_call_batched()'s stack is taken in the same step as the arriving
 *     list, before that barrier, so U's callback is modelled the same either
 *     way. Not modelled: a push from a thread that migrated onto another
 *     CPU's stack; its unlink is ordered before that reclaimer's barrier by
 *     the release CAS and the reclaimer's acquire exchange.
 *
 * Processes: T, a reader thread on CPU 0 (NSEC sections: lock, load the
 * protected pointer, dereference it, unlock); CPU0, the rest of CPU 0:
 * interrupts (the smp_call IPI) and the scheduler (T switched out for another
 * thread and back, at most MAXSW times); U, an updater on CPU 1 (unlinks
 * object A by storing ptr = B, then as its CPU's reclaimer waits for a grace
 * period and frees A in the callback); D, the reclaimer of another CPU that
 * needs a grace period at the same time (either may become the detector:
 * gp_mutex); USB, U's store buffer; LQ, T's outstanding dereference; CSB,
 * the late half of record_cs_qs() (a variant only).
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
 *     On arm64 it is a register: what the IPI handler or the switch-in hook
 *     write there reaches T only because the return from an exception
 *     taken at EL1 does not restore x18 (vectors.S); BROKEN_EL1_RESTORE
 *     restores it.
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
 * Nesting: T's first section is nested (outer lock, load of the pointer,
 * inner lock, dereference, inner unlock, dereference, outer unlock), so the
 * tests on the count see depth 2 with and without the preempted bit and
 * preemption (switch-out, IPI) anywhere inside; the second is flat.
 *
 * Lists: rcu_cur_preempted and next_preempted hold T's link or nothing
 * (t_list, with the lengths cur_len and next_len); list_append() asserts the
 * link is on no list, list_remove() that it is on one (adt/list.h would
 * corrupt the list or dereference NULL).
 *
 * Wait queue: wait_for_preempted_readers() raises detector_waits_readers
 * under rcu_preempt_lock, drops it and sleeps in readers_done_wq (waitq_sleep,
 * the stall watch off: no time-out); rcu_preempted_reader_left_locked() wakes
 * it when the list became empty; a wake-up with no sleeper is remembered
 * (waitq's missed_wakeups). A lost wake-up leaves the detector asleep for
 * good: an invalid end state.
 *
 * Ordering of last_seen_gp: record_cs_qs()'s store is seq_cst (on arm64 a
 * release, STLR): T's earlier loads are performed before it even without the
 * memory_barrier() before it; memory_barrier_after_atomic() keeps T's next
 * loads after the load of rcu_cur_gp and the store.
 *
 * Abstracted away: the idle loop's steal and hlt details, migration (T
 * stays on CPU 0), more than one reader thread, the expedite flag and the
 * sleeps (a sleep is only a delay), the stall watch, rcu_thread_exiting(),
 * callback batching (one callback), the rcu_cpu_quiescent() of the detector's own
 * CPU and of U's CPU (no readers there).
 *
 * Safety: a reader never dereferences a freed object (assertion in LQ), the
 * callback runs once (assertion in U); a GP starts only after the previous
 * one completed; the switch-out hook runs only for the running thread; the
 * detector re-checks the preempted list only after a wake-up (wq_credit: no
 * polling). Liveness (ltl gp_ends, run with
 * pan -a -f): every started grace period completes, and U and D get
 * the grace periods they wait for (a detector that never starts one is a
 * violation).
 *
 * Broken variants (spin -DBROKEN_xxx): each must fail.
 *   BROKEN_SAMPLE_SKIP    arcu_sample_cpu() acknowledges without listing a
 *                         reader it finds running (the check skipped)
 *   BROKEN_ALWAYS_NEXT    rcu_add_preempted_locked() always uses next_preempted
 *   BROKEN_NO_WAIT_PREEMPTED  rcu_run_gp() skips wait_for_preempted_readers()
 *   BROKEN_NO_CS_MB       record_cs_qs() without its memory_barrier(): must
 *                         VERIFY (the seq_cst store, a release on arm64,
 *                         orders T's loads before it by itself)
 *   BROKEN_NO_CS_MB_RELAXED  no memory_barrier() and a relaxed store
 *   BROKEN_NO_CS_MB_AFTER record_cs_qs() without memory_barrier_after_atomic():
 *                         the load of rcu_cur_gp and the store of
 *                         last_seen_gp are performed after T's next loads
 *                         (process CSB performs them late)
 *   BROKEN_SAMPLE_DEPTH1  arcu_sample_cpu() tests nesting == RCU_CNT_INC
 *                         (depth exactly one) instead of >=
 *   BROKEN_CHECK_BIT      the unlock's check and the slow path's re-check test
 *                         the preempted bit alone: the inner unlock of a
 *                         nested section leaves the list (count corrupted)
 *   BROKEN_UNLOCK_NO_RECHECK rcu_read_unlock_preempted() removes T without
 *                         its re-check under the lock: T switched out between
 *                         cmpq and the slow path was removed by the
 *                         switch-out hook already (double list_remove())
 *   BROKEN_LEFT_NO_WAKE   rcu_preempted_reader_left_locked() never wakes the
 *                         detector (it sleeps for good: invalid end state)
 *   BROKEN_WAITS_AFTER_UNLOCK wait_for_preempted_readers() raises
 *                         detector_waits_readers after dropping the lock:
 *                         the last reader leaves in between, nobody wakes it
 *   BROKEN_IPI_NO_BARRIER the IPI handler not ordered after T's loads
 *   BROKEN_CB_NO_MB       no full barrier between the unlink and the read of
 *                         cur_gp for the callback's grace period
 *   BROKEN_IDLE_LATE_CLEAR  CPU 0 leaves the idle loop and runs T before it
 *                         stores idle = false (the detector may skip a CPU
 *                         whose reader began before the grace period)
 *   BROKEN_EL1_RESTORE    arm64's exception return restores x18 from the
 *                         istate (as every other register): the IPI
 *                         handler's preempted mark and, after a preemption,
 *                         the switch-in hook's load are undone; T's count is
 *                         the one it had when the interrupt came
 *   BROKEN_UNLOCK_NO_CHECK  rcu_read_unlock() without arcu_read_unlock_check():
 *                         a reader the IPI listed never leaves the list (the
 *                         grace period never ends: liveness, and the detector
 *                         blocks for good: invalid end state)
 *
 * Fingerprints (verify/fingerprint.py):
 *   kernel/generic/include/synch/rcu_arcu_inline.h rcu_read_lock 5145eff09580
 *   kernel/generic/include/synch/rcu_arcu_inline.h arcu_read_unlock_sub d6e79683133c
 *   kernel/generic/include/synch/rcu_arcu_inline.h arcu_read_unlock_check e89c013ce1d6
 *   kernel/generic/src/synch/rcu.c rcu_cpu_quiescent 878656b22607
 *   kernel/generic/src/synch/rcu.c gp_start 6ba5b6e550cc
 *   kernel/generic/src/synch/rcu.c wait_for_preempted_readers 51f5bfd73d47
 *   kernel/generic/src/synch/rcu.c rcu_run_gp a02389ee27de
 *   kernel/generic/src/synch/rcu.c rcu_preempted_reader_left_locked 5016e895b4d9
 *   kernel/generic/src/synch/rcu.c rcu_add_preempted_locked 0c58b1d05303
 *   kernel/generic/src/synch/rcu.c reclaimer_thread b7b0efaf6fe0
 *   kernel/generic/src/synch/rcu_arcu.c record_cs_qs 4361fb4801f2
 *   kernel/generic/src/synch/rcu_arcu.c rcu_read_unlock_preempted 824e24c08acd
 *   kernel/generic/src/synch/rcu_arcu.c arcu_after_thread_ran 4ca450a93192
 *   kernel/generic/src/synch/rcu_arcu.c arcu_before_thread_runs b58a123d7725
 *   kernel/generic/src/synch/rcu_arcu.c arcu_sample_cpu d86446e8c2bb
 *   kernel/generic/src/synch/rcu_arcu.c rcu_alg_detect 86a0cf2ed028
 *   kernel/generic/src/synch/rcu_arcu.c rcu_wait_for_gp 53c2b7b86418
 */

#define NSEC   2
#define MAXSW  2
#define NONE   2        /* object ids: 0 = A (unlinked, freed), 1 = B */
#define CNT_INC 2       /* RCU_CNT_INC */
#define WAS_PREEMPTED 1 /* RCU_WAS_PREEMPTED */
#define NOL    0        /* T's rcu_preempt_link: on no list, */
#define CURL   1        /* on rcu_cur_preempted, */
#define NEXTL  2        /* on next_preempted */

byte ptr = 0;           /* the protected pointer, in memory */
bool freed[2];
bool usb_full;          /* U's store "ptr = 1" not yet visible */

/* CPU 0 */
byte c0_nesting;        /* cpu_t.rcu.nesting (the running thread's count) */
byte c0_last_seen;      /* cpu_t.rcu.last_seen_gp */
bool cs_late;           /* record_cs_qs()'s load of cur_gp and store of
                           last_seen_gp not yet performed (variant only) */
byte t_nesting;         /* thread_t.rcu_nesting of T (saved at switch-out) */
byte t_entry;           /* T's count when the interrupt that switched it out
                           came (BROKEN_EL1_RESTORE restores it) */
bool running_T = 1;     /* T is CPU 0's thread (else another, nesting 0) */
bool c0_idle;           /* cpu_t.idle (seq_cst): CPU 0 in the idle loop */
byte t_list;            /* the list T's rcu_preempt_link is on */
byte cur_len, next_len; /* the lengths of rcu_cur_preempted, next_preempted */
byte rpend = NONE;      /* T's dereference issued, not yet performed */
byte nsw;               /* switch-outs of T so far */
bool t_done;

/* the detection */
byte cur_gp;            /* rcu_cur_gp */
byte completed_gp;
bool gp_mutex;
bool ipi_pending;       /* smp_call(0, arcu_sample_cpu, &gp) in flight */
byte ipi_gp;
bool det_waits;         /* detector_waits_readers */
bool det_asleep;        /* the detector sleeps in readers_done_wq */
byte wq_missed;         /* readers_done_wq.missed_wakeups */
byte wq_credit;         /* ghost: wake-ups given and not yet used by a
                           re-check of the detector (no polling) */
bool u_done, d_done;

#ifdef BROKEN_IPI_NO_BARRIER
#define IPI_BARRIER true
#else
#define IPI_BARRIER (rpend == NONE && !cs_late)
#endif
#ifdef BROKEN_NO_CS_MB_RELAXED
#define CS_BARRIER true
#else
/* memory_barrier(), and the seq_cst (on arm64: release) store itself: T's
 * earlier loads are performed first. BROKEN_NO_CS_MB leaves the release. */
#define CS_BARRIER (rpend == NONE)
#endif

ltl gp_ends { [] ((cur_gp > completed_gp) -> <> (cur_gp == completed_gp)) && <> (u_done && d_done) }

/* adt/list.h on T's link: list_append() of a link that is on a list and
 * list_remove() of a link on none corrupt the list (or dereference NULL). */
inline list_append(l) {
	assert(t_list == NOL);
	t_list = l;
	if
	:: l == CURL -> cur_len++
	:: else -> next_len++
	fi
}
inline list_remove() {
	assert(t_list != NOL);
	if
	:: t_list == CURL -> cur_len--
	:: else -> next_len--
	fi;
	t_list = NOL
}

/* waitq_wake_one(&readers_done_wq): a wake-up without a sleeper is kept */
inline wq_wake() {
	if
	:: det_asleep -> det_asleep = 0
	:: else -> wq_missed++
	fi;
	wq_credit++
}

/* rcu_preempted_reader_left_locked(), under rcu_preempt_lock */
inline reader_left() {
#ifndef BROKEN_LEFT_NO_WAKE
	if
	:: det_waits && cur_len == 0 -> det_waits = 0; wq_wake()
	:: else
	fi
#else
	skip
#endif
}

/* record_cs_qs(): memory_barrier(), the seq_cst store of last_seen_gp =
 * rcu_started_gp(), memory_barrier_after_atomic() */
inline record_cs_qs() {
#ifndef BROKEN_NO_CS_MB_AFTER
	atomic { CS_BARRIER && !cs_late -> c0_last_seen = cur_gp }
#else
	/* without the barrier after it, T's next loads may be performed
	 * before the load of cur_gp and the store (CPU0 performs them late) */
	atomic { CS_BARRIER && !cs_late -> cs_late = 1 }
#endif
}

/* run_gp() with gp_start() inlined; the caller holds gp_mutex. sb: the
 * caller's store buffer is empty (gp_start()'s lock, seq_cst store and
 * memory_barrier() drain it). */
inline run_gp(gp, pending, sb, leave) {
	/* gp_start(): under rcu_preempt_lock, seq_cst store, then a barrier */
	atomic {
		sb ->
		/* one GP at a time (gp_mutex held) */
		assert(cur_gp == completed_gp);
		cur_gp = cur_gp + 1;
		gp = cur_gp;
		if
		:: t_list == NEXTL -> list_remove(); list_append(CURL)
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
	/* smp_call() returns once arcu_sample_cpu() ran: its call slot (on
	 * smp_call()'s stack) and its argument &gp (rcu_alg_detect()'s) die
	 * when rcu_alg_detect() returns; a call still pending then would run
	 * on a dead stack frame */
	assert(!ipi_pending);
#ifndef BROKEN_NO_WAIT_PREEMPTED
	/* wait_for_preempted_readers(): under the lock, while the list is
	 * not empty, raise detector_waits_readers, unlock, sleep in
	 * readers_done_wq (no stall watch: waitq_sleep()), lock again */
	do
	:: atomic {
		if
		:: cur_len == 0 -> det_waits = 0; leave = 1
		:: else ->
#ifndef BROKEN_WAITS_AFTER_UNLOCK
			det_waits = 1;
#endif
			leave = 0
		fi
	   };
		if
		:: leave -> break
		:: else
		fi;
#ifdef BROKEN_WAITS_AFTER_UNLOCK
		det_waits = 1;
#endif
		atomic {
			if
			:: wq_missed > 0 -> wq_missed--
			:: else -> det_asleep = 1
			fi
		};
		!det_asleep;
		/* a re-check follows a wake-up: the detector sleeps between
		 * its checks (no polling) */
		atomic { assert(wq_credit > 0); wq_credit-- }
	od;
#endif
#endif
	completed_gp = gp
}

/* wait_for_gp() */
inline wait_for_gp(target, gp, pending, sb, leave) {
	do
	:: completed_gp >= target -> break
	:: else ->
		atomic { !gp_mutex -> gp_mutex = 1 };
		if
		:: completed_gp < target -> run_gp(gp, pending, sb, leave)
		:: else
		fi;
		gp_mutex = 0
	od
}

/* rcu_read_lock(): addq */
inline t_lock() {
	atomic { running_T -> c0_nesting = c0_nesting + CNT_INC }
}

/* rcu_read_unlock(): arcu_read_unlock_sub() (subq), then
 * arcu_read_unlock_check() (cmpq) and its slow path */
inline t_unlock(preempted) {
	atomic { running_T -> c0_nesting = c0_nesting - CNT_INC };
#ifndef BROKEN_UNLOCK_NO_CHECK
#ifndef BROKEN_CHECK_BIT
	atomic { running_T -> preempted = (c0_nesting == WAS_PREEMPTED) };
#else
	atomic { running_T -> preempted = ((c0_nesting & WAS_PREEMPTED) != 0) };
#endif
#endif
	if
	:: preempted ->
		/* rcu_read_unlock_preempted(): interrupts off, under
		 * rcu_preempt_lock (its release orders T's loads) */
		atomic {
			running_T && rpend == NONE ->
#ifndef BROKEN_UNLOCK_NO_RECHECK
			if
#ifndef BROKEN_CHECK_BIT
			:: c0_nesting == WAS_PREEMPTED ->
#else
			:: (c0_nesting & WAS_PREEMPTED) != 0 ->
#endif
#endif
				list_remove(); c0_nesting = 0; reader_left()
#ifndef BROKEN_UNLOCK_NO_RECHECK
			:: else
			fi
#endif
		};
		preempted = 0
	:: else
	fi
}

/* The reader thread on CPU 0: each step is one instruction and runs only
 * while T is CPU 0's thread (interrupts and switches fall between). Its
 * first section is nested: the outer lock, the load of the pointer, a
 * nested section (depth 2) that dereferences it, the dereference again in
 * the outer section after the inner unlock, the outer unlock; the second
 * section is flat. */
active proctype T() {
	byte p, i;
	bool preempted;
	for (i : 1 .. NSEC) {
		t_lock();
		atomic { running_T -> p = ptr }                    /* load the pointer */
		if
		:: i == 1 ->
			t_lock();                          /* nested */
			atomic { running_T && rpend == NONE -> rpend = p } /* dereference */
			t_unlock(preempted)
		:: else
		fi;
		atomic { running_T && rpend == NONE -> rpend = p }         /* dereference */
		t_unlock(preempted)
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
#ifndef BROKEN_SAMPLE_DEPTH1
		:: n >= CNT_INC && (n & WAS_PREEMPTED) == 0 ->
#else
		:: n == CNT_INC && (n & WAS_PREEMPTED) == 0 ->
#endif
#ifndef BROKEN_EL1_RESTORE
			c0_nesting = n | WAS_PREEMPTED;
#endif
			list_append(CURL)           /* T is the running thread */
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
		running_T && nsw < MAXSW && !cs_late &&
		(rpend == NONE || c0_nesting == 0) ->
			/* the hook runs for the thread that ran on CPU 0 */
			assert(running_T);
			running_T = 0;
			nsw++;
			n = c0_nesting;
			t_entry = n;
			c0_nesting = 0;
			if
			:: n == WAS_PREEMPTED ->
				list_remove(); n = 0; reader_left()
			:: n >= CNT_INC && (n & WAS_PREEMPTED) == 0 ->
				n = n | WAS_PREEMPTED;
				/* rcu_add_preempted_locked() */
#ifndef BROKEN_ALWAYS_NEXT
				if
				:: c0_last_seen != cur_gp -> list_append(CURL)
				:: else -> list_append(NEXTL)
				fi
#else
				list_append(NEXTL)
#endif
			:: else
			fi;
			t_nesting = n
	   };
		record_cs_qs()
	:: atomic {
		/* scheduler_idle_loop(): idle = true (seq_cst, after all that
		 * CPU 0 did before) */
		!running_T && !c0_idle && rpend == NONE && !cs_late -> c0_idle = 1
	   }
	:: !running_T && !c0_idle ->
		/* the other thread is switched out (record_cs_qs), then
		 * arcu_before_thread_runs(T) */
		record_cs_qs();
#ifndef BROKEN_EL1_RESTORE
		atomic { c0_nesting = t_nesting; running_T = 1 }
#else
		atomic { c0_nesting = t_entry; running_T = 1 }
#endif
	:: !running_T && c0_idle ->
		/* woken from idle: the wake-up interrupt (or the idle loop)
		 * stores idle = false (seq_cst), then the scheduler switches
		 * to T: arcu_before_thread_runs(T) */
#ifndef BROKEN_IDLE_LATE_CLEAR
		c0_idle = 0;
#ifndef BROKEN_EL1_RESTORE
		atomic { c0_nesting = t_nesting; running_T = 1 }
#else
		atomic { c0_nesting = t_entry; running_T = 1 }
#endif
#else
		atomic { c0_nesting = t_nesting; running_T = 1 };
		c0_idle = 0
#endif
	:: u_done && d_done && running_T && !cs_late -> break
	od
}

/* The late half of record_cs_qs() (BROKEN_NO_CS_MB_AFTER only): the load
 * of rcu_cur_gp and the store of last_seen_gp, performed after T's loads. */
active proctype CSB() {
end:	do
	:: atomic { cs_late -> c0_last_seen = cur_gp; cs_late = 0 }
	od
}

/* U's store buffer: the unlink becomes visible. */
active proctype USB() {
	atomic { usb_full -> ptr = 1; usb_full = 0 }
}

/* The updater and its CPU's reclaimer. */
active proctype U() {
	byte target, gp;
	bool pending, leave;
	usb_full = 1;                   /* unlink A: ptr = B (store buffered) */
	/* rcu_call(); the reclaimer moves it to next: memory_barrier(), then
	 * next_cbs_gp = cur_gp() + 1 */
#ifndef BROKEN_CB_NO_MB
	!usb_full;
#endif
	target = cur_gp + 1;
	wait_for_gp(target, gp, pending, !usb_full, leave);
	/* exec_batch(): the callback frees A, once */
	atomic { assert(!freed[0]); freed[0] = 1 };
	u_done = 1
}

/* Another CPU's reclaimer needing a grace period too. */
active proctype D() {
	byte target, gp;
	bool pending, leave;
	target = cur_gp + 1;
	wait_for_gp(target, gp, pending, true, leave);
	d_done = 1
}
