/* perf.data record iteration: each record's header, body and sample_id trailer,
 * checked against its type's size, with cs_etm AUXTRACE_INFO on demand. */
#include "reader_int.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* --------------------------------------------------------------- records */

/* The sample_id trailer sits at the end of a non-sample record. Its layout is the
 * first attr's: perf requires all attrs of a file to agree on these positions. */
void cst_perf_sample_id_parse(const struct cst_perf_attr *first, const uint8_t *rec,
			      uint16_t size, uint16_t body, struct cst_perf_sample_id *sid)
{
	uint64_t st;
	int n = 0;
	const uint8_t *p;

	memset(sid, 0, sizeof(*sid));
	sid->pid = sid->tid = sid->cpu = UINT32_MAX;
	if (!first || !(first->flags & CST_PERF_ATTR_SAMPLE_ID_ALL))
		return;
	st = first->sample_type;
	n += !!(st & CST_PERF_SAMPLE_TID) + !!(st & CST_PERF_SAMPLE_TIME) +
	     !!(st & CST_PERF_SAMPLE_ID) + !!(st & CST_PERF_SAMPLE_STREAM_ID) +
	     !!(st & CST_PERF_SAMPLE_CPU) + !!(st & CST_PERF_SAMPLE_IDENTIFIER);
	if (n == 0 || size < body + n * 8)
		return;
	p = rec + size - n * 8;
	if (st & CST_PERF_SAMPLE_TID) {
		sid->pid = cst_le32(p);
		sid->tid = cst_le32(p + 4);
		sid->have_tid = true;
		p += 8;
	}
	if (st & CST_PERF_SAMPLE_TIME) {
		sid->time = cst_le64(p);
		sid->have_time = true;
		p += 8;
	}
	if (st & CST_PERF_SAMPLE_ID) {
		sid->id = cst_le64(p);
		sid->have_id = true;
		p += 8;
	}
	if (st & CST_PERF_SAMPLE_STREAM_ID) {
		sid->stream_id = cst_le64(p);
		sid->have_stream_id = true;
		p += 8;
	}
	if (st & CST_PERF_SAMPLE_CPU) {
		sid->cpu = cst_le32(p);
		sid->res = cst_le32(p + 4);
		sid->have_cpu = true;
		p += 8;
	}
	if (st & CST_PERF_SAMPLE_IDENTIFIER) {
		sid->id = cst_le64(p);
		sid->have_id = true;
	}
}

/* Copy a NUL-terminated (or bounded) string out of a record into r->str. */
static const char *rec_string(struct cst_perf_reader *r, const uint8_t *p, size_t max)
{
	size_t n = strnlen((const char *)p, max);

	if (CST_GROW(r->str, r->str_cap, n + 1) < 0)
		return "";
	memcpy(r->str, p, n);
	r->str[n] = '\0';
	return r->str;
}

/* Minimum body sizes (header included) of the records parsed below. */
static uint16_t min_size(uint32_t type)
{
	switch (type) {
	case cst_perf_rec_mmap: return 8 + 32 + 1;
	case cst_perf_rec_mmap2: return 8 + 64 + 1;
	case cst_perf_rec_comm: return 8 + 8 + 1;
	case cst_perf_rec_fork:
	case cst_perf_rec_exit: return 8 + 24;
	case cst_perf_rec_lost: return 8 + 16;
	case cst_perf_rec_lost_samples: return 8 + 8;
	case cst_perf_rec_aux: return 8 + 24;
	case cst_perf_rec_itrace_start: return 8 + 8;
	case cst_perf_rec_aux_output_hw_id: return 8 + 8;
	case cst_perf_rec_switch: return 8;
	case cst_perf_rec_switch_cpu_wide: return 8 + 8;
	case cst_perf_rec_auxtrace: return 48;
	case cst_perf_rec_auxtrace_info: return 16;
	case cst_perf_rec_time_conv: return 8 + 24;
	default: return 8;
	}
}

