/* perf script's samples of cs_etm trace, as Linux perf 6.1 makes them
 * (tools/perf/util/cs-etm.c): each element of the stream is one of perf's
 * packets (an instruction range, a discontinuity, an exception or an exception
 * return) of its trace ID's queue; the flags of the previous packet say how
 * control left it; an instruction sample falls every N instructions, a branch
 * sample where the previous range ended in a taken branch (or an exception), where
 * trace starts again (0 => start) and where it stops (last => 0). */
#include "pscript_int.h"
#include "views_int.h"

#include <stdlib.h>
#include <string.h>

struct cst_pscript;
static void loc_in(struct cst_pscript *p, const struct cst_sym_piece *pieces, uint32_t npieces,
		   int32_t pid, uint64_t addr, struct cst_sym_loc *loc);

enum pkind { pk_empty = 0, pk_range, pk_disc };

/* perf's cs_etm_packet, as far as samples read it. */
struct ppacket {
	enum pkind kind;
	uint32_t flags;
	uint64_t start, end;
	uint8_t last_size;
	enum cst_isa isa;
	bool taken;                /* last_instr_taken_branch */
	int32_t pid;               /* the symbolizer's space of its code */
	/* where its last instruction is, found when a branch sample first needs it
	 * (most ranges fall through a branch not taken: none does), from its pieces
	 * (the symbolizer's, stable) while the spaces stand as they were when it
	 * was symbolized (@epoch) */
	bool loc_known;
	const struct cst_sym_piece *pieces;
	uint32_t npieces;
	uint32_t epoch;
	struct cst_sym_loc last_loc;
};

struct pqueue {
	struct ppacket prev;
	uint64_t period_insns;     /* instructions since the last instruction sample */
};

/* exception numbers perf knows (cs-etm.h) */
enum {
	V3_DEBUG_HALT = 1, V3_SMC = 2, V3_HYP = 3, V3_ASYNC_DATA_ABORT = 4,
	V3_JAZELLE_THUMBEE = 5, V3_PE_RESET = 8, V3_UNDEFINED_INSTR = 9, V3_SVC = 10,
	V3_PREFETCH_ABORT = 11, V3_DATA_FAULT = 12, V3_GENERIC = 13, V3_IRQ = 14, V3_FIQ = 15,
	V4_RESET = 0, V4_DEBUG_HALT = 1, V4_CALL = 2, V4_TRAP = 3, V4_SYSTEM_ERROR = 4,
	V4_INST_DEBUG = 6, V4_DATA_DEBUG = 7, V4_ALIGNMENT = 10, V4_INST_FAULT = 11,
	V4_DATA_FAULT = 12, V4_IRQ = 14, V4_FIQ = 15, V4_END = 31,
};

static const struct cst_sym_loc no_map = {.dso = "[unknown]"};

static uint32_t read_le(struct cst_pscript *p, int32_t pid, uint64_t addr, unsigned n)
{
	uint8_t b[4] = {0};

	/* perf reads zeros where the memory is unknown */
	if (cst_symbolizer_read_code(p->sym, pid, addr, b, n) < 0)
		memset(b, 0, sizeof(b));
	return n == 2 ? cst_le16(b) : cst_le32(b);
}

/* cs_etm__t32_instr_size */
static unsigned t32_size(struct cst_pscript *p, int32_t pid, uint64_t addr)
{
	return cst_t32_insn_size((uint16_t)read_le(p, pid, addr, 2));
}

/* cs_etm__is_svc_instr: the instruction ending at @end is an SVC */
static bool is_svc(struct cst_pscript *p, int32_t pid, enum cst_isa isa, uint64_t end)
{
	uint32_t i;

	switch (isa) {
	case cst_isa_t32:
		return (read_le(p, pid, end - 2, 2) & 0xff00) == 0xdf00;
	case cst_isa_a32:
		i = read_le(p, pid, end - 4, 4);
		return (i & 0x0f000000) == 0x0f000000 && (i & 0xf0000000) != 0xf0000000;
	case cst_isa_a64:
		return (read_le(p, pid, end - 4, 4) & 0xffe0001f) == 0xd4000001;
	default:
		return false;
	}
}

