/* callheavy: a call-dense workload for the call views: qsort with a comparator
 * (callbacks through libc), a recursive fib and a mutual recursion, so that stacks
 * are deep and change every few instructions. Sizes from argv. */
#include <stdio.h>
#include <stdlib.h>

static int __attribute__((noinline)) cmp(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

static unsigned __attribute__((noinline)) fib(unsigned n)
{
	return n < 2 ? n : fib(n - 1) + fib(n - 2);
}

static unsigned __attribute__((noinline)) odd(unsigned n);
static unsigned __attribute__((noinline)) even(unsigned n)
{
	return n ? odd(n - 1) : 1;
}
static unsigned __attribute__((noinline)) odd(unsigned n)
{
	return n ? even(n - 1) : 0;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 5000;
	unsigned f = argc > 2 ? (unsigned)atoi(argv[2]) : 18, s = 0;
	int *v = malloc(sizeof(*v) * (size_t)n);

	srand(1);
	for (int i = 0; i < n; i++)
		v[i] = rand();
	qsort(v, (size_t)n, sizeof(*v), cmp);
	for (int i = 0; i < 20; i++)
		s += even((unsigned)(100 + i));
	printf("callheavy %d %u %u\n", v[n / 2], fib(f), s);
	free(v);
	return 0;
}
