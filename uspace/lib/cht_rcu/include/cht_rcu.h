/** @file cht_rcu.h
 * The userspace RCU of libcht (prefix cht_rcu_, so it links beside liburcu).
 *
 * Flavour: "memb" (as liburcu's urcu-memb): every thread that reads registers
 * once; a reader section stores a snapshot of the global grace-period
 * sequence into the thread's own counter and, on the fast path, costs no
 * atomic read-modify-write and no fence: a compiler barrier only. The
 * store-load ordering a reader needs (its counter store before its loads of
 * protected pointers) is supplied from the writer's side by
 * membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED), which runs a full barrier on
 * every CPU currently running a thread of this process. Where the kernel lacks
 * that command (checked once at start-up, or forced with the environment
 * variable CHT_RCU_FLAVOUR=fence), readers execute one full fence in the
 * outermost cht_rcu_read_lock() instead. cht_rcu_flavour() says which one runs.
 *
 * Grace periods: a 64-bit sequence that never wraps, so one pass over the
 * registered readers suffices (no two-phase parity flip as with a 1-bit
 * phase): cht_rcu_synchronize() issues the barrier, advances the sequence to
 * G and waits until every registered reader is either outside a section
 * (counter 0) or inside one that began after the advance (counter G).
 *
 * Callbacks: cht_rcu_call() pushes onto one lock-free list; a background
 * reclaimer thread takes the whole list, waits one grace period and runs the
 * callbacks in the order they were posted. cht_rcu_barrier() waits for every
 * callback posted before it.
 *
 * Threads: cht_rcu_register_thread() before the first reader section; a
 * thread that exits while registered is unregistered by a thread-specific-data
 * destructor. An unregistered thread gets CHT_EPERM from cht_rcu_read_lock()
 * (and is then NOT in a reader section). A signal handler of a registered
 * thread may enter reader sections, wherever it interrupts the thread (see
 * "Async-signal safety" below). The per-thread state uses the
 * initial-exec TLS model (fast inline readers); dlopen() of libcht.so works
 * while the static TLS surplus of the C library lasts (it needs 64 bytes).
 *
 * Not fork-safe: after fork() the child may only exec (as with most threaded
 * libraries).
 *
 * The OS build (CHT_OS_BUILD; the OS's uspace/lib/c, libcht for programs such
 * as uspace/app/chtuser) is the same design and code: the writers' barrier is
 * SYS_MEMBARRIER, which the OS always has (readers never fence), blocking is
 * on lib/c futexes (cht_rcu_plat.h), and the per-thread record lives in the
 * thread control block (no TLS register; see cht_rcu_self below). No signals
 * there, no environment variables, no constructors: start-up happens at the
 * first registration.
 */
#ifndef CHT_RCU_H_
#define CHT_RCU_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Status codes (shared with cht.h; identical definitions). */
#ifndef CHT_OK
#define CHT_OK        0
#endif
/** The calling thread is not registered with cht_rcu_register_thread(). */
#define CHT_EPERM    (-1)
#ifndef CHT_ENOMEM
#define CHT_ENOMEM   (-2)
#endif
#ifndef CHT_EINVAL
#define CHT_EINVAL   (-3)
#endif
#ifndef CHT_EBUSY
#define CHT_EBUSY    (-4)
#endif
/** No such item. */
#define CHT_ENOENT   (-5)
/** An equal item is already in the table. */
#define CHT_EEXIST   (-6)
/** Called inside a reader section where it would wait for itself. */
#define CHT_EDEADLK  (-7)
/** Needs the caller's reader section (the result lives only inside it). */
#define CHT_ENOSECT  (-8)
/** The destination buffer is too small (cht_map_get()). */
#define CHT_ERANGE   (-9)
/** Compare-and-replace: the value is not the expected one (cht_map_cas()). */
#define CHT_ESTALE   (-10)

/** Human-readable name of a status code. */
const char *cht_strerror(int err);

