/* The call trace's lines made on the decoding threads (sym_script_calls_run):
 * each worker thread has a reader of the symbolizer and a script view of its
 * own, whose call model is a stretch's (calls_rel.c). The model learns each
 * thread from a range the caller's model follows, as report's call views do;
 * the view learns its trace ID's loss and last timestamp as the branch lines
 * do (script_view.c). Until it knows them it defers every element. Then it
 * prints the lines of the ranges its model follows and of the elements that
 * move no stack (timestamps, context). What acts on the stacks (an exception,
 * lost trace, a filter going off), a range the model cannot follow and the
 * elements of another trace ID go to the caller's thread.
 *
 * A stretch knows a frame's depth only from the first frame it learnt of its
 * thread. So a line's indent is left out and noted: where in the block's bytes,
 * the thread, and how many levels above that frame. The caller's model, which
 * checks the block and knows where that frame is on its stack, puts the spaces
 * in as the block's bytes go out. */
#include "calls_rel.h"
#include "script_int.h"
#include "views_int.h"

#include <stdlib.h>
#include <string.h>

/* Elements the filters keep that a stretch's view learns from before it stops
 * trying (as script_view.c's): the rest of the stretch is deferred as it is. */
#define CVIEW_PATIENCE 16384

/* A line of a block whose indent the caller makes. */
struct cmark {
	size_t start;              /* its first byte in the block's bytes */
	size_t len;                /* its bytes, '\n' included */
	size_t head;               /* bytes before the indent */
	uint32_t wthread;          /* its thread in the stretch's model */
	uint32_t levels;           /* above the thread's first frame there */
	uint64_t spaces;           /* the indent, once the caller knows it */
};

struct cmarks {
	size_t n, cap;
	struct cmark *v;
};

static void marks_free(struct cmarks *m)
{
	if (m)
		free(m->v);
	free(m);
}

/* What the views of one run share: the caller's view and writer, and the marks
 * of the block it took last, until its bytes go out. */
struct cview_run {
	struct cst_script *main;
	const struct cst_trace *trace;
	cst_lines_fn write;
	void *write_ctx;
	struct cmarks *pending;
	struct cst_buf buf;        /* a block with its indents */
};

/* What the block hands over of its trace ID, as it was before the element
 * that ended it when that one was deferred (the view learnt from it since). */
struct id_state {
	uint64_t last_ts;
	struct sym_loss_state loss;
};

struct cview {
	struct sym_view_worker w; /* first: the pool's */
	struct cst_script *s;
	const struct cview_run *run;
	cst_view_write_fn write;  /* the block's */
	void *write_ctx;
	size_t block_bytes;       /* written into the block being filled */
	struct cmarks *marks;     /* the block's */
	bool mark_open;           /* the last mark's line is being made */
	int err;
	uint8_t id;               /* the trace ID of the stretch */
	bool has_id;
	bool need_ts;             /* its lines wait for a timestamp */
	bool seen;                /* an element of the stretch was seen */
	bool knows;               /* the ID's loss and time are the stream's */
	bool committed;           /* printed since the stretch began */
	bool printed;             /* printed into the block being filled */
	bool before_held;         /* @before holds the ID's state before a deferred element */
	bool lost_track;          /* the model could not follow a range it said it would */
	bool kept;                /* the filters kept the element last learnt from */
	struct id_state before;
	uint64_t handed_ts;       /* the ID's last timestamp when it last handed over */
	unsigned learned;         /* kept elements deferred while learning */
};

/* The script's lines into the block, counted: where the next line starts. */
static int view_write(void *ctx, const char *bytes, size_t len)
{
	struct cview *v = ctx;

	if (v->mark_open) {
		v->marks->v[v->marks->n - 1].len = len;
		v->mark_open = false;
	}
	v->block_bytes += len;
	return v->write(v->write_ctx, bytes, len);
}

/* The script's indent: noted for the caller (the line is written next). */
static void note_indent(void *ctx, const struct cst_call_event *ev, uint32_t levels, size_t at)
{
	struct cview *v = ctx;
	struct cmarks *m = v->marks;

	if (!m && !(m = v->marks = calloc(1, sizeof(*m)))) {
		v->err = -cste_nomem;
		return;
	}
	if (CST_GROW(m->v, m->cap, m->n + 1) < 0) {
		v->err = -cste_nomem;
		return;
	}
	m->v[m->n++] = (struct cmark){.start = v->block_bytes, .head = at,
				      .wthread = ev->thread, .levels = levels};
	v->mark_open = true;
}

/* A worker's view (sym_view_pool's make): a call trace of its own over @reader,
 * with a stretch's model. */
