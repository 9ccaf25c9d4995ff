/* End to end without hardware: the kernel model (kmodel.c, standing in for ring_buffer.c
 * and the ETF) emits real ETMv4 trace made by synth; capture writes perf.data; cstrace and perf decode it. */
#include "test.h"

#include <linux/perf_event.h>
#include <sys/mman.h>
#include <unistd.h>

#include "cstrace/capture.h"
#include "cstrace/perfdata.h"
#include "kmodel.h"

#define PID 0x2e3a /* the context ID in the sample trace (synth: PID_IN_CONTEXTIDR) */
#define ETM_ID 100
#define DUMMY_ID 101

static uint8_t *slurp(const char *path, uint64_t *len)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf = NULL;
	long n;

	if (!f)
		return NULL;
	if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) > 0 && fseek(f, 0, SEEK_SET) == 0) {
		buf = malloc((size_t)n);
		if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
			free(buf);
			buf = NULL;
		}
		*len = (uint64_t)n;
	}
	fclose(f);
	return buf;
}

static void to_perf_attr(struct cst_perf_attr *pa, const struct perf_event_attr *a)
{
	memset(pa, 0, sizeof(*pa));
	pa->type = a->type;
	pa->size = CST_PERF_ATTR_SIZE;
	pa->config = a->config;
	pa->sample_period = a->sample_period;
	pa->sample_type = a->sample_type;
	pa->flags = cst_le64((const uint8_t *)a + 40);
	pa->config2 = a->config2;
}

/* "instructions" figure of `cstrace decode --stats`, or -1. */
static long long cstrace_insns(const char *bin, const char *args)
{
	char cmd[2048], line[512];
	long long n = -1;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "%s decode --stats --format=none %s 2>&1", bin, args);
	p = popen(cmd, "r");
	if (!p)
		return -1;
	while (fgets(line, sizeof(line), p)) {
		char *s = strstr(line, " instructions");
		if (s) {
			while (s > line && s[-1] >= '0' && s[-1] <= '9')
				s--;
			n = atoll(s);
		}
	}
	pclose(p);
	return n;
}

/* Write the sample's trace through the model and capture (normal or snapshot
 * mode), then decode the file with cstrace and perf. */
