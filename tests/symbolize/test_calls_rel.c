/* The call model of a stretch (calls_rel.c, calltree_rel.c) against the one model
 * of the whole stream. Random programs over eight functions and some unknown
 * code (calls, returns, tail calls, loops, switch jumps, jumps into other
 * functions, longjmp, exceptions and their returns, lost trace, two threads)
 * are run once through one model, and again with every stretch from a random
 * point followed by a stretch's model as the views on the decoding threads do:
 * each range it cannot follow, and every other element, goes to the caller's
 * model, the blocks before them checked and taken, and a block the caller
 * refuses is followed again by the caller's model from its first element to the
 * end of its buffer. The trees (node by node, in their order) and the models'
 * totals must be the same, and the runs must have taken blocks, refused some,
 * and followed most ranges on the side. Then a recursion 20,000 deep made in one
 * block and unwound in the next. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cstrace/symbolize.h"
#include "test.h"
#include "../../symbolize/calls_rel.h"

/* Functions A..E at 0x1000, 0x2000, ...; 0x6000 to 0x8000 code without a
 * symbol; F..H at 0x8000, ... are only ever jumped into mid-way (cold parts). */
static struct cst_sym_func funcs[8] = {
	{"A", "prog", 0x1000, 0x1000, 0, 0, 0}, {"B", "prog", 0x2000, 0x1000, 1, 0, 0},
	{"C", "prog", 0x3000, 0x1000, 2, 0, 0}, {"D", "prog", 0x4000, 0x1000, 3, 0, 0},
	{"E", "prog", 0x5000, 0x1000, 4, 0, 0}, {"F", "prog", 0x8000, 0x1000, 5, 0, 0},
	{"G", "prog", 0x9000, 0x1000, 6, 0, 0}, {"H", "prog", 0xa000, 0x1000, 7, 0, 0},
};

static const struct cst_sym_func *func_at(uint64_t a)
{
	if (a >= 0x1000 && a < 0x6000)
		return &funcs[a / 0x1000 - 1];
	return a >= 0x8000 && a < 0xb000 ? &funcs[5 + (a - 0x8000) / 0x1000] : NULL;
}

/* One element of a stream, with its pieces (a range may run on into the next
 * function). */
struct item {
	struct cst_elem e;
	struct cst_sym_piece pc[2];
	uint32_t npieces;
};

static uint64_t rng;
static uint32_t rnd(uint32_t n)
{
	rng = rng * 6364136223846793005ull + 1442695040888963407ull;
	return (uint32_t)(rng >> 33) % n;
}

/* What a thread of the generated program is doing. */
struct gthread {
	int32_t tid;
	uint64_t pc;
	uint64_t rets[48]; /* return addresses of the calls it made */
	int depth;
	uint64_t resume;   /* in an exception handler: where it returns; 0: not */
};

static void piece(struct item *it, uint64_t start, uint64_t end)
{
	struct cst_sym_piece *pc = &it->pc[it->npieces++];

	memset(pc, 0, sizeof(*pc));
	pc->start = start;
	pc->end = end;
	pc->num_insns = (uint32_t)((end - start) / 4);
	pc->loc.func = func_at(start);
	pc->loc.dso = pc->loc.func ? "prog" : "[unknown]";
	pc->enters_func = pc->loc.func && pc->loc.func->addr == start;
}

static uint64_t func_start(uint64_t a)
{
	return a & ~0xfffull;
}

static uint64_t random_entry(void)
{
	return rnd(7) ? 0x1000ull * (1 + rnd(5)) : 0x6000 + 0x1000ull * rnd(2);
}

