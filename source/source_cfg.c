/* Parsing of "key=value,..." register settings given on the command line for
 * sources of raw dumps, over defaults of a typical core of each protocol. */
#include "cstrace/source.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Defaults: the ID registers of a Juno Cortex-A53 (ETMv4), a Cortex-A7 as on the
 * STM32MP157 (ETMv3.5) and a Cortex-A15 (PTM), as read on real hardware. */
static void cfg_defaults(struct cst_source_cfg *cfg, enum cst_protocol protocol)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->protocol = protocol;
	cfg->cpu = -1;
	switch (protocol) {
	case cst_proto_etmv3:
		cfg->regs.etmv3 = (struct cst_etmv3_regs){0x410CF250, 0, 0x344008F2, 0x10, 0x8D014024};
		strcpy(cfg->core_name, "Cortex-A7");
		break;
	case cst_proto_ptm:
		cfg->regs.etmv3 = (struct cst_etmv3_regs){0x411CF312, 0, 0x34C01AC2, 0x10, 0x8D294004};
		strcpy(cfg->core_name, "Cortex-A15");
		break;
	case cst_proto_etmv4i:
	case cst_proto_ete:
		cfg->regs.etmv4.trcidr0 = 0x28000EA1;
		cfg->regs.etmv4.trcidr1 = 0x4100F403;
		cfg->regs.etmv4.trcidr2 = 0x00000488;
		cfg->regs.etmv4.trcidr4 = 0x11170004;
		cfg->regs.etmv4.trcauthstatus = 0xCC;
		cfg->regs.etmv4.trctraceidr = 0x10;
		cfg->regs.etmv4.trcdevarch = 0x47705A13;
		strcpy(cfg->core_name, protocol == cst_proto_ete ? "ARMv9.0-A" : "Cortex-A53");
		break;
	case cst_proto_stm:
		cfg->regs.stm.stmtcsr = 0x20u << 16;
		break;
	default:
		break;
	}
	strcpy(cfg->name, "cmdline");
}

static int set_key(struct cst_source_cfg *cfg, const char *key, const char *val,
		   const struct cst_log *log)
{
	const struct cst_source_reg *reg;
	uint64_t v;

	if (!strcasecmp(key, "core")) {
		if (strlen(val) >= sizeof(cfg->core_name)) {
			cst_logf(log, cst_log_error, "core name '%s' too long", val);
			return -cste_format;
		}
		strcpy(cfg->core_name, val);
		return 0;
	}
	if (cst_parse_u64(val, &v) < 0) {
		cst_logf(log, cst_log_error, "'%s=%s': value is not a number", key, val);
		return -cste_format;
	}
	if (!strcasecmp(key, "cpu")) {
		cfg->cpu = (int)v;
		return 0;
	}
	if (cfg->protocol == cst_proto_stm && !strcasecmp(key, "traceid")) {
		cfg->regs.stm.stmtcsr = (cfg->regs.stm.stmtcsr & ~(0x7fu << 16)) |
					(((uint32_t)v & 0x7f) << 16);
		return 0;
	}
	reg = cst_source_reg_find(cfg->protocol, key);
	if (reg) {
		if (v > UINT32_MAX) {
			cst_logf(log, cst_log_error, "'%s=%s': value exceeds 32 bits", key, val);
			return -cste_format;
		}
		*cst_source_reg_ptr(cfg, reg) = (uint32_t)v;
		return 0;
	}
	cst_logf(log, cst_log_error, "unknown register '%s' for this protocol", key);
	return -cste_format;
}

int cst_source_cfg_parse(struct cst_source_cfg *cfg, enum cst_protocol protocol,
			 const char *spec, const struct cst_log *log)
{
	char *copy, *tok, *save = NULL;
	int ret = 0;

	if (!cfg || !spec || !cst_source_regs(protocol))
		return -cste_invalid;
	cfg_defaults(cfg, protocol);
	copy = strdup(spec);
	if (!copy)
		return -cste_nomem;
	for (tok = strtok_r(copy, ",", &save); tok && !ret; tok = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(tok, '=');

		if (!eq) {
			cst_logf(log, cst_log_error, "'%s': expected key=value", tok);
			ret = -cste_format;
			break;
		}
		*eq = '\0';
		ret = set_key(cfg, tok, eq + 1, log);
	}
	free(copy);
	if (!ret && cst_core_lookup(cfg->core_name, &cfg->arch, &cfg->profile) < 0 &&
	    protocol != cst_proto_stm) {
		cst_logf(log, cst_log_error, "unknown core '%s' (expected e.g. Cortex-A53, Cortex-A7)",
			 cfg->core_name);
		ret = -cste_format;
	}
	return ret;
}
