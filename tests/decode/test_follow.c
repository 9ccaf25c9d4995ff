/* Unit tests of cstrace's own decoders at their seam (decode/engine/follow.h): each
 * follower, fed hand-built packets through dec_follow_packet and code through a
 * fake follow_io, gives what OpenCSD 1.3.3's decoder gives for the same bytes
 * (follow_script.c); what it does not cover it declines, once; and which
 * follower covers which source. */
#include <stdio.h>
#include <string.h>

#include "follow_script.h"
#include "run/run.h"
#include "test.h"

/* OpenCSD's decoder is the reference only in the version the followers copy */
static bool reference;

/* ------------------------------------------------------------- running them */

/* @got (the follower's) must be @want (OpenCSD's, or what it is compared with),
 * element for element, each at the same packet; with @all, every field
 * (same_elem_all: ETMv4), else every field that means something (same_elem:
 * ETMv3, whose OpenCSD decoder leaves the rest as its element objects held). */
static void check_same_as(const char *name, const struct elems *want, const struct elems *got,
			  bool all)
{
	int first = -1;

	for (int i = 0; i < want->n && i < got->n && first < 0; i++)
		if (!(all ? same_elem_all : same_elem)(&want->e[i], &got->e[i]) ||
		    want->index[i] != got->index[i])
			first = i;
	if (first < 0 && want->n != got->n)
		first = want->n < got->n ? want->n : got->n;
	CHECK(first < 0);
	if (first < 0)
		return;
	fprintf(stderr, "%s: the follower's elements differ from those wanted at #%d\n", name,
		first);
	for (int i = 0; i < want->n || i < got->n; i++) {
		if (i < want->n)
			print_elem("want", i, want->index[i], &want->e[i]);
		if (i < got->n)
			print_elem("got ", i, got->index[i], &got->e[i]);
	}
}

static void check_same(const char *name, const struct elems *want, const struct elems *got)
{
	check_same_as(name, want, got, false);
}

/* OpenCSD's packet processor parses @sc's bytes into @sc's packets: the
 * follower is fed what OpenCSD would feed it. */
static void check_bytes_are_packets(const char *name, const struct script *sc, struct source *s)
{
	static struct parsed parsed;
	static struct step want[MAX_STEPS];
	int n = 0;

	for (int i = 0; i < sc->n; i++)
		if (sc->s[i].kind == step_packet)
			want[n++] = sc->s[i];
	memset(&parsed, 0, sizeof(parsed));
	parsed.protocol = s->src.protocol;
	CHECK(ref_run(sc, s, NULL, NULL, &parsed));
	CHECK_EQ_INT(parsed.n, n);
	for (int i = 0; i < n && i < parsed.n; i++)
		if (!same_packet(s->src.protocol, &want[i], &parsed.s[i])) {
			fprintf(stderr, "%s: packet %d at %u is not what its bytes hold\n", name, i,
				want[i].index);
			CHECK(!"the bytes hold the packet built");
			break;
		}
}

static struct follow_base *follower_new(const struct dec_follower *ops,
					const struct follow_cfg *fc, struct elems *l,
					const struct code *code)
{
	const struct follow_io io = fake_io(l, code);

	return ops->alloc(fc, &io);
}

/* The follower @ops (configured by @fc) on @sc's packets and resets, then the
 * end of trace, each taken: its elements in @got. It reads @code, or @other
 * while the last context names context ID @other_ctxid (struct elems). */
static void follow_processes(const struct dec_follower *ops, const struct follow_cfg *fc,
			     const struct script *sc, const struct code *code,
			     const struct code *other, uint32_t other_ctxid, struct elems *got)
{
	struct follow_base *b = follower_new(ops, fc, got, code);

	CHECK(b != NULL);
	if (!b)
		return;
	got->other = other;
	got->other_ctxid = other_ctxid;
	for (int i = 0; i < sc->n; i++) {
		const struct step *s = &sc->s[i];

		if (s->kind == step_reset)
			CHECK_EQ_INT(dec_follow_packet(b, OCSD_OP_RESET, s->index, NULL), OCSD_RESP_CONT);
		else
			CHECK_EQ_INT(dec_follow_packet(b, OCSD_OP_DATA, s->index, &s->p), OCSD_RESP_CONT);
	}
	CHECK_EQ_INT(dec_follow_packet(b, OCSD_OP_EOT, sc->len, NULL), OCSD_RESP_CONT);
	CHECK_EQ_INT(got->declines, 0);
	ops->free(b);
}

static void follow(const struct dec_follower *ops, const struct follow_cfg *fc,
		   const struct script *sc, const struct code *code, struct elems *got)
{
	follow_processes(ops, fc, sc, code, NULL, 0, got);
}

/* OpenCSD's decoder on @sc's bytes: its elements in @want. */
static void reference_decode(const char *name, const struct script *sc, struct source *s,
			     const struct code *code, struct elems *want)
{
	check_bytes_are_packets(name, sc, s);
	memset(want, 0, sizeof(*want));
	CHECK(ref_run(sc, s, code, want, NULL));
}

/* Element @i of @l: one of @type made at the packet at @index (else a failed check,
 * and an empty element to read on from). */
