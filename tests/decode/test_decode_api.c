/* Unit tests of the decode library API: NULL and edge arguments first, then core
 * and register parsing, the trace container, and streaming: any read window and
 * any push chunking must give the same elements as one whole-buffer run. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cstrace/decode.h"
#include "test.h"

static void test_null_args(void)
{
	struct cst_trace *t = NULL;
	struct cst_decoder *d = (void *)1;
	struct cst_session *s = (void *)1;

	CHECK_EQ_INT(cst_trace_alloc(NULL), -cste_invalid);
	CHECK_EQ_INT(cst_trace_alloc(&t), 0);
	CHECK(t != NULL);
	CHECK_EQ_INT(cst_trace_add_buffer(NULL, NULL), -cste_invalid);
	CHECK_EQ_INT(cst_trace_add_buffer(t, NULL), -cste_invalid);
	CHECK_EQ_INT(cst_trace_add_source(t, 0, NULL), -cste_invalid);
	CHECK_EQ_INT(cst_trace_add_image(t, NULL), -cste_invalid);
	CHECK_EQ_INT(cst_trace_load_snapshot(NULL, "x", NULL), -cste_invalid);
	CHECK(cst_trace_buffer(t, 0) == NULL);
	CHECK(cst_trace_source(t, -1) == NULL);
	CHECK_EQ_INT(cst_decoder_alloc(NULL, t, 0, NULL), -cste_invalid);
	CHECK_EQ_INT(cst_decoder_alloc(&d, t, 0, NULL), -cste_invalid);
	CHECK(d == NULL);
	CHECK_EQ_INT(cst_decoder_run(NULL), -cste_invalid);
	CHECK_EQ_INT(cst_decoder_feed(NULL, 0, NULL, 0), -cste_invalid);
	CHECK_EQ_INT(cst_session_open(NULL, "x", NULL), -cste_invalid);
	CHECK_EQ_INT(cst_session_open(&s, NULL, NULL), -cste_invalid);
	CHECK_EQ_INT(cst_session_run(NULL, NULL, NULL, NULL), -cste_invalid);
	CHECK_EQ_INT(cst_elem_format_text(NULL, NULL, 0), -cste_invalid);
	CHECK(strcmp(cst_strerror(-cste_format), "malformed input") == 0);
	CHECK(strcmp(cst_strerror(12345), "unknown error") == 0);
	cst_trace_free(t);
	cst_trace_free(NULL);
	cst_decoder_free(NULL);
	cst_session_free(NULL);
}

static void test_images_dedup(void)
{
	struct cst_trace *t = NULL;
	struct cst_mem_image m = {.path = "/a", .address = 0x1000, .space = cst_mem_any};

	CHECK_EQ_INT(cst_trace_alloc(&t), 0);
	CHECK_EQ_INT(cst_trace_add_image(t, &m), 0);
	CHECK_EQ_INT(cst_trace_add_image(t, &m), 0);
	CHECK_EQ_INT(cst_trace_nimages(t), 1);
	m.address = 0x2000;
	CHECK_EQ_INT(cst_trace_add_image(t, &m), 0);
	CHECK_EQ_INT(cst_trace_nimages(t), 2);
	cst_trace_free(t);
}

/* Elements reduced to a comparable text line each. */
struct sink {
	char *buf;
	size_t len, cap;
	unsigned long n;
};

static int collect(void *ctx, const struct cst_elem *e)
{
	struct sink *s = ctx;
	char line[1024];
	int n = snprintf(line, sizeof(line), "%llu %x ", (unsigned long long)e->offset, e->trace_id);

	n += cst_elem_format_ocsd(e, line + n, sizeof(line) - (size_t)n);
	if (s->len + (size_t)n + 2 > s->cap) {
		s->cap = (s->cap + (size_t)n + 2) * 2;
		s->buf = realloc(s->buf, s->cap);
	}
	memcpy(s->buf + s->len, line, (size_t)n);
	s->len += (size_t)n;
	s->buf[s->len++] = '\n';
	s->n++;
	return 0;
}

