/* perf.data AUX records to decoder runs: resuming after a crash, fragments decoded
 * in file order, on threads, or queued for time order; and every run's entry.
 * Where each record's trace lies is locate.c's, the decoders are decoders.c's. */
#include "perf_int.h"

#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ------------------------------------------------------------- run */

/* --id chose trace IDs the file does not hold: say which it holds. */
static int check_ids(struct cst_perf_input *in)
{
	char list[128 * 6];

	if ((!in->id_filter[0] && !in->id_filter[1]) || in->kept)
		return 0;
	cst_id_set_format(in->ids_seen, list, sizeof(list));
	cst_logf(&in->log, cst_log_error, "%s: no trace with the selected IDs; the file holds %s%s",
		 in->path, list[0] ? "IDs " : "no decodable trace", list);
	return -cste_no_trace;
}

static struct cst_decoder *decoder_for(struct cst_perf_input *in, const struct cst_trace *trace,
				       bool raw, int ci, cst_packet_fn pkt_fn, void *pkt_ctx)
{
	if (raw && ci < 0)
		return NULL;
	return dec_pi_decoder_in(in, trace, raw ? &in->raw_dec[ci] : &in->frames_dec, raw, ci, pkt_fn,
			  pkt_ctx);
}

/* After a decoder crash the run starts again: fragments decoded before the one
 * that crashed are skipped, and that one resumes past the crash point (on a frame
 * boundary for formatted data). Returns false to skip the fragment whole. */
static bool resume_clip(struct cst_perf_input *in, bool raw, uint64_t *off, uint64_t *size)
{
	uint64_t end = *off + *size, from;

	if (!in->resuming)
		return true;
	if (in->resume_from < *off || in->resume_from >= end)
		return false; /* decoded before the crash */
	in->resuming = false;
	if (in->resume_at < *off)
		return true;
	from = in->resume_at - *off;
	if (!raw)
		from = (from + 15) / 16 * 16;
	if (from >= *size)
		return false;
	*off += from;
	*size -= from;
	return true;
}

/* Decode @size bytes at file offset @off as one fragment. */
static int decode_fragment(struct cst_perf_input *in, struct cst_decoder *dec, uint64_t off,
			   uint64_t size, bool raw)
{
	uint8_t *buf;
	int ret = 0;

	buf = malloc(FEED_CHUNK);
	if (!buf)
		return -cste_nomem;
	cst_decoder_reset(dec);
	while (size && !ret) {
		uint64_t want = size < FEED_CHUNK ? size : FEED_CHUNK;
		int64_t got = cst_perf_reader_pread(in->r, off, buf, want);

		if (got <= 0) {
			dec_pi_warnf(in, off, "AUXTRACE data ends early (%" PRIu64 " bytes missing)", size);
			break;
		}
		ret = cst_decoder_feed(dec, off, buf, (size_t)got);
		dec_pi_progress(in, (uint64_t)got);
		off += (uint64_t)got;
		size -= (uint64_t)got;
	}
	free(buf);
	if (ret)
		return ret;
	return cst_decoder_end(dec);
}

/* ------------------------------------------------------------- on threads */

static void *worker_mem_open(void *ctx)
{
	const struct worker_mem *start = ctx;
	struct worker_mem *w = malloc(sizeof(*w));

	/* right for the first chunk; a later chunk's is right from its first context
	 * element, and its head is compared with these */
	if (w)
		*w = *start;
	return w;
}

static void worker_mem_close(void *wctx)
{
	free(wctx);
}

/* Progress through a fragment decoded on threads: the output has reached file
 * offset @done (the split counts from offset 0). */
struct split_progress {
	struct cst_perf_input *in;
	uint64_t off, told;
};

static void on_split_progress(void *ctx, uint64_t done, uint64_t total)
{
	struct split_progress *p = ctx;

	(void)total;
	if (done > p->off && done - p->off > p->told) {
		dec_pi_progress(p->in, done - p->off - p->told);
		p->told = done - p->off;
	}
}

/* Is a fragment of @size bytes worth cutting into chunks for the workers? */
static bool splittable_size(const struct cst_perf_input *in, uint64_t size)
{
	return size >= 2 * in->chunk;
}

