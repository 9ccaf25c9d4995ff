/* Traces for test_follow.c, built by hand as bytes and as the packets they hold;
 * the fake io a follower gets; and OpenCSD's decode of the same bytes. */
#include "follow_script.h"

#include <stdio.h>
#include <string.h>

/* ------------------------------------------------------------- code */

/* A64 at 0x80000: a loop's body and its branch back, a return, a call */
struct code a64_code(void)
{
	static const uint32_t insn[] = {
		0xd503201f, /* 80000: nop */
		0xd503201f, /* 80004: nop */
		0xb5ffffc0, /* 80008: cbnz x0, 80000 */
		0xd503201f, /* 8000c: nop */
		0xd65f03c0, /* 80010: ret */
		0x94000002, /* 80014: bl 8001c */
		0xd503201f, /* 80018: nop */
		0xd65f03c0, /* 8001c: ret */
	};
	struct code c = {.base = 0x80000, .len = sizeof(insn)};

	for (size_t i = 0; i < sizeof(insn) / 4; i++)
		cst_put_le32(c.bytes + 4 * i, insn[i]);
	return c;
}

/* A32 at 0x8000 calling T32 at 0x8020 (2- and 4-byte instructions) */
struct code a32_code(void)
{
	static const uint32_t arm[] = {
		0xe1a00000, /* 8000: mov r0, r0 */
		0xe2811001, /* 8004: add r1, r1, #1 */
		0x1afffffc, /* 8008: bne 8000 */
		0xfa000003, /* 800c: blx 8020 (to T32) */
		0xe12fff1e, /* 8010: bx lr */
	};
	static const uint16_t thumb[] = {
		0x3001,         /* 8020: adds r0, #1 */
		0xd1fd,         /* 8022: bne.n 8020 */
		0xf000, 0xf802, /* 8024: bl 802c */
		0x4770,         /* 8028: bx lr */
		0xbf00,         /* 802a: nop */
		0x4770,         /* 802c: bx lr */
		0xbf00,         /* 802e: nop (OpenCSD reads 4 bytes at 802c) */
	};
	struct code c = {.base = 0x8000, .len = 0x30};

	for (size_t i = 0; i < sizeof(arm) / 4; i++)
		cst_put_le32(c.bytes + 4 * i, arm[i]);
	for (size_t i = 0; i < sizeof(thumb) / 2; i++) {
		c.bytes[0x20 + 2 * i] = (uint8_t)thumb[i];
		c.bytes[0x20 + 2 * i + 1] = (uint8_t)(thumb[i] >> 8);
	}
	return c;
}

/* ------------------------------------------------------------- scripts */

static struct step *add_step(struct script *sc, enum step_kind kind, const uint8_t *b, size_t n)
{
	struct step *s = &sc->s[sc->n++];

	memset(s, 0, sizeof(*s));
	s->kind = kind;
	s->index = sc->len;
	if (n)
		memcpy(sc->raw + sc->len, b, n);
	sc->len += (uint32_t)n;
	return s;
}

void reset_step(struct script *sc)
{
	add_step(sc, step_reset, NULL, 0);
}

/* --- ETMv4 */

ocsd_etmv4_i_pkt *v4(struct script *sc, ocsd_etmv4_i_pkt_type type, const uint8_t *b, size_t n)
{
	ocsd_etmv4_i_pkt *p = &add_step(sc, step_packet, b, n)->p.v4;

	p->type = type;
	return p;
}

void v4_async(struct script *sc)
{
	v4(sc, ETM4_PKT_I_ASYNC, BYTES(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x80));
}

void v4_trace_info(struct script *sc)
{
	/* the INFO section only: no cycle counts, no conditional trace; depth 0 */
	v4(sc, ETM4_PKT_I_TRACE_INFO, BYTES(0x01, 0x01, 0x00));
}

/* 64-bit IS0 address bytes: A[8:2], A[15:9], then A[63:16] a byte at a time */
static void addr64(uint8_t *b, uint64_t a)
{
	b[0] = (uint8_t)((a >> 2) & 0x7f);
	b[1] = (uint8_t)((a >> 9) & 0x7f);
	for (int i = 2; i < 8; i++)
		b[i] = (uint8_t)(a >> (8 * i));
}

/* Address with context, AArch64 non-secure at @el; a VMID and context ID when not
 * negative (TRCIDR2: 8-bit VMID, 32-bit context ID) */
