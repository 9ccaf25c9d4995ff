/* The door of decode/run/: running the engine (engine/engine.h) on several
 * threads with the output of one, and what sits between a decode and its
 * caller. Four ways: a buffer cut into chunks decoded side by side and joined
 * (split.c, split_join.c); a whole decode on a thread of its own, handed over in
 * order (pipe.c); the views over what such a decode hands over, cut into
 * stretches afterwards (stretch.c); and runs of ranges joined into one element
 * (merge.c). Where threads run beside the caller's, a crash of one can be
 * contained (crash.h). */
#ifndef CSTRACE_DECODE_RUN_RUN_H
#define CSTRACE_DECODE_RUN_RUN_H

#include "engine/engine.h"

/* ------------------------------------------------------------- runs of ranges */

/* Runs of instruction ranges that continue one another delivered as one range
 * (cst_session_opts.merge_ranges, cst_elem_continues). Sits in front of
 * @elem_fn and @sb_fn: pass dec_merge_elem / dec_merge_sb with the struct as
 * their context, then dec_merge_end. */
struct dec_merge {
	cst_elem_fn elem_fn;
	cst_sideband_fn sb_fn;
	void *ctx;
	struct cst_elem run; /* the run so far, while @held */
	bool held;
};

/* Joining runs joined this way again gives what joining their ranges one by one
 * gives (whether two ranges join depends only on the end of the first and the
 * start of the second): runs may be joined in pieces (split workers) and the
 * pieces again. */
int dec_merge_elem(void *merge, const struct cst_elem *e);
int dec_merge_sb(void *merge, const struct cst_sideband *sb);
/* The input ended: deliver the run held. Returns 0 or @elem_fn's value. */
int dec_merge_end(struct dec_merge *m);

/* ------------------------------------------------------------- a split buffer */

#define SPLIT_CHUNK (64u * 1024u) /* chunk size when none is asked for */
#define SPLIT_LINE 4096 /* the longest a print function may make of one element */

/* Print @e with @print into @at, which has SPLIT_LINE bytes: the length made,
 * nothing for an element the print function skips (0 or negative), and never
 * more than the room whatever the function returns. */
static inline size_t dec_print_line(cst_elem_print_fn print, void *ctx, const struct cst_elem *e,
				    char *at)
{
	int n = print(ctx, e, at, SPLIT_LINE);

	return n <= 0 ? 0 : n < SPLIT_LINE ? (size_t)n : SPLIT_LINE;
}

/* What the replay of a split decode hands the caller: elements to @fn, or
 * printed bytes to @write. */
struct split_out {
	cst_elem_fn fn;
	void *ctx;
	cst_lines_fn write;
	void *write_ctx;
	/* @fn joins runs of ranges (dec_merge): they may come joined in pieces; the
	 * count of elements delivered still counts the decoder's */
	bool merged;
	/* The caller's crash watch, when the replay runs on the caller's thread
	 * (cst_session_watch_crashes), or NULL. A crash in OpenCSD on a worker
	 * stops the replay between two blocks: it returns -cste_crashed at once,
	 * leaving the crashed worker and what it uses alone (the process is about
	 * to end). */
	struct cst_crash_watch *crash;
	/* the engine of the workers' decoders (the session's workers engine):
	 * trace cstrace's decoders do not cover sends the buffer to one thread
	 * (split_serial) */
	struct dec_engine engine;
	/* Views print on the workers (cst_session_run_views), else NULL: what they
	 * print goes to @write (set too) and their state to @view->adopt, and the
	 * elements they defer to @fn, in stream order. Before a state is adopted,
	 * @write is given nothing (no bytes, no elements): what @fn still holds
	 * (a run its dec_merge may yet join) goes out first. */
	const struct cst_view_ops *view;
	void *view_ctx;
};

/* Views on the workers (cst_session_run_views) as a split run's caller passes
 * them on: the ops and the writer of their bytes. */
