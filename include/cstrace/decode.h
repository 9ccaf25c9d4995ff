/* cstrace decode stage: describes a captured trace (buffers, trace sources, memory
 * images) and decodes it through OpenCSD into a stream of generic elements. */
#ifndef CSTRACE_DECODE_H
#define CSTRACE_DECODE_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cstrace/common.h"
#include "cstrace/perfdata.h"
#include "cstrace/source.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------
 * Trace description: what was captured and how it was configured.
 * ------------------------------------------------------------------------ */

/** A described trace. Owns copies of everything added to it. */
struct cst_trace;

/** An empty trace description. Returns 0 and sets *@out, or -cste_invalid (@out
 *  NULL) or -cste_nomem. */
int cst_trace_alloc(struct cst_trace **out);
void cst_trace_free(struct cst_trace *trace);

/** Read an "ARM Trace and Debug Snapshot" directory (snapshot.ini, trace.ini, device
 *  files, buffers, memory dumps). Keys are matched in any case; paths may be
 *  relative to the directory or absolute; a memory dump listed once per core is
 *  mapped once; a missing dump is reported through @log and skipped.
 *  Returns 0 or a negative error; the error is also logged with file and line.
 *  Errors: -cste_invalid, -cste_not_found, -cste_format, -cste_io, -cste_nomem. */
int cst_trace_load_snapshot(struct cst_trace *trace, const char *dir, const struct cst_log *log);

/** Add a buffer. Returns its index (>= 0) or a negative error. */
int cst_trace_add_buffer(struct cst_trace *trace, const struct cst_buffer_info *info);

/** Attach a trace source to buffer @buffer. Returns the source index or an error. */
int cst_trace_add_source(struct cst_trace *trace, int buffer, const struct cst_source_cfg *cfg);

/** Add a memory image for the code walk. Identical images are kept once;
 *  returns 0 or a negative error. */
int cst_trace_add_image(struct cst_trace *trace, const struct cst_mem_image *img);

/** Pick which buffer decodes by default (a snapshot's first listed buffer). */
int cst_trace_default_buffer(const struct cst_trace *trace);

int cst_trace_nbuffers(const struct cst_trace *trace);
const struct cst_buffer_info *cst_trace_buffer(const struct cst_trace *trace, int buffer);
/** Find a buffer by name (case-insensitive). Returns its index or -cste_not_found. */
int cst_trace_find_buffer(const struct cst_trace *trace, const char *name);

int cst_trace_nsources(const struct cst_trace *trace);
const struct cst_source_cfg *cst_trace_source(const struct cst_trace *trace, int source);
/** The buffer a source belongs to, or a negative error. */
int cst_trace_source_buffer(const struct cst_trace *trace, int source);

int cst_trace_nimages(const struct cst_trace *trace);
const struct cst_mem_image *cst_trace_image(const struct cst_trace *trace, int image);

/* ------------------------------------------------------------------------
 * Decoded elements.
 * ------------------------------------------------------------------------ */

enum cst_elem_type {
	cst_elem_unknown = 0,
	cst_elem_no_sync,       /* decoder lost or has not found sync: a gap */
	cst_elem_trace_on,      /* trace (re)starts: after a gap, filter or overflow */
	cst_elem_eot,           /* end of trace data */
	cst_elem_pe_context,    /* PE context changed (EL, security, ISA, IDs) */
	cst_elem_instr_range,   /* a range of executed instructions */
	cst_elem_i_range_nopath,/* instructions executed, path unknown (ETE) */
	cst_elem_addr_nacc,     /* code memory not accessible: a gap */
	cst_elem_addr_unknown,  /* address not known after a discontinuity: a gap */
	cst_elem_exception,
	cst_elem_exception_ret,
	cst_elem_timestamp,
	cst_elem_cycle_count,
	cst_elem_event,
	cst_elem_swtrace,       /* STM / ITM software trace */
	cst_elem_sync_marker,
	cst_elem_memtrans,
	cst_elem_instrumentation,
	cst_elem_custom,
	cst_elem_max
};

enum cst_isa {
	cst_isa_unknown = 0,
	cst_isa_a32,
	cst_isa_t32,
	cst_isa_a64,
	cst_isa_tee,
	cst_isa_jazelle,
	cst_isa_custom,
};

/** What the last instruction of a range was. */
enum cst_insn_class {
	cst_insn_other = 0,
	cst_insn_branch,          /* direct branch */
	cst_insn_branch_indirect, /* indirect branch (includes returns) */
	cst_insn_isb,
	cst_insn_dsb_dmb,
	cst_insn_wfi_wfe,
	cst_insn_tstart,
};

enum cst_insn_subclass {
	cst_insn_sub_none = 0,
	cst_insn_sub_link,        /* branch with link: a call */
	cst_insn_sub_ret,         /* return (A64 RET, or T32/A32 recognised returns) */
	cst_insn_sub_eret,
	cst_insn_sub_other,
};

enum cst_security {
	cst_sec_secure = 0,
	cst_sec_nonsecure,
	cst_sec_root,
	cst_sec_realm,
};

