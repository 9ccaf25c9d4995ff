/* `cstrace export`: the trace as the database perf's export-to-sqlite.py or
 * export-to-postgresql.py writes (the export library), read by perf's
 * exported-sql-viewer.py and by the queries written for those databases. */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cstrace/export.h"
#include "cstrace/perfdata.h"
#include "sym_opts.h"
#include "verb.h"

static const char export_usage[] =
	"usage: cstrace export [-o FILE.db | --postgres CONNINFO] [options] TRACE\n"
	"\n"
	"Write the trace as a database with the schema of perf's export-to-sqlite.py\n"
	"(\"branches calls\"): branch samples as perf script --itrace=b makes them, calls\n"
	"and call paths as perf's call/return processor makes them, with the threads,\n"
	"comms, binaries and symbols they name. perf's exported-sql-viewer.py and\n"
	"queries written for perf's databases read it unchanged (docs/export.md).\n"
	"\n"
	"options:\n"
	"  -o, --output FILE    the SQLite database (default: TRACE's name, .data\n"
	"                       replaced by .db); it appears whole, 0600, or not at all\n"
	"  --append             add this capture to an existing database (its own\n"
	"                       machines and selected_events rows)\n"
	"  -f, --force          replace an existing database\n"
	"  --postgres CONNINFO  write to a PostgreSQL database instead (libpq's\n"
	"                       \"host=db dbname=traces\"): perf's tables are created\n"
	"                       once, each capture adds its rows in one transaction\n"
	"  --insn               also a sample per instruction (perf's --itrace=i1i)\n"
	"  --all-columns        perf's \"all\" samples columns (period, weight,\n"
	"                       transaction, data_src) in a new database\n"
	"  --no-calls           no calls and call_paths tables\n"
	"  --stats              print what was written on standard error\n"
	"  --elf FILE[@ADDR]    symbols and lines from FILE (see 'cstrace report --help');\n"
	"                       repeatable\n"
	"  --debug-dir DIR      look for debug files (DIR/.build-id/xx/y.debug) here first\n"
	"  --kallsyms FILE      kernel symbols (/proc/kallsyms format)\n"
	"  --vmlinux FILE       kernel ELF for kernel addresses\n" TRACE_OPTS_HELP
	"  -h, --help           this text\n";

struct export_args {
	const char *output, *postgres;
	bool append, force, insn, all_columns, no_calls, stats;
};

static int export_option(void *ctx, int opt, const char *arg)
{
	struct export_args *a = ctx;

	switch (opt) {
	case 'o': a->output = arg; return 0;
	case 'P': a->postgres = arg; return 0;
	case 'A': a->append = true; return 0;
	case 'f': a->force = true; return 0;
	case 'I': a->insn = true; return 0;
	case 'C': a->all_columns = true; return 0;
	case 'N': a->no_calls = true; return 0;
	case 'S': a->stats = true; return 0;
	default: return -1;
	}
}

/* The filters of report and script select elements; a database holds the whole
 * capture, and SQL selects. */
static bool no_filters(const struct symcli *c)
{
	const char *which = c->npids ? "--pid" : c->ntids ? "--tid" : c->ncpus ? "--cpu"
			  : c->has_time ? "--time" : c->ncomms ? "--comm" : c->ndsos ? "--dsos"
			  : c->nsymbols ? "--symbols" : NULL;

	if (which)
		cli_error("export: %s: the database holds the whole capture; select in SQL "
			  "(samples_view, calls_view)", which);
	return !which;
}

/* perf's event modifiers and comm_exec, from the traced event of a perf.data */
static void perf_attrs(const char *path, struct cst_export_opts *o)
{
	struct cst_perf_reader *r;

	if (cst_perf_reader_open(&r, path, NULL) < 0)
		return;
	for (int i = 0; i < cst_perf_reader_nattrs(r); i++) {
		const struct cst_perf_attr *a = cst_perf_reader_attr(r, i);

		/* a PMU of its own (cs_etm), not perf's fixed types */
		if (a->type >= 6 && !o->attr_flags)
			o->attr_flags = a->flags;
		if (a->flags & CST_PERF_ATTR_COMM_EXEC)
			o->comm_exec = true;
	}
	cst_perf_reader_free(r);
}

