/*
 * libcht managed-map example (cht_map.h): the library allocates and frees
 * the items; no thread registration, no callbacks. Two threads append log
 * lines to per-user keys while the main thread counts page views in the
 * 8-byte map and reads values in place under a read guard.
 * Builds against an installed libcht with `pkg-config --cflags --libs cht`.
 */
#include <cht.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

static cht_map_t *logs;

static void *writer(void *arg)
{
	const char *line = arg;
	for (int i = 0; i < 1000; i++) {
		char user[16];
		int n = snprintf(user, sizeof(user), "user%d", i % 10);
		/* The first append creates the key; later ones extend it. */
		if (cht_map_append(logs, user, (size_t) n, line, strlen(line)) !=
		    CHT_OK)
			return (void *) 1;
	}
	return NULL;
}

int main(void)
{
	cht_map_u64_t *views;
	if (cht_map_create(&logs, 0) != CHT_OK ||
	    cht_map_u64_create(&views, 1 << 10) != CHT_OK)
		return 1;
	pthread_t a, b;
	pthread_create(&a, NULL, writer, "a;");
	pthread_create(&b, NULL, writer, "bb;");
	for (uint64_t page = 0; page < 100000; page++)
		cht_map_u64_add(views, page % 1000, 1, NULL);
	void *ra, *rb;
	pthread_join(a, &ra);
	pthread_join(b, &rb);

	/* By copy: user3 got 100 "a;" and 100 "bb;" lines, 500 bytes. */
	char buf[1024];
	size_t len = 0;
	int rc = cht_map_get(logs, "user3", 5, buf, sizeof(buf), &len);
	/* In place, inside a read guard: valid until the guard ends. */
	const void *ref;
	size_t rlen = 0;
	cht_map_read_lock();
	int rc2 = cht_map_get_ref(logs, "user3", 5, &ref, &rlen);
	cht_map_read_unlock();

	uint64_t v = 0;
	cht_map_u64_get(views, 7, &v);
	cht_map_stats_t st;
	cht_map_u64_stats(views, &st);
	printf("user3: %zu bytes; page 7: %llu views; views map: %zu keys, "
	    "%.1f bytes per key\n", len, (unsigned long long) v, st.items,
	    st.bytes_per_key);
	int ok = !ra && !rb && rc == CHT_OK && rc2 == CHT_OK && len == 500 &&
	    rlen == 500 && v == 100 && st.items == 1000;
	if (cht_map_destroy(logs) != CHT_OK ||
	    cht_map_u64_destroy(views) != CHT_OK)
		ok = 0;
	printf("map_example: %s\n", ok ? "OK" : "FAILED");
	return ok ? 0 : 1;
}