#define ELEM(l, i, type, index) elem_at(l, i, type, index, __LINE__)
static const struct cst_elem *elem_at(const struct elems *l, int i, enum cst_elem_type type,
				      uint32_t index, int line)
{
	static const struct cst_elem none;

	test_checks++;
	if (i < l->n && l->e[i].type == type && l->index[i] == index)
		return &l->e[i];
	test_failures++;
	fprintf(stderr, "%s:%d: element %d is not a %s at %u\n", __FILE__, line, i,
		cst_elem_type_name(type), index);
	if (i < l->n)
		print_elem("got", i, l->index[i], &l->e[i]);
	return &none;
}

/* Element @i of @l: the range [@start, @end) of @n instructions in @isa made at
 * @index, the last of class @cls, @taken (or for ETMv3, executed) or not. */
#define RANGE(l, i, index, start, end, n, isa, cls, taken) \
	range_at(l, i, index, start, end, n, isa, cls, taken, __LINE__)
static void range_at(const struct elems *l, int i, uint32_t index, uint64_t start, uint64_t end,
		     uint32_t n, enum cst_isa isa, enum cst_insn_class cls, bool taken, int line)
{
	const struct cst_elem *e = elem_at(l, i, cst_elem_instr_range, index, line);

	test_checks++;
	if (e->start == start && e->end == end && e->num_insns == n && e->isa == isa &&
	    e->last_class == cls && e->last_executed == taken)
		return;
	test_failures++;
	fprintf(stderr, "%s:%d: element %d is not [0x%llx, 0x%llx) of %u\n", __FILE__, line, i,
		(unsigned long long)start, (unsigned long long)end, n);
}

/* ------------------------------------------------------------- ETMv4 */

#define V4_REGS "trcconfigr=0xc1" /* context IDs and VMIDs traced; a Juno A53's IDs */

static void etm4_script(struct script *sc)
{
	memset(sc, 0, sizeof(*sc));
	v4_async(sc);                                         /* 0 */
	v4_trace_info(sc);                                    /* 12 */
	v4(sc, ETM4_PKT_I_TRACE_ON, BYTES(0x04));             /* 15 */
	v4_addr_ctxt(sc, 0x80000, 1, 5, 0x1234);              /* 16: EL1, VMID 5 */
	v4_atoms(sc, "EN");                                   /* 31: round the loop, out */
	v4_atoms(sc, "E");                                    /* 32: the return */
	v4_addr_short(sc, 0x80014);                           /* 33: to the call */
	v4_atoms(sc, "EE");                                   /* 35: the call, its return */
	v4_addr_short(sc, 0x80000);                           /* 36 */
	v4_exception(sc, 0xe);                                /* 38: an IRQ */
	v4_addr_short(sc, 0x80004);                           /* 40: returning there */
	v4(sc, ETM4_PKT_I_TRACE_ON, BYTES(0x04));             /* 42 */
	v4_addr_ctxt(sc, 0x90000, 1, -1, -1);                 /* 43: code it cannot read */
	v4_atoms(sc, "E");                                    /* 53 */
	v4_timestamp(sc, 0x20);                               /* 54 */
	v4_addr_long(sc, 0x80000);                            /* 56 */
	v4(sc, ETM4_PKT_I_EVENT, BYTES(0x71))->event_val = 1; /* 65 */
	v4(sc, ETM4_PKT_I_EXCEPT_RTN, BYTES(0x07));           /* 66 */
	v4_atoms(sc, "N");                                    /* 67 */
	v4(sc, ETM4_PKT_I_OVERFLOW, BYTES(0x00, 0x05));       /* 68 */
	v4_async(sc);                                         /* 70 */
	v4_trace_info(sc);                                    /* 82 */
	v4(sc, ETM4_PKT_I_TRACE_ON, BYTES(0x04));             /* 85 */
	v4_addr_ctxt(sc, 0x80000, 0, -1, 0x99);               /* 86: EL0 */
	v4_atoms(sc, "E");                                    /* 100 */
	reset_step(sc);                                       /* 101 */
	v4_async(sc);                                         /* 101 */
	v4_trace_info(sc);                                    /* 113 */
	v4_addr_ctxt(sc, 0x8000c, 1, -1, -1);                 /* 116 */
	v4_atoms(sc, "E");                                    /* 126 */
}

