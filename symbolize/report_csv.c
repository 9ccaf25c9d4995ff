/* The function table as CSV, one row per function (or dso / source line); with
 * -g, the call graph as text, as report has always printed it. */
#include "report_view.h"

#include <inttypes.h>

static void csv_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; s && *s; s++) {
		if (*s == '"')
			fputc('"', f);
		fputc(*s, f);
	}
	fputc('"', f);
}

int sym_report_write_csv(struct cst_report_view *v, FILE *f)
{
	const uint64_t *children = v->children;
	uint64_t total = v->total;

	if (v->o.call_graph)
		return sym_report_write_callgraph(v, f);
	fputs("insns,share,entries,taken,not_taken,lines_hit,lines_total,sym,dso,file,line", f);
	fputs(children ? ",children\n" : "\n", f);
	for (int i = 0; i < v->nrows; i++) {
		const struct cst_report_row *r = &v->rows[i];

		/* share as JSON gives it: a fraction of all instructions */
		fprintf(f, "%" PRIu64 ",%.6f,%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%u,%u,", r->insns,
			total ? (double)r->insns / (double)total : 0.0, r->entries, r->taken,
			r->not_taken, r->lines_hit, r->lines_total);
		csv_str(f, r->sym);
		fputc(',', f);
		csv_str(f, r->dso);
		fputc(',', f);
		csv_str(f, r->file);
		fprintf(f, ",%d", r->line);
		if (children)
			fprintf(f, ",%" PRIu64, children[i]);
		fputc('\n', f);
	}
	return 0;
}
