/* A model of the kernel side of an AUX ring (kernel/events/ring_buffer.c plus a
 * CoreSight ETF sink, coresight-tmc-etf.c), because no cs_etm hardware exists here. */
#ifndef CSTRACE_TESTS_KMODEL_H
#define CSTRACE_TESTS_KMODEL_H

#include <stdbool.h>
#include <stdint.h>

#include "cstrace/capture.h"

struct kmodel_opts {
	uint64_t data_size;  /* data ring bytes (power of two) */
	uint64_t aux_size;   /* AUX bytes (power of two) */
	uint64_t sink_size;  /* ETF RAM bytes (multiple of 16) */
	uint64_t watermark;  /* aux_watermark; 0 = half the AUX area (rb_alloc_aux) */
	bool overwrite;      /* snapshot mode: AUX mapped read-only */
	uint32_t pid, tid, cpu;
	uint64_t id;         /* sample id written in trailers */
	uint64_t start_head; /* aux_head = aux_tail at mmap (to test wraps of the counter) */
	bool kernel32;       /* a 32-bit kernel: aux_head is an unsigned long */
	uint8_t trace_id;    /* != 0: emit AUX_OUTPUT_HW_ID with it (dynamic trace IDs) */
	bool refuse_enable;  /* PERF_EVENT_IOC_ENABLE fails (e.g. the task is gone) */
};

/* What the model did, to check the consumer's accounting against. */
struct kmodel_stats {
	uint64_t generated;      /* trace bytes the ETM produced while running */
	uint64_t untraced;       /* bytes the program ran while the event was off */
	uint64_t to_aux;         /* bytes the sink copied into AUX (barriers included) */
	uint64_t dropped;        /* trace bytes the sink discarded (wrap or no room) */
	uint64_t barrier_bytes;  /* trace bytes overwritten by barrier packets */
	uint64_t aux_records;
	uint64_t truncated;
	uint64_t empty_truncated;
	uint64_t collision, partial;
	uint64_t begin_failed;   /* perf_aux_output_begin found no room */
	uint64_t records_lost;   /* data-ring records dropped (PERF_RECORD_LOST) */
	uint64_t lost_records;   /* PERF_RECORD_LOST records written */
	uint64_t enables, disables;
};

struct kmodel;

struct kmodel *kmodel_new(const struct kmodel_opts *opts);
void kmodel_free(struct kmodel *m);

/** The ring as the consumer sees it (user page, data area, AUX, ioctls). */
struct cst_ring_desc kmodel_desc(struct kmodel *m);

/** The task is scheduled in / out: pmu::start (perf_aux_output_begin) and
 *  pmu::stop (tmc_update_etf_buffer + perf_aux_output_end). */
void kmodel_sched_in(struct kmodel *m);
void kmodel_sched_out(struct kmodel *m);
/** The traced program runs: the ETM emits @n bytes into the sink when on. */
void kmodel_run(struct kmodel *m, uint64_t n);
/** Make the ETM emit these bytes (real trace, e.g. from synth) instead of
 *  the test pattern; @bytes must outlive the model. */
void kmodel_set_source(struct kmodel *m, const uint8_t *bytes, uint64_t len);
/** Flags the sink adds to the next AUX record (COLLISION, PARTIAL). */
void kmodel_inject_flags(struct kmodel *m, uint64_t flags);
/** The kernel's clock (perf sample time) in ns: a nanosecond per trace byte run, one
 *  more per record written. */
uint64_t kmodel_now(const struct kmodel *m);
/** poll(): true (and cleared) when the kernel woke the reader. */
bool kmodel_poll(struct kmodel *m);
bool kmodel_enabled(const struct kmodel *m);

const struct kmodel_stats *kmodel_stats(const struct kmodel *m);
/** Every byte written into AUX so far, in order (the stream a loss-free
 *  consumer must reproduce). */
const uint8_t *kmodel_aux_stream(const struct kmodel *m, uint64_t *len);
/** The byte the ETM emits as its @seq-th byte. */
uint8_t kmodel_pattern(uint64_t seq);
/** The ETM sequence number of the byte at @pos of the AUX stream, or
 *  UINT64_MAX for barrier bytes. */
uint64_t kmodel_stream_seq(const struct kmodel *m, uint64_t pos);

#endif
