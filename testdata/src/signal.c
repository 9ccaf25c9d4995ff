/* signal: a handler entered from the kernel (after the kill system call) and left
 * through sigreturn: both discontinuities the trace shows as exceptions. */
#include <signal.h>
#include <stdio.h>
#include <unistd.h>

static volatile sig_atomic_t hits;

static void handler(int sig)
{
	for (int i = 0; i < 10; i++)
		hits += sig & 1;
}

int main(void)
{
	signal(SIGUSR1, handler);
	for (int i = 0; i < 3; i++)
		kill(getpid(), SIGUSR1);
	printf("signal %d\n", (int)hits);
	return 0;
}
