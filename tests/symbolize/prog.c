/* A small program for symbolize tests: plain calls, a forced inline in a loop,
 * recursion and a libc call through the PLT. Built for A64, A32 and T32. */
#include <stdio.h>
#include <stdlib.h>

static inline __attribute__((always_inline)) int mix(int a, int b)
{
	int r = a * 31 + b;

	if (r & 1)
		r ^= 0x55;
	return r;
}

__attribute__((noinline)) int sum_mixed(const int *v, int n)
{
	int s = 0;

	for (int i = 0; i < n; i++)
		s = mix(s, v[i]);
	return s;
}

__attribute__((noinline)) int fact(int n)
{
	if (n <= 1)
		return 1;
	return n * fact(n - 1);
}

__attribute__((noinline)) void report(int x)
{
	printf("%d\n", x);
}

int main(int argc, char **argv)
{
	int v[8];

	for (int i = 0; i < 8; i++)
		v[i] = i + argc;
	report(sum_mixed(v, 8) + fact(argc + 4));
	return 0;
}
