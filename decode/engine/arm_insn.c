/* OpenCSD 1.3.3's instruction decode for trace, in cstrace's decoders
 * (arm_insn.h): the encodings are the architecture's, the classes OpenCSD's
 * (an instruction it does not class as a branch is no waypoint here either). */
#include "arm_insn.h"

static int64_t sext(uint64_t v, unsigned bits)
{
	uint64_t m = 1ull << (bits - 1);

	return (int64_t)((v ^ m) - m);
}

void dec_arm_insn_a64(uint32_t op, uint64_t pc, bool v8r3, bool wfi_wfe, struct arm_insn *in)
{
	in->cls = cst_insn_other;
	in->sub = cst_insn_sub_none;
	in->size = 4;
	in->isa_change = false;
	in->target = 0;
	if ((op & 0xffdffc1f) == 0xd61f0000) { /* BR, BLR */
		in->cls = cst_insn_branch_indirect;
		if (op & 0x00200000)
			in->sub = cst_insn_sub_link;
	} else if ((op & 0xfffffc1f) == 0xd65f0000) { /* RET */
		in->cls = cst_insn_branch_indirect;
		in->sub = cst_insn_sub_ret;
	} else if (op == 0xd69f03e0) { /* ERET */
		in->cls = cst_insn_branch_indirect;
		in->sub = cst_insn_sub_eret;
	} else if (v8r3 && ((op & 0xffdff800) == 0xd71f0800 ||     /* BRAA, BLRAA.. */
			    (op & 0xffdff81f) == 0xd61f081f)) {   /* BRAAZ, BLRAAZ.. */
		in->cls = cst_insn_branch_indirect;
		if (op & 0x00200000)
			in->sub = cst_insn_sub_link;
	} else if (v8r3 && (op & 0xfffffbff) == 0xd69f0bff) { /* ERETAA, ERETAB */
		in->cls = cst_insn_branch_indirect;
		in->sub = cst_insn_sub_eret;
	} else if (v8r3 && (op & 0xfffffbff) == 0xd65f0bff) { /* RETAA, RETAB */
		in->cls = cst_insn_branch_indirect;
		in->sub = cst_insn_sub_ret;
	} else if ((op & 0x7e000000) == 0x34000000 || (op & 0xff000010) == 0x54000000) {
		/* CBZ, CBNZ, B.cond: imm19 */
		in->cls = cst_insn_branch;
		in->target = pc + (uint64_t)(sext((op >> 5) & 0x7ffff, 19) * 4);
	} else if ((op & 0x7e000000) == 0x36000000) { /* TBZ, TBNZ: imm14 */
		in->cls = cst_insn_branch;
		in->target = pc + (uint64_t)(sext((op >> 5) & 0x3fff, 14) * 4);
	} else if ((op & 0x7c000000) == 0x14000000) { /* B, BL: imm26 */
		in->cls = cst_insn_branch;
		in->target = pc + (uint64_t)(sext(op & 0x3ffffff, 26) * 4);
		if (op & 0x80000000)
			in->sub = cst_insn_sub_link;
	} else if ((op & 0xfffff09f) == 0xd503309f && (op & 0x60) == 0x40) {
		in->cls = cst_insn_isb; /* DSB and DMB are no waypoints in ETMv4 */
	} else if (wfi_wfe && (op & 0xffffffdf) == 0xd503205f) {
		in->cls = cst_insn_wfi_wfe;
	}
}


static void clear(struct arm_insn *in, uint8_t size)
{
	in->cls = cst_insn_other;
	in->sub = cst_insn_sub_none;
	in->size = size;
	in->isa_change = false;
	in->target = 0;
}

/* A32 branches that take the address from a register or memory (with the
 * returns OpenCSD marks: BX LR, POP/LDM of PC from SP, LDR PC from SP, MOV PC, LR) */
