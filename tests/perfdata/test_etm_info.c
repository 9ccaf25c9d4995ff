/* The cs_etm AUXTRACE_INFO codec: every header version with every block kind
 * (ETMv3, PTM, ETMv4, ETE) encodes to perf's layout, parses back field for field,
 * re-encodes to the same bytes, and has its trace IDs patched in place in a file. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cstrace/perfdata.h"
#include "test.h"

/* Distinct values in every parameter, so a swapped or dropped one shows. */
static void block(struct cst_perf_etm_cpu *c, uint64_t magic, uint64_t cpu, uint32_t seed)
{
	memset(c, 0, sizeof(*c));
	c->magic = magic;
	c->cpu = cpu;
	if (magic == CST_PERF_ETMV3_MAGIC) {
		c->etmcr = seed + 1;
		c->etmtraceidr = 0x10 + (uint32_t)cpu;
		c->etmccer = seed + 3;
		/* ETMIDR bits 8-9 set: a PTM */
		c->etmidr = seed & 1 ? 0x411cf312 : 0x410cf250;
		return;
	}
	c->trcconfigr = seed + 1;
	c->trctraceidr = 0x10 + (uint32_t)cpu;
	c->trcidr0 = seed + 3;
	c->trcidr1 = seed + 4;
	c->trcidr2 = seed + 5;
	c->trcidr8 = seed + 6;
	c->trcauthstatus = seed + 7;
	if (magic == CST_PERF_ETE_MAGIC)
		c->trcdevarch = seed + 8;
	c->ts_source = 0x100000000ull + seed; /* needs all 64 bits */
}

/* The words perf writes for the block, by hand, in cs-etm.h's order. */
static uint64_t expect_words(const struct cst_perf_etm_cpu *c, uint64_t version, uint64_t *w)
{
	uint64_t k = 0;
	bool v3 = c->magic == CST_PERF_ETMV3_MAGIC, ete = c->magic == CST_PERF_ETE_MAGIC;

	w[k++] = c->magic;
	w[k++] = c->cpu;
	if (version)
		w[k++] = v3 ? 4 : ete ? 9 : 8;
	if (v3) {
		w[k++] = c->etmcr;
		w[k++] = c->etmtraceidr;
		w[k++] = c->etmccer;
		w[k++] = c->etmidr;
		return k;
	}
	w[k++] = c->trcconfigr;
	w[k++] = c->trctraceidr;
	w[k++] = c->trcidr0;
	w[k++] = c->trcidr1;
	w[k++] = c->trcidr2;
	w[k++] = c->trcidr8;
	w[k++] = c->trcauthstatus;
	if (ete)
		w[k++] = c->trcdevarch;
	if (version)
		w[k++] = c->ts_source;
	return k;
}

static void same_block(const struct cst_perf_etm_cpu *a, const struct cst_perf_etm_cpu *b,
		       uint64_t version)
{
	CHECK_EQ_INT(a->magic, b->magic);
	CHECK_EQ_INT(a->cpu, b->cpu);
	CHECK_EQ_INT(a->etmcr, b->etmcr);
	CHECK_EQ_INT(a->etmtraceidr, b->etmtraceidr);
	CHECK_EQ_INT(a->etmccer, b->etmccer);
	CHECK_EQ_INT(a->etmidr, b->etmidr);
	CHECK_EQ_INT(a->trcconfigr, b->trcconfigr);
	CHECK_EQ_INT(a->trctraceidr, b->trctraceidr);
	CHECK_EQ_INT(a->trcidr0, b->trcidr0);
	CHECK_EQ_INT(a->trcidr1, b->trcidr1);
	CHECK_EQ_INT(a->trcidr2, b->trcidr2);
	CHECK_EQ_INT(a->trcidr8, b->trcidr8);
	CHECK_EQ_INT(a->trcauthstatus, b->trcauthstatus);
	CHECK_EQ_INT(a->trcdevarch, b->trcdevarch);
	if (version && a->magic != CST_PERF_ETMV3_MAGIC) {
		CHECK(b->has_ts_source);
		CHECK(a->ts_source == b->ts_source);
	} else {
		CHECK(!b->has_ts_source);
	}
	CHECK_EQ_INT(b->is_ptm, a->magic == CST_PERF_ETMV3_MAGIC && (a->etmidr & 0x300) == 0x300);
}

