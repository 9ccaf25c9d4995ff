/* The script view: what each element of the filtered stream prints, one line per
 * taken branch (from the flow model), per executed instruction with disassembly,
 * or per function entered (the call trace, from the call model). */
#include "calls_rel.h"
#include "script_int.h"

#include <stdlib.h>
#include <string.h>

/* Location of @addr inside piece @pc, from the cached piece: no lookup. */
static void piece_loc(struct cst_script *s, int32_t pid, const struct cst_sym_piece *pc,
		      uint64_t addr, struct cst_sym_loc *loc)
{
	*loc = pc->loc;
	loc->func_offset += addr - pc->start;
	loc->dso_offset += addr - pc->start;
	if ((s->o.fields & cst_script_srcline) && addr != pc->start)
		cst_symbolizer_lookup(s->sym, pid, addr, loc); /* lines change inside */
}

/* Print the branch that ended range @p; @to is where it went (or NULL). */
static void put_branch(struct cst_script *s, const struct cst_flow_range *p,
		       const struct cst_sym_elem *to, const char *why)
{
	const struct cst_elem *e = &p->elem;
	uint64_t from = e->end - (e->last_size ? e->last_size : 4);
	struct cst_sym_loc loc;

	if (s->mute)
		return;
	sym_script_head(s, e, p->pid, p->time);
	if (s->o.fields & cst_script_flags) {
		cst_line_str(&s->line, why ? why : cst_flow_branch_name(e), -7);
		cst_line_char(&s->line, ' ');
	}
	if (p->npieces)
		piece_loc(s, p->pid, &p->pieces[p->npieces - 1], from, &loc);
	else
		cst_symbolizer_lookup(s->sym, p->pid, from, &loc);
	sym_script_loc(s, from, &loc);
	if (s->o.fields & cst_script_insncnt) {
		cst_line_str(&s->line, " insns:", 0);
		cst_line_udec(&s->line, e->num_insns, 0);
	}
	if (s->o.fields & cst_script_addr) {
		cst_line_str(&s->line, " => ", 0);
		if (to && to->elem->type == cst_elem_instr_range && to->npieces)
			sym_script_loc(s, to->elem->start, &to->pieces[0].loc);
		else
			cst_line_str(&s->line, "[none]", 0);
	}
	sym_script_end_line(s);
}

static void put_insns(struct cst_script *s, const struct cst_sym_elem *se, uint64_t time)
{
	const struct cst_elem *e = se->elem;

	if (s->mute)
		return;
	for (uint32_t i = 0; i < se->npieces; i++) {
		const struct cst_sym_piece *pc = &se->pieces[i];
		uint64_t a = pc->start;

		if (!cst_sym_filter_keep_piece(s->filter, pc))
			continue;
		for (uint32_t k = 0; k < pc->num_insns && a < pc->end; k++) {
			struct cst_sym_insn in;
			struct cst_sym_loc loc;
			int err = cst_symbolizer_disasm(s->sym, se->pid, a, e->isa, &in);

			piece_loc(s, se->pid, pc, a, &loc);
			sym_script_head(s, e, se->pid, time);
			sym_script_loc(s, a, &loc);
			if (s->o.fields & cst_script_insn) {
				cst_line_char(&s->line, '\t');
				cst_line_str(&s->line, err ? "(no code bytes)" : in.text, 0);
			}
			sym_script_end_line(s);
			if (err)
				break; /* sizes unknown from here on */
			a += in.size;
		}
	}
}

/* The branch view: one line per taken branch, and where trace broke off. */
static int flow_event(void *ctx, const struct cst_flow_event *ev)
{
	struct cst_script *s = ctx;

	/* the name filters select branches by where they leave from (the ip) */
	if (ev->from && ev->from->npieces &&
	    !cst_sym_filter_keep_piece(s->filter, &ev->from->pieces[ev->from->npieces - 1]))
		return s->failed ? -cste_io : 0;
	switch (ev->kind) {
	case cst_flow_branch:
		put_branch(s, ev->from, ev->to, NULL);
		break;
	case cst_flow_exception:
		if (ev->from)
			put_branch(s, ev->from, NULL, "exception");
		break;
	case cst_flow_gap:
	case cst_flow_end:
		/* a range that fell through needs no line; one that branched does (into
		 * code an address filter leaves out: "off", which is no loss) */
		if (ev->from && cst_elem_taken_branch(&ev->from->elem))
			put_branch(s, ev->from, NULL,
				   ev->kind == cst_flow_end ? "end"
				   : ev->to && ev->to->elem->type == cst_elem_trace_on &&
						   ev->to->elem->gap == cst_gap_filter
					   ? "off" : "gap");
		break;
	default:
		break;
	}
	return s->failed ? -cste_io : 0;
}

