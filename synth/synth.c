/* cst_synth_run: QEMU ground truth → instruction classes → ETM encoder → frame
 * formatter → sink model → snapshot directory or perf.data. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "synth_int.h"

#define SYNTH_TRACE_ID 0x10 /* the kernel's legacy ID for CPU 0 */

struct core_desc {
	const char *name, *ini_name;
	enum cst_synth_arch arch;
	uint32_t idr1;
};

static const struct core_desc cores[] = {
	{"cortex-a53", "Cortex-A53", cst_synth_aarch64, 0x4100F403},
	{"cortex-a57", "Cortex-A57", cst_synth_aarch64, 0x4100F402},
	{"cortex-a7", "Cortex-A7", cst_synth_arm, 0},
};

static const struct core_desc *core_find(enum cst_synth_arch arch, const char *name)
{
	if (!name)
		name = arch == cst_synth_arm ? "cortex-a7" : "cortex-a53";
	for (size_t i = 0; i < sizeof(cores) / sizeof(cores[0]); i++)
		if (!strcasecmp(name, cores[i].name) && cores[i].arch == arch)
			return &cores[i];
	return NULL;
}

int cst_synth_core_check(enum cst_synth_arch arch, const char *core)
{
	return core_find(arch, core) ? 0 : -cste_not_found;
}

struct synth_run;

/* One trace unit: QEMU's vCPU N (guest thread N) runs on core N with ETM N. */
struct synth_cpu {
	struct synth_run *r;
	int index;
	bool used, have_prev;
	uint64_t prev_pc;
	bool prev_thumb;
	bool prev_traced;  /* in ViewInst (--filter) */
	bool ss_started;   /* the ETM's start/stop logic */
	uint64_t first_pc;
	uint8_t trace_id;
	uint32_t tid;
	struct synth_enc enc;
	/* perf: each CPU has its own sink and AUX buffer; a snapshot directory has one
	 * sink behind a funnel (run's fmt and sink) */
	struct synth_fmt fmt;
	struct synth_sink sink;
	struct synth_perf_cpu perf_cpu;
	FILE *truth;             /* truth_out's stream, NULL without --truth */
	struct cst_out truth_out;
};

struct synth_run {
	const struct cst_synth_opts *opts;
	struct synth_qlog q;
	struct synth_fmt fmt;
	struct synth_sink sink;
	bool arm, perf;
	uint64_t icount, unknown_code;
	struct synth_cpu cpu[SYNTH_MAX_CPUS];
	int ncpus;
	uint32_t pid;
	struct synth_qlog_ids ids; /* its threads (vCPU N: ids.tids[N - 1]) and children */
	uint32_t plugin_tid[SYNTH_MAX_CPUS]; /* each vCPU's first thread, as the plugin says */
	uint64_t capacity;
	int (*step)(struct synth_enc *, const struct synth_step *);
	int (*stop)(struct synth_enc *);
	uint64_t stop_threshold;
	struct synth_perf_out perf_out;
	char prog_path[4096];
	struct cst_out log_out;  /* --keep-log: QEMU writes its temporary */
	struct synth_outs outs;  /* outputs in place before the main one */
	struct synth_filter filt;  /* --filter, --trigger */
	bool triggered;            /* the snapshot was taken: trace no more */
	uint64_t trigger_at;
};

static int run_classify(struct synth_run *r, uint64_t pc, bool thumb, struct synth_insn_info *info)
{
	uint8_t b[4] = {0};
	if (!r->arm) {
		if (!synth_codemap_get(r->q.code, pc, b, 4)) {
			r->unknown_code++;
			synth_a64_classify(0xd503201f /* NOP */, pc, info);
			return 0;
		}
		synth_a64_classify(cst_le32(b), pc, info);
		return 0;
	}
	bool ok = synth_codemap_get(r->q.code, pc, b, thumb ? 2 : 4);
	if (ok && thumb)
		synth_codemap_get(r->q.code, pc + 2, b + 2, 2);
	if (!ok) {
		r->unknown_code++;
		memset(b, 0, sizeof(b));
	}
	synth_a32_classify(b, (uint32_t)pc, thumb, info);
	return 0;
}

