/* Sample profiles for feedback-directed optimisation: how often each address
 * range ran and each taken branch was taken, per binary, in the binary's own
 * addresses. Ranges run from a branch target to the next taken branch (the
 * symbolized ranges, joined where they went on); branches come from the
 * control-flow model, so "taken branch" is decided where it always is. Written as
 * LLVM's unsymbolized profile (llvm-profgen) and the views built on it (LLVM's
 * sample profile, coverage). AutoFDO's text, as simpleperf writes it, counts
 * otherwise (the decoder's ranges, not joined): afdo_simpleperf.c, fed here. */
#include "views_int.h"
#include "report_view.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#define NIDS 128

struct cst_afdo {
	struct cst_symbolizer *sym;
	/* the range each trace ID is running through: ETM ranges end at every
	 * waypoint (and ETMv3's at every instruction), a profile's only at taken
	 * branches, so ranges that went on into the next are joined */
	struct sym_afdo_range cur[NIDS];
	struct cst_flow *flow;
	struct sym_count_table t;
	bool mute;                 /* sym_afdo_mute */
	int err;
	cst_afdo_keep_fn keep;     /* --dsos/--symbols: what counts, NULL all */
	void *keep_ctx;
	struct sym_afdo_sp *sp;    /* AutoFDO's text, as simpleperf counts it */
};

bool sym_afdo_keeps(const struct cst_afdo *p, const char *dso, const char *func)
{
	return !p->keep || p->keep(p->keep_ctx, dso, func ? func : "[unknown]");
}

static bool piece_kept(const struct cst_afdo *p, const struct cst_sym_piece *pc)
{
	return sym_afdo_keeps(p, pc->loc.dso, pc->loc.func ? pc->loc.func->name : NULL);
}

static int bump(struct cst_afdo *p, const char *dso, uint64_t a, uint64_t b, bool branch)
{
	return p->mute ? 0 : sym_count_bump(&p->t, dso, a, b, branch, 1);
}

/* The binary's address of the instruction at runtime @addr inside @pc. */
static uint64_t vaddr_in(const struct cst_sym_piece *pc, uint64_t addr)
{
	return pc->loc.vaddr + (addr - pc->start);
}

/* Code some binary maps (not "[unknown]"): raw dumps are left out when writing. */
static bool in_binary(const struct cst_sym_piece *pc)
{
	/* asked twice per range: the first byte settles it for every binary's path */
	return pc->loc.dso[0] != '[' || strcmp(pc->loc.dso, "[unknown]") != 0;
}

/* Where the range left from: its last instruction, in its last piece's binary. */
static bool last_insn(const struct cst_elem *e, const struct cst_sym_piece *pcs, uint32_t n,
		      const char **dso, uint64_t *at)
{
	const struct cst_sym_piece *pc = n ? &pcs[n - 1] : NULL;

	if (!pc || !in_binary(pc) || e->end - e->last_size < pc->start)
		return false;
	*dso = pc->loc.dso;
	*at = vaddr_in(pc, e->end - e->last_size);
	return true;
}

static int flow_event(void *ctx, const struct cst_flow_event *ev)
{
	struct cst_afdo *p = ctx;
	const struct cst_sym_piece *to;
	const char *dso;
	uint64_t from;

	if (ev->kind != cst_flow_branch || !ev->from->npieces || !ev->to->npieces)
		return 0;
	if (!last_insn(&ev->from->elem, ev->from->pieces, ev->from->npieces, &dso, &from))
		return 0;
	/* a branch belongs to the function it leaves */
	if (!piece_kept(p, &ev->from->pieces[ev->from->npieces - 1]))
		return 0;
	to = &ev->to->pieces[0];
	/* a branch into another binary (a call into a library) has no target here */
	return bump(p, dso, from, to->loc.dso == dso && in_binary(to) ? to->loc.vaddr : 0, true);
}

int cst_afdo_alloc(struct cst_afdo **out, struct cst_symbolizer *sym)
{
	struct cst_afdo *p;

	if (!out || !sym)
		return -cste_invalid;
	p = calloc(1, sizeof(*p));
	if (!p || !(p->sp = sym_afdo_sp_alloc(sym)) || cst_flow_alloc(&p->flow, flow_event, p) < 0) {
		if (p)
			sym_afdo_sp_free(p->sp);
		free(p);
		return -cste_nomem;
	}
	p->sym = sym;
	*out = p;
	return 0;
}

