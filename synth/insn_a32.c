/* A32 and T32 instruction classes for the ETMv3 encoder: direct branches (with their
 * targets and state changes), anything that may write the PC, and SVC. Over-reporting
 * "may write the PC" only costs an address packet; missing a direct branch would not. */
#include "synth_int.h"

static int32_t sext32(uint32_t v, int bits)
{
	uint32_t m = 1u << (bits - 1);
	return (int32_t)((v ^ m) - m);
}

static void a32_classify(uint32_t op, uint32_t pc, struct synth_insn_info *info)
{
	uint32_t cond = op >> 28;
	info->size = 4;
	info->cond = cond != 0xe;
	if (cond == 0xf) {
		if ((op & 0xfe000000) == 0xfa000000) { /* BLX imm: switches to Thumb */
			info->cls = synth_i_direct;
			info->link = true;
			info->target_thumb = true;
			info->target = pc + 8 + (uint32_t)(sext32(op & 0xffffff, 24) * 4) +
				       ((op >> 23) & 2);
			info->cond = false;
		} else if ((op & 0xfe500000) == 0xf8100000) { /* RFE */
			info->cls = synth_i_indirect;
		}
		return;
	}
	if ((op & 0x0e000000) == 0x0a000000) { /* B, BL */
		info->cls = synth_i_direct;
		info->link = (op >> 24) & 1;
		info->target = pc + 8 + (uint32_t)(sext32(op & 0xffffff, 24) * 4);
	} else if ((op & 0x0ffffff0) == 0x012fff10 || (op & 0x0ffffff0) == 0x012fff30 ||
		   (op & 0x0ffffff0) == 0x012fff20) { /* BX, BLX, BXJ register */
		info->cls = synth_i_indirect;
		info->link = (op & 0x20) != 0;
	} else if ((op & 0x0f000000) == 0x0f000000) {
		info->cls = synth_i_svc;
	} else if ((op & 0x0c000000) == 0x00000000 && ((op >> 12) & 0xf) == 0xf) {
		info->cls = synth_i_indirect; /* data processing (or anything there) to PC */
	} else if ((op & 0x0c100000) == 0x04100000 && ((op >> 12) & 0xf) == 0xf) {
		info->cls = synth_i_indirect; /* LDR PC */
	} else if ((op & 0x0e100000) == 0x08100000 && (op & 0x8000)) {
		info->cls = synth_i_indirect; /* LDM with PC */
	}
}

static void t16_classify(uint32_t hw, uint32_t pc, struct synth_insn_info *info)
{
	info->size = 2;
	info->target_thumb = true;
	if ((hw & 0xf000) == 0xd000) {
		uint32_t c = (hw >> 8) & 0xf;
		if (c == 0xf) {
			info->cls = synth_i_svc;
		} else if (c != 0xe) { /* B<c> */
			info->cls = synth_i_direct;
			info->cond = true;
			info->target = pc + 4 + (uint32_t)(sext32(hw & 0xff, 8) * 2);
		}
	} else if ((hw & 0xf800) == 0xe000) { /* B */
		info->cls = synth_i_direct;
		info->target = pc + 4 + (uint32_t)(sext32(hw & 0x7ff, 11) * 2);
	} else if ((hw & 0xf500) == 0xb100) { /* CBZ, CBNZ */
		info->cls = synth_i_direct;
		info->cond = true;
		info->target = pc + 4 + ((((hw >> 9) & 1) << 6) | (((hw >> 3) & 0x1f) << 1));
	} else if ((hw & 0xff00) == 0x4700) { /* BX, BLX register */
		info->cls = synth_i_indirect;
		info->link = (hw & 0x80) != 0;
	} else if (((hw & 0xff00) == 0x4600 || (hw & 0xff00) == 0x4400) &&
		   (((hw >> 4) & 8) | (hw & 7)) == 15) { /* MOV/ADD PC, Rm */
		info->cls = synth_i_indirect;
	} else if ((hw & 0xff00) == 0xbd00) { /* POP {..., PC} */
		info->cls = synth_i_indirect;
	}
}

static void t32_classify(uint32_t hw1, uint32_t hw2, uint32_t pc, struct synth_insn_info *info)
{
	info->size = 4;
	info->target_thumb = true;
	if ((hw1 & 0xf800) == 0xf000 && (hw2 & 0x8000)) {
		uint32_t op1 = (hw2 >> 12) & 7;
		uint32_t s = (hw1 >> 10) & 1, j1 = (hw2 >> 13) & 1, j2 = (hw2 >> 11) & 1;
		uint32_t i1 = !(j1 ^ s), i2 = !(j2 ^ s);
		uint32_t imm25 = (s << 24) | (i1 << 23) | (i2 << 22) | ((hw1 & 0x3ff) << 12) |
				 ((hw2 & 0x7ff) << 1);
		if ((op1 & 5) == 0) { /* B<c>.W, unless it is the misc control space */
			if (((hw1 >> 7) & 7) == 7)
				return;
			uint32_t imm21 = (s << 20) | (j2 << 19) | (j1 << 18) | ((hw1 & 0x3f) << 12) |
					 ((hw2 & 0x7ff) << 1);
			info->cls = synth_i_direct;
			info->cond = true;
			info->target = pc + 4 + (uint32_t)sext32(imm21, 21);
		} else if ((op1 & 5) == 1) { /* B.W */
			info->cls = synth_i_direct;
			info->target = pc + 4 + (uint32_t)sext32(imm25, 25);
		} else if ((op1 & 5) == 5) { /* BL */
			info->cls = synth_i_direct;
			info->link = true;
			info->target = pc + 4 + (uint32_t)sext32(imm25, 25);
		} else { /* BLX imm: to ARM state, from the word-aligned PC */
			info->cls = synth_i_direct;
			info->link = true;
			info->target_thumb = false;
			info->target = ((pc + 4) & ~3u) + (uint32_t)sext32(imm25 & ~3u, 25);
		}
		return;
	}
	if ((hw1 & 0xfff0) == 0xe8d0 && (hw2 & 0xffe0) == 0xf000) { /* TBB, TBH */
		info->cls = synth_i_indirect;
	} else if ((hw1 & 0xfe50) == 0xe810 && (hw2 & 0x8000)) { /* LDM/POP.W with PC, RFE */
		info->cls = synth_i_indirect;
	} else if ((hw1 & 0xfe10) == 0xf810 && ((hw1 >> 5) & 3) == 2 && (hw2 >> 12) == 0xf) {
		info->cls = synth_i_indirect; /* LDR.W PC */
	} else if (hw1 == 0xf3de && (hw2 & 0xff00) == 0x8f00) { /* SUBS PC, LR */
		info->cls = synth_i_indirect;
	}
}

void synth_a32_classify(const uint8_t *b, uint32_t pc, bool thumb, struct synth_insn_info *info)
{
	info->cls = synth_i_other;
	info->target = 0;
	info->cond = false;
	info->link = false;
	info->target_thumb = thumb;
	if (!thumb) {
		a32_classify(cst_le32(b), pc, info);
		return;
	}
	uint32_t hw1 = cst_le16(b);
	if (cst_t32_insn_size((uint16_t)hw1) == 4)
		t32_classify(hw1, cst_le16(b + 2), pc, info);
	else
		t16_classify(hw1, pc, info);
}
