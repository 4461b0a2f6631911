/** @file test_map.c
 * The managed map (cht_map.h): every call's results and errors on one
 * thread, then threads that put, append, compare-and-replace, add, delete
 * and read concurrently, with the invariants checked at the end (no lost
 * append, no lost add, values never torn, every item freed: the sanitizer
 * builds check the frees and the races). Threads never register themselves:
 * the map registers them on first use.
 *
 *   test_map [SECONDS]     (default 1.5, scaled by TEST_SCALE)
 */
#include "tutil.h"
#include <cht.h>
/*
 * libcht's internal interface, for the inline backend's growth statistics
 * (cht__map_u64_split_stats(); reachable because the tests link the static
 * archive or the objects; the tests' objects only have lib/cht/src in their
 * quoted include path, uspace/Makefile).
 */
#include "cht_map_int.h"
#include <dirent.h>
#include <sched.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>

#define NTHREADS 4
#define NKEYS 512

static void test_bytes_single(void)
{
	cht_map_t *m;
	CHECK_EQ(cht_map_create(NULL, 0), CHT_EINVAL);
	CHECK_EQ(cht_map_create(&m, 0), CHT_OK);
	char buf[64];
	size_t len = 0;

	CHECK_EQ(cht_map_get(m, "a", 1, buf, sizeof(buf), &len), CHT_ENOENT);
	CHECK_EQ(cht_map_put(m, "a", 1, "one", 3), CHT_OK);
	CHECK_EQ(cht_map_get(m, "a", 1, buf, sizeof(buf), &len), CHT_OK);
	CHECK(len == 3 && memcmp(buf, "one", 3) == 0, "get a: %zu", len);
	CHECK_EQ(cht_map_put(m, "a", 1, "uno", 3), CHT_OK);
	CHECK_EQ(cht_map_get(m, "a", 1, buf, sizeof(buf), &len), CHT_OK);
	CHECK(len == 3 && memcmp(buf, "uno", 3) == 0, "put replaces");
	CHECK_EQ(cht_map_insert(m, "a", 1, "x", 1), CHT_EEXIST);
	CHECK_EQ(cht_map_insert(m, "b", 1, "bee", 3), CHT_OK);
	/* Too small a buffer: truncated copy and the full length. */
	CHECK_EQ(cht_map_get(m, "b", 1, buf, 2, &len), CHT_ERANGE);
	CHECK(len == 3 && memcmp(buf, "be", 2) == 0, "ERANGE copy");
	/* Compare-and-replace. */
	CHECK_EQ(cht_map_cas(m, "b", 1, "bay", 3, "new", 3), CHT_ESTALE);
	CHECK_EQ(cht_map_cas(m, "b", 1, "be", 2, "new", 3), CHT_ESTALE);
	CHECK_EQ(cht_map_cas(m, "b", 1, "bee", 3, "new", 3), CHT_OK);
	CHECK_EQ(cht_map_cas(m, "zz", 2, "bee", 3, "new", 3), CHT_ENOENT);
	CHECK_EQ(cht_map_get(m, "b", 1, buf, sizeof(buf), &len), CHT_OK);
	CHECK(len == 3 && memcmp(buf, "new", 3) == 0, "cas result");
	/* Append, creating and extending. */
	CHECK_EQ(cht_map_append(m, "log", 3, "ab", 2), CHT_OK);
	CHECK_EQ(cht_map_append(m, "log", 3, "cde", 3), CHT_OK);
	CHECK_EQ(cht_map_get(m, "log", 3, buf, sizeof(buf), &len), CHT_OK);
	CHECK(len == 5 && memcmp(buf, "abcde", 5) == 0, "append");
	/* Empty key and empty value. */
	CHECK_EQ(cht_map_put(m, NULL, 0, NULL, 0), CHT_OK);
	CHECK_EQ(cht_map_get(m, "", 0, buf, 0, &len), CHT_OK);
	CHECK_EQ(len, 0);
	/* A large value (past the size classes) and a long key. */
	size_t big = 100000;
	char *v = malloc(big), *out = malloc(big);
	char key[300];
	for (size_t i = 0; i < big; i++)
		v[i] = (char) (i * 7);
	memset(key, 'k', sizeof(key));
	CHECK_EQ(cht_map_put(m, key, sizeof(key), v, big), CHT_OK);
	CHECK_EQ(cht_map_get(m, key, sizeof(key), out, big, &len), CHT_OK);
	CHECK(len == big && memcmp(v, out, big) == 0, "big value");
	key[299] = 'x';  /* same length, last byte differs */
	CHECK_EQ(cht_map_get(m, key, sizeof(key), out, big, &len), CHT_ENOENT);
	free(v);
	free(out);
	/* In-place reads need a guard. */
	const void *ref;
	CHECK_EQ(cht_map_get_ref(m, "a", 1, &ref, &len), CHT_ENOSECT);
	CHECK_EQ(cht_map_read_lock(), CHT_OK);
	CHECK_EQ(cht_map_get_ref(m, "a", 1, &ref, &len), CHT_OK);
	CHECK(len == 3 && memcmp(ref, "uno", 3) == 0, "get_ref");
	/* A put inside the guard makes a new block; the old stays readable. */
	CHECK_EQ(cht_map_put(m, "a", 1, "eins", 4), CHT_OK);
	CHECK(memcmp(ref, "uno", 3) == 0, "old block changed under the guard");
	CHECK_EQ(cht_map_destroy(m), CHT_EDEADLK);
	cht_map_read_unlock();
	/* Bad arguments. */
	CHECK_EQ(cht_map_put(NULL, "a", 1, "x", 1), CHT_EINVAL);
	CHECK_EQ(cht_map_put(m, NULL, 1, "x", 1), CHT_EINVAL);
	CHECK_EQ(cht_map_put(m, "a", 1, NULL, 1), CHT_EINVAL);
	CHECK_EQ(cht_map_put(m, "a", CHT_MAP_KEY_MAX + 1, "x", 1), CHT_EINVAL);
	CHECK_EQ(cht_map_get(m, "a", 1, NULL, 5, &len), CHT_EINVAL);
	/* Delete and the stats. */
	cht_map_stats_t st;
	CHECK_EQ(cht_map_stats(m, &st), CHT_OK);
	CHECK_EQ(st.items, 5);
	CHECK(st.item_bytes >= 5 * 64 && st.bucket_bytes > 0 &&
	    st.bytes_per_key > 0, "stats %zu %zu", st.item_bytes, st.bucket_bytes);
	CHECK_EQ(cht_map_delete(m, "a", 1), CHT_OK);
	CHECK_EQ(cht_map_delete(m, "a", 1), CHT_ENOENT);
	CHECK_EQ(cht_map_get(m, "a", 1, buf, sizeof(buf), &len), CHT_ENOENT);
	CHECK_EQ(cht_map_destroy(m), CHT_OK);
	CHECK_EQ(cht_map_destroy(NULL), CHT_EINVAL);
}

