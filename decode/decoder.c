/* The decoder: one OpenCSD decode tree per trace buffer, fed through a fixed read
 * window, turning OpenCSD's generic elements into cst_elem for a callback; or,
 * for the ETMv4 and ETMv3 sources cstrace's own decoders cover (etm4_follow.h,
 * etm3_follow.h, when asked), OpenCSD's packets into those decoders, whose
 * elements take the same way. */
#include "decoder_int.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define CST_DEFAULT_WINDOW (64 * 1024)

/* Making and destroying an OpenCSD tree registers with process-wide tables
 * (decoder registry, the default error logger's source list) that are not safe
 * across threads: decoders made on worker threads (split.c) take turns here. */
static pthread_mutex_t tree_lock = PTHREAD_MUTEX_INITIALIZER;
#define DSTREAM_BLOCK 512
#define DSTREAM_DATA (DSTREAM_BLOCK - 8)

static bool id_wanted(const struct cst_decoder *dec, uint8_t id)
{
	const uint64_t *f = dec->opts.id_filter;

	if (!f[0] && !f[1])
		return true;
	return (f[id / 64] >> (id % 64)) & 1;
}

/* Count @e into @st as a decoder does for each element it delivers (a split
 * decode counts the elements it keeps the same way). */
void dec_stats_count(struct cst_decoder_stats *st, const struct cst_elem *e)
{
	uint64_t n = dec_elem_count(e);

	st->elements += n;
	if (e->type != cst_elem_no_sync && e->type != cst_elem_eot && e->type != cst_elem_unknown)
		st->synced += n;
	switch (e->type) {
	case cst_elem_instr_range:
		st->ranges += n;
		st->instructions += e->num_insns;
		break;
	case cst_elem_addr_nacc:
		st->nacc++;
		st->gaps++;
		break;
	case cst_elem_no_sync:
		if (e->gap != cst_gap_init)
			st->gaps++;
		break;
	case cst_elem_addr_unknown:
		st->gaps++;
		break;
	case cst_elem_trace_on:
		if (e->gap == cst_gap_overflow)
			st->gaps++;
		break;
	default:
		break;
	}
}

/* An element of trace ID @chan made at the packet of OpenCSD index @index_sop:
 * where it is, whose, in which context; then to the callback. Nonzero: stop. */
static int deliver(struct cst_decoder *dec, ocsd_trc_index_t index_sop, uint8_t chan,
		   struct cst_elem *e)
{
	uint8_t id = chan & 0x7f;
	int ret;

	/* A flushed perf.data fragment's end of trace comes with index 0 (no packet of
	 * its own): keep it 0, as rebuilt against data fed past 4 GiB it would read as
	 * a multiple of 4 GiB. Snapshots give EOT its last packet's index. */
	e->offset = e->type == cst_elem_eot && !index_sop ? 0 : dec_decoder_offset(dec, index_sop);
	/* OpenCSD keeps a source's last packet index across a reset: the end of trace
	 * of a source that gave nothing since (another CPU's, in a perf.data fragment)
	 * would name a packet of earlier data. It gets 0 too, so that it does not
	 * depend on what the decoder was fed before (decoding on threads). */
	if (e->type == cst_elem_eot && dec->was_reset && !((dec->said[id / 64] >> (id % 64)) & 1))
		e->offset = 0;
	else if (e->type != cst_elem_eot)
		dec->said[id / 64] |= 1ull << (id % 64);
	e->trace_id = chan;
	e->source = dec->id_source[id];
	e->pid = e->tid = e->cpu = -1;
	if (e->source >= 0)
		e->cpu = dec->trace->sources[e->source].cpu;
	if (e->type == cst_elem_pe_context)
		dec->ctx[id] = e->ctx;
	else
		e->ctx = dec->ctx[id];

	dec_stats_count(&dec->stats, e);
	if (!dec->elem_fn)
		return 0;
	ret = dec->elem_fn(dec->elem_ctx, e);
	if (ret)
		dec->stop = ret;
	return ret;
}

static ocsd_datapath_resp_t on_elem(const void *p_context, const ocsd_trc_index_t index_sop,
				    const uint8_t trc_chan_id, const ocsd_generic_trace_elem *el)
{
	struct cst_elem e;

	dec_elem_from_ocsd(&e, (const struct _ocsd_generic_trace_elem *)el);
	return deliver((struct cst_decoder *)p_context, index_sop, trc_chan_id, &e)
		       ? OCSD_RESP_FATAL_SYS_ERR
		       : OCSD_RESP_CONT;
}

void dec_decoder_on_packet(const void *p_context, const ocsd_datapath_op_t op,
		      const ocsd_trc_index_t index_sop, const void *p_packet_in, const uint32_t size,
		      const uint8_t *p_data)
{
	const struct pkt_ctx *pc = p_context;
	struct cst_decoder *dec = pc->dec;
	char text[512];

	if (op != OCSD_OP_DATA || dec->stop)
		return;
	dec->stats.packets++;
	if (!dec->pkt_fn)
		return;
	text[0] = '\0';
	ocsd_pkt_str(dec_protocol_to_ocsd(pc->protocol), p_packet_in, text, sizeof(text));
	dec_decoder_deliver(dec, index_sop, pc->trace_id, pc->protocol, p_data, size, text);
}

