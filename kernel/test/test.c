/** @file test.c
 * The kernel test table and runner.
 */
#include <test.h>
#include <print.h>
#include <lib/str.h>
#include <cpu.h>


test_t tests[] = {
	{ "atomic1", "Atomic operations on integers and pointers", test_atomic1, true },
	{ "avl1", "AVL tree against a bitmap model: ascending and random inserts, "
	    "removes, ordered look-ups, balance", test_avl1, true },
	{ "print1", "printf formats against expected strings", test_print1, true },
	{ "falloc1", "Allocate and free all frames in several orders", test_falloc1,
	    true },
	{ "heap1", "malloc/free patterns from 1 B to 1 MiB", test_heap1, true },
	{ "slab1", "Slab caches: sizes, alignments, constructors, destroy, reclaim",
	    test_slab1, true },
	{ "slab2", "Slab objects allocated and freed on all CPUs, handed between CPUs",
	    test_slab2, true },
	{ "falloc2", "Concurrent frame allocation and free from all CPUs", test_falloc2,
	    true },
	{ "ipi1", "Every CPU receives and counts IPIs exactly", test_ipi1, true },
	{ "thread1", "Hundreds of threads created, run and joined on all CPUs",
	    test_thread1, true },
	{ "sched1", "CPU-bound threads do not starve others; wired threads stay put",
	    test_sched1, true },
	{ "waitq1", "Wait queue timeouts expire, wake-ups are not lost", test_waitq1,
	    true },
	{ "smpcall1", "SMP calls between all CPUs are run and counted exactly",
	    test_smpcall1, true },
	{ "semaphore1", "Producer/consumer through a bounded buffer: counts exact",
	    test_semaphore1, true },
	{ "semaphore2", "Semaphore of value K admits at most K; timeout, trydown",
	    test_semaphore2, true },
	{ "mutex1", "Counter under a mutex from all CPUs is exact; trylock, owner",
	    test_mutex1, true },
	{ "condvar1", "Condvar signal wakes one, broadcast all, no lost wake-up",
	    test_condvar1, true },
	{ "rwlock1", "Rwlock: writers exclusive, readers shared, writers not starved",
	    test_rwlock1, true },
	{ "workqueue", "Work queues: self-reproducing item waves, exact call counts, "
	    "premature stop", test_workqueue, true },
	{ "rcu1", "RCU: callbacks, preempted readers, synchronize, barrier, exit in "
	    "a reader, sequence, stress", test_rcu1, true },
	{ "rcutorture", "RCU torture: readers check object ages, poison, versions; "
	    "writer, callback flood", test_rcutorture, true },
	{ "rcuunlock1", "A-RCU: a reader switched out between the two steps of "
	    "rcu_read_unlock does not hold up grace periods", test_rcuunlock1,
	    true },
	{ "rcustall1", "RCU stall warning: a reader holding a grace period past "
	    "a lowered limit gets exactly one warning naming it", test_rcustall1,
	    true },
	{ "cht", "CHT: sanity sequence; per-thread keys with colliding hashes "
	    "checked exactly under concurrent updates and resize waves", test_cht,
	    true },
	{ "chtresize", "CHT: 2^16 items, lookups on every CPU never miss while the "
	    "table flips between 2^13 and 2^14 buckets", test_chtresize, true },
	{ "chtcount", "CHT: the item count never wraps under racing insert/remove; "
	    "a failed resize enqueue loses no request", test_chtcount, true },
	{ "mapping1", "Page hash table: insert, find, update, remove; contended "
	    "inserts; lookups during updates and resizes", test_mapping1, true },
	{ "as1", "Address space with areas entered by threads: thousands of pages "
	    "faulted in, verified, unmapped, resized, destroyed; no leak",
	    test_as1, true },
	{ "asid1", "TLB tags (arm64 ASIDs) from the kernel's counts: a reused "
	    "ASID reads no stale data, switches and unmaps flush nothing else, "
	    "rollover with more address spaces than ASIDs", test_asid1, true },
	{ "pagefault1", "Concurrent faults, unmaps, re-faults in shared and private "
	    "address spaces against a shadow; no stale translation after an unmap",
	    test_pagefault1, true },
	{ "rcusleep1", "Sleep inside an RCU reader: the debug assertion panics "
	    "(unsafe)", test_rcusleep1, false },
	{ "framedf1", "A frame freed twice through the per-CPU frame cache: the "
	    "cache's flush panics naming the double free, merged or not "
	    "(unsafe)", test_framedf1, false },
	{ "framewc1", "An interior frame of an allocated block freed as a single "
	    "frame: frame_free panics naming a wrong count (unsafe)",
	    test_framewc1, false },
	{ "mapping2", "Page hash table: concurrent updates of one page, updates "
	    "racing removes, lookups during updates: one record, none after a "
	    "remove, no torn mapping", test_mapping2, true },
	{ "asrace1", "Areas destroyed and shrunk while threads fault in them: no "
	    "record or frame outlives its area, re-created areas read zero",
	    test_asrace1, true },
	{ "ptprune1", "Page tables freed when their areas go, raced by faults in "
	    "the same and neighbouring areas: no wrong fault, counts balance",
	    test_ptprune1, true },
	{ "ptwalk1", "CPUs faulting in different 2 MiB regions of fresh address "
	    "spaces race to create the same page tables: none orphaned or leaked",
	    test_ptwalk1, true },
	{ "asrace1long", "asrace1 with 20x the cycles (make soak)",
	    test_asrace1long, false },
	{ "ptwalk1long", "ptwalk1 with 20x the rounds (make soak, the "
	    "BROKEN=ptwalk1 control)", test_ptwalk1long, false },
	{ "semaphore1long", "semaphore1 with 8x the items (make soak)",
	    test_semaphore1long, false },
	{ "semaphore2long", "semaphore2 with 8x the stress rounds (make soak)",
	    test_semaphore2long, false },
	{ "mutex1long", "mutex1 with 8x the increments (make soak)",
	    test_mutex1long, false },
	{ "backtrace1", "Symbol table not empty; the frame-pointer walk names its "
	    "caller and stops at records that leave the stack, loop or are "
	    "misaligned", test_backtrace1, true },
	{ "fault1", "Deliberate page fault: exception report and halt (unsafe)",
	    test_fault1, false },
	{ "dfstack1", "Deliberate double fault (user GS base, unmapped stack): "
	    "#DF on its IST stack, panic and halt (unsafe)", test_dfstack1, false },
	{ "kcsan1", "KCSAN control: two CPUs increment a plain int; the race "
	    "must be reported with both stacks (unsafe, KCSAN kernels)",
	    test_kcsan1, false },
	{ "kcsan2", "KCSAN control: two CPUs increment with atomics; no report "
	    "(unsafe, KCSAN kernels)", test_kcsan2, false },
	{ "useraccess1", "A kernel access to a user page outside uaccess: with "
	    "the user-access guard on (-cpu max) panics naming it (unsafe)",
	    test_useraccess1, false },
	{ "spindead1", "Spin watchdog: two CPUs take two locks in opposite "
	    "orders and deadlock: both report the cycle, a rescuer breaks it "
	    "(unsafe, debug, 3 CPUs)", test_spindead1, false },
	{ "spindead2", "Spin watchdog: a lock taken twice: reported as a cycle "
	    "of one CPU, a rescuer breaks it (unsafe, debug)", test_spindead2,
	    false },
	{ "spinslow1", "Spin watchdog: a lock held 8 s by a CPU that waits for "
	    "nothing: one long wait, no deadlock report (unsafe, debug)",
	    test_spinslow1, false },
	{ "lockdep1", "Lock validator: two locks taken in both orders by one "
	    "thread: reported with both chains, panic (unsafe)", test_lockdep1,
	    false },
	{ "lockdep2", "Lock validator: a lock taken with interrupts enabled, "
	    "then in a timer interrupt: reported, panic (unsafe)", test_lockdep2,
	    false },
	{ "lockdep3", "Lock validator: mutex_lock while holding a spinlock: "
	    "reported, panic (unsafe)", test_lockdep3, false },
	{ "lockdep4", "Lock validator: an interrupt-taken lock held while taking "
	    "a lock taken elsewhere with interrupts enabled: the chain reported, "
	    "panic (unsafe)", test_lockdep4, false },
	{ "lockdep5", "Lock validator: two mutexes taken in both orders by one "
	    "thread: reported with both chains, panic (unsafe)", test_lockdep5,
	    false },
	{ "lockdep6", "Lock validator: rcu_synchronize while holding a mutex an "
	    "RCU callback takes: reported, panic (unsafe)", test_lockdep6,
	    false },
	{ "lockdep7", "Lock validator: a rwlock and a mutex in both orders "
	    "(write, then read): reported with both chains, panic (unsafe)",
	    test_lockdep7, false },
	{ "lockdep8", "Lock validator: workq_stop while holding a mutex a work "
	    "item of the queue takes: reported, panic (unsafe)", test_lockdep8,
	    false },
	{ "lockdep9", "Lock validator: rcu_synchronize holding a mutex, then an "
	    "RCU callback takes it: reported, panic (unsafe)", test_lockdep9,
	    false },
#ifdef CONFIG_KASAN
	{ "kasan_rcu1", "KASAN control: a read after rcu_call freed the object: "
	    "slab-use-after-rcu-free (unsafe)", test_kasan_rcu1, false },
	{ "kasan_rcu2", "KASAN control: a pointer kept past its reader section, "
	    "read after the grace period: slab-use-after-rcu-free (unsafe)",
	    test_kasan_rcu2, false },
	{ "kasan_quar1", "KASAN control: 6144 RCU-callback frees overflow the "
	    "quarantine's ring, none released early, a read after the callback: "
	    "slab-use-after-rcu-free (unsafe)", test_kasan_quar1, false },
	{ "kasan_oob1", "KASAN control: a write past a slab object: "
	    "slab-out-of-bounds (unsafe)", test_kasan_oob1, false },
	{ "kasan_df1", "KASAN control: a slab object freed twice: double-free "
	    "(unsafe)", test_kasan_df1, false },
	{ "kasan_stack1", "KASAN control: a local of an exited thread read: "
	    "stack-use-after-thread-exit (unsafe)", test_kasan_stack1, false },
	{ "kasan_global1", "KASAN control: a read past a global array: "
	    "global-out-of-bounds (unsafe)", test_kasan_global1, false },
#endif
#ifdef CONFIG_UBSAN
	{ "ubsan_shift1", "UBSAN control: 1 << 40 on int: shift-out-of-bounds "
	    "(unsafe)", test_ubsan_shift1, false },
	{ "ubsan_ovf1", "UBSAN control: a signed counter overflows: "
	    "signed-integer-overflow (unsafe)", test_ubsan_ovf1, false },
#endif
	{ NULL, NULL, NULL, false }
};

unsigned test_online_cpus(unsigned *ids)
{
	unsigned n = 0;
	for (unsigned c = 0; c < cpu_count; c++) {
		if (cpu_is_online(c))
			ids[n++] = c;
	}
	return n;
}

const test_t *test_find(const char *name)
{
	for (test_t *t = tests; t->name; t++) {
		if (strcmp(t->name, name) == 0)
			return t;
	}
	return NULL;
}

bool test_run(const test_t *t)
{
	printf("== test %s: %s ==\n", t->name, t->desc);
	const char *reason = t->entry();
	if (reason) {
		printf("Test failed: %s\n", reason);
		return false;
	}
	printf("Test passed\n");
	return true;
}
