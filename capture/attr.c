/* Event attributes: parses "cs_etm/@sink,term,term=value/" against the PMU's format
 * terms and fills perf_event_attr for the trace event and the sideband dummy event. */
#include "cstrace/capture.h"

#include <linux/perf_event.h>
#include <stdio.h>
#include <string.h>

uint64_t cst_capture_sample_type(void)
{
	/* IDENTIFIER lets readers tell the trace and dummy events apart; TIME
	 * orders sideband against AUX records; CPU places per-thread trace. */
	return PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU |
	       PERF_SAMPLE_IDENTIFIER;
}

static void list_terms(const struct cst_etm_pmu *pmu, char *buf, size_t size)
{
	size_t n = 0;

	buf[0] = 0;
	for (int i = 0; i < pmu->nformats && n + 2 < size; i++)
		n += (size_t)snprintf(buf + n, size - n, "%s%s", i ? ", " : "", pmu->formats[i].name);
}

static void list_sinks(const struct cst_etm_pmu *pmu, char *buf, size_t size)
{
	size_t n = 0;

	snprintf(buf, size, "none");
	for (int i = 0; i < pmu->nsinks && n + 2 < size; i++)
		n += (size_t)snprintf(buf + n, size - n, "%s%s", i ? ", " : "", pmu->sinks[i]);
}

static int set_bits(struct cst_etm_request *req, const struct cst_pmu_format *f, uint64_t v)
{
	int width = f->hi - f->lo + 1;
	uint64_t mask = width == 64 ? ~0ULL : ((1ULL << width) - 1);

	if (v & ~mask)
		return -cste_format;
	req->config[f->word] &= ~(mask << f->lo);
	req->config[f->word] |= v << f->lo;
	return 0;
}

/* ETMv3 drivers take only these config bits (coresight-etm3x-core.c). */
#define ETMV3_ALLOWED ((1ULL << 12) | (1ULL << 28) | (1ULL << 29))

