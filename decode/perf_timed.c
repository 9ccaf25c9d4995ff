/* perf.data in time order: every queue decoded by its own decoder a small piece at
 * a time, merged as perf merges them (perf_order.h), sideband told by a second
 * reader that trails the merge. */
#include "perf_input_int.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------- time order */

/* Tell the sideband records that lie before file offset @upto (all: UINT64_MAX),
 * read by a second reader that trails the merge; state was applied by the walk. */
static int trail_sideband(struct cst_perf_input *in, uint64_t upto)
{
	int ret = 0;

	in->sb_apply = false;
	while (!ret && !in->sb_done) {
		if (!in->sb_pending) {
			if (cst_perf_reader_next(in->sb_r, &in->sb_rec)) {
				in->sb_done = true; /* the end, or where the walk stopped too */
				break;
			}
			in->sb_pending = true;
		}
		if (in->sb_rec.file_offset >= upto)
			break;
		in->sb_pending = false;
		if (in->sb_rec.type == cst_perf_rec_aux || in->sb_rec.type == cst_perf_rec_auxtrace)
			continue;
		if (in->redo.sideband) {
			in->redo.sideband--; /* told before the run went to one thread */
			continue;
		}
		in->told.sideband++;
		ret = dec_pi_sideband(in, &in->sb_rec, in->user_sb_fn, in->user_ctx);
	}
	in->sb_apply = true;
	return ret;
}

/* perf_order: an element of the merge goes out, after the sideband before it. */
static int emit_timed(void *ctx, const struct cst_elem *e)
{
	struct cst_perf_input *in = ctx;
	int ret = 0;

	if (e->fragment && e->fragment <= in->nfrags)
		ret = trail_sideband(in, in->frags[e->fragment - 1].rec_off);
	if (ret)
		return ret;
	if (in->redo.elements) {
		in->redo.elements--; /* delivered before the run went to one thread */
		return 0;
	}
	in->told.elements++;
	return in->user_elem_fn ? in->user_elem_fn(in->user_ctx, e) : 0;
}

/* on_elem, in time order: hold the element in its queue. */
static int hold_timed(void *ctx, const struct cst_elem *e)
{
	struct cst_perf_input *in = ctx;

	return dec_perf_order_push(in->order, in->cur_queue, e);
}

/* The decoder of queue @t for fragment @f (one per queue, as perf has): in a serial
 * run the shared ones' kind; decoding ahead, one reading through the queue's own
 * memory cursor. */
static struct cst_decoder *queue_decoder(struct qrun *r, struct tqueue *t, const struct frag *f)
{
	struct cst_perf_input *in = r->in;
	struct cst_decoder **slot = f->raw ? &t->raw : &t->frames;