static struct sym_view_worker *cview_make(void *ctx, struct cst_symbolizer *reader)
{
	const struct cview_run *run = ctx;
	struct cview *v = calloc(1, sizeof(*v));

	if (!v)
		return NULL;
	if (cst_script_alloc(&v->s, reader, view_write, v, &run->main->o) < 0 ||
	    sym_script_stretch(v->s, note_indent, v) < 0) {
		cst_script_free(v->s);
		free(v);
		return NULL;
	}
	v->run = run;
	return &v->w;
}

static void cview_free(void *ctx, struct sym_view_worker *w)
{
	struct cview *v = (struct cview *)w;

	(void)ctx;
	cst_script_free(v->s);
	marks_free(v->marks);
	free(v);
}

static void *view_open(void *worker, cst_view_write_fn write, void *write_ctx)
{
	struct cview *v = worker;
	struct cst_script *s = v->s;

	v->write = write;
	v->write_ctx = write_ctx;
	v->block_bytes = 0;
	v->mark_open = false;
	v->err = 0;
	s->failed = false;
	s->mute = true;
	sym_loss_clear(s->loss);
	sym_filter_clear_ts(s->filter);
	sym_calls_rel_clear(s->calls);
	v->has_id = v->seen = v->knows = v->committed = v->printed = false;
	v->before_held = v->lost_track = false;
	v->learned = 0;
	memset(&v->w.held, 0, sizeof(v->w.held));
	return v;
}

/* An element the caller's view takes (cst_script_add there): the filters, the
 * loss model (whose totals are the caller's to count) and the time learn from
 * it; the stretch's model learns the thread of a range from it, and after
 * anything else that moves the stacks it knows no thread. */
static int learn_add(void *ctx, const struct cst_sym_elem *se)
{
	struct cview *v = ctx;
	struct cst_script *s = v->s;
	const struct cst_elem *e = se->elem;
	struct cst_loss_totals block;
	int err;

	v->kept = cst_sym_filter_keep(s->filter, se);
	if (v->kept) {
		sym_loss_take_totals(s->loss, &block);
		err = cst_loss_add(s->loss, se, cst_sym_filter_time(s->filter, se), NULL);
		sym_loss_take_totals(s->loss, NULL);
		sym_loss_add_totals(s->loss, &block);
		if (err)
			return err;
	}
	if (e->type == cst_elem_instr_range)
		return sym_calls_rel_escaped(
			s->calls, se, v->kept && !sym_filter_window_unknown(s->filter, e->trace_id));
	if (sym_calls_acts_on(e))
		sym_calls_rel_unsync(s->calls);
	return 0;
}

/* The stretch's trace ID, and whether its lines wait for a timestamp: from its
 * first element, or the first it learns from. */
static void take_id(struct cview *v, const struct cst_elem *e)
{
	if (v->has_id)
		return;
	v->id = e->trace_id & 0x7f;
	v->has_id = true;
	v->need_ts = sym_script_needs_ts(v->s, v->run->trace, e);
}

/* Defer @e (@first: the stretch's first element), learning from it as the
 * caller's view will take it. */
static int defer(struct cview *v, const struct cst_elem *e, bool first)
{
	uint8_t id = e->trace_id & 0x7f;
	bool mine = id == v->id;
	int ret;

	if (v->printed && !v->before_held) {
		/* the block's state is taken after this element: as it is now */
		v->before.last_ts = sym_filter_last_ts(v->s->filter, v->id);
		sym_loss_state(v->s->loss, v->id, &v->before.loss);
		v->before_held = true;
	}
	if (mine && !v->committed && e->type == cst_elem_timestamp &&
	    sym_script_timed(v->s) && !v->need_ts) {
		v->need_ts = true; /* its source timestamps after all: wait for it */
		v->knows = false;
	}
	v->s->mute = true;
	ret = sym_view_learn(&v->w, e, learn_add, v);
	if (ret < 0)
		return ret;
	if (mine && !v->knows) {
		v->learned += v->kept;
		/* a range the caller cannot join with one before the stretch, that
		 * the filters keep, at a known time */
		if (e->type == cst_elem_instr_range && !first && v->kept &&
		    (!v->need_ts || sym_filter_last_ts(v->s->filter, id)))
			v->knows = true;
	}
	return cst_view_defer;
}

/* An element this view prints: cst_script_add with the stretch's model. */
static int print_add(void *ctx, const struct cst_sym_elem *se)
{
	struct cview *v = ctx;
	int ret = cst_script_add(v->s, se);

	if (ret == SYM_CALLS_ESCAPE) { /* sym_calls_rel_follows said otherwise */
		v->lost_track = true;
		return 0;
	}
	return ret;
}

