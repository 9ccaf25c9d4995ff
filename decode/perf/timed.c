/* perf.data in time order: every queue decoded by its own decoder a small piece at
 * a time (queue.c), merged as perf merges them (order.h), sideband told by a
 * second reader that trails the merge. */
#include "perf_int.h"

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
		if (in->sb_rec.type == cst_perf_rec_auxtrace)
			continue;
		if (in->redo.sideband) {
			in->redo.sideband--; /* told before the run went to one thread */
			continue;
		}
		in->told.sideband++;
		/* an AUX record: what it lost, noted by the walk */
		ret = in->sb_rec.type == cst_perf_rec_aux
			      ? dec_pi_loss_tell(in, in->sb_rec.file_offset, in->user_sb_fn,
						 in->user_ctx)
			      : dec_pi_sideband(in, &in->sb_rec, in->user_sb_fn, in->user_ctx);
	}
	in->sb_apply = true;
	return ret;
}

/* An element of AUX fragment @fragment is about to go out: the sideband before
 * it and its own AUX record's loss first. 0 or the sideband callback's stop
 * value; *@passed when the element went out before the run went to one thread
 * (a stop value of its own, which the callback may return, cannot say that). */
static int before_elem(struct cst_perf_input *in, uint32_t fragment, bool *passed)
{
	int ret = 0;

	*passed = false;
	if (fragment && fragment <= in->nfrags)
		ret = trail_sideband(in, in->frags[fragment - 1].rec_off + 1);
	if (ret)
		return ret;
	if (in->redo.elements) {
		in->redo.elements--; /* delivered before the run went to one thread */
		*passed = true;
		return 0;
	}
	in->told.elements++;
	return 0;
}

/* A callback's value, as the merge passes it on: a stop value kept aside (the
 * merge's own 1 says that a queue ended), an error as it is. */
static int to_merge(struct cst_perf_input *in, int ret)
{
	if (ret <= 0)
		return ret;
	in->user_stop = ret;
	return PERF_ORDER_STOP;
}

int dec_pi_emit_timed(void *ctx, const struct cst_elem *e)
{
	struct cst_perf_input *in = ctx;
	bool passed;
	int ret = before_elem(in, e->fragment, &passed);

	if (ret || passed)
		return to_merge(in, ret);
	return to_merge(in, in->user_elem_fn ? in->user_elem_fn(in->user_ctx, e) : 0);
}

/* The lines gathered go to the writer. */
static int write_lines(struct cst_perf_input *in)
{
	int ret = 0;

	if (in->lines.failed)
		ret = -cste_nomem;
	else if (in->lines_n)
		ret = in->write(in->write_ctx, (const char *)in->lines.p, in->lines.len,
				in->lines_n, in->lines_offset, in->lines_has_offset);
	in->lines.len = 0;
	in->lines_n = 0;
	in->lines_has_offset = false;
	return ret;
}

/* Bytes of lines gathered before they go to the writer at once. */
#define LINES_OUT (64u * 1024u)

int dec_pi_line_timed(struct cst_perf_input *in, uint32_t fragment, const char *line, size_t len,
		      uint64_t offset)
{
	bool passed;
	int ret = before_elem(in, fragment, &passed);

	if (ret || passed)
		return to_merge(in, ret);
	cst_buf_put(&in->lines, line, len);
	in->lines_n++;
	if (offset != UINT64_MAX) {
		in->lines_offset = offset;
		in->lines_has_offset = true;
	}
	return to_merge(in, in->lines.len >= LINES_OUT ? write_lines(in) : 0);
}

/* dec_pi_on_elem, in time order: hold the element in its queue. */
static int hold_timed(void *ctx, const struct cst_elem *e)
{
	struct cst_perf_input *in = ctx;

	return dec_perf_order_push(in->order, in->cur_queue, e) ? 0 : -cste_nomem;
}

/* On the merge's thread, a queue's decoder is a serial run's, and what its
 * pieces make goes to the merge at once. */
