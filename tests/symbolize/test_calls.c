/* The call model and the call tree on hand-made streams: calls and returns, tail
 * calls, longjmp, a signal handler and its trampoline, a call interrupted before
 * its first instruction, ETMv3 exceptions without a return address, lost trace,
 * threads sharing a trace ID, returns past the root; then the tree's counts, its
 * children column and folded lines. */
#include <stdlib.h>
#include <string.h>

#include "cstrace/symbolize.h"
#include "test.h"

/* Functions A..E at 0x1000, 0x2000, ... each 0x1000 long; T is unknown code. */
static struct cst_sym_func funcs[5] = {
	{"A", "prog", 0x1000, 0x1000, 0, 0, 0}, {"B", "prog", 0x2000, 0x1000, 1, 0, 0},
	{"C", "prog", 0x3000, 0x1000, 2, 0, 0}, {"D", "prog", 0x4000, 0x1000, 3, 0, 0},
	{"E", "prog", 0x5000, 0x1000, 4, 0, 0},
};

static const struct cst_sym_func *func_at(uint64_t a)
{
	return a >= 0x1000 && a < 0x6000 ? &funcs[a / 0x1000 - 1] : NULL;
}

#define MAXEV 64
struct log {
	char line[MAXEV][48];
	int n;
};

/* "+B call 2" (enter, how, depth), "-B 1" (exit, end, depth), "gap" */
static int record(void *ctx, const struct cst_call_event *ev)
{
	static const char *how[] = {"?", "start", "call", "tail", "exception", "jump", "return"};
	static const char *end[] = {"?", "return", "unwind", "replace", "gap", "eot"};
	struct log *l = ctx;

	if (l->n >= MAXEV || ev->kind == cst_call_insns)
		return 0;
	if (ev->kind == cst_call_enter)
		snprintf(l->line[l->n++], 48, "+%s %s %u", cst_call_frame_name(ev->frame),
			 how[ev->frame->how], ev->depth);
	else if (ev->kind == cst_call_exit)
		snprintf(l->line[l->n++], 48, "-%s %s %u", cst_call_frame_name(ev->frame),
			 end[ev->end], ev->depth);
	else if (ev->kind == cst_call_off)
		snprintf(l->line[l->n++], 48, "off %u", ev->depth);
	else
		snprintf(l->line[l->n++], 48, "gap");
	return 0;
}

struct feeder {
	struct cst_calls *calls;
	struct cst_calltree *tree;
	struct log log;
	int32_t tid;
};

static int both(void *ctx, const struct cst_call_event *ev)
{
	struct feeder *f = ctx;

	record(&f->log, ev);
	return cst_calltree_add(f->tree, ev);
}

static void setup(struct feeder *f)
{
	memset(f, 0, sizeof(*f));
	f->tid = 7;
	CHECK_EQ_INT(cst_calltree_alloc(&f->tree), 0);
	CHECK_EQ_INT(cst_calls_alloc(&f->calls, both, f), 0);
}

static void teardown(struct feeder *f)
{
	cst_calls_free(f->calls);
	cst_calltree_free(f->tree);
}

/* A range [start, end) of 4-byte instructions, one piece, ending as told. */
static void range(struct feeder *f, uint64_t start, uint64_t end, enum cst_insn_class cls,
		  enum cst_insn_subclass sub)
{
	struct cst_elem e;
	struct cst_sym_piece pc;
	struct cst_sym_elem se;

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
	e.last_executed = true;
	e.pid = e.tid = f->tid;
	e.cpu = 0;
	memset(&pc, 0, sizeof(pc));
	pc.start = start;
	pc.end = end;
	pc.num_insns = e.num_insns;
	pc.loc.func = func_at(start);
	pc.loc.dso = pc.loc.func ? "prog" : "[vdso]";
	pc.enters_func = pc.loc.func && pc.loc.func->addr == start;
	se = (struct cst_sym_elem){.elem = &e, .pid = f->tid, .pieces = &pc, .npieces = 1};
	CHECK_EQ_INT(cst_calls_add(f->calls, &se, 0), 0);
}

