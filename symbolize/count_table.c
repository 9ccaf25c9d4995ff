/* The profiles' table of counts (autofdo.c, afdo_simpleperf.c): one count per
 * binary, address pair and kind, in the order each was first made (a profile
 * lists its binaries in that order). A view on another thread fills a table of
 * its own, which is added to the caller's in its order where the stream met it:
 * the first-made order is then one thread's. */
#include "views_int.h"

#include <stdlib.h>
#include <string.h>

static uint64_t hash(const char *dso, uint64_t a, uint64_t b, bool branch)
{
	uint64_t h = (uint64_t)(uintptr_t)dso * 0x9e3779b97f4a7c15ull ^ a * 0xc2b2ae3d27d4eb4full ^
		     b * 0x165667b19e3779f9ull ^ (uint64_t)branch;

	return h ^ (h >> 31);
}

static uint64_t count_hash(const void *ctx, uint32_t i)
{
	const struct sym_count *c = &((const struct sym_count_table *)ctx)->v[i];

	return hash(c->dso, c->a, c->b, c->branch);
}

int sym_count_bump(struct sym_count_table *t, const char *dso, uint64_t a, uint64_t b,
		   bool branch, uint64_t n)
{
	uint64_t h;

	if (t->n * 2 >= t->icap && cst_index_grow(&t->index, &t->icap, 4096, t->n, count_hash, t) < 0)
		return -cste_nomem;
	for (h = hash(dso, a, b, branch);; h++) {
		uint32_t i = t->index[h & (t->icap - 1)];
		struct sym_count *c;

		if (!i)
			break;
		c = &t->v[i - 1];
		if (c->dso == dso && c->a == a && c->b == b && c->branch == branch) {
			c->n += n;
			return 0;
		}
	}
	if (CST_GROW(t->v, t->cap, (size_t)t->n + 1) < 0)
		return -cste_nomem;
	t->v[t->n] = (struct sym_count){dso, a, b, n, branch};
	t->index[h & (t->icap - 1)] = ++t->n;
	return 0;
}

int sym_count_add(struct sym_count_table *to, const struct sym_count_table *from)
{
	for (uint32_t i = 0; i < from->n; i++) {
		const struct sym_count *c = &from->v[i];
		int err = sym_count_bump(to, c->dso, c->a, c->b, c->branch, c->n);

		if (err)
			return err;
	}
	return 0;
}

void sym_count_take(struct sym_count_table *to, struct sym_count_table *from)
{
	*to = (struct sym_count_table){.v = from->v, .cap = from->cap, .n = from->n};
	from->v = NULL;
	from->cap = 0;
	from->n = 0;
	/* a small index stays, emptied, for the next block's counts */
	if (from->icap > 16384) {
		free(from->index);
		from->index = NULL;
		from->icap = 0;
	} else if (from->index) {
		memset(from->index, 0, from->icap * sizeof(*from->index));
	}
}

void sym_count_free(struct sym_count_table *t)
{
	free(t->v);
	free(t->index);
	*t = (struct sym_count_table){0};
}
