/* The trace-source model: every core of the table once against the values Arm's
 * Technical Reference Manuals give (written here independently, as the manuals
 * spell them), the protocol names, and the register table's layout facts. */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "cstrace/source.h"
#include "test.h"

/* name, MIDR PartNum, architecture, trace macrocell ("-" for none or not recorded),
 * and the class OpenCSD walks the core's code as (its own table for the cores it
 * names; v8r3 for later Armv8.2+ A cores, AA64 for Armv9). */
static const struct {
	const char *name;
	unsigned part;
	const char *arch;
	const char *trace;
	const char *ocsd;
} documented[] = {
	{"Cortex-A5", 0xc05, "Armv7-A", "ETMv3.5", "v7"},
	{"Cortex-A7", 0xc07, "Armv7-A", "ETMv3.5", "v7"},
	{"Cortex-A8", 0xc08, "Armv7-A", "ETMv3.3", "v7"},
	{"Cortex-A9", 0xc09, "Armv7-A", "PFTv1.0", "v7"},
	{"Cortex-A12", 0xc0d, "Armv7-A", "PFTv1.1", "v7"},
	{"Cortex-A15", 0xc0f, "Armv7-A", "PFTv1.1", "v7"},
	{"Cortex-A17", 0xc0e, "Armv7-A", "PFTv1.1", "v7"},
	{"Cortex-A32", 0xd01, "Armv8.0-A", "ETMv4.0", "v8"},
	{"Cortex-A35", 0xd04, "Armv8.0-A", "ETMv4.0", "v8"},
	{"Cortex-A53", 0xd03, "Armv8.0-A", "ETMv4.0", "v8"},
	{"Cortex-A57", 0xd07, "Armv8.0-A", "ETMv4.0", "v8"},
	{"Cortex-A72", 0xd08, "Armv8.0-A", "ETMv4.0", "v8"},
	{"Cortex-A73", 0xd09, "Armv8.0-A", "ETMv4.0", "v8"},
	{"Cortex-A55", 0xd05, "Armv8.2-A", "ETMv4.2", "v8r3"},
	{"Cortex-A65", 0xd06, "Armv8.2-A", "ETMv4.2", "v8r3"},
	{"Cortex-A75", 0xd0a, "Armv8.2-A", "ETMv4.2", "v8r3"},
	{"Cortex-A76", 0xd0b, "Armv8.2-A", "ETMv4.2", "v8r3"},
	{"Cortex-A77", 0xd0d, "Armv8.2-A", "ETMv4.2", "v8r3"},
	{"Cortex-A78", 0xd41, "Armv8.2-A", "ETMv4.2", "v8r3"},
	{"Cortex-X1", 0xd44, "Armv8.2-A", "ETMv4.2", "v8r3"},
	{"Neoverse-N1", 0xd0c, "Armv8.2-A", "ETMv4.2", "v8r3"},
	{"Cortex-A510", 0xd46, "Armv9.0-A", "ETE", "aa64"},
	{"Cortex-A710", 0xd47, "Armv9.0-A", "ETE", "aa64"},
	{"Cortex-R4", 0xc14, "Armv7-R", "ETMv3.3", "v7"},
	{"Cortex-R5", 0xc15, "Armv7-R", "ETMv3.3", "v7"},
	{"Cortex-R7", 0xc17, "Armv7-R", "-", "v7"},
	{"Cortex-R8", 0xc18, "Armv7-R", "ETMv4.0", "v7"},
	{"Cortex-R52", 0xd13, "Armv8.0-R", "ETMv4.2", "v8"},
	{"Cortex-M0", 0xc20, "Armv6-M", "-", "v7"},
	{"Cortex-M0+", 0xc60, "Armv6-M", "-", "v7"},
	{"Cortex-M3", 0xc23, "Armv7-M", "ETMv3.4", "v7"},
	{"Cortex-M4", 0xc24, "Armv7-M", "ETMv3.5", "v7"},
	{"Cortex-M23", 0xd20, "Armv8.0-M", "ETMv4.2", "v8"},
	{"Cortex-M33", 0xd21, "Armv8.0-M", "ETMv4.2", "v8"},
};

