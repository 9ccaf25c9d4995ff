/* The export model: symbolized elements in, perf's database rows out, in the
 * order perf's db-export writes them (a sample's event, machine, threads and
 * comms, then its binaries and symbols, the calls it ends, and the sample), so
 * that ids match perf's where the samples do. */
#include "export_int.h"

#include <stdlib.h>
#include <string.h>

#ifndef CSTRACE_VERSION
#define CSTRACE_VERSION "0"
#endif

/* perf's trace_begin: id 0 of each table means "unknown" */
static int zero_rows(struct cst_export *e)
{
	static const enum cst_export_table tables[] = {
		cst_export_selected_events, cst_export_machines, cst_export_threads,
		cst_export_comms, cst_export_dsos, cst_export_symbols, cst_export_samples,
		cst_export_call_paths, cst_export_calls,
	};
	const struct cst_export_branch_type *bt;
	int err;

	for (size_t i = 0; i < sizeof(tables) / sizeof(tables[0]); i++) {
		struct cst_export_row r;

		memset(&r, 0, sizeof(r));
		r.table = tables[i];
		switch (tables[i]) {
		case cst_export_selected_events: r.u.evsel.name = "unknown"; break;
		case cst_export_machines: r.u.machine.root_dir = "unknown"; break;
		case cst_export_threads: r.u.thread.pid = r.u.thread.tid = -1; break;
		case cst_export_comms: r.u.comm.comm = "unknown"; break;
		case cst_export_dsos:
			r.u.dso.short_name = r.u.dso.long_name = "unknown";
			r.u.dso.build_id = "";
			break;
		case cst_export_symbols: r.u.symbol.name = "unknown"; break;
		default: break;
		}
		if (tables[i] == cst_export_calls && e->opts.no_calls)
			continue;
		if (tables[i] == cst_export_call_paths && e->opts.no_calls)
			continue;
		if ((err = exp_emit(e, &r)))
			return err;
	}
	for (bt = cst_export_branch_types(); bt->name; bt++) {
		struct cst_export_row r = {.table = cst_export_branch_types_table};

		r.u.branch_type = *bt;
		if ((err = exp_emit(e, &r)))
			return err;
	}
	return 0;
}

int cst_export_alloc(struct cst_export **out, struct cst_export_writer *w,
		     const struct cst_export_opts *opts)
{
	struct cst_export *e;
	struct cst_export_start start;
	int err;

	if (!out || !w)
		return -cste_invalid;
	*out = NULL;
	e = calloc(1, sizeof(*e));
	if (!e)
		return -cste_nomem;
	err = cst_opts_load(&e->opts, sizeof(e->opts), opts, "cst_export_opts", NULL);
	if (err) {
		free(e);
		return err;
	}
	if (e->opts.log)
		e->log = *e->opts.log;
	e->w = w;
	memset(&start, 0, sizeof(start));
	for (int t = 0; t < cst_export_ntables; t++)
		start.next_id[t] = 1;
	if ((err = w->ops.start(w->ctx, &start))) {
		free(e);
		return err;
	}
	memcpy(e->next, start.next_id, sizeof(e->next));
	e->fresh = start.fresh;
	if (e->opts.attr_flags) {
		cst_export_event_name("branches", e->opts.attr_flags, e->branches_name,
				      sizeof(e->branches_name));
		cst_export_event_name("instructions", e->opts.attr_flags, e->insns_name,
				      sizeof(e->insns_name));
	} else { /* no recorded event (a snapshot): no modifiers to tell */
		strcpy(e->branches_name, "branches");
		strcpy(e->insns_name, "instructions");
	}
	if (e->fresh && (err = zero_rows(e))) {
		free(e);
		return err;
	}
	*out = e;
	return 0;
}

void cst_export_free(struct cst_export *e)
{
	if (!e)
		return;
	exp_callret_free(e);
	exp_objects_free(e);
	exp_map_free(&e->code);
	free(e);
}

int cst_export_add(void *ctx, const struct cst_sym_elem *se, uint64_t time)
{
	struct cst_export *e = ctx;

	if (!e || !se || !se->elem || e->finished)
		return -cste_invalid;
	return exp_branches_add(e, se, time);
}

int cst_export_sideband(void *ctx, const struct cst_sideband *sb)
{
	struct cst_export *e = ctx;
	struct exp_thread *t;

	if (!e || !sb)
		return -cste_invalid;
	if (sb->type == cst_sb_comm || sb->type == cst_sb_fork)
		e->sb_gen++; /* threads or names change */
	switch (sb->type) {
	case cst_sb_comm:
		if (!sb->filename)
			return 0;
		t = exp_thread_findnew(e, sb->pid, sb->tid);
		if (!t)
			return -cste_nomem;
		if (sb->exec)
			e->opts.comm_exec = true; /* as perf's machine learns it */
		return exp_thread_set_comm(e, t, sb->filename, sb->time, sb->exec);
	case cst_sb_fork:
		return exp_fork(e, sb->pid, sb->tid, sb->ppid, sb->ptid, sb->time);
	default:
		return 0;
	}
}

int cst_export_finish(struct cst_export *e)
{
	struct cst_export_row r = {.table = cst_export_captures};
	int err;

	if (!e || e->finished)
		return -cste_invalid;
	e->finished = true;
	/* the calls still open end without a return, as perf's do when it deletes
	 * its threads */
	if (!e->opts.no_calls && (err = exp_callret_flush_all(e)))
		return err;
	/* every capture has its machine, even one without samples */
	if ((err = exp_machine_export(e)))
		return err;
	r.u.capture = (struct cst_export_capture_row){e->machine_id,
						       e->opts.capture ? e->opts.capture : "",
						       "cstrace " CSTRACE_VERSION, e->st.samples,
						       e->st.calls};
	if ((err = exp_emit(e, &r)))
		return err;
	return cst_export_writer_commit(e->w);
}

int cst_export_get_stats(const struct cst_export *e, struct cst_export_stats *st)
{
	if (!e || !st)
		return -cste_invalid;
	*st = e->st;
	return 0;
}
