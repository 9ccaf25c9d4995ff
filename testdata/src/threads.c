/* threads: four threads running at once; QEMU logs their instructions interleaved (and
 * sometimes in the middle of another thread's strace line). synth traces them as one
 * stream whose thread switches are exceptions: the decode must still be exact. */
#include <pthread.h>
#include <stdio.h>

static volatile long acc[4];

static void *work(void *p)
{
	long k = (long)p;
	for (int i = 0; i < 3000; i++)
		acc[k] += i ^ k;
	return NULL;
}

int main(void)
{
	pthread_t t[3];
	for (long k = 0; k < 3; k++)
		pthread_create(&t[k], NULL, work, (void *)k);
	work((void *)3);
	for (int k = 0; k < 3; k++)
		pthread_join(t[k], NULL);
	printf("threads %ld\n", acc[0] + acc[1] + acc[2] + acc[3]);
	return 0;
}
