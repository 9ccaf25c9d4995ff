/* Unit tests of the perf.data writer and reader: round trips of every record kind,
 * cs_etm AUXTRACE_INFO versions, crash recovery and bad input at every byte. */
#include "test.h"

#include <stdint.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cstrace/perfdata.h"

static char tmpdir[256];
static char lastmsg[8192];
static int nmsgs;

static void log_fn(void *ctx, enum cst_log_level level, const char *msg)
{
	(void)ctx;
	(void)level;
	/* All messages since the test last cleared nmsgs, one per line. */
	size_t used = nmsgs ? strlen(lastmsg) : 0;

	snprintf(lastmsg + used, sizeof(lastmsg) - used, "%s\n", msg);
	nmsgs++;
	if (getenv("TEST_VERBOSE"))
		fprintf(stderr, "log: %s\n", msg);
}

static const struct cst_log tlog = {log_fn, NULL};

static void path_of(char *buf, size_t n, const char *name)
{
	snprintf(buf, n, "%s/%s", tmpdir, name);
}

static const uint8_t bid1[20] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20};
static uint8_t trace_bytes[1000];

static void fill_info(struct cst_perf_etm_info *info, struct cst_perf_etm_cpu cpus[4])
{
	memset(info, 0, sizeof(*info));
	memset(cpus, 0, 4 * sizeof(cpus[0]));
	info->version = 1;
	info->pmu_type = 9;
	info->nr_cpu = 4;
	info->cpus = cpus;
	cpus[0].magic = CST_PERF_ETMV4_MAGIC;
	cpus[0].cpu = 0;
	cpus[0].trcconfigr = 0x1;
	cpus[0].trctraceidr = 0x10;
	cpus[0].trcidr0 = 0x28000ea1;
	cpus[0].trcidr1 = 0x4100f403;
	cpus[0].trcidr2 = 0x488;
	cpus[0].trcauthstatus = 0xcc;
	cpus[0].ts_source = 1;
	cpus[1].magic = CST_PERF_ETMV3_MAGIC;
	cpus[1].cpu = 1;
	cpus[1].etmcr = 0x1000;
	cpus[1].etmtraceidr = 0x12;
	cpus[1].etmccer = 0x344008f2;
	cpus[1].etmidr = 0x410cf250;
	cpus[2].magic = CST_PERF_ETMV3_MAGIC; /* PTM */
	cpus[2].cpu = 2;
	cpus[2].etmtraceidr = 0x14;
	cpus[2].etmidr = 0x411cf310;
	cpus[3].magic = CST_PERF_ETE_MAGIC;
	cpus[3].cpu = 3;
	cpus[3].trctraceidr = 0x16;
	cpus[3].trcdevarch = 0x47705a13;
	cpus[3].ts_source = 2;
}