/** The processing-element context that applies to following ranges. */
struct cst_pe_context {
	uint8_t el;          /* exception level 0-3 */
	bool el_valid;
	enum cst_security security;
	bool bits64;         /* AArch64 */
	bool ctxid_valid;
	uint32_t context_id; /* CONTEXTIDR: the pid on Linux with PID_IN_CONTEXTIDR */
	bool vmid_valid;
	uint32_t vmid;
};

/** Why trace is missing before this element (for no_sync, trace_on, nacc). */
enum cst_gap_reason {
	cst_gap_none = 0,
	cst_gap_init,       /* decoder start: no sync yet */
	cst_gap_resync,     /* sync lost in the stream (bad or corrupt packets) */
	cst_gap_overflow,   /* the trace unit overflowed: trace lost */
	cst_gap_filter,     /* trace filtered off and on again */
	cst_gap_discard,    /* trace discarded (ETMv4 discard packet) */
	cst_gap_nacc,       /* memory image missing: cannot follow the code */
	cst_gap_reset,      /* decoder reset between fragments */
	cst_gap_debug,      /* debug state / other hardware reason */
};

/** One decoded element. Valid for the duration of the callback only. */
struct cst_elem {
	enum cst_elem_type type;
	uint64_t offset;  /* byte offset in the buffer of the packet that produced it */
	uint8_t trace_id;
	int source;       /* index of the source in the trace, or -1 */

	/* cst_elem_instr_range (and addr_nacc / addr_unknown use start) */
	uint64_t start;   /* first instruction */
	uint64_t end;     /* address after the last instruction */
	uint32_t num_insns;
	enum cst_isa isa;
	enum cst_insn_class last_class;
	enum cst_insn_subclass last_subclass;
	uint8_t last_size;      /* bytes of the last instruction */
	bool last_executed;     /* condition of the last instruction passed */
	/* a run of ranges joined as one (cst_session_opts.merge_ranges): how many
	 * more of the decoder's ranges it stands for; 0 for a range of its own */
	uint32_t joined;

	/* cst_elem_pe_context and, for every element, the context in force */
	struct cst_pe_context ctx;

	/* cst_elem_exception / exception_ret */
	uint32_t exception_number;
	uint64_t exception_ret_addr;
	bool exception_ret_addr_valid;

	/* time: timestamp elements, and any element that carries a cycle count */
	uint64_t timestamp;
	bool has_cycle_count;
	uint32_t cycle_count;

	/* gaps */
	enum cst_gap_reason gap;

	/* cst_elem_swtrace */
	bool sw_id_valid;         /* master and channel were set by the stream */
	uint8_t sw_master;
	uint16_t sw_channel;
	uint32_t sw_payload_size; /* bytes */
	uint64_t sw_payload;

	/* Thread attribution (perf.data input: from ITRACE_START, SWITCH sideband and
	 * context IDs; -1 where unknown, as for snapshots). */
	int32_t pid, tid, cpu;
	/* index of the perf.data AUX fragment (or 0 for a snapshot buffer) */
	uint32_t fragment;
	/* perf.data in time order: Linux perf 6.1 would not report this element (its
	 * decoder had stopped before it, or threw it away); cstrace still does, where
	 * perf's order would put it. Not worked out in file order. */
	bool perf_unseen;
	/* made by cstrace's own decoder, not OpenCSD's (cst_decoder_stats.followed
	 * counts these) */
	bool followed;

	/* the OpenCSD element behind this one (for cst_elem_format_ocsd); NULL in
	 * the elements cst_session_run delivers from other threads */
	const void *ocsd;
};

/** The range @e ends in a branch instruction (taken or not): not in an ISB or
 *  another waypoint that only ends a range. */
static inline bool cst_elem_ends_in_branch(const struct cst_elem *e)
{
	return e->type == cst_elem_instr_range &&
	       (e->last_class == cst_insn_branch || e->last_class == cst_insn_branch_indirect);
}

/** The range @e ends in a taken branch: control went elsewhere than the next
 *  instruction. Every view that asks "taken branch" asks this. */
static inline bool cst_elem_taken_branch(const struct cst_elem *e)
{
	return cst_elem_ends_in_branch(e) && e->last_executed;
}

/** @a and @b agree in every field that is not about their range or time: trace
 *  ID, source, context, attribution (pid, tid, CPU, fragment), exception, gap and
 *  software-trace fields. (Range fields: offset, start, end, instruction count,
 *  ISA, the last instruction's class, size and condition, timestamp, cycle count,
 *  perf_unseen.) */
bool cst_elem_same_context(const struct cst_elem *a, const struct cst_elem *b);

/** A range that starts where @a ends could continue it (cst_elem_continues):
 *  @a is a range with no cycle count whose last instruction is neither a branch
 *  nor another waypoint and passed its condition. */
bool cst_elem_can_continue(const struct cst_elem *a);

/** Range @b goes on where range @a stopped, as if one range: @b starts at @a's
 *  end, in the same ISA and context, at the same time with no cycle count on
 *  either, and @a's last instruction is neither a branch nor another waypoint and
 *  passed its condition. OpenCSD's ETMv3 decoder gives one range per
 *  instruction; the symbolizing views take such runs as one
 *  (cst_session_opts.merge_ranges). */
