/* What a perf.data input tells its caller besides elements: warnings naming the
 * file offset of the record they are about, and progress through the trace. */
#include "perf_int.h"

#include <stdarg.h>

void dec_pi_warnf(struct cst_perf_input *in, uint64_t off, const char *fmt, ...)
{
	va_list ap;

	if (in->redo.messages) {
		in->redo.messages--; /* told before a time-ordered run went to one thread */
		return;
	}
	in->told.messages++;
	va_start(ap, fmt);
	cst_vlogf_at(&in->log, cst_log_warning, in->path, off, fmt, ap);
	va_end(ap);
}

void dec_pi_progress(struct cst_perf_input *in, uint64_t bytes)
{
	in->progress_done += bytes;
	if (in->progress && in->progress_done >= in->progress_quiet_to)
		in->progress(in->progress_ctx, in->progress_done, in->progress_total);
}
