/* The function table as text (report's default format), sized to the terminal;
 * with -g, the call graph instead. */
#include "report_view.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

/* The terminal's width when @f is one (names are cut to fit it), else 0: text
 * for a pipe or a file is as wide as what it holds. */
static int term_width(FILE *f)
{
	struct winsize ws;
	const char *cols = getenv("COLUMNS");

	if (!isatty(fileno(f)))
		return 0;
	if (ioctl(fileno(f), TIOCGWINSZ, &ws) == 0 && ws.ws_col >= 40)
		return ws.ws_col;
	if (cols && atoi(cols) >= 40)
		return atoi(cols);
	return 80;
}

static void coverage(const struct cst_report_row *row, char *buf, size_t size)
{
	if (row->lines_total)
		snprintf(buf, size, "%u/%u", row->lines_hit, row->lines_total);
	else
		snprintf(buf, size, "-");
}

/* Columns a name takes (UTF-8: continuation bytes take none). */
static int columns(const char *s)
{
	int n = 0;

	for (; s && *s; s++)
		n += ((unsigned char)*s & 0xc0) != 0x80;
	return n;
}

/* @s in @w columns: padded when @pad, cut with a '…' when longer. */
static void put_name(FILE *f, const char *s, int w, bool pad)
{
	int n = columns(s);

	if (!s)
		s = "";
	if (n <= w) {
		fprintf(f, pad ? "%s%*s" : "%s", s, pad ? w - n : 0, "");
		return;
	}
	/* w - 1 columns of it, then the mark */
	const char *p = s;

	for (int c = 0; *p && c < w - 1; c++)
		do
			p++;
		while (((unsigned char)*p & 0xc0) == 0x80);
	fprintf(f, "%.*s\u2026", (int)(p - s), s);
}

static int digits(uint64_t v)
{
	int n = 1;

	while (v >= 10) {
		v /= 10;
		n++;
	}
	return n;
}

/* Every column as wide as what it shows (its heading included). */
struct widths {
	int insns, entered, taken, not_taken, lines, sym, dso, src;
};

static void measure(const struct cst_report_view *v, int rows, struct widths *w)
{
	unsigned keys = v->o.keys;

	*w = (struct widths){5, 7, 5, 9, 5, keys & cst_report_key_sym ? 6 : 0,
			     keys & cst_report_key_dso ? 3 : 0, keys & cst_report_key_srcline ? 7 : 0};
	for (int i = 0; i < rows; i++) {
		const struct cst_report_row *r = &v->rows[i];
		char cov[32];
		int n;

		coverage(r, cov, sizeof(cov));
#define WIDEN(f, x) do { n = (x); if (n > w->f) w->f = n; } while (0)
		WIDEN(insns, digits(r->insns));
		WIDEN(entered, digits(r->entries));
		WIDEN(taken, digits(r->taken));
		WIDEN(not_taken, digits(r->not_taken));
		WIDEN(lines, (int)strlen(cov));
		if (w->sym)
			WIDEN(sym, columns(r->sym));
		if (w->dso)
			WIDEN(dso, columns(cst_path_base(r->dso)));
		if (w->src)
			WIDEN(src, columns(r->file ? cst_path_base(r->file) : "??") + 1 + digits((uint64_t)(r->line > 0 ? r->line : 0)));
#undef WIDEN
	}
}

int sym_report_write_text(struct cst_report_view *v, FILE *f)
{
	const uint64_t *children = v->children;
	uint64_t total = v->total;
	int width = term_width(f);
	int rows = v->o.limit > 0 && v->o.limit < v->nrows ? v->o.limit : v->nrows;
	struct widths w;
	int fixed;

	if (v->o.call_graph)
		return sym_report_write_callgraph(v, f);
	measure(v, rows, &w);
	fixed = (children ? 9 : 0) + w.insns + 8 + w.entered + 1 + w.taken + 1 + w.not_taken + 1 +
		w.lines;
	/* a terminal too narrow for the names: the longer name column gives way,
	 * down to 12, its names cut with a mark */
	while (width && fixed + (w.sym ? w.sym + 2 : 0) + (w.dso ? w.dso + 2 : 0) +
				(w.src ? w.src + 2 : 0) > width) {
		int *n = w.sym >= w.dso ? &w.sym : &w.dso;

		if (*n <= 12)
			break;
		(*n)--;
	}
	sym_report_loss_header(v, f);
	fprintf(f, "# %" PRIu64 " instructions executed\n", total);
	if (children)
		fprintf(f, "%8s ", "children");
	fprintf(f, "%*s %7s %*s %*s %*s %*s", w.insns, "insns", "share", w.entered, "entered",
		w.taken, "taken", w.not_taken, "not-taken", w.lines, "lines");
	if (w.sym) {
		fputs("  ", f);
		put_name(f, "symbol", w.sym, w.dso || w.src);
	}
	if (w.dso) {
		fputs("  ", f);
		put_name(f, "dso", w.dso, w.src);
	}
	if (w.src)
		fputs("  srcline", f);
	fputc('\n', f);
	for (int i = 0; i < rows; i++) {
		const struct cst_report_row *r = &v->rows[i];
		char cov[32];

		coverage(r, cov, sizeof(cov)); /* per function only: '-' for source lines */
		if (children)
			fprintf(f, "%7.2f%% ",
				total ? 100.0 * (double)children[i] / (double)total : 0.0);
		fprintf(f, "%*" PRIu64 " %6.2f%% %*" PRIu64 " %*" PRIu64 " %*" PRIu64 " %*s", w.insns,
			r->insns, total ? 100.0 * (double)r->insns / (double)total : 0.0, w.entered,
			r->entries, w.taken, r->taken, w.not_taken, r->not_taken, w.lines, cov);
		if (w.sym) {
			fputs("  ", f);
			put_name(f, r->sym, w.sym, w.dso || w.src);
		}
		if (w.dso) {
			fputs("  ", f);
			put_name(f, cst_path_base(r->dso), w.dso, w.src);
		}
		if (w.src)
			fprintf(f, "  %s:%d", r->file ? cst_path_base(r->file) : "??", r->line);
		fputc('\n', f);
	}
	return 0;
}
