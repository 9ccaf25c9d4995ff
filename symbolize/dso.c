/* Binaries (dso): find the file behind a recorded path or build-id, check that it
 * is the binary that ran, and say once, precisely, when it is not there. */
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <elfutils/libdwelf.h>

static void hex(char *out, const uint8_t *p, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		sprintf(out + 2 * i, "%02x", p[i]);
	out[2 * n] = 0;
}

/* Append to dso->why: the trail of what was tried, for the one warning. */
static void why_add(struct dso *dso, const char *path, const char *reason)
{
	char buf[1024];

	snprintf(buf, sizeof(buf), "%.900s (%.100s)", path, reason);
	cst_str_append(&dso->why, "; ", buf); /* without memory, the warning says less */
}

static void unmap(struct dso *dso)
{
	if (dso->elf)
		elf_end(dso->elf);
	if (dso->map)
		munmap((void *)dso->map, dso->map_size);
	dso->elf = NULL;
	dso->map = NULL;
	dso->map_size = 0;
}

/* Map @path; returns 0 or -1 with errno. */
static int map_file(struct dso *dso, const char *path)
{
	struct stat st;
	int fd = cst_open_input(path);
	void *p;

	if (fd < 0)
		return -1;
	if (fstat(fd, &st) < 0 || st.st_size == 0) {
		close(fd);
		errno = ENODATA;
		return -1;
	}
	/* Private and writable so that libelf may do its in-place work copy-on-write. */
	p = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
	close(fd);
	if (p == MAP_FAILED)
		return -1;
	dso->map = p;
	dso->map_size = (size_t)st.st_size;
	return 0;
}

static int load_segments(struct dso *dso)
{
	size_t n;

	if (elf_getphdrnum(dso->elf, &n) < 0)
		return -1;
	dso->segs = calloc(n ? n : 1, sizeof(*dso->segs));
	if (!dso->segs)
		return -1;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(dso->elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		dso->segs[dso->nsegs++] = (struct sym_segment){ph.p_vaddr, ph.p_offset,
							       ph.p_filesz, ph.p_memsz};
	}
	if (elf_getshdrnum(dso->elf, &n) < 0)
		return -1;
	dso->secs = calloc(n ? n : 1, sizeof(*dso->secs));
	if (!dso->secs)
		return -1;
	for (Elf_Scn *scn = NULL; (scn = elf_nextscn(dso->elf, scn));) {
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS ||
		    !(sh.sh_flags & SHF_ALLOC) || sh.sh_offset > dso->map_size ||
		    sh.sh_size > dso->map_size - sh.sh_offset)
			continue;
		dso->secs[dso->nsecs++] = (struct sym_segment){sh.sh_addr, sh.sh_offset,
							       sh.sh_size, sh.sh_size};
	}
	return 0;
}

/* A kernel module (ET_REL): its code sections where the kernel puts them, and
 * its branches within the module relocated in the (private) map, as decode reads
 * them (cst_kmod_relocate). */
static int load_kmod(struct dso *dso)
{
	int n = cst_kmod_layout(dso->elf, NULL, 0);

	if (n <= 0)
		return 0;
	dso->kmod = calloc((size_t)n, sizeof(*dso->kmod));
	if (!dso->kmod)
		return -1;
	dso->nkmod = cst_kmod_layout(dso->elf, dso->kmod, n);
	cst_kmod_relocate(dso->elf, dso->kmod, dso->nkmod, (uint8_t *)dso->map, dso->map_size);
	return 0;
}

bool sym_dso_kmod_place(struct cst_symbolizer *sym, struct dso *dso)
{
	struct sym_segment *secs;
	Dwarf_Addr bias;
	Elf *e;

	if (!dso->nkmod || dso->kind != dso_elf)
		return false;
	if (dso->kmod_vaddr)
		return true;
	if (!sym_dso_load_dwarf(sym, dso) || !dso->mod || !(e = dwfl_module_getelf(dso->mod, &bias)))
		return false;
	dso->kmod_vaddr = calloc((size_t)dso->nkmod, sizeof(*dso->kmod_vaddr));
	secs = calloc((size_t)dso->nkmod, sizeof(*secs));
	if (!dso->kmod_vaddr || !secs) {
		free(dso->kmod_vaddr);
		dso->kmod_vaddr = NULL;
		free(secs);
		return false;
	}
	/* libdwfl lays out a relocatable file when it reports it, and writes the
	 * addresses into its own copy's section headers */
	for (int i = 0; i < dso->nkmod; i++) {
		GElf_Shdr sh;
		Elf_Scn *scn = elf_getscn(e, dso->kmod[i].index);

		dso->kmod_vaddr[i] = scn && gelf_getshdr(scn, &sh) ? sh.sh_addr + bias - dso->bias : 0;
		secs[i] = (struct sym_segment){dso->kmod_vaddr[i], dso->kmod[i].offset,
					       dso->kmod[i].filesz, dso->kmod[i].size};
	}
	/* the code is read where those sections are, in the relocated map */
	free(dso->secs);
	dso->secs = secs;
	dso->nsecs = (uint32_t)dso->nkmod;
	return true;
}

