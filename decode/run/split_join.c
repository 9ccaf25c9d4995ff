/* One trace stream decoded on several threads: the workers' element lists, their
 * replay in stream order, and the run that sets it all up (split.h). */
#include "split.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* how often a replay waiting for a list looks for a crash (split_out.crash),
 * and how long, after one, it waits for the other workers to end */
#define SPLIT_POLL_NS (50 * 1000 * 1000)
#define SPLIT_PARK_NS (5ll * 1000 * 1000 * 1000)

/* Whether the workers' blocks hold bytes (printed, or views'). */
static bool printing(const struct split *sp)
{
	return sp->print || sp->view;
}

/* Blocks the list being output may hold before its worker waits. */
static unsigned held_max(const struct split *sp)
{
	return printing(sp) ? SPLIT_HELD : SPLIT_HELD_ELEMS;
}

/* Blocks the replay waits for before it takes any off the list being output (or
 * the list's end). Printed blocks are written in a moment: woken for each one,
 * the replay thread slept and woke again 50,000 times in a 12-million-line
 * script (and the workers waited on its lock), for a tenth of their time. */
static unsigned take_min(const struct split *sp)
{
	return printing(sp) ? SPLIT_TAKE : 1;
}

/* What one block takes. */
static size_t block_bytes(const struct split *sp)
{
	if (sp->view)
		return SPLIT_BYTES + SPLIT_VIEW_ELEMS * sizeof(struct cst_elem);
	return sp->print ? SPLIT_BYTES : SPLIT_BLOCK * sizeof(struct cst_elem);
}

static struct split_block *new_block(struct split *sp)
{
	struct split_block *b;

	pthread_mutex_lock(&sp->lock);
	b = sp->spare;
	if (b) {
		sp->spare = b->next;
		sp->nspare--;
	}
	pthread_mutex_unlock(&sp->lock);
	if (!b) {
		b = calloc(1, sizeof(*b));
		if (!b)
			return NULL;
		if (printing(sp)) {
			b->bytes = malloc(SPLIT_BYTES);
			b->cap = SPLIT_BYTES;
		}
		if (!sp->print)
			b->v = malloc((sp->view ? SPLIT_VIEW_ELEMS : SPLIT_BLOCK) * sizeof(*b->v));
		if (sp->view)
			b->state = malloc(sp->view->state_size ? sp->view->state_size : 1);
		if ((printing(sp) && !b->bytes) || (!sp->print && !b->v) ||
		    (sp->view && !b->state)) {
			free(b->v);
			free(b->bytes);
			free(b->state);
			free(b);
			return NULL;
		}
	}
	b->next = NULL;
	b->n = 0;
	b->len = 0;
	b->elems = false;
	b->viewed = 0;
	b->state_len = 0;
	b->has_offset = false;
	memset(&b->st, 0, sizeof(b->st));
	return b;
}

/* An element counted into block @b: its offset and the decoder's totals. */
static void count_in(struct split_block *b, const struct cst_elem *e)
{
	if (e->type != cst_elem_eot) {
		b->offset = e->offset;
		b->has_offset = true;
	}
	dec_stats_count(&b->st, e);
}

/* A copy of @e into block @b, which has room (OpenCSD's element behind it lives
 * only as long as the callback). */
static void copy_in(struct split_block *b, const struct cst_elem *e)
{
	b->v[b->n] = *e;
	b->v[b->n].ocsd = NULL;
	b->n++;
	count_in(b, e);
}

int dec_split_append(struct split *sp, struct split_chunk *c, struct split_block **cur,
		     const struct cst_elem *e)
{
	struct split_block *b = *cur;

	if (b && (sp->print ? SPLIT_BYTES - b->len < SPLIT_LINE : b->n == SPLIT_BLOCK))
		dec_split_flush(sp, c, cur);
	if (!*cur) {
		*cur = new_block(sp);
		if (!*cur)
			return -cste_nomem;
	}
	b = *cur;
	if (!sp->print) {
		copy_in(b, e);
		return 0;
	}
	b->len += dec_print_line(sp->print, sp->print_ctx, e, b->bytes + b->len);
	b->n++;
	count_in(b, e);
	return 0;
}

