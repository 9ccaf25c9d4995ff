/* The consumer: the rings of one capture drained into one perf.data through
 * cst_perf_out, and, when asked, everything the rings saw written as a recorded AUX
 * stream. record, replay and the kernel-model tests all run this code. */
#include "cstrace/capture.h"
#include "cstrace/auxlog.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cstrace/perfdata.h"

#define MAX_RINGS (CST_ETM_MAX_CPUS + 1)

struct cst_consumer {
	struct cst_consumer_opts o;
	const char *path;
	struct cst_perf_writer *w;
	struct cst_perf_out out;
	struct cst_auxlog_writer *log;
	struct cst_ring *rings[MAX_RINGS];
	bool has_aux[MAX_RINGS];
	int cpu[MAX_RINGS]; /* -1 per-thread */
	int nrings;
};

static uint64_t monotonic_ns(void *ctx)
{
	struct timespec ts;

	(void)ctx;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Append @ev to the stream, stamped now. A stream that fails stops being written
 * (its writer said why once); the perf.data goes on. */
static void log_event(struct cst_consumer *c, struct cst_auxlog_event *ev)
{
	if (!c->log)
		return;
	ev->time = c->o.clock(c->o.clock_ctx);
	cst_auxlog_write(c->log, ev);
}

static void observe(void *ctx, const struct cst_auxlog_read *read)
{
	struct cst_consumer *c = ctx;
	struct cst_auxlog_event ev = {.type = cst_auxlog_read};

	ev.u.read = *read;
	if (c->o.aux_log_light) {
		ev.u.read.aux = NULL;
		ev.u.read.aux_omitted = true;
	}
	log_event(c, &ev);
}

/* The stream's header: how the perf.data was set up, as the writer resolved it. */
static void log_setup(struct cst_consumer *c)
{
	struct cst_perf_writer_opts wo;
	struct cst_auxlog_event ev = {.type = cst_auxlog_session};
	struct cst_auxlog_session *s = &ev.u.session;

	cst_perf_writer_get_opts(c->w, &wo);
	s->page_size = c->o.page_size;
	s->snapshot = c->o.snapshot;
	s->sideband_only = !c->o.etm_info;
	s->aux_omitted = c->o.aux_log_light;
	s->nr_cpus_avail = wo.nr_cpus_avail;
	s->nr_cpus_online = wo.nr_cpus_online;
	s->hostname = wo.hostname;
	s->osrelease = wo.osrelease;
	s->arch = wo.arch;
	s->version = wo.version;
	s->argv = wo.cmdline;
	while (s->argv && s->argv[s->argc])
		s->argc++;
	log_event(c, &ev);
	for (int i = 0; i < c->o.nattrs; i++) {
		ev = (struct cst_auxlog_event){.type = cst_auxlog_attr};
		ev.u.attr = c->o.attrs[i];
		log_event(c, &ev);
	}
	if (c->o.etm_info) {
		ev = (struct cst_auxlog_event){.type = cst_auxlog_etm_info};
		ev.u.etm_info = *c->o.etm_info;
		log_event(c, &ev);
	}
}

int cst_consumer_open(struct cst_consumer **out, const struct cst_consumer_opts *opts)
{
	struct cst_perf_writer_opts wo = {.sz = sizeof(wo)};
	struct cst_consumer *c;
	uint64_t header;
	int err;

	if (!out)
		return -cste_invalid;
	*out = NULL;
	c = calloc(1, sizeof(*c));
	if (!c)
		return -cste_nomem;
	if (cst_opts_load(&c->o, sizeof(c->o), opts, "cst_consumer_opts", opts ? opts->log : NULL) <
		    0 ||
	    c->o.nattrs < 1 || !c->o.attrs) {
		free(c);
		return -cste_invalid;
	}
	if (!c->o.clock)
		c->o.clock = monotonic_ns;
	if (!c->o.page_size)
		c->o.page_size = (uint64_t)sysconf(_SC_PAGESIZE);
	c->path = c->o.output ? c->o.output : "perf.data";
	if (c->o.writer)
		wo = *c->o.writer;
	wo.sz = sizeof(wo);
	wo.log = c->o.log;
	err = cst_perf_writer_open(&c->w, c->path, &wo);
	if (err < 0)
		goto fail;
	header = CST_PERF_HEADER_SIZE;
	for (int i = 0; i < c->o.nattrs; i++) {
		err = cst_perf_writer_add_attr(c->w, &c->o.attrs[i], c->o.attrs[i].ids,
					       c->o.attrs[i].nids);
		if (err < 0)
			goto fail;
		header += c->o.attrs[i].nids * 8 + CST_PERF_ATTR_SIZE + 16;
	}
	cst_perf_out_init(&c->out, c->w, c->path, header, c->o.reserve);
	if (c->o.etm_info) {
		err = cst_perf_writer_etm_info(c->w, c->o.etm_info);
		if (err < 0) {
			cst_logf(c->o.log, cst_log_error, "writing %s failed", c->path);
			goto fail;
		}
	}
	if (c->o.aux_log) {
		/* the stream is written as the perf.data is: whole (synth's) or as it
		 * comes (a capture's, kept whatever ends it) */
		struct cst_auxlog_writer_opts lo = {.sz = sizeof(lo), .log = c->o.log,
						    .inputs = wo.inputs, .whole = wo.whole};

		/* the default log (no AUX bytes) is a help, not the job: without it the
		 * capture goes on; a stream asked for (--aux-log) must be written */
		if (c->o.aux_log_light)
			lo.log = NULL;
		err = cst_auxlog_writer_open(&c->log, c->o.aux_log, &lo);
		if (err < 0 && c->o.aux_log_light) {
			cst_logf(c->o.log, cst_log_warning, "no consumer log: cannot create %s",
				 c->o.aux_log);
			err = 0;
		} else if (err < 0) {
			goto fail;
		} else {
			log_setup(c);
		}
	}
	*out = c;
	return 0;
fail:
	cst_consumer_free(c);
	return err;
}

int cst_consumer_add_ring(struct cst_consumer *c, const struct cst_ring_desc *desc)
{
	struct cst_ring_output out;
	struct cst_auxlog_event ev = {.type = cst_auxlog_ring};
	const uint8_t *base;
	int err;

	if (!c || !desc || c->nrings >= MAX_RINGS || !desc->base)
		return -cste_invalid;
	out = cst_perf_out_ring_output(&c->out);
	if (c->log) {
		out.observe = observe;
		out.observe_ctx = c;
	}
	err = cst_ring_alloc(&c->rings[c->nrings], desc, &out);
	if (err)
		return err;
	c->has_aux[c->nrings] = desc->aux != NULL;
	c->cpu[c->nrings] = desc->cpu == UINT32_MAX ? -1 : (int)desc->cpu;
	base = desc->base;
	ev.u.ring = (struct cst_auxlog_ring){
		.idx = desc->idx, .cpu = desc->cpu, .tid = desc->tid, .overwrite = desc->overwrite,
		.data_size = desc->data_size, .aux_size = desc->aux ? desc->aux_size : 0,
		.data_head = cst_ring_load_u64(base + CST_MMAP_DATA_HEAD),
		.data_tail = cst_ring_load_u64(base + CST_MMAP_DATA_TAIL),
		.aux_head = cst_ring_load_u64(base + CST_MMAP_AUX_HEAD),
		.aux_tail = cst_ring_load_u64(base + CST_MMAP_AUX_TAIL),
	};
	log_event(c, &ev);
	return c->nrings++;
}

int cst_consumer_add_build_id(struct cst_consumer *c, int32_t pid, uint16_t misc,
			      const uint8_t *id, uint8_t size, const char *filename)
{
	struct cst_auxlog_event ev = {.type = cst_auxlog_build_id};
	int err;

	if (!c || !id || size > 20 || !filename)
		return -cste_invalid;
	err = cst_perf_writer_add_build_id(c->w, pid, misc, id, size, filename);
	if (err < 0)
		return err;
	ev.u.build_id.pid = pid;
	ev.u.build_id.misc = misc;
	ev.u.build_id.size = size;
	memcpy(ev.u.build_id.id, id, size);
	ev.u.build_id.filename = (char *)filename;
	log_event(c, &ev);
	return 0;
}

int cst_consumer_nrings(const struct cst_consumer *c)
{
	return c ? c->nrings : 0;
}

bool cst_consumer_output_stopped(const struct cst_consumer *c)
{
	return !c || c->out.full || c->out.error;
}

static void log_drain(struct cst_consumer *c, enum cst_auxlog_drain_kind kind)
{
	struct cst_auxlog_event ev = {.type = cst_auxlog_drain};

	ev.u.drain.kind = kind;
	ev.u.drain.nrings = (uint32_t)c->nrings;
	log_event(c, &ev);
}

int cst_consumer_drain(struct cst_consumer *c)
{
	int ret = 0;
	bool any = false;

	if (!c)
		return -cste_invalid;
	log_drain(c, cst_auxlog_drain_read);
	for (int i = 0; i < c->nrings; i++) {
		int64_t n = cst_ring_read(c->rings[i]);

		if (n < 0 && !ret)
			ret = (int)n;
		any |= n > 0;
	}
	if (any && !cst_consumer_output_stopped(c))
		cst_perf_writer_finished_round(c->w);
	return ret;
}

int cst_consumer_snapshot(struct cst_consumer *c)
{
	int ret = 0;

	if (!c)
		return -cste_invalid;
	log_drain(c, cst_auxlog_drain_snapshot);
	for (int i = 0; i < c->nrings; i++) {
		/* rings without AUX (sideband only) have nothing to snapshot */
		int64_t n = c->has_aux[i] ? cst_ring_snapshot(c->rings[i])
					  : cst_ring_read(c->rings[i]);

		if (n < 0 && !ret)
			ret = (int)n;
	}
	if (!cst_consumer_output_stopped(c))
		cst_perf_writer_finished_round(c->w);
	return ret;
}

void cst_consumer_note_wake(struct cst_consumer *c, uint32_t nready, uint64_t ring_mask)
{
	struct cst_auxlog_event ev = {.type = cst_auxlog_wake};

	if (!c)
		return;
	ev.u.wake.nready = nready;
	ev.u.wake.ring_mask = ring_mask;
	log_event(c, &ev);
}

void cst_consumer_note_signal(struct cst_consumer *c, int signo)
{
	struct cst_auxlog_event ev = {.type = cst_auxlog_signal};

	if (!c)
		return;
	ev.u.signo = signo;
	log_event(c, &ev);
}

/* Kernels that allocate trace IDs report them in AUX_OUTPUT_HW_ID; perf 6.1
 * reads IDs only from the metadata, so put the real ones there. */
static void patch_trace_ids(struct cst_consumer *c)
{
	int n = cst_perf_etm_info_patch_ids(c->path, c->out.trace_id, c->out.have_trace_id,
					    CST_ETM_MAX_CPUS);

	if (n > 0)
		cst_logf(c->o.log, cst_log_info,
			 "%d trace ID(s) in the metadata set from AUX_OUTPUT_HW_ID records", n);
	else if (n < 0)
		cst_logf(c->o.log, cst_log_warning,
			 "could not put the kernel's trace IDs into %s: %s", c->path,
			 cst_strerror(n));
}

static void add_stats(struct cst_ring_stats *t, const struct cst_ring_stats *st)
{
	t->records += st->records;
	t->record_bytes += st->record_bytes;
	t->aux_bytes += st->aux_bytes;
	t->chunks += st->chunks;
	t->aux_records += st->aux_records;
	t->aux_record_bytes += st->aux_record_bytes;
	t->truncated += st->truncated;
	t->collision += st->collision;
	t->partial += st->partial;
	t->empty_truncated += st->empty_truncated;
	t->truncated_late += st->truncated_late;
	t->lost_events += st->lost_events;
	t->lost_records += st->lost_records;
	t->reenables += st->reenables;
	t->reenable_failures += st->reenable_failures;
	t->snapshots += st->snapshots;
	t->snapshot_overwritten += st->snapshot_overwritten;
	t->unwritten_bytes += st->unwritten_bytes;
	t->output_failed |= st->output_failed;
}

int cst_consumer_finish(struct cst_consumer *c, int result, struct cst_record_result *res)
{
	struct cst_auxlog_event ev = {.type = cst_auxlog_end};
	int err;

	if (!c || !res)
		return -cste_invalid;
	memset(&res->total, 0, sizeof(res->total));
	res->nrings = c->nrings;
	for (int i = 0; i < c->nrings; i++) {
		cst_ring_get_stats(c->rings[i], &res->per_ring[i]);
		res->ring_cpu[i] = c->cpu[i];
		add_stats(&res->total, &res->per_ring[i]);
	}
	res->output_failed = res->total.output_failed || cst_consumer_output_stopped(c);
	res->file_bytes = c->out.written;
	res->output = c->path;
	res->snapshot = c->o.snapshot;
	ev.u.end = (struct cst_auxlog_end){.result = result, .exit_status = res->exit_status,
					   .interrupted = res->interrupted,
					   .output_failed = res->output_failed};
	log_event(c, &ev);
	err = cst_perf_writer_finish(c->w);
	if (err < 0)
		cst_logf(c->o.log, cst_log_error, "finishing %s failed: %s", c->path,
			 cst_strerror(err));
	else if (c->o.etm_info)
		patch_trace_ids(c);
	if (c->log) {
		int lerr = cst_auxlog_writer_finish(c->log);

		if (!err)
			err = lerr;
	}
	return err;
}

void cst_consumer_free(struct cst_consumer *c)
{
	if (!c)
		return;
	for (int i = 0; i < c->nrings; i++)
		cst_ring_free(c->rings[i]);
	cst_perf_writer_free(c->w);
	cst_auxlog_writer_free(c->log);
	free(c);
}
