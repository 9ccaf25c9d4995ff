/* Line coverage from a trace: how often each source line ran, for every function
 * with debug information in the binaries that ran, as lcov's tracefile (genhtml
 * reads it) or as a per-file table.
 *
 * The counts come from the sample profile's ranges (cst_afdo): each instruction of
 * a range ran as often as the range did. A line ran as often as its most executed
 * instruction in a function (a loop's line runs once per iteration however many
 * instructions it has), summed over the functions it is in (a line inlined into
 * two functions ran in both). Lines of a function that never ran count 0, so
 * partly run functions and files show what was missed. */
#include "internal.h"
#include "views_int.h"
#include "report_view.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

struct acc {
	struct sym_addr_count *v;
	size_t n, cap;
};

struct walk {
	const struct dso *dso;
	struct acc *acc;
	int err;
};

/* Every instruction of [first, last] ran @n more times. */
static void add_range(void *ctx, uint64_t first, uint64_t last, uint64_t n)
{
	struct walk *w = ctx;

	for (uint64_t a = first; a <= last && !w->err;) {
		if (CST_GROW(w->acc->v, w->acc->cap, w->acc->n + 1) < 0) {
			w->err = -cste_nomem;
			return;
		}
		w->acc->v[w->acc->n++] = (struct sym_addr_count){a, n};
		a += sym_dso_insn_size(w->dso, a);
	}
}

static int by_addr(const void *x, const void *y)
{
	const struct sym_addr_count *a = x, *b = y;

	return a->addr < b->addr ? -1 : a->addr > b->addr;
}

size_t sym_counts_reduce(struct sym_addr_count *v, size_t n)
{
	size_t m = 0;

	if (n > 1) /* v is NULL when nothing was counted: qsort must not see it */
		qsort(v, n, sizeof(*v), by_addr);
	for (size_t i = 0; i < n; i++) {
		if (m && v[m - 1].addr == v[i].addr)
			v[m - 1].n += v[i].n;
		else
			v[m++] = v[i];
	}
	return m;
}

/* lcov's order: by file, then line */
static int by_file_line(const char *fa, int la, const char *fb, int lb)
{
	int c = strcmp(fa, fb);

	return c ? c : (la > lb) - (la < lb);
}

static int by_branch(const void *x, const void *y)
{
	const struct sym_cov_branch *a = x, *b = y;
	int c = by_file_line(a->file, a->line, b->file, b->line);

	return c ? c : (a->addr > b->addr) - (a->addr < b->addr);
}

static int by_line(const void *x, const void *y)
{
	const struct sym_cov_line *a = x, *b = y;
	int c = by_file_line(a->file, a->line, b->file, b->line);

	return c ? c : (a->func > b->func) - (a->func < b->func);
}

static int add_line(struct sym_cov *c, const char *file, int line, uint64_t n,
		    const struct sym_func *f)
{
	if (CST_GROW(c->lines, c->cap, c->nlines + 1) < 0)
		return -cste_nomem;
	c->lines[c->nlines++] = (struct sym_cov_line){file, line, n, f};
	return 0;
}

size_t sym_counts_lower_bound(const struct sym_addr_count *v, size_t n, uint64_t addr)
{
	return CST_PARTITION(i, 0, n, v[i].addr < addr);
}

uint64_t sym_counts_at(const struct sym_addr_count *v, size_t n, uint64_t addr)
{
	size_t i = sym_counts_lower_bound(v, n, addr);

	return i < n && v[i].addr == addr ? v[i].n : 0;
}

/* A line owns code in @f when one of its rows is followed by a row at a higher
 * address. A row that the next one replaces at the same address (the "{" of a
 * function whose first instruction belongs to its first statement) has no
 * instruction that could run: it is not a line to cover. */
static bool owns_code(const struct dso *dso, const struct sym_func *f,
		      const struct sym_line_slot *slot)
{
	const struct sym_row *end = dso->rows + dso->nrows;

	for (const struct sym_row *r = dso->rows + sym_dso_row_index(dso, f->pub.addr);
	     r < end && r->addr < f->end; r++)
		if (r->line == (uint32_t)slot->line && r->file &&
		    (r->file == slot->file || !strcmp(r->file, slot->file)) && r + 1 < end &&
		    r[1].addr > r->addr)
			return true;
	return false;
}

struct counts {
	const struct sym_addr_count *v;
	size_t n;
};

static uint64_t executed(void *ctx, uint64_t addr)
{
	const struct counts *c = ctx;

	return sym_counts_at(c->v, c->n, addr);
}

/* The lines of one binary: every line of its functions with debug information. */
static int dso_lines(struct cst_symbolizer *sym, struct cst_afdo *p, struct dso *dso,
		     struct sym_cov *c)
{
	struct acc acc = {0};
	struct walk w = {dso, &acc, 0};
	size_t m = 0;
	int err;

