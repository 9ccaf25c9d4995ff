/* The door of decode/engine/: what the other rooms of decode/ use of the engine,
 * which turns a buffer's trace bytes into elements. OpenCSD frames and parses the
 * trace; OpenCSD's decoders, or cstrace's own where they cover a source and the
 * engine asks for them, follow the packets through the code. Only engine/
 * calls OpenCSD. */
#ifndef CSTRACE_DECODE_ENGINE_ENGINE_H
#define CSTRACE_DECODE_ENGINE_ENGINE_H

#include "decode_int.h"

#include <opencsd/c_api/opencsd_c_api.h>

/* ------------------------------------------------------------- the engine */

/* Which decoder makes the elements of a decoder's sources, and how its decoders
 * say what they do not cover. A session chooses its engines once, from
 * cst_session_opts.decoder (dec_engine_choose); the code that uses a decoder adds
 * what it knows of that use (@timed, @runs). */
struct dec_engine {
	/* cstrace's own decoders, for every source one of them covers
	 * (engine/follow.h); OpenCSD's for the others */
	bool own;
	/* what they do not cover is an error (-cste_unsupported) naming file,
	 * offset, trace ID and packet; else it is a debug message, and the caller
	 * decodes that trace again with OpenCSD's decoders on one thread */
	bool strict;
	/* perf.data in time order: when an element comes out counts, not only in
	 * which order (perf/order.h); a decoder declines where OpenCSD's would give
	 * an element out later */
	bool timed;
	/* the elements are joined into runs of ranges anyway (run/merge.h): a
	 * decoder may give them joined */
	bool runs;
	/* past trace OpenCSD's decoder crashed on: what cstrace's decoders do not
	 * cover in the trace is a gap and a resynchronisation, with a warning,
	 * not a decline */
	bool recover;
};

/* A session's engines: for decoders on the caller's thread, and for decoders on
 * decoding threads (split workers, queues decoded ahead), whose declines send
 * the trace back to one thread. */
struct dec_engines {
	struct dec_engine serial, workers;
};

/* The OpenCSD version cstrace's own decoders copy, element for element, quirks
 * included (the ETMv3 cancel rule, contexts carried across packets): 1.3.3. */
#define DEC_OCSD_PINNED 0x010303u

/* The version of the OpenCSD library this process runs with (0xMMmmpp). */
uint32_t dec_ocsd_version(void);

/* The engines for the user's @choice with OpenCSD @ocsd_version (from
 * dec_ocsd_version; a test may pass another). With another OpenCSD than the
 * pinned one, cstrace's decoders might no longer agree with OpenCSD's: auto
 * uses OpenCSD's everywhere, with a warning through @log, and cstrace and
 * recover are refused (-cste_unsupported, logged); opencsd is unaffected.
 * Returns 0 or the error. */
int dec_engine_choose(enum cst_decoder_choice choice, uint32_t ocsd_version,
		      const struct cst_log *log, struct dec_engines *out);

/* ------------------------------------------------------------- decoders */

/* cst_decoder_alloc with cstrace's own decoders as @engine says (NULL:
 * OpenCSD's only). Returns 0 and sets *@out, or a negative error (logged). */
int dec_decoder_make(struct cst_decoder **out, const struct cst_trace *trace, int buffer,
		     const struct cst_decoder_opts *opts, const struct dec_engine *engine);

/* Open @dec's buffer file and check it (messages logged as cst_decoder_run logs
 * them, once per decoder): the bytes to decode are [*pos, *end) of *fd. */
int dec_decoder_open_span(struct cst_decoder *dec, int *fd, uint64_t *pos, uint64_t *end);

/* Whether one of cstrace's decoders in @dec declined (met trace it does not
 * cover) and stopped the decode: the caller decodes that trace again with
 * OpenCSD's (a strict engine's decline is an error instead). */
bool dec_decoder_declined(const struct cst_decoder *dec);

/* What opening the buffer file warns about was told already (by the decoder of
 * an earlier run over the same buffer): dec_decoder_open_span keeps quiet. */
void dec_decoder_set_told(struct cst_decoder *dec);

/* What @dec was made for and with: a split decode makes its workers' decoders
 * alike. */
const struct cst_trace *dec_decoder_trace(const struct cst_decoder *dec);
int dec_decoder_buffer(const struct cst_decoder *dec);
const struct cst_decoder_opts *dec_decoder_opts(const struct cst_decoder *dec);

/* Where @dec's messages go from now on (a worker's decoder: to the worker). */
void dec_decoder_set_log(struct cst_decoder *dec, const struct cst_log *log);
/* @fill (NULL: none) completes each element @dec makes, before its callback sees
 * it (a split worker's attribution: pid, tid, CPU, fragment), in place: a copy
 * of every element to set four fields was a tenth of a worker's time. */
void dec_decoder_set_fill(struct cst_decoder *dec, void (*fill)(void *ctx, struct cst_elem *e),
			  void *ctx);

/* Forget the partial frame @dec holds at the end of its data, without the
 * warning cst_decoder_end gives (a serial run of the same buffer gave it). */
void dec_decoder_drop_partial(struct cst_decoder *dec);

/* The one trace ID whose trace @dec decodes from [@pos, @end) of @fd, or -1: one
 * source, or formatted data in whose frames only one of its sources' IDs
 * appears (a snapshot lists every core's ETM; one core may be all a buffer
 * holds). The data must be in 16-byte frames or unformatted, decoded to
 * elements. */