/* Write a file with every record kind. Returns the number of records written. */
static uint64_t write_sample(const char *path, bool finish)
{
	struct cst_perf_writer_opts wo = {.sz = sizeof(wo), .log = &tlog, .hostname = "board",
					  .osrelease = "6.1.0", .arch = "aarch64",
					  .nr_cpus_avail = 4, .nr_cpus_online = 4};
	const char *argv[] = {"perf", "record", "-e", "cs_etm//u", NULL};
	struct cst_perf_writer *w = NULL;
	struct cst_perf_attr a = {0};
	struct cst_perf_etm_info info;
	struct cst_perf_etm_cpu cpus[4];
	struct cst_perf_sample_id sid = {.pid = 100, .tid = 101, .time = 5, .id = 7, .cpu = 2};
	uint64_t ids1[] = {7, 8}, ids2[] = {9};
	uint64_t n;

	wo.cmdline = argv;
	CHECK_EQ_INT(cst_perf_writer_open(&w, path, &wo), 0);
	if (!w)
		return 0;
	a.type = 9;
	a.sample_type = CST_PERF_SAMPLE_IP | CST_PERF_SAMPLE_TID | CST_PERF_SAMPLE_TIME |
			CST_PERF_SAMPLE_CPU | CST_PERF_SAMPLE_IDENTIFIER;
	a.flags = CST_PERF_ATTR_SAMPLE_ID_ALL | CST_PERF_ATTR_DISABLED;
	a.config = 0x1000;
	a.config2 = 0xdeadbeef;
	a.sample_period = 1;
	a.aux_watermark = 4096;
	CHECK_EQ_INT(cst_perf_writer_add_attr(w, &a, ids1, 2), 0);
	a.type = 1;
	a.config = 9;
	a.flags |= CST_PERF_ATTR_MMAP2 | CST_PERF_ATTR_COMM | CST_PERF_ATTR_TASK |
		   CST_PERF_ATTR_CONTEXT_SWITCH;
	CHECK_EQ_INT(cst_perf_writer_add_attr(w, &a, ids2, 1), 1);
	fill_info(&info, cpus);
	CHECK_EQ_INT(cst_perf_writer_etm_info(w, &info), 0);
	CHECK_EQ_INT(cst_perf_writer_comm(w, true, 100, 101, "prog", &sid), 0);
	CHECK_EQ_INT(cst_perf_writer_mmap2(w, CST_PERF_MISC_USER, 100, 101, 0x400000, 0x1000, 0,
					   5, 2, bid1, 20, "/usr/bin/prog", &sid), 0);
	CHECK_EQ_INT(cst_perf_writer_mmap2(w, CST_PERF_MISC_USER, 100, 101, 0x7f0000, 0x2000, 0x1000,
					   5, 2, NULL, 0, "/lib/libc.so.6", &sid), 0);
	CHECK_EQ_INT(cst_perf_writer_task(w, false, 100, 1, 101, 1, 77, &sid), 0);
	CHECK_EQ_INT(cst_perf_writer_itrace_start(w, 100, 101, &sid), 0);
	CHECK_EQ_INT(cst_perf_writer_hw_id(w, (1ull << 56) | 0x10, &sid), 0);
	CHECK_EQ_INT(cst_perf_writer_switch(w, false, false, 0, 0, &sid), 0);
	CHECK_EQ_INT(cst_perf_writer_switch(w, true, true, 200, 201, &sid), 0);
	CHECK_EQ_INT(cst_perf_writer_aux(w, 0, sizeof(trace_bytes),
					 CST_PERF_AUX_TRUNCATED | CST_PERF_AUX_CORESIGHT_RAW, &sid), 0);
	CHECK_EQ_INT(cst_perf_writer_lost(w, 7, 3, &sid), 0);
	CHECK_EQ_INT(cst_perf_writer_finished_round(w), 0);
	CHECK_EQ_INT(cst_perf_writer_auxtrace(w, 0, 0x1234, 2, 101, 2, trace_bytes,
					      sizeof(trace_bytes)), 0);
	CHECK_EQ_INT(cst_perf_writer_auxtrace(w, 1000, 0x1235, 2, 101, 2, trace_bytes, 16), 0);
	CHECK_EQ_INT(cst_perf_writer_task(w, true, 100, 1, 101, 1, 99, &sid), 0);
	CHECK_EQ_INT(cst_perf_writer_add_build_id(w, -1, CST_PERF_MISC_USER, bid1, 20,
						  "/usr/bin/prog"), 0);
	n = cst_perf_writer_count(w);
	CHECK_EQ_INT(n, 15);
	/* attrs after records are refused */
	CHECK_EQ_INT(cst_perf_writer_add_attr(w, &a, NULL, 0), -cste_invalid);
	if (finish)
		CHECK_EQ_INT(cst_perf_writer_finish(w), 0);
	cst_perf_writer_free(w);
	return n;
}

static void check_records(struct cst_perf_reader *r, uint64_t expect)
{
	struct cst_perf_record rec;
	uint64_t n = 0;
	int err;

	while ((err = cst_perf_reader_next(r, &rec)) == 0) {
		n++;
		switch (rec.type) {
		case cst_perf_rec_comm:
			CHECK_EQ_STR(rec.u.comm.comm, "prog");
			CHECK_EQ_INT(rec.u.comm.tid, 101);
			CHECK(rec.sid.have_tid && rec.sid.have_time && rec.sid.have_cpu && rec.sid.have_id);
			CHECK_EQ_INT(rec.sid.cpu, 2);
			CHECK_EQ_INT(rec.sid.id, 7);
			CHECK_EQ_INT(rec.sid.time, 5);
			break;
		case cst_perf_rec_mmap2:
			if (rec.misc & CST_PERF_MISC_MMAP_BUILD_ID) {
				CHECK_EQ_STR(rec.u.mmap.filename, "/usr/bin/prog");
				CHECK_EQ_INT(rec.u.mmap.build_id_size, 20);
				CHECK(!memcmp(rec.u.mmap.build_id, bid1, 20));
				CHECK_EQ_INT(rec.u.mmap.addr, 0x400000);
			} else {
				CHECK_EQ_STR(rec.u.mmap.filename, "/lib/libc.so.6");
				CHECK_EQ_INT(rec.u.mmap.pgoff, 0x1000);
			}
			CHECK_EQ_INT(rec.sid.tid, 101);
			break;
		case cst_perf_rec_fork:
			CHECK_EQ_INT(rec.u.fork.time, 77);
			break;
		case cst_perf_rec_exit:
			CHECK_EQ_INT(rec.u.fork.time, 99);
			break;
		case cst_perf_rec_itrace_start:
			CHECK_EQ_INT(rec.u.itrace_start.pid, 100);
			CHECK_EQ_INT(rec.u.itrace_start.tid, 101);
			CHECK_EQ_INT(rec.sid.cpu, 2);
			break;
		case cst_perf_rec_aux_output_hw_id:
			CHECK_EQ_INT(rec.u.hw_id.hw_id & 0xff, 0x10);
			break;
		case cst_perf_rec_switch:
			CHECK(!rec.u.sw.out);
			break;
		case cst_perf_rec_switch_cpu_wide:
			CHECK(rec.u.sw.out);
			CHECK_EQ_INT(rec.u.sw.next_prev_tid, 201);
			break;
		case cst_perf_rec_aux:
			CHECK_EQ_INT(rec.u.aux.aux_size, sizeof(trace_bytes));
			CHECK_EQ_INT(rec.u.aux.flags, 0x101);
			break;
		case cst_perf_rec_lost:
			CHECK_EQ_INT(rec.u.lost.lost, 3);
			break;
		case cst_perf_rec_auxtrace: {
			uint8_t buf[1000];

			CHECK_EQ_INT(rec.u.auxtrace.cpu, 2);
			CHECK_EQ_INT(rec.u.auxtrace.tid, 101);
			CHECK_EQ_INT(rec.u.auxtrace.size % 8, 0);
			if (rec.u.auxtrace.offset == 0) {
				CHECK_EQ_INT(rec.u.auxtrace.size, 1000);
				CHECK_EQ_INT(cst_perf_reader_pread(r, rec.u.auxtrace.data_offset, buf,
								   1000), 1000);
				CHECK(!memcmp(buf, trace_bytes, 1000));
			}
			break;
		}
		case cst_perf_rec_auxtrace_info:
		case cst_perf_rec_finished_round:
			break;
		default:
			CHECK(!"unexpected record type");
		}
	}
	CHECK_EQ_INT(err, -cste_eos);
	CHECK_EQ_INT(n, expect);
	CHECK_EQ_INT(cst_perf_reader_count(r), expect);
}

