/* What perf script's columns depend on in a perf.data file: which event samples
 * time and CPU, the events' names (the event column is as wide as the longest),
 * the modifiers of the events perf synthesizes, and the time perf 6.1 gives
 * every cs_etm sample (the latest AUX record's). */
#include "cstrace/perfdata.h"
#include "cstrace/symbolize.h"

#include <stdio.h>
#include <string.h>

/* perf_event_attr bitfield bits perf's event names read */
#define A_EXCLUDE_USER (1ULL << 4)
#define A_EXCLUDE_KERNEL (1ULL << 5)
#define A_EXCLUDE_HV (1ULL << 6)
#define A_PRECISE (3ULL << 15)
#define A_EXCLUDE_HOST (1ULL << 19)
#define A_EXCLUDE_GUEST (1ULL << 20)

/* evsel__add_modifiers */
static void modifiers(uint64_t a, char *buf, size_t size)
{
	size_t n = 0;
	bool guest_default = false;
	char m[8];

	if (a & (A_EXCLUDE_KERNEL | A_EXCLUDE_USER | A_EXCLUDE_HV)) {
		if (!(a & A_EXCLUDE_KERNEL))
			m[n++] = 'k';
		if (!(a & A_EXCLUDE_USER))
			m[n++] = 'u';
		if (!(a & A_EXCLUDE_HV))
			m[n++] = 'h';
		guest_default = true;
	}
	for (uint64_t p = (a & A_PRECISE) >> 15; p; p--)
		m[n++] = 'p';
	if ((a & A_EXCLUDE_HOST) || !!(a & A_EXCLUDE_GUEST) == guest_default) {
		if (!(a & A_EXCLUDE_HOST))
			m[n++] = 'H';
		if (!(a & A_EXCLUDE_GUEST))
			m[n++] = 'G';
	}
	snprintf(buf, size, "%s%.*s", n ? ":" : "", (int)n, m);
}

/* evsel__name of an attr with no recorded name */
static size_t event_name(const struct cst_perf_attr *a, char *buf, size_t size)
{
	static const char *const hw[] = {
		"cycles", "instructions", "cache-references", "cache-misses", "branches",
		"branch-misses", "bus-cycles", "stalled-cycles-frontend",
		"stalled-cycles-backend", "ref-cycles",
	};
	static const char *const sw[] = {
		"cpu-clock", "task-clock", "page-faults", "context-switches", "cpu-migrations",
		"minor-faults", "major-faults", "alignment-faults", "emulation-faults", "dummy",
		"bpf-output", "cgroup-switches",
	};
	char mods[8];
	const char *base = NULL;
	int n;

	modifiers(a->flags, mods, sizeof(mods));
	if (a->type == 0 && a->config < sizeof(hw) / sizeof(hw[0]))
		base = hw[a->config];
	else if (a->type == 1 && a->config < sizeof(sw) / sizeof(sw[0]))
		base = sw[a->config];
	if (base)
		n = snprintf(buf, size, "%s%s", base, mods);
	else
		n = snprintf(buf, size, "unknown attr type: %u", a->type);
	return n < 0 ? 0 : (size_t)n;
}

static bool is_perf_data(const char *path)
{
	char magic[8];
	FILE *f = fopen(path, "rb");
	bool yes = f && fread(magic, 1, 8, f) == 8 && !memcmp(magic, "PERFILE2", 8);

	if (f)
		fclose(f);
	return yes;
}

int cst_pscript_file_read(const char *path, struct cst_pscript_file *f, const struct cst_log *log)
{
	struct cst_perf_reader_opts ro = {.sz = sizeof(ro), .log = log};
	struct cst_perf_reader *r = NULL;
	const struct cst_perf_features *feat;
	const struct cst_perf_attr *etm = NULL;
	struct cst_perf_etm_info info;
	struct cst_perf_record rec;
	int err, n;

	if (!path || !f)
		return -cste_invalid;
	memset(f, 0, sizeof(*f));
	if (!is_perf_data(path))
		return 0;
	err = cst_perf_reader_open(&r, path, &ro);
	if (err < 0)
		return err;
	f->perf_data = true;
	n = cst_perf_reader_nattrs(r);
	/* the cs_etm event: of the PMU type AUXTRACE_INFO names, else the first
	 * attr of a dynamic PMU */
	if (cst_perf_reader_etm_info(r, &info) == 0) {
		for (int i = 0; i < n && !etm; i++)
			if (cst_perf_reader_attr(r, i)->type == info.pmu_type)
				etm = cst_perf_reader_attr(r, i);
		cst_perf_etm_info_fini(&info);
	}
	feat = cst_perf_reader_features(r);
	for (int i = 0; i < n; i++) {
		const struct cst_perf_attr *a = cst_perf_reader_attr(r, i);
		char name[sizeof(f->etm_name)];
		size_t len = (uint32_t)i < feat->nevent_names
				     ? (size_t)snprintf(name, sizeof(name), "%s", feat->event_names[i])
				     : event_name(a, name, sizeof(name));

		if (!etm && a->type >= 6)
			etm = a;
		if (a == etm || (!etm && !i))
			snprintf(f->etm_name, sizeof(f->etm_name), "%s", name);
		/* the first event perf would refuse to print a time for */
		if (!(a->sample_type & CST_PERF_SAMPLE_TIME) && !f->notime_name[0])
			snprintf(f->notime_name, sizeof(f->notime_name), "%s", name);
		if (len > f->name_len)
			f->name_len = (unsigned)len;
	}
	if (!etm && n)
		etm = cst_perf_reader_attr(r, 0);
	/* perf 6.1 decodes timeless (per thread, no sample times) when the cs_etm
	 * event was recorded without timestamps (ETM_OPT_TS, config bit 28) */
	f->timeless = !etm || !(etm->config & (1ull << 28));
	f->has_time = !f->timeless;
	f->has_cpu = etm && (etm->sample_type & CST_PERF_SAMPLE_CPU);
	modifiers(etm ? etm->flags : 0, f->modifiers, sizeof(f->modifiers));
	/* perf 6.1 decodes once every record is in, each sample at the time of the
	 * latest AUX record */
	while ((err = cst_perf_reader_next(r, &rec)) == 0)
		if (rec.type == cst_perf_rec_aux && rec.sid.have_time &&
		    rec.sid.time != UINT64_MAX && (!f->has_aux_time || rec.sid.time > f->aux_time)) {
			f->aux_time = rec.sid.time;
			f->has_aux_time = true;
		}
	cst_perf_reader_free(r);
	return err == -cste_eos || err == -cste_truncated ? 0 : err;
}
