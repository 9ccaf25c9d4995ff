/* perf-mode recording: opens the cs_etm and sideband events for a command, a pid or
 * CPUs, maps their rings, drains them into perf.data until the command ends or the user stops. */
#include "cstrace/capture.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cstrace/perfdata.h"
#include "rec_filter.h"

#define DATA_PAGES 64 /* data area: sideband and AUX records (256 KiB with 4 KiB pages) */
#define MAX_RINGS (CST_ETM_MAX_CPUS + 1)

struct rec_ring {
	int fd;        /* the event whose ring this is */
	int dummy_fd;  /* the sideband event writing into it (or -1) */
	int cpu;       /* -1 per-thread */
	void *base;
	size_t base_len;
	void *aux;
	size_t aux_len;
};

struct session {
	const struct cst_record_opts *o;
	const char *root;
	struct cst_etm_pmu pmu;
	struct cst_etm_request req;
	struct rec_ring rings[MAX_RINGS];
	int nrings;
	int nwant;     /* rings asked for (the AUX memory budget is shared by all) */
	uint8_t etm_attr[PERF_ATTR_SIZE_VER7], dummy_attr[PERF_ATTR_SIZE_VER7];
	uint64_t etm_ids[MAX_RINGS], dummy_ids[MAX_RINGS];
	int netm_ids, ndummy_ids;
	size_t page;
	uint64_t aux_bytes;
	pid_t child;
	int go_fd, status_fd, sfd;
	sigset_t oldmask;
	struct cst_consumer *c;
	struct cap_rec_filter rf;          /* --filter, --trigger */
	struct cap_trigger trig[MAX_RINGS]; /* the trigger's uprobe, one per ring */
};

static int sys_perf_event_open(void *attr, pid_t pid, int cpu, int group, unsigned long flags)
{
	return (int)syscall(SYS_perf_event_open, attr, pid, cpu, group, flags);
}

static int ring_enable(void *ctx)
{
	struct rec_ring *r = ctx;

	return ioctl(r->fd, PERF_EVENT_IOC_ENABLE, 0) ? -cste_io : 0;
}

static int ring_disable(void *ctx)
{
	struct rec_ring *r = ctx;

	return ioctl(r->fd, PERF_EVENT_IOC_DISABLE, 0) ? -cste_io : 0;
}

static const struct cst_ring_ops ring_ops = {sizeof(struct cst_ring_ops), ring_enable,
					     ring_disable};

static int fail_errno(struct session *s, int e, const char *what, bool mmap_aux)
{
	char why[768];
	bool wide = s->o->scope == cst_scope_cpus || s->o->scope == cst_scope_system;

	cst_capture_explain_errno(e, s->root, wide, mmap_aux ? s->aux_bytes : 0,
				  s->nwant ? s->nwant : 1, why, sizeof(why));
	cst_logf(s->o->log, cst_log_error, "%s: %s", what, why);
	if (e == EACCES || e == EPERM)
		return -cste_permission;
	if (e == ENOMEM)
		return -cste_nomem;
	if (e == EOPNOTSUPP)
		return -cste_unsupported;
	if (e == EBUSY)
		return -cste_busy;
	return -cste_io;
}

static uint64_t pow2_at_least(uint64_t v)
{
	uint64_t p = 1;

	while (p < v)
		p <<= 1;
	return p;
}

/* The AUX size: -m pages, else the snapshot size, else perf's defaults
 * (4 MiB when privileged, 128 KiB otherwise). */
static uint64_t aux_size(const struct cst_record_opts *o, size_t page)
{
	if (o->aux_pages)
		return pow2_at_least(o->aux_pages) * page;
	if (o->snapshot && o->snapshot_size)
		return pow2_at_least((o->snapshot_size + page - 1) / page) * page;
	return geteuid() == 0 ? 4 << 20 : 128 << 10;
}

