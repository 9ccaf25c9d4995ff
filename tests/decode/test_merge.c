/* Unit tests of decode/run/merge.c and cst_elem_continues: which runs of instruction
 * ranges the symbolizing views get as one range, and what that range holds. Each
 * case scripts elements (ETMv3 gives one range per instruction) and checks what
 * comes out, element by element. */
#include <stdio.h>
#include <string.h>

#include "run/run.h"
#include "test.h"

struct out {
	struct cst_elem e[16];
	int n, sb;
	char order[64]; /* 'e' element, 's' sideband, as delivered */
};

static int on_elem(void *ctx, const struct cst_elem *e)
{
	struct out *o = ctx;

	if (o->n < 16)
		o->e[o->n] = *e;
	o->order[strlen(o->order)] = 'e';
	o->n++;
	return 0;
}

static int on_sb(void *ctx, const struct cst_sideband *sb)
{
	struct out *o = ctx;

	(void)sb;
	o->order[strlen(o->order)] = 's';
	o->sb++;
	return 0;
}

/* A 2-byte T32 instruction at @start that is not a branch, executed. */
static struct cst_elem insn(uint64_t start)
{
	struct cst_elem e;

	memset(&e, 0, sizeof(e));
	e.type = cst_elem_instr_range;
	e.offset = start * 10; /* tells the elements apart */
	e.start = start;
	e.end = start + 2;
	e.num_insns = 1;
	e.isa = cst_isa_t32;
	e.last_class = cst_insn_other;
	e.last_size = 2;
	e.last_executed = true;
	e.pid = e.tid = 7;
	e.cpu = 1;
	e.trace_id = 0x10;
	return e;
}

static struct out run(const struct cst_elem *in, int n, int sb_after)
{
	struct out o;
	struct dec_merge m = {.elem_fn = on_elem, .sb_fn = on_sb, .ctx = &o};

	memset(&o, 0, sizeof(o));
	for (int i = 0; i < n; i++) {
		CHECK_EQ_INT(dec_merge_elem(&m, &in[i]), 0);
		if (i == sb_after)
			CHECK_EQ_INT(dec_merge_sb(&m, &(struct cst_sideband){0}), 0);
	}
	CHECK_EQ_INT(dec_merge_end(&m), 0);
	return o;
}

int main(void)
{
	struct cst_elem in[8];
	struct out o;

	/* Three instructions, the third a taken branch: one range of 3 from the
	 * first's offset, ending as the branch ends. */
	in[0] = insn(0x100);
	in[1] = insn(0x102);
	in[2] = insn(0x104);
	in[2].last_class = cst_insn_branch;
	in[2].last_subclass = cst_insn_sub_link;
	in[3] = insn(0x200);
	o = run(in, 4, -1);
	CHECK_EQ_INT(o.n, 2);
	CHECK(o.e[0].start == 0x100 && o.e[0].end == 0x106 && o.e[0].num_insns == 3);
	CHECK(o.e[0].offset == 0x100 * 10 && o.e[0].last_class == cst_insn_branch &&
	      o.e[0].last_subclass == cst_insn_sub_link && o.e[0].last_size == 2);
	CHECK(o.e[0].pid == 7 && o.e[0].cpu == 1 && o.e[0].trace_id == 0x10);
	CHECK(o.e[1].start == 0x200 && o.e[1].num_insns == 1);
	/* `joined` counts the ranges beyond the first: stats and the restart past
	 * what was delivered count the decoder's ranges */
	CHECK_EQ_INT(o.e[0].joined, 2);
	CHECK_EQ_INT(o.e[1].joined, 0);

	/* Runs joined again (a worker's, then the caller's): the counts add up. */
	in[0] = insn(0x100);
	in[0].num_insns = 3;
	in[0].end = 0x106;
	in[0].joined = 2;
	in[1] = insn(0x106);
	in[1].num_insns = 2;
	in[1].end = 0x10a;
	in[1].joined = 1;
	o = run(in, 2, -1);
	CHECK_EQ_INT(o.n, 1);
	CHECK(o.e[0].num_insns == 5 && o.e[0].end == 0x10a);
	CHECK_EQ_INT(o.e[0].joined, 4);

	/* A not-taken branch ends a run (views count branches not taken), and so
	 * does an instruction that failed its condition. */
	in[0] = insn(0x100);
	in[1] = insn(0x102);
	in[1].last_class = cst_insn_branch;
	in[1].last_executed = false;
	in[2] = insn(0x104);
	in[3] = insn(0x106);
	in[3].last_executed = false;
	in[4] = insn(0x108);
	o = run(in, 5, -1);
	CHECK_EQ_INT(o.n, 3);
	CHECK(o.e[0].num_insns == 2 && o.e[0].end == 0x104 && !o.e[0].last_executed);
	CHECK(o.e[1].num_insns == 2 && o.e[1].start == 0x104 && !o.e[1].last_executed);
	CHECK(o.e[2].num_insns == 1 && o.e[2].start == 0x108);

	/* Nothing joins across: another address, ISA, thread, time, a cycle count,
	 * perf_unseen, sideband, or another element type. */
	for (int k = 0; k < 7; k++) {
		in[0] = insn(0x100);
		in[1] = insn(0x102);
		switch (k) {
		case 0: in[1] = insn(0x110); break;
		case 1: in[1].isa = cst_isa_a32; break;
		case 2: in[1].tid = 8; break;
		case 3: in[1].timestamp = 5; break;
		case 4: in[1].has_cycle_count = true; in[1].cycle_count = 3; break;
		case 5: in[1].perf_unseen = true; break;
		case 6: in[1].ctx.context_id = 9; in[1].ctx.ctxid_valid = true; break;
		}
		o = run(in, 2, -1);
		if (o.n != 2)
			fprintf(stderr, "case %d joined\n", k);
		CHECK_EQ_INT(o.n, 2);
		CHECK(o.e[0].num_insns == 1 && o.e[1].num_insns == 1);
	}
	in[0] = insn(0x100);
	in[1] = insn(0x102);
	o = run(in, 2, 0);
	CHECK_EQ_STR(o.order, "ese");
	in[1].type = cst_elem_exception;
	in[2] = insn(0x102);
	o = run(in, 3, -1);
	CHECK_EQ_STR(o.order, "eee");
	CHECK(o.e[1].type == cst_elem_exception && o.e[2].start == 0x102);

	/* A range with a cycle count, or that ends in a branch, goes out at once (it
	 * is never held): a range that cannot be continued keeps its own pointer. */
	in[0] = insn(0x100);
	in[0].has_cycle_count = true;
	in[1] = insn(0x102);
	o = run(in, 2, -1);
	CHECK_EQ_INT(o.n, 2);
	CHECK(o.e[0].has_cycle_count && o.e[1].start == 0x102);

	/* The held run goes out at the end of input, and an ETMv4-like stream (every
	 * range ends in a branch) passes through unchanged. */
	for (int i = 0; i < 6; i++) {
		in[i] = insn(0x100 + 0x10 * (uint64_t)i);
		in[i].num_insns = 4;
		in[i].end = in[i].start + 16;
		in[i].last_class = cst_insn_branch;
	}
	o = run(in, 6, -1);
	CHECK_EQ_INT(o.n, 6);
	CHECK(o.e[5].start == 0x150 && o.e[5].num_insns == 4);
	return test_done();
}
