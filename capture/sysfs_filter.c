/* sysfs mode's address filters: the same entries as perf mode's, programmed into
 * every ETM's address comparators through the drivers' sysfs attributes
 * (coresight-etm4x and coresight-etm3x: reset, addr_idx, addr_instdatatype,
 * addr_range, addr_start, addr_stop). A file's entries are placed on the command's
 * mapping of it when it stops at its exec, as the kernel places perf's. */
#include "rec_filter.h"

#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "root.h"

#define CS_DIR "/sys/bus/coresight/devices"

int cap_sysfs_filter_check(const struct cst_addr_filter *f, const struct cap_sysfs_src *src,
			   int nsrc, const struct cst_log *log)
{
	for (int i = 0; i < nsrc; i++) {
		char etm[96];
		int err;

		if (!src[i].pairs) {
			cst_logf(log, cst_log_warning,
				 "%s: its address comparators are not known (%s unreadable): not "
				 "checked", src[i].dev, src[i].v4 ? "TRCIDR4" : "ETMCCR");
			continue;
		}
		snprintf(etm, sizeof(etm), "%s (%s)", src[i].dev, src[i].v4 ? "TRCIDR4" : "ETMCCR");
		err = cst_addr_filter_check(f, src[i].pairs, false, etm, log);
		if (err)
			return err;
	}
	return 0;
}

static int put(const char *root, const char *dev, const char *attr, const char *val,
	       bool dry_run, const struct cst_log *log)
{
	char path[512];
	int err;

	snprintf(path, sizeof(path), CS_DIR "/%s/%s", dev, attr);
	if (dry_run) {
		cst_logf(log, cst_log_info, "would write %s to %s%s", val,
			 strcmp(root, "/") ? root : "", path);
		return 0;
	}
	err = cap_write(root, path, val);
	if (err)
		cst_logf(log, cst_log_error, "writing %s to %s%s failed: %s", val,
			 strcmp(root, "/") ? root : "", path, cst_strerror(err));
	return err;
}

/* Where the kernel would put @e in process @pid: the first mapping of its file
 * that holds it (perf_addr_filter_apply). */
static bool place_in(const struct cst_addr_filter_entry *e, pid_t pid, uint64_t *a, uint64_t *l)
{
	char path[64], line[PATH_MAX + 128], file[PATH_MAX];
	bool found = false;
	FILE *fp;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	fp = fopen(path, "r");
	if (!fp)
		return false;
	while (!found && fgets(line, sizeof(line), fp)) {
		uint64_t start, end, off;

		file[0] = 0;
		if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %*s %" SCNx64 " %*s %*s %4095[^\n]", &start,
			   &end, &off, file) == 4 && !strcmp(file, e->path))
			found = cst_addr_filter_place(e, start, end - start, off, a, l);
	}
	fclose(fp);
	return found;
}

static const char *describe_entry(const struct cst_addr_filter_entry *e, char *buf, size_t size)
{
	static const char *const act[] = {"filter", "start", "stop"};

	snprintf(buf, size, "%s %.100s%s%.200s", act[e->action],
		 e->sym[0] ? e->sym : "address", e->path[0] ? " @ " : " (kernel)", e->path);
	return buf;
}

int cap_sysfs_filter_program(const struct cst_addr_filter *f, const struct cap_sysfs_src *src,
			     int nsrc, const char *root, pid_t pid, bool dry_run,
			     const struct cst_log *log)
{
	int n = cst_addr_filter_count(f), nranges = 0, err = 0;
	uint64_t addr[64], len[64];

	/* placement first: the same in every ETM */
	for (int k = 0; k < n && k < 64; k++) {
		const struct cst_addr_filter_entry *e = cst_addr_filter_get(f, k);
		char what[320];

		nranges += e->action == cst_addr_filter_range;
		addr[k] = e->path[0] ? e->vaddr : e->start;
		len[k] = e->len;
		describe_entry(e, what, sizeof(what));
		if (!e->path[0])
			continue;
		if (dry_run) {
			cst_logf(log, cst_log_info,
				 "%s: file offset 0x%" PRIx64 ", placed on the command's mapping of the "
				 "file at its exec (its ELF address 0x%" PRIx64 " stands in below)",
				 what, e->start, e->vaddr);
		} else if (place_in(e, pid, &addr[k], &len[k])) {
			cst_logf(log, cst_log_info, "%s: file offset 0x%" PRIx64 " at 0x%" PRIx64, what,
				 e->start, addr[k]);
		} else {
			cst_logf(log, cst_log_error,
				 "%s: the command has not mapped that part of the file at its exec "
				 "(sysfs mode programs the comparators then; a library mapped later "
				 "needs perf mode, where the kernel places filters at every mmap)",
				 what);
			return -cste_not_found;
		}
	}
	for (int i = 0; i < nsrc && !err; i++) {
		const char *dev = src[i].dev;
		int pair = 0, single = 2 * nranges;

		/* no comparator of an earlier session stays in force */
		err = put(root, dev, "reset", "1", dry_run, log);
		for (int k = 0; k < n && k < 64 && !err; k++) {
			const struct cst_addr_filter_entry *e = cst_addr_filter_get(f, k);
			int idx = e->action == cst_addr_filter_range ? 2 * pair++ : single++;
			char v[64];

			snprintf(v, sizeof(v), "0x%x", idx);
			err = put(root, dev, "addr_idx", v, dry_run, log);
			if (!err && src[i].v4)
				err = put(root, dev, "addr_instdatatype", "instr", dry_run, log);
			if (err)
				break;
			if (e->action == cst_addr_filter_range) {
				snprintf(v, sizeof(v), "0x%" PRIx64 " 0x%" PRIx64, addr[k],
					 addr[k] + len[k]);
				err = put(root, dev, "addr_range", v, dry_run, log);
			} else {
				snprintf(v, sizeof(v), "0x%" PRIx64, addr[k]);
				err = put(root, dev,
					  e->action == cst_addr_filter_start ? "addr_start" : "addr_stop",
					  v, dry_run, log);
			}
		}
	}
	return err;
}

void cap_sysfs_filter_reset(const struct cap_sysfs_src *src, int nsrc, const char *root)
{
	char path[512];

	for (int i = 0; i < nsrc; i++) {
		snprintf(path, sizeof(path), CS_DIR "/%s/reset", src[i].dev);
		cap_write(root, path, "1");
	}
}
