/* perf mode's address filters and trigger: the filter string every cs_etm event
 * gets (PERF_EVENT_IOC_SET_FILTER), checked against the ETMs' comparators first, and
 * the uprobe event whose sample at the Nth entry of a function takes the snapshot;
 * and the dry run, which prints all that record would send. */
#include "rec_filter.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/perf_event.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "root.h"

#define UPROBE_TYPE "/sys/bus/event_source/devices/uprobe/type"
/* perf_event_attr.aux_action (Linux 6.13; __reserved_3 before): bit 1 aux_pause */
#define ATTR_AUX_ACTION offsetof(struct perf_event_attr, __reserved_3)
#define AUX_PAUSE (1u << 1)

int cst_uprobe_attr_fill(void *attr, size_t size, uint32_t type, const char *path,
			 uint64_t offset, uint64_t count, bool enable_on_exec, bool aux_pause)
{
	struct perf_event_attr a;

	if (!attr || !path || size < PERF_ATTR_SIZE_VER6)
		return -cste_invalid;
	memset(&a, 0, sizeof(a));
	a.size = PERF_ATTR_SIZE_VER7;
	a.type = type;
	a.config = 0; /* retprobe (config:0) clear: the function's entry */
	a.config1 = (uint64_t)(uintptr_t)path; /* uprobe_path */
	a.config2 = offset;                    /* probe_offset */
	a.sample_period = count ? count : 1;
	a.sample_type = cst_capture_sample_type();
	a.sample_id_all = 1;
	a.wakeup_events = 1;
	a.disabled = 1;
	a.enable_on_exec = enable_on_exec;
	memset(attr, 0, size);
	memcpy(attr, &a, size < sizeof(a) ? size : sizeof(a));
	if (aux_pause)
		cst_put_le32((uint8_t *)attr + ATTR_AUX_ACTION, AUX_PAUSE);
	return 0;
}

/* The command's executable, as the kernel resolves the uprobe's path. */
static bool find_command(const char *name, char *out)
{
	const char *path = getenv("PATH");
	char buf[PATH_MAX];

	if (strchr(name, '/'))
		return realpath(name, out) != NULL;
	for (const char *p = path ? path : "/usr/bin:/bin"; *p;) {
		size_t n = strcspn(p, ":");

		snprintf(buf, sizeof(buf), "%.*s/%s", (int)n, p, name);
		if (access(buf, X_OK) == 0 && realpath(buf, out))
			return true;
		p += n + (p[n] == ':');
	}
	return false;
}

static int check_etms(const struct cst_addr_filter *f, const struct cst_etm_pmu *pmu,
		      const struct cst_log *log)
{
	for (int i = 0; pmu && i < pmu->ncpus; i++) {
		const struct cst_etm_cpu *c = &pmu->cpus[i];
		bool v3 = c->kind == cst_etm_v3;
		uint32_t reg = v3 ? c->etmccr : c->trcidr4;
		char etm[96];
		int err;

		if (!reg) {
			cst_logf(log, cst_log_warning,
				 "cpu %d's ETM: %s not readable: its address comparators are not "
				 "checked", c->cpu, v3 ? "ETMCCR" : "TRCIDR4");
			continue;
		}
		snprintf(etm, sizeof(etm), "cpu %d's ETM (%s 0x%08x)", c->cpu,
			 v3 ? "ETMCCR" : "TRCIDR4", reg);
		err = cst_addr_filter_check(f, v3 ? cst_etmccr_addr_pairs(reg)
						  : cst_trcidr4_addr_pairs(reg),
					    true, etm, log);
		if (err)
			return err;
	}
	return 0;
}

static int prepare_trigger(struct cap_rec_filter *rf, const struct cst_record_opts *o,
			   const char *root)
{
	char text[4200], prog[PATH_MAX], pidexe[64];
	const char *def = NULL;
	uint64_t type;
	int err;

	if (!o->snapshot) {
		cst_logf(o->log, cst_log_error,
			 "--trigger takes the AUX snapshot at the function: it needs --snapshot");
		return -cste_invalid;
	}
	if (o->argv && o->argv[0] && o->scope != cst_scope_pid && find_command(o->argv[0], prog))
		def = prog;
	else if (o->scope == cst_scope_pid) {
		snprintf(pidexe, sizeof(pidexe), "/proc/%d/exe", o->pid);
		if (realpath(pidexe, prog))
			def = prog;
	}
	snprintf(text, sizeof(text), "start %s", o->trigger);
	err = cst_addr_filter_parse(&rf->trigger, text, o->log);
	if (!err && cst_addr_filter_count(rf->trigger) != 1) {
		cst_logf(o->log, cst_log_error, "--trigger '%s': one function, SYM[@FILE]",
			 o->trigger);
		err = -cste_format;
	}
	if (!err)
		err = cst_addr_filter_resolve(rf->trigger, root, def, o->log);
	if (err)
		return err;
	rf->at = cst_addr_filter_get(rf->trigger, 0);
	if (!rf->at->path[0]) {
		cst_logf(o->log, cst_log_error,
			 "--trigger '%s': a uprobe needs a function in a file: write SYM@FILE",
			 o->trigger);
		return -cste_invalid;
	}
	err = cap_read_u64(root, UPROBE_TYPE, &type);
	if (err) {
		cst_logf(o->log, cst_log_error,
			 "--trigger needs the uprobe PMU: %s%s is %s (the kernel needs "
			 "CONFIG_UPROBE_EVENTS)",
			 strcmp(root, "/") ? root : "", UPROBE_TYPE,
			 err == -cste_not_found ? "missing" : "unreadable");
		return -cste_not_found;
	}
	rf->uprobe_type = (uint32_t)type;
	rf->count = o->trigger_count ? o->trigger_count : 1;
	return 0;
}