/* The call trace: each frame as it is entered, indented by its depth, marked when
 * it was not entered by a call; and where lost trace emptied the stack. */
static void put_how(struct cst_line *l, const struct cst_call_frame *fr)
{
	const char *how = cst_call_frame_how_name(fr);

	if (!strcmp(how, "call"))
		return;
	cst_line_str(l, " (", 0);
	cst_line_str(l, how, 0);
	cst_line_char(l, ')');
}

/* Two spaces per level, or where they go, for a stretch's view. */
static void indent(struct cst_script *s, const struct cst_call_event *ev, uint32_t levels)
{
	if (s->indent)
		s->indent(s->indent_ctx, ev, levels, s->line.n);
	else
		cst_line_str(&s->line, "", (int)levels * 2);
}

static int call_event(void *ctx, const struct cst_call_event *ev)
{
	struct cst_script *s = ctx;
	const struct cst_call_frame *fr = ev->frame;
	const struct cst_elem *e = ev->elem;

	if (!e || s->mute ||
	    (ev->kind != cst_call_enter && ev->kind != cst_call_gap && ev->kind != cst_call_off))
		return 0;
	/* a place of loss has its line already (put_loss) */
	if (ev->kind == cst_call_gap && s->at_loss)
		return 0;
	sym_script_head(s, e, ev->pid, ev->time);
	if (ev->kind == cst_call_off) {
		/* an address filter: the stack stands, nothing was lost */
		indent(s, ev, ev->depth);
		cst_line_str(&s->line, "[trace off: filter]", 0);
	} else if (ev->kind == cst_call_gap && e->type == cst_elem_trace_on &&
		   (e->gap == cst_gap_filter || e->gap == cst_gap_debug)) {
		/* switched off and on (a debug halt; a filter that went off in an
		 * exception): nothing was lost, the stack is not known */
		cst_line_str(&s->line, "[trace off: ", 0);
		cst_line_str(&s->line, cst_gap_reason_name(e->gap), 0);
		cst_line_char(&s->line, ']');
	} else if (ev->kind == cst_call_gap) {
		/* not a place of loss (those returned above): code that could not be
		 * followed, the end of trace, a buffer's first sync */
		cst_line_str(&s->line, "[trace gap: ", 0);
		cst_line_str(&s->line, cst_elem_type_name(e->type), 0);
		cst_line_char(&s->line, ']');
	} else {
		indent(s, ev, ev->depth - 1);
		cst_line_str(&s->line, cst_call_frame_name(fr), 0);
		if (!fr->func) {
			cst_line_char(&s->line, ' ');
			cst_line_str(&s->line, fr->dso, 0);
			cst_line_str(&s->line, " at ", 0);
			cst_line_hex(&s->line, fr->entry, 0, 0, 1);
		} else if (s->o.fields & cst_script_dso) {
			cst_line_str(&s->line, " (", 0);
			cst_line_str(&s->line, fr->dso, 0);
			cst_line_char(&s->line, ')');
		}
		put_how(&s->line, fr);
	}
	sym_script_end_line(s);
	return s->failed ? -cste_io : 0;
}

/* Where trace was lost, a line in place: "[trace lost: 4096 bytes]". */
static void put_loss(struct cst_script *s, const struct cst_sym_elem *se, const struct cst_loss_gap *g)
{
	char what[96];

	if (s->mute)
		return;
	cst_loss_format_gap(g, what, sizeof(what));
	sym_script_head(s, se->elem, se->pid, g->time);
	cst_line_str(&s->line, "[trace lost: ", 0);
	cst_line_str(&s->line, what, 0);
	cst_line_char(&s->line, ']');
	sym_script_end_line(s);
}

