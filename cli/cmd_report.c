/* `cstrace report`: executed instructions per function (or dso / source line) as a
 * table, JSON or CSV. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <jansson.h>

#include "cli.h"
#include "cstrace/symbolize.h"
#include "sym_opts.h"
#include "verb.h"
#include "trace_opts.h"

/* ---- report ---- */

enum rep_format { rep_text, rep_json, rep_csv };

struct report_run {
	struct symcli *cli;
	struct cst_report *rep;
	uint64_t ranges;
};

static const char report_usage[] =
	"usage: cstrace report [options] TRACE\n"
	"\n"
	"Executed instructions per function: self count, share of all, times the function\n"
	"was entered, taken / not-taken branches ending in it, and the share of its source\n"
	"lines that ran. Code without symbols shows as [unknown] in its binary.\n"
	"\n"
	"options:\n"
	"  --sort KEYS          group by dso, sym, srcline (comma-separated; default dso,sym)\n"
	"  --format=F           text (default; sized to the terminal), json, csv\n"
	"  -o, --output FILE    write to FILE instead of standard output\n"
	"  --limit N            text: at most N rows (default all)\n"
	"  --stats              print symbolizer totals on standard error\n" SYMCLI_HELP
		TRACE_OPTS_HELP "  -h, --help           this text\n";

static int report_elem(void *ctx, const struct cst_sym_elem *se)
{
	struct report_run *r = ctx;

	if (!symcli_keep(r->cli, se))
		return 0;
	if (se->elem->type == cst_elem_instr_range)
		r->ranges++;
	return cst_report_add(r->rep, se);
}

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

static void print_text(FILE *f, unsigned keys, const struct cst_report_row *rows, int n,
		       uint64_t total, int limit)
{
	int width = term_width(f);
	/* fixed numeric columns, the rest shared by name columns */
	int fixed = 12 + 8 + 10 + 10 + 10 + 10 + 6;
	int name_w = width - fixed;
	int dso_w = (keys & cst_report_key_dso) ? name_w / 3 : 0;
	int src_w = (keys & cst_report_key_srcline) ? name_w / 3 : 0;
	int sym_w = name_w - dso_w - src_w - 2;

	if (sym_w < 12)
		sym_w = 12;
	fprintf(f, "# %" PRIu64 " instructions executed\n", total);
	fprintf(f, "%12s %7s %9s %9s %9s %9s  %-*s", "insns", "share", "entered", "taken",
		"not-taken", "lines", sym_w, (keys & cst_report_key_sym) ? "symbol" : "");
	if (dso_w)
		fprintf(f, " %-*s", dso_w - 1, "dso");
	if (src_w)
		fprintf(f, " %s", "srcline");
	fputc('\n', f);
	for (int i = 0; i < n && (limit <= 0 || i < limit); i++) {
		const struct cst_report_row *r = &rows[i];
		char cov[32];

		coverage(r, cov, sizeof(cov)); /* per function only: '-' for source lines */
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
}

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

static void print_csv(FILE *f, const struct cst_report_row *rows, int n, uint64_t total)
{
	fputs("insns,share,entries,taken,not_taken,lines_hit,lines_total,sym,dso,file,line\n", f);
	for (int i = 0; i < n; i++) {
		const struct cst_report_row *r = &rows[i];

		fprintf(f, "%" PRIu64 ",%.4f,%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%u,%u,", r->insns,
			total ? 100.0 * (double)r->insns / (double)total : 0.0, r->entries, r->taken,
			r->not_taken, r->lines_hit, r->lines_total);
		csv_str(f, r->sym);
		fputc(',', f);
		csv_str(f, r->dso);
		fputc(',', f);
		csv_str(f, r->file);
		fprintf(f, ",%d\n", r->line);
	}
}

static int print_json(FILE *f, const struct cst_report_row *rows, int n, uint64_t total,
		      uint64_t ranges)
{
	json_t *root = json_object(), *arr = json_array();
	int err = 0;

	if (!root || !arr)
		return -cste_nomem;
	json_object_set_new(root, "total_insns", json_integer((json_int_t)total));
	json_object_set_new(root, "ranges", json_integer((json_int_t)ranges));
	for (int i = 0; i < n; i++) {
		const struct cst_report_row *r = &rows[i];
		json_t *o = json_object();

		if (!o)
			return -cste_nomem;
		if (r->sym)
			json_object_set_new(o, "sym", json_string(r->sym));
		if (r->dso)
			json_object_set_new(o, "dso", json_string(r->dso));
		if (r->file || r->line)
			json_object_set_new(o, "srcline",
					    json_sprintf("%s:%d", r->file ? r->file : "??", r->line));
		json_object_set_new(o, "insns", json_integer((json_int_t)r->insns));
		json_object_set_new(o, "share", json_real(total ? (double)r->insns / (double)total : 0));
		json_object_set_new(o, "entries", json_integer((json_int_t)r->entries));
		json_object_set_new(o, "taken", json_integer((json_int_t)r->taken));
		json_object_set_new(o, "not_taken", json_integer((json_int_t)r->not_taken));
		json_object_set_new(o, "lines_hit", json_integer(r->lines_hit));
		json_object_set_new(o, "lines_total", json_integer(r->lines_total));
		if (r->func_addr)
			json_object_set_new(o, "addr", json_integer((json_int_t)r->func_addr));
		json_array_append_new(arr, o);
	}
	json_object_set_new(root, "rows", arr);
	if (json_dumpf(root, f, JSON_INDENT(1)) < 0)
		err = -cste_io;
	fputc('\n', f);
	json_decref(root);
	return err;
}

static int parse_sort(const char *arg, unsigned *keys)
{
	char buf[256], *tok, *save = NULL;

	*keys = 0;
	snprintf(buf, sizeof(buf), "%s", arg);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (!strcmp(tok, "dso"))
			*keys |= cst_report_key_dso;
		else if (!strcmp(tok, "sym") || !strcmp(tok, "symbol"))
			*keys |= cst_report_key_sym;
		else if (!strcmp(tok, "srcline"))
			*keys |= cst_report_key_srcline;
		else {
			cli_error("--sort: '%s' is not dso, sym or srcline", tok);
			return -1;
		}
	}
	return *keys ? 0 : -1;
}

