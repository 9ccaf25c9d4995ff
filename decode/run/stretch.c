/* Views over stretches of an element stream that is already in order (run.h):
 * the caller's thread cuts the stream it makes into stretches, workers run a
 * view over each, and the caller takes their output back in order. The split
 * runs of split.c cut a buffer before it is decoded; this cuts what a merge of
 * many decoders (perf.data in time order) made, after it. */
#include "run.h"

#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* Elements a stretch holds (a copy is 184 bytes on LP64). Fewer make the
 * workers open their views and learn more often; more hold more in memory. */
#define STRETCH_ELEMS 4096u
/* stretches between the one being filled and the one being taken back, per
 * worker thread */
#define STRETCH_AHEAD 2u
#define STRETCH_THREADS 16u
/* elements of a trace ID before a stretch its view learns from (views'
 * learn): a time-ordered merge leaves a CPU after its timestamp, and its next
 * stretch starts with none */
#define STRETCH_CONTEXT 8u
#define STRETCH_IDS 128u
#define STRETCH_ALIGN 16u

/* What a view made of a stretch, in order: elements it deferred (to the
 * caller's thread), or the bytes of those it printed and what it knew after
 * them. */
struct part {
	bool printed;
	unsigned first, count; /* its elements in the stretch */
	size_t bytes_at, bytes_len;
	size_t state_at, state_len;
	uint64_t offset;       /* the last printed element's */
	bool has_offset;
};

/* What a trace ID's view learns from before its next stretch: its last
 * elements and its last timestamp, numbered in stream order. */
struct context {
	struct cst_elem last[STRETCH_CONTEXT];
	uint64_t seq[STRETCH_CONTEXT];
	unsigned n, at; /* how many held; where the next goes */
	struct cst_elem ts;
	uint64_t ts_seq;
	bool has_ts;
};

struct stretch {
	struct cst_elem *v;
	unsigned n;
	uint8_t trace_id;
	/* the context its view learns from first, oldest first */
	struct cst_elem ctx[STRETCH_CONTEXT + 1];
	unsigned nctx;
	/* its worker is through with it (under the lock); whether it waits for
	 * one or is being filled, the ring's counts say */
	bool done;
	/* the worker's: */
	struct part *parts;
	unsigned nparts;
	size_t cap_parts;
	struct cst_buf bytes, states;
	bool to_caller; /* the view gave up, or none could be opened: every
			 * element goes to the caller's thread */
	int err;
};

struct dec_stretches {
	struct dec_views views;
	cst_elem_fn fn;
	cst_sideband_fn sb_fn;
	void *ctx;
	/* CPUs whose loss went to @sb_fn and was not yet taken: a symbolizer gives a
	 * loss to the next element of its CPU (of any CPU when either has none),
	 * which therefore goes to @fn, on the thread that heard the loss */
	int32_t *lost;
	size_t nlost, cap_lost;
	/* views that learn (cst_view_ops.learn): each ID's context, and the
	 * stream's count of elements */
	struct context *contexts[STRETCH_IDS];
	uint64_t seq;
	pthread_mutex_t lock;
	pthread_cond_t work, done;
	struct stretch *ring;
	unsigned nring;
	/* counted up, a stretch at index % nring: the oldest not taken back, the
	 * one being filled (@fill), the next a worker may take */
	uint64_t head, tail, next_run;
	struct stretch *fill;
	bool stop;
	/* a stop value or error met: nothing more goes in or out */
	int ended;
	pthread_t tid[STRETCH_THREADS];
	unsigned nthreads;
	struct dec_stretch_stats stats;
};

/* ------------------------------------------------------------- the workers */

/* A view's bytes, into the stretch being run. */
static int stretch_write(void *ctx, const char *bytes, size_t len)
{
	struct stretch *s = ctx;

	return cst_buf_put(&s->bytes, bytes, len) ? 0 : -cste_nomem;
}

/* The part element @i goes into: the last when of its kind, else a new one. */
static struct part *part_for(struct stretch *s, bool printed, unsigned i, size_t bytes_at)
{
	struct part *p = s->nparts ? &s->parts[s->nparts - 1] : NULL;