static void test_etm4(void)
{
	static struct script sc;
	static struct elems got, want;
	struct code code = a64_code();
	const struct cst_elem *e;
	struct source s;

	CHECK(source_init(&s, cst_proto_etmv4i, V4_REGS));
	etm4_script(&sc);
	follow(&dec_etm4_follower, &s.fc, &sc, &code, &got);
	if (reference) {
		reference_decode("ETMv4", &sc, &s, &code, &want);
		check_same_as("ETMv4", &want, &got, true);
	}

	/* what that is, spelled out */
	CHECK_EQ_INT(got.n, 25);
	/* the first packet, before sync; sync is no element but what follows */
	CHECK_EQ_INT(ELEM(&got, 0, cst_elem_no_sync, 0)->gap, cst_gap_init);
	CHECK_EQ_INT(ELEM(&got, 1, cst_elem_trace_on, 15)->gap, cst_gap_filter);
	e = ELEM(&got, 2, cst_elem_pe_context, 16);
	CHECK(e->ctx.el_valid && e->ctx.el == 1 && e->ctx.bits64 &&
	      e->ctx.security == cst_sec_nonsecure && e->isa == cst_isa_a64);
	CHECK(e->ctx.ctxid_valid && e->ctx.context_id == 0x1234 && e->ctx.vmid_valid &&
	      e->ctx.vmid == 5);
	RANGE(&got, 3, 31, 0x80000, 0x8000c, 3, cst_isa_a64, cst_insn_branch, true);
	RANGE(&got, 4, 31, 0x80000, 0x8000c, 3, cst_isa_a64, cst_insn_branch, false);
	RANGE(&got, 5, 32, 0x8000c, 0x80014, 2, cst_isa_a64, cst_insn_branch_indirect, true);
	CHECK_EQ_INT(got.e[5].last_subclass, cst_insn_sub_ret);
	RANGE(&got, 6, 35, 0x80014, 0x80018, 1, cst_isa_a64, cst_insn_branch, true);
	CHECK_EQ_INT(got.e[6].last_subclass, cst_insn_sub_link);
	RANGE(&got, 7, 35, 0x8001c, 0x80020, 1, cst_isa_a64, cst_insn_branch_indirect, true);
	/* the exception: the code up to its return address, then the exception */
	RANGE(&got, 8, 38, 0x80000, 0x80004, 1, cst_isa_a64, cst_insn_other, true);
	e = ELEM(&got, 9, cst_elem_exception, 38);
	CHECK(e->exception_number == 0xe && e->exception_ret_addr_valid &&
	      e->exception_ret_addr == 0x80004);
	CHECK_EQ_INT(ELEM(&got, 10, cst_elem_trace_on, 42)->gap, cst_gap_filter);
	/* a context without IDs shows the last ones given */
	e = ELEM(&got, 11, cst_elem_pe_context, 43);
	CHECK(e->ctx.context_id == 0x1234 && e->ctx.vmid == 5);
	e = ELEM(&got, 12, cst_elem_addr_nacc, 53);
	CHECK(e->start == 0x90000 && e->gap == cst_gap_nacc);
	CHECK_EQ_INT(ELEM(&got, 13, cst_elem_timestamp, 54)->timestamp, 0x20);
	ELEM(&got, 14, cst_elem_event, 65);
	ELEM(&got, 15, cst_elem_exception_ret, 66);
	RANGE(&got, 16, 67, 0x80000, 0x8000c, 3, cst_isa_a64, cst_insn_branch, false);
	/* an overflow: no sync until the next, then trace on, saying why */
	CHECK_EQ_INT(ELEM(&got, 17, cst_elem_no_sync, 68)->gap, cst_gap_overflow);
	CHECK_EQ_INT(ELEM(&got, 18, cst_elem_trace_on, 85)->gap, cst_gap_overflow);
	e = ELEM(&got, 19, cst_elem_pe_context, 86);
	CHECK(e->ctx.el == 0 && e->ctx.context_id == 0x99);
	RANGE(&got, 20, 100, 0x80000, 0x8000c, 3, cst_isa_a64, cst_insn_branch, true);
	/* a reset: no sync from the next packet on */
	CHECK_EQ_INT(ELEM(&got, 21, cst_elem_no_sync, 101)->gap, cst_gap_reset);
	ELEM(&got, 22, cst_elem_pe_context, 116);
	RANGE(&got, 23, 126, 0x8000c, 0x80014, 2, cst_isa_a64, cst_insn_branch_indirect, true);
	ELEM(&got, 24, cst_elem_eot, 126);
}

/* Two processes with other code at the same address, one after the other and
 * back (perf.data: the context ID names whose memory is read): each range is
 * its own process's code. The context repeated at a sync keeps what was read:
 * only a change of process reads code again. */
static void test_etm4_contexts(void)
{
	static const uint32_t b_insn[] = {
		0xd503201f, /* 80000: nop */
		0xb5ffffe0, /* 80004: cbnz x0, 80000 */
	};
	static struct script sc;
	static struct elems got;
	struct code a = a64_code(), b = {.base = 0x80000, .len = sizeof(b_insn)};
	struct source s;

	for (size_t i = 0; i < sizeof(b_insn) / 4; i++)
		cst_put_le32(b.bytes + 4 * i, b_insn[i]);
	CHECK(source_init(&s, cst_proto_etmv4i, V4_REGS));
	memset(&sc, 0, sizeof(sc));
	v4_async(&sc);                          /* 0 */
	v4_trace_info(&sc);                     /* 12 */
	v4_addr_ctxt(&sc, 0x80000, 1, -1, 0x1); /* 15: process A */
	v4_atoms(&sc, "N");                     /* 29 */
	v4_addr_ctxt(&sc, 0x80000, 1, -1, 0x2); /* 30: process B */
	v4_atoms(&sc, "N");                     /* 44 */
	v4_addr_ctxt(&sc, 0x80000, 1, -1, 0x2); /* 45: B again, as at a sync */
	v4_atoms(&sc, "N");                     /* 59 */
	v4_addr_ctxt(&sc, 0x80000, 1, -1, 0x1); /* 60: back to A */
	v4_atoms(&sc, "N");                     /* 74 */
	follow_processes(&dec_etm4_follower, &s.fc, &sc, &a, &b, 0x2, &got);
	CHECK_EQ_INT(got.n, 10);
	CHECK_EQ_INT(ELEM(&got, 1, cst_elem_pe_context, 15)->ctx.context_id, 0x1);
	RANGE(&got, 2, 29, 0x80000, 0x8000c, 3, cst_isa_a64, cst_insn_branch, false);
	CHECK_EQ_INT(ELEM(&got, 3, cst_elem_pe_context, 30)->ctx.context_id, 0x2);
	RANGE(&got, 4, 44, 0x80000, 0x80008, 2, cst_isa_a64, cst_insn_branch, false);
	ELEM(&got, 5, cst_elem_pe_context, 45);
	RANGE(&got, 6, 59, 0x80000, 0x80008, 2, cst_isa_a64, cst_insn_branch, false);
	ELEM(&got, 7, cst_elem_pe_context, 60);
	RANGE(&got, 8, 74, 0x80000, 0x8000c, 3, cst_isa_a64, cst_insn_branch, false);
	ELEM(&got, 9, cst_elem_eot, 74);
	/* code read for A, for B, for A again: not for B's repeated context */
	CHECK_EQ_INT(got.reads, 3);
}

