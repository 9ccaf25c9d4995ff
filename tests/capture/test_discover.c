/* cs_etm discovery, event strings, attrs and error explanations against the boards
 * stage's fixture trees (Juno r1: ETMv4, STM32MP157: ETMv3), read file by file. */
#include "test.h"

#include <errno.h>
#include <linux/perf_event.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cstrace/boards.h"
#include "cstrace/capture.h"
#include "cstrace/source.h"

static char tmp[256];

static int make_fixture(const char *board, const char *name, unsigned faults, char *dir, size_t n)
{
	struct cst_fixture_opts fo = {.sz = sizeof(fo), .faults = faults};
	struct cst_board *b = NULL;
	int err = cst_board_find(&b, NULL, board, NULL);

	if (err < 0)
		return err;
	snprintf(dir, n, "%s/%s", tmp, name);
	err = cst_board_fixture_write(b, dir, &fo);
	cst_board_free(b);
	return err;
}

/* A number straight from a fixture file, parsed here, not by capture. */
static uint64_t file_u64(const char *dir, const char *rel)
{
	char path[1024], buf[64] = "";
	FILE *f;

	snprintf(path, sizeof(path), "%s%s", dir, rel);
	f = fopen(path, "r");
	if (!f)
		return ~0ULL;
	if (!fgets(buf, sizeof(buf), f))
		buf[0] = 0;
	fclose(f);
	return strtoull(buf, NULL, 0);
}

static void test_juno(void)
{
	char dir[512];
	struct cst_etm_pmu pmu;
	struct cst_etm_request req;
	struct perf_event_attr a;
	const char *pmudir = "/sys/bus/event_source/devices/cs_etm";
	char rel[256];

	CHECK_EQ_INT(make_fixture("juno-r1", "juno", 0, dir, sizeof(dir)), 0);
	CHECK_EQ_INT(cst_etm_pmu_discover(&pmu, dir, log_capture()), 0);
	snprintf(rel, sizeof(rel), "%s/type", pmudir);
	CHECK_EQ_INT(pmu.type, file_u64(dir, rel));
	CHECK_EQ_INT(pmu.ncpus, 6);
	CHECK_EQ_INT(pmu.nsinks, 3);
	for (int i = 0; i < pmu.nsinks; i++) {
		snprintf(rel, sizeof(rel), "%s/sinks/%s", pmudir, pmu.sinks[i]);
		CHECK_EQ_INT(pmu.sink_hash[i], file_u64(dir, rel));
	}
	for (int i = 0; i < pmu.ncpus; i++) {
		const struct cst_etm_cpu *c = &pmu.cpus[i];

		CHECK_EQ_INT(c->cpu, i);
		CHECK_EQ_INT(c->kind, cst_etm_v4);
		CHECK_EQ_INT(c->traceid, 0x10 + 2 * i);
		snprintf(rel, sizeof(rel), "%s/cpu%d/trcidr/trcidr4", pmudir, i);
		CHECK_EQ_INT(c->trcidr4, file_u64(dir, rel));
		CHECK_EQ_INT(cst_trcidr4_addr_pairs(c->trcidr4), 4);
		snprintf(rel, sizeof(rel), "%s/cpu%d/trcidr/trcidr0", pmudir, i);
		CHECK_EQ_INT(c->trcidr0, file_u64(dir, rel));
		snprintf(rel, sizeof(rel), "%s/cpu%d/trcidr/trcidr1", pmudir, i);
		CHECK_EQ_INT(c->trcidr1, file_u64(dir, rel));
		snprintf(rel, sizeof(rel), "%s/cpu%d/mgmt/trcauthstatus", pmudir, i);
		CHECK_EQ_INT(c->trcauthstatus, file_u64(dir, rel));
		/* "-1": the driver does not know the timestamp source */
		snprintf(rel, sizeof(rel), "%s/cpu%d/ts_source", pmudir, i);
		if ((int64_t)file_u64(dir, rel) < 0)
			CHECK(!c->has_ts_source);
		else
			CHECK(c->has_ts_source && c->ts_source == file_u64(dir, rel));
	}
	int f = cst_etm_pmu_format(&pmu, "cycacc");
	CHECK(f >= 0);
	if (f >= 0) {
		CHECK_EQ_INT(pmu.formats[f].word, 0);
		CHECK_EQ_INT(pmu.formats[f].lo, 12);
	}
	CHECK_EQ_INT(cst_etm_pmu_format(&pmu, "nosuch"), -cste_not_found);

	/* the event string of the brief */
	CHECK_EQ_INT(cst_etm_request_parse(&req, &pmu,
					   "cs_etm/@tmc_etr0,timestamp,cycacc,contextid,retstack,"
					   "branch_broadcast/", log_capture()),
		     0);
	snprintf(rel, sizeof(rel), "%s/sinks/tmc_etr0", pmudir);
	CHECK_EQ_INT(req.config[2] & 0xffffffffu, file_u64(dir, rel));
	CHECK_EQ_INT(req.config[0], (1ULL << 8) | (1ULL << 12) | (1ULL << 14) | (1ULL << 28) |
					    (1ULL << 29));
	CHECK_EQ_STR(req.sink, "tmc_etr0");
	cst_etm_pmu_apply_config(&pmu, &req);
	CHECK_EQ_INT(pmu.cpus[0].trcconfigr,
		     (1u << 3) | (1u << 4) | (1u << 6) | (1u << 11) | (1u << 12));
	CHECK_EQ_INT(cst_etm_attr_fill(&a, sizeof(a), &pmu, &req, true, false), 0);
	CHECK_EQ_INT(a.type, pmu.type);
	CHECK_EQ_INT(a.config, req.config[0]);
	CHECK_EQ_INT(a.config2, req.config[2]);
	CHECK_EQ_INT(a.sample_period, 1);
	CHECK(a.sample_id_all && a.disabled && a.enable_on_exec);
	CHECK_EQ_INT(a.sample_type, cst_capture_sample_type());
	CHECK_EQ_INT(cst_dummy_attr_fill(&a, sizeof(a), true, true, false), 0);
	CHECK(a.type == PERF_TYPE_SOFTWARE && a.config == PERF_COUNT_SW_DUMMY);
	CHECK(a.mmap2 && a.comm && a.comm_exec && a.task && a.context_switch && a.exclude_kernel);
	CHECK(!a.inherit);

	/* values and modifiers */
	CHECK_EQ_INT(cst_etm_request_parse(&req, &pmu, "cs_etm/cycacc=0,timestamp=1/u", log_capture()),
		     0);
	CHECK_EQ_INT(req.config[0], 1ULL << 28);
	CHECK(req.user_only);
	/* errors say what exists */
	CHECK_EQ_INT(cst_etm_request_parse(&req, &pmu, "cs_etm/@tmc_nope/", log_capture()),
		     -cste_not_found);
	CHECK(strstr(log_captured(), "tmc_nope") && strstr(log_captured(), "tmc_etf0") && strstr(log_captured(), "tmc_etf1") &&
	      strstr(log_captured(), "tmc_etr0"));
	CHECK_EQ_INT(cst_etm_request_parse(&req, &pmu, "cs_etm/fast/", log_capture()),
		     -cste_format);
	CHECK(strstr(log_captured(), "'fast'") && strstr(log_captured(), "cycacc") && strstr(log_captured(), "retstack"));
	CHECK_EQ_INT(cst_etm_request_parse(&req, &pmu, "intel_pt//", log_capture()),
		     -cste_format);
	CHECK_EQ_INT(cst_etm_request_parse(&req, &pmu, "cs_etm/cycacc=2/", log_capture()),
		     -cste_format);
	CHECK_EQ_INT(cst_etm_request_parse(NULL, &pmu, "cs_etm//", log_capture()),
		     -cste_invalid);
}

