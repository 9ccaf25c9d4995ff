/* A crash in OpenCSD on a decoding worker, behind the pipe (decode/run/pipe.c):
 * the crash handler marks the crash (cst_session_watch_crashes) on the worker's
 * thread while the pipe's producer, which replays what the other workers made,
 * goes on. The consumer must deliver exactly what the producer made before it
 * stopped, in order, and the producer must make nothing more: the restarted child
 * leaves out as many elements as were delivered. Here a thread plays the crashed
 * worker; the producer either goes on making elements (the merge replaying other
 * queues) or waits for the crashed worker for good (the merge needs its queue),
 * with either handshake (pipe.c, fill_begin). */
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <time.h>

#include "run/run.h"
#include "test.h"

#define CRASH_AFTER 20000 /* elements made before the worker "crashes" */
#define MAX_MADE 5000000  /* a producer that never stops ends here */

struct run {
	struct cst_crash_watch watch;
	bool wait_after_crash; /* the producer waits for the crashed worker */
	uint64_t made;         /* elements the producer made (atomic) */
	uint64_t delivered;    /* elements the consumer got */
	uint64_t out_of_order;
};

static void *crashing_worker(void *arg)
{
	struct run *r = arg;
	struct timespec tick = {0, 100 * 1000};

	while (__atomic_load_n(&r->made, __ATOMIC_SEQ_CST) < CRASH_AFTER)
		nanosleep(&tick, NULL);
	/* what cli/isolate.c's handler does on the crashed thread */
	__atomic_store_n(&r->watch.state, 1, __ATOMIC_SEQ_CST);
	return NULL;
}

static int produce(void *ctx, cst_elem_fn elem_fn, cst_sideband_fn sb_fn, void *cb_ctx)
{
	struct run *r = ctx;
	pthread_t worker;
	struct cst_elem e;

	(void)sb_fn;
	memset(&e, 0, sizeof(e));
	e.type = cst_elem_instr_range;
	e.isa = cst_isa_a64;
	e.num_insns = 1;
	e.last_size = 4;
	if (pthread_create(&worker, NULL, crashing_worker, r))
		return -cste_nomem;
	pthread_detach(worker);
	for (uint64_t i = 0; i < MAX_MADE; i++) {
		int ret;

		if (r->wait_after_crash && i == CRASH_AFTER) {
			/* the merge waits for the crashed worker's queue: for good */
			for (;;)
				pause();
		}
		e.start = 0x400000 + 4 * i;
		e.end = e.start + 4;
		e.offset = i;
		/* a new context now and then: whole elements between the ranges */
		e.pid = (int32_t)(i / 997);
		if ((ret = elem_fn(cb_ctx, &e)))
			return ret;
		__atomic_store_n(&r->made, i + 1, __ATOMIC_SEQ_CST);
	}
	return 0;
}

static int on_elem(void *ctx, const struct cst_elem *e)
{
	struct run *r = ctx;

	if (e->offset != r->delivered || e->start != 0x400000 + 4 * r->delivered ||
	    e->pid != (int32_t)(r->delivered / 997))
		r->out_of_order++;
	r->delivered++;
	return 0;
}

static void run_case(bool wait_after_crash, bool full_fence)
{
	static struct run runs[2][2];
	struct run *r = &runs[wait_after_crash][full_fence];
	struct dec_pipe_run pr = {.produce = produce, .produce_ctx = r, .elem_fn = on_elem,
				  .ctx = r, .crash = &r->watch, .full_fence = full_fence};
	struct dec_pipe *active = NULL;
	struct timespec settle = {0, 200 * 1000 * 1000};
	bool started = false;
	uint64_t made;
	int ret;

	r->wait_after_crash = wait_after_crash;
	ret = dec_pipe_run(&pr, &active, &started);
	CHECK(started);
	CHECK_EQ_INT(ret, -cste_crashed);
	made = __atomic_load_n(&r->made, __ATOMIC_SEQ_CST);
	/* the producer stopped for good: nothing more is made */
	nanosleep(&settle, NULL);
	CHECK_EQ_INT(__atomic_load_n(&r->made, __ATOMIC_SEQ_CST), made);
	CHECK(made >= CRASH_AFTER && made < MAX_MADE);
	/* everything made before it stopped was delivered, once, in order */
	CHECK_EQ_INT(r->delivered, made);
	CHECK_EQ_INT(r->out_of_order, 0);
	if (wait_after_crash)
		CHECK_EQ_INT(made, CRASH_AFTER);
}

int main(void)
{
	/* the handshake with membarrier where the kernel has it, and with fences */
	for (int fence = 0; fence < 2; fence++) {
		run_case(false, fence);
		run_case(true, fence);
	}
	return test_done();
}