	if (f->raw && t->raw && t->raw_ci != f->ci) {
		cst_decoder_free(t->raw);
		t->raw = NULL;
	}
	if (f->raw)
		t->raw_ci = f->ci;
	if (!r->ahead)
		return dec_pi_decoder_in(in, in->trace, slot, f->raw, f->ci, NULL, NULL);
	return dec_pi_ahead_decoder(r, slot, f);
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

int dec_pi_timed_apply(struct cst_perf_input *in, unsigned q, enum qev kind, uint64_t a,
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
	return r->ahead ? dec_pi_ahead_record(r, kind, a, b)
			: dec_pi_timed_apply(r->in, r->q, kind, a, b);
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

int dec_pi_timed_piece(struct qrun *r)
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
	/* context IDs may have named another thread */
	t->pid = r->ahead ? r->wm.c.pid : in->cur_pid;
	t->tid = r->ahead ? r->wm.tid : in->cur_tid;
	return ret;
}

/* perf_order_fill_fn: decode the next piece of queue @q's trace, or take what
 * was decoded ahead. */
static int fill_timed(void *ctx, unsigned q)
{
	struct cst_perf_input *in = ctx;
	struct qrun r = {.in = in, .q = q};

	if (in->ahead)
		return dec_pi_ahead_fill(in, q);
	return dec_pi_timed_piece(&r);
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* Number the queues 0..*@ntq-1 by the AUXTRACE idx values the fragments hold,
 * in their order (ties in the merge go by queue number, as in perf). The idx is
 * a 32-bit number from the file: arrays sized by the largest let a small file
 * ask for gigabytes, and idx 0xffffffff wrapped the count to no queue at all. */
static int number_queues(struct cst_perf_input *in, unsigned *ntq)
{
	uint32_t *ids = malloc((in->nfrags ? in->nfrags : 1) * sizeof(*ids));
	uint64_t n = 0;

	if (!ids)
		return -cste_nomem;
	for (uint64_t i = 0; i < in->nfrags; i++)
		ids[i] = in->frags[i].queue;
	qsort(ids, in->nfrags, sizeof(*ids), cmp_u32);
	for (uint64_t i = 0; i < in->nfrags; i++)
		if (!n || ids[n - 1] != ids[i])
			ids[n++] = ids[i];
	for (uint64_t i = 0; i < in->nfrags; i++) {
		const uint32_t *at = bsearch(&in->frags[i].queue, ids, n, sizeof(*ids), cmp_u32);

		in->frags[i].queue = (uint32_t)(at - ids);
	}
	free(ids);
	*ntq = (unsigned)n; /* at most one queue per fragment */
	return 0;
}

/* Chain each queue's fragments in file order, so that a queue finds its next
 * without looking at the others'. */
static void chain_queues(struct cst_perf_input *in)
{
	for (unsigned q = 0; q < in->ntq; q++)
		in->tq[q].scan = UINT64_MAX;
	for (uint64_t i = in->nfrags; i-- > 0;) {
		struct tqueue *t = &in->tq[in->frags[i].queue];

		in->frags[i].next = t->scan;
		t->scan = i;
	}
}

/* Set up the merge of the queued fragments and run it, decoding ahead on threads
 * when @ahead. */
static int run_merge(struct cst_perf_input *in, bool ahead)
{
	struct cst_perf_reader_opts ro = {.sz = sizeof(ro)};
	enum perf_order_ctx kind = in->pid_fmt == pid_fmt_ctxid  ? perf_order_ctx_ctxid
				   : in->pid_fmt == pid_fmt_vmid ? perf_order_ctx_vmid
								 : perf_order_ctx_none;
	unsigned ntq = 0;
	int ret;

	ret = number_queues(in, &ntq);
	if (ret)
		return ret;
	in->sb_pending = in->sb_done = false;
	in->tq = calloc(ntq ? ntq : 1, sizeof(*in->tq));
	if (!in->tq)
		return -cste_nomem;
	in->win_size = ntq && TIMED_WINDOWS / ntq < TIMED_WINDOW ? TIMED_WINDOWS / ntq : TIMED_WINDOW;
	if (in->win_size < TIMED_PIECE)
		in->win_size = TIMED_PIECE;
	in->ntq = ntq;
	chain_queues(in);
	ret = cst_perf_reader_open(&in->sb_r, in->path, &ro); /* warnings came from the walk */
	if (ret)
		return ret;
	if (ntq) {
		in->order = dec_perf_order_alloc(ntq, kind, fill_timed, emit_timed, in);
		if (!in->order)
			return -cste_nomem;
		dec_perf_order_keep_ocsd(in->order, !in->apart); /* the pipe drops it */
		in->elem_fn = hold_timed;
		in->elem_ctx = in;
		if (ahead && (ret = dec_pi_ahead_start(in)))
			return ret;
		ret = dec_perf_order_run(in->order);
		dec_pi_ahead_stop(in);
	}
	if (!ret)
		ret = trail_sideband(in, UINT64_MAX);
	return ret;
}

/* Decode the queued fragments merged as perf 6.1 merges them (perf_order.h). */
int dec_pi_run_timed(struct cst_perf_input *in, const struct cst_trace *trace,
		     cst_elem_fn elem_fn, cst_sideband_fn sb_fn, void *ctx)
{
	uint64_t progress_from = in->progress_done;
	int ret;

	dec_pi_free_timed(in);
	in->fallback = false;
	in->queues_ahead = in->fallbacks = 0;
	in->trace = trace;
	in->user_elem_fn = elem_fn;
	in->user_sb_fn = sb_fn;
	in->user_ctx = ctx;
	memset(&in->told, 0, sizeof(in->told));
	memset(&in->redo, 0, sizeof(in->redo));
	ret = run_merge(in, dec_pi_ahead_wanted(in));
	if (!in->fallback)
		return ret;
	/* A decoder on a thread had something to say (corrupt trace): its text comes
	 * from OpenCSD's one process-wide logger, silenced while threads decode. Start
	 * again on this thread, and pass what went out already. */
	in->fallback = false;
	in->fallbacks++;
	dec_pi_free_timed(in);
	in->redo = in->told;
	in->progress_quiet_to = in->progress_done;
	in->progress_done = progress_from;
	memset(&in->told, 0, sizeof(in->told));
	ret = run_merge(in, false);
	in->progress_quiet_to = 0;
	return ret;
}

void dec_pi_free_timed(struct cst_perf_input *in)
{
	dec_pi_ahead_stop(in); /* its decoders are the queues' */
	for (unsigned q = 0; in->tq && q < in->ntq; q++) {
		cst_decoder_free(in->tq[q].frames);
		cst_decoder_free(in->tq[q].raw);
		free(in->tq[q].win);
	}
	free(in->tq);
	in->tq = NULL;
	in->ntq = 0;
	dec_perf_order_free(in->order);
	in->order = NULL;
	cst_perf_reader_free(in->sb_r);
	in->sb_r = NULL;
	dec_pi_ahead_free(in);
}
