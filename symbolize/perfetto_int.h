/* The timeline view's private parts, shared by perfetto.c (the events as the
 * calls come) and perfetto_end.c (the size limit's spool and the file's end). */
#ifndef CSTRACE_SYMBOLIZE_PERFETTO_INT_H
#define CSTRACE_SYMBOLIZE_PERFETTO_INT_H

#include "cstrace/symbolize.h"

#include <stdio.h>
#include <string.h>

#define NIDS 128

struct pthread {
	uint64_t *start;           /* ns at which each stack level was entered */
	uint64_t *start_icount;    /* and the trace ID's instructions then */
	size_t cap, icap;
	int32_t pid, tid;
	bool used;
	/* ,"pid":P,"tid":T,"ts": as last formatted, and for which pid and tid */
	int32_t ids_pid, ids_tid;
	uint8_t ids_len;
	char ids[48];
};

struct clock {
	uint64_t time, icount;     /* the latest timestamp and the icount it came at */
	uint64_t last;             /* latest ns given out */
	bool seen;
};

/* The parts of a slice that only depend on its frame (name, category and args),
 * as they were formatted last time, by entry address: a loop calls the same
 * few functions a million times, and escaping and formatting those was most of
 * the cost of a slice. */
#define MEMO_BITS 10
#define MEMO (1u << MEMO_BITS)
#define MEMO_BYTES 240
struct frame_memo {
	const struct cst_sym_func *func;
	const char *dso;
	const char *how;           /* cst_call_frame_how_name: the category */
	uint64_t entry;
	bool valid;
	uint8_t name_len, args_len; /* "name","cat":"..." and ,"args":{...,"entry":"0x..." */
	char b[MEMO_BYTES];
};

/* Slices are most of the file (a million calls make a million slices): each is
 * formatted straight into a buffer of OUT_SIZE, written when it fills. A slice
 * takes at most SLICE_MAX bytes: names are cut at NAME_MAX, the other fields are
 * bounded. */
#define OUT_SIZE (256u << 10)
#define NAME_MAX_BYTES 768
#define SLICE_MAX 4096

struct cst_perfetto {
	FILE *f;
	struct cst_symbolizer *sym;
	struct pthread *threads;
	size_t tcap;
	struct clock clocks[NIDS];
	bool any_time;
	bool perf_clock;           /* times are perf's ns (cst_perfetto_opts) */
	bool first;                /* no event written yet */
	bool io_error;
	struct cst_line line;      /* a frame's name and args, when not memoized */
	struct frame_memo *memo;   /* MEMO of them */
	char *out;                 /* OUT_SIZE bytes of events not yet written */
	size_t out_n;
	/* the limits, and with max_bytes the events waiting: each as a class byte
	 * (its slice's log2 instructions + 1; KEEP for the others), a 4-byte
	 * length and the event without its separator */
	uint64_t min_insns, max_bytes;
	uint32_t max_depth;
	FILE *spool;
	uint64_t class_bytes[66], class_n[66];
	struct cst_perfetto_stats st;
	/* the element of the last loss place (elements are delivered in a
	 * buffer that is used again, so it is known by what it is): the gaps it
	 * makes are loss */
	struct {
		uint64_t offset;
		uint32_t fragment;
		enum cst_elem_type type;
		enum cst_gap_reason gap;
		uint8_t trace_id;
		bool set;
	} lost;
};

#define KEEP 65 /* a class no size limit leaves out (instants) */

#define PUT_LIT(p, s) (memcpy((p), (s), sizeof(s) - 1), (p) + sizeof(s) - 1)

/* Write the events formatted so far (to the spool while one is waiting). */
void sym_pf_flush_out(struct cst_perfetto *pw);
/* The log2 class of a slice that spans @n instructions: 0 for none. */
unsigned sym_pf_insn_class(uint64_t n);
/* A JSON string of at most @max bytes of @s. */
void sym_pf_json(struct cst_line *l, const char *s, size_t max);

/* Where the next event (at most SLICE_MAX bytes) goes: after the separator, or
 * in the spool after the class byte and room for its length. */
static inline char *pf_event_at(struct cst_perfetto *pw, unsigned cls)
{
	char *p;

	if (pw->out_n + SLICE_MAX > OUT_SIZE)
		sym_pf_flush_out(pw);
	p = pw->out + pw->out_n;
	if (pw->spool) {
		*p = (char)cls;
		return p + 5;
	}
	if (!pw->first)
		*p++ = ',';
	*p++ = '\n';
	pw->first = false;
	return p;
}

/* The event formatted up to @end is complete. */
static inline void pf_event_end(struct cst_perfetto *pw, char *end)
{
	if (pw->spool) {
		char *rec = pw->out + pw->out_n;
		uint32_t len = (uint32_t)(end - rec - 5);
		unsigned cls = (unsigned char)rec[0];

		memcpy(rec + 1, &len, 4);
		pw->class_bytes[cls] += len + 2; /* its separator in the file */
		pw->class_n[cls]++;
	}
	pw->out_n = (size_t)(end - pw->out);
}

#endif
