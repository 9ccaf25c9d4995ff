/* Unit tests of the boards library: system root, profile parsing and its errors,
 * decode sources from a profile, fixture trees and address-based discovery. */
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cstrace/boards.h"
#include "../../boards/board_int.h" /* tests read the profile's fields */
#include "test.h"

static char tmpdir[64];
static char boards_dir[PATH_MAX];

/* Log capture: the last error line and how many lines came. */
struct logcap {
	char last[1024];
	int lines;
};

static void cap_fn(void *ctx, enum cst_log_level level, const char *msg)
{
	struct logcap *c = ctx;

	snprintf(c->last, sizeof(c->last), "%s", msg);
	c->lines++;
}

static void write_file(const char *path, const char *text)
{
	FILE *fp = fopen(path, "w");

	if (!fp) {
		perror(path);
		exit(1);
	}
	fputs(text, fp);
	fclose(fp);
}

static void test_null_args(void)
{
	struct cst_board *b = (struct cst_board *)1;
	char buf[64];
	int64_t v;

	CHECK_EQ_INT(cst_board_load(NULL, "x", NULL), -cste_invalid);
	CHECK_EQ_INT(cst_board_load(&b, NULL, NULL), -cste_invalid);
	CHECK_EQ_INT(cst_board_find(&b, boards_dir, NULL, NULL), -cste_invalid);
	CHECK_EQ_INT(cst_board_find(&b, boards_dir, "../etc/passwd", NULL), -cste_invalid);
	CHECK_EQ_INT(cst_board_sources(NULL, NULL, NULL, 0), -cste_invalid);
	CHECK_EQ_INT(cst_board_fixture_write(NULL, "x", NULL), -cste_invalid);
	CHECK_EQ_INT(cst_sysroot_path(NULL, "/sys", buf, sizeof(buf)), -cste_invalid);
	CHECK_EQ_INT(cst_sysroot_read_s64(NULL, "/proc/x", &v), -cste_invalid);
	CHECK_EQ_INT(cst_doctor_run(NULL, NULL, NULL, NULL), -cste_invalid);
	CHECK(cst_sysroot_dir(NULL) == NULL);
	CHECK_EQ_INT(cst_board_device_by_base(NULL, 0), -cste_invalid);
	CHECK(cst_board_name(NULL) == NULL && cst_board_file(NULL) == NULL);
	CHECK_EQ_STR(cst_board_title(NULL), "");
	CHECK_EQ_INT(cst_board_ndevices(NULL), 0);
	CHECK(cst_board_device(NULL, 0) == NULL);
	CHECK_EQ_STR(cst_bdev_type_name(cst_bdev_max), "?");
	CHECK_EQ_INT(cst_fixture_fault_parse("no-such-fault"), 0);
	CHECK_EQ_INT(cst_fixture_fault_parse(NULL), 0);
	cst_board_free(NULL);
	cst_sysroot_free(NULL);
}

static int collect(void *ctx, const char *name)
{
	char *out = ctx;

	strcat(out, name);
	strcat(out, " ");
	return 0;
}

