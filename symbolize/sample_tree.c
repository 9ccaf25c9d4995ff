/* The tree of an LLVM sample profile (llvm_sample.c builds it): function
 * profiles, their body locations and call targets, inlinees under their call
 * sites, in one hashed table; and LLVM's text writing of it. */
#include "views_int.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

static uint64_t str_hash(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ull;

	while (s && *s)
		h = (h ^ (uint8_t)*s++) * 0x100000001b3ull;
	return h;
}

static uint64_t rec_hash(uint8_t kind, uint32_t parent, uint32_t off, uint32_t disc,
			 const char *name)
{
	uint64_t h = str_hash(name) ^ (uint64_t)kind * 0x9e3779b97f4a7c15ull ^
		     (uint64_t)parent * 0xc2b2ae3d27d4eb4full ^
		     ((uint64_t)off << 32 | disc) * 0x165667b19e3779f9ull;

	return h ^ (h >> 29);
}

static uint64_t index_hash(const void *ctx, uint32_t i)
{
	const struct sym_sp_rec *r = &((const struct sym_sp_tree *)ctx)->r[i];

	return rec_hash(r->kind, r->parent, r->off, r->disc, r->name);
}

uint32_t sym_sp_get(struct sym_sp_tree *t, uint8_t kind, uint32_t parent, uint32_t off,
		    uint32_t disc, const char *name)
{
	uint64_t h;

	if (t->err)
		return UINT32_MAX;
	if (t->n * 2 >= t->icap &&
	    cst_index_grow(&t->index, &t->icap, 1024, t->n, index_hash, t) < 0)
		goto nomem;
	for (h = rec_hash(kind, parent, off, disc, name);; h++) {
		uint32_t i = t->index[h & (t->icap - 1)];
		const struct sym_sp_rec *r;

		if (!i)
			break;
		r = &t->r[i - 1];
		if (r->kind == kind && r->parent == parent && r->off == off && r->disc == disc &&
		    (r->name == name || (r->name && name && !strcmp(r->name, name))))
			return i - 1;
	}
	if (CST_GROW(t->r, t->cap, (size_t)t->n + 1) < 0)
		goto nomem;
	t->r[t->n] = (struct sym_sp_rec){.name = name, .parent = parent, .off = off, .disc = disc,
					 .kind = kind};
	t->index[h & (t->icap - 1)] = ++t->n;
	return t->n - 1;
nomem:
	t->err = -cste_nomem;
	return UINT32_MAX;
}

void sym_sp_free(struct sym_sp_tree *t)
{
	free(t->r);
	free(t->index);
}

void sym_sp_raise_to_calls(struct sym_sp_tree *t)
{
	uint64_t *sum = calloc((size_t)t->n + 1, sizeof(*sum));

	if (!sum) {
		t->err = -cste_nomem;
		return;
	}
	for (uint32_t i = 0; i < t->n; i++)
		if (t->r[i].kind == sym_sp_target)
			sum[t->r[i].parent] += t->r[i].n;
	for (uint32_t i = 0; i < t->n; i++)
		if (t->r[i].kind == sym_sp_line && !t->r[t->r[i].parent].parent && sum[i] > t->r[i].n)
			t->r[i].n = sum[i];
	free(sum);
}

struct order {
	const struct sym_sp_rec *base;
	const struct sym_sp_rec **v[3];   /* per kind: the records, by parent then key */
	uint32_t n[3];
};

static int by_key(const void *x, const void *y)
{
	const struct sym_sp_rec *a = *(const struct sym_sp_rec *const *)x, *b = *(const struct sym_sp_rec *const *)y;

	if (a->parent != b->parent)
		return a->parent < b->parent ? -1 : 1;
	if (a->kind == sym_sp_node && !a->parent && a->n != b->n) /* top level: most samples first */
		return a->n > b->n ? -1 : 1;
	if (a->kind == sym_sp_target && a->n != b->n) /* targets: most calls first */
		return a->n > b->n ? -1 : 1;
	if (a->off != b->off)
		return a->off < b->off ? -1 : 1;
	if (a->disc != b->disc)
		return a->disc < b->disc ? -1 : 1;
	return a->name && b->name ? strcmp(a->name, b->name) : 0;
}

