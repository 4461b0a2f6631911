/*
 * cht.pml -- the CHT (relativistic split-ordered list): insert, remove (mark,
 * then unlink) and a grow and a shrink racing lookups.
 *
 * Models common/include/adt/cht.h: cht__find_hashed() (the lookup's walk,
 * which cht_find_fast() calls with the key's hash, and libcht's batched
 * cht_find_many_fast() with a hash it computed for its prefetches; libcht's
 * CHT_ENV_LOOKUP_STOP_AT_NEXT_DUMMY, off in the kernel, is not a separate
 * path here: it returns NULL on reaching &b->d[i + 1], the next dummy of the
 * array the lookup started from, where the modelled lookup reads that
 * dummy's hash, (i + 1) << shift, written before the array was published and
 * never changed, and returns NULL because it is above the key's: the same
 * result in every interleaving, one load fewer),
 * cht__search() (the walk that unlinks marked nodes with a CAS on the
 * predecessor's next and restarts from its start when that CAS fails),
 * cht__insert() (non-unique: search strict, next = cur, release CAS on prev),
 * cht__remove_key() (search, mark each matching item with a CAS on its next,
 * then one CAS on the found link, else cht__cleanup()), cht__unlinked() /
 * cht__unlinked_item() (an item goes to rcu_call once: in the kernel
 * rcu_call_batched(), which keeps the grace period and drops only the
 * order, which the model does not use); and
 * common/adt/cht.c: cht__cleanup(), dummy_link(),
 * dummies_link() (new dummies linked after the old dummy of their range,
 * before the publish), buckets_replace() (link, publish h->b, a grace
 * period, retire), dummies_retire() (cht__mark_deleted() then a strict
 * search from the newest dummy before it, the old array handed to rcu_call),
 * cht__node_reclaim() / buckets_reclaim() (the frees).
 *
 * Hash space: 4 bits. Dummies are even (bucket i of order k: i << (4 - k)),
 * items odd. Nodes: 1 the head; array A (order 1: hashes 0, 8) 2-3; array B
 * (order 2: 0, 4, 8, 12) 4-7; array C (order 1) 8-9; items K1 (hash 1) 10,
 * K2 (hash 9) 11, KI (hash UH: 11, 7 or 13 by scenario) 12, KC (hash 9, key
 * 25) 13, KD (hash 9, key 9) 14. next[n] = pointer * 2 + CHT_LINK_DELETED.
 * An item's key is its hash but for KC (key[]); lookups and removes compare
 * the hash, then the key (key_equal()).
 *
 * Five scenarios (one file):
 *   default (cht_list): the table of array A holding K1 and K2; U removes
 *     the absent key 41 (hash 9, K2's: returns 0, unlinks nothing), then K2,
 *     I inserts KI (right after K2 in the list: the classic lost insert),
 *     L looks up K1, KI and K2; C the reclaimer.
 *   -DTWIN (cht_twin): as cht_list, and I, after its insert and in the
 *     same section, removes key 9 too: two cht_remove_key() of K2 race,
 *     their counts must sum to 1 (C asserts it at the end).
 *   -DCOLLIDE (cht_collide): as cht_list, with KC (hash 9, another key)
 *     and KD (K2's duplicate) linked: A1 -> KC -> K2 -> KD. U removes key
 *     9 (K2 and KD: removed 2, only_first false, so cht__cleanup()), L
 *     looks up KC (present throughout), KI and key 9.
 *   -DGROW (cht_grow): the table of array A holding K1; R grows it to B; U
 *     inserts KI with hash 7 (bucket 1 of B: its walks from B1 reach the old
 *     dummy A1, hash 8) then removes it; L looks up K1, then KI; C.
 *   -DSHRINK (cht_shrink): the table of array B holding K1; R shrinks it to
 *     C; U inserts KI with hash 13 (bucket 3 of B, whose range is empty, so
 *     its insert links right after dummy B3) then removes it; L looks up K1,
 *     then KI; C.
 * (Grow and shrink are separate runs: one process doing both made 4.4e7
 * states, 8 GB, 4 minutes; each alone is small enough for make test.)
 *
 * RCU is abstracted to its guarantee (the RCU models check that part): a
 * process is inside or outside a reader section (insec, its nesting depth:
 * a nested lock neither begins a new section nor a new generation, an unlock
 * ends the section only at depth 0; a generation per section);
 * synchronize() waits until every section active when it started has
 * ended (a reader that never unlocks blocks it for good); C takes the pending callbacks, waits for a grace
 * period, then runs them (frees). Memory ordering: the list's next pointers
 * are published by release CAS and read with acquire loads, and h->b with a
 * release store / relaxed loads ordered by the address dependency of the
 * array's reads (cht_env_rcu_access(); one step before them, as
 * the acquire was); the model is sequentially consistent (a
 * relaxed publish of h->b on a weakly ordered CPU allows exactly "a lookup
 * sees the new array before its dummies are linked": that is
 * BROKEN_PUBLISH_EARLY; a relaxed CAS in dummy_link() lets the new dummy's
 * next become visible after the dummy: BROKEN_DUMMY_RELAXED). The same
 * release in cht__insert() has no variant (the inserted item is last in
 * its range here, so a stale next would hide nothing).
 *
 * The list's end: the code ends it at a tail sentinel (cht_t.tail: hash
 * CHT_TAIL_HASH, above every item and dummy hash; never marked, never
 * unlinked; its next 0) and its walks stop there by their hash compare
 * (no NULL test); the model ends it at NIL and its walks stop at NIL. The
 * two are the same under the renaming NIL <-> &h->tail: a walk that stops
 * at NIL stops at the tail, an insert at the end links next = NIL (the
 * tail) with a CAS that expects NIL (the tail), a lookup that reaches NIL
 * returns NULL where the code reads the tail's hash, above the key's, and
 * returns NULL; nothing is ever marked, unlinked or inserted after either.
 *
 * After every free (the reclaimer's, and the variant that frees at once),
 * reach_check() walks the list from the head and from every bucket of the
 * published array: a freed node reachable from the table fails at once
 * (freed_reachable), not only when a later operation walks onto it.
 *
 * Abstracted away: collisions only in cht_collide (no unique insert), the item count and resize requests (the resizer runs one
 * grow or one shrink), RESIZE_BATCH (one section for all dummies), the work
 * queue, cht_find_next*, cht_remove_item, cht_destroy.
 *
 * Safety (assertions): lookups, inserts and removes run inside a reader
 * section (the C's cht_env_assert(cht_env_rcu_read_locked())), an unlock
 * pairs a lock, cht_remove_key() calls key_equal() only on items (an
 * unmarked node of its run has an odd hash), the scenario's initial list
 * is a split-ordered list (init_check()), no access to a freed node
 * (nodes_freed), a key present throughout a lookup is found
 * (present_missed), a key whose remove returned, or whose items were all
 * marked (the remove's linearization point), before a lookup began is not
 * found (removed_found), a remove of an absent key returns 0
 * (remove_missed), each search of dummies_retire() leaves its old dummy off
 * the list (retired_check()), every item's callback is queued once and runs once,
 * the removed item and the retired arrays are freed by the end. Liveness
 * (ltl all_done, pan -a -f): every process finishes, the reclaimer too, so
 * every callback runs and C's final checks are reached (no update retries
 * forever).
 *
 * Broken variants (spin -DBROKEN_xxx):
 *   BROKEN_NO_MARK        (cht_list) remove unlinks without marking first:
 *                         the insert right after it is lost
 *   BROKEN_ITEM_NO_GP     (cht_list) the unlinked item is freed at once
 *   BROKEN_PUBLISH_EARLY  (cht_grow) h->b published before its dummies are
 *                         linked: U's insert or L's lookup starts at an
 *                         unlinked dummy and misses
 *   BROKEN_DUMMY_RELAXED  (cht_grow) dummy_link()'s CAS without release: the
 *                         new dummy's next becomes visible after the dummy
 *   BROKEN_NO_SECOND_GP   (cht_grow) the old array freed right after its
 *                         dummies are unlinked
 *   BROKEN_REMOVE_NOT_FIRST (cht_collide) the one-CAS unlink without its
 *                         only_first test: KC, the first of the run, is
 *                         unlinked instead of K2
 *   BROKEN_REMOVE_ANY_KEY (cht_collide) the remove marks every equal hash,
 *                         without key_equal()
 *   BROKEN_REMOVE_MARKED  (cht_twin) the remove's mark without its !MARKED
 *                         test: the CAS that "marks" an item another remover
 *                         marked succeeds (the value is unchanged), so both
 *                         removers count K2 (the counts sum to 2)
 *   BROKEN_SEARCH_RETRY_PREV (cht_collide, cht_grow; liveness) after a
 *                         failed unlink CAS the walk goes on from prev instead
 *                         of the start: when prev is deleted its CAS fails
 *                         forever
 *   BROKEN_RETIRE_SKIP_HEAD (cht_grow, cht_shrink) dummies_retire() marks the
 *                         old array's dummy of hash 0 but skips its strict
 *                         search from the head: it is freed while the head
 *                         still links it (no lookup or update walks from
 *                         the head, so only the reachability check sees it)
 *   BROKEN_NO_FIRST_GP    (cht_shrink) no grace period between the publish
 *                         and the retire: an insert that started at the old
 *                         dummy B3 finds its position right after it and its
 *                         CAS on the marked next fails forever (liveness)
 *
 * Fingerprints (verify/fingerprint.py):
 *   common/adt/cht.c cht__node_reclaim 1a66a3f1f3e3
 *   common/adt/cht.c dummy_link 0a3461988bdb
 *   common/adt/cht.c dummies_link fdcb7e79fcec
 *   common/adt/cht.c buckets_reclaim 39ec03d64396
 *   common/adt/cht.c dummies_retire 681b80fa3f0d
 *   common/adt/cht.c buckets_replace 149f844c9841
 *   common/adt/cht.c cht__cleanup a8b4635bbe36
 *   common/include/adt/cht.h cht__find_hashed 2375539e50cd
 *   common/include/adt/cht.h cht__unlinked_item cc4b566ab15d
 *   common/include/adt/cht.h cht__unlinked 26032384dd82
 *   common/include/adt/cht.h cht__search 9eaa37e660ef
 *   common/include/adt/cht.h cht__mark_deleted e153fd535cb0
 *   common/include/adt/cht.h cht__insert 495557da0a2a
 *   common/include/adt/cht.h cht__remove_key d6083db6e988
 */

