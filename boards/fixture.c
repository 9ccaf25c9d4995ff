/* Fixture trees: write what a board's /sys, /proc and /boot look like to the
 * CoreSight tools, from its profile, optionally with faults, for doctor and capture tests. */
#include "board_int.h"

#include <errno.h>
#include <ftw.h>
#include <stdarg.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

struct fx {
	const struct cst_board *b;
	const char *dir;
	unsigned faults;
	int err;
	int errnum; /* errno of the first failed write: why, for the caller */
};

/* A write failed: the first failure's errno says why (a full disk). */
static void fx_io(struct fx *f)
{
	if (!f->errnum)
		f->errnum = errno ? errno : EIO;
	f->err = -cste_io;
}

static int fx_host(struct fx *f, const char *path, char *buf, size_t size)
{
	int n = snprintf(buf, size, "%s%s", f->dir, path);

	if (n < 0 || (size_t)n >= size) {
		f->err = -cste_nomem;
		return -1;
	}
	return 0;
}

/* snprintf that records truncation as an error instead of writing a wrong path. */
static void fx_fmt(struct fx *f, char *buf, size_t size, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static void fx_fmt(struct fx *f, char *buf, size_t size, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, size, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= size)
		f->err = -cste_nomem;
}

/* mkdir -p of a target path inside the fixture. */
static void fx_mkdir(struct fx *f, const char *path)
{
	char host[PATH_MAX];

	if (f->err || fx_host(f, path, host, sizeof(host)) < 0)
		return;
	for (char *p = host + strlen(f->dir) + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(host, 0755) < 0 && errno != EEXIST)
			fx_io(f);
		*p = '/';
	}
	if (mkdir(host, 0755) < 0 && errno != EEXIST)
		fx_io(f);
}

static void fx_parent(struct fx *f, const char *path)
{
	char parent[PATH_MAX];
	char *slash;

	snprintf(parent, sizeof(parent), "%s", path);
	slash = strrchr(parent, '/');
	if (slash && slash != parent) {
		*slash = '\0';
		fx_mkdir(f, parent);
	}
}

static void fx_write(struct fx *f, const char *path, const void *data, size_t len)
{
	char host[PATH_MAX];
	FILE *fp;

	fx_parent(f, path);
	if (f->err || fx_host(f, path, host, sizeof(host)) < 0)
		return;
	fp = fopen(host, "w");
	if (!fp) {
		fx_io(f);
		return;
	}
	if (len && fwrite(data, 1, len, fp) != len)
		fx_io(f);
	if (fclose(fp) != 0)
		fx_io(f);
}

static void fx_printf(struct fx *f, const char *path, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void fx_printf(struct fx *f, const char *path, const char *fmt, ...)
{
	char text[4096];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(text)) {
		f->err = -cste_nomem;
		return;
	}
	fx_write(f, path, text, (size_t)n);
}

/* A relative symbolic link, as sysfs has them, so the tree can be moved. */
static void fx_link(struct fx *f, const char *link, const char *target)
{
	char rel[PATH_MAX] = "", host[PATH_MAX];
	size_t common = 0;
	const char *rest;

	fx_parent(f, link);
	if (f->err || fx_host(f, link, host, sizeof(host)) < 0)
		return;
	/* Longest common directory prefix of the link's directory and the target. */
	for (size_t i = 0; link[i] && link[i] == target[i]; i++)
		if (link[i] == '/')
			common = i + 1;
	for (const char *p = link + common; *p; p++)
		if (*p == '/')
			strncat(rel, "../", sizeof(rel) - strlen(rel) - 1);
	rest = target + common;
	strncat(rel, rest, sizeof(rel) - strlen(rel) - 1);
	if (symlink(rel, host) < 0 && errno != EEXIST)
		fx_io(f);
}

/* Stand-in for the kernel's name hash in cs_etm/sinks/: perf only copies it. */
static uint32_t sink_hash(const char *name)
{
	uint32_t h = 2166136261u;

	for (; *name; name++)
		h = (h ^ (uint8_t)*name) * 16777619u;
	return h;
}

static const char *sys_prefix(const struct cst_board_device *d)
{
	switch (d->type) {
	case cst_bdev_etm:
		return "etm";
	case cst_bdev_stm:
		return "stm";
	case cst_bdev_funnel:
		return "funnel";
	case cst_bdev_replicator:
		return "replicator";
	case cst_bdev_etf:
		return "tmc_etf";
	case cst_bdev_etr:
		return "tmc_etr";
	case cst_bdev_etb:
		return "tmc_etb";
	case cst_bdev_tpiu:
		return "tpiu";
	case cst_bdev_cti:
		return d->cpu >= 0 ? "cti_cpu" : "cti_sys";
	default:
		return "unknown";
	}
}

