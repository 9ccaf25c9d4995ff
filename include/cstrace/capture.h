/* cstrace capture stage: finds the cs_etm PMU, opens trace and sideband events,
 * drains the kernel's AUX and data rings into perf.data, and drives sysfs-mode capture. */
#ifndef CSTRACE_CAPTURE_H
#define CSTRACE_CAPTURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cstrace/common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------
 * The ring consumer. One struct cst_ring per mmapped event: the user page and
 * data area (sideband and PERF_RECORD_AUX), plus an optional AUX area. The same
 * code drains a real mmap and the kernel model the tests use.
 * ------------------------------------------------------------------------ */

/** Offsets in struct perf_event_mmap_page (include/uapi/linux/perf_event.h). */
#define CST_MMAP_DATA_HEAD 0x400
#define CST_MMAP_DATA_TAIL 0x408
#define CST_MMAP_DATA_OFFSET 0x410
#define CST_MMAP_DATA_SIZE 0x418
#define CST_MMAP_AUX_HEAD 0x420
#define CST_MMAP_AUX_TAIL 0x428
#define CST_MMAP_AUX_OFFSET 0x430
#define CST_MMAP_AUX_SIZE 0x438

/** Event control behind a ring (PERF_EVENT_IOC_ENABLE / _DISABLE on the
 *  event's fd, or the kernel model's equivalent). Return 0 or -cste_*. */
struct cst_ring_ops {
	size_t sz; /* sizeof(struct cst_ring_ops) */
	int (*enable)(void *ctx);
	int (*disable)(void *ctx);
};

/** What a ring is: where it is mapped and what AUXTRACE records say about it. */
struct cst_ring_desc {
	size_t sz;          /* sizeof(struct cst_ring_desc) */
	void *base;         /* user page; the data area starts at base + page size */
	uint64_t page_size; /* 0 = 4096 */
	uint64_t data_size; /* data area bytes (power of two) */
	const void *aux;    /* AUX area or NULL */
	uint64_t aux_size;  /* power of two */
	bool overwrite;     /* AUX mapped read-only: snapshot mode */
	uint32_t idx;       /* mmap index written into AUXTRACE records */
	uint32_t tid;       /* AUXTRACE tid (per-thread), else -1 */
	uint32_t cpu;       /* AUXTRACE cpu, or -1 (UINT32_MAX) per-thread */
	const struct cst_ring_ops *ops; /* may be NULL when there is no AUX */
	void *ops_ctx;
};

/** A chunk of AUX bytes copied out of a ring, in ring order. */
struct cst_aux_chunk {
	uint64_t offset; /* absolute AUX position of data[0] (not masked) */
	uint64_t size;
	const uint8_t *data;
	uint32_t idx, tid, cpu;
	bool snapshot;
};

struct cst_auxlog_read;

/** Where drained data goes. Callbacks return 0 or a negative cste_ error;
 *  an error stops the ring (it is then only counted, see unwritten_bytes). */
struct cst_ring_output {
	size_t sz; /* sizeof(struct cst_ring_output) */
	/** One data-ring record, header included (@len = header.size). */
	int (*record)(void *ctx, const uint8_t *rec, size_t len);
	/** One AUX chunk. */
	int (*aux)(void *ctx, const struct cst_aux_chunk *chunk);
	void *ctx;
	/** Optional: after each cst_ring_read / cst_ring_snapshot, what it loaded,
	 *  copied, stored and called (the recorded AUX stream's read event). */
	void (*observe)(void *observe_ctx, const struct cst_auxlog_read *read);
	void *observe_ctx;
};

/** What a ring saw; everything needed to say what was captured and lost. */
struct cst_ring_stats {
	uint64_t records;          /* data-ring records delivered */
	uint64_t record_bytes;
	uint64_t aux_bytes;        /* AUX bytes copied out */
	uint64_t chunks;           /* AUX chunks delivered */
	uint64_t aux_records;      /* PERF_RECORD_AUX seen */
	uint64_t aux_record_bytes; /* sum of their aux_size */
	uint64_t truncated;        /* AUX records flagged TRUNCATED: the sink dropped trace */
	uint64_t collision;
	uint64_t partial;
	uint64_t empty_truncated;  /* TRUNCATED with size 0: AUX full, nothing kept */
	uint64_t truncated_late;   /* TRUNCATED with the AUX ring full: the consumer was
				      late (the others: the sink's own buffer filled) */
	uint64_t lost_events;      /* PERF_RECORD_LOST: records the kernel dropped */
	uint64_t lost_records;     /* number of PERF_RECORD_LOST records */
	uint64_t reenables;        /* PERF_EVENT_IOC_ENABLE issued after a stop */
	uint64_t reenable_failures; /* of those, refused: trace stayed off */
	uint64_t snapshots;
	uint64_t snapshot_overwritten; /* bytes the sink wrote that a later write
					* overwrote before a snapshot read them */
	uint64_t unwritten_bytes;  /* bytes the output refused (disk full) */
	uint64_t unwritten_aux;    /* the AUX part of unwritten_bytes */
	uint64_t aux_head;         /* last aux_head seen */
	bool output_failed;
};

