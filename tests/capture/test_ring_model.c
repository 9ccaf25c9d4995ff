/* The ring consumer (capture/ring.c) driven by the kernel model (kmodel.c). The model
 * stands in for ring_buffer.c and the ETF driver because no cs_etm hardware exists here. */
#include "test.h"

#include <pthread.h>
#include <stdint.h>

#include "cstrace/capture.h"
#include "kmodel.h"

/* An output that keeps everything: the AUX bytes in order and the AUX records. */
struct collect {
	uint8_t *bytes;
	uint64_t len, cap;
	uint64_t first_offset, next_offset;
	uint64_t chunks;
	bool contiguous;
	struct { uint64_t offset, size, flags; } aux[4096];
	uint64_t naux;
	uint64_t records;
	int fail_after; /* refuse the n-th chunk (disk full); 0 = never */
};

static int col_record(void *ctx, const uint8_t *rec, size_t len)
{
	struct collect *c = ctx;

	c->records++;
	if (cst_le32(rec) == 11 && c->naux < 4096) {
		c->aux[c->naux].offset = cst_le64(rec + 8);
		c->aux[c->naux].size = cst_le64(rec + 16);
		c->aux[c->naux].flags = cst_le64(rec + 24);
		c->naux++;
	}
	return 0;
}

static int col_aux(void *ctx, const struct cst_aux_chunk *ch)
{
	struct collect *c = ctx;

	if (c->fail_after && c->chunks + 1 >= (uint64_t)c->fail_after)
		return -cste_io;
	if (!c->chunks)
		c->first_offset = ch->offset;
	else if (ch->offset != c->next_offset)
		c->contiguous = false;
	c->next_offset = ch->offset + ch->size;
	c->chunks++;
	if (c->len + ch->size > c->cap) {
		c->cap = (c->len + ch->size) * 2;
		c->bytes = realloc(c->bytes, c->cap);
	}
	memcpy(c->bytes + c->len, ch->data, ch->size);
	c->len += ch->size;
	return 0;
}

static struct cst_ring *ring_for(struct kmodel *m, struct collect *c)
{
	struct cst_ring_desc d = kmodel_desc(m);
	struct cst_ring_output out = {.sz = sizeof(out), .record = col_record, .aux = col_aux, .ctx = c};

	memset(c, 0, sizeof(*c));
	c->contiguous = true;
	struct cst_ring *r = NULL;

	cst_ring_alloc(&r, &d, &out);
	return r;
}

/* A deterministic slice length in [1, max]. */
static uint64_t slice(uint64_t *state, uint64_t max)
{
	*state = *state * 6364136223846793005ULL + 1442695040888963407ULL;
	return 1 + (*state >> 33) % max;
}

static void test_args(void)
{
	struct kmodel_opts o = {.data_size = 4096, .aux_size = 4096, .sink_size = 1024};
	struct kmodel *m = kmodel_new(&o);
	struct cst_ring_desc d = kmodel_desc(m);
	struct cst_ring_output out = {.sz = sizeof(out)};
	struct cst_ring_stats st;
	struct cst_ring *r = (void *)1;

	CHECK_EQ_INT(cst_ring_alloc(NULL, &d, &out), -cste_invalid);
	CHECK_EQ_INT(cst_ring_alloc(&r, NULL, &out), -cste_invalid);
	CHECK(r == NULL);
	CHECK_EQ_INT(cst_ring_alloc(&r, &d, NULL), -cste_invalid);
	d.aux_size = 3000;
	CHECK_EQ_INT(cst_ring_alloc(&r, &d, &out), -cste_invalid);
	d = kmodel_desc(m);
	d.ops = NULL;
	CHECK_EQ_INT(cst_ring_alloc(&r, &d, &out), -cste_invalid);
	CHECK_EQ_INT(cst_ring_read(NULL), -cste_invalid);
	CHECK_EQ_INT(cst_ring_snapshot(NULL), -cste_invalid);
	CHECK_EQ_INT(cst_ring_get_stats(NULL, &st), -cste_invalid);
	d = kmodel_desc(m);
	CHECK_EQ_INT(cst_ring_alloc(&r, &d, &out), 0);
	CHECK(r != NULL);
	CHECK_EQ_INT(cst_ring_snapshot(r), -cste_invalid); /* not overwrite mode */
	CHECK_EQ_INT(cst_ring_read(r), 0);
	cst_ring_free(r);
	kmodel_free(m);
}

