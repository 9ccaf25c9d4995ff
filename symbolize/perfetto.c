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
	/* ,"pid":P,"tid":T,"ts": as last formatted, and for which pid and tid */
	int32_t ids_pid, ids_tid;
	uint8_t ids_len;
	char ids[48];
};

struct clock {
	uint64_t time, icount;     /* the latest timestamp and the icount it came at */
	uint64_t last;             /* latest ns given out */
	bool seen;
};

/* The parts of a slice that only depend on its frame (name, category and args),
 * as they were formatted last time, by entry address: a loop calls the same
 * few functions a million times, and escaping and formatting those was most of
 * the cost of a slice. */
#define MEMO 1024
#define MEMO_BYTES 240
struct frame_memo {
	const struct cst_sym_func *func;
	const char *dso;
	uint64_t entry;
	bool call, exception, valid;
	uint8_t name_len, args_len; /* "name","cat":"..." and ,"args":{...,"entry":"0x..." */
	char b[MEMO_BYTES];
};

struct cst_perfetto {
	FILE *f;
	struct cst_symbolizer *sym;
	struct pthread *threads;
	size_t tcap;
	struct clock clocks[NIDS];
	bool any_time;
	bool perf_clock;           /* times are perf's ns (cst_perfetto_opts) */
	bool first;                /* no event written yet */
	bool io_error;
	struct cst_line line;      /* the slice being built */
	struct frame_memo *memo;   /* MEMO of them */
};