static void test_u64_single(unsigned flags)
{
	cht_map_u64_t *m;
	CHECK_EQ(cht_map_u64_create_opts(&m, 1000, flags), CHT_OK);
	uint64_t v = 0;
	CHECK_EQ(cht_map_u64_get(m, 5, &v), CHT_ENOENT);
	CHECK_EQ(cht_map_u64_put(m, 5, 50), CHT_OK);
	CHECK_EQ(cht_map_u64_get(m, 5, &v), CHT_OK);
	CHECK_EQ(v, 50);
	CHECK_EQ(cht_map_u64_put(m, 5, 51), CHT_OK);
	CHECK_EQ(cht_map_u64_get(m, 5, &v), CHT_OK);
	CHECK_EQ(v, 51);
	CHECK_EQ(cht_map_u64_insert(m, 5, 1), CHT_EEXIST);
	CHECK_EQ(cht_map_u64_insert(m, 0, 7), CHT_OK);      /* key 0 is a key */
	CHECK_EQ(cht_map_u64_insert(m, ~0ull, 8), CHT_OK);  /* and so is ~0 */
	uint64_t e = 1;
	CHECK_EQ(cht_map_u64_cas(m, 5, &e, 99), CHT_ESTALE);
	CHECK_EQ(e, 51);
	CHECK_EQ(cht_map_u64_cas(m, 5, &e, 99), CHT_OK);
	CHECK_EQ(cht_map_u64_cas(m, 6, &e, 99), CHT_ENOENT);
	uint64_t after;
	CHECK_EQ(cht_map_u64_add(m, 9, 3, &after), CHT_OK);
	CHECK_EQ(after, 3);
	CHECK_EQ(cht_map_u64_add(m, 9, 4, &after), CHT_OK);
	CHECK_EQ(after, 7);
	for (uint64_t k = 100; k < 1100; k++)
		CHECK_EQ(cht_map_u64_put(m, k, k * 3), CHT_OK);
	uint64_t keys[2000], vals[2000];
	unsigned char found[2000];
	for (unsigned i = 0; i < 2000; i++)
		keys[i] = 100 + (i * 7919) % 2000;  /* half present */
	long hits = cht_map_u64_get_many(m, keys, 2000, vals, found);
	long want = 0;
	for (unsigned i = 0; i < 2000; i++) {
		uint64_t one = 0;
		int rc = cht_map_u64_get(m, keys[i], &one);
		CHECK_EQ(found[i], rc == CHT_OK);
		if (rc == CHT_OK) {
			want++;
			CHECK_EQ(vals[i], one);
		}
	}
	CHECK_EQ(hits, want);
	CHECK_EQ(want, 1000);
	CHECK_EQ(cht_map_u64_get_many(m, keys, 0, NULL, NULL), 0);
	CHECK_EQ(cht_map_u64_get_many(m, NULL, 3, vals, NULL), CHT_EINVAL);
	cht_map_stats_t st;
	CHECK_EQ(cht_map_u64_stats(m, &st), CHT_OK);
	CHECK_EQ(st.items, 1004);
	CHECK_EQ(cht_map_u64_grow_at(NULL), 0);
	CHECK_EQ(cht_map_grow_at(NULL), 0);
	if (flags & CHT_MAP_U64_CHAINED) {
		/* The grow point: load 1/2 times the buckets (after a resize
		 * settled: 1004 keys fit). */
		CHECK_EQ(cht_map_u64_grow_at(m) * 2, st.buckets);
		CHECK(cht_map_u64_grow_at(m) >= 1004 || st.resizing,
		    "grow point %zu below the keys", cht_map_u64_grow_at(m));
		CHECK_EQ(st.item_bytes, 1004 * 64);
		CHECK(st.bytes_per_key >= 64 && st.bytes_per_key < 64 + 64,
		    "bytes per key %.1f", st.bytes_per_key);
	} else {
		/* 64 bytes per bucket at 2.75 keys per bucket, overflow lines. */
		CHECK(st.bytes_per_key >= 16 && st.bytes_per_key < 48,
		    "bytes per key %.1f", st.bytes_per_key);
		CHECK_EQ(st.resizing, 0);
		CHECK_EQ(cht_map_u64_grow_at(m), 0);  /* splits: no grow point */
	}
	CHECK_EQ(cht_map_u64_create_opts(NULL, 0, 0), CHT_EINVAL);
	cht_map_u64_t *bad = NULL;
	CHECK_EQ(cht_map_u64_create_opts(&bad, 0, 2), CHT_EINVAL);
	CHECK(bad == NULL, "unknown flags created a map");
	CHECK_EQ(cht_map_u64_delete(m, 5), CHT_OK);
	CHECK_EQ(cht_map_u64_delete(m, 5), CHT_ENOENT);
	CHECK_EQ(cht_map_u64_destroy(m), CHT_OK);
}

/*
 * A thread whose last write fills its retire batch exactly (the batch goes to
 * the RCU) and then exits: the exit destructor must not touch that batch
 * again. Before the fix the destructor freed it a second time (ASan:
 * "attempting double-free" or a heap-use-after-free in the callback; plain:
 * a crash in 1 of about 5 runs of the concurrent test).
 */
static void *exact_batch_thread(void *arg)
{
	cht_map_t *m = arg;
	uint64_t v = 0;
	CHECK_EQ(cht_map_put(m, "eb", 2, &v, sizeof(v)), CHT_OK);  /* insert */
	for (v = 1; v <= CHT_MAP_RETIRE_BATCH; v++)                /* 64 retires */
		CHECK_EQ(cht_map_put(m, "eb", 2, &v, sizeof(v)), CHT_OK);
	return NULL;
}

static void test_exit_after_full_batch(void)
{
	cht_map_t *m;
	CHECK_EQ(cht_map_create(&m, 0), CHT_OK);
	for (int i = 0; i < 3; i++) {
		pthread_t t;
		tu_spawn(&t, exact_batch_thread, m);
		pthread_join(t, NULL);
		CHECK_EQ(cht_rcu_barrier(), CHT_OK);
		CHECK_EQ(cht_map_delete(m, "eb", 2), CHT_OK);
	}
	CHECK_EQ(cht_map_destroy(m), CHT_OK);
}

/* cht_find_many() and cht_find_many_fast() on the intrusive API: the same
 * answers as cht_find(). */
typedef struct {
	cht_link_t link;
	uint64_t key;
} fm_item_t;

CHT_DEFINE_U64_KEY(fm, fm_item_t, link, key, cht_u64_identity)

static void fm_free(cht_link_t *l)
{
	free(cht_item_of(l, fm_item_t, link));
}

static const cht_ops_t fm_ops = { CHT_U64_KEY_OPS(fm), .remove_callback = fm_free };

static void test_find_many(void)
{
	cht_t h;
	CHECK_EQ(cht_rcu_register_thread(), CHT_OK);
	CHECK_EQ(cht_create(&h, 64, 1, 0, &fm_ops), CHT_OK);
	enum { N = 3000, Q = 5000 };
	cht_rcu_read_lock();
	for (uint64_t k = 0; k < N; k++) {
		fm_item_t *it = malloc(sizeof(*it));
		it->key = k * 3;
		cht_insert(&h, &it->link);
	}
	static uint64_t qk[Q];
	static void *qp[Q];
	static cht_link_t *out[Q], *out_fast[Q];
	for (unsigned i = 0; i < Q; i++) {
		qk[i] = (uint64_t) ((i * 7919u) % (3 * N));  /* a third present */
		qp[i] = &qk[i];
	}
	/* Every length around the pipeline's depth, and the whole batch. */
	size_t lens[] = { 0, 1, 7, 8, 9, 16, 17, 18, Q };
	for (unsigned l = 0; l < sizeof(lens) / sizeof(lens[0]); l++) {
		size_t want = 0;
		size_t got = cht_find_many(&h, qp, lens[l], out);
		size_t got_fast = cht_find_many_fast(&h, qp, lens[l], out_fast,
		    &fm_ops);
		for (size_t i = 0; i < lens[l]; i++) {
			cht_link_t *one = cht_find(&h, qp[i]);
			CHECK(out[i] == one, "find_many[%zu] of %zu", i, lens[l]);
			CHECK(out_fast[i] == one, "find_many_fast[%zu] of %zu", i,
			    lens[l]);
			want += one != NULL;
		}
		CHECK_EQ(got, want);
		CHECK_EQ(got_fast, want);
	}
	for (uint64_t k = 0; k < N; k++) {
		uint64_t key = k * 3;
		CHECK_EQ(cht_remove_key(&h, &key), 1);
	}
	cht_rcu_read_unlock();
	CHECK_EQ(cht_rcu_barrier(), CHT_OK);
	CHECK_EQ(cht_destroy(&h), CHT_OK);
}

/*
 * cht_find_many() and cht_find_many_fast() (every other batch) beside a
 * writer: the keys 3k (k < FM_STABLE) stay in the
 * table, the keys 3k + 1 are inserted and removed in waves of FM_WAVE, so the
 * table grows and shrinks (its bucket arrays replaced) and items are
 * unlinked and freed after grace periods while the batches prefetch and
 * read their first and second nodes; the keys 3k + 2 are never inserted.
 * Every batch must find every stable key (its own item), no absent key, and
 * a churned key only as its own item. ASan's build sees a read of a freed
 * node, TSan's a race.
 */
enum { FM_STABLE = 2000, FM_WAVE = 20000, FM_BATCH = 64 };
static int fm_stop;

static void *fm_writer(void *arg)
{
	cht_t *h = arg;
	CHECK_EQ(cht_rcu_register_thread(), CHT_OK);
	while (!__atomic_load_n(&fm_stop, __ATOMIC_RELAXED)) {
		for (uint64_t k = 0; k < FM_WAVE; k++) {
			fm_item_t *it = malloc(sizeof(*it));
			it->key = 3 * k + 1;
			cht_rcu_read_lock();
			cht_insert(h, &it->link);
			cht_rcu_read_unlock();
		}
		for (uint64_t k = 0; k < FM_WAVE; k++) {
			uint64_t key = 3 * k + 1;
			cht_rcu_read_lock();
			CHECK_EQ(cht_remove_key(h, &key), 1);
			cht_rcu_read_unlock();
		}
	}
	CHECK_EQ(cht_rcu_unregister_thread(), CHT_OK);
	return NULL;
}

