/* Sysfs-mode capture: no perf. Enables a sink and the ETMs through /sys/bus/coresight,
 * runs the command under ptrace to catch its exit, reads /dev/<sink>, writes a snapshot. */
#include "cstrace/capture.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cstrace/snapshot.h"
#include "cstrace/source.h"
#include "rec_filter.h"
#include "root.h"

#define CS_DIR "/sys/bus/coresight/devices"
#define MAX_SRC CST_ETM_MAX_CPUS
#define MAX_MAPS 256

struct src {
	int cpu;
	char dev[32];
	struct cst_source_cfg cfg; /* protocol and registers as read from sysfs */
};

struct map {
	uint64_t start, end, offset;
	char path[512];
};

struct sysfs_run {
	const struct cst_sysfs_opts *o;
	const char *root;
	struct src src[MAX_SRC];
	int nsrc;
	char names[1024]; /* devices seen, for error messages */
	struct map maps[MAX_MAPS];
	int nmaps;
	struct cst_snap_writer *w; /* the snapshot: it appears whole at the end */
	struct cst_addr_filter *filter; /* --filter, resolved */
	struct cap_sysfs_src fsrc[MAX_SRC];
};

static int on_device(void *ctx, const char *name)
{
	struct sysfs_run *r = ctx;
	size_t n = strlen(r->names);
	int cpu;

	if (!strncmp(name, "tmc_", 4) || !strncmp(name, "etb", 3) || !strncmp(name, "tpiu", 4) ||
	    !strncmp(name, "trbe", 4))
		snprintf(r->names + n, sizeof(r->names) - n, "%s%s", n ? ", " : "", name);
	if (sscanf(name, "etm%d", &cpu) == 1 && r->nsrc < MAX_SRC) {
		if (r->o->cpu_mask && (cpu > 63 || !((r->o->cpu_mask >> cpu) & 1)))
			return 0;
		memset(&r->src[r->nsrc], 0, sizeof(r->src[0]));
		r->src[r->nsrc].cpu = cpu;
		snprintf(r->src[r->nsrc].dev, sizeof(r->src[0].dev), "%s", name);
		r->nsrc++;
	}
	return 0;
}

/* The first of several possible attribute names that reads as a number. */
static uint32_t read_reg(const char *root, const char *dev, const char *const *files,
			 uint32_t fallback)
{
	char path[512];
	uint64_t v;

	for (; *files; files++) {
		snprintf(path, sizeof(path), CS_DIR "/%s/%s", dev, *files);
		if (cap_read_u64(root, path, &v) == 0)
			return (uint32_t)v;
	}
	return fallback;
}

#define FILES(...) ((const char *const[]){__VA_ARGS__, NULL})

/* The source's protocol and registers. The driver publishes the ID registers
 * under the names of the source table; the programmed ones under its own names. */
static void read_source(const char *root, struct src *s)
{
	struct cst_source_cfg *c = &s->cfg;
	char path[512];
	uint64_t v;

	memset(c, 0, sizeof(*c));
	c->cpu = s->cpu;
	snprintf(c->name, sizeof(c->name), "ETM_%d", s->cpu);
	snprintf(path, sizeof(path), CS_DIR "/%s/trcidr/trcidr0", s->dev);
	c->protocol = cap_read_u64(root, path, &v) == 0 ? cst_proto_etmv4i : cst_proto_etmv3;
	for (const struct cst_source_reg *r = cst_source_regs(c->protocol); r->name; r++) {
		/* unreadable: a Cortex-A7's ETMIDR, a non-secure debugger's view of
		 * TRCAUTHSTATUS, else 0 */
		uint32_t fallback = !strcmp(r->key, "etmidr")	     ? 0x410cf250
				    : !strcmp(r->key, "trcauthstatus") ? 0xcc
									: 0;

		if (r->idfile)
			*cst_source_reg_ptr(c, r) = read_reg(root, s->dev, FILES(r->idfile), fallback);
	}
	if (cst_protocol_is_v4(c->protocol)) {
		c->regs.etmv4.trcconfigr =
			read_reg(root, s->dev, FILES("mgmt/trcconfig", "trcconfigr"), 0x1);
		c->regs.etmv4.trctraceidr =
			read_reg(root, s->dev, FILES("mgmt/trctraceid", "trctraceid", "traceid"),
				 0x10 + 2 * (uint32_t)s->cpu);
		if (cst_trcdevarch_is_ete(c->regs.etmv4.trcdevarch))
			c->protocol = cst_proto_ete;
	} else {
		c->regs.etmv3.etmcr = read_reg(root, s->dev, FILES("mgmt/etmcr"), 0);
		c->regs.etmv3.etmtraceidr = read_reg(root, s->dev,
						     FILES("traceid", "mgmt/etmtraceidr"),
						     0x10 + 2 * (uint32_t)s->cpu);
		if (cst_etmidr_is_ptm(c->regs.etmv3.etmidr))
			c->protocol = cst_proto_ptm;
	}
}

