/* perf.data written from the kernel model (kmodel.c: ring_buffer.c and the ETF driver
 * modelled, as no cs_etm hardware exists here) through capture's output; then the AUX report. */
#include "test.h"

#include <signal.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cstrace/capture.h"
#include "cstrace/perfdata.h"
#include "kmodel.h"

#define MAXN 4096

/* What went through the ring, seen from the output side. */
struct tee {
	struct cst_ring_output inner;
	struct { uint64_t offset, size, flags; } aux[MAXN];
	uint64_t naux;
	struct { uint64_t offset, size; bool written; } chunk[MAXN];
	uint64_t nchunk;
};

static int tee_record(void *ctx, const uint8_t *rec, size_t len)
{
	struct tee *t = ctx;

	if (cst_le32(rec) == 11 && t->naux < MAXN) {
		t->aux[t->naux].offset = cst_le64(rec + 8);
		t->aux[t->naux].size = cst_le64(rec + 16);
		t->aux[t->naux].flags = cst_le64(rec + 24);
		t->naux++;
	}
	return t->inner.record(t->inner.ctx, rec, len);
}

static int tee_aux(void *ctx, const struct cst_aux_chunk *c)
{
	struct tee *t = ctx;
	int err = t->inner.aux(t->inner.ctx, c);

	if (t->nchunk < MAXN) {
		t->chunk[t->nchunk].offset = c->offset;
		t->chunk[t->nchunk].size = c->size;
		t->chunk[t->nchunk].written = err == 0;
		t->nchunk++;
	}
	return err;
}

struct rig {
	struct kmodel *m;
	struct cst_perf_writer *w;
	struct cst_perf_out out;
	struct tee tee;
	struct cst_ring *ring;
	char path[256];
};

