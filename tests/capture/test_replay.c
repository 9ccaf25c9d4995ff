/* Recorded AUX streams: the kernel model (kmodel.c, standing in for ring_buffer.c and
 * the ETF, as no cs_etm hardware exists here) drives the consumer that record runs,
 * which writes perf.data and the stream; replaying the stream must give the same
 * perf.data byte for byte and the same stream again. A stream cut anywhere must
 * replay into a valid perf.data of what was consumed up to the cut.
 *
 * With --write DIR the scenarios' streams are written to DIR with the SHA-256 of the
 * perf.data each capture wrote (testdata/auxlog: the replays on arm64 and armhf
 * are checked against those by tests/capture/replay.sh). */
#include "test.h"

#include <sys/stat.h>
#include <unistd.h>

#include "cstrace/auxlog.h"
#include "cstrace/capture.h"
#include "cstrace/perfdata.h"
#include "kmodel.h"

#define ETM_ID 7

struct scenario {
	const char *name;
	bool overwrite;      /* snapshot mode */
	uint64_t aux_size, sink_size, start_head;
	bool kernel32;
	uint8_t trace_id;    /* != 0: AUX_OUTPUT_HW_ID records (dynamic trace IDs) */
	int rounds;          /* scheduling rounds */
	uint64_t run;        /* trace bytes the program makes per round */
	int read_every;      /* the consumer wakes every N rounds (a slow consumer: large) */
	int snapshot_every;  /* snapshot mode: SIGUSR2 every N rounds */
};

static const struct scenario scenarios[] = {
	{"normal", false, 1 << 14, 4096, 0, false, 0x10, 40, 3000, 1, 0},
	/* wakes rarely: the AUX area fills, TRUNCATED records and re-enables */
	{"slow-consumer", false, 1 << 13, 4096, 0, false, 0, 60, 3000, 7, 0},
	/* the heads start just below 4 GiB on a 32-bit kernel: they wrap */
	{"wrap32", false, 1 << 13, 2048, 0xffffe000ULL, true, 0, 30, 2500, 2, 0},
	{"snapshot", true, 1 << 13, 4096, 0, false, 0, 40, 3000, 0, 9},
};

/* The consumer's clock: CLOCK_MONOTONIC on a board, which runs with the kernel's;
 * here the model's clock from a different origin, each call a little later. */
struct fake_clock {
	struct kmodel *m;
	uint64_t t;
};

static uint64_t tick(void *ctx)
{
	struct fake_clock *c = ctx;
	uint64_t now = 5000000 + (c->m ? kmodel_now(c->m) : 0);

	c->t = now > c->t ? now : c->t + 100;
	return c->t;
}

static const char *tmpdir(void)
{
	return getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
}

/* A capture of @sc through the consumer: @data and @stream are written. */
static int capture(const struct scenario *sc, const char *data, const char *stream,
		   struct kmodel_stats *ks, bool light)
{
	static const char *const argv[] = {"./prog", "--loop", NULL};
	struct cst_perf_writer_opts wo = {
		.sz = sizeof(wo), .hostname = "stm32mp157", .osrelease = "6.1.0-board",
		.arch = "armv7l", .version = "6.1.cstrace", .nr_cpus_avail = 2,
		.nr_cpus_online = 2, .cmdline = argv,
	};
	struct cst_etm_pmu pmu = {.type = 0x55, .ncpus = 1};
	struct cst_perf_etm_info info;
	uint64_t id = ETM_ID;
	struct cst_perf_attr pa = {
		.type = 0x55, .size = CST_PERF_ATTR_SIZE, .sample_period = 1,
		.sample_type = cst_capture_sample_type(),
		.flags = CST_PERF_ATTR_SAMPLE_ID_ALL | CST_PERF_ATTR_DISABLED, .ids = &id, .nids = 1,
	};
	struct fake_clock clk = {0};
	struct kmodel_opts ko = {
		.data_size = 1 << 14, .aux_size = sc->aux_size, .sink_size = sc->sink_size,
		.overwrite = sc->overwrite, .pid = 42, .tid = 42, .cpu = 0, .id = ETM_ID,
		.start_head = sc->start_head, .kernel32 = sc->kernel32, .trace_id = sc->trace_id,
	};
	struct cst_consumer *c = NULL;
	struct cst_record_result res;
	struct kmodel *m;
	struct cst_ring_desc d;
	int err;

