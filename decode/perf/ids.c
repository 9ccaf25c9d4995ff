/* Trace IDs the metadata gets wrong: the IDs each CPU's frames carry against those its
 * CPUs are given, mended where unambiguous (perf 6.1 decodes only what CPUs claim). */
#include "perf_int.h"

#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Of each ring's first buffer: enough for the IDs its trace starts with, little
 * enough that opening a 1 GiB file stays cheap. */
#define SCAN_BYTES (64u * 1024u)
/* rings looked at: more CPUs than AUXTRACE_INFO can hold, or more threads than
 * are worth a read each, are not looked at at all */
#define MAX_RINGS 256

/* A CPU's ring (per-CPU buffers) or a thread's (per-thread): the IDs the start
 * of its trace carries. */
struct idring {
	bool per_thread;
	uint32_t key;             /* cpu or tid */
	const struct auxbuf *first;
	uint64_t bytes, nbufs;
	uint64_t ids[2];
	int ci;                   /* per-CPU: its index in AUXTRACE_INFO, or -1 */
};

static bool has(const uint64_t *set, unsigned id)
{
	return (set[id / 64] >> (id % 64)) & 1;
}

static void add(uint64_t *set, unsigned id)
{
	set[id / 64] |= 1ull << (id % 64);
}

/* The rings, each with the IDs of the start of its first buffer. False when
 * there are too many to look at, or the file cannot be read again. */
static bool scan(struct cst_perf_input *in, struct idring *r, unsigned *nr)
{
	int fd = open(in->path, O_RDONLY | O_CLOEXEC);
	unsigned n = 0;

	if (fd < 0)
		return false;
	for (uint64_t i = 0; i < in->nbufs; i++) {
		const struct auxbuf *b = &in->bufs[i];
		bool pt = b->cpu == UINT32_MAX;
		uint32_t key = pt ? b->tid : b->cpu;
		unsigned k = 0;

		while (k < n && (r[k].per_thread != pt || r[k].key != key))
			k++;
		if (k == n) {
			if (n == MAX_RINGS) {
				close(fd);
				return false;
			}
			r[n++] = (struct idring){.per_thread = pt, .key = key, .first = b, .ci = -1};
			for (uint32_t c = 0; !pt && c < in->info.nr_cpu; c++)
				if (in->info.cpus[c].cpu == key)
					r[k].ci = (int)c;
		}
		r[k].bytes += b->size;
		r[k].nbufs++;
		if (!r[k].first->size)
			r[k].first = b; /* the first that holds something */
	}
	for (unsigned k = 0; k < n; k++) {
		const struct auxbuf *b = r[k].first;
		uint64_t len = b->size < SCAN_BYTES ? b->size : SCAN_BYTES;

		if (dec_frames_scan_ids(fd, b->data_off, b->data_off + len, r[k].ids) < 0)
			memset(r[k].ids, 0, sizeof(r[k].ids)); /* cut short: nothing said */
	}
	close(fd);
	*nr = n;
	return true;
}

/* The one ID of @r that no CPU claims (@claimed), or -1 (none, or several). */
static int lone_unclaimed(const struct idring *r, const uint64_t *claimed)
{
	int id = -1;

	for (unsigned i = 1; i < 128; i++) {
		if (!has(r->ids, i) || has(claimed, i))
			continue;
		if (id >= 0)
			return -1;
		id = (int)i;
	}
	return id;
}

/* "cpu 3" or "tid 1234", and what the ring holds. */
static const char *ring_name(const struct idring *r, char *s, size_t n)
{
	snprintf(s, n, "%s %" PRId32 ", %" PRIu64 " bytes in %" PRIu64 " buffer%s",
		 r->per_thread ? "tid" : "cpu", (int32_t)r->key, r->bytes, r->nbufs,
		 r->nbufs == 1 ? "" : "s");
	return s;
}

/* A recorded CPU to copy for CPU @cpu, which AUXTRACE_INFO leaves out: one of
 * the same kind, and its CPUs are all of one kind (magic), the nearest below it
 * (cores of a cluster are numbered together), else above. -1: none fits. */
static int template_for(const struct cst_perf_input *in, uint32_t cpu)
{
	int below = -1, above = -1;

	for (uint32_t i = 0; i < in->info.nr_cpu; i++) {
		const struct cst_perf_etm_cpu *c = &in->info.cpus[i];

		if (c->magic != in->info.cpus[0].magic)
			return -1;
		if (c->cpu < cpu && (below < 0 || c->cpu > in->info.cpus[below].cpu))
			below = (int)i;
		if (c->cpu > cpu && (above < 0 || c->cpu < in->info.cpus[above].cpu))
			above = (int)i;
	}
	return below >= 0 ? below : above;
}

