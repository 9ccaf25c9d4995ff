/* Function symbols of a binary: .symtab or .dynsym (through libdwfl, which also
 * finds a stripped binary's debug file), PLT stubs, Arm mapping symbols, kallsyms. */
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct vec {
	struct sym_func *f;
	uint32_t n;
	size_t cap;
};

/* Alias ranks, best first as perf chooses: non-weak, global, a function. */
enum { rank_func = 1, rank_global = 2, rank_strong = 4 };

static int vec_add(struct vec *v, const char *name, uint64_t addr, uint64_t size, int rank)
{
	if (CST_GROW(v->f, v->cap, (size_t)v->n + 1) < 0)
		return -1;
	memset(&v->f[v->n], 0, sizeof(v->f[0]));
	v->f[v->n].pub.name = strdup(name);
	if (!v->f[v->n].pub.name)
		return -1;
	v->f[v->n].pub.addr = addr;
	v->f[v->n].pub.size = size;
	v->f[v->n].rank = (uint8_t)rank;
	v->n++;
	return 0;
}

static size_t underscores(const char *s)
{
	size_t n = 0;

	while (s[n] == '_')
		n++;
	return n;
}

/* By address; at one address the best name first, by perf's rules (sized, then
 * rank, then fewer leading underscores, then the longer name): malloc, not
 * __libc_malloc. */
static int cmp_func(const void *a, const void *b)
{
	const struct sym_func *x = a, *y = b;
	size_t ux, uy, lx, ly;

	if (x->pub.addr != y->pub.addr)
		return x->pub.addr < y->pub.addr ? -1 : 1;
	if ((x->pub.size != 0) != (y->pub.size != 0))
		return x->pub.size ? -1 : 1;
	if (x->rank != y->rank)
		return x->rank > y->rank ? -1 : 1;
	ux = underscores(x->pub.name);
	uy = underscores(y->pub.name);
	if (ux != uy)
		return ux < uy ? -1 : 1;
	lx = strlen(x->pub.name);
	ly = strlen(y->pub.name);
	if (lx != ly)
		return lx > ly ? -1 : 1;
	return strcmp(x->pub.name, y->pub.name);
}

