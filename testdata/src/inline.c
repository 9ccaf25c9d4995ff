/* inline: small static functions that -O2 inlines into a loop, one inside another,
 * so their code lies in their callers under DW_TAG_inlined_subroutine: sample
 * profiles must nest them under the call sites they were inlined at. */
#include <stdio.h>
#include <stdlib.h>

static volatile unsigned sink;

static inline unsigned mix(unsigned a, unsigned b)
{
	if (a & 1)
		return a * 3 + b;
	return (a >> 1) ^ b;
}

static inline unsigned step(unsigned x, unsigned i)
{
	unsigned y = mix(x, i);

	return y + mix(i, y);
}

static unsigned __attribute__((noinline)) outer(unsigned n)
{
	unsigned x = 1;

	for (unsigned i = 0; i < n; i++) {
		x = step(x, i);
		if (x % 7 == 0)
			sink++;
	}
	return x;
}

int main(int argc, char **argv)
{
	unsigned n = argc > 1 ? (unsigned)atoi(argv[1]) : 300;

	for (unsigned k = 0; k < 5; k++)
		sink += outer(n + k);
	printf("inline %u\n", sink);
	return 0;
}