static void test_find_many_concurrent(double secs)
{
	cht_t h;
	CHECK_EQ(cht_rcu_register_thread(), CHT_OK);
	CHECK_EQ(cht_create(&h, 1, 1, 0, &fm_ops), CHT_OK);
	for (uint64_t k = 0; k < FM_STABLE; k++) {
		fm_item_t *it = malloc(sizeof(*it));
		it->key = 3 * k;
		cht_rcu_read_lock();
		cht_insert(&h, &it->link);
		cht_rcu_read_unlock();
	}
	pthread_t w;
	__atomic_store_n(&fm_stop, 0, __ATOMIC_RELAXED);
	tu_spawn(&w, fm_writer, &h);
	uint64_t s = 12345, qk[FM_BATCH], t_end = tu_now_ns() +
	    (uint64_t) (secs * 1e9);
	void *qp[FM_BATCH];
	cht_link_t *out[FM_BATCH];
	long batches = 0, bad = 0;
	size_t max_buckets = 0;
	for (int i = 0; i < FM_BATCH; i++)
		qp[i] = &qk[i];
	while (tu_now_ns() < t_end) {
		size_t want = 0;
		for (int i = 0; i < FM_BATCH; i++) {
			uint64_t r = tu_rand(&s);
			qk[i] = 3 * (r % FM_WAVE) + (r >> 60) % 3;
			want += qk[i] % 3 == 0 && qk[i] < 3 * FM_STABLE;
		}
		cht_rcu_read_lock();
		size_t got = batches % 2 ? cht_find_many(&h, qp, FM_BATCH, out) :
		    cht_find_many_fast(&h, qp, FM_BATCH, out, &fm_ops);
		size_t stable = 0;
		for (int i = 0; i < FM_BATCH; i++) {
			bool must = qk[i] % 3 == 0 && qk[i] < 3 * FM_STABLE;
			bool may = must || qk[i] % 3 == 1;
			uint64_t k = out[i] ? cht_item_of(out[i], fm_item_t,
			    link)->key : UINT64_MAX;
			if ((must && k != qk[i]) || (!may && out[i]) ||
			    (out[i] && k != qk[i]))
				bad++;
			stable += must && k == qk[i];
		}
		cht_stats_t st;
		cht_get_stats(&h, &st);
		cht_rcu_read_unlock();
		max_buckets = st.buckets > max_buckets ? st.buckets : max_buckets;
		if (got < want || stable != want)
			bad++;
		batches++;
	}
	__atomic_store_n(&fm_stop, 1, __ATOMIC_RELAXED);
	pthread_join(w, NULL);
	printf("test_map: find_many beside a writer: %ld batches of %d, "
	    "%ld wrong, up to %zu buckets\n", batches, FM_BATCH, bad,
	    max_buckets);
	CHECK_EQ(bad, 0);
	CHECK(batches > 0 && max_buckets >= 8192, "%ld batches, %zu buckets",
	    batches, max_buckets);
	for (uint64_t k = 0; k < FM_STABLE; k++) {
		uint64_t key = 3 * k;
		cht_rcu_read_lock();
		CHECK_EQ(cht_remove_key(&h, &key), 1);
		cht_rcu_read_unlock();
	}
	CHECK_EQ(cht_rcu_barrier(), CHT_OK);
	CHECK_EQ(cht_destroy(&h), CHT_OK);
}

/* --- concurrent ------------------------------------------------------------------ */

typedef struct {
	cht_map_t *m;
	cht_map_u64_t *u;
	int id;
	double secs;
	uint64_t appends[NKEYS];  /* bytes this thread appended per key */
	uint64_t adds[NKEYS];
	long gets;
} worker_t;

static int stop;

/*
 * Values written by put/cas are 16 bytes of one repeated byte: a reader that
 * sees two different bytes in one value saw a torn value.
 */
static void *worker(void *arg)
{
	worker_t *w = arg;
	uint64_t seed = 0x1234567 + (uint64_t) w->id * 7777;
	char key[16], val[16], buf[32];
	size_t len;
	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
		uint64_t r = tu_rand(&seed);
		unsigned k = (unsigned) (r % NKEYS);
		unsigned op = (unsigned) ((r >> 32) % 100);
		int kl = snprintf(key, sizeof(key), "k%u", k);
		if (op < 40) {
			int rc = cht_map_get(w->m, key, (size_t) kl, buf,
			    sizeof(buf), &len);
			CHECK(rc == CHT_OK || rc == CHT_ENOENT, "get %d", rc);
			if (rc == CHT_OK)
				for (size_t i = 1; i < len; i++)
					CHECK(buf[i] == buf[0], "torn value");
			w->gets++;
		} else if (op < 55) {
			memset(val, 'a' + (int) (r % 26), sizeof(val));
			CHECK_EQ(cht_map_put(w->m, key, (size_t) kl, val,
			    sizeof(val)), CHT_OK);
		} else if (op < 65) {
			char cur[32];
			int rc = cht_map_get(w->m, key, (size_t) kl, cur,
			    sizeof(cur), &len);
			memset(val, 'A' + (int) (r % 26), sizeof(val));
			if (rc == CHT_OK) {
				rc = cht_map_cas(w->m, key, (size_t) kl, cur, len,
				    val, sizeof(val));
				CHECK(rc == CHT_OK || rc == CHT_ESTALE ||
				    rc == CHT_ENOENT, "cas %d", rc);
			}
		} else if (op < 75) {
			int rc = cht_map_delete(w->m, key, (size_t) kl);
			CHECK(rc == CHT_OK || rc == CHT_ENOENT, "delete %d", rc);
		} else if (op < 85) {
			/* Appends go to keys of their own range, never deleted. */
			kl = snprintf(key, sizeof(key), "log%u", k);
			CHECK_EQ(cht_map_append(w->m, key, (size_t) kl, "xyz", 3),
			    CHT_OK);
			w->appends[k] += 3;
		} else if (op < 95) {
			CHECK_EQ(cht_map_u64_add(w->u, k, 1, NULL), CHT_OK);
			w->adds[k]++;
		} else {
			uint64_t v;
			int rc = cht_map_u64_get(w->u, k, &v);
			CHECK(rc == CHT_OK || rc == CHT_ENOENT, "u64 get %d", rc);
		}
	}
	return NULL;
}

static void test_concurrent(double secs)
{
	cht_map_t *m;
	cht_map_u64_t *u;
	CHECK_EQ(cht_map_create(&m, 0), CHT_OK);
	CHECK_EQ(cht_map_u64_create(&u, 0), CHT_OK);
	static worker_t w[NTHREADS];
	pthread_t t[NTHREADS];
	for (int i = 0; i < NTHREADS; i++) {
		w[i] = (worker_t) { .m = m, .u = u, .id = i, .secs = secs };
		tu_spawn(&t[i], worker, &w[i]);
	}
	tu_sleep_ms((unsigned) (secs * 1000));
	__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
	long gets = 0;
	for (int i = 0; i < NTHREADS; i++) {
		pthread_join(t[i], NULL);
		gets += w[i].gets;
	}
	CHECK(gets > 0, "no gets ran");
	/* No append and no add lost. */
	char key[16];
	static char buf[1 << 20];
	size_t len;
	for (unsigned k = 0; k < NKEYS; k++) {
		uint64_t ap = 0, ad = 0;
		for (int i = 0; i < NTHREADS; i++) {
			ap += w[i].appends[k];
			ad += w[i].adds[k];
		}
		int kl = snprintf(key, sizeof(key), "log%u", k);
		int rc = cht_map_get(m, key, (size_t) kl, buf, sizeof(buf), &len);
		if (ap) {
			CHECK(rc == CHT_OK && len == ap,
			    "log%u: %zu bytes, %llu appended", k, len,
			    (unsigned long long) ap);
			for (size_t i = 0; rc == CHT_OK && i + 3 <= len; i += 3)
				if (memcmp(buf + i, "xyz", 3) != 0) {
					CHECK(0, "log%u: garbled at %zu", k, i);
					break;
				}
		} else {
			CHECK_EQ(rc, CHT_ENOENT);
		}
		uint64_t v = 0;
		rc = cht_map_u64_get(u, k, &v);
		if (ad)
			CHECK(rc == CHT_OK && v == ad, "u64 %u: %llu, %llu added",
			    k, (unsigned long long) v, (unsigned long long) ad);
	}
	cht_map_stats_t st;
	CHECK_EQ(cht_map_stats(m, &st), CHT_OK);
	printf("test_map: %ld gets; byte map %zu items, %zu item bytes, "
	    "%zu reserved, %.0f bytes/key\n", gets, st.items, st.item_bytes,
	    st.reserved_bytes, st.bytes_per_key);
	CHECK_EQ(cht_map_destroy(m), CHT_OK);
	CHECK_EQ(cht_map_u64_destroy(u), CHT_OK);
}

