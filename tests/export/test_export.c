/* The export model on hand-made element streams, through a writer that keeps the
 * rows: perf's zero rows and branch types in a new database; which branches
 * become samples and their flags (calls, returns, conditional jumps, trace
 * begin and end, system calls, interrupts, exception returns); the instruction
 * counts; calls and call paths as perf's call/return processor makes them (a
 * tail jump, a return that unwinds, a return whose call was not seen, the
 * placeholder where trace ended); ids continuing those of a database appended
 * to; bad arguments. */
#include <stdlib.h>
#include <string.h>

#include "cstrace/export.h"
#include "test.h"

/* Functions A, B, C at 0x1000, 0x2000, 0x3000, each 0x1000 long, in "prog". */
static struct cst_sym_func funcs[3] = {
	{"A", "prog", 0x1000, 0x1000, 0, 0, 1},
	{"B", "prog", 0x2000, 0x1000, 1, 0, 0},
	{"C", "prog", 0x3000, 0x1000, 2, 0, 2},
};

static const struct cst_sym_func *func_at(uint64_t a)
{
	return a >= 0x1000 && a < 0x4000 ? &funcs[a / 0x1000 - 1] : NULL;
}

#define MAXROWS 128
struct rows {
	int64_t next;          /* ids a start gives (1: new database) */
	int n[cst_export_ntables];
	char s[cst_export_ntables][MAXROWS][96]; /* each row, written out */
	struct cst_export_sample_row sample[MAXROWS];
	struct cst_export_call_row call[MAXROWS];
	struct cst_export_call_path_row path[MAXROWS];
	char symname[MAXROWS][16];
	bool committed;
};

static int w_start(void *ctx, struct cst_export_start *st)
{
	struct rows *r = ctx;

	for (int t = 0; t < cst_export_ntables; t++)
		st->next_id[t] = r->next;
	st->fresh = r->next == 1;
	return 0;
}

static int w_row(void *ctx, const struct cst_export_row *row)
{
	struct rows *r = ctx;
	int i = r->n[row->table];

	if (i >= MAXROWS)
		return 0;
	r->n[row->table]++;
	switch (row->table) {
	case cst_export_samples:
		r->sample[i] = row->u.sample;
		snprintf(r->s[row->table][i], 96, "%lld %llx>%llx %d n%llu",
			 (long long)row->u.sample.id, (unsigned long long)row->u.sample.ip,
			 (unsigned long long)row->u.sample.to_ip, row->u.sample.flags,
			 (unsigned long long)row->u.sample.insn_count);
		break;
	case cst_export_calls:
		r->call[i] = row->u.call;
		break;
	case cst_export_call_paths:
		r->path[i] = row->u.call_path;
		break;
	case cst_export_symbols:
		snprintf(r->s[row->table][i], 96, "%lld %s %llx-%llx %d",
			 (long long)row->u.symbol.id, row->u.symbol.name,
			 (unsigned long long)row->u.symbol.start, (unsigned long long)row->u.symbol.end,
			 row->u.symbol.binding);
		if (row->u.symbol.id < MAXROWS)
			snprintf(r->symname[row->u.symbol.id], 16, "%s", row->u.symbol.name);
		break;
	case cst_export_selected_events:
		snprintf(r->s[row->table][i], 96, "%lld %s", (long long)row->u.evsel.id,
			 row->u.evsel.name);
		break;
	case cst_export_threads:
		snprintf(r->s[row->table][i], 96, "%lld %lld %d/%d", (long long)row->u.thread.id,
			 (long long)row->u.thread.process_id, row->u.thread.pid, row->u.thread.tid);
		break;
	case cst_export_comms:
		snprintf(r->s[row->table][i], 96, "%lld %s t%lld %d", (long long)row->u.comm.id,
			 row->u.comm.comm, (long long)row->u.comm.thread_id, row->u.comm.exec);
		break;
	default:
		break;
	}
	return 0;
}

static int w_commit(void *ctx)
{
	((struct rows *)ctx)->committed = true;
	return 0;
}

static const struct cst_export_writer_ops ops = {
	.sz = sizeof(ops), .start = w_start, .row = w_row, .commit = w_commit};

struct fx {
	struct rows rows;
	struct cst_export_writer *w;
	struct cst_export *e;
	int32_t tid;
};

