/* Input files: regular files only, so that a name pointing at /dev/zero, a FIFO
 * or a directory is refused up front instead of read forever (or never). */
#include "cstrace/common.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

int cst_open_input(const char *path)
{
	struct stat st;
	int fd;

	if (!path) {
		errno = EINVAL;
		return -1;
	}
	/* O_NONBLOCK: opening a FIFO nobody writes would wait forever before the
	 * check below could refuse it; regular files ignore the flag. */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) < 0) {
		int e = errno;

		close(fd);
		errno = e;
		return -1;
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		errno = EINVAL;
		return -1;
	}
	if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) < 0) {
		int e = errno;

		close(fd);
		errno = e;
		return -1;
	}
	return fd;
}

FILE *cst_fopen_input(const char *path, const char *mode)
{
	int fd = cst_open_input(path);
	FILE *f;

	if (fd < 0)
		return NULL;
	f = fdopen(fd, mode);
	if (!f) {
		int e = errno;

		close(fd);
		errno = e;
	}
	return f;
}

const char *cst_input_strerror(int err)
{
	if (err == EINVAL)
		return "not a regular file (a device, FIFO or directory is not read)";
	return strerror(err);
}

int cst_mapped_input_map(struct cst_mapped_input *in)
{
	struct stat st;
	void *p;

	if (in->fd < 0 || fstat(in->fd, &st) < 0)
		return -1;
	in->size = st.st_size > 0 ? (uint64_t)st.st_size : 0;
	if (in->map || !S_ISREG(st.st_mode) || !in->size || in->size > SIZE_MAX)
		return 0;
	p = mmap(NULL, (size_t)in->size, PROT_READ, MAP_PRIVATE, in->fd, 0);
	if (p != MAP_FAILED)
		in->map = p;
	return 0;
}

void cst_mapped_input_close(struct cst_mapped_input *in)
{
	int e = errno;

	if (in->map)
		munmap((void *)in->map, (size_t)in->size);
	if (in->fd >= 0)
		close(in->fd);
	*in = (struct cst_mapped_input){.fd = -1};
	errno = e;
}