/* Decode [off, off + size) of @f on threads (cst_session_opts threads) for
 * cst_session_run_lines: each worker with its own decoder and memory cursor gives
 * its elements the attribution dec_pi_on_elem would and prints them, and the bytes go to
 * the writer in the order one decoder gives them. Sets *@serial when the fragment is to be
 * decoded on this thread instead (too small, not one trace source, cut short, or
 * a decoder error: then in->skip.left elements went out already). Returns 0 or the
 * stop value or error of the run. */
static int decode_split(struct cst_perf_input *in, const struct cst_trace *trace,
			const struct frag *f, uint64_t off, uint64_t size, bool *serial)
{
	struct split_progress prog = {in, off, 0};
	struct cst_decoder_opts o = {.sz = sizeof(o), .fsync_reset = !f->raw,
				     .mem_read = dec_perf_mem_read, .mem_ctx = in->mem,
				     .progress = on_split_progress, .progress_ctx = &prog};
	struct worker_mem start = {.in = in, .tid = in->cur_tid, .cpu = in->cur_cpu,
				   .fragment = in->fragment};
	struct split_mem mem = {worker_mem_open, worker_mem_close, dec_pi_worker_elem,
				dec_perf_mem_cursor_read, &start, true};
	struct split_out out = {in->print ? NULL : in->views ? dec_pi_view_elem : dec_pi_on_elem, in,
				in->print ? in->write : in->views ? in->views->write : NULL,
				in->views ? in->views->write_ctx : in->write_ctx, in->merged,
				in->crash, in->engines.workers, in->views ? in->views->ops : NULL,
				in->views ? in->views->ctx : NULL};
	int buffer = f->raw ? in->raw_buffer[f->ci] : in->frames_buffer;
	struct split_span span = {-1, off, off + size, 0};
	enum split_outcome how = split_unsplittable;
	struct cst_decoder_stats st;
	struct cst_decoder *dec0;
	struct stat sb;
	uint64_t delivered = 0;
	int ret;

	*serial = true;
	/* Only printed output, or elements for dec_perf_input_run_apart, are decoded
	 * on threads: its callers have asked for copies (the elements carry no
	 * OpenCSD element, and the copies cost time); and --id needs each element
	 * seen here. The replay gives the elements to dec_pi_on_elem in stream order, which
	 * attributes them as a serial run does. */
	if (in->nworkers < 2 || !splittable_size(in, size) || (!in->print && !in->apart) ||
	    in->id_filter[0] || in->id_filter[1])
		return 0;
	/* frames cut short (a file cut in the middle of one): one decoder warns of
	 * the bytes left over where its last elements go out, which the workers'
	 * replay does not know */
	if (!f->raw && size % CST_FRAME)
		return 0;
	dec_perf_mem_cursor_init(&start.c, in->mem);
	span.fd = open(in->path, O_RDONLY | O_CLOEXEC);
	/* a fragment that runs past the end of the file is warned about serially */
	if (span.fd < 0 || fstat(span.fd, &sb) < 0 || (uint64_t)sb.st_size < span.end ||
	    cst_decoder_alloc(&dec0, trace, buffer, &o)) {
		if (span.fd >= 0)
			close(span.fd);
		return 0;
	}
	ret = dec_split_run_span(dec0, in->nworkers, in->chunk, &span, &mem, &out, in->print,
				 in->print_ctx, &st, &how, &delivered);
	close(span.fd);
	if (how == split_unsplittable) {
		cst_decoder_free(dec0);
		return 0;
	}
	if (how == split_serial) {
		in->skip.left = delivered;
		in->progress_done -= prog.told; /* the serial decode tells it again */
		return 0;
	}
	*serial = false;
	dec_stats_add(&in->split_stats, &st);
	dec_pi_progress(in, size - prog.told);
	return ret;
}

/* Whose trace fragment @f starts out as (its context IDs may say otherwise). */
static void attribute_to(struct cst_perf_input *in, const struct frag *f)
{
	in->cur_pid = f->pid;
	in->cur_tid = f->tid;
	in->cur_cpu = f->cpu;
	dec_perf_mem_set_pid(in->mem, in->cur_pid);
}

/* File order: decode the fragment now. */
/* @f's [@off, @off + @size) past in->skip.left elements (a split run's, which
 * went out already), with the messages they came with held back. */
