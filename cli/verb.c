/* The option loop of the trace-reading verbs (see verb.h). */
#include "verb.h"

#include <stdio.h>
#include <string.h>

#include "cli.h"

static enum verb_parsed parse(const struct verb *v, int argc, char **argv,
			      struct trace_opts *topts, struct symcli *sym, const char **trace)
{
	char shortopts[32];
	int opt;

	snprintf(shortopts, sizeof(shortopts), "%sh", v->shortopts ? v->shortopts : "");
	optind = 0; /* a full getopt reset: script may have looked at argv before */
	while ((opt = getopt_long(argc, argv, shortopts, v->longopts, NULL)) != -1) {
		int t = sym ? symcli_parse(sym, opt, optarg) : trace_opts_parse(topts, opt, optarg);

		if (t < 0)
			return verb_usage;
		if (t > 0)
			continue;
		if (opt == 'h') {
			fputs(v->usage, stdout);
			return verb_help;
		}
		if (!v->option || v->option(v->ctx, opt, optarg) < 0)
			return verb_usage;
	}
	if (optind != argc - 1) {
		cli_error("%s: one TRACE expected\n%s", v->name, v->usage);
		return verb_usage;
	}
	if (!sym && trace_opts_finish(topts) < 0)
		return verb_usage;
	*trace = argv[optind];
	return verb_run;
}

enum verb_parsed verb_parse(const struct verb *v, int argc, char **argv,
			    struct trace_opts *topts, struct symcli *sym, const char **trace)
{
	enum verb_parsed p = parse(v, argc, argv, topts, sym, trace);

	if (p != verb_run) {
		if (sym)
			symcli_fini(sym);
		else
			trace_opts_fini(topts);
	}
	return p;
}
