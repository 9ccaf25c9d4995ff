/* The cs_etm AUXTRACE_INFO codec: priv[] as perf lays it out, parsed, encoded and
 * patched in one place. A global header (version, PMU type and CPU count,
 * snapshot flag), then per CPU a block: magic, cpu, (from version 1) a parameter
 * count, and the parameters in the order below. Newer perf may add parameters
 * after the known ones; they are skipped. */
#include "cstrace/perfdata.h"
#include "cstrace/source.h"

#include <fcntl.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define HDR_WORDS 3

/* One parameter: where it lives in struct cst_perf_etm_cpu and how wide it is. */
struct param {
	size_t offset;
	bool wide; /* uint64_t; else uint32_t */
};

#define P32(f) {offsetof(struct cst_perf_etm_cpu, f), false}
#define P64(f) {offsetof(struct cst_perf_etm_cpu, f), true}

/* Parameter order of each block kind, as perf's cs-etm.h numbers them. The trace
 * ID register is the second parameter of all three. */
static const struct param etmv3_params[] = {
	P32(etmcr), P32(etmtraceidr), P32(etmccer), P32(etmidr),
};
static const struct param etmv4_params[] = {
	P32(trcconfigr), P32(trctraceidr), P32(trcidr0), P32(trcidr1),
	P32(trcidr2),    P32(trcidr8),     P32(trcauthstatus), P64(ts_source),
};
static const struct param ete_params[] = {
	P32(trcconfigr), P32(trctraceidr),   P32(trcidr0),    P32(trcidr1),   P32(trcidr2),
	P32(trcidr8),    P32(trcauthstatus), P32(trcdevarch), P64(ts_source),
};
#define TRACEID_PARAM 1

#define N(a) (sizeof(a) / sizeof(a[0]))

/* The parameters of a block of @magic; *count is what @version writes (version 0
 * has fixed blocks without TS_SOURCE and no ETE). NULL for an unknown kind. */
static const struct param *layout(uint64_t magic, uint64_t version, size_t *count)
{
	switch (magic) {
	case CST_PERF_ETMV3_MAGIC:
		*count = N(etmv3_params);
		return etmv3_params;
	case CST_PERF_ETMV4_MAGIC:
		*count = version == 0 ? N(etmv4_params) - 1 : N(etmv4_params);
		return etmv4_params;
	case CST_PERF_ETE_MAGIC:
		*count = N(ete_params);
		return version == 0 ? NULL : ete_params;
	default:
		return NULL;
	}
}

