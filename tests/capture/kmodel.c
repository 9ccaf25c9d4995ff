/* Kernel model for the capture tests: no cs_etm hardware exists on the test machines,
 * so this reproduces the AUX semantics of ring_buffer.c and coresight-tmc-etf.c in-process. */
#include "kmodel.h"

#include <stdlib.h>
#include <string.h>

#define PAGE 4096
#define REC_LOST 2
#define REC_AUX 11
#define REC_ITRACE_START 12
#define AUX_TRUNCATED 0x01ULL
#define AUX_OVERWRITE 0x02ULL
#define FRAME_MASK (~(uint64_t)15) /* tmc_get_memwidth_mask: whole 16-byte frames */

struct kmodel {
	struct kmodel_opts o;
	uint8_t *base; /* user page + data area, as mmap shows them */
	uint8_t *aux;

	/* struct perf_buffer state */
	uint64_t rb_aux_head, aux_wakeup, watermark;
	uint64_t data_head, lost; /* lost: records dropped since the last LOST record */
	bool enabled, running, active, wakeup, itrace_started;
	/* struct perf_output_handle of the running AUX transaction */
	uint64_t h_head, h_size, h_flags;
	uint64_t inject;

	/* the ETF: a circular RAM of sink_size bytes */
	uint64_t *sink; /* ETM sequence numbers of the bytes held */
	uint64_t sink_wp, sink_fill, sink_written;
	bool sink_full;
	uint64_t seq, clock;
	const uint8_t *src; /* real trace bytes the ETM emits, if set */
	uint64_t src_len;

	/* what went into AUX, in order */
	uint8_t *stream;
	uint64_t *stream_seq;
	uint64_t stream_len, stream_cap;

	struct kmodel_stats st;
};

uint8_t kmodel_pattern(uint64_t seq)
{
	return (uint8_t)((seq * 0x9e3779b1u) >> 11 ^ seq);
}

static int op_enable(void *ctx);
static int op_disable(void *ctx);
static const struct cst_ring_ops kmodel_ops = {sizeof(struct cst_ring_ops), op_enable, op_disable};

struct kmodel *kmodel_new(const struct kmodel_opts *opts)
{
	struct kmodel *m = calloc(1, sizeof(*m));

	if (!m)
		return NULL;
	m->o = *opts;
	m->base = calloc(1, PAGE + opts->data_size);
	m->aux = calloc(1, opts->aux_size);
	m->sink = calloc(opts->sink_size ? opts->sink_size : 1, sizeof(uint64_t));
	if (!m->base || !m->aux || !m->sink) {
		kmodel_free(m);
		return NULL;
	}
	/* rb_alloc_aux: the default watermark is half the buffer; overwrite
	 * mode has none (rb_need_aux_wakeup never fires). */
	m->watermark = opts->watermark ? opts->watermark : opts->aux_size / 2;
	cst_put_le64(m->base + CST_MMAP_DATA_OFFSET, PAGE);
	cst_put_le64(m->base + CST_MMAP_DATA_SIZE, opts->data_size);
	cst_put_le64(m->base + CST_MMAP_AUX_OFFSET, PAGE + opts->data_size);
	cst_put_le64(m->base + CST_MMAP_AUX_SIZE, opts->aux_size);
	m->rb_aux_head = m->aux_wakeup = opts->start_head;
	cst_put_le64(m->base + CST_MMAP_AUX_HEAD, opts->start_head);
	cst_put_le64(m->base + CST_MMAP_AUX_TAIL, opts->start_head);
	m->enabled = true;
	return m;
}

void kmodel_free(struct kmodel *m)
{
	if (!m)
		return;
	free(m->base);
	free(m->aux);
	free(m->sink);
	free(m->stream);
	free(m->stream_seq);
	free(m);
}

struct cst_ring_desc kmodel_desc(struct kmodel *m)
{
	struct cst_ring_desc d = {
		.sz = sizeof(d), .base = m->base, .page_size = PAGE, .data_size = m->o.data_size,
		.aux = m->aux, .aux_size = m->o.aux_size, .overwrite = m->o.overwrite,
		.idx = 0, .tid = m->o.tid, .cpu = m->o.cpu, .ops = &kmodel_ops, .ops_ctx = m,
	};
	return d;
}

