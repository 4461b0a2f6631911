/*
 * urcu_cb.pml -- the callback hand-off of libcht's user RCU: no lost
 * wake-up of the reclaimer, every callback runs once.
 *
 * Models uspace/lib/cht_rcu/src/rcu.c: cht_rcu_call() (push onto cb_list with a
 * seq_cst CAS; if the list was empty, a seq_cst load of reclaimer_sleeping
 * and, if set, cond_signal under cb_lock) and reclaimer_main() (exchange of
 * cb_list with NULL; on an empty list: the seq_cst store reclaimer_sleeping
 * = 1, a seq_cst re-load of cb_list, and if still empty the cond_wait loop
 * under cb_lock; otherwise the batch runs, once per callback). The comment in
 * cht_rcu_call() names the argument: store buffering between the poster's
 * push and load and the reclaimer's store and load, both seq_cst.
 *
 * Also reclaimer_main()'s batch: the list taken whole by the exchange is a
 * LIFO (stk[0] pushed first); it is reversed and run oldest first after a
 * cht_rcu_synchronize() that begins after the exchange; and
 * cht_rcu_barrier() (barrier_cb() posted with cht_rcu_call(), then the wait
 * for done under b.lock: a guard here).
 *
 * Processes: P1 posts callback 1; P2 posts callback 2, then calls
 * cht_rcu_barrier() (callback 3); RD a reader thread with two sections; RC
 * the reclaimer; SB the reclaimer's store buffer (used by a variant only).
 *
 * RCU as in cht.pml (its guarantee; urcu.pml checks the implementation): a
 * callback records the reader section active when it was posted (what its
 * poster unlinked may still be read there) and must not run while that
 * section is active; cht_rcu_synchronize() waits for every section active
 * when it starts.
 *
 * Abstracted away: the 1 ms batching sleep (a delay), the reclaimer's start
 * (reclaimer_ensure()), the reclaimer's own registration, the barrier's
 * mutex and condition variable (a guard on done), the order of the
 * callbacks of one poster (one each, plus the barrier). The condition
 * variable of cb_cond: cond_wait releases the lock and waits for a signal
 * atomically; no spurious wake-ups (they would only re-check). The mutex:
 * lock is an acquire (it does not drain RC's store buffer), unlock a
 * release (it does).
 *
 * Safety: each callback runs once and not during a section that was active
 * when it was posted (assertions); when cht_rcu_barrier() returns, every
 * callback pushed before the barrier's has run (assertion in P2). A lost
 * wake-up leaves the reclaimer asleep with a callback on the list once the
 * posters are done: an invalid end state (and a violation of ltl all_run
 * with pan -a -f).
 *
 * Broken variants (spin -DBROKEN_xxx):
 *   BROKEN_SLEEP_RELAXED   the reclaimer's store reclaimer_sleeping = 1 not
 *                          seq_cst: its re-load of cb_list may be performed
 *                          before the store is visible
 *   BROKEN_LOOK_BEFORE_PUSH the poster loads reclaimer_sleeping before its
 *                          push
 *   BROKEN_NO_REVERSE      the batch run as taken, newest first: the barrier's
 *                          callback runs before an earlier one
 *   BROKEN_RECLAIM_NO_GP   the batch run without cht_rcu_synchronize()
 *   BROKEN_GP_BEFORE_TAKE  the grace period waited for before the exchange:
 *                          a callback pushed meanwhile runs without one
 *
 * Fingerprints (verify/fingerprint.py):
 *   uspace/lib/cht_rcu/src/rcu.c cht_rcu_call 74dc602350bf
 *   uspace/lib/cht_rcu/src/rcu.c reclaimer_main 228c44ef2d40
 *   uspace/lib/cht_rcu/src/rcu.c barrier_cb 0fb21da0fd4f
 *   uspace/lib/cht_rcu/src/rcu.c cht_rcu_barrier bf034108e603
 */

#define NCB 3           /* callbacks 1 (P1), 2 (P2), 3 (P2's barrier) */
#define NOSEC 255

/* cb_list: a LIFO of callback ids, stk[0] pushed first */
byte stk[NCB];
byte cb_n;
bool sleeping;          /* reclaimer_sleeping */
bool cb_lock;
bool waiting;           /* the reclaimer waits on cb_cond */
bool ran[NCB + 1];
byte nran;
bool sb_full;           /* RC's store sleeping = 1 not yet visible */
byte posted;            /* bit i: callback i pushed */
byte before_b;          /* the callbacks pushed before the barrier's */
bool bdone;             /* barrier_t.done */

