/* The call model: one shadow stack per thread, moved by how each executed range
 * ended (call, return, other taken branch, exception) and where the next range of
 * the same thread starts. The rules are in symbolize.h; this file applies them.
 *
 * A range's last instruction says what kind of transfer happened, but only the
 * thread's next range says where it went, so each thread keeps its transfer
 * pending until then. An exception keeps the transfer that was pending when it
 * came: a handler may run first, and the transfer completes when the
 * interrupted code resumes. */
#include "calls_int.h"

#include <stdlib.h>
#include <string.h>

int cst_calls_alloc(struct cst_calls **out, cst_call_fn fn, void *ctx)
{
	struct cst_calls *c;

	if (!out || !fn)
		return -cste_invalid;
	c = calloc(1, sizeof(*c));
	if (!c)
		return -cste_nomem;
	c->fn = fn;
	c->ctx = ctx;
	*out = c;
	return 0;
}

void cst_calls_free(struct cst_calls *calls)
{
	if (!calls)
		return;
	for (uint32_t i = 0; i < calls->nthreads; i++) {
		free(calls->threads[i].stack);
		free(calls->threads[i].stash);
	}
	free(calls->threads);
	free(calls->index);
	sym_calls_rel_fini(calls);
	free(calls);
}

static uint64_t thread_hash(const void *ctx, uint32_t i)
{
	return (uint64_t)((const struct cst_calls *)ctx)->threads[i].key * 0x9e3779b97f4a7c15ull;
}

/* The thread an element belongs to (its key): its thread ID where the input
 * names one, else the context ID's process (PID_IN_CONTEXTIDR puts the thread's
 * ID there), else one unknown thread per trace ID. */
int64_t sym_calls_key(const struct cst_sym_elem *se)
{
	const struct cst_elem *e = se->elem;

	return e->tid >= 0 ? e->tid : se->pid >= 0 ? se->pid : -1 - (int64_t)e->trace_id;
}

struct thread *sym_calls_find(struct cst_calls *c, int64_t key, const struct cst_sym_elem *add)
{
	const struct cst_elem *e = add ? add->elem : NULL;
	const struct cst_sym_elem *se = add;
	struct thread *t;
	uint32_t s;

	/* most elements are the thread's of the one before */
	if (c->memo && c->threads[c->memo - 1].key == key)
		return &c->threads[c->memo - 1];
	if (c->nthreads * 2 >= c->icap &&
	    cst_index_grow(&c->index, &c->icap, 64, c->nthreads, thread_hash, c) < 0)
		return NULL;
	for (s = (uint64_t)key * 0x9e3779b97f4a7c15ull & (c->icap - 1); c->index[s];
	     s = (s + 1) & (c->icap - 1))
		if (c->threads[c->index[s] - 1].key == key) {
			c->memo = c->index[s];
			return &c->threads[c->index[s] - 1];
		}
	if (!add)
		return NULL;
	if (CST_GROW(c->threads, c->cap, (size_t)c->nthreads + 1) < 0)
		return NULL;
	t = &c->threads[c->nthreads];
	memset(t, 0, sizeof(*t));
	t->key = key;
	t->pid = e->pid >= 0 ? e->pid : se->pid;
	t->tid = e->tid >= 0 ? e->tid : se->pid;
	t->trace_id = e->trace_id;
	t->seen_gaps = c->gaps[e->trace_id & (NIDS - 1)];
	c->index[s] = ++c->nthreads;
	c->st.threads = c->nthreads;
	return t;
}

static int emit(struct cst_calls *c, struct thread *t, enum cst_call_kind kind,
		enum cst_call_end end, const struct cst_sym_piece *pc, uint32_t n)
{
	struct cst_call_event ev = {
		.kind = kind,
		.end = end,
		.thread = (uint32_t)(t - c->threads),
		.pid = t->pid,
		.tid = t->tid,
		.trace_id = t->trace_id,
		.frame = t->depth ? &t->stack[t->depth - 1] : NULL,
		.stack = t->stack,
		.depth = t->depth,
		.time = c->time,
		.icount = c->icount[t->trace_id & (NIDS - 1)],
		.num_insns = n,
		.piece = pc,
		.elem = c->elem,
	};

