/* Sessions: open any trace input (snapshot directory, perf.data, raw sink dump)
 * and decode it as one element stream with sideband, through one call. */
#include "perf/perf_input.h"
#include "run/run.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

struct cst_session {
	struct cst_session_opts opts;
	enum cst_input_kind kind;
	struct cst_trace *trace;
	struct cst_perf_input *perf;
	/* which decoders make the elements: chosen once, at open */
	struct dec_engines engines;
	struct cst_crash_watch *crash; /* cst_session_watch_crashes */
	struct cst_decoder_stats stats;
	char *path;
	/* Every part of the session logs and tells progress through these, which
	 * pass it on to the caller's, or queue it in order with the elements while
	 * a pipe runs (run/run.h). */
	struct cst_log fwd_log, user_log;
	void (*user_progress)(void *ctx, uint64_t done, uint64_t total);
	void *user_progress_ctx;
	struct dec_pipe *pipe;
	struct views *views; /* cst_session_run_views, while it runs */
};

/* Views on the workers (cst_session_run_views): as the split runs take them, and
 * the caller's dec_merge, which delivers the run it holds before any bytes go out
 * or any state is adopted (no element a view printed could have joined it): a
 * write of nothing asks for that alone (run.h). */
struct views {
	struct dec_views d;
	cst_lines_fn write;
	void *write_ctx;
	struct dec_merge *merge; /* run_merging's, or NULL */
	uint64_t viewed;         /* elements the views handled on the workers */
};

static int views_write(void *ctx, const char *bytes, size_t len, uint64_t nelems,
		       uint64_t offset, bool has_offset)
{
	struct views *v = ctx;
	int ret;

	if (v->merge && (ret = dec_merge_end(v->merge)) != 0)
		return ret;
	if (!len && !nelems)
		return 0;
	v->viewed += nelems;
	return v->write(v->write_ctx, bytes, len, nelems, offset, has_offset);
}

static void session_log(void *ctx, enum cst_log_level level, const char *msg)
{
	struct cst_session *s = ctx;

	if (s->pipe && dec_pipe_log(s->pipe, level, msg))
		return;
	if (s->user_log.fn)
		s->user_log.fn(s->user_log.ctx, level, msg);
}

static void session_progress(void *ctx, uint64_t done, uint64_t total)
{
	struct cst_session *s = ctx;

	if (s->pipe && dec_pipe_progress(s->pipe, done, total))
		return;
	s->user_progress(s->user_progress_ctx, done, total);
}

static enum cst_input_kind detect(const char *path, const struct cst_log *log, int *err)
{
	struct stat st;
	char magic[8];
	int fd;

	if (stat(path, &st) < 0) {
		cst_logf(log, cst_log_error, "%s: %s", path, strerror(errno));
		*err = errno == ENOENT ? -cste_not_found : -cste_io;
		return cst_input_auto;
	}
	if (S_ISDIR(st.st_mode))
		return cst_input_snapshot;
	if (!S_ISREG(st.st_mode)) {
		/* /dev/zero would decode forever, a FIFO would hang the open */
		cst_logf(log, cst_log_error, "%s: not a regular file, snapshot directory or "
			 "perf.data", path);
		*err = -cste_io;
		return cst_input_auto;
	}
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		cst_logf(log, cst_log_error, "%s: cannot open: %s", path, strerror(errno));
		*err = -cste_io;
		return cst_input_auto;
	}
	if (read(fd, magic, sizeof(magic)) == (ssize_t)sizeof(magic) &&
	    !memcmp(magic, "PERFILE2", 8)) {
		close(fd);
		return cst_input_perf;
	}
	close(fd);
	{
		const char *base = strrchr(path, '/');

		if (!strcasecmp(base ? base + 1 : path, "snapshot.ini"))
			return cst_input_snapshot;
	}
	return cst_input_raw;
}

