/* Source lines and inline chains through libdwfl: one offline Dwfl per binary, a
 * module-wide line table sorted once, and scopes for inlined functions. */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

#include <dwarf.h>
#include <elfutils/libdwelf.h>

struct row_pos {
	struct sym_row r;
	size_t i; /* position in the line tables: qsort is not stable */
};

static int cmp_row(const void *a, const void *b)
{
	const struct row_pos *x = a, *y = b;

	if (x->r.addr != y->r.addr)
		return x->r.addr < y->r.addr ? -1 : 1;
	return x->i < y->i ? -1 : x->i > y->i;
}

/* Build one sorted line table for the module. Rows at the same address keep
 * the last one, which is what addr2line reports. */
static void load_rows(struct cst_symbolizer *sym, struct dso *dso)
{
	Dwarf_Die *cu = NULL;
	Dwarf_Addr cubias;
	struct sym_row *rows = NULL;
	size_t n = 0, cap = 0;

	while ((cu = dwfl_module_nextcu(dso->mod, cu, &cubias))) {
		Dwarf_Lines *lines;
		size_t nl;

		if (dwarf_getsrclines(cu, &lines, &nl) != 0)
			continue;
		for (size_t i = 0; i < nl; i++) {
			Dwarf_Line *l = dwarf_onesrcline(lines, i);
			Dwarf_Addr a;
			bool end = false;
			int line = 0;
			unsigned disc = 0;

			if (!l || dwarf_lineaddr(l, &a) != 0)
				continue;
			dwarf_lineendsequence(l, &end);
			dwarf_lineno(l, &line);
			dwarf_linediscriminator(l, &disc);
			if (CST_GROW(rows, cap, n + 1) < 0) {
				free(rows);
				cst_logf(&sym->log, cst_log_error, "%s: out of memory reading lines",
					 dso->path);
				return;
			}
			rows[n].addr = a + cubias - dso->bias;
			rows[n].file = end ? NULL : dwarf_linesrc(l, NULL, NULL);
			rows[n].line = end || line < 0 ? 0 : (uint32_t)line;
			rows[n].discriminator = end ? 0 : disc;
			n++;
		}
	}
	if (n) {
		struct row_pos *t = malloc(n * sizeof(*t));
		size_t w = 0;

		if (!t) {
			free(rows);
			return;
		}
		for (size_t i = 0; i < n; i++)
			t[i] = (struct row_pos){rows[i], i};
		qsort(t, n, sizeof(*t), cmp_row);
		/* keep the last row of each address, except that an end of sequence
		 * never hides a real row starting at the same address */
		for (size_t i = 0; i < n; i++) {
			if (w && rows[w - 1].addr == t[i].r.addr) {
				if (t[i].r.line || !rows[w - 1].line)
					rows[w - 1] = t[i].r;
				continue;
			}
			rows[w++] = t[i].r;
		}
		n = w;
		free(t);
	}
	dso->rows = rows;
	dso->nrows = (uint32_t)n;
}

bool sym_dso_load_dwarf(struct cst_symbolizer *sym, struct dso *dso)
{
	Dwarf *dw;
	const char *debugfile = NULL;

	if (dso->dwarf_done)
		return dso->mod != NULL;
	dso->dwarf_done = true;
	if (dso->kind != dso_elf)
		return false;
	dso->dwfl = dwfl_begin(&sym_main(sym)->callbacks);
	if (!dso->dwfl)
		return false;
	dwfl_report_begin(dso->dwfl);
	dso->mod = dwfl_report_offline(dso->dwfl, dso->short_name, dso->file, -1);
	dwfl_report_end(dso->dwfl, NULL, NULL);
	if (!dso->mod || !dwfl_module_getelf(dso->mod, &dso->bias)) {
		cst_logf(&sym->log, cst_log_warning, "%s: libdwfl cannot read it: %s", dso->file,
			 dwfl_errmsg(-1));
		dso->mod = NULL;
		return false;
	}
	if (sym->opts.no_dwarf)
		return true;
	dw = dwfl_module_getdwarf(dso->mod, &(Dwarf_Addr){0});
	dwfl_module_info(dso->mod, NULL, NULL, NULL, NULL, NULL, NULL, &debugfile);
	if (debugfile && strcmp(debugfile, dso->file))
		dso->debug_file = strdup(debugfile);
	if (!dw) {
		GElf_Word crc;
		const char *link = dwelf_elf_gnu_debuglink(dso->elf, &crc);
		char id[129] = "";

		for (uint32_t i = 0; i < dso->build_id_size && i < 64; i++)
			sprintf(id + 2 * i, "%02x", dso->build_id[i]);
		cst_logf(&sym->log, cst_log_warning,
			 "%s: no DWARF (looked for build-id %s in .build-id/ of %s%s%s); "
			 "source lines unavailable",
			 dso->file, *id ? id : "(none)", sym->debuginfo_path,
			 link ? ", .gnu_debuglink " : "", link ? link : "");
		return true;
	}
	dso->has_dwarf = true;
	load_rows(sym, dso);
	return true;
}

