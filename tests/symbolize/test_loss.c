/* The loss model on a hand-made element stream, through the symbolizer (which
 * gives lost sideband to the next element of its CPU) and the views that say it:
 * trace switched off and on by its filter is never lost trace; an overflow's
 * NO_SYNC and TRACE_ON are one place; a TRUNCATED AUX record and the bytes the
 * file does not hold are one place with the NO_SYNC that starts the trace after
 * them, and only on their CPU; a resync is a place. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cstrace/symbolize.h"
#include "test.h"

/* One step of the stream: an element, or (sb) lost sideband before the next. */
struct step {
	enum cst_elem_type type;
	enum cst_gap_reason gap;
	uint64_t start, end;       /* ranges: [start, end), ending in @cls */
	enum cst_insn_subclass sub;
	int32_t cpu;
	enum cst_sb_loss sb;       /* with type unknown: a cst_sb_lost record */
	uint64_t bytes;
};

#define RANGE(a, b, s) {cst_elem_instr_range, cst_gap_none, a, b, s, 0, 0, 0}
#define GAP(t, g) {t, g, 0, 0, 0, 0, 0, 0}
#define LOST(cpu, what, n) {cst_elem_unknown, cst_gap_none, 0, 0, 0, cpu, what, n}

/* main (0x1000) calls f (0x2000) in a loop; the gaps come between. */
static const struct step stream[] = {
	GAP(cst_elem_no_sync, cst_gap_init),
	GAP(cst_elem_trace_on, cst_gap_filter),
	RANGE(0x1000, 0x1010, cst_insn_sub_link),
	RANGE(0x2000, 0x2010, cst_insn_sub_none),
	/* an address filter's re-entry, no exception: not lost */
	GAP(cst_elem_trace_on, cst_gap_filter),
	RANGE(0x1010, 0x1020, cst_insn_sub_link),
	RANGE(0x2000, 0x2010, cst_insn_sub_none),
	/* an overflow: said twice, one place */
	GAP(cst_elem_no_sync, cst_gap_overflow),
	GAP(cst_elem_trace_on, cst_gap_overflow),
	RANGE(0x1020, 0x1030, cst_insn_sub_link),
	/* a TRUNCATED AUX record with 4096 bytes the file lacks, and one of CPU 1 */
	LOST(0, cst_sb_loss_truncated, 0),
	LOST(0, cst_sb_loss_missing, 4096),
	LOST(1, cst_sb_loss_truncated, 0),
	GAP(cst_elem_no_sync, cst_gap_reset),
	RANGE(0x1030, 0x1040, cst_insn_sub_link),
	RANGE(0x2000, 0x2010, cst_insn_sub_none),
	/* bad packets */
	GAP(cst_elem_no_sync, cst_gap_resync),
	RANGE(0x1040, 0x1050, cst_insn_sub_none),
	/* trace the file does not hold, known in bytes only */
	LOST(0, cst_sb_loss_overwritten, 1000),
	GAP(cst_elem_no_sync, cst_gap_reset),
	RANGE(0x1050, 0x1060, cst_insn_sub_none),
	/* perf lost sideband records: not trace */
	LOST(0, cst_sb_loss_records, 3),
	RANGE(0x1060, 0x1070, cst_insn_sub_none),
};

/* The filter-only stream: its gaps lose nothing. */
static const struct step filtered[] = {
	GAP(cst_elem_no_sync, cst_gap_init),
	GAP(cst_elem_trace_on, cst_gap_filter),
	RANGE(0x1000, 0x1010, cst_insn_sub_link),
	RANGE(0x2000, 0x2010, cst_insn_sub_none),
	GAP(cst_elem_trace_on, cst_gap_filter),
	RANGE(0x1010, 0x1020, cst_insn_sub_link),
	GAP(cst_elem_trace_on, cst_gap_debug),
	RANGE(0x2000, 0x2010, cst_insn_sub_none),
};

/* Two overflows with no code traced between: each NO_SYNC is a loss of its own. */
static const struct step twice[] = {
	GAP(cst_elem_no_sync, cst_gap_overflow),
	GAP(cst_elem_trace_on, cst_gap_overflow),
	GAP(cst_elem_addr_nacc, cst_gap_nacc),
	GAP(cst_elem_no_sync, cst_gap_overflow),
	GAP(cst_elem_trace_on, cst_gap_overflow),
	RANGE(0x1000, 0x1010, cst_insn_sub_none),
};

/* Feed @n steps to @fn through @sym, elements of trace ID 0x10 on CPU 0 (and
 * one of CPU 1, trace ID 0x12, at the end when @cpu1), one thread (7). */