	sym_dso_load_symbols(sym, dso);
	if (!dso->has_dwarf)
		return 0;
	err = sym_afdo_ranges(p, dso->short_name, add_range, &w);
	if (err < 0 || w.err < 0) {
		free(acc.v);
		return err < 0 ? err : w.err;
	}
	m = sym_counts_reduce(acc.v, acc.n); /* one count per address */
	for (uint32_t i = 0; i < dso->nfuncs && !err; i++) {
		struct sym_func *f = &dso->funcs[i];
		const struct sym_row *entry;
		size_t first = c->nlines;

		if (!sym_afdo_keeps(p, dso->short_name, f->pub.name))
			continue; /* --dsos/--symbols left it out */
		sym_func_load_slots(dso, f);
		if (!f->pub.nlines)
			continue;
		for (uint32_t s = 0; s < f->pub.nlines && !err; s++)
			if (owns_code(dso, f, &f->slots[s]))
				err = add_line(c, f->slots[s].file, f->slots[s].line, 0, f);
		/* executed addresses of the function raise their line to their count */
		for (size_t k = sym_counts_lower_bound(acc.v, m, f->pub.addr);
		     k < m && acc.v[k].addr < f->end; k++) {
			const struct sym_row *row;

			row = sym_dso_find_row(dso, acc.v[k].addr);
			if (!row || !row->line)
				continue;
			for (size_t l = first; l < c->nlines; l++)
				if (c->lines[l].line == (int)row->line &&
				    (c->lines[l].file == row->file || !strcmp(c->lines[l].file, row->file))) {
					if (acc.v[k].n > c->lines[l].n)
						c->lines[l].n = acc.v[k].n;
					break;
				}
		}
		{
			struct counts cn = {acc.v, m};

			err = sym_cov_branches(p, dso, f, executed, &cn, c);
			if (err)
				break;
		}
		entry = sym_dso_find_row(dso, f->pub.addr);
		if (CST_GROW(c->funcs, c->fcap, c->nfuncs + 1) < 0) {
			err = -cste_nomem;
			break;
		}
		c->funcs[c->nfuncs++] = (struct sym_cov_line){
			entry && entry->line ? entry->file : f->slots[0].file,
			entry && entry->line ? (int)entry->line : f->slots[0].line,
			sym_counts_at(acc.v, m, f->pub.addr), f};
	}
	free(acc.v);
	return err;
}

int sym_cov_collect(struct cst_afdo *p, struct sym_cov *c)
{
	struct cst_symbolizer *sym = sym_afdo_symbolizer(p);
	int err = 0;

	memset(c, 0, sizeof(*c));
	for (struct dso *d = sym->dsos; d && !err; d = d->next)
		if (d->kind == dso_elf && sym_afdo_has(p, d->short_name))
			err = dso_lines(sym, p, d, c);
	if (err)
		return err;
	/* a binary without DWARF lines leaves these NULL, which qsort must not see */
	if (c->nlines > 1)
		qsort(c->lines, c->nlines, sizeof(*c->lines), by_line);
	if (c->nfuncs > 1)
		qsort(c->funcs, c->nfuncs, sizeof(*c->funcs), by_line);
	if (c->nbranches > 1)
		qsort(c->branches, c->nbranches, sizeof(*c->branches), by_branch);
	/* one entry per (file, line): functions sharing a line add up */
	{
		size_t m = 0;

		for (size_t i = 0; i < c->nlines; i++) {
			if (m && c->lines[m - 1].line == c->lines[i].line &&
			    !strcmp(c->lines[m - 1].file, c->lines[i].file))
				c->lines[m - 1].n += c->lines[i].n;
			else
				c->lines[m++] = c->lines[i];
		}
		c->nlines = m;
	}
	return 0;
}

void sym_cov_free(struct sym_cov *c)
{
	free(c->lines);
	free(c->funcs);
	free(c->branches);
}

/* From @from, the first entry of @v (sorted by file) in @file or after it. */
static size_t first_of_file(const struct sym_cov_line *v, size_t n, size_t from, const char *file)
{
	while (from < n && strcmp(v[from].file, file) < 0)
		from++;
	return from;
}

/* Past @file's entries from @from, counting them (@found) and those that ran (@hit). */
static size_t file_span(const struct sym_cov_line *v, size_t n, size_t from, const char *file,
			unsigned *found, unsigned *hit)
{
	for (; from < n && !strcmp(v[from].file, file); from++) {
		(*found)++;
		*hit += v[from].n > 0;
	}
	return from;
}

