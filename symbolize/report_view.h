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

/* The writers of report_formats.c's table. */
int sym_report_write_text(struct cst_report_view *v, FILE *f);
int sym_report_write_json(struct cst_report_view *v, FILE *f);
int sym_report_write_csv(struct cst_report_view *v, FILE *f);
int sym_report_write_folded(struct cst_report_view *v, FILE *f);
int sym_report_write_flamegraph(struct cst_report_view *v, FILE *f);
int sym_report_write_perfetto(struct cst_report_view *v, FILE *f);
int sym_report_write_autofdo(struct cst_report_view *v, FILE *f);
int sym_report_write_profgen(struct cst_report_view *v, FILE *f);
int sym_report_write_llvm_sample(struct cst_report_view *v, FILE *f);
int sym_report_write_lcov(struct cst_report_view *v, FILE *f);
int sym_report_write_coverage(struct cst_report_view *v, FILE *f);
int sym_report_write_html(struct cst_report_view *v, FILE *f);
/* The call graph as text, as -g prints it with the table formats. */
int sym_report_write_callgraph(struct cst_report_view *v, FILE *f);

#endif