#define NIL   0
#define HEAD  1
#define K1    10
#define K2    11
#define KI    12
#define KC    13        /* cht_collide: hash 9 like K2, another key */
#define KD    14        /* cht_collide: hash 9, key 9: K2's duplicate */
#define NN    15
#define NOSEC 255
#if defined(GROW) || defined(SHRINK)
#define RESIZE
#endif
#if defined(SHRINK)
#define UH 13           /* KI's hash */
#elif defined(GROW)
#define UH 7
#else
#define UH 11
#endif

#define FIRST(b) ((b) == 0 -> 2 : ((b) == 1 -> 4 : 8))
#define ORDER(b) ((b) == 1 -> 2 : 1)
#define START(b, h) (FIRST(b) + ((h) >> (4 - ORDER(b))))
#define PTR(v) ((v) / 2)
#define MARKED(v) (((v) & 1) == 1)

byte next[NN];
byte hash[NN];
byte key[NN];           /* an item's key (its hash, but for KC) */
bool freed[NN];
bool called[NN];        /* rcu_call()ed (queued) once */
byte hb;                /* h->b: 0 = A, 1 = B, 2 = C */
int pend;               /* pending callbacks: bit n = node n, bit 16 + b = array b */

/* RCU: three reader processes, pid 0..2. insec[me] is the nesting depth:
 * rcu_read_lock() nests, only the outermost lock begins a section (a new
 * generation) and only the outermost unlock ends it, so a reader that
 * never unlocks keeps every later grace period waiting. */
