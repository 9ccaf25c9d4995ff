/* Symbolizing executed ranges: split a range where it crosses functions, count
 * instructions per piece and per source line, and cache the result per range. */
#include "internal.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

void sym_fill_loc(struct cst_symbolizer *sym, const struct mapping *m, uint64_t addr,
		  struct cst_sym_loc *loc)
{
	struct dso *dso;
	uint64_t vaddr;
	const struct sym_func *f = NULL;

	memset(loc, 0, sizeof(*loc));
	if (!m) {
		loc->dso = "[unknown]";
		loc->dso_offset = addr;
		loc->vaddr = addr;
		return;
	}
	dso = m->dso;
	vaddr = addr + m->vaddr_adj;
	loc->dso = dso->short_name;
	loc->dso_offset = addr + m->off_adj;
	loc->vaddr = dso->kind == dso_elf || dso->kind == dso_kallsyms ? vaddr : addr;
	switch (dso->kind) {
	case dso_missing:
		sym_dso_warn(sym, dso);
		return;
	case dso_raw:
		return; /* bytes only: dso+offset is all there is to say */
	case dso_kallsyms:
		f = sym_dso_find_func(dso, vaddr);
		break;
	case dso_elf:
		sym_dso_load_symbols(sym, dso);
		if (dso->nmapsyms && sym_dso_mapping_kind(dso, vaddr) == sym_map_data) {
			/* executed "data" means a wrong image: name nothing */
			loc->is_data = true;
			return;
		}
		f = sym_dso_find_func(dso, vaddr);
		if (dso->has_dwarf) {
			const struct sym_row *row = sym_dso_find_row(dso, vaddr);

			if (row) {
				loc->file = row->file;
				loc->line = (int)row->line;
			}
		}
		break;
	}
	if (f) {
		loc->func = &f->pub;
		loc->func_offset = vaddr - f->pub.addr;
	}
}

int cst_symbolizer_lookup(struct cst_symbolizer *sym, int32_t pid, uint64_t addr,
			  struct cst_sym_loc *loc)
{
	const struct space *sp;
	const struct mapping *m;

	if (!sym || !loc)
		return -cste_invalid;
	m = sym_find_mapping(sym, pid, addr, &sp);
	sym_lock(sym);
	sym_fill_loc(sym, m, addr, loc);
	if (m && loc->func && m->dso->has_dwarf)
		loc->inlined = sym_dso_inlined_at(m->dso, addr + m->vaddr_adj);
	sym_unlock(sym);
	return 0;
}

/* perf's lines name the first and the last instruction of every range, the same
 * few thousand addresses again and again: walking perf's tree (and the mappings)
 * for each was a fifth of `script -F ip,addr,sym,dso`. A direct-mapped memo by
 * pid and address answers again while no space changes (spaces_epoch). */
static struct perf_memo *perf_memo_slot(struct cst_symbolizer *sym, int32_t pid, uint64_t addr)
{
	uint64_t h = (addr >> 2) ^ (addr >> 14) ^ ((uint64_t)(uint32_t)pid * 0x9e3779b1u);

	if (!sym->own.perf_memo &&
	    !(sym->own.perf_memo = calloc(SYM_PERF_MEMO, sizeof(*sym->own.perf_memo))))
		return NULL;
	return &sym->own.perf_memo[h & (SYM_PERF_MEMO - 1)];
}

int cst_symbolizer_perf_name(struct cst_symbolizer *sym, int32_t pid, uint64_t addr,
			     struct cst_sym_loc *loc)
{
	const struct space *sp;
	const struct mapping *m;
	struct perf_memo *pm, one;

	if (!sym || !loc)
		return -cste_invalid;
	pm = perf_memo_slot(sym, pid, addr);
	if (!pm)
		pm = &one; /* no memory for the memo: look up each time */
	if (pm == &one || pm->epoch != sym->spaces_epoch || pm->addr != addr || pm->pid != pid) {
		m = sym_find_mapping(sym, pid, addr, &sp);
		*pm = (struct perf_memo){.addr = addr, .pid = pid, .epoch = sym->spaces_epoch,
					 .elf = m && m->dso->kind == dso_elf};
		if (pm->elf) {
			/* a binary's table once built is only read: no lock for it */
			bool built = sym_dso_perf_built(m->dso);

			pm->vaddr = addr + m->vaddr_adj;
			if (!built)
				sym_lock(sym);
			pm->f = sym_dso_find_perf_func(sym, m->dso, pm->vaddr);
			/* a binary that failed to open on this first look is no ELF the
			 * next time: this answer stands once, not again */
			if (m->dso->kind != dso_elf)
				pm->epoch = 0;
			if (!built)
				sym_unlock(sym);
		}
	}
	if (!pm->elf)
		return 0;
	loc->func = NULL;
	if (pm->f) {
		loc->func = &pm->f->pub;
		loc->func_offset = pm->vaddr - pm->f->pub.addr;
	}
	return 0;
}

