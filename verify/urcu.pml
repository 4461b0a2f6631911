/*
 * urcu.pml -- the userspace RCU of libcht (membarrier flavour).
 *
 * Models uspace/lib/cht_rcu/include/cht_rcu.h: cht_rcu_read_lock() (outermost:
 * cht_rcu_read_snapshot(), an acquire load of cht_rcu_gp.seq and a release
 * store of the thread's ctr, then cht_rcu_reader_barrier(), only a compiler
 * barrier in the membarrier flavour), cht_rcu_read_unlock() (outermost: the
 * release store ctr = 0); and uspace/lib/cht_rcu/src/rcu.c:
 * cht_rcu_synchronize() (snapshot of seq, gp_lock, the shared-GP check
 * gp_completed > snap, the advance seq = target, writer_barrier() =
 * membarrier(PRIVATE_EXPEDITED) / SYS_MEMBARRIER, wait_for_reader() over the
 * registry: ctr == 0 || ctr >= target, gp_completed = target).
 *
 * Processes: R, a registered reader thread (NSEC sections: lock, load the
 * protected pointer, dereference it twice, unlock); RSB, R's store buffer
 * (FIFO, 2 entries) for its stores to ctr; LQ, R's outstanding dereference;
 * WSB, W1's store buffer (its unlink); W1, an
 * updater that unlinks object A (ptr = B), calls cht_rcu_synchronize() and
 * frees A (what the reclaimer thread does for a cht_rcu_call() batch); W2,
 * another thread calling cht_rcu_synchronize() at the same time (so W1 may
 * be served by W2's grace period: the gp_completed > snap path).
 *
 * Memory model: R's stores to ctr go through its store buffer: its later
 * loads (the protected pointer) may be performed before its ctr store is
 * visible -- the reordering that membarrier() repairs from the writer's
 * side: writer_barrier() makes R's CPU execute a full barrier (R's store
 * buffer drained, R's outstanding load performed). R's dereference may be
 * performed late, but not after a release store of R (the release store of
 * ctr = 0 waits for it). W1's unlink sits in W1's store buffer until
 * cht_rcu_full_fence() at the start of cht_rcu_synchronize(), W1's release
 * store of seq, or a membarrier() (anyone's: it runs a barrier on W1's CPU
 * too). Each writer's release store of seq (W1's and W2's) sits in the
 * writer's store buffer (wseq, drained by WSQ; W1's after its unlink) until
 * writer_barrier() (membarrier, or the fence flavour's own fence), the
 * release of gp_lock or the release store of gp_completed. The reader's
 * acquire load of seq keeps its protected load after it (BROKEN_SNAPSHOT_
 * RELAXED lets it pass). gp_lock's acquire orders nothing before it. The
 * rest of the writers' accesses (the loads of seq, gp_completed and ctr) are
 * sequentially consistent.
 *
 * -DFENCE (run urcu_fence): the fence flavour (reader_fence = 1, Linux
 * without membarrier or CHT_RCU_FLAVOUR=fence): the reader executes
 * cht_rcu_full_fence() after its ctr store (its store buffer drained) and
 * writer_barrier() is the writer's own fence, which orders nothing on R.
 *
 * Abstracted away: nesting and signal handlers (nest is thread-local; one
 * level here), registration and the registry lock, the switch between the
 * flavours at start-up, the back-off in wait_for_reader(), the callback list
 * and the reclaimer (urcu_cb.pml), one reader thread.
 *
 * Safety: no dereference of a freed object; A is freed once; gp_lock is free
 * at the end (END).
 * Liveness (ltl gp_ends, pan -a -f): every advanced grace period completes.
 *
 * Broken variants (spin -DBROKEN_xxx):
 *   BROKEN_NO_MEMBARRIER   writer_barrier() orders nothing on R's CPU (a
 *                          writer-side fence alone, with non-fencing readers)
 *   BROKEN_UNLOCK_RELAXED  the unlock's store ctr = 0 without release
 *   BROKEN_NO_WAIT         no wait for readers (CHT_RCU_FI_NO_WAIT)
 *   BROKEN_SHARED_GE       the shared-GP check gp_completed >= snap
 *   BROKEN_NO_READER_FENCE (urcu_fence) the reader's fence left out
 *   BROKEN_WRITER_NO_FENCE (urcu_fence) writer_barrier() without its fence:
 *                          the caller's store of seq (W2's included) is
 *                          still buffered when it scans the readers' ctr
 *   BROKEN_SNAPSHOT_RELAXED the reader's load of seq relaxed instead of
 *                          acquire: its load of the protected pointer may
 *                          be performed first
 *   BROKEN_NO_SYNC_FENCE   cht_rcu_synchronize() without its first
 *                          cht_rcu_full_fence(): W1's snapshot may precede
 *                          its unlink, and W2's grace period, which began
 *                          after the snapshot but before the unlink was
 *                          visible, then serves W1 (the shared-GP path)
 *
 * Fingerprints (verify/fingerprint.py):
 *   uspace/lib/cht_rcu/include/cht_rcu.h cht_rcu_read_snapshot 9dd9a580295b
 *   uspace/lib/cht_rcu/include/cht_rcu.h cht_rcu_read_lock 17c41fdf0b03
 *   uspace/lib/cht_rcu/include/cht_rcu.h cht_rcu_read_unlock 7a5c51dfff2c
 *   uspace/lib/cht_rcu/src/rcu.c writer_barrier 5156a173ddc3
 *   uspace/lib/cht_rcu/src/rcu.c wait_for_reader d32f8ec5d290
 *   uspace/lib/cht_rcu/src/rcu.c cht_rcu_synchronize e1a170fcc0ea
 */

#define NSEC 2
#define NONE 2

