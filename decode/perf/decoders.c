/* The decoders of a perf.data input (one per data format: formatted, and each
 * CPU's raw), made on first use with the session's engines, and whose each
 * element is: the pid, tid and CPU as the sideband and context IDs say, and the
 * AUX fragment. */
#include "perf_int.h"

/* Context IDs carry the tid when perf configured them (PID_IN_CONTEXTIDR): a
 * context element @e that names one moves *@tid and *@pid to it (true). */
static bool follow_context(const struct cst_perf_input *in, const struct cst_elem *e,
			   int32_t *tid, int32_t *pid)
{
	bool valid;
	uint32_t id;

	if (e->type != cst_elem_pe_context || in->pid_fmt == pid_fmt_none)
		return false;
	valid = in->pid_fmt == pid_fmt_ctxid ? e->ctx.ctxid_valid : e->ctx.vmid_valid;
	id = in->pid_fmt == pid_fmt_ctxid ? e->ctx.context_id : e->ctx.vmid;
	if (!valid || !id)
		return false;
	*tid = (int32_t)id;
	*pid = dec_pi_pid_of(in, *tid);
	return true;
}

int dec_pi_on_elem(void *ctx, const struct cst_elem *elem)
{
	struct cst_perf_input *in = ctx;
	struct cst_elem e;

	in->made++;
	if (follow_context(in, elem, &in->cur_tid, &in->cur_pid))
		dec_perf_mem_set_pid(in->mem, in->cur_pid);
	/* a serial decode after a split run: these went out already */
	if (dec_split_skip_elem(&in->skip))
		return 0;
	/* --id: every queue is decoded (context IDs name threads), only the chosen
	 * trace IDs go out */
	if (in->id_filter[0] || in->id_filter[1]) {
		uint8_t id = elem->trace_id & 0x7f;

		in->ids_seen[id / 64] |= 1ull << (id % 64);
		if (!((in->id_filter[id / 64] >> (id % 64)) & 1))
			return 0;
	}
	in->kept++;
	if (!in->elem_fn)
		return 0;
	/* A worker's element comes attributed already (dec_pi_worker_elem): it is
	 * copied only where a field moves, not once per element. */
	if (elem->pid == in->cur_pid && elem->tid == in->cur_tid && elem->cpu == in->cur_cpu &&
	    elem->fragment == in->fragment)
		return in->elem_fn(in->elem_ctx, elem);
	e = *elem;
	e.pid = in->cur_pid;
	e.tid = in->cur_tid;
	e.cpu = in->cur_cpu;
	e.fragment = in->fragment;
	return in->elem_fn(in->elem_ctx, &e);
}

/* dec_decoder_set_fill of a serial decoder: the element attributed where the
 * decoder made it, as dec_pi_on_elem would, which then passes it on as it is.
 * A copy there of every element (the decoder writes it field by field, the
 * copy reads it in wide loads that wait for those stores) was a twelfth of
 * `report --threads 1`. Following a context ID twice moves nothing. */
static void serial_fill(void *ctx, struct cst_elem *e)
{
	struct cst_perf_input *in = ctx;

	if (follow_context(in, e, &in->cur_tid, &in->cur_pid))
		dec_perf_mem_set_pid(in->mem, in->cur_pid);
	e->pid = in->cur_pid;
	e->tid = in->cur_tid;
	e->cpu = in->cur_cpu;
	e->fragment = in->fragment;
}

/* An element a view deferred: attributed on its worker, as dec_pi_worker_elem
 * does, where the elements between it and the last one here went to views. This
 * thread's attribution goes on from it. */
int dec_pi_view_elem(void *ctx, const struct cst_elem *elem)
{
	struct cst_perf_input *in = ctx;

	if (in->cur_pid != elem->pid) {
		in->cur_pid = elem->pid;
		dec_perf_mem_set_pid(in->mem, in->cur_pid);
	}
	in->cur_tid = elem->tid;
	return dec_pi_on_elem(ctx, elem);
}

/* The threads table stands still while a fragment decodes: read on workers. */
void dec_pi_worker_elem(void *wctx, struct cst_elem *e)
{
	struct worker_mem *w = wctx;

	follow_context(w->in, e, &w->tid, &w->c.pid);
	e->pid = w->c.pid;
	e->tid = w->tid;
	e->cpu = w->cpu;
	e->fragment = w->fragment;
}

struct cst_decoder *dec_pi_decoder_make(struct cst_perf_input *in, const struct cst_trace *trace,
					struct cst_decoder **slot, bool raw, int ci,
					const struct cst_decoder_opts *o,
					const struct dec_engine *engine, cst_elem_fn elem_fn,
					void *elem_ctx, cst_packet_fn pkt_fn, void *pkt_ctx)
{
	int buffer = raw ? (ci < 0 ? -1 : in->raw_buffer[ci]) : in->frames_buffer;
	struct dec_engine e = engine ? *engine : (struct dec_engine){0}; /* NULL: OpenCSD's */

	if (buffer < 0)
		return NULL;
	e.timed = in->timed; /* dec_engine says why */
	if (!*slot) {
		if (dec_decoder_make(slot, trace, buffer, o, &e))
			return NULL;
		cst_decoder_set_elem_cb(*slot, elem_fn, elem_ctx);
		if (pkt_fn)
			cst_decoder_set_packet_cb(*slot, pkt_fn, pkt_ctx);
	}
	return *slot;
}

struct cst_decoder *dec_pi_decoder_in(struct cst_perf_input *in, const struct cst_trace *trace,
				      struct cst_decoder **slot, bool raw, int ci,
				      cst_packet_fn pkt_fn, void *pkt_ctx)
{
	struct cst_decoder_opts o = {.sz = sizeof(o), .log = &in->log,
				     .packets_only = in->packets_only, .fsync_reset = !raw,
				     .mem_read = dec_perf_mem_read, .mem_ctx = in->mem};

	struct cst_decoder *dec = dec_pi_decoder_make(in, trace, slot, raw, ci, &o,
						      in->serial_ocsd ? NULL : &in->engines.serial,
						      dec_pi_on_elem, in, pkt_fn, pkt_ctx);

	if (dec)
		dec_decoder_set_fill(dec, serial_fill, in);
	return dec;
}
