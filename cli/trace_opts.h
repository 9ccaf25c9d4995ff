/* Options every trace-reading verb shares (decode, dump, script, report): which
 * input, which buffer and IDs, raw-dump sources and images, perf.data lookups. */
#ifndef CSTRACE_CLI_TRACE_OPTS_H
#define CSTRACE_CLI_TRACE_OPTS_H

#include <getopt.h>
#include <stdio.h>

#include "cstrace/decode.h"

#define TRACE_OPTS_MAX_SOURCES 64
#define TRACE_OPTS_MAX_IMAGES 256
#define TRACE_OPTS_MAX_ELFS 64

struct trace_opts {
	struct cst_session_opts session;
	struct cst_source_cfg sources[TRACE_OPTS_MAX_SOURCES];
	struct cst_source_cfg board_sources[TRACE_OPTS_MAX_SOURCES];
	struct cst_mem_image images[TRACE_OPTS_MAX_IMAGES];
	char *image_paths[TRACE_OPTS_MAX_IMAGES];
	const char *board;
	const char *symdir_path;   /* --symdir, indexed by trace_opts_finish */
	struct cst_symdir *symdir;
	const char *elfs[TRACE_OPTS_MAX_ELFS]; /* --elf, as session.raw_elfs */
};

/* --elf, on every verb that reads code (decode, script, report): a binary used as
 * given, whatever the input (trace_opts_add_elf). */
#define TRACE_OPTS_ELF_LONG {"elf", required_argument, NULL, 0x2000}
#define TRACE_OPTS_ELF_HELP                                                                 \
	"  --elf FILE[@ADDR]    a binary, used as given (never under --symfs): without\n"   \
	"                       @ADDR it is the recorded binary with its build-id, else\n"  \
	"                       its base name (perf.data: its code and symbols), and its\n" \
	"                       symbols at its link addresses; with @ADDR its first\n"      \
	"                       segment at ADDR; a raw dump's code too (no --image\n"      \
	"                       needed); repeatable\n"

/* Long options to append to a verb's table; values start at 0x1000. */
#define TRACE_OPTS_LONG                                                     \
	{"id", required_argument, NULL, 0x1000},                            \
	{"buffer", required_argument, NULL, 0x1001},                        \
	{"etmv4", required_argument, NULL, 0x1002},                         \
	{"etmv3", required_argument, NULL, 0x1003},                         \
	{"ptm", required_argument, NULL, 0x1004},                           \
	{"ete", required_argument, NULL, 0x1005},                           \
	{"stm", required_argument, NULL, 0x1006},                           \
	{"image", required_argument, NULL, 0x1007},                         \
	{"raw-format", required_argument, NULL, 0x1008},                    \
	{"symfs", required_argument, NULL, 0x1009},                         \
	{"kernel", required_argument, NULL, 0x100a},                        \
	{"board", required_argument, NULL, 0x100b},                         \
	{"buildid-dir", required_argument, NULL, 0x100c},                   \
	{"order", required_argument, NULL, 0x100d},                         \
	{"confine", no_argument, NULL, 0x100e},                             \
	{"start-offset", required_argument, NULL, 0x100f},                  \
	{"symdir", required_argument, NULL, 0x1020},                        \
	{"threads", required_argument, NULL, 0x1010},                       \
	{"chunk-size", required_argument, NULL, 0x1011},                    \
	{"decoder", required_argument, NULL, 0x1012}