void dec_split_view_flush(struct split *sp, struct split_chunk *c, struct split_block **cur,
			  void *view)
{
	struct split_block *b = *cur;

	/* a block of elements the view handled ends with what it knows there */
	if (b && !b->elems && b->viewed && view)
		b->state_len = sp->view->state(view, b->state, sp->view->state_size);
	dec_split_flush(sp, c, cur);
}

/* The block being filled, of the kind wanted (@elems): NULL when out of memory.
 * A block of another kind goes out first. */
static struct split_block *view_block(struct split *sp, struct split_chunk *c,
				      struct split_block **cur, void *view, bool elems)
{
	struct split_block *b = *cur;

	if (b && (b->elems != elems || (elems && b->n == SPLIT_VIEW_ELEMS)))
		dec_split_view_flush(sp, c, cur, view);
	if (!*cur) {
		*cur = new_block(sp);
		if (*cur)
			(*cur)->elems = elems;
	}
	return *cur;
}

int dec_split_view_bytes(struct split *sp, struct split_chunk *c, struct split_block **cur,
			 const char *bytes, size_t len)
{
	struct split_block *b = view_block(sp, c, cur, NULL, false);

	if (!b)
		return -cste_nomem;
	if (b->cap - b->len < len) {
		/* one element's lines stay in one block: a long one grows it */
		size_t cap = b->len + len > 2 * b->cap ? b->len + len : 2 * b->cap;
		char *n = realloc(b->bytes, cap);

		if (!n)
			return -cste_nomem;
		b->bytes = n;
		b->cap = cap;
	}
	memcpy(b->bytes + b->len, bytes, len);
	b->len += len;
	return 0;
}

int dec_split_view_keep(struct split *sp, struct split_chunk *c, struct split_block **cur,
			void *view, bool defer, const struct cst_elem *e)
{
	struct split_block *b = *cur;
	int ret = cst_view_defer;

	if (view && !defer) {
		/* a full block goes out between two elements, with the view's state */
		if (b && !b->elems && b->cap - b->len < SPLIT_LINE)
			dec_split_view_flush(sp, c, cur, view);
		ret = sp->view->elem(view, e);
		if (ret < 0 || ret == cst_view_give_up)
			return ret;
		if (ret == cst_view_printed) {
			b = view_block(sp, c, cur, view, false);
			if (!b)
				return -cste_nomem;
			b->n += (unsigned)dec_elem_count(e);
			b->viewed++;
			count_in(b, e);
			return 0;
		}
	}
	b = view_block(sp, c, cur, view, true);
	if (!b)
		return -cste_nomem;
	copy_in(b, e);
	return 0;
}

void dec_split_flush(struct split *sp, struct split_chunk *c, struct split_block **cur)
{
	size_t k = (size_t)(c - sp->chunks);

	if (!*cur)
		return;
	pthread_mutex_lock(&sp->lock);
	if (c->last)
		c->last->next = *cur;
	else
		c->first = *cur;
	c->last = *cur;
	c->held++;
	c->held_bytes += block_bytes(sp);
	if (sp->replaying != k)
		sp->held_bytes += block_bytes(sp);
	/* the replay waits for printed blocks of the list it is at, a few at once */
	if (!printing(sp) || (sp->replaying == k && c->held >= take_min(sp)))
		pthread_cond_broadcast(&sp->cond);
	/* The list being output is taken as it grows: a worker faster than the
	 * caller waits for it to catch up instead of holding ever more. Lists
	 * further on are bounded by the window of chunks started ahead, and
	 * together by SPLIT_HELD_BYTES: their workers wait until the output reaches
	 * them. (Neither wait holds up the list being output: a worker does not
	 * wait here before it has published its chunk's head, so the worker before
	 * never waits on one that waits here. A view's worker flushes a block of
	 * deferred elements early on, when it starts printing.) */
	while (!sp->abort && !c->abandon && !(k && c->state == chunk_running) &&
	       (sp->replaying == k ? c->held > held_max(sp) : sp->held_bytes > SPLIT_HELD_BYTES))
		pthread_cond_wait(&sp->cond, &sp->lock);
	pthread_mutex_unlock(&sp->lock);
	*cur = NULL;
}

