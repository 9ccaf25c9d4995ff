/* The report view: one run of `cstrace report`. It applies the filters, builds the
 * models its format needs (function table, call tree or timeline, sample profile)
 * from the symbolized stream, and has the format's writer write them. */
#include "report_view.h"

#include <stdio.h>
#include <stdlib.h>

/* The call views count only the instructions the name filters keep, each on its
 * whole stack: the model itself sees every range, so stacks stay right. */
static int calls_filtered(void *ctx, const struct cst_call_event *ev)
{
	const struct cst_report_view *v = ctx;

	if (ev->kind == cst_call_insns && !cst_sym_filter_keep_piece(v->filter, ev->piece))
		return 0;
	return v->calls_sink(v->calls_ctx, ev);
}

/* The models @v's format is written from. A timeline takes the call events
 * instead of a call tree, and a profile alone needs none (whatever -g and
 * --children ask); the table is always built. */
static int models(struct cst_report_view *v, bool perf_clock)
{
	unsigned needs = v->fmt->needs;
	int err = cst_report_alloc(&v->rep, v->o.keys);

	if (!err && (needs & cst_report_needs_timeline)) {
		err = cst_perfetto_alloc(
			&v->timeline, v->o.stream,
			&(struct cst_perfetto_opts){.sz = sizeof(struct cst_perfetto_opts),
						    .sym = v->sym, .perf_clock = perf_clock,
						    .min_insns = v->o.min_insns,
						    .max_bytes = v->o.max_bytes,
						    .max_depth = v->o.max_depth});
		v->calls_sink = cst_perfetto_add;
		v->calls_ctx = v->timeline;
		if (!err)
			err = cst_calls_alloc(&v->calls, calls_filtered, v);
	} else if (!err && (needs & cst_report_needs_profile) && !(needs & cst_report_needs_calls)) {
		err = cst_afdo_alloc(&v->afdo, v->sym);
	} else if (!err && ((needs & cst_report_needs_calls) || v->o.call_graph || v->o.children)) {
		err = cst_calltree_alloc(&v->tree);
		v->calls_sink = cst_calltree_add;
		v->calls_ctx = v->tree;
		if (!err)
			err = cst_calls_alloc(&v->calls, calls_filtered, v);
		if (!err && (needs & cst_report_needs_profile))
			err = cst_afdo_alloc(&v->afdo, v->sym);
	}
	/* the name filters narrow profiles and coverage as they narrow the table */
	if (!err && v->afdo && cst_sym_filter_by_name(v->filter))
		err = cst_afdo_set_filter(v->afdo, cst_sym_filter_keep_name, v->filter);
	return err;
}

/* What the view is asked for, checked (@v's other fields are zero). */
static int setup(struct cst_report_view *v, const struct cst_report_format *fmt,
		 struct cst_symbolizer *sym, const struct cst_report_view_opts *opts)
{
	const struct cst_report_view_opts *o = &v->o;
	int err;

	v->fmt = fmt;
	v->sym = sym;
	if (cst_opts_load(&v->o, sizeof(v->o), opts, "cst_report_view_opts", NULL) < 0)
		return -cste_invalid;
	if (!o->keys)
		v->o.keys = cst_report_key_dso | cst_report_key_sym;
	if ((o->children && !(o->keys & cst_report_key_sym)) ||
	    ((fmt->needs & cst_report_needs_timeline) && !o->stream) ||
	    ((fmt->needs & cst_report_needs_dso) && !o->dso))
		return -cste_invalid;
	err = cst_sym_filter_alloc(&v->filter, sym, o->filter);
	if (!err)
		err = cst_loss_alloc(&v->loss);
	return err < 0 ? err : models(v, o->filter && o->filter->time_conv);
}

int cst_report_view_alloc(struct cst_report_view **out, const struct cst_report_format *fmt,
			  struct cst_symbolizer *sym, const struct cst_report_view_opts *opts)
{
	struct cst_report_view *v = NULL;
	int err = !out || !fmt || !fmt->write || !sym ? -cste_invalid : 0;

	if (!err)
		v = calloc(1, sizeof(*v));
	if (!err)
		err = v ? setup(v, fmt, sym, opts) : -cste_nomem;
	if (err < 0)
		cst_report_view_free(v);
	if (out)
		*out = err < 0 ? NULL : v;
	return err;
}

void cst_report_view_free(struct cst_report_view *v)
{
	if (v && v->children) {
		free((void *)v->rows); /* the rows in the children's order are a copy */
		free((void *)v->children);
	}
	if (v) {
		cst_calls_free(v->calls);
		cst_calltree_free(v->tree);
		cst_perfetto_free(v->timeline);
		cst_afdo_free(v->afdo);
		cst_report_free(v->rep);
		cst_loss_free(v->loss);
		cst_sym_filter_free(v->filter);
	}
	free(v);
}

