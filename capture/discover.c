/* cs_etm discovery: the PMU type, its format terms, the sinks perf can use and the
 * ETM registers of every CPU, all read through the system root for the metadata. */
#include "cstrace/capture.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cstrace/source.h"
#include "root.h"

#define PMU_DIR "/sys/bus/event_source/devices/cs_etm"

static int parse_format(struct cst_pmu_format *f, const char *name, const char *text)
{
	static const char *const words[] = {"config", "config1", "config2", "config3"};
	char w[16];
	int lo, hi, n;

	n = sscanf(text, "%15[a-z0-9]:%d-%d", w, &lo, &hi);
	if (n < 2)
		return -cste_format;
	if (n == 2)
		hi = lo;
	f->word = -1;
	for (int i = 0; i < 4; i++)
		if (!strcmp(w, words[i]))
			f->word = i;
	if (f->word < 0 || lo < 0 || hi > 63 || hi < lo)
		return -cste_format;
	snprintf(f->name, sizeof(f->name), "%s", name);
	f->lo = lo;
	f->hi = hi;
	return 0;
}

struct walk {
	struct cst_etm_pmu *pmu;
	const char *root;
	int err;
	char bad[512];
};

static int on_format(void *ctx, const char *name)
{
	struct walk *w = ctx;
	char path[512], text[64];

	if (w->pmu->nformats >= (int)(sizeof(w->pmu->formats) / sizeof(w->pmu->formats[0])))
		return 0;
	snprintf(path, sizeof(path), PMU_DIR "/format/%s", name);
	if (cap_read(w->root, path, text, sizeof(text)) < 0)
		return 0;
	if (parse_format(&w->pmu->formats[w->pmu->nformats], name, text) == 0)
		w->pmu->nformats++;
	return 0;
}

static int on_sink(void *ctx, const char *name)
{
	struct walk *w = ctx;
	struct cst_etm_pmu *pmu = w->pmu;
	char path[512];
	uint64_t v;

	if (pmu->nsinks >= CST_ETM_MAX_SINKS)
		return 0;
	snprintf(path, sizeof(path), PMU_DIR "/sinks/%s", name);
	if (cap_read_u64(w->root, path, &v) < 0) {
		snprintf(w->bad, sizeof(w->bad), "%s", path);
		w->err = -cste_format;
		return 0;
	}
	snprintf(pmu->sinks[pmu->nsinks], sizeof(pmu->sinks[0]), "%s", name);
	pmu->sink_hash[pmu->nsinks++] = (uint32_t)v;
	return 0;
}

/* Read a register file of the ETM behind cpuN; missing optional files leave 0. */
/* ID register @name of CPU @cpu's ETM, from the file the source table names (perf
 * links cs_etm/cpuN to the ETM's sysfs directory). */
static int reg(struct walk *w, int cpu, enum cst_protocol protocol, const char *name,
	       uint32_t *out, bool required)
{
	const struct cst_source_reg *r = cst_source_reg_find(protocol, name);
	char path[512];
	uint64_t v;
	int err;

	if (!r || !r->idfile)
		return -cste_invalid;
	snprintf(path, sizeof(path), PMU_DIR "/cpu%d/%s", cpu, r->idfile);
	err = cap_read_u64(w->root, path, &v);
	if (err < 0) {
		if (required || err == -cste_format) {
			snprintf(w->bad, sizeof(w->bad), "%s", path);
			w->err = err == -cste_not_found ? -cste_not_found : -cste_format;
		}
		return err;
	}
	*out = (uint32_t)v;
	return 0;
}

