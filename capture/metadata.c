/* The cs_etm AUXTRACE_INFO of a recording: version 1 (what Debian's perf 6.1 takes),
 * the PMU type, the snapshot flag and one block of ETM registers per CPU. */
#include "cstrace/capture.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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


int cst_perf_etm_info_patch_ids(const char *path, const uint8_t *ids, const bool *have, int n)
{
	struct cst_perf_reader_opts ro = {.sz = sizeof(ro)};
	struct cst_perf_reader *r;
	struct cst_perf_record rec;
	uint64_t at = 0, changed = 0, w, nr_cpu;
	uint64_t offs[CST_ETM_MAX_CPUS];
	uint8_t val[CST_ETM_MAX_CPUS];
	int err, fd, nw = 0;

	if (!path || !ids || !have || n < 0)
		return -cste_invalid;
	err = cst_perf_reader_open(&r, path, &ro);
	if (err < 0)
		return err;
	while ((err = cst_perf_reader_next(r, &rec)) == 0)
		if (rec.type == cst_perf_rec_auxtrace_info &&
		    rec.u.auxtrace_info.type == CST_PERF_AUXTRACE_CS_ETM)
			break;
	if (err < 0) {
		cst_perf_reader_free(r);
		return err == -cste_eos ? -cste_not_found : err;
	}
	/* priv: version, pmu_type << 32 | nr_cpu, snapshot, then per CPU (v1/v2)
	 * magic, cpu, nr_params, params; TRACEIDR is the second parameter of
	 * ETMv3, ETMv4 and ETE blocks alike. */
	const uint8_t *priv = rec.u.auxtrace_info.priv;
	uint64_t np = rec.u.auxtrace_info.npriv;

	err = 0;
	if (np < 3 || cst_le64(priv) < 1) {
		err = np < 3 ? -cste_format : -cste_unsupported;
		goto out;
	}
	nr_cpu = cst_le64(priv + 8) & 0xffffffffu;
	w = 3;
	for (uint64_t k = 0; k < nr_cpu; k++) {
		uint64_t cpu, nparams;

		if (w + 3 > np) {
			err = -cste_format;
			goto out;
		}
		cpu = cst_le64(priv + (w + 1) * 8);
		nparams = cst_le64(priv + (w + 2) * 8);
		if (nparams < 2 || w + 3 + nparams > np) {
			err = -cste_format;
			goto out;
		}
		if (cpu < (uint64_t)n && have[cpu] && nw < CST_ETM_MAX_CPUS &&
		    cst_le64(priv + (w + 4) * 8) != ids[cpu]) {
			at = rec.file_offset + 16 + (w + 4) * 8;
			offs[nw] = at;
			val[nw++] = ids[cpu];
		}
		w += 3 + nparams;
	}
out:
	cst_perf_reader_free(r);
	if (err < 0)
		return err;
	if (!nw)
		return 0;
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -cste_io;
	for (int i = 0; i < nw; i++) {
		uint8_t b[8];

		cst_put_le64(b, val[i]);
		if (pwrite(fd, b, 8, (off_t)offs[i]) != 8)
			err = -cste_io;
		else
			changed++;
	}
	if (close(fd))
		err = -cste_io;
	return err < 0 ? err : (int)changed;
}