struct cst_ring;

/** Wrap a mapped ring. @desc and @out are copied. Returns 0 and sets *@ring, or
 *  -cste_invalid (NULL, sizes not powers of two) or -cste_nomem. */
int cst_ring_alloc(struct cst_ring **ring, const struct cst_ring_desc *desc,
		   const struct cst_ring_output *out);
void cst_ring_free(struct cst_ring *ring);

/** Drain: every complete data-ring record goes to out->record, then (normal
 *  mode) the AUX bytes between aux_tail and aux_head go to out->aux as one
 *  chunk and aux_tail is advanced. After a TRUNCATED record or a full AUX
 *  area the event is re-enabled (the kernel disabled it). Returns the bytes
 *  consumed (>= 0) or a negative error: -cste_invalid, -cste_format (a record
 *  of impossible size), or the output's error. */
int64_t cst_ring_read(struct cst_ring *ring);

/** Snapshot mode: disable the event, drain records, copy the newest
 *  min(head - previous head, aux_size) bytes ending at aux_head as one chunk,
 *  re-enable. Counts bytes overwritten since the previous snapshot.
 *  Returns the bytes copied or a negative error (-cste_invalid when the ring
 *  is not in overwrite mode). */
int64_t cst_ring_snapshot(struct cst_ring *ring);

/** Copy the statistics. Returns 0 or -cste_invalid. */
int cst_ring_get_stats(const struct cst_ring *ring, struct cst_ring_stats *stats);

/** Read a 64-bit ring position the kernel updates concurrently. On 32-bit
 *  builds the high word is read again until stable so the value never tears. */
uint64_t cst_ring_load_u64(const volatile void *p);
/** The split (two 32-bit loads) reader used on 32-bit builds; exposed for tests. */
uint64_t cst_ring_load_u64_split(const volatile void *p);

/* ------------------------------------------------------------------------
 * Writing drained data into perf.data (through the perfdata stage's writer).
 * ------------------------------------------------------------------------ */

struct cst_perf_writer;

#define CST_ETM_MAX_CPUS 64

/** The adapter between rings and a perf.data writer. It refuses data that
 *  would leave less than @reserve bytes free on the file system (or under
 *  RLIMIT_FSIZE), so the file can always be finished: a full disk costs the
 *  newest trace, never the file. Caller-owned; no allocation. */
struct cst_perf_out {
	struct cst_perf_writer *w;
	char dir[4096];     /* directory of the file, for statvfs */
	uint64_t reserve;   /* bytes kept free to finish the file */
	uint64_t written;   /* bytes written so far (header and attrs included) */
	uint64_t refused;   /* bytes refused because the space ran out */
	uint64_t reference; /* AUXTRACE reference counter */
	bool full;          /* the space ran out */
	int error;          /* the writer's first error */
	/* Trace IDs the kernel reported in PERF_RECORD_AUX_OUTPUT_HW_ID, by CPU
	 * (kernels from 6.4 allocate them; the metadata's legacy IDs are then wrong). */
	uint8_t trace_id[CST_ETM_MAX_CPUS];
	bool have_trace_id[CST_ETM_MAX_CPUS];
};

/** Set up @o for writer @w writing @path; @written = bytes already there.
 *  @reserve 0 = 1 MiB. */
void cst_perf_out_init(struct cst_perf_out *o, struct cst_perf_writer *w, const char *path,
		       uint64_t written, uint64_t reserve);
/** The ring output writing through @o: records raw, AUX chunks as AUXTRACE. */
struct cst_ring_output cst_perf_out_ring_output(struct cst_perf_out *o);

/* ------------------------------------------------------------------------
 * The consumer: every ring of a capture drained into one perf.data, and what
 * it saw optionally kept as a recorded AUX stream (auxlog.h). cstrace record
 * runs it over live mmaps, cstrace replay over a recorded stream and the tests
 * over the kernel model: the same code each time.
 * ------------------------------------------------------------------------ */

struct cst_perf_attr;
struct cst_perf_etm_info;
struct cst_perf_writer_opts;
struct cst_consumer;
struct cst_record_result;

struct cst_consumer_opts {
	size_t sz;                 /* sizeof(struct cst_consumer_opts) */
	const struct cst_log *log;
	const char *output;        /* perf.data path; NULL = "perf.data" */
	const char *aux_log;       /* also write a recorded AUX stream here; NULL = none */
	bool aux_log_light;        /* ...without the AUX bytes: a log for cstrace aux, not
				    * for replay (the bytes are in the perf.data already) */
	/* The perf.data's feature strings and command line (NULL = this host's, see
	 * cst_perf_writer_opts); what is used goes into the stream. Its inputs and
	 * whole apply to the stream as well. */
	const struct cst_perf_writer_opts *writer;
	uint64_t page_size;        /* 0 = this host's */
	bool snapshot;             /* AUX in overwrite mode */
	const struct cst_perf_attr *attrs; /* with their ids; the first is the trace event */
	int nattrs;
	const struct cst_perf_etm_info *etm_info; /* NULL: sideband only */
	/* Event times of the stream; NULL = CLOCK_MONOTONIC in nanoseconds. */
	uint64_t (*clock)(void *clock_ctx);
	void *clock_ctx;
	uint64_t reserve;          /* bytes kept free to finish the file; 0 = 1 MiB */
};

