/* Internal to capture/: perf mode's address filters and trigger (rec_filter.c),
 * and sysfs mode's comparators (sysfs_filter.c). */
#ifndef CSTRACE_CAPTURE_REC_FILTER_H
#define CSTRACE_CAPTURE_REC_FILTER_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "cstrace/capture.h"
#include "cstrace/source.h"

/* What record sends besides the events: the filter string, and the trigger. */
struct cap_rec_filter {
	struct cst_addr_filter *filter;  /* NULL: none */
	char text[8192];                 /* PERF_EVENT_IOC_SET_FILTER's string */
	struct cst_addr_filter *trigger; /* one start entry: the function; NULL: none */
	const struct cst_addr_filter_entry *at; /* its entry */
	uint32_t uprobe_type;
	uint64_t count;                  /* the entry that fires */
	bool pause_refused;              /* the kernel would not pause AUX at the trigger */
	size_t page;
};

/* Parse, resolve and check @o's filter and trigger against @pmu's ETMs (NULL:
 * sideband only, no ETM). Errors are logged as one line each. */
int cap_rec_filter_prepare(struct cap_rec_filter *rf, const struct cst_record_opts *o,
			   const char *root, const struct cst_etm_pmu *pmu, size_t page);
void cap_rec_filter_fini(struct cap_rec_filter *rf);
/* The dry run's lines: the exact filter string, the uprobe's attributes. */
void cap_rec_filter_describe(const struct cap_rec_filter *rf, const struct cst_log *log);
/* The dry run: the PMU, rings, filter, trigger and every CPU's ETM registers. */
void cap_record_describe(const struct cst_record_opts *o, const char *root,
			 const struct cst_etm_pmu *pmu, const struct cst_etm_request *req,
			 uint64_t aux_bytes, int nrings, const struct cap_rec_filter *rf);
/* Send the filter to a cs_etm event. */
int cap_rec_filter_apply(const struct cap_rec_filter *rf, int fd, const struct cst_log *log);

/* One trigger event: the uprobe in @group's group (or alone with -1), with a ring
 * of its own that poll() watches. */
struct cap_trigger {
	int fd;
	void *base;
	size_t len;
};

int cap_trigger_open(struct cap_rec_filter *rf, struct cap_trigger *t, pid_t pid, int cpu,
		     int group, bool enable_on_exec, bool inherit, const struct cst_log *log);
/* Whether it fired; the sample's ip and time when it did. */
bool cap_trigger_fired(const struct cap_trigger *t, uint64_t *ip, uint64_t *time);
void cap_trigger_close(struct cap_trigger *t);

/* sysfs mode: program @filter (resolved) into each source's comparators. */
struct cap_sysfs_src {
	const char *dev;   /* "etm0" */
	bool v4;
	uint32_t pairs;    /* address comparator pairs (TRCIDR4 / ETMCCR) */
};

/* Check @f against every source's comparators. */
int cap_sysfs_filter_check(const struct cst_addr_filter *f, const struct cap_sysfs_src *src,
			   int nsrc, const struct cst_log *log);
/* Write (or, with @dry_run, describe) the comparator files of every source: reset,
 * then per entry addr_idx, addr_instdatatype (ETMv4), addr_range / addr_start /
 * addr_stop. File entries are placed on @pid's mappings (0: the dry run, which
 * names them by file offset). */
int cap_sysfs_filter_program(const struct cst_addr_filter *f, const struct cap_sysfs_src *src,
			     int nsrc, const char *root, pid_t pid, bool dry_run,
			     const struct cst_log *log);
/* Reset the sources' configuration after a filtered run. */
void cap_sysfs_filter_reset(const struct cap_sysfs_src *src, int nsrc, const char *root);

#endif
