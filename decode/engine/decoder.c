/* The decoder: one OpenCSD decode tree per trace buffer, a decoder in it per
 * source, and every element they make delivered to a callback with its offset,
 * source and context: OpenCSD's generic elements, or, for the sources a follower
 * of the engine covers (follow.h), OpenCSD's packets into that follower, whose
 * elements take the same way. feed.c feeds the tree. */
#include "decoder_int.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CST_DEFAULT_WINDOW (64 * 1024)

/* Making and destroying an OpenCSD tree registers with process-wide tables
 * (decoder registry, the default error logger's source list) that are not safe
 * across threads: decoders made on worker threads (split.c) take turns here. */
static pthread_mutex_t tree_lock = PTHREAD_MUTEX_INITIALIZER;

static bool id_wanted(const struct cst_decoder *dec, uint8_t id)
{
	const uint64_t *f = dec->opts.id_filter;

	if (!f[0] && !f[1])
		return true;
	return (f[id / 64] >> (id % 64)) & 1;
}

/* Count @e into @st as a decoder does for each element it delivers (a split
 * decode counts the elements it keeps the same way). */
/* Note gaps at [@lo, @hi] in the 64 KiB block of @lo, keeping the lowest
 * CST_NACC_SPANS blocks: what is kept depends only on the addresses, not on
 * their order (a decode on threads counts chunk by chunk). */
static void note_nacc(struct cst_decoder_stats *st, uint64_t lo, uint64_t hi)
{
	uint64_t blk = lo >> 16;
	uint32_t n = st->nacc_spans < CST_NACC_SPANS ? st->nacc_spans : CST_NACC_SPANS, i = 0;

	while (i < n && st->nacc_at[i].lo >> 16 < blk)
		i++;
	if (i < n && st->nacc_at[i].lo >> 16 == blk) {
		if (lo < st->nacc_at[i].lo)
			st->nacc_at[i].lo = lo;
		if (hi > st->nacc_at[i].hi)
			st->nacc_at[i].hi = hi;
		return;
	}
	if (i == CST_NACC_SPANS) {
		st->nacc_more = 1; /* above the lowest kept */
		return;
	}
	if (n == CST_NACC_SPANS) {
		st->nacc_more = 1; /* the highest kept makes room */
		n--;
	}
	memmove(&st->nacc_at[i + 1], &st->nacc_at[i], (n - i) * sizeof(st->nacc_at[0]));
	st->nacc_at[i] = (struct cst_addr_span){lo, hi};
	st->nacc_spans = n + 1;
}

void dec_stats_count(struct cst_decoder_stats *st, const struct cst_elem *e)
{
	uint64_t n = dec_elem_count(e);

	st->elements += n;
	st->followed += e->followed ? n : 0; /* ETMv3's runs (follow_cfg.runs) */
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
		note_nacc(st, e->start, e->start);
		break;
	case cst_elem_no_sync:
		if (e->gap != cst_gap_init)
			st->gaps++;
		break;
	case cst_elem_addr_unknown:
		st->gaps++;
		break;
	case cst_elem_swtrace:
		st->swtrace += n;
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
	if (dec->fill)
		dec->fill(dec->fill_ctx, e);

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

	dec_elem_from_ocsd(&e, el);
	return deliver((struct cst_decoder *)p_context, index_sop, trc_chan_id, &e)
		       ? OCSD_RESP_FATAL_SYS_ERR
		       : OCSD_RESP_CONT;
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

	e->followed = true; /* counted by dec_stats_count, wherever it goes */
	return deliver(dec, index, trace_id, e);
}

static void follow_decline(void *ctx, uint32_t index, uint8_t trace_id, const char *why)
{
	struct cst_decoder *dec = ctx;

	if (dec->engine.strict)
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
	dec->declined = true;
	if (!dec->stop)
		dec->stop = -cste_unsupported;
}

bool dec_decoder_declined(const struct cst_decoder *dec)
{
	return dec && dec->declined && !dec->engine.strict;
}

static void follow_resync(void *ctx, uint32_t index, uint8_t trace_id, const char *why)
{
	struct cst_decoder *dec = ctx;

	cst_logf(dec->opts.log, cst_log_warning,
		 "%s: offset %llu: trace ID 0x%x holds %s, where OpenCSD's decoder crashed: "
		 "cstrace's decoder resynchronises after it; trace skipped",
		 cst_trace_buffer(dec->trace, dec->buffer)->path,
		 (unsigned long long)dec_decoder_offset(dec, index), trace_id, why);
	dec->stats.gaps++;
}

/* A decoder for source @s in the tree: OpenCSD's full decoder, its packet
 * processor feeding a follower of the engine's, or (packets_only) its packet
 * processor for a listing. Returns 0 or an error. */
