/* perf.data writer shared by capture and synth: an unfinished-looking header first
 * (data.size 0, no features, as perf record does), records appended, features at finish. */
#include "writer_int.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

int pd_write_at(struct cst_perf_writer *w, uint64_t off, const void *buf, uint64_t len)
{
	uint64_t done = 0;

	while (done < len) {
		ssize_t n = pwrite(w->fd, (const uint8_t *)buf + done, len - done, (off_t)(off + done));

		if (n < 0) {
			if (errno == EINTR)
				continue;
			cst_logf(&w->log, cst_log_error, "%s: write at offset %" PRIu64 " failed: %s",
				 w->path, off + done, strerror(errno));
			w->error = -cste_io;
			return -cste_io;
		}
		done += (uint64_t)n;
	}
	return 0;
}

int pd_write_header(struct cst_perf_writer *w, uint64_t data_size, const uint64_t feat[4])
{
	uint8_t h[CST_PERF_HEADER_SIZE] = {0};

	cst_put_le64(h, CST_PERF_MAGIC);
	cst_put_le64(h + 8, CST_PERF_HEADER_SIZE);
	cst_put_le64(h + 16, CST_PERF_ATTR_SIZE + 16);
	cst_put_le64(h + 24, w->attr_offset);
	cst_put_le64(h + 32, w->attr_size);
	cst_put_le64(h + 40, w->data_offset);
	cst_put_le64(h + 48, data_size);
	for (int i = 0; i < 4; i++)
		cst_put_le64(h + 72 + i * 8, feat[i]);
	return pd_write_at(w, 0, h, sizeof(h));
}

static char *dup_or(const char *s, const char *fallback)
{
	return strdup(s ? s : fallback);
}

int cst_perf_writer_open(struct cst_perf_writer **out, const char *path,
			 const struct cst_perf_writer_opts *opts)
{
	static const uint64_t nofeat[4];
	struct cst_perf_writer *w;
	struct utsname u;
	long ncpu;
	int err;

	if (!out || !path)
		return -cste_invalid;
	*out = NULL;
	w = calloc(1, sizeof(*w));
	if (!w)
		return -cste_nomem;
	w->fd = -1;
	w->out.fd = -1;
	if (cst_opts_load(&w->opts, sizeof(w->opts), opts, "cst_perf_writer_opts",
			  opts ? opts->log : NULL) < 0) {
		free(w);
		return -cste_invalid;
	}
	if (w->opts.log)
		w->log = *w->opts.log;
	if (uname(&u))
		memset(&u, 0, sizeof(u));
	ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	w->path = strdup(path);
	w->hostname = dup_or(w->opts.hostname, u.nodename);
	w->osrelease = dup_or(w->opts.osrelease, u.release);
	w->arch = dup_or(w->opts.arch, u.machine);
	w->version = dup_or(w->opts.version, "6.1.cstrace");
	w->nr_avail = w->opts.nr_cpus_avail ? w->opts.nr_cpus_avail : (uint32_t)(ncpu > 0 ? ncpu : 1);
	w->nr_online = w->opts.nr_cpus_online ? w->opts.nr_cpus_online : w->nr_avail;
	if (w->opts.cmdline) {
		uint32_t n = 0;

		while (w->opts.cmdline[n])
			n++;
		w->cmdline = calloc(n + 1, sizeof(char *));
		if (w->cmdline)
			for (; w->ncmdline < n; w->ncmdline++)
				if (!(w->cmdline[w->ncmdline] = strdup(w->opts.cmdline[w->ncmdline])))
					break;
		if (!w->cmdline || w->ncmdline < n) {
			cst_perf_writer_free(w);
			return -cste_nomem;
		}
	}
	w->opts.log = NULL;
	w->opts.cmdline = NULL;
	if (!w->path || !w->hostname || !w->osrelease || !w->arch || !w->version) {
		cst_perf_writer_free(w);
		return -cste_nomem;
	}
	if (w->opts.whole) {
		struct cst_out_opts oo = {.sz = sizeof(oo), .log = &w->log,
					  .inputs = w->opts.inputs, .private_file = true};

		err = cst_out_open(&w->out, path, &oo);
		if (err < 0) {
			cst_perf_writer_free(w);
			return err;
		}
		w->fd = w->out.fd;
	} else {
		const char *input = cst_file_set_find(w->opts.inputs, path);

		if (input) {
			cst_logf(&w->log, cst_log_error, "%s: is the input %s; refusing to overwrite it",
				 path, input);
			cst_perf_writer_free(w);
			return -cste_invalid;
		}
		w->fd = cst_create_private(path);
		if (w->fd < 0) {
			cst_logf(&w->log, cst_log_error, "%s: cannot create: %s", path,
				 strerror(errno));
			cst_perf_writer_free(w);
			return -cste_io;
		}
	}
	w->opts.inputs = NULL; /* the caller's, looked at here only */
	w->attr_offset = CST_PERF_HEADER_SIZE;
	w->data_offset = CST_PERF_HEADER_SIZE;
	err = pd_write_header(w, 0, nofeat);
	if (err) {
		cst_perf_writer_free(w);
		return err;
	}
	w->pos = CST_PERF_HEADER_SIZE;
	*out = w;
	return 0;
}