/* OpenCSD's is_conditional for a direct branch (trc_idec_arminst.cpp): B.cond,
 * CBZ/CBNZ, TBZ/TBNZ; an A32 condition other than AL; T32 B<c>, CBZ/CBNZ. */
static bool cond_branch(struct cst_pscript *p, int32_t pid, const struct cst_elem *e)
{
	uint64_t a = e->end - (e->last_size ? e->last_size : 4);
	uint32_t i;

	switch (e->isa) {
	case cst_isa_a64:
		i = read_le(p, pid, a, 4);
		return (i & 0x7c000000) == 0x34000000 || (i & 0xff000000) == 0x54000000;
	case cst_isa_a32:
		i = read_le(p, pid, a, 4);
		return (i & 0xe0000000) != 0xe0000000;
	case cst_isa_t32:
		i = read_le(p, pid, a, 2) << 16;
		if (e->last_size == 4)
			i |= read_le(p, pid, a + 2, 2);
		if (e->last_size == 2)
			return ((i & 0xf0000000) == 0xd0000000 && (i & 0x0e000000) != 0x0e000000) ||
			       (i & 0xf5000000) == 0xb1000000;
		return (i & 0xf800d000) == 0xf0008000 && (i & 0x03800000) != 0x03800000;
	default:
		return false;
	}
}

/* Flags are only printed: without the flags field, the ones that read code or
 * walk the trace's sources are not worked out. */
static bool flags_printed(const struct cst_pscript *p)
{
	return p->o.fields & cst_pscript_flags;
}

/* cs_etm__set_sample_flags for an instruction range */
static uint32_t range_flags(struct cst_pscript *p, int32_t pid, const struct cst_elem *e)
{
	if (!flags_printed(p))
		return 0;
	switch (e->last_class) {
	case cst_insn_branch:
		if (e->last_subclass == cst_insn_sub_link)
			return PSF_BRANCH | PSF_CALL;
		if (e->last_subclass == cst_insn_sub_none)
			return PSF_BRANCH | (cond_branch(p, pid, e) ? PSF_CONDITIONAL : 0);
		return 0;
	case cst_insn_branch_indirect:
		if (e->last_subclass == cst_insn_sub_link)
			return PSF_BRANCH | PSF_CALL;
		if (e->last_subclass == cst_insn_sub_ret || e->last_subclass == cst_insn_sub_none)
			return PSF_BRANCH | PSF_RETURN;
		return 0;
	default:
		return 0;
	}
}

static enum cst_protocol protocol_of(const struct cst_pscript *p, const struct cst_elem *e)
{
	const struct cst_source_cfg *src = cst_trace_elem_source(p->o.trace, e);

	return src ? src->protocol : cst_proto_etmv4i;
}

/* cs_etm__is_syscall, _is_async_exception, _is_sync_exception: the flags of an
 * exception packet. perf 6.1 knows only the ETMv3 and ETMv4 magics (ETE: none). */
