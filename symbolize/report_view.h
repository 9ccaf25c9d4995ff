/* Internal to symbolize/: the report view as its format writers see it (the
 * models one run built, and the table's rows once the stream has ended). */
#ifndef CSTRACE_SYMBOLIZE_REPORT_VIEW_H
#define CSTRACE_SYMBOLIZE_REPORT_VIEW_H

#include <stdio.h>

#include "cstrace/symbolize.h"

struct cst_report_view {
	const struct cst_report_format *fmt;
	struct cst_report_view_opts o;
	struct cst_symbolizer *sym;
	struct cst_sym_filter *filter;
	struct cst_report *rep;
	struct cst_calls *calls;      /* the call views and timelines only */
	struct cst_calltree *tree;    /* the call views */
	struct cst_perfetto *timeline;
	struct cst_afdo *afdo;        /* sample profiles and coverage */
	struct cst_loss *loss;        /* where the stream lost trace: every format */
	int (*calls_sink)(void *ctx, const struct cst_call_event *ev); /* tree or timeline */
	void *calls_ctx;
	uint64_t ranges;              /* instruction ranges kept */
	/* after cst_report_view_write began: the table, in its order */
	const struct cst_report_row *rows;
	int nrows;
	uint64_t total;
	const uint64_t *children;     /* each row's children column, NULL without */
	bool written;
};

/* The writers of report_formats.c's table, each beside what it writes: the
 * table (report_text.c, report_json.c, report_csv.c), the call tree
 * (calltree_text.c, flamegraph.c), the timeline (perfetto.c), the sample profile
 * (autofdo.c, llvm_sample.c), coverage (coverage.c) and the page (html.c). */
typedef int sym_report_writer(struct cst_report_view *v, FILE *f);
sym_report_writer sym_report_write_text, sym_report_write_json, sym_report_write_csv;
sym_report_writer sym_report_write_folded, sym_report_write_flamegraph, sym_report_write_perfetto;
sym_report_writer sym_report_write_autofdo, sym_report_write_profgen, sym_report_write_llvm_sample;
sym_report_writer sym_report_write_lcov, sym_report_write_coverage, sym_report_write_html;
/* The call graph as text, as -g prints it in place of the table. */
sym_report_writer sym_report_write_callgraph;
/* calltree_callee.c: the call graph callee first (cst_calltree_write_text). */
int sym_calltree_write_callee(struct cst_calltree *tree, FILE *f,
			      const struct cst_calltree_text_opts *o);

/* What the view's stream lost, in one line (cst_loss_format_totals) into @buf of
 * @size bytes: false when nothing was (the output then is as without loss). */
bool sym_report_loss(const struct cst_report_view *v, char *buf, size_t size);
/* A text format's header line: "# <what was lost>: counts below are lower
 * bounds", only when something was. */
void sym_report_loss_header(const struct cst_report_view *v, FILE *f);

#endif