int cst_afdo_set_filter(struct cst_afdo *p, cst_afdo_keep_fn keep, void *ctx)
{
	if (!p)
		return -cste_invalid;
	p->keep = keep;
	p->keep_ctx = ctx;
	return 0;
}

void cst_afdo_free(struct cst_afdo *p)
{
	if (!p)
		return;
	cst_flow_free(p->flow);
	sym_afdo_sp_free(p->sp);
	sym_count_free(&p->t);
	free(p);
}

static int flush(struct cst_afdo *p, struct sym_afdo_range *r)
{
	int err = 0;

	if (r->open)
		err = bump(p, r->dso, r->first, r->last, false);
	r->open = false;
	return err;
}

/* Instructions [first, last] of @dso ran, from runtime @start up to @end. */
static int extend(struct cst_afdo *p, struct sym_afdo_range *r, const char *dso, uint64_t start,
		  uint64_t first, uint64_t last, uint64_t end)
{
	if (r->open && (r->dso != dso || r->end != start) && flush(p, r) < 0)
		return -cste_nomem;
	if (!r->open) {
		*r = (struct sym_afdo_range){dso, first, last, end, true};
		return 0;
	}
	r->last = last;
	r->end = end;
	return 0;
}

int cst_afdo_add(void *ctx, const struct cst_sym_elem *se, uint64_t time)
{
	struct cst_afdo *p = ctx;
	const struct cst_elem *e;
	struct sym_afdo_range *r;
	uint32_t i = 0;

	if (!p || !se || !se->elem)
		return -cste_invalid;
	e = se->elem;
	r = &p->cur[e->trace_id & (NIDS - 1)];
	if (sym_afdo_sp_add(p->sp, se, se->npieces && piece_kept(p, &se->pieces[0])) < 0)
		return -cste_nomem;
	if (e->type == cst_elem_instr_range && e->num_insns) {
		/* the runs of pieces in one binary (a range rarely leaves one), and of
		 * pieces the filter keeps or drops */
		while (i < se->npieces) {
			const struct cst_sym_piece *first = &se->pieces[i];
			bool keep = piece_kept(p, first);
			uint32_t k = i;
			uint64_t last, end;

			while (k + 1 < se->npieces && se->pieces[k + 1].loc.dso == first->loc.dso &&
			       piece_kept(p, &se->pieces[k + 1]) == keep)
				k++;
			end = k + 1 == se->npieces ? e->end : se->pieces[k + 1].start;
			/* a run into the next binary ends where that one starts */
			last = vaddr_in(&se->pieces[k], k + 1 == se->npieces
								? e->end - e->last_size
								: end - (e->isa == cst_isa_t32 ? 2 : 4));
			if (!in_binary(first) || !keep) {
				if (flush(p, r) < 0)
					return -cste_nomem;
			} else if (extend(p, r, first->loc.dso, first->start, first->loc.vaddr, last,
					  end) < 0) {
				return -cste_nomem;
			}
			i = k + 1;
		}
		if (cst_elem_taken_branch(e) && flush(p, r) < 0)
			return -cste_nomem;
	} else if (e->type == cst_elem_exception || e->type == cst_elem_no_sync ||
		   e->type == cst_elem_trace_on || e->type == cst_elem_eot ||
		   e->type == cst_elem_addr_nacc || e->type == cst_elem_addr_unknown) {
		/* control left without a branch: the range ends here */
		if (flush(p, r) < 0)
			return -cste_nomem;
	}
	return cst_flow_add(p->flow, se, time);
}

int cst_afdo_finish(struct cst_afdo *p)
{
	if (!p)
		return -cste_invalid;
	for (int id = 0; id < NIDS; id++)
		if (flush(p, &p->cur[id]) < 0)
			return -cste_nomem;
	if (sym_afdo_sp_finish(p->sp) < 0)
		return -cste_nomem;
	return cst_flow_finish(p->flow);
}

