/* Internal to decode/: what every room of the decode stage shares (the layout of
 * struct cst_trace, the formatter frame, how many decoder elements an element
 * stands for), and the trace description's own helpers.
 *
 * The rooms, lowest first (docs/architecture.md draws them): engine/ turns trace
 * bytes into elements (OpenCSD, cstrace's own decoders); run/ runs an engine on
 * several threads (split, pipe, runs of ranges, crash hand-shake); perf/ reads
 * perf.data into engine runs; the files here describe traces and open sessions.
 * A room includes only the doors (engine/engine.h, run/run.h, perf/perf_input.h)
 * of the rooms below it. */
#ifndef CSTRACE_DECODE_DECODE_INT_H
#define CSTRACE_DECODE_DECODE_INT_H

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

/* snapshot.c: cst_trace_load_snapshot, refusing files outside @dir with @confine. */
int dec_trace_load_snapshot(struct cst_trace *trace, const char *dir, bool confine,
			    const struct cst_log *log);

/* elf_image.c: the PT_LOAD segments of "FILE[@ADDR]" as images of @trace. */
int dec_trace_add_elf(struct cst_trace *trace, const char *spec, const struct cst_log *log);

/* How many of its decoder's elements @e stands for: a run of ranges joined as
 * one (cst_elem.joined) counts each range. */
static inline uint64_t dec_elem_count(const struct cst_elem *e)
{
	return e->type == cst_elem_instr_range ? 1 + (uint64_t)e->joined : 1;
}

#endif