/* The core type from /proc/cpuinfo's "CPU part" of that processor. */
static const char *core_name(const char *root, int cpu, bool v3)
{
	char path[4096], line[256];
	int cur = -1;
	unsigned part;
	FILE *f;

	if (cap_path(root, "/proc/cpuinfo", path, sizeof(path)) == 0 && (f = fopen(path, "r"))) {
		while (fgets(line, sizeof(line), f)) {
			sscanf(line, "processor : %d", &cur);
			if (cur == cpu && sscanf(line, "CPU part : %x", &part) == 1) {
				const struct cst_core_info *core = cst_core_by_part(part);

				if (core) {
					fclose(f);
					return core->name;
				}
			}
		}
		fclose(f);
	}
	/* No cpuinfo (a fixture): the common core of each ETM generation. */
	return v3 ? "Cortex-A7" : "Cortex-A53";
}

/* Copy the executable mappings of the stopped tracee into dump files. */
static void dump_maps(struct sysfs_run *r, pid_t pid)
{
	char path[64], line[1024];
	FILE *f;
	int mem;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "r");
	snprintf(path, sizeof(path), "/proc/%d/mem", (int)pid);
	mem = open(path, O_RDONLY | O_CLOEXEC);
	if (!f || mem < 0) {
		cst_logf(r->o->log, cst_log_warning, "cannot read the memory map of %d", (int)pid);
		if (f)
			fclose(f);
		if (mem >= 0)
			close(mem);
		return;
	}
	while (fgets(line, sizeof(line), f) && r->nmaps < MAX_MAPS) {
		struct map *m = &r->maps[r->nmaps];
		char perms[8] = "", file[512] = "";
		uint64_t len, done = 0;
		char out[4096], name[64];
		uint8_t buf[65536];
		int fd;

		if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %7s %" SCNx64 " %*s %*s %511[^\n]",
			   &m->start, &m->end, perms, &m->offset, file) < 4 || perms[2] != 'x')
			continue;
		if (!strcmp(file, "[vsyscall]")) /* not readable through /proc/pid/mem */
			continue;
		snprintf(m->path, sizeof(m->path), "%s", file);
		snprintf(name, sizeof(name), "mem_%" PRIx64 ".bin", m->start);
		if (cst_snap_writer_path(r->w, name, out, sizeof(out)) < 0)
			continue;
		fd = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		if (fd < 0)
			continue;
		len = m->end - m->start;
		while (done < len) {
			size_t want = len - done < sizeof(buf) ? (size_t)(len - done) : sizeof(buf);
			ssize_t n = pread(mem, buf, want, (off_t)(m->start + done));

			if (n <= 0 || write(fd, buf, (size_t)n) != n)
				break;
			done += (uint64_t)n;
		}
		close(fd);
		if (done) {
			m->end = m->start + done;
			r->nmaps++;
		} else {
			unlink(out);
		}
	}
	fclose(f);
	close(mem);
}

/* Stop the sources: called at the tracee's exit stop, so its last
 * instructions are in the buffer and nothing much after them. */
static void sources_off(struct sysfs_run *r)
{
	char path[512];

	for (int i = 0; i < r->nsrc; i++) {
		snprintf(path, sizeof(path), CS_DIR "/%s/enable_source", r->src[i].dev);
		cap_write(r->root, path, "0");
	}
}

