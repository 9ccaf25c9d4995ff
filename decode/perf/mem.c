/* Code memory for perf.data decoding: MMAP2 maps per process, each file found once
 * (cst_bin_lookup, with its build-id checked) and read via libelf.
 * Files are mmapped once, so OpenCSD's instruction-at-a-time reads cost a memcpy,
 * not a system call; pread through a one-block cache is the fallback (kcore, or a
 * file larger than the address space of a 32-bit build).
 *
 * Decoding threads read through cursors of their own (dec_perf_mem_cursor_read)
 * while the maps stand still: finding a file and the block cache are behind one
 * lock; a mapped file, once ready, is read without it. */
#include "mem.h"
#include "elf_build_id.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <gelf.h>
#include <inttypes.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define BLOCK 4096u

struct seg {
	uint64_t vaddr, offset, filesz;
};


struct mfile {
	char *name;          /* as recorded */
	uint8_t bid[20];
	uint8_t bid_size;
	bool resolved, missing;
	bool ready; /* resolved, and `map` set if it will be: read without the lock */
	struct cst_mapped_input in; /* map: the whole file, or NULL: read through the block */
	bool is_elf;
	struct perf_kmod *kmod; /* a kernel module's code (mem_kmod.c), or NULL */
	struct seg *segs;
	int nsegs;
	/* one cached block when not mapped: OpenCSD reads an instruction at a time */
	uint64_t blk_off;
	uint32_t blk_len;
	uint8_t blk[BLOCK];
};

/* A mapping lives from the record that made it to the exec that ended it, both as
 * file positions: fragments decoded out of file order see the maps of their time. */
struct map {
	int32_t pid;
	uint64_t start, end, pgoff;
	int file;
	uint64_t born, died;
};

struct perf_mem {
	struct cst_log log;
	char *symfs, *buildid_dir, *kernel;
	struct cst_bin_places places; /* symfs, buildid_dir and the symdir */
	int (*file_fn)(void *ctx, const char *path); /* cst_session_opts.file */
	void *file_ctx;
	struct mfile *files;
	int nfiles;
	size_t cap_files;
	struct map *maps;
	int nmaps;
	size_t cap_maps;
	int kernel_file; /* index or -1 */
	pthread_mutex_t lock; /* resolving files, the block caches, `missing` */
	int32_t pid;
	uint64_t clock; /* position of the sideband being applied */
	uint64_t view;  /* position whose maps reads see */
	int missing;
	/* dec_perf_mem_ready_quietly: what would have been warned about, instead */
	bool quiet, would_warn;
};

/* A warning about a file, or in a quiet pass the note that there would be one. */
#define MEM_WARN(m, ...)                                                         \
	do {                                                                     \
		if ((m)->quiet)                                                  \
			(m)->would_warn = true;                                  \
		else                                                             \
			cst_logf(&(m)->log, cst_log_warning, __VA_ARGS__);       \
	} while (0)

static int file_index(struct perf_mem *m, const char *name);

struct perf_mem *dec_perf_mem_alloc(const char *symfs, const char *buildid_dir, const char *kernel,
				const struct cst_log *log)
{
	struct perf_mem *m = calloc(1, sizeof(*m));

	if (!m)
		return NULL;
	if (log)
		m->log = *log;
	m->kernel_file = -1;
	m->pid = -1;
	pthread_mutex_init(&m->lock, NULL);
	if ((symfs && !(m->symfs = strdup(symfs))) ||
	    (buildid_dir && !(m->buildid_dir = strdup(buildid_dir))) ||
	    (kernel && !(m->kernel = strdup(kernel)))) {
		dec_perf_mem_free(m);
		return NULL;
	}
	/* the kernel's entry is made now: the files table never grows while reads
	 * run on several threads */
	if (kernel && (m->kernel_file = file_index(m, kernel)) < 0) {
		dec_perf_mem_free(m);
		return NULL;
	}
	m->places.symfs = m->symfs;
	m->places.buildid_dir = m->buildid_dir;
	elf_version(EV_CURRENT);
	return m;
}

void dec_perf_mem_set_symdir(struct perf_mem *m, const struct cst_symdir *symdir)
{
	m->places.symdir = symdir;
}