#define NDOC (sizeof(documented) / sizeof(documented[0]))

static const char *arch_name(const struct cst_core_info *c, char *buf, size_t size)
{
	static const char letters[] = {'?', 'A', 'R', 'M'};

	if (c->arch_major <= 7)
		snprintf(buf, size, "Armv%u-%c", c->arch_major, letters[c->profile]);
	else
		snprintf(buf, size, "Armv%u.%u-%c", c->arch_major, c->arch_minor,
			 letters[c->profile]);
	return buf;
}

/* The protocol a macrocell version speaks: ETMv3.x, PFTv1.x (PTM), ETMv4.x, ETE. */
static enum cst_protocol trace_protocol(const char *trace)
{
	if (!strncmp(trace, "ETMv3.", 6))
		return cst_proto_etmv3;
	if (!strncmp(trace, "PFTv1.", 6))
		return cst_proto_ptm;
	if (!strncmp(trace, "ETMv4.", 6))
		return cst_proto_etmv4i;
	if (!strcmp(trace, "ETE"))
		return cst_proto_ete;
	return cst_proto_unknown;
}

static const char *ocsd_name(enum cst_core_arch a)
{
	static const char *const n[] = {"?", "v7", "v8", "v8r3", "aa64"};

	return n[a];
}

static void test_core_table(void)
{
	size_t n = 0;

	for (size_t i = 0; cst_core_at(i); i++) {
		const struct cst_core_info *c = cst_core_at(i);
		size_t d;
		char buf[32];

		n++;
		for (d = 0; d < NDOC && strcmp(documented[d].name, c->name); d++)
			;
		if (d == NDOC) {
			test_failures++;
			fprintf(stderr, "core %s: not in the documented list\n", c->name);
			continue;
		}
		CHECK_EQ_INT(c->midr_part, documented[d].part);
		CHECK_EQ_STR(arch_name(c, buf, sizeof(buf)), documented[d].arch);
		CHECK_EQ_INT(c->protocol, trace_protocol(documented[d].trace));
		CHECK_EQ_STR(ocsd_name(c->arch), documented[d].ocsd);
		CHECK(cst_core_find(c->name) == c);
		CHECK(cst_core_by_part(c->midr_part) == c);
	}
	/* every documented core is in the table, and once */
	CHECK_EQ_INT(n, NDOC);
	for (size_t d = 0; d < NDOC; d++)
		CHECK(cst_core_find(documented[d].name) != NULL);
}

static void test_core_lookup(void)
{
	enum cst_core_arch a;
	enum cst_core_profile p;

	CHECK_EQ_INT(cst_core_lookup("cortex-a53", &a, &p), 0);
	CHECK_EQ_INT(a, cst_core_arch_v8);
	CHECK_EQ_INT(p, cst_core_profile_a);
	CHECK_EQ_INT(cst_core_lookup("Cortex-R5", &a, &p), 0);
	CHECK_EQ_INT(p, cst_core_profile_r);
	/* generic names, classed by minor version as OpenCSD's name parser does */
	CHECK_EQ_INT(cst_core_lookup("ARMv7-A", &a, &p), 0);
	CHECK_EQ_INT(a, cst_core_arch_v7);
	CHECK_EQ_INT(cst_core_lookup("ARMv8.2-A", &a, &p), 0);
	CHECK_EQ_INT(a, cst_core_arch_v8);
	CHECK_EQ_INT(cst_core_lookup("ARMv8.3-R", &a, &p), 0);
	CHECK_EQ_INT(a, cst_core_arch_v8r3);
	CHECK_EQ_INT(p, cst_core_profile_r);
	CHECK_EQ_INT(cst_core_lookup("ARMv9.0-A", &a, &p), 0);
	CHECK_EQ_INT(a, cst_core_arch_aa64);
	CHECK_EQ_INT(cst_core_lookup("ARM-AA64", &a, &p), 0);
	CHECK_EQ_INT(a, cst_core_arch_aa64);
	CHECK_EQ_INT(cst_core_lookup("ARMv8-Q", &a, &p), -cste_not_found);
	CHECK_EQ_INT(cst_core_lookup("Cortex-Z9", &a, &p), -cste_not_found);
	CHECK_EQ_INT(cst_core_lookup(NULL, &a, &p), -cste_invalid);
	CHECK(cst_core_by_part(0xfff) == NULL);
}

