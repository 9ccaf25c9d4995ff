/* Resolving address filter entries as perf does: a symbol of FILE through its ELF
 * symbol table (libelf) to the offset in the file the kernel wants; a kernel symbol
 * through /proc/kallsyms. */
#include "cstrace/source.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <libelf.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "source_int.h"

#define MAX_LOADS 32

struct elf_file {
	Elf *elf;
	int fd;
	bool arm;                /* EM_ARM: bit 0 of a function's value is the Thumb bit */
	struct { uint64_t vaddr, off, filesz; } load[MAX_LOADS];
	int nload;
	Elf_Scn *symtab;
	GElf_Shdr symhdr;
};

/* A function symbol (or code label) of the file, as perf's symbol table keeps it. */
struct elf_symbol {
	uint64_t value, size;
	bool global;
};

static int elf_open(struct elf_file *ef, const char *path, const struct cst_log *log)
{
	GElf_Ehdr eh;
	size_t nph = 0;
	Elf_Scn *scn = NULL, *dyn = NULL;

	memset(ef, 0, sizeof(*ef));
	elf_version(EV_CURRENT);
	ef->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (ef->fd < 0) {
		cst_logf(log, cst_log_error, "address filter: cannot open %s: %s", path, strerror(errno));
		return errno == ENOENT ? -cste_not_found : -cste_io;
	}
	ef->elf = elf_begin(ef->fd, ELF_C_READ, NULL);
	if (!ef->elf || elf_kind(ef->elf) != ELF_K_ELF || !gelf_getehdr(ef->elf, &eh) ||
	    elf_getphdrnum(ef->elf, &nph)) {
		cst_logf(log, cst_log_error, "address filter: %s is not an ELF file", path);
		return -cste_format;
	}
	ef->arm = eh.e_machine == EM_ARM;
	for (size_t i = 0; i < nph && ef->nload < MAX_LOADS; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(ef->elf, (int)i, &ph) && ph.p_type == PT_LOAD) {
			ef->load[ef->nload].vaddr = ph.p_vaddr;
			ef->load[ef->nload].off = ph.p_offset;
			ef->load[ef->nload++].filesz = ph.p_filesz;
		}
	}
	/* .symtab when the file has one, else the dynamic symbols (a stripped library) */
	while ((scn = elf_nextscn(ef->elf, scn))) {
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh))
			continue;
		if (sh.sh_type == SHT_SYMTAB)
			ef->symtab = scn;
		else if (sh.sh_type == SHT_DYNSYM)
			dyn = scn;
	}
	if (!ef->symtab)
		ef->symtab = dyn;
	if (ef->symtab)
		gelf_getshdr(ef->symtab, &ef->symhdr);
	return 0;
}

static void elf_close(struct elf_file *ef)
{
	if (ef->elf)
		elf_end(ef->elf);
	if (ef->fd >= 0)
		close(ef->fd);
}

/* The file offset of virtual address @vaddr, through the PT_LOAD holding it. */
static bool vaddr_to_off(const struct elf_file *ef, uint64_t vaddr, uint64_t *off)
{
	for (int i = 0; i < ef->nload; i++)
		if (vaddr >= ef->load[i].vaddr && vaddr - ef->load[i].vaddr < ef->load[i].filesz) {
			*off = vaddr - ef->load[i].vaddr + ef->load[i].off;
			return true;
		}
	return false;
}

static bool off_to_vaddr(const struct elf_file *ef, uint64_t off, uint64_t *vaddr)
{
	for (int i = 0; i < ef->nload; i++)
		if (off >= ef->load[i].off && off - ef->load[i].off < ef->load[i].filesz) {
			*vaddr = off - ef->load[i].off + ef->load[i].vaddr;
			return true;
		}
	return false;
}

/* Visit the file's code symbols: functions, and untyped labels in executable
 * sections (not ARM's $a/$t/$d mapping symbols). @name NULL: every one. */
typedef void (*sym_fn)(void *ctx, const char *name, const struct elf_symbol *s);