int cst_perf_writer_add_attr(struct cst_perf_writer *w, const struct cst_perf_attr *attr,
			     const uint64_t *ids, uint64_t nids)
{
	struct wattr *n;

	if (!w || !attr || (nids && !ids) || w->data_started || w->finished)
		return -cste_invalid;
	if (CST_GROW(w->attrs, w->cap_attrs, (size_t)w->nattrs + 1) < 0)
		return -cste_nomem;
	n = &w->attrs[w->nattrs];
	n->attr = *attr;
	n->attr.ids = NULL;
	n->attr.nids = 0;
	if (nids) {
		n->ids = malloc(nids * sizeof(uint64_t));
		if (!n->ids)
			return -cste_nomem;
		memcpy(n->ids, ids, nids * sizeof(uint64_t));
		n->nids = nids;
	}
	return w->nattrs++;
}

static void encode_attr(const struct cst_perf_attr *a, uint8_t *b)
{
	memset(b, 0, CST_PERF_ATTR_SIZE);
	cst_put_le32(b, a->type);
	cst_put_le32(b + 4, CST_PERF_ATTR_SIZE);
	cst_put_le64(b + 8, a->config);
	cst_put_le64(b + 16, a->sample_period);
	cst_put_le64(b + 24, a->sample_type);
	cst_put_le64(b + 32, a->read_format);
	cst_put_le64(b + 40, a->flags);
	cst_put_le32(b + 48, a->wakeup_events);
	cst_put_le32(b + 52, a->bp_type);
	cst_put_le64(b + 56, a->config1);
	cst_put_le64(b + 64, a->config2);
	cst_put_le32(b + 104, a->aux_watermark);
	cst_put_le32(b + 112, a->aux_sample_size);
	/* config3 needs a 136-byte attr, which perf 6.1 refuses: not written. */
}

/* Lay out ids then attrs then data, as perf does, and rewrite the header so that a
 * crash from here on leaves a file whose records can be recovered. */
int pd_start_data(struct cst_perf_writer *w)
{
	static const uint64_t nofeat[4];
	uint64_t off = CST_PERF_HEADER_SIZE;
	uint64_t *ids_off;
	int err = 0;

	if (w->data_started)
		return 0;
	if (w->error)
		return w->error;
	ids_off = calloc((size_t)w->nattrs + 1, sizeof(uint64_t));
	if (!ids_off)
		return -cste_nomem;
	for (int i = 0; i < w->nattrs && !err; i++) {
		uint8_t b[8];

		ids_off[i] = off;
		for (uint64_t k = 0; k < w->attrs[i].nids && !err; k++) {
			cst_put_le64(b, w->attrs[i].ids[k]);
			err = pd_write_at(w, off, b, 8);
			off += 8;
		}
	}
	w->attr_offset = off;
	for (int i = 0; i < w->nattrs && !err; i++) {
		uint8_t b[CST_PERF_ATTR_SIZE + 16];

		encode_attr(&w->attrs[i].attr, b);
		cst_put_le64(b + CST_PERF_ATTR_SIZE, ids_off[i]);
		cst_put_le64(b + CST_PERF_ATTR_SIZE + 8, w->attrs[i].nids * 8);
		err = pd_write_at(w, off, b, sizeof(b));
		off += sizeof(b);
	}
	free(ids_off);
	if (err)
		return err;
	w->attr_size = (uint64_t)w->nattrs * (CST_PERF_ATTR_SIZE + 16);
	w->data_offset = off;
	w->pos = off;
	err = pd_write_header(w, 0, nofeat);
	if (err)
		return err;
	w->data_started = true;
	return 0;
}