void v4_addr_ctxt(struct script *sc, uint64_t a, unsigned el, long vmid, long ctxid)
{
	uint8_t b[16] = {0x85};
	size_t n = 1;
	ocsd_etmv4_i_pkt *p;

	addr64(b + n, a);
	n += 8;
	b[n++] = (uint8_t)(el | 0x10 /* SF */ | 0x20 /* NS */ | (vmid >= 0 ? 0x40 : 0) |
			   (ctxid >= 0 ? 0x80 : 0));
	if (vmid >= 0)
		b[n++] = (uint8_t)vmid;
	if (ctxid >= 0) {
		cst_put_le32(b + n, (uint32_t)ctxid);
		n += 4;
	}
	p = v4(sc, ETM4_PKT_I_ADDR_CTXT_L_64IS0, b, n);
	p->v_addr.val = a;
	p->context.EL = el;
	p->context.SF = 1;
	p->context.NS = 1;
	p->context.updated = 1;
	p->context.updated_v = vmid >= 0;
	p->context.VMID = vmid >= 0 ? (uint32_t)vmid : 0;
	p->context.updated_c = ctxid >= 0;
	p->context.ctxtID = ctxid >= 0 ? (uint32_t)ctxid : 0;
}

/* a short address: A[8:2], the rest from the address before */
void v4_addr_short(struct script *sc, uint64_t a)
{
	v4(sc, ETM4_PKT_I_ADDR_S_IS0, BYTES(0x95, (uint8_t)((a >> 2) & 0x7f)))->v_addr.val = a;
}

void v4_addr_long(struct script *sc, uint64_t a)
{
	uint8_t b[9] = {0x9d};

	addr64(b + 1, a);
	v4(sc, ETM4_PKT_I_ADDR_L_64IS0, b, sizeof(b))->v_addr.val = a;
}

/* atoms, oldest first: "EN" (formats 1 to 3) */
void v4_atoms(struct script *sc, const char *atoms)
{
	static const ocsd_etmv4_i_pkt_type type[] = {ETM4_PKT_I_ATOM_F1, ETM4_PKT_I_ATOM_F2,
						     ETM4_PKT_I_ATOM_F3};
	static const uint8_t header[] = {0xf6, 0xd8, 0xf8};
	size_t n = strlen(atoms);
	uint32_t bits = 0;
	ocsd_etmv4_i_pkt *p;

	for (size_t i = 0; i < n; i++)
		bits |= (uint32_t)(atoms[i] == 'E') << i;
	p = v4(sc, type[n - 1], BYTES((uint8_t)(header[n - 1] | bits)));
	p->atom.En_bits = bits;
	p->atom.num = (uint8_t)n;
}

/* an exception whose (preferred return) address follows */
void v4_exception(struct script *sc, unsigned type)
{
	ocsd_etmv4_i_pkt *p = v4(sc, ETM4_PKT_I_EXCEPT, BYTES(0x06, (uint8_t)(0x01 | type << 1)));

	p->exception_info.exceptionType = type;
	p->exception_info.addr_interp = 1;
}

void v4_timestamp(struct script *sc, uint8_t ts)
{
	v4(sc, ETM4_PKT_I_TIMESTAMP, BYTES(0x02, ts))->ts.timestamp = ts;
}

/* --- ETMv3 */

ocsd_etmv3_pkt *v3(struct script *sc, ocsd_etmv3_pkt_type type, const uint8_t *b, size_t n)
{
	ocsd_etmv3_pkt *p = &add_step(sc, step_packet, b, n)->p.v3;

	p->type = type;
	p->curr_isa = sc->v3_isa;
	return p;
}

void v3_async(struct script *sc)
{
	v3(sc, ETM3_PKT_A_SYNC, BYTES(0, 0, 0, 0, 0, 0x80));
}

/* I-sync (ETMCR: 4-byte context IDs) in non-secure state: @reason 1 trace on, 2
 * after an overflow */
void v3_isync(struct script *sc, uint32_t a, bool thumb, unsigned reason, uint32_t ctxid)
{
	uint8_t b[10] = {0x08};
	ocsd_etmv3_pkt *p;

	cst_put_le32(b + 1, ctxid);
	b[5] = (uint8_t)(reason << 5 | 0x08 /* NS */);
	cst_put_le32(b + 6, a | thumb);
	sc->v3_isa = thumb ? ocsd_isa_thumb2 : ocsd_isa_arm;
	p = v3(sc, ETM3_PKT_I_SYNC, b, sizeof(b));
	p->addr.val = a;
	p->isync_info.reason = (ocsd_iSync_reason)reason;
	p->context.curr_NS = 1;
	p->context.updated = 1;
	p->context.updated_c = 1;
	p->context.ctxtID = ctxid;
}

