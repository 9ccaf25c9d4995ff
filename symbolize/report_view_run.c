/* The report view's table made on the decoding threads (cst_report_view_run):
 * each worker thread has a reader of the symbolizer, and its views count the
 * ranges they are given into a table of each block's own. The table is sums:
 * the blocks' tables add up into the caller's as the replay meets them (a block
 * whose list is thrown away is dropped). The filters apply there too; a time
 * window once the stretch has seen a timestamp of the range's trace ID (before,
 * the caller's thread counts it). Everything else (lost trace,
 * timestamps, context) is deferred to the caller's view in stream order, and so
 * is a stretch's first range, which the caller may join with the run before (the
 * table is the same either way; the count of ranges symbolized is one thread's).
 *
 * A sample profile (AutoFDO, llvm-profgen, LLVM's sample profile, coverage) is
 * counted there too, but its models run on from range to range: where a range
 * runs on, where simpleperf's held range branched to, the range before. A
 * stretch's view learns them from its first elements, deferred and counted by
 * the caller, until a range that is not the stretch's first ends in a taken
 * branch (from there on its models are the stream's). Its blocks hand over
 * their counts and the models they leave; an element it defers later, the
 * caller counts from the models as they were before it (its own move on,
 * counting nothing).
 *
 * The call views (a call graph, folded stacks, a flame graph, the page) follow
 * the call model there too (calls_rel.c): each thread from a range the caller's
 * model follows (deferred), from which the stretch knows where it is; each
 * block's tree (calltree_rel.c) and the frames it made go to the caller's
 * models, which check what the stretch took for granted about the frames below.
 * A block they do not fit is refused, and the stream is decoded again on one
 * thread from there. */
#include "calls_rel.h"
#include "report_view.h"
#include "views_int.h"

#include <stdlib.h>
#include <string.h>

/* What a block of a view counted: its own table (the block's list may yet be
 * thrown away, decoded again elsewhere) and the trace IDs it ran on. */
struct rpart {
	struct cst_report *rep;
	struct sym_afdo_counts afdo;
	uint64_t ranges;
	uint64_t ran[2];
};

struct rview {
	struct sym_view_worker w; /* first: the pool's */
	unsigned keys;
	struct cst_sym_filter *filter; /* the caller's filters, over the reader */
	struct rpart *part; /* since the last block, or NULL */
	/* the call views': the stretch's call model and the block's tree */
	struct cst_calls *calls;
	struct cst_calltree *tree;
	bool lost_track;    /* the call model could not follow a range it said it would */
	bool first_range;   /* the stretch's first range went to the caller */
	bool kept;          /* the filters kept the range last counted */
	/* a sample profile's: its models (its counts go to each block's part) */
	struct cst_afdo *afdo;
	uint8_t id;         /* the trace ID of the stretch */
	bool has_id;
	bool knows;         /* the models of @id are the stream's */
	bool before_held;   /* @before holds them as they were before a deferred element */
	struct sym_afdo_state before;
};

/* What a block hands over. */
struct rview_state {
	struct rpart *part;
	struct sym_calls_part *calls; /* the call views' */
	struct cst_calltree *tree;
	bool broken;        /* out of memory making them */
	struct cst_sym_counts counts;
	bool profile;       /* @afdo holds the models of trace ID @id */
	uint8_t id;
	struct sym_afdo_state afdo;
};

/* The call views' events of a worker: what the caller's calls_filtered gives
 * its tree, into the block's tree. */
static int rview_event(void *ctx, const struct cst_call_event *ev)
{
	struct rview *v = ctx;

	if (ev->kind == cst_call_insns && !cst_sym_filter_keep_piece(v->filter, ev->piece))
		return 0;
	if (!v->tree && cst_calltree_alloc(&v->tree) < 0)
		return -cste_nomem;
	return sym_calltree_rel_add(v->tree, ev);
}

static void rpart_free(struct rpart *p)
{
	if (p) {
		cst_report_free(p->rep);
		sym_afdo_counts_free(&p->afdo);
	}
	free(p);
}

/* A worker's view (sym_view_pool's make): the caller's filters over @reader. */
static struct sym_view_worker *rview_make(void *ctx, struct cst_symbolizer *reader)
{
	const struct cst_report_view *main = ctx;
	struct rview *v = calloc(1, sizeof(*v));