static void test_round_trip(void)
{
	struct cst_perf_reader_opts ro = {.sz = sizeof(ro), .log = &tlog};
	struct cst_perf_reader *r = NULL;
	const struct cst_perf_features *f;
	const struct cst_perf_attr *a;
	struct cst_perf_etm_info info;
	char path[512];
	uint64_t n;

	path_of(path, sizeof(path), "rt.data");
	n = write_sample(path, true);
	CHECK_EQ_INT(cst_perf_reader_open(&r, path, &ro), 0);
	if (!r)
		return;
	CHECK(!cst_perf_reader_incomplete(r));
	CHECK_EQ_INT(cst_perf_reader_nattrs(r), 2);
	a = cst_perf_reader_attr(r, 0);
	CHECK(a && a->type == 9 && a->config2 == 0xdeadbeef && a->nids == 2 && a->ids[1] == 8);
	CHECK(a && a->size == CST_PERF_ATTR_SIZE && a->aux_watermark == 4096);
	a = cst_perf_reader_attr_by_id(r, 9);
	CHECK(a && a->type == 1 && (a->flags & CST_PERF_ATTR_CONTEXT_SWITCH));
	CHECK(cst_perf_reader_attr_by_id(r, 1234) == NULL);
	CHECK(cst_perf_reader_has_feature(r, cst_perf_feat_auxtrace));
	CHECK(cst_perf_reader_has_feature(r, cst_perf_feat_build_id));
	CHECK(!cst_perf_reader_has_feature(r, cst_perf_feat_cpuid));
	f = cst_perf_reader_features(r);
	CHECK_EQ_STR(f->hostname, "board");
	CHECK_EQ_STR(f->osrelease, "6.1.0");
	CHECK_EQ_STR(f->arch, "aarch64");
	CHECK(f->has_nrcpus && f->nr_cpus_online == 4 && f->nr_cpus_avail == 4);
	CHECK_EQ_INT(f->ncmdline, 4);
	if (f->ncmdline == 4)
		CHECK_EQ_STR(f->cmdline[3], "cs_etm//u");
	CHECK_EQ_INT(f->nbuild_ids, 1);
	if (f->nbuild_ids == 1) {
		CHECK_EQ_STR(f->build_ids[0].filename, "/usr/bin/prog");
		CHECK_EQ_INT(f->build_ids[0].size, 20);
		CHECK(!memcmp(f->build_ids[0].id, bid1, 20));
	}
	CHECK(f->has_auxtrace_index);
	CHECK_EQ_INT(f->nauxtrace, 2);
	if (f->nauxtrace == 2) {
		uint8_t h[8];

		CHECK_EQ_INT(cst_perf_reader_pread(r, f->auxtrace_offsets[1], h, 8), 8);
		CHECK_EQ_INT(cst_le32(h), cst_perf_rec_auxtrace);
	}
	check_records(r, n);
	CHECK_EQ_INT(cst_perf_reader_etm_info(r, &info), 0);
	CHECK_EQ_INT(info.version, 1);
	CHECK_EQ_INT(info.nr_cpu, 4);
	CHECK_EQ_INT(info.pmu_type, 9);
	if (info.nr_cpu == 4) {
		CHECK_EQ_INT(info.cpus[0].trctraceidr, 0x10);
		CHECK_EQ_INT(info.cpus[0].trcidr1, 0x4100f403);
		CHECK(info.cpus[0].has_ts_source && info.cpus[0].ts_source == 1);
		CHECK_EQ_INT(info.cpus[0].nr_params, 8);
		CHECK_EQ_INT(info.cpus[1].etmidr, 0x410cf250);
		CHECK(!info.cpus[1].is_ptm);
		CHECK(info.cpus[2].is_ptm);
		CHECK_EQ_INT(info.cpus[3].trcdevarch, 0x47705a13);
		CHECK_EQ_INT(info.cpus[3].nr_params, 9);
		CHECK_EQ_INT(info.cpus[3].ts_source, 2);
	}
	cst_perf_etm_info_fini(&info);
	/* rewind: same records again */
	check_records(r, n);
	cst_perf_reader_free(r);
}

