/* Error explanations for perf_event_open and mmap failures: each names the setting
 * behind the failure and the value to change it to. */
#include "cstrace/capture.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "root.h"

static void explain_permission(const char *root, bool system_wide, char *msg, size_t msglen)
{
	int64_t paranoid = 99;
	bool known = cap_read_s64(root, "/proc/sys/kernel/perf_event_paranoid", &paranoid) == 0;
	char level[32] = "unknown";

	if (known)
		snprintf(level, sizeof(level), "%lld", (long long)paranoid);
	if (system_wide)
		snprintf(msg, msglen,
			 "perf_event_open: permission denied (kernel.perf_event_paranoid = %s): "
			 "per-CPU and system-wide trace (-a, -C) need perf_event_paranoid <= 0 "
			 "or CAP_PERFMON; as root run 'sysctl -w kernel.perf_event_paranoid=0', "
			 "or trace just your command with --per-thread",
			 level);
	else
		snprintf(msg, msglen,
			 "perf_event_open: permission denied (kernel.perf_event_paranoid = %s): "
			 "tracing your own command needs perf_event_paranoid <= 1, or <= 2 with "
			 "user space only (cs_etm/.../u); as root run 'sysctl -w "
			 "kernel.perf_event_paranoid=1', or grant CAP_PERFMON",
			 level);
}

/* mmap of a ring: EPERM when the locked-memory budget is exceeded (perf_mmap
 * charges perf_event_mlock_kb per online CPU, then RLIMIT_MEMLOCK), ENOMEM when
 * the kernel cannot allocate the AUX pages (rb_alloc_aux). */
static void explain_mmap(const char *root, bool perm, uint64_t aux_bytes, int nrings, char *msg,
			 size_t msglen)
{
	uint64_t mlock_kb = 516, fit_kb, fit_pages = 0, rlim_kb, budget_kb;
	long psz = sysconf(_SC_PAGESIZE), online = sysconf(_SC_NPROCESSORS_ONLN);
	uint64_t page_kb = psz > 1024 ? (uint64_t)psz / 1024 : 4;
	uint64_t want_pages = aux_bytes / (page_kb * 1024);
	struct rlimit rl = {0, 0};

	if (nrings < 1)
		nrings = 1;
	cap_read_u64(root, "/proc/sys/kernel/perf_event_mlock_kb", &mlock_kb);
	getrlimit(RLIMIT_MEMLOCK, &rl);
	rlim_kb = rl.rlim_cur == RLIM_INFINITY ? UINT64_MAX / 4096 : rl.rlim_cur / 1024;
	budget_kb = mlock_kb * (uint64_t)(online > 0 ? online : 1) + rlim_kb;
	fit_kb = budget_kb / (uint64_t)nrings;
	fit_kb = fit_kb > page_kb * 65 ? fit_kb - page_kb * 65 : 0; /* less the data area */
	while ((fit_pages ? fit_pages * 2 : 1) * page_kb <= fit_kb)
		fit_pages = fit_pages ? fit_pages * 2 : 1;
	/* Within the budget and still ENOMEM: the allocation itself failed. */
	if (!perm && fit_pages >= want_pages && want_pages > 1)
		fit_pages = want_pages / 2;
	if (fit_pages)
		snprintf(msg, msglen,
			 "mmap of the AUX area (%llu KiB per ring, %d ring(s)) failed: %s "
			 "(kernel.perf_event_mlock_kb = %llu per CPU, ulimit -l = %llu KiB); "
			 "-m %llu (%llu KiB) would fit, or raise 'ulimit -l' or 'sysctl -w "
			 "kernel.perf_event_mlock_kb=%llu'",
			 (unsigned long long)(aux_bytes / 1024), nrings,
			 perm ? "over the locked-memory limit"
			      : "the kernel could not allocate it (sinks without scatter-gather "
				"need large contiguous blocks)",
			 (unsigned long long)mlock_kb, (unsigned long long)rlim_kb,
			 (unsigned long long)fit_pages, (unsigned long long)(fit_pages * page_kb),
			 (unsigned long long)((aux_bytes / 1024 + page_kb * 65) * (uint64_t)nrings));
	else
		snprintf(msg, msglen,
			 "mmap of the AUX area (%llu KiB) failed: no lockable memory left "
			 "(kernel.perf_event_mlock_kb = %llu, ulimit -l = %llu KiB); raise them",
			 (unsigned long long)(aux_bytes / 1024), (unsigned long long)mlock_kb,
			 (unsigned long long)rlim_kb);
}

void cst_capture_explain_errno(int errnum, const char *root, bool system_wide,
			       uint64_t aux_bytes, int ncpus, char *msg, size_t msglen)
{
	if (!msg || !msglen)
		return;
	switch (errnum) {
	case EACCES:
	case EPERM:
		if (aux_bytes)
			explain_mmap(root, true, aux_bytes, ncpus, msg, msglen);
		else
			explain_permission(root, system_wide, msg, msglen);
		break;
	case ENOMEM:
		explain_mmap(root, false, aux_bytes, ncpus, msg, msglen);
		break;
	case EOPNOTSUPP:
		snprintf(msg, msglen,
			 "this event has no AUX area support (EOPNOTSUPP): only cs_etm and other "
			 "hardware-trace PMUs can map one");
		break;
	case EBUSY:
		snprintf(msg, msglen,
			 "the sink or ETM is busy (EBUSY): another perf session or sysfs-mode "
			 "capture holds it; stop it, or write 0 to "
			 "/sys/bus/coresight/devices/<sink>/enable_sink");
		break;
	case EINVAL:
		snprintf(msg, msglen,
			 "perf_event_open refused the event (EINVAL): the sink may not be "
			 "reachable from every traced CPU's ETM, or a term is not supported by "
			 "this ETM; try another sink (-e cs_etm/@SINK/) or fewer terms");
		break;
	case ENOENT:
	case ENODEV:
		snprintf(msg, msglen,
			 "the kernel has no such PMU or CPU (%s): check that the CPUs asked for "
			 "(-C) are online and have an ETM",
			 strerror(errnum));
		break;
	case ESRCH:
		snprintf(msg, msglen, "no such process (-p): it exited or never existed");
		break;
	default:
		snprintf(msg, msglen, "%s", strerror(errnum));
	}
}
