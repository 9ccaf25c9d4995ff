/* One trace stream decoded on several threads: chunks, workers and where they join
 * (the scheme is described in split.h). */
#include "split.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SPLIT_WINDOW (64u * 1024u)

enum wmode {
	w_presync, /* before the first synced element: thrown away */
	w_body,    /* kept */
	w_overlap, /* past the next chunk's sync: compared with its head */
};

struct worker {
	struct split *sp;
	size_t own;      /* the chunk whose list this worker fills */
	size_t boundary; /* the next chunk: its start is where this worker's part ends */
	struct cst_decoder *dec;
	struct split_block *cur;
	struct cst_log log;
	void *mem; /* its memory context (split_mem), or NULL */
	enum wmode mode;
	unsigned nhead; /* head elements gathered (before publishing) */
	bool kept;          /* an element was kept, the last at this offset: */
	uint64_t kept_at;
	bool synced;        /* the decoder found sync ... */
	uint64_t synced_at; /* ... at a packet of this offset */
	/* overlap with chunk `boundary`: its sync offset and head */
	uint64_t join_at;
	struct dec_held cmp[SPLIT_VERIFY];
	unsigned matched;
	bool past_join; /* an element at or past join_at was seen */
	bool joined;
	int err;
	struct dec_merge merge; /* split.merge: runs of ranges joined into the list */
	/* split.view: this thread's views' shared part, and the view of this list
	 * (NULL: every element deferred) */
	void *tview, *view;
	bool ending; /* the list's last run: deferred, the next list may join it */
};

/* Any message a worker's decoder logs while decoding is a decoder error (the
 * partial-frame warning of cst_decoder_end is never reached: see run_chunk): the
 * buffer is decoded serially instead, so that messages and gaps are exactly a
 * serial decoder's. */
static void on_worker_log(void *ctx, enum cst_log_level level, const char *msg)
{
	struct worker *w = ctx;

	(void)level;
	(void)msg;
	pthread_mutex_lock(&w->sp->lock);
	w->sp->serial = true;
	w->sp->abort = true;
	pthread_cond_broadcast(&w->sp->cond);
	pthread_mutex_unlock(&w->sp->lock);
}

static bool must_stop(struct worker *w)
{
	struct split *sp = w->sp;
	bool stop;

	pthread_mutex_lock(&sp->lock);
	stop = sp->abort || sp->chunks[w->own].abandon;
	pthread_mutex_unlock(&sp->lock);
	return stop;
}

/* The head of this worker's chunk is complete (or the chunk has none): tell the
 * worker of the chunk before. */
static void publish(struct worker *w, enum chunk_state st)
{
	struct split_chunk *c = &w->sp->chunks[w->own];

	pthread_mutex_lock(&w->sp->lock);
	if (c->state == chunk_running)
		c->state = st;
	dec_split_head_done(c, true); /* complete, or none to be had */
	pthread_cond_broadcast(&w->sp->cond);
	pthread_mutex_unlock(&w->sp->lock);
}

/* Take chunk @j over: its worker (if any) stops and its list is never replayed.
 * A worker that was itself taken over decides nothing for others. */
static void take(struct worker *w, size_t j)
{
	struct split *sp = w->sp;

	pthread_mutex_lock(&sp->lock);
	if (!sp->chunks[w->own].abandon) {
		sp->chunks[j].abandon = true;
		sp->chunks[j].state = chunk_taken;
	}
	pthread_cond_broadcast(&sp->cond);
	pthread_mutex_unlock(&sp->lock);
}

/* Into this worker's list: a copy of @e, or what its view makes of it. The last
 * run of a list goes to the caller's thread unprinted, where the caller's
 * dec_merge may join it with the first of the next list as a serial run does. A
 * view that gives up sends the buffer to one thread, as a decoder error does. */
static int put(struct worker *w, const struct cst_elem *e)
{
	struct split *sp = w->sp;
	int ret;

	if (!sp->view)
		return dec_split_append(sp, &sp->chunks[w->own], &w->cur, e);
	ret = dec_split_view_keep(sp, &sp->chunks[w->own], &w->cur, w->view, w->ending, e);
	if (ret == cst_view_give_up) {
		on_worker_log(w, cst_log_error, "a view gave up");
		return 0;
	}
	return ret;
}

/* dec_merge's output: into this worker's list. */
static int append_joined(void *ctx, const struct cst_elem *e)
{
	return put(ctx, e);
}

/* Into this worker's list with @e: with split.merge, through the worker's own
 * dec_merge, which holds a range that may go on until the next element shows
 * whether it does (the last run of a chunk's list and the first of the next are
 * joined by the caller's). */
