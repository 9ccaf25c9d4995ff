/* cstrace's own ETMv3 instruction-trace decoder behind OpenCSD's packet processor
 * (follow.h): each atom of a P-header is one instruction, in A32 or T32, an
 * instruction range of its own as OpenCSD's decoder gives it. The last range of a
 * P-header waits for the next packet: a branch address with an exception that
 * cancels the last instruction drops it. Decoded instructions are kept by
 * address, so each is read and decoded once while the context stands.
 *
 * It covers ETMv3 (not PTM) of ARMv7 A/R-profile cores tracing instructions
 * only, without cycle-accurate trace, in A32 and T32 code: sync, I-sync, atoms,
 * branch addresses (with exceptions and the cancelling of the last
 * instruction), context ID, VMID, timestamps and triggers. */
#include "follow.h"

#include "arm_insn.h"

#include <opencsd/etmv3/trc_pkt_types_etmv3.h>

#include <stdio.h>
#include <stdlib.h>

/* ETMCR bits of what the follower does not decode: data address and value
 * trace (3:2), cycle-accurate trace (12) */
#define ETMCR_NOT_COVERED 0x100cu
#define INSNS (1u << 14) /* decoded instructions kept, by address */

enum state { st_no_sync, st_wait_async, st_wait_isync, st_decode };

struct cached_insn {
	uint64_t addr; /* | 1 when valid (instructions are 2-aligned) */
	uint32_t gen;
	bool thumb;
	struct arm_insn in;
};

/* An instruction as an atom found it: a range of its own in OpenCSD's elements */
struct executed {
	uint64_t start;
	enum cst_isa isa;
	bool taken; /* the atom: E, or N */
	const struct arm_insn *in;
};

/* OpenCSD's context of the PE, as its elements carry it */
struct pe {
	bool secure;
	int8_t el; /* -1: unknown (ETMv3 says only whether the PE is in Hyp mode) */
	bool ctxid_valid, vmid_valid;
	uint32_t ctxid, vmid;
};

struct etm3_follow {
	struct follow_base b;
	enum cst_gap_reason unsync; /* what the next no-sync element says */

	enum state state;
	bool need_addr, sent_unknown;
	uint64_t addr;
	struct pe pe;

	/* OpenCSD's list of elements not yet sent, as its count decides what it
	 * does: a P-header's last range is pended (held here) when it is the only
	 * element in the list, and a cancelling exception removes the pended count
	 * of elements from the list's end but leaves the count set, so that the
	 * last element of that branch stays unsent until the next packet
	 * (@unsent: given out here already) */
	struct executed held;
	struct arm_insn held_insn;
	uint32_t held_index;
	bool holding, pend, unsent;
	/* the range being made: one instruction, or with @runs, the run of them that
	 * a P-header gives (out before the next element, or joined with the held) */
	bool runs, running;
	bool timed; /* follow_cfg.timed */
	struct cst_elem run;
	uint32_t run_index;

	struct cached_insn *insns; /* of other generations than b.gen: forgotten */
	struct cst_pe_context code_ctx; /* the context the cached code was read in */
};

static bool covers(const struct follow_cfg *c)
{
	return c->src->protocol == cst_proto_etmv3 && c->arch == ARCH_V7 &&
	       (c->profile == profile_CortexA || c->profile == profile_CortexR) &&
	       !(c->src->regs.etmv3.etmcr & ETMCR_NOT_COVERED);
}

static void reset_pe(struct pe *pe)
{
	*pe = (struct pe){.secure = true, .el = -1};
}

static struct follow_base *alloc(const struct follow_cfg *c, const struct follow_io *io)
{
	struct etm3_follow *f = calloc(1, sizeof(*f));

	if (!f)
		return NULL;
	f->insns = calloc(INSNS, sizeof(*f->insns));
	if (!f->insns) {
		free(f);
		return NULL;
	}
	dec_follow_init(&f->b, &dec_etm3_follower, c->trace_id, io);
	f->b.recover = c->recover;
	f->state = st_no_sync;
	f->unsync = cst_gap_init;
	f->need_addr = true;
	f->runs = c->runs;
	f->timed = c->timed;
	reset_pe(&f->pe);
	return &f->b;
}

static void free_follower(struct follow_base *b)
{
	struct etm3_follow *f = (struct etm3_follow *)b;

	if (!f)
		return;
	free(f->insns);
	free(f);
}

static void reset(struct etm3_follow *f)
{
	f->state = st_no_sync;
	f->need_addr = true;
	f->sent_unknown = false;
	f->holding = f->pend = f->unsent = false;
	dec_follow_forget(&f->b, f->insns, INSNS * sizeof(*f->insns));
}

/* --- elements */

/* The range being made goes out. */
static int put_run(struct etm3_follow *f)
{
	if (!f->running)
		return 0;
	f->running = false;
	return dec_follow_put(&f->b, f->run_index, &f->run);
}