	if (p && p->printed == printed)
		return p;
	if (CST_GROW(s->parts, s->cap_parts, (size_t)s->nparts + 1) < 0)
		return NULL;
	p = &s->parts[s->nparts++];
	memset(p, 0, sizeof(*p));
	p->printed = printed;
	p->first = i;
	p->bytes_at = bytes_at;
	return p;
}

/* What the view knows after the printed part that ends here. */
static int end_printed(const struct dec_stretches *ss, struct stretch *s, void *view)
{
	struct part *p = s->nparts ? &s->parts[s->nparts - 1] : NULL;
	size_t size = ss->views.ops->state_size;
	uint8_t *at;

	if (!p || !p->printed)
		return 0;
	p->bytes_len = s->bytes.len - p->bytes_at;
	/* each state where any type may start, as the view's own would */
	if (s->states.len % STRETCH_ALIGN &&
	    !cst_buf_zeros(&s->states, STRETCH_ALIGN - s->states.len % STRETCH_ALIGN))
		return -cste_nomem;
	p->state_at = s->states.len;
	at = size ? cst_buf_room(&s->states, size) : NULL;
	if (size && !at)
		return -cste_nomem;
	p->state_len = size ? ss->views.ops->state(view, at, size) : 0;
	s->states.len = p->state_at + p->state_len;
	return 0;
}

static int view_elements(const struct dec_stretches *ss, struct stretch *s, void *view)
{
	const struct cst_view_ops *ops = ss->views.ops;

	for (unsigned i = 0; i < s->nctx; i++) {
		int ret = ops->learn(view, &s->ctx[i]);

		if (ret < 0)
			return ret;
	}
	for (unsigned i = 0; i < s->n; i++) {
		size_t mark = s->bytes.len;
		int ret = ops->elem(view, &s->v[i]);
		bool printed = ret == cst_view_printed;
		struct part *p;

		if (ret < 0)
			return ret;
		if (ret == cst_view_give_up) {
			s->to_caller = true;
			return 0;
		}
		if (!printed) {
			s->bytes.len = mark; /* a deferred element is unprinted */
			if ((ret = end_printed(ss, s, view)) < 0)
				return ret;
		}
		p = part_for(s, printed, i, mark);
		if (!p || s->bytes.failed)
			return -cste_nomem;
		p->count++;
		if (printed) {
			p->offset = s->v[i].offset;
			p->has_offset = true;
		}
	}
	return end_printed(ss, s, view);
}

static void run_stretch(struct dec_stretches *ss, struct stretch *s)
{
	const struct cst_view_ops *ops = ss->views.ops;
	void *worker = ops->worker_open(ss->views.ctx);
	void *view = worker ? ops->open(worker, stretch_write, s) : NULL;

	s->nparts = 0;
	s->bytes.len = s->states.len = 0;
	s->bytes.failed = s->states.failed = false;
	s->to_caller = false;
	s->err = 0;
	if (view) {
		s->err = view_elements(ss, s, view);
		ops->close(view);
	} else {
		s->to_caller = true;
	}
	if (worker)
		ops->worker_close(ss->views.ctx, worker);
}

static void *stretch_worker(void *arg)
{
	struct dec_stretches *ss = arg;

	pthread_mutex_lock(&ss->lock);
	for (;;) {
		struct stretch *s;

		while (!ss->stop && ss->next_run == ss->tail)
			pthread_cond_wait(&ss->work, &ss->lock);
		if (ss->stop)
			break;
		s = &ss->ring[ss->next_run++ % ss->nring];
		pthread_mutex_unlock(&ss->lock);
		run_stretch(ss, s);
		pthread_mutex_lock(&ss->lock);
		s->done = true;
		pthread_cond_broadcast(&ss->done);
	}
	pthread_mutex_unlock(&ss->lock);
	return NULL;
}

/* ------------------------------------------------------------- the caller */