static uint32_t exception_flags(struct cst_pscript *p, const struct cst_elem *e,
				const struct ppacket *prev)
{
	const uint32_t sys = PSF_BRANCH | PSF_CALL | PSF_SYSCALLRET;
	const uint32_t async = PSF_BRANCH | PSF_CALL | PSF_ASYNC | PSF_INTERRUPT;
	const uint32_t sync = PSF_BRANCH | PSF_CALL | PSF_INTERRUPT;
	enum cst_protocol proto;
	uint32_t n = e->exception_number;

	if (!flags_printed(p))
		return 0;
	proto = protocol_of(p, e);
	if (proto == cst_proto_etmv3 || proto == cst_proto_ptm) {
		if (n == V3_SVC)
			return sys;
		if (n == V3_DEBUG_HALT || n == V3_ASYNC_DATA_ABORT || n == V3_PE_RESET ||
		    n == V3_IRQ || n == V3_FIQ)
			return async;
		if (n == V3_SMC || n == V3_HYP || n == V3_JAZELLE_THUMBEE ||
		    n == V3_UNDEFINED_INSTR || n == V3_PREFETCH_ABORT || n == V3_DATA_FAULT ||
		    n == V3_GENERIC)
			return sync;
		return 0;
	}
	if (proto != cst_proto_etmv4i)
		return 0;
	/* the SVC check reads the code before the previous packet's end */
	bool svc = prev->kind == pk_range && is_svc(p, prev->pid, prev->isa, prev->end);

	if (n == V4_CALL && svc)
		return sys;
	if (n == V4_RESET || n == V4_DEBUG_HALT || n == V4_SYSTEM_ERROR || n == V4_INST_DEBUG ||
	    n == V4_DATA_DEBUG || n == V4_IRQ || n == V4_FIQ)
		return async;
	if (n == V4_TRAP || n == V4_ALIGNMENT || n == V4_INST_FAULT || n == V4_DATA_FAULT ||
	    n == V4_CALL || (n > V4_FIQ && n <= V4_END))
		return sync;
	return 0;
}

/* Where instruction @addr of range @se is: its piece's location, moved on, and
 * named as perf names it. */
static void loc_at(struct cst_pscript *p, const struct cst_sym_elem *se, uint64_t addr,
		   struct cst_sym_loc *loc)
{
	loc_in(p, se->pieces, se->npieces, se->pid, addr, loc);
	cst_symbolizer_perf_name(p->sym, se->pid, addr, loc);
}

/* The previous range's last instruction's location, found once. Its pieces
 * name it as the mappings stood when it ran; perf names it as they stand when
 * the sample is made, after a mapping that came between (an exec), so then it
 * is looked up. */
static const struct cst_sym_loc *last_loc(struct cst_pscript *p, struct ppacket *prev)
{
	if (!prev->loc_known) {
		uint64_t addr = prev->end - prev->last_size;
		bool stale = prev->epoch != p->sym->spaces_epoch;

		loc_in(p, stale ? NULL : prev->pieces, stale ? 0 : prev->npieces, prev->pid, addr,
		       &prev->last_loc);
		cst_symbolizer_perf_name(p->sym, prev->pid, addr, &prev->last_loc);
		prev->loc_known = true;
	}
	return &prev->last_loc;
}

static void loc_in(struct cst_pscript *p, const struct cst_sym_piece *pieces, uint32_t npieces,
		   int32_t pid, uint64_t addr, struct cst_sym_loc *loc)
{
	for (uint32_t i = 0; i < npieces; i++) {
		const struct cst_sym_piece *pc = &pieces[i];

		if (addr >= pc->start && addr < pc->end) {
			*loc = pc->loc;
			loc->func_offset += addr - pc->start;
			loc->dso_offset += addr - pc->start;
			loc->vaddr += addr - pc->start;
			if (p->o.fields & cst_pscript_srcline)
				cst_symbolizer_lookup(p->sym, pid, addr, loc);
			return;
		}
	}
	if (cst_symbolizer_lookup(p->sym, pid, addr, loc) < 0)
		*loc = no_map;
}

static void copy_insn(struct cst_pscript *p, struct psample *s, int32_t pid, enum cst_isa isa)
{
	/* only printed: -F without insn or insnlen reads no code for them */
	if (!(p->o.fields & (cst_pscript_insn | cst_pscript_insnlen)))
		return;
	s->insn_len = isa == cst_isa_t32 ? (uint8_t)t32_size(p, pid, s->ip) : 4;
	if (cst_symbolizer_read_code(p->sym, pid, s->ip, s->insn, s->insn_len) < 0)
		memset(s->insn, 0, sizeof(s->insn));
}

bool sym_psc_trace_times(const struct cst_pscript *p)
{
	return p->perf_clock || !p->file.perf_data;
}

