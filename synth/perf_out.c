/* perf.data output of synth: what `perf record -e cs_etm// -C 0 PROG` writes:
 * attrs, cs_etm AUXTRACE_INFO, COMM/MMAP2 from QEMU's log, AUX + AUXTRACE per read-out. */
#include <errno.h>
#include <libgen.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cstrace/perfdata.h"
#include "synth_int.h"

#define SYNTH_PMU_TYPE 10      /* any dynamic PMU number; AUXTRACE_INFO names it */
#define SYNTH_TIME_BASE 1000000 /* perf clock of the first instruction, in ns */

int synth_perf_chunk(void *ctx, const struct synth_aux_chunk *c)
{
	struct synth_perf_cpu *pc = ctx;
	struct synth_perf_out *p = pc->p;
	if (CST_GROW(p->aux, p->cap_aux, (size_t)p->naux + 1) < 0)
		return -cste_nomem;
	struct synth_perf_aux *a = &p->aux[p->naux];
	a->data = malloc(c->size ? c->size : 1);
	if (!a->data)
		return -cste_nomem;
	memcpy(a->data, c->data, c->size);
	a->cpu = pc->cpu;
	a->offset = c->aux_offset;
	a->size = c->size;
	a->head = c->aux_head;
	a->time = SYNTH_TIME_BASE + (p->clock ? *p->clock : 0);
	a->truncated = c->truncated;
	a->overwrite = c->overwrite;
	p->naux++;
	return 0;
}

void synth_perf_fini(struct synth_perf_out *p)
{
	for (size_t i = 0; i < p->naux; i++)
		free(p->aux[i].data);
	free(p->aux);
	p->aux = NULL;
	p->naux = p->cap_aux = 0;
}

/* Sample IDs: the trace event has one per CPU (1 + cpu), the dummy too (101 + cpu). */
#define ID_ETM(cpu) (1u + (unsigned)(cpu))
#define ID_DUMMY(cpu) (101u + (unsigned)(cpu))

/* The sample_id trailer every sideband record carries (capture's layout). */
static struct cst_perf_sample_id sid_cpu(const struct synth_perf_out *p, uint64_t id, uint64_t time,
					 int cpu)
{
	struct cst_perf_sample_id s = {
		.pid = p->pid, .tid = p->tid[cpu], .time = time, .id = id, .cpu = (uint32_t)cpu,
		.have_tid = true, .have_time = true, .have_id = true, .have_cpu = true,
	};
	return s;
}

static struct cst_perf_sample_id sid_of(const struct synth_perf_out *p, uint64_t id, uint64_t time)
{
	return sid_cpu(p, id, time, 0);
}

static int perf_attrs(struct cst_perf_writer *w, const struct synth_perf_out *p)
{
	uint64_t st = CST_PERF_SAMPLE_IP | CST_PERF_SAMPLE_TID | CST_PERF_SAMPLE_TIME |
		      CST_PERF_SAMPLE_CPU | CST_PERF_SAMPLE_IDENTIFIER;
	struct cst_perf_attr etm = {
		.type = SYNTH_PMU_TYPE,
		.size = CST_PERF_ATTR_SIZE,
		.sample_period = 1,
		.sample_type = st,
		.flags = CST_PERF_ATTR_DISABLED | CST_PERF_ATTR_EXCLUDE_KERNEL |
			 CST_PERF_ATTR_EXCLUDE_HV | CST_PERF_ATTR_ENABLE_ON_EXEC |
			 CST_PERF_ATTR_SAMPLE_ID_ALL,
	};
	/* config: timestamp (bit 28); ETMv4 also context IDs (contextid1, bit 14) */
	if (p->opts->timestamps)
		etm.config |= 1ull << 28;
	if (!p->arm)
		etm.config |= 1ull << 14;
	struct cst_perf_attr dummy = {
		.type = 1 /* PERF_TYPE_SOFTWARE */,
		.size = CST_PERF_ATTR_SIZE,
		.config = 9 /* PERF_COUNT_SW_DUMMY */,
		.sample_period = 1,
		.sample_type = st,
		.flags = CST_PERF_ATTR_DISABLED | CST_PERF_ATTR_EXCLUDE_KERNEL |
			 CST_PERF_ATTR_EXCLUDE_HV | CST_PERF_ATTR_ENABLE_ON_EXEC |
			 CST_PERF_ATTR_MMAP | CST_PERF_ATTR_COMM | CST_PERF_ATTR_TASK |
			 CST_PERF_ATTR_SAMPLE_ID_ALL | CST_PERF_ATTR_MMAP2 |
			 CST_PERF_ATTR_COMM_EXEC | CST_PERF_ATTR_CONTEXT_SWITCH,
	};
	uint64_t id1[SYNTH_MAX_CPUS], id2[SYNTH_MAX_CPUS];
	for (int k = 0; k < p->ncpus; k++) {
		id1[k] = ID_ETM(k);
		id2[k] = ID_DUMMY(k);
	}
	int rc = cst_perf_writer_add_attr(w, &etm, id1, (uint64_t)p->ncpus);
	if (rc >= 0)
		rc = cst_perf_writer_add_attr(w, &dummy, id2, (uint64_t)p->ncpus);
	return rc < 0 ? rc : 0;
}

