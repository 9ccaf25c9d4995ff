/* Minimal unit-test support: CHECK macros that report file:line and count failures.
 * A test program returns test_done(): 0 if all checks passed, 1 otherwise. */
#ifndef CSTRACE_TEST_H
#define CSTRACE_TEST_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cstrace/common.h"

static int test_failures;
static int test_checks;

#define CHECK(cond)                                                                   \
	do {                                                                          \
		test_checks++;                                                        \
		if (!(cond)) {                                                        \
			test_failures++;                                              \
			fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, \
				#cond);                                               \
		}                                                                     \
	} while (0)

#define CHECK_EQ_INT(a, b)                                                            \
	do {                                                                          \
		long long va_ = (long long)(a), vb_ = (long long)(b);                 \
		test_checks++;                                                        \
		if (va_ != vb_) {                                                     \
			test_failures++;                                              \
			fprintf(stderr, "%s:%d: CHECK failed: %s == %s (%lld != %lld)\n", \
				__FILE__, __LINE__, #a, #b, va_, vb_);                \
		}                                                                     \
	} while (0)

#define CHECK_EQ_STR(a, b)                                                            \
	do {                                                                          \
		const char *sa_ = (a), *sb_ = (b);                                    \
		test_checks++;                                                        \
		if (!sa_ || !sb_ || strcmp(sa_, sb_) != 0) {                          \
			test_failures++;                                              \
			fprintf(stderr, "%s:%d: CHECK failed: %s == %s (\"%s\" != \"%s\")\n", \
				__FILE__, __LINE__, #a, #b, sa_ ? sa_ : "(null)",     \
				sb_ ? sb_ : "(null)");                                \
		}                                                                     \
	} while (0)

/* Skip the whole test program (ctest SKIP_RETURN_CODE 77) with a reason. */
#define TEST_SKIP(...)                                                                \
	do {                                                                          \
		printf("SKIP: ");                                                     \
		printf(__VA_ARGS__);                                                  \
		printf("\n");                                                         \
		exit(77);                                                             \
	} while (0)

static inline int test_done(void)
{
	printf("%d checks, %d failed\n", test_checks, test_failures);
	return test_failures ? 1 : 0;
}

/* A log that keeps the last line a library logged, for checking messages:
 * pass log_capture(), read log_captured(). */
static inline char *log_captured(void)
{
	static char line[1024];

	return line;
}

static inline void log_capture_fn(void *ctx, enum cst_log_level level, const char *msg)
{
	(void)ctx;
	(void)level;
	snprintf(log_captured(), 1024, "%s", msg);
}

static inline const struct cst_log *log_capture(void)
{
	static const struct cst_log log = {log_capture_fn, NULL};

	return &log;
}

#endif
