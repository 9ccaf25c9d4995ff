/* Output files that hold trace: created private, never over the user's old file. */
#include "cstrace/common.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

int cst_create_private(const char *path)
{
	struct stat st;
	char *old;
	int fd;

	if (lstat(path, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISLNK(st.st_mode))
		return open(path, O_WRONLY | O_CLOEXEC);
	if (lstat(path, &st) == 0) {
		if (asprintf(&old, "%s.old", path) < 0)
			return -1;
		fd = rename(path, old);
		free(old);
		if (fd < 0)
			return -1; /* errno from rename: the caller says why */
	}
	/* O_EXCL: never through a symlink planted after the rename */
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd >= 0)
		fchmod(fd, 0600); /* whatever the umask */
	return fd;
}