/** A callback record; embed in the object to reclaim. */
typedef struct cht_rcu_head {
	struct cht_rcu_head *next;
	void (*func)(struct cht_rcu_head *head);
} cht_rcu_head_t;

/*
 * Private state, in the header only for the inline reader fast path.
 */
struct cht_rcu_reader {
	/**
	 * 0 outside a reader section; else the GP sequence read at the start
	 * of the outermost section. Written by the owner (release stores),
	 * read by cht_rcu_synchronize() (acquire loads).
	 */
	uint64_t ctr;
	/**
	 * Nesting depth. Owner only (and its signal handlers: relaxed atomic
	 * accesses, ordered against ctr by signal fences).
	 */
	unsigned long nest;
	/**
	 * Stripe of the thread, handed out round robin at registration: the
	 * table's split item count (cht_t.cnt_slots) uses it to spread
	 * threads over its slots. Owner only.
	 */
	unsigned stripe;
	/** Registered (in the reader registry). Owner only. */
	int registered;
	/** This is the reclaimer thread (cht_rcu_barrier() refuses). Owner only. */
	int reclaimer;
	/** Registry list, under the registry lock. */
	struct cht_rcu_reader *reg_next, *reg_prev;
};

/** Global GP state read by readers; alone on its cache line. */
struct cht_rcu_gp_state {
	/** Current GP sequence: starts at 1, never 0, never wraps. */
	uint64_t seq;
	/** 1: readers execute a fence (no membarrier); 0: compiler barrier. */
	int reader_fence;
} __attribute__((aligned(64)));

#ifndef CHT_OS_BUILD
extern __thread struct cht_rcu_reader cht_rcu_self
    __attribute__((tls_model("initial-exec")));
#else
/*
 * The OS build (uspace/lib/c, no TLS register): the record lives in the
 * calling thread's control block, found from the stack pointer (lib/c
 * thread.h, "Thread pointer"); it is zero when the thread starts, as a TLS
 * variable is. The name stays the one the code below uses.
 */
#include <thread.h>
#define cht_rcu_self (*(struct cht_rcu_reader *) (void *) thread_tcb()->rcu)
_Static_assert(sizeof(struct cht_rcu_reader) <=
    sizeof(((struct thread_tcb *) 0)->rcu),
    "the RCU reader record must fit its slot in the thread control block");

#endif
extern struct cht_rcu_gp_state cht_rcu_gp;

/** Slow paths of the inline functions (out of line). */
int cht_rcu_read_lock_unregistered(void);
void cht_rcu_read_unlock_unbalanced(void);

/**
 * Registers the calling thread as an RCU reader. Idempotent.
 * @return CHT_OK, CHT_ENOMEM (the library could not start up).
 */
int cht_rcu_register_thread(void);
/**
 * Unregisters the calling thread (also done automatically at thread exit).
 * @return CHT_OK, CHT_EPERM (not registered), CHT_EDEADLK (inside a section).
 */
int cht_rcu_unregister_thread(void);
/** True if the calling thread is registered. */
static inline bool cht_rcu_registered(void)
{
	return cht_rcu_self.registered != 0;
}

/** A full memory barrier. */
static inline void cht_rcu_full_fence(void)
{
#if defined(__SANITIZE_THREAD__)
	/* TSan does not take fences; a seq_cst RMW is a full barrier too. */
	static __thread int dummy;
	__atomic_fetch_add(&dummy, 0, __ATOMIC_SEQ_CST);
#else
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
#endif
}

/** Per-thread ordering the flavour needs after the reader's counter store. */
static inline void cht_rcu_reader_barrier(void)
{
#ifdef CHT_OS_BUILD
	/* The OS always has SYS_MEMBARRIER: no flag to test (rcu.c). */
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
#else
	if (__builtin_expect(__atomic_load_n(&cht_rcu_gp.reader_fence,
	    __ATOMIC_RELAXED), 0))
		cht_rcu_full_fence();
	else
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
#endif
}