	return c->fn(c->ctx, &ev);
}

static int pop(struct cst_calls *c, struct thread *t, enum cst_call_end end)
{
	int ret = emit(c, t, cst_call_exit, end, NULL, 0);

	t->depth--;
	if (c->rel)
		sym_calls_rel_moved(c, t);
	return ret;
}

/* Pop every frame above @keep (a depth): the top one for @end, the rest unwound. */
static int pop_to(struct cst_calls *c, struct thread *t, uint32_t keep, enum cst_call_end end)
{
	int ret = 0;

	while (t->depth > keep && !ret) {
		ret = pop(c, t, end);
		if (end == cst_call_end_return)
			end = cst_call_end_unwind;
	}
	return ret;
}

static int reset(struct cst_calls *c, struct thread *t, enum cst_call_end end);

static int push(struct cst_calls *c, struct thread *t, const struct cst_sym_piece *pc,
		enum cst_call_how how, uint64_t ret_addr)
{
	struct cst_call_frame *f;

	if (t->depth >= MAX_DEPTH) {
		int ret;

		if (c->rel) /* the caller's model knows how deep it is */
			return SYM_CALLS_ESCAPE;
		ret = reset(c, t, cst_call_end_gap);
		c->st.too_deep++;
		t->live = true;
		if (ret)
			return ret;
		how = cst_call_how_start;
	}
	if (sym_calls_room(t, (size_t)t->depth + 1) < 0)
		return -cste_nomem;
	f = &t->stack[t->depth];
	memset(f, 0, sizeof(*f));
	f->func = pc->loc.func;
	f->dso = pc->loc.dso;
	f->entry = pc->start;
	f->ret_addr = ret_addr;
	f->enter_time = c->time;
	f->enter_icount = c->icount[t->trace_id & (NIDS - 1)];
	f->how = how;
	f->entered = pc->enters_func;
	t->stash[t->depth] = (struct stash){pend_none, 0, 0, false};
	t->depth++;
	if (t->depth > c->st.max_depth)
		c->st.max_depth = t->depth;
	if (c->rel)
		sym_calls_rel_moved(c, t);
	return emit(c, t, cst_call_enter, 0, NULL, 0);
}

/* The top frame's code gives way to another function's: a tail call or a jump.
 * The new frame returns where the old one would have. */
static int replace(struct cst_calls *c, struct thread *t, const struct cst_sym_piece *pc,
		   enum cst_call_how how)
{
	struct cst_call_frame old = t->stack[t->depth - 1];
	struct stash st = t->stash[t->depth - 1];
	int ret = pop(c, t, cst_call_end_replace);

	if (ret)
		return ret;
	ret = push(c, t, pc, how, old.ret_addr);
	t->stack[t->depth - 1].exception = old.exception;
	t->stack[t->depth - 1].resume = old.resume;
	t->stash[t->depth - 1] = st;
	return ret;
}

/* Lookups from the top of the stack down: the index of the first frame that
 * returns to @addr, resumes at @addr, or runs @pc's function; -1 if none, and
 * CALLS_UNKNOWN where a stretch's model would have to look below what it knows
 * (the prefix frame's function is known, not the rest of it). */
int64_t sym_calls_find_ret(const struct thread *t, uint64_t addr)
{
	for (uint32_t i = t->depth; i-- > 0;) {
		if (t->stash[i].prefix)
			return CALLS_UNKNOWN;
		if (t->stack[i].ret_addr == addr && addr)
			return i;
	}
	return -1;
}

