/* Which profile describes the running system: the one whose compatible strings
 * match the device tree's most specific entry. */
#include "board_int.h"

#include <string.h>
#include <unistd.h>

struct detect_ctx {
	const char *dir;
	const char *compat; /* NUL-separated list */
	size_t compat_len;
	const struct cst_log *log;
	struct cst_board *found;
	int best; /* index in the DT list of the best match: lower is more specific */
	int err;
};

static int detect_one(void *ctx, const char *name)
{
	struct detect_ctx *d = ctx;
	struct cst_board *b;
	int best = -1;

	if (cst_board_find(&b, d->dir, name, d->log) < 0)
		return 0; /* a broken profile must not hide the others; it was logged */
	for (int i = 0; i < b->ncompatibles && best != 0; i++) {
		int idx = 0;

		for (size_t off = 0; off < d->compat_len; off += strlen(d->compat + off) + 1, idx++)
			if (!strcmp(d->compat + off, b->compatibles[i]) && (best < 0 || idx < best))
				best = idx;
	}
	if (best >= 0 && (d->best < 0 || best < d->best)) {
		cst_board_free(d->found);
		d->found = b;
		d->best = best;
		return 0;
	}
	cst_board_free(b);
	return 0;
}

int cst_board_detect(struct cst_board **out, const struct cst_sysroot *root, const char *dir,
		     const struct cst_log *log)
{
	char compat[4096];
	struct detect_ctx d = {0};
	int fd, err;
	ssize_t n;

	if (!out || !root)
		return -cste_invalid;
	*out = NULL;
	/* compatible is a list of NUL-terminated strings: read it raw. */
	fd = cst_sysroot_open(root, "/proc/device-tree/compatible", 0);
	if (fd < 0)
		return fd == -cste_not_found ? -cste_not_found : fd;
	n = read(fd, compat, sizeof(compat) - 1);
	close(fd);
	if (n <= 0)
		return -cste_not_found;
	compat[n] = '\0';
	d.dir = dir;
	d.compat = compat;
	d.compat_len = (size_t)n;
	d.log = log;
	d.best = -1;
	err = cst_boards_foreach(dir, detect_one, &d);
	if (err < 0) {
		cst_board_free(d.found);
		return err;
	}
	if (!d.found)
		return -cste_not_found;
	*out = d.found;
	return 0;
}