/* ------------------------------------------------------------- ETMv3 */

#define V3_REGS "etmcr=0x1000c000" /* 4-byte context IDs, timestamps; a Cortex-A7 */

static void etm3_script(struct script *sc)
{
	memset(sc, 0, sizeof(*sc));
	v3_async(sc);                              /* 0 */
	v3_isync(sc, 0x8000, false, 1, 0x1234);    /* 6: trace on */
	v3_timestamp(sc, 5);                       /* 16 */
	v3_atoms(sc, 3, false);                    /* 18: round the loop */
	v3_atoms(sc, 2, true);                     /* 19: and out */
	v3_atoms(sc, 1, false);                    /* 20: blx to T32 */
	v3_branch(sc, 0x8020, true, -1, false);    /* 21 */
	v3_atoms(sc, 3, true);                     /* 26: round the T32 loop and out */
	v3_atoms(sc, 2, false);                    /* 27: bl, bx lr */
	v3_branch(sc, 0x8010, false, -1, false);   /* 28: back in A32 */
	v3_context_id(sc, 0x5678);                 /* 33 */
	v3(sc, ETM3_PKT_TRIGGER, BYTES(0x0c));     /* 38 */
	v3_atoms(sc, 1, false);                    /* 39: bx lr */
	v3_branch(sc, 0x8000, false, 5, false);    /* 40: an exception on the way */
	v3_atoms(sc, 1, false);                    /* 46: the nop, */
	v3_branch(sc, 0xffff0018, false, 6, true); /* 47: cancelled by an exception */
	v3_atoms(sc, 1, false);                    /* 53: code it cannot read */
	v3_async(sc);                              /* 54 */
	v3_isync(sc, 0x8020, true, 2, 0x5678);     /* 60: after an overflow */
	v3_atoms(sc, 2, false);                    /* 70 */
	reset_step(sc);                            /* 71 */
	v3_async(sc);                              /* 71 */
	v3_isync(sc, 0x8004, false, 1, 0x5678);    /* 77 */
	v3_atoms(sc, 2, true);                     /* 87 */
}

/* test_etm4_contexts for ETMv3: two processes' code at 0x8000, by I-syncs. */
static void test_etm3_contexts(void)
{
	static const uint32_t b_arm[] = {
		0x1afffffe, /* 8000: bne 8000 */
		0xe1a00000, /* 8004: mov r0, r0 */
	};
	static struct script sc;
	static struct elems got;
	struct code a = a32_code(), b = {.base = 0x8000, .len = sizeof(b_arm)};
	struct source s;

	for (size_t i = 0; i < sizeof(b_arm) / 4; i++)
		cst_put_le32(b.bytes + 4 * i, b_arm[i]);
	CHECK(source_init(&s, cst_proto_etmv3, V3_REGS));
	memset(&sc, 0, sizeof(sc));
	v3_async(&sc);
	v3_isync(&sc, 0x8000, false, 1, 0x1); /* process A */
	v3_atoms(&sc, 2, true);
	v3_isync(&sc, 0x8000, false, 1, 0x2); /* process B */
	v3_atoms(&sc, 2, true);
	v3_isync(&sc, 0x8000, false, 1, 0x2); /* B again */
	v3_atoms(&sc, 2, true);
	v3_isync(&sc, 0x8000, false, 1, 0x1); /* back to A */
	v3_atoms(&sc, 2, true);
	follow_processes(&dec_etm3_follower, &s.fc, &sc, &a, &b, 0x2, &got);
	CHECK_EQ_INT(got.n, 22);
	/* each I-sync: trace on, the context, then three instructions */
	CHECK_EQ_INT(ELEM(&got, 2, cst_elem_pe_context, 6)->ctx.context_id, 0x1);
	RANGE(&got, 3, 16, 0x8000, 0x8004, 1, cst_isa_a32, cst_insn_other, true);
	RANGE(&got, 5, 16, 0x8008, 0x800c, 1, cst_isa_a32, cst_insn_branch, false);
	CHECK_EQ_INT(ELEM(&got, 7, cst_elem_pe_context, 17)->ctx.context_id, 0x2);
	RANGE(&got, 8, 27, 0x8000, 0x8004, 1, cst_isa_a32, cst_insn_branch, true);
	RANGE(&got, 10, 27, 0x8000, 0x8004, 1, cst_isa_a32, cst_insn_branch, false);
	ELEM(&got, 12, cst_elem_pe_context, 28);
	RANGE(&got, 13, 38, 0x8000, 0x8004, 1, cst_isa_a32, cst_insn_branch, true);
	CHECK_EQ_INT(ELEM(&got, 17, cst_elem_pe_context, 39)->ctx.context_id, 0x1);
	RANGE(&got, 18, 49, 0x8000, 0x8004, 1, cst_isa_a32, cst_insn_other, true);
	RANGE(&got, 20, 49, 0x8008, 0x800c, 1, cst_isa_a32, cst_insn_branch, false);
	ELEM(&got, 21, cst_elem_eot, 49);
	CHECK_EQ_INT(got.reads, 3);
}

