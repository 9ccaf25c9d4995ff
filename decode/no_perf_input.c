/* Used only until decode/perf_input.c exists: perf.data input reported as missing. */
#include "perf_input.h"

int cst_perf_input_open(struct cst_perf_input **out, const char *path,
			const struct cst_session_opts *opts, struct cst_trace *trace)
{
	cst_logf(opts->log, cst_log_error, "%s: perf.data input is not built in", path);
	return -cste_unsupported;
}

int cst_perf_input_run(struct cst_perf_input *in, const struct cst_trace *trace,
		       cst_elem_fn elem_fn, cst_sideband_fn sb_fn, void *ctx,
		       struct cst_decoder_stats *stats)
{
	return -cste_unsupported;
}

int cst_perf_input_dump(struct cst_perf_input *in, const struct cst_trace *trace,
			cst_packet_fn fn, void *ctx)
{
	return -cste_unsupported;
}

void cst_perf_input_free(struct cst_perf_input *in)
{
}
