/* The symbolizer object: options, building address spaces from sideband, trace
 * images and user-given ELF files, and running a decode session through it. */
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int cst_symbolizer_alloc(struct cst_symbolizer **out, const struct cst_symbolizer_opts *opts)
{
	struct cst_symbolizer *sym;
	const char *dd;
	size_t len;
	int err;

	if (!out)
		return -cste_invalid;
	*out = NULL;
	sym = calloc(1, sizeof(*sym));
	if (!sym)
		return -cste_nomem;
	sym->spaces_epoch = 1; /* 0 marks an empty range front entry */
	pthread_mutex_init(&sym->lock, NULL);
	if (cst_opts_load(&sym->opts, sizeof(sym->opts), opts, "cst_symbolizer_opts",
			  opts ? opts->log : NULL) < 0) {
		free(sym);
		return -cste_invalid;
	}
	if (sym->opts.log)
		sym->log = *sym->opts.log;
	/* libdwfl's search path: the user's debug dir first, then the usual places,
	 * each under symfs when one is given */
	dd = sym->opts.debug_dir;
	len = (dd ? strlen(dd) : 0) + 2 * (sym->opts.symfs ? strlen(sym->opts.symfs) : 0) + 64;
	sym->debuginfo_path = malloc(len);
	if (!sym->debuginfo_path) {
		free(sym);
		return -cste_nomem;
	}
	/* an empty entry means "beside the binary" (for .gnu_debuglink) */
	snprintf(sym->debuginfo_path, len, "%s%s:.debug:%s/usr/lib/debug", dd ? dd : "",
		 dd ? ":" : "", sym->opts.symfs ? sym->opts.symfs : "");
	sym->callbacks.find_elf = dwfl_build_id_find_elf;
	sym->callbacks.find_debuginfo = dwfl_standard_find_debuginfo;
	sym->callbacks.section_address = dwfl_offline_section_address;
	sym->callbacks.debuginfo_path = &sym->debuginfo_path;
	elf_version(EV_CURRENT);
	err = sym_disasm_open(sym);
	if (err) {
		cst_symbolizer_free(sym);
		return err;
	}
	if (sym->opts.kallsyms || sym->opts.vmlinux) {
		sym->kernel = calloc(1, sizeof(*sym->kernel));
		if (!sym->kernel) {
			cst_symbolizer_free(sym);
			return -cste_nomem;
		}
		sym->kernel->pid = CST_SYM_PID_GLOBAL;
	}
	if (sym->opts.vmlinux) {
		struct dso *dso = sym_dso_get(sym, sym->opts.vmlinux, NULL, 0, false, false);

		if (!dso || dso->kind != dso_elf) {
			cst_logf(&sym->log, cst_log_error, "cannot read vmlinux %s",
				 sym->opts.vmlinux);
			cst_symbolizer_free(sym);
			return dso ? -cste_not_found : -cste_nomem;
		}
		for (uint32_t i = 0; i < dso->nsegs; i++) {
			struct mapping m = {dso->segs[i].vaddr,
					    dso->segs[i].vaddr + dso->segs[i].memsz, 0,
					    (int64_t)dso->segs[i].offset -
						    (int64_t)dso->segs[i].vaddr,
					    dso};

			if (dso->segs[i].memsz)
				sym_space_insert(sym, sym->kernel, &m);
		}
	} else if (sym->opts.kallsyms) {
		struct dso *dso = calloc(1, sizeof(*dso));
		uint64_t lo, hi;

		if (!dso || !(dso->path = strdup("[kernel.kallsyms]")) ||
		    !(dso->short_name = strdup("[kernel.kallsyms]"))) {
			sym_dso_free(dso);
			cst_symbolizer_free(sym);
			return -cste_nomem;
		}
		dso->next = sym->dsos;
		sym->dsos = dso;
		err = sym_dso_load_kallsyms(sym, dso, sym->opts.kallsyms, &lo, &hi);
		if (err) {
			cst_logf(&sym->log, cst_log_error, "cannot read kallsyms %s",
				 sym->opts.kallsyms);
			cst_symbolizer_free(sym);
			return err;
		}
		sym_space_insert(sym, sym->kernel, &(struct mapping){lo, hi, 0, 0, dso});
	}
	*out = sym;
	return 0;
}

