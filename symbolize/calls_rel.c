/* The call model of a stretch of the stream, on a decoding thread (calls_rel.h).
 *
 * A stretch starts knowing no thread. A thread's range that the caller's model
 * follows (an escape: the element is deferred) teaches where the thread is: its
 * top frame runs the function the range ended in, and the transfer pending is
 * how the range ended. Below that frame (the prefix frame) nothing is known. From
 * there the thread's ranges are followed here, with calls.c's rules, as long as
 * they move only frames pushed here: a return or an exception return below
 * them, an exception, lost trace or a filter going off is the caller's again.
 * Lookups that go on below what is known take for granted that nothing there
 * matches, and say so: an indirect branch whose target is no return address
 * it knows (a switch), a jump into the middle of a function none of its frames
 * runs (a cold part; a longjmp would be the exception).
 *
 * A block hands over, per thread it moved, what it took for granted (the thread's
 * state where it began, the prefix frame's function, the lookups) and what it
 * made (the frames above the lowest level it touched, the state where it ended).
 * The caller checks the first against its own model, then takes the second. The
 * tree counts of the block are calltree_rel.c's. */
#include "calls_int.h"
#include "calls_rel.h"
#include "internal.h"

#include <stdlib.h>
#include <string.h>

/* Targets taken for granted per thread and block; beyond this the block is
 * refused (decoded again on one thread), so that memory stays bounded. */
#define MAX_ASSUME 4096

struct tstate {
	enum pend pend;
	uint64_t pend_ret, last_end, last_insn;
	uint8_t trace_id;
	const struct cst_sym_func *func; /* the prefix frame's (level 0) */
	const char *dso;
};

/* One thread's part of a block. Levels count from the prefix frame (0). */
struct seg {
	int64_t key;
	uint32_t wthread;          /* its index in the stretch's model */
	struct tstate start, end;
	uint32_t w0;               /* depth where the block began */
	uint32_t lw;               /* lowest depth the block reached: levels from
				      there up were made in it */
	uint32_t depth, max;       /* where it ended, the deepest */
	struct cst_call_frame *frames; /* levels lw..depth-1, once taken */
	uint64_t *no_ret;          /* no frame below returns to these: a set (open
				      addressing, 0 empty) of @nrcap slots */
	uint32_t nnr, nrcap;
	struct nofunc {            /* no frame below the prefix frame runs these */
		const struct cst_sym_func *func;
		const char *dso;
	} *no_func;
	uint32_t nnf;
	size_t nfcap;
	bool overflow;             /* more than MAX_ASSUME of them */
};

struct sym_calls_part {
	struct seg *segs;
	uint32_t nsegs;
	size_t cap;
	uint64_t icount[NIDS];     /* instructions run per trace ID in the block */
	uint32_t last_seg[NIDS];   /* seg + 1 that ran last per trace ID, 0: none */
};

struct sym_calls_rel {
	uint32_t follows;              /* thread + 1 sym_calls_rel_follows found */
	struct sym_calls_part *cur;    /* the block being made */
	struct sym_calls_part *sealed; /* the block an escape ended, for the view's state */
};

int sym_calls_rel_alloc(struct cst_calls **out, cst_call_fn fn, void *ctx)
{
	int err = cst_calls_alloc(out, fn, ctx);

	if (err)
		return err;
	(*out)->rel = calloc(1, sizeof(*(*out)->rel));
	if (!(*out)->rel) {
		cst_calls_free(*out);
		*out = NULL;
		return -cste_nomem;
	}
	return 0;
}

void sym_calls_part_free(struct sym_calls_part *p)
{
	if (!p)
		return;
	for (uint32_t i = 0; i < p->nsegs; i++) {
		free(p->segs[i].frames);
		free(p->segs[i].no_ret);
		free(p->segs[i].no_func);
	}
	free(p->segs);
	free(p);
}

void sym_calls_rel_fini(struct cst_calls *c)
{
	if (!c->rel)
		return;
	sym_calls_part_free(c->rel->cur);
	sym_calls_part_free(c->rel->sealed);
	free(c->rel);
	c->rel = NULL;
}

void sym_calls_rel_clear(struct cst_calls *c)
{
	for (uint32_t i = 0; i < c->nthreads; i++) {
		c->threads[i].synced = false;
		c->threads[i].seg = 0;
	}
	sym_calls_part_free(c->rel->cur);
	sym_calls_part_free(c->rel->sealed);
	c->rel->cur = c->rel->sealed = NULL;
	memset(c->icount, 0, sizeof(c->icount));
}