static int decode_skipping(struct cst_perf_input *in, struct cst_decoder *dec,
			   const struct frag *f, uint64_t off, uint64_t size)
{
	int ret;

	if (!in->skip.left)
		return decode_fragment(in, dec, off, size, f->raw);
	/* again on this thread, from the fragment's start as it began */
	attribute_to(in, f);
	in->skip.user = in->log;
	in->log = (struct cst_log){dec_split_skip_log, &in->skip};
	ret = decode_fragment(in, dec, off, size, f->raw);
	in->log = in->skip.user;
	in->skip.left = 0;
	return ret;
}

/* The decoder in @f's slot is done with: keep what it decoded, make a new one
 * next time (one that declined takes nothing more). */
static void drop_slot(struct cst_perf_input *in, const struct frag *f, struct cst_decoder_stats *st)
{
	struct cst_decoder **slot = f->raw ? &in->raw_dec[f->ci] : &in->frames_dec;

	dec_stats_add(&in->split_stats, st);
	cst_decoder_free(*slot);
	*slot = NULL;
}

/* @f on this thread. Where cstrace's decoder declines, OpenCSD's decodes the
 * fragment again, past the elements made and their messages. */
static int decode_serial(struct cst_perf_input *in, const struct cst_trace *trace,
			 const struct frag *f, uint64_t off, uint64_t size, cst_packet_fn pkt_fn,
			 void *pkt_ctx)
{
	struct cst_decoder *dec = decoder_for(in, trace, f->raw, f->ci, pkt_fn, pkt_ctx);
	uint64_t progress = in->progress_done;
	struct cst_decoder_stats before, st;
	int ret;

	cst_decoder_get_stats(dec, &before);
	in->made = 0;
	ret = decode_skipping(in, dec, f, off, size);
	if (!dec_decoder_declined(dec))
		return ret;
	drop_slot(in, f, &before);
	in->serial_ocsd = true;
	dec = decoder_for(in, trace, f->raw, f->ci, pkt_fn, pkt_ctx);
	in->serial_ocsd = false;
	if (!dec)
		return -cste_nomem;
	in->skip.left = in->made;
	in->progress_done = progress; /* the bytes are told again */
	ret = decode_skipping(in, dec, f, off, size);
	cst_decoder_get_stats(dec, &st);
	drop_slot(in, f, &st); /* the next fragment is cstrace's decoder's again */
	return ret;
}

static int decode_now(struct cst_perf_input *in, const struct cst_trace *trace,
		      const struct frag *f, cst_packet_fn pkt_fn, void *pkt_ctx)
{
	struct cst_decoder *dec;
	uint64_t off = f->data_off, size = f->size;
	bool serial = true;
	int ret = 0;

	attribute_to(in, f);
	dec_perf_mem_set_view(in->mem, f->rec_off);
	dec = decoder_for(in, trace, f->raw, f->ci, pkt_fn, pkt_ctx);
	if (!dec) {
		dec_pi_warnf(in, f->rec_off, "AUX record: no decoder for this %s data; skipped",
		      f->raw ? "raw" : "formatted");
		return 0;
	}
	in->fragment++;
	if (!resume_clip(in, f->raw, &off, &size))
		return 0;
	if (!pkt_fn)
		ret = decode_split(in, trace, f, off, size, &serial);
	if (!serial)
		return ret;
	return decode_serial(in, trace, f, off, size, pkt_fn, pkt_ctx);
}

/* Time order: queue the fragment for the merge. */
static int queue_frag(struct cst_perf_input *in, const struct frag *f)
{
	if (CST_GROW(in->frags, in->cap_frags, in->nfrags + 1) < 0)
		return -cste_nomem;
	in->frags[in->nfrags++] = *f;
	return 0;
}

/* A walk: where its fragments go. */
struct walk {
	struct cst_perf_input *in;
	const struct cst_trace *trace;
	cst_packet_fn pkt_fn;
	void *ctx;
	bool timed;
};

/* cover_emit_fn: decode the fragment now (file order) or queue it (time order). */
static int take(void *ctx, const struct frag *f)
{
	struct walk *w = ctx;

	return w->timed ? queue_frag(w->in, f) : decode_now(w->in, w->trace, f, w->pkt_fn, w->ctx);
}

