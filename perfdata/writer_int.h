/* Internal to perfdata/: the writer's state, shared by writer.c (opening, attrs,
 * records) and writer_finish.c (the feature sections and the final header). */
#ifndef CSTRACE_PERFDATA_WRITER_INT_H
#define CSTRACE_PERFDATA_WRITER_INT_H

#include "cstrace/perfdata.h"

struct wattr {
	struct cst_perf_attr attr;
	uint64_t *ids;
	uint64_t nids;
};

struct cst_perf_writer {
	char *path;
	int fd;
	struct cst_out out; /* opts.whole: the file being written (fd is its fd) */
	struct cst_log log;
	struct cst_perf_writer_opts opts;
	char *hostname, *osrelease, *arch, *version;
	char **cmdline;
	uint32_t ncmdline;
	uint32_t nr_avail, nr_online;

	struct wattr *attrs;
	int nattrs;
	size_t cap_attrs;
	bool data_started; /* attrs written, records follow */
	bool finished;
	int error;         /* first write error: later calls fail fast */

	uint64_t attr_offset, attr_size, data_offset, pos;
	uint64_t count;

	struct cst_perf_build_id *bids;
	size_t nbids, cap_bids;
	uint64_t *aux_index; /* file offsets of AUXTRACE record headers */
	size_t naux, cap_aux;
};

/* A record header: type, misc, size. */
static inline void pd_put_hdr(uint8_t *p, uint32_t type, uint16_t misc, size_t size)
{
	cst_put_le32(p, type);
	cst_put_le16(p + 4, misc);
	cst_put_le16(p + 6, (uint16_t)size);
}

/* writer.c */
/* Write @len bytes at file offset @off (remembering the first error). */
int pd_write_at(struct cst_perf_writer *w, uint64_t off, const void *buf, uint64_t len);
/* The file header with @data_size and the feature bits @feat. */
int pd_write_header(struct cst_perf_writer *w, uint64_t data_size, const uint64_t feat[4]);
/* Write the attrs section once, before the first record. */
int pd_start_data(struct cst_perf_writer *w);
/* Whether @w takes more: not finished (-cste_invalid), no write failed before
 * (that error), its data section started. */
int pd_writable(struct cst_perf_writer *w);

#endif