/* format 1 P-header: @e E atoms, then one N atom if @n */
void v3_atoms(struct script *sc, unsigned e, bool n)
{
	ocsd_etmv3_pkt *p = v3(sc, ETM3_PKT_P_HDR, BYTES((uint8_t)(0x80 | n << 6 | e << 2)));

	p->atom.num = (uint8_t)(e + n);
	p->atom.En_bits = (1u << e) - 1;
}

/* a branch address in its 5-byte form, which names the instruction set; with an
 * exception (@exc >= 0) in non-secure state, which may cancel the last instruction */
void v3_branch(struct script *sc, uint32_t a, bool thumb, int exc, bool cancel)
{
	uint32_t v = a >> (thumb ? 1 : 2);
	uint8_t b[6] = {(uint8_t)(0x80 | (v & 0x3f) << 1 | 1), (uint8_t)(0x80 | ((v >> 6) & 0x7f)),
			(uint8_t)(0x80 | ((v >> 13) & 0x7f)), (uint8_t)(0x80 | ((v >> 20) & 0x7f)),
			(uint8_t)(thumb ? 0x10 | ((v >> 27) & 0xf) : 0x08 | ((v >> 27) & 0x7))};
	ocsd_etmv3_pkt *p;

	if (exc >= 0) {
		b[4] |= 0x40;
		b[5] = (uint8_t)(0x01 | (exc & 0xf) << 1 | (cancel ? 0x20 : 0));
	}
	sc->v3_isa = thumb ? ocsd_isa_thumb2 : ocsd_isa_arm;
	p = v3(sc, ETM3_PKT_BRANCH_ADDRESS, b, exc >= 0 ? 6 : 5);
	p->addr.val = a;
	if (exc >= 0) {
		p->exception.bits.present = 1;
		p->exception.bits.cancel = cancel;
		p->exception.number = (uint16_t)exc;
		p->context.updated = 1;
		p->context.curr_NS = 1;
	}
}

void v3_context_id(struct script *sc, uint32_t id)
{
	uint8_t b[5] = {0x6e};

	cst_put_le32(b + 1, id);
	v3(sc, ETM3_PKT_CONTEXT_ID, b, sizeof(b))->context.ctxtID = id;
}

void v3_timestamp(struct script *sc, uint8_t ts)
{
	v3(sc, ETM3_PKT_TIMESTAMP, BYTES(0x42, ts))->timestamp = ts;
}

/* ------------------------------------------------------------- elements */

static void keep(struct elems *l, uint32_t index, const struct cst_elem *e)
{
	struct cst_elem *k;

	if (l->n == MAX_ELEMS)
		return;
	k = &l->e[l->n];
	*k = *e;
	k->ocsd = NULL;
	if (k->type == cst_elem_pe_context)
		l->ctx = k->ctx;
	else
		k->ctx = l->ctx;
	l->index[l->n++] = index;
}

static uint32_t io_read(void *ctx, uint8_t trace_id, uint64_t address, uint32_t space,
		       uint32_t len, uint8_t *buf)
{
	struct elems *l = ctx;
	const struct code *c = l->other && l->ctx.ctxid_valid &&
					       l->ctx.context_id == l->other_ctxid
				       ? l->other
				       : l->code;

	(void)trace_id;
	(void)space;
	l->reads++;
	if (address < c->base || address >= c->base + c->len)
		return 0;
	if (len > c->base + c->len - address)
		len = (uint32_t)(c->base + c->len - address);
	memcpy(buf, c->bytes + (address - c->base), len);
	return len;
}

static int io_elem(void *ctx, uint32_t index, uint8_t trace_id, struct cst_elem *e)
{
	(void)trace_id;
	keep(ctx, index, e);
	return 0;
}

static void io_decline(void *ctx, uint32_t index, uint8_t trace_id, const char *why)
{
	struct elems *l = ctx;

	(void)trace_id;
	l->declines++;
	l->decline_index = index;
	snprintf(l->why, sizeof(l->why), "%s", why);
}

static void io_resync(void *ctx, uint32_t index, uint8_t trace_id, const char *why)
{
	struct elems *l = ctx;

	(void)trace_id;
	l->resyncs++;
	l->resync_index = index;
	snprintf(l->why, sizeof(l->why), "%s", why);
}

struct follow_io fake_io(struct elems *l, const struct code *code)
{
	memset(l, 0, sizeof(*l));
	l->code = code;
	return (struct follow_io){.read = io_read, .elem = io_elem, .decline = io_decline,
				  .resync = io_resync, .ctx = l};
}