static const char *rec_name(uint32_t type)
{
	switch (type) {
	case cst_perf_rec_mmap: return "MMAP";
	case cst_perf_rec_mmap2: return "MMAP2";
	case cst_perf_rec_comm: return "COMM";
	case cst_perf_rec_fork: return "FORK";
	case cst_perf_rec_exit: return "EXIT";
	case cst_perf_rec_lost: return "LOST";
	case cst_perf_rec_lost_samples: return "LOST_SAMPLES";
	case cst_perf_rec_aux: return "AUX";
	case cst_perf_rec_itrace_start: return "ITRACE_START";
	case cst_perf_rec_aux_output_hw_id: return "AUX_OUTPUT_HW_ID";
	case cst_perf_rec_switch: return "SWITCH";
	case cst_perf_rec_switch_cpu_wide: return "SWITCH_CPU_WIDE";
	case cst_perf_rec_auxtrace: return "AUXTRACE";
	case cst_perf_rec_auxtrace_info: return "AUXTRACE_INFO";
	case cst_perf_rec_time_conv: return "TIME_CONV";
	default: return "record";
	}
}

/* pid, tid, addr, len, pgoff: the head MMAP and MMAP2 share. */
static void read_mmap_head(struct cst_perf_record *rec, const uint8_t *p)
{
	rec->u.mmap.pid = cst_le32(p + 8);
	rec->u.mmap.tid = cst_le32(p + 12);
	rec->u.mmap.addr = cst_le64(p + 16);
	rec->u.mmap.len = cst_le64(p + 24);
	rec->u.mmap.pgoff = cst_le64(p + 32);
}

/* A NUL-padded string at @off ending the body (file name, comm); the sample_id
 * trailer follows the padded string, so it is parsed from there. */
static const char *tail_string(struct cst_perf_reader *r, struct cst_perf_record *rec,
			       const uint8_t *p, uint16_t size, uint16_t off)
{
	const char *str = rec_string(r, p + off, size - off);

	cst_perf_sample_id_parse(r->nattrs ? &r->attrs[0] : NULL, p, size,
				 off + (uint16_t)((strlen(str) + 8) & ~7u), &rec->sid);
	return str;
}

/* A file name must end inside its record: without the NUL, where the name stops
 * and the sample_id trailer starts is unknown. Returns 1 (skip the record, with
 * a warning the first time it is read) or 0. */
static int name_unterminated(struct cst_perf_reader *r, const struct cst_perf_record *rec,
			     const uint8_t *p, uint16_t off)
{
	if (memchr(p + off, 0, (size_t)(rec->size - off)))
		return 0;
	if (rec->file_offset >= r->skips_told) {
		pd_rlog(r, cst_log_warning, rec->file_offset,
			"%s record: the file name has no terminating NUL within the record's %u "
			"bytes; record skipped", rec_name(rec->type), rec->size);
		r->skips_told = rec->file_offset + 1;
	}
	return 1;
}

