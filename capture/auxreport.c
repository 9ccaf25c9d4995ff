/* The AUX-buffer report: matches every PERF_RECORD_AUX of a perf.data file with the
 * AUXTRACE chunks that hold its bytes, and counts flags, gaps, wraps and lost bytes. */
#include "cstrace/capture.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cstrace/perfdata.h"

struct cst_aux_report {
	struct cst_aux_rec_info *recs;
	uint64_t nrecs;
	struct cst_aux_chunk_info *chunks;
	uint64_t nchunks;
	struct cst_aux_queue_summary *queues;
	int nqueues;
	size_t cap_queues;
	uint64_t aux_size;    /* as given (0 = unknown) */
	bool per_thread;
	bool incomplete;      /* the file was not finished */
};

const char *cst_aux_flags_words(uint64_t flags, char *buf, size_t size)
{
	static const struct { uint64_t bit; const char *word; } words[] = {
		{CST_PERF_AUX_TRUNCATED, "truncated"}, {CST_PERF_AUX_OVERWRITE, "overwrite"},
		{CST_PERF_AUX_PARTIAL, "partial"},     {CST_PERF_AUX_COLLISION, "collision"},
		{CST_PERF_AUX_CORESIGHT_RAW, "raw"},
	};
	size_t n = 0;

	if (!buf || !size)
		return "";
	buf[0] = 0;
	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		if (flags & words[i].bit)
			n += (size_t)snprintf(buf + n, n < size ? size - n : 0, "%s%s", n ? "," : "",
					      words[i].word);
	if (!n)
		snprintf(buf, size, "-");
	return buf;
}

static struct cst_aux_queue_summary *queue(struct cst_aux_report *r, int cpu)
{
	struct cst_aux_queue_summary *q;

	for (int i = 0; i < r->nqueues; i++)
		if (r->queues[i].cpu == cpu)
			return &r->queues[i];
	if (CST_GROW(r->queues, r->cap_queues, (size_t)r->nqueues + 1) < 0)
		return NULL;
	q = &r->queues[r->nqueues++];
	q->cpu = cpu;
	return q;
}

static int cmp_chunk(const void *a, const void *b)
{
	const struct cst_aux_chunk_info *x = a, *y = b;

	if (x->cpu != y->cpu)
		return x->cpu < y->cpu ? -1 : 1;
	if (x->offset != y->offset)
		return x->offset < y->offset ? -1 : 1;
	return x->index < y->index ? -1 : x->index > y->index;
}

static int cmp_queue(const void *a, const void *b)
{
	const struct cst_aux_queue_summary *x = a, *y = b;

	return (x->cpu > y->cpu) - (x->cpu < y->cpu);
}

struct qend {
	int cpu;
	uint64_t end;
};

static int cmp_qend(const void *a, const void *b)
{
	const struct qend *x = a, *y = b;

	if (x->cpu != y->cpu)
		return x->cpu < y->cpu ? -1 : 1;
	return (x->end > y->end) - (x->end < y->end);
}

/* perf pads a chunk to 8 bytes, so its size may run up to 7 bytes past its
 * data. The data ends where the next chunk starts, or else where an AUX
 * record ends (a chunk is copied up to aux_head, which is a record's end). */
static int chunk_data_sizes(struct cst_aux_report *r)
{
	struct qend *ends = calloc(r->nrecs + 1, sizeof(*ends));

	if (!ends)
		return -cste_nomem;
	for (uint64_t i = 0; i < r->nrecs; i++)
		ends[i] = (struct qend){r->recs[i].cpu, r->recs[i].end};
	qsort(ends, r->nrecs, sizeof(*ends), cmp_qend);
	for (uint64_t i = 0; i < r->nchunks; i++) {
		struct cst_aux_chunk_info *c = &r->chunks[i], *n = c + 1;
		uint64_t end = c->offset + c->size, lo;

		if (i + 1 < r->nchunks && n->cpu == c->cpu && n->offset > c->offset && n->offset < end)
			end = n->offset;
		/* the last record end <= end in this queue */
		lo = CST_PARTITION(j, 0, r->nrecs, ends[j].cpu < c->cpu ||
						      (ends[j].cpu == c->cpu && ends[j].end <= end));
		if (lo > 0 && ends[lo - 1].cpu == c->cpu && ends[lo - 1].end + 8 > end &&
		    ends[lo - 1].end > c->offset)
			end = ends[lo - 1].end;
		c->data_size = end - c->offset;
	}
	free(ends);
	return 0;
}