	pmu.cpus[0] = (struct cst_etm_cpu){.cpu = 0, .kind = cst_etm_v4, .traceid = 0x10,
					   .trcidr0 = 0x28000ea1, .trcidr1 = 0x4100f403,
					   .trcidr2 = 0x00000488, .trcidr8 = 0, .trcauthstatus = 0xcc,
					   .trcconfigr = 0x1000};
	if (cst_etm_pmu_etm_info(&pmu, sc->overwrite, &info) < 0)
		return -1;
	m = kmodel_new(&ko);
	clk.m = m;
	{
		struct cst_consumer_opts co = {
			.sz = sizeof(co), .output = data, .aux_log = stream, .writer = &wo,
			.page_size = 4096, .snapshot = sc->overwrite, .attrs = &pa, .nattrs = 1,
			.etm_info = &info, .clock = tick, .clock_ctx = &clk, .aux_log_light = light,
		};

		err = cst_consumer_open(&c, &co);
	}
	cst_perf_etm_info_fini(&info);
	if (err < 0 || !m) {
		kmodel_free(m);
		return -1;
	}
	d = kmodel_desc(m);
	CHECK_EQ_INT(cst_consumer_add_ring(c, &d), 0);
	for (int i = 1; i <= sc->rounds; i++) {
		kmodel_sched_in(m);
		kmodel_run(m, sc->run);
		kmodel_sched_out(m);
		if (sc->read_every && i % sc->read_every == 0) {
			bool woke = kmodel_poll(m);

			cst_consumer_note_wake(c, woke, woke);
			cst_consumer_drain(c);
		}
		if (sc->snapshot_every && i % sc->snapshot_every == 0) {
			cst_consumer_note_signal(c, 12); /* SIGUSR2 */
			cst_consumer_snapshot(c);
		}
	}
	if (sc->overwrite)
		cst_consumer_snapshot(c);
	cst_consumer_drain(c);
	memset(&res, 0, sizeof(res));
	res.exit_status = 0;
	err = cst_consumer_finish(c, 0, &res);
	if (!strcmp(sc->name, "slow-consumer"))
		CHECK(res.total.truncated > 0); /* the scenario does what it says */
	if (sc->overwrite)
		CHECK(res.total.snapshots > 1);
	if (ks)
		*ks = *kmodel_stats(m);
	cst_consumer_free(c);
	kmodel_free(m);
	return err;
}

static uint8_t *slurp(const char *path, uint64_t *len)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf = NULL;
	struct stat st;

	*len = 0;
	if (!f)
		return NULL;
	if (!fstat(fileno(f), &st) && (buf = malloc((size_t)st.st_size + 1)) &&
	    fread(buf, 1, (size_t)st.st_size, f) == (size_t)st.st_size)
		*len = (uint64_t)st.st_size;
	fclose(f);
	return buf;
}

static bool same_bytes(const char *a, const char *b)
{
	uint64_t la, lb;
	uint8_t *pa = slurp(a, &la), *pb = slurp(b, &lb);
	bool same = pa && pb && la == lb && !memcmp(pa, pb, (size_t)la);

	if (!same)
		fprintf(stderr, "%s (%llu bytes) and %s (%llu bytes) differ\n", a,
			(unsigned long long)la, b, (unsigned long long)lb);
	free(pa);
	free(pb);
	return same;
}

/* The AUXTRACE payloads of @path, concatenated; records counted in @nrec. */
static uint8_t *aux_bytes(const char *path, uint64_t *len, uint64_t *nrec)
{
	struct cst_perf_reader_opts ro = {.sz = sizeof(ro)};
	struct cst_perf_reader *r = NULL;
	struct cst_perf_record rec;
	uint8_t *buf = NULL;
	int err;

	*len = *nrec = 0;
	if (cst_perf_reader_open(&r, path, &ro) < 0)
		return NULL;
	CHECK(!cst_perf_reader_incomplete(r));
	while ((err = cst_perf_reader_next(r, &rec)) == 0) {
		(*nrec)++;
		if (rec.type == cst_perf_rec_auxtrace) {
			uint64_t n = rec.u.auxtrace.size;
			uint8_t *p = realloc(buf, (size_t)(*len + n + 1));

			if (!p)
				break;
			buf = p;
			CHECK_EQ_INT(cst_perf_reader_pread(r, rec.u.auxtrace.data_offset, buf + *len, n),
				     n);
			*len += n;
		}
	}
	CHECK_EQ_INT(err, -cste_eos);
	cst_perf_reader_free(r);
	return buf;
}

