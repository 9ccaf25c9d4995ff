/* The filters are the library's: a hand-made stream goes through the report view
 * and the script view with pid/tid, comm, time, dso and symbol filters, and only
 * what they keep reaches the writer (the CSV rows, the folded stacks, the lines
 * given to the script view's sink). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cstrace/symbolize.h"
#include "test.h"

/* A in the program, B in a library. */
static const struct cst_sym_func fa = {"A", "/bin/prog", 0x1000, 0x1000, 0, 0, 1};
static const struct cst_sym_func fb = {"B", "/lib/libother.so", 0x2000, 0x1000, 1, 0, 1};

/* One element of the stream: a timestamp (ts), or a range of one or two pieces
 * split at 0x2000, ending in a taken jump. */
struct step {
	int32_t tid;
	uint64_t ts, start, end;
};

static const struct step stream[] = {
	{7, 100, 0, 0},
	{7, 0, 0x1000, 0x1010},  /* A: 4 */
	{7, 0, 0x2000, 0x2020},  /* B: 8 */
	{7, 300, 0, 0},
	{8, 0, 0x1000, 0x1008},  /* A: 2, another thread */
	{7, 0, 0x1ff8, 0x2008},  /* A: 2, B: 2 */
	{7, 0, 0x2040, 0x2044},  /* B: 1 */
};

static struct cst_sym_piece piece_of(uint64_t a, uint64_t b)
{
	const struct cst_sym_func *fn = a < 0x2000 ? &fa : &fb;

	return (struct cst_sym_piece){.start = a, .end = b, .num_insns = (uint32_t)(b - a) / 4,
				      .loc = {.dso = fn->dso, .func = fn, .func_offset = a - fn->addr},
				      .first_line = -1, .last_line = -1,
				      .enters_func = a == fn->addr};
}

#define NSTEPS (sizeof(stream) / sizeof(stream[0]))

/* Give every step to @fn as the symbolizer would: pieces stay put (the flow model
 * holds a range's pieces until the next range). */
static void feed(cst_sym_elem_fn fn, void *ctx)
{
	static struct cst_sym_piece all[NSTEPS][2];

	for (size_t i = 0; i < NSTEPS; i++) {
		const struct step *s = &stream[i];
		struct cst_sym_piece *pieces = all[i];
		uint32_t n = 0;
		struct cst_elem e = {.type = s->ts ? cst_elem_timestamp : cst_elem_instr_range,
				     .trace_id = 0x10, .timestamp = s->ts, .start = s->start,
				     .end = s->end, .num_insns = (uint32_t)(s->end - s->start) / 4,
				     .isa = cst_isa_a64, .last_class = cst_insn_branch,
				     .last_size = 4, .last_executed = true, .pid = s->tid,
				     .tid = s->tid, .cpu = 0};

		if (!s->ts && s->start < 0x2000 && s->end > 0x2000) {
			pieces[n++] = piece_of(s->start, 0x2000);
			pieces[n++] = piece_of(0x2000, s->end);
		} else if (!s->ts) {
			pieces[n++] = piece_of(s->start, s->end);
		}
		CHECK_EQ_INT(fn(ctx, &(struct cst_sym_elem){.elem = &e, .pid = s->tid,
							    .pieces = pieces, .npieces = n}),
			     0);
	}
}

/* Instructions per function as the CSV writer gives them ("A=8 B=11"), through a
 * report view of @format with @filter. */
static void report(const char *format, const struct cst_sym_filter_opts *filter,
		   struct cst_symbolizer *sym, char *out, size_t size)
{
	struct cst_report_view *v = NULL;
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	*out = '\0';
	CHECK_EQ_INT(cst_report_view_alloc(&v, cst_report_format_find(format), sym,
					   &(struct cst_report_view_opts){
						   .sz = sizeof(struct cst_report_view_opts),
						   .filter = filter}),
		     0);
	if (!v || !f)
		return;
	feed(cst_report_view_add, v);
	CHECK_EQ_INT(cst_report_view_finish(v), 0);
	CHECK_EQ_INT(cst_report_view_write(v, f), 0);
	cst_report_view_free(v);
	fclose(f);
	snprintf(out, size, "%s", text);
	free(text);
}

/* "insns,...,sym,..." rows as "sym=insns" in table order. */
static void csv_counts(const char *csv, char *out, size_t size)
{
	const char *line = strchr(csv, '\n');
	size_t at = 0;

	*out = '\0';
	while (line && line[1]) {
		char sym[16] = "";
		unsigned long insns = 0;

		line++;
		if (sscanf(line, "%lu,%*[^,],%*[^,],%*[^,],%*[^,],%*[^,],%*[^,],\"%15[^\"]\"", &insns,
			   sym) == 2)
			at += (size_t)snprintf(out + at, size - at, "%s%s=%lu", at ? " " : "", sym,
					       insns);
		line = strchr(line, '\n');
	}
}

static void check_report(struct cst_symbolizer *sym, const struct cst_sym_filter_opts *filter,
			 const char *want)
{
	char csv[4096], counts[256];

	report("csv", filter, sym, csv, sizeof(csv));
	csv_counts(csv, counts, sizeof(counts));
	CHECK_EQ_STR(counts, want);
}

#define OPTS(...) (&(struct cst_sym_filter_opts){.sz = sizeof(struct cst_sym_filter_opts), __VA_ARGS__})

