/* cstrace's own ETMv4 instruction-trace decoder behind OpenCSD's packet processor
 * (follow.h): the packets go on a stack of pending elements, and each P0
 * element (atom, exception) is committed as it comes (no speculation), walking
 * the code from the current address to the next waypoint, as OpenCSD's ETMv4
 * decoder does. Walks are cached by their start address, so a loop's blocks are
 * walked once.
 *
 * It covers what an A-profile core without speculation traces (atoms, addresses,
 * context, exceptions, trace on, timestamps) in configurations without cycle
 * counts, return stack, Q elements, conditional or data trace, for ARMv8 and
 * ARMv8.3 (A64 only). */
#include "follow.h"

#include "arm_insn.h"

#include <opencsd/etmv4/trc_pkt_types_etmv4.h>

#include <stdio.h>
#include <stdlib.h>

/* TRCCONFIGR bits of what the follower does not decode: LSP0 (2:1), cycle counts
 * (4), conditional instructions (10:8), return stack (12), Q elements (14:13),
 * data address and value (17:16). */
#define CONFIGR_NOT_COVERED 0x37716u
#define STACK_MAX 64       /* pending elements before the follower gives up */
#define BLOCKS (1u << 14)  /* walks cached, by start address */

enum state { st_no_sync, st_wait_sync, st_wait_tinfo, st_decode };

enum pending_kind {
	pk_atom,
	pk_addr,
	pk_ctxt,
	pk_trace_on,
	pk_excep,
	pk_excep_ret,
	pk_ts,
	pk_event,
};

struct pending {
	enum pending_kind kind;
	uint32_t index; /* of the packet that made it */
	union {
		struct {
			uint32_t bits; /* bit 0 the oldest, 1 = E */
			uint8_t num;
		} atom;
		struct {
			uint64_t val;
			uint8_t is;
		} addr;
		struct {
			etmv4_context_t c;
			uint8_t is;
		} ctxt;
		struct {
			uint16_t number;
			bool prev_same; /* the return address is a branch target as well */
		} excep;
		uint64_t ts;
	} u;
};

/* A walk from @start to its first waypoint (its last instruction). */
struct block {
	uint64_t start; /* | 1 when valid (A64 addresses are 4-aligned) */
	uint64_t end;
	uint32_t num;
	uint32_t gen; /* etm4_follow.gen when it was walked */
	struct arm_insn last;
};

struct etm4_follow {
	struct follow_base b;
	ocsd_arch_version_t arch;
	bool wfi_wfe_branch;
	enum cst_gap_reason unsync; /* what the next no-sync element says */
	bool prev_overflow;         /* the next trace on says "overflow" */
	struct cst_elem range;      /* the ranges it gives (put_range) */

	enum state state;
	bool need_addr, need_ctxt, pending_addr;
	uint8_t last_is;
	uint32_t spec_depth;

	/* the PE, as the decoder knows it */
	uint64_t addr;
	enum cst_isa isa;
	bool is_64bit, is_secure;
	uint8_t el;
	struct arm_insn last;    /* the last instruction walked */

	/* the context the last context element carried (OpenCSD copies it from
	 * element to element: a context packet that leaves out the context ID or
	 * VMID shows the last one given) */
	struct cst_pe_context elem_ctx;

	struct pending stack[STACK_MAX]; /* oldest at head */
	unsigned head, count;

	struct block *blocks; /* of other generations than b.gen: forgotten */
};

static bool covers(const struct follow_cfg *c)
{
	const struct cst_source_cfg *src = c->src;

	return src->protocol == cst_proto_etmv4i && (c->arch == ARCH_V8 || c->arch == ARCH_V8r3) &&
	       !(src->regs.etmv4.trcconfigr & CONFIGR_NOT_COVERED) && src->regs.etmv4.trcidr8 == 0;
}