/*
 * Async-signal safety. A signal handler of a registered thread may enter and
 * leave reader sections (balanced), also when it interrupts the thread's own
 * cht_rcu_read_lock() or cht_rcu_read_unlock() at any instruction. The
 * handler's section is then protected, and so is the interrupted thread's
 * section once its cht_rcu_read_lock() has returned. What makes it so:
 *
 *  - A handler runs to completion on top of the interrupted code (balanced
 *    sections) and leaves nest as it found it. ctr it leaves as it found
 *    it, except in the two windows below: inside an outermost lock it
 *    leaves its own snapshot, inside an outermost unlock it leaves 0.
 *  - Lock: nest is raised BEFORE ctr is stored (signal fence between). A
 *    handler in between finds nest > 0 and ctr == 0; it stores a snapshot
 *    itself (and keeps it: its unlock only lowers nest), so its own section
 *    is protected. The interrupted outermost lock then stores its own,
 *    newer, snapshot: harmless, its section has not loaded anything yet.
 *  - Unlock: nest is lowered to 0 BEFORE ctr is cleared. A handler in
 *    between finds nest == 0, so it runs a complete outermost section of its
 *    own (snapshot, then ctr = 0); the section it interrupted had finished
 *    its loads (they are before the handler's release stores of ctr in
 *    program order). Clearing ctr first instead would let a handler in
 *    between find nest == 1 and ctr == 0 after its nested lock took no
 *    snapshot of its own (if it did, it would leave a stale one behind).
 *  - Storing ctr first and nest last on lock (as this code once did) lets
 *    a handler in between find nest == 0, run an outermost section and
 *    clear ctr: the interrupted section then runs without a snapshot.
 *
 * Only reader sections are allowed in handlers: cht_rcu_register_thread(),
 * cht_rcu_synchronize(), cht_rcu_call(), cht_rcu_barrier() and the table's
 * operations that may allocate, free or take locks are not async-signal-safe;
 * lookups (cht_find*) inside a handler's own reader section are.
 */

/** Relaxed access to a field of the calling thread's reader record. */
#define CHT_RCU_SELF_LOAD(f)     __atomic_load_n(&cht_rcu_self.f, __ATOMIC_RELAXED)
#define CHT_RCU_SELF_STORE(f, v) __atomic_store_n(&cht_rcu_self.f, (v), __ATOMIC_RELAXED)

/** Stores a snapshot of the GP sequence into ctr, then the flavour's barrier. */
/* Model: verify/urcu.pml */
static inline void cht_rcu_read_snapshot(void)
{
	/*
	 * Acquire load of the sequence: a section that reads a new value sees
	 * the removals ordered before its advance. Release store: earlier
	 * sections' accesses are ordered before it (what ThreadSanitizer needs
	 * to see; both are plain moves on x86-64). The store-load order
	 * against the protected loads that follow comes from the barrier,
	 * paired with the writer's membarrier (or fence).
	 */
	__atomic_store_n(&cht_rcu_self.ctr,
	    __atomic_load_n(&cht_rcu_gp.seq, __ATOMIC_ACQUIRE), __ATOMIC_RELEASE);
	cht_rcu_reader_barrier();
}

/**
 * Enters a reader section (nestable; allowed in signal handlers, see above).
 * No atomic RMW, no fence (membarrier flavour). @return CHT_OK, or CHT_EPERM
 * if the thread is not registered (then it is not in a section and must not
 * call cht_rcu_read_unlock()).
 */
/* Model: verify/urcu.pml */
static inline int cht_rcu_read_lock(void)
{
	/*
	 * cht_rcu_self is named directly, not through a pointer: one TLS
	 * offset per access and nothing for UBSan's null check to misread.
	 */
	unsigned long n = CHT_RCU_SELF_LOAD(nest);
	if (n == 0 && __builtin_expect(!cht_rcu_self.registered, 0))
		return cht_rcu_read_lock_unregistered();
	/* nest first: a handler from here on sees a section (see above). */
	CHT_RCU_SELF_STORE(nest, n + 1);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	/*
	 * Outermost: take a snapshot. Nested: only if the section being nested
	 * in has none yet (this is a handler that interrupted an outermost
	 * lock between its two stores).
	 */
	if (n == 0 || __builtin_expect(CHT_RCU_SELF_LOAD(ctr) == 0, 0))
		cht_rcu_read_snapshot();
	return CHT_OK;
}

