/* Finding a recorded binary on this host: the one order both the code reads of
 * decode (perf/mem.c) and the symbols of symbolize (dso.c) follow, so that they
 * never read two different files for the same mapping. */
#include "decode_int.h"
#include "elf_build_id.h"

#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* @id as hex, at most 64 bytes of it (build-ids are 8 to 20 in practice) */
static void hex_id(const uint8_t *id, size_t size, char *out)
{
	if (size > 64)
		size = 64;
	for (size_t i = 0; i < size; i++)
		snprintf(out + 2 * i, 3, "%02x", id[i]);
	out[2 * size] = '\0';
}

/* @root joined with @path (as @path without a root); false when it does not fit */
static bool join(char *out, size_t size, const char *root, const char *path)
{
	int n = snprintf(out, size, "%s%s%s", root ? root : "",
			 root && *root && path[0] != '/' ? "/" : "", path);

	return n >= 0 && (size_t)n < size;
}

/* The build-id of the ELF file @path (0 bytes: none, or not readable). */
static uint8_t file_build_id(const char *path, uint8_t id[20])
{
	int fd = cst_open_input(path);
	Elf *e;
	uint8_t n = 0;

	if (fd < 0)
		return 0;
	elf_version(EV_CURRENT);
	e = elf_begin(fd, ELF_C_READ, NULL);
	if (e && elf_kind(e) == ELF_K_ELF)
		n = dec_elf_build_id(e, id);
	if (e)
		elf_end(e);
	close(fd);
	return n;
}

/* The binary the user named (--elf FILE without @ADDR) that stands for
 * @recorded: the first with its build-id, else the first of its base name (of
 * name.ko for a module recorded as "[name]"); into @out. */
static bool given(const struct cst_bin_places *pl, const char *recorded, const uint8_t *bid,
		  size_t bid_size, char *out, size_t size)
{
	char path[4096], ko[256] = "";
	const char *want = cst_path_base(recorded);
	bool named = false;

	if (cst_kmod_name(recorded, ko, sizeof(ko)) && *ko)
		want = ko;
	for (int i = 0; pl->elfs && i < pl->nelfs; i++) {
		uint64_t addr;
		uint8_t id[20], n;

		if (!pl->elfs[i] || cst_parse_file_at(pl->elfs[i], path, sizeof(path), &addr) != 0)
			continue; /* placed at an address of its own: not a recorded one's */
		n = bid_size ? file_build_id(path, id) : 0;
		if (n && cst_build_id_equal(id, n, bid, bid_size)) {
			snprintf(out, size, "%s", path);
			return true;
		}
		if (!named && !strcmp(cst_path_base(path), want)) {
			snprintf(out, size, "%s", path);
			named = true;
		}
	}
	return named;
}

int cst_bin_lookup(const struct cst_bin_places *pl, const char *recorded, const uint8_t *bid,
		   size_t bid_size, enum cst_symdir_want want, cst_bin_try_fn try, void *ctx)
{
	static const struct cst_bin_places none;
	const char *symfs, *found;
	char p[4096], id[129], dir[4096];
	bool module;

	if (!recorded || !try || (bid_size && !bid))
		return -cste_invalid;
	if (!pl)
		pl = &none;
	symfs = pl->symfs && *pl->symfs ? pl->symfs : NULL;
	/* what the user named is the binary used, as given */
	if (given(pl, recorded, bid, bid_size, p, sizeof(p)) && try(ctx, p, cst_bin_given))
		return 0;
	hex_id(bid, bid_size, id);
	if (bid_size) {
		const char *cache = pl->buildid_dir, *home = getenv("HOME");

		if (!cache && home && join(dir, sizeof(dir), home, ".debug"))
			cache = dir;
		if (cache && snprintf(p, sizeof(p), "%s/.build-id/%.2s/%s/elf", cache, id, id + 2) <
				     (int)sizeof(p) &&
		    try(ctx, p, cst_bin_cache))
			return 0;
	}
	/* a module recorded as "[name]" has no path to look under */
	module = cst_kmod_name(recorded, NULL, 0);
	if (!module && join(p, sizeof(p), symfs, recorded) && try(ctx, p, cst_bin_symfs))
		return 0;
	if (pl->symdir && (found = cst_symdir_find(pl->symdir, recorded, bid, bid_size, want)) &&
	    try(ctx, found, cst_bin_symdir))
		return 0;
	if (!module && symfs && bid_size && try(ctx, recorded, cst_bin_recorded))
		return 0;
	if (want != cst_symdir_symbols || !bid_size)
		return -cste_not_found;
	/* nothing with the code: a separate debug file still has symbols and lines */
	if (pl->debug_dir &&
	    snprintf(p, sizeof(p), "%s/.build-id/%.2s/%s.debug", pl->debug_dir, id, id + 2) <
		    (int)sizeof(p) &&
	    try(ctx, p, cst_bin_debug))
		return 0;
	if (join(dir, sizeof(dir), symfs, "/usr/lib/debug") &&
	    snprintf(p, sizeof(p), "%s/.build-id/%.2s/%s.debug", dir, id, id + 2) < (int)sizeof(p) &&
	    try(ctx, p, cst_bin_debug))
		return 0;
	return -cste_not_found;
}