const struct sym_row *sym_dso_find_row(const struct dso *dso, uint64_t vaddr)
{
	uint32_t lo = CST_PARTITION(i, 0, dso->nrows, dso->rows[i].addr <= vaddr);

	if (!lo || !dso->rows[lo - 1].line || lo == dso->nrows)
		return NULL; /* before, between sequences, or after the table */
	return &dso->rows[lo - 1];
}

const struct sym_row *sym_dso_row_at(const struct dso *dso, uint64_t vaddr)
{
	uint32_t i = vaddr == UINT64_MAX ? dso->nrows : sym_dso_row_index(dso, vaddr + 1);

	/* an end of sequence (no file) closes the code before it: no row here */
	return i && i < dso->nrows && dso->rows[i - 1].file ? &dso->rows[i - 1] : NULL;
}

uint32_t sym_dso_row_index(const struct dso *dso, uint64_t vaddr)
{
	return CST_PARTITION(i, 0, dso->nrows, dso->rows[i].addr < vaddr);
}

void sym_func_load_slots(struct dso *dso, struct sym_func *f)
{
	const struct sym_row *r;
	size_t cap = 0;

	if (f->slots_done)
		return;
	f->slots_done = true;
	if (!dso->nrows)
		return;
	r = sym_dso_find_row(dso, f->pub.addr);
	if (!r) {
		/* the function may start before its first row: begin at the next one */
		uint32_t lo = sym_dso_row_index(dso, f->pub.addr);

		if (lo == dso->nrows)
			return;
		r = &dso->rows[lo];
	}
	for (; r < dso->rows + dso->nrows && r->addr < f->end; r++) {
		bool seen = false;

		if (!r->line || !r->file)
			continue;
		for (uint32_t i = 0; i < f->pub.nlines && !seen; i++)
			seen = f->slots[i].line == (int)r->line && !strcmp(f->slots[i].file, r->file);
		if (seen)
			continue;
		if (CST_GROW(f->slots, cap, (size_t)f->pub.nlines + 1) < 0)
			return;
		f->slots[f->pub.nlines++] = (struct sym_line_slot){r->file, (int)r->line};
	}
}

uint32_t sym_func_slot(const struct sym_func *f, const struct sym_row *row)
{
	for (uint32_t i = 0; i < f->pub.nlines; i++)
		if (f->slots[i].line == (int)row->line &&
		    (f->slots[i].file == row->file || !strcmp(f->slots[i].file, row->file)))
			return i;
	return UINT32_MAX;
}

const char *sym_die_name(Dwarf_Die *die)
{
	Dwarf_Attribute attr;
	const char *name;

	/* prefer the linkage name, as symbols have it; fall back to the plain one */
	name = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_linkage_name, &attr));
	if (!name)
		name = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &attr));
	if (!name)
		name = dwarf_diename(die);
	if (!name) {
		Dwarf_Die origin;

		if (dwarf_attr_integrate(die, DW_AT_abstract_origin, &attr) &&
		    dwarf_formref_die(&attr, &origin))
			name = dwarf_diename(&origin);
	}
	return name;
}

