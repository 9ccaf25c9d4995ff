/* The registers that describe a trace source: Arm's names, the short forms the
 * command line takes, where sysfs publishes the ID registers, and which ones a
 * decoder cannot do without. */
#include "cstrace/source.h"

#include <strings.h>

#define V3(f) offsetof(struct cst_source_cfg, regs.etmv3.f)
#define V4(f) offsetof(struct cst_source_cfg, regs.etmv4.f)
#define REQ true, false, 0
#define OPT(v) false, false, (v)
#define ETE_OPT(v) false, true, (v)

/* In the order a snapshot's registers are read and reported. The fallbacks are a
 * Cortex-A53's ETMv4.0 (TRCIDR1) and ETMv4 (TRCDEVARCH) identification, and the
 * comparators of a Cortex-A57 (TRCIDR4) and a Cortex-A7 (ETMCCR) as read on a Juno
 * and a TC2: four address comparator pairs each. */
static const struct cst_source_reg etmv3_regs[] = {
	{"ETMIDR", "etmidr", "idr", 0x079, "mgmt/etmidr", REQ, V3(etmidr)},
	{"ETMCR", "etmcr", "cr", 0x000, NULL, REQ, V3(etmcr)},
	{"ETMCCER", "etmccer", "ccer", 0x07a, "mgmt/etmccer", REQ, V3(etmccer)},
	{"ETMTRACEIDR", "etmtraceidr", "traceid", 0x080, NULL, REQ, V3(etmtraceidr)},
	{"ETMCCR", "etmccr", "ccr", 0x001, "mgmt/etmccr", OPT(0x8D014024), V3(etmccr)},
	{NULL, NULL, NULL, 0, NULL, OPT(0), 0},
};

static const struct cst_source_reg etmv4_regs[] = {
	{"TRCCONFIGR", "trcconfigr", "configr", 0x004, NULL, REQ, V4(trcconfigr)},
	{"TRCTRACEIDR", "trctraceidr", "traceid", 0x010, NULL, REQ, V4(trctraceidr)},
	{"TRCIDR0", "trcidr0", "idr0", 0x078, "trcidr/trcidr0", REQ, V4(trcidr0)},
	{"TRCIDR1", "trcidr1", "idr1", 0x079, "trcidr/trcidr1", OPT(0x4100F403), V4(trcidr1)},
	{"TRCIDR2", "trcidr2", "idr2", 0x07a, "trcidr/trcidr2", REQ, V4(trcidr2)},
	{"TRCIDR4", "trcidr4", "idr4", 0x07c, "trcidr/trcidr4", OPT(0x11170004), V4(trcidr4)},
	{"TRCIDR8", "trcidr8", "idr8", 0x060, "trcidr/trcidr8", OPT(0), V4(trcidr8)},
	{"TRCIDR9", "trcidr9", "idr9", 0x061, "trcidr/trcidr9", OPT(0), V4(trcidr9)},
	{"TRCIDR10", "trcidr10", "idr10", 0x062, "trcidr/trcidr10", OPT(0), V4(trcidr10)},
	{"TRCIDR11", "trcidr11", "idr11", 0x063, "trcidr/trcidr11", OPT(0), V4(trcidr11)},
	{"TRCIDR12", "trcidr12", "idr12", 0x064, "trcidr/trcidr12", OPT(0), V4(trcidr12)},
	{"TRCIDR13", "trcidr13", "idr13", 0x065, "trcidr/trcidr13", OPT(0), V4(trcidr13)},
	{"TRCAUTHSTATUS", "trcauthstatus", "authstatus", 0x3ee, "mgmt/trcauthstatus", OPT(0),
	 V4(trcauthstatus)},
	{"TRCDEVARCH", "trcdevarch", "devarch", 0x3ef, "mgmt/trcdevarch", ETE_OPT(0x47705A13),
	 V4(trcdevarch)},
	{NULL, NULL, NULL, 0, NULL, OPT(0), 0},
};

static const struct cst_source_reg stm_regs[] = {
	{"STMTCSR", "stmtcsr", "tcsr", 0x3a0, NULL, REQ,
	 offsetof(struct cst_source_cfg, regs.stm.stmtcsr)},
	{NULL, NULL, NULL, 0, NULL, OPT(0), 0},
};

const struct cst_source_reg *cst_source_regs(enum cst_protocol protocol)
{
	if (cst_protocol_is_v3(protocol))
		return etmv3_regs;
	if (cst_protocol_is_v4(protocol))
		return etmv4_regs;
	if (protocol == cst_proto_stm)
		return stm_regs;
	return NULL;
}

const struct cst_source_reg *cst_source_reg_find(enum cst_protocol protocol, const char *name)
{
	const struct cst_source_reg *r = cst_source_regs(protocol);

	for (; name && r && r->name; r++)
		if (!strcasecmp(name, r->name) || !strcasecmp(name, r->alias))
			return r;
	return NULL;
}

uint8_t cst_source_trace_id(const struct cst_source_cfg *src)
{
	if (!src)
		return 0;
	switch (src->protocol) {
	case cst_proto_etmv3:
	case cst_proto_ptm:
		return src->regs.etmv3.etmtraceidr & 0x7f;
	case cst_proto_etmv4i:
	case cst_proto_ete:
		return src->regs.etmv4.trctraceidr & 0x7f;
	case cst_proto_stm:
		return (src->regs.stm.stmtcsr >> 16) & 0x7f;
	default:
		return 0;
	}
}

bool cst_source_timestamps(const struct cst_source_cfg *src)
{
	switch (src ? src->protocol : cst_proto_unknown) {
	case cst_proto_etmv3:
	case cst_proto_ptm:
		return src->regs.etmv3.etmcr >> 28 & 1;
	case cst_proto_etmv4i:
	case cst_proto_ete:
		return src->regs.etmv4.trcconfigr >> 11 & 1;
	default:
		return true;
	}
}