struct dec_views {
	const struct cst_view_ops *ops;
	void *ctx;
	cst_lines_fn write;
	void *write_ctx;
};

/* ------------------------------------------------------------- a stream in stretches */

/* Views over an element stream that comes in its order, not cut before it is
 * decoded (stretch.c): what a merge of many decoders makes (perf.data in time
 * order), or a perf.data whose fragments are too small to split, as the caller's
 * thread gets it. It is cut into stretches of one trace ID each; workers run a
 * view over each, and the caller's thread takes them back in order as split
 * runs are (split_out.view): deferred elements to @fn, bytes and states to
 * @views. A stretch whose view gives up, or whose state the caller's view
 * refuses from some point, goes to @fn from there. Sideband goes to @sb_fn once
 * everything before it went out, and the element a loss goes to (the next of
 * its CPU) to @fn, so that the caller's symbolizer alone changes and reads
 * what sideband says. A view with cst_view_ops.learn is first told the last
 * elements of its stretch's trace ID and its last timestamp. */
struct dec_stretches;

struct dec_stretch_stats {
	uint64_t stretches;  /* handed to the workers */
	uint64_t viewed;     /* elements their views printed */
	uint64_t deferred;   /* elements their views deferred */
	uint64_t serial;     /* elements of stretches given up or refused */
	uint64_t refused;    /* states the caller's view refused */
	uint64_t direct;     /* elements that took a loss */
};

/* @threads workers (at most 16). 0 or a negative error. */
int dec_stretches_open(struct dec_stretches **out, const struct dec_views *views,
		       unsigned threads, cst_elem_fn fn, cst_sideband_fn sb_fn, void *ctx);
/* The next element (a cst_elem_fn): copied into the stretch being filled. 0,
 * or a stop value or error from what was taken back meanwhile. */
int dec_stretches_elem(void *stretches, const struct cst_elem *e);
/* The next sideband record (a cst_sideband_fn). */
int dec_stretches_sb(void *stretches, const struct cst_sideband *sb);
/* Everything handed in goes out, in order. */
int dec_stretches_drain(struct dec_stretches *ss);
void dec_stretches_get_stats(const struct dec_stretches *ss, struct dec_stretch_stats *st);
/* Ends the workers; what was not drained is dropped. */
void dec_stretches_close(struct dec_stretches *ss);

enum split_outcome {
	split_unsplittable, /* not one source in frames or unformatted: @dec0 untouched */
	split_done,         /* decoded (or failed) on threads: @dec0 freed */
	split_serial,       /* a decoder error: decode serially, past *delivered elements;
			       @dec0 freed, and its span's messages told already */
};

/* Decode @dec0's buffer (a decoder just made for it, with the elements callback
 * left to this) on @threads threads in chunks of about @chunk bytes, delivering to
 * @out exactly what cst_decoder_run would (with @print set, the workers print each
 * element and @out->write gets the bytes). Counts into @stats. Returns 0, a stop
 * value of @fn or an error. The buffer is cut into chunks; a worker decodes a
 * chunk from its start, finds sync, and its elements join the stream where the
 * decoder of the chunk before agrees with them element for element (split.h). */
int dec_split_run(struct cst_decoder *dec0, unsigned threads, uint64_t chunk,
		  const struct split_out *out, cst_elem_print_fn print, void *print_ctx,
		  struct cst_decoder_stats *stats, enum split_outcome *outcome,
		  uint64_t *delivered);

/* Where the bytes of a split run come from, when not the decoder's buffer file: a
 * span of an open file (perf.data: one AUX fragment), fed with offsets counted
 * from @origin (a serial run's). */
struct split_span {
	int fd;
	uint64_t pos, end, origin;
};

