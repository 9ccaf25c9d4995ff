/* common/: error words, the log helpers, number parsing, little-endian access,
 * growable arrays and strings, binary search, mapped inputs, the options rule and
 * printf-free text lines. */
#include "cstrace/common.h"
#include "test.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char last_msg[1024];
static int nmsgs;

static void capture_log(void *ctx, enum cst_log_level level, const char *msg)
{
	(void)ctx;
	(void)level;
	snprintf(last_msg, sizeof(last_msg), "%s", msg);
	nmsgs++;
}

static const struct cst_log tlog = {capture_log, NULL};

static void test_strerror(void)
{
	CHECK_EQ_STR(cst_strerror(0), "success");
	CHECK_EQ_STR(cst_strerror(-cste_nomem), "out of memory");
	CHECK_EQ_STR(cst_strerror(cste_nomem), "out of memory");
	CHECK_EQ_STR(cst_strerror(-cste_max), "unknown error");
	CHECK_EQ_STR(cst_strerror(1000000), "unknown error");
	for (int e = 0; e < cste_max; e++)
		CHECK(strcmp(cst_strerror(-e), "unknown error") != 0);
}

static void log_at(const char *path, uint64_t off, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	cst_vlogf_at(&tlog, cst_log_error, path, off, fmt, ap);
	va_end(ap);
}

static void test_log(void)
{
	struct cst_log none = {NULL, NULL};

	nmsgs = 0;
	cst_logf(NULL, cst_log_error, "dropped %d", 1);
	cst_logf(&none, cst_log_error, "dropped %d", 2);
	CHECK_EQ_INT(nmsgs, 0);
	cst_logf(&tlog, cst_log_warning, "x=%d", 42);
	CHECK_EQ_STR(last_msg, "x=42");
	log_at("perf.data", 18446744073709551615ULL, "expected %s", "a record");
	CHECK_EQ_STR(last_msg, "perf.data: offset 18446744073709551615: expected a record");
	CHECK_EQ_INT(nmsgs, 2);
}

static void test_parse(void)
{
	uint64_t v = 7;

	CHECK_EQ_INT(cst_parse_u64("0x10", &v), 0);
	CHECK_EQ_INT(v, 16);
	CHECK_EQ_INT(cst_parse_u64(" 12 ", &v), 0);
	CHECK_EQ_INT(v, 12);
	CHECK_EQ_INT(cst_parse_u64("010", &v), 0);
	CHECK_EQ_INT(v, 8);
	CHECK(cst_parse_u64("18446744073709551615", &v) == 0 && v == UINT64_MAX);
	v = 7;
	CHECK_EQ_INT(cst_parse_u64("18446744073709551616", &v), -cste_format);
	CHECK_EQ_INT(cst_parse_u64("-1", &v), -cste_format);
	CHECK_EQ_INT(cst_parse_u64("", &v), -cste_format);
	CHECK_EQ_INT(cst_parse_u64("12k", &v), -cste_format);
	CHECK_EQ_INT(cst_parse_u64("0x", &v), -cste_format);
	CHECK_EQ_INT(v, 7);
	CHECK_EQ_INT(cst_parse_u64(NULL, &v), -cste_invalid);
	CHECK_EQ_INT(cst_parse_u64("1", NULL), -cste_invalid);
}

static void test_le(void)
{
	uint8_t b[9] = {0xff, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08};
	uint8_t o[8];

	/* unaligned on purpose: b + 1 */
	CHECK_EQ_INT(cst_le16(b + 1), 0x0201);
	CHECK_EQ_INT(cst_le32(b + 1), 0x04030201);
	CHECK(cst_le64(b + 1) == 0x0807060504030201ULL);
	cst_put_le16(o, 0xbeef);
	CHECK(o[0] == 0xef && o[1] == 0xbe);
	cst_put_le32(o, 0x80000001u);
	CHECK(o[0] == 0x01 && o[3] == 0x80);
	cst_put_le64(o, 0x8877665544332211ULL);
	CHECK(o[0] == 0x11 && o[7] == 0x88 && cst_le64(o) == 0x8877665544332211ULL);
}