static bool a32_indirect(uint32_t op, enum cst_insn_subclass *sub)
{
	if ((op & 0xf0000000) == 0xf0000000)
		return (op & 0xfe500000) == 0xf8100000; /* RFE */
	if ((op & 0x0ff000d0) == 0x01200010) { /* BX, BLX (register) */
		if ((op & 0xff) == 0x1e)
			*sub = cst_insn_sub_ret;
		return true;
	}
	if ((op & 0x0ff000f0) == 0x01200020) /* BXJ */
		return true;
	if ((op & 0x0e108000) == 0x08108000) { /* LDM with PC */
		if ((op & 0x0fffa000) == 0x08bd8000)
			*sub = cst_insn_sub_ret;
		return true;
	}
	if ((op & 0x0e50f000) == 0x0410f000) { /* LDR PC, immediate */
		if ((op & 0x01ff0000) == 0x009d0000)
			*sub = cst_insn_sub_ret;
		return true;
	}
	if ((op & 0x0e50f010) == 0x0610f000) /* LDR PC, register */
		return true;
	if ((op & 0x0fe0f000) == 0x01a0f000) { /* MOV PC */
		if ((op & 0x00100fff) == 0x00e)
			*sub = cst_insn_sub_ret;
		return true;
	}
	if ((op & 0x0f900080) == 0x01000000 || (op & 0x0f9000f0) == 0x01800090 ||
	    (op & 0x0fb0f000) == 0x0320f000)
		return false; /* miscellaneous, extra loads and stores, MSR immediate */
	if ((op & 0x0e00f000) == 0x0200f000) /* data processing into PC, immediate */
		return (op & 0x0f90f000) != 0x0310f000; /* but TST, CMP */
	return (op & 0x0e00f000) == 0x0000f000; /* data processing into PC, register */
}

static bool a32_link(uint32_t op)
{
	if ((op & 0xf0000000) == 0xf0000000)
		return (op & 0xfe000000) == 0xfa000000; /* BLX (immediate) */
	return (op & 0x0f000000) == 0x0b000000 || /* BL */
	       (op & 0x0ff000f0) == 0x01200030;   /* BLX (register) */
}

void dec_arm_insn_a32(uint32_t op, uint64_t pc, struct arm_insn *in)
{
	clear(in, 4);
	if (a32_indirect(op, &in->sub)) {
		in->cls = cst_insn_branch_indirect;
		if (a32_link(op))
			in->sub = cst_insn_sub_link;
	} else if ((op & 0xf0000000) == 0xf0000000 ? (op & 0xfe000000) == 0xfa000000
						   : (op & 0x0e000000) == 0x0a000000) {
		/* B, BL, BLX (immediate): 32-bit arithmetic, as on the core */
		uint32_t npc = (uint32_t)pc + 8 + (uint32_t)((int32_t)((op & 0xffffff) << 8) >> 6);

		if ((op & 0xf0000000) == 0xf0000000)
			npc |= 1 | ((op >> 23) & 2); /* to T32, with the H bit */
		in->cls = cst_insn_branch;
		in->isa_change = npc & 1;
		in->target = npc & ~1u;
		if (a32_link(op))
			in->sub = cst_insn_sub_link;
	} else if (((op & 0xfff00000) == 0xf5700000 && (op & 0xf0) == 0x60) ||
		   ((op & 0x0fff0f00) == 0x0e070f00 && (op & 0xff) == 0x95)) {
		in->cls = cst_insn_isb;
	}
}

/* T32 branches with the target in the instruction; @op has the first halfword
 * in its top 16 bits. Returns the target with bit 0 set for T32. */