/* A writer that never finished: header says data size 0; every record is recovered. */
static void test_incomplete(void)
{
	struct cst_perf_reader_opts ro = {.sz = sizeof(ro), .log = &tlog};
	struct cst_perf_reader *r = NULL;
	char path[512];
	uint64_t n;

	path_of(path, sizeof(path), "inc.data");
	n = write_sample(path, false);
	nmsgs = 0;
	CHECK_EQ_INT(cst_perf_reader_open(&r, path, &ro), 0);
	if (!r)
		return;
	CHECK(cst_perf_reader_incomplete(r));
	CHECK(nmsgs > 0 && strstr(lastmsg, "incomplete") && strstr(lastmsg, path));
	CHECK_EQ_INT(cst_perf_reader_nattrs(r), 2);
	CHECK(!cst_perf_reader_has_feature(r, cst_perf_feat_auxtrace));
	check_records(r, n);
	cst_perf_reader_free(r);
}

static uint8_t *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	uint8_t *b;
	long n;

	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	b = malloc((size_t)n);
	if (b && fread(b, 1, (size_t)n, f) != (size_t)n) {
		free(b);
		b = NULL;
	}
	fclose(f);
	*len = (size_t)n;
	return b;
}

static void spit(const char *path, const uint8_t *b, size_t len)
{
	FILE *f = fopen(path, "wb");

	if (!f)
		return;
	if (len)
		CHECK_EQ_INT(fwrite(b, 1, len, f), len);
	fclose(f);
}

/* Open and iterate; returns records read, or -1 if open failed. Never crashes. */
static long read_all(const char *path, int *last_err)
{
	struct cst_perf_reader_opts ro = {.sz = sizeof(ro), .log = &tlog};
	struct cst_perf_reader *r = NULL;
	struct cst_perf_record rec;
	struct cst_perf_etm_info info;
	long n = 0;
	int err;

	err = cst_perf_reader_open(&r, path, &ro);
	if (err) {
		*last_err = err;
		return -1;
	}
	while ((err = cst_perf_reader_next(r, &rec)) == 0)
		n++;
	*last_err = err;
	if (cst_perf_reader_etm_info(r, &info) == 0)
		cst_perf_etm_info_fini(&info);
	cst_perf_reader_free(r);
	return n;
}

/* Cut a finished file at every length: the reader fails cleanly on a broken header
 * and otherwise recovers exactly the records that are wholly present. */
static void test_truncation(void)
{
	char path[512], cut[512];
	size_t len, data_off;
	uint8_t *b;
	uint64_t *rec_end = NULL;
	size_t nrec = 0;

	path_of(path, sizeof(path), "full.data");
	path_of(cut, sizeof(cut), "cut.data");
	write_sample(path, true);
	b = slurp(path, &len);
	CHECK(b != NULL);
	if (!b)
		return;
	/* Record ends, from the header's data section, for the expected counts. */
	data_off = cst_le64(b + 40);
	{
		size_t end = data_off + cst_le64(b + 48), p = data_off;

		rec_end = calloc(64, sizeof(uint64_t));
		while (p + 8 <= end && nrec < 64) {
			size_t sz = cst_le16(b + p + 6);

			if (cst_le32(b + p) == cst_perf_rec_auxtrace)
				sz += cst_le64(b + p + 8);
			p += sz;
			rec_end[nrec++] = p;
		}
	}
	for (size_t l = 0; l < len; l++) {
		int err = 0;
		long n, expect = 0;

		spit(cut, b, l);
		nmsgs = 0;
		n = read_all(cut, &err);
		if (l < CST_PERF_HEADER_SIZE || l < data_off) {
			/* header or attrs cut: open may fail, and must say so */
			if (n < 0)
				CHECK(nmsgs > 0 && strstr(lastmsg, "cut.data") && strstr(lastmsg, "offset"));
			continue;
		}
		for (size_t k = 0; k < nrec; k++) {
			/* an AUXTRACE cut inside its payload is kept with the bytes present */
			uint64_t start = k ? rec_end[k - 1] : data_off;
			bool whole = rec_end[k] <= l;
			bool aux_hdr = cst_le32(b + start) == cst_perf_rec_auxtrace && start + 48 <= l;

			if (whole || aux_hdr)
				expect++;
		}
		CHECK_EQ_INT(n, expect);
		if (n != expect)
			fprintf(stderr, "  at cut length %zu\n", l);
	}
	free(rec_end);
	free(b);
}

