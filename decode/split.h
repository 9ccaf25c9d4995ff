/* Internal to decode/: one trace stream decoded on several threads (split.c, the
 * workers; split_join.c, their element lists and the in-order replay).
 *
 * The buffer is cut into chunks. A worker decodes a chunk with its own OpenCSD
 * tree from the chunk's start; what it produces before it first has sync is
 * thrown away, and it publishes the offset of its first synced element and the
 * elements that follow (the "head"). The worker of the chunk before decodes on
 * past its own end until its elements reach that offset, and then compares what
 * it decodes from there with the head: only when they agree element for element
 * does it stop and the stream go on with the next worker's elements. If they
 * differ, if the next chunk holds no sync, or if no worker has started it yet,
 * the worker takes that chunk over and decodes it itself, as a serial decoder
 * would. Any decoder error (corrupt trace) makes the whole buffer decode serially:
 * OpenCSD 1.3.3 keeps its last error in one process-wide logger. */
#ifndef CSTRACE_DECODE_SPLIT_H
#define CSTRACE_DECODE_SPLIT_H

#include "decoder_int.h"

#include <pthread.h>
#include <signal.h>

/* elements of a synced chunk compared with the decode of the chunk before */
#define SPLIT_VERIFY 64
/* Elements a block of a list holds. Each block handed over costs the lock and
 * often a wake-up: 1024 to 4096 (with the pipe's batches, and the same element
 * counts held and taken) took armhf report from 2.04 to 1.92 s of CPU. */
#define SPLIT_BLOCK 4096
#define SPLIT_BYTES (64u * 1024u)
/* blocks the list being output may hold before its worker waits, and blocks the
 * output takes off a list at a time: of printed text, and of elements (the same
 * element counts as 64 and 8 blocks of 1024 were) */
#define SPLIT_HELD 64
#define SPLIT_HELD_ELEMS 16
/* bytes all other lists may hold before their workers wait: a dense 64 KiB chunk
 * makes 20 MB of element copies */
#define SPLIT_HELD_BYTES (24u * 1024u * 1024u)
#define SPLIT_TAKE 8
#define SPLIT_TAKE_ELEMS 2
#define SPLIT_CHUNK (64u * 1024u) /* chunk size when none is asked for */
#define SPLIT_LINE 4096 /* the longest a print function may make of one element */

/* An element held for the in-order replay, with the OpenCSD element behind it. */
struct split_entry {
	struct cst_elem e;
	ocsd_generic_trace_elem o;
	bool has_o;
};

/* A piece of a worker's output: elements (copies), or the bytes a print function
 * made of them (cst_session_run_lines), with their count and totals. */
struct split_block {
	struct split_block *next;
	unsigned n;
	/* SPLIT_BLOCK elements, or NULL when printing; without the OpenCSD element
	 * (cst_session_run's elements from other threads carry none) */
	struct cst_elem *v;
	char *bytes;           /* SPLIT_BYTES, or NULL for elements */
	size_t len;
	uint64_t offset; /* of the last element but an end of trace */
	bool has_offset;
	struct cst_decoder_stats st;
};

enum chunk_state {
	chunk_unclaimed, /* no worker yet */
	chunk_running,   /* its worker looks for sync and its head */
	chunk_published, /* sync and head known */
	chunk_none,      /* no usable sync in the chunk: the worker before takes it */
	chunk_taken,     /* decoded by the worker of an earlier chunk */
};

struct split_chunk {
	uint64_t start;
	enum chunk_state state;
	bool abandon; /* its worker must stop: an earlier worker took the chunk */
	uint64_t sync;
	/* SPLIT_VERIFY elements from its sync on, for the worker before to compare
	 * its overlap with: made by this chunk's worker, freed (dec_split_head_done)
	 * once that worker writes no more of it and the output has gone past the
	 * lists that end here (no worker meets the chunk again): a head for every
	 * chunk of a 1 GiB buffer was 278 MiB */
	struct split_entry *head;
	bool head_written, head_read;
	/* the element list of the worker that started here, as it grows */
	struct split_block *first, *last;
	unsigned held; /* blocks in the list (not yet taken by the output) */
	size_t held_bytes; /* what they take */
	bool done;   /* the list is complete; the stream goes on with chunk `next` */
	size_t next; /* nchunks: the end */
	int ret;     /* an error or stop value ending the list */
	bool followed; /* its worker's decoder used cstrace's follower */
};

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

