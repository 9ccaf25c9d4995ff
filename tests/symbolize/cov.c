/* For coverage tests: a loop, a branch taken only sometimes, a branch never
 * taken, and a function never called. */
#include <stdio.h>
#include <stdlib.h>

__attribute__((noinline)) int never_called(int x)
{
	return x * 7 + 1;
}

__attribute__((noinline)) int classify(int v)
{
	if (v % 3 == 0)
		return 3;
	if (v < 0)
		return never_called(v);
	return 1;
}

int main(int argc, char **argv)
{
	int s = 0;

	for (int i = 0; i < 10; i++)
		s += classify(i + argc);
	if (argc > 5)
		puts("many arguments");
	printf("%d\n", s);
	return 0;
}