byte ptr = 0;
bool freed[2];
bool wsb_full;          /* W1's store "ptr = 1" not yet visible */

byte seq = 1;           /* cht_rcu_gp.seq */
byte gp_completed;
bool gp_lock;

/* R */
byte ctr;               /* R's reader record: ctr, in memory */
byte sb_n;              /* entries in R's store buffer (ctr stores) */
byte sb_v0, sb_v1;      /* oldest, newest */
byte rpend = NONE;
bool r_done;
bool w1_done, w2_done;
byte wseq[3];           /* writer i's release store of seq, not yet visible */

/* seq starts at 1 with gp_completed 0: a GP is in progress when seq > 1 and
 * seq > gp_completed */
ltl gp_ends { [] ((seq > 1 && seq > gp_completed) -> <> (seq == gp_completed)) }

inline sb_push(v) {
	if
	:: sb_n == 0 -> sb_v0 = v
	:: else -> sb_v1 = v
	fi;
	sb_n++
}

/* writer_barrier(): a full barrier on every CPU running a thread of the
 * process: R's CPU and the caller's (its store of seq becomes visible). */
inline writer_barrier(me) {
#if !defined(BROKEN_NO_MEMBARRIER) && !defined(FENCE)
	atomic {
		rpend == NONE && wseq[me] == 0 ->
		if
		:: sb_n == 2 -> ctr = sb_v1
		:: sb_n == 1 -> ctr = sb_v0
		:: else
		fi;
		sb_n = 0;
		if
		:: wsb_full -> ptr = 1; wsb_full = 0
		:: else
		fi
	}
#else
	/* only the caller's own fence (the fence flavour, or broken): its
	 * store of seq is visible before its loads of the readers' ctr */
#ifndef BROKEN_WRITER_NO_FENCE
	atomic { (me != 1 || !wsb_full) && wseq[me] == 0 -> skip }
#else
	skip
#endif
#endif
}

/* me: 1 for W1 (whose store buffer holds the unlink), 2 for W2 */
inline synchronize(snap, target, me) {
#ifndef BROKEN_NO_SYNC_FENCE
	(me != 1 || !wsb_full);                 /* cht_rcu_full_fence() */
#endif
	snap = seq;
	atomic { !gp_lock -> gp_lock = 1 };
	if
#ifndef BROKEN_SHARED_GE
	:: gp_completed > snap ->
#else
	:: gp_completed >= snap ->
#endif
		atomic { wseq[me] == 0 -> gp_lock = 0 } /* a whole GP ran after snap */
	:: else ->
		target = seq + 1;
		wseq[me] = target;              /* release store (buffered) */
		writer_barrier(me);
#ifndef BROKEN_NO_WAIT
		(ctr == 0 || ctr >= target);    /* wait_for_reader(R, target) */
#endif
		atomic { wseq[me] == 0 -> gp_completed = target }  /* release */
		atomic { wseq[me] == 0 -> gp_lock = 0 }
	fi
}

active proctype R() {
	byte p, s, i;
	bool early;
	for (i : 1 .. NSEC) {
		/* cht_rcu_read_lock(), outermost: snapshot */
#ifdef BROKEN_SNAPSHOT_RELAXED
		/* a relaxed load of seq: the protected load may be performed
		 * before it */
		if
		:: p = ptr; early = 1
		:: skip
		fi;
#endif
		s = seq;                                /* acquire load */
		atomic { sb_n < 2 -> sb_push(s) };      /* release store of ctr */
#if defined(FENCE) && !defined(BROKEN_NO_READER_FENCE)
		sb_n == 0;      /* cht_rcu_reader_barrier(): cht_rcu_full_fence() */
#endif
		/* membarrier flavour: cht_rcu_reader_barrier() is a compiler
		 * barrier only */
		if
		:: !early -> p = ptr
		:: else
		fi;
		early = 0;
		atomic { rpend == NONE -> rpend = p };
		atomic { rpend == NONE -> rpend = p };  /* the object used again */
		/* cht_rcu_read_unlock(): release store ctr = 0 */
#ifndef BROKEN_UNLOCK_RELAXED
		atomic { sb_n < 2 && rpend == NONE -> sb_push(0) }
#else
		atomic { sb_n < 2 -> sb_push(0) }
#endif
	}
	r_done = 1
}

active proctype RSB() {
	do
	:: atomic { sb_n > 0 -> ctr = sb_v0; sb_v0 = sb_v1; sb_n-- }
	:: r_done && sb_n == 0 -> break
	od
}

active proctype LQ() {
	do
	:: atomic { rpend != NONE -> assert(!freed[rpend]); rpend = NONE }
	:: r_done && rpend == NONE -> break
	od
}

/* The writers' stores of seq become visible (W1's after its unlink: a
 * release store). */
active proctype WSQ() {
end:	do
	:: atomic { wseq[1] != 0 && !wsb_full -> seq = wseq[1]; wseq[1] = 0 }
	:: atomic { wseq[2] != 0 -> seq = wseq[2]; wseq[2] = 0 }
	od
}

active proctype WSB() {
end:	atomic { wsb_full -> ptr = 1; wsb_full = 0 }   /* or a membarrier drains it */
}

active proctype W1() {
	byte snap, target;
	wsb_full = 1;                           /* unlink A (store buffered) */
	synchronize(snap, target, 1);
	atomic { assert(!freed[0]); freed[0] = 1 };
	w1_done = 1
}

active proctype W2() {
	byte snap, target;
	synchronize(snap, target, 2);
	w2_done = 1
}

/* At the end gp_lock is free (either path of cht_rcu_synchronize()
 * releases it: a lock kept would block the next caller for good). */
active proctype END() {
	atomic { w1_done && w2_done -> assert(!gp_lock) }
}
