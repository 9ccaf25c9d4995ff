/* The ring consumer: drains a perf data ring and its AUX area with the barriers the
 * kernel's ring_buffer.c expects. Production and the tests' kernel model share it. */
#include "cstrace/capture.h"
#include "cstrace/auxlog.h"

#include <stdlib.h>
#include <string.h>

#define REC_AUX 11
#define REC_LOST 2
#define AUX_TRUNCATED 0x01ULL
#define AUX_PARTIAL 0x04ULL
#define AUX_COLLISION 0x08ULL

struct cst_ring {
	struct cst_ring_desc d;
	struct cst_ring_output out;
	uint8_t *data;       /* data area */
	uint64_t data_tail;  /* our copy: only we write data_tail */
	uint64_t aux_tail;   /* our copy of aux_tail (normal mode) */
	uint64_t snap_prev;  /* aux_head at the previous snapshot */
	uint8_t *copy;       /* AUX bytes copied out before aux_tail moves */
	uint8_t rec[65536];  /* one record, unwrapped */
	bool need_enable;
	struct cst_ring_stats st;
	/* With an observer: what the current read saw, and the data area unwrapped. */
	struct cst_auxlog_read obs;
	uint8_t *obs_data;
};

static bool is_pow2(uint64_t v)
{
	return v && !(v & (v - 1));
}

int cst_ring_alloc(struct cst_ring **ring, const struct cst_ring_desc *desc,
		   const struct cst_ring_output *out)
{
	struct cst_ring *r;
	int e = -cste_invalid;

	if (!ring)
		return -cste_invalid;
	*ring = NULL;
	if (!desc || !out || desc->sz < sizeof(*desc) || !desc->base)
		goto fail;
	if (!is_pow2(desc->data_size) || (desc->aux && !is_pow2(desc->aux_size)))
		goto fail;
	if (desc->aux && (!desc->ops || !desc->ops->enable || !desc->ops->disable))
		goto fail;
	e = -cste_nomem;
	r = calloc(1, sizeof(*r));
	if (!r)
		goto fail;
	r->d = *desc;
	if (cst_opts_load(&r->out, sizeof(r->out), out, "cst_ring_output", NULL) < 0) {
		free(r);
		e = -cste_invalid;
		goto fail;
	}
	if (!r->d.page_size)
		r->d.page_size = 4096;
	r->data = (uint8_t *)desc->base + r->d.page_size;
	/* Start where the kernel is (zero after a fresh mmap). */
	r->data_tail = cst_ring_load_u64((uint8_t *)desc->base + CST_MMAP_DATA_TAIL);
	r->aux_tail = cst_ring_load_u64((uint8_t *)desc->base + CST_MMAP_AUX_TAIL);
	r->snap_prev = cst_ring_load_u64((uint8_t *)desc->base + CST_MMAP_AUX_HEAD);
	if (desc->aux) {
		r->copy = malloc(desc->aux_size);
		if (!r->copy) {
			free(r);
			goto fail;
		}
	}
	if (r->out.observe) {
		r->obs_data = malloc(r->d.data_size);
		if (!r->obs_data) {
			free(r->copy);
			free(r);
			goto fail;
		}
	}
	*ring = r;
	return 0;
fail:
	return e;
}

void cst_ring_free(struct cst_ring *ring)
{
	if (!ring)
		return;
	free(ring->copy);
	free(ring->obs_data);
	free(ring);
}

uint64_t cst_ring_load_u64_split(const volatile void *p)
{
	/* Little-endian halves: a 32-bit reader must not combine the low word of
	 * one update with the high word of another, so read high, low, high and
	 * retry until both high reads agree (what perf does on 32-bit builds). */
	const volatile uint32_t *w = p;
	uint32_t hi, lo, hi2;

	do {
		hi = __atomic_load_n(&w[1], __ATOMIC_ACQUIRE);
		lo = __atomic_load_n(&w[0], __ATOMIC_ACQUIRE);
		hi2 = __atomic_load_n(&w[1], __ATOMIC_ACQUIRE);
	} while (hi != hi2);
	return ((uint64_t)hi << 32) | lo;
}

uint64_t cst_ring_load_u64(const volatile void *p)
{
#if UINTPTR_MAX == 0xffffffffu
	return cst_ring_load_u64_split(p);
#else
	return __atomic_load_n((const volatile uint64_t *)p, __ATOMIC_ACQUIRE);
#endif
}

static void store_u64(volatile void *p, uint64_t v)
{
	/* The kernel reads the tail as unsigned long; on a 32-bit kernel only the
	 * low word matters, and a full barrier before it orders our reads of the
	 * data before the kernel may overwrite it (ring_buffer.c, "D" barrier). */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
#if UINTPTR_MAX == 0xffffffffu
	volatile uint32_t *w = p;
	__atomic_store_n(&w[1], (uint32_t)(v >> 32), __ATOMIC_RELAXED);
	__atomic_store_n(&w[0], (uint32_t)v, __ATOMIC_RELEASE);
#else
	__atomic_store_n((volatile uint64_t *)p, v, __ATOMIC_RELEASE);
#endif
}

