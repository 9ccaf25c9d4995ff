/* Internal to decode/perf/: the state of a perf.data input, shared by its parts,
 * lowest first: say.c (warnings, progress), threads.c (who runs where, from
 * sideband), ids.c (trace IDs against the frames), unmapped.c (files no MMAP
 * record maps), loss.c (trace lost from the AUX area), locate.c (where a
 * record's trace lies), cover.c (what of each queue AUX records have decoded:
 * the bytes none covers, those two cover), decoders.c (the decoders and the
 * attribution of their elements), queue.c (a queue decoded a piece at a
 * time), timed_ahead.c (queues decoded ahead on threads), timed.c (the
 * time-ordered merge), fragments.c (AUX records to decoder runs in file order,
 * and every run's entry), open.c (metadata to sources, buffers, trace IDs).
 * Each calls only files listed before it; mem.c and order.c have headers of
 * their own. */
#ifndef CSTRACE_DECODE_PERF_PERF_INT_H
#define CSTRACE_DECODE_PERF_PERF_INT_H

#include "mem.h"
#include "order.h"
#include "perf_input.h"
#include "run/run.h"

#include "cstrace/perfdata.h"

#define FEED_CHUNK (256u * 1024u)
/* time order: bytes decoded at a time per queue. It bounds what is held undelivered:
 * dense trace gives thousands of ranges per KiB (4 KiB pieces held 80 MiB on a 4-CPU
 * loop, 64 bytes hold 8 MiB, in the same time: bench/perf_bench.sh). */
#define TIMED_PIECE 64u
/* time order: what each queue reads of the file at a time for its pieces (a read
 * per 64-byte piece was a system call per piece), less where there are many
 * queues: all of them together read at most TIMED_WINDOWS bytes */
#define TIMED_WINDOW (64u * 1024u)
#define TIMED_WINDOWS (4u * 1024u * 1024u)

/* One AUXTRACE record: where its payload sits and which ring (CPU or thread) and
 * mmap (idx) it came from; ring: the queue (ring and idx: one space of aux
 * offsets) numbered densely in the order of struct bufkey, once the index is made. */
struct auxbuf {
	uint64_t hdr_off, data_off, size, offset;
	uint32_t idx, tid, cpu;
	uint32_t ring;
};

/* AUX record to AUXTRACE buffer lookup: the buffers sorted by the ring they were
 * read from (per-thread ones by thread, per-CPU ones by CPU), the mmap (idx) and
 * then by offset, with the furthest end of any buffer up to each entry of its
 * queue (ring and idx). */
struct bufkey {
	uint32_t per_thread, ring; /* ring: tid (per-thread) or cpu */
	uint32_t idx;
	uint64_t offset, end;      /* end saturates at UINT64_MAX */
	uint64_t max_end;          /* max end of the ring's entries up to this one */
	uint64_t buf;              /* index into bufs (file order) */
};

struct thread {
	int32_t tid, pid;
};

/* What decoded the bytes of a ring up to @end (from the piece before): an AUX
 * record, or (uncovered) an AUXTRACE record whose bytes no AUX record covers. */
struct cover_piece {
	uint64_t end, rec_off;
	bool uncovered;
};

/* How far a queue (the AUXTRACE buffers of a ring's mmap, in aux offsets) is
 * decoded: every byte the buffers hold below @done was decoded once, from the AUX
 * record that covers it or as bytes no AUX record covers. AUX records of a queue
 * come in the order of its aux offsets (the kernel's head only grows), so one mark
 * tells what a record repeats and what it skips. */
struct ring_cover {
	uint64_t done;
	uint64_t buf;      /* a buffer of the ring (index into bufs) */
	bool seen, raw;    /* the format of the ring's last AUX record, if any */
	int ci;
	struct cover_piece *pieces; /* by growing end */
	size_t npieces, cap_pieces;
};

/* An AUX record's trace: where it is, which queue (ring) it came from and whose
 * it is when it starts (from ITRACE_START / SWITCH at the record). */