/* Add CPU @cpu to AUXTRACE_INFO as a copy of CPU index @t with trace ID @id. */
static int add_cpu(struct cst_perf_input *in, int t, uint32_t cpu, uint8_t id, uint8_t *ids)
{
	struct cst_perf_etm_cpu *v = realloc(in->info.cpus, (in->info.nr_cpu + 1) * sizeof(*v));

	if (!v)
		return -cste_nomem;
	in->info.cpus = v;
	v[in->info.nr_cpu] = v[t];
	v[in->info.nr_cpu].cpu = cpu;
	if (v[t].magic == CST_PERF_ETMV3_MAGIC)
		v[in->info.nr_cpu].etmtraceidr = id;
	else
		v[in->info.nr_cpu].trctraceidr = id;
	ids[in->info.nr_cpu++] = id;
	return 0;
}

int dec_pi_trace_ids(struct cst_perf_input *in, uint8_t *ids, const uint8_t *hw_ids,
		     const bool *raw_cpu, bool raw_unknown)
{
	struct idring *r = calloc(MAX_RINGS, sizeof(*r));
	uint64_t claimed[2] = {0, 0}, seen[2] = {0, 0};
	int mend[256];
	unsigned n = 0;
	char ring[96], list[128 * 6];
	int ret = 0;

	if (!r)
		return -cste_nomem;
	if (!scan(in, r, &n))
		n = 0;
	for (uint32_t i = 0; i < in->info.nr_cpu; i++)
		add(claimed, ids[i]);
	for (unsigned k = 0; k < n; k++) {
		seen[0] |= r[k].ids[0];
		seen[1] |= r[k].ids[1];
	}
	/* A CPU whose ID no frame carries, whose own ring holds one ID no CPU
	 * claims: that is its ID (one CPU each) */
	for (uint32_t i = 0; i < in->info.nr_cpu; i++) {
		mend[i] = -1;
		for (unsigned k = 0; k < n; k++)
			if (r[k].ci == (int)i && !raw_cpu[i] && !has(seen, ids[i]))
				mend[i] = lone_unclaimed(&r[k], claimed);
	}
	for (uint32_t i = 0; i < in->info.nr_cpu; i++)
		for (uint32_t j = 0; j < in->info.nr_cpu && mend[i] >= 0; j++)
			if (j != i && mend[j] == mend[i])
				mend[i] = mend[j] = -1;
	for (uint32_t i = 0; i < in->info.nr_cpu; i++) {
		for (unsigned k = 0; k < n && mend[i] >= 0; k++) {
			if (r[k].ci != (int)i)
				continue;
			dec_pi_warnf(in, r[k].first->hdr_off,
				     "AUXTRACE record (%s): %s gives CPU %" PRIu64 " trace ID 0x%x, "
				     "which no frame carries; its frames carry 0x%x, which no CPU "
				     "claims: decoding them as CPU %" PRIu64 "'s (perf skips them)",
				     ring_name(&r[k], ring, sizeof(ring)),
				     hw_ids[i] ? "AUX_OUTPUT_HW_ID" : "AUXTRACE_INFO",
				     in->info.cpus[i].cpu, ids[i], mend[i], in->info.cpus[i].cpu);
			ids[i] = (uint8_t)mend[i];
			add(claimed, ids[i]);
		}
	}
	/* A CPU that AUXTRACE records name and AUXTRACE_INFO leaves out, whose ring
	 * holds one ID no CPU claims: a copy of a recorded CPU of the same kind */
	for (unsigned k = 0; k < n && !ret; k++) {
		int id, t;

		if (r[k].per_thread || r[k].ci >= 0 || raw_unknown || in->info.nr_cpu >= 256 ||
		    (id = lone_unclaimed(&r[k], claimed)) < 0 || (t = template_for(in, r[k].key)) < 0)
			continue;
		dec_pi_warnf(in, r[k].first->hdr_off,
			     "AUXTRACE record (%s): AUXTRACE_INFO has no CPU %" PRIu32 " (nr_cpu %" PRIu32
			     "); its frames carry trace ID 0x%x, which no CPU claims: decoding them "
			     "as CPU %" PRIu32 " with the registers of CPU %" PRIu64
			     " (assumed the same; perf skips them)",
			     ring_name(&r[k], ring, sizeof(ring)), r[k].key, in->info.nr_cpu, id,
			     r[k].key, in->info.cpus[t].cpu);
		ret = add_cpu(in, t, r[k].key, (uint8_t)id, ids);
		r[k].ci = (int)in->info.nr_cpu - 1;
		add(claimed, (unsigned)id);
	}
	/* What is left no source decodes */
	for (unsigned k = 0; k < n && !ret; k++) {
		uint64_t left[2] = {r[k].ids[0] & ~claimed[0], r[k].ids[1] & ~claimed[1]};

		if (!left[0] && !left[1])
			continue;
		cst_id_set_format(left, list, sizeof(list));
		dec_pi_warnf(in, r[k].first->hdr_off,
			     "AUXTRACE record (%s): its frames carry trace ID%s %s, which no CPU of "
			     "AUXTRACE_INFO claims%s: that trace cannot be decoded (perf skips it too)",
			     ring_name(&r[k], ring, sizeof(ring)),
			     __builtin_popcountll(left[0]) + __builtin_popcountll(left[1]) > 1 ? "s" : "",
			     list,
			     !r[k].per_thread && r[k].ci < 0 ? " (nor is its CPU there)" : "");
	}
	free(r);
	return ret;
}
