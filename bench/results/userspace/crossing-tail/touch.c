#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <stdio.h>
int main(int c, char **v) {
	size_t n = strtoull(v[1], 0, 0) << 30;
	char *p = mmap(0, n, PROT_READ|PROT_WRITE, MAP_PRIVATE|MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) return 1;
	for (size_t i = 0; i < n; i += 4096) p[i] = 1;
	printf("touched %zu GiB\n", n >> 30);
	return 0;
}