/* ------------------------------------------------------------- hand-over */

void sym_afdo_state(const struct cst_afdo *p, uint8_t id, struct sym_afdo_state *st)
{
	st->range = p->cur[id & (NIDS - 1)];
	sym_afdo_sp_state(p->sp, id, &st->sp);
	sym_flow_state(p->flow, id, &st->flow);
}

void sym_afdo_adopt(struct cst_afdo *p, uint8_t id, const struct sym_afdo_state *st)
{
	p->cur[id & (NIDS - 1)] = st->range;
	sym_afdo_sp_adopt(p->sp, id, &st->sp);
	sym_flow_adopt(p->flow, id, &st->flow);
}

void sym_afdo_clear(struct cst_afdo *p)
{
	memset(p->cur, 0, sizeof(p->cur));
	sym_afdo_sp_clear(p->sp);
	sym_flow_clear(p->flow);
}

void sym_afdo_mute(struct cst_afdo *p, bool mute)
{
	p->mute = mute;
	sym_afdo_sp_mute(p->sp, mute);
}

void sym_afdo_take(struct cst_afdo *p, struct sym_afdo_counts *out)
{
	sym_count_take(&out->counts, &p->t);
	sym_count_take(&out->sp, sym_afdo_sp_counts(p->sp));
}

int sym_afdo_add(struct cst_afdo *p, const struct sym_afdo_counts *c)
{
	int err = sym_count_add(&p->t, &c->counts);

	return err ? err : sym_count_add(sym_afdo_sp_counts(p->sp), &c->sp);
}

void sym_afdo_counts_free(struct sym_afdo_counts *c)
{
	sym_count_free(&c->counts);
	sym_count_free(&c->sp);
}

/* ------------------------------------------------------------- writing */

static int by_addr(const void *x, const void *y)
{
	const struct sym_count *a = *(const struct sym_count *const *)x;
	const struct sym_count *b = *(const struct sym_count *const *)y;

	if (a->a != b->a)
		return a->a < b->a ? -1 : 1;
	return a->b < b->b ? -1 : a->b > b->b;
}

/* The counts of @dso, ranges or branches, sorted by address. */
static int select_counts(struct cst_afdo *p, const char *dso, bool branch, uint64_t floor,
			 const struct sym_count ***out)
{
	const struct sym_count **v = malloc(((size_t)p->t.n + 1) * sizeof(*v));
	int n = 0;

	if (!v)
		return -cste_nomem;
	for (uint32_t i = 0; i < p->t.n; i++) {
		const struct sym_count *c = &p->t.v[i];

		/* profiles relative to a base leave out what lies below it, and
		 * branches into other binaries (target 0) */
		if (c->dso == dso && c->branch == branch && c->a >= floor &&
		    (!branch || !floor || (c->b && c->b >= floor)))
			v[n++] = c;
	}
	qsort(v, (size_t)n, sizeof(*v), by_addr);
	*out = v;
	return n;
}

/* Binaries in the order their first count was made. */
static int dsos(struct cst_afdo *p, const char ***out)
{
	const char **v = malloc(((size_t)p->t.n + 1) * sizeof(*v));
	int n = 0;

	if (!v)
		return -cste_nomem;
	for (uint32_t i = 0; i < p->t.n; i++) {
		int k = 0;

		while (k < n && v[k] != p->t.v[i].dso)
			k++;
		if (k == n)
			v[n++] = p->t.v[i].dso;
	}
	*out = v;
	return n;
}

/* One section of a perf-style text profile: its count, then "a-b:n" ranges or
 * "a->b:n" branches of @dso (those at or above @floor), less @base. */
static int put_counts(struct cst_afdo *p, FILE *f, const char *dso, bool branch,
		      uint64_t floor, uint64_t base)
{
	const struct sym_count **v;
	int n = select_counts(p, dso, branch, floor, &v);

	if (n < 0)
		return n;
	fprintf(f, "%d\n", n);
	for (int i = 0; i < n; i++)
		fprintf(f, branch ? "%" PRIx64 "->%" PRIx64 ":%" PRIu64 "\n"
				  : "%" PRIx64 "-%" PRIx64 ":%" PRIu64 "\n",
			v[i]->a - base, v[i]->b - base, v[i]->n);
	free(v);
	return 0;
}

