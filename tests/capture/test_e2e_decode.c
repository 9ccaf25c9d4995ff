/* End to end without hardware: the kernel model (kmodel.c, standing in for ring_buffer.c
 * and the ETF) emits real ETMv4 trace made by synth; capture writes perf.data; cstrace and perf decode it. */
#include "test.h"

#include <linux/perf_event.h>
#include <sys/mman.h>
#include <unistd.h>

#include "cstrace/capture.h"
#include "cstrace/decode.h"
#include "cstrace/perfdata.h"
#include "kmodel.h"

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

/* One recording to fake: which ETM, which trace, which program. */
struct e2e_case {
	const char *name;
	bool snapshot, per_thread;
	struct cst_etm_cpu etm; /* as the metadata has it */
	uint8_t hw_id;          /* != 0: the kernel reports this trace ID (dynamic IDs) */
	uint32_t pid;           /* the context ID in the trace */
	const char *dir;        /* the snapshot the trace comes from */
	const char *mem;        /* the program's code and where it is mapped */
	uint64_t mem_addr, mem_len;
	const uint8_t *trace;
	uint64_t tlen;
};

/* Write the case's trace through the model and capture, then decode the file
 * with cstrace and perf and compare with the source snapshot. */
static void run_case(const struct e2e_case *c, const char *bin)
{
	char out[256], args[2048];
	struct cst_etm_pmu pmu = {.type = 0x2a, .ncpus = 1};
	struct cst_etm_request req = {0};
	struct perf_event_attr ea, da;
	struct cst_perf_attr pa;
	struct cst_perf_writer_opts wo = {.sz = sizeof(wo)};
	struct cst_perf_writer *w = NULL;
	struct cst_perf_etm_info info;
	struct cst_perf_sample_id sid = {.pid = c->pid, .tid = c->pid, .time = 0, .id = DUMMY_ID,
					 .cpu = 0, .have_tid = true, .have_time = true,
					 .have_id = true, .have_cpu = true};
	uint64_t etm_id = ETM_ID, dummy_id = DUMMY_ID;

	pmu.cpus[0] = c->etm;
	snprintf(out, sizeof(out), "%s/capture-e2e-%s-%d.data",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", c->name, (int)getpid());
	CHECK_EQ_INT(cst_perf_writer_open(&w, out, &wo), 0);
	if (!w)
		return;
	cst_etm_attr_fill(&ea, sizeof(ea), &pmu, &req, true, false);
	cst_dummy_attr_fill(&da, sizeof(da), true, true, false);
	to_perf_attr(&pa, &ea);
	CHECK(cst_perf_writer_add_attr(w, &pa, &etm_id, 1) >= 0);
	to_perf_attr(&pa, &da);
	CHECK(cst_perf_writer_add_attr(w, &pa, &dummy_id, 1) >= 0);
	CHECK_EQ_INT(cst_etm_pmu_etm_info(&pmu, c->snapshot, &info), 0);
	CHECK_EQ_INT(cst_perf_writer_etm_info(w, &info), 0);
	cst_perf_etm_info_fini(&info);
	/* the sideband a dummy event would give for the program */
	CHECK_EQ_INT(cst_perf_writer_comm(w, true, c->pid, c->pid, "prog", &sid), 0);
	CHECK_EQ_INT(cst_perf_writer_mmap2(w, CST_PERF_MISC_USER, c->pid, c->pid, c->mem_addr,
					   c->mem_len, 0, PROT_READ | PROT_EXEC, MAP_PRIVATE, NULL,
					   0, c->mem, &sid),
		     0);

	/* the trace, through the model and the same ring and output code as production */
	struct kmodel_opts o = {.data_size = 1 << 16, .aux_size = 1 << 16, .sink_size = 4096,
				.pid = c->pid, .tid = c->pid, .cpu = 0, .id = ETM_ID,
				.overwrite = c->snapshot, .trace_id = c->hw_id};
	struct kmodel *m = kmodel_new(&o);
	struct cst_perf_out po;
	struct cst_ring_desc d = kmodel_desc(m);
	struct cst_ring_output ro;
	struct cst_ring *ring;
	struct cst_ring_stats st;

	if (c->per_thread)
		d.cpu = UINT32_MAX; /* AUXTRACE cpu -1: the ring follows the thread */
	kmodel_set_source(m, c->trace, c->tlen);
	cst_perf_out_init(&po, w, out, 4096, 0);
	ro = cst_perf_out_ring_output(&po);
	CHECK_EQ_INT(cst_ring_alloc(&ring, &d, &ro), 0);
	kmodel_sched_in(m);
	kmodel_run(m, c->tlen);
	kmodel_sched_out(m);
	if (c->snapshot)
		CHECK_EQ_INT(cst_ring_snapshot(ring), (int64_t)c->tlen);
	else
		CHECK(cst_ring_read(ring) > 0);
	cst_perf_writer_finished_round(w);
	cst_ring_get_stats(ring, &st);
	CHECK_EQ_INT(st.aux_bytes, c->tlen);
	CHECK_EQ_INT(st.truncated, 0);
	CHECK_EQ_INT(cst_perf_writer_finish(w), 0);
	cst_perf_writer_free(w);
	CHECK_EQ_INT(po.have_trace_id[0], c->hw_id != 0);
	CHECK_EQ_INT(cst_perf_etm_info_patch_ids(out, po.trace_id, po.have_trace_id,
						 CST_ETM_MAX_CPUS),
		     c->hw_id && c->hw_id != c->etm.traceid ? 1 : 0);
	if (c->hw_id) {
		struct cst_perf_reader_opts rdo = {.sz = sizeof(rdo)};
		struct cst_perf_reader *rd = NULL;
		struct cst_perf_etm_info got;

		CHECK_EQ_INT(cst_perf_reader_open(&rd, out, &rdo), 0);
		if (rd && cst_perf_reader_etm_info(rd, &got) == 0) {
			bool v3 = got.cpus[0].magic == CST_PERF_ETMV3_MAGIC;

			CHECK_EQ_INT(v3 ? got.cpus[0].etmtraceidr : got.cpus[0].trctraceidr,
				     c->hw_id);
			/* the rest untouched */
			CHECK_EQ_INT(v3 ? got.cpus[0].etmidr : got.cpus[0].trcidr1,
				     v3 ? c->etm.etmidr : c->etm.trcidr1);
			cst_perf_etm_info_fini(&got);
		} else {
			CHECK(0);
		}
		cst_perf_reader_free(rd);
	}
	cst_ring_free(ring);
	kmodel_free(m);

	/* cstrace decodes the file as it decodes the snapshot the trace came from */
	long long want = cstrace_insns(bin, c->dir);
	snprintf(args, sizeof(args), "%s", out);
	long long got = cstrace_insns(bin, args);
	printf("%s: the snapshot decodes to %lld instructions, the perf.data capture wrote to "
	       "%lld\n",
	       c->name, want, got);
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
		printf("%s: perf script --itrace=i1i: %lld instructions\n", c->name, n);
		CHECK_EQ_INT(n, want);
	}
	if (!getenv("CSTRACE_KEEP_FILES"))
		unlink(out);
}