static void cut_stream(const char *from, const char *to, uint64_t at)
{
	uint64_t len;
	uint8_t *p = slurp(from, &len);
	FILE *f = fopen(to, "wb");

	if (p && f)
		fwrite(p, 1, (size_t)(at < len ? at : len), f);
	if (f)
		fclose(f);
	free(p);
}

/* Cut the stream at @at and replay: a valid perf.data whose AUX bytes are a
 * prefix of the full capture's. */
static void check_cut(const char *stream, const char *full_data, uint64_t at)
{
	char cut[512], out[512], old[600];
	struct cst_replay_opts o = {.sz = sizeof(o), .output = out};
	struct cst_replay_result res;
	uint64_t flen, clen, fn, cn;
	uint8_t *fa, *ca;

	snprintf(cut, sizeof(cut), "%s.cut", stream);
	snprintf(out, sizeof(out), "%s.cut.data", stream);
	cut_stream(stream, cut, at);
	CHECK_EQ_INT(cst_replay_run(cut, &o, &res), 0);
	CHECK(res.cut_short);
	CHECK(!res.ended);
	CHECK(res.end_offset <= at);
	fa = aux_bytes(full_data, &flen, &fn);
	ca = aux_bytes(out, &clen, &cn);
	CHECK(clen <= flen);
	CHECK(cn <= fn);
	CHECK(!clen || (fa && ca && !memcmp(fa, ca, (size_t)clen)));
	free(fa);
	free(ca);
	unlink(cut);
	unlink(out);
	snprintf(old, sizeof(old), "%s.old", out);
	unlink(old);
}

/* cstrace aux on the stream against what the model itself counted. */
static void check_timeline(const struct scenario *sc, const char *stream,
			   const struct kmodel_stats *ks)
{
	struct cst_aux_timeline *t = NULL;
	const struct cst_aux_tl_ring *g;
	char verdict[2048];
	uint64_t reads = 0, writes = 0, prev = 0;

	CHECK_EQ_INT(cst_aux_timeline_build(&t, stream, NULL), 0);
	if (!t)
		return;
	CHECK_EQ_INT(cst_aux_timeline_get_info(t).nrings, 1);
	CHECK(cst_aux_timeline_get_info(t).ended);
	g = cst_aux_timeline_ring(t, 0);
	CHECK_EQ_INT(g->aux_size, sc->aux_size);
	CHECK_EQ_INT(g->writes, ks->aux_records);
	CHECK_EQ_INT(g->truncated, ks->truncated);
	CHECK_EQ_INT(g->empty_truncated, ks->empty_truncated);
	CHECK_EQ_INT(g->collision, ks->collision);
	CHECK_EQ_INT(g->lost_events, ks->records_lost);
	CHECK_EQ_INT(g->written, ks->to_aux);
	CHECK_EQ_INT(g->unreported, 0);
	if (sc->overwrite) {
		/* every byte the sink put into AUX was either copied by a snapshot or
		 * overwritten before one */
		CHECK_EQ_INT(g->copied + g->overwritten, ks->to_aux);
		CHECK(g->overwritten > 0);
	} else {
		CHECK_EQ_INT(g->copied, ks->to_aux);
		CHECK(g->peak_backlog <= g->aux_size);
	}
	for (uint64_t i = 0; i < cst_aux_timeline_get_info(t).nevents; i++) {
		const struct cst_aux_tl_event *e = cst_aux_timeline_event(t, i);

		CHECK(e->time >= prev); /* time order */
		prev = e->time;
		reads += e->kind == cst_aux_tl_read;
		writes += e->kind == cst_aux_tl_write;
		if (e->kind == cst_aux_tl_write)
			CHECK(e->time <= e->found);
	}
	CHECK_EQ_INT(reads, g->reads);
	CHECK_EQ_INT(writes, ks->aux_records);
	cst_aux_timeline_verdict(t, 0, verdict, sizeof(verdict));
	if (!ks->truncated && !g->overwritten && !ks->records_lost)
		CHECK(strstr(verdict, "Nothing lost.") != NULL);
	/* the model's slow consumer let the ring fill; wrap32's sink is smaller than
	 * what runs between two copies, so its own buffer wrapped */
	if (!strcmp(sc->name, "slow-consumer"))
		CHECK(strstr(verdict, "with the ring full because the consumer was late") != NULL);
	if (!strcmp(sc->name, "wrap32")) {
		CHECK(ks->dropped > 0);
		CHECK(strstr(verdict, "the sink's own buffer filled") != NULL);
		CHECK(strstr(verdict, "consumer was late") == NULL);
	}
	cst_aux_timeline_free(t);
}

