/* A recorded AUX stream turned into a timeline per ring: the kernel's writes are the
 * AUX records each consumer read found in the data ring, the reads are the stream's
 * read events, and the backlog is what the kernel had written that the consumer had
 * not yet taken. What was lost is told with its cause. */
#include "cstrace/capture.h"
#include "cstrace/auxlog.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cstrace/perfdata.h"

#define MAX_RINGS (CST_ETM_MAX_CPUS + 1)
#define REC_LOST 2
#define REC_AUX 11

/* A range of AUX positions, unwrapped to 64 bits. */
struct span {
	uint64_t start, end;
};

struct ring_state {
	uint64_t prev_read;   /* absolute time of the previous read (or the mmap) */
	uint64_t snap_prev;   /* aux_head at the previous snapshot */
	uint64_t last_copied, last_written; /* last raw positions, to unwrap 32-bit heads */
	uint64_t copied_epoch, written_epoch;
	struct span *copied, *written;
	size_t ncopied, cap_copied, nwritten, cap_written;
	uint64_t truncated_late; /* truncations with the ring full: the consumer was late */
};

struct cst_aux_timeline {
	struct cst_aux_tl_info info;
	struct cst_aux_tl_ring rings[MAX_RINGS];
	struct ring_state st[MAX_RINGS];
	struct cst_aux_tl_event *ev;
	size_t cap;
	uint64_t *ktime; /* per event: the write's own timestamp (0: none) */
	size_t kcap;
	uint64_t t0;
	bool have_t0;
	struct cst_perf_attr first_attr;
	bool have_attr;
	uint64_t wake_time, wake_mask;
	bool have_wake;
};

static void ring_free(struct ring_state *s)
{
	free(s->copied);
	free(s->written);
}

void cst_aux_timeline_free(struct cst_aux_timeline *t)
{
	if (!t)
		return;
	for (int i = 0; i < t->info.nrings; i++)
		ring_free(&t->st[i]);
	free(t->ev);
	free(t->ktime);
	free(t);
}

static struct cst_aux_tl_event *add_event(struct cst_aux_timeline *t, enum cst_aux_tl_kind kind,
					  int ring, uint64_t time)
{
	struct cst_aux_tl_event *e;

	if (CST_GROW(t->ev, t->cap, t->info.nevents + 1) < 0 ||
	    CST_GROW(t->ktime, t->kcap, t->info.nevents + 1) < 0)
		return NULL;
	e = &t->ev[t->info.nevents];
	memset(e, 0, sizeof(*e));
	t->ktime[t->info.nevents] = 0;
	t->info.nevents++;
	e->kind = kind;
	e->ring = ring;
	e->time = time;
	return e;
}

/* A 32-bit kernel's heads wrap at 4 GiB: number positions on as if they did not. */
static uint64_t unwrap(uint64_t pos, uint64_t *last, uint64_t *epoch)
{
	if (pos <= UINT32_MAX && *last <= UINT32_MAX && pos + (UINT64_C(1) << 31) < *last)
		*epoch += UINT64_C(1) << 32;
	*last = pos;
	return pos + *epoch;
}

static int add_span(struct span **a, size_t *n, size_t *cap, uint64_t start, uint64_t len)
{
	if (!len)
		return 0;
	if (*n && (*a)[*n - 1].end == start) {
		(*a)[*n - 1].end += len; /* contiguous: one span */
		return 0;
	}
	if (CST_GROW(*a, *cap, *n + 1) < 0)
		return -cste_nomem;
	(*a)[*n].start = start;
	(*a)[*n].end = start + len;
	(*n)++;
	return 0;
}

static int find_ring(const struct cst_aux_timeline *t, uint32_t idx)
{
	for (int i = 0; i < t->info.nrings; i++)
		if (t->rings[i].idx == idx)
			return i;
	return -1;
}

