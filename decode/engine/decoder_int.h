/* Internal to decode/engine/: the decoder's state, shared by decoder.c (making it,
 * delivering elements), feed.c (trace bytes into OpenCSD's tree), packets.c
 * (packet listings) and ocsd_elem.c (OpenCSD's elements). */
#ifndef CSTRACE_DECODE_ENGINE_DECODER_INT_H
#define CSTRACE_DECODE_ENGINE_DECODER_INT_H

#include "engine.h"
#include "follow.h"
#include "mem_images.h"

/* DSTREAM captures come in 512-byte blocks: 504 bytes of TPIU data and an 8-byte
 * footer. */
#define DSTREAM_BLOCK 512
#define DSTREAM_DATA (DSTREAM_BLOCK - 8)

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
	void (*fill)(void *ctx, struct cst_elem *e); /* dec_decoder_set_fill */
	void *fill_ctx;
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
	/* which decoder makes each source's elements, and cstrace's own decoders
	 * (follow.h) by trace ID where they do */
	struct dec_engine engine;
	struct follow_base *follower[128];
	bool printer_locked;    /* holds printer_lock (ETE packet listing) */
	bool declined;          /* a follower declined (follow_decline) */

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

/* ocsd_config.c: OpenCSD's configuration of a source's decoder. */
union dec_ocsd_cfg {
	ocsd_etmv3_cfg v3;
	ocsd_ptm_cfg ptm;
	ocsd_etmv4_cfg v4;
	ocsd_ete_cfg ete;
	ocsd_stm_cfg stm;
};
/* OpenCSD's name of a protocol. */
ocsd_trace_protocol_t dec_protocol_to_ocsd(enum cst_protocol p);
/* @src's registers as OpenCSD's decoder @cfg, its decoder's name and what a
 * follower needs of it (@fc: source, architecture and profile; the rest is the
 * caller's). Returns 0, or -cste_unsupported for a protocol OpenCSD cannot
 * decode. */
int dec_ocsd_config(const struct cst_source_cfg *src, union dec_ocsd_cfg *cfg, const char **name,
		    struct follow_cfg *fc);

/* choose.c: the follower that decodes @c under @engine, or NULL (OpenCSD's). */
const struct dec_follower *dec_follower_for(const struct dec_engine *engine,
					    const struct follow_cfg *c);

/* ocsd_elem.c: an OpenCSD generic element as @e (which points at it). */
void dec_elem_from_ocsd(struct cst_elem *e, const ocsd_generic_trace_elem *o);

/* packets.c: list source @csid's packets (of @protocol) through the packet
 * callback: OpenCSD's packet monitor, or for ETE, which has none, OpenCSD's
 * printer held process-wide until dec_packets_release. */
int dec_packets_attach(struct cst_decoder *dec, uint8_t csid, enum cst_protocol protocol);
void dec_packets_release(struct cst_decoder *dec);

#endif
