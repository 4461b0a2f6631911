/** @file test_rcutorture.c
 * rcutorture-style oracle for libcht's userspace RCU (after Linux's
 * kernel/rcu/rcutorture.c).
 *
 *   test_rcutorture [SECONDS] [READERS]      exit 0: pass, 1: failure
 *
 * - Writers keep replacing one published object. A retired object's age
 *   ("pipe count") is 1 when it is unpublished and grows by one after every
 *   further grace period: one writer ages its objects with cht_rcu_call()
 *   (the callback re-posts itself until the age reaches PIPE_LEN, then
 *   poisons and frees), another with cht_rcu_synchronize() loops.
 * - Readers take the published object inside a reader section (sometimes
 *   nested, sometimes lingering or yielding inside) and read its age at the
 *   end of the section. A reader that took an object while it was published
 *   must never see it older than 1: age >= 2 means a grace period ended
 *   while the reader was still inside. The age histogram is printed; any
 *   count beyond age 1 fails, as does a poisoned object.
 * - Forward progress: writer versions keep rising, and a flood of
 *   cht_rcu_call()s posted by several threads all complete (counted) with
 *   bounded backlog.
 * - Thread churn: short-lived threads register, read and exit without
 *   unregistering; grace periods keep completing.
 * The flavour (membarrier or fence) is chosen by the library at start-up;
 * CHT_RCU_FLAVOUR=fence forces the fence fallback.
 *
 * Negative control: built against the `broken` library (fault-injection
 * point CHT_RCU_FI_NO_WAIT configured: synchronize does not wait), the same
 * program must fail (see tests/run.py).
 */
#include "tutil.h"
#include <cht.h>
#include <sched.h>

#define PIPE_LEN 10
#define ALIVE 0x70127012u
#define DEAD  0xdeadd00du

typedef struct {
	cht_rcu_head_t rcu;
	int pipe;        /* age: atomics */
	unsigned magic;
	uint64_t version;
} tobj_t;

static tobj_t *current;
static int stop;
static uint64_t pipe_hist[PIPE_LEN + 1];
static uint64_t dead_seen, reads;
static uint64_t versions, objects_freed;

static tobj_t *new_obj(uint64_t version)
{
	tobj_t *o = malloc(sizeof(*o));
	if (!o) {
		perror("malloc");
		exit(2);
	}
	o->pipe = 0;
	o->magic = ALIVE;
	o->version = version;
	return o;
}

static void obj_free(tobj_t *o)
{
	o->magic = DEAD;
	__atomic_fetch_add(&objects_freed, 1, __ATOMIC_RELAXED);
	free(o);
}

/* Ages by one per grace period through the callback machinery. */
static void age_cb(cht_rcu_head_t *h)
{
	tobj_t *o = (tobj_t *) h;
	int p = __atomic_add_fetch(&o->pipe, 1, __ATOMIC_RELAXED);
	if (p >= PIPE_LEN)
		obj_free(o);
	else
		cht_rcu_call(&o->rcu, age_cb);
}

static tobj_t *publish(uint64_t version)
{
	tobj_t *o = new_obj(version);
	tobj_t *old = __atomic_exchange_n(&current, o, __ATOMIC_ACQ_REL);
	__atomic_store_n(&old->pipe, 1, __ATOMIC_RELAXED);  /* unpublished */
	return old;
}

static void *writer_cb(void *p)
{
	(void) p;
	CHECK_EQ(cht_rcu_register_thread(), CHT_OK);
	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
		uint64_t v = __atomic_add_fetch(&versions, 1, __ATOMIC_RELAXED);
		tobj_t *old = publish(v);
		cht_rcu_call(&old->rcu, age_cb);
		if (v % 64 == 0)
			tu_sleep_ms(1);  /* bound the backlog */
	}
	return NULL;
}

static void *writer_sync(void *p)
{
	(void) p;
	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
		uint64_t v = __atomic_add_fetch(&versions, 1, __ATOMIC_RELAXED);
		tobj_t *old = publish(v);
		for (int i = 1; i < PIPE_LEN; i++) {
			CHECK_EQ(cht_rcu_synchronize(), CHT_OK);
			__atomic_add_fetch(&old->pipe, 1, __ATOMIC_RELAXED);
		}
		obj_free(old);
	}
	return NULL;
}