static int view_elem(void *view, const struct cst_elem *e)
{
	struct cview *v = view;
	bool first = !v->seen;
	int ret;

	v->seen = true;
	take_id(v, e);
	if ((e->trace_id & 0x7f) != v->id)
		return defer(v, e, first); /* its loss and time are not handed over */
	if (!v->knows) {
		if (v->learned >= CVIEW_PATIENCE)
			return cst_view_defer; /* the rest of the stretch, as it is */
		return defer(v, e, first);
	}
	if (e->type == cst_elem_instr_range ? !sym_calls_rel_follows(v->s->calls, e)
					    : sym_calls_acts_on(e))
		return defer(v, e, first);
	if (!v->committed) {
		v->handed_ts = sym_filter_last_ts(v->s->filter, v->id);
		v->committed = true;
	}
	v->s->mute = false;
	v->printed = true;
	ret = cst_symbolizer_feed(v->w.reader, e, print_add, v);
	if (!ret && v->err)
		ret = v->err;
	if (ret < 0)
		return ret;
	return v->lost_track ? cst_view_give_up : cst_view_printed;
}

/* An element of the stretch's trace ID that went out before the stretch, as
 * the caller's view saw it (no range of the stretch joins one before it): the
 * models learn from it as from a deferred one, the thread of its ranges too.
 * It does not count against the view's patience. */
static int view_learn(void *view, const struct cst_elem *e)
{
	struct cview *v = view;
	unsigned learned;
	int ret;

	take_id(v, e);
	if ((e->trace_id & 0x7f) != v->id || v->committed || v->printed)
		return 0;
	learned = v->learned;
	ret = defer(v, e, false);
	v->learned = learned;
	return ret < 0 ? ret : 0;
}

/* What a block hands over: its call model's moves, the lines it indents, what
 * it knows of its trace ID (once it printed), the losses it counted and the
 * counts of what it symbolized. */
struct cview_state {
	struct sym_calls_part *calls;
	struct cmarks *marks;
	bool broken;               /* out of memory making them */
	bool known;
	uint8_t id;
	uint64_t ts_before;        /* the last timestamp its lines took to be before them */
	struct id_state end;
	struct cst_loss_totals lost;
	struct cst_sym_counts counts;
};

static size_t view_state(void *view, void *buf, size_t size)
{
	struct cview *v = view;
	struct cview_state *st = buf;

	if (size < sizeof(*st))
		return 0;
	memset(st, 0, sizeof(*st));
	sym_view_block_counts(&v->w, &st->counts);
	if (sym_calls_rel_take(v->s->calls, &st->calls) < 0)
		st->broken = true; /* the caller refuses the block */
	st->marks = v->marks;
	v->marks = NULL;
	v->mark_open = false;
	v->block_bytes = 0;
	v->printed = false;
	if (v->committed) {
		st->known = true;
		st->id = v->id;
		st->ts_before = v->handed_ts;
		if (v->before_held) {
			st->end = v->before;
		} else {
			st->end.last_ts = sym_filter_last_ts(v->s->filter, v->id);
			sym_loss_state(v->s->loss, v->id, &st->end.loss);
		}
		v->handed_ts = st->end.last_ts;
		sym_loss_take_totals(v->s->loss, &st->lost);
	}
	v->before_held = false;
	return sizeof(*st);
}

static void view_close(void *view)
{
	(void)view; /* it stays with its worker */
}

static void state_free(const struct cview_state *st)
{
	sym_calls_part_free(st->calls);
	marks_free(st->marks);
}

/* The time of trace ID @id's elements here, as the caller's view gives it. */
static uint64_t time_of(void *ctx, uint8_t id)
{
	const struct cst_script *main = ctx;

	return sym_filter_time_of(main->filter, id);
}

/* Each mark's indent: its thread's place in the caller's model. */
static int place_marks(struct cmarks *m, const struct sym_calls_place *places, uint32_t n)
{
	for (size_t i = 0; m && i < m->n; i++) {
		struct cmark *k = &m->v[i];
		uint32_t j = 0;

		while (j < n && places[j].wthread != k->wthread)
			j++;
		if (j == n) /* a line is indented only where the block moved its thread */
			return -cste_invalid;
		k->spaces = 2 * ((uint64_t)places[j].base + k->levels);
	}
	return 0;
}

/* On the caller's thread: the block's call model checked and taken, then what it
 * knew of its trace ID; its marks wait for its bytes (run_write). */