/* Protocol bytes of one CPU into the funnel: its trace ID in the shared frames. */
static int cpu_funnel_put(void *ctx, const uint8_t *p, size_t len)
{
	struct synth_cpu *c = ctx;
	return synth_fmt_put_id(&c->r->fmt, c->trace_id, p, len);
}

/* A thread whose ID is not known (not in the log, or a plugin run, which reads
 * no IDs) still needs a context ID of its own (views keep one call stack per
 * thread): one above every ID known. */
static uint32_t standin_tid(struct synth_run *r, int k)
{
	uint32_t top = r->pid;

	for (int i = 0; i < r->ids.ntids; i++)
		top = r->ids.tids[i] > top ? r->ids.tids[i] : top;
	cst_logf(r->opts->log, cst_log_warning,
		 "vCPU %d: no thread ID is known for it; its context ID is %u", k,
		 top + (uint32_t)(k - r->ids.ntids));
	return top + (uint32_t)(k - r->ids.ntids);
}

/* QEMU gives a new thread the vCPU index above the highest live one: a thread
 * made after the newest one ended takes its vCPU over, and its trace goes out
 * with the first owner's core, ETM and context ID. Nothing in the log says where
 * on the vCPU one thread ends and the next begins, so say it. */
static void warn_shared_vcpus(const struct synth_run *r, int nclones)
{
	int nvcpus = 0;
	for (int k = 0; k < SYNTH_MAX_CPUS; k++)
		nvcpus += r->cpu[k].used;
	if (nvcpus && nclones + 1 > nvcpus)
		cst_logf(r->opts->log, cst_log_warning,
			 "%d threads ran on %d vCPUs: QEMU gave the vCPU of a thread that had "
			 "ended to a later thread, whose trace carries the first one's context ID",
			 nclones + 1, nvcpus);
}

/* A forked child's QEMU writes its exec log to its parent's file, in the same
 * form (the vCPU numbers start again at 0), whole buffers at a time: the log
 * cannot tell whose instructions a line holds, and a trace made from it would
 * give the child's to the parent. The plugin stops tracing in a child. */
static int refuse_forks(const struct synth_run *r)
{
	const char *from = r->opts->from_log; /* else QEMU's log is a temporary */

	if (!r->ids.nforks)
		return 0;
	cst_logf(r->opts->log, cst_log_error,
		 "%s%s%s forked (%d clone() call%s without CLONE_THREAD): a child's "
		 "instructions are mixed into its parent's in QEMU's exec log, and cannot be "
		 "told apart (--plugin, AArch64 only, traces the parent alone)",
		 from ? from : "", from ? ": " : "", r->prog_path, r->ids.nforks,
		 r->ids.nforks == 1 ? "" : "s");
	return -cste_unsupported;
}

static int cpu_init(struct synth_run *r, int k)
{
	struct synth_cpu *c = &r->cpu[k];
	const struct cst_synth_opts *o = r->opts;
	c->r = r;
	c->index = k;
	c->used = true;
	c->trace_id = (uint8_t)(0x10 + 2 * k); /* the kernel's legacy IDs */
	c->ss_started = !r->filt.starts; /* stopped until a start point, if there is one */
	/* the thread the plugin named; else vCPU 0 is the main thread and vCPU N
	 * the Nth clone() (PID_IN_CONTEXTIDR puts the thread's ID in the context ID) */
	if (r->plugin_tid[k])
		c->tid = r->plugin_tid[k];
	else if (k == 0)
		c->tid = r->pid;
	else if (k - 1 < r->ids.ntids)
		c->tid = r->ids.tids[k - 1];
	else
		c->tid = standin_tid(r, k);
	struct synth_enc_cfg ec = {
		.context_id = c->tid,
		.timestamps = o->timestamps,
		.sync_period = o->sync_period,
	};
	int rc = 0;
	if (r->perf) {
		c->perf_cpu.p = &r->perf_out;
		c->perf_cpu.cpu = k;
		rc = synth_sink_init(&c->sink, r->capacity, true, o->snapshot_mode,
				     o->snapshot_size ? o->snapshot_size : r->capacity,
				     synth_perf_chunk, &c->perf_cpu);
		synth_fmt_init(&c->fmt, c->trace_id, synth_sink_put, &c->sink);
		ec.out = synth_fmt_put;
		ec.out_ctx = &c->fmt;
	} else {
		ec.out = cpu_funnel_put;
		ec.out_ctx = c;
	}
	if (r->arm)
		synth_etm3_init(&c->enc, &ec);
	else
		synth_etm4_init(&c->enc, &ec);
	if (!rc && o->truth) {
		char path[4200];
		if (k == 0)
			snprintf(path, sizeof(path), "%s", o->truth);
		else
			snprintf(path, sizeof(path), "%s.%d", o->truth, k);
		struct cst_out_opts oo = synth_out_opts(o, true);

		rc = cst_out_open(&c->truth_out, path, &oo);
		c->truth = rc ? NULL : c->truth_out.f;
	}
	if (k >= r->ncpus)
		r->ncpus = k + 1;
	return rc;
}

