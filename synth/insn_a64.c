/* A64 instruction classes for the encoder: which instructions are ETMv4 waypoints
 * (branches, ISB) and where direct branches go, decoded just far enough for that. */
#include "synth_int.h"

static int64_t sext(uint64_t v, int bits)
{
	uint64_t m = 1ull << (bits - 1);
	return (int64_t)((v ^ m) - m);
}

void synth_a64_classify(uint32_t op, uint64_t pc, struct synth_insn_info *info)
{
	info->cls = synth_i_other;
	info->target = 0;
	info->cond = false;
	info->link = false;
	info->target_thumb = false;
	info->size = 4;
	if ((op & 0x7c000000) == 0x14000000) { /* B, BL imm26 */
		info->cls = synth_i_direct;
		info->link = (op >> 31) & 1;
		info->target = pc + (uint64_t)(sext(op & 0x3ffffff, 26) * 4);
	} else if ((op & 0xff000010) == 0x54000000) { /* B.cond imm19 */
		info->cls = synth_i_direct;
		info->cond = true;
		info->target = pc + (uint64_t)(sext((op >> 5) & 0x7ffff, 19) * 4);
	} else if ((op & 0x7e000000) == 0x34000000) { /* CBZ, CBNZ imm19 */
		info->cls = synth_i_direct;
		info->cond = true;
		info->target = pc + (uint64_t)(sext((op >> 5) & 0x7ffff, 19) * 4);
	} else if ((op & 0x7e000000) == 0x36000000) { /* TBZ, TBNZ imm14 */
		info->cls = synth_i_direct;
		info->cond = true;
		info->target = pc + (uint64_t)(sext((op >> 5) & 0x3fff, 14) * 4);
	} else if ((op & 0xfe000000) == 0xd6000000) { /* BR, BLR, RET, ERET (+PAuth) */
		info->cls = synth_i_indirect;
		info->link = ((op >> 21) & 0xf) == 1;
	} else if ((op & 0xffe0001f) == 0xd4000001) { /* SVC */
		info->cls = synth_i_svc;
	} else if ((op & 0xfffff0ff) == 0xd50330df) { /* ISB */
		info->cls = synth_i_isb;
	}
}
