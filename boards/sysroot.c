/* The system root: every /sys, /proc, /dev and /boot access of cstrace goes through
 * here, so tests and `--root` can point the program at a fixture tree. */
#include "cstrace/boards.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct cst_sysroot {
	char dir[PATH_MAX];
	size_t len; /* 0 for the live system: paths are used as they are */
};

int cst_sysroot_alloc(struct cst_sysroot **out, const char *dir)
{
	struct cst_sysroot *root;
	size_t n;

	if (!out)
		return -cste_invalid;
	*out = NULL;
	root = calloc(1, sizeof(*root));
	if (!root)
		return -cste_nomem;
	if (!dir || !*dir)
		dir = "/";
	n = strlen(dir);
	/* Drop trailing slashes so that "dir" + "/sys" joins cleanly; "/" becomes "". */
	while (n > 0 && dir[n - 1] == '/')
		n--;
	if (n >= sizeof(root->dir) - 1) {
		free(root);
		return -cste_invalid;
	}
	memcpy(root->dir, dir, n);
	root->dir[n] = '\0';
	root->len = n;
	*out = root;
	return 0;
}

void cst_sysroot_free(struct cst_sysroot *root)
{
	free(root);
}

const char *cst_sysroot_dir(const struct cst_sysroot *root)
{
	if (!root)
		return NULL;
	return root->len ? root->dir : "/";
}

bool cst_sysroot_is_live(const struct cst_sysroot *root)
{
	return root && root->len == 0;
}

static int join(const struct cst_sysroot *root, const char *path, char *buf, size_t size)
{
	int n;

	if (!root || !path || path[0] != '/' || !buf)
		return -cste_invalid;
	n = snprintf(buf, size, "%s%s", root->dir, path);
	if (n < 0 || (size_t)n >= size)
		return -cste_nomem;
	return n;
}

int cst_sysroot_path(const struct cst_sysroot *root, const char *path, char *buf, size_t size)
{
	return join(root, path, buf, size);
}

static int errno_to_cste(int e)
{
	switch (e) {
	case ENOENT:
	case ENOTDIR:
		return -cste_not_found;
	case EACCES:
	case EPERM:
		return -cste_permission;
	case ENOMEM:
	case ENAMETOOLONG:
		return -cste_nomem;
	case EBUSY:
		return -cste_busy;
	default:
		return -cste_io;
	}
}

/* Resolve @path component by component so that absolute link targets stay inside
 * the root (a fixture tree may hold links written as on the target). */
int cst_sysroot_realpath(const struct cst_sysroot *root, const char *path, char *buf,
			 size_t size)
{
	char todo[PATH_MAX], done[PATH_MAX], host[PATH_MAX], link[PATH_MAX];
	int links = 0;

	if (!root || !path || path[0] != '/' || !buf || !size)
		return -cste_invalid;
	if (strlen(path) >= sizeof(todo))
		return -cste_nomem;
	strcpy(todo, path);
	done[0] = '\0';
	for (;;) {
		char *p = todo, *comp, *rest;
		size_t dl;
		struct stat st;
		ssize_t ln;

		while (*p == '/')
			p++;
		if (!*p)
			break;
		comp = p;
		rest = strchr(comp, '/');
		if (rest)
			*rest++ = '\0';
		else
			rest = comp + strlen(comp);
		if (!strcmp(comp, ".")) {
			memmove(todo, rest, strlen(rest) + 1);
			continue;
		}
		if (!strcmp(comp, "..")) {
			char *slash = strrchr(done, '/');

			if (slash)
				*slash = '\0';
			memmove(todo, rest, strlen(rest) + 1);
			continue;
		}
		dl = strlen(done);
		if (dl + 1 + strlen(comp) >= sizeof(done))
			return -cste_nomem;
		done[dl] = '/';
		strcpy(done + dl + 1, comp);
		if (join(root, done[0] ? done : "/", host, sizeof(host)) < 0)
			return -cste_nomem;
		if (lstat(host, &st) < 0)
			return errno_to_cste(errno);
		if (!S_ISLNK(st.st_mode)) {
			memmove(todo, rest, strlen(rest) + 1);
			continue;
		}
		if (++links > 40)
			return -cste_io; /* a link loop */
		ln = readlink(host, link, sizeof(link) - 1);
		if (ln < 0)
			return errno_to_cste(errno);
		link[ln] = '\0';
		done[dl] = '\0'; /* the link itself is replaced by its target */
		if (link[0] == '/')
			done[0] = '\0';
		{
			char next[PATH_MAX];
			int n = snprintf(next, sizeof(next), "%s/%s", link, rest);

			if (n < 0 || (size_t)n >= sizeof(next))
				return -cste_nomem;
			strcpy(todo, next);
		}
	}
	if (!done[0])
		strcpy(done, "/");
	if (strlen(done) >= size)
		return -cste_nomem;
	strcpy(buf, done);
	return (int)strlen(done);
}

