/* LLVM's sample profile of one binary, in the text format clang's
 * -fprofile-sample-use reads, computed here from the very ranges and branches
 * that --format=profgen writes, by llvm-profgen's (LLVM 19) rules for a profile
 * that is not context-sensitive, so that a board's run needs no other tool:
 *  - functions are DWARF's subprograms (linkage name, else name) with their
 *    address ranges; a range starting in a function makes all its instructions
 *    count, those that never ran at 0 (the compiler reads 0 as cold);
 *  - an instruction belongs to the profiles of its inline chain: each frame's
 *    location is its line less its function's DW_AT_decl_line (& 0xffff) with a
 *    discriminator, the caller frames' from DW_AT_call_line and
 *    DW_AT_GNU_discriminator, the innermost's from the line table;
 *  - a profile's total is the sum of count x size (bytes) of its instructions; a
 *    location's body count is the most any of its instructions ran (times the
 *    duplication factor of LLVM's discriminator encoding), keyed by the base
 *    discriminator;
 *  - a taken branch to a function's entry is a call from the branch's location
 *    ("offset: n callee:count") and adds to the callee's head samples; a top
 *    level location counts at least its calls. */
#include "internal.h"
#include "views_int.h"
#include "report_view.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <dwarf.h>

/* GCC's discriminator of an inlined call (elfutils' dwarf.h does not name it) */
#define AT_GNU_DISCRIMINATOR 0x2136

/* One address range of a DWARF function (LLVM's FuncRange). */
struct frange {
	uint64_t start, end;
	const char *name;
	uint32_t seq;              /* DIE order: the first function at a start wins */
	uint32_t func;             /* dense id of the name */
	bool entry;                /* a call to start enters the function */
};

struct lsample {
	struct dso *dso;
	struct frange *all;        /* every range, by function name then DIE order */
	uint32_t nall;
	size_t allcap;
	struct frange *map;        /* one per start address, sorted */
	uint32_t nmap;
	uint32_t *first;           /* per function: its first range in all[], and nall */
	uint32_t nfunc;
	bool *filled;              /* per function: its instructions were zero-filled */
	struct sym_addr_count *acc; /* per instruction: how often it ran */
	size_t nacc, acccap;
	struct sym_sp_tree t;      /* the profile being built */
	bool fs;                   /* flow-sensitive discriminators (clang's FS-AFDO) */
	char **owned;              /* canonical callee names made here */
	size_t nowned, ocap;
	int err;
};

/* ---- LLVM's reading of DWARF ---- */

/* DWARF discriminators as LLVM encodes them (DILocation): the base
 * discriminator keys a location, the duplication factor scales its count. A
 * binary with flow-sensitive discriminators (it defines __llvm_fs_discriminator__)
 * keeps them whole and unscaled. GCC's plain numbers are read the same way. */
static uint32_t prefix_decode(uint32_t u)
{
	if (u & 1)
		return 0;
	u >>= 1;
	return u & 0x20 ? ((u >> 1) & 0xfe0) | (u & 0x1f) : u & 0x1f;
}

static uint32_t base_disc(const struct lsample *c, uint32_t d)
{
	if (c->fs)
		return d;
	if ((d & 7) == 7) /* a pseudo-probe discriminator: its probe id, or the base packed in */
		return d & 0x10000000 ? (d >> 16) & 7 : (d >> 3) & 0xffff;
	return prefix_decode(d);
}

static uint32_t dup_factor(const struct lsample *c, uint32_t d)
{
	uint32_t f;

	if (c->fs)
		return 1;
	d = !(d & 1) ? d >> (d & 0x40 ? 14 : 7) : d >> 1;
	f = prefix_decode(d);
	return f ? f : 1;
}

/* The name LLVM gives a subprogram or an inline: its linkage name, else its name,
 * through abstract origins and specifications. */
static const char *llvm_name(Dwarf_Die *die)
{
	Dwarf_Attribute attr;
	const char *name;

	name = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &attr));
	if (!name)
		name = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_linkage_name, &attr));
	if (!name)
		name = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_name, &attr));
	return name;
}

static uint32_t udata(Dwarf_Die *die, unsigned at)
{
	Dwarf_Attribute attr;
	Dwarf_Word v = 0;

	return dwarf_formudata(dwarf_attr(die, at, &attr), &v) == 0 ? (uint32_t)v : 0;
}

/* The name a call reaches, as LLVM keys callees: less a ".llvm.N" or ".part.N"
 * suffix (NULL when out of memory). */
