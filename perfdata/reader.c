/* perf.data reader: header, attrs, feature sections and record iteration through a
 * bounded pread window, so files of any size are read without loading them whole. */
#include "reader_int.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* One line: "<file>: offset <n>: <message>" as the brief asks of every error. */
void pd_rlog(const struct cst_perf_reader *r, enum cst_log_level lvl, uint64_t off,
		 const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	cst_vlogf_at(&r->log, lvl, r->path, off, fmt, ap);
	va_end(ap);
}

int64_t cst_perf_reader_pread(struct cst_perf_reader *r, uint64_t offset, void *buf, uint64_t len)
{
	uint64_t done = 0;

	if (!r || (!buf && len))
		return -cste_invalid;
	if (len > INT64_MAX)
		return -cste_invalid;
	while (done < len) {
		ssize_t n = pread(r->fd, (uint8_t *)buf + done, len - done, (off_t)(offset + done));

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -cste_io;
		}
		if (n == 0)
			break;
		done += (uint64_t)n;
	}
	return (int64_t)done;
}

/* Read exactly @len bytes or fail: for fixed structures that must be present. */
int pd_read_exact(struct cst_perf_reader *r, uint64_t off, void *buf, uint64_t len)
{
	int64_t n = cst_perf_reader_pread(r, off, buf, len);

	if (n < 0)
		return (int)n;
	return (uint64_t)n == len ? 0 : -cste_truncated;
}

/* A pointer to @len bytes at @off through the window, or NULL when the file
 * holds fewer (short read) or on an I/O error (*err set). */
const uint8_t *pd_window_get(struct cst_perf_reader *r, uint64_t off, uint64_t len, int *err)
{
	int64_t n;

	*err = 0;
	if (len > r->win_cap)
		return NULL;
	if (off >= r->win_off && off + len <= r->win_off + r->win_len)
		return r->win + (off - r->win_off);
	n = cst_perf_reader_pread(r, off, r->win, r->win_cap);
	if (n < 0) {
		*err = (int)n;
		r->win_len = 0;
		return NULL;
	}
	r->win_off = off;
	r->win_len = (uint64_t)n;
	if ((uint64_t)n < len)
		return NULL;
	return r->win;
}

bool pd_in_file(const struct cst_perf_reader *r, uint64_t off, uint64_t size)
{
	return off <= r->file_size && size <= r->file_size - off;
}
/* ------------------------------------------------------------------ open */