static int sources_on(struct sysfs_run *r)
{
	char path[512];
	int err;

	snprintf(path, sizeof(path), CS_DIR "/%s/enable_sink", r->o->sink);
	err = cap_write(r->root, path, "1");
	for (int i = 0; i < r->nsrc && !err; i++) {
		snprintf(path, sizeof(path), CS_DIR "/%s/enable_source", r->src[i].dev);
		err = cap_write(r->root, path, "1");
	}
	if (err == -cste_permission)
		cst_logf(r->o->log, cst_log_error,
			 "writing %s%s: permission denied; sysfs-mode capture needs root",
			 strcmp(r->root, "/") ? r->root : "", path);
	else if (err)
		cst_logf(r->o->log, cst_log_error, "writing %s failed: %s", path, cst_strerror(err));
	return err;
}

/* Run the command under ptrace: stop at its exec to start trace, stop at its
 * exit to stop trace and read its memory map while it still exists. */
static int run_traced(struct sysfs_run *r, int *exit_status)
{
	pid_t pid = fork();
	int status, err = 0;
	bool on = false;

	if (pid < 0) {
		cst_logf(r->o->log, cst_log_error, "fork: %s", strerror(errno));
		return -cste_io;
	}
	if (pid == 0) {
		ptrace(PTRACE_TRACEME, 0, NULL, NULL);
		execvp(r->o->argv[0], r->o->argv);
		fprintf(stderr, "cstrace: cannot run '%s': %s\n", r->o->argv[0], strerror(errno));
		_exit(127);
	}
	for (;;) {
		int sig = 0;

		if (waitpid(pid, &status, 0) != pid) {
			err = -cste_io;
			break;
		}
		if (WIFEXITED(status) || WIFSIGNALED(status)) {
			*exit_status = status;
			break;
		}
		if (!WIFSTOPPED(status))
			continue;
		if (!on && WSTOPSIG(status) == SIGTRAP) {
			/* at the exec: from here on the program is the command */
			ptrace(PTRACE_SETOPTIONS, pid, NULL,
			       (void *)(long)(PTRACE_O_TRACEEXIT | PTRACE_O_EXITKILL));
			/* the filters on the program's mappings, which exist from here */
			if (r->filter)
				err = cap_sysfs_filter_program(r->filter, r->fsrc, r->nsrc, r->root,
							       pid, false, r->o->log);
			if (!err)
				err = sources_on(r);
			if (err) {
				kill(pid, SIGKILL);
				waitpid(pid, &status, 0);
				return err;
			}
			on = true;
		} else if (status >> 8 == (SIGTRAP | (PTRACE_EVENT_EXIT << 8))) {
			sources_off(r);
			dump_maps(r, pid);
		} else {
			sig = WSTOPSIG(status);
		}
		ptrace(PTRACE_CONT, pid, NULL, (void *)(long)sig);
	}
	if (on)
		sources_off(r);
	else if (!err) {
		/* it never reached its exec: nothing was traced */
		cst_logf(r->o->log, cst_log_error, "cannot run '%s' (see the message above)", r->o->argv[0]);
		err = -cste_not_found;
	}
	return err;
}

static int read_sink(struct sysfs_run *r, struct cst_sysfs_result *res)
{
	static const uint8_t barrier[16] = {0xff, 0xff, 0xff, 0x7f, 0xff, 0xff, 0xff, 0x7f,
					    0xff, 0xff, 0xff, 0x7f, 0xff, 0xff, 0xff, 0x7f};
	char dev[256], in[4096], out[4096];
	uint8_t buf[65536];
	ssize_t n;
	int fd, ofd, err = 0;

	snprintf(dev, sizeof(dev), "/dev/%s", r->o->sink);
	if (cap_path(r->root, dev, in, sizeof(in)) < 0)
		return -cste_invalid;
	fd = open(in, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		cst_logf(r->o->log, cst_log_error, "cannot read the sink buffer %s: %s", in, strerror(errno));
		return errno == EACCES || errno == EPERM ? -cste_permission : -cste_io;
	}
	snprintf(dev, sizeof(dev), "%s.bin", r->o->sink);
	if (cst_snap_writer_path(r->w, dev, out, sizeof(out)) < 0) {
		close(fd);
		return -cste_nomem;
	}
	ofd = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (ofd < 0) {
		close(fd);
		cst_logf(r->o->log, cst_log_error, "cannot create %s: %s", out, strerror(errno));
		return -cste_io;
	}
	while ((n = read(fd, buf, sizeof(buf))) > 0) {
		/* The driver puts barrier packets first when its buffer wrapped. */
		if (!res->buffer_bytes && n >= 16 && !memcmp(buf, barrier, 16))
			res->buffer_full = true;
		if (write(ofd, buf, (size_t)n) != n) {
			err = -cste_io;
			break;
		}
		res->buffer_bytes += (uint64_t)n;
	}
	if (n < 0)
		err = -cste_io;
	close(fd);
	if (close(ofd))
		err = -cste_io;
	if (err)
		cst_logf(r->o->log, cst_log_error, "copying %s to %s failed", in, out);
	return err;
}