static int rig_open(struct rig *g, const struct kmodel_opts *o, const char *name, uint64_t reserve)
{
	struct cst_perf_writer_opts wo = {.sz = sizeof(wo)};
	struct cst_perf_attr pa = {0};
	uint64_t id = o->id;
	struct cst_ring_desc d;
	struct cst_ring_output out = {.sz = sizeof(out), .record = tee_record, .aux = tee_aux, .ctx = &g->tee};

	memset(g, 0, sizeof(*g));
	snprintf(g->path, sizeof(g->path), "%s/%s-%d.data",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", name, (int)getpid());
	g->m = kmodel_new(o);
	if (!g->m || cst_perf_writer_open(&g->w, g->path, &wo) < 0)
		return -1;
	pa.type = 0x55; /* the cs_etm type of the modelled board */
	pa.size = CST_PERF_ATTR_SIZE;
	pa.sample_period = 1;
	pa.sample_type = cst_capture_sample_type();
	pa.flags = CST_PERF_ATTR_SAMPLE_ID_ALL | CST_PERF_ATTR_DISABLED;
	if (cst_perf_writer_add_attr(g->w, &pa, &id, 1) < 0)
		return -1;
	cst_perf_out_init(&g->out, g->w, g->path, CST_PERF_HEADER_SIZE + 8 + CST_PERF_ATTR_SIZE + 16,
			  reserve);
	g->tee.inner = cst_perf_out_ring_output(&g->out);
	d = kmodel_desc(g->m);
	return cst_ring_alloc(&g->ring, &d, &out) ? -1 : 0;
}

static void rig_close(struct rig *g)
{
	cst_ring_free(g->ring);
	cst_perf_writer_free(g->w);
	kmodel_free(g->m);
	if (!getenv("CSTRACE_KEEP_FILES")) /* keep them to look at with cstrace aux */
		unlink(g->path);
}

/* Independent of auxreport.c: bytes of [s, e) inside written chunks, and the
 * first chunk (in file order) that holds position s. Chunk data ends where
 * the next chunk starts (written chunks are back to back in normal mode). */
static uint64_t covered(const struct tee *t, uint64_t s, uint64_t e, int64_t *first)
{
	uint64_t n = 0, k = 0;

	*first = -1;
	for (uint64_t i = 0; i < t->nchunk; i++) {
		uint64_t cs = t->chunk[i].offset, ce = cs + t->chunk[i].size;
		uint64_t a = cs > s ? cs : s, b = ce < e ? ce : e;

		if (!t->chunk[i].written)
			continue;
		if (*first < 0 && s >= cs && s < ce)
			*first = (int64_t)k;
		if (b > a)
			n += b - a;
		k++;
	}
	return n;
}

/* Run `cstrace aux` on @path and compare every number it prints with @r. */
static void check_cli(const char *path, const struct cst_aux_report *r, uint64_t aux_size)
{
	const char *bd = getenv("CSTRACE_BUILD_DIR");
	char cmd[2048], line[1024];
	uint64_t rows = 0, crow = 0, qrow = 0;
	FILE *p;

	if (!bd)
		return;
	/* $CSTRACE: ctest's way to start cstrace (under the emulator on a cross build) */
	char bin[900];
	if (getenv("CSTRACE"))
		snprintf(bin, sizeof(bin), "%s", getenv("CSTRACE"));
	else
		snprintf(bin, sizeof(bin), "%s/cstrace", bd);
	if (access(bin, X_OK)) {
		printf("note: %s not built: the CLI part is not checked\n", bin);
		return;
	}
	snprintf(cmd, sizeof(cmd), "%s aux --aux-size %llu %s", bin,
		 (unsigned long long)aux_size, path);
	p = popen(cmd, "r");
	CHECK(p != NULL);
	if (!p)
		return;
	int section = 0;
	while (fgets(line, sizeof(line), p)) {
		unsigned long long idx, fo, ao, size, lost, co, cs, nrec;
		long long gap, chunk = -1, wraps;
		char q1[16], q2[16], flags[64], chunk_s[24], cfile[24], wraps_s[24];

		if (!strncmp(line, "chunk#", 6)) {
			section = 1;
			continue;
		}
		if (section == 0 && sscanf(line, "%llu %15s %15s %llx %llx %llu %63s %23s %23s %23s %lld %llu",
					   &idx, q1, q2, &fo, &ao, &size, flags, chunk_s, cfile, wraps_s,
					   &gap, &lost) == 12) {
			const struct cst_aux_rec_info *a = idx < cst_aux_report_get_info(r).nrecs ? cst_aux_report_rec(r, idx) : NULL;
			char words[64];

			CHECK(a != NULL);
			if (!a)
				continue;
			if (strcmp(chunk_s, "-"))
				chunk = atoll(chunk_s);
			wraps = atoll(wraps_s);
			CHECK_EQ_INT(idx, rows);
			CHECK_EQ_INT(atoi(q2), a->cpu);
			CHECK_EQ_INT(fo, a->file_offset);
			CHECK_EQ_INT(ao, a->aux_offset);
			CHECK_EQ_INT(size, a->aux_size);
			CHECK_EQ_STR(flags, cst_aux_flags_words(a->flags, words, sizeof(words)));
			CHECK_EQ_INT(chunk, a->chunk);
			if (a->chunk >= 0)
				CHECK_EQ_INT(strtoull(cfile, NULL, 16), cst_aux_report_chunk(r, a->chunk)->file_offset);
			CHECK_EQ_INT(wraps, a->wraps);
			CHECK_EQ_INT(gap, a->gap);
			CHECK_EQ_INT(lost, a->lost);
			rows++;
		} else if (section == 1 && sscanf(line, "%llu %15s %15s %llx %llx %llu %llu", &idx, q1,
						  q2, &fo, &co, &cs, &nrec) == 7) {
			CHECK(idx < cst_aux_report_get_info(r).nchunks);
			if (idx >= cst_aux_report_get_info(r).nchunks)
				continue;
			CHECK_EQ_INT(fo, cst_aux_report_chunk(r, idx)->file_offset);
			CHECK_EQ_INT(co, cst_aux_report_chunk(r, idx)->offset);
			CHECK_EQ_INT(cs, cst_aux_report_chunk(r, idx)->size);
			CHECK_EQ_INT(nrec, cst_aux_report_chunk(r, idx)->records);
			crow++;
		} else if (!strncmp(line, "cpu ", 4)) {
			unsigned long long v[16];
			int cpu;
			int n = sscanf(line,
				       "cpu %d: records %llu (%llu bytes), chunks %llu (%llu bytes), "
				       "truncated %llu (empty %llu), overwrite %llu, partial %llu, "
				       "collision %llu, gaps %llu (%llu bytes), wraps %llu, lost bytes "
				       "%llu, lost records %llu",
				       &cpu, &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7],
				       &v[8], &v[9], &v[10], &v[11], &v[12], &v[13]);
			const struct cst_aux_queue_summary *s = cst_aux_report_queue(r, qrow);

			CHECK_EQ_INT(n, 15);
			CHECK_EQ_INT(cpu, s->cpu);
			CHECK_EQ_INT(v[0], s->records);
			CHECK_EQ_INT(v[1], s->record_bytes);
			CHECK_EQ_INT(v[2], s->chunks);
			CHECK_EQ_INT(v[3], s->chunk_bytes);
			CHECK_EQ_INT(v[4], s->truncated);
			CHECK_EQ_INT(v[5], s->empty_truncated);
			CHECK_EQ_INT(v[6], s->overwrite);
			CHECK_EQ_INT(v[7], s->partial);
			CHECK_EQ_INT(v[8], s->collision);
			CHECK_EQ_INT(v[9], s->gaps);
			CHECK_EQ_INT(v[10], s->gap_bytes);
			CHECK_EQ_INT(v[11], s->wraps);
			CHECK_EQ_INT(v[12], s->lost_bytes);
			CHECK_EQ_INT(v[13], s->lost_events);
			qrow++;
		}
	}
	CHECK_EQ_INT(pclose(p), 0);
	CHECK_EQ_INT(rows, cst_aux_report_get_info(r).nrecs);
	CHECK_EQ_INT(crow, cst_aux_report_get_info(r).nchunks);
	CHECK_EQ_INT(qrow, (uint64_t)cst_aux_report_get_info(r).nqueues);
}

