/*
 * podzimek.pml -- Podzimek RCU (preemptible variant) grace-period detection.
 *
 * Models (kernel/generic/src/synch/rcu.c and rcu_podzimek.c, unless said
 * otherwise):
 *   - the reader of rcu_podzimek_inline.h (no preemption_disable() in the fast
 *     path): rcu_read_lock() (a hint, last_seen_gp != rcu_cur_gp, sends
 *     it to rcu_read_lock_slow(), which with preemption disabled records a
 *     QS via rcu_record_qs() when the count is 0; then the count's
 *     one-instruction increment, arcu_nesting_inc()), rcu_read_unlock() (the
 *     one-instruction decrement; at 0 the hints rcu_preempted, last_seen_gp
 *     != rcu_cur_gp, is_delaying_gp send it to rcu_read_unlock_slow():
 *     remove_preempted(), then with preemption disabled the QS recorded and
 *     announced when the count is 0 and one is due);
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
 *     reclaimer_thread() step reading cur_gp() + 1 after its memory_barrier()
 *     (rcu_call_batched()'s stack is taken in that step with the arriving
 *     list, before the barrier: see verify/arcu.pml).
 *
 * Processes: T, a reader thread on CPU 0 (NSEC sections: lock, load the
 * pointer, dereference, unlock); CPU0 (and CPU1 with MIGRATE: the IPI handler and the scheduler,
 * which switches T out only while its preemption is enabled, at most MAXSW
 * times); DET, the detector thread; QSB, the late half of rcu_record_qs()
 * (a variant only); U, the updater and its reclaimer
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
 * Nesting, the preempted lists, the wait queue of
 * wait_for_preempted_readers() and the ordering of last_seen_gp as in
 * arcu.pml (T's first section nested to depth 2 with preemption anywhere;
 * list_append()/list_remove() with membership assertions; a wait queue that
 * remembers a wake-up without a sleeper; the seq_cst store of last_seen_gp a
 * release, memory_barrier_after_atomic() keeping later loads after it). T may
 * be switched out twice (MAXSW 2). delaying_cpus' wait is a guard: its
 * waitq_sleep_timeout() re-checks every DETECT_SLEEP_US, a lost wake-up
 * there costs a delay, not progress.
 *
 * Migration (-DMIGRATE, the scenario podzimek_migrate): a second CPU
 * (CPU1: the same IPI handler, scheduler and idle loop, cpu_body()); T,
 * switched out on one CPU, may resume on either (t_claimed: one CPU switches
 * it in). The count's update is one instruction applied to the CPU T runs
 * on (amd64 %gs:, arm64 x18); the fast paths read CPU in a step of their own
 * and then its last_seen_gp and is_delaying_gp (hints: the CPU may be one T
 * left), the slow paths with preemption disabled. BROKEN_LOCK_SPLIT and
 * BROKEN_UNLOCK_SPLIT split the update into a load through CPU and a later
 * store: T preempted between them updates the CPU it left. The detector samples both CPUs in turn (one smp_call at a
 * time). MAXSW is 1 in this scenario (one switch-out, the migration; two
 * made 14.2 M states, 1.2 GB): 3.4 M states, 400 MB, safety. rcu_record_qs()
 * takes the CPU as an argument (the reader's c).
 *
 * Two waiters (-DWAITERS, the scenario podzimek_waiters): W, a second
 * caller of rcu_wait_for_gp() (another CPU's reclaimer), asks for the GP
 * after the one running when it reads cur_gp; T runs one (nested) section
 * and is never switched out (NSEC 1, MAXSW 0), so the search stays small.
 * Two requests can complete a GP past U's target before U looks at
 * completed_gp, which the one-waiter scenarios cannot (a GP starts only
 * for a request, and the only request above GP 1 is U's).
 *
 * Abstracted away: the idle loop's details, more readers, sleeps and time-outs
 * (a wait is a blocking guard; the time-out loops only re-check), the stall
 * watch, rcu_thread_exiting(), batching.
 *
 * Safety: no dereference of a freed object (T's, and that of a reader in an
 * interrupt handler on the idle CPU: one interrupt, not in
 * podzimek_migrate); the callback runs once; T ends with its preemption
 * enabled (the slow paths pair every disable); a GP starts only after the
 * previous one completed and only when requested; the switch-out hook runs
 * only for the thread running on the CPU; the detector re-checks the
 * preempted list only after a wake-up (wq_credit: no polling).
 * Liveness (ltl gp_ends, pan -a -f): every started grace period completes, and U get
 * the grace periods they wait for (a detector that never starts one is a
 * violation).
 *
 * Broken variants (spin -DBROKEN_xxx):
 *   BROKEN_NO_QS_MB        rcu_record_qs() without its memory_barrier(): must
 *                          VERIFY (the seq_cst/release store orders the
 *                          loads before it by itself)
 *   BROKEN_NO_QS_MB_RELAXED no memory_barrier() and a relaxed store
 *   BROKEN_NO_QS_MB_AFTER  rcu_record_qs() without memory_barrier_after_atomic():
 *                          the load of rcu_cur_gp and the store of
 *                          last_seen_gp performed after the next loads (QSB)
 *   BROKEN_LOCK_QS_NESTED  rcu_read_lock_slow() records a QS without
 *                          testing nesting == 0 (inside the outer section)
 *   BROKEN_UNLOCK_DEPTH1   rcu_read_unlock() and its slow path take
 *                          nesting <= 1 after the decrement for the
 *                          outermost unlock
 *   BROKEN_RELIST          podzimek_after_thread_ran() lists T without testing
 *                          rcu_preempted: T switched out twice inside one
 *                          section is appended twice
 *   BROKEN_LEFT_NO_WAKE    rcu_preempted_reader_left_locked() never wakes the
 *                          detector (invalid end state)
 *   BROKEN_WAITS_AFTER_UNLOCK detector_waits_readers raised after dropping the
 *                          lock: a lost wake-up
 *   BROKEN_SAMPLE_SKIP     podzimek_sample_cpu() acks a CPU inside a reader
 *   BROKEN_NO_WAIT_DELAYING  rcu_run_gp() does not wait for delaying_cpus == 0
 *   BROKEN_NO_WAIT_PREEMPTED rcu_run_gp() skips wait_for_preempted_readers()
 *   BROKEN_IPI_NO_BARRIER  the IPI is not ordered after T's loads
 *   BROKEN_IDLE_LATE_CLEAR CPU 0 runs T before it stores idle = false
 *   BROKEN_LOCK_SPLIT      rcu_read_lock()'s increment as a load through
 *                          CPU and a later store (`c->rcu.nesting++`
 *                          without preemption disabled): T preempted between
 *                          them resumes on CPU 1 and stores into CPU 0's
 *                          count (podzimek_migrate; harmless on one CPU)
 *   BROKEN_UNLOCK_SPLIT    the same for the decrement (podzimek_migrate)
 *   BROKEN_UNLOCK_NO_QS    the outermost unlock never records a QS (the
 *                          hints skipped, the slow path only leaves the
 *                          list): a delaying CPU that is not switched out
 *                          never announces (liveness)
 *
 * Fingerprints (verify/fingerprint.py):
 *   kernel/generic/include/synch/rcu_podzimek_inline.h rcu_read_lock 9b8540169304
 *   kernel/generic/include/synch/rcu_podzimek_inline.h rcu_read_unlock 8bc5cc119c72
 *   kernel/generic/src/synch/rcu.c rcu_cpu_quiescent 878656b22607
 *   kernel/generic/src/synch/rcu.c gp_start 6ba5b6e550cc
 *   kernel/generic/src/synch/rcu.c wait_for_preempted_readers 51f5bfd73d47
 *   kernel/generic/src/synch/rcu.c rcu_run_gp a02389ee27de
 *   kernel/generic/src/synch/rcu.c rcu_preempted_reader_left_locked 5016e895b4d9
 *   kernel/generic/src/synch/rcu.c rcu_add_preempted_locked 0c58b1d05303
 *   kernel/generic/src/synch/rcu.c reclaimer_thread b7b0efaf6fe0
 *   kernel/generic/src/synch/rcu_podzimek.c rcu_record_qs 0102dd8da7fd
 *   kernel/generic/src/synch/rcu_podzimek.c remove_preempted d79e97c796e4
 *   kernel/generic/src/synch/rcu_podzimek.c rcu_read_lock_slow 808eb3af9a16
 *   kernel/generic/src/synch/rcu_podzimek.c rcu_read_unlock_slow 4413eb67cfe1
 *   kernel/generic/src/synch/rcu_podzimek.c podzimek_after_thread_ran 25485cfa97a6
 *   kernel/generic/src/synch/rcu_podzimek.c podzimek_before_thread_runs 97af27723815
 *   kernel/generic/src/synch/rcu_podzimek.c podzimek_sample_cpu 581cd48c473c
 *   kernel/generic/src/synch/rcu_podzimek.c rcu_alg_detect 6cd412d3afbb
 *   kernel/generic/src/synch/rcu_podzimek.c detector_thread 572fc51a00bd
 *   kernel/generic/src/synch/rcu_podzimek.c rcu_wait_for_gp c794979bc029
 */