/* The CPUs to open events on: -1 alone for per-thread scopes. */
static int pick_cpus(struct session *s, int *cpus)
{
	const struct cst_record_opts *o = s->o;
	int n = 0;

	if (o->scope == cst_scope_per_thread || o->scope == cst_scope_pid) {
		cpus[0] = -1;
		return 1;
	}
	if (!o->sideband_only) {
		for (int i = 0; i < s->pmu.ncpus && n < MAX_RINGS; i++)
			if (!o->cpu_mask || (s->pmu.cpus[i].cpu < 64 &&
					     (o->cpu_mask >> s->pmu.cpus[i].cpu) & 1))
				cpus[n++] = s->pmu.cpus[i].cpu;
	} else {
		long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
		for (int c = 0; c < ncpu && c < 64 && n < MAX_RINGS; c++)
			if (!o->cpu_mask || (o->cpu_mask >> c) & 1)
				cpus[n++] = c;
	}
	return n;
}

static int start_child(struct session *s)
{
	int go[2], st[2];

	if (pipe2(go, O_CLOEXEC) || pipe2(st, O_CLOEXEC)) {
		cst_logf(s->o->log, cst_log_error, "pipe: %s", strerror(errno));
		return -cste_io;
	}
	s->child = fork();
	if (s->child < 0) {
		cst_logf(s->o->log, cst_log_error, "fork: %s", strerror(errno));
		return -cste_io;
	}
	if (s->child == 0) {
		char c;
		int e;

		close(go[1]);
		close(st[0]);
		sigprocmask(SIG_SETMASK, &s->oldmask, NULL);
		/* Wait until the events exist: enable_on_exec fires at the exec. */
		if (read(go[0], &c, 1) != 1)
			_exit(127);
		execvp(s->o->argv[0], s->o->argv);
		e = errno;
		if (write(st[1], &e, sizeof(e)) < 0)
			_exit(127);
		_exit(127);
	}
	close(go[0]);
	close(st[1]);
	s->go_fd = go[1];
	s->status_fd = st[0];
	return 0;
}

static int map_ring(struct session *s, struct rec_ring *r, bool with_aux)
{
	r->base_len = (1 + DATA_PAGES) * s->page;
	r->base = mmap(NULL, r->base_len, PROT_READ | PROT_WRITE, MAP_SHARED, r->fd, 0);
	if (r->base == MAP_FAILED) {
		r->base = NULL;
		return fail_errno(s, errno, "mmap of the data area", false);
	}
	if (with_aux) {
		uint8_t *pg = r->base;
		uint64_t off = r->base_len;

		cst_put_le64(pg + CST_MMAP_AUX_OFFSET, off);
		cst_put_le64(pg + CST_MMAP_AUX_SIZE, s->aux_bytes);
		/* Read-only selects overwrite (snapshot) mode in rb_alloc_aux. */
		r->aux_len = s->aux_bytes;
		r->aux = mmap(NULL, r->aux_len, PROT_READ | (s->o->snapshot ? 0 : PROT_WRITE),
			      MAP_SHARED, r->fd, (off_t)off);
		if (r->aux == MAP_FAILED) {
			r->aux = NULL;
			return fail_errno(s, errno, "mmap of the AUX area", true);
		}
	}
	return 0;
}