static bool is_v4(const struct cst_board_device *d)
{
	return d->source.protocol == cst_proto_etmv4i || d->source.protocol == cst_proto_ete;
}

static void write_etm_regs(struct fx *f, const char *dev, const struct cst_board_device *d,
			   bool wrong_arch)
{
	char path[PATH_MAX];
	bool v4 = is_v4(d) != wrong_arch;

	struct cst_source_cfg other;
	const struct cst_source_cfg *src = &d->source;

	/* Every ID register perf and the doctor read, from the profile's full values
	 * (its decode defaults), which satisfy its masked checks by construction. With
	 * @wrong_arch, the other family's registers, from a typical core of it: what a
	 * core of another family (or the wrong driver) would show. */
	if (wrong_arch) {
		if (cst_source_cfg_parse(&other, v4 ? cst_proto_etmv4i : cst_proto_etmv3, "", NULL) < 0)
			return;
		src = &other;
	}
	for (const struct cst_source_reg *r = cst_source_regs(src->protocol); r->name; r++) {
		if (!r->idfile || (!wrong_arch && r->ete_only && src->protocol != cst_proto_ete))
			continue;
		fx_fmt(f, path, sizeof(path), "%s/%s", dev, r->idfile);
		fx_printf(f, path, "0x%x\n", cst_source_reg_get(src, r));
	}
	if (wrong_arch)
		return;
	/* perf records ts_source for ETMv4: -1 when the core has no self-hosted trace
	 * filter (FEAT_TRF), as on every ETMv4.0 part the profiles describe. */
	if (v4) {
		fx_fmt(f, path, sizeof(path), "%s/ts_source", dev);
		fx_printf(f, path, "-1\n");
	}
}

/* The address comparator attributes of coresight-etm4x and coresight-etm3x (sysfs
 * mode's --filter writes them), as a freshly probed ETM shows them. */
static void write_etm_comparators(struct fx *f, const char *dev, bool v4)
{
	static const char *const files[][2] = {
		{"reset", ""}, {"addr_idx", "0x0\n"}, {"addr_range", "0x0 0x0\n"},
		{"addr_start", "0x0\n"}, {"addr_stop", "0x0\n"}, {"addr_instdatatype", "instr\n"},
	};
	char path[PATH_MAX];

	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		if (!v4 && !strcmp(files[i][0], "addr_instdatatype"))
			continue;
		fx_fmt(f, path, sizeof(path), "%s/%s", dev, files[i][0]);
		fx_printf(f, path, "%s", files[i][1]);
	}
}