int cst_perf_reader_open(struct cst_perf_reader **out, const char *path,
			 const struct cst_perf_reader_opts *opts)
{
	struct cst_perf_reader_opts o;
	struct cst_perf_reader *r;
	uint8_t h[CST_PERF_HEADER_SIZE];
	struct stat st;
	uint64_t magic, hsize;
	int err;

	if (!out || !path)
		return -cste_invalid;
	*out = NULL;
	r = calloc(1, sizeof(*r));
	if (!r)
		return -cste_nomem;
	r->fd = -1;
	r->path = strdup(path);
	if (!r->path) {
		free(r);
		return -cste_nomem;
	}
	if (cst_opts_load(&o, sizeof(o), opts, "cst_perf_reader_opts", opts ? opts->log : NULL) < 0) {
		free(r->path);
		free(r);
		return -cste_invalid;
	}
	if (o.log)
		r->log = *o.log;
	r->win_cap = DEFAULT_WINDOW;
	if (o.window)
		r->win_cap = o.window < MIN_WINDOW ? MIN_WINDOW : o.window;

	r->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (r->fd < 0) {
		err = errno == ENOENT ? -cste_not_found : -cste_io;
		cst_logf(&r->log, cst_log_error, "%s: cannot open: %s", path, strerror(errno));
		goto fail;
	}
	if (fstat(r->fd, &st) || !S_ISREG(st.st_mode)) {
		cst_logf(&r->log, cst_log_error, "%s: not a regular file", path);
		err = -cste_io;
		goto fail;
	}
	r->file_size = (uint64_t)st.st_size;
	err = pd_read_exact(r, 0, h, 16);
	if (err) {
		pd_rlog(r, cst_log_error, 0, "expected a 104-byte perf.data header, file has %" PRIu64 " bytes",
		     r->file_size);
		err = -cste_format;
		goto fail;
	}
	magic = cst_le64(h);
	hsize = cst_le64(h + 8);
	if (magic != CST_PERF_MAGIC) {
		if (!memcmp(h, "PERFFILE", 8) || magic == __builtin_bswap64(CST_PERF_MAGIC)) {
			pd_rlog(r, cst_log_error, 0, "old or big-endian perf.data (magic \"%.8s\"), expected PERFILE2",
			     (const char *)h);
			err = -cste_unsupported;
		} else {
			pd_rlog(r, cst_log_error, 0, "bad magic, expected \"PERFILE2\"");
			err = -cste_format;
		}
		goto fail;
	}
	if (hsize == 16) {
		pd_rlog(r, cst_log_error, 8, "pipe-mode perf.data (header size 16) is not supported");
		err = -cste_unsupported;
		goto fail;
	}
	if (hsize != CST_PERF_HEADER_SIZE) {
		pd_rlog(r, cst_log_error, 8, "header size %" PRIu64 ", expected 104", hsize);
		err = -cste_format;
		goto fail;
	}
	if (pd_read_exact(r, 0, h, sizeof(h))) {
		pd_rlog(r, cst_log_error, 16, "header ends at EOF (%" PRIu64 " bytes), expected 104 bytes",
		     r->file_size);
		err = -cste_format;
		goto fail;
	}
	r->attr_entry = cst_le64(h + 16);
	r->attr_offset = cst_le64(h + 24);
	r->attr_size = cst_le64(h + 32);
	r->data_offset = cst_le64(h + 40);
	r->data_size = cst_le64(h + 48);
	for (int i = 0; i < 4; i++)
		r->feat_bits[i] = cst_le64(h + 72 + i * 8);

	if (r->data_offset < CST_PERF_HEADER_SIZE || r->data_offset > r->file_size) {
		pd_rlog(r, cst_log_error, 40, "data section offset %" PRIu64 " outside the file (%" PRIu64 " bytes)",
		     r->data_offset, r->file_size);
		err = -cste_format;
		goto fail;
	}
	if (r->data_size == 0) {
		/* perf record and our writer leave data.size 0 until they finish. */
		r->incomplete = true;
		memset(r->feat_bits, 0, sizeof(r->feat_bits));
		r->data_end = r->file_size;
		pd_rlog(r, cst_log_warning, 48,
		     "incomplete file (data size 0: the writer did not finish); reading records up to EOF");
	} else if (r->data_size > r->file_size - r->data_offset) {
		r->incomplete = true;
		memset(r->feat_bits, 0, sizeof(r->feat_bits));
		r->data_end = r->file_size;
		pd_rlog(r, cst_log_warning, 48,
		     "data section of %" PRIu64 " bytes ends past EOF (%" PRIu64 " bytes); reading up to EOF",
		     r->data_size, r->file_size);
	} else {
		r->data_end = r->data_offset + r->data_size;
	}

	err = pd_read_attrs(r);
	if (err)
		goto fail;
	if (!r->incomplete) {
		err = pd_read_features(r);
		if (err)
			goto fail;
	}
	r->win = malloc(r->win_cap);
	r->str_cap = 4096;
	r->str = malloc(r->str_cap);
	if (!r->win || !r->str) {
		err = -cste_nomem;
		goto fail;
	}
	r->pos = r->data_offset;
	*out = r;
	return 0;
fail:
	cst_perf_reader_free(r);
	return err;
}

void cst_perf_reader_free(struct cst_perf_reader *r)
{
	struct cst_perf_features *f;

	if (!r)
		return;
	f = &r->feat;
	if (r->fd >= 0)
		close(r->fd);
	for (int i = 0; i < r->nattrs; i++)
		free(r->attrs[i].ids);
	free(r->attrs);
	free(f->hostname);
	free(f->osrelease);
	free(f->version);
	free(f->arch);
	free(f->cpudesc);
	free(f->cpuid);
	for (uint32_t i = 0; i < f->ncmdline; i++)
		free(f->cmdline[i]);
	free(f->cmdline);
	for (uint32_t i = 0; i < f->nevent_names; i++)
		free(f->event_names[i]);
	free(f->event_names);
	for (uint64_t i = 0; i < f->nbuild_ids; i++)
		free(f->build_ids[i].filename);
	free(f->build_ids);
	free(f->auxtrace_offsets);
	free(r->win);
	free(r->str);
	free(r->path);
	free(r);
}

const char *cst_perf_reader_path(const struct cst_perf_reader *r)
{
	return r ? r->path : NULL;
}

bool cst_perf_reader_incomplete(const struct cst_perf_reader *r)
{
	return r && r->incomplete;
}

bool cst_perf_reader_has_feature(const struct cst_perf_reader *r, int bit)
{
	if (!r || bit < 0 || bit >= cst_perf_feat_max)
		return false;
	return (r->feat_bits[bit / 64] >> (bit % 64)) & 1;
}

const struct cst_perf_features *cst_perf_reader_features(const struct cst_perf_reader *r)
{
	return r ? &r->feat : NULL;
}

int cst_perf_reader_nattrs(const struct cst_perf_reader *r)
{
	return r ? r->nattrs : -cste_invalid;
}

const struct cst_perf_attr *cst_perf_reader_attr(const struct cst_perf_reader *r, int i)
{
	if (!r || i < 0 || i >= r->nattrs)
		return NULL;
	return &r->attrs[i];
}

const struct cst_perf_attr *cst_perf_reader_attr_by_id(const struct cst_perf_reader *r,
						       uint64_t id)
{
	if (!r)
		return NULL;
	for (int i = 0; i < r->nattrs; i++)
		for (uint64_t k = 0; k < r->attrs[i].nids; k++)
			if (r->attrs[i].ids[k] == id)
				return &r->attrs[i];
	return NULL;
}
