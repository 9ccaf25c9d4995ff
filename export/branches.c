/* Which branches become samples, and their flags: the rules of perf's cs-etm
 * decoder (tools/perf/util/cs-etm.c, Linux 6.1) on cstrace's elements, per trace
 * ID as perf keeps a queue per trace ID.
 *
 * perf sees packets: ranges, discontinuities (no sync, trace on), exceptions and
 * exception returns (it ignores inaccessible memory and the rest). Each packet's
 * flags are set when it arrives: a range by how its last instruction branches; a
 * discontinuity marks the range before it "trace end", and a range after one
 * marks the discontinuity "trace begin"; an exception gives the range before it
 * the exception's kind and counts it as a taken branch. A branch sample leaves
 * from the previous range's last instruction when a range arrives after a taken
 * branch (or after a discontinuity, from address 0), and when a discontinuity
 * arrives after any range (to address 0). The end of an AUX buffer is no
 * discontinuity: the next buffer's decoder starts without sync, which is one. */
#include "export_int.h"

#include <string.h>

#define F(x) CST_EXPORT_FLAG_##x

/* perf's exception numbers (cs-etm.h) */
enum { v3_svc = 10, v4_call = 2, v4_fiq = 15, v4_end = 31 };

static bool read_code(struct cst_export *e, int32_t pid, uint64_t addr, void *buf, size_t n)
{
	return e->opts.sym && cst_symbolizer_read_code(e->opts.sym, pid, addr, buf, n) == 0;
}

/* OpenCSD's "conditional" for the last instruction of a range (its encoding only:
 * B.cond, CBZ/CBNZ, TBZ/TBNZ; A32's condition field; T32's B<c> and CB(N)Z). */
static bool conditional(struct cst_export *e, int32_t pid, const struct cst_elem *x)
{
	uint8_t size = x->last_size ? x->last_size : 4, b[4];
	uint64_t at = x->end - size;
	void *known = exp_map_get(&e->code, (uint64_t)(int64_t)pid, at, x->isa);
	uint32_t op;
	bool c = false;

	if (known)
		return known == (void *)2;
	if (size > 4 || !read_code(e, pid, at, b, size))
		return false;
	switch (x->isa) {
	case cst_isa_a64:
		op = cst_le32(b);
		c = (op & 0x7c000000) == 0x34000000 || (op & 0xff000000) == 0x54000000;
		break;
	case cst_isa_a32:
		op = cst_le32(b);
		c = (op & 0xe0000000) != 0xe0000000;
		break;
	case cst_isa_t32:
		/* OpenCSD's opcode: the first halfword on top */
		op = (uint32_t)cst_le16(b) << 16 | (size == 4 ? cst_le16(b + 2) : 0);
		c = ((op & 0xf0000000) == 0xd0000000 && (op & 0x0e000000) != 0x0e000000) ||
		    ((op & 0xf800d000) == 0xf0008000 && (op & 0x03800000) != 0x03800000) ||
		    (op & 0xf5000000) == 0xb1000000;
		break;
	default:
		break;
	}
	/* an answer per instruction: the map holds 1 (no) or 2 (yes) */
	if (exp_map_put(&e->code, (uint64_t)(int64_t)pid, at, x->isa, (void *)(uintptr_t)(c ? 2 : 1)) < 0)
		return c; /* only the cache is lost */
	return c;
}

/* perf's cs_etm__is_svc_instr: the instruction before @end is an SVC (1), is not
 * (0), or cannot be read (-1). */
static int svc_before(struct cst_export *e, int32_t pid, enum cst_isa isa, uint64_t end)
{
	uint8_t b[4];

	switch (isa) {
	case cst_isa_t32:
		if (!read_code(e, pid, end - 2, b, 2))
			return -1;
		return (cst_le16(b) & 0xff00) == 0xdf00;
	case cst_isa_a32:
		if (!read_code(e, pid, end - 4, b, 4))
			return -1;
		return (cst_le32(b) & 0x0f000000) == 0x0f000000 &&
		       (cst_le32(b) & 0xf0000000) != 0xf0000000;
	case cst_isa_a64:
		if (!read_code(e, pid, end - 4, b, 4))
			return -1;
		return (cst_le32(b) & 0xffe0001f) == 0xd4000001;
	default:
		return 0;
	}
}