/* Encode a CPU's previous instruction now that we know what it ran next. */
static int run_emit(struct synth_cpu *c, bool last, uint64_t next_pc, bool next_thumb,
		    bool next_traced)
{
	struct synth_run *r = c->r;
	struct synth_step s = {
		.pc = c->prev_pc,
		.thumb = c->prev_thumb,
		.next_pc = next_pc,
		.next_thumb = next_thumb,
		.last = last,
		.icount = r->icount,
		.traced = c->prev_traced,
		.next_traced = next_traced,
	};
	if (c->truth)
		fprintf(c->truth, "%llx\n", (unsigned long long)s.pc);
	if (r->triggered)
		return 0; /* the snapshot is taken: QEMU's run goes on, its trace does not */
	run_classify(r, s.pc, s.thumb, &s.info);
	/* A system call is where the kernel may schedule the task out: pmu::stop, and
	 * the sink is read into the AUX area once enough has gathered. */
	if (r->perf && s.info.cls == synth_i_svc && !last &&
	    c->sink.len + (uint64_t)c->fmt.pos >= r->stop_threshold)
		s.stop = true;
	int rc = r->step(&c->enc, &s);
	if (!rc && s.stop) {
		rc = r->stop(&c->enc);
		if (!rc)
			rc = synth_fmt_flush(&c->fmt);
		if (!rc)
			rc = synth_sink_readout(&c->sink);
	}
	return rc;
}

/* The trigger fired: the snapshot of every CPU's ring as it is now (the trace unit
 * stopped, its sink read out into the overwrite ring, the newest SIZE bytes). */
static int run_trigger(struct synth_run *r)
{
	int rc = 0;
	for (int k = 0; k < r->ncpus && !rc; k++) {
		struct synth_cpu *c = &r->cpu[k];
		if (!c->used)
			continue;
		rc = r->stop(&c->enc);
		if (!rc)
			rc = synth_fmt_flush(&c->fmt);
		if (!rc)
			rc = synth_sink_finish(&c->sink);
	}
	r->triggered = true;
	r->trigger_at = r->icount;
	return rc;
}

static int run_insn(void *ctx, int cpu, uint64_t pc, bool thumb)
{
	struct synth_run *r = ctx;
	int rc = 0;
	if (cpu < 0 || cpu >= SYNTH_MAX_CPUS) {
		cst_logf(r->opts->log, cst_log_error, "vCPU %d: more threads than synth models (%d)",
			 cpu, SYNTH_MAX_CPUS);
		return -cste_unsupported;
	}
	if (r->opts->insn_fn) {
		struct cst_synth_insn in = {.pc = pc, .thumb = thumb};
		rc = r->opts->insn_fn(r->opts->insn_ctx, &in);
		if (rc)
			return rc;
	}
	struct synth_cpu *c = &r->cpu[cpu];
	if (!c->used) {
		rc = cpu_init(r, cpu);
		if (rc)
			return rc;
	}
	bool traced = true;
	if (r->filt.f || r->filt.trig) {
		synth_filter_update(&r->filt, &r->q);
		traced = synth_filter_traced(&r->filt, &c->ss_started, pc);
	}
	if (c->have_prev) {
		rc = run_emit(c, false, pc, thumb, traced);
		if (rc)
			return rc;
	} else {
		c->first_pc = pc | (thumb ? 1 : 0);
	}
	/* the trigger's uprobe fires before the instruction at its address runs */
	if (!r->triggered && synth_filter_trigger(&r->filt, pc)) {
		rc = run_trigger(r);
		if (rc)
			return rc;
	}
	c->have_prev = true;
	c->prev_pc = pc;
	c->prev_thumb = thumb;
	c->prev_traced = traced;
	r->icount++;
	return 0;
}

