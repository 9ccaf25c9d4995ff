/* Internal to decode/perf/: code memory for decoding perf.data, from the files its MMAP2
 * records name (path, symfs, build-id cache) and an optional vmlinux/kcore. */
#ifndef CSTRACE_DECODE_PERF_MEM_H
#define CSTRACE_DECODE_PERF_MEM_H

#include <stdbool.h>
#include <stdint.h>

#include "cstrace/decode.h"

struct perf_mem;

/** Where to look for binaries: @symfs root, @buildid_dir (NULL = ~/.debug), and
 *  @kernel (vmlinux or kcore, mapped at its ELF addresses). Strings are copied. */
struct perf_mem *dec_perf_mem_alloc(const char *symfs, const char *buildid_dir, const char *kernel,
				const struct cst_log *log);
void dec_perf_mem_free(struct perf_mem *m);
/** Look in @symdir too (cst_bin_lookup's order); not copied. */
void dec_perf_mem_set_symdir(struct perf_mem *m, const struct cst_symdir *symdir);
/** Tell @fn every file found for a recorded mapping (cst_session_opts.file). */
void dec_perf_mem_set_file_fn(struct perf_mem *m, int (*fn)(void *ctx, const char *path),
			      void *ctx);

/** The binaries the user named, "FILE[@ADDR]" (--elf; cst_bin_places.elfs): each
 *  FILE without @ADDR is the recorded binary with its build-id or base name, as
 *  given. Not copied. */
void dec_perf_mem_set_given(struct perf_mem *m, const char *const *elfs, int n);

/** A build-id known for @filename (BUILD_ID feature), used when its MMAP2 has none. */
int dec_perf_mem_add_build_id(struct perf_mem *m, const char *filename, const uint8_t *id,
			  uint8_t size);

/** The build-id known for @filename (its MMAP2's, or the BUILD_ID feature's),
 *  with its size in *@size; NULL when none is. */
const uint8_t *dec_perf_mem_build_id(const struct perf_mem *m, const char *filename,
				     uint8_t *size);

/** An executable mapping of process @pid (MMAP/MMAP2). Newer maps hide older
 *  overlapping ones of the same process. */
int dec_perf_mem_add_map(struct perf_mem *m, int32_t pid, uint64_t start, uint64_t len,
		     uint64_t pgoff, const char *filename, const uint8_t *build_id,
		     uint8_t build_id_size);

/** Forget the maps of @pid (exec), from the current clock on. */
void dec_perf_mem_drop_pid(struct perf_mem *m, int32_t pid);

/** Maps added or dropped from now on are so from file position @pos (the record
 *  being applied). Reads see the maps alive at the view position: that of the AUX
 *  record whose trace is decoded (trace may be decoded out of file order). */
void dec_perf_mem_set_clock(struct perf_mem *m, uint64_t pos);
void dec_perf_mem_set_view(struct perf_mem *m, uint64_t pos);

/** The process whose address space the next reads use (-1: any process). */
void dec_perf_mem_set_pid(struct perf_mem *m, int32_t pid);

/** cst_mem_read_fn: copy up to @len bytes at @address; 0 when not accessible. */
uint32_t dec_perf_mem_read(void *ctx, uint8_t trace_id, uint64_t address, enum cst_mem_space space,
		       uint32_t len, uint8_t *buf);

/** A reader of @m of its own, for a decoding thread: it sees the maps of process
 *  @pid alive at file position @view (both taken from @m when made, and changed
 *  by its owner). Cursors on several threads may read at once, as long as nothing
 *  changes the maps meanwhile. */
struct perf_mem_cursor {
	struct perf_mem *m;
	int32_t pid;
	uint64_t view;
};
void dec_perf_mem_cursor_init(struct perf_mem_cursor *c, struct perf_mem *m);
/** cst_mem_read_fn through a cursor (@ctx). */
uint32_t dec_perf_mem_cursor_read(void *ctx, uint8_t trace_id, uint64_t address,
				  enum cst_mem_space space, uint32_t len, uint8_t *buf);

/** Find every file the maps name now, where that needs no warning (a file not
 *  found, or one whose build-id does not match where it was looked for, is left
 *  to be found and warned about when first read). True when every file was:
 *  reads then never warn, whichever thread reads first. */
bool dec_perf_mem_ready_quietly(struct perf_mem *m);

/** Files that could not be found (each warned once). */
int dec_perf_mem_missing(const struct perf_mem *m);

/* mem_kmod.c: a kernel module's code (ET_REL) where the kernel lays it out
 * (cst_kmod_layout), from a copy of the file whose branches within the module are
 * relocated (cst_kmod_relocate): the module is small, the kernel keeps it whole. */
struct perf_kmod;
/** The module @e (open on @fd) is, or NULL when it is none (no ET_REL with code)
 *  or cannot be read (its code then is not decoded). */
struct perf_kmod *dec_perf_kmod_load(struct Elf *e, int fd);
/** Up to @len bytes of its code at @at from its .text (the mapping's start), as
 *  far as the section there goes; 0 outside its code. */
uint32_t dec_perf_kmod_read(const struct perf_kmod *k, uint64_t at, uint32_t len, uint8_t *buf);
void dec_perf_kmod_free(struct perf_kmod *k);

#endif
