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

#endif
