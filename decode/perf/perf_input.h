/* The door of decode/perf/: the perf.data input behind cst_session (AUXTRACE_INFO
 * to trace sources, AUX fragments to engine runs, sideband to thread
 * attribution). */
#ifndef CSTRACE_DECODE_PERF_PERF_INPUT_H
#define CSTRACE_DECODE_PERF_PERF_INPUT_H

#include "engine/engine.h"

struct cst_perf_input;
struct dec_views; /* run/run.h */

/** Open a perf.data file: read its header and cs_etm metadata, and add one
 *  trace source per CPU to @trace. Its decoders use @engines (NULL: OpenCSD's
 *  only). Returns 0 or a negative error (logged). */
int dec_perf_input_open(struct cst_perf_input **out, const char *path,
			const struct cst_session_opts *opts, const struct dec_engines *engines,
			struct cst_trace *trace);

/** Decode every AUX fragment, one decoder reset per fragment, in file order or
 *  merged across queues by time (dec_perf_input_order), delivering sideband before
 *  the elements it applies to, every element carrying pid/tid/cpu. Fills @stats.
 *  Returns 0, a positive stop value, or an error. */
int dec_perf_input_run(struct cst_perf_input *in, const struct cst_trace *trace,
		       cst_elem_fn elem_fn, cst_sideband_fn sb_fn, void *ctx,
		       struct cst_decoder_stats *stats);

/** As dec_perf_input_run, with the fragments decoded on threads (as for
 *  printing) and their elements, copied, replayed to @elem_fn in order on this
 *  thread. With @merged, @elem_fn joins runs of ranges (dec_merge) and may get
 *  them joined in pieces: the workers of a fragment join its runs before they
 *  hand them over. @crash: the caller's crash watch (split_out.crash), or NULL;
 *  with it, a crash in OpenCSD on a worker returns -cste_crashed after the
 *  elements decoded before it. */
int dec_perf_input_run_apart(struct cst_perf_input *in, const struct cst_trace *trace,
			     cst_elem_fn elem_fn, cst_sideband_fn sb_fn, void *ctx, bool merged,
			     struct cst_crash_watch *crash, struct cst_decoder_stats *stats);

/** As dec_perf_input_run_apart, with @views printing on the workers: what they
 *  defer goes to @elem_fn as the elements of dec_perf_input_run_apart do, and
 *  what they print to @views->write, in the same order. */
int dec_perf_input_run_views(struct cst_perf_input *in, const struct cst_trace *trace,
			     cst_elem_fn elem_fn, cst_sideband_fn sb_fn, void *ctx, bool merged,
			     struct cst_crash_watch *crash, const struct dec_views *views,
			     struct cst_decoder_stats *stats);

/** Whether dec_perf_input_run_apart would decode most of the trace on threads:
 *  file order, no --id, and three quarters of the AUX bytes in buffers big enough
 *  to be split, each one source's (with several CPUs in formatted data, their
 *  frames are read to know). Where it would not, a decoding thread of its own
 *  beside the caller's (run/run.h) gains more. */
bool dec_perf_input_splits(const struct cst_perf_input *in);

/** As dec_perf_input_run without sideband, for cst_session_run_lines: @elem_fn
 *  (which prints with @print and hands the bytes to @write) gets the elements
 *  decoded on this thread; a fragment decoded on threads is printed there with
 *  @print and its bytes go straight to @write, in the same order. */
int dec_perf_input_run_lines(struct cst_perf_input *in, const struct cst_trace *trace,
			     cst_elem_fn elem_fn, void *ctx, cst_elem_print_fn print,
			     void *print_ctx, cst_lines_fn write, void *write_ctx,
			     struct cst_decoder_stats *stats);

/** List the packets of every AUX fragment. */
int dec_perf_input_dump(struct cst_perf_input *in, const struct cst_trace *trace,
			cst_packet_fn fn, void *ctx);

/** The order runs deliver elements in: cst_order_time or cst_order_file. */
enum cst_order dec_perf_input_order(const struct cst_perf_input *in);
/** The file's TIME_CONV, when perf would apply it to trace timestamps. */
bool dec_perf_input_time_conv(const struct cst_perf_input *in, struct cst_perf_time_conv *tc);

void dec_perf_input_free(struct cst_perf_input *in);

#endif
