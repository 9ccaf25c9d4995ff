/* cstrace recorded AUX streams: what one capture's ring consumer saw, in order, so that
 * the same consumer can be run again over it (cstrace replay) and its timing shown
 * (cstrace aux). The file format is described in docs/auxlog.md. */
#ifndef CSTRACE_AUXLOG_H
#define CSTRACE_AUXLOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cstrace/common.h"
#include "cstrace/perfdata.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The kinds of event a stream holds, in the order a capture writes them:
 *  one session, its attrs and ETM metadata, one ring per mmap, then the run. */
enum cst_auxlog_type {
	cst_auxlog_session = 1, /* how the perf.data was set up (struct cst_auxlog_session) */
	cst_auxlog_attr,        /* one event attr with its sample ids */
	cst_auxlog_etm_info,    /* the cs_etm AUXTRACE_INFO the perf.data carries */
	cst_auxlog_ring,        /* one mapped ring as the consumer found it */
	cst_auxlog_wake,        /* poll() returned: which rings were readable */
	cst_auxlog_signal,      /* a signal reached the consumer (SIGUSR2: snapshot) */
	cst_auxlog_drain,       /* the consumer starts reading every ring once */
	cst_auxlog_read,        /* what one ring read saw and did */
	cst_auxlog_end,         /* the capture finished (absent when it crashed) */
	cst_auxlog_build_id,    /* a BUILD_ID feature entry the perf.data gets */
	cst_auxlog_ntypes
};

/** How the output was set up: the perf.data writer's feature strings and command
 *  line, so that a replay on another machine writes the same bytes. */
struct cst_auxlog_session {
	uint64_t page_size;
	bool snapshot;      /* AUX in overwrite mode, read on SIGUSR2 and at the end */
	bool sideband_only; /* no cs_etm event: rings hold sideband only */
	bool aux_omitted;   /* reads keep AUX lengths, not bytes (a log, not replayable) */
	uint32_t nr_cpus_avail, nr_cpus_online;
	const char *hostname, *osrelease, *arch, *version;
	uint32_t argc;
	const char *const *argv;
};

/** One ring as the consumer found it at mmap time (the positions it starts from). */
struct cst_auxlog_ring {
	uint32_t idx, cpu, tid; /* as in the AUXTRACE records (cpu/tid -1: none) */
	bool overwrite;
	uint64_t data_size, aux_size; /* aux_size 0: no AUX area */
	uint64_t data_head, data_tail, aux_head, aux_tail;
};

/** Why a drain happened. */
enum cst_auxlog_drain_kind {
	cst_auxlog_drain_read = 0,     /* normal-mode read of every ring */
	cst_auxlog_drain_snapshot = 1, /* snapshot of every ring */
};

struct cst_auxlog_drain {
	enum cst_auxlog_drain_kind kind;
	uint32_t nrings; /* read events that follow, one per ring */
};

/** An event control the consumer issued during a read, and what it returned. */
enum cst_auxlog_ctl_op { cst_auxlog_ctl_enable = 1, cst_auxlog_ctl_disable = 2 };
#define CST_AUXLOG_MAX_CTL 4

/** One read of one ring (cst_ring_read, or cst_ring_snapshot when @snapshot):
 *  the heads it loaded, the bytes it copied and the tails it stored. */
struct cst_auxlog_read {
	uint32_t idx;
	bool snapshot;
	uint64_t data_tail;       /* before the read */
	uint64_t data_head;       /* loaded */
	uint64_t data_len;        /* bytes [data_tail, +data_len) of the data area... */
	const uint8_t *data;      /* ...unwrapped (NULL when 0) */
	uint64_t data_tail_after; /* stored */
	uint64_t aux_head;        /* loaded (0 when the ring has no AUX area) */
	uint64_t aux_pos;         /* AUX position of the first byte copied */
	uint64_t aux_len;
	const uint8_t *aux;       /* the AUX bytes copied out (NULL when 0 or omitted) */
	bool aux_omitted;         /* the bytes are not in the stream, only @aux_len */
	uint64_t aux_tail_after;  /* stored (normal mode) */
	uint64_t unwritten;       /* bytes the output refused so far (a full disk) */
	int64_t result;           /* what the read returned */
	uint32_t nctl;
	struct {
		enum cst_auxlog_ctl_op op;
		int32_t result;
	} ctl[CST_AUXLOG_MAX_CTL];
};