static int open_raw(struct cst_session *s, const char *path)
{
	struct cst_buffer_info info = {
		.name = "raw", .path = path, .size = UINT64_MAX, .format = s->opts.raw_format};
	int buffer, err;

	if (!s->opts.nraw_sources && !s->opts.nboard_sources) {
		cst_logf(s->opts.log, cst_log_error,
			 "%s: not a snapshot directory or perf.data file; to decode a raw sink dump "
			 "give its trace source (--etmv4 ..., --etmv3 ..., --ptm ..., --stm ... or "
			 "--board NAME)",
			 path);
		return -cste_format;
	}
	buffer = cst_trace_add_buffer(s->trace, &info);
	if (buffer < 0)
		return buffer;
	for (int i = 0; i < s->opts.nraw_sources; i++) {
		err = cst_trace_add_source(s->trace, buffer, &s->opts.raw_sources[i]);
		if (err < 0)
			return err;
	}
	for (int i = 0; i < s->opts.nboard_sources; i++) {
		const struct cst_source_cfg *b = &s->opts.board_sources[i];
		bool given = false;

		for (int j = 0; j < s->opts.nraw_sources; j++)
			given |= cst_source_trace_id(&s->opts.raw_sources[j]) ==
				 cst_source_trace_id(b);
		if (given)
			continue;
		err = cst_trace_add_source(s->trace, buffer, b);
		if (err < 0)
			return err;
	}
	return 0;
}

int cst_session_open(struct cst_session **out, const char *path,
		     const struct cst_session_opts *opts)
{
	struct cst_session *s;
	int err = 0;

	if (!out || !path)
		return -cste_invalid;
	*out = NULL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -cste_nomem;
	if (cst_opts_load(&s->opts, sizeof(s->opts), opts, "cst_session_opts",
			  opts ? opts->log : NULL) < 0) {
		free(s);
		return -cste_invalid;
	}
	if (s->opts.log)
		s->user_log = *s->opts.log;
	s->fwd_log = (struct cst_log){session_log, s};
	s->opts.log = &s->fwd_log;
	if (s->opts.progress) {
		s->user_progress = s->opts.progress;
		s->user_progress_ctx = s->opts.progress_ctx;
		s->opts.progress = session_progress;
		s->opts.progress_ctx = s;
	}
	s->path = strdup(path);
	if (!s->path) {
		err = -cste_nomem;
		goto fail;
	}
	err = cst_trace_alloc(&s->trace);
	if (!err)
		err = dec_engine_choose(s->opts.decoder, dec_ocsd_version(), s->opts.log,
					&s->engines);
	if (err)
		goto fail;
	s->kind = s->opts.kind;
	if (s->kind == cst_input_auto) {
		s->kind = detect(path, s->opts.log, &err);
		if (err)
			goto fail;
	}
	switch (s->kind) {
	case cst_input_snapshot: {
		char *dir = strdup(path);
		char *slash;
		struct stat st;

		if (!dir) {
			err = -cste_nomem;
			goto fail;
		}
		if (stat(dir, &st) == 0 && !S_ISDIR(st.st_mode) && (slash = strrchr(dir, '/')))
			*slash = '\0';
		else if (stat(dir, &st) == 0 && !S_ISDIR(st.st_mode))
			strcpy(dir, ".");
		err = dec_trace_load_snapshot(s->trace, dir, s->opts.confine, s->opts.log);
		free(dir);
		break;
	}
	case cst_input_perf:
		err = dec_perf_input_open(&s->perf, path, &s->opts, &s->engines, s->trace);
		break;
	case cst_input_raw:
		err = open_raw(s, path);
		break;
	default:
		err = -cste_invalid;
	}
	if (err)
		goto fail;
	for (int i = 0; i < s->opts.nraw_images && !err; i++)
		err = cst_trace_add_image(s->trace, &s->opts.raw_images[i]);
	/* a snapshot and perf.data name their own code: ELF files only fill a raw dump's */
	for (int i = 0; s->kind == cst_input_raw && i < s->opts.nraw_elfs && !err; i++)
		err = dec_trace_add_elf(s->trace, s->opts.raw_elfs[i], s->opts.log);
	if (err)
		goto fail;
	*out = s;
	return 0;
fail:
	cst_session_free(s);
	return err;
}