static void write_device(struct fx *f, const struct cst_board_device *d, const char *sysname,
			 bool probed, bool wrong_arch)
{
	const struct cst_board *b = f->b;
	const char *plat = "/sys/devices/platform";
	char amba[PATH_MAX], dev[PATH_MAX], path[PATH_MAX], ofpath[PATH_MAX], node[128];
	char *at;
	const char *ofprefix = "";

	/* "etf@20010000" is the AMBA device "20010000.etf". */
	fx_fmt(f, node, sizeof(node), "%s", d->dt_node);
	at = strchr(node, '@');
	if (at)
		*at = '\0';
	fx_fmt(f, amba, sizeof(amba), "%s/%llx.%s", b->sysfs_parent, (unsigned long long)d->base,
		 node);
	if (!strncmp(b->sysfs_parent, plat, strlen(plat)))
		ofprefix = b->sysfs_parent + strlen(plat); /* "" or "/soc" */
	fx_fmt(f, ofpath, sizeof(ofpath), "%s/%s", ofprefix, d->dt_node);
	fx_fmt(f, path, sizeof(path), "%s/uevent", amba);
	fx_printf(f, path,
		  "OF_NAME=%s\nOF_FULLNAME=%s\nOF_COMPATIBLE_0=%s\nOF_COMPATIBLE_1=arm,primecell\n"
		  "OF_COMPATIBLE_N=2\n",
		  node, ofpath, d->compatible ? d->compatible : "arm,primecell");
	fx_fmt(f, path, sizeof(path), "/proc/device-tree%s/compatible", ofpath);
	fx_write(f, path, d->compatible ? d->compatible : "", d->compatible ? strlen(d->compatible) + 1 : 0);
	if (!probed)
		return; /* the AMBA device exists, its driver did not bind */

	fx_fmt(f, dev, sizeof(dev), "%s/%s", amba, sysname);
	fx_mkdir(f, dev);
	fx_fmt(f, path, sizeof(path), "/sys/bus/coresight/devices/%s", sysname);
	fx_link(f, path, dev);
	switch (d->type) {
	case cst_bdev_etm:
		fx_fmt(f, path, sizeof(path), "%s/cpu", dev);
		fx_printf(f, path, "%d\n", d->cpu);
		fx_fmt(f, path, sizeof(path), "%s/enable_source", dev);
		fx_printf(f, path, "0\n");
		write_etm_regs(f, dev, d, wrong_arch);
		write_etm_comparators(f, dev, is_v4(d) != wrong_arch);
		break;
	case cst_bdev_stm:
		fx_fmt(f, path, sizeof(path), "%s/enable_source", dev);
		fx_printf(f, path, "0\n");
		break;
	case cst_bdev_etf:
	case cst_bdev_etr:
	case cst_bdev_etb:
		fx_fmt(f, path, sizeof(path), "%s/enable_sink", dev);
		fx_printf(f, path, "0\n");
		/* RAM size in 32-bit words, as the TMC reports it. */
		fx_fmt(f, path, sizeof(path), "%s/mgmt/rsz", dev);
		fx_printf(f, path, "0x%llx\n", (unsigned long long)(d->capacity / 4));
		if (d->type == cst_bdev_etr) {
			fx_fmt(f, path, sizeof(path), "%s/buffer_size", dev);
			fx_printf(f, path, "0x100000\n");
		}
		break;
	case cst_bdev_tpiu:
		fx_fmt(f, path, sizeof(path), "%s/enable_sink", dev);
		fx_printf(f, path, "0\n");
		break;
	default:
		break;
	}
	if (d->type == cst_bdev_etm) {
		/* perf finds each CPU's ETM through cs_etm/cpuN. */
		fx_fmt(f, path, sizeof(path), "/sys/devices/cs_etm/cpu%d", d->cpu);
		if (!(f->faults & cst_fault_no_pmu))
			fx_link(f, path, dev);
	}
	if (d->perf_sink && !(f->faults & cst_fault_no_pmu)) {
		fx_fmt(f, path, sizeof(path), "/sys/devices/cs_etm/sinks/%s", sysname);
		fx_printf(f, path, "0x%08x\n", sink_hash(sysname));
	}
}

static void write_pmu(struct fx *f)
{
	static const struct {
		const char *name, *value;
	} fmt[] = {
		{"branch_broadcast", "config:8"}, {"cycacc", "config:12"},
		{"contextid", "config:14"},       {"contextid1", "config:14"},
		{"contextid2", "config:15"},      {"timestamp", "config:28"},
		{"retstack", "config:29"},        {"preset", "config:0-3"},
		{"sinkid", "config2:0-31"},       {"configid", "config2:32-63"},
		{"cc_threshold", "config3:0-11"},
	};
	char path[PATH_MAX];

	fx_printf(f, "/sys/devices/cs_etm/type", "%d\n", 8);
	for (size_t i = 0; i < sizeof(fmt) / sizeof(fmt[0]); i++) {
		fx_fmt(f, path, sizeof(path), "/sys/devices/cs_etm/format/%s", fmt[i].name);
		fx_printf(f, path, "%s\n", fmt[i].value);
	}
	fx_mkdir(f, "/sys/devices/cs_etm/sinks");
	fx_link(f, "/sys/bus/event_source/devices/cs_etm", "/sys/devices/cs_etm");
}

/* The uprobe PMU (CONFIG_UPROBE_EVENTS), which record's --trigger opens. */
static void write_uprobe_pmu(struct fx *f)
{
	fx_printf(f, "/sys/devices/uprobe/type", "%d\n", 9);
	fx_printf(f, "/sys/devices/uprobe/format/retprobe", "config:0\n");
	fx_printf(f, "/sys/devices/uprobe/format/ref_ctr_offset", "config:32-63\n");
	fx_link(f, "/sys/bus/event_source/devices/uprobe", "/sys/devices/uprobe");
}

