/* `cstrace report`: the report view of the symbolize library (a function table,
 * call views, profiles, coverage) in the format --format names from its registry.
 * Option parsing and wiring only. */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "report_notes.h"
#include "cstrace/symbolize.h"
#include "sym_opts.h"
#include "verb.h"
#include "trace_opts.h"

static const char usage_head[] =
	"usage: cstrace report [options] [TRACE]\n"
	"\n"
	"Executed instructions per function: self count, share of all, times the function\n"
	"was entered, taken / not-taken branches ending in it, and the share of its source\n"
	"lines that ran. Code without symbols shows as [unknown] in its binary.\n"
	"TRACE defaults to ./perf.data; perf report's options work where they mean\n"
	"the same (-i, -k, -g caller|callee, --children, --no-children, --stdio).\n"
	"\n"
	"options:\n"
	"  --sort KEYS          group by dso, sym, srcline (comma-separated; default dso,sym)\n";
static const char usage_tail[] =
	"  --dso NAME           profgen, llvm-sample: the binary (path or base name)\n"
	"  -g, --call-graph[=ARGS]  the caller -> callee tree with children, self and\n"
	"                       call counts (text, or json: nested nodes); ARGS as perf's:\n"
	"                       graph, fractal, flat, folded (--format=folded) or none; a\n"
	"                       percent threshold (as --percent-limit); caller (default)\n"
	"                       or callee (each function, its callers under it); function\n"
	"                       (-g caller and -g 0.5,callee work as in perf)\n"
	"  --children           add each function's children column (instructions in it and\n"
	"                       all it called) and sort by it, as perf report --children\n"
	"  --no-children        the self column only (the default)\n"
	"  --stdio              text on standard output (the default)\n"
	"  --percent-limit P    call graph: leave out stacks below P%% (default 0.5)\n"
	"  --title TEXT         flamegraph, html: the title (default: the trace's name)\n"
	"  --width PIXELS       flamegraph: a fixed width (default: the window's)\n"
	"  --inverted           flamegraph: an icicle graph, callers on top\n"
	"  --max-size SIZE      perfetto: leave out the smallest slices as far as needed to\n"
	"                       keep the file under SIZE (default 100M, which the UI loads;\n"
	"                       0: no limit); what was left out is noted in the file\n"
	"  --min-insns N        perfetto: no slice for a call that ran fewer instructions\n"
	"  --max-depth N        perfetto: no slice deeper than N calls\n"
	"                       (and --tid, --time: one thread, a time window)\n"
	"  -o, --output FILE    write to FILE instead of standard output\n"
	"  --limit N            text: at most N rows (default all)\n"
	"  --stats              print symbolizer totals on standard error\n" SYMCLI_HELP
		VERB_INPUT_HELP TRACE_OPTS_HELP "  -h, --help           this text\n";

#define HELP_INDENT "                       "
#define HELP_WIDTH 60 /* of the text after the indent */

/* The usage, its --format lines made from the library's registry: the formats'
 * helps, comma-separated, as many to a line as fit; a help of two lines ends the
 * line it starts on. */
static void make_usage(char *buf, size_t size)
{
	const struct cst_report_format *f;
	size_t n = cst_report_format_all(&f), col = 0;
	FILE *m = fmemopen(buf, size, "w");

	if (!m) {
		snprintf(buf, size, "%s%s", usage_head, usage_tail);
		return;
	}
	fputs(usage_head, m);
	fputs("  --format=F           ", m);
	for (size_t i = 0; i < n; i++) {
		const char *h = f[i].help, *nl = strchr(h, '\n');
		const char *comma = i + 1 < n ? "," : "";
		size_t first = nl ? (size_t)(nl - h) : strlen(h) + strlen(comma);

		if (col && col + 1 + first > HELP_WIDTH) {
			fputs("\n" HELP_INDENT, m);
			col = 0;
		} else if (col) {
			fputc(' ', m);
			col++;
		}
		for (; nl; h = nl + 1, nl = strchr(h, '\n')) {
			fprintf(m, "%.*s\n" HELP_INDENT, (int)(nl - h), h);
			col = 0;
		}
		fprintf(m, "%s%s", h, comma);
		col += strlen(h) + strlen(comma);
	}
	fprintf(m, "\n%s", usage_tail);
	fclose(m);
	buf[size - 1] = '\0'; /* a usage that filled the buffer is cut, still a string */
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
	const struct cst_report_format *format;
	struct cst_report_view_opts view;
	const char *output;
	const char *title;         /* --title, else the trace's name */
	bool stats;
};

/* perf's -g ARGS: print type, threshold, print limit, order, sort key, in any
 * order, comma-separated. */
