/* The timeline view: call events as Chrome trace-event JSON. Each frame becomes a
 * complete ("X") slice when it exits, so slices nest exactly as the stack did;
 * the clock rules are in symbolize.h. */
#include "cstrace/symbolize.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#define NIDS 128

struct pthread {
	uint64_t *start;           /* ns at which each stack level was entered */
	size_t cap;
	int32_t pid, tid;
	bool used;
};

struct clock {
	uint64_t time, icount;     /* the latest timestamp and the icount it came at */
	uint64_t last;             /* latest ns given out */
	bool seen;
};

struct cst_perfetto {
	FILE *f;
	struct cst_symbolizer *sym;
	struct pthread *threads;
	size_t tcap;
	struct clock clocks[NIDS];
	bool any_time;
	bool first;                /* no event written yet */
	bool io_error;
};

int cst_perfetto_alloc(struct cst_perfetto **out, FILE *f, const struct cst_perfetto_opts *opts)
{
	struct cst_perfetto_opts o;
	struct cst_perfetto *pw;

	if (!out || !f || cst_opts_load(&o, sizeof(o), opts, "cst_perfetto_opts", NULL) < 0)
		return -cste_invalid;
	pw = calloc(1, sizeof(*pw));
	if (!pw)
		return -cste_nomem;
	pw->f = f;
	pw->sym = o.sym;
	pw->first = true;
	if (fputs("{\"traceEvents\":[", f) == EOF) {
		free(pw);
		return -cste_io;
	}
	*out = pw;
	return 0;
}

void cst_perfetto_free(struct cst_perfetto *pw)
{
	if (!pw)
		return;
	for (size_t i = 0; i < pw->tcap; i++)
		free(pw->threads[i].start);
	free(pw->threads);
	free(pw);
}