static void each_symbol(const struct elf_file *ef, sym_fn fn, void *ctx)
{
	Elf_Data *d;
	size_t n;

	if (!ef->symtab || !ef->symhdr.sh_entsize || !(d = elf_getdata(ef->symtab, NULL)))
		return;
	n = ef->symhdr.sh_size / ef->symhdr.sh_entsize;
	for (size_t i = 0; i < n; i++) {
		GElf_Sym sym;
		const char *name;
		int type;

		if (!gelf_getsym(d, (int)i, &sym) || sym.st_shndx == SHN_UNDEF ||
		    sym.st_shndx >= SHN_LORESERVE)
			continue;
		type = GELF_ST_TYPE(sym.st_info);
		if (type != STT_FUNC && type != STT_GNU_IFUNC && type != STT_NOTYPE)
			continue;
		name = elf_strptr(ef->elf, ef->symhdr.sh_link, sym.st_name);
		if (!name || !name[0] || name[0] == '$')
			continue;
		if (type == STT_NOTYPE) {
			GElf_Shdr sh;
			Elf_Scn *scn = elf_getscn(ef->elf, sym.st_shndx);

			if (!scn || !gelf_getshdr(scn, &sh) || !(sh.sh_flags & SHF_EXECINSTR))
				continue;
		}
		fn(ctx, name, &(struct elf_symbol){
			.value = ef->arm ? sym.st_value & ~(uint64_t)1 : sym.st_value,
			.size = sym.st_size,
			.global = GELF_ST_BIND(sym.st_info) != STB_LOCAL});
	}
}

struct find {
	const char *name;
	int index;                 /* the entry's sym_index */
	struct elf_symbol v[16];   /* distinct addresses of @name, in address order */
	int n;
	uint64_t lo, hi;           /* '*': the code's extent */
	bool any;
};

static void on_symbol(void *ctx, const char *name, const struct elf_symbol *s)
{
	struct find *f = ctx;
	int i;

	if (!f->any || s->value < f->lo)
		f->lo = s->value;
	if (!f->any || s->value + s->size > f->hi)
		f->hi = s->value + s->size;
	f->any = true;
	if (strcmp(name, f->name) || (f->index < 0 && !s->global))
		return;
	for (i = 0; i < f->n; i++)
		if (f->v[i].value == s->value) {
			if (s->size > f->v[i].size) /* an alias with its size */
				f->v[i].size = s->size;
			return;
		}
	if (f->n == (int)(sizeof(f->v) / sizeof(f->v[0])))
		return;
	for (i = f->n; i > 0 && f->v[i - 1].value > s->value; i--)
		f->v[i] = f->v[i - 1];
	f->v[i] = *s;
	f->n++;
}

/* The symbol @name (#@index) of @ef. */
static int find_symbol(const struct elf_file *ef, const char *path, const char *name, int index,
		       struct elf_symbol *out, const struct cst_log *log)
{
	struct find f = {.name = name, .index = index};

	each_symbol(ef, on_symbol, &f);
	if (!f.n) {
		cst_logf(log, cst_log_error, "address filter: %s has no function '%s'%s%s", path,
			 name, index < 0 ? " that is global" : "",
			 ef->symtab ? "" : " (it has no symbol table)");
		return -cste_not_found;
	}
	if (index > f.n) {
		cst_logf(log, cst_log_error, "address filter: %s has %d function(s) '%s', not %d",
			 path, f.n, name, index);
		return -cste_not_found;
	}
	if (f.n > 1 && index == 0) {
		cst_logf(log, cst_log_error,
			 "address filter: %s has %d functions '%s' (at 0x%" PRIx64 ", 0x%" PRIx64
			 "%s): pick one with '%s #1' to '%s #%d' (address order), or '#g' for the "
			 "global one",
			 path, f.n, name, f.v[0].value, f.v[1].value, f.n > 2 ? ", ..." : "", name,
			 name, f.n);
		return -cste_format;
	}
	*out = f.v[index > 0 ? index - 1 : 0];
	return 0;
}

