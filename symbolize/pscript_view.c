/* perf script's lines made on the decoding threads (cst_pscript_run): each
 * worker thread has a reader of the symbolizer and a pscript of its own. A
 * stretch's pscript starts knowing nothing of the packet before the stretch:
 * until it has seen a range or a discontinuity of its trace ID (and, where the
 * lines print times from trace timestamps, a timestamp), it defers every element
 * to the caller's thread, learning from each as if printing it. From then on it
 * prints, and hands over after each block of its bytes its queue, timestamp
 * and counts.
 *
 * perf's instruction samples fall every N instructions counted through the
 * whole stream, which a stretch cannot know. So its pscript prints the branch
 * samples alone and lists the block's ranges (where in the block's bytes each
 * one's lines start, and what its samples print). The caller's thread, which
 * knows the count, finds the few ranges a sample falls in and prints their
 * samples into the block's bytes there. */
#include "pscript_int.h"
#include "views_int.h"

#include <stdlib.h>
#include <string.h>

/* Elements a stretch's view learns from before it stops trying: a trace with
 * timestamps few and far between, where times are printed, would otherwise be
 * formatted twice over (on the worker, unprinted, and on the caller's thread). */
#define PVIEW_PATIENCE 1024

/* A block's ranges, where instruction samples are asked for. */
struct pview_ranges {
	uint8_t id;
	size_t n, cap;
	struct pview_range {
		size_t at;                 /* its lines' start in the block's bytes */
		struct sym_psc_range r;
	} *v;
};

static void ranges_free(struct pview_ranges *rs)
{
	if (rs)
		free(rs->v);
	free(rs);
}

/* What the views of one run share: the caller's pscript and writer, and the
 * ranges of the block whose state it took last, until its bytes go out. */
struct pview_run {
	struct cst_pscript *main;
	cst_lines_fn write;
	void *write_ctx;
	struct pview_ranges *pending;
	struct cst_buf buf;              /* a block with samples printed into it */
};

struct pview {
	struct sym_view_worker w; /* first: the pool's */
	struct cst_pscript *p;
	cst_view_write_fn write;  /* the block's, through view_write */
	void *write_ctx;
	size_t block_bytes;       /* printed into the block being filled */
	struct pview_ranges *ranges; /* the block's, when instruction samples are asked for */
	int err;
	bool need_ts;   /* the lines print times from trace timestamps */
	uint8_t id;     /* the trace ID of the stretch */
	bool has_id;
	bool ready;     /* the queue (and timestamp) is known: the next element prints */
	bool committed; /* printing: never deferring again */
	unsigned learned; /* elements deferred while learning */
};

/* The lines depend on the trace's timestamps: a time printed from them (in the
 * time field or an error line), or a time window, which keeps elements by them. */
static bool needs_ts(const struct cst_pscript *p)
{
	return (((p->o.fields & cst_pscript_time) || p->o.errors) && sym_psc_trace_times(p)) ||
	       (p->o.filter && p->o.filter->window);
}

/* The pscript's lines into the block, counted: where the next range's start. */
static int view_write(void *ctx, const char *bytes, size_t len)
{
	struct pview *v = ctx;

	v->block_bytes += len;
	return v->write(v->write_ctx, bytes, len);
}

/* The pscript's insn_sink: a printed range into the block's list. */
static void keep_range(void *ctx, const struct sym_psc_range *r)
{
	struct pview *v = ctx;
	struct pview_ranges *rs = v->ranges;

	if (!v->committed || v->err)
		return; /* learning: the caller's thread counts it */
	if (!rs && !(rs = v->ranges = calloc(1, sizeof(*rs)))) {
		v->err = -cste_nomem;
		return;
	}
	rs->id = v->id;
	if (CST_GROW(rs->v, rs->cap, rs->n + 1) < 0) {
		v->err = -cste_nomem;
		return;
	}
	rs->v[rs->n++] = (struct pview_range){v->block_bytes, *r};
}

/* A worker's view (sym_view_pool's make): a pscript of its own over @reader. */
static struct sym_view_worker *pview_make(void *ctx, struct cst_symbolizer *reader)
{
	const struct cst_pscript *main = ((const struct pview_run *)ctx)->main;
	struct pview *v = calloc(1, sizeof(*v));