void cst_session_free(struct cst_session *s)
{
	if (!s)
		return;
	if (s->perf)
		dec_perf_input_free(s->perf);
	cst_trace_free(s->trace);
	free(s->path);
	free(s);
}

enum cst_input_kind cst_session_kind(const struct cst_session *s)
{
	return s ? s->kind : cst_input_auto;
}

enum cst_order cst_session_order(const struct cst_session *s)
{
	if (s && s->kind == cst_input_perf)
		return dec_perf_input_order(s->perf);
	return cst_order_file;
}

bool cst_session_resumable(const struct cst_session *s)
{
	if (!s)
		return false;
	if (s->kind == cst_input_perf)
		return cst_session_order(s) == cst_order_file;
	return !s->opts.buffer || strcasecmp(s->opts.buffer, "all") ||
	       cst_trace_nbuffers(s->trace) == 1;
}

int cst_session_watch_crashes(struct cst_session *s, struct cst_crash_watch *watch)
{
	if (!s)
		return -cste_invalid;
	s->crash = watch;
	return 0;
}

const struct cst_trace *cst_session_trace(const struct cst_session *s)
{
	return s ? s->trace : NULL;
}

/* Buffers to decode: the named one, every one ("all"), or the default one. */
static int pick_buffers(struct cst_session *s, int *first, int *last)
{
	const char *want = s->opts.buffer;

	if (want && !strcasecmp(want, "all")) {
		*first = 0;
		*last = s->trace->nbuffers - 1;
		return 0;
	}
	if (want) {
		int b = cst_trace_find_buffer(s->trace, want);

		if (b < 0) {
			cst_logf(s->opts.log, cst_log_error, "%s: no trace buffer named '%s'",
				 s->path, want);
			return b;
		}
		*first = *last = b;
		return 0;
	}
	*first = *last = cst_trace_default_buffer(s->trace);
	if (*first < 0)
		return *first;
	if (s->trace->nbuffers > 1)
		cst_logf(s->opts.log, cst_log_info,
			 "%s: %d trace buffers; decoding %s (choose with --buffer NAME or --buffer all)",
			 s->path, s->trace->nbuffers, s->trace->buffers[*first].name);
	return 0;
}

static int emit_images(struct cst_session *s, cst_sideband_fn sb_fn, void *ctx)
{
	for (int i = 0; sb_fn && i < s->trace->nimages; i++) {
		const struct cst_mem_image *m = &s->trace->images[i];
		struct cst_sideband sb = {
			.type = cst_sb_mmap, .pid = -1, .tid = -1, .cpu = -1,
			.addr = m->address, .len = m->length, .pgoff = m->file_offset,
			.filename = m->path};
		int ret = sb_fn(ctx, &sb);

		if (ret)
			return ret;
	}
	return 0;
}

/* A serial decode after another gave up (a split run's decoder error, or
 * cstrace's decoder declining): see struct split_skip. @made counts every
 * element the decoder makes, skipped or not, for a run that must start again. */
struct skip {
	cst_elem_fn fn;
	void *ctx;
	struct split_skip k;
	uint64_t made;
};

static int skip_elem(void *ctx, const struct cst_elem *e)
{
	struct skip *k = ctx;

	k->made++;
	if (dec_split_skip_elem(&k->k))
		return 0;
	return k->fn ? k->fn(k->ctx, e) : 0;
}

/* Printing elements as they come (cst_session_run_lines on one thread). */
struct lines {
	cst_elem_print_fn print;
	void *print_ctx;
	cst_lines_fn write;
	void *write_ctx;
	char line[SPLIT_LINE];
};

static int print_elem(void *ctx, const struct cst_elem *e)
{
	struct lines *l = ctx;
	size_t n = dec_print_line(l->print, l->print_ctx, e, l->line);

	return l->write(l->write_ctx, l->line, n, 1, e->offset, e->type != cst_elem_eot);
}

/* Decode buffer @b into @elem_fn (elements) or @pkt_fn (packets), on threads when
 * asked and possible. */
