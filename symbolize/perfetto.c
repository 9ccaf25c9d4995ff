/* The timeline view: call events as Chrome trace-event JSON. Each frame becomes a
 * complete ("X") slice when it exits, so slices nest exactly as the stack did;
 * the clock rules are in symbolize.h. A size limit keeps the file loadable (a
 * 59 M-instruction run made 557 MB of 4.46 M slices, more than the UI takes):
 * the events wait in a temporary file, counted by how many instructions each
 * slice spans (log2 classes), and at the end the smallest classes that do not
 * fit are left out, the rest copied, with a note of what was left out. A
 * frame's callees span no more than it does: what is kept still nests. */
#include "cstrace/symbolize.h"
#include "addr_slot.h"
#include "perfetto_int.h"
#include "report_view.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

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

void sym_pf_flush_out(struct cst_perfetto *pw)
{
	FILE *to = pw->spool ? pw->spool : pw->f;

	if (pw->out_n && fwrite_unlocked(pw->out, 1, pw->out_n, to) != pw->out_n)
		pw->io_error = true;
	if (!pw->spool)
		pw->st.bytes += pw->out_n;
	pw->out_n = 0;
}

unsigned sym_pf_insn_class(uint64_t n)
{
	unsigned c = 0;

	while (n) {
		c++;
		n >>= 1;
	}
	return c;
}

void sym_pf_json(struct cst_line *l, const char *s, size_t max)
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
	struct frame_memo *m = &pw->memo[sym_addr_slot(fr->entry, MEMO_BITS)];
	const char *how = cst_call_frame_how_name(fr);
	struct cst_line *l = &pw->line;
	size_t nn, na;

	if (m->valid && m->entry == fr->entry && m->func == fr->func && m->dso == fr->dso &&
	    m->how == how)
		return (struct frame_text){m->b, m->name_len, m->args_len};
	cst_line_reset(l);
	sym_pf_json(l, cst_call_frame_name(fr), NAME_MAX_BYTES);
	cst_line_str(l, ",\"cat\":\"", 0);
	cst_line_str(l, how, 0);
	cst_line_char(l, '"');
	nn = l->n;
	cst_line_str(l, ",\"args\":{\"dso\":", 0);
	sym_pf_json(l, cst_path_base(fr->dso), NAME_MAX_BYTES - 128);
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
	p = pf_event_at(pw, sym_pf_insn_class(insns));

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
	pf_event_end(pw, p);
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
	p = pf_event_at(pw, KEEP);
	p = PUT_LIT(p, "{\"ph\":\"i\",\"s\":\"t\",\"name\":\"");
	memcpy(p, n, strlen(n));
	p += strlen(n);
	p = PUT_LIT(p, "\",\"cat\":\"gap\"");
	p = put_ids(p, t);
	p = put_us(p, ns);
	*p++ = '}';
	pf_event_end(pw, p);
}

/* An instant where an address filter turned tracing off (no loss). */
static void put_off(struct cst_perfetto *pw, struct pthread *t, uint64_t ns)
{
	char *p = pf_event_at(pw, KEEP);

	p = PUT_LIT(p, "{\"ph\":\"i\",\"s\":\"t\",\"name\":\"trace off\",\"cat\":\"filter\"");
	p = put_ids(p, t);
	p = put_us(p, ns);
	*p++ = '}';
	pf_event_end(pw, p);
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
	p = pf_event_at(pw, KEEP);
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
	pf_event_end(pw, p);
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