	if (!v)
		return NULL;
	if (cst_pscript_alloc(&v->p, reader, view_write, v, &main->o) < 0) {
		free(v);
		return NULL;
	}
	v->need_ts = needs_ts(v->p);
	if (main->o.instructions) {
		v->p->insn_sink = keep_range;
		v->p->insn_sink_ctx = v;
	}
	return &v->w;
}

static void pview_free(void *ctx, struct sym_view_worker *w)
{
	struct pview *v = (struct pview *)w;

	(void)ctx;
	cst_pscript_free(v->p);
	ranges_free(v->ranges);
	free(v);
}

static void *view_open(void *worker, cst_view_write_fn write, void *write_ctx)
{
	struct pview *v = worker;

	v->write = write;
	v->write_ctx = write_ctx;
	v->block_bytes = 0;
	v->err = 0;
	v->p->failed = false;
	v->p->mute = true;
	sym_psc_clear(v->p);
	v->has_id = v->ready = v->committed = false;
	v->learned = 0;
	memset(&v->w.held, 0, sizeof(v->w.held)); /* a stretch left off keeps none */
	return v;
}

/* The stretch's trace ID: its first element's, or the first it learns from. */
static uint8_t take_id(struct pview *v, const struct cst_elem *e)
{
	uint8_t id = e->trace_id & 0x7f;

	if (!v->has_id) {
		v->id = id;
		v->has_id = true;
	}
	return id;
}

/* Learn from @e, an element of the stretch's ID the caller's view takes: is
 * the queue (and the time, where lines print it) known now? */
static int learn(struct pview *v, const struct cst_elem *e)
{
	int ret = sym_view_learn(&v->w, e, cst_pscript_add, v->p);

	if (ret < 0)
		return ret;
	v->ready = sym_psc_knows(v->p, v->id) &&
		   (!v->need_ts || sym_filter_last_ts(v->p->filter, v->id));
	return 0;
}

static int view_elem(void *view, const struct cst_elem *e)
{
	struct pview *v = view;
	int ret;

	if (take_id(v, e) != v->id) /* one source per stretch: a second cannot be handed over */
		return v->committed ? cst_view_give_up : cst_view_defer;
	if (!v->committed && !v->ready) {
		if (v->learned++ >= PVIEW_PATIENCE)
			return cst_view_defer; /* the rest of the stretch, as it is */
		ret = learn(v, e);
		return ret < 0 ? ret : cst_view_defer;
	}
	v->committed = true;
	v->p->mute = false;
	ret = cst_symbolizer_feed(v->w.reader, e, cst_pscript_add, v->p);
	if (!ret && v->err)
		ret = v->err;
	return ret < 0 ? ret : cst_view_printed;
}

/* An element of the stretch's trace ID that went out before the stretch: the
 * queue learns from it as from one deferred while learning. */
static int view_learn(void *view, const struct cst_elem *e)
{
	struct pview *v = view;

	if (take_id(v, e) != v->id || v->committed)
		return 0;
	return learn(v, e);
}

/* What a block of a view's lines hands over: the queue it left (when it printed)
 * and the counts of the elements it symbolized for them. */
struct pview_state {
	size_t queue_len;
	unsigned char queue[PSC_STATE];
	struct cst_sym_counts counts;
	struct pview_ranges *ranges; /* the block's, or NULL */
};

static size_t view_state(void *view, void *buf, size_t size)
{
	struct pview *v = view;
	struct pview_state *st = buf;

	if (size < sizeof(*st))
		return 0;
	sym_view_block_counts(&v->w, &st->counts);
	st->queue_len = v->committed ? sym_psc_state(v->p, v->id, st->queue, sizeof(st->queue)) : 0;
	/* the next block's bytes start anew */
	st->ranges = v->ranges;
	v->ranges = NULL;
	v->block_bytes = 0;
	return sizeof(*st);
}

static void view_close(void *view)
{
	struct pview *v = view;

	ranges_free(v->ranges); /* none: the last block took them */
	v->ranges = NULL;
}

static int view_adopt(void *ctx, const void *state, size_t len)
{
	struct pview_run *run = ((struct sym_view_pool *)ctx)->ctx;
	const struct pview_state *st = state;

	if (len != sizeof(*st))
		return -cste_invalid;
	cst_symbolizer_add_counts(run->main->sym, &st->counts);
	/* the block's bytes come next (run_write) */
	ranges_free(run->pending);
	run->pending = st->ranges;
	return st->queue_len ? sym_psc_adopt(run->main, st->queue, st->queue_len) : 0;
}