bool cst_elem_continues(const struct cst_elem *a, const struct cst_elem *b);

/** The source of @trace that emitted @e: its source index where it has one, else
 *  the first source of its trace ID; NULL when none. */
const struct cst_source_cfg *cst_trace_elem_source(const struct cst_trace *trace,
						   const struct cst_elem *e);

/** Name of an element type ("instr_range", ...). */
const char *cst_elem_type_name(enum cst_elem_type type);
const char *cst_isa_name(enum cst_isa isa);
const char *cst_gap_reason_name(enum cst_gap_reason gap);
const char *cst_insn_class_name(enum cst_insn_class c);

/** Print @e exactly as OpenCSD's ocsd_gen_elem_str() does (no Idx/ID prefix).
 *  Returns the length written or a negative error. */
int cst_elem_format_ocsd(const struct cst_elem *e, char *buf, size_t size);

/** Print @e as one human-readable line (no newline). Returns length or error. */
int cst_elem_format_text(const struct cst_elem *e, char *buf, size_t size);

/** Print @e as one JSON object (no newline). Returns length or error. */
int cst_elem_format_json(const struct cst_elem *e, char *buf, size_t size);

/* ------------------------------------------------------------------------
 * Packets (for `cstrace dump`).
 * ------------------------------------------------------------------------ */

struct cst_packet {
	uint64_t offset;     /* byte offset of the packet's first byte in the buffer */
	uint8_t trace_id;
	enum cst_protocol protocol;
	const uint8_t *raw;  /* the packet's bytes */
	uint32_t raw_size;
	const char *text;    /* OpenCSD's description of the packet */
};

/* ------------------------------------------------------------------------
 * The decoder.
 * ------------------------------------------------------------------------ */

/** Element callback. Return 0 to go on, a positive value to stop decoding
 *  cleanly (cst_decoder_run then returns that value), negative to abort. */
typedef int (*cst_elem_fn)(void *ctx, const struct cst_elem *elem);
typedef int (*cst_packet_fn)(void *ctx, const struct cst_packet *pkt);

/** Optional memory reader used when code bytes are not in the trace's images
 *  (perf.data mappings). Returns bytes copied into @buf (0: not accessible). */
typedef uint32_t (*cst_mem_read_fn)(void *ctx, uint8_t trace_id, uint64_t address,
				    enum cst_mem_space space, uint32_t len, uint8_t *buf);

/** A set of trace IDs (bit N of @ids[N/64] = ID N, as id_filter) written as
 *  "0x10,0x12" into @out (@size bytes; "" for none). Returns @out. */
const char *cst_id_set_format(const uint64_t ids[2], char *out, size_t size);

struct cst_decoder_opts {
	size_t sz;                 /* sizeof(struct cst_decoder_opts) */
	const struct cst_log *log;
	bool packets_only;         /* run packet processors only (for dump) */
	/* Trace IDs to decode: bit N of id_filter[N/64] set = decode ID N.
	 * All zero = every ID. */
	uint64_t id_filter[2];
	size_t window;             /* read window in bytes; 0 = 64 KiB */
	cst_mem_read_fn mem_read;  /* optional; replaces the trace's images */
	void *mem_ctx;
	bool fsync_reset;          /* perf ETR data: reset the deformatter on 4 frame syncs */
	/* Optional: called after each read window of cst_decoder_run with the bytes
	 * done and the buffer's size (for progress displays). */
	void (*progress)(void *ctx, uint64_t done, uint64_t total);
	void *progress_ctx;
	/* cst_decoder_run starts this many bytes into the buffer (rounded up to a whole
	 * frame or DSTREAM block); offsets still count from the buffer's start. */
	uint64_t start_offset;
};

/** Addresses from @lo to @hi, both included. */
struct cst_addr_span {
	uint64_t lo, hi;
};

/** How many blocks of addresses cst_decoder_stats keeps where gaps were. */
#define CST_NACC_SPANS 8

