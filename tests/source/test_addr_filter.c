/* Address filters: perf's --filter syntax parsed into entries, the kernel's string,
 * the comparator limits, the kernel's placement on a mapping and kernel symbols
 * from a kallsyms file. (Symbols of ELF files: tests/capture/filter.sh against nm.) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cstrace/source.h"
#include "test.h"

struct msgs {
	char last[1024];
	int n;
};

static void on_log(void *ctx, enum cst_log_level level, const char *msg)
{
	struct msgs *m = ctx;

	(void)level;
	snprintf(m->last, sizeof(m->last), "%s", msg);
	m->n++;
}

static struct cst_addr_filter *parse(const char *text, int want, struct msgs *m)
{
	struct cst_log log = {on_log, m};
	struct cst_addr_filter *f = NULL;

	memset(m, 0, sizeof(*m));
	CHECK_EQ_INT(cst_addr_filter_parse(&f, text, &log), want);
	if (want)
		CHECK(f == NULL && m->n == 1);
	return f;
}

static void test_parse(void)
{
	struct msgs m;
	struct cst_addr_filter *f;
	const struct cst_addr_filter_entry *e;

	/* perf's forms: spaces around / and @ or none, commas or spaces between */
	f = parse("filter main @ /bin/prog, start 0x400@./p stop foo #2 @ lib.so "
		  "filter bar/baz @ x,filter * @ y, filter 0x10/16 , stop 0xffff000010080000 "
		  "start g #g@z",
		  0, &m);
	CHECK_EQ_INT(cst_addr_filter_count(f), 8);
	e = cst_addr_filter_get(f, 0);
	CHECK(e && e->action == cst_addr_filter_range && !strcmp(e->sym, "main") &&
	      !strcmp(e->file, "/bin/prog") && !e->has_size);
	e = cst_addr_filter_get(f, 1);
	CHECK(e && e->action == cst_addr_filter_start && !e->sym[0] && e->addr == 0x400 &&
	      !strcmp(e->file, "./p"));
	e = cst_addr_filter_get(f, 2);
	CHECK(e && e->action == cst_addr_filter_stop && !strcmp(e->sym, "foo") &&
	      e->sym_index == 2 && !strcmp(e->file, "lib.so"));
	e = cst_addr_filter_get(f, 3);
	CHECK(e && !strcmp(e->sym, "bar") && !strcmp(e->size_sym, "baz") && e->has_size);
	e = cst_addr_filter_get(f, 4);
	CHECK(e && !strcmp(e->sym, "*") && !strcmp(e->file, "y"));
	e = cst_addr_filter_get(f, 5);
	CHECK(e && e->addr == 0x10 && e->size == 16 && !e->file[0]);
	e = cst_addr_filter_get(f, 6);
	CHECK(e && e->action == cst_addr_filter_stop && e->addr == 0xffff000010080000ull);
	e = cst_addr_filter_get(f, 7);
	CHECK(e && e->sym_index == -1 && !strcmp(e->file, "z"));
	CHECK(cst_addr_filter_get(f, 8) == NULL && cst_addr_filter_get(f, -1) == NULL);
	cst_addr_filter_free(f);

	/* what cs_etm cannot do, and malformed entries: one line naming the entry */
	parse("start 0x400/0x80@./p", -cste_unsupported, &m);
	CHECK(strstr(m.last, "'start 0x400/0x80@./p'") && strstr(m.last, "not a range"));
	parse("tracestop main @ p", -cste_unsupported, &m);
	CHECK(strstr(m.last, "tracestop"));
	parse("trace main", -cste_format, &m);
	CHECK(strstr(m.last, "'trace main'") && strstr(m.last, "expected filter, start or stop"));
	parse("filter", -cste_format, &m);
	parse("filter main @", -cste_format, &m);
	CHECK(strstr(m.last, "a file follows '@'"));
	parse("filter main /", -cste_format, &m);
	parse("filter 0x400 @ p", -cste_format, &m);
	CHECK(strstr(m.last, "needs a size"));
	parse("filter 0x400/0 @ p", -cste_format, &m);
	parse("filter * ", -cste_format, &m);
	parse("filter 0x40 #2/4", -cste_format, &m);
	parse("filter main #x @ p", -cste_format, &m);
	parse(" , ,", -cste_format, &m);
	CHECK(strstr(m.last, "no entry"));
}

