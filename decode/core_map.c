/* Core names to architecture and profile, as the snapshot format names cores:
 * "Cortex-A53", and the generic "ARMv8.2-A" / "ARM-AA64" patterns. */
#include "cstrace/decode.h"

#include <ctype.h>
#include <string.h>
#include <strings.h>

struct core_entry {
	const char *name;
	enum cst_core_arch arch;
	enum cst_core_profile profile;
};

/* Arm core names OpenCSD 1.3.3 knows, with the same architecture it assigns. */
static const struct core_entry cores[] = {
	{"Cortex-A78", cst_core_arch_v8, cst_core_profile_a},
	{"Cortex-A77", cst_core_arch_v8r3, cst_core_profile_a},
	{"Cortex-A76", cst_core_arch_v8r3, cst_core_profile_a},
	{"Cortex-A75", cst_core_arch_v8r3, cst_core_profile_a},
	{"Cortex-A73", cst_core_arch_v8, cst_core_profile_a},
	{"Cortex-A72", cst_core_arch_v8, cst_core_profile_a},
	{"Cortex-A65", cst_core_arch_v8r3, cst_core_profile_a},
	{"Cortex-A57", cst_core_arch_v8, cst_core_profile_a},
	{"Cortex-A55", cst_core_arch_v8r3, cst_core_profile_a},
	{"Cortex-A53", cst_core_arch_v8, cst_core_profile_a},
	{"Cortex-A35", cst_core_arch_v8, cst_core_profile_a},
	{"Cortex-A32", cst_core_arch_v8, cst_core_profile_a},
	{"Cortex-A17", cst_core_arch_v7, cst_core_profile_a},
	{"Cortex-A15", cst_core_arch_v7, cst_core_profile_a},
	{"Cortex-A12", cst_core_arch_v7, cst_core_profile_a},
	{"Cortex-A9", cst_core_arch_v7, cst_core_profile_a},
	{"Cortex-A8", cst_core_arch_v7, cst_core_profile_a},
	{"Cortex-A7", cst_core_arch_v7, cst_core_profile_a},
	{"Cortex-A5", cst_core_arch_v7, cst_core_profile_a},
	{"Cortex-R52", cst_core_arch_v8, cst_core_profile_r},
	{"Cortex-R8", cst_core_arch_v7, cst_core_profile_r},
	{"Cortex-R7", cst_core_arch_v7, cst_core_profile_r},
	{"Cortex-R5", cst_core_arch_v7, cst_core_profile_r},
	{"Cortex-R4", cst_core_arch_v7, cst_core_profile_r},
	{"Cortex-M33", cst_core_arch_v8, cst_core_profile_m},
	{"Cortex-M23", cst_core_arch_v8, cst_core_profile_m},
	{"Cortex-M0", cst_core_arch_v7, cst_core_profile_m},
	{"Cortex-M0+", cst_core_arch_v7, cst_core_profile_m},
	{"Cortex-M3", cst_core_arch_v7, cst_core_profile_m},
	{"Cortex-M4", cst_core_arch_v7, cst_core_profile_m},
};

static enum cst_core_profile profile_letter(char c)
{
	switch (toupper((unsigned char)c)) {
	case 'A': return cst_core_profile_a;
	case 'R': return cst_core_profile_r;
	case 'M': return cst_core_profile_m;
	default: return cst_core_profile_unknown;
	}
}

/* "ARMv<major>[.<minor>]-<profile>" */
static int lookup_armv(const char *name, enum cst_core_arch *arch, enum cst_core_profile *profile)
{
	const char *p = name + 4;
	int major, minor = 0;

	if (!isdigit((unsigned char)*p))
		return -cste_not_found;
	major = *p++ - '0';
	if (*p == '.') {
		if (!isdigit((unsigned char)p[1]))
			return -cste_not_found;
		minor = p[1] - '0';
		p += 2;
	}
	if (*p != '-' || p[2] != '\0' || profile_letter(p[1]) == cst_core_profile_unknown)
		return -cste_not_found;
	if (major == 7)
		*arch = cst_core_arch_v7;
	else if (major == 8 && minor < 3)
		*arch = cst_core_arch_v8;
	else if (major == 8 && minor == 3)
		*arch = cst_core_arch_v8r3;
	else if (major >= 8)
		*arch = cst_core_arch_aa64;
	else
		return -cste_not_found;
	*profile = profile_letter(p[1]);
	return 0;
}

int cst_core_lookup(const char *name, enum cst_core_arch *arch, enum cst_core_profile *profile)
{
	if (!name || !arch || !profile)
		return -cste_invalid;
	for (size_t i = 0; i < sizeof(cores) / sizeof(cores[0]); i++) {
		if (!strcasecmp(cores[i].name, name)) {
			*arch = cores[i].arch;
			*profile = cores[i].profile;
			return 0;
		}
	}
	if (!strncasecmp(name, "ARMv", 4))
		return lookup_armv(name, arch, profile);
	/* "ARM-AA64[-P]" */
	if (!strncasecmp(name, "ARM-AA64", 8) && (name[8] == '\0' || name[8] == '-')) {
		*arch = cst_core_arch_aa64;
		*profile = cst_core_profile_a;
		if (name[8] == '-' && profile_letter(name[9]) != cst_core_profile_unknown)
			*profile = profile_letter(name[9]);
		return 0;
	}
	return -cste_not_found;
}
