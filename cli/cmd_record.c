/* cstrace record: capture ETM trace of a command into perf.data through the cs_etm
 * PMU, or into a snapshot directory through sysfs (--sysfs). Option parsing only. */
#include "cli.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cstrace/capture.h"

static void record_usage(FILE *out)
{
	fprintf(out,
		"usage: cstrace record [options] -- CMD [ARGS...]\n"
		"\n"
		"Trace CMD with the CoreSight ETM and write perf.data (Linux perf reads it too).\n"
		"\n"
		"  -e cs_etm/@SINK,TERMS/[u]  event: sink and terms (timestamp, cycacc,\n"
		"                             contextid, retstack, branch_broadcast, term=value);\n"
		"                             'u' traces user space only\n"
		"  --per-thread               follow CMD wherever it runs (default)\n"
		"  -a                         every CPU, everything running (needs paranoid <= 0)\n"
		"  -C CPUS                    CMD on these CPUs only, one ring each (\"0,2-3\")\n"
		"  -p PID                     an existing process instead of CMD (Ctrl-C stops)\n"
		"  -m PAGES                   AUX area pages per ring (power of two)\n"
		"  --snapshot[=SIZE]          keep only the newest trace (SIZE bytes, K/M suffix);\n"
		"                             SIGUSR2 takes a snapshot, exit takes the last one\n"
		"  --filter FILTERS           address filters, perf's syntax, comma separated:\n"
		"                             'filter SYM|ADDR[/SIZE] [@FILE]' traces only there,\n"
		"                             'start ...' / 'stop ...' switch tracing on / off;\n"
		"                             without @FILE the kernel's (sysfs mode too)\n"
		"  --trigger SYM[@FILE]       with --snapshot: take it when SYM (in FILE, else\n"
		"                             CMD) is entered, then trace no more (a uprobe)\n"
		"  --trigger-count N          ...at its Nth entry (default 1)\n"
		"  -o FILE                    output (perf.data; a directory with --sysfs)\n"
		"  --root DIR                 read sysfs/procfs below DIR (a fixture tree): implies\n"
		"                             --dry-run, as no kernel stands behind it\n"
		"  --run                      with --sysfs --root: do run the command and write\n"
		"                             below DIR (tests on a fixture tree)\n"
		"  --dry-run                  print the events and metadata, open nothing\n"
		"  --sysfs                    sysfs mode: no perf; enable the sink and ETMs in\n"
		"                             /sys/bus/coresight, read /dev/SINK, write a snapshot\n"
		"                             directory for 'cstrace decode' and trc_pkt_lister\n"
		"  --sink NAME                the sink for --sysfs (e.g. tmc_etf0)\n"
		"  --sideband-only            no trace: record only the sideband (diagnostics)\n"
		"  --aux-log FILE             keep what the ring consumer saw (heads, tails, bytes,\n"
		"                             wake-ups) as a recorded AUX stream: 'cstrace replay\n"
		"                             FILE' rebuilds the perf.data from it anywhere\n"
		"  --no-aux-log               no consumer log; by default OUTPUT.auxlog keeps\n"
		"                             the log without the AUX bytes, for 'cstrace aux'\n"
		"\n"
		"On exit (or Ctrl-C, or a crash of CMD) the file is finished and a summary on\n"
		"stderr says what was captured and what was lost.\n"
		"\n"
		"exit status: 0 recorded, 1 an error or data the disk refused, 2 usage.\n");
}

static int parse_cpus(const char *s, uint64_t *mask)
{
	char buf[256], *tok, *save = NULL;

	if (strlen(s) >= sizeof(buf))
		return -1;
	strcpy(buf, s);
	*mask = 0;
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *dash = strchr(tok, '-');
		uint64_t lo, hi;

		if (dash)
			*dash = 0;
		if (cst_parse_u64(tok, &lo) < 0 || (dash && cst_parse_u64(dash + 1, &hi) < 0))
			return -1;
		if (!dash)
			hi = lo;
		if (hi < lo || hi > 63)
			return -1;
		for (uint64_t c = lo; c <= hi; c++)
			*mask |= 1ULL << c;
	}
	return *mask ? 0 : -1;
}

