/* The registry of report formats: every row has a name, a help that starts with
 * it and a writer; names are unique and found by name; an unknown name is not,
 * and the list a message gives names every format once, the last after "or". */
#include <string.h>

#include "cstrace/symbolize.h"
#include "test.h"

static void test_rows(const struct cst_report_format *f, size_t n)
{
	CHECK(n > 0);
	for (size_t i = 0; i < n; i++) {
		size_t len = f[i].name ? strlen(f[i].name) : 0;

		CHECK(len > 0);
		CHECK(f[i].help && !strncmp(f[i].help, f[i].name, len));
		CHECK(f[i].write != NULL);
		/* a timeline streams: it cannot also want a tree or a profile built
		 * to be written at the end */
		if (f[i].needs & cst_report_needs_timeline)
			CHECK_EQ_INT(f[i].needs & (cst_report_needs_calls | cst_report_needs_profile), 0);
		for (size_t k = 0; k < i; k++)
			CHECK(strcmp(f[i].name, f[k].name) != 0);
		CHECK(cst_report_format_find(f[i].name) == &f[i]);
	}
}

static void test_unknown(const struct cst_report_format *f, size_t n)
{
	char names[1024], last[64], small[8];
	int len = cst_report_format_names(names, sizeof(names));
	const char *at = names;

	CHECK(cst_report_format_find("nosuch") == NULL);
	CHECK(cst_report_format_find("") == NULL);
	CHECK(cst_report_format_find(NULL) == NULL);
	CHECK(cst_report_format_find("TEXT") == NULL); /* names are exact */
	CHECK_EQ_INT(len, (int)strlen(names));
	/* "a, b, ... or z": each name in table order, once */
	for (size_t i = 0; i < n; i++) {
		const char *sep = !i ? "" : i + 1 < n ? ", " : " or ";

		CHECK(!strncmp(at, sep, strlen(sep)));
		at += strlen(sep);
		CHECK(!strncmp(at, f[i].name, strlen(f[i].name)));
		at += strlen(f[i].name);
	}
	CHECK_EQ_INT(*at, '\0');
	snprintf(last, sizeof(last), " or %s", f[n - 1].name);
	CHECK(len > (int)strlen(last) && !strcmp(names + len - strlen(last), last));
	/* a short buffer: cut, terminated, and the length it needed */
	CHECK_EQ_INT(cst_report_format_names(small, sizeof(small)), len);
	CHECK_EQ_INT(strlen(small), sizeof(small) - 1);
	CHECK(!strncmp(small, names, sizeof(small) - 1));
}

/* What --format has always taken, and which of them name one binary. */
static void test_known(void)
{
	static const char *const names[] = {"text", "json", "csv", "folded", "flamegraph",
					    "perfetto", "autofdo", "profgen", "llvm-sample",
					    "lcov", "coverage", "html"};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		const struct cst_report_format *f = cst_report_format_find(names[i]);
		bool one_binary = !strcmp(names[i], "profgen") || !strcmp(names[i], "llvm-sample");

		CHECK(f != NULL);
		if (f)
			CHECK_EQ_INT(!!(f->needs & cst_report_needs_dso), one_binary);
	}
}

int main(void)
{
	const struct cst_report_format *f = NULL;
	size_t n = cst_report_format_all(&f);

	CHECK(f != NULL);
	if (!f)
		return test_done();
	test_rows(f, n);
	test_unknown(f, n);
	test_known();
	CHECK_EQ_INT(cst_report_format_all(NULL), n);
	return test_done();
}
