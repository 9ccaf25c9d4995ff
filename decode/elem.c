/* Decoded elements: conversion from OpenCSD's generic element, names, and the three
 * printed forms (OpenCSD's own text, a readable line, JSON). */
#include "trace_internal.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <opencsd/c_api/opencsd_c_api.h>

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

/* Copied rather than memset: GCC zeroes a 176-byte struct with rep stos, whose
 * start-up cost made it half of this function's time (once per element). */
static const struct cst_elem zero_elem;

void dec_elem_from_ocsd(struct cst_elem *e, const struct _ocsd_generic_trace_elem *o)
{
	*e = zero_elem;
	e->ocsd = o;
	e->type = type_of(o->elem_type);
	e->isa = isa_of(o->isa);
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

const char *cst_elem_type_name(enum cst_elem_type type)
{
	static const char *const names[cst_elem_max] = {
		[cst_elem_unknown] = "unknown",
		[cst_elem_no_sync] = "no_sync",
		[cst_elem_trace_on] = "trace_on",
		[cst_elem_eot] = "end_of_trace",
		[cst_elem_pe_context] = "pe_context",
		[cst_elem_instr_range] = "instr_range",
		[cst_elem_i_range_nopath] = "instr_range_nopath",
		[cst_elem_addr_nacc] = "addr_nacc",
		[cst_elem_addr_unknown] = "addr_unknown",
		[cst_elem_exception] = "exception",
		[cst_elem_exception_ret] = "exception_return",
		[cst_elem_timestamp] = "timestamp",
		[cst_elem_cycle_count] = "cycle_count",
		[cst_elem_event] = "event",
		[cst_elem_swtrace] = "swtrace",
		[cst_elem_sync_marker] = "sync_marker",
		[cst_elem_memtrans] = "memtrans",
		[cst_elem_instrumentation] = "instrumentation",
		[cst_elem_custom] = "custom",
	};

	return (unsigned)type < cst_elem_max && names[type] ? names[type] : "unknown";
}

const char *cst_isa_name(enum cst_isa isa)
{
	static const char *const names[] = {"unknown", "A32", "T32", "A64", "TEE", "Jazelle",
					    "custom"};

	return (unsigned)isa < sizeof(names) / sizeof(names[0]) ? names[isa] : "unknown";
}

const char *cst_gap_reason_name(enum cst_gap_reason gap)
{
	static const char *const names[] = {"none",     "init",    "resync", "overflow", "filter",
					    "discard",  "no-memory", "reset", "debug"};

	return (unsigned)gap < sizeof(names) / sizeof(names[0]) ? names[gap] : "unknown";
}

const char *cst_insn_class_name(enum cst_insn_class c)
{
	static const char *const names[] = {"other", "branch", "indirect", "isb",
					    "dsb/dmb", "wfi/wfe", "tstart"};

	return (unsigned)c < sizeof(names) / sizeof(names[0]) ? names[c] : "other";
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

static const char *security_name(enum cst_security s)
{
	static const char *const names[] = {"S", "NS", "Root", "Realm"};

	return (unsigned)s < 4 ? names[s] : "?";
}

static const char *subclass_suffix(enum cst_insn_subclass s)
{
	switch (s) {
	case cst_insn_sub_link: return " call";
	case cst_insn_sub_ret: return " return";
	case cst_insn_sub_eret: return " eret";
	default: return "";
	}
}

/* A line being built: appends clip at the buffer's end and keep the length, so
 * that no append has to measure what is already there. */
struct text_line {
	char *buf;
	size_t size, len;
};

static void tl_printf(struct text_line *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void tl_printf(struct text_line *l, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (l->len + 1 >= l->size)
		return;
	va_start(ap, fmt);
	n = vsnprintf(l->buf + l->len, l->size - l->len, fmt, ap);
	va_end(ap);
	if (n > 0)
		l->len = l->len + (size_t)n < l->size ? l->len + (size_t)n : l->size - 1;
}

int cst_elem_format_text(const struct cst_elem *e, char *buf, size_t size)
{
	struct text_line l = {buf, size, 0};

	if (!e || !buf || !size)
		return -cste_invalid;
	buf[0] = '\0';
	tl_printf(&l, "%10" PRIu64 "  %02x  ", e->offset, e->trace_id);

	switch (e->type) {
	case cst_elem_instr_range:
	case cst_elem_i_range_nopath:
		tl_printf(&l, "range  0x%016" PRIx64 "-0x%016" PRIx64 " %5u insn %s  last: %s%s%s%s",
			      e->start, e->end, e->num_insns, cst_isa_name(e->isa),
			      cst_insn_class_name(e->last_class), subclass_suffix(e->last_subclass),
			      e->last_class == cst_insn_other ? ""
			      : e->last_executed	      ? " taken"
							      : " not-taken",
			      e->type == cst_elem_i_range_nopath ? " (path unknown)" : "");
		break;
	case cst_elem_pe_context:
		tl_printf(&l, "context  EL%u%s %s %s", e->ctx.el,
			      e->ctx.el_valid ? "" : "?", security_name(e->ctx.security),
			      e->ctx.bits64 ? "AArch64" : "AArch32");
		if (e->ctx.ctxid_valid)
			tl_printf(&l, " ctxid=0x%x",
				      e->ctx.context_id);
		if (e->ctx.vmid_valid)
			tl_printf(&l, " vmid=0x%x", e->ctx.vmid);
		break;
	case cst_elem_exception:
		tl_printf(&l, "exception  #0x%x", e->exception_number);
		if (e->exception_ret_addr_valid)
			tl_printf(&l, " return=0x%" PRIx64,
				      e->exception_ret_addr);
		break;
	case cst_elem_exception_ret:
		tl_printf(&l, "exception-return");
		break;
	case cst_elem_timestamp:
		tl_printf(&l, "timestamp  %" PRIu64, e->timestamp);
		break;
	case cst_elem_cycle_count:
		tl_printf(&l, "cycles  %u", e->cycle_count);
		break;
	case cst_elem_no_sync:
		tl_printf(&l, "GAP no-sync (%s)", cst_gap_reason_name(e->gap));
		break;
	case cst_elem_trace_on:
		tl_printf(&l, "trace-on (%s)", cst_gap_reason_name(e->gap));
		break;
	case cst_elem_addr_nacc:
		tl_printf(&l, "GAP no memory image at 0x%016" PRIx64, e->start);
		break;
	case cst_elem_addr_unknown:
		tl_printf(&l, "GAP address unknown");
		break;
	case cst_elem_eot:
		tl_printf(&l, "end-of-trace");
		break;
	case cst_elem_swtrace:
		if (e->sw_id_valid)
			tl_printf(&l, "swtrace  master=0x%x channel=0x%x", e->sw_master,
				  e->sw_channel);
		else
			tl_printf(&l, "swtrace  master=? channel=?");
		tl_printf(&l, " %u bytes 0x%" PRIx64, e->sw_payload_size, e->sw_payload);
		break;
	default:
		tl_printf(&l, "%s", cst_elem_type_name(e->type));
		break;
	}
	if (e->has_cycle_count && e->type != cst_elem_cycle_count)
		tl_printf(&l, "  cc=%u", e->cycle_count);
	/* thread attribution last, so that the columns before stay put */
	if (e->pid >= 0 || e->tid >= 0)
		tl_printf(&l, "  [cpu %d pid %d tid %d]",
			      e->cpu, e->pid, e->tid);
	return (int)l.len;
}


/* JSON by hand: jansson's integers are signed, so addresses above 2^63 (kernel
 * ones) came out negative. Every value is a number, a boolean or a name from
 * cstrace's own tables, none of which needs escaping; keys in the order the
 * jansson version wrote them. */
static void jw_u64(struct text_line *l, const char *key, uint64_t v)
{
	tl_printf(l, ",\"%s\":%" PRIu64, key, v);
}

static void jw_str(struct text_line *l, const char *key, const char *v)
{
	tl_printf(l, ",\"%s\":\"%s\"", key, v);
}

static void jw_bool(struct text_line *l, const char *key, bool v)
{
	tl_printf(l, ",\"%s\":%s", key, v ? "true" : "false");
}

int cst_elem_format_json(const struct cst_elem *e, char *buf, size_t size)
{
	struct text_line l = {buf, size, 0};

	if (!e || !buf || !size)
		return -cste_invalid;
	buf[0] = '\0';
	tl_printf(&l, "{\"type\":\"%s\"", cst_elem_type_name(e->type));
	jw_u64(&l, "offset", e->offset);
	jw_u64(&l, "trace_id", e->trace_id);
	if (e->cpu >= 0)
		jw_u64(&l, "cpu", (uint64_t)e->cpu);
	if (e->pid >= 0)
		jw_u64(&l, "pid", (uint64_t)e->pid);
	if (e->tid >= 0)
		jw_u64(&l, "tid", (uint64_t)e->tid);
	if (e->fragment)
		jw_u64(&l, "fragment", e->fragment);
	if (e->perf_unseen)
		jw_bool(&l, "perf_unseen", true);
	switch (e->type) {
	case cst_elem_instr_range:
	case cst_elem_i_range_nopath:
		jw_u64(&l, "start", e->start);
		jw_u64(&l, "end", e->end);
		jw_u64(&l, "insns", e->num_insns);
		jw_str(&l, "isa", cst_isa_name(e->isa));
		jw_str(&l, "last", cst_insn_class_name(e->last_class));
		if (e->last_subclass == cst_insn_sub_link)
			jw_bool(&l, "call", true);
		if (e->last_subclass == cst_insn_sub_ret)
			jw_bool(&l, "return", true);
		jw_bool(&l, "executed", e->last_executed);
		jw_u64(&l, "last_size", e->last_size);
		break;
	case cst_elem_pe_context:
		jw_u64(&l, "el", e->ctx.el);
		jw_str(&l, "security", security_name(e->ctx.security));
		jw_bool(&l, "aarch64", e->ctx.bits64);
		if (e->ctx.ctxid_valid)
			jw_u64(&l, "context_id", e->ctx.context_id);
		if (e->ctx.vmid_valid)
			jw_u64(&l, "vmid", e->ctx.vmid);
		break;
	case cst_elem_exception:
		jw_u64(&l, "number", e->exception_number);
		if (e->exception_ret_addr_valid)
			jw_u64(&l, "return_address", e->exception_ret_addr);
		break;
	case cst_elem_timestamp:
		jw_u64(&l, "timestamp", e->timestamp);
		break;
	case cst_elem_addr_nacc:
		jw_u64(&l, "address", e->start);
		break;
	case cst_elem_swtrace:
		if (e->sw_id_valid) { /* unknown until the stream names them */
			jw_u64(&l, "master", e->sw_master);
			jw_u64(&l, "channel", e->sw_channel);
		}
		jw_u64(&l, "size", e->sw_payload_size);
		jw_u64(&l, "payload", e->sw_payload);
		break;
	default:
		break;
	}
	if (e->gap != cst_gap_none)
		jw_str(&l, "gap", cst_gap_reason_name(e->gap));
	if (e->has_cycle_count)
		jw_u64(&l, "cycles", e->cycle_count);
	tl_printf(&l, "}");
	/* the one '}' is the last character only when nothing was clipped */
	if (!l.len || buf[l.len - 1] != '}')
		return -cste_nomem;
	return (int)l.len;
}

const char *cst_id_set_format(const uint64_t ids[2], char *out, size_t size)
{
	size_t n = 0;

	if (!size)
		return out;
	out[0] = '\0';
	for (unsigned id = 0; id < 128 && n < size; id++)
		if ((ids[id / 64] >> (id % 64)) & 1)
			n += (size_t)snprintf(out + n, size - n, "%s0x%x", n ? "," : "", id);
	return out;
}

bool cst_elem_same_context(const struct cst_elem *a, const struct cst_elem *b)
{
	return a->trace_id == b->trace_id && a->source == b->source && a->pid == b->pid &&
	       a->tid == b->tid && a->cpu == b->cpu && a->fragment == b->fragment &&
	       a->ctx.context_id == b->ctx.context_id && a->ctx.el == b->ctx.el &&
	       a->ctx.el_valid == b->ctx.el_valid && a->ctx.security == b->ctx.security &&
	       a->ctx.bits64 == b->ctx.bits64 && a->ctx.ctxid_valid == b->ctx.ctxid_valid &&
	       a->ctx.vmid_valid == b->ctx.vmid_valid && a->ctx.vmid == b->ctx.vmid &&
	       a->exception_number == b->exception_number &&
	       a->exception_ret_addr == b->exception_ret_addr &&
	       a->exception_ret_addr_valid == b->exception_ret_addr_valid && a->gap == b->gap &&
	       a->sw_id_valid == b->sw_id_valid && a->sw_master == b->sw_master &&
	       a->sw_channel == b->sw_channel && a->sw_payload_size == b->sw_payload_size &&
	       a->sw_payload == b->sw_payload;
}

bool cst_elem_can_continue(const struct cst_elem *a)
{
	return a->type == cst_elem_instr_range && a->last_class == cst_insn_other &&
	       a->last_executed && !a->has_cycle_count;
}

bool cst_elem_continues(const struct cst_elem *a, const struct cst_elem *b)
{
	return cst_elem_can_continue(a) && b->type == cst_elem_instr_range &&
	       a->end == b->start && a->isa == b->isa && !b->has_cycle_count &&
	       a->timestamp == b->timestamp && a->perf_unseen == b->perf_unseen &&
	       a->num_insns <= UINT32_MAX - b->num_insns && cst_elem_same_context(a, b);
}