static void test_protocols(void)
{
	static const struct {
		const char *text;
		enum cst_protocol p;
	} reads[] = {
		{"etmv3", cst_proto_etmv3}, {"ETM3.5", cst_proto_etmv3}, {"ETMv3.3", cst_proto_etmv3},
		{"ptm", cst_proto_ptm},     {"PTM1.1", cst_proto_ptm},   {"PFT1.0", cst_proto_ptm},
		{"etmv4", cst_proto_etmv4i},{"etmv4i", cst_proto_etmv4i},{"ETM4.2", cst_proto_etmv4i},
		{"ETE", cst_proto_ete},     {"stm", cst_proto_stm},      {"STM", cst_proto_stm},
		{"ETM5", cst_proto_unknown},{"", cst_proto_unknown},     {"itm", cst_proto_unknown},
	};

	for (size_t i = 0; i < sizeof(reads) / sizeof(reads[0]); i++)
		CHECK_EQ_INT(cst_protocol_parse(reads[i].text), reads[i].p);
	CHECK_EQ_INT(cst_protocol_parse(NULL), cst_proto_unknown);
	CHECK_EQ_STR(cst_protocol_name(cst_proto_etmv3), "ETMv3");
	CHECK_EQ_STR(cst_protocol_name(cst_proto_ptm), "PTM");
	CHECK_EQ_STR(cst_protocol_name(cst_proto_etmv4i), "ETMv4");
	CHECK_EQ_STR(cst_protocol_name(cst_proto_ete), "ETE");
	CHECK_EQ_STR(cst_protocol_name(cst_proto_stm), "STM");
	CHECK_EQ_STR(cst_protocol_name(cst_proto_unknown), "?");
	CHECK_EQ_STR(cst_protocol_name((enum cst_protocol)99), "?");
	/* what is printed reads back */
	for (int p = cst_proto_etmv3; p <= cst_proto_stm; p++)
		CHECK_EQ_INT(cst_protocol_parse(cst_protocol_name((enum cst_protocol)p)), p);
}

