/* cstrace symbolize stage: maps decoded instruction ranges to binaries, functions,
 * inlined functions, source lines and disassembly, and feeds every view one stream. */
#ifndef CSTRACE_SYMBOLIZE_H
#define CSTRACE_SYMBOLIZE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "cstrace/common.h"
#include "cstrace/decode.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------
 * The symbolizer: address spaces (per pid plus one global space for the
 * kernel, snapshot images and user-given ELF files) and their binaries.
 * ------------------------------------------------------------------------ */

struct cst_symbolizer;

struct cst_symbolizer_opts {
	size_t sz;                 /* sizeof(struct cst_symbolizer_opts) */
	const struct cst_log *log;
	const char *symfs;         /* root prefixed to recorded paths (perf --symfs) */
	const char *debug_dir;     /* separate debug files by build-id (.build-id/xx/rest.debug) */
	const char *buildid_dir;   /* perf build-id cache; NULL = $HOME/.debug */
	const char *kallsyms;      /* /proc/kallsyms-format file for kernel addresses */
	const char *vmlinux;       /* kernel ELF for kernel addresses */
	bool no_dwarf;             /* symbols only: skip source lines (faster) */
	const struct cst_symdir *symdir; /* --symdir, searched after symfs */
	/* Optional: told every binary or debug file the symbolizer reads for a
	 * recorded path (as cst_session_opts.file) */
	int (*file)(void *ctx, const char *path);
	void *file_ctx;
};

/** Allocate a symbolizer. @opts may be NULL. Returns 0 and sets *out.
 *  Errors: -cste_invalid (NULL @out, bad opts size), -cste_nomem, -cste_not_found
 *  (kallsyms or vmlinux given but unreadable), -cste_internal (capstone). */
int cst_symbolizer_alloc(struct cst_symbolizer **out, const struct cst_symbolizer_opts *opts);
/** Free @sym and everything it owns (NULL is ignored). */
void cst_symbolizer_free(struct cst_symbolizer *sym);

/** Readers: the same symbolizer read on other threads. While @sym shares
 *  (cst_symbolizer_share, called on its own thread with no reader alive), each
 *  reader answers look-ups from @sym's binaries and address spaces, with caches
 *  of its own; what loads lazily is loaded under one lock. Nothing may change
 *  @sym's spaces (mappings, sideband) while a reader reads: between such changes
 *  a reader takes them up with cst_symbolizer_reader_sync. A reader is used by
 *  one thread at a time and freed with cst_symbolizer_free.
 *  Errors: -cste_invalid (NULL, a reader, or not sharing), -cste_nomem. */
int cst_symbolizer_share(struct cst_symbolizer *sym, bool on);
int cst_symbolizer_reader_alloc(struct cst_symbolizer **out, struct cst_symbolizer *sym);
int cst_symbolizer_reader_sync(struct cst_symbolizer *reader);


/** The pid of the global address space (kernel, snapshot images, --elf). */
#define CST_SYM_PID_GLOBAL (-1)

/** A mapping of a file into an address space. */
struct cst_sym_mapping {
	int32_t pid;               /* CST_SYM_PID_GLOBAL or a pid */
	uint64_t addr, len;        /* runtime addresses mapped; len 0 = whole file/segments */
	uint64_t pgoff;            /* file offset of the first mapped byte */
	const char *path;          /* as recorded (symfs is prefixed when looking it up) */
	const uint8_t *build_id;   /* optional: the build-id recorded with the mapping */
	uint32_t build_id_size;
	bool raw;                  /* plain bytes (memory dump), not necessarily an ELF */
	bool elf_vaddr;            /* place an ELF by its program headers: at its link
				    * addresses, or with elf_placed ... */
	bool elf_placed;           /* ... every segment moved so that the first PT_LOAD
				    * starts at addr (--elf FILE@ADDR, cst_elf_place_bias) */
	bool image;                /* a trace's memory image (snapshot dump, raw image):
				    * that file, never a binary --elf names instead */
};

/** Add a mapping. A later mapping replaces what it overlaps (as mmap does).
 *  Missing or mismatching files are not an error: their addresses symbolize as
 *  [unknown] and one warning per binary says what was looked for.
 *  Errors: -cste_invalid, -cste_nomem. */
int cst_symbolizer_add_mapping(struct cst_symbolizer *sym, const struct cst_sym_mapping *m);

/** Add a user-given ELF: "FILE" (at its link addresses) or "FILE@ADDR" (its first
 *  loadable segment placed at ADDR), in @pid's space; with CST_SYM_PID_GLOBAL it
 *  applies to every pid and wins over recorded images at the same addresses.
 *  Errors: -cste_invalid, -cste_format (bad address), -cste_not_found, -cste_nomem. */
int cst_symbolizer_add_elf_spec(struct cst_symbolizer *sym, const char *spec, int32_t pid);

/** Add every memory image of @trace (snapshot dumps, raw images) to the global space:
 *  ELF files as binaries, anything else as bytes for disassembly only.
 *  Errors: -cste_invalid, -cste_nomem. */
int cst_symbolizer_add_trace_images(struct cst_symbolizer *sym, const struct cst_trace *trace);

/** Apply a sideband record: mmap adds a mapping, fork copies the parent's space,
 *  comm names a thread, lost is given to the next element of its CPU
 *  (cst_sym_elem.lost). Other types are ignored. Errors: -cste_invalid, -cste_nomem. */
int cst_symbolizer_add_sideband(struct cst_symbolizer *sym, const struct cst_sideband *sb);

/** What a profile needs to know of a binary. */
struct cst_sym_dso_info {
	const char *path;          /* as recorded or given */
	const char *file;          /* what was opened (NULL: none) */
	uint8_t build_id[64];      /* the file's build-id (else the recorded one) */
	uint32_t build_id_size;    /* 0: none known */
	uint64_t base;             /* lowest PT_LOAD address (the load base in profiles) */
	bool elf;                  /* an ELF with symbols, not raw bytes */
};

/** Describe the binary named @dso (a cst_sym_loc's dso string).
 *  Errors: -cste_invalid, -cste_not_found. */
int cst_symbolizer_dso_info(struct cst_symbolizer *sym, const char *dso,
			    struct cst_sym_dso_info *info);

struct cst_sym_lost;
/** Lost sideband no element took (it came after the last element of its CPU: the
 *  end of trace the file was cut short in), summed into @lost and forgotten; its
 *  CPU into @cpu (-1: none, or several). Returns whether there was any. */
bool cst_symbolizer_take_lost(struct cst_symbolizer *sym, struct cst_sym_lost *lost,
			      int32_t *cpu);

/** Name of a thread from comm sideband, or NULL (also for a NULL @sym). */
const char *cst_symbolizer_comm(const struct cst_symbolizer *sym, int32_t tid);

/* ------------------------------------------------------------------------
 * Lookups.
 * ------------------------------------------------------------------------ */

/** A function (symbol) of a binary. Stable for the life of the symbolizer, so
 *  views may key their tables by its address. */
struct cst_sym_func {
	const char *name;
	const char *dso;           /* binary path as mapped (short form for display) */
	uint64_t addr, size;       /* link-time (file) addresses of the binary */
	uint32_t id;               /* dense, unique within the symbolizer */
	uint32_t nlines;           /* distinct source lines of the function (0: no DWARF);
				      valid after the function appeared in a cst_sym_piece */
	uint8_t binding;           /* the ELF symbol's binding: STB_LOCAL 0, STB_GLOBAL 1,
				      STB_WEAK 2 (PLT stubs: global, as perf makes them) */
};

/** Where one address is. */
struct cst_sym_loc {
	const char *dso;           /* binary ("[unknown]" when no mapping) */
	uint64_t dso_offset;       /* file offset in @dso (address when no mapping) */
	uint64_t vaddr;            /* the ELF's own (link) address of it; for raw bytes and
				      unmapped code, the runtime address */
	const struct cst_sym_func *func; /* NULL when unknown: print dso+offset */
	uint64_t func_offset;      /* address - function start */
	const char *file;          /* source file of the address, NULL if unknown */
	int line;
	const char *inlined;       /* innermost inlined function here, or NULL */
	bool is_data;              /* an Arm $d mapping symbol covers it */
};