static int add_source(struct cst_decoder *dec, int s, const struct cst_source_cfg *src)
{
	const struct dec_follower *follower = NULL;
	union dec_ocsd_cfg cfg;
	struct follow_cfg fc;
	const char *name;
	unsigned char csid = 0;
	uint32_t flags;
	ocsd_err_t err;

	if (dec_ocsd_config(src, &cfg, &name, &fc))
		return -cste_unsupported;
	if (!dec->opts.packets_only)
		follower = dec_follower_for(&dec->engine, &fc);
	flags = dec->opts.packets_only || follower ? OCSD_CREATE_FLG_PACKET_PROC
						   : OCSD_CREATE_FLG_FULL_DECODER;
	err = ocsd_dt_create_decoder(dec->tree, name, (int)flags, &cfg, &csid);
	if (err != OCSD_OK) {
		char msg[256];

		ocsd_err_str(err, msg, sizeof(msg));
		cst_logf(dec->opts.log, cst_log_warning,
			 "source %s: OpenCSD cannot create a %s decoder: %s", src->name, name, msg);
		return -cste_decoder;
	}
	csid &= 0x7f;
	dec->id_source[csid] = (int8_t)s;
	if (dec->opts.packets_only)
		return dec_packets_attach(dec, csid, src->protocol);
	if (follower) {
		const struct follow_io io = {read_code, follow_elem, follow_decline, follow_resync,
					     dec};

		fc.trace_id = csid;
		fc.timed = dec->engine.timed;
		fc.runs = dec->engine.runs;
		fc.recover = dec->engine.recover;
		dec->follower[csid] = follower->alloc(&fc, &io);
		if (!dec->follower[csid] ||
		    ocsd_dt_attach_packet_callback(dec->tree, csid, OCSD_C_API_CB_PKT_SINK,
						   (void *)dec_follow_packet,
						   dec->follower[csid]) != OCSD_OK)
			return -cste_nomem;
	}
	return 0;
}

int cst_decoder_alloc(struct cst_decoder **out, const struct cst_trace *trace, int buffer,
		      const struct cst_decoder_opts *opts)
{
	return dec_decoder_make(out, trace, buffer, opts, NULL);
}

int dec_decoder_make(struct cst_decoder **out, const struct cst_trace *trace, int buffer,
		     const struct cst_decoder_opts *opts, const struct dec_engine *engine)
{
	struct cst_decoder *dec;
	struct cst_decoder_opts o;
	const struct cst_buffer_info *b = cst_trace_buffer(trace, buffer);
	uint32_t dfmt_flags = 0;
	ocsd_dcd_tree_src_t src_type = OCSD_TRC_SRC_FRAME_FORMATTED;
	int err, ndecoders = 0;

	if (!out)
		return -cste_invalid;
	*out = NULL;
	if (!b || cst_opts_load(&o, sizeof(o), opts, "cst_decoder_opts", opts ? opts->log : NULL) < 0)
		return -cste_invalid;
	dec = calloc(1, sizeof(*dec));
	if (!dec)
		return -cste_nomem;
	dec->trace = trace;
	dec->buffer = buffer;
	dec->opts = o;
	if (!dec->opts.window)
		dec->opts.window = CST_DEFAULT_WINDOW;
	dec->opts.window = (dec->opts.window + CST_FRAME - 1) / CST_FRAME * CST_FRAME;
	dec->format = b->format;
	if (engine)
		dec->engine = *engine;
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
		err = add_source(dec, s, src);
		if (err == -cste_nomem) {
			pthread_mutex_unlock(&tree_lock);
			goto fail;
		}
		if (err == 0)
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
	*out = dec;
	return 0;

fail:
	cst_decoder_free(dec);
	return err;
}

void cst_decoder_free(struct cst_decoder *dec)
{
	if (!dec)
		return;
	dec_packets_release(dec); /* before the tree: see there */
	if (dec->tree) {
		pthread_mutex_lock(&tree_lock);
		ocsd_destroy_dcd_tree(dec->tree);
		pthread_mutex_unlock(&tree_lock);
	}
	dec_mem_images_close(dec->mem);
	for (int i = 0; i < 128; i++)
		if (dec->follower[i])
			dec->follower[i]->ops->free(dec->follower[i]);
	free(dec);
}

const struct cst_trace *dec_decoder_trace(const struct cst_decoder *dec)
{
	return dec->trace;
}

int dec_decoder_buffer(const struct cst_decoder *dec)
{
	return dec->buffer;
}

const struct cst_decoder_opts *dec_decoder_opts(const struct cst_decoder *dec)
{
	return &dec->opts;
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
	sum->swtrace += s->swtrace;
	sum->packets += s->packets;
	sum->synced += s->synced;
	sum->aux_missing += s->aux_missing;
	sum->aux_uncovered += s->aux_uncovered;
	sum->aux_duplicate += s->aux_duplicate;
	for (uint32_t i = 0; i < s->nacc_spans && i < CST_NACC_SPANS; i++)
		note_nacc(sum, s->nacc_at[i].lo, s->nacc_at[i].hi);
	sum->nacc_more |= s->nacc_more;
	sum->frame_ids[0] |= s->frame_ids[0];
	sum->frame_ids[1] |= s->frame_ids[1];
	sum->chunks += s->chunks;
	sum->chunks_apart += s->chunks_apart;
	sum->chunks_followed += s->chunks_followed;
	sum->followed += s->followed;
}
