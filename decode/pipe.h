/* Internal to decode/: a session decoded on a thread of its own (pipe.c).
 *
 * The decoding thread (the producer) runs the session's decode (a fragment split
 * on workers where it can be, their elements replayed in order) with callbacks
 * that copy each element, sideband record, log message and progress report into
 * batches; the caller's thread (the consumer) takes the batches in order and
 * hands each item to the caller's callbacks, its log and its progress function,
 * so that everything the caller sees, and in which order, is what the serial
 * decode would have shown it. The caller's thread symbolizes and writes while the
 * next elements are decoded. */
#ifndef CSTRACE_DECODE_PIPE_H
#define CSTRACE_DECODE_PIPE_H

#include <signal.h>

#include "cstrace/decode.h"

struct dec_pipe;

/* The serial decode the producer runs, with the callbacks it must use. */
typedef int (*dec_pipe_produce_fn)(void *ctx, cst_elem_fn elem_fn, cst_sideband_fn sb_fn,
				   void *cb_ctx);

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
	/* cst_session_opts.pipe_state */
	volatile sig_atomic_t *state;
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