static void run_window(struct cst_trace *t, size_t window, struct sink *out)
{
	struct cst_decoder_opts o = {.sz = sizeof(o), .window = window};
	struct cst_decoder *d = NULL;

	CHECK_EQ_INT(cst_decoder_alloc(&d, t, 0, &o), 0);
	CHECK(d != NULL);
	if (!d)
		return;
	cst_decoder_set_elem_cb(d, collect, out);
	CHECK_EQ_INT(cst_decoder_run(d), 0);
	cst_decoder_free(d);
}

/* Push the file in chunks of odd sizes: frames split across feeds must decode
 * exactly as whole frames. */
static void run_chunks(struct cst_trace *t, size_t chunk, struct sink *out)
{
	struct cst_decoder_opts o = {.sz = sizeof(o)};
	struct cst_decoder *d = NULL;
	const struct cst_buffer_info *b = cst_trace_buffer(t, 0);
	FILE *f = fopen(b->path, "rb");
	unsigned char *data = malloc(1 << 20);
	size_t n = f ? fread(data, 1, 1 << 20, f) : 0;

	CHECK_EQ_INT(cst_decoder_alloc(&d, t, 0, &o), 0);
	CHECK(d && f && n > 0);
	if (d && n) {
		cst_decoder_set_elem_cb(d, collect, out);
		for (size_t off = 0; off < n; off += chunk)
			CHECK_EQ_INT(cst_decoder_feed(d, off, data + off, off + chunk > n ? n - off : chunk), 0);
		CHECK_EQ_INT(cst_decoder_end(d), 0);
	}
	if (f)
		fclose(f);
	free(data);
	cst_decoder_free(d);
}

static int stop_after_10(void *ctx, const struct cst_elem *e)
{
	int *n = ctx;

	return ++*n >= 10 ? 42 : 0;
}

/* Offsets are 64-bit although OpenCSD's index is 32-bit: push the buffer so that
 * it straddles the 4 GiB mark and every element must keep its exact offset. */
struct shifted {
	struct sink s;
	uint64_t base;
	int bad;
};

static int collect_shifted(void *ctx, const struct cst_elem *e)
{
	struct shifted *sh = ctx;
	struct cst_elem copy = *e;

	/* OpenCSD gives some end-of-trace elements index 0: no position to check */
	if (e->type == cst_elem_eot)
		return 0;
	if (e->offset < sh->base)
		sh->bad++;
	copy.offset -= sh->base;
	return collect(&sh->s, &copy);
}

static int collect_no_eot(void *ctx, const struct cst_elem *e)
{
	return e->type == cst_elem_eot ? 0 : collect(ctx, e);
}

static void test_offsets_64bit(struct cst_trace *t)
{
	struct shifted sh = {.base = 0x100000000ull - 4096};
	struct sink refs = {0}, *ref = &refs;
	struct cst_decoder *rd = NULL, *d = NULL;

	CHECK_EQ_INT(cst_decoder_alloc(&rd, t, 0, NULL), 0);
	cst_decoder_set_elem_cb(rd, collect_no_eot, ref);
	CHECK_EQ_INT(cst_decoder_run(rd), 0);
	cst_decoder_free(rd);
	CHECK_EQ_INT(cst_decoder_alloc(&d, t, 0, NULL), 0);
	FILE *f = fopen(cst_trace_buffer(t, 0)->path, "rb");
	unsigned char *data = malloc(1 << 20);
	size_t n = f ? fread(data, 1, 1 << 20, f) : 0;

	CHECK(d && n);
	if (d && n) {
		cst_decoder_set_elem_cb(d, collect_shifted, &sh);
		for (size_t off = 0; off < n; off += 1024)
			cst_decoder_feed(d, sh.base + off, data + off, off + 1024 > n ? n - off : 1024);
		cst_decoder_end(d);
	}
	CHECK_EQ_INT(sh.bad, 0);
	CHECK(sh.s.n == ref->n);
	CHECK(sh.s.len == ref->len && !memcmp(sh.s.buf, ref->buf, ref->len));
	if (f)
		fclose(f);
	free(data);
	free(sh.s.buf);
	free(refs.buf);
	cst_decoder_free(d);
}

/* Decoders share no state: two decoding the same buffer on two threads at once
 * give exactly what one gives alone. */