/* A mkstemp/mkdtemp template for temporary file @what, under $TMPDIR. */
static void synth_tmp_name(char *buf, size_t size, const char *what)
{
	const char *dir = getenv("TMPDIR");

	snprintf(buf, size, "%s/cstrace-%s-XXXXXX", dir && *dir ? dir : "/tmp", what);
}

/* synth_plugin_thread_fn: a vCPU's thread, known before its first instruction
 * (its context ID then is the thread's own). A later thread that takes the vCPU
 * over keeps the first one's context ID, as without the plugin
 * (warn_shared_vcpus). */
static int run_thread(void *ctx, int cpu, uint32_t tid)
{
	struct synth_run *r = ctx;

	if (cpu >= 0 && cpu < SYNTH_MAX_CPUS && !r->cpu[cpu].used && !r->plugin_tid[cpu])
		r->plugin_tid[cpu] = tid;
	return 0;
}

/* Wait until QEMU opens the plugin's FIFO for writing (or dies first: a plain
 * blocking open would then hang), and return it opened for reading. */
static int plugin_open_fifo(struct synth_run *r, const char *fifo, int pid)
{
	int fd = open(fifo, O_RDONLY | O_NONBLOCK);
	if (fd < 0)
		return -cste_io;
	for (;;) {
		struct pollfd p = {.fd = fd, .events = POLLIN};
		int n = poll(&p, 1, 100);
		if (n > 0)
			break;
		int st;
		if (waitpid((pid_t)pid, &st, WNOHANG) == pid) {
			close(fd);
			cst_logf(r->opts->log, cst_log_error,
				 "QEMU ended before the plugin wrote anything (exit status %d)",
				 WIFEXITED(st) ? WEXITSTATUS(st) : -1);
			return -cste_io;
		}
	}
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	return fd;
}

/* Ground truth through the TCG plugin: QEMU writes into a FIFO we read as it runs,
 * so that nothing of size lands on disk. QEMU's pid is the guest's pid. */
static int run_plugin(struct synth_run *r, char *const argv[], const char *log_path)
{
	const char *plugin = r->opts->plugin[0] ? r->opts->plugin : cst_synth_default_plugin();
	if (!plugin[0] || access(plugin, R_OK) != 0) {
		cst_logf(r->opts->log, cst_log_error, "synth plugin '%s' not found", plugin);
		return -cste_not_found;
	}
	char dir[4096];
	synth_tmp_name(dir, sizeof(dir), "plugin");
	if (!mkdtemp(dir))
		return -cste_io;
	char fifo[4200], tail[4200], args[8500];
	snprintf(fifo, sizeof(fifo), "%s/stream", dir);
	snprintf(tail, sizeof(tail), "%s/tail", dir);
	snprintf(args, sizeof(args), "out=%s,tail=%s", fifo, tail);
	int rc = mkfifo(fifo, 0600) == 0 ? 0 : -cste_io;
	int pid = rc ? rc : synth_qemu_spawn(r->opts, argv, log_path, plugin, args);
	if (pid < 0)
		rc = pid;
	int fd = rc ? -1 : plugin_open_fifo(r, fifo, pid);
	if (!rc && fd < 0) {
		rc = fd;
		pid = -1; /* reaped already */
	}
	if (!rc) {
		r->pid = (uint32_t)pid;
		rc = synth_plugin_read(fd, fifo, tail, r->q.code, run_insn, run_thread, r,
				       r->opts->log);
		/* a signal cuts the stream short: that is no run to encode */
		if (r->opts->stop && *r->opts->stop)
			rc = -cste_interrupted;
	}
	if (pid > 0) {
		if (rc)
			kill((pid_t)pid, SIGKILL);
		int st = synth_qemu_wait(r->opts, pid);
		if (!rc && st == -cste_interrupted)
			rc = st;
		else if (!rc && st > 0)
			cst_logf(r->opts->log, cst_log_info, "the program exited with status %d", st);
	}
	unlink(fifo);
	unlink(tail);
	rmdir(dir);
	return rc;
}