static const char *canonical(struct lsample *c, const char *name)
{
	static const char *const suffixes[] = {".llvm.", ".part."};
	size_t len = strlen(name);
	char *copy;

	for (size_t s = 0; s < 2; s++) {
		size_t sl = strlen(suffixes[s]);
		const char *it = NULL, *dot = NULL;

		for (const char *q = name; q + sl <= name + len; q++)
			if (!strncmp(q, suffixes[s], sl))
				it = q;
		for (const char *q = name; q < name + len; q++)
			if (*q == '.')
				dot = q;
		if (it && dot == it + sl - 1)
			len = (size_t)(it - name);
	}
	if (!name[len])
		return name;
	if (CST_GROW(c->owned, c->ocap, c->nowned + 1) < 0 || !(copy = strndup(name, len))) {
		c->err = -cste_nomem;
		return NULL;
	}
	return c->owned[c->nowned++] = copy;
}

struct frame {
	const char *name;
	uint32_t off, disc;
};

#define MAX_FRAMES 64

/* The frames of @a, outermost first, as LLVM's symbolizer gives them; only the
 * named ones from the outermost on. */
static int frames_at(struct lsample *c, uint64_t a, struct frame *fr)
{
	Dwarf_Die dies[MAX_FRAMES];
	const struct sym_row *row = sym_dso_row_at(c->dso, a);
	int k = sym_dso_inline_dies(c->dso, a, dies, MAX_FRAMES), n = 0;
	uint32_t line = row ? row->line : 0, disc = row ? row->discriminator : 0;

	for (int i = 0; i < k; i++) {
		int start = 0;

		dwarf_decl_line(&dies[i], &start);
		fr[k - 1 - i] = (struct frame){llvm_name(&dies[i]),
					       (line - (uint32_t)start) & 0xffff, disc};
		line = udata(&dies[i], DW_AT_call_line);
		disc = udata(&dies[i], AT_GNU_DISCRIMINATOR);
	}
	while (n < k && fr[n].name)
		n++;
	return n;
}

/* The profile of the innermost frame, each profile on the way getting @total. */
static uint32_t leaf_node(struct lsample *c, const struct frame *fr, int n, uint64_t total)
{
	uint32_t node = sym_sp_get(&c->t, sym_sp_node, 0, 0, 0, fr[0].name);

	if (node == UINT32_MAX)
		return node;
	c->t.r[node].n += total;
	for (int i = 1; i < n; i++) {
		node = sym_sp_get(&c->t, sym_sp_node, node + 1, fr[i - 1].off, base_disc(c, fr[i - 1].disc),
			       fr[i].name);
		if (node == UINT32_MAX)
			return node;
		c->t.r[node].n += total;
	}
	return node;
}

/* ---- functions ---- */

static void add_ranges(struct lsample *c, Dwarf_Die *die, Dwarf_Addr cubias, uint64_t floor)
{
	const char *name = llvm_name(die);
	Dwarf_Addr base, lo, hi;
	ptrdiff_t off = 0;

	if (!name)
		return;
	while ((off = dwarf_ranges(die, off, &base, &lo, &hi)) > 0) {
		uint64_t start = lo + cubias - c->dso->bias, end = hi + cubias - c->dso->bias;

		if (end <= start || start < floor)
			continue;
		if (CST_GROW(c->all, c->allcap, (size_t)c->nall + 1) < 0) {
			c->err = -cste_nomem;
			return;
		}
		c->all[c->nall] = (struct frange){start, end, name, c->nall, 0, false};
		c->nall++;
	}
}

/* Every subprogram below @die and its siblings, wherever it is nested. */
static void walk_dies(struct lsample *c, Dwarf_Die *die, Dwarf_Addr cubias, uint64_t floor,
		      int depth)
{
	Dwarf_Die d = *die, child;

	do {
		if (dwarf_tag(&d) == DW_TAG_subprogram)
			add_ranges(c, &d, cubias, floor);
		if (depth < 64 && dwarf_child(&d, &child) == 0)
			walk_dies(c, &child, cubias, floor, depth + 1);
	} while (!c->err && dwarf_siblingof(&d, &d) == 0);
}

static int by_name(const void *x, const void *y)
{
	const struct frange *a = x, *b = y;
	int k = strcmp(a->name, b->name);

	return k ? k : (a->seq > b->seq) - (a->seq < b->seq);
}

static int by_start(const void *x, const void *y)
{
	const struct frange *a = x, *b = y;

	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	return (a->seq > b->seq) - (a->seq < b->seq);
}

/* The range holding @a (LLVM's findFuncRange), or NULL. */
static struct frange *range_at(const struct lsample *c, uint64_t a)
{
	uint32_t lo = CST_PARTITION(i, 0, c->nmap, c->map[i].start <= a);

