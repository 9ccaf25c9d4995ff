/* The filters of the views: which elements (pid, tid, cpu, comm, time window) and
 * which instructions (binaries, functions) of the symbolized stream they show. */
#include "views_int.h"

#include <stdlib.h>
#include <string.h>

struct cst_sym_filter {
	struct cst_sym_filter_opts o;
	const struct cst_symbolizer *sym;  /* thread names for comms */
	uint64_t last_ts[128];             /* latest timestamp per trace ID: ranges carry none */
	struct cst_sym_piece *kept;        /* cst_sym_filter_pieces' copy */
	size_t kept_cap;
	struct cst_elem kept_elem;
};

int cst_sym_filter_alloc(struct cst_sym_filter **out, const struct cst_symbolizer *sym,
			 const struct cst_sym_filter_opts *opts)
{
	struct cst_sym_filter f = {.sym = sym};

	/* checked whole before anything is allocated: a failure leaves nothing */
	if (!out || !sym || cst_opts_load(&f.o, sizeof(f.o), opts, "cst_sym_filter_opts", NULL) < 0)
		return -cste_invalid;
	*out = malloc(sizeof(f));
	if (*out)
		**out = f;
	return *out ? 0 : -cste_nomem;
}

void cst_sym_filter_free(struct cst_sym_filter *f)
{
	if (f)
		free(f->kept);
	free(f);
}

static bool in_list(const int32_t *v, uint32_t n, int32_t x)
{
	if (!n)
		return true;
	for (uint32_t i = 0; i < n; i++)
		if (v[i] == x)
			return true;
	return false;
}

static bool name_in(const char *const *v, uint32_t n, const char *name)
{
	if (!n)
		return true;
	for (uint32_t i = 0; name && i < n; i++)
		if (!strcmp(v[i], name))
			return true;
	return false;
}

uint64_t cst_sym_filter_time(const struct cst_sym_filter *f, const struct cst_sym_elem *se)
{
	return sym_filter_time_of(f, se->elem->trace_id);
}

uint64_t sym_filter_time_of(const struct cst_sym_filter *f, uint8_t id)
{
	uint64_t t = f->last_ts[id & 0x7f];

	return t && f->o.time_conv ? cst_perf_time_from_ticks(f->o.time_conv, t) : t;
}

bool cst_sym_filter_keep(struct cst_sym_filter *f, const struct cst_sym_elem *se)
{
	const struct cst_elem *e = se->elem;
	const struct cst_sym_filter_opts *o = &f->o;

	if (e->type == cst_elem_timestamp)
		f->last_ts[e->trace_id & 0x7f] = e->timestamp;
	if (!in_list(o->pids, o->npids, se->pid) || !in_list(o->tids, o->ntids, e->tid) ||
	    !in_list(o->cpus, o->ncpus, e->cpu))
		return false;
	if (o->ncomms && !name_in(o->comms, o->ncomms,
				  cst_symbolizer_comm(f->sym, e->tid >= 0 ? e->tid : se->pid)))
		return false;
	if (o->window) {
		uint64_t t = o->window_ticks ? f->last_ts[e->trace_id & 0x7f]
					     : cst_sym_filter_time(f, se);

		if (t < o->t0 || t > o->t1)
			return false;
	}
	return true;
}

bool cst_sym_filter_by_name(const struct cst_sym_filter *f)
{
	return f->o.ndsos || f->o.nsymbols;
}

bool cst_sym_filter_keep_name(void *ctx, const char *dso, const char *func)
{
	const struct cst_sym_filter *f = ctx;

	if (f->o.ndsos && !name_in(f->o.dsos, f->o.ndsos, dso) &&
	    !name_in(f->o.dsos, f->o.ndsos, cst_path_base(dso)))
		return false;
	return name_in(f->o.symbols, f->o.nsymbols, func);
}

bool cst_sym_filter_keep_piece(const struct cst_sym_filter *f, const struct cst_sym_piece *pc)
{
	if (!cst_sym_filter_by_name(f)) /* the call views ask for every piece */
		return true;
	return cst_sym_filter_keep_name((void *)f, pc->loc.dso,
					pc->loc.func ? pc->loc.func->name : "[unknown]");
}

const struct cst_sym_elem *cst_sym_filter_pieces(struct cst_sym_filter *f,
						 const struct cst_sym_elem *se,
						 struct cst_sym_elem *copy)
{
	uint32_t n = 0, insns = 0;

	if (!cst_sym_filter_by_name(f) || se->elem->type != cst_elem_instr_range)
		return se;
	if (CST_GROW(f->kept, f->kept_cap, (size_t)se->npieces + 1) < 0)
		return NULL;
	for (uint32_t i = 0; i < se->npieces; i++)
		if (cst_sym_filter_keep_piece(f, &se->pieces[i])) {
			f->kept[n++] = se->pieces[i];
			insns += se->pieces[i].num_insns;
		}
	if (n == se->npieces)
		return se;
	if (!n)
		return NULL;
	f->kept_elem = *se->elem;
	f->kept_elem.num_insns = insns;
	*copy = *se;
	copy->elem = &f->kept_elem;
	copy->pieces = f->kept;
	copy->npieces = n;
	return copy;
}

bool sym_filter_window_unknown(const struct cst_sym_filter *f, uint8_t id)
{
	return f->o.window && !f->last_ts[id & 0x7f];
}

uint64_t sym_filter_last_ts(const struct cst_sym_filter *f, uint8_t id)
{
	return f->last_ts[id & 0x7f];
}

void sym_filter_set_last_ts(struct cst_sym_filter *f, uint8_t id, uint64_t ts)
{
	f->last_ts[id & 0x7f] = ts;
}

void sym_filter_clear_ts(struct cst_sym_filter *f)
{
	memset(f->last_ts, 0, sizeof(f->last_ts));
}
