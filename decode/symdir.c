/* --symdir DIR (as simpleperf's): a directory tree of binaries and debug files,
 * indexed once by build-id and by base name, for every lookup of a recorded file
 * (decode's code reads and symbolize's symbols go through the same index). */
#include "elf_build_id.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <gelf.h>
#include <libelf.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cstrace/decode.h"

/* A tree larger than this is not a symbol directory (someone gave /): stop
 * indexing there and say so, rather than read every file of a system. */
#define SYMDIR_MAX_FILES 200000

struct entry {
	char *path;
	const char *base;  /* into path */
	uint8_t bid[20];
	uint8_t bid_size;
	bool has_code;     /* an executable section with its bytes in the file */
	bool has_symbols;  /* .symtab or DWARF */
};

struct cst_symdir {
	struct entry *e;
	size_t n, cap;
	size_t visited;
	bool full;
	int err;
};

uint8_t dec_elf_build_id(Elf *e, uint8_t out[20])
{
	size_t nph = 0;

	if (elf_getphdrnum(e, &nph))
		return 0;
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;
		Elf_Data *d;
		size_t off = 0, name_off, desc_off;
		GElf_Nhdr nh;

		if (!gelf_getphdr(e, (int)i, &ph) || ph.p_type != PT_NOTE)
			continue;
		d = elf_getdata_rawchunk(e, (int64_t)ph.p_offset, ph.p_filesz, ELF_T_NHDR);
		while (d && (off = gelf_getnote(d, off, &nh, &name_off, &desc_off)) > 0) {
			if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
			    !memcmp((char *)d->d_buf + name_off, "GNU", 4) && nh.n_descsz) {
				uint8_t n = nh.n_descsz > 20 ? 20 : (uint8_t)nh.n_descsz;

				memcpy(out, (uint8_t *)d->d_buf + desc_off, n);
				return n;
			}
		}
	}
	return 0;
}

/* What @fd holds: not ELF (false), else its build-id and what it is good for. */
static bool classify(int fd, struct entry *en)
{
	Elf *e = elf_begin(fd, ELF_C_READ, NULL);
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	if (!e || elf_kind(e) != ELF_K_ELF) {
		if (e)
			elf_end(e);
		return false;
	}
	en->bid_size = dec_elf_build_id(e, en->bid);
	if (elf_getshdrstrndx(e, &shstrndx) == 0) {
		while ((scn = elf_nextscn(e, scn))) {
			GElf_Shdr sh;
			const char *name;

			if (!gelf_getshdr(scn, &sh))
				continue;
			name = elf_strptr(e, shstrndx, sh.sh_name);
			/* a debug file keeps the headers of its code sections as NOBITS */
			if ((sh.sh_flags & SHF_EXECINSTR) && sh.sh_type != SHT_NOBITS && sh.sh_size)
				en->has_code = true;
			if (sh.sh_type == SHT_SYMTAB ||
			    (name && !strcmp(name, ".debug_info") && sh.sh_type != SHT_NOBITS))
				en->has_symbols = true;
		}
	}
	elf_end(e);
	return true;
}

static int add_file(struct cst_symdir *d, const char *path)
{
	struct entry en = {0};
	int fd;

	if (d->visited++ >= SYMDIR_MAX_FILES) {
		d->full = true;
		return 1; /* stop the walk */
	}
	fd = cst_open_input(path);
	if (fd < 0)
		return 0; /* unreadable: not ours to index */
	if (!classify(fd, &en)) {
		close(fd);
		return 0;
	}
	close(fd);
	if (CST_GROW(d->e, d->cap, d->n + 1) < 0 || !(en.path = strdup(path))) {
		d->err = -cste_nomem;
		return 1;
	}
	en.base = strrchr(en.path, '/') ? strrchr(en.path, '/') + 1 : en.path;
	d->e[d->n++] = en;
	return 0;
}

/* nftw has no context argument: one walk at a time per thread carries it */
static _Thread_local struct cst_symdir *walking;

static int on_file(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)ftw;
	/* regular files only: FIFOs, devices and (not followed) symlinks are skipped */
	if (type != FTW_F || !S_ISREG(st->st_mode))
		return 0;
	return add_file(walking, path);
}

int cst_symdir_open(struct cst_symdir **out, const char *dir, const struct cst_log *log)
{
	struct cst_symdir *d;
	struct stat st;
	int ret;

	if (!out || !dir)
		return -cste_invalid;
	*out = NULL;
	if (stat(dir, &st) < 0 || !S_ISDIR(st.st_mode)) {
		cst_logf(log, cst_log_error, "--symdir %s: %s", dir,
			 stat(dir, &st) < 0 ? strerror(errno) : "not a directory");
		return -cste_not_found;
	}
	elf_version(EV_CURRENT);
	d = calloc(1, sizeof(*d));
	if (!d)
		return -cste_nomem;
	walking = d;
	/* FTW_PHYS: symlinks are not followed, so a link loop cannot trap the walk */
	ret = nftw(dir, on_file, 32, FTW_PHYS);
	walking = NULL;
	if (d->err) {
		int err = d->err;

		cst_symdir_free(d);
		return err;
	}
	if (ret < 0)
		cst_logf(log, cst_log_warning, "%s: not all of it could be read (%s)", dir,
			 strerror(errno));
	if (d->full)
		cst_logf(log, cst_log_warning,
			 "%s: more than %d files; only the first %d are looked at", dir,
			 SYMDIR_MAX_FILES, SYMDIR_MAX_FILES);
	*out = d;
	return 0;
}

void cst_symdir_free(struct cst_symdir *d)
{
	if (!d)
		return;
	for (size_t i = 0; i < d->n; i++)
		free(d->e[i].path);
	free(d->e);
	free(d);
}

static int score(const struct entry *en, enum cst_symdir_want want)
{
	return want == cst_symdir_code ? 2 * en->has_code + en->has_symbols
				       : 2 * en->has_symbols + en->has_code;
}

const char *cst_symdir_find(const struct cst_symdir *d, const char *recorded,
			    const uint8_t *bid, size_t bid_size, enum cst_symdir_want want)
{
	const struct entry *best = NULL;
	const char *base;

	if (!d)
		return NULL;
	base = recorded && strrchr(recorded, '/') ? strrchr(recorded, '/') + 1 : recorded;
	for (size_t i = 0; i < d->n; i++) {
		const struct entry *en = &d->e[i];
		bool match;

		/* by build-id; by name only when the recording has none to check */
		if (bid_size)
			match = en->bid_size && cst_build_id_equal(en->bid, en->bid_size, bid, bid_size);
		else
			match = base && *base && !strcmp(en->base, base);
		if (!match || (want == cst_symdir_code && !en->has_code))
			continue;
		if (!best || score(en, want) > score(best, want))
			best = en;
	}
	return best ? best->path : NULL;
}