static int run_buffer(struct cst_session *s, int b, struct cst_decoder_opts *dopts,
		      cst_elem_fn elem_fn, cst_packet_fn pkt_fn, void *ctx,
		      struct lines *lines, bool *no_decoder)
{
	struct skip k = {.fn = elem_fn, .ctx = ctx};
	struct cst_log klog = {dec_split_skip_log, &k.k};
	enum split_outcome how = split_unsplittable;
	const struct dec_engine *engine = &s->engines.serial;
	struct cst_decoder_stats st;
	struct cst_decoder *dec;
	int err = 0, ret;

	err = dec_decoder_make(&dec, s->trace, b, dopts, engine);
	*no_decoder = !dec;
	if (err)
		return err;
	if (!pkt_fn && s->opts.threads > 1) {
		/* elements go to run_merging's dec_merge when merge_ranges is set */
		struct split_out out = {elem_fn, ctx, lines ? lines->write : NULL,
					lines ? lines->write_ctx : NULL,
					s->opts.merge_ranges && !lines, NULL, s->engines.workers,
					NULL, NULL};

		if (s->views && !lines) {
			out.write = s->views->d.write;
			out.write_ctx = s->views->d.write_ctx;
			out.view = s->views->d.ops;
			out.view_ctx = s->views->d.ctx;
		}

		ret = dec_split_run(dec, s->opts.threads,
				    s->opts.chunk_size ? s->opts.chunk_size : SPLIT_CHUNK, &out,
				    lines ? lines->print : NULL, lines ? lines->print_ctx : NULL,
				    &st, &how, &k.k.left);
		if (how == split_done) {
			dec_stats_add(&s->stats, &st);
			return ret;
		}
	}
	if (s->opts.log)
		k.k.user = *s->opts.log;
	for (;;) {
		if (how == split_serial) {
			/* again on this thread, past what went out: its messages were
			 * told, as was what opening the decoder says */
			dopts->log = &klog;
			k.k.quiet = true;
			err = dec_decoder_make(&dec, s->trace, b, dopts, engine);
			k.k.quiet = false;
			if (err)
				return err;
			dec_decoder_set_told(dec);
		}
		k.made = 0;
		cst_decoder_set_elem_cb(dec, skip_elem, &k);
		cst_decoder_set_packet_cb(dec, pkt_fn, ctx);
		ret = cst_decoder_run(dec);
		cst_decoder_get_stats(dec, &st);
		if (!dec_decoder_declined(dec) || !engine)
			break;
		/* cstrace's decoder met trace it does not cover: OpenCSD's decodes
		 * the buffer again, past the elements made so far */
		cst_decoder_free(dec);
		engine = NULL;
		how = split_serial;
		k.k.left = k.made;
	}
	dec_stats_add(&s->stats, &st);
	cst_decoder_free(dec);
	return ret;
}

static int run_buffers(struct cst_session *s, cst_elem_fn elem_fn, cst_packet_fn pkt_fn,
		       void *ctx, struct lines *lines)
{
	int first, last, ret;

	ret = pick_buffers(s, &first, &last);
	if (ret < 0)
		return ret;
	for (int b = first; b <= last; b++) {
		struct cst_decoder_opts dopts = {
			.sz = sizeof(dopts), .log = s->opts.log, .packets_only = pkt_fn != NULL,
			.id_filter = {s->opts.id_filter[0], s->opts.id_filter[1]},
			.progress = s->opts.progress, .progress_ctx = s->opts.progress_ctx,
			.start_offset = s->opts.start_offset};

		bool no_decoder;

		ret = run_buffer(s, b, &dopts, elem_fn, pkt_fn, ctx, lines, &no_decoder);
		/* with several buffers, one without decodable sources is not fatal */
		if (no_decoder && ret == -cste_no_trace && first != last)
			continue;
		if (ret)
			return ret;
	}
	return 0;
}

typedef int (*run_fn)(struct cst_session *s, cst_elem_fn elem_fn, cst_sideband_fn sb_fn,
		      void *ctx);