/* A memory dump that starts with an ELF header is often just the first bytes of a
 * loaded segment: its section headers lie past its end. Such a dump is bytes at
 * an address, not an ELF file. */
static bool elf_cut_short(const GElf_Ehdr *eh, uint64_t size)
{
	return eh->e_shoff == 0 || eh->e_shoff > size ||
	       (uint64_t)eh->e_shnum * eh->e_shentsize > size - eh->e_shoff;
}

/* Try @path as the binary: with @check_id, only with the build-id wanted (a
 * binary the user named is used whatever it has). Returns true when accepted. */
static bool try_elf(struct dso *dso, const char *path, bool check_id)
{
	char want[129], have[129];
	const void *bid = NULL;
	ssize_t blen;
	GElf_Ehdr eh;
	bool is_elf;

	if (map_file(dso, path) < 0) {
		why_add(dso, path, cst_input_strerror(errno));
		return false;
	}
	dso->elf = elf_memory((char *)dso->map, dso->map_size);
	is_elf = dso->elf && elf_kind(dso->elf) == ELF_K_ELF;
	if (!is_elf || !gelf_getehdr(dso->elf, &eh) ||
	    (dso->raw_wanted && elf_cut_short(&eh, dso->map_size))) {
		/* a memory dump, or a mapped file that is no ELF and was recorded
		 * without a build-id (a signal trampoline's page): its bytes are
		 * code, as perf and decode read them */
		if (dso->raw_wanted || (!dso->build_id_size && !is_elf)) {
			/* A memory dump: bytes are all we need. */
			if (dso->elf)
				elf_end(dso->elf);
			dso->elf = NULL;
			dso->kind = dso_raw;
			dso->file = strdup(path);
			return true;
		}
		why_add(dso, path, "not an ELF file");
		unmap(dso);
		return false;
	}
	blen = dwelf_elf_gnu_build_id(dso->elf, &bid);
	if (!check_id && blen > 0 && blen <= 64) {
		memcpy(dso->build_id, bid, (size_t)blen);
		dso->build_id_size = (uint32_t)blen;
	} else if (!check_id) {
		dso->build_id_size = 0;
	} else if (dso->build_id_size) {
		hex(want, dso->build_id, dso->build_id_size > 64 ? 64 : dso->build_id_size);
		if (blen <= 0) {
			why_add(dso, path, "has no build-id");
			unmap(dso);
			return false;
		}
		if (!cst_build_id_equal(bid, (size_t)blen, dso->build_id, dso->build_id_size)) {
			char msg[300];

			hex(have, bid, (uint32_t)(blen > 64 ? 64 : blen));
			snprintf(msg, sizeof(msg), "build-id %s, not %s", have, want);
			why_add(dso, path, msg);
			unmap(dso);
			return false;
		}
		dso->build_id_size = (uint32_t)blen; /* without perf.data's padding */
	} else if (blen > 0 && blen <= 64) {
		memcpy(dso->build_id, bid, (size_t)blen);
		dso->build_id_size = (uint32_t)blen;
	}
	dso->machine = eh.e_machine;
	if (load_segments(dso) < 0 || load_kmod(dso) < 0) {
		why_add(dso, path, "unreadable program headers");
		unmap(dso);
		return false;
	}
	dso->kind = dso_elf;
	dso->file = strdup(path);
	return true;
}

/* cst_bin_try_fn: the first that try_elf accepts; not being in perf's build-id
 * cache is no news worth a word in the warning. */