struct cst_decoder_stats {
	uint64_t bytes;        /* trace bytes fed */
	uint64_t elements;
	uint64_t ranges;
	uint64_t instructions;
	uint64_t gaps;         /* no_sync after start, overflow, nacc, unknown address */
	uint64_t nacc;
	uint64_t packets;
	uint64_t synced;       /* elements that show the decoder had sync (any but no-sync
				  and end of trace): 0 means nothing in the input was trace */
	uint64_t aux_missing;  /* perf.data: AUX records whose trace the file does not
				  hold (a file cut short, or its AUXTRACE data lost) */
	uint64_t frame_ids[2]; /* formatted data: the trace IDs its frames named while
				  the decoder had no sync (bit n: ID n), to tell a
				  source given the wrong ID */
	/* decoding on threads (cst_session_opts threads): the chunks buffers were cut
	 * into, and how many of them the output took from their own decoder (the
	 * others were decoded by the decoder of the chunk before) */
	uint64_t chunks, chunks_apart;
	/* elements made by cstrace's ETMv4 and ETMv3 decoders
	 * (cst_session_opts.decoder) rather than OpenCSD's decoders, and the
	 * chunks whose decoder used them */
	uint64_t followed, chunks_followed;
	/* perf.data in time order on threads: the queues (CPUs) decoded ahead of the
	 * merge, and whether the run was taken again on one thread (a decoder had
	 * something to say) */
	uint64_t queues_ahead, ahead_fallbacks;
	/* perf.data: AUXTRACE bytes no AUX record covers, decoded all the same (perf
	 * skips them), and bytes AUX records name again, decoded once (perf decodes
	 * them again) */
	uint64_t aux_uncovered, aux_duplicate;
	/* where the inaccessible-memory gaps (nacc) were: the lowest CST_NACC_SPANS
	 * 64 KiB blocks of addresses that had one, by address, each as the lowest
	 * and highest gap address in it (nacc_spans of them); nacc_more when other
	 * blocks had gaps too. The same whatever the order of decoding (threads). */
	struct cst_addr_span nacc_at[CST_NACC_SPANS];
	uint32_t nacc_spans, nacc_more;
	/* software trace elements (STM): what a trace without instructions can hold */
	uint64_t swtrace;
};

struct cst_decoder;

/** Build a decoder for buffer @buffer of @trace (all sources of that buffer),
 *  decoding with OpenCSD's decoders. @trace must outlive the decoder. Returns 0
 *  and sets *@out, or a negative error with the reason logged: -cste_invalid,
 *  -cste_nomem, -cste_decoder (OpenCSD refused), -cste_no_trace (no source of
 *  the buffer can be decoded). */
int cst_decoder_alloc(struct cst_decoder **out, const struct cst_trace *trace, int buffer,
		      const struct cst_decoder_opts *opts);
void cst_decoder_free(struct cst_decoder *dec);

int cst_decoder_set_elem_cb(struct cst_decoder *dec, cst_elem_fn fn, void *ctx);
int cst_decoder_set_packet_cb(struct cst_decoder *dec, cst_packet_fn fn, void *ctx);

/** Decode the whole buffer file, streaming it through a fixed window, and end
 *  the trace. Returns 0, a positive stop value from a callback, or a negative
 *  error (-cste_io, -cste_format for a buffer of impossible size, -cste_decoder). */
int cst_decoder_run(struct cst_decoder *dec);

/** Push mode (perf.data fragments): feed @len bytes whose first byte sits at
 *  @offset in the caller's numbering. Offsets must increase between resets. */
int cst_decoder_feed(struct cst_decoder *dec, uint64_t offset, const uint8_t *data, size_t len);
/** End of one fragment: flush and signal end of trace. */
int cst_decoder_end(struct cst_decoder *dec);
/** Forget all state before an unrelated fragment. */
int cst_decoder_reset(struct cst_decoder *dec);

int cst_decoder_get_stats(const struct cst_decoder *dec, struct cst_decoder_stats *stats);

/* ------------------------------------------------------------------------
 * Sessions: any trace input (snapshot directory, perf.data, raw sink dump),
 * decoded as one element stream plus sideband, in trace order.
 * ------------------------------------------------------------------------ */

enum cst_sideband_type {
	cst_sb_mmap = 0,   /* an executable mapping appeared (MMAP/MMAP2, snapshot image) */
	cst_sb_comm,       /* a thread was named (COMM) */
	cst_sb_fork,
	cst_sb_exit,
	cst_sb_switch_in,  /* a thread was scheduled in on cpu */
	cst_sb_switch_out,
	cst_sb_lost,       /* records or trace were lost: `loss` says what */
};

/** What a cst_sb_lost record says was lost. The trace kinds come before the
 *  trace after the loss: the next element of their CPU is the first after it. */
enum cst_sb_loss {
	cst_sb_loss_records = 0, /* PERF_RECORD_LOST: `lost` records the kernel dropped */
	cst_sb_loss_samples,     /* PERF_RECORD_LOST_SAMPLES: `lost` samples */
	cst_sb_loss_truncated,   /* a TRUNCATED AUX record: the sink overflowed and its
				    oldest trace was lost; the kernel does not say how
				    much (lost_bytes 0) */
	cst_sb_loss_missing,     /* trace an AUX record names that the file does not
				    hold (cut short, or its AUXTRACE data lost):
				    lost_bytes of it */
	cst_sb_loss_overwritten, /* snapshot mode: lost_bytes the AUX ring overwrote
				    before this snapshot was taken */
};

/** Sideband: what the trace alone does not say (mappings, threads, losses). */
struct cst_sideband {
	enum cst_sideband_type type;
	int32_t pid, tid, cpu;
	uint64_t time;        /* perf clock, 0 if unknown */
	int32_t ppid, ptid;   /* fork: the parent process and thread */
	bool exec;            /* comm: the process replaced its program (exec) */
	/* mmap */
	uint64_t addr, len, pgoff;
	const char *filename; /* mmap: file path as recorded; comm: the name */
	const uint8_t *build_id;
	uint32_t build_id_size;
	/* lost */
	uint64_t lost;        /* records or samples; 1 for the AUX record of a trace loss */
	enum cst_sb_loss loss;
	uint64_t lost_bytes;  /* trace bytes lost, where the file says (0: not known) */
};

