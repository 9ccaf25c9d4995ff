/* The sorted lookups of auxftrace_int.h. */
#include "auxftrace_int.h"

#include <stdlib.h>

static int cmp_rec(const void *a, const void *b)
{
	const struct ft_rec *x = a, *y = b;

	if (x->cpu != y->cpu)
		return x->cpu < y->cpu ? -1 : 1;
	if (x->off != y->off)
		return x->off < y->off ? -1 : 1;
	if (x->size != y->size)
		return x->size < y->size ? -1 : 1;
	return x->k < y->k ? -1 : x->k > y->k;
}

int cap_ft_recs_build(struct ft_recs *x, const struct cst_aux_report *r)
{
	struct cst_aux_report_info ri = cst_aux_report_get_info(r);

	x->n = 0;
	x->v = calloc(ri.nrecs ? ri.nrecs : 1, sizeof(*x->v));
	if (!x->v)
		return -cste_nomem;
	for (uint64_t k = 0; k < ri.nrecs; k++) {
		const struct cst_aux_rec_info *a = cst_aux_report_rec(r, k);

		x->v[x->n++] = (struct ft_rec){a->cpu, a->aux_offset, a->aux_size, k, false};
	}
	qsort(x->v, x->n, sizeof(*x->v), cmp_rec);
	return 0;
}

int64_t cap_ft_recs_take(struct ft_recs *x, int cpu, uint64_t off, uint64_t size)
{
	struct ft_rec key = {cpu, off, size, 0, false};
	/* the first not below (cpu, off, size, 0) */
	size_t lo = CST_PARTITION(i, 0, x->n, cmp_rec(&x->v[i], &key) < 0);

	/* records with the same key are taken in file order: the used ones lead */
	for (; lo < x->n && x->v[lo].cpu == cpu && x->v[lo].off == off && x->v[lo].size == size;
	     lo++)
		if (!x->v[lo].used) {
			x->v[lo].used = true;
			return (int64_t)x->v[lo].k;
		}
	return -1;
}

void cap_ft_recs_free(struct ft_recs *x)
{
	free(x->v);
	x->v = NULL;
	x->n = 0;
}

static int cmp_chunk(const void *a, const void *b)
{
	const struct ft_chunk *x = a, *y = b;

	if (x->cpu != y->cpu)
		return x->cpu < y->cpu ? -1 : 1;
	return x->start < y->start ? -1 : x->start > y->start;
}

int cap_ft_chunks_build(struct ft_chunks *x, const struct cst_aux_report *r)
{
	struct cst_aux_report_info ri = cst_aux_report_get_info(r);

	x->n = 0;
	x->v = calloc(ri.nchunks ? ri.nchunks : 1, sizeof(*x->v));
	if (!x->v)
		return -cste_nomem;
	for (uint64_t i = 0; i < ri.nchunks; i++) {
		const struct cst_aux_chunk_info *c = cst_aux_report_chunk(r, i);

		x->v[x->n++] = (struct ft_chunk){c->cpu, c->offset, c->offset + c->data_size, 0};
	}
	qsort(x->v, x->n, sizeof(*x->v), cmp_chunk);
	/* the furthest end of a CPU's chunks up to each: where to start for a range */
	for (size_t i = 0; i < x->n; i++) {
		uint64_t before = i && x->v[i - 1].cpu == x->v[i].cpu ? x->v[i - 1].reach : 0;

		x->v[i].reach = x->v[i].end > before ? x->v[i].end : before;
	}
	return 0;
}

uint64_t cap_ft_chunks_unheld(const struct ft_chunks *x, int cpu, uint64_t s, uint64_t e)
{
	uint64_t held = 0;
	/* the first chunk of @cpu whose reach passes s: none before it touches [s, e) */
	size_t lo = CST_PARTITION(i, 0, x->n, x->v[i].cpu < cpu ||
						  (x->v[i].cpu == cpu && x->v[i].reach <= s));

	for (; lo < x->n && x->v[lo].cpu == cpu && x->v[lo].start < e; lo++) {
		uint64_t a = x->v[lo].start > s ? x->v[lo].start : s;
		uint64_t b = x->v[lo].end < e ? x->v[lo].end : e;

		if (b > a)
			held += b - a;
	}
	return e - s > held ? e - s - held : 0;
}

void cap_ft_chunks_free(struct ft_chunks *x)
{
	free(x->v);
	x->v = NULL;
	x->n = 0;
}

int cap_ft_heads_add(struct ft_heads *h, uint64_t head)
{
	if (CST_GROW(h->v, h->cap, h->n + 1) < 0)
		return -cste_nomem;
	if (h->n && head < h->v[h->n - 1])
		h->unsorted = true;
	h->v[h->n++] = head;
	return 0;
}

/* Heads in @h at or below @x (h sorted). */
static size_t upto(const struct ft_heads *h, uint64_t x)
{
	return CST_PARTITION(i, 0, h->n, h->v[i] <= x);
}

uint64_t cap_ft_heads_between(const struct ft_heads *h, uint64_t old, uint64_t head)
{
	uint64_t n = 0;

	if (head <= old)
		return 0;
	if (!h->unsorted)
		return upto(h, head) - upto(h, old);
	for (size_t i = 0; i < h->n; i++)
		n += h->v[i] > old && h->v[i] <= head;
	return n;
}
