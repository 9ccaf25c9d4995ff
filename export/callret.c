/* Calls and call paths as perf's call/return processor makes them from branch
 * samples (tools/perf/util/thread-stack.c, Linux 6.1: what export-to-sqlite.py
 * stores with "calls"), so that queries over perf's calls table give the same
 * answers here. cstrace's own call model (cst_calls, docs/symbolize.md) reads
 * tail calls, longjmp and signals differently; docs/export.md lists how this one
 * does.
 *
 * A thread's stack holds entries with the address a return would land on and a
 * call path (a node of the tree of distinct stacks: parent, symbol, and the
 * address where there is no symbol). A call pushes; a return pops to the entry it
 * returns to (unwinding the ones above as "no return"), or, landing nowhere
 * known, is taken as a return from a call that was not seen. A branch that is no
 * call to the first instruction of another symbol pushes a "jump" entry. Trace
 * that ends pushes a placeholder that the trace's next beginning pops. A call
 * leaves the calls table when its entry is popped: perf writes calls in the
 * order they end, giving a caller its id when its first callee ends. */
#include "export_int.h"

#include <stdlib.h>
#include <string.h>

#define F(x) CST_EXPORT_FLAG_##x
/* perf's kernel start without a kernel map: no address above it is user space */
#define KERNEL_START (1ull << 63)

/* perf's call_path__findnew: one node per (parent, symbol, address without one) */
static struct exp_path *path_get(struct cst_export *e, struct exp_path *parent,
				 const struct exp_sym *sym, uint64_t ip, int *err)
{
	struct exp_path *p;
	bool in_kernel = ip >= KERNEL_START;

	if (sym)
		ip = 0;
	p = exp_map_get(&e->paths, (uintptr_t)parent, (uintptr_t)sym, ip);
	if (p)
		return p;
	p = calloc(1, sizeof(*p));
	if (!p || exp_map_put(&e->paths, (uintptr_t)parent, (uintptr_t)sym, ip, p) < 0) {
		free(p);
		*err = -cste_nomem;
		return NULL;
	}
	p->parent = parent;
	p->sym = sym;
	p->ip = ip;
	p->in_kernel = in_kernel;
	return p;
}

static int path_export(struct cst_export *e, struct exp_path *p)
{
	struct cst_export_row r = {.table = cst_export_call_paths};
	int err;

	if (p->db_id)
		return 0;
	if (p->parent && (err = path_export(e, p->parent)))
		return err;
	p->db_id = e->next[cst_export_call_paths]++;
	e->st.call_paths++;
	r.u.call_path = (struct cst_export_call_path_row){
		p->db_id, p->parent ? p->parent->db_id : 0, p->sym ? p->sym->db_id : 0, p->ip};
	return exp_emit(e, &r);
}

/* The entry @idx of @ts ends at @time (by the sample @ref): its calls row. */
static int call_return(struct cst_export *e, const struct exp_thread *t, struct exp_stack *ts,
		       size_t idx, uint64_t time, int64_t ref, bool no_return)
{
	struct exp_entry *x = &ts->e[idx];
	struct cst_export_row r = {.table = cst_export_calls};
	struct cst_export_call_row *c = &r.u.call;
	int err;

	if ((err = path_export(e, x->cp)))
		return err;
	c->id = x->db_id ? x->db_id : e->next[cst_export_calls]++;
	/* the caller gets its id before it ends: the child's row names it */
	if (idx) {
		if (!ts->e[idx - 1].db_id)
			ts->e[idx - 1].db_id = e->next[cst_export_calls]++;
		c->parent_id = ts->e[idx - 1].db_id;
	}
	c->thread_id = t->db_id;
	c->comm_id = ts->comm ? ts->comm->db_id : 0;
	c->call_path_id = x->cp->db_id;
	c->call_time = x->timestamp;
	c->return_time = time;
	c->branch_count = ts->branch_count - x->branch_count;
	c->call_id = (int64_t)x->ref;
	c->return_id = ref;
	c->parent_call_path_id = x->cp->parent ? x->cp->parent->db_id : 0;
	c->flags = (x->no_call ? CST_EXPORT_CALL_NO_CALL : 0) |
		   (no_return ? CST_EXPORT_CALL_NO_RETURN : 0) |
		   (x->non_call ? CST_EXPORT_CALL_NON_CALL : 0);
	c->insn_count = ts->insn_count - x->insn_count;
	c->cyc_count = ts->cyc_count - x->cyc_count;
	e->st.calls++;
	return exp_emit(e, &r);
}

static int flush(struct cst_export *e, const struct exp_thread *t, struct exp_stack *ts)
{
	int err;

	while (ts->n)
		if ((err = call_return(e, t, ts, --ts->n, ts->last_time, 0, true)))
			return err;
	return 0;
}

