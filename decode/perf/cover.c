/* AUX records against the AUXTRACE queues they point into: every byte decoded once
 * (perf 6.1 skips what no record covers and decodes a repeated record twice). */
#include "perf_int.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

void dec_pi_cover_free(struct cst_perf_input *in)
{
	for (uint32_t i = 0; in->rings && i < in->nrings; i++)
		free(in->rings[i].pieces);
	free(in->rings);
	in->rings = NULL;
}

int dec_pi_cover_begin(struct cst_perf_input *in)
{
	int err;

	dec_pi_cover_free(in);
	in->uncovered_bytes = in->duplicate_bytes = 0;
	/* without AUX records whole buffers are the fragments */
	if (!in->has_aux || !in->nbufs)
		return 0;
	err = dec_pi_index_bufs(in);
	if (err)
		return err;
	in->rings = calloc(in->nrings ? in->nrings : 1, sizeof(*in->rings));
	if (!in->rings)
		return -cste_nomem;
	for (uint64_t i = 0; i < in->nbufs; i++)
		in->rings[in->bufs[i].ring].buf = i;
	return 0;
}

static uint64_t end_of(uint64_t start, uint64_t size)
{
	return start + size < start ? UINT64_MAX : start + size;
}

/* "cpu 2" or "tid 1234": the ring of @b, as warnings name it. */
static const char *ring_name(const struct auxbuf *b, char *s, size_t n)
{
	if (b->cpu == UINT32_MAX)
		snprintf(s, n, "tid %" PRId32, (int32_t)b->tid);
	else
		snprintf(s, n, "cpu %" PRIu32, b->cpu);
	return s;
}

static int add_piece(struct ring_cover *r, uint64_t end, uint64_t rec_off, bool uncovered)
{
	if (CST_GROW(r->pieces, r->cap_pieces, r->npieces + 1) < 0)
		return -cste_nomem;
	r->pieces[r->npieces++] = (struct cover_piece){end, rec_off, uncovered};
	r->done = end;
	return 0;
}

/* Bytes [@from, @to) of buffer @h that no AUX record covers, decoded now: said,
 * counted and marked decoded. */
static int note_uncovered(struct cst_perf_input *in, struct ring_cover *r,
			  const struct auxbuf *h, uint64_t from, uint64_t to)
{
	char ring[32];

	ring_name(h, ring, sizeof(ring));
	if (from == h->offset && to == end_of(h->offset, h->size))
		dec_pi_warnf(in, h->hdr_off,
			     "AUXTRACE record (%s, aux offset 0x%" PRIx64 ", %" PRIu64 " bytes): no "
			     "AUX record covers its trace; perf skips it, cstrace decodes it",
			     ring, h->offset, h->size);
	else
		dec_pi_warnf(in, h->hdr_off,
			     "AUXTRACE record (%s, aux offset 0x%" PRIx64 ", %" PRIu64 " bytes): no "
			     "AUX record covers its %" PRIu64 " bytes at aux offset 0x%" PRIx64
			     "; perf skips them, cstrace decodes them",
			     ring, h->offset, h->size, to - from, from);
	in->uncovered_bytes += to - from;
	return add_piece(r, to, h->hdr_off, true);
}

/* What fill() does with each run of bytes no record covers: decode it now, or
 * keep it for the end of the walk. */
struct filler {
	int (*take)(struct filler *fl, const struct auxbuf *h, uint64_t from, uint64_t to);
	struct cst_perf_input *in;
	struct ring_cover *r;
	const struct frag *like; /* the record they come before, or NULL */
	cover_emit_fn emit;
	void *ctx;
};

/* perf record pads each AUXTRACE payload to 8 bytes: its last few bytes may be no
 * trace, and no record covers them. */
#define PAD 8

/* The fragment of [@from, @to) of @h: attributed as the record they come before
 * (read with its maps), or at the end as the buffer's own, in the format of the
 * ring's last record. */
static void piece(struct filler *fl, const struct auxbuf *h, uint64_t from, uint64_t to,
		  struct frag *f)
{
	const struct ring_cover *r = fl->r;

	if (fl->like) {
		*f = *fl->like;
		f->data_off = h->data_off + (from - h->offset);
		f->size = to - from;
		f->queue = h->idx;
		return;
	}
	dec_pi_piece_fragment(fl->in, h, from, to - from,
			      r->seen ? r->raw : fl->in->frames_buffer < 0, f);
	if (r->seen)
		f->ci = r->ci;
}

static int take_now(struct filler *fl, const struct auxbuf *h, uint64_t from, uint64_t to)
{
	struct frag f;
	int ret;

	piece(fl, h, from, to, &f);
	ret = note_uncovered(fl->in, fl->r, h, from, to);
	return ret ? ret : fl->emit(fl->ctx, &f);
}

/* Whether the runs @fl takes are unformatted trace. */
static bool raw_of(const struct filler *fl)
{
	if (fl->like)
		return fl->like->raw;
	return fl->r->seen ? fl->r->raw : fl->in->frames_buffer < 0;
}

/* The bytes of @fl's queue from what is decoded up to aux offset @to that no
 * record covers, each run that one buffer holds to @fl->take; where no buffer
 * holds them (trace lost) they are passed, and so are a buffer's last bytes when
 * too few to be trace. */