static void test_registers(void)
{
	/* Byte offsets in the programmer's models (ETM architecture specifications). */
	static const struct {
		enum cst_protocol p;
		const char *name;
		unsigned offset;
	} offsets[] = {
		{cst_proto_etmv3, "ETMCR", 0x000},       {cst_proto_etmv3, "ETMIDR", 0x1e4},
		{cst_proto_etmv3, "ETMCCER", 0x1e8},     {cst_proto_etmv3, "ETMTRACEIDR", 0x200},
		{cst_proto_etmv4i, "TRCCONFIGR", 0x010}, {cst_proto_etmv4i, "TRCTRACEIDR", 0x040},
		{cst_proto_etmv4i, "TRCIDR0", 0x1e0},    {cst_proto_etmv4i, "TRCIDR1", 0x1e4},
		{cst_proto_etmv4i, "TRCIDR2", 0x1e8},    {cst_proto_etmv4i, "TRCIDR8", 0x180},
		{cst_proto_etmv4i, "TRCIDR13", 0x194},   {cst_proto_etmv4i, "TRCAUTHSTATUS", 0xfb8},
		{cst_proto_etmv4i, "TRCDEVARCH", 0xfbc}, {cst_proto_stm, "STMTCSR", 0xe80},
		{cst_proto_etmv3, "ETMCCR", 0x004},      {cst_proto_etmv4i, "TRCIDR4", 0x1f0},
	};
	struct cst_source_cfg cfg;

	for (size_t i = 0; i < sizeof(offsets) / sizeof(offsets[0]); i++) {
		const struct cst_source_reg *r = cst_source_reg_find(offsets[i].p, offsets[i].name);

		CHECK(r != NULL);
		if (r)
			CHECK_EQ_INT(r->word * 4, offsets[i].offset);
	}
	/* every register is found by its name, key and alias, and lands inside the
	 * register union without overlapping another */
	for (int p = cst_proto_etmv3; p <= cst_proto_stm; p++) {
		unsigned char seen[sizeof(cfg)] = {0};

		for (const struct cst_source_reg *r = cst_source_regs((enum cst_protocol)p); r->name;
		     r++) {
			CHECK(cst_source_reg_find((enum cst_protocol)p, r->key) == r);
			CHECK(cst_source_reg_find((enum cst_protocol)p, r->alias) == r);
			CHECK(strcasecmp(r->name, r->key) == 0);
			CHECK(r->offset >= offsetof(struct cst_source_cfg, regs));
			CHECK(r->offset + 4 <= sizeof(cfg));
			CHECK(!seen[r->offset]);
			seen[r->offset] = 1;
			/* an essential register has no fallback to fall back on */
			CHECK(!r->essential || r->fallback == 0);
		}
	}
	CHECK(cst_source_regs(cst_proto_unknown) == NULL);
	CHECK(cst_source_reg_find(cst_proto_etmv3, "TRCIDR0") == NULL);
	CHECK(cst_source_reg_find(cst_proto_ptm, "idr") != NULL);
	/* writes through the table land in the named field */
	memset(&cfg, 0, sizeof(cfg));
	cfg.protocol = cst_proto_ete;
	*cst_source_reg_ptr(&cfg, cst_source_reg_find(cfg.protocol, "traceid")) = 0x2a;
	CHECK_EQ_INT(cfg.regs.etmv4.trctraceidr, 0x2a);
	CHECK_EQ_INT(cst_source_trace_id(&cfg), 0x2a);
	/* identification bits */
	CHECK(cst_etmidr_is_ptm(0x411CF312));  /* Cortex-A15 PTM */
	CHECK(!cst_etmidr_is_ptm(0x410CF250)); /* Cortex-A7 ETMv3.5 */
	CHECK(cst_trcdevarch_is_ete(0x47725A13));
	/* address comparator pairs: a Juno Cortex-A57, a TC2 Cortex-A7 */
	CHECK_EQ_INT(cst_trcidr4_addr_pairs(0x11170004), 4);
	CHECK_EQ_INT(cst_etmccr_addr_pairs(0x8D014024), 4);
	CHECK_EQ_INT(cst_trcidr4_addr_pairs(cst_source_reg_find(cst_proto_etmv4i, "idr4")->fallback), 4);
	CHECK(!cst_trcdevarch_is_ete(0x47704A13));
}

static void test_cfg_parse(void)
{
	struct cst_source_cfg cfg;

	CHECK_EQ_INT(cst_source_cfg_parse(&cfg, cst_proto_etmv4i, "idr1=0x4100F402,traceid=0x12,"
							       "core=Cortex-A57", log_capture()),
		     0);
	CHECK_EQ_INT(cfg.regs.etmv4.trcidr1, 0x4100F402);
	CHECK_EQ_INT(cst_source_trace_id(&cfg), 0x12);
	CHECK_EQ_INT(cfg.arch, cst_core_arch_v8);
	CHECK_EQ_INT(cst_source_cfg_parse(&cfg, cst_proto_etmv3, "trcidr0=1", log_capture()),
		     -cste_format);
	CHECK(strstr(log_captured(), "unknown register 'trcidr0'") != NULL);
	CHECK_EQ_INT(cst_source_cfg_parse(&cfg, cst_proto_ptm, "idr=0x1ffffffff", log_capture()),
		     -cste_format);
	CHECK(strstr(log_captured(), "exceeds 32 bits") != NULL);
	CHECK_EQ_INT(cst_source_cfg_parse(&cfg, cst_proto_stm, "traceid=0x21", log_capture()), 0);
	CHECK_EQ_INT(cst_source_trace_id(&cfg), 0x21);
}