void sym_calls_rel_unsync(struct cst_calls *c)
{
	for (uint32_t i = 0; i < c->nthreads; i++)
		c->threads[i].synced = false;
}

static struct seg *seg_of(struct cst_calls *c, const struct thread *t)
{
	return &c->rel->cur->segs[t->seg - 1];
}

static void snapshot(const struct thread *t, struct tstate *s)
{
	*s = (struct tstate){t->pend, t->pend_ret, t->last_end, t->last_insn, t->trace_id,
			     t->stack[0].func, t->stack[0].dso};
}

/* @t's part of the block being made, begun where the thread stands. */
static struct seg *open_seg(struct cst_calls *c, struct thread *t)
{
	struct sym_calls_part *p = c->rel->cur;
	struct seg *s;

	if (t->seg)
		return seg_of(c, t);
	if (!p) {
		p = c->rel->cur = calloc(1, sizeof(*p));
		if (!p)
			return NULL;
	}
	if (CST_GROW(p->segs, p->cap, (size_t)p->nsegs + 1) < 0)
		return NULL;
	s = &p->segs[p->nsegs];
	memset(s, 0, sizeof(*s));
	s->key = t->key;
	s->wthread = (uint32_t)(t - c->threads);
	snapshot(t, &s->start);
	s->w0 = s->lw = s->depth = s->max = t->depth;
	t->seg = ++p->nsegs;
	return s;
}

void sym_calls_rel_moved(struct cst_calls *c, const struct thread *t)
{
	struct seg *s;

	if (!t->seg)
		return;
	s = seg_of(c, t);
	if (t->depth < s->lw)
		s->lw = t->depth;
	if (t->depth > s->max)
		s->max = t->depth;
}

/* Where @addr is, or would go, in a set of @cap slots. */
static uint32_t set_slot(const uint64_t *set, uint32_t cap, uint64_t addr)
{
	uint32_t i = (uint32_t)((addr * 0x9e3779b97f4a7c15ull) >> 40) & (cap - 1);

	while (set[i] && set[i] != addr)
		i = (i + 1) & (cap - 1);
	return i;
}

void sym_calls_assume(struct cst_calls *c, struct thread *t, uint64_t addr)
{
	struct seg *s = t->seg ? seg_of(c, t) : NULL;

	if (!s || !addr) /* only a stretch's model asks; no frame returns to 0 */
		return;
	/* a switch jumps to few places, many times */
	if (s->nrcap && s->no_ret[set_slot(s->no_ret, s->nrcap, addr)])
		return;
	if (s->nnr >= MAX_ASSUME) {
		s->overflow = true;
		return;
	}
	if (2 * (s->nnr + 1) > s->nrcap) {
		uint32_t cap = s->nrcap ? 2 * s->nrcap : 16;
		uint64_t *set = calloc(cap, sizeof(*set));

		if (!set) {
			s->overflow = true;
			return;
		}
		for (uint32_t i = 0; i < s->nrcap; i++)
			if (s->no_ret[i])
				set[set_slot(set, cap, s->no_ret[i])] = s->no_ret[i];
		free(s->no_ret);
		s->no_ret = set;
		s->nrcap = cap;
	}
	s->no_ret[set_slot(s->no_ret, s->nrcap, addr)] = addr;
	s->nnr++;
}

void sym_calls_assume_func(struct cst_calls *c, struct thread *t, const struct cst_sym_piece *pc)
{
	struct seg *s = t->seg ? seg_of(c, t) : NULL;

	if (!s)
		return;
	/* few functions are jumped into mid-way */
	for (uint32_t i = s->nnf; i-- > 0;)
		if (s->no_func[i].func == pc->loc.func && s->no_func[i].dso == pc->loc.dso)
			return;
	if (s->nnf >= MAX_ASSUME || CST_GROW(s->no_func, s->nfcap, (size_t)s->nnf + 1) < 0) {
		s->overflow = true;
		return;
	}
	s->no_func[s->nnf++] = (struct nofunc){pc->loc.func, pc->loc.dso};
}

/* The thread @e belongs to, as the caller's model keys it (NULL: none yet). */
static struct thread *thread_of_elem(struct cst_calls *c, const struct cst_elem *e)
{
	struct cst_sym_elem se = {.elem = e, .pid = sym_elem_pid(e)};