static int open_events(struct session *s)
{
	const struct cst_record_opts *o = s->o;
	bool task = o->scope == cst_scope_per_thread || o->scope == cst_scope_cpus;
	bool per_cpu_task = o->scope == cst_scope_cpus;
	pid_t pid = task ? s->child : o->scope == cst_scope_pid ? o->pid : -1;
	bool user_only = s->req.user_only || geteuid() != 0;
	int cpus[MAX_RINGS], ncpus = pick_cpus(s, cpus);
	int err;

	if (!ncpus) {
		cst_logf(s->o->log, cst_log_error, "no traced CPU has an ETM (see -C and cs_etm/cpuN)");
		return -cste_not_found;
	}
	s->nwant = ncpus;
	if (!o->sideband_only) {
		struct perf_event_attr *a = (void *)s->etm_attr;

		cst_etm_attr_fill(s->etm_attr, sizeof(s->etm_attr), &s->pmu, &s->req, task, o->snapshot);
		a->inherit = per_cpu_task;
		if (user_only)
			a->exclude_kernel = 1;
	}
	cst_dummy_attr_fill(s->dummy_attr, sizeof(s->dummy_attr), task, user_only, per_cpu_task);
	for (int i = 0; i < ncpus; i++) {
		struct rec_ring *r = &s->rings[s->nrings];
		char what[64];
		int dfd;

		memset(r, 0, sizeof(*r));
		r->cpu = cpus[i];
		r->fd = r->dummy_fd = -1;
		s->nrings++; /* counted now so that teardown closes what did open */
		snprintf(what, sizeof(what), "perf_event_open(%s, cpu %d)",
			 o->sideband_only ? "dummy" : "cs_etm", cpus[i]);
		if (!o->sideband_only) {
			r->fd = sys_perf_event_open(s->etm_attr, pid, cpus[i], -1, PERF_FLAG_FD_CLOEXEC);
			if (r->fd < 0)
				return fail_errno(s, errno, what, false);
			ioctl(r->fd, PERF_EVENT_IOC_ID, &s->etm_ids[s->netm_ids++]);
			err = cap_rec_filter_apply(&s->rf, r->fd, o->log);
			if (err < 0)
				return err;
		}
		dfd = sys_perf_event_open(s->dummy_attr, pid, cpus[i], -1, PERF_FLAG_FD_CLOEXEC);
		if (dfd < 0)
			return fail_errno(s, errno, "perf_event_open(dummy sideband event)", false);
		ioctl(dfd, PERF_EVENT_IOC_ID, &s->dummy_ids[s->ndummy_ids++]);
		r->dummy_fd = dfd;
		if (r->fd < 0) {
			r->fd = dfd;
			r->dummy_fd = -1;
		}
		err = map_ring(s, r, !o->sideband_only);
		if (err < 0)
			return err;
		/* Sideband into the trace event's ring, as perf does, so one
		 * reader sees records of both in order. */
		if (r->dummy_fd >= 0 && ioctl(r->dummy_fd, PERF_EVENT_IOC_SET_OUTPUT, r->fd)) {
			cst_logf(s->o->log, cst_log_error, "PERF_EVENT_IOC_SET_OUTPUT: %s", strerror(errno));
			return -cste_io;
		}
		/* the trigger in the trace event's group: the AUX output it pauses */
		if (s->rf.at && (err = cap_trigger_open(&s->rf, &s->trig[s->nrings - 1], pid, cpus[i],
							o->sideband_only ? -1 : r->fd, task,
							per_cpu_task, o->log)) < 0)
			return err;
	}
	return 0;
}

static void fill_perf_attr(struct cst_perf_attr *pa, const uint8_t *raw)
{
	const struct perf_event_attr *a = (const void *)raw;

	memset(pa, 0, sizeof(*pa));
	pa->type = a->type;
	pa->size = PERF_ATTR_SIZE_VER7;
	pa->config = a->config;
	pa->sample_period = a->sample_period;
	pa->sample_type = a->sample_type;
	pa->read_format = a->read_format;
	pa->flags = cst_le64(raw + 40); /* the bitfield word follows read_format */
	pa->wakeup_events = a->wakeup_events;
	pa->config1 = a->config1;
	pa->config2 = a->config2;
	pa->aux_watermark = a->aux_watermark;
}