byte insec[3];
byte gen[3];

bool done0, done1, done2;
bool doneC;             /* the reclaimer ended (ran every callback) */
/* cht_twin: what each of the two cht_remove_key(9) calls returned */
byte twin_removed[2];
/* bit n: node n is on the initial list (init_check()); constant after init */
int initmask;

#define CHECK(n) assert(!freed[n])

/* After every free: no freed node is reachable from the table (the list
 * from its head, and the bucket dummies of the published array h->b). */
inline reach_check(rn, rk, rb, freed_reachable) {
	d_step {
		freed_reachable = 0;
		rb = 0;
		do
		:: rb <= (hb == 1 -> 4 : 2) ->
			rn = (rb == 0 -> HEAD : FIRST(hb) + rb - 1);
			rk = 0;
			do
			:: rn != NIL && rk < NN ->
				freed_reachable = freed_reachable || freed[rn];
				rn = PTR(next[rn]); rk++
			:: else -> break
			od;
			rb++
		:: else -> break
		od;
		assert(!freed_reachable)
	}
}

inline rcu_lock(me) {
	atomic {
		if
		:: insec[me] == 0 -> gen[me]++
		:: else
		fi;
		insec[me]++
	}
}
inline rcu_unlock(me) { atomic { assert(insec[me] > 0); insec[me]-- } }