static void setup(struct fx *f, int64_t next)
{
	memset(f, 0, sizeof(*f));
	f->rows.next = next;
	f->tid = 7;
	CHECK_EQ_INT(cst_export_writer_alloc(&f->w, &ops, &f->rows), 0);
	CHECK_EQ_INT(cst_export_alloc(&f->e, f->w,
				      &(struct cst_export_opts){.sz = sizeof(struct cst_export_opts),
								.attr_flags = CST_PERF_ATTR_EXCLUDE_KERNEL |
									      CST_PERF_ATTR_EXCLUDE_HV}),
		     0);
}

static void teardown(struct fx *f)
{
	cst_export_free(f->e);
	cst_export_writer_free(f->w);
}

/* A range [start, end) of 4-byte A64 instructions in one piece, ending as told. */
static void range(struct fx *f, uint64_t start, uint64_t end, enum cst_insn_class cls,
		  enum cst_insn_subclass sub, bool taken)
{
	/* the symbolizer's pieces outlive the element (its range cache): the model
	 * keeps the last one of a range to name where its branch left from */
	static struct cst_sym_piece pool[256];
	static unsigned used;
	struct cst_sym_piece *pc = &pool[used++ % 256];
	struct cst_elem e;
	struct cst_sym_elem se;

	memset(&e, 0, sizeof(e));
	e.type = cst_elem_instr_range;
	e.trace_id = 0x10;
	e.source = -1;
	e.start = start;
	e.end = end;
	e.num_insns = (uint32_t)((end - start) / 4);
	e.isa = cst_isa_a64;
	e.last_class = cls;
	e.last_subclass = sub;
	e.last_size = 4;
	e.last_executed = taken;
	e.ctx.el_valid = true;
	e.pid = e.tid = f->tid;
	memset(pc, 0, sizeof(*pc));
	pc->start = start;
	pc->end = end;
	pc->num_insns = e.num_insns;
	pc->loc.func = func_at(start);
	pc->loc.dso = pc->loc.func ? "prog" : "[unknown]";
	pc->loc.dso_offset = start;
	pc->loc.func_offset = pc->loc.func ? start - pc->loc.func->addr : 0;
	se = (struct cst_sym_elem){.elem = &e, .pid = f->tid, .pieces = pc, .npieces = 1};
	CHECK_EQ_INT(cst_export_add(f->e, &se, 0), 0);
}

static void other(struct fx *f, enum cst_elem_type type, uint32_t exception)
{
	struct cst_elem e;
	struct cst_sym_elem se;

	memset(&e, 0, sizeof(e));
	e.type = type;
	e.trace_id = 0x10;
	e.source = -1;
	e.exception_number = exception;
	e.pid = e.tid = f->tid;
	se = (struct cst_sym_elem){.elem = &e, .pid = f->tid};
	CHECK_EQ_INT(cst_export_add(f->e, &se, 0), 0);
}

#define CALL cst_insn_branch, cst_insn_sub_link, true
#define RET cst_insn_branch_indirect, cst_insn_sub_ret, true
#define JMP cst_insn_branch, cst_insn_sub_none, true
#define NOT_TAKEN cst_insn_branch, cst_insn_sub_none, false
#define ON cst_insn_other, cst_insn_sub_none, false

static void expect_samples(struct fx *f, int from, const char *const *want, int n)
{
	CHECK_EQ_INT(f->rows.n[cst_export_samples] - from, n);
	for (int i = 0; i < n && from + i < f->rows.n[cst_export_samples]; i++)
		CHECK_EQ_STR(f->rows.s[cst_export_samples][from + i], want[i]);
}

/* The names on a call path, root first: "A>B>C". */
static const char *path_names(const struct rows *r, int64_t id, char *buf, size_t size)
{
	char tmp[96];

	buf[0] = '\0';
	while (id > 1) {
		const struct cst_export_call_path_row *p = NULL;

		for (int i = 0; i < r->n[cst_export_call_paths]; i++)
			if (r->path[i].id == id)
				p = &r->path[i];
		if (!p)
			return "?";
		snprintf(tmp, sizeof(tmp), "%s%s%s", p->symbol_id ? r->symname[p->symbol_id] : "-",
			 buf[0] ? ">" : "", buf);
		snprintf(buf, size, "%s", tmp);
		id = p->parent_id;
	}
	return buf;
}