static volatile void *page_at(struct cst_ring *r, size_t off)
{
	return (volatile uint8_t *)r->d.base + off;
}

/* Copy @len bytes starting at ring position @pos out of a power-of-two ring. */
static void ring_copy(uint8_t *dst, const uint8_t *ring, uint64_t size, uint64_t pos, uint64_t len)
{
	uint64_t off = pos & (size - 1);
	uint64_t first = size - off < len ? size - off : len;

	memcpy(dst, ring + off, first);
	if (len > first)
		memcpy(dst + first, ring, len - first);
}

static void note_record(struct cst_ring *r, const uint8_t *rec, size_t len)
{
	uint32_t type = cst_le32(rec);

	r->st.records++;
	r->st.record_bytes += len;
	if (type == REC_AUX && len >= 32) {
		uint64_t size = cst_le64(rec + 16), flags = cst_le64(rec + 24);

		r->st.aux_records++;
		r->st.aux_record_bytes += size;
		if (flags & AUX_TRUNCATED) {
			/* The kernel disabled the event (pending_disable in
			 * perf_aux_output_end); it stays off until we enable it. */
			r->st.truncated++;
			if (!size)
				r->st.empty_truncated++;
			/* the write reached our tail: the ring had no room (as the AUX
			 * timeline tells it); else the sink's own buffer filled */
			if (r->d.aux_size && !r->d.overwrite &&
			    (!size || cst_le64(rec + 8) + size - r->aux_tail + 4096 >= r->d.aux_size))
				r->st.truncated_late++;
			r->need_enable = true;
		}
		if (flags & AUX_COLLISION)
			r->st.collision++;
		if (flags & AUX_PARTIAL)
			r->st.partial++;
	} else if (type == REC_LOST && len >= 24) {
		r->st.lost_records++;
		r->st.lost_events += cst_le64(rec + 16);
	}
}

static uint64_t head_delta(uint64_t head, uint64_t old)
{
	/* A 32-bit kernel keeps its heads in unsigned longs: they wrap at 4 GiB
	 * and never set the high word. */
	if (head < old && old <= UINT32_MAX)
		return (uint32_t)(head - old);
	return head - old;
}

/* Our copy of a tail after @n more bytes, wrapped like the kernel's head. */
static uint64_t tail_after(uint64_t tail, uint64_t n, uint64_t head)
{
	tail += n;
	if (tail > UINT32_MAX && head <= UINT32_MAX)
		tail = (uint32_t)tail;
	return tail;
}

static int64_t read_records(struct cst_ring *r)
{
	uint64_t head = cst_ring_load_u64(page_at(r, CST_MMAP_DATA_HEAD));
	uint64_t tail = r->data_tail, avail, done = 0;
	int err = 0;

	__atomic_thread_fence(__ATOMIC_ACQUIRE); /* head before records (rmb) */
	avail = head_delta(head, tail);
	r->obs.data_head = head;
	if (avail > r->d.data_size)
		return -cste_format;
	if (r->obs_data && avail) {
		ring_copy(r->obs_data, r->data, r->d.data_size, tail, avail);
		r->obs.data = r->obs_data;
		r->obs.data_len = avail;
	}
	while (avail - done >= 8) {
		uint16_t size;

		ring_copy(r->rec, r->data, r->d.data_size, tail + done, 8);
		size = cst_le16(r->rec + 6);
		if (size < 8 || size > avail - done)
			return -cste_format;
		ring_copy(r->rec, r->data, r->d.data_size, tail + done, size);
		note_record(r, r->rec, size);
		if (!r->st.output_failed) {
			err = r->out.record ? r->out.record(r->out.ctx, r->rec, size) : 0;
			if (err < 0) {
				r->st.output_failed = true;
				r->st.unwritten_bytes += size;
			}
		} else {
			r->st.unwritten_bytes += size;
		}
		done += size;
	}
	r->data_tail = tail_after(tail, done, head);
	store_u64(page_at(r, CST_MMAP_DATA_TAIL), r->data_tail);
	r->obs.data_tail_after = r->data_tail;
	return err < 0 ? err : (int64_t)done;
}

static int deliver(struct cst_ring *r, uint64_t offset, uint64_t len, bool snapshot)
{
	struct cst_aux_chunk c = {
		.offset = offset, .size = len, .data = r->copy, .idx = r->d.idx,
		.tid = r->d.tid, .cpu = r->d.cpu, .snapshot = snapshot,
	};
	int err;

	r->st.aux_bytes += len;
	if (r->st.output_failed) {
		r->st.unwritten_bytes += len;
		r->st.unwritten_aux += len;
		return 0;
	}
	err = r->out.aux ? r->out.aux(r->out.ctx, &c) : 0;
	if (err < 0) {
		r->st.output_failed = true;
		r->st.unwritten_bytes += len;
		r->st.unwritten_aux += len;
		return err;
	}
	r->st.chunks++;
	return 0;
}