int pd_writable(struct cst_perf_writer *w)
{
	if (w->finished)
		return -cste_invalid;
	if (w->error)
		return w->error;
	return pd_start_data(w);
}

static int emit(struct cst_perf_writer *w, const void *rec, size_t len)
{
	int err;

	if (!w || !rec || len < 8 || len > 0xffff)
		return -cste_invalid;
	err = pd_writable(w);
	if (err)
		return err;
	err = pd_write_at(w, w->pos, rec, len);
	if (err)
		return err;
	w->pos += len;
	w->count++;
	return 0;
}

int cst_perf_writer_raw(struct cst_perf_writer *w, const void *rec, size_t len)
{
	if (!rec || len < 8 || cst_le16((const uint8_t *)rec + 6) != len)
		return -cste_invalid;
	return emit(w, rec, len);
}

/* Append the sample_id trailer in the first attr's layout; returns bytes added. */
static size_t put_sample_id(const struct cst_perf_writer *w, uint8_t *p,
			    const struct cst_perf_sample_id *sid)
{
	static const struct cst_perf_sample_id zero;
	uint64_t st;
	size_t n = 0;

	if (!w->nattrs || !(w->attrs[0].attr.flags & CST_PERF_ATTR_SAMPLE_ID_ALL))
		return 0;
	if (!sid)
		sid = &zero;
	st = w->attrs[0].attr.sample_type;
	if (st & CST_PERF_SAMPLE_TID) {
		cst_put_le32(p + n, sid->pid);
		cst_put_le32(p + n + 4, sid->tid);
		n += 8;
	}
	if (st & CST_PERF_SAMPLE_TIME) {
		cst_put_le64(p + n, sid->time);
		n += 8;
	}
	if (st & CST_PERF_SAMPLE_ID) {
		cst_put_le64(p + n, sid->id);
		n += 8;
	}
	if (st & CST_PERF_SAMPLE_STREAM_ID) {
		cst_put_le64(p + n, sid->stream_id);
		n += 8;
	}
	if (st & CST_PERF_SAMPLE_CPU) {
		cst_put_le32(p + n, sid->cpu);
		cst_put_le32(p + n + 4, sid->res);
		n += 8;
	}
	if (st & CST_PERF_SAMPLE_IDENTIFIER) {
		cst_put_le64(p + n, sid->id);
		n += 8;
	}
	return n;
}


/* Kernel record with a fixed body of @body bytes (header included) in @b. */
static int emit_kernel(struct cst_perf_writer *w, uint8_t *b, uint32_t type, uint16_t misc,
		       size_t body, const struct cst_perf_sample_id *sid)
{
	size_t size;

	if (!w)
		return -cste_invalid;
	size = body + put_sample_id(w, b + body, sid);
	pd_put_hdr(b, type, misc, size);
	return emit(w, b, size);
}

int cst_perf_writer_etm_info(struct cst_perf_writer *w, const struct cst_perf_etm_info *info)
{
	uint64_t nwords = cst_perf_etm_info_words(info);
	uint8_t *b;
	size_t size;
	int err;

	if (!w || !nwords)
		return -cste_invalid;
	size = 16 + nwords * 8;
	if (size > 0xffff)
		return -cste_invalid;
	b = calloc(1, size);
	if (!b)
		return -cste_nomem;
	pd_put_hdr(b, cst_perf_rec_auxtrace_info, 0, size);
	cst_put_le32(b + 8, CST_PERF_AUXTRACE_CS_ETM);
	err = cst_perf_etm_info_encode(info, b + 16, nwords);
	if (!err)
		err = emit(w, b, size);
	free(b);
	return err;
}

