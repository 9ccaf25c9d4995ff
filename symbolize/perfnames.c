/* The names Linux perf 6.1 gives code, for perf script's lines: its own table
 * of an ELF's symbols (tools/perf/util/symbol-elf.c, symbol.c), which differs
 * from cstrace's in places: functions, IFUNCs, objects and labels of every
 * allocated section as they come, an ARM function's Thumb bit cleared but an
 * IFUNC's kept; every unsized symbol reaching the next symbol in any section
 * (symbols__fixup_end) before aliases are chosen (symbols__fixup_duplicate), so
 * an unsized alias listed last can win; PLT stubs named "<sym>@plt" at perf's
 * fixed entry sizes and no symbol for the PLT header. Where symbols overlap (a
 * label inside a function, a stub inside the _init that reaches over the PLT),
 * a lookup takes the first it meets going down perf's red-black tree, so the
 * tree is built as perf builds it, node by node (found by experiment: the
 * same names as perf 6.1 on every synthesized trace of tests/symbolize). */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

struct psym {
	struct sym_func f;
	uint32_t order;            /* index in the symbol table: perf's insertion order */
	bool weak, global;
	/* perf's red-black tree (Linux's lib/rbtree.c): which of two overlapping
	 * symbols a lookup meets first is the one nearer the root */
	int32_t left, right, parent;
	bool red, gone;
};

struct pvec {
	struct psym *s;
	uint32_t n;
	size_t cap;
	int32_t root;
};

static int add(struct pvec *v, const char *name, uint64_t start, uint64_t size, uint32_t order)
{
	struct psym *p;

	if (CST_GROW(v->s, v->cap, (size_t)v->n + 1) < 0)
		return -1;
	p = &v->s[v->n];
	memset(p, 0, sizeof(*p));
	p->f.pub.name = strdup(name);
	if (!p->f.pub.name)
		return -1;
	p->f.pub.addr = start;
	p->f.end = start + size;
	p->order = order;
	p->left = p->right = p->parent = -1;
	v->n++;
	return 0;
}

/* ---- Linux's rbtree: insertion and erasure with its rotations ---- */

#define N(i) (v->s[i])

static void set_child(struct pvec *v, int32_t parent, int32_t old, int32_t new)
{
	if (parent < 0)
		v->root = new;
	else if (N(parent).left == old)
		N(parent).left = new;
	else
		N(parent).right = new;
	if (new >= 0)
		N(new).parent = parent;
}

static void rotate_left(struct pvec *v, int32_t x)
{
	int32_t y = N(x).right;

	N(x).right = N(y).left;
	if (N(y).left >= 0)
		N(N(y).left).parent = x;
	set_child(v, N(x).parent, x, y);
	N(y).left = x;
	N(x).parent = y;
}

static void rotate_right(struct pvec *v, int32_t x)
{
	int32_t y = N(x).left;

	N(x).left = N(y).right;
	if (N(y).right >= 0)
		N(N(y).right).parent = x;
	set_child(v, N(x).parent, x, y);
	N(y).right = x;
	N(x).parent = y;
}

static bool red(const struct pvec *v, int32_t i)
{
	return i >= 0 && v->s[i].red;
}

/* __symbols__insert: an equal start goes right; then __rb_insert */
static void tree_insert(struct pvec *v, int32_t z)
{
	int32_t *p = &v->root, parent = -1;

	while (*p >= 0) {
		parent = *p;
		p = N(z).f.pub.addr < N(parent).f.pub.addr ? &N(parent).left : &N(parent).right;
	}
	*p = z;
	N(z).parent = parent;
	N(z).red = true;
	while (red(v, N(z).parent)) {
		int32_t pa = N(z).parent, g = N(pa).parent;
		bool left = N(g).left == pa;
		int32_t u = left ? N(g).right : N(g).left;

		if (red(v, u)) {
			N(pa).red = N(u).red = false;
			N(g).red = true;
			z = g;
			continue;
		}
		if (z == (left ? N(pa).right : N(pa).left)) {
			z = pa;
			if (left)
				rotate_left(v, z);
			else
				rotate_right(v, z);
			pa = N(z).parent;
		}
		N(pa).red = false;
		N(g).red = true;
		if (left)
			rotate_right(v, g);
		else
			rotate_left(v, g);
	}
	N(v->root).red = false;
}

static int32_t tree_min(const struct pvec *v, int32_t i)
{
	while (i >= 0 && v->s[i].left >= 0)
		i = v->s[i].left;
	return i;
}

static int32_t tree_next(const struct pvec *v, int32_t i)
{
	if (v->s[i].right >= 0)
		return tree_min(v, v->s[i].right);
	while (v->s[i].parent >= 0 && v->s[v->s[i].parent].right == i)
		i = v->s[i].parent;
	return v->s[i].parent;
}

/* rb_erase: a node with two children is replaced by its successor, which takes
 * its colour; the colour fix-up runs where a black node left (CLRS's cases) */