/*
 * Memory back to its baseline: after destroying every map and a grace
 * period for the batches, the allocator's in-use count returns to what it
 * was before (the frees all happened). Checked through a fresh map's stats
 * (item_bytes of a cht_map_t is the allocator's count).
 */
static void test_memory_baseline(void)
{
	cht_map_t *m;
	cht_map_stats_t st0, st1;
	CHECK_EQ(cht_map_create(&m, 0), CHT_OK);
	cht_rcu_barrier();
	CHECK_EQ(cht_map_stats(m, &st0), CHT_OK);
	char key[16], val[200];
	memset(val, 'v', sizeof(val));
	for (int round = 0; round < 3; round++) {
		for (int i = 0; i < 5000; i++) {
			int kl = snprintf(key, sizeof(key), "m%d", i);
			CHECK_EQ(cht_map_put(m, key, (size_t) kl, val,
			    (size_t) (i % 200)), CHT_OK);
			CHECK_EQ(cht_map_append(m, key, (size_t) kl, "q", 1),
			    CHT_OK);
		}
		for (int i = 0; i < 5000; i++) {
			int kl = snprintf(key, sizeof(key), "m%d", i);
			CHECK_EQ(cht_map_delete(m, key, (size_t) kl), CHT_OK);
		}
	}
	/* Flush this thread's retire batch: a put to a key of its own. */
	for (int i = 0; i < 2 * CHT_MAP_RETIRE_BATCH; i++)
		CHECK_EQ(cht_map_put(m, "flush", 5, "x", 1), CHT_OK);
	CHECK_EQ(cht_map_delete(m, "flush", 5), CHT_OK);
	cht_rcu_barrier();
	CHECK_EQ(cht_map_stats(m, &st1), CHT_OK);
	/* The batch that is still open holds at most RETIRE_BATCH blocks. */
	CHECK(st1.item_bytes <= st0.item_bytes + CHT_MAP_RETIRE_BATCH * 64,
	    "in use %zu after, %zu before", st1.item_bytes, st0.item_bytes);
	CHECK_EQ(st1.items, 0);
	CHECK_EQ(cht_map_destroy(m), CHT_OK);
}

/** Reserved bytes of the allocator now (every map's; read through @a m). */
static size_t reserved_of(cht_map_u64_t *m)
{
	cht_map_stats_t st;
	CHECK_EQ(cht_map_u64_stats(m, &st), CHT_OK);
	return st.reserved_bytes;
}

/**
 * The end of a test of @a m whose keys were all deleted: no item and no
 * overflow line left (every line went back), @a m destroyed, and the
 * allocator's reservation back within 256 KiB of @a base, its value before
 * the test (read through a new map). @a what names the test in failures.
 */
static void check_emptied(cht_map_u64_t *m, size_t base, const char *what)
{
	cht_map_stats_t st;
	CHECK_EQ(cht_map_u64_stats(m, &st), CHT_OK);
	CHECK(st.items == 0, "%s: %zu items left", what, st.items);
	CHECK(st.item_bytes == 0, "%s: %zu overflow bytes left", what,
	    st.item_bytes);
	CHECK_EQ(cht_map_u64_destroy(m), CHT_OK);
	cht_map_u64_t *probe;
	CHECK_EQ(cht_map_u64_create(&probe, 0), CHT_OK);
	size_t end = reserved_of(probe);
	CHECK(end <= base + ((size_t) 256 << 10), "%s: %zu reserved after "
	    "destroy, %zu at the start", what, end, base);
	CHECK_EQ(cht_map_u64_destroy(probe), CHT_OK);
}

#define RET_KEYS 100000

typedef struct {
	cht_map_u64_t *m;
	uint64_t first;
} ret_arg_t;

static void *ret_insert_thread(void *arg)
{
	ret_arg_t *a = arg;
	for (uint64_t i = a->first; i < a->first + RET_KEYS / 2; i++)
		CHECK_EQ(cht_map_u64_insert(a->m, i, i), CHT_OK);
	return NULL;  /* the thread's cache goes to the depot at its exit */
}

/*
 * What test_memory_returned() allows above its baseline once the frees
 * stopped: the idle decay gives the depot's whole free slabs back
 * (RECLAIM_DECAY_MS in cht_alloc.c), so only slabs that caches and the
 * deleting thread's unposted retire batch pin stay, 64 KiB each (0 to 2 of
 * them in the plain and ASan builds, up to 4 under ThreadSanitizer).
 */
#define IDLE_SLACK ((size_t) 512 << 10)
/*
 * The test waits (at most 5 s) for half of IDLE_SLACK, so that the figure it
 * checks is the settled one, not the first one below the bound (the decay
 * may run more than once while a slow build's frees trickle in).
 */
/*
 * A burst of frees below the reclaim gate (RECLAIM_MIN of cht_alloc.c, 1
 * MiB): 12288 items of 64 bytes, 768 KiB, which no free asks a reclaim for.
 */
#define BURST_KEYS 12288

/*
 * The reserved bytes once they are at most @limit, or after @max_ms
 * milliseconds by the clock (each look waits for the RCU callbacks, which
 * under ThreadSanitizer takes far longer than the 10 ms pause). The reclaim
 * runs on the RCU reclaimer thread after the frees, rate-limited to a tenth
 * of its time: on a loaded host (the sanitizer builds, other tests beside
 * this one) it lags the frees by seconds, and a one-second wait failed there
 * (TSan 3 of 3 runs at load 20). The bound only stops a test whose memory
 * never comes back, or, for the waits for half of IDLE_SLACK, one whose
 * settled figure lies above that half; the check after it decides.
 */
static size_t wait_reserved_below(cht_map_u64_t *probe, size_t limit,
    unsigned max_ms)
{
	struct timespec t0, t;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	size_t now = 0;
	for (;;) {
		cht_rcu_barrier();
		now = reserved_of(probe);
		clock_gettime(CLOCK_MONOTONIC, &t);
		if (now <= limit || (t.tv_sec - t0.tv_sec) * 1000 +
		    (t.tv_nsec - t0.tv_nsec) / 1000000 >= max_ms)
			break;
		usleep(10000);
	}
	return now;
}

/*
 * The allocator gives its slabs back: after many keys are deleted the
 * reserved bytes fall to within IDLE_SLACK of the baseline (the depot kept up
 * to 1 MiB of free slabs below its reclaim gate until the idle decay: one
 * run had 1,179,648 bytes reserved against a bound of 1,310,720), and so
 * they do after a burst of frees too small to ask for a reclaim
 * (BURST_KEYS), which only the idle decay gives back; after the maps are
 * destroyed they are at the baseline (before: slabs were kept forever, 6.5
 * MB stayed reserved).
 */