/* RCU readers (cht.pml's abstraction): RD's sections; a callback posted
 * while a section is active must not run before that section ended. */
bool insec;
byte gen;
byte pre[NCB + 1];      /* the section active when callback i was posted */

ltl all_run { <> (nran == NCB) }

/* cht_rcu_call(id): the seq_cst CAS push; a push onto an empty list looks
 * at reclaimer_sleeping and signals cb_cond under cb_lock */
inline post(id, was_empty, look) {
#ifdef BROKEN_LOOK_BEFORE_PUSH
	look = sleeping;
#endif
	atomic {
		pre[id] = (insec -> gen : NOSEC);       /* what it unlinked */
		was_empty = (cb_n == 0);
		stk[cb_n] = id; cb_n++;
		posted = posted | (1 << id);
		if
		:: id == 3 -> before_b = posted & ~(1 << 3)
		:: else
		fi
	};
#ifndef BROKEN_LOOK_BEFORE_PUSH
	look = sleeping;
#endif
	if
	:: was_empty && look ->
		atomic { !cb_lock -> cb_lock = 1 };
		waiting = 0;            /* cond_signal */
		cb_lock = 0
	:: else
	fi
}

/* runs callback id (barrier_cb() for 3: done = 1 under b.lock, signal) */
inline run_cb(id) {
	atomic {
		assert(!ran[id]);
		assert(pre[id] == NOSEC || !insec || gen != pre[id]);  /* a GP ran */
		ran[id] = 1; nran++;
		if
		:: id == 3 -> bdone = 1
		:: else
		fi
	}
}

active proctype P1() {
	bool was_empty, look;
	post(1, was_empty, look)
}

/* P2: a callback, then cht_rcu_barrier() */
active proctype P2() {
	bool was_empty, look;
	post(2, was_empty, look);
	post(3, was_empty, look);
	bdone;                  /* cond_wait until done, under b.lock */
	/* every callback posted before the barrier's ran */
	assert((before_b & ~(ran[1] << 1 | ran[2] << 2)) == 0)
}

/* A reader thread: two sections (cht_rcu_read_lock/unlock) */
active proctype RD() {
	atomic { insec = 1; gen++ };
	insec = 0;
	atomic { insec = 1; gen++ };
	insec = 0
}

active proctype SB() {
end:	do
	:: atomic { sb_full -> sleeping = 1; sb_full = 0 }
	od
}

/* reclaimer_main() */
active proctype RC() {
	byte lst[NCB], n, i, w;
	byte it;        /* ghost: iterations of the copy below (it ends) */
	do
	:: nran == NCB -> break
	:: else ->
#ifdef BROKEN_GP_BEFORE_TAKE
		/* cht_rcu_synchronize() before the exchange */
		atomic { w = (insec -> gen : NOSEC) };
		(w == NOSEC || !insec || gen != w);
#endif
		/* exchange(cb_list, NULL), acquire */
		d_step {
			n = cb_n; i = 0;
			do
			:: i < n -> lst[i] = stk[i]; i++
				; it++; assert(it <= NCB)
			:: else -> break
			od;
			assert(it <= NCB); it = 0;
			cb_n = 0
		};
		if
		:: n == 0 ->
#ifndef BROKEN_SLEEP_RELAXED
			sleeping = 1;
#else
			sb_full = 1;
#endif
			if
			:: cb_n == 0 ->
				atomic { !cb_lock -> cb_lock = 1 };
				do
				:: cb_n != 0 -> break
				:: else ->
					/* cond_wait: unlock (a release: RC's
					 * earlier stores first) and wait, atomically */
					atomic { !sb_full -> cb_lock = 0; waiting = 1 };
wait_sig:				atomic { !waiting && !cb_lock -> cb_lock = 1 }
				od;
				atomic { !sb_full -> cb_lock = 0 }    /* release */
			:: else
			fi;
			atomic { !sb_full -> sleeping = 0 }
		:: else ->
			/* the LIFO reversed (oldest first), then
			 * cht_rcu_synchronize(): every section active now ends */
#ifndef BROKEN_GP_BEFORE_TAKE
#ifndef BROKEN_RECLAIM_NO_GP
			atomic { w = (insec -> gen : NOSEC) };
			(w == NOSEC || !insec || gen != w);
#endif
#endif
#ifndef BROKEN_NO_REVERSE
			i = 0;
			do
			:: i < n -> run_cb(lst[i]); i++
			:: else -> break
			od
#else
			/* the batch run newest first (the LIFO as taken) */
			i = n;
			do
			:: i > 0 -> i--; run_cb(lst[i])
			:: else -> break
			od
#endif
		fi
	od
}
