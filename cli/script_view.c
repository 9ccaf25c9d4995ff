/* `cstrace script` without --raw: the symbolize library's script view (branches,
 * instructions or the call trace, perf-like -F) written to standard output or -o.
 * Option parsing and wiring only. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cstrace/symbolize.h"
#include "sym_opts.h"
#include "verb.h"
#include "trace_opts.h"

int script_view_run(int argc, char **argv);

static const char script_usage[] =
	"usage: cstrace script [options] TRACE\n"
	"\n"
	"Print the decoded trace with symbols: by default one line per taken branch\n"
	"(from -> to, each as symbol+offset and binary). '--raw' prints perf's\n"
	"address-only samples instead (see 'cstrace script --raw --help').\n"
	"\n"
	"options:\n"
	"  --raw                perf script's address-only samples (--itrace=b / i1i)\n"
	"  --symbols            the default branch view (kept for scripts); --symbols=LIST\n"
	"                       keeps branches from and instructions in those functions\n"
	"  --insn               one line per executed instruction, with disassembly\n"
	"  --disasm             (with --insn) the default: disassembly\n"
	"  --srcline            add the source file:line\n"
	"  --call-trace         each function as it is entered, indented by call depth\n"
	"                       (the call model of report -g: tail calls, signal handlers,\n"
	"                       longjmp and lost trace marked, and where an address\n"
	"                       filter turned tracing off)\n"
	"  -F, --fields LIST    fields: comm,pid,tid,cpu,time,id,flags,ip,sym,symoff,dso,\n"
	"                       addr,srcline,insn,insncnt (perf script -F style); time is\n"
	"                       seconds on perf's clock when the trace converts to it\n"
	"                       (perf.data TIME_CONV), else raw timestamp ticks;\n"
	"                       insncnt: instructions since the branch before\n"
	"  --ns                 times to the nanosecond (default: microseconds)\n"
	"  -o, --output FILE    write to FILE instead of standard output\n" SYMCLI_HELP
		TRACE_OPTS_HELP "  -h, --help           this text\n";

static int parse_fields(const char *arg, unsigned *fields)
{
	char buf[512], *tok, *save = NULL;

	*fields = 0;
	snprintf(buf, sizeof(buf), "%s", arg);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		unsigned bit;

		if (cst_script_field_parse(tok, &bit) < 0) {
			cli_error("-F: '%s' is not a field", tok);
			return -1;
		}
		*fields |= bit;
	}
	return 0;
}

/* Where the view's lines go. */
struct sink {
	FILE *f;
	int io_errno; /* a write failed (cli_write_failed) */
};

static int write_line(void *ctx, const char *line, size_t len)
{
	struct sink *k = ctx;

	/* a restarted child, before what the crashed one printed (a file given with -o
	 * is written whole by each child) */
	if (k->f == stdout && cli_quiet())
		return 0;
	/* only this thread writes the output: no lock per line (the lock was 80 %
	 * of fwrite, 4 % of script), as cmd_script.c does */
	if (fwrite_unlocked(line, 1, len, k->f) != len) {
		cli_write_failed(&k->io_errno);
		return -1;
	}
	return 0;
}

/* What the view's own options ask for. */
struct view_args {
	struct symcli *cli;
	struct cst_script_opts view;
	const char *output;
	bool srcline, have_fields;
};

static int view_option(void *ctx, int opt, const char *arg)
{
	struct view_args *v = ctx;

	switch (opt) {
	case 'i':
		v->view.mode = cst_script_insns;
		return 0;
	case 'c':
		v->view.mode = cst_script_calls;
		return 0;
	case 'l':
		v->srcline = true;
		return 0;
	case 'y':
		/* "--symbols=LIST" filters; plain "--symbols" only asks for this view */
		return arg ? (symcli_parse(v->cli, 0x200a, arg) < 0 ? -1 : 0) : 0;
	case 'd':
		return 0; /* it only asks for this view: disassembly is its default */
	case 'F':
		v->have_fields = true;
		return parse_fields(arg, &v->view.fields);
	case 'o':
		v->output = arg;
		return 0;
	case 'N':
		v->view.ns = true;
		return 0;
	default:
		return -1;
	}
}

int script_view_run(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"insn", no_argument, NULL, 'i'},
		{"srcline", no_argument, NULL, 'l'},
		{"call-trace", no_argument, NULL, 'c'},
		{"symbols", optional_argument, NULL, 'y'},
		{"disasm", no_argument, NULL, 'd'},
		{"fields", required_argument, NULL, 'F'},
		{"output", required_argument, NULL, 'o'},
		{"ns", no_argument, NULL, 'N'},
		VERB_LONG_SYM_END,
	};
	struct symcli cli;
	struct cst_session *session = NULL;
	struct cst_symbolizer *sym = NULL;
	struct cst_script *view = NULL;
	struct view_args args = {&cli, {.sz = sizeof(struct cst_script_opts)}, NULL, false, false};
	struct sink sink = {stdout, 0};
	struct cli_out file = {.f = stdout};
	const char *trace;
	enum verb_parsed parsed;
	int err, fin, status = 1;

	symcli_init(&cli);
	parsed = verb_parse(&(struct verb){"script", script_usage, "F:o:", longopts, view_option,
					   &args},
			    argc, argv, NULL, &cli, &trace);
	if (parsed != verb_run)
		return verb_exit(parsed);
	if (!args.have_fields)
		args.view.fields = cst_script_fields_default(args.view.mode);
	if (args.srcline)
		args.view.fields |= cst_script_srcline;
	/* -o appears whole, and only when the run succeeded; never over the input */
	if (cli_out_open(&file, args.output, trace, false) < 0)
		goto out;
	sink.f = file.f;
	setvbuf(sink.f, NULL, _IOFBF, 1 << 20);
	if (symcli_open(&cli, trace, &session, &sym) < 0)
		goto out;
	args.view.filter = &cli.filter;
	if (cst_script_alloc(&view, sym, write_line, &sink, &args.view) < 0) {
		cli_error("out of memory");
		goto out;
	}
	err = symcli_run(sym, session, cst_script_add, view);
	fin = cst_script_finish(view);
	if (err >= 0 && fin < 0)
		err = fin;
	if (!cli_flush_output(sink.f, args.output, sink.io_errno))
		goto out;
	if (!symcli_done(trace, session, err))
		goto out;
	status = 0;
out:
	status = cli_out_close(&file, status);
	cst_script_free(view);
	cst_symbolizer_free(sym);
	cst_session_free(session);
	symcli_fini(&cli);
	return status;
}