struct frag {
	uint64_t data_off, size;
	uint64_t rec_off; /* file offset of the AUX record */
	uint32_t queue;   /* the AUXTRACE idx; time order renumbers it densely */
	uint64_t next;    /* time order: the queue's next fragment, or UINT64_MAX */
	int ci;           /* index of its CPU in AUXTRACE_INFO */
	bool raw;
	int32_t pid, tid, cpu;
};

/* Time order: each queue decoded by its own decoder, a piece at a time. */
struct tqueue {
	struct cst_decoder *frames, *raw;
	int raw_ci;
	uint64_t scan;           /* next fragment of the queue, or UINT64_MAX */
	const struct frag *cur;  /* the fragment being decoded, or NULL */
	uint64_t pos, left;
	uint64_t last_unit;      /* where the fragment's last frame (raw: byte) starts */
	struct cst_decoder *dec;
	int32_t pid, tid;        /* attribution as it stands in this queue */
	uint8_t *win;            /* in->win_size bytes of the file from win_pos */
	uint64_t win_pos, win_len;
};

/* A worker's code memory: a cursor of its own that follows the context IDs its
 * decoder meets, as dec_pi_on_elem moves the shared one; and the attribution dec_pi_on_elem
 * gives, as it stands in the worker's part of the fragment (or the queue's, in
 * time order). It starts as a copy of the one at the fragment's start: dec_pi_on_elem
 * moves the shared attribution while the workers run, when it takes their
 * elements. */
struct worker_mem {
	struct perf_mem_cursor c;
	const struct cst_perf_input *in;
	int32_t tid, cpu;
	uint32_t fragment;
};
/* Time order: what decoding a piece of a queue makes besides its elements, told
 * to the merge (dec_pi_queue_apply) at once, or recorded for it when decoded ahead
 * with what the queue's chunks hand on. */
enum qev {
	qev_elem = 1,     /* (recorded) an element of a chunk */
	qev_range,        /* (recorded) an element of a chunk, in the context of
			     the one recorded before it */
	qev_line,         /* (recorded) an element of a chunk, printed */
	qev_last_bytes,   /* dec_perf_order_last_bytes */
	qev_end_data,     /* dec_perf_order_end_data */
	qev_end_fragment, /* dec_perf_order_end_fragment */
	qev_no_decoder,   /* warning: fragment at record offset a, raw b, skipped */
	qev_short,        /* warning: trace at offset a ends b bytes early */
	qev_progress,     /* a bytes decoded */
	qev_chunk_end,    /* (recorded) a chunk ends: the queue waits with estimate a */
	qev_queue_end,    /* (recorded) the queue has nothing left */
	qev_stop,         /* (recorded) decoding stopped with the value a */
	qev_fallback,     /* (recorded) a decoder had something to say: take the run again
			     on one thread */
};

struct qahead;
struct qrun_ops;
/* One queue being decoded a piece at a time: on the merge's thread (ahead NULL),
 * or ahead of it on a worker, with an attribution and code memory of its own. */
struct qrun {
	struct cst_perf_input *in;
	unsigned q;
	const struct qrun_ops *ops;
	struct qahead *ahead;
	struct worker_mem wm;
};

/* What a time-ordered run told, and what a run taken again passes silently. */
struct timed_counts {
	uint64_t elements, sideband, messages;
};

/* An executable segment of a file no MMAP record maps, read at its ELF address. */
struct unmapped {
	uint64_t addr, len, pgoff;
	const struct cst_perf_build_id *b; /* the BUILD_ID feature's entry */
};

/* Who runs on a CPU (per-CPU) or in a per-thread buffer, from ITRACE_START/SWITCH. */
struct running {
	int32_t key; /* cpu, or tid for per-thread buffers */
	int32_t pid, tid;
};

enum pid_fmt { pid_fmt_none, pid_fmt_ctxid, pid_fmt_vmid };