static int open_output(struct session *s)
{
	struct cst_perf_writer_opts wo = {.sz = sizeof(wo), .log = s->o->log};
	struct cst_perf_attr pa[2];
	struct cst_perf_etm_info info;
	int err, na = 0;

	wo.cmdline = (const char *const *)s->o->argv;
	if (!s->o->sideband_only) {
		fill_perf_attr(&pa[na], s->etm_attr);
		pa[na].ids = s->etm_ids;
		pa[na++].nids = (uint64_t)s->netm_ids;
		err = cst_etm_pmu_etm_info(&s->pmu, s->o->snapshot, &info);
		if (err < 0)
			return err;
	}
	fill_perf_attr(&pa[na], s->dummy_attr);
	pa[na].ids = s->dummy_ids;
	pa[na++].nids = (uint64_t)s->ndummy_ids;
	{
		struct cst_consumer_opts co = {
			.sz = sizeof(co), .log = s->o->log, .output = s->o->output,
			.aux_log = s->o->aux_log, .aux_log_light = s->o->aux_log_light, .writer = &wo, .page_size = s->page,
			.snapshot = s->o->snapshot, .attrs = pa, .nattrs = na,
			.etm_info = s->o->sideband_only ? NULL : &info,
		};

		err = cst_consumer_open(&s->c, &co);
	}
	if (!s->o->sideband_only)
		cst_perf_etm_info_fini(&info);
	if (err < 0)
		return err;
	for (int i = 0; i < s->nrings; i++) {
		struct rec_ring *r = &s->rings[i];
		struct cst_ring_desc d = {
			.sz = sizeof(d), .base = r->base, .page_size = s->page,
			.data_size = DATA_PAGES * s->page, .aux = r->aux, .aux_size = r->aux_len,
			.overwrite = s->o->snapshot, .idx = (uint32_t)i,
			.tid = r->cpu < 0 && s->child > 0 ? (uint32_t)s->child
			       : r->cpu < 0 && s->o->scope == cst_scope_pid ? (uint32_t)s->o->pid
									  : UINT32_MAX,
			.cpu = (uint32_t)r->cpu, .ops = &ring_ops, .ops_ctx = r,
		};

		err = cst_consumer_add_ring(s->c, &d);
		if (err < 0)
			return err;
	}
	return 0;
}

/* The trigger fired (its uprobe's sample is there): the snapshot now, then no more
 * trace (nothing after it would be kept). Returns what the snapshot returned. */
static int triggered(struct session *s, struct pollfd *pfd, struct cst_record_result *res)
{
	int err = 0;

	for (int i = 0; i < s->nrings && !res->triggered; i++)
		res->triggered = cap_trigger_fired(&s->trig[i], &res->trigger_ip, &res->trigger_time);
	if (!res->triggered)
		return 0;
	err = cst_consumer_snapshot(s->c);
	for (int i = 0; i < s->nrings; i++) {
		if (!s->o->sideband_only)
			ioctl(s->rings[i].fd, PERF_EVENT_IOC_DISABLE, 0);
		ioctl(s->trig[i].fd, PERF_EVENT_IOC_DISABLE, 0);
		pfd[s->nrings + 1 + i].fd = -1;
	}
	res->trigger_paused = !s->rf.pause_refused && !s->o->sideband_only;
	return err;
}

static int run_loop(struct session *s, struct cst_record_result *res)
{
	struct pollfd pfd[2 * MAX_RINGS + 1];
	int nhup, nfds = s->nrings + 1;

	for (int i = 0; i < s->nrings; i++)
		pfd[i] = (struct pollfd){.fd = s->rings[i].fd, .events = POLLIN};
	pfd[s->nrings] = (struct pollfd){.fd = s->sfd, .events = POLLIN};
	for (int i = 0; s->rf.at && i < s->nrings; i++, nfds++)
		pfd[nfds] = (struct pollfd){.fd = s->trig[i].fd, .events = POLLIN};
	for (;;) {
		/* The timeout only bounds how long trace waits in the rings. */
		int n = poll(pfd, (nfds_t)nfds, 500);
		uint64_t ready = 0;

		if (n < 0 && errno != EINTR)
			return -cste_io;
		for (int i = 0; i < s->nrings && i < 64 && n > 0; i++)
			if (pfd[i].revents & POLLIN)
				ready |= 1ULL << i;
		cst_consumer_note_wake(s->c, n > 0 ? (uint32_t)n : 0, ready);
		if (cst_consumer_drain(s->c) < 0)
			return 0; /* the output is full or broken: finish the file */
		if (s->rf.at && !res->triggered && triggered(s, pfd, res) < 0)
			return 0;
		if (n > 0 && (pfd[s->nrings].revents & POLLIN)) {
			struct signalfd_siginfo si;

			while (read(s->sfd, &si, sizeof(si)) == sizeof(si)) {
				cst_consumer_note_signal(s->c, (int)si.ssi_signo);
				if (si.ssi_signo == SIGUSR2 && s->o->snapshot) {
					if (cst_consumer_snapshot(s->c) < 0)
						return 0;
				} else if (si.ssi_signo == SIGINT || si.ssi_signo == SIGTERM ||
					   si.ssi_signo == SIGHUP) {
					res->interrupted = true;
					return 0;
				}
			}
		}
		if (s->child > 0) {
			int status;

			if (waitpid(s->child, &status, WNOHANG) == s->child) {
				res->exit_status = status;
				s->child = -s->child; /* reaped; keep the pid for AUXTRACE */
				return 0;
			}
		}
		/* -p: every per-thread event hangs up when the task exits. */
		nhup = 0;
		for (int i = 0; i < s->nrings; i++)
			nhup += n > 0 && (pfd[i].revents & POLLHUP);
		if (s->o->scope == cst_scope_pid && nhup == s->nrings)
			return 0;
	}
}