int cst_etm_request_parse(struct cst_etm_request *req, const struct cst_etm_pmu *pmu,
			  const char *event, const struct cst_log *log)
{
	char buf[512], *body, *end, *tok, *save = NULL, list[512];

	if (!req || !pmu || !event)
		return -cste_invalid;
	memset(req, 0, sizeof(*req));
	if (strlen(event) >= sizeof(buf)) {
		cst_logf(log, cst_log_error, "event string too long");
		return -cste_format;
	}
	strcpy(buf, event);
	if (strncmp(buf, "cs_etm/", 7) || !(end = strrchr(buf + 6, '/')) || end == buf + 6) {
		cst_logf(log, cst_log_error,
			 "'%s' is not a cs_etm event; write it as cs_etm/@SINK,term,.../ "
			 "(e.g. cs_etm/@tmc_etf0,timestamp/)", event);
		return -cste_format;
	}
	for (const char *mod = end + 1; *mod; mod++) {
		if (*mod == 'u') {
			req->user_only = true;
		} else if (*mod != 'k') {
			cst_logf(log, cst_log_error, "unknown event modifier '%c' in '%s' (u or k)", *mod,
				 event);
			return -cste_format;
		}
	}
	*end = 0;
	body = buf + 7;
	for (tok = strtok_r(body, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(tok, '=');
		uint64_t v = 1;
		int f;

		if (tok[0] == '@') {
			int i;

			for (i = 0; i < pmu->nsinks; i++)
				if (!strcmp(pmu->sinks[i], tok + 1))
					break;
			if (i == pmu->nsinks) {
				list_sinks(pmu, list, sizeof(list));
				cst_logf(log, cst_log_error, "sink '%s' not found; the sinks here are: %s",
					 tok + 1, list);
				return -cste_not_found;
			}
			snprintf(req->sink, sizeof(req->sink), "%s", tok + 1);
			f = cst_etm_pmu_format(pmu, "sinkid");
			if (f >= 0)
				set_bits(req, &pmu->formats[f], pmu->sink_hash[i]);
			else
				req->config[2] |= pmu->sink_hash[i]; /* config2:0-31 before the term existed */
			continue;
		}
		if (eq) {
			*eq = 0;
			if (cst_parse_u64(eq + 1, &v) < 0) {
				cst_logf(log, cst_log_error, "'%s=%s': the value is not a number", tok, eq + 1);
				return -cste_format;
			}
		}
		f = cst_etm_pmu_format(pmu, tok);
		/* perf's "contextid" means CONTEXTIDR_EL1 (contextid1) on kernels
		 * that split the term. */
		if (f < 0 && !strcmp(tok, "contextid"))
			f = cst_etm_pmu_format(pmu, "contextid1");
		if (f < 0) {
			list_terms(pmu, list, sizeof(list));
			cst_logf(log, cst_log_error, "cs_etm has no term '%s'; the terms are: %s", tok, list);
			return -cste_format;
		}
		if (set_bits(req, &pmu->formats[f], v) < 0) {
			cst_logf(log, cst_log_error, "'%s=%s' does not fit in %d bit(s)", tok, eq + 1,
				 pmu->formats[f].hi - pmu->formats[f].lo + 1);
			return -cste_format;
		}
		if (!strcmp(tok, "timestamp"))
			req->timestamp = v != 0;
		if (!strncmp(tok, "contextid", 9))
			req->contextid = v != 0;
	}
	if (pmu->ncpus && pmu->cpus[0].kind == cst_etm_v3 && (req->config[0] & ~ETMV3_ALLOWED)) {
		cst_logf(log, cst_log_error,
			 "the ETMv3/PTM driver accepts only cycacc, timestamp and retstack "
			 "(config 0x%llx asks for more); drop contextid and branch_broadcast",
			 (unsigned long long)req->config[0]);
		return -cste_format;
	}
	return 0;
}

void cst_etm_pmu_apply_config(struct cst_etm_pmu *pmu, const struct cst_etm_request *req)
{
	uint64_t c = req->config[0];

	for (int i = 0; i < pmu->ncpus; i++) {
		struct cst_etm_cpu *cpu = &pmu->cpus[i];
		uint32_t r = 0;

		/* ETMv3: perf's config bits are ETMCR's bit positions. */
		cpu->etmcr = (uint32_t)c;
		/* ETMv4: the driver's translation to TRCCONFIGR (coresight-etm4x-core.c
		 * and perf's cs_etmv4_get_config). */
		if (c & (1ULL << 8))
			r |= 1u << 3; /* branch broadcast */
		if (c & (1ULL << 12))
			r |= 1u << 4; /* cycle accurate */
		if (c & (1ULL << 14))
			r |= 1u << 6; /* context ID */
		if (c & (1ULL << 15))
			r |= (1u << 7) | (1u << 15); /* VMID, VMID option */
		if (c & (1ULL << 28))
			r |= 1u << 11; /* timestamp */
		if (c & (1ULL << 29))
			r |= 1u << 12; /* return stack */
		cpu->trcconfigr = r;
	}
}

static void attr_common(struct perf_event_attr *a, bool enable_on_exec)
{
	a->size = PERF_ATTR_SIZE_VER7;
	a->sample_period = 1;
	a->sample_type = cst_capture_sample_type();
	a->sample_id_all = 1;
	a->disabled = 1;
	a->enable_on_exec = enable_on_exec;
}

int cst_etm_attr_fill(void *attr, size_t size, const struct cst_etm_pmu *pmu,
		      const struct cst_etm_request *req, bool enable_on_exec, bool snapshot)
{
	struct perf_event_attr a;

	if (!attr || !pmu || !req || size < PERF_ATTR_SIZE_VER1)
		return -cste_invalid;
	memset(&a, 0, sizeof(a));
	attr_common(&a, enable_on_exec);
	a.type = pmu->type;
	a.config = req->config[0];
	a.config1 = req->config[1];
	a.config2 = req->config[2];
	a.exclude_kernel = req->user_only;
	a.exclude_hv = 1;
	(void)snapshot; /* snapshot mode is chosen by mapping AUX read-only */
	memset(attr, 0, size);
	memcpy(attr, &a, size < sizeof(a) ? size : sizeof(a));
	return 0;
}

int cst_dummy_attr_fill(void *attr, size_t size, bool enable_on_exec, bool user_only,
			bool inherit)
{
	struct perf_event_attr a;

	if (!attr || size < PERF_ATTR_SIZE_VER1)
		return -cste_invalid;
	memset(&a, 0, sizeof(a));
	attr_common(&a, enable_on_exec);
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_DUMMY;
	a.mmap = 1;
	a.mmap2 = 1;
	a.comm = 1;
	a.comm_exec = 1;
	a.task = 1;
	a.context_switch = 1;
	a.inherit = inherit;
	a.exclude_kernel = user_only;
	a.exclude_hv = 1;
	memset(attr, 0, size);
	memcpy(attr, &a, size < sizeof(a) ? size : sizeof(a));
	return 0;
}