static void test_sysroot(void)
{
	struct cst_sysroot *live = NULL, *r = NULL;
	char path[PATH_MAX], buf[256], names[256] = "";
	int64_t v;

	CHECK_EQ_INT(cst_sysroot_alloc(NULL, "/"), -cste_invalid);
	CHECK_EQ_INT(cst_sysroot_alloc(&live, NULL), 0);

	CHECK(live && cst_sysroot_is_live(live));
	CHECK_EQ_STR(cst_sysroot_dir(live), "/");
	CHECK_EQ_INT(cst_sysroot_path(live, "relative", buf, sizeof(buf)), -cste_invalid);
	cst_sysroot_free(live);

	/* A root with a trailing slash joins like one without. */
	snprintf(path, sizeof(path), "%s/root/", tmpdir);
	CHECK_EQ_INT(cst_sysroot_alloc(&r, path), 0);
	CHECK(r && !cst_sysroot_is_live(r));
	CHECK(cst_sysroot_path(r, "/sys", buf, sizeof(buf)) > 0);
	snprintf(path, sizeof(path), "%s/root/sys", tmpdir);
	CHECK_EQ_STR(buf, path);
	CHECK_EQ_INT(cst_sysroot_path(r, "/sys", buf, 4), -cste_nomem);

	snprintf(path, sizeof(path), "%s/root", tmpdir);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/root/d", tmpdir);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/root/d/etm9", tmpdir);
	write_file(path, "0x410cf250\n");
	snprintf(path, sizeof(path), "%s/root/d/etm10", tmpdir);
	write_file(path, "-1\n");
	snprintf(path, sizeof(path), "%s/root/d/etm1", tmpdir);
	write_file(path, "not a number\n");
	/* An absolute link must resolve inside the root, not on the host. */
	snprintf(path, sizeof(path), "%s/root/abs", tmpdir);
	CHECK(symlink("/d", path) == 0);
	snprintf(path, sizeof(path), "%s/root/d/rel", tmpdir);
	CHECK(symlink("../d/./etm9", path) == 0);

	CHECK_EQ_INT(cst_sysroot_read(r, "/abs/etm9", buf, sizeof(buf)), 10);
	CHECK_EQ_STR(buf, "0x410cf250");
	CHECK_EQ_INT(cst_sysroot_read_s64(r, "/abs/etm9", &v), 0);
	CHECK_EQ_INT(v, 0x410cf250);
	CHECK_EQ_INT(cst_sysroot_read_s64(r, "/d/etm10", &v), 0);
	CHECK_EQ_INT(v, -1);
	CHECK_EQ_INT(cst_sysroot_read_s64(r, "/d/etm1", &v), -cste_format);
	CHECK_EQ_INT(cst_sysroot_read(r, "/d/missing", buf, sizeof(buf)), -cste_not_found);
	CHECK_EQ_INT(cst_sysroot_realpath(r, "/abs/rel", buf, sizeof(buf)), 7);
	CHECK_EQ_STR(buf, "/d/etm9");
	CHECK(cst_sysroot_exists(r, "/abs/etm10"));
	CHECK(!cst_sysroot_exists(r, "/abs/etm11"));
	CHECK_EQ_INT(cst_sysroot_write(r, "/d/etm1", "7\n"), 0);
	CHECK_EQ_INT(cst_sysroot_read_s64(r, "/d/etm1", &v), 0);
	CHECK_EQ_INT(v, 7);
	CHECK_EQ_INT(cst_sysroot_write(r, "/d/nothere", "1"), -cste_not_found);
	/* Numbers in names compare as numbers: etm9 before etm10. */
	CHECK_EQ_INT(cst_sysroot_foreach(r, "/abs", collect, names), 0);
	CHECK_EQ_STR(names, "etm1 etm9 etm10 rel ");
	CHECK_EQ_INT(cst_sysroot_foreach(r, "/nothere", collect, names), -cste_not_found);
	cst_sysroot_free(r);
}

/* Load a profile text; return the error and the logged line. */
static int load_text(const char *text, struct logcap *cap, char *file, size_t fsize)
{
	struct cst_log log = {cap_fn, cap};
	struct cst_board *b = NULL;
	int err;

	snprintf(file, fsize, "%s/bad.ini", tmpdir);
	write_file(file, text);
	memset(cap, 0, sizeof(*cap));
	err = cst_board_load(&b, file, &log);
	cst_board_free(b);
	return err;
}

#define GOOD_HEAD "[board]\nname = t\n[cpu 0]\ncore = Cortex-A7\n"

static void expect_error(const char *text, int line, const char *words)
{
	struct logcap cap;
	char file[PATH_MAX], prefix[PATH_MAX + 16];
	int err = load_text(text, &cap, file, sizeof(file));

	snprintf(prefix, sizeof(prefix), "%s:%d: ", file, line);
	CHECK_EQ_INT(err, -cste_format);
	CHECK_EQ_INT(cap.lines, 1);
	if (strncmp(cap.last, prefix, strlen(prefix)) || !strstr(cap.last, words)) {
		test_failures++;
		fprintf(stderr, "expected \"%s...%s\", got \"%s\"\n", prefix, words, cap.last);
	}
	test_checks++;
}