#define TRACE_OPTS_HELP                                                                   \
	"  --id LIST            decode only these trace IDs (e.g. 0x10,0x12)\n"            \
	"  --buffer NAME|all    snapshot buffer to decode (default: the first listed)\n"  \
	"  --etmv4 K=V,...      raw dump: an ETMv4 source (trcidr0=,trcidr1=,trcidr2=,\n" \
	"                       trcconfigr=,traceid=,core=Cortex-A53,cpu=); repeatable\n" \
	"  --etmv3 K=V,...      raw dump: an ETMv3 source (etmidr=,etmcr=,etmccer=,traceid=)\n" \
	"  --ptm K=V,...        raw dump: a PTM source (as --etmv3)\n"                     \
	"  --ete K=V,...        raw dump: an ETE source (as --etmv4, plus trcdevarch=)\n"  \
	"  --stm K=V,...        raw dump: an STM source (stmtcsr= or traceid=)\n"          \
	"  --image FILE@ADDR[:OFFSET[:LENGTH]]  memory image for the code walk; repeatable\n" \
	"  --raw-format F       raw dump layout: frames (default), raw, tpiu, dstream\n"   \
	"  --board NAME         raw dump: register defaults of a board profile\n"         \
	"  --symfs DIR          perf.data: find recorded binaries under DIR\n"             \
	"  --kernel FILE        perf.data: vmlinux or kcore for kernel addresses\n"        \
	"  --buildid-dir DIR    perf.data: build-id cache (default ~/.debug)\n"             \
	"  --symdir DIR         perf.data: binaries and debug files in DIR (searched\n"  \
	"                       recursively), found by build-id, or by name when the\n"  \
	"                       recording has no build-id (as simpleperf's --symdir)\n"  \
	"  --order time|file    perf.data: merge CPUs by trace time as perf does (default\n" \
	"                       when recorded with timestamps), or each AUX record whole\n" \
	"                       in file order (can decode on past a decoder crash)\n" \
	"  --confine            snapshot: refuse files named outside its directory\n"  \
	"                       (absolute, or ../): for decoding untrusted uploads\n"  \
	"  --start-offset N     start N bytes into the trace (K/M/G suffixes): a raw dump\n" \
	"                       or snapshot buffer from there (a whole frame), perf.data\n" \
	"                       from that file offset; offsets still count from the start\n" \
	"  --threads N          decode on N threads (default: the online CPUs): a snapshot\n" \
	"                       or raw buffer of one trace source is cut into chunks that\n" \
	"                       decode side by side; the output is the same for any N\n" \
	"  --chunk-size N       bytes per chunk for --threads (default 64K; K/M suffixes)\n" \
	"  --decoder D          which decodes ETMv4 and ETMv3 packets: auto (default:\n" \
	"                       cstrace's own on threads where it covers the trace, the\n" \
	"                       same elements much faster; else OpenCSD's), opencsd,\n" \
	"                       cstrace (everywhere; what it does not cover is an error),\n" \
	"                       or recover (everywhere; a bad packet is a gap: what a\n" \
	"                       run restarted after OpenCSD's decoder crashed uses)\n"

void trace_opts_init(struct trace_opts *t);
/** --elf @arg (FILE[@ADDR]): for the session (its raw_elfs) and the symbolizer.
 *  Returns 0, or -1 with the reason said. */
int trace_opts_add_elf(struct trace_opts *t, const char *arg);
/** Handle one getopt value in the TRACE_OPTS range. Returns 1 if handled, 0 if not
 *  a trace option, -1 on a bad value (message printed). */
int trace_opts_parse(struct trace_opts *t, int opt, const char *arg);
/** Finish: resolve --board. Returns 0 or -1. */
int trace_opts_finish(struct trace_opts *t);
void trace_opts_fini(struct trace_opts *t);
/** Open @path for a verb that streams its output to @out as it decodes: the crash
 *  report is told the input, and whether a decoder crash can be skipped (perf.data,
 *  or a snapshot or raw dump with one buffer to decode). Returns 0 or an error. */
int trace_opts_open(struct trace_opts *t, const char *path, FILE *out,
		    struct cst_session **session);
/** Tell the crash report how far decoding got (from each element delivered).
 *  Returns true for an element a child restarted after a crash on threads printed
 *  already (cli_skip_elements): leave it out. */
bool trace_opts_note_elem(const struct cst_elem *e);
/** The same in two steps for @nelems elements printed at once
 *  (cst_session_run_lines): whether to leave them out, and, once printed, the
 *  offset of the last. */
bool trace_opts_skip(uint64_t nelems);
/** A child restarted after a crash on threads (cli_skip_elements) decodes on one
 *  thread, and trace_opts_skip counts off what it leaves out. */
void trace_opts_restarted(struct trace_opts *t);
void trace_opts_note_offset(uint64_t offset);

#endif