/* What each thread keeps for itself: a reader's all. */
static void free_own(struct cst_symbolizer *sym)
{
	sym_disasm_close(sym);
	sym_arena_free_all(sym);
	free(sym->own.cache);
	free(sym->own.front);
	free(sym->own.perf_memo);
	free(sym->own.scratch);
	free(sym->own.pscratch);
}

void cst_symbolizer_free(struct cst_symbolizer *sym)
{
	if (!sym)
		return;
	if (sym->main) {
		free_own(sym); /* its counts are handed over or thrown away */
		free(sym);
		return;
	}
	while (sym->dsos) {
		struct dso *d = sym->dsos;

		sym->dsos = d->next;
		sym_dso_free(d);
	}
	for (uint32_t i = 0; i < sym->nspaces; i++)
		sym_space_free(sym->spaces[i]);
	free(sym->spaces);
	sym_space_free(sym->kernel);
	free_own(sym);
	free(sym->comms);
	free(sym->lost);
	free(sym->debuginfo_path);
	for (int i = 0; i < sym->ngiven; i++)
		free(sym->given[i]);
	free(sym->given);
	pthread_mutex_destroy(&sym->lock);
	free(sym);
}

/* A kernel module: each code section where the kernel laid it out from the
 * module's .text, which a recorded mapping starts with (perf's) or --elf
 * FILE@ADDR places at ADDR, linked to where libdwfl put that section. */
static int add_kmod(struct cst_symbolizer *sym, struct space *sp, struct dso *dso,
		    const struct cst_sym_mapping *m)
{
	uint64_t text = m->elf_vaddr ? m->addr : m->addr - m->pgoff;

	if (!sym_dso_kmod_place(sym, dso))
		return 0; /* no link addresses: its code shows as [unknown] */
	for (int i = 0; i < dso->nkmod; i++) {
		const struct cst_kmod_section *k = &dso->kmod[i];
		struct mapping map = {text + k->addr, text + k->addr + k->size, 0, 0, dso};
		int err;

		/* within what was recorded as mapped */
		if (!m->elf_vaddr && m->len && map.end > m->addr + m->len)
			map.end = m->addr + m->len;
		if (map.end <= map.start || map.start < text)
			continue;
		map.vaddr_adj = (int64_t)(dso->kmod_vaddr[i] - map.start);
		map.off_adj = k->offset - map.start;
		err = sym_space_insert(sym, sp, &map);
		if (err)
			return err;
	}
	return 0;
}

int cst_symbolizer_add_mapping(struct cst_symbolizer *sym, const struct cst_sym_mapping *m)
{
	struct space *sp;
	struct dso *dso;
	struct mapping map;
	uint64_t v;

	if (!sym || !m || !m->path)
		return -cste_invalid;
	sp = sym_space_get(sym, m->pid, true);
	dso = sym_dso_get(sym, m->path, m->build_id, m->build_id_size, m->raw, m->image);
	if (!sp || !dso)
		return -cste_nomem;
	if (dso->nkmod && !(m->elf_vaddr && !m->elf_placed))
		return add_kmod(sym, sp, dso, m);
	if (m->elf_vaddr && dso->kind == dso_elf) {
		uint64_t bias = dso->nsegs ? cst_elf_place_bias(m->elf_placed, m->addr,
								 dso->segs[0].vaddr)
					   : 0;

		for (uint32_t i = 0; i < dso->nsegs; i++) {
			const struct sym_segment *s = &dso->segs[i];
			int err;

			if (!s->memsz)
				continue;
			map = (struct mapping){s->vaddr + bias, s->vaddr + s->memsz + bias, -bias,
					       s->offset - s->vaddr - bias, dso};
			err = sym_space_insert(sym, sp, &map);
			if (err)
				return err;
		}
		return 0;
	}
	map.start = m->addr;
	map.end = m->addr + m->len;
	if (!m->len) {
		/* to the end of the file (or a page, when there is no file) */
		map.end = m->addr + (dso->map_size > m->pgoff ? dso->map_size - m->pgoff : 4096);
	}
	map.off_adj = m->pgoff - m->addr;
	if (dso->kind == dso_elf && sym_dso_off_to_vaddr(dso, m->pgoff, &v))
		map.vaddr_adj = v - m->addr;
	else
		map.vaddr_adj = map.off_adj;
	map.dso = dso;
	return sym_space_insert(sym, sp, &map);
}