/* The initial table (the scenario's set-up) is a split-ordered list: from
 * the head, sorted by hash, no link marked, ending within NN nodes, and
 * every dummy of the published array h->b on it in order, so a walk from
 * the head and one from a bucket see the same nodes. */
inline init_check(rn, rk, rb) {
	d_step {
		rn = HEAD;
		rk = 0;
		rb = 0;
		do
		:: next[rn] != NIL ->
			assert(!MARKED(next[rn]) && rk < NN);
			assert(rn == HEAD || hash[PTR(next[rn])] >= hash[rn]);
			rn = PTR(next[rn]);
			rk++;
			initmask = initmask | (1 << rn);
			if
			:: rn == FIRST(hb) + rb -> rb++
			:: else
			fi
		:: else -> break
		od;
		assert(rb == (hb == 1 -> 4 : 2));
		rn = 0; rk = 0; rb = 0
	}
}

/* Waits for every reader section active when it started. */
inline synchronize(w0, w1, w2) {
	atomic {
		w0 = (insec[0] -> gen[0] : NOSEC);
		w1 = (insec[1] -> gen[1] : NOSEC);
		w2 = (insec[2] -> gen[2] : NOSEC)
	};
	(w0 == NOSEC || !insec[0] || gen[0] != w0) &&
	(w1 == NOSEC || !insec[1] || gen[1] != w1) &&
	(w2 == NOSEC || !insec[2] || gen[2] != w2)
}

/* cht__unlinked(): the CAS that unlinked n was ours */
inline unlinked(n) {
	if
	:: hash[n] & 1 ->
		assert(!called[n]);     /* one unlink, one callback */
		called[n] = 1;
#ifdef BROKEN_ITEM_NO_GP
		freed[n] = 1
#else
		pend = pend | (1 << n)
#endif
	:: else                         /* a dummy needs nothing */
	fi
}

/* cht__search(): prev = node whose next points to cur (the C walks two
 * nodes per round to move no register; the steps are these, one per node) */
inline search(start, h, strict, prev, cur, nx, ok) {
	do
	:: /* retry: */
		prev = start;
		atomic { CHECK(prev); cur = PTR(next[prev]) };
		ok = 1;
		do
		:: cur == NIL -> break
		:: else ->
			atomic { CHECK(cur); nx = next[cur] };
			if
			:: MARKED(nx) ->
				atomic {
					if
					:: next[prev] == cur * 2 ->
						next[prev] = PTR(nx) * 2;
						unlinked(cur)
					:: else -> ok = 0
					fi
				};
				if
				:: ok -> cur = PTR(nx)
#ifndef BROKEN_SEARCH_RETRY_PREV
				:: else -> break
#else
				/* continue from prev instead of the start */
				:: else -> ok = 1; atomic { CHECK(prev); cur = PTR(next[prev]) }
#endif
				fi
			:: else ->
				if
				:: (strict && hash[cur] > h) || (!strict && hash[cur] >= h) ->
					break
				:: else -> prev = cur; cur = PTR(nx)
				fi
			fi
		od;
		if
		:: ok -> break
		:: else
		fi
	od
}

/* cht_env_rcu_access(h->b) at the start of an operation, which runs inside
 * a reader section (the C asserts cht_env_rcu_read_locked()) */
inline access_b(me, b) {
	atomic { assert(insec[me] > 0); b = hb }
}