static void test_grow(void)
{
	uint32_t *a = NULL;
	size_t cap = 0, none = 0;

	CHECK_EQ_INT(CST_GROW(a, cap, none), 0);
	CHECK(a == NULL && cap == 0);
	for (uint32_t i = 0; i < 1000; i++) {
		if (CST_GROW(a, cap, i + 1)) {
			CHECK(0);
			break;
		}
		CHECK(a[i] == 0); /* new space is zeroed */
		a[i] = i;
	}
	CHECK(cap >= 1000 && cap < 2048);
	for (uint32_t i = 0; i < 1000; i++)
		if (a[i] != i)
			CHECK(a[i] == i);
	/* already big enough: nothing moves */
	{
		uint32_t *before = a;
		size_t cap_before = cap;

		CHECK_EQ_INT(CST_GROW(a, cap, 10), 0);
		CHECK(a == before && cap == cap_before);
	}
	/* overflow: refused, array kept */
	{
		uint32_t *before = a;
		size_t cap_before = cap;

		CHECK_EQ_INT(CST_GROW(a, cap, SIZE_MAX / 2), -cste_nomem);
		CHECK_EQ_INT(cst_grow(&a, &cap, SIZE_MAX, 1), -cste_nomem);
		CHECK(a == before && cap == cap_before && a[999] == 999);
	}
	CHECK_EQ_INT(cst_grow(NULL, &cap, 1, 4), -cste_nomem);
	CHECK_EQ_INT(cst_grow(&a, NULL, 1, 4), -cste_nomem);
	free(a);
}

/* A library's options (v2) and an older and a newer caller's view of them. v1
 * ended in padding (an int after the size_t): v2 fills it with a named member
 * and adds its new fields after it, as common.h's rule asks, so that an older
 * caller's padding (never initialised) is not read as a v2 field. */
struct lib_opts {
	size_t sz;
	int a;
	int v1_pad;
	int b;
	const char *c;
};
struct old_opts {
	size_t sz;
	int a;
};
struct new_opts {
	size_t sz;
	int a;
	int v1_pad;
	int b;
	const char *c;
	uint64_t d;
};

/* CST_PARTITION against a linear scan: every key, with duplicates, over every
 * sub-range, for unsigned and signed index types. */
static void test_partition(void)
{
	static const uint64_t v[] = {1, 3, 3, 3, 7, 9, 9, 12};
	const uint32_t n = sizeof(v) / sizeof(v[0]);
	int bad = 0;

	for (uint32_t from = 0; from <= n; from++)
		for (uint32_t to = from; to <= n; to++)
			for (uint64_t key = 0; key <= 13; key++) {
				uint32_t lt = from, le = from;
				int sle;

				while (lt < to && v[lt] < key)
					lt++;
				while (le < to && v[le] <= key)
					le++;
				bad += CST_PARTITION(i, from, to, v[i] < key) != lt;
				bad += CST_PARTITION(i, from, to, v[i] <= key) != le;
				sle = CST_PARTITION(i, (int)from, (int)to, v[i] <= key);
				bad += sle != (int)le;
			}
	CHECK_EQ_INT(bad, 0);
	/* an empty range is its end, and the condition is never evaluated */
	CHECK_EQ_INT(CST_PARTITION(i, 5u, 5u, (abort(), 1)), 5);
	/* 64-bit indices past 32 bits: no element is read, only the index compared */
	CHECK(CST_PARTITION(i, (uint64_t)0, UINT64_MAX, i < ((uint64_t)1 << 40)) ==
	      (uint64_t)1 << 40);
}

static void test_str_append(void)
{
	char *s = NULL;

	CHECK_EQ_INT(cst_str_append(&s, "; ", "first"), 0); /* no separator before the first */
	CHECK_EQ_INT(cst_str_append(&s, "; ", "second"), 0);
	CHECK_EQ_INT(cst_str_append(&s, "", ""), 0);
	CHECK_EQ_INT(cst_str_append(&s, " ", "third"), 0);
	CHECK_EQ_STR(s, "first; second third");
	free(s);
}

static void test_mapped_input(void)
{
	char path[] = "/tmp/cstrace-map-XXXXXX";
	int fd = mkstemp(path);
	struct cst_mapped_input in = {.fd = -1};

	CHECK(fd >= 0);
	if (fd < 0)
		return;
	CHECK_EQ_INT(write(fd, "0123456789", 10), 10);
	close(fd);
	in.fd = cst_open_input(path);
	CHECK_EQ_INT(cst_mapped_input_map(&in), 0);
	CHECK(in.size == 10 && in.map && !memcmp(in.map, "0123456789", 10));
	errno = 1234;
	cst_mapped_input_close(&in);
	CHECK_EQ_INT(errno, 1234); /* kept for the caller's message */
	CHECK(in.fd == -1 && !in.map && in.size == 0);
	cst_mapped_input_close(&in); /* twice: nothing to do */
	/* an empty file is open but not mapped: reads go through pread */
	CHECK_EQ_INT(truncate(path, 0), 0);
	in.fd = cst_open_input(path);
	CHECK_EQ_INT(cst_mapped_input_map(&in), 0);
	CHECK(in.fd >= 0 && !in.map && in.size == 0);
	cst_mapped_input_close(&in);
	CHECK_EQ_INT(cst_mapped_input_map(&in), -1); /* not open */
	unlink(path);
}