	if (!v)
		return NULL;
	v->keys = main->o.keys;
	if (cst_sym_filter_alloc(&v->filter, reader, main->o.filter) < 0) {
		free(v);
		return NULL;
	}
	if (main->calls && sym_calls_rel_alloc(&v->calls, rview_event, v) < 0) {
		cst_sym_filter_free(v->filter);
		free(v);
		return NULL;
	}
	if (main->afdo &&
	    (cst_afdo_alloc(&v->afdo, reader) < 0 ||
	     (cst_sym_filter_by_name(v->filter) &&
	      cst_afdo_set_filter(v->afdo, cst_sym_filter_keep_name, v->filter) < 0))) {
		cst_afdo_free(v->afdo);
		cst_sym_filter_free(v->filter);
		free(v);
		return NULL;
	}
	return &v->w;
}

static void rview_free(void *ctx, struct sym_view_worker *w)
{
	struct rview *v = (struct rview *)w;

	(void)ctx;
	rpart_free(v->part); /* none: every block handed its part over */
	cst_calltree_free(v->tree);
	cst_calls_free(v->calls);
	cst_afdo_free(v->afdo);
	cst_sym_filter_free(v->filter);
	free(v);
}

static void *view_open(void *worker, cst_view_write_fn write, void *write_ctx)
{
	struct rview *v = worker;

	(void)write;
	(void)write_ctx;
	v->first_range = false;
	v->has_id = v->knows = v->before_held = false;
	sym_filter_clear_ts(v->filter); /* the stretch before's are not this one's */
	if (v->afdo)
		sym_afdo_clear(v->afdo);
	if (v->calls)
		sym_calls_rel_clear(v->calls);
	memset(&v->w.held, 0, sizeof(v->w.held));
	v->lost_track = false;
	return v;
}

/* A range into the block's table, as cst_report_view_add counts it: what the
 * filters keep of it. */
static int count_range(void *ctx, const struct cst_sym_elem *se)
{
	struct rview *v = ctx;
	struct cst_sym_elem copy;
	const struct cst_sym_elem *kept;

	v->kept = cst_sym_filter_keep(v->filter, se);
	if (!v->kept)
		return 0;
	if (v->calls) {
		int err = sym_calls_rel_add(v->calls, se, cst_sym_filter_time(v->filter, se));

		if (err == SYM_CALLS_ESCAPE) { /* sym_calls_rel_follows said otherwise */
			v->lost_track = true;
			return 0;
		}
		if (err)
			return err;
	}
	v->part->ranges++;
	if (v->afdo) {
		int err = cst_afdo_add(v->afdo, se, cst_sym_filter_time(v->filter, se));

		if (err)
			return err;
	}
	kept = cst_sym_filter_pieces(v->filter, se, &copy);
	return kept ? cst_report_add(v->part->rep, kept) : 0;
}

/* An element the caller's call model takes (@se's filters' verdict in
 * v->kept): the stretch's model learns the thread of a range from it; after
 * anything else the model acts on, it knows no thread. */
static int calls_learn(struct rview *v, const struct cst_sym_elem *se)
{
	const struct cst_elem *e = se->elem;
	bool known;

	if (e->type != cst_elem_instr_range) {
		if (sym_calls_acts_on(e)) /* an exception, lost trace, a filter */
			sym_calls_rel_unsync(v->calls);
		return 0;
	}
	/* before the stretch has a timestamp, a window's verdict is the caller's */
	known = !sym_filter_window_unknown(v->filter, e->trace_id);
	return sym_calls_rel_escaped(v->calls, se, known && v->kept);
}

/* An element the caller's thread counts, into the profile's models as
 * cst_report_view_add gives it, counting nothing (and into the call model's
 * learning). */
static int move_models(void *ctx, const struct cst_sym_elem *se)
{
	struct rview *v = ctx;
	int err;

	v->kept = cst_sym_filter_keep(v->filter, se);
	if (v->calls && (err = calls_learn(v, se)) < 0)
		return err;
	return v->kept ? cst_afdo_add(v->afdo, se, cst_sym_filter_time(v->filter, se)) : 0;
}

/* A sample profile's element that the caller counts (@e is deferred): one that
 * the view learns from, or one whose block hands over the models as they were
 * before it. */