/* Whether chunk @c lies wholly before @a's queue position: in an earlier queue, or
 * ending at or before @a starts. */
static bool chunk_before(const struct cst_aux_chunk_info *c, const struct cst_aux_rec_info *a)
{
	return c->cpu < a->cpu || (c->cpu == a->cpu && c->offset + c->data_size <= a->start);
}

/* Overlaps of [start, end) with the queue's chunks (sorted by offset). */
static void match(struct cst_aux_report *r, struct cst_aux_rec_info *a, uint64_t *by_index)
{
	/* first chunk of the queue that could overlap: offset + size > start */
	uint64_t lo = CST_PARTITION(i, 0, r->nchunks, chunk_before(&r->chunks[i], a));

	a->chunk = -1;
	a->covered = 0;
	/* Chunks of one queue can overlap each other only in snapshot mode, where
	 * each one holds the same positions again; count a position once. */
	for (uint64_t pos = a->start, i = lo; i < r->nchunks; i++) {
		struct cst_aux_chunk_info *c = &r->chunks[i];
		uint64_t s, e;

		if (c->cpu != a->cpu || c->offset >= a->end)
			break;
		s = c->offset > pos ? c->offset : pos;
		e = c->offset + c->data_size < a->end ? c->offset + c->data_size : a->end;
		if (e <= s)
			continue;
		if (a->chunk < 0)
			a->chunk = (int64_t)c->index;
		a->covered += e - s;
		pos = e;
		by_index[c->index]++;
	}
	a->lost = a->aux_size - a->covered;
}

