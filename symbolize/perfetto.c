/* The timeline view: call events as Chrome trace-event JSON. Each frame becomes a
 * complete ("X") slice when it exits, so slices nest exactly as the stack did;
 * the clock rules are in symbolize.h. A size limit keeps the file loadable (a
 * 59 M-instruction run made 557 MB of 4.46 M slices, more than the UI takes):
 * the events wait in a temporary file, counted by how many instructions each
 * slice spans (log2 classes), and at the end the smallest classes that do not
 * fit are left out, the rest copied, with a note of what was left out. A
 * frame's callees span no more than it does: what is kept still nests. */
#include "cstrace/symbolize.h"
#include "report_view.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#define NIDS 128

struct pthread {
	uint64_t *start;           /* ns at which each stack level was entered */
	uint64_t *start_icount;    /* and the trace ID's instructions then */
	size_t cap, icap;
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
	const char *how;           /* cst_call_frame_how_name: the category */
	uint64_t entry;
	bool valid;
	uint8_t name_len, args_len; /* "name","cat":"..." and ,"args":{...,"entry":"0x..." */
	char b[MEMO_BYTES];
};

/* Slices are most of the file (a million calls make a million slices): each is
 * formatted straight into a buffer of OUT_SIZE, written when it fills. A slice
 * takes at most SLICE_MAX bytes: names are cut at NAME_MAX, the other fields are
 * bounded. */
#define OUT_SIZE (256u << 10)
#define NAME_MAX_BYTES 768
#define SLICE_MAX 4096

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
	struct cst_line line;      /* a frame's name and args, when not memoized */
	struct frame_memo *memo;   /* MEMO of them */
	char *out;                 /* OUT_SIZE bytes of events not yet written */
	size_t out_n;
	/* the limits, and with max_bytes the events waiting: each as a class byte
	 * (its slice's log2 instructions + 1; KEEP for the others), a 4-byte
	 * length and the event without its separator */
	uint64_t min_insns, max_bytes;
	uint32_t max_depth;
	FILE *spool;
	uint64_t class_bytes[66], class_n[66];
	struct cst_perfetto_stats st;
	/* the element of the last loss place (elements are delivered in a
	 * buffer that is used again, so it is known by what it is): the gaps it
	 * makes are loss */
	struct {
		uint64_t offset;
		uint32_t fragment;
		enum cst_elem_type type;
		enum cst_gap_reason gap;
		uint8_t trace_id;
		bool set;
	} lost;
};

#define KEEP 65 /* a class no size limit leaves out (instants) */