static bool t32_direct(uint32_t op, uint32_t pc, enum cst_insn_subclass *sub, uint32_t *npc)
{
	if ((op & 0xf0000000) == 0xd0000000 && (op & 0x0e000000) != 0x0e000000) {
		/* B<c> T1 */
		*npc = (pc + 4 + (uint32_t)((int32_t)((op & 0x00ff0000) << 8) >> 23)) | 1;
	} else if ((op & 0xf8000000) == 0xe0000000) { /* B T2 */
		*npc = (pc + 4 + (uint32_t)((int32_t)((op & 0x07ff0000) << 5) >> 20)) | 1;
	} else if ((op & 0xf800d000) == 0xf0008000 && (op & 0x03800000) != 0x03800000) {
		/* B<c> T3 */
		*npc = (pc + 4 +
			(uint32_t)((int32_t)(((op & 0x04000000) << 5) | ((op & 0x0800) << 19) |
					     ((op & 0x2000) << 16) | ((op & 0x003f0000) << 7) |
					     ((op & 0x000007ff) << 12)) >>
				   11)) |
		       1;
	} else if ((op & 0xf8009000) == 0xf0009000) { /* B T4, BL T1 */
		uint32_t s = ((op & 0x04000000) >> 26) - 1;

		*npc = (pc + 4 +
			(uint32_t)((int32_t)(((op & 0x04000000) << 5) | (((op ^ s) & 0x2000) << 17) |
					     (((op ^ s) & 0x0800) << 18) | ((op & 0x03ff0000) << 3) |
					     ((op & 0x000007ff) << 8)) >>
				   7)) |
		       1;
		if (op & 0x00004000)
			*sub = cst_insn_sub_link;
	} else if ((op & 0xf800d001) == 0xf000c000) { /* BLX T2: to A32 */
		uint32_t s = ((op & 0x04000000) >> 26) - 1;

		*npc = (pc & ~3u) + 4 +
		       (uint32_t)((int32_t)(((op & 0x04000000) << 5) | (((op ^ s) & 0x2000) << 17) |
					    (((op ^ s) & 0x0800) << 18) | ((op & 0x03ff0000) << 3) |
					    ((op & 0x000007fe) << 8)) >>
				  7);
		*sub = cst_insn_sub_link;
	} else if ((op & 0xf5000000) == 0xb1000000) { /* CB(N)Z: forward only */
		*npc = (pc + 4 + ((((op & 0x02000000) << 6) | ((op & 0x00f80000) << 7)) >> 25)) | 1;
	} else {
		return false;
	}
	return true;
}

static bool t32_indirect(uint32_t op, enum cst_insn_subclass *sub)
{
	if ((op & 0xff000000) == 0x47000000) { /* BX, BLX (register) */
		if (op & 0x00800000)
			*sub = cst_insn_sub_link;
		else if ((op & 0x00780000) == 0x00700000)
			*sub = cst_insn_sub_ret; /* BX LR */
		return true;
	}
	if ((op & 0xff000000) == 0xbd000000) { /* POP {..., PC} */
		*sub = cst_insn_sub_ret;
		return true;
	}
	if ((op & 0xfd870000) == 0x44870000) { /* MOV PC, ADD PC */
		if ((op & 0xffff0000) == 0x46f70000)
			*sub = cst_insn_sub_ret;
		return true;
	}
	if ((op & 0xfff0f800) == 0xf850f800) { /* LDR PC, immediate T4 */
		if ((op & 0x000f0f00) == 0x000d0b00)
			*sub = cst_insn_sub_ret;
		return true;
	}
	if ((op & 0xfe508000) == 0xe8108000) { /* LDM with PC */
		if ((op & 0x0fff0000) == 0x08bd0000)
			*sub = cst_insn_sub_ret;
		return true;
	}
	return (op & 0xfff0d000) == 0xf3c08000 ||  /* BXJ */
	       (op & 0xfff0ffe0) == 0xe8d0f000 ||  /* TBB, TBH */
	       (op & 0xffd00000) == 0xe8100000 ||  /* RFE T1 */
	       (op & 0xffd00000) == 0xe9900000 ||  /* RFE T2 */
	       (op & 0xfff0d000) == 0xf3d08000 ||  /* SUBS PC, LR */
	       (op & 0xfff0f000) == 0xf8d0f000 ||  /* LDR PC, immediate T3 */
	       (op & 0xff7ff000) == 0xf85ff000 ||  /* LDR PC, literal */
	       (op & 0xfff0ffc0) == 0xf850f000;    /* LDR PC, register */
}

void dec_arm_insn_t32(const uint8_t b[4], uint64_t pc, struct arm_insn *in)
{
	uint32_t op = (uint32_t)b[0] << 16 | (uint32_t)b[1] << 24 | b[2] | (uint32_t)b[3] << 8;
	uint32_t npc;

	clear(in, (uint8_t)cst_t32_insn_size((uint16_t)(op >> 16)));
	if (t32_direct(op, (uint32_t)pc, &in->sub, &npc)) {
		in->cls = cst_insn_branch;
		in->target = npc & ~1u;
		in->isa_change = !(npc & 1);
	} else if (t32_indirect(op, &in->sub)) {
		in->cls = cst_insn_branch_indirect;
	} else if (((op & 0xffffff00) == 0xf3bf8f00 && (op & 0xf0) == 0x60) ||
		   ((op & 0xffff0f00) == 0xee070f00 && (op & 0xff) == 0x95)) {
		in->cls = cst_insn_isb;
	}
}
