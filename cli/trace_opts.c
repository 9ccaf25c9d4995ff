/* Parsing of the trace-input options shared by every verb that reads a trace. */
#include "trace_opts.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "cli.h"
#include "cstrace/boards.h"

static void show_progress(void *ctx, uint64_t done, uint64_t total)
{
	trace_opts_note_offset(done);
	cli_progress(ctx, done, total);
}

/* --threads: the CPUs online (the split decode gives the same output for any
 * number; tests/decode/threads.sh) */
static unsigned default_threads(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	return n < 1 ? 1 : n > 64 ? 64 : (unsigned)n;
}

void trace_opts_init(struct trace_opts *t)
{
	memset(t, 0, sizeof(*t));
	t->session.sz = sizeof(t->session);
	t->session.log = &cli_log;
	/* how far decoding got: drawn on a terminal, and kept for a crash report */
	t->session.progress = show_progress;
	t->session.progress_ctx = (void *)"decoding";
	t->session.start_offset = cli_resume_offset();
	t->session.resume_from = cli_resume_crash_offset();
	t->session.raw_sources = t->sources;
	t->session.raw_images = t->images;
	t->session.threads = default_threads();
}

void trace_opts_fini(struct trace_opts *t)
{
	for (int i = 0; i < t->session.nraw_images; i++)
		free(t->image_paths[i]);
	cst_symdir_free(t->symdir);
	t->symdir = NULL;
}

/* The option a source came from, to name it in front of what is wrong with it. */
struct source_arg {
	const char *opt, *arg;
};

static void source_log(void *ctx, enum cst_log_level level, const char *msg)
{
	const struct source_arg *a = ctx;

	if (level <= cst_log_warning)
		cli_error("%s %s: %s", a->opt, a->arg, msg);
}

static int add_source(struct trace_opts *t, enum cst_protocol p, const char *opt, const char *arg)
{
	struct source_arg a = {opt, arg};
	const struct cst_log log = {source_log, &a};

	if (t->session.nraw_sources >= TRACE_OPTS_MAX_SOURCES) {
		cli_error("%s: at most %d sources", opt, TRACE_OPTS_MAX_SOURCES);
		return -1;
	}
	if (cst_source_cfg_parse(&t->sources[t->session.nraw_sources], p, arg, &log) < 0)
		return -1;
	t->session.nraw_sources++;
	return 0;
}

/* FILE@ADDR[:OFFSET[:LENGTH]] */
static int add_image(struct trace_opts *t, const char *arg)
{
	struct cst_mem_image *m;
	char *copy, *at, *field, *save = NULL;
	uint64_t *dst[3];
	int n = 0;

	if (t->session.nraw_images >= TRACE_OPTS_MAX_IMAGES) {
		cli_error("--image: at most %d images", TRACE_OPTS_MAX_IMAGES);
		return -1;
	}
	m = &t->images[t->session.nraw_images];
	memset(m, 0, sizeof(*m));
	copy = strdup(arg);
	if (!copy)
		return -1;
	at = strrchr(copy, '@');
	if (!at || at == copy) {
		cli_error("--image %s: expected FILE@ADDR[:OFFSET[:LENGTH]]", arg);
		free(copy);
		return -1;
	}
	*at = '\0';
	dst[0] = &m->address;
	dst[1] = &m->file_offset;
	dst[2] = &m->length;
	for (field = strtok_r(at + 1, ":", &save); field; field = strtok_r(NULL, ":", &save)) {
		if (n >= 3 || cst_parse_u64(field, dst[n]) < 0) {
			cli_error("--image %s: '%s' is not a number (expected FILE@ADDR[:OFFSET[:LENGTH]])",
				  arg, field);
			free(copy);
			return -1;
		}
		n++;
	}
	if (!n) {
		cli_error("--image %s: address missing", arg);
		free(copy);
		return -1;
	}
	m->space = cst_mem_any;
	m->path = copy; /* owns the string; copy begins with the file name */
	cli_input(copy);
	t->image_paths[t->session.nraw_images++] = copy;
	return 0;
}