static struct follow_base *alloc(const struct follow_cfg *c, const struct follow_io *io)
{
	const struct cst_source_cfg *src = c->src;
	struct etm4_follow *f = calloc(1, sizeof(*f));
	uint32_t idr1 = src->regs.etmv4.trcidr1;
	unsigned version = ((idr1 >> 8) & 0xf) << 4 | ((idr1 >> 4) & 0xf);

	if (!f)
		return NULL;
	f->blocks = calloc(BLOCKS, sizeof(*f->blocks));
	if (!f->blocks) {
		free(f);
		return NULL;
	}
	dec_follow_init(&f->b, &dec_etm4_follower, c->trace_id, io);
	f->b.recover = c->recover;
	f->arch = c->arch;
	/* WFI and WFE are waypoints from ETMv4.3 on, when TRCIDR2.WFXMODE says so */
	f->wfi_wfe_branch = (src->regs.etmv4.trcidr2 & 0x80000000u) && version >= 0x43;
	f->state = st_no_sync;
	f->unsync = cst_gap_init;
	f->is_secure = true;
	f->isa = cst_isa_unknown;
	f->need_addr = f->need_ctxt = true;
	return &f->b;
}

static void free_follower(struct follow_base *b)
{
	struct etm4_follow *f = (struct etm4_follow *)b;

	if (!f)
		return;
	free(f->blocks);
	free(f);
}

static void reset(struct etm4_follow *f)
{
	f->state = st_no_sync;
	f->need_addr = f->need_ctxt = true;
	f->pending_addr = false;
	f->spec_depth = 0;
	f->is_secure = true;
	f->is_64bit = false;
	f->el = 0;
	f->last_is = 0;
	f->prev_overflow = false;
	f->head = f->count = 0;
	dec_follow_forget(&f->b, f->blocks, BLOCKS * sizeof(*f->blocks));
}

/* --- elements */

static int put_range(struct etm4_follow *f, uint32_t index, uint64_t start, uint64_t end,
		     uint32_t num, bool executed)
{
	struct cst_elem *e = &f->range;

	/* The fields a range has are all set here; the others stay zero, but for
	 * those the delivery fills in again for every element (offset, trace ID,
	 * thread, context): no element zeroed per range. */
	e->type = cst_elem_instr_range;
	e->start = start;
	e->end = end;
	e->num_insns = num;
	e->isa = f->isa;
	e->last_class = f->last.cls;
	e->last_subclass = f->last.sub;
	e->last_size = 4;
	e->last_executed = executed;
	return dec_follow_put(&f->b, index, e);
}

static int put_nacc(struct etm4_follow *f, uint32_t index)
{
	struct cst_elem e = {.type = cst_elem_addr_nacc, .start = f->addr, .gap = cst_gap_nacc};

	return dec_follow_put(&f->b, index, &e);
}

static enum cst_isa isa_of(bool is_64bit, uint8_t is)
{
	return is_64bit ? cst_isa_a64 : is ? cst_isa_t32 : cst_isa_a32;
}

static int put_context(struct etm4_follow *f, uint32_t index, const etmv4_context_t *c,
		       uint8_t is)
{
	struct cst_elem e = {.type = cst_elem_pe_context, .ctx = f->elem_ctx};

	f->is_64bit = c->SF;
	f->is_secure = !c->NS;
	f->el = (uint8_t)c->EL;
	e.ctx.bits64 = c->SF;
	e.ctx.security = c->NS ? cst_sec_nonsecure : cst_sec_secure;
	e.ctx.el = (uint8_t)c->EL;
	e.ctx.el_valid = true;
	if (c->updated_c) {
		e.ctx.ctxid_valid = true;
		e.ctx.context_id = c->ctxtID;
	}
	if (c->updated_v) {
		e.ctx.vmid_valid = true;
		e.ctx.vmid = c->VMID;
	}
	e.isa = f->isa = isa_of(f->is_64bit, is);
	if (!dec_follow_same_code(&f->elem_ctx, &e.ctx))
		dec_follow_forget(&f->b, f->blocks, BLOCKS * sizeof(*f->blocks));
	f->elem_ctx = e.ctx;
	f->need_ctxt = false;
	return dec_follow_put(&f->b, index, &e);
}