/* What a recording would open, for --dry-run and fixture roots. */
static void describe(struct session *s)
{
	int cpus[MAX_RINGS];

	cap_record_describe(s->o, s->root, &s->pmu, &s->req, s->aux_bytes, pick_cpus(s, cpus),
			    &s->rf);
}

static void teardown(struct session *s)
{
	cst_consumer_free(s->c);
	cap_rec_filter_fini(&s->rf);
	for (int i = 0; i < s->nrings; i++) {
		struct rec_ring *r = &s->rings[i];

		cap_trigger_close(&s->trig[i]);
		if (r->aux)
			munmap(r->aux, r->aux_len);
		if (r->base)
			munmap(r->base, r->base_len);
		if (r->dummy_fd >= 0)
			close(r->dummy_fd);
		if (r->fd >= 0)
			close(r->fd);
	}
	if (s->go_fd >= 0)
		close(s->go_fd);
	if (s->status_fd >= 0)
		close(s->status_fd);
	if (s->sfd >= 0)
		close(s->sfd);
	sigprocmask(SIG_SETMASK, &s->oldmask, NULL);
}

/* The command must not outlive a failed or interrupted recording. */
static void end_child(struct session *s, struct cst_record_result *res)
{
	int status;

	if (s->child <= 0)
		return;
	if (s->go_fd >= 0) {
		close(s->go_fd); /* it never got the go: it exits by itself */
		s->go_fd = -1;
	} else {
		kill(s->child, SIGTERM);
	}
	if (waitpid(s->child, &status, 0) == s->child && res)
		res->exit_status = status;
	s->child = -s->child;
}

