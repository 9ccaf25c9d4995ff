/* Address spaces: per pid, plus a global one (snapshot images, --elf) and the
 * kernel; sorted mappings where a new mapping replaces what it overlaps. */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

struct space *sym_space_get(struct cst_symbolizer *sym, int32_t pid, bool create)
{
	uint32_t lo = CST_PARTITION(i, 0, sym->nspaces, sym->spaces[i]->pid < pid);
	struct space *sp, **n;

	if (lo < sym->nspaces && sym->spaces[lo]->pid == pid)
		return sym->spaces[lo];
	if (!create)
		return NULL;
	sp = calloc(1, sizeof(*sp));
	if (!sp || CST_GROW(sym->spaces, sym->spaces_cap, (size_t)sym->nspaces + 1) < 0) {
		free(sp);
		return NULL;
	}
	n = sym->spaces;
	memmove(&n[lo + 1], &n[lo], (sym->nspaces - lo) * sizeof(*n));
	sp->pid = pid;
	n[lo] = sp;
	sym->nspaces++;
	return sp;
}

const struct mapping *sym_space_find(const struct space *sp, uint64_t addr)
{
	uint32_t lo;

	if (!sp)
		return NULL;
	lo = CST_PARTITION(i, 0, sp->nmaps, sp->maps[i].start <= addr);
	if (lo && addr < sp->maps[lo - 1].end)
		return &sp->maps[lo - 1];
	return NULL;
}

int sym_space_insert(struct cst_symbolizer *sym, struct space *sp, const struct mapping *m)
{
	uint32_t i, w = 0, cap = sp->nmaps + 2;
	struct mapping *out;

	if (m->end <= m->start)
		return -cste_invalid;
	/* worst case: one old mapping is split in two around the new one */
	out = malloc(cap * sizeof(*out));
	if (!out)
		return -cste_nomem;
	for (i = 0; i < sp->nmaps; i++) {
		struct mapping o = sp->maps[i];

		if (o.end <= m->start || o.start >= m->end) {
			out[w++] = o;
			continue;
		}
		if (o.start < m->start) {
			struct mapping left = o;

			left.end = m->start;
			out[w++] = left;
		}
		if (o.end > m->end) {
			struct mapping right = o;

			right.start = m->end;
			out[w++] = right;
		}
	}
	out[w++] = *m;
	/* restore the order: insertion of the one new element */
	for (i = w - 1; i > 0 && out[i - 1].start > out[i].start; i--) {
		struct mapping t = out[i];

		out[i] = out[i - 1];
		out[i - 1] = t;
	}
	free(sp->maps);
	sp->maps = out;
	sp->nmaps = w;
	sp->cap = cap;
	sp->gen++;
	sym_spaces_changed(sym);
	return 0;
}

static const struct mapping *find_mapping(struct cst_symbolizer *sym, int32_t pid,
					  uint64_t addr, const struct space **in)
{
	const struct mapping *m = NULL;
	struct space *sp;

	/* what the user named explicitly wins over recorded images and mappings */
	if ((sp = sym_space_get(sym, SYM_PID_USER, false)) && (m = sym_space_find(sp, addr))) {
		*in = sp;
		return m;
	}
	if (pid != CST_SYM_PID_GLOBAL && (sp = sym_space_get(sym, pid, false)) &&
	    (m = sym_space_find(sp, addr))) {
		*in = sp;
		return m;
	}
	if ((sp = sym_space_get(sym, CST_SYM_PID_GLOBAL, false)) && (m = sym_space_find(sp, addr))) {
		*in = sp;
		return m;
	}
	if (sym->kernel && (m = sym_space_find(sym->kernel, addr))) {
		*in = sym->kernel;
		return m;
	}
	*in = NULL;
	return NULL;
}

/* No space that comes before @sp for @pid (find_mapping's order) maps anything:
 * all of the mapping found in @sp answers for @pid. */
static bool first_space(struct cst_symbolizer *sym, int32_t pid, const struct space *sp)
{
	const struct space *before[3] = {sym_space_get(sym, SYM_PID_USER, false),
					 pid != CST_SYM_PID_GLOBAL ? sym_space_get(sym, pid, false) : NULL,
					 sym_space_get(sym, CST_SYM_PID_GLOBAL, false)};

	for (int i = 0; i < 3 && before[i] != sp; i++)
		if (before[i] && before[i]->nmaps)
			return false;
	return true;
}

const struct mapping *sym_find_mapping(struct cst_symbolizer *sym, int32_t pid, uint64_t addr,
				       const struct space **in)
{
	const struct mapping *m;

	/* the views look up several addresses per element, nearly all in the
	 * mapping of the one before: the binary searches of up to four spaces were
	 * a tenth of perf's lines */
	m = sym->own.map_memo.m;
	if (m && sym->own.map_memo.epoch == sym->spaces_epoch && sym->own.map_memo.pid == pid &&
	    addr >= m->start && addr < m->end) {
		*in = sym->own.map_memo.sp;
		return m;
	}
	m = find_mapping(sym, pid, addr, in);
	if (m && first_space(sym, pid, *in)) {
		sym->own.map_memo.pid = pid;
		sym->own.map_memo.epoch = sym->spaces_epoch;
		sym->own.map_memo.m = m;
		sym->own.map_memo.sp = *in;
	}
	return m;
}

void sym_space_free(struct space *sp)
{
	if (!sp)
		return;
	free(sp->maps);
	free(sp);
}

int sym_space_fork(struct cst_symbolizer *sym, int32_t parent, int32_t child)
{
	struct space *from = sym_space_get(sym, parent, false), *to;
	struct mapping *maps;

	if (!from || !from->nmaps || parent == child)
		return 0;
	to = sym_space_get(sym, child, true);
	if (!to)
		return -cste_nomem;
	if (to->nmaps)
		return 0; /* the child's own mappings were recorded already */
	maps = malloc(from->nmaps * sizeof(*maps));
	if (!maps)
		return -cste_nomem;
	memcpy(maps, from->maps, from->nmaps * sizeof(*maps));
	free(to->maps);
	to->maps = maps;
	to->nmaps = to->cap = from->nmaps;
	to->gen++;
	sym_spaces_changed(sym);
	return 0;
}

void sym_space_exec(struct cst_symbolizer *sym, int32_t pid)
{
	struct space *sp = sym_space_get(sym, pid, false);

	if (sp && sp->nmaps) {
		sp->nmaps = 0;
		sp->gen++;
		sym_spaces_changed(sym);
	}
}