static struct cst_addr_filter *resolved(const char *text)
{
	struct msgs m;
	struct cst_addr_filter *f = parse(text, 0, &m);

	/* addresses alone resolve without files (kernel entries) */
	CHECK_EQ_INT(cst_addr_filter_resolve(f, "/nonexistent", NULL, NULL), 0);
	return f;
}

static void test_format_and_check(void)
{
	struct cst_log log;
	struct msgs m;
	struct cst_addr_filter *f = resolved("filter 0xffff000010080000/0x200, stop 0x10");
	char buf[256];

	CHECK(cst_addr_filter_format(f, buf, sizeof(buf)) > 0);
	CHECK_EQ_STR(buf, "filter 0xffff000010080000/0x200,stop 0x10");
	CHECK_EQ_INT(cst_addr_filter_format(f, buf, 10), -cste_nomem);
	memset(&m, 0, sizeof(m));
	log = (struct cst_log){on_log, &m};
	/* the perf driver: ranges and start/stop points not together */
	CHECK_EQ_INT(cst_addr_filter_check(f, 4, true, "cpu 0's ETM", &log), -cste_unsupported);
	CHECK(strstr(m.last, "not both"));
	CHECK_EQ_INT(cst_addr_filter_check(f, 4, false, "cpu 0's ETM", &log), 0);
	CHECK_EQ_INT(cst_addr_filter_check(f, 1, false, "cpu 0's ETM", &log), -cste_unsupported);
	CHECK(strstr(m.last, "cpu 0's ETM: it has 1 address comparator pair(s)"));
	cst_addr_filter_free(f);
	/* a pair per range: four ranges fit four pairs, five do not */
	f = resolved("filter 0x0/4,filter 0x10/4,filter 0x20/4,filter 0x30/4");
	CHECK_EQ_INT(cst_addr_filter_check(f, 4, true, "e", &log), 0);
	CHECK_EQ_INT(cst_addr_filter_check(f, 3, true, "e", &log), -cste_unsupported);
	cst_addr_filter_free(f);
	/* one comparator per point: eight points fit four pairs; nine exceed the driver */
	f = resolved("start 1,stop 2,start 3,stop 4,start 5,stop 6,start 7,stop 8");
	CHECK_EQ_INT(cst_addr_filter_check(f, 4, true, "e", &log), 0);
	CHECK_EQ_INT(cst_addr_filter_check(f, 3, true, "e", &log), -cste_unsupported);
	cst_addr_filter_free(f);
	f = resolved("start 1,stop 2,start 3,stop 4,start 5,stop 6,start 7,stop 8,stop 9");
	CHECK_EQ_INT(cst_addr_filter_check(f, 8, true, "e", &log), -cste_unsupported);
	CHECK(strstr(m.last, "at most 8"));
	cst_addr_filter_free(f);
	/* unresolved entries have no string */
	f = parse("filter main @ /x", 0, &m);
	CHECK_EQ_INT(cst_addr_filter_format(f, buf, sizeof(buf)), -cste_invalid);
	cst_addr_filter_free(f);
}