static void test_scenario(const struct scenario *sc)
{
	char data[400], stream[400], again[512], stream2[512], old[600];
	struct cst_replay_opts o = {.sz = sizeof(o), .output = again, .aux_log = stream2};
	struct cst_replay_result res;
	uint64_t len, pos;
	struct cst_auxlog_reader *rd = NULL;
	struct cst_auxlog_event ev;
	uint64_t cuts[8];
	int ncuts = 0, nev = 0;
	struct kmodel_stats ks;

	printf("scenario %s\n", sc->name);
	snprintf(data, sizeof(data), "%s/replay-%s-%d.data", tmpdir(), sc->name, (int)getpid());
	snprintf(stream, sizeof(stream), "%s/replay-%s-%d.auxlog", tmpdir(), sc->name,
		 (int)getpid());
	snprintf(again, sizeof(again), "%s.again", data);
	snprintf(stream2, sizeof(stream2), "%s.again", stream);
	CHECK_EQ_INT(capture(sc, data, stream, &ks, false), 0);
	check_timeline(sc, stream, &ks);
	CHECK_EQ_INT(cst_replay_run(stream, &o, &res), 0);
	CHECK(res.ended);
	CHECK(!res.cut_short);
	CHECK(!res.diverged);
	CHECK(res.drains > 0);
	/* the record summary tells the same cause as the AUX timeline */
	if (!strcmp(sc->name, "wrap32")) {
		CHECK(res.rec.total.truncated > 0);
		CHECK_EQ_INT(res.rec.total.truncated_late, 0);
	}
	if (!strcmp(sc->name, "slow-consumer"))
		CHECK(res.rec.total.truncated_late > 0);
	CHECK(same_bytes(data, again));
	CHECK(same_bytes(stream, stream2));
	/* cut points: inside the set-up, right after events, inside events */
	CHECK_EQ_INT(cst_auxlog_reader_open(&rd, stream, NULL), 0);
	while (rd && cst_auxlog_reader_next(rd, &ev) == 0) {
		nev++;
		if (ev.type == cst_auxlog_read && ev.u.read.aux_len && ncuts < 6 && nev % 3 == 0) {
			cuts[ncuts++] = ev.offset;      /* between events, inside a drain */
			cuts[ncuts++] = ev.offset + 60; /* inside a read event */
		}
	}
	pos = cst_auxlog_reader_offset(rd);
	cst_auxlog_reader_free(rd);
	free(slurp(stream, &len)); /* only its length is wanted */
	CHECK_EQ_INT(pos, len);
	for (int i = 0; i < ncuts; i++)
		check_cut(stream, data, cuts[i]);
	/* before the first ring: nothing to replay, and said so */
	{
		char cut[600], out[600];
		struct cst_replay_opts co = {.sz = sizeof(co), .output = out, .log = log_capture()};

		snprintf(cut, sizeof(cut), "%s.head", stream);
		snprintf(out, sizeof(out), "%s.head.data", stream);
		cut_stream(stream, cut, 40);
		CHECK_EQ_INT(cst_replay_run(cut, &co, &res), -cste_no_trace);
		CHECK(strstr(log_captured(), "before its rings") != NULL);
		CHECK(access(out, F_OK) != 0);
		unlink(cut);
	}
	unlink(data);
	if (!getenv("CSTRACE_KEEP_FILES")) /* kept to look at with cstrace aux */
		unlink(stream);
	unlink(again);
	if (!getenv("CSTRACE_KEEP_FILES"))
		unlink(stream2);
	snprintf(old, sizeof(old), "%s.old", again);
	unlink(old);
}

/* A replay whose consumer would not do what the capture's did is refused: a
 * stored tail changed in the stream. */
