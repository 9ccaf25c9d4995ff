/* One rule for sized options structs, as each library applies it (common.h): NULL
 * and sz 0 take the defaults / the caller's header, a struct from a newer header
 * is accepted when its unknown tail is zero and refused otherwise, and a size
 * below the size field is refused. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <stddef.h>

#include "cstrace/auxlog.h"
#include "cstrace/boards.h"
#include "cstrace/capture.h"
#include "cstrace/decode.h"
#include "cstrace/export.h"
#include "cstrace/perfdata.h"
#include "cstrace/snapshot.h"
#include "cstrace/symbolize.h"
#include "cstrace/synth.h"
#include "test.h"

/* A caller's struct from a newer header: the library's struct, then more. */
#define NEWER(T) struct { T known; uint64_t more; }

static void test_symbolizer(void)
{
	NEWER(struct cst_symbolizer_opts) n;
	struct cst_symbolizer *s = NULL;

	CHECK_EQ_INT(cst_symbolizer_alloc(&s, NULL), 0);
	cst_symbolizer_free(s);
	memset(&n, 0, sizeof(n));
	CHECK_EQ_INT(cst_symbolizer_alloc(&s, &n.known), 0); /* sz 0 */
	cst_symbolizer_free(s);
	n.known.sz = sizeof(n);
	CHECK_EQ_INT(cst_symbolizer_alloc(&s, &n.known), 0); /* newer, tail zero */
	cst_symbolizer_free(s);
	n.more = 1;
	s = NULL;
	CHECK_EQ_INT(cst_symbolizer_alloc(&s, &n.known), -cste_invalid);
	CHECK(s == NULL);
	n.known.sz = 2;
	CHECK_EQ_INT(cst_symbolizer_alloc(&s, &n.known), -cste_invalid);
}

static void test_perf_writer(const char *dir)
{
	NEWER(struct cst_perf_writer_opts) n;
	struct cst_perf_writer *w = NULL;
	char path[512];

	snprintf(path, sizeof(path), "%s/w.data", dir);
	memset(&n, 0, sizeof(n));
	n.known.sz = sizeof(n);
	CHECK_EQ_INT(cst_perf_writer_open(&w, path, &n.known), 0);
	cst_perf_writer_free(w);
	n.more = 7;
	w = NULL;
	CHECK_EQ_INT(cst_perf_writer_open(&w, path, &n.known), -cste_invalid);
	CHECK(w == NULL);
	unlink(path);
}

static void test_snap_writer(const char *dir)
{
	NEWER(struct cst_snap_writer_opts) n;
	struct cst_snap_writer *w = NULL;

	memset(&n, 0, sizeof(n));
	CHECK_EQ_INT(cst_snap_writer_open(&w, dir, &n.known), 0);
	cst_snap_writer_free(w);
	n.known.sz = sizeof(n);
	n.more = 1;
	w = NULL;
	CHECK_EQ_INT(cst_snap_writer_open(&w, dir, &n.known), -cste_invalid);
	CHECK(w == NULL);
}

/* The views' sized structs: a newer caller's unknown tail must be zero. */
static void test_views(void)
{
	NEWER(struct cst_calltree_text_opts) t;
	NEWER(struct cst_flamegraph_opts) g;
	NEWER(struct cst_perfetto_opts) p;
	struct cst_calltree *tree = NULL;
	struct cst_perfetto *pw = NULL;
	FILE *f = fopen("/dev/null", "w");

	CHECK_EQ_INT(cst_calltree_alloc(&tree), 0);
	if (!tree || !f)
		return;
	memset(&t, 0, sizeof(t));
	memset(&g, 0, sizeof(g));
	memset(&p, 0, sizeof(p));
	t.known.sz = sizeof(t);
	g.known.sz = sizeof(g);
	p.known.sz = sizeof(p);
	CHECK_EQ_INT(cst_calltree_write_text(tree, f, &t.known), 0);
	CHECK_EQ_INT(cst_calltree_write_flamegraph(tree, f, &g.known), 0);
	CHECK_EQ_INT(cst_perfetto_alloc(&pw, f, &p.known), 0);
	cst_perfetto_free(pw);
	t.more = g.more = p.more = 1;
	CHECK_EQ_INT(cst_calltree_write_text(tree, f, &t.known), -cste_invalid);
	CHECK_EQ_INT(cst_calltree_write_flamegraph(tree, f, &g.known), -cste_invalid);
	pw = NULL;
	CHECK_EQ_INT(cst_perfetto_alloc(&pw, f, &p.known), -cste_invalid);
	CHECK(pw == NULL);
	CHECK_EQ_INT(cst_calltree_write_text(tree, f, NULL), 0); /* NULL: defaults */
	cst_calltree_free(tree);
	fclose(f);
}

static int no_line(void *ctx, const char *line, size_t len)
{
	(void)ctx, (void)line, (void)len;
	return 0;
}

/* The filters and the views that apply them: a newer caller's unknown tail must
 * be zero. */