/* Returns 0, 1 for a record to skip, or a negative error. */
static int parse_body(struct cst_perf_reader *r, struct cst_perf_record *rec, const uint8_t *p)
{
	uint16_t size = rec->size;
	uint16_t body = min_size(rec->type);

	if (size < body) {
		pd_rlog(r, cst_log_error, rec->file_offset,
		     "%s record of %u bytes, expected at least %u", rec_name(rec->type), size, body);
		return -cste_format;
	}
	switch (rec->type) {
	case cst_perf_rec_mmap:
		if (name_unterminated(r, rec, p, 40))
			return 1;
		read_mmap_head(rec, p);
		rec->u.mmap.filename = tail_string(r, rec, p, size, 40);
		return 0;
	case cst_perf_rec_mmap2:
		if (name_unterminated(r, rec, p, 72))
			return 1;
		read_mmap_head(rec, p);
		if (rec->misc & CST_PERF_MISC_MMAP_BUILD_ID) {
			rec->u.mmap.build_id_size = p[40] > 20 ? 20 : p[40];
			memcpy(rec->u.mmap.build_id, p + 44, 20);
		} else {
			rec->u.mmap.maj = cst_le32(p + 40);
			rec->u.mmap.min = cst_le32(p + 44);
			rec->u.mmap.ino = cst_le64(p + 48);
			rec->u.mmap.ino_generation = cst_le64(p + 56);
		}
		rec->u.mmap.prot = cst_le32(p + 64);
		rec->u.mmap.flags = cst_le32(p + 68);
		rec->u.mmap.filename = tail_string(r, rec, p, size, 72);
		return 0;
	case cst_perf_rec_comm:
		rec->u.comm.pid = cst_le32(p + 8);
		rec->u.comm.tid = cst_le32(p + 12);
		rec->u.comm.comm = tail_string(r, rec, p, size, 16);
		return 0;
	case cst_perf_rec_fork:
	case cst_perf_rec_exit:
		rec->u.fork.pid = cst_le32(p + 8);
		rec->u.fork.ppid = cst_le32(p + 12);
		rec->u.fork.tid = cst_le32(p + 16);
		rec->u.fork.ptid = cst_le32(p + 20);
		rec->u.fork.time = cst_le64(p + 24);
		break;
	case cst_perf_rec_lost:
		rec->u.lost.id = cst_le64(p + 8);
		rec->u.lost.lost = cst_le64(p + 16);
		break;
	case cst_perf_rec_lost_samples:
		rec->u.lost_samples.lost = cst_le64(p + 8);
		break;
	case cst_perf_rec_aux:
		rec->u.aux.aux_offset = cst_le64(p + 8);
		rec->u.aux.aux_size = cst_le64(p + 16);
		rec->u.aux.flags = cst_le64(p + 24);
		break;
	case cst_perf_rec_itrace_start:
		rec->u.itrace_start.pid = cst_le32(p + 8);
		rec->u.itrace_start.tid = cst_le32(p + 12);
		break;
	case cst_perf_rec_aux_output_hw_id:
		rec->u.hw_id.hw_id = cst_le64(p + 8);
		break;
	case cst_perf_rec_switch:
		rec->u.sw.out = rec->misc & CST_PERF_MISC_SWITCH_OUT;
		break;
	case cst_perf_rec_switch_cpu_wide:
		rec->u.sw.next_prev_pid = cst_le32(p + 8);
		rec->u.sw.next_prev_tid = cst_le32(p + 12);
		rec->u.sw.out = rec->misc & CST_PERF_MISC_SWITCH_OUT;
		break;
	case cst_perf_rec_auxtrace:
		rec->u.auxtrace.size = cst_le64(p + 8);
		rec->u.auxtrace.offset = cst_le64(p + 16);
		rec->u.auxtrace.reference = cst_le64(p + 24);
		rec->u.auxtrace.idx = cst_le32(p + 32);
		rec->u.auxtrace.tid = cst_le32(p + 36);
		rec->u.auxtrace.cpu = cst_le32(p + 40);
		rec->u.auxtrace.data_offset = rec->file_offset + size;
		return 0; /* perf's own record: no trailer */
	case cst_perf_rec_auxtrace_info:
		rec->u.auxtrace_info.type = cst_le32(p + 8);
		rec->u.auxtrace_info.priv = p + 16;
		rec->u.auxtrace_info.npriv = (uint64_t)(size - 16) / 8;
		return 0;
	case cst_perf_rec_time_conv:
		memset(&rec->u.time_conv, 0, sizeof(rec->u.time_conv));
		rec->u.time_conv.time_shift = cst_le64(p + 8);
		rec->u.time_conv.time_mult = cst_le64(p + 16);
		rec->u.time_conv.time_zero = cst_le64(p + 24);
		/* newer perf adds the counter's width (cap_user_time_short) */
		if (size >= 8 + 48) {
			rec->u.time_conv.time_cycles = cst_le64(p + 32);
			rec->u.time_conv.time_mask = cst_le64(p + 40);
			rec->u.time_conv.cap_user_time_zero = p[48] != 0;
			rec->u.time_conv.cap_user_time_short = p[49] != 0;
			rec->u.time_conv.has_cycles = true;
		}
		return 0;
	default:
		/* Kernel records below 64 carry a trailer; perf's own (>= 64) do not. */
		if (rec->type >= 64)
			return 0;
		break;
	}
	cst_perf_sample_id_parse(r->nattrs ? &r->attrs[0] : NULL, p, size, body, &rec->sid);
	return 0;
}

