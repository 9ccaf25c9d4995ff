/* perf.data reader: header, attrs, feature sections and record iteration through a
 * bounded pread window, so files of any size are read without loading them whole. */
#include "cstrace/perfdata.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define DEFAULT_WINDOW (256u * 1024u)
#define MIN_WINDOW (128u * 1024u) /* above the largest record (64 KiB) */
#define MAX_FEATURE_SIZE (64ull << 20)
#define MAX_IDS (1ull << 24)

struct cst_perf_reader {
	char *path;
	int fd;
	uint64_t file_size;
	struct cst_log log;
	bool has_log;

	uint64_t attr_offset, attr_size, attr_entry;
	uint64_t data_offset, data_size, data_end;
	uint64_t feat_bits[4];
	bool incomplete;

	struct cst_perf_attr *attrs;
	int nattrs;
	struct cst_perf_features feat;

	/* Record iteration */
	uint8_t *win;
	size_t win_cap;
	uint64_t win_off, win_len;
	uint64_t pos;
	uint64_t count;
	bool stopped; /* a bad record ended iteration */
	char *str;    /* NUL-terminated copy of a record's string */
	size_t str_cap;
};

static void rlog(const struct cst_perf_reader *r, enum cst_log_level lvl, uint64_t off,
		 const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* One line: "<file>: offset <n>: <message>" as the brief asks of every error. */
static void rlog(const struct cst_perf_reader *r, enum cst_log_level lvl, uint64_t off,
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
static int read_exact(struct cst_perf_reader *r, uint64_t off, void *buf, uint64_t len)
{
	int64_t n = cst_perf_reader_pread(r, off, buf, len);

	if (n < 0)
		return (int)n;
	return (uint64_t)n == len ? 0 : -cste_truncated;
}

/* A pointer to @len bytes at @off through the window, or NULL when the file
 * holds fewer (short read) or on an I/O error (*err set). */
static const uint8_t *window_get(struct cst_perf_reader *r, uint64_t off, uint64_t len, int *err)
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

static bool in_file(const struct cst_perf_reader *r, uint64_t off, uint64_t size)
{
	return off <= r->file_size && size <= r->file_size - off;
}

/* ---------------------------------------------------------------- features */

static char *dup_bounded(const uint8_t *p, uint64_t max)
{
	size_t n = strnlen((const char *)p, max);
	char *s = malloc(n + 1);

	if (s) {
		memcpy(s, p, n);
		s[n] = '\0';
	}
	return s;
}

/* perf strings: u32 len (padded length) then the text. */
static int feat_string(const uint8_t *p, uint64_t size, uint64_t *pos, char **out)
{
	uint32_t len;

	if (*pos + 4 > size)
		return -cste_format;
	len = cst_le32(p + *pos);
	if (len > size - *pos - 4)
		return -cste_format;
	*out = dup_bounded(p + *pos + 4, len);
	if (!*out)
		return -cste_nomem;
	*pos += 4 + (uint64_t)len;
	return 0;
}

static int feat_build_ids(struct cst_perf_features *f, const uint8_t *p, uint64_t size)
{
	uint64_t pos = 0, cap = 0;

	while (pos + 8 <= size) {
		uint16_t misc = cst_le16(p + pos + 4), sz = cst_le16(p + pos + 6);
		struct cst_perf_build_id *b;

		if (sz < 36 || sz > size - pos)
			return -cste_format;
		if (f->nbuild_ids == cap) {
			uint64_t ncap = cap ? cap * 2 : 16;
			void *n = realloc(f->build_ids, ncap * sizeof(*f->build_ids));

			if (!n)
				return -cste_nomem;
			f->build_ids = n;
			cap = ncap;
		}
		b = &f->build_ids[f->nbuild_ids];
		memset(b, 0, sizeof(*b));
		b->pid = (int32_t)cst_le32(p + pos + 8);
		b->misc = misc;
		memcpy(b->id, p + pos + 12, 20);
		/* PERF_RECORD_MISC_BUILD_ID_SIZE: the size byte after the id is valid. */
		b->size = (misc & 0x8000) ? p[pos + 32] : 20;
		if (b->size == 0 || b->size > 20)
			b->size = 20;
		b->filename = dup_bounded(p + pos + 36, sz - 36);
		if (!b->filename)
			return -cste_nomem;
		f->nbuild_ids++;
		pos += sz;
	}
	return 0;
}

static int feat_auxtrace(struct cst_perf_reader *r, const uint8_t *p, uint64_t size)
{
	struct cst_perf_features *f = &r->feat;
	uint64_t nr;

	if (size < 8)
		return -cste_format;
	nr = cst_le64(p);
	if (nr > (size - 8) / 16)
		return -cste_format;
	f->auxtrace_offsets = calloc(nr ? nr : 1, sizeof(uint64_t));
	if (!f->auxtrace_offsets)
		return -cste_nomem;
	for (uint64_t i = 0; i < nr; i++)
		f->auxtrace_offsets[i] = cst_le64(p + 8 + i * 16);
	f->nauxtrace = nr;
	f->has_auxtrace_index = true;
	return 0;
}

static int parse_feature(struct cst_perf_reader *r, int bit, const uint8_t *p, uint64_t size)
{
	struct cst_perf_features *f = &r->feat;
	uint64_t pos = 0;

	switch (bit) {
	case cst_perf_feat_build_id:
		return feat_build_ids(f, p, size);
	case cst_perf_feat_hostname:
		return feat_string(p, size, &pos, &f->hostname);
	case cst_perf_feat_osrelease:
		return feat_string(p, size, &pos, &f->osrelease);
	case cst_perf_feat_version:
		return feat_string(p, size, &pos, &f->version);
	case cst_perf_feat_arch:
		return feat_string(p, size, &pos, &f->arch);
	case cst_perf_feat_cpudesc:
		return feat_string(p, size, &pos, &f->cpudesc);
	case cst_perf_feat_cpuid:
		return feat_string(p, size, &pos, &f->cpuid);
	case cst_perf_feat_nrcpus:
		if (size < 8)
			return -cste_format;
		f->nr_cpus_avail = cst_le32(p);
		f->nr_cpus_online = cst_le32(p + 4);
		f->has_nrcpus = true;
		return 0;
	case cst_perf_feat_cmdline: {
		uint32_t nr;

		if (size < 4)
			return -cste_format;
		nr = cst_le32(p);
		if (nr > size / 4)
			return -cste_format;
		f->cmdline = calloc(nr ? nr : 1, sizeof(char *));
		if (!f->cmdline)
			return -cste_nomem;
		pos = 4;
		for (uint32_t i = 0; i < nr; i++) {
			int err = feat_string(p, size, &pos, &f->cmdline[i]);

			if (err)
				return err;
			f->ncmdline++;
		}
		return 0;
	}
	case cst_perf_feat_auxtrace:
		return feat_auxtrace(r, p, size);
	default:
		return 0; /* known to perf, not needed here: skipped */
	}
}

static const char *feature_name(int bit)
{
	static const char *const names[] = {
		[cst_perf_feat_build_id] = "BUILD_ID", [cst_perf_feat_hostname] = "HOSTNAME",
		[cst_perf_feat_osrelease] = "OSRELEASE", [cst_perf_feat_version] = "VERSION",
		[cst_perf_feat_arch] = "ARCH", [cst_perf_feat_nrcpus] = "NRCPUS",
		[cst_perf_feat_cpudesc] = "CPUDESC", [cst_perf_feat_cpuid] = "CPUID",
		[cst_perf_feat_cmdline] = "CMDLINE", [cst_perf_feat_auxtrace] = "AUXTRACE",
	};

	if (bit >= 0 && bit < (int)(sizeof(names) / sizeof(names[0])) && names[bit])
		return names[bit];
	return "feature";
}

/* Features are optional for decoding: a bad one is a warning, never fatal. */
static int read_features(struct cst_perf_reader *r)
{
	uint64_t off = r->data_offset + r->data_size, nfeat = 0;
	uint8_t sec[16];

	for (int bit = 0; bit < cst_perf_feat_max; bit++) {
		uint64_t foff, fsize;
		uint8_t *buf;
		int err;

		if (!cst_perf_reader_has_feature(r, bit))
			continue;
		if (read_exact(r, off + nfeat * 16, sec, 16)) {
			rlog(r, cst_log_warning, off + nfeat * 16,
			     "feature section table ends past EOF (%" PRIu64 " bytes); features ignored",
			     r->file_size);
			return 0;
		}
		nfeat++;
		foff = cst_le64(sec);
		fsize = cst_le64(sec + 8);
		if (bit == cst_perf_feat_compressed) {
			rlog(r, cst_log_error, off, "compressed (zstd) perf.data is not supported");
			return -cste_unsupported;
		}
		if (!in_file(r, foff, fsize) || fsize > MAX_FEATURE_SIZE) {
			rlog(r, cst_log_warning, off + (nfeat - 1) * 16,
			     "%s feature at %" PRIu64 " size %" PRIu64 " lies past EOF; skipped",
			     feature_name(bit), foff, fsize);
			continue;
		}
		if (bit != cst_perf_feat_build_id && bit != cst_perf_feat_hostname &&
		    bit != cst_perf_feat_osrelease && bit != cst_perf_feat_version &&
		    bit != cst_perf_feat_arch && bit != cst_perf_feat_nrcpus &&
		    bit != cst_perf_feat_cpudesc && bit != cst_perf_feat_cpuid &&
		    bit != cst_perf_feat_cmdline && bit != cst_perf_feat_auxtrace)
			continue;
		buf = malloc(fsize ? fsize : 1);
		if (!buf)
			return -cste_nomem;
		err = read_exact(r, foff, buf, fsize);
		if (!err)
			err = parse_feature(r, bit, buf, fsize);
		free(buf);
		if (err == -cste_nomem)
			return err;
		if (err)
			rlog(r, cst_log_warning, foff, "%s feature of %" PRIu64 " bytes is malformed; skipped",
			     feature_name(bit), fsize);
	}
	return 0;
}

/* ------------------------------------------------------------------- attrs */

static int read_attrs(struct cst_perf_reader *r)
{
	uint64_t n;

	if (r->attr_size == 0)
		return 0;
	if (r->attr_entry < 64 + 16) {
		rlog(r, cst_log_error, 16, "attr_size %" PRIu64 ", expected at least 80", r->attr_entry);
		return -cste_format;
	}
	if (!in_file(r, r->attr_offset, r->attr_size)) {
		rlog(r, cst_log_error, 24,
		     "attr section at %" PRIu64 " size %" PRIu64 " ends past EOF (%" PRIu64 " bytes)",
		     r->attr_offset, r->attr_size, r->file_size);
		return -cste_format;
	}
	if (r->attr_size % r->attr_entry) {
		rlog(r, cst_log_error, 32, "attr section size %" PRIu64 " is not a multiple of attr_size %" PRIu64,
		     r->attr_size, r->attr_entry);
		return -cste_format;
	}
	n = r->attr_size / r->attr_entry;
	if (n > 4096) {
		rlog(r, cst_log_error, 32, "%" PRIu64 " attrs, expected at most 4096", n);
		return -cste_format;
	}
	r->attrs = calloc(n ? n : 1, sizeof(*r->attrs));
	if (!r->attrs)
		return -cste_nomem;
	for (uint64_t i = 0; i < n; i++) {
		uint64_t off = r->attr_offset + i * r->attr_entry;
		struct cst_perf_attr *a = &r->attrs[i];
		uint8_t b[136 + 16];
		uint64_t ids_off, ids_size, have;
		uint8_t *idb;

		have = r->attr_entry - 16 < 136 ? r->attr_entry - 16 : 136;
		memset(b, 0, sizeof(b));
		if (read_exact(r, off, b, have) || read_exact(r, off + r->attr_entry - 16, b + 136, 16))
			return -cste_io;
		a->type = cst_le32(b);
		a->size = cst_le32(b + 4);
		if (a->size > r->attr_entry - 16 || (a->size && a->size < 64)) {
			rlog(r, cst_log_error, off + 4, "attr.size %u does not fit attr_size %" PRIu64,
			     a->size, r->attr_entry);
			return -cste_format;
		}
		/* Fields beyond attr.size are zero by definition. */
		if (a->size && a->size < have)
			memset(b + a->size, 0, have - a->size);
		a->config = cst_le64(b + 8);
		a->sample_period = cst_le64(b + 16);
		a->sample_type = cst_le64(b + 24);
		a->read_format = cst_le64(b + 32);
		a->flags = cst_le64(b + 40);
		a->wakeup_events = cst_le32(b + 48);
		a->bp_type = cst_le32(b + 52);
		a->config1 = cst_le64(b + 56);
		a->config2 = cst_le64(b + 64);
		a->aux_watermark = cst_le32(b + 104);
		a->aux_sample_size = cst_le32(b + 112);
		a->config3 = cst_le64(b + 128);
		ids_off = cst_le64(b + 136);
		ids_size = cst_le64(b + 144);
		r->nattrs++;
		if (!ids_size)
			continue;
		if (!in_file(r, ids_off, ids_size) || ids_size % 8 || ids_size / 8 > MAX_IDS) {
			rlog(r, cst_log_warning, off + r->attr_entry - 16,
			     "attr %" PRIu64 " ids at %" PRIu64 " size %" PRIu64 " are not in the file; ignored",
			     i, ids_off, ids_size);
			continue;
		}
		idb = malloc(ids_size);
		a->ids = calloc(ids_size / 8, sizeof(uint64_t));
		if (!idb || !a->ids) {
			free(idb);
			return -cste_nomem;
		}
		if (read_exact(r, ids_off, idb, ids_size)) {
			free(idb);
			return -cste_io;
		}
		for (uint64_t k = 0; k < ids_size / 8; k++)
			a->ids[k] = cst_le64(idb + k * 8);
		a->nids = ids_size / 8;
		free(idb);
	}
	return 0;
}

/* ------------------------------------------------------------------ open */

int cst_perf_reader_open(struct cst_perf_reader **out, const char *path,
			 const struct cst_perf_reader_opts *opts)
{
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
	if (opts && opts->sz >= offsetof(struct cst_perf_reader_opts, log) + sizeof(opts->log) &&
	    opts->log)
		r->log = *opts->log;
	r->win_cap = DEFAULT_WINDOW;
	if (opts && opts->sz >= offsetof(struct cst_perf_reader_opts, window) + sizeof(opts->window) &&
	    opts->window)
		r->win_cap = opts->window < MIN_WINDOW ? MIN_WINDOW : opts->window;

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
	err = read_exact(r, 0, h, 16);
	if (err) {
		rlog(r, cst_log_error, 0, "expected a 104-byte perf.data header, file has %" PRIu64 " bytes",
		     r->file_size);
		err = -cste_format;
		goto fail;
	}
	magic = cst_le64(h);
	hsize = cst_le64(h + 8);
	if (magic != CST_PERF_MAGIC) {
		if (!memcmp(h, "PERFFILE", 8) || magic == __builtin_bswap64(CST_PERF_MAGIC)) {
			rlog(r, cst_log_error, 0, "old or big-endian perf.data (magic \"%.8s\"), expected PERFILE2",
			     (const char *)h);
			err = -cste_unsupported;
		} else {
			rlog(r, cst_log_error, 0, "bad magic, expected \"PERFILE2\"");
			err = -cste_format;
		}
		goto fail;
	}
	if (hsize == 16) {
		rlog(r, cst_log_error, 8, "pipe-mode perf.data (header size 16) is not supported");
		err = -cste_unsupported;
		goto fail;
	}
	if (hsize != CST_PERF_HEADER_SIZE) {
		rlog(r, cst_log_error, 8, "header size %" PRIu64 ", expected 104", hsize);
		err = -cste_format;
		goto fail;
	}
	if (read_exact(r, 0, h, sizeof(h))) {
		rlog(r, cst_log_error, 16, "header ends at EOF (%" PRIu64 " bytes), expected 104 bytes",
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
		rlog(r, cst_log_error, 40, "data section offset %" PRIu64 " outside the file (%" PRIu64 " bytes)",
		     r->data_offset, r->file_size);
		err = -cste_format;
		goto fail;
	}
	if (r->data_size == 0) {
		/* perf record and our writer leave data.size 0 until they finish. */
		r->incomplete = true;
		memset(r->feat_bits, 0, sizeof(r->feat_bits));
		r->data_end = r->file_size;
		rlog(r, cst_log_warning, 48,
		     "incomplete file (data size 0: the writer did not finish); reading records up to EOF");
	} else if (r->data_size > r->file_size - r->data_offset) {
		r->incomplete = true;
		memset(r->feat_bits, 0, sizeof(r->feat_bits));
		r->data_end = r->file_size;
		rlog(r, cst_log_warning, 48,
		     "data section of %" PRIu64 " bytes ends past EOF (%" PRIu64 " bytes); reading up to EOF",
		     r->data_size, r->file_size);
	} else {
		r->data_end = r->data_offset + r->data_size;
	}

	err = read_attrs(r);
	if (err)
		goto fail;
	if (!r->incomplete) {
		err = read_features(r);
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

/* --------------------------------------------------------------- records */

/* The sample_id trailer sits at the end of a non-sample record. Its layout is the
 * first attr's: perf requires all attrs of a file to agree on these positions. */
static void parse_sample_id(const struct cst_perf_reader *r, const uint8_t *rec, uint16_t size,
			    uint16_t body, struct cst_perf_sample_id *sid)
{
	uint64_t st;
	int n = 0;
	const uint8_t *p;

	memset(sid, 0, sizeof(*sid));
	sid->pid = sid->tid = sid->cpu = UINT32_MAX;
	if (!r->nattrs || !(r->attrs[0].flags & CST_PERF_ATTR_SAMPLE_ID_ALL))
		return;
	st = r->attrs[0].sample_type;
	n += !!(st & CST_PERF_SAMPLE_TID) + !!(st & CST_PERF_SAMPLE_TIME) +
	     !!(st & CST_PERF_SAMPLE_ID) + !!(st & CST_PERF_SAMPLE_STREAM_ID) +
	     !!(st & CST_PERF_SAMPLE_CPU) + !!(st & CST_PERF_SAMPLE_IDENTIFIER);
	if (n == 0 || size < body + n * 8)
		return;
	p = rec + size - n * 8;
	if (st & CST_PERF_SAMPLE_TID) {
		sid->pid = cst_le32(p);
		sid->tid = cst_le32(p + 4);
		sid->have_tid = true;
		p += 8;
	}
	if (st & CST_PERF_SAMPLE_TIME) {
		sid->time = cst_le64(p);
		sid->have_time = true;
		p += 8;
	}
	if (st & CST_PERF_SAMPLE_ID) {
		sid->id = cst_le64(p);
		sid->have_id = true;
		p += 8;
	}
	if (st & CST_PERF_SAMPLE_STREAM_ID) {
		sid->stream_id = cst_le64(p);
		sid->have_stream_id = true;
		p += 8;
	}
	if (st & CST_PERF_SAMPLE_CPU) {
		sid->cpu = cst_le32(p);
		sid->res = cst_le32(p + 4);
		sid->have_cpu = true;
		p += 8;
	}
	if (st & CST_PERF_SAMPLE_IDENTIFIER) {
		sid->id = cst_le64(p);
		sid->have_id = true;
	}
}

/* Copy a NUL-terminated (or bounded) string out of a record into r->str. */
static const char *rec_string(struct cst_perf_reader *r, const uint8_t *p, size_t max)
{
	size_t n = strnlen((const char *)p, max);

	if (n + 1 > r->str_cap) {
		char *s = realloc(r->str, n + 1);

		if (!s)
			return "";
		r->str = s;
		r->str_cap = n + 1;
	}
	memcpy(r->str, p, n);
	r->str[n] = '\0';
	return r->str;
}

/* Minimum body sizes (header included) of the records parsed below. */
static uint16_t min_size(uint32_t type)
{
	switch (type) {
	case cst_perf_rec_mmap: return 8 + 32 + 1;
	case cst_perf_rec_mmap2: return 8 + 64 + 1;
	case cst_perf_rec_comm: return 8 + 8 + 1;
	case cst_perf_rec_fork:
	case cst_perf_rec_exit: return 8 + 24;
	case cst_perf_rec_lost: return 8 + 16;
	case cst_perf_rec_lost_samples: return 8 + 8;
	case cst_perf_rec_aux: return 8 + 24;
	case cst_perf_rec_itrace_start: return 8 + 8;
	case cst_perf_rec_aux_output_hw_id: return 8 + 8;
	case cst_perf_rec_switch: return 8;
	case cst_perf_rec_switch_cpu_wide: return 8 + 8;
	case cst_perf_rec_auxtrace: return 48;
	case cst_perf_rec_auxtrace_info: return 16;
	case cst_perf_rec_time_conv: return 8 + 24;
	default: return 8;
	}
}

static const char *rec_name(uint32_t type)
{
	switch (type) {
	case cst_perf_rec_mmap: return "MMAP";
	case cst_perf_rec_mmap2: return "MMAP2";
	case cst_perf_rec_comm: return "COMM";
	case cst_perf_rec_fork: return "FORK";
	case cst_perf_rec_exit: return "EXIT";
	case cst_perf_rec_lost: return "LOST";
	case cst_perf_rec_lost_samples: return "LOST_SAMPLES";
	case cst_perf_rec_aux: return "AUX";
	case cst_perf_rec_itrace_start: return "ITRACE_START";
	case cst_perf_rec_aux_output_hw_id: return "AUX_OUTPUT_HW_ID";
	case cst_perf_rec_switch: return "SWITCH";
	case cst_perf_rec_switch_cpu_wide: return "SWITCH_CPU_WIDE";
	case cst_perf_rec_auxtrace: return "AUXTRACE";
	case cst_perf_rec_auxtrace_info: return "AUXTRACE_INFO";
	case cst_perf_rec_time_conv: return "TIME_CONV";
	default: return "record";
	}
}

/* pid, tid, addr, len, pgoff: the head MMAP and MMAP2 share. */
static void read_mmap_head(struct cst_perf_record *rec, const uint8_t *p)
{
	rec->u.mmap.pid = cst_le32(p + 8);
	rec->u.mmap.tid = cst_le32(p + 12);
	rec->u.mmap.addr = cst_le64(p + 16);
	rec->u.mmap.len = cst_le64(p + 24);
	rec->u.mmap.pgoff = cst_le64(p + 32);
}

/* A NUL-padded string at @off ending the body (file name, comm); the sample_id
 * trailer follows the padded string, so it is parsed from there. */
static const char *tail_string(struct cst_perf_reader *r, struct cst_perf_record *rec,
			       const uint8_t *p, uint16_t size, uint16_t off)
{
	const char *str = rec_string(r, p + off, size - off);

	parse_sample_id(r, p, size, off + (uint16_t)((strlen(str) + 8) & ~7u), &rec->sid);
	return str;
}

static int parse_body(struct cst_perf_reader *r, struct cst_perf_record *rec, const uint8_t *p)
{
	uint16_t size = rec->size;
	uint16_t body = min_size(rec->type);

	if (size < body) {
		rlog(r, cst_log_error, rec->file_offset,
		     "%s record of %u bytes, expected at least %u", rec_name(rec->type), size, body);
		return -cste_format;
	}
	switch (rec->type) {
	case cst_perf_rec_mmap:
		read_mmap_head(rec, p);
		rec->u.mmap.filename = tail_string(r, rec, p, size, 40);
		return 0;
	case cst_perf_rec_mmap2:
		read_mmap_head(rec, p);
		if (rec->misc & CST_PERF_MISC_MMAP_BUILD_ID) {
			rec->u.mmap.build_id_size = p[40] > 20 ? 20 : p[40];
			memcpy(rec->u.mmap.build_id, p + 44, 20);
		} else {
			rec->u.mmap.maj = cst_le32(p + 40);
			rec->u.mmap.min = cst_le32(p + 44);
			rec->u.mmap.ino = cst_le64(p + 48);
			rec->u.mmap.ino_generation = cst_le64(p + 56);
		}
		rec->u.mmap.prot = cst_le32(p + 64);
		rec->u.mmap.flags = cst_le32(p + 68);
		rec->u.mmap.filename = tail_string(r, rec, p, size, 72);
		return 0;
	case cst_perf_rec_comm:
		rec->u.comm.pid = cst_le32(p + 8);
		rec->u.comm.tid = cst_le32(p + 12);
		rec->u.comm.comm = tail_string(r, rec, p, size, 16);
		return 0;
	case cst_perf_rec_fork:
	case cst_perf_rec_exit:
		rec->u.fork.pid = cst_le32(p + 8);
		rec->u.fork.ppid = cst_le32(p + 12);
		rec->u.fork.tid = cst_le32(p + 16);
		rec->u.fork.ptid = cst_le32(p + 20);
		rec->u.fork.time = cst_le64(p + 24);
		break;
	case cst_perf_rec_lost:
		rec->u.lost.id = cst_le64(p + 8);
		rec->u.lost.lost = cst_le64(p + 16);
		break;
	case cst_perf_rec_lost_samples:
		rec->u.lost_samples.lost = cst_le64(p + 8);
		break;
	case cst_perf_rec_aux:
		rec->u.aux.aux_offset = cst_le64(p + 8);
		rec->u.aux.aux_size = cst_le64(p + 16);
		rec->u.aux.flags = cst_le64(p + 24);
		break;
	case cst_perf_rec_itrace_start:
		rec->u.itrace_start.pid = cst_le32(p + 8);
		rec->u.itrace_start.tid = cst_le32(p + 12);
		break;
	case cst_perf_rec_aux_output_hw_id:
		rec->u.hw_id.hw_id = cst_le64(p + 8);
		break;
	case cst_perf_rec_switch:
		rec->u.sw.out = rec->misc & CST_PERF_MISC_SWITCH_OUT;
		break;
	case cst_perf_rec_switch_cpu_wide:
		rec->u.sw.next_prev_pid = cst_le32(p + 8);
		rec->u.sw.next_prev_tid = cst_le32(p + 12);
		rec->u.sw.out = rec->misc & CST_PERF_MISC_SWITCH_OUT;
		break;
	case cst_perf_rec_auxtrace:
		rec->u.auxtrace.size = cst_le64(p + 8);
		rec->u.auxtrace.offset = cst_le64(p + 16);
		rec->u.auxtrace.reference = cst_le64(p + 24);
		rec->u.auxtrace.idx = cst_le32(p + 32);
		rec->u.auxtrace.tid = cst_le32(p + 36);
		rec->u.auxtrace.cpu = cst_le32(p + 40);
		rec->u.auxtrace.data_offset = rec->file_offset + size;
		return 0; /* perf's own record: no trailer */
	case cst_perf_rec_auxtrace_info:
		rec->u.auxtrace_info.type = cst_le32(p + 8);
		rec->u.auxtrace_info.priv = p + 16;
		rec->u.auxtrace_info.npriv = (uint64_t)(size - 16) / 8;
		return 0;
	case cst_perf_rec_time_conv:
		rec->u.time_conv.time_shift = cst_le64(p + 8);
		rec->u.time_conv.time_mult = cst_le64(p + 16);
		rec->u.time_conv.time_zero = cst_le64(p + 24);
		return 0;
	default:
		/* Kernel records below 64 carry a trailer; perf's own (>= 64) do not. */
		if (rec->type >= 64)
			return 0;
		break;
	}
	parse_sample_id(r, p, size, body, &rec->sid);
	return 0;
}

int cst_perf_reader_next(struct cst_perf_reader *r, struct cst_perf_record *rec)
{
	const uint8_t *p;
	uint64_t pos, left;
	int err;

	if (!r || !rec)
		return -cste_invalid;
	if (r->stopped || r->pos >= r->data_end)
		return -cste_eos;
	memset(rec, 0, sizeof(*rec));
	rec->sid.pid = rec->sid.tid = rec->sid.cpu = UINT32_MAX;
	pos = r->pos;
	left = r->data_end - pos;
	if (left < 8) {
		rlog(r, cst_log_warning, pos,
		     "data ends %" PRIu64 " bytes into a record header, expected 8 bytes; %" PRIu64
		     " records read",
		     left, r->count);
		r->stopped = true;
		return -cste_truncated;
	}
	p = window_get(r, pos, 8, &err);
	if (!p) {
		r->stopped = true;
		if (err)
			return err;
		rlog(r, cst_log_warning, pos, "file ends inside a record header");
		return -cste_truncated;
	}
	rec->type = cst_le32(p);
	rec->misc = cst_le16(p + 4);
	rec->size = cst_le16(p + 6);
	rec->file_offset = pos;
	if (rec->size < 8) {
		rlog(r, cst_log_error, pos, "record size %u, expected at least 8 (type %u)", rec->size,
		     rec->type);
		r->stopped = true;
		return -cste_format;
	}
	if (rec->size > left) {
		rlog(r, cst_log_warning, pos,
		     "%s record of %u bytes runs past the end of data at %" PRIu64
		     " (truncated file); %" PRIu64 " records read",
		     rec_name(rec->type), rec->size, r->data_end, r->count);
		r->stopped = true;
		return -cste_truncated;
	}
	p = window_get(r, pos, rec->size, &err);
	if (!p) {
		r->stopped = true;
		if (err)
			return err;
		rlog(r, cst_log_warning, pos, "file ends inside a %s record", rec_name(rec->type));
		return -cste_truncated;
	}
	rec->raw = p;
	err = parse_body(r, rec, p);
	if (err) {
		r->stopped = true;
		return err;
	}
	r->pos = pos + rec->size;
	if (rec->type == cst_perf_rec_auxtrace) {
		uint64_t avail = r->data_end - r->pos;

		if (rec->u.auxtrace.size > avail) {
			rlog(r, cst_log_warning, pos,
			     "AUXTRACE payload of %" PRIu64 " bytes runs past the end of data at %" PRIu64
			     "; keeping %" PRIu64 " bytes",
			     rec->u.auxtrace.size, r->data_end, avail);
			rec->u.auxtrace.size = avail;
		}
		r->pos += rec->u.auxtrace.size;
	}
	r->count++;
	return 0;
}

int cst_perf_reader_rewind(struct cst_perf_reader *r)
{
	if (!r)
		return -cste_invalid;
	r->pos = r->data_offset;
	r->count = 0;
	r->stopped = false;
	return 0;
}

uint64_t cst_perf_reader_count(const struct cst_perf_reader *r)
{
	return r ? r->count : 0;
}

int cst_perf_reader_etm_info(struct cst_perf_reader *r, struct cst_perf_etm_info *info)
{
	struct cst_perf_record rec;
	char msg[256] = "";
	int err;

	if (!r || !info)
		return -cste_invalid;
	memset(info, 0, sizeof(*info));
	cst_perf_reader_rewind(r);
	while ((err = cst_perf_reader_next(r, &rec)) == 0) {
		if (rec.type != cst_perf_rec_auxtrace_info)
			continue;
		if (rec.u.auxtrace_info.type != CST_PERF_AUXTRACE_CS_ETM) {
			rlog(r, cst_log_error, rec.file_offset,
			     "AUXTRACE_INFO of type %u, expected 3 (cs_etm)", rec.u.auxtrace_info.type);
			cst_perf_reader_rewind(r);
			return -cste_not_found;
		}
		err = cst_perf_etm_info_parse(info, rec.u.auxtrace_info.priv,
					      rec.u.auxtrace_info.npriv, msg, sizeof(msg));
		if (err)
			rlog(r, cst_log_error, rec.file_offset, "%s", msg);
		cst_perf_reader_rewind(r);
		return err;
	}
	cst_perf_reader_rewind(r);
	if (err == -cste_eos || err == -cste_truncated || err == -cste_format) {
		rlog(r, cst_log_error, r->data_offset,
		     "no AUXTRACE_INFO record: expected a file recorded with -e cs_etm//");
		return -cste_not_found;
	}
	return err;
}