static void test_malformed(void)
{
	struct logcap cap;
	char file[PATH_MAX], longline[400];

	/* a minimal good profile loads */
	CHECK_EQ_INT(load_text(GOOD_HEAD "[etm e0]\nbase = 0x1000\ncpu = 0\nprotocol = etmv3\n"
				"etmidr = 0x410CF250/0xFFFFFFF0\n[etf f]\nbase = 0x2000\n"
				"[graph]\nlink = e0 -> f:0\n",
			       &cap, file, sizeof(file)),
		     0);
	CHECK_EQ_INT(cap.lines, 0);

	expect_error(GOOD_HEAD "[etm e0]\nbase = 0x1000\ncolour = red\n", 7, "unknown key 'colour'");
	expect_error(GOOD_HEAD "[etm e0]\nbase = 0x10zz\n", 6, "not an address");
	expect_error(GOOD_HEAD "[etm e0]\nthis line has no equals sign\n", 6, "syntax error");
	expect_error(GOOD_HEAD "[etm e0]\nbase = 0x1000\ncpu = 0\nprotocol = etmv3\n[graph]\n"
			       "link = e0 -> nowhere:1\n",
		     10, "'nowhere'");
	expect_error(GOOD_HEAD "[funnel f]\nbase = 0x1000\netmidr = 0x1\n", 7, "not an ETM");
	expect_error(GOOD_HEAD "[etm e0]\nbase = 0x1000\ncpu = 0\nprotocol = etmv4\n"
			       "etmidr = 0x410CF250\n",
		     5, "does not belong");
	/* the protocol must be the core's own, and the core one the table knows */
	expect_error(GOOD_HEAD "[etm e0]\nbase = 0x1000\ncpu = 0\nprotocol = ptm\n", 5,
		     "a Cortex-A7 traces with ETMv3, not PTM");
	expect_error("[board]\nname = t\n[cpu 0]\ncore = Cortex-Z9\n[etm e0]\nbase = 0x1000\n"
		     "cpu = 0\nprotocol = etmv3\n",
		     5, "core 'Cortex-Z9' is not one cstrace knows");
	/* a device defined twice: named at its second header (found by sorting the
	 * names once the file is read: a search per device was quadratic) */
	expect_error(GOOD_HEAD "[cti a]\nbase = 0x1000\n[cti b]\nbase = 0x2000\n[cti a]\n"
			       "base = 0x3000\n",
		     9, "device 'a' is defined twice");
	/* a required key missing: reported at the section's line */
	expect_error(GOOD_HEAD "[etf f]\ncapacity = 4K\n", 5, "no base address");
	expect_error(GOOD_HEAD "[etm e0]\nbase = 0x1000\n[etf f]\nbase = 0x1000\n", 8,
		     "already used by e0");
	expect_error(GOOD_HEAD "[gizmo g]\nbase = 0x1\n", 5, "unknown kind 'gizmo'");
	expect_error(GOOD_HEAD "[board]\ntrace_id = random\n", 6, "trace_id");
	expect_error("[board]\ntitle = no name\n[etf f]\nbase = 0x1\n", 1, "no name");
	memset(longline, 'x', sizeof(longline) - 1);
	longline[sizeof(longline) - 1] = '\0';
	{
		char text[1024];

		snprintf(text, sizeof(text), GOOD_HEAD "[etf f]\nbase = 0x1\nnote = %s\n", longline);
		expect_error(text, 7, "line too long");
	}
	/* an indented continuation extends a text value */
	{
		struct cst_log log = {cap_fn, &cap};
		struct cst_board *b = NULL;

		snprintf(file, sizeof(file), "%s/cont.ini", tmpdir);
		write_file(file, GOOD_HEAD "[etf f]\nbase = 0x1\nnote = first half\n   second half\n");
		memset(&cap, 0, sizeof(cap));
		CHECK_EQ_INT(cst_board_load(&b, file, &log), 0);
		if (b)
			CHECK_EQ_STR(b->devices[0].note, "first half second half");
		cst_board_free(b);
	}
	CHECK_EQ_INT(cst_board_find((struct cst_board **)&cap, tmpdir, "nonexistent", NULL),
		     -cste_not_found);
}

struct names {
	char list[512];
	int n;
};

static int add_name(void *ctx, const char *name)
{
	struct names *n = ctx;

	snprintf(n->list + strlen(n->list), sizeof(n->list) - strlen(n->list), "%s ", name);
	n->n++;
	return 0;
}

