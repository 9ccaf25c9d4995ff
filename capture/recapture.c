/* Recapture: a finished perf.data (synth's) run through the consumer as if its
 * rounds had come out of the kernel's rings, giving the stream a capture of it
 * would have recorded and the perf.data that capture would have written. */
#include "replay_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cstrace/perfdata.h"

struct recap_ring {
	struct rring r;
	uint64_t data_pos;        /* data-area position of the next record */
	uint64_t aux_first;       /* the AUX position of its first chunk */
	uint64_t max_chunk, max_round, next_aux;
	uint32_t cpu, tid;
	bool seen;
};

struct recap {
	const struct cst_replay_opts *o;
	const char *in;
	struct cst_perf_reader *rd;
	struct recap_ring rings[MAX_RINGS];
	int nrings;
	bool snapshot;
	struct cst_buf round;     /* the current round's records, raw */
	int round_ring;           /* the ring whose AUX the round carries (-1 none) */
};

static int always_ok(void *ctx)
{
	(void)ctx;
	return 0;
}

static const struct cst_ring_ops ok_ops = {sizeof(struct cst_ring_ops), always_ok, always_ok};

static struct recap_ring *recap_ring(struct recap *q, uint32_t idx)
{
	for (int i = 0; i < q->nrings; i++)
		if (q->rings[i].r.idx == idx)
			return &q->rings[i];
	return NULL;
}

static uint64_t pow2_above(uint64_t v)
{
	uint64_t p = 4096;

	while (p < v)
		p <<= 1;
	return p;
}

static int recap_fail(struct recap *q, uint64_t off, const char *what)
{
	cst_logf(q->o->log, cst_log_error, "%s: offset 0x%llx: %s", q->in,
		 (unsigned long long)off, what);
	return -cste_unsupported;
}

/* First pass: the rings (one per AUXTRACE idx), their largest round and chunk. */
static int recap_scan(struct recap *q)
{
	struct cst_perf_record rec;
	uint64_t round = 0;
	int err;

	while ((err = cst_perf_reader_next(q->rd, &rec)) == 0) {
		if (rec.type == cst_perf_rec_auxtrace) {
			struct recap_ring *g = recap_ring(q, rec.u.auxtrace.idx);

			if (!g) {
				if (q->nrings >= MAX_RINGS)
					return recap_fail(q, rec.file_offset, "too many AUX rings");
				g = &q->rings[q->nrings++];
				g->r.idx = rec.u.auxtrace.idx;
				g->cpu = rec.u.auxtrace.cpu;
				g->tid = rec.u.auxtrace.tid;
				g->aux_first = g->next_aux = rec.u.auxtrace.offset;
			}
			if (!q->snapshot && rec.u.auxtrace.offset != g->next_aux)
				return recap_fail(q, rec.file_offset,
						  "AUXTRACE data not contiguous in its ring: a "
						  "capture cannot have read it so");
			g->next_aux = rec.u.auxtrace.offset + rec.u.auxtrace.size;
			if (rec.u.auxtrace.size > g->max_chunk)
				g->max_chunk = rec.u.auxtrace.size;
		} else if (rec.type == cst_perf_rec_aux) {
			q->snapshot |= !!(rec.u.aux.flags & CST_PERF_AUX_OVERWRITE);
		}
		if (rec.type < cst_perf_rec_header_attr)
			round += rec.size;
		if (rec.type == cst_perf_rec_finished_round || rec.type == cst_perf_rec_auxtrace) {
			for (int i = 0; i < q->nrings; i++)
				if (round > q->rings[i].max_round)
					q->rings[i].max_round = round;
			if (rec.type == cst_perf_rec_finished_round)
				round = 0;
		}
	}
	for (int i = 0; i < q->nrings; i++)
		if (round > q->rings[i].max_round)
			q->rings[i].max_round = round;
	if (err != -cste_eos)
		return err;
	if (!q->nrings)
		return recap_fail(q, 0, "no AUXTRACE data: nothing a ring consumer would have read");
	return cst_perf_reader_rewind(q->rd);
}

static int recap_add_rings(struct recap *q, struct cst_consumer *c)
{
	for (int i = 0; i < q->nrings; i++) {
		struct recap_ring *g = &q->rings[i];
		/* rings just big enough for the file's largest round and chunk; snapshot
		 * mode: a chunk is the whole area when it has wrapped */
		struct cst_auxlog_ring ring = {
			.idx = g->r.idx, .cpu = g->cpu, .tid = g->tid, .overwrite = q->snapshot,
			.data_size = pow2_above(2 * g->max_round + 8),
			.aux_size = q->snapshot ? pow2_above(g->max_chunk)
						: pow2_above(2 * g->max_chunk + 1),
			.aux_head = g->aux_first, .aux_tail = g->aux_first,
		};
		int err = cap_rring_map(&g->r, &ring, 4096, c, &ok_ops);

		if (err < 0)
			return err;
	}
	return 0;
}

/* A round is over: its records go into the ring whose AUX it carries, then every
 * ring is read once, as the consumer's drain after a wake-up. */
static int recap_flush(struct recap *q, struct cst_consumer *c)
{
	struct recap_ring *g = &q->rings[q->round_ring >= 0 ? q->round_ring : 0];

	if (q->round.failed)
		return -cste_nomem;
	if (!q->round.len && q->round_ring < 0)
		return 0;
	if (q->round.len) {
		cap_ring_put(g->r.base + g->r.page, g->r.data_size, g->data_pos, q->round.p,
			 q->round.len);
		g->data_pos += q->round.len;
		cst_put_le64(g->r.base + CST_MMAP_DATA_HEAD, g->data_pos);
	}
	if (q->snapshot && q->round_ring >= 0)
		cst_consumer_snapshot(c);
	else
		cst_consumer_drain(c);
	q->round.len = 0;
	q->round_ring = -1;
	return 0;
}