/* cht_find_fast() (its walk, cht__find_hashed()), inside the caller's
 * section (it asserts cht_env_rcu_read_locked()); res = the node or NIL */
inline lookup(me, h, k, res, b, nx, n) {
	access_b(me, b);
	atomic { CHECK(START(b, h)); nx = next[START(b, h)] };
	do
	:: n = PTR(nx);
		if
		:: n == NIL -> res = NIL; break
		:: else ->
			atomic { CHECK(n); nx = next[n] };
			if
			:: hash[n] >= h ->
				if
				:: hash[n] != h -> res = NIL; break
				:: hash[n] == h && !MARKED(nx) && key[n] == k -> res = n; break
				:: else
				fi
			:: else
			fi
		fi
	od
}

/* cht__insert(), non-unique, inside the caller's section (asserted) */
inline insert(me, item, h, b, start, prev, cur, nx, ok) {
	access_b(me, b);
	start = START(b, h);
	do
	:: search(start, h, true, prev, cur, nx, ok);
		next[item] = cur * 2;
		atomic {
			if
			:: next[prev] == cur * 2 -> next[prev] = item * 2; ok = 1
			:: else -> ok = 0
			fi
		};
		if
		:: ok -> break
		:: else
		fi
	od
}

/* The remove's load of a node of its run: an unmarked one must be an item
 * (odd hash), as key_equal() gets its link (a dummy has none) */
inline run_load(n, nx) {
	atomic { CHECK(n); nx = next[n]; assert(MARKED(nx) || (hash[n] & 1)) }
}

/* cht__remove_key(), inside the caller's section (asserted) */
inline remove(me, h, k, b, prev, cur, nx, ok, n, removed, only_first, t) {
	access_b(me, b);
	search(START(b, h), h, false, prev, cur, nx, ok);
	removed = 0;
	only_first = 1;
	n = cur;
	do
	:: n != NIL && hash[n] == h ->
		run_load(n, nx);
		if
#if defined(BROKEN_REMOVE_ANY_KEY)
		:: !MARKED(nx) ->
#elif defined(BROKEN_REMOVE_MARKED)
		:: key[n] == k ->       /* marks again an item already marked */
#else
		:: !MARKED(nx) && key[n] == k ->
#endif
#ifndef BROKEN_NO_MARK
			atomic {
				if
				:: next[n] == nx -> next[n] = nx | 1; ok = 1
				:: else -> ok = 0
				fi
			};
#else
			ok = 1;
#endif
			if
			:: ok ->
				removed++;
				only_first = only_first && (n == cur);
				n = PTR(nx)
			:: else                  /* re-examine n */
			fi
		:: else -> n = PTR(nx)
		fi
	:: else -> break
	od;
	if
	:: removed > 0 ->
		atomic { CHECK(cur); t = PTR(next[cur]) };
		atomic {
			if
#ifndef BROKEN_REMOVE_NOT_FIRST
			:: only_first && next[prev] == cur * 2 ->
#else
			:: next[prev] == cur * 2 ->
#endif
				next[prev] = t * 2; ok = 1
			:: else -> ok = 0
			fi
		};
		if
		:: ok -> unlinked(cur)
		:: else ->
			/* cht__cleanup() */
			b = hb;
			search(START(b, h), h, true, prev, cur, nx, ok)
		fi
	:: else
	fi
}

/* C: the RCU reclaimer (cht__node_reclaim(), buckets_reclaim()) */
/* At the end, the other direction: the list from the head holds, in hash
 * order, every dummy of the published array h->b with its hash (16 / size
 * apart) and every item still present: on the initial list or inserted
 * (KI), never unlinked. A lost tail or an unset dummy hash shows here. */
inline complete_check(rn, rk, rb, seen) {
	d_step {
		seen = 0;
		rn = HEAD;
		rk = 0;
		do
		:: rn != NIL ->
			assert(rk < NN);
			seen = seen | (1 << rn);
			assert(rn == HEAD || next[rn] == NIL ||
			    hash[PTR(next[rn])] >= hash[rn]);
			rn = PTR(next[rn]);
			rk++
		:: else -> break
		od;
		rb = 0;
		do
		:: rb < (hb == 1 -> 4 : 2) ->
			assert(seen & (1 << (FIRST(hb) + rb)));
			assert(hash[FIRST(hb) + rb] == rb * (hb == 1 -> 4 : 8));
			rb++
		:: else -> break
		od;
		rn = K1;
		do
		:: rn <= KD ->
			assert(called[rn] || !((initmask & (1 << rn)) || rn == KI) ||
			    (seen & (1 << rn)));
			rn++
		:: else -> break
		od
	}
}

