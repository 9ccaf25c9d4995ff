/* `cstrace report`: executed instructions per function (or dso / source line) as a
 * table, JSON or CSV, and the call views (call graph, folded stacks) built from the
 * symbolize library's call model. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "report_print.h"
#include "cstrace/symbolize.h"
#include "sym_opts.h"
#include "verb.h"
#include "trace_opts.h"

/* ---- report ---- */

enum rep_format {
	rep_text,
	rep_json,
	rep_csv,
	rep_folded,
	rep_flamegraph,
	rep_perfetto,
	rep_autofdo,
	rep_profgen,
	rep_llvm_sample,
	rep_lcov,
	rep_coverage,
	rep_html,
};

/* The call views count only the instructions --dsos/--symbols keep, each on its
 * whole stack: the model itself sees every range, so stacks stay right. */
struct calls_sink {
	struct symcli *cli;
	cst_call_fn fn;
	void *ctx;
};

struct report_run {
	struct symcli *cli;
	struct cst_report *rep;
	struct cst_calls *calls;   /* the call views only */
	struct cst_calltree *tree;
	struct cst_perfetto *timeline;
	struct cst_afdo *afdo;     /* the sample profiles only */
	struct calls_sink sink;    /* between the call model and its view */
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
	"  --format=F           text (default; sized to the terminal), json, csv,\n"
	"                       folded (one line per call stack: flamegraph.pl's input),\n"
	"                       flamegraph (an interactive SVG: hover, click to zoom, search),\n"
	"                       perfetto (a timeline of calls per thread for ui.perfetto.dev),\n"
	"                       autofdo (AutoFDO text profile, as simpleperf inject writes),\n"
	"                       profgen (llvm-profgen's unsymbolized profile of --dso),\n"
	"                       llvm-sample (LLVM's sample profile text of --dso, as\n"
	"                       llvm-profgen makes it: clang -fprofile-sample-use reads it)\n"
	"                       lcov (line coverage for genhtml), coverage (per-file table),\n"
	"                       html (one page: functions, call graph, flame graph, coverage)\n"
	"  --dso NAME           profgen, llvm-sample: the binary (path or base name)\n"
	"  -g, --call-graph     the caller -> callee tree with children, self and call counts\n"
	"                       (text, or json: nested nodes)\n"
	"  --children           add each function's children column (instructions in it and\n"
	"                       all it called) and sort by it, as perf report --children\n"
	"  --percent-limit P    call graph: leave out stacks below P%% (default 0.5)\n"
	"  -o, --output FILE    write to FILE instead of standard output\n"
	"  --limit N            text: at most N rows (default all)\n"
	"  --stats              print symbolizer totals on standard error\n" SYMCLI_HELP
		TRACE_OPTS_HELP "  -h, --help           this text\n";


static int calls_filtered(void *ctx, const struct cst_call_event *ev)
{
	const struct calls_sink *s = ctx;

	if (ev->kind == cst_call_insns && !symcli_piece_keep(s->cli, ev->piece))
		return 0;
	return s->fn(s->ctx, ev);
}

static int report_elem(void *ctx, const struct cst_sym_elem *se)
{
	struct report_run *r = ctx;
	struct cst_sym_elem copy;
	const struct cst_sym_elem *kept;

	if (!symcli_keep(r->cli, se))
		return 0;
	if (se->elem->type == cst_elem_instr_range)
		r->ranges++;
	if (r->calls) {
		int err = cst_calls_add(r->calls, se, symcli_time(r->cli, se));

		if (err)
			return err;
	}
	if (r->afdo) {
		int err = cst_afdo_add(r->afdo, se, symcli_time(r->cli, se));

		if (err)
			return err;
	}
	kept = symcli_pieces(r->cli, se, &copy);
	return kept ? cst_report_add(r->rep, kept) : 0;
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
	bool call_graph, children;
	double percent_limit;
	const char *dso;           /* --dso: the binary of a profgen or llvm-sample profile */
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
		else if (!strcmp(arg, "folded"))
			r->format = rep_folded;
		else if (!strcmp(arg, "perfetto"))
			r->format = rep_perfetto;
		else if (!strcmp(arg, "flamegraph"))
			r->format = rep_flamegraph;
		else if (!strcmp(arg, "autofdo"))
			r->format = rep_autofdo;
		else if (!strcmp(arg, "profgen"))
			r->format = rep_profgen;
		else if (!strcmp(arg, "llvm-sample"))
			r->format = rep_llvm_sample;
		else if (!strcmp(arg, "lcov"))
			r->format = rep_lcov;
		else if (!strcmp(arg, "coverage"))
			r->format = rep_coverage;
		else if (!strcmp(arg, "html"))
			r->format = rep_html;
		else {
			cli_error("--format %s: expected text, json, csv, folded, flamegraph, perfetto, "
				  "autofdo, profgen, llvm-sample, lcov, coverage or html",
				  arg);
			return -1;
		}
		return 0;
	case 'g':
		r->call_graph = true;
		return 0;
	case 'D':
		r->dso = arg;
		return 0;
	case 'C':
		r->children = true;
		return 0;
	case 'P': {
		char *end;

		r->percent_limit = strtod(arg, &end);
		if (end == arg || *end || r->percent_limit < 0 || r->percent_limit > 100) {
			cli_error("--percent-limit %s: expected a percentage (0-100)", arg);
			return -1;
		}
		return 0;
	}
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
		{"call-graph", no_argument, NULL, 'g'},
		{"children", no_argument, NULL, 'C'},
		{"percent-limit", required_argument, NULL, 'P'},
		{"dso", required_argument, NULL, 'D'},
		{"help", no_argument, NULL, 'h'},
		SYMCLI_LONG,
		TRACE_OPTS_LONG,
		{NULL, 0, NULL, 0},
	};
	struct symcli cli;
	struct report_run run = {&cli, NULL, NULL, NULL, NULL, NULL, {&cli, NULL, NULL}, 0};
	struct cst_session *session = NULL;
	struct cst_symbolizer *sym = NULL;
	const struct cst_report_row *rows;
	struct cst_report_row *sorted = NULL;
	uint64_t *children = NULL;
	struct report_args args = {rep_text, cst_report_key_dso | cst_report_key_sym, NULL, 0,
				   false, false, false, 0.5, NULL};
	const char *trace;
	enum verb_parsed parsed;
	struct cli_out out = {.f = stdout};
	bool calls_needed;
	int n, err, status = 1;

