/* Unit tests of the symbolize API edges: NULL and bad arguments, empty spaces,
 * the report model's accounting on hand-made symbolized elements. */
#include "test.h"

#include <unistd.h>

#include "cstrace/symbolize.h"

static int count(void *ctx, const struct cst_sym_elem *se)
{
	*(uint32_t *)ctx += se->npieces;
	return 0;
}

/* kernel symbols from a kallsyms file: text symbols only, each to the next one */
static void test_kallsyms(void)
{
	char path[] = "/tmp/cst_kallsymsXXXXXX";
	int fd = mkstemp(path);
	FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
	struct cst_symbolizer_opts opts = {.sz = sizeof(opts), .kallsyms = path};
	struct cst_symbolizer *sym = NULL;
	struct cst_sym_loc loc;

	CHECK(f != NULL);
	if (!f)
		return;
	fputs("ffffffc000081000 T _text\n"
	      "ffffffc000081000 T do_start\n"
	      "ffffffc000081040 t helper\n"
	      "ffffffc000081080 D some_data\n"
	      "ffffffc000081100 T later [mod]\n",
	      f);
	fclose(f);
	CHECK_EQ_INT(cst_symbolizer_alloc(&sym, &opts), 0);
	if (sym) {
		CHECK_EQ_INT(cst_symbolizer_lookup(sym, 12, 0xffffffc000081044ull, &loc), 0);
		CHECK(loc.func != NULL);
		if (loc.func)
			CHECK_EQ_STR(loc.func->name, "helper");
		CHECK_EQ_INT(loc.func_offset, 4);
		/* data symbols are not code: helper reaches to "later" */
		CHECK_EQ_INT(cst_symbolizer_lookup(sym, 12, 0xffffffc000081090ull, &loc), 0);
		CHECK(loc.func && !strcmp(loc.func->name, "helper"));
		CHECK_EQ_INT(cst_symbolizer_lookup(sym, 12, 0xffffffc000081000ull, &loc), 0);
		CHECK(loc.func && loc.func_offset == 0);
		CHECK_EQ_INT(cst_symbolizer_lookup(sym, 12, 0xffffffc000080000ull, &loc), 0);
		CHECK(loc.func == NULL);
		cst_symbolizer_free(sym);
	}
	unlink(path);
	opts.kallsyms = "/nonexistent/kallsyms";
	CHECK_EQ_INT(cst_symbolizer_alloc(&sym, &opts), -cste_not_found);
}

/* The binary of the first piece of a symbolized range. */
static int first_dso(void *ctx, const struct cst_sym_elem *se)
{
	*(const char **)ctx = se->npieces ? se->pieces[0].loc.dso : NULL;
	return 0;
}

/* The binary a range of @pid at 0x10010 runs in, as symbolized ranges say (the
 * same range each time: what was cached of it must follow the process). */
static const char *range_dso(struct cst_symbolizer *sym, int32_t pid)
{
	struct cst_elem e = {.type = cst_elem_instr_range, .start = 0x10010, .end = 0x10020,
			     .num_insns = 4, .isa = cst_isa_a64, .pid = pid, .tid = pid,
			     .cpu = -1, .source = -1};
	const char *dso = NULL;

	CHECK_EQ_INT(cst_symbolizer_feed(sym, &e, first_dso, &dso), 0);
	return dso ? dso : "(no piece)";
}