struct cst_perf_input {
	char *path;
	struct cst_log log;
	struct cst_perf_reader *r;
	struct cst_perf_etm_info info;
	struct perf_mem *mem;
	enum pid_fmt pid_fmt;

	int frames_buffer;  /* trace buffer for formatted AUX data, or -1 */
	int *raw_buffer;    /* per info CPU index: buffer of its raw data, or -1 */
	bool has_aux;       /* AUX records present (else whole AUXTRACE buffers) */
	struct cst_perf_time_conv tc; /* the first TIME_CONV record */
	bool has_tc;

	struct auxbuf *bufs;
	size_t nbufs, cap_bufs;
	struct bufkey *bufkeys; /* made on first lookup, nbufs of them */
	uint32_t nrings;        /* numbered by the index */
	struct ring_cover *rings; /* the walk's (cover.c) */
	uint64_t uncovered_bytes, duplicate_bytes; /* for cst_decoder_stats */
	struct thread *threads;
	size_t nthreads, cap_threads;
	struct unmapped *unmapped; /* unmapped.c, at open */
	size_t nunmapped, cap_unmapped;
	struct running *run;
	size_t nrun, cap_run;

	/* decoders, made on first use */
	struct cst_decoder *frames_dec;
	struct cst_decoder **raw_dec;
	bool packets_only;

	/* --id: trace IDs kept (none set: all), the IDs met, elements kept */
	uint64_t id_filter[2], ids_seen[2];
	uint64_t kept;

	/* progress (cst_session_opts): AUXTRACE bytes fed of all the file holds */
	void (*progress)(void *ctx, uint64_t done, uint64_t total);
	void *progress_ctx;
	uint64_t progress_done, progress_total;

	/* resuming after a decoder crash (cst_session_opts start_offset/resume_from) */
	uint64_t resume_at, resume_from;
	bool resuming; /* still before the fragment that crashed */

	/* file order: fragments decoded on threads (cst_session_opts threads), in
	 * chunks of this many bytes, and the totals of those runs */
	unsigned nworkers;
	uint64_t chunk;
	/* the session's engines: on the workers (split_out.engine, and the queues
	 * ahead of time order) and on this thread; where cstrace's decoder declined
	 * on this thread, OpenCSD's decodes that trace again (@serial_ocsd), past
	 * the elements the declining one made (@made, counted by dec_pi_on_elem) */
	struct dec_engines engines;
	bool serial_ocsd;
	uint64_t made;
	struct cst_decoder_stats split_stats;
	/* after a split run that met a decoder error: what the serial decode of the
	 * fragment leaves out */
	struct split_skip skip;
	/* dec_perf_input_run_apart: elements decoded on threads too, and whether
	 * the caller joins runs of ranges (then the workers join them first); its
	 * crash watch, when the caller's thread replays (split_out) */
	bool apart, merged;
	struct cst_crash_watch *crash;
	/* dec_perf_input_run_views: views print on the workers, when set */
	const struct dec_views *views;
	/* cst_session_run_lines: printing on the workers too, when set */
	cst_elem_print_fn print;
	void *print_ctx;
	cst_lines_fn write;
	void *write_ctx;

	/* the fragment being decoded */
	cst_elem_fn elem_fn;
	void *elem_ctx;
	int32_t cur_pid, cur_tid, cur_cpu;
	uint32_t fragment;
	uint64_t truncated_aux, missing_aux;
	/* the last AUX record located: bytes of its trace the file does not hold,
	 * all of it (unheld) or its end (cut: the file was cut short) */
	uint64_t aux_unheld, aux_cut;
	/* file order: what the record being decoded lost at its end, told after it */
	struct cst_sideband cut_sb;
	bool cut_pending;
	/* trace lost from the AUX area (loss.c): what each AUX record lost, kept
	 * in file order for the time-ordered merge, and each ring's last snapshot
	 * head (overwrite mode) */
	struct aux_loss *losses;
	size_t nlosses, cap_losses;
	struct aux_head *heads;
	size_t nheads, cap_heads;
	struct cst_sideband *cuts; /* time order: the ends of records cut short */
	size_t ncuts, cap_cuts;
	bool sb_apply; /* sideband() changes threads and maps (not when only telling) */

