/* Options of the verbs that symbolize (script, report): symbol sources (--elf,
 * --debug-dir, --kallsyms, --vmlinux) and filters (--pid/--tid/--cpu/--time). */
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
	const char *elfs[SYMCLI_MAX];
	int nelfs;
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
	struct cst_symbolizer *sym;          /* for comm names, once open */
	struct cst_sym_piece *kept;          /* symcli_pieces' scratch */
	size_t kept_cap;
	struct cst_elem kept_elem;
	uint64_t last_ts[128]; /* latest timestamp per trace ID: ranges carry none */
	bool decoder_ranges;   /* each range as the decoder cut it (no merge_ranges):
				  for views that follow perf's packets one by one */
};
#define SYMCLI_LONG                                                                     \
	{"elf", required_argument, NULL, 0x2000},                                        \
	{"debug-dir", required_argument, NULL, 0x2001},                                  \
	{"kallsyms", required_argument, NULL, 0x2002},                                   \
	{"vmlinux", required_argument, NULL, 0x2003},                                    \
	{"pid", required_argument, NULL, 0x2004},                                        \
	{"tid", required_argument, NULL, 0x2005},                                        \
	{"cpu", required_argument, NULL, 0x2006},                                        \
	{"time", required_argument, NULL, 0x2007},                                       \
	{"comm", required_argument, NULL, 0x2008},                                       \
	{"dsos", required_argument, NULL, 0x2009},                                       \
	{"symbols", required_argument, NULL, 0x200a}
#define SYMCLI_HELP                                                                     \
	"  --elf FILE[@ADDR]    symbols and lines from FILE, at its link addresses or with\n" \
	"                       its first segment at ADDR; for a raw dump its code too\n" \
	"                       (no --image needed); repeatable\n"                        \
	"  --debug-dir DIR      look for debug files (DIR/.build-id/xx/y.debug) here first\n" \
	"  --kallsyms FILE      kernel symbols (/proc/kallsyms format)\n"                \
	"  --vmlinux FILE       kernel ELF for kernel addresses\n"                        \
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
/** Open @path as a session and a symbolizer over it, with the --elf files. */
int symcli_open(struct symcli *c, const char *path, struct cst_session **session,
		struct cst_symbolizer **sym);
/** The time of @se: the latest timestamp of its trace ID (ranges carry none of
 *  their own), in ns on perf's clock when the trace converts (c->has_tc), else raw
 *  ticks; 0 before the first timestamp. */
static inline uint64_t symcli_time(const struct symcli *c, const struct cst_sym_elem *se)
{
	uint64_t t = c->last_ts[se->elem->trace_id & 0x7f];

	return t && c->has_tc ? cst_perf_time_from_ticks(&c->tc, t) : t;
}
/** True when @se passes the --pid/--tid/--cpu/--time/--comm filters. */
bool symcli_keep(struct symcli *c, const struct cst_sym_elem *se);
/** True when function @func of binary @dso passes --dsos and --symbols (a
 *  cst_afdo_keep_fn; @ctx the struct symcli). */
bool symcli_name_keep(void *ctx, const char *dso, const char *func);
/** True when the piece passes --dsos and --symbols. */
bool symcli_piece_keep(const struct symcli *c, const struct cst_sym_piece *pc);
/** @se with only the pieces --dsos and --symbols keep (its instruction count
 *  theirs): @se itself when those filters are off or keep it whole, a copy valid
 *  until the next call otherwise, NULL when no piece of a range is kept. */
const struct cst_sym_elem *symcli_pieces(struct symcli *c, const struct cst_sym_elem *se,
					 struct cst_sym_elem *copy);
/** --dsos or --symbols was given. */
static inline bool symcli_piece_filters(const struct symcli *c)
{
	return c->ndsos || c->nsymbols;
}
void symcli_fini(struct symcli *c);
/** False (with decode's one-line error) when @session never found sync: then the
 *  verb has nothing to show and exits non-zero, as decode does. */
bool symcli_decoded(const char *trace, const struct cst_session *session);

#endif