static void test_divergence(void)
{
	const struct scenario *sc = &scenarios[0];
	char data[400], stream[400], out[512];
	struct cst_replay_opts o = {.sz = sizeof(o), .output = out, .log = log_capture()};
	struct cst_replay_result res;
	struct cst_auxlog_reader *rd = NULL;
	struct cst_auxlog_event ev;
	uint64_t at = 0, len;
	uint8_t *p;
	FILE *f;

	snprintf(data, sizeof(data), "%s/replay-div-%d.data", tmpdir(), (int)getpid());
	snprintf(stream, sizeof(stream), "%s/replay-div-%d.auxlog", tmpdir(), (int)getpid());
	snprintf(out, sizeof(out), "%s.out", data);
	CHECK_EQ_INT(capture(sc, data, stream, NULL, false), 0);
	CHECK_EQ_INT(cst_auxlog_reader_open(&rd, stream, NULL), 0);
	while (rd && cst_auxlog_reader_next(rd, &ev) == 0)
		if (ev.type == cst_auxlog_read && ev.u.read.aux_len && !at)
			at = ev.offset;
	cst_auxlog_reader_free(rd);
	CHECK(at != 0);
	p = slurp(stream, &len);
	/* aux_tail_after: event header 24, idx/flags 8, then the 6th u64 */
	if (p && at + 24 + 8 + 5 * 8 + 8 <= len)
		p[at + 24 + 8 + 5 * 8] ^= 0x40;
	f = fopen(stream, "wb");
	if (f && p)
		fwrite(p, 1, (size_t)len, f);
	if (f)
		fclose(f);
	free(p);
	CHECK_EQ_INT(cst_replay_run(stream, &o, &res), -cste_format);
	CHECK(res.diverged);
	CHECK(strstr(log_captured(), "diverged") != NULL);
	unlink(data);
	if (!getenv("CSTRACE_KEEP_FILES")) /* kept to look at with cstrace aux */
		unlink(stream);
	unlink(out);
}

/* record's default log keeps no AUX bytes: cstrace aux reads it as it reads the full
 * stream; replay refuses it, saying how to get a stream that replays. */
static void test_light_log(void)
{
	char data[400], full[400], light[400], out[512];
	struct cst_replay_opts o = {.sz = sizeof(o), .output = out, .log = log_capture()};
	struct cst_replay_result res;
	struct cst_aux_timeline *tf = NULL, *tl = NULL;
	struct kmodel_stats ks;
	uint64_t lf = 0, ll = 0;
	uint8_t *p;

	for (size_t i = 0; i < sizeof(scenarios) / sizeof(scenarios[0]); i++) {
		const struct scenario *sc = &scenarios[i];
		char vf[2048], vl[2048];

		snprintf(data, sizeof(data), "%s/light-%d.data", tmpdir(), (int)getpid());
		snprintf(full, sizeof(full), "%s/light-%d.full", tmpdir(), (int)getpid());
		snprintf(light, sizeof(light), "%s/light-%d.light", tmpdir(), (int)getpid());
		snprintf(out, sizeof(out), "%s.out", light);
		CHECK_EQ_INT(capture(sc, data, full, &ks, false), 0);
		CHECK_EQ_INT(capture(sc, data, light, &ks, true), 0);
		free(slurp(full, &lf));
		p = slurp(light, &ll);
		free(p);
		CHECK(ll < lf);
		CHECK_EQ_INT(cst_aux_timeline_build(&tf, full, NULL), 0);
		CHECK_EQ_INT(cst_aux_timeline_build(&tl, light, NULL), 0);
		if (tf && tl)
			CHECK_EQ_STR(cst_aux_timeline_verdict(tf, 0, vf, sizeof(vf)),
				     cst_aux_timeline_verdict(tl, 0, vl, sizeof(vl)));
		cst_aux_timeline_free(tf);
		cst_aux_timeline_free(tl);
		tf = tl = NULL;
		CHECK_EQ_INT(cst_replay_run(light, &o, &res), -cste_unsupported);
		CHECK(strstr(log_captured(), "record with --aux-log FILE") != NULL);
		unlink(data);
		unlink(full);
		unlink(light);
		unlink(out);
		snprintf(out, sizeof(out), "%s.old", data);
		unlink(out);
	}
	/* the default log cannot be written (say -o /dev/null): the capture goes on;
	 * a stream asked for cannot be: the capture says so and stops */
	CHECK_EQ_INT(capture(&scenarios[0], data, "/nonexistent-dir/x.auxlog", NULL, true), 0);
	CHECK(access(data, F_OK) == 0);
	unlink(data);
	CHECK(capture(&scenarios[0], data, "/nonexistent-dir/x.auxlog", NULL, false) < 0);
	unlink(data);
	snprintf(out, sizeof(out), "%s.old", data);
	unlink(out);
}

