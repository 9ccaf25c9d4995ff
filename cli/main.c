/* cstrace: the command dispatcher. Each verb is one function in cmd_<verb>.c. */
#include "cli.h"
#include "verb.h"

#include <getopt.h>
#include <stdio.h>
#include <string.h>

struct command {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *summary;
	bool isolate; /* decodes through OpenCSD: contain its crashes (see isolate.c) */
};

static const struct command verbs[] = {
	{"decode", cmd_decode, "decode a trace into instruction ranges and events", true},
	{"dump", cmd_dump, "list the trace packets with byte offsets", true},
	{"record", cmd_record, "capture ETM trace of a command (perf cs_etm or sysfs mode)", false},
	{"replay", cmd_replay, "rebuild a capture's perf.data from its recorded AUX stream", false},
	{"aux", cmd_aux, "explain the AUX records of a perf.data file: flags, chunks, loss", false},
	{"synth", cmd_synth, "run an Arm program under QEMU and write ETM trace of it", false},
	{"report", cmd_report, "executed instructions per function, line coverage, branches", true},
	{"script", cmd_script, "the trace with symbols: branches, instructions, call trace", true},
	{"boards", cmd_boards, "list and show board profiles, write fixture trees", false},
	{"doctor", cmd_doctor, "check this system for CoreSight tracing, with fixes", false},
	{"merge", cmd_merge, "sum report outputs of many captures (folded, autofdo, profgen, lcov)",
	 false},
	{"export", cmd_export, "write the trace as perf's SQL export (SQLite, PostgreSQL)", true},
};

static void usage(FILE *out)
{
	fprintf(out, "usage: cstrace <command> [options] [args]\n\ncommands:\n");
	for (size_t i = 0; i < sizeof(verbs) / sizeof(verbs[0]); i++)
		fprintf(out, "  %-8s %s\n", verbs[i].name, verbs[i].summary);
	fprintf(out, "\n'cstrace help <command>' or 'cstrace <command> --help' describes a command.\n");
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	/* "cstrace help VERB" is "cstrace VERB --help", as git's and perf's */
	if (!strcmp(argv[1], "help") && argc > 2) {
		char *help[] = {argv[2], "--help", NULL};

		for (size_t i = 0; i < sizeof(verbs) / sizeof(verbs[0]); i++)
			if (!strcmp(argv[2], verbs[i].name))
				return cli_stdout_done(verbs[i].run(2, help));
		cli_error("help: '%s' is not a cstrace command; see 'cstrace --help'", argv[2]);
		return 2;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		usage(stdout);
		return cli_stdout_done(0);
	}
	if (!strcmp(argv[1], "--version")) {
		printf("cstrace " CSTRACE_VERSION "\n");
		return cli_stdout_done(0);
	}
	for (size_t i = 0; i < sizeof(verbs) / sizeof(verbs[0]); i++)
		if (!strcmp(argv[1], verbs[i].name))
			return cli_stdout_done(verbs[i].isolate
						       ? cli_run_isolated(verbs[i].run, argc - 1, argv + 1)
						       : verbs[i].run(argc - 1, argv + 1));
	{
		/* the nearest command, as for options */
		struct option names[sizeof(verbs) / sizeof(verbs[0]) + 1] = {{0}};
		const char *close;

		for (size_t i = 0; i < sizeof(verbs) / sizeof(verbs[0]); i++)
			names[i].name = verbs[i].name;
		close = verb_closest(names, argv[1]);
		if (close)
			cli_error("'%s' is not a cstrace command; did you mean '%s'?", argv[1], close);
		else
			cli_error("'%s' is not a cstrace command; see 'cstrace --help'", argv[1]);
	}
	return 2;
}
