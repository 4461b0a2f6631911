/** @file threads.c
 * Threads, the futex mutex and condition variable, wiring and membarrier:
 *
 *   threads [N] [ROUNDS]
 *
 * N threads (default 4), thread i wired to CPU i % CPUs (it checks that it
 * runs there), wait at a condition variable until all have started, then
 * increment a shared counter ROUNDS times (default 20000) under the mutex,
 * every 1000th time calling membarrier. Exits 0 if the counter is exactly
 * N * ROUNDS and no thread saw a wrong CPU, 1 otherwise.
 */
#include <stdio.h>
#include <stdlib.h>
#include <thread.h>
#include <sys.h>

static mutex_t lock = MUTEX_INITIALIZER;
static condvar_t started_cv = CONDVAR_INITIALIZER;
static condvar_t go_cv = CONDVAR_INITIALIZER;
static int started, go;
static long counter, rounds = 20000;
static int wrong_cpu, errors;

static int worker(void *arg)
{
	long cpu = (long) arg;
	if (sys_thread_wire((unsigned) cpu) != 0 || sys_cpu_current() != cpu)
		__atomic_fetch_add(&wrong_cpu, 1, __ATOMIC_RELAXED);
	mutex_lock(&lock);
	started++;
	condvar_signal(&started_cv);
	while (!go)
		condvar_wait(&go_cv, &lock);
	mutex_unlock(&lock);
	for (long i = 0; i < rounds; i++) {
		mutex_lock(&lock);
		counter++;
		mutex_unlock(&lock);
		if (i % 1000 == 0 && sys_membarrier(0) != 0)
			__atomic_fetch_add(&errors, 1, __ATOMIC_RELAXED);
	}
	if (sys_cpu_current() != cpu)
		__atomic_fetch_add(&wrong_cpu, 1, __ATOMIC_RELAXED);
	return (int) cpu;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? strtol(argv[1], NULL, 0) : 4;
	if (argc > 2)
		rounds = strtol(argv[2], NULL, 0);
	if (n < 1 || n > 32 || rounds < 0) {
		printf("usage: threads [N (1-32)] [ROUNDS]\n");
		return 2;
	}
	long cpus = sys_cpu_count();
	uthread_t *t[32];
	for (long i = 0; i < n; i++) {
		t[i] = thread_create(worker, (void *) (i % cpus));
		if (!t[i]) {
			printf("threads: cannot create thread %ld\n", i);
			return 1;
		}
	}
	mutex_lock(&lock);
	while (started < n)
		condvar_wait(&started_cv, &lock);
	go = 1;
	condvar_broadcast(&go_cv);
	mutex_unlock(&lock);
	for (long i = 0; i < n; i++) {
		if (thread_join(t[i]) != i % cpus)
			errors++;
	}
	int ok = counter == n * rounds && !wrong_cpu && !errors;
	printf("threads: %ld threads on %ld CPUs, counter %ld of %ld, wrong CPU %d, "
	    "errors %d\n", n, cpus, counter, n * rounds, wrong_cpu, errors);
	return ok ? 0 : 1;
}