static void test_report(struct cst_symbolizer *sym)
{
	static const char *const other[] = {"libother.so"}, *const a[] = {"A"};
	static const char *const worker[] = {"worker"}, *const b[] = {"B"};
	static const int32_t seven[] = {7};
	char folded[1024];

	check_report(sym, NULL, "B=11 A=8");
	check_report(sym, OPTS(.dsos = other, .ndsos = 1), "B=11");
	check_report(sym, OPTS(.symbols = a, .nsymbols = 1), "A=8");
	check_report(sym, OPTS(.comms = worker, .ncomms = 1), "A=2");
	check_report(sym, OPTS(.tids = seven, .ntids = 1), "B=11 A=6");
	check_report(sym, OPTS(.t0 = 50, .t1 = 200, .window = true, .window_ticks = true),
		     "B=8 A=4");
	/* the call views count the kept instructions only, each on its whole stack */
	report("folded", OPTS(.symbols = b, .nsymbols = 1), sym, folded, sizeof(folded));
	CHECK(*folded != '\0');
	for (char *l = folded, *nl; *l; l = nl + 1) {
		char *sp = strrchr(l, ' ');

		nl = strchr(l, '\n');
		if (!nl || !sp || sp > nl)
			break;
		CHECK(sp - l >= 1 && sp[-1] == 'B' && (sp - l == 1 || sp[-2] == ';'));
	}
}

/* The script view: its lines as the sink got them, joined. */
struct lines {
	char text[1024];
	size_t n;
};

static int sink(void *ctx, const char *line, size_t len)
{
	struct lines *l = ctx;

	if (l->n + len < sizeof(l->text)) {
		memcpy(l->text + l->n, line, len);
		l->n += len;
		l->text[l->n] = '\0';
	}
	return 0;
}

static void script(struct cst_symbolizer *sym, const struct cst_sym_filter_opts *filter,
		   const char *want)
{
	struct cst_script *s = NULL;
	struct lines l = {"", 0};

	CHECK_EQ_INT(cst_script_alloc(&s, sym, sink, &l,
				      &(struct cst_script_opts){.sz = sizeof(struct cst_script_opts),
								.filter = filter,
								.fields = cst_script_tid |
									  cst_script_sym,
								.mode = cst_script_branches}),
		     0);
	if (!s)
		return;
	feed(cst_script_add, s);
	CHECK_EQ_INT(cst_script_finish(s), 0);
	cst_script_free(s);
	CHECK_EQ_STR(l.text, want);
}

static void test_script(struct cst_symbolizer *sym)
{
	static const char *const b[] = {"B"}, *const worker[] = {"worker"};

	/* every taken branch of the trace ID in stream order, by where it leaves
	 * from; the last one has nowhere known to go */
	script(sym, NULL, "7      A\n7      B\n8      A\n7      B\n7      B\n");
	script(sym, OPTS(.symbols = b, .nsymbols = 1), "7      B\n7      B\n7      B\n");
	script(sym, OPTS(.comms = worker, .ncomms = 1), "8      A\n");
}

/* The filter itself: a range cut to the pieces kept, names by path or base name. */
static void test_pieces(struct cst_symbolizer *sym)
{
	static const char *const b[] = {"B"};
	struct cst_sym_filter *f = NULL;
	struct cst_sym_piece pc[2] = {piece_of(0x1ff8, 0x2000), piece_of(0x2000, 0x2008)};
	struct cst_elem e = {.type = cst_elem_instr_range, .start = 0x1ff8, .end = 0x2008,
			     .num_insns = 4};
	struct cst_sym_elem se = {.elem = &e, .pieces = pc, .npieces = 2}, copy;
	const struct cst_sym_elem *kept;

	CHECK_EQ_INT(cst_sym_filter_alloc(&f, sym, OPTS(.symbols = b, .nsymbols = 1)), 0);
	if (!f)
		return;
	CHECK(cst_sym_filter_by_name(f));
	kept = cst_sym_filter_pieces(f, &se, &copy);
	CHECK(kept == &copy);
	if (kept) {
		CHECK_EQ_INT(kept->npieces, 1);
		CHECK_EQ_INT(kept->elem->num_insns, 2);
		CHECK(kept->pieces[0].loc.func == &fb);
	}
	CHECK(cst_sym_filter_keep_name(f, "/lib/libother.so", "B"));
	CHECK(!cst_sym_filter_keep_name(f, "/lib/libother.so", "A"));
	cst_sym_filter_free(f);
	CHECK_EQ_INT(cst_sym_filter_alloc(&f, NULL, NULL), -cste_invalid);
}

int main(void)
{
	struct cst_symbolizer *sym = NULL;

	CHECK_EQ_INT(cst_symbolizer_alloc(&sym, NULL), 0);
	if (!sym)
		return test_done();
	CHECK_EQ_INT(cst_symbolizer_add_sideband(sym, &(struct cst_sideband){.type = cst_sb_comm,
									    .pid = 7, .tid = 7,
									    .filename = "prog"}),
		     0);
	CHECK_EQ_INT(cst_symbolizer_add_sideband(sym, &(struct cst_sideband){.type = cst_sb_comm,
									    .pid = 8, .tid = 8,
									    .filename = "worker"}),
		     0);
	test_report(sym);
	test_script(sym);
	test_pieces(sym);
	cst_symbolizer_free(sym);
	return test_done();
}