static void test_memory_returned(void)
{
	cht_map_u64_t *probe, *m;
	CHECK_EQ(cht_map_u64_create_opts(&probe, 0, CHT_MAP_U64_CHAINED),
	    CHT_OK);
	cht_rcu_barrier();
	size_t base = reserved_of(probe);
	/* The chained layout: one 64-byte item per key, in slabs. */
	CHECK_EQ(cht_map_u64_create_opts(&m, 0, CHT_MAP_U64_CHAINED), CHT_OK);
	pthread_t th[2];
	ret_arg_t args[2];
	for (int t = 0; t < 2; t++) {
		args[t] = (ret_arg_t) { m, (uint64_t) t * (RET_KEYS / 2) };
		CHECK_EQ(pthread_create(&th[t], NULL, ret_insert_thread, &args[t]),
		    0);
	}
	for (int t = 0; t < 2; t++)
		pthread_join(th[t], NULL);
	/* Keep every 64th key: the rest's slabs must go. */
	for (uint64_t i = 0; i < RET_KEYS; i++)
		if (i % 64)
			CHECK_EQ(cht_map_u64_delete(m, i), CHT_OK);
	cht_rcu_barrier();
	size_t full = (size_t) RET_KEYS * 64;
	size_t mid = reserved_of(probe);
	/* A kept key pins its slab (1023 objects): keys 64 apart pin every one. */
	for (uint64_t i = 0; i < RET_KEYS; i += 64)
		CHECK_EQ(cht_map_u64_delete(m, i), CHT_OK);
	/*
	 * Deleting every key leaves the map in place: a free asks for a
	 * background reclaim only while the depot holds 1 MiB, and the idle
	 * decay returns the whole free slabs below that once the frees stopped
	 * (uspace/lib/cht/src/cht_alloc.c).
	 */
	size_t deleted = wait_reserved_below(probe, base + IDLE_SLACK / 2, 5000);
	/*
	 * The burst: in, out, and back near the baseline; by the idle decay
	 * (printed), or by a background reclaim when what the depot kept from
	 * the deletes and the burst reached the gate together.
	 */
	uint64_t d0 = cht__ma_decay_reclaims();
	for (uint64_t i = 0; i < BURST_KEYS; i++)
		CHECK_EQ(cht_map_u64_insert(m, i, i), CHT_OK);
	cht_rcu_barrier();
	size_t burst = reserved_of(probe);
	for (uint64_t i = 0; i < BURST_KEYS; i++)
		CHECK_EQ(cht_map_u64_delete(m, i), CHT_OK);
	size_t burst_end = wait_reserved_below(probe, base + IDLE_SLACK / 2,
	    5000);
	uint64_t decays = cht__ma_decay_reclaims() - d0;
	/* And a byte map with values of several classes. */
	cht_map_t *b;
	CHECK_EQ(cht_map_create(&b, 0), CHT_OK);
	char key[16], val[600];
	memset(val, 'r', sizeof(val));
	for (int i = 0; i < 20000; i++) {
		int kl = snprintf(key, sizeof(key), "r%d", i);
		CHECK_EQ(cht_map_put(b, key, (size_t) kl, val,
		    (size_t) (i * 7) % sizeof(val)), CHT_OK);
	}
	for (int i = 0; i < 20000; i++) {
		int kl = snprintf(key, sizeof(key), "r%d", i);
		CHECK_EQ(cht_map_delete(b, key, (size_t) kl), CHT_OK);
	}
	CHECK_EQ(cht_map_destroy(b), CHT_OK);
	CHECK_EQ(cht_map_u64_destroy(m), CHT_OK);
	size_t end = wait_reserved_below(probe, base + ((size_t) 256 << 10),
	    30000);
	printf("test_map: reserved %zu bytes at the start, %zu with %d keys of "
	    "%d (all pinned), %zu after deleting them all (%zu when full); %zu "
	    "with a burst of %d keys, %zu after deleting them (%llu idle-decay "
	    "reclaims); %zu after destroying the maps\n", base, mid,
	    RET_KEYS / 64, RET_KEYS, deleted, full, burst, BURST_KEYS, burst_end,
	    (unsigned long long) decays, end);
	CHECK(mid >= base + full / 2, "every slab is pinned: %zu, %zu at the "
	    "start", mid, base);
	CHECK(deleted <= base + IDLE_SLACK, "%zu reserved after the deletes, "
	    "%zu at the start", deleted, base);
	CHECK(burst >= base + (size_t) BURST_KEYS * 64 / 2, "the burst "
	    "reserved %zu, %zu at the start", burst, base);
	CHECK(burst_end <= base + IDLE_SLACK, "%zu reserved after the burst's "
	    "deletes (%llu idle-decay reclaims), %zu at the start", burst_end,
	    (unsigned long long) decays, base);
	CHECK(end <= base + ((size_t) 256 << 10), "%zu reserved after destroy, "
	    "%zu at the start", end, base);
	CHECK_EQ(cht_map_u64_destroy(probe), CHT_OK);
}

/* --- the inline layout ------------------------------------------------------------ */

/*
 * One thread: growth from the smallest table by splits (every key found
 * after every insert of a round, at every split point), the bytes per key
 * it reports, and the overflow lines gone and the allocator back to its
 * reserved bytes after the deletes and the destroy.
 */
static void test_inline_growth(void)
{
	cht_map_u64_t *m;
	CHECK_EQ(cht_map_u64_create(&m, 0), CHT_OK);
	cht_rcu_barrier();
	size_t base = reserved_of(m);
	const uint64_t n = 50000;
	uint64_t v;
	for (uint64_t k = 0; k < n; k++) {
		/* Keys 2^20 apart: only the hash spreads them. */
		CHECK_EQ(cht_map_u64_insert(m, k << 20, k), CHT_OK);
		if ((k & (k - 1)) == 0 || k % 8191 == 0)
			for (uint64_t j = 0; j <= k; j++) {
				int rc = cht_map_u64_get(m, j << 20, &v);
				CHECK(rc == CHT_OK && v == j, "key %llu after "
				    "%llu inserts: %d, %llu",
				    (unsigned long long) j,
				    (unsigned long long) k + 1, rc,
				    (unsigned long long) v);
			}
	}
	cht_map_stats_t st;
	CHECK_EQ(cht_map_u64_stats(m, &st), CHT_OK);
	printf("test_map: inline, %zu keys: %zu buckets, %zu bucket bytes, "
	    "%zu overflow bytes, %.1f bytes per key\n", st.items, st.buckets,
	    st.bucket_bytes, st.item_bytes, st.bytes_per_key);
	CHECK_EQ(st.items, n);
	/*
	 * The growth bound: every split counted, and no insert ran more than
	 * one (the splits owed are paid one per insert; before, the insert
	 * that checked the load ran all of them, about 16 / 2.75).
	 */
	uint64_t splits, max_op;
	CHECK_EQ(cht__map_u64_split_stats(m, &splits, &max_op), CHT_OK);
	printf("test_map: inline, %llu splits, at most %llu in one insert\n",
	    (unsigned long long) splits, (unsigned long long) max_op);
	CHECK_EQ(splits, st.buckets - 64);
	CHECK_EQ(max_op, 1);
	/*
	 * 2.75 keys per bucket at most, 2.75/2 at least, plus the overflow.
	 * The load may exceed 2.75 by the keys of the last check interval
	 * (IM_CHECK = 16) and the splits still owed (at most 16 / 2.75 + 1):
	 * 32 keys.
	 */
	CHECK(st.buckets * 11 >= (n - 32) * 4 && st.buckets * 11 <= n * 8 + 64,
	    "%zu buckets for %llu keys", st.buckets, (unsigned long long) n);
	CHECK(st.bytes_per_key > 20 && st.bytes_per_key < 40,
	    "%.1f bytes per key", st.bytes_per_key);
	CHECK(st.item_bytes > 0, "no overflow line at 2.75 keys per bucket");
	for (uint64_t k = n; k < n + 1000; k++)
		CHECK_EQ(cht_map_u64_get(m, k << 20, &v), CHT_ENOENT);
	for (uint64_t k = 0; k < n; k++)
		CHECK_EQ(cht_map_u64_delete(m, k << 20), CHT_OK);
	check_emptied(m, base, "inline growth");
}

/*
 * A growing inline map asks for no background reclaim: its splits retire
 * overflow lines that its own inserts take back from the depot, so no slab
 * ever empties, and a reclaim (every free asked for one before) only took
 * the inserting thread's CPU: 3,659 of them in a 1e7-key growth, the
 * growing map's largest insert latencies (bench/userspace/growprof.c).
 * With 600,000 keys the depot never holds the 1 MiB a background reclaim
 * needs (about one retire batch of lines, 256 KiB, passes through it at a
 * time): 0 reclaims, where every free asking for one gave 25.
 */
static void test_inline_growth_no_reclaim(void)
{
	cht_map_u64_t *m;
	CHECK_EQ(cht_map_u64_create(&m, 0), CHT_OK);
	const uint64_t n = 600000;
	cht_rcu_barrier();
	uint64_t r0 = cht__ma_bg_reclaims();
	for (uint64_t k = 0; k < n; k++)
		CHECK_EQ(cht_map_u64_insert(m, k, k), CHT_OK);
	/* The retired lines' frees run on the reclaimer: wait for them. */
	cht_rcu_barrier();
	usleep(20000);
	cht_rcu_barrier();
	uint64_t r1 = cht__ma_bg_reclaims();
	uint64_t splits, max_op;
	CHECK_EQ(cht__map_u64_split_stats(m, &splits, &max_op), CHT_OK);
	printf("test_map: inline growth to %llu keys: %llu splits, %llu "
	    "background reclaims\n", (unsigned long long) n,
	    (unsigned long long) splits, (unsigned long long) (r1 - r0));
	CHECK(splits > 200000, "%llu splits", (unsigned long long) splits);
	CHECK_EQ(r1 - r0, 0);
	CHECK_EQ(cht_map_u64_destroy(m), CHT_OK);
}