/* unsigned long arithmetic of the kernel: 32 bits on a 32-bit kernel */
static uint64_t kul(const struct kmodel *m, uint64_t v)
{
	return m->o.kernel32 ? (uint32_t)v : v;
}

static uint64_t page_u64(const struct kmodel *m, size_t off)
{
	return kul(m, __atomic_load_n((const uint64_t *)(m->base + off), __ATOMIC_ACQUIRE));
}

static void set_page_u64(struct kmodel *m, size_t off, uint64_t v)
{
	__atomic_store_n((uint64_t *)(m->base + off), v, __ATOMIC_RELEASE);
}

/* The sample_id trailer of cst_capture_sample_type(): TID, TIME, CPU, IDENTIFIER. */
static size_t put_trailer(struct kmodel *m, uint8_t *p)
{
	cst_put_le32(p, m->o.pid);
	cst_put_le32(p + 4, m->o.tid);
	cst_put_le64(p + 8, ++m->clock);
	cst_put_le32(p + 16, m->o.cpu);
	cst_put_le32(p + 20, 0);
	cst_put_le64(p + 24, m->o.id);
	return 32;
}

/* perf_output_begin/copy/end on the data ring: a record that does not fit is
 * dropped and counted, and a PERF_RECORD_LOST goes out before the next one. */
static bool data_write_one(struct kmodel *m, const uint8_t *rec, size_t len)
{
	uint64_t tail = page_u64(m, CST_MMAP_DATA_TAIL);
	uint64_t size = m->o.data_size;

	if (m->data_head + len - tail > size)
		return false;
	for (size_t i = 0; i < len; i++)
		m->base[PAGE + ((m->data_head + i) & (size - 1))] = rec[i];
	m->data_head += len;
	set_page_u64(m, CST_MMAP_DATA_HEAD, m->data_head);
	return true;
}

static void data_write(struct kmodel *m, const uint8_t *rec, size_t len)
{
	if (m->lost) {
		uint8_t lost[64];
		size_t n = 24;

		cst_put_le32(lost, REC_LOST);
		cst_put_le16(lost + 4, 0);
		cst_put_le64(lost + 8, m->o.id);
		cst_put_le64(lost + 16, m->lost);
		n += put_trailer(m, lost + n);
		cst_put_le16(lost + 6, (uint16_t)n);
		if (data_write_one(m, lost, n)) {
			m->st.lost_records++;
			m->lost = 0;
		}
	}
	if (m->lost || !data_write_one(m, rec, len)) {
		m->lost++;
		m->st.records_lost++;
	}
}

/* perf_event_aux_event: PERF_RECORD_AUX {aux_offset, aux_size, flags}. */
static void emit_aux(struct kmodel *m, uint64_t offset, uint64_t size, uint64_t flags)
{
	uint8_t rec[64];
	size_t n = 32;

	cst_put_le32(rec, REC_AUX);
	cst_put_le16(rec + 4, 0);
	cst_put_le64(rec + 8, offset);
	cst_put_le64(rec + 16, size);
	cst_put_le64(rec + 24, flags);
	n += put_trailer(m, rec + n);
	cst_put_le16(rec + 6, (uint16_t)n);
	m->st.aux_records++;
	data_write(m, rec, n);
}

static void emit_itrace_start(struct kmodel *m)
{
	uint8_t rec[64];
	size_t n = 16;

	cst_put_le32(rec, REC_ITRACE_START);
	cst_put_le16(rec + 4, 0);
	cst_put_le32(rec + 8, m->o.pid);
	cst_put_le32(rec + 12, m->o.tid);
	n += put_trailer(m, rec + n);
	cst_put_le16(rec + 6, (uint16_t)n);
	data_write(m, rec, n);
}