/* The records a read found in the data ring: the kernel's writes and losses. */
static int take_records(struct cst_aux_timeline *t, int ri, const struct cst_auxlog_read *rd,
			uint64_t now)
{
	struct cst_aux_tl_ring *g = &t->rings[ri];
	struct ring_state *s = &t->st[ri];
	uint64_t pos = 0;

	while (rd->data_len - pos >= 8) {
		const uint8_t *rec = rd->data + pos;
		uint32_t type = cst_le32(rec);
		uint16_t size = cst_le16(rec + 6);
		struct cst_aux_tl_event *e;

		if (size < 8 || size > rd->data_len - pos)
			break; /* the consumer stopped here too (a record of impossible size) */
		if (type == REC_AUX && size >= 32) {
			struct cst_perf_sample_id sid;
			uint64_t flags = cst_le64(rec + 24);

			e = add_event(t, cst_aux_tl_write, ri, now);
			if (!e)
				return -cste_nomem;
			e->offset = cst_le64(rec + 8);
			e->size = cst_le64(rec + 16);
			e->flags = flags;
			e->found = now;
			cst_perf_sample_id_parse(t->have_attr ? &t->first_attr : NULL, rec, size, 32,
						 &sid);
			if (sid.have_time)
				t->ktime[t->info.nevents - 1] = sid.time;
			g->writes++;
			g->written += e->size;
			g->truncated += !!(flags & CST_PERF_AUX_TRUNCATED);
			g->empty_truncated += (flags & CST_PERF_AUX_TRUNCATED) && !e->size;
			g->partial += !!(flags & CST_PERF_AUX_PARTIAL);
			g->collision += !!(flags & CST_PERF_AUX_COLLISION);
			if (!g->overwrite) {
				uint64_t start = unwrap(e->offset, &s->last_written, &s->written_epoch);

				if (add_span(&s->written, &s->nwritten, &s->cap_written, start, e->size))
					return -cste_nomem;
				/* full when the write reached the consumer's tail: the kernel
				 * had no room for more (an empty record: none at all) */
				if ((flags & CST_PERF_AUX_TRUNCATED) &&
				    (!e->size || e->offset + e->size - rd->aux_pos + 4096 >= g->aux_size))
					s->truncated_late++;
			}
		} else if (type == REC_LOST && size >= 24) {
			e = add_event(t, cst_aux_tl_lost, ri, now);
			if (!e)
				return -cste_nomem;
			e->lost = cst_le64(rec + 16);
			g->lost_records++;
			g->lost_events += e->lost;
		}
		pos += size;
	}
	return 0;
}

static int take_read(struct cst_aux_timeline *t, const struct cst_auxlog_event *ev, uint64_t now)
{
	const struct cst_auxlog_read *rd = &ev->u.read;
	int ri = find_ring(t, rd->idx);
	struct cst_aux_tl_ring *g;
	struct ring_state *s;
	struct cst_aux_tl_event *e;
	uint64_t before = t->info.nevents;
	int err;

	if (ri < 0)
		return -cste_format;
	g = &t->rings[ri];
	s = &t->st[ri];
	err = take_records(t, ri, rd, now);
	if (err < 0)
		return err;
	e = add_event(t, cst_aux_tl_read, ri, now);
	if (!e)
		return -cste_nomem;
	e->head = rd->aux_head;
	e->copied = rd->aux_len;
	e->snapshot = rd->snapshot;
	if (rd->snapshot) {
		e->tail = s->snap_prev;
		e->backlog = rd->aux_head - s->snap_prev;
		if (rd->aux_head <= UINT32_MAX && s->snap_prev <= UINT32_MAX)
			e->backlog = (uint32_t)(rd->aux_head - s->snap_prev);
		e->overwritten = e->backlog > g->aux_size ? e->backlog - g->aux_size : 0;
		s->snap_prev = rd->aux_head;
		g->snapshots++;
		g->overwritten += e->overwritten;
	} else {
		e->tail = rd->aux_pos;
		e->backlog = rd->aux_len;
		if (add_span(&s->copied, &s->ncopied, &s->cap_copied,
			     unwrap(rd->aux_pos, &s->last_copied, &s->copied_epoch), rd->aux_len))
			return -cste_nomem;
	}
	if (e->backlog > g->peak_backlog) {
		g->peak_backlog = e->backlog;
		g->peak_time = now;
	}
	/* latency: from the wake-up that made this read useful */
	if (t->have_wake && (e->copied || t->info.nevents - 1 > before) &&
	    (!t->wake_mask || (ri < 64 && (t->wake_mask >> ri) & 1)) && now >= t->wake_time) {
		e->latency = now - t->wake_time;
		g->sum_latency += e->latency;
		g->nlatency++;
		if (e->latency > g->max_latency)
			g->max_latency = e->latency;
	}
	g->reads++;
	g->copied += rd->aux_len;
	g->unwritten = rd->unwritten;
	g->read_errors += rd->result < 0;
	for (uint32_t i = 0; i < rd->nctl; i++)
		if (rd->ctl[i].op == cst_auxlog_ctl_enable && !rd->snapshot) {
			g->reenables++;
			g->reenable_failures += rd->ctl[i].result < 0;
		}
	return 0;
}

