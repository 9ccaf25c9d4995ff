/* Unit tests of the synth pieces: the A64/A32/T32 branch classes against capstone's
 * decoding, the frame formatter against a spec deformatter, code memory, bad
 * arguments, thread IDs from QEMU's log. */
#include <capstone/capstone.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cstrace/synth.h"
#include "synth_int.h"
#include "test.h"

/* A small deterministic generator: the tests must not depend on the seed of the day. */
static uint32_t rnd_state = 0x12345678;
static uint32_t rnd(void)
{
	rnd_state ^= rnd_state << 13;
	rnd_state ^= rnd_state >> 17;
	rnd_state ^= rnd_state << 5;
	return rnd_state;
}

static void test_args(void)
{
	struct cst_synth_opts o = {.sz = sizeof(o)};
	char *argv[] = {"prog", NULL};
	CHECK_EQ_INT(cst_synth_run(NULL, argv, &o, NULL), -cste_invalid);
	CHECK_EQ_INT(cst_synth_run("out", NULL, &o, NULL), -cste_invalid);
	/* options by the one rule: a size below the size field, or a newer caller's
	 * struct asking for something this library lacks, is refused */
	o.sz = sizeof(size_t) / 2; /* smaller than the size field on every build */
	CHECK_EQ_INT(cst_synth_run("out", argv, &o, NULL), -cste_invalid);
	{
		struct {
			struct cst_synth_opts known;
			uint64_t more;
		} newer = {.known = {.sz = sizeof(newer)}, .more = 1};

		CHECK_EQ_INT(cst_synth_run("out", argv, &newer.known, NULL), -cste_invalid);
	}
	CHECK_EQ_INT(cst_synth_core_check(cst_synth_aarch64, "cortex-a53"), 0);
	CHECK_EQ_INT(cst_synth_core_check(cst_synth_aarch64, "Cortex-A57"), 0);
	CHECK_EQ_INT(cst_synth_core_check(cst_synth_aarch64, "cortex-a7"), -cste_not_found);
	CHECK_EQ_INT(cst_synth_core_check(cst_synth_arm, "cortex-a7"), 0);
	CHECK_EQ_INT(cst_synth_core_check(cst_synth_arm, "cortex-a9"), -cste_not_found);
	CHECK_EQ_INT(synth_codemap_put(NULL, 0, NULL, 0), -cste_invalid);
}

static void test_codemap(void)
{
	struct synth_codemap *cm = synth_codemap_alloc();
	uint8_t in[10] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, out[10];
	CHECK(cm != NULL);
	CHECK(!synth_codemap_get(cm, 0x1000, out, 4));
	/* across a page boundary, then a byte never written */
	CHECK_EQ_INT(synth_codemap_put(cm, 0x1ffb, in, 10), 0);
	CHECK(synth_codemap_get(cm, 0x1ffb, out, 10));
	CHECK(memcmp(in, out, 10) == 0);
	CHECK(!synth_codemap_get(cm, 0x1ffa, out, 2));
	CHECK(!synth_codemap_get(cm, 0x2004, out, 2));
	CHECK_EQ_INT(synth_codemap_put(cm, 0x8000, in, 4), 0);
	CHECK(synth_codemap_get(cm, 0x8002, out, 2) && out[0] == 3);
	synth_codemap_free(cm);
}

/* The branch target: the last immediate operand (TBZ names a bit number first). */
static bool imm_of(const cs_insn *in, bool arm64, int64_t *v)
{
	bool found = false;
	if (arm64) {
		for (int i = 0; i < in->detail->arm64.op_count; i++)
			if (in->detail->arm64.operands[i].type == ARM64_OP_IMM) {
				*v = in->detail->arm64.operands[i].imm;
				found = true;
			}
	} else {
		for (int i = 0; i < in->detail->arm.op_count; i++)
			if (in->detail->arm.operands[i].type == ARM_OP_IMM) {
				*v = (uint32_t)in->detail->arm.operands[i].imm;
				found = true;
			}
	}
	return found;
}

/* Every word capstone decodes as a direct branch must be one for us, with the same
 * target; indirect branches and SVC likewise. */