/* (moved with the core table from decode) */
static void test_lookup_names(void)
{
	enum cst_core_arch a;
	enum cst_core_profile p;

	CHECK_EQ_INT(cst_core_lookup("Cortex-A53", &a, &p), 0);
	CHECK_EQ_INT(a, cst_core_arch_v8);
	CHECK_EQ_INT(p, cst_core_profile_a);
	CHECK_EQ_INT(cst_core_lookup("cortex-a7", &a, &p), 0);
	CHECK_EQ_INT(a, cst_core_arch_v7);
	CHECK_EQ_INT(cst_core_lookup("Cortex-A55", &a, &p), 0);
	CHECK_EQ_INT(a, cst_core_arch_v8r3);
	CHECK_EQ_INT(cst_core_lookup("ARMv8.2-A", &a, &p), 0);
	CHECK_EQ_INT(a, cst_core_arch_v8);
	CHECK_EQ_INT(cst_core_lookup("ARMv9-A", &a, &p), 0);
	CHECK_EQ_INT(a, cst_core_arch_aa64);
	CHECK_EQ_INT(cst_core_lookup("ARMv7-R", &a, &p), 0);
	CHECK_EQ_INT(p, cst_core_profile_r);
	CHECK_EQ_INT(cst_core_lookup("ARM-AA64", &a, &p), 0);
	CHECK_EQ_INT(a, cst_core_arch_aa64);
	CHECK_EQ_INT(cst_core_lookup("ARMv8.2-Q", &a, &p), -cste_not_found);
	CHECK_EQ_INT(cst_core_lookup("Pentium", &a, &p), -cste_not_found);
	CHECK_EQ_INT(cst_core_lookup(NULL, &a, &p), -cste_invalid);
}

static void test_cfg_defaults(void)
{
	struct cst_source_cfg c;

	CHECK_EQ_INT(cst_source_cfg_parse(&c, cst_proto_etmv4i, "traceid=0x12,trcidr0=0x1",
					  log_capture()),
		     0);
	CHECK_EQ_INT(cst_source_trace_id(&c), 0x12);
	CHECK_EQ_INT(c.regs.etmv4.trcidr0, 1);
	CHECK_EQ_INT(c.regs.etmv4.trcidr1, 0x4100F403); /* A53 default kept */
	CHECK_EQ_INT(c.arch, cst_core_arch_v8);
	CHECK_EQ_INT(cst_source_cfg_parse(&c, cst_proto_etmv3, "etmcr=0x10001860,cpu=1",
					  log_capture()),
		     0);
	CHECK_EQ_INT(c.regs.etmv3.etmidr, 0x410CF250);
	CHECK_EQ_INT(c.cpu, 1);
	CHECK_EQ_INT(cst_source_trace_id(&c), 0x10);
	CHECK_EQ_INT(cst_source_cfg_parse(&c, cst_proto_stm, "traceid=0x20", log_capture()), 0);
	CHECK_EQ_INT(cst_source_trace_id(&c), 0x20);
	CHECK_EQ_INT(cst_source_cfg_parse(&c, cst_proto_etmv4i, "idr0", log_capture()),
		     -cste_format);
	CHECK(strstr(log_captured(), "expected key=value") != NULL);
	CHECK_EQ_INT(cst_source_cfg_parse(&c, cst_proto_etmv4i, "trcidr0=0x100000000",
					  log_capture()),
		     -cste_format);
	CHECK_EQ_INT(cst_source_cfg_parse(&c, cst_proto_etmv4i, "core=Z80", log_capture()),
		     -cste_format);
	CHECK(strstr(log_captured(), "unknown core 'Z80'") != NULL);
}

int main(void)
{
	test_core_table();
	test_core_lookup();
	test_protocols();
	test_registers();
	test_cfg_parse();
	test_lookup_names();
	test_cfg_defaults();
	return test_done();
}
