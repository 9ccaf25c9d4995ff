/* What perf's machine keeps and its database export writes once each: threads
 * and their comms (as perf names threads: ":tid" until a COMM or a fork names
 * them), binaries and symbols (a symbol "unknown" of its own for each address
 * in a binary where no symbol is, as perf's db_ids_from_al makes one). */
#include "export_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct exp_comm *comm_new(const char *name, uint64_t time, bool exec)
{
	struct exp_comm *c = calloc(1, sizeof(*c));

	if (!c || !(c->name = strdup(name))) {
		free(c);
		return NULL;
	}
	c->time = time;
	c->exec = exec;
	return c;
}

static struct exp_thread *thread_new(struct cst_export *e, int32_t pid, int32_t tid)
{
	struct exp_thread *t = calloc(1, sizeof(*t));
	char name[32];

	if (!t)
		return NULL;
	snprintf(name, sizeof(name), ":%d", tid);
	t->pid = pid;
	t->tid = tid;
	t->order = e->thread_order++;
	t->comm = comm_new(name, 0, false);
	if (!t->comm || CST_GROW(e->all_threads, e->all_cap, e->nall + 1) < 0 ||
	    exp_map_put(&e->threads, (uint64_t)(int64_t)tid, 0, 0, t) < 0) {
		if (t->comm)
			free(t->comm->name);
		free(t->comm);
		free(t);
		return NULL;
	}
	e->all_threads[e->nall++] = t;
	return t;
}

static struct exp_thread *thread_find(struct cst_export *e, int32_t tid)
{
	return exp_map_get(&e->threads, (uint64_t)(int64_t)tid, 0, 0);
}

/* perf forgets a thread whose tid is taken again (a fork); its stacks are
 * flushed with everyone's at the end. */
static void thread_forget(struct cst_export *e, struct exp_thread *t)
{
	exp_map_del(&e->threads, (uint64_t)(int64_t)t->tid, 0, 0);
}

struct exp_thread *exp_thread_findnew(struct cst_export *e, int32_t pid, int32_t tid)
{
	struct exp_thread *t = thread_find(e, tid);

	if (t) {
		/* perf's machine__update_thread_pid */
		if (pid == t->pid || pid == -1 || t->pid != -1)
			return t;
		t->pid = pid;
	} else {
		t = thread_new(e, pid, tid);
		if (!t)
			return NULL;
	}
	/* a thread that is not its process's main thread brings the main one */
	if (pid != -1 && pid != tid && !exp_thread_findnew(e, pid, pid))
		return NULL;
	return t;
}

int exp_thread_set_comm(struct cst_export *e, struct exp_thread *t, const char *name,
			uint64_t time, bool exec)
{
	(void)e;
	if (!t->comm_set) {
		/* the first name replaces ":tid" in place, as perf's comm__override */
		char *s = strdup(name);

		if (!s)
			return -cste_nomem;
		free(t->comm->name);
		t->comm->name = s;
		t->comm->time = time;
		if (exec)
			t->comm->exec = true;
	} else {
		struct exp_comm *c = comm_new(name, time, exec);

		if (!c)
			return -cste_nomem;
		c->older = t->comm;
		t->comm = c;
	}
	t->comm_set = true;
	return 0;
}

int exp_fork(struct cst_export *e, int32_t pid, int32_t tid, int32_t ppid, int32_t ptid,
	     uint64_t time)
{
	struct exp_thread *t = thread_find(e, tid), *parent = exp_thread_findnew(e, ppid, ptid);

	if (!parent)
		return -cste_nomem;
	if (parent->pid != ppid) {
		/* not the parent after all: a lost event left it behind */
		thread_forget(e, parent);
		if (!(parent = exp_thread_findnew(e, ppid, ptid)))
			return -cste_nomem;
	}
	if (t)
		thread_forget(e, t);
	t = exp_thread_findnew(e, pid, tid);
	if (!t)
		return -cste_nomem;
	return parent->comm_set ? exp_thread_set_comm(e, t, parent->comm->name, time, false) : 0;
}

/* perf's thread__exec_comm: the newest exec comm; else the oldest, unless that is
 * a synthesized parent's name without a time on a main thread. */