typedef int (*cst_sideband_fn)(void *ctx, const struct cst_sideband *sb);

/** Input kinds a session can open. */
enum cst_input_kind {
	cst_input_auto = 0, /* detect: directory = snapshot, PERFILE2 magic = perf.data */
	cst_input_snapshot,
	cst_input_perf,
	cst_input_raw,      /* a raw sink dump: needs sources in opts */
};


/* ------------------------------------------------------------------------
 * --symdir: a directory of binaries and debug files found by build-id (and by
 * base name when the recording has no build-id), as simpleperf's --symdir.
 * ------------------------------------------------------------------------ */

struct cst_symdir;

/** What a lookup wants: a file with the code, or the one with the most symbols. */
enum cst_symdir_want { cst_symdir_code, cst_symdir_symbols };

/** Index every regular ELF file below @dir (symlinks not followed; at most 200,000
 *  files, with a warning beyond). Errors: -cste_invalid, -cste_not_found (not a
 *  directory, logged), -cste_nomem. */
int cst_symdir_open(struct cst_symdir **out, const char *dir, const struct cst_log *log);
void cst_symdir_free(struct cst_symdir *d);
/** The indexed file for @recorded (a path; its base name is compared) with build-id
 *  @bid: the one whose build-id matches, or with no build-id recorded, one of the
 *  same base name; among several, the one that best has what @want asks
 *  (cst_symdir_code never returns a file without code). NULL when none fits. */
const char *cst_symdir_find(const struct cst_symdir *d, const char *recorded,
			    const uint8_t *bid, size_t bid_size, enum cst_symdir_want want);

/* ------------------------------------------------------------------------
 * Finding a recorded binary on this host: one lookup, in one order, for the code
 * decode reads and the symbols symbolize reads (docs/symbolize.md says why).
 * ------------------------------------------------------------------------ */

/** Where binaries are looked for. Any field may be NULL. */
struct cst_bin_places {
	const char *symfs;       /* a root the recorded paths are under (--symfs) */
	const char *buildid_dir; /* perf's build-id cache; NULL: $HOME/.debug */
	const struct cst_symdir *symdir; /* --symdir */
	const char *debug_dir;   /* separate debug files by build-id (--debug-dir) */
	/* the binaries the user named, "FILE[@ADDR]" (--elf): each FILE without
	 * @ADDR, as given (never under symfs), stands for the recorded binary with
	 * its build-id or, when none of them has it, its base name */
	const char *const *elfs;
	int nelfs;
};

/** The places cst_bin_lookup tries, in its order. */
enum cst_bin_place {
	cst_bin_given,    /* a binary the user named (cst_bin_places.elfs): by build-id,
			     else by base name, whatever build-id it has */
	cst_bin_cache,    /* perf's build-id cache: BUILDID_DIR/.build-id/xx/rest/elf */
	cst_bin_symfs,    /* the recorded path under symfs (as recorded without symfs) */
	cst_bin_symdir,   /* --symdir: the file of that build-id, or of that base name */
	cst_bin_recorded, /* with symfs and a build-id, the recorded path as it is
			     on this host (the build-id tells whether it is the one) */
	cst_bin_debug,    /* separate debug files by build-id (symbols only):
			     DEBUG_DIR/.build-id/xx/rest.debug, then
			     SYMFS/usr/lib/debug/.build-id/xx/rest.debug */
};

/** Whether @path, found at @place, is the binary wanted (the caller's own
 *  checks: an ELF file with code, its build-id). True stops the lookup. */
typedef bool (*cst_bin_try_fn)(void *ctx, const char *path, enum cst_bin_place place);

/** Try the places for the binary recorded as @recorded with build-id @bid
 *  (@bid_size 0: none recorded) in the order of enum cst_bin_place, until @try
 *  accepts one: a binary the user named, the build-id cache (with a build-id), symfs, --symdir, the
 *  recorded path (with symfs and a build-id), and with cst_symdir_symbols the debug files (with
 *  a build-id). Returns 0 when @try accepted one, -cste_not_found when none, or
 *  -cste_invalid. */
int cst_bin_lookup(const struct cst_bin_places *places, const char *recorded, const uint8_t *bid,
		   size_t bid_size, enum cst_symdir_want want, cst_bin_try_fn try, void *ctx);

/* ------------------------------------------------------------------------
 * Kernel modules: a .ko is a relocatable object (ET_REL), without program
 * headers; the kernel places its sections and resolves its relocations when it
 * loads it. Decode's code reads and symbolize's binaries both go through these.
 * ------------------------------------------------------------------------ */

struct Elf; /* libelf's */

/** One executable section of a kernel module where the kernel puts it. */
struct cst_kmod_section {
	uint64_t addr;   /* from the module's .text, which its recorded mapping starts with */
	uint64_t offset; /* in the file */
	uint64_t size;   /* in memory */
	uint64_t filesz; /* of it in the file (0: NOBITS, as arm64's .plt) */
	uint32_t index;  /* its section header */
};