active proctype C() {
	int take, seen;
	byte w0, w1, w2, i, rn, rk, rb;
	byte it;        /* ghost: iterations of the batch's walk below (it ends:
	                 * one per node slot, NN in all) */
	bool freed_reachable;
	do
	:: pend != 0 ->
		atomic { take = pend; pend = 0 };
		synchronize(w0, w1, w2);
		d_step {
			i = 0;
			do
			:: i < NN ->
				if
				:: take & (1 << i) -> assert(!freed[i]); freed[i] = 1
				:: else
				fi;
				i++
				; it++; assert(it <= NN)
			:: else -> break
			od;
			assert(it <= NN); it = 0;
			/* arrays: bit 16 + b */
			if
			:: take & (1 << 16) -> assert(!freed[2]); freed[2] = 1; freed[3] = 1
			:: else
			fi;
			if
			:: take & (1 << 17) ->
				assert(!freed[4]); freed[4] = 1; freed[5] = 1;
				freed[6] = 1; freed[7] = 1
			:: else
			fi
		};
		reach_check(rn, rk, rb, freed_reachable)
	:: pend == 0 && done0 && done1 && done2 -> break
	od;
	/* every callback ran: the removed item and the retired arrays */
#if defined(GROW)
	assert(called[KI] && freed[KI] && freed[2]);
#elif defined(SHRINK)
	assert(called[KI] && freed[KI] && freed[4]);
#elif defined(COLLIDE)
	assert(called[K2] && freed[K2] && called[KD] && freed[KD] && !called[KC]);
#elif defined(TWIN)
	/* K2 counted by exactly one of the two removers */
	assert(called[K2] && freed[K2] &&
	    twin_removed[0] + twin_removed[1] == 1);
#else
	assert(called[K2] && freed[K2]);
#endif
	complete_check(rn, rk, rb, seen);
	doneC = 1
}

/* every process finishes, the reclaimer too: every callback runs (its
 * assertions above are checked only when it gets there) */
ltl all_done { <> (done0 && done1 && done2 && doneC) }

init {
	byte rn, rk, rb;
	atomic {
		hash[2] = 0; hash[3] = 8;
		hash[4] = 0; hash[5] = 4; hash[6] = 8; hash[7] = 12;
		hash[8] = 0; hash[9] = 8;
		hash[K1] = 1; hash[K2] = 9; hash[KI] = UH; hash[KC] = 9;
		hash[KD] = 9;
		key[K1] = 1; key[K2] = 9; key[KI] = UH; key[KC] = 25; key[KD] = 9;
#ifndef SHRINK
		/* head -> A0 -> K1 -> A1 [-> K2] */
		next[HEAD] = 2 * 2;
		next[2] = K1 * 2;
		next[K1] = 3 * 2;
#if defined(COLLIDE)
		/* ... -> A1 -> KC -> K2 -> KD: equal hashes, KC (another key)
		 * first, K2 and its duplicate KD (both removed) after it */
		next[3] = KC * 2;
		next[KC] = K2 * 2;
		next[K2] = KD * 2;
#elif !defined(GROW)
		next[3] = K2 * 2;
#endif
		hb = 0;
#else
		/* head -> B0 -> K1 -> B1 -> B2 -> B3 */
		next[HEAD] = 4 * 2;
		next[4] = K1 * 2;
		next[K1] = 5 * 2;
		next[5] = 6 * 2;
		next[6] = 7 * 2;
		hb = 1;
#endif
		init_check(rn, rk, rb);
		run P0(); run P1(); run P2()
	}
}

#ifndef RESIZE

/* P0 = U: cht_remove_key(K2); in cht_list first a remove of an absent key
 * (hash 9, key 41: K2's hash, another key): it must return 0 and change
 * nothing (the unlink after the marks runs only when one was marked) */
