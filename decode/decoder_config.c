/* A trace source's registers into OpenCSD's decoder configuration (one copy per
 * protocol: OpenCSD's structs name the registers its own way), and the decoder
 * created for it in the tree. */
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
int dec_decoder_add_source(struct cst_decoder *dec, int s, const struct cst_source_cfg *src)
{
	uint32_t flags = dec->opts.packets_only ? OCSD_CREATE_FLG_PACKET_PROC
						: OCSD_CREATE_FLG_FULL_DECODER;
	const char *name;
	unsigned char csid = 0;
	ocsd_err_t err;
	union {
		ocsd_etmv3_cfg v3;
		ocsd_ptm_cfg ptm;
		ocsd_etmv4_cfg v4;
		ocsd_ete_cfg ete;
		ocsd_stm_cfg stm;
	} cfg;

	memset(&cfg, 0, sizeof(cfg));
	switch (src->protocol) {
	case cst_proto_etmv3:
	case cst_proto_ptm:
		/* ocsd_ptm_cfg has the layout of ocsd_etmv3_cfg */
		cfg.v3.reg_idr = src->regs.etmv3.etmidr;
		cfg.v3.reg_ctrl = src->regs.etmv3.etmcr;
		cfg.v3.reg_ccer = src->regs.etmv3.etmccer;
		cfg.v3.reg_trc_id = src->regs.etmv3.etmtraceidr;
		cfg.v3.arch_ver = arch_to_ocsd(src->arch);
		cfg.v3.core_prof = profile_to_ocsd(src->profile);
		name = src->protocol == cst_proto_ptm ? OCSD_BUILTIN_DCD_PTM : OCSD_BUILTIN_DCD_ETMV3;
		break;
	case cst_proto_etmv4i:
		cfg.v4.reg_idr0 = src->regs.etmv4.trcidr0;
		cfg.v4.reg_idr1 = src->regs.etmv4.trcidr1;
		cfg.v4.reg_idr2 = src->regs.etmv4.trcidr2;
		cfg.v4.reg_idr8 = src->regs.etmv4.trcidr8;
		cfg.v4.reg_idr9 = src->regs.etmv4.trcidr9;
		cfg.v4.reg_idr10 = src->regs.etmv4.trcidr10;
		cfg.v4.reg_idr11 = src->regs.etmv4.trcidr11;
		cfg.v4.reg_idr12 = src->regs.etmv4.trcidr12;
		cfg.v4.reg_idr13 = src->regs.etmv4.trcidr13;
		cfg.v4.reg_configr = src->regs.etmv4.trcconfigr;
		cfg.v4.reg_traceidr = src->regs.etmv4.trctraceidr;
		cfg.v4.arch_ver = arch_to_ocsd(src->arch);
		cfg.v4.core_prof = profile_to_ocsd(src->profile);
		name = OCSD_BUILTIN_DCD_ETMV4I;
		break;
	case cst_proto_ete:
		cfg.ete.reg_idr0 = src->regs.etmv4.trcidr0;
		cfg.ete.reg_idr1 = src->regs.etmv4.trcidr1;
		cfg.ete.reg_idr2 = src->regs.etmv4.trcidr2;
		cfg.ete.reg_idr8 = src->regs.etmv4.trcidr8;
		cfg.ete.reg_devarch = src->regs.etmv4.trcdevarch;
		cfg.ete.reg_configr = src->regs.etmv4.trcconfigr;
		cfg.ete.reg_traceidr = src->regs.etmv4.trctraceidr;
		cfg.ete.arch_ver = arch_to_ocsd(src->arch);
		cfg.ete.core_prof = profile_to_ocsd(src->profile);
		name = OCSD_BUILTIN_DCD_ETE;
		break;
	case cst_proto_stm:
		cfg.stm.reg_tcsr = src->regs.stm.stmtcsr;
		name = OCSD_BUILTIN_DCD_STM;
		break;
	default:
		return -cste_unsupported;
	}
	if ((dec->follow & (dec_follow_quiet | dec_follow_strict)) && !dec->opts.packets_only &&
	    ((src->protocol == cst_proto_etmv4i && dec_etm4_follow_covers(src, cfg.v4.arch_ver)) ||
	     (src->protocol == cst_proto_etmv3 &&
	      dec_etm3_follow_covers(src, cfg.v3.arch_ver, cfg.v3.core_prof))))
		flags = OCSD_CREATE_FLG_PACKET_PROC; /* cstrace's decoder takes its packets */
	err = ocsd_dt_create_decoder(dec->tree, name, (int)flags, &cfg, &csid);
	if (err != OCSD_OK) {
		char msg[256];

		ocsd_err_str(err, msg, sizeof(msg));
		cst_logf(dec->opts.log, cst_log_warning,
			 "source %s: OpenCSD cannot create a %s decoder: %s", src->name, name, msg);
		return -cste_decoder;
	}
	csid &= 0x7f;
	dec->id_source[csid] = (int8_t)s;
	dec->pkt_ids[csid] = (struct pkt_ctx){dec, csid, src->protocol};
	if (flags == OCSD_CREATE_FLG_PACKET_PROC && !dec->opts.packets_only) {
		struct follow_io io = dec_follow_io;
		void *follower, *sink;

		io.ctx = dec;
		if (src->protocol == cst_proto_etmv4i) {
			follower = dec->follower[csid] =
				dec_etm4_follow_new(src, cfg.v4.arch_ver, csid, &io);
			sink = (void *)dec_etm4_follow_packet;
		} else {
			follower = dec->follower3[csid] =
				dec_etm3_follow_new(csid, &io, dec->follow & dec_follow_runs,
						    dec->follow & dec_follow_timed);
			sink = (void *)dec_etm3_follow_packet;
		}
		if (!follower || ocsd_dt_attach_packet_callback(dec->tree, csid,
								OCSD_C_API_CB_PKT_SINK, sink,
								follower) != OCSD_OK)
			return -cste_nomem;
		return 0;
	}
	if (dec->opts.packets_only &&
	    ocsd_dt_attach_packet_callback(dec->tree, csid, OCSD_C_API_CB_PKT_MON,
					   (void *)dec_decoder_on_packet, &dec->pkt_ids[csid]) != OCSD_OK)
		return dec_decoder_attach_printer(dec, csid);
	return 0;
}
