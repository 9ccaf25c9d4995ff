/* loop: nested counted loops (known trip counts) so every conditional branch is
 * taken and not taken a known number of times. */
#include <stdio.h>
#include <stdlib.h>

static volatile unsigned sink;

int main(int argc, char **argv)
{
	unsigned n = argc > 1 ? (unsigned)atoi(argv[1]) : 1000;
	for (unsigned i = 0; i < n; i++)
		for (unsigned j = 0; j < 7; j++)
			sink += i ^ j;
	printf("loop %u\n", sink);
	return 0;
}