/* The reader polls on the watermark only, as production does: with a sink no
 * bigger than half the AUX area minus a frame, nothing may be lost. */
static void test_keeps_up(void)
{
	struct kmodel_opts o = {.data_size = 1 << 16, .aux_size = 1 << 14, .sink_size = 8192 - 16,
				.pid = 42, .tid = 42, .cpu = 1, .id = 7};
	struct kmodel *m = kmodel_new(&o);
	struct collect c;
	struct cst_ring *r = ring_for(m, &c);
	struct cst_ring_stats st;
	uint64_t rng = 1, wakeups = 0;

	for (int i = 0; i < 3000; i++) {
		kmodel_sched_in(m);
		kmodel_run(m, slice(&rng, o.sink_size));
		kmodel_sched_out(m);
		if (kmodel_poll(m)) {
			wakeups++;
			CHECK(cst_ring_read(r) >= 0);
		}
	}
	CHECK(cst_ring_read(r) >= 0);
	cst_ring_get_stats(r, &st);
	const struct kmodel_stats *ks = kmodel_stats(m);
	CHECK(wakeups > 10);
	CHECK_EQ_INT(ks->dropped, 0);
	CHECK_EQ_INT(ks->truncated, 0);
	CHECK_EQ_INT(ks->untraced, 0);
	CHECK_EQ_INT(st.truncated, 0);
	CHECK_EQ_INT(st.reenables, 0);
	CHECK_EQ_INT(st.aux_bytes, ks->generated);
	CHECK_EQ_INT(st.aux_record_bytes, ks->generated);
	CHECK_EQ_INT(st.aux_records, ks->aux_records);
	CHECK_EQ_INT(c.len, ks->generated);
	CHECK(c.contiguous);
	CHECK_EQ_INT(c.first_offset, 0);
	uint64_t bad = 0;
	for (uint64_t k = 0; k < c.len; k++)
		bad += c.bytes[k] != kmodel_pattern(k);
	CHECK_EQ_INT(bad, 0);
	/* every AUX record lies inside what was copied, back to back */
	uint64_t pos = 0;
	for (uint64_t k = 0; k < c.naux; k++) {
		CHECK_EQ_INT(c.aux[k].offset, pos);
		pos += c.aux[k].size;
	}
	CHECK_EQ_INT(pos, c.len);
	cst_ring_free(r);
	kmodel_free(m);
	free(c.bytes);
}

/* A reader too slow for the trace rate: the sink truncates. Every count the
 * consumer reports must match what the model did. */
static void test_slow_reader(void)
{
	static const uint8_t barrier[16] = {0xff, 0xff, 0xff, 0x7f, 0xff, 0xff, 0xff, 0x7f,
					    0xff, 0xff, 0xff, 0x7f, 0xff, 0xff, 0xff, 0x7f};
	struct kmodel_opts o = {.data_size = 1 << 16, .aux_size = 1 << 13, .sink_size = 4096,
				.pid = 5, .tid = 5, .cpu = 0, .id = 3};
	struct kmodel *m = kmodel_new(&o);
	struct collect c;
	struct cst_ring *r = ring_for(m, &c);
	struct cst_ring_stats st;
	uint64_t rng = 99, reads = 0, disabled_seen = 0;

	for (int i = 0; i < 2000; i++) {
		kmodel_sched_in(m);
		kmodel_run(m, slice(&rng, 2 * o.sink_size));
		kmodel_sched_out(m);
		if (i % 7 == 6) {
			disabled_seen += !kmodel_enabled(m);
			CHECK(cst_ring_read(r) >= 0);
			reads++;
			CHECK(kmodel_enabled(m)); /* re-enabled after every stop */
		}
	}
	CHECK(cst_ring_read(r) >= 0);
	cst_ring_get_stats(r, &st);
	const struct kmodel_stats *ks = kmodel_stats(m);
	uint64_t stream_len;
	const uint8_t *stream = kmodel_aux_stream(m, &stream_len);

	CHECK(ks->truncated > 0);
	CHECK(disabled_seen > 0);
	CHECK(ks->untraced > 0);
	CHECK_EQ_INT(st.truncated, ks->truncated);
	CHECK_EQ_INT(st.empty_truncated, ks->empty_truncated);
	CHECK_EQ_INT(st.aux_records, ks->aux_records);
	CHECK_EQ_INT(st.aux_bytes, ks->to_aux);
	CHECK_EQ_INT(st.aux_record_bytes, ks->to_aux);
	CHECK(st.reenables >= ks->truncated);
	CHECK_EQ_INT(ks->enables, st.reenables);
	/* what the consumer wrote is exactly what the kernel put in AUX */
	CHECK_EQ_INT(c.len, stream_len);
	CHECK(c.len == stream_len && !memcmp(c.bytes, stream, c.len));
	CHECK(c.contiguous);
	/* and the trace bytes in it are in ETM order, lost ones skipped */
	uint64_t prev = 0, bad = 0, kept = 0;
	for (uint64_t k = 0; k < c.len; k++) {
		uint64_t seq = kmodel_stream_seq(m, k);
		if (seq == UINT64_MAX)
			continue;
		bad += (kept && seq <= prev) || c.bytes[k] != kmodel_pattern(seq);
		prev = seq;
		kept++;
	}
	CHECK_EQ_INT(bad, 0);
	CHECK_EQ_INT(kept + ks->barrier_bytes, c.len);
	CHECK_EQ_INT(kept + ks->dropped + ks->barrier_bytes, ks->generated);
	/* each truncated record with data begins with a barrier packet */
	uint64_t nb = 0;
	for (uint64_t k = 0; k < c.naux; k++) {
		if ((c.aux[k].flags & 1) && c.aux[k].size >= 16) {
			CHECK(!memcmp(c.bytes + c.aux[k].offset, barrier, 16));
			nb++;
		}
	}
	CHECK(nb > 0);
	cst_ring_free(r);
	kmodel_free(m);
	free(c.bytes);
}