int cst_aux_report_build(struct cst_aux_report **out, const char *path, uint64_t aux_size,
			 const struct cst_log *log)
{
	struct cst_perf_reader_opts ro = {.sz = sizeof(ro), .log = log};
	struct cst_perf_reader *rd;
	struct cst_perf_record rec;
	struct cst_aux_report *r;
	uint64_t order = 0, *by_index = NULL;
	size_t cap_recs = 0, cap_chunks = 0, nlast = 0, cap_last = 0;
	int64_t *last = NULL; /* per queue: its last record so far, or -1 */
	int err;

	if (!out || !path || (aux_size & (aux_size - 1)))
		return -cste_invalid;
	*out = NULL;
	err = cst_perf_reader_open(&rd, path, &ro);
	if (err < 0)
		return err;
	r = calloc(1, sizeof(*r));
	if (!r) {
		cst_perf_reader_free(rd);
		return -cste_nomem;
	}
	r->aux_size = aux_size;
	r->incomplete = cst_perf_reader_incomplete(rd);
	r->per_thread = true;
	while ((err = cst_perf_reader_next(rd, &rec)) == 0) {
		if (rec.type == cst_perf_rec_aux) {
			struct cst_aux_rec_info *a;

			if (CST_GROW(r->recs, cap_recs, (size_t)r->nrecs + 1) < 0) {
				err = -cste_nomem;
				break;
			}
			a = &r->recs[r->nrecs];
			memset(a, 0, sizeof(*a));
			a->index = r->nrecs++;
			a->file_offset = rec.file_offset;
			a->cpu = rec.sid.have_cpu ? (int)rec.sid.cpu : -1;
			a->time = rec.sid.have_time ? rec.sid.time : 0;
			a->aux_offset = rec.u.aux.aux_offset;
			a->aux_size = rec.u.aux.aux_size;
			a->flags = rec.u.aux.flags;
			/* overwrite mode reports where the data ends */
			if (a->flags & CST_PERF_AUX_OVERWRITE) {
				a->end = a->aux_offset;
				a->start = a->aux_offset - a->aux_size;
			} else {
				a->start = a->aux_offset;
				a->end = a->aux_offset + a->aux_size;
			}
			a->order = order++;
		} else if (rec.type == cst_perf_rec_auxtrace) {
			struct cst_aux_chunk_info *c;

			if (CST_GROW(r->chunks, cap_chunks, (size_t)r->nchunks + 1) < 0) {
				err = -cste_nomem;
				break;
			}
			c = &r->chunks[r->nchunks];
			memset(c, 0, sizeof(*c));
			c->index = r->nchunks++;
			c->file_offset = rec.file_offset;
			c->cpu = (int)rec.u.auxtrace.cpu;
			c->idx = rec.u.auxtrace.idx;
			c->tid = rec.u.auxtrace.tid;
			c->offset = rec.u.auxtrace.offset;
			c->size = rec.u.auxtrace.size;
			c->order = order++;
			if (c->cpu != -1)
				r->per_thread = false;
		} else if (rec.type == cst_perf_rec_lost) {
			struct cst_aux_queue_summary *q =
				queue(r, rec.sid.have_cpu ? (int)rec.sid.cpu : -1);
			if (q)
				q->lost_events += rec.u.lost.lost;
		}
	}
	cst_perf_reader_free(rd);
	if (err == -cste_eos || err == -cste_truncated)
		err = 0; /* a cut file: report what it holds */
	if (err < 0)
		goto fail;
	r->per_thread = r->per_thread && r->nchunks;
	if (r->per_thread) {
		/* one queue: the CPU in a per-thread record is where it ran */
		for (uint64_t i = 0; i < r->nrecs; i++)
			r->recs[i].cpu = -1;
		for (int i = 0; i < r->nqueues; i++)
			r->queues[i].cpu = -1;
	}
	if (r->nchunks)
		qsort(r->chunks, r->nchunks, sizeof(*r->chunks), cmp_chunk);
	err = chunk_data_sizes(r);
	if (err < 0)
		goto fail;
	by_index = calloc(r->nchunks + 1, sizeof(uint64_t));
	if (!by_index) {
		err = -cste_nomem;
		goto fail;
	}
	for (uint64_t i = 0; i < r->nchunks; i++) {
		struct cst_aux_queue_summary *q = queue(r, r->chunks[i].cpu);

		if (!q) {
			err = -cste_nomem;
			goto fail;
		}
		q->chunks++;
		q->chunk_bytes += r->chunks[i].size;
	}
	for (uint64_t i = 0; i < r->nrecs; i++) {
		struct cst_aux_rec_info *a = &r->recs[i];
		struct cst_aux_queue_summary *q = queue(r, a->cpu);
		int64_t prev;
		uint64_t gap_bytes;
		size_t qi;

		if (!q) {
			err = -cste_nomem;
			goto fail;
		}
		match(r, a, by_index);
		/* the queue's previous record: kept per queue, not searched back for
		 * (that was quadratic in the records) */
		qi = (size_t)(q - r->queues);
		for (; nlast <= qi; nlast++) {
			if (CST_GROW(last, cap_last, nlast + 1) < 0) {
				err = -cste_nomem;
				goto fail;
			}
			last[nlast] = -1;
		}
		prev = last[qi];
		last[qi] = (int64_t)i;
		/* the distance, taken unsigned: offsets from the file may lie 2^63
		 * or more apart, which the signed gap cannot hold (it saturates) and
		 * negating INT64_MIN is undefined */
		gap_bytes = prev < 0 ? 0
			    : a->start >= r->recs[prev].end ? a->start - r->recs[prev].end
							    : r->recs[prev].end - a->start;
		a->gap = gap_bytes > INT64_MAX ? INT64_MAX : (int64_t)gap_bytes;
		if (prev >= 0 && a->start < r->recs[prev].end)
			a->gap = -a->gap;
		a->wraps = !aux_size ? -1
			   : a->aux_size ? (int64_t)((a->end - 1) / aux_size - a->start / aux_size)
					 : 0;
		q->records++;
		q->record_bytes += a->aux_size;
		q->truncated += !!(a->flags & CST_PERF_AUX_TRUNCATED);
		q->empty_truncated += (a->flags & CST_PERF_AUX_TRUNCATED) && !a->aux_size;
		q->overwrite += !!(a->flags & CST_PERF_AUX_OVERWRITE);
		q->partial += !!(a->flags & CST_PERF_AUX_PARTIAL);
		q->collision += !!(a->flags & CST_PERF_AUX_COLLISION);
		if (a->gap) {
			q->gaps++;
			q->gap_bytes += gap_bytes;
		}
		q->lost_bytes += a->lost;
		q->wraps += a->wraps > 0 ? (uint64_t)a->wraps : 0;
	}
	for (uint64_t i = 0; i < r->nchunks; i++)
		r->chunks[i].records = by_index[r->chunks[i].index];
	/* back to file order for printing */
	for (uint64_t i = 0; i < r->nchunks; i++)
		while (r->chunks[i].index != i) {
			struct cst_aux_chunk_info t = r->chunks[r->chunks[i].index];

			r->chunks[r->chunks[i].index] = r->chunks[i];
			r->chunks[i] = t;
		}
	if (r->nqueues)
		qsort(r->queues, (size_t)r->nqueues, sizeof(*r->queues), cmp_queue);
	free(by_index);
	free(last);
	*out = r;
	return 0;
fail:
	free(by_index);
	free(last);
	cst_aux_report_free(r);
	return err;
}

