/* Internal to decode/: what cstrace's own decoders of OpenCSD's packets
 * (etm4_follow.h for ETMv4, etm3_follow.h for ETMv3) need from the decoder that
 * feeds them. */
#ifndef CSTRACE_DECODE_FOLLOW_H
#define CSTRACE_DECODE_FOLLOW_H

#include "cstrace/decode.h"

#include <opencsd/c_api/opencsd_c_api.h>

/* What a follower (etm4_follow.h, etm3_follow.h) needs from its decoder. */
struct follow_io {
	/* up to @len code bytes at @address in OpenCSD's memory space @space;
	 * returns how many were read */
	uint32_t (*read)(void *ctx, uint8_t trace_id, uint64_t address, uint32_t space,
			 uint32_t len, uint8_t *buf);
	/* an element made at the packet of OpenCSD index @index; nonzero stops */
	int (*elem)(void *ctx, uint32_t index, uint8_t trace_id, struct cst_elem *e);
	/* the trace holds what the follower does not cover (@why), at @index */
	void (*decline)(void *ctx, uint32_t index, uint8_t trace_id, const char *why);
	void *ctx;
};

/* What both decoders keep the same way: their decoder's callbacks, the packet
 * being processed, what an element without an ISA of its own carries on from the
 * one before (OpenCSD copies it from element to element), code read ahead, and
 * the generation of what they decoded from it. */
#define FOLLOW_READ_AHEAD 64
struct follow_base {
	struct follow_io io;
	uint8_t trace_id;
	bool declined;
	uint32_t index;
	enum cst_isa elem_isa;
	uint8_t code[FOLLOW_READ_AHEAD];
	uint64_t code_addr;
	uint32_t code_len;
	uint32_t gen; /* what was decoded in another generation is forgotten */
};

/* follow.c */
void dec_follow_init(struct follow_base *b, uint8_t trace_id, const struct follow_io *io);
/* Say the trace holds @why, at the packet being processed, and stop for good:
 * returns -cste_unsupported. */
int dec_follow_decline(struct follow_base *b, const char *why);
/* @e (its ISA from the element before, unless a range or a context) at @index. */
int dec_follow_put(struct follow_base *b, uint32_t index, struct cst_elem *e);
/* An element of @type with nothing else to say, at @index. */
int dec_follow_put_type(struct follow_base *b, uint32_t index, enum cst_elem_type type);
/* The 4 code bytes at @pc in OpenCSD's memory space @space, or NULL when they
 * cannot all be read (OpenCSD reads 4, also for a 16-bit T32 instruction). */
const uint8_t *dec_follow_code(struct follow_base *b, uint64_t pc, uint32_t space);
/* Code read before may not be this context's (perf.data: another process): a
 * new generation, so that what the caller's @table (@size bytes, entries tagged
 * with the generation) holds is forgotten; after 4 G generations, when the count
 * starts again, the table is emptied. */
void dec_follow_forget(struct follow_base *b, void *table, size_t size);

#endif
