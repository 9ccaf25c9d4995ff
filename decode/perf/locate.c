/* perf.data AUX records to trace fragments: which AUXTRACE buffer holds an AUX
 * record's bytes (found through an index sorted by ring and offset) and whose trace
 * they are. */
#include "perf_int.h"

#include <stdlib.h>

/* Index of @cpu in the AUXTRACE_INFO per-CPU list, or -1. */
static int cpu_index(const struct cst_perf_input *in, uint32_t cpu)
{
	for (uint32_t i = 0; i < in->info.nr_cpu; i++)
		if (in->info.cpus[i].cpu == cpu)
			return (int)i;
	return -1;
}

static uint64_t sat_add(uint64_t a, uint64_t b)
{
	return a + b < a ? UINT64_MAX : a + b;
}

static int cmp_ring(uint32_t pa, uint32_t ra, uint32_t pb, uint32_t rb)
{
	if (pa != pb)
		return pa < pb ? -1 : 1;
	return ra < rb ? -1 : ra > rb;
}

/* A queue: the buffers of one ring read from one mmap (idx), which share one
 * space of aux offsets. A ring nearly always has one. */
static int cmp_queue(const struct bufkey *a, const struct bufkey *b)
{
	int c = cmp_ring(a->per_thread, a->ring, b->per_thread, b->ring);

	if (c)
		return c;
	return a->idx < b->idx ? -1 : a->idx > b->idx;
}

static int cmp_bufkey(const void *pa, const void *pb)
{
	const struct bufkey *a = pa, *b = pb;
	int c = cmp_queue(a, b);

	if (c)
		return c;
	if (a->offset != b->offset)
		return a->offset < b->offset ? -1 : 1;
	return a->buf < b->buf ? -1 : a->buf > b->buf;
}

static struct bufkey key_of(const struct auxbuf *b, uint64_t i)
{
	bool pt = b->cpu == UINT32_MAX;

	return (struct bufkey){.per_thread = pt, .ring = pt ? b->tid : b->cpu, .idx = b->idx,
			       .offset = b->offset, .end = sat_add(b->offset, b->size), .buf = i};
}

/* Sort the buffers for find_buf: a linear search per AUX record made files of
 * many fragments quadratic (200k fragments: 30 s). Number the queues too. */
static int index_bufs(struct cst_perf_input *in)
{
	struct bufkey *k = malloc((in->nbufs ? in->nbufs : 1) * sizeof(*k));

	if (!k)
		return -cste_nomem;
	in->nrings = 0;
	for (uint64_t i = 0; i < in->nbufs; i++)
		k[i] = key_of(&in->bufs[i], i);
	qsort(k, in->nbufs, sizeof(*k), cmp_bufkey);
	for (uint64_t i = 0; i < in->nbufs; i++) {
		bool same = i && !cmp_queue(&k[i - 1], &k[i]);

		k[i].max_end = same && k[i - 1].max_end > k[i].end ? k[i - 1].max_end : k[i].end;
		if (!same)
			in->nrings++;
		in->bufs[k[i].buf].ring = in->nrings - 1;
	}
	in->bufkeys = k;
	return 0;
}

int dec_pi_index_bufs(struct cst_perf_input *in)
{
	return in->bufkeys || !in->nbufs ? 0 : index_bufs(in);
}

/* First entry at or after ring (@pt, @ring). */
static uint64_t ring_first(const struct cst_perf_input *in, uint32_t pt, uint32_t ring)
{
	const struct bufkey *k = in->bufkeys;

	return CST_PARTITION(i, 0, in->nbufs, cmp_ring(k[i].per_thread, k[i].ring, pt, ring) < 0);
}

/* Past the entries from @first, the first of its queue, that are in that queue
 * and start at or below @start (all of the queue: UINT64_MAX). */
static uint64_t queue_upto(const struct cst_perf_input *in, uint64_t first, uint64_t start)
{
	const struct bufkey *k = in->bufkeys, *f = &k[first];

	return CST_PARTITION(i, first, in->nbufs, !cmp_queue(&k[i], f) && k[i].offset <= start);
}

/* In the queue whose first entry is @first, the buffer earliest in the file that
 * holds @size bytes at @start, if it comes before *@best. */
