/* libFuzzer target for the decoder: arbitrary bytes as CoreSight frames (or, when the
 * first byte is odd, as a raw ETMv4 stream) through ETMv4, ETMv3, PTM and STM
 * decoders at once, code bytes served from the input itself, fed in uneven pieces;
 * ETMv4 and ETMv3 (not cycle-accurate then) through cstrace's own decoders when
 * the first byte has bit 1 set. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cstrace/decode.h"
#include "engine/engine.h"

struct input {
	const uint8_t *data;
	size_t size;
};

static uint32_t mem_from_input(void *ctx, uint8_t trace_id, uint64_t address,
			       enum cst_mem_space space, uint32_t len, uint8_t *buf)
{
	const struct input *in = ctx;

	if (!in->size || address > 0x100000)
		return 0; /* low addresses hold code, the rest is inaccessible: both paths run */
	for (uint32_t i = 0; i < len; i++)
		buf[i] = in->data[(address + i) % in->size];
	return len;
}

static int count(void *ctx, const struct cst_elem *e)
{
	char line[1024];

	/* the printers must cope with anything the decoder produces */
	cst_elem_format_text(e, line, sizeof(line));
	cst_elem_format_json(e, line, sizeof(line));
	cst_elem_format_ocsd(e, line, sizeof(line));
	++*(uint64_t *)ctx;
	return 0;
}

static void add(struct cst_trace *t, int b, enum cst_protocol p, const char *spec)
{
	struct cst_source_cfg cfg;

	if (cst_source_cfg_parse(&cfg, p, spec, NULL) == 0)
		cst_trace_add_source(t, b, &cfg);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct input in = {data, size};
	struct cst_trace *t;
	struct cst_buffer_info b = {.name = "fuzz", .path = "/dev/null", .size = UINT64_MAX};
	struct cst_decoder_opts o = {.sz = sizeof(o), .mem_read = mem_from_input, .mem_ctx = &in};
	const struct dec_engine strict = {.own = true, .strict = true};
	struct cst_decoder *d;
	uint64_t n = 0;
	int buf;

	if (!size)
		return 0;
	if (cst_trace_alloc(&t))
		return 0;
	b.format = (data[0] & 1) ? cst_bufmt_raw : cst_bufmt_frames;
	buf = cst_trace_add_buffer(t, &b);
	add(t, buf, cst_proto_etmv4i, "traceid=0x10,trcconfigr=0xc1");
	add(t, buf, cst_proto_etmv3,
	    (data[0] & 2) ? "traceid=0x11,etmcr=0x10000860" : "traceid=0x11,etmcr=0x10001860");
	add(t, buf, cst_proto_ptm, "traceid=0x12,etmcr=0x20000400");
	add(t, buf, cst_proto_stm, "traceid=0x20");
	if (!dec_decoder_make(&d, t, buf, &o, (data[0] & 2) ? &strict : NULL)) {
		size_t off = 1, piece = 1 + data[0] % 61;

		cst_decoder_set_elem_cb(d, count, &n);
		while (off < size) {
			size_t len = size - off < piece ? size - off : piece;

			cst_decoder_feed(d, off, data + off, len);
			off += len;
			piece = piece * 7 % 97 + 1;
		}
		cst_decoder_end(d);
		cst_decoder_reset(d);
		cst_decoder_feed(d, 0, data, size);
		cst_decoder_end(d);
		cst_decoder_free(d);
	}
	cst_trace_free(t);
	return 0;
}
