/* Feeding a decoder: trace bytes into its OpenCSD tree in the units OpenCSD
 * takes (whole 16-byte frames, DSTREAM blocks without their footers), through a
 * fixed read window from the buffer file or pushed by the caller, past corrupt
 * data; and what the frames say of the trace IDs they hold. */
#include "decoder_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* After a fatal data-path response: report where and reset the tree so that the
 * decoders look for sync again past the bad data. */
static void recover(struct cst_decoder *dec, uint64_t offset)
{
	char msg[256] = "";
	ocsd_trc_index_t idx;
	uint8_t chan;

	ocsd_get_last_err(&idx, &chan, msg, sizeof(msg));
	cst_logf(dec->opts.log, cst_log_warning,
		 "%s: offset %llu: trace decoder error (%s): resynchronising; trace skipped",
		 cst_trace_buffer(dec->trace, dec->buffer)->path, (unsigned long long)offset,
		 msg[0] ? msg : "corrupt data");
	dec->stats.gaps++;
	ocsd_dt_process_data(dec->tree, OCSD_OP_RESET, 0, 0, NULL, NULL);
}

/* Push bytes through the tree, resolving WAIT and recovering from FATAL. */
static int push(struct cst_decoder *dec, uint64_t offset, const uint8_t *data, size_t len)
{
	while (len && !dec->stop) {
		uint32_t chunk = len > (1u << 30) ? (1u << 30) : (uint32_t)len;
		uint32_t used = 0;
		ocsd_datapath_resp_t resp;

		dec->fed_end = offset + chunk;
		resp = ocsd_dt_process_data(dec->tree, OCSD_OP_DATA, (ocsd_trc_index_t)offset, chunk,
					    data, &used);
		while (OCSD_DATA_RESP_IS_WAIT(resp) && !dec->stop)
			resp = ocsd_dt_process_data(dec->tree, OCSD_OP_FLUSH, 0, 0, NULL, NULL);
		if (dec->stop)
			break;
		if (used > chunk) {
			/* OpenCSD 1.3.3's TPIU deformatter can claim, with a fatal
			 * response, more bytes than it was given (seen with a frame sync
			 * in the last bytes of a DSTREAM block): the bytes given are all
			 * it can have taken. Believing it ran the feed past the buffer. */
			cst_logf(dec->opts.log, cst_log_warning,
				 "%s: offset %llu: the trace decoder claimed %u bytes of the %u it "
				 "was given: resynchronising after them; trace skipped",
				 cst_trace_buffer(dec->trace, dec->buffer)->path,
				 (unsigned long long)offset, used, chunk);
			dec->stats.gaps++;
			ocsd_dt_process_data(dec->tree, OCSD_OP_RESET, 0, 0, NULL, NULL);
			used = chunk;
		} else if (OCSD_DATA_RESP_IS_FATAL(resp)) {
			/* skip the unit that failed (a byte, or the rest of its frame) so
			 * that every fatal response moves forward: no endless retry */
			size_t skip = dec->format == cst_bufmt_raw
					      ? 1
					      : (size_t)(CST_FRAME - ((offset + used) % CST_FRAME));

			recover(dec, offset + used);
			used += (uint32_t)(skip < chunk - used ? skip : chunk - used);
		}
		dec->stats.bytes += used;
		offset += used;
		data += used;
		len -= used;
	}
	return dec->stop;
}

/* The IDs that 16-byte formatter frames name: an even byte with bit 0 set starts
 * a new ID (byte >> 1). Frame syncs (FF FF FF 7F) and the null and reserved IDs
 * are left out. */
void dec_frame_ids(const uint8_t *data, size_t len, uint64_t ids[2])
{
	for (size_t f = 0; f + CST_FRAME <= len; f += CST_FRAME) {
		const uint8_t *b = data + f;

		if (b[0] == 0xff && b[1] == 0xff && b[2] == 0xff && b[3] == 0x7f)
			continue;
		for (unsigned k = 0; k < CST_FRAME - 1; k += 2) {
			unsigned id = b[k] >> 1;

			if ((b[k] & 1) && id && id < 0x70)
				ids[id / 64] |= 1ull << (id % 64);
		}
	}
}

/* Only looked at until the decoder has sync, to say which IDs the data holds when
 * no source matched. */
static void note_frame_ids(struct cst_decoder *dec, const uint8_t *data, size_t len)
{
	dec_frame_ids(data, len, dec->stats.frame_ids);
}