/** Look up one runtime address in @pid's space (then the global space).
 *  Strings stay valid for the life of the symbolizer. Errors: -cste_invalid. */
int cst_symbolizer_lookup(struct cst_symbolizer *sym, int32_t pid, uint64_t addr,
			  struct cst_sym_loc *loc);

/** The function Linux perf names @addr by, into @loc (from a lookup or a piece)
 *  where it differs from cstrace's: where cstrace names none, an unsized symbol
 *  before it reaches to the next symbol whatever the section (perf's
 *  symbols__fixup_end: the PLT header and a static binary's IRELATIVE PLT count
 *  as _init); a local label inside a function (glibc's __wrap_main in _start)
 *  names the code from it on; code under an Arm $d mapping symbol keeps its
 *  function. Sets loc->func and func_offset when perf has a name.
 *  Errors: -cste_invalid. */
int cst_symbolizer_perf_name(struct cst_symbolizer *sym, int32_t pid, uint64_t addr,
			     struct cst_sym_loc *loc);

/** One frame of an inline chain, innermost first, as addr2line -f -i prints it:
 *  the function and the source position inside it. */
struct cst_sym_frame {
	const char *func;          /* function or inlined function name; NULL unknown */
	const char *file;          /* NULL unknown */
	int line;
};

/** Fill up to @max frames for @addr (innermost inline first, the containing
 *  function last). Returns the number of frames (0 when nothing is known) or
 *  -cste_invalid. Strings stay valid until the next call. */
int cst_symbolizer_inline_chain(struct cst_symbolizer *sym, int32_t pid, uint64_t addr,
				struct cst_sym_frame *frames, int max);

/** One disassembled instruction. */
struct cst_sym_insn {
	uint64_t addr;
	uint8_t size;
	uint8_t bytes[4];
	char text[96];             /* "mnemonic operands"; "(bad)" if undecodable */
};

/** Disassemble the instruction at @addr as @isa (A64, A32 or T32).
 *  Errors: -cste_invalid, -cste_not_found (no bytes for the address),
 *  -cste_unsupported (isa). */
int cst_symbolizer_disasm(struct cst_symbolizer *sym, int32_t pid, uint64_t addr,
			  enum cst_isa isa, struct cst_sym_insn *insn);

/* ------------------------------------------------------------------------
 * The symbolized stream every view consumes.
 * ------------------------------------------------------------------------ */

/** Executed instructions on one source line within a piece. */
struct cst_sym_line_count {
	uint32_t slot;             /* index of the line within the function (< nlines) */
	uint32_t num_insns;
	const char *file;
	int line;
};

/** The part of an executed range that lies in one function (or one unknown
 *  region). A range usually is one piece; it is split where it crosses symbols. */
struct cst_sym_piece {
	uint64_t start, end;       /* runtime addresses, end exclusive */
	uint32_t num_insns;
	struct cst_sym_loc loc;    /* of @start */
	const struct cst_sym_line_count *lines; /* per-line counts (none without DWARF) */
	uint32_t nlines;
	int32_t first_line, last_line; /* index in @lines of the first / last
					  instruction's line; -1 when it has none */
	bool enters_func;          /* @start is the function's first instruction */
};

/** What the input's sideband says was lost before an element: the cst_sb_lost
 *  records of the element's CPU (or of no CPU) since the element before it. */
struct cst_sym_lost {
	uint64_t bytes;            /* trace bytes known lost (missing, overwritten) */
	uint32_t truncated;        /* TRUNCATED AUX records (the kernel does not say how
				      many bytes the sink dropped) */
	uint32_t missing;          /* AUX records whose trace the file does not hold */
	uint32_t overwritten;      /* snapshots before which the AUX ring overwrote trace */
	uint64_t records;          /* perf records or samples lost (LOST, LOST_SAMPLES):
				      sideband, not trace */
};

/** A decoded element with, for instruction ranges, its symbolized pieces.
 *  Valid during the callback only. */
struct cst_sym_elem {
	const struct cst_elem *elem;
	int32_t pid;               /* resolved: elem pid, else context ID, else -1 */
	const struct cst_sym_piece *pieces; /* instr ranges only */
	uint32_t npieces;
	const struct cst_sym_lost *lost; /* lost before it (sideband); NULL: nothing */
};

/** Sink for symbolized elements: return 0 to go on, > 0 to stop, < 0 to abort. */
typedef int (*cst_sym_elem_fn)(void *ctx, const struct cst_sym_elem *se);

/** Symbolize one decoded element (ranges are split and cached by range) and give
 *  it to @fn. Returns what @fn returns, or -cste_nomem. */
int cst_symbolizer_feed(struct cst_symbolizer *sym, const struct cst_elem *elem,
			cst_sym_elem_fn fn, void *ctx);

/** Run @session through the symbolizer: its images and sideband build the address
 *  spaces, every element reaches @fn symbolized. Returns 0, a positive stop value,
 *  or a negative error from the session or @fn. */
int cst_symbolizer_run(struct cst_symbolizer *sym, struct cst_session *session,
		       cst_sym_elem_fn fn, void *ctx);

/** cst_symbolizer_run, with @ops's views on the decoding threads where the
 *  session decodes there (cst_session_run_views): they read @sym through readers
 *  (cst_symbolizer_reader_alloc), which @sym shares for the run. What they defer
 *  reaches @fn symbolized here, as every element does in cst_symbolizer_run; what
 *  they print goes to @write in stream order. */
int cst_symbolizer_run_views(struct cst_symbolizer *sym, struct cst_session *session,
			     const struct cst_view_ops *ops, void *ops_ctx, cst_sym_elem_fn fn,
			     void *ctx, cst_lines_fn write, void *write_ctx);

/** cst_symbolizer_run, with each sideband record also given to @sb_fn (may be
 *  NULL) after the symbolizer applied it: for views that list processes,
 *  threads and their names (comm, fork, exit) as the trace met them. */
int cst_symbolizer_run_sideband(struct cst_symbolizer *sym, struct cst_session *session,
				cst_sym_elem_fn fn, cst_sideband_fn sb_fn, void *ctx);

struct cst_symbolizer_stats {
	uint64_t ranges;           /* ranges symbolized */
	uint64_t cache_hits;       /* ranges answered from the range cache */
	uint64_t unknown_insns;    /* instructions without a function */
	uint64_t insns;            /* instructions in symbolized ranges */
};

/** Copy the totals so far into @st. Errors: -cste_invalid. */
int cst_symbolizer_get_stats(const struct cst_symbolizer *sym, struct cst_symbolizer_stats *st);

/** What a symbolizer counts of the elements it is fed (cst_symbolizer_get_stats,
 *  cst_symbolizer_dso_counts). A reader's counts are its own: they reach its
 *  symbolizer only as the caller hands them over, so that what a reader
 *  symbolized and was then thrown away is not counted. */
struct cst_sym_counts {
	struct cst_symbolizer_stats stats;
	uint32_t ndsos;
	struct {
		const char *dso;   /* the symbolizer's own string for the binary */
		uint64_t insns, unnamed;
	} dsos[32];
};
/** Add @reader's counts to @c, and count from zero again. Errors: -cste_invalid. */
int cst_symbolizer_take_counts(struct cst_symbolizer *reader, struct cst_sym_counts *c);
/** Add @c to @sym's counts (on @sym's thread). Errors: -cste_invalid. */
int cst_symbolizer_add_counts(struct cst_symbolizer *sym, const struct cst_sym_counts *c);

/** What a binary was to the symbolizer. */
enum cst_sym_dso_kind {
	cst_sym_dso_none = 0,      /* no mapping: the addresses are in no binary */
	cst_sym_dso_missing,       /* a recorded binary not found (or not the one that ran) */
	cst_sym_dso_bytes,         /* a memory dump: code bytes, no symbols */
	cst_sym_dso_elf,           /* an ELF file */
};

/** Instructions symbolized in one binary, and those that fell in no function. */
struct cst_sym_dso_count {
	const char *dso;           /* as cst_sym_loc.dso names it */
	uint64_t insns, unnamed;
	enum cst_sym_dso_kind kind;
};

/** The binaries instructions ran in, most instructions first, into @out (@max
 *  at most; past 32 binaries the rest count in the last). Returns how many. */