/** The executable sections of kernel module @elf as the kernel lays out a
 *  module's core text (SHF_ALLOC and SHF_EXECINSTR, not named .init*, in section
 *  header order, each aligned to its sh_addralign), with .text at 0: perf maps a
 *  module's .text at its MMAP's address (so what the kernel puts before .text
 *  is left out). Returns how many there are (the first @max of them into @out,
 *  as snprintf counts), 0 when @elf is no relocatable object or has no code,
 *  -cste_format for an alignment that is no power of two, -cste_invalid. */
int cst_kmod_layout(struct Elf *elf, struct cst_kmod_section *out, int max);

/** Resolve the A64 branch relocations (B, BL, B.cond, CBZ, TBZ) of module @elf's
 *  laid-out sections (@secs, @n from cst_kmod_layout) whose target the module
 *  defines in them, in @file (the file's @size bytes, writable; patched at the
 *  sections' file offsets) as the kernel would: an unrelocated call there is a
 *  branch to itself. Branches to the kernel's own functions stay as they are
 *  (where they go, only the running kernel knew). Returns how many were
 *  patched, or -cste_invalid. */
int cst_kmod_relocate(struct Elf *elf, const struct cst_kmod_section *secs, int n,
		      uint8_t *file, size_t size);

/** Whether @recorded is how perf and simpleperf name a kernel module whose file
 *  they did not find, "[name]" (not "[kernel.kallsyms]", "[vdso]" and the like);
 *  its file's base name, "name.ko", into @file (@size bytes; may be NULL). */
bool cst_kmod_name(const char *recorded, char *file, size_t size);

/** The order of a perf.data file's trace across AUX queues (CPUs). */
enum cst_order {
	cst_order_auto = 0, /* as perf 6.1: by time when the recording has timestamps */
	cst_order_file,     /* each AUX record whole, in file order */
	cst_order_time,     /* merged by perf 6.1's time estimate (cs_etm__process_queues) */
};

/* OpenCSD frames and parses all trace. ETMv4 and ETMv3 instruction trace in the
 * configurations they cover (docs/decode.md) can then be followed through the
 * code by cstrace's own decoders: the same elements as OpenCSD 1.3.3's decoders
 * give (proven on the test suite's traces), without OpenCSD's element
 * (cst_elem.ocsd) and in a fraction of the time. They copy that version's
 * elements, quirks included: with another OpenCSD, auto decodes with OpenCSD's
 * decoders only (with a warning) and cstrace is refused. */
enum cst_decoder_choice {
	/* cstrace's where it covers the source, on every thread; trace it does not
	 * cover makes the buffer or AUX fragment (in perf.data's time order, the
	 * run) decode again with OpenCSD's on the caller's thread, past what went
	 * out */
	cst_decoder_auto,
	cst_decoder_opencsd, /* OpenCSD's everywhere; elements carry cst_elem.ocsd */
	/* cstrace's for every source it covers, on any thread; trace it does not
	 * cover is an error (cste_unsupported): to check it against OpenCSD's */
	cst_decoder_cstrace,
	/* cstrace's for every source it covers, on any thread; a packet it does
	 * not cover is a gap (with a warning) after which it looks for sync again:
	 * to decode past trace on which OpenCSD's decoder crashed */
	cst_decoder_recover,
};