proctype P0() {
	byte b, prev, cur, nx, n, removed, t;
	bool ok, only_first, remove_missed;
	rcu_lock(0);
#ifndef COLLIDE
	remove(0, 9, 41, b, prev, cur, nx, ok, n, removed, only_first, t);
	remove_missed = (removed != 0);
	assert(!remove_missed);
#endif
	remove(0, 9, 9, b, prev, cur, nx, ok, n, removed, only_first, t);
#ifdef COLLIDE
	remove_missed = (removed != 2);
#elif defined(TWIN)
	/* I may have removed K2: the sum is checked at the end */
	remove_missed = (removed > 1); twin_removed[0] = removed;
#else
	remove_missed = (removed != 1);
#endif
	assert(!remove_missed);
	rcu_unlock(0);
	done0 = 1
}

/* P1 = I: cht_insert(KI); in cht_twin then, in the same section, a second
 * cht_remove_key(9), racing U's: "concurrent removers of the same items
 * split them" (cht.h): the two counts sum to 1 (checked by C at the end) */
proctype P1() {
	byte b, start, prev, cur, nx;
	bool ok;
#ifdef TWIN
	byte n, removed, t;
	bool only_first;
#endif
	rcu_lock(1);
	insert(1, KI, 11, b, start, prev, cur, nx, ok);
#ifdef TWIN
	remove(1, 9, 9, b, prev, cur, nx, ok, n, removed, only_first, t);
	twin_removed[1] = removed;
#endif
	rcu_unlock(1);
	done1 = 1
}

/* P2 = L: lookups of K1 (always present), KI (present once its insert
 * returned), K2 (gone once its remove returned) */
proctype P2() {
	byte b, nx, n, res;
	bool present, present_missed, removed_found;
	rcu_lock(2);
#ifdef COLLIDE
	lookup(2, 9, 25, res, b, nx, n);   /* KC: hash 9, present throughout */
#else
	lookup(2, 1, 1, res, b, nx, n);
#endif
	present_missed = (res == NIL);
	assert(!present_missed);
	rcu_unlock(2);
	rcu_lock(2);
	present = done1;
	lookup(2, 11, 11, res, b, nx, n);
	present_missed = (res == NIL && present);
	assert(!present_missed);
	if :: res != NIL -> CHECK(res) :: else fi;
	rcu_unlock(2);
	rcu_lock(2);
	/* K2 removed: its remove returned, or (the remove's linearization
	 * point, the mark) every item of key 9 was marked before the lookup
	 * began: a lookup that returns a marked item fails here */
#ifdef COLLIDE
	present = done0 || (MARKED(next[K2]) && MARKED(next[KD]));
#else
	present = done0 || MARKED(next[K2]);
#endif
	lookup(2, 9, 9, res, b, nx, n);
	removed_found = (res != NIL && present);
	assert(!removed_found);
	if :: res != NIL -> CHECK(res) :: else fi;
	rcu_unlock(2);
	done2 = 1
}

#else

/* dummy_link() of every dummy of nb (first f, count cnt) after the dummy of
 * its range in the published array old */
inline dummies_link(old, f, cnt, i, d, prev, cur, nx, ok) {
	rcu_lock(0);
	i = 0;
	do
	:: i < cnt ->
		d = f + i;
		do
		:: search(START(old, hash[d]), hash[d], false, prev, cur, nx, ok);
#ifndef BROKEN_DUMMY_RELAXED
			next[d] = cur * 2;
			/* the release CAS: d's next is visible before d is */
			atomic {
				if
				:: next[prev] == cur * 2 -> next[prev] = d * 2; ok = 1
				:: else -> ok = 0
				fi
			};
#else
			/* a relaxed CAS: d's next may become visible after d */
			atomic {
				if
				:: next[prev] == cur * 2 -> next[prev] = d * 2; ok = 1
				:: else -> ok = 0
				fi
			};
			next[d] = cur * 2;
#endif
			if
			:: ok -> break
			:: else
			fi
		od;
		i++
	:: else -> break
	od;
	rcu_unlock(0)
}