int cst_symbolizer_inline_chain(struct cst_symbolizer *sym, int32_t pid, uint64_t addr,
				struct cst_sym_frame *frames, int max)
{
	const struct space *sp;
	const struct mapping *m;
	struct cst_sym_loc loc;
	int n = 0;

	if (!sym || (!frames && max > 0) || max < 0)
		return -cste_invalid;
	m = sym_find_mapping(sym, pid, addr, &sp);
	sym_lock(sym);
	sym_fill_loc(sym, m, addr, &loc);
	if (m && m->dso->kind == dso_elf && !loc.is_data)
		n = sym_dso_inline_chain(sym, m->dso, addr + m->vaddr_adj,
					 (const struct sym_func *)loc.func, frames, max);
	sym_unlock(sym);
	return n;
}

/* Bytes needed to step over instructions: T32 sizes vary, the others do not. */
static const uint8_t *code_at(const struct mapping *m, uint64_t addr)
{
	if (!m || (m->dso->kind != dso_elf && m->dso->kind != dso_raw))
		return NULL;
	return sym_dso_code(m->dso, addr + m->vaddr_adj, 2);
}

/* Count instructions of [start, end); -1 when T32 bytes are unreadable. */
static int64_t count_insns(const struct mapping *m, enum cst_isa isa, uint64_t start,
			   uint64_t end)
{
	int64_t n = 0;

	if (isa != cst_isa_t32)
		return (int64_t)((end - start + 3) / 4);
	for (uint64_t a = start; a < end; n++) {
		const uint8_t *p = code_at(m, a);

		if (!p)
			return -1;
		a += sym_insn_size(isa, p);
	}
	return n;
}

static struct cst_sym_line_count *scratch_line(struct cst_symbolizer *sym, uint32_t *n,
					       uint32_t slot)
{
	for (uint32_t i = 0; i < *n; i++)
		if (sym->own.scratch[i].slot == slot)
			return &sym->own.scratch[i];
	if (CST_GROW(sym->own.scratch, sym->own.scratch_cap, (size_t)*n + 1) < 0)
		return NULL;
	memset(&sym->own.scratch[*n], 0, sizeof(sym->own.scratch[0]));
	sym->own.scratch[*n].slot = slot;
	return &sym->own.scratch[(*n)++];
}

/* Per-line instruction counts of a piece inside function @f, stored in the arena. */
static int piece_lines(struct cst_symbolizer *sym, const struct mapping *m, struct sym_func *f,
		       enum cst_isa isa, struct cst_sym_piece *pc)
{
	struct dso *dso = m->dso;
	uint32_t n = 0;
	const struct sym_row *row = NULL, *rend = dso->rows + dso->nrows;
	struct cst_sym_line_count *out;
	bool first = true;

	pc->first_line = pc->last_line = -1;

	sym_func_load_slots(dso, f);
	if (!f->pub.nlines)
		return 0;
	for (uint64_t a = pc->start; a < pc->end;) {
		uint64_t v = a + m->vaddr_adj;
		const uint8_t *p = isa == cst_isa_t32 ? code_at(m, a) : NULL;

		/* rows are sorted: step forward, search only on the first instruction */
		if (!row)
			row = sym_dso_find_row(dso, v);
		else
			while (row + 1 < rend && row[1].addr <= v)
				row++;
		if (row && row->line && row->addr <= v) {
			uint32_t slot = sym_func_slot(f, row);

			if (slot != UINT32_MAX) {
				struct cst_sym_line_count *lc = scratch_line(sym, &n, slot);

				if (!lc)
					return -cste_nomem;
				lc->num_insns++;
				lc->file = f->slots[slot].file;
				lc->line = f->slots[slot].line;
				if (first)
					pc->first_line = (int32_t)(lc - sym->own.scratch);
				pc->last_line = (int32_t)(lc - sym->own.scratch);
			} else {
				pc->last_line = -1;
			}
		} else {
			pc->last_line = -1;
		}
		first = false;
		if (isa == cst_isa_t32 && !p)
			break;
		a += sym_insn_size(isa, p);
	}
	if (!n)
		return 0;
	out = sym_arena_alloc(sym, n * sizeof(*out));
	if (!out)
		return -cste_nomem;
	memcpy(out, sym->own.scratch, n * sizeof(*out));
	pc->lines = out;
	pc->nlines = n;
	return 0;
}