void dec_split_head_done(struct split_chunk *c, bool written)
{
	if (written)
		c->head_written = true;
	else
		c->head_read = true;
	if (c->head_written && c->head_read) {
		free(c->head);
		c->head = NULL;
	}
}

/* Has a worker crashed (split_out.crash)? */
static bool crashed(const struct split *sp)
{
	return dec_crash_seen(sp->crash);
}

/* Wait on @sp's condition, called with the lock held; with a crash watch, for a
 * while only: a crashed worker never signals. */
static void wait_cond(struct split *sp)
{
	dec_crash_wait(sp->crash, &sp->cond, &sp->lock, SPLIT_POLL_NS);
}

/* Wait for more of chunk @c's list: returns its blocks taken off the list (NULL
 * when the list is complete, the run aborted or a worker crashed). */
static struct split_block *next_blocks(struct split *sp, struct split_chunk *c)
{
	struct split_block *b;

	pthread_mutex_lock(&sp->lock);
	/* after a crash the replay stops (dec_split_replay looks again) */
	while ((!c->first || c->held < take_min(sp)) && !c->done && !sp->abort && !crashed(sp))
		wait_cond(sp);
	if (sp->serial) {
		pthread_mutex_unlock(&sp->lock);
		return NULL; /* nothing more: the buffer is decoded serially instead */
	}
	/* a few at a time: the blocks being replayed are held too, and a list that
	 * grew while it was not being output may be long */
	b = c->first;
	if (b) {
		struct split_block *last = b;
		unsigned n = 1;

		while (n < (printing(sp) ? SPLIT_TAKE : SPLIT_TAKE_ELEMS) && last->next) {
			last = last->next;
			n++;
		}
		c->first = last->next;
		if (!c->first)
			c->last = NULL;
		last->next = NULL;
		c->held -= n;
		c->held_bytes -= n * block_bytes(sp);
	}
	pthread_cond_broadcast(&sp->cond); /* a worker may wait for its list to go */
	pthread_mutex_unlock(&sp->lock);
	return b;
}

static void free_blocks(const struct split *sp, struct split_block *b)
{
	while (b) {
		struct split_block *n = b->next;

		/* a view's state that no replay took (its list was thrown away) */
		if (b->state_len && sp->view->drop)
			sp->view->drop(sp->view_ctx, b->state, b->state_len);
		free(b->v);
		free(b->bytes);
		free(b->state);
		free(b);
		b = n;
	}
}

/* Replayed blocks go back to the workers, as many as the lists may hold (the
 * peak is held anyway); the rest are freed. */
static void recycle(struct split *sp, struct split_block *b)
{
	size_t keep = held_max(sp) + SPLIT_HELD_BYTES / block_bytes(sp);

	pthread_mutex_lock(&sp->lock);
	while (b && sp->nspare < keep) {
		struct split_block *n = b->next;

		b->next = sp->spare;
		sp->spare = b;
		sp->nspare++;
		b = n;
	}
	pthread_mutex_unlock(&sp->lock);
	free_blocks(sp, b);
}

/* The output moved on to chunk `replaying`: what the lists after it hold. (The
 * lists of chunks it skipped, taken over by an earlier worker, are not waited
 * for.) Called with the lock held. */
static void held_after(struct split *sp)
{
	sp->held_bytes = 0;
	for (size_t j = sp->replaying + 1; j < sp->nchunks; j++)
		if (!sp->chunks[j].abandon)
			sp->held_bytes += sp->chunks[j].held_bytes;
}

/* Hand block @b over: its bytes, or each of its elements. A view's block whose
 * state the caller's view refuses is not (*@refused). */