struct cst_session_opts {
	size_t sz;                 /* sizeof(struct cst_session_opts) */
	const struct cst_log *log;
	enum cst_input_kind kind;
	uint64_t id_filter[2];     /* as in cst_decoder_opts */
	const char *buffer;        /* snapshot buffer name; NULL = the default one */
	const char *symfs;         /* perf.data: look for binaries under this root */
	const char *kernel;        /* perf.data: vmlinux or kcore for kernel code */
	const char *buildid_dir;   /* perf.data: build-id cache; NULL = ~/.debug */
	/* raw dumps: trace sources and images (sources also override a snapshot's) */
	const struct cst_source_cfg *raw_sources;
	int nraw_sources;
	const struct cst_mem_image *raw_images;
	int nraw_images;
	enum cst_buffer_format raw_format;
	/* Optional progress callback, as in cst_decoder_opts; for perf.data, the
	 * AUXTRACE bytes decoded so far of all the file holds. */
	void (*progress)(void *ctx, uint64_t done, uint64_t total);
	void *progress_ctx;
	/* Resuming past data that crashed a decoder. Snapshot and raw inputs: start
	 * decoding this many bytes into each buffer, as in cst_decoder_opts. perf.data
	 * (whose offsets are file offsets): the AUX fragments decoded before the one
	 * holding file offset @resume_from are skipped, and that one is decoded from
	 * @start_offset on (not at all if that is past its end). */
	uint64_t start_offset;
	uint64_t resume_from;
	/* perf.data: how to order the trace of several AUX queues (CPUs). In time
	 * order sideband is delivered up to each element's AUX record before it. */
	enum cst_order order;
	/* raw dumps: a board's sources, used for each trace ID no raw source gives
	 * (a source given explicitly replaces the board's with the same ID) */
	const struct cst_source_cfg *board_sources;
	int nboard_sources;
	/* raw dumps: ELF files as code, "FILE[@ADDR]" (--elf): each PT_LOAD at its
	 * link address, or all moved so that the first one starts at ADDR */
	const char *const *raw_elfs;
	int nraw_elfs;
	/* snapshots: refuse one that names files outside its directory (else each
	 * such file is read and named in a warning) */
	bool confine;
	/* perf.data: --symdir, searched for recorded binaries after symfs */
	const struct cst_symdir *symdir;
	/* perf.data, with @threads above 1: cst_session_run decodes on threads other
	 * than the caller's and calls the callbacks, @log and @progress on the
	 * caller's thread, in the order and with the content of a serial run, while
	 * the next elements are decoded (so the caller's work on each element
	 * overlaps decoding). In file order with most of the trace in AUX records
	 * big enough to be split, the workers' elements are replayed on the
	 * caller's thread; otherwise the decode runs on a thread of its own that
	 * hands them over (docs/decode.md). A crash of one of them can be
	 * contained: cst_session_watch_crashes. */
	bool pipe;
	/* cst_session_run delivers each run of instruction ranges that continue one
	 * another (cst_elem_continues) as one range: its first's offset, the last's
	 * end and last instruction, their instructions summed. The same instructions
	 * and branches in far fewer elements (ETMv3: a quarter). Sideband and every
	 * other element end a run. */
	bool merge_ranges;
	/* Decode on this many threads (0 or 1: the calling thread only). A snapshot or
	 * raw buffer of one trace source, in 16-byte frames or unformatted, is cut into
	 * chunks of about @chunk_size bytes (0: 64 KiB) decoded side by side and joined
	 * where their decoders agree, so that the elements, their order and the totals
	 * are exactly those of one thread. So is each AUX fragment of one trace source
	 * in a perf.data decoded in file order (each worker reading code as the
	 * context IDs it meets say); other inputs decode on one thread. */
	unsigned threads;
	/* Which decoder makes the elements of ETMv4 and ETMv3 trace
	 * (docs/decode.md). */
	enum cst_decoder_choice decoder;
	uint64_t chunk_size;
	/* Optional: told every file the session comes to read beside the trace and
	 * the options' own (a binary found for a recorded mapping), so that a caller
	 * can keep its outputs off them. Called from decoding threads too, one call
	 * at a time; nonzero is ignored. */
	int (*file)(void *ctx, const char *path);
	void *file_ctx;
};

struct cst_session;

/** Open @path. Returns 0 and sets *out, or a negative error (logged with the
 *  file and what was wrong). */
int cst_session_open(struct cst_session **out, const char *path,
		     const struct cst_session_opts *opts);
void cst_session_free(struct cst_session *s);

/** The kind of input the session opened (never cst_input_auto). */
enum cst_input_kind cst_session_kind(const struct cst_session *s);

/** The order elements come in: cst_order_time or cst_order_file (never auto). */
enum cst_order cst_session_order(const struct cst_session *s);

/** Whether the session could be decoded again from a byte offset after a decoder
 *  crash: perf.data in file order (resumed inside the fragment that crashed), or
 *  a snapshot or raw dump with one buffer to decode (an offset would not fit the
 *  others). A time-ordered merge cannot restart in the middle. */
bool cst_session_resumable(const struct cst_session *s);

/** Crash containment, for a program that catches crashes of OpenCSD (which can
 *  crash on corrupt trace) in a signal handler, as cstrace's command line does,
 *  and wants what was decoded before one to come out. Decoding threads beside
 *  the caller's (cst_session_opts.pipe) set @state to -1 while they run, and to
 *  0 after. A handler that catches a crash in OpenCSD on one of them while it is
 *  -1 sets it to 1 and waits: the elements decoded before the crash are
 *  delivered, and cst_session_run returns -cste_crashed on the caller's thread,
 *  which can then finish its output. */
struct cst_crash_watch {
	volatile sig_atomic_t state;
};

/** Install @watch (NULL: none) for the runs of @s; it must outlive them.
 *  Returns 0 or -cste_invalid. */
int cst_session_watch_crashes(struct cst_session *s, struct cst_crash_watch *watch);

/** The trace description behind the session (buffers, sources, images). */
const struct cst_trace *cst_session_trace(const struct cst_session *s);

/** Decode everything: sideband is delivered before the elements it applies to.
 *  Either callback may be NULL. Returns 0, a positive stop value, or an error. */
int cst_session_run(struct cst_session *s, cst_elem_fn elem_fn, cst_sideband_fn sb_fn,
		    void *ctx);

/** A print function for cst_session_run_lines: print @e into @buf (@size bytes,
 *  4096) and return the bytes written (0 or negative: nothing for this element).
 *  It runs on decoding threads, several at once: it must keep no state. */