#if defined(WAITERS)
#define NSEC   1        /* one (nested) section, never switched out */
#else
#define NSEC   2
#endif
#ifdef MIGRATE
#define NCPU   2        /* T may resume on CPU 1 (podzimek_migrate) */
#define MAXSW  1        /* one switch-out: the migration (state space) */
#elif defined(WAITERS)
#define NCPU   1
#define MAXSW  0        /* podzimek_waiters: T is never switched out */
#else
#define NCPU   1
#define MAXSW  2
#endif
#define NONE   2
#define NOL    0        /* T's rcu_preempt_link: on no list, */
#define CURL   1        /* on rcu_cur_preempted, */
#define NEXTL  2        /* on next_preempted */

byte ptr = 0;
bool freed[2];
bool usb_full;

/* per CPU (cpu_t.rcu) */
byte nesting[NCPU];
byte last_seen[NCPU];
bool is_delaying[NCPU];
bool idle[NCPU];        /* cpu_t.idle (seq_cst) */
byte t_cpu;             /* the CPU T runs on (or ran on last) */
bool t_claimed;         /* a CPU is switching T in (the scheduler's run
                           queue lock: T runs on one CPU) */
bool qs_late;           /* rcu_record_qs()'s load of cur_gp and store of
                           last_seen_gp not yet performed (variant only) */