/* The snapshot: one core and ETM per source, the sink's buffer, and the memory
 * images listed under the first core (readers map one address space for all). */
static int write_snapshot(struct sysfs_run *r)
{
	struct cst_snap_writer *w = r->w;
	char buffer_file[64];
	int err = 0;

	snprintf(buffer_file, sizeof(buffer_file), "%s.bin", r->o->sink);
	if (!err)
		err = cst_snap_writer_set_buffer(w, "ETB_0", buffer_file);
	for (int i = 0; i < r->nsrc && !err; i++) {
		const struct src *s = &r->src[i];
		char name[32], file[32], src_file[32];
		int core;

		snprintf(name, sizeof(name), "cpu_%d", s->cpu);
		snprintf(file, sizeof(file), "cpu_%d.ini", s->cpu);
		snprintf(src_file, sizeof(src_file), "etm_%d.ini", s->cpu);
		core = cst_snap_writer_add_core(w, &(struct cst_snap_core){
			.name = name, .file = file,
			.type = core_name(r->root, s->cpu, cst_protocol_is_v3(s->cfg.protocol)),
			.source_file = src_file, .source = &s->cfg});
		if (core < 0)
			err = core;
		for (int m = 0; i == 0 && m < r->nmaps && !err; m++) {
			char mem[64];

			/* copied from /proc/PID/mem when the program stopped */
			snprintf(mem, sizeof(mem), "mem_%" PRIx64 ".bin", r->maps[m].start);
			err = cst_snap_writer_add_dump(w, core, mem, r->maps[m].start, NULL,
						       r->maps[m].end - r->maps[m].start);
		}
	}
	if (!err)
		err = cst_snap_writer_finish(w);
	if (err)
		cst_logf(r->o->log, cst_log_error, "writing the snapshot in %s failed", r->o->outdir);
	return err;
}

/* --filter: parsed, resolved (entries without @FILE are the kernel's: sysfs mode
 * traces it too) and checked against every source's comparators. */
static int prepare_filter(struct sysfs_run *r)
{
	const struct cst_log *log = r->o->log;
	int err;

	if (!r->o->filter)
		return 0;
	err = cst_addr_filter_parse(&r->filter, r->o->filter, log);
	if (!err)
		err = cst_addr_filter_resolve(r->filter, r->root, NULL, log);
	for (int i = 0; i < r->nsrc && !err; i++) {
		const struct cst_source_cfg *c = &r->src[i].cfg;
		bool v4 = cst_protocol_is_v4(c->protocol);

		r->fsrc[i] = (struct cap_sysfs_src){
			r->src[i].dev, v4,
			v4 ? cst_trcidr4_addr_pairs(c->regs.etmv4.trcidr4)
			   : cst_etmccr_addr_pairs(c->regs.etmv3.etmccr)};
	}
	if (!err)
		err = cap_sysfs_filter_check(r->filter, r->fsrc, r->nsrc, log);
	return err;
}

/* What a run would do, for a dry run: the writes, the sources, the output. */
static void describe(const struct sysfs_run *r)
{
	const struct cst_log *log = r->o->log;
	const char *root = strcmp(r->root, "/") ? r->root : "";

	cst_logf(log, cst_log_info, "dry run (%s): nothing is written and '%s' is not run",
		 r->root, r->o->argv[0]);
	/* at the exec stop, before trace is on */
	if (r->filter)
		cap_sysfs_filter_program(r->filter, r->fsrc, r->nsrc, r->root, 0, true, log);
	cst_logf(log, cst_log_info, "would write 1 to %s" CS_DIR "/%s/enable_sink", root,
		 r->o->sink);
	for (int i = 0; i < r->nsrc; i++) {
		const struct cst_source_cfg *c = &r->src[i].cfg;
		char regs[512];
		size_t n = 0;

		regs[0] = 0;
		for (const struct cst_source_reg *g = cst_source_regs(c->protocol); g && g->name;
		     g++)
			if (n < sizeof(regs))
				n += (size_t)snprintf(regs + n, sizeof(regs) - n, " %s 0x%08x", g->name,
						      cst_source_reg_get(c, g));
		cst_logf(log, cst_log_info, "would write 1 to %s" CS_DIR "/%s/enable_source: cpu %d, "
			 "%s, trace ID 0x%02x,%s",
			 root, r->src[i].dev, c->cpu, cst_protocol_name(c->protocol),
			 cst_source_trace_id(c), regs);
	}
	cst_logf(log, cst_log_info, "would read %s/dev/%s into snapshot directory %s", root,
		 r->o->sink, r->o->outdir);
}

