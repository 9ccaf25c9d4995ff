/* The control-flow model on hand-made element streams: which range endings are
 * taken branches (not ISBs, not ranges that merely end, not failed conditions),
 * call depth through calls and returns, exceptions, gaps and the end of trace,
 * and trace IDs kept apart. */
#include <string.h>

#include "cstrace/symbolize.h"
#include "test.h"

#define MAXEV 32

struct log {
	struct cst_flow_event ev[MAXEV];
	uint64_t from_end[MAXEV]; /* end of the range an event left, 0 if none */
	uint64_t to_start[MAXEV]; /* start of the range it reached, 0 if none */
	int n;
};

static int record(void *ctx, const struct cst_flow_event *ev)
{
	struct log *l = ctx;

	if (l->n < MAXEV) {
		l->ev[l->n] = *ev;
		l->from_end[l->n] = ev->from ? ev->from->elem.end : 0;
		l->to_start[l->n] = ev->to && ev->to->elem->type == cst_elem_instr_range
					    ? ev->to->elem->start
					    : 0;
		l->n++;
	}
	return 0;
}

static struct cst_elem range(uint64_t start, uint64_t end, enum cst_insn_class cls,
			     enum cst_insn_subclass sub, bool executed)
{
	struct cst_elem e;

	memset(&e, 0, sizeof(e));
	e.type = cst_elem_instr_range;
	e.trace_id = 0x10;
	e.start = start;
	e.end = end;
	e.num_insns = (uint32_t)((end - start) / 4);
	e.isa = cst_isa_a64;
	e.last_class = cls;
	e.last_subclass = sub;
	e.last_size = 4;
	e.last_executed = executed;
	return e;
}

static struct cst_elem other(enum cst_elem_type type)
{
	struct cst_elem e;

	memset(&e, 0, sizeof(e));
	e.type = type;
	e.trace_id = 0x10;
	return e;
}

static void feed(struct cst_flow *f, const struct cst_elem *e, uint64_t time)
{
	struct cst_sym_elem se = {.elem = e, .pid = 7};

	CHECK_EQ_INT(cst_flow_add(f, &se, time), 0);
}

static void test_taken(void)
{
	struct cst_elem e = range(0x1000, 0x1010, cst_insn_isb, cst_insn_sub_none, true);

	CHECK(!cst_elem_taken_branch(&e)); /* an ISB ends a range, control goes on */
	CHECK(!cst_elem_ends_in_branch(&e));
	e.last_class = cst_insn_other;
	CHECK(!cst_elem_taken_branch(&e)); /* ETMv3 ranges may end on any instruction */
	e.last_class = cst_insn_branch;
	CHECK(cst_elem_taken_branch(&e));
	e.last_executed = false;
	CHECK(!cst_elem_taken_branch(&e));
	CHECK(cst_elem_ends_in_branch(&e));
	CHECK_EQ_STR(cst_flow_branch_name(&e), "jcc-nt");
	e.last_executed = true;
	CHECK_EQ_STR(cst_flow_branch_name(&e), "jmp");
	e.last_class = cst_insn_branch_indirect;
	CHECK_EQ_STR(cst_flow_branch_name(&e), "jmp-ind");
	e.last_subclass = cst_insn_sub_ret;
	CHECK_EQ_STR(cst_flow_branch_name(&e), "return");
	e.last_subclass = cst_insn_sub_link;
	CHECK_EQ_STR(cst_flow_branch_name(&e), "call");
	e.last_subclass = cst_insn_sub_eret;
	CHECK_EQ_STR(cst_flow_branch_name(&e), "eret");
	e.type = cst_elem_exception;
	CHECK(!cst_elem_taken_branch(&e));
}