/* --- the code */

/* OpenCSD's memory space for the PE's exception level and security state. */
static uint32_t mem_space(const struct etm4_follow *f)
{
	static const uint32_t secure[4] = {OCSD_MEM_SPACE_EL1S, OCSD_MEM_SPACE_EL1S,
					   OCSD_MEM_SPACE_EL2S, OCSD_MEM_SPACE_EL3};
	static const uint32_t nonsecure[4] = {OCSD_MEM_SPACE_EL1N, OCSD_MEM_SPACE_EL1N,
					      OCSD_MEM_SPACE_EL2, OCSD_MEM_SPACE_EL3};

	return f->is_secure ? secure[f->el & 3] : nonsecure[f->el & 3];
}

/* The opcode at @pc; false if its 4 bytes cannot be read. */
static bool opcode_at(struct etm4_follow *f, uint64_t pc, uint32_t *op)
{
	const uint8_t *p = dec_follow_code(&f->b, pc, mem_space(f));

	if (!p)
		return false;
	*op = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
	return true;
}

enum walk_end { walk_waypoint, walk_nacc };

struct walk {
	uint64_t start, end;
	uint32_t num;
};

/* Walk from the current address to the next waypoint or, with @to_addr, until
 * the address after an instruction is @match; f->addr ends after the last
 * instruction walked and f->last describes it. Always inlined: called, it
 * wrote @w's fields one by one, and the caller read start and end back in one
 * 16-byte load, which waits for both stores (inlined, 4% fewer instructions and
 * 5% less time in `decode --threads 1`). */
static inline __attribute__((always_inline)) enum walk_end
walk(struct etm4_follow *f, bool to_addr, uint64_t match, struct walk *w)
{
	struct block *b = &f->blocks[(f->addr >> 2) & (BLOCKS - 1)];
	enum walk_end end = walk_nacc;
	uint32_t op;

	w->start = w->end = f->addr;
	w->num = 0;
	if (!to_addr && b->start == (f->addr | 1) && b->gen == f->b.gen) {
		w->end = f->addr = b->end;
		w->num = b->num;
		f->last = b->last;
		return walk_waypoint;
	}
	while (opcode_at(f, f->addr, &op)) {
		dec_arm_insn_a64(op, f->addr, f->arch >= ARCH_V8r3, f->wfi_wfe_branch, &f->last);
		f->addr += 4;
		w->num++;
		if (to_addr ? f->addr == match : f->last.cls != cst_insn_other) {
			end = walk_waypoint;
			break;
		}
	}
	w->end = f->addr;
	if (!to_addr && end == walk_waypoint)
		*b = (struct block){w->start | 1, w->end, w->num, f->b.gen, f->last};
	return end;
}

/* --- committing elements */

static struct pending *oldest(struct etm4_follow *f)
{
	return f->count ? &f->stack[f->head] : NULL;
}

static void pop(struct etm4_follow *f)
{
	f->head = (f->head + 1) % STACK_MAX;
	f->count--;
}

static int process_atom(struct etm4_follow *f, bool taken, uint32_t index)
{
	struct walk w;
	enum walk_end end;
	int ret;

	if (f->isa != cst_isa_a64)
		return dec_follow_decline(&f->b, "code that is not A64");
	end = walk(f, false, 0, &w);
	if (end == walk_waypoint) {
		if (taken && f->last.cls == cst_insn_branch)
			f->addr = f->last.target;
		else if (taken && f->last.cls == cst_insn_branch_indirect)
			f->need_addr = true;
		return put_range(f, index, w.start, w.end, w.num, taken);
	}
	f->need_addr = true;
	if (w.start != w.end && (ret = put_range(f, index, w.start, w.end, w.num, true)))
		return ret;
	return put_nacc(f, index);
}

