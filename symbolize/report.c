/* The report model: per-function (or per dso / source line) totals accumulated from
 * the symbolized stream, the numbers behind `cstrace report` in any format. */
#include "internal.h"
#include "views_int.h"

#include <stdlib.h>
#include <string.h>

struct rrow {
	struct cst_report_row pub;
	const struct cst_sym_func *func;
	uint8_t *hit;              /* one bit per line slot of func */
	uint32_t hit_bits;
	uint32_t hits;
};

struct cst_report {
	unsigned keys;
	struct rrow *rows;
	uint32_t nrows;
	size_t cap;
	uint32_t *index;           /* open addressing over rows: row + 1, 0 empty */
	uint32_t icap;
	uint64_t total;
	struct cst_report_row *sorted;
	uint32_t last;             /* the row row_get gave last: row + 1, 0 none */
};

int cst_report_alloc(struct cst_report **out, unsigned keys)
{
	struct cst_report *r;

	if (!out || !(keys & (cst_report_key_dso | cst_report_key_sym | cst_report_key_srcline)))
		return -cste_invalid;
	r = calloc(1, sizeof(*r));
	if (!r)
		return -cste_nomem;
	r->keys = keys;
	*out = r;
	return 0;
}

void cst_report_free(struct cst_report *rep)
{
	if (!rep)
		return;
	for (uint32_t i = 0; i < rep->nrows; i++)
		free(rep->rows[i].hit);
	free(rep->rows);
	free(rep->index);
	free(rep->sorted);
	free(rep);
}

static uint64_t key_hash(const void *a, const void *b, const void *c, int line)
{
	uint64_t h = (uint64_t)(uintptr_t)a * 0x9e3779b97f4a7c15ull ^
		     (uint64_t)(uintptr_t)b * 0xc2b2ae3d27d4eb4full ^
		     (uint64_t)(uintptr_t)c * 0x165667b19e3779f9ull ^ (uint64_t)line;

	return h ^ (h >> 31);
}

static uint64_t row_hash(const void *ctx, uint32_t i)
{
	const struct rrow *r = &((const struct cst_report *)ctx)->rows[i];

	return key_hash(r->func, r->pub.dso, r->pub.file, r->pub.line);
}

/* Find or add the row of (func, dso, file, line), already reduced to the keys. */
static struct rrow *row_get(struct cst_report *rep, const struct cst_sym_func *func,
			    const char *dso, const char *file, int line, const char *name)
{
	uint64_t h;
	struct rrow *r;

	/* ranges run on in one function (an interpreter's loop): its row again */
	r = rep->last ? &rep->rows[rep->last - 1] : NULL;
	if (r && r->func == func && r->pub.dso == dso && r->pub.file == file && r->pub.line == line)
		return r;
	if (rep->nrows * 2 >= rep->icap &&
	    cst_index_grow(&rep->index, &rep->icap, 1024, rep->nrows, row_hash, rep) < 0)
		return NULL;
	for (h = key_hash(func, dso, file, line);; h++) {
		uint32_t i = rep->index[h & (rep->icap - 1)];

		if (!i)
			break;
		r = &rep->rows[i - 1];
		/* file names are compared by pointer: one CU's table gives one pointer */
		if (r->func == func && r->pub.dso == dso && r->pub.file == file &&
		    r->pub.line == line) {
			rep->last = i;
			return r;
		}
	}
	if (CST_GROW(rep->rows, rep->cap, (size_t)rep->nrows + 1) < 0)
		return NULL;
	r = &rep->rows[rep->nrows];
	memset(r, 0, sizeof(*r));
	r->func = func;
	r->pub.dso = dso;
	r->pub.file = file;
	r->pub.line = line;
	r->pub.sym = name;
	r->pub.func_addr = func ? func->addr : 0;
	r->pub.func = func;
	rep->index[h & (rep->icap - 1)] = ++rep->nrows;
	rep->last = rep->nrows;
	return r;
}

static void mark_line(struct rrow *r, uint32_t slot)
{
	if (slot >= r->hit_bits) {
		uint32_t bits = (slot + 64) & ~63u;
		uint8_t *n = realloc(r->hit, bits / 8);

		if (!n)
			return;
		memset(n + r->hit_bits / 8, 0, (bits - r->hit_bits) / 8);
		r->hit = n;
		r->hit_bits = bits;
	}
	if (!(r->hit[slot / 8] & (1u << (slot % 8)))) {
		r->hit[slot / 8] |= (uint8_t)(1u << (slot % 8));
		r->hits++;
	}
}

static struct rrow *piece_row(struct cst_report *rep, const struct cst_sym_piece *pc,
			      const char *file, int line)
{
	const struct cst_sym_func *f = rep->keys & cst_report_key_sym ? pc->loc.func : NULL;
	const char *dso = rep->keys & cst_report_key_dso ? pc->loc.dso : NULL;

	/* unknown code is grouped per binary: "[unknown]" in libc is not in libm */
	if ((rep->keys & cst_report_key_sym) && !pc->loc.func)
		dso = pc->loc.dso;
	if (!(rep->keys & cst_report_key_srcline)) {
		file = NULL;
		line = 0;
	}
	return row_get(rep, f, dso, file, line,
		       rep->keys & cst_report_key_sym ? (f ? f->name : "[unknown]") : NULL);
}

static void count_branch(struct rrow *r, const struct cst_elem *e)
{
	if (!cst_elem_ends_in_branch(e))
		return;
	if (cst_elem_taken_branch(e))
		r->pub.taken++;
	else
		r->pub.not_taken++;
}