static int fill(struct filler *fl, uint64_t to)
{
	struct ring_cover *r = fl->r;
	const struct auxbuf *b = &fl->in->bufs[r->buf];

	while (r->done < to) {
		bool held;
		const struct auxbuf *h = dec_pi_ring_at(fl->in, b, r->done, &held);
		uint64_t end;
		int ret = 0;

		if (!h) {
			r->done = to;
			break;
		}
		if (!held) {
			r->done = h->offset < to ? h->offset : to;
			continue;
		}
		end = end_of(h->offset, h->size);
		if (end > to)
			ret = fl->take(fl, h, r->done, to);
		else if (end - r->done < PAD || (!raw_of(fl) && end - r->done < CST_FRAME))
			r->done = end; /* perf record's padding, or no whole frame */
		else
			ret = fl->take(fl, h, r->done, end);
		if (ret)
			return ret;
	}
	return 0;
}

/* The record that decoded aux offset @at of ring @r (it is decoded), as a
 * warning names it. */
static void named(const struct ring_cover *r, uint64_t at, char *s, size_t n)
{
	size_t i = CST_PARTITION(k, 0, r->npieces, r->pieces[k].end <= at);

	if (i >= r->npieces)
		snprintf(s, n, "an earlier record");
	else if (r->pieces[i].uncovered)
		snprintf(s, n, "the AUXTRACE record at offset %" PRIu64 " (bytes no AUX record "
			 "covers)", r->pieces[i].rec_off);
	else
		snprintf(s, n, "the AUX record at offset %" PRIu64, r->pieces[i].rec_off);
}

int dec_pi_cover_frag(struct cst_perf_input *in, const struct cst_perf_record *rec,
		      const struct auxbuf *b, struct frag *f, cover_emit_fn emit, void *ctx)
{
	struct filler fl = {take_now, in, NULL, f, emit, ctx};
	struct ring_cover *r;
	uint64_t s, e, dup;
	char ring[32], who[128];
	int ret;

	if (!in->rings)
		return emit(ctx, f);
	r = fl.r = &in->rings[b->ring];
	s = b->offset + (f->data_off - b->data_off);
	e = end_of(s, f->size);
	ret = fill(&fl, s);
	if (ret)
		return ret;
	r->seen = true;
	r->raw = f->raw;
	r->ci = f->ci;
	if (s >= r->done) {
		ret = add_piece(r, e, rec->file_offset, false);
		return ret ? ret : emit(ctx, f);
	}
	/* trace decoded already: what a repeated record names again */
	dup = (e < r->done ? e : r->done) - s;
	if (!f->raw && dup % CST_FRAME)
		dup += CST_FRAME - dup % CST_FRAME; /* whole frames, as the fragment has them */
	named(r, s, who, sizeof(who));
	ring_name(b, ring, sizeof(ring));
	if (dup >= f->size) {
		in->duplicate_bytes += f->size;
		dec_pi_warnf(in, rec->file_offset,
			     "AUX record (%s, aux offset 0x%" PRIx64 ", %" PRIu64 " bytes): its "
			     "trace was decoded for %s; skipped (perf decodes it twice)",
			     ring, s, f->size, who);
		return 0;
	}
	in->duplicate_bytes += dup;
	dec_pi_warnf(in, rec->file_offset,
		     "AUX record (%s, aux offset 0x%" PRIx64 ", %" PRIu64 " bytes): its first %" PRIu64
		     " bytes were decoded for %s; decoding the other %" PRIu64
		     " (perf decodes those %" PRIu64 " twice)",
		     ring, s, f->size, dup, who, f->size - dup, dup);
	f->data_off += dup;
	f->size -= dup;
	ret = add_piece(r, e, rec->file_offset, false);
	return ret ? ret : emit(ctx, f);
}

/* At the end: runs kept to be decoded in the order of their buffers in the file. */
struct rest {
	struct frag f;
	const struct auxbuf *h;
	uint64_t from, to;
	uint32_t ring;
};

struct rests {
	struct rest *v;
	size_t n, cap;
};

static int take_later(struct filler *fl, const struct auxbuf *h, uint64_t from, uint64_t to)
{
	struct rests *k = fl->ctx;

	if (CST_GROW(k->v, k->cap, k->n + 1) < 0)
		return -cste_nomem;
	piece(fl, h, from, to, &k->v[k->n].f);
	k->v[k->n].h = h;
	k->v[k->n].from = from;
	k->v[k->n].to = to;
	k->v[k->n].ring = (uint32_t)(fl->r - fl->in->rings);
	k->n++;
	fl->r->done = to;
	return 0;
}

static int cmp_rest(const void *pa, const void *pb)
{
	const struct rest *a = pa, *b = pb;

	if (a->h != b->h)
		return a->h < b->h ? -1 : 1;
	return a->from < b->from ? -1 : a->from > b->from;
}

int dec_pi_cover_end(struct cst_perf_input *in, cover_emit_fn emit, void *ctx)
{
	struct rests k = {0};
	struct filler fl = {take_later, in, NULL, NULL, NULL, &k};
	int ret = 0;

	for (uint32_t i = 0; in->rings && i < in->nrings && !ret; i++) {
		uint64_t done = in->rings[i].done;

		fl.r = &in->rings[i];
		ret = fill(&fl, UINT64_MAX);
		in->rings[i].done = done; /* marked again as each is decoded */
	}
	if (k.n)
		qsort(k.v, k.n, sizeof(*k.v), cmp_rest);
	for (size_t j = 0; j < k.n && !ret; j++) {
		ret = note_uncovered(in, &in->rings[k.v[j].ring], k.v[j].h, k.v[j].from, k.v[j].to);
		if (!ret)
			ret = emit(ctx, &k.v[j].f);
	}
	free(k.v);
	return ret;
}