static void read_once(uint64_t *seed, uint64_t *hist, uint64_t *dead)
{
	uint64_t r = tu_rand(seed);
	cht_rcu_read_lock();
	bool nested = r & 1;
	if (nested)
		cht_rcu_read_lock();
	tobj_t *o = __atomic_load_n(&current, __ATOMIC_ACQUIRE);
	if (nested && (r & 2))
		cht_rcu_read_unlock();  /* still inside the outer section */
	/* Linger: mostly short, sometimes long, sometimes yield the CPU. */
	unsigned d = (unsigned) ((r >> 8) % 256);
	if (d < 4)
		sched_yield();
	else if (d < 6)
		tu_sleep_ms(1);
	else
		for (unsigned i = 0; i < (d & 63); i++)
			__atomic_signal_fence(__ATOMIC_SEQ_CST);
	int pipe = __atomic_load_n(&o->pipe, __ATOMIC_RELAXED);
	if (o->magic != ALIVE)
		(*dead)++;
	if (nested && !(r & 2))
		cht_rcu_read_unlock();
	cht_rcu_read_unlock();
	if (pipe > PIPE_LEN || pipe < 0)
		pipe = PIPE_LEN;
	hist[pipe]++;
}

typedef struct {
	uint64_t seed;
} reader_arg_t;

static void *reader(void *p)
{
	reader_arg_t *a = p;
	uint64_t hist[PIPE_LEN + 1] = { 0 };
	uint64_t dead = 0, n = 0;
	CHECK_EQ(cht_rcu_register_thread(), CHT_OK);
	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
		read_once(&a->seed, hist, &dead);
		n++;
	}
	for (int i = 0; i <= PIPE_LEN; i++)
		__atomic_fetch_add(&pipe_hist[i], hist[i], __ATOMIC_RELAXED);
	__atomic_fetch_add(&dead_seen, dead, __ATOMIC_RELAXED);
	__atomic_fetch_add(&reads, n, __ATOMIC_RELAXED);
	return NULL;
}

/* Short-lived readers that never unregister. */
static uint64_t churned;

static void *churn_child(void *p)
{
	reader_arg_t *a = p;
	uint64_t hist[PIPE_LEN + 1] = { 0 };
	uint64_t dead = 0;
	CHECK_EQ(cht_rcu_register_thread(), CHT_OK);
	for (int i = 0; i < 50; i++)
		read_once(&a->seed, hist, &dead);
	for (int i = 0; i <= PIPE_LEN; i++)
		__atomic_fetch_add(&pipe_hist[i], hist[i], __ATOMIC_RELAXED);
	__atomic_fetch_add(&dead_seen, dead, __ATOMIC_RELAXED);
	__atomic_fetch_add(&reads, 50, __ATOMIC_RELAXED);
	return NULL;  /* exits registered */
}

static void *churn(void *p)
{
	(void) p;
	reader_arg_t a = { 12345 };
	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
		pthread_t t;
		tu_spawn(&t, churn_child, &a);
		pthread_join(t, NULL);
		a.seed += 0x9e3779b97f4a7c15ull;
		churned++;
		tu_sleep_ms(2);
	}
	return NULL;
}

/* Flood: many callbacks from several threads; all must run. */
typedef struct {
	cht_rcu_head_t rcu;
	unsigned magic;
} fobj_t;

static uint64_t flood_posted, flood_done, flood_backlog_max;

static void flood_cb(cht_rcu_head_t *h)
{
	fobj_t *f = (fobj_t *) h;
	CHECK(f->magic == ALIVE, "flood callback twice");
	f->magic = DEAD;
	free(f);
	__atomic_fetch_add(&flood_done, 1, __ATOMIC_RELAXED);
}