int cst_symbolizer_dso_counts(const struct cst_symbolizer *sym, struct cst_sym_dso_count *out,
			      int max);

/** The @i-th thread named by COMM sideband (0, 1, ...), its tid in *@tid; NULL
 *  past the last. */
const char *cst_symbolizer_comm_at(const struct cst_symbolizer *sym, size_t i, int32_t *tid);

/** Copy @n bytes of the code mapped at @addr in @pid's space (then the global
 *  space) into @buf: the one way views read code bytes, with the symbolizer's
 *  build-id checks, symfs and exec handling. Errors: -cste_invalid,
 *  -cste_not_found (nothing mapped there, or past the end of the file). */
int cst_symbolizer_read_code(struct cst_symbolizer *sym, int32_t pid, uint64_t addr, void *buf,
			     size_t n);

/* ------------------------------------------------------------------------
 * Loss: where trace was lost, why, and how much where that is known. The one
 * model of loss every view asks: a report's header, the HTML and flame graph
 * banners, script's in-place lines, the timeline's instants, stderr.
 *
 * Lost: what the trace unit overflowed (an overflow gap), what the decoder
 * skipped to find sync again (resync), what the sink dropped (a TRUNCATED AUX
 * record: the kernel does not say how many bytes), trace an AUX record names
 * that the file does not hold, and what the AUX ring overwrote in snapshot
 * mode (those two in bytes). Not lost: trace switched off and on by its filter
 * (or by a debug halt), the first sync of a buffer, a decoder reset between
 * AUX records that lost nothing, code not in the memory images (the trace is
 * there; its code could not be followed).
 * ------------------------------------------------------------------------ */

/** Why trace was lost at a place (bits). */
enum cst_loss_why {
	cst_loss_overflow = 1 << 0,    /* the trace unit overflowed */
	cst_loss_resync = 1 << 1,      /* the decoder lost sync on bad trace */
	cst_loss_truncated = 1 << 2,   /* the sink overflowed: a TRUNCATED AUX record */
	cst_loss_missing = 1 << 3,     /* AUX trace the file does not hold */
	cst_loss_overwritten = 1 << 4, /* snapshot mode: the AUX ring overwrote it */
};

/** One place where trace was lost: the first element after the loss. */
struct cst_loss_gap {
	const struct cst_elem *elem; /* that element; valid during the call only (NULL:
					the end of the stream, cst_loss_add_end) */
	uint64_t offset;           /* its offset */
	uint64_t time;             /* the time given with it (0: none) */
	uint64_t bytes;            /* bytes known lost there */
	int32_t pid, tid, cpu;     /* where it hit: the element's thread as the call
				      model names it (its context ID standing in for
				      the pid and tid where it has no other), CPU; -1
				      unknown */
	unsigned why;              /* cst_loss_why bits */
	uint8_t trace_id;
	bool bytes_unknown;        /* some of it was lost with no count (TRUNCATED,
				      overflow, resync): @bytes is a lower bound */
};

/** What a stream lost, summed. */
struct cst_loss_totals {
	uint64_t places;           /* places where trace was lost */
	uint64_t bytes;            /* bytes known lost */
	uint64_t unknown;          /* places with a loss of no count */
	uint64_t overflows, resyncs; /* places of each of those */
	uint64_t truncated, missing, overwritten; /* AUX records of each kind */
	uint64_t records;          /* perf records or samples lost (sideband, not trace) */
	uint64_t filtered;         /* trace switched off and on by its filter: not lost */
};

struct cst_loss;

/** Allocate an empty loss model. Errors: -cste_invalid (NULL @out), -cste_nomem. */
int cst_loss_alloc(struct cst_loss **out);
/** Free @loss (NULL is ignored). */
void cst_loss_free(struct cst_loss *loss);
/** Account one symbolized element seen at @time (a view's stream, after its
 *  filters). Sets *@gap (when not NULL) to the place where trace was lost if @se
 *  is the first element after a loss, else to NULL: each loss once (an
 *  overflow's NO_SYNC and the TRACE_ON after it are one place; so are a
 *  TRUNCATED AUX record and the NO_SYNC its trace starts with; each NO_SYNC the
 *  decoder gives for an overflow or bad packets is one). The place is valid
 *  until the next call. Errors: -cste_invalid. */
int cst_loss_add(struct cst_loss *loss, const struct cst_sym_elem *se, uint64_t time,
		 const struct cst_loss_gap **gap);
/** The end of the stream: what the sideband said was lost after the last element
 *  (cst_symbolizer_take_lost) is a place of its own, on @cpu, into *@gap (NULL
 *  when @lost says no trace was lost). Errors: -cste_invalid. */
int cst_loss_add_end(struct cst_loss *loss, const struct cst_sym_lost *lost, int32_t cpu,
		     const struct cst_loss_gap **gap);
/** The totals so far into @t. Errors: -cste_invalid. */
int cst_loss_get_totals(const struct cst_loss *loss, struct cst_loss_totals *t);
/** What @t says, in one line without a newline, into @buf of @size bytes: "trace
 *  lost in 3 places (620,688 bytes)", "trace lost in 1 place (1 TRUNCATED AUX
 *  record, size unknown)", with "; N perf records lost" where records were;
 *  "" when nothing was lost. Returns the length it needed, as snprintf. */
int cst_loss_format_totals(const struct cst_loss_totals *t, char *buf, size_t size);
/** What was lost at @g, for a line in place ("[trace lost: %s]"): "4096 bytes",
 *  "at least 4096 bytes (TRUNCATED)", "size unknown (overflow)". Returns the
 *  length it needed, as snprintf. */
int cst_loss_format_gap(const struct cst_loss_gap *g, char *buf, size_t size);

/* ------------------------------------------------------------------------
 * Control flow: where each executed range went and the call depth it ran at,
 * per trace ID. The one model behind the branch and call-trace views.
 * ------------------------------------------------------------------------ */

/** An executed range held until the next element of its trace ID says where
 *  control went from it. */
struct cst_flow_range {
	struct cst_elem elem;      /* a copy; elem.ocsd is NULL */
	int32_t pid;
	const struct cst_sym_piece *pieces; /* the symbolizer's cache: stable */
	uint32_t npieces;
	uint64_t time;             /* the time given with it */
};

enum cst_flow_kind {
	cst_flow_start,      /* the first range since trace (re)started: @to, at depth 0 */
	cst_flow_branch,     /* @from ended in a taken branch, to the range @to */
	cst_flow_exception,  /* an exception (@to) interrupted; @from ran before it, if any */
	cst_flow_gap,        /* trace stopped or was lost (@to) after @from, if any */
	cst_flow_end,        /* the trace ended after @from: where it went is unknown */
};

/** One step of control flow. Pointers are valid during the callback only. */
struct cst_flow_event {
	enum cst_flow_kind kind;
	const struct cst_flow_range *from; /* NULL: no range pending */
	const struct cst_sym_elem *to;     /* NULL for cst_flow_end */
	uint64_t time;             /* the time given with @to (@from's for an end) */
	int depth;                 /* call depth at @to: one more than @from's after a call,
				      one less after a return; 0 where trace (re)started */
	bool calls_open;           /* (gap) a call tree had started before the gap */
};

/** Sink for flow events: return 0 to go on, > 0 to stop, < 0 to abort. */
typedef int (*cst_flow_fn)(void *ctx, const struct cst_flow_event *ev);

struct cst_flow;

/** Allocate a flow model that gives its events to @fn.
 *  Errors: -cste_invalid (NULL @out or @fn), -cste_nomem. */
int cst_flow_alloc(struct cst_flow **out, cst_flow_fn fn, void *ctx);
/** Free @flow (NULL is ignored). */
void cst_flow_free(struct cst_flow *flow);

/** Account one symbolized element seen at @time. Ranges, exceptions and gaps
 *  produce events; other elements are ignored. Returns what the sink returns. */
int cst_flow_add(struct cst_flow *flow, const struct cst_sym_elem *se, uint64_t time);

/** End the stream: a cst_flow_end event for each range still pending, in trace
 *  ID order. Returns what the sink returns. */
int cst_flow_finish(struct cst_flow *flow);

/** How a range left, as perf script's flags name it: "call", "return", "eret",
 *  "jmp-ind", "jmp", or "jcc-nt" when its branch was not taken. */