static uint64_t sample_time(const struct cst_pscript *p, const struct cst_sym_elem *se)
{
	if (sym_psc_trace_times(p))
		return cst_sym_filter_time(p->filter, se);
	return p->file.aux_time;
}

/* cs_etm__synth_branch_sample: from the previous packet's last instruction to
 * the first of @se (0 when @se is a discontinuity). */
static void branch_sample(struct cst_pscript *p, struct pqueue *q, const struct cst_sym_elem *se)
{
	const struct cst_elem *e = se->elem;
	struct psample s = {.branch = true, .pid = e->pid, .tid = e->tid, .cpu = e->cpu,
			    .time = sample_time(p, se), .period = 1, .flags = q->prev.flags};
	struct cst_sym_loc to;

	s.ip_loc = s.addr_loc = &no_map;
	s.ip_space = s.addr_space = PSC_NO_SPACE;
	if (q->prev.kind == pk_range) {
		s.ip = q->prev.end - q->prev.last_size;
		s.ip_space = q->prev.pid;
		s.ip_text = p->lazy_locs ? sym_psc_memo(p, s.ip, s.ip_space) : NULL;
		s.ip_loc = s.ip_text ? NULL : last_loc(p, &q->prev);
		copy_insn(p, &s, q->prev.pid, q->prev.isa);
	}
	if (e->type == cst_elem_instr_range) {
		s.addr = e->start;
		s.addr_space = se->pid;
		s.addr_text = p->lazy_locs ? sym_psc_memo(p, s.addr, s.addr_space) : NULL;
		/* an ip the memo did not hold goes in first, maybe in the same slot */
		if (s.addr_text && !s.ip_text && s.ip_space != PSC_NO_SPACE &&
		    sym_addr_slot(s.ip, PSC_LOC_MEMO_BITS) == sym_addr_slot(s.addr, PSC_LOC_MEMO_BITS))
			s.addr_text = NULL;
		s.addr_loc = NULL;
		if (!s.addr_text) {
			loc_at(p, se, s.addr, &to);
			s.addr_loc = &to;
		}
	}
	sym_psc_print(p, &s);
}

/* The instruction samples that fall in range @at once its instructions are
 * counted in @q: each at the instruction the period ends on, located through
 * @se's pieces (NULL: looked up, where another thread symbolized the range). */
static void insn_samples(struct cst_pscript *p, struct pqueue *q, const struct sym_psc_range *at,
			 const struct cst_sym_elem *se)
{
	uint64_t prev_insns = q->period_insns, period = p->o.period ? p->o.period : 1;
	uint64_t offset = period - prev_insns, i = 0, addr = at->start;

	q->period_insns += at->num_insns;
	for (; q->period_insns >= period; offset += period, q->period_insns -= period) {
		struct psample s = {.pid = at->pid, .tid = at->tid, .cpu = at->cpu,
				    .time = at->time, .period = period, .flags = at->flags};
		struct cst_sym_loc loc;

		/* the (offset - 1)th instruction: T32 walks the sizes */
		if (at->isa == cst_isa_t32) {
			for (; i < offset - 1; i++)
				addr += t32_size(p, at->space, addr);
		} else {
			addr = at->start + (offset - 1) * 4;
		}
		s.ip = addr;
		s.ip_space = at->space;
		s.ip_text = p->lazy_locs ? sym_psc_memo(p, addr, at->space) : NULL;
		if (!s.ip_text) {
			loc_in(p, se ? se->pieces : NULL, se ? se->npieces : 0, at->space, addr,
			       &loc);
			cst_symbolizer_perf_name(p->sym, at->space, addr, &loc);
			s.ip_loc = &loc;
		}
		copy_insn(p, &s, at->space, at->isa);
		sym_psc_print(p, &s);
	}
}

void sym_psc_insn_samples(struct cst_pscript *p, uint8_t id, const struct sym_psc_range *at)
{
	struct pqueue *q = p->q[id & 0x7f];

	if (q && p->o.instructions)
		insn_samples(p, q, at, NULL);
}