/* perf_report_aux_output_id: the trace ID the CoreSight driver allocated. */
static void emit_hw_id(struct kmodel *m)
{
	uint8_t rec[64];
	size_t n = 16;

	cst_put_le32(rec, 21);
	cst_put_le16(rec + 4, 0);
	cst_put_le64(rec + 8, m->o.trace_id);
	n += put_trailer(m, rec + n);
	cst_put_le16(rec + 6, (uint16_t)n);
	data_write(m, rec, n);
}

/* perf_aux_output_begin, called from pmu::start. */
static void aux_begin(struct kmodel *m)
{
	uint64_t size = m->o.aux_size;

	m->active = false;
	if (!m->enabled)
		return;
	if (!m->itrace_started) {
		m->itrace_started = true;
		emit_itrace_start(m);
		if (m->o.trace_id)
			emit_hw_id(m);
	}
	m->h_head = m->rb_aux_head;
	m->h_size = 0;
	m->h_flags = 0;
	if (!m->o.overwrite) {
		uint64_t tail = page_u64(m, CST_MMAP_AUX_TAIL);

		if (kul(m, m->rb_aux_head - tail) < size) /* CIRC_SPACE */
			m->h_size = (tail - (m->rb_aux_head + 1)) & (size - 1);
		if (!m->h_size) {
			/* No room: pending_disable, wake the reader, do not start. */
			m->enabled = false;
			m->wakeup = true;
			m->st.begin_failed++;
			return;
		}
	}
	m->active = true;
}

static void stream_push(struct kmodel *m, uint8_t byte, uint64_t seq)
{
	if (m->stream_len == m->stream_cap) {
		m->stream_cap = m->stream_cap ? 2 * m->stream_cap : 4096;
		m->stream = realloc(m->stream, m->stream_cap);
		m->stream_seq = realloc(m->stream_seq, m->stream_cap * sizeof(uint64_t));
		if (!m->stream || !m->stream_seq)
			abort();
	}
	m->stream[m->stream_len] = byte;
	m->stream_seq[m->stream_len++] = seq;
}

/* tmc_update_etf_buffer: the sink copies into AUX only now. If it holds more
 * than the free space it keeps the newest data, puts a barrier packet in the
 * first 16 bytes and flags TRUNCATED (not in snapshot mode). */
static uint64_t etf_update(struct kmodel *m)
{
	static const uint8_t barrier[16] = {0xff, 0xff, 0xff, 0x7f, 0xff, 0xff, 0xff, 0x7f,
					    0xff, 0xff, 0xff, 0x7f, 0xff, 0xff, 0xff, 0x7f};
	uint64_t to_read = m->sink_full ? m->o.sink_size : m->sink_fill;
	bool lost = m->sink_full;
	uint64_t start, pos;

	if (!m->o.overwrite && to_read > m->h_size) {
		to_read = m->h_size & FRAME_MASK;
		lost = true;
	}
	if (!m->o.overwrite && lost)
		m->h_flags |= AUX_TRUNCATED;
	/* the newest @to_read bytes, oldest first */
	start = (m->sink_wp + m->o.sink_size - to_read) % (m->o.sink_size ? m->o.sink_size : 1);
	pos = m->h_head;
	for (uint64_t i = 0; i < to_read; i++) {
		uint64_t seq = m->sink[(start + i) % m->o.sink_size];
		uint8_t b = m->src && seq < m->src_len ? m->src[seq] : kmodel_pattern(seq);

		if (lost && i < sizeof(barrier)) {
			b = barrier[i];
			seq = UINT64_MAX;
			m->st.barrier_bytes++;
		}
		m->aux[(pos + i) & (m->o.aux_size - 1)] = b;
		stream_push(m, b, seq);
	}
	m->st.dropped += m->sink_written - to_read;
	m->st.to_aux += to_read;
	if (m->o.overwrite)
		m->h_head = kul(m, m->h_head + to_read);
	m->sink_fill = 0;
	m->sink_written = 0;
	m->sink_full = false;
	return to_read;
}