int cst_perf_writer_auxtrace(struct cst_perf_writer *w, uint64_t aux_offset,
			     uint64_t reference, uint32_t idx, uint32_t tid, uint32_t cpu,
			     const void *data, uint64_t len)
{
	static const uint8_t pad[8];
	uint64_t padded = (len + 7) & ~7ull, hdr_off;
	uint8_t b[48] = {0};
	int err;

	if (!w || (len && !data) || len > UINT64_MAX - 8)
		return -cste_invalid;
	pd_put_hdr(b, cst_perf_rec_auxtrace, 0, sizeof(b));
	cst_put_le64(b + 8, padded);
	cst_put_le64(b + 16, aux_offset);
	cst_put_le64(b + 24, reference);
	cst_put_le32(b + 32, idx);
	cst_put_le32(b + 36, tid);
	cst_put_le32(b + 40, cpu);
	if (CST_GROW(w->aux_index, w->cap_aux, w->naux + 1) < 0)
		return -cste_nomem;
	err = pd_start_data(w);
	if (err)
		return err;
	hdr_off = w->pos;
	/* Payload before header: a crash mid-payload then leaves no header claiming it. */
	err = pd_write_at(w, hdr_off + sizeof(b), data, len);
	if (!err && padded > len)
		err = pd_write_at(w, hdr_off + sizeof(b) + len, pad, padded - len);
	if (!err)
		err = emit(w, b, sizeof(b));
	if (err)
		return err;
	w->pos += padded;
	w->aux_index[w->naux++] = hdr_off;
	return 0;
}

int cst_perf_writer_aux(struct cst_perf_writer *w, uint64_t aux_offset, uint64_t aux_size,
			uint64_t flags, const struct cst_perf_sample_id *sid)
{
	uint8_t b[32 + 64];

	cst_put_le64(b + 8, aux_offset);
	cst_put_le64(b + 16, aux_size);
	cst_put_le64(b + 24, flags);
	return emit_kernel(w, b, cst_perf_rec_aux, 0, 32, sid);
}

int cst_perf_writer_itrace_start(struct cst_perf_writer *w, uint32_t pid, uint32_t tid,
				 const struct cst_perf_sample_id *sid)
{
	uint8_t b[16 + 64];

	cst_put_le32(b + 8, pid);
	cst_put_le32(b + 12, tid);
	return emit_kernel(w, b, cst_perf_rec_itrace_start, 0, 16, sid);
}

int cst_perf_writer_hw_id(struct cst_perf_writer *w, uint64_t hw_id,
			  const struct cst_perf_sample_id *sid)
{
	uint8_t b[16 + 64];

	cst_put_le64(b + 8, hw_id);
	return emit_kernel(w, b, cst_perf_rec_aux_output_hw_id, 0, 16, sid);
}

int cst_perf_writer_mmap2(struct cst_perf_writer *w, uint16_t misc, uint32_t pid, uint32_t tid,
			  uint64_t addr, uint64_t len, uint64_t pgoff, uint32_t prot,
			  uint32_t flags, const uint8_t *build_id, uint8_t build_id_size,
			  const char *filename, const struct cst_perf_sample_id *sid)
{
	uint8_t b[72 + 4096 + 64] = {0};
	size_t fl, body;

	if (!filename || build_id_size > 20 || (build_id_size && !build_id))
		return -cste_invalid;
	fl = strlen(filename);
	if (fl >= 4096)
		return -cste_invalid;
	cst_put_le32(b + 8, pid);
	cst_put_le32(b + 12, tid);
	cst_put_le64(b + 16, addr);
	cst_put_le64(b + 24, len);
	cst_put_le64(b + 32, pgoff);
	if (build_id_size) {
		misc |= CST_PERF_MISC_MMAP_BUILD_ID;
		b[40] = build_id_size;
		memcpy(b + 44, build_id, build_id_size);
	} else {
		misc &= (uint16_t)~CST_PERF_MISC_MMAP_BUILD_ID;
	}
	cst_put_le32(b + 64, prot);
	cst_put_le32(b + 68, flags);
	memcpy(b + 72, filename, fl);
	body = 72 + ((fl + 8) & ~(size_t)7);
	return emit_kernel(w, b, cst_perf_rec_mmap2, misc, body, sid);
}

int cst_perf_writer_comm(struct cst_perf_writer *w, bool exec, uint32_t pid, uint32_t tid,
			 const char *comm, const struct cst_perf_sample_id *sid)
{
	uint8_t b[16 + 256 + 64] = {0};
	size_t cl;

	if (!comm)
		return -cste_invalid;
	cl = strnlen(comm, 255);
	cst_put_le32(b + 8, pid);
	cst_put_le32(b + 12, tid);
	memcpy(b + 16, comm, cl);
	/* PERF_RECORD_MISC_COMM_EXEC is bit 13, shared with SWITCH_OUT. */
	return emit_kernel(w, b, cst_perf_rec_comm, exec ? (1u << 13) : 0,
			   16 + ((cl + 8) & ~(size_t)7), sid);
}