void dec_perf_mem_set_file_fn(struct perf_mem *m, int (*fn)(void *ctx, const char *path),
			      void *ctx)
{
	m->file_fn = fn;
	m->file_ctx = ctx;
}

void dec_perf_mem_set_given(struct perf_mem *m, const char *const *elfs, int n)
{
	m->places.elfs = elfs;
	m->places.nelfs = n;
}

void dec_perf_mem_free(struct perf_mem *m)
{
	if (!m)
		return;
	for (int i = 0; i < m->nfiles; i++) {
		dec_perf_kmod_free(m->files[i].kmod);
		cst_mapped_input_close(&m->files[i].in);
		free(m->files[i].name);
		free(m->files[i].segs);
	}
	free(m->files);
	free(m->maps);
	free(m->symfs);
	free(m->buildid_dir);
	free(m->kernel);
	pthread_mutex_destroy(&m->lock);
	free(m);
}

static int file_index(struct perf_mem *m, const char *name)
{
	struct mfile *f;

	for (int i = 0; i < m->nfiles; i++)
		if (!strcmp(m->files[i].name, name))
			return i;
	if (CST_GROW(m->files, m->cap_files, (size_t)m->nfiles + 1) < 0)
		return -cste_nomem;
	f = &m->files[m->nfiles];
	memset(f, 0, sizeof(*f));
	f->in.fd = -1;
	f->name = strdup(name);
	if (!f->name)
		return -cste_nomem;
	return m->nfiles++;
}

int dec_perf_mem_add_build_id(struct perf_mem *m, const char *filename, const uint8_t *id,
			  uint8_t size)
{
	int i;

	if (!m || !filename || !id || !size || size > 20)
		return -cste_invalid;
	i = file_index(m, filename);
	if (i < 0)
		return i;
	if (!m->files[i].bid_size) {
		memcpy(m->files[i].bid, id, size);
		m->files[i].bid_size = size;
	}
	return 0;
}

const uint8_t *dec_perf_mem_build_id(const struct perf_mem *m, const char *filename,
				     uint8_t *size)
{
	for (int i = 0; m && filename && i < m->nfiles; i++)
		if (!strcmp(m->files[i].name, filename) && m->files[i].bid_size) {
			*size = m->files[i].bid_size;
			return m->files[i].bid;
		}
	return NULL;
}

int dec_perf_mem_add_map(struct perf_mem *m, int32_t pid, uint64_t start, uint64_t len,
		     uint64_t pgoff, const char *filename, const uint8_t *build_id,
		     uint8_t build_id_size)
{
	int f;

	if (!m || !filename || !len || start + len < start)
		return -cste_invalid;
	/* anonymous and special mappings carry no code we can read; a kernel
	 * mapping named [name] is a module's (perf and simpleperf name one so
	 * when they did not find its file) */
	if (filename[0] != '/' && strncmp(filename, "[kernel", 7) != 0 &&
	    !(pid < 0 && cst_kmod_name(filename, NULL, 0)))
		return 0;
	f = file_index(m, filename);
	if (f < 0)
		return f;
	if (build_id_size && build_id_size <= 20 && !m->files[f].bid_size) {
		memcpy(m->files[f].bid, build_id, build_id_size);
		m->files[f].bid_size = build_id_size;
	}
	if (CST_GROW(m->maps, m->cap_maps, (size_t)m->nmaps + 1) < 0)
		return -cste_nomem;
	m->maps[m->nmaps++] = (struct map){pid, start, start + len, pgoff, f, m->clock, UINT64_MAX};
	return 0;
}

void dec_perf_mem_drop_pid(struct perf_mem *m, int32_t pid)
{
	if (!m)
		return;
	for (int i = 0; i < m->nmaps; i++)
		if (m->maps[i].pid == pid && m->maps[i].died == UINT64_MAX)
			m->maps[i].died = m->clock;
}

void dec_perf_mem_set_clock(struct perf_mem *m, uint64_t pos)
{
	if (m)
		m->clock = pos;
}

void dec_perf_mem_set_view(struct perf_mem *m, uint64_t pos)
{
	if (m)
		m->view = pos;
}

void dec_perf_mem_set_pid(struct perf_mem *m, int32_t pid)
{
	if (m)
		m->pid = pid;
}

