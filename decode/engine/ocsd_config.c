/* A trace source's registers into OpenCSD's decoder configuration: one copy per
 * protocol, as OpenCSD's structs name the registers their own way. */
#include "decoder_int.h"

#include <string.h>

ocsd_trace_protocol_t dec_protocol_to_ocsd(enum cst_protocol p)
{
	switch (p) {
	case cst_proto_etmv3: return OCSD_PROTOCOL_ETMV3;
	case cst_proto_etmv4i: return OCSD_PROTOCOL_ETMV4I;
	case cst_proto_ptm: return OCSD_PROTOCOL_PTM;
	case cst_proto_stm: return OCSD_PROTOCOL_STM;
	case cst_proto_ete: return OCSD_PROTOCOL_ETE;
	default: return OCSD_PROTOCOL_UNKNOWN;
	}
}

static ocsd_arch_version_t arch_to_ocsd(enum cst_core_arch a)
{
	switch (a) {
	case cst_core_arch_v7: return ARCH_V7;
	case cst_core_arch_v8: return ARCH_V8;
	case cst_core_arch_v8r3: return ARCH_V8r3;
	case cst_core_arch_aa64: return ARCH_AA64;
	default: return ARCH_UNKNOWN;
	}
}

static ocsd_core_profile_t profile_to_ocsd(enum cst_core_profile p)
{
	switch (p) {
	case cst_core_profile_a: return profile_CortexA;
	case cst_core_profile_r: return profile_CortexR;
	case cst_core_profile_m: return profile_CortexM;
	default: return profile_Unknown;
	}
}

/* ocsd_etmv4_cfg and ocsd_ete_cfg name the registers they share alike */
#define SET_ETMV4_COMMON(c, src)                                                    \
	do {                                                                        \
		(c).reg_idr0 = (src)->regs.etmv4.trcidr0;                           \
		(c).reg_idr1 = (src)->regs.etmv4.trcidr1;                           \
		(c).reg_idr2 = (src)->regs.etmv4.trcidr2;                           \
		(c).reg_idr8 = (src)->regs.etmv4.trcidr8;                           \
		(c).reg_configr = (src)->regs.etmv4.trcconfigr;                     \
		(c).reg_traceidr = (src)->regs.etmv4.trctraceidr;                   \
		(c).arch_ver = arch_to_ocsd((src)->arch);                           \
		(c).core_prof = profile_to_ocsd((src)->profile);                    \
	} while (0)

int dec_ocsd_config(const struct cst_source_cfg *src, union dec_ocsd_cfg *cfg, const char **name,
		    struct follow_cfg *fc)
{
	memset(cfg, 0, sizeof(*cfg));
	*fc = (struct follow_cfg){.src = src, .arch = arch_to_ocsd(src->arch),
				  .profile = profile_to_ocsd(src->profile)};
	switch (src->protocol) {
	case cst_proto_etmv3:
	case cst_proto_ptm:
		/* ocsd_ptm_cfg has the layout of ocsd_etmv3_cfg */
		cfg->v3.reg_idr = src->regs.etmv3.etmidr;
		cfg->v3.reg_ctrl = src->regs.etmv3.etmcr;
		cfg->v3.reg_ccer = src->regs.etmv3.etmccer;
		cfg->v3.reg_trc_id = src->regs.etmv3.etmtraceidr;
		cfg->v3.arch_ver = fc->arch;
		cfg->v3.core_prof = fc->profile;
		*name = src->protocol == cst_proto_ptm ? OCSD_BUILTIN_DCD_PTM : OCSD_BUILTIN_DCD_ETMV3;
		return 0;
	case cst_proto_etmv4i:
		SET_ETMV4_COMMON(cfg->v4, src);
		cfg->v4.reg_idr9 = src->regs.etmv4.trcidr9;
		cfg->v4.reg_idr10 = src->regs.etmv4.trcidr10;
		cfg->v4.reg_idr11 = src->regs.etmv4.trcidr11;
		cfg->v4.reg_idr12 = src->regs.etmv4.trcidr12;
		cfg->v4.reg_idr13 = src->regs.etmv4.trcidr13;
		*name = OCSD_BUILTIN_DCD_ETMV4I;
		return 0;
	case cst_proto_ete:
		SET_ETMV4_COMMON(cfg->ete, src);
		cfg->ete.reg_devarch = src->regs.etmv4.trcdevarch;
		*name = OCSD_BUILTIN_DCD_ETE;
		return 0;
	case cst_proto_stm:
		cfg->stm.reg_tcsr = src->regs.stm.stmtcsr;
		*name = OCSD_BUILTIN_DCD_STM;
		return 0;
	default:
		return -cste_unsupported;
	}
}
