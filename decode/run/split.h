/* Internal to decode/run/: one trace stream decoded on several threads (split.c, the
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
#ifndef CSTRACE_DECODE_RUN_SPLIT_H
#define CSTRACE_DECODE_RUN_SPLIT_H

#include "crash.h"
#include "run.h"

#include <pthread.h>

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
/* Deferred elements a view block holds: a stretch defers its first few, but a
 * view may defer whole stretches (blocks of 64 made the caller's thread wait
 * and wake for every one). */
#define SPLIT_VIEW_ELEMS 512
#define SPLIT_TAKE 8
#define SPLIT_TAKE_ELEMS 2

/* A piece of a worker's output: elements (copies), or the bytes a print function
 * made of them (cst_session_run_lines), with their count and totals. */
struct split_block {
	struct split_block *next;
	unsigned n;
	/* SPLIT_BLOCK elements, or NULL when printing; without the OpenCSD element
	 * (cst_session_run's elements from other threads carry none) */
	struct cst_elem *v;
	char *bytes;           /* SPLIT_BYTES (or @cap), or NULL for elements */
	size_t len, cap;
	/* With views (split.view), a block holds deferred elements (@elems: @n of
	 * them in @v) or what views printed: the bytes of the elements it counts
	 * (@viewed of them, after the workers' joining of runs), then the @state
	 * the caller's view takes on after them. */
	bool elems;
	unsigned viewed;
	unsigned char *state;
	size_t state_len;
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
	struct dec_held *head;
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
	/* views on the workers (split_out.view), else NULL */
	const struct cst_view_ops *view;
	void *view_ctx;
	const struct split_mem *mem; /* or NULL: the decoders' own memory */
	struct dec_engine engine; /* split_out.engine */
	/* the workers join runs of ranges (merge.h) before they keep them: the
	 * caller joins them anyway, and fewer elements travel (split_out.merged) */
	bool merge;
	/* split_out.crash; workers that have ended (a crashed one never does) */
	struct cst_crash_watch *crash;
	unsigned exited;
};

/* split_join.c: append @e (a run of ranges joined on the worker counts as the
 * decoder's ranges it joins) to a list being filled by one worker (@cur is its
 * private block, published to @c when full or on flush). */
int dec_split_append(struct split *sp, struct split_chunk *c, struct split_block **cur,
		     const struct cst_elem *e);
void dec_split_flush(struct split *sp, struct split_chunk *c, struct split_block **cur);
/* With views: @e, which @view handles or defers (@defer, or no @view: deferred
 * as it is), into the list. Returns 0, cst_view_give_up or an error. */
int dec_split_view_keep(struct split *sp, struct split_chunk *c, struct split_block **cur,
			void *view, bool defer, const struct cst_elem *e);
/* @len bytes a view printed, into the block being filled (a block of bytes). */
int dec_split_view_bytes(struct split *sp, struct split_chunk *c, struct split_block **cur,
			 const char *bytes, size_t len);
/* The block being filled goes out, with @view's state when it holds bytes. */
void dec_split_view_flush(struct split *sp, struct split_chunk *c, struct split_block **cur,
			  void *view);
/* Under the split's lock: chunk @c's head is no longer written (@written) or no
 * longer read (the output is past it); freed when both. */
void dec_split_head_done(struct split_chunk *c, bool written);
/* Replay the lists in stream order; counts into @stats. Returns 0, the callback's
 * stop value, an error, or -cste_crashed (split_out.crash_state); *delivered
 * tells how many elements went out. */
int dec_split_replay(struct split *sp, const struct split_out *out,
		     struct cst_decoder_stats *stats, uint64_t *delivered);
void dec_split_free_lists(struct split *sp);

/* split.c: the worker threads */
void *dec_split_worker(void *arg);

#endif
