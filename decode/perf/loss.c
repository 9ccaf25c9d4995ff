/* perf.data: trace lost from the AUX area, told as cst_sb_lost sideband before the
 * trace that follows it. An AUX record flagged TRUNCATED (the sink overflowed: the
 * kernel does not say by how much), the part of a record's trace the file does not
 * hold (locate.c found it missing), and in overwrite (snapshot) mode the AUX
 * positions no record covers, which the ring overwrote before a snapshot was
 * taken. In file order each is told as its record is reached; in time order it
 * is kept here and told when the merge reaches the record. The end of a record's
 * trace the file does not hold (the file was cut short) comes after that trace:
 * in file order once it is decoded, in time order at the end. */
#include "perf_int.h"

#include <stdlib.h>
#include <string.h>

void dec_pi_loss_reset(struct cst_perf_input *in)
{
	in->nlosses = 0;
	in->nheads = 0;
	in->ncuts = 0;
	in->cut_pending = false;
}

static int keep(struct cst_perf_input *in, const struct aux_loss *l)
{
	if (CST_GROW(in->losses, in->cap_losses, in->nlosses + 1) < 0)
		return -cste_nomem;
	in->losses[in->nlosses++] = *l;
	return 0;
}

/* In overwrite mode, the end of the last record of @rec's ring, and now @end. */
static int ring_end(struct cst_perf_input *in, const struct cst_perf_record *rec, uint64_t end,
		    uint64_t *prev)
{
	uint32_t per_thread = !rec->sid.have_cpu;
	uint32_t ring = per_thread ? (rec->sid.have_tid ? rec->sid.tid : 0) : rec->sid.cpu;

	for (size_t i = 0; i < in->nheads; i++)
		if (in->heads[i].per_thread == per_thread && in->heads[i].ring == ring) {
			*prev = in->heads[i].head;
			if (end > in->heads[i].head)
				in->heads[i].head = end;
			return 0;
		}
	if (CST_GROW(in->heads, in->cap_heads, in->nheads + 1) < 0)
		return -cste_nomem;
	in->heads[in->nheads++] = (struct aux_head){per_thread, ring, end};
	*prev = 0; /* the ring's positions count from 0 when recording began */
	return 0;
}

static void loss_sb(const struct cst_perf_record *rec, struct cst_sideband *sb,
		    enum cst_sb_loss loss, uint64_t bytes)
{
	memset(sb, 0, sizeof(*sb));
	sb->type = cst_sb_lost;
	sb->pid = rec->sid.have_tid ? (int32_t)rec->sid.pid : -1;
	sb->tid = rec->sid.have_tid ? (int32_t)rec->sid.tid : -1;
	sb->cpu = rec->sid.have_cpu ? (int32_t)rec->sid.cpu : -1;
	sb->time = rec->sid.have_time ? rec->sid.time : 0;
	sb->lost = 1;
	sb->loss = loss;
	sb->lost_bytes = bytes;
}

int dec_pi_aux_loss(struct cst_perf_input *in, const struct cst_perf_record *rec,
		    cst_sideband_fn sb_fn, void *ctx)
{
	uint64_t flags = rec->u.aux.flags, size = rec->u.aux.aux_size, end = rec->u.aux.aux_offset;
	struct aux_loss l = {.rec_off = rec->file_offset};
	int ret = 0;

	if (flags & CST_PERF_AUX_TRUNCATED)
		loss_sb(rec, &l.sb[l.n++], cst_sb_loss_truncated, 0);
	if (flags & CST_PERF_AUX_OVERWRITE) {
		/* aux_offset is the end of the data: the record covers [end - size, end) */
		uint64_t start = end - (size < end ? size : end), prev = 0;

		ret = ring_end(in, rec, end, &prev);
		if (ret)
			return ret;
		if (start > prev)
			loss_sb(rec, &l.sb[l.n++], cst_sb_loss_overwritten, start - prev);
	}
	if (in->aux_unheld && l.n < 2)
		loss_sb(rec, &l.sb[l.n++], cst_sb_loss_missing, in->aux_unheld);
	else if (in->aux_unheld)
		l.sb[1].lost_bytes += in->aux_unheld; /* overwritten and missing: both gone */
	in->cut_pending = in->aux_cut != 0;
	if (in->cut_pending) {
		loss_sb(rec, &in->cut_sb, cst_sb_loss_missing, in->aux_cut);
		if (!sb_fn && CST_GROW(in->cuts, in->cap_cuts, in->ncuts + 1) < 0)
			return -cste_nomem;
		if (!sb_fn)
			in->cuts[in->ncuts++] = in->cut_sb;
	}
	if (!l.n)
		return 0;
	if (sb_fn) {
		for (unsigned i = 0; i < l.n && !ret; i++)
			ret = sb_fn(ctx, &l.sb[i]);
		return ret;
	}
	return keep(in, &l);
}

int dec_pi_loss_after(struct cst_perf_input *in, cst_sideband_fn sb_fn, void *ctx)
{
	bool pending = in->cut_pending;

	in->cut_pending = false;
	return pending && sb_fn ? sb_fn(ctx, &in->cut_sb) : 0;
}

int dec_pi_loss_tell(const struct cst_perf_input *in, uint64_t rec_off, cst_sideband_fn sb_fn,
		     void *ctx)
{
	size_t lo = 0, hi = in->nlosses;
	int ret = 0;

	if (rec_off == UINT64_MAX) {
		for (size_t i = 0; i < in->ncuts && !ret && sb_fn; i++)
			ret = sb_fn(ctx, &in->cuts[i]);
		return ret;
	}
	/* kept in file order by the walk */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (in->losses[mid].rec_off < rec_off)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!sb_fn || lo == in->nlosses || in->losses[lo].rec_off != rec_off)
		return 0;
	for (unsigned i = 0; i < in->losses[lo].n && !ret; i++)
		ret = sb_fn(ctx, &in->losses[lo].sb[i]);
	return ret;
}
