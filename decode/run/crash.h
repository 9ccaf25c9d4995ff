/* Internal to decode/run/: the crash hand-shake's one home. A program that
 * contains OpenCSD's crashes installs a struct cst_crash_watch on the session
 * (cst_session_watch_crashes); the runs that decode on threads beside the
 * caller's (split.c's workers replayed on the caller's thread, pipe.c's
 * producer) arm it while those threads run, look at it where they wait for
 * them, and disarm it after. Nothing else reads the watch. */
#ifndef CSTRACE_DECODE_RUN_CRASH_H
#define CSTRACE_DECODE_RUN_CRASH_H

#include "cstrace/decode.h"

#include <pthread.h>
#include <stdint.h>
#include <time.h>

/* Decoding threads run beside the caller's: a crash of one can be caught. */
static inline void dec_crash_arm(struct cst_crash_watch *w)
{
	if (w)
		__atomic_store_n(&w->state, -1, __ATOMIC_SEQ_CST);
}

/* They ended: a crash now is the caller's own. */
static inline void dec_crash_disarm(struct cst_crash_watch *w)
{
	if (w)
		__atomic_store_n(&w->state, 0, __ATOMIC_SEQ_CST);
}

/* Has a decoding thread crashed? (Ordered with the caller's other accesses;
 * dec_crash_seen_relaxed where a fence or a membarrier orders it.) */
static inline bool dec_crash_seen(const struct cst_crash_watch *w)
{
	return w && __atomic_load_n(&w->state, __ATOMIC_SEQ_CST) > 0;
}

static inline bool dec_crash_seen_relaxed(const struct cst_crash_watch *w)
{
	return w && __atomic_load_n(&w->state, __ATOMIC_RELAXED) > 0;
}

/* A deadline @ns nanoseconds from now for pthread_cond_timedwait, whose
 * conditions here use the default clock (CLOCK_REALTIME); 64-bit, so that
 * seconds' worth fits on 32-bit hosts too. */
static inline void dec_deadline_after(struct timespec *t, int64_t ns)
{
	int64_t nsec;

	clock_gettime(CLOCK_REALTIME, t);
	nsec = (int64_t)t->tv_nsec + ns;
	t->tv_sec += (time_t)(nsec / 1000000000);
	t->tv_nsec = (long)(nsec % 1000000000);
}

/* Wait on @cond (with @lock held): with a watch, for @poll_ns at most, as a
 * crashed thread never signals; the caller then looks at the watch. */
static inline void dec_crash_wait(const struct cst_crash_watch *w, pthread_cond_t *cond,
				  pthread_mutex_t *lock, int64_t poll_ns)
{
	struct timespec t;

	if (!w) {
		pthread_cond_wait(cond, lock);
		return;
	}
	dec_deadline_after(&t, poll_ns);
	pthread_cond_timedwait(cond, lock, &t);
}

#endif
