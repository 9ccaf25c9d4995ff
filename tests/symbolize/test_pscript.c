/* perf script's lines name an address as its process's mappings stand when the
 * line is made. The lines remember the text they made for an address; that text
 * must not answer for another process at the same address, nor for a process
 * whose mappings changed since. Each check is made with only the names printed
 * (the path where a remembered address is not looked up again) and with source
 * lines too (where it is). And where a line's two addresses share the memo's
 * slot, the one looked up and kept first must not take the other's text.
 * The binary named is this test program itself (symbols and DWARF). */
#include "test.h"

#include <string.h>

#include "cstrace/symbolize.h"
#include "self_elf.h"
#include "../../symbolize/pscript_int.h" /* the memo's slots */

enum { MAPPED = 3, OTHER = 4 };

int here_first(int x);
int here_second(int x);

__attribute__((noinline)) int here_first(int x)
{
	return x * 3 + 1;
}

__attribute__((noinline)) int here_second(int x)
{
	return x * 5 + 2;
}

struct lines {
	char text[8][512];
	int n;
};

static int keep_line(void *ctx, const char *line, size_t len)
{
	struct lines *l = ctx;

	if (l->n < 8)
		snprintf(l->text[l->n++], sizeof(l->text[0]), "%.*s", (int)len, line);
	return 0;
}

/* A range of 2 instructions at @start in process @pid, ending in a taken branch. */
static void feed(struct cst_symbolizer *sym, struct cst_pscript *p, int32_t pid, uint64_t start)
{
	struct cst_elem e = {.type = cst_elem_instr_range, .start = start, .end = start + 8,
			     .num_insns = 2, .isa = cst_isa_a64, .pid = pid, .tid = pid,
			     .cpu = 0, .last_class = cst_insn_branch, .last_size = 4,
			     .last_executed = true};

	CHECK_EQ_INT(cst_symbolizer_feed(sym, &e, cst_pscript_add, p), 0);
}

/* How many times @needle is in @hay. */
static int count(const char *hay, const char *needle)
{
	int n = 0;

	for (const char *s = strstr(hay, needle); s; s = strstr(s + 1, needle))
		n++;
	return n;
}

static void check(const char *exe, uint64_t first, uint64_t second, unsigned fields)
{
	struct cst_sym_mapping m = {.pid = MAPPED, .path = exe, .elf_vaddr = true};
	struct cst_pscript_opts o = {.sz = sizeof(o), .fields = fields, .branches = true};
	struct cst_symbolizer *sym = NULL;
	struct cst_pscript *p = NULL;
	struct lines l = {0};

	CHECK_EQ_INT(cst_symbolizer_alloc(&sym, NULL), 0);
	if (!sym)
		return;
	CHECK_EQ_INT(cst_symbolizer_add_mapping(sym, &m), 0);
	CHECK_EQ_INT(cst_pscript_alloc(&p, sym, keep_line, &l, &o), 0);
	if (!p) {
		cst_symbolizer_free(sym);
		return;
	}
	feed(sym, p, MAPPED, first);
	feed(sym, p, MAPPED, second);  /* here_first+4 => here_second */
	feed(sym, p, OTHER, second);   /* here_second+4 => the other's: no map */
	m.pid = OTHER;                 /* the other process maps the program now */
	CHECK_EQ_INT(cst_symbolizer_add_mapping(sym, &m), 0);
	feed(sym, p, OTHER, second);   /* here_second+4 => here_second, the other's */
	CHECK_EQ_INT(l.n, 3);
	if (l.n == 3) {
		CHECK(count(l.text[0], "here_first+0x4") == 1 && count(l.text[0], "here_second+0x0") == 1);
		CHECK_EQ_INT(count(l.text[1], "here_second"), 1);
		CHECK_EQ_INT(count(l.text[1], "[unknown]"), 2);
		CHECK(count(l.text[2], "here_second+0x4") == 1 && count(l.text[2], "here_second+0x0") == 1);
		CHECK_EQ_INT(count(l.text[2], "[unknown]"), 0);
	}
	for (int i = 0; i < l.n; i++)
		fprintf(stderr, "%s", l.text[i]);
	cst_pscript_free(p);
	cst_symbolizer_free(sym);
}

static size_t slot(uint64_t addr)
{
	return sym_addr_slot(addr, PSC_LOC_MEMO_BITS);
}

/* A line whose ip the memo does not hold and whose addr it does, in one slot:
 * the ip goes in first and must not leave the addr its own text. */
static void check_shared_slot(const char *exe, uint64_t a)
{
	struct cst_sym_mapping m = {.pid = MAPPED, .path = exe, .elf_vaddr = true};
	struct cst_pscript_opts o = {.sz = sizeof(o), .branches = true,
				     .fields = cst_pscript_ip | cst_pscript_sym | cst_pscript_dso |
					       cst_pscript_addr};
	struct cst_symbolizer *sym = NULL;
	struct cst_pscript *p = NULL;
	struct lines l = {0};
	char ip[32], to[32];
	uint64_t y = a + 64, x = y + 4;

	/* x shares y's slot; the other addresses printed before keep out of it */
	while (slot(x) != slot(y) || slot(x - 4) == slot(y) || slot(y + 4) == slot(y) ||
	       slot(a + 4) == slot(y))
		x += 4;
	CHECK_EQ_INT(cst_symbolizer_alloc(&sym, NULL), 0);
	if (!sym)
		return;
	CHECK_EQ_INT(cst_symbolizer_add_mapping(sym, &m), 0);
	CHECK_EQ_INT(cst_pscript_alloc(&p, sym, keep_line, &l, &o), 0);
	if (p) {
		feed(sym, p, MAPPED, a);
		feed(sym, p, MAPPED, y);      /* a+4 => y: y's text kept */
		feed(sym, p, MAPPED, x - 4);  /* y+4 => x-4 */
		feed(sym, p, MAPPED, y);      /* x => y, in one slot */
		CHECK_EQ_INT(l.n, 3);
		snprintf(ip, sizeof(ip), "%16llx ", (unsigned long long)x);
		snprintf(to, sizeof(to), "=> %16llx ", (unsigned long long)y);
		if (l.n == 3) {
			const char *at_ip = strstr(l.text[2], ip), *at_to = strstr(l.text[2], to);

			CHECK(at_ip && at_to && at_ip < at_to);
		}
		for (int i = 0; i < l.n; i++)
			fprintf(stderr, "%s", l.text[i]);
	}
	cst_pscript_free(p);
	cst_symbolizer_free(sym);
}

int main(void)
{
	unsigned names = cst_pscript_ip | cst_pscript_sym | cst_pscript_symoff | cst_pscript_dso |
			 cst_pscript_addr;
	char exe[4096];
	uint64_t bias, first, second;

	if (!self_elf(exe, sizeof(exe), &bias))
		TEST_SKIP("no /proc/self/exe");
	/* the functions' ELF addresses (without the Thumb bit of an armhf build) */
	first = ((uint64_t)(uintptr_t)here_first - bias) & ~(uint64_t)1;
	second = ((uint64_t)(uintptr_t)here_second - bias) & ~(uint64_t)1;
	CHECK_EQ_INT(here_first(1) + here_second(1), 11);
	check(exe, first, second, names);
	check(exe, first, second, names | cst_pscript_srcline);
	check_shared_slot(exe, first);
	return test_done();
}
