/* The function table as text (report's default format), sized to the terminal;
 * with -g, the call graph instead. */
#include "report_view.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

static int term_width(FILE *f)
{
	struct winsize ws;
	const char *cols = getenv("COLUMNS");

	if (isatty(fileno(f)) && ioctl(fileno(f), TIOCGWINSZ, &ws) == 0 && ws.ws_col >= 40)
		return ws.ws_col;
	if (cols && atoi(cols) >= 40)
		return atoi(cols);
	return 160;
}

static void coverage(const struct cst_report_row *row, char *buf, size_t size)
{
	if (row->lines_total)
		snprintf(buf, size, "%u/%u", row->lines_hit, row->lines_total);
	else
		snprintf(buf, size, "-");
}

static const char *base_name(const char *p)
{
	const char *s = p ? strrchr(p, '/') : NULL;

	return s ? s + 1 : p;
}

int sym_report_write_text(struct cst_report_view *v, FILE *f)
{
	unsigned keys = v->o.keys;
	const uint64_t *children = v->children;
	uint64_t total = v->total;
	int width = term_width(f);
	/* fixed numeric columns, the rest shared by name columns */
	int fixed = 12 + 8 + 10 + 10 + 10 + 10 + 6 + (children ? 9 : 0);
	int name_w = width - fixed;
	int dso_w = (keys & cst_report_key_dso) ? name_w / 3 : 0;
	int src_w = (keys & cst_report_key_srcline) ? name_w / 3 : 0;
	int sym_w = name_w - dso_w - src_w - 2;

	if (v->o.call_graph)
		return sym_report_write_callgraph(v, f);
	if (sym_w < 12)
		sym_w = 12;
	sym_report_loss_header(v, f);
	fprintf(f, "# %" PRIu64 " instructions executed\n", total);
	if (children)
		fprintf(f, "%8s ", "children");
	fprintf(f, "%12s %7s %9s %9s %9s %9s  %-*s", "insns", "share", "entered", "taken",
		"not-taken", "lines", sym_w, (keys & cst_report_key_sym) ? "symbol" : "");
	if (dso_w)
		fprintf(f, " %-*s", dso_w - 1, "dso");
	if (src_w)
		fprintf(f, " %s", "srcline");
	fputc('\n', f);
	for (int i = 0; i < v->nrows && (v->o.limit <= 0 || i < v->o.limit); i++) {
		const struct cst_report_row *r = &v->rows[i];
		char cov[32];

		coverage(r, cov, sizeof(cov)); /* per function only: '-' for source lines */
		if (children)
			fprintf(f, "%7.2f%% ",
				total ? 100.0 * (double)children[i] / (double)total : 0.0);
		fprintf(f, "%12" PRIu64 " %6.2f%% %9" PRIu64 " %9" PRIu64 " %9" PRIu64 " %9s  %-*.*s",
			r->insns, total ? 100.0 * (double)r->insns / (double)total : 0.0,
			r->entries, r->taken, r->not_taken, cov, sym_w, sym_w,
			r->sym ? r->sym : "");
		if (dso_w)
			fprintf(f, " %-*.*s", dso_w - 1, dso_w - 1, r->dso ? base_name(r->dso) : "");
		if (src_w)
			fprintf(f, " %s:%d", r->file ? base_name(r->file) : "??", r->line);
		fputc('\n', f);
	}
	return 0;
}