static void etm3_spelled_out(const struct elems *got)
{
	const struct cst_elem *e;
	const enum cst_isa a32 = cst_isa_a32, t32 = cst_isa_t32;
	const enum cst_insn_class other = cst_insn_other, br = cst_insn_branch,
				  ind = cst_insn_branch_indirect;

	CHECK_EQ_INT(got->n, 34);
	CHECK_EQ_INT(ELEM(got, 0, cst_elem_no_sync, 0)->gap, cst_gap_init);
	CHECK_EQ_INT(ELEM(got, 1, cst_elem_trace_on, 6)->gap, cst_gap_filter);
	e = ELEM(got, 2, cst_elem_pe_context, 6);
	CHECK(!e->ctx.el_valid && e->ctx.security == cst_sec_nonsecure && !e->ctx.bits64 &&
	      e->ctx.ctxid_valid && e->ctx.context_id == 0x1234 && e->isa == a32);
	CHECK_EQ_INT(ELEM(got, 3, cst_elem_timestamp, 16)->timestamp, 5);
	/* a range per instruction (an atom each): E, E, E taken; E, E, N not taken */
	RANGE(got, 4, 18, 0x8000, 0x8004, 1, a32, other, true);
	RANGE(got, 5, 18, 0x8004, 0x8008, 1, a32, other, true);
	RANGE(got, 6, 18, 0x8008, 0x800c, 1, a32, br, true);
	RANGE(got, 7, 19, 0x8000, 0x8004, 1, a32, other, true);
	RANGE(got, 9, 19, 0x8008, 0x800c, 1, a32, br, false);
	RANGE(got, 10, 20, 0x800c, 0x8010, 1, a32, br, true); /* blx: to T32 */
	RANGE(got, 11, 26, 0x8020, 0x8022, 1, t32, other, true);
	RANGE(got, 12, 26, 0x8022, 0x8024, 1, t32, br, true);
	RANGE(got, 14, 26, 0x8022, 0x8024, 1, t32, br, false);
	RANGE(got, 15, 27, 0x8024, 0x8028, 1, t32, br, true); /* a 4-byte bl */
	RANGE(got, 16, 27, 0x802c, 0x802e, 1, t32, ind, true);
	CHECK_EQ_INT(ELEM(got, 17, cst_elem_pe_context, 33)->ctx.context_id, 0x5678);
	ELEM(got, 18, cst_elem_event, 38);
	/* a P-header's only range waits for the next packet: made at 39, given at 40 */
	RANGE(got, 19, 39, 0x8010, 0x8014, 1, a32, ind, true);
	CHECK_EQ_INT(ELEM(got, 20, cst_elem_exception, 40)->exception_number, 5);
	/* the nop at 46 is taken back by the cancelling exception */
	CHECK_EQ_INT(ELEM(got, 21, cst_elem_exception, 47)->exception_number, 6);
	e = ELEM(got, 22, cst_elem_addr_nacc, 53);
	CHECK(e->start == 0xffff0018 && e->gap == cst_gap_nacc);
	CHECK_EQ_INT(ELEM(got, 23, cst_elem_trace_on, 60)->gap, cst_gap_overflow);
	ELEM(got, 24, cst_elem_pe_context, 60);
	RANGE(got, 25, 70, 0x8020, 0x8022, 1, t32, other, true);
	RANGE(got, 26, 70, 0x8022, 0x8024, 1, t32, br, true);
	CHECK_EQ_INT(ELEM(got, 27, cst_elem_no_sync, 71)->gap, cst_gap_reset);
	CHECK_EQ_INT(ELEM(got, 28, cst_elem_trace_on, 77)->gap, cst_gap_filter);
	ELEM(got, 29, cst_elem_pe_context, 77);
	RANGE(got, 32, 87, 0x8000, 0x8004, 1, a32, other, false); /* N: condition failed */
	ELEM(got, 33, cst_elem_eot, 87);
}

/* Collects what dec_merge gives, the packet's index in the offset. */
static int merged(void *ctx, const struct cst_elem *e)
{
	struct elems *l = ctx;

	if (l->n < MAX_ELEMS) {
		l->e[l->n] = *e;
		l->index[l->n++] = (uint32_t)e->offset;
	}
	return 0;
}

/* @in joined into runs as the symbolizing views join them (run/merge.h). */
static void merge(const struct elems *in, struct elems *out)
{
	struct dec_merge m = {.elem_fn = merged, .ctx = out};

	memset(out, 0, sizeof(*out));
	for (int i = 0; i < in->n; i++) {
		struct cst_elem e = in->e[i];

		e.offset = in->index[i];
		CHECK_EQ_INT(dec_merge_elem(&m, &e), 0);
	}
	CHECK_EQ_INT(dec_merge_end(&m), 0);
}