int cst_perfetto_alloc(struct cst_perfetto **out, FILE *f, const struct cst_perfetto_opts *opts)
{
	struct cst_perfetto_opts o;
	struct cst_perfetto *pw;

	if (!out || !f || cst_opts_load(&o, sizeof(o), opts, "cst_perfetto_opts", NULL) < 0)
		return -cste_invalid;
	pw = calloc(1, sizeof(*pw));
	if (pw)
		pw->memo = calloc(MEMO, sizeof(*pw->memo));
	if (!pw || !pw->memo) {
		free(pw);
		return -cste_nomem;
	}
	pw->f = f;
	pw->sym = o.sym;
	pw->perf_clock = o.perf_clock;
	pw->first = true;
	if (fputs("{\"traceEvents\":[", f) == EOF) {
		free(pw->memo);
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
	free(pw->memo);
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

/* Slices are most of the file: each is built in one cst_line and written once,
 * without printf (a million calls make a million slices). */

/* Microseconds, the format's unit, with the nanoseconds kept. */
static void l_us(struct cst_line *l, uint64_t ns)
{
	cst_line_udec(l, ns / 1000, 0);
	cst_line_char(l, '.');
	cst_line_dec(l, (int64_t)(ns % 1000), 3, 1);
}

/* Where a name stops: slices were built in 1 KiB with 256 bytes kept for the
 * fields after the name (names are cut, never the syntax). */
#define NAME_END (1024 - 256)

/* A JSON string. */
static void l_json(struct cst_line *l, const char *s)
{
	static const char hex[] = "0123456789abcdef";

	cst_line_char(l, '"');
	for (; s && *s && l->n < NAME_END; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\') {
			cst_line_char(l, '\\');
			cst_line_char(l, (char)c);
		} else if (c < 0x20) {
			cst_line_str(l, "\\u00", 0);
			cst_line_char(l, hex[c >> 4]);
			cst_line_char(l, hex[c & 15]);
		} else {
			cst_line_char(l, (char)c);
		}
	}
	cst_line_char(l, '"');
}

static const char *base_name(const char *p)
{
	const char *s = p ? strrchr(p, '/') : NULL;

	return s ? s + 1 : p;
}

/* A slice's pid and tid, formatted once per thread (and again when they change). */
static void put_ids(struct cst_line *l, struct pthread *t)
{
	size_t at = l->n;

	if (t->ids_len && t->ids_pid == t->pid && t->ids_tid == t->tid) {
		cst_line_mem(l, t->ids, t->ids_len);
		return;
	}
	cst_line_str(l, ",\"pid\":", 0);
	cst_line_dec(l, t->pid, 0, 0);
	cst_line_str(l, ",\"tid\":", 0);
	cst_line_dec(l, t->tid, 0, 0);
	cst_line_str(l, ",\"ts\":", 0);
	/* at most 42 bytes: it fits, unless the line was cut */
	t->ids_len = l->n - at <= sizeof(t->ids) ? (uint8_t)(l->n - at) : 0;
	memcpy(t->ids, l->b + at, t->ids_len);
	t->ids_pid = t->pid;
	t->ids_tid = t->tid;
}

static bool same_frame(const struct frame_memo *m, const struct cst_call_frame *fr, bool call)
{
	return m->valid && m->entry == fr->entry && m->func == fr->func && m->dso == fr->dso &&
	       m->call == call && m->exception == fr->exception;
}

/* The name and category of a frame's slice. */
static void put_name(struct cst_line *l, const struct cst_call_frame *fr)
{
	l_json(l, cst_call_frame_name(fr));
	cst_line_str(l, fr->exception ? ",\"cat\":\"exception\"" : ",\"cat\":\"call\"", 0);
}

/* Its args, but the cut that ends some. The entry address only where it is not
 * the function's (a jump into it, or a frame running when trace began): a tenth of
 * a 300 MB timeline was the same address twice. */
static void put_args(struct cst_line *l, const struct cst_call_frame *fr, bool call)
{
	cst_line_str(l, ",\"args\":{\"dso\":", 0);
	l_json(l, base_name(fr->dso));
	if (fr->func) {
		cst_line_str(l, ",\"addr\":", 0);
		cst_line_udec(l, fr->func->addr, 0);
	}
	cst_line_str(l, call ? ",\"call\":true" : ",\"call\":false", 0);
	if (!fr->func || fr->entry != fr->func->addr) {
		cst_line_str(l, ",\"entry\":\"0x", 0);
		cst_line_hex(l, fr->entry, 0, 0, 0);
		cst_line_char(l, '"');
	}
}

/* Keep the frame's parts of slice @l (the name at [@name_at, @name_end), the args
 * from @args_at to the end) when they fit, and the line was not cut. */
static void remember(struct frame_memo *m, const struct cst_call_frame *fr, bool call,
		     const struct cst_line *l, size_t name_at, size_t name_end, size_t args_at)
{
	size_t nn = name_end - name_at, na = l->n - args_at;

	m->valid = false;
	if (nn + na > sizeof(m->b) || l->n >= NAME_END)
		return;
	*m = (struct frame_memo){fr->func, fr->dso, fr->entry, call, fr->exception, true,
				 (uint8_t)nn, (uint8_t)na, {0}};
	memcpy(m->b, l->b + name_at, nn);
	memcpy(m->b + nn, l->b + args_at, na);
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
		struct cst_line *l = &pw->line;
		struct frame_memo *m = &pw->memo[(fr->entry ^ (fr->entry >> 10)) % MEMO];
		bool call = cst_call_frame_is_call(fr), hit = same_frame(m, fr, call);
		size_t name_at, name_end, args_at;

		cst_line_reset(l);
		cst_line_str(l, pw->first ? "\n{\"ph\":\"X\",\"name\":" : ",\n{\"ph\":\"X\",\"name\":",
			     0);
		pw->first = false;
		name_at = l->n;
		if (hit)
			cst_line_mem(l, m->b, m->name_len);
		else
			put_name(l, fr);
		name_end = l->n;
		put_ids(l, t);
		l_us(l, start);
		cst_line_str(l, ",\"dur\":", 0);
		l_us(l, ns - start);
		args_at = l->n;
		if (hit)
			cst_line_mem(l, m->b + m->name_len, m->args_len);
		else
			put_args(l, fr, call);
		if (!hit)
			remember(m, fr, call, l, name_at, name_end, args_at);
		if (ev->end == cst_call_end_gap)
			cst_line_str(l, ",\"cut\":\"trace lost\"", 0);
		else if (ev->end == cst_call_end_eot)
			cst_line_str(l, ",\"cut\":\"trace ended\"", 0);
		cst_line_str(l, "}}", 0);
		/* the caller's thread alone writes the file */
		fwrite_unlocked(l->b, 1, l->n, pw->f);
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
		!pw->any_time   ? "instructions: 1 ns per instruction"
		: pw->perf_clock ? "trace timestamps on perf's clock (TIME_CONV) plus 1 ns per "
				   "instruction"
				 : "trace timestamps (raw ticks as ns) plus 1 ns per instruction");
	return ferror(pw->f) ? -cste_io : 0;
}