/** Create the perf.data (and the stream) with the attrs and the ETM metadata.
 *  Errors (logged): -cste_invalid, -cste_io, -cste_nomem. */
int cst_consumer_open(struct cst_consumer **out, const struct cst_consumer_opts *opts);
/** Add a mapped ring; its output is the perf.data. Returns the ring's index or
 *  an error (-cste_invalid, -cste_nomem). */
int cst_consumer_add_ring(struct cst_consumer *c, const struct cst_ring_desc *desc);
int cst_consumer_nrings(const struct cst_consumer *c);
/** A BUILD_ID feature entry for the perf.data (see cst_perf_writer_add_build_id). */
int cst_consumer_add_build_id(struct cst_consumer *c, int32_t pid, uint16_t misc,
			      const uint8_t *id, uint8_t size, const char *filename);
/** Read every ring once (cst_ring_read), then end the round. Returns 0 or the
 *  first ring's error (< 0 when the output is full or broken). */
int cst_consumer_drain(struct cst_consumer *c);
/** Snapshot every ring with AUX (the others are read), then end the round. */
int cst_consumer_snapshot(struct cst_consumer *c);
/** True once the output refused data (disk full) or failed. */
bool cst_consumer_output_stopped(const struct cst_consumer *c);
/** Note for the stream that poll() returned @nready with rings @ring_mask readable,
 *  or that signal @signo arrived. */
void cst_consumer_note_wake(struct cst_consumer *c, uint32_t nready, uint64_t ring_mask);
void cst_consumer_note_signal(struct cst_consumer *c, int signo);
/** Finish the perf.data (features, AUXTRACE index, the kernel's trace IDs put
 *  into the metadata) and the stream (an end event with @result and what @res
 *  says of the command), and fill @res with what the rings saw. Returns 0 or
 *  the error that kept the file from being finished. */
int cst_consumer_finish(struct cst_consumer *c, int result, struct cst_record_result *res);
/** Free; without a finish the perf.data stays marked unfinished. */
void cst_consumer_free(struct cst_consumer *c);

/* ------------------------------------------------------------------------
 * cs_etm discovery (all files are read below a root: "/" on a board, a
 * fixture tree in tests).
 * ------------------------------------------------------------------------ */

#define CST_ETM_MAX_SINKS 16

/** One format term of the PMU: "cycacc" -> config:12. */
struct cst_pmu_format {
	char name[32];
	int word;   /* 0 config, 1 config1, 2 config2, 3 config3 */
	int lo, hi; /* bit range */
};

/** The ETM behind a CPU as the metadata needs it. */
struct cst_etm_cpu {
	int cpu;
	enum { cst_etm_v3, cst_etm_v4, cst_etm_ete } kind;
	bool is_ptm;
	/* ETMv3/PTM */
	uint32_t etmcr, etmidr, etmccer;
	/* ETMv4/ETE */
	uint32_t trcidr0, trcidr1, trcidr2, trcidr8, trcauthstatus, trcconfigr, trcdevarch;
	uint32_t ts_source;
	bool has_ts_source;
	uint32_t traceid;
	/* the address comparators (ETMv4/ETE TRCIDR4, ETMv3/PTM ETMCCR; 0: not read) */
	uint32_t trcidr4, etmccr;
};

struct cst_etm_pmu {
	uint32_t type;
	struct cst_pmu_format formats[32];
	int nformats;
	char sinks[CST_ETM_MAX_SINKS][32];
	uint32_t sink_hash[CST_ETM_MAX_SINKS];
	int nsinks;
	struct cst_etm_cpu cpus[CST_ETM_MAX_CPUS];
	int ncpus;
};

/** Read the cs_etm PMU below @root: type, format/, sinks/, cpuN/ registers.
 *  Errors: -cste_not_found (no cs_etm PMU: the message names the kernel
 *  options), -cste_format (a file that does not hold a number), -cste_invalid;
 *  each logged through @log as one line with the fix. */
int cst_etm_pmu_discover(struct cst_etm_pmu *pmu, const char *root, const struct cst_log *log);

/** Find a format term. Returns its index or -cste_not_found. */
int cst_etm_pmu_format(const struct cst_etm_pmu *pmu, const char *name);

/* ------------------------------------------------------------------------
 * Event attributes.
 * ------------------------------------------------------------------------ */

/** A parsed "-e cs_etm/@SINK,timestamp,cycacc,.../" request. */
struct cst_etm_request {
	char sink[32];     /* empty = default sink */
	uint64_t config[4];
	bool timestamp, contextid;
	bool user_only;    /* the "u" modifier: exclude_kernel */
};