static int replay_block(const struct split_out *out, struct split_block *b,
			uint64_t *delivered, bool *refused)
{
	int ret = 0;

	if (out->view && !b->elems) {
		if (b->state_len) {
			/* the elements before the state go out before it (run.h) */
			ret = out->write(out->write_ctx, NULL, 0, 0, 0, false);
			if (ret)
				return ret;
			ret = out->view->adopt(out->view_ctx, b->state, b->state_len);
			if (ret == cst_view_give_up) {
				*refused = true;
				return 0;
			}
			b->state_len = 0; /* its own now */
		}
		/* a view's element counts as the decoder's elements it joins */
		*delivered += b->n;
		return ret ? ret
		       : b->viewed ? out->write(out->write_ctx, b->bytes, b->len, b->viewed,
						 b->offset, b->has_offset)
				   : 0;
	}
	if (out->write && !out->view) {
		*delivered += b->n;
		return b->n ? out->write(out->write_ctx, b->bytes, b->len, b->n, b->offset,
					 b->has_offset)
			    : 0;
	}
	for (unsigned i = 0; i < b->n && !ret; i++) {
		*delivered += dec_elem_count(&b->v[i]);
		ret = out->fn ? out->fn(out->ctx, &b->v[i]) : 0;
	}
	return ret;
}

/* The caller's view refused block @b's state: neither it nor any block after it
 * goes out, and the buffer is decoded again on one thread from there (as when a
 * worker's view gives up). */
static void refuse(struct split *sp, struct split_block *b)
{
	for (; b; b = b->next) {
		if (b->state_len && sp->view->drop)
			sp->view->drop(sp->view_ctx, b->state, b->state_len);
		b->state_len = 0;
	}
	pthread_mutex_lock(&sp->lock);
	sp->serial = true;
	sp->abort = true;
	pthread_cond_broadcast(&sp->cond);
	pthread_mutex_unlock(&sp->lock);
}

int dec_split_replay(struct split *sp, const struct split_out *out,
		     struct cst_decoder_stats *stats, uint64_t *delivered)
{
	size_t c = 0;
	int ret = 0;

	while (c < sp->nchunks && !ret) {
		struct split_chunk *ch = &sp->chunks[c];
		struct split_block *b = next_blocks(sp, ch);

		if (crashed(sp)) {
			ret = -cste_crashed;
			break;
		}
		if (!b) {
			pthread_mutex_lock(&sp->lock);
			if (sp->abort && !ch->done)
				ret = sp->serial ? 0 : sp->err ? sp->err : -cste_nomem;
			else if (ch->ret)
				ret = ch->ret;
			else {
				/* no worker meets the chunks up to the next one again:
				 * their heads go (the one being written, when written) */
				for (size_t j = c + 1; j <= ch->next && j < sp->nchunks; j++)
					dec_split_head_done(&sp->chunks[j], false);
				c = sp->replaying = ch->next;
			}
			held_after(sp);
			if (!ret && c < sp->nchunks)
				stats->chunks_apart++;
			if (!ret && ch->followed)
				stats->chunks_followed++;
			if (sp->serial || (sp->abort && !ch->done)) {
				pthread_mutex_unlock(&sp->lock);
				break;
			}
			pthread_cond_broadcast(&sp->cond);
			pthread_mutex_unlock(&sp->lock);
			continue;
		}
		/* how far the output got: the chunk's start, or past it by the offsets of
		 * what went out (a worker may decode many chunks past its own when
		 * joins fail or the workers after it are slow to start) */
		uint64_t at = ch->start - sp->begin;
		bool refused = false;

		for (struct split_block *k = b; k && !ret; k = k->next) {
			ret = replay_block(out, k, delivered, &refused);
			if (refused) {
				refuse(sp, k);
				break;
			}
			dec_stats_add(stats, &k->st);
			if (k->has_offset && k->offset > at && k->offset <= sp->end - sp->begin)
				at = k->offset;
		}
		recycle(sp, b);
		if (refused)
			break;
		if (sp->dopts.progress)
			sp->dopts.progress(sp->dopts.progress_ctx, at, sp->end - sp->begin);
	}
	return ret;
}

void dec_split_skip_log(void *ctx, enum cst_log_level level, const char *msg)
{
	const struct split_skip *k = ctx;

	if (!k->quiet && !k->left && k->user.fn)
		k->user.fn(k->user.ctx, level, msg);
}

void dec_split_free_lists(struct split *sp)
{
	for (size_t c = 0; c < sp->nchunks; c++)
		free_blocks(sp, sp->chunks[c].first);
	free_blocks(sp, sp->spare);
}