void print_elem(const char *who, int i, uint32_t index, const struct cst_elem *e)
{
	char s[256];

	if (cst_elem_format_json(e, s, sizeof(s)) < 0)
		snprintf(s, sizeof(s), "(type %d)", (int)e->type);
	/* the JSON leaves out what same_elem_all compares besides */
	fprintf(stderr, "  %s %2d @%3u: %s isa %d ret 0x%llx\n", who, i, index, s, (int)e->isa,
		(unsigned long long)e->exception_ret_addr);
}

bool same_elem(const struct cst_elem *a, const struct cst_elem *b)
{
	const struct cst_pe_context *x = &a->ctx, *y = &b->ctx;

	return a->type == b->type && a->start == b->start && a->end == b->end &&
	       a->num_insns == b->num_insns &&
	       (a->type != cst_elem_instr_range || a->isa == b->isa) &&
	       a->last_class == b->last_class && a->last_subclass == b->last_subclass &&
	       a->last_size == b->last_size && a->last_executed == b->last_executed &&
	       a->joined == b->joined && x->context_id == y->context_id && x->el == y->el &&
	       x->el_valid == y->el_valid && x->security == y->security && x->bits64 == y->bits64 &&
	       x->ctxid_valid == y->ctxid_valid && x->vmid_valid == y->vmid_valid &&
	       x->vmid == y->vmid && a->exception_number == b->exception_number &&
	       a->exception_ret_addr_valid == b->exception_ret_addr_valid &&
	       (!a->exception_ret_addr_valid || a->exception_ret_addr == b->exception_ret_addr) &&
	       a->timestamp == b->timestamp && a->has_cycle_count == b->has_cycle_count &&
	       a->cycle_count == b->cycle_count && a->gap == b->gap;
}

bool same_elem_all(const struct cst_elem *a, const struct cst_elem *b)
{
	return same_elem(a, b) && a->isa == b->isa &&
	       a->exception_ret_addr == b->exception_ret_addr;
}

/* ------------------------------------------------------------- OpenCSD */

bool source_init(struct source *s, enum cst_protocol protocol, const char *spec)
{
	if (cst_source_cfg_parse(&s->src, protocol, spec, NULL) < 0 ||
	    dec_ocsd_config(&s->src, &s->ocfg, &s->name, &s->fc) < 0)
		return false;
	s->fc.trace_id = (uint8_t)cst_source_trace_id(&s->src);
	return true;
}

static ocsd_datapath_resp_t ref_elem(const void *ctx, const ocsd_trc_index_t index,
				     const uint8_t chan, const ocsd_generic_trace_elem *o)
{
	struct cst_elem e;

	(void)chan;
	dec_elem_from_ocsd(&e, o);
	keep((struct elems *)ctx, index, &e);
	return OCSD_RESP_CONT;
}

static ocsd_datapath_resp_t ref_packet(const void *ctx, const ocsd_datapath_op_t op,
				       const ocsd_trc_index_t index, const void *packet)
{
	struct parsed *p = (struct parsed *)ctx;
	struct step *s;

	if (op != OCSD_OP_DATA || p->n == MAX_STEPS)
		return OCSD_RESP_CONT;
	s = &p->s[p->n++];
	s->kind = step_packet;
	s->index = index;
	if (p->protocol == cst_proto_etmv4i)
		s->p.v4 = *(const ocsd_etmv4_i_pkt *)packet;
	else
		s->p.v3 = *(const ocsd_etmv3_pkt *)packet;
	return OCSD_RESP_CONT;
}

bool ref_run(const struct script *sc, struct source *s, const struct code *code,
	     struct elems *elems, struct parsed *parsed)
{
	dcd_tree_handle_t tree = ocsd_create_dcd_tree(OCSD_TRC_SRC_SINGLE, 0);
	unsigned char csid;
	uint32_t fed = 0;
	bool ok = tree != NULL;