static int view_adopt(void *ctx, const void *state, size_t len)
{
	struct cview_run *run = ((struct sym_view_pool *)ctx)->ctx;
	struct cst_script *main = run->main;
	const struct cview_state *st = state;
	uint32_t n = sym_calls_part_count(st->calls);
	struct sym_calls_place *places = NULL;
	int err = 0;

	if (len != sizeof(*st))
		return -cste_invalid;
	/* not taken, and one thread does it again: a block it could not hand over,
	 * lines whose times took no timestamp to be before them where one was (a
	 * source that timestamps with its programming saying it does not), and a
	 * block that does not fit the caller's stacks */
	if (st->broken || (st->known && sym_script_timed(main) &&
			   sym_filter_last_ts(main->filter, st->id) != st->ts_before))
		return cst_view_give_up;
	if (n) {
		places = malloc(n * sizeof(*places));
		if (!places) {
			state_free(st);
			return -cste_nomem;
		}
		if (sym_calls_check(main->calls, st->calls, places)) {
			free(places);
			return cst_view_give_up;
		}
	}
	cst_symbolizer_add_counts(main->sym, &st->counts);
	if (st->known) {
		sym_loss_adopt(main->loss, st->id, &st->end.loss);
		sym_loss_add_totals(main->loss, &st->lost);
		/* none seen where the view was: the one before it stands */
		if (st->end.last_ts)
			sym_filter_set_last_ts(main->filter, st->id, st->end.last_ts);
	}
	if (n)
		err = sym_calls_apply(main->calls, st->calls, places, time_of, main);
	if (!err)
		err = place_marks(st->marks, places, n);
	free(places);
	marks_free(run->pending);
	run->pending = err ? NULL : st->marks;
	sym_calls_part_free(st->calls);
	if (err)
		marks_free(st->marks);
	return err;
}

static void view_drop(void *ctx, const void *state, size_t len)
{
	(void)ctx;
	if (len == sizeof(struct cview_state))
		state_free(state);
}

void sym_script_put_indented(struct cst_buf *b, const char *line, size_t len, size_t head,
			     uint64_t spaces)
{
	size_t text = len ? len - 1 : 0; /* without its '\n' */
	size_t room, pad, rest;
	uint8_t *at;

	if (head > text)
		head = text;
	room = CST_LINE_MAX - 1 - head; /* the head is whole */
	pad = spaces < room ? (size_t)spaces : room;
	rest = text - head < room - pad ? text - head : room - pad;
	cst_buf_put(b, line, head);
	if (pad && (at = cst_buf_room(b, pad)))
		memset(at, ' ', pad);
	cst_buf_put(b, line + head, rest);
	cst_buf_put(b, "\n", 1);
}

/* A block's bytes with the indents of its marked lines. */
static int run_write(void *ctx, const char *bytes, size_t len, uint64_t nelems,
		     uint64_t offset, bool has_offset)
{
	struct cview_run *run = ctx;
	struct cmarks *m = run->pending;
	struct cst_buf *b = &run->buf;
	size_t from = 0;

	if (!m)
		return run->write(run->write_ctx, bytes, len, nelems, offset, has_offset);
	run->pending = NULL;
	b->len = 0;
	for (size_t i = 0; i < m->n; i++) {
		const struct cmark *k = &m->v[i];

		cst_buf_put(b, bytes + from, k->start - from);
		sym_script_put_indented(b, bytes + k->start, k->len, k->head, k->spaces);
		from = k->start + k->len;
	}
	marks_free(m);
	if (!cst_buf_put(b, bytes + from, len - from))
		return -cste_nomem;
	return run->write(run->write_ctx, (const char *)b->p, b->len, nelems, offset, has_offset);
}

int sym_script_calls_run(struct cst_script *s, struct cst_session *session, cst_sym_elem_fn fn,
			 void *ctx, cst_lines_fn write, void *write_ctx)
{
	static const struct cst_view_ops ops = {
		.sz = sizeof(ops), .worker_open = sym_view_pool_open,
		.worker_close = sym_view_pool_close, .open = view_open, .elem = view_elem,
		.state = view_state, .close = view_close, .adopt = view_adopt, .drop = view_drop,
		.state_size = sizeof(struct cview_state), .learn = view_learn,
	};
	static const struct sym_view_kind kind = {&ops, cview_make, cview_free};
	struct cview_run run = {s, cst_session_trace(session), write, write_ctx, NULL, {0}};
	int ret = sym_view_pool_run(s->sym, session, &kind, &run, fn, ctx, run_write, &run);

	marks_free(run.pending);
	cst_buf_fini(&run.buf);
	return ret;
}