int dec_perf_mem_missing(const struct perf_mem *m)
{
	int n;

	if (!m)
		return 0;
	pthread_mutex_lock((pthread_mutex_t *)&m->lock);
	n = m->missing;
	pthread_mutex_unlock((pthread_mutex_t *)&m->lock);
	return n;
}

static void hex_id(const uint8_t *id, uint8_t size, char *out)
{
	for (uint8_t i = 0; i < size; i++)
		sprintf(out + 2 * i, "%02x", id[i]);
	out[2 * size] = '\0';
}

/* How a file's build-id is held against the recorded one. */
enum bid_check {
	bid_none,  /* not at all (the kernel image given) */
	bid_must,  /* it must match */
	bid_given, /* a binary the user named: used whatever it is, said when it differs */
};

/* Open @path and read its PT_LOADs, its build-id checked as @check says.
 * Returns the fd or -1. */
static int try_open(struct perf_mem *m, struct mfile *f, const char *path, enum bid_check check)
{
	bool check_bid = check != bid_none;

	int fd = cst_open_input(path); /* a recorded name may be /dev/zero */
	Elf *e;
	size_t nph = 0;

	if (fd < 0)
		return -1;
	e = elf_begin(fd, ELF_C_READ, NULL);
	if (!e || elf_kind(e) != ELF_K_ELF) {
		/* not ELF (a raw dump): read by file offset only */
		if (e)
			elf_end(e);
		if (check == bid_must && f->bid_size) {
			close(fd);
			return -1;
		}
		f->is_elf = false;
		return fd;
	}
	if (check_bid && f->bid_size) {
		uint8_t bid[20];
		uint8_t n = dec_elf_build_id(e, bid);

		if (n && !cst_build_id_equal(bid, n, f->bid, f->bid_size)) {
			char want[41], got[41];

			hex_id(f->bid, f->bid_size, want);
			hex_id(bid, n, got);
			if (check == bid_given) {
				MEM_WARN(m, "%s: build-id %s, not the recorded %s of %s: used, as "
					    "--elf names it", path, got, want, f->name);
			} else {
				MEM_WARN(m, "%s: build-id %s does not match the recorded %s: not used",
					 path, got, want);
				elf_end(e);
				close(fd);
				return -1;
			}
		}
	}
	if ((f->kmod = dec_perf_kmod_load(e, fd))) {
		f->is_elf = true;
		elf_end(e);
		return fd;
	}
	if (!elf_getphdrnum(e, &nph) && nph) {
		f->segs = calloc(nph, sizeof(*f->segs));
		for (size_t i = 0; f->segs && i < nph; i++) {
			GElf_Phdr ph;

			if (gelf_getphdr(e, (int)i, &ph) && ph.p_type == PT_LOAD && ph.p_filesz)
				f->segs[f->nsegs++] = (struct seg){ph.p_vaddr, ph.p_offset, ph.p_filesz};
		}
	}
	f->is_elf = true;
	elf_end(e);
	return fd;
}

struct resolving {
	struct perf_mem *m;
	struct mfile *f;
};

static bool try_place(void *ctx, const char *path, enum cst_bin_place place)
{
	struct resolving *r = ctx;

	r->f->in.fd = try_open(r->m, r->f, path, place == cst_bin_given ? bid_given : bid_must);
	if (r->f->in.fd >= 0 && r->m->file_fn)
		r->m->file_fn(r->m->file_ctx, path); /* under m->lock: one at a time */
	return r->f->in.fd >= 0;
}

/* Find the file on this host where cst_bin_lookup says (only with its build-id
 * when one was recorded). Warn once when nothing fits. */
