/* threads: four threads running at once; QEMU logs their instructions interleaved (and
 * sometimes in the middle of another thread's strace line). synth traces them as one
 * stream whose thread switches are exceptions: the decode must still be exact.
 * Each thread waits for the others to start before it works: QEMU gives a new thread
 * the vCPU index above the highest live one, so a thread that ended before the next
 * one started would hand its vCPU on, and the run would have fewer than four CPUs.
 * argv[1]: iterations per thread (default 3000; the benchmarks ask for more).
 * argv[2] "serial": each thread is joined before the next is made, so that QEMU
 * hands one vCPU from thread to thread (what synth must warn about). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static volatile long acc[4];
static long iterations = 3000;
static pthread_barrier_t started;

static void *work(void *p)
{
	long k = (long)p;
	pthread_barrier_wait(&started);
	for (long i = 0; i < iterations; i++)
		acc[k] += i ^ k;
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc > 1)
		iterations = strtol(argv[1], NULL, 0);
	int serial = argc > 2 && !strcmp(argv[2], "serial");
	pthread_t t[3];
	pthread_barrier_init(&started, NULL, serial ? 1 : 4);
	for (long k = 0; k < 3; k++) {
		pthread_create(&t[k], NULL, work, (void *)k);
		if (serial)
			pthread_join(t[k], NULL);
	}
	work((void *)3);
	for (int k = 0; !serial && k < 3; k++)
		pthread_join(t[k], NULL);
	printf("threads %ld\n", acc[0] + acc[1] + acc[2] + acc[3]);
	return 0;
}