const char *cst_flow_branch_name(const struct cst_elem *e);

/* ------------------------------------------------------------------------
 * Calls: a shadow call stack per thread, rebuilt from the branch types of the
 * executed ranges. The one call model behind the call graph, folded stacks,
 * flame graphs, timelines and `script --call-trace`.
 *
 * A call (branch with link) pushes a frame that returns to the instruction
 * after it. A return, or any indirect branch that lands on a stacked return
 * address, pops to the frame that returns there (so a return that skips frames
 * unwinds them). A branch without link to another
 * function's first instruction is a tail call: the callee replaces the frame.
 * A branch, or a return that matches no frame, into a function further down the
 * stack (longjmp, siglongjmp) unwinds to it. An exception that resumes somewhere other than
 * its return address (a signal handler, the kernel's vector) pushes an
 * exception frame; resuming at that return address later unwinds it. Lost
 * trace empties the thread's stack, and the event says so. Trace an address
 * filter turned off (a trace-on of cst_gap_filter) is not lost: the stack stands,
 * a return the trace saw before still pops its frame, a call it saw into filtered
 * code is left waiting, and when tracing comes back at that call's return address
 * (or a stacked one) the frames opened meanwhile return; anywhere else a frame is
 * pushed (a call when at a function's entry). Nothing the trace did not see is
 * made up, and a cst_call_off event says where tracing went off.
 * ------------------------------------------------------------------------ */

/** How a frame began. */
enum cst_call_how {
	cst_call_how_start = 1,  /* first frame of a thread after trace (re)started */
	cst_call_how_call,       /* branch with link */
	cst_call_how_tail,       /* branch without link to a function's first instruction */
	cst_call_how_exception,  /* an exception resumed here instead of its return address */
	cst_call_how_jump,       /* ran into another function without a call (a jump into
				    its middle, or falling through its first instruction) */
	cst_call_how_return,     /* a return landed in a function not on the stack: its
				    caller is unknown */
};

/** Why a frame ended. */
enum cst_call_end {
	cst_call_end_return = 1, /* returned */
	cst_call_end_unwind,     /* a return, longjmp or exception return skipped it */
	cst_call_end_replace,    /* a tail call or jump replaced it */
	cst_call_end_gap,        /* trace was lost: the stack was emptied */
	cst_call_end_eot,        /* the trace ended */
};

/** One frame of a shadow stack. */
struct cst_call_frame {
	const struct cst_sym_func *func; /* NULL: code without a symbol, in @dso */
	const char *dso;
	uint64_t entry;            /* runtime address control entered the frame at */
	uint64_t ret_addr;         /* where its return lands; 0 unknown */
	uint64_t resume;           /* exception frames: where interrupted code resumes */
	uint64_t enter_time;       /* time given with the element that entered it */
	uint64_t enter_icount;     /* instructions of its trace ID executed before it */
	enum cst_call_how how;
	bool entered;              /* control came in at the function's first instruction */
	bool exception;            /* entered by an exception (or a return from one) */
};

/** The frame counts as a call of its function: entered by a call, a tail call or
 *  an exception, or the first frame of a thread that began at the entry. */
static inline bool cst_call_frame_is_call(const struct cst_call_frame *f)
{
	return f->how == cst_call_how_call || f->how == cst_call_how_tail ||
	       f->how == cst_call_how_exception || (f->how == cst_call_how_start && f->entered);
}

/** How a frame began, in words the views print: "call" (and the first frame of a
 *  thread that began at the entry), "tail call", "exception", "jump", "returned
 *  to" or "already running". The first three are the frames that count as calls. */
static inline const char *cst_call_frame_how_name(const struct cst_call_frame *f)
{
	switch (f->how) {
	case cst_call_how_tail: return "tail call";
	case cst_call_how_exception: return "exception";
	case cst_call_how_jump: return "jump";
	case cst_call_how_return: return "returned to";
	case cst_call_how_start: return f->entered ? "call" : "already running";
	default: return "call";
	}
}

enum cst_call_kind {
	cst_call_enter = 1, /* @frame was pushed; it is stack[depth - 1] */
	cst_call_exit,      /* @frame is about to be popped; it is stack[depth - 1] */
	cst_call_insns,     /* @num_insns of @piece ran in the top frame */
	cst_call_gap,       /* trace was lost: the stack was emptied (exits came first) */
	cst_call_off,       /* an address filter turned tracing off here; the stack stands
			       (@frame is its top, NULL when empty) */
};

/** One call-model event. Pointers are valid during the callback only. */
struct cst_call_event {
	enum cst_call_kind kind;
	enum cst_call_end end;     /* exit: why */
	uint32_t thread;           /* dense index of the thread (0, 1, ...) in the model */
	int32_t pid, tid;          /* -1 unknown (then the context ID stands in for tid) */
	uint8_t trace_id;
	const struct cst_call_frame *frame; /* enter, exit: the frame; insns: the top */
	const struct cst_call_frame *stack; /* root first */
	uint32_t depth;            /* frames on @stack */
	uint64_t time;             /* the time given with the element that caused it */
	uint64_t icount;           /* instructions of this trace ID executed before it */
	uint32_t num_insns;        /* insns */
	const struct cst_sym_piece *piece; /* insns */
	const struct cst_elem *elem; /* the element that caused it (NULL at the end) */
};

/** Sink for call events: return 0 to go on, > 0 to stop, < 0 to abort. */
typedef int (*cst_call_fn)(void *ctx, const struct cst_call_event *ev);

struct cst_calls;

/** Allocate a call model that gives its events to @fn.
 *  Errors: -cste_invalid (NULL @out or @fn), -cste_nomem. */
int cst_calls_alloc(struct cst_calls **out, cst_call_fn fn, void *ctx);
/** Free @calls (NULL is ignored). */
void cst_calls_free(struct cst_calls *calls);

/** Account one symbolized element seen at @time: ranges, exceptions and gaps move
 *  the stacks; other elements are ignored. Returns what the sink returns, or
 *  -cste_nomem. */
int cst_calls_add(struct cst_calls *calls, const struct cst_sym_elem *se, uint64_t time);

/** End the stream: every frame still open exits (cst_call_end_eot), threads in the
 *  order they first appeared. Returns what the sink returns. */
int cst_calls_finish(struct cst_calls *calls);

struct cst_calls_stats {
	uint32_t threads;
	uint32_t max_depth;        /* deepest stack seen */
	uint64_t gaps;             /* times a thread's stack was emptied by lost trace */
	uint64_t unknown_returns;  /* returns that landed in a function not on the stack */
	uint64_t too_deep;         /* stacks emptied at 65536 frames (counted in gaps too) */
	uint64_t filtered;         /* times an address filter turned tracing off (not gaps) */
	/* blocks of the model made on the decoding threads that it took, and that
	 * it refused (their buffer decoded again on one thread from there) */
	uint64_t blocks_taken, blocks_refused;
};

/** Copy the totals so far into @st. Errors: -cste_invalid. */
int cst_calls_get_stats(const struct cst_calls *calls, struct cst_calls_stats *st);

/** Name of a frame as report shows it: the function, or "[unknown]". */
static inline const char *cst_call_frame_name(const struct cst_call_frame *f)
{
	return f->func ? f->func->name : "[unknown]";
}

/* ------------------------------------------------------------------------
 * The call tree: call events summed by distinct stack (caller -> callee), the
 * model behind the call graph, folded stacks and flame graphs. Threads with
 * the same stack share its node.
 * ------------------------------------------------------------------------ */

/** One distinct stack: the function on top and its totals. */
struct cst_calltree_node {
	const struct cst_sym_func *func; /* NULL: code without a symbol, in @dso */
	const char *dso;
	const char *name;          /* as report shows it */
	uint64_t self;             /* instructions executed with exactly this stack */
	uint64_t total;            /* self and everything called from here */
	uint64_t calls;            /* times entered (cst_call_frame_is_call) */
	uint32_t parent;           /* index of the caller's node; 0 for roots */
	uint32_t first_child;      /* 0: none; children sorted by total, most first */
	uint32_t next_sibling;     /* 0: none */
	uint32_t depth;            /* 1 for roots */
	uint32_t func_index;       /* dense index of (func, dso) in the tree */
};