int cst_symbolizer_add_elf_spec(struct cst_symbolizer *sym, const char *spec, int32_t pid)
{
	struct cst_sym_mapping m = {.pid = pid == CST_SYM_PID_GLOBAL ? SYM_PID_USER : pid,
				    .elf_vaddr = true};
	char path[4096];
	struct dso *dso;
	int placed;

	if (!sym || !spec)
		return -cste_invalid;
	placed = cst_parse_file_at(spec, path, sizeof(path), &m.addr);
	m.elf_placed = placed == 1;
	if (placed < 0) {
		cst_logf(&sym->log, cst_log_error, "%s: expected FILE[@ADDR] (ADDR a number)", spec);
		return -cste_format;
	}
	m.path = path;
	/* as given, never under symfs; without @ADDR it also stands for the
	 * recorded binary with its build-id or base name (cst_bin_places.elfs) */
	dso = sym_dso_get_given(sym, path);
	if (!dso)
		return -cste_nomem;
	if (!placed) {
		char *copy = strdup(spec), **more = realloc(sym->given, (size_t)(sym->ngiven + 1) *
									   sizeof(*more));

		if (more)
			sym->given = more;
		if (!copy || !more) {
			free(copy);
			return -cste_nomem;
		}
		sym->given[sym->ngiven++] = copy;
	}
	if (dso->kind != dso_elf) {
		cst_logf(&sym->log, cst_log_error, "%s: cannot use it: %s", path,
			 dso->why ? dso->why : "not an ELF file");
		return -cste_not_found;
	}
	return cst_symbolizer_add_mapping(sym, &m);
}

int cst_symbolizer_add_trace_images(struct cst_symbolizer *sym, const struct cst_trace *trace)
{
	int n;

	if (!sym || !trace)
		return -cste_invalid;
	n = cst_trace_nimages(trace);
	for (int i = 0; i < n; i++) {
		const struct cst_mem_image *img = cst_trace_image(trace, i);
		struct cst_sym_mapping m = {0};
		int err;

		if (!img || !img->path)
			continue;
		m.pid = CST_SYM_PID_GLOBAL;
		m.addr = img->address;
		m.len = img->length;
		m.pgoff = img->file_offset;
		m.path = img->path;
		m.raw = true;
		m.image = true;
		err = cst_symbolizer_add_mapping(sym, &m);
		if (err && err != -cste_invalid)
			return err;
	}
	return 0;
}

/* Commands are kept as shown: a recorded name may hold terminal escapes. */
static int set_comm(struct cst_symbolizer *sym, int32_t tid, const char *name)
{
	for (size_t i = 0; i < sym->ncomms; i++)
		if (sym->comms[i].tid == tid) {
			cst_printable(name, sym->comms[i].name, sizeof(sym->comms[i].name));
			return 0;
		}
	if (CST_GROW(sym->comms, sym->comms_cap, sym->ncomms + 1) < 0)
		return -cste_nomem;
	sym->comms[sym->ncomms].tid = tid;
	cst_printable(name, sym->comms[sym->ncomms].name, sizeof(sym->comms[0].name));
	sym->ncomms++;
	return 0;
}

