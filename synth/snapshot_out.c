/* Writes a synthesized capture as an "ARM Trace and Debug Snapshot" directory: the ini
 * files OpenCSD's snapshot reader expects, the sink buffer and the executed code images. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "synth_int.h"

static int write_file(const char *dir, const char *name, const uint8_t *p, uint64_t len)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	FILE *f = fopen(path, "wb");
	if (!f)
		return -cste_io;
	bool ok = fwrite(p, 1, (size_t)len, f) == len;
	ok = (fclose(f) == 0) && ok;
	return ok ? 0 : -cste_io;
}

static FILE *open_text(const char *dir, const char *name)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return fopen(path, "w");
}

struct dump_list {
	FILE *ini;
	const char *dir;
	int n;
	const struct synth_mapping *maps;
	int nmaps;
	int err;
	bool list_only; /* another core wrote the files: only name them */
};

static bool overlaps_maps(const struct dump_list *d, uint64_t a, uint64_t len)
{
	for (int i = 0; i < d->nmaps; i++)
		if (a < d->maps[i].addr + d->maps[i].len && d->maps[i].addr < a + len)
			return true;
	return false;
}

static int dump_region(struct dump_list *d, uint64_t addr, const uint8_t *p, uint64_t len)
{
	char name[64];
	snprintf(name, sizeof(name), "mem_%d.bin", d->n);
	int rc = d->list_only ? 0 : write_file(d->dir, name, p, len);
	if (rc)
		return rc;
	fprintf(d->ini, "\n[dump%d]\nfile=%s\naddress=0x%llx\nlength=0x%llx\n", d->n, name,
		(unsigned long long)addr, (unsigned long long)len);
	d->n++;
	return 0;
}

/* Code QEMU ran outside any file mapping (the signal trampoline page): dump the
 * bytes its in_asm listing showed. */
static int dump_page(void *ctx, uint64_t addr, const uint8_t *bytes, size_t len)
{
	struct dump_list *d = ctx;
	if (overlaps_maps(d, addr, len))
		return 0;
	return dump_region(d, addr, bytes, len);
}

static int dump_mapping(struct dump_list *d, const struct synth_mapping *m)
{
	FILE *f = fopen(m->path, "rb");
	if (!f)
		return -cste_not_found;
	uint8_t *buf = malloc(m->len ? m->len : 1);
	if (!buf) {
		fclose(f);
		return -cste_nomem;
	}
	uint64_t got = 0;
	if (fseeko(f, (off_t)m->pgoff, SEEK_SET) == 0)
		got = fread(buf, 1, (size_t)m->len, f);
	fclose(f);
	int rc = got ? dump_region(d, m->addr, buf, got) : -cste_io;
	free(buf);
	return rc;
}