struct cst_calltree;

/** Allocate an empty call tree. Errors: -cste_invalid, -cste_nomem. */
int cst_calltree_alloc(struct cst_calltree **out);
/** Free @tree (NULL is ignored). */
void cst_calltree_free(struct cst_calltree *tree);

/** Account one call event (a cst_call_fn: pass the tree as ctx). Returns 0.
 *  Errors: -cste_invalid, -cste_nomem. */
int cst_calltree_add(void *tree, const struct cst_call_event *ev);

/** The nodes, with totals and sorted children. nodes[0] is a root above every
 *  thread's root (no function; self 0, total all). Valid until the next add or
 *  free. Returns the node count. Errors: -cste_invalid, -cste_nomem. */
int cst_calltree_nodes(struct cst_calltree *tree, const struct cst_calltree_node **nodes);

/** Instructions executed with (@func, @dso) anywhere on the stack, each counted
 *  once however deep it recurses: perf's "children" column. */
uint64_t cst_calltree_children(struct cst_calltree *tree, const struct cst_sym_func *func,
			       const char *dso);

/** Write the folded stacks: one line per distinct stack with instructions of its
 *  own, "root;...;leaf COUNT", sorted (flamegraph.pl, speedscope and inferno
 *  read it). Errors: -cste_invalid, -cste_nomem, -cste_io. */
int cst_calltree_write_folded(struct cst_calltree *tree, FILE *f);

struct cst_calltree_text_opts {
	size_t sz;                 /* sizeof(struct cst_calltree_text_opts) */
	double min_share;          /* leave out subtrees below this share of all (0..1) */
	int64_t max_depth;         /* 0: no limit */
	bool callee;               /* callee first (perf's -g callee): each function that
				      ran, with its callers under it */
	uint8_t reserved[7];       /* zero: no padding at the end (common.h's rule) */
};

/** Write the call graph as an indented caller -> callee tree: children, self and
 *  call counts per stack; or (callee) each function with its callers under it, as
 *  perf report -g callee shows it. Errors: -cste_invalid, -cste_nomem, -cste_io. */
int cst_calltree_write_text(struct cst_calltree *tree, FILE *f,
			    const struct cst_calltree_text_opts *opts);

struct cst_flamegraph_opts {
	size_t sz;                 /* sizeof(struct cst_flamegraph_opts) */
	const char *title;         /* NULL: "Flame graph" */
	int width;                 /* pixels, fixed; 0: as wide as the window (or page) */
	bool embedded;             /* inside an HTML page: no XML declaration (the page
				      calls init() once loaded) */
	bool inverted;             /* icicle: roots at the top (a button flips it) */
	uint8_t reserved[2];       /* zero: no padding at the end (common.h's rule) */
	struct cst_loss_totals loss; /* what trace was lost: a banner under the title
					says it (all zero: none) */
};

/** Draw the call tree as a self-contained interactive SVG flame graph (hover
 *  names a box with its counts, click zooms, Search (or Ctrl-F) highlights names
 *  matching a regular expression in any case, a button flips it into an icicle
 *  graph), as wide as the window unless a width is given. "#zoom=NAME",
 *  "#search=REGEX" and "#inverted" after the file name open it so. Errors:
 *  -cste_invalid, -cste_nomem, -cste_io. */
int cst_calltree_write_flamegraph(struct cst_calltree *tree, FILE *f,
				  const struct cst_flamegraph_opts *opts);

/* ------------------------------------------------------------------------
 * Timeline: call events as Chrome trace-event JSON (ui.perfetto.dev and
 * chrome://tracing load it): one track per thread, grouped by process, one
 * complete slice per call, instants where trace was lost.
 *
 * Time: where the trace has timestamps, a trace ID's clock is its latest
 * timestamp plus one nanosecond per instruction since, never running backwards
 * (timestamps are sparse: a call between two would otherwise take no time);
 * without timestamps, one nanosecond per instruction. The file's otherData says
 * which ("clock").
 * ------------------------------------------------------------------------ */

struct cst_perfetto_opts {
	size_t sz;                 /* sizeof(struct cst_perfetto_opts) */
	bool perf_clock;            /* event times are ns on perf's clock (TIME_CONV
				     * applied), not raw timestamp ticks */
	struct cst_symbolizer *sym; /* names threads and processes (comm); may be NULL */
	/* how much: slices of frames that ran fewer instructions (theirs and their
	 * callees') than min_insns, or deeper than max_depth, are left out; with
	 * max_bytes, the smallest slices too, as many as keep the file under it (the
	 * events wait in a temporary file until the end to choose) */
	uint64_t min_insns;
	uint64_t max_bytes;         /* 0: no limit */
	uint32_t max_depth;         /* 0: no limit */
	uint8_t reserved[4];        /* zero: no padding at the end (common.h's rule) */
};

/** What a timeline left out, and why. */
struct cst_perfetto_stats {
	uint64_t slices, bytes;     /* slices written and the file's size */
	uint64_t small, deep;       /* slices left out by min_insns and max_depth */
	uint64_t cut, cut_bytes;    /* left out to stay under max_bytes ... */
	uint64_t cut_below;         /* ... those of fewer instructions than this */
};

struct cst_perfetto;

/** A place where trace was lost (cst_loss_add): an instant "trace lost" on its
 *  thread with its CPU, bytes and why as args, at its trace ID's clock. Give it
 *  before the call events of its element: the slices they cut are marked lost,
 *  where other gaps (a filter, code not followed) mark them "trace off" or
 *  "trace gap". Errors: -cste_invalid, -cste_io. */
int cst_perfetto_add_lost(struct cst_perfetto *pw, const struct cst_loss_gap *gap);

/** Start a timeline written to @f. Errors: -cste_invalid, -cste_nomem, -cste_io. */
int cst_perfetto_alloc(struct cst_perfetto **out, FILE *f, const struct cst_perfetto_opts *opts);
/** Free @pw (NULL is ignored); does not close the file. */
void cst_perfetto_free(struct cst_perfetto *pw);
/** Account one call event (a cst_call_fn: pass the writer as ctx). Returns 0.
 *  Errors: -cste_invalid, -cste_nomem, -cste_io. */
int cst_perfetto_add(void *pw, const struct cst_call_event *ev);
/** Write the thread names and the end of the document (after cst_calls_finish),
 *  with a note of what was left out (otherData.left_out).
 *  Errors: -cste_invalid, -cste_io. */
int cst_perfetto_finish(struct cst_perfetto *pw);
/** What the timeline holds and left out (final after cst_perfetto_finish). */
int cst_perfetto_get_stats(const struct cst_perfetto *pw, struct cst_perfetto_stats *st);

/* ------------------------------------------------------------------------
 * Sample profiles for feedback-directed optimisation: executed address ranges
 * and taken branches with counts, per binary, in the binary's own addresses.
 * ------------------------------------------------------------------------ */

struct cst_afdo;

/** Allocate an empty profile over @sym's binaries. Errors: -cste_invalid, -cste_nomem. */
int cst_afdo_alloc(struct cst_afdo **out, struct cst_symbolizer *sym);
/** Free @p (NULL is ignored). */
void cst_afdo_free(struct cst_afdo *p);
/** What a function filter keeps: @dso as cst_sym_loc.dso names the binary, @func the
 *  function's name ("[unknown]" outside any). */
typedef bool (*cst_afdo_keep_fn)(void *ctx, const char *dso, const char *func);
/** Narrow the profile to the functions @keep keeps (report --dsos/--symbols): only
 *  their instructions count in ranges, only branches leaving them count, and line
 *  coverage lists only them. Call before the first cst_afdo_add; NULL keeps all.
 *  Errors: -cste_invalid. */
int cst_afdo_set_filter(struct cst_afdo *p, cst_afdo_keep_fn keep, void *ctx);
/** Account one symbolized element seen at @time. A range is what ran between two
 *  taken branches (decoded ranges that went on are joined; an exception or lost
 *  trace also ends one), counted once per binary it runs through, from its first
 *  to its last instruction; a taken branch counts from its instruction to the
 *  next range's start (0 when that is in another binary). Returns 0.
 *  Errors: -cste_invalid, -cste_nomem. */