static struct cst_decoder *merge_decoder(struct qrun *r, struct cst_decoder **slot,
					 const struct frag *f)
{
	return dec_pi_decoder_in(r->in, r->in->trace, slot, f->raw, f->ci, NULL, NULL);
}

static int merge_event(struct qrun *r, enum qev kind, uint64_t a, uint64_t b)
{
	return dec_pi_queue_apply(r->in, r->q, kind, a, b);
}

static const struct qrun_ops merge_ops = {merge_decoder, merge_event};

/* perf_order_fill_fn on the merge's thread: decode the next piece of queue @q's
 * trace. */
static int fill_timed(void *ctx, unsigned q)
{
	struct cst_perf_input *in = ctx;
	struct qrun r = {.in = in, .q = q, .ops = &merge_ops};

	return dec_pi_queue_piece(&r);
}

/* The merge: of the chunks run ahead on threads, or of the queues run here
 * (in->queues_ahead counts what a first run did: a run taken again decodes
 * here). Where cst_session_run_lines prints, the workers print the chunks'
 * elements and this thread writes their lines in order; what went out is
 * written before this returns (a worker's crash stops the merge before its next
 * element). */
static int merge(struct cst_perf_input *in)
{
	int ret, fin = 0;

	if (!in->ahead) {
		ret = dec_perf_order_run(in->order);
	} else {
		ret = dec_perf_order_merge(in->ntq, dec_pi_ahead_chunk, in);
		fin = write_lines(in);
		cst_buf_fini(&in->lines);
	}
	if (ret == PERF_ORDER_STOP)
		ret = in->user_stop;
	return ret ? ret : fin;
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
		in->order = dec_perf_order_alloc(ntq, kind, fill_timed, dec_pi_emit_timed, in);
		if (!in->order)
			return -cste_nomem;
		dec_perf_order_keep_ocsd(in->order, !in->apart); /* the pipe drops it */
		in->elem_fn = hold_timed;
		in->elem_ctx = in;
		if (ahead && (ret = dec_pi_ahead_start(in)))
			return ret;
		ret = merge(in);
		dec_pi_ahead_stop(in);
	}
	if (!ret)
		ret = trail_sideband(in, UINT64_MAX);
	/* the ends of records cut short: after all the trace */
	if (!ret && in->redo.sideband)
		in->redo.sideband--;
	else if (!ret && ++in->told.sideband)
		ret = dec_pi_loss_tell(in, UINT64_MAX, in->user_sb_fn, in->user_ctx);
	return ret;
}

/* Decode the queued fragments merged as perf 6.1 merges them (order.h). */
int dec_pi_run_timed(struct cst_perf_input *in, const struct cst_trace *trace,
		     cst_elem_fn elem_fn, cst_sideband_fn sb_fn, void *ctx)
{
	uint64_t progress_from = in->progress_done;
	struct timed_counts said;
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
	/* A decoder on a thread had something to say (corrupt trace): its text comes
	 * from OpenCSD's one process-wide logger, silenced while threads decode. Or
	 * cstrace's decoder declined on this thread (queue.c): then OpenCSD's
	 * decoders do it. Start again on this thread, and pass what went out already
	 * (at most twice: the second time the decoders are OpenCSD's). */
	said = in->told;
	while (in->fallback) {
		in->fallback = false;
		in->fallbacks++;
		dec_pi_free_timed(in);
		in->redo = said;
		if (in->progress_done > in->progress_quiet_to)
			in->progress_quiet_to = in->progress_done;
		in->progress_done = progress_from;
		memset(&in->told, 0, sizeof(in->told));
		ret = run_merge(in, false);
		/* what the run passed was said before; what it told is new */
		said.elements += in->told.elements;
		said.sideband += in->told.sideband;
		said.messages += in->told.messages;
	}
	in->progress_quiet_to = 0;
	in->serial_ocsd = false;
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