static bool resolve(struct perf_mem *m, struct mfile *f)
{
	struct resolving r = {m, f};
	char hex[41], shown[256];

	if (f->resolved)
		return !f->missing;
	f->resolved = true;
	cst_bin_lookup(&m->places, f->name, f->bid, f->bid_size, cst_symdir_code, try_place, &r);
	if (f->in.fd < 0) {
		struct stat st;

		f->missing = true;
		m->missing++;
		if (stat(f->name, &st) == 0 && !S_ISREG(st.st_mode)) {
			MEM_WARN(m, "%s: not a regular file; its code is not decoded (gaps)",
				 cst_printable(f->name, shown, sizeof(shown)));
			return false;
		}
		if (f->bid_size)
			hex_id(f->bid, f->bid_size, hex);
		MEM_WARN(m,
			 "%s (build-id %s): not found%s%s%s nor in the build-id cache; its code "
			 "is not decoded (gaps)",
			 cst_printable(f->name, shown, sizeof(shown)), f->bid_size ? hex : "unknown",
			 m->symfs ? " under " : "", m->symfs ? m->symfs : "",
			 m->places.symdir ? " in --symdir" : "");
		return false;
	}
	if (!f->kmod) /* a module is read from its copy */
		cst_mapped_input_map(&f->in); /* unmapped: read through the block */
	return true;
}

/* Bytes at file offset @off, through the file's one-block cache. */
static uint32_t read_at(struct mfile *f, uint64_t off, uint32_t len, uint8_t *buf)
{
	uint32_t done = 0;

	if (f->in.map) {
		if (off >= f->in.size)
			return 0;
		if (len > f->in.size - off)
			len = (uint32_t)(f->in.size - off);
		memcpy(buf, f->in.map + off, len);
		return len;
	}
	while (done < len) {
		uint64_t o = off + done;
		uint32_t n;

		if (!f->blk_len || o < f->blk_off || o >= f->blk_off + f->blk_len) {
			ssize_t got = pread(f->in.fd, f->blk, BLOCK, (off_t)(o & ~(uint64_t)(BLOCK - 1)));

			if (got <= 0)
				break;
			f->blk_off = o & ~(uint64_t)(BLOCK - 1);
			f->blk_len = (uint32_t)got;
			if (o >= f->blk_off + f->blk_len)
				break;
		}
		n = (uint32_t)(f->blk_off + f->blk_len - o);
		if (n > len - done)
			n = len - done;
		memcpy(buf + done, f->blk + (o - f->blk_off), n);
		done += n;
	}
	return done;
}

/* Clip a read at file offset @off to the PT_LOAD holding it (no bss, no gaps). */
static uint32_t clip_to_segment(const struct mfile *f, uint64_t off, uint32_t len)
{
	if (!f->is_elf)
		return len;
	for (int i = 0; i < f->nsegs; i++) {
		const struct seg *s = &f->segs[i];

		if (off >= s->offset && off < s->offset + s->filesz) {
			uint64_t room = s->offset + s->filesz - off;

			return room < len ? (uint32_t)room : len;
		}
	}
	return 0;
}

/* Open the kernel image once (under the lock). */
static void resolve_kernel(struct perf_mem *m, struct mfile *f)
{
	if (f->resolved)
		return;
	f->resolved = true;
	f->in.fd = try_open(m, f, f->name, bid_none);
	if (f->in.fd < 0 || !f->is_elf) {
		f->missing = true;
		m->missing++;
		MEM_WARN(m, "%s: cannot read as an ELF vmlinux or kcore; kernel code not decoded",
			 f->name);
	} else {
		cst_mapped_input_map(&f->in); /* unmapped: read through the block */
	}
}

/* Find @f (the kernel's or a recorded file) once; whether it can be read. */
static bool ready(struct perf_mem *m, int index)
{
	struct mfile *f = &m->files[index];

	if (!__atomic_load_n(&f->ready, __ATOMIC_ACQUIRE)) {
		pthread_mutex_lock(&m->lock);
		if (index == m->kernel_file)
			resolve_kernel(m, f);
		else
			resolve(m, f);
		__atomic_store_n(&f->ready, true, __ATOMIC_RELEASE);
		pthread_mutex_unlock(&m->lock);
	}
	return !f->missing;
}

/* Undo a resolution that would have warned: the file is found (and the warning
 * given) again when it is first read. */
static void unresolve(struct perf_mem *m, struct mfile *f)
{
	dec_perf_kmod_free(f->kmod);
	f->kmod = NULL;
	cst_mapped_input_close(&f->in);
	free(f->segs);
	f->segs = NULL;
	f->nsegs = 0;
	if (f->missing)
		m->missing--;
	f->resolved = f->missing = f->is_elf = false;
}