static int walk(struct cst_perf_input *in, const struct cst_trace *trace, cst_elem_fn elem_fn,
		cst_sideband_fn sb_fn, cst_packet_fn pkt_fn, void *ctx)
{
	struct walk w = {in, trace, pkt_fn, ctx, false};
	struct cst_perf_record rec;
	bool timed;
	int err, ret = 0;

	if (!in || !trace)
		return -cste_invalid;
	timed = w.timed = in->timed && !pkt_fn; /* packet dumps stay in file order */
	in->elem_fn = elem_fn;
	in->elem_ctx = ctx;
	in->fragment = 0;
	in->truncated_aux = in->missing_aux = 0;
	dec_pi_loss_reset(in);
	in->resuming = in->resume_at != 0;
	in->nthreads = in->nrun = 0;
	in->nfrags = 0;
	in->sb_apply = true;
	ret = dec_pi_cover_begin(in);
	if (!ret) /* the maps of files no MMAP record maps, before any sideband */
		ret = dec_pi_unmapped_sideband(in, sb_fn, ctx);
	cst_perf_reader_rewind(in->r);
	while (!ret && (err = cst_perf_reader_next(in->r, &rec)) == 0) {
		const struct auxbuf *b;
		struct frag f;

		dec_perf_mem_set_clock(in->mem, rec.file_offset);
		if (rec.type == cst_perf_rec_auxtrace && !in->has_aux) {
			dec_pi_buffer_fragment(in, &rec, &f);
			ret = take(&w, &f);
		} else if (rec.type == cst_perf_rec_aux) {
			bool has = dec_pi_aux_fragment(in, &rec, &f, &b);

			/* what it lost comes before its trace (time order: as the merge
			 * reaches it) */
			ret = dec_pi_aux_loss(in, &rec, timed ? NULL : sb_fn, ctx);
			if (!ret && has)
				ret = dec_pi_cover_frag(in, &rec, b, &f, take, &w);
			/* the end of its trace, if the file was cut short in it */
			if (!ret && has && !timed)
				ret = dec_pi_loss_after(in, sb_fn, ctx);
		} else {
			/* time order tells sideband as the merge reaches it */
			ret = dec_pi_sideband(in, &rec, timed ? NULL : sb_fn, ctx);
		}
	}
	/* what no AUX record covers past each ring's last */
	if (!ret)
		ret = dec_pi_cover_end(in, take, &w);
	if (!ret && timed)
		ret = dec_pi_run_timed(in, trace, elem_fn, sb_fn, ctx);
	if (in->truncated_aux)
		cst_logf(&in->log, cst_log_warning,
			 "%s: %" PRIu64 " AUX records flagged TRUNCATED: the sink overflowed and "
			 "trace was lost there",
			 in->path, in->truncated_aux);
	return ret;
}

static void add_stats(struct cst_decoder_stats *sum, const struct cst_decoder *d)
{
	struct cst_decoder_stats s;

	if (!d || cst_decoder_get_stats(d, &s))
		return;
	dec_stats_add(sum, &s);
}

static void sum_stats(const struct cst_perf_input *in, struct cst_decoder_stats *stats)
{
	memset(stats, 0, sizeof(*stats));
	add_stats(stats, in->frames_dec);
	for (uint32_t i = 0; i < in->info.nr_cpu; i++)
		add_stats(stats, in->raw_dec[i]);
	for (unsigned q = 0; q < in->ntq; q++) {
		add_stats(stats, in->tq[q].frames);
		add_stats(stats, in->tq[q].raw);
	}
	dec_stats_add(stats, &in->split_stats);
	stats->aux_missing = in->missing_aux;
	stats->aux_uncovered = in->uncovered_bytes;
	stats->aux_duplicate = in->duplicate_bytes;
	stats->queues_ahead = in->queues_ahead;
	stats->ahead_fallbacks = in->fallbacks;
}

/* Decoders keep their mode: throw them away between a run and a dump. */
static void drop_decoders(struct cst_perf_input *in)
{
	dec_pi_free_timed(in);
	cst_decoder_free(in->frames_dec);
	in->frames_dec = NULL;
	for (uint32_t i = 0; i < in->info.nr_cpu; i++) {
		cst_decoder_free(in->raw_dec[i]);
		in->raw_dec[i] = NULL;
	}
}

int dec_perf_input_run(struct cst_perf_input *in, const struct cst_trace *trace,
		       cst_elem_fn elem_fn, cst_sideband_fn sb_fn, void *ctx,
		       struct cst_decoder_stats *stats)
{
	int ret;

