/* Writes a synthesized capture as an "ARM Trace and Debug Snapshot" directory through
 * the snapshot library: the sink buffer, one core and ETM per guest CPU, and the
 * executed code images. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cstrace/snapshot.h"
#include "synth_int.h"

struct dump_list {
	struct cst_snap_writer *w;
	int core;
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

	snprintf(name, sizeof(name), "mem_%d.bin", d->n++);
	return cst_snap_writer_add_dump(d->w, d->core, name, addr, d->list_only ? NULL : p, len);
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

/* Core @k's ETM as the capture programmed it. */
static void source_of(const struct synth_snap_cfg *cfg, int k, struct cst_source_cfg *src)
{
	memset(src, 0, sizeof(*src));
	src->cpu = k;
	snprintf(src->name, sizeof(src->name), "ETM_%d", k);
	if (cfg->arm) {
		src->protocol = cst_proto_etmv3;
		src->regs.etmv3.etmcr = cfg->regs[0];
		src->regs.etmv3.etmidr = cfg->regs[1];
		src->regs.etmv3.etmccer = cfg->regs[2];
		src->regs.etmv3.etmtraceidr = cfg->trace_id[k];
		return;
	}
	src->protocol = cst_proto_etmv4i;
	src->regs.etmv4.trcconfigr = cfg->regs[0];
	src->regs.etmv4.trctraceidr = cfg->trace_id[k];
	src->regs.etmv4.trcidr0 = cfg->regs[1];
	src->regs.etmv4.trcidr1 = cfg->regs[2];
	src->regs.etmv4.trcidr2 = cfg->regs[3];
	src->regs.etmv4.trcidr8 = cfg->regs[4];
	src->regs.etmv4.trcauthstatus = cfg->regs[5];
}

/* Core @k, its ETM and, as in multi-core captures, the same memory dumps (written
 * once, by core 0). */
static int snapshot_core(struct cst_snap_writer *w, const struct synth_snap_cfg *cfg, int k,
			 const struct cst_log *log)
{
	char name[32], file[32], src_file[32], regs[96];
	struct cst_source_cfg src;
	int rc = 0, core;

	snprintf(name, sizeof(name), "cpu_%d", k);
	snprintf(file, sizeof(file), "cpu_%d.ini", k);
	snprintf(src_file, sizeof(src_file), "device_%d.ini", cfg->ncpus + k);
	if (cfg->arm)
		snprintf(regs, sizeof(regs), "R15=0x%08llX\nCPSR=0x%X\n",
			 (unsigned long long)cfg->start_pc[k] & ~1ull,
			 0x10u | ((cfg->start_pc[k] & 1) ? 0x20u : 0));
	else
		snprintf(regs, sizeof(regs), "PC(size:64)=0x%016llX\n",
			 (unsigned long long)cfg->start_pc[k]);
	source_of(cfg, k, &src);
	core = cst_snap_writer_add_core(w, &(struct cst_snap_core){
		.name = name, .file = file, .type = cfg->core_name, .regs = regs,
		.source_file = src_file, .source = &src});
	if (core < 0)
		return core;

	/* One dump per executable file mapping, in address order, never overlapping:
	 * OpenCSD refuses overlapping images. */
	const struct synth_qlog *q = cfg->q;
	struct synth_mapping *maps = calloc((size_t)q->nmaps + 1, sizeof(*maps));
	int nmaps = 0;
	if (!maps)
		return -cste_nomem;
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
	struct dump_list d = {.w = w, .core = core, .maps = maps, .nmaps = nmaps,
			      .list_only = k > 0};
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
	return rc;
}

int synth_snapshot_write(const char *dir, const struct synth_snap_cfg *cfg, const struct cst_log *log)
{
	CST_OPTS(cst_snap_writer_opts, o, .log = log);
	struct cst_snap_writer *w = NULL;
	int rc = cst_snap_writer_open(&w, dir, &o);

	if (!rc)
		rc = cst_snap_writer_write_file(w, "cstrace.bin", cfg->buf, cfg->buf_len);
	if (!rc)
		rc = cst_snap_writer_set_buffer(w, "ETB_0", "cstrace.bin");
	for (int k = 0; k < cfg->ncpus && !rc; k++)
		rc = snapshot_core(w, cfg, k, log);
	if (!rc)
		rc = cst_snap_writer_finish(w);
	cst_snap_writer_free(w);
	return rc;
}