static void test_etm3(void)
{
	static struct script sc;
	static struct elems got, want, runs, a, b;
	struct code code = a32_code();
	struct follow_cfg fc;
	struct source s;

	CHECK(source_init(&s, cst_proto_etmv3, V3_REGS));
	etm3_script(&sc);
	follow(&dec_etm3_follower, &s.fc, &sc, &code, &got);
	if (reference) {
		reference_decode("ETMv3", &sc, &s, &code, &want);
		check_same("ETMv3", &want, &got);
	}
	etm3_spelled_out(&got);

	/* Joining ranges into runs itself (follow_cfg.runs), it gives fewer elements,
	 * and joined again as the views join them, the same as its ranges one by one
	 * (and OpenCSD's). */
	fc = s.fc;
	fc.runs = true;
	follow(&dec_etm3_follower, &fc, &sc, &code, &runs);
	CHECK(runs.n < got.n);
	merge(&got, &a);
	merge(&runs, &b);
	check_same("ETMv3 runs", &a, &b);

	/* In time order, where OpenCSD gives the exception after a cancel out with the
	 * next packet, it declines at the cancel, after OpenCSD's elements until then. */
	fc = s.fc;
	fc.timed = true;
	{
		struct follow_base *f = follower_new(&dec_etm3_follower, &fc, &runs, &code);
		int i = 0;

		CHECK(f != NULL);
		for (; f && i < sc.n && sc.s[i].index < 47; i++)
			CHECK_EQ_INT(dec_follow_packet(f, OCSD_OP_DATA, sc.s[i].index, &sc.s[i].p),
				     OCSD_RESP_CONT);
		CHECK_EQ_INT(dec_follow_packet(f, OCSD_OP_DATA, sc.s[i].index, &sc.s[i].p),
			     OCSD_RESP_FATAL_SYS_ERR);
		CHECK(runs.declines == 1 && runs.decline_index == 47 &&
		      strstr(runs.why, "cancelling exception, in time order"));
		if (reference) {
			want.n = runs.n;
			check_same("ETMv3 in time order", &want, &runs);
		}
		if (f)
			f->ops->free(f);
	}
}

/* ------------------------------------------------------------- declining */

/* The follower @ops on @sc's packets declines the one at @index, saying @why:
 * once, with a fatal response; then it refuses every operation and says
 * nothing more. */
static void check_decline(const char *name, const struct dec_follower *ops,
			  const struct follow_cfg *fc, const struct script *sc,
			  const struct code *code, uint32_t index, const char *why)
{
	static struct elems l;
	struct follow_base *b = follower_new(ops, fc, &l, code);
	int i = 0, n;

	CHECK(b != NULL);
	if (!b)
		return;
	for (; i < sc->n && sc->s[i].index < index; i++)
		CHECK_EQ_INT(dec_follow_packet(b, OCSD_OP_DATA, sc->s[i].index, &sc->s[i].p),
			     OCSD_RESP_CONT);
	CHECK_EQ_INT(l.declines, 0);
	CHECK_EQ_INT(dec_follow_packet(b, OCSD_OP_DATA, sc->s[i].index, &sc->s[i].p),
		     OCSD_RESP_FATAL_SYS_ERR);
	CHECK_EQ_INT(l.declines, 1);
	CHECK_EQ_INT(l.decline_index, index);
	if (!strstr(l.why, why))
		fprintf(stderr, "%s: declined saying \"%s\", not \"%s\"\n", name, l.why, why);
	CHECK(strstr(l.why, why) != NULL);
	n = l.n;
	for (i++; i < sc->n; i++)
		CHECK_EQ_INT(dec_follow_packet(b, OCSD_OP_DATA, sc->s[i].index, &sc->s[i].p),
			     OCSD_RESP_FATAL_SYS_ERR);
	CHECK_EQ_INT(dec_follow_packet(b, OCSD_OP_RESET, sc->len, NULL), OCSD_RESP_FATAL_SYS_ERR);
	CHECK_EQ_INT(dec_follow_packet(b, OCSD_OP_EOT, sc->len, NULL), OCSD_RESP_FATAL_SYS_ERR);
	CHECK_EQ_INT(l.n, n);
	CHECK_EQ_INT(l.declines, 1);
	ops->free(b);
}