int dec_decoder_one_id(const struct cst_decoder *dec, int fd, uint64_t pos, uint64_t end);

/* Add the trace IDs that the 16-byte frames in @data name to @ids (bit n: ID n);
 * dec_frames_scan_ids reads them from [@pos, @end) of @fd (0, -cste_io or
 * -cste_nomem). */
void dec_frame_ids(const uint8_t *data, size_t len, uint64_t ids[2]);
int dec_frames_scan_ids(int fd, uint64_t pos, uint64_t end, uint64_t ids[2]);

/* OpenCSD 1.3.3 logs decoder errors into one process-wide logger that is not
 * safe across threads: quiet while decoding threads run (a decoder error sends
 * the trace to one thread anyway), then back to errors. */
void dec_ocsd_log_quiet(bool quiet);

/* ------------------------------------------------------------- statistics */

/* Count @e into @st as a decoder does for each element it delivers (a split
 * decode counts the elements it keeps the same way). */
void dec_stats_count(struct cst_decoder_stats *st, const struct cst_elem *e);
/* Add one decoder's totals to @sum (sessions over several buffers or AUX
 * fragments). */
void dec_stats_add(struct cst_decoder_stats *sum, const struct cst_decoder_stats *s);

/* ------------------------------------------------------------- held elements */

/* An element kept past its callback (decoding threads, perf's time order), with
 * a copy of the OpenCSD element behind it when asked to keep one: the element
 * OpenCSD gave lives only as long as the callback. */
struct dec_held {
	struct cst_elem e;
	ocsd_generic_trace_elem o;
	bool has_o;
};

/* Keep @e in @h, and OpenCSD's element behind it with @keep_ocsd. */
static inline void dec_held_keep(struct dec_held *h, const struct cst_elem *e, bool keep_ocsd)
{
	h->e = *e;
	h->has_o = e->ocsd && keep_ocsd;
	if (h->has_o) {
		h->o = *(const ocsd_generic_trace_elem *)e->ocsd;
		h->o.ptr_extended_data = NULL; /* the payload it points to is gone; e has it */
	}
	h->e.ocsd = NULL;
}

/* Copy @from into @to: OpenCSD's element only where there is one (it is a third
 * of the struct). */
static inline void dec_held_copy(struct dec_held *to, const struct dec_held *from)
{
	to->e = from->e;
	to->has_o = from->has_o;
	if (from->has_o)
		to->o = from->o;
}

/* The element kept in @h, pointing at its copy of OpenCSD's element (so @h must
 * not move while the result is used). */
static inline const struct cst_elem *dec_held_elem(struct dec_held *h)
{
	h->e.ocsd = h->has_o ? &h->o : NULL;
	return &h->e;
}

/* An element whose other fields are those of the element before it
 * (cst_elem_same_context): what changes from one instruction range to the
 * next. Elements handed from thread to thread travel so where they can, in a
 * third of the bytes: each cache line a thread reads that another wrote is a
 * miss. */
struct dec_range {
	uint64_t offset, start, end, timestamp;
	uint32_t num_insns, cycle_count, joined;
	uint8_t type, isa, last_class, last_subclass, last_size;
	bool last_executed, has_cycle_count, perf_unseen, followed;
};

/* The fields struct dec_range carries, and cst_elem_same_context() compares,
 * are all of struct cst_elem's but its OpenCSD element: a field added to it
 * must be added to one of them. (Its size on LP64 hosts and on 32-bit Arm,
 * where pointers take 4 bytes.) */
_Static_assert(sizeof(struct cst_elem) == (sizeof(void *) == 8 ? 184 : 176),
	       "struct cst_elem changed: see struct dec_range");

static inline void dec_range_from(struct dec_range *r, const struct cst_elem *e)
{
	r->offset = e->offset;
	r->start = e->start;
	r->end = e->end;
	r->timestamp = e->timestamp;
	r->num_insns = e->num_insns;
	r->cycle_count = e->cycle_count;
	r->joined = e->joined;
	r->type = (uint8_t)e->type;
	r->isa = (uint8_t)e->isa;
	r->last_class = (uint8_t)e->last_class;
	r->last_subclass = (uint8_t)e->last_subclass;
	r->last_size = e->last_size;
	r->last_executed = e->last_executed;
	r->has_cycle_count = e->has_cycle_count;
	r->perf_unseen = e->perf_unseen;
	r->followed = e->followed;
}

/* @e, the element before, becomes the one @r stands for. */
static inline void dec_range_into(struct cst_elem *e, const struct dec_range *r)
{
	e->offset = r->offset;
	e->start = r->start;
	e->end = r->end;
	e->timestamp = r->timestamp;
	e->num_insns = r->num_insns;
	e->cycle_count = r->cycle_count;
	e->joined = r->joined;
	e->type = (enum cst_elem_type)r->type;
	e->isa = (enum cst_isa)r->isa;
	e->last_class = (enum cst_insn_class)r->last_class;
	e->last_subclass = (enum cst_insn_subclass)r->last_subclass;
	e->last_size = r->last_size;
	e->last_executed = r->last_executed;
	e->has_cycle_count = r->has_cycle_count;
	e->perf_unseen = r->perf_unseen;
	e->followed = r->followed;
	e->ocsd = NULL; /* the element before's, if any, is not this one's */
}

/* Whether @h and @e are the same (every field a view can print, OpenCSD's text
 * included). */
bool dec_held_same(const struct dec_held *h, const struct cst_elem *e);

#endif