	if (!in || !trace)
		return -cste_invalid;
	drop_decoders(in);
	in->packets_only = false;
	in->ids_seen[0] = in->ids_seen[1] = in->kept = 0;
	memset(&in->split_stats, 0, sizeof(in->split_stats));
	in->skip.left = 0;
	in->progress_done = in->progress_total = 0;
	for (size_t i = 0; i < in->nbufs; i++)
		in->progress_total += in->bufs[i].size;
	ret = walk(in, trace, elem_fn, sb_fn, NULL, ctx);
	if (stats)
		sum_stats(in, stats);
	if (!ret)
		ret = check_ids(in);
	return ret;
}

int dec_perf_input_run_lines(struct cst_perf_input *in, const struct cst_trace *trace,
			     cst_elem_fn elem_fn, void *ctx, cst_elem_print_fn print,
			     void *print_ctx, cst_lines_fn write, void *write_ctx,
			     struct cst_decoder_stats *stats)
{
	int ret;

	if (!in)
		return -cste_invalid;
	in->print = print;
	in->print_ctx = print_ctx;
	in->write = write;
	in->write_ctx = write_ctx;
	ret = dec_perf_input_run(in, trace, elem_fn, NULL, ctx, stats);
	in->print = NULL;
	in->write = NULL;
	return ret;
}

int dec_perf_input_run_views(struct cst_perf_input *in, const struct cst_trace *trace,
			     cst_elem_fn elem_fn, cst_sideband_fn sb_fn, void *ctx, bool merged,
			     struct cst_crash_watch *crash, const struct dec_views *views,
			     struct cst_decoder_stats *stats)
{
	int ret;

	if (!in)
		return -cste_invalid;
	in->views = views;
	ret = dec_perf_input_run_apart(in, trace, elem_fn, sb_fn, ctx, merged, crash, stats);
	in->views = NULL;
	return ret;
}

int dec_perf_input_run_apart(struct cst_perf_input *in, const struct cst_trace *trace,
			     cst_elem_fn elem_fn, cst_sideband_fn sb_fn, void *ctx, bool merged,
			     struct cst_crash_watch *crash, struct cst_decoder_stats *stats)
{
	int ret;

	if (!in)
		return -cste_invalid;
	in->apart = true;
	in->merged = merged;
	in->crash = crash;
	ret = dec_perf_input_run(in, trace, elem_fn, sb_fn, ctx, stats);
	in->apart = false;
	in->merged = false;
	in->crash = NULL;
	return ret;
}

/* Is @b's trace one source's? Several CPUs' sources share the formatted data:
 * a buffer whose frames name more than one trace ID (CPUs sharing a sink) is
 * decoded on one thread (split.h), so its frames are read to know. */
static bool one_source(const struct cst_perf_input *in, int fd, const struct auxbuf *b)
{
	uint64_t ids[2] = {0, 0};

	if (in->frames_buffer < 0 || in->info.nr_cpu < 2)
		return true;
	if (fd < 0 || dec_frames_scan_ids(fd, b->data_off, b->data_off + b->size, ids) < 0)
		return false;
	return __builtin_popcountll(ids[0]) + __builtin_popcountll(ids[1]) <= 1;
}

bool dec_perf_input_splits(const struct cst_perf_input *in)
{
	uint64_t all = 0, big = 0;
	int fd;

	if (!in || in->timed || in->nworkers < 2 || in->id_filter[0] || in->id_filter[1])
		return false;
	fd = open(in->path, O_RDONLY | O_CLOEXEC);
	for (size_t i = 0; i < in->nbufs; i++) {
		all += in->bufs[i].size;
		if (splittable_size(in, in->bufs[i].size) && one_source(in, fd, &in->bufs[i]))
			big += in->bufs[i].size;
	}
	if (fd >= 0)
		close(fd);
	return big && big >= all / 4 * 3;
}

int dec_perf_input_dump(struct cst_perf_input *in, const struct cst_trace *trace,
			cst_packet_fn fn, void *ctx)
{
	if (!in || !trace || !fn)
		return -cste_invalid;
	drop_decoders(in);
	in->packets_only = true;
	return walk(in, trace, NULL, NULL, fn, ctx);
}