	/* time order (cst_order_time): fragments queued by a first walk, then merged */
	bool timed;
	struct frag *frags;
	size_t nfrags, cap_frags;
	struct tqueue *tq;
	unsigned ntq, cur_queue;
	struct perf_order *order;
	const struct cst_trace *trace;
	size_t win_size; /* of each queue's window */
	cst_elem_fn user_elem_fn;
	cst_sideband_fn user_sb_fn;
	void *user_ctx;
	/* sideband told by a second reader that trails the merge */
	struct cst_perf_reader *sb_r;
	struct cst_perf_record sb_rec;
	bool sb_pending, sb_done;
	/* queues decoded ahead on threads (timed_ahead.c), or NULL; when a decoder
	 * there had something to say, the run is taken again on one thread
	 * (fallback), passing what it told before (redo) */
	struct ahead *ahead;
	bool fallback;
	uint64_t queues_ahead, fallbacks; /* for cst_decoder_stats */
	struct timed_counts told, redo;
	uint64_t progress_quiet_to; /* progress is told again from here */
	/* a stop value of the caller's callbacks, while the merge passes it on as
	 * PERF_ORDER_STOP (its own 1 says that a queue ended) */
	int user_stop;
	/* lines printed on the workers, gathered for the writer in order: how
	 * many, and the offset of the last that has one */
	struct cst_buf lines;
	uint64_t lines_n, lines_offset;
	bool lines_has_offset;
};