static void test_filtered_views(void)
{
	NEWER(struct cst_sym_filter_opts) fo = {.known = {.sz = sizeof(fo)}};
	NEWER(struct cst_report_view_opts) ro = {.known = {.sz = sizeof(ro)}};
	NEWER(struct cst_script_opts) so = {.known = {.sz = sizeof(so)}};
	const struct cst_report_format *csv = cst_report_format_find("csv");
	struct cst_symbolizer *sym = NULL;

	CHECK_EQ_INT(cst_symbolizer_alloc(&sym, NULL), 0);
	/* a tail of zeros is taken, anything else in it refused */
	for (int more = 0; sym && more < 2; more++) {
		struct cst_sym_filter *f = NULL;
		struct cst_report_view *v = NULL;
		struct cst_script *s = NULL;
		int want = more ? -cste_invalid : 0;

		fo.more = ro.more = so.more = (uint64_t)more;
		CHECK_EQ_INT(cst_sym_filter_alloc(&f, sym, &fo.known), want);
		CHECK_EQ_INT(cst_report_view_alloc(&v, csv, sym, &ro.known), want);
		CHECK_EQ_INT(cst_script_alloc(&s, sym, no_line, NULL, &so.known), want);
		CHECK_EQ_INT(!f + !v + !s, more ? 3 : 0);
		cst_sym_filter_free(f);
		cst_report_view_free(v);
		cst_script_free(s);
	}
	cst_symbolizer_free(sym);
}

/* The export's: the model's and both writers' options. */
static void test_export(const char *dir)
{
	NEWER(struct cst_export_sqlite_opts) q;
	NEWER(struct cst_export_postgres_opts) p;
	struct cst_export_writer *w = NULL;
	char path[512];

	snprintf(path, sizeof(path), "%s/e.db", dir);
	memset(&q, 0, sizeof(q));
	q.known.sz = sizeof(q);
	q.more = 1;
	CHECK_EQ_INT(cst_export_sqlite_open(&w, path, &q.known), -cste_invalid);
	CHECK(w == NULL);
	q.more = 0;
	CHECK_EQ_INT(cst_export_sqlite_open(&w, path, &q.known), 0); /* newer, tail zero */
	cst_export_writer_free(w); /* never committed: no file */
	CHECK(access(path, F_OK) != 0);
	memset(&p, 0, sizeof(p));
	p.known.sz = sizeof(p);
	p.more = 1;
	w = NULL;
	CHECK_EQ_INT(cst_export_postgres_open(&w, "host=127.0.0.1 port=1", &p.known), -cste_invalid);
	CHECK(w == NULL);
}

/* Padding is never initialised, so the rule holds only for structs that end
 * without it: the last member must end at sizeof, on every architecture this
 * test is built for (the host, arm64 and armhf). A struct appended to with a
 * bool after a pointer fails here. */
#define END(T, last) {#T, sizeof(struct T), offsetof(struct T, last) + sizeof(((struct T *)0)->last)}

static void test_no_tail_padding(void)
{
	static const struct {
		const char *name;
		size_t size, end;
	} v[] = {
		END(cst_auxlog_reader_opts, log), END(cst_auxlog_writer_opts, reserved),
		END(cst_board_sources_opts, policy), END(cst_calltree_text_opts, reserved),
		END(cst_consumer_opts, reserve), END(cst_decoder_opts, start_offset),
		END(cst_doctor_opts, board), END(cst_fixture_opts, osrelease),
		END(cst_flamegraph_opts, loss), END(cst_perf_reader_opts, window),
		END(cst_perf_writer_opts, reserved), END(cst_perfetto_opts, reserved),
		END(cst_record_opts, trigger_count), END(cst_replay_opts, reserved),
		END(cst_session_opts, file_ctx), END(cst_snap_writer_opts, log),
		END(cst_symbolizer_opts, file_ctx), END(cst_synth_opts, trigger_count),
		END(cst_sysfs_opts, reserved), END(cst_sym_filter_opts, reserved),
		END(cst_report_view_opts, reserved), END(cst_script_opts, reserved),
		END(cst_out_opts, reserved), END(cst_snap_reader_cbs, file),
		END(cst_export_opts, reserved), END(cst_export_sqlite_opts, reserved),
		END(cst_export_postgres_opts, progress_ctx), END(cst_export_writer_ops, find_event),
		END(cst_html_input, loss),
		END(cst_pscript_opts, period),
	};

	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		if (v[i].size != v[i].end)
			fprintf(stderr, "struct %s: %zu bytes of padding after its last member\n",
				v[i].name, v[i].size - v[i].end);
		CHECK_EQ_INT(v[i].size, v[i].end);
	}
}

int main(void)
{
	char dir[] = "/tmp/cstrace-opts-XXXXXX";

	if (!mkdtemp(dir))
		return 1;
	test_symbolizer();
	test_perf_writer(dir);
	test_snap_writer(dir);
	test_views();
	test_filtered_views();
	test_export(dir);
	test_no_tail_padding();
	rmdir(dir);
	return test_done();
}