/* Processes: a fork inherits the parent's mappings, an exec forgets them. */
static void test_fork_exec(void)
{
	struct cst_symbolizer_opts opts = {.sz = sizeof(opts)};
	struct cst_symbolizer *sym = NULL;
	struct cst_sym_loc loc;
	struct cst_sideband mm = {.type = cst_sb_mmap, .pid = 100, .tid = 100, .cpu = -1,
				  .addr = 0x10000, .len = 0x1000, .filename = "/bin/true"};
	struct cst_sideband fork = {.type = cst_sb_fork, .pid = 200, .tid = 200, .ppid = 100,
				    .ptid = 100, .cpu = -1};
	struct cst_sideband exec = {.type = cst_sb_comm, .pid = 200, .tid = 200, .cpu = -1,
				    .filename = "newprog", .exec = true};

	CHECK_EQ_INT(cst_symbolizer_alloc(&sym, &opts), 0);
	if (!sym)
		return;
	CHECK_EQ_INT(cst_symbolizer_add_sideband(sym, &mm), 0);
	CHECK_EQ_INT(cst_symbolizer_lookup(sym, 200, 0x10010, &loc), 0);
	CHECK_EQ_STR(loc.dso, "[unknown]");
	CHECK_EQ_STR(range_dso(sym, 200), "[unknown]");
	CHECK_EQ_INT(cst_symbolizer_add_sideband(sym, &fork), 0);
	CHECK_EQ_INT(cst_symbolizer_lookup(sym, 200, 0x10010, &loc), 0);
	CHECK(strstr(loc.dso, "true") != NULL);
	CHECK(strstr(range_dso(sym, 200), "true") != NULL);
	CHECK_EQ_INT(cst_symbolizer_add_sideband(sym, &exec), 0);
	CHECK_EQ_INT(cst_symbolizer_lookup(sym, 200, 0x10010, &loc), 0);
	CHECK_EQ_STR(loc.dso, "[unknown]");
	CHECK_EQ_STR(range_dso(sym, 200), "[unknown]");
	CHECK_EQ_STR(cst_symbolizer_comm(sym, 200), "newprog");
	CHECK_EQ_INT(cst_symbolizer_lookup(sym, 100, 0x10010, &loc), 0);
	CHECK(strstr(loc.dso, "true") != NULL); /* the parent keeps its program */
	CHECK(strstr(range_dso(sym, 100), "true") != NULL);
	/* the new program's own mapping */
	mm.pid = mm.tid = 200;
	mm.filename = "/bin/false";
	CHECK_EQ_INT(cst_symbolizer_add_sideband(sym, &mm), 0);
	CHECK(strstr(range_dso(sym, 200), "false") != NULL);
	cst_symbolizer_free(sym);
}

/* A symbolizer with @n copies of the four code bytes @word mapped raw for pid 3
 * at @base, from a file whose name goes to @path (the caller unlinks it), or
 * NULL. */
static struct cst_symbolizer *code_symbolizer(char *path, const uint8_t word[4], uint64_t n,
					      uint64_t base)
{
	int fd = mkstemp(path);
	FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
	struct cst_symbolizer *sym = NULL;
	struct cst_sym_mapping m = {.pid = 3, .addr = base, .len = 4 * n, .path = path,
				    .raw = true};
	bool written = f != NULL;

	if (!f && fd >= 0)
		close(fd);
	for (uint64_t i = 0; written && i < n; i++)
		written = fwrite(word, 1, 4, f) == 4;
	if (f && fclose(f) != 0)
		written = false;
	CHECK(written);
	if (!written)
		return NULL;
	CHECK_EQ_INT(cst_symbolizer_alloc(&sym, NULL), 0);
	if (sym) {
		int err = cst_symbolizer_add_mapping(sym, &m);

		CHECK_EQ_INT(err, 0);
		if (err) {
			cst_symbolizer_free(sym);
			sym = NULL;
		}
	}
	return sym;
}

/* Disassembly is remembered by address and bytes: a PC-relative branch says its
 * own target wherever it stands, with far more addresses than the memo has slots
 * (so that they share slots), on the first look and the next, and the same
 * bytes under another instruction set are another instruction. */