static int run_finish_trace(struct synth_run *r)
{
	int rc = 0;
	for (int k = 0; k < r->ncpus && !rc; k++) {
		struct synth_cpu *c = &r->cpu[k];
		if (!c->used)
			continue;
		if (c->have_prev)
			rc = run_emit(c, true, 0, false, false);
		if (r->triggered)
			continue; /* finished when the snapshot was taken */
		if (!rc)
			rc = r->stop(&c->enc);
		if (!rc && r->perf)
			rc = synth_fmt_flush(&c->fmt);
		if (!rc && r->perf)
			rc = synth_sink_finish(&c->sink);
	}
	if (!rc && !r->perf)
		rc = synth_fmt_flush(&r->fmt);
	if (!rc && !r->perf)
		rc = synth_sink_finish(&r->sink);
	return rc;
}

/* ID registers of the modelled core (facts 6) and the configuration we trace with. */
static void run_regs(const struct synth_run *r, const struct core_desc *core, uint32_t regs[8])
{
	if (r->arm) {
		regs[0] = synth_etm3_etmcr(r->opts->timestamps);
		regs[1] = 0x410CF250;
		regs[2] = 0x344008F2;
	} else {
		regs[0] = synth_etm4_configr(r->opts->timestamps);
		regs[1] = 0x28000EA1;
		regs[2] = core->idr1;
		regs[3] = 0x00000488;
		regs[4] = 0;
		regs[5] = 0xCC;
	}
}

static int run_write_snapshot(struct synth_run *r, const char *out, const struct core_desc *core)
{
	struct synth_snap_cfg sc = {
		.arm = r->arm,
		.core_name = core->ini_name,
		.ncpus = r->ncpus,
		.q = &r->q,
	};
	for (int k = 0; k < r->ncpus; k++) {
		/* a vCPU index QEMU never used still gets a (silent) core */
		sc.trace_id[k] = (uint8_t)(0x10 + 2 * k);
		sc.start_pc[k] = r->cpu[k].first_pc;
	}
	run_regs(r, core, sc.regs);
	uint8_t *buf;
	uint64_t len;
	int rc = synth_sink_contents(&r->sink, &buf, &len);
	if (rc)
		return rc;
	sc.buf = buf;
	sc.buf_len = len;
	rc = synth_snapshot_write(out, &sc, r->opts->log);
	free(buf);
	return rc;
}

/* QEMU writes its log itself and goes on when a write fails: a log cut short by a
 * full disk would encode a fraction of the run as if it were all of it. */
static int check_log(const struct synth_run *r, const char *log_path)
{
	int e = synth_log_cut(log_path);

	if (!e)
		return 0;
	if (r->log_out.path)
		cst_logf(r->opts->log, cst_log_error, "%s: write failed: %s (QEMU's log is cut short)",
			 r->log_out.path, strerror(e));
	else
		cst_logf(r->opts->log, cst_log_error,
			 "%s: QEMU's log is cut short: %s (TMPDIR needs room for it)", log_path,
			 strerror(e));
	return -cste_io;
}

/* The truth files and the kept log are whole once the trace is encoded: in place
 * before the main output, and removed again if that fails. */
static int commit_side_outputs(struct synth_run *r)
{
	int rc = 0;

	for (int k = 0; k < r->ncpus && !rc; k++)
		if (r->cpu[k].truth_out.path) {
			r->cpu[k].truth = NULL;
			rc = synth_outs_commit(&r->outs, &r->cpu[k].truth_out);
		}
	if (!rc && r->log_out.path)
		rc = synth_outs_commit(&r->outs, &r->log_out);
	return rc;
}

int cst_synth_run(const char *out, char *const argv[], const struct cst_synth_opts *opts,
		  struct cst_synth_stats *stats)
{
	struct cst_synth_opts o;