int cap_rec_filter_prepare(struct cap_rec_filter *rf, const struct cst_record_opts *o,
			   const char *root, const struct cst_etm_pmu *pmu, size_t page)
{
	int err = 0;

	memset(rf, 0, sizeof(*rf));
	rf->page = page;
	if (o->filter && !pmu) {
		cst_logf(o->log, cst_log_error,
			 "--filter filters the trace: there is none with --sideband-only");
		return -cste_invalid;
	}
	if (o->filter) {
		err = cst_addr_filter_parse(&rf->filter, o->filter, o->log);
		if (!err)
			err = cst_addr_filter_resolve(rf->filter, root, NULL, o->log);
		if (!err && cst_addr_filter_format(rf->filter, rf->text, sizeof(rf->text)) < 0) {
			cst_logf(o->log, cst_log_error, "--filter: the filter string is too long");
			err = -cste_invalid;
		}
		if (!err)
			err = check_etms(rf->filter, pmu, o->log);
	}
	if (!err && o->trigger)
		err = prepare_trigger(rf, o, root);
	return err;
}

void cap_rec_filter_fini(struct cap_rec_filter *rf)
{
	cst_addr_filter_free(rf->filter);
	cst_addr_filter_free(rf->trigger);
	rf->filter = rf->trigger = NULL;
	rf->at = NULL;
}

void cap_rec_filter_describe(const struct cap_rec_filter *rf, const struct cst_log *log)
{
	if (rf->filter)
		cst_logf(log, cst_log_info,
			 "address filter, sent with PERF_EVENT_IOC_SET_FILTER to every cs_etm "
			 "event: %s", rf->text);
	if (rf->at)
		cst_logf(log, cst_log_info,
			 "trigger: uprobe PMU type %u, config 0x0 (function entry), config1 "
			 "\"%s\", config2 0x%" PRIx64 " (file offset of %s), sample_period %" PRIu64
			 " (entry %" PRIu64 " fires), wakeup_events 1, in each cs_etm event's "
			 "group, aux_pause asked; at the sample the snapshot is taken",
			 rf->uprobe_type, rf->at->path, rf->at->start,
			 rf->at->sym[0] ? rf->at->sym : "the address", rf->count, rf->count);
}

void cap_record_describe(const struct cst_record_opts *o, const char *root,
			 const struct cst_etm_pmu *pmu, const struct cst_etm_request *req,
			 uint64_t aux_bytes, int nrings, const struct cap_rec_filter *rf)
{
	static const char *const scope[] = {"per-thread", "per-CPU", "system-wide", "pid"};
	const struct cst_log *log = o->log;

	cst_logf(log, cst_log_info, "dry run (%s): nothing is opened", root);
	cst_logf(log, cst_log_info,
		 "cs_etm type %u, config 0x%llx, config2 0x%llx (sink %s)%s", pmu->type,
		 (unsigned long long)req->config[0], (unsigned long long)req->config[2],
		 req->sink[0] ? req->sink : "default", req->user_only ? ", user only" : "");
	cst_logf(log, cst_log_info, "%s, %d ring(s), AUX %llu KiB each, %s mode",
		 scope[o->scope], nrings, (unsigned long long)(aux_bytes / 1024),
		 o->snapshot ? "snapshot" : "normal");
	cap_rec_filter_describe(rf, log);
	for (int i = 0; i < pmu->ncpus; i++) {
		const struct cst_etm_cpu *c = &pmu->cpus[i];

		if (c->kind == cst_etm_v3)
			cst_logf(log, cst_log_info,
				 "cpu %d: %s ETMIDR 0x%08x ETMCCER 0x%08x ETMCCR 0x%08x ETMCR 0x%08x "
				 "trace ID 0x%02x",
				 c->cpu, c->is_ptm ? "PTM" : "ETMv3", c->etmidr, c->etmccer, c->etmccr,
				 c->etmcr, c->traceid);
		else
			cst_logf(log, cst_log_info,
				 "cpu %d: %s TRCIDR0 0x%08x TRCIDR1 0x%08x TRCIDR2 0x%08x TRCIDR4 "
				 "0x%08x TRCIDR8 0x%08x TRCAUTHSTATUS 0x%08x TRCCONFIGR 0x%08x trace "
				 "ID 0x%02x",
				 c->cpu, c->kind == cst_etm_ete ? "ETE" : "ETMv4", c->trcidr0,
				 c->trcidr1, c->trcidr2, c->trcidr4, c->trcidr8, c->trcauthstatus,
				 c->trcconfigr, c->traceid);
	}
}

