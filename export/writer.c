/* The writer interface the SQLite and PostgreSQL backends share, and perf's fixed
 * values: the branch_types rows, the tables' names, event names. */
#include "export_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* perf's branch_types table (db-export.c of Linux 6.1): the flag combinations it
 * names, then each but plain "unconditional jump" and the trace begin/end ones
 * again with "trace begin / " before and " / trace end" after; by id. */
static const struct cst_export_branch_type branch_types[] = {
	{0, "no branch"},
	{1, "unconditional jump"},
	{3, "call"},
	{5, "return"},
	{9, "conditional jump"},
	{19, "system call"},
	{21, "return from system call"},
	{33, "asynchronous branch"},
	{67, "software interrupt"},
	{69, "return from interrupt"},
	{99, "hardware interrupt"},
	{129, "transaction abort"},
	{256, "trace begin / no branch"},
	{257, "trace begin"},
	{259, "trace begin / call"},
	{261, "trace begin / return"},
	{265, "trace begin / conditional jump"},
	{275, "trace begin / system call"},
	{277, "trace begin / return from system call"},
	{289, "trace begin / asynchronous branch"},
	{323, "trace begin / software interrupt"},
	{325, "trace begin / return from interrupt"},
	{355, "trace begin / hardware interrupt"},
	{385, "trace begin / transaction abort"},
	{512, "no branch / trace end"},
	{513, "trace end"},
	{515, "call / trace end"},
	{517, "return / trace end"},
	{521, "conditional jump / trace end"},
	{531, "system call / trace end"},
	{533, "return from system call / trace end"},
	{545, "asynchronous branch / trace end"},
	{579, "software interrupt / trace end"},
	{581, "return from interrupt / trace end"},
	{611, "hardware interrupt / trace end"},
	{641, "transaction abort / trace end"},
	{2051, "vm entry"},
	{2307, "trace begin / vm entry"},
	{2563, "vm entry / trace end"},
	{4099, "vm exit"},
	{4355, "trace begin / vm exit"},
	{4611, "vm exit / trace end"},
	{0, NULL},
};

const struct cst_export_branch_type *cst_export_branch_types(void)
{
	return branch_types;
}

const char *cst_export_table_name(enum cst_export_table t)
{
	static const char *const names[cst_export_ntables] = {
		[cst_export_selected_events] = "selected_events",
		[cst_export_machines] = "machines",
		[cst_export_threads] = "threads",
		[cst_export_comms] = "comms",
		[cst_export_comm_threads] = "comm_threads",
		[cst_export_dsos] = "dsos",
		[cst_export_symbols] = "symbols",
		[cst_export_branch_types_table] = "branch_types",
		[cst_export_samples] = "samples",
		[cst_export_call_paths] = "call_paths",
		[cst_export_calls] = "calls",
		[cst_export_captures] = "cstrace_captures",
	};

	return (unsigned)t < cst_export_ntables ? names[t] : "?";
}

/* perf's evsel__add_modifiers: which contexts were traced, when not all were */
const char *cst_export_event_name(const char *base, uint64_t f, char *out, size_t size)
{
	bool excl_user = f & (1ull << 4), excl_kernel = f & CST_PERF_ATTR_EXCLUDE_KERNEL,
	     excl_hv = f & CST_PERF_ATTR_EXCLUDE_HV, excl_host = f & (1ull << 19),
	     excl_guest = f & (1ull << 20);
	unsigned precise = (unsigned)(f >> 15) & 3;
	char mod[16];
	size_t n = 0;
	bool guest_default = false;

	if (excl_kernel || excl_user || excl_hv) {
		if (!excl_kernel)
			mod[n++] = 'k';
		if (!excl_user)
			mod[n++] = 'u';
		if (!excl_hv)
			mod[n++] = 'h';
		guest_default = true;
	}
	for (unsigned i = 0; i < precise; i++)
		mod[n++] = 'p';
	if (precise)
		guest_default = true;
	if (excl_host || excl_guest == guest_default) {
		if (!excl_host)
			mod[n++] = 'H';
		if (!excl_guest)
			mod[n++] = 'G';
	}
	mod[n] = '\0';
	snprintf(out, size, "%s%s%s", base, n ? ":" : "", mod);
	return out;
}