/* @run, with the runs of ranges joined in front of the callbacks when the session
 * asks for it (merge_ranges). At the end the range held goes out, as a serial run
 * would have delivered it, unless the callbacks asked to stop (a positive value). */
static int run_merging(struct cst_session *s, run_fn run, cst_elem_fn elem_fn,
		       cst_sideband_fn sb_fn, void *ctx)
{
	struct dec_merge m = {.elem_fn = elem_fn, .sb_fn = sb_fn, .ctx = ctx};
	int ret, end;

	if (!s->opts.merge_ranges)
		return run(s, elem_fn, sb_fn, ctx);
	if (s->views)
		s->views->merge = &m;
	ret = run(s, dec_merge_elem, sb_fn ? dec_merge_sb : NULL, &m);
	if (s->views)
		s->views->merge = NULL;
	if (ret > 0)
		return ret;
	end = dec_merge_end(&m);
	return ret ? ret : end;
}

static int run_apart(struct cst_session *s, cst_elem_fn elem_fn, cst_sideband_fn sb_fn,
		     void *ctx)
{
	return dec_perf_input_run_apart(s->perf, s->trace, elem_fn, sb_fn, ctx,
					s->opts.merge_ranges, NULL, &s->stats);
}

/* The decode of a perf.data, as a pipe's producer runs it: the runs of ranges
 * are joined before the pipe, which then carries fewer elements. */
static int run_perf(void *ctx, cst_elem_fn elem_fn, cst_sideband_fn sb_fn, void *cb_ctx)
{
	return run_merging(ctx, run_apart, elem_fn, sb_fn, cb_ctx);
}

/* The fragments decoded on workers and replayed on the caller's thread: with most
 * of the trace on the workers, a thread between them and the caller would only
 * copy the elements once more (AArch64 script: 3.6 s with it, 3.3 s without). */
static int run_replayed(struct cst_session *s, cst_elem_fn elem_fn, cst_sideband_fn sb_fn,
			void *ctx)
{
	return dec_perf_input_run_apart(s->perf, s->trace, elem_fn, sb_fn, ctx,
					s->opts.merge_ranges, s->crash, &s->stats);
}

/* As run_replayed, with the views of cst_session_run_views on the workers. */
static int run_viewed(struct cst_session *s, cst_elem_fn elem_fn, cst_sideband_fn sb_fn,
		      void *ctx)
{
	return dec_perf_input_run_views(s->perf, s->trace, elem_fn, sb_fn, ctx,
					s->opts.merge_ranges, s->crash, &s->views->d, &s->stats);
}

static int run_here(struct cst_session *s, cst_elem_fn elem_fn, cst_sideband_fn sb_fn, void *ctx)
{
	int ret;

	if (s->kind == cst_input_perf)
		return dec_perf_input_run(s->perf, s->trace, elem_fn, sb_fn, ctx, &s->stats);
	ret = emit_images(s, sb_fn, ctx);
	if (ret)
		return ret;
	return run_buffers(s, elem_fn, NULL, ctx, NULL);
}

/* Code the decoder could not read (ADDR_NACC gaps), said at the end of a run
 * that went through: only decode --stats told it, and a trace whose code is
 * missing decodes to gaps with exit 0. Up to three ranges of addresses, the
 * adjacent 64 KiB blocks of cst_decoder_stats joined. */
static int said_nacc(struct cst_session *s, int ret)
{
	const struct cst_decoder_stats *st = &s->stats;
	char at[160];
	size_t len = 0;
	bool more = st->nacc_more;
	uint32_t shown = 0;

	if (ret || !st->nacc)
		return ret;
	at[0] = '\0';
	for (uint32_t i = 0, j; i < st->nacc_spans && i < CST_NACC_SPANS; i = j) {
		uint64_t lo = st->nacc_at[i].lo, hi = st->nacc_at[i].hi;

		for (j = i + 1; j < st->nacc_spans && j < CST_NACC_SPANS &&
				st->nacc_at[j].lo >> 16 == (st->nacc_at[j - 1].lo >> 16) + 1;
		     j++)
			hi = st->nacc_at[j].hi;
		if (shown++ == 3) {
			more = true;
			break;
		}
		len += (size_t)snprintf(at + len, sizeof(at) - len, lo == hi ? "%s0x%" PRIx64 : "%s0x%" PRIx64 "-0x%" PRIx64,
					len ? ", " : "", lo, hi);
	}
	cst_logf(s->opts.log, cst_log_warning,
		 "%s: %" PRIu64 " inaccessible-memory gap%s: the code at %s%s was not followed (no "
		 "memory image or mapped file could give it)",
		 s->path, st->nacc, st->nacc == 1 ? "" : "s", at, more ? " and elsewhere" : "");
	return ret;
}

