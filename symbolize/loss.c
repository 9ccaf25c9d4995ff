/* The loss model: where a view's stream lost trace, why, and how many bytes where
 * the input says. A place is the first element after a loss; what the decoder
 * says about a gap (an overflow, a resync) and what the sideband says came before
 * the element (a TRUNCATED AUX record, trace the file does not hold, a snapshot's
 * overwritten bytes) are one place until the trace ID runs code again, but for a
 * NO_SYNC the decoder gives for a loss, which is one of its own. Trace its
 * filter switched off is counted apart: it was never lost. */
#include "views_int.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NIDS 128

struct cst_loss {
	struct cst_loss_totals t;
	struct cst_loss_gap last[NIDS]; /* each trace ID's last place */
	bool open[NIDS];           /* no code ran on the trace ID since its last place */
	struct cst_loss_gap end;   /* the place at the end of the stream */
};

int cst_loss_alloc(struct cst_loss **out)
{
	if (!out)
		return -cste_invalid;
	*out = calloc(1, sizeof(**out));
	return *out ? 0 : -cste_nomem;
}

void cst_loss_free(struct cst_loss *loss)
{
	free(loss);
}

/* What the element itself says was lost before it. */
static unsigned elem_why(const struct cst_elem *e)
{
	if ((e->type == cst_elem_no_sync || e->type == cst_elem_trace_on) &&
	    e->gap == cst_gap_overflow)
		return cst_loss_overflow;
	if (e->type == cst_elem_no_sync && e->gap == cst_gap_resync)
		return cst_loss_resync;
	return 0;
}

/* Add @why and @bytes to place @g, and to the totals. */
static void add_to(struct cst_loss *loss, struct cst_loss_gap *g, unsigned why, uint64_t bytes)
{
	const unsigned no_count = cst_loss_overflow | cst_loss_resync | cst_loss_truncated;
	unsigned added = why & ~g->why;

	if ((why & no_count) && !g->bytes_unknown) {
		g->bytes_unknown = true;
		loss->t.unknown++;
	}
	loss->t.overflows += !!(added & cst_loss_overflow);
	loss->t.resyncs += !!(added & cst_loss_resync);
	g->why |= why;
	g->bytes += bytes;
	loss->t.bytes += bytes;
}

int cst_loss_add(struct cst_loss *loss, const struct cst_sym_elem *se, uint64_t time,
		 const struct cst_loss_gap **gap)
{
	const struct cst_elem *e;
	const struct cst_sym_lost *l;
	struct cst_loss_gap *g;
	unsigned id, why;

	if (gap)
		*gap = NULL;
	if (!loss || !se || !se->elem)
		return -cste_invalid;
	e = se->elem;
	l = se->lost;
	id = e->trace_id & (NIDS - 1);
	if (e->type == cst_elem_instr_range || e->type == cst_elem_i_range_nopath)
		loss->open[id] = false;
	if (e->type == cst_elem_trace_on && e->gap == cst_gap_filter)
		loss->t.filtered++;
	why = elem_why(e);
	if (l) {
		loss->t.records += l->records;
		loss->t.truncated += l->truncated;
		loss->t.missing += l->missing;
		loss->t.overwritten += l->overwritten;
		why |= (l->truncated ? cst_loss_truncated : 0) | (l->missing ? cst_loss_missing : 0) |
		       (l->overwritten ? cst_loss_overwritten : 0);
	}
	if (!why)
		return 0;
	g = &loss->last[id];
	/* a NO_SYNC the decoder gives for a loss is a loss of its own (another
	 * overflow, more bad packets); what comes after it before code runs again
	 * is the same loss said again (the TRACE_ON after an overflow's NO_SYNC) */
	if (loss->open[id] && !(e->type == cst_elem_no_sync && elem_why(e))) {
		g->elem = e;
		add_to(loss, g, why, l ? l->bytes : 0);
		return 0;
	}
	*g = (struct cst_loss_gap){
		.elem = e,
		.offset = e->offset,
		.time = time,
		.pid = e->pid >= 0 ? e->pid : se->pid,
		.tid = e->tid >= 0 ? e->tid : se->pid,
		.cpu = e->cpu,
		.trace_id = e->trace_id,
	};
	add_to(loss, g, why, l ? l->bytes : 0);
	loss->t.places++;
	loss->open[id] = true;
	if (gap)
		*gap = g;
	return 0;
}

int cst_loss_add_end(struct cst_loss *loss, const struct cst_sym_lost *l, int32_t cpu,
		     const struct cst_loss_gap **gap)
{
	struct cst_loss_gap end;
	unsigned why;

	if (gap)
		*gap = NULL;
	if (!loss || !l)
		return -cste_invalid;
	loss->t.records += l->records;
	loss->t.truncated += l->truncated;
	loss->t.missing += l->missing;
	loss->t.overwritten += l->overwritten;
	why = (l->truncated ? cst_loss_truncated : 0) | (l->missing ? cst_loss_missing : 0) |
	      (l->overwritten ? cst_loss_overwritten : 0);
	if (!why)
		return 0;
	end = (struct cst_loss_gap){.pid = -1, .tid = -1, .cpu = cpu};
	add_to(loss, &end, why, l->bytes);
	loss->t.places++;
	loss->end = end;
	if (gap)
		*gap = &loss->end;
	return 0;
}