int cst_report_view_add(void *ctx, const struct cst_sym_elem *se)
{
	struct cst_report_view *v = ctx;
	struct cst_sym_elem copy;
	const struct cst_sym_elem *kept;
	const struct cst_loss_gap *gap;
	uint64_t time;
	int err;

	if (!cst_sym_filter_keep(v->filter, se))
		return 0;
	if (se->elem->type == cst_elem_instr_range)
		v->ranges++;
	time = cst_sym_filter_time(v->filter, se);
	err = cst_loss_add(v->loss, se, time, &gap);
	/* the timeline marks the place before the call events it cuts */
	if (!err && gap && v->timeline)
		err = cst_perfetto_add_lost(v->timeline, gap);
	if (err)
		return err;
	if (v->calls) {
		err = cst_calls_add(v->calls, se, time);
		if (err)
			return err;
	}
	if (v->afdo) {
		err = cst_afdo_add(v->afdo, se, time);
		if (err)
			return err;
	}
	kept = cst_sym_filter_pieces(v->filter, se, &copy);
	return kept ? cst_report_add(v->rep, kept) : 0;
}

/* What was lost after the last element (the end of a file cut short). */
static int end_loss(struct cst_report_view *v)
{
	const struct cst_loss_gap *gap = NULL;
	struct cst_sym_lost lost;
	int32_t cpu;
	int err = 0;

	if (cst_symbolizer_take_lost(v->sym, &lost, &cpu))
		err = cst_loss_add_end(v->loss, &lost, cpu, &gap);
	if (!err && gap && v->timeline)
		err = cst_perfetto_add_lost(v->timeline, gap);
	return err;
}

const struct cst_perfetto *cst_report_view_timeline(const struct cst_report_view *v)
{
	return v ? v->timeline : NULL;
}

uint64_t cst_report_view_kept(const struct cst_report_view *v)
{
	return v ? cst_report_total(v->rep) : 0;
}

int cst_report_view_finish(struct cst_report_view *v)
{
	int err = 0;

	if (!v)
		return -cste_invalid;
	if (v->calls)
		err = cst_calls_finish(v->calls);
	if (err >= 0 && v->afdo)
		err = cst_afdo_finish(v->afdo);
	if (err >= 0)
		err = end_loss(v);
	return err;
}

/* Rows in order of their functions' children (ties: self order), with the
 * children of each. */
struct child_row {
	struct cst_report_row row;
	uint64_t children;
	int order;
};

static int by_children(const void *a, const void *b)
{
	const struct child_row *x = a, *y = b;

	if (x->children != y->children)
		return x->children < y->children ? 1 : -1;
	return x->order - y->order;
}

static int children_sorted(struct cst_report_view *v)
{
	int n = v->nrows;
	struct child_row *c = calloc((size_t)n, sizeof(*c));
	struct cst_report_row *sorted = calloc((size_t)n, sizeof(*sorted));
	uint64_t *children = calloc((size_t)n, sizeof(*children));

	if (!c || !sorted || !children) {
		free(c);
		free(sorted);
		free(children);
		return -cste_nomem;
	}
	for (int i = 0; i < n; i++) {
		c[i].row = v->rows[i];
		c[i].children = cst_calltree_children(v->tree, v->rows[i].func, v->rows[i].dso);
		c[i].order = i;
	}
	qsort(c, (size_t)n, sizeof(*c), by_children);
	for (int i = 0; i < n; i++) {
		sorted[i] = c[i].row;
		children[i] = c[i].children;
	}
	free(c);
	v->rows = sorted;
	v->children = children;
	return 0;
}

int cst_report_view_write(struct cst_report_view *v, FILE *f)
{
	int n, err;

	if (!v || !f || v->written)
		return -cste_invalid;
	v->written = true; /* rows and children are made once */
	n = cst_report_rows(v->rep, &v->rows);
	if (n < 0)
		return n;
	v->nrows = n;
	v->total = cst_report_total(v->rep);
	if (v->o.children && n) {
		err = children_sorted(v);
		if (err < 0)
			return err;
	}
	return v->fmt->write(v, f);
}

const struct cst_calls *cst_report_view_calls(const struct cst_report_view *v)
{
	return v ? v->calls : NULL;
}

int cst_report_view_loss(const struct cst_report_view *v, struct cst_loss_totals *t)
{
	return v ? cst_loss_get_totals(v->loss, t) : -cste_invalid;
}

bool sym_report_loss(const struct cst_report_view *v, char *buf, size_t size)
{
	struct cst_loss_totals t;

	if (size)
		*buf = '\0';
	return cst_loss_get_totals(v->loss, &t) == 0 && cst_loss_format_totals(&t, buf, size) > 0;
}

void sym_report_loss_header(const struct cst_report_view *v, FILE *f)
{
	char what[512];

	if (sym_report_loss(v, what, sizeof(what)))
		fprintf(f, "# %s: counts below are lower bounds\n", what);
}