/* Does device @from reach device @to following the links? */
static bool reaches(const struct cst_board *b, int from, int to, int depth)
{
	if (from == to)
		return true;
	if (depth > 16)
		return false;
	for (int i = 0; i < b->nlinks; i++)
		if (b->links[i].from == from && reaches(b, b->links[i].to, to, depth + 1))
			return true;
	return false;
}

/* Every shipped profile loads, and says something coherent. */
static void test_shipped_profiles(void)
{
	struct names n = {"", 0};

	CHECK_EQ_INT(cst_boards_foreach(boards_dir, add_name, &n), 0);
	CHECK_EQ_STR(n.list, "juno-r0 juno-r1 juno-r2 stm32mp157 ");
	for (char *name = strtok(n.list, " "); name; name = strtok(NULL, " ")) {
		struct cst_board *b = NULL;
		int netm = 0, preferred = -1;

		CHECK_EQ_INT(cst_board_find(&b, boards_dir, name, NULL), 0);
		if (!b)
			continue;
		CHECK_EQ_STR(b->name, name);
		/* what callers, who see the board as a handle, are given */
		CHECK_EQ_STR(cst_board_name(b), name);
		CHECK_EQ_STR(cst_board_title(b), b->title);
		CHECK(strstr(cst_board_file(b), name) != NULL);
		CHECK_EQ_INT(cst_board_ndevices(b), b->ndevices);
		CHECK(cst_board_device(b, 0) == &b->devices[0]);
		CHECK(cst_board_device(b, b->ndevices - 1) == &b->devices[b->ndevices - 1]);
		CHECK(cst_board_device(b, b->ndevices) == NULL);
		CHECK(cst_board_device(b, -1) == NULL);
		CHECK(b->ncompatibles > 0);
		CHECK(b->nkconfig > 0);
		for (int i = 0; i < b->ndevices; i++)
			if (b->devices[i].preferred)
				preferred = i;
		CHECK(preferred >= 0);
		for (int i = 0; i < b->ndevices; i++) {
			const struct cst_board_device *d = &b->devices[i];
			bool cpu_known = false;

			if (d->type != cst_bdev_etm)
				continue;
			netm++;
			for (int c = 0; c < b->ncpus; c++)
				cpu_known |= b->cpus[c].cpu == d->cpu;
			CHECK(cpu_known);
			CHECK(d->nidregs > 0);
			/* every trace source reaches the sink perf should use */
			if (preferred >= 0 && !reaches(b, i, preferred, 0)) {
				test_failures++;
				fprintf(stderr, "%s: %s does not reach the preferred sink\n", name,
					d->name);
			}
			test_checks++;
		}
		CHECK_EQ_INT(netm, b->ncpus);
		cst_board_free(b);
	}
}

