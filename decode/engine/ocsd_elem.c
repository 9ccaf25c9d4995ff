/* OpenCSD's generic elements as cst_elem, and printed as OpenCSD prints them: the
 * one place that reads OpenCSD's element struct. */
#include "decoder_int.h"

#include <stdio.h>
#include <string.h>

static enum cst_elem_type type_of(ocsd_gen_trc_elem_t t)
{
	switch (t) {
	case OCSD_GEN_TRC_ELEM_NO_SYNC: return cst_elem_no_sync;
	case OCSD_GEN_TRC_ELEM_TRACE_ON: return cst_elem_trace_on;
	case OCSD_GEN_TRC_ELEM_EO_TRACE: return cst_elem_eot;
	case OCSD_GEN_TRC_ELEM_PE_CONTEXT: return cst_elem_pe_context;
	case OCSD_GEN_TRC_ELEM_INSTR_RANGE: return cst_elem_instr_range;
	case OCSD_GEN_TRC_ELEM_I_RANGE_NOPATH: return cst_elem_i_range_nopath;
	case OCSD_GEN_TRC_ELEM_ADDR_NACC: return cst_elem_addr_nacc;
	case OCSD_GEN_TRC_ELEM_ADDR_UNKNOWN: return cst_elem_addr_unknown;
	case OCSD_GEN_TRC_ELEM_EXCEPTION: return cst_elem_exception;
	case OCSD_GEN_TRC_ELEM_EXCEPTION_RET: return cst_elem_exception_ret;
	case OCSD_GEN_TRC_ELEM_TIMESTAMP: return cst_elem_timestamp;
	case OCSD_GEN_TRC_ELEM_CYCLE_COUNT: return cst_elem_cycle_count;
	case OCSD_GEN_TRC_ELEM_EVENT: return cst_elem_event;
	case OCSD_GEN_TRC_ELEM_SWTRACE: return cst_elem_swtrace;
	case OCSD_GEN_TRC_ELEM_SYNC_MARKER: return cst_elem_sync_marker;
	case OCSD_GEN_TRC_ELEM_MEMTRANS: return cst_elem_memtrans;
	case OCSD_GEN_TRC_ELEM_CUSTOM: return cst_elem_custom;
	default: return cst_elem_unknown;
	}
}

static enum cst_isa isa_of(ocsd_isa isa)
{
	switch (isa) {
	case ocsd_isa_arm: return cst_isa_a32;
	case ocsd_isa_thumb2: return cst_isa_t32;
	case ocsd_isa_aarch64: return cst_isa_a64;
	case ocsd_isa_tee: return cst_isa_tee;
	case ocsd_isa_jazelle: return cst_isa_jazelle;
	case ocsd_isa_custom: return cst_isa_custom;
	default: return cst_isa_unknown;
	}
}

static enum cst_insn_class class_of(ocsd_instr_type t)
{
	switch (t) {
	case OCSD_INSTR_BR: return cst_insn_branch;
	case OCSD_INSTR_BR_INDIRECT: return cst_insn_branch_indirect;
	case OCSD_INSTR_ISB: return cst_insn_isb;
	case OCSD_INSTR_DSB_DMB: return cst_insn_dsb_dmb;
	case OCSD_INSTR_WFI_WFE: return cst_insn_wfi_wfe;
	case OCSD_INSTR_TSTART: return cst_insn_tstart;
	default: return cst_insn_other;
	}
}

static enum cst_insn_subclass subclass_of(ocsd_instr_subtype t)
{
	switch (t) {
	case OCSD_S_INSTR_BR_LINK: return cst_insn_sub_link;
	case OCSD_S_INSTR_V8_RET: return cst_insn_sub_ret;
	case OCSD_S_INSTR_V7_IMPLIED_RET: return cst_insn_sub_ret;
	case OCSD_S_INSTR_V8_ERET: return cst_insn_sub_eret;
	case OCSD_S_INSTR_NONE: return cst_insn_sub_none;
	default: return cst_insn_sub_other;
	}
}

static enum cst_gap_reason unsync_reason(unsync_info_t u)
{
	switch (u) {
	case UNSYNC_INIT_DECODER: return cst_gap_init;
	case UNSYNC_RESET_DECODER: return cst_gap_reset;
	case UNSYNC_OVERFLOW: return cst_gap_overflow;
	case UNSYNC_DISCARD: return cst_gap_discard;
	case UNSYNC_BAD_PACKET: return cst_gap_resync;
	default: return cst_gap_resync;
	}
}

/* The PE context OpenCSD keeps on the element. */
static void elem_context(struct cst_elem *e, const ocsd_generic_trace_elem *o)
{
	e->ctx.el = (uint8_t)o->context.exception_level;
	e->ctx.el_valid = o->context.el_valid;
	e->ctx.security = (enum cst_security)o->context.security_level;
	e->ctx.bits64 = o->context.bits64;
	e->ctx.ctxid_valid = o->context.ctxt_id_valid;
	/* an ID that is not valid reads 0: OpenCSD leaves an old one in place, which
	 * would make a decoder started later differ from one that ran all along */
	e->ctx.context_id = o->context.ctxt_id_valid ? o->context.context_id : 0;
	e->ctx.vmid_valid = o->context.vmid_valid;
	e->ctx.vmid = o->context.vmid_valid ? o->context.vmid : 0;
}

/* Copied rather than memset: GCC zeroes a 176-byte struct with rep stos, whose
 * start-up cost made it half of this function's time (once per element). */
static const struct cst_elem zero_elem;

