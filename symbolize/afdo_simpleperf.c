/* AutoFDO's text profile exactly as Android simpleperf's `inject` writes it from
 * ETM trace (ETMDecoder.cpp's InstrRangeParser, cmd_inject.cpp's AutoFDOWriter):
 * one range per instruction range the decoder gives (OpenCSD's, never joined:
 * the session keeps them apart, cst_report_needs_ranges), and for a range whose
 * last instruction is a branch that was taken, one branch to where it went when
 * that is a fixed place (a direct branch: the next range's start), else to 0 (a
 * return, an indirect call, a PLT's br x17). docs/symbolize.md lists the rules. */
#include "internal.h"
#include "views_int.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#define NIDS 128

struct sym_afdo_sp {
	struct cst_symbolizer *sym;
	/* the last range of each trace ID, held until the next says where its
	 * direct branch went (InstrRangeParser's TraceData) */
	struct sym_afdo_pending cur[NIDS];
	struct sym_count_table t;
	bool mute; /* sym_afdo_sp_mute */
};

struct sym_afdo_sp *sym_afdo_sp_alloc(struct cst_symbolizer *sym)
{
	struct sym_afdo_sp *s = calloc(1, sizeof(*s));

	if (s)
		s->sym = sym;
	return s;
}

void sym_afdo_sp_free(struct sym_afdo_sp *s)
{
	if (!s)
		return;
	sym_count_free(&s->t);
	free(s);
}

static int bump(struct sym_afdo_sp *s, const char *dso, uint64_t a, uint64_t b, bool branch)
{
	return s->mute ? 0 : sym_count_bump(&s->t, dso, a, b, branch, 1);
}

void sym_afdo_sp_state(const struct sym_afdo_sp *s, uint8_t id, struct sym_afdo_pending *st)
{
	*st = s->cur[id & (NIDS - 1)];
}

void sym_afdo_sp_adopt(struct sym_afdo_sp *s, uint8_t id, const struct sym_afdo_pending *st)
{
	s->cur[id & (NIDS - 1)] = *st;
}

void sym_afdo_sp_clear(struct sym_afdo_sp *s)
{
	memset(s->cur, 0, sizeof(s->cur));
}

void sym_afdo_sp_mute(struct sym_afdo_sp *s, bool mute)
{
	s->mute = mute;
}

struct sym_count_table *sym_afdo_sp_counts(struct sym_afdo_sp *s)
{
	return &s->t;
}

/* Where the direct branch at the end of @p goes, in its binary's addresses: the
 * target its instruction names (ETMDecoder's next_instr->branch_addr, taken into
 * the range's own mapping), as capstone prints it ("#0x..."); 0 if unreadable. */
static uint64_t named_target(struct sym_afdo_sp *s, const struct sym_afdo_pending *p)
{
	struct cst_sym_insn insn;
	const char *imm;
	uint64_t t;

	if (cst_symbolizer_disasm(s->sym, p->pid, p->end_rt, p->isa, &insn) < 0 ||
	    !(imm = strrchr(insn.text, '#')) || strncmp(imm, "#0x", 3))
		return 0;
	t = strtoull(imm + 3, NULL, 16);
	return t - p->end_rt + p->end;
}

/* The range held goes out: once, and its taken branch once. */
static int flush(struct sym_afdo_sp *s, struct sym_afdo_pending *p)
{
	int err = 0;

	if (!p->open)
		return 0;
	p->open = false;
	if (!p->kept)
		return 0; /* held all the same: the next range's start was its target */
	if (p->taken && p->fix)
		p->to = named_target(s, p); /* no range came to say where it went */
	err = bump(s, p->dso, p->start, p->end, false);
	if (!err && p->taken)
		err = bump(s, p->dso, p->end, p->to, true);
	return err;
}

static bool in_binary(const struct cst_sym_piece *pc)
{
	return pc->loc.dso[0] != '[' || strcmp(pc->loc.dso, "[unknown]") != 0;
}

int sym_afdo_sp_add(struct sym_afdo_sp *s, const struct cst_sym_elem *se, bool kept)
{
	const struct cst_elem *e = se->elem;
	struct sym_afdo_pending *p = &s->cur[e->trace_id & (NIDS - 1)];
	const struct cst_sym_piece *pc;
	int err;

	if (e->type == cst_elem_trace_on)
		return flush(s, p); /* a discontinuity: no range follows the one held */
	if (e->type != cst_elem_instr_range || !e->num_insns)
		return 0;
	pc = se->npieces ? &se->pieces[0] : NULL;
	if (!pc || !in_binary(pc)) {
		/* no binary maps its start: it is left out, and what was held goes
		 * out as it is */
		return flush(s, p);
	}
	if (p->open && p->fix) {
		/* OpenCSD may hold ranges back, so the branch target is where the
		 * next range starts, in that range's binary */
		p->to = pc->loc.vaddr;
		p->fix = false;
	}
	err = flush(s, p);
	if (err)
		return err;
	*p = (struct sym_afdo_pending){.dso = pc->loc.dso, .start = pc->loc.vaddr, .open = true,
				 .pid = se->pid, .isa = e->isa, .kept = kept};
	/* the last instruction in the mapping of the first, as simpleperf takes it */
	p->end_rt = e->end - e->last_size;
	p->end = pc->loc.vaddr + (p->end_rt - pc->start);
	p->taken = (e->last_class == cst_insn_branch || e->last_class == cst_insn_branch_indirect) &&
		   e->last_executed;
	p->fix = p->taken && e->last_class == cst_insn_branch;
	return 0;
}