static int split_setup(struct split *sp, uint64_t pos, uint64_t chunk)
{
	uint64_t n;

	if (sp->format == cst_bufmt_frames)
		chunk = (chunk + CST_FRAME - 1) / CST_FRAME * CST_FRAME;
	n = (sp->end - pos + chunk - 1) / chunk;
	if (!n)
		n = 1; /* an empty span: the first chunk ends the trace */
	sp->chunks = calloc((size_t)n, sizeof(*sp->chunks));
	if (!sp->chunks)
		return -cste_nomem;
	for (uint64_t k = 0; k < n; k++)
		sp->chunks[k].start = pos + k * chunk;
	sp->nchunks = (size_t)n;
	sp->chunk = chunk;
	return 0;
}

/* The replay is over (@ret): stop the workers and wait for them to end. With a
 * crash handler, a worker may crash in OpenCSD meanwhile (one decoding past
 * what was replayed): then, as when the replay saw a crash, the others are let
 * end (they stop at the abort), so that none is left using what the caller
 * frees on its way out, and -cste_crashed is returned with nothing freed. The
 * crashed one never ends: it waits in the handler until the caller has written
 * its output, and then the process ends. */
static int end_workers(struct split *sp, pthread_t *tid, unsigned nthreads, int ret)
{
	struct timespec until;

	pthread_mutex_lock(&sp->lock);
	sp->abort = true;
	pthread_cond_broadcast(&sp->cond);
	while (sp->crash && ret != -cste_crashed && sp->exited < nthreads) {
		wait_cond(sp);
		if (crashed(sp))
			ret = -cste_crashed;
	}
	if (ret == -cste_crashed) {
		dec_deadline_after(&until, SPLIT_PARK_NS);
		while (sp->exited + 1 < nthreads)
			if (pthread_cond_timedwait(&sp->cond, &sp->lock, &until))
				break;
		pthread_mutex_unlock(&sp->lock);
		return ret;
	}
	pthread_mutex_unlock(&sp->lock);
	for (unsigned i = 0; i < nthreads; i++)
		pthread_join(tid[i], NULL);
	dec_crash_disarm(sp->crash);
	return ret;
}

/* The run over the span in @sp (fd, begin, end) from @pos. */
static int run_span(struct split *sp, uint64_t pos, unsigned threads, uint64_t chunk,
		    const struct split_out *out, struct cst_decoder_stats *stats,
		    enum split_outcome *outcome, uint64_t *delivered)
{
	pthread_t tid[64];
	unsigned nthreads = 0;
	int ret, id = dec_decoder_one_id(sp->dec0, sp->fd, pos, sp->end);

	if (id < 0) {
		/* one thread decodes it, with the span's messages told */
		dec_decoder_set_told(sp->dec0);
		*outcome = split_unsplittable;
		return 0;
	}
	*outcome = split_done;
	sp->trace_id = (uint8_t)id;
	sp->merge = out->merged && !sp->print;
	sp->view = out->view;
	sp->view_ctx = out->view_ctx;
	sp->engine = out->engine;
	ret = split_setup(sp, pos, chunk);
	if (ret) {
		cst_decoder_free(sp->dec0);
		return ret;
	}
	pthread_mutex_init(&sp->lock, NULL);
	pthread_cond_init(&sp->cond, NULL);
	if (threads > sizeof(tid) / sizeof(tid[0]))
		threads = sizeof(tid) / sizeof(tid[0]);
	/* chunks decoded ahead of the output: enough that a worker seldom finds the
	 * next chunk not started (and decodes it itself), few enough to bound what
	 * is held: copies of elements take more room than printed lines */
	sp->ahead = (printing(sp) ? 4 : 2) * (size_t)threads;
	if (sp->ahead > (printing(sp) ? 16u : 8u))
		sp->ahead = printing(sp) ? 16u : 8u; /* a dense 64 KiB chunk: 30 MB of copies */
	/* OpenCSD 1.3.3 logs decoder errors into one process-wide logger that is not
	 * safe across threads: silenced here, and an error sends the buffer to a
	 * serial decode anyway (on_worker_log). */
	dec_ocsd_log_quiet(true);
	sp->crash = out->crash;
	dec_crash_arm(sp->crash);
	for (unsigned i = 0; i < threads && i < sp->nchunks; i++)
		if (pthread_create(&tid[nthreads], NULL, dec_split_worker, sp) == 0)
			nthreads++;
	ret = nthreads ? dec_split_replay(sp, out, stats, delivered) : -cste_nomem;
	ret = end_workers(sp, tid, nthreads, ret);
	if (ret == -cste_crashed)
		return ret; /* nothing freed: the crashed worker may still hold it */
	dec_ocsd_log_quiet(false);
	if (sp->serial)
		*outcome = split_serial;
	stats->bytes = sp->format == cst_bufmt_frames ? (sp->end - pos) / CST_FRAME * CST_FRAME
						       : sp->end - pos;
	stats->frame_ids[0] = sp->frame_ids[0];
	stats->frame_ids[1] = sp->frame_ids[1];
	stats->chunks = sp->nchunks;
	stats->chunks_apart++; /* the first */
	dec_split_free_lists(sp);
	cst_decoder_free(sp->dec0); /* if no worker took it */
	for (size_t k = 0; k < sp->nchunks; k++)
		free(sp->chunks[k].head); /* of a run that stopped early */
	free(sp->chunks);
	pthread_cond_destroy(&sp->cond);
	pthread_mutex_destroy(&sp->lock);
	return sp->serial ? 0 : ret;
}