void sym_psc_count_insns(struct cst_pscript *p, uint8_t id, uint64_t n)
{
	struct pqueue *q = p->q[id & 0x7f];

	if (q)
		q->period_insns += n;
}

uint64_t sym_psc_insns_to_sample(const struct cst_pscript *p, uint8_t id)
{
	const struct pqueue *q = p->q[id & 0x7f];
	uint64_t period = p->o.period ? p->o.period : 1;

	if (!q || !p->o.instructions)
		return UINT64_MAX;
	return q->period_insns < period ? period - q->period_insns : 0;
}

/* cs_etm__sample: the instruction samples that fall in range @se, then the
 * branch sample into it. */
static void range(struct cst_pscript *p, struct pqueue *q, const struct cst_sym_elem *se)
{
	const struct cst_elem *e = se->elem;
	uint8_t last_size = e->last_size ? e->last_size : 4;
	uint32_t flags = range_flags(p, se->pid, e);

	if (q->prev.kind == pk_disc)
		q->prev.flags |= PSF_BRANCH | PSF_TRACE_BEGIN;
	/* an exception return to just after an SVC was a system call's return */
	if (q->prev.flags == (PSF_BRANCH | PSF_RETURN | PSF_INTERRUPT) &&
	    flags_printed(p) && is_svc(p, se->pid, e->isa, e->start))
		q->prev.flags = PSF_BRANCH | PSF_RETURN | PSF_SYSCALLRET;
	if (p->o.instructions) {
		struct sym_psc_range at = {
			.start = e->start, .time = sample_time(p, se), .space = se->pid,
			.pid = e->pid, .tid = e->tid, .cpu = e->cpu, .flags = q->prev.flags,
			.num_insns = e->num_insns, .isa = e->isa};

		if (p->insn_sink)
			p->insn_sink(p->insn_sink_ctx, &at);
		else
			insn_samples(p, q, &at, se);
	}
	/* the target's name only where a branch sample shows it: most ranges are
	 * entered by falling through a branch not taken */
	if (p->o.branches &&
	    (q->prev.kind == pk_disc || (q->prev.kind == pk_range && q->prev.taken))) {
		branch_sample(p, q, se);
	}
	/* this range is the previous packet now: in place, field by field (a
	 * packet built aside, zeroed and copied whole, was a tenth of the lines) */
	q->prev.kind = pk_range;
	q->prev.flags = flags;
	q->prev.start = e->start;
	q->prev.end = e->end;
	q->prev.last_size = last_size;
	q->prev.isa = e->isa;
	q->prev.taken = cst_elem_taken_branch(e);
	q->prev.pid = se->pid;
	q->prev.loc_known = false;
	q->prev.pieces = se->pieces;
	q->prev.npieces = se->npieces;
	q->prev.epoch = p->sym->spaces_epoch;
}

/* cs_etm__flush at a discontinuity: the last range's branch to 0. */
static void discontinuity(struct cst_pscript *p, struct pqueue *q, const struct cst_sym_elem *se)
{
	const struct cst_elem *e = se->elem;

	if (q->prev.kind == pk_range) {
		q->prev.flags |= PSF_BRANCH | PSF_TRACE_END;
		if (p->o.branches)
			branch_sample(p, q, se);
	}
	q->prev = (struct ppacket){.kind = pk_disc, .pid = se->pid};
	if (p->o.errors && (e->gap == cst_gap_overflow || e->gap == cst_gap_resync ||
			    e->gap == cst_gap_discard))
		sym_psc_print_error(p, e, sample_time(p, se),
				    e->gap == cst_gap_overflow ? "Overflow packet: trace lost"
				    : e->gap == cst_gap_discard ? "Discard packet: trace lost"
								: "Bad packet: lost sync");
}

