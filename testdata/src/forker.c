/* A process that forks, then starts a thread: the child calls child_work, the
 * thread thread_work and the parent parent_work, each a known number of times.
 * Under QEMU's user mode the child runs in a QEMU process of its own; synth
 * traces the parent (its two threads) alone, and the fork made no thread. It
 * prints its process and thread IDs, which the trace's context IDs must be.
 * Usage: forker [CHILD THREAD PARENT] (calls of each; default 300 200 100). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile unsigned sink;

__attribute__((noinline)) static void child_work(unsigned i)
{
	sink += i * 3u + 1u;
}

__attribute__((noinline)) static void thread_work(unsigned i)
{
	sink += i * 7u + 2u;
}

__attribute__((noinline)) static void parent_work(unsigned i)
{
	sink += i * 5u + 3u;
}

static unsigned nthread = 200;
static long thread_id;

static void *thread_main(void *arg)
{
	(void)arg;
	thread_id = syscall(SYS_gettid);
	for (unsigned i = 0; i < nthread; i++)
		thread_work(i);
	return NULL;
}

int main(int argc, char **argv)
{
	unsigned nchild = argc > 3 ? (unsigned)atoi(argv[1]) : 300;
	unsigned nparent = argc > 3 ? (unsigned)atoi(argv[3]) : 100;
	pthread_t t;
	pid_t pid;

	if (argc > 3)
		nthread = (unsigned)atoi(argv[2]);
	pid = fork();
	if (pid < 0)
		return 1;
	if (pid == 0) {
		for (unsigned i = 0; i < nchild; i++)
			child_work(i);
		_exit(0);
	}
	/* the thread after the child has surely run: its clone is the second */
	waitpid(pid, NULL, 0);
	if (pthread_create(&t, NULL, thread_main, NULL))
		return 1;
	pthread_join(t, NULL);
	for (unsigned i = 0; i < nparent; i++)
		parent_work(i);
	printf("forker: process %ld thread %ld\n", (long)getpid(), thread_id);
	return 0;
}
