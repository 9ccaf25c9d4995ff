/* lossy: a few hundred thousand calls with a system call every K of them, so that
 * synth's sink is read out several times (at system calls once half full) and a
 * small sink overflows before each read-out: the trace of a board that loses
 * trace. Counts come from argv (calls, calls between system calls). */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static unsigned __attribute__((noinline)) step(unsigned x)
{
	return x & 1 ? 3 * x + 1 : x / 2;
}

int main(int argc, char **argv)
{
	unsigned long n = argc > 1 ? strtoul(argv[1], NULL, 0) : 300000;
	unsigned long k = argc > 2 ? strtoul(argv[2], NULL, 0) : 75000;
	unsigned x = 27, s = 0;

	for (unsigned long i = 0; i < n; i++) {
		x = step(x);
		if (x == 1)
			x = 27 + (unsigned)i % 100;
		s += x;
		if (k && i % k == k - 1)
			s += (unsigned)getppid() & 1; /* a system call: a read-out */
	}
	printf("lossy %u\n", s);
	return 0;
}