int64_t sym_calls_find_resume(const struct thread *t, uint64_t addr)
{
	for (uint32_t i = t->depth; i-- > 0;) {
		if (t->stash[i].prefix)
			return CALLS_UNKNOWN;
		if (t->stack[i].exception && t->stack[i].resume == addr)
			return i;
	}
	return -1;
}

static int64_t find_func(const struct thread *t, const struct cst_sym_piece *pc)
{
	for (uint32_t i = t->depth; i-- > 0;) {
		if (sym_calls_same_func(&t->stack[i], pc))
			return i;
		if (t->stash[i].prefix)
			return CALLS_UNKNOWN;
	}
	return -1;
}

/* An indirect branch's target, looked up among the return addresses, that is
 * none of those a stretch's model knows: it takes for granted that no frame
 * below returns there either (-1), which the caller checks. (A switch jumps
 * like this all the time; a return that is not marked as one seldom does.) */
static int64_t no_ret_below(struct cst_calls *c, struct thread *t, int64_t at, uint64_t addr)
{
	if (at == CALLS_UNKNOWN) {
		sym_calls_assume(c, t, addr);
		at = -1;
	}
	return at;
}

/* Control is in @pc's function without a call: make it the top frame. */
static int settle(struct cst_calls *c, struct thread *t, const struct cst_sym_piece *pc)
{
	if (!t->depth) {
		c->st.unknown_returns++;
		return push(c, t, pc, cst_call_how_return, 0);
	}
	if (sym_calls_same_func(&t->stack[t->depth - 1], pc))
		return 0;
	return replace(c, t, pc, pc->enters_func ? cst_call_how_tail : cst_call_how_jump);
}

/* A return landed at @pc. */
static int do_return(struct cst_calls *c, struct thread *t, const struct cst_sym_piece *pc)
{
	int64_t at = sym_calls_find_ret(t, pc->start);
	struct cst_call_frame top;
	struct stash st;
	int ret;

	if (at >= 0)
		return pop_to(c, t, (uint32_t)at, cst_call_end_return);
	if (at == CALLS_UNKNOWN) /* a return below what a stretch's model knows */
		return SYM_CALLS_ESCAPE;
	if (!t->depth)
		return settle(c, t, pc);
	/* A32 longjmp ends in "bx lr" to the caller of setjmp: a frame further
	 * down runs that code, so everything above it unwinds */
	at = find_func(t, pc);
	if (at >= 0)
		return pop_to(c, t, (uint32_t)at + 1, cst_call_end_return);
	if (at == CALLS_UNKNOWN)
		return SYM_CALLS_ESCAPE;
	/* no frame returns here: a signal handler returning to its trampoline, or a
	 * caller the trace never saw */
	top = t->stack[t->depth - 1];
	st = t->stash[t->depth - 1];
	ret = pop(c, t, cst_call_end_return);
	if (ret)
		return ret;
	if (t->depth && sym_calls_same_func(&t->stack[t->depth - 1], pc))
		return 0;
	if (top.exception) {
		/* the handler's return still belongs to the exception: the
		 * trampoline's own exception return comes back to top.resume */
		ret = push(c, t, pc, cst_call_how_return, 0);
		t->stack[t->depth - 1].exception = true;
		t->stack[t->depth - 1].resume = top.resume;
		t->stash[t->depth - 1] = st;
		return ret;
	}
	c->st.unknown_returns++;
	if (!t->depth)
		return push(c, t, pc, cst_call_how_return, 0);
	return replace(c, t, pc, cst_call_how_return);
}

/* A taken branch without link (not a return) landed at @pc. */
static int do_jump(struct cst_calls *c, struct thread *t, const struct cst_sym_piece *pc)
{
	int64_t at;

	if (!t->depth)
		return settle(c, t, pc);
	if (sym_calls_same_func(&t->stack[t->depth - 1], pc))
		return 0;
	if (pc->enters_func)
		return replace(c, t, pc, cst_call_how_tail);
	at = find_func(t, pc);
	if (at == CALLS_UNKNOWN) {
		/* into the middle of a function on none of the frames a stretch
		 * knows: it takes for granted that none below runs it either (a
		 * jump into another function's code is common, a longjmp rare) */
		sym_calls_assume_func(c, t, pc);
		at = -1;
	}
	if (at >= 0) /* longjmp: back into a frame further down */
		return pop_to(c, t, (uint32_t)at + 1, cst_call_end_unwind);
	return replace(c, t, pc, cst_call_how_jump);
}