static void test_opts(void)
{
	struct lib_opts got;
	CST_OPTS(lib_opts, full, .a = 1, .b = 2, .c = "x");
	CST_OPTS(old_opts, old, .a = 5);
	CST_OPTS(new_opts, newer, .a = 3, .b = 4);
	struct lib_opts zero_sz = {.sz = 0, .a = 9, .b = 8};
	/* smaller than its own size field: 4 bytes where size_t has 8, 2 where it has 4 */
	struct lib_opts tiny = {.sz = sizeof(size_t) / 2, .a = 1};

	CHECK_EQ_INT(full.sz, sizeof(struct lib_opts));
	CHECK_EQ_INT(cst_opts_load(&got, sizeof(got), NULL, "lib_opts", &tlog), 0);
	CHECK(got.sz == sizeof(got) && got.a == 0 && got.b == 0 && got.c == NULL);
	CHECK_EQ_INT(cst_opts_load(&got, sizeof(got), &full, "lib_opts", &tlog), 0);
	CHECK(got.sz == sizeof(got) && got.a == 1 && got.b == 2 && !strcmp(got.c, "x"));
	CHECK_EQ_INT(cst_opts_load(&got, sizeof(got), &zero_sz, "lib_opts", &tlog), 0);
	CHECK(got.sz == sizeof(got) && got.a == 9 && got.b == 8);
	/* an older caller: the rest defaults */
	CHECK_EQ_INT(cst_opts_load(&got, sizeof(got), &old, "lib_opts", &tlog), 0);
	CHECK(got.a == 5 && got.b == 0 && got.c == NULL);
	/* a newer caller asking for nothing new */
	CHECK_EQ_INT(cst_opts_load(&got, sizeof(got), &newer, "lib_opts", &tlog), 0);
	CHECK(got.a == 3 && got.b == 4);
	/* a newer caller asking for something this library lacks */
	newer.d = 1;
	nmsgs = 0;
	CHECK_EQ_INT(cst_opts_load(&got, sizeof(got), &newer, "lib_opts", &tlog), -cste_invalid);
	CHECK_EQ_INT(nmsgs, 1);
	CHECK(strstr(last_msg, "lib_opts") != NULL);
	CHECK(got.a == 0 && got.sz == sizeof(got)); /* left at the defaults */
	CHECK_EQ_INT(cst_opts_load(&got, sizeof(got), &tiny, "lib_opts", &tlog), -cste_invalid);
	CHECK_EQ_INT(cst_opts_load(NULL, sizeof(got), &full, "lib_opts", NULL), -cste_invalid);
	CHECK_EQ_INT(cst_opts_load(&got, 2, &full, "lib_opts", NULL), -cste_invalid);
}

/* Every cst_line formatter against snprintf with the format it stands for. */
static void test_line(void)
{
	static const int64_t vals[] = {0, 1, -1, 7, 10, 15, 16, 255, 4096, -4096, 123456789,
				       INT32_MAX, INT32_MIN, INT64_MAX, INT64_MIN};
	static const int widths[] = {0, 1, 3, 6, 12, 16, 20, 25, -1, -6, -7, -16, -25};
	struct cst_line l;
	char want[64], got[64];

	for (size_t i = 0; i < sizeof(vals) / sizeof(vals[0]); i++) {
		for (size_t k = 0; k < sizeof(widths) / sizeof(widths[0]); k++) {
			int w = widths[k];
			uint64_t u = (uint64_t)vals[i];

#define LINE_CASE(call, ...)                                                                   \
	do {                                                                                   \
		cst_line_reset(&l);                                                            \
		call;                                                                          \
		snprintf(got, sizeof(got), "%.*s", (int)l.n, l.b);                             \
		snprintf(want, sizeof(want), __VA_ARGS__);                                     \
		CHECK_EQ_STR(got, want);                                                       \
	} while (0)
			LINE_CASE(cst_line_dec(&l, vals[i], w, 0), "%*lld", w, (long long)vals[i]);
			LINE_CASE(cst_line_udec(&l, u, w), "%*llu", w, (unsigned long long)u);
			LINE_CASE(cst_line_hex(&l, u, w, 0, 0), "%*llx", w, (unsigned long long)u);
			LINE_CASE(cst_line_hex(&l, u, w, 0, 1), "%#*llx", w, (unsigned long long)u);
			LINE_CASE(cst_line_str(&l, "abc", w), "%*s", w, "abc");
			if (w >= 0) {
				LINE_CASE(cst_line_dec(&l, vals[i], w, 1), "%0*lld", w,
					  (long long)vals[i]);
				LINE_CASE(cst_line_hex(&l, u, w, 1, 0), "%0*llx", w,
					  (unsigned long long)u);
			}
#undef LINE_CASE
		}
	}
	/* a line is cut at its capacity, never overflows */
	cst_line_reset(&l);
	for (int i = 0; i < CST_LINE_MAX; i++)
		cst_line_str(&l, "0123456789", 0);
	cst_line_hex(&l, UINT64_MAX, 30, 1, 0);
	cst_line_char(&l, 'x');
	CHECK_EQ_INT((long long)l.n, CST_LINE_MAX);
	CHECK(l.b[CST_LINE_MAX - 1] == '5');
	cst_line_end(&l); /* a full line still ends as one line */
	CHECK_EQ_INT((long long)l.n, CST_LINE_MAX);
	CHECK(l.b[CST_LINE_MAX - 1] == '\n');
	cst_line_reset(&l);
	cst_line_str(&l, "ab", 0);
	cst_line_end(&l);
	CHECK(l.n == 3 && !memcmp(l.b, "ab\n", 3));
}

