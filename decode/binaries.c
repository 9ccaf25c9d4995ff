/* Finding a recorded binary on this host: the one order both the code reads of
 * decode (perf/mem.c) and the symbols of symbolize (dso.c) follow, so that they
 * never read two different files for the same mapping. */
#include "decode_int.h"

#include <stdio.h>
#include <stdlib.h>

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