static int cmp_map(const void *a, const void *b)
{
	const struct sym_mapsym *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static bool is_mapping_symbol(const char *name)
{
	return name[0] == '$' && strchr("atdx", name[1]) && (name[2] == 0 || name[2] == '.');
}

/* Section end of @shndx in @elf, or 0. */
static uint64_t section_end(Elf *elf, GElf_Word shndx)
{
	GElf_Shdr sh;
	Elf_Scn *scn = elf_getscn(elf, shndx);

	if (!scn || !gelf_getshdr(scn, &sh))
		return 0;
	return sh.sh_addr + sh.sh_size;
}

int sym_plt_reloc_name(const struct dso *dso, Elf_Data *rel, GElf_Word rel_type,
		       Elf_Data *symdata, GElf_Word strndx, size_t i, const char **name)
{
	uint64_t info;
	GElf_Sym s;

	*name = NULL;
	if (rel_type == SHT_RELA) {
		GElf_Rela r;

		if (!gelf_getrela(rel, (int)i, &r))
			return -1;
		info = r.r_info;
	} else {
		GElf_Rel r;

		if (!gelf_getrel(rel, (int)i, &r))
			return -1;
		info = r.r_info;
	}
	/* gelf gives r_info in the 64-bit encoding for both classes */
	if (!gelf_getsym(symdata, (int)GELF_R_SYM(info), &s))
		return 0;
	*name = elf_strptr(dso->elf, strndx, s.st_name);
	return *name != NULL;
}

/* Name PLT entries "sym@plt" as objdump does: entries follow the PLT header in
 * the order of the PLT relocations. Sizes are the ABIs' standard stub sizes. */
static void add_plt(struct dso *dso, struct vec *v)
{
	Elf_Scn *scn = NULL, *plt = NULL, *rel = NULL;
	GElf_Shdr plt_sh = {0}, rel_sh = {0}, sh;
	size_t shstrndx, nrel;
	uint64_t hdr, ent;
	Elf_Data *data, *symdata, *strdata;
	Elf_Scn *symscn;
	GElf_Shdr sym_sh;

	if (!dso->elf || elf_getshdrstrndx(dso->elf, &shstrndx) < 0)
		return;
	while ((scn = elf_nextscn(dso->elf, scn))) {
		const char *name;

		if (!gelf_getshdr(scn, &sh))
			continue;
		name = elf_strptr(dso->elf, shstrndx, sh.sh_name);
		if (!name)
			continue;
		if (!strcmp(name, ".plt") && sh.sh_type == SHT_PROGBITS) {
			plt = scn;
			plt_sh = sh;
		} else if (!strcmp(name, ".rela.plt") || !strcmp(name, ".rel.plt")) {
			rel = scn;
			rel_sh = sh;
		}
	}
	if (!plt || !rel || !rel_sh.sh_entsize)
		return;
	nrel = rel_sh.sh_size / rel_sh.sh_entsize;
	if (dso->machine == EM_AARCH64) {
		hdr = 32;
		ent = 16;
	} else if (dso->machine == EM_ARM) {
		hdr = 20;
		ent = (plt_sh.sh_size - hdr) == nrel * 16 ? 16 : 12;
	} else {
		return;
	}
	if (plt_sh.sh_size < hdr || (plt_sh.sh_size - hdr) != nrel * ent)
		return; /* a layout we do not know: better no names than wrong ones */
	symscn = elf_getscn(dso->elf, rel_sh.sh_link);
	if (!symscn || !gelf_getshdr(symscn, &sym_sh))
		return;
	data = elf_getdata(rel, NULL);
	symdata = elf_getdata(symscn, NULL);
	strdata = elf_getdata(elf_getscn(dso->elf, sym_sh.sh_link), NULL);
	if (!data || !symdata || !strdata)
		return;
	/* the header (lazy binding's resolver call) has no symbol: objdump's name */
	if (vec_add(v, ".plt", plt_sh.sh_addr, hdr, rank_func) < 0)
		return;
	v->f[v->n - 1].pub.binding = STB_GLOBAL;
	for (size_t i = 0; i < nrel; i++) {
		const char *name;
		char buf[512];
		int got = sym_plt_reloc_name(dso, data, rel_sh.sh_type, symdata, sym_sh.sh_link, i,
					     &name);

		if (got < 0)
			return;
		if (!got || !*name)
			continue;
		snprintf(buf, sizeof(buf), "%s@plt", name);
		if (vec_add(v, buf, plt_sh.sh_addr + hdr + i * ent, ent, rank_func) < 0)
			return;
		v->f[v->n - 1].pub.binding = STB_GLOBAL; /* as perf makes its @plt symbols */
	}
}

void sym_dso_load_symbols(struct cst_symbolizer *sym, struct dso *dso)
{
	struct vec v = {0};
	struct sym_mapsym *maps = NULL;
	uint32_t nmaps = 0;
	size_t capmaps = 0;
	int n;

	if (dso->syms_done)
		return;
	dso->syms_done = true;
	if (dso->kind != dso_elf || !sym_dso_load_dwarf(sym, dso) || !dso->mod)
		return;
	n = dwfl_module_getsymtab(dso->mod);
	for (int i = 1; i < n; i++) {
		GElf_Sym s;
		GElf_Addr addr;
		GElf_Word shndx;
		Elf *elf;
		Dwarf_Addr bias;
		const char *name = dwfl_module_getsym_info(dso->mod, i, &s, &addr, &shndx, &elf,
							   &bias);

		(void)bias;
		int type, rank;
		uint64_t size;

		if (!name || !*name || shndx == SHN_UNDEF || shndx == SHN_ABS)
			continue;
		addr -= dso->bias;
		type = GELF_ST_TYPE(s.st_info);
		if (dso->machine == EM_ARM && (type == STT_FUNC || type == STT_GNU_IFUNC))
			addr &= ~1ull; /* the Thumb bit is not part of the address */
		if (is_mapping_symbol(name)) {
			if (CST_GROW(maps, capmaps, (size_t)nmaps + 1) < 0)
				goto fail;
			maps[nmaps++] = (struct sym_mapsym){addr, name[1]};
			continue;
		}
		if (type != STT_FUNC && type != STT_GNU_IFUNC && type != STT_NOTYPE)
			continue;
		if (type == STT_NOTYPE) {
			/* labels in code count as functions, as perf counts them (assembly
			 * has no other symbols); never data markers */
			GElf_Shdr sh;
			Elf_Scn *scn = elf_getscn(elf, shndx);

			if (!scn || !gelf_getshdr(scn, &sh) || !(sh.sh_flags & SHF_EXECINSTR))
				continue;
		}
		rank = (GELF_ST_BIND(s.st_info) != STB_WEAK ? rank_strong : 0) |
		       (GELF_ST_BIND(s.st_info) == STB_GLOBAL ? rank_global : 0) |
		       (type != STT_NOTYPE ? rank_func : 0);
		size = s.st_size;
		if (vec_add(&v, name, addr, size, rank) < 0)
			goto fail;
		v.f[v.n - 1].pub.binding = (uint8_t)GELF_ST_BIND(s.st_info);
		v.f[v.n - 1].label = type == STT_NOTYPE && GELF_ST_BIND(s.st_info) == STB_LOCAL;
		/* unsized symbols end at the latest with their section (link address) */
		if (!size)
			v.f[v.n - 1].end = section_end(elf, shndx);
	}
	add_plt(dso, &v);
	if (v.n) {
		uint32_t w = 0;

		qsort(v.f, v.n, sizeof(v.f[0]), cmp_func);
		uint64_t covered = 0; /* end of the sized symbols so far */

		for (uint32_t r = 0; r < v.n; r++) {
			bool alias = w && v.f[w - 1].pub.addr == v.f[r].pub.addr;
			/* a local label inside a sized function is part of it, not a
			 * function of its own (glibc's __wrap_main inside _start) */
			bool inner = v.f[r].label && v.f[r].pub.addr < covered;

			if (alias || inner) {
				free((char *)v.f[r].pub.name); /* keep the best name */
				continue;
			}
			if (v.f[r].pub.size && v.f[r].pub.addr + v.f[r].pub.size > covered)
				covered = v.f[r].pub.addr + v.f[r].pub.size;
			v.f[w++] = v.f[r];
		}
		v.n = w;
		for (uint32_t i = 0; i < v.n; i++) {
			struct sym_func *f = &v.f[i];
			uint64_t next = i + 1 < v.n ? v.f[i + 1].pub.addr : UINT64_MAX;

			if (!f->pub.size) {
				/* Unsized (assembly) symbols reach to the next symbol within
				 * their section, as perf and objdump treat them. */
				uint64_t end = f->end && f->end > f->pub.addr ? f->end : next;

				if (next < end)
					end = next;
				f->pub.size = end == UINT64_MAX ? 4 : end - f->pub.addr;
			}
			f->end = f->pub.addr + f->pub.size;
			f->pub.dso = dso->short_name;
			f->pub.id = sym_main(sym)->next_func_id++;
		}
	}
	if (nmaps)
		qsort(maps, nmaps, sizeof(*maps), cmp_map);
	dso->funcs = v.f;
	dso->nfuncs = v.n;
	dso->mapsyms = maps;
	dso->nmapsyms = nmaps;
	return;
fail:
	for (uint32_t i = 0; i < v.n; i++)
		free((char *)v.f[i].pub.name);
	free(v.f);
	free(maps);
	cst_logf(&sym->log, cst_log_error, "%s: out of memory reading symbols", dso->path);
}

/* Index of the first function that starts above @vaddr (nfuncs if none). */
static uint32_t first_func_above(const struct dso *dso, uint64_t vaddr)
{
	return CST_PARTITION(i, 0, dso->nfuncs, dso->funcs[i].pub.addr <= vaddr);
}

const struct sym_func *sym_dso_find_func(const struct dso *dso, uint64_t vaddr)
{
	uint32_t lo = first_func_above(dso, vaddr);

	/* an inner symbol may end before vaddr while the one before it still covers it */
	for (uint32_t i = lo; i > 0 && lo - i < 4; i--) {
		const struct sym_func *f = &dso->funcs[i - 1];

		if (vaddr < f->end)
			return f;
	}
	return NULL;
}

uint64_t sym_dso_next_func(const struct dso *dso, uint64_t vaddr)
{
	uint32_t lo = first_func_above(dso, vaddr);

	return lo < dso->nfuncs ? dso->funcs[lo].pub.addr : UINT64_MAX;
}

char sym_dso_mapping_kind(const struct dso *dso, uint64_t vaddr)
{
	uint32_t lo = CST_PARTITION(i, 0, dso->nmapsyms, dso->mapsyms[i].addr <= vaddr);

	return lo ? dso->mapsyms[lo - 1].kind : 0;
}

int sym_dso_load_kallsyms(struct cst_symbolizer *sym, struct dso *dso, const char *path,
		      uint64_t *lo, uint64_t *hi)
{
	FILE *f = cst_fopen_input(path, "r");
	struct vec v = {0};
	char line[1024];

	if (!f)
		return -cste_not_found;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long addr;
		char type, name[512];

		if (sscanf(line, "%llx %c %511s", &addr, &type, name) != 3)
			continue;
		if (!strchr("tTwW", type) || !addr)
			continue;
		if (vec_add(&v, name, addr, 0,
			    rank_func | (type == 'T' || type == 't' ? rank_strong : 0) |
				    (type == 'T' || type == 'W' ? rank_global : 0)) < 0) {
			fclose(f);
			return -cste_nomem;
		}
		v.f[v.n - 1].pub.binding = type == 'T' ? STB_GLOBAL : type == 't' ? STB_LOCAL : STB_WEAK;
	}
	fclose(f);
	if (!v.n) {
		free(v.f);
		cst_logf(&sym->log, cst_log_warning,
			 "%s: no text symbols with addresses (kptr_restrict?)", path);
		return -cste_format;
	}
	qsort(v.f, v.n, sizeof(v.f[0]), cmp_func);
	{
		uint32_t w = 0;

		for (uint32_t r = 0; r < v.n; r++) {
			if (w && v.f[w - 1].pub.addr == v.f[r].pub.addr) {
				free((char *)v.f[r].pub.name);
				continue;
			}
			v.f[w++] = v.f[r];
		}
		v.n = w;
	}
	for (uint32_t i = 0; i < v.n; i++) {
		struct sym_func *fn = &v.f[i];

		/* kallsyms has no sizes: each symbol reaches to the next one */
		fn->pub.size = i + 1 < v.n ? v.f[i + 1].pub.addr - fn->pub.addr : 4;
		fn->end = fn->pub.addr + fn->pub.size;
		fn->pub.dso = dso->short_name;
		fn->pub.id = sym_main(sym)->next_func_id++;
	}
	dso->funcs = v.f;
	dso->nfuncs = v.n;
	dso->syms_done = true;
	dso->dwarf_done = true;
	dso->kind = dso_kallsyms;
	*lo = v.f[0].pub.addr;
	*hi = v.f[v.n - 1].end;
	return 0;
}