int cst_pscript_add(void *ctx, const struct cst_sym_elem *se)
{
	struct cst_pscript *p = ctx;
	const struct cst_elem *e = se->elem;
	struct pqueue *q;
	uint8_t id = e->trace_id & 0x7f;

	if (!cst_sym_filter_keep(p->filter, se))
		return 0;
	/* what perf 6.1 would not have reported (its decoder had stopped, or never
	 * flushed): perf's lines leave it out too */
	if (e->perf_unseen)
		return 0;
	switch (e->type) {
	case cst_elem_instr_range:
	case cst_elem_no_sync:
	case cst_elem_trace_on:
	case cst_elem_exception:
	case cst_elem_exception_ret:
		break;
	default:
		return 0;
	}
	q = p->q[id];
	if (!q) {
		q = p->q[id] = calloc(1, sizeof(*q));
		if (!q)
			return -cste_nomem;
	}
	switch (e->type) {
	case cst_elem_instr_range:
		range(p, q, se);
		break;
	case cst_elem_exception:
		if (q->prev.kind == pk_range) {
			/* the range before it counts as a taken branch, with its flags */
			q->prev.flags = exception_flags(p, e, &q->prev);
			q->prev.taken = true;
		}
		break;
	case cst_elem_exception_ret:
		if (q->prev.kind == pk_range) {
			q->prev.flags = PSF_BRANCH | PSF_RETURN | PSF_INTERRUPT;
			q->prev.taken = true;
		}
		break;
	default:
		discontinuity(p, q, se);
		break;
	}
	return p->failed ? -cste_io : 0;
}

/* What a view hands over: one trace ID's queue and latest timestamp. */
struct psc_state {
	uint8_t id;
	struct pqueue q;
	uint64_t last_ts;
};
_Static_assert(sizeof(struct psc_state) <= PSC_STATE, "a view's state fits PSC_STATE");

bool sym_psc_knows(const struct cst_pscript *p, uint8_t id)
{
	const struct pqueue *q = p->q[id & 0x7f];

	return q && q->prev.kind != pk_empty;
}

size_t sym_psc_state(struct cst_pscript *p, uint8_t id, void *buf, size_t size)
{
	struct psc_state st = {.id = id & 0x7f};

	if (size < sizeof(st) || !sym_psc_knows(p, id))
		return 0;
	/* the location goes over, not the pieces (another symbolizer's) */
	if (p->q[st.id]->prev.kind == pk_range)
		last_loc(p, &p->q[st.id]->prev);
	st.q = *p->q[st.id];
	st.q.prev.pieces = NULL;
	st.q.prev.npieces = 0;
	st.last_ts = sym_filter_last_ts(p->filter, st.id);
	memcpy(buf, &st, sizeof(st));
	return sizeof(st);
}

int sym_psc_adopt(struct cst_pscript *p, const void *buf, size_t len)
{
	struct psc_state st;

	if (len != sizeof(st))
		return -cste_invalid;
	memcpy(&st, buf, sizeof(st));
	if (!p->q[st.id] && !(p->q[st.id] = calloc(1, sizeof(*p->q[st.id]))))
		return -cste_nomem;
	/* the instruction count runs through the whole stream: the caller's
	 * stands, and the block's ranges add to it as its bytes go out */
	st.q.period_insns = p->q[st.id]->period_insns;
	*p->q[st.id] = st.q;
	/* none seen where the view was: the one before it stands */
	if (st.last_ts)
		sym_filter_set_last_ts(p->filter, st.id, st.last_ts);
	return 0;
}

void sym_psc_clear(struct cst_pscript *p)
{
	for (size_t i = 0; i < sizeof(p->q) / sizeof(p->q[0]); i++)
		if (p->q[i])
			memset(p->q[i], 0, sizeof(*p->q[i]));
	sym_filter_clear_ts(p->filter);
}

int cst_pscript_finish(struct cst_pscript *p)
{
	/* perf never sends the end of trace: a range waiting for its successor at
	 * the end is never sampled */
	if (!p)
		return -cste_invalid;
	return p->failed ? -cste_io : 0;
}
