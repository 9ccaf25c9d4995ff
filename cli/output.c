/* Output files that appear whole or not at all: written under a temporary name in
 * the same directory and renamed over the destination only when complete, so an
 * interrupted run never leaves half a file or destroys the previous one. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

bool cli_same_file(const char *a, const char *b)
{
	struct stat sa, sb;

	return a && b && !stat(a, &sa) && !stat(b, &sb) && sa.st_dev == sb.st_dev &&
	       sa.st_ino == sb.st_ino;
}

int cli_out_open(struct cli_out *o, const char *path, const char *input, bool private_file)
{
	struct stat a;
	int fd;
	mode_t mask;

	memset(o, 0, sizeof(*o));
	o->f = stdout;
	if (!path || !strcmp(path, "-"))
		return 0;
	if (cli_same_file(path, input)) {
		cli_error("%s: is the input; refusing to overwrite it", path);
		return -1;
	}
	if (stat(path, &a) == 0 && !S_ISREG(a.st_mode)) {
		cli_error("%s: not a regular file", path);
		return -1;
	}
	if (asprintf(&o->tmp, "%s.tmp.XXXXXX", path) < 0) {
		o->tmp = NULL;
		cli_error("out of memory");
		return -1;
	}
	fd = mkstemp(o->tmp);
	if (fd < 0) {
		cli_error("%s: cannot create: %s", path, strerror(errno));
		free(o->tmp);
		o->tmp = NULL;
		return -1;
	}
	cli_note_tmp(o->tmp, true);
	/* mkstemp makes 0600; other outputs get what the umask allows */
	if (!private_file) {
		mask = umask(0);
		umask(mask);
		fchmod(fd, 0666 & ~mask);
	}
	o->f = fdopen(fd, "w");
	if (!o->f) {
		close(fd);
		unlink(o->tmp);
		cli_note_tmp(o->tmp, false);
		free(o->tmp);
		o->tmp = NULL;
		o->f = stdout;
		cli_error("%s: cannot create: %s", path, strerror(errno));
		return -1;
	}
	/* views write hundreds of MB (a timeline: 300 MB): a write per 4 KiB, the
	 * default, cost more than formatting them */
	setvbuf(o->f, NULL, _IOFBF, 1 << 20);
	o->path = path;
	return 0;
}

int cli_out_commit(struct cli_out *o)
{
	int err = 0;

	if (fflush(o->f) == EOF || ferror(o->f))
		err = -1;
	if (!o->tmp) {
		if (err)
			cli_error("standard output: write failed: %s", strerror(errno));
		return err;
	}
	if (fsync(fileno(o->f)) < 0 && errno != EINVAL)
		err = -1;
	if (fclose(o->f) == EOF)
		err = -1;
	o->f = stdout;
	if (!err && rename(o->tmp, o->path) < 0)
		err = -1;
	if (err) {
		cli_error("%s: write failed: %s", o->path, strerror(errno));
		unlink(o->tmp);
	}
	cli_note_tmp(o->tmp, false);
	free(o->tmp);
	o->tmp = NULL;
	return err;
}

void cli_out_abort(struct cli_out *o)
{
	if (!o->tmp)
		return;
	fclose(o->f);
	o->f = stdout;
	unlink(o->tmp);
	cli_note_tmp(o->tmp, false);
	free(o->tmp);
	o->tmp = NULL;
}

int cli_out_close(struct cli_out *o, int status)
{
	if (status == 0 && o->tmp && cli_out_commit(o) < 0)
		return 1;
	if (status)
		cli_out_abort(o);
	return status;
}

int cli_out_write(const char *path, const char *input, int (*write)(const void *obj, FILE *f),
		  const void *obj)
{
	struct cli_out o;

	if (cli_out_open(&o, path, input, false) < 0)
		return -1;
	if (write(obj, o.f) < 0) {
		cli_out_abort(&o);
		cli_error("%s: writing failed", path);
		return -1;
	}
	return cli_out_commit(&o);
}