/* The data ring overflows: the kernel drops sideband and says how many. */
static void test_data_ring_loss(void)
{
	struct kmodel_opts o = {.data_size = 512, .aux_size = 1 << 16, .sink_size = 64,
				.id = 9};
	struct kmodel *m = kmodel_new(&o);
	struct collect c;
	struct cst_ring *r = ring_for(m, &c);
	struct cst_ring_stats st;

	for (int i = 0; i < 500; i++) {
		kmodel_sched_in(m);
		kmodel_run(m, 32);
		kmodel_sched_out(m);
		if (i % 50 == 49)
			CHECK(cst_ring_read(r) >= 0);
	}
	CHECK(cst_ring_read(r) >= 0);
	/* one more record so the kernel gets to write its pending LOST */
	kmodel_sched_in(m);
	kmodel_run(m, 32);
	kmodel_sched_out(m);
	CHECK(cst_ring_read(r) >= 0);
	cst_ring_get_stats(r, &st);
	const struct kmodel_stats *ks = kmodel_stats(m);
	CHECK(ks->records_lost > 0);
	CHECK_EQ_INT(st.lost_events, ks->records_lost);
	CHECK_EQ_INT(st.lost_records, ks->lost_records);
	CHECK_EQ_INT(st.aux_records + ks->records_lost, ks->aux_records);
	CHECK_EQ_INT(st.aux_bytes, ks->generated); /* AUX itself lost nothing */
	cst_ring_free(r);
	kmodel_free(m);
	free(c.bytes);
}

/* Snapshot mode: for every position of the head in the AUX area and many
 * amounts written since the last snapshot, the extracted bytes are exactly the
 * newest ones, and what was overwritten is counted. */