/** Parse an event string against the PMU's format terms. A term may take a
 *  value ("cycacc=0"). Errors, logged through @log: -cste_format (naming the
 *  term and the terms there are), -cste_not_found (sink not found: the sinks). */
int cst_etm_request_parse(struct cst_etm_request *req, const struct cst_etm_pmu *pmu,
			  const char *event, const struct cst_log *log);

/** Set each CPU's ETMCR (ETMv3: the config bits are ETMCR's) and TRCCONFIGR
 *  (ETMv4: the driver's translation) from the request, for the metadata. */
void cst_etm_pmu_apply_config(struct cst_etm_pmu *pmu, const struct cst_etm_request *req);

struct cst_perf_etm_info;

/** The cs_etm AUXTRACE_INFO for @pmu (version 1, per-CPU register blocks with
 *  the trace IDs); free info->cpus with cst_perf_etm_info_fini().
 *  Errors: -cste_invalid, -cste_nomem. */
int cst_etm_pmu_etm_info(const struct cst_etm_pmu *pmu, bool snapshot,
			 struct cst_perf_etm_info *info);


/** Fill a struct perf_event_attr (@attr, @size bytes, e.g. PERF_ATTR_SIZE_VER7)
 *  for the cs_etm event as perf does: sample_period 1, sample_id_all, disabled
 *  with enable_on_exec when @enable_on_exec. Returns 0 or -cste_invalid. */
int cst_etm_attr_fill(void *attr, size_t size, const struct cst_etm_pmu *pmu,
		      const struct cst_etm_request *req, bool enable_on_exec, bool snapshot);

/** Fill the dummy tracking event: mmap2, comm, comm_exec, task,
 *  context_switch, sample_id_all, exclude_kernel when @user_only. */
int cst_dummy_attr_fill(void *attr, size_t size, bool enable_on_exec, bool user_only,
			bool inherit);

/** The sample_type both events use (their sample_id trailers must match). */
uint64_t cst_capture_sample_type(void);

/** Fill the uprobe event of a trigger (the uprobe PMU, type @type from
 *  /sys/bus/event_source/devices/uprobe/type): entry of the code at file offset
 *  @offset of @path (config 0, config1 = the path, config2 = the offset), a sample
 *  at the @count-th entry (sample_period) that wakes the reader (wakeup_events 1),
 *  disabled with enable_on_exec when @enable_on_exec. With @aux_pause the event
 *  asks the kernel to pause its group's AUX output when it fires (aux_action bit 1,
 *  Linux 6.13). @path must outlive the perf_event_open call. Returns 0 or
 *  -cste_invalid. */
int cst_uprobe_attr_fill(void *attr, size_t size, uint32_t type, const char *path,
			 uint64_t offset, uint64_t count, bool enable_on_exec, bool aux_pause);

/* ------------------------------------------------------------------------
 * Recording (perf mode).
 * ------------------------------------------------------------------------ */

enum cst_record_scope {
	cst_scope_per_thread = 0, /* the command's thread, wherever it runs */
	cst_scope_cpus,           /* the command on a set of CPUs (per-CPU rings) */
	cst_scope_system,         /* everything on the CPUs (-a) */
	cst_scope_pid,            /* an existing process (-p) */
};

struct cst_record_opts {
	size_t sz;                 /* sizeof(struct cst_record_opts) */
	const struct cst_log *log;
	const char *root;          /* sysfs/procfs root; NULL = "/" */
	const char *event;         /* NULL = "cs_etm//" */
	enum cst_record_scope scope;
	uint64_t cpu_mask;         /* cst_scope_cpus: bit N = CPU N; 0 = all */
	int pid;                   /* cst_scope_pid */
	uint64_t aux_pages;        /* 0 = perf's default */
	uint64_t snapshot_size;    /* bytes; 0 with @snapshot = the AUX size */
	bool snapshot;
	bool sideband_only;        /* no cs_etm event: sideband alone (diagnostics, tests) */
	bool dry_run;              /* describe the events and metadata through @log, open
				    * nothing (implied by a @root other than "/": a fixture
				    * tree has no kernel behind it) */
	bool aux_log_light;        /* write @aux_log without the AUX bytes (see
				    * cst_consumer_opts) */
	const char *output;        /* perf.data path; NULL = "perf.data" */
	char *const *argv;         /* the command; NULL with @pid or system-wide */
	const char *aux_log;       /* also write a recorded AUX stream (auxlog.h) here */
	/* Address filters in perf's syntax (cst_addr_filter_parse), sent with
	 * PERF_EVENT_IOC_SET_FILTER to every cs_etm event; NULL = none. */
	const char *filter;
	/* Snapshot mode: take the snapshot when the function "SYM[@FILE]" (FILE: the
	 * command) is entered the @trigger_count-th time (a uprobe event in each
	 * cs_etm event's group), then trace no more; NULL = none. */
	const char *trigger;
	uint64_t trigger_count;    /* 0 = 1 */
};