static int run_sysfs(const char *root, const char *sink, uint64_t mask, const char *out,
		     char **argv, bool dry_run, const char *filter)
{
	struct cli_verb_log rl;
	struct cst_sysfs_opts so = {.sz = sizeof(so), .log = &rl.log, .root = root, .sink = sink,
				    .cpu_mask = mask, .outdir = out ? out : "cstrace-snapshot",
				    .argv = argv, .dry_run = dry_run, .filter = filter};
	struct cst_sysfs_result res;
	int err;

	cli_verb_log(&rl, "record");
	if (!sink) {
		cli_error("record --sysfs needs --sink NAME (e.g. --sink tmc_etf0)");
		return 2;
	}
	err = cst_sysfs_record(&so, &res);
	if (err < 0) {
		if (!rl.told)
			cli_error("record: %s", cst_strerror(err));
		return 1;
	}
	if (dry_run)
		return 0;
	fprintf(stderr,
		"cstrace: wrote snapshot %s: %llu bytes of trace from %s, %d source(s), %d "
		"memory image(s)\n",
		so.outdir, (unsigned long long)res.buffer_bytes, sink, res.nsources, res.nmaps);
	if (res.buffer_full)
		fprintf(stderr, "cstrace: the sink buffer wrapped: only its newest %llu bytes "
				"are kept (older trace was overwritten in the sink)\n",
			(unsigned long long)res.buffer_bytes);
	return 0;
}