static void other(struct feeder *f, enum cst_elem_type type, enum cst_gap_reason gap,
		  uint64_t ret, bool ret_valid)
{
	struct cst_elem e;
	struct cst_sym_elem se;

	memset(&e, 0, sizeof(e));
	e.type = type;
	e.trace_id = 0x10;
	e.gap = gap;
	e.exception_ret_addr = ret;
	e.exception_ret_addr_valid = ret_valid;
	e.pid = e.tid = f->tid;
	se = (struct cst_sym_elem){.elem = &e, .pid = f->tid};
	CHECK_EQ_INT(cst_calls_add(f->calls, &se, 0), 0);
}

#define CALL cst_insn_branch, cst_insn_sub_link
#define RET cst_insn_branch_indirect, cst_insn_sub_ret
#define JMP cst_insn_branch, cst_insn_sub_none
#define IND cst_insn_branch_indirect, cst_insn_sub_none
#define ON cst_insn_other, cst_insn_sub_none

static void expect(struct feeder *f, const char *const *want, int n)
{
	CHECK_EQ_INT(f->log.n, n);
	for (int i = 0; i < n && i < f->log.n; i++)
		CHECK_EQ_STR(f->log.line[i], want[i]);
	f->log.n = 0;
}
#define EXPECT(f, ...)                                                                 \
	do {                                                                           \
		static const char *const w_[] = {__VA_ARGS__};                         \
		expect(f, w_, (int)(sizeof(w_) / sizeof(w_[0])));                      \
	} while (0)

static void test_call_return_tail_longjmp(void)
{
	struct feeder f;

	setup(&f);
	range(&f, 0x1000, 0x1010, CALL); /* A calls B, returns to 0x1010 */
	range(&f, 0x2000, 0x2008, CALL); /* B calls C */
	range(&f, 0x3000, 0x3004, JMP);  /* C tail-calls D */
	range(&f, 0x4000, 0x4010, RET);  /* D returns to B */
	range(&f, 0x2008, 0x2010, RET);  /* B returns to A */
	range(&f, 0x1010, 0x1014, ON);
	EXPECT(&f, "+A start 1", "+B call 2", "+C call 3", "-C replace 3", "+D tail 3",
	       "-D return 3", "-B return 2");
	/* longjmp: A -> B -> C, then C jumps (indirectly) into the middle of A */
	range(&f, 0x1014, 0x1020, CALL);
	range(&f, 0x2000, 0x2010, CALL);
	range(&f, 0x3000, 0x3010, IND);
	range(&f, 0x1100, 0x1104, ON);
	EXPECT(&f, "+B call 2", "+C call 3", "-C unwind 3", "-B unwind 2");
	/* a return that skips a frame unwinds it: A -> B -> C, C returns to A */
	range(&f, 0x1104, 0x1110, CALL);
	range(&f, 0x2000, 0x2010, CALL);
	range(&f, 0x3000, 0x3010, RET);
	range(&f, 0x1110, 0x1114, ON);
	EXPECT(&f, "+B call 2", "+C call 3", "-C return 3", "-B unwind 2");
	/* an indirect branch onto a stacked return address returns (A32 "pop {pc}") */
	range(&f, 0x1114, 0x1120, CALL);
	range(&f, 0x2000, 0x2010, IND);
	range(&f, 0x1120, 0x1124, ON);
	EXPECT(&f, "+B call 2", "-B return 2");
	/* A32 longjmp ends in "bx lr" (a return) into the middle of A: unwinds */
	range(&f, 0x1124, 0x1130, CALL);
	range(&f, 0x2000, 0x2010, CALL);
	range(&f, 0x3000, 0x3010, RET);
	range(&f, 0x1200, 0x1204, ON);
	EXPECT(&f, "+B call 2", "+C call 3", "-C return 3", "-B unwind 2");
	CHECK_EQ_INT(cst_calls_finish(f.calls), 0);
	EXPECT(&f, "-A eot 1");
	teardown(&f);
}