/* The decode on a thread of its own, handing its elements over in order
 * (pipe.c); *@started false when no thread could start (nothing was done). */
static int run_piped(struct cst_session *s, cst_elem_fn elem_fn, cst_sideband_fn sb_fn,
		     void *ctx, bool *started)
{
	struct dec_pipe_run r = {.produce = run_perf, .produce_ctx = s,
				 .elem_fn = elem_fn, .sb_fn = sb_fn, .ctx = ctx,
				 .log = &s->user_log, .progress = s->user_progress,
				 .progress_ctx = s->user_progress_ctx,
				 .crash = s->crash};

	return dec_pipe_run(&r, &s->pipe, started);
}

/* Whether a perf.data decodes on threads beside the caller's: split runs
 * replayed here (dec_perf_input_splits), or the pipe. */
static bool piped(const struct cst_session *s)
{
	return s->kind == cst_input_perf && s->opts.pipe && s->opts.threads > 1;
}

int cst_session_run(struct cst_session *s, cst_elem_fn elem_fn, cst_sideband_fn sb_fn, void *ctx)
{
	int ret;

	if (!s)
		return -cste_invalid;
	memset(&s->stats, 0, sizeof(s->stats));
	if (piped(s)) {
		bool started;

		if (dec_perf_input_splits(s->perf))
			return said_nacc(s, run_merging(s, run_replayed, elem_fn, sb_fn, ctx));
		ret = run_piped(s, elem_fn, sb_fn, ctx, &started);
		if (started)
			return said_nacc(s, ret);
		memset(&s->stats, 0, sizeof(s->stats)); /* no thread: decode here */
	}
	return said_nacc(s, run_merging(s, run_here, elem_fn, sb_fn, ctx));
}

/* Views over the pipe's stream: the decode on a thread of its own (a merge in
 * time order, or fragments too small to split), its stream cut into stretches
 * for views on other threads (run.h). */
static int run_stretched(struct cst_session *s, struct views *v, cst_elem_fn elem_fn,
			 cst_sideband_fn sb_fn, void *ctx)
{
	struct dec_stretches *ss;
	struct dec_stretch_stats st;
	bool started;
	int ret;

	/* one thread fewer than asked: the pipe's and the queues' threads decode
	 * beside them */
	ret = dec_stretches_open(&ss, &v->d, s->opts.threads - 1, elem_fn, sb_fn, ctx);
	if (ret)
		return ret;
	ret = run_piped(s, dec_stretches_elem, dec_stretches_sb, ss, &started);
	/* what went out before a crash is delivered */
	if (!ret || ret == -cste_crashed) {
		int end = dec_stretches_drain(ss);

		ret = ret ? ret : end;
	}
	dec_stretches_get_stats(ss, &st);
	dec_stretches_close(ss);
	if (!started) {
		memset(&s->stats, 0, sizeof(s->stats)); /* no thread: decode here */
		return run_merging(s, run_here, elem_fn, sb_fn, ctx);
	}
	cst_logf(&s->user_log, cst_log_debug,
		 "stretches: %" PRIu64 " to the views on the workers, %" PRIu64 " elements "
		 "printed there, %" PRIu64 " deferred, %" PRIu64 " given up or refused (%" PRIu64
		 " states refused), %" PRIu64 " taking a loss",
		 st.stretches, st.viewed, st.deferred, st.serial, st.refused, st.direct);
	return ret;
}