/* States of @s's parts from @from on that no view adopted, nor will. */
static void drop_states(const struct dec_stretches *ss, struct stretch *s, unsigned from)
{
	for (unsigned k = from; k < s->nparts; k++)
		if (s->parts[k].state_len && ss->views.ops->drop)
			ss->views.ops->drop(ss->views.ctx, s->states.p + s->parts[k].state_at,
					    s->parts[k].state_len);
	s->nparts = 0;
}

/* @s's elements from @first on, to the caller's thread as a serial run gives
 * them. */
static int serially(struct dec_stretches *ss, struct stretch *s, unsigned first)
{
	int ret = 0;

	for (unsigned i = first; i < s->n && !ret; i++)
		ret = ss->fn(ss->ctx, &s->v[i]);
	ss->stats.serial += s->n - first;
	return ret;
}

/* A printed part: what the caller's thread still holds goes out first, then
 * its view takes on the state, then the bytes (run.h's split_out.view). */
static int take_printed(struct dec_stretches *ss, struct stretch *s, unsigned k, bool *refused)
{
	struct part *p = &s->parts[k];
	const struct dec_views *v = &ss->views;
	int ret;

	if (p->state_len) {
		ret = v->write(v->write_ctx, NULL, 0, 0, 0, false);
		if (ret)
			return ret;
		ret = v->ops->adopt(v->ctx, s->states.p + p->state_at, p->state_len);
		if (ret == cst_view_give_up) {
			*refused = true; /* and the state is still to drop */
			return 0;
		}
		if (ret)
			return ret;
		p->state_len = 0; /* the caller's view's own now */
	}
	ss->stats.viewed += p->count;
	return p->count ? v->write(v->write_ctx, (const char *)s->bytes.p + p->bytes_at,
				   p->bytes_len, p->count, p->offset, p->has_offset)
			: 0;
}

/* Take stretch @s back on the caller's thread, in stream order. */
static int take_back(struct dec_stretches *ss, struct stretch *s)
{
	int ret = s->err;

	if (ret || s->to_caller) {
		drop_states(ss, s, 0);
		return ret ? ret : serially(ss, s, 0);
	}
	for (unsigned k = 0; k < s->nparts && !ret; k++) {
		const struct part *p = &s->parts[k];
		bool refused = false;

		if (!p->printed) {
			for (unsigned i = p->first; i < p->first + p->count && !ret; i++)
				ret = ss->fn(ss->ctx, &s->v[i]);
			ss->stats.deferred += p->count;
			continue;
		}
		ret = take_printed(ss, s, k, &refused);
		if (refused) {
			/* what the worker's view made from here stood on what the
			 * caller's does not know: its own thread does it again */
			ss->stats.refused++;
			drop_states(ss, s, k);
			return serially(ss, s, p->first);
		}
	}
	if (ret)
		drop_states(ss, s, 0);
	s->nparts = 0;
	return ret;
}

/* Wait for the oldest stretch and take it back. */
static int take_oldest(struct dec_stretches *ss)
{
	struct stretch *s = &ss->ring[ss->head % ss->nring];
	int ret;

	pthread_mutex_lock(&ss->lock);
	while (!s->done)
		pthread_cond_wait(&ss->done, &ss->lock);
	pthread_mutex_unlock(&ss->lock);
	ret = take_back(ss, s);
	s->n = 0;
	s->done = false;
	ss->head++;
	if (ret)
		ss->ended = ret;
	return ret;
}

/* ------------------------------------------------------------- context */

static bool learning(const struct dec_stretches *ss)
{
	const struct cst_view_ops *ops = ss->views.ops;

	return ops->sz >= offsetof(struct cst_view_ops, learn) + sizeof(ops->learn) && ops->learn;
}

static struct context *context_of(struct dec_stretches *ss, uint8_t id)
{
	struct context **c = &ss->contexts[id % STRETCH_IDS];

	if (!*c)
		*c = calloc(1, sizeof(**c));
	return *c;
}

/* Element @seq of the stream, @e, into its ID's context. */
static void remember(struct dec_stretches *ss, const struct cst_elem *e, uint64_t seq)
{
	struct context *c = context_of(ss, e->trace_id);

	if (!c)
		return; /* no memory: its next view learns from its own elements */
	c->last[c->at] = *e;
	c->last[c->at].ocsd = NULL;
	c->seq[c->at] = seq;
	c->at = (c->at + 1) % STRETCH_CONTEXT;
	if (c->n < STRETCH_CONTEXT)
		c->n++;
}

