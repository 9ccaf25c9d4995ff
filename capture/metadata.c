/* The cs_etm AUXTRACE_INFO of a recording: version 1 (what Debian's perf 6.1 takes),
 * the PMU type, the snapshot flag and one block of ETM registers per CPU. */
#include "cstrace/capture.h"

#include <stdlib.h>
#include <string.h>

#include "cstrace/perfdata.h"

int cst_etm_pmu_etm_info(const struct cst_etm_pmu *pmu, bool snapshot,
			 struct cst_perf_etm_info *info)
{
	if (!pmu || !info)
		return -cste_invalid;
	memset(info, 0, sizeof(*info));
	info->version = 1;
	info->pmu_type = pmu->type;
	info->nr_cpu = (uint32_t)pmu->ncpus;
	info->snapshot = snapshot;
	info->cpus = calloc((size_t)pmu->ncpus + 1, sizeof(*info->cpus));
	if (!info->cpus)
		return -cste_nomem;
	for (int i = 0; i < pmu->ncpus; i++) {
		const struct cst_etm_cpu *c = &pmu->cpus[i];
		struct cst_perf_etm_cpu *p = &info->cpus[i];

		p->cpu = (uint64_t)c->cpu;
		if (c->kind == cst_etm_v3) {
			p->magic = CST_PERF_ETMV3_MAGIC;
			p->nr_params = 4;
			p->is_ptm = c->is_ptm;
			p->etmcr = c->etmcr;
			p->etmtraceidr = c->traceid;
			p->etmccer = c->etmccer;
			p->etmidr = c->etmidr;
		} else {
			p->magic = c->kind == cst_etm_ete ? CST_PERF_ETE_MAGIC : CST_PERF_ETMV4_MAGIC;
			p->nr_params = c->kind == cst_etm_ete ? 9 : 8;
			p->trcconfigr = c->trcconfigr;
			p->trctraceidr = c->traceid;
			p->trcidr0 = c->trcidr0;
			p->trcidr1 = c->trcidr1;
			p->trcidr2 = c->trcidr2;
			p->trcidr8 = c->trcidr8;
			p->trcauthstatus = c->trcauthstatus;
			p->trcdevarch = c->trcdevarch;
			p->ts_source = c->ts_source;
			p->has_ts_source = c->has_ts_source;
		}
	}
	return 0;
}