static struct cst_sym_piece *next_piece(struct cst_symbolizer *sym, uint32_t n)
{
	if (CST_GROW(sym->own.pscratch, sym->own.pscratch_cap, (size_t)n + 1) < 0)
		return NULL;
	memset(&sym->own.pscratch[n], 0, sizeof(sym->own.pscratch[0]));
	return &sym->own.pscratch[n];
}

/* The trace says which instruction set ran; Arm mapping symbols say what the
 * binary holds there. A disagreement means a wrong image: say so once. */
static void check_isa(struct cst_symbolizer *sym, struct dso *dso, uint64_t vaddr,
		      enum cst_isa isa)
{
	char kind, want;

	if (dso->isa_warned || !dso->nmapsyms)
		return;
	kind = sym_dso_mapping_kind(dso, vaddr);
	want = isa == cst_isa_a32 ? sym_map_a32 : isa == cst_isa_t32 ? sym_map_t32
		: isa == cst_isa_a64 ? sym_map_a64 : 0;
	if (!kind || !want || kind == want || kind == sym_map_data)
		return;
	dso->isa_warned = true;
	cst_logf(&sym->log, cst_log_warning,
		 "%s: the trace executes %s at %#" PRIx64 " but the binary marks $%c there: "
		 "is it the binary that ran?",
		 dso->short_name, cst_isa_name(isa), vaddr, kind);
}

/* Split [start, end) at function and mapping boundaries. Returns the piece count
 * (pieces in sym->own.pscratch) or a negative error. */
static int split_range(struct cst_symbolizer *sym, int32_t pid, const struct cst_elem *e)
{
	uint64_t cur = e->start;
	int64_t sum = 0;
	uint32_t n = 0;

	while (cur < e->end) {
		const struct space *sp;
		const struct mapping *m = sym_find_mapping(sym, pid, cur, &sp);
		struct cst_sym_piece *pc = next_piece(sym, n);
		uint64_t lim = e->end;
		int64_t cnt;

		if (!pc)
			return -cste_nomem;
		sym_fill_loc(sym, m, cur, &pc->loc);
		if (m) {
			struct dso *dso = m->dso;
			uint64_t v = cur + m->vaddr_adj;

			check_isa(sym, dso, v, e->isa);

			if (m->end < lim)
				lim = m->end;
			if (pc->loc.func) {
				struct sym_func *f = (struct sym_func *)pc->loc.func;
				uint64_t fend = f->end - m->vaddr_adj;

				if (fend < lim)
					lim = fend;
				pc->enters_func = v == f->pub.addr;
				if (dso->has_dwarf)
					pc->loc.inlined = sym_dso_inlined_at(dso, v);
			} else if (dso->nfuncs && !pc->loc.is_data) {
				uint64_t next = sym_dso_next_func(dso, v);

				if (next != UINT64_MAX) {
					uint64_t r = next - m->vaddr_adj;

					if (r > cur && r < lim)
						lim = r;
				}
			}
		}
		pc->start = cur;
		pc->end = lim;
		pc->first_line = pc->last_line = -1;
		cnt = lim == e->end ? (int64_t)e->num_insns - sum
				    : count_insns(m, e->isa, cur, lim);
		if (cnt < 0 || sum + cnt > (int64_t)e->num_insns) {
			/* cannot step instructions here: the rest is one piece */
			pc->end = e->end;
			cnt = (int64_t)e->num_insns - sum;
			lim = e->end;
		}
		pc->num_insns = (uint32_t)cnt;
		sum += cnt;
		if (m && pc->loc.func && m->dso->has_dwarf) {
			int err = piece_lines(sym, m, (struct sym_func *)pc->loc.func, e->isa, pc);

			if (err)
				return err;
		}
		n++;
		cur = lim;
	}
	return (int)n;
}

static uint64_t hash_key(const void *sp, uint32_t gen, uint64_t start, uint64_t end, uint8_t isa)
{
	uint64_t h = start * 0x9e3779b97f4a7c15ull ^ (end + isa) * 0xc2b2ae3d27d4eb4full ^
		     ((uint64_t)(uintptr_t)sp + gen) * 0x165667b19e3779f9ull;

	return h ^ (h >> 29);
}