static void test_signal_and_exceptions(void)
{
	struct feeder f;
	struct cst_calls_stats st;

	setup(&f);
	range(&f, 0x1000, 0x1010, CALL); /* A calls B */
	range(&f, 0x2000, 0x2010, ON);   /* B: svc */
	other(&f, cst_elem_exception, 0, 0x2010, true);
	other(&f, cst_elem_trace_on, cst_gap_filter, 0, false);
	range(&f, 0x5000, 0x5010, RET);  /* the handler E, returning to the trampoline */
	range(&f, 0x9000, 0x9008, ON);   /* trampoline (unknown code): svc sigreturn */
	other(&f, cst_elem_exception, 0, 0x9008, true);
	other(&f, cst_elem_trace_on, cst_gap_filter, 0, false);
	range(&f, 0x2010, 0x2020, RET);  /* B resumes and returns */
	range(&f, 0x1010, 0x1014, ON);
	EXPECT(&f, "+A start 1", "+B call 2", "+E exception 3", "-E return 3",
	       "+[unknown] return 3", "-[unknown] return 3", "-B return 2");
	/* a call interrupted before the callee's first instruction completes after the
	 * handler: A calls C, an interrupt returns to C's entry, handler D runs first */
	range(&f, 0x1014, 0x1020, CALL);
	other(&f, cst_elem_exception, 0, 0x3000, true);
	range(&f, 0x4000, 0x4010, RET);
	range(&f, 0x9000, 0x9008, ON);
	other(&f, cst_elem_exception, 0, 0x9008, true);
	range(&f, 0x3000, 0x3010, RET);
	range(&f, 0x1020, 0x1024, ON);
	EXPECT(&f, "+D exception 2", "-D return 2", "+[unknown] return 2", "-[unknown] return 2",
	       "+C call 2", "-C return 2");
	/* ETMv3: no return address; resuming after the SVC is no exception frame */
	range(&f, 0x1024, 0x1030, ON);
	other(&f, cst_elem_exception, 0, 0, false);
	other(&f, cst_elem_trace_on, cst_gap_filter, 0, false);
	range(&f, 0x1030, 0x1034, ON);
	CHECK_EQ_INT(f.log.n, 0);
	/* Resumed at the instruction the exception followed, not after it: that
	 * instruction runs again and no handler ran (a system call the kernel
	 * restarts at its SVC; an instruction QEMU stopped before and runs again,
	 * which synth encodes so: up to a third of the threads runs under load nested the
	 * thread one frame deeper). ETMv3, no return address: */
	range(&f, 0x1030, 0x1034, ON);
	other(&f, cst_elem_exception, 0, 0, false);
	other(&f, cst_elem_trace_on, cst_gap_filter, 0, false);
	range(&f, 0x1030, 0x1034, ON);
	CHECK_EQ_INT(f.log.n, 0);
	/* ETMv4, the return address after it; the run again ends in a call */
	range(&f, 0x1030, 0x1034, ON);
	other(&f, cst_elem_exception, 0, 0x1034, true);
	other(&f, cst_elem_trace_on, cst_gap_filter, 0, false);
	range(&f, 0x1030, 0x1034, CALL);
	range(&f, 0x2000, 0x2010, RET);
	range(&f, 0x1034, 0x1034, ON);
	EXPECT(&f, "+B call 2", "-B return 2");
	/* trace filtered off without an exception: no loss, the stack stands; C is
	 * entered from code the filter leaves out */
	range(&f, 0x1034, 0x1040, CALL);
	range(&f, 0x2000, 0x2010, ON);
	other(&f, cst_elem_trace_on, cst_gap_filter, 0, false);
	range(&f, 0x3000, 0x3010, ON);
	EXPECT(&f, "+B call 2", "off 2", "+C call 3");
	/* lost trace: the stack is not known any more */
	other(&f, cst_elem_no_sync, cst_gap_resync, 0, false);
	range(&f, 0x3000, 0x3010, ON);
	EXPECT(&f, "-C gap 3", "-B gap 2", "-A gap 1", "gap", "+C start 1");
	/* returning past the root: the caller was never seen */
	range(&f, 0x3010, 0x3020, RET);
	range(&f, 0x4100, 0x4104, ON);
	EXPECT(&f, "-C return 1", "+D return 1");
	CHECK_EQ_INT(cst_calls_get_stats(f.calls, &st), 0);
	CHECK_EQ_INT(st.gaps, 1);
	CHECK_EQ_INT(st.filtered, 1);
	CHECK_EQ_INT(st.unknown_returns, 1);
	CHECK_EQ_INT(st.max_depth, 3);
	teardown(&f);
}