	return sym_calls_find(c, sym_calls_key(&se), NULL);
}

bool sym_calls_rel_follows(struct cst_calls *c, const struct cst_elem *e)
{
	struct thread *t;

	c->rel->follows = 0;
	if (e->type != cst_elem_instr_range)
		return true; /* nothing the model follows */
	t = thread_of_elem(c, e);
	if (t) /* sym_calls_rel_add's, next */
		c->rel->follows = (uint32_t)(t - c->threads) + 1;
	if (!t || !t->synced || t->trace_id != e->trace_id || !t->live || t->off || t->exc)
		return false;
	if (t->pend == pend_call)
		return t->depth < MAX_DEPTH;
	/* a return that lands on no frame pushed here goes below them, and so does
	 * an exception return that resumes none of them */
	if (t->pend == pend_ret && e->end > e->start)
		return sym_calls_find_ret(t, e->start) != CALLS_UNKNOWN;
	if (t->pend == pend_eret && e->end > e->start)
		return sym_calls_find_resume(t, e->start) != CALLS_UNKNOWN;
	return true;
}

int sym_calls_rel_add(struct cst_calls *c, const struct cst_sym_elem *se, uint64_t time)
{
	const struct cst_elem *e = se->elem;
	struct thread *t;
	struct seg *s;
	int ret;

	if (e->type != cst_elem_instr_range)
		return 0;
	t = c->rel->follows ? &c->threads[c->rel->follows - 1]
			    : sym_calls_find(c, sym_calls_key(se), NULL);
	c->rel->follows = 0;
	if (!t || !t->synced) /* sym_calls_rel_follows said otherwise */
		return SYM_CALLS_ESCAPE;
	s = open_seg(c, t);
	if (!s)
		return -cste_nomem;
	/* for its events, as cst_calls_add gives them */
	c->elem = e;
	c->time = time;
	ret = sym_calls_add_range(c, t, se);
	c->rel->cur->last_seg[e->trace_id & (NIDS - 1)] = t->seg;
	return ret;
}

/* The block's frames and where each thread ended, taken out of the model: the
 * next block begins where this one ended. */
static int seal(struct cst_calls *c)
{
	struct sym_calls_part *p = c->rel->cur;

	if (!p)
		return 0;
	for (uint32_t i = 0; i < p->nsegs; i++) {
		struct seg *s = &p->segs[i];
		struct thread *t = &c->threads[s->wthread];

		s->depth = t->depth;
		snapshot(t, &s->end);
		if (t->depth > s->lw) {
			s->frames = malloc((t->depth - s->lw) * sizeof(*s->frames));
			if (!s->frames)
				return -cste_nomem;
			memcpy(s->frames, t->stack + s->lw, (t->depth - s->lw) * sizeof(*s->frames));
		}
		t->seg = 0;
	}
	memcpy(p->icount, c->icount, sizeof(p->icount));
	memset(c->icount, 0, sizeof(c->icount));
	sym_calls_part_free(c->rel->sealed); /* none: the view takes each */
	c->rel->sealed = p;
	c->rel->cur = NULL;
	return 0;
}

int sym_calls_rel_escaped(struct cst_calls *c, const struct cst_sym_elem *se, bool kept)
{
	const struct cst_elem *e = se->elem;
	const struct cst_sym_piece *last;
	struct thread *t;
	int err;

	if (e->type != cst_elem_instr_range)
		return 0;
	/* the block so far goes out before the element (the view's state is
	 * taken after the element is deferred) */
	err = seal(c);
	if (err)
		return err;
	t = sym_calls_find(c, sym_calls_key(se), se);
	if (!t)
		return -cste_nomem;
	if (!kept) {
		/* the caller's model may or may not see it (a time window not
		 * known here) */
		t->synced = false;
		return 0;
	}
	if (!se->npieces) /* the caller's model leaves the thread as it was */
		return 0;
	if (sym_calls_room(t, 1) < 0)
		return -cste_nomem;
	last = &se->pieces[se->npieces - 1];
	t->depth = 1;
	memset(&t->stack[0], 0, sizeof(t->stack[0]));
	t->stack[0].func = last->loc.func;
	t->stack[0].dso = last->loc.dso;
	t->stash[0] = (struct stash){.prefix = true};
	sym_calls_end_range(t, e);
	t->trace_id = e->trace_id;
	t->live = true;
	t->off = t->exc = false;
	t->synced = true;
	return 0;
}