/* A new stretch of ID @id: its context, oldest first (the last timestamp, if
 * older than the last elements). */
static void give_context(struct dec_stretches *ss, struct stretch *s, uint8_t id)
{
	const struct context *c = ss->contexts[id % STRETCH_IDS];
	unsigned first = c ? (c->at + STRETCH_CONTEXT - c->n) % STRETCH_CONTEXT : 0;

	s->nctx = 0;
	if (!c)
		return;
	if (c->has_ts && (!c->n || c->ts_seq < c->seq[first]))
		s->ctx[s->nctx++] = c->ts;
	for (unsigned i = 0; i < c->n; i++)
		s->ctx[s->nctx++] = c->last[(first + i) % STRETCH_CONTEXT];
}

/* The stretch being filled goes to the workers; the oldest come back while
 * the ring is full, and those done already on the way. */
static int submit(struct dec_stretches *ss)
{
	struct stretch *s = ss->fill;
	int ret = 0;

	if (!s->n)
		return 0;
	if (learning(ss)) {
		unsigned from = s->n > STRETCH_CONTEXT ? s->n - STRETCH_CONTEXT : 0;

		for (unsigned i = from; i < s->n; i++)
			remember(ss, &s->v[i], ss->seq - s->n + i);
	}
	pthread_mutex_lock(&ss->lock);
	ss->tail++;
	pthread_cond_signal(&ss->work);
	pthread_mutex_unlock(&ss->lock);
	ss->fill = &ss->ring[ss->tail % ss->nring];
	ss->stats.stretches++;
	while (!ret && ss->head < ss->tail) {
		struct stretch *o = &ss->ring[ss->head % ss->nring];
		bool done;

		pthread_mutex_lock(&ss->lock);
		done = o->done;
		pthread_mutex_unlock(&ss->lock);
		if (!done && ss->tail - ss->head < ss->nring)
			break;
		ret = take_oldest(ss);
	}
	return ret;
}

int dec_stretches_open(struct dec_stretches **out, const struct dec_views *views,
		       unsigned threads, cst_elem_fn fn, cst_sideband_fn sb_fn, void *ctx)
{
	struct dec_stretches *ss;

	*out = NULL;
	if (!views || !views->ops || !fn || threads < 1)
		return -cste_invalid;
	if (threads > STRETCH_THREADS)
		threads = STRETCH_THREADS;
	ss = calloc(1, sizeof(*ss));
	if (!ss)
		return -cste_nomem;
	ss->views = *views;
	ss->fn = fn;
	ss->sb_fn = sb_fn;
	ss->ctx = ctx;
	ss->nring = threads * STRETCH_AHEAD + 1;
	ss->ring = calloc(ss->nring, sizeof(*ss->ring));
	ss->fill = ss->ring;
	pthread_mutex_init(&ss->lock, NULL);
	pthread_cond_init(&ss->work, NULL);
	pthread_cond_init(&ss->done, NULL);
	for (unsigned i = 0; ss->ring && i < ss->nring; i++) {
		ss->ring[i].v = malloc(STRETCH_ELEMS * sizeof(*ss->ring[i].v));
		if (!ss->ring[i].v) {
			dec_stretches_close(ss);
			return -cste_nomem;
		}
	}
	for (unsigned i = 0; ss->ring && i < threads; i++) {
		if (pthread_create(&ss->tid[i], NULL, stretch_worker, ss))
			break;
		ss->nthreads++;
	}
	if (!ss->nthreads) {
		dec_stretches_close(ss);
		return -cste_nomem;
	}
	*out = ss;
	return 0;
}

