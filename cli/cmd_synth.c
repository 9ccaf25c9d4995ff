/* cstrace synth: run an Arm Linux program under QEMU user mode and write real-format
 * ETM trace of what it executed (a snapshot directory or perf.data). */
#include "cli.h"

#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cstrace/capture.h"
#include "cstrace/synth.h"

static void synth_usage(FILE *out)
{
	fprintf(out,
		"usage: cstrace synth --arch aarch64|arm [options] -o OUT -- PROG [ARGS...]\n"
		"\n"
		"Runs PROG under qemu-aarch64/qemu-arm and encodes every executed instruction\n"
		"as ETMv4 (AArch64, Juno Cortex-A53/A57 registers) or ETMv3.5 (AArch32,\n"
		"Cortex-A7 registers) trace, formatted into 16-byte CoreSight frames.\n"
		"\n"
		"  --arch aarch64|arm       guest architecture (required)\n"
		"  --core NAME              cortex-a53 (default), cortex-a57, cortex-a7 (arm)\n"
		"  --out snapshot|perf      a snapshot directory (default) or a perf.data file\n"
		"  --sink etr|etf           sink model (default etr)\n"
		"  --buffer-size N          sink size in bytes (default 4M for etr, 64K for etf)\n"
		"  --snapshot[=SIZE]        perf snapshot mode: an overwrite AUX ring\n"
		"  --filter FILTERS         address filters as 'record --filter' takes them (each\n"
		"                           with @FILE): only ViewInst is traced, as an ETM so\n"
		"                           programmed traces (Trace On at each re-entry)\n"
		"  --trigger SYM[@FILE]     with --out perf --snapshot: the snapshot is taken\n"
		"                           when SYM is entered (FILE: PROG); the trace ends there\n"
		"  --trigger-count N        ...at its Nth entry (default 1)\n"
		"  --timestamps             timestamps from instruction counts\n"
		"  --sync-period N          bytes between periodic syncs (default 4096)\n"
		"  --sysroot DIR            QEMU -L prefix (default /usr/<triplet>)\n"
		"  --qemu PATH              QEMU binary\n"
		"  --keep-log FILE          keep QEMU's exec log\n"
		"  --aux-log FILE           --out perf: also write the recorded AUX stream a ring\n"
		"                           consumer would have seen ('cstrace replay' input):\n"
		"                           the perf.data goes through record's consumer, which\n"
		"                           must write it byte for byte as synth did\n"
		"  --from-log FILE          encode an existing QEMU log instead of running QEMU\n"
		"  --truth FILE             write the executed addresses (hex, one a line)\n"
		"  --plugin[=SO]            ground truth from synth's TCG plugin (aarch64 only,\n"
		"                           about 30x faster than the exec log)\n"
		"  -o, --output OUT         where to write (required)\n"
		"  -h, --help               this text\n"
		"\n"
		"Sizes take K, M or G suffixes.\n");
}

static volatile sig_atomic_t stop_requested;

/* --aux-log: the perf.data synth wrote, run through record's consumer as rounds out of
 * the kernel's rings; that consumer writes the stream, and a perf.data that must be
 * synth's byte for byte (else it is a bug in one of them, and said so). */
static int synth_aux_log(const char *out, const char *aux_log, struct cli_verb_log *vl)
{
	char tmp[4096];
	/* both appear whole, or not at all (a full disk) */
	struct cst_replay_opts ro = {.sz = sizeof(ro), .log = &vl->log, .output = tmp,
				     .aux_log = aux_log, .inputs = cli_inputs(), .whole = true};
	struct cst_replay_result res;
	uint64_t at;
	int rc;

	snprintf(tmp, sizeof(tmp), "%s.consumer", out);
	rc = cst_recapture_run(out, &ro, &res);
	if (rc < 0) {
		if (!vl->told) /* the failure was said, naming the file */
			cli_error("synth: --aux-log: %s", cst_strerror(rc));
		unlink(tmp);
		return 1;
	}
	at = cli_first_difference(out, tmp);
	if (at != UINT64_MAX) {
		cli_error("synth: --aux-log: the consumer's perf.data (%s) differs from synth's at "
			  "byte 0x%llx: a bug",
			  tmp, (unsigned long long)at);
		return 1;
	}
	unlink(tmp);
	fprintf(stderr, "cstrace: synth: %s: the stream of %llu drain(s); replaying it writes %s\n",
		aux_log, (unsigned long long)res.drains, out);
	return 0;
}

static void on_stop_signal(int sig)
{
	stop_requested = sig;
}

/* "4M", "64K", "1.5G": a size as --buffer-size takes it. */
static void size_words(uint64_t v, char *buf, size_t size)
{
	if (v >= (1ull << 30) && !(v & ((1ull << 30) - 1)))
		snprintf(buf, size, "%lluG", (unsigned long long)(v >> 30));
	else if (v >= (1ull << 20) && !(v & ((1ull << 20) - 1)))
		snprintf(buf, size, "%lluM", (unsigned long long)(v >> 20));
	else if (v >= 1024 && !(v & 1023))
		snprintf(buf, size, "%lluK", (unsigned long long)(v >> 10));
	else
		snprintf(buf, size, "%llu", (unsigned long long)v);
}