int cst_recapture_run(const char *perf, const struct cst_replay_opts *opts,
		      struct cst_replay_result *res)
{
	struct cst_replay_opts o;
	struct cst_perf_reader_opts pro = {.sz = sizeof(pro)};
	struct cst_perf_writer_opts wo = {.sz = sizeof(wo)};
	struct cst_perf_etm_info info = {0};
	struct cst_perf_attr attrs[8];
	const struct cst_perf_features *ft;
	struct cst_consumer *c = NULL;
	struct cst_perf_record rec;
	struct recap q;
	const char **argv = NULL;
	int err, nattrs;

	if (!perf || !res ||
	    cst_opts_load(&o, sizeof(o), opts, "cst_replay_opts", opts ? opts->log : NULL) < 0)
		return -cste_invalid;
	memset(res, 0, sizeof(*res));
	res->rec.exit_status = -1;
	memset(&q, 0, sizeof(q));
	q.o = &o;
	q.in = perf;
	q.round_ring = -1;
	pro.log = o.log;
	err = cst_perf_reader_open(&q.rd, perf, &pro);
	if (err < 0)
		return err;
	nattrs = cst_perf_reader_nattrs(q.rd);
	if (nattrs < 1 || nattrs > 8) {
		err = recap_fail(&q, 0, "expected 1 to 8 event attrs");
		goto out;
	}
	for (int i = 0; i < nattrs; i++)
		attrs[i] = *cst_perf_reader_attr(q.rd, i);
	err = cst_perf_reader_etm_info(q.rd, &info);
	if (!err)
		err = recap_scan(&q);
	if (err < 0)
		goto out;
	ft = cst_perf_reader_features(q.rd);
	wo.hostname = ft->hostname;
	wo.osrelease = ft->osrelease;
	wo.arch = ft->arch;
	wo.version = ft->version;
	wo.nr_cpus_avail = ft->nr_cpus_avail;
	wo.nr_cpus_online = ft->nr_cpus_online;
	argv = calloc((size_t)ft->ncmdline + 1, sizeof(*argv)); /* NULL-terminated */
	if (!argv) {
		err = -cste_nomem;
		goto out;
	}
	for (uint32_t i = 0; i < ft->ncmdline; i++)
		argv[i] = ft->cmdline[i];
	wo.cmdline = ft->ncmdline ? argv : NULL;
	wo.inputs = o.inputs;
	wo.whole = o.whole;
	{
		struct cst_consumer_opts co = {
			.sz = sizeof(co), .log = o.log, .output = o.output, .aux_log = o.aux_log,
			.writer = &wo, .page_size = 4096, .snapshot = q.snapshot, .attrs = attrs,
			.nattrs = nattrs, .etm_info = &info,
		};

		err = cst_consumer_open(&c, &co);
	}
	for (uint64_t i = 0; !err && i < ft->nbuild_ids; i++) {
		const struct cst_perf_build_id *b = &ft->build_ids[i];

		err = cst_consumer_add_build_id(c, b->pid, b->misc, b->id, b->size, b->filename);
	}
	if (!err)
		err = recap_add_rings(&q, c);
	while (!err && (err = cst_perf_reader_next(q.rd, &rec)) == 0) {
		if (rec.type == cst_perf_rec_finished_round) {
			err = recap_flush(&q, c);
			res->drains++;
		} else if (rec.type == cst_perf_rec_auxtrace) {
			struct recap_ring *g = recap_ring(&q, rec.u.auxtrace.idx);
			uint8_t *tmp = malloc(rec.u.auxtrace.size ? rec.u.auxtrace.size : 1);

			if (!tmp) {
				err = -cste_nomem;
				break;
			}
			if (cst_perf_reader_pread(q.rd, rec.u.auxtrace.data_offset, tmp,
						  rec.u.auxtrace.size) != (int64_t)rec.u.auxtrace.size)
				err = recap_fail(&q, rec.file_offset, "AUXTRACE data past the end");
			else if (q.round_ring >= 0 && &q.rings[q.round_ring] != g)
				err = recap_fail(&q, rec.file_offset,
						 "AUXTRACE data of two rings in one round");
			if (!err) {
				cap_ring_put(g->r.aux, g->r.aux_size, rec.u.auxtrace.offset, tmp,
					 rec.u.auxtrace.size);
				cst_put_le64(g->r.base + CST_MMAP_AUX_HEAD,
					     rec.u.auxtrace.offset + rec.u.auxtrace.size);
				q.round_ring = (int)(g - q.rings);
			}
			free(tmp);
		} else if (rec.type < cst_perf_rec_header_attr) {
			/* what the kernel wrote into the data area, as it came */
			cst_buf_put(&q.round, rec.raw, rec.size);
		}
		res->events++;
	}
	if (err == -cste_eos)
		err = recap_flush(&q, c);
	if (c) {
		int ferr = cst_consumer_finish(c, 0, &res->rec);

		if (!err)
			err = ferr;
	}
out:
	cst_consumer_free(c);
	for (int i = 0; i < q.nrings; i++) {
		free(q.rings[i].r.base);
		free(q.rings[i].r.aux);
	}
	cst_buf_fini(&q.round);
	free(argv);
	cst_perf_etm_info_fini(&info);
	cst_perf_reader_free(q.rd);
	return err;
}