static void write_kconfig(struct fx *f, const char *osrelease)
{
	char text[8192], host[PATH_MAX], path[PATH_MAX];
	size_t len = 0;
	gzFile gz;

	len += (size_t)snprintf(text + len, sizeof(text) - len,
				"#\n# Automatically generated file; DO NOT EDIT.\n"
				"# cstrace fixture for %s\n#\nCONFIG_IKCONFIG=y\nCONFIG_IKCONFIG_PROC=y\n",
				f->b->name);
	for (int i = 0; i < f->b->nkconfig && len < sizeof(text) - 256; i++) {
		const char *c = f->b->kconfig[i];
		const char *eq = strchr(c, '=');

		if (((f->faults & cst_fault_kconfig_etm_off) && strstr(c, "_SOURCE_ETM")) ||
		    ((f->faults & cst_fault_no_coresight) && strstr(c, "CONFIG_CORESIGHT")))
			len += (size_t)snprintf(text + len, sizeof(text) - len, "# %.*s is not set\n",
						(int)(eq - c), c);
		else
			len += (size_t)snprintf(text + len, sizeof(text) - len, "%s\n", c);
	}
	/* /proc/config.gz as the kernel serves it, and /boot/config-REL as Debian ships it. */
	if (fx_host(f, "/proc/config.gz", host, sizeof(host)) < 0)
		return;
	fx_mkdir(f, "/proc");
	gz = gzopen(host, "wb");
	if (!gz || gzwrite(gz, text, (unsigned)len) != (int)len) {
		fx_io(f);
		if (gz)
			gzclose(gz);
		return;
	}
	if (gzclose(gz) != Z_OK)
		fx_io(f);
	fx_fmt(f, path, sizeof(path), "/boot/config-%s", osrelease);
	fx_write(f, path, text, len);
}

/* The tree itself, written into the (temporary) directory @dir. */
static int fixture_tree(const struct cst_board *b, const char *dir,
			const struct cst_fixture_opts *opts, int *errnum)
{
	const struct cst_fixture_opts o = *opts;
	struct fx f = {0};
	int counts[cst_bdev_max + 1] = {0}; /* +1: cti_cpu counted apart from cti_sys */
	int preferred = -1, first_etm = -1;
	char path[PATH_MAX];

	f.b = b;
	f.dir = dir;
	f.faults = o.faults;

	/* Identity */
	{
		char compat[512];
		size_t len = 0;
		const char *first = b->ncompatibles ? b->compatibles[0] : b->name;
		const char *last = b->ncompatibles ? b->compatibles[b->ncompatibles - 1] : NULL;

		/* A list of NUL-terminated strings, most specific first. */
		for (int k = 0; k < 2; k++) {
			const char *c = k ? last : first;
			size_t cl = c ? strlen(c) + 1 : 0;

			if (!c || (k && !strcmp(c, first)) || len + cl > sizeof(compat))
				continue;
			memcpy(compat + len, c, cl);
			len += cl;
		}
		fx_write(&f, "/proc/device-tree/compatible", compat, len);
		fx_write(&f, "/proc/device-tree/model", b->title ? b->title : b->name,
			 strlen(b->title ? b->title : b->name) + 1);
	}
	fx_printf(&f, "/proc/sys/kernel/osrelease", "%s\n", o.osrelease);
	fx_printf(&f, "/proc/sys/kernel/perf_event_paranoid", "%d\n",
		  (o.faults & cst_fault_paranoid) ? 3 : -1);
	fx_printf(&f, "/proc/mounts",
		  "sysfs /sys sysfs rw,nosuid,nodev,noexec,relatime 0 0\n"
		  "proc /proc proc rw,nosuid,nodev,noexec,relatime 0 0\n%s",
		  (o.faults & cst_fault_no_debugfs) ?
			  "" : "debugfs /sys/kernel/debug debugfs rw,nosuid,nodev,noexec,relatime 0 0\n");
	fx_mkdir(&f, "/sys/kernel/debug");
	if (!(o.faults & cst_fault_no_kconfig))
		write_kconfig(&f, o.osrelease);

	/* CPUs and their idle states: state0 is WFI (keeps trace); deeper ones power
	 * the core down, which is what loses ETM state on some boards. */
	for (int i = 0; i < b->ncpus; i++) {
		static const char *const states[] = {"WFI", "cpu-sleep", "cluster-sleep"};
		int cpu = b->cpus[i].cpu;

		for (int s = 0; s < 3; s++) {
			fx_fmt(&f, path, sizeof(path), "/sys/devices/system/cpu/cpu%d/cpuidle/state%d/name",
				 cpu, s);
			fx_printf(&f, path, "%s\n", states[s]);
			snprintf(path, sizeof(path),
				 "/sys/devices/system/cpu/cpu%d/cpuidle/state%d/disable", cpu, s);
			fx_printf(&f, path, "%d\n", s > 0 && !(o.faults & cst_fault_cpuidle_on) ? 1 : 0);
		}
	}
	fx_printf(&f, "/sys/devices/system/cpu/online", "0-%d\n", b->ncpus ? b->ncpus - 1 : 0);
	write_uprobe_pmu(&f);

	if (o.faults & (cst_fault_no_pmu | cst_fault_no_coresight))
		return f.err; /* CoreSight not built or not probed: no bus, no PMU */
	fx_mkdir(&f, "/sys/bus/coresight/devices");
	write_pmu(&f);
	for (int i = 0; i < b->ndevices; i++) {
		if (b->devices[i].preferred && preferred < 0)
			preferred = i;
		if (b->devices[i].type == cst_bdev_etm &&
		    (first_etm < 0 || b->devices[i].cpu < b->devices[first_etm].cpu))
			first_etm = i;
	}
	/* Probe order is device-tree order; non-ETM names number in that order. */
	for (int k = 0; k < b->ndevices; k++) {
		int i = o.reverse_probe ? b->ndevices - 1 - k : k;
		const struct cst_board_device *d = &b->devices[i];
		char sysname[64];
		int slot = (d->type == cst_bdev_cti && d->cpu >= 0) ? cst_bdev_max : (int)d->type;

		/* ETMs and CPU-bound CTIs are numbered by their CPU, the rest by probe order. */
		if (d->type == cst_bdev_etm || (d->type == cst_bdev_cti && d->cpu >= 0))
			fx_fmt(&f, sysname, sizeof(sysname), "%s%d", sys_prefix(d), d->cpu);
		else
			fx_fmt(&f, sysname, sizeof(sysname), "%s%d", sys_prefix(d), counts[slot]);
		/* A device that fails to probe takes no number. */
		if ((o.faults & cst_fault_missing_sink) && i == preferred) {
			write_device(&f, d, sysname, false, false);
			continue;
		}
		if (d->type != cst_bdev_etm)
			counts[slot]++;
		write_device(&f, d, sysname, true,
			     (o.faults & cst_fault_wrong_etm_arch) && i == first_etm);
	}
	*errnum = f.errnum;
	return f.err;
}

