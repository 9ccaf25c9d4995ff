/* cstrace synth stage: runs an Arm Linux program under QEMU user mode and encodes what
 * it executed as real-format ETM trace (ETMv4 for AArch64, ETMv3.5 for AArch32). */
#ifndef CSTRACE_SYNTH_H
#define CSTRACE_SYNTH_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cstrace/common.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Guest architecture: picks the QEMU binary, the sysroot and the trace protocol. */
enum cst_synth_arch {
	cst_synth_aarch64 = 0, /* A64 code, ETMv4 trace */
	cst_synth_arm,         /* A32/T32 code, ETMv3.5 trace */
};

/** What cst_synth_run writes. */
enum cst_synth_output {
	cst_synth_out_snapshot = 0, /* an "ARM Trace and Debug Snapshot" directory */
	cst_synth_out_perf,         /* a perf.data file as `perf record -e cs_etm//` writes */
};

/** The trace sink model. */
enum cst_synth_sink {
	cst_synth_sink_etr = 0, /* a system-memory buffer: holds buffer_size bytes */
	cst_synth_sink_etf,     /* a small on-chip FIFO: wraps, keeps the newest bytes */
};

/** One executed instruction as QEMU saw it (the ground truth). */
struct cst_synth_insn {
	uint64_t pc;
	bool thumb; /* AArch32 only: T32 state */
};

/** Called once per executed instruction, in order. Return 0 to go on,
 *  non-zero to stop (cst_synth_run then returns that value). */
typedef int (*cst_synth_insn_fn)(void *ctx, const struct cst_synth_insn *insn);

struct cst_synth_opts {
	size_t sz; /* sizeof(struct cst_synth_opts) */
	const struct cst_log *log;
	enum cst_synth_arch arch;
	const char *core;              /* "cortex-a53" (default aarch64), "cortex-a57", "cortex-a7" */
	enum cst_synth_output output;
	enum cst_synth_sink sink;
	uint64_t buffer_size;          /* sink size in bytes; 0 = 4 MiB (ETR) / 64 KiB (ETF) */
	bool snapshot_mode;            /* perf snapshot (overwrite) AUX ring */
	bool timestamps;               /* emit timestamps derived from instruction counts */
	uint64_t snapshot_size;        /* bytes kept in snapshot mode; 0 = buffer_size */
	const char *qemu;              /* QEMU binary; NULL = qemu-aarch64 / qemu-arm */
	const char *sysroot;           /* -L prefix; NULL = /usr/<triplet> */
	const char *keep_log;          /* keep QEMU's log at this path (NULL: temporary) */
	const char *from_log;          /* reuse an existing QEMU log instead of running */
	const char *truth;             /* write the executed addresses here, one per line */
	uint32_t sync_period;          /* bytes between periodic syncs; 0 = 4096 */
	cst_synth_insn_fn insn_fn;     /* optional: sees every executed instruction */
	void *insn_ctx;
	/* Ground truth from synth's TCG plugin instead of the exec log (AArch64 only:
	 * the plugin API does not tell the Thumb state). "" = the plugin built with
	 * cstrace; NULL = use the exec log. */
	const char *plugin;
	/* When *stop turns non-zero (a signal handler sets it), QEMU is killed, the
	 * temporary files are removed and the run returns -cste_interrupted. */
	const volatile sig_atomic_t *stop;
	/* Files the command reads (the program, --from-log, ...): no output may be
	 * one of them (refused before QEMU runs, -cste_invalid). */
	const struct cst_file_set *inputs;
	/* Address filters in perf's syntax (cst_addr_filter_parse), every entry of a
	 * file (@FILE): the trace unit traces only ViewInst, as an ETM so programmed
	 * does (Trace On / I-sync and an address at each re-entry). NULL = none. */
	const char *filter;
	/* Snapshot mode: the snapshot is taken when the function "SYM[@FILE]" (FILE:
	 * the program) is about to run for the @trigger_count-th time, and the trace
	 * ends there (exec log only). NULL = none. */
	const char *trigger;
	uint64_t trigger_count;        /* 0 = 1 */
};

/** Figures of a synth run. */
struct cst_synth_stats {
	uint64_t instructions; /* executed instructions QEMU logged */
	uint64_t branches;     /* waypoints encoded as atoms */
	uint64_t exceptions;   /* SVCs and other discontinuities */
	uint64_t trace_bytes;  /* protocol bytes the trace unit produced */
	uint64_t sink_bytes;   /* formatted bytes written (after sink loss) */
	uint64_t lost_bytes;   /* formatted bytes the sink dropped */
	uint64_t aux_records;  /* perf output: AUX records written */
	bool triggered;        /* --trigger fired: the snapshot was taken there */
	uint64_t trigger_at;   /* ...after this many instructions */
};

/** Run @argv[0] with arguments @argv (NULL-terminated) under QEMU and write the
 *  trace to @out (a directory for snapshots, a file for perf.data). Every output
 *  (@out, the truth files, the kept log, code pages beside a perf.data) appears
 *  whole when the run succeeds, and none when it fails; a write that fails (a
 *  full disk, also under QEMU's own log) is logged naming the file and why.
 *  Returns 0, a positive stop value from insn_fn, or a negative error:
 *  -cste_invalid (bad options, an output that is an input), -cste_not_found
 *  (the program does not exist or cannot be run), -cste_io (QEMU or a file
 *  failed), -cste_format
 *  (a QEMU log it cannot read), -cste_unsupported (perf output without the
 *  perfdata writer), -cste_nomem. */
int cst_synth_run(const char *out, char *const argv[], const struct cst_synth_opts *opts,
		  struct cst_synth_stats *stats);

/** Path of the TCG plugin built with this cstrace ("" if none was built). */
const char *cst_synth_default_plugin(void);

/** Parse a core name ("cortex-a53", "Cortex-A7", case-insensitive) for @arch.
 *  Returns 0 or -cste_not_found. */
int cst_synth_core_check(enum cst_synth_arch arch, const char *core);

#ifdef __cplusplus
}
#endif

#endif /* CSTRACE_SYNTH_H */
