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

struct perf_order *dec_perf_order_alloc(unsigned nqueues, enum perf_order_ctx ctx_kind,
				    perf_order_fill_fn fill, cst_elem_fn emit, void *ctx);
void dec_perf_order_free(struct perf_order *o);

/** Hold at most about @bytes of elements in memory (4 MiB unless set): what
 *  waits longer goes to a temporary file and comes back in order. */
void dec_perf_order_set_hold_limit(struct perf_order *o, size_t bytes);

/** Whether the elements handed on carry the OpenCSD element behind each (yes
 *  unless set): only a printer of OpenCSD's own text needs it, and its copy is a
 *  third of what each held element takes. */
void dec_perf_order_keep_ocsd(struct perf_order *o, bool keep);

/** Hold a copy of @e (and of the OpenCSD element behind it) for @queue. */
int dec_perf_order_push(struct perf_order *o, unsigned queue, const struct cst_elem *e);
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

/** Run all queues to their end, handing elements to @emit in perf's order.
 *  Returns 0, or the first non-zero value of @fill or @emit. */
int dec_perf_order_run(struct perf_order *o);

#endif