static int remove_one(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)st;
	(void)type;
	(void)ftw;
	remove(path);
	return 0;
}

int cst_board_fixture_write(const struct cst_board *b, const char *dir,
			    const struct cst_fixture_opts *opts)
{
	struct cst_fixture_opts o = {0};
	char tmp[PATH_MAX];
	mode_t mask;
	int err, errnum = 0;

	if (!b || !dir || !*dir)
		return -cste_invalid;
	if (cst_opts_load(&o, sizeof(o), opts, "cst_fixture_opts", NULL) < 0)
		return -cste_invalid;
	if (!o.osrelease)
		o.osrelease = "6.12.0-cstrace";
	if ((size_t)snprintf(tmp, sizeof(tmp), "%s.tmp.XXXXXX", dir) >= sizeof(tmp) - 1)
		return -cste_nomem;
	/* mkdir -p of the directory the tree goes into */
	for (char *p = tmp + 1; *p; p++) {
		if (*p != '/' || p >= tmp + strlen(dir))
			continue;
		*p = '\0';
		if (mkdir(tmp, 0755) < 0 && errno != EEXIST)
			return -cste_io;
		*p = '/';
	}
	/* The tree is made beside @dir and renamed onto it when complete: a failure
	 * (a full disk) leaves no half tree under its name. */
	if (!mkdtemp(tmp))
		return -cste_io;
	mask = umask(0);
	umask(mask);
	chmod(tmp, 0755 & ~mask);
	err = fixture_tree(b, tmp, &o, &errnum);
	/* onto a missing or empty @dir; one holding files is refused (ENOTEMPTY) */
	if (!err && rename(tmp, dir) < 0) {
		errnum = errno;
		err = -cste_io;
	}
	if (err)
		nftw(tmp, remove_one, 16, FTW_DEPTH | FTW_PHYS);
	errno = errnum;
	return err;
}

static const struct {
	const char *word;
	enum cst_fixture_fault fault;
} fault_words[] = {
	{"missing-sink", cst_fault_missing_sink}, {"wrong-etm-arch", cst_fault_wrong_etm_arch},
	{"paranoid", cst_fault_paranoid},         {"cpuidle-on", cst_fault_cpuidle_on},
	{"no-kconfig", cst_fault_no_kconfig},     {"kconfig-etm-off", cst_fault_kconfig_etm_off},
	{"no-debugfs", cst_fault_no_debugfs},     {"no-pmu", cst_fault_no_pmu},
	{"no-coresight", cst_fault_no_coresight},
};

unsigned cst_fixture_fault_parse(const char *word)
{
	if (!word)
		return 0;
	for (size_t i = 0; i < sizeof(fault_words) / sizeof(fault_words[0]); i++)
		if (!strcmp(word, fault_words[i].word))
			return fault_words[i].fault;
	return 0;
}