static int keep(struct worker *w, const struct cst_elem *e)
{
	if (w->sp->merge)
		return dec_merge_elem(&w->merge, e);
	return put(w, e);
}

/* What this worker's view prints, into the block being filled. */
static int view_write(void *ctx, const char *bytes, size_t len)
{
	struct worker *w = ctx;

	return dec_split_view_bytes(w->sp, &w->sp->chunks[w->own], &w->cur, bytes, len);
}

/* The overlap disagreed: what this worker decoded past the next chunk's sync is
 * kept (it is the serial decode), and the chunk is taken over. */
static int overlap_failed(struct worker *w)
{
	for (unsigned i = 0; i < w->matched; i++) {
		if (keep(w, dec_held_elem(&w->cmp[i])) < 0)
			return -cste_nomem;
	}
	take(w, w->boundary);
	w->boundary++;
	w->mode = w_body;
	return 0;
}

/* @e comes attributed by its decoder (split_mem.elem, dec_decoder_set_fill). */
static int on_worker_elem(void *ctx, const struct cst_elem *e)
{
	struct worker *w = ctx;
	struct split *sp = w->sp;
	struct split_chunk *own = &sp->chunks[w->own];

	switch (w->mode) {
	case w_presync:
		/* A decoder that starts late says more where it finds sync than one
		 * that ran all along (PTM: TRACE_ON and context at each first I-sync):
		 * what it says there is left out, and the join is tried from its next
		 * packet. */
		if (e->type == cst_elem_no_sync)
			return 0;
		if (!w->synced || e->offset == w->synced_at) {
			w->synced = true;
			w->synced_at = e->offset;
			return 0;
		}
		own->sync = e->offset;
		w->mode = w_body;
		break;
	case w_body:
		break;
	case w_overlap:
		if (e->offset < w->join_at && !w->past_join)
			break;
		w->past_join = true;
		if (e->offset >= w->join_at && dec_held_same(&w->cmp[w->matched], e)) {
			/* keep the element: the overlap may yet fail */
			dec_held_keep(&w->cmp[w->matched], e, true);
			if (++w->matched == SPLIT_VERIFY) {
				w->joined = true;
				return 1; /* stop this decoder: the next worker goes on */
			}
			return 0;
		}
		w->err = overlap_failed(w);
		if (w->err)
			return w->err;
		break;
	}
	if (w->own && w->nhead < SPLIT_VERIFY) {
		if (!own->head && !(own->head = malloc(SPLIT_VERIFY * sizeof(*own->head))))
			return w->err = -cste_nomem;
		dec_held_keep(&own->head[w->nhead++], e, true);
		if (w->nhead == SPLIT_VERIFY)
			publish(w, chunk_published);
	}
	w->kept = true;
	w->kept_at = e->offset;
	w->err = keep(w, e);
	return w->err;
}

/* A fresh deformatter drops data until a frame names a trace ID, and one stream
 * names its ID rarely: a made-up frame (ID 0, whose data is thrown away, then the
 * stream's ID for the frames that follow) starts the worker's ID, fed just before
 * the chunk so that nothing it yields is kept. */
static int feed_id_frame(struct worker *w, uint64_t at)
{
	uint8_t frame[CST_FRAME] = {0x01};

	frame[14] = (uint8_t)(w->sp->trace_id << 1 | 1);
	return cst_decoder_feed(w->dec, at - CST_FRAME, frame, CST_FRAME);
}

/* Where this worker's decoding stops for now: the next chunk's start, or the
 * buffer's end while it overlaps the next chunk. */
static uint64_t limit_of(const struct worker *w)
{
	const struct split *sp = w->sp;

	if (w->mode == w_overlap || w->boundary >= sp->nchunks)
		return sp->end;
	return sp->chunks[w->boundary].start;
}

/* How much to feed at once. An overlap that fails goes on decoding what it was
 * fed, as the serial decode, and a worker that has kept elements past the next
 * chunk's sync cannot hand over there: windows far larger than a chunk made one
 * failed join take over every chunk the window covered (and the ones their
 * workers had taken), so windows stay within a chunk, and within an eighth of
 * one while overlapping. */
static size_t window_of(const struct worker *w)
{
	uint64_t chunk = w->sp->chunk;

	if (w->mode == w_overlap)
		chunk = chunk / 8 > 64 ? chunk / 8 : 64;
	return chunk < SPLIT_WINDOW ? (size_t)chunk : SPLIT_WINDOW;
}