/* Address filters: tracing an address filter turns off is not lost. What the trace
 * saw before stands (a return pops its frame, a call waits for its return), and
 * nothing it did not see is made up. A traces, calls qsort-like code the filter
 * leaves out, which calls back into B twice and returns to A. */
static void test_filter_gaps(void)
{
	struct feeder f;
	struct cst_calls_stats st;

	setup(&f);
	range(&f, 0x1000, 0x1010, CALL); /* A calls untraced code, returning to 0x1010 */
	other(&f, cst_elem_trace_on, cst_gap_filter, 0, false);
	range(&f, 0x2000, 0x2010, RET);  /* the callback B, returning into untraced code */
	other(&f, cst_elem_trace_on, cst_gap_filter, 0, false);
	range(&f, 0x2000, 0x2010, RET);  /* again */
	other(&f, cst_elem_trace_on, cst_gap_filter, 0, false);
	range(&f, 0x1010, 0x1020, ON);   /* the untraced callee returns to A */
	EXPECT(&f, "+A start 1", "off 1", "+B call 2", "-B return 2", "off 1", "+B call 2",
	       "-B return 2", "off 1");
	/* a callback still open when the untraced call returns has returned too, and a
	 * re-entry inside the function that runs is no new frame */
	range(&f, 0x1020, 0x1030, CALL); /* A calls untraced code again */
	other(&f, cst_elem_trace_on, cst_gap_filter, 0, false);
	range(&f, 0x3000, 0x3008, ON);   /* C, entered from it, leaves the range */
	other(&f, cst_elem_trace_on, cst_gap_filter, 0, false);
	range(&f, 0x3020, 0x3028, ON);   /* ...and comes back inside C */
	other(&f, cst_elem_trace_on, cst_gap_filter, 0, false);
	range(&f, 0x1030, 0x1034, ON);   /* back in A after the call */
	EXPECT(&f, "off 1", "+C call 2", "off 2", "off 2", "-C return 2");
	/* a start point in the middle of D (not its entry): D was already running */
	other(&f, cst_elem_trace_on, cst_gap_filter, 0, false);
	range(&f, 0x4010, 0x4020, ON);
	EXPECT(&f, "off 1", "+D start 2");
	/* a filter gap of another thread on the same trace ID: this one's stack
	 * stands (it ran on where it was not traced) */
	f.tid = 8;
	range(&f, 0x5000, 0x5010, CALL);
	other(&f, cst_elem_trace_on, cst_gap_filter, 0, false);
	range(&f, 0x2000, 0x2004, ON);
	f.tid = 7;
	range(&f, 0x4020, 0x4024, ON); /* on in D, two frames deep */
	EXPECT(&f, "+E start 1", "off 1", "+B call 2");
	CHECK_EQ_INT(cst_calls_get_stats(f.calls, &st), 0);
	CHECK_EQ_INT(st.gaps, 0);
	CHECK_EQ_INT(st.filtered, 8);
	CHECK_EQ_INT(st.unknown_returns, 0);
	CHECK_EQ_INT(cst_calls_finish(f.calls), 0);
	teardown(&f);
}

static void test_threads_and_gaps(void)
{
	struct feeder f;

	setup(&f);
	f.tid = 1;
	range(&f, 0x1000, 0x1010, CALL); /* thread 1: A calls B */
	range(&f, 0x2000, 0x2010, ON);
	other(&f, cst_elem_exception, 0, 0x2010, true);
	f.tid = 2;                        /* switched: thread 2 runs C on the same ID */
	range(&f, 0x3000, 0x3010, CALL);
	range(&f, 0x4000, 0x4010, ON);
	other(&f, cst_elem_exception, 0, 0x4010, true);
	f.tid = 1;
	range(&f, 0x2010, 0x2020, RET);  /* thread 1 resumes in B and returns */
	range(&f, 0x1010, 0x1014, ON);
	EXPECT(&f, "+A start 1", "+B call 2", "+C start 1", "+D call 2", "-B return 2");
	/* lost trace while thread 1 runs: its stack goes; thread 2, which last ran on
	 * this trace ID, resets when it next appears */
	other(&f, cst_elem_no_sync, cst_gap_overflow, 0, false);
	EXPECT(&f, "-A gap 1", "gap");
	f.tid = 2;
	range(&f, 0x4010, 0x4020, RET);
	EXPECT(&f, "-D gap 2", "-C gap 1", "gap", "+D start 1");
	CHECK_EQ_INT(cst_calls_finish(f.calls), 0);
	EXPECT(&f, "-D eot 1");
	teardown(&f);
}