/* The host path to use for I/O on @path: resolved inside the root unless live. */
static int host_path(const struct cst_sysroot *root, const char *path, char *buf, size_t size)
{
	char resolved[PATH_MAX];
	int err;

	if (!root || !path || path[0] != '/')
		return -cste_invalid;
	if (root->len == 0)
		return join(root, path, buf, size);
	err = cst_sysroot_realpath(root, path, resolved, sizeof(resolved));
	if (err < 0)
		return err;
	return join(root, resolved, buf, size);
}

bool cst_sysroot_exists(const struct cst_sysroot *root, const char *path)
{
	char host[PATH_MAX];

	if (host_path(root, path, host, sizeof(host)) < 0)
		return false;
	return access(host, F_OK) == 0;
}

int cst_sysroot_open(const struct cst_sysroot *root, const char *path, int flags)
{
	char host[PATH_MAX];
	int err = host_path(root, path, host, sizeof(host));
	int fd;

	if (err < 0)
		return err;
	fd = open(host, flags | O_CLOEXEC);
	if (fd < 0)
		return errno_to_cste(errno);
	return fd;
}

/* Read up to @len bytes into @buf from @fd (fewer at its end), or write them
 * all (@writing), through interruptions: the bytes done, or a negative error. */
static ssize_t transfer(int fd, void *buf, size_t len, bool writing)
{
	size_t done = 0;

	while (done < len) {
		ssize_t n = writing ? write(fd, (char *)buf + done, len - done)
				    : read(fd, (char *)buf + done, len - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return errno_to_cste(errno);
		if (n == 0)
			break;
		done += (size_t)n;
	}
	return (ssize_t)done;
}

int cst_sysroot_read(const struct cst_sysroot *root, const char *path, char *buf, size_t size)
{
	size_t len;
	ssize_t n;
	int fd;

	if (!buf || !size)
		return -cste_invalid;
	fd = cst_sysroot_open(root, path, O_RDONLY);
	if (fd < 0)
		return fd;
	n = transfer(fd, buf, size - 1, false);
	close(fd);
	if (n < 0)
		return (int)n;
	len = (size_t)n;
	buf[len] = '\0';
	while (len > 0 && (buf[len - 1] == '\n' || buf[len - 1] == ' '))
		buf[--len] = '\0';
	return (int)len;
}

int cst_sysroot_read_s64(const struct cst_sysroot *root, const char *path, int64_t *out)
{
	char text[64], *end;
	long long v;
	int err;

	if (!out)
		return -cste_invalid;
	err = cst_sysroot_read(root, path, text, sizeof(text));
	if (err < 0)
		return err;
	errno = 0;
	v = strtoll(text, &end, 0);
	if (errno || end == text || *end)
		return -cste_format;
	*out = v;
	return 0;
}

int cst_sysroot_write(const struct cst_sysroot *root, const char *path, const char *text)
{
	size_t len;
	ssize_t n;
	int fd;

	if (!text)
		return -cste_invalid;
	fd = cst_sysroot_open(root, path, O_WRONLY | O_TRUNC);
	if (fd < 0)
		return fd;
	len = strlen(text);
	n = transfer(fd, (void *)text, len, true);
	if (n >= 0 && (size_t)n < len)
		n = -cste_io; /* a write that took nothing */
	if (n < 0) {
		close(fd);
		return (int)n;
	}
	if (close(fd) < 0)
		return errno_to_cste(errno);
	return 0;
}

/* "etm10" after "etm9": compare digit runs as numbers, the rest as bytes. */
static int natural_cmp(const void *a, const void *b)
{
	const char *x = *(const char *const *)a, *y = *(const char *const *)b;

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

int cst_sysroot_foreach(const struct cst_sysroot *root, const char *path, cst_sysroot_dir_fn fn,
			void *ctx)
{
	char host[PATH_MAX];
	char **names = NULL;
	size_t n = 0, cap = 0;
	struct dirent *de;
	DIR *d;
	int err, ret = 0;

	if (!fn)
		return -cste_invalid;
	err = host_path(root, path, host, sizeof(host));
	if (err < 0)
		return err;
	d = opendir(host);
	if (!d)
		return errno_to_cste(errno);
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (CST_GROW(names, cap, n + 1) < 0) {
			ret = -cste_nomem;
			goto out;
		}
		names[n] = strdup(de->d_name);
		if (!names[n]) {
			ret = -cste_nomem;
			goto out;
		}
		n++;
	}
	if (n)
		qsort(names, n, sizeof(*names), natural_cmp);
	for (size_t i = 0; i < n && !ret; i++)
		ret = fn(ctx, names[i]);
out:
	closedir(d);
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	return ret;
}