static int take_event(struct cst_aux_timeline *t, const struct cst_auxlog_event *ev)
{
	uint64_t now;
	struct cst_aux_tl_event *e;

	if (!t->have_t0) {
		t->t0 = ev->time;
		t->have_t0 = true;
	}
	now = ev->time >= t->t0 ? ev->time - t->t0 : 0;
	if (now > t->info.duration)
		t->info.duration = now;
	switch (ev->type) {
	case cst_auxlog_attr:
		if (!t->have_attr) {
			t->first_attr = ev->u.attr;
			t->first_attr.ids = NULL;
			t->have_attr = true;
		}
		return 0;
	case cst_auxlog_ring: {
		struct cst_aux_tl_ring *g = &t->rings[t->info.nrings];

		if (t->info.nrings >= MAX_RINGS || find_ring(t, ev->u.ring.idx) >= 0)
			return -cste_format;
		g->idx = ev->u.ring.idx;
		g->cpu = ev->u.ring.cpu;
		g->tid = ev->u.ring.tid;
		g->aux_size = ev->u.ring.aux_size;
		g->overwrite = ev->u.ring.overwrite;
		t->st[t->info.nrings].prev_read = now;
		t->st[t->info.nrings].snap_prev = ev->u.ring.aux_head;
		t->st[t->info.nrings].last_copied = ev->u.ring.aux_tail;
		t->st[t->info.nrings].last_written = ev->u.ring.aux_tail;
		t->info.nrings++;
		return 0;
	}
	case cst_auxlog_wake:
		e = add_event(t, cst_aux_tl_wake, -1, now);
		if (!e)
			return -cste_nomem;
		e->ring_mask = ev->u.wake.ring_mask;
		t->have_wake = ev->u.wake.nready > 0;
		t->wake_time = now;
		t->wake_mask = ev->u.wake.ring_mask;
		return 0;
	case cst_auxlog_read:
		return take_read(t, ev, now);
	case cst_auxlog_end:
		t->info.ended = true;
		return 0;
	default:
		return 0;
	}
}

/* Bytes of @a not covered by @b (both sorted, disjoint); the first such byte. */
static uint64_t uncovered(const struct span *a, size_t na, const struct span *b, size_t nb,
			  uint64_t *first)
{
	uint64_t n = 0;
	size_t j = 0;

	*first = 0;
	for (size_t i = 0; i < na; i++) {
		uint64_t p = a[i].start;

		while (p < a[i].end) {
			while (j < nb && b[j].end <= p)
				j++;
			if (j < nb && b[j].start <= p) {
				p = b[j].end < a[i].end ? b[j].end : a[i].end;
				continue;
			}
			{
				uint64_t stop = j < nb && b[j].start < a[i].end ? b[j].start : a[i].end;

				if (!n)
					*first = p;
				n += stop - p;
				p = stop;
			}
		}
	}
	return n;
}

/* Place each write at its own timestamp moved onto the consumer's clock: the
 * smallest gap between a record's timestamp and the read that found it is the
 * clock offset (plus the shortest delay), so no write lands after its read. */