/*
 * cht_map_u64_reserve() on one thread: the buckets for the keys asked at
 * once, no split for the inserts after it, every key found, a smaller
 * reserve a no-op, and the errors.
 */
static void test_inline_reserve(void)
{
	cht_map_u64_t *m, *c;
	cht_map_stats_t st;
	uint64_t v, splits0, splits1, max_op;
	CHECK_EQ(cht_map_u64_create(&m, 0), CHT_OK);
	for (uint64_t k = 0; k < 1000; k++)
		CHECK_EQ(cht_map_u64_insert(m, k << 20, k), CHT_OK);
	CHECK_EQ(cht__map_u64_split_stats(m, &splits0, &max_op), CHT_OK);
	CHECK_EQ(cht_map_u64_reserve(m, 100000), CHT_OK);
	CHECK_EQ(cht_map_u64_stats(m, &st), CHT_OK);
	/* ceil(100000 * 4 / 11) buckets: 36364. */
	CHECK_EQ(st.buckets, 36364);
	CHECK_EQ(st.items, 1000);
	for (uint64_t k = 0; k < 1000; k++)
		CHECK(cht_map_u64_get(m, k << 20, &v) == CHT_OK && v == k,
		    "key %llu after the reserve", (unsigned long long) k);
	CHECK_EQ(cht__map_u64_split_stats(m, &splits1, &max_op), CHT_OK);
	CHECK_EQ(splits1, st.buckets - 64);
	for (uint64_t k = 1000; k < 99000; k++)
		CHECK_EQ(cht_map_u64_insert(m, k << 20, k), CHT_OK);
	CHECK_EQ(cht__map_u64_split_stats(m, &splits0, &max_op), CHT_OK);
	CHECK_EQ(splits0, splits1);  /* the inserts owed no split */
	CHECK_EQ(cht_map_u64_reserve(m, 5000), CHT_OK);  /* never shrinks */
	CHECK_EQ(cht_map_u64_stats(m, &st), CHT_OK);
	CHECK_EQ(st.buckets, 36364);
	CHECK_EQ(cht_map_u64_reserve(NULL, 5), CHT_EINVAL);
	CHECK_EQ(cht_map_u64_create_opts(&c, 0, CHT_MAP_U64_CHAINED), CHT_OK);
	CHECK_EQ(cht_map_u64_reserve(c, 5), CHT_EINVAL);
	CHECK_EQ(cht_map_u64_destroy(c), CHT_OK);
	cht_rcu_read_lock();
	CHECK_EQ(cht_map_u64_reserve(m, 200000), CHT_EDEADLK);
	cht_rcu_read_unlock();
	for (uint64_t k = 0; k < 99000; k++)
		CHECK_EQ(cht_map_u64_delete(m, k << 20), CHT_OK);
	CHECK_EQ(cht_map_u64_destroy(m), CHT_OK);
}

/*
 * Populate-ahead (cht_imap_grow.c, im_populate_ahead()): the splits do not
 * zero the bucket segments' huge pages themselves; the library's worker
 * faults each 2 MiB page in before the splits reach it. Reserving 300,000
 * keys (109,091 buckets) splits through segment 11, buckets [65536,
 * 131072), 4 MiB: at its start the worker is asked for its second page, at
 * bucket 98,304 (its last page) for the first page of segment 12, mapped
 * then. Smaller segments are not huge-page backed and ask for nothing.
 * Asserted: exactly those 2 requests, each done by the worker
 * (madvise(MADV_POPULATE_WRITE) returned 0; on a kernel before 5.14 it
 * refuses and only the count is checked), and the keys inserted after the
 * reserve found. With the request taken out of the split it failed:
 * 0 requests.
 */
static bool kernel_at_least(int major, int minor)
{
	struct utsname u;
	int a = 0, b = 0;
	if (uname(&u) != 0 || sscanf(u.release, "%d.%d", &a, &b) != 2)
		return false;
	return a > major || (a == major && b >= minor);
}

static void test_inline_populate_ahead(void)
{
	cht_map_u64_t *m;
	uint64_t r0, d0, f0, r1, d1, f1, v;
	cht__im_pop_stats(&r0, &d0, &f0);
	CHECK_EQ(cht_map_u64_create(&m, 0), CHT_OK);
	CHECK_EQ(cht_map_u64_reserve(m, 300000), CHT_OK);
	cht_map_stats_t st;
	CHECK_EQ(cht_map_u64_stats(m, &st), CHT_OK);
	CHECK_EQ(st.buckets, 109091);
	/* The worker runs the requests in order; wait for both (5 s at most). */
	for (int i = 0; i < 5000; i++) {
		cht__im_pop_stats(&r1, &d1, &f1);
		if (d1 + f1 - d0 - f0 >= r1 - r0)
			break;
		usleep(1000);
	}
	printf("test_map: populate-ahead: %llu requested, %llu done, %llu "
	    "failed\n", (unsigned long long) (r1 - r0),
	    (unsigned long long) (d1 - d0), (unsigned long long) (f1 - f0));
	CHECK_EQ(r1 - r0, 2);
	if (kernel_at_least(5, 14))
		CHECK_EQ(d1 - d0, 2);
	else
		CHECK_EQ(d1 + f1 - d0 - f0, 2);
	for (uint64_t k = 0; k < 1000; k++)
		CHECK_EQ(cht_map_u64_insert(m, k << 20, k), CHT_OK);
	for (uint64_t k = 0; k < 1000; k++)
		CHECK(cht_map_u64_get(m, k << 20, &v) == CHT_OK && v == k,
		    "key %llu after the populate", (unsigned long long) k);
	CHECK_EQ(cht_map_u64_destroy(m), CHT_OK);
}

/*
 * The slab reserve (cht_spare.c): once a growing map has carved enough
 * slabs, the worker keeps spares faulted in ahead and the refills carve
 * them instead of calling the system allocator; destroying the map returns
 * them with its slabs. Grows a map to 400,000 keys (about 50 slabs of
 * overflow lines: a bound of 6 spares, refilled when 3 or fewer are left,
 * so at least 2 whenever the bound is 2 or more), waits (5 s at most) for
 * 2 spares, inserts 100,000 keys more (12-16 slabs carved), and requires
 * every spare held when that began to be carved in it (they can only leave
 * through a refill, or a reclaim's trim, which needs the slab list to
 * shrink: a growth frees no slab); after the deletes and the destroy, no
 * spare held and the reservation back (check_emptied()).
 */
static uint64_t spare_key(uint64_t i)
{
	return i * 0x9e3779b97f4a7c15ull + 7;
}

static void test_inline_slab_reserve(void)
{
	cht_map_u64_t *m;
	uint64_t t0, m0, t1, m1, v;
	size_t held = 0;
	const uint64_t n0 = 400000, n1 = 500000;
	CHECK_EQ(cht_map_u64_create(&m, 0), CHT_OK);
	cht_rcu_barrier();
	size_t base = reserved_of(m);
	for (uint64_t i = 0; i < n0; i++)
		CHECK_EQ(cht_map_u64_insert(m, spare_key(i), i), CHT_OK);
	for (int i = 0; i < 5000; i++) {
		cht__ma_spare_stats(&t0, &m0, &held);
		if (held >= 2)
			break;
		usleep(1000);
	}
	size_t held0 = held;
	for (uint64_t i = n0; i < n1; i++)
		CHECK_EQ(cht_map_u64_insert(m, spare_key(i), i), CHT_OK);
	cht__ma_spare_stats(&t1, &m1, &held);
	printf("test_map: slab reserve: %zu spares held after %llu keys; the "
	    "next %llu inserts carved %llu slabs from a spare, %llu without "
	    "one\n", held0, (unsigned long long) n0,
	    (unsigned long long) (n1 - n0), (unsigned long long) (t1 - t0),
	    (unsigned long long) (m1 - m0));
	CHECK(held0 >= 2, "%zu spares held after %llu keys, expected 2",
	    held0, (unsigned long long) n0);
	CHECK(t1 - t0 >= held0, "%llu slabs from a spare, expected at least "
	    "%zu", (unsigned long long) (t1 - t0), held0);
	for (uint64_t i = 0; i < n1; i++)
		CHECK(cht_map_u64_get(m, spare_key(i), &v) == CHT_OK && v == i,
		    "key %llu", (unsigned long long) i);
	for (uint64_t i = 0; i < n1; i++)
		CHECK_EQ(cht_map_u64_delete(m, spare_key(i)), CHT_OK);
	check_emptied(m, base, "slab reserve");
	cht__ma_spare_stats(&t1, &m1, &held);
	CHECK(held == 0, "%zu spares held after the destroy", held);
}