static void test_stream(void)
{
	struct log l = {.n = 0};
	struct cst_flow *f = NULL;
	/* main calls f at 0x2000; f runs an ISB, returns; main goes on, a gap, then
	 * trace resumes in main and ends after a taken jump */
	struct cst_elem s[] = {
		range(0x1000, 0x1010, cst_insn_branch, cst_insn_sub_link, true),   /* bl f */
		range(0x2000, 0x2008, cst_insn_isb, cst_insn_sub_none, true),      /* isb */
		range(0x2008, 0x2010, cst_insn_branch, cst_insn_sub_none, false),  /* b.ne no */
		range(0x2010, 0x2014, cst_insn_branch_indirect, cst_insn_sub_ret, true),
		range(0x1010, 0x1020, cst_insn_other, cst_insn_sub_none, true),    /* ends */
		other(cst_elem_no_sync),
		range(0x1100, 0x1108, cst_insn_branch, cst_insn_sub_none, true),   /* b */
		range(0x1200, 0x1204, cst_insn_branch, cst_insn_sub_link, true),   /* bl */
		other(cst_elem_exception),
		range(0x3000, 0x3004, cst_insn_branch, cst_insn_sub_none, true),   /* b */
	};

	CHECK_EQ_INT(cst_flow_alloc(&f, record, &l), 0);
	if (!f)
		return;
	for (size_t i = 0; i < sizeof(s) / sizeof(s[0]); i++)
		feed(f, &s[i], 100 + i);
	CHECK_EQ_INT(cst_flow_finish(f), 0);
	CHECK_EQ_INT(l.n, 8);
	/* the first range starts the tree */
	CHECK_EQ_INT(l.ev[0].kind, cst_flow_start);
	CHECK_EQ_INT(l.to_start[0], 0x1000);
	CHECK_EQ_INT(l.ev[0].depth, 0);
	CHECK(l.ev[0].from == NULL);
	/* the call enters f one level down */
	CHECK_EQ_INT(l.ev[1].kind, cst_flow_branch);
	CHECK_EQ_INT(l.from_end[1], 0x1010);
	CHECK_EQ_INT(l.to_start[1], 0x2000);
	CHECK_EQ_INT(l.ev[1].depth, 1);
	CHECK_EQ_INT(l.ev[1].time, 101);
	/* the ISB and the failed condition are no branches; the return is, back up */
	CHECK_EQ_INT(l.ev[2].kind, cst_flow_branch);
	CHECK_EQ_INT(l.from_end[2], 0x2014);
	CHECK_EQ_INT(l.to_start[2], 0x1010);
	CHECK_EQ_INT(l.ev[2].depth, 0);
	/* the gap follows a range that only ended: it still reports, and resets */
	CHECK_EQ_INT(l.ev[3].kind, cst_flow_gap);
	CHECK_EQ_INT(l.from_end[3], 0x1020);
	CHECK(l.ev[3].calls_open);
	CHECK_EQ_INT(l.ev[4].kind, cst_flow_start);
	CHECK_EQ_INT(l.to_start[4], 0x1100);
	CHECK_EQ_INT(l.ev[5].kind, cst_flow_branch);
	CHECK_EQ_INT(l.to_start[5], 0x1200);
	/* the exception interrupts before the call's target ran: depth unchanged, the
	 * range before it is given, and the call is not counted as made */
	CHECK_EQ_INT(l.ev[6].kind, cst_flow_exception);
	CHECK_EQ_INT(l.from_end[6], 0x1204);
	CHECK_EQ_INT(l.ev[6].depth, 0);
	/* after the exception nothing is pending: the handler's range starts nothing,
	 * and the end of trace has the handler's range pending */
	CHECK_EQ_INT(l.ev[7].kind, cst_flow_end);
	CHECK_EQ_INT(l.from_end[7], 0x3004);
	CHECK(l.ev[7].to == NULL);
	cst_flow_free(f);

	/* the end of trace reports each trace ID's pending range, in ID order */
	l.n = 0;
	CHECK_EQ_INT(cst_flow_alloc(&f, record, &l), 0);
	if (!f)
		return;
	{
		struct cst_elem a = range(0x10, 0x14, cst_insn_branch, cst_insn_sub_none, true);
		struct cst_elem b = range(0x20, 0x24, cst_insn_isb, cst_insn_sub_none, true);

		b.trace_id = 0x12;
		feed(f, &b, 1);
		feed(f, &a, 2);
	}
	CHECK_EQ_INT(cst_flow_finish(f), 0);
	CHECK_EQ_INT(l.n, 4);
	CHECK_EQ_INT(l.ev[2].kind, cst_flow_end);
	CHECK_EQ_INT(l.from_end[2], 0x14);
	CHECK_EQ_INT(l.ev[3].kind, cst_flow_end);
	CHECK_EQ_INT(l.from_end[3], 0x24);
	CHECK_EQ_INT(l.ev[3].time, 1);
	cst_flow_free(f);
	CHECK_EQ_INT(cst_flow_alloc(NULL, record, NULL), -cste_invalid);
	CHECK_EQ_INT(cst_flow_add(NULL, NULL, 0), -cste_invalid);
}

int main(void)
{
	test_taken();
	test_stream();
	return test_done();
}