#define I8(x) (struct exp_val){exp_i8, (int64_t)(x), NULL}
#define I4(x) (struct exp_val){exp_i4, (int64_t)(x), NULL}
#define B(x) (struct exp_val){exp_bool, (x) ? 1 : 0, NULL}
#define T(x) (struct exp_val){exp_text, 0, (x) ? (x) : ""}

int exp_row_values(const struct cst_export_row *r, bool all, struct exp_val *v)
{
	int n = 0;

	switch (r->table) {
	case cst_export_selected_events:
		v[n++] = I8(r->u.evsel.id);
		v[n++] = T(r->u.evsel.name);
		break;
	case cst_export_machines:
		v[n++] = I8(r->u.machine.id);
		v[n++] = I4(r->u.machine.pid);
		v[n++] = T(r->u.machine.root_dir);
		break;
	case cst_export_threads: {
		const struct cst_export_thread_row *t = &r->u.thread;

		v[n++] = I8(t->id);
		v[n++] = I8(t->machine_id);
		v[n++] = I8(t->process_id);
		v[n++] = I4(t->pid);
		v[n++] = I4(t->tid);
		break;
	}
	case cst_export_comms: {
		const struct cst_export_comm_row *c = &r->u.comm;

		v[n++] = I8(c->id);
		v[n++] = T(c->comm);
		v[n++] = I8(c->thread_id);
		v[n++] = I8(c->time);
		v[n++] = B(c->exec);
		break;
	}
	case cst_export_comm_threads:
		v[n++] = I8(r->u.comm_thread.id);
		v[n++] = I8(r->u.comm_thread.comm_id);
		v[n++] = I8(r->u.comm_thread.thread_id);
		break;
	case cst_export_dsos: {
		const struct cst_export_dso_row *d = &r->u.dso;

		v[n++] = I8(d->id);
		v[n++] = I8(d->machine_id);
		v[n++] = T(d->short_name);
		v[n++] = T(d->long_name);
		v[n++] = T(d->build_id);
		break;
	}
	case cst_export_symbols: {
		const struct cst_export_symbol_row *y = &r->u.symbol;

		v[n++] = I8(y->id);
		v[n++] = I8(y->dso_id);
		v[n++] = I8(y->start);
		v[n++] = I8(y->end);
		v[n++] = I4(y->binding);
		v[n++] = T(y->name);
		break;
	}
	case cst_export_branch_types_table:
		v[n++] = I4(r->u.branch_type.id);
		v[n++] = T(r->u.branch_type.name);
		break;
	case cst_export_samples: {
		const struct cst_export_sample_row *s = &r->u.sample;

		v[n++] = I8(s->id);
		v[n++] = I8(s->evsel_id);
		v[n++] = I8(s->machine_id);
		v[n++] = I8(s->thread_id);
		v[n++] = I8(s->comm_id);
		v[n++] = I8(s->dso_id);
		v[n++] = I8(s->symbol_id);
		v[n++] = I8(s->sym_offset);
		v[n++] = I8(s->ip);
		v[n++] = I8(s->time);
		v[n++] = I4(s->cpu);
		v[n++] = I8(s->to_dso_id);
		v[n++] = I8(s->to_symbol_id);
		v[n++] = I8(s->to_sym_offset);
		v[n++] = I8(s->to_ip);
		if (all) {
			v[n++] = I8(s->period);
			v[n++] = I8(s->weight);
			v[n++] = I8(s->transaction);
			v[n++] = I8(s->data_src);
		}
		v[n++] = I4(s->branch_type);
		v[n++] = B(s->in_tx);
		v[n++] = I8(s->call_path_id);
		v[n++] = I8(s->insn_count);
		v[n++] = I8(s->cyc_count);
		v[n++] = I4(s->flags);
		break;
	}
	case cst_export_call_paths:
		v[n++] = I8(r->u.call_path.id);
		v[n++] = I8(r->u.call_path.parent_id);
		v[n++] = I8(r->u.call_path.symbol_id);
		v[n++] = I8(r->u.call_path.ip);
		break;
	case cst_export_calls: {
		const struct cst_export_call_row *c = &r->u.call;

		v[n++] = I8(c->id);
		v[n++] = I8(c->thread_id);
		v[n++] = I8(c->comm_id);
		v[n++] = I8(c->call_path_id);
		v[n++] = I8(c->call_time);
		v[n++] = I8(c->return_time);
		v[n++] = I8(c->branch_count);
		v[n++] = I8(c->call_id);
		v[n++] = I8(c->return_id);
		v[n++] = I8(c->parent_call_path_id);
		v[n++] = I4(c->flags);
		v[n++] = I8(c->parent_id);
		v[n++] = I8(c->insn_count);
		v[n++] = I8(c->cyc_count);
		break;
	}
	case cst_export_captures: {
		const struct cst_export_capture_row *c = &r->u.capture;

		v[n++] = I8(c->machine_id);
		v[n++] = T(c->path);
		v[n++] = T(c->tool);
		v[n++] = I8(c->samples);
		v[n++] = I8(c->calls);
		break;
	}
	default:
		break;
	}
	return n;
}