static void put_string(FILE *f, const char *s)
{
	fputc('"', f);
	for (; s && *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

/* Slices are most of the file: each is built in one buffer and written once,
 * without printf (a million calls make a million slices). */
struct line {
	char b[1024];
	size_t n;
};

static void l_raw(struct line *l, const char *s)
{
	size_t k = strlen(s);

	if (k > sizeof(l->b) - l->n)
		k = sizeof(l->b) - l->n;
	memcpy(l->b + l->n, s, k);
	l->n += k;
}

static void l_u64(struct line *l, uint64_t v)
{
	char d[24];
	int i = sizeof(d);

	do
		d[--i] = (char)('0' + v % 10);
	while ((v /= 10));
	if (sizeof(d) - (size_t)i <= sizeof(l->b) - l->n) {
		memcpy(l->b + l->n, d + i, sizeof(d) - (size_t)i);
		l->n += sizeof(d) - (size_t)i;
	}
}

static void l_i32(struct line *l, int32_t v)
{
	if (v < 0) {
		l_raw(l, "-");
		v = -v;
	}
	l_u64(l, (uint64_t)v);
}

/* Microseconds, the format's unit, with the nanoseconds kept. */
static void l_us(struct line *l, uint64_t ns)
{
	char frac[5] = {'.', (char)('0' + ns / 100 % 10), (char)('0' + ns / 10 % 10),
			(char)('0' + ns % 10), 0};

	l_u64(l, ns / 1000);
	l_raw(l, frac);
}

/* A JSON string; leaves room for what follows (names are cut, never the syntax). */
static void l_json(struct line *l, const char *s)
{
	static const char hex[] = "0123456789abcdef";

	l->b[l->n++] = '"';
	for (; s && *s && l->n < sizeof(l->b) - 256; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\') {
			l->b[l->n++] = '\\';
			l->b[l->n++] = (char)c;
		} else if (c < 0x20) {
			memcpy(l->b + l->n, "\\u00", 4);
			l->b[l->n + 4] = hex[c >> 4];
			l->b[l->n + 5] = hex[c & 15];
			l->n += 6;
		} else {
			l->b[l->n++] = (char)c;
		}
	}
	l->b[l->n++] = '"';
}

static void l_hex(struct line *l, uint64_t v)
{
	static const char hex[] = "0123456789abcdef";
	char d[20];
	int i = sizeof(d);

	do
		d[--i] = hex[v & 15];
	while ((v >>= 4));
	d[--i] = 'x';
	d[--i] = '0';
	if (sizeof(d) - (size_t)i <= sizeof(l->b) - l->n) {
		memcpy(l->b + l->n, d + i, sizeof(d) - (size_t)i);
		l->n += sizeof(d) - (size_t)i;
	}
}

static const char *base_name(const char *p)
{
	const char *s = p ? strrchr(p, '/') : NULL;

	return s ? s + 1 : p;
}

static uint64_t now(struct cst_perfetto *pw, const struct cst_call_event *ev)
{
	struct clock *c = &pw->clocks[ev->trace_id & (NIDS - 1)];
	uint64_t ns;

	if (ev->time) {
		pw->any_time = true;
		if (!c->seen || ev->time != c->time) {
			c->time = ev->time;
			c->icount = ev->icount;
			c->seen = true;
		}
		ns = c->time + (ev->icount - c->icount);
	} else {
		ns = ev->icount;
	}
	if (ns < c->last)
		ns = c->last;
	c->last = ns;
	return ns;
}

static void sep(struct cst_perfetto *pw)
{
	if (!pw->first)
		fputc(',', pw->f);
	fputc('\n', pw->f);
	pw->first = false;
}

static int32_t pid_of(const struct cst_call_event *ev)
{
	return ev->pid >= 0 ? ev->pid : 0;
}

static int32_t tid_of(const struct cst_call_event *ev)
{
	return ev->tid >= 0 ? ev->tid : (int32_t)ev->trace_id;
}

int cst_perfetto_add(void *ctx, const struct cst_call_event *ev)
{
	struct cst_perfetto *pw = ctx;
	struct pthread *t;
	uint64_t ns;

	if (!pw || !ev)
		return -cste_invalid;
	if (ev->kind == cst_call_insns)
		return 0;
	if (ev->thread >= pw->tcap) {
		size_t old = pw->tcap;

		if (CST_GROW(pw->threads, pw->tcap, (size_t)ev->thread + 1) < 0)
			return -cste_nomem;
		memset(pw->threads + old, 0, (pw->tcap - old) * sizeof(*pw->threads));
	}
	t = &pw->threads[ev->thread];
	t->used = true;
	t->pid = pid_of(ev);
	t->tid = tid_of(ev);
	ns = now(pw, ev);
	switch (ev->kind) {
	case cst_call_enter:
		if (CST_GROW(t->start, t->cap, ev->depth) < 0)
			return -cste_nomem;
		t->start[ev->depth - 1] = ns;
		return 0;
	case cst_call_exit: {
		const struct cst_call_frame *fr = ev->frame;
		uint64_t start = t->start[ev->depth - 1];
		struct line l;

		l.n = 0;
		l_raw(&l, pw->first ? "\n{\"ph\":\"X\",\"name\":" : ",\n{\"ph\":\"X\",\"name\":");
		pw->first = false;
		l_json(&l, cst_call_frame_name(fr));
		l_raw(&l, fr->exception ? ",\"cat\":\"exception\",\"pid\":" : ",\"cat\":\"call\",\"pid\":");
		l_i32(&l, t->pid);
		l_raw(&l, ",\"tid\":");
		l_i32(&l, t->tid);
		l_raw(&l, ",\"ts\":");
		l_us(&l, start);
		l_raw(&l, ",\"dur\":");
		l_us(&l, ns - start);
		l_raw(&l, ",\"args\":{\"dso\":");
		l_json(&l, base_name(fr->dso));
		if (fr->func) {
			l_raw(&l, ",\"addr\":");
			l_u64(&l, fr->func->addr);
		}
		l_raw(&l, cst_call_frame_is_call(fr) ? ",\"call\":true,\"entry\":\""
						     : ",\"call\":false,\"entry\":\"");
		l_hex(&l, fr->entry);
		l_raw(&l, "\"");
		if (ev->end == cst_call_end_gap)
			l_raw(&l, ",\"cut\":\"trace lost\"");
		else if (ev->end == cst_call_end_eot)
			l_raw(&l, ",\"cut\":\"trace ended\"");
		l_raw(&l, "}}");
		fwrite(l.b, 1, l.n, pw->f);
		break;
	}
	case cst_call_gap:
		sep(pw);
		fprintf(pw->f, "{\"ph\":\"i\",\"s\":\"t\",\"name\":\"trace lost\",\"cat\":\"gap\","
			       "\"pid\":%" PRId32 ",\"tid\":%" PRId32 ",\"ts\":%" PRIu64 ".%03u}",
			t->pid, t->tid, ns / 1000, (unsigned)(ns % 1000));
		break;
	default:
		break;
	}
	if (ferror(pw->f))
		pw->io_error = true;
	return pw->io_error ? -cste_io : 0;
}

static void name_event(struct cst_perfetto *pw, const char *what, int32_t pid, int32_t tid,
		       bool thread)
{
	const char *comm = pw->sym ? cst_symbolizer_comm(pw->sym, thread ? tid : pid) : NULL;
	char buf[160];

	if (thread)
		snprintf(buf, sizeof(buf), "%s/%" PRId32, comm ? comm : "thread", tid);
	else
		snprintf(buf, sizeof(buf), "%s %" PRId32, comm ? comm : "process", pid);
	sep(pw);
	fprintf(pw->f, "{\"ph\":\"M\",\"name\":\"%s\",\"pid\":%" PRId32, what, pid);
	if (thread)
		fprintf(pw->f, ",\"tid\":%" PRId32, tid);
	fputs(",\"args\":{\"name\":", pw->f);
	put_string(pw->f, buf);
	fputs("}}", pw->f);
}

int cst_perfetto_finish(struct cst_perfetto *pw)
{
	if (!pw)
		return -cste_invalid;
	for (size_t i = 0; i < pw->tcap; i++) {
		const struct pthread *t = &pw->threads[i];
		bool pid_named = false;

		if (!t->used)
			continue;
		for (size_t k = 0; k < i; k++)
			if (pw->threads[k].used && pw->threads[k].pid == t->pid)
				pid_named = true;
		if (!pid_named)
			name_event(pw, "process_name", t->pid, t->tid, false);
		name_event(pw, "thread_name", t->pid, t->tid, true);
	}
	fprintf(pw->f,
		"\n],\"displayTimeUnit\":\"ns\",\"otherData\":{\"producer\":\"cstrace\","
		"\"clock\":\"%s\"}}\n",
		pw->any_time ? "trace timestamps (raw ticks as ns) plus 1 ns per instruction"
			     : "instructions: 1 ns per instruction");
	return ferror(pw->f) ? -cste_io : 0;
}
