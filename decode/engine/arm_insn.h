/* Internal to decode/: the instruction decode of cstrace's own trace decoders
 * (etm4_follow.c, etm3_follow.c), as OpenCSD 1.3.3's instruction decoder does
 * it: which instructions end a range (branches, ISB, WFI/WFE where traced as
 * branches), what kind of branch, and where a direct one goes. The same answer
 * for every instruction is what makes their elements OpenCSD's. */
#ifndef CSTRACE_DECODE_ARM_INSN_H
#define CSTRACE_DECODE_ARM_INSN_H

#include "cstrace/decode.h"

struct arm_insn {
	enum cst_insn_class cls;
	enum cst_insn_subclass sub;
	uint8_t size;     /* bytes: 4, or 2 for a 16-bit T32 instruction */
	bool isa_change;  /* a direct branch to the other of A32 and T32 (BLX) */
	uint64_t target;  /* direct branches: where they go */
};

/* A64 @op at @pc; @v8r3: ARMv8.3 pointer-authenticated branches; @wfi_wfe: WFI
 * and WFE are waypoints. */
void dec_arm_insn_a64(uint32_t op, uint64_t pc, bool v8r3, bool wfi_wfe, struct arm_insn *in);

/* A32 @op at @pc. */
void dec_arm_insn_a32(uint32_t op, uint64_t pc, struct arm_insn *in);

/* T32 at @pc from its first four bytes @b (a 16-bit instruction and the next
 * halfword, as OpenCSD reads it). */
void dec_arm_insn_t32(const uint8_t b[4], uint64_t pc, struct arm_insn *in);

#endif