void cst_aux_report_free(struct cst_aux_report *r)
{
	if (!r)
		return;
	free(r->recs);
	free(r->chunks);
	free(r->queues);
	free(r);
}

struct cst_aux_report_info cst_aux_report_get_info(const struct cst_aux_report *r)
{
	struct cst_aux_report_info info = {0};

	if (r)
		info = (struct cst_aux_report_info){r->nrecs, r->nchunks, r->nqueues,
						    r->aux_size, r->per_thread, r->incomplete};
	return info;
}

const struct cst_aux_rec_info *cst_aux_report_rec(const struct cst_aux_report *r, uint64_t i)
{
	return r && i < r->nrecs ? &r->recs[i] : NULL;
}

const struct cst_aux_chunk_info *cst_aux_report_chunk(const struct cst_aux_report *r, uint64_t i)
{
	return r && i < r->nchunks ? &r->chunks[i] : NULL;
}

const struct cst_aux_queue_summary *cst_aux_report_queue(const struct cst_aux_report *r, int i)
{
	return r && i >= 0 && i < r->nqueues ? &r->queues[i] : NULL;
}

/* Bytes in words: "5136 bytes", "71.9 KiB". */
static const char *bytes_words(uint64_t v, char *buf, size_t size)
{
	if (v < 10240)
		snprintf(buf, size, "%llu bytes", (unsigned long long)v);
	else if (v < 10ull << 20)
		snprintf(buf, size, "%.1f KiB", (double)v / 1024);
	else
		snprintf(buf, size, "%.1f MiB", (double)v / (1024 * 1024));
	return buf;
}

