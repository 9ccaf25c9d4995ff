/* The snapshot writer: what it writes reads back through decode's snapshot reader
 * with the same sources (protocol, every register, trace ID, core), buffer and
 * memory images; files are 0600; bad arguments are refused. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cstrace/decode.h"
#include "cstrace/snapshot.h"
#include "test.h"

static void fill(struct cst_source_cfg *c, enum cst_protocol p, int cpu, uint32_t seed)
{
	memset(c, 0, sizeof(*c));
	c->protocol = p;
	c->cpu = cpu;
	snprintf(c->name, sizeof(c->name), "ETM_%d", cpu);
	/* a distinct value in every register, so a swapped or lost one shows */
	for (const struct cst_source_reg *r = cst_source_regs(p); r->name; r++)
		*cst_source_reg_ptr(c, r) = seed + r->word;
	if (cst_protocol_is_v4(p))
		c->regs.etmv4.trctraceidr = 0x10 + 2 * (uint32_t)cpu;
	else
		c->regs.etmv3.etmtraceidr = 0x10 + 2 * (uint32_t)cpu;
	if (p == cst_proto_ete)
		c->regs.etmv4.trcdevarch = 0x47705a13; /* ETE */
	if (p == cst_proto_ptm)
		c->regs.etmv3.etmidr = 0x411cf312;
}

static mode_t mode_of(const char *dir, const char *file)
{
	char path[512];
	struct stat st;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	return stat(path, &st) == 0 ? st.st_mode & 0777 : 0;
}

/* The device file @file holds the line "type=@type". */
static bool file_has(const char *dir, const char *file, const char *type)
{
	char path[512], line[256], want[64];
	bool found = false;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	snprintf(want, sizeof(want), "type=%s\n", type);
	f = fopen(path, "r");
	while (f && !found && fgets(line, sizeof(line), f))
		found = !strcmp(line, want);
	if (f)
		fclose(f);
	return found;
}

static void round_trip(const char *dir, enum cst_protocol p0, enum cst_protocol p1,
		       const char *core, const char *type0, const char *type1)
{
	CST_OPTS(cst_snap_writer_opts, o);
	struct cst_snap_writer *w = NULL;
	struct cst_source_cfg src[2];
	static const uint8_t code[64] = {1, 2, 3};
	static const uint8_t trace[32] = {0, 0, 0, 0x80};
	struct cst_trace *t;
	int c0, c1;

	fill(&src[0], p0, 0, 0x1000);
	fill(&src[1], p1, 1, 0x2000);
	CHECK_EQ_INT(cst_snap_writer_open(&w, dir, &o), 0);
	if (!w)
		return;
	CHECK_EQ_INT(cst_snap_writer_write_file(w, "trace.bin", trace, sizeof(trace)), 0);
	CHECK_EQ_INT(cst_snap_writer_set_buffer(w, "ETB_0", "trace.bin"), 0);
	c0 = cst_snap_writer_add_core(w, &(struct cst_snap_core){
		.name = "cpu_0", .file = "cpu_0.ini", .type = core, .regs = "PC=0x1000\n",
		.source_file = "etm_0.ini", .source = &src[0]});
	c1 = cst_snap_writer_add_core(w, &(struct cst_snap_core){
		.name = "cpu_1", .file = "cpu_1.ini", .type = core, .source_file = "etm_1.ini",
		.source = &src[1]});
	CHECK_EQ_INT(c0, 0);
	CHECK_EQ_INT(c1, 1);
	CHECK_EQ_INT(cst_snap_writer_add_dump(w, c0, "mem_0.bin", 0x400000, code, sizeof(code)), 0);
	/* the second core names the same dump again, without writing it */
	CHECK_EQ_INT(cst_snap_writer_add_dump(w, c1, "mem_0.bin", 0x400000, NULL, sizeof(code)), 0);
	CHECK_EQ_INT(cst_snap_writer_add_dump(w, 5, "x.bin", 0, NULL, 1), -cste_invalid);
	CHECK_EQ_INT(cst_snap_writer_finish(w), 0);
	cst_snap_writer_free(w);
	/* each source's device type names its protocol as snapshot readers expect */
	CHECK(file_has(dir, "etm_0.ini", type0));
	CHECK(file_has(dir, "etm_1.ini", type1));
	CHECK_EQ_INT(mode_of(dir, "trace.bin"), 0600);
	CHECK_EQ_INT(mode_of(dir, "mem_0.bin"), 0600);
	CHECK_EQ_INT(mode_of(dir, "etm_1.ini"), 0600);

	CHECK_EQ_INT(cst_trace_alloc(&t), 0);
	CHECK_EQ_INT(cst_trace_load_snapshot(t, dir, NULL), 0);
	CHECK_EQ_INT(cst_trace_nsources(t), 2);
	for (int i = 0; i < cst_trace_nsources(t) && i < 2; i++) {
		const struct cst_source_cfg *got = cst_trace_source(t, i);

		CHECK_EQ_INT(got->protocol, src[i].protocol);
		CHECK_EQ_STR(got->name, src[i].name);
		CHECK_EQ_STR(got->core_name, core);
		CHECK_EQ_INT(got->cpu, i);
		CHECK_EQ_INT(cst_source_trace_id(got), cst_source_trace_id(&src[i]));
		for (const struct cst_source_reg *r = cst_source_regs(got->protocol); r->name; r++) {
			uint32_t want = cst_source_reg_get(&src[i], r);

			/* TRCDEVARCH is written for ETE only: an ETMv4 reads the fallback */
			if (r->ete_only && got->protocol != cst_proto_ete)
				want = r->fallback;
			if (cst_source_reg_get(got, r) != want) {
				test_failures++;
				fprintf(stderr, "%s of %s: 0x%x, wrote 0x%x\n", r->name, got->name,
					cst_source_reg_get(got, r), want);
			}
			test_checks++;
		}
	}
	CHECK_EQ_INT(cst_trace_nbuffers(t), 1);
	if (cst_trace_nbuffers(t) == 1)
		CHECK_EQ_STR(cst_trace_buffer(t, 0)->name, "ETB_0");
	/* listed twice, mapped once */
	CHECK_EQ_INT(cst_trace_nimages(t), 1);
	if (cst_trace_nimages(t) == 1) {
		CHECK_EQ_INT(cst_trace_image(t, 0)->address, 0x400000);
		CHECK_EQ_INT(cst_trace_image(t, 0)->length, sizeof(code));
	}
	cst_trace_free(t);
}

