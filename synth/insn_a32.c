/* A32 and T32 instruction classes for the ETMv3 encoder. */
#include "synth_int.h"

void synth_a32_classify(const uint8_t *b, uint32_t pc, bool thumb, struct synth_insn_info *info)
{
	info->cls = synth_i_other;
	info->size = thumb ? 2 : 4;
}