static void patch_and_read(const char *name, const uint8_t *orig, size_t len, size_t at,
			   const void *bytes, size_t n, long *nrec, int *err)
{
	char path[512];
	uint8_t *b = malloc(len);

	memcpy(b, orig, len);
	memcpy(b + at, bytes, n);
	path_of(path, sizeof(path), name);
	spit(path, b, len);
	nmsgs = 0;
	lastmsg[0] = '\0';
	*nrec = read_all(path, err);
	free(b);
}

static void test_bad_input(void)
{
	char path[512];
	uint8_t *b, v[8];
	size_t len, data_off, first;
	long n;
	int err;

	path_of(path, sizeof(path), "good.data");
	write_sample(path, true);
	b = slurp(path, &len);
	if (!b)
		return;
	data_off = cst_le64(b + 40);

	patch_and_read("magic.data", b, len, 0, "PERFILE3", 8, &n, &err);
	CHECK(n < 0 && err == -cste_format && strstr(lastmsg, "magic") && strstr(lastmsg, "offset 0"));
	patch_and_read("v1.data", b, len, 0, "PERFFILE", 8, &n, &err);
	CHECK(n < 0 && err == -cste_unsupported);

	cst_put_le64(v, 16);
	patch_and_read("pipe.data", b, len, 8, v, 8, &n, &err);
	CHECK(n < 0 && err == -cste_unsupported && strstr(lastmsg, "pipe"));
	cst_put_le64(v, 200);
	patch_and_read("hsize.data", b, len, 8, v, 8, &n, &err);
	CHECK(n < 0 && err == -cste_format && strstr(lastmsg, "header size 200"));
	/* attr section past EOF */
	cst_put_le64(v, (uint64_t)len * 4);
	patch_and_read("attrsz.data", b, len, 32, v, 8, &n, &err);
	CHECK(n < 0 && err == -cste_format && strstr(lastmsg, "attr section"));
	cst_put_le64(v, 12);
	patch_and_read("attrent.data", b, len, 16, v, 8, &n, &err);
	CHECK(n < 0 && err == -cste_format);
	/* data offset past EOF */
	cst_put_le64(v, (uint64_t)len + 100);
	patch_and_read("dataoff.data", b, len, 40, v, 8, &n, &err);
	CHECK(n < 0 && err == -cste_format && strstr(lastmsg, "offset 40"));
	/* data size past EOF: warned, records up to EOF recovered */
	cst_put_le64(v, (uint64_t)len * 2);
	patch_and_read("datasz.data", b, len, 48, v, 8, &n, &err);
	CHECK(n >= 15);
	/* feature section table pointing nowhere: features skipped with a warning */
	cst_put_le64(v, UINT64_MAX / 2);
	{
		size_t feat_tab = data_off + cst_le64(b + 48);

		patch_and_read("feat.data", b, len, feat_tab, v, 8, &n, &err);
		CHECK_EQ_INT(n, 15);
		CHECK(strstr(lastmsg, "feature") != NULL);
	}
	/* first record (AUXTRACE_INFO) with size 4 */
	first = data_off;
	cst_put_le16(v, 4);
	patch_and_read("recsz.data", b, len, first + 6, v, 2, &n, &err);
	CHECK(n == 0 && err == -cste_format && strstr(lastmsg, "record size 4"));
	/* unknown record type: returned as is, iteration goes on */
	cst_put_le32(v, 999);
	patch_and_read("unknown.data", b, len, first, v, 4, &n, &err);
	CHECK_EQ_INT(n, 15);
	CHECK_EQ_INT(err, -cste_eos);
	/* AUXTRACE_INFO that is not cs_etm, and one with a bad CPU count */
	cst_put_le32(v, 1);
	patch_and_read("intelpt.data", b, len, first + 8, v, 4, &n, &err);
	CHECK(strstr(lastmsg, "expected 3") != NULL);
	cst_put_le64(v, 1000);
	patch_and_read("ncpu.data", b, len, first + 16 + 8, v, 8, &n, &err);
	CHECK(strstr(lastmsg, "claims 1000 CPUs") != NULL);
	/* AUXTRACE payload size past EOF: kept up to the data end with a warning */
	{
		struct cst_perf_reader_opts ro = {.sz = sizeof(ro), .log = &tlog};
		struct cst_perf_reader *r = NULL;
		struct cst_perf_record rec;
		size_t p = data_off;
		uint8_t *c = malloc(len);
		char cp[512];

		memcpy(c, b, len);
		while (cst_le32(c + p) != cst_perf_rec_auxtrace)
			p += cst_le16(c + p + 6);
		cst_put_le64(c + p + 8, 1ull << 40);
		path_of(cp, sizeof(cp), "auxsz.data");
		spit(cp, c, len);
		nmsgs = 0;
		CHECK_EQ_INT(cst_perf_reader_open(&r, cp, &ro), 0);
		while (r && cst_perf_reader_next(r, &rec) == 0)
			if (rec.type == cst_perf_rec_auxtrace)
				CHECK(rec.u.auxtrace.data_offset + rec.u.auxtrace.size <= len);
		CHECK(nmsgs > 0 && strstr(lastmsg, "AUXTRACE payload") != NULL);
		cst_perf_reader_free(r);
		free(c);
	}
	/* empty and missing files */
	path_of(path, sizeof(path), "empty.data");
	spit(path, b, 0);
	CHECK_EQ_INT(read_all(path, &err), -1);
	CHECK(err == -cste_format && strstr(lastmsg, "empty.data"));
	path_of(path, sizeof(path), "missing.data");
	CHECK_EQ_INT(read_all(path, &err), -1);
	CHECK_EQ_INT(err, -cste_not_found);
	free(b);
}

