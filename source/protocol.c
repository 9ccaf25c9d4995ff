/* Protocol names: one table for what cstrace prints and every spelling it reads. */
#include "cstrace/source.h"

#include <string.h>
#include <strings.h>

static const struct {
	const char *name; /* printed */
	const char *spellings[5]; /* read, in any case; the first is the profile keyword */
} protocols[] = {
	[cst_proto_etmv3] = {"ETMv3", {"etmv3", "etm3"}},
	[cst_proto_ptm] = {"PTM", {"ptm", "ptm1", "pft", "pft1"}},
	[cst_proto_etmv4i] = {"ETMv4", {"etmv4", "etmv4i", "etm4"}},
	[cst_proto_ete] = {"ETE", {"ete"}},
	[cst_proto_stm] = {"STM", {"stm"}},
};

#define NPROTO (sizeof(protocols) / sizeof(protocols[0]))

const char *cst_protocol_name(enum cst_protocol protocol)
{
	if ((unsigned)protocol >= NPROTO || !protocols[protocol].name)
		return "?";
	return protocols[protocol].name;
}

enum cst_protocol cst_protocol_parse(const char *name)
{
	char base[32];
	size_t n;

	if (!name)
		return cst_proto_unknown;
	/* Snapshot device types carry a version: "ETM4.2", "PTM1.1". */
	n = strcspn(name, ".");
	if (n >= sizeof(base))
		return cst_proto_unknown;
	memcpy(base, name, n);
	base[n] = '\0';
	for (size_t p = 0; p < NPROTO; p++)
		for (size_t i = 0; i < 5 && protocols[p].spellings[i]; i++)
			if (!strcasecmp(base, protocols[p].spellings[i]))
				return (enum cst_protocol)p;
	return cst_proto_unknown;
}