int cst_report_add(void *ctx, const struct cst_sym_elem *se)
{
	struct cst_report *rep = ctx;
	const struct cst_elem *e;

	if (!rep || !se || !se->elem)
		return -cste_invalid;
	e = se->elem;
	if (e->type != cst_elem_instr_range && e->type != cst_elem_i_range_nopath)
		return 0;
	rep->total += e->num_insns;
	for (uint32_t i = 0; i < se->npieces; i++) {
		const struct cst_sym_piece *pc = &se->pieces[i];
		struct rrow *r;

		if (rep->keys & cst_report_key_srcline) {
			uint32_t left = pc->num_insns;

			for (uint32_t k = 0; k < pc->nlines; k++) {
				const struct cst_sym_line_count *lc = &pc->lines[k];
				uint32_t n = lc->num_insns < left ? lc->num_insns : left;

				r = piece_row(rep, pc, lc->file, lc->line);
				if (!r)
					return -cste_nomem;
				r->pub.insns += n;
				left -= n;
				mark_line(r, lc->slot);
				/* entries and branches belong to the line of the first and
				 * last instruction */
				if ((int32_t)k == pc->first_line)
					r->pub.entries += pc->enters_func;
				if ((int32_t)k == pc->last_line && i + 1 == se->npieces)
					count_branch(r, e);
			}
			if (!left)
				continue;
			/* instructions without a line: one "??" row per function */
			r = piece_row(rep, pc, NULL, 0);
		} else {
			r = piece_row(rep, pc, NULL, 0);
		}
		if (!r)
			return -cste_nomem;
		if (rep->keys & cst_report_key_srcline) {
			uint32_t counted = 0;

			for (uint32_t k = 0; k < pc->nlines; k++)
				counted += pc->lines[k].num_insns;
			r->pub.insns += pc->num_insns > counted ? pc->num_insns - counted : 0;
			if (pc->first_line < 0)
				r->pub.entries += pc->enters_func;
			if (pc->last_line < 0 && i + 1 == se->npieces)
				count_branch(r, e);
		} else {
			r->pub.insns += pc->num_insns;
			r->pub.entries += pc->enters_func;
			for (uint32_t k = 0; k < pc->nlines; k++)
				mark_line(r, pc->lines[k].slot);
			if (i + 1 == se->npieces)
				count_branch(r, e);
		}
	}
	if (!se->npieces && e->num_insns) {
		static const struct cst_sym_piece none = {.loc = {.dso = "[unknown]"}};
		struct rrow *r = piece_row(rep, &none, NULL, 0);

		if (!r)
			return -cste_nomem;
		r->pub.insns += e->num_insns;
	}
	return 0;
}

/* A total order: rows come from the stream in an order that depends on how it
 * was decoded (the rows of several threads' tables are merged), so no two rows
 * may tie (two static functions of one name and count, one line number in two
 * files). */
static int cmp_rows(const void *a, const void *b)
{
	const struct cst_report_row *x = a, *y = b;
	int c;

	if (x->insns != y->insns)
		return x->insns > y->insns ? -1 : 1;
	if (x->sym && y->sym && (c = strcmp(x->sym, y->sym)))
		return c;
	if (x->dso && y->dso && (c = strcmp(x->dso, y->dso)))
		return c;
	if (x->line != y->line)
		return x->line < y->line ? -1 : 1;
	if (x->file && y->file && (c = strcmp(x->file, y->file)))
		return c;
	if (!x->file != !y->file)
		return x->file ? 1 : -1;
	if (x->func_addr != y->func_addr)
		return x->func_addr < y->func_addr ? -1 : 1;
	return 0;
}

int cst_report_rows(struct cst_report *rep, const struct cst_report_row **rows)
{
	struct cst_report_row *s;

	if (!rep || !rows)
		return -cste_invalid;
	s = realloc(rep->sorted, (rep->nrows ? rep->nrows : 1) * sizeof(*s));
	if (!s)
		return -cste_nomem;
	rep->sorted = s;
	for (uint32_t i = 0; i < rep->nrows; i++) {
		const struct rrow *r = &rep->rows[i];

		s[i] = r->pub;
		if (!(rep->keys & cst_report_key_srcline)) {
			s[i].lines_hit = r->hits;
			s[i].lines_total = r->func ? r->func->nlines : 0;
		}
	}
	qsort(s, rep->nrows, sizeof(*s), cmp_rows);
	*rows = s;
	return (int)rep->nrows;
}

uint64_t cst_report_total(const struct cst_report *rep)
{
	return rep ? rep->total : 0;
}

int sym_report_merge(struct cst_report *to, const struct cst_report *from)
{
	if (to->keys != from->keys)
		return -cste_invalid;
	to->total += from->total;
	for (uint32_t i = 0; i < from->nrows; i++) {
		const struct rrow *f = &from->rows[i];
		struct rrow *r = row_get(to, f->func, f->pub.dso, f->pub.file, f->pub.line,
					 f->pub.sym);

		if (!r)
			return -cste_nomem;
		r->pub.insns += f->pub.insns;
		r->pub.entries += f->pub.entries;
		r->pub.taken += f->pub.taken;
		r->pub.not_taken += f->pub.not_taken;
		for (uint32_t slot = 0; slot < f->hit_bits; slot++)
			if (f->hit[slot / 8] & (1u << (slot % 8)))
				mark_line(r, slot);
	}
	return 0;
}
