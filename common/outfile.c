/* Output files that appear whole or not at all, never over an input: written under
 * a temporary name beside the destination and renamed over it when complete. */
#include "cstrace/common.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int cst_file_set_add(struct cst_file_set *s, const char *path)
{
	struct stat st;
	char *name;

	if (!s || !path || stat(path, &st) < 0)
		return 0; /* nothing there: no file an output could replace */
	if (cst_file_set_find(s, path))
		return 0;
	name = strdup(path);
	if (!name || CST_GROW(s->v, s->cap, s->n + 1) < 0) {
		free(name);
		return -cste_nomem;
	}
	s->v[s->n++] = (struct cst_file_id){(uint64_t)st.st_dev, (uint64_t)st.st_ino, name};
	return 0;
}

const char *cst_file_set_find(const struct cst_file_set *s, const char *path)
{
	struct stat st;

	if (!s || !path || stat(path, &st) < 0)
		return NULL;
	for (size_t i = 0; i < s->n; i++)
		if (s->v[i].dev == (uint64_t)st.st_dev && s->v[i].ino == (uint64_t)st.st_ino)
			return s->v[i].name;
	return NULL;
}

void cst_file_set_fini(struct cst_file_set *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->n; i++)
		free(s->v[i].name);
	free(s->v);
	memset(s, 0, sizeof(*s));
}

void cst_out_failed(struct cst_out *o, int errnum)
{
	if (!o->error)
		o->error = errnum ? errnum : EIO;
}

/* The stream's writes: the first failure's errno is kept, since by the time the
 * caller looks (a later fflush, fclose) errno says something else or nothing. */
static ssize_t out_cookie_write(void *ctx, const char *buf, size_t n)
{
	struct cst_out *o = ctx;
	size_t done = 0;

	if (o->error)
		return 0; /* once failed, the file is lost: do not fill the disk further */
	while (done < n) {
		ssize_t w = write(o->fd, buf + done, n - done);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			cst_out_failed(o, w < 0 ? errno : ENOSPC);
			return 0; /* stdio's error: the stream's error flag is set */
		}
		done += (size_t)w;
	}
	return (ssize_t)done;
}

static int out_cookie_close(void *ctx)
{
	(void)ctx; /* the fd is closed by cst_out_commit/abort, after its fsync */
	return 0;
}

char *cst_stream_buffer(FILE *f)
{
	const size_t size = 1 << 20;
	char *buf = malloc(size);

	if (buf && setvbuf(f, buf, _IOFBF, size) != 0) {
		free(buf);
		buf = NULL;
	}
	return buf;
}

static void out_free(struct cst_out *o)
{
	if (o->f)
		fclose(o->f);
	free(o->buf);
	o->buf = NULL;
	if (o->fd >= 0)
		close(o->fd);
	o->f = NULL;
	o->fd = -1;
	free(o->path);
	free(o->tmp);
	o->path = o->tmp = NULL;
}

static int out_stream(struct cst_out *o)
{
	static const cookie_io_functions_t io = {.write = out_cookie_write,
						 .close = out_cookie_close};

	o->f = fopencookie(o, "w", io);
	if (!o->f)
		return -1;
	/* views write hundreds of MB (a timeline: 300 MB): a write per 4 KiB, the
	 * default, cost more than formatting them */
	o->buf = cst_stream_buffer(o->f);
	return 0;
}

/* Whether @path is one of @inputs: then say so. */
static bool refuse_input(struct cst_out *o, const struct cst_file_set *inputs, const char *path)
{
	const char *input = cst_file_set_find(inputs, path);

	if (!input)
		return false;
	if (!strcmp(input, path))
		cst_logf(&o->log, cst_log_error, "%s: is the input; refusing to overwrite it", path);
	else
		cst_logf(&o->log, cst_log_error, "%s: is the input %s; refusing to overwrite it",
			 path, input);
	return true;
}

int cst_out_open(struct cst_out *o, const char *path, const struct cst_out_opts *opts)
{
	struct cst_out_opts op;
	struct stat st;
	int e;

	memset(o, 0, sizeof(*o));
	o->fd = -1;
	if (!path || !*path || cst_opts_load(&op, sizeof(op), opts, "cst_out_opts",
					       opts ? opts->log : NULL) < 0)
		return -cste_invalid;
	if (op.log)
		o->log = *op.log;
	if (refuse_input(o, op.inputs, path))
		return -cste_invalid;
	o->inputs = op.inputs;
	o->path = strdup(path);
	if (!o->path)
		return -cste_nomem;
	if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
		/* /dev/null, /dev/full, a pipe (-o >(gzip)): nothing to replace */
		if (!S_ISCHR(st.st_mode) && !S_ISFIFO(st.st_mode)) {
			cst_logf(&o->log, cst_log_error, "%s: not a regular file", path);
			out_free(o);
			return -cste_invalid;
		}
		o->fd = open(path, O_WRONLY | O_CLOEXEC);
	} else {
		if (asprintf(&o->tmp, "%s.tmp.XXXXXX", path) < 0) {
			o->tmp = NULL;
			out_free(o);
			return -cste_nomem;
		}
		/* a new name (O_EXCL): never a symlink planted where it is made */
		o->fd = mkostemp(o->tmp, O_CLOEXEC);
		if (o->fd >= 0) {
			mode_t mask = umask(0);

			umask(mask);
			/* mkostemp made it 0600; shared outputs get what the umask allows */
			fchmod(o->fd, op.private_file ? 0600 : 0666 & ~mask);
		}
	}
	if (o->fd < 0 || (op.stream && out_stream(o) < 0)) {
		e = errno;
		cst_logf(&o->log, cst_log_error, "%s: cannot create: %s", path, strerror(e));
		if (o->fd >= 0 && o->tmp)
			unlink(o->tmp);
		out_free(o);
		errno = e;
		return -cste_io;
	}
	return 0;
}

int cst_out_commit(struct cst_out *o)
{
	int e;

	if (!o->path)
		return -cste_invalid;
	if (o->f && fflush(o->f) == EOF)
		cst_out_failed(o, errno);
	if (o->f && ferror(o->f))
		cst_out_failed(o, EIO);
	/* on disk before the name says it is there: a crash then leaves the old file
	 * or the new one, never an empty one (some file systems fail ENOSPC only here) */
	if (o->tmp && fsync(o->fd) < 0 && errno != EINVAL && errno != EROFS)
		cst_out_failed(o, errno);
	if (o->f)
		fclose(o->f); /* flushed above: nothing reaches the fd now */
	o->f = NULL;
	free(o->buf);
	o->buf = NULL;
	if (close(o->fd) < 0 && errno != EINTR)
		cst_out_failed(o, errno);
	o->fd = -1;
	if (!o->error && o->tmp && refuse_input(o, o->inputs, o->path)) {
		unlink(o->tmp);
		out_free(o);
		return -cste_invalid;
	}
	if (!o->error && o->tmp && rename(o->tmp, o->path) < 0)
		cst_out_failed(o, errno);
	if (o->error) {
		e = o->error;
		cst_logf(&o->log, cst_log_error, "%s: write failed: %s", o->path, strerror(e));
		if (o->tmp)
			unlink(o->tmp);
		out_free(o);
		errno = e;
		return -cste_io;
	}
	out_free(o);
	return 0;
}

void cst_out_abort(struct cst_out *o)
{
	if (!o->path)
		return; /* closed, or zero-initialized: never opened */
	o->error = ECANCELED; /* what the stream still buffers goes nowhere */
	if (o->tmp)
		unlink(o->tmp);
	out_free(o);
}
