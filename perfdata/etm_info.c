/* cs_etm AUXTRACE_INFO priv[] parsing: the global header (versions 0, 1, 2) and the
 * per-CPU ETMv3/PTM, ETMv4 and ETE blocks, skipping parameters newer perf adds. */
#include "cstrace/perfdata.h"
#include "cstrace/source.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Parameters this parser knows per block kind (version 1 layout). */
#define ETMV3_PARAMS 4
#define ETMV4_PARAMS 8 /* older perf wrote 7: no TS_SOURCE */
#define ETE_PARAMS 9

static int fail(char *err, size_t errlen, int code, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int fail(char *err, size_t errlen, int code, const char *fmt, ...)
{
	va_list ap;

	if (err && errlen) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return -code;
}

static uint64_t word(const uint8_t *priv, uint64_t i)
{
	return cst_le64(priv + i * 8);
}

/* Fill the known registers of @c from @np params starting at word @p. */
static void fill_params(struct cst_perf_etm_cpu *c, const uint8_t *priv, uint64_t p, uint64_t np)
{
	uint64_t v[ETE_PARAMS] = {0};

	for (uint64_t i = 0; i < np && i < ETE_PARAMS; i++)
		v[i] = word(priv, p + i);
	if (c->magic == CST_PERF_ETMV3_MAGIC) {
		c->etmcr = (uint32_t)v[0];
		c->etmtraceidr = (uint32_t)v[1];
		c->etmccer = (uint32_t)v[2];
		c->etmidr = (uint32_t)v[3];
		c->is_ptm = cst_etmidr_is_ptm(c->etmidr);
		return;
	}
	c->trcconfigr = (uint32_t)v[0];
	c->trctraceidr = (uint32_t)v[1];
	c->trcidr0 = (uint32_t)v[2];
	c->trcidr1 = (uint32_t)v[3];
	c->trcidr2 = (uint32_t)v[4];
	c->trcidr8 = (uint32_t)v[5];
	c->trcauthstatus = (uint32_t)v[6];
	if (c->magic == CST_PERF_ETE_MAGIC) {
		c->trcdevarch = (uint32_t)v[7];
		c->has_ts_source = np >= 9;
		c->ts_source = v[8];
	} else {
		c->has_ts_source = np >= 8;
		c->ts_source = v[7];
	}
}

int cst_perf_etm_info_parse(struct cst_perf_etm_info *info, const uint8_t *priv, uint64_t n,
			    char *err, size_t errlen)
{
	uint64_t p;

	if (!info || (!priv && n))
		return -cste_invalid;
	memset(info, 0, sizeof(*info));
	if (n < 3)
		return fail(err, errlen, cste_format,
			    "cs_etm AUXTRACE_INFO has %llu words, expected at least 3",
			    (unsigned long long)n);
	info->version = word(priv, 0);
	info->pmu_type = (uint32_t)(word(priv, 1) >> 32);
	info->nr_cpu = (uint32_t)word(priv, 1);
	info->snapshot = word(priv, 2) != 0;
	if (info->version > 2)
		return fail(err, errlen, cste_unsupported,
			    "cs_etm AUXTRACE_INFO header version %llu, expected 0, 1 or 2",
			    (unsigned long long)info->version);
	/* Each CPU needs at least 2 words: bound nr_cpu by the data before allocating. */
	if (info->nr_cpu == 0 || info->nr_cpu > (n - 3) / 2)
		return fail(err, errlen, cste_format,
			    "cs_etm AUXTRACE_INFO claims %u CPUs in %llu words",
			    info->nr_cpu, (unsigned long long)n);
	info->cpus = calloc(info->nr_cpu, sizeof(*info->cpus));
	if (!info->cpus)
		return -cste_nomem;
	p = 3;
	for (uint32_t i = 0; i < info->nr_cpu; i++) {
		struct cst_perf_etm_cpu *c = &info->cpus[i];
		uint64_t np;

		if (p + 2 > n)
			goto short_data;
		c->magic = word(priv, p);
		c->cpu = word(priv, p + 1);
		if (c->magic != CST_PERF_ETMV3_MAGIC && c->magic != CST_PERF_ETMV4_MAGIC &&
		    c->magic != CST_PERF_ETE_MAGIC) {
			unsigned long long magic = c->magic;

			cst_perf_etm_info_fini(info);
			return fail(err, errlen, cste_unsupported,
				    "cs_etm AUXTRACE_INFO CPU block %u at word %llu: magic 0x%llx, "
				    "expected ETMv3, ETMv4 or ETE",
				    i, (unsigned long long)p, magic);
		}
		if (info->version == 0) {
			/* Version 0 has no count word: fixed layouts. */
			if (c->magic == CST_PERF_ETE_MAGIC) {
				cst_perf_etm_info_fini(info);
				return fail(err, errlen, cste_format,
					    "cs_etm AUXTRACE_INFO version 0 with an ETE block");
			}
			np = c->magic == CST_PERF_ETMV3_MAGIC ? 4 : 7;
			p += 2;
		} else {
			if (p + 3 > n)
				goto short_data;
			np = word(priv, p + 2);
			p += 3;
		}
		if (np > n - p)
			goto short_data;
		c->nr_params = (uint32_t)np;
		fill_params(c, priv, p, np);
		p += np;
	}
	return 0;

short_data:
	cst_perf_etm_info_fini(info);
	return fail(err, errlen, cste_format,
		    "cs_etm AUXTRACE_INFO ends at word %llu inside a CPU block",
		    (unsigned long long)n);
}

void cst_perf_etm_info_fini(struct cst_perf_etm_info *info)
{
	if (!info)
		return;
	free(info->cpus);
	info->cpus = NULL;
	info->nr_cpu = 0;
}