static int parse_call_graph(struct report_args *r, const char *arg)
{
	char buf[256], *tok, *save = NULL;
	int numbers = 0;

	r->view.call_graph = true;
	if (!arg)
		return 0;
	snprintf(buf, sizeof(buf), "%s", arg);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *end;
		double p = strtod(tok, &end);

		if (end != tok && !*end) {
			/* the threshold first, then perf's print limit (no limit here) */
			if (numbers++ == 0) {
				if (p < 0 || p > 100) {
					cli_error("-g %s: the threshold %s is not a percentage", arg, tok);
					return -1;
				}
				r->view.min_share = p / 100.0;
			}
		} else if (!strcmp(tok, "graph") || !strcmp(tok, "fractal") ||
			   !strcmp(tok, "flat") || !strcmp(tok, "caller") ||
			   !strcmp(tok, "function") || !strcmp(tok, "percent")) {
			/* cstrace's call graph is perf's graph in caller order */
		} else if (!strcmp(tok, "callee")) {
			r->view.callee = true;
		} else if (!strcmp(tok, "folded")) {
			r->format = cst_report_format_find("folded");
		} else if (!strcmp(tok, "none")) {
			r->view.call_graph = false;
		} else {
			cli_error("-g %s: '%s' is not taken here: graph, fractal, flat, folded, none, a "
				  "threshold, caller, callee, function", arg, tok);
			return -1;
		}
	}
	return 0;
}

/* Whether @arg reads as perf's -g ARGS (so that "-g caller" takes it). */
static bool call_graph_args(const char *arg)
{
	static const char *const words[] = {"graph", "fractal", "flat", "folded", "none", "caller",
					    "callee", "function", "address", "percent", "period",
					    "count", "branch"};
	char buf[256], *tok, *save = NULL;

	if (!arg || !*arg || *arg == '-' || strlen(arg) >= sizeof(buf))
		return false;
	strcpy(buf, arg);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		bool known = strspn(tok, "0123456789.") == strlen(tok);

		for (size_t i = 0; !known && i < sizeof(words) / sizeof(words[0]); i++)
			known = !strcmp(tok, words[i]);
		if (!known)
			return false;
	}
	return true;
}

static int report_option(void *ctx, int opt, const char *arg)
{
	struct report_args *r = ctx;

	switch (opt) {
	case 's':
		return parse_sort(arg, &r->view.keys);
	case 'f':
		r->format = cst_report_format_find(arg);
		if (!r->format) {
			char names[512];

			cst_report_format_names(names, sizeof(names));
			cli_error("--format %s: expected %s", arg, names);
			return -1;
		}
		return 0;
	case 'g':
		return parse_call_graph(r, arg);
	case 'n':
		r->view.children = false;
		return 0;
	case 'O':
		return 0; /* --stdio: text on standard output is what report writes */
	case 'T':
		r->title = arg;
		return 0;
	case 'W': {
		char *end;
		long w = strtol(arg, &end, 10);

		if (end == arg || *end || w < 200 || w > 100000) {
			cli_error("--width %s: expected pixels, 200 or more", arg);
			return -1;
		}
		r->view.width = (int)w;
		return 0;
	}
	case 'I':
		r->view.inverted = true;
		return 0;
	case 'M':
		if (cli_parse_size(arg, &r->view.max_bytes) < 0) {
			cli_error("--max-size %s: expected a size like 100M, or 0", arg);
			return -1;
		}
		return 0;
	case 'm':
		if (cst_parse_u64(arg, &r->view.min_insns) < 0) {
			cli_error("--min-insns %s: expected a number of instructions", arg);
			return -1;
		}
		return 0;
	case 'd': {
		uint64_t d;

		if (cst_parse_u64(arg, &d) < 0 || !d || d > UINT32_MAX) {
			cli_error("--max-depth %s: expected a number of calls, 1 or more", arg);
			return -1;
		}
		r->view.max_depth = (uint32_t)d;
		return 0;
	}
	case 'D':
		r->view.dso = arg;
		return 0;
	case 'C':
		r->view.children = true;
		return 0;
	case 'P': {
		char *end;
		double p = strtod(arg, &end);

		if (end == arg || *end || p < 0 || p > 100) {
			cli_error("--percent-limit %s: expected a percentage (0-100)", arg);
			return -1;
		}
		r->view.min_share = p / 100.0;
		return 0;
	}
	case 'o':
		r->output = arg;
		return 0;
	case 'l':
		r->view.limit = atoi(arg);
		return 0;
	case 'S':
		r->stats = true;
		return 0;
	default:
		return -1;
	}
}

/* A profile of one binary that could not be written: which --dso it was. */
static bool dso_error(const struct report_args *a, const char *trace, int err)
{
	if (!(a->format->needs & cst_report_needs_dso))
		return false;
	if (err == -cste_not_found)
		cli_error("--dso %s: no ELF binary of that name ran in %s", a->view.dso, trace);
	else if (err == -cste_unsupported)
		cli_error("--dso %s: no DWARF found for it: a sample profile is made of "
			  "source lines (build with -g, or give --debug-dir)",
			  a->view.dso);
	return err == -cste_not_found || err == -cste_unsupported;
}

