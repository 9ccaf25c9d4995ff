/* Readers of one symbolizer on several threads (cst_symbolizer_reader_alloc):
 * look-ups, perf's names and symbolized ranges answered on two reader threads
 * and the symbolizer's own, all at once from a cold start (so that the binary's
 * tables load lazily while the others read), are what a symbolizer of its own
 * answers on one thread; and the readers' counts, handed over, add up in the
 * symbolizer's.
 * The binary looked up is this test program itself (symbols and DWARF). */
#include "test.h"

#include <pthread.h>

#include "cstrace/symbolize.h"
#include "self_elf.h"

enum { PID = 3, PER_FUNC = 96, NFUNCS = 6, N = PER_FUNC * NFUNCS, THREADS = 2 };

/* What one address gave: names copied out (pointers differ between symbolizers). */
struct answer {
	char func[64], perf_func[64], file[256], piece_func[64];
	uint64_t func_offset;
	int line;
	uint32_t npieces, piece_insns;
};

struct job {
	struct cst_symbolizer *sym;
	const uint64_t *addrs;
	struct answer *out;
	bool backwards; /* another order than the other threads' */
	int err;
};

static void put(char *dst, size_t size, const char *s)
{
	snprintf(dst, size, "%s", s ? s : "-");
}

static int first_piece(void *ctx, const struct cst_sym_elem *se)
{
	struct answer *a = ctx;

	a->npieces = se->npieces;
	if (se->npieces) {
		put(a->piece_func, sizeof(a->piece_func),
		    se->pieces[0].loc.func ? se->pieces[0].loc.func->name : NULL);
		a->piece_insns = se->pieces[0].num_insns;
	}
	return 0;
}

static int ask(struct cst_symbolizer *sym, uint64_t addr, struct answer *a)
{
	struct cst_elem e = {.type = cst_elem_instr_range, .start = addr, .end = addr + 64,
			     .num_insns = 16, .isa = cst_isa_a64, .pid = PID,
			     .last_class = cst_insn_branch, .last_executed = true};
	struct cst_sym_loc loc, pl;
	int err = cst_symbolizer_lookup(sym, PID, addr, &loc);

	pl = loc;
	if (!err)
		err = cst_symbolizer_perf_name(sym, PID, addr, &pl);
	if (!err)
		err = cst_symbolizer_feed(sym, &e, first_piece, a);
	put(a->func, sizeof(a->func), loc.func ? loc.func->name : NULL);
	put(a->perf_func, sizeof(a->perf_func), pl.func ? pl.func->name : NULL);
	put(a->file, sizeof(a->file), loc.file);
	a->func_offset = loc.func_offset;
	a->line = loc.line;
	return err;
}

static void *run(void *arg)
{
	struct job *j = arg;

	for (int k = 0; k < N && !j->err; k++) {
		int i = j->backwards ? N - 1 - k : k;

		j->err = ask(j->sym, j->addrs[i], &j->out[i]);
	}
	return NULL;
}

static struct cst_symbolizer *symbolizer_of(const char *exe)
{
	struct cst_sym_mapping m = {.pid = PID, .path = exe, .elf_vaddr = true};
	struct cst_symbolizer *sym = NULL;

	CHECK_EQ_INT(cst_symbolizer_alloc(&sym, NULL), 0);
	if (sym && cst_symbolizer_add_mapping(sym, &m) != 0) {
		CHECK(!"the test program maps");
		cst_symbolizer_free(sym);
		sym = NULL;
	}
	return sym;
}

