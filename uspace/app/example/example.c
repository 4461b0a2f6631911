/*
 * libcht example: a table of users keyed by id, shared by two threads.
 * Builds against an installed libcht with `pkg-config --cflags --libs cht`.
 */
#include <cht.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct {
	cht_link_t link;    /* embedded: the table is intrusive */
	unsigned long id;
	char name[16];
} user_t;

static size_t user_hash(const cht_link_t *l)
{
	return cht_item_of(l, user_t, link)->id;  /* the table mixes it */
}

static size_t key_hash(void *key)
{
	return *(unsigned long *) key;
}

static bool user_equal(const cht_link_t *a, const cht_link_t *b)
{
	return cht_item_of(a, user_t, link)->id == cht_item_of(b, user_t, link)->id;
}

static bool key_equal(void *key, const cht_link_t *l)
{
	return *(unsigned long *) key == cht_item_of(l, user_t, link)->id;
}

static void user_free(cht_link_t *l)
{
	free(cht_item_of(l, user_t, link));  /* after a grace period */
}

static const cht_ops_t user_ops = {
	.hash = user_hash, .key_hash = key_hash, .equal = user_equal,
	.key_equal = key_equal, .remove_callback = user_free,
};

static cht_t users;
enum { N = 10000 };

static void *writer(void *arg)
{
	unsigned long base = (unsigned long) (uintptr_t) arg;
	cht_rcu_register_thread();
	for (unsigned long i = base; i < base + N; i++) {
		user_t *u = malloc(sizeof(*u));
		u->id = i;
		snprintf(u->name, sizeof(u->name), "user%lu", i);
		if (cht_u_insert_unique(&users, &u->link, NULL) != CHT_OK)
			free(u);
	}
	return NULL;  /* unregistered automatically at exit */
}

int main(void)
{
	int rc;
	if ((rc = cht_rcu_register_thread()) != CHT_OK ||
	    (rc = cht_u_create(&users, 0, 0, 0, &user_ops)) != CHT_OK) {
		fprintf(stderr, "example: %s\n", cht_strerror(rc));
		return 1;
	}
	pthread_t t[2];
	for (int i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, writer, (void *) (uintptr_t) (i * N));
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);

	/* Lookups: inside a reader section, the result is valid until unlock. */
	unsigned long found = 0, id = 4242;
	cht_rcu_read_lock();
	cht_link_t *l;
	if (cht_u_find(&users, &id, &l) == CHT_OK)
		printf("example: found %s\n", cht_item_of(l, user_t, link)->name);
	for (unsigned long i = 0; i < 2 * N; i++)
		found += cht_find(&users, &i) != NULL;  /* the kernel API */
	cht_rcu_read_unlock();

	cht_stats_t st;
	cht_u_get_stats(&users, &st);
	printf("example: %lu users found, %zu items in %zu buckets (%lu grows), "
	    "RCU flavour %s, libcht %s\n", found, st.items, st.buckets,
	    (unsigned long) st.grows, cht_rcu_flavour(), cht_version());

	/* Errors are return codes. */
	if (cht_u_destroy(&users) != CHT_EBUSY || cht_u_insert(NULL, NULL) !=
	    CHT_EINVAL) {
		fprintf(stderr, "example: unexpected status\n");
		return 1;
	}
	for (unsigned long i = 0; i < 2 * N; i++)
		cht_u_remove_key(&users, &i);
	rc = cht_u_destroy(&users);  /* waits for the pending frees */

	/* The key-value wrapper. */
	cht_kv_t *kv;
	uint64_t v = 0;
	cht_kv_create(&kv, 0);
	cht_kv_put(kv, 1, 100);
	cht_kv_get(kv, 1, &v);
	cht_kv_del(kv, 1);
	int kvrc = cht_kv_destroy(kv);

	if (found != 2 * N || rc != CHT_OK || v != 100 || kvrc != CHT_OK) {
		fprintf(stderr, "example: FAILED\n");
		return 1;
	}
	printf("example: OK\n");
	return 0;
}