static void feed(struct cst_symbolizer *sym, const struct step *steps, size_t n, bool cpu1,
		 cst_sym_elem_fn fn, void *ctx)
{
	for (size_t i = 0; i <= n; i++) {
		const struct step *s = i < n ? &steps[i] : NULL;
		struct cst_elem e = {.trace_id = 0x10, .pid = 7, .tid = 7, .cpu = 0, .source = -1,
				     .isa = cst_isa_a64, .offset = 16 * i};

		if (!s) {
			if (!cpu1)
				break;
			e = (struct cst_elem){.type = cst_elem_no_sync, .gap = cst_gap_reset,
					      .trace_id = 0x12, .pid = 8, .tid = 8, .cpu = 1,
					      .source = -1, .offset = 16 * i};
		} else if (s->type == cst_elem_unknown) {
			struct cst_sideband sb = {.type = cst_sb_lost, .cpu = s->cpu, .pid = -1,
						  .tid = -1, .lost = s->sb == cst_sb_loss_records
									 ? s->bytes
									 : 1,
						  .loss = s->sb,
						  .lost_bytes = s->sb == cst_sb_loss_records ? 0
											   : s->bytes};

			CHECK_EQ_INT(cst_symbolizer_add_sideband(sym, &sb), 0);
			continue;
		} else {
			e.type = s->type;
			e.gap = s->gap;
			if (s->type == cst_elem_instr_range) {
				e.start = s->start;
				e.end = s->end;
				e.num_insns = (uint32_t)(s->end - s->start) / 4;
				e.last_size = 4;
				e.last_executed = true;
				e.last_class = s->sub == cst_insn_sub_link ? cst_insn_branch
									   : cst_insn_other;
				e.last_subclass = s->sub;
			}
		}
		CHECK_EQ_INT(cst_symbolizer_feed(sym, &e, fn, ctx), 0);
	}
}

/* The model alone: places, what each says, the totals. */
struct places {
	struct cst_loss *loss;
	char said[8][64];
	int n;
};

static int add_place(void *ctx, const struct cst_sym_elem *se)
{
	struct places *p = ctx;
	const struct cst_loss_gap *g;
	int err = cst_loss_add(p->loss, se, 0, &g);

	if (!err && g && p->n < 8) {
		char what[48];

		cst_loss_format_gap(g, what, sizeof(what));
		snprintf(p->said[p->n++], sizeof(p->said[0]), "%llx cpu%d %s",
			 (unsigned long long)g->offset, (int)g->cpu, what);
	}
	return err;
}

static void test_model(void)
{
	struct cst_symbolizer *sym = NULL;
	struct places p = {0};
	struct cst_loss_totals t;
	char line[256];

	CHECK_EQ_INT(cst_symbolizer_alloc(&sym, NULL), 0);
	CHECK_EQ_INT(cst_loss_alloc(&p.loss), 0);
	if (!sym || !p.loss)
		return;
	feed(sym, stream, sizeof(stream) / sizeof(stream[0]), true, add_place, &p);
	CHECK_EQ_INT(p.n, 5);
	/* offsets are 16 per step */
	CHECK_EQ_STR(p.said[0], "70 cpu0 size unknown (overflow)");
	CHECK_EQ_STR(p.said[1], "d0 cpu0 at least 4096 bytes (TRUNCATED)");
	CHECK_EQ_STR(p.said[2], "100 cpu0 size unknown (resync)");
	CHECK_EQ_STR(p.said[3], "130 cpu0 1000 bytes");
	/* CPU 1's TRUNCATED went with CPU 1's element, not CPU 0's */
	CHECK_EQ_STR(p.said[4], "170 cpu1 size unknown (TRUNCATED)");
	CHECK_EQ_INT(cst_loss_get_totals(p.loss, &t), 0);
	CHECK_EQ_INT(t.places, 5);
	CHECK_EQ_INT(t.bytes, 5096);
	CHECK_EQ_INT(t.unknown, 4);
	CHECK_EQ_INT(t.overflows, 1);
	CHECK_EQ_INT(t.resyncs, 1);
	CHECK_EQ_INT(t.truncated, 2);
	CHECK_EQ_INT(t.missing, 1);
	CHECK_EQ_INT(t.overwritten, 1);
	CHECK_EQ_INT(t.records, 3);
	CHECK_EQ_INT(t.filtered, 2);
	cst_loss_format_totals(&t, line, sizeof(line));
	CHECK_EQ_STR(line, "trace lost in 5 places (at least 5,096 bytes; 2 TRUNCATED AUX records, "
			   "1 trace unit overflow, 1 resync, sizes unknown); 3 perf records lost");
	/* a short buffer is cut, and the length it needed comes back */
	CHECK_EQ_INT(cst_loss_format_totals(&t, line, 10), 139);
	CHECK_EQ_STR(line, "trace los");
	cst_loss_free(p.loss);
	cst_symbolizer_free(sym);

	/* the filter's gaps: nothing lost, nothing to say */
	CHECK_EQ_INT(cst_symbolizer_alloc(&sym, NULL), 0);
	CHECK_EQ_INT(cst_loss_alloc(&p.loss), 0);
	p.n = 0;
	if (!sym || !p.loss)
		return;
	feed(sym, filtered, sizeof(filtered) / sizeof(filtered[0]), false, add_place, &p);
	CHECK_EQ_INT(p.n, 0);
	CHECK_EQ_INT(cst_loss_get_totals(p.loss, &t), 0);
	CHECK_EQ_INT(t.places, 0);
	CHECK_EQ_INT(t.filtered, 2);
	CHECK_EQ_INT(cst_loss_format_totals(&t, line, sizeof(line)), 0);
	CHECK_EQ_STR(line, "");
	cst_loss_free(p.loss);
	cst_symbolizer_free(sym);

	CHECK_EQ_INT(cst_symbolizer_alloc(&sym, NULL), 0);
	CHECK_EQ_INT(cst_loss_alloc(&p.loss), 0);
	p.n = 0;
	if (!sym || !p.loss)
		return;
	feed(sym, twice, sizeof(twice) / sizeof(twice[0]), false, add_place, &p);
	CHECK_EQ_INT(p.n, 2);
	CHECK_EQ_INT(cst_loss_get_totals(p.loss, &t), 0);
	CHECK_EQ_INT(t.overflows, 2);
	cst_loss_free(p.loss);
	cst_symbolizer_free(sym);
	CHECK_EQ_INT(cst_loss_alloc(NULL), -cste_invalid);
	CHECK_EQ_INT(cst_loss_add(NULL, NULL, 0, NULL), -cste_invalid);
}

