/* `cstrace merge`: sum the outputs of many captures (folded stacks, AutoFDO and
 * profgen profiles, lcov tracefiles) into one. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "cstrace/symbolize.h"

static const char merge_usage[] =
	"usage: cstrace merge [-o OUT] [--format=F] IN...\n"
	"\n"
	"Sum the counts of report outputs of one format from many captures: folded\n"
	"stacks, autofdo and profgen profiles, lcov tracefiles, report JSON (rows by\n"
	"sym, dso and srcline; lines hit: the most one capture reached). The result is sorted,\n"
	"so merging in any order or grouping gives the same file (merge on each host,\n"
	"then merge the merges).\n"
	"\n"
	"options:\n"
	"  -o, --output FILE    write to FILE (atomically) instead of standard output\n"
	"  --format=F           auto (default: from the content), folded, autofdo,\n"
	"                       profgen, lcov, json\n"
	"  -h, --help           this text\n";

int cmd_merge(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"output", required_argument, NULL, 'o'},
		{"format", required_argument, NULL, 'f'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	enum cst_merge_format fmt = cst_merge_auto;
	const char *output = NULL;
	struct cli_out out;
	int opt, err;

	optind = 1;
	while ((opt = cli_getopt("merge", argc, argv, "o:h", longopts)) != -1) {
		switch (opt) {
		case 'o':
			output = optarg;
			break;
		case 'f':
			if (cst_merge_format_parse(optarg, &fmt) < 0) {
				cli_error("--format %s: expected auto, folded, autofdo, profgen, lcov or json",
					  optarg);
				return 2;
			}
			break;
		case 'h':
			fputs(merge_usage, stdout);
			return 0;
		default:
			return 2; /* cli_getopt said what was wrong, in one line */
		}
	}
	if (optind >= argc) {
		cli_error("merge: no input files");
		fputs(merge_usage, stderr);
		return 2;
	}
	/* never write over an input, however it is named */
	for (int i = optind; i < argc; i++)
		cli_input(argv[i]);
	if (cli_out_open(&out, output, NULL, false) < 0)
		return 1;
	err = cst_merge_files(fmt, (const char *const *)argv + optind, argc - optind, out.f,
			      &cli_log);
	if (err == -cste_io)
		return cli_out_fail(&out, err) < 0 ? 1 : 0; /* the output: it says why */
	if (err < 0) {
		if (err != -cste_format && err != -cste_not_found)
			cli_error("merge: %s", cst_strerror(err));
		cli_out_abort(&out);
		return 1;
	}
	return cli_out_commit(&out) < 0 ? 1 : 0;
}