static int process_exception(struct etm4_follow *f)
{
	/* the exception, then its context if one came, then its address */
	struct pending ex = *oldest(f), ctxt = {.kind = pk_atom}, addr;
	struct cst_elem e = {.type = cst_elem_exception};
	uint64_t ret_addr;
	int ret;

	pop(f);
	if (oldest(f) && oldest(f)->kind == pk_ctxt) {
		ctxt = *oldest(f);
		pop(f);
	}
	if (!oldest(f) || oldest(f)->kind != pk_addr)
		return dec_follow_decline(&f->b, "an exception without its address");
	addr = *oldest(f);
	pop(f);
	ret_addr = addr.u.addr.val;
	if (ex.u.excep.prev_same) {
		/* the return address is where the branch before went too: no range */
		bool b64 = ctxt.kind == pk_ctxt ? ctxt.u.ctxt.c.SF : f->isa == cst_isa_a64;

		f->addr = ret_addr;
		f->isa = addr.u.addr.is ? cst_isa_t32 : b64 ? cst_isa_a64 : cst_isa_a32;
		f->need_addr = false;
	}
	if (ctxt.kind == pk_ctxt &&
	    (ret = put_context(f, ex.index, &ctxt.u.ctxt.c, ctxt.u.ctxt.is)))
		return ret;
	if (f->addr != ret_addr) {
		struct walk w;
		enum walk_end end;

		if (f->isa != cst_isa_a64)
			return dec_follow_decline(&f->b, "code that is not A64");
		end = walk(f, true, ret_addr, &w);
		if (end != walk_waypoint)
			f->need_addr = true;
		if ((end == walk_waypoint || w.start != w.end) &&
		    (ret = put_range(f, ex.index, w.start, w.end, w.num, true)))
			return ret;
		if (end == walk_nacc && (ret = put_nacc(f, ex.index)))
			return ret;
	}
	e.exception_number = ex.u.excep.number;
	e.exception_ret_addr_valid = true;
	e.exception_ret_addr = ret_addr;
	return dec_follow_put(&f->b, ex.index, &e);
}

/* Commit @n P0 elements, oldest first, with what comes before them. */
static int commit(struct etm4_follow *f, uint32_t n)
{
	uint32_t asked = n;
	int ret = 0;

	while (n && !ret) {
		struct pending *p = oldest(f);

		if (!p)
			return dec_follow_decline(&f->b, "more elements committed than pending");
		switch (p->kind) {
		case pk_trace_on: {
			struct cst_elem e = {.type = cst_elem_trace_on,
					     .gap = f->prev_overflow ? cst_gap_overflow
								     : cst_gap_filter};

			f->prev_overflow = false;
			ret = dec_follow_put(&f->b, p->index, &e);
			pop(f);
			break;
		}
		case pk_addr:
			f->addr = p->u.addr.val;
			f->isa = isa_of(f->is_64bit, p->u.addr.is);
			f->need_addr = false;
			pop(f);
			break;
		case pk_ctxt:
			if (p->u.ctxt.c.updated)
				ret = put_context(f, p->index, &p->u.ctxt.c, p->u.ctxt.is);
			pop(f);
			break;
		case pk_ts: {
			struct cst_elem e = {.type = cst_elem_timestamp, .timestamp = p->u.ts};

			ret = dec_follow_put(&f->b, p->index, &e);
			pop(f);
			break;
		}
		case pk_event:
			ret = dec_follow_put_type(&f->b, p->index, cst_elem_event);
			pop(f);
			break;
		case pk_excep_ret: /* no P0 element on an A-profile core */
			ret = dec_follow_put_type(&f->b, p->index, cst_elem_exception_ret);
			pop(f);
			break;
		case pk_atom:
			while (p->u.atom.num && n && !ret) {
				bool taken = p->u.atom.bits & 1;

				p->u.atom.bits >>= 1;
				p->u.atom.num--;
				if (!f->need_ctxt && !f->need_addr)
					ret = process_atom(f, taken, p->index);
				n--;
			}
			if (!p->u.atom.num)
				pop(f);
			break;
		case pk_excep:
			ret = process_exception(f);
			n--;
			break;
		}
	}
	f->spec_depth -= asked - n;
	return ret;
}