static int profile_defer(struct rview *v, const struct cst_elem *e)
{
	bool range = e->type == cst_elem_instr_range;
	bool first = range && !v->first_range;
	int ret;

	if (range)
		v->first_range = true;
	if (v->knows && !v->before_held) {
		sym_afdo_state(v->afdo, v->id, &v->before);
		v->before_held = true;
	}
	v->kept = false;
	sym_afdo_mute(v->afdo, true);
	ret = sym_view_learn(&v->w, e, move_models, v);
	sym_afdo_mute(v->afdo, false);
	if (ret < 0)
		return ret;
	/* the range before it may be joined with the stretch's first on the
	 * caller's thread (the branch into it is the caller's to count), and a taken
	 * branch ends the range running on */
	if (!v->knows && range && !first && v->kept && cst_elem_taken_branch(e))
		v->knows = true;
	return cst_view_defer;
}

static int learn_calls(void *ctx, const struct cst_sym_elem *se)
{
	struct rview *v = ctx;

	v->kept = cst_sym_filter_keep(v->filter, se);
	return calls_learn(v, se);
}

/* An element of the call views that the caller's thread handles: the
 * stretch's model learns from it (a range symbolized here too, its counts
 * thrown away). */
static int calls_defer(struct rview *v, const struct cst_elem *e)
{
	int ret;

	if (e->type == cst_elem_instr_range || e->type == cst_elem_i_range_nopath)
		v->first_range = true;
	ret = sym_view_learn(&v->w, e, learn_calls, v);
	return ret < 0 ? ret : cst_view_defer;
}

/* @e's trace ID; the stretch's too, when it has none yet (its first element,
 * or the first it learns from). */
static uint8_t take_id(struct rview *v, const struct cst_elem *e)
{
	uint8_t id = e->trace_id & 0x7f;

	if (!v->has_id) {
		v->id = id;
		v->has_id = true;
	}
	return id;
}

/* An element of the stretch's trace ID that went out before the stretch, as
 * the caller's view saw it (no range of the stretch joins one before it). The
 * call views learn from it as from a deferred one, the thread of its ranges
 * too; a time window learns its timestamp. A sample profile learns nothing:
 * its models defer as in a split run. */
static int view_learn(void *view, const struct cst_elem *e)
{
	struct rview *v = view;
	uint8_t id = take_id(v, e);

	if (id != v->id || v->part || v->afdo)
		return 0;
	if (e->type == cst_elem_timestamp)
		sym_filter_set_last_ts(v->filter, id, e->timestamp);
	if (v->calls) {
		int ret = calls_defer(v, e);

		return ret < 0 ? ret : 0;
	}
	return 0;
}

static int view_elem(void *view, const struct cst_elem *e)
{
	struct rview *v = view;
	uint8_t id = e->trace_id & 0x7f;
	bool range = e->type == cst_elem_instr_range || e->type == cst_elem_i_range_nopath;
	bool untimed;
	int ret;

	/* a time window keeps a range by its trace ID's last timestamp, which the
	 * stretch knows once it has seen one (the caller sees them all) */
	if (e->type == cst_elem_timestamp)
		sym_filter_set_last_ts(v->filter, id, e->timestamp);
	untimed = range && sym_filter_window_unknown(v->filter, id);
	if (v->afdo) {
		take_id(v, e);
		if (id != v->id) /* another ID's models are the caller's alone */
			return v->calls ? calls_defer(v, e) : cst_view_defer;
		if (!v->knows || !range || untimed ||
		    (v->calls && (!v->first_range || !sym_calls_rel_follows(v->calls, e))))
			return profile_defer(v, e);
		v->before_held = false;
	} else if (v->calls) {
		if (!range || untimed || !v->first_range || !sym_calls_rel_follows(v->calls, e))
			return calls_defer(v, e);
	} else if (!range || untimed) {
		return cst_view_defer;
	} else if (!v->first_range) {
		v->first_range = true;
		return cst_view_defer;
	}
	if (!v->part) {
		v->part = calloc(1, sizeof(*v->part));
		if (!v->part || cst_report_alloc(&v->part->rep, v->keys) < 0) {
			rpart_free(v->part);
			v->part = NULL;
			return -cste_nomem;
		}
	}
	ret = cst_symbolizer_feed(v->w.reader, e, count_range, v);
	if (ret < 0)
		return ret;
	if (v->lost_track) /* the stream goes to one thread from here */
		return cst_view_give_up;
	/* one the filters drop reaches no model of the caller's, the loss model
	 * neither */
	if (v->kept)
		v->part->ran[id / 64] |= 1ull << (id % 64);
	return cst_view_printed;
}

