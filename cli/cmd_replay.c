/* cstrace replay: run the capture's ring consumer over a recorded AUX stream
 * (record --aux-log) and write the perf.data that capture wrote. Option parsing only. */
#include "cli.h"

#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cstrace/capture.h"

static void replay_usage(FILE *out)
{
	fprintf(out,
		"usage: cstrace replay [options] STREAM\n"
		"\n"
		"Run the ring consumer of 'cstrace record' over STREAM, a recorded AUX stream\n"
		"('record --aux-log'), instead of the kernel's rings, and write the perf.data\n"
		"that capture wrote: the same bytes, on any machine. A stream cut short (the\n"
		"board died mid-capture) gives the perf.data of what was consumed.\n"
		"\n"
		"  -o FILE         output (default perf.data; an old FILE is kept as FILE.old)\n"
		"  --aux-log FILE  write the stream again as this replay's consumer saw it\n"
		"  -q              no summary\n"
		"\n"
		"exit status: 0 replayed, 1 an error (a malformed stream, or a consumer that\n"
		"did not do what the capture's did), 2 usage.\n");
}

int cmd_replay(int argc, char **argv)
{
	enum { OPT_AUX_LOG = 256 };
	static const struct option longopts[] = {
		{"output", required_argument, NULL, 'o'},
		{"aux-log", required_argument, NULL, OPT_AUX_LOG},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	struct cli_verb_log vl;
	struct cst_replay_opts o = {.sz = sizeof(o), .log = &vl.log, .output = "perf.data"};
	struct cst_replay_result res;
	bool quiet = false;
	const char *stream;
	int c, err;

	cli_verb_log(&vl, "replay");
	optind = 1;
	while ((c = cli_getopt("replay", argc, argv, "o:qh", longopts)) != -1) {
		switch (c) {
		case 'o':
			o.output = optarg;
			break;
		case OPT_AUX_LOG:
			o.aux_log = optarg;
			break;
		case 'q':
			quiet = true;
			break;
		case 'h':
			replay_usage(stdout);
			return 0;
		default:
			return 2; /* cli_getopt said what was wrong, in one line */
		}
	}
	if (optind + 1 != argc) {
		cli_error("replay: give exactly one STREAM");
		replay_usage(stderr);
		return 2;
	}
	stream = argv[optind];
	/* never write over the stream being read */
	if (cli_same_file(stream, o.output) || cli_same_file(stream, o.aux_log)) {
		cli_error("replay: %s is the stream being read; choose another output",
			  cli_same_file(stream, o.output) ? o.output : o.aux_log);
		return 2;
	}
	err = cst_replay_run(stream, &o, &res);
	if (res.rec.nrings && !quiet)
		cst_record_summary(&res.rec, stderr);
	if (res.cut_short)
		fprintf(stderr,
			"cstrace: %s ends at offset 0x%llx without an end event%s: the capture "
			"stopped there; %s holds what its consumer had read\n",
			stream, (unsigned long long)res.end_offset,
			res.partial_drain ? " (inside a drain)" : "", o.output);
	if (err < 0) {
		if (!vl.told)
			cli_error("replay: %s", cst_strerror(err));
		return 1;
	}
	return res.rec.output_failed ? 1 : 0;
}