static void test_round_trip(void)
{
	static const uint64_t kinds[] = {CST_PERF_ETMV3_MAGIC, CST_PERF_ETMV3_MAGIC,
					 CST_PERF_ETMV4_MAGIC, CST_PERF_ETE_MAGIC};

	for (uint64_t version = 0; version <= 2; version++) {
		struct cst_perf_etm_cpu cpus[4];
		struct cst_perf_etm_info info = {.version = version, .pmu_type = 11,
						 .snapshot = version == 1, .cpus = cpus};
		uint64_t want[128], n = 3;
		uint8_t bytes[128 * 8], again[128 * 8];

		/* version 0 has no ETE layout */
		info.nr_cpu = version == 0 ? 3 : 4;
		for (uint32_t i = 0; i < info.nr_cpu; i++)
			block(&cpus[i], kinds[i], 2 * i + 1, 0x1000 * (i + 1) + (i == 1));
		want[0] = version;
		want[1] = (11ull << 32) | info.nr_cpu;
		want[2] = version == 1;
		for (uint32_t i = 0; i < info.nr_cpu; i++)
			n += expect_words(&cpus[i], version, want + n);
		CHECK_EQ_INT(cst_perf_etm_info_words(&info), n);
		CHECK_EQ_INT(cst_perf_etm_info_encode(&info, bytes, n - 1), -cste_invalid);
		CHECK_EQ_INT(cst_perf_etm_info_encode(&info, bytes, n), 0);
		for (uint64_t k = 0; k < n; k++)
			if (cst_le64(bytes + 8 * k) != want[k]) {
				test_failures++;
				fprintf(stderr, "version %llu word %llu: 0x%llx, perf writes 0x%llx\n",
					(unsigned long long)version, (unsigned long long)k,
					(unsigned long long)cst_le64(bytes + 8 * k),
					(unsigned long long)want[k]);
			}
		{
			struct cst_perf_etm_info back;

			CHECK_EQ_INT(cst_perf_etm_info_parse(&back, bytes, n, log_capture()), 0);
			CHECK_EQ_INT(back.version, version);
			CHECK_EQ_INT(back.pmu_type, 11);
			CHECK_EQ_INT(back.snapshot, version == 1);
			CHECK_EQ_INT(back.nr_cpu, info.nr_cpu);
			for (uint32_t i = 0; i < back.nr_cpu && i < info.nr_cpu; i++)
				same_block(&cpus[i], &back.cpus[i], version);
			CHECK_EQ_INT(cst_perf_etm_info_encode(&back, again, n), 0);
			CHECK(memcmp(bytes, again, n * 8) == 0);
			cst_perf_etm_info_fini(&back);
		}
	}
	/* what cannot be encoded */
	{
		struct cst_perf_etm_cpu c;
		struct cst_perf_etm_info info = {.version = 0, .nr_cpu = 1, .cpus = &c};
		uint8_t b[64];

		block(&c, CST_PERF_ETE_MAGIC, 0, 1);
		CHECK_EQ_INT(cst_perf_etm_info_words(&info), 0);
		CHECK_EQ_INT(cst_perf_etm_info_encode(&info, b, 8), -cste_invalid);
		info.version = 3;
		c.magic = CST_PERF_ETMV4_MAGIC;
		CHECK_EQ_INT(cst_perf_etm_info_words(&info), 0);
		info.version = 1;
		c.magic = 0x1234;
		CHECK_EQ_INT(cst_perf_etm_info_words(&info), 0);
		CHECK_EQ_INT(cst_perf_etm_info_words(NULL), 0);
	}
}

/* Patching rewrites only the trace IDs asked for, in every version. */
static void test_patch(const char *dir)
{
	for (uint64_t version = 0; version <= 2; version++) {
		struct cst_perf_etm_cpu cpus[3];
		struct cst_perf_etm_info info = {.version = version, .nr_cpu = 3, .cpus = cpus};
		struct cst_perf_writer *w = NULL;
		struct cst_perf_reader *r = NULL;
		struct cst_perf_etm_info back;
		uint8_t ids[8] = {0x20, 0, 0x22, 0x13};
		bool have[8] = {true, false, true, true};
		char path[512];

		block(&cpus[0], CST_PERF_ETMV4_MAGIC, 0, 0x100);
		block(&cpus[1], CST_PERF_ETMV3_MAGIC, 1, 0x200);
		block(&cpus[2], CST_PERF_ETMV3_MAGIC, 3, 0x301); /* a PTM, ID already right */
		snprintf(path, sizeof(path), "%s/patch%llu.data", dir, (unsigned long long)version);
		CHECK_EQ_INT(cst_perf_writer_open(&w, path, NULL), 0);
		if (!w)
			return;
		CHECK_EQ_INT(cst_perf_writer_etm_info(w, &info), 0);
		CHECK_EQ_INT(cst_perf_writer_finish(w), 0);
		cst_perf_writer_free(w);
		/* cpu 0 changes, cpu 1 is not asked for, cpu 3 already holds 0x13 */
		CHECK_EQ_INT(cst_perf_etm_info_patch_ids(path, ids, have, 8), 1);
		CHECK_EQ_INT(cst_perf_reader_open(&r, path, NULL), 0);
		if (!r)
			return;
		CHECK_EQ_INT(cst_perf_reader_etm_info(r, &back), 0);
		if (back.nr_cpu == 3) {
			CHECK_EQ_INT(back.cpus[0].trctraceidr, 0x20);
			CHECK_EQ_INT(back.cpus[0].trcconfigr, 0x101); /* its neighbour untouched */
			CHECK_EQ_INT(back.cpus[0].trcidr0, 0x103);
			CHECK_EQ_INT(back.cpus[1].etmtraceidr, 0x11);
			CHECK_EQ_INT(back.cpus[2].etmtraceidr, 0x13);
		}
		cst_perf_etm_info_fini(&back);
		cst_perf_reader_free(r);
		CHECK_EQ_INT(cst_perf_etm_info_patch_ids(path, ids, have, 8), 0);
		unlink(path);
	}
	CHECK_EQ_INT(cst_perf_etm_info_patch_ids(NULL, NULL, NULL, 0), -cste_invalid);
}

int main(void)
{
	char dir[] = "/tmp/cstrace-etminfo-XXXXXX";

	if (!mkdtemp(dir))
		return 1;
	test_round_trip();
	test_patch(dir);
	rmdir(dir);
	return test_done();
}