/* Normal mode, a reader too slow: TRUNCATED records, plus a COLLISION and a
 * PARTIAL the sink reports. Every number of the report is checked against
 * what the model and the ring did. */
static void test_normal(void)
{
	struct kmodel_opts o = {.data_size = 1 << 16, .aux_size = 8192, .sink_size = 4096,
				.pid = 321, .tid = 321, .cpu = 2, .id = 77};
	struct rig g;
	struct cst_ring_stats st;
	struct cst_aux_report *r = NULL;
	uint64_t rng = 5;

	CHECK(rig_open(&g, &o, "capture-normal", 0) == 0);
	for (int i = 0; i < 300; i++) {
		if (i == 10)
			kmodel_inject_flags(g.m, 0x08);
		if (i == 20)
			kmodel_inject_flags(g.m, 0x04);
		kmodel_sched_in(g.m);
		rng = rng * 6364136223846793005ULL + 1;
		kmodel_run(g.m, 1 + (rng >> 33) % 6000);
		kmodel_sched_out(g.m);
		if (i % 5 == 4 && cst_ring_read(g.ring) < 0)
			CHECK(0);
	}
	CHECK(cst_ring_read(g.ring) >= 0);
	CHECK_EQ_INT(cst_perf_writer_finish(g.w), 0);
	cst_ring_get_stats(g.ring, &st);
	CHECK_EQ_INT(cst_aux_report_build(&r, g.path, o.aux_size, NULL), 0);
	if (!r) {
		rig_close(&g);
		return;
	}
	const struct kmodel_stats *ks = kmodel_stats(g.m);
	CHECK(!cst_aux_report_get_info(r).incomplete);
	CHECK(!cst_aux_report_get_info(r).per_thread);
	CHECK_EQ_INT(cst_aux_report_get_info(r).nrecs, ks->aux_records);
	CHECK_EQ_INT(cst_aux_report_get_info(r).nrecs, g.tee.naux);
	CHECK_EQ_INT(cst_aux_report_get_info(r).nchunks, st.chunks);
	CHECK_EQ_INT(cst_aux_report_get_info(r).nqueues, 1);
	uint64_t prev_end = 0, wraps = 0;
	for (uint64_t i = 0; i < cst_aux_report_get_info(r).nrecs && i < g.tee.naux; i++) {
		const struct cst_aux_rec_info *a = cst_aux_report_rec(r, i);
		int64_t first;
		uint64_t cov = covered(&g.tee, g.tee.aux[i].offset,
				       g.tee.aux[i].offset + g.tee.aux[i].size, &first);
		int64_t w = g.tee.aux[i].size
				    ? (int64_t)((g.tee.aux[i].offset + g.tee.aux[i].size - 1) / 8192 -
						g.tee.aux[i].offset / 8192)
				    : 0;

		CHECK_EQ_INT(a->cpu, 2);
		CHECK_EQ_INT(a->aux_offset, g.tee.aux[i].offset);
		CHECK_EQ_INT(a->aux_size, g.tee.aux[i].size);
		CHECK_EQ_INT(a->flags, g.tee.aux[i].flags);
		CHECK_EQ_INT(a->covered, cov);
		CHECK_EQ_INT(a->lost, 0); /* normal mode: every byte reached the file */
		CHECK_EQ_INT(a->chunk, g.tee.aux[i].size ? first : a->chunk);
		CHECK_EQ_INT(a->gap, (int64_t)(g.tee.aux[i].offset - prev_end));
		CHECK_EQ_INT(a->wraps, w);
		prev_end = g.tee.aux[i].offset + g.tee.aux[i].size;
		wraps += (uint64_t)w;
	}
	const struct cst_aux_queue_summary *q = cst_aux_report_queue(r, 0);
	CHECK_EQ_INT(q->cpu, 2);
	CHECK_EQ_INT(q->truncated, ks->truncated);
	CHECK(ks->truncated > 0);
	CHECK_EQ_INT(q->truncated, st.truncated);
	CHECK_EQ_INT(q->empty_truncated, ks->empty_truncated);
	CHECK_EQ_INT(q->collision, 1);
	CHECK_EQ_INT(q->partial, 1);
	CHECK_EQ_INT(q->overwrite, 0);
	CHECK_EQ_INT(q->record_bytes, ks->to_aux);
	CHECK_EQ_INT(q->gaps, 0);
	CHECK_EQ_INT(q->lost_bytes, 0);
	CHECK_EQ_INT(q->wraps, wraps);
	CHECK(wraps > 0);
	uint64_t cb = 0;
	for (uint64_t i = 0; i < g.tee.nchunk; i++)
		cb += (g.tee.chunk[i].size + 7) & ~7ULL;
	CHECK_EQ_INT(q->chunk_bytes, cb);
	check_cli(g.path, r, o.aux_size);
	cst_aux_report_free(r);
	rig_close(&g);
}