/* From this many threads on, the views run on workers over the pipe's stream.
 * Below, the pipe's thread and the queues' workers keep the cores busy already,
 * and the copies into stretches cost more than the views gain: on two cores,
 * script took 3-5% longer with them on two threads and 12-16% on three. The
 * caller's thread symbolizing bounds the run from four cores on (docs/performance.md). */
#define STRETCH_MIN_THREADS 4

int cst_session_run_views(struct cst_session *s, const struct cst_view_ops *ops, void *ops_ctx,
			  cst_elem_fn elem_fn, cst_sideband_fn sb_fn, void *ctx,
			  cst_lines_fn write, void *write_ctx)
{
	struct views v = {{ops, ops_ctx, views_write, &v}, write, write_ctx, NULL, 0};
	bool stretched;
	int ret;

	if (!s || !ops || ops->sz < sizeof(*ops) || !ops->worker_open || !ops->worker_close ||
	    !ops->open || !ops->elem || !ops->state || !ops->close || !ops->adopt || !write)
		return -cste_invalid;
	/* the stretches workers decode: a perf.data's large fragments in file order,
	 * or a snapshot's buffers; else the stream of the pipe's thread, cut after
	 * it is decoded */
	if (s->opts.threads < 2 || (s->kind == cst_input_perf && !s->opts.pipe))
		return cst_session_run(s, elem_fn, sb_fn, ctx);
	stretched = piped(s) && !dec_perf_input_splits(s->perf);
	if (stretched && s->opts.threads < STRETCH_MIN_THREADS)
		return cst_session_run(s, elem_fn, sb_fn, ctx);
	memset(&s->stats, 0, sizeof(s->stats));
	if (stretched) {
		/* (the pipe's thread joins the runs of ranges: none is held here) */
		ret = run_stretched(s, &v, elem_fn, sb_fn, ctx);
	} else {
		s->views = &v;
		ret = run_merging(s, s->kind == cst_input_perf ? run_viewed : run_here, elem_fn,
				  sb_fn, ctx);
		s->views = NULL;
	}
	/* (for tests: that the views did print there) */
	cst_logf(&s->user_log, cst_log_debug, "views: %" PRIu64 " elements handled on the decoding "
		 "threads", v.viewed);
	return said_nacc(s, ret);
}

int cst_session_run_lines(struct cst_session *s, cst_elem_print_fn print, void *print_ctx,
			  cst_lines_fn write, void *write_ctx)
{
	struct lines *l;
	int ret;

	if (!s || !print || !write)
		return -cste_invalid;
	l = malloc(sizeof(*l));
	if (!l)
		return -cste_nomem;
	*l = (struct lines){print, print_ctx, write, write_ctx, ""};
	memset(&s->stats, 0, sizeof(s->stats));
	if (s->kind == cst_input_perf)
		ret = dec_perf_input_run_lines(s->perf, s->trace, print_elem, l, print, print_ctx,
					       write, write_ctx, &s->stats);
	else
		ret = run_buffers(s, print_elem, NULL, l, l);
	free(l);
	return said_nacc(s, ret);
}

static int no_elements(void *ctx, const struct cst_elem *e)
{
	return 0;
}

int cst_session_dump(struct cst_session *s, cst_packet_fn fn, void *ctx)
{
	if (!s || !fn)
		return -cste_invalid;
	memset(&s->stats, 0, sizeof(s->stats));
	if (s->kind == cst_input_perf)
		return dec_perf_input_dump(s->perf, s->trace, fn, ctx);
	return run_buffers(s, no_elements, fn, ctx, NULL);
}

bool cst_session_time_conv(const struct cst_session *s, struct cst_perf_time_conv *tc)
{
	return s && s->perf && dec_perf_input_time_conv(s->perf, tc);
}

int cst_session_get_stats(const struct cst_session *s, struct cst_decoder_stats *stats)
{
	if (!s || !stats)
		return -cste_invalid;
	*stats = s->stats;
	return 0;
}
