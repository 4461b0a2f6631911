/** @file bigbss.c
 * A malformed program for the loader's segment-size limit: its link script
 * (app.ld) stretches the data segment's memory size (bss) to about 128 TiB.
 * The loader must refuse it (README, "Limits per task"); if it ever runs, it
 * writes one bss byte, prints where its bss is and exits 0.
 */
#include <stdio.h>

static char bss_start[4096];

int main(void)
{
	*(volatile char *) bss_start = 1;
	printf("bigbss: bss at %p ran\n", (void *) bss_start);
	return 0;
}