void dec_elem_from_ocsd(struct cst_elem *e, const ocsd_generic_trace_elem *o)
{
	*e = zero_elem;
	e->ocsd = o;
	e->type = type_of(o->elem_type);
	e->isa = isa_of(o->isa);
	/* only a PE_CONTEXT element holds a context (as cstrace's decoders make
	 * them): on others OpenCSD's ETMv3 decoder leaves a fresh element's fields
	 * unset (valgrind), and reading them would make runs differ */
	if (e->type == cst_elem_pe_context)
		elem_context(e, o);
	if (o->has_cc) {
		e->has_cycle_count = true;
		e->cycle_count = o->cycle_count;
	}
	if (o->has_ts)
		e->timestamp = o->timestamp;

	switch (e->type) {
	case cst_elem_instr_range:
	case cst_elem_i_range_nopath:
		e->start = o->st_addr;
		e->end = o->en_addr;
		e->num_insns = o->num_instr_range;
		e->last_class = class_of(o->last_i_type);
		e->last_subclass = subclass_of(o->last_i_subtype);
		e->last_size = (uint8_t)o->last_instr_sz;
		e->last_executed = o->last_instr_exec;
		break;
	case cst_elem_addr_nacc:
		e->start = o->st_addr;
		e->gap = cst_gap_nacc;
		break;
	case cst_elem_addr_unknown:
		e->gap = cst_gap_resync;
		break;
	case cst_elem_exception:
		e->exception_number = o->exception_number;
		e->exception_ret_addr_valid = o->excep_ret_addr;
		e->exception_ret_addr = o->en_addr;
		break;
	case cst_elem_timestamp:
		e->timestamp = o->timestamp;
		break;
	case cst_elem_cycle_count:
		e->has_cycle_count = true;
		e->cycle_count = o->cycle_count;
		break;
	case cst_elem_no_sync:
		e->gap = unsync_reason(o->unsync_eot_info);
		break;
	case cst_elem_trace_on:
		e->gap = o->trace_on_reason == TRACE_ON_OVERFLOW  ? cst_gap_overflow
			 : o->trace_on_reason == TRACE_ON_EX_DEBUG ? cst_gap_debug
								   : cst_gap_filter;
		break;
	case cst_elem_swtrace: {
		const ocsd_swt_info_t *sw = &o->sw_trace_info;
		uint32_t bytes = (uint32_t)sw->swt_payload_pkt_bitsize / 8 * sw->swt_payload_num_packets;

		/* before the stream names them, OpenCSD leaves whatever was in its
		 * packet there (a run-to-run difference): 0, and said unknown */
		e->sw_id_valid = sw->swt_id_valid;
		e->sw_master = sw->swt_id_valid ? (uint8_t)sw->swt_master_id : 0;
		e->sw_channel = sw->swt_id_valid ? sw->swt_channel_id : 0;
		e->sw_payload_size = bytes;
		if (o->ptr_extended_data && bytes) {
			const uint8_t *p = o->ptr_extended_data;

			for (uint32_t i = 0; i < bytes && i < 8; i++)
				e->sw_payload |= (uint64_t)p[i] << (8 * i);
		}
		break;
	}
	default:
		break;
	}
}

/* OpenCSD 1.3.3's printer indexes name tables with some fields unchecked; on
 * corrupt trace its decoders can leave those out of range and the printer then
 * reads wild memory. Such elements are printed here instead. */
static bool ocsd_printable(const ocsd_generic_trace_elem *o)
{
	switch (o->elem_type) {
	case OCSD_GEN_TRC_ELEM_INSTR_RANGE:
	case OCSD_GEN_TRC_ELEM_PE_CONTEXT:
		return (unsigned)o->isa <= ocsd_isa_unknown;
	case OCSD_GEN_TRC_ELEM_TRACE_ON:
		return (unsigned)o->trace_on_reason <= TRACE_ON_EX_DEBUG;
	case OCSD_GEN_TRC_ELEM_SYNC_MARKER:
		return o->sync_marker.type == ELEM_MARKER_TS;
	default:
		return (unsigned)o->elem_type <= OCSD_GEN_TRC_ELEM_CUSTOM;
	}
}

int cst_elem_format_ocsd(const struct cst_elem *e, char *buf, size_t size)
{
	const ocsd_generic_trace_elem *o;

	if (!e || !buf || !size || !e->ocsd)
		return -cste_invalid;
	o = e->ocsd;
	if (!ocsd_printable(o))
		return snprintf(buf, size, "OCSD_GEN_TRC_ELEM_%s(invalid fields from the decoder)",
				cst_elem_type_name(e->type));
	if (ocsd_gen_elem_str(e->ocsd, buf, (int)(size > INT32_MAX ? INT32_MAX : size)) != OCSD_OK)
		return -cste_decoder;
	return (int)strlen(buf);
}

bool dec_held_same(const struct dec_held *h, const struct cst_elem *b)
{
	const struct cst_elem *x = &h->e;
	char sa[512], sb[512];
	struct cst_elem ea = h->e;

	if (!cst_elem_same_context(x, b) || x->type != b->type || x->offset != b->offset ||
	    x->start != b->start || x->end != b->end || x->num_insns != b->num_insns ||
	    x->isa != b->isa || x->last_class != b->last_class ||
	    x->last_subclass != b->last_subclass || x->last_size != b->last_size ||
	    x->last_executed != b->last_executed || x->timestamp != b->timestamp ||
	    x->has_cycle_count != b->has_cycle_count || x->cycle_count != b->cycle_count ||
	    h->has_o != (b->ocsd != NULL))
		return false;
	if (!h->has_o)
		return true;
	/* OpenCSD's own print of the element covers what cst_elem leaves out */
	ea.ocsd = &h->o;
	if (cst_elem_format_ocsd(&ea, sa, sizeof(sa)) < 0)
		sa[0] = '\0';
	if (cst_elem_format_ocsd(b, sb, sizeof(sb)) < 0)
		sb[0] = '\0';
	return !strcmp(sa, sb);
}