int sym_afdo_sp_finish(struct sym_afdo_sp *s)
{
	for (int id = 0; id < NIDS; id++) {
		int err = flush(s, &s->cur[id]);

		if (err)
			return err;
	}
	return 0;
}

struct pair {
	uint64_t a, b, n;
};

static int by_pair(const void *x, const void *y)
{
	const struct pair *p = x, *q = y;

	if (p->a != q->a)
		return p->a < q->a ? -1 : 1;
	if (p->b != q->b)
		return p->b < q->b ? -1 : 1;
	return p->n < q->n ? -1 : p->n > q->n;
}

/* One section: its count line, then its entries of @dso, each less @base (ranges
 * and branch sources below it are left out, a branch target below it is 0), sorted
 * as simpleperf sorts them: by the pairs it prints. */
static int put_section(struct sym_afdo_sp *s, FILE *f, const char *dso, bool branch, uint64_t base)
{
	struct pair *v = malloc(((size_t)s->t.n + 1) * sizeof(*v));
	const struct dso *module = sym_dso_named(s->sym, dso);
	size_t n = 0;

	if (!v)
		return -cste_nomem;
	if (module && !module->nkmod)
		module = NULL;
	for (uint32_t i = 0; i < s->t.n; i++) {
		const struct sym_count *c = &s->t.v[i];
		uint64_t a = c->a, b = c->b;

		if (c->dso != dso || c->branch != branch)
			continue;
		/* a kernel module's addresses are its own, from its .text (no
		 * loadable segment: base 0); its symbols place it otherwise */
		if (module && !sym_dso_kmod_addr(module, a, &a))
			continue;
		if (module && b && !sym_dso_kmod_addr(module, b, &b)) {
			if (!branch)
				continue;
			b = 0;
		}
		if (a < base || (!branch && b < base))
			continue;
		v[n++] = (struct pair){a - base, b >= base ? b - base : 0, c->n};
	}
	qsort(v, n, sizeof(*v), by_pair);
	fprintf(f, "%zu\n", n);
	for (size_t i = 0; i < n; i++)
		fprintf(f, branch ? "%" PRIx64 "->%" PRIx64 ":%" PRIu64 "\n"
				  : "%" PRIx64 "-%" PRIx64 ":%" PRIu64 "\n",
			v[i].a, v[i].b, v[i].n);
	free(v);
	return 0;
}

struct binary {
	const char *dso;
	struct cst_sym_dso_info info;
};

static int by_path(const void *x, const void *y)
{
	const struct binary *a = x, *b = y;

	return strcmp(a->info.path, b->info.path);
}

int sym_afdo_sp_write(struct sym_afdo_sp *s, FILE *f)
{
	struct binary *v = malloc(((size_t)s->t.n + 1) * sizeof(*v));
	size_t n = 0;
	int err = 0;

	if (!v)
		return -cste_nomem;
	/* the ELF binaries with counts (a missing file has no addresses of its own) */
	for (uint32_t i = 0; i < s->t.n; i++) {
		size_t k = 0;

		while (k < n && v[k].dso != s->t.v[i].dso)
			k++;
		if (k < n || cst_symbolizer_dso_info(s->sym, s->t.v[i].dso, &v[n].info) < 0 ||
		    !v[n].info.elf)
			continue;
		v[n++].dso = s->t.v[i].dso;
	}
	qsort(v, n, sizeof(*v), by_path);
	if (n > 1)
		fputs("// Please split this file. AutoFDO only accepts profile for one binary.\n", f);
	for (size_t d = 0; d < n && !err; d++) {
		const struct cst_sym_dso_info *info = &v[d].info;
		char shown[4096];

		/* addresses as offsets from the first loadable segment, which
		 * AutoFDO adds back (vaddr = file offset + first PT_LOAD's vaddr) */
		err = put_section(s, f, v[d].dso, false, info->base);
		if (!err)
			fputs("0\n", f); /* address counts: trace gives ranges, not samples */
		if (!err)
			err = put_section(s, f, v[d].dso, true, info->base);
		if (err)
			break;
		fputs("// build_id: 0x", f);
		for (uint32_t i = 0; i < 20; i++) /* shorter ids zero-padded, as perf.data keeps them */
			fprintf(f, "%02x", i < info->build_id_size ? info->build_id[i] : 0);
		fprintf(f, "\n// %s\n\n", cst_printable(info->path, shown, sizeof(shown)));
	}
	free(v);
	if (err)
		return err;
	return ferror(f) ? -cste_io : 0;
}