static int push(struct cst_export *e, const struct exp_thread *t, struct exp_stack *ts,
		uint64_t ret_addr, uint64_t time, int64_t ref, struct exp_path *cp, bool no_call,
		bool trace_end)
{
	struct exp_entry *x;
	int err;

	if (!cp)
		return -cste_nomem;
	if (ts->n >= EXP_MAX_DEPTH) {
		/* memory stays bounded: a runaway stack is ended, as lost trace would */
		e->st.stacks_cut++;
		if ((err = flush(e, t, ts)))
			return err;
	}
	if (CST_GROW(ts->e, ts->cap, ts->n + 1) < 0)
		return -cste_nomem;
	x = &ts->e[ts->n++];
	*x = (struct exp_entry){.ret_addr = ret_addr,
				.timestamp = time,
				.ref = (uint64_t)ref,
				.branch_count = ts->branch_count,
				.insn_count = ts->insn_count,
				.cyc_count = ts->cyc_count,
				.cp = cp,
				.no_call = no_call,
				.trace_end = trace_end};
	if (ts->n > e->st.max_depth)
		e->st.max_depth = (uint32_t)ts->n;
	return 0;
}

static struct exp_entry *top(struct exp_stack *ts)
{
	return &ts->e[ts->n - 1];
}

/* A return to @ret_addr: pop to the entry it returns to. 1: no entry matched. */
static int pop_to(struct cst_export *e, const struct exp_thread *t, struct exp_stack *ts,
		  uint64_t ret_addr, uint64_t time, int64_t ref, const struct exp_sym *sym)
{
	int err;

	if (!ts->n)
		return 1;
	if (ts->n == 1 && ts->e[0].cp->sym == sym)
		return call_return(e, t, ts, --ts->n, time, ref, false);
	if (top(ts)->ret_addr == ret_addr && !top(ts)->non_call)
		return call_return(e, t, ts, --ts->n, time, ref, false);
	for (size_t i = ts->n - 1; i-- > 0;) {
		if (ts->e[i].ret_addr != ret_addr || ts->e[i].non_call)
			continue;
		/* the entries above it never returned */
		while (ts->n > i + 1)
			if ((err = call_return(e, t, ts, --ts->n, time, ref, true)))
				return err;
		return call_return(e, t, ts, --ts->n, time, ref, false);
	}
	return 1;
}

/* A return that no entry expected: its call was not seen. */
static int no_call_return(struct cst_export *e, const struct exp_thread *t, struct exp_stack *ts,
			  const struct exp_branch *b)
{
	struct exp_path *parent, *cp;
	int err = 0;

	if (b->ip >= KERNEL_START && b->addr < KERNEL_START) {
		/* back to user space: the kernel's entries are done */
		while (ts->n && top(ts)->cp->in_kernel)
			if ((err = call_return(e, t, ts, --ts->n, b->time, b->ref, true)))
				return err;
		if (!ts->n)
			return push(e, t, ts, 0, b->time, b->ref, path_get(e, &e->root, b->to, b->addr, &err),
				    true, false);
	} else if (ts->n && top(ts)->cp->in_kernel && b->ip < KERNEL_START) {
		while (ts->n && top(ts)->cp->in_kernel)
			if ((err = call_return(e, t, ts, --ts->n, b->time, b->ref, true)))
				return err;
	}
	parent = ts->n ? top(ts)->cp : &e->root;
	if (parent->sym == b->from) {
		/* at the bottom: the call was before trace began; the target takes over */
		if (ts->n == 1 && (err = call_return(e, t, ts, --ts->n, b->time, b->ref, false)))
			return err;
		if (!ts->n)
			return push(e, t, ts, b->addr, b->time, b->ref,
				    path_get(e, &e->root, b->to, b->addr, &err), true, false);
		/* else a return used as a jump */
		err = push(e, t, ts, 0, b->time, b->ref, path_get(e, parent, b->to, b->addr, &err),
			   true, false);
		if (!err)
			top(ts)->non_call = true;
		return err;
	}
	/* the caller has not returned: push the target, then push and pop the source */
	cp = path_get(e, parent, b->to, b->addr, &err);
	if ((err = push(e, t, ts, b->addr, b->time, b->ref, cp, true, false)))
		return err;
	cp = path_get(e, cp, b->from, b->ip, &err);
	if ((err = push(e, t, ts, b->ip, b->time, b->ref, cp, true, false)))
		return err;
	return call_return(e, t, ts, --ts->n, b->time, b->ref, false);
}

static struct exp_stack *stack_of(struct exp_thread *t, int32_t cpu)
{
	/* the idle task (pid = tid = 0) runs on every CPU: a stack per CPU */
	uint32_t i = !t->pid && !t->tid && cpu > 0 ? (uint32_t)cpu : 0;