/* A timestamp or event left pending when the rest is dropped goes out. */
static int put_kept(struct etm4_follow *f, const struct pending *p)
{
	if (p->kind == pk_ts) {
		struct cst_elem e = {.type = cst_elem_timestamp, .timestamp = p->u.ts};

		return dec_follow_put(&f->b, p->index, &e);
	}
	return p->kind == pk_event ? dec_follow_put_type(&f->b, p->index, cst_elem_event) : 0;
}

/* At the end of the trace: timestamps and events still pending go out, the rest
 * is dropped, then the end of trace. */
static int end_of_trace(struct etm4_follow *f)
{
	int ret = 0;

	while (f->count && !ret) {
		struct pending *p = oldest(f);

		if (p->kind == pk_atom || p->kind == pk_trace_on || p->kind == pk_excep ||
		    p->kind == pk_excep_ret) {
			f->count = 0;
			break;
		}
		ret = put_kept(f, p);
		pop(f);
	}
	return ret ? ret : dec_follow_put_type(&f->b, f->b.index, cst_elem_eot);
}

/* Overflow or discard: what is pending but timestamps and events is dropped, and
 * the decoder looks for sync again, saying why (the packet is then taken as the
 * first of an unsynced decoder's). */
static int discard(struct etm4_follow *f, enum cst_gap_reason why)
{
	int ret = 0;

	while (f->count && !ret) {
		ret = put_kept(f, oldest(f));
		pop(f);
	}
	f->spec_depth = 0;
	f->state = st_no_sync;
	f->unsync = why;
	return ret;
}

/* --- packets */

static struct pending *push(struct etm4_follow *f, enum pending_kind kind)
{
	struct pending *p;

	if (f->count == STACK_MAX)
		return NULL;
	p = &f->stack[(f->head + f->count++) % STACK_MAX];
	p->kind = kind;
	p->index = f->b.index;
	return p;
}

static int decode_packet(struct etm4_follow *f, const ocsd_etmv4_i_pkt *pkt)
{
	struct pending *p = NULL;
	bool is_addr = false, none = false;

	switch (pkt->type) {
	case ETM4_PKT_I_ASYNC:
	case ETM4_PKT_I_IGNORE:
	case ETM4_PKT_I_TRACE_INFO: /* after the first: nothing to do */
	case ETM4_PKT_I_FUNC_RET:   /* ARMv8-M only */
		none = true;
		break;
	case ETM4_PKT_I_EVENT:
		p = push(f, pk_event);
		break;
	case ETM4_PKT_I_OVERFLOW:
		f->prev_overflow = true;
		return discard(f, cst_gap_overflow);
	case ETM4_PKT_I_DISCARD:
		return discard(f, cst_gap_discard);
	case ETM4_PKT_I_TRACE_ON:
		p = push(f, pk_trace_on);
		break;
	case ETM4_PKT_I_ATOM_F1:
	case ETM4_PKT_I_ATOM_F2:
	case ETM4_PKT_I_ATOM_F3:
	case ETM4_PKT_I_ATOM_F4:
	case ETM4_PKT_I_ATOM_F5:
	case ETM4_PKT_I_ATOM_F6:
		if ((p = push(f, pk_atom))) {
			p->u.atom.bits = pkt->atom.En_bits;
			p->u.atom.num = pkt->atom.num;
			f->spec_depth += pkt->atom.num;
		}
		break;
	case ETM4_PKT_I_CTXT:
		if ((p = push(f, pk_ctxt))) {
			p->u.ctxt.c = pkt->context;
			p->u.ctxt.is = f->last_is;
		}
		break;
	case ETM4_PKT_I_ADDR_CTXT_L_32IS0:
	case ETM4_PKT_I_ADDR_CTXT_L_32IS1:
	case ETM4_PKT_I_ADDR_CTXT_L_64IS0:
	case ETM4_PKT_I_ADDR_CTXT_L_64IS1:
		f->last_is = pkt->v_addr_ISA;
		if (!(p = push(f, pk_ctxt)))
			break;
		p->u.ctxt.c = pkt->context;
		p->u.ctxt.is = f->last_is;
		__attribute__((fallthrough)); /* and the address */
	case ETM4_PKT_I_ADDR_MATCH:
	case ETM4_PKT_I_ADDR_L_32IS0:
	case ETM4_PKT_I_ADDR_L_32IS1:
	case ETM4_PKT_I_ADDR_L_64IS0:
	case ETM4_PKT_I_ADDR_L_64IS1:
	case ETM4_PKT_I_ADDR_S_IS0:
	case ETM4_PKT_I_ADDR_S_IS1:
		f->last_is = pkt->v_addr_ISA;
		if ((p = push(f, pk_addr))) {
			p->u.addr.val = pkt->v_addr.val;
			p->u.addr.is = pkt->v_addr_ISA;
			is_addr = true;
		}
		break;
	case ETM4_PKT_I_EXCEPT:
		if ((p = push(f, pk_excep))) {
			p->u.excep.number = (uint16_t)pkt->exception_info.exceptionType;
			p->u.excep.prev_same = pkt->exception_info.addr_interp == 0x2;
			f->pending_addr = true; /* committed once its address has come */
		}
		break;
	case ETM4_PKT_I_EXCEPT_RTN:
		p = push(f, pk_excep_ret);
		break;
	case ETM4_PKT_I_TIMESTAMP:
		if ((p = push(f, pk_ts)))
			p->u.ts = pkt->ts.timestamp;
		break;
	default: {
		char why[64];

		snprintf(why, sizeof(why), "a packet of type 0x%x", (unsigned)pkt->type);
		return dec_follow_decline(&f->b, why);
	}
	}
	if (!none && !p)
		return dec_follow_decline(&f->b, "too many elements pending");
	if (is_addr && f->pending_addr) {
		f->spec_depth++;
		f->pending_addr = false;
	}
	/* no speculation: every P0 element is committed as it comes */
	return f->spec_depth ? commit(f, f->spec_depth) : 0;
}