static bool try_place(void *ctx, const char *path, enum cst_bin_place place)
{
	struct dso *dso = ctx;

	if (place == cst_bin_cache && access(path, R_OK) != 0)
		return false;
	return try_elf(dso, path, place != cst_bin_given);
}

/* What try_place needs besides the dso: whom to tell the file found. */
struct placing {
	struct dso *dso;
	const struct cst_symbolizer_opts *opts;
};

static bool try_told(void *ctx, const char *path, enum cst_bin_place place)
{
	const struct placing *p = ctx;

	if (!try_place(p->dso, path, place))
		return false;
	if (p->opts->file)
		p->opts->file(p->opts->file_ctx, path);
	return true;
}

/* The file behind @dso, where decode would read its code (cst_bin_lookup), or
 * its separate debug file. */
static void open_dso(struct cst_symbolizer *sym, struct dso *dso)
{
	const struct cst_bin_places pl = {sym->opts.symfs,  sym->opts.buildid_dir, sym->opts.symdir,
					  sym->opts.debug_dir, (const char *const *)sym->given,
					  dso->image ? 0 : sym->ngiven};
	const struct placing p = {dso, &sym->opts};

	if (dso->given) /* named by the user: as given, never under symfs */
		try_elf(dso, dso->path, false);
	else if (cst_bin_lookup(&pl, dso->path, dso->build_id, dso->build_id_size,
				cst_symdir_symbols, try_told, (void *)&p) < 0)
		dso->kind = dso_missing;
}

struct dso *sym_dso_get_given(struct cst_symbolizer *sym, const char *path)
{
	struct dso *dso;

	for (dso = sym->dsos; dso; dso = dso->next)
		if (dso->given && !strcmp(dso->path, path))
			return dso;
	dso = calloc(1, sizeof(*dso));
	if (!dso)
		return NULL;
	dso->path = strdup(path);
	dso->short_name = cst_printable_dup(path);
	if (!dso->path || !dso->short_name) {
		sym_dso_free(dso);
		return NULL;
	}
	dso->given = true;
	open_dso(sym, dso);
	if (!dso->why && dso->kind == dso_missing)
		why_add(dso, path, "not an ELF file");
	dso->next = sym->dsos;
	sym->dsos = dso;
	return dso;
}

struct dso *sym_dso_get(struct cst_symbolizer *sym, const char *path, const uint8_t *build_id,
		    uint32_t build_id_size, bool raw, bool image)
{
	struct dso *dso;
	const char *slash;

	if (build_id_size > 64)
		build_id_size = 64;
	for (dso = sym->dsos; dso; dso = dso->next)
		if (!strcmp(dso->path, path) && dso->raw_wanted == raw &&
		    (!build_id_size ||
		     cst_build_id_equal(dso->build_id, dso->build_id_size, build_id, build_id_size)))
			return dso;
	dso = calloc(1, sizeof(*dso));
	if (!dso)
		return NULL;
	dso->path = strdup(path);
	/* Memory dumps have long absolute paths; their base name reads better. */
	slash = strrchr(path, '/');
	/* the name shown in every output: recorded names may hold escapes */
	dso->short_name = cst_printable_dup(raw && slash ? slash + 1 : path);
	if (!dso->path || !dso->short_name) {
		sym_dso_free(dso);
		return NULL;
	}
	if (build_id_size) /* a NULL source is undefined even for 0 bytes */
		memcpy(dso->build_id, build_id, build_id_size);
	dso->build_id_size = build_id_size;
	dso->raw_wanted = raw;
	dso->image = image;
	open_dso(sym, dso);
	dso->next = sym->dsos;
	sym->dsos = dso;
	return dso;
}

void sym_dso_free(struct dso *dso)
{
	if (!dso)
		return;
	if (dso->dwfl)
		dwfl_end(dso->dwfl);
	unmap(dso);
	for (uint32_t i = 0; i < dso->nfuncs; i++) {
		free((char *)dso->funcs[i].pub.name);
		free(dso->funcs[i].slots);
	}
	free(dso->funcs);
	sym_dso_free_perf_syms(dso);
	free(dso->mapsyms);
	free(dso->segs);
	free(dso->secs);
	free(dso->kmod);
	free(dso->kmod_vaddr);
	free(dso->rows);
	free(dso->cu_ranges);
	sym_scopes_free(dso->scopes);
	free(dso->debug_file);
	free(dso->why);
	free(dso->file);
	free(dso->path);
	free(dso->short_name);
	free(dso);
}