static void test_disasm_memo(void)
{
	enum { N = 1 << 18 }; /* instructions: four times the memo's slots */
	/* A64 "bl #+8" and, read as A32, a conditional instruction */
	const uint8_t bl[4] = {0x02, 0x00, 0x00, 0x94};
	const uint64_t base = 0x400000;
	char path[] = "/tmp/cst_codeXXXXXX";
	struct cst_symbolizer *sym = code_symbolizer(path, bl, N, base);
	int bad = 0;

	if (sym) {
		struct cst_sym_insn a64, a32;

		for (int pass = 0; pass < 2; pass++)
			for (uint64_t i = 0; i < N; i += 1 + (uint64_t)pass * 2) {
				uint64_t addr = base + 4 * i;
				char want[64];

				snprintf(want, sizeof(want), "bl #0x%llx",
					 (unsigned long long)(addr + 8));
				if (cst_symbolizer_disasm(sym, 3, addr, cst_isa_a64, &a64) != 0 ||
				    strcmp(a64.text, want) != 0) {
					if (bad++ < 3)
						fprintf(stderr, "%#llx: '%s', want '%s'\n",
							(unsigned long long)addr, a64.text, want);
				}
			}
		CHECK_EQ_INT(bad, 0);
		CHECK_EQ_INT(cst_symbolizer_disasm(sym, 3, base, cst_isa_a64, &a64), 0);
		CHECK_EQ_INT(cst_symbolizer_disasm(sym, 3, base, cst_isa_a32, &a32), 0);
		CHECK(strcmp(a64.text, a32.text) != 0);
		CHECK_EQ_INT(cst_symbolizer_disasm(sym, 3, base, cst_isa_a64, &a64), 0);
		CHECK_EQ_STR(a64.text, "bl #0x400008");
		cst_symbolizer_free(sym);
	}
	unlink(path);
}

/* A text longer than a memo slot holds is given whole, on the first look and the
 * next: "ld4 {v16.16b, v17.16b, v18.16b, v19.16b}, [x20], x21" is 52 bytes. */
static void test_disasm_long_text(void)
{
	const uint8_t ld4[4] = {0x90, 0x02, 0xd5, 0x4c};
	char path[] = "/tmp/cst_codeXXXXXX";
	struct cst_symbolizer *sym = code_symbolizer(path, ld4, 1, 0x1000);

	if (sym) {
		struct cst_sym_insn first, again;

		CHECK_EQ_INT(cst_symbolizer_disasm(sym, 3, 0x1000, cst_isa_a64, &first), 0);
		CHECK_EQ_INT(cst_symbolizer_disasm(sym, 3, 0x1000, cst_isa_a64, &again), 0);
		CHECK_EQ_STR(first.text, "ld4 {v16.16b, v17.16b, v18.16b, v19.16b}, [x20], x21");
		CHECK_EQ_STR(again.text, first.text);
		CHECK_EQ_INT(again.size, 4);
		CHECK(memcmp(again.bytes, ld4, 4) == 0);
		cst_symbolizer_free(sym);
	}
	unlink(path);
}

/* T32's text depends on the IT block before it: the same bytes and address are
 * "moveq" inside one and "mov" outside, so T32 is never answered from memory. */
static void test_disasm_it_block(void)
{
	/* it eq; mov r0, r1 */
	const uint8_t code[4] = {0x08, 0xbf, 0x08, 0x46};
	char path[] = "/tmp/cst_t32XXXXXX";
	struct cst_symbolizer *sym = code_symbolizer(path, code, 1, 0x8000);
	struct cst_sym_insn in;

	if (sym) {
		CHECK_EQ_INT(cst_symbolizer_disasm(sym, 3, 0x8000, cst_isa_t32, &in), 0);
		CHECK_EQ_STR(in.text, "it eq");
		CHECK_EQ_INT(cst_symbolizer_disasm(sym, 3, 0x8002, cst_isa_t32, &in), 0);
		CHECK_EQ_STR(in.text, "moveq r0, r1");
		CHECK_EQ_INT(cst_symbolizer_disasm(sym, 3, 0x8002, cst_isa_t32, &in), 0);
		CHECK_EQ_STR(in.text, "mov r0, r1");
		cst_symbolizer_free(sym);
	}
	unlink(path);
}

