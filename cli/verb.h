/* The skeleton every trace-reading verb (decode, dump, script, script --raw,
 * report) shares: its options parsed with the trace (or symbolizer) options, -h,
 * exactly one TRACE, and the trace options finished. */
#ifndef CSTRACE_CLI_VERB_H
#define CSTRACE_CLI_VERB_H

#include <getopt.h>

#include "sym_opts.h"
#include "trace_opts.h"

struct verb {
	const char *name;               /* "decode", for messages */
	const char *usage;              /* printed by -h, and after a usage error */
	const char *shortopts;          /* the verb's own ("o:"); "h" is added */
	const struct option *longopts;  /* the verb's own, TRACE_OPTS_LONG or SYMCLI_LONG,
					   and {"help", ..., 'h'} */
	/* One of the verb's own options: 0 when taken, -1 when bad or unknown (a
	 * message is printed for a bad value). */
	int (*option)(void *ctx, int opt, const char *arg);
	void *ctx;
};

/* The end of a verb's long options: -h, perf's -i/--input (the TRACE, which
 * defaults to ./perf.data as perf's does), the shared options, the terminator.
 * The short options -h and -i FILE (and -k FILE, perf's --vmlinux, for the
 * symbolizing verbs) are added by verb_parse: the verb's own must not use them. */
#define VERB_LONG_END                                                                  \
	{"help", no_argument, NULL, 'h'}, {"input", required_argument, NULL, 'i'},     \
	TRACE_OPTS_LONG, {NULL, 0, NULL, 0}
#define VERB_LONG_SYM_END                                                              \
	{"help", no_argument, NULL, 'h'}, {"input", required_argument, NULL, 'i'},     \
	SYMCLI_LONG, TRACE_OPTS_LONG, {NULL, 0, NULL, 0}
#define VERB_INPUT_HELP                                                                \
	"  -i, --input TRACE    the trace (as perf's -i; default ./perf.data when no\n"  \
	"                       TRACE is given)\n"

/** The long option closest to @given (an option name without its dashes, maybe
 *  with "=value"), or NULL when none is near. */
const char *verb_closest(const struct option *opts, const char *given);

enum verb_parsed {
	verb_run = 0,  /* go on: *trace is the TRACE argument */
	verb_help,     /* the usage was printed: exit 0 */
	verb_usage,    /* a usage error was printed: exit 2 */
};

/** Parse @argv for @v. Trace options go to @topts (then finished), or with @sym to
 *  the symbolizing verbs' options (@topts NULL; finished when @sym opens). Unless
 *  it returns verb_run, @topts or @sym is released: the verb just exits. */
enum verb_parsed verb_parse(const struct verb *v, int argc, char **argv,
			    struct trace_opts *topts, struct symcli *sym, const char **trace);

/** The exit status for a parse result other than verb_run. */
static inline int verb_exit(enum verb_parsed p)
{
	return p == verb_help ? 0 : 2;
}

#endif
