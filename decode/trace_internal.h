/* Internal to decode/: the layout of struct cst_trace and helpers shared by the
 * snapshot reader, the decoder and the perf.data input. */
#ifndef CSTRACE_DECODE_TRACE_INTERNAL_H
#define CSTRACE_DECODE_TRACE_INTERNAL_H

#include "cstrace/decode.h"

/* A CoreSight formatter frame: OpenCSD takes memory-aligned trace in these units. */
#define CST_FRAME 16

struct cst_trace {
	struct cst_buffer_info *buffers;
	int nbuffers;
	size_t cap_buffers;
	struct cst_source_cfg *sources;
	int *source_buffer; /* buffer index of each source */
	int nsources;
	size_t cap_sources, cap_source_buffer;
	struct cst_mem_image *images;
	int nimages;
	size_t cap_images;
};

/** Fill an OpenCSD generic element into a cst_elem (decode/elem.c). */
struct _ocsd_generic_trace_elem;
void dec_elem_from_ocsd(struct cst_elem *e, const struct _ocsd_generic_trace_elem *o);

/* decoder.c: add one decoder's totals to @sum (sessions over several buffers or
 * AUX fragments). */
/* snapshot.c: cst_trace_load_snapshot, refusing files outside @dir with @confine. */
int dec_trace_load_snapshot(struct cst_trace *trace, const char *dir, bool confine,
			    const struct cst_log *log);

/* elf_image.c: the PT_LOAD segments of "FILE[@ADDR]" as images of @trace. */
int dec_trace_add_elf(struct cst_trace *trace, const char *spec, const struct cst_log *log);

void dec_stats_add(struct cst_decoder_stats *sum, const struct cst_decoder_stats *s);
/* How many of its decoder's elements @e stands for: a run of ranges joined as
 * one (cst_elem.joined) counts each range. */
static inline uint64_t dec_elem_count(const struct cst_elem *e)
{
	return e->type == cst_elem_instr_range ? 1 + (uint64_t)e->joined : 1;
}
/* decoder.c: count one delivered element (or run of ranges) into @st */
void dec_stats_count(struct cst_decoder_stats *st, const struct cst_elem *e);

#endif