	if (i >= t->nstacks) {
		struct exp_stack *s = realloc(t->stacks, (i + 1) * sizeof(*s));

		if (!s)
			return NULL;
		memset(s + t->nstacks, 0, (i + 1 - t->nstacks) * sizeof(*s));
		t->stacks = s;
		t->nstacks = i + 1;
	}
	return &t->stacks[i];
}

int exp_callret_branch(struct cst_export *e, const struct exp_branch *b)
{
	struct exp_thread *t = b->thread;
	struct exp_stack *ts = stack_of(t, b->cpu);
	int err = 0;

	if (!ts)
		return -cste_nomem;
	if (!ts->used) {
		ts->used = true;
		ts->comm = b->comm;
	}
	/* an exec starts the main thread's stack again */
	if (ts->comm != b->comm && t->pid == t->tid) {
		if ((err = flush(e, t, ts)))
			return err;
		ts->comm = b->comm;
	}
	/* an empty stack starts with where the sample is */
	if (!ts->n && (b->ip || b->addr)) {
		uint64_t ip = b->ip ? b->ip : b->addr;

		err = push(e, t, ts, ip, b->time, b->ref,
			   path_get(e, &e->root, b->ip ? b->from : b->to, ip, &err), true, false);
		if (err)
			return err;
	}
	ts->branch_count++;
	ts->insn_count += b->insn_cnt;
	ts->cyc_count += b->cyc_cnt;
	ts->last_time = b->time;
	if (b->flags & F(CALL)) {
		uint64_t ret = b->ip + b->insn_len;

		if (!b->ip || !b->addr || ret == b->addr)
			return 0; /* zero-length calls are not calls */
		return push(e, t, ts, ret, b->time, b->ref, path_get(e, top(ts)->cp, b->to, b->addr, &err),
			    false, b->flags & F(TRACE_END));
	}
	if (b->flags & F(RETURN)) {
		if (!b->ip || !b->addr)
			return 0;
		err = pop_to(e, t, ts, b->addr, b->time, b->ref, b->from);
		return err > 0 ? no_call_return(e, t, ts, b) : err;
	}
	if (b->flags & F(TRACE_BEGIN)) {
		/* the placeholder of where trace ended */
		if (ts->n && top(ts)->trace_end)
			return call_return(e, t, ts, --ts->n, b->time, b->ref, false);
		return 0;
	}
	if (b->flags & F(TRACE_END)) {
		if (!ts->n || (ts->n == 1 && ts->e[0].ref == (uint64_t)b->ref))
			return 0;
		return push(e, t, ts, b->ip + b->insn_len, b->time, b->ref,
			    path_get(e, top(ts)->cp, NULL, 0, &err), false, true);
	}
	if ((b->flags & F(BRANCH)) && b->from != b->to && b->to && b->to_map_addr == b->to->start) {
		/* a jump to another function's start (a tail call): on the stack, but
		 * no call, and a return pops it first */
		err = push(e, t, ts, 0, b->time, b->ref, path_get(e, top(ts)->cp, b->to, b->addr, &err),
			   false, false);
		if (!err)
			top(ts)->non_call = true;
	}
	return err;
}

static int thread_cmp(const void *a, const void *b)
{
	const struct exp_thread *x = *(const struct exp_thread *const *)a;
	const struct exp_thread *y = *(const struct exp_thread *const *)b;
	/* perf's machine keeps threads in 256 trees by tid, and deletes them tree by
	 * tree */
	uint32_t bx = (uint32_t)x->tid % 256, by = (uint32_t)y->tid % 256;

	if (bx != by)
		return bx < by ? -1 : 1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

int exp_callret_flush_all(struct cst_export *e)
{
	struct exp_thread **v = malloc((e->nall ? e->nall : 1) * sizeof(*v));
	int err = 0;

	if (!v)
		return -cste_nomem;
	memcpy(v, e->all_threads, e->nall * sizeof(*v));
	qsort(v, e->nall, sizeof(*v), thread_cmp);
	for (size_t i = 0; !err && i < e->nall; i++)
		for (uint32_t s = 0; !err && s < v[i]->nstacks; s++)
			err = flush(e, v[i], &v[i]->stacks[s]);
	free(v);
	return err;
}

void exp_callret_free(struct cst_export *e)
{
	for (size_t i = 0; i < e->nall; i++) {
		for (uint32_t s = 0; s < e->all_threads[i]->nstacks; s++)
			free(e->all_threads[i]->stacks[s].e);
		free(e->all_threads[i]->stacks);
	}
	EXP_MAP_EACH(&e->paths, i)
	free(e->paths.s[i].v);
	exp_map_free(&e->paths);
}