/** Leaves a reader section. A release store, no fence. */
/* Model: verify/urcu.pml */
static inline void cht_rcu_read_unlock(void)
{
	unsigned long n = CHT_RCU_SELF_LOAD(nest);
	if (__builtin_expect(n == 0, 0)) {
		cht_rcu_read_unlock_unbalanced();
		return;
	}
	CHT_RCU_SELF_STORE(nest, n - 1);
	if (n == 1) {
		/* ctr last: a handler from here on sees no section (see above). */
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		/* Release: the section's loads are ordered before it. */
		__atomic_store_n(&cht_rcu_self.ctr, 0, __ATOMIC_RELEASE);
	}
}

/** True inside a reader section of the calling thread. */
static inline bool cht_rcu_read_locked(void)
{
	return CHT_RCU_SELF_LOAD(nest) != 0;
}

/** Publishes @a v in @a *p (release). */
#define cht_rcu_assign(p, v)  __atomic_store_n(&(p), (v), __ATOMIC_RELEASE)
/**
 * Reads a published pointer once, inside a reader section: a relaxed atomic
 * load ordered by the address dependency (Linux's rcu_dereference(); GCC
 * turns memory_order_consume into acquire, an LDAR on arm64). Loads through
 * the result are ordered after it by the hardware on both CPUs we build for
 * (x86-64 keeps loads in order, AArch64 orders an address-dependent load).
 * The caller keeps the dependency: it dereferences the returned pointer (or
 * an address computed from it), never another pointer it compared equal to
 * it (the compiler may substitute that one); a load that does not depend on
 * the pointer needs its own acquire. The kernel's rcu_access() (synch/rcu.h)
 * states the same rules. Under ThreadSanitizer an acquire load: TSan knows
 * happens-before through acquire and release only, not through a dependency,
 * and would report every dereference of the object as a race with its
 * initialization.
 */
#if defined(__SANITIZE_THREAD__)
#define cht_rcu_access(p)     __atomic_load_n(&(p), __ATOMIC_ACQUIRE)
#else
#define cht_rcu_access(p)     __atomic_load_n(&(p), __ATOMIC_RELAXED)
#endif

/**
 * Waits for a grace period: every reader section that had begun when the
 * call started has ended. May be called by unregistered threads.
 * @return CHT_OK, CHT_EDEADLK (inside a reader section: would never return).
 */
int cht_rcu_synchronize(void);

/**
 * Calls @a func(@a head) after a grace period, from the reclaimer thread.
 * Never blocks; may be called from any thread, inside a reader section too.
 */
void cht_rcu_call(cht_rcu_head_t *head, void (*func)(cht_rcu_head_t *head));

/**
 * Waits until every callback posted (by any thread) before the call has run.
 * @return CHT_OK, CHT_EDEADLK (inside a reader section, or from a callback).
 */
int cht_rcu_barrier(void);

/** "membarrier" or "fence": how readers get their ordering. */
const char *cht_rcu_flavour(void);

/** Statistics. */
typedef struct {
	uint64_t gp_seq;          /**< current GP sequence */
	uint64_t gps;             /**< grace periods completed */
	uint64_t gps_shared;      /**< synchronize calls served by another's GP */
	uint64_t callbacks_run;   /**< callbacks invoked */
	uint64_t batches;         /**< callback batches (one GP each) */
	size_t readers;           /**< registered threads */
} cht_rcu_stats_t;
void cht_rcu_get_stats(cht_rcu_stats_t *st);

#ifdef __cplusplus
}
#endif

#endif