static char *default_output(const char *trace)
{
	const char *base = strrchr(trace, '/');
	size_t n;
	char *out;

	while (base && !base[1] && base > trace) { /* "dir/" */
		const char *p = base - 1;

		while (p > trace && *p != '/')
			p--;
		base = *p == '/' ? p : NULL;
	}
	base = base ? base + 1 : trace;
	n = strcspn(base, "/");
	if (n > 5 && !strncmp(base + n - 5, ".data", 5))
		n -= 5;
	if (asprintf(&out, "%.*s.db", (int)n, base) < 0)
		return NULL;
	return out;
}

struct run {
	struct cst_sym_filter *time; /* no filter: each trace ID's latest timestamp */
	struct cst_export *exp;
};

static int on_elem(void *ctx, const struct cst_sym_elem *se)
{
	struct run *r = ctx;

	cst_sym_filter_keep(r->time, se);
	return cst_export_add(r->exp, se, cst_sym_filter_time(r->time, se));
}

static int on_sideband(void *ctx, const struct cst_sideband *sb)
{
	return cst_export_sideband(((struct run *)ctx)->exp, sb);
}

static void copy_progress(void *ctx, uint64_t done, uint64_t total)
{
	cli_progress(ctx, done, total);
}

int cmd_export(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"output", required_argument, NULL, 'o'},
		{"postgres", required_argument, NULL, 'P'},
		{"append", no_argument, NULL, 'A'},
		{"force", no_argument, NULL, 'f'},
		{"insn", no_argument, NULL, 'I'},
		{"all-columns", no_argument, NULL, 'C'},
		{"no-calls", no_argument, NULL, 'N'},
		{"stats", no_argument, NULL, 'S'},
		{"help", no_argument, NULL, 'h'},
		SYMCLI_LONG,
		TRACE_OPTS_LONG,
		{NULL, 0, NULL, 0},
	};
	struct export_args args = {0};
	struct symcli cli;
	struct cst_session *session = NULL;
	struct cst_symbolizer *sym = NULL;
	struct cst_export_writer *w = NULL;
	struct cli_verb_log vl;
	struct run run = {NULL, NULL};
	char *output = NULL, *tmp = NULL;
	const char *trace;
	enum verb_parsed parsed;
	int err, status = 1;

	symcli_init(&cli);
	cli.topts.session.progress_ctx = (void *)"exporting";
	parsed = verb_parse(&(struct verb){"export", export_usage, "o:f", longopts, export_option,
					   &args},
			    argc, argv, NULL, &cli, &trace);
	if (parsed != verb_run)
		return verb_exit(parsed);
	cli_verb_log(&vl, "export");
	if (!no_filters(&cli))
		goto out_usage;
	if (args.append && args.force) {
		cli_error("export: --append adds to a database and -f replaces it: give one");
		goto out_usage;
	}
	if (args.postgres && (args.output || args.append || args.force)) {
		cli_error("export: --postgres writes to the server: -o, --append and -f are for "
			  "SQLite files (a PostgreSQL database always gets one more capture)");
		goto out_usage;
	}
	if (args.postgres && !cst_export_have_postgres()) {
		cli_error("export: --postgres: libpq cannot be loaded (install libpq5)");
		goto out;
	}
	if (!args.postgres) {
		output = args.output ? strdup(args.output) : default_output(trace);
		if (!output) {
			cli_error("out of memory");
			goto out;
		}
		if (cli_same_file(output, trace)) {
			cli_error("%s: is the input; refusing to overwrite it", output);
			goto out;
		}
	}
	/* perf's instruction samples take the flags of the decoder's range before:
	 * ranges stay as the decoder cut them */
	cli.keep_ranges = args.insn;
	if (symcli_open(&cli, trace, &session, &sym) < 0)
		goto out;
	if ((err = cst_sym_filter_alloc(&run.time, sym, &cli.filter)) < 0) {
		cli_error("export: %s", cst_strerror(err));
		goto out;
	}
	/* the trace opened: now the database */
	if (args.postgres) {
		err = cst_export_postgres_open(
			&w, args.postgres,
			&(struct cst_export_postgres_opts){.sz = sizeof(struct cst_export_postgres_opts),
							   .log = &vl.log,
							   .all_columns = args.all_columns,
							   .no_calls = args.no_calls,
							   .progress = copy_progress,
							   .progress_ctx = (void *)"copying"});
	} else {
		err = cst_export_sqlite_open(
			&w, output,
			&(struct cst_export_sqlite_opts){
				.sz = sizeof(struct cst_export_sqlite_opts),
				.log = &vl.log,
				.existing = args.append ? cst_export_append
					    : args.force ? cst_export_replace
							 : cst_export_refuse,
				.all_columns = args.all_columns,
				.no_calls = args.no_calls});
		if (err == -cste_busy)
			cli_error("export: %s exists: add this capture to it with --append, or "
				  "replace it with -f", output);
	}
	if (err < 0) {
		if (!vl.told && err != -cste_busy)
			cli_error("export: %s", cst_strerror(err));
		goto out;
	}
	if (cst_export_writer_tmpname(w) && (tmp = strdup(cst_export_writer_tmpname(w))))
		cli_note_tmp(tmp, true); /* a child that dies leaves no half database */
	{
		struct cst_export_opts eo = {
			.sz = sizeof(eo),
			.log = &vl.log,
			.sym = sym,
			.trace = cst_session_trace(session),
			.capture = trace,
			.instructions = args.insn,
			.no_calls = args.no_calls,
		};

		if (cst_session_kind(session) == cst_input_perf)
			perf_attrs(trace, &eo);
		err = cst_export_alloc(&run.exp, w, &eo);
	}
	if (err < 0) {
		if (!vl.told)
			cli_error("export: %s", cst_strerror(err));
		goto out;
	}
	err = cst_symbolizer_run_sideband(sym, session, on_elem, on_sideband, &run);
	if (err == -cste_crashed)
		cli_pipe_drained();
	cli_progress_end();
	if (err < 0) {
		if (err != -cste_no_trace && !vl.told)
			cli_error("%s: %s", trace, cst_strerror(err));
		goto out;
	}
	if (!symcli_decoded(trace, session))
		goto out;
	err = cst_export_finish(run.exp);
	cli_progress_end();
	if (err < 0) {
		if (!vl.told)
			cli_error("export: %s: %s", output ? output : "postgres", cst_strerror(err));
		goto out;
	}
	if (args.stats) {
		struct cst_export_stats st;

		cst_export_get_stats(run.exp, &st);
		fprintf(stderr,
			"%" PRIu64 " samples, %" PRIu64 " calls, %" PRIu64 " call paths, %" PRIu64
			" threads, %" PRIu64 " comms, %" PRIu64 " dsos, %" PRIu64
			" symbols; deepest stack %u%s\n",
			st.samples, st.calls, st.call_paths, st.threads, st.comms, st.dsos, st.symbols,
			st.max_depth, st.stacks_cut ? " (some cut at 65536)" : "");
	}
	status = 0;
	goto out;
out_usage:
	status = 2;
out:
	cst_export_free(run.exp);
	cst_sym_filter_free(run.time);
	cst_export_writer_free(w); /* without a commit: no new file, no rows */
	if (tmp) {
		cli_note_tmp(tmp, false);
		free(tmp);
	}
	free(output);
	cst_symbolizer_free(sym);
	cst_session_free(session);
	symcli_fini(&cli);
	return status;
}