int cmd_record(int argc, char **argv)
{
	enum { OPT_PER_THREAD = 256, OPT_SNAPSHOT, OPT_ROOT, OPT_SYSFS, OPT_SINK, OPT_SIDEBAND,
	       OPT_DRY_RUN, OPT_AUX_LOG, OPT_NO_AUX_LOG, OPT_RUN, OPT_FILTER, OPT_TRIGGER,
	       OPT_TRIGGER_COUNT };
	static const struct option longopts[] = {
		{"per-thread", no_argument, NULL, OPT_PER_THREAD},
		{"snapshot", optional_argument, NULL, OPT_SNAPSHOT},
		{"root", required_argument, NULL, OPT_ROOT},
		{"sysfs", no_argument, NULL, OPT_SYSFS},
		{"sink", required_argument, NULL, OPT_SINK},
		{"sideband-only", no_argument, NULL, OPT_SIDEBAND},
		{"dry-run", no_argument, NULL, OPT_DRY_RUN},
		{"run", no_argument, NULL, OPT_RUN},
		{"aux-log", required_argument, NULL, OPT_AUX_LOG},
		{"no-aux-log", no_argument, NULL, OPT_NO_AUX_LOG},
		{"filter", required_argument, NULL, OPT_FILTER},
		{"trigger", required_argument, NULL, OPT_TRIGGER},
		{"trigger-count", required_argument, NULL, OPT_TRIGGER_COUNT},
		{"output", required_argument, NULL, 'o'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	struct cli_verb_log rl;
	struct cst_record_opts o = {.sz = sizeof(o), .log = &rl.log};
	struct cst_record_result res;
	const char *sink = NULL;
	char light[4096];
	bool sysfs = false, no_log = false, run = false;
	int c, err;

	cli_verb_log(&rl, "record");
	optind = 1;
	while ((c = cli_getopt("record", argc, argv, "+e:aC:p:m:o:h", longopts)) != -1) {
		switch (c) {
		case 'e':
			o.event = optarg;
			break;
		case OPT_PER_THREAD:
			o.scope = cst_scope_per_thread;
			break;
		case 'a':
			o.scope = cst_scope_system;
			break;
		case 'C':
			o.scope = cst_scope_cpus;
			if (parse_cpus(optarg, &o.cpu_mask) < 0) {
				cli_error("record: -C '%s': expected CPU numbers 0-63 like 0,2-3", optarg);
				return 2;
			}
			break;
		case 'p': {
			uint64_t pid;

			if (cst_parse_u64(optarg, &pid) < 0 || !pid || pid > 0x7fffffff) {
				cli_error("record: -p '%s' is not a process ID", optarg);
				return 2;
			}
			o.scope = cst_scope_pid;
			o.pid = (int)pid;
			break;
		}
		case 'm':
			if (cst_parse_u64(optarg, &o.aux_pages) < 0 || !o.aux_pages ||
			    (o.aux_pages & (o.aux_pages - 1))) {
				cli_error("record: -m '%s': the AUX size is a power-of-two number of pages",
					  optarg);
				return 2;
			}
			break;
		case OPT_SNAPSHOT:
			o.snapshot = true;
			if (optarg && cli_parse_size(optarg, &o.snapshot_size) < 0) {
				cli_error("record: --snapshot=%s: expected a size like 64K or 4M", optarg);
				return 2;
			}
			break;
		case 'o':
			o.output = optarg;
			break;
		case OPT_ROOT:
			o.root = optarg;
			break;
		case OPT_SYSFS:
			sysfs = true;
			break;
		case OPT_SINK:
			sink = optarg;
			break;
		case OPT_SIDEBAND:
			o.sideband_only = true;
			break;
		case OPT_DRY_RUN:
			o.dry_run = true;
			break;
		case OPT_RUN:
			run = true;
			break;
		case OPT_AUX_LOG:
			o.aux_log = optarg;
			no_log = false;
			break;
		case OPT_NO_AUX_LOG:
			no_log = true;
			o.aux_log = NULL;
			break;
		case OPT_FILTER:
			o.filter = optarg;
			break;
		case OPT_TRIGGER:
			o.trigger = optarg;
			break;
		case OPT_TRIGGER_COUNT:
			if (cst_parse_u64(optarg, &o.trigger_count) < 0 || !o.trigger_count) {
				cli_error("record: --trigger-count '%s': expected a number from 1", optarg);
				return 2;
			}
			break;
		case 'h':
			record_usage(stdout);
			return 0;
		default:
			return 2; /* cli_getopt said what was wrong, in one line */
		}
	}
	if (optind < argc)
		o.argv = argv + optind;
	if (o.trigger_count && !o.trigger) {
		cli_error("record: --trigger-count counts the entries of --trigger SYM: give one");
		return 2;
	}
	if (o.trigger && !o.snapshot) {
		cli_error("record: --trigger takes the snapshot at the function: it needs --snapshot");
		return 2;
	}
	if (sysfs && o.trigger) {
		cli_error("record: --trigger takes a perf AUX snapshot: not with --sysfs");
		return 2;
	}
	/* the recording never replaces the program it runs (nor the other way round) */
	if (o.argv)
		cli_input(o.argv[0]);
	if (cli_output_refused(o.output ? o.output : "perf.data") || cli_output_refused(o.aux_log))
		return 1;
	if (sysfs) {
		if (!o.argv) {
			cli_error("record --sysfs: give the command to trace after --");
			return 2;
		}
		/* a fixture root is a dry run unless --run asks for the writes below it */
		return run_sysfs(o.root, sink, o.cpu_mask, o.output, argv + optind,
				 o.dry_run || (o.root && strcmp(o.root, "/") && !run), o.filter);
	}
	if (run) {
		cli_error("record: --run only applies to --sysfs with --root (perf mode cannot "
			  "open events below a fixture tree)");
		return 2;
	}
	if (!o.aux_log && !no_log) {
		/* the consumer's own log, next to the file (cstrace aux reads it) */
		snprintf(light, sizeof(light), "%s.auxlog", o.output ? o.output : "perf.data");
		o.aux_log = light;
		o.aux_log_light = true;
	}
	err = cst_record_run(&o, &res);
	if (err < 0) {
		if (!rl.told)
			cli_error("record: %s", cst_strerror(err));
		if (res.nrings)
			cst_record_summary(&res, stderr);
		return 1;
	}
	if (!res.dry_run)
		cst_record_summary(&res, stderr);
	return res.output_failed ? 1 : 0;
}
