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
	"usage: cstrace script [options] [TRACE]\n"
	"\n"
	"Print the decoded trace with symbols: by default one line per taken branch\n"
	"(from -> to, each as symbol+offset and binary). With -F or --itrace, the\n"
	"lines perf script prints, byte for byte: perf's samples of cs_etm trace in\n"
	"perf's columns. '--raw' prints perf's address-only samples (see 'cstrace\n"
	"script --raw --help'). TRACE defaults to ./perf.data.\n"
	"\n"
	"options:\n"
	"  -F, --fields LIST    perf script's fields: comm,pid,tid,cpu,time,period,event,\n"
	"                       flags,ip,sym,symoff,dso,addr,srcline,insn (bytes),insnlen;\n"
	"                       +F / -F add to or take from perf's defaults. With --insn or\n"
	"                       --call-trace, or with cstrace's own fields id and insncnt\n"
	"                       (instructions since the branch before), cstrace's lines\n"
	"  --itrace OPTS        perf's samples: i[N] an instruction sample every N\n"
	"                       instructions (i1i: each; default N 100000), b branches\n"
	"                       (c and r: every branch, as perf 6.1 gives cs_etm), e lost\n"
	"                       trace as perf prints decoder errors; default ib\n"
	"  --ns                 times to the nanosecond (default: microseconds)\n"
	"                       Times are seconds on perf's clock: the trace's timestamps\n"
	"                       through TIME_CONV where the ETMs count the kernel's\n"
	"                       counter, else the time perf 6.1 gives cs_etm samples (the\n"
	"                       latest AUX record's); a snapshot's are timestamp ticks,\n"
	"                       printed with a 't' (as --time takes them)\n"
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
	"  -o, --output FILE    write to FILE instead of standard output\n"
	VERB_INPUT_HELP SYMCLI_HELP TRACE_OPTS_HELP "  -h, --help           this text\n";

/* cstrace's own -F: its names, each a field of the view. */
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

/* -F names one of cstrace's own fields (id, insncnt), which perf has not. */
static bool own_fields(const char *arg)
{
	const char *p = arg;

	while (*p) {
		size_t n = strcspn(p, ",");

		if ((n == 2 && !strncmp(p, "id", 2)) || (n == 7 && !strncmp(p, "insncnt", 7)))
			return true;
		p += n + (p[n] == ',');
	}
	return false;
}

/* What --itrace asks for, in perf's letters. */
struct itrace {
	bool insns, branches, errors;
	uint64_t period;
};

static int parse_itrace(const char *arg, struct itrace *it)
{
	const char *p = arg;

	*it = (struct itrace){.period = 100000};
	while (*p) {
		char c = *p++;

		switch (c) {
		case 'i': {
			char *end;
			unsigned long long n;

			it->insns = true;
			if (*p < '0' || *p > '9')
				break;
			n = strtoull(p, &end, 10);
			p = end;
			if (!n) {
				cli_error("--itrace=%s: the instruction period must be 1 or more", arg);
				return -1;
			}
			it->period = n;
			while (*p == ' ' || *p == ',')
				p++;
			/* perf's rule: a period is followed by its unit or ends the list */
			if (*p == 'i') {
				p++;
			} else if (*p == 't' || *p == 'm' || *p == 'u' || *p == 'n') {
				cli_error("--itrace=%s: cs_etm instruction samples fall every N "
					  "instructions (i%llu or i%llui), not by time or ticks", arg, n, n);
				return -1;
			} else if (*p) {
				cli_error("--itrace=%s: after i%llu comes its unit, i (i%llui%s), as "
					  "perf reads it", arg, n, n, p);
				return -1;
			}
			break;
		}
		case 'b':
		case 'c':
		case 'r':
			it->branches = true;
			break;
		case 'e':
			it->errors = true;
			break;
		case ',':
		case ' ':
			break;
		default:
			cli_error("--itrace=%s: '%c' is not taken here: i[N] (instructions), b, c, r "
				  "(branches), e (lost trace)", arg, c);
			return -1;
		}
	}
	if (!it->insns && !it->branches && !it->errors) {
		cli_error("--itrace=%s: nothing to show: give i[N], b or e", arg);
		return -1;
	}
	return 0;
}

/* Where the view's lines go. */
struct sink {
	FILE *f;
	int io_errno; /* a write failed (cli_write_failed) */
	uint64_t lines;
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
	k->lines++;
	return 0;
}

/* What the view's own options ask for. */
struct view_args {
	struct symcli *cli;
	struct cst_script_opts view;
	const char *output;
	const char *fields;        /* -F as given (perf's or cstrace's names) */
	const char *itrace;        /* --itrace as given */
	bool srcline;
};