/* The next element of thread @g into @it. */
static void step(struct gthread *g, struct item *it)
{
	uint64_t start = g->pc, fs = func_start(start), end;
	uint32_t len = 1 + rnd(6), k;
	struct cst_elem *e = &it->e;

	memset(it, 0, sizeof(*it));
	e->trace_id = 0x10;
	e->pid = e->tid = g->tid;
	e->isa = cst_isa_a64;
	k = rnd(1000);
	if (k < 3) { /* lost trace: the thread is found again somewhere */
		e->type = cst_elem_no_sync;
		g->pc = random_entry() + 4 * rnd(8);
		g->depth = 0;
		g->resume = 0;
		return;
	}
	if (k < 12 && !g->resume) { /* an exception before the next range */
		e->type = cst_elem_exception;
		e->exception_ret_addr = start;
		e->exception_ret_addr_valid = true;
		g->resume = start;
		g->pc = 0x5800; /* the handler, in E */
		return;
	}
	e->type = cst_elem_instr_range;
	end = start + 4ull * len;
	if (end > fs + 0x1000)
		end = fs + 0x1000;
	/* now and then the range runs on into the next function */
	if (!rnd(20) && fs < 0x5000 && end - start >= 8) {
		uint64_t next = fs + 0x1000;

		start = next - 8;
		g->pc = start;
		piece(it, start, next);
		piece(it, next, next + 8);
		end = next + 8;
		fs = next;
	} else {
		piece(it, start, end);
	}
	e->start = start;
	e->end = end;
	e->num_insns = (uint32_t)((end - start) / 4);
	e->last_size = 4;
	e->last_executed = true;
	k = rnd(1000);
	if (g->resume && k < 300) { /* the handler returns */
		e->last_class = cst_insn_branch_indirect;
		e->last_subclass = cst_insn_sub_eret;
		g->pc = g->resume;
		g->resume = 0;
	} else if (k < 250 && g->depth < 48) {
		e->last_class = cst_insn_branch;
		e->last_subclass = cst_insn_sub_link;
		g->rets[g->depth++] = end;
		g->pc = random_entry();
	} else if (k < 480) {
		e->last_class = cst_insn_branch_indirect;
		e->last_subclass = cst_insn_sub_ret;
		if (g->depth && rnd(100))
			g->pc = g->rets[--g->depth];
		else
			g->pc = random_entry() + 4 * rnd(16); /* a return never seen called */
	} else if (k < 640) { /* a loop */
		e->last_class = cst_insn_branch;
		g->pc = fs + 4 * rnd(32);
	} else if (k < 670) { /* a switch, or a tail call through a register */
		e->last_class = cst_insn_branch_indirect;
		g->pc = rnd(4) ? fs + 4 * rnd(64) : random_entry();
		if (g->depth && !rnd(40)) /* onto a return address: a return after all */
			g->pc = g->rets[--g->depth];
	} else if (k < 720) { /* a tail call */
		e->last_class = cst_insn_branch;
		g->pc = random_entry();
	} else if (k < 722 && g->depth) { /* longjmp: into a caller further down */
		int to = (int)rnd((uint32_t)g->depth);

		e->last_class = cst_insn_branch;
		g->pc = g->rets[to] + 4 * rnd(4);
		g->depth = to;
	} else if (k < 727) { /* into the middle of another function: mostly a cold one */
		e->last_class = cst_insn_branch;
		g->pc = (rnd(16) ? 0x8000 + 0x1000ull * rnd(3) : random_entry()) + 4 * (1 + rnd(16));
	} else { /* on: not a branch, or one not taken */
		e->last_class = rnd(2) ? cst_insn_other : cst_insn_branch;
		e->last_executed = e->last_class == cst_insn_other;
		g->pc = end;
	}
	if (func_start(g->pc) != func_start(end - 4) && e->last_class == cst_insn_other)
		g->pc = end;
	if ((g->pc >= 0x7ff0 && g->pc < 0x8000) || g->pc >= 0xaff0)
		g->pc = 0x1000;
}

/* A generated stream of @n elements of two threads. */
static struct item *generate(uint64_t seed, int n)
{
	struct gthread g[2] = {{.tid = 7, .pc = 0x1000}, {.tid = 9, .pc = 0x3000}};
	struct item *items = calloc((size_t)n, sizeof(*items));
	int cur = 0;

	rng = seed;
	for (int i = 0; i < n; i++) {
		if (!rnd(40))
			cur ^= 1;
		step(&g[cur], &items[i]);
	}
	return items;
}

struct model {
	struct cst_calls *calls;
	struct cst_calltree *tree;
};

static int to_tree(void *ctx, const struct cst_call_event *ev)
{
	return cst_calltree_add(ctx, ev);
}

static void model_init(struct model *m)
{
	CHECK_EQ_INT(cst_calltree_alloc(&m->tree), 0);
	CHECK_EQ_INT(cst_calls_alloc(&m->calls, to_tree, m->tree), 0);
}

static struct cst_sym_elem sym_of(struct item *it)
{
	return (struct cst_sym_elem){.elem = &it->e, .pid = it->e.pid, .pieces = it->pc,
				     .npieces = it->npieces};
}

static void feed(struct model *m, struct item *it)
{
	struct cst_sym_elem se = sym_of(it);

	CHECK_EQ_INT(cst_calls_add(m->calls, &se, 0), 0);
}

/* The stretch's model and its block's tree. */
struct side {
	struct cst_calls *calls;
	struct cst_calltree *tree;
	int taken, refused, followed, escaped;
};