int cst_aux_report_svg(const struct cst_aux_report *r, void *fp)
{
	static const char *const colors[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd",
					     "#ff7f0e", "#17becf", "#8c564b", "#e377c2"};
	/* the two panels share the x axis (records and chunks in file order); the
	 * legend with each queue's totals and losses sits under the axis, off the
	 * lines, one row a queue */
	const double W = 900, L = 90, R = 20, top = 40, mid = 270, gap = 30, bot = 440;
	const double H = bot + 70 + 18.0 * (r && r->nqueues ? r->nqueues : 1);
	uint64_t maxpos = 1, maxchunk = 1, n = 1;
	char w1[32], w2[32], w3[32];
	FILE *f = fp;

	if (!r || !f)
		return -cste_invalid;
	for (uint64_t i = 0; i < r->nrecs; i++) {
		uint64_t rel = r->recs[i].end - (r->nrecs ? r->recs[0].start : 0);
		if (rel > maxpos && rel < (1ULL << 62))
			maxpos = rel;
	}
	for (uint64_t i = 0; i < r->nchunks; i++)
		if (r->chunks[i].size > maxchunk)
			maxchunk = r->chunks[i].size;
	n = r->nrecs + r->nchunks > 1 ? r->nrecs + r->nchunks - 1 : 1;
	fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
		   "font-family=\"sans-serif\" font-size=\"12\">\n"
		   "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n"
		   "<text x=\"%.0f\" y=\"20\" font-size=\"14\">AUX head position and AUXTRACE chunk "
		   "sizes, in file order</text>\n",
		W, H, L);
	/* the panels' frames, their scales and what they show */
	fprintf(f, "<line x1=\"%.0f\" y1=\"%.0f\" x2=\"%.0f\" y2=\"%.0f\" stroke=\"#888\"/>\n"
		   "<line x1=\"%.0f\" y1=\"%.0f\" x2=\"%.0f\" y2=\"%.0f\" stroke=\"black\"/>\n"
		   "<line x1=\"%.0f\" y1=\"%.0f\" x2=\"%.0f\" y2=\"%.0f\" stroke=\"black\"/>\n"
		   "<line x1=\"%.0f\" y1=\"%.0f\" x2=\"%.0f\" y2=\"%.0f\" stroke=\"black\"/>\n",
		L, mid, W - R, mid, L, top, L, mid, L, mid + gap, L, bot, L, bot, W - R, bot);
	fprintf(f, "<text x=\"%.0f\" y=\"%.0f\" text-anchor=\"end\">%s</text>"
		   "<text x=\"%.0f\" y=\"%.0f\" text-anchor=\"end\">0</text>\n"
		   "<text transform=\"translate(14,%.0f) rotate(-90)\" text-anchor=\"middle\">"
		   "AUX head (since the first record)</text>\n",
		L - 6, top + 4, bytes_words(maxpos, w1, sizeof(w1)), L - 6, mid + 4, (top + mid) / 2);
	fprintf(f, "<text x=\"%.0f\" y=\"%.0f\" text-anchor=\"end\">%s</text>"
		   "<text x=\"%.0f\" y=\"%.0f\" text-anchor=\"end\">0</text>\n"
		   "<text transform=\"translate(14,%.0f) rotate(-90)\" text-anchor=\"middle\">"
		   "chunk size</text>\n",
		L - 6, mid + gap + 4, bytes_words(maxchunk, w2, sizeof(w2)), L - 6, bot + 4,
		(mid + gap + bot) / 2);
	/* the x axis: first and last in file order, and its label */
	fprintf(f, "<text x=\"%.0f\" y=\"%.0f\" text-anchor=\"middle\">1</text>"
		   "<text x=\"%.0f\" y=\"%.0f\" text-anchor=\"middle\">%llu</text>\n"
		   "<text x=\"%.0f\" y=\"%.0f\" text-anchor=\"middle\">AUX and AUXTRACE records in file "
		   "order (%llu and %llu); red circles: TRUNCATED records</text>\n",
		L, bot + 16, W - R, bot + 16, (unsigned long long)(n + 1), (L + W - R) / 2, bot + 34,
		(unsigned long long)r->nrecs, (unsigned long long)r->nchunks);
	for (int q = 0; q < r->nqueues; q++) {
		const struct cst_aux_queue_summary *s = &r->queues[q];
		const char *col = colors[q % 8];
		bool first = true;

		/* the queue's totals and its losses in bytes, where they are known */
		fprintf(f, "<text x=\"%.0f\" y=\"%.0f\"><tspan fill=\"%s\" font-weight=\"bold\">%s "
			   "%d</tspan>: %llu AUX records, %s; lost: %s in no chunk, %s in gaps, %llu "
			   "truncated (bytes not counted by the kernel)%s</text>\n",
			L, bot + 60 + 18.0 * q, col, s->cpu < 0 ? "per-thread" : "cpu", s->cpu,
			(unsigned long long)s->records, bytes_words(s->record_bytes, w1, sizeof(w1)),
			bytes_words(s->lost_bytes, w2, sizeof(w2)),
			bytes_words(s->gap_bytes, w3, sizeof(w3)),
			(unsigned long long)s->truncated,
			s->lost_events ? ", records dropped (PERF_RECORD_LOST)" : "");
		fprintf(f, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"1.5\" points=\"", col);
		for (uint64_t i = 0; i < r->nrecs; i++) {
			const struct cst_aux_rec_info *a = &r->recs[i];
			double x, y;

			if (a->cpu != r->queues[q].cpu)
				continue;
			x = L + (W - L - R) * (double)a->order / (double)n;
			y = mid - (mid - top) * (double)(a->end - r->recs[0].start) / (double)maxpos;
			fprintf(f, "%s%.1f,%.1f", first ? "" : " ", x, y);
			first = false;
		}
		fprintf(f, "\"/>\n");
		for (uint64_t i = 0; i < r->nrecs; i++) {
			const struct cst_aux_rec_info *a = &r->recs[i];
			double x = L + (W - L - R) * (double)a->order / (double)n;
			double y = mid - (mid - top) * (double)(a->end - r->recs[0].start) / (double)maxpos;

			/* each record a dot: a queue of one record shows too */
			if (a->cpu == r->queues[q].cpu)
				fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"2.5\" fill=\"%s\">"
					   "<title>AUX record %llu: AUX 0x%llx, %llu bytes</title></circle>\n",
					x, y, col, (unsigned long long)(a->order + 1),
					(unsigned long long)a->start,
					(unsigned long long)(a->end - a->start));
			if (a->cpu == r->queues[q].cpu && (a->flags & CST_PERF_AUX_TRUNCATED))
				fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"4\" fill=\"none\" "
					   "stroke=\"red\"><title>truncated</title></circle>\n",
					x, y);
		}
		for (uint64_t i = 0; i < r->nchunks; i++) {
			const struct cst_aux_chunk_info *c = &r->chunks[i];
			double x = L + (W - L - R) * (double)c->order / (double)n;
			double h = (bot - mid - gap) * (double)c->size / (double)maxchunk;

			if (c->cpu != r->queues[q].cpu)
				continue;
			fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"3\" height=\"%.1f\" "
				   "fill=\"%s\"/>\n",
				x - 1.5, bot - h, h, col);
		}
	}
	fputs("</svg>\n", f);
	return ferror(f) ? -cste_io : 0;
}