static void search_queue(const struct cst_perf_input *in, uint64_t first, uint64_t start,
			 uint64_t size, uint64_t *best)
{
	uint64_t need = sat_add(start, size);

	/* going down from the last entry starting at or below @start, max_end
	 * tells when no earlier one reaches @need */
	for (uint64_t j = queue_upto(in, first, start);
	     j > first && in->bufkeys[j - 1].max_end >= need; j--) {
		const struct bufkey *k = &in->bufkeys[j - 1];
		const struct auxbuf *b = &in->bufs[k->buf];

		if (k->buf < *best && start - b->offset <= b->size &&
		    size <= b->size - (start - b->offset))
			*best = k->buf;
	}
}

const struct auxbuf *dec_pi_ring_at(struct cst_perf_input *in, const struct auxbuf *b,
				    uint64_t p, bool *held)
{
	struct bufkey q = key_of(b, 0);
	const struct bufkey *k;
	uint64_t first, best = UINT64_MAX, j;

	if (dec_pi_index_bufs(in) < 0)
		return NULL;
	k = in->bufkeys;
	first = CST_PARTITION(i, 0, in->nbufs, cmp_queue(&k[i], &q) < 0);
	search_queue(in, first, p, 1, &best);
	*held = best != UINT64_MAX;
	if (*held)
		return &in->bufs[best];
	/* the first past @p: ties in offset are sorted by file order */
	j = queue_upto(in, first, p);
	if (j >= in->nbufs || cmp_queue(&k[j], &q))
		return NULL;
	return &in->bufs[k[j].buf];
}

/* The AUXTRACE buffer of @rec's ring that holds @size bytes at aux offset
 * @start (in any of its queues), the first in the file if several do. Per-thread buffers (cpu -1)
 * match the record's thread, per-CPU ones its CPU; a record without them
 * matches any. */
static const struct auxbuf *find_buf(struct cst_perf_input *in, const struct cst_perf_record *rec,
				     uint64_t start, uint64_t size)
{
	const struct cst_perf_sample_id *sid = &rec->sid;
	uint64_t best = UINT64_MAX;

	if (dec_pi_index_bufs(in) < 0)
		return NULL;
	for (uint32_t pt = 0; pt < 2; pt++) {
		bool any = pt ? !sid->have_tid : !sid->have_cpu;
		uint32_t ring = pt ? sid->tid : sid->cpu;
		uint64_t i = ring_first(in, pt, any ? 0 : ring);

		/* each queue of the ring (of every ring: any) */
		while (i < in->nbufs && in->bufkeys[i].per_thread == pt &&
		       (any || in->bufkeys[i].ring == ring)) {
			search_queue(in, i, start, size, &best);
			i = queue_upto(in, i, UINT64_MAX);
		}
	}
	return best == UINT64_MAX ? NULL : &in->bufs[best];
}

/* Whose the trace of buffer @b is when its fragment starts, as perf has it: per-thread
 * buffers name their thread (cpu = the buffer index), per-CPU ones take
 * ITRACE_START/SWITCH (then context IDs); and which CPU's decoder it needs (that of
 * the record's CPU for per-thread buffers: @cpu, or -1 when the record has none). */
static void attribute(struct cst_perf_input *in, const struct auxbuf *b, int64_t cpu,
		      struct frag *f)
{
	struct running *run;
	int ci;

	if (b->cpu == UINT32_MAX) {
		f->cpu = (int32_t)b->idx;
		f->tid = (int32_t)b->tid;
		f->pid = dec_pi_pid_of(in, f->tid);
		ci = cpu >= 0 ? cpu_index(in, (uint32_t)cpu) : 0;
		if (f->pid < 0 && (run = dec_pi_running_get(in, -2 - (int32_t)b->tid)))
			f->pid = run->pid;
	} else {
		f->cpu = (int32_t)b->cpu;
		ci = cpu_index(in, b->cpu);
		run = dec_pi_running_get(in, (int32_t)b->cpu);
		f->pid = run ? run->pid : -1;
		f->tid = run ? run->tid : -1;
	}
	f->ci = ci < 0 ? 0 : ci;
	f->queue = b->idx;
}

