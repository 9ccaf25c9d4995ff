/* perf script's lines made on the decoding threads (cst_pscript_run): each
 * worker thread has a reader of the symbolizer and a pscript of its own. A
 * stretch's pscript starts knowing nothing of the packet before the stretch:
 * until it has seen a range or a discontinuity of its trace ID (and, where the
 * lines print times from trace timestamps, a timestamp), it defers every element
 * to the caller's thread, learning from each as if printing it. From then on it
 * prints, and hands over after each block of its bytes its queue, timestamp
 * and counts. */
#include "pscript_int.h"
#include "views_int.h"

#include <stdlib.h>
#include <string.h>

/* Elements a stretch's view learns from before it stops trying: a trace with
 * timestamps few and far between, where times are printed, would otherwise be
 * formatted twice over (on the worker, unprinted, and on the caller's thread). */
#define PVIEW_PATIENCE 1024

struct pview {
	struct sym_view_worker w; /* first: the pool's */
	struct cst_pscript *p;
	bool need_ts;   /* the lines print times from trace timestamps */
	uint8_t id;     /* the trace ID of the stretch */
	bool has_id;
	bool ready;     /* the queue (and timestamp) is known: the next element prints */
	bool committed; /* printing: never deferring again */
	unsigned learned; /* elements deferred while learning */
	struct cst_sym_counts learning; /* their counts, thrown away */
};

/* The lines depend on the trace's timestamps: a time printed from them (in the
 * time field or an error line), or a time window, which keeps elements by them. */
static bool needs_ts(const struct cst_pscript *p)
{
	return (((p->o.fields & cst_pscript_time) || p->o.errors) && sym_psc_trace_times(p)) ||
	       (p->o.filter && p->o.filter->window);
}

static int no_write(void *ctx, const char *line, size_t len)
{
	(void)ctx;
	(void)line;
	(void)len;
	return 0;
}

/* A worker's view (sym_view_pool's make): a pscript of its own over @reader. */
static struct sym_view_worker *pview_make(void *ctx, struct cst_symbolizer *reader)
{
	const struct cst_pscript *main = ctx;
	struct pview *v = calloc(1, sizeof(*v));

	if (!v)
		return NULL;
	if (cst_pscript_alloc(&v->p, reader, no_write, NULL, &main->o) < 0) {
		free(v);
		return NULL;
	}
	v->need_ts = needs_ts(v->p);
	return &v->w;
}

static void pview_free(void *ctx, struct sym_view_worker *w)
{
	struct pview *v = (struct pview *)w;

	(void)ctx;
	cst_pscript_free(v->p);
	free(v);
}

static void *view_open(void *worker, cst_view_write_fn write, void *write_ctx)
{
	struct pview *v = worker;

	v->p->write = write;
	v->p->write_ctx = write_ctx;
	v->p->failed = false;
	v->p->mute = true;
	sym_psc_clear(v->p);
	v->has_id = v->ready = v->committed = false;
	v->learned = 0;
	return v;
}

static int view_elem(void *view, const struct cst_elem *e)
{
	struct pview *v = view;
	uint8_t id = e->trace_id & 0x7f;
	int ret;

	if (!v->has_id) {
		v->id = id;
		v->has_id = true;
	}
	if (id != v->id) /* one source per stretch: a second cannot be handed over */
		return v->committed ? cst_view_give_up : cst_view_defer;
	if (!v->committed && !v->ready) {
		if (v->learned++ >= PVIEW_PATIENCE)
			return cst_view_defer; /* the rest of the stretch, as it is */
		ret = cst_symbolizer_feed(v->w.reader, e, cst_pscript_add, v->p);
		if (ret < 0)
			return ret;
		/* the caller's thread symbolizes it again, and counts it */
		cst_symbolizer_take_counts(v->w.reader, &v->learning);
		v->ready = sym_psc_knows(v->p, id) &&
			   (!v->need_ts || sym_filter_last_ts(v->p->filter, id));
		return cst_view_defer;
	}
	v->committed = true;
	v->p->mute = false;
	ret = cst_symbolizer_feed(v->w.reader, e, cst_pscript_add, v->p);
	return ret < 0 ? ret : cst_view_printed;
}

/* What a block of a view's lines hands over: the queue it left (when it printed)
 * and the counts of the elements it symbolized for them. */
struct pview_state {
	size_t queue_len;
	unsigned char queue[PSC_STATE];
	struct cst_sym_counts counts;
};

static size_t view_state(void *view, void *buf, size_t size)
{
	struct pview *v = view;
	struct pview_state *st = buf;

	if (size < sizeof(*st))
		return 0;
	memset(&st->counts, 0, sizeof(st->counts));
	cst_symbolizer_take_counts(v->w.reader, &st->counts);
	st->queue_len = v->committed ? sym_psc_state(v->p, v->id, st->queue, sizeof(st->queue)) : 0;
	return sizeof(*st);
}

static void view_close(void *view)
{
	(void)view; /* it stays with its worker */
}

static int view_adopt(void *ctx, const void *state, size_t len)
{
	struct cst_pscript *main = ((struct sym_view_pool *)ctx)->ctx;
	const struct pview_state *st = state;

	if (len != sizeof(*st))
		return -cste_invalid;
	cst_symbolizer_add_counts(main->sym, &st->counts);
	return st->queue_len ? sym_psc_adopt(main, st->queue, st->queue_len) : 0;
}

/* Lines that can be made apart: branch samples only (an instruction sample
 * falls by a count that runs through the whole stream). The filters keep or
 * drop each element by itself but for a time window, whose timestamp the view
 * learns; one they drop leaves the queue as it was. */
static bool viewable(const struct cst_pscript *p)
{
	return p->o.branches && !p->o.instructions;
}

int cst_pscript_run(struct cst_pscript *p, struct cst_session *session, cst_sym_elem_fn fn,
		    void *ctx, cst_lines_fn write, void *write_ctx)
{
	static const struct cst_view_ops ops = {
		.sz = sizeof(ops), .worker_open = sym_view_pool_open,
		.worker_close = sym_view_pool_close, .open = view_open, .elem = view_elem,
		.state = view_state, .close = view_close, .adopt = view_adopt,
		.state_size = sizeof(struct pview_state),
	};
	static const struct sym_view_kind kind = {&ops, pview_make, pview_free};

	if (!p || !session || !fn || !write)
		return -cste_invalid;
	if (!viewable(p))
		return cst_symbolizer_run(p->sym, session, fn, ctx);
	return sym_view_pool_run(p->sym, session, &kind, p, fn, ctx, write, write_ctx);
}