static void view_drop(void *ctx, const void *state, size_t len)
{
	(void)ctx;
	if (len == sizeof(struct pview_state))
		ranges_free(((const struct pview_state *)state)->ranges);
}

static int into_buf(void *ctx, const char *bytes, size_t len)
{
	return cst_buf_put(ctx, bytes, len) ? 0 : -cste_nomem;
}

/* A block's bytes, with the instruction samples that fall in its ranges printed
 * before the lines of the range each falls in. Most blocks have none: their
 * bytes go out as they are. */
static int run_write(void *ctx, const char *bytes, size_t len, uint64_t nelems,
		     uint64_t offset, bool has_offset)
{
	struct pview_run *run = ctx;
	struct pview_ranges *rs = run->pending;
	struct cst_pscript *p = run->main;
	cst_script_write_fn write = p->write;
	void *write_ctx = p->write_ctx;
	uint64_t left = rs ? sym_psc_insns_to_sample(p, rs->id) : UINT64_MAX, skipped = 0;
	size_t i = 0, from = 0;

	if (!rs)
		return run->write(run->write_ctx, bytes, len, nelems, offset, has_offset);
	run->pending = NULL;
	/* the ranges before the first that a sample falls in: counted, no more */
	for (; i < rs->n && rs->v[i].r.num_insns < left; i++) {
		left -= rs->v[i].r.num_insns;
		skipped += rs->v[i].r.num_insns;
	}
	sym_psc_count_insns(p, rs->id, skipped);
	if (i == rs->n) {
		ranges_free(rs);
		return run->write(run->write_ctx, bytes, len, nelems, offset, has_offset);
	}
	run->buf.len = 0;
	p->write = into_buf;
	p->write_ctx = &run->buf;
	for (; i < rs->n && !run->buf.failed; i++) {
		const struct pview_range *r = &rs->v[i];

		cst_buf_put(&run->buf, bytes + from, r->at - from);
		from = r->at;
		sym_psc_insn_samples(p, rs->id, &r->r);
	}
	p->write = write;
	p->write_ctx = write_ctx;
	ranges_free(rs);
	if (!cst_buf_put(&run->buf, bytes + from, len - from))
		return -cste_nomem;
	return run->write(run->write_ctx, (const char *)run->buf.p, run->buf.len, nelems, offset,
			  has_offset);
}

/* Samples made apart: branch samples, and instruction samples where they are
 * few (one every PVIEW_MIN_PERIOD instructions or more: each is located by a
 * look-up on the caller's thread, where a worker reads its range's pieces). The
 * filters keep or drop each element by itself but for a time window, whose
 * timestamp the view learns; one they drop leaves the queue as it was. */
#define PVIEW_MIN_PERIOD 1000
static bool viewable(const struct cst_pscript *p)
{
	return (p->o.branches || p->o.instructions) &&
	       (!p->o.instructions || p->o.period >= PVIEW_MIN_PERIOD);
}

int cst_pscript_run(struct cst_pscript *p, struct cst_session *session, cst_sym_elem_fn fn,
		    void *ctx, cst_lines_fn write, void *write_ctx)
{
	static const struct cst_view_ops ops = {
		.sz = sizeof(ops), .worker_open = sym_view_pool_open,
		.worker_close = sym_view_pool_close, .open = view_open, .elem = view_elem,
		.state = view_state, .close = view_close, .adopt = view_adopt, .drop = view_drop,
		.state_size = sizeof(struct pview_state), .learn = view_learn,
	};
	static const struct sym_view_kind kind = {&ops, pview_make, pview_free};
	struct pview_run run = {.main = p, .write = write, .write_ctx = write_ctx};
	int ret;

	if (!p || !session || !fn || !write)
		return -cste_invalid;
	if (!viewable(p))
		return cst_symbolizer_run(p->sym, session, fn, ctx);
	ret = sym_view_pool_run(p->sym, session, &kind, &run, fn, ctx, run_write, &run);
	ranges_free(run.pending);
	cst_buf_fini(&run.buf);
	return ret;
}
