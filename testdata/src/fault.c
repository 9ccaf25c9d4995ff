/* fault: loads from address 0 that fault; the SIGSEGV handler jumps back out with
 * siglongjmp. The faulting load never completes: the trace shows it as the last
 * instruction before an exception, as a data abort would. */
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

static sigjmp_buf env;
static int volatile *volatile null_ptr;

static void on_segv(int sig)
{
	siglongjmp(env, sig);
}

int main(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_segv;
	sigaction(SIGSEGV, &sa, NULL);
	int faults = 0, sum = 0;
	for (int i = 0; i < 3; i++) {
		if (sigsetjmp(env, 1) == 0)
			sum += *null_ptr;
		else
			faults++;
	}
	printf("fault %d %d\n", faults, sum);
	return 0;
}