void dec_decoder_deliver(struct cst_decoder *dec, ocsd_trc_index_t index_sop, uint8_t trace_id,
			 enum cst_protocol protocol, const uint8_t *raw, uint32_t raw_size,
			 const char *text)
{
	struct cst_packet pkt = {
		.offset = dec_decoder_offset(dec, index_sop), .trace_id = trace_id,
		.protocol = protocol, .raw = raw, .raw_size = raw_size, .text = text};
	int ret = dec->pkt_fn(dec->pkt_ctx, &pkt);

	if (ret)
		dec->stop = ret;
}

/* Code bytes for OpenCSD and cstrace's decoder: from the trace's images, else from
 * the caller's reader; 0 bytes makes them report ADDR_NACC (a gap) rather than
 * fail. */
static uint32_t read_code(void *ctx, uint8_t trace_id, uint64_t address, uint32_t space,
			  uint32_t len, uint8_t *buf)
{
	struct cst_decoder *dec = ctx;
	uint32_t got = dec_mem_images_read(dec->mem, address, space, len, buf);

	if (got || !dec->opts.mem_read)
		return got;
	return dec->opts.mem_read(dec->opts.mem_ctx, trace_id, address, (enum cst_mem_space)space,
				  len, buf);
}

static uint32_t on_mem_read(const void *p_context, const ocsd_vaddr_t address,
			    const ocsd_mem_space_acc_t mem_space, const uint8_t trc_id,
			    const uint32_t req, uint8_t *buf)
{
	return read_code((void *)p_context, trc_id, address, (uint32_t)mem_space, req, buf);
}

static int follow_elem(void *ctx, uint32_t index, uint8_t trace_id, struct cst_elem *e)
{
	struct cst_decoder *dec = ctx;

	dec->stats.followed += dec_elem_count(e); /* ETMv3's runs (etm3_follow.h) */
	return deliver(dec, index, trace_id, e);
}

static void follow_decline(void *ctx, uint32_t index, uint8_t trace_id, const char *why)
{
	struct cst_decoder *dec = ctx;

	if (dec->follow & dec_follow_strict)
		cst_logf(dec->opts.log, cst_log_error,
			 "%s: offset %llu: trace ID 0x%x holds %s, which cstrace's decoder "
			 "does not cover (--decoder=auto decodes it with OpenCSD's)",
			 cst_trace_buffer(dec->trace, dec->buffer)->path,
			 (unsigned long long)dec_decoder_offset(dec, index), trace_id, why);
	else
		cst_logf(dec->opts.log, cst_log_debug,
			 "%s: offset %llu: trace ID 0x%x holds %s: decoded with OpenCSD's "
			 "decoder",
			 cst_trace_buffer(dec->trace, dec->buffer)->path,
			 (unsigned long long)dec_decoder_offset(dec, index), trace_id, why);
	if (!dec->stop)
		dec->stop = -cste_unsupported;
}

const struct follow_io dec_follow_io = {read_code, follow_elem, follow_decline, NULL};
struct cst_decoder *cst_decoder_alloc(const struct cst_trace *trace, int buffer,
				      const struct cst_decoder_opts *opts, int *errp)
{
	return dec_decoder_alloc_follow(trace, buffer, opts, dec_follow_none, errp);
}

struct cst_decoder *dec_decoder_alloc_follow(const struct cst_trace *trace, int buffer,
					     const struct cst_decoder_opts *opts,
					     enum dec_follow follow, int *errp)
{
	struct cst_decoder *dec;
	struct cst_decoder_opts o;
	const struct cst_buffer_info *b = cst_trace_buffer(trace, buffer);
	uint32_t dfmt_flags = 0;
	ocsd_dcd_tree_src_t src_type = OCSD_TRC_SRC_FRAME_FORMATTED;
	int err = -cste_invalid, ndecoders = 0;

	if (!b || cst_opts_load(&o, sizeof(o), opts, "cst_decoder_opts", opts ? opts->log : NULL) < 0)
		goto fail_noalloc;
	err = -cste_nomem;
	dec = calloc(1, sizeof(*dec));
	if (!dec)
		goto fail_noalloc;
	dec->trace = trace;
	dec->buffer = buffer;
	dec->opts = o;
	if (!dec->opts.window)
		dec->opts.window = CST_DEFAULT_WINDOW;
	dec->opts.window = (dec->opts.window + CST_FRAME - 1) / CST_FRAME * CST_FRAME;
	dec->format = b->format;
	dec->follow = follow;
	if (dec->format == cst_bufmt_dstream)
		dec->opts.window = (dec->opts.window + DSTREAM_BLOCK - 1) / DSTREAM_BLOCK * DSTREAM_BLOCK;
	memset(dec->id_source, -1, sizeof(dec->id_source));

