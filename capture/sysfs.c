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

#include "cstrace/source.h"
#include "root.h"

#define CS_DIR "/sys/bus/coresight/devices"
#define MAX_SRC CST_ETM_MAX_CPUS
#define MAX_MAPS 256

struct src {
	int cpu;
	char dev[32];
	enum { SRC_V3, SRC_V4 } kind;
	bool ptm, ete;
	uint32_t regs[16];
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
	char *msg;
	size_t msglen;
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

/* Register order in src.regs for each kind, as the snapshot lists them; their
 * numbers ("(0x...)" in a snapshot) come from the source model's table. */
static const char *const v3_regs[] = {"ETMCR", "ETMIDR", "ETMCCER", "ETMTRACEIDR"};
static const char *const v4_regs[] = {
	"TRCCONFIGR", "TRCTRACEIDR", "TRCAUTHSTATUS", "TRCIDR0",  "TRCIDR1",
	"TRCIDR2",    "TRCIDR8",     "TRCIDR9",       "TRCIDR10", "TRCIDR11",
	"TRCIDR12",   "TRCIDR13",    "TRCDEVARCH",
};

static void read_source(const char *root, struct src *s)
{
	char path[512];
	uint64_t v;

	snprintf(path, sizeof(path), CS_DIR "/%s/trcidr/trcidr0", s->dev);
	if (cap_read_u64(root, path, &v) == 0) {
		s->kind = SRC_V4;
		s->regs[0] = read_reg(root, s->dev, FILES("mgmt/trcconfig", "trcconfigr"), 0x1);
		s->regs[1] = read_reg(root, s->dev, FILES("mgmt/trctraceid", "trctraceid", "traceid"),
				      0x10 + 2 * (uint32_t)s->cpu);
		s->regs[2] = read_reg(root, s->dev, FILES("mgmt/trcauthstatus"), 0xcc);
		for (int i = 0; i < 3; i++) {
			char f[32];

			snprintf(f, sizeof(f), "trcidr/trcidr%d", i);
			s->regs[3 + i] = read_reg(root, s->dev, FILES(f), 0);
		}
		for (int i = 8; i <= 13; i++) {
			char f[32];

			snprintf(f, sizeof(f), "trcidr/trcidr%d", i);
			s->regs[6 + i - 8] = read_reg(root, s->dev, FILES(f), 0);
		}
		s->regs[12] = read_reg(root, s->dev, FILES("mgmt/trcdevarch"), 0);
		s->ete = cst_trcdevarch_is_ete(s->regs[12]);
	} else {
		s->kind = SRC_V3;
		s->regs[0] = read_reg(root, s->dev, FILES("mgmt/etmcr"), 0);
		s->regs[1] = read_reg(root, s->dev, FILES("mgmt/etmidr"), 0x410cf250);
		s->regs[2] = read_reg(root, s->dev, FILES("mgmt/etmccer"), 0);
		s->regs[3] = read_reg(root, s->dev, FILES("traceid", "mgmt/etmtraceidr"),
				      0x10 + 2 * (uint32_t)s->cpu);
		s->ptm = cst_etmidr_is_ptm(s->regs[1]);
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

/* "TRCIDR0(0x078)=0x28000EA1": a snapshot's register line. */
static size_t reg_line(char *buf, size_t size, enum cst_protocol protocol, const char *name,
		       uint32_t value)
{
	const struct cst_source_reg *reg = cst_source_reg_find(protocol, name);

	return (size_t)snprintf(buf, size, "%s(0x%03X)=0x%08X\n", name, reg ? reg->word : 0,
				value);
}

static int write_text(const char *dir, const char *name, const char *text)
{
	char path[4096];
	FILE *f;
	int err;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	if (!f)
		return -cste_io;
	err = fputs(text, f) < 0 ? -cste_io : 0;
	if (fclose(f))
		err = -cste_io;
	return err;
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
		snprintf(out, sizeof(out), "%s/%s", r->o->outdir, name);
		fd = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
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
		snprintf(r->msg, r->msglen,
			 "writing %s%s: permission denied; sysfs-mode capture needs root",
			 strcmp(r->root, "/") ? r->root : "", path);
	else if (err)
		snprintf(r->msg, r->msglen, "writing %s failed: %s", path, cst_strerror(err));
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
		snprintf(r->msg, r->msglen, "fork: %s", strerror(errno));
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
		snprintf(r->msg, r->msglen, "cannot run '%s' (see the message above)", r->o->argv[0]);
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
		snprintf(r->msg, r->msglen, "cannot read the sink buffer %s: %s", in, strerror(errno));
		return errno == EACCES || errno == EPERM ? -cste_permission : -cste_io;
	}
	snprintf(out, sizeof(out), "%s/%s.bin", r->o->outdir, r->o->sink);
	ofd = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (ofd < 0) {
		close(fd);
		snprintf(r->msg, r->msglen, "cannot create %s: %s", out, strerror(errno));
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
		snprintf(r->msg, r->msglen, "copying %s to %s failed", in, out);
	return err;
}

static int write_snapshot(struct sysfs_run *r)
{
	char buf[8192], name[64];
	size_t n;
	int err;

	/* snapshot.ini: cores first, then sources */
	n = (size_t)snprintf(buf, sizeof(buf), "[snapshot]\nversion=1.0\n\n[device_list]\n");
	for (int i = 0; i < r->nsrc; i++)
		n += (size_t)snprintf(buf + n, sizeof(buf) - n, "device%d=cpu_%d.ini\n", i,
				      r->src[i].cpu);
	for (int i = 0; i < r->nsrc; i++)
		n += (size_t)snprintf(buf + n, sizeof(buf) - n, "device%d=etm_%d.ini\n",
				      r->nsrc + i, r->src[i].cpu);
	snprintf(buf + n, sizeof(buf) - n, "\n[trace]\nmetadata=trace.ini\n");
	err = write_text(r->o->outdir, "snapshot.ini", buf);
	/* trace.ini: one buffer, every source in it */
	n = (size_t)snprintf(buf, sizeof(buf),
			     "[trace_buffers]\nbuffers=buffer0\n\n[buffer0]\nname=ETB_0\n"
			     "file=%s.bin\nformat=coresight\n\n[source_buffers]\n",
			     r->o->sink);
	for (int i = 0; i < r->nsrc; i++)
		n += (size_t)snprintf(buf + n, sizeof(buf) - n, "ETM_%d=ETB_0\n", r->src[i].cpu);
	n += (size_t)snprintf(buf + n, sizeof(buf) - n, "\n[core_trace_sources]\n");
	for (int i = 0; i < r->nsrc; i++)
		n += (size_t)snprintf(buf + n, sizeof(buf) - n, "cpu_%d=ETM_%d\n", r->src[i].cpu,
				      r->src[i].cpu);
	if (!err)
		err = write_text(r->o->outdir, "trace.ini", buf);
	for (int i = 0; i < r->nsrc && !err; i++) {
		const struct src *s = &r->src[i];

		/* the core, with the memory images once (on the first core only:
		 * readers map one address space for all cores) */
		n = (size_t)snprintf(buf, sizeof(buf),
				     "[device]\nname=cpu_%d\nclass=core\ntype=%s\n\n[regs]\n", s->cpu,
				     core_name(r->root, s->cpu, s->kind == SRC_V3));
		for (int m = 0; i == 0 && m < r->nmaps && n < sizeof(buf) - 128; m++)
			n += (size_t)snprintf(buf + n, sizeof(buf) - n,
					      "\n[dump%d]\nfile=mem_%" PRIx64 ".bin\naddress=0x%" PRIx64
					      "\nlength=0x%" PRIx64 "\n",
					      m + 1, r->maps[m].start, r->maps[m].start,
					      r->maps[m].end - r->maps[m].start);
		snprintf(name, sizeof(name), "cpu_%d.ini", s->cpu);
		err = write_text(r->o->outdir, name, buf);
		if (err)
			break;
		/* the source and its registers */
		n = (size_t)snprintf(buf, sizeof(buf),
				     "[device]\nname=ETM_%d\nclass=trace_source\ntype=%s\n\n[regs]\n",
				     s->cpu,
				     s->kind == SRC_V3 ? (s->ptm ? "PTM1.1" : "ETM3.5")
				     : s->ete          ? "ETE"
							: "ETM4");
		if (s->kind == SRC_V3) {
			for (size_t k = 0; k < sizeof(v3_regs) / sizeof(v3_regs[0]); k++)
				n += reg_line(buf + n, sizeof(buf) - n, cst_proto_etmv3, v3_regs[k],
					      s->regs[k]);
		} else {
			size_t nregs = sizeof(v4_regs) / sizeof(v4_regs[0]) - (s->ete ? 0 : 1);

			for (size_t k = 0; k < nregs; k++)
				n += reg_line(buf + n, sizeof(buf) - n, cst_proto_etmv4i, v4_regs[k],
					      s->regs[k]);
		}
		snprintf(name, sizeof(name), "etm_%d.ini", s->cpu);
		err = write_text(r->o->outdir, name, buf);
	}
	if (err)
		snprintf(r->msg, r->msglen, "writing the snapshot in %s failed", r->o->outdir);
	return err;
}

int cst_sysfs_record(const struct cst_sysfs_opts *opts, struct cst_sysfs_result *res, char *msg,
		     size_t msglen)
{
	struct sysfs_run *r;
	char path[512], dummy[8];
	int err;

	if (!msg || !msglen) {
		msg = dummy;
		msglen = sizeof(dummy);
	}
	msg[0] = 0;
	if (!opts || opts->sz < sizeof(*opts) || !res || !opts->sink || !opts->outdir ||
	    !opts->argv || !opts->argv[0] || strchr(opts->sink, '/')) {
		snprintf(msg, msglen, "invalid arguments (a sink name, an output directory and a "
				      "command are needed)");
		return -cste_invalid;
	}
	memset(res, 0, sizeof(*res));
	res->exit_status = -1;
	r = calloc(1, sizeof(*r));
	if (!r)
		return -cste_nomem;
	r->o = opts;
	r->root = opts->root ? opts->root : "/";
	r->msg = msg;
	r->msglen = msglen;
	err = cap_foreach(r->root, CS_DIR, on_device, r);
	if (err == -cste_not_found) {
		snprintf(msg, msglen,
			 "no %s%s: the kernel has no CoreSight support (CONFIG_CORESIGHT, "
			 "CONFIG_CORESIGHT_LINKS_AND_SINKS, CONFIG_CORESIGHT_LINK_AND_SINK_TMC, "
			 "CONFIG_CORESIGHT_SOURCE_ETM3X or _ETM4X) or the device tree does not "
			 "describe the CoreSight devices",
			 strcmp(r->root, "/") ? r->root : "", CS_DIR);
		goto out;
	}
	snprintf(path, sizeof(path), CS_DIR "/%s/enable_sink", opts->sink);
	if (!cap_exists(r->root, path)) {
		snprintf(msg, msglen, "sink '%s' not found in %s%s; the sinks there are: %s",
			 opts->sink, strcmp(r->root, "/") ? r->root : "", CS_DIR,
			 r->names[0] ? r->names : "none");
		err = -cste_not_found;
		goto out;
	}
	if (!r->nsrc) {
		snprintf(msg, msglen, "no ETM (etmN) %sin %s%s", opts->cpu_mask ? "of the CPUs asked " : "",
			 strcmp(r->root, "/") ? r->root : "", CS_DIR);
		err = -cste_not_found;
		goto out;
	}
	for (int i = 0; i < r->nsrc; i++)
		read_source(r->root, &r->src[i]);
	if (mkdir(opts->outdir, 0755) && errno != EEXIST) {
		snprintf(msg, msglen, "cannot create %s: %s", opts->outdir, strerror(errno));
		err = -cste_io;
		goto out;
	}
	err = run_traced(r, &res->exit_status);
	if (!err)
		err = read_sink(r, res);
	snprintf(path, sizeof(path), CS_DIR "/%s/enable_sink", opts->sink);
	cap_write(r->root, path, "0");
	if (!err)
		err = write_snapshot(r);
	res->nsources = r->nsrc;
	res->nmaps = r->nmaps;
out:
	free(r);
	return err;
}