int main(void)
{
	char dir[] = "/tmp/cstrace-snapw-XXXXXX", sub[64], cmd[128];
	struct cst_snap_writer *w = NULL;

	if (!mkdtemp(dir))
		return 1;
	snprintf(sub, sizeof(sub), "%s/v4", dir);
	round_trip(sub, cst_proto_etmv4i, cst_proto_ete, "Cortex-A53", "ETM4", "ETE");
	snprintf(sub, sizeof(sub), "%s/v3", dir);
	round_trip(sub, cst_proto_etmv3, cst_proto_ptm, "Cortex-A7", "ETM3.5", "PTM1.1");
	/* refused: no buffer, unknown protocol, a file that cannot be created */
	CHECK_EQ_INT(cst_snap_writer_open(&w, sub, NULL), 0);
	CHECK_EQ_INT(cst_snap_writer_finish(w), -cste_invalid);
	{
		struct cst_source_cfg none = {.protocol = cst_proto_unknown};

		CHECK_EQ_INT(cst_snap_writer_add_core(w, &(struct cst_snap_core){
				     .name = "c", .file = "c.ini", .type = "Cortex-A53",
				     .source_file = "s.ini", .source = &none}),
			     -cste_invalid);
	}
	CHECK_EQ_INT(cst_snap_writer_write_file(w, "no/such/dir/x.bin", "x", 1), -cste_io);
	cst_snap_writer_free(w);
	CHECK_EQ_INT(cst_snap_writer_open(&w, "/proc/no-such-dir/x", NULL), -cste_io);
	/* atomic: the unfinished writer above left no temporary, and v3 is whole */
	snprintf(cmd, sizeof(cmd), "ls -d %s/v3.tmp.* 2>/dev/null | grep -q .", dir);
	CHECK(system(cmd) != 0);
	CHECK(file_has(sub, "etm_1.ini", "PTM1.1"));
	/* writing v3 again keeps the previous snapshot as v3.old; a third time,
	 * with v3.old there, is refused before anything is written */
	round_trip(sub, cst_proto_etmv4i, cst_proto_ete, "Cortex-A53", "ETM4", "ETE");
	{
		char old[96];

		snprintf(old, sizeof(old), "%s.old", sub);
		CHECK(file_has(old, "etm_1.ini", "PTM1.1"));
		CHECK(file_has(sub, "etm_1.ini", "ETE"));
	}
	w = NULL;
	CHECK_EQ_INT(cst_snap_writer_open(&w, sub, NULL), -cste_invalid);
	CHECK(w == NULL);
	CHECK_EQ_INT(cst_snap_writer_open(NULL, dir, NULL), -cste_invalid);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", dir);
	return test_done();
}