/* Random byte flips: no crash, no hang (run under ASan in the fuzz build too). */
static void test_flips(void)
{
	char path[512], cut[512];
	uint8_t *b, *c;
	size_t len;
	unsigned seed = 12345;

	path_of(path, sizeof(path), "flip-src.data");
	path_of(cut, sizeof(cut), "flip.data");
	write_sample(path, true);
	b = slurp(path, &len);
	if (!b)
		return;
	c = malloc(len);
	for (int i = 0; i < 400; i++) {
		int err;

		memcpy(c, b, len);
		for (int k = 0; k < 4; k++) {
			seed = seed * 1103515245u + 12345u;
			c[(seed >> 8) % len] ^= (uint8_t)(1u << ((seed >> 4) & 7));
		}
		spit(cut, c, len);
		(void)read_all(cut, &err);
		CHECK(err != -cste_internal);
	}
	free(c);
	free(b);
}

static void put_words(uint8_t *b, const uint64_t *w, size_t n)
{
	for (size_t i = 0; i < n; i++)
		cst_put_le64(b + i * 8, w[i]);
}

static void test_etm_info_versions(void)
{
	struct cst_perf_etm_info info;
	uint8_t b[64 * 8];

	/* version 0: ETMv4 block of 9 words, ETMv3 block of 6 */
	{
		uint64_t w[] = {0, (9ull << 32) | 2, 1, CST_PERF_ETMV4_MAGIC, 0, 1, 0x10, 0x28000ea1,
				0x4100f403, 0x488, 0, 0xcc, CST_PERF_ETMV3_MAGIC, 1, 0x1000, 0x12,
				0x344008f2, 0x410cf250};

		put_words(b, w, 18);
		CHECK_EQ_INT(cst_perf_etm_info_parse(&info, b, 18, log_capture()), 0);
		CHECK(info.snapshot && info.nr_cpu == 2);
		if (info.nr_cpu == 2) {
			CHECK_EQ_INT(info.cpus[0].trctraceidr, 0x10);
			CHECK_EQ_INT(info.cpus[0].trcauthstatus, 0xcc);
			CHECK(!info.cpus[0].has_ts_source);
			CHECK_EQ_INT(info.cpus[1].etmtraceidr, 0x12);
			CHECK_EQ_INT(info.cpus[1].etmidr, 0x410cf250);
		}
		cst_perf_etm_info_fini(&info);
		CHECK_EQ_INT(cst_perf_etm_info_parse(&info, b, 17, log_capture()), -cste_format);
	}
	/* version 2 with extra unknown params (newer perf) and an old 7-param ETMv4 */
	{
		uint64_t w[] = {2, (9ull << 32) | 2, 0, CST_PERF_ETMV4_MAGIC, 5, 10, 0x1, 0x20, 1, 2,
				3, 4, 5, 6, 0xaaaa, 0xbbbb, CST_PERF_ETMV4_MAGIC, 6, 7, 0x1, 0x22,
				1, 2, 3, 4, 5};

		put_words(b, w, 26);
		CHECK_EQ_INT(cst_perf_etm_info_parse(&info, b, 26, log_capture()), 0);
		if (info.nr_cpu == 2) {
			CHECK_EQ_INT(info.cpus[0].cpu, 5);
			CHECK_EQ_INT(info.cpus[0].trctraceidr, 0x20);
			CHECK_EQ_INT(info.cpus[0].ts_source, 6);
			CHECK_EQ_INT(info.cpus[0].nr_params, 10);
			CHECK_EQ_INT(info.cpus[1].cpu, 6);
			CHECK_EQ_INT(info.cpus[1].trctraceidr, 0x22);
			CHECK(!info.cpus[1].has_ts_source);
		}
		cst_perf_etm_info_fini(&info);
	}
	/* bad: version 3, unknown magic, nr_params past the end */
	{
		uint64_t w[] = {3, (9ull << 32) | 1, 0, CST_PERF_ETMV4_MAGIC, 0, 8, 0, 0, 0, 0, 0, 0, 0, 0};

		put_words(b, w, 14);
		CHECK_EQ_INT(cst_perf_etm_info_parse(&info, b, 14, log_capture()), -cste_unsupported);
		CHECK(strstr(log_captured(), "version 3") != NULL);
		w[0] = 1;
		w[3] = 0x6060606060606060ull;
		put_words(b, w, 14);
		CHECK_EQ_INT(cst_perf_etm_info_parse(&info, b, 14, log_capture()), -cste_unsupported);
		CHECK(strstr(log_captured(), "magic") != NULL);
		w[3] = CST_PERF_ETMV4_MAGIC;
		w[5] = 1000;
		put_words(b, w, 14);
		CHECK_EQ_INT(cst_perf_etm_info_parse(&info, b, 14, log_capture()), -cste_format);
		CHECK_EQ_INT(cst_perf_etm_info_parse(&info, b, 2, log_capture()), -cste_format);
		CHECK_EQ_INT(cst_perf_etm_info_parse(NULL, b, 2, log_capture()), -cste_invalid);
	}
}

