/* recurse: a recursion that must stay calls and returns (built with
 * -fno-optimize-sibling-calls), deep enough to overflow a return stack. */
#include <stdio.h>

static unsigned __attribute__((noinline)) fib(unsigned n)
{
	return n < 2 ? n : fib(n - 1) + fib(n - 2);
}

static unsigned __attribute__((noinline)) depth(unsigned n)
{
	return n ? 1 + depth(n - 1) : 0;
}

int main(void)
{
	printf("fib %u depth %u\n", fib(15), depth(40));
	return 0;
}