static int cmp_cu_range(const void *a, const void *b)
{
	const struct sym_cu_range *x = a, *y = b;

	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* Every compile unit's ranges, sorted: libdw finds a unit by .debug_aranges
 * only, which clang does not write. */
static void load_cu_ranges(struct dso *dso)
{
	Dwarf_Die *cu = NULL;
	Dwarf_Addr cubias;
	size_t cap = 0;

	dso->cu_ranges_done = true;
	while ((cu = dwfl_module_nextcu(dso->mod, cu, &cubias))) {
		Dwarf_Addr base, lo, hi;
		ptrdiff_t off = 0;

		while ((off = dwarf_ranges(cu, off, &base, &lo, &hi)) > 0) {
			if (hi <= lo)
				continue;
			if (CST_GROW(dso->cu_ranges, cap, (size_t)dso->ncu_ranges + 1) < 0)
				return;
			dso->cu_ranges[dso->ncu_ranges++] =
				(struct sym_cu_range){lo + cubias, hi + cubias, *cu, cubias};
		}
	}
	qsort(dso->cu_ranges, dso->ncu_ranges, sizeof(*dso->cu_ranges), cmp_cu_range);
}

/* The compile unit holding module address @a, by its own ranges. */
static Dwarf_Die *cu_by_ranges(struct dso *dso, uint64_t a, Dwarf_Addr *cubias)
{
	uint32_t lo;

	if (!dso->cu_ranges_done)
		load_cu_ranges(dso);
	lo = CST_PARTITION(i, 0, dso->ncu_ranges, dso->cu_ranges[i].lo <= a);
	/* ranges of units may overlap: look back a little past ones ending early */
	for (uint32_t i = lo; i-- && lo - i <= 64;)
		if (a < dso->cu_ranges[i].hi) {
			*cubias = dso->cu_ranges[i].bias;
			return &dso->cu_ranges[i].cu;
		}
	return NULL;
}

Dwarf_Die *sym_dso_cu_at(struct dso *dso, uint64_t vaddr, Dwarf_Addr *cubias)
{
	Dwarf_Die *cu = dwfl_module_addrdie(dso->mod, vaddr + dso->bias, cubias);

	return cu ? cu : cu_by_ranges(dso, vaddr + dso->bias, cubias);
}

/* Scopes at @vaddr: returns the count and sets *scopes (caller frees). */
static int scopes_at(struct dso *dso, uint64_t vaddr, Dwarf_Die **scopes)
{
	Dwarf_Addr cubias;
	Dwarf_Die *cu = sym_dso_cu_at(dso, vaddr, &cubias);

	if (!cu)
		return 0;
	return dwarf_getscopes(cu, vaddr + dso->bias - cubias, scopes);
}

const char *sym_dso_inlined_at_walk(struct dso *dso, uint64_t vaddr)
{
	Dwarf_Die *scopes = NULL;
	const char *name = NULL;
	int n;

	if (!dso->has_dwarf)
		return NULL;
	n = scopes_at(dso, vaddr, &scopes);
	for (int i = 0; i < n; i++) {
		int tag = dwarf_tag(&scopes[i]);

		if (tag == DW_TAG_inlined_subroutine) {
			name = sym_die_name(&scopes[i]);
			break;
		}
		if (tag == DW_TAG_subprogram)
			break;
	}
	free(scopes);
	return name;
}

/* File name of a DW_AT_call_file index in the CU of @die. */
static const char *call_file(Dwarf_Die *die)
{
	Dwarf_Attribute attr;
	Dwarf_Word idx;
	Dwarf_Files *files;
	size_t nfiles;
	Dwarf_Die cu;

	if (dwarf_formudata(dwarf_attr(die, DW_AT_call_file, &attr), &idx) != 0)
		return NULL;
	if (!dwarf_diecu(die, &cu, NULL, NULL) || dwarf_getsrcfiles(&cu, &files, &nfiles) != 0)
		return NULL;
	return dwarf_filesrc(files, idx, NULL, NULL);
}

int sym_dso_inline_dies(struct dso *dso, uint64_t vaddr, Dwarf_Die *dies, int max)
{
	Dwarf_Die *scopes = NULL;
	int n = dso->has_dwarf ? scopes_at(dso, vaddr, &scopes) : 0, k = 0;

	for (int i = 0; i < n && k < max; i++) {
		int tag = dwarf_tag(&scopes[i]);
		Dwarf_Die *outer = NULL;
		int m;

		if (tag != DW_TAG_inlined_subroutine && tag != DW_TAG_subprogram)
			continue;
		dies[k++] = scopes[i];
		if (tag == DW_TAG_subprogram)
			break;
		/* getscopes lists the inline's abstract scopes above it, not its
		 * caller's: restart from the concrete DIE's own parents */
		m = dwarf_getscopes_die(&scopes[i], &outer);
		free(scopes);
		scopes = outer;
		n = m > 0 ? m : 0;
		i = 0; /* outer[0] is the inline itself */
	}
	free(scopes);
	return k;
}

int sym_dso_inline_chain(struct cst_symbolizer *sym, struct dso *dso, uint64_t vaddr,
		     const struct sym_func *f, struct cst_sym_frame *frames, int max)
{
	const struct sym_row *row = dso->has_dwarf ? sym_dso_find_row(dso, vaddr) : NULL;
	const char *file = row ? row->file : NULL;
	int line = row ? (int)row->line : 0;
	Dwarf_Die dies[32];
	int k = sym_dso_inline_dies(dso, vaddr, dies, max < 32 ? max : 32);

	for (int i = 0; i < k; i++) {
		Dwarf_Attribute attr;
		Dwarf_Word cl = 0;

		frames[i].func = sym_die_name(&dies[i]);
		frames[i].file = file;
		frames[i].line = line;
		/* the caller's position is where this inline was called */
		file = call_file(&dies[i]);
		line = dwarf_formudata(dwarf_attr(&dies[i], DW_AT_call_line, &attr), &cl) == 0
			       ? (int)cl
			       : 0;
	}
	if (!k && max > 0 && (f || file)) {
		frames[0].func = f ? f->pub.name : NULL;
		frames[0].file = file;
		frames[0].line = line;
		k = 1;
	} else if (k && f) {
		/* the outermost frame is the symbol the binary exports */
		frames[k - 1].func = f->pub.name;
	}
	(void)sym;
	return k;
}