static void place_writes(struct cst_aux_timeline *t)
{
	int64_t off = INT64_MAX;
	uint64_t prev[MAX_RINGS];

	for (uint64_t i = 0; i < t->info.nevents; i++)
		if (t->ev[i].kind == cst_aux_tl_write && t->ktime[i]) {
			/* in unsigned arithmetic, which wraps: a stream's times are the
			 * file's word (the fuzzer found 2^63 - 1 - 51017 here) */
			int64_t d = (int64_t)(t->ev[i].found + t->t0 - t->ktime[i]);

			if (d < off)
				off = d;
		}
	if (off == INT64_MAX)
		return;
	t->info.has_kernel_time = true;
	t->info.kernel_base = (int64_t)(t->t0 - (uint64_t)off);
	for (int r = 0; r < t->info.nrings; r++)
		prev[r] = t->st[r].prev_read;
	for (uint64_t i = 0; i < t->info.nevents; i++) {
		struct cst_aux_tl_event *e = &t->ev[i];

		if (e->kind == cst_aux_tl_read) {
			prev[e->ring] = e->time;
		} else if (e->kind == cst_aux_tl_write && t->ktime[i]) {
			int64_t est = (int64_t)(t->ktime[i] + (uint64_t)off - t->t0);

			if (est < (int64_t)prev[e->ring])
				est = (int64_t)prev[e->ring];
			if (est > (int64_t)e->found)
				est = (int64_t)e->found;
			e->time = (uint64_t)est;
		}
	}
}

static int cmp_event(const void *a, const void *b)
{
	const struct cst_aux_tl_event *x = a, *y = b;

	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	/* same time: a write before the read that found it */
	return x < y ? -1 : x > y;
}

int cst_aux_timeline_build(struct cst_aux_timeline **out, const char *stream,
			   const struct cst_log *log)
{
	struct cst_auxlog_reader_opts ro = {.sz = sizeof(ro), .log = log};
	struct cst_auxlog_reader *rd = NULL;
	struct cst_auxlog_event ev;
	struct cst_aux_timeline *t;
	int err;

	if (!out || !stream)
		return -cste_invalid;
	*out = NULL;
	t = calloc(1, sizeof(*t));
	if (!t)
		return -cste_nomem;
	err = cst_auxlog_reader_open(&rd, stream, &ro);
	while (!err && !(err = cst_auxlog_reader_next(rd, &ev))) {
		err = take_event(t, &ev);
		if (err == -cste_format)
			cst_logf(log, cst_log_error, "%s: offset 0x%llx: a %s event for a ring the "
						     "stream did not set up (or set up twice)",
				 stream, (unsigned long long)ev.offset,
				 cst_auxlog_type_name(ev.type));
	}
	t->info.end_offset = cst_auxlog_reader_offset(rd);
	cst_auxlog_reader_free(rd);
	if (err == -cste_eos || err == -cste_truncated)
		err = 0;
	if (!err && !t->info.nrings) {
		cst_logf(log, cst_log_error, "%s: no ring in the stream (it ends at offset 0x%llx)",
			 stream, (unsigned long long)t->info.end_offset);
		err = -cste_no_trace;
	}
	if (err) {
		cst_aux_timeline_free(t);
		return err;
	}
	for (int i = 0; i < t->info.nrings; i++) {
		struct ring_state *s = &t->st[i];

		if (!t->rings[i].overwrite)
			t->rings[i].unreported = uncovered(s->copied, s->ncopied, s->written,
							   s->nwritten, &t->rings[i].unreported_start);
	}
	place_writes(t);
	if (t->info.nevents) /* a stream of rings only has none (and ev is NULL) */
		qsort(t->ev, t->info.nevents, sizeof(*t->ev), cmp_event);
	free(t->ktime);
	t->ktime = NULL;
	*out = t;
	return 0;
}

struct cst_aux_tl_info cst_aux_timeline_get_info(const struct cst_aux_timeline *t)
{
	struct cst_aux_tl_info none = {0};

	return t ? t->info : none;
}

const struct cst_aux_tl_ring *cst_aux_timeline_ring(const struct cst_aux_timeline *t, int i)
{
	return t && i >= 0 && i < t->info.nrings ? &t->rings[i] : NULL;
}