static void tree_erase(struct pvec *v, int32_t z)
{
	int32_t x, xp, y = z;
	bool y_red = N(y).red;

	if (N(z).left < 0) {
		x = N(z).right;
		xp = N(z).parent;
		set_child(v, N(z).parent, z, x);
	} else if (N(z).right < 0) {
		x = N(z).left;
		xp = N(z).parent;
		set_child(v, N(z).parent, z, x);
	} else {
		y = tree_min(v, N(z).right);
		y_red = N(y).red;
		x = N(y).right;
		if (N(y).parent == z) {
			xp = y;
		} else {
			xp = N(y).parent;
			set_child(v, N(y).parent, y, x);
			N(y).right = N(z).right;
			N(N(y).right).parent = y;
		}
		set_child(v, N(z).parent, z, y);
		N(y).left = N(z).left;
		N(N(y).left).parent = y;
		N(y).red = N(z).red;
	}
	N(z).gone = true;
	if (y_red)
		return;
	while (x != v->root && !red(v, x)) {
		bool left = N(xp).left == x;
		int32_t w = left ? N(xp).right : N(xp).left;

		if (red(v, w)) {
			N(w).red = false;
			N(xp).red = true;
			if (left)
				rotate_left(v, xp);
			else
				rotate_right(v, xp);
			w = left ? N(xp).right : N(xp).left;
		}
		if (!red(v, N(w).left) && !red(v, N(w).right)) {
			N(w).red = true;
			x = xp;
			xp = N(x).parent;
			continue;
		}
		if (left && !red(v, N(w).right)) {
			N(N(w).left).red = false;
			N(w).red = true;
			rotate_right(v, w);
			w = N(xp).right;
		} else if (!left && !red(v, N(w).left)) {
			N(N(w).right).red = false;
			N(w).red = true;
			rotate_left(v, w);
			w = N(xp).left;
		}
		N(w).red = N(xp).red;
		N(xp).red = false;
		if (left) {
			N(N(w).right).red = false;
			rotate_left(v, xp);
		} else {
			N(N(w).left).red = false;
			rotate_right(v, xp);
		}
		x = v->root;
		break;
	}
	if (x >= 0)
		N(x).red = false;
}

static size_t underscores(const char *s)
{
	size_t n = 0;

	while (s[n] == '_')
		n++;
	return n;
}

/* choose_best_symbol: true when @a wins over @b */
static bool better(const struct psym *a, const struct psym *b)
{
	uint64_t la = a->f.end - a->f.pub.addr, lb = b->f.end - b->f.pub.addr;
	size_t ua, ub, na, nb;

	if (!lb && la)
		return true;
	if (!la && lb)
		return false;
	if (a->weak != b->weak)
		return b->weak;
	if (a->global != b->global)
		return a->global;
	ua = underscores(a->f.pub.name);
	ub = underscores(b->f.pub.name);
	if (ua != ub)
		return ua < ub;
	na = strlen(a->f.pub.name);
	nb = strlen(b->f.pub.name);
	if (na != nb)
		return na > nb;
	return true;
}

static bool mapping_symbol(const char *n)
{
	return n[0] == '$' && n[1] && strchr("adtx", n[1]) && (n[2] == '\0' || n[2] == '.');
}

static void load_elf_syms(struct dso *dso, struct pvec *v)
{
	int n = dwfl_module_getsymtab(dso->mod);

	for (int i = 1; i < n; i++) {
		GElf_Sym s;
		GElf_Addr addr;
		GElf_Word shndx;
		GElf_Shdr sh;
		Elf *elf;
		Elf_Scn *scn;
		Dwarf_Addr bias;
		const char *name = dwfl_module_getsym_info(dso->mod, i, &s, &addr, &shndx, &elf,
							   &bias);
		int type = GELF_ST_TYPE(s.st_info);
		bool label = type == STT_NOTYPE;

		(void)bias;
		if (!name || !*name || shndx == SHN_UNDEF || shndx == SHN_ABS || shndx == SHN_COMMON)
			continue;
		/* functions and objects (elf_sym__filter), labels */
		if (type != STT_FUNC && type != STT_GNU_IFUNC && type != STT_OBJECT && !label)
			continue;
		if ((dso->machine == EM_ARM || dso->machine == EM_AARCH64) && mapping_symbol(name))
			continue;
		scn = elf_getscn(elf, shndx);
		if (!scn || !gelf_getshdr(scn, &sh) || !(sh.sh_flags & SHF_ALLOC))
			continue;
		addr -= dso->bias;
		/* the Thumb bit: perf takes it off functions only */
		if (dso->machine == EM_ARM && type == STT_FUNC)
			addr &= ~1ull;
		if (add(v, name, addr, s.st_size, (uint32_t)i) < 0)
			return;
		v->s[v->n - 1].weak = GELF_ST_BIND(s.st_info) == STB_WEAK;
		v->s[v->n - 1].global = GELF_ST_BIND(s.st_info) == STB_GLOBAL;
		tree_insert(v, (int32_t)v->n - 1);
	}
}