/* Code memory of each worker's own, when the decoders' is not to be shared: @open
 * makes a worker's memory context (its decoders' mem_ctx, read with @read) and
 * @elem sees each element the worker's decoder makes, first (a context element
 * changes whose memory it reads), and may fill in its pid, tid, cpu and fragment:
 * a worker's head is compared with them. With @reset, each worker's decoder starts as a
 * reset one (a serial run reuses one decoder from fragment to fragment, and
 * OpenCSD tells a reset's first gap apart from a new decoder's). */
struct split_mem {
	void *(*open)(void *ctx);
	void (*close)(void *wctx);
	void (*elem)(void *wctx, struct cst_elem *e);
	cst_mem_read_fn read;
	void *ctx;
	bool reset;
};

/* As dec_split_run, over @span instead of @dec0's buffer file, and with each
 * worker's memory from @mem (NULL: @dec0's). @dec0 only serves as the model of
 * the workers' decoders when @mem is set (its memory is not thread-safe). */
int dec_split_run_span(struct cst_decoder *dec0, unsigned threads, uint64_t chunk,
		       const struct split_span *span, const struct split_mem *mem,
		       const struct split_out *out, cst_elem_print_fn print, void *print_ctx,
		       struct cst_decoder_stats *stats, enum split_outcome *outcome,
		       uint64_t *delivered);

/* After split_serial, the serial decode passes what the split run delivered: those
 * elements are not given twice, and the decoder messages met meanwhile (the split
 * run met them too and did not tell them) are held back until then; @quiet holds
 * them all back (opening the decoder again says what opening it said before). */
struct split_skip {
	uint64_t left;
	bool quiet;
	struct cst_log user; /* where messages go once past */
};

/* Is this element one that went out already? (Counts it off.) */
static inline bool dec_split_skip_elem(struct split_skip *k)
{
	if (!k->left)
		return false;
	k->left--;
	return true;
}

/* A cst_log function over a struct split_skip. */
void dec_split_skip_log(void *ctx, enum cst_log_level level, const char *msg);

/* ------------------------------------------------------------- a pipe */

struct dec_pipe;

/* The serial decode the producer runs, with the callbacks it must use. */
typedef int (*dec_pipe_produce_fn)(void *ctx, cst_elem_fn elem_fn, cst_sideband_fn sb_fn,
				   void *cb_ctx);

/* A decode on a thread of its own (the producer): it runs @produce with
 * callbacks that copy each element, sideband record, log message and progress
 * report into batches; the caller's thread (the consumer) takes the batches in
 * order and hands each item to the caller's callbacks, @log and @progress, so
 * that everything the caller sees, and in which order, is what the serial
 * decode would have shown it, while the next elements are decoded. */
struct dec_pipe_run {
	dec_pipe_produce_fn produce;
	void *produce_ctx;
	cst_elem_fn elem_fn;
	cst_sideband_fn sb_fn;
	void *ctx;
	/* where messages and progress go on the consumer's side */
	const struct cst_log *log;
	void (*progress)(void *ctx, uint64_t done, uint64_t total);
	void *progress_ctx;
	/* the caller's crash watch (cst_session_watch_crashes), or NULL */
	struct cst_crash_watch *crash;
	/* a fence per item even where the kernel offers membarrier (tests) */
	bool full_fence;
};

/* Run @r. *@active points at the pipe while it runs (NULL before and after), for
 * dec_pipe_log and dec_pipe_progress. Returns what the serial decode would have:
 * 0, a callback's stop value or an error; -cste_crashed when the producer crashed
 * (after every item it had made was delivered). *@started is false when no thread
 * could be started (nothing was decoded): the caller decodes serially then. */
int dec_pipe_run(const struct dec_pipe_run *r, struct dec_pipe **active, bool *started);

/* On the producer's thread (else false): queue a message or progress report in
 * order with the elements, and return true. */
bool dec_pipe_log(struct dec_pipe *p, enum cst_log_level level, const char *msg);
bool dec_pipe_progress(struct dec_pipe *p, uint64_t done, uint64_t total);

#endif