/* A view's output as text. */
struct text {
	char *b;
	size_t n;
};

static int sink(void *ctx, const char *line, size_t len)
{
	struct text *t = ctx;
	char *b = realloc(t->b, t->n + len + 1);

	if (!b)
		return -1;
	memcpy(b + t->n, line, len);
	t->n += len;
	b[t->n] = '\0';
	t->b = b;
	return 0;
}

static char *script(const struct step *steps, size_t n, enum cst_script_mode mode)
{
	struct cst_symbolizer *sym = NULL;
	struct cst_script *s = NULL;
	struct text t = {calloc(1, 1), 0};

	CHECK_EQ_INT(cst_symbolizer_alloc(&sym, NULL), 0);
	CHECK_EQ_INT(cst_script_alloc(&s, sym, sink, &t,
				      &(struct cst_script_opts){.sz = sizeof(struct cst_script_opts),
								.fields = cst_script_tid |
									  cst_script_ip,
								.mode = mode}),
		     0);
	if (s) {
		feed(sym, steps, n, false, cst_script_add, s);
		CHECK_EQ_INT(cst_script_finish(s), 0);
	}
	cst_script_free(s);
	cst_symbolizer_free(sym);
	return t.b;
}

static int count(const char *text, const char *what)
{
	int n = 0;

	for (const char *p = text; p && (p = strstr(p, what)) != NULL; p++)
		n++;
	return n;
}

static void test_script(void)
{
	size_t n = sizeof(stream) / sizeof(stream[0]), nf = sizeof(filtered) / sizeof(filtered[0]);
	char *calls = script(stream, n, cst_script_calls);
	char *branches = script(stream, n, cst_script_branches);
	char *insns = script(stream, n, cst_script_insns);
	char *off = script(filtered, nf, cst_script_calls);
	char *off_branches = script(filtered, nf, cst_script_branches);

	/* each loss once, in place, in every mode; CPU 1's TRUNCATED record, which
	 * no element of CPU 1 followed, at the end */
	for (int i = 0; i < 3; i++) {
		const char *out = i == 0 ? calls : i == 1 ? branches : insns;
		size_t len = out ? strlen(out) : 0;
		const char *last = "[trace lost: size unknown (TRUNCATED)]\n";

		CHECK_EQ_INT(count(out, "[trace lost: "), 5);
		CHECK(len > strlen(last) && !strcmp(out + len - strlen(last), last));
		CHECK_EQ_INT(count(out, "[trace lost: size unknown (overflow)]\n"), 1);
		CHECK_EQ_INT(count(out, "[trace lost: at least 4096 bytes (TRUNCATED)]\n"), 1);
		CHECK_EQ_INT(count(out, "[trace lost: size unknown (resync)]\n"), 1);
		CHECK_EQ_INT(count(out, "[trace lost: 1000 bytes]\n"), 1);
	}
	/* an address filter's re-entry is said without calling it lost, at the depth
	 * of the stack, which stands (calls.c: the code it left out returned); a
	 * debug halt empties it, and after it nothing is invented */
	CHECK(strstr(calls, "[trace off: filter]\n") != NULL);
	CHECK_EQ_INT(count(off, "[trace lost"), 0);
	CHECK_EQ_INT(count(off, "[trace off: filter]\n"), 1);
	CHECK_EQ_INT(count(off, "[trace off: debug]\n"), 1);
	/* main when trace began and f after the debug halt are already running: no
	 * return invented; the filter's re-entry, in main, makes none */
	CHECK_EQ_INT(count(off, "(already running)"), 2);
	CHECK(strstr(off, "\n7          [trace off: filter]\n7      [trace off: debug]\n") != NULL);
	CHECK(strstr(off, "[trace off: debug]\n7      [unknown] [unknown] at 0x2000 (already running)\n") != NULL);
	CHECK_EQ_INT(count(off_branches, "[trace"), 0);
	/* in the instruction view the line comes before the instructions after it:
	 * the 0x1030 range (12 instructions in) follows the TRUNCATED place */
	CHECK(strstr(insns, "(TRUNCATED)]\n") != NULL &&
	      strstr(strstr(insns, "(TRUNCATED)]\n"), "1030") != NULL);
	free(calls);
	free(branches);
	free(insns);
	free(off);
	free(off_branches);
}

