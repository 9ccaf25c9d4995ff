/* Replay: the consumer (consumer.c and ring.c, the code record runs) driven by a
 * recorded AUX stream instead of live mmaps (recapture.c drives it with the rounds
 * of a finished perf.data instead). Each ring is a buffer laid out like the
 * kernel's mapping; before every read the bytes and heads the capture saw are put
 * back where it found them, and after it the tails the consumer stored are checked
 * against the ones the capture stored. */
#include "replay_int.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cstrace/perfdata.h"

#define MAX_TIMES 80 /* a drain and its reads */

struct replay {
	const struct cst_replay_opts *o;
	struct cst_auxlog_reader *rd;
	const char *stream;
	/* the set-up, copied out of the reader's buffers */
	struct cst_auxlog_session session;
	char *strings[4];
	char **argv;
	struct cst_perf_attr attrs[8];
	int nattrs;
	struct cst_perf_etm_info info;
	bool have_session, have_info;
	uint64_t setup_times[10]; /* of the session, attr and etm-info events */
	int nsetup;
	struct cst_consumer *c;
	struct rring rings[MAX_RINGS];
	int nrings;
	/* event times handed to the consumer's clock, oldest first */
	uint64_t times[MAX_TIMES];
	int ntimes, next_time;
	uint64_t now;
	struct cst_replay_result *res;
};