/* The first of kind @k's sorted records with parent @parent. */
static uint32_t group(const struct order *o, int k, uint32_t parent)
{
	return CST_PARTITION(i, 0, o->n[k], o->v[k][i]->parent < parent);
}

static void put_loc(FILE *f, int indent, uint32_t off, uint32_t disc)
{
	fprintf(f, "%*s%" PRIu32, indent, "", off);
	if (disc)
		fprintf(f, ".%" PRIu32, disc);
	fputs(": ", f);
}

/* Names llvm-profgen leaves out, with what is inlined in them: C++ initialisers
 * that several copies in one binary share after their suffixes are cut. */
static bool ambiguous(const char *name)
{
	return !strncmp(name, "__cxx_global_var_init", 21) || !strncmp(name, "__tls_init", 10);
}

/* A profile as LLVM's text writer puts it: "name:total[:head]", its body lines
 * ("offset[.discriminator]: count callee:calls...") one space deeper, then its
 * inlinees, each after the location it was inlined at. */
static void put_node(const struct order *o, FILE *f, const struct sym_sp_rec *x, int depth)
{
	uint32_t id = (uint32_t)(x - o->base);

	fprintf(f, "%s:%" PRIu64, x->name, x->n);
	if (!depth)
		fprintf(f, ":%" PRIu64, x->head);
	fputc('\n', f);
	for (uint32_t i = group(o, sym_sp_line, id); i < o->n[sym_sp_line] && o->v[sym_sp_line][i]->parent == id;
	     i++) {
		const struct sym_sp_rec *line = o->v[sym_sp_line][i];
		uint32_t lid = (uint32_t)(line - o->base);

		put_loc(f, depth + 1, line->off, line->disc);
		fprintf(f, "%" PRIu64, line->n);
		for (uint32_t t = group(o, sym_sp_target, lid);
		     t < o->n[sym_sp_target] && o->v[sym_sp_target][t]->parent == lid; t++)
			fprintf(f, " %s:%" PRIu64, o->v[sym_sp_target][t]->name, o->v[sym_sp_target][t]->n);
		fputc('\n', f);
	}
	for (uint32_t i = group(o, sym_sp_node, id + 1);
	     i < o->n[sym_sp_node] && o->v[sym_sp_node][i]->parent == id + 1; i++) {
		if (ambiguous(o->v[sym_sp_node][i]->name))
			continue;
		put_loc(f, depth + 1, o->v[sym_sp_node][i]->off, o->v[sym_sp_node][i]->disc);
		put_node(o, f, o->v[sym_sp_node][i], depth + 1);
	}
}

int sym_sp_write(const struct sym_sp_tree *t, FILE *f)
{
	struct order o = {t->r, {NULL, NULL, NULL}, {0, 0, 0}};
	int err = t->err;

	for (int k = 0; k < 3 && !err; k++) {
		o.v[k] = malloc(((size_t)t->n + 1) * sizeof(*o.v[k]));
		if (!o.v[k])
			err = -cste_nomem;
	}
	for (uint32_t i = 0; i < t->n && !err; i++)
		o.v[t->r[i].kind][o.n[t->r[i].kind]++] = &t->r[i];
	for (int k = 0; k < 3 && !err; k++)
		qsort(o.v[k], o.n[k], sizeof(*o.v[k]), by_key);
	for (uint32_t i = 0; i < o.n[sym_sp_node] && !err && !o.v[sym_sp_node][i]->parent; i++)
		if (!ambiguous(o.v[sym_sp_node][i]->name))
			put_node(&o, f, o.v[sym_sp_node][i], 0);
	for (int k = 0; k < 3; k++)
		free(o.v[k]);
	return err ? err : ferror(f) ? -cste_io : 0;
}
