/* Trace sink model: an ETR/ETF holding `capacity` bytes that keeps the newest data,
 * read out at pmu::stop into perf's AUX ring (normal or overwrite/snapshot mode). */
#include <stdlib.h>
#include <string.h>

#include "synth_int.h"

int synth_sink_init(struct synth_sink *s, uint64_t capacity, bool barrier, bool snapshot_mode,
		    uint64_t ring_size, synth_chunk_fn fn, void *ctx)
{
	memset(s, 0, sizeof(*s));
	s->capacity = capacity & ~(uint64_t)15;
	if (s->capacity < 64)
		return -cste_invalid;
	s->barrier = barrier;
	s->snapshot_mode = snapshot_mode;
	s->chunk_fn = fn;
	s->chunk_ctx = ctx;
	if (!fn) {
		/* No perf reader: the sink runs as a circular buffer (sysfs capture). */
		s->keep = malloc(s->capacity);
		return s->keep ? 0 : -cste_nomem;
	}
	if (snapshot_mode) {
		s->ring_size = ring_size & ~(uint64_t)15;
		if (s->ring_size < 64)
			return -cste_invalid;
		s->ring = calloc(1, s->ring_size);
		if (!s->ring)
			return -cste_nomem;
	}
	return 0;
}

void synth_sink_fini(struct synth_sink *s)
{
	free(s->buf);
	free(s->ring);
	free(s->keep);
	memset(s, 0, sizeof(*s));
}

int synth_sink_put(void *sink, const uint8_t *p, size_t len)
{
	struct synth_sink *s = sink;
	s->written += len;
	if (s->keep) {
		/* Circular: position = bytes written so far modulo capacity. */
		uint64_t pos = (s->written - len) % s->capacity;
		while (len) {
			size_t n = (size_t)(s->capacity - pos);
			if (n > len)
				n = len;
			memcpy(s->keep + pos, p, n);
			p += n;
			len -= n;
			pos = 0;
		}
		return 0;
	}
	/* Pending data can exceed the sink: it then keeps only the newest part,
	 * so do not grow past twice its size. */
	uint64_t need = s->len + len;
	if ((size_t)need != need || CST_GROW(s->buf, s->cap_buf, (size_t)need) < 0)
		return -cste_nomem; /* more than a 32-bit host can hold */
	memcpy(s->buf + s->len, p, len);
	s->len += len;
	if (s->len >= 2 * s->capacity) {
		uint64_t drop = (s->len - s->capacity) & ~(uint64_t)15;
		memmove(s->buf, s->buf + drop, s->len - drop);
		s->len -= drop;
		s->lost += drop;
		s->pending_loss = true;
	}
	return 0;
}

static int sink_ring_write(struct synth_sink *s, const uint8_t *p, uint64_t len)
{
	while (len) {
		uint64_t pos = s->aux_head % s->ring_size;
		uint64_t n = s->ring_size - pos;
		if (n > len)
			n = len;
		memcpy(s->ring + pos, p, n);
		s->aux_head += n;
		p += n;
		len -= n;
	}
	return 0;
}

int synth_sink_readout(struct synth_sink *s)
{
	if (s->keep || !s->len)
		return 0;
	bool truncated = s->pending_loss;
	uint8_t *data = s->buf;
	uint64_t len = s->len;
	if (len > s->capacity) {
		uint64_t drop = len - s->capacity;
		data += drop;
		len -= drop;
		s->lost += drop;
		truncated = true;
	}
	if (truncated && s->barrier && len >= 16) {
		/* What the TMC driver does when the sink wrapped: a barrier of four frame
		 * syncs, so that the decoder resets instead of reading across the loss. */
		for (int i = 0; i < 4; i++)
			cst_put_le32(data + 4 * i, 0x7fffffff);
	}
	int rc = 0;
	if (s->snapshot_mode) {
		rc = sink_ring_write(s, data, len);
	} else {
		struct synth_aux_chunk c = {
			.aux_offset = s->aux_head,
			.aux_head = s->aux_head + len,
			.data = data,
			.size = len,
			.truncated = truncated,
		};
		s->aux_head += len;
		rc = s->chunk_fn(s->chunk_ctx, &c);
	}
	s->chunks++;
	s->len = 0;
	s->pending_loss = false;
	return rc;
}

int synth_sink_finish(struct synth_sink *s)
{
	int rc = synth_sink_readout(s);
	if (rc || !s->snapshot_mode || !s->chunk_fn)
		return rc;
	/* perf's snapshot read: the newest bytes of the overwrite ring, ending at head. */
	uint64_t n = s->aux_head < s->ring_size ? s->aux_head : s->ring_size;
	if (!n)
		return 0;
	uint8_t *tmp = malloc(n);
	if (!tmp)
		return -cste_nomem;
	uint64_t start = s->aux_head - n;
	for (uint64_t i = 0; i < n; i++)
		tmp[i] = s->ring[(start + i) % s->ring_size];
	if (s->aux_head > s->ring_size)
		s->lost += s->aux_head - s->ring_size;
	struct synth_aux_chunk c = {
		.aux_offset = start,
		.aux_head = s->aux_head,
		.data = tmp,
		.size = n,
		.truncated = s->aux_head > s->ring_size,
		.overwrite = true,
	};
	rc = s->chunk_fn(s->chunk_ctx, &c);
	free(tmp);
	return rc;
}

int synth_sink_contents(const struct synth_sink *s, uint8_t **out, uint64_t *len)
{
	if (!s->keep)
		return -cste_invalid;
	uint64_t n = s->written < s->capacity ? s->written : s->capacity;
	uint8_t *b = malloc(n ? n : 1);
	if (!b)
		return -cste_nomem;
	uint64_t start = s->written - n;
	for (uint64_t i = 0; i < n;) {
		uint64_t pos = (start + i) % s->capacity;
		uint64_t k = s->capacity - pos;
		if (k > n - i)
			k = n - i;
		memcpy(b + i, s->keep + pos, k);
		i += k;
	}
	*out = b;
	*len = n;
	return 0;
}
