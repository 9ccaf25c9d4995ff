/* What test_follow.c feeds cstrace's own decoders and checks them against: traces
 * built by hand as bytes and as the packets they hold, code, a fake follow_io, and
 * OpenCSD's decoder and packet processor run on the same bytes. */
#ifndef CSTRACE_TESTS_DECODE_FOLLOW_SCRIPT_H
#define CSTRACE_TESTS_DECODE_FOLLOW_SCRIPT_H

#include <opencsd/etmv3/trc_pkt_types_etmv3.h>
#include <opencsd/etmv4/trc_pkt_types_etmv4.h>

#include "engine/decoder_int.h"

#define MAX_ELEMS 128
#define MAX_STEPS 96

/* The code a trace runs through: the fake io and OpenCSD's memory read it. */
struct code {
	uint64_t base;
	uint8_t bytes[64];
	uint32_t len;
};

/* A64 at 0x80000: a loop's body and its branch back, a return, a call */
struct code a64_code(void);
/* A32 at 0x8000 calling T32 at 0x8020 (2- and 4-byte instructions) */
struct code a32_code(void);

/* ------------------------------------------------------------- scripts */

/* A trace as raw bytes (for OpenCSD) and as the packets they hold, built by hand
 * (for the follower), with resets between them. */
enum step_kind { step_packet, step_reset };
struct step {
	enum step_kind kind;
	uint32_t index; /* of the packet's first byte; of the next byte for a reset */
	union {
		ocsd_etmv4_i_pkt v4;
		ocsd_etmv3_pkt v3;
	} p;
};

struct script {
	uint8_t raw[512];
	uint32_t len;
	struct step s[MAX_STEPS];
	int n;
	ocsd_isa v3_isa; /* the instruction set ETMv3 packets carry */
};

/* a byte list as the (bytes, count) arguments of v4() and v3() */
#define BYTES(...) (const uint8_t[]){__VA_ARGS__}, sizeof((const uint8_t[]){__VA_ARGS__})

void reset_step(struct script *sc);

/* ETMv4 packets; v4() returns the packet, its type set, for the caller to fill */
ocsd_etmv4_i_pkt *v4(struct script *sc, ocsd_etmv4_i_pkt_type type, const uint8_t *b, size_t n);
void v4_async(struct script *sc);
void v4_trace_info(struct script *sc);
/* address with context: AArch64 non-secure at @el; a VMID and a context ID when
 * not negative (TRCIDR2: 8-bit VMID, 32-bit context ID) */
void v4_addr_ctxt(struct script *sc, uint64_t a, unsigned el, long vmid, long ctxid);
/* a short address: A[8:2], the rest from the address before */
void v4_addr_short(struct script *sc, uint64_t a);
void v4_addr_long(struct script *sc, uint64_t a);
/* one to three atoms, oldest first: "EN" */
void v4_atoms(struct script *sc, const char *atoms);
/* an exception whose (preferred return) address follows */
void v4_exception(struct script *sc, unsigned type);
void v4_timestamp(struct script *sc, uint8_t ts);

/* ETMv3 packets, in A32 or T32 as the packets before say (v3_isa) */
ocsd_etmv3_pkt *v3(struct script *sc, ocsd_etmv3_pkt_type type, const uint8_t *b, size_t n);
void v3_async(struct script *sc);
/* I-sync (ETMCR: 4-byte context IDs) in non-secure state: @reason 1 trace on,
 * 2 after an overflow */
void v3_isync(struct script *sc, uint32_t a, bool thumb, unsigned reason, uint32_t ctxid);
/* format 1 P-header: @e E atoms, then one N atom if @n */
void v3_atoms(struct script *sc, unsigned e, bool n);
/* a branch address in its 5-byte form, which names the instruction set; with an
 * exception (@exc >= 0) in non-secure state, which may cancel the last
 * instruction */
void v3_branch(struct script *sc, uint32_t a, bool thumb, int exc, bool cancel);
void v3_context_id(struct script *sc, uint32_t id);
void v3_timestamp(struct script *sc, uint8_t ts);

/* ------------------------------------------------------------- elements */

/* Elements as a decoder delivers them, each with the index of its packet; the
 * context in force goes on every element, as the delivery puts it there. */
struct elems {
	struct cst_elem e[MAX_ELEMS];
	uint32_t index[MAX_ELEMS];
	int n;
	struct cst_pe_context ctx;
	/* the follower's io: its code, and what it declined; while the last
	 * context given names context ID @other_ctxid, @other's code instead (as
	 * perf.data reads that process's memory) */
	const struct code *code, *other;
	uint32_t other_ctxid;
	int declines, reads, resyncs;
	uint32_t decline_index, resync_index;
	char why[128];
};

/* A follower's io into @l (emptied), reading @code. */
struct follow_io fake_io(struct elems *l, const struct code *code);

void print_elem(const char *who, int i, uint32_t index, const struct cst_elem *e);

/* Every field a view can print (the thread and offset fields the delivery fills
 * in are not a decoder's). Not what OpenCSD's ETMv3 decoder leaves behind in
 * fields that do not count for an element, which no view reads and no decoder
 * can reproduce (decode/engine/follow.h, struct follow_base): the ISA of
 * elements other than ranges, and the return address of an exception that has
 * none. */
bool same_elem(const struct cst_elem *a, const struct cst_elem *b);
/* same_elem, and those two fields too: what OpenCSD's ETMv4 decoder and its
 * follower agree on, for every element. */
bool same_elem_all(const struct cst_elem *a, const struct cst_elem *b);

/* ------------------------------------------------------------- OpenCSD */

/* What a source's decoder is configured with: the follower's config and
 * OpenCSD's (from registers as a raw dump's --etmv4/--etmv3 gives them). */
struct source {
	struct cst_source_cfg src;
	union dec_ocsd_cfg ocfg;
	const char *name;
	struct follow_cfg fc;
};

bool source_init(struct source *s, enum cst_protocol protocol, const char *spec);

/* What OpenCSD's packet processor made of the bytes: the packets as they came */
struct parsed {
	struct step s[MAX_STEPS];
	int n;
	enum cst_protocol protocol;
};

/* Feed @sc's bytes, with its resets, to a tree holding @s's decoder: its full
 * decoder reading @code, elements into @elems; or (@parsed) its packet
 * processor. Returns false if OpenCSD refused. */
bool ref_run(const struct script *sc, struct source *s, const struct code *code,
	     struct elems *elems, struct parsed *parsed);

/* The fields of a packet that a follower reads are the same in @a and @b. */
bool same_packet(enum cst_protocol protocol, const struct step *a, const struct step *b);

#endif