int cst_perf_writer_task(struct cst_perf_writer *w, bool exit, uint32_t pid, uint32_t ppid,
			 uint32_t tid, uint32_t ptid, uint64_t time,
			 const struct cst_perf_sample_id *sid)
{
	uint8_t b[32 + 64];

	cst_put_le32(b + 8, pid);
	cst_put_le32(b + 12, ppid);
	cst_put_le32(b + 16, tid);
	cst_put_le32(b + 20, ptid);
	cst_put_le64(b + 24, time);
	return emit_kernel(w, b, exit ? cst_perf_rec_exit : cst_perf_rec_fork, 0, 32, sid);
}

int cst_perf_writer_switch(struct cst_perf_writer *w, bool out, bool cpu_wide,
			   uint32_t next_prev_pid, uint32_t next_prev_tid,
			   const struct cst_perf_sample_id *sid)
{
	uint8_t b[16 + 64];
	uint16_t misc = out ? CST_PERF_MISC_SWITCH_OUT : 0;

	if (!cpu_wide)
		return emit_kernel(w, b, cst_perf_rec_switch, misc, 8, sid);
	cst_put_le32(b + 8, next_prev_pid);
	cst_put_le32(b + 12, next_prev_tid);
	return emit_kernel(w, b, cst_perf_rec_switch_cpu_wide, misc, 16, sid);
}

int cst_perf_writer_lost(struct cst_perf_writer *w, uint64_t id, uint64_t lost,
			 const struct cst_perf_sample_id *sid)
{
	uint8_t b[24 + 64];

	cst_put_le64(b + 8, id);
	cst_put_le64(b + 16, lost);
	return emit_kernel(w, b, cst_perf_rec_lost, 0, 24, sid);
}

int cst_perf_writer_finished_round(struct cst_perf_writer *w)
{
	uint8_t b[8];

	pd_put_hdr(b, cst_perf_rec_finished_round, 0, sizeof(b));
	return emit(w, b, sizeof(b));
}

uint64_t cst_perf_writer_count(const struct cst_perf_writer *w)
{
	return w ? w->count : 0;
}

int cst_perf_writer_get_opts(const struct cst_perf_writer *w, struct cst_perf_writer_opts *o)
{
	if (!w || !o)
		return -cste_invalid;
	memset(o, 0, sizeof(*o));
	o->sz = sizeof(*o);
	o->hostname = w->hostname;
	o->osrelease = w->osrelease;
	o->arch = w->arch;
	o->version = w->version;
	o->nr_cpus_avail = w->nr_avail;
	o->nr_cpus_online = w->nr_online;
	o->cmdline = w->ncmdline ? (const char *const *)w->cmdline : NULL;
	return 0;
}

int cst_perf_writer_add_build_id(struct cst_perf_writer *w, int32_t pid, uint16_t misc,
				 const uint8_t *id, uint8_t size, const char *filename)
{
	struct cst_perf_build_id *b;

	if (!w || !id || !size || size > 20 || !filename || w->finished)
		return -cste_invalid;
	if (CST_GROW(w->bids, w->cap_bids, w->nbids + 1) < 0)
		return -cste_nomem;
	b = &w->bids[w->nbids];
	memset(b, 0, sizeof(*b));
	b->pid = pid;
	b->misc = misc;
	b->size = size;
	memcpy(b->id, id, size);
	b->filename = strdup(filename);
	if (!b->filename)
		return -cste_nomem;
	w->nbids++;
	return 0;
}

void cst_perf_writer_free(struct cst_perf_writer *w)
{
	if (!w)
		return;
	if (w->out.path)
		cst_out_abort(&w->out); /* whole, unfinished: nothing remains */
	else if (w->fd >= 0)
		close(w->fd);
	for (int i = 0; i < w->nattrs; i++)
		free(w->attrs[i].ids);
	free(w->attrs);
	for (uint64_t i = 0; i < w->nbids; i++)
		free(w->bids[i].filename);
	free(w->bids);
	free(w->aux_index);
	for (uint32_t i = 0; i < w->ncmdline; i++)
		free(w->cmdline[i]);
	free(w->cmdline);
	free(w->hostname);
	free(w->osrelease);
	free(w->arch);
	free(w->version);
	free(w->path);
	free(w);
}