int cmd_report(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"sort", required_argument, NULL, 's'},
		{"format", required_argument, NULL, 'f'},
		{"output", required_argument, NULL, 'o'},
		{"limit", required_argument, NULL, 'l'},
		{"stats", no_argument, NULL, 'S'},
		{"call-graph", optional_argument, NULL, 'g'},
		{"children", no_argument, NULL, 'C'},
		{"no-children", no_argument, NULL, 'n'},
		{"stdio", no_argument, NULL, 'O'},
		{"title", required_argument, NULL, 'T'},
		{"width", required_argument, NULL, 'W'},
		{"inverted", no_argument, NULL, 'I'},
		{"max-size", required_argument, NULL, 'M'},
		{"min-insns", required_argument, NULL, 'm'},
		{"max-depth", required_argument, NULL, 'd'},
		{"percent-limit", required_argument, NULL, 'P'},
		{"dso", required_argument, NULL, 'D'},
		VERB_LONG_SYM_END,
	};
	struct symcli cli;
	struct cst_session *session = NULL;
	struct cst_symbolizer *sym = NULL;
	struct cst_report_view *view = NULL;
	struct report_args args = {cst_report_format_find("text"),
				   {.sz = sizeof(struct cst_report_view_opts),
				    .keys = cst_report_key_dso | cst_report_key_sym,
				    .min_share = 0.005, .max_bytes = 100ull << 20},
				   NULL, NULL, false};
	const char *trace;
	enum verb_parsed parsed;
	struct cli_out out = {.f = stdout};
	bool stream = false;
	char usage[8192], graph_arg[300];
	struct report_meta meta;
	int err, status = 1;

	make_usage(usage, sizeof(usage));
	symcli_init(&cli);
	/* perf's "-g caller": the word after -g is its argument when it reads as one */
	for (int i = 1; i + 1 < argc && strcmp(argv[i], "--"); i++)
		if ((!strcmp(argv[i], "-g") || !strcmp(argv[i], "--call-graph")) &&
		    call_graph_args(argv[i + 1])) {
			snprintf(graph_arg, sizeof(graph_arg), "--call-graph=%s", argv[i + 1]);
			argv[i] = graph_arg;
			memmove(&argv[i + 1], &argv[i + 2], (size_t)(argc - i - 2) * sizeof(*argv));
			argc--;
		}
	parsed = verb_parse(&(struct verb){"report", usage, "o:g::", longopts, report_option, &args},
			    argc, argv, NULL, &cli, &trace);
	if (parsed != verb_run)
		return verb_exit(parsed);
	if (args.view.children && !(args.view.keys & cst_report_key_sym)) {
		cli_error("--children: needs sym in --sort (children are per function)");
		goto out;
	}
	if ((args.format->needs & cst_report_needs_dso) && !args.view.dso) {
		cli_error("--format=%s: name the binary with --dso NAME", args.format->name);
		goto out;
	}
	cli.keep_ranges = args.format->needs & cst_report_needs_ranges;
	if (symcli_open(&cli, trace, &session, &sym) < 0)
		goto out;
	args.view.title = args.title ? args.title : trace;
	report_meta_read(trace, &meta);
	args.view.meta = &meta.m;
	args.view.filter = &cli.filter;
	/* a timeline streams: its file is open while the trace decodes */
	stream = args.format->needs & cst_report_needs_timeline;
	if (stream) {
		if (cli_out_open(&out, args.output, trace, false) < 0)
			goto out;
		args.view.stream = out.f;
	}
	err = cst_report_view_alloc(&view, args.format, sym, &args.view);
	if (err < 0) {
		cli_error("%s", cst_strerror(err));
		goto out;
	}
	err = symcli_run_report(session, view);
	if (err >= 0)
		err = cst_report_view_finish(view);
	symcli_say_call_blocks(cst_report_view_calls(view));
	if (!symcli_done(trace, session, err))
		goto out; /* a timeline begun while decoding is dropped */
	if (!stream && cli_out_open(&out, args.output, trace, false) < 0)
		goto out;
	err = cst_report_view_write(view, out.f);
	if (err < 0) {
		if (dso_error(&args, trace, err))
			cli_out_abort(&out);
		else
			cli_out_fail(&out, err); /* names the file and the cause */
		goto out;
	}
	if (cli_out_commit(&out) < 0)
		goto out;
	report_tell_loss(args.format, view);
	if (args.stats)
		report_print_stats(sym, view);
	symcli_explain(&cli, sym, cst_report_view_kept(view));
	report_timeline_note(view, args.output);
	status = 0;
out:
	cli_out_abort(&out);
	cst_report_view_free(view);
	cst_symbolizer_free(sym);
	cst_session_free(session);
	symcli_fini(&cli);
	return status;
}