static void test_declines(void)
{
	static struct script sc;
	struct code a64 = a64_code(), a32 = a32_code();
	ocsd_etmv4_i_pkt *p;
	char why[64];
	struct source s;

	/* ETMv4: a Q packet (Q elements are not covered) */
	CHECK(source_init(&s, cst_proto_etmv4i, V4_REGS));
	memset(&sc, 0, sizeof(sc));
	v4_async(&sc);
	v4_trace_info(&sc);
	v4_addr_ctxt(&sc, 0x80000, 1, -1, -1);
	v4_atoms(&sc, "E");
	v4(&sc, ETM4_PKT_I_Q, BYTES(0xa0));
	v4_atoms(&sc, "E");
	check_decline("ETMv4 Q", &dec_etm4_follower, &s.fc, &sc, &a64, 26, "a packet of type 0xa0");

	/* ETMv4: A32 code (a context in AArch32), at the atom that walks it */
	memset(&sc, 0, sizeof(sc));
	v4_async(&sc);
	v4_trace_info(&sc);
	p = v4(&sc, ETM4_PKT_I_ADDR_CTXT_L_32IS0, BYTES(0x82, 0, 0x40, 0, 0, 0x21));
	p->v_addr.val = 0x8000;
	p->context.updated = 1;
	p->context.NS = 1;
	p->context.EL = 1;
	v4_atoms(&sc, "E");
	v4_atoms(&sc, "E");
	check_decline("ETMv4 A32", &dec_etm4_follower, &s.fc, &sc, &a32, 21,
		      "code that is not A64");

	/* ETMv3: a cycle count packet (cycle-accurate trace is not covered) */
	CHECK(source_init(&s, cst_proto_etmv3, V3_REGS));
	memset(&sc, 0, sizeof(sc));
	v3_async(&sc);
	v3_isync(&sc, 0x8000, false, 1, 0x1234);
	v3_atoms(&sc, 2, false);
	v3(&sc, ETM3_PKT_CYCLE_COUNT, BYTES(0x04, 0x01));
	v3_atoms(&sc, 1, false);
	snprintf(why, sizeof(why), "a packet of type %d", (int)ETM3_PKT_CYCLE_COUNT);
	check_decline("ETMv3 cycle count", &dec_etm3_follower, &s.fc, &sc, &a32, 17, why);

	/* ETMv3: two cancelling exceptions in a row, where OpenCSD 1.3.3 would take
	 * back an element it did not hold */
	memset(&sc, 0, sizeof(sc));
	v3_async(&sc);
	v3_isync(&sc, 0x8000, false, 1, 0x1234);
	v3_atoms(&sc, 1, false);
	v3_branch(&sc, 0xffff0018, false, 6, true);
	v3_branch(&sc, 0xffff0018, false, 6, true);
	v3_atoms(&sc, 1, false);
	check_decline("ETMv3 two cancels", &dec_etm3_follower, &s.fc, &sc, &a32, 23,
		      "a cancelling exception right after another");
}

/* ------------------------------------------------------------- recovering */

/* Recovering (past trace OpenCSD's decoder crashed on), what the follower would
 * decline at @index is a gap: said once through io.resync, the packet refused
 * no more than that; then a no-sync element saying resync, and after the next
 * sync the trace decodes as from a fresh start: its elements are those of the
 * packets after @index decoded alone (@rest), offsets and all. */
static void check_recover(const char *name, const struct dec_follower *ops,
			  const struct follow_cfg *fc, const struct script *sc,
			  const struct script *rest, const struct code *code, uint32_t index)
{
	static struct elems l, alone;
	struct follow_cfg rfc = *fc;
	struct follow_base *b, *a;
	int i, before;

	rfc.recover = true;
	b = follower_new(ops, &rfc, &l, code);
	a = follower_new(ops, fc, &alone, code);
	CHECK(b && a);
	if (!b || !a)
		return;
	for (i = 0; i < sc->n && sc->s[i].index < index; i++)
		dec_follow_packet(b, OCSD_OP_DATA, sc->s[i].index, &sc->s[i].p);
	before = l.n;
	CHECK_EQ_INT(dec_follow_packet(b, OCSD_OP_DATA, sc->s[i].index, &sc->s[i].p),
		     OCSD_RESP_CONT);
	CHECK_EQ_INT(l.declines, 0);
	CHECK_EQ_INT(l.resyncs, 1);
	CHECK_EQ_INT(l.resync_index, index);
	for (i++; i < sc->n; i++)
		CHECK_EQ_INT(dec_follow_packet(b, OCSD_OP_DATA, sc->s[i].index, &sc->s[i].p),
			     OCSD_RESP_CONT);
	CHECK_EQ_INT(dec_follow_packet(b, OCSD_OP_EOT, sc->len, NULL), OCSD_RESP_CONT);
	for (i = 0; i < rest->n; i++)
		dec_follow_packet(a, OCSD_OP_DATA, rest->s[i].index, &rest->s[i].p);
	dec_follow_packet(a, OCSD_OP_EOT, rest->len, NULL);
	/* after the gap: a no-sync saying resync, then what the rest alone gives
	 * but its own first no-sync (init) */
	CHECK(l.n > before && l.e[before].type == cst_elem_no_sync &&
	      l.e[before].gap == cst_gap_resync);
	CHECK_EQ_INT(l.n - before - 1, alone.n - 1);
	for (int k = 1; k < alone.n && before + k < l.n; k++) {
		bool same = l.e[before + k].type == alone.e[k].type &&
			    l.e[before + k].start == alone.e[k].start &&
			    l.e[before + k].end == alone.e[k].end &&
			    l.e[before + k].num_insns == alone.e[k].num_insns &&
			    l.index[before + k] == alone.index[k];

		if (!same)
			fprintf(stderr, "%s: element %d after the gap differs\n", name, k);
		CHECK(same);
	}
	CHECK_EQ_INT(l.resyncs, 1);
	ops->free(b);
	ops->free(a);
}

