/* Decoded elements: names, the two printed forms of cstrace's own (a readable
 * line, JSON), and what two elements have in common. OpenCSD's own text is
 * engine/ocsd_elem.c's. */
#include "decode_int.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

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

/* The appends of the lines every element has, by hand: vsnprintf took three
 * quarters of `decode`'s time. Each clips as tl_printf does. */
static void tl_put(struct text_line *l, const char *s, size_t n)
{
	size_t room;

	if (l->len + 1 >= l->size)
		return;
	room = l->size - 1 - l->len;
	if (n > room)
		n = room;
	memcpy(l->buf + l->len, s, n);
	l->len += n;
	l->buf[l->len] = '\0';
}

static void tl_str(struct text_line *l, const char *s)
{
	tl_put(l, s, strlen(s));
}

/* @v in @base (10 or 16, lower case), right-aligned in @width (at most 20)
 * with @fill before: printf's %*u, %0*x. */
static void tl_num(struct text_line *l, uint64_t v, unsigned base, unsigned width, char fill)
{
	static const char digit[] = "0123456789abcdef";
	char d[24], *p = d + sizeof(d);

	/* constant divisors: a division by a variable base was a quarter of
	 * decode's time */
	if (base == 16) {
		do
			*--p = digit[v & 15];
		while ((v >>= 4));
	} else {
		do
			*--p = (char)('0' + v % 10);
		while ((v /= 10));
	}
	while ((size_t)(d + sizeof(d) - p) < width)
		*--p = fill;
	tl_put(l, p, (size_t)(d + sizeof(d) - p));
}

/* printf's %d. */
static void tl_int(struct text_line *l, int v)
{
	if (v < 0)
		tl_put(l, "-", 1);
	tl_num(l, v < 0 ? (uint64_t)-(int64_t)v : (uint64_t)v, 10, 0, ' ');
}

int cst_elem_format_text(const struct cst_elem *e, char *buf, size_t size)
{
	struct text_line l = {buf, size, 0};

	if (!e || !buf || !size)
		return -cste_invalid;
	buf[0] = '\0';
	tl_num(&l, e->offset, 10, 10, ' ');
	tl_put(&l, "  ", 2);
	tl_num(&l, e->trace_id, 16, 2, '0');
	tl_put(&l, "  ", 2);

	switch (e->type) {
	case cst_elem_instr_range:
	case cst_elem_i_range_nopath:
		tl_str(&l, "range  0x");
		tl_num(&l, e->start, 16, 16, '0');
		tl_str(&l, "-0x");
		tl_num(&l, e->end, 16, 16, '0');
		tl_put(&l, " ", 1);
		tl_num(&l, e->num_insns, 10, 5, ' ');
		tl_str(&l, " insn ");
		tl_str(&l, cst_isa_name(e->isa));
		tl_str(&l, "  last: ");
		tl_str(&l, cst_insn_class_name(e->last_class));
		tl_str(&l, subclass_suffix(e->last_subclass));
		tl_str(&l, e->last_class == cst_insn_other ? ""
			   : e->last_executed		   ? " taken"
							   : " not-taken");
		if (e->type == cst_elem_i_range_nopath)
			tl_str(&l, " (path unknown)");
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
	if (e->has_cycle_count && e->type != cst_elem_cycle_count) {
		tl_str(&l, "  cc=");
		tl_num(&l, e->cycle_count, 10, 0, ' ');
	}
	/* thread attribution last, so that the columns before stay put */
	if (e->pid >= 0 || e->tid >= 0) {
		tl_str(&l, "  [cpu ");
		tl_int(&l, e->cpu);
		tl_str(&l, " pid ");
		tl_int(&l, e->pid);
		tl_str(&l, " tid ");
		tl_int(&l, e->tid);
		tl_put(&l, "]", 1);
	}
	return (int)l.len;
}


/* JSON by hand: jansson's integers are signed, so addresses above 2^63 (kernel
 * ones) came out negative. Every value is a number, a boolean or a name from
 * cstrace's own tables, none of which needs escaping; keys in the order the
 * jansson version wrote them. */
static void jw_key(struct text_line *l, const char *key)
{
	tl_put(l, ",\"", 2);
	tl_str(l, key);
	tl_put(l, "\":", 2);
}

static void jw_u64(struct text_line *l, const char *key, uint64_t v)
{
	jw_key(l, key);
	tl_num(l, v, 10, 0, ' ');
}

static void jw_str(struct text_line *l, const char *key, const char *v)
{
	jw_key(l, key);
	tl_put(l, "\"", 1);
	tl_str(l, v);
	tl_put(l, "\"", 1);
}

static void jw_bool(struct text_line *l, const char *key, bool v)
{
	jw_key(l, key);
	tl_str(l, v ? "true" : "false");
}

int cst_elem_format_json(const struct cst_elem *e, char *buf, size_t size)
{
	struct text_line l = {buf, size, 0};

	if (!e || !buf || !size)
		return -cste_invalid;
	buf[0] = '\0';
	tl_str(&l, "{\"type\":\"");
	tl_str(&l, cst_elem_type_name(e->type));
	tl_put(&l, "\"", 1);
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
	tl_put(&l, "}", 1);
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