/* Resolve the transfer pending in @t now that its next range starts with @pc. */
static int arrive(struct cst_calls *c, struct thread *t, const struct cst_sym_piece *pc)
{
	enum pend pend = t->pend;
	int ret;

	if (c->rel && t->exc) /* the caller's model follows exceptions */
		return SYM_CALLS_ESCAPE;
	t->pend = pend_none;
	if (t->exc) {
		int64_t at;

		t->exc = false;
		if (pc->start == t->exc_again && pc->start != t->exc_ret) {
			/* Resumed at the instruction before the return address: that
			 * instruction runs again (the kernel restarts an interrupted
			 * system call at its SVC; QEMU runs again an instruction it was
			 * stopped before). No handler ran in between, and what the
			 * first run's range said it would do is superseded. */
			return settle(c, t, pc);
		}
		if (!t->exc_ret_valid || pc->start != t->exc_ret) {
			at = sym_calls_find_resume(t, pc->start);
			if (at < 0) {
				/* a handler runs first: the interrupted transfer waits */
				ret = push(c, t, pc, cst_call_how_exception, 0);
				t->stack[t->depth - 1].exception = true;
				t->stack[t->depth - 1].resume = t->exc_ret;
				t->stash[t->depth - 1] = (struct stash){pend, t->pend_ret, 0, false};
				return ret;
			}
			/* back where an earlier exception interrupted */
			pend = t->stash[at].pend;
			t->pend_ret = t->stash[at].pend_ret;
			ret = pop_to(c, t, (uint32_t)at, cst_call_end_return);
			if (ret)
				return ret;
		}
	}
	switch (pend) {
	case pend_call:
		return push(c, t, pc, cst_call_how_call, t->pend_ret);
	case pend_ret:
		return do_return(c, t, pc);
	case pend_eret: {
		int64_t at = sym_calls_find_resume(t, pc->start);

		if (at >= 0) {
			ret = pop_to(c, t, (uint32_t)at, cst_call_end_return);
			return ret ? ret : settle(c, t, pc);
		}
		if (at == CALLS_UNKNOWN) /* most likely back below what a stretch knows */
			return SYM_CALLS_ESCAPE;
		return do_jump(c, t, pc);
	}
	case pend_jump_ind: {
		/* an indirect branch that lands where a stacked call returns is that
		 * return, whatever the decoder calls it (A32 has many ways to return) */
		int64_t at = no_ret_below(c, t, sym_calls_find_ret(t, pc->start), pc->start);

		if (at >= 0)
			return pop_to(c, t, (uint32_t)at, cst_call_end_return);
		return do_jump(c, t, pc);
	}
	case pend_jump:
		return do_jump(c, t, pc);
	default:
		return settle(c, t, pc);
	}
}

/* Tracing went off for a filter (not lost): what the trace saw last stands. A
 * return it saw left its frame; a call it saw went to code the filter leaves out,
 * whose return address the frame keeps. The views hear where it went off. */
static int go_off(struct cst_calls *c, struct thread *t)
{
	int ret = 0;

	if (t->pend == pend_ret && t->depth) {
		ret = pop(c, t, cst_call_end_return);
		t->pend = pend_none;
	} else if (t->pend == pend_call && t->depth) {
		t->stash[t->depth - 1].out_ret = t->pend_ret;
		t->pend = pend_none;
	}
	t->off = true;
	c->st.filtered++;
	return ret ? ret : emit(c, t, cst_call_off, 0, NULL, 0);
}