static size_t view_state(void *view, void *buf, size_t size)
{
	struct rview *v = view;
	struct rview_state *st = buf;

	if (size < sizeof(*st))
		return 0;
	memset(st, 0, sizeof(*st));
	sym_view_block_counts(&v->w, &st->counts);
	st->part = v->part;
	v->part = NULL;
	if (v->calls) {
		if (sym_calls_rel_take(v->calls, &st->calls) < 0) {
			/* nothing to hand over: the caller refuses the block */
			sym_calls_part_free(st->calls);
			st->calls = NULL;
			st->broken = true;
		}
		st->tree = v->tree;
		v->tree = NULL;
	}
	if (v->afdo && v->knows) {
		st->profile = true;
		st->id = v->id;
		if (v->before_held)
			st->afdo = v->before;
		else
			sym_afdo_state(v->afdo, v->id, &st->afdo);
		if (st->part)
			sym_afdo_take(v->afdo, &st->part->afdo);
	}
	return sizeof(*st);
}

static void view_close(void *view)
{
	(void)view; /* it stays with its worker */
}

/* The time of trace ID @id's elements here, as the caller's view gives it. */
static uint64_t time_of(void *ctx, uint8_t id)
{
	const struct cst_report_view *main = ctx;

	return sym_filter_time_of(main->filter, id);
}

static void state_free(const struct rview_state *st)
{
	rpart_free(st->part);
	sym_calls_part_free(st->calls);
	cst_calltree_free(st->tree);
}

/* The block's table into the caller's, and its call model's moves and tree once
 * the caller's model has checked them; its lost-trace model learns that code ran
 * on these trace IDs. */
static int view_adopt(void *ctx, const void *state, size_t len)
{
	struct cst_report_view *main = ((struct sym_view_pool *)ctx)->ctx;
	const struct rview_state *st = state;
	struct sym_calls_place *places = NULL;
	uint32_t n = sym_calls_part_count(st->calls);
	struct rpart *p;
	int err = 0;

	if (len != sizeof(*st))
		return -cste_invalid;
	if (st->broken)
		return cst_view_give_up;
	/* the call model first: a block it refuses is not taken at all (the
	 * state is dropped) */
	if (n) {
		places = malloc(n * sizeof(*places));
		if (!places)
			return -cste_nomem;
		if (sym_calls_check(main->calls, st->calls, places)) {
			free(places);
			return cst_view_give_up;
		}
	}
	p = st->part;
	cst_symbolizer_add_counts(main->sym, &st->counts);
	if (p) {
		err = sym_report_merge(main->rep, p->rep);
		if (!err && main->afdo)
			err = sym_afdo_add(main->afdo, &p->afdo);
		main->ranges += p->ranges;
		for (unsigned id = 0; id < 128; id++)
			if (p->ran[id / 64] >> (id % 64) & 1)
				sym_loss_ran(main->loss, (uint8_t)id);
	}
	if (st->profile && main->afdo)
		sym_afdo_adopt(main->afdo, st->id, &st->afdo);
	if (!err && n)
		err = sym_calls_apply(main->calls, st->calls, places, time_of, main);
	if (!err && st->tree)
		err = sym_calltree_adopt(main->tree, st->tree, places, n);
	free(places);
	state_free(st);
	return err;
}

static void view_drop(void *ctx, const void *state, size_t len)
{
	(void)ctx;
	if (len == sizeof(struct rview_state))
		state_free(state);
}

/* A table, a sample profile, a call tree (the stretches learn where each
 * thread is from a range the caller follows), or all three. Not a timeline (its
 * events carry times and counts a stretch does not know). The filters keep or
 * drop each range by itself; a time window reads the last timestamp, which a
 * stretch waits for. */
static bool viewable(const struct cst_report_view *v)
{
	return !v->timeline;
}

int cst_report_view_run(struct cst_report_view *v, struct cst_session *session,
			cst_sym_elem_fn fn, void *ctx, cst_lines_fn write, void *write_ctx)
{
	static const struct cst_view_ops ops = {
		.sz = sizeof(ops), .worker_open = sym_view_pool_open,
		.worker_close = sym_view_pool_close, .open = view_open, .elem = view_elem,
		.state = view_state, .close = view_close, .adopt = view_adopt, .drop = view_drop,
		.state_size = sizeof(struct rview_state), .learn = view_learn,
	};
	static const struct sym_view_kind kind = {&ops, rview_make, rview_free};

	if (!v || !session || !fn || !write)
		return -cste_invalid;
	if (!viewable(v))
		return cst_symbolizer_run(v->sym, session, fn, ctx);
	return sym_view_pool_run(v->sym, session, &kind, v, fn, ctx, write, write_ctx);
}