static void test_recover(void)
{
	static struct script sc, rest;
	struct code a64 = a64_code(), a32 = a32_code();
	struct source s;

	/* ETMv4: a Q packet, then sync again and more trace */
	CHECK(source_init(&s, cst_proto_etmv4i, V4_REGS));
	memset(&sc, 0, sizeof(sc));
	memset(&rest, 0, sizeof(rest));
	v4_async(&sc);
	v4_trace_info(&sc);
	v4_addr_ctxt(&sc, 0x80000, 1, -1, -1);
	v4_atoms(&sc, "E");
	v4(&sc, ETM4_PKT_I_Q, BYTES(0xa0));
	v4_atoms(&sc, "E"); /* no sync yet: nothing for this */
	rest.len = sc.len;
	v4_async(&rest);
	v4_trace_info(&rest);
	v4_addr_ctxt(&rest, 0x80000, 1, -1, -1);
	v4_atoms(&rest, "EEN");
	for (int i = 0; i < rest.n; i++)
		sc.s[sc.n++] = rest.s[i];
	sc.len = rest.len;
	check_recover("ETMv4 Q", &dec_etm4_follower, &s.fc, &sc, &rest, &a64, 26);

	/* ETMv3: a cycle count packet, then an A-sync and I-sync again */
	CHECK(source_init(&s, cst_proto_etmv3, V3_REGS));
	memset(&sc, 0, sizeof(sc));
	memset(&rest, 0, sizeof(rest));
	v3_async(&sc);
	v3_isync(&sc, 0x8000, false, 1, 0x1234);
	v3_atoms(&sc, 2, false);
	v3(&sc, ETM3_PKT_CYCLE_COUNT, BYTES(0x04, 0x01));
	rest.len = sc.len;
	v3_async(&rest);
	v3_isync(&rest, 0x8000, false, 1, 0x1234);
	v3_atoms(&rest, 3, false);
	for (int i = 0; i < rest.n; i++)
		sc.s[sc.n++] = rest.s[i];
	sc.len = rest.len;
	check_recover("ETMv3 cycle count", &dec_etm3_follower, &s.fc, &sc, &rest, &a32, 17);
}

/* ------------------------------------------------------------- covers */

/* The follower dec_follower_for finds under @engine for a source of @protocol
 * with the registers @spec sets. */
static const struct dec_follower *follower_for(const struct dec_engine *engine,
						enum cst_protocol protocol, const char *spec)
{
	struct source s;

	if (!source_init(&s, protocol, spec)) {
		CHECK(!"a source from the registers given");
		return NULL;
	}
	return dec_follower_for(engine, &s.fc);
}

static void test_covers(void)
{
	const struct dec_engine own = {.own = true}, opencsd = {.own = false};
	struct source s;

	/* ETMv4 of ARMv8 cores, without cycle counts (TRCCONFIGR bit 4), return stack
	 * (bit 12) or speculation (TRCIDR8 not 0) */
	CHECK(follower_for(&own, cst_proto_etmv4i, V4_REGS) == &dec_etm4_follower);
	CHECK(follower_for(&own, cst_proto_etmv4i, "trcconfigr=0xc1,core=Cortex-A57") ==
	      &dec_etm4_follower);
	CHECK(follower_for(&own, cst_proto_etmv4i, "trcconfigr=0xd1") == NULL);
	CHECK(follower_for(&own, cst_proto_etmv4i, "trcconfigr=0x10c1") == NULL);
	CHECK(follower_for(&own, cst_proto_etmv4i, "trcconfigr=0xc1,trcidr8=1") == NULL);
	/* ETMv3 of ARMv7-A and -R cores, not cycle-accurate (ETMCR bit 12); not of
	 * M-profile cores, not PTM */
	CHECK(follower_for(&own, cst_proto_etmv3, V3_REGS) == &dec_etm3_follower);
	CHECK(follower_for(&own, cst_proto_etmv3, "etmcr=0x1000c000,core=Cortex-R5") ==
	      &dec_etm3_follower);
	CHECK(follower_for(&own, cst_proto_etmv3, "etmcr=0x1000d000") == NULL);
	CHECK(follower_for(&own, cst_proto_etmv3, "etmcr=0x1000c000,core=Cortex-M4") == NULL);
	CHECK(follower_for(&own, cst_proto_ptm, "etmcr=0x1000c000") == NULL);
	/* an engine of OpenCSD's decoders only, or none */
	CHECK(follower_for(&opencsd, cst_proto_etmv4i, V4_REGS) == NULL);
	CHECK(follower_for(&opencsd, cst_proto_etmv3, V3_REGS) == NULL);
	CHECK(source_init(&s, cst_proto_etmv4i, V4_REGS));
	CHECK(dec_follower_for(NULL, &s.fc) == NULL);
	/* each follower covers its own protocol only */
	CHECK(dec_etm4_follower.covers(&s.fc) && !dec_etm3_follower.covers(&s.fc));
	CHECK(source_init(&s, cst_proto_etmv3, V3_REGS));
	CHECK(dec_etm3_follower.covers(&s.fc) && !dec_etm4_follower.covers(&s.fc));
}

int main(void)
{
	reference = dec_ocsd_version() == DEC_OCSD_PINNED;
	if (!reference)
		printf("note: OpenCSD 0x%06x is not the 0x%06x the followers copy: their "
		       "elements are checked as spelled out only\n",
		       dec_ocsd_version(), DEC_OCSD_PINNED);
	test_etm4();
	test_etm4_contexts();
	test_etm3();
	test_etm3_contexts();
	test_declines();
	test_recover();
	test_covers();
	return test_done();
}