static void run_mode(bool snapshot, bool per_thread, const char *bin, const char *dir, const char *mem,
		     const uint8_t *trace, uint64_t tlen, uint64_t mlen)
{
	char out[256], args[2048];

	/* The ETM of the sample (synth's Cortex-A53, device_1.ini). */
	struct cst_etm_pmu pmu = {.type = 0x2a, .ncpus = 1};
	/* Normal mode plays a kernel that allocates trace IDs: the metadata has the
	 * legacy guess, the real ID (0x10) comes in AUX_OUTPUT_HW_ID. */
	pmu.cpus[0] = (struct cst_etm_cpu){.cpu = 0, .kind = cst_etm_v4, .trcidr0 = 0x28000ea1,
					   .trcidr1 = 0x4100f403, .trcidr2 = 0x488,
					   .trcauthstatus = 0xcc, .trcconfigr = 0x41,
					   .traceid = snapshot ? 0x10 : 0x30};
	struct cst_etm_request req = {0};
	struct perf_event_attr ea, da;
	struct cst_perf_attr pa;
	struct cst_perf_writer_opts wo = {.sz = sizeof(wo)};
	struct cst_perf_writer *w = NULL;
	struct cst_perf_etm_info info;
	struct cst_perf_sample_id sid = {.pid = PID, .tid = PID, .time = 0, .id = DUMMY_ID,
					 .cpu = 0, .have_tid = true, .have_time = true,
					 .have_id = true, .have_cpu = true};
	uint64_t etm_id = ETM_ID, dummy_id = DUMMY_ID;

	snprintf(out, sizeof(out), "%s/capture-e2e-%s%s-%d.data",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", snapshot ? "snap" : "normal",
		 per_thread ? "-thread" : "", (int)getpid());
	CHECK_EQ_INT(cst_perf_writer_open(&w, out, &wo), 0);
	if (!w)
		return;
	cst_etm_attr_fill(&ea, sizeof(ea), &pmu, &req, true, false);
	cst_dummy_attr_fill(&da, sizeof(da), true, true, false);
	to_perf_attr(&pa, &ea);
	CHECK(cst_perf_writer_add_attr(w, &pa, &etm_id, 1) >= 0);
	to_perf_attr(&pa, &da);
	CHECK(cst_perf_writer_add_attr(w, &pa, &dummy_id, 1) >= 0);
	CHECK_EQ_INT(cst_etm_pmu_etm_info(&pmu, snapshot, &info), 0);
	CHECK_EQ_INT(cst_perf_writer_etm_info(w, &info), 0);
	cst_perf_etm_info_fini(&info);
	/* the sideband a dummy event would give for the program */
	CHECK_EQ_INT(cst_perf_writer_comm(w, true, PID, PID, "a64_loop", &sid), 0);
	CHECK_EQ_INT(cst_perf_writer_mmap2(w, CST_PERF_MISC_USER, PID, PID, 0x400000, mlen, 0,
					   PROT_READ | PROT_EXEC, MAP_PRIVATE, NULL, 0, mem, &sid),
		     0);

	/* the trace, through the model and the same ring and output code as production */
	struct kmodel_opts o = {.data_size = 1 << 16, .aux_size = 1 << 16, .sink_size = 4096,
				.pid = PID, .tid = PID, .cpu = 0, .id = ETM_ID, .overwrite = snapshot,
				.trace_id = snapshot ? 0 : 0x10};
	struct kmodel *m = kmodel_new(&o);
	struct cst_perf_out po;
	struct cst_ring_desc d = kmodel_desc(m);

	if (per_thread)
		d.cpu = UINT32_MAX; /* AUXTRACE cpu -1: the ring follows the thread */
	struct cst_ring_output ro;
	struct cst_ring *ring;
	struct cst_ring_stats st;

	kmodel_set_source(m, trace, tlen);
	cst_perf_out_init(&po, w, out, 4096, 0);
	ro = cst_perf_out_ring_output(&po);
	ring = cst_ring_alloc(&d, &ro, NULL);
	CHECK(ring != NULL);
	kmodel_sched_in(m);
	kmodel_run(m, tlen);
	kmodel_sched_out(m);
	if (snapshot)
		CHECK_EQ_INT(cst_ring_snapshot(ring), (int64_t)tlen);
	else
		CHECK(cst_ring_read(ring) > 0);
	cst_perf_writer_finished_round(w);
	cst_ring_get_stats(ring, &st);
	CHECK_EQ_INT(st.aux_bytes, tlen);
	CHECK_EQ_INT(st.truncated, 0);
	CHECK_EQ_INT(cst_perf_writer_finish(w), 0);
	cst_perf_writer_free(w);
	CHECK_EQ_INT(po.have_trace_id[0], !snapshot);
	CHECK_EQ_INT(cst_perf_etm_info_patch_ids(out, po.trace_id, po.have_trace_id,
						 CST_ETM_MAX_CPUS),
		     snapshot ? 0 : 1);
	if (!snapshot) {
		struct cst_perf_reader_opts rdo = {.sz = sizeof(rdo)};
		struct cst_perf_reader *rd = NULL;
		struct cst_perf_etm_info got;

		CHECK_EQ_INT(cst_perf_reader_open(&rd, out, &rdo), 0);
		if (rd && cst_perf_reader_etm_info(rd, &got) == 0) {
			CHECK_EQ_INT(got.cpus[0].trctraceidr, 0x10);
			CHECK_EQ_INT(got.cpus[0].trcidr1, 0x4100f403); /* the rest untouched */
			cst_perf_etm_info_fini(&got);
		} else {
			CHECK(0);
		}
		cst_perf_reader_free(rd);
	}
	cst_ring_free(ring);
	kmodel_free(m);

	/* cstrace decodes the file as it decodes the snapshot the trace came from */
	long long want = cstrace_insns(bin, dir);
	snprintf(args, sizeof(args), "%s", out);
	long long got = cstrace_insns(bin, args);
	printf("%s mode%s: the snapshot directory decodes to %lld instructions, the perf.data "
	       "capture wrote to %lld\n",
	       snapshot ? "snapshot" : "normal", per_thread ? " (per-thread)" : "", want, got);
	CHECK(want > 0);
	CHECK_EQ_INT(got, want);

	/* and so does Linux perf (with OpenCSD underneath) */
	if (!access("/usr/bin/perf", X_OK)) {
		char cmd[1536], line[128];
		long long n = 0;
		FILE *p;

		snprintf(cmd, sizeof(cmd), "perf script -i %s --itrace=i1i -F ip 2>/dev/null", out);
		p = popen(cmd, "r");
		while (p && fgets(line, sizeof(line), p))
			n++;
		if (p)
			pclose(p);
		printf("perf script --itrace=i1i: %lld instructions\n", n);
		CHECK_EQ_INT(n, want);
	}
	if (!getenv("CSTRACE_KEEP_FILES"))
		unlink(out);
}

int main(void)
{
	const char *src = getenv("CSTRACE_SOURCE_DIR"), *bd = getenv("CSTRACE_BUILD_DIR");
	char dir[1024], path[1100], mem[1100], bin[1100];
	uint64_t tlen = 0, mlen = 0;
	uint8_t *trace, *code;

	if (!src || !bd)
		TEST_SKIP("CSTRACE_SOURCE_DIR / CSTRACE_BUILD_DIR not set");
	snprintf(dir, sizeof(dir), "%s/testdata/sample/a64-loop", src);
	snprintf(path, sizeof(path), "%s/cstrace.bin", dir);
	snprintf(mem, sizeof(mem), "%s/mem_0.bin", dir);
	snprintf(bin, sizeof(bin), "%s/cstrace", bd);
	trace = slurp(path, &tlen);
	code = slurp(mem, &mlen);
	if (!trace || !code)
		TEST_SKIP("the a64-loop sample is missing");
	if (access(bin, X_OK))
		TEST_SKIP("%s is not built", bin);
	CHECK(tlen % 16 == 0); /* whole frames, as an ETF stores them */

	run_mode(false, false, bin, dir, mem, trace, tlen, mlen);
	run_mode(true, false, bin, dir, mem, trace, tlen, mlen);
	run_mode(false, true, bin, dir, mem, trace, tlen, mlen);
	free(trace);
	free(code);
	return test_done();
}