/* dummies_retire()'s search "passes d (hash <= d->hash) and unlinks it on
 * its way": when it returns, d is off the list from the head (it cannot be
 * linked again: its next is marked). Reuses the search's outputs cur and nx
 * (unused after it) and clears them. */
inline retired_check(d, rn, rk) {
	d_step {
		rn = HEAD;
		rk = 0;
		do
		:: rn != NIL && rk < NN ->
			assert(rn != d);
			rn = PTR(next[rn]);
			rk++
		:: else -> break
		od;
		rn = 0;
		rk = 0
	}
}

/* dummies_retire(): mark each old dummy, unlink it by a strict search from
 * the newest dummy before it, hand the old array to rcu_call */
inline dummies_retire(old, nb, f, cnt, i, d, prev, cur, nx, ok) {
	rcu_lock(0);
	i = 0;
	do
	:: i < cnt ->
		d = f + i;
		/* cht__mark_deleted() */
		do
		:: atomic { nx = next[d] };
			if
			:: MARKED(nx) -> break
			:: else ->
				atomic {
					if
					:: next[d] == nx -> next[d] = nx | 1; ok = 1
					:: else -> ok = 0
					fi
				};
				if
				:: ok -> break
				:: else
				fi
			fi
		od;
		if
		:: hash[d] != 0 ->
			search(START(nb, hash[d] - 1), hash[d], true, prev, cur, nx, ok)
		:: else ->
#ifndef BROKEN_RETIRE_SKIP_HEAD
			search(HEAD, hash[d], true, prev, cur, nx, ok)
#else
			skip    /* the dummy of hash 0 stays linked */
#endif
		fi;
		retired_check(d, cur, nx);
		i++
	:: else -> break
	od;
	rcu_unlock(0);
#ifndef BROKEN_NO_SECOND_GP
	pend = pend | (1 << (16 + old))
#else
	atomic { i = 0; do :: i < cnt -> freed[f + i] = 1; i++ :: else -> break od };
	reach_check(i, d, cur, ok)
#endif
}

/* buckets_replace(): old array o (first fo, count co) -> new nb (fn, cn) */
inline buckets_replace(o, fo, co, nb, fn, cn) {
#ifdef BROKEN_PUBLISH_EARLY
	hb = nb;
#endif
	dummies_link(o, fn, cn, i, d, prev, cur, nx, ok);
	hb = nb;                        /* release store */
#ifndef BROKEN_NO_FIRST_GP
	synchronize(w0, w1, w2);
#endif
	dummies_retire(o, nb, fo, co, i, d, prev, cur, nx, ok)
}

/* P0 = R: the resizer, a grow (A -> B) or a shrink (B -> C) */
proctype P0() {
	byte i, d, prev, cur, nx, w0, w1, w2;
	bool ok;
#ifdef GROW
	buckets_replace(0, 2, 2, 1, 4, 4);
#else
	buckets_replace(1, 4, 4, 2, 8, 2);
#endif
	done0 = 1
}

/* P1 = U: cht_insert(KI), then cht_remove_key(KI) */
proctype P1() {
	byte b, start, prev, cur, nx, n, removed, t;
	bool ok, only_first, remove_missed;
	rcu_lock(1);
	insert(1, KI, UH, b, start, prev, cur, nx, ok);
	rcu_unlock(1);
	rcu_lock(1);
	remove(1, UH, UH, b, prev, cur, nx, ok, n, removed, only_first, t);
	remove_missed = (removed != 1);
	assert(!remove_missed);
	rcu_unlock(1);
	done1 = 1
}

/* P2 = L: K1 (always present), then KI (gone once U is done) */
proctype P2() {
	byte b, nx, n, res;
	bool present, present_missed, removed_found;
	rcu_lock(2);
	lookup(2, 1, 1, res, b, nx, n);
	present_missed = (res == NIL);
	assert(!present_missed);
	rcu_unlock(2);
	rcu_lock(2);
	/* KI removed: U is done, or KI was marked before the lookup began */
	present = done1 || MARKED(next[KI]);
	lookup(2, UH, UH, res, b, nx, n);
	removed_found = (res != NIL && present);
	assert(!removed_found);
	if :: res != NIL -> CHECK(res) :: else fi;
	rcu_unlock(2);
	done2 = 1
}

#endif