/** The outcome of a recording, for the summary. */
struct cst_record_result {
	int exit_status;        /* the command's wait status, -1 if none */
	bool interrupted;       /* Ctrl-C / SIGTERM */
	bool output_failed;     /* the output refused data (disk full) */
	uint64_t file_bytes;
	struct cst_ring_stats total;
	struct cst_ring_stats per_ring[CST_ETM_MAX_CPUS + 1];
	int ring_cpu[CST_ETM_MAX_CPUS + 1]; /* the CPU of each ring; -1 per-thread */
	int nrings;
	const char *output;     /* the file written */
	bool snapshot;
	bool dry_run;           /* nothing was recorded (see cst_record_opts.dry_run) */
	/* --trigger: whether it fired and took the snapshot, and where (the
	 * uprobe's sample: the function's address in the process, its time) */
	bool trigger, triggered;
	bool trigger_paused;    /* the kernel paused AUX output at the trigger */
	uint64_t trigger_ip, trigger_time;
	char trigger_what[256]; /* "SYM @ FILE, entry N" */
};

/** Record @opts->argv (or a pid, or the system) into perf.data. The file is
 *  finished even when the command crashes, the user interrupts or the disk is
 *  full. Errors, each logged through @opts->log as one line explaining the fix:
 *  -cste_not_found (no cs_etm, unknown sink), -cste_permission
 *  (perf_event_paranoid), -cste_nomem (AUX mmap over the lock limit), -cste_io,
 *  -cste_invalid, -cste_unsupported. */
int cst_record_run(const struct cst_record_opts *opts, struct cst_record_result *res);

/** Print what was captured and lost as lines on @fp (a FILE *). */
void cst_record_summary(const struct cst_record_result *res, void *fp);

/** What @truncated TRUNCATED AUX records (@empty with nothing kept, @late with
 *  the AUX ring full) say about where trace was lost and what avoids it, in the
 *  words the record summary and the AUX timeline share: the consumer late
 *  (a bigger AUX area, -m) or the sink's own buffer full (a bigger sink, the
 *  ETR, or less trace). Writes into @buf (@size bytes); returns @buf. */
const char *cst_aux_truncation_words(uint64_t truncated, uint64_t empty, uint64_t late,
				     char *buf, size_t size);

/* ------------------------------------------------------------------------
 * Replay: the consumer above run over a recorded AUX stream instead of live
 * mmaps, writing the perf.data the capture wrote.
 * ------------------------------------------------------------------------ */

struct cst_replay_opts {
	size_t sz;                 /* sizeof(struct cst_replay_opts) */
	const struct cst_log *log;
	const char *output;        /* perf.data path; NULL = "perf.data" */
	const char *aux_log;       /* write the stream again, as the consumer sees it */
	/* Files the command reads: neither output may be one (cst_perf_writer_opts). */
	const struct cst_file_set *inputs;
	bool whole;                /* both outputs appear at the end, or not at all */
	uint8_t reserved[7];
};

struct cst_replay_result {
	struct cst_record_result rec; /* what the rings saw, as record reports it */
	uint64_t events;      /* stream events replayed */
	uint64_t drains;
	uint64_t end_offset;  /* stream offset past the last whole event */
	bool ended;           /* the stream's end event was reached */
	bool cut_short;       /* the stream stops without an end event (a capture
			       * that died): the perf.data holds what was consumed */
	bool partial_drain;   /* ...and it stops inside a drain */
	bool diverged;        /* the consumer stored other tails than the capture's */
	int32_t capture_result; /* the capture's own result (end event) */
};

/** Replay @stream. The perf.data is finished whenever its rings were set up, also
 *  for a stream cut short or one that turns out malformed part way (then what
 *  came before is kept and the error returned). Errors (one line logged naming
 *  the stream and offset): those of cst_auxlog_reader_open, -cste_format (a
 *  malformed stream, or a replay that diverged from the capture), -cste_no_trace
 *  (the stream ends before its rings), -cste_unsupported, -cste_io, -cste_nomem. */
int cst_replay_run(const char *stream, const struct cst_replay_opts *opts,
		   struct cst_replay_result *res);

/** Run a finished perf.data (synth's) through the consumer as if each of its rounds
 *  had come out of the kernel's rings (records into the data area, AUXTRACE data
 *  into the AUX area, then a drain or, in snapshot mode, a snapshot), writing the
 *  perf.data such a capture writes (@opts->output) and its recorded stream
 *  (@opts->aux_log). Errors (logged with the offset): -cste_unsupported (AUX data
 *  a ring could not have held so), those of the reader and the consumer. */
int cst_recapture_run(const char *perf, const struct cst_replay_opts *opts,
		      struct cst_replay_result *res);

/** The explanation for a perf_event_open / mmap errno, naming the setting to
 *  change; reads perf_event_paranoid, perf_event_mlock_kb and RLIMIT_MEMLOCK
 *  below @root. @aux_bytes is the AUX size asked for when an mmap failed
 *  (0 for perf_event_open); @ncpus the number of rings. */
