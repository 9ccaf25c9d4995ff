/* Internal to symbolize/: perf script's output, its sample model (pscript.c:
 * what Linux perf 6.1's cs-etm.c makes of each element) and its columns
 * (pscript_line.c: builtin-script.c's). */
#ifndef CSTRACE_SYMBOLIZE_PSCRIPT_INT_H
#define CSTRACE_SYMBOLIZE_PSCRIPT_INT_H

#include "cstrace/symbolize.h"

#include <string.h>

#include "addr_slot.h"
#include "internal.h"

/* perf's sample flags (PERF_IP_FLAG_*, tools/perf/util/event.h) */
#define PSF_BRANCH (1u << 0)
#define PSF_CALL (1u << 1)
#define PSF_RETURN (1u << 2)
#define PSF_CONDITIONAL (1u << 3)
#define PSF_SYSCALLRET (1u << 4)
#define PSF_ASYNC (1u << 5)
#define PSF_INTERRUPT (1u << 6)
#define PSF_TX_ABORT (1u << 7)
#define PSF_TRACE_BEGIN (1u << 8)
#define PSF_TRACE_END (1u << 9)
#define PSF_IN_TX (1u << 10)
#define PSF_VMENTRY (1u << 11)
#define PSF_VMEXIT (1u << 12)
#define PSF_INTR_DISABLE (1u << 13)
#define PSF_INTR_TOGGLE (1u << 14)
#define PSF_BRANCH_MISS (1u << 15)

struct psc_loc_memo;

/* One synthesized sample, as perf_sample holds what perf script prints. */
struct psample {
	bool branch;               /* the branches event (else instructions) */
	int32_t pid, tid, cpu;
	uint64_t time;
	uint64_t period;
	uint32_t flags;
	uint64_t ip, addr;
	/* the symbolizer's spaces of ip and addr; PSC_NO_SPACE: no map */
	int32_t ip_space, addr_space;
	const struct cst_sym_loc *ip_loc, *addr_loc;
	/* the memo's text for ip and addr, where only the text is printed and
	 * the memo held it: then the location was not looked up (NULL) */
	const struct psc_loc_memo *ip_text, *addr_text;
	uint8_t insn[4];
	uint8_t insn_len;
};

/* "ip sym+off (dso)" as last formatted at one address of one space: a trace
 * names the same few thousand branches again and again, and looking up the
 * names and formatting them were most of a line's cost. The text stands while
 * no space changes (the symbolizer's spaces epoch): an address's location is
 * found from the space's mappings and binaries alone. Of an entry's four
 * cache lines, a typical hit touches two. */
#define PSC_NO_SPACE INT32_MIN /* a sample's address in no map: not memoized */
#define PSC_LOC_MEMO_BITS 13
#define PSC_LOC_MEMO (1u << PSC_LOC_MEMO_BITS)
struct psc_loc_memo {
	uint64_t addr;
	int32_t space;
	uint32_t epoch;            /* 0: empty */
	uint8_t len;
	char b[239];
};

/* What a range's instruction samples are made of, but where the period ends in
 * it: a view on another thread cannot know that, and hands this over. */
struct sym_psc_range {
	uint64_t start, time;
	int32_t space;             /* the symbolizer's space of its code */
	int32_t pid, tid, cpu;
	uint32_t flags;            /* the previous packet's, as the samples print them */
	uint32_t num_insns;
	enum cst_isa isa;
};

struct cst_pscript {
	struct cst_pscript_opts o;
	struct cst_pscript_file file;
	struct cst_symbolizer *sym;
	struct cst_sym_filter *filter;
	cst_script_write_fn write;
	void *write_ctx;
	bool failed;
	bool mute;                 /* learning what came before: nothing is printed */
	bool perf_clock;           /* times from TIME_CONV (else perf 6.1's AUX time) */
	int name_width;            /* perf's evlist__max_name_len */
	char branch_name[32], insn_name[32];
	char comm[40];             /* the thread's name, as the line prints it */
	struct cst_line line;
	struct psc_loc_memo *memo; /* PSC_LOC_MEMO of them, by address */
	uint32_t memo_epoch;       /* the latest spaces epoch it met */
	/* a sample's locations are looked up only where the memo does not hold
	 * their text: only the text is printed (no source line, no filter by name) */
	bool lazy_locs;
	/* a view on another thread: each range's instruction samples go here
	 * instead (pscript_view.c), NULL: printed */
	void (*insn_sink)(void *ctx, const struct sym_psc_range *at);
	void *insn_sink_ctx;
	/* per trace ID: perf's traceid queue (pscript.c) */
	struct pqueue *q[128];
};

/* pscript.c: what a view on a worker hands over (pscript_view.c): whether trace
 * ID @id's packet queue is known (a range or a discontinuity seen since the
 * queues were cleared), the queue and the ID's latest timestamp as bytes
 * (PSC_STATE of them), and taking them on. */
#define PSC_STATE 256
/* Whether samples take their time from the trace's timestamps (through
 * TIME_CONV, or a snapshot's ticks), else from perf 6.1's latest AUX record. */
bool sym_psc_trace_times(const struct cst_pscript *p);
bool sym_psc_knows(const struct cst_pscript *p, uint8_t id);
size_t sym_psc_state(struct cst_pscript *p, uint8_t id, void *buf, size_t size);
int sym_psc_adopt(struct cst_pscript *p, const void *buf, size_t len);
void sym_psc_clear(struct cst_pscript *p);
/* The instruction samples of a range another thread symbolized, counted into
 * trace ID @id's queue (whose queue the view's state gave), located by look-up;
 * and how many instructions the queue may still count before one falls
 * (UINT64_MAX: none ever will, 0: the next one). */
void sym_psc_insn_samples(struct cst_pscript *p, uint8_t id, const struct sym_psc_range *at);
uint64_t sym_psc_insns_to_sample(const struct cst_pscript *p, uint8_t id);
/* Count @n instructions into @id's queue, where no sample falls. */
void sym_psc_count_insns(struct cst_pscript *p, uint8_t id, uint64_t n);

/* pscript_line.c: one sample as perf script prints it. */
void sym_psc_print(struct cst_pscript *p, const struct psample *s);
/* The memo's entry for @addr of space @space, if it holds the text as it
 * prints now (else NULL). An epoch that wrapped round empties the memo: an old
 * entry could match. */
static inline const struct psc_loc_memo *sym_psc_memo(struct cst_pscript *p, uint64_t addr,
						      int32_t space)
{
	const struct psc_loc_memo *m = &p->memo[sym_addr_slot(addr, PSC_LOC_MEMO_BITS)];
	uint32_t epoch = p->sym->spaces_epoch;

	if (epoch != p->memo_epoch) {
		if (epoch < p->memo_epoch)
			memset(p->memo, 0, PSC_LOC_MEMO * sizeof(*p->memo));
		p->memo_epoch = epoch;
	}
	return m->epoch == epoch && m->addr == addr && m->space == space ? m : NULL;
}
/* perf's auxtrace error line for lost trace (--itrace=e). */
void sym_psc_print_error(struct cst_pscript *p, const struct cst_elem *e, uint64_t time,
		     const char *msg);

#endif