bool dec_perf_mem_ready_quietly(struct perf_mem *m)
{
	bool clean = true;

	if (!m)
		return false;
	pthread_mutex_lock(&m->lock);
	m->quiet = true;
	for (int i = 0; i < m->nfiles; i++) {
		struct mfile *f = &m->files[i];

		if (f->ready)
			continue;
		m->would_warn = false;
		if (i == m->kernel_file)
			resolve_kernel(m, f);
		else
			resolve(m, f);
		if (m->would_warn) {
			unresolve(m, f);
			clean = false;
		} else {
			__atomic_store_n(&f->ready, true, __ATOMIC_RELEASE);
		}
	}
	m->quiet = false;
	pthread_mutex_unlock(&m->lock);
	return clean;
}

/* Bytes at file offset @off of a ready file: from its mapping, else through its
 * block cache under the lock. */
static uint32_t read_ready(struct perf_mem *m, struct mfile *f, uint64_t off, uint32_t len,
			   uint8_t *buf)
{
	uint32_t n;

	if (f->in.map)
		return read_at(f, off, len, buf);
	pthread_mutex_lock(&m->lock);
	n = read_at(f, off, len, buf);
	pthread_mutex_unlock(&m->lock);
	return n;
}

static uint32_t read_kernel(struct perf_mem *m, uint64_t address, uint32_t len, uint8_t *buf)
{
	struct mfile *f;

	if (m->kernel_file < 0 || !ready(m, m->kernel_file))
		return 0;
	f = &m->files[m->kernel_file];
	for (int i = 0; i < f->nsegs; i++) {
		const struct seg *s = &f->segs[i];

		if (address >= s->vaddr && address < s->vaddr + s->filesz) {
			uint64_t room = s->vaddr + s->filesz - address;

			return read_ready(m, f, s->offset + (address - s->vaddr),
					  room < len ? (uint32_t)room : len, buf);
		}
	}
	return 0;
}

static uint32_t read_map(struct perf_mem *m, const struct map *mp, uint64_t address,
			 uint32_t len, uint8_t *buf)
{
	struct mfile *f = &m->files[mp->file];
	uint64_t off;

	if (!ready(m, mp->file))
		return 0;
	if (address + len > mp->end || address + len < address)
		len = (uint32_t)(mp->end - address);
	off = mp->pgoff + (address - mp->start);
	if (f->kmod)
		return dec_perf_kmod_read(f->kmod, off, len, buf);
	len = clip_to_segment(f, off, len);
	return len ? read_ready(m, f, off, len, buf) : 0;
}

/* A read as process @pid sees memory at file position @view. */
static uint32_t read_as(struct perf_mem *m, int32_t pid, uint64_t view, uint64_t address,
			uint32_t len, uint8_t *buf)
{
	if (!buf || !len)
		return 0;
	/* the current process's maps first, newest first; then any process's */
	for (int pass = 0; pass < 2; pass++) {
		for (int i = m->nmaps - 1; i >= 0; i--) {
			const struct map *mp = &m->maps[i];

			if (pass == 0 && (pid < 0 || mp->pid != pid))
				continue;
			if (view < mp->born || view >= mp->died)
				continue;
			if (address >= mp->start && address < mp->end)
				return read_map(m, mp, address, len, buf);
		}
		if (pid < 0)
			break;
	}
	return read_kernel(m, address, len, buf);
}

uint32_t dec_perf_mem_read(void *ctx, uint8_t trace_id, uint64_t address, enum cst_mem_space space,
		       uint32_t len, uint8_t *buf)
{
	struct perf_mem *m = ctx;

	(void)trace_id;
	(void)space;
	return m ? read_as(m, m->pid, m->view, address, len, buf) : 0;
}

void dec_perf_mem_cursor_init(struct perf_mem_cursor *c, struct perf_mem *m)
{
	*c = (struct perf_mem_cursor){m, m->pid, m->view};
}

uint32_t dec_perf_mem_cursor_read(void *ctx, uint8_t trace_id, uint64_t address,
				  enum cst_mem_space space, uint32_t len, uint8_t *buf)
{
	struct perf_mem_cursor *c = ctx;

	(void)trace_id;
	(void)space;
	return c ? read_as(c->m, c->pid, c->view, address, len, buf) : 0;
}
