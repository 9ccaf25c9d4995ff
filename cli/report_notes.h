/* What `cstrace report` says besides its view: totals on standard error, the loss
 * a format has no place for, what a timeline left out, and what a page says of
 * the capture. */
#ifndef CSTRACE_CLI_REPORT_NOTES_H
#define CSTRACE_CLI_REPORT_NOTES_H

#include "cstrace/symbolize.h"

/* What a page says of the capture: perf.data's recorded command, host and
 * kernel, the input's time and size, this cstrace; the strings live here. */
struct report_meta {
	struct cst_report_meta m;
	char command[2048], host[256], kernel[256], date[64], version[64];
};

/* Fill @b for @trace (a perf.data gives the most; anything else its name, time
 * and size). */
void report_meta_read(const char *trace, struct report_meta *b);
/* --stats: the symbolizer's, the call model's and the loss model's totals. */
void report_print_stats(struct cst_symbolizer *sym, const struct cst_report_view *view);
/* A format with nowhere to say that trace was lost (folded stacks, profiles,
 * lcov, CSV, JSON): standard error says it. */
void report_tell_loss(const struct cst_report_format *format, const struct cst_report_view *view);
/* What a timeline left out, on standard error (the file says it too). */
void report_timeline_note(const struct cst_report_view *view, const char *output);

#endif