void dec_pi_piece_fragment(struct cst_perf_input *in, const struct auxbuf *b, uint64_t aux,
			   uint64_t size, bool raw, struct frag *f)
{
	*f = (struct frag){.data_off = b->data_off + (aux - b->offset), .size = size,
			   .rec_off = b->hdr_off, .raw = raw};
	attribute(in, b, b->cpu == UINT32_MAX ? -1 : (int64_t)b->cpu, f);
}

/* Where an AUX record's trace lies and whose it is. False: it has none. */
bool dec_pi_aux_fragment(struct cst_perf_input *in, const struct cst_perf_record *rec,
			 struct frag *f, const struct auxbuf **bp)
{
	uint64_t size = rec->u.aux.aux_size, start = rec->u.aux.aux_offset;
	const struct auxbuf *b;

	in->aux_unheld = in->aux_cut = 0;
	if (rec->u.aux.flags & CST_PERF_AUX_TRUNCATED)
		in->truncated_aux++;
	if (!size)
		return false;
	if (rec->u.aux.flags & CST_PERF_AUX_OVERWRITE) {
		/* snapshot: aux_offset is the end of the data */
		if (size > start)
			size = start;
		start -= size;
	}
	b = find_buf(in, rec, start, size);
	if (!b && (rec->u.aux.flags & CST_PERF_AUX_OVERWRITE)) {
		/* perf clamps snapshot sizes to the buffer it saved */
		for (uint64_t i = 0; i < in->nbufs && !b; i++) {
			const struct auxbuf *c = &in->bufs[i];

			if (c->offset + c->size == rec->u.aux.aux_offset &&
			    (c->cpu == UINT32_MAX || !rec->sid.have_cpu || c->cpu == rec->sid.cpu)) {
				b = c;
				start = c->offset;
				size = c->size;
			}
		}
	}
	if (!b && (b = find_buf(in, rec, start, 1)) != NULL) {
		/* the file holds the start of this record's trace but not all of it (cut
		 * short, or an AUXTRACE payload clipped at the end): decode what is there */
		uint64_t held = b->offset + b->size - start;

		dec_pi_warnf(in, rec->file_offset,
			     "AUX record: only %" PRIu64 " of its %" PRIu64 " trace bytes (aux offset "
			     "0x%" PRIx64 ") are in the file; decoding those", held, size, start);
		in->aux_cut = size - held;
		size = held;
	}
	if (!b) {
		in->missing_aux++;
		in->aux_unheld = size;
		dec_pi_warnf(in, rec->file_offset,
		      "AUX record: no AUXTRACE data holds aux offset 0x%" PRIx64 " size 0x%" PRIx64
		      " (cpu %d tid %d); fragment skipped",
		      start, size, rec->sid.have_cpu ? (int)rec->sid.cpu : -1,
		      rec->sid.have_tid ? (int)rec->sid.tid : -1);
		return false;
	}
	attribute(in, b, rec->sid.have_cpu ? (int64_t)rec->sid.cpu : -1, f);
	f->raw = rec->u.aux.flags & CST_PERF_AUX_CORESIGHT_RAW;
	f->data_off = b->data_off + (start - b->offset);
	f->size = size;
	f->rec_off = rec->file_offset;
	*bp = b;
	return true;
}

/* Without AUX records (old perf, or piped), a whole AUXTRACE buffer is one
 * fragment, of its thread (per-thread, cpu = the buffer index) or of its CPU. */
void dec_pi_buffer_fragment(struct cst_perf_input *in, const struct cst_perf_record *rec,
			    struct frag *f)
{
	bool per_thread = rec->u.auxtrace.cpu == UINT32_MAX;

	*f = (struct frag){.data_off = rec->u.auxtrace.data_offset, .size = rec->u.auxtrace.size,
			   .rec_off = rec->file_offset, .queue = rec->u.auxtrace.idx};
	f->cpu = per_thread ? (int32_t)rec->u.auxtrace.idx : (int32_t)rec->u.auxtrace.cpu;
	f->tid = per_thread ? (int32_t)rec->u.auxtrace.tid : -1;
	f->pid = f->tid >= 0 ? dec_pi_pid_of(in, f->tid) : -1;
}
