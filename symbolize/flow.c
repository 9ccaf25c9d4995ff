/* The control-flow model: per trace ID, the range waiting to learn where it went,
 * whether a call tree has started, and its call depth. Calls (taken branches with
 * link) deepen it, returns shallow it, any gap resets it, since after lost trace
 * the depth is unknown. */
#include "views_int.h"

#include <stdlib.h>

#define NIDS 128

struct flow_id {
	struct cst_flow_range pending;
	struct cst_sym_piece adopted; /* @pending's last piece, when handed over */
	bool valid;   /* @pending holds a range */
	bool started; /* a range was seen since trace (re)started */
	int depth;
};

struct cst_flow {
	cst_flow_fn fn;
	void *ctx;
	struct flow_id ids[NIDS];
};

int cst_flow_alloc(struct cst_flow **out, cst_flow_fn fn, void *ctx)
{
	struct cst_flow *f;

	if (!out || !fn)
		return -cste_invalid;
	f = calloc(1, sizeof(*f));
	if (!f)
		return -cste_nomem;
	f->fn = fn;
	f->ctx = ctx;
	*out = f;
	return 0;
}

void cst_flow_free(struct cst_flow *flow)
{
	free(flow);
}

static int emit(struct cst_flow *f, enum cst_flow_kind kind, const struct flow_id *d,
		const struct cst_sym_elem *to, uint64_t time)
{
	struct cst_flow_event ev = {
		.kind = kind,
		.from = d->valid ? &d->pending : NULL,
		.to = to,
		.time = time,
		.depth = d->depth,
		.calls_open = d->started,
	};

	return f->fn(f->ctx, &ev);
}

static int add_range(struct cst_flow *f, struct flow_id *d, const struct cst_sym_elem *se,
		     uint64_t time)
{
	const struct cst_elem *e = se->elem;
	int ret = 0;

	if (!d->started) {
		d->started = true;
		ret = emit(f, cst_flow_start, d, se, time);
	} else if (d->valid && cst_elem_taken_branch(&d->pending.elem)) {
		if (d->pending.elem.last_subclass == cst_insn_sub_link)
			d->depth++;
		ret = emit(f, cst_flow_branch, d, se, time);
	}
	/* a range that returns leaves its function: the next one runs a level up */
	if (cst_elem_taken_branch(e) && e->last_subclass == cst_insn_sub_ret && d->depth > 0)
		d->depth--;
	d->valid = true;
	d->pending.elem = *e;
	d->pending.elem.ocsd = NULL;
	d->pending.pid = se->pid;
	d->pending.pieces = se->pieces;
	d->pending.npieces = se->npieces;
	d->pending.time = time;
	return ret;
}

int cst_flow_add(struct cst_flow *flow, const struct cst_sym_elem *se, uint64_t time)
{
	struct flow_id *d;
	int ret;

	if (!flow || !se || !se->elem)
		return -cste_invalid;
	d = &flow->ids[se->elem->trace_id & (NIDS - 1)];
	switch (se->elem->type) {
	case cst_elem_instr_range:
		return add_range(flow, d, se, time);
	case cst_elem_exception:
		ret = emit(flow, cst_flow_exception, d, se, time);
		d->valid = false;
		return ret;
	case cst_elem_no_sync:
	case cst_elem_trace_on:
	case cst_elem_addr_nacc:
	case cst_elem_addr_unknown:
	case cst_elem_eot:
		ret = emit(flow, cst_flow_gap, d, se, time);
		d->valid = false;
		d->started = false;
		d->depth = 0;
		return ret;
	default:
		return 0;
	}
}

int cst_flow_finish(struct cst_flow *flow)
{
	if (!flow)
		return -cste_invalid;
	for (int id = 0; id < NIDS; id++) {
		struct flow_id *d = &flow->ids[id];
		int ret;

		if (!d->valid)
			continue;
		ret = emit(flow, cst_flow_end, d, NULL, d->pending.time);
		d->valid = false;
		if (ret)
			return ret;
	}
	return 0;
}

void sym_flow_state(const struct cst_flow *flow, uint8_t id, struct sym_flow_state *st)
{
	const struct flow_id *d = &flow->ids[id & (NIDS - 1)];

	*st = (struct sym_flow_state){.pending = d->pending, .valid = d->valid,
				      .started = d->started};
	st->pending.pieces = NULL;
	st->pending.npieces = 0;
	if (d->valid && d->pending.npieces) {
		/* the per-line counts stay with the symbolizer that made them */
		st->last = d->pending.pieces[d->pending.npieces - 1];
		st->last.lines = NULL;
		st->last.nlines = 0;
		st->last.first_line = st->last.last_line = -1;
		st->pending.npieces = 1;
	}
}

void sym_flow_adopt(struct cst_flow *flow, uint8_t id, const struct sym_flow_state *st)
{
	struct flow_id *d = &flow->ids[id & (NIDS - 1)];

	d->pending = st->pending;
	d->adopted = st->last;
	d->pending.pieces = st->pending.npieces ? &d->adopted : NULL;
	d->valid = st->valid;
	d->started = st->started;
}

void sym_flow_clear(struct cst_flow *flow)
{
	for (int id = 0; id < NIDS; id++)
		flow->ids[id] = (struct flow_id){0};
}

const char *cst_flow_branch_name(const struct cst_elem *e)
{
	if (!cst_elem_taken_branch(e))
		return "jcc-nt";
	switch (e->last_subclass) {
	case cst_insn_sub_link: return "call";
	case cst_insn_sub_ret: return "return";
	case cst_insn_sub_eret: return "eret";
	default: return e->last_class == cst_insn_branch_indirect ? "jmp-ind" : "jmp";
	}
}