	switch (b->format) {
	case cst_bufmt_frames:
		dfmt_flags = OCSD_DFRMTR_FRAME_MEM_ALIGN;
		if (dec->opts.fsync_reset)
			dfmt_flags |= OCSD_DFRMTR_RESET_ON_4X_FSYNC;
		break;
	case cst_bufmt_tpiu:
	case cst_bufmt_dstream:
		dfmt_flags = OCSD_DFRMTR_HAS_FSYNCS;
		break;
	case cst_bufmt_raw:
		src_type = OCSD_TRC_SRC_SINGLE;
		break;
	}
	pthread_mutex_lock(&tree_lock);
	dec->tree = ocsd_create_dcd_tree(src_type, dfmt_flags);
	err = -cste_decoder;
	if (!dec->tree) {
		pthread_mutex_unlock(&tree_lock);
		cst_logf(dec->opts.log, cst_log_error, "%s: OpenCSD cannot create a decode tree",
			 b->path);
		goto fail;
	}
	for (int s = 0; s < trace->nsources; s++) {
		const struct cst_source_cfg *src = &trace->sources[s];

		if (trace->source_buffer[s] != buffer)
			continue;
		if (!id_wanted(dec, cst_source_trace_id(src)) && b->format != cst_bufmt_raw)
			continue;
		if (b->format == cst_bufmt_raw && ndecoders)
			break; /* one source per unformatted buffer */
		if (dec_decoder_add_source(dec, s, src) == 0)
			ndecoders++;
	}
	pthread_mutex_unlock(&tree_lock);
	if (!ndecoders) {
		err = -cste_no_trace;
		cst_logf(dec->opts.log, cst_log_error,
			 "%s: no decodable trace source for buffer %s%s", b->path, b->name,
			 dec->opts.id_filter[0] || dec->opts.id_filter[1] ? " with the selected IDs"
									  : "");
		goto fail;
	}
	if (!dec->opts.packets_only) {
		ocsd_dt_set_gen_elem_outfn(dec->tree, on_elem, dec);
		dec->mem = dec_mem_images_open(trace, dec->opts.log);
		err = -cste_nomem;
		if (!dec->mem)
			goto fail;
		ocsd_dt_add_callback_trcid_mem_acc(dec->tree, 0, ~(ocsd_vaddr_t)0,
						   OCSD_MEM_SPACE_ANY, on_mem_read, dec);
	}
	return dec;

fail:
	cst_decoder_free(dec);
fail_noalloc:
	if (errp)
		*errp = err;
	return NULL;
}

void cst_decoder_free(struct cst_decoder *dec)
{
	if (!dec)
		return;
	dec_decoder_release_printer(dec); /* before the tree: see there */
	if (dec->tree) {
		pthread_mutex_lock(&tree_lock);
		ocsd_destroy_dcd_tree(dec->tree);
		pthread_mutex_unlock(&tree_lock);
	}
	dec_mem_images_close(dec->mem);
	for (int i = 0; i < 128; i++) {
		dec_etm4_follow_free(dec->follower[i]);
		dec_etm3_follow_free(dec->follower3[i]);
	}
	free(dec);
}

int cst_decoder_set_elem_cb(struct cst_decoder *dec, cst_elem_fn fn, void *ctx)
{
	if (!dec)
		return -cste_invalid;
	dec->elem_fn = fn;
	dec->elem_ctx = ctx;
	return 0;
}

int cst_decoder_set_packet_cb(struct cst_decoder *dec, cst_packet_fn fn, void *ctx)
{
	if (!dec)
		return -cste_invalid;
	dec->pkt_fn = fn;
	dec->pkt_ctx = ctx;
	return 0;
}

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
		if (OCSD_DATA_RESP_IS_FATAL(resp)) {
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

/* DSTREAM captures come in 512-byte blocks: 504 bytes of TPIU data and an 8-byte
 * footer. Footers are skipped, and offsets count TPIU data bytes only, as
 * trc_pkt_lister counts them. @pos is the block-aligned file position. */
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

int cst_decoder_get_stats(const struct cst_decoder *dec, struct cst_decoder_stats *stats)
{
	if (!dec || !stats)
		return -cste_invalid;
	*stats = dec->stats;
	return 0;
}

void dec_stats_add(struct cst_decoder_stats *sum, const struct cst_decoder_stats *s)
{
	sum->bytes += s->bytes;
	sum->elements += s->elements;
	sum->ranges += s->ranges;
	sum->instructions += s->instructions;
	sum->gaps += s->gaps;
	sum->nacc += s->nacc;
	sum->packets += s->packets;
	sum->synced += s->synced;
	sum->aux_missing += s->aux_missing;
	sum->frame_ids[0] |= s->frame_ids[0];
	sum->frame_ids[1] |= s->frame_ids[1];
	sum->chunks += s->chunks;
	sum->chunks_apart += s->chunks_apart;
	sum->chunks_followed += s->chunks_followed;
	sum->followed += s->followed;
}
