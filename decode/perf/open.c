/* perf.data input behind cst_session: cs_etm AUXTRACE_INFO to trace sources, each AUX
 * record to one decoder run over its AUXTRACE bytes, sideband to pid/tid/cpu and memory. */
#include "perf_int.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ETM_OPT_TS 28 /* cs_etm attr.config: timestamps on (perf decodes by time) */

static int add_buf(struct cst_perf_input *in, const struct cst_perf_record *rec)
{
	if (CST_GROW(in->bufs, in->cap_bufs, in->nbufs + 1) < 0)
		return -cste_nomem;
	in->bufs[in->nbufs++] = (struct auxbuf){rec->file_offset, rec->u.auxtrace.data_offset,
						rec->u.auxtrace.size, rec->u.auxtrace.offset,
						rec->u.auxtrace.idx, rec->u.auxtrace.tid,
						rec->u.auxtrace.cpu, 0};
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
		dec_pi_warnf(in, 0, "the AUXTRACE index lists %" PRIu64 " buffers, the data holds %" PRIu64
			     "; using the buffers found by scanning",
		      f->nauxtrace, (uint64_t)in->nbufs);
		return false;
	}
	for (k = 0; k < in->nbufs; k++)
		if (f->auxtrace_offsets[k] != in->bufs[k].hdr_off) {
			dec_pi_warnf(in, f->auxtrace_offsets[k],
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

/* First pass: trace IDs from AUX_OUTPUT_HW_ID, data formats (*@raw_unknown: raw
 * data of a CPU AUXTRACE_INFO does not have), AUXTRACE buffers. */
static int prescan(struct cst_perf_input *in, uint8_t *hw_ids, bool *frames, bool *raw_cpu,
		   bool *raw_unknown, bool *mapped)
{
	const struct cst_perf_features *f = cst_perf_reader_features(in->r);
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
					raw_cpu[0] = *raw_unknown = true;
			} else {
				*frames = true;
			}
			break;
		case cst_perf_rec_time_conv:
			if (!in->has_tc) {
				in->tc = rec.u.time_conv;
				in->has_tc = true;
			}
			break;
		case cst_perf_rec_auxtrace:
			err = add_buf(in, &rec);
			if (err)
				return err;
			break;
		case cst_perf_rec_mmap:
		case cst_perf_rec_mmap2:
			/* which files of the BUILD_ID feature a record maps */
			for (uint64_t i = 0; rec.u.mmap.filename && i < f->nbuild_ids; i++)
				if (!mapped[i] && f->build_ids[i].filename &&
				    !strcmp(f->build_ids[i].filename, rec.u.mmap.filename))
					mapped[i] = true;
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
			const struct cst_session_opts *opts, const struct dec_engines *engines,
			struct cst_trace *trace)
{
	struct cst_perf_reader_opts ro = {.sz = sizeof(ro)};
	struct cst_perf_input *in;
	const struct cst_perf_features *f;
	uint8_t hw_ids[256], ids[256];
	bool frames = false, raw_unknown = false, *raw_cpu = NULL, *mapped = NULL;
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
	if (opts) {
		in->id_filter[0] = opts->id_filter[0];
		in->id_filter[1] = opts->id_filter[1];
		in->progress = opts->progress;
		in->progress_ctx = opts->progress_ctx;
		in->nworkers = opts->threads;
		in->chunk = opts->chunk_size ? opts->chunk_size : SPLIT_CHUNK;
	}
	if (engines)
		in->engines = *engines;
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
	/* room for the CPUs dec_pi_trace_ids may add */
	raw_cpu = calloc(256, sizeof(bool));
	f = cst_perf_reader_features(in->r);
	mapped = calloc(f->nbuild_ids + 1, sizeof(bool));
	if (!raw_cpu || !mapped) {
		err = -cste_nomem;
		goto fail;
	}
	err = prescan(in, hw_ids, &frames, raw_cpu, &raw_unknown, mapped);
	if (err)
		goto fail;
	for (uint32_t i = 0; i < in->info.nr_cpu; i++) {
		struct cst_source_cfg cfg;

		source_from_info(&in->info.cpus[i], &cfg);
		ids[i] = hw_ids[i] ? hw_ids[i] : (uint8_t)cst_source_trace_id(&cfg);
	}
	if (frames && (err = dec_pi_trace_ids(in, ids, hw_ids, raw_cpu, raw_unknown)))
		goto fail;
	in->raw_buffer = calloc(in->info.nr_cpu, sizeof(int));
	in->raw_dec = calloc(in->info.nr_cpu, sizeof(*in->raw_dec));
	if (!in->raw_buffer || !in->raw_dec) {
		err = -cste_nomem;
		goto fail;
	}
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
		if (cfg.protocol == cst_proto_etmv3 || cfg.protocol == cst_proto_ptm)
			cfg.regs.etmv3.etmtraceidr = ids[i];
		else
			cfg.regs.etmv4.trctraceidr = ids[i];
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
	if (opts) { /* the session's own copy: every field is there */
		dec_perf_mem_set_symdir(in->mem, opts->symdir);
		dec_perf_mem_set_file_fn(in->mem, opts->file, opts->file_ctx);
		dec_perf_mem_set_given(in->mem, opts->raw_elfs, opts->nraw_elfs);
	}
	for (uint64_t i = 0; i < f->nbuild_ids; i++)
		dec_perf_mem_add_build_id(in->mem, f->build_ids[i].filename, f->build_ids[i].id,
				      f->build_ids[i].size);
	{
		struct cst_bin_places places = {opts ? opts->symfs : NULL,
						opts ? opts->buildid_dir : NULL,
						opts ? opts->symdir : NULL, NULL,
						opts ? opts->raw_elfs : NULL,
						opts ? opts->nraw_elfs : 0};

		err = dec_pi_unmapped(in, mapped, &places);
		if (err)
			goto fail;
	}
	free(raw_cpu);
	free(mapped);
	*out = in;
	return 0;
fail:
	free(raw_cpu);
	free(mapped);
	dec_perf_input_free(in);
	return err;
}

enum cst_order dec_perf_input_order(const struct cst_perf_input *in)
{
	return in && in->timed ? cst_order_time : cst_order_file;
}
void dec_perf_input_free(struct cst_perf_input *in)
{
	if (!in)
		return;
	dec_pi_free_timed(in);
	dec_pi_cover_free(in);
	free(in->frags);
	free(in->losses);
	free(in->heads);
	free(in->cuts);
	cst_decoder_free(in->frames_dec);
	for (uint32_t i = 0; in->raw_dec && i < in->info.nr_cpu; i++)
		cst_decoder_free(in->raw_dec[i]);
	free(in->raw_dec);
	free(in->raw_buffer);
	dec_perf_mem_free(in->mem);
	cst_perf_etm_info_fini(&in->info);
	cst_perf_reader_free(in->r);
	free(in->bufs);
	free(in->bufkeys);
	free(in->threads);
	free(in->unmapped);
	free(in->run);
	free(in->path);
	free(in);
}

/* perf converts trace timestamps to its clock only when every ETM counts the
 * kernel's counter (TS_SOURCE 1, an ETMv4 or ETE parameter; cs_etm__has_virtual_ts)
 * and applies TIME_CONV to them; without the record perf's times would all be 0,
 * so such a file counts as not convertible here. */
bool dec_perf_input_time_conv(const struct cst_perf_input *in, struct cst_perf_time_conv *tc)
{
	if (!in->has_tc || !in->info.nr_cpu)
		return false;
	for (uint32_t i = 0; i < in->info.nr_cpu; i++) {
		const struct cst_perf_etm_cpu *c = &in->info.cpus[i];

		if ((c->magic != CST_PERF_ETMV4_MAGIC && c->magic != CST_PERF_ETE_MAGIC) ||
		    !c->has_ts_source || c->ts_source != 1)
			return false;
	}
	if (tc)
		*tc = in->tc;
	return true;
}
