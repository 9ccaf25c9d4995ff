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
	/* entry indices sorted by build-id and by base name (then by index: the
	 * first indexed wins a tie, as a scan in walk order would have it) */
	size_t *by_bid, *by_base;
	size_t nbid;
	size_t visited;
	bool full;
	int err;
};

/* The GNU build-id note in @d, if any (at most 20 bytes into @out). */
static uint8_t note_build_id(Elf_Data *d, uint8_t out[20])
{
	size_t off = 0, name_off, desc_off;
	GElf_Nhdr nh;

	while (d && (off = gelf_getnote(d, off, &nh, &name_off, &desc_off)) > 0) {
		if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
		    !memcmp((char *)d->d_buf + name_off, "GNU", 4) && nh.n_descsz) {
			uint8_t n = nh.n_descsz > 20 ? 20 : (uint8_t)nh.n_descsz;

			memcpy(out, (uint8_t *)d->d_buf + desc_off, n);
			return n;
		}
	}
	return 0;
}

uint8_t dec_elf_build_id(Elf *e, uint8_t out[20])
{
	size_t nph = 0;
	Elf_Scn *scn = NULL;
	uint8_t n;

	if (elf_getphdrnum(e, &nph) == 0) {
		for (size_t i = 0; i < nph; i++) {
			GElf_Phdr ph;

			if (!gelf_getphdr(e, (int)i, &ph) || ph.p_type != PT_NOTE)
				continue;
			n = note_build_id(elf_getdata_rawchunk(e, (int64_t)ph.p_offset, ph.p_filesz,
							       ELF_T_NHDR),
					  out);
			if (n)
				return n;
		}
	}
	/* a file without program headers (a kernel module, ET_REL) has it in a
	 * note section */
	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
			continue;
		n = note_build_id(elf_getdata(scn, NULL), out);
		if (n)
			return n;
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
	en.base = cst_path_base(en.path);
	d->e[d->n++] = en;
	return 0;
}

/* The index nftw is filling on this thread (nftw passes its callback no context). */
struct walking {
	struct cst_symdir *d;
	bool whole;
};
static _Thread_local struct walking *walking;

static int visit(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)ftw;
	if (type == FTW_DNR || type == FTW_NS) {
		walking->whole = false;
		return 0;
	}
	if (type != FTW_F || !S_ISREG(st->st_mode))
		return 0;
	return add_file(walking->d, path); /* 1 stops the walk */
}

/* Index every regular file under @dir. Symlinks are not followed (FTW_PHYS), so
 * a link loop cannot trap the walk; FIFOs and devices are skipped. nftw rather
 * than fts: a 32-bit build's fts reads directories with 32-bit offsets, which
 * ext4's 64-bit directory hashes overflow under qemu-user (the directory reads
 * as empty). Returns false when part of the tree could not be read. */
static bool walk(struct cst_symdir *d, const char *dir)
{
	struct walking w = {d, true};
	int r;

	walking = &w;
	r = nftw(dir, visit, 32, FTW_PHYS);
	walking = NULL;
	return w.whole && r >= 0;
}

/* Build-ids are indexed without their trailing zero bytes: a recorded id is
 * padded with zeros past the file's (cst_build_id_equal), so every id that
 * equals a recorded one has the same stripped bytes. */
static size_t stripped(const uint8_t *bid, size_t n)
{
	while (n && !bid[n - 1])
		n--;
	return n;
}

static int cmp_bid(const struct entry *x, const uint8_t *bid, size_t bid_size)
{
	size_t xn = stripped(x->bid, x->bid_size), yn = stripped(bid, bid_size);
	int c = memcmp(x->bid, bid, xn < yn ? xn : yn);

	return c ? c : (xn > yn) - (xn < yn);
}

/* qsort has no context argument: the entries travel in front of each index */
struct sort_item {
	const struct entry *e;
	size_t i;
};

static int cmp_item_bid(const void *a, const void *b)
{
	const struct sort_item *x = a, *y = b;
	int c = cmp_bid(x->e, y->e->bid, y->e->bid_size);

	return c ? c : (x->i > y->i) - (x->i < y->i);
}

static int cmp_item_base(const void *a, const void *b)
{
	const struct sort_item *x = a, *y = b;
	int c = strcmp(x->e->base, y->e->base);

	return c ? c : (x->i > y->i) - (x->i < y->i);
}

/* Sort the entries (those with a build-id when @bids, else all) into *@out, by
 * build-id or by base name. */
