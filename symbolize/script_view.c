/* The script view's lines made on the decoding threads (cst_script_run): each
 * worker thread has a reader of the symbolizer and a script view of its own. A
 * stretch's view starts knowing nothing of its trace ID: where the range before
 * it went, whether a loss is still open, the last timestamp. It learns them from
 * its first elements, which it defers to the caller's thread without printing,
 * until it has seen a range that the filters keep and that is not the stretch's
 * first (the caller may join that one with the range before the stretch), after
 * a timestamp where lines print times or keep a time window. From then on it
 * prints, and hands over after each block of its bytes what it knows of the
 * trace ID. Branch and instruction lines (the call trace's are
 * script_calls_view.c's). The filters need nothing from before a stretch but
 * the last timestamp, which the view learns. */
#include "script_int.h"
#include "views_int.h"

#include <stdlib.h>
#include <string.h>

/* Elements the filters keep that a stretch's view learns from before it stops
 * trying: the rest of the stretch is deferred as it is. Learning prints nothing
 * (the script is muted), so it costs the look-ups and the models' steps alone,
 * and a trace that timestamps every few thousand elements is learnt in one
 * stretch. Elements the filters drop are not counted: they cost a look-up, and a
 * stretch that starts before a time window must live to print the window. */
#define SVIEW_PATIENCE 16384

/* What the views of one run share: the caller's view and the trace description. */
struct sview_run {
	struct cst_script *main;
	const struct cst_trace *trace;
};

struct sview {
	struct sym_view_worker w; /* first: the pool's */
	struct cst_script *s;
	const struct sview_run *run;
	uint8_t id;       /* the trace ID of the stretch */
	bool has_id;
	bool need_ts;     /* its lines depend on times (timed), and its source
			     timestamps */
	bool seen;        /* an element of the stretch was seen */
	bool knows;       /* the ID's flow and loss are the stream's */
	bool committed;   /* printing: never deferring again */
	uint64_t handed_ts; /* its last timestamp when it last handed over */
	unsigned learned; /* kept elements deferred while learning */
};

/* A worker's view (sym_view_pool's make): a script view of its own over @reader. */
static struct sym_view_worker *sview_make(void *ctx, struct cst_symbolizer *reader)
{
	const struct sview_run *run = ctx;
	struct sview *v = calloc(1, sizeof(*v));

	if (!v)
		return NULL;
	if (cst_script_alloc(&v->s, reader, run->main->write, NULL, &run->main->o) < 0) {
		free(v);
		return NULL;
	}
	v->run = run;
	return &v->w;
}

static void sview_free(void *ctx, struct sym_view_worker *w)
{
	struct sview *v = (struct sview *)w;

	(void)ctx;
	cst_script_free(v->s);
	free(v);
}

static void *view_open(void *worker, cst_view_write_fn write, void *write_ctx)
{
	struct sview *v = worker;
	struct cst_script *s = v->s;

	s->write = write;
	s->write_ctx = write_ctx;
	s->failed = false;
	s->mute = true;
	if (s->flow)
		sym_flow_clear(s->flow);
	sym_loss_clear(s->loss);
	sym_filter_clear_ts(s->filter);
	v->has_id = v->seen = v->knows = v->committed = false;
	v->learned = 0;
	memset(&v->w.held, 0, sizeof(v->w.held)); /* a stretch left off keeps none */
	return v;
}

/* The first element of the stretch's trace ID: which it is, and whether its
 * lines wait for a timestamp (a source whose programming has timestamps off
 * sends none: its times are 0 all along; should one come all the same, the
 * caller's view refuses what was printed before it was known, view_adopt). */
static void take_id(struct sview *v, const struct cst_elem *e)
{
	v->id = e->trace_id & 0x7f;
	v->has_id = true;
	v->need_ts = sym_script_needs_ts(v->s, v->run->trace, e);
}

/* cst_script_add while learning: whether the filters kept the element too (one
 * they drop moves no model). */
struct learning {
	struct cst_script *s;
	bool kept;
};

static int learn_add(void *ctx, const struct cst_sym_elem *se)
{
	struct learning *l = ctx;

	l->kept = cst_sym_filter_keep(l->s->filter, se);
	return cst_script_add(l->s, se);
}

/* Learn from @e (@first: the stretch's first element), as the caller's view
 * will when it prints it. */
static int learn(struct sview *v, const struct cst_elem *e, bool first)
{
	struct learning l = {v->s, false};
	int ret;

	if (e->type == cst_elem_timestamp && sym_script_timed(v->s) && !v->need_ts) {
		v->need_ts = true; /* its source timestamps after all: wait for it */
		v->knows = false;
	}
	ret = sym_view_learn(&v->w, e, learn_add, &l);
	if (ret < 0)
		return ret;
	v->learned += l.kept;
	/* a range the caller cannot join with one before the stretch, that the
	 * filters keep, at a known time (the branch line that ends it prints the
	 * time it ran at) */
	if (e->type == cst_elem_instr_range && !first && l.kept &&
	    (!v->need_ts || sym_filter_last_ts(v->s->filter, v->id)))
		v->knows = true;
	return cst_view_defer;
}