/* The memos, the filter and the model of the mode (@s's other fields set). */
static int setup(struct cst_script *s, const struct cst_script_opts *opts)
{
	int err;

	if (cst_opts_load(&s->o, sizeof(s->o), opts, "cst_script_opts", NULL) < 0)
		return -cste_invalid;
	s->perf_clock = s->o.filter && s->o.filter->time_conv;
	s->memo = calloc(SYM_LOC_MEMO, sizeof(*s->memo));
	if (!s->memo)
		return -cste_nomem;
	err = cst_sym_filter_alloc(&s->filter, s->sym, s->o.filter);
	if (!err)
		err = cst_loss_alloc(&s->loss);
	if (err < 0)
		return err;
	/* the instruction view needs neither model; its flow stays empty */
	return s->o.mode == cst_script_calls ? cst_calls_alloc(&s->calls, call_event, s)
					     : cst_flow_alloc(&s->flow, flow_event, s);
}

int sym_script_stretch(struct cst_script *s,
		       void (*note)(void *ctx, const struct cst_call_event *ev, uint32_t levels,
				    size_t at),
		       void *ctx)
{
	cst_calls_free(s->calls);
	s->calls = NULL;
	s->stretch = true;
	s->indent = note;
	s->indent_ctx = ctx;
	return sym_calls_rel_alloc(&s->calls, call_event, s);
}

int cst_script_alloc(struct cst_script **out, struct cst_symbolizer *sym,
		     cst_script_write_fn write, void *ctx, const struct cst_script_opts *opts)
{
	bool bad = !out || !sym || !write;
	struct cst_script *s = bad ? NULL : calloc(1, sizeof(*s));
	int err = bad ? -cste_invalid : s ? 0 : -cste_nomem;

	if (s) {
		s->sym = sym;
		s->write = write;
		s->write_ctx = ctx;
		err = setup(s, opts);
	}
	if (err < 0) {
		cst_script_free(s);
		s = NULL;
	}
	if (out)
		*out = s;
	return err;
}

int cst_script_add(void *ctx, const struct cst_sym_elem *se)
{
	struct cst_script *s = ctx;
	const struct cst_loss_gap *gap;
	uint64_t time;
	int err;

	if (!cst_sym_filter_keep(s->filter, se))
		return 0;
	time = cst_sym_filter_time(s->filter, se);
	err = cst_loss_add(s->loss, se, time, &gap);
	if (err)
		return err;
	if (s->o.mode == cst_script_calls) {
		/* the line in place of the gap the call model would print */
		if (gap)
			put_loss(s, se, gap);
		s->at_loss = gap != NULL;
		err = s->stretch ? sym_calls_rel_add(s->calls, se, time)
				 : cst_calls_add(s->calls, se, time);
		s->at_loss = false;
		return err ? err : s->failed ? -cste_io : 0;
	}
	if (s->o.mode == cst_script_branches) {
		/* after the branch line of the range the gap ended */
		err = cst_flow_add(s->flow, se, time);
		if (!err && gap)
			put_loss(s, se, gap);
		return err ? err : s->failed ? -cste_io : 0;
	}
	if (gap)
		put_loss(s, se, gap);
	if (se->elem->type == cst_elem_instr_range)
		put_insns(s, se, time);
	return s->failed ? -cste_io : 0;
}

int cst_script_finish(struct cst_script *s)
{
	const struct cst_loss_gap *gap = NULL;
	struct cst_sym_lost lost;
	int32_t cpu;
	int err;

	if (!s)
		return -cste_invalid;
	/* the last range of each trace ID has nowhere known to go */
	err = s->o.mode == cst_script_calls ? cst_calls_finish(s->calls) : cst_flow_finish(s->flow);
	/* what was lost after the last element (the end of a file cut short) */
	if (!err && cst_symbolizer_take_lost(s->sym, &lost, &cpu))
		err = cst_loss_add_end(s->loss, &lost, cpu, &gap);
	if (!err && gap) {
		struct cst_elem e = {.type = cst_elem_eot, .pid = -1, .tid = -1, .cpu = cpu,
				     .source = -1};

		put_loss(s, &(struct cst_sym_elem){.elem = &e, .pid = -1}, gap);
	}
	return err ? err : s->failed ? -cste_io : 0;
}

const struct cst_calls *cst_script_call_model(const struct cst_script *s)
{
	return s ? s->calls : NULL;
}

void cst_script_free(struct cst_script *s)
{
	if (s) {
		cst_flow_free(s->flow);
		cst_calls_free(s->calls);
		cst_loss_free(s->loss);
		cst_sym_filter_free(s->filter);
		free(s->memo);
	}
	free(s);
}