/* Feed from *pos to the limit, or until the decoder stops (1: joined, stopped). */
static int feed(struct worker *w, uint8_t *buf, uint64_t *pos)
{
	struct split *sp = w->sp;

	while (*pos < limit_of(w)) {
		uint64_t limit = limit_of(w);
		size_t win = window_of(w);
		size_t want = limit - *pos < win ? (size_t)(limit - *pos) : win;
		ssize_t got = pread(sp->fd, buf, want, (off_t)*pos);
		int ret;

		if (got <= 0) {
			/* one thread reads it again, and says what went wrong */
			on_worker_log(w, cst_log_error, "read failed");
			return 1;
		}
		/* offsets count from the buffer's first byte, as a serial run's */
		ret = cst_decoder_feed(w->dec, *pos - sp->begin, buf, (size_t)got);
		*pos += (uint64_t)got;
		if (w->err)
			return w->err;
		if (ret)
			return ret;
		if (must_stop(w))
			return 1;
	}
	return 0;
}

/* At the end of this worker's part: wait for the next chunk's head, and overlap it
 * or take the chunk over. */
static void meet(struct worker *w)
{
	struct split *sp = w->sp;
	struct split_chunk *c = &sp->chunks[w->boundary];
	bool mine;

	pthread_mutex_lock(&sp->lock);
	/* A chunk past the window of chunks started ahead of the output is not
	 * started by an idle worker: wait until the output comes near, or a worker
	 * that runs ahead takes chunk after chunk and holds all it decodes (when the
	 * caller is slower than decoding, as report and script are). The worker
	 * whose list is being output goes on (dec_split_flush paces it). */
	while (c->state == chunk_unclaimed && w->boundary >= sp->replaying + sp->ahead &&
	       w->own != sp->replaying && !sp->abort && !sp->chunks[w->own].abandon)
		pthread_cond_wait(&sp->cond, &sp->lock);
	if (c->state == chunk_unclaimed && !sp->chunks[w->own].abandon)
		c->state = chunk_taken; /* nobody started it: decode it here */
	while (c->state == chunk_running && !sp->abort && !sp->chunks[w->own].abandon)
		pthread_cond_wait(&sp->cond, &sp->lock);
	/* Only a worker that has kept nothing at or past the next chunk's sync can
	 * hand over there (after a failed overlap it may have decoded past it). */
	/* A worker taken over itself decides nothing for others, nor reads their
	 * heads: the worker that took its chunk over meets this one again, and
	 * once its list is out the head may be gone (dec_split_head_done). */
	mine = !sp->chunks[w->own].abandon;
	if (mine && c->state == chunk_published && !(w->kept && w->kept_at >= c->sync)) {
		memcpy(w->cmp, c->head, sizeof(w->cmp));
		w->join_at = c->sync;
		w->matched = 0;
		w->past_join = false;
		w->mode = w_overlap;
		pthread_mutex_unlock(&sp->lock);
		return;
	}
	pthread_mutex_unlock(&sp->lock);
	take(w, w->boundary);
	w->boundary++;
}

static struct cst_decoder *worker_decoder(struct split *sp, size_t k, struct worker *w)
{
	struct cst_decoder_opts o = sp->dopts;
	struct cst_decoder *dec;
	/* the list joins runs of ranges (keep): the decoder may give them joined */
	struct dec_engine engine = sp->engine;

	engine.runs = sp->merge;
	if (sp->mem) {
		/* dec0 reads memory that is not this worker's */
		o.mem_read = sp->mem->read;
		o.mem_ctx = w->mem;
		o.log = NULL;
		if (dec_decoder_make(&dec, sp->trace, sp->buffer, &o, &engine))
			return NULL;
		if (sp->mem->reset)
			cst_decoder_reset(dec);
		return dec;
	}
	if (!k && !sp->engine.own) {
		dec = sp->dec0;
		sp->dec0 = NULL;
		return dec;
	}
	o.log = NULL; /* what opening says, the first decoder said already */
	return dec_decoder_make(&dec, sp->trace, sp->buffer, &o, &engine) ? NULL : dec;
}

/* Decode from chunk @k's start until this worker's list joins a later chunk's,
 * or to the end of the buffer. Returns 0 or -cste_nomem. */
