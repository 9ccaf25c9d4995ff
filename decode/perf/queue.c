/* A queue of the time order (one AUX ring: a CPU) decoded a small piece at a
 * time by its own decoder, and what a piece makes besides elements told to the
 * merge: on the merge's thread, or on a thread decoding ahead of it
 * (struct qrun_ops says which). */
#include "perf_int.h"

#include <inttypes.h>
#include <stdlib.h>

/* The decoder of queue @t for fragment @f (one per queue, as perf has): in a serial
 * run the shared ones' kind; decoding ahead, one reading through the queue's own
 * memory cursor. */
static struct cst_decoder *queue_decoder(struct qrun *r, struct tqueue *t, const struct frag *f)
{
	struct cst_decoder **slot = f->raw ? &t->raw : &t->frames;

	if (f->raw && t->raw && t->raw_ci != f->ci) {
		cst_decoder_free(t->raw);
		t->raw = NULL;
	}
	if (f->raw)
		t->raw_ci = f->ci;
	return r->ops->decoder(r, slot, f);
}

/* Where the last unit OpenCSD takes from @f starts: its last whole 16-byte frame
 * (frames count from the fragment's start), or its last byte when unformatted.
 * perf_order needs to know what came out of it (dec_perf_order_last_bytes). */
static uint64_t last_unit(const struct frag *f)
{
	uint64_t whole = f->raw ? f->size : f->size / CST_FRAME * CST_FRAME;
	uint64_t unit = f->raw ? 1 : CST_FRAME;

	return whole < unit ? UINT64_MAX : f->data_off + whole - unit;
}

int dec_pi_queue_apply(struct cst_perf_input *in, unsigned q, enum qev kind, uint64_t a,
		       uint64_t b)
{
	switch (kind) {
	case qev_last_bytes:
		return dec_perf_order_last_bytes(in->order, q);
	case qev_end_data:
		return dec_perf_order_end_data(in->order, q);
	case qev_end_fragment:
		return dec_perf_order_end_fragment(in->order, q);
	case qev_no_decoder:
		dec_pi_warnf(in, a, "AUX record: no decoder for this %s data; skipped",
			     b ? "raw" : "formatted");
		return 0;
	case qev_short:
		dec_pi_warnf(in, a, "AUXTRACE data ends early (%" PRIu64 " bytes missing)", b);
		return 0;
	case qev_progress:
		dec_pi_progress(in, a);
		return 0;
	default:
		return -cste_invalid;
	}
}

/* What a piece makes besides elements: to the merge at once, or recorded for it. */
static int event(struct qrun *r, enum qev kind, uint64_t a, uint64_t b)
{
	return r->ops->event(r, kind, a, b);
}

/* Whose the queue's next elements are, and whose memory its decoder reads. */
static void attribute(struct qrun *r, const struct tqueue *t)
{
	struct cst_perf_input *in = r->in;

	if (r->ahead) {
		r->wm.fragment = (uint32_t)(t->cur - in->frags) + 1;
		r->wm.c.pid = t->pid;
		r->wm.tid = t->tid;
		r->wm.cpu = t->cur->cpu;
		r->wm.c.view = t->cur->rec_off;
		return;
	}
	in->cur_queue = r->q;
	in->fragment = (uint32_t)(t->cur - in->frags) + 1;
	in->cur_pid = t->pid;
	in->cur_tid = t->tid;
	in->cur_cpu = t->cur->cpu;
	dec_perf_mem_set_pid(in->mem, t->pid);
	dec_perf_mem_set_view(in->mem, t->cur->rec_off);
}

/* Up to @want bytes at file offset @pos (fewer at the end of the file), through
 * @t's window: what pread() of them would give. */
static int64_t read_piece(struct cst_perf_input *in, struct tqueue *t, uint64_t pos, uint64_t want,
			  const uint8_t **at)
{
	uint64_t avail;

	if (!t->win && !(t->win = malloc(in->win_size)))
		return -cste_nomem;
	if (pos < t->win_pos || pos + want > t->win_pos + t->win_len) {
		int64_t n = cst_perf_reader_pread(in->r, pos, t->win, in->win_size);

		t->win_pos = pos;
		t->win_len = n > 0 ? (uint64_t)n : 0;
		if (n < 0)
			return n;
	}
	avail = t->win_pos + t->win_len - pos;
	*at = t->win + (pos - t->win_pos);
	return (int64_t)(want < avail ? want : avail);
}

int dec_pi_queue_piece(struct qrun *r)
{
	struct cst_perf_input *in = r->in;
	struct tqueue *t = &in->tq[r->q];
	const uint8_t *bytes = NULL;
	uint64_t want;
	int64_t got;
	int ret = 0;

	while (!t->cur) {
		const struct frag *f;

		if (t->scan == UINT64_MAX)
			return 1;
		f = &in->frags[t->scan];
		t->scan = f->next;
		t->dec = queue_decoder(r, t, f);
		if (!t->dec) {
			ret = event(r, qev_no_decoder, f->rec_off, f->raw);
			if (ret)
				return ret;
			continue;
		}
		cst_decoder_reset(t->dec);
		t->cur = f;
		t->pos = f->data_off;
		t->left = f->size;
		t->last_unit = last_unit(f);
		t->pid = f->pid;
		t->tid = f->tid;
	}
	attribute(r, t);
	want = t->left < TIMED_PIECE ? t->left : TIMED_PIECE;
	if (t->pos < t->last_unit && t->pos + want > t->last_unit)
		want = t->last_unit - t->pos; /* the last unit goes in on its own */
	if (t->pos == t->last_unit && (ret = event(r, qev_last_bytes, 0, 0)))
		return ret;
	got = want ? read_piece(in, t, t->pos, want, &bytes) : 0;
	if (want && got <= 0) {
		ret = event(r, qev_short, t->pos, t->left);
		t->left = 0;
	} else {
		int told;

		ret = cst_decoder_feed(t->dec, t->pos, bytes, (size_t)got);
		told = event(r, qev_progress, (uint64_t)got, 0);
		if (!ret)
			ret = told;
		t->pos += (uint64_t)got;
		t->left -= (uint64_t)got;
	}
	if (!ret && !t->left) {
		ret = event(r, qev_end_data, 0, 0);
		if (!ret)
			ret = cst_decoder_end(t->dec);
		if (!ret)
			ret = event(r, qev_end_fragment, 0, 0);
		t->cur = NULL;
	}
	if (ret && !r->ahead && dec_decoder_declined(t->dec)) {
		/* cstrace's decoder met trace it does not cover, on the merge's
		 * thread: the run is taken again with OpenCSD's decoders here */
		in->fallback = true;
		in->serial_ocsd = true;
	}
	/* context IDs may have named another thread */
	t->pid = r->ahead ? r->wm.c.pid : in->cur_pid;
	t->tid = r->ahead ? r->wm.tid : in->cur_tid;
	return ret;
}