static void test_a64_vs_capstone(void)
{
	csh h;
	if (cs_open(CS_ARCH_ARM64, CS_MODE_ARM, &h) != CS_ERR_OK)
		TEST_SKIP("capstone has no AArch64");
	cs_option(h, CS_OPT_DETAIL, CS_OPT_ON);
	int direct = 0, indirect = 0, svc = 0, bad = 0;
	for (int i = 0; i < 200000; i++) {
		uint32_t op = rnd();
		if (i & 1) /* the branch, exception and system space: bits 28:26 = 101 */
			op = (op & ~0x1c000000u) | 0x14000000u;
		if (i % 7 == 0) /* BR, BLR, RET Xn */
			op = 0xd61f0000u | ((op & 3) << 21) | (op & 0x3e0);
		uint8_t b[4];
		cst_put_le32(b, op);
		uint64_t pc = 0x400000 + (uint64_t)(rnd() & 0xffff) * 4;
		cs_insn *in;
		size_t n = cs_disasm(h, b, 4, pc, 1, &in);
		struct synth_insn_info info;
		synth_a64_classify(op, pc, &info);
		if (!n)
			continue;
		switch (in->id) {
		case ARM64_INS_B: case ARM64_INS_BL: case ARM64_INS_CBZ: case ARM64_INS_CBNZ:
		case ARM64_INS_TBZ: case ARM64_INS_TBNZ:
			direct++;
			int64_t t = -1;
			imm_of(in, true, &t);
			if (info.cls != synth_i_direct || (int64_t)info.target != t) {
				if (bad++ < 5)
					fprintf(stderr, "A64 %08x %s %s: class %d target %llx\n", op,
						in->mnemonic, in->op_str, info.cls,
						(unsigned long long)info.target);
			}
			break;
		case ARM64_INS_BR: case ARM64_INS_BLR: case ARM64_INS_RET:
			indirect++;
			if (info.cls != synth_i_indirect && bad++ < 5)
				fprintf(stderr, "A64 %08x %s: not indirect\n", op, in->mnemonic);
			break;
		case ARM64_INS_SVC:
			svc++;
			if (info.cls != synth_i_svc && bad++ < 5)
				fprintf(stderr, "A64 %08x svc: class %d\n", op, info.cls);
			break;
		default:
			/* anything else must not be a direct branch for the encoder */
			if (info.cls == synth_i_direct && bad++ < 5)
				fprintf(stderr, "A64 %08x %s: classed a direct branch\n", op, in->mnemonic);
			break;
		}
		cs_free(in, n);
	}
	printf("A64: %d direct, %d indirect, %d svc compared\n", direct, indirect, svc);
	CHECK(direct > 1000 && indirect > 0 && svc > 0);
	CHECK_EQ_INT(bad, 0);
	cs_close(&h);
}

static void test_a32_t32_vs_capstone(bool thumb)
{
	csh h;
	if (cs_open(CS_ARCH_ARM, thumb ? CS_MODE_THUMB : CS_MODE_ARM, &h) != CS_ERR_OK)
		TEST_SKIP("capstone has no ARM");
	cs_option(h, CS_OPT_DETAIL, CS_OPT_ON);
	int direct = 0, bad = 0;
	for (int i = 0; i < 200000; i++) {
		uint32_t w = rnd();
		uint8_t b[4];
		if (thumb) {
			uint32_t hw1 = w & 0xffff, hw2 = w >> 16;
			if (i % 3 == 0)
				hw1 = 0xf000 | (hw1 & 0x7ff), hw2 |= 0x8000; /* 32-bit branches */
			else if (i % 3 == 1)
				hw1 = 0xb100 | (hw1 & 0x4ff) | ((hw1 & 0x2000) ? 0xd000 : 0);
			cst_put_le16(b, (uint16_t)hw1);
			cst_put_le16(b + 2, (uint16_t)hw2);
		} else {
			if (i & 1)
				w = (w & ~0x0e000000u) | 0x0a000000u; /* B, BL, BLX imm */
			cst_put_le32(b, w);
		}
		uint32_t pc = 0x10000 + (rnd() & 0xffff) * 2;
		if (!thumb)
			pc &= ~3u;
		cs_insn *in;
		size_t n = cs_disasm(h, b, 4, pc, 1, &in);
		if (!n)
			continue;
		struct synth_insn_info info;
		synth_a32_classify(b, pc, thumb, &info);
		CHECK_EQ_INT(info.size, in->size);
		int64_t t = -1;
		bool has_imm = imm_of(in, false, &t);
		bool cs_direct = (in->id == ARM_INS_B || in->id == ARM_INS_BL || in->id == ARM_INS_CBZ ||
				  in->id == ARM_INS_CBNZ || (in->id == ARM_INS_BLX && has_imm));
		if (cs_direct) {
			direct++;
			if (info.cls != synth_i_direct || (uint32_t)info.target != (uint32_t)t) {
				if (bad++ < 5)
					fprintf(stderr, "%s %02x%02x%02x%02x %s %s: class %d target %llx\n",
						thumb ? "T32" : "A32", b[3], b[2], b[1], b[0], in->mnemonic,
						in->op_str, info.cls, (unsigned long long)info.target);
			}
		} else if (info.cls == synth_i_direct) {
			if (bad++ < 5)
				fprintf(stderr, "%s %02x%02x%02x%02x %s: classed a direct branch\n",
					thumb ? "T32" : "A32", b[3], b[2], b[1], b[0], in->mnemonic);
		}
		cs_free(in, n);
	}
	printf("%s: %d direct branches compared\n", thumb ? "T32" : "A32", direct);
	CHECK(direct > 1000);
	CHECK_EQ_INT(bad, 0);
	cs_close(&h);
}

/* A deformatter written from the CoreSight frame rules, kept apart from the encoder. */
struct collect {
	uint8_t data[1 << 16];
	size_t len;
};

static int collect_put(void *ctx, const uint8_t *p, size_t len)
{
	struct collect *c = ctx;
	memcpy(c->data + c->len, p, len);
	c->len += len;
	return 0;
}