int exp_table_cols(enum cst_export_table t, bool all)
{
	static const int cols[cst_export_ntables] = {
		[cst_export_selected_events] = 2, [cst_export_machines] = 3,
		[cst_export_threads] = 5,	  [cst_export_comms] = 5,
		[cst_export_comm_threads] = 3,	  [cst_export_dsos] = 5,
		[cst_export_symbols] = 6,	  [cst_export_branch_types_table] = 2,
		[cst_export_samples] = 21,	  [cst_export_call_paths] = 4,
		[cst_export_calls] = 14,	  [cst_export_captures] = 5,
	};

	return (unsigned)t < cst_export_ntables ? cols[t] + (t == cst_export_samples && all ? 4 : 0)
						 : 0;
}

void exp_hex(const uint8_t *id, size_t n, char *out)
{
	static const char digits[] = "0123456789abcdef";

	for (size_t i = 0; i < n; i++) {
		out[2 * i] = digits[id[i] >> 4];
		out[2 * i + 1] = digits[id[i] & 15];
	}
	out[2 * n] = '\0';
}

int cst_export_writer_alloc(struct cst_export_writer **out, const struct cst_export_writer_ops *ops,
			    void *ctx)
{
	struct cst_export_writer *w;

	if (!out || !ops || ops->sz < sizeof(size_t) || !ops->start || !ops->row || !ops->commit)
		return -cste_invalid;
	w = calloc(1, sizeof(*w));
	if (!w)
		return -cste_nomem;
	memcpy(&w->ops, ops, ops->sz < sizeof(w->ops) ? ops->sz : sizeof(w->ops));
	w->ctx = ctx;
	*out = w;
	return 0;
}

int cst_export_writer_commit(struct cst_export_writer *w)
{
	int err;

	if (!w || w->committed)
		return -cste_invalid;
	err = w->ops.commit(w->ctx);
	if (!err)
		w->committed = true;
	return err;
}

void cst_export_writer_free(struct cst_export_writer *w)
{
	if (!w)
		return;
	if (w->ops.free)
		w->ops.free(w->ctx);
	free(w);
}

const char *cst_export_writer_tmpname(const struct cst_export_writer *w)
{
	return w && w->tmpname ? w->tmpname(w->ctx) : NULL;
}