static void *flooder(void *p)
{
	uint64_t n = (uint64_t) (uintptr_t) p;
	CHECK_EQ(cht_rcu_register_thread(), CHT_OK);
	for (uint64_t i = 0; i < n; i++) {
		fobj_t *f = malloc(sizeof(*f));
		f->magic = ALIVE;
		cht_rcu_read_lock();  /* posting from inside a section is allowed */
		cht_rcu_call(&f->rcu, flood_cb);
		cht_rcu_read_unlock();
		uint64_t posted = __atomic_add_fetch(&flood_posted, 1,
		    __ATOMIC_RELAXED);
		uint64_t backlog = posted - __atomic_load_n(&flood_done,
		    __ATOMIC_RELAXED);
		uint64_t m = __atomic_load_n(&flood_backlog_max, __ATOMIC_RELAXED);
		while (backlog > m && !__atomic_compare_exchange_n(
		    &flood_backlog_max, &m, backlog, true, __ATOMIC_RELAXED,
		    __ATOMIC_RELAXED))
			;
	}
	return NULL;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	double secs = tu_seconds(argc, argv, 3.0);
	int nreaders = tu_threads(argc, argv, 3);
	CHECK_EQ(cht_rcu_register_thread(), CHT_OK);
	current = new_obj(0);

	pthread_t wc, ws, ch, rd[64];
	reader_arg_t ra[64];
	for (int i = 0; i < nreaders; i++) {
		ra[i].seed = 0x243f6a8885a308d3ull * (uint64_t) (i + 1);
		tu_spawn(&rd[i], reader, &ra[i]);
	}
	tu_spawn(&wc, writer_cb, NULL);
	tu_spawn(&ws, writer_sync, NULL);
	tu_spawn(&ch, churn, NULL);

	/* Forward progress: versions rise in every quarter of the run. */
	uint64_t last = 0;
	int stalls = 0;
	for (int q = 0; q < 4; q++) {
		tu_sleep_ms((unsigned) (secs * 1000 / 4));
		uint64_t v = __atomic_load_n(&versions, __ATOMIC_RELAXED);
		if (v == last)
			stalls++;
		last = v;
	}
	__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
	pthread_join(wc, NULL);
	pthread_join(ws, NULL);
	pthread_join(ch, NULL);
	for (int i = 0; i < nreaders; i++)
		pthread_join(rd[i], NULL);
	CHECK_EQ(stalls, 0);

	/* The flood, after the main phase (its own check). */
	pthread_t fl[3];
	uint64_t per = 20000;
	const char *scale = getenv("TEST_SCALE");
	if (scale && atof(scale) < 1)
		per = 5000;
	for (int i = 0; i < 3; i++)
		tu_spawn(&fl[i], flooder, (void *) (uintptr_t) per);
	for (int i = 0; i < 3; i++)
		pthread_join(fl[i], NULL);
	CHECK_EQ(cht_rcu_barrier(), CHT_OK);
	CHECK_EQ(__atomic_load_n(&flood_done, __ATOMIC_RELAXED), 3 * per);

	/* Retire the last object and drain. */
	tobj_t *last_obj = publish(~0ull);
	cht_rcu_call(&last_obj->rcu, age_cb);
	for (int i = 0; i < PIPE_LEN + 1; i++)
		CHECK_EQ(cht_rcu_barrier(), CHT_OK);
	CHECK_EQ(__atomic_load_n(&objects_freed, __ATOMIC_RELAXED),
	    __atomic_load_n(&versions, __ATOMIC_RELAXED) + 1);
	free(current);

	uint64_t beyond = 0;
	printf("rcutorture: flavour %s, %d readers, %.1f s: %lu reads, %lu "
	    "versions, %lu churned threads, flood %lu callbacks (backlog max %lu)\n",
	    cht_rcu_flavour(), nreaders, secs, (unsigned long) reads,
	    (unsigned long) versions, (unsigned long) churned,
	    (unsigned long) flood_done, (unsigned long) flood_backlog_max);
	printf("rcutorture: pipe age histogram:");
	for (int i = 0; i <= PIPE_LEN; i++) {
		printf(" %d:%lu", i, (unsigned long) pipe_hist[i]);
		if (i >= 2)
			beyond += pipe_hist[i];
	}
	printf("\n");
	cht_rcu_stats_t st;
	cht_rcu_get_stats(&st);
	printf("rcutorture: %lu grace periods (%lu shared), %lu callbacks in %lu "
	    "batches\n", (unsigned long) st.gps, (unsigned long) st.gps_shared,
	    (unsigned long) st.callbacks_run, (unsigned long) st.batches);
	CHECK(beyond == 0, "%lu reads saw an object older than one grace period",
	    (unsigned long) beyond);
	CHECK(dead_seen == 0, "%lu reads saw a freed object",
	    (unsigned long) dead_seen);
	CHECK(reads > 0 && versions > 0, "no progress");
	return tu_finish("test_rcutorture");
}