static void test_tree(void)
{
	struct feeder f;
	const struct cst_calltree_node *nodes;
	char *buf = NULL;
	size_t len = 0;
	FILE *mem;
	int n;

	setup(&f);
	/* A(4) calls B(4) which recurses into B(2); A then calls B(3) again */
	range(&f, 0x1000, 0x1010, CALL);
	range(&f, 0x2000, 0x2010, CALL);
	range(&f, 0x2000, 0x2008, RET);
	range(&f, 0x1010, 0x1014, CALL);
	range(&f, 0x2000, 0x200c, RET);
	range(&f, 0x1014, 0x1018, ON);
	CHECK_EQ_INT(cst_calls_finish(f.calls), 0);
	n = cst_calltree_nodes(f.tree, &nodes);
	CHECK_EQ_INT(n, 4); /* all, A, A;B, A;B;B */
	CHECK_EQ_INT(nodes[0].total, 4 + 4 + 2 + 1 + 3 + 1);
	CHECK_EQ_INT(nodes[nodes[0].first_child].calls, 1); /* entered at its first insn */
	CHECK_EQ_STR(nodes[nodes[0].first_child].name, "A");
	CHECK_EQ_INT(nodes[nodes[0].first_child].self, 6);
	CHECK_EQ_INT(cst_calltree_children(f.tree, &funcs[1], "prog"), 4 + 2 + 3);
	CHECK_EQ_INT(cst_calltree_children(f.tree, &funcs[0], "prog"), 15);
	CHECK_EQ_INT(cst_calltree_children(f.tree, &funcs[3], "prog"), 0);
	mem = open_memstream(&buf, &len);
	CHECK_EQ_INT(cst_calltree_write_folded(f.tree, mem), 0);
	fclose(mem);
	CHECK_EQ_STR(buf, "A 6\nA;B 7\nA;B;B 2\n");
	free(buf);
	buf = NULL;
	mem = open_memstream(&buf, &len);
	CHECK_EQ_INT(cst_calltree_write_text(f.tree, mem, NULL), 0);
	fclose(mem);
	CHECK(strstr(buf, "  B\n") != NULL);    /* B under A, one level in */
	CHECK(strstr(buf, "    B\n") != NULL);  /* and its recursion */
	free(buf);
	teardown(&f);
	CHECK_EQ_INT(cst_calls_alloc(NULL, record, NULL), -cste_invalid);
	CHECK_EQ_INT(cst_calls_add(NULL, NULL, 0), -cste_invalid);
	CHECK_EQ_INT(cst_calltree_add(NULL, NULL), -cste_invalid);
}

/* Runaway recursion: the stack stops at 65536 frames, emptied as lost trace. */
static void test_depth_cap(void)
{
	struct feeder f;
	struct cst_calls_stats st;

	setup(&f);
	for (int i = 0; i < 65536 + 10; i++)
		range(&f, 0x2000, 0x2010, CALL);
	CHECK_EQ_INT(cst_calls_get_stats(f.calls, &st), 0);
	CHECK_EQ_INT(st.too_deep, 1);
	CHECK_EQ_INT(st.gaps, 1);
	CHECK_EQ_INT(st.max_depth, 65536);
	/* the flame graph of it stays drawable: 1024 levels, and it says so */
	{
		char *buf = NULL;
		size_t len = 0;
		FILE *mem = open_memstream(&buf, &len);

		CHECK_EQ_INT(cst_calltree_write_flamegraph(f.tree, mem, NULL), 0);
		fclose(mem);
		CHECK(strstr(buf, "deeper than 1024 frames not drawn") != NULL);
		CHECK(len < 2u << 20);
		free(buf);
	}
	teardown(&f);
}

int main(void)
{
	test_depth_cap();
	test_call_return_tail_longjmp();
	test_signal_and_exceptions();
	test_threads_and_gaps();
	test_filter_gaps();
	test_tree();
	return test_done();
}