void cst_capture_explain_errno(int errnum, const char *root, bool system_wide,
			       uint64_t aux_bytes, int ncpus, char *msg, size_t msglen);

/* ------------------------------------------------------------------------
 * Sysfs-mode capture.
 * ------------------------------------------------------------------------ */

struct cst_sysfs_opts {
	size_t sz;                 /* sizeof(struct cst_sysfs_opts) */
	const struct cst_log *log;
	const char *root;          /* NULL = "/": sysfs and /dev/<sink> below it */
	const char *sink;          /* e.g. "tmc_etf0" */
	bool dry_run;              /* describe the sink, the sources and the files it
				    * would write through @log (info); write nothing, run
				    * nothing */
	uint64_t cpu_mask;         /* sources to enable; 0 = every ETM */
	const char *outdir;        /* snapshot directory to create */
	char *const *argv;         /* the command */
	/* Address filters in perf's syntax, programmed into every source's address
	 * comparators through sysfs; entries of a file are placed on its mapping
	 * when the command stops at its exec. NULL = none. */
	const char *filter;
	uint64_t reserved;         /* zero: the struct ends without padding on 32-bit */
};

struct cst_sysfs_result {
	int exit_status;
	uint64_t buffer_bytes;
	bool buffer_full;          /* the sink wrapped: older trace was overwritten */
	int nsources;
	int nmaps;                 /* memory images written */
};

/** Enable @sink and the ETM sources through <root>/sys/bus/coresight, run
 *  the command, disable, read <root>/dev/<sink> and write a snapshot
 *  directory (snapshot.ini, trace.ini, device inis, the buffer and the
 *  command's executable mappings). Errors, logged through @opts->log:
 *  -cste_not_found (sink or sources missing: lists those there are),
 *  -cste_permission, -cste_io, -cste_invalid. */
int cst_sysfs_record(const struct cst_sysfs_opts *opts, struct cst_sysfs_result *res);

/* ------------------------------------------------------------------------
 * AUX-buffer report (`cstrace aux`): what each PERF_RECORD_AUX of a perf.data
 * file says, where its bytes are, and what is missing.
 * ------------------------------------------------------------------------ */

/** One PERF_RECORD_AUX. Positions are AUX positions (the kernel's aux_head
 *  numbering): [start, end) holds the record's bytes. */
struct cst_aux_rec_info {
	uint64_t index;       /* AUX record number in the file, from 0 */
	uint64_t file_offset; /* of the record */
	int cpu;              /* its queue: the CPU, or -1 for per-thread files */
	uint64_t time;        /* sample_id time, 0 if none */
	uint64_t aux_offset, aux_size, flags;
	uint64_t start, end;  /* overwrite mode: end = aux_offset */
	int64_t chunk;        /* the AUXTRACE chunk holding start (index), -1 if none */
	uint64_t covered;     /* bytes of [start, end) present in chunks */
	uint64_t lost;        /* aux_size - covered: bytes the file does not have */
	int64_t gap;          /* start - end of the queue's previous record */
	int64_t wraps;        /* ends of the AUX area crossed; -1 unknown (no aux_size) */
	uint64_t order;       /* position among AUX and AUXTRACE records in the file */
};

/** One AUXTRACE chunk. */
struct cst_aux_chunk_info {
	uint64_t index, file_offset;
	int cpu;              /* queue, as for records */
	uint32_t idx, tid;
	uint64_t offset, size; /* size as in the file: padded to 8 bytes */
	uint64_t data_size;   /* size less the padding the next chunk starts in */
	uint64_t records;     /* AUX records whose bytes it holds (some or all) */
	uint64_t order;
};

/** Totals of one queue (a CPU, or -1 per-thread). */
struct cst_aux_queue_summary {
	int cpu;
	uint64_t records, record_bytes, chunks, chunk_bytes;
	uint64_t truncated, overwrite, partial, collision, empty_truncated;
	uint64_t gaps, gap_bytes; /* records not starting where the previous one ended */
	uint64_t lost_bytes;      /* record bytes found in no chunk */
	uint64_t wraps;
	uint64_t lost_events;     /* PERF_RECORD_LOST counts */
};

/** The report on a recording's AUX records (opaque: read it through the
 *  functions below). */
struct cst_aux_report;

/** What a report holds, and how the recording ended. */
struct cst_aux_report_info {
	uint64_t nrecs;       /* AUX records */
	uint64_t nchunks;     /* AUXTRACE chunks */
	int nqueues;          /* rings: CPUs, or threads for per-thread recording */
	uint64_t aux_size;    /* as given (0 = unknown) */
	bool per_thread;
	bool incomplete;      /* the file was not finished */
};

/** Read @path and build the report; @aux_size (bytes, power of two, 0 =
 *  unknown) lets wraps be counted. Errors: those of cst_perf_reader_open,
 *  -cste_nomem, -cste_invalid. */
int cst_aux_report_build(struct cst_aux_report **out, const char *path, uint64_t aux_size,
			 const struct cst_log *log);
void cst_aux_report_free(struct cst_aux_report *r);