int cst_sysfs_record(const struct cst_sysfs_opts *opts, struct cst_sysfs_result *res)
{
	const struct cst_log *log = opts ? opts->log : NULL;
	struct cst_sysfs_opts o;
	struct sysfs_run *r;
	char path[512];
	int err;

	if (!res || cst_opts_load(&o, sizeof(o), opts, "cst_sysfs_opts", log) < 0 || !o.sink ||
	    !o.outdir || !o.argv || !o.argv[0] || strchr(o.sink, '/')) {
		cst_logf(log, cst_log_error,
			 "invalid arguments (a sink name, an output directory and a command are "
			 "needed)");
		return -cste_invalid;
	}
	opts = &o;
	memset(res, 0, sizeof(*res));
	res->exit_status = -1;
	r = calloc(1, sizeof(*r));
	if (!r)
		return -cste_nomem;
	r->o = opts;
	r->root = opts->root ? opts->root : "/";
	err = cap_foreach(r->root, CS_DIR, on_device, r);
	if (err == -cste_not_found) {
		cst_logf(opts->log, cst_log_error,
			 "no %s%s: the kernel has no CoreSight support (CONFIG_CORESIGHT, "
			 "CONFIG_CORESIGHT_LINKS_AND_SINKS, CONFIG_CORESIGHT_LINK_AND_SINK_TMC, "
			 "CONFIG_CORESIGHT_SOURCE_ETM3X or _ETM4X) or the device tree does not "
			 "describe the CoreSight devices",
			 strcmp(r->root, "/") ? r->root : "", CS_DIR);
		goto out;
	}
	snprintf(path, sizeof(path), CS_DIR "/%s/enable_sink", opts->sink);
	if (!cap_exists(r->root, path)) {
		cst_logf(opts->log, cst_log_error, "sink '%s' not found in %s%s; the sinks there are: %s",
			 opts->sink, strcmp(r->root, "/") ? r->root : "", CS_DIR,
			 r->names[0] ? r->names : "none");
		err = -cste_not_found;
		goto out;
	}
	if (!r->nsrc) {
		cst_logf(opts->log, cst_log_error, "no ETM (etmN) %sin %s%s", opts->cpu_mask ? "of the CPUs asked " : "",
			 strcmp(r->root, "/") ? r->root : "", CS_DIR);
		err = -cste_not_found;
		goto out;
	}
	for (int i = 0; i < r->nsrc; i++)
		read_source(r->root, &r->src[i]);
	err = prepare_filter(r);
	if (err)
		goto out;
	if (opts->dry_run) {
		describe(r);
		res->nsources = r->nsrc;
		goto out;
	}
	{
		CST_OPTS(cst_snap_writer_opts, wo, .log = opts->log);

		/* the buffer and dumps go into the writer's temporary directory */
		err = cst_snap_writer_open(&r->w, opts->outdir, &wo);
		if (err)
			goto out;
	}
	err = run_traced(r, &res->exit_status);
	if (r->filter)
		cap_sysfs_filter_reset(r->fsrc, r->nsrc, r->root);
	if (!err)
		err = read_sink(r, res);
	snprintf(path, sizeof(path), CS_DIR "/%s/enable_sink", opts->sink);
	cap_write(r->root, path, "0");
	if (!err)
		err = write_snapshot(r);
	res->nsources = r->nsrc;
	res->nmaps = r->nmaps;
out:
	cst_snap_writer_free(r->w); /* an unfinished snapshot leaves nothing */
	cst_addr_filter_free(r->filter);
	free(r);
	return err;
}