	return lo && a < c->map[lo - 1].end ? &c->map[lo - 1] : NULL;
}

/* Which ranges are function entries, as llvm-profgen decides while it walks the
 * symbols of the code sections: a range holding a symbol, when its function has
 * one range, or else the one holding a symbol of the function's own name. And
 * whether the binary marks its discriminators flow-sensitive (a data symbol). */
static void read_symbols(struct lsample *c)
{
	int n = dwfl_module_getsymtab(c->dso->mod);

	for (int i = 1; i < n; i++) {
		GElf_Sym s;
		GElf_Addr addr;
		GElf_Word shndx;
		GElf_Shdr sh;
		Elf *elf;
		Elf_Scn *scn;
		Dwarf_Addr bias;
		const char *name = dwfl_module_getsym_info(c->dso->mod, i, &s, &addr, &shndx, &elf,
							   &bias);
		struct frange *fr;

		if (!name || shndx == SHN_UNDEF || shndx >= SHN_LORESERVE ||
		    !(scn = elf_getscn(elf, shndx)) || !gelf_getshdr(scn, &sh))
			continue;
		if (!(sh.sh_flags & SHF_EXECINSTR)) {
			if (sh.sh_type == SHT_PROGBITS && (sh.sh_flags & SHF_ALLOC) && sh.sh_size &&
			    !strcmp(name, "__llvm_fs_discriminator__"))
				c->fs = true;
			continue;
		}
		addr -= c->dso->bias;
		if (c->dso->machine == EM_ARM && GELF_ST_TYPE(s.st_info) == STT_FUNC)
			addr &= ~1ull;
		fr = range_at(c, addr);
		if (!fr || fr->entry)
			continue;
		if (c->first[fr->func + 1] - c->first[fr->func] == 1) {
			fr->entry = true;
		} else {
			const char *cn = canonical(c, name);

			fr->entry = cn && !strcmp(cn, fr->name);
		}
	}
}

/* The lowest executable segment's page: llvm-profgen's preferred base, below
 * which it ignores functions. */
static uint64_t text_base(const struct dso *dso)
{
	size_t n = 0;

	if (elf_getphdrnum(dso->elf, &n) != 0)
		return 0;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(dso->elf, (int)i, &ph) && ph.p_type == PT_LOAD && (ph.p_flags & PF_X))
			return ph.p_vaddr & ~0xfffull;
	}
	return 0;
}

static int load_functions(struct lsample *c)
{
	Dwarf_Die *cu = NULL;
	Dwarf_Addr cubias;
	uint64_t floor = text_base(c->dso);

	while (!c->err && (cu = dwfl_module_nextcu(c->dso->mod, cu, &cubias))) {
		Dwarf_Die child;

		if (dwarf_child(cu, &child) == 0)
			walk_dies(c, &child, cubias, floor, 0);
	}
	if (c->err)
		return c->err;
	/* functions are names: DIEs of one name are one function */
	qsort(c->all, c->nall, sizeof(*c->all), by_name);
	c->first = malloc(((size_t)c->nall + 1) * sizeof(*c->first));
	c->map = malloc(((size_t)c->nall + 1) * sizeof(*c->map));
	if (!c->first || !c->map)
		return -cste_nomem;
	for (uint32_t i = 0; i < c->nall; i++) {
		if (!i || strcmp(c->all[i].name, c->all[i - 1].name))
			c->first[c->nfunc++] = i;
		c->all[i].func = c->nfunc - 1;
	}
	c->first[c->nfunc] = c->nall;
	c->filled = calloc((size_t)c->nfunc + 1, sizeof(*c->filled));
	if (!c->filled)
		return -cste_nomem;
	memcpy(c->map, c->all, c->nall * sizeof(*c->map));
	qsort(c->map, c->nall, sizeof(*c->map), by_start);
	for (uint32_t i = 0; i < c->nall; i++)
		if (!c->nmap || c->map[c->nmap - 1].start != c->map[i].start)
			c->map[c->nmap++] = c->map[i];
	read_symbols(c);
	return c->err;
}

/* ---- counts ---- */

static void add_insns(struct lsample *c, uint64_t first, uint64_t last, uint64_t n)
{
	for (uint64_t a = first; a <= last && !c->err; a += sym_dso_insn_size(c->dso, a)) {
		if (CST_GROW(c->acc, c->acccap, c->nacc + 1) < 0) {
			c->err = -cste_nomem;
			return;
		}
		c->acc[c->nacc++] = (struct sym_addr_count){a, n};
	}
}

