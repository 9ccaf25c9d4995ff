/* Cross-check the board profiles' expected ID registers against real captures:
 * TC2's Cortex-A7 ETMs (STM32MP157 profile) and juno_r1_1's A53/A57 ETMs (Juno profiles). */
#include <ini.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cstrace/boards.h"
#include "../../boards/board_int.h" /* tests read the profile's fields */
#include "test.h"

#define MAX_REGS 32

/* What one snapshot ini file says: device name/type and its registers. */
struct snap_dev {
	char name[64];
	char type[64];
	int nregs;
	struct {
		char name[32];
		uint32_t value;
	} regs[MAX_REGS];
};

static int dev_handler(void *user, const char *section, const char *name, const char *value)
{
	struct snap_dev *d = user;
	uint64_t v;

	if (!strcasecmp(section, "device")) {
		if (!strcasecmp(name, "name"))
			snprintf(d->name, sizeof(d->name), "%s", value);
		else if (!strcasecmp(name, "type"))
			snprintf(d->type, sizeof(d->type), "%s", value);
	} else if (!strcasecmp(section, "regs") && d->nregs < MAX_REGS) {
		/* "ETMIDR(0x079)" -> "etmidr" */
		size_t n = strcspn(name, "(");

		if (cst_parse_u64(value, &v) < 0)
			return 1; /* PC(size:64) and the like: not ID registers */
		snprintf(d->regs[d->nregs].name, sizeof(d->regs[0].name), "%.*s", (int)n, name);
		for (char *p = d->regs[d->nregs].name; *p; p++)
			*p = (char)(*p >= 'A' && *p <= 'Z' ? *p + 32 : *p);
		d->regs[d->nregs].value = (uint32_t)v;
		d->nregs++;
	}
	return 1;
}

static int load_dev(const char *dir, const char *file, struct snap_dev *d)
{
	char path[PATH_MAX + 80];

	memset(d, 0, sizeof(*d));
	snprintf(path, sizeof(path), "%s/%s", dir, file);
	return ini_parse(path, dev_handler, d);
}

static const uint32_t *snap_reg(const struct snap_dev *d, const char *name)
{
	for (int i = 0; i < d->nregs; i++)
		if (!strcmp(d->regs[i].name, name))
			return &d->regs[i].value;
	return NULL;
}

/* [core_trace_sources] cpu_N = ETM_M: find the core type of the CPU traced by @etm. */
struct map_ctx {
	const char *etm;
	char cpu_file[64];
};

static int map_handler(void *user, const char *section, const char *name, const char *value)
{
	struct map_ctx *m = user;

	if (!strcasecmp(section, "core_trace_sources") && !strcmp(value, m->etm))
		snprintf(m->cpu_file, sizeof(m->cpu_file), "%s.ini", name);
	return 1;
}

/* How many of @b's ETMs of core @core have all their checked registers matching
 * @cap; checks fail for any that does not. Returns the registers compared. */
static int compare(const struct cst_board *b, const char *core, const struct snap_dev *cap,
		   bool expect_match)
{
	int compared = 0;

	for (int i = 0; i < b->ndevices; i++) {
		const struct cst_board_device *d = &b->devices[i];
		bool all = true;

		if (d->type != cst_bdev_etm || strcasecmp(d->source.core_name, core))
			continue;
		for (int r = 0; r < d->nidregs; r++) {
			const uint32_t *v = snap_reg(cap, d->idregs[r].name);

			if (!v) {
				fprintf(stderr, "%s: capture %s lacks %s\n", b->name, cap->name,
					d->idregs[r].name);
				all = false;
				continue;
			}
			compared++;
			if ((*v & d->idregs[r].mask) != d->idregs[r].value) {
				all = false;
				if (expect_match)
					fprintf(stderr, "%s %s: %s capture 0x%08x, profile 0x%08x/0x%08x\n",
						b->name, d->name, d->idregs[r].name, *v, d->idregs[r].value,
						d->idregs[r].mask);
			}
		}
		CHECK(all == expect_match);
	}
	return compared;
}

static struct cst_board *board(const char *dir, const char *name)
{
	struct cst_board *b = NULL;

	CHECK_EQ_INT(cst_board_find(&b, dir, name, NULL), 0);
	return b;
}