/* perf's flags for a range, from its last instruction (cs_etm__set_sample_flags) */
static uint32_t range_flags(struct cst_export *e, int32_t pid, const struct cst_elem *x)
{
	if (x->last_class == cst_insn_branch) {
		if (x->last_subclass == cst_insn_sub_link)
			return F(BRANCH) | F(CALL);
		if (x->last_subclass == cst_insn_sub_none)
			return F(BRANCH) | (conditional(e, pid, x) ? F(CONDITIONAL) : 0);
	} else if (x->last_class == cst_insn_branch_indirect) {
		if (x->last_subclass == cst_insn_sub_link)
			return F(BRANCH) | F(CALL);
		if (x->last_subclass == cst_insn_sub_ret || x->last_subclass == cst_insn_sub_none)
			return F(BRANCH) | F(RETURN);
	}
	return 0; /* ERET, ISB and the rest: no flags of their own */
}

/* The trace unit's protocol; without a description, A64 code means ETMv4. */
static enum cst_protocol protocol_of(const struct cst_export *e, const struct cst_elem *x,
				     enum cst_isa isa)
{
	const struct cst_source_cfg *src =
		e->opts.trace && x->source >= 0 ? cst_trace_source(e->opts.trace, x->source) : NULL;

	return src ? src->protocol : isa == cst_isa_a64 ? cst_proto_etmv4i : cst_proto_etmv3;
}

/* perf's kind of an exception (system call, asynchronous, synchronous) by the
 * trace unit's exception numbers; ETE's are none of them in perf 6.1. */
static uint32_t exception_flags(struct cst_export *e, const struct cst_elem *x,
				const struct exp_queue *q)
{
	enum cst_protocol p = protocol_of(e, x, q->isa);
	uint32_t n = x->exception_number;
	int code = q->kind == exp_prev_range && n == v4_call ? svc_before(e, q->pid, q->isa, q->end) : 0;
	/* code the symbolizer cannot read (a perf.data mapping of a file that is no
	 * ELF, where perf reads the bytes): from EL0 only an SVC makes this one */
	bool svc = code > 0 || (code < 0 && q->el == 0);

	if (cst_protocol_is_v3(p)) {
		if (n == v3_svc)
			return F(BRANCH) | F(CALL) | F(SYSCALLRET);
		if (n == 1 || n == 4 || n == 8 || n == 14 || n == 15)
			return F(BRANCH) | F(CALL) | F(ASYNC) | F(INTERRUPT);
		if (n == 2 || n == 3 || n == 5 || n == 9 || n == 11 || n == 12 || n == 13)
			return F(BRANCH) | F(CALL) | F(INTERRUPT);
	} else if (p == cst_proto_etmv4i) {
		if (n == v4_call && svc)
			return F(BRANCH) | F(CALL) | F(SYSCALLRET);
		if (n == 0 || n == 1 || n == 4 || n == 6 || n == 7 || n == 14 || n == 15)
			return F(BRANCH) | F(CALL) | F(ASYNC) | F(INTERRUPT);
		if (n == 3 || n == 10 || n == 11 || n == 12 || n == v4_call || (n > v4_fiq && n <= v4_end))
			return F(BRANCH) | F(CALL) | F(INTERRUPT);
	}
	return 0;
}

/* Thread and CPU of a sample: the element's, as perf's queue has them when the
 * packet arrives; without them the context ID (the symbolizer's pid). */
static void who(const struct cst_sym_elem *se, int32_t *pid, int32_t *tid)
{
	*pid = se->elem->pid >= 0 ? se->elem->pid : se->pid;
	*tid = se->elem->tid >= 0 ? se->elem->tid : *pid;
}

/* perf's instruction samples of a range (period 1): every instruction, with
 * the flags of the packet before it. */