/* A range ran @n times; every instruction of the function it starts in counts. */
static void on_range(void *ctx, uint64_t first, uint64_t last, uint64_t n)
{
	struct lsample *c = ctx;
	const struct frange *fr = range_at(c, first);

	add_insns(c, first, last, n);
	if (fr && !c->filled[fr->func]) {
		c->filled[fr->func] = true;
		for (uint32_t i = c->first[fr->func]; i < c->first[fr->func + 1]; i++)
			add_insns(c, c->all[i].start, c->all[i].end - 1, 0);
	}
}

/* A taken branch to a function's entry: a call of it from the branch's location. */
static void on_branch(void *ctx, uint64_t from, uint64_t to, uint64_t n)
{
	struct lsample *c = ctx;
	struct frame fr[MAX_FRAMES];
	const struct frange *callee = range_at(c, to);
	const char *name;
	uint32_t node;
	int nf;

	if (!callee || callee->start != to || !callee->entry || !(name = canonical(c, callee->name)))
		return;
	nf = frames_at(c, from, fr);
	if (nf) {
		uint32_t line, t;

		node = leaf_node(c, fr, nf, 0);
		line = sym_sp_get(&c->t, sym_sp_line, node, fr[nf - 1].off, base_disc(c, fr[nf - 1].disc), NULL);
		t = line == UINT32_MAX ? line : sym_sp_get(&c->t, sym_sp_target, line, 0, 0, name);
		if (t == UINT32_MAX)
			return;
		c->t.r[t].n += n;
	}
	node = sym_sp_get(&c->t, sym_sp_node, 0, 0, 0, name);
	if (node != UINT32_MAX)
		c->t.r[node].head += n;
}

/* Each instruction's count into the profiles of its inline chain. */
static void add_bodies(struct lsample *c)
{
	size_t m = sym_counts_reduce(c->acc, c->nacc);

	for (size_t i = 0; i < m && !c->err; i++) {
		struct frame fr[MAX_FRAMES];
		uint64_t a = c->acc[i].addr, n = c->acc[i].n;
		int nf = frames_at(c, a, fr);
		uint32_t node, line;
		uint64_t body;

		if (!nf)
			continue; /* no function of DWARF's: LLVM leaves it out */
		node = leaf_node(c, fr, nf, n * sym_dso_insn_size(c->dso, a));
		line = node == UINT32_MAX ? node
					  : sym_sp_get(&c->t, sym_sp_line, node, fr[nf - 1].off,
						    base_disc(c, fr[nf - 1].disc), NULL);
		body = n * dup_factor(c, fr[nf - 1].disc);
		if (line != UINT32_MAX && c->t.r[line].n < body)
			c->t.r[line].n = body;
	}
}

static struct dso *dso_named(struct cst_symbolizer *sym, const char *name)
{
	for (struct dso *d = sym->dsos; d; d = d->next)
		if (d->short_name == name)
			return d;
	return NULL;
}

int cst_afdo_write_llvm_sample(struct cst_afdo *p, FILE *f, const char *dso)
{
	struct cst_symbolizer *sym = sym_afdo_symbolizer(p);
	struct cst_sym_dso_info info;
	struct lsample c = {0};
	const char *name;
	int err;

	if (!p || !f || !dso)
		return -cste_invalid;
	name = sym_afdo_find_dso(p, dso, &info);
	c.dso = name ? dso_named(sym, name) : NULL;
	if (!c.dso)
		return -cste_not_found;
	sym_dso_load_symbols(sym, c.dso);
	if (!c.dso->has_dwarf)
		return -cste_unsupported; /* the profile is made of source lines */
	err = load_functions(&c);
	if (!err)
		err = sym_afdo_profgen_counts(p, name, info.base, false, on_range, &c);
	if (!err && !c.err)
		add_bodies(&c);
	if (!err && !c.err)
		err = sym_afdo_profgen_counts(p, name, info.base, true, on_branch, &c);
	if (!err && !c.err) {
		sym_sp_raise_to_calls(&c.t);
		err = sym_sp_write(&c.t, f);
	}
	if (!err)
		err = c.err ? c.err : c.t.err;
	for (size_t i = 0; i < c.nowned; i++)
		free(c.owned[i]);
	free(c.owned);
	free(c.all);
	free(c.map);
	free(c.first);
	free(c.filled);
	free(c.acc);
	sym_sp_free(&c.t);
	return err;
}

/* report --format=llvm-sample --dso NAME */
int sym_report_write_llvm_sample(struct cst_report_view *v, FILE *f)
{
	/* LLVM's text reader skips lines that start with '#' */
	sym_report_loss_header(v, f);
	return cst_afdo_write_llvm_sample(v->afdo, f, v->o.dso);
}