static int on_cpu(void *ctx, const char *name)
{
	struct walk *w = ctx;
	struct cst_etm_cpu *c;
	char path[512];
	int cpu;

	if (sscanf(name, "cpu%d", &cpu) != 1 || cpu < 0 || w->pmu->ncpus >= CST_ETM_MAX_CPUS)
		return 0;
	c = &w->pmu->cpus[w->pmu->ncpus];
	memset(c, 0, sizeof(*c));
	c->cpu = cpu;
	c->traceid = 0x10 + 2 * cpu; /* the legacy ID perf assumes (CORESIGHT_LEGACY_CPU_TRACE_ID) */
	snprintf(path, sizeof(path), PMU_DIR "/cpu%d/%s", cpu,
		 cst_source_reg_find(cst_proto_etmv4i, "TRCIDR0")->idfile);
	if (cap_exists(w->root, path)) {
		uint32_t devarch = 0;
		int64_t ts;

		c->kind = cst_etm_v4;
		reg(w, cpu, cst_proto_etmv4i, "TRCIDR0", &c->trcidr0, true);
		reg(w, cpu, cst_proto_etmv4i, "TRCIDR1", &c->trcidr1, true);
		reg(w, cpu, cst_proto_etmv4i, "TRCIDR2", &c->trcidr2, true);
		reg(w, cpu, cst_proto_etmv4i, "TRCIDR8", &c->trcidr8, true);
		reg(w, cpu, cst_proto_etmv4i, "TRCIDR4", &c->trcidr4, false);
		reg(w, cpu, cst_proto_etmv4i, "TRCAUTHSTATUS", &c->trcauthstatus, true);
		/* ETE reports architecture version 5 or later in TRCDEVARCH. */
		if (reg(w, cpu, cst_proto_etmv4i, "TRCDEVARCH", &devarch, false) == 0 &&
		    cst_trcdevarch_is_ete(devarch)) {
			c->kind = cst_etm_ete;
			c->trcdevarch = devarch;
		}
		/* ts_source prints -1 when the driver does not know the source */
		snprintf(path, sizeof(path), PMU_DIR "/cpu%d/ts_source", cpu);
		if (cap_read_s64(w->root, path, &ts) == 0 && ts >= 0) {
			c->ts_source = (uint32_t)ts;
			c->has_ts_source = true;
		}
	} else {
		c->kind = cst_etm_v3;
		reg(w, cpu, cst_proto_etmv3, "ETMIDR", &c->etmidr, true);
		reg(w, cpu, cst_proto_etmv3, "ETMCCER", &c->etmccer, true);
		reg(w, cpu, cst_proto_etmv3, "ETMCCR", &c->etmccr, false);
		c->is_ptm = cst_etmidr_is_ptm(c->etmidr);
	}
	w->pmu->ncpus++;
	return 0;
}

int cst_etm_pmu_discover(struct cst_etm_pmu *pmu, const char *root, const struct cst_log *log)
{
	struct walk w = {pmu, root, 0, ""};
	uint64_t type;
	int err;

	if (!pmu)
		return -cste_invalid;
	memset(pmu, 0, sizeof(*pmu));
	err = cap_read_u64(root, PMU_DIR "/type", &type);
	if (err == -cste_not_found) {
		cst_logf(log, cst_log_error,
			 "no cs_etm PMU: %s%s/type is missing. The kernel needs CoreSight perf "
			 "support: CONFIG_CORESIGHT, CONFIG_CORESIGHT_LINKS_AND_SINKS, "
			 "CONFIG_CORESIGHT_LINK_AND_SINK_TMC and CONFIG_CORESIGHT_SOURCE_ETM3X "
			 "(Cortex-A7/A9/A15) or CONFIG_CORESIGHT_SOURCE_ETM4X (Armv8), plus a "
			 "device tree describing the CoreSight devices; without perf support "
			 "try 'cstrace record --sysfs --sink <sink>'",
			 root && strcmp(root, "/") ? root : "", PMU_DIR);
		return err;
	}
	if (err < 0) {
		cst_logf(log, cst_log_error, "cannot read %s/type: %s", PMU_DIR, cst_strerror(err));
		return err;
	}
	pmu->type = (uint32_t)type;
	cap_foreach(root, PMU_DIR "/format", on_format, &w);
	cap_foreach(root, PMU_DIR "/sinks", on_sink, &w);
	cap_foreach(root, PMU_DIR, on_cpu, &w);
	if (w.err) {
		cst_logf(log, cst_log_error, "%s %s", w.bad,
			 w.err == -cste_not_found ? "is missing" : "does not hold a number");
		return w.err;
	}
	if (!pmu->ncpus) {
		cst_logf(log, cst_log_error,
			 "cs_etm has no cpuN links: no ETM is probed (check 'dmesg | grep -i "
			 "coresight' and that the ETMs are enabled in the device tree)");
		return -cste_not_found;
	}
	return 0;
}

int cst_etm_pmu_format(const struct cst_etm_pmu *pmu, const char *name)
{
	if (!pmu || !name)
		return -cste_invalid;
	for (int i = 0; i < pmu->nformats; i++)
		if (!strcmp(pmu->formats[i].name, name))
			return i;
	return -cste_not_found;
}