static int cache_grow(struct cst_symbolizer *sym)
{
	uint32_t cap = sym->own.cache_cap ? sym->own.cache_cap * 2 : 1u << 14;
	struct range_entry *t = calloc(cap, sizeof(*t));

	if (!t)
		return -cste_nomem;
	for (uint32_t i = 0; i < sym->own.cache_cap; i++) {
		struct range_entry *o = &sym->own.cache[i];
		uint64_t h;

		if (!o->pieces)
			continue;
		h = hash_key(o->space, o->gen, o->start, o->end, o->isa);
		while (t[h & (cap - 1)].pieces)
			h++;
		t[h & (cap - 1)] = *o;
	}
	free(sym->own.cache);
	sym->own.cache = t;
	sym->own.cache_cap = cap;
	return 0;
}

/* Ranges recur in loops, but a long trace has tens of thousands of them: the
 * cache's table outgrows the CPU's caches, and each range first has its space
 * found. A small direct-mapped table in front, by pid and range, answers the
 * recent ones; any change to any space empties it. */
static struct range_front *front_slot(struct cst_symbolizer *sym, int32_t pid,
				      const struct cst_elem *e)
{
	uint64_t h = e->start * 0x9e3779b97f4a7c15ull ^ e->end * 0xc2b2ae3d27d4eb4full ^
		     (uint64_t)(uint32_t)pid * 0x165667b19e3779f9ull;

	if (!sym->own.front && !(sym->own.front = calloc(SYM_RANGE_FRONT, sizeof(*sym->own.front))))
		return NULL;
	return &sym->own.front[(h ^ (h >> 32)) & (SYM_RANGE_FRONT - 1)];
}

static bool front_holds(const struct range_front *f, const struct cst_symbolizer *sym,
			int32_t pid, const struct cst_elem *e)
{
	return f->epoch == sym->spaces_epoch && f->start == e->start && f->end == e->end &&
	       f->pid == pid && f->isa == (uint8_t)e->isa && f->num_insns == e->num_insns;
}

/* The pieces of range @e, from the cache or computed and cached. */
static int range_pieces(struct cst_symbolizer *sym, int32_t pid, const struct cst_elem *e,
			const struct cst_sym_piece **pieces, uint32_t *npieces)
{
	struct range_front *front = front_slot(sym, pid, e);
	const struct space *sp;
	uint64_t h;
	struct range_entry *slot;
	int n;

	if (front && front_holds(front, sym, pid, e)) {
		sym->own.counts.stats.cache_hits++;
		*pieces = front->pieces;
		*npieces = front->npieces;
		return 0;
	}
	/* the space of the first address keys the entry: pids sharing the global
	 * space share entries, and a mapping change (gen) retires old ones */
	sym_find_mapping(sym, pid, e->start, &sp);
	if (sym->own.cache_used * 2 >= sym->own.cache_cap && cache_grow(sym) < 0)
		return -cste_nomem;
	h = hash_key(sp, sp ? sp->gen : 0, e->start, e->end, (uint8_t)e->isa);
	for (;; h++) {
		slot = &sym->own.cache[h & (sym->own.cache_cap - 1)];
		if (!slot->pieces)
			break;
		if (slot->space == sp && slot->gen == (sp ? sp->gen : 0) &&
		    slot->start == e->start && slot->end == e->end &&
		    slot->isa == (uint8_t)e->isa && slot->num_insns == e->num_insns) {
			sym->own.counts.stats.cache_hits++;
			*pieces = slot->pieces;
			*npieces = slot->npieces;
			goto found;
		}
	}
	sym_lock(sym);
	n = split_range(sym, pid, e);
	sym_unlock(sym);
	if (n < 0)
		return n;
	if (n == 0) {
		*pieces = NULL;
		*npieces = 0;
		return 0;
	}
	slot->pieces = sym_arena_alloc(sym, (size_t)n * sizeof(*slot->pieces));
	if (!slot->pieces)
		return -cste_nomem;
	memcpy(slot->pieces, sym->own.pscratch, (size_t)n * sizeof(*slot->pieces));
	slot->space = sp;
	slot->gen = sp ? sp->gen : 0;
	slot->start = e->start;
	slot->end = e->end;
	slot->isa = (uint8_t)e->isa;
	slot->num_insns = e->num_insns;
	slot->npieces = (uint32_t)n;
	sym->own.cache_used++;
	*pieces = slot->pieces;
	*npieces = (uint32_t)n;
found:
	if (front)
		*front = (struct range_front){e->start, e->end, pid, e->num_insns,
					      sym->spaces_epoch, (uint8_t)e->isa, *npieces,
					      (struct cst_sym_piece *)*pieces};
	return 0;
}

