/* Board profiles that once broke the parser, each kept as an input under regress/
 * with the one-line error it must now give. Built with AddressSanitizer, so a
 * use-after-free or overflow on these inputs fails the test even when the
 * error text happens to come out right. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cstrace/boards.h"
#include "test.h"

struct logcap {
	char last[1024];
	int lines;
};

static void cap_fn(void *ctx, enum cst_log_level level, const char *msg)
{
	struct logcap *c = ctx;

	(void)level;
	snprintf(c->last, sizeof(c->last), "%s", msg);
	c->lines++;
}

static const struct {
	const char *file;
	int line;
	const char *words;
} cases[] = {
	/* An indented line right after [cpu 1]: the value set last (cpu 0's core)
	 * lived in the cpus array that [cpu 1] had just grown and moved. */
	{"continuation-after-grow.ini", 6, "indented line continues nothing"},
	/* An indented line right after [issue a]: it extended the name,
	 * which the header had set, across the header. */
	{"continuation-after-issue-header.ini", 4, "indented line continues nothing"},
};

int main(void)
{
	const char *src = getenv("CSTRACE_SOURCE_DIR");

	if (!src)
		TEST_SKIP("CSTRACE_SOURCE_DIR not set (run through ctest)");
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char path[PATH_MAX], want[PATH_MAX + 16];
		struct logcap cap = {{0}, 0};
		struct cst_log log = {cap_fn, &cap};
		struct cst_board *b = NULL;

		snprintf(path, sizeof(path), "%s/tests/boards/regress/%s", src, cases[i].file);
		CHECK_EQ_INT(cst_board_load(&b, path, &log), -cste_format);
		CHECK(b == NULL);
		cst_board_free(b);
		snprintf(want, sizeof(want), "%s:%d: ", path, cases[i].line);
		CHECK_EQ_INT(cap.lines, 1);
		if (strncmp(cap.last, want, strlen(want)) || !strstr(cap.last, cases[i].words)) {
			test_failures++;
			fprintf(stderr, "%s: expected \"%s...%s\", got \"%s\"\n", cases[i].file, want,
				cases[i].words, cap.last);
		}
		test_checks++;
	}
	return test_done();
}