/* What report's own options ask for. */
struct report_args {
	enum rep_format format;
	unsigned keys;
	const char *output;
	int limit;
	bool stats;
};

static int report_option(void *ctx, int opt, const char *arg)
{
	struct report_args *r = ctx;

	switch (opt) {
	case 's':
		return parse_sort(arg, &r->keys);
	case 'f':
		if (!strcmp(arg, "text"))
			r->format = rep_text;
		else if (!strcmp(arg, "json"))
			r->format = rep_json;
		else if (!strcmp(arg, "csv"))
			r->format = rep_csv;
		else {
			cli_error("--format %s: expected text, json or csv", arg);
			return -1;
		}
		return 0;
	case 'o':
		r->output = arg;
		return 0;
	case 'l':
		r->limit = atoi(arg);
		return 0;
	case 'S':
		r->stats = true;
		return 0;
	default:
		return -1;
	}
}

int cmd_report(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"sort", required_argument, NULL, 's'},
		{"format", required_argument, NULL, 'f'},
		{"output", required_argument, NULL, 'o'},
		{"limit", required_argument, NULL, 'l'},
		{"stats", no_argument, NULL, 'S'},
		{"help", no_argument, NULL, 'h'},
		SYMCLI_LONG,
		TRACE_OPTS_LONG,
		{NULL, 0, NULL, 0},
	};
	struct symcli cli;
	struct report_run run = {&cli, NULL, 0};
	struct cst_session *session = NULL;
	struct cst_symbolizer *sym = NULL;
	const struct cst_report_row *rows;
	struct report_args args = {rep_text, cst_report_key_dso | cst_report_key_sym, NULL, 0,
				   false};
	enum rep_format format;
	unsigned keys;
	const char *output, *trace;
	enum verb_parsed parsed;
	FILE *f = stdout;
	bool stats;
	int n, err, limit, status = 1;

	symcli_init(&cli);
	parsed = verb_parse(&(struct verb){"report", report_usage, "o:", longopts, report_option,
					   &args},
			    argc, argv, NULL, &cli, &trace);
	if (parsed != verb_run) {
		symcli_fini(&cli);
		return verb_exit(parsed);
	}
	format = args.format;
	keys = args.keys;
	output = args.output;
	limit = args.limit;
	stats = args.stats;
	if (symcli_open(&cli, trace, &session, &sym) < 0)
		goto out;
	err = cst_report_alloc(&run.rep, keys);
	if (err < 0)
		goto out;
	err = cst_symbolizer_run(sym, session, report_elem, &run);
	if (err < 0) {
		cli_error("%s: %s", trace, cst_strerror(err));
		goto out;
	}
	n = cst_report_rows(run.rep, &rows);
	if (n < 0)
		goto out;
	if (output && !(f = fopen(output, "w"))) {
		cli_error("%s: cannot create: %s", output, strerror(errno));
		f = stdout;
		goto out;
	}
	if (format == rep_json)
		err = print_json(f, rows, n, cst_report_total(run.rep), run.ranges);
	else if (format == rep_csv)
		print_csv(f, rows, n, cst_report_total(run.rep));
	else
		print_text(f, keys, rows, n, cst_report_total(run.rep), limit);
	if (fflush(f) == EOF || err < 0) {
		cli_error("%s: write failed: %s", output ? output : "standard output",
			  strerror(errno));
		goto out;
	}
	if (stats) {
		struct cst_symbolizer_stats st;

		cst_symbolizer_get_stats(sym, &st);
		fprintf(stderr,
			"cstrace: %" PRIu64 " ranges symbolized (%" PRIu64 " from the cache), %" PRIu64
			" instructions, %" PRIu64 " without a symbol\n",
			st.ranges, st.cache_hits, st.insns, st.unknown_insns);
	}
	status = 0;
out:
	if (f != stdout)
		fclose(f);
	cst_report_free(run.rep);
	cst_symbolizer_free(sym);
	cst_session_free(session);
	symcli_fini(&cli);
	return status;
}