/** The counts and flags of @r. */
struct cst_aux_report_info cst_aux_report_get_info(const struct cst_aux_report *r);

/** AUX record @i (in file order), chunk @i, queue @i; NULL past the end. */
const struct cst_aux_rec_info *cst_aux_report_rec(const struct cst_aux_report *r, uint64_t i);
const struct cst_aux_chunk_info *cst_aux_report_chunk(const struct cst_aux_report *r, uint64_t i);
const struct cst_aux_queue_summary *cst_aux_report_queue(const struct cst_aux_report *r, int i);

/** Flags in words: "truncated,overwrite,partial,collision" (and "raw" for the
 *  unformatted PMU format), "-" for none. Returns @buf. */
const char *cst_aux_flags_words(uint64_t flags, char *buf, size_t size);

/** Draw an SVG timeline on @fp (a FILE *): head position per queue over the
 *  records, and chunk sizes below. Errors: -cste_invalid, -cste_io (a write to
 *  @fp failed). */
int cst_aux_report_svg(const struct cst_aux_report *r, void *fp);

/* ------------------------------------------------------------------------
 * The kernel's own view, from ftrace text (cstrace aux --ftrace): writes
 * (perf_aux_output_end kprobe or trace_printk lines: old/new head, size),
 * consumer reads (trace_marker "__auxtrace_mmap__read: old_offset= head_offset="),
 * sched_waking/sched_wakeup/sched_switch; paired with a perf.data's AUX records.
 * ------------------------------------------------------------------------ */

enum cst_aux_ft_kind { cst_aux_ft_write = 0, cst_aux_ft_read, cst_aux_ft_wake, cst_aux_ft_switch };

struct cst_aux_ft_event {
	uint64_t time;      /* ns, the kernel's local clock (as perf's sample time) */
	enum cst_aux_ft_kind kind;
	int cpu;            /* the CPU the line was traced on */
	uint32_t pid;       /* of the task that made the line */
	uint64_t line;      /* line number in the text */
	uint64_t old, head, size; /* write: old/new head; read: old/head offset */
	int ring_cpu;       /* write: its ring (= cpu); read: the ring it drained, -1 unknown */
	int64_t rec;        /* write: the AUX record (cst_aux_report_rec) reporting it, -1 none */
	uint64_t unheld, unheld_start; /* write: its bytes no AUXTRACE chunk holds */
	uint64_t backlog;   /* write: new head less the consumer's position */
	bool overflow;      /* write: the backlog reached the ring size */
	uint64_t drained;   /* read: the writes it took */
	uint64_t latency;   /* read: ns since the consumer's wake-up (0: none seen) */
	bool from_log;      /* read: from cstrace's consumer log, not from ftrace */
	uint32_t target;    /* wake/switch: the task woken or switched to */
	int target_cpu;     /* wake: the CPU it was woken on (-1 unknown) */
	bool waking;        /* sched_waking (else sched_wakeup) */
};

struct cst_aux_ft_ring {
	int cpu;
	uint64_t writes, write_bytes, reads, read_bytes;
	uint64_t peak_backlog, peak_time;
	uint64_t unreported, unreported_bytes; /* writes no AUX record reports */
	uint64_t unheld_bytes;                 /* reported, but not in any AUXTRACE */
	uint64_t overflows, first_overflow_time; /* until the next read: one overflow */
	uint64_t max_latency;
	uint64_t first_head, last_head;
	uint64_t aux_size;  /* the ring's size (--aux-size, or the consumer log's), 0 unknown */
};

struct cst_aux_ftrace;

struct cst_aux_timeline;

/** Read the ftrace text @path; pair with @perf's records when given (NULL: the text
 *  alone); add the consumer's reads of @consumer (cstrace's consumer log, NULL: none)
 *  on the kernel's clock; @aux_size (0: the log's ring sizes, else unknown) finds
 *  overflows. Errors (logged): -cste_not_found, -cste_io, -cste_no_trace (no event of
 *  ours), -cste_nomem. */
int cst_aux_ftrace_build(struct cst_aux_ftrace **out, const char *path,
			 const struct cst_aux_report *perf, const struct cst_aux_timeline *consumer,
			 uint64_t aux_size, const struct cst_log *log);
void cst_aux_ftrace_free(struct cst_aux_ftrace *f);
uint64_t cst_aux_ftrace_nevents(const struct cst_aux_ftrace *f);
/** Events in time order. */
const struct cst_aux_ft_event *cst_aux_ftrace_event(const struct cst_aux_ftrace *f, uint64_t i);
int cst_aux_ftrace_nrings(const struct cst_aux_ftrace *f);
const struct cst_aux_ft_ring *cst_aux_ftrace_ring(const struct cst_aux_ftrace *f, int i);
/** True when the writes were paired with a perf.data's AUX records. */
bool cst_aux_ftrace_paired(const struct cst_aux_ftrace *f);
/** Draw the view as SVG on @fp (a FILE *), on the kernel's clock: one lane per
 *  ring with the unread backlog against the ring size, writes and reads as bars,
 *  unreported writes and overflows marked, wake-ups, a legend. Returns 0,
 *  -cste_invalid (no event) or -cste_io. */
