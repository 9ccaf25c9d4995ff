/* The option loop of the trace-reading verbs (see verb.h). */
#include "verb.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

/* Edits (insert, delete, replace, swap two neighbours) from @a to @b: how far a
 * mistyped option is from a real one. */
static size_t distance(const char *a, size_t na, const char *b)
{
	size_t nb = strlen(b), d[64][64];

	if (na >= 63 || nb >= 63)
		return 99;
	for (size_t i = 0; i <= na; i++)
		d[i][0] = i;
	for (size_t j = 0; j <= nb; j++)
		d[0][j] = j;
	for (size_t i = 1; i <= na; i++)
		for (size_t j = 1; j <= nb; j++) {
			size_t c = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);

			if (d[i - 1][j] + 1 < c)
				c = d[i - 1][j] + 1;
			if (d[i][j - 1] + 1 < c)
				c = d[i][j - 1] + 1;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
			    d[i - 2][j - 2] + 1 < c)
				c = d[i - 2][j - 2] + 1;
			d[i][j] = c;
		}
	return d[na][nb];
}

const char *verb_closest(const struct option *opts, const char *given)
{
	size_t n = strcspn(given, "="), best = 99;
	const char *name = NULL;

	for (const struct option *o = opts; o && o->name; o++) {
		size_t d = distance(given, n, o->name);

		/* a name that begins the same way counts as close */
		if (n >= 3 && !strncmp(o->name, given, n < strlen(o->name) ? n : strlen(o->name)))
			d = d < 2 ? d : 2;
		if (d < best) {
			best = d;
			name = o->name;
		}
	}
	return best <= (n > 6 ? 3 : 2) ? name : NULL;
}

/* getopt's complaint, in one line with the closest option and where help is. */
static void bad_option(const char *verb, const struct option *longopts, int opt, char **argv)
{
	const char *arg = argv[optind - 1] ? argv[optind - 1] : "";
	const char *close;

	if (opt == ':') {
		cli_error("%s: %s needs a value (see 'cstrace %s --help')", verb, arg, verb);
		return;
	}
	if (!strncmp(arg, "--", 2)) {
		close = verb_closest(longopts, arg + 2);
		if (close)
			cli_error("%s: unknown option '%.*s'; did you mean --%s?", verb,
				  (int)strcspn(arg, "="), arg, close);
		else
			cli_error("%s: unknown option '%.*s' (see 'cstrace %s --help')", verb,
				  (int)strcspn(arg, "="), arg, verb);
		return;
	}
	cli_error("%s: unknown option '-%c' (see 'cstrace %s --help')", verb, optopt ? optopt : '?',
		  verb);
}

int cli_getopt(const char *verb, int argc, char **argv, const char *shortopts,
	       const struct option *longopts)
{
	char so[64];
	const char *order = *shortopts == '+' || *shortopts == '-' ? shortopts : "";
	int opt;

	/* ':' first (after an ordering flag): a missing value is told apart */
	snprintf(so, sizeof(so), "%.*s:%s", *order ? 1 : 0, shortopts, shortopts + (*order ? 1 : 0));
	opterr = 0;
	opt = getopt_long(argc, argv, so, longopts, NULL);
	if (opt == '?' || opt == ':') {
		bad_option(verb, longopts, opt, argv);
		return '?';
	}
	return opt;
}

static enum verb_parsed parse(const struct verb *v, int argc, char **argv,
			      struct trace_opts *topts, struct symcli *sym, const char **trace)
{
	char shortopts[48];
	const char *input = NULL;
	int opt;

	snprintf(shortopts, sizeof(shortopts), "%shi:%s", v->shortopts ? v->shortopts : "",
		 sym ? "k:" : "");
	optind = 0; /* a full getopt reset: script may have looked at argv before */
	while ((opt = cli_getopt(v->name, argc, argv, shortopts, v->longopts)) != -1) {
		int t;

		if (opt == '?')
			return verb_usage;
		if (opt == 'i') {
			/* perf's -i/--input */
			input = optarg;
			continue;
		}
		if (opt == 'k')
			opt = SYMCLI_VMLINUX; /* perf's -k/--vmlinux */
		t = sym ? symcli_parse(sym, opt, optarg) : trace_opts_parse(topts, opt, optarg);
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
	if (optind < argc - 1 || (input && optind < argc)) {
		cli_error("%s: one TRACE expected, %d given (see 'cstrace %s --help')", v->name,
			  argc - optind + !!input, v->name);
		return verb_usage;
	}
	if (!input && optind == argc) {
		/* perf's default input */
		if (access("perf.data", F_OK) < 0) {
			cli_error("%s: no TRACE given and no ./perf.data here: name a perf.data "
				  "file, a snapshot directory or a raw dump (see 'cstrace %s --help')",
				  v->name, v->name);
			return verb_usage;
		}
		input = "perf.data";
	}
	if (!sym && trace_opts_finish(topts) < 0)
		return verb_usage;
	*trace = input ? input : argv[optind];
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