byte qs_cpu;            /* ... on this CPU */
byte t_nesting;         /* thread_t.rcu_nesting */
bool t_preempted;       /* thread_t.rcu_preempted */
byte t_list;            /* the list T's rcu_preempt_link is on */
byte cur_len, next_len;
bool running_T = 1;
bool pd;                /* T's preemption is disabled */
byte rpend = NONE;
byte nsw;
bool t_done;

/* detection */
byte cur_gp, completed_gp;
byte req_gp = 1;
byte delaying_cpus;
bool ipi_pending;
byte ipi_cpu;           /* the target of the pending smp_call */
byte ipi_gp;
bool det_waits;         /* detector_waits_readers */
bool det_asleep;        /* the detector sleeps in readers_done_wq */
byte wq_missed;         /* readers_done_wq.missed_wakeups */
byte wq_credit;         /* ghost: wake-ups given and not yet used by a
                           re-check of the detector (no polling) */
#ifndef MIGRATE
bool irq_done;          /* the one interrupt with a reader has come */
#endif
bool u_done;
#ifdef WAITERS
bool w_done;            /* the second waiter W is done */
#endif

#ifdef BROKEN_IPI_NO_BARRIER
#define IPI_BARRIER true
#else
#define IPI_BARRIER (rpend == NONE && !qs_late)
#endif
#ifdef BROKEN_NO_QS_MB_RELAXED
#define QS_BARRIER true
#else
/* memory_barrier(), and the seq_cst (on arm64: release) store itself: the
 * finished sections' loads are performed first. BROKEN_NO_QS_MB leaves the
 * release. */
#define QS_BARRIER (rpend == NONE)
#endif

ltl gp_ends { [] ((cur_gp > completed_gp) -> <> (cur_gp == completed_gp)) && <> u_done }

/* adt/list.h on T's link (see arcu.pml) */
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

/* An interrupt on an idle CPU (not podzimek_migrate): the scenario. It
 * comes once, while T is switched out and the CPU idles. */