/* Whether @x continues the run @r, as dec_merge would join their ranges
 * (cst_elem_continues): every other field of two ranges this decoder made in
 * one P-header is the same. A run is at most a P-header's atoms and the held
 * instruction, far from num_insns' limit. */
static bool continues(const struct cst_elem *r, const struct executed *x)
{
	return cst_elem_can_continue(r) && r->end == x->start && r->isa == x->isa;
}

/* Instruction @x, made at the packet of @index: its range, or (with runs) joined
 * into the run before it. The element is made only when a range starts: one
 * made per instruction was most of this decoder's time. */
static int put_insn(struct etm3_follow *f, const struct executed *x, uint32_t index)
{
	const struct arm_insn *in = x->in;
	struct cst_elem *r = &f->run;
	int ret;

	if (f->running && continues(r, x)) {
		r->end = x->start + in->size;
		r->num_insns++;
		r->joined++;
	} else {
		if ((ret = put_run(f)))
			return ret;
		/* The fields a range has are all set here; the others stay zero, but
		 * for those the delivery fills in again for every element (offset,
		 * trace ID, thread, context). Zeroing the element for each of ETMv3's
		 * one-instruction ranges was 40 % of this decoder's time. */
		r->type = cst_elem_instr_range;
		r->start = x->start;
		r->end = x->start + in->size;
		r->num_insns = 1;
		r->isa = x->isa;
		r->joined = 0;
		f->run_index = index;
		f->running = true;
	}
	r->last_class = in->cls;
	r->last_subclass = in->sub;
	r->last_size = in->size;
	r->last_executed = x->taken;
	return f->runs ? 0 : put_run(f);
}

/* The held instruction goes out (the next packet is no cancelling exception). */
static int release(struct etm3_follow *f)
{
	int ret = 0;

	if (f->holding) {
		f->holding = false;
		ret = put_insn(f, &f->held, f->held_index);
	}
	return ret ? ret : put_run(f);
}

static int put_context(struct etm3_follow *f, enum cst_isa isa)
{
	struct cst_elem e = {.type = cst_elem_pe_context, .isa = isa};

	e.ctx.security = f->pe.secure ? cst_sec_secure : cst_sec_nonsecure;
	e.ctx.el = (uint8_t)f->pe.el;
	e.ctx.el_valid = f->pe.el >= 0;
	e.ctx.ctxid_valid = f->pe.ctxid_valid;
	e.ctx.context_id = f->pe.ctxid;
	e.ctx.vmid_valid = f->pe.vmid_valid;
	e.ctx.vmid = f->pe.vmid;
	if (!dec_follow_same_code(&f->code_ctx, &e.ctx))
		dec_follow_forget(&f->b, f->insns, INSNS * sizeof(*f->insns));
	f->code_ctx = e.ctx;
	return dec_follow_put(&f->b, f->b.index, &e);
}

static void set_need_addr(struct etm3_follow *f, bool need)
{
	f->need_addr = need;
	f->sent_unknown = false;
}

/* --- the code */

static enum cst_isa isa_of(ocsd_isa isa)
{
	return isa == ocsd_isa_arm ? cst_isa_a32 : isa == ocsd_isa_thumb2 ? cst_isa_t32
								       : cst_isa_unknown;
}