	if (!out || !argv || !argv[0] ||
	    cst_opts_load(&o, sizeof(o), opts, "cst_synth_opts", opts ? opts->log : NULL) < 0)
		return -cste_invalid;
	opts = &o;
	const struct core_desc *core = core_find(opts->arch, opts->core);
	if (!core) {
		cst_logf(opts->log, cst_log_error, "core '%s' does not fit the architecture",
			 opts->core ? opts->core : "");
		return -cste_invalid;
	}
	int err = synth_outputs_check(opts, out);
	if (!err && !opts->from_log)
		err = synth_program_check(opts, argv[0]);
	if (err)
		return err;
	struct synth_run *r = calloc(1, sizeof(*r));
	if (!r)
		return -cste_nomem;
	r->opts = opts;
	r->arm = opts->arch == cst_synth_arm;
	r->perf = opts->output == cst_synth_out_perf;
	r->q.arm = r->arm;
	r->q.sysroot = opts->sysroot ? opts->sysroot
				     : (r->arm ? "/usr/arm-linux-gnueabihf" : "/usr/aarch64-linux-gnu");
	/* perf.data and snapshots name the program by absolute path */
	if (!realpath(argv[0], r->prog_path))
		snprintf(r->prog_path, sizeof(r->prog_path), "%s", argv[0]);
	r->q.prog = r->prog_path;
	r->q.code = synth_codemap_alloc();
	int rc = r->q.code ? 0 : -cste_nomem;
	if (!rc && (opts->filter || opts->trigger))
		rc = synth_filter_check_opts(opts);
	if (!rc)
		rc = synth_filter_init(&r->filt, opts, r->prog_path);