struct thread_run {
	struct cst_trace *t;
	struct sink s;
};

static void *thread_main(void *arg)
{
	struct thread_run *r = arg;

	run_window(r->t, 0, &r->s);
	return NULL;
}

static void test_threads(struct cst_trace *t, const struct sink *ref)
{
	struct thread_run a = {.t = t}, b = {.t = t};
	pthread_t ta, tb;

	CHECK_EQ_INT(pthread_create(&ta, NULL, thread_main, &a), 0);
	CHECK_EQ_INT(pthread_create(&tb, NULL, thread_main, &b), 0);
	pthread_join(ta, NULL);
	pthread_join(tb, NULL);
	CHECK(a.s.len == ref->len && !memcmp(a.s.buf, ref->buf, ref->len));
	CHECK(b.s.len == ref->len && !memcmp(b.s.buf, ref->buf, ref->len));
	free(a.s.buf);
	free(b.s.buf);
}

static void test_streaming(const char *shared)
{
	char dir[4096];
	struct cst_trace *t = NULL;
	struct sink whole = {0}, small = {0}, odd = {0}, bytes = {0};
	struct cst_decoder *d;
	int n = 0;

	snprintf(dir, sizeof(dir), "%s/opencsd/juno_r1_1", shared);
	CHECK_EQ_INT(cst_trace_alloc(&t), 0);
	CHECK_EQ_INT(cst_trace_load_snapshot(t, dir, NULL), 0);
	CHECK_EQ_INT(cst_trace_nbuffers(t), 2);
	CHECK_EQ_INT(cst_trace_nsources(t), 7);
	run_window(t, 0, &whole);
	run_window(t, 16, &small);
	run_chunks(t, 13, &odd);
	run_chunks(t, 1, &bytes);
	CHECK(whole.n > 10000);
	CHECK(small.len == whole.len && !memcmp(small.buf, whole.buf, whole.len));
	CHECK(odd.len == whole.len && !memcmp(odd.buf, whole.buf, whole.len));
	CHECK(bytes.len == whole.len && !memcmp(bytes.buf, whole.buf, whole.len));
	test_offsets_64bit(t);
	test_threads(t, &whole);

	/* a callback can stop decoding, and its value comes back */
	CHECK_EQ_INT(cst_decoder_alloc(&d, t, 0, NULL), 0);
	cst_decoder_set_elem_cb(d, stop_after_10, &n);
	CHECK_EQ_INT(cst_decoder_run(d), 42);
	CHECK_EQ_INT(n, 10);
	cst_decoder_free(d);
	free(whole.buf);
	free(small.buf);
	free(odd.buf);
	free(bytes.buf);
	cst_trace_free(t);
}

/* A raw dump's sources: explicit ones first, then a board's for the trace IDs no
 * explicit source gives; and which inputs can resume after a decoder crash. */
static void test_board_sources(void)
{
	char path[] = "/tmp/cstrace-raw-XXXXXX";
	struct cst_source_cfg given, board[2];
	struct cst_session_opts o = {.sz = sizeof(o), .raw_sources = &given, .nraw_sources = 1,
				     .board_sources = board, .nboard_sources = 2};
	struct cst_session *s = NULL;
	const struct cst_trace *t;
	int fd = mkstemp(path);

	CHECK(fd >= 0);
	if (fd < 0)
		return;
	CHECK(write(fd, "\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\x80", 16) == 16);
	close(fd);
	CHECK_EQ_INT(cst_source_cfg_parse(&given, cst_proto_etmv4i, "traceid=0x10,idr1=0x4100f402",
					  log_capture()),
		     0);
	CHECK_EQ_INT(cst_source_cfg_parse(&board[0], cst_proto_etmv4i, "traceid=0x10", log_capture()), 0);
	CHECK_EQ_INT(cst_source_cfg_parse(&board[1], cst_proto_etmv4i, "traceid=0x12", log_capture()), 0);
	CHECK_EQ_INT(cst_session_open(&s, path, &o), 0);
	t = cst_session_trace(s);
	CHECK_EQ_INT(cst_trace_nsources(t), 2);
	if (cst_trace_nsources(t) == 2) {
		/* the explicit source replaced the board's with its trace ID */
		CHECK_EQ_INT(cst_source_trace_id(cst_trace_source(t, 0)), 0x10);
		CHECK_EQ_INT(cst_trace_source(t, 0)->regs.etmv4.trcidr1, 0x4100f402);
		CHECK_EQ_INT(cst_source_trace_id(cst_trace_source(t, 1)), 0x12);
	}
	/* one buffer: a crash can be resumed from its offset */
	CHECK(cst_session_resumable(s));
	cst_session_free(s);
	/* a board alone describes the dump */
	o.nraw_sources = 0;
	CHECK_EQ_INT(cst_session_open(&s, path, &o), 0);
	CHECK_EQ_INT(cst_trace_nsources(cst_session_trace(s)), 2);
	cst_session_free(s);
	CHECK(!cst_session_resumable(NULL));
	unlink(path);
}

