/* CoreSight trace formatter as in a TMC (ETF/ETR) behind a funnel: 16-byte frames, an ID
 * byte opening each frame and at each source change, even bytes' bit 0 in the last byte. */
#include <string.h>

#include "synth_int.h"

void synth_fmt_init(struct synth_fmt *f, uint8_t trace_id, synth_bytes_fn out, void *ctx)
{
	memset(f, 0, sizeof(*f));
	f->trace_id = trace_id;
	f->out = out;
	f->out_ctx = ctx;
}

static int fmt_emit(struct synth_fmt *f)
{
	int rc = f->out(f->out_ctx, f->frame, 16);
	f->pos = 0;
	f->frames++;
	memset(f->frame, 0, sizeof(f->frame));
	return rc;
}

/* Place a data byte at f->pos; even slots keep bit 0 in the auxiliary byte. */
static void fmt_data(struct synth_fmt *f, uint8_t b)
{
	int pos = f->pos++;
	if (pos & 1) {
		f->frame[pos] = b;
	} else {
		f->frame[pos] = b & 0xfe;
		if (b & 1)
			f->frame[15] |= (uint8_t)(1u << (pos / 2));
	}
}

int synth_fmt_put(void *fmt, const uint8_t *p, size_t len)
{
	struct synth_fmt *f = fmt;
	for (size_t i = 0; i < len; i++) {
		if (f->pos == 0) {
			/* Every frame names its source, so a frame read on its own (a wrapped
			 * buffer, an AUX fragment) still decodes; aux bit 0 = 0: the new ID
			 * applies from the next byte. */
			f->frame[0] = (uint8_t)((f->trace_id << 1) | 1);
			f->pos = 1;
		}
		fmt_data(f, p[i]);
		if (f->pos == 15) {
			int rc = fmt_emit(f);
			if (rc)
				return rc;
		}
	}
	return 0;
}

int synth_fmt_flush(struct synth_fmt *f)
{
	if (f->pos <= 1) {
		memset(f->frame, 0, sizeof(f->frame));
		f->pos = 0;
		return 0;
	}
	if (f->pos & 1) {
		/* The next slot is odd and may only hold data: move our last byte there
		 * and put the ID 0 change before it, flagged "after the next byte". */
		int even = f->pos - 1;
		uint8_t last = f->frame[even] | ((f->frame[15] >> (even / 2)) & 1);
		f->frame[even] = 0x01;
		f->frame[15] |= (uint8_t)(1u << (even / 2));
		f->frame[f->pos++] = last;
	} else {
		f->frame[f->pos++] = 0x01; /* ID 0 from the next byte on */
	}
	while (f->pos < 15)
		f->frame[f->pos++] = 0;
	return fmt_emit(f);
}

int synth_fmt_put_id(struct synth_fmt *f, uint8_t id, const uint8_t *p, size_t len)
{
	if (!len)
		return 0;
	if (id != f->trace_id) {
		f->trace_id = id;
		if (f->pos == 1) {
			/* only the frame's opening ID so far: it becomes the new one */
			f->frame[0] = (uint8_t)((id << 1) | 1);
		} else if (f->pos > 1 && !(f->pos & 1)) {
			/* even slot: the ID change applies from the next byte */
			f->frame[f->pos++] = (uint8_t)((id << 1) | 1);
			if (f->pos == 15) {
				int rc = fmt_emit(f);
				if (rc)
					return rc;
			}
		} else if (f->pos > 1) {
			/* odd slot: move the old source's last byte after an ID change
			 * flagged "after the next byte" */
			int even = f->pos - 1;
			uint8_t last = f->frame[even] | ((f->frame[15] >> (even / 2)) & 1);
			f->frame[even] = (uint8_t)((id << 1) | 1);
			f->frame[15] |= (uint8_t)(1u << (even / 2));
			f->frame[f->pos++] = last;
			if (f->pos == 15) {
				int rc = fmt_emit(f);
				if (rc)
					return rc;
			}
		}
		/* pos 0: the next frame opens with the new ID anyway */
	}
	return synth_fmt_put(f, p, len);
}