static void test_stm32(void)
{
	char dir[512], rel[256];
	struct cst_etm_pmu pmu;
	struct cst_etm_request req;

	CHECK_EQ_INT(make_fixture("stm32mp157", "stm32", 0, dir, sizeof(dir)), 0);
	CHECK_EQ_INT(cst_etm_pmu_discover(&pmu, dir, log_capture()), 0);
	CHECK_EQ_INT(pmu.ncpus, 2);
	CHECK_EQ_INT(pmu.nsinks, 1);
	CHECK_EQ_STR(pmu.sinks[0], "tmc_etf0");
	for (int i = 0; i < pmu.ncpus; i++) {
		CHECK_EQ_INT(pmu.cpus[i].kind, cst_etm_v3);
		CHECK(!pmu.cpus[i].is_ptm);
		snprintf(rel, sizeof(rel), "/sys/bus/event_source/devices/cs_etm/cpu%d/mgmt/etmidr", i);
		CHECK_EQ_INT(pmu.cpus[i].etmidr, file_u64(dir, rel));
		snprintf(rel, sizeof(rel), "/sys/bus/event_source/devices/cs_etm/cpu%d/mgmt/etmccer", i);
		CHECK_EQ_INT(pmu.cpus[i].etmccer, file_u64(dir, rel));
	}
	/* the ETMv3 driver takes only cycacc, timestamp and retstack */
	CHECK_EQ_INT(cst_etm_request_parse(&req, &pmu, "cs_etm/@tmc_etf0,contextid/", log_capture()),
		     -cste_format);
	CHECK(strstr(log_captured(), "ETMv3") != NULL);
	CHECK_EQ_INT(cst_etm_request_parse(&req, &pmu, "cs_etm/@tmc_etf0,timestamp,cycacc/", log_capture()),
		     0);
	cst_etm_pmu_apply_config(&pmu, &req);
	CHECK_EQ_INT(pmu.cpus[1].etmcr, (1u << 12) | (1u << 28));
}

