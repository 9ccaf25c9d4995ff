/* Internal to decode/: cstrace's own decoder of ETMv3 instruction trace behind
 * OpenCSD's packet processor, as etm4_follow.h is for ETMv4. ETMv3 gives an
 * atom per instruction: OpenCSD's decoder reads and decodes each one through its
 * memory cache; this keeps each instruction's decode by address.
 *
 * It covers ETMv3 (not PTM) of ARMv7 A/R-profile cores tracing instructions
 * only, without cycle-accurate trace, in A32 and T32 code: sync, I-sync, atoms,
 * branch addresses (with exceptions and the cancelling of the last
 * instruction), context ID, VMID, timestamps and triggers. Anything else it
 * declines, as etm4_follow.h says. */
#ifndef CSTRACE_DECODE_ETM3_FOLLOW_H
#define CSTRACE_DECODE_ETM3_FOLLOW_H

#include "follow.h"

struct etm3_follow;

/* Would a follower decode this source exactly? */
bool dec_etm3_follow_covers(const struct cst_source_cfg *src, ocsd_arch_version_t arch,
			    ocsd_core_profile_t profile);

/* @runs: the ranges are joined into runs anyway (dec_merge): a P-header's go out
 * joined (cst_elem.joined counts them), as fewer elements. @timed: when each
 * element comes out counts too (perf.data's time order): where OpenCSD's decoder
 * would give one out later, after a cancelling exception, decline. */
struct etm3_follow *dec_etm3_follow_new(uint8_t trace_id, const struct follow_io *io,
					bool runs, bool timed);
void dec_etm3_follow_free(struct etm3_follow *f);

/* OpenCSD's packet sink (OCSD_C_API_CB_PKT_SINK) for a follower @ctx. */
ocsd_datapath_resp_t dec_etm3_follow_packet(const void *ctx, const ocsd_datapath_op_t op,
					    const ocsd_trc_index_t index, const void *packet);

#endif