/* Tracing comes back at @pc after it was off: back from a call that left the
 * traced code (frames a callback opened meanwhile have returned), or at a stacked
 * return address, or on in the same function; else in a function entered while
 * tracing was off: a call from untraced code, or code already running. No return
 * is made up for what the trace did not see. */
static int come_back(struct cst_calls *c, struct thread *t, const struct cst_sym_piece *pc)
{
	int64_t at = -1;

	t->off = false;
	t->pend = pend_none;
	for (uint32_t i = t->depth; i-- > 0 && at < 0;)
		if (t->stash[i].out_ret && t->stash[i].out_ret == pc->start)
			at = i;
	if (at >= 0) {
		t->stash[at].out_ret = 0;
		return pop_to(c, t, (uint32_t)at + 1, cst_call_end_return);
	}
	at = sym_calls_find_ret(t, pc->start);
	if (at >= 0)
		return pop_to(c, t, (uint32_t)at, cst_call_end_return);
	if (t->depth && sym_calls_same_func(&t->stack[t->depth - 1], pc))
		return 0;
	return push(c, t, pc, pc->enters_func ? cst_call_how_call : cst_call_how_start, 0);
}

static int reset(struct cst_calls *c, struct thread *t, enum cst_call_end end)
{
	bool had = t->live || t->depth;
	int ret = pop_to(c, t, 0, end);

	t->live = false;
	t->off = false;
	t->pend = pend_none;
	t->exc = false;
	if (!ret && had && end == cst_call_end_gap) {
		c->st.gaps++;
		ret = emit(c, t, cst_call_gap, end, NULL, 0);
	}
	return ret;
}

int sym_calls_add_range(struct cst_calls *c, struct thread *t, const struct cst_sym_elem *se)
{
	const struct cst_elem *e = se->elem;
	uint64_t *icount = &c->icount[e->trace_id & (NIDS - 1)];
	int ret = 0;

	if (!se->npieces) /* nothing known about the code (no images) */
		return 0;
	if (c->rel && (!t->live || t->off))
		return SYM_CALLS_ESCAPE;
	if (!t->live) {
		t->live = true;
		t->pend = pend_none;
		t->exc = false;
		ret = push(c, t, &se->pieces[0], cst_call_how_start, 0);
	} else if (t->off) {
		ret = come_back(c, t, &se->pieces[0]);
	} else {
		enum pend pend = t->pend;

		ret = arrive(c, t, &se->pieces[0]);
		if (ret == SYM_CALLS_ESCAPE) { /* the caller's model: as it was */
			t->pend = pend;
			return ret;
		}
	}
	for (uint32_t i = 0; i < se->npieces && !ret; i++) {
		const struct cst_sym_piece *pc = &se->pieces[i];

		if (i)
			ret = settle(c, t, pc); /* ran on into the next function */
		if (!ret)
			ret = emit(c, t, cst_call_insns, 0, pc, pc->num_insns);
		*icount += pc->num_insns;
	}
	sym_calls_end_range(t, e);
	return ret;
}

void sym_calls_end_range(struct thread *t, const struct cst_elem *e)
{
	t->last_end = e->end;
	t->last_insn = e->last_size && e->end >= e->last_size ? e->end - e->last_size : 0;
	if (!cst_elem_taken_branch(e))
		t->pend = pend_none;
	else if (e->last_subclass == cst_insn_sub_link) {
		t->pend = pend_call;
		t->pend_ret = e->end;
	} else if (e->last_subclass == cst_insn_sub_ret)
		t->pend = pend_ret;
	else if (e->last_subclass == cst_insn_sub_eret)
		t->pend = pend_eret;
	else
		t->pend = e->last_class == cst_insn_branch_indirect ? pend_jump_ind : pend_jump;
}

int sym_calls_room(struct thread *t, size_t n)
{
	return CST_GROW(t->stack, t->cap, n) < 0 || CST_GROW(t->stash, t->scap, n) < 0
		       ? -cste_nomem
		       : 0;
}