int main(void)
{
	static uint64_t addrs[N];
	static struct answer want[N], got[THREADS + 1][N];
	const void *funcs[NFUNCS] = {(void *)ask, (void *)run, (void *)first_piece,
				     (void *)put, (void *)self_elf_bias, (void *)symbolizer_of};
	struct cst_symbolizer *sym, *ref, *readers[THREADS] = {0}, *bad = NULL;
	struct cst_symbolizer_stats st;
	struct job jobs[THREADS + 1];
	pthread_t tid[THREADS];
	char exe[4096];
	uint64_t bias;

	if (!self_elf(exe, sizeof(exe), &bias))
		TEST_SKIP("no /proc/self/exe");
	for (int f = 0; f < NFUNCS; f++)
		for (int i = 0; i < PER_FUNC; i++)
			addrs[f * PER_FUNC + i] = (uint64_t)(uintptr_t)funcs[f] - bias + 2u * i;
	sym = symbolizer_of(exe);
	ref = symbolizer_of(exe);
	if (!sym || !ref)
		return test_done();

	/* readers only while sharing, and only of a symbolizer that is no reader */
	CHECK_EQ_INT(cst_symbolizer_reader_alloc(&bad, sym), -cste_invalid);
	CHECK(bad == NULL);
	CHECK_EQ_INT(cst_symbolizer_share(sym, true), 0);
	for (int t = 0; t < THREADS; t++)
		CHECK_EQ_INT(cst_symbolizer_reader_alloc(&readers[t], sym), 0);
	if (readers[0]) {
		CHECK_EQ_INT(cst_symbolizer_reader_alloc(&bad, readers[0]), -cste_invalid);
		CHECK_EQ_INT(cst_symbolizer_share(readers[0], true), -cste_invalid);
	}
	CHECK_EQ_INT(cst_symbolizer_reader_sync(sym), -cste_invalid);

	/* all at once, from cold: the readers and the symbolizer's own thread */
	for (int t = 0; t <= THREADS; t++)
		jobs[t] = (struct job){t < THREADS ? readers[t] : sym, addrs, got[t], t % 2 == 1, 0};
	for (int t = 0; t < THREADS; t++)
		CHECK_EQ_INT(readers[t] ? pthread_create(&tid[t], NULL, run, &jobs[t]) : -1, 0);
	run(&jobs[THREADS]);
	for (int t = 0; t < THREADS; t++)
		if (readers[t])
			pthread_join(tid[t], NULL);
	/* a reader's counts are handed over, or thrown away with it */
	for (int t = 0; t < THREADS; t++) {
		struct cst_sym_counts c = {0};

		CHECK_EQ_INT(cst_symbolizer_take_counts(readers[t], &c), 0);
		CHECK_EQ_INT(c.stats.ranges, N);
		CHECK_EQ_INT(cst_symbolizer_take_counts(readers[t], &c), 0);
		CHECK_EQ_INT(c.stats.ranges, N); /* counted from zero again */
		CHECK_EQ_INT(cst_symbolizer_add_counts(sym, &c), 0);
		cst_symbolizer_free(readers[t]);
	}
	CHECK_EQ_INT(cst_symbolizer_share(sym, false), 0);

	/* the same on one thread, in a symbolizer of its own */
	for (int i = 0; i < N; i++)
		CHECK_EQ_INT(ask(ref, addrs[i], &want[i]), 0);
	CHECK_EQ_STR(want[0].func, "ask");
	CHECK(want[0].line > 0);
	for (int t = 0; t <= THREADS; t++) {
		int bad_answers = 0;

		CHECK_EQ_INT(jobs[t].err, 0);
		for (int i = 0; i < N; i++)
			if (memcmp(&got[t][i], &want[i], sizeof(want[i])) != 0 &&
			    bad_answers++ < 3)
				fprintf(stderr, "thread %d, %#llx: %s+%llu (%s, %s:%d) where %s+%llu\n",
					t, (unsigned long long)addrs[i], got[t][i].func,
					(unsigned long long)got[t][i].func_offset,
					got[t][i].perf_func, got[t][i].file, got[t][i].line,
					want[i].func, (unsigned long long)want[i].func_offset);
		CHECK_EQ_INT(bad_answers, 0);
	}
	CHECK_EQ_INT(cst_symbolizer_get_stats(sym, &st), 0);
	CHECK_EQ_INT(st.ranges, (THREADS + 1) * N);
	CHECK_EQ_INT(st.insns, (THREADS + 1) * N * 16);
	cst_symbolizer_free(sym);
	cst_symbolizer_free(ref);
	return test_done();
}