/* Hostile streams: each gives a one-line error naming the offset, never a crash. */
static void test_bad_streams(void)
{
	char path[512];
	struct cst_auxlog_reader *rd = NULL;
	struct cst_auxlog_event ev;
	FILE *f;
	static const uint8_t hdr[16] = {'C', 'S', 'T', 'A', 'U', 'X', 'L', 'G', 1, 0, 0, 0, 16};
	/* an event claiming 2^35 bytes in a 64-byte file: truncated, nothing allocated */
	uint8_t big[40] = {1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 8};
	/* a session whose argc claims four billion arguments */
	uint8_t lie[24 + 32] = {1, 0, 0, 0, 0, 0, 0, 0, 56};

	snprintf(path, sizeof(path), "%s/replay-bad-%d.auxlog", tmpdir(), (int)getpid());
	f = fopen(path, "wb");
	fwrite(hdr, 1, sizeof(hdr), f);
	fwrite(big, 1, sizeof(big), f);
	fclose(f);
	CHECK_EQ_INT(cst_auxlog_reader_open(&rd, path, NULL), 0);
	CHECK_EQ_INT(cst_auxlog_reader_next(rd, &ev), -cste_truncated);
	cst_auxlog_reader_free(rd);
	rd = NULL;
	memset(lie + 24 + 20, 0xff, 4);
	f = fopen(path, "wb");
	fwrite(hdr, 1, sizeof(hdr), f);
	fwrite(lie, 1, sizeof(lie), f);
	fclose(f);
	{
		struct cst_auxlog_reader_opts ro = {.sz = sizeof(ro), .log = log_capture()};

		CHECK_EQ_INT(cst_auxlog_reader_open(&rd, path, &ro), 0);
	}
	CHECK_EQ_INT(cst_auxlog_reader_next(rd, &ev), -cste_format);
	CHECK(strstr(log_captured(), "offset 0x10") != NULL);
	cst_auxlog_reader_free(rd);
	unlink(path);
}

/* A ring claiming a 2 GiB AUX area in a small stream is refused before anything is
 * allocated (the fuzzer found replay allocating it). */
static void test_huge_ring(void)
{
	const char *src = getenv("CSTRACE_SOURCE_DIR");
	char in[600], path[512], out[600];
	struct cst_replay_opts o = {.sz = sizeof(o), .output = out, .log = log_capture()};
	struct cst_replay_result res;
	uint64_t len, at = 16;
	uint8_t *p;
	FILE *f;

	if (!src)
		return;
	snprintf(in, sizeof(in), "%s/testdata/auxlog/normal.auxlog", src);
	snprintf(path, sizeof(path), "%s/replay-huge-%d.auxlog", tmpdir(), (int)getpid());
	snprintf(out, sizeof(out), "%s.data", path);
	p = slurp(in, &len);
	CHECK(p != NULL);
	if (!p)
		return;
	while (at + 24 <= len && cst_le32(p + at) != cst_auxlog_ring)
		at += cst_le64(p + at + 8);
	CHECK(at + 24 + 32 <= len);
	if (at + 24 + 32 <= len)
		cst_put_le64(p + at + 24 + 24, UINT64_C(1) << 31); /* the ring's AUX size */
	f = fopen(path, "wb");
	if (f) {
		fwrite(p, 1, (size_t)len, f);
		fclose(f);
	}
	free(p);
	CHECK_EQ_INT(cst_replay_run(path, &o, &res), -cste_format);
	CHECK(strstr(log_captured(), "at most 1 GiB of each") != NULL);
	unlink(path);
	unlink(out);
}

static int write_testdata(const char *dir)
{
	for (size_t i = 0; i < sizeof(scenarios) / sizeof(scenarios[0]); i++) {
		char data[512], stream[512], cmd[1200];

		snprintf(data, sizeof(data), "%s/%s.data", tmpdir(), scenarios[i].name);
		snprintf(stream, sizeof(stream), "%s/%s.auxlog", dir, scenarios[i].name);
		unlink(stream);
		if (capture(&scenarios[i], data, stream, NULL, false) < 0)
			return 1;
		snprintf(cmd, sizeof(cmd), "cd %s && sha256sum %s.data | sed 's| .*||' > %s/%s.sha256",
			 tmpdir(), scenarios[i].name, dir, scenarios[i].name);
		if (system(cmd))
			return 1;
		unlink(data);
	}
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "--write"))
		return write_testdata(argv[2]);
	for (size_t i = 0; i < sizeof(scenarios) / sizeof(scenarios[0]); i++)
		test_scenario(&scenarios[i]);
	test_divergence();
	test_light_log();
	test_bad_streams();
	test_huge_ring();
	return test_done();
}