/* Lost trace on a trace ID: the thread running there resets now; others that
 * last ran there reset when they next appear (they may have run unseen). */
static bool is_gap(const struct thread *t, const struct cst_elem *e)
{
	switch (e->type) {
	case cst_elem_trace_on:
		/* trace that stops in an exception (the kernel is not traced) restarts
		 * where it returns: the stacks stand */
		return !(t && t->exc && e->gap == cst_gap_filter);
	case cst_elem_no_sync:
	case cst_elem_addr_nacc:
	case cst_elem_addr_unknown:
	case cst_elem_eot:
		return true;
	default:
		return false;
	}
}

bool sym_calls_acts_on(const struct cst_elem *e)
{
	return e->type == cst_elem_instr_range || e->type == cst_elem_exception || is_gap(NULL, e);
}

int cst_calls_add(struct cst_calls *calls, const struct cst_sym_elem *se, uint64_t time)
{
	const struct cst_elem *e;
	struct thread *t;
	unsigned id;
	int ret = 0;

	if (!calls || !se || !se->elem)
		return -cste_invalid;
	e = se->elem;
	id = e->trace_id & (NIDS - 1);
	if (e->type != cst_elem_instr_range && e->type != cst_elem_exception &&
	    !is_gap(NULL, e))
		return 0;
	calls->elem = e;
	calls->time = time;
	if (e->type != cst_elem_instr_range && e->type != cst_elem_exception) {
		/* a gap: the thread last seen on this trace ID, if any */
		t = calls->last_thread[id] ? &calls->threads[calls->last_thread[id] - 1] : NULL;
		if (!is_gap(t, e))
			return 0;
		/* a filter, not lost trace: the stacks stand, this thread's and those of
		 * threads that ran here before (they ran on where it was not traced) */
		if (e->type == cst_elem_trace_on && e->gap == cst_gap_filter)
			return t && t->live && !t->off ? go_off(calls, t) : 0;
		calls->gaps[id]++;
		if (t) {
			ret = reset(calls, t, e->type == cst_elem_eot ? cst_call_end_eot
								 : cst_call_end_gap);
			t->seen_gaps = calls->gaps[id];
		}
		return ret;
	}
	t = sym_calls_find(calls, sym_calls_key(se), se);
	if (!t)
		return -cste_nomem;
	if (t->seen_gaps != calls->gaps[t->trace_id & (NIDS - 1)]) {
		ret = reset(calls, t, cst_call_end_gap);
		if (ret)
			return ret;
	}
	t->trace_id = e->trace_id;
	t->seen_gaps = calls->gaps[id];
	t->time = time;
	calls->last_thread[id] = (uint32_t)(t - calls->threads) + 1;
	if (e->type == cst_elem_exception) {
		t->exc = t->live;
		t->exc_again = t->last_insn;
		t->exc_ret = e->exception_ret_addr;
		t->exc_ret_valid = e->exception_ret_addr_valid;
		/* ETMv3 gives no return address: after a range that went on (an SVC,
		 * or any instruction an interrupt followed) it is that range's end */
		if (!t->exc_ret_valid && t->pend == pend_none && t->last_end) {
			t->exc_ret = t->last_end;
			t->exc_ret_valid = true;
		}
		return 0;
	}
	return sym_calls_add_range(calls, t, se);
}

int cst_calls_finish(struct cst_calls *calls)
{
	if (!calls)
		return -cste_invalid;
	calls->elem = NULL;
	for (uint32_t i = 0; i < calls->nthreads; i++) {
		struct thread *t = &calls->threads[i];
		int ret;

		calls->time = t->time;
		ret = reset(calls, t, cst_call_end_eot);
		if (ret)
			return ret;
	}
	return 0;
}

int cst_calls_get_stats(const struct cst_calls *calls, struct cst_calls_stats *st)
{
	if (!calls || !st)
		return -cste_invalid;
	*st = calls->st;
	return 0;
}