int cst_record_run(const struct cst_record_opts *opts, struct cst_record_result *res)
{
	struct cst_record_opts o;
	struct session s;
	sigset_t mask;
	int err = 0, e;

	if (!res || cst_opts_load(&o, sizeof(o), opts, "cst_record_opts",
				  opts ? opts->log : NULL) < 0) {
		cst_logf(opts ? opts->log : NULL, cst_log_error, "invalid arguments");
		return -cste_invalid;
	}
	opts = &o;
	memset(res, 0, sizeof(*res));
	res->exit_status = -1;
	if (!opts->argv && opts->scope != cst_scope_pid && opts->scope != cst_scope_system) {
		cst_logf(opts->log, cst_log_error, "no command to trace: give one after --, or use -p PID or -a");
		return -cste_invalid;
	}
	memset(&s, 0, sizeof(s));
	s.o = opts;
	s.root = opts->root ? opts->root : "/";
	s.go_fd = s.status_fd = s.sfd = -1;
	s.page = (size_t)sysconf(_SC_PAGESIZE);
	for (int i = 0; i < MAX_RINGS; i++)
		s.trig[i].fd = -1;
	if (!opts->sideband_only) {
		err = cst_etm_pmu_discover(&s.pmu, s.root, opts->log);
		if (err < 0)
			return err;
		err = cst_etm_request_parse(&s.req, &s.pmu, opts->event ? opts->event : "cs_etm//",
					    opts->log);
		if (err < 0)
			return err;
		cst_etm_pmu_apply_config(&s.pmu, &s.req);
		s.aux_bytes = aux_size(opts, s.page);
	}
	err = cap_rec_filter_prepare(&s.rf, opts, s.root, opts->sideband_only ? NULL : &s.pmu,
				     s.page);
	res->trigger = opts->trigger != NULL;
	if (!err && s.rf.at)
		snprintf(res->trigger_what, sizeof(res->trigger_what), "%.64s @ %.160s, entry %llu",
			 s.rf.at->sym[0] ? s.rf.at->sym : "address", s.rf.at->path,
			 (unsigned long long)s.rf.count);
	if (err < 0 || (!opts->sideband_only && (opts->dry_run || strcmp(s.root, "/")))) {
		if (!err)
			describe(&s);
		res->dry_run = !err;
		cap_rec_filter_fini(&s.rf);
		return err;
	}
	/* Signals arrive through a signalfd: no handler, no global state. */
	sigemptyset(&mask);
	sigaddset(&mask, SIGCHLD);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGHUP);
	sigaddset(&mask, SIGUSR2);
	sigprocmask(SIG_BLOCK, &mask, &s.oldmask);
	s.sfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	if (s.sfd < 0) {
		cst_logf(opts->log, cst_log_error, "signalfd: %s", strerror(errno));
		err = -cste_io;
		goto out;
	}
	if (opts->argv && opts->scope != cst_scope_pid) {
		err = start_child(&s);
		if (err < 0)
			goto out;
	}
	err = open_events(&s);
	if (err < 0)
		goto out;
	err = open_output(&s);
	if (err < 0)
		goto out;
	if (opts->scope == cst_scope_pid || opts->scope == cst_scope_system) {
		for (int i = 0; i < s.nrings; i++) {
			ioctl(s.rings[i].fd, PERF_EVENT_IOC_ENABLE, 0);
			if (s.rings[i].dummy_fd >= 0)
				ioctl(s.rings[i].dummy_fd, PERF_EVENT_IOC_ENABLE, 0);
			if (s.trig[i].fd >= 0)
				ioctl(s.trig[i].fd, PERF_EVENT_IOC_ENABLE, 0);
		}
	}
	if (s.go_fd >= 0) {
		if (write(s.go_fd, "g", 1) != 1) {
			err = -cste_io;
			goto out;
		}
		close(s.go_fd);
		s.go_fd = -1;
		/* The status pipe closes at a successful exec, or carries errno. */
		if (read(s.status_fd, &e, sizeof(e)) == sizeof(e)) {
			cst_logf(opts->log, cst_log_error, "cannot run '%s': %s", opts->argv[0], strerror(e));
			err = -cste_not_found;
			goto out;
		}
	}
	err = run_loop(&s, res);
	/* Stop tracing so the sinks copy what they hold into AUX (pmu::stop),
	 * then take what is left. */
	for (int i = 0; i < s.nrings; i++)
		if (!opts->snapshot)
			ioctl(s.rings[i].fd, PERF_EVENT_IOC_DISABLE, 0);
	if (s.rf.at && !res->triggered && !err)
		cst_logf(opts->log, cst_log_warning,
			 "the trigger (%s) never fired: the snapshot at the end is kept instead",
			 res->trigger_what);
	if (opts->snapshot && !res->triggered && !cst_consumer_output_stopped(s.c))
		cst_consumer_snapshot(s.c);
	cst_consumer_drain(s.c);
out:
	end_child(&s, err < 0 ? NULL : res);
	if (s.c) {
		int ferr = cst_consumer_finish(s.c, err, res);

		if (ferr < 0 && !err)
			err = ferr;
	}
	teardown(&s);
	return err;
}
