/* A sample row and what it names (perf's db_export__sample): the event, the
 * machine, the thread and comm, both ends' binaries and symbols, and the branch
 * the call/return processor is given. Below the model (model.c) and the branch
 * rules (branches.c), above the objects and calls it writes. */
#include "export_int.h"

#include <string.h>

int exp_machine_export(struct cst_export *e)
{
	struct cst_export_row r = {.table = cst_export_machines};

	if (e->machine_id)
		return 0;
	e->machine_id = e->next[cst_export_machines]++;
	r.u.machine = (struct cst_export_machine_row){e->machine_id, -1, ""};
	return exp_emit(e, &r);
}

/* perf's db_export__sample */
int exp_sample(struct cst_export *e, const struct exp_sample_in *in)
{
	int64_t *evsel = in->insns ? &e->evsel_insns : &e->evsel_branches;
	struct cst_export_row r = {.table = cst_export_samples};
	struct cst_export_sample_row *s = &r.u.sample;
	const struct exp_comm *comm = NULL;
	struct exp_loc from = {0}, to = {0};
	struct exp_thread *t;
	int err = 0;

	if (!*evsel && !e->fresh && e->w->ops.find_event)
		*evsel = e->w->ops.find_event(e->w->ctx, in->insns ? "instructions" : "branches");
	if (!*evsel) {
		struct cst_export_row ev = {.table = cst_export_selected_events};

		*evsel = e->next[cst_export_selected_events]++;
		ev.u.evsel = (struct cst_export_evsel_row){*evsel,
							    in->insns ? e->insns_name : e->branches_name};
		if ((err = exp_emit(e, &ev)))
			return err;
	}
	if ((err = exp_machine_export(e)))
		return err;
	if (e->last_thread && e->last_pid == in->pid && e->last_tid == in->tid &&
	    e->last_gen == e->sb_gen) {
		/* nothing to write: it was all written for the sample before */
		t = e->last_thread;
		comm = e->last_comm;
	} else {
		t = exp_thread_findnew(e, in->pid, in->tid);
		if (!t)
			return -cste_nomem;
		if ((err = exp_threads_export(e, t, &comm)))
			return err;
		e->last_thread = t;
		e->last_comm = comm;
		e->last_pid = in->pid;
		e->last_tid = in->tid;
		e->last_gen = e->sb_gen;
	}
	s->id = e->next[cst_export_samples]++;
	s->evsel_id = *evsel;
	s->machine_id = e->machine_id;
	s->thread_id = t->db_id;
	s->comm_id = comm ? comm->db_id : 0;
	/* perf resolves both ends, then makes the symbols it did not find */
	if (in->ip && in->from && (err = exp_loc_find(e, in->from, in->ip, &from)))
		return err;
	if (!in->insns && in->addr && in->to && (err = exp_loc_find(e, in->to, in->addr, &to)))
		return err;
	if ((err = exp_loc_export(e, &from, &s->dso_id, &s->symbol_id, &s->sym_offset)) ||
	    (err = exp_loc_export(e, &to, &s->to_dso_id, &s->to_symbol_id, &s->to_sym_offset)))
		return err;
	if (!in->insns && !e->opts.no_calls) {
		struct exp_branch b = {
			.thread = t,
			.comm = comm,
			.cpu = in->cpu,
			.flags = in->flags,
			.ip = in->ip,
			.addr = in->addr,
			.time = in->time,
			.insn_len = in->insn_len,
			.insn_cnt = in->insn_count,
			.from = from.sym,
			.to = to.sym,
			.to_map_addr = to.map_addr,
			.ref = s->id,
		};

		if ((err = exp_callret_branch(e, &b)))
			return err;
	}
	s->ip = in->ip;
	s->time = in->time;
	s->cpu = in->cpu;
	s->to_ip = in->insns ? 0 : in->addr;
	s->period = 1;
	s->branch_type = (int32_t)(in->flags & ~CST_EXPORT_FLAG_IN_TX);
	s->in_tx = in->flags & CST_EXPORT_FLAG_IN_TX;
	s->insn_count = in->insn_count;
	s->flags = (int32_t)in->flags;
	e->st.samples++;
	return exp_emit(e, &r);
}