static int view_option(void *ctx, int opt, const char *arg)
{
	struct view_args *v = ctx;

	switch (opt) {
	case 'I':
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
		v->fields = arg;
		return 0;
	case 'T':
		v->itrace = arg;
		return 0;
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

/* perf script's lines: what the file says, the fields, the samples. */
struct perf_args {
	struct cst_pscript_file file;
	struct cst_pscript_opts opts;
};

static int perf_setup(const struct view_args *a, const char *trace, struct perf_args *pa)
{
	struct itrace it = {.insns = true, .branches = true, .period = 100000}; /* perf's */
	const char *bad = NULL;
	unsigned fields;
	int err;

	if (a->itrace && parse_itrace(a->itrace, &it) < 0)
		return -2;
	err = cst_pscript_file_read(trace, &pa->file, &cli_log);
	if (err < 0) {
		cli_error("%s: %s", trace, cst_strerror(err));
		return -1;
	}
	fields = cst_pscript_fields_default(&pa->file);
	if (a->fields) {
		err = cst_pscript_fields_parse(a->fields, fields, &fields, &bad);
		if (err == -cste_format) {
			cli_error("-F %s: cannot mix +field or -field with fields given whole",
				  a->fields);
			return -2;
		}
		if (err < 0) {
			cli_error("-F %s: '%.*s' is not one of perf's fields (comm, pid, tid, cpu, "
				  "time, period, event, flags, ip, sym, symoff, dso, addr, srcline, "
				  "insn, insnlen)", a->fields, (int)strcspn(bad, ","), bad);
			return -2;
		}
	}
	/* perf refuses the time when no event samples it (a CPU it allows for AUX
	 * trace: the buffer's), in these words */
	if (pa->file.perf_data && (fields & cst_pscript_time) && !pa->file.has_time) {
		cli_error("Samples for '%s%s' event do not have TIME attribute set. Cannot print "
			  "'time' field.",
			  pa->file.notime_name[0] ? pa->file.notime_name
						  : it.branches ? "branches" : "instructions",
			  pa->file.notime_name[0] ? "" : pa->file.modifiers);
		return -1;
	}
	if ((fields & cst_pscript_symoff) && !(fields & cst_pscript_sym)) {
		cli_error("-F %s: symoff needs sym", a->fields ? a->fields : "");
		return -2;
	}
	pa->opts = (struct cst_pscript_opts){
		.sz = sizeof(pa->opts),
		.file = &pa->file,
		.fields = fields,
		.instructions = it.insns,
		.branches = it.branches,
		.errors = it.errors,
		.ns = a->view.ns,
		.period = it.period,
	};
	return 0;
}

int script_view_run(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"insn", no_argument, NULL, 'I'},
		{"srcline", no_argument, NULL, 'l'},
		{"call-trace", no_argument, NULL, 'c'},
		{"symbols", optional_argument, NULL, 'y'},
		{"disasm", no_argument, NULL, 'd'},
		{"fields", required_argument, NULL, 'F'},
		{"output", required_argument, NULL, 'o'},
		{"ns", no_argument, NULL, 'N'},
		{"itrace", required_argument, NULL, 'T'},
		VERB_LONG_SYM_END,
	};
	struct symcli cli;
	struct cst_session *session = NULL;
	struct cst_symbolizer *sym = NULL;
	struct cst_script *view = NULL;
	struct cst_pscript *pview = NULL;
	struct view_args args = {&cli, {.sz = sizeof(struct cst_script_opts)}, NULL, NULL, NULL,
				 false};
	struct perf_args pa = {0};
	struct sink sink = {stdout, 0, 0};
	struct cli_out file = {.f = stdout};
	const char *trace;
	enum verb_parsed parsed;
	int err, fin, status = 1;
	bool perf;

	symcli_init(&cli);
	parsed = verb_parse(&(struct verb){"script", script_usage, "F:o:", longopts, view_option,
					   &args},
			    argc, argv, NULL, &cli, &trace);
	if (parsed != verb_run)
		return verb_exit(parsed);
	/* perf's lines when asked for perf's samples or fields; cstrace's own views
	 * (--insn, --call-trace) and fields (id, insncnt) keep cstrace's */
	perf = args.itrace || (args.fields && args.view.mode == cst_script_branches &&
			       !own_fields(args.fields) && !args.srcline);
	if (perf ? (err = perf_setup(&args, trace, &pa)) < 0
		 : args.fields && parse_fields(args.fields, &args.view.fields) < 0) {
		status = perf && err != -2 ? 1 : 2; /* a bad option is a usage error */
		goto out;
	}
	if (!perf && !args.fields)
		args.view.fields = cst_script_fields_default(args.view.mode);
	if (args.srcline)
		args.view.fields |= cst_script_srcline;
	/* perf's instruction samples count the decoder's ranges, flags and all */
	cli.keep_ranges = perf && pa.opts.instructions;
	/* -o appears whole, and only when the run succeeded; never over the input */
	if (cli_out_open(&file, args.output, trace, false) < 0)
		goto out;
	sink.f = file.f;
	cli_progress_off(sink.f); /* its lines stream to a terminal: no progress over them */
	cli_out_buffer(sink.f);
	if (symcli_open(&cli, trace, &session, &sym) < 0)
		goto out;
	args.view.filter = &cli.filter;
	pa.opts.filter = &cli.filter;
	pa.opts.trace = cst_session_trace(session);
	if (perf ? cst_pscript_alloc(&pview, sym, write_line, &sink, &pa.opts) < 0
		 : cst_script_alloc(&view, sym, write_line, &sink, &args.view) < 0) {
		cli_error("out of memory");
		goto out;
	}
	err = perf ? symcli_run_pscript(session, pview, write_line, &sink)
		   : symcli_run_script(session, view, write_line, &sink);
	fin = perf ? cst_pscript_finish(pview) : cst_script_finish(view);
	symcli_say_call_blocks(cst_script_call_model(view));
	if (err >= 0 && fin < 0)
		err = fin;
	if (!cli_flush_output(sink.f, args.output, sink.io_errno))
		goto out;
	if (!symcli_done(trace, session, err))
		goto out;
	symcli_explain(&cli, sym, sink.lines);
	status = 0;
out:
	status = cli_out_close(&file, status);
	cst_script_free(view);
	cst_pscript_free(pview);
	cst_symbolizer_free(sym);
	cst_session_free(session);
	symcli_fini(&cli);
	return status;
}
