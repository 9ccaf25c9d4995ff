/* The doctor: checks a system (through its sysroot) against what tracing needs and
 * what the board profile expects, and gives each problem with its exact fix. */
#include "board_int.h"

#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

struct doc {
	const struct cst_sysroot *root;
	const struct cst_board *b;
	cst_check_fn fn;
	void *ctx;
	int problems;
	/* the kernel options check_kconfig found not set ("CONFIG_CORESIGHT, ..."):
	 * what fails because of them is told as following from that problem */
	char kconfig_missing[1024];
};

/* The check @id (cst_verdict_follows: its cause) with a detail. */
static void report_check(struct doc *d, const char *id, enum cst_verdict v, const char *subject,
			 const char *fix, const char *cause, const char *detail)
{
	struct cst_check c = {id, v, subject, detail, v == cst_verdict_problem ? fix : NULL,
			      v == cst_verdict_follows ? cause : NULL};

	if (v == cst_verdict_problem)
		d->problems++;
	if (d->fn)
		d->fn(d->ctx, &c);
}

static void report(struct doc *d, const char *id, enum cst_verdict v, const char *subject,
		   const char *fix, const char *fmt, ...) __attribute__((format(printf, 6, 7)));
static void report(struct doc *d, const char *id, enum cst_verdict v, const char *subject,
		   const char *fix, const char *fmt, ...)
{
	char detail[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(detail, sizeof(detail), fmt, ap);
	va_end(ap);
	report_check(d, id, v, subject, fix, "kconfig", detail);
}

/* CONFIG_@opt was found not set. */
static bool option_off(const struct doc *d, const char *opt)
{
	char want[96];
	const char *p = d->kconfig_missing;
	size_t n = (size_t)snprintf(want, sizeof(want), "CONFIG_%s", opt);

	while ((p = strstr(p, want))) {
		if (p[n] == '\0' || p[n] == ',')
			return true;
		p += n;
	}
	return false;
}

/* The kernel option that builds @dev's driver. */
static const char *driver_option(const struct cst_board_device *dev)
{
	switch (dev->type) {
	case cst_bdev_etm:
		return dev->source.protocol == cst_proto_etmv3 || dev->source.protocol == cst_proto_ptm
			       ? "CORESIGHT_SOURCE_ETM3X" : "CORESIGHT_SOURCE_ETM4X";
	case cst_bdev_stm: return "CORESIGHT_STM";
	case cst_bdev_funnel:
	case cst_bdev_replicator: return "CORESIGHT_LINKS_AND_SINKS";
	case cst_bdev_etf:
	case cst_bdev_etr:
	case cst_bdev_etb: return "CORESIGHT_LINK_AND_SINK_TMC";
	case cst_bdev_tpiu: return "CORESIGHT_SINK_TPIU";
	case cst_bdev_cti: return "CORESIGHT_CTI";
	default: return "CORESIGHT";
	}
}

/* @dev cannot probe: CoreSight or its driver is not built (the kconfig problem). */
static bool driver_off(const struct doc *d, const struct cst_board_device *dev)
{
	return option_off(d, "CORESIGHT") || option_off(d, driver_option(dev));
}


static void check_kconfig(struct doc *d)
{
	static const char *const generic[] = {
		"CONFIG_PERF_EVENTS=y", "CONFIG_CORESIGHT=y", "CONFIG_CORESIGHT_LINKS_AND_SINKS=y",
		"CONFIG_CORESIGHT_LINK_AND_SINK_TMC=y"};
	const char *const *want = d->b ? (const char *const *)d->b->kconfig : generic;
	int nwant = d->b ? d->b->nkconfig : (int)(sizeof(generic) / sizeof(generic[0]));
	char where[256], missing[1024] = "", fix[1400] = "", val[64];
	char *text = brd_kconfig_read(d->root, where, sizeof(where));
	int nmissing = 0;

	if (!text) {
		report(d, "kconfig", cst_verdict_problem, "kernel config",
		       "modprobe configs (or build with CONFIG_IKCONFIG_PROC=y), or install the "
		       "kernel's config as /boot/config-$(uname -r)",
		       "cannot see the kernel configuration: no /proc/config.gz and no /boot/config-*");
		return;
	}
	strcat(fix, "scripts/config");
	for (int i = 0; i < nwant; i++) {
		char name[128];
		const char *eq = strchr(want[i], '=');
		const char *have;

		snprintf(name, sizeof(name), "%.*s", (int)(eq - want[i]), want[i]);
		have = brd_kconfig_value(text, name, val, sizeof(val));
		/* A driver built as a module (m) satisfies "=y": it only needs loading. */
		if (have && (!strcmp(have, eq + 1) || (!strcmp(eq + 1, "y") && !strcmp(have, "m"))))
			continue;
		nmissing++;
		if (strlen(missing) + strlen(name) + 4 < sizeof(missing))
			snprintf(missing + strlen(missing), sizeof(missing) - strlen(missing), "%s%s",
				 missing[0] ? ", " : "", name);
		if (strlen(fix) + strlen(name) + 8 < sizeof(fix))
			snprintf(fix + strlen(fix), sizeof(fix) - strlen(fix), " -e %s", name + 7);
	}
	free(text);
	snprintf(d->kconfig_missing, sizeof(d->kconfig_missing), "%s", missing);
	if (nmissing) {
		strncat(fix, " && make olddefconfig, then rebuild and boot the kernel",
			sizeof(fix) - strlen(fix) - 1);
		report(d, "kconfig", cst_verdict_problem, where, fix, "%d option%s not set: %s",
		       nmissing, nmissing > 1 ? "s" : "", missing);
	} else {
		report(d, "kconfig", cst_verdict_ok, where, NULL, "all %d CoreSight options set",
		       nwant);
	}
}

static bool have_pmu(const struct cst_sysroot *root)
{
	return cst_sysroot_exists(root, "/sys/bus/event_source/devices/cs_etm/type");
}

static void check_pmu(struct doc *d)
{
	int64_t type;
	char fix[512];

	if (cst_sysroot_read_s64(d->root, "/sys/bus/event_source/devices/cs_etm/type", &type) == 0) {
		report(d, "pmu", cst_verdict_ok, "cs_etm PMU", NULL,
		       "present (perf event type %lld)", (long long)type);
		return;
	}
	snprintf(fix, sizeof(fix),
		 "enable the CoreSight options above and the ETM driver, check 'dmesg | grep -i "
		 "coresight' for probe errors%s%s%s",
		 d->b && d->b->dt_overlay ? "; before Linux " : "",
		 d->b && d->b->dt_overlay ? (d->b->dt_upstream ? d->b->dt_upstream : "?") : "",
		 d->b && d->b->dt_overlay ? " apply the DT overlay shipped with the profile ("
					    "cstrace boards show NAME)" : "");
	/* the ETM drivers register cs_etm: without CoreSight or them it cannot be */
	report(d, "pmu",
	       option_off(d, "CORESIGHT") || option_off(d, "CORESIGHT_SOURCE_ETM4X") ||
			       option_off(d, "CORESIGHT_SOURCE_ETM3X")
		       ? cst_verdict_follows : cst_verdict_problem,
	       "cs_etm PMU", fix,
	       "no /sys/bus/event_source/devices/cs_etm: perf cannot trace with CoreSight");
}

static void check_devices(struct doc *d)
{
	char sysname[64], subject[128], fix[512], unbuilt[512] = "";
	int present = 0, total = 0, nunbuilt = 0;

	for (int i = 0; i < d->b->ndevices; i++) {
		const struct cst_board_device *dev = &d->b->devices[i];

		total++;
		if (cst_sys_device_by_base(d->root, dev->base, sysname, sizeof(sysname)) == 0) {
			present++;
			continue;
		}
		/* its driver is not built: one line for all of those, under the cause */
		if (driver_off(d, dev)) {
			if (strlen(unbuilt) + strlen(dev->name) + 8 < sizeof(unbuilt))
				snprintf(unbuilt + strlen(unbuilt), sizeof(unbuilt) - strlen(unbuilt),
					 "%s%s", nunbuilt ? ", " : "", dev->name);
			nunbuilt++;
			continue;
		}
		snprintf(subject, sizeof(subject), "%s %s @ 0x%llx", cst_bdev_type_name(dev->type),
			 dev->name, (unsigned long long)dev->base);
		snprintf(fix, sizeof(fix),
			 "check the DT node %s (status = \"okay\", compatible = \"%s\", clocks) and "
			 "'dmesg | grep %llx' for its probe error; its driver option must be set",
			 dev->dt_node, dev->compatible ? dev->compatible : "?",
			 (unsigned long long)dev->base);
		report(d, "device", cst_verdict_problem, subject, fix,
		       "not on /sys/bus/coresight: the device did not probe");
	}
	if (nunbuilt)
		report(d, "device", cst_verdict_follows, "topology", NULL,
		       "%d of the profile's %d devices did not probe, their drivers not built: %s",
		       nunbuilt, total, unbuilt);
	if (present == total)
		report(d, "device", cst_verdict_ok, "topology", NULL,
		       "all %d devices of the profile present (matched by base address)", total);
}

struct sinks_ctx {
	char list[512];
	int n;
};

static int sinks_one(void *ctx, const char *name)
{
	struct sinks_ctx *s = ctx;

	snprintf(s->list + strlen(s->list), sizeof(s->list) - strlen(s->list), "%s%s",
		 s->n ? " " : "", name);
	s->n++;
	return 0;
}

static void check_sinks(struct doc *d)
{
	struct sinks_ctx s = {"", 0};
	char path[256], subject[128], fix[1024], sysname[64];
	int pref = -1;

	cst_sysroot_foreach(d->root, "/sys/bus/event_source/devices/cs_etm/sinks", sinks_one, &s);
	if (d->b)
		for (int i = 0; i < d->b->ndevices && pref < 0; i++)
			if (d->b->devices[i].preferred)
				pref = i;
	if (pref < 0) {
		if (s.n)
			report(d, "sink", cst_verdict_ok, "perf sinks", NULL, "%s", s.list);
		else
			report(d, "sink", cst_verdict_problem, "perf sinks",
			       "enable CONFIG_CORESIGHT_LINK_AND_SINK_TMC and check that an ETF or ETR "
			       "probed ('dmesg | grep -i tmc')",
			       "cs_etm lists no sinks: perf has nowhere to put trace");
		return;
	}
	snprintf(subject, sizeof(subject), "%s %s @ 0x%llx", cst_bdev_type_name(d->b->devices[pref].type),
		 d->b->devices[pref].name, (unsigned long long)d->b->devices[pref].base);
	if (cst_sys_device_by_base(d->root, d->b->devices[pref].base, sysname, sizeof(sysname)) < 0) {
		snprintf(fix, sizeof(fix),
			 "make the TMC at 0x%llx probe (DT node %s, CONFIG_CORESIGHT_LINK_AND_SINK_TMC); "
			 "until then perf can only use: %s",
			 (unsigned long long)d->b->devices[pref].base, d->b->devices[pref].dt_node,
			 s.n ? s.list : "nothing");
		report(d, "sink", cst_verdict_problem, subject, fix,
		       "the board's perf sink is missing");
		return;
	}
	snprintf(path, sizeof(path), "/sys/bus/event_source/devices/cs_etm/sinks/%s", sysname);
	if (!cst_sysroot_exists(d->root, path)) {
		report(d, "sink", cst_verdict_problem, subject,
		       "the kernel registers TMC sinks with perf when they probe: update to a kernel "
		       "whose TMC driver supports perf (4.10 or later)",
		       "%s is present but not listed in cs_etm/sinks", sysname);
		return;
	}
	{
		/* The TMC's trace RAM in 32-bit words: tells the user how much an ETF holds
		 * (an ETR's buffer is system memory, sized by perf). */
		char rsz_path[256], size[48] = "";
		int64_t words;

		snprintf(rsz_path, sizeof(rsz_path), "/sys/bus/coresight/devices/%s/mgmt/rsz", sysname);
		if (d->b->devices[pref].type != cst_bdev_etr &&
		    cst_sysroot_read_s64(d->root, rsz_path, &words) == 0 && words > 0)
			snprintf(size, sizeof(size), " (%lld KiB of trace RAM)",
				 (long long)(words * 4 / 1024));
		report(d, "sink", cst_verdict_ok, subject, NULL,
		       "is %s%s: use perf record -e cs_etm/@%s/", sysname, size, sysname);
	}
}

/* Architecture from ID registers, in words: "ETMv3.5", "PTM1.1", "ETMv4.0". */
static void etmv3_arch(uint32_t etmidr, char *buf, size_t size)
{
	unsigned major = (etmidr >> 8) & 0xf, minor = (etmidr >> 4) & 0xf;

	if (major == 3)
		snprintf(buf, size, "PTM1.%u", minor);
	else
		snprintf(buf, size, "ETMv%u.%u", major + 1, minor);
}

static void etmv4_arch(uint32_t trcidr1, char *buf, size_t size)
{
	snprintf(buf, size, "ETMv%u.%u", (trcidr1 >> 8) & 0xf, (trcidr1 >> 4) & 0xf);
}

/* What the ETM at @dir shows itself to be, from whichever ID register exists. */
static void etm_seen_arch(const struct cst_sysroot *root, const char *dir, char *buf, size_t size)
{
	char path[PATH_MAX];
	int64_t v;

	snprintf(path, sizeof(path), "%s/%s", dir,
		 cst_source_reg_find(cst_proto_etmv4i, "TRCIDR1")->idfile);
	if (cst_sysroot_read_s64(root, path, &v) == 0) {
		etmv4_arch((uint32_t)v, buf, size);
		return;
	}
	snprintf(path, sizeof(path), "%s/%s", dir,
		 cst_source_reg_find(cst_proto_etmv3, "ETMIDR")->idfile);
	if (cst_sysroot_read_s64(root, path, &v) == 0) {
		etmv3_arch((uint32_t)v, buf, size);
		return;
	}
	snprintf(buf, size, "unknown");
}

static void check_etms(struct doc *d)
{
	int unprobed = 0;

	for (int i = 0; i < d->b->ndevices; i++) {
		const struct cst_board_device *e = &d->b->devices[i];
		char sysname[64], dir[128], subject[128], fix[768], seen[32], bad[512] = "";
		char path[PATH_MAX];
		int64_t cpu;
		int nbad = 0, nchecked = 0;

		if (e->type != cst_bdev_etm)
			continue;
		snprintf(subject, sizeof(subject), "%s @ 0x%llx (cpu%d, %s)", e->name,
			 (unsigned long long)e->base, e->cpu, e->source.core_name);
		if (cst_sys_device_by_base(d->root, e->base, sysname, sizeof(sysname)) < 0) {
			unprobed++; /* the device check told it */
			continue;
		}
		snprintf(dir, sizeof(dir), "/sys/bus/coresight/devices/%s", sysname);
		for (int r = 0; r < e->nidregs; r++) {
			const struct cst_board_idreg *reg = &e->idregs[r];
			int64_t v;

			snprintf(path, sizeof(path), "%s/%s", dir, reg->file);
			if (cst_sysroot_read_s64(d->root, path, &v) < 0) {
				nbad++;
				snprintf(bad + strlen(bad), sizeof(bad) - strlen(bad), "%s%s unreadable",
					 nbad > 1 ? ", " : "", reg->name);
				continue;
			}
			nchecked++;
			if (((uint32_t)v & reg->mask) != reg->value) {
				nbad++;
				snprintf(bad + strlen(bad), sizeof(bad) - strlen(bad),
					 "%s%s 0x%08x, expected 0x%08x", nbad > 1 ? ", " : "", reg->name,
					 (unsigned)v, reg->value);
			}
		}
		etm_seen_arch(d->root, dir, seen, sizeof(seen));
		if (nbad) {
			/* "ETMv3.5" vs "ETMv4.0": the family is what comes before the dot. */
			size_t fam = e->arch ? strcspn(e->arch, ".") : 0;
			bool arch_differs = fam && strncmp(seen, e->arch, fam) != 0;

			if (arch_differs)
				snprintf(fix, sizeof(fix),
					 "the unit at 0x%llx shows itself as %s, not %s: this is not a %s "
					 "(choose the right profile with --board), or its DT node binds the "
					 "wrong driver (compatible must be \"%s\")",
					 (unsigned long long)e->base, seen, e->arch, d->b->name,
					 e->compatible ? e->compatible : "?");
			else
				snprintf(fix, sizeof(fix),
					 "if debug access is closed the registers read wrong: check the "
					 "firmware prerequisites (cstrace boards show %s); else this core "
					 "revision is new to the profile: report the values",
					 d->b->name);
			report(d, "etm", cst_verdict_problem, subject, fix, "%s is %s: %s", sysname,
			       seen, bad);
			continue;
		}
		snprintf(path, sizeof(path), "%s/cpu", dir);
		if (cst_sysroot_read_s64(d->root, path, &cpu) == 0 && cpu != e->cpu) {
			report(d, "etm", cst_verdict_problem, subject,
			       "logical CPU numbers follow the boot CPU: capture is unaffected, but for "
			       "'cstrace decode --board' give the CPUs of this system",
			       "%s traces cpu%lld, the profile says cpu%d", sysname, (long long)cpu,
			       e->cpu);
			continue;
		}
		report(d, "etm", cst_verdict_ok, subject, NULL, "%s is %s, %d ID registers match",
		       sysname, seen, nchecked);
	}
	if (unprobed)
		report(d, "etm", cst_verdict_skip, "ID registers", NULL,
		       "%d ETM%s not probed (see the device check): %s unchecked", unprobed,
		       unprobed > 1 ? "s" : "", unprobed > 1 ? "their registers" : "its registers");
}

static void check_paranoid(struct doc *d)
{
	int64_t v;
	const char *fix = "sudo sysctl -w kernel.perf_event_paranoid=-1 (or run cstrace as root, or "
			  "give it CAP_PERFMON)";

	if (cst_sysroot_read_s64(d->root, "/proc/sys/kernel/perf_event_paranoid", &v) < 0) {
		report(d, "paranoid", cst_verdict_problem, "perf_event_paranoid",
		       "build the kernel with CONFIG_PERF_EVENTS=y",
		       "no /proc/sys/kernel/perf_event_paranoid: the kernel has no perf events");
		return;
	}
	/* Above 1, unprivileged users may not trace the kernel nor whole CPUs. */
	if (v > 1)
		report(d, "paranoid", cst_verdict_problem, "perf_event_paranoid", fix,
		       "%lld: without privileges only user-space per-thread trace is allowed%s",
		       (long long)v, v > 2 ? ", or none at all" : "");
	else
		report(d, "paranoid", cst_verdict_ok, "perf_event_paranoid", NULL, "%lld", (long long)v);
}

struct idle_ctx {
	struct doc *d;
	char enabled[256]; /* "cpu1/state1 cpu1/state2 ..." */
	int nenabled;
	int ncpus;
};

static int idle_cpu(void *ctx, const char *name)
{
	struct idle_ctx *c = ctx;
	char path[PATH_MAX];

	if (strncmp(name, "cpu", 3) || name[3] < '0' || name[3] > '9')
		return 0;
	c->ncpus++;
	for (int s = 1; s < 10; s++) {
		int64_t dis;

		snprintf(path, sizeof(path), "/sys/devices/system/cpu/%s/cpuidle/state%d/disable", name,
			 s);
		if (cst_sysroot_read_s64(c->d->root, path, &dis) < 0)
			break;
		if (dis)
			continue;
		c->nenabled++;
		if (strlen(c->enabled) + strlen(name) + 10 < sizeof(c->enabled))
			snprintf(c->enabled + strlen(c->enabled), sizeof(c->enabled) - strlen(c->enabled),
				 "%s%s/state%d", c->enabled[0] ? " " : "", name, s);
	}
	return 0;
}

/* True when every ETM's DT node asks the driver to save state over idle. */
static bool etms_keep_context(struct doc *d)
{
	int n = 0;

	for (int i = 0; i < d->b->ndevices; i++) {
		const struct cst_board_device *e = &d->b->devices[i];
		char sysname[64], path[PATH_MAX], uevent[2048];
		char *of;

		if (e->type != cst_bdev_etm)
			continue;
		n++;
		if (cst_sys_device_by_base(d->root, e->base, sysname, sizeof(sysname)) < 0)
			return false;
		snprintf(path, sizeof(path), "/sys/bus/coresight/devices/%s/../uevent", sysname);
		if (cst_sysroot_read(d->root, path, uevent, sizeof(uevent)) < 0)
			return false;
		of = strstr(uevent, "OF_FULLNAME=");
		if (!of)
			return false;
		of += 12;
		of[strcspn(of, "\n")] = '\0';
		snprintf(path, sizeof(path), "/proc/device-tree%s/arm,coresight-loses-context-with-cpu",
			 of);
		if (!cst_sysroot_exists(d->root, path))
			return false;
	}
	return n > 0;
}

static void check_cpuidle(struct doc *d)
{
	struct idle_ctx c = {d, "", 0, 0};
	char fix[512];

	if (!d->b) {
		report(d, "cpuidle", cst_verdict_skip, "CPU idle", NULL,
		       "no board profile: cannot tell whether this SoC loses trace in idle");
		return;
	}
	if (!d->b->loses_context_in_idle) {
		report(d, "cpuidle", cst_verdict_ok, "CPU idle", NULL,
		       "%s keeps ETM state in idle: nothing to do", d->b->name);
		return;
	}
	if (etms_keep_context(d)) {
		report(d, "cpuidle", cst_verdict_ok, "CPU idle", NULL,
		       "the ETM nodes carry arm,coresight-loses-context-with-cpu: the driver "
		       "saves and restores them");
		return;
	}
	cst_sysroot_foreach(d->root, "/sys/devices/system/cpu", idle_cpu, &c);
	if (!c.nenabled) {
		report(d, "cpuidle", cst_verdict_ok, "CPU idle", NULL,
		       "no deep idle state enabled on %d CPUs", c.ncpus);
		return;
	}
	snprintf(fix, sizeof(fix),
		 "for f in /sys/devices/system/cpu/cpu*/cpuidle/state[1-9]*/disable; do echo 1 | "
		 "sudo tee $f; done  (or boot with cpuidle.off=1)");
	report(d, "cpuidle", cst_verdict_problem, "CPU idle", fix,
	       "%d deep idle state%s enabled (%s): %s ETMs lose their programming there and "
	       "trace stops",
	       c.nenabled, c.nenabled > 1 ? "s" : "", c.enabled, d->b->name);
}

static void check_debugfs(struct doc *d)
{
	char mounts[16384];

	if (cst_sysroot_read(d->root, "/proc/mounts", mounts, sizeof(mounts)) >= 0 &&
	    strstr(mounts, " debugfs ")) {
		report(d, "debugfs", cst_verdict_ok, "debugfs", NULL, "mounted");
		return;
	}
	report(d, "debugfs", cst_verdict_problem, "debugfs",
	       "sudo mount -t debugfs none /sys/kernel/debug",
	       "not mounted: perf reads tracepoint formats there, and the CoreSight CPU-debug "
	       "driver reports the PC of hung cores there");
}

int cst_doctor_run(const struct cst_sysroot *root, const struct cst_doctor_opts *opts,
		   cst_check_fn fn, void *ctx)
{
	struct cst_doctor_opts o = {0};
	struct cst_board *detected = NULL;
	struct doc d = {0};
	bool bus, pmu;

	if (!root)
		return -cste_invalid;
	if (cst_opts_load(&o, sizeof(o), opts, "cst_doctor_opts", NULL) < 0)
		return -cste_invalid;
	d.root = root;
	d.fn = fn;
	d.ctx = ctx;
	d.b = o.board;
	if (!d.b) {
		int err = cst_board_detect(&detected, root, o.boards_dir, o.log);

		if (err < 0 && err != -cste_not_found)
			return err;
		d.b = detected;
	}
	bus = cst_sysroot_exists(root, "/sys/bus/coresight/devices");
	pmu = have_pmu(root);
	if (!d.b && !bus && !pmu) {
		struct utsname u;
		char detail[256];

		snprintf(detail, sizeof(detail),
			 "no /sys/bus/coresight, no cs_etm PMU and no known board in the device tree");
		if (cst_sysroot_is_live(root) && uname(&u) == 0 && strncmp(u.machine, "arm", 3) &&
		    strcmp(u.machine, "aarch64"))
			snprintf(detail + strlen(detail), sizeof(detail) - strlen(detail),
				 " (this is %s: CoreSight is an Arm feature)", u.machine);
		report(&d, "coresight", cst_verdict_problem, "CoreSight",
		       "run cstrace doctor on an Arm board with CoreSight (see 'cstrace boards list'), "
		       "or give --board NAME to check against a profile anyway",
		       "this system has no CoreSight: %s", detail);
		return cst_doctor_no_coresight;
	}
	if (d.b)
		report(&d, "board", cst_verdict_ok, d.b->name, NULL, "%s%s", d.b->title ? d.b->title : "",
		       o.board ? " (given with --board)" : " (from /proc/device-tree/compatible)");
	else
		report(&d, "board", cst_verdict_skip, "board", NULL,
		       "no profile matches /proc/device-tree/compatible: generic checks only");
	check_kconfig(&d);
	check_pmu(&d);
	if (d.b)
		check_devices(&d);
	if (pmu)
		check_sinks(&d);
	if (d.b)
		check_etms(&d);
	check_paranoid(&d);
	check_cpuidle(&d);
	check_debugfs(&d);
	cst_board_free(detected);
	return d.problems ? cst_doctor_problems : cst_doctor_ok;
}
