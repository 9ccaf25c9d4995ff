/* Internal to decode/perf/: the order in which Linux perf 6.1 delivers the trace of a
 * timestamped cs_etm recording (ETM_OPT_TS set), so that cstrace's output can be
 * compared with perf script line by line.
 *
 * perf decodes each AUX queue (one per CPU ring) with its own decoder and merges
 * the queues by an estimated time (tools/perf/util/cs-etm.c, cs_etm__process_queues,
 * and cs-etm-decoder.c): after every instruction range the decoder stops with an
 * estimate "last hardware timestamp + instructions executed since"; a min-heap of
 * one entry per queue picks which queue goes on. This module models exactly that
 * over cstrace's own elements: decoding never pauses, elements are held per queue
 * and handed on in perf's order. Where perf 6.1 throws trace away (before a queue's
 * first timestamp; what OpenCSD still held when perf's decoder stopped on a
 * fragment's last bytes), cstrace keeps it: it goes out with the chunk perf would
 * have put it in, and what perf never saw takes no part in the order. */
#ifndef CSTRACE_DECODE_PERF_ORDER_H
#define CSTRACE_DECODE_PERF_ORDER_H

#include <stdbool.h>
#include <stdint.h>

#include "cstrace/decode.h"

struct perf_order;

/** Decode more of queue @queue: push its next elements (dec_perf_order_push) and
 *  dec_perf_order_end_fragment() where an AUX fragment ends. Returns 0, 1 when the
 *  queue has nothing left, or a negative error / positive stop value. */
typedef int (*perf_order_fill_fn)(void *ctx, unsigned queue);

/** Which context IDs carry a thread ID (perf resets its time estimate on them). */
enum perf_order_ctx { perf_order_ctx_none, perf_order_ctx_ctxid, perf_order_ctx_vmid };

/** Each queue of the order is a model of its own: what it holds, its time
 *  estimates and the chunks it hands on depend on its own elements only, so a
 *  queue may run on any one thread at a time (dec_perf_order_queue_fns,
 *  dec_perf_order_next) and the merge (dec_perf_order_merge) only picks whose
 *  chunk goes next. @fill and @emit are every queue's until set otherwise. */
struct perf_order *dec_perf_order_alloc(unsigned nqueues, enum perf_order_ctx ctx_kind,
				    perf_order_fill_fn fill, cst_elem_fn emit, void *ctx);
void dec_perf_order_free(struct perf_order *o);

/** Hold at most about @bytes of elements in memory (4 MiB unless set), shared out
 *  among the queues: what waits longer goes to a temporary file (one per queue)
 *  and comes back in order. */
void dec_perf_order_set_hold_limit(struct perf_order *o, size_t bytes);

/** Whether the elements handed on carry the OpenCSD element behind each (yes
 *  unless set): only a printer of OpenCSD's own text needs it, and its copy is a
 *  third of what each held element takes. */
void dec_perf_order_keep_ocsd(struct perf_order *o, bool keep);

/** Hold a copy of @e (and of the OpenCSD element behind it) for @queue. Returns
 *  the copy, which the caller may still amend, or NULL (no memory). */
struct cst_elem *dec_perf_order_push(struct perf_order *o, unsigned queue,
				     const struct cst_elem *e);
/** What @queue pushes from here on comes out of its fragment's last unit of input
 *  (the last formatter frame; the last byte of unformatted trace). perf feeds
 *  OpenCSD all the bytes it has left and asks it for held elements only while
 *  bytes remain (cs_etm_decoder__process_data_block): when perf's decoder stops on
 *  such an element, OpenCSD has taken every byte, and what it still holds for this
 *  fragment never reaches perf (the decoder is reset for the next one). */
int dec_perf_order_last_bytes(struct perf_order *o, unsigned queue);
/** All of the fragment's bytes are in: what @queue pushes from here to
 *  dec_perf_order_end_fragment() came out only at the end of trace, which perf never
 *  sends. */
int dec_perf_order_end_data(struct perf_order *o, unsigned queue);
/** The AUX fragment being decoded for @queue ends here. */
int dec_perf_order_end_fragment(struct perf_order *o, unsigned queue);

/** From here on @queue's pieces are decoded by @fill and its chunks handed to
 *  @emit, with @ctx (say, by a thread that runs the queue ahead of the merge). */
void dec_perf_order_queue_fns(struct perf_order *o, unsigned queue, perf_order_fill_fn fill,
			      cst_elem_fn emit, void *ctx);

/** What @emit may return to pause the chunk being handed on after the element it
 *  took, and @fill after a piece (what it pushed stays): dec_perf_order_next
 *  returns it, and goes on from there when called again. */
#define PERF_ORDER_PAUSE 0x5041

/** What @emit returns for a stop value of its own caller's (kept aside by it):
 *  passed on as any stop value is, but never 1, which says a queue ended, nor
 *  PERF_ORDER_PAUSE. */
#define PERF_ORDER_STOP 0x5053

/** Hand on queue @queue's next chunk: what perf delivers between two turns of the
 *  queue in the merge. Returns 0 with the time estimate the queue then waits in the
 *  merge with (@key), 1 when the queue has ended, PERF_ORDER_PAUSE, or the first
 *  error or other stop value of its @fill or @emit. */
int dec_perf_order_next(struct perf_order *o, unsigned queue, uint64_t *key);

/** The merge: @chunk(ctx, q, key) hands on queue q's next chunk and answers as
 *  dec_perf_order_next does (never pausing). Each queue's first chunk goes in queue
 *  order, then the queue with the least estimate goes next, ties as in perf.
 *  Returns 0, or the first other value of @chunk. */
typedef int (*perf_order_chunk_fn)(void *ctx, unsigned queue, uint64_t *key);
int dec_perf_order_merge(unsigned nqueues, perf_order_chunk_fn chunk, void *ctx);

/** Run all queues to their end on this thread, handing elements to their @emit in
 *  perf's order (dec_perf_order_merge over dec_perf_order_next). Returns 0, or the
 *  first non-zero value of a @fill or @emit. */
int dec_perf_order_run(struct perf_order *o);

#endif