/* Where both runs start: nothing delivered, unsplittable until shown otherwise;
 * false when threads are not asked for or packets are (listed on one thread). */
static bool split_start(const struct cst_decoder *dec0, unsigned threads, uint64_t chunk,
			struct cst_decoder_stats *stats, enum split_outcome *outcome,
			uint64_t *delivered)
{
	*outcome = split_unsplittable;
	*delivered = 0;
	memset(stats, 0, sizeof(*stats));
	return threads >= 2 && chunk && !dec_decoder_opts(dec0)->packets_only;
}

static void split_init(struct split *sp, struct cst_decoder *dec0, cst_elem_print_fn print,
		       void *print_ctx, const struct split_mem *mem)
{
	const struct cst_trace *trace = dec_decoder_trace(dec0);
	int buffer = dec_decoder_buffer(dec0);

	*sp = (struct split){.trace = trace, .buffer = buffer, .dopts = *dec_decoder_opts(dec0),
			     .fd = -1, .dec0 = dec0, .print = print, .print_ctx = print_ctx,
			     .mem = mem, .format = cst_trace_buffer(trace, buffer)->format};
}

int dec_split_run(struct cst_decoder *dec0, unsigned threads, uint64_t chunk,
		  const struct split_out *out, cst_elem_print_fn print, void *print_ctx,
		  struct cst_decoder_stats *stats, enum split_outcome *outcome,
		  uint64_t *delivered)
{
	struct split sp;
	uint64_t pos;
	int ret;

	if (!split_start(dec0, threads, chunk, stats, outcome, delivered))
		return 0;
	split_init(&sp, dec0, print, print_ctx, NULL);
	sp.begin = cst_trace_buffer(sp.trace, sp.buffer)->offset;
	ret = dec_decoder_open_span(dec0, &sp.fd, &pos, &sp.end);
	if (ret) {
		*outcome = split_done;
		cst_decoder_free(dec0);
		return ret;
	}
	ret = run_span(&sp, pos, threads, chunk, out, stats, outcome, delivered);
	close(sp.fd);
	return ret;
}

int dec_split_run_span(struct cst_decoder *dec0, unsigned threads, uint64_t chunk,
		       const struct split_span *span, const struct split_mem *mem,
		       const struct split_out *out, cst_elem_print_fn print, void *print_ctx,
		       struct cst_decoder_stats *stats, enum split_outcome *outcome,
		       uint64_t *delivered)
{
	struct split sp;

	if (!split_start(dec0, threads, chunk, stats, outcome, delivered) ||
	    span->pos >= span->end)
		return 0;
	split_init(&sp, dec0, print, print_ctx, mem);
	sp.fd = span->fd;
	sp.begin = span->origin;
	sp.end = span->end;
	return run_span(&sp, span->pos, threads, chunk, out, stats, outcome, delivered);
}