static void test_new_database(void)
{
	struct fx f;
	int bt = 0;

	setup(&f, 1);
	/* perf's id-0 rows: one in each table but comm_threads and branch_types */
	for (int t = 0; t < cst_export_ntables; t++)
		CHECK_EQ_INT(f.rows.n[t], t == cst_export_branch_types_table ? 42
					  : t == cst_export_comm_threads || t == cst_export_captures ? 0
					  : 1);
	for (const struct cst_export_branch_type *b = cst_export_branch_types(); b->name; b++)
		bt++;
	CHECK_EQ_INT(bt, 42);
	CHECK_EQ_STR(cst_export_branch_types()[13].name, "trace begin");
	CHECK_EQ_INT(cst_export_branch_types()[29].id, 531);
	CHECK_EQ_STR(cst_export_branch_types()[29].name, "system call / trace end");
	teardown(&f);
}

static void test_event_names(void)
{
	char b[64];

	CHECK_EQ_STR(cst_export_event_name("branches",
					   CST_PERF_ATTR_EXCLUDE_KERNEL | CST_PERF_ATTR_EXCLUDE_HV, b,
					   sizeof(b)),
		     "branches:u");
	/* perf's default: guests excluded, nothing else */
	CHECK_EQ_STR(cst_export_event_name("branches", 1ull << 20, b, sizeof(b)), "branches");
	CHECK_EQ_STR(cst_export_event_name("branches", 0, b, sizeof(b)), "branches:HG");
	CHECK_EQ_STR(cst_export_event_name("instructions", 1ull << 4 | CST_PERF_ATTR_EXCLUDE_HV, b,
					   sizeof(b)),
		     "instructions:k");
	CHECK_EQ_STR(cst_export_table_name(cst_export_captures), "cstrace_captures");
}

/* Which branches are samples, with perf's flags and cstrace's instruction counts. */
static void test_samples(void)
{
	static const char *const want[] = {
		"1 0>1000 257 n0",     /* trace begins */
		"2 100c>2000 3 n4",    /* a call */
		"3 2004>1010 5 n2",    /* its return */
		"4 1014>1000 1 n2",    /* a jump back, after a branch not taken (without
					  code to read, neither counts as conditional) */
		"5 1004>0 513 n2",     /* trace ends after a range that did not branch */
		"6 0>3000 257 n0",     /* and begins again */
		"7 3008>0 515 n3",     /* a call the trace ended after */
	};
	struct fx f;

	setup(&f, 1);
	other(&f, cst_elem_no_sync, 0);
	range(&f, 0x1000, 0x1010, CALL);
	range(&f, 0x2000, 0x2008, RET);
	range(&f, 0x1010, 0x1014, NOT_TAKEN);
	range(&f, 0x1014, 0x1018, JMP);
	range(&f, 0x1000, 0x1008, ON);
	other(&f, cst_elem_trace_on, 0);
	range(&f, 0x3000, 0x300c, CALL);
	other(&f, cst_elem_no_sync, 0);
	/* the end of the data is no discontinuity: no sample */
	other(&f, cst_elem_eot, 0);
	expect_samples(&f, 1, want, 7);
	CHECK_EQ_STR(f.rows.s[cst_export_selected_events][1], "1 branches:u");
	CHECK_EQ_STR(f.rows.s[cst_export_threads][1], "1 1 7/7");
	CHECK_EQ_STR(f.rows.s[cst_export_comms][1], "1 :7 t1 0");
	teardown(&f);
}

/* Exceptions give the range before them their kind and make it a taken branch. */
static void test_exceptions(void)
{
	static const char *const want[] = {
		"1 0>1000 257 n0",
		"2 1004>0 531 n2",     /* an SVC from EL0 (no code to read: EL0 says it) */
		"3 0>1010 257 n0",
		"4 1010>2000 99 n1",   /* an IRQ: a hardware interrupt */
		"5 2004>1014 69 n2",   /* an exception return */
		"6 1014>3000 67 n1",   /* a data abort: a software interrupt */
	};
	struct fx f;

	setup(&f, 1);
	other(&f, cst_elem_no_sync, 0);
	range(&f, 0x1000, 0x1008, ON);
	other(&f, cst_elem_exception, 2);
	other(&f, cst_elem_trace_on, 0);
	range(&f, 0x1010, 0x1014, ON);
	other(&f, cst_elem_exception, 14);
	range(&f, 0x2000, 0x2008, ON);
	other(&f, cst_elem_exception_ret, 0);
	range(&f, 0x1014, 0x1018, ON);
	other(&f, cst_elem_exception, 12);
	range(&f, 0x3000, 0x3008, ON);
	expect_samples(&f, 1, want, 6);
	teardown(&f);
}