int trace_opts_parse(struct trace_opts *t, int opt, const char *arg)
{
	const struct cli_str_opt kept[] = {
		{0x1001, &t->session.buffer},      {0x1009, &t->session.symfs},
		{0x100a, &t->session.kernel},      {0x100b, &t->board},
		{0x100c, &t->session.buildid_dir}, {0x1020, &t->symdir_path},
	};

	if (cli_str_opt_set(kept, sizeof(kept) / sizeof(kept[0]), opt, arg)) {
		/* files read: never an output of the command (cli_input) */
		if (opt == 0x100a)
			cli_input(arg);
		else if (opt == 0x1020)
			cli_input_tree(arg);
		return 1;
	}
	switch (opt) {
	case 0x1000:
		return cli_parse_id_list(arg, t->session.id_filter) < 0 ? -1 : 1;
	case 0x1002:
		return add_source(t, cst_proto_etmv4i, "--etmv4", arg) < 0 ? -1 : 1;
	case 0x1003:
		return add_source(t, cst_proto_etmv3, "--etmv3", arg) < 0 ? -1 : 1;
	case 0x1004:
		return add_source(t, cst_proto_ptm, "--ptm", arg) < 0 ? -1 : 1;
	case 0x1005:
		return add_source(t, cst_proto_ete, "--ete", arg) < 0 ? -1 : 1;
	case 0x1006:
		return add_source(t, cst_proto_stm, "--stm", arg) < 0 ? -1 : 1;
	case 0x1007:
		return add_image(t, arg) < 0 ? -1 : 1;
	case 0x1008:
		if (!strcasecmp(arg, "frames"))
			t->session.raw_format = cst_bufmt_frames;
		else if (!strcasecmp(arg, "raw"))
			t->session.raw_format = cst_bufmt_raw;
		else if (!strcasecmp(arg, "tpiu"))
			t->session.raw_format = cst_bufmt_tpiu;
		else if (!strcasecmp(arg, "dstream"))
			t->session.raw_format = cst_bufmt_dstream;
		else {
			cli_error("--raw-format %s: expected frames, raw, tpiu or dstream", arg);
			return -1;
		}
		return 1;
	case 0x100d:
		if (!strcasecmp(arg, "time")) {
			t->session.order = cst_order_time;
		} else if (!strcasecmp(arg, "file")) {
			t->session.order = cst_order_file;
		} else if (!strcasecmp(arg, "auto")) {
			t->session.order = cst_order_auto;
		} else {
			cli_error("--order: '%s': expected time, file or auto", arg);
			return -1;
		}
		return 1;
	case 0x100e:
		t->session.confine = true;
		return 1;
	case 0x100f: {
		uint64_t v;

		if (cli_parse_size(arg, &v) < 0) {
			cli_error("--start-offset '%s': expected a byte count like 5368709120 or 5G",
				  arg);
			return -1;
		}
		/* a restart after a decoder crash resumes further on */
		if (v > t->session.start_offset)
			t->session.start_offset = v;
		return 1;
	}
	case 0x1010: {
		uint64_t v;

		if (cst_parse_u64(arg, &v) < 0 || v < 1 || v > 64) {
			cli_error("--threads '%s': expected a number of threads from 1 to 64", arg);
			return -1;
		}
		t->session.threads = (unsigned)v;
		return 1;
	}
	case 0x1012:
		if (!strcasecmp(arg, "auto")) {
			t->session.decoder = cst_decoder_auto;
		} else if (!strcasecmp(arg, "opencsd")) {
			t->session.decoder = cst_decoder_opencsd;
		} else if (!strcasecmp(arg, "cstrace")) {
			t->session.decoder = cst_decoder_cstrace;
		} else if (!strcasecmp(arg, "recover")) {
			t->session.decoder = cst_decoder_recover;
		} else {
			cli_error("--decoder: '%s': expected auto, opencsd, cstrace or recover", arg);
			return -1;
		}
		return 1;
	case 0x1011: {
		uint64_t v;

		if (cli_parse_size(arg, &v) < 0 || v < 16) {
			cli_error("--chunk-size '%s': expected a byte count of at least 16, like 64K",
				  arg);
			return -1;
		}
		t->session.chunk_size = v;
		return 1;
	}
	default:
		return 0;
	}
}

/* --board: the profile's ETM sources, for the trace IDs no option gives */
static int load_board_sources(struct trace_opts *t)
{
	struct cst_board *board = NULL;
	int n;

	if (cst_board_find(&board, NULL, t->board, &cli_log) < 0)
		return -1;
	n = cst_board_sources(board, NULL, t->board_sources, TRACE_OPTS_MAX_SOURCES);
	cst_board_free(board);
	if (n < 0) {
		cli_error("--board %s: %s", t->board, cst_strerror(n));
		return -1;
	}
	t->session.board_sources = t->board_sources;
	t->session.nboard_sources = n < TRACE_OPTS_MAX_SOURCES ? n : TRACE_OPTS_MAX_SOURCES;
	return 0;
}

int trace_opts_finish(struct trace_opts *t)
{
	if (t->board && load_board_sources(t) < 0)
		return -1;
	/* indexed once: decode's code reads and the symbolizer share it */
	if (t->symdir_path && !t->symdir) {
		if (cst_symdir_open(&t->symdir, t->symdir_path, &cli_log) < 0)
			return -1;
		t->session.symdir = t->symdir;
	}
	return 0;
}

/* Element offsets, and the bytes decoded so far, say how far decoding got, unless
 * elements come out merged by time: then the CPUs' decoders take turns, or run
 * ahead of what is printed on other threads, and no one position says where a
 * crash was. */
static bool offsets_noted = true;
/* a child restarted after a crash on threads: elements printed already */
static int64_t skip_left;

void trace_opts_restarted(struct trace_opts *t)
{
	skip_left = cli_skip_elements();
	if (skip_left >= 0)
		t->session.threads = 1; /* restarted after a crash on threads */
	/* restarted after OpenCSD's decoder crashed: cstrace's decoders, which
	 * resynchronise where the trace is bad, unless OpenCSD's was asked for */
	if (cli_recovering() && t->session.decoder != cst_decoder_opencsd)
		t->session.decoder = cst_decoder_recover;
	cli_note_recoverable(t->session.decoder != cst_decoder_opencsd);
}

int trace_opts_open(struct trace_opts *t, const char *path, FILE *out,
		    struct cst_session **session)
{
	int ret;

	cli_note_input(path);
	trace_opts_restarted(t);
	ret = cli_session_open(session, path, &t->session);
	if (ret < 0)
		return ret;
	offsets_noted = cst_session_order(*session) == cst_order_file;
	cli_note_resumable(cst_session_resumable(*session), out);
	return 0;
}

bool trace_opts_skip(uint64_t nelems)
{
	/* a restarted child decodes on one thread: one element at a time (0: is
	 * any left out still?) */
	if (!nelems)
		return skip_left > 0;
	if (skip_left > 0 && (uint64_t)skip_left >= nelems) {
		skip_left -= (int64_t)nelems;
		return true;
	}
	return false;
}

void trace_opts_note_offset(uint64_t offset)
{
	if (offsets_noted)
		cli_note_offset(offset);
}

bool trace_opts_note_elem(const struct cst_elem *e)
{
	/* end of trace carries no position of its own (OpenCSD gives it index 0) */
	if (e->type != cst_elem_eot)
		trace_opts_note_offset(e->offset);
	return trace_opts_skip(1);
}