const uint8_t *sym_dso_bytes(const struct dso *dso, uint64_t offset, uint64_t len)
{
	if (!dso->map || offset > dso->map_size || len > dso->map_size - offset)
		return NULL;
	return dso->map + offset;
}

const uint8_t *sym_dso_code(const struct dso *dso, uint64_t vaddr, uint64_t len)
{
	if (dso->kind == dso_raw)
		return sym_dso_bytes(dso, vaddr, len);
	for (uint32_t i = 0; i < dso->nsecs; i++) {
		const struct sym_segment *s = &dso->secs[i];

		if (vaddr >= s->vaddr && vaddr - s->vaddr < s->filesz)
			return len <= s->filesz - (vaddr - s->vaddr)
				       ? dso->map + s->offset + (vaddr - s->vaddr)
				       : NULL;
	}
	/* Code outside every section, or a file without section headers (sstrip,
	 * a linker script's image): the loaded segments' bytes, as the decoder
	 * reads them. */
	for (uint32_t i = 0; i < dso->nsegs; i++) {
		const struct sym_segment *s = &dso->segs[i];

		if (vaddr >= s->vaddr && vaddr - s->vaddr < s->filesz && s->offset <= dso->map_size &&
		    s->filesz <= dso->map_size - s->offset)
			return len <= s->filesz - (vaddr - s->vaddr)
				       ? dso->map + s->offset + (vaddr - s->vaddr)
				       : NULL;
	}
	return NULL;
}

bool sym_dso_off_to_vaddr(const struct dso *dso, uint64_t off, uint64_t *vaddr)
{
	if (dso->kind != dso_elf) {
		*vaddr = off;
		return true;
	}
	for (uint32_t i = 0; i < dso->nsegs; i++) {
		const struct sym_segment *s = &dso->segs[i];

		if (off >= s->offset && off - s->offset < (s->filesz ? s->filesz : 1)) {
			*vaddr = s->vaddr + (off - s->offset);
			return true;
		}
	}
	return false;
}

void sym_dso_warn(struct cst_symbolizer *sym, struct dso *dso)
{
	char id[129] = "";

	if (dso->warned)
		return;
	dso->warned = true;
	if (dso->build_id_size)
		hex(id, dso->build_id, dso->build_id_size);
	cst_logf(&sym->log, cst_log_warning,
		 "%s%s%s: no matching binary; looked for %s; its addresses show as [unknown]",
		 dso->path, *id ? " build-id " : "", id, dso->why ? dso->why : "nothing");
}

bool sym_dso_kmod_addr(const struct dso *dso, uint64_t vaddr, uint64_t *addr)
{
	for (int i = 0; dso->kmod_vaddr && i < dso->nkmod; i++)
		if (vaddr >= dso->kmod_vaddr[i] && vaddr - dso->kmod_vaddr[i] < dso->kmod[i].size) {
			*addr = dso->kmod[i].addr + (vaddr - dso->kmod_vaddr[i]);
			return true;
		}
	return false;
}

struct dso *sym_dso_named(struct cst_symbolizer *sym, const char *name)
{
	struct dso *dso;

	/* a loc's dso string is the binary's own: the pointer finds it, a copied
	 * name is matched by text */
	for (dso = sym->dsos; dso; dso = dso->next)
		if (dso->short_name == name)
			return dso;
	for (dso = sym->dsos; dso; dso = dso->next)
		if (!strcmp(dso->short_name, name) || !strcmp(dso->path, name))
			return dso;
	return NULL;
}

int cst_symbolizer_dso_info(struct cst_symbolizer *sym, const char *name,
			    struct cst_sym_dso_info *info)
{
	struct dso *found;

	if (!sym || !name || !info)
		return -cste_invalid;
	found = sym_dso_named(sym, name);
	if (!found)
		return -cste_not_found;
	memset(info, 0, sizeof(*info));
	info->path = found->path;
	info->file = found->file;
	memcpy(info->build_id, found->build_id, found->build_id_size);
	info->build_id_size = found->build_id_size;
	info->elf = found->kind == dso_elf;
	info->base = UINT64_MAX;
	for (uint32_t i = 0; i < found->nsegs; i++)
		if (found->segs[i].vaddr < info->base)
			info->base = found->segs[i].vaddr;
	if (info->base == UINT64_MAX)
		info->base = 0;
	return 0;
}
