/* Ring output into perf.data: data-ring records are copied raw, AUX chunks become
 * AUXTRACE records; space is checked first so that a full disk never costs the file. */
#include "cstrace/capture.h"

#include <libgen.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/statvfs.h>

#include "cstrace/perfdata.h"

void cst_perf_out_init(struct cst_perf_out *o, struct cst_perf_writer *w, const char *path,
		       uint64_t written, uint64_t reserve)
{
	char tmp[4096];

	memset(o, 0, sizeof(*o));
	o->w = w;
	o->written = written;
	o->reserve = reserve ? reserve : 1 << 20;
	snprintf(tmp, sizeof(tmp), "%s", path ? path : ".");
	snprintf(o->dir, sizeof(o->dir), "%s", dirname(tmp));
}

/* Would @len more bytes still leave room to finish the file? */
static bool room_for(struct cst_perf_out *o, uint64_t len)
{
	struct statvfs vfs;
	struct rlimit rl;

	if (o->full)
		return false;
	if (!getrlimit(RLIMIT_FSIZE, &rl) && rl.rlim_cur != RLIM_INFINITY &&
	    o->written + len + o->reserve > (uint64_t)rl.rlim_cur)
		return false;
	if (!statvfs(o->dir, &vfs) && (uint64_t)vfs.f_bavail * vfs.f_frsize < len + o->reserve)
		return false;
	return true;
}

/* AUX_OUTPUT_HW_ID {u64 hw_id} + the sample_id trailer of cst_capture_sample_type():
 * pid/tid, time, cpu/res, identifier. Bits 7:0 of hw_id are the trace ID. */
static void note_hw_id(struct cst_perf_out *o, const uint8_t *rec, size_t len)
{
	uint32_t cpu;

	if (cst_le32(rec) != 21 || len < 16 + 32)
		return;
	cpu = cst_le32(rec + len - 16);
	if (cpu < CST_ETM_MAX_CPUS && (cst_le64(rec + 8) >> 60) == 0) {
		o->trace_id[cpu] = rec[8];
		o->have_trace_id[cpu] = true;
	}
}

static int out_record(void *ctx, const uint8_t *rec, size_t len)
{
	struct cst_perf_out *o = ctx;
	int err;

	if (!room_for(o, len)) {
		o->full = true;
		o->refused += len;
		return -cste_io;
	}
	err = cst_perf_writer_raw(o->w, rec, len);
	if (err < 0) {
		o->error = err;
		return err;
	}
	o->written += len;
	note_hw_id(o, rec, len);
	return 0;
}

static int out_aux(void *ctx, const struct cst_aux_chunk *c)
{
	struct cst_perf_out *o = ctx;
	uint64_t len = 48 + ((c->size + 7) & ~7ULL);
	int err;

	if (!room_for(o, len)) {
		o->full = true;
		o->refused += c->size;
		return -cste_io;
	}
	err = cst_perf_writer_auxtrace(o->w, c->offset, ++o->reference, c->idx, c->tid, c->cpu,
				       c->data, c->size);
	if (err < 0) {
		o->error = err;
		return err;
	}
	o->written += len;
	return 0;
}

struct cst_ring_output cst_perf_out_ring_output(struct cst_perf_out *o)
{
	struct cst_ring_output out = {.sz = sizeof(out), .record = out_record, .aux = out_aux, .ctx = o};

	return out;
}