const struct cst_aux_tl_event *cst_aux_timeline_event(const struct cst_aux_timeline *t,
						      uint64_t i)
{
	return t && i < t->info.nevents ? &t->ev[i] : NULL;
}

/* 1536 -> "1536 bytes (1.5 KiB)": exact for scripts, readable for people */
static const char *human(uint64_t v, char *buf, size_t size)
{
	if (v < 1024)
		snprintf(buf, size, "%llu bytes", (unsigned long long)v);
	else if (v < (1 << 20))
		snprintf(buf, size, "%llu bytes (%.1f KiB)", (unsigned long long)v,
			 (double)v / 1024);
	else
		snprintf(buf, size, "%llu bytes (%.1f MiB)", (unsigned long long)v,
			 (double)v / (1 << 20));
	return buf;
}

const char *cst_aux_timeline_verdict(const struct cst_aux_timeline *t, int i, char *buf,
				     size_t size)
{
	const struct cst_aux_tl_ring *g = cst_aux_timeline_ring(t, i);
	char a[48], b[48], c[48];
	size_t n = 0;

#define SAY(...) (n += (size_t)snprintf(buf + n, n < size ? size - n : 0, __VA_ARGS__))
	if (!buf || !size)
		return "";
	buf[0] = 0;
	if (!g)
		return buf;
	SAY("the kernel wrote %llu time(s), %s; the consumer read %llu time(s), copying %s.",
	    (unsigned long long)g->writes, human(g->written, a, sizeof(a)),
	    (unsigned long long)g->reads, human(g->copied, b, sizeof(b)));
	if (g->overwrite) {
		SAY(" %llu snapshot(s); the most new trace between two was %s of a %s ring",
		    (unsigned long long)g->snapshots, human(g->peak_backlog, a, sizeof(a)),
		    human(g->aux_size, b, sizeof(b)));
		if (g->overwritten)
			SAY(": %s lost, overwritten before a snapshot read it (the window is "
			    "smaller than the trace made between snapshots: a bigger --snapshot "
			    "size or more frequent snapshots keep it).",
			    human(g->overwritten, c, sizeof(c)));
		else
			SAY(": nothing overwritten.");
	} else {
		SAY(" The consumer fell behind by up to %s of a %s ring (%.0f%%) at %.6f s",
		    human(g->peak_backlog, a, sizeof(a)), human(g->aux_size, b, sizeof(b)),
		    g->aux_size ? 100.0 * (double)g->peak_backlog / (double)g->aux_size : 0.0,
		    (double)g->peak_time / 1e9);
		if (g->nlatency)
			SAY("; wake-up to read took up to %.1f us (mean %.1f us)",
			    (double)g->max_latency / 1e3,
			    (double)g->sum_latency / (double)g->nlatency / 1e3);
		SAY(".");
		if (g->truncated) {
			char words[512];

			/* the words the record summary uses: one diagnosis */
			SAY(" %s", cst_aux_truncation_words(g->truncated, g->empty_truncated,
							    t->st[i].truncated_late, words,
							    sizeof(words)));
			SAY(" the event was re-enabled %llu time(s)%s.",
			    (unsigned long long)g->reenables,
			    g->reenable_failures ? ", some refused: trace stayed off" : "");
		} else {
			SAY(" No truncation.");
		}
		if (g->unreported)
			SAY(" %s copied that no AUX record reports, from AUX position 0x%llx.",
			    human(g->unreported, a, sizeof(a)),
			    (unsigned long long)g->unreported_start);
	}
	if (g->collision || g->partial)
		SAY(" %llu collision(s), %llu partial record(s).", (unsigned long long)g->collision,
		    (unsigned long long)g->partial);
	if (g->lost_records)
		SAY(" The data ring dropped %llu record(s) (%llu LOST): sideband or AUX records "
		    "are missing.",
		    (unsigned long long)g->lost_events, (unsigned long long)g->lost_records);
	if (g->unwritten)
		SAY(" The output refused %s (the disk was full).", human(g->unwritten, a, sizeof(a)));
	if (!g->truncated && !g->overwritten && !g->lost_records && !g->unwritten &&
	    !g->unreported)
		SAY(" Nothing lost.");
#undef SAY
	return buf;
}