static int to_block(void *ctx, const struct cst_call_event *ev)
{
	struct side *s = ctx;

	if (!s->tree && cst_calltree_alloc(&s->tree) < 0)
		return -cste_nomem;
	return sym_calltree_rel_add(s->tree, ev);
}

static uint64_t no_time(void *ctx, uint8_t id)
{
	(void)ctx;
	(void)id;
	return 0;
}

/* The block made since element @from goes to @m: taken, or refused and its
 * elements followed by @m instead (true). */
static bool hand_over(struct side *s, struct model *m, struct item *items, int from, int to)
{
	struct sym_calls_part *p = NULL;
	struct sym_calls_place places[4];
	uint32_t n;

	CHECK_EQ_INT(sym_calls_rel_take(s->calls, &p), 0);
	n = sym_calls_part_count(p);
	CHECK(n <= 4);
	bool refused = n && sym_calls_check(m->calls, p, places) == SYM_CALLS_REFUSE;

	if (refused) {
		s->refused++;
		for (int i = from; i < to; i++)
			feed(m, &items[i]);
	} else if (n) {
		s->taken++;
		CHECK_EQ_INT(sym_calls_apply(m->calls, p, places, no_time, NULL), 0);
		CHECK_EQ_INT(sym_calltree_adopt(m->tree, s->tree, places, n), 0);
	}
	sym_calls_part_free(p);
	cst_calltree_free(s->tree);
	s->tree = NULL;
	return refused;
}

/* @items through @m, from @split on in stretches of about @len elements, in
 * buffers of BUFFER elements: a refused block sends the rest of its buffer to
 * the caller's model alone, and the next buffer is cut again. */
#define BUFFER 1000
static void run_split(struct model *m, struct side *s, struct item *items, int n, int split,
		      int len)
{
	int from = split; /* the block's first element */
	bool serial = false;

	for (int i = 0; i < split; i++)
		feed(m, &items[i]);
	sym_calls_rel_clear(s->calls);
	for (int i = split; i < n; i++) {
		struct cst_sym_elem se = sym_of(&items[i]);
		bool range = items[i].e.type == cst_elem_instr_range;

		if (i % BUFFER == 0 || ((i - split) % len == 0 && i > split)) {
			/* a new stretch, or a new buffer */
			if (!serial)
				serial = hand_over(s, m, items, from, i);
			if (i % BUFFER == 0)
				serial = false;
			sym_calls_rel_clear(s->calls);
			from = i;
		}
		if (serial) {
			feed(m, &items[i]);
			continue;
		}
		if (range && sym_calls_rel_follows(s->calls, &items[i].e) && rnd(50)) {
			/* (the views give up where it could not after all) */
			CHECK_EQ_INT(sym_calls_rel_add(s->calls, &se, 0), 0);
			s->followed++;
			if (!rnd(200)) { /* a block that is full */
				serial = hand_over(s, m, items, from, i + 1);
				from = i + 1;
			}
			continue;
		}
		/* to the caller, after the block before it */
		if (range) {
			CHECK_EQ_INT(sym_calls_rel_escaped(s->calls, &se, true), 0);
			s->escaped++;
		} else if (sym_calls_acts_on(&items[i].e)) {
			sym_calls_rel_unsync(s->calls);
		}
		serial = hand_over(s, m, items, from, i); /* then one thread */
		feed(m, &items[i]);
		from = i + 1;
	}
	if (!serial)
		hand_over(s, m, items, from, n);
}

static void same_trees(struct model *a, struct model *b)
{
	const struct cst_calltree_node *x, *y;
	struct cst_calls_stats sa, sb;
	int nx = cst_calltree_nodes(a->tree, &x), ny = cst_calltree_nodes(b->tree, &y);

	CHECK_EQ_INT(nx, ny);
	for (int i = 0; i < nx && i < ny; i++) {
		CHECK_EQ_STR(x[i].name, y[i].name);
		CHECK_EQ_INT(x[i].parent, y[i].parent);
		CHECK_EQ_INT(x[i].self, y[i].self);
		CHECK_EQ_INT(x[i].total, y[i].total);
		CHECK_EQ_INT(x[i].calls, y[i].calls);
	}
	cst_calls_get_stats(a->calls, &sa);
	cst_calls_get_stats(b->calls, &sb);
	CHECK_EQ_INT(sa.threads, sb.threads);
	CHECK_EQ_INT(sa.max_depth, sb.max_depth);
	CHECK_EQ_INT(sa.gaps, sb.gaps);
	CHECK_EQ_INT(sa.unknown_returns, sb.unknown_returns);
}

static void model_free(struct model *m)
{
	cst_calls_free(m->calls);
	cst_calltree_free(m->tree);
}