static void test_snapshot_wraps(void)
{
	const uint64_t aux = 256, sink = 64;
	static const uint64_t amounts[] = {0, 1, 15, 16, 64, 200, 255, 256, 257, 300, 700};
	uint64_t fails = 0, total = 0;

	for (uint64_t p = 0; p < aux; p++) {
		struct kmodel_opts o = {.data_size = 1 << 16, .aux_size = aux, .sink_size = sink,
					.overwrite = true};
		struct kmodel *m = kmodel_new(&o);
		struct collect c;
		struct cst_ring *r = ring_for(m, &c);
		struct cst_ring_stats st;
		uint64_t overwritten = 0, head = p;

		/* move the head to p */
		for (uint64_t done = 0; done < p;) {
			uint64_t n = p - done < sink ? p - done : sink;
			kmodel_sched_in(m);
			kmodel_run(m, n);
			kmodel_sched_out(m);
			done += n;
		}
		cst_ring_snapshot(r);
		overwritten += p > aux ? p - aux : 0;
		for (size_t a = 0; a < sizeof(amounts) / sizeof(amounts[0]); a++) {
			uint64_t before = c.len, slen, want;
			for (uint64_t done = 0; done < amounts[a];) {
				uint64_t n = amounts[a] - done < sink - 3 ? amounts[a] - done : sink - 3;
				kmodel_sched_in(m);
				kmodel_run(m, n);
				kmodel_sched_out(m);
				done += n;
			}
			int64_t got = cst_ring_snapshot(r);
			const uint8_t *stream = kmodel_aux_stream(m, &slen);
			want = amounts[a] < aux ? amounts[a] : aux;
			overwritten += amounts[a] - want;
			head += amounts[a];
			total++;
			if (got != (int64_t)want || c.len - before != want ||
			    memcmp(c.bytes + before, stream + slen - want, want) ||
			    (want && c.next_offset != head)) {
				if (fails++ < 5)
					fprintf(stderr, "snapshot p=%llu amount=%llu: got %lld\n",
						(unsigned long long)p, (unsigned long long)amounts[a],
						(long long)got);
			}
		}
		cst_ring_get_stats(r, &st);
		CHECK_EQ_INT(st.snapshot_overwritten, overwritten);
		CHECK_EQ_INT(st.truncated, 0); /* ETF: no TRUNCATED in snapshot mode */
		cst_ring_free(r);
		kmodel_free(m);
		free(c.bytes);
	}
	CHECK_EQ_INT(fails, 0);
	CHECK_EQ_INT(total, aux * 11);
}

/* TRUNCATED disables the event; the consumer's read enables it again. */
static void test_truncated_reenable(void)
{
	struct kmodel_opts o = {.data_size = 1 << 14, .aux_size = 1024, .sink_size = 1024};
	struct kmodel *m = kmodel_new(&o);
	struct collect c;
	struct cst_ring *r = ring_for(m, &c);
	struct cst_ring_stats st;

	kmodel_sched_in(m);
	kmodel_run(m, 1024);
	kmodel_sched_out(m);
	CHECK(!kmodel_enabled(m));
	CHECK(kmodel_poll(m)); /* TRUNCATED always wakes the reader */
	kmodel_sched_in(m);
	kmodel_run(m, 100); /* runs untraced */
	CHECK_EQ_INT(kmodel_stats(m)->untraced, 100);
	CHECK(cst_ring_read(r) > 0);
	CHECK(kmodel_enabled(m));
	kmodel_run(m, 64); /* the enable started the running event again */
	kmodel_sched_out(m);
	CHECK(cst_ring_read(r) > 0);
	cst_ring_get_stats(r, &st);
	CHECK_EQ_INT(st.truncated, 1);
	CHECK_EQ_INT(st.reenables, 1);
	CHECK_EQ_INT(c.naux, 2);
	CHECK_EQ_INT(c.aux[0].flags & 1, 1);
	CHECK_EQ_INT(c.aux[0].size, (1024 - 1) & ~15u);
	CHECK_EQ_INT(c.aux[1].flags, 0);
	CHECK_EQ_INT(c.aux[1].size, 64);
	/* the 64 bytes after the re-enable are the ETM's bytes 1024..1087 */
	CHECK(c.len >= 64);
	uint64_t bad = 0;
	for (int k = 0; k < 64; k++)
		bad += c.bytes[c.len - 64 + k] != kmodel_pattern(1024 + k);
	CHECK_EQ_INT(bad, 0);
	cst_ring_free(r);
	kmodel_free(m);
	free(c.bytes);
}

/* A refused re-enable is counted, not fatal: draining goes on. */
static void test_reenable_refused(void)
{
	struct kmodel_opts o = {.data_size = 1 << 14, .aux_size = 1024, .sink_size = 1024,
				.refuse_enable = true};
	struct kmodel *m = kmodel_new(&o);
	struct collect c;
	struct cst_ring *r = ring_for(m, &c);
	struct cst_ring_stats st;

	kmodel_sched_in(m);
	kmodel_run(m, 1024);
	kmodel_sched_out(m);
	CHECK(cst_ring_read(r) > 0);
	CHECK(!kmodel_enabled(m));
	cst_ring_get_stats(r, &st);
	CHECK_EQ_INT(st.truncated, 1);
	CHECK_EQ_INT(st.reenables, 1);
	CHECK_EQ_INT(st.reenable_failures, 1);
	CHECK(!st.output_failed);
	cst_ring_free(r);
	kmodel_free(m);
	free(c.bytes);
}