/* symbols__fixup_end, then symbols__fixup_duplicate, in the tree's order */
static void fixup(struct pvec *v)
{
	int32_t i, next;

	for (i = tree_min(v, v->root); i >= 0; i = next) {
		struct psym *p = &N(i);

		next = tree_next(v, i);
		if (p->f.end == p->f.pub.addr)
			p->f.end = next >= 0 ? N(next).f.pub.addr
					     : ((p->f.pub.addr + 4095) & ~4095ull) + 4096;
	}
	for (i = tree_min(v, v->root); i >= 0;) {
		next = tree_next(v, i);
		if (next < 0)
			break;
		if (N(i).f.pub.addr != N(next).f.pub.addr) {
			i = next;
			continue;
		}
		if (better(&N(i), &N(next))) {
			tree_erase(v, next);
		} else {
			tree_erase(v, i);
			i = next;
		}
	}
}

/* dso__synthesize_plt_symbols of perf 6.1: every relocation of .rel(a).plt a
 * "<name>@plt" at the header size plus its index times the entry size (ARM
 * 20 + 12n, AArch64 32 + 16n), whatever the section's real layout. */
static void add_plt(struct dso *dso, struct pvec *v)
{
	Elf_Scn *scn = NULL, *plt = NULL, *rel = NULL, *symscn;
	GElf_Shdr plt_sh = {0}, rel_sh = {0}, sh, sym_sh;
	Elf_Data *data, *symdata;
	size_t shstrndx, nrel;
	uint64_t hdr, ent;

	if (!dso->elf || elf_getshdrstrndx(dso->elf, &shstrndx) < 0)
		return;
	while ((scn = elf_nextscn(dso->elf, scn))) {
		const char *name = gelf_getshdr(scn, &sh) ? elf_strptr(dso->elf, shstrndx, sh.sh_name)
							  : NULL;

		if (name && !strcmp(name, ".plt")) {
			plt = scn;
			plt_sh = sh;
		} else if (name && (!strcmp(name, ".rela.plt") || !strcmp(name, ".rel.plt")) &&
			   !rel) {
			rel = scn;
			rel_sh = sh;
		}
	}
	if (!plt || !rel || !rel_sh.sh_entsize ||
	    (rel_sh.sh_type != SHT_RELA && rel_sh.sh_type != SHT_REL))
		return;
	if (dso->machine == EM_AARCH64) {
		hdr = 32;
		ent = 16;
	} else if (dso->machine == EM_ARM) {
		hdr = 20;
		ent = 12;
	} else {
		return;
	}
	nrel = rel_sh.sh_size / rel_sh.sh_entsize;
	symscn = elf_getscn(dso->elf, rel_sh.sh_link);
	if (!symscn || !gelf_getshdr(symscn, &sym_sh))
		return;
	data = elf_getdata(rel, NULL);
	symdata = elf_getdata(symscn, NULL);
	if (!data || !symdata)
		return;
	for (size_t i = 0; i < nrel; i++) {
		const char *name;
		char buf[512];

		if (sym_plt_reloc_name(dso, data, rel_sh.sh_type, symdata, sym_sh.sh_link, i,
				       &name) < 0)
			return;
		snprintf(buf, sizeof(buf), "%s@plt", name ? name : "");
		if (add(v, buf, plt_sh.sh_addr + hdr + i * ent, ent, UINT32_MAX) < 0)
			return;
		v->s[v->n - 1].global = true;
		tree_insert(v, (int32_t)v->n - 1);
	}
}

static void build(struct cst_symbolizer *sym, struct dso *dso)
{
	struct pvec v = {.root = -1};

	dso->perf_syms_done = true;
	sym_dso_load_symbols(sym, dso); /* opens the module */
	if (dso->kind != dso_elf || !dso->mod)
		return;
	load_elf_syms(dso, &v);
	fixup(&v);
	add_plt(dso, &v);
	for (uint32_t i = 0; i < v.n; i++) {
		v.s[i].f.pub.size = v.s[i].f.end - v.s[i].f.pub.addr;
		v.s[i].f.pub.dso = dso->short_name;
		v.s[i].f.pub.id = sym_main(sym)->next_func_id++;
	}
	dso->perf_tree = v.s;
	dso->nperf_syms = v.n;
	dso->perf_root = v.root;
}

/* symbols__find: the first node on the search path that holds @vaddr */
const struct sym_func *sym_dso_find_perf_func(struct cst_symbolizer *sym, struct dso *dso,
					      uint64_t vaddr)
{
	const struct psym *t;
	int32_t i;

	if (!dso->perf_syms_done) {
		build(sym, dso);
		__atomic_store_n(&dso->perf_syms_built, true, __ATOMIC_RELEASE);
	}
	t = dso->perf_tree;
	for (i = dso->perf_root; i >= 0;) {
		const struct psym *p = &t[i];

		if (vaddr < p->f.pub.addr)
			i = p->left;
		else if (vaddr > p->f.end || (vaddr == p->f.end && vaddr != p->f.pub.addr))
			i = p->right;
		else
			return &p->f;
	}
	return NULL;
}

void sym_dso_free_perf_syms(struct dso *dso)
{
	struct psym *t = dso->perf_tree;

	for (uint32_t i = 0; i < dso->nperf_syms; i++)
		free((char *)t[i].f.pub.name);
	free(t);
	dso->perf_tree = NULL;
	dso->nperf_syms = 0;
}