static void test_place(void)
{
	struct cst_addr_filter_entry e = {.resolved = true, .start = 0x1200, .len = 0x100,
					  .path = "/p"};
	uint64_t s, l;

	/* the text mapping from offset 0x1000 at 0x400000 holds it */
	CHECK(cst_addr_filter_place(&e, 0x400000, 0x2000, 0x1000, &s, &l));
	CHECK_EQ_INT(s, 0x400200);
	CHECK_EQ_INT(l, 0x100);
	/* a mapping of other offsets does not */
	CHECK(!cst_addr_filter_place(&e, 0x500000, 0x1000, 0x3000, &s, &l));
	CHECK(!cst_addr_filter_place(&e, 0x500000, 0x200, 0x1000, &s, &l));
	/* a range cut by the mapping's end, and one that starts before it */
	CHECK(cst_addr_filter_place(&e, 0x400000, 0x280, 0x1000, &s, &l));
	CHECK_EQ_INT(s, 0x400200);
	CHECK_EQ_INT(l, 0x80);
	CHECK(cst_addr_filter_place(&e, 0x600000, 0x1000, 0x1280, &s, &l));
	CHECK_EQ_INT(s, 0x600000);
	CHECK_EQ_INT(l, 0x80);
	/* a point */
	e.len = 0;
	CHECK(cst_addr_filter_place(&e, 0x400000, 0x2000, 0x1000, &s, &l));
	CHECK_EQ_INT(s, 0x400200);
	CHECK(!cst_addr_filter_place(&e, 0x400000, 0x200, 0x1000, &s, &l));
	e.path[0] = 0; /* the kernel's: no mapping */
	CHECK(!cst_addr_filter_place(&e, 0x400000, 0x2000, 0x1000, &s, &l));
}

static void test_kallsyms(void)
{
	char root[] = "/tmp/cstrace-kallsyms-XXXXXX", path[256];
	struct cst_addr_filter *f;
	struct cst_log log;
	struct msgs m;
	char buf[256];
	FILE *fp;

	if (!mkdtemp(root))
		return;
	snprintf(path, sizeof(path), "%s/proc", root);
	mkdir(path, 0700);
	snprintf(path, sizeof(path), "%s/proc/kallsyms", root);
	fp = fopen(path, "w");
	if (!fp)
		return;
	fputs("ffff800008010000 T _text\nffff800008010800 t do_one\n"
	      "ffff800008010a40 T do_two\nffff800008010900 d some_data\n"
	      "ffff800008011000 t dup\nffff800008012000 t dup\n", fp);
	fclose(fp);
	log = (struct cst_log){on_log, &m};
	f = parse("filter do_one, start do_two", 0, &m);
	CHECK_EQ_INT(cst_addr_filter_resolve(f, root, NULL, &log), 0);
	CHECK(cst_addr_filter_format(f, buf, sizeof(buf)) > 0);
	/* do_one's size runs to the next symbol of any kind (the data at ...900) */
	CHECK_EQ_STR(buf, "filter 0xffff800008010800/0x100,start 0xffff800008010a40");
	cst_addr_filter_free(f);
	f = parse("filter dup", 0, &m);
	CHECK_EQ_INT(cst_addr_filter_resolve(f, root, NULL, &log), -cste_not_found);
	CHECK(strstr(m.last, "more than one"));
	cst_addr_filter_free(f);
	f = parse("filter nosuch", 0, &m);
	CHECK_EQ_INT(cst_addr_filter_resolve(f, root, NULL, &log), -cste_not_found);
	CHECK(strstr(m.last, "has no kernel function 'nosuch'"));
	cst_addr_filter_free(f);
	/* a default file stands in for a missing @FILE (a trigger's program) */
	f = parse("start main", 0, &m);
	CHECK_EQ_INT(cst_addr_filter_resolve(f, root, "/nonexistent/prog", &log), -cste_not_found);
	CHECK(strstr(m.last, "/nonexistent/prog"));
	cst_addr_filter_free(f);
	unlink(path);
	snprintf(path, sizeof(path), "%s/proc", root);
	rmdir(path);
	rmdir(root);
}

int main(void)
{
	test_parse();
	test_format_and_check();
	test_place();
	test_kallsyms();
	return test_done();
}
