/* Internal to decode/engine/: cstrace's own decoders of OpenCSD's packets (the
 * "followers": etm4_follow.c for ETMv4, etm3_follow.c for ETMv3), one
 * operations table each, and what they share. OpenCSD still frames and parses
 * the trace; a follower follows the packets through the code as OpenCSD's
 * decoder of that protocol does, element for element, with its own instruction
 * decode (arm_insn.h) and a cache of what it decoded, instead of a memory read
 * and a decode per instruction walked (most of OpenCSD's time on long traces).
 * Anything a follower does not cover, it declines: it says so through its
 * decoder and stops, and the caller decodes that trace again with OpenCSD's. */
#ifndef CSTRACE_DECODE_ENGINE_FOLLOW_H
#define CSTRACE_DECODE_ENGINE_FOLLOW_H

#include "cstrace/decode.h"

#include <opencsd/c_api/opencsd_c_api.h>

/* What a follower needs from its decoder (engine/decoder.c gives it; a unit
 * test can give its own). */
struct follow_io {
	/* up to @len code bytes at @address in OpenCSD's memory space @space;
	 * returns how many were read */
	uint32_t (*read)(void *ctx, uint8_t trace_id, uint64_t address, uint32_t space,
			 uint32_t len, uint8_t *buf);
	/* an element made at the packet of OpenCSD index @index; nonzero stops */
	int (*elem)(void *ctx, uint32_t index, uint8_t trace_id, struct cst_elem *e);
	/* the trace holds what the follower does not cover (@why), at @index */
	void (*decline)(void *ctx, uint32_t index, uint8_t trace_id, const char *why);
	/* the same, in recovering: the follower resynchronises after it */
	void (*resync)(void *ctx, uint32_t index, uint8_t trace_id, const char *why);
	void *ctx;
};

/* The source a follower is asked to decode, as OpenCSD's decoder would be
 * configured for it, and how its elements are used. */
struct follow_cfg {
	const struct cst_source_cfg *src;
	ocsd_arch_version_t arch;
	ocsd_core_profile_t profile;
	uint8_t trace_id;
	/* the ranges are joined into runs anyway (run/merge.h): a follower may give
	 * them joined (cst_elem.joined counts them), as fewer elements */
	bool runs;
	/* when each element comes out counts too (perf.data's time order): where
	 * OpenCSD's decoder would give one out later, decline */
	bool timed;
	/* past trace OpenCSD's decoder crashed on: what would be declined is a
	 * gap instead, after which the follower looks for sync again */
	bool recover;
};

struct follow_base;

/* One follower: its operations, found for a source by dec_follower_for
 * (engine/choose.c holds the table). */
struct dec_follower {
	const char *name;
	/* would it decode this source exactly? */
	bool (*covers)(const struct follow_cfg *c);
	/* a new follower (its struct starts with a struct follow_base that
	 * dec_follow_init set up), or NULL when out of memory */
	struct follow_base *(*alloc)(const struct follow_cfg *c, const struct follow_io *io);
	void (*free)(struct follow_base *b);
	/* OpenCSD's data path operations: a packet (OCSD_OP_DATA), the end of the
	 * trace, a reset; nonzero stops */
	int (*data)(struct follow_base *b, const void *packet);
	int (*eot)(struct follow_base *b);
	int (*reset)(struct follow_base *b);
	/* after a packet it does not cover, in recovering: what came before goes
	 * out, and the follower looks for sync again (a gap, cst_gap_resync) */
	int (*resync)(struct follow_base *b);
};

extern const struct dec_follower dec_etm4_follower, dec_etm3_follower;

/* What all followers keep the same way: their operations and decoder's
 * callbacks, the packet being processed, the ISA an element without one of its
 * own carries on from the one before, code read ahead, and the generation of
 * what they decoded from it.
 *
 * The carried ISA is OpenCSD's ETMv4 decoder's: its element stack copies the ISA
 * (and context) into each new element (copyPersistentData). OpenCSD's ETMv3
 * decoder does not: its element list is a ring of element objects (8, grown by
 * half when full, a cancelled range's object taken by the next element) that
 * are never cleared, so an element leaves what it does not set (the ISA of a
 * no-sync, trace-on, event, exception, timestamp, inaccessible-code or
 * end-of-trace element and of a context from a context ID or VMID packet; an
 * exception's return address, which ETMv3 never gives) as that object last
 * held, and at an object's first use as uninitialised memory. Those values say
 * nothing and cannot be reproduced; the ETMv3 follower gives the carried ISA
 * and no return address instead (tests/decode/test_follow.c compares them only
 * for ETMv4). */
#define FOLLOW_READ_AHEAD 64
struct follow_base {
	const struct dec_follower *ops;
	struct follow_io io;
	uint8_t trace_id;
	bool declined;
	bool recover, resyncing; /* follow_cfg.recover; a packet not covered */
	uint32_t index;
	enum cst_isa elem_isa;
	uint8_t code[FOLLOW_READ_AHEAD];
	uint64_t code_addr;
	uint32_t code_len;
	uint32_t gen; /* what was decoded in another generation is forgotten */
};

/* follow.c */
void dec_follow_init(struct follow_base *b, const struct dec_follower *ops, uint8_t trace_id,
		     const struct follow_io *io);
/* OpenCSD's packet sink (OCSD_C_API_CB_PKT_SINK) for any follower @ctx (its
 * struct follow_base). */
ocsd_datapath_resp_t dec_follow_packet(const void *ctx, const ocsd_datapath_op_t op,
				       const ocsd_trc_index_t index, const void *packet);
/* Say the trace holds @why, at the packet being processed, and stop for good:
 * returns -cste_unsupported. In recovering, stop this packet only: the
 * follower resynchronises (dec_follow_packet). */
int dec_follow_decline(struct follow_base *b, const char *why);
/* @e (its ISA carried from the element before, unless a range or a context:
 * OpenCSD's ETMv4 decoder's rule, see struct follow_base) at @index. */
int dec_follow_put(struct follow_base *b, uint32_t index, struct cst_elem *e);
/* An element of @type with nothing else to say, at @index. */
int dec_follow_put_type(struct follow_base *b, uint32_t index, enum cst_elem_type type);
/* The first no-sync element a follower gives (@gap says why), at the packet
 * being processed. */
int dec_follow_put_no_sync(struct follow_base *b, enum cst_gap_reason gap);
/* The 4 code bytes at @pc in OpenCSD's memory space @space, or NULL when they
 * cannot all be read (OpenCSD reads 4, also for a 16-bit T32 instruction). */
const uint8_t *dec_follow_code(struct follow_base *b, uint64_t pc, uint32_t space);
/* Code read before may not be this context's (perf.data: another process): a
 * new generation, so that what the caller's @table (@size bytes, entries tagged
 * with the generation) holds is forgotten; after 4 G generations, when the count
 * starts again, the table is emptied. */
void dec_follow_forget(struct follow_base *b, void *table, size_t size);
/* Whether code read in context @a is code of context @b too: the same
 * exception level, security state, width, context ID and VMID (the context ID
 * names the process whose memory is read). A trace repeats its context at every
 * sync: forgetting there emptied the walk caches every few kilobytes. */
bool dec_follow_same_code(const struct cst_pe_context *a, const struct cst_pe_context *b);

#endif
