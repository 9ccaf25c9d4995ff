/* A session decoded on a thread of its own, delivered in order on the caller's
 * (run.h). Items travel in batches, so that the two threads meet once per
 * thousand elements, not per element; taken batches go back to the producer to be
 * filled again (fresh memory for every batch would cost page faults). */
#include "crash.h"
#include "run.h"

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/membarrier.h>
#include <sys/syscall.h>

#define PIPE_BATCH 4096 /* items a batch holds (a batch handed over is a wake-up) */
#define PIPE_QUEUED 8   /* batches queued before the producer waits */
#define PIPE_POLL_NS (50 * 1000 * 1000) /* an idle consumer looks for a crash this often */
#define PIPE_SETTLE_NS (1000 * 1000) /* after a crash, how often it looks for the end of a fill */

enum item_kind { item_range, item_elem, item_sb, item_log, item_progress };

struct item {
	union {
		struct dec_range range; /* as most elements travel */
		size_t elem; /* a whole element, at this offset into the batch's text */
		struct {
			size_t sb; /* the record, at this offset into the text */
			size_t filename, build_id; /* offsets into the text, or SIZE_MAX */
		} sb;
		struct {
			enum cst_log_level level;
			size_t msg;
		} log;
		struct {
			uint64_t done, total;
		} progress;
	} u;
	uint8_t kind; /* enum item_kind */
};

struct batch {
	struct batch *next;
	unsigned n;
	struct item v[PIPE_BATCH];
	struct cst_buf text; /* the strings and bytes the items point at */
};

struct dec_pipe {
	const struct dec_pipe_run *r;
	pthread_t consumer, producer;
	/* the producer as it knows itself (set first thing on its thread, read on it
	 * and on the threads it starts) */
	pthread_t decoding;
	pthread_mutex_t lock;
	pthread_cond_t ready, room; /* a batch was queued; one was taken */
	struct batch *head, *tail;  /* queued, oldest first */
	unsigned queued;
	struct batch *spare;        /* taken batches, to be filled again */
	struct batch *cur;          /* the producer's, being filled */
	/* set while the producer adds an item (fill_begin): after a crash the
	 * consumer delivers @cur only once no item is half made, and no other
	 * can be begun (fill_settled) */
	int filling;
	bool asym; /* fill_begin needs no fence (membarrier_ready) */
	bool done;                  /* the producer has finished: @ret is its result */
	int ret;
	int stop;                   /* the consumer's stop value: the producer ends
				     * (written under the lock, read without it) */
	/* The producer's last whole element, whose context a range item is in,
	 * and the element the consumer last delivered, of which a range item
	 * changes only its own fields. */
	struct cst_elem sent;
	bool sent_any;
	struct cst_elem cur_elem;
};

static bool crashed(const struct dec_pipe *p)
{
	return dec_crash_seen(p->r->crash);
}

/* The producer's side of the handshake below costs no fence per item when the
 * kernel can make every thread of the process pass one on the consumer's
 * request (membarrier, Linux 4.14): two locked instructions per element were
 * 4 % of script's CPU on a per-CPU recording. */