/* The writer's AUXTRACE_INFO in versions 0, 1 and 2 reads back as written. */
static void test_etm_info_write_versions(void)
{
	struct cst_perf_reader_opts ro = {.sz = sizeof(ro), .log = &tlog};
	char path[512];

	path_of(path, sizeof(path), "ver.data");
	for (uint64_t ver = 0; ver <= 2; ver++) {
		struct cst_perf_writer *w = NULL;
		struct cst_perf_reader *r = NULL;
		struct cst_perf_etm_info info, back;
		struct cst_perf_etm_cpu cpus[4];

		fill_info(&info, cpus);
		info.version = ver;
		if (ver == 0)
			info.nr_cpu = 3; /* version 0 has no ETE layout */
		CHECK_EQ_INT(cst_perf_writer_open(&w, path, NULL), 0);
		if (!w)
			return;
		CHECK_EQ_INT(cst_perf_writer_etm_info(w, &info), 0);
		CHECK_EQ_INT(cst_perf_writer_finish(w), 0);
		cst_perf_writer_free(w);
		CHECK_EQ_INT(cst_perf_reader_open(&r, path, &ro), 0);
		CHECK_EQ_INT(cst_perf_reader_etm_info(r, &back), 0);
		CHECK_EQ_INT(back.version, ver);
		CHECK_EQ_INT(back.nr_cpu, info.nr_cpu);
		if (back.nr_cpu == info.nr_cpu) {
			CHECK_EQ_INT(back.cpus[0].trcidr1, 0x4100f403);
			CHECK_EQ_INT(back.cpus[0].trctraceidr, 0x10);
			CHECK_EQ_INT(back.cpus[1].etmccer, 0x344008f2);
			CHECK(back.cpus[2].is_ptm);
			CHECK_EQ_INT(back.cpus[0].has_ts_source, ver != 0);
		}
		cst_perf_etm_info_fini(&back);
		cst_perf_reader_free(r);
	}
	/* ETE cannot be written as version 0 */
	{
		struct cst_perf_writer *w = NULL;
		struct cst_perf_etm_info info;
		struct cst_perf_etm_cpu cpus[4];

		fill_info(&info, cpus);
		info.version = 0;
		CHECK_EQ_INT(cst_perf_writer_open(&w, path, NULL), 0);
		CHECK_EQ_INT(cst_perf_writer_etm_info(w, &info), -cste_invalid);
		cst_perf_writer_free(w);
	}
}

/* A new perf.data is 0600 whatever the umask, and the one it replaces is kept as
 * .old, as perf record does; a symlink in its place is moved, never written through. */