static int perf_etm_info(struct cst_perf_writer *w, const struct synth_perf_out *p)
{
	struct cst_perf_etm_cpu cpus[SYNTH_MAX_CPUS];
	memset(cpus, 0, sizeof(cpus));
	for (int k = 0; k < p->ncpus; k++) {
		struct cst_perf_etm_cpu *cpu = &cpus[k];
		cpu->cpu = (uint64_t)k;
		if (p->arm) {
			cpu->magic = CST_PERF_ETMV3_MAGIC;
			cpu->nr_params = 4;
			cpu->etmcr = p->regs[0];
			cpu->etmtraceidr = p->trace_id[k];
			cpu->etmidr = p->regs[1];
			cpu->etmccer = p->regs[2];
		} else {
			cpu->magic = CST_PERF_ETMV4_MAGIC;
			cpu->nr_params = 8;
			cpu->trcconfigr = p->regs[0];
			cpu->trctraceidr = p->trace_id[k];
			cpu->trcidr0 = p->regs[1];
			cpu->trcidr1 = p->regs[2];
			cpu->trcidr2 = p->regs[3];
			cpu->trcidr8 = p->regs[4];
			cpu->trcauthstatus = p->regs[5];
			cpu->has_ts_source = true;
		}
	}
	/* Version 1: Debian's perf 6.1 rejects 2; trace IDs live in TRACEIDR. */
	struct cst_perf_etm_info info = {
		.version = 1,
		.pmu_type = SYNTH_PMU_TYPE,
		.nr_cpu = (uint32_t)p->ncpus,
		.snapshot = p->opts->snapshot_mode,
		.cpus = cpus,
	};
	return cst_perf_writer_etm_info(w, &info);
}

/* MMAP2 (with build-id) for each executable file mapping, page aligned as the
 * kernel reports them. */
static int perf_mmaps(struct cst_perf_writer *w, const struct synth_perf_out *p)
{
	const struct synth_qlog *q = p->q;
	for (int i = 0; i < q->nmaps; i++) {
		const struct synth_mapping *m = &q->maps[i];
		uint64_t skew = m->addr & 0xfff;
		if ((m->pgoff & 0xfff) != skew)
			skew = 0; /* not a file mapping the kernel could have made */
		uint64_t addr = m->addr - skew, pgoff = m->pgoff - skew;
		uint64_t len = (m->len + skew + 0xfff) & ~(uint64_t)0xfff;
		struct synth_elf elf;
		bool have_id = synth_elf_read(m->path, &elf) == 0 && elf.build_id_size;
		struct cst_perf_sample_id sid = sid_of(p, ID_DUMMY(0), SYNTH_TIME_BASE);
		int rc = cst_perf_writer_mmap2(w, CST_PERF_MISC_USER, p->pid, p->pid, addr, len, pgoff,
					       5 /* PROT_READ|PROT_EXEC */, 2 /* MAP_PRIVATE */,
					       have_id ? elf.build_id : NULL,
					       have_id ? (uint8_t)elf.build_id_size : 0, m->path, &sid);
		if (!rc && have_id)
			rc = cst_perf_writer_add_build_id(w, (int32_t)p->pid, CST_PERF_MISC_USER,
							  elf.build_id, (uint8_t)elf.build_id_size,
							  m->path);
		if (rc)
			return rc;
	}
	return 0;
}

struct anon_ctx {
	struct cst_perf_writer *w;
	const struct synth_perf_out *p;
	const char *path;
};

/* Code QEMU ran outside any file (its signal trampoline page; the [vdso] on a real
 * system): the page goes to a file beside the perf.data and an MMAP2 names it, so
 * that decoders can read the instructions. */
static int perf_anon_page(void *ctx, uint64_t addr, const uint8_t *bytes, size_t len)
{
	struct anon_ctx *a = ctx;
	const struct synth_qlog *q = a->p->q;
	for (int i = 0; i < q->nmaps; i++)
		if (addr < q->maps[i].addr + q->maps[i].len && q->maps[i].addr < addr + len)
			return 0;
	char file[4200];
	snprintf(file, sizeof(file), "%s.code-%llx.bin", a->path, (unsigned long long)addr);
	/* a program's code: 0600, whole, and gone again if the perf.data fails */
	struct cst_out_opts oo = synth_out_opts(a->p->opts, false);
	struct cst_out o;
	int rc = cst_out_open(&o, file, &oo);
	if (rc)
		return rc;
	for (size_t done = 0; done < len;) {
		ssize_t n = write(o.fd, bytes + done, len - done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			cst_out_failed(&o, n < 0 ? errno : ENOSPC);
			break;
		}
		done += (size_t)n;
	}
	rc = synth_outs_commit(a->p->outs, &o);
	if (rc)
		return rc;
	char abs[4200];
	if (!realpath(file, abs)) /* in place now: named as perf names mapped files */
		snprintf(abs, sizeof(abs), "%s", file);
	struct cst_perf_sample_id sid = sid_of(a->p, ID_DUMMY(0), SYNTH_TIME_BASE);
	return cst_perf_writer_mmap2(a->w, CST_PERF_MISC_USER, a->p->pid, a->p->pid, addr, len, 0,
				     5, 2, NULL, 0, abs, &sid);
}