int main(void)
{
	struct cst_symbolizer *sym = NULL;
	struct cst_symbolizer_opts bad = {.sz = 1};
	struct cst_sym_loc loc;
	struct cst_sym_insn insn;
	struct cst_report *rep = NULL;
	const struct cst_report_row *rows;
	struct cst_elem e = {.type = cst_elem_instr_range, .start = 0x1000, .end = 0x1010,
			     .num_insns = 4, .isa = cst_isa_a64, .pid = -1,
			     .last_class = cst_insn_branch, .last_executed = true};
	uint32_t npieces = 0;

	CHECK_EQ_INT(cst_symbolizer_alloc(NULL, NULL), -cste_invalid);
	CHECK_EQ_INT(cst_symbolizer_alloc(&sym, &bad), -cste_invalid);
	CHECK_EQ_INT(cst_symbolizer_alloc(&sym, NULL), 0);
	CHECK(sym != NULL);
	CHECK_EQ_INT(cst_symbolizer_lookup(NULL, 0, 0, &loc), -cste_invalid);
	CHECK_EQ_INT(cst_symbolizer_lookup(sym, 0, 0, NULL), -cste_invalid);
	CHECK_EQ_INT(cst_symbolizer_add_mapping(sym, NULL), -cste_invalid);
	CHECK_EQ_INT(cst_symbolizer_add_elf_spec(sym, NULL, 0), -cste_invalid);
	CHECK_EQ_INT(cst_symbolizer_add_elf_spec(sym, "/nonexistent/file", 0), -cste_not_found);
	CHECK_EQ_INT(cst_symbolizer_add_elf_spec(sym, "/nonexistent@xyz", 0), -cste_format);
	CHECK_EQ_INT(cst_symbolizer_feed(sym, NULL, count, NULL), -cste_invalid);
	CHECK_EQ_INT(cst_symbolizer_inline_chain(sym, 0, 0, NULL, 4), -cste_invalid);

	/* nothing mapped: [unknown] with the address as offset, no symbol */
	CHECK_EQ_INT(cst_symbolizer_lookup(sym, 5, 0x1234, &loc), 0);
	CHECK_EQ_STR(loc.dso, "[unknown]");
	CHECK_EQ_INT(loc.dso_offset, 0x1234);
	CHECK(loc.func == NULL);
	CHECK_EQ_INT(cst_symbolizer_disasm(sym, 5, 0x1234, cst_isa_a64, &insn), -cste_not_found);
	CHECK_EQ_INT(cst_symbolizer_disasm(sym, 5, 0x1234, cst_isa_jazelle, &insn),
		     -cste_unsupported);

	/* an unmapped range is one unknown piece holding all its instructions */
	CHECK_EQ_INT(cst_symbolizer_feed(sym, &e, count, &npieces), 0);
	CHECK_EQ_INT(npieces, 1);

	CHECK_EQ_INT(cst_report_alloc(&rep, 0), -cste_invalid);
	CHECK_EQ_INT(cst_report_alloc(&rep, cst_report_key_sym | cst_report_key_dso), 0);
	CHECK_EQ_INT(cst_symbolizer_feed(sym, &e, cst_report_add, rep), 0);
	e.last_executed = false;
	CHECK_EQ_INT(cst_symbolizer_feed(sym, &e, cst_report_add, rep), 0);
	CHECK_EQ_INT(cst_report_total(rep), 8);
	CHECK_EQ_INT(cst_report_rows(rep, &rows), 1);
	CHECK_EQ_STR(rows[0].sym, "[unknown]");
	CHECK_EQ_INT(rows[0].insns, 8);
	CHECK_EQ_INT(rows[0].taken, 1);
	CHECK_EQ_INT(rows[0].not_taken, 1);
	cst_report_free(rep);
	cst_symbolizer_free(sym);
	cst_symbolizer_free(NULL);
	test_kallsyms();
	test_fork_exec();
	test_disasm_memo();
	test_disasm_long_text();
	test_disasm_it_block();
	return test_done();
}