static int fail(struct replay *p, uint64_t off, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fail(struct replay *p, uint64_t off, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	cst_logf(p->o->log, cst_log_error, "%s: offset 0x%llx: %s", p->stream,
		 (unsigned long long)off, msg);
	return -cste_format;
}

/* The consumer's clock: the capture's time of the event being replayed, so that a
 * stream written again by the replay is the stream it read. */
static uint64_t replay_clock(void *ctx)
{
	struct replay *p = ctx;

	if (p->next_time < p->ntimes)
		p->now = p->times[p->next_time++];
	return p->now;
}

static void push_time(struct replay *p, uint64_t t)
{
	if (p->next_time >= p->ntimes)
		p->ntimes = p->next_time = 0;
	if (p->ntimes < MAX_TIMES)
		p->times[p->ntimes++] = t;
}

static int ring_ctl(struct rring *r, enum cst_auxlog_ctl_op op)
{
	if (r->nctl_done >= r->nctl || r->ctl[r->nctl_done].op != op) {
		r->ctl_mismatch = true;
		return 0;
	}
	return r->ctl[r->nctl_done++].result;
}

static int ring_enable(void *ctx)
{
	return ring_ctl(ctx, cst_auxlog_ctl_enable);
}

static int ring_disable(void *ctx)
{
	return ring_ctl(ctx, cst_auxlog_ctl_disable);
}

static const struct cst_ring_ops replay_ops = {sizeof(struct cst_ring_ops), ring_enable,
					       ring_disable};

static char *dup_str(const char *s)
{
	return s ? strdup(s) : NULL;
}

static int take_session(struct replay *p, const struct cst_auxlog_event *ev)
{
	const struct cst_auxlog_session *s = &ev->u.session;

	if (p->have_session)
		return fail(p, ev->offset, "a second session event");
	if (s->aux_omitted) {
		cst_logf(p->o->log, cst_log_error,
			 "%s: a consumer log without the AUX bytes (what record keeps by default, "
			 "for cstrace aux): it cannot be replayed; record with --aux-log FILE for "
			 "a stream that can",
			 p->stream);
		return -cste_unsupported;
	}
	p->session = *s;
	p->strings[0] = dup_str(s->hostname);
	p->strings[1] = dup_str(s->osrelease);
	p->strings[2] = dup_str(s->arch);
	p->strings[3] = dup_str(s->version);
	p->session.hostname = p->strings[0];
	p->session.osrelease = p->strings[1];
	p->session.arch = p->strings[2];
	p->session.version = p->strings[3];
	p->argv = calloc((size_t)s->argc + 1, sizeof(char *));
	if (!p->argv)
		return -cste_nomem;
	for (uint32_t i = 0; i < s->argc; i++)
		if (!(p->argv[i] = strdup(s->argv[i])))
			return -cste_nomem;
	p->session.argv = (const char *const *)p->argv;
	for (int i = 0; i < 4; i++)
		if (!p->strings[i])
			return -cste_nomem;
	p->have_session = true;
	return 0;
}

static int take_attr(struct replay *p, const struct cst_auxlog_event *ev)
{
	struct cst_perf_attr *a = &p->attrs[p->nattrs];

	if (p->nattrs >= (int)(sizeof(p->attrs) / sizeof(p->attrs[0])))
		return fail(p, ev->offset, "more than %d attr events",
			    (int)(sizeof(p->attrs) / sizeof(p->attrs[0])));
	*a = ev->u.attr;
	a->ids = calloc(a->nids ? a->nids : 1, sizeof(uint64_t));
	if (!a->ids)
		return -cste_nomem;
	if (a->nids)
		memcpy(a->ids, ev->u.attr.ids, a->nids * sizeof(uint64_t));
	p->nattrs++;
	return 0;
}

static int take_info(struct replay *p, const struct cst_auxlog_event *ev)
{
	const struct cst_perf_etm_info *in = &ev->u.etm_info;

	if (p->have_info)
		return fail(p, ev->offset, "a second etm-info event");
	p->info = *in;
	p->info.cpus = calloc(in->nr_cpu ? in->nr_cpu : 1, sizeof(*in->cpus));
	if (!p->info.cpus)
		return -cste_nomem;
	memcpy(p->info.cpus, in->cpus, in->nr_cpu * sizeof(*in->cpus));
	p->have_info = true;
	return 0;
}

/* The set-up is complete at the first ring: create the perf.data as the capture did. */
static int open_consumer(struct replay *p, const struct cst_auxlog_event *ev)
{
	struct cst_perf_writer_opts wo = {
		.sz = sizeof(wo), .hostname = p->session.hostname,
		.osrelease = p->session.osrelease, .arch = p->session.arch,
		.version = p->session.version, .nr_cpus_avail = p->session.nr_cpus_avail,
		.nr_cpus_online = p->session.nr_cpus_online,
		.cmdline = p->session.argc ? p->session.argv : NULL,
		.inputs = p->o->inputs, .whole = p->o->whole,
	};
	struct cst_consumer_opts co = {
		.sz = sizeof(co), .log = p->o->log, .output = p->o->output,
		.aux_log = p->o->aux_log, .writer = &wo, .page_size = p->session.page_size,
		.snapshot = p->session.snapshot, .attrs = p->attrs, .nattrs = p->nattrs,
		.etm_info = p->session.sideband_only ? NULL : &p->info,
		.clock = replay_clock, .clock_ctx = p,
	};

	if (!p->have_session)
		return fail(p, ev->offset, "expected the session event first");
	if (!p->nattrs)
		return fail(p, ev->offset, "a %s event before any attr event",
			    cst_auxlog_type_name(ev->type));
	if (!p->session.sideband_only && !p->have_info)
		return fail(p, ev->offset, "a trace session without an etm-info event");
	/* the consumer logs the set-up as it opens: give it the set-up's times */
	p->ntimes = p->next_time = 0;
	for (int i = 0; i < p->nsetup; i++)
		push_time(p, p->setup_times[i]);
	return cst_consumer_open(&p->c, &co);
}

static bool pow2(uint64_t v)
{
	return v && !(v & (v - 1));
}

/* Map a ring the way the capture had it mapped (sizes and heads as @g gives them:
 * a stream's ring, or one rebuilt from a perf.data) and hand it to consumer @c,
 * whose reads and controls go to @ops. @r owns the buffers either way. */
int cap_rring_map(struct rring *r, const struct cst_auxlog_ring *g, uint64_t page,
		     struct cst_consumer *c, const struct cst_ring_ops *ops)
{
	struct cst_ring_desc d;

	r->idx = g->idx;
	r->page = page;
	r->data_size = g->data_size;
	r->aux_size = g->aux_size;
	r->base = calloc(1, (size_t)(page + g->data_size));
	r->aux = g->aux_size ? calloc(1, (size_t)g->aux_size) : NULL;
	if (!r->base || (g->aux_size && !r->aux))
		return -cste_nomem;
	cst_put_le64(r->base + CST_MMAP_DATA_HEAD, g->data_head);
	cst_put_le64(r->base + CST_MMAP_DATA_TAIL, g->data_tail);
	cst_put_le64(r->base + CST_MMAP_AUX_HEAD, g->aux_head);
	cst_put_le64(r->base + CST_MMAP_AUX_TAIL, g->aux_tail);
	d = (struct cst_ring_desc){
		.sz = sizeof(d), .base = r->base, .page_size = page, .data_size = g->data_size,
		.aux = r->aux, .aux_size = g->aux_size, .overwrite = g->overwrite, .idx = g->idx,
		.tid = g->tid, .cpu = g->cpu, .ops = ops, .ops_ctx = r,
	};
	return cst_consumer_add_ring(c, &d);
}

static int add_ring(struct replay *p, const struct cst_auxlog_event *ev)
{
	const struct cst_auxlog_ring *g = &ev->u.ring;
	struct rring *r = &p->rings[p->nrings];
	uint64_t page = p->session.page_size;
	int err;

	if (p->nrings >= MAX_RINGS)
		return fail(p, ev->offset, "more than %d rings", MAX_RINGS);
	if (!pow2(page) || page < 4096 || page > (1 << 20) || !pow2(g->data_size) ||
	    g->data_size > (UINT64_C(1) << 30) || (g->aux_size && !pow2(g->aux_size)) ||
	    g->aux_size > (UINT64_C(1) << 30))
		return fail(p, ev->offset,
			    "ring %u: expected power-of-two sizes (page %llu, data %llu, AUX %llu "
			    "bytes; at most 1 GiB of each: a stream claiming more would make the replay "
			    "allocate it)",
			    g->idx, (unsigned long long)page, (unsigned long long)g->data_size,
			    (unsigned long long)g->aux_size);
	if (page + g->data_size > SIZE_MAX || g->aux_size > SIZE_MAX) {
		cst_logf(p->o->log, cst_log_error,
			 "%s: ring %u holds %llu bytes of AUX, more than this host can map",
			 p->stream, g->idx, (unsigned long long)g->aux_size);
		return -cste_unsupported;
	}
	for (int i = 0; i < p->nrings; i++)
		if (p->rings[i].idx == g->idx)
			return fail(p, ev->offset, "ring %u appears twice", g->idx);
	p->nrings++; /* counted now so that the end frees it */
	err = cap_rring_map(r, g, page, p->c, &replay_ops);
	if (err == -cste_invalid)
		return fail(p, ev->offset, "ring %u cannot be consumed (sizes or mode)", g->idx);
	return err < 0 ? err : 0;
}

static struct rring *ring_by_idx(struct replay *p, uint32_t idx)
{
	for (int i = 0; i < p->nrings; i++)
		if (p->rings[i].idx == idx)
			return &p->rings[i];
	return NULL;
}

/* Copy @len bytes to ring position @pos of a power-of-two area. */
void cap_ring_put(uint8_t *area, uint64_t size, uint64_t pos, const uint8_t *src, uint64_t len)
{
	uint64_t off = pos & (size - 1), first = size - off < len ? size - off : len;

	memcpy(area + off, src, (size_t)first);
	if (len > first)
		memcpy(area, src + first, (size_t)(len - first));
}

/* Put back what the capture's read found: the data records and AUX bytes at their
 * ring positions, the heads it loaded, the answers its controls got. */
static int stage_read(struct replay *p, const struct cst_auxlog_event *ev)
{
	const struct cst_auxlog_read *rd = &ev->u.read;
	struct rring *r = ring_by_idx(p, rd->idx);

	if (!r)
		return fail(p, ev->offset, "a read of ring %u, which no ring event set up", rd->idx);
	if (r->have_want)
		return fail(p, ev->offset, "two reads of ring %u in one drain", rd->idx);
	if (rd->aux_omitted && rd->aux_len)
		return fail(p, ev->offset, "a read of ring %u without its AUX bytes", rd->idx);
	if (rd->data_len > r->data_size || rd->aux_len > r->aux_size)
		return fail(p, ev->offset,
			    "a read of ring %u holding %llu data and %llu AUX bytes; the ring "
			    "has %llu and %llu",
			    rd->idx, (unsigned long long)rd->data_len,
			    (unsigned long long)rd->aux_len, (unsigned long long)r->data_size,
			    (unsigned long long)r->aux_size);
	if (rd->data_len)
		cap_ring_put(r->base + r->page, r->data_size, rd->data_tail, rd->data, rd->data_len);
	if (rd->aux_len)
		cap_ring_put(r->aux, r->aux_size, rd->aux_pos, rd->aux, rd->aux_len);
	cst_put_le64(r->base + CST_MMAP_DATA_HEAD, rd->data_head);
	if (r->aux)
		cst_put_le64(r->base + CST_MMAP_AUX_HEAD, rd->aux_head);
	for (uint32_t i = 0; i < rd->nctl; i++) {
		r->ctl[i].op = rd->ctl[i].op;
		r->ctl[i].result = rd->ctl[i].result;
	}
	r->nctl = rd->nctl;
	r->nctl_done = 0;
	r->ctl_mismatch = false;
	r->want = *rd;
	r->want.data = r->want.aux = NULL;
	r->have_want = true;
	push_time(p, ev->time);
	return 0;
}

/* After a drain: did the consumer store what the capture's consumer stored? */
static int check_reads(struct replay *p, uint64_t off)
{
	int err = 0;

	for (int i = 0; i < p->nrings; i++) {
		struct rring *r = &p->rings[i];
		uint64_t dt = cst_le64(r->base + CST_MMAP_DATA_TAIL);
		uint64_t at = cst_le64(r->base + CST_MMAP_AUX_TAIL);

		if (!r->have_want)
			continue;
		r->have_want = false;
		if (err)
			continue;
		if (dt != r->want.data_tail_after || (r->aux && at != r->want.aux_tail_after))
			err = fail(p, off,
				   "the replay diverged at ring %u: it stored data_tail 0x%llx and "
				   "aux_tail 0x%llx where the capture stored 0x%llx and 0x%llx",
				   r->idx, (unsigned long long)dt, (unsigned long long)at,
				   (unsigned long long)r->want.data_tail_after,
				   (unsigned long long)r->want.aux_tail_after);
		else if (r->ctl_mismatch || r->nctl_done != r->nctl)
			err = fail(p, off,
				   "the replay diverged at ring %u: the consumer enabled or "
				   "disabled the event other than the capture's did",
				   r->idx);
		if (err)
			p->res->diverged = true;
	}
	return err;
}

/* A drain and the reads that follow it, replayed through the consumer. */
static int replay_drain(struct replay *p, const struct cst_auxlog_event *drain)
{
	struct cst_auxlog_event ev;
	enum cst_auxlog_drain_kind kind = drain->u.drain.kind;
	uint64_t off = drain->offset;
	int err = 0;

	if (drain->u.drain.nrings != (uint32_t)p->nrings)
		return fail(p, off, "a drain of %u rings; the stream set up %d",
			    drain->u.drain.nrings, p->nrings);
	p->ntimes = p->next_time = 0;
	push_time(p, drain->time);
	for (uint32_t i = 0; i < drain->u.drain.nrings && !err; i++) {
		err = cst_auxlog_reader_next(p->rd, &ev);
		if (err == 0 && ev.type != cst_auxlog_read)
			err = fail(p, ev.offset, "expected read %u of %u after the drain at 0x%llx, "
						 "found a %s event",
				   i + 1, drain->u.drain.nrings, (unsigned long long)off,
				   cst_auxlog_type_name(ev.type));
		if (err == 0) {
			p->res->events++;
			err = stage_read(p, &ev);
		}
		if (err == -cste_truncated || err == -cste_eos)
			p->res->partial_drain = true;
	}
	if (err && err != -cste_truncated && err != -cste_eos)
		return err;
	if (kind == cst_auxlog_drain_snapshot)
		cst_consumer_snapshot(p->c);
	else
		cst_consumer_drain(p->c);
	p->res->drains++;
	if (check_reads(p, off) < 0)
		return -cste_format;
	return err;
}

static int replay_event(struct replay *p, const struct cst_auxlog_event *ev)
{
	bool setup = ev->type == cst_auxlog_session || ev->type == cst_auxlog_attr ||
		     ev->type == cst_auxlog_etm_info;

	if (setup && p->c)
		return fail(p, ev->offset, "a %s event after the rings were set up",
			    cst_auxlog_type_name(ev->type));
	if (!setup && !p->c) {
		int err = open_consumer(p, ev);

		if (err < 0)
			return err;
	}
	p->ntimes = p->next_time = 0;
	push_time(p, ev->time);
	if (setup && p->nsetup < (int)(sizeof(p->setup_times) / sizeof(p->setup_times[0])))
		p->setup_times[p->nsetup++] = ev->time;
	switch (ev->type) {
	case cst_auxlog_session:
		return take_session(p, ev);
	case cst_auxlog_attr:
		return take_attr(p, ev);
	case cst_auxlog_etm_info:
		return take_info(p, ev);
	case cst_auxlog_ring:
		if (p->res->drains)
			return fail(p, ev->offset, "a ring event after the first drain");
		return add_ring(p, ev);
	case cst_auxlog_wake:
		cst_consumer_note_wake(p->c, ev->u.wake.nready, ev->u.wake.ring_mask);
		return 0;
	case cst_auxlog_signal:
		cst_consumer_note_signal(p->c, ev->u.signo);
		return 0;
	case cst_auxlog_drain:
		return replay_drain(p, ev);
	case cst_auxlog_read:
		return fail(p, ev->offset, "a read event outside a drain");
	case cst_auxlog_build_id:
		return cst_consumer_add_build_id(p->c, ev->u.build_id.pid, ev->u.build_id.misc,
						 ev->u.build_id.id, ev->u.build_id.size,
						 ev->u.build_id.filename) < 0
			       ? fail(p, ev->offset, "a build-id event that cannot be kept")
			       : 0;
	case cst_auxlog_end:
		p->res->ended = true;
		p->res->rec.exit_status = ev->u.end.exit_status;
		p->res->rec.interrupted = ev->u.end.interrupted;
		p->res->capture_result = ev->u.end.result;
		return 0;
	default:
		return fail(p, ev->offset, "an unknown event");
	}
}

static void replay_free(struct replay *p)
{
	cst_consumer_free(p->c);
	for (int i = 0; i < p->nrings; i++) {
		free(p->rings[i].base);
		free(p->rings[i].aux);
	}
	for (int i = 0; i < p->nattrs; i++)
		free(p->attrs[i].ids);
	cst_perf_etm_info_fini(&p->info);
	for (int i = 0; i < 4; i++)
		free(p->strings[i]);
	if (p->argv)
		for (uint32_t i = 0; i < p->session.argc; i++)
			free(p->argv[i]);
	free(p->argv);
	cst_auxlog_reader_free(p->rd);
}

int cst_replay_run(const char *stream, const struct cst_replay_opts *opts,
		   struct cst_replay_result *res)
{
	struct cst_replay_opts o;
	struct cst_auxlog_reader_opts ro = {.sz = sizeof(ro)};
	struct cst_auxlog_event ev;
	struct replay p;
	int err, ferr;

	if (!stream || !res ||
	    cst_opts_load(&o, sizeof(o), opts, "cst_replay_opts", opts ? opts->log : NULL) < 0)
		return -cste_invalid;
	memset(res, 0, sizeof(*res));
	res->rec.exit_status = -1;
	memset(&p, 0, sizeof(p));
	p.o = &o;
	p.stream = stream;
	p.res = res;
	ro.log = o.log;
	err = cst_auxlog_reader_open(&p.rd, stream, &ro);
	if (err < 0)
		return err;
	for (;;) {
		err = cst_auxlog_reader_next(p.rd, &ev);
		if (err < 0)
			break;
		res->events++;
		err = replay_event(&p, &ev);
		if (err < 0 || res->ended)
			break;
	}
	res->end_offset = cst_auxlog_reader_offset(p.rd);
	if (err == -cste_eos || err == -cste_truncated) {
		res->cut_short = !res->ended;
		err = 0;
	}
	if (!p.c && !err) {
		cst_logf(o.log, cst_log_error,
			 "%s: the stream ends at offset 0x%llx before its rings were set up: "
			 "nothing to replay",
			 stream, (unsigned long long)res->end_offset);
		err = -cste_no_trace;
	}
	if (p.c) {
		ferr = cst_consumer_finish(p.c, res->capture_result, &res->rec);
		if (ferr < 0 && !err)
			err = ferr;
	}
	replay_free(&p);
	return err;
}
