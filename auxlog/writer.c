/* Writing a recorded AUX stream. Events are gathered and written whole at least every
 * half second (or 256 KiB): one write per event would double the consumer's system
 * calls; so a capture that dies leaves a stream that reads up to its last event
 * before the last flush. */
#include "internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define FLUSH_BYTES (256 << 10)
#define FLUSH_NS 500000000ull

struct cst_auxlog_writer {
	struct cst_auxlog_writer_opts opts;
	char *path;
	int fd;
	struct cst_out out; /* opts.whole: the file being written (fd is its fd) */
	int error; /* the first error; everything after it is refused */
	struct cst_buf buf;     /* the event being encoded */
	struct cst_buf pending; /* whole events not yet written */
	uint64_t flushed_at; /* CLOCK_MONOTONIC ns of the last write */
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int write_all(int fd, const uint8_t *p, size_t n)
{
	while (n) {
		ssize_t k = write(fd, p, n);

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return -1;
		p += k;
		n -= (size_t)k;
	}
	return 0;
}

static int fail(struct cst_auxlog_writer *w, int err)
{
	if (!w->error) {
		w->error = err;
		cst_logf(w->opts.log, cst_log_error, "%s: writing the AUX stream failed: %s", w->path,
			 err == -cste_io ? strerror(errno) : cst_strerror(err));
	}
	return err;
}

int cst_auxlog_writer_open(struct cst_auxlog_writer **out, const char *path,
			   const struct cst_auxlog_writer_opts *opts)
{
	struct cst_auxlog_writer *w;
	uint8_t hdr[AUXLOG_FILE_HEADER];

	if (!out || !path)
		return -cste_invalid;
	*out = NULL;
	w = calloc(1, sizeof(*w));
	if (!w)
		return -cste_nomem;
	w->fd = w->out.fd = -1;
	if (cst_opts_load(&w->opts, sizeof(w->opts), opts, "cst_auxlog_writer_opts",
			  opts ? opts->log : NULL) < 0) {
		free(w);
		return -cste_invalid;
	}
	w->path = strdup(path);
	if (!w->path) {
		cst_auxlog_writer_free(w);
		return -cste_nomem;
	}
	if (w->opts.whole) {
		struct cst_out_opts oo = {.sz = sizeof(oo), .log = w->opts.log,
					  .inputs = w->opts.inputs, .private_file = true};
		int err = cst_out_open(&w->out, path, &oo);

		if (err < 0) {
			cst_auxlog_writer_free(w);
			return err;
		}
		w->fd = w->out.fd;
	} else if (cst_file_set_find(w->opts.inputs, path)) {
		cst_logf(w->opts.log, cst_log_error, "%s: is the input %s; refusing to overwrite it",
			 path, cst_file_set_find(w->opts.inputs, path));
		cst_auxlog_writer_free(w);
		return -cste_invalid;
	} else if ((w->fd = cst_create_private(path)) < 0) {
		cst_logf(w->opts.log, cst_log_error, "cannot create %s: %s", path, strerror(errno));
		cst_auxlog_writer_free(w);
		return -cste_io;
	}
	w->opts.inputs = NULL; /* the caller's, looked at here only */
	memcpy(hdr, AUXLOG_MAGIC, 8);
	cst_put_le32(hdr + 8, AUXLOG_VERSION);
	cst_put_le32(hdr + 12, AUXLOG_FILE_HEADER);
	if (write_all(w->fd, hdr, sizeof(hdr))) {
		int err = fail(w, -cste_io);

		cst_auxlog_writer_free(w);
		return err;
	}
	w->flushed_at = now_ns();
	*out = w;
	return 0;
}

static int flush(struct cst_auxlog_writer *w)
{
	if (w->error || !w->pending.len)
		return w->error;
	if (write_all(w->fd, w->pending.p, w->pending.len))
		return fail(w, -cste_io);
	w->pending.len = 0;
	w->flushed_at = now_ns();
	return 0;
}

int cst_auxlog_write(struct cst_auxlog_writer *w, const struct cst_auxlog_event *ev)
{
	int err;

	if (!w || !ev)
		return -cste_invalid;
	if (w->error)
		return w->error;
	w->buf.len = 0;
	w->buf.failed = false;
	/* the header's size is filled in once the payload is encoded */
	if (!cst_buf_room(&w->buf, AUXLOG_EVENT_HEADER))
		return fail(w, -cste_nomem);
	memset(w->buf.p, 0, AUXLOG_EVENT_HEADER);
	err = auxlog_encode(&w->buf, ev);
	if (err == -cste_invalid) {
		cst_logf(w->opts.log, cst_log_error, "%s: a %s event the format cannot hold (a bug)",
			 w->path, cst_auxlog_type_name(ev->type));
		return err; /* the stream itself is still whole */
	}
	if (err < 0)
		return fail(w, err);
	cst_put_le32(w->buf.p, (uint32_t)ev->type);
	cst_put_le64(w->buf.p + 8, w->buf.len);
	cst_put_le64(w->buf.p + 16, ev->time);
	if (w->buf.len >= FLUSH_BYTES) { /* a big read: no second copy */
		err = flush(w);
		if (err)
			return err;
		if (write_all(w->fd, w->buf.p, w->buf.len))
			return fail(w, -cste_io);
		w->flushed_at = now_ns();
		return 0;
	}
	if (!cst_buf_put(&w->pending, w->buf.p, w->buf.len))
		return fail(w, -cste_nomem);
	if (w->pending.len >= FLUSH_BYTES || now_ns() - w->flushed_at >= FLUSH_NS)
		return flush(w);
	return 0;
}

int cst_auxlog_writer_finish(struct cst_auxlog_writer *w)
{
	if (!w)
		return -cste_invalid;
	flush(w);
	if (w->opts.whole && w->fd >= 0) {
		if (w->error) /* logged, naming the cause: no second line */
			return w->error;
		w->fd = -1; /* closed by the commit, or by its failure */
		if (cst_out_commit(&w->out) < 0)
			w->error = -cste_io;
		return w->error;
	}
	if (!w->error && fsync(w->fd) && errno != EINVAL && errno != EROFS)
		return fail(w, -cste_io);
	return w->error;
}

void cst_auxlog_writer_free(struct cst_auxlog_writer *w)
{
	if (!w)
		return;
	if (w->out.path) {
		cst_out_abort(&w->out); /* whole, unfinished: nothing remains */
	} else if (w->fd >= 0) {
		flush(w); /* what a finish would have written (an error is logged) */
		close(w->fd);
	}
	cst_buf_fini(&w->pending);
	cst_buf_fini(&w->buf);
	free(w->path);
	free(w);
}