static int count_elem(void *ctx, const struct cst_elem *e)
{
	(void)e;
	++*(uint64_t *)ctx;
	return 0;
}

static int count_packet(void *ctx, const struct cst_packet *p)
{
	(void)p;
	++*(uint64_t *)ctx;
	return 0;
}

/* Decode @bytes as a raw dump of one source (@proto, @spec): listing its packets
 * (dump) or its elements. Returns what the callbacks counted. */
static uint64_t run_raw(enum cst_protocol proto, const char *spec, const uint8_t *bytes,
			size_t len, bool packets)
{
	char path[] = "/tmp/cst-test-rawXXXXXX";
	struct cst_source_cfg src;
	struct cst_session_opts o = {.sz = sizeof(o), .kind = cst_input_raw,
				     .raw_sources = &src, .nraw_sources = 1,
				     .raw_format = cst_bufmt_raw};
	struct cst_session *s = NULL;
	uint64_t n = 0;
	int fd = mkstemp(path);

	CHECK(fd >= 0);
	CHECK(write(fd, bytes, len) == (ssize_t)len);
	close(fd);
	CHECK_EQ_INT(cst_source_cfg_parse(&src, proto, spec, NULL), 0);
	CHECK_EQ_INT(cst_session_open(&s, path, &o), 0);
	if (s && packets)
		cst_session_dump(s, count_packet, &n);
	else if (s)
		cst_session_run(s, count_elem, NULL, &n);
	cst_session_free(s);
	unlink(path);
	return n;
}

/* A decoder that listed ETE packets (through OpenCSD's printer, which writes to the
 * process-wide default logger) leaves that logger when it is freed: the next
 * decoder's errors once reached the freed decoder through the freed tree's
 * callback object (found by the raw-dump fuzzer; the sanitizer stage runs this). */
static void test_printer_released(void)
{
	/* ETE: an A-sync, a trace info, then bytes to list as packets */
	static const uint8_t ete[] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x80, 0x01, 0x00,
				      0x04, 0x04, 0x04, 0x04};
	/* ETMv3: an A-sync, then bytes of a fixed pseudo-random run, which OpenCSD
	 * decodes with errors it logs */
	uint8_t bad[4096];
	uint32_t x = 12345;

	memset(bad, 0, 5);
	bad[5] = 0x80;
	for (size_t i = 6; i < sizeof(bad); i++) {
		x = x * 1103515245u + 12345u;
		bad[i] = (uint8_t)(x >> 16);
	}
	CHECK(run_raw(cst_proto_ete, "traceid=0x15", ete, sizeof(ete), true) > 0);
	CHECK(run_raw(cst_proto_etmv3, "traceid=0x10", bad, sizeof(bad), false) > 0);
	CHECK(run_raw(cst_proto_ete, "traceid=0x15", ete, sizeof(ete), true) > 0);
}

int main(void)
{
	const char *shared = getenv("CSTRACE_SHARED_TESTDATA");
	char probe[4096];

	test_null_args();
	test_images_dedup();
	test_board_sources();
	test_printer_released();
	snprintf(probe, sizeof(probe), "%s/opencsd/juno_r1_1/snapshot.ini", shared ? shared : "");
	if (shared && access(probe, R_OK) == 0)
		test_streaming(shared);
	else
		printf("note: %s absent: streaming tests not run\n", probe);
	return test_done();
}