static bool membarrier_ready(void)
{
#ifdef __NR_membarrier
	return syscall(__NR_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0;
#else
	return false;
#endif
}

static void membarrier_all(void)
{
#ifdef __NR_membarrier
	syscall(__NR_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0);
#endif
}

/* The producer is about to add an item. A crash in OpenCSD on any decoding thread
 * (a worker's, or this one's) ends the run: what was made before it is delivered
 * (dec_pipe_run) while this thread stops here for good, between two items. A
 * worker's crash does not stop the producer by itself, which would go on
 * replaying what the other workers decoded into the batch being delivered.
 * The mark and the look must not pass each other: a full fence between them,
 * or (p->asym) the one membarrier_all() of the consumer that looks for the mark
 * after a crash. */
static void fill_begin(struct dec_pipe *p)
{
	bool crash;

	if (!p->r->crash)
		return; /* no crash watch: nothing waits */
	if (p->asym) {
		__atomic_store_n(&p->filling, 1, __ATOMIC_RELAXED);
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		crash = dec_crash_seen_relaxed(p->r->crash);
	} else {
		__atomic_store_n(&p->filling, 1, __ATOMIC_SEQ_CST);
		crash = crashed(p);
	}
	if (crash) {
		__atomic_store_n(&p->filling, 0, __ATOMIC_RELEASE);
		for (;;)
			pause(); /* the crashed thread ends the process */
	}
}

static void fill_end(struct dec_pipe *p)
{
	if (p->r->crash)
		__atomic_store_n(&p->filling, 0, __ATOMIC_RELEASE);
}

/* After a crash, on the consumer: the producer adds no item now, nor ever will. */
static bool fill_settled(struct dec_pipe *p)
{
	if (p->asym)
		membarrier_all();
	return !__atomic_load_n(&p->filling, __ATOMIC_SEQ_CST);
}

static struct batch *batch_take(struct dec_pipe *p)
{
	struct batch *b;

	pthread_mutex_lock(&p->lock);
	b = p->spare;
	if (b)
		p->spare = b->next;
	pthread_mutex_unlock(&p->lock);
	if (!b)
		b = calloc(1, sizeof(*b));
	if (b) {
		b->next = NULL;
		b->n = 0;
		b->text.len = 0;
		b->text.failed = false;
	}
	return b;
}

static void batches_free(struct batch *b)
{
	while (b) {
		struct batch *next = b->next;

		cst_buf_fini(&b->text);
		free(b);
		b = next;
	}
}

/* Queue the producer's batch (waiting while the queue is full, unless @last) and
 * start a fresh one. Returns 0, the consumer's stop value, or -cste_nomem. */
static int publish(struct dec_pipe *p, bool last)
{
	struct batch *b = p->cur;
	int stop;

	pthread_mutex_lock(&p->lock);
	while (!last && p->queued >= PIPE_QUEUED && !p->stop)
		pthread_cond_wait(&p->room, &p->lock);
	stop = p->stop;
	if (b && b->n && !stop) {
		if (p->tail)
			p->tail->next = b;
		else
			p->head = b;
		p->tail = b;
		p->queued++;
		pthread_cond_signal(&p->ready);
		b = NULL;
	}
	if (b) { /* empty, or no longer wanted */
		b->next = p->spare;
		p->spare = b;
	}
	p->cur = NULL;
	pthread_mutex_unlock(&p->lock);
	if (stop)
		return stop;
	if (!last && !(p->cur = batch_take(p)))
		return -cste_nomem;
	return 0;
}

/* The next item of the producer's batch; NULL with *@err set when none. */
static struct item *next_item(struct dec_pipe *p, int *err)
{
	*err = __atomic_load_n(&p->stop, __ATOMIC_RELAXED);
	if (*err)
		return NULL;
	if (!p->cur) { /* no memory for a batch before: the decode is ending */
		*err = -cste_nomem;
		return NULL;
	}
	if (p->cur->n == PIPE_BATCH && (*err = publish(p, false)) != 0)
		return NULL;
	return &p->cur->v[p->cur->n++];
}

/* @n bytes copied into the batch's text; SIZE_MAX when out of memory. */
static size_t keep(struct batch *b, const void *bytes, size_t n)
{
	size_t at = b->text.len;

	return cst_buf_put(&b->text, bytes, n) ? at : SIZE_MAX;
}

static int add_elem(struct dec_pipe *p, const struct cst_elem *e)
{
	struct item *it;
	int err;

	if (!(it = next_item(p, &err)))
		return err;
	if (p->sent_any && cst_elem_same_context(e, &p->sent)) {
		it->kind = item_range;
		dec_range_from(&it->u.range, e);
		return 0;
	}
	it->kind = item_elem;
	p->sent = *e;
	p->sent.ocsd = NULL; /* OpenCSD's element lives as long as the callback only */
	p->sent_any = true;
	if ((it->u.elem = keep(p->cur, &p->sent, sizeof(p->sent))) == SIZE_MAX) {
		p->cur->n--;
		p->sent_any = false;
		return -cste_nomem;
	}
	return 0;
}

static int pipe_elem(void *ctx, const struct cst_elem *e)
{
	struct dec_pipe *p = ctx;
	int ret;

	fill_begin(p);
	ret = add_elem(p, e);
	fill_end(p);
	return ret;
}

static int add_sb(struct dec_pipe *p, const struct cst_sideband *sb)
{
	struct item *it;
	int err;

	if (!(it = next_item(p, &err)))
		return err;
	it->kind = item_sb;
	it->u.sb.filename = it->u.sb.build_id = SIZE_MAX;
	if ((it->u.sb.sb = keep(p->cur, sb, sizeof(*sb))) == SIZE_MAX) {
		p->cur->n--;
		return -cste_nomem;
	}
	if (sb->filename &&
	    (it->u.sb.filename = keep(p->cur, sb->filename, strlen(sb->filename) + 1)) == SIZE_MAX)
		return -cste_nomem;
	if (sb->build_id && sb->build_id_size &&
	    (it->u.sb.build_id = keep(p->cur, sb->build_id, sb->build_id_size)) == SIZE_MAX)
		return -cste_nomem;
	return 0;
}

static int pipe_sb(void *ctx, const struct cst_sideband *sb)
{
	struct dec_pipe *p = ctx;
	int ret;

	fill_begin(p);
	ret = add_sb(p, sb);
	fill_end(p);
	return ret;
}

/* Only the producer fills its batch. The caller's thread, and the workers of a
 * fragment decoded on threads (code memory found missing as a worker first reads
 * it), tell their messages where they are. */
static bool on_producer(const struct dec_pipe *p)
{
	pthread_t self = pthread_self();

	return p && !pthread_equal(self, p->consumer) && pthread_equal(self, p->decoding);
}

/* A message about to be lost (no memory, or the consumer stopped) is printed
 * where it is: false. */
static bool add_log(struct dec_pipe *p, enum cst_log_level level, const char *msg)
{
	struct item *it;
	size_t at;
	int err;

	if (!(it = next_item(p, &err)))
		return false;
	at = keep(p->cur, msg, strlen(msg) + 1);
	if (at == SIZE_MAX) {
		p->cur->n--;
		return false;
	}
	it->kind = item_log;
	it->u.log.level = level;
	it->u.log.msg = at;
	return true;
}

bool dec_pipe_log(struct dec_pipe *p, enum cst_log_level level, const char *msg)
{
	bool queued;

	if (!on_producer(p))
		return false;
	fill_begin(p);
	queued = add_log(p, level, msg);
	fill_end(p);
	return queued;
}

bool dec_pipe_progress(struct dec_pipe *p, uint64_t done, uint64_t total)
{
	struct item *it;
	int err;

	if (!on_producer(p))
		return false;
	fill_begin(p);
	it = next_item(p, &err);
	if (it) { /* else progress of a run that stops: nothing to tell */
		it->kind = item_progress;
		it->u.progress.done = done;
		it->u.progress.total = total;
	}
	fill_end(p);
	return true;
}

static void *producer_main(void *arg)
{
	struct dec_pipe *p = arg;
	const struct dec_pipe_run *r = p->r;
	int ret;

	p->decoding = pthread_self();
	ret = r->produce(r->produce_ctx, pipe_elem, r->sb_fn ? pipe_sb : NULL, p);

	fill_begin(p);
	publish(p, true); /* the last batch: it allocates nothing, and a stop is known */
	fill_end(p);
	pthread_mutex_lock(&p->lock);
	p->ret = ret;
	p->done = true;
	pthread_cond_signal(&p->ready);
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

/* Hand @b's items to the caller; once *@stop is set (by a callback, or before),
 * only messages and progress, which the serial run tells after it stops too. */
static void deliver(struct dec_pipe *p, struct batch *b, int *stop)
{
	const struct dec_pipe_run *r = p->r;
	const char *text = (const char *)b->text.p;

	for (unsigned i = 0; i < b->n; i++) {
		struct item *it = &b->v[i];
		struct cst_sideband sb;
		int ret = 0;

		switch (it->kind) {
		case item_range:
			/* made in order, so the element before is always delivered first,
			 * even after a stop */
			dec_range_into(&p->cur_elem, &it->u.range);
			if (!*stop && r->elem_fn)
				ret = r->elem_fn(r->ctx, &p->cur_elem);
			break;
		case item_elem:
			memcpy(&p->cur_elem, text + it->u.elem, sizeof(p->cur_elem));
			if (!*stop && r->elem_fn)
				ret = r->elem_fn(r->ctx, &p->cur_elem);
			break;
		case item_sb:
			if (*stop || !r->sb_fn)
				break;
			memcpy(&sb, text + it->u.sb.sb, sizeof(sb));
			sb.filename = it->u.sb.filename == SIZE_MAX ? NULL : text + it->u.sb.filename;
			sb.build_id = it->u.sb.build_id == SIZE_MAX
					      ? NULL
					      : (const uint8_t *)text + it->u.sb.build_id;
			ret = r->sb_fn(r->ctx, &sb);
			break;
		case item_log:
			if (r->log && r->log->fn)
				r->log->fn(r->log->ctx, it->u.log.level, text + it->u.log.msg);
			break;
		case item_progress:
			if (r->progress)
				r->progress(r->progress_ctx, it->u.progress.done, it->u.progress.total);
			break;
		}
		if (ret && !*stop)
			*stop = ret;
	}
}

/* The next queued batch, or NULL at the end (*@crash when the producer crashed). */
static struct batch *wait_batch(struct dec_pipe *p, bool *crash)
{
	struct batch *b;

	pthread_mutex_lock(&p->lock);
	while (!p->head && !p->done) {
		if ((*crash = crashed(p)))
			break;
		dec_crash_wait(p->r->crash, &p->ready, &p->lock, PIPE_POLL_NS);
	}
	b = p->head;
	if (b) {
		p->head = b->next;
		if (!p->head)
			p->tail = NULL;
		p->queued--;
		pthread_cond_signal(&p->room);
	}
	pthread_mutex_unlock(&p->lock);
	return b;
}

static void pipe_free(struct dec_pipe *p)
{
	batches_free(p->spare);
	batches_free(p->cur);
	pthread_cond_destroy(&p->ready);
	pthread_cond_destroy(&p->room);
	pthread_mutex_destroy(&p->lock);
	free(p);
}

int dec_pipe_run(const struct dec_pipe_run *r, struct dec_pipe **active, bool *started)
{
	struct dec_pipe *p = calloc(1, sizeof(*p));
	bool crash = false;
	int stop = 0, ret;

	*started = false;
	if (!p)
		return 0;
	p->r = r;
	p->consumer = pthread_self();
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->ready, NULL);
	pthread_cond_init(&p->room, NULL);
	p->cur = batch_take(p);
	p->asym = r->crash && !r->full_fence && membarrier_ready();
	*active = p;
	dec_crash_arm(r->crash); /* decoding runs on a thread of its own */
	if (!p->cur || pthread_create(&p->producer, NULL, producer_main, p) != 0) {
		dec_crash_disarm(r->crash);
		*active = NULL;
		pipe_free(p);
		return 0;
	}
	*started = true;
	for (bool settled = false;;) {
		struct batch *b = wait_batch(p, &crash);

		if (!b && crash && !settled) {
			/* the producer may be adding an item (a worker crashed while it
			 * replays); once it is not, it adds none (fill_begin), and what
			 * it queued meanwhile is delivered first */
			struct timespec tick = {0, PIPE_SETTLE_NS};

			settled = fill_settled(p);
			if (!settled)
				nanosleep(&tick, NULL);
			continue;
		}
		if (!b)
			break;
		deliver(p, b, &stop);
		if (stop && !__atomic_load_n(&p->stop, __ATOMIC_RELAXED)) {
			pthread_mutex_lock(&p->lock);
			__atomic_store_n(&p->stop, stop, __ATOMIC_RELAXED);
			pthread_cond_broadcast(&p->room);
			pthread_mutex_unlock(&p->lock);
		}
		pthread_mutex_lock(&p->lock);
		b->next = p->spare;
		p->spare = b;
		pthread_mutex_unlock(&p->lock);
	}
	if (crash) {
		/* The producer stopped between two items: in the decoder (its own
		 * crash) or before its next item (fill_begin). What its unfinished
		 * batch holds came before the crash too. It is parked for good:
		 * nothing to join or free. */
		if (p->cur)
			deliver(p, p->cur, &stop);
		return -cste_crashed;
	}
	pthread_join(p->producer, NULL);
	dec_crash_disarm(r->crash);
	*active = NULL;
	ret = stop ? stop : p->ret;
	pipe_free(p);
	return ret;
}
