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
 * counting nothing). */
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
	bool window;        /* they keep a time window */
	struct rpart *part; /* since the last block, or NULL */
	bool first_range;   /* the stretch's first range went to the caller */
	bool kept;          /* the filters kept the range last counted */
	/* a sample profile's: its models (its counts go to each block's part) */
	struct cst_afdo *afdo;
	uint8_t id;         /* the trace ID of the stretch */
	bool has_id;
	bool knows;         /* the models of @id are the stream's */
	bool before_held;   /* @before holds them as they were before a deferred element */
	struct sym_afdo_state before;
	struct cst_sym_counts learning; /* counts of what it learnt from, thrown away */
};

/* What a block hands over. */
struct rview_state {
	struct rpart *part;
	struct cst_sym_counts counts;
	bool profile;       /* @afdo holds the models of trace ID @id */
	uint8_t id;
	struct sym_afdo_state afdo;
};

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
	v->window = main->o.filter && main->o.filter->window;
	if (cst_sym_filter_alloc(&v->filter, reader, main->o.filter) < 0) {
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
	v->part->ranges++;
	if (v->afdo) {
		int err = cst_afdo_add(v->afdo, se, cst_sym_filter_time(v->filter, se));

		if (err)
			return err;
	}
	kept = cst_sym_filter_pieces(v->filter, se, &copy);
	return kept ? cst_report_add(v->part->rep, kept) : 0;
}

/* An element the caller's thread counts, into the profile's models as
 * cst_report_view_add gives it, counting nothing. */
static int move_models(void *ctx, const struct cst_sym_elem *se)
{
	struct rview *v = ctx;

	v->kept = cst_sym_filter_keep(v->filter, se);
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
	ret = cst_symbolizer_feed(v->w.reader, e, move_models, v);
	sym_afdo_mute(v->afdo, false);
	/* the caller's thread symbolizes it again, and counts it */
	cst_symbolizer_take_counts(v->w.reader, &v->learning);
	if (ret < 0)
		return ret;
	/* the range before it may be joined with the stretch's first on the
	 * caller's thread (the branch into it is the caller's to count), and a taken
	 * branch ends the range running on */
	if (!v->knows && range && !first && v->kept && cst_elem_taken_branch(e))
		v->knows = true;
	return cst_view_defer;
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
	untimed = v->window && range && !sym_filter_last_ts(v->filter, id);
	if (v->afdo) {
		if (!v->has_id) {
			v->id = id;
			v->has_id = true;
		}
		if (id != v->id) /* another ID's models are the caller's alone */
			return cst_view_defer;
		if (!v->knows || !range || untimed)
			return profile_defer(v, e);
		v->before_held = false;
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
	cst_symbolizer_take_counts(v->w.reader, &st->counts);
	st->part = v->part;
	v->part = NULL;
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

/* The block's table into the caller's; its lost-trace model learns that code
 * ran on these trace IDs. */
static int view_adopt(void *ctx, const void *state, size_t len)
{
	struct cst_report_view *main = ((struct sym_view_pool *)ctx)->ctx;
	const struct rview_state *st = state;
	struct rpart *p;
	int err = 0;

	if (len != sizeof(*st))
		return -cste_invalid;
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
	rpart_free(p);
	return err;
}

static void view_drop(void *ctx, const void *state, size_t len)
{
	(void)ctx;
	if (len == sizeof(struct rview_state))
		rpart_free(((const struct rview_state *)state)->part);
}

/* A table, or a sample profile: no call model (a call stack cannot be learnt
 * from a stretch). The filters keep or drop each range by itself; a time window
 * reads the last timestamp, which a stretch waits for. */
static bool viewable(const struct cst_report_view *v)
{
	return !v->calls && !v->timeline;
}

int cst_report_view_run(struct cst_report_view *v, struct cst_session *session,
			cst_sym_elem_fn fn, void *ctx, cst_lines_fn write, void *write_ctx)
{
	static const struct cst_view_ops ops = {
		.sz = sizeof(ops), .worker_open = sym_view_pool_open,
		.worker_close = sym_view_pool_close, .open = view_open, .elem = view_elem,
		.state = view_state, .close = view_close, .adopt = view_adopt, .drop = view_drop,
		.state_size = sizeof(struct rview_state),
	};
	static const struct sym_view_kind kind = {&ops, rview_make, rview_free};

	if (!v || !session || !fn || !write)
		return -cste_invalid;
	if (!viewable(v))
		return cst_symbolizer_run(v->sym, session, fn, ctx);
	return sym_view_pool_run(v->sym, session, &kind, v, fn, ctx, write, write_ctx);
}