bool sym_cov_next_file(const struct sym_cov *c, struct sym_cov_file *fl)
{
	size_t i = fl->lines_end, k = fl->funcs_end, b = fl->branches_end;

	if (i >= c->nlines)
		return false;
	memset(fl, 0, sizeof(*fl));
	fl->file = c->lines[i].file;
	fl->lines = i;
	fl->lines_end = file_span(c->lines, c->nlines, i, fl->file, &fl->lf, &fl->lh);
	fl->funcs = first_of_file(c->funcs, c->nfuncs, k, fl->file);
	fl->funcs_end = file_span(c->funcs, c->nfuncs, fl->funcs, fl->file, &fl->fnf, &fl->fnh);
	while (b < c->nbranches && strcmp(c->branches[b].file, fl->file) < 0)
		b++;
	fl->branches = b;
	for (; b < c->nbranches && !strcmp(c->branches[b].file, fl->file); b++) {
		fl->brf += 2;
		fl->brh += (c->branches[b].taken > 0) + (c->branches[b].not_taken > 0);
	}
	fl->branches_end = b;
	return true;
}

int cst_afdo_write_lcov(struct cst_afdo *p, FILE *f)
{
	struct sym_cov c;
	struct sym_cov_file fl = {0};
	int err;

	if (!p || !f)
		return -cste_invalid;
	err = sym_cov_collect(p, &c);
	if (err)
		return err;
	fputs("TN:\n", f);
	while (sym_cov_next_file(&c, &fl)) {
		fprintf(f, "SF:%s\n", fl.file);
		for (size_t k = fl.funcs; k < fl.funcs_end; k++)
			fprintf(f, "FN:%d,%s\n", c.funcs[k].line, c.funcs[k].func->pub.name);
		for (size_t k = fl.funcs; k < fl.funcs_end; k++)
			fprintf(f, "FNDA:%" PRIu64 ",%s\n", c.funcs[k].n, c.funcs[k].func->pub.name);
		fprintf(f, "FNF:%u\nFNH:%u\n", fl.fnf, fl.fnh);
		for (size_t b = fl.branches, block = 0; b < fl.branches_end; b++) {
			const struct sym_cov_branch *br = &c.branches[b];

			/* a block per branch instruction of the line; branch 0 is taken */
			block = b > fl.branches && c.branches[b - 1].line == br->line ? block + 1 : 0;
			if (br->ran)
				fprintf(f, "BRDA:%d,%zu,0,%" PRIu64 "\nBRDA:%d,%zu,1,%" PRIu64 "\n",
					br->line, block, br->taken, br->line, block, br->not_taken);
			else
				fprintf(f, "BRDA:%d,%zu,0,-\nBRDA:%d,%zu,1,-\n", br->line, block,
					br->line, block);
		}
		fprintf(f, "BRF:%u\nBRH:%u\n", fl.brf, fl.brh);
		for (size_t i = fl.lines; i < fl.lines_end; i++)
			fprintf(f, "DA:%d,%" PRIu64 "\n", c.lines[i].line, c.lines[i].n);
		fprintf(f, "LF:%u\nLH:%u\nend_of_record\n", fl.lf, fl.lh);
	}
	sym_cov_free(&c);
	return ferror(f) ? -cste_io : 0;
}

/* report --format=lcov */
int sym_report_write_lcov(struct cst_report_view *v, FILE *f)
{
	return cst_afdo_write_lcov(v->afdo, f);
}

int cst_afdo_write_coverage(struct cst_afdo *p, FILE *f)
{
	struct sym_cov c;
	struct sym_cov_file fl = {0};
	unsigned all_lf = 0, all_lh = 0;
	int err;

	if (!p || !f)
		return -cste_invalid;
	err = sym_cov_collect(p, &c);
	if (err)
		return err;
	fputs("# line coverage: source lines that ran / lines of the functions with debug info\n", f);
	fprintf(f, "%14s %7s %11s  %s\n", "lines", "share", "functions", "file");
	while (sym_cov_next_file(&c, &fl)) {
		char lines[32], funcs[32];

		all_lf += fl.lf;
		all_lh += fl.lh;
		snprintf(lines, sizeof(lines), "%u/%u", fl.lh, fl.lf);
		snprintf(funcs, sizeof(funcs), "%u/%u", fl.fnh, fl.fnf);
		fprintf(f, "%14s %6.1f%% %11s  %s\n", lines, fl.lf ? 100.0 * fl.lh / fl.lf : 0.0, funcs,
			fl.file);
	}
	fprintf(f, "# all: %u of %u lines (%.1f%%)\n", all_lh, all_lf,
		all_lf ? 100.0 * all_lh / all_lf : 0.0);
	sym_cov_free(&c);
	return ferror(f) ? -cste_io : 0;
}

/* report --format=coverage */
int sym_report_write_coverage(struct cst_report_view *v, FILE *f)
{
	sym_report_loss_header(v, f);
	return cst_afdo_write_coverage(v->afdo, f);
}