static void test_sources(void)
{
	struct cst_board *b = NULL;
	struct cst_source_cfg src[8];
	struct cst_board_sources_opts o = {.sz = sizeof(o)};

	CHECK_EQ_INT(cst_board_find(&b, boards_dir, "juno-r1", NULL), 0);
	if (!b)
		return;
	CHECK_EQ_INT(cst_board_sources(b, NULL, src, 8), 6);
	for (int i = 0; i < 6; i++) {
		CHECK_EQ_INT(src[i].cpu, i);
		CHECK_EQ_INT(src[i].protocol, cst_proto_etmv4i);
		CHECK_EQ_INT(src[i].regs.etmv4.trctraceidr, 0x10 + 2 * i);
		CHECK_EQ_INT(src[i].regs.etmv4.trcidr0, 0x28000EA1);
		CHECK_EQ_INT(src[i].arch, cst_core_arch_v8);
	}
	CHECK_EQ_STR(src[0].core_name, "Cortex-A53");
	CHECK_EQ_STR(src[1].core_name, "Cortex-A57");
	CHECK_EQ_INT(src[1].regs.etmv4.trcidr1, 0x4100F402);
	CHECK_EQ_INT(src[0].regs.etmv4.trcidr1, 0x4100F403);
	/* fewer slots than sources: the count says how many there are */
	CHECK_EQ_INT(cst_board_sources(b, NULL, src, 2), 6);
	CHECK_EQ_INT(cst_board_sources(b, NULL, NULL, 0), 6);
	CHECK_EQ_INT(cst_board_sources(b, NULL, NULL, 1), -cste_invalid);
	o.cpu_mask = 1u << 2;
	CHECK_EQ_INT(cst_board_sources(b, &o, src, 8), 1);
	CHECK_EQ_INT(src[0].cpu, 2);
	CHECK_EQ_INT(src[0].regs.etmv4.trctraceidr, 0x14);
	o.cpu_mask = 1ull << 40;
	CHECK_EQ_INT(cst_board_sources(b, &o, src, 8), -cste_not_found);
	o.cpu_mask = 0;
	o.override_policy = true;
	o.policy = cst_trace_id_sequential;
	CHECK_EQ_INT(cst_board_sources(b, &o, src, 8), 6);
	CHECK_EQ_INT(src[5].regs.etmv4.trctraceidr, 0x15);
	o.policy = cst_trace_id_dynamic;
	CHECK_EQ_INT(cst_board_sources(b, &o, src, 8), -cste_unsupported);
	o.override_policy = false;
	o.with_stm = true;
	CHECK_EQ_INT(cst_board_sources(b, &o, src, 8), 7);
	CHECK_EQ_INT(src[6].protocol, cst_proto_stm);
	CHECK_EQ_INT(src[6].regs.stm.stmtcsr, 0x00A00005);
	cst_board_free(b);

	CHECK_EQ_INT(cst_board_find(&b, boards_dir, "stm32mp157", NULL), 0);
	if (!b)
		return;
	CHECK_EQ_INT(cst_board_sources(b, NULL, src, 8), 2);
	CHECK_EQ_INT(src[1].protocol, cst_proto_etmv3);
	CHECK_EQ_INT(src[1].arch, cst_core_arch_v7);
	CHECK_EQ_INT(src[1].profile, cst_core_profile_a);
	CHECK_EQ_INT(src[1].regs.etmv3.etmidr, 0x410CF250);
	CHECK_EQ_INT(src[1].regs.etmv3.etmccer, 0x344008F2);
	CHECK_EQ_INT(src[1].regs.etmv3.etmtraceidr, 0x12);
	CHECK_EQ_STR(src[1].core_name, "Cortex-A7");
	cst_board_free(b);
}

static void count_check(void *ctx, const struct cst_check *c)
{
	int *problems = ctx;

	if (c->verdict == cst_verdict_problem) {
		(*problems)++;
		fprintf(stderr, "  (problem %s: %s: %s)\n", c->id, c->subject, c->detail);
	}
}

