/* The innermost inlined function at an address, as dwarf_getscopes finds it, without
 * its walk from the top of the compile unit at every address.
 *
 * dwarf_getscopes visits the unit's children in order, takes the first whose ranges
 * hold the address, and goes down the same way until no child holds it; if an
 * inlined subroutine is on that path, it then searches the scopes around the deepest
 * one for its abstract origin, and answers nothing when that is not found. On an
 * armhf interpreter trace that walk took a fifth of `cstrace script`: each range of a
 * new start address asked again from the unit's top. Here the unit's children are
 * tabled once by their ranges, the path below the one found is taken as libdw takes
 * it, and whether an inlined subroutine's origin is found (a fact of the DIE, not of
 * the address) is asked of libdw once per DIE. Anything libdw could fail on goes
 * to the walk itself, so the answer is always the walk's (tests/symbolize/
 * scopes_check.c compares them at every address of real binaries). */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

#include <dwarf.h>

/* One range of a child of the unit; @order is the child's place among them. */
struct top {
	uint64_t lo, hi;
	uint64_t maxhi; /* the highest hi up to this entry, in lo order */
	uint32_t order;
	Dwarf_Die die;
};

struct unit {
	uintptr_t key; /* where the unit's DIE is in its section data */
	bool walk; /* libdw failed on a child's ranges: ask the walk each time */
	struct top *tops;
	uint32_t ntops;
};

/* An inlined subroutine DIE, by where it is in its section data (offsets could
 * repeat across a debug file and its supplementary file): is its abstract origin
 * found, so that the walk names it? */
struct origin {
	uintptr_t key;
	bool found;
};

struct sym_scopes {
	struct unit *units; /* sorted by key */
	uint32_t nunits;
	size_t cap;
	struct origin *origins;
	uint32_t norigins;
	size_t ocap;
	uint32_t *index, icap; /* over origins (cst_index_grow) */
};

void sym_scopes_free(struct sym_scopes *s)
{
	if (!s)
		return;
	for (uint32_t i = 0; i < s->nunits; i++)
		free(s->units[i].tops);
	free(s->units);
	free(s->origins);
	free(s->index);
	free(s);
}