int main(void)
{
	const char *src = getenv("CSTRACE_SOURCE_DIR");
	const char *shared = getenv("CSTRACE_SHARED_TESTDATA");
	char boards_dir[PATH_MAX], tc2[PATH_MAX - 128], juno[PATH_MAX - 128], file[64];
	struct cst_board *stm = NULL, *r0 = NULL, *r1 = NULL, *r2 = NULL;
	struct snap_dev d;
	int compared = 0, a7 = 0, a15 = 0, v4 = 0;

	if (!src || !shared)
		TEST_SKIP("run through ctest (CSTRACE_SOURCE_DIR, CSTRACE_SHARED_TESTDATA)");
	snprintf(boards_dir, sizeof(boards_dir), "%s/boards", src);
	snprintf(tc2, sizeof(tc2), "%s/opencsd/TC2", shared);
	snprintf(juno, sizeof(juno), "%s/opencsd/juno_r1_1", shared);
	if (load_dev(tc2, "device_5.ini", &d) != 0 || load_dev(juno, "device_6.ini", &d) != 0)
		TEST_SKIP("shared captures not found under %s/opencsd", shared);

	stm = board(boards_dir, "stm32mp157");
	r0 = board(boards_dir, "juno-r0");
	r1 = board(boards_dir, "juno-r1");
	r2 = board(boards_dir, "juno-r2");
	if (!stm || !r0 || !r1 || !r2)
		return test_done();

	/* TC2: ETM_0..2 trace Cortex-A7s (ETMv3.5), PTM_0..1 Cortex-A15s: the A7
	 * values must satisfy the STM32MP157 profile, the A15 (PTM) ones must not. */
	for (int n = 5; n <= 9; n++) {
		snprintf(file, sizeof(file), "device_%d.ini", n);
		CHECK_EQ_INT(load_dev(tc2, file, &d), 0);
		if (!strncmp(d.name, "ETM_", 4)) {
			CHECK_EQ_STR(d.type, "ETM3.5");
			compared += compare(stm, "Cortex-A7", &d, true);
			a7++;
		} else if (!strncmp(d.name, "PTM_", 4)) {
			compared += compare(stm, "Cortex-A7", &d, false);
			a15++;
		}
	}
	CHECK_EQ_INT(a7, 3);
	CHECK_EQ_INT(a15, 2);

	/* juno_r1_1: six ETMv4 sources; their cores come from the snapshot's own
	 * cpu_N.ini through [core_trace_sources]. */
	for (int n = 6; n <= 11; n++) {
		struct map_ctx m = {0};
		struct snap_dev cpu;
		char trace_ini[PATH_MAX];


		snprintf(file, sizeof(file), "device_%d.ini", n);
		CHECK_EQ_INT(load_dev(juno, file, &d), 0);
		CHECK_EQ_STR(d.type, "ETM4");
		m.etm = d.name;
		snprintf(trace_ini, sizeof(trace_ini), "%s/trace.ini", juno);
		CHECK_EQ_INT(ini_parse(trace_ini, map_handler, &m), 0);
		CHECK(m.cpu_file[0] != '\0');
		if (!m.cpu_file[0] || load_dev(juno, m.cpu_file, &cpu) != 0)
			continue;
		/* r1 holds the exact values; r0 and r2 mask what may differ. */
		compared += compare(r1, cpu.type, &d, true);
		compared += compare(r0, cpu.type, &d, true);
		compared += compare(r2, cpu.type, &d, true);
		/* and an A53 capture is not mistaken for an A57 on r1 (TRCIDR1 revision) */
		compare(r1, !strcmp(cpu.type, "Cortex-A53") ? "Cortex-A57" : "Cortex-A53", &d, false);
		v4++;
	}
	CHECK_EQ_INT(v4, 6);
	/* Something was really compared: 3 A7 x 2 registers plus, for the six Juno
	 * ETMs, 5 registers on each matching profile ETM. */
	CHECK(compared >= 3 * 2 * 2 + 6 * 5);
	printf("%d register comparisons\n", compared);
	cst_board_free(stm);
	cst_board_free(r0);
	cst_board_free(r1);
	cst_board_free(r2);
	return test_done();
}
