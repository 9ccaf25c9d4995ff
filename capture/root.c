/* File access below a system root for capture: sysfs attributes, procfs values,
 * the sink's /dev node, all through the boards stage's cst_sysroot (links re-rooted). */
#include "root.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cstrace/boards.h"
#include "cstrace/common.h"

/* A root per call: callers hold only the directory name, and a root is a
 * string copy, so nothing is cached between calls (no shared state). */
static struct cst_sysroot *open_root(const char *root)
{
	struct cst_sysroot *r = NULL;

	cst_sysroot_alloc(&r, root && *root ? root : "/");
	return r;
}

int cap_path(const char *root, const char *path, char *buf, size_t size)
{
	struct cst_sysroot *r = open_root(root);
	int n;

	if (!r)
		return -cste_nomem;
	n = cst_sysroot_path(r, path, buf, size);
	cst_sysroot_free(r);
	return n < 0 ? n : 0;
}

bool cap_exists(const char *root, const char *path)
{
	struct cst_sysroot *r = open_root(root);
	bool yes = r && cst_sysroot_exists(r, path);

	cst_sysroot_free(r);
	return yes;
}

int cap_read(const char *root, const char *path, char *buf, size_t size)
{
	struct cst_sysroot *r = open_root(root);
	int n;

	if (!r)
		return -cste_nomem;
	n = cst_sysroot_read(r, path, buf, size);
	cst_sysroot_free(r);
	return n;
}

int cap_read_u64(const char *root, const char *path, uint64_t *out)
{
	char buf[64];
	int n = cap_read(root, path, buf, sizeof(buf));

	if (n < 0)
		return n;
	return cst_parse_u64(buf, out);
}

int cap_read_s64(const char *root, const char *path, int64_t *out)
{
	struct cst_sysroot *r = open_root(root);
	int err;

	if (!r)
		return -cste_nomem;
	err = cst_sysroot_read_s64(r, path, out);
	cst_sysroot_free(r);
	return err;
}

int cap_write(const char *root, const char *path, const char *text)
{
	struct cst_sysroot *r = open_root(root);
	int err;

	if (!r)
		return -cste_nomem;
	err = cst_sysroot_write(r, path, text);
	cst_sysroot_free(r);
	return err;
}

int cap_foreach(const char *root, const char *path, int (*fn)(void *ctx, const char *name),
		void *ctx)
{
	struct cst_sysroot *r = open_root(root);
	int err;

	if (!r)
		return -cste_nomem;
	err = cst_sysroot_foreach(r, path, fn, ctx);
	cst_sysroot_free(r);
	return err;
}