struct split {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	const struct cst_trace *trace;
	int buffer;
	struct cst_decoder_opts dopts;
	int fd;
	uint64_t begin, end;
	enum cst_buffer_format format;
	uint8_t trace_id;
	struct split_chunk *chunks;
	size_t nchunks;
	size_t next_start; /* the next chunk an idle thread may start */
	size_t replaying;  /* the chunk whose list is being replayed */
	size_t ahead;      /* chunks started at most this far past `replaying` */
	size_t held_bytes; /* in the lists of all chunks but `replaying` */
	uint64_t chunk;    /* bytes per chunk (the last may be shorter) */
	bool abort;        /* stop all workers */
	bool serial;       /* a decoder error: decode the buffer serially instead */
	int err;           /* the first error a worker met (reading, memory) */
	struct cst_decoder *dec0;
	uint64_t frame_ids[2]; /* what the first chunk's decoder saw before sync */
	/* blocks replayed, for workers to fill again: fresh memory for every
	 * element costs more in page faults than decoding it */
	struct split_block *spare;
	size_t nspare;
	/* printing on the workers (cst_session_run_lines), else NULL */
	cst_elem_print_fn print;
	void *print_ctx;
	const struct split_mem *mem; /* or NULL: the decoders' own memory */
	enum dec_follow follow; /* split_out.follow */
	/* the workers join runs of ranges (merge.h) before they keep them: the
	 * caller joins them anyway, and fewer elements travel (split_out.merged) */
	bool merge;
	/* split_out.crash_state; workers that have ended (a crashed one never does) */
	volatile sig_atomic_t *crash_state;
	unsigned exited;
};

/* split_join.c: append @e (a run of ranges joined on the worker counts as the
 * decoder's ranges it joins) to a list being filled by one worker (@cur is its
 * private block, published to @c when full or on flush). */
int dec_split_append(struct split *sp, struct split_chunk *c, struct split_block **cur,
		     const struct cst_elem *e);
void dec_split_flush(struct split *sp, struct split_chunk *c, struct split_block **cur);
/* Under the split's lock: chunk @c's head is no longer written (@written) or no
 * longer read (the output is past it); freed when both. */
void dec_split_head_done(struct split_chunk *c, bool written);
/* Whether two elements are the same (every field a view can print). */
bool dec_split_same(const struct split_entry *a, const struct cst_elem *b);
/* Copy @e into @to, with the OpenCSD element behind it. */
void dec_split_copy(struct split_entry *to, const struct cst_elem *e);
/* What the replay hands the caller: elements to @fn, or printed bytes to @write. */
struct split_out {
	cst_elem_fn fn;
	void *ctx;
	cst_lines_fn write;
	void *write_ctx;
	/* @fn joins runs of ranges (dec_merge): they may come joined in pieces; the
	 * count of elements delivered still counts the decoder's */
	bool merged;
	/* The caller's crash handler, when the replay runs on the caller's thread
	 * (cst_session_opts.pipe_state): -1 while the workers run. A handler that
	 * catches OpenCSD crashing on a worker sets it to 1 and waits; the replay
	 * then stops between two blocks and returns -cste_crashed at once, leaving
	 * the crashed worker and what it uses alone (the process is about to end). */
	volatile sig_atomic_t *crash_state;
	/* how the workers' decoders use cstrace's own (dec_follow_quiet: where
	 * they cover the source; the same elements, carrying no OpenCSD element;
	 * trace they do not cover sends the buffer to one thread, split_serial) */
	enum dec_follow follow;
};

/* Replay the lists in stream order; counts into @stats. Returns 0, the callback's
 * stop value, an error, or -cste_crashed (split_out.crash_state); *delivered
 * tells how many elements went out. */
int dec_split_replay(struct split *sp, const struct split_out *out,
		     struct cst_decoder_stats *stats, uint64_t *delivered);
void dec_split_free_lists(struct split *sp);

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
 * value of @fn or an error. */
int dec_split_run(struct cst_decoder *dec0, unsigned threads, uint64_t chunk,
		  const struct split_out *out, cst_elem_print_fn print, void *print_ctx,
		  struct cst_decoder_stats *stats, enum split_outcome *outcome,
		  uint64_t *delivered);

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

/* The trace IDs the 16-byte frames of [@pos, @end) of @fd name, added into @ids.
 * Returns 0, -cste_io or -cste_nomem. */
int dec_split_scan_ids(int fd, uint64_t pos, uint64_t end, uint64_t ids[2]);

/* split.c: the worker threads */
void *dec_split_worker(void *arg);

#endif