static int insn_samples(struct cst_export *e, const struct cst_sym_elem *se, uint32_t flags,
			uint64_t time)
{
	const struct cst_elem *x = se->elem;
	struct exp_sample_in in = {.insns = true, .flags = flags, .time = time, .cpu = x->cpu};
	int err;

	who(se, &in.pid, &in.tid);
	for (uint32_t p = 0; p < se->npieces; p++) {
		const struct cst_sym_piece *pc = &se->pieces[p];
		uint64_t len = pc->end - pc->start, a = pc->start;
		unsigned step = x->isa != cst_isa_t32 || len == 4ull * pc->num_insns ? 4
				: len == 2ull * pc->num_insns				? 2
											: 0;

		for (uint32_t i = 0; i < pc->num_insns; i++) {
			uint8_t hw[2];

			in.ip = a;
			in.from = pc;
			in.insn_count = 1;
			if ((err = exp_sample(e, &in)))
				return err;
			if (step)
				a += step;
			else
				a += read_code(e, se->pid, a, hw, 2) ? cst_t32_insn_size(cst_le16(hw)) : 2;
		}
	}
	return 0;
}

/* A branch sample from the previous packet of @q to the range @to (NULL: to
 * address 0, where trace ends), made when @now arrives. */
static int branch_sample(struct cst_export *e, struct exp_queue *q, const struct cst_sym_elem *now,
			 const struct cst_sym_elem *to, uint64_t time)
{
	struct exp_sample_in in = {.flags = q->flags, .time = time, .cpu = now->elem->cpu};

	who(now, &in.pid, &in.tid);
	if (q->kind == exp_prev_range) {
		in.ip = q->last_ip;
		in.from = q->piece;
		in.insn_len = q->last_size;
	}
	if (to) {
		in.addr = to->elem->start;
		in.to = to->npieces ? &to->pieces[0] : NULL;
	}
	in.insn_count = q->insns;
	q->insns = 0;
	return exp_sample(e, &in);
}

static int add_range(struct cst_export *e, struct exp_queue *q, const struct cst_sym_elem *se,
		     uint64_t time)
{
	const struct cst_elem *x = se->elem;
	uint32_t flags = range_flags(e, se->pid, x);
	int err;

	if (q->kind == exp_prev_gap)
		q->flags |= F(BRANCH) | F(TRACE_BEGIN);
	/* an exception return to just after an SVC was a system call's return */
	if (q->kind == exp_prev_range && q->flags == (F(BRANCH) | F(RETURN) | F(INTERRUPT)) &&
	    svc_before(e, se->pid, x->isa, x->start) > 0)
		q->flags = F(BRANCH) | F(RETURN) | F(SYSCALLRET);
	if (e->opts.instructions && se->npieces && (err = insn_samples(e, se, q->flags, time)))
		return err;
	if ((q->kind == exp_prev_gap || (q->kind == exp_prev_range && q->taken)) &&
	    (err = branch_sample(e, q, se, se, time)))
		return err;
	q->kind = exp_prev_range;
	q->flags = flags;
	q->taken = cst_elem_taken_branch(x);
	q->last_size = x->last_size ? x->last_size : 4;
	q->last_ip = x->end - q->last_size;
	q->end = x->end;
	q->isa = x->isa;
	q->pid = se->pid;
	q->el = x->ctx.el_valid ? x->ctx.el : 0;
	q->piece = se->npieces ? &se->pieces[se->npieces - 1] : NULL;
	q->insns += x->num_insns;
	return 0;
}

int exp_branches_add(struct cst_export *e, const struct cst_sym_elem *se, uint64_t time)
{
	const struct cst_elem *x = se->elem;
	struct exp_queue *q = &e->q[x->trace_id & (EXP_NIDS - 1)];
	int err = 0;

	switch (x->type) {
	case cst_elem_instr_range:
		return add_range(e, q, se, time);
	case cst_elem_no_sync:
	case cst_elem_trace_on:
		/* a discontinuity: the range before it ends the trace there */
		if (q->kind == exp_prev_range) {
			q->flags |= F(BRANCH) | F(TRACE_END);
			err = branch_sample(e, q, se, NULL, time);
		}
		q->kind = exp_prev_gap;
		q->flags = 0;
		q->insns = 0;
		return err;
	case cst_elem_exception:
		if (q->kind == exp_prev_range) {
			q->flags = exception_flags(e, x, q);
			q->taken = true;
		}
		return 0;
	case cst_elem_exception_ret:
		if (q->kind == exp_prev_range) {
			q->flags = F(BRANCH) | F(RETURN) | F(INTERRUPT);
			q->taken = true;
		}
		return 0;
	default:
		return 0;
	}
}