typedef int (*cst_elem_print_fn)(void *ctx, const struct cst_elem *e, char *buf, size_t size);
/** A writer for cst_session_run_lines: @len bytes printed for @nelems elements,
 *  in trace order; the last of them but an end of trace was at @offset (when
 *  @has_offset). Return 0 to go on, non-zero to stop as cst_elem_fn does. */
typedef int (*cst_lines_fn)(void *ctx, const char *bytes, size_t len, uint64_t nelems,
			    uint64_t offset, bool has_offset);

/** Decode everything as cst_session_run does, without sideband, each element
 *  printed by @print and the bytes handed to @write in trace order. With threads
 *  (cst_session_opts) the printing happens on the decoding threads too, and
 *  @write gets many elements' bytes at once. */
int cst_session_run_lines(struct cst_session *s, cst_elem_print_fn print, void *print_ctx,
			  cst_lines_fn write, void *write_ctx);

/** Views on the decoding threads (cst_session_run_views). Where the session
 *  decodes a stretch of the stream on a worker thread, a view opened there for
 *  the stretch is given its elements in order and prints what it can itself.
 *  An element it cannot print without what came before the stretch (the view
 *  starts knowing nothing) it defers: that element goes to the caller's thread,
 *  whose own view handles it as a serial run would. Once the view knows enough
 *  it prints the rest, and what it knows goes to the caller's view after its
 *  bytes (@state, @adopt), so that the next deferred element meets the state a
 *  serial run would have. A view handles exactly what one element would make of
 *  the caller's view, in the same bytes. */
enum cst_view_verdict {
	cst_view_printed = 0, /* handled: its bytes (if any) went to the writer */
	cst_view_defer = 1,   /* to the caller's thread, unprinted, state unchanged but
				 for what the element itself sets */
	cst_view_give_up = 2, /* cannot go on here after printing: the stream is
				 decoded again on one thread */
};

/** Where a view on a worker writes its bytes. Returns 0 or a negative error. */
typedef int (*cst_view_write_fn)(void *ctx, const char *bytes, size_t len);

struct cst_view_ops {
	size_t sz;                 /* sizeof(struct cst_view_ops) */
	/* per worker thread: what its views share (NULL on failure) */
	void *(*worker_open)(void *ctx);
	void (*worker_close)(void *ctx, void *worker);
	/* a view for one stretch, on that worker (NULL on failure) */
	void *(*open)(void *worker, cst_view_write_fn write, void *write_ctx);
	/* a cst_view_verdict, or a negative error */
	int (*elem)(void *view, const struct cst_elem *e);
	/* what the caller's view takes on at this point: into @buf (@size bytes, at
	 * most state_size), the length returned (0: nothing known yet) */
	size_t (*state)(void *view, void *buf, size_t size);
	void (*close)(void *view);
	/* on the caller's thread, in stream order, before the block's bytes go
	 * out: take on a worker's @state; 0, a negative error, or cst_view_give_up:
	 * the block does not fit what came before it, and neither it nor anything
	 * after it is taken (the buffer is decoded again on one thread from there) */
	int (*adopt)(void *ctx, const void *state, size_t len);
	/* on the caller's thread: a state that is never adopted (the stretch was
	 * decoded again elsewhere), for what it holds; may be NULL */
	void (*drop)(void *ctx, const void *state, size_t len);
	size_t state_size;
	/* before a stretch's first element, where the stretch is cut from a stream
	 * already in order (a merge in time order): the last few elements of the
	 * stretch's trace ID before it, and its last timestamp, which went out
	 * already. Learn from each as from an element deferred while learning;
	 * print nothing, count nothing. 0 or a negative error; may be NULL. */
	int (*learn)(void *view, const struct cst_elem *e);
};

/** Decode everything as cst_session_run does, with @ops's views printing on the
 *  decoding threads where the session decodes a stretch there (a perf.data's
 *  large AUX fragments, a snapshot's buffers; cst_session_opts threads). Their
 *  bytes go to @write in stream order, each block's count being the elements
 *  its views handled; every other element, and the sideband, go to @elem_fn and
 *  @sb_fn on this thread as cst_session_run gives them (joined into runs with
 *  merge_ranges). @write gets a block only after every element before it went to
 *  @elem_fn. Returns 0, a positive stop value, or an error. */
int cst_session_run_views(struct cst_session *s, const struct cst_view_ops *ops, void *ops_ctx,
			  cst_elem_fn elem_fn, cst_sideband_fn sb_fn, void *ctx,
			  cst_lines_fn write, void *write_ctx);

/** Packet listing for `dump`. */
int cst_session_dump(struct cst_session *s, cst_packet_fn fn, void *ctx);

/** Whether trace timestamps convert to perf's clock (ns): a perf.data with a
 *  TIME_CONV record whose ETMs all count the kernel's counter (TS_SOURCE 1), which
 *  is when perf converts them. True with the conversion in @tc (may be NULL). */
bool cst_session_time_conv(const struct cst_session *s, struct cst_perf_time_conv *tc);

/** Totals of the last run. */
int cst_session_get_stats(const struct cst_session *s, struct cst_decoder_stats *stats);

#ifdef __cplusplus
}
#endif

#endif /* CSTRACE_DECODE_H */