/* Instructions counted to a binary (the last slot takes the rest). */
static void count_dso(struct cst_sym_counts *c, const char *dso, uint64_t insns,
		      uint64_t unnamed)
{
	uint32_t i, n = c->ndsos, max = sizeof(c->dsos) / sizeof(c->dsos[0]);

	for (i = 0; i < n && c->dsos[i].dso != dso; i++)
		;
	if (i == n) {
		if (n == max)
			i = max - 1;
		else
			c->dsos[c->ndsos++].dso = dso;
	}
	c->dsos[i].insns += insns;
	c->dsos[i].unnamed += unnamed;
}

static void add_counts(struct cst_sym_counts *to, const struct cst_sym_counts *from)
{
	to->stats.ranges += from->stats.ranges;
	to->stats.cache_hits += from->stats.cache_hits;
	to->stats.unknown_insns += from->stats.unknown_insns;
	to->stats.insns += from->stats.insns;
	for (uint32_t i = 0; i < from->ndsos; i++)
		count_dso(to, from->dsos[i].dso, from->dsos[i].insns, from->dsos[i].unnamed);
}

int cst_symbolizer_take_counts(struct cst_symbolizer *reader, struct cst_sym_counts *c)
{
	if (!reader || !c)
		return -cste_invalid;
	add_counts(c, &reader->own.counts);
	memset(&reader->own.counts, 0, sizeof(reader->own.counts));
	return 0;
}

int cst_symbolizer_add_counts(struct cst_symbolizer *sym, const struct cst_sym_counts *c)
{
	if (!sym || !c)
		return -cste_invalid;
	add_counts(&sym->own.counts, c);
	return 0;
}

static int by_insns(const void *a, const void *b)
{
	const struct cst_sym_dso_count *x = a, *y = b;

	return x->insns < y->insns ? 1 : x->insns > y->insns ? -1 : 0;
}

int cst_symbolizer_dso_counts(const struct cst_symbolizer *sym, struct cst_sym_dso_count *out,
			      int max)
{
	const struct cst_sym_counts *c;
	struct cst_sym_dso_count all[sizeof(c->dsos) / sizeof(c->dsos[0])];
	uint32_t n;

	if (!sym || (!out && max) || max < 0)
		return -cste_invalid;
	c = &sym->own.counts;
	n = c->ndsos;
	for (uint32_t i = 0; i < n; i++) {
		all[i] = (struct cst_sym_dso_count){c->dsos[i].dso, c->dsos[i].insns,
						    c->dsos[i].unnamed, cst_sym_dso_none};
		for (const struct dso *d = sym->dsos; d; d = d->next)
			if (d->short_name == all[i].dso) {
				all[i].kind = d->kind == dso_missing ? cst_sym_dso_missing
					      : d->kind == dso_raw   ? cst_sym_dso_bytes
									     : cst_sym_dso_elf;
				break;
			}
	}
	qsort(all, n, sizeof(all[0]), by_insns);
	if ((int)n > max)
		n = (uint32_t)max;
	memcpy(out, all, n * sizeof(all[0]));
	return (int)n;
}

const char *cst_symbolizer_comm_at(const struct cst_symbolizer *sym, size_t i, int32_t *tid)
{
	if (!sym || i >= sym->ncomms)
		return NULL;
	if (tid)
		*tid = sym->comms[i].tid;
	return sym->comms[i].name;
}

int cst_symbolizer_feed(struct cst_symbolizer *sym, const struct cst_elem *elem,
			cst_sym_elem_fn fn, void *ctx)
{
	struct cst_sym_elem se = {0};

	if (!sym || !elem || !fn)
		return -cste_invalid;
	se.elem = elem;
	se.pid = sym_elem_pid(elem);
	if ((elem->type == cst_elem_instr_range || elem->type == cst_elem_i_range_nopath) &&
	    elem->end > elem->start) {
		int err = range_pieces(sym, se.pid, elem, &se.pieces, &se.npieces);

		if (err)
			return err;
		sym->own.counts.stats.ranges++;
		sym->own.counts.stats.insns += elem->num_insns;
		for (uint32_t i = 0; i < se.npieces; i++) {
			const struct cst_sym_piece *pc = &se.pieces[i];

			if (!pc->loc.func)
				sym->own.counts.stats.unknown_insns += pc->num_insns;
			count_dso(&sym->own.counts, pc->loc.dso, pc->num_insns,
				  pc->loc.func ? 0 : pc->num_insns);
		}
	}
	se.lost = sym->nlost ? sym_lost_take(sym, elem) : NULL;
	return fn(ctx, &se);
}