static int cmp_top(const void *a, const void *b)
{
	const struct top *x = a, *y = b;

	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

/* Table the ranges of @cu's children. */
static void load_unit(struct unit *u, Dwarf_Die *cu)
{
	Dwarf_Die child;
	size_t cap = 0;
	uint32_t order = 0;
	int r = dwarf_child(cu, &child);

	if (r < 0)
		u->walk = true;
	for (; r == 0 && !u->walk; r = dwarf_siblingof(&child, &child), order++) {
		Dwarf_Addr base, lo, hi;
		ptrdiff_t off = 0;

		while ((off = dwarf_ranges(&child, off, &base, &lo, &hi)) > 0) {
			if (hi <= lo)
				continue; /* holds no address */
			if (CST_GROW(u->tops, cap, (size_t)u->ntops + 1) < 0) {
				u->walk = true;
				break;
			}
			u->tops[u->ntops++] = (struct top){lo, hi, 0, order, child};
		}
		if (off < 0)
			u->walk = true;
	}
	if (r < 0)
		u->walk = true;
	qsort(u->tops, u->ntops, sizeof(*u->tops), cmp_top);
	for (uint32_t i = 0; i < u->ntops; i++)
		u->tops[i].maxhi = i && u->tops[i - 1].maxhi > u->tops[i].hi ? u->tops[i - 1].maxhi
									     : u->tops[i].hi;
}

/* The table of unit @cu, made on first use; NULL without memory. */
static struct unit *unit_of(struct sym_scopes *s, Dwarf_Die *cu)
{
	uintptr_t key = (uintptr_t)cu->addr;
	uint32_t lo = CST_PARTITION(i, 0, s->nunits, s->units[i].key < key);

	if (lo < s->nunits && s->units[lo].key == key)
		return &s->units[lo];
	if (CST_GROW(s->units, s->cap, (size_t)s->nunits + 1) < 0)
		return NULL;
	memmove(&s->units[lo + 1], &s->units[lo], (s->nunits - lo) * sizeof(*s->units));
	s->nunits++;
	s->units[lo] = (struct unit){.key = key};
	load_unit(&s->units[lo], cu);
	return &s->units[lo];
}

/* The first child of the unit (in DIE order) whose ranges hold @pc, or NULL. */
static const struct top *top_at(const struct unit *u, uint64_t pc)
{
	uint32_t lo = CST_PARTITION(i, 0, u->ntops, u->tops[i].lo <= pc);
	const struct top *best = NULL;

	/* every range holding @pc starts at or below it; maxhi says when none is left */
	for (uint32_t i = lo; i-- && u->tops[i].maxhi > pc;)
		if (u->tops[i].hi > pc && (!best || u->tops[i].order < best->order))
			best = &u->tops[i];
	return best;
}

/* Tags whose children dwarf_getscopes goes down into (imported units aside). */
static bool goes_into(int tag)
{
	switch (tag) {
	case DW_TAG_compile_unit:
	case DW_TAG_module:
	case DW_TAG_lexical_block:
	case DW_TAG_with_stmt:
	case DW_TAG_catch_block:
	case DW_TAG_try_block:
	case DW_TAG_entry_point:
	case DW_TAG_inlined_subroutine:
	case DW_TAG_subprogram:
	case DW_TAG_namespace:
	case DW_TAG_class_type:
	case DW_TAG_structure_type:
		return true;
	default:
		return false;
	}
}

enum path_end { path_none, path_inline, path_walk };

/* Go down from @die (which holds @pc) as dwarf_getscopes does: *@inl is the
 * deepest inlined subroutine or subprogram on the path. path_walk: libdw might
 * fail here, ask the walk. */
static enum path_end go_down(Dwarf_Die die, uint64_t pc, Dwarf_Die *inl)
{
	bool have = false, is_inline = false;

	for (;;) {
		int tag = dwarf_tag(&die), r;
		Dwarf_Die child;

		if (tag == DW_TAG_imported_unit)
			return path_walk;
		if (tag == DW_TAG_inlined_subroutine || tag == DW_TAG_subprogram) {
			*inl = die;
			have = true;
			is_inline = tag == DW_TAG_inlined_subroutine;
		}
		if (!goes_into(tag) || !dwarf_haschildren(&die))
			break;
		r = dwarf_child(&die, &child);
		for (; r == 0; r = dwarf_siblingof(&child, &child)) {
			int in = dwarf_haspc(&child, pc);

			if (in < 0)
				return path_walk;
			if (in > 0)
				break;
		}
		if (r < 0)
			return path_walk;
		if (r > 0)
			break; /* no child holds it: @die is the innermost scope */
		die = child;
	}
	return have && is_inline ? path_inline : path_none;
}

static uint64_t key_hash(uintptr_t key)
{
	uint64_t h = (uint64_t)key * 0x9e3779b97f4a7c15ull;

	return h ^ (h >> 32);
}

static uint64_t origin_hash(const void *ctx, uint32_t i)
{
	return key_hash(((const struct sym_scopes *)ctx)->origins[i].key);
}

/* What was found of the inline at @key, or NULL the first time. */
static const struct origin *origin_find(const struct sym_scopes *s, uintptr_t key)
{
	if (!s->icap)
		return NULL;
	for (uint64_t h = key_hash(key);; h++) {
		uint32_t i = s->index[h & (s->icap - 1)];

		if (!i)
			break;
		if (s->origins[i - 1].key == key)
			return &s->origins[i - 1];
	}
	return NULL;
}

/* Remember it (without memory, it is asked again next time). */
static void origin_remember(struct sym_scopes *s, uintptr_t key, bool found)
{
	uint64_t h;

	if ((s->norigins * 2 >= s->icap &&
	     cst_index_grow(&s->index, &s->icap, 256, s->norigins, origin_hash, s) < 0) ||
	    CST_GROW(s->origins, s->ocap, (size_t)s->norigins + 1) < 0)
		return;
	s->origins[s->norigins] = (struct origin){key, found};
	for (h = key_hash(key); s->index[h & (s->icap - 1)]; h++)
		;
	s->index[h & (s->icap - 1)] = ++s->norigins;
}

const char *sym_dso_inlined_at(struct dso *dso, uint64_t vaddr)
{
	const struct top *top;
	struct unit *u;
	Dwarf_Addr cubias;
	Dwarf_Die *cu, inl;
	const struct origin *o;
	uintptr_t key;
	uint64_t pc;
	const char *name;

	if (!dso->has_dwarf)
		return NULL;
	if (!dso->scopes && !(dso->scopes = calloc(1, sizeof(*dso->scopes))))
		return sym_dso_inlined_at_walk(dso, vaddr);
	cu = sym_dso_cu_at(dso, vaddr, &cubias);
	if (!cu)
		return NULL;
	u = unit_of(dso->scopes, cu);
	if (!u || u->walk)
		return sym_dso_inlined_at_walk(dso, vaddr);
	pc = vaddr + dso->bias - cubias;
	top = top_at(u, pc);
	if (!top)
		return NULL;
	switch (go_down(top->die, pc, &inl)) {
	case path_none:
		return NULL;
	case path_walk:
		return sym_dso_inlined_at_walk(dso, vaddr);
	case path_inline:
		break;
	}
	key = (uintptr_t)inl.addr;
	o = origin_find(dso->scopes, key);
	if (o)
		return o->found ? sym_die_name(&inl) : NULL;
	/* the first time this inline is the answer: whether libdw names it */
	name = sym_dso_inlined_at_walk(dso, vaddr);
	origin_remember(dso->scopes, key, name != NULL);
	return name;
}
