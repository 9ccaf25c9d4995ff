/* Internal to decode/: cstrace's own decoder of ETMv4 instruction trace, behind
 * OpenCSD's packet processor. OpenCSD still frames and parses the trace; this
 * follows the packets through the code as OpenCSD's ETMv4 decoder does, element
 * for element, with its own instruction decode and a cache of decoded
 * instructions instead of a memory read and a decode per instruction walked
 * (most of OpenCSD's time on long traces).
 *
 * It covers what an A-profile core without speculation traces (atoms, addresses,
 * context, exceptions, trace on, timestamps) in configurations without cycle
 * counts, return stack, Q elements, conditional or data trace, for ARMv8 and
 * ARMv8.3 (A64 only). Anything else it meets, it declines: it says so through
 * the decline callback and stops, and the caller decodes that trace again with
 * OpenCSD's decoder (decode/split.c does, on one thread). Its elements are the
 * ones OpenCSD's decoder gives, without OpenCSD's own element (cst_elem.ocsd). */
#ifndef CSTRACE_DECODE_ETM4_FOLLOW_H
#define CSTRACE_DECODE_ETM4_FOLLOW_H

#include "follow.h"

struct etm4_follow;

/* Would a follower decode this source exactly? (ETMv4, and the configuration
 * above.) */
bool dec_etm4_follow_covers(const struct cst_source_cfg *src, ocsd_arch_version_t arch);

struct etm4_follow *dec_etm4_follow_new(const struct cst_source_cfg *src,
					ocsd_arch_version_t arch, uint8_t trace_id,
					const struct follow_io *io);
void dec_etm4_follow_free(struct etm4_follow *f);

/* OpenCSD's packet sink (OCSD_C_API_CB_PKT_SINK) for a follower @ctx. */
ocsd_datapath_resp_t dec_etm4_follow_packet(const void *ctx, const ocsd_datapath_op_t op,
					    const ocsd_trc_index_t index, const void *packet);

#endif