/* The report view: a header only when something was lost; the timeline's
 * instants say "trace lost" only where it was. */
static char *report(const struct step *steps, size_t n, const char *format,
		    struct cst_loss_totals *t)
{
	struct cst_symbolizer *sym = NULL;
	struct cst_report_view *v = NULL;
	char *text = NULL, *stream_text = NULL;
	size_t len = 0, slen = 0;
	FILE *f = open_memstream(&text, &len), *s = open_memstream(&stream_text, &slen);
	const struct cst_report_format *fmt = cst_report_format_find(format);

	CHECK_EQ_INT(cst_symbolizer_alloc(&sym, NULL), 0);
	CHECK_EQ_INT(cst_report_view_alloc(&v, fmt, sym,
					   &(struct cst_report_view_opts){
						   .sz = sizeof(struct cst_report_view_opts),
						   .stream = s}),
		     0);
	if (v) {
		feed(sym, steps, n, false, cst_report_view_add, v);
		CHECK_EQ_INT(cst_report_view_finish(v), 0);
		CHECK_EQ_INT(cst_report_view_write(v, f), 0);
		CHECK_EQ_INT(cst_report_view_loss(v, t), 0);
	}
	cst_report_view_free(v);
	cst_symbolizer_free(sym);
	fclose(f);
	fclose(s);
	if (fmt && (fmt->needs & cst_report_needs_timeline)) {
		free(text);
		return stream_text;
	}
	free(stream_text);
	return text;
}

static void test_report(void)
{
	size_t n = sizeof(stream) / sizeof(stream[0]), nf = sizeof(filtered) / sizeof(filtered[0]);
	struct cst_loss_totals t = {0};
	char *text = report(stream, n, "text", &t), *off = report(filtered, nf, "text", &t);
	char *tl, *tl_off;

	const char *head = "# trace lost in 5 places (at least 5,096 bytes; 2 TRUNCATED AUX records, "
			   "1 trace unit overflow, 1 resync, sizes unknown); 3 perf records lost: "
			   "counts below are lower bounds\n# 40 instructions executed\n";

	CHECK(text && !strncmp(text, head, strlen(head)));
	/* without loss the table is as it always was */
	CHECK(off && !strncmp(off, "# 16 instructions executed\n", 27));
	CHECK_EQ_INT(t.places, 0);
	CHECK_EQ_INT(t.filtered, 2);
	tl = report(stream, n, "perfetto", &t);
	tl_off = report(filtered, nf, "perfetto", &t);
	CHECK_EQ_INT(count(tl, "\"name\":\"trace lost\""), 5);
	/* the one at the end has no thread: it is on every track */
	CHECK_EQ_INT(count(tl, "{\"ph\":\"i\",\"s\":\"g\",\"name\":\"trace lost\""), 1);
	CHECK_EQ_INT(count(tl, "\"lost\":\"at least 4096 bytes (TRUNCATED)\",\"cpu\":0"), 1);
	CHECK_EQ_INT(count(tl, "\"bytes\":1000"), 1);
	CHECK_EQ_INT(count(tl_off, "trace lost"), 0);
	CHECK_EQ_INT(count(tl_off, "\"name\":\"trace off\""), 2);
	/* the filter cuts no slice (the stack stands); the debug halt cuts main's */
	CHECK_EQ_INT(count(tl_off, "\"cut\":\"trace off\""), 1);
	free(text);
	free(off);
	free(tl);
	free(tl_off);
}

int main(void)
{
	test_model();
	test_script();
	test_report();
	return test_done();
}