int synth_perf_write(struct synth_perf_out *p, const char *path)
{
	/* Per-CPU mode (CPU 0): Debian's perf 6.1 matches AUX records to AUXTRACE
	 * buffers by CPU only, so per-thread files (cpu -1) do not decode there. */
	const char *cmdline[] = {"perf", "record", "-e", "cs_etm//", "-C", "0", p->q->prog, NULL};
	struct cst_perf_writer_opts wo = {
		.sz = sizeof(wo),
		.log = p->opts->log,
		.hostname = "cstrace-synth",
		.osrelease = "6.1.0-synth",
		.arch = p->arm ? "armv7l" : "aarch64",
		.version = "6.1",
		.nr_cpus_avail = (uint32_t)p->ncpus,
		.nr_cpus_online = (uint32_t)p->ncpus,
		.cmdline = cmdline,
		/* a file made at once: it appears whole at the end, or not at all */
		.inputs = p->opts->inputs,
		.whole = true,
	};
	struct cst_perf_writer *w;
	int rc = cst_perf_writer_open(&w, path, &wo);
	if (rc)
		return rc;
	rc = perf_attrs(w, p);
	if (!rc)
		rc = perf_etm_info(w, p);
	char comm[512];
	snprintf(comm, sizeof(comm), "%s", p->q->prog);
	char base[16];
	snprintf(base, sizeof(base), "%s", basename(comm));
	struct cst_perf_sample_id sid = sid_of(p, ID_DUMMY(0), SYNTH_TIME_BASE - 1);
	if (!rc)
		rc = cst_perf_writer_comm(w, true, p->pid, p->pid, base, &sid);
	if (!rc)
		rc = perf_mmaps(w, p);
	struct anon_ctx ac = {.w = w, .p = p, .path = path};
	if (!rc)
		rc = synth_codemap_pages(p->q->code, perf_anon_page, &ac);
	/* threads: FORK so that perf gives them the process's maps */
	for (int k = 1; k < p->ncpus && !rc; k++) {
		if (p->tid[k] == p->pid)
			continue;
		sid = sid_cpu(p, ID_DUMMY(k), SYNTH_TIME_BASE, k);
		rc = cst_perf_writer_task(w, false, p->pid, p->pid, p->tid[k], p->pid,
					  SYNTH_TIME_BASE, &sid);
	}
	for (int k = 0; k < p->ncpus && !rc; k++) {
		sid = sid_cpu(p, ID_ETM(k), SYNTH_TIME_BASE, k);
		rc = cst_perf_writer_itrace_start(w, p->pid, p->tid[k], &sid);
	}
	if (!rc)
		rc = cst_perf_writer_finished_round(w);
	for (size_t i = 0; i < p->naux && !rc; i++) {
		const struct synth_perf_aux *a = &p->aux[i];
		uint64_t flags = (a->truncated ? CST_PERF_AUX_TRUNCATED : 0) |
				 (a->overwrite ? CST_PERF_AUX_OVERWRITE : 0);
		/* overwrite (snapshot) mode: the kernel reports the end of the data */
		uint64_t off = a->overwrite ? a->head : a->offset;
		sid = sid_cpu(p, ID_ETM(a->cpu), a->time, a->cpu);
		rc = cst_perf_writer_aux(w, off, a->size, flags, &sid);
		/* per-CPU mode: mmap index and cpu are the CPU's */
		if (!rc)
			rc = cst_perf_writer_auxtrace(w, a->offset, i + 1, (uint32_t)a->cpu,
						      p->tid[a->cpu], (uint32_t)a->cpu, a->data,
						      a->size);
		if (!rc)
			rc = cst_perf_writer_finished_round(w);
	}
	uint64_t end = SYNTH_TIME_BASE + (p->clock ? *p->clock : 0) + 1;
	for (int k = p->ncpus - 1; k >= 0 && !rc; k--) {
		if (k && p->tid[k] == p->pid)
			continue;
		sid = sid_cpu(p, ID_DUMMY(k), end, k);
		rc = cst_perf_writer_task(w, true, p->pid, p->pid, p->tid[k], p->pid, end, &sid);
	}
	/* perf ends every pass over the rings that wrote something with a round, the
	 * last one (the exits) too */
	if (!rc)
		rc = cst_perf_writer_finished_round(w);
	if (!rc)
		rc = cst_perf_writer_finish(w);
	cst_perf_writer_free(w);
	return rc;
}
