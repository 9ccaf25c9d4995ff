/* Reading a recorded AUX stream event by event. Sizes are checked against the file
 * before anything is allocated, so a hostile stream costs at most its own size. */
#include "internal.h"

#include <errno.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct cst_auxlog_reader {
	struct cst_auxlog_reader_opts opts;
	char *path;
	int fd;
	uint64_t file_size;
	uint64_t offset; /* past the last whole event */
	uint8_t *buf;
	size_t cap;
	struct ascratch scratch;
	struct cst_perf_etm_info info; /* the last etm-info event's CPUs, freed on the next */
};

/* Read exactly @n bytes at @off; returns the bytes read (short at the end) or -1. */
static int64_t read_at(int fd, uint64_t off, void *p, uint64_t n)
{
	uint64_t done = 0;

	while (done < n) {
		ssize_t k = pread(fd, (uint8_t *)p + done, (size_t)(n - done), (off_t)(off + done));

		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			return -1;
		if (k == 0)
			break;
		done += (uint64_t)k;
	}
	return (int64_t)done;
}

static int bad(struct cst_auxlog_reader *r, uint64_t off, const char *what)
{
	cst_logf(r->opts.log, cst_log_error, "%s: offset 0x%llx: %s", r->path,
		 (unsigned long long)off, what);
	return -cste_format;
}

bool cst_auxlog_probe(const char *path)
{
	uint8_t magic[8];
	int fd = path ? cst_open_input(path) : -1;
	bool yes;

	if (fd < 0)
		return false;
	yes = read_at(fd, 0, magic, sizeof(magic)) == (int64_t)sizeof(magic) &&
	      !memcmp(magic, AUXLOG_MAGIC, sizeof(magic));
	close(fd);
	return yes;
}

int cst_auxlog_reader_open(struct cst_auxlog_reader **out, const char *path,
			   const struct cst_auxlog_reader_opts *opts)
{
	struct cst_auxlog_reader *r;
	uint8_t hdr[AUXLOG_FILE_HEADER];
	struct stat st;
	int err;

	if (!out || !path)
		return -cste_invalid;
	*out = NULL;
	r = calloc(1, sizeof(*r));
	if (!r)
		return -cste_nomem;
	if (cst_opts_load(&r->opts, sizeof(r->opts), opts, "cst_auxlog_reader_opts",
			  opts ? opts->log : NULL) < 0) {
		free(r);
		return -cste_invalid;
	}
	r->path = strdup(path);
	r->fd = r->path ? cst_open_input(path) : -1;
	if (!r->path) {
		err = -cste_nomem;
		goto fail;
	}
	if (r->fd < 0 || fstat(r->fd, &st)) {
		int e = errno;

		cst_logf(r->opts.log, cst_log_error, "cannot read %s: %s", path, cst_input_strerror(e));
		err = e == ENOENT ? -cste_not_found : -cste_io;
		goto fail;
	}
	r->file_size = (uint64_t)st.st_size;
	if (read_at(r->fd, 0, hdr, sizeof(hdr)) != (int64_t)sizeof(hdr) ||
	    memcmp(hdr, AUXLOG_MAGIC, 8)) {
		err = bad(r, 0, "expected a recorded AUX stream (magic \"" AUXLOG_MAGIC "\")");
		goto fail;
	}
	if (cst_le32(hdr + 8) != AUXLOG_VERSION) {
		cst_logf(r->opts.log, cst_log_error,
			 "%s: offset 0x8: stream version %u; this cstrace reads version %u", path,
			 cst_le32(hdr + 8), AUXLOG_VERSION);
		err = -cste_unsupported;
		goto fail;
	}
	if (cst_le32(hdr + 12) < AUXLOG_FILE_HEADER || cst_le32(hdr + 12) > r->file_size) {
		err = bad(r, 12, "expected a header size of at least 16 bytes within the file");
		goto fail;
	}
	r->offset = cst_le32(hdr + 12);
	*out = r;
	return 0;
fail:
	cst_auxlog_reader_free(r);
	return err;
}

void cst_auxlog_reader_free(struct cst_auxlog_reader *r)
{
	if (!r)
		return;
	if (r->fd >= 0)
		close(r->fd);
	cst_perf_etm_info_fini(&r->info);
	free(r->scratch.argv);
	free(r->scratch.ids);
	free(r->buf);
	free(r->path);
	free(r);
}

int cst_auxlog_reader_next(struct cst_auxlog_reader *r, struct cst_auxlog_event *ev)
{
	uint8_t hdr[AUXLOG_EVENT_HEADER];
	uint64_t size, left;
	struct acur c;
	const char *why;
	int64_t n;
	int err;

	if (!r || !ev)
		return -cste_invalid;
	cst_perf_etm_info_fini(&r->info);
	memset(&r->info, 0, sizeof(r->info));
	left = r->file_size > r->offset ? r->file_size - r->offset : 0;
	n = read_at(r->fd, r->offset, hdr, left < sizeof(hdr) ? left : sizeof(hdr));
	if (n < 0)
		return -cste_io;
	if (n == 0)
		return -cste_eos;
	if (n < (int64_t)sizeof(hdr))
		return -cste_truncated;
	size = cst_le64(hdr + 8);
	if (size < sizeof(hdr) || (size & 7) || size > AUXLOG_MAX_EVENT || cst_le32(hdr + 4))
		return bad(r, r->offset, "expected an event header (type, 0, a size of at least "
					 "24 that is a multiple of 8, time)");
	if (size > left)
		return -cste_truncated;
	if (CST_GROW(r->buf, r->cap, (size_t)(size - sizeof(hdr))) < 0)
		return -cste_nomem;
	if (read_at(r->fd, r->offset + sizeof(hdr), r->buf, size - sizeof(hdr)) !=
	    (int64_t)(size - sizeof(hdr)))
		return -cste_truncated; /* the file shrank under us */
	c = (struct acur){.p = r->buf, .len = size - sizeof(hdr)};
	err = auxlog_decode(&c, cst_le32(hdr), ev, &r->scratch, &why);
	if (err == -cste_format) {
		char msg[160];

		snprintf(msg, sizeof(msg), "a %s event (%llu bytes): %s",
			 cst_auxlog_type_name((enum cst_auxlog_type)cst_le32(hdr)),
			 (unsigned long long)size, why);
		return bad(r, r->offset, msg);
	}
	if (err < 0)
		return err;
	if (ev->type == cst_auxlog_etm_info)
		r->info = ev->u.etm_info;
	ev->time = cst_le64(hdr + 16);
	ev->offset = r->offset;
	r->offset += size;
	return 0;
}

uint64_t cst_auxlog_reader_offset(const struct cst_auxlog_reader *r)
{
	return r ? r->offset : 0;
}

const char *cst_auxlog_reader_path(const struct cst_auxlog_reader *r)
{
	return r ? r->path : NULL;
}