static int fail(const struct cst_log *log, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fail(const struct cst_log *log, int code, const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	cst_logf(log, cst_log_error, "%s", msg);
	return -code;
}

static uint64_t word(const uint8_t *priv, uint64_t i)
{
	return cst_le64(priv + i * 8);
}

/* Fill the known parameters of @c from the @np words at @priv[p]; the ones the
 * file does not hold stay zero. */
static void get_params(struct cst_perf_etm_cpu *c, const struct param *ps, size_t known,
		       const uint8_t *priv, uint64_t p, uint64_t np)
{
	for (size_t i = 0; i < known && i < np; i++) {
		uint64_t v = word(priv, p + i);
		char *dst = (char *)c + ps[i].offset;

		if (ps[i].wide)
			memcpy(dst, &v, sizeof(v));
		else
			*(uint32_t *)(void *)dst = (uint32_t)v;
	}
}

int cst_perf_etm_info_parse(struct cst_perf_etm_info *info, const uint8_t *priv, uint64_t n,
			    const struct cst_log *log)
{
	uint64_t p;

	if (!info || (!priv && n))
		return -cste_invalid;
	memset(info, 0, sizeof(*info));
	if (n < HDR_WORDS)
		return fail(log, cste_format,
			    "cs_etm AUXTRACE_INFO has %llu words, expected at least 3",
			    (unsigned long long)n);
	info->version = word(priv, 0);
	info->pmu_type = (uint32_t)(word(priv, 1) >> 32);
	info->nr_cpu = (uint32_t)word(priv, 1);
	info->snapshot = word(priv, 2) != 0;
	if (info->version > 2)
		return fail(log, cste_unsupported,
			    "cs_etm AUXTRACE_INFO header version %llu, expected 0, 1 or 2",
			    (unsigned long long)info->version);
	/* Each CPU needs at least 2 words: bound nr_cpu by the data before allocating. */
	if (info->nr_cpu == 0 || info->nr_cpu > (n - HDR_WORDS) / 2)
		return fail(log, cste_format,
			    "cs_etm AUXTRACE_INFO claims %u CPUs in %llu words",
			    info->nr_cpu, (unsigned long long)n);
	info->cpus = calloc(info->nr_cpu, sizeof(*info->cpus));
	if (!info->cpus)
		return -cste_nomem;
	p = HDR_WORDS;
	for (uint32_t i = 0; i < info->nr_cpu; i++) {
		struct cst_perf_etm_cpu *c = &info->cpus[i];
		const struct param *ps;
		size_t known;
		uint64_t np;

		if (p + 2 > n)
			goto short_data;
		c->magic = word(priv, p);
		c->cpu = word(priv, p + 1);
		ps = layout(c->magic, info->version, &known);
		if (!ps) {
			unsigned long long magic = c->magic;
			bool ete = c->magic == CST_PERF_ETE_MAGIC;

			cst_perf_etm_info_fini(info);
			if (ete)
				return fail(log, cste_format,
					    "cs_etm AUXTRACE_INFO version 0 with an ETE block");
			return fail(log, cste_unsupported,
				    "cs_etm AUXTRACE_INFO CPU block %u at word %llu: magic 0x%llx, "
				    "expected ETMv3, ETMv4 or ETE",
				    i, (unsigned long long)p, magic);
		}
		if (info->version == 0) {
			np = known; /* no count word: fixed layouts */
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
		c->param_word = p;
		get_params(c, ps, known, priv, p, np);
		/* TS_SOURCE, the last parameter of ETMv4 and ETE blocks, came later */
		c->has_ts_source =
			(c->magic == CST_PERF_ETMV4_MAGIC && np >= N(etmv4_params)) ||
			(c->magic == CST_PERF_ETE_MAGIC && np >= N(ete_params));
		if (c->magic == CST_PERF_ETMV3_MAGIC)
			c->is_ptm = cst_etmidr_is_ptm(c->etmidr);
		p += np;
	}
	return 0;

short_data:
	cst_perf_etm_info_fini(info);
	return fail(log, cste_format,
		    "cs_etm AUXTRACE_INFO ends at word %llu inside a CPU block",
		    (unsigned long long)n);
}

uint64_t cst_perf_etm_info_words(const struct cst_perf_etm_info *info)
{
	uint64_t n = HDR_WORDS;

	if (!info || !info->cpus || !info->nr_cpu || info->version > 2)
		return 0;
	for (uint32_t i = 0; i < info->nr_cpu; i++) {
		size_t known;

		if (!layout(info->cpus[i].magic, info->version, &known))
			return 0;
		n += (info->version == 0 ? 2 : 3) + known;
	}
	return n;
}

int cst_perf_etm_info_encode(const struct cst_perf_etm_info *info, uint8_t *priv, uint64_t n)
{
	uint64_t need = cst_perf_etm_info_words(info), k = 0;

	if (!need || !priv || n < need)
		return -cste_invalid;
#define W(v) cst_put_le64(priv + 8 * k++, (uint64_t)(v))
	W(info->version);
	W(((uint64_t)info->pmu_type << 32) | info->nr_cpu);
	W(info->snapshot ? 1 : 0);
	for (uint32_t i = 0; i < info->nr_cpu; i++) {
		const struct cst_perf_etm_cpu *c = &info->cpus[i];
		size_t known;
		const struct param *ps = layout(c->magic, info->version, &known);

		W(c->magic);
		W(c->cpu);
		if (info->version)
			W(known);
		for (size_t j = 0; j < known; j++) {
			const char *src = (const char *)c + ps[j].offset;
			uint64_t v;

			if (ps[j].wide)
				memcpy(&v, src, sizeof(v));
			else
				v = *(const uint32_t *)(const void *)src;
			W(v);
		}
	}
#undef W
	return 0;
}

void cst_perf_etm_info_fini(struct cst_perf_etm_info *info)
{
	if (!info)
		return;
	free(info->cpus);
	info->cpus = NULL;
	info->nr_cpu = 0;
}

int cst_perf_etm_info_patch_ids(const char *path, const uint8_t *ids, const bool *have, int n)
{
	struct cst_perf_reader_opts ro = {.sz = sizeof(ro)};
	struct cst_perf_reader *r;
	struct cst_perf_record rec;
	struct cst_perf_etm_info info;
	uint64_t *offs = NULL;
	uint8_t *val = NULL;
	int err, fd, nw = 0, changed = 0;

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
	err = cst_perf_etm_info_parse(&info, rec.u.auxtrace_info.priv, rec.u.auxtrace_info.npriv,
				      NULL);
	if (err < 0) {
		cst_perf_reader_free(r);
		return err;
	}
	offs = calloc(info.nr_cpu, sizeof(*offs));
	val = calloc(info.nr_cpu, sizeof(*val));
	if (!offs || !val)
		err = -cste_nomem;
	for (uint32_t i = 0; !err && i < info.nr_cpu; i++) {
		const struct cst_perf_etm_cpu *c = &info.cpus[i];
		uint64_t at = c->param_word + TRACEID_PARAM;
		uint32_t cur = c->magic == CST_PERF_ETMV3_MAGIC ? c->etmtraceidr : c->trctraceidr;

		if (c->cpu >= (uint64_t)n || !have[c->cpu] || c->nr_params <= TRACEID_PARAM ||
		    cur == ids[c->cpu])
			continue;
		/* the record's 16-byte header, then its priv[] words */
		offs[nw] = rec.file_offset + 16 + at * 8;
		val[nw++] = ids[c->cpu];
	}
	cst_perf_etm_info_fini(&info);
	cst_perf_reader_free(r);
	if (err || !nw)
		goto out;
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0) {
		err = -cste_io;
		goto out;
	}
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
out:
	free(offs);
	free(val);
	return err < 0 ? err : changed;
}
