/* What the decode fuzz targets (fuzz_rawdump.c, ../snapshot/fuzz_snapshot.c) do with
 * a session's output: every element printed as `decode` prints it, packets counted,
 * log lines dropped (the targets look for crashes, not messages). */
#ifndef CSTRACE_TESTS_FUZZ_SINK_H
#define CSTRACE_TESTS_FUZZ_SINK_H

#include <stdint.h>

#include "cstrace/decode.h"

static int fuzz_elem(void *ctx, const struct cst_elem *e)
{
	char line[1024];

	cst_elem_format_text(e, line, sizeof(line));
	++*(uint64_t *)ctx;
	return 0;
}

static int fuzz_packet(void *ctx, const struct cst_packet *p)
{
	++*(uint64_t *)ctx;
	return 0;
}

static void fuzz_quiet(void *ctx, enum cst_log_level level, const char *msg)
{
}

#endif