/* Enable or disable the event, noting the call for the observer. */
static int ring_ctl(struct cst_ring *r, enum cst_auxlog_ctl_op op)
{
	int ret = op == cst_auxlog_ctl_enable ? r->d.ops->enable(r->d.ops_ctx)
					      : r->d.ops->disable(r->d.ops_ctx);

	if (r->obs.nctl < CST_AUXLOG_MAX_CTL) {
		r->obs.ctl[r->obs.nctl].op = op;
		r->obs.ctl[r->obs.nctl].result = ret;
		r->obs.nctl++;
	}
	return ret;
}

/* The AUX bytes a read copied out, for the observer. */
static void obs_aux(struct cst_ring *r, uint64_t head, uint64_t pos, uint64_t len)
{
	r->obs.aux_head = head;
	r->obs.aux_pos = pos;
	r->obs.aux_len = len;
	r->obs.aux = len ? r->copy : NULL;
}

static int64_t drain_aux(struct cst_ring *r)
{
	uint64_t head, old = r->aux_tail, len;
	int err;

	head = cst_ring_load_u64(page_at(r, CST_MMAP_AUX_HEAD));
	__atomic_thread_fence(__ATOMIC_ACQUIRE); /* head before data (rmb) */
	r->st.aux_head = head;
	len = head_delta(head, old);
	r->obs.aux_head = head;
	if (len > r->d.aux_size)
		return -cste_format; /* normal mode never runs ahead of our tail */
	if (len) {
		ring_copy(r->copy, r->d.aux, r->d.aux_size, old, len);
		r->aux_tail = tail_after(old, len, head);
		store_u64(page_at(r, CST_MMAP_AUX_TAIL), r->aux_tail);
	}
	obs_aux(r, head, old, len);
	r->obs.aux_tail_after = r->aux_tail;
	/* perf_aux_output_begin refuses to start (and disables the event) when
	 * there is no free space: that is silent, so treat a full area as a stop. */
	if (len + 1 >= r->d.aux_size)
		r->need_enable = true;
	err = len ? deliver(r, old, len, false) : 0;
	if (r->need_enable) {
		r->need_enable = false;
		r->st.reenables++;
		/* Not fatal: the event stays off and the summary says so. */
		if (ring_ctl(r, cst_auxlog_ctl_enable) < 0)
			r->st.reenable_failures++;
	}
	return err < 0 ? err : (int64_t)len;
}

static void obs_begin(struct cst_ring *r, bool snapshot)
{
	memset(&r->obs, 0, sizeof(r->obs));
	r->obs.idx = r->d.idx;
	r->obs.snapshot = snapshot;
	r->obs.data_tail = r->obs.data_tail_after = r->data_tail;
	r->obs.aux_tail_after = r->aux_tail;
}

/* Hand what the read saw to the observer; passes @result through. */
static int64_t obs_end(struct cst_ring *r, int64_t result)
{
	if (r->out.observe) {
		r->obs.result = result;
		r->obs.unwritten = r->st.unwritten_bytes;
		r->out.observe(r->out.observe_ctx, &r->obs);
	}
	return result;
}

static int64_t ring_read(struct cst_ring *ring)
{
	int64_t n, m = 0;

	n = read_records(ring);
	if (n < 0 && n != -cste_io && !ring->st.output_failed)
		return n;
	if (ring->d.aux && !ring->d.overwrite) {
		m = drain_aux(ring);
		if (m < 0)
			return m;
	}
	if (n < 0)
		return n;
	return n + m;
}

int64_t cst_ring_read(struct cst_ring *ring)
{
	if (!ring)
		return -cste_invalid;
	obs_begin(ring, false);
	return obs_end(ring, ring_read(ring));
}

static int64_t ring_snapshot(struct cst_ring *ring)
{
	uint64_t head, avail, len;
	int64_t n;
	int err;

	/* Stop the sink first: its pmu::stop copies what it holds into AUX. */
	if (ring_ctl(ring, cst_auxlog_ctl_disable) < 0)
		return -cste_io;
	n = read_records(ring);
	head = cst_ring_load_u64(page_at(ring, CST_MMAP_AUX_HEAD));
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	ring->st.aux_head = head;
	avail = head_delta(head, ring->snap_prev);
	len = avail < ring->d.aux_size ? avail : ring->d.aux_size;
	ring->st.snapshot_overwritten += avail - len;
	ring->snap_prev = head;
	if (len)
		ring_copy(ring->copy, ring->d.aux, ring->d.aux_size, head - len, len);
	obs_aux(ring, head, head - len, len);
	ring->st.snapshots++;
	err = len ? deliver(ring, head - len, len, true) : 0;
	if (ring_ctl(ring, cst_auxlog_ctl_enable) < 0 && !err)
		err = -cste_io;
	if (n < 0)
		return n;
	return err < 0 ? err : (int64_t)len;
}

int64_t cst_ring_snapshot(struct cst_ring *ring)
{
	if (!ring || !ring->d.aux || !ring->d.overwrite)
		return -cste_invalid;
	obs_begin(ring, true);
	return obs_end(ring, ring_snapshot(ring));
}

int cst_ring_get_stats(const struct cst_ring *ring, struct cst_ring_stats *stats)
{
	if (!ring || !stats)
		return -cste_invalid;
	*stats = ring->st;
	return 0;
}