/* A calls B, B jumps to C's start (a tail call), C returns to A: perf's calls. */
static void test_calls(void)
{
	struct fx f;
	char p[96];
	int n0;

	setup(&f, 1);
	n0 = f.rows.n[cst_export_calls];
	other(&f, cst_elem_no_sync, 0);
	range(&f, 0x1000, 0x1010, CALL);      /* 1: trace begin; 2: A calls B */
	range(&f, 0x2000, 0x2008, JMP);       /* 3: B jumps to C */
	range(&f, 0x3000, 0x3010, RET);       /* 4: C returns to A */
	range(&f, 0x1010, 0x1020, ON);
	CHECK_EQ_INT(cst_export_finish(f.e), 0);
	CHECK(f.rows.committed);
	CHECK_EQ_INT(f.rows.n[cst_export_calls] - n0, 3);
	for (int i = n0; getenv("EXPORT_DEBUG") && i < f.rows.n[cst_export_calls]; i++)
		fprintf(stderr, "call %lld %s flags %d %lld-%lld\n", (long long)f.rows.call[i].id,
			path_names(&f.rows, f.rows.call[i].call_path_id, p, sizeof(p)),
			f.rows.call[i].flags, (long long)f.rows.call[i].call_id,
			(long long)f.rows.call[i].return_id);
	if (f.rows.n[cst_export_calls] - n0 == 3) {
		const struct cst_export_call_row *c = &f.rows.call[n0], *b = c + 1, *a = c + 2;

		/* C ends first: a jump (no call) that was unwound (no return) */
		CHECK_EQ_STR(path_names(&f.rows, c->call_path_id, p, sizeof(p)), "A>B>C");
		CHECK_EQ_INT(c->flags, CST_EXPORT_CALL_NON_CALL | CST_EXPORT_CALL_NO_RETURN);
		CHECK_EQ_INT(c->call_id, 3);
		CHECK_EQ_INT(c->return_id, 4);
		CHECK_EQ_INT(c->id, 1);
		CHECK_EQ_INT(c->parent_id, 2); /* B's id, given when C ended */
		CHECK_EQ_STR(path_names(&f.rows, b->call_path_id, p, sizeof(p)), "A>B");
		CHECK_EQ_INT(b->flags, 0);
		CHECK_EQ_INT(b->id, 2);
		CHECK_EQ_INT(b->call_id, 2);
		CHECK_EQ_INT(b->return_id, 4);
		CHECK_EQ_INT(b->branch_count, 2);
		CHECK_EQ_INT(b->insn_count, 6); /* B's 2 and C's 4 */
		CHECK_EQ_INT(b->parent_id, 3);
		/* A was running when trace began, and never returned */
		CHECK_EQ_STR(path_names(&f.rows, a->call_path_id, p, sizeof(p)), "A");
		CHECK_EQ_INT(a->flags, CST_EXPORT_CALL_NO_CALL | CST_EXPORT_CALL_NO_RETURN);
		CHECK_EQ_INT(a->id, 3);
		CHECK_EQ_INT(a->call_id, 1);
		CHECK_EQ_INT(a->return_id, 0);
		CHECK_EQ_INT(a->parent_id, 0);
		CHECK_EQ_INT(b->parent_call_path_id, a->call_path_id);
	}
	teardown(&f);
}