/* perf_aux_output_end. */
static void aux_end(struct kmodel *m, uint64_t size)
{
	bool wakeup = m->h_flags & AUX_TRUNCATED;
	uint64_t offset, flags = m->h_flags | m->inject;

	m->inject = 0;
	if (m->o.overwrite) {
		flags |= AUX_OVERWRITE;
		offset = m->h_head; /* the END of the data in overwrite mode */
		m->rb_aux_head = m->h_head;
	} else {
		offset = m->rb_aux_head;
		m->rb_aux_head = kul(m, m->rb_aux_head + size);
	}
	if (size || (flags & ~AUX_OVERWRITE)) {
		emit_aux(m, offset, size, flags);
		if (flags & AUX_TRUNCATED) {
			m->st.truncated++;
			if (!size)
				m->st.empty_truncated++;
		}
		if (flags & 0x08)
			m->st.collision++;
		if (flags & 0x04)
			m->st.partial++;
	}
	/* Data before head: a barrier, then the store the reader loads. */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	set_page_u64(m, CST_MMAP_AUX_HEAD, m->rb_aux_head);
	/* rb_need_aux_wakeup */
	if (!m->o.overwrite && kul(m, m->rb_aux_head - m->aux_wakeup) >= m->watermark) {
		m->aux_wakeup = m->rb_aux_head - m->rb_aux_head % m->watermark;
		wakeup = true;
	}
	if (wakeup) {
		if (flags & AUX_TRUNCATED)
			m->enabled = false; /* pending_disable */
		m->wakeup = true;
	}
	m->active = false;
}

void kmodel_sched_in(struct kmodel *m)
{
	m->running = true;
	aux_begin(m);
}

static void pmu_stop(struct kmodel *m)
{
	if (m->active)
		aux_end(m, etf_update(m));
}

void kmodel_sched_out(struct kmodel *m)
{
	pmu_stop(m);
	m->running = false;
}

uint64_t kmodel_now(const struct kmodel *m)
{
	return m->clock;
}

void kmodel_run(struct kmodel *m, uint64_t n)
{
	m->clock += n; /* the program runs: a nanosecond a trace byte */
	if (!m->active) {
		m->st.untraced += n;
		return;
	}
	for (uint64_t i = 0; i < n; i++) {
		m->sink[m->sink_wp] = m->seq++;
		m->sink_wp = (m->sink_wp + 1) % m->o.sink_size;
		if (m->sink_fill < m->o.sink_size)
			m->sink_fill++;
		else
			m->sink_full = true;
	}
	m->sink_written += n;
	m->st.generated += n;
}

void kmodel_set_source(struct kmodel *m, const uint8_t *bytes, uint64_t len)
{
	m->src = bytes;
	m->src_len = len;
}

void kmodel_inject_flags(struct kmodel *m, uint64_t flags)
{
	m->inject |= flags;
}

bool kmodel_poll(struct kmodel *m)
{
	bool w = m->wakeup;

	m->wakeup = false;
	return w;
}

bool kmodel_enabled(const struct kmodel *m)
{
	return m->enabled;
}

/* PERF_EVENT_IOC_ENABLE: the event runs again from its next pmu::start; if
 * it is scheduled in now, that start happens at once. */
static int op_enable(void *ctx)
{
	struct kmodel *m = ctx;

	m->st.enables++;
	if (m->o.refuse_enable)
		return -cste_io;
	if (!m->enabled) {
		m->enabled = true;
		if (m->running)
			aux_begin(m);
	}
	return 0;
}

/* PERF_EVENT_IOC_DISABLE: pmu::stop with the sink update, then off. */
static int op_disable(void *ctx)
{
	struct kmodel *m = ctx;

	m->st.disables++;
	pmu_stop(m);
	m->enabled = false;
	return 0;
}

const struct kmodel_stats *kmodel_stats(const struct kmodel *m)
{
	return &m->st;
}

const uint8_t *kmodel_aux_stream(const struct kmodel *m, uint64_t *len)
{
	*len = m->stream_len;
	return m->stream;
}

uint64_t kmodel_stream_seq(const struct kmodel *m, uint64_t pos)
{
	return pos < m->stream_len ? m->stream_seq[pos] : UINT64_MAX;
}