	symcli_init(&cli);
	parsed = verb_parse(&(struct verb){"report", report_usage, "o:g", longopts, report_option,
					   &args},
			    argc, argv, NULL, &cli, &trace);
	if (parsed != verb_run)
		return verb_exit(parsed);
	if (args.children && !(args.keys & cst_report_key_sym)) {
		cli_error("--children: needs sym in --sort (children are per function)");
		goto out;
	}
	if ((args.format == rep_profgen || args.format == rep_llvm_sample) && !args.dso) {
		cli_error("--format=%s: name the binary with --dso NAME",
			  args.format == rep_profgen ? "profgen" : "llvm-sample");
		goto out;
	}
	calls_needed = args.call_graph || args.children || args.format == rep_folded ||
		       args.format == rep_flamegraph || args.format == rep_html;
	if (symcli_open(&cli, trace, &session, &sym) < 0)
		goto out;
	err = cst_report_alloc(&run.rep, args.keys);
	if (!err && args.format == rep_perfetto) {
		/* the timeline streams: its file is open while the trace decodes */
		if (cli_out_open(&out, args.output, trace, false) < 0)
			goto out;
		err = cst_perfetto_alloc(
			&run.timeline, out.f,
			&(struct cst_perfetto_opts){.sz = sizeof(struct cst_perfetto_opts), .sym = sym,
						    .perf_clock = cli.has_tc});
		run.sink = (struct calls_sink){&cli, cst_perfetto_add, run.timeline};
		if (!err)
			err = cst_calls_alloc(&run.calls, calls_filtered, &run.sink);
	} else if (!err && (args.format == rep_autofdo || args.format == rep_profgen ||
			    args.format == rep_llvm_sample || args.format == rep_lcov ||
			    args.format == rep_coverage)) {
		err = cst_afdo_alloc(&run.afdo, sym);
	} else if (!err && calls_needed) {
		err = cst_calltree_alloc(&run.tree);
		run.sink = (struct calls_sink){&cli, cst_calltree_add, run.tree};
		if (!err)
			err = cst_calls_alloc(&run.calls, calls_filtered, &run.sink);
		/* the page's coverage comes from the profile's ranges */
		if (!err && args.format == rep_html)
			err = cst_afdo_alloc(&run.afdo, sym);
	}
	/* --dsos/--symbols narrow profiles and coverage as they narrow the table */
	if (!err && run.afdo && symcli_piece_filters(&cli))
		err = cst_afdo_set_filter(run.afdo, symcli_name_keep, &cli);
	if (err < 0) {
		cli_error("%s", cst_strerror(err));
		goto out;
	}
	err = symcli_run(sym, session, report_elem, &run);
	if (err >= 0 && run.calls)
		err = cst_calls_finish(run.calls);
	if (err >= 0 && run.afdo)
		err = cst_afdo_finish(run.afdo);
	if (err < 0) {
		/* no trace: the decoder has said why, with the file */
		if (err != -cste_no_trace)
			cli_error("%s: %s", trace, cst_strerror(err));
		goto out;
	}
	if (!symcli_decoded(trace, session)) {
		cli_out_abort(&out); /* a timeline begun while decoding is dropped */
		goto out;
	}
	n = cst_report_rows(run.rep, &rows);
	if (n < 0)
		goto out;
	if (args.children && n) {
		err = report_children_sorted(run.tree, rows, n, &sorted, &children);
		if (err < 0) {
			cli_error("%s", cst_strerror(err));
			goto out;
		}
		rows = sorted;
	}
	if (!run.timeline && cli_out_open(&out, args.output, trace, false) < 0)
		goto out;
	if (run.timeline)
		err = cst_perfetto_finish(run.timeline);
	else if (args.format == rep_autofdo)
		err = cst_afdo_write_autofdo(run.afdo, out.f);
	else if (args.format == rep_html)
		err = cst_html_write(out.f, &(struct cst_html_input){
						    .sz = sizeof(struct cst_html_input),
						    .title = trace,
						    .rows = rows,
						    .nrows = n,
						    .total = cst_report_total(run.rep),
						    .tree = run.tree,
						    .profile = run.afdo,
					    });
	else if (args.format == rep_lcov)
		err = cst_afdo_write_lcov(run.afdo, out.f);
	else if (args.format == rep_coverage)
		err = cst_afdo_write_coverage(run.afdo, out.f);
	else if (args.format == rep_profgen || args.format == rep_llvm_sample) {
		err = args.format == rep_profgen
			      ? cst_afdo_write_profgen(run.afdo, out.f, args.dso)
			      : cst_afdo_write_llvm_sample(run.afdo, out.f, args.dso);
		if (err == -cste_not_found || err == -cste_unsupported) {
			if (err == -cste_not_found)
				cli_error("--dso %s: no ELF binary of that name ran in %s", args.dso,
					  trace);
			else
				cli_error("--dso %s: no DWARF found for it: a sample profile is made of "
					  "source lines (build with -g, or give --debug-dir)",
					  args.dso);
			cli_out_abort(&out);
			goto out;
		}
	}
	else if (args.format == rep_folded)
		err = cst_calltree_write_folded(run.tree, out.f);
	else if (args.format == rep_flamegraph)
		err = cst_calltree_write_flamegraph(
			run.tree, out.f,
			&(struct cst_flamegraph_opts){.sz = sizeof(struct cst_flamegraph_opts),
						      .title = trace});
	else if (args.call_graph && args.format == rep_json)
		err = report_print_callgraph_json(out.f, run.tree);
	else if (args.call_graph)
		err = cst_calltree_write_text(
			run.tree, out.f,
			&(struct cst_calltree_text_opts){.sz = sizeof(struct cst_calltree_text_opts),
							 .min_share = args.percent_limit / 100.0});
	else if (args.format == rep_json)
		err = report_print_json(out.f, rows, n, cst_report_total(run.rep), run.ranges, children);
	else if (args.format == rep_csv)
		report_print_csv(out.f, rows, n, cst_report_total(run.rep), children);
	else
		report_print_text(out.f, args.keys, rows, n, cst_report_total(run.rep), args.limit,
				  children);
	if (err < 0) {
		cli_out_fail(&out, err);
		goto out;
	}
	if (cli_out_commit(&out) < 0)
		goto out;
	if (args.stats)
		report_print_stats(sym, run.calls);
	status = 0;
out:
	cli_out_abort(&out);
	free(sorted);
	free(children);
	cst_calls_free(run.calls);
	cst_calltree_free(run.tree);
	cst_perfetto_free(run.timeline);
	cst_afdo_free(run.afdo);
	cst_report_free(run.rep);
	cst_symbolizer_free(sym);
	cst_session_free(session);
	symcli_fini(&cli);
	return status;
}