static int resolve_file(struct cst_addr_filter_entry *e, const struct cst_log *log)
{
	struct elf_file ef;
	struct elf_symbol s = {0};
	uint64_t vaddr, len = e->size;
	int err;

	if (!realpath(e->file, e->path)) {
		cst_logf(log, cst_log_error, "address filter: %s: %s", e->file, strerror(errno));
		e->path[0] = 0;
		return errno == ENOENT ? -cste_not_found : -cste_io;
	}
	err = elf_open(&ef, e->path, log);
	if (err) {
		elf_close(&ef);
		return err;
	}
	if (!e->sym[0]) {
		/* an offset in the file, as perf takes it */
		e->start = e->addr;
		if (!off_to_vaddr(&ef, e->start, &e->vaddr)) {
			cst_logf(log, cst_log_error,
				 "address filter: offset 0x%" PRIx64 " is in no loaded segment of %s",
				 e->start, e->path);
			err = -cste_format;
		}
		goto out;
	}
	if (!strcmp(e->sym, "*")) {
		struct find f = {.name = ""};

		each_symbol(&ef, on_symbol, &f);
		s.value = f.lo;
		s.size = f.hi - f.lo;
		if (!f.any) {
			cst_logf(log, cst_log_error, "address filter: %s has no function symbols "
				 "for '*'", e->path);
			err = -cste_not_found;
			goto out;
		}
	} else if ((err = find_symbol(&ef, e->path, e->sym, e->sym_index, &s, log))) {
		goto out;
	}
	vaddr = s.value;
	if (e->size_sym[0]) {
		struct elf_symbol end;

		if ((err = find_symbol(&ef, e->path, e->size_sym, 0, &end, log)))
			goto out;
		if (end.value + end.size <= vaddr) {
			cst_logf(log, cst_log_error,
				 "address filter: '%s' ends before '%s' starts in %s", e->size_sym,
				 e->sym, e->path);
			err = -cste_format;
			goto out;
		}
		len = end.value + end.size - vaddr;
	} else if (!e->has_size) {
		len = s.size;
	}
	if (e->action != cst_addr_filter_range)
		len = 0;
	else if (!len) {
		cst_logf(log, cst_log_error,
			 "address filter: '%s' in %s has no size: give one ('filter %s/SIZE @ FILE')",
			 e->sym, e->path, e->sym);
		err = -cste_format;
		goto out;
	}
	if (!vaddr_to_off(&ef, vaddr, &e->start)) {
		cst_logf(log, cst_log_error,
			 "address filter: '%s' (0x%" PRIx64 ") is in no loaded segment of %s", e->sym,
			 vaddr, e->path);
		err = -cste_format;
		goto out;
	}
	e->vaddr = vaddr;
	e->len = len;
out:
	if (!e->sym[0])
		e->len = e->action == cst_addr_filter_range ? e->size : 0;
	elf_close(&ef);
	return err;
}

/* A kernel symbol through kallsyms: its address, and its size up to the next
 * symbol's address (as perf sizes kallsyms symbols). */
static int resolve_kernel(struct cst_addr_filter_entry *e, const char *root,
			  const struct cst_log *log)
{
	char path[PATH_MAX], line[512], name[256], type;
	unsigned long long a;
	uint64_t addr = 0, next = UINT64_MAX;
	int found = 0;
	FILE *f;

	e->path[0] = 0;
	if (!e->sym[0]) {
		e->start = e->addr;
		e->len = e->action == cst_addr_filter_range ? e->size : 0;
		return 0;
	}
	if (!strcmp(e->sym, "*") || e->size_sym[0]) {
		cst_logf(log, cst_log_error,
			 "address filter: '%s%s%s': the kernel takes a symbol or an address with a "
			 "size", e->sym, e->size_sym[0] ? "/" : "", e->size_sym);
		return -cste_format;
	}
	snprintf(path, sizeof(path), "%s/proc/kallsyms", root && strcmp(root, "/") ? root : "");
	for (int pass = 0; pass < 2; pass++) {
		f = fopen(path, "r");
		if (!f) {
			cst_logf(log, cst_log_error,
				 "address filter: kernel symbol '%s' (no @FILE): cannot read %s: %s",
				 e->sym, path, strerror(errno));
			return -cste_not_found;
		}
		while (fgets(line, sizeof(line), f)) {
			if (sscanf(line, "%llx %c %255s", &a, &type, name) != 3)
				continue;
			if (!pass && !strcmp(name, e->sym) && strchr("tTwW", type)) {
				addr = a;
				found++;
			} else if (pass && a > addr && a < next) {
				next = a;
			}
		}
		fclose(f);
		if (!pass && found != 1)
			break;
	}
	if (found != 1 || !addr) {
		cst_logf(log, cst_log_error, "address filter: %s %s kernel function '%s'%s", path,
			 found > 1 ? "lists more than one" : "has no", e->sym,
			 found == 1 ? " with an address (read it as root: kptr_restrict hides them)"
				    : "");
		return -cste_not_found;
	}
	e->start = addr;
	if (e->action != cst_addr_filter_range)
		e->len = 0;
	else if (e->has_size)
		e->len = e->size;
	else if (next != UINT64_MAX)
		e->len = next - addr;
	else {
		cst_logf(log, cst_log_error, "address filter: kernel function '%s' has no size: "
			 "give one ('filter %s/SIZE')", e->sym, e->sym);
		return -cste_format;
	}
	return 0;
}

int cst_addr_filter_resolve(struct cst_addr_filter *f, const char *root,
			    const char *default_file, const struct cst_log *log)
{
	if (!f)
		return -cste_invalid;
	for (size_t i = 0; i < f->n; i++) {
		struct cst_addr_filter_entry *e = &f->v[i];
		int err;

		if (!e->file[0] && default_file)
			snprintf(e->file, sizeof(e->file), "%s", default_file);
		err = e->file[0] ? resolve_file(e, log) : resolve_kernel(e, root, log);
		if (err)
			return err;
		e->resolved = true;
	}
	return 0;
}
