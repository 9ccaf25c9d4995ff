/* Options of the verbs that symbolize (script, report): symbol sources (--elf,
 * --debug-dir, --kallsyms, --vmlinux) and the filters the library's views apply
 * (--pid/--tid/--cpu/--time/--comm/--dsos/--symbols). */
#ifndef CSTRACE_CLI_SYM_OPTS_H
#define CSTRACE_CLI_SYM_OPTS_H

#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>

#include "cstrace/symbolize.h"
#include "trace_opts.h"

#define SYMCLI_MAX 64
struct symcli {
	struct trace_opts topts;
	struct cst_symbolizer_opts sopts;
	int32_t pids[SYMCLI_MAX], tids[SYMCLI_MAX], cpus[SYMCLI_MAX];
	int npids, ntids, ncpus;
	bool has_time;
	const char *time_arg;  /* --time as given: resolved once the trace is open */
	bool time_ticks;       /* its bounds are raw counter ticks (the 't' suffix) */
	uint64_t t0, t1;       /* the window: ticks, or ns on perf's clock */
	struct cst_perf_time_conv tc; /* the trace's ticks to perf's clock ... */
	bool has_tc;                  /* ... when it has one (cst_session_time_conv) */
	/* --comm, --dsos, --symbols: names (comma lists, kept as given) */
	char *comms[SYMCLI_MAX], *dsos[SYMCLI_MAX], *symbols[SYMCLI_MAX];
	int ncomms, ndsos, nsymbols;
	/* what the trace holds, to say so when the filters keep nothing */
	struct {
		int32_t v[16];
		int n;
	} seen_pids, seen_tids, seen_cpus;
	/* all of the filters above, for the library's views (set by symcli_open) */
	struct cst_sym_filter_opts filter;
	/* the view counts the decoder's ranges as they come (cst_report_needs_ranges):
	 * symcli_open does not have them joined */
	bool keep_ranges;
};
#define SYMCLI_VMLINUX 0x2003
#define SYMCLI_LONG                                                                     \
	TRACE_OPTS_ELF_LONG,                                                             \
	{"debug-dir", required_argument, NULL, 0x2001},                                  \
	{"kallsyms", required_argument, NULL, 0x2002},                                   \
	{"vmlinux", required_argument, NULL, SYMCLI_VMLINUX},                                    \
	{"pid", required_argument, NULL, 0x2004},                                        \
	{"tid", required_argument, NULL, 0x2005},                                        \
	{"cpu", required_argument, NULL, 0x2006},                                        \
	{"time", required_argument, NULL, 0x2007},                                       \
	{"comm", required_argument, NULL, 0x2008},                                       \
	{"dsos", required_argument, NULL, 0x2009},                                       \
	{"symbols", required_argument, NULL, 0x200a}
#define SYMCLI_HELP                                                                     \
	TRACE_OPTS_ELF_HELP                                                              \
	"  --debug-dir DIR      look for debug files (DIR/.build-id/xx/y.debug) here first\n" \
	"  --kallsyms FILE      kernel symbols (/proc/kallsyms format)\n"                \
	"  -k, --vmlinux FILE   kernel ELF for kernel addresses\n"                        \
	"  --pid/--tid/--cpu L  only these (comma-separated lists)\n"                     \
	"  --time START,END     only ranges between these times (either may be empty):\n" \
	"                       seconds on perf's clock as perf prints them (perf.data\n" \
	"                       with TIME_CONV), or raw timestamp ticks with a 't' suffix\n" \
	"  --comm LIST          only threads with these command names (from COMM sideband)\n" \
	"  --dsos LIST          only instructions in these binaries (path or base name)\n"  \
	"  --symbols LIST       only instructions in these functions; call views keep the\n" \
	"                       whole stacks of the instructions they keep\n"
/** Set up with the CLI's log and trace options. */
void symcli_init(struct symcli *c);
/** Handle a SYMCLI_LONG or TRACE_OPTS_LONG option: 1 handled, 0 not ours, -1 bad. */
int symcli_parse(struct symcli *c, int opt, const char *arg);
/** cst_symbolizer_run, which decodes a perf.data on other threads (with --threads
 *  above 1) while this one symbolizes. It counts the elements @fn has been given:
 *  after a decoder crash there it writes what was decoded before and lets the
 *  child die, and the child run again on one thread leaves out what those
 *  printed (cli_note_skippable). */
int symcli_run(struct cst_symbolizer *sym, struct cst_session *session, cst_sym_elem_fn fn,
	       void *ctx);
/** symcli_run into perf script's lines @p, which may be made on the decoding
 *  threads too (cst_pscript_run): their bytes go to @write (@p's own writer),
 *  counted as the elements they stand for. */
int symcli_run_pscript(struct cst_session *session, struct cst_pscript *p,
		       cst_script_write_fn write, void *write_ctx);
/** symcli_run into the script view @s, as symcli_run_pscript (cst_script_run). */
int symcli_run_script(struct cst_session *session, struct cst_script *s,
		      cst_script_write_fn write, void *write_ctx);
/** symcli_run into the report view @v, whose table may be counted on the
 *  decoding threads too (cst_report_view_run). */
int symcli_run_report(struct cst_session *session, struct cst_report_view *v);
/** With CSTRACE_DEBUG: how many blocks of call model @calls (NULL: none ran)
 *  made on the decoding threads the run took and refused (for the tests: what
 *  the stretches took for granted held). */
void symcli_say_call_blocks(const struct cst_calls *calls);
/** Open @path as a session and a symbolizer over it, with the --elf files, and
 *  fill c->filter with the filters (the time window in the trace's clock). */
int symcli_open(struct symcli *c, const char *path, struct cst_session **session,
		struct cst_symbolizer **sym);
void symcli_fini(struct symcli *c);
/** False (with decode's one-line error) when @session never found sync: then the
 *  verb has nothing to show and exits non-zero, as decode does. */
bool symcli_decoded(const char *trace, const struct cst_session *session);
/** After a view's run that returned @err: false, with the reason told, when it
 *  failed or nothing of @trace was decoded. */
bool symcli_done(const char *trace, const struct cst_session *session, int err);
/** After a view kept @kept instructions of what @sym symbolized: when the
 *  filters kept nothing, say which of them and what the trace holds (its
 *  threads' names, binaries, pids, tids, CPUs); when most instructions ran in
 *  code without symbols, say which binaries and what to give. */
void symcli_explain(const struct symcli *c, const struct cst_symbolizer *sym, uint64_t kept);

#endif