/* Recorded names on a terminal: controls and non-UTF-8 bytes escaped, UTF-8 kept. */
static void test_printable(void)
{
	char out[64];

	CHECK_EQ_STR(cst_printable("a\x1b[31mb", out, sizeof(out)), "a\\x1b[31mb");
	CHECK_EQ_STR(cst_printable("/home/jos\xc3\xa9/x", out, sizeof(out)), "/home/jos\xc3\xa9/x");
	CHECK_EQ_STR(cst_printable("a\xfd" "b", out, sizeof(out)), "a\\xfdb");
	CHECK_EQ_STR(cst_printable("\xc2\x9b" "1m", out, sizeof(out)), "\\xc2\\x9b1m");
	CHECK_EQ_STR(cst_printable("x\xc3", out, sizeof(out)), "x\\xc3"); /* cut short */
	CHECK_EQ_STR(cst_printable("\x7f", out, sizeof(out)), "\\x7f");
	CHECK_EQ_STR(cst_printable("abcdef", out, 4), "abc");
	CHECK_EQ_STR(cst_printable("a\x1b", out, 4), "a"); /* no room for a whole escape */
}

/* A path's last component; a trailing '/' leaves an empty one. */
static void test_path_base(void)
{
	CHECK_EQ_STR(cst_path_base("/usr/lib/libc.so.6"), "libc.so.6");
	CHECK_EQ_STR(cst_path_base("prog"), "prog");
	CHECK_EQ_STR(cst_path_base("dir/"), "");
	CHECK(cst_path_base(NULL) == NULL);
}

/* Build-ids of 8, 16 and 20 bytes match their zero-padded 20-byte form (perf.data's
 * BUILD_ID feature), whichever side is the padded one. */
static void test_build_id(void)
{
	static const uint8_t id8[8] = {1, 2, 3, 4, 5, 6, 7, 0}; /* ends in a zero byte */
	uint8_t pad8[20] = {1, 2, 3, 4, 5, 6, 7, 0}, id16[16], pad16[20] = {0}, id20[20];
	uint8_t other[20];

	for (int i = 0; i < 16; i++)
		id16[i] = pad16[i] = (uint8_t)(0xa0 + i);
	for (int i = 0; i < 20; i++)
		id20[i] = (uint8_t)(0x10 + i);
	memcpy(other, pad8, sizeof(other));
	other[12] = 9; /* not padding */
	CHECK(cst_build_id_equal(id8, 8, pad8, 20));
	CHECK(cst_build_id_equal(pad8, 20, id8, 8));
	CHECK(cst_build_id_equal(id8, 7, pad8, 20)); /* its own zero byte is padding too */
	CHECK(cst_build_id_equal(id16, 16, pad16, 20));
	CHECK(cst_build_id_equal(pad16, 20, id16, 16));
	CHECK(cst_build_id_equal(id20, 20, id20, 20));
	CHECK(cst_build_id_equal(pad8, 20, pad8, 20));
	CHECK(!cst_build_id_equal(id8, 8, other, 20));
	CHECK(!cst_build_id_equal(other, 20, id8, 8));
	CHECK(!cst_build_id_equal(id8, 8, pad16, 20));
	CHECK(!cst_build_id_equal(id20, 16, id20 + 1, 16));
	CHECK(!cst_build_id_equal(id8, 0, pad8, 20));
	CHECK(!cst_build_id_equal(pad8, 20, id8, 0));
}

int main(void)
{
	test_strerror();
	test_log();
	test_parse();
	test_le();
	test_grow();
	test_partition();
	test_str_append();
	test_mapped_input();
	test_opts();
	test_line();
	test_printable();
	test_path_base();
	test_build_id();
	return test_done();
}