/* The sink dropped trace: say how much of the run is missing from @out, and
 * the --buffer-size that holds all of it (its whole formatted trace, rounded up
 * to a power of two). */
static void warn_lost(const struct cst_synth_opts *o, const struct cst_synth_stats *st,
		      const char *out)
{
	uint64_t all = st->sink_bytes + st->lost_bytes, need = 4096;
	uint64_t have = o->buffer_size ? o->buffer_size
			: o->sink == cst_synth_sink_etf ? 64 * 1024 : 4 * 1024 * 1024;
	char h[32], n[32];

	while (need < all)
		need <<= 1;
	size_words(have, h, sizeof(h));
	size_words(need, n, sizeof(n));
	cli_error("warning: synth: LOST %.0f%% of the trace: the %s %s sink%s dropped %llu of the "
		  "%llu bytes the run made, and %s lacks what they held; --buffer-size %s holds "
		  "the whole run%s",
		  100.0 * (double)st->lost_bytes / (double)all, h,
		  o->sink == cst_synth_sink_etf ? "ETF" : "ETR", o->buffer_size ? "" : " (the default)",
		  (unsigned long long)st->lost_bytes, (unsigned long long)all, out, n,
		  o->output == cst_synth_out_perf && !o->snapshot_mode
			  ? " (--snapshot keeps the end of it instead)" : "");
}