struct cst_auxlog_wake {
	uint32_t nready;    /* poll()'s return */
	uint64_t ring_mask; /* bit i: ring i had POLLIN (first 64 rings) */
};

/** How the capture ended. */
struct cst_auxlog_end {
	int32_t result;      /* 0 or the capture's -cste_ error */
	int32_t exit_status; /* the command's wait status, -1 if none */
	bool interrupted;
	bool output_failed;
};

/** One event. Pointers stay valid until the next call on the reader. */
struct cst_auxlog_event {
	enum cst_auxlog_type type;
	uint64_t time;   /* nanoseconds on the capture's clock (CLOCK_MONOTONIC on a board) */
	uint64_t offset; /* file offset of the event (filled by the reader) */
	union {
		struct cst_auxlog_session session;
		struct cst_perf_attr attr; /* ids/nids included */
		struct cst_perf_etm_info etm_info;
		struct cst_auxlog_ring ring;
		struct cst_auxlog_wake wake;
		int32_t signo;
		struct cst_auxlog_drain drain;
		struct cst_auxlog_read read;
		struct cst_auxlog_end end;
		struct cst_perf_build_id build_id; /* filename points into the reader */
	} u;
};

/** The event type's name ("read", "drain"...), or "?". */
const char *cst_auxlog_type_name(enum cst_auxlog_type type);

/* ------------------------------------------------------------------------
 * Writer.
 * ------------------------------------------------------------------------ */

struct cst_auxlog_writer;

struct cst_auxlog_writer_opts {
	size_t sz; /* sizeof(struct cst_auxlog_writer_opts) */
	const struct cst_log *log;
	/* Files the command reads: @path may not be one (refused, -cste_invalid). */
	const struct cst_file_set *inputs;
	/* A stream made at once (synth --aux-log), not a capture's: written under a
	 * temporary name and moved into place by cst_auxlog_writer_finish; freed
	 * unfinished or failed, nothing remains (cst_out). */
	bool whole;
	uint8_t reserved[7];
};

/** Create @path (0600; a previous file is kept as @path.old) and write the file
 *  header. Events are written as they come, so a capture that dies leaves a
 *  stream that reads up to its last whole event (with opts->whole the stream
 *  appears at finish instead). Errors: -cste_invalid, -cste_io (errno set),
 *  -cste_nomem. */
int cst_auxlog_writer_open(struct cst_auxlog_writer **out, const char *path,
			   const struct cst_auxlog_writer_opts *opts);

/** Append one event (its offset is ignored). Errors: -cste_invalid (a type or
 *  field the format cannot hold), -cste_io, -cste_nomem. After an error the
 *  writer refuses everything (one message was logged). */
int cst_auxlog_write(struct cst_auxlog_writer *w, const struct cst_auxlog_event *ev);

/** Flush to disk (with opts->whole, and move the file into place). Returns 0 or
 *  the writer's first error. */
int cst_auxlog_writer_finish(struct cst_auxlog_writer *w);
void cst_auxlog_writer_free(struct cst_auxlog_writer *w);

/* ------------------------------------------------------------------------
 * Reader.
 * ------------------------------------------------------------------------ */

struct cst_auxlog_reader;

struct cst_auxlog_reader_opts {
	size_t sz; /* sizeof(struct cst_auxlog_reader_opts) */
	const struct cst_log *log;
};

/** True when @path starts like a recorded AUX stream (its magic). */
bool cst_auxlog_probe(const char *path);

/** Open a stream. Errors (one line logged naming the file): -cste_not_found,
 *  -cste_io, -cste_format (not a recorded AUX stream), -cste_unsupported (a
 *  newer version), -cste_nomem. */
int cst_auxlog_reader_open(struct cst_auxlog_reader **out, const char *path,
			   const struct cst_auxlog_reader_opts *opts);
void cst_auxlog_reader_free(struct cst_auxlog_reader *r);

/** The next event. Returns 0, -cste_eos at a clean end, -cste_truncated when the
 *  file ends inside an event (a capture that died: the events before were whole),
 *  -cste_format for an event that breaks the format (logged with its offset),
 *  -cste_io, -cste_nomem. */
int cst_auxlog_reader_next(struct cst_auxlog_reader *r, struct cst_auxlog_event *ev);

/** File offset just past the last whole event read. */
uint64_t cst_auxlog_reader_offset(const struct cst_auxlog_reader *r);
/** The path given to open. */
const char *cst_auxlog_reader_path(const struct cst_auxlog_reader *r);

#ifdef __cplusplus
}
#endif

#endif