/* Snapshot mode: what the file lacks is exactly what snapshots could not take. */
static void test_snapshot(void)
{
	struct kmodel_opts o = {.data_size = 1 << 16, .aux_size = 4096, .sink_size = 1024,
				.overwrite = true, .pid = 9, .tid = 9, .cpu = 0, .id = 5};
	struct rig g;
	struct cst_ring_stats st;
	struct cst_aux_report *r = NULL;
	uint64_t rng = 11, lost = 0, size = 0;

	CHECK(rig_open(&g, &o, "capture-snap", 0) == 0);
	for (int i = 0; i < 200; i++) {
		kmodel_sched_in(g.m);
		rng = rng * 6364136223846793005ULL + 1;
		kmodel_run(g.m, 8 + (rng >> 33) % 1000); /* >= 8: padding stays unambiguous */
		kmodel_sched_out(g.m);
		if (i % 9 == 8)
			CHECK(cst_ring_snapshot(g.ring) >= 0);
	}
	CHECK(cst_ring_snapshot(g.ring) >= 0); /* the one at exit */
	CHECK_EQ_INT(cst_perf_writer_finish(g.w), 0);
	cst_ring_get_stats(g.ring, &st);
	CHECK_EQ_INT(cst_aux_report_build(&r, g.path, o.aux_size, NULL), 0);
	if (!r) {
		rig_close(&g);
		return;
	}
	CHECK_EQ_INT(cst_aux_report_get_info(r).nrecs, kmodel_stats(g.m)->aux_records);
	for (uint64_t i = 0; i < cst_aux_report_get_info(r).nrecs; i++) {
		const struct cst_aux_rec_info *a = cst_aux_report_rec(r, i);
		int64_t first;

		CHECK(a->flags & 0x02);
		CHECK_EQ_INT(a->end, a->aux_offset);
		CHECK_EQ_INT(a->covered, covered(&g.tee, a->start, a->end, &first));
		lost += a->lost;
		size += a->aux_size;
	}
	CHECK(st.snapshot_overwritten > 0);
	CHECK_EQ_INT(lost, st.snapshot_overwritten);
	CHECK_EQ_INT(size - lost, st.aux_bytes);
	CHECK_EQ_INT(cst_aux_report_queue(r, 0)->overwrite, cst_aux_report_get_info(r).nrecs);
	CHECK_EQ_INT(cst_aux_report_queue(r, 0)->truncated, 0);
	check_cli(g.path, r, o.aux_size);
	cst_aux_report_free(r);
	rig_close(&g);
}