inline irq_arrives(me) {
	atomic { !running_T && idle[me] && !irq_done -> irq_done = 1 }
}
/* Its handler's reader section: the load of the pointer and the
 * dereference (checked at once). Its rcu_read_lock()/rcu_read_unlock()
 * pair is left out: nothing samples the CPU while the handler runs
 * (interrupts stay disabled in it, so no IPI; T is not running), and the
 * idle thread is never preempted, so the count is never read during it. */
inline irq_reader(me, p) {
	p = ptr;
	assert(!freed[p])
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

/* rcu_record_qs() on CPU 0; guard: the context may run (T running, or the
 * scheduler). memory_barrier(), the seq_cst store of last_seen_gp, the
 * exchange of is_delaying_gp, memory_barrier_after_atomic(), the
 * announcement. */
#define T_PID 0         /* T is the first active proctype: its _pid */
inline record_qs(guard, was, cpu) {
	/* "Preemption off" (rcu_record_qs()'s contract: it reads CPU itself,
	 * the model passes it as cpu): T's slow paths call it with preemption
	 * disabled, on the CPU they read after disabling it (the scheduler's
	 * hooks run it in their own context) */
	assert(_pid != T_PID || (pd && cpu == t_cpu));
#ifndef BROKEN_NO_QS_MB_AFTER
	atomic { guard && QS_BARRIER && !qs_late -> last_seen[cpu] = cur_gp };
#else
	/* without the barrier after it, the next loads on the CPU may be
	 * performed before the load of cur_gp and the store (QSB) */
	atomic { guard && QS_BARRIER && !qs_late -> qs_late = 1; qs_cpu = cpu };
#endif
	atomic { guard -> was = is_delaying[cpu]; is_delaying[cpu] = 0 };
	if
	:: was -> atomic { guard -> delaying_cpus-- }
	:: else
	fi
}

/* The count's one-instruction update (arcu_nesting_inc()/_dec(),
 * arch/rcu_arch.h: amd64 an addq/subq on %gs:, arm64 an add/sub on x18):
 * applied to the CPU T runs on when it executes. BROKEN_LOCK_SPLIT and
 * BROKEN_UNLOCK_SPLIT split it into a load through the CPU read first and a
 * later store (a count in memory without preemption disabled or interrupts
 * masked: `c->rcu.nesting++`, or arm64's TPIDR_EL1, ldr, add, str). */
inline count_add(d, n, c) {
	atomic { running_T -> nesting[t_cpu] = nesting[t_cpu] + d }
}
inline count_add_split(d, n, c) {
	atomic { running_T -> c = t_cpu; n = nesting[c] };
	atomic { running_T -> nesting[c] = n + d }
}

/* rcu_read_lock(): the hint (this CPU's last_seen_gp != rcu_cur_gp; CPU is
 * read in a step of its own, the CPU T then runs on may be another), the
 * slow path rcu_read_lock_slow() (preemption disabled: the QS recorded when
 * the count is 0), then the increment */
inline t_lock(rec, was, n, c) {
	atomic { running_T -> c = t_cpu };
	atomic { running_T -> rec = (last_seen[c] != cur_gp) };
	if
	:: rec ->
		atomic { running_T -> pd = 1 };
		atomic { running_T -> c = t_cpu };
#ifndef BROKEN_LOCK_QS_NESTED
		atomic { running_T -> rec = (nesting[c] == 0 && last_seen[c] != cur_gp) };
#else
		atomic { running_T -> rec = (last_seen[c] != cur_gp) };
#endif
		if
		:: rec -> record_qs(running_T, was, c)
		:: else
		fi;
		atomic { running_T -> pd = 0 }
	:: else
	fi;
#ifndef BROKEN_LOCK_SPLIT
	count_add(1, n, c)
#else
	count_add_split(1, n, c)
#endif
}

/* The outermost test: the count of the CPU T runs on is 0 */
#ifndef BROKEN_UNLOCK_DEPTH1
#define OUTERMOST(c) (nesting[c] == 0)
#else
#define OUTERMOST(c) (nesting[c] <= 1)
#endif

/* rcu_read_unlock(): the decrement, the outermost test, the hints
 * (THREAD->rcu_preempted, then this CPU's last_seen_gp != rcu_cur_gp or
 * is_delaying_gp, each a load of its own), the slow path
 * rcu_read_unlock_slow(): remove_preempted() (interrupts off, under the
 * lock), then with preemption disabled the QS recorded (and announced) on
 * the CPU T runs on if its count is 0 and one is due */
inline t_unlock(rec, was, z, n, c) {
#ifndef BROKEN_UNLOCK_SPLIT
	count_add(-1, n, c);
#else
	count_add_split(-1, n, c);
#endif
	atomic { running_T -> z = OUTERMOST(t_cpu) };
	if
	:: z ->
		atomic { running_T -> c = t_cpu };
		atomic { running_T -> rec = t_preempted };
#ifndef BROKEN_UNLOCK_NO_QS
		if
		:: !rec -> atomic { running_T -> rec = (last_seen[c] != cur_gp) }
		:: else
		fi;
		if
		:: !rec -> atomic { running_T -> rec = is_delaying[c] }
		:: else
		fi;
#endif
		if
		:: rec ->
			atomic { running_T -> rec = t_preempted };
			if
			:: rec ->
				/* remove_preempted(): re-checks under the lock */
				atomic {
					running_T && rpend == NONE ->
					if
					:: t_preempted ->
						list_remove(); t_preempted = 0;
						reader_left()
					:: else
					fi
				}
			:: else
			fi;
			atomic { running_T -> pd = 1 };
			atomic { running_T -> c = t_cpu };
#ifndef BROKEN_UNLOCK_NO_QS
			atomic { running_T -> rec = (OUTERMOST(c) &&
			    (last_seen[c] != cur_gp || is_delaying[c])) };
#else
			rec = 0;
#endif
			if
			:: rec -> record_qs(running_T, was, c)
			:: else
			fi;
			atomic { running_T -> pd = 0 }
		:: else
		fi
	:: else
	fi
}

/* T: the first section is nested: the outer lock, the load of the pointer,
 * a nested section (depth 2) that dereferences it, the dereference again in
 * the outer section after the inner unlock, the outer unlock; the second
 * section is flat. */
active proctype T() {
	byte p, i, c, n;
	bool rec, was, z;
	for (i : 1 .. NSEC) {
		t_lock(rec, was, n, c);
		atomic { running_T -> p = ptr }                    /* load the pointer */
		if
		:: i == 1 ->
			t_lock(rec, was, n, c);                    /* nested */
			atomic { running_T && rpend == NONE -> rpend = p } /* dereference */
			t_unlock(rec, was, z, n, c)
		:: else
		fi;
		atomic { running_T && rpend == NONE -> rpend = p }         /* dereference */
		t_unlock(rec, was, z, n, c)
	}
	/* every preemption_disable() of the slow paths was paired with an enable */
	assert(!pd);
	t_done = 1
}

active proctype LQ() {
	do
	:: atomic { rpend != NONE -> assert(!freed[rpend]); rpend = NONE }
	:: t_done && rpend == NONE -> break
	od
}

/* The late half of rcu_record_qs() (BROKEN_NO_QS_MB_AFTER only). */
active proctype QSB() {
end:	do
	:: atomic { qs_late -> last_seen[qs_cpu] = cur_gp; qs_late = 0 }
	od
}

/* CPU me: the IPI handler, the scheduler (T's switch-out on this CPU, the
 * idle loop, T's switch-in here: on another CPU than the one it left, a
 * migration) */
inline cpu_body(me) {
	bool was;
	byte ip;
	do
	:: atomic {
		/* podzimek_sample_cpu() in the IPI handler */
		ipi_pending && ipi_cpu == me && IPI_BARRIER ->
		idle[me] = 0;           /* interrupt_dispatch() */
#ifndef BROKEN_SAMPLE_SKIP
		if
		:: nesting[me] == 0 -> last_seen[me] = ipi_gp
		:: else ->
			if
			:: last_seen[me] != ipi_gp && !is_delaying[me] ->
				delaying_cpus++; is_delaying[me] = 1
			:: else
			fi
		fi;
#else
		last_seen[me] = ipi_gp;
#endif
		ipi_pending = 0
	   }
	:: atomic {
		/* podzimek_after_thread_ran(T); listing T is under the lock */
		running_T && t_cpu == me && !pd && nsw < MAXSW && !qs_late &&
		(rpend == NONE || nesting[me] == 0 || t_preempted) ->
		/* the hook runs for the thread that ran on this CPU */
		assert(running_T && t_cpu == me);
		running_T = 0;
		nsw++;
		t_nesting = nesting[me];
		if
#ifndef BROKEN_RELIST
		:: t_nesting > 0 && !t_preempted ->
#else
		:: t_nesting > 0 ->
#endif
			t_preempted = 1;
			/* rcu_add_preempted_locked() */
			if
			:: last_seen[me] != cur_gp -> list_append(CURL)
			:: else -> list_append(NEXTL)
			fi
		:: else
		fi;
		nesting[me] = 0
	   };
		record_qs(true, was, me)
	:: atomic {
		/* scheduler_idle_loop(): idle = true (seq_cst) */
		!running_T && !idle[me] && rpend == NONE && !qs_late -> idle[me] = 1
	   }
	:: atomic { !running_T && !t_claimed && !idle[me] -> t_claimed = 1 };
		/* a thread is switched in only on a CPU that runs none and does
		 * not idle (a scheduler invariant, as the switch-out's) */
		assert(!running_T && !idle[me]);
		/* the other thread switched out, then podzimek_before_thread_runs(T) */
		record_qs(true, was, me);
		atomic { nesting[me] = t_nesting; t_cpu = me; running_T = 1; t_claimed = 0 }
	:: atomic { !running_T && !t_claimed && idle[me] -> t_claimed = 1 };
		assert(!running_T);
		/* woken from idle: idle = false (seq_cst), then T runs */
#ifndef BROKEN_IDLE_LATE_CLEAR
		idle[me] = 0;
		atomic { nesting[me] = t_nesting; t_cpu = me; running_T = 1; t_claimed = 0 }
#else
		atomic { nesting[me] = t_nesting; t_cpu = me; running_T = 1; t_claimed = 0 };
		idle[me] = 0
#endif
#ifndef MIGRATE
	:: irq_arrives(me);
		/* interrupt_dispatch(): the CPU is not idle while a handler
		 * runs (its readers must be waited for) */
		idle[me] = 0;
		irq_reader(me, ip)
#endif
	:: u_done && running_T && !qs_late -> break
	od
}

active proctype CPU0() {
	cpu_body(0)
}

#ifdef MIGRATE
active proctype CPU1() {
	cpu_body(1)
}
#endif

active proctype DET() {
	byte gp, k;
	bool leave;
	do
	:: req_gp > completed_gp ->
		/* run_gp(): gp_start() */
		atomic {
			/* one GP at a time, and only a requested one */
			assert(cur_gp == completed_gp && cur_gp < req_gp);
			cur_gp = cur_gp + 1; gp = cur_gp;
			if
			:: t_list == NEXTL -> list_remove(); list_append(CURL)
			:: else
			fi
		};
		delaying_cpus = 1;      /* the detector's own reference */
		for (k : 0 .. NCPU - 1) {
			if
			:: !(last_seen[k] == gp || idle[k]) -> /* cpu_quiescent() */
				atomic { ipi_gp = gp; ipi_cpu = k; ipi_pending = 1 };
				!ipi_pending
			:: else
			fi
		}
		delaying_cpus--;
#ifndef BROKEN_NO_WAIT_DELAYING
		delaying_cpus == 0;
#endif
#ifndef BROKEN_NO_WAIT_PREEMPTED
		/* wait_for_preempted_readers() (as in arcu.pml) */
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
			/* a re-check follows a wake-up: the detector sleeps
			 * between its checks (no polling) */
			atomic { assert(wq_credit > 0); wq_credit-- }
		od;
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
#ifdef WAITERS
	w_done;                         /* the scenario ends with both waiters */
#endif
	u_done = 1
}

#ifdef WAITERS
/* W, a second caller of rcu_wait_for_gp() (another CPU's reclaimer): it
 * asks for the GP after the one running when it reads cur_gp, so a GP past
 * U's target may complete before U looks (U must wait for >=, not ==) */
active proctype W() {
	byte target;
	target = cur_gp + 1;
	atomic { if :: req_gp < target -> req_gp = target :: else fi };
	completed_gp >= target;
	w_done = 1
}
#endif