const char *cst_symbolizer_comm(const struct cst_symbolizer *sym, int32_t tid)
{
	if (!sym)
		return NULL;
	for (size_t i = 0; i < sym->ncomms; i++)
		if (sym->comms[i].tid == tid)
			return sym->comms[i].name;
	return NULL;
}

/* Lost trace or records: held for the next element of the CPU. */
static int add_lost(struct cst_symbolizer *sym, const struct cst_sideband *sb)
{
	struct sym_lost_pending *p = NULL;

	for (size_t i = 0; i < sym->nlost && !p; i++)
		if (sym->lost[i].cpu == sb->cpu)
			p = &sym->lost[i];
	if (!p) {
		if (CST_GROW(sym->lost, sym->lost_cap, sym->nlost + 1) < 0)
			return -cste_nomem;
		p = &sym->lost[sym->nlost++];
		memset(p, 0, sizeof(*p));
		p->cpu = sb->cpu;
	}
	switch (sb->loss) {
	case cst_sb_loss_records:
	case cst_sb_loss_samples:
		p->lost.records += sb->lost;
		break;
	case cst_sb_loss_truncated:
		p->lost.truncated++;
		break;
	case cst_sb_loss_missing:
		p->lost.missing++;
		break;
	case cst_sb_loss_overwritten:
		p->lost.overwritten++;
		break;
	}
	p->lost.bytes += sb->lost_bytes;
	return 0;
}

bool cst_symbolizer_take_lost(struct cst_symbolizer *sym, struct cst_sym_lost *lost,
			      int32_t *cpu)
{
	struct cst_elem any = {.cpu = -1};
	const struct cst_sym_lost *l;

	if (cpu)
		*cpu = sym && sym->nlost == 1 ? sym->lost[0].cpu : -1;
	l = sym && sym->nlost ? sym_lost_take(sym, &any) : NULL;
	if (lost)
		memset(lost, 0, sizeof(*lost));
	if (l && lost)
		*lost = *l;
	return l != NULL;
}

const struct cst_sym_lost *sym_lost_take(struct cst_symbolizer *sym, const struct cst_elem *elem)
{
	struct cst_sym_lost *l = &sym->lost_now;
	bool any = false;
	size_t k = 0;

	memset(l, 0, sizeof(*l));
	for (size_t i = 0; i < sym->nlost; i++) {
		const struct sym_lost_pending *p = &sym->lost[i];

		if (p->cpu >= 0 && elem->cpu >= 0 && p->cpu != elem->cpu) {
			sym->lost[k++] = *p; /* another CPU's: its next element takes it */
			continue;
		}
		l->bytes += p->lost.bytes;
		l->truncated += p->lost.truncated;
		l->missing += p->lost.missing;
		l->overwritten += p->lost.overwritten;
		l->records += p->lost.records;
		any = true;
	}
	sym->nlost = k;
	return any ? l : NULL;
}

