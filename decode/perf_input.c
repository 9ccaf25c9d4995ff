/* perf.data input behind cst_session: cs_etm AUXTRACE_INFO to trace sources, each AUX
 * record to one decoder run over its AUXTRACE bytes, sideband to pid/tid/cpu and memory. */
#include "perf_input.h"
#include "perf_mem.h"
#include "perf_order.h"
#include "trace_internal.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cstrace/perfdata.h"

#define FEED_CHUNK (256u * 1024u)
/* time order: bytes decoded at a time per queue. It bounds what is held undelivered:
 * dense trace gives thousands of ranges per KiB (4 KiB pieces held 80 MiB on a 4-CPU
 * loop, 64 bytes hold 8 MiB, in the same time: bench/perf_bench.sh). */
#define TIMED_PIECE 64u
#define ETM_OPT_TS 28 /* cs_etm attr.config: timestamps on (perf decodes by time) */
#define PROT_EXEC_BIT 0x4
#define MISC_COMM_EXEC (1u << 13)
#define MISC_MMAP_DATA (1u << 13)

/* One AUXTRACE record: where its payload sits and which ring it came from. */
struct auxbuf {
	uint64_t hdr_off, data_off, size, offset;
	uint32_t idx, tid, cpu;
};

struct thread {
	int32_t tid, pid;
};

/* An AUX record's trace: where it is, which queue (ring) it came from and whose
 * it is when it starts (from ITRACE_START / SWITCH at the record). */
struct frag {
	uint64_t data_off, size;
	uint64_t rec_off; /* file offset of the AUX record */
	uint32_t queue;
	int ci;           /* index of its CPU in AUXTRACE_INFO */
	bool raw;
	int32_t pid, tid, cpu;
};

/* Time order: each queue decoded by its own decoder, a piece at a time. */
struct tqueue {
	struct cst_decoder *frames, *raw;
	int raw_ci;
	uint64_t scan;           /* next fragment to look at */
	const struct frag *cur;  /* the fragment being decoded, or NULL */
	uint64_t pos, left;
	uint64_t last_unit;      /* where the fragment's last frame (raw: byte) starts */
	struct cst_decoder *dec;
	int32_t pid, tid;        /* attribution as it stands in this queue */
};

/* Who runs on a CPU (per-CPU) or in a per-thread buffer, from ITRACE_START/SWITCH. */
struct running {
	int32_t key; /* cpu, or tid for per-thread buffers */
	int32_t pid, tid;
};

enum pid_fmt { pid_fmt_none, pid_fmt_ctxid, pid_fmt_vmid };

struct cst_perf_input {
	char *path;
	struct cst_log log;
	struct cst_perf_reader *r;
	struct cst_perf_etm_info info;
	struct perf_mem *mem;
	enum pid_fmt pid_fmt;

	int frames_buffer;  /* trace buffer for formatted AUX data, or -1 */
	int *raw_buffer;    /* per info CPU index: buffer of its raw data, or -1 */
	bool has_aux;       /* AUX records present (else whole AUXTRACE buffers) */

	struct auxbuf *bufs;
	uint64_t nbufs, cap_bufs;
	struct thread *threads;
	size_t nthreads, cap_threads;
	struct running *run;
	size_t nrun, cap_run;

	/* decoders, made on first use */
	struct cst_decoder *frames_dec;
	struct cst_decoder **raw_dec;
	bool packets_only;

	/* resuming after a decoder crash (cst_session_opts start_offset/resume_from) */
	uint64_t resume_at, resume_from;
	bool resuming; /* still before the fragment that crashed */

	/* the fragment being decoded */
	cst_elem_fn elem_fn;
	void *elem_ctx;
	int32_t cur_pid, cur_tid, cur_cpu;
	uint32_t fragment;
	uint64_t truncated_aux, missing_aux;
	bool sb_apply; /* sideband() changes threads and maps (not when only telling) */

	/* time order (cst_order_time): fragments queued by a first walk, then merged */
	bool timed;
	struct frag *frags;
	uint64_t nfrags, cap_frags;
	struct tqueue *tq;
	unsigned ntq, cur_queue;
	struct perf_order *order;
	const struct cst_trace *trace;
	uint8_t *piece;
	cst_elem_fn user_elem_fn;
	cst_sideband_fn user_sb_fn;
	void *user_ctx;
	/* sideband told by a second reader that trails the merge */
	struct cst_perf_reader *sb_r;
	struct cst_perf_record sb_rec;
	bool sb_pending, sb_done;
};