static const struct exp_comm *exec_comm(const struct exp_thread *t)
{
	const struct exp_comm *c, *last = NULL, *second_last = NULL;

	for (c = t->comm; c; c = c->older) {
		if (c->exec)
			return c;
		second_last = last;
		last = c;
	}
	if (second_last && !last->time && t->pid == t->tid)
		return second_last;
	return last;
}

static int thread_export(struct cst_export *e, struct exp_thread *t, const struct exp_thread *main)
{
	struct cst_export_row r = {.table = cst_export_threads};

	if (t->db_id)
		return 0;
	t->db_id = e->next[cst_export_threads]++;
	e->st.threads++;
	r.u.thread = (struct cst_export_thread_row){t->db_id, e->machine_id,
						     main ? main->db_id : 0, t->pid, t->tid};
	return exp_emit(e, &r);
}

static int comm_export(struct cst_export *e, struct exp_comm *c, const struct exp_thread *t)
{
	struct cst_export_row r = {.table = cst_export_comms};

	if (c->db_id)
		return 0;
	c->db_id = e->next[cst_export_comms]++;
	e->st.comms++;
	r.u.comm = (struct cst_export_comm_row){c->db_id, c->name, t->db_id, c->time, c->exec};
	return exp_emit(e, &r);
}

static int comm_thread_export(struct cst_export *e, const struct exp_comm *c,
			      const struct exp_thread *t)
{
	struct cst_export_row r = {.table = cst_export_comm_threads};

	r.u.comm_thread = (struct cst_export_comm_thread_row){e->next[cst_export_comm_threads]++,
							       c->db_id, t->db_id};
	return exp_emit(e, &r);
}

int exp_threads_export(struct cst_export *e, struct exp_thread *t, const struct exp_comm **comm)
{
	struct exp_thread *main = t->pid == t->tid ? t : t->pid == -1 ? NULL : thread_find(e, t->pid);
	struct exp_comm *c = NULL;
	int err;

	if (main && main->pid != main->tid)
		main = NULL;
	if (main) {
		if ((err = thread_export(e, main, main)))
			return err;
		c = (struct exp_comm *)(e->opts.comm_exec ? exec_comm(main) : main->comm);
		if (c && !c->db_id) {
			/* an exec comm belongs to its main thread */
			if ((err = comm_export(e, c, main)) || (err = comm_thread_export(e, c, main)))
				return err;
		}
	}
	if (t != main) {
		bool link = c && !t->db_id;

		if ((err = thread_export(e, t, main)))
			return err;
		if (link && (err = comm_thread_export(e, c, t)))
			return err;
	}
	*comm = c;
	return comm_export(e, t->comm, t);
}

/* ---- binaries and symbols */

static struct exp_dso *dso_get(struct cst_export *e, const char *key, int *err)
{
	struct exp_dso *d = exp_map_get(&e->dsos, (uintptr_t)key, 0, 0);
	struct cst_sym_dso_info info;
	const char *path;
	char hex[2 * sizeof(info.build_id) + 1] = "";

	if (d)
		return d;
	path = key;
	if (e->opts.sym && cst_symbolizer_dso_info(e->opts.sym, key, &info) == 0) {
		path = info.path ? info.path : key;
		exp_hex(info.build_id, info.build_id_size, hex);
	}
	d = calloc(1, sizeof(*d));
	if (!d || !(d->long_name = strdup(path)) || !(d->short_name = strdup(cst_path_base(path))) ||
	    !(d->build_id = strdup(hex)) || exp_map_put(&e->dsos, (uintptr_t)key, 0, 0, d) < 0) {
		if (d) {
			free(d->long_name);
			free(d->short_name);
			free(d->build_id);
		}
		free(d);
		*err = -cste_nomem;
		return NULL;
	}
	d->key = key;
	return d;
}

static struct exp_sym *sym_new(struct cst_export *e, struct exp_dso *d, uint64_t k1, uint64_t k2,
			       uint64_t k3)
{
	struct exp_sym *s = calloc(1, sizeof(*s));

	if (s && exp_map_put(&e->syms, k1, k2, k3, s) < 0) {
		free(s);
		return NULL;
	}
	if (s)
		s->dso = d;
	return s;
}