static int view_elem(void *view, const struct cst_elem *e)
{
	struct sview *v = view;
	uint8_t id = e->trace_id & 0x7f;
	bool first = !v->seen;
	int ret;

	v->seen = true;
	if (!v->has_id)
		take_id(v, e);
	if (id != v->id) /* one source per stretch: a second cannot be handed over */
		return v->committed ? cst_view_give_up : cst_view_defer;
	if (!v->committed) {
		if (!v->knows) {
			if (v->learned >= SVIEW_PATIENCE)
				return cst_view_defer; /* the rest of the stretch, as it is */
			return learn(v, e, first);
		}
		/* what it learnt is the caller's to count */
		sym_loss_take_totals(v->s->loss, NULL);
		v->handed_ts = sym_filter_last_ts(v->s->filter, id);
		v->committed = true;
		v->s->mute = false;
	}
	ret = cst_symbolizer_feed(v->w.reader, e, cst_script_add, v->s);
	return ret < 0 ? ret : cst_view_printed;
}

/* An element of the stretch's trace ID that went out before the stretch, as
 * the caller's view saw it (where stretches are cut after the decode, no range
 * of the stretch joins one before it): the models learn from it. It does not
 * count against the view's patience. */
static int view_learn(void *view, const struct cst_elem *e)
{
	struct sview *v = view;
	unsigned learned;
	int ret;

	if (!v->has_id)
		take_id(v, e);
	if ((e->trace_id & 0x7f) != v->id || v->committed)
		return 0;
	learned = v->learned;
	ret = learn(v, e, false);
	v->learned = learned;
	return ret < 0 ? ret : 0;
}

/* What a block of a view's lines hands over: what it knows of its trace ID (when
 * it printed), the losses it counted and the counts of what it symbolized. */
struct sview_state {
	bool known;
	uint8_t id;
	uint64_t ts_before; /* the last timestamp its lines took to be before them */
	uint64_t last_ts;
	struct sym_flow_state flow;
	struct sym_loss_state loss;
	struct cst_loss_totals lost;
	struct cst_sym_counts counts;
};

static size_t view_state(void *view, void *buf, size_t size)
{
	struct sview *v = view;
	struct sview_state *st = buf;

	if (size < sizeof(*st))
		return 0;
	memset(st, 0, sizeof(*st));
	sym_view_block_counts(&v->w, &st->counts);
	if (!v->committed)
		return sizeof(*st);
	st->known = true;
	st->id = v->id;
	st->ts_before = v->handed_ts;
	st->last_ts = v->handed_ts = sym_filter_last_ts(v->s->filter, v->id);
	if (v->s->flow)
		sym_flow_state(v->s->flow, v->id, &st->flow);
	sym_loss_state(v->s->loss, v->id, &st->loss);
	sym_loss_take_totals(v->s->loss, &st->lost);
	return sizeof(*st);
}

static void view_close(void *view)
{
	(void)view; /* it stays with its worker */
}

static int view_adopt(void *ctx, const void *state, size_t len)
{
	struct cst_script *main = ((const struct sview_run *)((struct sym_view_pool *)ctx)->ctx)->main;
	const struct sview_state *st = state;

	if (len != sizeof(*st))
		return -cste_invalid;
	/* lines whose times took no timestamp to be before them, where one was (a
	 * source that timestamps with its programming saying it does not): not
	 * taken, one thread symbolizes and prints them (and counts them) */
	if (st->known && sym_script_timed(main) &&
	    sym_filter_last_ts(main->filter, st->id) != st->ts_before)
		return cst_view_give_up;
	cst_symbolizer_add_counts(main->sym, &st->counts);
	if (!st->known)
		return 0;
	if (main->flow)
		sym_flow_adopt(main->flow, st->id, &st->flow);
	sym_loss_adopt(main->loss, st->id, &st->loss);
	sym_loss_add_totals(main->loss, &st->lost);
	/* none seen where the view was: the one before it stands */
	if (st->last_ts)
		sym_filter_set_last_ts(main->filter, st->id, st->last_ts);
	return 0;
}

int cst_script_run(struct cst_script *s, struct cst_session *session, cst_sym_elem_fn fn,
		   void *ctx, cst_lines_fn write, void *write_ctx)
{
	static const struct cst_view_ops ops = {
		.sz = sizeof(ops), .worker_open = sym_view_pool_open,
		.worker_close = sym_view_pool_close, .open = view_open, .elem = view_elem,
		.state = view_state, .close = view_close, .adopt = view_adopt,
		.state_size = sizeof(struct sview_state), .learn = view_learn,
	};
	static const struct sym_view_kind kind = {&ops, sview_make, sview_free};
	struct sview_run run;

	if (!s || !session || !fn || !write)
		return -cste_invalid;
	/* the call trace's stack runs through the whole stream: its own views */
	if (s->o.mode == cst_script_calls)
		return sym_script_calls_run(s, session, fn, ctx, write, write_ctx);
	run = (struct sview_run){s, cst_session_trace(session)};
	return sym_view_pool_run(s->sym, session, &kind, &run, fn, ctx, write, write_ctx);
}
