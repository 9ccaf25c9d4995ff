/* Temporary files for held data (see struct cst_spill in cstrace/common.h). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cstrace/common.h"

static int spill_open(void)
{
	const char *dir = getenv("TMPDIR");
	char path[PATH_MAX];
	int fd;

	if (!dir || !*dir)
		dir = "/tmp";
	fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (fd >= 0 || (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL))
		return fd;
	/* a file system without O_TMPFILE: a named file, gone from the directory at once */
	if (snprintf(path, sizeof(path), "%s/cstrace-spill-XXXXXX", dir) >= (int)sizeof(path)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	fd = mkostemp(path, O_CLOEXEC);
	if (fd >= 0)
		unlink(path);
	return fd;
}

int cst_spill_write(struct cst_spill *s, const void *p, size_t n, uint64_t *off)
{
	const uint8_t *b = p;
	uint64_t at;

	if (!s->fd_plus1) {
		int fd = spill_open();

		if (fd < 0)
			return -cste_io;
		s->fd_plus1 = fd + 1;
		s->end = 0;
	}
	at = s->end;
	while (n) {
		ssize_t w = pwrite(s->fd_plus1 - 1, b, n, (off_t)s->end);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			if (w == 0)
				errno = ENOSPC;
			return -cste_io;
		}
		b += w;
		n -= (size_t)w;
		s->end += (uint64_t)w;
	}
	*off = at;
	return 0;
}

int cst_spill_read(struct cst_spill *s, uint64_t off, void *p, size_t n)
{
	uint8_t *b = p;

	if (!s->fd_plus1 || off > s->end || n > s->end - off) {
		errno = EINVAL;
		return -cste_io;
	}
	while (n) {
		ssize_t r = pread(s->fd_plus1 - 1, b, n, (off_t)off);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			if (r == 0)
				errno = EIO; /* shorter than written: someone truncated it */
			return -cste_io;
		}
		b += r;
		n -= (size_t)r;
		off += (uint64_t)r;
	}
	return 0;
}

void cst_spill_reset(struct cst_spill *s)
{
	if (s->fd_plus1 && s->end && ftruncate(s->fd_plus1 - 1, 0) == 0)
		s->end = 0;
}

void cst_spill_close(struct cst_spill *s)
{
	if (s->fd_plus1)
		close(s->fd_plus1 - 1);
	s->fd_plus1 = 0;
	s->end = 0;
}