int cst_perfetto_alloc(struct cst_perfetto **out, FILE *f, const struct cst_perfetto_opts *opts)
{
	struct cst_perfetto_opts o;
	struct cst_perfetto *pw;

	if (!out || !f || cst_opts_load(&o, sizeof(o), opts, "cst_perfetto_opts", NULL) < 0)
		return -cste_invalid;
	pw = calloc(1, sizeof(*pw));
	if (pw) {
		pw->memo = calloc(MEMO, sizeof(*pw->memo));
		pw->out = malloc(OUT_SIZE);
	}
	if (!pw || !pw->memo || !pw->out) {
		if (pw) {
			free(pw->memo);
			free(pw->out);
		}
		free(pw);
		return -cste_nomem;
	}
	pw->f = f;
	pw->sym = o.sym;
	pw->perf_clock = o.perf_clock;
	pw->min_insns = o.min_insns;
	pw->max_bytes = o.max_bytes;
	pw->max_depth = o.max_depth;
	pw->first = true;
	if (o.max_bytes && !(pw->spool = tmpfile())) {
		free(pw->memo);
		free(pw->out);
		free(pw);
		return -cste_io;
	}
	if (fputs("{\"traceEvents\":[", f) == EOF) {
		if (pw->spool)
			fclose(pw->spool);
		free(pw->memo);
		free(pw->out);
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
	for (size_t i = 0; i < pw->tcap; i++) {
		free(pw->threads[i].start);
		free(pw->threads[i].start_icount);
	}
	free(pw->threads);
	if (pw->spool)
		fclose(pw->spool);
	free(pw->memo);
	free(pw->out);
	free(pw);
}

/* Write the events formatted so far (to the spool while one is waiting). */
static void flush_out(struct cst_perfetto *pw)
{
	FILE *to = pw->spool ? pw->spool : pw->f;

	if (pw->out_n && fwrite_unlocked(pw->out, 1, pw->out_n, to) != pw->out_n)
		pw->io_error = true;
	if (!pw->spool)
		pw->st.bytes += pw->out_n;
	pw->out_n = 0;
}

/* Where the next event (at most SLICE_MAX bytes) goes: after the separator, or
 * in the spool after the class byte and room for its length. */
static char *event_at(struct cst_perfetto *pw, unsigned cls)
{
	char *p;

	if (pw->out_n + SLICE_MAX > OUT_SIZE)
		flush_out(pw);
	p = pw->out + pw->out_n;
	if (pw->spool) {
		*p = (char)cls;
		return p + 5;
	}
	if (!pw->first)
		*p++ = ',';
	*p++ = '\n';
	pw->first = false;
	return p;
}

/* The event formatted up to @end is complete. */
static void event_end(struct cst_perfetto *pw, char *end)
{
	if (pw->spool) {
		char *rec = pw->out + pw->out_n;
		uint32_t len = (uint32_t)(end - rec - 5);
		unsigned cls = (unsigned char)rec[0];

		memcpy(rec + 1, &len, 4);
		pw->class_bytes[cls] += len + 2; /* its separator in the file */
		pw->class_n[cls]++;
	}
	pw->out_n = (size_t)(end - pw->out);
}

/* The log2 class of a slice that spans @n instructions: 0 for none. */
static unsigned insn_class(uint64_t n)
{
	unsigned c = 0;

	while (n) {
		c++;
		n >>= 1;
	}
	return c;
}

#define PUT_LIT(p, s) (memcpy((p), (s), sizeof(s) - 1), (p) + sizeof(s) - 1)

static char *put_udec(char *p, uint64_t v)
{
	char d[20];
	int i = 20;

	do
		d[--i] = (char)('0' + v % 10);
	while ((v /= 10));
	memcpy(p, d + i, (size_t)(20 - i));
	return p + 20 - i;
}

/* Microseconds, the format's unit, with the nanoseconds kept. */
static char *put_us(char *p, uint64_t ns)
{
	unsigned r = (unsigned)(ns % 1000);

	p = put_udec(p, ns / 1000);
	p[0] = '.';
	p[1] = (char)('0' + r / 100);
	p[2] = (char)('0' + r / 10 % 10);
	p[3] = (char)('0' + r % 10);
	return p + 4;
}

/* A JSON string of at most @max bytes of @s. */
static void l_json(struct cst_line *l, const char *s, size_t max)
{
	static const char hex[] = "0123456789abcdef";
	size_t end = l->n + max;

	cst_line_char(l, '"');
	for (; s && *s && l->n < end; s++) {
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

/* A slice's ,"pid":P,"tid":T,"ts": formatted once per thread (and again when
 * they change). */
static char *put_ids(char *p, struct pthread *t)
{
	if (!t->ids_len || t->ids_pid != t->pid || t->ids_tid != t->tid) {
		int n = snprintf(t->ids, sizeof(t->ids), ",\"pid\":%" PRId32 ",\"tid\":%" PRId32
			",\"ts\":", t->pid, t->tid);

		t->ids_len = (uint8_t)n; /* at most 42 bytes of 48 */
		t->ids_pid = t->pid;
		t->ids_tid = t->tid;
	}
	memcpy(p, t->ids, t->ids_len);
	return p + t->ids_len;
}

/* A frame's name and category ("name","cat":"how"), then its args but the cut
 * that ends some (,"args":{"dso":...). The entry address only where it is not the
 * function's (a jump into it, or a frame running when trace began): a tenth of a
 * 300 MB timeline was the same address twice. The category says how the frame
 * began, so the args need not say whether it was a call. */
struct frame_text {
	const char *b;
	size_t name_len, args_len;
};

static struct frame_text frame_text(struct cst_perfetto *pw, const struct cst_call_frame *fr)
{
	struct frame_memo *m = &pw->memo[(fr->entry ^ (fr->entry >> 10)) % MEMO];
	const char *how = cst_call_frame_how_name(fr);
	struct cst_line *l = &pw->line;
	size_t nn, na;

	if (m->valid && m->entry == fr->entry && m->func == fr->func && m->dso == fr->dso &&
	    m->how == how)
		return (struct frame_text){m->b, m->name_len, m->args_len};
	cst_line_reset(l);
	l_json(l, cst_call_frame_name(fr), NAME_MAX_BYTES);
	cst_line_str(l, ",\"cat\":\"", 0);
	cst_line_str(l, how, 0);
	cst_line_char(l, '"');
	nn = l->n;
	cst_line_str(l, ",\"args\":{\"dso\":", 0);
	l_json(l, base_name(fr->dso), NAME_MAX_BYTES - 128);
	if (fr->func) {
		/* hex, as the entry is (JSON numbers lose digits past 2^53) */
		cst_line_str(l, ",\"addr\":\"0x", 0);
		cst_line_hex(l, fr->func->addr, 0, 0, 0);
		cst_line_char(l, '"');
	}
	if (!fr->func || fr->entry != fr->func->addr) {
		cst_line_str(l, ",\"entry\":\"0x", 0);
		cst_line_hex(l, fr->entry, 0, 0, 0);
		cst_line_char(l, '"');
	}
	na = l->n - nn;
	m->valid = nn + na <= sizeof(m->b);
	if (!m->valid)
		return (struct frame_text){l->b, nn, na};
	*m = (struct frame_memo){fr->func, fr->dso, how, fr->entry, true, (uint8_t)nn,
				 (uint8_t)na, {0}};
	memcpy(m->b, l->b, nn + na);
	return (struct frame_text){m->b, nn, na};
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

static int32_t pid_of(const struct cst_call_event *ev)
{
	return ev->pid >= 0 ? ev->pid : 0;
}

static int32_t tid_of(const struct cst_call_event *ev)
{
	return ev->tid >= 0 ? ev->tid : (int32_t)ev->trace_id;
}

/* Why a gap emptied a stack: lost trace (the element of a loss place), trace
 * its filter switched off (or a debug halt), or another gap (code that could
 * not be followed, a thread that may have run unseen). */
static bool is_lost_elem(const struct cst_perfetto *pw, const struct cst_elem *e)
{
	return pw->lost.set && e->offset == pw->lost.offset && e->fragment == pw->lost.fragment &&
	       e->type == pw->lost.type && e->gap == pw->lost.gap &&
	       e->trace_id == pw->lost.trace_id;
}

static const char *gap_name(const struct cst_perfetto *pw, const struct cst_elem *e)
{
	if (e && is_lost_elem(pw, e))
		return "trace lost";
	if (e && e->type == cst_elem_trace_on &&
	    (e->gap == cst_gap_filter || e->gap == cst_gap_debug))
		return "trace off";
	return "trace gap";
}

static char *put_cut(const struct cst_perfetto *pw, char *p, const struct cst_elem *e)
{
	const char *n = gap_name(pw, e);

	p = PUT_LIT(p, ",\"cut\":\"");
	memcpy(p, n, strlen(n));
	p += strlen(n);
	*p++ = '"';
	return p;
}

/* The complete slice of a frame that exits at @ns. */
static void put_slice(struct cst_perfetto *pw, struct pthread *t, const struct cst_call_event *ev,
		      uint64_t ns)
{
	struct frame_text ft;
	uint64_t start = t->start[ev->depth - 1];
	uint64_t insns = ev->icount - t->start_icount[ev->depth - 1];
	char *p;

	if (pw->max_depth && ev->depth > pw->max_depth) {
		pw->st.deep++;
		return;
	}
	if (insns < pw->min_insns) {
		pw->st.small++;
		return;
	}
	ft = frame_text(pw, ev->frame);
	p = event_at(pw, insn_class(insns));

	p = PUT_LIT(p, "{\"ph\":\"X\",\"name\":");
	memcpy(p, ft.b, ft.name_len);
	p += ft.name_len;
	p = put_ids(p, t);
	p = put_us(p, start);
	p = PUT_LIT(p, ",\"dur\":");
	p = put_us(p, ns - start);
	memcpy(p, ft.b + ft.name_len, ft.args_len);
	p += ft.args_len;
	if (ev->end == cst_call_end_gap)
		p = put_cut(pw, p, ev->elem);
	else if (ev->end == cst_call_end_eot)
		p = PUT_LIT(p, ",\"cut\":\"trace ended\"");
	p = PUT_LIT(p, "}}");
	event_end(pw, p);
	pw->st.slices++;
}

/* An instant where a gap that lost nothing emptied a stack (a place of loss
 * has its own, cst_perfetto_add_lost). */
static void put_gap(struct cst_perfetto *pw, struct pthread *t, const struct cst_elem *e,
		    uint64_t ns)
{
	const char *n = gap_name(pw, e);
	char *p;

	if (!strcmp(n, "trace lost"))
		return;
	p = event_at(pw, KEEP);
	p = PUT_LIT(p, "{\"ph\":\"i\",\"s\":\"t\",\"name\":\"");
	memcpy(p, n, strlen(n));
	p += strlen(n);
	p = PUT_LIT(p, "\",\"cat\":\"gap\"");
	p = put_ids(p, t);
	p = put_us(p, ns);
	*p++ = '}';
	event_end(pw, p);
}

/* An instant where an address filter turned tracing off (no loss). */
static void put_off(struct cst_perfetto *pw, struct pthread *t, uint64_t ns)
{
	char *p = event_at(pw, KEEP);

	p = PUT_LIT(p, "{\"ph\":\"i\",\"s\":\"t\",\"name\":\"trace off\",\"cat\":\"filter\"");
	p = put_ids(p, t);
	p = put_us(p, ns);
	*p++ = '}';
	event_end(pw, p);
}

int cst_perfetto_add_lost(struct cst_perfetto *pw, const struct cst_loss_gap *g)
{
	struct clock *c;
	char what[96];
	uint64_t ns;
	char *p;

	if (!pw || !g)
		return -cste_invalid;
	pw->lost.set = !!g->elem;
	if (g->elem) {
		pw->lost.offset = g->elem->offset;
		pw->lost.fragment = g->elem->fragment;
		pw->lost.type = g->elem->type;
		pw->lost.gap = g->elem->gap;
		pw->lost.trace_id = g->elem->trace_id;
	}
	/* where the trace ID's clock stands: after the last code traced before the
	 * loss, or at a later timestamp the gap came with; at the end of the
	 * stream (no element: its thread unknown), after everything, on all tracks */
	c = &pw->clocks[g->trace_id & (NIDS - 1)];
	ns = c->last;
	for (unsigned i = 0; !g->elem && i < NIDS; i++)
		ns = pw->clocks[i].last > ns ? pw->clocks[i].last : ns;
	if (g->time && g->time > ns && (!c->seen || g->time != c->time)) {
		ns = g->time;
		pw->any_time = true;
	}
	c->last = ns;
	cst_loss_format_gap(g, what, sizeof(what));
	p = event_at(pw, KEEP);
	p += sprintf(p, "{\"ph\":\"i\",\"s\":\"%c\",\"name\":\"trace lost\",\"cat\":\"loss\","
			"\"pid\":%" PRId32 ",\"tid\":%" PRId32 ",\"ts\":",
		     g->elem ? 't' : 'g', g->pid >= 0 ? g->pid : 0,
		     g->tid >= 0 ? g->tid : (int32_t)g->trace_id);
	p = put_us(p, ns);
	p += sprintf(p, ",\"args\":{\"lost\":\"%s\",\"cpu\":%" PRId32 ",\"trace_id\":%u",
		     what, g->cpu, (unsigned)g->trace_id);
	if (!g->bytes_unknown)
		p += sprintf(p, ",\"bytes\":%" PRIu64, g->bytes);
	else if (g->bytes)
		p += sprintf(p, ",\"at_least_bytes\":%" PRIu64, g->bytes);
	p = PUT_LIT(p, "}}");
	event_end(pw, p);
	return pw->io_error ? -cste_io : 0;
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
	if (ev->elem && pw->lost.set && !is_lost_elem(pw, ev->elem))
		pw->lost.set = false; /* past the loss's element */
	t = &pw->threads[ev->thread];
	t->used = true;
	t->pid = pid_of(ev);
	t->tid = tid_of(ev);
	ns = now(pw, ev);
	switch (ev->kind) {
	case cst_call_enter:
		if (CST_GROW(t->start, t->cap, ev->depth) < 0 ||
		    CST_GROW(t->start_icount, t->icap, ev->depth) < 0)
			return -cste_nomem;
		t->start[ev->depth - 1] = ns;
		t->start_icount[ev->depth - 1] = ev->icount;
		return 0;
	case cst_call_exit:
		put_slice(pw, t, ev, ns);
		break;
	case cst_call_gap:
		put_gap(pw, t, ev->elem, ns);
		break;
	case cst_call_off:
		put_off(pw, t, ns);
		break;
	default:
		break;
	}
	return pw->io_error ? -cste_io : 0;
}

static void name_event(struct cst_perfetto *pw, const char *what, int32_t pid, int32_t tid,
		       bool thread)
{
	const char *comm = pw->sym ? cst_symbolizer_comm(pw->sym, thread ? tid : pid) : NULL;
	char buf[160], *p;

	if (thread)
		snprintf(buf, sizeof(buf), "%s/%" PRId32, comm ? comm : "thread", tid);
	else
		snprintf(buf, sizeof(buf), "%s %" PRId32, comm ? comm : "process", pid);
	cst_line_reset(&pw->line);
	l_json(&pw->line, buf, sizeof(buf)); /* at most 6 bytes a byte: within SLICE_MAX */
	p = event_at(pw, KEEP);
	p += sprintf(p, "{\"ph\":\"M\",\"name\":\"%s\",\"pid\":%" PRId32, what, pid);
	if (thread)
		p += sprintf(p, ",\"tid\":%" PRId32, tid);
	p = PUT_LIT(p, ",\"args\":{\"name\":");
	memcpy(p, pw->line.b, pw->line.n);
	p += pw->line.n;
	p = PUT_LIT(p, "}}");
	event_end(pw, p);
}

/* Copy the spooled events to the file, leaving out the smallest slices as far
 * as the size limit needs (the thread names and the end take a little more). */
static void unspool(struct cst_perfetto *pw)
{
	uint64_t all = 0, budget = pw->max_bytes > (64u << 10) ? pw->max_bytes - (64u << 10) : 0;
	unsigned cut = 0;
	uint32_t len;
	int cls;
	char *buf;

	flush_out(pw);
	for (unsigned c = 0; c <= KEEP; c++)
		all += pw->class_bytes[c];
	/* the classes from the bottom up, until the rest fits */
	while (all > budget && cut < KEEP) {
		all -= pw->class_bytes[cut];
		pw->st.cut += pw->class_n[cut];
		pw->st.cut_bytes += pw->class_bytes[cut];
		cut++;
	}
	pw->st.cut_below = pw->st.cut && cut ? 1ull << (cut - 1) : 0;
	pw->st.slices -= pw->st.cut;
	buf = malloc(SLICE_MAX);
	if (!buf || fseek(pw->spool, 0, SEEK_SET) < 0) {
		free(buf);
		pw->io_error = true;
		return;
	}
	while ((cls = getc(pw->spool)) != EOF && fread(&len, 4, 1, pw->spool) == 1 &&
	       len <= SLICE_MAX && fread(buf, 1, len, pw->spool) == len) {
		if ((unsigned)cls < cut)
			continue;
		if ((!pw->first && fputc(',', pw->f) == EOF) || fputc('\n', pw->f) == EOF ||
		    fwrite_unlocked(buf, 1, len, pw->f) != len)
			pw->io_error = true;
		pw->st.bytes += len + 1 + !pw->first;
		pw->first = false;
	}
	if (ferror(pw->spool))
		pw->io_error = true;
	free(buf);
	fclose(pw->spool);
	pw->spool = NULL;
}

int cst_perfetto_get_stats(const struct cst_perfetto *pw, struct cst_perfetto_stats *st)
{
	if (!pw || !st)
		return -cste_invalid;
	*st = pw->st;
	return 0;
}

int cst_perfetto_finish(struct cst_perfetto *pw)
{
	char note[512] = "";

	if (!pw)
		return -cste_invalid;
	if (pw->spool)
		unspool(pw);
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
	flush_out(pw);
	/* what was left out, and what would keep it */
	if (pw->st.cut)
		snprintf(note, sizeof(note),
			 "%" PRIu64 " slices of fewer than %" PRIu64 " instructions (%.1f MB), to keep "
			 "the file under %" PRIu64 " KiB (report --max-size 0 keeps them; --min-insns, "
			 "--max-depth, --tid and --time choose what to show)",
			 pw->st.cut, pw->st.cut_below, (double)pw->st.cut_bytes / 1e6,
			 pw->max_bytes >> 10);
	if (pw->st.small || pw->st.deep)
		snprintf(note + strlen(note), sizeof(note) - strlen(note),
			 "%s%" PRIu64 " slices under --min-insns %" PRIu64 ", %" PRIu64
			 " deeper than --max-depth %u",
			 note[0] ? "; " : "", pw->st.small, pw->min_insns, pw->st.deep, pw->max_depth);
	fprintf(pw->f,
		"\n],\"displayTimeUnit\":\"ns\",\"otherData\":{\"producer\":\"cstrace\","
		"\"clock\":\"%s\",\"left_out\":\"%s\"}}\n",
		!pw->any_time   ? "instructions: 1 ns per instruction"
		: pw->perf_clock ? "trace timestamps on perf's clock (TIME_CONV) plus 1 ns per "
				   "instruction"
				 : "trace timestamps in the ETM's counter ticks (no TIME_CONV converts "
				   "them: 1 tick shown as 1 ns) plus 1 ns per instruction",
		note[0] ? note : "nothing");
	return pw->io_error || ferror(pw->f) ? -cste_io : 0;
}

/* report --format=perfetto: the timeline was written while the trace decoded
 * (to the view's stream), only its end is left */
int sym_report_write_perfetto(struct cst_report_view *v, FILE *f)
{
	(void)f;
	return cst_perfetto_finish(v->timeline);
}