/* Flags the sink sets are counted; output errors are counted, not hidden. */
static void test_flags_and_output_failure(void)
{
	struct kmodel_opts o = {.data_size = 1 << 14, .aux_size = 1 << 14, .sink_size = 1024};
	struct kmodel *m = kmodel_new(&o);
	struct collect c;
	struct cst_ring *r = ring_for(m, &c);
	struct cst_ring_stats st;

	kmodel_inject_flags(m, 0x08);
	kmodel_sched_in(m);
	kmodel_run(m, 100);
	kmodel_sched_out(m);
	kmodel_inject_flags(m, 0x04);
	kmodel_sched_in(m);
	kmodel_run(m, 50);
	kmodel_sched_out(m);
	CHECK_EQ_INT(cst_ring_read(r), 48 /* ITRACE_START */ + 2 * 64 /* AUX */ + 150);
	c.fail_after = 2;
	kmodel_sched_in(m);
	kmodel_run(m, 300);
	kmodel_sched_out(m);
	CHECK_EQ_INT(cst_ring_read(r), -cste_io);
	kmodel_sched_in(m);
	kmodel_run(m, 20);
	kmodel_sched_out(m);
	CHECK(cst_ring_read(r) >= 0);
	cst_ring_get_stats(r, &st);
	CHECK_EQ_INT(st.collision, 1);
	CHECK_EQ_INT(st.partial, 1);
	CHECK(st.output_failed);
	CHECK_EQ_INT(st.unwritten_bytes, 300 + 20 + 64 /* the AUX record after failure */);
	CHECK_EQ_INT(c.len, 150);
	cst_ring_free(r);
	kmodel_free(m);
	free(c.bytes);
}

/* A 32-bit kernel: aux_head is an unsigned long that wraps at 4 GiB. */
static void test_kernel32_wrap(void)
{
	struct kmodel_opts o = {.data_size = 1 << 16, .aux_size = 1 << 12, .sink_size = 1024,
				.start_head = 0xfffff800u, .kernel32 = true};
	struct kmodel *m = kmodel_new(&o);
	struct collect c;
	struct cst_ring *r = ring_for(m, &c);
	struct cst_ring_stats st;

	for (int i = 0; i < 40; i++) {
		kmodel_sched_in(m);
		kmodel_run(m, 1000);
		kmodel_sched_out(m);
		if (kmodel_poll(m))
			CHECK(cst_ring_read(r) >= 0);
	}
	CHECK(cst_ring_read(r) >= 0);
	cst_ring_get_stats(r, &st);
	CHECK_EQ_INT(kmodel_stats(m)->dropped, 0);
	CHECK_EQ_INT(c.len, 40000);
	CHECK(st.aux_head < 0x100000000ULL && st.aux_head > 0);
	uint64_t bad = 0;
	for (uint64_t k = 0; k < c.len; k++)
		bad += c.bytes[k] != kmodel_pattern(k);
	CHECK_EQ_INT(bad, 0);
	cst_ring_free(r);
	kmodel_free(m);
	free(c.bytes);
}

/* The split 64-bit read never returns a torn value while another thread
 * stores 64-bit values whose two halves are equal. */
struct tear {
	uint64_t value;
	volatile int stop;
};

static void *tear_writer(void *arg)
{
	struct tear *t = arg;

	for (uint64_t k = 0; !t->stop; k++)
		__atomic_store_n(&t->value, k * 0x100000001ULL, __ATOMIC_RELEASE);
	return NULL;
}

static void test_tear_free(void)
{
	struct tear t = {0, 0};
	pthread_t th;
	uint64_t torn = 0;

	if (pthread_create(&th, NULL, tear_writer, &t))
		return;
	for (int i = 0; i < 2000000; i++) {
		uint64_t v = cst_ring_load_u64_split(&t.value);
		torn += (uint32_t)v != (uint32_t)(v >> 32);
	}
	t.stop = 1;
	pthread_join(th, NULL);
	CHECK_EQ_INT(torn, 0);
	uint64_t v = 0x1234567890abcdefULL;
	CHECK(cst_ring_load_u64(&v) == v);
	CHECK(cst_ring_load_u64_split(&v) == v);
}

int main(void)
{
	test_args();
	test_keeps_up();
	test_slow_reader();
	test_data_ring_loss();
	test_snapshot_wraps();
	test_truncated_reenable();
	test_reenable_refused();
	test_flags_and_output_failure();
	test_kernel32_wrap();
	test_tear_free();
	return test_done();
}