int cst_afdo_write_autofdo(struct cst_afdo *p, FILE *f)
{
	if (!p || !f)
		return -cste_invalid;
	return sym_afdo_sp_write(p->sp, f);
}

/* report --format=autofdo */
int sym_report_write_autofdo(struct cst_report_view *v, FILE *f)
{
	return cst_afdo_write_autofdo(v->afdo, f);
}

/* What a profile relative to @base holds: nothing below it, and no branch to
 * another binary (floor 1 when the binary is linked at 0: still drops 0 targets). */
static uint64_t profgen_floor(uint64_t base)
{
	return base ? base : 1;
}

const char *sym_afdo_find_dso(struct cst_afdo *p, const char *dso, struct cst_sym_dso_info *info)
{
	const char **names;
	const char *name = NULL;
	int nd = dsos(p, &names);

	if (nd < 0)
		return NULL;
	/* the binary the user named: by its path or its base name */
	for (int d = 0; d < nd && !name; d++) {
		const char *s = strrchr(names[d], '/');

		if (!strcmp(names[d], dso) || !strcmp(s ? s + 1 : names[d], dso))
			name = names[d];
	}
	free(names);
	if (!name || cst_symbolizer_dso_info(p->sym, name, info) < 0 || !info->elf)
		return NULL;
	return name;
}

int cst_afdo_write_profgen(struct cst_afdo *p, FILE *f, const char *dso)
{
	struct cst_sym_dso_info info;
	const char *name;

	if (!p || !f || !dso)
		return -cste_invalid;
	name = sym_afdo_find_dso(p, dso, &info);
	if (!name)
		return -cste_not_found;
	for (int pass = 0; pass < 2; pass++) {
		int err = put_counts(p, f, name, pass == 1, profgen_floor(info.base), info.base);

		if (err < 0)
			return err;
	}
	return ferror(f) ? -cste_io : 0;
}

/* report --format=profgen --dso NAME */
int sym_report_write_profgen(struct cst_report_view *v, FILE *f)
{
	return cst_afdo_write_profgen(v->afdo, f, v->o.dso);
}

int sym_afdo_profgen_counts(struct cst_afdo *p, const char *dso, uint64_t base, bool branch,
			    void (*fn)(void *ctx, uint64_t a, uint64_t b, uint64_t n), void *ctx)
{
	const struct sym_count **v;
	int n = select_counts(p, dso, branch, profgen_floor(base), &v);

	if (n < 0)
		return n;
	for (int i = 0; i < n; i++)
		fn(ctx, v[i]->a, v[i]->b, v[i]->n);
	free(v);
	return 0;
}

int sym_afdo_ranges(struct cst_afdo *p, const char *dso,
		    void (*fn)(void *ctx, uint64_t first, uint64_t last, uint64_t n), void *ctx)
{
	if (!p || !fn)
		return -cste_invalid;
	for (uint32_t i = 0; i < p->t.n; i++)
		if (!p->t.v[i].branch && p->t.v[i].dso == dso)
			fn(ctx, p->t.v[i].a, p->t.v[i].b, p->t.v[i].n);
	return 0;
}

bool sym_afdo_has(const struct cst_afdo *p, const char *dso)
{
	for (uint32_t i = 0; p && i < p->t.n; i++)
		if (p->t.v[i].dso == dso)
			return true;
	return false;
}

struct cst_symbolizer *sym_afdo_symbolizer(struct cst_afdo *p)
{
	return p ? p->sym : NULL;
}

int sym_afdo_branches(struct cst_afdo *p, const char *dso,
		      void (*fn)(void *ctx, uint64_t from, uint64_t to, uint64_t n), void *ctx)
{
	if (!p || !fn)
		return -cste_invalid;
	for (uint32_t i = 0; i < p->t.n; i++)
		if (p->t.v[i].branch && p->t.v[i].dso == dso)
			fn(ctx, p->t.v[i].a, p->t.v[i].b, p->t.v[i].n);
	return 0;
}