/* A return whose call was not seen; trace that ends and begins again. */
static void test_no_call_and_trace_end(void)
{
	struct fx f;
	char p[96];
	int n0;

	setup(&f, 1);
	n0 = f.rows.n[cst_export_calls];
	other(&f, cst_elem_no_sync, 0);
	range(&f, 0x2010, 0x2018, RET);       /* 1: begin in B; 2: B returns into A */
	range(&f, 0x1010, 0x1018, CALL);      /* 3: A calls C */
	range(&f, 0x3000, 0x3008, ON);
	other(&f, cst_elem_trace_on, 0);      /* 4: trace ends in C */
	range(&f, 0x3010, 0x3018, RET);       /* 5: begins again; 6: C returns */
	range(&f, 0x1018, 0x1020, ON);
	CHECK_EQ_INT(cst_export_finish(f.e), 0);
	CHECK_EQ_INT(f.rows.n[cst_export_calls] - n0, 4);
	if (f.rows.n[cst_export_calls] - n0 == 4) {
		const struct cst_export_call_row *c = &f.rows.call[n0];

		/* B: its call was before trace began */
		CHECK_EQ_STR(path_names(&f.rows, c[0].call_path_id, p, sizeof(p)), "B");
		CHECK_EQ_INT(c[0].flags, CST_EXPORT_CALL_NO_CALL);
		CHECK_EQ_INT(c[0].return_id, 2);
		/* the placeholder for the time trace was off, under C */
		CHECK_EQ_STR(path_names(&f.rows, c[1].call_path_id, p, sizeof(p)), "A>C>-");
		CHECK_EQ_INT(c[1].flags, 0);
		CHECK_EQ_INT(c[1].call_id, 4);
		CHECK_EQ_INT(c[1].return_id, 5);
		/* C returned, A did not */
		CHECK_EQ_STR(path_names(&f.rows, c[2].call_path_id, p, sizeof(p)), "A>C");
		CHECK_EQ_INT(c[2].flags, 0);
		CHECK_EQ_INT(c[2].call_id, 3);
		CHECK_EQ_INT(c[2].return_id, 6);
		CHECK_EQ_STR(path_names(&f.rows, c[3].call_path_id, p, sizeof(p)), "A");
		CHECK_EQ_INT(c[3].flags, CST_EXPORT_CALL_NO_CALL | CST_EXPORT_CALL_NO_RETURN);
	}
	/* perf's symbols: file offsets, the ELF binding */
	CHECK_EQ_STR(f.rows.s[cst_export_symbols][1], "1 B 2000-3000 0");
	CHECK_EQ_STR(f.rows.s[cst_export_symbols][2], "2 A 1000-2000 1");
	teardown(&f);
}

/* Appending: ids go on from those in the database, and no zero rows. */
static void test_append_ids(void)
{
	struct fx f;

	setup(&f, 500);
	for (int t = 0; t < cst_export_ntables; t++)
		CHECK_EQ_INT(f.rows.n[t], 0);
	other(&f, cst_elem_no_sync, 0);
	range(&f, 0x1000, 0x1010, CALL);
	range(&f, 0x2000, 0x2008, RET);
	CHECK_EQ_INT(cst_export_finish(f.e), 0);
	CHECK_EQ_INT(f.rows.sample[0].id, 500);
	CHECK_EQ_INT(f.rows.sample[0].machine_id, 500);
	CHECK_EQ_INT(f.rows.sample[0].evsel_id, 500);
	CHECK_EQ_INT(f.rows.sample[1].id, 501);
	CHECK_EQ_INT(f.rows.n[cst_export_samples], 2); /* the return waits for what follows */
	CHECK_EQ_STR(f.rows.s[cst_export_threads][0], "500 500 7/7");
	CHECK(f.rows.n[cst_export_captures] == 1);
	/* a finished export takes nothing more */
	CHECK_EQ_INT(cst_export_finish(f.e), -cste_invalid);
	teardown(&f);
}

static void test_bad_args(void)
{
	struct cst_export_writer *w = NULL;
	struct cst_export *e = NULL;
	struct rows r = {.next = 1};
	struct {
		struct cst_export_opts o;
		uint64_t more;
	} newer;

	CHECK_EQ_INT(cst_export_writer_alloc(NULL, &ops, &r), -cste_invalid);
	CHECK_EQ_INT(cst_export_writer_alloc(&w, NULL, &r), -cste_invalid);
	CHECK_EQ_INT(cst_export_alloc(&e, NULL, NULL), -cste_invalid);
	CHECK_EQ_INT(cst_export_writer_alloc(&w, &ops, &r), 0);
	memset(&newer, 0, sizeof(newer));
	newer.o.sz = sizeof(newer);
	newer.more = 1;
	CHECK_EQ_INT(cst_export_alloc(&e, w, &newer.o), -cste_invalid);
	CHECK(e == NULL);
	CHECK_EQ_INT(cst_export_add(NULL, NULL, 0), -cste_invalid);
	CHECK_EQ_INT(cst_export_sideband(NULL, NULL), -cste_invalid);
	CHECK_EQ_INT(cst_export_get_stats(NULL, NULL), -cste_invalid);
	CHECK_EQ_INT(cst_export_sqlite_open(&w, NULL, NULL), -cste_invalid);
	cst_export_writer_free(w);
	cst_export_free(NULL);
	cst_export_writer_free(NULL);
}

int main(void)
{
	test_new_database();
	test_event_names();
	test_samples();
	test_exceptions();
	test_calls();
	test_no_call_and_trace_end();
	test_append_ids();
	test_bad_args();
	return test_done();
}