/* A range of @n instructions at @start of thread 7, ending as told. */
static void make_range(struct item *it, uint64_t start, uint32_t n, enum cst_insn_class cls,
		       enum cst_insn_subclass sub)
{
	memset(it, 0, sizeof(*it));
	it->e.type = cst_elem_instr_range;
	it->e.trace_id = 0x10;
	it->e.pid = it->e.tid = 7;
	it->e.isa = cst_isa_a64;
	it->e.start = start;
	it->e.end = start + 4ull * n;
	it->e.num_insns = n;
	it->e.last_size = 4;
	it->e.last_executed = true;
	it->e.last_class = cls;
	it->e.last_subclass = sub;
	piece(it, it->e.start, it->e.end);
}

/* A recursion 20,000 deep that one block makes and the next unwinds: every
 * level the second block returns to is an anchor of its tree, each made once. */
static void test_deep(struct side *s)
{
	enum { deep = 20000 };
	int n = 2 * deep + 2;
	struct item *items = calloc((size_t)n, sizeof(*items));
	struct model one, many;
	int i = 0, taken = s->taken;

	make_range(&items[i++], 0x1000, 4, cst_insn_branch, cst_insn_sub_link);
	for (int k = 0; k < deep; k++) /* B calls itself */
		make_range(&items[i++], 0x2000, 4, cst_insn_branch, cst_insn_sub_link);
	for (int k = 0; k < deep; k++) /* each returns after its call */
		make_range(&items[i++], 0x2010, 2, cst_insn_branch_indirect, cst_insn_sub_ret);
	make_range(&items[i++], 0x1010, 1, cst_insn_other, cst_insn_sub_none);
	model_init(&one);
	model_init(&many);
	for (i = 0; i < n; i++)
		feed(&one, &items[i]);
	/* the first range to the caller, then all on the side, a block at the
	 * deepest point */
	sym_calls_rel_clear(s->calls);
	feed(&many, &items[0]);
	{
		struct cst_sym_elem se = sym_of(&items[0]);

		CHECK_EQ_INT(sym_calls_rel_escaped(s->calls, &se, true), 0);
	}
	for (i = 1; i < n; i++) {
		struct cst_sym_elem se = sym_of(&items[i]);

		CHECK(sym_calls_rel_follows(s->calls, &items[i].e));
		CHECK_EQ_INT(sym_calls_rel_add(s->calls, &se, 0), 0);
		if (i == deep)
			CHECK(!hand_over(s, &many, items, 1, deep + 1));
	}
	CHECK(!hand_over(s, &many, items, deep + 1, n));
	CHECK_EQ_INT(s->taken, taken + 2);
	CHECK_EQ_INT(cst_calls_finish(one.calls), 0);
	CHECK_EQ_INT(cst_calls_finish(many.calls), 0);
	same_trees(&one, &many);
	model_free(&one);
	model_free(&many);
	free(items);
}

int main(void)
{
	struct side s = {0};
	int n = 3000, runs = 0, taken = 0, refused = 0;

	CHECK_EQ_INT(sym_calls_rel_alloc(&s.calls, to_block, &s), 0);
	for (uint64_t seed = 1; seed <= 300; seed++) {
		struct item *items = generate(seed, n);
		struct model one, many;

		model_init(&one);
		model_init(&many);
		for (int i = 0; i < n; i++)
			feed(&one, &items[i]);
		CHECK_EQ_INT(cst_calls_finish(one.calls), 0);
		rng = seed * 977;
		run_split(&many, &s, items, n, (int)rnd(200), 50 + (int)rnd(2000));
		CHECK_EQ_INT(cst_calls_finish(many.calls), 0);
		same_trees(&one, &many);
		/* the caller's model counts what it took and refused */
		struct cst_calls_stats st;

		CHECK_EQ_INT(cst_calls_get_stats(many.calls, &st), 0);
		CHECK_EQ_INT(st.blocks_taken, (uint64_t)(s.taken - taken));
		CHECK_EQ_INT(st.blocks_refused, (uint64_t)(s.refused - refused));
		taken = s.taken;
		refused = s.refused;
		model_free(&one);
		model_free(&many);
		free(items);
		runs++;
	}
	test_deep(&s);
	/* the runs did what they are here for */
	CHECK(runs == 300);
	CHECK(s.taken > 1000);
	CHECK(s.refused > 5);
	CHECK(s.followed > 4 * s.escaped);
	printf("%d blocks taken, %d refused; %d ranges followed on the side, %d by the caller\n",
	       s.taken, s.refused, s.followed, s.escaped);
	cst_calls_free(s.calls);
	cst_calltree_free(s.tree);
	return test_done();
}