static void warnf(struct cst_perf_input *in, uint64_t off, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void warnf(struct cst_perf_input *in, uint64_t off, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	cst_vlogf_at(&in->log, cst_log_warning, in->path, off, fmt, ap);
	va_end(ap);
}

/* ------------------------------------------------------------- threads */

static struct thread *thread_find(struct cst_perf_input *in, int32_t tid)
{
	for (size_t i = in->nthreads; i-- > 0;)
		if (in->threads[i].tid == tid)
			return &in->threads[i];
	return NULL;
}

static void thread_set(struct cst_perf_input *in, int32_t tid, int32_t pid)
{
	struct thread *t = thread_find(in, tid);

	if (t) {
		t->pid = pid;
		return;
	}
	if (in->nthreads == in->cap_threads) {
		size_t ncap = in->cap_threads ? in->cap_threads * 2 : 64;
		void *n = realloc(in->threads, ncap * sizeof(*in->threads));

		if (!n)
			return;
		in->threads = n;
		in->cap_threads = ncap;
	}
	in->threads[in->nthreads++] = (struct thread){tid, pid};
}

static int32_t pid_of(struct cst_perf_input *in, int32_t tid)
{
	struct thread *t = thread_find(in, tid);

	return t ? t->pid : -1;
}

static struct running *running_get(struct cst_perf_input *in, int32_t key)
{
	for (size_t i = 0; i < in->nrun; i++)
		if (in->run[i].key == key)
			return &in->run[i];
	if (in->nrun == in->cap_run) {
		size_t ncap = in->cap_run ? in->cap_run * 2 : 16;
		void *n = realloc(in->run, ncap * sizeof(*in->run));

		if (!n)
			return NULL;
		in->run = n;
		in->cap_run = ncap;
	}
	in->run[in->nrun] = (struct running){key, -1, -1};
	return &in->run[in->nrun++];
}

/* ------------------------------------------------------------- open */

static int add_buf(struct cst_perf_input *in, const struct cst_perf_record *rec)
{
	if (in->nbufs == in->cap_bufs) {
		uint64_t ncap = in->cap_bufs ? in->cap_bufs * 2 : 64;
		void *n = realloc(in->bufs, ncap * sizeof(*in->bufs));

		if (!n)
			return -cste_nomem;
		in->bufs = n;
		in->cap_bufs = ncap;
	}
	in->bufs[in->nbufs++] = (struct auxbuf){rec->file_offset, rec->u.auxtrace.data_offset,
						rec->u.auxtrace.size, rec->u.auxtrace.offset,
						rec->u.auxtrace.idx, rec->u.auxtrace.tid,
						rec->u.auxtrace.cpu};
	return 0;
}

/* The HEADER_AUXTRACE index says where AUXTRACE records are; check that each entry
 * points at one, as a file edited or cut short may not agree with its index. */
static bool index_agrees(struct cst_perf_input *in)
{
	const struct cst_perf_features *f = cst_perf_reader_features(in->r);
	uint64_t k;

	if (!f->has_auxtrace_index)
		return true;
	if (f->nauxtrace != in->nbufs) {
		warnf(in, 0, "the AUXTRACE index lists %" PRIu64 " buffers, the data holds %" PRIu64
			     "; using the buffers found by scanning",
		      f->nauxtrace, in->nbufs);
		return false;
	}
	for (k = 0; k < in->nbufs; k++)
		if (f->auxtrace_offsets[k] != in->bufs[k].hdr_off) {
			warnf(in, f->auxtrace_offsets[k],
			      "AUXTRACE index entry %" PRIu64 " does not point at an AUXTRACE record; "
			      "using the buffers found by scanning",
			      k);
			return false;
		}
	return true;
}

static void source_from_info(const struct cst_perf_etm_cpu *c, struct cst_source_cfg *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->cpu = (int)c->cpu;
	cfg->profile = cst_core_profile_a;
	if (c->magic == CST_PERF_ETMV3_MAGIC) {
		cfg->protocol = c->is_ptm ? cst_proto_ptm : cst_proto_etmv3;
		cfg->arch = cst_core_arch_v7;
		cfg->regs.etmv3.etmidr = c->etmidr;
		cfg->regs.etmv3.etmcr = c->etmcr;
		cfg->regs.etmv3.etmccer = c->etmccer;
		cfg->regs.etmv3.etmtraceidr = c->etmtraceidr & 0x7f;
		snprintf(cfg->name, sizeof(cfg->name), "%s_%d", c->is_ptm ? "PTM" : "ETM",
			 cfg->cpu);
		snprintf(cfg->core_name, sizeof(cfg->core_name), "ARMv7-A");
		return;
	}
	cfg->protocol = c->magic == CST_PERF_ETE_MAGIC ? cst_proto_ete : cst_proto_etmv4i;
	cfg->arch = c->magic == CST_PERF_ETE_MAGIC ? cst_core_arch_aa64 : cst_core_arch_v8;
	cfg->regs.etmv4.trcconfigr = c->trcconfigr;
	cfg->regs.etmv4.trctraceidr = c->trctraceidr & 0x7f;
	cfg->regs.etmv4.trcidr0 = c->trcidr0;
	cfg->regs.etmv4.trcidr1 = c->trcidr1;
	cfg->regs.etmv4.trcidr2 = c->trcidr2;
	cfg->regs.etmv4.trcidr8 = c->trcidr8;
	cfg->regs.etmv4.trcauthstatus = c->trcauthstatus;
	cfg->regs.etmv4.trcdevarch = c->trcdevarch;
	snprintf(cfg->name, sizeof(cfg->name), "%s_%d",
		 c->magic == CST_PERF_ETE_MAGIC ? "ETE" : "ETM", cfg->cpu);
	snprintf(cfg->core_name, sizeof(cfg->core_name), "%s",
		 c->magic == CST_PERF_ETE_MAGIC ? "ARM-AA64" : "ARMv8-A");
}

/* perf's pid format: what the trace's context packets carry (cs_etm__init_pid_fmt). */
static enum pid_fmt pid_format(const struct cst_perf_etm_cpu *c)
{
	if (c->magic == CST_PERF_ETMV3_MAGIC)
		return (c->etmcr & (1u << 14)) ? pid_fmt_ctxid : pid_fmt_none;
	if ((c->trcconfigr & (1u << 7)) && (c->trcconfigr & (1u << 15)))
		return pid_fmt_vmid;
	return (c->trcconfigr & (1u << 6)) ? pid_fmt_ctxid : pid_fmt_none;
}

/* perf decodes by time when the cs_etm event had timestamps on (its config bit
 * ETM_OPT_TS; cs_etm__setup_timeless_decoding), whatever its sample_type says. */
static bool recorded_with_timestamps(const struct cst_perf_input *in)
{
	for (int i = 0; i < cst_perf_reader_nattrs(in->r); i++) {
		const struct cst_perf_attr *a = cst_perf_reader_attr(in->r, i);

		if (a && a->type == in->info.pmu_type && (a->config & (1ull << ETM_OPT_TS)))
			return true;
	}
	return false;
}

/* First pass: trace IDs from AUX_OUTPUT_HW_ID, data formats, AUXTRACE buffers. */
static int prescan(struct cst_perf_input *in, uint8_t *hw_ids, bool *frames, bool *raw_cpu)
{
	struct cst_perf_record rec;
	uint64_t n = 0;
	int err;

	cst_perf_reader_rewind(in->r);
	while ((err = cst_perf_reader_next(in->r, &rec)) == 0) {
		n++;
		switch (rec.type) {
		case cst_perf_rec_aux_output_hw_id:
			for (uint32_t i = 0; i < in->info.nr_cpu; i++)
				if (rec.sid.have_cpu && in->info.cpus[i].cpu == rec.sid.cpu)
					hw_ids[i] = (uint8_t)(rec.u.hw_id.hw_id & 0x7f);
			break;
		case cst_perf_rec_aux:
			in->has_aux = true;
			if (!rec.u.aux.aux_size)
				break;
			if (rec.u.aux.flags & CST_PERF_AUX_CORESIGHT_RAW) {
				bool found = false;

				for (uint32_t i = 0; i < in->info.nr_cpu; i++)
					if (rec.sid.have_cpu && in->info.cpus[i].cpu == rec.sid.cpu)
						raw_cpu[i] = found = true;
				if (!found)
					raw_cpu[0] = true;
			} else {
				*frames = true;
			}
			break;
		case cst_perf_rec_auxtrace:
			err = add_buf(in, &rec);
			if (err)
				return err;
			break;
		default:
			break;
		}
	}
	if (err == -cste_truncated || err == -cste_format) {
		cst_logf(&in->log, cst_log_warning,
			 "%s: incomplete file, %" PRIu64 " records recovered", in->path, n);
	} else if (err != -cste_eos) {
		return err;
	} else if (cst_perf_reader_incomplete(in->r)) {
		cst_logf(&in->log, cst_log_warning,
			 "%s: incomplete file, %" PRIu64 " records recovered", in->path, n);
	}
	if (!in->has_aux)
		*frames = true; /* whole AUXTRACE buffers: perf treats them as formatted */
	return 0;
}

int dec_perf_input_open(struct cst_perf_input **out, const char *path,
			const struct cst_session_opts *opts, struct cst_trace *trace)
{
	struct cst_perf_reader_opts ro = {.sz = sizeof(ro)};
	struct cst_perf_input *in;
	const struct cst_perf_features *f;
	uint8_t hw_ids[256];
	bool frames = false, *raw_cpu = NULL;
	int err;

	if (!out || !path || !trace)
		return -cste_invalid;
	*out = NULL;
	in = calloc(1, sizeof(*in));
	if (!in)
		return -cste_nomem;
	in->frames_buffer = -1;
	if (opts && opts->log)
		in->log = *opts->log;
	if (opts && opts->start_offset) {
		in->resume_at = opts->start_offset;
		in->resume_from = opts->resume_from ? opts->resume_from : opts->start_offset;
	}
	ro.log = &in->log;
	in->path = strdup(path);
	if (!in->path) {
		err = -cste_nomem;
		goto fail;
	}
	err = cst_perf_reader_open(&in->r, path, &ro);
	if (err)
		goto fail;
	err = cst_perf_reader_etm_info(in->r, &in->info);
	if (err)
		goto fail;
	if (in->info.nr_cpu > 256) {
		cst_logf(&in->log, cst_log_error, "%s: %u CPUs in cs_etm AUXTRACE_INFO, at most 256",
			 path, in->info.nr_cpu);
		err = -cste_unsupported;
		goto fail;
	}
	memset(hw_ids, 0, sizeof(hw_ids));
	raw_cpu = calloc(in->info.nr_cpu, sizeof(bool));
	in->raw_buffer = calloc(in->info.nr_cpu, sizeof(int));
	in->raw_dec = calloc(in->info.nr_cpu, sizeof(*in->raw_dec));
	if (!raw_cpu || !in->raw_buffer || !in->raw_dec) {
		err = -cste_nomem;
		goto fail;
	}
	err = prescan(in, hw_ids, &frames, raw_cpu);
	if (err)
		goto fail;
	f = cst_perf_reader_features(in->r);
	if (!index_agrees(in)) {
		/* the scanned list stays in use */
	} else if (!f->has_auxtrace_index && in->nbufs) {
		cst_logf(&in->log, cst_log_debug, "%s: no AUXTRACE index; buffers found by scanning",
			 path);
	}
	in->pid_fmt = pid_format(&in->info.cpus[0]);
	in->timed = opts && opts->order == cst_order_time;
	if (!opts || opts->order == cst_order_auto)
		in->timed = recorded_with_timestamps(in);

	/* Sources: one per CPU; all in the frame buffer, and one raw buffer per CPU
	 * whose data is unformatted (a single source per unformatted stream). */
	if (frames) {
		struct cst_buffer_info b = {.name = "perf-aux", .path = path, .size = UINT64_MAX,
					    .format = cst_bufmt_frames};

		in->frames_buffer = cst_trace_add_buffer(trace, &b);
		if (in->frames_buffer < 0) {
			err = in->frames_buffer;
			goto fail;
		}
	}
	for (uint32_t i = 0; i < in->info.nr_cpu; i++) {
		struct cst_source_cfg cfg;

		source_from_info(&in->info.cpus[i], &cfg);
		if (hw_ids[i]) {
			if (cfg.protocol == cst_proto_etmv3 || cfg.protocol == cst_proto_ptm)
				cfg.regs.etmv3.etmtraceidr = hw_ids[i];
			else
				cfg.regs.etmv4.trctraceidr = hw_ids[i];
		}
		if (frames) {
			err = cst_trace_add_source(trace, in->frames_buffer, &cfg);
			if (err < 0)
				goto fail;
		}
		in->raw_buffer[i] = -1;
		if (raw_cpu[i]) {
			char name[64];
			struct cst_buffer_info b = {.name = name, .path = path, .size = UINT64_MAX,
						    .format = cst_bufmt_raw};

			snprintf(name, sizeof(name), "perf-aux-raw-cpu%d", cfg.cpu);
			in->raw_buffer[i] = cst_trace_add_buffer(trace, &b);
			if (in->raw_buffer[i] < 0) {
				err = in->raw_buffer[i];
				goto fail;
			}
			err = cst_trace_add_source(trace, in->raw_buffer[i], &cfg);
			if (err < 0)
				goto fail;
		}
	}
	in->mem = dec_perf_mem_alloc(opts ? opts->symfs : NULL, opts ? opts->buildid_dir : NULL,
				 opts ? opts->kernel : NULL, &in->log);
	if (!in->mem) {
		err = -cste_nomem;
		goto fail;
	}
	for (uint64_t i = 0; i < f->nbuild_ids; i++)
		dec_perf_mem_add_build_id(in->mem, f->build_ids[i].filename, f->build_ids[i].id,
				      f->build_ids[i].size);
	free(raw_cpu);
	*out = in;
	return 0;
fail:
	free(raw_cpu);
	dec_perf_input_free(in);
	return err;
}

enum cst_order dec_perf_input_order(const struct cst_perf_input *in)
{
	return in && in->timed ? cst_order_time : cst_order_file;
}

static void free_timed(struct cst_perf_input *in)
{
	for (unsigned q = 0; in->tq && q < in->ntq; q++) {
		cst_decoder_free(in->tq[q].frames);
		cst_decoder_free(in->tq[q].raw);
	}
	free(in->tq);
	in->tq = NULL;
	in->ntq = 0;
	dec_perf_order_free(in->order);
	in->order = NULL;
	cst_perf_reader_free(in->sb_r);
	in->sb_r = NULL;
	free(in->piece);
	in->piece = NULL;
}

void dec_perf_input_free(struct cst_perf_input *in)
{
	if (!in)
		return;
	free_timed(in);
	free(in->frags);
	cst_decoder_free(in->frames_dec);
	for (uint32_t i = 0; in->raw_dec && i < in->info.nr_cpu; i++)
		cst_decoder_free(in->raw_dec[i]);
	free(in->raw_dec);
	free(in->raw_buffer);
	dec_perf_mem_free(in->mem);
	cst_perf_etm_info_fini(&in->info);
	cst_perf_reader_free(in->r);
	free(in->bufs);
	free(in->threads);
	free(in->run);
	free(in->path);
	free(in);
}

/* ------------------------------------------------------------- run */

static int cpu_index(const struct cst_perf_input *in, uint32_t cpu)
{
	for (uint32_t i = 0; i < in->info.nr_cpu; i++)
		if (in->info.cpus[i].cpu == cpu)
			return (int)i;
	return -1;
}

static int on_elem(void *ctx, const struct cst_elem *elem)
{
	struct cst_perf_input *in = ctx;
	struct cst_elem e = *elem;

	/* Context IDs carry the tid when perf configured them (PID_IN_CONTEXTIDR). */
	if (e.type == cst_elem_pe_context && in->pid_fmt != pid_fmt_none) {
		bool valid = in->pid_fmt == pid_fmt_ctxid ? e.ctx.ctxid_valid : e.ctx.vmid_valid;
		uint32_t id = in->pid_fmt == pid_fmt_ctxid ? e.ctx.context_id : e.ctx.vmid;

		if (valid && id) {
			in->cur_tid = (int32_t)id;
			in->cur_pid = pid_of(in, in->cur_tid);
			dec_perf_mem_set_pid(in->mem, in->cur_pid);
		}
	}
	e.pid = in->cur_pid;
	e.tid = in->cur_tid;
	e.cpu = in->cur_cpu;
	e.fragment = in->fragment;
	return in->elem_fn ? in->elem_fn(in->elem_ctx, &e) : 0;
}

/* The decoder in @slot, made for @raw data of CPU index @ci on first use. */
static struct cst_decoder *decoder_in(struct cst_perf_input *in, const struct cst_trace *trace,
				      struct cst_decoder **slot, bool raw, int ci,
				      cst_packet_fn pkt_fn, void *pkt_ctx)
{
	struct cst_decoder_opts o = {.sz = sizeof(o), .log = &in->log,
				     .packets_only = in->packets_only, .fsync_reset = !raw,
				     .mem_read = dec_perf_mem_read, .mem_ctx = in->mem};
	int buffer = raw ? (ci < 0 ? -1 : in->raw_buffer[ci]) : in->frames_buffer;

	if (buffer < 0)
		return NULL;
	if (!*slot) {
		*slot = cst_decoder_alloc(trace, buffer, &o, NULL);
		if (!*slot)
			return NULL;
		cst_decoder_set_elem_cb(*slot, on_elem, in);
		if (pkt_fn)
			cst_decoder_set_packet_cb(*slot, pkt_fn, pkt_ctx);
	}
	return *slot;
}

static struct cst_decoder *decoder_for(struct cst_perf_input *in, const struct cst_trace *trace,
				       bool raw, int ci, cst_packet_fn pkt_fn, void *pkt_ctx)
{
	if (raw && ci < 0)
		return NULL;
	return decoder_in(in, trace, raw ? &in->raw_dec[ci] : &in->frames_dec, raw, ci, pkt_fn,
			  pkt_ctx);
}

/* After a decoder crash the run starts again: fragments decoded before the one
 * that crashed are skipped, and that one resumes past the crash point (on a frame
 * boundary for formatted data). Returns false to skip the fragment whole. */
static bool resume_clip(struct cst_perf_input *in, bool raw, uint64_t *off, uint64_t *size)
{
	uint64_t end = *off + *size, from;

	if (!in->resuming)
		return true;
	if (in->resume_from < *off || in->resume_from >= end)
		return false; /* decoded before the crash */
	in->resuming = false;
	if (in->resume_at < *off)
		return true;
	from = in->resume_at - *off;
	if (!raw)
		from = (from + 15) / 16 * 16;
	if (from >= *size)
		return false;
	*off += from;
	*size -= from;
	return true;
}

/* Decode @size bytes at file offset @off as one fragment. */
static int decode_fragment(struct cst_perf_input *in, struct cst_decoder *dec, uint64_t off,
			   uint64_t size, bool raw)
{
	uint8_t *buf;
	int ret = 0;

	if (!resume_clip(in, raw, &off, &size))
		return 0;
	buf = malloc(FEED_CHUNK);
	if (!buf)
		return -cste_nomem;
	cst_decoder_reset(dec);
	while (size && !ret) {
		uint64_t want = size < FEED_CHUNK ? size : FEED_CHUNK;
		int64_t got = cst_perf_reader_pread(in->r, off, buf, want);

		if (got <= 0) {
			warnf(in, off, "AUXTRACE data ends early (%" PRIu64 " bytes missing)", size);
			break;
		}
		ret = cst_decoder_feed(dec, off, buf, (size_t)got);
		off += (uint64_t)got;
		size -= (uint64_t)got;
	}
	free(buf);
	if (ret)
		return ret;
	return cst_decoder_end(dec);
}

static const struct auxbuf *find_buf(const struct cst_perf_input *in,
				     const struct cst_perf_record *rec, uint64_t start,
				     uint64_t size)
{
	const struct cst_perf_sample_id *sid = &rec->sid;

	for (uint64_t i = 0; i < in->nbufs; i++) {
		const struct auxbuf *b = &in->bufs[i];

		if (b->cpu == UINT32_MAX) {
			if (sid->have_tid && b->tid != sid->tid)
				continue;
		} else if (sid->have_cpu && b->cpu != sid->cpu) {
			continue;
		}
		if (start >= b->offset && start - b->offset <= b->size &&
		    size <= b->size - (start - b->offset))
			return b;
	}
	return NULL;
}

/* Where an AUX record's trace lies and whose it is. False: it has none. */
static bool aux_fragment(struct cst_perf_input *in, const struct cst_perf_record *rec,
			 struct frag *f)
{
	uint64_t size = rec->u.aux.aux_size, start = rec->u.aux.aux_offset;
	const struct auxbuf *b;
	struct running *run;
	int ci;

	if (rec->u.aux.flags & CST_PERF_AUX_TRUNCATED)
		in->truncated_aux++;
	if (!size)
		return false;
	if (rec->u.aux.flags & CST_PERF_AUX_OVERWRITE) {
		/* snapshot: aux_offset is the end of the data */
		if (size > start)
			size = start;
		start -= size;
	}
	b = find_buf(in, rec, start, size);
	if (!b && (rec->u.aux.flags & CST_PERF_AUX_OVERWRITE)) {
		/* perf clamps snapshot sizes to the buffer it saved */
		for (uint64_t i = 0; i < in->nbufs && !b; i++) {
			const struct auxbuf *c = &in->bufs[i];

			if (c->offset + c->size == rec->u.aux.aux_offset &&
			    (c->cpu == UINT32_MAX || !rec->sid.have_cpu || c->cpu == rec->sid.cpu)) {
				b = c;
				start = c->offset;
				size = c->size;
			}
		}
	}
	if (!b) {
		in->missing_aux++;
		warnf(in, rec->file_offset,
		      "AUX record: no AUXTRACE data holds aux offset 0x%" PRIx64 " size 0x%" PRIx64
		      " (cpu %d tid %d); fragment skipped",
		      start, size, rec->sid.have_cpu ? (int)rec->sid.cpu : -1,
		      rec->sid.have_tid ? (int)rec->sid.tid : -1);
		return false;
	}
	/* Attribution as perf does it: per-thread buffers name their thread (cpu =
	 * the buffer index), per-CPU ones take ITRACE_START/SWITCH, then context IDs. */
	if (b->cpu == UINT32_MAX) {
		f->cpu = (int32_t)b->idx;
		f->tid = (int32_t)b->tid;
		f->pid = pid_of(in, f->tid);
		ci = rec->sid.have_cpu ? cpu_index(in, rec->sid.cpu) : 0;
		if (f->pid < 0 && (run = running_get(in, -2 - (int32_t)b->tid)))
			f->pid = run->pid;
	} else {
		f->cpu = (int32_t)b->cpu;
		ci = cpu_index(in, b->cpu);
		run = running_get(in, (int32_t)b->cpu);
		f->pid = run ? run->pid : -1;
		f->tid = run ? run->tid : -1;
	}
	f->ci = ci < 0 ? 0 : ci;
	f->raw = rec->u.aux.flags & CST_PERF_AUX_CORESIGHT_RAW;
	f->queue = b->idx;
	f->data_off = b->data_off + (start - b->offset);
	f->size = size;
	f->rec_off = rec->file_offset;
	return true;
}

/* Without AUX records (old perf, or piped), a whole AUXTRACE buffer is one
 * fragment, of its thread (per-thread, cpu = the buffer index) or of its CPU. */
static void buffer_fragment(struct cst_perf_input *in, const struct cst_perf_record *rec,
			    struct frag *f)
{
	bool per_thread = rec->u.auxtrace.cpu == UINT32_MAX;

	*f = (struct frag){.data_off = rec->u.auxtrace.data_offset, .size = rec->u.auxtrace.size,
			   .rec_off = rec->file_offset, .queue = rec->u.auxtrace.idx};
	f->cpu = per_thread ? (int32_t)rec->u.auxtrace.idx : (int32_t)rec->u.auxtrace.cpu;
	f->tid = per_thread ? (int32_t)rec->u.auxtrace.tid : -1;
	f->pid = f->tid >= 0 ? pid_of(in, f->tid) : -1;
}

/* File order: decode the fragment now. */
static int decode_now(struct cst_perf_input *in, const struct cst_trace *trace,
		      const struct frag *f, cst_packet_fn pkt_fn, void *pkt_ctx)
{
	struct cst_decoder *dec;

	in->cur_pid = f->pid;
	in->cur_tid = f->tid;
	in->cur_cpu = f->cpu;
	dec_perf_mem_set_pid(in->mem, in->cur_pid);
	dec_perf_mem_set_view(in->mem, f->rec_off);
	dec = decoder_for(in, trace, f->raw, f->ci, pkt_fn, pkt_ctx);
	if (!dec) {
		warnf(in, f->rec_off, "AUX record: no decoder for this %s data; skipped",
		      f->raw ? "raw" : "formatted");
		return 0;
	}
	in->fragment++;
	return decode_fragment(in, dec, f->data_off, f->size, f->raw);
}

/* Time order: queue the fragment for the merge. */
static int queue_frag(struct cst_perf_input *in, const struct frag *f)
{
	if (in->nfrags == in->cap_frags) {
		uint64_t ncap = in->cap_frags ? in->cap_frags * 2 : 64;
		void *n = realloc(in->frags, ncap * sizeof(*in->frags));

		if (!n)
			return -cste_nomem;
		in->frags = n;
		in->cap_frags = ncap;
	}
	in->frags[in->nfrags++] = *f;
	return 0;
}

static int sideband(struct cst_perf_input *in, const struct cst_perf_record *rec,
		    cst_sideband_fn sb_fn, void *ctx)
{
	struct cst_sideband sb;
	struct running *run;
	int32_t cpu = rec->sid.have_cpu ? (int32_t)rec->sid.cpu : -1;

	memset(&sb, 0, sizeof(sb));
	sb.pid = rec->sid.have_tid ? (int32_t)rec->sid.pid : -1;
	sb.tid = rec->sid.have_tid ? (int32_t)rec->sid.tid : -1;
	sb.cpu = cpu;
	sb.time = rec->sid.have_time ? rec->sid.time : 0;
	switch (rec->type) {
	case cst_perf_rec_comm:
		if (in->sb_apply) {
			thread_set(in, (int32_t)rec->u.comm.tid, (int32_t)rec->u.comm.pid);
			if (rec->misc & MISC_COMM_EXEC)
				dec_perf_mem_drop_pid(in->mem, (int32_t)rec->u.comm.pid);
		}
		sb.type = cst_sb_comm;
		sb.exec = rec->misc & MISC_COMM_EXEC;
		sb.pid = (int32_t)rec->u.comm.pid;
		sb.tid = (int32_t)rec->u.comm.tid;
		sb.filename = rec->u.comm.comm;
		break;
	case cst_perf_rec_fork:
	case cst_perf_rec_exit:
		if (rec->type == cst_perf_rec_fork && in->sb_apply)
			thread_set(in, (int32_t)rec->u.fork.tid, (int32_t)rec->u.fork.pid);
		sb.type = rec->type == cst_perf_rec_fork ? cst_sb_fork : cst_sb_exit;
		sb.pid = (int32_t)rec->u.fork.pid;
		sb.tid = (int32_t)rec->u.fork.tid;
		sb.ppid = (int32_t)rec->u.fork.ppid;
		sb.ptid = (int32_t)rec->u.fork.ptid;
		sb.time = rec->u.fork.time;
		break;
	case cst_perf_rec_mmap:
	case cst_perf_rec_mmap2: {
		bool exec = rec->type == cst_perf_rec_mmap2 ? (rec->u.mmap.prot & PROT_EXEC_BIT)
							    : !(rec->misc & MISC_MMAP_DATA);

		if (!exec)
			return 0;
		if (in->sb_apply) {
			thread_set(in, (int32_t)rec->u.mmap.tid, (int32_t)rec->u.mmap.pid);
			dec_perf_mem_add_map(in->mem, (int32_t)rec->u.mmap.pid, rec->u.mmap.addr,
					 rec->u.mmap.len, rec->u.mmap.pgoff, rec->u.mmap.filename,
					 rec->u.mmap.build_id, rec->u.mmap.build_id_size);
		}
		sb.type = cst_sb_mmap;
		sb.pid = (int32_t)rec->u.mmap.pid;
		sb.tid = (int32_t)rec->u.mmap.tid;
		sb.addr = rec->u.mmap.addr;
		sb.len = rec->u.mmap.len;
		sb.pgoff = rec->u.mmap.pgoff;
		sb.filename = rec->u.mmap.filename;
		sb.build_id = rec->u.mmap.build_id_size ? rec->u.mmap.build_id : NULL;
		sb.build_id_size = rec->u.mmap.build_id_size;
		break;
	}
	case cst_perf_rec_itrace_start:
		if (!in->sb_apply)
			return 0;
		thread_set(in, (int32_t)rec->u.itrace_start.tid, (int32_t)rec->u.itrace_start.pid);
		/* per-CPU: keyed by CPU; without a CPU (per-thread), by thread */
		run = running_get(in, cpu >= 0 ? cpu : -2 - (int32_t)rec->u.itrace_start.tid);
		if (run) {
			run->pid = (int32_t)rec->u.itrace_start.pid;
			run->tid = (int32_t)rec->u.itrace_start.tid;
		}
		return 0;
	case cst_perf_rec_switch:
	case cst_perf_rec_switch_cpu_wide:
		sb.type = rec->u.sw.out ? cst_sb_switch_out : cst_sb_switch_in;
		if (in->sb_apply && cpu >= 0 && (run = running_get(in, cpu))) {
			if (!rec->u.sw.out) {
				run->pid = sb.pid;
				run->tid = sb.tid;
			} else if (rec->type == cst_perf_rec_switch_cpu_wide) {
				run->pid = (int32_t)rec->u.sw.next_prev_pid;
				run->tid = (int32_t)rec->u.sw.next_prev_tid;
			}
		}
		break;
	case cst_perf_rec_lost:
		sb.type = cst_sb_lost;
		sb.lost = rec->u.lost.lost;
		break;
	case cst_perf_rec_lost_samples:
		sb.type = cst_sb_lost;
		sb.lost = rec->u.lost_samples.lost;
		break;
	default:
		return 0;
	}
	return sb_fn ? sb_fn(ctx, &sb) : 0;
}

/* ------------------------------------------------------------- time order */

/* Tell the sideband records that lie before file offset @upto (all: UINT64_MAX),
 * read by a second reader that trails the merge; state was applied by the walk. */
static int trail_sideband(struct cst_perf_input *in, uint64_t upto)
{
	int ret = 0;

	in->sb_apply = false;
	while (!ret && !in->sb_done) {
		if (!in->sb_pending) {
			if (cst_perf_reader_next(in->sb_r, &in->sb_rec)) {
				in->sb_done = true; /* the end, or where the walk stopped too */
				break;
			}
			in->sb_pending = true;
		}
		if (in->sb_rec.file_offset >= upto)
			break;
		in->sb_pending = false;
		if (in->sb_rec.type != cst_perf_rec_aux && in->sb_rec.type != cst_perf_rec_auxtrace)
			ret = sideband(in, &in->sb_rec, in->user_sb_fn, in->user_ctx);
	}
	in->sb_apply = true;
	return ret;
}

/* perf_order: an element of the merge goes out, after the sideband before it. */
static int emit_timed(void *ctx, const struct cst_elem *e)
{
	struct cst_perf_input *in = ctx;
	int ret = 0;

	if (e->fragment && e->fragment <= in->nfrags)
		ret = trail_sideband(in, in->frags[e->fragment - 1].rec_off);
	if (!ret && in->user_elem_fn)
		ret = in->user_elem_fn(in->user_ctx, e);
	return ret;
}

/* on_elem, in time order: hold the element in its queue. */
static int hold_timed(void *ctx, const struct cst_elem *e)
{
	struct cst_perf_input *in = ctx;

	return dec_perf_order_push(in->order, in->cur_queue, e);
}

/* The decoder of queue @t for fragment @f (one per queue, as perf has). */
static struct cst_decoder *queue_decoder(struct cst_perf_input *in, struct tqueue *t,
					 const struct frag *f)
{
	if (!f->raw)
		return decoder_in(in, in->trace, &t->frames, false, f->ci, NULL, NULL);
	if (t->raw && t->raw_ci != f->ci) {
		cst_decoder_free(t->raw);
		t->raw = NULL;
	}
	t->raw_ci = f->ci;
	return decoder_in(in, in->trace, &t->raw, true, f->ci, NULL, NULL);
}

/* Where the last unit OpenCSD takes from @f starts: its last whole 16-byte frame
 * (frames count from the fragment's start), or its last byte when unformatted.
 * perf_order needs to know what came out of it (dec_perf_order_last_bytes). */
static uint64_t last_unit(const struct frag *f)
{
	uint64_t whole = f->raw ? f->size : f->size / CST_FRAME * CST_FRAME;
	uint64_t unit = f->raw ? 1 : CST_FRAME;

	return whole < unit ? UINT64_MAX : f->data_off + whole - unit;
}

/* perf_order_fill_fn: decode the next piece of queue @q's trace. */
static int fill_timed(void *ctx, unsigned q)
{
	struct cst_perf_input *in = ctx;
	struct tqueue *t = &in->tq[q];
	uint64_t want;
	int64_t got;
	int ret = 0;

	while (!t->cur) {
		const struct frag *f;

		while (t->scan < in->nfrags && in->frags[t->scan].queue != q)
			t->scan++;
		if (t->scan == in->nfrags)
			return 1;
		f = &in->frags[t->scan++];
		t->dec = queue_decoder(in, t, f);
		if (!t->dec) {
			warnf(in, f->rec_off, "AUX record: no decoder for this %s data; skipped",
			      f->raw ? "raw" : "formatted");
			continue;
		}
		cst_decoder_reset(t->dec);
		t->cur = f;
		t->pos = f->data_off;
		t->left = f->size;
		t->last_unit = last_unit(f);
		t->pid = f->pid;
		t->tid = f->tid;
	}
	in->cur_queue = q;
	in->fragment = (uint32_t)(t->cur - in->frags) + 1;
	in->cur_pid = t->pid;
	in->cur_tid = t->tid;
	in->cur_cpu = t->cur->cpu;
	dec_perf_mem_set_pid(in->mem, t->pid);
	dec_perf_mem_set_view(in->mem, t->cur->rec_off);
	want = t->left < TIMED_PIECE ? t->left : TIMED_PIECE;
	if (t->pos < t->last_unit && t->pos + want > t->last_unit)
		want = t->last_unit - t->pos; /* the last unit goes in on its own */
	if (t->pos == t->last_unit && (ret = dec_perf_order_last_bytes(in->order, q)))
		return ret;
	got = want ? cst_perf_reader_pread(in->r, t->pos, in->piece, want) : 0;
	if (want && got <= 0) {
		warnf(in, t->pos, "AUXTRACE data ends early (%" PRIu64 " bytes missing)", t->left);
		t->left = 0;
	} else {
		ret = cst_decoder_feed(t->dec, t->pos, in->piece, (size_t)got);
		t->pos += (uint64_t)got;
		t->left -= (uint64_t)got;
	}
	if (!ret && !t->left) {
		ret = dec_perf_order_end_data(in->order, q);
		if (!ret)
			ret = cst_decoder_end(t->dec);
		if (!ret)
			ret = dec_perf_order_end_fragment(in->order, q);
		t->cur = NULL;
	}
	t->pid = in->cur_pid; /* context IDs may have named another thread */
	t->tid = in->cur_tid;
	return ret;
}

/* Decode the queued fragments merged as perf 6.1 merges them (perf_order.h). */
static int run_timed(struct cst_perf_input *in, const struct cst_trace *trace,
		     cst_elem_fn elem_fn, cst_sideband_fn sb_fn, void *ctx)
{
	struct cst_perf_reader_opts ro = {.sz = sizeof(ro)};
	enum perf_order_ctx kind = in->pid_fmt == pid_fmt_ctxid  ? perf_order_ctx_ctxid
				   : in->pid_fmt == pid_fmt_vmid ? perf_order_ctx_vmid
								 : perf_order_ctx_none;
	unsigned ntq = 0;
	int ret;

	free_timed(in);
	for (uint64_t i = 0; i < in->nfrags; i++)
		if (in->frags[i].queue >= ntq)
			ntq = in->frags[i].queue + 1;
	in->trace = trace;
	in->user_elem_fn = elem_fn;
	in->user_sb_fn = sb_fn;
	in->user_ctx = ctx;
	in->sb_pending = in->sb_done = false;
	in->tq = calloc(ntq ? ntq : 1, sizeof(*in->tq));
	in->piece = malloc(TIMED_PIECE);
	if (!in->tq || !in->piece)
		return -cste_nomem;
	in->ntq = ntq;
	ret = cst_perf_reader_open(&in->sb_r, in->path, &ro); /* warnings came from the walk */
	if (ret)
		return ret;
	if (ntq) {
		in->order = dec_perf_order_alloc(ntq, kind, fill_timed, emit_timed, in);
		if (!in->order)
			return -cste_nomem;
		in->elem_fn = hold_timed;
		in->elem_ctx = in;
		ret = dec_perf_order_run(in->order);
	}
	if (!ret)
		ret = trail_sideband(in, UINT64_MAX);
	return ret;
}

static int walk(struct cst_perf_input *in, const struct cst_trace *trace, cst_elem_fn elem_fn,
		cst_sideband_fn sb_fn, cst_packet_fn pkt_fn, void *ctx)
{
	struct cst_perf_record rec;
	bool timed;
	int err, ret = 0;

	if (!in || !trace)
		return -cste_invalid;
	timed = in->timed && !pkt_fn; /* packet dumps stay in file order */
	in->elem_fn = elem_fn;
	in->elem_ctx = ctx;
	in->fragment = 0;
	in->truncated_aux = in->missing_aux = 0;
	in->resuming = in->resume_at != 0;
	in->nthreads = in->nrun = 0;
	in->nfrags = 0;
	in->sb_apply = true;
	cst_perf_reader_rewind(in->r);
	while (!ret && (err = cst_perf_reader_next(in->r, &rec)) == 0) {
		struct frag f;

		dec_perf_mem_set_clock(in->mem, rec.file_offset);
		if (rec.type == cst_perf_rec_aux ||
		    (rec.type == cst_perf_rec_auxtrace && !in->has_aux)) {
			if (rec.type == cst_perf_rec_auxtrace)
				buffer_fragment(in, &rec, &f);
			else if (!aux_fragment(in, &rec, &f))
				continue;
			ret = timed ? queue_frag(in, &f) : decode_now(in, trace, &f, pkt_fn, ctx);
		} else {
			/* time order tells sideband as the merge reaches it */
			ret = sideband(in, &rec, timed ? NULL : sb_fn, ctx);
		}
	}
	if (!ret && timed)
		ret = run_timed(in, trace, elem_fn, sb_fn, ctx);
	if (in->truncated_aux)
		cst_logf(&in->log, cst_log_warning,
			 "%s: %" PRIu64 " AUX records flagged TRUNCATED: the sink overflowed and "
			 "trace was lost there",
			 in->path, in->truncated_aux);
	return ret;
}

static void add_stats(struct cst_decoder_stats *sum, const struct cst_decoder *d)
{
	struct cst_decoder_stats s;

	if (!d || cst_decoder_get_stats(d, &s))
		return;
	sum->bytes += s.bytes;
	sum->elements += s.elements;
	sum->ranges += s.ranges;
	sum->instructions += s.instructions;
	sum->gaps += s.gaps;
	sum->nacc += s.nacc;
	sum->packets += s.packets;
}

static void sum_stats(const struct cst_perf_input *in, struct cst_decoder_stats *stats)
{
	memset(stats, 0, sizeof(*stats));
	add_stats(stats, in->frames_dec);
	for (uint32_t i = 0; i < in->info.nr_cpu; i++)
		add_stats(stats, in->raw_dec[i]);
	for (unsigned q = 0; q < in->ntq; q++) {
		add_stats(stats, in->tq[q].frames);
		add_stats(stats, in->tq[q].raw);
	}
}

/* Decoders keep their mode: throw them away between a run and a dump. */
static void drop_decoders(struct cst_perf_input *in)
{
	free_timed(in);
	cst_decoder_free(in->frames_dec);
	in->frames_dec = NULL;
	for (uint32_t i = 0; i < in->info.nr_cpu; i++) {
		cst_decoder_free(in->raw_dec[i]);
		in->raw_dec[i] = NULL;
	}
}

int dec_perf_input_run(struct cst_perf_input *in, const struct cst_trace *trace,
		       cst_elem_fn elem_fn, cst_sideband_fn sb_fn, void *ctx,
		       struct cst_decoder_stats *stats)
{
	int ret;

	if (!in || !trace)
		return -cste_invalid;
	drop_decoders(in);
	in->packets_only = false;
	ret = walk(in, trace, elem_fn, sb_fn, NULL, ctx);
	if (stats)
		sum_stats(in, stats);
	return ret;
}

int dec_perf_input_dump(struct cst_perf_input *in, const struct cst_trace *trace,
			cst_packet_fn fn, void *ctx)
{
	if (!in || !trace || !fn)
		return -cste_invalid;
	drop_decoders(in);
	in->packets_only = true;
	return walk(in, trace, NULL, NULL, fn, ctx);
}