int cst_aux_ftrace_svg(const struct cst_aux_ftrace *f, void *fp);
/** Print the commands that make such a trace (kprobe_events lines for arm64 and
 *  x86-64, the sched tracepoints, trace_marker) on @fp (a FILE *). */
void cst_aux_ftrace_probes(void *fp);

/* ------------------------------------------------------------------------
 * What a recorded AUX stream (auxlog.h) says happened, per ring, on the
 * consumer's clock: the kernel's writes (the AUX records each read found), the
 * consumer's reads, the unread backlog between them, wake-up to read latency,
 * and what was lost, where and why (cstrace aux STREAM).
 * ------------------------------------------------------------------------ */

enum cst_aux_tl_kind {
	cst_aux_tl_write = 0, /* the kernel wrote AUX data (one PERF_RECORD_AUX) */
	cst_aux_tl_read,      /* the consumer read a ring */
	cst_aux_tl_lost,      /* PERF_RECORD_LOST: the data ring dropped records */
	cst_aux_tl_wake,      /* poll() woke the consumer */
};

struct cst_aux_tl_event {
	uint64_t time;     /* ns since the stream's first event, consumer clock */
	enum cst_aux_tl_kind kind;
	int ring;          /* index into the timeline's rings; -1 for a wake */
	/* write: the record's AUX offset, size and flags; @found is the time of the
	 * read that found it, @time an estimate from the record's own timestamp
	 * (moved onto the consumer's clock by the smallest delay seen, kept between
	 * the previous read and @found); without timestamps @time = @found */
	uint64_t offset, size, flags, found;
	/* read: the AUX head it loaded, its tail before, bytes copied, the unread
	 * backlog it found (head - tail; snapshot mode: new bytes since the last
	 * snapshot), bytes overwritten before a snapshot got them, the time since
	 * the wake-up that led to it (0: none) */
	uint64_t head, tail, copied, backlog, overwritten, latency;
	bool snapshot;
	/* lost: records dropped; wake: rings readable (bit per ring) */
	uint64_t lost, ring_mask;
};

struct cst_aux_tl_ring {
	uint32_t idx, cpu, tid; /* cpu/tid UINT32_MAX: none */
	uint64_t aux_size;
	bool overwrite;
	uint64_t writes, written;     /* AUX records and the bytes they report */
	uint64_t reads, copied;       /* reads and the AUX bytes they copied */
	uint64_t peak_backlog, peak_time;
	uint64_t truncated, empty_truncated, partial, collision;
	uint64_t lost_records, lost_events;
	uint64_t snapshots, overwritten;
	uint64_t max_latency, sum_latency, nlatency;
	uint64_t reenables, reenable_failures, read_errors;
	uint64_t unreported;          /* AUX bytes copied that no AUX record reports */
	uint64_t unreported_start;    /* where the first such range starts (AUX position) */
	uint64_t unwritten;           /* bytes the output refused (a full disk) */
};

struct cst_aux_tl_info {
	int nrings;
	uint64_t nevents;
	uint64_t duration;   /* ns from the first to the last event */
	bool ended;          /* the stream's end event was reached */
	uint64_t end_offset; /* stream offset past its last whole event */
	/* the kernel's clock (perf sample time, ftrace's local clock) of an event at
	 * @time: @time + kernel_base, estimated from the AUX records' timestamps */
	bool has_kernel_time;
	int64_t kernel_base;
};

struct cst_aux_timeline;

/** Read @stream into a timeline. Errors (one line logged with the file and
 *  offset): those of cst_auxlog_reader_open and _next, -cste_no_trace (no
 *  ring). A stream cut short gives the timeline up to the cut (info.ended false). */
int cst_aux_timeline_build(struct cst_aux_timeline **out, const char *stream,
			   const struct cst_log *log);
void cst_aux_timeline_free(struct cst_aux_timeline *t);
struct cst_aux_tl_info cst_aux_timeline_get_info(const struct cst_aux_timeline *t);
const struct cst_aux_tl_ring *cst_aux_timeline_ring(const struct cst_aux_timeline *t, int i);
/** Events in time order (writes at their estimated times). */
const struct cst_aux_tl_event *cst_aux_timeline_event(const struct cst_aux_timeline *t,
						      uint64_t i);
/** Ring @i's verdict in words, one paragraph without a newline. Returns @buf. */
const char *cst_aux_timeline_verdict(const struct cst_aux_timeline *t, int i, char *buf,
				     size_t size);
/** Draw the timeline as SVG on @fp (a FILE *): one lane per ring on one time
 *  axis, writes and reads as bars, the backlog against the ring size, losses
 *  marked, a legend. Returns 0 or -cste_io. */
int cst_aux_timeline_svg(const struct cst_aux_timeline *t, void *fp);

#ifdef __cplusplus
}
#endif

#endif /* CSTRACE_CAPTURE_H */
