/* The function table and call-graph printers of `cstrace report` (report_print.c). */
#ifndef CSTRACE_CLI_REPORT_PRINT_H
#define CSTRACE_CLI_REPORT_PRINT_H

#include <stdint.h>
#include <stdio.h>

#include "cstrace/symbolize.h"

/* @children: each row's children column, or NULL for none. */
void report_print_text(FILE *f, unsigned keys, const struct cst_report_row *rows, int n,
		       uint64_t total, int limit, const uint64_t *children);
void report_print_csv(FILE *f, const struct cst_report_row *rows, int n, uint64_t total,
		      const uint64_t *children);
int report_print_json(FILE *f, const struct cst_report_row *rows, int n, uint64_t total,
		      uint64_t ranges, const uint64_t *children);
int report_print_callgraph_json(FILE *f, struct cst_calltree *tree);
/* @rows ordered by their functions' children (ties keep their order), with the
 * children of each; both arrays are the caller's to free. */
int report_children_sorted(struct cst_calltree *tree, const struct cst_report_row *rows, int n,
			   struct cst_report_row **sorted, uint64_t **children);
void report_print_stats(struct cst_symbolizer *sym, struct cst_calls *calls);

#endif