int cmd_synth(int argc, char **argv)
{
	enum { o_arch = 256, o_core, o_out, o_sink, o_bufsz, o_snapshot, o_ts, o_sync,
	       o_sysroot, o_qemu, o_keep, o_from, o_truth, o_plugin, o_auxlog, o_filter,
	       o_trigger, o_trigger_count };
	static const struct option lopts[] = {
		{"arch", required_argument, 0, o_arch},
		{"core", required_argument, 0, o_core},
		{"out", required_argument, 0, o_out},
		{"sink", required_argument, 0, o_sink},
		{"buffer-size", required_argument, 0, o_bufsz},
		{"snapshot", optional_argument, 0, o_snapshot},
		{"timestamps", no_argument, 0, o_ts},
		{"sync-period", required_argument, 0, o_sync},
		{"sysroot", required_argument, 0, o_sysroot},
		{"qemu", required_argument, 0, o_qemu},
		{"keep-log", required_argument, 0, o_keep},
		{"aux-log", required_argument, 0, o_auxlog},
		{"from-log", required_argument, 0, o_from},
		{"truth", required_argument, 0, o_truth},
		{"plugin", optional_argument, 0, o_plugin},
		{"filter", required_argument, 0, o_filter},
		{"trigger", required_argument, 0, o_trigger},
		{"trigger-count", required_argument, 0, o_trigger_count},
		{"output", required_argument, 0, 'o'},
		{"help", no_argument, 0, 'h'},
		{0, 0, 0, 0},
	};
	struct cli_verb_log vl;
	struct cst_synth_opts o = {.sz = sizeof(o), .log = &vl.log};
	const char *out = NULL, *aux_log = NULL;
	bool have_arch = false;
	uint64_t v;
	int c;
	/* "cstrace: synth: <error>": one line, naming the file where there is one */
	cli_verb_log(&vl, "synth");
	optind = 1;
	while ((c = cli_getopt("synth", argc, argv, "+o:h", lopts)) != -1) {
		switch (c) {
		case o_arch:
			if (!strcmp(optarg, "aarch64") || !strcmp(optarg, "arm64"))
				o.arch = cst_synth_aarch64;
			else if (!strcmp(optarg, "arm") || !strcmp(optarg, "aarch32"))
				o.arch = cst_synth_arm;
			else {
				cli_error("synth: --arch must be aarch64 or arm, not '%s'", optarg);
				return 2;
			}
			have_arch = true;
			break;
		case o_core: o.core = optarg; break;
		case o_out:
			if (!strcmp(optarg, "perf"))
				o.output = cst_synth_out_perf;
			else if (!strcmp(optarg, "snapshot"))
				o.output = cst_synth_out_snapshot;
			else {
				cli_error("synth: --out must be perf or snapshot, not '%s'", optarg);
				return 2;
			}
			break;
		case o_sink:
			if (!strcmp(optarg, "etr"))
				o.sink = cst_synth_sink_etr;
			else if (!strcmp(optarg, "etf"))
				o.sink = cst_synth_sink_etf;
			else {
				cli_error("synth: --sink must be etr or etf, not '%s'", optarg);
				return 2;
			}
			break;
		case o_bufsz:
			if (cli_parse_size(optarg, &o.buffer_size) || o.buffer_size < 64) {
				cli_error("synth: bad --buffer-size '%s' (at least 64 bytes)", optarg);
				return 2;
			}
			break;
		case o_snapshot:
			o.snapshot_mode = true;
			if (optarg && (cli_parse_size(optarg, &o.snapshot_size) || o.snapshot_size < 64)) {
				cli_error("synth: bad --snapshot size '%s'", optarg);
				return 2;
			}
			break;
		case o_ts: o.timestamps = true; break;
		case o_sync:
			if (cli_parse_size(optarg, &v) || v < 16 || v > (1u << 20)) {
				cli_error("synth: bad --sync-period '%s'", optarg);
				return 2;
			}
			o.sync_period = (uint32_t)v;
			break;
		case o_sysroot: o.sysroot = optarg; break;
		case o_qemu: o.qemu = optarg; break;
		case o_keep: o.keep_log = optarg; break;
		case o_from: o.from_log = optarg; break;
		case o_truth: o.truth = optarg; break;
		case o_plugin: o.plugin = optarg ? optarg : ""; break;
		case 'o': out = optarg; break;
		case o_auxlog: aux_log = optarg; break;
		case o_filter: o.filter = optarg; break;
		case o_trigger: o.trigger = optarg; break;
		case o_trigger_count:
			if (cst_parse_u64(optarg, &o.trigger_count) || !o.trigger_count) {
				cli_error("synth: --trigger-count '%s': expected a number from 1", optarg);
				return 2;
			}
			break;
		case 'h': synth_usage(stdout); return 0;
		default: return 2; /* cli_getopt said what was wrong, in one line */
		}
	}
	if (!have_arch || !out || optind >= argc) {
		cli_error("synth: needs --arch, -o OUT and a program after --");
		synth_usage(stderr);
		return 2;
	}
	if (aux_log && o.output != cst_synth_out_perf) {
		cli_error("synth: --aux-log records what a perf.data capture saw: it needs --out perf");
		return 2;
	}
	if (o.trigger_count && !o.trigger) {
		cli_error("synth: --trigger-count counts the entries of --trigger SYM: give one");
		return 2;
	}
	if (o.trigger && !o.snapshot_mode) {
		cli_error("synth: --trigger takes perf's AUX snapshot: it needs --out perf --snapshot");
		return 2;
	}
	if (o.snapshot_mode && o.output != cst_synth_out_perf) {
		cli_error("synth: --snapshot is perf's snapshot mode: it needs --out perf");
		return 2;
	}
	/* what synth reads may not be what it writes, however either is named */
	cli_input(argv[optind]);
	cli_input(o.from_log);
	cli_input(o.plugin);
	cli_input(o.qemu);
	{
		const char *outs[] = {out, o.truth, o.from_log ? NULL : o.keep_log, aux_log};

		for (size_t i = 0; i < sizeof(outs) / sizeof(outs[0]); i++)
			if (cli_output_refused(outs[i]))
				return 1;
	}
	/* --aux-log reads the perf.data synth wrote */
	if (aux_log && (!strcmp(aux_log, out) || cli_same_file(aux_log, out))) {
		cli_error("%s: is -o %s, which --aux-log reads; refusing to overwrite it", aux_log, out);
		return 1;
	}
	o.inputs = cli_inputs();
	if (cst_synth_core_check(o.arch, o.core)) {
		cli_error("synth: core '%s' does not fit --arch %s", o.core,
			  o.arch == cst_synth_arm ? "arm" : "aarch64");
		return 2;
	}
	struct cst_synth_stats st;
	/* Ctrl-C: synth stops QEMU and removes its temporaries (no SA_RESTART, so
	 * that a wait for QEMU returns to look at the flag) */
	struct sigaction sa = {.sa_handler = on_stop_signal}, old_int, old_term;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);
	o.stop = &stop_requested;
	int rc = cst_synth_run(out, argv + optind, &o, &st);
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	if (rc == -cste_interrupted) {
		cli_error("synth: interrupted: QEMU stopped, temporary files removed, %s not written",
			  out);
		return 128 + (stop_requested ? (int)stop_requested : SIGINT);
	}
	if (rc < 0) {
		if (!vl.told)
			cli_error("synth: %s", cst_strerror(rc));
		return 1;
	}
	fprintf(stderr,
		"cstrace: synth: %llu instructions, %llu atoms, %llu exceptions, %llu trace bytes, "
		"%llu in the sink, %llu lost, %llu AUX records\n",
		(unsigned long long)st.instructions, (unsigned long long)st.branches,
		(unsigned long long)st.exceptions, (unsigned long long)st.trace_bytes,
		(unsigned long long)st.sink_bytes, (unsigned long long)st.lost_bytes,
		(unsigned long long)st.aux_records);
	if (st.triggered)
		fprintf(stderr, "cstrace: synth: the trigger fired after %llu instructions: the "
				"snapshot was taken there\n", (unsigned long long)st.trigger_at);
	if (st.lost_bytes)
		warn_lost(&o, &st, out);
	return aux_log ? synth_aux_log(out, aux_log, &vl) : 0;
}