/* Whether @e takes a loss told before it; the losses it takes are gone. */
static bool takes_loss(struct dec_stretches *ss, const struct cst_elem *e)
{
	size_t k = 0;
	bool any = false;

	for (size_t i = 0; i < ss->nlost; i++) {
		if (ss->lost[i] >= 0 && e->cpu >= 0 && ss->lost[i] != e->cpu) {
			ss->lost[k++] = ss->lost[i];
			continue;
		}
		any = true;
	}
	ss->nlost = k;
	return any;
}

/* Everything handed in goes out, then @e to @fn on this thread. */
static int direct(struct dec_stretches *ss, const struct cst_elem *e)
{
	int ret = dec_stretches_drain(ss);

	ss->stats.direct++;
	if (learning(ss))
		remember(ss, e, ss->seq);
	ss->seq++;
	if (!ret && (ret = ss->fn(ss->ctx, e)) != 0)
		ss->ended = ret;
	return ret;
}

int dec_stretches_elem(void *stretches, const struct cst_elem *e)
{
	struct dec_stretches *ss = stretches;
	struct stretch *s = ss->fill;
	int ret;

	if (ss->ended)
		return ss->ended;
	if (ss->nlost && takes_loss(ss, e))
		return direct(ss, e);

	/* one source per stretch, as a split run's: a view learns one trace ID's
	 * state before it prints */
	if (s->n && (s->n == STRETCH_ELEMS || e->trace_id != s->trace_id)) {
		if ((ret = submit(ss)) != 0)
			return ret;
		s = ss->fill;
	}
	if (!s->n) {
		s->trace_id = e->trace_id;
		s->nctx = 0;
		if (learning(ss))
			give_context(ss, s, e->trace_id);
	}
	if (e->type == cst_elem_timestamp && learning(ss)) {
		struct context *c = context_of(ss, e->trace_id);

		if (c) {
			c->ts = *e;
			c->ts.ocsd = NULL;
			c->ts_seq = ss->seq;
			c->has_ts = true;
		}
	}
	s->v[s->n] = *e;
	s->v[s->n].ocsd = NULL; /* OpenCSD's element lives as long as the call */
	s->n++;
	ss->seq++;
	return 0;
}

int dec_stretches_drain(struct dec_stretches *ss)
{
	int ret = ss->ended ? ss->ended : submit(ss);

	while (!ret && ss->head < ss->tail)
		ret = take_oldest(ss);
	return ret;
}

int dec_stretches_sb(void *stretches, const struct cst_sideband *sb)
{
	struct dec_stretches *ss = stretches;
	int ret;

	if (!ss->sb_fn || ss->ended)
		return ss->ended;
	ret = dec_stretches_drain(ss);
	if (ret)
		return ret;
	if (sb->type == cst_sb_lost) {
		if (CST_GROW(ss->lost, ss->cap_lost, ss->nlost + 1) < 0)
			return -cste_nomem;
		ss->lost[ss->nlost++] = sb->cpu;
	}
	ret = ss->sb_fn(ss->ctx, sb);
	if (ret)
		ss->ended = ret;
	return ret;
}

void dec_stretches_get_stats(const struct dec_stretches *ss, struct dec_stretch_stats *st)
{
	*st = ss->stats;
}

void dec_stretches_close(struct dec_stretches *ss)
{
	if (!ss)
		return;
	pthread_mutex_lock(&ss->lock);
	ss->stop = true;
	pthread_cond_broadcast(&ss->work);
	pthread_mutex_unlock(&ss->lock);
	for (unsigned i = 0; i < ss->nthreads; i++)
		pthread_join(ss->tid[i], NULL);
	/* stretches never taken back: what their views knew is dropped */
	for (unsigned i = 0; ss->ring && i < ss->nring; i++) {
		struct stretch *s = &ss->ring[i];

		if (s->done)
			drop_states(ss, s, 0);
		free(s->v);
		free(s->parts);
		cst_buf_fini(&s->bytes);
		cst_buf_fini(&s->states);
	}
	free(ss->ring);
	free(ss->lost);
	for (unsigned i = 0; i < STRETCH_IDS; i++)
		free(ss->contexts[i]);
	pthread_cond_destroy(&ss->work);
	pthread_cond_destroy(&ss->done);
	pthread_mutex_destroy(&ss->lock);
	free(ss);
}