int cst_symbolizer_add_sideband(struct cst_symbolizer *sym, const struct cst_sideband *sb)
{
	if (!sym || !sb)
		return -cste_invalid;
	switch (sb->type) {
	case cst_sb_mmap: {
		struct cst_sym_mapping m = {0};

		/* anonymous and special mappings ([vdso], //anon, [heap]) have no file;
		 * a kernel module found nowhere is recorded as "[name]" */
		if (!sb->filename || !sb->len ||
		    (sb->filename[0] != '/' && !(sb->pid < 0 && cst_kmod_name(sb->filename, NULL, 0))))
			return 0;
		m.pid = sb->pid;
		m.addr = sb->addr;
		m.len = sb->len;
		m.pgoff = sb->pgoff;
		m.path = sb->filename;
		m.build_id = sb->build_id;
		m.build_id_size = sb->build_id ? sb->build_id_size : 0;
		/* without a pid it is a snapshot's memory image: plain bytes are fine */
		m.raw = sb->pid < 0;
		return cst_symbolizer_add_mapping(sym, &m);
	}
	case cst_sb_comm:
		if (sb->exec && sb->pid >= 0)
			sym_space_exec(sym, sb->pid);
		return sb->filename ? set_comm(sym, sb->tid, sb->filename) : 0;
	case cst_sb_fork: {
		/* the child is named as its parent was, as perf's thread__fork names it */
		const char *parent = sb->ptid >= 0 ? cst_symbolizer_comm(sym, sb->ptid) : NULL;
		char name[sizeof(sym->comms[0].name)];
		int err = 0;

		if (parent && sb->tid >= 0 && !cst_symbolizer_comm(sym, sb->tid)) {
			/* copied: set_comm may move the names */
			snprintf(name, sizeof(name), "%s", parent);
			err = set_comm(sym, sb->tid, name);
		}

		if (err < 0)
			return err;
		/* a new process (not a new thread) inherits its parent's mappings */
		return sb->pid != sb->ppid && sb->ppid >= 0 ? sym_space_fork(sym, sb->ppid, sb->pid) : 0;
	}
	case cst_sb_lost:
		return add_lost(sym, sb);
	default:
		return 0;
	}
}

int cst_symbolizer_get_stats(const struct cst_symbolizer *sym, struct cst_symbolizer_stats *st)
{
	if (!sym || !st)
		return -cste_invalid;
	*st = sym->own.counts.stats;
	return 0;
}

struct run_ctx {
	struct cst_symbolizer *sym;
	cst_sym_elem_fn fn;
	cst_sideband_fn sb_fn; /* NULL: the sideband is the symbolizer's only */
	void *ctx;
};

static int run_elem(void *ctx, const struct cst_elem *elem)
{
	struct run_ctx *rc = ctx;

	return cst_symbolizer_feed(rc->sym, elem, rc->fn, rc->ctx);
}

static int run_sideband(void *ctx, const struct cst_sideband *sb)
{
	struct run_ctx *rc = ctx;
	int err = cst_symbolizer_add_sideband(rc->sym, sb);

	return err || !rc->sb_fn ? err : rc->sb_fn(rc->ctx, sb);
}

/* The trace's memory images, before a run. */
static int add_session_images(struct cst_symbolizer *sym, struct cst_session *session)
{
	const struct cst_trace *trace = cst_session_trace(session);

	return trace ? cst_symbolizer_add_trace_images(sym, trace) : 0;
}

int cst_symbolizer_run(struct cst_symbolizer *sym, struct cst_session *session,
		       cst_sym_elem_fn fn, void *ctx)
{
	return cst_symbolizer_run_sideband(sym, session, fn, NULL, ctx);
}

int cst_symbolizer_run_sideband(struct cst_symbolizer *sym, struct cst_session *session,
				cst_sym_elem_fn fn, cst_sideband_fn sb_fn, void *ctx)
{
	struct run_ctx rc = {sym, fn, sb_fn, ctx};
	int err;

	if (!sym || !session || !fn)
		return -cste_invalid;
	err = add_session_images(sym, session);
	return err ? err : cst_session_run(session, run_elem, run_sideband, &rc);
}

int cst_symbolizer_run_views(struct cst_symbolizer *sym, struct cst_session *session,
			     const struct cst_view_ops *ops, void *ops_ctx, cst_sym_elem_fn fn,
			     void *ctx, cst_lines_fn write, void *write_ctx)
{
	struct run_ctx rc = {sym, fn, NULL, ctx};
	int err;

	if (!sym || sym->main || !session || !ops || !fn || !write)
		return -cste_invalid;
	err = add_session_images(sym, session);
	if (err)
		return err;
	cst_symbolizer_share(sym, true);
	err = cst_session_run_views(session, ops, ops_ctx, run_elem, run_sideband, &rc, write,
				    write_ctx);
	cst_symbolizer_share(sym, false);
	return err;
}