int cst_decoder_feed(struct cst_decoder *dec, uint64_t offset, const uint8_t *data, size_t len)
{
	size_t whole;

	if (!dec || (!data && len))
		return -cste_invalid;
	if (dec->format != cst_bufmt_frames)
		return push(dec, offset, data, len); /* raw, or TPIU framing found by FSYNCs */

	/* Memory-aligned frames must reach OpenCSD in 16-byte units. */
	if (dec->ncarry) {
		size_t take = CST_FRAME - dec->ncarry;

		if (take > len)
			take = len;
		memcpy(dec->carry + dec->ncarry, data, take);
		dec->ncarry += take;
		data += take;
		len -= take;
		offset += take;
		if (dec->ncarry < CST_FRAME)
			return 0;
		dec->ncarry = 0;
		if (!dec->stats.synced)
			note_frame_ids(dec, dec->carry, CST_FRAME);
		if (push(dec, dec->carry_offset, dec->carry, CST_FRAME))
			return dec->stop;
	}
	whole = len / CST_FRAME * CST_FRAME;
	if (!dec->stats.synced)
		note_frame_ids(dec, data, whole);
	if (whole && push(dec, offset, data, whole))
		return dec->stop;
	if (len > whole) {
		dec->ncarry = len - whole;
		dec->carry_offset = offset + whole;
		memcpy(dec->carry, data + whole, dec->ncarry);
	}
	return 0;
}

int cst_decoder_end(struct cst_decoder *dec)
{
	ocsd_datapath_resp_t resp;

	if (!dec)
		return -cste_invalid;
	if (dec->ncarry) {
		cst_logf(dec->opts.log, cst_log_warning,
			 "%s: offset %llu: %zu bytes at the end do not make a whole 16-byte frame: "
			 "ignored",
			 cst_trace_buffer(dec->trace, dec->buffer)->path,
			 (unsigned long long)dec->carry_offset, dec->ncarry);
		dec->ncarry = 0;
	}
	if (dec->stop)
		return dec->stop;
	resp = ocsd_dt_process_data(dec->tree, OCSD_OP_EOT, 0, 0, NULL, NULL);
	while (OCSD_DATA_RESP_IS_WAIT(resp) && !dec->stop)
		resp = ocsd_dt_process_data(dec->tree, OCSD_OP_FLUSH, 0, 0, NULL, NULL);
	return dec->stop;
}

int cst_decoder_reset(struct cst_decoder *dec)
{
	if (!dec)
		return -cste_invalid;
	dec->ncarry = 0;
	dec->stop = 0;
	memset(dec->ctx, 0, sizeof(dec->ctx));
	dec->was_reset = true;
	dec->said[0] = dec->said[1] = 0;
	ocsd_dt_process_data(dec->tree, OCSD_OP_RESET, 0, 0, NULL, NULL);
	return 0;
}

/* A DSTREAM capture (decoder_int.h): footers are skipped, and offsets count TPIU
 * data bytes only, as trc_pkt_lister counts them. @pos is the block-aligned file
 * position. */
static int feed_dstream(struct cst_decoder *dec, uint64_t pos, const uint8_t *data, size_t len)
{
	for (size_t i = 0; i < len; i += DSTREAM_BLOCK) {
		size_t n = len - i < DSTREAM_DATA ? len - i : DSTREAM_DATA;
		uint64_t block = (pos + i) / DSTREAM_BLOCK;
		int ret = push(dec, block * DSTREAM_DATA, data + i, n);

		if (ret)
			return ret;
	}
	return 0;
}

int dec_decoder_open_span(struct cst_decoder *dec, int *fdp, uint64_t *posp, uint64_t *endp)
{
	const struct cst_buffer_info *b = cst_trace_buffer(dec->trace, dec->buffer);
	uint64_t pos, end;
	struct stat st;
	int fd;

	fd = open(b->path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		cst_logf(dec->opts.log, cst_log_error, "%s: cannot open trace buffer: %s", b->path,
			 strerror(errno));
		return errno == ENOENT ? -cste_not_found : -cste_io;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		cst_logf(dec->opts.log, cst_log_error, "%s: not a regular file", b->path);
		close(fd);
		return -cste_io;
	}
	end = b->size == UINT64_MAX ? (uint64_t)st.st_size : b->offset + b->size;
	if (end > (uint64_t)st.st_size || b->offset > end) {
		cst_logf(dec->opts.log, cst_log_error,
			 "%s: buffer wants bytes %llu-%llu but the file has %llu", b->path,
			 (unsigned long long)b->offset, (unsigned long long)end,
			 (unsigned long long)st.st_size);
		close(fd);
		return -cste_truncated;
	}
	if (end == b->offset) {
		cst_logf(dec->opts.log, cst_log_error, "%s: trace buffer is empty", b->path);
		close(fd);
		return -cste_no_trace;
	}
	if (dec->format == cst_bufmt_frames && (end - b->offset) % CST_FRAME && !dec->span_told)
		cst_logf(dec->opts.log, cst_log_warning,
			 "%s: offset %llu: size %llu is not a whole number of 16-byte frames: "
			 "the last %llu bytes cannot be decoded",
			 b->path, (unsigned long long)(end - (end - b->offset) % CST_FRAME),
			 (unsigned long long)(end - b->offset),
			 (unsigned long long)((end - b->offset) % CST_FRAME));
	pos = b->offset;
	if (dec->opts.start_offset) {
		/* resume on a unit boundary: a frame, or a DSTREAM block (whose offsets
		 * count trace bytes, 504 of each 512) */
		uint64_t s0 = dec->opts.start_offset, start;

		if (dec->format == cst_bufmt_dstream)
			start = (s0 + DSTREAM_DATA - 1) / DSTREAM_DATA * DSTREAM_BLOCK;
		else if (dec->format == cst_bufmt_frames)
			start = (s0 + CST_FRAME - 1) / CST_FRAME * CST_FRAME;
		else
			start = s0;
		pos = start < end - b->offset ? b->offset + start : end;
	}
	*fdp = fd;
	*posp = pos;
	*endp = end;
	return 0;
}