static int build_index(struct cst_symdir *d, bool bids, size_t **out, size_t *count)
{
	struct sort_item *t = malloc((d->n ? d->n : 1) * sizeof(*t));
	size_t n = 0;

	if (!t)
		return -cste_nomem;
	for (size_t i = 0; i < d->n; i++)
		if (!bids || d->e[i].bid_size)
			t[n++] = (struct sort_item){&d->e[i], i};
	qsort(t, n, sizeof(*t), bids ? cmp_item_bid : cmp_item_base);
	*out = malloc((n ? n : 1) * sizeof(**out));
	if (!*out) {
		free(t);
		return -cste_nomem;
	}
	for (size_t k = 0; k < n; k++)
		(*out)[k] = t[k].i;
	*count = n;
	free(t);
	return 0;
}

int cst_symdir_open(struct cst_symdir **out, const char *dir, const struct cst_log *log)
{
	struct cst_symdir *d;
	struct stat st;
	bool whole;

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
	errno = 0;
	whole = walk(d, dir);
	if (!d->err) {
		size_t nbase;

		d->err = build_index(d, true, &d->by_bid, &d->nbid);
		if (!d->err)
			d->err = build_index(d, false, &d->by_base, &nbase);
	}
	if (d->err) {
		int err = d->err;

		cst_symdir_free(d);
		return err;
	}
	if (!whole)
		cst_logf(log, cst_log_warning, "%s: not all of it could be read (%s)", dir,
			 strerror(errno ? errno : EIO));
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
	free(d->by_bid);
	free(d->by_base);
	free(d);
}

static int score(const struct entry *en, enum cst_symdir_want want)
{
	return want == cst_symdir_code ? 2 * en->has_code + en->has_symbols
				       : 2 * en->has_symbols + en->has_code;
}

/* @en against the key, as the index sorts: build-id @bid when @bid_size, else
 * name @base. */
static int cmp_key(const struct entry *en, const uint8_t *bid, size_t bid_size, const char *base)
{
	return bid_size ? cmp_bid(en, bid, bid_size) : strcmp(en->base, base);
}

/* The first position in index @ix (of @n) whose entry is not below the key. */
static size_t lower_bound(const struct cst_symdir *d, const size_t *ix, size_t n,
			  const uint8_t *bid, size_t bid_size, const char *base)
{
	return CST_PARTITION(i, 0, n, cmp_key(&d->e[ix[i]], bid, bid_size, base) < 0);
}

/* The best entry of index @ix (@n of them) for the key (build-id, or base name
 * @base), NULL when none. */
static const struct entry *best_of(const struct cst_symdir *d, const size_t *ix, size_t n,
				   const uint8_t *bid, size_t bid_size, const char *base,
				   enum cst_symdir_want want)
{
	const struct entry *best = NULL;

	/* the matches in index order: the first of the best score wins */
	for (size_t k = lower_bound(d, ix, n, bid, bid_size, base); k < n; k++) {
		const struct entry *en = &d->e[ix[k]];

		if (cmp_key(en, bid, bid_size, base))
			break;
		if (bid_size && !cst_build_id_equal(en->bid, en->bid_size, bid, bid_size))
			continue;
		if (want == cst_symdir_code && !en->has_code)
			continue;
		if (!best || score(en, want) > score(best, want))
			best = en;
	}
	return best;
}

const char *cst_symdir_find(const struct cst_symdir *d, const char *recorded,
			    const uint8_t *bid, size_t bid_size, enum cst_symdir_want want)
{
	const struct entry *best;
	const char *base;
	char ko[256];

	if (!d)
		return NULL;
	/* by build-id; by name only when the recording has none to check */
	if (bid_size) {
		best = best_of(d, d->by_bid, d->nbid, bid, bid_size, NULL, want);
		return best ? best->path : NULL;
	}
	base = cst_path_base(recorded);
	if (!base || !*base)
		return NULL;
	/* a module recorded as "[name]" is the file name.ko; /proc/modules spells
	 * with '_' what the file may spell with '-' */
	if (cst_kmod_name(recorded, ko, sizeof(ko)) && *ko) {
		bool dashed = false;

		best = best_of(d, d->by_base, d->n, NULL, 0, ko, want);
		for (char *c = ko; !best && *c; c++)
			if (*c == '_') {
				*c = '-';
				dashed = true;
			}
		if (dashed)
			best = best_of(d, d->by_base, d->n, NULL, 0, ko, want);
		return best ? best->path : NULL;
	}
	best = best_of(d, d->by_base, d->n, NULL, 0, base, want);
	return best ? best->path : NULL;
}