	char tmplog[4096];
	synth_tmp_name(tmplog, sizeof(tmplog), "synth");
	r->q.stop = opts->stop;
	const char *log_path = opts->from_log;
	if (!rc && !log_path && opts->keep_log) {
		/* QEMU writes the temporary; it is renamed into place with the rest */
		struct cst_out_opts oo = synth_out_opts(opts, false);
		rc = cst_out_open(&r->log_out, opts->keep_log, &oo);
		log_path = r->log_out.tmp ? r->log_out.tmp : opts->keep_log;
	}
	if (!rc && !log_path) {
		int fd = mkstemp(tmplog);
		if (fd < 0)
			rc = -cste_io;
		else
			close(fd);
		log_path = tmplog;
	}
	bool use_plugin = opts->plugin && !opts->from_log;
	if (use_plugin && r->arm) {
		cst_logf(opts->log, cst_log_error,
			 "the plugin cannot tell the Thumb state: use the exec log for arm");
		rc = -cste_unsupported;
	}
	if (!rc && !opts->from_log && !use_plugin) {
		int st = synth_qemu_run(opts, argv, log_path);
		if (st < 0)
			rc = st;
		else if (st)
			cst_logf(opts->log, cst_log_info, "the program exited with status %d", st);
		if (!rc)
			rc = check_log(r, log_path);
	}
	uint64_t capacity = opts->buffer_size;
	if (!capacity)
		capacity = opts->sink == cst_synth_sink_etf ? 64 * 1024 : 4 * 1024 * 1024;
	r->capacity = capacity;
	r->stop_threshold = capacity / 2;
	r->perf_out.clock = &r->icount;
	/* a snapshot directory: one sink behind the funnel, running circularly */
	if (!rc && !r->perf)
		rc = synth_sink_init(&r->sink, capacity, false, false, 0, NULL, NULL);
	synth_fmt_init(&r->fmt, SYNTH_TRACE_ID, synth_sink_put, &r->sink);
	r->step = r->arm ? synth_etm3_step : synth_etm4_step;
	r->stop = r->arm ? synth_etm3_stop : synth_etm4_stop;
	if (!rc && use_plugin) {
		/* thread IDs need the log, which is written while QEMU runs: threads
		 * get stand-in IDs here (standin_tid) */
		rc = run_plugin(r, argv, log_path);
		if (!rc)
			rc = check_log(r, log_path);
		if (!rc) {
			struct synth_qlog_ids ids;

			synth_qlog_ids(log_path, &ids);
			warn_shared_vcpus(r, ids.nclones);
			if (ids.nforks)
				cst_logf(opts->log, cst_log_warning,
					 "%s forked %d time%s: QEMU runs each child in a process of "
					 "its own, which the plugin leaves untraced; the trace is the "
					 "parent's alone",
					 r->prog_path, ids.nforks, ids.nforks == 1 ? "" : "s");
		}
		/* then only the load addresses from the log */
		if (!rc)
			rc = synth_qlog_parse(&r->q, log_path, NULL, NULL, opts->log);
	} else if (!rc) {
		/* Context IDs are thread IDs (PID_IN_CONTEXTIDR); strace lines name them,
		 * but only after the first instructions, so take them from a first look. */
		r->pid = synth_qlog_ids(log_path, &r->ids);
		if (!r->pid)
			r->pid = 1; /* no strace line at all: any pid will do */
		rc = refuse_forks(r);
		if (!rc)
			rc = synth_qlog_parse(&r->q, log_path, run_insn, r, opts->log);
		if (!rc)
			warn_shared_vcpus(r, r->ids.nclones);
	}
	if (!rc && !r->icount) {
		cst_logf(opts->log, cst_log_error, "%s: QEMU logged no instructions", log_path);
		rc = -cste_no_trace;
	}
	if (!rc && r->filt.trig && !r->triggered)
		cst_logf(opts->log, cst_log_warning,
			 "the trigger never fired (%llu entr%s of %s): the snapshot is the one at the end",
			 (unsigned long long)r->filt.trig_hits, r->filt.trig_hits == 1 ? "y" : "ies",
			 opts->trigger);
	if (!rc)
		rc = run_finish_trace(r);
	if (!rc && r->unknown_code)
		cst_logf(opts->log, cst_log_warning,
			 "%llu executed instructions had no code bytes in the log",
			 (unsigned long long)r->unknown_code);
	if (!rc)
		rc = commit_side_outputs(r);
	if (!rc && !r->perf)
		rc = run_write_snapshot(r, out, core);
	if (!rc && r->perf) {
		r->perf_out.opts = opts;
		r->perf_out.outs = &r->outs;
		r->perf_out.q = &r->q;
		r->perf_out.arm = r->arm;
		r->perf_out.pid = r->pid;
		r->perf_out.ncpus = r->ncpus;
		for (int k = 0; k < r->ncpus; k++) {
			r->perf_out.trace_id[k] = (uint8_t)(0x10 + 2 * k);
			r->perf_out.tid[k] = r->cpu[k].used ? r->cpu[k].tid : r->pid;
		}
		run_regs(r, core, r->perf_out.regs);
		rc = synth_perf_write(&r->perf_out, out);
	}
	synth_perf_fini(&r->perf_out);
	if (stats) {
		memset(stats, 0, sizeof(*stats));
		stats->instructions = r->icount;
		uint64_t written = r->sink.written, lost = r->sink.lost;
		if (r->sink.keep && r->sink.written > r->sink.capacity)
			lost = r->sink.written - r->sink.capacity; /* overwritten in the ring */
		for (int k = 0; k < r->ncpus; k++) {
			const struct synth_cpu *c = &r->cpu[k];
			stats->branches += c->enc.branches;
			stats->exceptions += c->enc.exceptions;
			stats->trace_bytes += c->enc.bytes;
			if (r->perf) {
				written += c->sink.written;
				lost += c->sink.lost;
				stats->aux_records += c->sink.chunks;
			}
		}
		stats->sink_bytes = written - lost;
		stats->lost_bytes = lost;
		stats->triggered = r->triggered;
		stats->trigger_at = r->trigger_at;
	}
	/* a failed run leaves nothing: what was not committed goes, and what was */
	for (int k = 0; k < SYNTH_MAX_CPUS; k++) {
		cst_out_abort(&r->cpu[k].truth_out);
		if (r->cpu[k].used && r->perf)
			synth_sink_fini(&r->cpu[k].sink);
	}
	cst_out_abort(&r->log_out);
	if (rc < 0)
		synth_outs_undo(&r->outs);
	synth_outs_fini(&r->outs);
	if (!opts->from_log && !opts->keep_log)
		unlink(tmplog);
	synth_sink_fini(&r->sink);
	synth_codemap_free(r->q.code);
	synth_qlog_fini(&r->q);
	synth_filter_fini(&r->filt);
	free(r);
	return rc;
}