/* The file system fills up (RLIMIT_FSIZE here): capture stops writing before
 * the limit, the file is still finished, and the loss is counted exactly. */
static void test_disk_full(void)
{
	struct kmodel_opts o = {.data_size = 1 << 16, .aux_size = 1 << 14, .sink_size = 4096,
				.pid = 1, .tid = 1, .cpu = 1, .id = 3};
	struct rlimit old, lim = {64 << 10, 64 << 10};
	struct cst_perf_reader *rd = NULL;
	struct cst_perf_record rec;
	struct cst_ring_stats st;
	struct rig g;
	uint64_t file_aux = 0, nchunks = 0;
	struct stat sb;

	signal(SIGXFSZ, SIG_IGN);
	getrlimit(RLIMIT_FSIZE, &old);
	lim.rlim_max = old.rlim_max;
	CHECK(rig_open(&g, &o, "capture-full", 8192) == 0);
	CHECK_EQ_INT(setrlimit(RLIMIT_FSIZE, &lim), 0);
	for (int i = 0; i < 100; i++) {
		kmodel_sched_in(g.m);
		kmodel_run(g.m, 4000);
		kmodel_sched_out(g.m);
		if (kmodel_poll(g.m))
			cst_ring_read(g.ring);
	}
	cst_ring_read(g.ring);
	CHECK_EQ_INT(cst_perf_writer_finish(g.w), 0);
	setrlimit(RLIMIT_FSIZE, &old);
	cst_ring_get_stats(g.ring, &st);
	CHECK(g.out.full);
	CHECK(st.output_failed);
	CHECK(stat(g.path, &sb) == 0 && (uint64_t)sb.st_size <= (64 << 10));
	struct cst_perf_reader_opts ro = {.sz = sizeof(ro)};
	CHECK_EQ_INT(cst_perf_reader_open(&rd, g.path, &ro), 0);
	if (rd) {
		CHECK(!cst_perf_reader_incomplete(rd));
		while (cst_perf_reader_next(rd, &rec) == 0) {
			if (rec.type == cst_perf_rec_auxtrace) {
				file_aux += g.tee.chunk[nchunks].size;
				CHECK_EQ_INT(rec.u.auxtrace.offset, g.tee.chunk[nchunks].offset);
				nchunks++;
			}
		}
		cst_perf_reader_free(rd);
	}
	CHECK(nchunks > 0);
	CHECK_EQ_INT(nchunks, st.chunks);
	CHECK_EQ_INT(file_aux + st.unwritten_aux, kmodel_stats(g.m)->to_aux);
	CHECK(st.unwritten_aux > 0);
	rig_close(&g);
}

int main(void)
{
	test_normal();
	test_snapshot();
	test_disk_full();
	return test_done();
}