/*
 * Churn at constant size on one thread (delete the oldest key, insert a new
 * one, three turnovers of 100,000 keys): the overflow lines stay as packed as
 * growth left them (a delete from a head moves a line's key into it), every
 * key present is found, the count exact. Before the refill the lines rose
 * from 0.36 to 0.55 per bucket in the first turnover.
 */
static uint64_t churn_key(uint64_t i)
{
	return i * 0x9e3779b97f4a7c15ull + 1;
}

static void test_inline_churn_packed(void)
{
	cht_map_u64_t *m;
	cht_map_stats_t st;
	const uint64_t n = 100000;
	uint64_t v;
	CHECK_EQ(cht_map_u64_create(&m, 0), CHT_OK);
	for (uint64_t i = 0; i < n; i++)
		CHECK_EQ(cht_map_u64_insert(m, churn_key(i), i), CHT_OK);
	CHECK_EQ(cht_map_u64_stats(m, &st), CHT_OK);
	size_t grown = st.item_bytes;
	for (uint64_t i = 0; i < 3 * n; i++) {
		CHECK_EQ(cht_map_u64_delete(m, churn_key(i)), CHT_OK);
		CHECK_EQ(cht_map_u64_insert(m, churn_key(i + n), i + n), CHT_OK);
	}
	CHECK_EQ(cht_map_u64_stats(m, &st), CHT_OK);
	printf("test_map: inline churn: %.3f overflow lines per bucket after "
	    "growth, %.3f after 3 turnovers; %.1f bytes per key\n",
	    (double) grown / 64 / (double) st.buckets,
	    (double) st.item_bytes / 64 / (double) st.buckets, st.bytes_per_key);
	CHECK_EQ(st.items, n);
	CHECK(st.item_bytes * 100 <= grown * 105, "overflow bytes %zu after "
	    "churn, %zu after growth", st.item_bytes, grown);
	for (uint64_t i = 3 * n; i < 4 * n; i++)
		CHECK(cht_map_u64_get(m, churn_key(i), &v) == CHT_OK && v == i,
		    "key %llu after churn", (unsigned long long) i);
	for (uint64_t i = 0; i < 3 * n; i += 7)
		CHECK_EQ(cht_map_u64_get(m, churn_key(i), &v), CHT_ENOENT);
	for (uint64_t i = 3 * n; i < 4 * n; i++)
		CHECK_EQ(cht_map_u64_delete(m, churn_key(i)), CHT_OK);
	CHECK_EQ(cht_map_u64_stats(m, &st), CHT_OK);
	CHECK_EQ(st.item_bytes, 0);
	CHECK_EQ(cht_map_u64_destroy(m), CHT_OK);
}

#define IN_THREADS 4
#define IN_STABLE 40000     /* keys per thread, inserted once, never deleted */
#define IN_CHURN 2048       /* keys every thread inserts and deletes */
#define IN_CHURN_BASE ((uint64_t) 1 << 31)

/* A value carries its key in its high half: a torn pair shows. */
#define IN_VAL(k, ver) (((uint64_t) (k) << 32) | (uint32_t) (ver))
#define IN_OK(k, v) (((v) >> 32) == (uint64_t) (k))

typedef struct {
	cht_map_u64_t *m;
	int id;
	uint64_t done;  /* stable keys inserted (release), read acquire */
	long lookups, torn, lost;
} in_worker_t;

static in_worker_t in_w[IN_THREADS];
static int in_stop;

static uint64_t in_stable_key(int t, uint64_t i)
{
	return ((uint64_t) t << 24) | i;
}

static void *in_worker(void *arg)
{
	in_worker_t *w = arg;
	uint64_t seed = 0xabcdef + (uint64_t) w->id * 31337;
	uint32_t ver = 1;
	while (!__atomic_load_n(&in_stop, __ATOMIC_RELAXED)) {
		uint64_t r = tu_rand(&seed), v;
		/* Grow: the next stable key. */
		if (w->done < IN_STABLE) {
			uint64_t k = in_stable_key(w->id, w->done);
			CHECK_EQ(cht_map_u64_insert(w->m, k, IN_VAL(k, 0)), CHT_OK);
			__atomic_store_n(&w->done, w->done + 1, __ATOMIC_RELEASE);
		}
		/* Every stable key inserted so far, by any thread, is found. */
		int u = (int) (r % IN_THREADS);
		uint64_t d = __atomic_load_n(&in_w[u].done, __ATOMIC_ACQUIRE);
		if (d) {
			uint64_t k = in_stable_key(u, (r >> 8) % d);
			int rc = cht_map_u64_get(w->m, k, &v);
			w->lookups++;
			if (rc != CHT_OK)
				w->lost++;
			else if (!IN_OK(k, v))
				w->torn++;
		}
		/* Rewrite an own stable key's value (in place, under splits). */
		if (w->done && (r & 7) == 0) {
			uint64_t k = in_stable_key(w->id, (r >> 20) % w->done);
			CHECK_EQ(cht_map_u64_put(w->m, k, IN_VAL(k, ver++)), CHT_OK);
		}
		/* Churn: shared keys inserted, deleted, rewritten, read. */
		uint64_t ck = IN_CHURN_BASE + (r >> 40) % IN_CHURN;
		unsigned op = (unsigned) ((r >> 32) & 0xff) % 6;
		int rc;
		switch (op) {
		case 0:
			rc = cht_map_u64_insert(w->m, ck, IN_VAL(ck, ver++));
			CHECK(rc == CHT_OK || rc == CHT_EEXIST, "insert %d", rc);
			break;
		case 1:
			rc = cht_map_u64_delete(w->m, ck);
			CHECK(rc == CHT_OK || rc == CHT_ENOENT, "delete %d", rc);
			break;
		case 2:
			CHECK_EQ(cht_map_u64_put(w->m, ck, IN_VAL(ck, ver++)),
			    CHT_OK);
			break;
		case 3:
			rc = cht_map_u64_get(w->m, ck, &v);
			if (rc == CHT_OK) {
				uint64_t e = v;
				rc = cht_map_u64_cas(w->m, ck, &e, IN_VAL(ck, ver++));
				CHECK(rc == CHT_OK || rc == CHT_ESTALE ||
				    rc == CHT_ENOENT, "cas %d", rc);
				if (rc == CHT_ESTALE && !IN_OK(ck, e))
					w->torn++;
			}
			break;
		default:
			rc = cht_map_u64_get(w->m, ck, &v);
			CHECK(rc == CHT_OK || rc == CHT_ENOENT, "get %d", rc);
			if (rc == CHT_OK && !IN_OK(ck, v))
				w->torn++;
			w->lookups++;
			break;
		}
	}
	return NULL;
}

/*
 * Threads grow the map from empty (each inserts its own keys, never
 * deleted) while all of them look up every key inserted so far by anyone,
 * rewrite values, and insert, delete, rewrite and read shared keys. No
 * inserted key may be missed by a lookup (lost), no value may carry another
 * key (torn: a reader that raced a slot's reuse or a split returned a pair
 * of two writes); at the end every key is there with its last value, the
 * count is exact, the overflow lines are gone after the deletes and the
 * allocator is back to its reserved bytes after the destroy. With
 * @a reserve the main thread meanwhile grows the map by
 * cht_map_u64_reserve() to twice, four times, ... the keys (splits on its
 * thread, racing the inserts' own), up to 2^20 keys.
 */