int cst_loss_get_totals(const struct cst_loss *loss, struct cst_loss_totals *t)
{
	if (!loss || !t)
		return -cste_invalid;
	*t = loss->t;
	return 0;
}

/* @v with a comma every three digits. */
static const char *grouped(uint64_t v, char buf[32])
{
	char d[24];
	int n = snprintf(d, sizeof(d), "%" PRIu64, v), k = 0;

	for (int i = 0; i < n; i++) {
		if (i && (n - i) % 3 == 0)
			buf[k++] = ',';
		buf[k++] = d[i];
	}
	buf[k] = '\0';
	return buf;
}

/* "N thing" or "N things", after @sep when something came before. */
static void count_of(char *buf, size_t size, size_t *n, const char **sep, uint64_t v,
		     const char *one, const char *many)
{
	char g[32];
	int m;

	if (!v)
		return;
	m = snprintf(*n < size ? buf + *n : NULL, *n < size ? size - *n : 0, "%s%s %s", *sep,
		     grouped(v, g), v == 1 ? one : many);
	*n += m > 0 ? (size_t)m : 0;
	*sep = ", ";
}

#define APPEND(...)                                                                          \
	do {                                                                                 \
		int m_ = snprintf(n < size ? buf + n : NULL, n < size ? size - n : 0, __VA_ARGS__); \
		n += m_ > 0 ? (size_t)m_ : 0;                                                \
	} while (0)

int cst_loss_format_totals(const struct cst_loss_totals *t, char *buf, size_t size)
{
	size_t n = 0;
	char g[32];

	if (size)
		*buf = '\0';
	if (!t)
		return 0;
	if (t->places) {
		const char *sep = "";

		APPEND("trace lost in %s place%s (", grouped(t->places, g), t->places == 1 ? "" : "s");
		if (t->bytes) {
			APPEND("%s%s bytes", t->unknown ? "at least " : "", grouped(t->bytes, g));
			sep = t->unknown ? "; " : "";
		}
		if (t->unknown) {
			count_of(buf, size, &n, &sep, t->truncated, "TRUNCATED AUX record",
				 "TRUNCATED AUX records");
			count_of(buf, size, &n, &sep, t->overflows, "trace unit overflow",
				 "trace unit overflows");
			count_of(buf, size, &n, &sep, t->resyncs, "resync", "resyncs");
			APPEND(", size%s unknown", t->truncated + t->overflows + t->resyncs == 1 ? "" : "s");
		}
		APPEND(")");
	}
	if (t->records)
		APPEND("%s%s perf record%s lost", t->places ? "; " : "", grouped(t->records, g),
		       t->records == 1 ? "" : "s");
	return (int)n;
}

int cst_loss_format_gap(const struct cst_loss_gap *g, char *buf, size_t size)
{
	const char *why = !g ? "" : (g->why & cst_loss_truncated) ? "TRUNCATED"
				: (g->why & cst_loss_overflow)      ? "overflow"
				: (g->why & cst_loss_resync)        ? "resync"
								    : "";
	size_t n = 0;

	if (size)
		*buf = '\0';
	if (!g)
		return 0;
	if (!g->bytes_unknown)
		APPEND("%" PRIu64 " bytes", g->bytes);
	else if (g->bytes)
		APPEND("at least %" PRIu64 " bytes (%s)", g->bytes, why);
	else
		APPEND("size unknown (%s)", why);
	return (int)n;
}

void sym_loss_ran(struct cst_loss *loss, uint8_t trace_id)
{
	loss->open[trace_id & (NIDS - 1)] = false;
}

void sym_loss_state(const struct cst_loss *loss, uint8_t id, struct sym_loss_state *st)
{
	id &= NIDS - 1;
	st->open = loss->open[id];
	st->last = loss->last[id];
	st->last.elem = NULL; /* the element is gone by the time another thread reads it */
}

void sym_loss_adopt(struct cst_loss *loss, uint8_t id, const struct sym_loss_state *st)
{
	id &= NIDS - 1;
	loss->open[id] = st->open;
	loss->last[id] = st->last;
}

void sym_loss_take_totals(struct cst_loss *loss, struct cst_loss_totals *t)
{
	if (t)
		*t = loss->t;
	memset(&loss->t, 0, sizeof(loss->t));
}

void sym_loss_add_totals(struct cst_loss *loss, const struct cst_loss_totals *t)
{
	struct cst_loss_totals *to = &loss->t;

	to->places += t->places;
	to->bytes += t->bytes;
	to->unknown += t->unknown;
	to->overflows += t->overflows;
	to->resyncs += t->resyncs;
	to->truncated += t->truncated;
	to->missing += t->missing;
	to->overwritten += t->overwritten;
	to->records += t->records;
	to->filtered += t->filtered;
}

void sym_loss_clear(struct cst_loss *loss)
{
	memset(loss, 0, sizeof(*loss));
}