int cst_afdo_add(void *p, const struct cst_sym_elem *se, uint64_t time);
/** End the stream (after the last element). Errors: -cste_invalid, -cste_nomem. */
int cst_afdo_finish(struct cst_afdo *p);
/** AutoFDO's text profile as simpleperf's inject writes it from ETM trace:
 *  one range (first-last:count) per range the decoder gave, never joined (exact
 *  when the session kept them apart: cst_report_needs_ranges), and per range
 *  ending in a taken branch a branch (from->to:count) to the next range's start
 *  for a direct branch, to 0 for any other (a return, an indirect call); per ELF
 *  binary, sorted by path (with a first line asking to split the file when there
 *  are several): ranges, an empty address section, branches, hex offsets from
 *  the binary's first loadable segment, then "// build_id: 0x..." and "// path".
 *  Errors: -cste_invalid, -cste_nomem, -cste_io. */
int cst_afdo_write_autofdo(struct cst_afdo *p, FILE *f);
/** LLVM's unsymbolized profile (llvm-profgen --unsymbolized-profile) of the binary
 *  @dso (path or base name): ranges then branches within it, as offsets from its
 *  load base. Errors: -cste_invalid, -cste_not_found (no such ELF in the
 *  profile), -cste_nomem, -cste_io. */
int cst_afdo_write_profgen(struct cst_afdo *p, FILE *f, const char *dso);
/** LLVM's sample profile, text format (clang -fprofile-sample-use reads it), of the
 *  binary @dso, computed from the counts cst_afdo_write_profgen writes by
 *  llvm-profgen's rules: per DWARF function "name:total:head", body lines
 *  "offset[.discriminator]: count [callee:calls]..." (offset: line less the
 *  function's DW_AT_decl_line), inlined functions nested under their call sites.
 *  Errors: -cste_invalid, -cste_not_found (no such ELF in the profile),
 *  -cste_unsupported (it has no DWARF), -cste_nomem, -cste_io. */
int cst_afdo_write_llvm_sample(struct cst_afdo *p, FILE *f, const char *dso);
/** Line coverage as lcov's tracefile (genhtml reads it): per source file the
 *  functions (FN, FNDA = times entered), every line of each function with debug
 *  information and how often it ran (DA: its most executed instruction, summed
 *  over the functions it is in; 0 = never), LF/LH. Errors: -cste_invalid,
 *  -cste_nomem, -cste_io. */
int cst_afdo_write_lcov(struct cst_afdo *p, FILE *f);
/** The same coverage as a table: lines and functions hit per source file. */
int cst_afdo_write_coverage(struct cst_afdo *p, FILE *f);

/* ------------------------------------------------------------------------
 * Merging outputs of many captures (cstrace merge).
 * ------------------------------------------------------------------------ */

enum cst_merge_format {
	cst_merge_auto = 0,        /* tell from each file's content */
	cst_merge_folded,
	cst_merge_autofdo,
	cst_merge_profgen,
	cst_merge_lcov,
	cst_merge_report_json,     /* report --format=json: rows summed by sym, dso, srcline */
};

/** "auto", "folded", "autofdo", "profgen", "lcov" or "json". Errors: -cste_invalid. */
int cst_merge_format_parse(const char *s, enum cst_merge_format *fmt);

/** Read @n files of one format, sum their counts per key (stack; binary and
 *  range or branch; source file and line or function) and write the sum to @out
 *  in a canonical order, so that merging is associative and the order of the
 *  inputs does not matter. lcov totals (FNF, FNH, LF, LH) are recomputed.
 *  Errors (a one-line message naming file and line goes to @log): -cste_invalid,
 *  -cste_not_found, -cste_format, -cste_nomem, -cste_io. */
int cst_merge_files(enum cst_merge_format fmt, const char *const *paths, int n, FILE *out,
		    const struct cst_log *log);

/* ------------------------------------------------------------------------
 * The HTML report: one self-contained page.
 * ------------------------------------------------------------------------ */

struct cst_report_row;
/** What a page says of the capture it shows (any field may be NULL or 0). */
struct cst_report_meta {
	const char *command;       /* the recorded command line */
	const char *host;          /* where it was recorded, and its kernel */
	const char *kernel;
	const char *date;          /* when ("2024-05-01 12:00:03", the file's time) */
	const char *version;       /* the cstrace that made the page */
	const char *trace;         /* the input's name */
	uint64_t trace_bytes;      /* and its size */
};

struct cst_html_input {
	size_t sz;                 /* sizeof(struct cst_html_input) */
	const char *title;
	const struct cst_report_row *rows; /* the function table, most first */
	int nrows;
	uint64_t total;            /* instructions executed */
	struct cst_calltree *tree; /* NULL: no call graph and flame graph */
	struct cst_afdo *profile;  /* NULL: no line coverage */
	const struct cst_report_meta *meta; /* NULL: no capture details */
	struct cst_symbolizer *sym; /* NULL: no binaries named */
	struct cst_loss_totals loss; /* what trace was lost: a banner at the top says
					it (all zero: none) */
};

/** Write one HTML page, no network needed, as wide as the window: what was
 *  captured (command, binaries with build-ids, date, size, loss), the function
 *  table (sortable by any column), the call graph (expandable), the flame graph
 *  (inline SVG, interactive) and per-file line and branch coverage with each
 *  readable source file annotated by how often its lines ran and which way its
 *  branches went; system headers and libraries folded away.
 *  Errors: -cste_invalid, -cste_io. */
int cst_html_write(FILE *f, const struct cst_html_input *in);

/* ------------------------------------------------------------------------
 * Per-function totals (the model behind `cstrace report`).
 * ------------------------------------------------------------------------ */

/** Sort/group keys of a report. */
enum cst_report_key {
	cst_report_key_dso = 1 << 0,
	cst_report_key_sym = 1 << 1,
	cst_report_key_srcline = 1 << 2,
};

struct cst_report_row {
	const char *dso;
	const char *sym;           /* "[unknown]" for unknown code */
	const char *file;          /* srcline key only */
	int line;
	uint64_t insns;            /* executed instructions (self) */
	uint64_t entries;          /* times the function's entry was executed */
	uint64_t taken, not_taken; /* branches ending ranges in it */
	uint32_t lines_hit, lines_total; /* source lines executed / of the function */
	uint64_t func_addr;        /* link address of the function (0 unknown) */
	const struct cst_sym_func *func; /* sym key: the function (NULL unknown) */
};

struct cst_report;

/** Allocate a report grouped by @keys (cst_report_key_* bits).
 *  Errors: -cste_invalid (NULL @out or no key), -cste_nomem. */
int cst_report_alloc(struct cst_report **out, unsigned keys);
/** Free @rep (NULL is ignored). */
void cst_report_free(struct cst_report *rep);

/** Account one symbolized element (a cst_sym_elem_fn: pass the report as ctx).
 *  Returns 0. Errors: -cste_invalid, -cste_nomem. */
int cst_report_add(void *rep, const struct cst_sym_elem *se);

/** Rows sorted by instructions, most first. @rows stays valid until the next
 *  call or free. Returns the row count. Errors: -cste_invalid, -cste_nomem. */
int cst_report_rows(struct cst_report *rep, const struct cst_report_row **rows);

/** Total executed instructions accounted (equals the decoded num_insns sum);
 *  0 for a NULL @rep. */
uint64_t cst_report_total(const struct cst_report *rep);

/* ------------------------------------------------------------------------
 * Filters: which elements and which instructions of the symbolized stream a
 * view shows (--pid, --tid, --cpu, --comm, --time select elements; --dsos and
 * --symbols select instructions). Every view applies them through this object.
 * ------------------------------------------------------------------------ */

struct cst_sym_filter_opts {
	size_t sz;                 /* sizeof(struct cst_sym_filter_opts) */
	/* lists (NULL or a count of 0: no filter); the arrays and strings must
	 * outlive the filter */
	const int32_t *pids, *tids, *cpus;
	const char *const *comms;  /* thread names from COMM sideband */
	const char *const *dsos;   /* binaries: as cst_sym_loc.dso names them, or base name */
	const char *const *symbols; /* functions ("[unknown]": code without a symbol) */
	const struct cst_perf_time_conv *time_conv; /* ticks to perf's clock; NULL: none */
	uint32_t npids, ntids, ncpus, ncomms, ndsos, nsymbols;
	uint64_t t0, t1;           /* the --time window, bounds included */
	bool window;               /* t0..t1 applies */
	bool window_ticks;         /* its bounds are raw ticks, not ns on perf's clock */
	uint8_t reserved[6];       /* zero: no padding at the end (common.h's rule) */
};