static int run_chunk(struct split *sp, size_t k, uint8_t *buf, void *tview)
{
	struct worker *w = calloc(1, sizeof(*w));
	struct split_chunk *own = &sp->chunks[k];
	uint64_t pos = own->start;
	struct cst_decoder_stats st;
	bool ended = false, none = false;
	int ret = 0;

	if (!w)
		return -cste_nomem;
	*w = (struct worker){.sp = sp, .own = k, .boundary = k + 1,
			     .mode = k ? w_presync : w_body, .log = {on_worker_log, w},
			     .merge = {.elem_fn = append_joined, .ctx = w}};
	if (sp->mem && !(w->mem = sp->mem->open(sp->mem->ctx))) {
		free(w);
		return -cste_nomem;
	}
	w->dec = worker_decoder(sp, k, w);
	if (!w->dec) {
		if (sp->mem)
			sp->mem->close(w->mem);
		free(w);
		return -cste_nomem;
	}
	dec_decoder_set_log(w->dec, &w->log);
	cst_decoder_set_elem_cb(w->dec, on_worker_elem, w);
	if (sp->mem && sp->mem->elem)
		dec_decoder_set_fill(w->dec, sp->mem->elem, w->mem);
	if (tview)
		w->view = sp->view->open(tview, view_write, w);
	if (k && sp->format == cst_bufmt_frames)
		ret = feed_id_frame(w, pos - sp->begin);
	while (!ret) {
		ret = feed(w, buf, &pos);
		if (ret)
			break;
		if (w->mode == w_overlap) {
			/* the data ended before the overlap was long enough: this worker
			 * decodes the rest itself */
			ret = overlap_failed(w);
			continue;
		}
		if (k && w->nhead < SPLIT_VERIFY) {
			none = true; /* the chunk before takes this one */
			publish(w, chunk_none);
			break;
		}
		if (w->boundary >= sp->nchunks) {
			/* a serial run reports a partial last frame before decoding */
			dec_decoder_drop_partial(w->dec);
			ret = cst_decoder_end(w->dec);
			if (!ret)
				ret = w->err;
			ended = true;
			break;
		}
		meet(w);
	}
	w->ending = true;
	if (sp->merge && dec_merge_end(&w->merge) < 0) {
		ret = -cste_nomem; /* the list lacks its last run: it cannot join */
		w->joined = false;
	}
	if (sp->view)
		dec_split_view_flush(sp, own, &w->cur, w->view);
	else
		dec_split_flush(sp, own, &w->cur);
	if (w->view)
		sp->view->close(w->view);
	pthread_mutex_lock(&sp->lock);
	dec_split_head_done(own, true); /* this worker writes no more of it */
	cst_decoder_get_stats(w->dec, &st);
	if (!k) {
		sp->frame_ids[0] = st.frame_ids[0];
		sp->frame_ids[1] = st.frame_ids[1];
	}
	if (!none && !own->abandon && (w->joined || ended || ret < 0)) {
		own->done = true;
		own->followed = st.followed > 0;
		own->next = w->joined ? w->boundary : sp->nchunks;
		own->ret = w->joined ? 0 : ret;
		if (ret < 0 && !sp->err)
			sp->err = ret;
		if (ret < 0)
			sp->abort = true;
	}
	pthread_cond_broadcast(&sp->cond);
	pthread_mutex_unlock(&sp->lock);
	cst_decoder_free(w->dec);
	if (sp->mem)
		sp->mem->close(w->mem);
	free(w);
	return 0;
}

void *dec_split_worker(void *arg)
{
	struct split *sp = arg;
	uint8_t *buf = malloc(SPLIT_WINDOW);
	/* without it, every element goes to the caller's thread */
	void *tview = sp->view ? sp->view->worker_open(sp->view_ctx) : NULL;

	for (;;) {
		size_t k;

		pthread_mutex_lock(&sp->lock);
		for (;;) {
			while (sp->next_start < sp->nchunks &&
			       sp->chunks[sp->next_start].state != chunk_unclaimed)
				sp->next_start++;
			if (sp->abort || sp->next_start >= sp->nchunks ||
			    sp->next_start < sp->replaying + sp->ahead)
				break;
			pthread_cond_wait(&sp->cond, &sp->lock);
		}
		if (sp->abort || sp->next_start >= sp->nchunks || !buf) {
			if (!buf) {
				sp->abort = true;
				sp->err = sp->err ? sp->err : -cste_nomem;
			}
			pthread_cond_broadcast(&sp->cond);
			pthread_mutex_unlock(&sp->lock);
			break;
		}
		k = sp->next_start++;
		sp->chunks[k].state = chunk_running;
		pthread_mutex_unlock(&sp->lock);
		if (run_chunk(sp, k, buf, tview) < 0) {
			pthread_mutex_lock(&sp->lock);
			sp->abort = true;
			sp->err = sp->err ? sp->err : -cste_nomem;
			sp->chunks[k].done = true;
			sp->chunks[k].next = sp->nchunks;
			sp->chunks[k].ret = -cste_nomem;
			pthread_cond_broadcast(&sp->cond);
			pthread_mutex_unlock(&sp->lock);
		}
	}
	free(buf);
	if (tview)
		sp->view->worker_close(sp->view_ctx, tview);
	pthread_mutex_lock(&sp->lock);
	sp->exited++; /* nothing of the run is touched from here on */
	pthread_cond_broadcast(&sp->cond);
	pthread_mutex_unlock(&sp->lock);
	return NULL;
}