int sym_calls_rel_take(struct cst_calls *c, struct sym_calls_part **out)
{
	int err = seal(c);

	*out = c->rel->sealed;
	c->rel->sealed = NULL;
	return err;
}

/* ---- on the caller's thread ---- */

/* Does the caller's thread @t, with the block's prefix frame at @base, hold
 * what the block took for granted? */
static bool holds(const struct cst_calls *c, const struct thread *t, uint32_t base,
		  const struct seg *s)
{
	const struct tstate *st = &s->start;

	if (!t->live || t->off || t->exc || t->trace_id != st->trace_id || t->pend != st->pend ||
	    (t->pend == pend_call && t->pend_ret != st->pend_ret) ||
	    t->last_end != st->last_end || t->last_insn != st->last_insn ||
	    t->seen_gaps != c->gaps[t->trace_id & (NIDS - 1)] ||
	    !sym_calls_runs(&t->stack[base], st->func, st->dso) ||
	    (uint64_t)base + s->max >= MAX_DEPTH || s->overflow)
		return false;
	for (uint32_t i = 0; s->nnr && i <= base; i++) {
		uint64_t ret = t->stack[i].ret_addr;

		if (ret && s->no_ret[set_slot(s->no_ret, s->nrcap, ret)] == ret)
			return false;
	}
	for (uint32_t k = 0; k < s->nnf; k++)
		for (uint32_t i = 0; i < base; i++)
			if (sym_calls_runs(&t->stack[i], s->no_func[k].func, s->no_func[k].dso))
				return false;
	return true;
}

int sym_calls_check(struct cst_calls *c, const struct sym_calls_part *p,
		    struct sym_calls_place *places)
{
	for (uint32_t i = 0; i < p->nsegs; i++) {
		const struct seg *s = &p->segs[i];
		struct thread *t = sym_calls_find(c, s->key, NULL);
		uint32_t base;

		if (!t || !s->w0 || t->depth < s->w0 || !holds(c, t, t->depth - s->w0, s)) {
			c->st.blocks_refused++;
			return SYM_CALLS_REFUSE;
		}
		base = t->depth - s->w0;
		places[i] = (struct sym_calls_place){s->wthread, (uint32_t)(t - c->threads), base,
						     s->lw, s->depth};
	}
	c->st.blocks_taken++;
	return 0;
}

int sym_calls_apply(struct cst_calls *c, const struct sym_calls_part *p,
		    const struct sym_calls_place *places, sym_calls_time_fn time, void *ctx)
{
	for (uint32_t i = 0; i < p->nsegs; i++) {
		const struct seg *s = &p->segs[i];
		struct thread *t = &c->threads[places[i].thread];
		uint32_t base = places[i].base;
		uint8_t id = s->end.trace_id & (NIDS - 1);
		uint64_t now = time(ctx, id);

		if (sym_calls_room(t, (size_t)base + s->depth) < 0)
			return -cste_nomem;
		for (uint32_t l = s->lw; l < s->depth; l++) {
			struct cst_call_frame f = s->frames[l - s->lw];

			f.enter_icount += c->icount[id];
			f.enter_time = now;
			if (!l) {
				/* the prefix frame, replaced: what it hides is the caller's */
				f.ret_addr = t->stack[base].ret_addr;
				f.exception = t->stack[base].exception;
				f.resume = t->stack[base].resume;
			} else {
				t->stash[base + l] = (struct stash){0};
			}
			t->stack[base + l] = f;
		}
		t->depth = base + s->depth;
		t->pend = s->end.pend;
		t->pend_ret = s->end.pend_ret;
		t->last_end = s->end.last_end;
		t->last_insn = s->end.last_insn;
		t->time = now;
		if (base + s->max > c->st.max_depth)
			c->st.max_depth = base + s->max;
	}
	for (unsigned id = 0; id < NIDS; id++) {
		c->icount[id] += p->icount[id];
		if (p->last_seg[id])
			c->last_thread[id] = places[p->last_seg[id] - 1].thread + 1;
	}
	return 0;
}

uint32_t sym_calls_part_count(const struct sym_calls_part *p)
{
	return p ? p->nsegs : 0;
}
