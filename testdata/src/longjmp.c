/* longjmp: non-local exits out of nested calls (an indirect branch to a saved
 * address that is not a return). */
#include <setjmp.h>
#include <stdio.h>

static jmp_buf env;

static void __attribute__((noinline)) inner(int n)
{
	if (n == 0)
		longjmp(env, 7);
	inner(n - 1);
}

int main(void)
{
	int total = 0;
	for (int i = 0; i < 5; i++) {
		int r = setjmp(env);
		if (r == 0)
			inner(i + 2);
		else
			total += r;
	}
	printf("longjmp %d\n", total);
	return 0;
}
