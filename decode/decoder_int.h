/* Internal to decode/: the decoder's state, shared by decoder.c (callbacks, feeding
 * and running), decoder_config.c (a source's registers into OpenCSD's decoder
 * configuration) and decoder_printer.c (the ETE packet listing workaround). */
#ifndef CSTRACE_DECODE_DECODER_INT_H
#define CSTRACE_DECODE_DECODER_INT_H

#include "etm3_follow.h"
#include "etm4_follow.h"
#include "mem_images.h"
#include "trace_internal.h"

#include <opencsd/c_api/opencsd_c_api.h>

/* Whether a decoder's ETMv4 and ETMv3 sources that cstrace's decoders cover are
 * decoded by them (their elements carry no OpenCSD element), and how they say
 * trace they do not cover, which stops the decode (-cste_unsupported): flags. */
enum dec_follow {
	dec_follow_none = 0,
	dec_follow_quiet = 1,  /* through opts.log at debug level: a worker's log
				  sends the buffer or queue to one thread */
	dec_follow_strict = 2, /* as an error */
	/* With either: perf.data's time order (perf_order.c) sees when each element
	 * comes out, not only in which order. After a cancelling exception OpenCSD's
	 * ETMv3 decoder gives the exception out with the next packet: ETMv3's
	 * decoder declines there. */
	dec_follow_timed = 4,
	/* The elements are joined into runs of ranges anyway (dec_merge): ETMv3's
	 * decoder joins a P-header's ranges itself, which then travel as one. */
	dec_follow_runs = 8,
};

/* What the user's choice (cst_session_opts.decoder) asks of the decoders of the
 * decoding threads (@workers), or of the caller's thread. */
static inline enum dec_follow dec_follow_for(enum cst_decoder_choice choice, bool workers)
{
	if (workers)
		return choice == cst_decoder_opencsd ? dec_follow_none : dec_follow_quiet;
	return choice == cst_decoder_cstrace ? dec_follow_strict : dec_follow_none;
}


struct pkt_ctx {
	struct cst_decoder *dec;
	uint8_t trace_id;
	enum cst_protocol protocol;
};

struct cst_decoder {
	const struct cst_trace *trace;
	int buffer;
	struct cst_decoder_opts opts;
	dcd_tree_handle_t tree;
	enum cst_buffer_format format;

	cst_elem_fn elem_fn;
	void *elem_ctx;
	cst_packet_fn pkt_fn;
	void *pkt_ctx;
	struct pkt_ctx pkt_ids[128];

	int8_t id_source[128];              /* trace ID -> source index, -1 none */
	struct cst_pe_context ctx[128];     /* context in force per trace ID */
	/* since cst_decoder_reset (when was_reset): the trace IDs that gave elements */
	bool was_reset;
	uint64_t said[2];
	int stop;                           /* non-zero once a callback asked to stop */

	/* OpenCSD's trace index is 32-bit: offsets are rebuilt from the end of the
	 * data pushed so far, which is never 4 GiB ahead of a packet's start. */
	uint64_t fed_end;
	uint8_t carry[CST_FRAME];           /* partial frame between feeds */
	size_t ncarry;
	uint64_t carry_offset;

	struct mem_images *mem; /* the trace's images, for the code walk */
	/* ETMv4 and ETMv3 sources decoded by cstrace's own decoders
	 * (etm4_follow.h, etm3_follow.h), by trace ID, when asked for
	 * (dec_decoder_alloc_follow) and they cover them */
	enum dec_follow follow;
	struct etm4_follow *follower[128];
	struct etm3_follow *follower3[128];
	bool printer_locked;    /* holds printer_lock (ETE packet listing) */

	struct cst_decoder_stats stats;
	bool span_told;  /* what opening the buffer file warns about was told already */
};

/* OpenCSD's trace index is 32-bit: the offset of a packet starting at @index_sop,
 * rebuilt from the end of the data pushed so far. */
static inline uint64_t dec_decoder_offset(const struct cst_decoder *dec, ocsd_trc_index_t index_sop)
{
	uint32_t back = (uint32_t)dec->fed_end - (uint32_t)index_sop;

	return back > dec->fed_end ? 0 : dec->fed_end - back;
}

/* decoder.c: open @dec's buffer file and check it (messages logged as
 * cst_decoder_run logs them): the bytes to decode are [*pos, *end) of *fd. */
int dec_decoder_open_span(struct cst_decoder *dec, int *fd, uint64_t *pos, uint64_t *end);

/* decoder.c: cst_decoder_alloc, with the follower as @follow says. */
struct cst_decoder *dec_decoder_alloc_follow(const struct cst_trace *trace, int buffer,
					     const struct cst_decoder_opts *opts,
					     enum dec_follow follow, int *errp);

/* decoder.c: a follower's reads and elements go through its decoder */
extern const struct follow_io dec_follow_io;

/* decoder.c: add the trace IDs that the 16-byte frames in @data name to @ids
 * (bit n: ID n). */
void dec_frame_ids(const uint8_t *data, size_t len, uint64_t ids[2]);

/* decoder.c: OpenCSD's packet monitor callback (packets_only decoders) */
void dec_decoder_on_packet(const void *p_context, const ocsd_datapath_op_t op,
			   const ocsd_trc_index_t index_sop, const void *p_packet_in,
			   const uint32_t size, const uint8_t *p_data);

/* decoder.c: give one packet to the packet callback (which is set) */
void dec_decoder_deliver(struct cst_decoder *dec, ocsd_trc_index_t index_sop, uint8_t trace_id,
			 enum cst_protocol protocol, const uint8_t *raw, uint32_t raw_size,
			 const char *text);

/* decoder_config.c: OpenCSD's name of a protocol, and create the OpenCSD decoder
 * of source @s. Returns 0 or an error. */
ocsd_trace_protocol_t dec_protocol_to_ocsd(enum cst_protocol p);
int dec_decoder_add_source(struct cst_decoder *dec, int s, const struct cst_source_cfg *src);

/* decoder_printer.c: list @csid's packets through OpenCSD's printer (ETE has no
 * packet callback), holding the process-wide printer until released. */
int dec_decoder_attach_printer(struct cst_decoder *dec, uint8_t csid);
void dec_decoder_release_printer(struct cst_decoder *dec);

#endif