static void test_faults(void)
{
	char dir[512], msg[1024];
	struct cst_etm_pmu pmu;

	CHECK_EQ_INT(make_fixture("stm32mp157", "nopmu", cst_fault_no_pmu, dir, sizeof(dir)), 0);
	CHECK_EQ_INT(cst_etm_pmu_discover(&pmu, dir, log_capture()), -cste_not_found);
	CHECK(strstr(log_captured(), "CONFIG_CORESIGHT") && strstr(log_captured(), "CONFIG_CORESIGHT_SOURCE_ETM3X") &&
	      strstr(log_captured(), "--sysfs"));
	CHECK_EQ_INT(cst_etm_pmu_discover(NULL, dir, log_capture()), -cste_invalid);

	CHECK_EQ_INT(make_fixture("juno-r1", "paranoid", cst_fault_paranoid, dir, sizeof(dir)), 0);
	cst_capture_explain_errno(EACCES, dir, false, 0, 1, msg, sizeof(msg));
	CHECK(strstr(msg, "perf_event_paranoid = 3") != NULL);
	CHECK(strstr(msg, "sysctl -w kernel.perf_event_paranoid=") != NULL);
	cst_capture_explain_errno(EPERM, dir, true, 0, 1, msg, sizeof(msg));
	CHECK(strstr(msg, "= 3") && strstr(msg, "-a, -C") && strstr(msg, "CAP_PERFMON"));

	cst_capture_explain_errno(ENOMEM, dir, false, 64ULL << 20, 4, msg, sizeof(msg));
	CHECK(strstr(msg, "65536 KiB") && strstr(msg, "perf_event_mlock_kb") &&
	      strstr(msg, "ulimit -l"));
	/* the size suggested is smaller than the one that failed */
	const char *m = strstr(msg, "-m ");
	CHECK(m != NULL);
	if (m)
		CHECK(strtoull(m + 3, NULL, 10) < (64ULL << 20) / (uint64_t)sysconf(_SC_PAGESIZE));
	cst_capture_explain_errno(EPERM, dir, false, 1ULL << 40, 1, msg, sizeof(msg));
	CHECK(strstr(msg, "locked-memory limit") != NULL);
	cst_capture_explain_errno(EBUSY, dir, false, 0, 1, msg, sizeof(msg));
	CHECK(strstr(msg, "enable_sink") != NULL);
}

/* The trigger's uprobe event, field by field as struct perf_event_attr lays it out
 * (the live check against the kernel's uprobe PMU is in record_live.sh). */
static void test_uprobe_attr(void)
{
	struct perf_event_attr a;
	const char *path = "/usr/bin/prog";
	uint8_t raw[PERF_ATTR_SIZE_VER7];

	CHECK_EQ_INT(cst_uprobe_attr_fill(&a, sizeof(a), 9, path, 0x7c0, 3, true, false), 0);
	CHECK_EQ_INT(a.type, 9);
	CHECK_EQ_INT(a.size, PERF_ATTR_SIZE_VER7);
	CHECK_EQ_INT(a.config, 0);  /* entry, not return */
	CHECK(a.config1 == (uint64_t)(uintptr_t)path);  /* uprobe_path */
	CHECK_EQ_INT(a.config2, 0x7c0);                 /* probe_offset */
	CHECK_EQ_INT(a.sample_period, 3);
	CHECK_EQ_INT(a.wakeup_events, 1);
	CHECK_EQ_INT(a.sample_type, cst_capture_sample_type());
	CHECK(a.disabled && a.enable_on_exec && a.sample_id_all && !a.inherit);
	CHECK_EQ_INT(a.__reserved_3, 0);
	/* aux_pause is bit 1 of the word after aux_sample_size (aux_action, 6.13) */
	CHECK_EQ_INT(cst_uprobe_attr_fill(raw, sizeof(raw), 9, path, 0x7c0, 0, false, true), 0);
	CHECK_EQ_INT(cst_le32(raw + 116), 2);
	CHECK_EQ_INT(cst_le64(raw + 16), 1); /* sample_period: 0 means the first entry */
	CHECK_EQ_INT(cst_uprobe_attr_fill(raw, 64, 9, path, 0, 1, false, false), -cste_invalid);
}

int main(void)
{
	snprintf(tmp, sizeof(tmp), "%s/capture-discover-%d",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", (int)getpid());
	if (mkdir(tmp, 0755))
		TEST_SKIP("cannot create %s", tmp);
	test_juno();
	test_stm32();
	test_faults();
	test_uprobe_attr();
	char cmd[512];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp);
	if (system(cmd))
		fprintf(stderr, "could not remove %s\n", tmp);
	return test_done();
}
