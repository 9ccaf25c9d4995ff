/* Finishing a perf.data file: the feature sections perf reads (hostname, OS
 * release, arch, version, cmdline, CPU counts, build-ids, AUXTRACE index), then the
 * header that makes the file complete, written last so that a crash leaves a file
 * perf still opens as unfinished. */
#include "writer_int.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

/* ------------------------------------------------------------ features */

/* perf's do_write_string: u32 length padded to 64 (NAME_ALIGN), then the text. */
static void fb_string(struct cst_buf *f, const char *s)
{
	size_t l = strlen(s) + 1, padded = (l + 63) & ~(size_t)63;
	uint8_t *p;

	cst_buf_put_le32(f, (uint32_t)padded);
	p = cst_buf_zeros(f, padded);
	if (p)
		memcpy(p, s, l);
}

static void fb_build_ids(struct cst_perf_writer *w, struct cst_buf *f)
{
	for (uint64_t i = 0; i < w->nbids; i++) {
		const struct cst_perf_build_id *b = &w->bids[i];
		size_t l = strlen(b->filename) + 1, padded = (l + 63) & ~(size_t)63;
		uint8_t *p = cst_buf_zeros(f, 36 + padded);

		if (!p)
			return;
		/* PERF_RECORD_MISC_BUILD_ID_SIZE (bit 15) says the size byte is valid. */
		pd_put_hdr(p, cst_perf_rec_header_attr + 3 /* PERF_RECORD_HEADER_BUILD_ID */,
			(uint16_t)(b->misc | 0x8000), 36 + padded);
		cst_put_le32(p + 8, (uint32_t)b->pid);
		memcpy(p + 12, b->id, b->size);
		p[32] = b->size;
		memcpy(p + 36, b->filename, l);
	}
}

int cst_perf_writer_finish(struct cst_perf_writer *w)
{
	enum { NF = 8 };
	static const int bits[NF] = {
		cst_perf_feat_build_id, cst_perf_feat_hostname, cst_perf_feat_osrelease,
		cst_perf_feat_version,  cst_perf_feat_arch,     cst_perf_feat_nrcpus,
		cst_perf_feat_cmdline,  cst_perf_feat_auxtrace,
	};
	struct cst_buf fb[NF];
	uint64_t feat[4] = {0}, off, data_size;
	int err = 0, nf = 0;

	if (!w)
		return -cste_invalid;
	err = pd_writable(w);
	if (err)
		return err;
	memset(fb, 0, sizeof(fb));
	for (int i = 0; i < NF; i++) {
		struct cst_buf *f = &fb[nf];

		switch (bits[i]) {
		case cst_perf_feat_build_id:
			fb_build_ids(w, f);
			break;
		case cst_perf_feat_hostname:
			fb_string(f, w->hostname);
			break;
		case cst_perf_feat_osrelease:
			fb_string(f, w->osrelease);
			break;
		case cst_perf_feat_version:
			fb_string(f, w->version);
			break;
		case cst_perf_feat_arch:
			fb_string(f, w->arch);
			break;
		case cst_perf_feat_nrcpus:
			cst_buf_put_le32(f, w->nr_avail);
			cst_buf_put_le32(f, w->nr_online);
			break;
		case cst_perf_feat_cmdline:
			if (!w->ncmdline)
				continue;
			cst_buf_put_le32(f, w->ncmdline);
			for (uint32_t k = 0; k < w->ncmdline; k++)
				fb_string(f, w->cmdline[k]);
			break;
		case cst_perf_feat_auxtrace:
			if (!w->naux)
				continue;
			cst_buf_put_le64(f, w->naux);
			for (uint64_t k = 0; k < w->naux; k++) {
				cst_buf_put_le64(f, w->aux_index[k]);
				cst_buf_put_le64(f, 48);
			}
			break;
		}
		if (f->failed) {
			err = -cste_nomem;
			break;
		}
		feat[bits[i] / 64] |= 1ull << (bits[i] % 64);
		nf++;
	}
	/* Section table at data end, payloads after it, then the final header. */
	if (!err && !w->count)
		/* An empty data section would read as unfinished: give it one record. */
		err = cst_perf_writer_finished_round(w);
	data_size = w->pos - w->data_offset;
	off = w->pos + (uint64_t)nf * 16;
	for (int i = 0; i < nf && !err; i++) {
		uint8_t sec[16];

		cst_put_le64(sec, off);
		cst_put_le64(sec + 8, fb[i].len);
		err = pd_write_at(w, w->pos + (uint64_t)i * 16, sec, 16);
		if (!err && fb[i].len)
			err = pd_write_at(w, off, fb[i].p, fb[i].len);
		off += fb[i].len;
	}
	for (int i = 0; i < NF; i++)
		free(fb[i].p);
	if (err)
		return err;
	/* The data must be on disk before the header says it is complete. */
	if (fdatasync(w->fd) && errno != EINVAL && errno != EROFS) {
		cst_logf(&w->log, cst_log_error, "%s: write failed: %s", w->path, strerror(errno));
		return w->error = -cste_io;
	}
	err = pd_write_header(w, data_size, feat);
	if (err)
		return err;
	/* a device written in place (whole, no temporary) has no size to set */
	if (ftruncate(w->fd, (off_t)off) && !(w->opts.whole && !w->out.tmp)) {
		cst_logf(&w->log, cst_log_error, "%s: write failed: %s", w->path, strerror(errno));
		return w->error = -cste_io;
	}
	if (w->opts.whole) {
		w->fd = -1; /* closed by the commit, or by its failure */
		err = cst_out_commit(&w->out);
		if (err < 0) {
			w->error = err;
			return err;
		}
	}
	w->finished = true;
	return 0;
}