/* say.c */
/* @bytes more trace went to a decoder: tell the progress callback. */
void dec_pi_progress(struct cst_perf_input *in, uint64_t bytes);
void dec_pi_warnf(struct cst_perf_input *in, uint64_t off, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* threads.c: the threads table and who runs on each CPU or buffer */
void dec_pi_thread_set(struct cst_perf_input *in, int32_t tid, int32_t pid);
int32_t dec_pi_pid_of(const struct cst_perf_input *in, int32_t tid);
struct running *dec_pi_running_get(struct cst_perf_input *in, int32_t key);
/* Apply a sideband record (when in->sb_apply) and tell it to @sb_fn. */
int dec_pi_sideband(struct cst_perf_input *in, const struct cst_perf_record *rec,
		    cst_sideband_fn sb_fn, void *ctx);

/* ids.c: trace IDs against the frames (formatted data), at open. @ids holds the
 * trace ID of each AUXTRACE_INFO CPU (@hw_ids: from AUX_OUTPUT_HW_ID where not 0),
 * room for 256. A CPU whose ID no frame carries takes the one ID its ring holds
 * that no CPU claims; a CPU the buffers name and AUXTRACE_INFO leaves out is
 * added to in->info as a copy of one of the same kind, with the ID its frames
 * carry (not when @raw_unknown: raw AUX records of a CPU not there). Only where
 * that is unambiguous; each warned about, and what stays undecodable too. CPUs
 * whose @raw_cpu is set are left as they are. 0 or -cste_nomem. */
int dec_pi_trace_ids(struct cst_perf_input *in, uint8_t *ids, const uint8_t *hw_ids,
		     const bool *raw_cpu, bool raw_unknown);

/* unmapped.c: files the BUILD_ID feature names that no MMAP record maps (entry i
 * not @mapped): a position-dependent executable is read at its ELF addresses,
 * found where @places say; each warned about, at open. 0 or -cste_nomem. */
int dec_pi_unmapped(struct cst_perf_input *in, const bool *mapped,
		    const struct cst_bin_places *places);
/* Tell those mappings to @sb_fn (process -1: any), before the file's sideband. */
int dec_pi_unmapped_sideband(struct cst_perf_input *in, cst_sideband_fn sb_fn, void *ctx);

/* loss.c: trace lost from the AUX area, told as cst_sb_lost sideband */
struct aux_loss {
	uint64_t rec_off;          /* file offset of the AUX record */
	struct cst_sideband sb[2]; /* what it lost: TRUNCATED, bytes missing or overwritten */
	unsigned n;
};
struct aux_head {
	uint32_t per_thread, ring;
	uint64_t head;
};
/* Forget what an earlier run noted. */
void dec_pi_loss_reset(struct cst_perf_input *in);
/* What AUX record @rec lost (after dec_pi_aux_fragment located it): told to
 * @sb_fn now, or with a NULL @sb_fn kept for dec_pi_loss_tell (time order). */
int dec_pi_aux_loss(struct cst_perf_input *in, const struct cst_perf_record *rec,
		    cst_sideband_fn sb_fn, void *ctx);
/* Time order: tell what the AUX record at file offset @rec_off lost before its
 * trace, or with UINT64_MAX what records cut short lost at their end. */
int dec_pi_loss_tell(const struct cst_perf_input *in, uint64_t rec_off, cst_sideband_fn sb_fn,
		     void *ctx);
/* File order: tell what the record just decoded lost at its end (cut short). */
int dec_pi_loss_after(struct cst_perf_input *in, cst_sideband_fn sb_fn, void *ctx);

/* locate.c: where a record's trace lies and whose it is */
/* Index the buffers by ring and offset (once) and number the rings. 0 or -cste_nomem. */
int dec_pi_index_bufs(struct cst_perf_input *in);
/* An AUX record's fragment, from the AUXTRACE buffer of its ring that holds it
 * (*@b). False: it has none (no buffer holds it, or it is empty). */
bool dec_pi_aux_fragment(struct cst_perf_input *in, const struct cst_perf_record *rec,
			 struct frag *f, const struct auxbuf **b);
/* Without AUX records (old perf, or piped), a whole AUXTRACE buffer is one fragment. */
void dec_pi_buffer_fragment(struct cst_perf_input *in, const struct cst_perf_record *rec,
			    struct frag *f);
/* In the queue of buffer @b (its ring and idx), the buffer that holds aux offset
 * @p, the first in the file if several do (*@held true); when none does, the first
 * that starts past @p (*@held false); NULL when none does either. */
const struct auxbuf *dec_pi_ring_at(struct cst_perf_input *in, const struct auxbuf *b,
				    uint64_t p, bool *held);
/* The fragment of @size bytes at aux offset @aux of buffer @b, in @raw format, as
 * the buffer's own: the ring's thread or who runs on its CPU now, the record offset
 * that of the AUXTRACE record. */
void dec_pi_piece_fragment(struct cst_perf_input *in, const struct auxbuf *b, uint64_t aux,
			   uint64_t size, bool raw, struct frag *f);

/* cover.c: AUX records against the rings' bytes. Every byte of a ring is
 * decoded once: the bytes between what is decoded and a record's fragment that no
 * record covers go to @emit first, each a fragment of its own; a fragment is
 * clipped of what was decoded already. Each warned about. */
typedef int (*cover_emit_fn)(void *ctx, const struct frag *f);
int dec_pi_cover_begin(struct cst_perf_input *in);
/* AUX fragment @f from buffer @b (dec_pi_aux_fragment): the bytes before it first,
 * then @f as clipped, to @emit (nothing when it repeats decoded trace whole). */
int dec_pi_cover_frag(struct cst_perf_input *in, const struct cst_perf_record *rec,
		      const struct auxbuf *b, struct frag *f, cover_emit_fn emit, void *ctx);
/* The end of the walk: what no record covered past each ring's last, in file order. */
int dec_pi_cover_end(struct cst_perf_input *in, cover_emit_fn emit, void *ctx);
void dec_pi_cover_free(struct cst_perf_input *in);

/* decoders.c */
/* The elements of a serial run: attributed (pid, tid, CPU, fragment, following
 * context IDs), left out when a split run delivered them already or --id does
 * not want them, then to in->elem_fn. */
int dec_pi_on_elem(void *ctx, const struct cst_elem *elem);
/* An element a view on a worker deferred (dec_perf_input_run_views). */
int dec_pi_view_elem(void *ctx, const struct cst_elem *elem);
/* Give @e the attribution of @wctx (a struct worker_mem), following a context
 * element into the next ones, as dec_pi_on_elem does with the shared one. */
void dec_pi_worker_elem(void *wctx, struct cst_elem *e);
/* The decoder in @slot for @raw data of CPU index @ci (NULL when the file has no
 * buffer for it), made with @o and @engine (NULL: OpenCSD's) on first use (in time order, a timed
 * one), its elements to @elem_fn. */
struct cst_decoder *dec_pi_decoder_make(struct cst_perf_input *in, const struct cst_trace *trace,
					struct cst_decoder **slot, bool raw, int ci,
					const struct cst_decoder_opts *o,
					const struct dec_engine *engine, cst_elem_fn elem_fn,
					void *elem_ctx, cst_packet_fn pkt_fn, void *pkt_ctx);
/* That decoder as a serial run makes it: elements to dec_pi_on_elem, the shared
 * memory, the serial engine. */
struct cst_decoder *dec_pi_decoder_in(struct cst_perf_input *in, const struct cst_trace *trace,
				      struct cst_decoder **slot, bool raw, int ci,
				      cst_packet_fn pkt_fn, void *pkt_ctx);

/* queue.c: a queue of the time order decoded a piece at a time */
/* How a piece's decoder is found and what it makes besides elements reaches the
 * merge: at once on the merge's thread (timed.c), or recorded for it when
 * decoded ahead (timed_ahead.c). */
struct qrun_ops {
	/* @r's decoder for fragment @f, in @slot */
	struct cst_decoder *(*decoder)(struct qrun *r, struct cst_decoder **slot,
				       const struct frag *f);
	/* an event of @r's queue (enum qev, arguments as listed there) */
	int (*event)(struct qrun *r, enum qev kind, uint64_t a, uint64_t b);
};
/* Decode the next piece of @r's queue: what one fill of the merge does. Returns
 * 0, 1 when the queue has nothing left, or an error or stop value. */
int dec_pi_queue_piece(struct qrun *r);
/* Tell the merge an event of queue @q (enum qev, arguments as listed there). */
int dec_pi_queue_apply(struct cst_perf_input *in, unsigned q, enum qev kind, uint64_t a,
		       uint64_t b);

/* timed_ahead.c: the queues decoded ahead of the merge on threads */
/* Whether to: on threads (cst_session_opts threads), no --id,
 * not resumed after a crash, and code memory that never warns (dec_pi_ahead_start
 * still leaves more than 64 queues on one thread). */
bool dec_pi_ahead_wanted(struct cst_perf_input *in);
int dec_pi_ahead_start(struct cst_perf_input *in);
/* Stop the threads (the merge ended); dec_pi_ahead_free frees the rest. */
void dec_pi_ahead_stop(struct cst_perf_input *in);
void dec_pi_ahead_free(struct cst_perf_input *in);
/* perf_order_chunk_fn of the merge when decoding ahead (@ctx the input): replay
 * queue @q's next chunk. */
int dec_pi_ahead_chunk(void *ctx, unsigned q, uint64_t *key);

/* timed.c: the time-ordered merge */
/* An element of the merge goes out (the queues' perf_order emit on its thread). */
int dec_pi_emit_timed(void *ctx, const struct cst_elem *e);
/* The same for an element printed on a worker: its line (@len bytes; @offset
 * UINT64_MAX for none), of AUX fragment @fragment. */
int dec_pi_line_timed(struct cst_perf_input *in, uint32_t fragment, const char *line, size_t len,
		      uint64_t offset);
int dec_pi_run_timed(struct cst_perf_input *in, const struct cst_trace *trace,
		     cst_elem_fn elem_fn, cst_sideband_fn sb_fn, void *ctx);
void dec_pi_free_timed(struct cst_perf_input *in);

#endif
