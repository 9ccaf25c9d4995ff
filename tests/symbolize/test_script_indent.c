/* The call trace's indents on the decoding threads (script_calls_view.c): a
 * stretch's view writes a line without its indent and notes where it goes; the
 * caller puts the spaces in. The line must be byte for byte the one a single
 * thread builds (head, padding, the rest, cut at CST_LINE_MAX), also where the
 * head, the indent or the rest alone fill it: deep recursions indent by up
 * to 131,070 spaces. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cstrace/common.h"
#include "test.h"
#include "../../symbolize/script_int.h"

static unsigned long long rng = 88172645463325252ull;

static unsigned long long rnd(unsigned long long n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng % n;
}

/* A length near the edges, or anywhere up to @max. */
static size_t pick(size_t max)
{
	static const size_t edges[] = {0, 1, 2, 3, 100, CST_LINE_MAX - 3, CST_LINE_MAX - 2,
				       CST_LINE_MAX - 1, CST_LINE_MAX, CST_LINE_MAX + 1};
	size_t n = rnd(2) ? edges[rnd(sizeof(edges) / sizeof(edges[0]))] : (size_t)rnd(max + 1);

	return n < max ? n : max;
}

static void fill(char *p, size_t n, char base)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (char)(base + (char)(i % 23));
}

int main(void)
{
	static struct cst_line one, stretch;
	static char head[CST_LINE_MAX + 2], rest[CST_LINE_MAX + 2];
	struct cst_buf b = {0};
	int cut = 0;

	for (int i = 0; i < 4000; i++) {
		size_t h = pick(CST_LINE_MAX + 1), r = pick(CST_LINE_MAX + 1), at;
		uint64_t levels = rnd(3) ? pick(CST_LINE_MAX) : rnd(40);

		fill(head, h, 'a');
		fill(rest, r, 'A');
		/* one thread: the head, the indent padded in, the rest */
		cst_line_reset(&one);
		cst_line_mem(&one, head, h);
		cst_line_str(&one, "", (int)(levels * 2));
		cst_line_mem(&one, rest, r);
		cst_line_end(&one);
		/* a stretch: the head (where the indent goes), the rest */
		cst_line_reset(&stretch);
		cst_line_mem(&stretch, head, h);
		at = stretch.n;
		cst_line_mem(&stretch, rest, r);
		cst_line_end(&stretch);
		b.len = 0;
		sym_script_put_indented(&b, stretch.b, stretch.n, at, levels * 2);
		CHECK(!b.failed);
		CHECK_EQ_INT(b.len, one.n);
		if (b.len == one.n && memcmp(b.p, one.b, one.n)) {
			fprintf(stderr, "head %zu, rest %zu, levels %llu: the bytes differ\n", h, r,
				(unsigned long long)levels);
			CHECK(0);
		}
		cut += one.n == CST_LINE_MAX;
	}
	/* the cases the test is for did come up */
	CHECK(cut > 500);
	cst_buf_fini(&b);
	printf("4000 lines, %d cut at %d bytes\n", cut, CST_LINE_MAX);
	return test_done();
}