struct cst_sym_filter;

/** Allocate a filter over @sym's stream (@sym names threads for comms).
 *  Errors: -cste_invalid (NULL @out or @sym, bad opts), -cste_nomem. */
int cst_sym_filter_alloc(struct cst_sym_filter **out, const struct cst_symbolizer *sym,
			 const struct cst_sym_filter_opts *opts);
/** Free @f (NULL is ignored). */
void cst_sym_filter_free(struct cst_sym_filter *f);
/** Whether @se passes the pid, tid, cpu, comm and time filters. Every element must
 *  pass through here, in order: timestamps set the time of the ranges after them. */
bool cst_sym_filter_keep(struct cst_sym_filter *f, const struct cst_sym_elem *se);
/** The time of @se: the latest timestamp of its trace ID, in ns on perf's clock
 *  when the filter has a time_conv, else raw ticks; 0 before the first. */
uint64_t cst_sym_filter_time(const struct cst_sym_filter *f, const struct cst_sym_elem *se);
/** Whether dsos or symbols were given. */
bool cst_sym_filter_by_name(const struct cst_sym_filter *f);
/** Whether function @func (a name) of binary @dso passes dsos and symbols (a
 *  cst_afdo_keep_fn: @f is the filter). */
bool cst_sym_filter_keep_name(void *f, const char *dso, const char *func);
/** Whether piece @pc passes dsos and symbols. */
bool cst_sym_filter_keep_piece(const struct cst_sym_filter *f, const struct cst_sym_piece *pc);
/** @se with only the pieces dsos and symbols keep (its instruction count theirs):
 *  @se itself when nothing is left out, @copy (valid until the next call) when
 *  some pieces are, NULL when no piece of a range is kept or out of memory. */
const struct cst_sym_elem *cst_sym_filter_pieces(struct cst_sym_filter *f,
						 const struct cst_sym_elem *se,
						 struct cst_sym_elem *copy);

/* ------------------------------------------------------------------------
 * Report formats: one registry of what `cstrace report --format` can write, and
 * the report view that builds the models a format needs from the filtered stream
 * and writes it. A new format is a writer and one row in report_formats.c.
 * ------------------------------------------------------------------------ */

/** What a format is written from, besides the function table, and what it says. */
enum cst_report_need {
	cst_report_needs_calls = 1 << 0,    /* the call tree (cst_calltree) */
	cst_report_needs_profile = 1 << 1,  /* the sample profile (cst_afdo) */
	cst_report_needs_timeline = 1 << 2, /* written while the trace decodes, to
					       cst_report_view_opts.stream */
	cst_report_needs_dso = 1 << 3,      /* of one binary: cst_report_view_opts.dso */
	cst_report_needs_ranges = 1 << 4,   /* the decoder's ranges as it gave them: the
					       session must not join them
					       (cst_session_opts.merge_ranges off) */
	cst_report_tells_loss = 1 << 5,     /* its output says where trace was lost (a
					       header, a banner, instants); for the
					       others the caller says it
					       (cst_report_view_loss) */
};

struct cst_report_view;

struct cst_report_format {
	const char *name;          /* as --format takes it */
	const char *help;          /* the name with what it is, for --help (a longer
				      one goes on after a '\n') */
	unsigned needs;            /* cst_report_need bits */
	/** Write the view (after cst_report_view_finish). Errors: -cste_nomem,
	 *  -cste_io, and for one binary -cste_not_found (no ELF of that name ran)
	 *  or -cste_unsupported (it has no DWARF). */
	int (*write)(struct cst_report_view *v, FILE *f);
};

/** All formats, in the order --help lists them: returns their count. */
size_t cst_report_format_all(const struct cst_report_format **formats);
/** The format called @name, or NULL. */
const struct cst_report_format *cst_report_format_find(const char *name);
/** The names as a message lists them ("text, json, ... or html") into @buf of
 *  @size bytes. Returns the length it needed, as snprintf. */
int cst_report_format_names(char *buf, size_t size);

struct cst_report_view_opts {
	size_t sz;                 /* sizeof(struct cst_report_view_opts) */
	const struct cst_sym_filter_opts *filter; /* NULL: everything */
	FILE *stream;              /* cst_report_needs_timeline: where it goes */
	const char *title;         /* html, flamegraph: the trace's name */
	const char *dso;           /* cst_report_needs_dso: the binary (path or base name) */
	double min_share;          /* call graph text: subtrees below this share (0..1)
				      are left out */
	unsigned keys;             /* cst_report_key_* bits; 0: dso and sym */
	int limit;                 /* text table: at most this many rows; 0: all */
	bool call_graph;           /* text, json, csv: the call graph instead of the table */
	bool children;             /* the children column, sorted by it (needs the sym key) */
	bool callee;               /* text call graph: callee first (perf's -g callee) */
	bool inverted;             /* flame graph: icicle, roots at the top */
	int width;                 /* flame graph: pixels, fixed; 0: the window's */
	const struct cst_report_meta *meta; /* html: the capture's details; NULL: none */
	/* perfetto: how much (cst_perfetto_opts) */
	uint64_t min_insns, max_bytes;
	uint32_t max_depth;
	uint8_t reserved[4];       /* zero: no padding at the end (common.h's rule) */
};

/** Allocate a report view writing @fmt over @sym's stream. Errors: -cste_invalid
 *  (NULL argument, bad opts, children without the sym key, a timeline without a
 *  stream, one binary without a dso), -cste_nomem, -cste_io. */
int cst_report_view_alloc(struct cst_report_view **out, const struct cst_report_format *fmt,
			  struct cst_symbolizer *sym, const struct cst_report_view_opts *opts);
/** Free @v (NULL is ignored); does not close the stream. */
void cst_report_view_free(struct cst_report_view *v);
/** Account one symbolized element (a cst_sym_elem_fn: pass the view as ctx): the
 *  filters apply here. Returns 0. Errors: -cste_nomem, -cste_io. */
int cst_report_view_add(void *v, const struct cst_sym_elem *se);
/** Run @session into @v: as cst_symbolizer_run(sym, session, fn, ctx), where @fn
 *  passes each element on to cst_report_view_add(@v). Where the session decodes
 *  on several threads and the view allows it (a table: text, JSON or CSV, no -g
 *  or children, nothing filtered), the ranges those threads decode are counted
 *  there, in tables added to @v's at the end (cst_symbolizer_run_views); @write
 *  gets their blocks, empty, each counting the elements it stands for. The
 *  result is the same. */
int cst_report_view_run(struct cst_report_view *v, struct cst_session *session,
			cst_sym_elem_fn fn, void *ctx, cst_lines_fn write, void *write_ctx);
/** End the stream (after the last element). Errors: -cste_nomem, -cste_io. */
int cst_report_view_finish(struct cst_report_view *v);
/** Write the format to @f (a timeline ends its stream instead). Errors: the
 *  format's (see cst_report_format.write). */
int cst_report_view_write(struct cst_report_view *v, FILE *f);
/** The call model the view ran, for its totals; NULL when the format needs none. */
const struct cst_calls *cst_report_view_calls(const struct cst_report_view *v);
/** What the view's stream lost (its loss model's totals, after the filters) into
 *  @t. Errors: -cste_invalid. */
int cst_report_view_loss(const struct cst_report_view *v, struct cst_loss_totals *t);
/** Instructions the filters kept (the table's total). */
uint64_t cst_report_view_kept(const struct cst_report_view *v);
/** The timeline the view wrote; NULL when its format is none. */
const struct cst_perfetto *cst_report_view_timeline(const struct cst_report_view *v);

/* ------------------------------------------------------------------------
 * The script view (`cstrace script`): lines over the filtered stream, one per
 * taken branch, per executed instruction with disassembly, or per function
 * entered (the call trace), with perf script's -F fields. Lines go to a sink.
 * ------------------------------------------------------------------------ */

