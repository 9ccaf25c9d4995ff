/* Readers: a symbolizer's look-ups on other threads. A reader is a copy of its
 * symbolizer's shared part (binaries, spaces, names) with caches of its own
 * (struct sym_own); binaries load their tables lazily, so those loads and what
 * reads them happen under the symbolizer's lock while it shares. */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

int cst_symbolizer_share(struct cst_symbolizer *sym, bool on)
{
	if (!sym || sym->main)
		return -cste_invalid;
	sym->sharing = on;
	return 0;
}

/* The shared part of @m as it stands, under @r's own caches. */
static void take_shared(struct cst_symbolizer *r, struct cst_symbolizer *m)
{
	uint32_t epoch = r->spaces_epoch;

	/* Field by field: what @m's own thread writes meanwhile (its caches, the
	 * lost sideband it gives its elements, function IDs under the lock) is
	 * never read here. These change only with sideband, between runs. */
	r->opts = m->opts;
	r->log = m->log;
	r->debuginfo_path = m->debuginfo_path;
	r->callbacks = m->callbacks;
	r->dsos = m->dsos;
	r->given = m->given;
	r->ngiven = m->ngiven;
	r->spaces = m->spaces;
	r->nspaces = m->nspaces;
	r->spaces_cap = m->spaces_cap;
	r->kernel = m->kernel;
	r->spaces_epoch = m->spaces_epoch;
	r->comms = m->comms;
	r->ncomms = m->ncomms;
	r->comms_cap = m->comms_cap;
	r->main = m;
	/* The caches stay warm from one sync to the next: their entries name the
	 * spaces' epoch they were found in. Only an epoch that wrapped round could
	 * match an old entry again. */
	if (r->spaces_epoch < epoch) {
		r->own.map_memo.m = NULL;
		r->own.map_memo.epoch = 0;
		if (r->own.front)
			memset(r->own.front, 0, SYM_RANGE_FRONT * sizeof(*r->own.front));
		if (r->own.perf_memo)
			memset(r->own.perf_memo, 0, SYM_PERF_MEMO * sizeof(*r->own.perf_memo));
	}
}

int cst_symbolizer_reader_alloc(struct cst_symbolizer **out, struct cst_symbolizer *sym)
{
	struct cst_symbolizer *r;
	int err;

	if (!out)
		return -cste_invalid;
	*out = NULL;
	if (!sym || sym->main || !sym->sharing)
		return -cste_invalid;
	r = calloc(1, sizeof(*r));
	if (!r)
		return -cste_nomem;
	take_shared(r, sym);
	err = sym_disasm_open(r);
	if (err) {
		sym_disasm_close(r);
		free(r);
		return err;
	}
	*out = r;
	return 0;
}

int cst_symbolizer_reader_sync(struct cst_symbolizer *reader)
{
	if (!reader || !reader->main)
		return -cste_invalid;
	take_shared(reader, reader->main);
	return 0;
}
