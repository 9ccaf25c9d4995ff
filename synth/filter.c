/* Address filters and the snapshot trigger as the trace unit and the kernel apply
 * them to the run QEMU logged: the entries (perf's --filter syntax, resolved by the
 * source stage as record resolves them) are placed on each mapping of their file as
 * it is mapped, and every executed instruction is in ViewInst or not: inside an
 * include range (when there are ranges) and with the start/stop logic started. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "cstrace/source.h"
#include "synth_int.h"

int synth_filter_check_opts(const struct cst_synth_opts *o)
{
	if (o->plugin && !o->from_log) {
		cst_logf(o->log, cst_log_error,
			 "--filter and --trigger need the exec log, not --plugin: their entries are "
			 "placed on the mappings the log names as the run goes");
		return -cste_unsupported;
	}
	if (o->trigger && !(o->snapshot_mode && o->output == cst_synth_out_perf)) {
		cst_logf(o->log, cst_log_error,
			 "--trigger takes perf's AUX snapshot: it needs --out perf --snapshot");
		return -cste_invalid;
	}
	return 0;
}

int synth_filter_init(struct synth_filter *sf, const struct cst_synth_opts *o, const char *prog)
{
	const struct cst_log *log = o->log;
	int err = 0;

	memset(sf, 0, sizeof(*sf));
	if (o->filter) {
		/* the trace unit synth models: TRCIDR4 / ETMCCR as it publishes them */
		const struct cst_source_reg *r = cst_source_reg_find(
			o->arch == cst_synth_arm ? cst_proto_etmv3 : cst_proto_etmv4i,
			o->arch == cst_synth_arm ? "ETMCCR" : "TRCIDR4");
		char etm[64];

		snprintf(etm, sizeof(etm), "the modelled ETM (%s 0x%08x)", r->name, r->fallback);
		err = cst_addr_filter_parse(&sf->f, o->filter, log);
		if (!err)
			err = cst_addr_filter_resolve(sf->f, "/", NULL, log);
		if (!err)
			err = cst_addr_filter_check(sf->f,
						    o->arch == cst_synth_arm
							    ? cst_etmccr_addr_pairs(r->fallback)
							    : cst_trcidr4_addr_pairs(r->fallback),
						    o->output == cst_synth_out_perf, etm, log);
		for (int i = 0; !err && i < cst_addr_filter_count(sf->f); i++) {
			const struct cst_addr_filter_entry *e = cst_addr_filter_get(sf->f, i);

			if (!e->path[0]) {
				cst_logf(log, cst_log_error,
					 "--filter: '%s' is the kernel's (no @FILE): synth traces user "
					 "space only; name the file", e->sym[0] ? e->sym : "an address");
				err = -cste_invalid;
			}
			sf->ranges |= e->action == cst_addr_filter_range;
			sf->starts |= e->action == cst_addr_filter_start;
		}
	}
	if (!err && o->trigger) {
		char text[4200];

		snprintf(text, sizeof(text), "start %s", o->trigger);
		err = cst_addr_filter_parse(&sf->trig, text, log);
		if (!err && cst_addr_filter_count(sf->trig) != 1) {
			cst_logf(log, cst_log_error, "--trigger '%s': one function, SYM[@FILE]",
				 o->trigger);
			err = -cste_format;
		}
		if (!err)
			err = cst_addr_filter_resolve(sf->trig, "/", prog, log);
		sf->trig_count = o->trigger_count ? o->trigger_count : 1;
	}
	return err;
}

void synth_filter_fini(struct synth_filter *sf)
{
	cst_addr_filter_free(sf->f);
	cst_addr_filter_free(sf->trig);
	memset(sf, 0, sizeof(*sf));
}

/* Place @e on mapping @m when it is of @e's file (the kernel does so at each mmap:
 * the newest mapping holding it wins). */
static void place(const struct cst_addr_filter_entry *e, const struct synth_mapping *m,
		  const char *real, struct synth_placed *at)
{
	uint64_t start, len;

	if (!strcmp(real, e->path) && cst_addr_filter_place(e, m->addr, m->len, m->pgoff, &start, &len))
		*at = (struct synth_placed){start, len, true};
}

void synth_filter_update(struct synth_filter *sf, const struct synth_qlog *q)
{
	for (; sf->nmaps < q->nmaps; sf->nmaps++) {
		const struct synth_mapping *m = &q->maps[sf->nmaps];
		char real[PATH_MAX];

		if (!realpath(m->path, real))
			continue;
		for (int i = 0; i < cst_addr_filter_count(sf->f) && i < SYNTH_MAX_FILTERS; i++)
			place(cst_addr_filter_get(sf->f, i), m, real, &sf->at[i]);
		if (sf->trig)
			place(cst_addr_filter_get(sf->trig, 0), m, real, &sf->trig_at);
	}
}

bool synth_filter_traced(const struct synth_filter *sf, bool *started, uint64_t pc)
{
	bool in = !sf->ranges, traced;

	if (!sf->f)
		return true;
	for (int i = 0; i < cst_addr_filter_count(sf->f) && i < SYNTH_MAX_FILTERS; i++) {
		const struct cst_addr_filter_entry *e = cst_addr_filter_get(sf->f, i);
		const struct synth_placed *at = &sf->at[i];

		if (!at->placed)
			continue;
		if (e->action == cst_addr_filter_range)
			in |= pc - at->start < at->len;
		else if (e->action == cst_addr_filter_start && pc == at->start)
			*started = true; /* the instruction at a start point is traced */
	}
	traced = in && *started;
	for (int i = 0; i < cst_addr_filter_count(sf->f) && i < SYNTH_MAX_FILTERS; i++)
		if (sf->at[i].placed && pc == sf->at[i].start &&
		    cst_addr_filter_get(sf->f, i)->action == cst_addr_filter_stop)
			*started = false; /* ...and so is the one at a stop point, the last */
	return traced;
}

bool synth_filter_trigger(struct synth_filter *sf, uint64_t pc)
{
	if (!sf->trig || !sf->trig_at.placed || pc != sf->trig_at.start ||
	    sf->trig_hits >= sf->trig_count)
		return false;
	return ++sf->trig_hits == sf->trig_count;
}
