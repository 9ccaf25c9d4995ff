/* The Arm core table: each core's MIDR part number, architecture version, profile
 * and trace macrocell as its Technical Reference Manual gives them, and the
 * OpenCSD architecture derived from those. Also reads the generic names
 * ("ARMv8.2-A", "ARM-AA64") that perf and snapshot writers use. */
#include "cstrace/source.h"

#include <ctype.h>
#include <string.h>
#include <strings.h>

#define A cst_core_profile_a
#define R cst_core_profile_r
#define M cst_core_profile_m
#define V3 cst_proto_etmv3
#define PTM cst_proto_ptm
#define V4 cst_proto_etmv4i
#define ETE cst_proto_ete
#define NONE cst_proto_unknown

/* OpenCSD walks code by architecture class, not version: every Armv7 (and Armv6-M)
 * core is v7; Armv8.2 and later A-profile cores are v8r3 (as OpenCSD's own table
 * files Cortex-A55 to A77); other Armv8 cores are v8; Armv9 is AArch64 only. */
#define CORE(n, part, maj, min, prof, proto)                                                  \
	{n, part, maj, min, prof, proto,                                                       \
	 (maj) <= 7                                    ? cst_core_arch_v7                      \
	 : (maj) == 8 && (prof) == A && (min) >= 2 ? cst_core_arch_v8r3                     \
	 : (maj) == 8                                  ? cst_core_arch_v8                      \
						       : cst_core_arch_aa64}

static const struct cst_core_info cores[] = {
	CORE("Cortex-A5", 0xc05, 7, 0, A, V3),
	CORE("Cortex-A7", 0xc07, 7, 0, A, V3),
	CORE("Cortex-A8", 0xc08, 7, 0, A, V3),
	CORE("Cortex-A9", 0xc09, 7, 0, A, PTM),
	CORE("Cortex-A12", 0xc0d, 7, 0, A, PTM),
	CORE("Cortex-A15", 0xc0f, 7, 0, A, PTM),
	CORE("Cortex-A17", 0xc0e, 7, 0, A, PTM),
	CORE("Cortex-A32", 0xd01, 8, 0, A, V4),
	CORE("Cortex-A35", 0xd04, 8, 0, A, V4),
	CORE("Cortex-A53", 0xd03, 8, 0, A, V4),
	CORE("Cortex-A57", 0xd07, 8, 0, A, V4),
	CORE("Cortex-A72", 0xd08, 8, 0, A, V4),
	CORE("Cortex-A73", 0xd09, 8, 0, A, V4),
	CORE("Cortex-A55", 0xd05, 8, 2, A, V4),
	CORE("Cortex-A65", 0xd06, 8, 2, A, V4),
	CORE("Cortex-A75", 0xd0a, 8, 2, A, V4),
	CORE("Cortex-A76", 0xd0b, 8, 2, A, V4),
	CORE("Cortex-A77", 0xd0d, 8, 2, A, V4),
	CORE("Cortex-A78", 0xd41, 8, 2, A, V4),
	CORE("Cortex-X1", 0xd44, 8, 2, A, V4),
	CORE("Neoverse-N1", 0xd0c, 8, 2, A, V4),
	CORE("Cortex-A510", 0xd46, 9, 0, A, ETE),
	CORE("Cortex-A710", 0xd47, 9, 0, A, ETE),
	CORE("Cortex-R4", 0xc14, 7, 0, R, V3),
	CORE("Cortex-R5", 0xc15, 7, 0, R, V3),
	CORE("Cortex-R7", 0xc17, 7, 0, R, NONE), /* its macrocell is not recorded here */
	CORE("Cortex-R8", 0xc18, 7, 0, R, V4),
	CORE("Cortex-R52", 0xd13, 8, 0, R, V4),
	CORE("Cortex-M0", 0xc20, 6, 0, M, NONE), /* no ETM (an MTB at most) */
	CORE("Cortex-M0+", 0xc60, 6, 0, M, NONE),
	CORE("Cortex-M3", 0xc23, 7, 0, M, V3),
	CORE("Cortex-M4", 0xc24, 7, 0, M, V3),
	CORE("Cortex-M23", 0xd20, 8, 0, M, V4),
	CORE("Cortex-M33", 0xd21, 8, 0, M, V4),
};

#define NCORES (sizeof(cores) / sizeof(cores[0]))

const struct cst_core_info *cst_core_at(size_t i)
{
	return i < NCORES ? &cores[i] : NULL;
}

const struct cst_core_info *cst_core_find(const char *name)
{
	for (size_t i = 0; name && i < NCORES; i++)
		if (!strcasecmp(cores[i].name, name))
			return &cores[i];
	return NULL;
}

const struct cst_core_info *cst_core_by_part(unsigned part)
{
	for (size_t i = 0; i < NCORES; i++)
		if (cores[i].midr_part == part)
			return &cores[i];
	return NULL;
}

static enum cst_core_profile profile_letter(char c)
{
	switch (toupper((unsigned char)c)) {
	case 'A': return cst_core_profile_a;
	case 'R': return cst_core_profile_r;
	case 'M': return cst_core_profile_m;
	default: return cst_core_profile_unknown;
	}
}

/* "ARMv<major>[.<minor>]-<profile>", classed as OpenCSD's name parser classes it
 * (by the minor version alone: v8.3 and later are v8r3). */
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
	const struct cst_core_info *core;

	if (!name || !arch || !profile)
		return -cste_invalid;
	core = cst_core_find(name);
	if (core) {
		*arch = core->arch;
		*profile = core->profile;
		return 0;
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