static int process(struct etm4_follow *f, const ocsd_etmv4_i_pkt *pkt)
{
	int ret;

	switch (f->state) {
	case st_no_sync:
		f->state = st_wait_sync;
		if ((ret = dec_follow_put_no_sync(&f->b, f->unsync)))
			return ret;
		__attribute__((fallthrough)); /* this packet may be the sync */
	case st_wait_sync:
		if (pkt->type == ETM4_PKT_I_ASYNC)
			f->state = st_wait_tinfo;
		return 0;
	case st_wait_tinfo:
		f->need_addr = f->need_ctxt = true;
		if (pkt->type == ETM4_PKT_I_TRACE_INFO) {
			f->spec_depth = pkt->curr_spec_depth;
			f->state = st_decode;
		}
		return 0;
	case st_decode:
		ret = decode_packet(f, pkt);
		/* after an overflow, the same packet starts the search for sync */
		return !ret && f->state == st_no_sync ? process(f, pkt) : ret;
	}
	return 0;
}

static int data(struct follow_base *b, const void *packet)
{
	return process((struct etm4_follow *)b, packet);
}

static int eot(struct follow_base *b)
{
	return end_of_trace((struct etm4_follow *)b);
}

static int reset_op(struct follow_base *b)
{
	struct etm4_follow *f = (struct etm4_follow *)b;

	reset(f);
	f->unsync = cst_gap_reset;
	return 0;
}

/* After a packet it does not cover, in recovering: pending elements whose
 * packets the trace cannot be trusted for are dropped, as a reset drops them. */
static int resync(struct follow_base *b)
{
	struct etm4_follow *f = (struct etm4_follow *)b;

	reset(f);
	f->unsync = cst_gap_resync;
	return 0;
}

const struct dec_follower dec_etm4_follower = {
	.name = "ETMv4", .covers = covers, .alloc = alloc, .free = free_follower,
	.data = data, .eot = eot, .reset = reset_op, .resync = resync};