	if (ok)
		ok = ocsd_dt_create_decoder(tree, s->name,
					    elems ? OCSD_CREATE_FLG_FULL_DECODER
						  : OCSD_CREATE_FLG_PACKET_PROC,
					    &s->ocfg, &csid) == OCSD_OK;
	if (ok && elems) {
		ok = ocsd_dt_set_gen_elem_outfn(tree, ref_elem, elems) == OCSD_OK &&
		     ocsd_dt_add_buffer_mem_acc(tree, code->base, OCSD_MEM_SPACE_ANY, code->bytes,
						code->len) == OCSD_OK;
	}
	if (ok && parsed)
		ok = ocsd_dt_attach_packet_callback(tree, csid, OCSD_C_API_CB_PKT_SINK,
						    (void *)ref_packet, parsed) == OCSD_OK;
	for (int i = 0; ok && i <= sc->n; i++) {
		uint32_t end = i < sc->n ? sc->s[i].index : sc->len;
		uint32_t used;

		if (i < sc->n && sc->s[i].kind != step_reset)
			continue;
		while (ok && fed < end) {
			ok = OCSD_DATA_RESP_IS_CONT(ocsd_dt_process_data(
				tree, OCSD_OP_DATA, fed, end - fed, sc->raw + fed, &used));
			fed += used;
		}
		if (ok)
			ok = OCSD_DATA_RESP_IS_CONT(ocsd_dt_process_data(
				tree, i < sc->n ? OCSD_OP_RESET : OCSD_OP_EOT, 0, 0, NULL, &used));
	}
	if (tree)
		ocsd_destroy_dcd_tree(tree);
	return ok;
}

bool same_packet(enum cst_protocol protocol, const struct step *a, const struct step *b)
{
	if (a->index != b->index)
		return false;
	if (protocol == cst_proto_etmv4i) {
		const ocsd_etmv4_i_pkt *x = &a->p.v4, *y = &b->p.v4;
		bool ctxt = x->type == ETM4_PKT_I_CTXT || x->type == ETM4_PKT_I_ADDR_CTXT_L_64IS0;
		bool addr = ctxt || x->type == ETM4_PKT_I_ADDR_S_IS0 ||
			    x->type == ETM4_PKT_I_ADDR_L_64IS0;

		return x->type == y->type && x->atom.num == y->atom.num &&
		       (x->atom.En_bits ^ y->atom.En_bits) % (1u << x->atom.num) == 0 &&
		       (!addr || (x->v_addr.val == y->v_addr.val && x->v_addr_ISA == y->v_addr_ISA)) &&
		       (!ctxt || (x->context.EL == y->context.EL && x->context.SF == y->context.SF &&
				  x->context.NS == y->context.NS &&
				  x->context.updated == y->context.updated &&
				  x->context.updated_c == y->context.updated_c &&
				  x->context.updated_v == y->context.updated_v &&
				  (!x->context.updated_c || x->context.ctxtID == y->context.ctxtID) &&
				  (!x->context.updated_v || x->context.VMID == y->context.VMID))) &&
		       (x->type != ETM4_PKT_I_EXCEPT ||
			(x->exception_info.exceptionType == y->exception_info.exceptionType &&
			 x->exception_info.addr_interp == y->exception_info.addr_interp)) &&
		       (x->type != ETM4_PKT_I_TIMESTAMP || x->ts.timestamp == y->ts.timestamp) &&
		       (x->type != ETM4_PKT_I_TRACE_INFO || x->curr_spec_depth == y->curr_spec_depth);
	} else {
		const ocsd_etmv3_pkt *x = &a->p.v3, *y = &b->p.v3;
		bool isync = x->type == ETM3_PKT_I_SYNC, branch = x->type == ETM3_PKT_BRANCH_ADDRESS;
		const etmv3_context_t *c = &x->context, *d = &y->context;

		return x->type == y->type &&
		       (!(isync || branch || x->type == ETM3_PKT_P_HDR) || x->curr_isa == y->curr_isa) &&
		       x->atom.num == y->atom.num &&
		       (x->atom.En_bits ^ y->atom.En_bits) % (1u << x->atom.num) == 0 &&
		       (!(isync || branch) || x->addr.val == y->addr.val) &&
		       (!isync || (x->isync_info.reason == y->isync_info.reason &&
				   x->isync_info.no_address == y->isync_info.no_address &&
				   x->isync_info.has_LSipAddress == y->isync_info.has_LSipAddress)) &&
		       (!branch || (x->exception.bits.present == y->exception.bits.present &&
				    x->exception.bits.cancel == y->exception.bits.cancel &&
				    x->exception.number == y->exception.number)) &&
		       (!(isync || branch) ||
			(c->updated == d->updated && c->updated_c == d->updated_c &&
			 c->updated_v == d->updated_v && (!c->updated || (c->curr_NS == d->curr_NS &&
									  c->curr_Hyp == d->curr_Hyp)))) &&
		       (!(c->updated_c || x->type == ETM3_PKT_CONTEXT_ID) || c->ctxtID == d->ctxtID) &&
		       (x->type != ETM3_PKT_TIMESTAMP || x->timestamp == y->timestamp);
	}
}

/* OpenCSD's packet processor parses @sc's bytes into @sc's packets. */