static int cmp_map(const void *a, const void *b)
{
	const struct synth_mapping *x = a, *y = b;
	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* cpu_K.ini: the core and, as in multi-core captures, the same memory dumps. */
static int snapshot_core(const char *dir, const struct synth_snap_cfg *cfg, int k,
			 const struct cst_log *log)
{
	int rc = 0;
	char name[32];
	snprintf(name, sizeof(name), "cpu_%d.ini", k);
	FILE *f = open_text(dir, name);
	if (!f)
		return -cste_io;
	fprintf(f, "[device]\nname=cpu_%d\nclass=core\ntype=%s\n\n[regs]\n", k, cfg->core_name);
	if (cfg->arm)
		fprintf(f, "R15=0x%08llX\nCPSR=0x%X\n", (unsigned long long)cfg->start_pc[k] & ~1ull,
			0x10u | ((cfg->start_pc[k] & 1) ? 0x20u : 0));
	else
		fprintf(f, "PC(size:64)=0x%016llX\n", (unsigned long long)cfg->start_pc[k]);

	/* One dump per executable file mapping, in address order, never overlapping:
	 * OpenCSD refuses overlapping images. */
	const struct synth_qlog *q = cfg->q;
	struct synth_mapping *maps = calloc((size_t)q->nmaps + 1, sizeof(*maps));
	int nmaps = 0;
	if (!maps) {
		fclose(f);
		return -cste_nomem;
	}
	memcpy(maps, q->maps, (size_t)q->nmaps * sizeof(*maps));
	qsort(maps, (size_t)q->nmaps, sizeof(*maps), cmp_map);
	for (int i = 0; i < q->nmaps; i++) {
		struct synth_mapping m = maps[i];
		if (nmaps && m.addr < maps[nmaps - 1].addr + maps[nmaps - 1].len) {
			uint64_t end = maps[nmaps - 1].addr + maps[nmaps - 1].len;
			if (m.addr + m.len <= end)
				continue;
			m.pgoff += end - m.addr;
			m.len -= end - m.addr;
			m.addr = end;
		}
		maps[nmaps++] = m;
	}
	struct dump_list d = {.ini = f, .dir = dir, .maps = maps, .nmaps = nmaps, .list_only = k > 0};
	for (int i = 0; i < nmaps && !rc; i++) {
		rc = dump_mapping(&d, &maps[i]);
		if (rc == -cste_not_found) {
			cst_logf(log, cst_log_warning, "%s: not readable, its code is not dumped",
				 maps[i].path);
			rc = 0;
		}
	}
	if (!rc)
		rc = synth_codemap_pages(q->code, dump_page, &d);
	free(maps);
	if (fclose(f) != 0 && !rc)
		rc = -cste_io;
	return rc;
}

int synth_snapshot_write(const char *dir, const struct synth_snap_cfg *cfg, const struct cst_log *log)
{
	if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
		cst_logf(log, cst_log_error, "%s: cannot create the directory", dir);
		return -cste_io;
	}
	int rc = write_file(dir, "cstrace.bin", cfg->buf, cfg->buf_len);
	if (rc)
		return rc;
	int n = cfg->ncpus;
	FILE *f = open_text(dir, "snapshot.ini");
	if (!f)
		return -cste_io;
	/* cores first (cpu_K.ini), then their trace units (device_N.ini) */
	fprintf(f, "[snapshot]\nversion=1.0\n\n[device_list]\n");
	for (int k = 0; k < n; k++)
		fprintf(f, "device%d=cpu_%d.ini\n", k, k);
	for (int k = 0; k < n; k++)
		fprintf(f, "device%d=device_%d.ini\n", n + k, n + k);
	fprintf(f, "\n[trace]\nmetadata=trace.ini\n");
	fclose(f);

	f = open_text(dir, "trace.ini");
	if (!f)
		return -cste_io;
	fprintf(f, "[trace_buffers]\nbuffers=buffer0\n\n[buffer0]\nname=ETB_0\nfile=cstrace.bin\n"
		   "format=coresight\n\n[source_buffers]\n");
	for (int k = 0; k < n; k++)
		fprintf(f, "ETM_%d=ETB_0\n", k);
	fprintf(f, "\n[core_trace_sources]\n");
	for (int k = 0; k < n; k++)
		fprintf(f, "cpu_%d=ETM_%d\n", k, k);
	fclose(f);

	for (int k = 0; k < n; k++) {
		char name[32];
		snprintf(name, sizeof(name), "device_%d.ini", n + k);
		f = open_text(dir, name);
		if (!f)
			return -cste_io;
		if (cfg->arm)
			fprintf(f, "[device]\nname=ETM_%d\nclass=trace_source\ntype=ETM3.5\n\n[regs]\n"
				   "ETMCR(0x000)=0x%08X\nETMIDR(0x079)=0x%08X\nETMCCER(0x07A)=0x%08X\n"
				   "ETMTRACEIDR(0x080)=0x%08X\n",
				k, cfg->regs[0], cfg->regs[1], cfg->regs[2], cfg->trace_id[k]);
		else
			fprintf(f, "[device]\nname=ETM_%d\nclass=trace_source\ntype=ETM4\n\n[regs]\n"
				   "TRCCONFIGR(0x004)=0x%08X\nTRCTRACEIDR(0x010)=0x%08X\n"
				   "TRCAUTHSTATUS(0x3EE)=0x%08X\nTRCIDR0(0x078)=0x%08X\n"
				   "TRCIDR1(0x079)=0x%08X\nTRCIDR2(0x07A)=0x%08X\nTRCIDR8(0x060)=0x%08X\n",
				k, cfg->regs[0], cfg->trace_id[k], cfg->regs[5], cfg->regs[1],
				cfg->regs[2], cfg->regs[3], cfg->regs[4]);
		fclose(f);
	}
	for (int k = 0; k < n && !rc; k++)
		rc = snapshot_core(dir, cfg, k, log);
	return rc;
}