int cst_decoder_run(struct cst_decoder *dec)
{
	const struct cst_buffer_info *b;
	uint8_t *window;
	uint64_t pos, end;
	int fd, ret;

	if (!dec)
		return -cste_invalid;
	b = cst_trace_buffer(dec->trace, dec->buffer);
	ret = dec_decoder_open_span(dec, &fd, &pos, &end);
	if (ret)
		return ret;
	window = malloc(dec->opts.window);
	if (!window) {
		close(fd);
		return -cste_nomem;
	}
	for (; pos < end && !ret;) {
		size_t want = end - pos < dec->opts.window ? (size_t)(end - pos) : dec->opts.window;
		ssize_t got = pread(fd, window, want, (off_t)pos);

		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0) {
			cst_logf(dec->opts.log, cst_log_error, "%s: offset %llu: read failed: %s",
				 b->path, (unsigned long long)pos, got < 0 ? strerror(errno) : "EOF");
			ret = -cste_io;
			break;
		}
		if (dec->format == cst_bufmt_dstream)
			ret = feed_dstream(dec, pos - b->offset, window, (size_t)got);
		else /* offsets count from the buffer's first byte, as trc_pkt_lister's */
			ret = cst_decoder_feed(dec, pos - b->offset, window, (size_t)got);
		pos += (uint64_t)got;
		if (dec->opts.progress)
			dec->opts.progress(dec->opts.progress_ctx, pos - b->offset, end - b->offset);
	}
	free(window);
	close(fd);
	if (ret < 0)
		return ret;
	if (ret)
		return ret;
	dec->ncarry = 0; /* the partial frame was reported above */
	return cst_decoder_end(dec);
}

int dec_frames_scan_ids(int fd, uint64_t pos, uint64_t end, uint64_t ids[2])
{
	uint8_t *buf = malloc(1u << 20);

	if (!buf)
		return -cste_nomem;
	while (pos < end) {
		size_t want = end - pos < (1u << 20) ? (size_t)(end - pos) : (1u << 20);
		ssize_t got = pread(fd, buf, want, (off_t)pos);

		if (got <= 0) {
			free(buf);
			return -cste_io;
		}
		dec_frame_ids(buf, (size_t)got, ids);
		pos += (uint64_t)got;
	}
	free(buf);
	return 0;
}

/* Several IDs interleave by frame order, which a split decode's join by
 * offsets does not model: the callers decode such data on one thread. */
int dec_decoder_one_id(const struct cst_decoder *dec, int fd, uint64_t pos, uint64_t end)
{
	uint64_t ids[2] = {0, 0};
	int id = -1, n = 0;

	if (dec->opts.packets_only ||
	    (dec->format != cst_bufmt_frames && dec->format != cst_bufmt_raw))
		return -1;
	for (int i = 0; i < 128; i++)
		if (dec->id_source[i] >= 0) {
			id = i;
			n++;
		}
	if (n == 1)
		return id;
	if (dec->format != cst_bufmt_frames || dec_frames_scan_ids(fd, pos, end, ids) < 0)
		return -1;
	id = -1;
	for (int i = 0; i < 128; i++) {
		if (dec->id_source[i] < 0 || !((ids[i / 64] >> (i % 64)) & 1))
			continue;
		if (id >= 0)
			return -1;
		id = i;
	}
	return id;
}

void dec_decoder_set_fill(struct cst_decoder *dec, void (*fill)(void *ctx, struct cst_elem *e),
			  void *ctx)
{
	dec->fill = fill;
	dec->fill_ctx = ctx;
}

void dec_decoder_set_log(struct cst_decoder *dec, const struct cst_log *log)
{
	dec->opts.log = log;
}

void dec_decoder_drop_partial(struct cst_decoder *dec)
{
	dec->ncarry = 0;
}

void dec_decoder_set_told(struct cst_decoder *dec)
{
	dec->span_told = true;
}

void dec_ocsd_log_quiet(bool quiet)
{
	ocsd_def_errlog_init(quiet ? OCSD_ERR_SEV_NONE : OCSD_ERR_SEV_ERROR, 0);
}
