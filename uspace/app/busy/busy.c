/** @file busy.c
 * Runs until killed: for `run -b busy` and `kill`.
 *
 * One thread spins in user mode, one sleeps on a futex nobody wakes, one
 * sleeps in futex waits with a 10 ms timeout in a loop; the main thread
 * joins them (it blocks in the kernel too). `kill` must end all four.
 */
#include <stdio.h>
#include <thread.h>
#include <sys.h>

static uint32_t never;

static int spinner(void *arg)
{
	for (volatile unsigned long i = 0;; i++)
		;
	return 0;
}

static int sleeper(void *arg)
{
	for (;;)
		(void) sys_futex_wait(&never, 0, 0);
	return 0;
}

static int napper(void *arg)
{
	for (;;)
		(void) sys_futex_wait(&never, 0, 10000000);
	return 0;
}

int main(int argc, char **argv)
{
	uthread_t *t[3];
	t[0] = thread_create(spinner, NULL);
	t[1] = thread_create(sleeper, NULL);
	t[2] = thread_create(napper, NULL);
	if (!t[0] || !t[1] || !t[2]) {
		printf("busy: cannot create the threads\n");
		return 1;
	}
	printf("busy: task %ld running 4 threads until killed\n", sys_task_id());
	for (int i = 0; i < 3; i++)
		(void) thread_join(t[i]);
	printf("busy: the threads ended unexpectedly\n");
	return 1;
}