enum cst_script_mode {
	cst_script_branches,       /* one line per taken branch, and where trace broke off */
	cst_script_insns,          /* one line per executed instruction */
	cst_script_calls,          /* each function as it is entered, indented by depth */
};

/** The -F fields. */
enum cst_script_field {
	cst_script_comm = 1 << 0,
	cst_script_pid = 1 << 1,
	cst_script_tid = 1 << 2,
	cst_script_cpu = 1 << 3,
	cst_script_time = 1 << 4,
	cst_script_id = 1 << 5,
	cst_script_flags = 1 << 6,
	cst_script_ip = 1 << 7,
	cst_script_sym = 1 << 8,
	cst_script_symoff = 1 << 9,
	cst_script_dso = 1 << 10,
	cst_script_addr = 1 << 11,
	cst_script_srcline = 1 << 12,
	cst_script_insn = 1 << 13,
	cst_script_insncnt = 1 << 14,
};

/** The field called @name ("comm", "symoff", ...) into *@field.
 *  Errors: -cste_not_found. */
int cst_script_field_parse(const char *name, unsigned *field);
/** The fields a mode shows when none are asked for. */
unsigned cst_script_fields_default(enum cst_script_mode mode);

/** Sink for the view's lines (each ends in '\n'): return < 0 when the write
 *  failed; the view goes on and its calls return -cste_io. */
typedef int (*cst_script_write_fn)(void *ctx, const char *line, size_t len);

struct cst_script_opts {
	size_t sz;                 /* sizeof(struct cst_script_opts) */
	const struct cst_sym_filter_opts *filter; /* NULL: everything */
	unsigned fields;           /* cst_script_field bits */
	enum cst_script_mode mode;
	bool ns;                   /* times to the nanosecond (default: microseconds) */
	uint8_t reserved[7];       /* zero: no padding at the end (common.h's rule) */
};

struct cst_script;

/** Allocate a script view over @sym's stream writing its lines to @write.
 *  Errors: -cste_invalid, -cste_nomem. */
int cst_script_alloc(struct cst_script **out, struct cst_symbolizer *sym,
		     cst_script_write_fn write, void *ctx, const struct cst_script_opts *opts);
/** Free @s (NULL is ignored). */
void cst_script_free(struct cst_script *s);
/** One symbolized element (a cst_sym_elem_fn: pass the view as ctx): the filters
 *  apply here. Errors: -cste_nomem, -cste_io (a write failed). */
int cst_script_add(void *s, const struct cst_sym_elem *se);
/** Run @session into @s: as cst_symbolizer_run(sym, session, fn, ctx), where @fn
 *  passes each element on to cst_script_add(@s). Where the session decodes on
 *  several threads, the lines of what those threads decode are made there too,
 *  and their bytes go to @write in stream order (cst_symbolizer_run_views), each
 *  block counting the elements it stands for. The output is the same. */
int cst_script_run(struct cst_script *s, struct cst_session *session, cst_sym_elem_fn fn,
		   void *ctx, cst_lines_fn write, void *write_ctx);
/** End the stream: the last range of each trace ID, the frames still open.
 *  Errors as cst_script_add. */
int cst_script_finish(struct cst_script *s);
/** The call model of the call trace, for its totals; NULL in the other modes. */
const struct cst_calls *cst_script_call_model(const struct cst_script *s);

/* ------------------------------------------------------------------------
 * perf script's own output (`cstrace script -F ...` / `--itrace=...`): the
 * samples Linux perf 6.1 synthesizes from cs_etm trace (tools/perf/util/cs-etm.c:
 * instruction samples every N instructions, branch samples where a range ended
 * in a taken branch or trace stopped or started, with perf's flags), printed
 * with perf script's columns (builtin-script.c), byte for byte.
 * ------------------------------------------------------------------------ */

/** perf script's -F fields. */
enum cst_pscript_field {
	cst_pscript_comm = 1 << 0,
	cst_pscript_pid = 1 << 1,
	cst_pscript_tid = 1 << 2,
	cst_pscript_cpu = 1 << 3,
	cst_pscript_time = 1 << 4,
	cst_pscript_period = 1 << 5,
	cst_pscript_event = 1 << 6,
	cst_pscript_flags = 1 << 7,
	cst_pscript_ip = 1 << 8,
	cst_pscript_sym = 1 << 9,
	cst_pscript_symoff = 1 << 10,
	cst_pscript_dso = 1 << 11,
	cst_pscript_addr = 1 << 12,
	cst_pscript_srcline = 1 << 13,
	cst_pscript_insn = 1 << 14,
	cst_pscript_insnlen = 1 << 15,
};

/** What perf.data says that perf script's columns depend on. */
struct cst_pscript_file {
	bool perf_data;            /* a perf.data file (else: perf's defaults) */
	bool has_time, has_cpu;    /* the cs_etm event samples time and CPU */
	bool timeless;             /* recorded without timestamps: perf decodes per thread
				      and its samples carry no time */
	bool has_aux_time;         /* an AUX record carries a time: */
	uint64_t aux_time;         /* the latest one, perf 6.1's time of every sample */
	char modifiers[8];         /* ":u", ":k", "" as perf names the synthesized events */
	unsigned name_len;         /* the longest event name of the file (perf's evlist) */
	char etm_name[128];        /* the cs_etm event's name, as perf names it */
	char notime_name[128];     /* the first event of the file without sample times */
};

/** Read @path's attrs, event names and AUX records into @f (zeroed first; a
 *  file that is no perf.data only clears @f). Errors: -cste_invalid, -cste_io,
 *  -cste_format, -cste_nomem. */
int cst_pscript_file_read(const char *path, struct cst_pscript_file *f, const struct cst_log *log);

/** perf's -F LIST into *@fields: "ip,sym" replaces @defaults, "+flags" and
 *  "-time" change them (perf's "hw:" prefix is taken too). On an unknown field
 *  returns -cste_not_found with *@bad (when given) at the name. */
int cst_pscript_fields_parse(const char *list, unsigned defaults, unsigned *fields,
			     const char **bad);
/** The fields perf script prints by default for cs_etm samples of @f. */
unsigned cst_pscript_fields_default(const struct cst_pscript_file *f);

struct cst_pscript_opts {
	size_t sz;                 /* sizeof(struct cst_pscript_opts) */
	const struct cst_sym_filter_opts *filter; /* NULL: everything */
	const struct cst_pscript_file *file;      /* NULL: perf's defaults */
	const struct cst_trace *trace;            /* the sources' protocols (exceptions) */
	unsigned fields;           /* cst_pscript_field bits */
	bool instructions;         /* --itrace=i: a sample every @period instructions */
	bool branches;             /* --itrace=b (c, r: perf 6.1's cs_etm gives every branch) */
	bool errors;               /* --itrace=e: lost trace as perf prints decoder errors */
	bool ns;                   /* times to the nanosecond */
	uint64_t period;           /* instructions per instruction sample (1 or more) */
};

struct cst_pscript;

/** Allocate perf script's output over @sym's stream, lines to @write.
 *  Errors: -cste_invalid, -cste_nomem. */
int cst_pscript_alloc(struct cst_pscript **out, struct cst_symbolizer *sym,
		      cst_script_write_fn write, void *ctx, const struct cst_pscript_opts *opts);
void cst_pscript_free(struct cst_pscript *p);
/** One symbolized element (a cst_sym_elem_fn). Errors: -cste_io. */
int cst_pscript_add(void *p, const struct cst_sym_elem *se);
/** End the stream (perf flushes nothing at the end: no line comes of it). */
int cst_pscript_finish(struct cst_pscript *p);
/** Run @session into @p: as cst_symbolizer_run(sym, session, fn, ctx), where @fn
 *  passes each element on to cst_pscript_add(@p). Where the session decodes on
 *  several threads and the lines allow it (branch samples only, nothing
 *  filtered), the lines of what those threads decode are made there too, and
 *  their bytes go to @write in stream order (cst_symbolizer_run_views), each
 *  block counting the elements it stands for. The output is the same. */
int cst_pscript_run(struct cst_pscript *p, struct cst_session *session, cst_sym_elem_fn fn,
		    void *ctx, cst_lines_fn write, void *write_ctx);

#ifdef __cplusplus
}
#endif

#endif /* CSTRACE_SYMBOLIZE_H */