static void test_create_private(void)
{
	char path[512], old[512], victim[512];
	struct cst_perf_writer *w = NULL;
	struct stat st;
	mode_t mask = umask(0);
	FILE *f;
	char buf[16] = "";

	path_of(path, sizeof(path), "private.data");
	path_of(old, sizeof(old), "private.data.old");
	path_of(victim, sizeof(victim), "victim.txt");
	f = fopen(path, "w");
	if (f) {
		fputs("previous", f);
		fclose(f);
	}
	CHECK_EQ_INT(cst_perf_writer_open(&w, path, NULL), 0);
	CHECK_EQ_INT(cst_perf_writer_finish(w), 0);
	cst_perf_writer_free(w);
	CHECK(stat(path, &st) == 0 && (st.st_mode & 0777) == 0600);
	f = fopen(old, "r");
	CHECK(f && fgets(buf, sizeof(buf), f) && !strcmp(buf, "previous"));
	if (f)
		fclose(f);
	/* a symlink at the path: moved to .old, its target untouched */
	f = fopen(victim, "w");
	if (f) {
		fputs("victim", f);
		fclose(f);
	}
	unlink(path);
	CHECK(symlink(victim, path) == 0);
	w = NULL;
	CHECK_EQ_INT(cst_perf_writer_open(&w, path, NULL), 0);
	CHECK_EQ_INT(cst_perf_writer_finish(w), 0);
	cst_perf_writer_free(w);
	CHECK(lstat(path, &st) == 0 && S_ISREG(st.st_mode));
	CHECK(lstat(old, &st) == 0 && S_ISLNK(st.st_mode));
	f = fopen(victim, "r");
	CHECK(f && fgets(buf, sizeof(buf), f) && !strcmp(buf, "victim"));
	if (f)
		fclose(f);
	umask(mask);
}

static void test_null_args(void)
{
	struct cst_perf_reader *r = NULL;
	struct cst_perf_writer *w = NULL;
	struct cst_perf_record rec;

	CHECK_EQ_INT(cst_perf_reader_open(NULL, "x", NULL), -cste_invalid);
	CHECK_EQ_INT(cst_perf_reader_open(&r, NULL, NULL), -cste_invalid);
	CHECK_EQ_INT(cst_perf_reader_next(NULL, &rec), -cste_invalid);
	CHECK_EQ_INT(cst_perf_reader_nattrs(NULL), -cste_invalid);
	CHECK(cst_perf_reader_attr(NULL, 0) == NULL);
	CHECK(!cst_perf_reader_has_feature(NULL, 2));
	CHECK_EQ_INT(cst_perf_reader_rewind(NULL), -cste_invalid);
	cst_perf_reader_free(NULL);
	CHECK_EQ_INT(cst_perf_writer_open(NULL, "x", NULL), -cste_invalid);
	CHECK_EQ_INT(cst_perf_writer_open(&w, NULL, NULL), -cste_invalid);
	CHECK_EQ_INT(cst_perf_writer_aux(NULL, 0, 0, 0, NULL), -cste_invalid);
	CHECK_EQ_INT(cst_perf_writer_finish(NULL), -cste_invalid);
	CHECK_EQ_INT(cst_perf_writer_etm_info(NULL, NULL), -cste_invalid);
	cst_perf_writer_free(NULL);
}

/* TIME_CONV as perf applies it (tsc_to_perf_time): values worked by hand. */
static void test_time_conv(void)
{
	/* a 50 MHz counter: 20 ns a tick, in the kernel's mult/shift form */
	struct cst_perf_time_conv tc = {.time_shift = 24, .time_mult = 20u << 24, .time_zero = 1000};

	CHECK_EQ_INT(cst_perf_time_from_ticks(&tc, 0), 1000);
	CHECK_EQ_INT(cst_perf_time_from_ticks(&tc, 123456789), 1000 + 123456789ull * 20);
	/* the remainder below the shift counts: 1 tick is 20 ns, not 0 */
	CHECK_EQ_INT(cst_perf_time_from_ticks(&tc, 1), 1020);
	/* perf keeps 32 bits of the multiplier */
	tc.time_mult = (1ull << 32) + (20u << 24);
	CHECK_EQ_INT(cst_perf_time_from_ticks(&tc, 3), 1060);
	/* a short counter (cap_user_time_short): a 32-bit value that wrapped after
	 * time_cycles is put back above it */
	tc = (struct cst_perf_time_conv){.time_shift = 0, .time_mult = 1, .time_zero = 0,
					 .time_cycles = 0xfffffff0, .time_mask = 0xffffffff,
					 .cap_user_time_short = true};
	CHECK_EQ_INT(cst_perf_time_from_ticks(&tc, 0x10), 0x100000010ull);
	CHECK_EQ_INT(cst_perf_time_from_ticks(&tc, 0xfffffff8), 0xfffffff8ull);
}

int main(void)
{
	const char *base = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";

	snprintf(tmpdir, sizeof(tmpdir), "%s/cst-perfdata-XXXXXX", base);
	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return 1;
	}
	for (size_t i = 0; i < sizeof(trace_bytes); i++)
		trace_bytes[i] = (uint8_t)(i * 7 + 3);
	test_null_args();
	test_time_conv();
	test_create_private();
	test_etm_info_versions();
	test_etm_info_write_versions();
	test_round_trip();
	test_incomplete();
	test_truncation();
	test_bad_input();
	test_flips();
	if (!test_failures) {
		char cmd[600];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
		if (system(cmd)) {
		}
	}
	return test_done();
}
