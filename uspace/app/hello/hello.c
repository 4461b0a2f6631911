/** @file hello.c
 * Prints one line (with its task id and arguments) and exits 0.
 */
#include <stdio.h>
#include <sys.h>

int main(int argc, char **argv)
{
	printf("Hello from user space: task %ld, %ld CPUs", sys_task_id(),
	    sys_cpu_count());
	for (int i = 1; i < argc; i++)
		printf(" [%s]", argv[i]);
	printf("\n");
	return 0;
}
