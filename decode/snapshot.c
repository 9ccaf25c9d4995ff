/* Snapshot directories into a trace description, read through the snapshot library. */
#include "cstrace/snapshot.h"
#include "decode_int.h"

static int on_buffer(void *ctx, const struct cst_buffer_info *info)
{
	return cst_trace_add_buffer(ctx, info);
}

static int on_source(void *ctx, int buffer, const struct cst_source_cfg *cfg)
{
	return cst_trace_add_source(ctx, buffer, cfg);
}

static int on_image(void *ctx, const struct cst_mem_image *img)
{
	return cst_trace_add_image(ctx, img);
}

int dec_trace_load_snapshot(struct cst_trace *trace, const char *dir, bool confine,
			    const struct cst_log *log)
{
	const struct cst_snap_reader_cbs cbs = {.sz = sizeof(cbs), .buffer = on_buffer,
						.source = on_source, .image = on_image,
						.confine = confine};
	int n;

	if (!trace || !dir)
		return -cste_invalid;
	n = cst_snap_read(dir, &cbs, trace, log);
	return n < 0 ? n : 0;
}

int cst_trace_load_snapshot(struct cst_trace *trace, const char *dir, const struct cst_log *log)
{
	return dec_trace_load_snapshot(trace, dir, false, log);
}