static void test_inline_concurrent(double secs, bool reserve)
{
	cht_map_u64_t *m;
	CHECK_EQ(cht_map_u64_create(&m, 0), CHT_OK);
	cht_rcu_barrier();
	size_t base = reserved_of(m);
	pthread_t t[IN_THREADS];
	__atomic_store_n(&in_stop, 0, __ATOMIC_RELAXED);
	/* All records first: every worker reads the others' done. */
	for (int i = 0; i < IN_THREADS; i++)
		in_w[i] = (in_worker_t) { .m = m, .id = i };
	for (int i = 0; i < IN_THREADS; i++)
		tu_spawn(&t[i], in_worker, &in_w[i]);
	size_t reserved = 0;
	unsigned reserves = 0;
	/*
	 * Bounded by the clock (and, with @a reserve, by three reserves at
	 * least): counting 10 ms sleeps made the phase last as long as its
	 * reserves took, 20 s of ThreadSanitizer's 1.5 s phase (each reserve
	 * toward 2^20 keys splits hundreds of thousands of buckets), and the
	 * stable keys the writers inserted meanwhile then took seconds more
	 * to check and delete.
	 */
	uint64_t end_ns = tu_now_ns() + (uint64_t) (secs * 1e9);
	while (tu_now_ns() < end_ns || (reserve && reserves < 3 &&
	    reserved < ((size_t) 1 << 20))) {
		tu_sleep_ms(10);
		if (!reserve || reserved >= ((size_t) 1 << 20))
			continue;
		cht_map_stats_t cur;
		CHECK_EQ(cht_map_u64_stats(m, &cur), CHT_OK);
		size_t want = 2 * (cur.items > reserved ? cur.items : reserved);
		CHECK_EQ(cht_map_u64_reserve(m, want), CHT_OK);
		CHECK_EQ(cht_map_u64_stats(m, &cur), CHT_OK);
		CHECK(cur.buckets * 11 >= want * 4, "reserve(%zu): %zu buckets",
		    want, cur.buckets);
		reserved = want;
		reserves++;
	}
	__atomic_store_n(&in_stop, 1, __ATOMIC_RELAXED);
	if (reserve) {
		printf("test_map: inline concurrent: %u reserves, to %zu keys\n",
		    reserves, reserved);
		CHECK(reserves >= 3, "%u reserves", reserves);
	}
	long lookups = 0, torn = 0, lost = 0;
	uint64_t stable = 0;
	for (int i = 0; i < IN_THREADS; i++) {
		pthread_join(t[i], NULL);
		lookups += in_w[i].lookups;
		torn += in_w[i].torn;
		lost += in_w[i].lost;
		stable += in_w[i].done;
	}
	cht_map_stats_t st;
	CHECK_EQ(cht_map_u64_stats(m, &st), CHT_OK);
	printf("test_map: inline concurrent: %ld lookups, %ld lost, %ld torn; "
	    "%llu stable keys, %zu buckets, %.1f bytes per key\n", lookups, lost,
	    torn, (unsigned long long) stable, st.buckets, st.bytes_per_key);
	CHECK(lookups > 0, "no lookups ran");
	CHECK_EQ(lost, 0);
	CHECK_EQ(torn, 0);
	/* Growth by four threads: still no insert ran two splits. */
	uint64_t splits, max_op;
	CHECK_EQ(cht__map_u64_split_stats(m, &splits, &max_op), CHT_OK);
	printf("test_map: inline concurrent: %llu splits, at most %llu in one "
	    "insert\n", (unsigned long long) splits,
	    (unsigned long long) max_op);
	CHECK_EQ(splits, st.buckets - 64);
	CHECK(max_op == 1 || (reserve && max_op == 0),
	    "%llu splits in one insert", (unsigned long long) max_op);
	uint64_t v, present = 0;
	for (int i = 0; i < IN_THREADS; i++)
		for (uint64_t j = 0; j < in_w[i].done; j++) {
			uint64_t k = in_stable_key(i, j);
			int rc = cht_map_u64_get(m, k, &v);
			CHECK(rc == CHT_OK && IN_OK(k, v), "stable key %llx: %d",
			    (unsigned long long) k, rc);
		}
	for (uint64_t c = 0; c < IN_CHURN; c++) {
		int rc = cht_map_u64_get(m, IN_CHURN_BASE + c, &v);
		if (rc == CHT_OK) {
			present++;
			CHECK(IN_OK(IN_CHURN_BASE + c, v), "churn key torn");
		}
	}
	CHECK_EQ(st.items, stable + present);
	for (int i = 0; i < IN_THREADS; i++)
		for (uint64_t j = 0; j < in_w[i].done; j++)
			CHECK_EQ(cht_map_u64_delete(m, in_stable_key(i, j)), CHT_OK);
	for (uint64_t c = 0; c < IN_CHURN; c++)
		cht_map_u64_delete(m, IN_CHURN_BASE + c);
	check_emptied(m, base, "inline concurrent");
}

/*
 * Slot reuse at full speed: few keys (256 over about 90 buckets), so that a
 * lookup often reads a slot that a delete freed and an insert of another
 * key of the same bucket rewrites meanwhile. A reader that does not retry
 * on the bucket's sequence count returns the new key with the old key's
 * value: the value's high half names its key (torn).
 */
#define RU_KEYS 256

typedef struct {
	cht_map_u64_t *m;
	int id;
	long lookups, torn;
} ru_worker_t;

static void *ru_worker(void *arg)
{
	ru_worker_t *w = arg;
	uint64_t seed = 0x5eed + (uint64_t) w->id * 101;
	while (!__atomic_load_n(&in_stop, __ATOMIC_RELAXED)) {
		uint64_t r = tu_rand(&seed), v;
		uint64_t k = 1 + (r >> 16) % RU_KEYS;
		switch (r % 3) {
		case 0:
			cht_map_u64_insert(w->m, k, IN_VAL(k, r >> 40));
			break;
		case 1:
			cht_map_u64_delete(w->m, k);
			break;
		default:
			if (cht_map_u64_get(w->m, k, &v) == CHT_OK && !IN_OK(k, v))
				w->torn++;
			w->lookups++;
		}
	}
	return NULL;
}

static void test_inline_reuse(double secs)
{
	cht_map_u64_t *m;
	CHECK_EQ(cht_map_u64_create(&m, 0), CHT_OK);
	static ru_worker_t w[IN_THREADS];
	pthread_t t[IN_THREADS];
	__atomic_store_n(&in_stop, 0, __ATOMIC_RELAXED);
	for (int i = 0; i < IN_THREADS; i++) {
		w[i] = (ru_worker_t) { .m = m, .id = i };
		tu_spawn(&t[i], ru_worker, &w[i]);
	}
	tu_sleep_ms((unsigned) (secs * 1000));
	__atomic_store_n(&in_stop, 1, __ATOMIC_RELAXED);
	long lookups = 0, torn = 0;
	for (int i = 0; i < IN_THREADS; i++) {
		pthread_join(t[i], NULL);
		lookups += w[i].lookups;
		torn += w[i].torn;
	}
	printf("test_map: inline slot reuse: %ld lookups, %ld torn\n", lookups,
	    torn);
	CHECK(lookups > 0, "no lookups ran");
	CHECK_EQ(torn, 0);
	CHECK_EQ(cht_map_u64_destroy(m), CHT_OK);
}

/*
 * The library's helper threads (the RCU reclaimer, the worker that resizes,
 * populates ahead and keeps the spare slabs) run SCHED_BATCH, so that their
 * wake-ups do not preempt the user's threads (rcu.c, start_helper()); the
 * user's threads keep their own policy. Run after the tests that started
 * both helpers.
 */
static void test_helpers_sched_batch(void)
{
	DIR *d = opendir("/proc/self/task");
	CHECK(d != NULL, "no /proc/self/task");
	if (!d)
		return;
	int batch = 0, other = 0, self_policy = -1;
	pid_t self = (pid_t) syscall(SYS_gettid);
	struct dirent *e;
	while ((e = readdir(d)) != NULL) {
		pid_t tid = (pid_t) atoi(e->d_name);
		if (tid <= 0)
			continue;
		int pol = sched_getscheduler(tid);
		if (tid == self)
			self_policy = pol;
		else if (pol == SCHED_BATCH)
			batch++;
		else
			other++;
	}
	closedir(d);
	printf("test_map: helper threads SCHED_BATCH %d, other %d; this "
	    "thread's policy %d\n", batch, other, self_policy);
	CHECK_EQ(self_policy, SCHED_OTHER);
	CHECK(batch >= 2, "%d helper threads SCHED_BATCH (the reclaimer and "
	    "the worker expected)", batch);
}

int main(int argc, char **argv)
{
	double secs = tu_seconds(argc, argv, 1.5);
	test_bytes_single();
	test_u64_single(CHT_MAP_U64_INLINE);
	test_u64_single(CHT_MAP_U64_CHAINED);
	test_inline_growth();
	test_inline_growth_no_reclaim();
	test_find_many();
	test_find_many_concurrent(secs / 2);
	test_exit_after_full_batch();
	test_memory_baseline();
	test_memory_returned();
	test_concurrent(secs);
	test_inline_reserve();
	test_inline_populate_ahead();
	test_inline_slab_reserve();
	test_helpers_sched_batch();
	test_inline_churn_packed();
	test_inline_concurrent(secs, false);
	test_inline_concurrent(secs, true);
	test_inline_reuse(secs / 2);
	return tu_finish("test_map");
}