static size_t deformat(const uint8_t *in, size_t len, uint8_t id, uint8_t *out)
{
	size_t n = 0;
	int cur = -1;
	for (size_t f = 0; f + 16 <= len; f += 16) {
		const uint8_t *fr = in + f;
		int delayed = -1;
		for (int i = 0; i < 15; i++) {
			uint8_t b = fr[i];
			int owner = cur;
			if (!(i & 1)) {
				bool aux = (fr[15] >> (i / 2)) & 1;
				if (b & 1) { /* ID change */
					if (aux && i < 14)
						delayed = b >> 1; /* after the next data byte */
					else
						cur = b >> 1;
					continue;
				}
				b = (uint8_t)(b | aux);
			}
			if (owner == id)
				out[n++] = b;
			if (delayed >= 0) {
				cur = delayed;
				delayed = -1;
			}
		}
	}
	return n;
}

static void test_formatter(void)
{
	for (int len = 0; len < 100; len++) {
		struct collect *c = calloc(1, sizeof(*c));
		struct synth_fmt f;
		uint8_t in[100], out[200];
		synth_fmt_init(&f, 0x10, collect_put, c);
		for (int i = 0; i < len; i++)
			in[i] = (uint8_t)rnd();
		/* in pieces, as the encoder emits packets */
		for (int i = 0; i < len;) {
			int k = 1 + (int)(rnd() % 5);
			if (k > len - i)
				k = len - i;
			synth_fmt_put(&f, in + i, (size_t)k);
			i += k;
		}
		CHECK_EQ_INT(synth_fmt_flush(&f), 0);
		CHECK_EQ_INT(c->len % 16, 0);
		size_t n = deformat(c->data, c->len, 0x10, out);
		CHECK_EQ_INT(n, len);
		CHECK(memcmp(in, out, (size_t)len) == 0);
		free(c);
	}
}

/* Two sources through one formatter, switching at every slot parity, as a funnel
 * interleaves cores: each deformats back to its own bytes. */
static void test_formatter_ids(void)
{
	for (int round = 0; round < 200; round++) {
		struct collect *c = calloc(1, sizeof(*c));
		struct synth_fmt f;
		uint8_t in[2][400], out[400];
		int n[2] = {0, 0};
		synth_fmt_init(&f, 0x10, collect_put, c);
		for (int i = 0; i < 60; i++) {
			int src = (int)(rnd() & 1), k = 1 + (int)(rnd() % 6);
			uint8_t b[8];
			for (int j = 0; j < k; j++)
				b[j] = in[src][n[src]++] = (uint8_t)rnd();
			CHECK_EQ_INT(synth_fmt_put_id(&f, src ? 0x12 : 0x10, b, (size_t)k), 0);
		}
		CHECK_EQ_INT(synth_fmt_flush(&f), 0);
		for (int src = 0; src < 2; src++) {
			size_t got = deformat(c->data, c->len, src ? 0x12 : 0x10, out);
			CHECK_EQ_INT(got, n[src]);
			CHECK(memcmp(in[src], out, (size_t)n[src]) == 0);
		}
		free(c);
	}
}

/* Thread IDs from QEMU's -strace lines, where threads wrote between a call and its
 * result: a clone's result ended another thread's rt_sigprocmask line, and that
 * call's " = 0" ended the next clone's line (a run of the threads program that
 * gave two threads one ID). And a fork before a thread (testdata/src/forker.c):
 * the child's " = 0" ends the fork's line, the parent's " = PID" comes alone
 * later, and the child's QEMU writes lines of its own; the fork is no thread. */
static void test_qlog_ids(void)
{
	static const struct {
		const char *log;
		uint32_t pid;
		int ntids, nclones, nforks;
		uint32_t tids[3];
	} cases[] = {
		{"clone_results_interleaved.qlog", 24949, 3, 3, 0, {24955, 24973, 24976}},
		{"fork_then_thread.qlog", 14265, 1, 1, 1, {14270}},
	};
	const char *src = getenv("CSTRACE_SOURCE_DIR");

	if (!src) {
		printf("SKIP (part): CSTRACE_SOURCE_DIR unset\n");
		return;
	}
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		struct synth_qlog_ids ids;
		char path[4096];

		snprintf(path, sizeof(path), "%s/tests/synth/regress/%s", src, cases[c].log);
		memset(&ids, 0xff, sizeof(ids));
		CHECK_EQ_INT(synth_qlog_ids(path, &ids), cases[c].pid);
		CHECK_EQ_INT(ids.ntids, cases[c].ntids);
		CHECK_EQ_INT(ids.nclones, cases[c].nclones);
		CHECK_EQ_INT(ids.nforks, cases[c].nforks);
		for (int i = 0; i < cases[c].ntids; i++)
			CHECK_EQ_INT(ids.tids[i], cases[c].tids[i]);
	}
}

int main(void)
{
	test_qlog_ids();
	test_formatter_ids();
	test_args();
	test_codemap();
	test_formatter();
	test_a64_vs_capstone();
	test_a32_t32_vs_capstone(false);
	test_a32_t32_vs_capstone(true);
	return test_done();
}