/* The record at r->pos (see cst_perf_reader_next); 1: it was skipped. */
static int next_record(struct cst_perf_reader *r, struct cst_perf_record *rec)
{
	const uint8_t *p;
	uint64_t pos, left;
	int err;

	if (!r || !rec)
		return -cste_invalid;
	if (r->stopped || r->pos >= r->data_end)
		return -cste_eos;
	memset(rec, 0, sizeof(*rec));
	rec->sid.pid = rec->sid.tid = rec->sid.cpu = UINT32_MAX;
	pos = r->pos;
	left = r->data_end - pos;
	if (left < 8) {
		pd_rlog(r, cst_log_warning, pos,
		     "data ends %" PRIu64 " bytes into a record header, expected 8 bytes; %" PRIu64
		     " records read",
		     left, r->count);
		r->stopped = true;
		return -cste_truncated;
	}
	p = pd_window_get(r, pos, 8, &err);
	if (!p) {
		r->stopped = true;
		if (err)
			return err;
		pd_rlog(r, cst_log_warning, pos, "file ends inside a record header");
		return -cste_truncated;
	}
	rec->type = cst_le32(p);
	rec->misc = cst_le16(p + 4);
	rec->size = cst_le16(p + 6);
	rec->file_offset = pos;
	if (rec->size < 8) {
		pd_rlog(r, cst_log_error, pos, "record size %u, expected at least 8 (type %u)", rec->size,
		     rec->type);
		r->stopped = true;
		return -cste_format;
	}
	if (rec->size > left) {
		pd_rlog(r, cst_log_warning, pos,
		     "%s record of %u bytes runs past the end of data at %" PRIu64
		     " (truncated file); %" PRIu64 " records read",
		     rec_name(rec->type), rec->size, r->data_end, r->count);
		r->stopped = true;
		return -cste_truncated;
	}
	p = pd_window_get(r, pos, rec->size, &err);
	if (!p) {
		r->stopped = true;
		if (err)
			return err;
		pd_rlog(r, cst_log_warning, pos, "file ends inside a %s record", rec_name(rec->type));
		return -cste_truncated;
	}
	rec->raw = p;
	err = parse_body(r, rec, p);
	if (err < 0) {
		r->stopped = true;
		return err;
	}
	r->pos = pos + rec->size;
	if (err)
		return 1; /* skipped (AUXTRACE never is: no payload to step over) */
	if (rec->type == cst_perf_rec_auxtrace) {
		uint64_t avail = r->data_end - r->pos;

		if (rec->u.auxtrace.size > avail) {
			/* told once: readers rewind and read the file again */
			if (pos >= r->skips_told) {
				pd_rlog(r, cst_log_warning, pos,
					"AUXTRACE payload of %" PRIu64 " bytes runs past the end of "
					"data at %" PRIu64 "; keeping %" PRIu64 " bytes",
					rec->u.auxtrace.size, r->data_end, avail);
				r->skips_told = pos + 1;
			}
			rec->u.auxtrace.size = avail;
		}
		r->pos += rec->u.auxtrace.size;
	}
	r->count++;
	return 0;
}

int cst_perf_reader_next(struct cst_perf_reader *r, struct cst_perf_record *rec)
{
	int ret;

	while ((ret = next_record(r, rec)) == 1)
		;
	return ret;
}

int cst_perf_reader_rewind(struct cst_perf_reader *r)
{
	if (!r)
		return -cste_invalid;
	r->pos = r->data_offset;
	r->count = 0;
	r->stopped = false;
	return 0;
}

uint64_t cst_perf_reader_count(const struct cst_perf_reader *r)
{
	return r ? r->count : 0;
}

/* A log that names the file and the record's offset before a parser's message. */
struct at_record {
	const struct cst_perf_reader *r;
	uint64_t offset;
};

static void at_record_log(void *ctx, enum cst_log_level level, const char *msg)
{
	const struct at_record *at = ctx;

	pd_rlog(at->r, level, at->offset, "%s", msg);
}

int cst_perf_reader_etm_info(struct cst_perf_reader *r, struct cst_perf_etm_info *info)
{
	struct cst_perf_record rec;
	int err;

	if (!r || !info)
		return -cste_invalid;
	memset(info, 0, sizeof(*info));
	cst_perf_reader_rewind(r);
	while ((err = cst_perf_reader_next(r, &rec)) == 0) {
		if (rec.type != cst_perf_rec_auxtrace_info)
			continue;
		if (rec.u.auxtrace_info.type != CST_PERF_AUXTRACE_CS_ETM) {
			pd_rlog(r, cst_log_error, rec.file_offset,
			     "AUXTRACE_INFO of type %u, expected 3 (cs_etm)", rec.u.auxtrace_info.type);
			cst_perf_reader_rewind(r);
			return -cste_not_found;
		}
		struct at_record at = {r, rec.file_offset};
		const struct cst_log log = {at_record_log, &at};

		err = cst_perf_etm_info_parse(info, rec.u.auxtrace_info.priv,
					      rec.u.auxtrace_info.npriv, &log);
		cst_perf_reader_rewind(r);
		return err;
	}
	cst_perf_reader_rewind(r);
	if (err == -cste_eos || err == -cste_truncated || err == -cste_format) {
		pd_rlog(r, cst_log_error, r->data_offset,
		     "no AUXTRACE_INFO record: expected a file recorded with -e cs_etm//");
		return -cste_not_found;
	}
	return err;
}