int cap_rec_filter_apply(const struct cap_rec_filter *rf, int fd, const struct cst_log *log)
{
	if (!rf->filter || ioctl(fd, PERF_EVENT_IOC_SET_FILTER, rf->text) == 0)
		return 0;
	cst_logf(log, cst_log_error,
		 "PERF_EVENT_IOC_SET_FILTER \"%s\": %s: %s", rf->text, strerror(errno),
		 errno == EOPNOTSUPP ? "the CoreSight driver refused it (more entries than "
				       "it takes, or ranges with start/stop points)"
		 : errno == ENOENT ? "a file it names does not exist on this system"
				   : "the kernel could not apply it (its syntax, or a file)");
	return errno == EOPNOTSUPP ? -cste_unsupported : -cste_invalid;
}

int cap_trigger_open(struct cap_rec_filter *rf, struct cap_trigger *t, pid_t pid, int cpu,
		     int group, bool enable_on_exec, bool inherit, const struct cst_log *log)
{
	uint8_t attr[PERF_ATTR_SIZE_VER7];
	bool pause = group >= 0 && !rf->pause_refused;

	memset(t, 0, sizeof(*t));
	for (;;) {
		cst_uprobe_attr_fill(attr, sizeof(attr), rf->uprobe_type, rf->at->path,
				     rf->at->start, rf->count, enable_on_exec, pause);
		((struct perf_event_attr *)(void *)attr)->inherit = inherit;
		t->fd = (int)syscall(SYS_perf_event_open, attr, pid, cpu, group,
				     PERF_FLAG_FD_CLOEXEC);
		if (t->fd >= 0 || !pause || (errno != EINVAL && errno != EOPNOTSUPP))
			break;
		pause = false;
		rf->pause_refused = true;
		cst_logf(log, cst_log_warning,
			 "this kernel does not pause AUX output at the trigger (aux_pause: Linux "
			 "6.13 and a PMU that can): the snapshot is taken when cstrace wakes "
			 "up, and holds what ran meanwhile too");
	}
	if (t->fd < 0) {
		int e = errno;

		cst_logf(log, cst_log_error, "perf_event_open(uprobe %s @ 0x%" PRIx64 "): %s%s",
			 rf->at->path, rf->at->start, strerror(e),
			 e == EACCES || e == EPERM ? " (uprobe events need root or CAP_PERFMON)" : "");
		return e == EACCES || e == EPERM ? -cste_permission : -cste_io;
	}
	t->len = 2 * rf->page;
	t->base = mmap(NULL, t->len, PROT_READ | PROT_WRITE, MAP_SHARED, t->fd, 0);
	if (t->base == MAP_FAILED) {
		t->base = NULL;
		cst_logf(log, cst_log_error, "mmap of the trigger's ring: %s", strerror(errno));
		return -cste_io;
	}
	return 0;
}

bool cap_trigger_fired(const struct cap_trigger *t, uint64_t *ip, uint64_t *time)
{
	const uint8_t *pg = t->base, *rec;
	uint64_t head, off;

	if (!pg)
		return false;
	head = cst_ring_load_u64(pg + CST_MMAP_DATA_HEAD);
	if (!head)
		return false;
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	off = cst_le64(pg + CST_MMAP_DATA_OFFSET);
	rec = pg + (off ? off : t->len / 2);
	/* PERF_RECORD_SAMPLE of IDENTIFIER|IP|TID|TIME|CPU: id, ip, pid/tid, time */
	if (cst_le32(rec) == PERF_RECORD_SAMPLE && cst_le16(rec + 6) >= 8 + 40) {
		*ip = cst_le64(rec + 16);
		*time = cst_le64(rec + 32);
	}
	return true;
}

void cap_trigger_close(struct cap_trigger *t)
{
	if (t->base)
		munmap(t->base, t->len);
	if (t->fd >= 0)
		close(t->fd);
	t->base = NULL;
	t->fd = -1;
}