int exp_loc_find(struct cst_export *e, const struct cst_sym_piece *pc, uint64_t addr,
		 struct exp_loc *l)
{
	const struct cst_sym_loc *sl = &pc->loc;
	const struct cst_sym_func *f = sl->func;
	struct exp_dso *d;
	struct exp_sym *s;
	int err = 0;

	memset(l, 0, sizeof(*l));
	l->map_addr = addr;
	/* no mapping: perf has no binary and no symbol there */
	if (!sl->dso || (sl->dso[0] == '[' && !strcmp(sl->dso, "[unknown]")))
		return 0;
	d = dso_get(e, sl->dso, &err);
	if (!d)
		return err;
	l->dso = d;
	l->map_addr = sl->dso_offset + (addr - pc->start);
	/* perf keeps the last answer per binary: the same address gets it again,
	 * even when a symbol was inserted since (see exp_loc_export) */
	if (d->cache_addr == l->map_addr && d->cache_sym) {
		l->sym = d->cache_sym;
		return 0;
	}
	if (f) {
		s = exp_map_get(&e->syms, (uintptr_t)f, 0, 0);
		if (!s) {
			if (!(s = sym_new(e, d, (uintptr_t)f, 0, 0)))
				return -cste_nomem;
			s->start = sl->dso_offset - sl->func_offset;
			s->end = s->start + f->size;
			s->name = f->name;
			s->binding = f->binding;
		}
	} else {
		/* an "unknown" made for exactly this address before, if any */
		s = exp_map_get(&e->syms, (uintptr_t)d, l->map_addr, 1);
	}
	d->cache_addr = l->map_addr;
	d->cache_sym = s;
	l->sym = s;
	return 0;
}

int exp_loc_export(struct cst_export *e, struct exp_loc *l, int64_t *dso_id, int64_t *sym_id,
		   uint64_t *off)
{
	struct exp_dso *d = l->dso;
	struct exp_sym *s;
	struct cst_export_row r;
	int err;

	if (!d)
		return 0;
	if (!d->db_id) {
		d->db_id = e->next[cst_export_dsos]++;
		e->st.dsos++;
		r.table = cst_export_dsos;
		r.u.dso = (struct cst_export_dso_row){d->db_id, e->machine_id, d->short_name,
						       d->long_name, d->build_id};
		if ((err = exp_emit(e, &r)))
			return err;
	}
	if (!l->sym) {
		/* perf's symbol__new(addr, 0, 0, 0, "unknown"), inserted into the
		 * binary; the insertion updates its cache for any address at or above
		 * (a symbol of no size "covers" them there) */
		if (!(s = sym_new(e, d, (uintptr_t)d, l->map_addr, 1)))
			return -cste_nomem;
		s->start = s->end = l->map_addr;
		s->name = "unknown";
		if (d->cache_addr >= s->start)
			d->cache_sym = s;
		l->sym = s;
	}
	s = l->sym;
	if (!s->db_id) {
		s->db_id = e->next[cst_export_symbols]++;
		e->st.symbols++;
		r.table = cst_export_symbols;
		r.u.symbol = (struct cst_export_symbol_row){s->db_id, d->db_id, s->start, s->end,
							     s->binding, s->name};
		if ((err = exp_emit(e, &r)))
			return err;
	}
	*dso_id = d->db_id;
	*sym_id = s->db_id;
	*off = l->map_addr - s->start;
	return 0;
}

void exp_objects_free(struct cst_export *e)
{
	for (size_t i = 0; i < e->nall; i++) {
		struct exp_thread *t = e->all_threads[i];

		while (t->comm) {
			struct exp_comm *c = t->comm;

			t->comm = c->older;
			free(c->name);
			free(c);
		}
		free(t);
	}
	free(e->all_threads);
	exp_map_free(&e->threads);
	EXP_MAP_EACH(&e->dsos, i)
	{
		struct exp_dso *d = e->dsos.s[i].v;

		free(d->short_name);
		free(d->long_name);
		free(d->build_id);
		free(d);
	}
	exp_map_free(&e->dsos);
	EXP_MAP_EACH(&e->syms, i)
	free(e->syms.s[i].v);
	exp_map_free(&e->syms);
}
