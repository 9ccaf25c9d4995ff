/* bigloop: millions of instructions with few system calls, for long packet streams
 * (periodic syncs, sink wrap). The count comes from argv[1]. */
#include <stdio.h>
#include <stdlib.h>

static unsigned __attribute__((noinline)) step(unsigned x)
{
	return x & 1 ? 3 * x + 1 : x / 2;
}

int main(int argc, char **argv)
{
	unsigned long n = argc > 1 ? strtoul(argv[1], NULL, 0) : 100000;
	unsigned x = 27, s = 0;
	for (unsigned long i = 0; i < n; i++) {
		x = step(x);
		if (x == 1)
			x = 27 + (unsigned)i % 100;
		s += x;
	}
	printf("bigloop %u\n", s);
	return 0;
}
