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
 * Processes: P1, P2 post one callback each (ids 1 and 2); RC the reclaimer;
 * SB the reclaimer's store buffer (used by the broken variant only).
 *
 * Abstracted away: the grace period the reclaimer waits for before running
 * a batch (urcu.pml checks it), the order inside a batch, the 1 ms batching
 * sleep, cht_rcu_barrier(), the reclaimer's start (reclaimer_ensure()).
 * The condition variable: cond_wait releases the lock and waits for a
 * signal atomically; no spurious wake-ups (they would only re-check). The
 * mutex: lock is an acquire (it does not drain RC's store buffer), unlock
 * a release (it does).
 *
 * Safety: each callback runs once (assertion). A lost wake-up leaves the
 * reclaimer asleep with a callback on the list once the posters are done:
 * an invalid end state (and a violation of ltl all_run with pan -a -f).
 *
 * Broken variants (spin -DBROKEN_xxx):
 *   BROKEN_SLEEP_RELAXED   the reclaimer's store reclaimer_sleeping = 1 not
 *                          seq_cst: its re-load of cb_list may be performed
 *                          before the store is visible
 *   BROKEN_LOOK_BEFORE_PUSH the poster loads reclaimer_sleeping before its
 *                          push
 *
 * Fingerprints (verify/fingerprint.py):
 *   uspace/lib/cht_rcu/src/rcu.c cht_rcu_call e44b4ccb8185
 *   uspace/lib/cht_rcu/src/rcu.c reclaimer_main 8ed778be8800
 *   uspace/lib/cht_rcu/src/rcu.c barrier_cb 0fb21da0fd4f
 *   uspace/lib/cht_rcu/src/rcu.c cht_rcu_barrier e6e05b5f71b2
 */

byte cb_list;           /* bit i: callback i is on the list */
bool sleeping;          /* reclaimer_sleeping */
bool cb_lock;
bool waiting;           /* the reclaimer waits on cb_cond */
bool ran[3];
byte nran;
bool sb_full;           /* RC's store sleeping = 1 not yet visible */

ltl all_run { <> (nran == 2) }

inline post(id) {
	bool was_empty, look;
#ifdef BROKEN_LOOK_BEFORE_PUSH
	look = sleeping;
#endif
	atomic { was_empty = (cb_list == 0); cb_list = cb_list | (1 << id) };
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

active proctype P1() { post(1) }
active proctype P2() { post(2) }

active proctype SB() {
end:	do
	:: atomic { sb_full -> sleeping = 1; sb_full = 0 }
	od
}

active proctype RC() {
	byte list, i;
	do
	:: nran == 2 -> break
	:: else ->
		atomic { list = cb_list; cb_list = 0 };
		if
		:: list == 0 ->
#ifndef BROKEN_SLEEP_RELAXED
			sleeping = 1;
#else
			sb_full = 1;
#endif
			if
			:: cb_list == 0 ->
				atomic { !cb_lock -> cb_lock = 1 };
				do
				:: cb_list != 0 -> break
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
			/* (a grace period), then the batch */
			i = 1;
			do
			:: i <= 2 ->
				if
				:: list & (1 << i) ->
					atomic { assert(!ran[i]); ran[i] = 1; nran++ }
				:: else
				fi;
				i++
			:: else -> break
			od
		fi
	od
}
