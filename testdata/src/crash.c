/* Calls work() a known number of times (argument 1, default 3000), then stores
 * through a null pointer with no handler: the process dies of SIGSEGV. QEMU then
 * ends without calling its plugins' exit callbacks, so the end of synth's trace
 * comes from what the plugin left in its tail file (synth/plugin/synth_plugin.c). */
#include <stdlib.h>

static volatile unsigned sink;
static int *volatile nowhere;

__attribute__((noinline)) static void work(unsigned i)
{
	sink += i * 3u + 1u;
}

int main(int argc, char **argv)
{
	unsigned n = argc > 1 ? (unsigned)atoi(argv[1]) : 3000;

	for (unsigned i = 0; i < n; i++)
		work(i);
	*nowhere = (int)sink;
	return 0;
}