/* The instruction at @pc, or NULL if its bytes cannot be read. */
static const struct arm_insn *insn_at(struct etm3_follow *f, uint64_t pc, bool thumb)
{
	struct cached_insn *c = &f->insns[(pc >> 1) & (INSNS - 1)];
	const uint8_t *b;

	if (c->addr == (pc | 1) && c->gen == f->b.gen && c->thumb == thumb)
		return &c->in;
	b = dec_follow_code(&f->b, pc, f->pe.secure ? OCSD_MEM_SPACE_S : OCSD_MEM_SPACE_N);
	if (!b)
		return NULL;
	if (thumb)
		dec_arm_insn_t32(b, pc, &c->in);
	else
		dec_arm_insn_a32((uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 |
					 (uint32_t)b[3] << 24,
				 pc, &c->in);
	c->addr = pc | 1;
	c->gen = f->b.gen;
	c->thumb = thumb;
	return &c->in;
}

/* --- packets */

/* A gap element (@type, @gap) at @addr, after the range being made. */
static int put_gap(struct etm3_follow *f, enum cst_elem_type type, enum cst_gap_reason gap,
		   uint64_t addr)
{
	struct cst_elem e = {.type = type, .gap = gap, .start = addr};
	int ret = put_run(f);

	return ret ? ret : dec_follow_put(&f->b, f->b.index, &e);
}

/* @carried: OpenCSD's list still holds an element from the packet before. */
static int process_phdr(struct etm3_follow *f, const ocsd_etmv3_pkt *pkt, bool carried)
{
	enum cst_isa isa = isa_of(pkt->curr_isa);
	uint32_t bits = pkt->atom.En_bits;
	unsigned made = carried; /* the elements in OpenCSD's list */
	int ret = 0;

	if (isa == cst_isa_unknown)
		return dec_follow_decline(&f->b, "code that is neither A32 nor T32");
	for (unsigned n = pkt->atom.num; n && !ret; n--, bits >>= 1) {
		struct executed x = {.start = f->addr, .isa = isa, .taken = bits & 1};
		const struct arm_insn *in;

		if (f->need_addr) {
			/* atoms without an address: said once, then skipped */
			if (!f->sent_unknown) {
				ret = put_gap(f, cst_elem_addr_unknown, cst_gap_resync, 0);
				f->sent_unknown = true;
				made++;
			}
			break;
		}
		in = x.in = insn_at(f, f->addr, isa == cst_isa_t32);
		if (!in) {
			ret = put_gap(f, cst_elem_addr_nacc, cst_gap_nacc, f->addr);
			set_need_addr(f, true);
			made++;
			continue;
		}
		if (in->cls == cst_insn_branch && x.taken)
			f->addr = in->target;
		else if (in->cls == cst_insn_branch_indirect && x.taken)
			set_need_addr(f, true);
		else
			f->addr = x.start + in->size;
		if (in->isa_change) /* as OpenCSD: taken or not */
			isa = isa == cst_isa_t32 ? cst_isa_a32 : cst_isa_t32;
		if (made++ || n > 1) {
			ret = put_insn(f, &x, f->b.index);
			continue;
		}
		/* The P-header's only element, a range, is pended by OpenCSD: it
		 * waits for the next packet (its decode is copied: the table may be
		 * written before). OpenCSD 1.3.3 pends the last range only when the
		 * list holds nothing else, so that a cancelling exception after a
		 * longer P-header leaves its last instruction in the trace. */
		f->held_insn = *in;
		f->held = x;
		f->held.in = &f->held_insn;
		f->held_index = f->b.index;
		f->holding = f->pend = true;
	}
	return ret;
}

static int process_isync(struct etm3_follow *f, const ocsd_etmv3_pkt *pkt, bool first)
{
	static const enum cst_gap_reason on[] = {cst_gap_filter, cst_gap_filter,
						 cst_gap_overflow, cst_gap_debug};
	const etmv3_context_t *c = &pkt->context;
	int ret = 0;

	if (first || pkt->isync_info.reason != iSync_Periodic) {
		struct cst_elem e = {.type = cst_elem_trace_on,
				     .gap = on[pkt->isync_info.reason & 3]};

		if ((ret = dec_follow_put(&f->b, f->b.index, &e)))
			return ret;
	} else if (!(c->updated || c->updated_c || c->updated_v)) {
		/* OpenCSD 1.3.3 sends an element it made for the context and did
		 * not fill: not followed */
		return dec_follow_decline(&f->b, "a periodic I-sync without context");
	}
	if (first || c->updated || c->updated_c || c->updated_v) {
		if (first)
			reset_pe(&f->pe);
		if (c->updated_c) {
			f->pe.ctxid = c->ctxtID;
			f->pe.ctxid_valid = true;
		}
		if (c->updated_v) {
			f->pe.vmid = c->VMID;
			f->pe.vmid_valid = true;
		}
		if (c->updated) {
			f->pe.el = c->curr_Hyp ? 2 : -1;
			f->pe.secure = !c->curr_NS;
		}
		if ((ret = put_context(f, isa_of(pkt->curr_isa))))
			return ret;
	}
	if (!pkt->isync_info.no_address) {
		f->addr = pkt->isync_info.has_LSipAddress ? pkt->data.addr.val : pkt->addr.val;
		set_need_addr(f, false);
	}
	return 0;
}

static int process_branch(struct etm3_follow *f, const ocsd_etmv3_pkt *pkt)
{
	bool cancel = pkt->exception.bits.present && pkt->exception.bits.cancel;
	bool stale = cancel && f->pend; /* OpenCSD's pended count outlives the cancel */
	unsigned made = 0;
	int ret = 0;

	if (stale && !f->holding)
		/* OpenCSD would take back an element it has not pended */
		return dec_follow_decline(&f->b, "a cancelling exception right after another");
	if (stale && f->timed)
		/* what this packet makes, OpenCSD gives out (in part) with the next */
		return dec_follow_decline(&f->b, "a cancelling exception, in time order");
	if (stale)
		f->holding = false; /* the last instruction did not complete */
	else
		f->pend = false;
	f->unsent = false;
	if ((ret = release(f)))
		return ret;
	f->addr = pkt->addr.val;
	set_need_addr(f, false);
	if (!pkt->exception.bits.present)
		return 0;
	if (pkt->context.updated) {
		bool secure = !pkt->context.curr_NS;
		int8_t el = pkt->context.curr_Hyp ? 2 : -1;

		if (secure != f->pe.secure || el != f->pe.el) {
			f->pe.secure = secure;
			f->pe.el = el;
			if ((ret = put_context(f, f->b.elem_isa)))
				return ret;
			made++;
		}
	}
	if (pkt->exception.number) {
		struct cst_elem e = {.type = cst_elem_exception,
				     .exception_number = pkt->exception.number};

		if ((ret = dec_follow_put(&f->b, f->b.index, &e)))
			return ret;
		made++;
	}
	/* the last of them stays in OpenCSD's list (same order, sent later) */
	f->unsent = stale && made;
	return 0;
}

static int decode_packet(struct etm3_follow *f, const ocsd_etmv3_pkt *pkt)
{
	bool carried = false;
	int ret;

	if (pkt->type != ETM3_PKT_BRANCH_ADDRESS) {
		/* OpenCSD commits what it pended; it is sent after this packet */
		carried = f->holding || f->unsent;
		f->pend = f->unsent = false;
		if ((ret = release(f)))
			return ret;
	}
	switch (pkt->type) {
	case ETM3_PKT_INCOMPLETE_EOT:
	case ETM3_PKT_A_SYNC:
	case ETM3_PKT_IGNORE:
		return 0;
	case ETM3_PKT_TRIGGER:
		return dec_follow_put_type(&f->b, f->b.index, cst_elem_event);
	case ETM3_PKT_BRANCH_ADDRESS:
		return process_branch(f, pkt);
	case ETM3_PKT_I_SYNC:
		return process_isync(f, pkt, false);
	case ETM3_PKT_P_HDR:
		return process_phdr(f, pkt, carried);
	case ETM3_PKT_CONTEXT_ID:
		f->pe.ctxid = pkt->context.ctxtID;
		f->pe.ctxid_valid = true;
		return put_context(f, f->b.elem_isa);
	case ETM3_PKT_VMID:
		f->pe.vmid = pkt->context.VMID;
		f->pe.vmid_valid = true;
		return put_context(f, f->b.elem_isa);
	case ETM3_PKT_TIMESTAMP: {
		struct cst_elem e = {.type = cst_elem_timestamp, .timestamp = pkt->timestamp};

		return dec_follow_put(&f->b, f->b.index, &e);
	}
	default: {
		char why[64];

		snprintf(why, sizeof(why), "a packet of type %d", (int)pkt->type);
		return dec_follow_decline(&f->b, why);
	}
	}
}

static int process(struct etm3_follow *f, const ocsd_etmv3_pkt *pkt)
{
	int ret;

	switch (f->state) {
	case st_no_sync:
		f->state = st_wait_async;
		if ((ret = dec_follow_put_no_sync(&f->b, f->unsync)))
			return ret;
		__attribute__((fallthrough)); /* this packet may be the sync */
	case st_wait_async:
		if (pkt->type == ETM3_PKT_A_SYNC)
			f->state = st_wait_isync;
		return 0;
	case st_wait_isync:
		if (pkt->type == ETM3_PKT_I_SYNC) {
			f->state = st_decode;
			return process_isync(f, pkt, true);
		}
		/* a timestamp may come before the first I-sync */
		return pkt->type == ETM3_PKT_TIMESTAMP ? decode_packet(f, pkt) : 0;
	case st_decode:
		return decode_packet(f, pkt);
	}
	return 0;
}

static int data(struct follow_base *b, const void *packet)
{
	return process((struct etm3_follow *)b, packet);
}

static int eot(struct follow_base *b)
{
	struct etm3_follow *f = (struct etm3_follow *)b;
	int ret;

	f->pend = f->unsent = false; /* committed, and sent with the end */
	ret = release(f);
	return ret ? ret : dec_follow_put_type(&f->b, f->b.index, cst_elem_eot);
}

static int reset_op(struct follow_base *b)
{
	struct etm3_follow *f = (struct etm3_follow *)b;
	int ret = put_run(f); /* what came before the held range */

	reset(f);
	f->unsync = cst_gap_reset;
	return ret;
}

/* After a packet it does not cover, in recovering: the run made so far goes
 * out, as before a reset, and the follower looks for sync again. */
static int resync(struct follow_base *b)
{
	struct etm3_follow *f = (struct etm3_follow *)b;
	int ret = put_run(f);

	reset(f);
	f->unsync = cst_gap_resync;
	return ret;
}

const struct dec_follower dec_etm3_follower = {
	.name = "ETMv3", .covers = covers, .alloc = alloc, .free = free_follower,
	.data = data, .eot = eot, .reset = reset_op, .resync = resync};