/* A register value "NAME(0x...)=0x..." from a snapshot device file. */
static uint32_t ini_reg(const char *path, const char *name)
{
	char line[256];
	uint32_t v = 0;
	size_t n = strlen(name);
	FILE *f = fopen(path, "r");

	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, name, n) && line[n] == '(') {
			char *eq = strchr(line, '=');
			if (eq)
				v = (uint32_t)strtoul(eq + 1, NULL, 0);
		}
	if (f)
		fclose(f);
	return v;
}

/* ETMv3.5 (the STM32MP157's Cortex-A7): synth traces a small A32 program under
 * qemu-arm; the context ID it records is QEMU's pid, read back from the decode. */
static void test_etmv3(const char *bin)
{
	char tmp[256], cmd[8192], path[512], mem[512], line[256];
	uint64_t tlen = 0, mlen = 0;
	uint8_t *trace;
	uint32_t ctxid = 0;
	FILE *f;

	if (system("command -v arm-linux-gnueabihf-gcc >/dev/null && command -v qemu-arm "
		   ">/dev/null")) {
		printf("note: no arm-linux-gnueabihf-gcc or qemu-arm: the ETMv3 case is skipped\n");
		return;
	}
	snprintf(tmp, sizeof(tmp), "%s/capture-e2e-v3-%d",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", (int)getpid());
	snprintf(cmd, sizeof(cmd),
		 "mkdir -p %s && printf '%%s\\n' 'static volatile unsigned sink;' "
		 "'void _start(void) { for (unsigned i = 0; i < 50; i++) for (unsigned j = 0; "
		 "j < 7; j++) sink += i ^ j; __asm__ volatile(\"mov r0, #0\\n mov r7, #1\\n "
		 "svc #0\"); for (;;); }' >%s/a32.c && "
		 "arm-linux-gnueabihf-gcc -O1 -static -nostdlib -o %s/a32 %s/a32.c && "
		 "%s synth --arch arm --core cortex-a7 -o %s/snap -- %s/a32 >/dev/null 2>&1",
		 tmp, tmp, tmp, tmp, bin, tmp, tmp);
	CHECK_EQ_INT(system(cmd), 0);
	snprintf(path, sizeof(path), "%s/snap/cstrace.bin", tmp);
	snprintf(mem, sizeof(mem), "%s/snap/mem_0.bin", tmp);
	trace = slurp(path, &tlen);
	free(slurp(mem, &mlen));
	CHECK(trace != NULL && mlen > 0);
	snprintf(cmd, sizeof(cmd), "%s decode %s/snap 2>/dev/null", bin, tmp);
	f = popen(cmd, "r");
	while (f && fgets(line, sizeof(line), f)) {
		char *x = strstr(line, "ctxid=");
		if (x && !ctxid)
			ctxid = (uint32_t)strtoul(x + 6, NULL, 0);
	}
	if (f)
		pclose(f);
	CHECK(ctxid != 0);
	if (trace && ctxid) {
		char dev[512], snapdir[512];
		struct e2e_case c = {.name = "etmv3-normal", .pid = ctxid, .dir = snapdir, .mem = mem,
				     .mem_addr = 0x10000, .mem_len = mlen, .trace = trace,
				     .tlen = tlen, .hw_id = 0x10};

		snprintf(snapdir, sizeof(snapdir), "%s/snap", tmp);
		snprintf(dev, sizeof(dev), "%s/snap/device_1.ini", tmp);
		c.etm = (struct cst_etm_cpu){.cpu = 0, .kind = cst_etm_v3,
					     .etmidr = ini_reg(dev, "ETMIDR"),
					     .etmccer = ini_reg(dev, "ETMCCER"),
					     .etmcr = ini_reg(dev, "ETMCR"), .traceid = 0x10};
		CHECK_EQ_INT(ini_reg(dev, "ETMTRACEIDR"), 0x10);
		run_case(&c, bin);
		c.name = "etmv3-snapshot";
		c.snapshot = true;
		c.hw_id = 0;
		run_case(&c, bin);
	}
	free(trace);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", tmp);
	if (system(cmd))
		printf("note: could not remove %s\n", tmp);
}

/* The sample's ETM programming and the context ID its trace carries (synth writes
 * the traced process's pid there, as PID_IN_CONTEXTIDR does): both are read from
 * the sample, which is regenerated with whatever pid QEMU ran under. */
static int first_context(void *ctx, const struct cst_elem *e)
{
	if (e->type != cst_elem_pe_context || !e->ctx.ctxid_valid)
		return 0;
	*(int32_t *)ctx = (int32_t)e->ctx.context_id;
	return 1;
}

static int sample_info(const char *dir, int32_t *pid, uint32_t *trcconfigr)
{
	struct cst_trace *t = NULL;
	struct cst_decoder *d = NULL;
	int ret = -1;

	*pid = -1;
	if (cst_trace_alloc(&t) == 0 && cst_trace_load_snapshot(t, dir, NULL) == 0 &&
	    cst_trace_nsources(t) > 0 && cst_decoder_alloc(&d, t, 0, NULL) == 0) {
		*trcconfigr = cst_trace_source(t, 0)->regs.etmv4.trcconfigr;
		cst_decoder_set_elem_cb(d, first_context, pid);
		cst_decoder_run(d);
		ret = *pid >= 0 ? 0 : -1;
	}
	cst_decoder_free(d);
	cst_trace_free(t);
	return ret;
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
	/* $CSTRACE: ctest's way to start cstrace (under the emulator on a cross build) */
	if (getenv("CSTRACE"))
		snprintf(bin, sizeof(bin), "%s", getenv("CSTRACE"));
	else
		snprintf(bin, sizeof(bin), "%s/cstrace", bd);
	trace = slurp(path, &tlen);
	code = slurp(mem, &mlen);
	if (!trace || !code)
		TEST_SKIP("the a64-loop sample is missing");
	if (access(bin, X_OK))
		TEST_SKIP("%s is not built", bin);
	CHECK(tlen % 16 == 0); /* whole frames, as an ETF stores them */

	int32_t pid;
	uint32_t configr = 0;

	if (sample_info(dir, &pid, &configr) < 0)
		TEST_SKIP("the a64-loop sample has no context ID to attribute its trace by");
	/* The ETM of the sample: synth's Cortex-A53 (device_1.ini). */
	const struct cst_etm_cpu a53 = {.cpu = 0, .kind = cst_etm_v4, .trcidr0 = 0x28000ea1,
					.trcidr1 = 0x4100f403, .trcidr2 = 0x488,
					.trcauthstatus = 0xcc, .trcconfigr = configr, .traceid = 0x10};
	struct e2e_case c = {.name = "etmv4-normal", .etm = a53, .pid = pid, .dir = dir,
			     .mem = mem, .mem_addr = 0x400000, .mem_len = mlen, .trace = trace,
			     .tlen = tlen};

	/* A kernel that allocates trace IDs: the metadata has the legacy guess,
	 * the real ID (0x10) comes in AUX_OUTPUT_HW_ID and must end up in it. */
	c.etm.traceid = 0x30;
	c.hw_id = 0x10;
	run_case(&c, bin);
	c.name = "etmv4-snapshot";
	c.etm.traceid = 0x10;
	c.hw_id = 0;
	c.snapshot = true;
	run_case(&c, bin);
	c.name = "etmv4-per-thread";
	c.snapshot = false;
	c.per_thread = true;
	run_case(&c, bin);
	test_etmv3(bin);
	free(trace);
	free(code);
	return test_done();
}