/* Devices are found by base address whatever order they probed in. */
static void test_fixture_discovery(void)
{
	struct cst_fixture_opts fo = {.sz = sizeof(fo)};
	struct cst_doctor_opts dopts = {.sz = sizeof(dopts), .boards_dir = boards_dir};
	struct cst_board *b = NULL, *found = NULL;
	struct cst_sys_device devs[64];
	char dir[PATH_MAX], name[64];
	struct cst_sysroot *r;
	int n, problems = 0;

	CHECK_EQ_INT(cst_board_find(&b, boards_dir, "juno-r1", NULL), 0);
	if (!b)
		return;
	for (int rev = 0; rev < 2; rev++) {
		fo.reverse_probe = rev;
		snprintf(dir, sizeof(dir), "%s/fx%d", tmpdir, rev);
		CHECK_EQ_INT(cst_board_fixture_write(b, dir, &fo), 0);
		CHECK_EQ_INT(cst_sysroot_alloc(&r, dir), 0);
		CHECK_EQ_INT(cst_sys_device_by_base(r, 0x20010000, name, sizeof(name)), 0);
		CHECK_EQ_STR(name, rev ? "tmc_etf1" : "tmc_etf0");
		CHECK_EQ_INT(cst_sys_device_by_base(r, 0x20140000, name, sizeof(name)), 0);
		CHECK_EQ_STR(name, rev ? "tmc_etf0" : "tmc_etf1");
		CHECK_EQ_INT(cst_sys_device_by_base(r, 0x20070000, name, sizeof(name)), 0);
		CHECK_EQ_STR(name, "tmc_etr0");
		CHECK_EQ_INT(cst_sys_device_by_base(r, 0x23040000, name, sizeof(name)), 0);
		CHECK_EQ_STR(name, "etm0");
		CHECK_EQ_INT(cst_sys_device_by_base(r, 0x12345000, name, sizeof(name)), -cste_not_found);
		n = cst_sys_devices(r, devs, 64);
		CHECK_EQ_INT(n, b->ndevices);
		for (int i = 0; i < n && i < 64; i++)
			CHECK(cst_board_device_by_base(b, devs[i].base) >= 0);
		CHECK_EQ_INT(cst_board_detect(&found, r, boards_dir, NULL), 0);
		if (found)
			CHECK_EQ_STR(found->name, "juno-r1");
		cst_board_free(found);
		found = NULL;
		problems = 0;
		CHECK_EQ_INT(cst_doctor_run(r, &dopts, count_check, &problems), cst_doctor_ok);
		CHECK_EQ_INT(problems, 0);
		cst_sysroot_free(r);
	}
	/* Real Juno DTs list the revision first, then the family: the most specific
	 * profile must win, and a bare "arm,juno" is an r0. */
	{
		static const char r1[] = "arm,juno-r1\0arm,juno\0arm,vexpress";
		static const char r0[] = "arm,juno\0arm,vexpress";
		char path[PATH_MAX + 64];
		FILE *fp;

		snprintf(dir, sizeof(dir), "%s/fx0", tmpdir);
		snprintf(path, sizeof(path), "%s/proc/device-tree/compatible", dir);
		CHECK_EQ_INT(cst_sysroot_alloc(&r, dir), 0);
		for (int k = 0; k < 2; k++) {
			fp = fopen(path, "w");
			CHECK(fp != NULL);
			if (!fp)
				break;
			fwrite(k ? r0 : r1, 1, k ? sizeof(r0) : sizeof(r1), fp);
			fclose(fp);
			CHECK_EQ_INT(cst_board_detect(&found, r, boards_dir, NULL), 0);
			if (found)
				CHECK_EQ_STR(found->name, k ? "juno-r0" : "juno-r1");
			cst_board_free(found);
			found = NULL;
		}
		cst_sysroot_free(r);
	}

	/* A fault is seen by the library too (the CLI tests cover every fault). */
	fo.reverse_probe = false;
	fo.faults = cst_fault_missing_sink;
	snprintf(dir, sizeof(dir), "%s/fx-missing", tmpdir);
	CHECK_EQ_INT(cst_board_fixture_write(b, dir, &fo), 0);
	CHECK_EQ_INT(cst_sysroot_alloc(&r, dir), 0);
	CHECK_EQ_INT(cst_sys_device_by_base(r, 0x20070000, name, sizeof(name)), -cste_not_found);
	problems = 0;
	CHECK_EQ_INT(cst_doctor_run(r, &dopts, count_check, &problems), cst_doctor_problems);
	CHECK(problems >= 1);
	cst_sysroot_free(r);
	cst_board_free(b);

	/* An empty tree with no device tree: no CoreSight. */
	snprintf(dir, sizeof(dir), "%s/empty", tmpdir);
	mkdir(dir, 0755);
	CHECK_EQ_INT(cst_sysroot_alloc(&r, dir), 0);
	CHECK_EQ_INT(cst_board_detect(&found, r, boards_dir, NULL), -cste_not_found);
	CHECK_EQ_INT(cst_doctor_run(r, &dopts, NULL, NULL), cst_doctor_no_coresight);
	CHECK_EQ_INT(cst_sys_devices(r, devs, 64), -cste_not_found);
	cst_sysroot_free(r);
}

int main(void)
{
	const char *src = getenv("CSTRACE_SOURCE_DIR");

	if (!src)
		TEST_SKIP("CSTRACE_SOURCE_DIR not set (run through ctest)");
	snprintf(boards_dir, sizeof(boards_dir), "%s/boards", src);
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/cstrace-boards-XXXXXX");
	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return 1;
	}
	test_null_args();
	test_sysroot();
	test_malformed();
	test_shipped_profiles();
	test_sources();
	test_fixture_discovery();
	if (!test_failures) {
		char cmd[PATH_MAX + 16];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
		if (system(cmd) != 0)
			fprintf(stderr, "could not remove %s\n", tmpdir);
	} else {
		fprintf(stderr, "left %s for inspection\n", tmpdir);
	}
	return test_done();
}
