/* Internal to decode/: deadlines for pthread_cond_timedwait, whose conditions
 * here use the default clock (CLOCK_REALTIME). Waits that look for a crashed
 * thread (which never signals) wake up by these. */
#ifndef CSTRACE_DECODE_DEADLINE_H
#define CSTRACE_DECODE_DEADLINE_H

#include <stdint.h>
#include <time.h>

/* @ns nanoseconds from now (64-bit: seconds' worth fits on 32-bit hosts too). */
static inline void dec_deadline_after(struct timespec *t, int64_t ns)
{
	int64_t nsec;

	clock_gettime(CLOCK_REALTIME, t);
	nsec = (int64_t)t->tv_nsec + ns;
	t->tv_sec += (time_t)(nsec / 1000000000);
	t->tv_nsec = (long)(nsec % 1000000000);
}

#endif
