/* File access below a system root for capture: sysfs attributes, procfs values,
 * the sink's /dev node. Tests point the root at a fixture tree. */
#include "root.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cstrace/common.h"

int cap_path(const char *root, const char *path, char *buf, size_t size)
{
	int n;

	if (!root || !*root || !strcmp(root, "/"))
		root = "";
	n = snprintf(buf, size, "%s%s", root, path);
	return n < 0 || (size_t)n >= size ? -cste_invalid : 0;
}

static int errno_code(int e)
{
	if (e == ENOENT || e == ENOTDIR)
		return -cste_not_found;
	if (e == EACCES || e == EPERM)
		return -cste_permission;
	return -cste_io;
}

int cap_read(const char *root, const char *path, char *buf, size_t size)
{
	char p[4096];
	ssize_t n;
	int fd;

	if (!buf || size < 2 || cap_path(root, path, p, sizeof(p)) < 0)
		return -cste_invalid;
	fd = open(p, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno_code(errno);
	n = read(fd, buf, size - 1);
	close(fd);
	if (n < 0)
		return errno_code(errno);
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
		n--;
	buf[n] = 0;
	return (int)n;
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
	char buf[64], *end;
	int n = cap_read(root, path, buf, sizeof(buf));

	if (n < 0)
		return n;
	errno = 0;
	*out = strtoll(buf, &end, 0);
	return errno || end == buf || *end ? -cste_format : 0;
}

int cap_write(const char *root, const char *path, const char *text)
{
	char p[4096];
	size_t len = strlen(text);
	ssize_t n;
	int fd;

	if (cap_path(root, path, p, sizeof(p)) < 0)
		return -cste_invalid;
	/* O_TRUNC lets a fixture's regular file stand for the attribute. */
	fd = open(p, O_WRONLY | O_CLOEXEC | O_TRUNC);
	if (fd < 0)
		return errno_code(errno);
	n = write(fd, text, len);
	if (n < 0) {
		int e = errno;
		close(fd);
		return errno_code(e);
	}
	return close(fd) < 0 || (size_t)n != len ? -cste_io : 0;
}

/* Names compare with embedded numbers as numbers: cpu2 < cpu10. */
static int natural_cmp(const void *a, const void *b)
{
	const char *x = *(char *const *)a, *y = *(char *const *)b;

	while (*x && *y) {
		if (*x >= '0' && *x <= '9' && *y >= '0' && *y <= '9') {
			unsigned long long u = strtoull(x, (char **)&x, 10);
			unsigned long long v = strtoull(y, (char **)&y, 10);
			if (u != v)
				return u < v ? -1 : 1;
			continue;
		}
		if (*x != *y)
			return (unsigned char)*x - (unsigned char)*y;
		x++;
		y++;
	}
	return (unsigned char)*x - (unsigned char)*y;
}

int cap_foreach(const char *root, const char *path, int (*fn)(void *ctx, const char *name),
		void *ctx)
{
	char p[4096], **names = NULL;
	size_t n = 0, cap = 0;
	struct dirent *de;
	DIR *d;
	int ret = 0;

	if (cap_path(root, path, p, sizeof(p)) < 0)
		return -cste_invalid;
	d = opendir(p);
	if (!d)
		return errno_code(errno);
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (n == cap) {
			char **nn = realloc(names, (cap = cap ? 2 * cap : 32) * sizeof(*names));
			if (!nn) {
				ret = -cste_nomem;
				break;
			}
			names = nn;
		}
		if (!(names[n] = strdup(de->d_name))) {
			ret = -cste_nomem;
			break;
		}
		n++;
	}
	closedir(d);
	if (!ret)
		qsort(names, n, sizeof(*names), natural_cmp);
	for (size_t i = 0; i < n; i++) {
		if (!ret)
			ret = fn(ctx, names[i]);
		free(names[i]);
	}
	free(names);
	return ret;
}
