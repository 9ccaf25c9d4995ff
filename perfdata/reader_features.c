/* perf.data feature sections (build-ids, AUXTRACE index, strings) and the attrs
 * section with its sample ids. */
#include "reader_int.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- features */

static char *dup_bounded(const uint8_t *p, uint64_t max)
{
	size_t n = strnlen((const char *)p, max);
	char *s = malloc(n + 1);

	if (s) {
		memcpy(s, p, n);
		s[n] = '\0';
	}
	return s;
}

/* perf strings: u32 len (padded length) then the text. */
static int feat_string(const uint8_t *p, uint64_t size, uint64_t *pos, char **out)
{
	uint32_t len;

	if (*pos + 4 > size)
		return -cste_format;
	len = cst_le32(p + *pos);
	if (len > size - *pos - 4)
		return -cste_format;
	*out = dup_bounded(p + *pos + 4, len);
	if (!*out)
		return -cste_nomem;
	*pos += 4 + (uint64_t)len;
	return 0;
}

static int feat_build_ids(struct cst_perf_features *f, const uint8_t *p, uint64_t size)
{
	uint64_t pos = 0;
	size_t cap = 0;

	while (pos + 8 <= size) {
		uint16_t misc = cst_le16(p + pos + 4), sz = cst_le16(p + pos + 6);
		struct cst_perf_build_id *b;

		if (sz < 36 || sz > size - pos)
			return -cste_format;
		if (CST_GROW(f->build_ids, cap, (size_t)f->nbuild_ids + 1) < 0)
			return -cste_nomem;
		b = &f->build_ids[f->nbuild_ids];
		b->pid = (int32_t)cst_le32(p + pos + 8);
		b->misc = misc;
		memcpy(b->id, p + pos + 12, 20);
		/* PERF_RECORD_MISC_BUILD_ID_SIZE: the size byte after the id is valid. */
		b->size = (misc & 0x8000) ? p[pos + 32] : 20;
		if (b->size == 0 || b->size > 20)
			b->size = 20;
		b->filename = dup_bounded(p + pos + 36, sz - 36);
		if (!b->filename)
			return -cste_nomem;
		f->nbuild_ids++;
		pos += sz;
	}
	return 0;
}

/* The AUXTRACE index. perf writes a u64 count, then {file offset, size} per
 * AUXTRACE record (size: the record's 48-byte header, not its payload); simpleperf
 * writes the pairs alone. An odd number of words is perf's
 * layout, an even one simpleperf's, the rule simpleperf's own reader uses. */
static int feat_auxtrace(struct cst_perf_reader *r, const uint8_t *p, uint64_t size)
{
	struct cst_perf_features *f = &r->feat;
	uint64_t nr, first;

	if (size % 8)
		return -cste_format;
	if ((size / 8) % 2) {
		nr = cst_le64(p);
		if (nr > (size - 8) / 16)
			return -cste_format;
		first = 8;
	} else {
		nr = size / 16;
		first = 0;
	}
	f->auxtrace_offsets = calloc(nr ? nr : 1, sizeof(uint64_t));
	if (!f->auxtrace_offsets)
		return -cste_nomem;
	for (uint64_t i = 0; i < nr; i++)
		f->auxtrace_offsets[i] = cst_le64(p + first + i * 16);
	f->nauxtrace = nr;
	f->has_auxtrace_index = true;
	return 0;
}

/* EVENT_DESC: u32 events, u32 attr size; per event the attr, u32 ids, the name
 * (a perf string), the ids (u64 each). Only the names are kept. */
static int feat_event_desc(struct cst_perf_features *f, const uint8_t *p, uint64_t size)
{
	uint64_t pos = 8;
	uint32_t nr, asz;

	if (size < 8)
		return -cste_format;
	nr = cst_le32(p);
	asz = cst_le32(p + 4);
	if (nr > size / 8)
		return -cste_format;
	f->event_names = calloc(nr ? nr : 1, sizeof(char *));
	if (!f->event_names)
		return -cste_nomem;
	for (uint32_t i = 0; i < nr; i++) {
		uint32_t nids;
		int err;

		if (asz > size - pos || size - pos - asz < 4)
			return -cste_format;
		pos += asz;
		nids = cst_le32(p + pos);
		pos += 4;
		err = feat_string(p, size, &pos, &f->event_names[i]);
		if (err)
			return err;
		f->nevent_names++;
		if ((uint64_t)nids * 8 > size - pos)
			return -cste_format;
		pos += (uint64_t)nids * 8;
	}
	return 0;
}

static int parse_feature(struct cst_perf_reader *r, int bit, const uint8_t *p, uint64_t size)
{
	struct cst_perf_features *f = &r->feat;
	uint64_t pos = 0;

	switch (bit) {
	case cst_perf_feat_build_id:
		return feat_build_ids(f, p, size);
	case cst_perf_feat_hostname:
		return feat_string(p, size, &pos, &f->hostname);
	case cst_perf_feat_osrelease:
		return feat_string(p, size, &pos, &f->osrelease);
	case cst_perf_feat_version:
		return feat_string(p, size, &pos, &f->version);
	case cst_perf_feat_arch:
		return feat_string(p, size, &pos, &f->arch);
	case cst_perf_feat_cpudesc:
		return feat_string(p, size, &pos, &f->cpudesc);
	case cst_perf_feat_cpuid:
		return feat_string(p, size, &pos, &f->cpuid);
	case cst_perf_feat_nrcpus:
		if (size < 8)
			return -cste_format;
		f->nr_cpus_avail = cst_le32(p);
		f->nr_cpus_online = cst_le32(p + 4);
		f->has_nrcpus = true;
		return 0;
	case cst_perf_feat_cmdline: {
		uint32_t nr;

		if (size < 4)
			return -cste_format;
		nr = cst_le32(p);
		if (nr > size / 4)
			return -cste_format;
		f->cmdline = calloc(nr ? nr : 1, sizeof(char *));
		if (!f->cmdline)
			return -cste_nomem;
		pos = 4;
		for (uint32_t i = 0; i < nr; i++) {
			int err = feat_string(p, size, &pos, &f->cmdline[i]);

			if (err)
				return err;
			f->ncmdline++;
		}
		return 0;
	}
	case cst_perf_feat_auxtrace:
		return feat_auxtrace(r, p, size);
	case cst_perf_feat_event_desc:
		return feat_event_desc(f, p, size);
	default:
		return 0; /* known to perf, not needed here: skipped */
	}
}

static const char *feature_name(int bit)
{
	static const char *const names[] = {
		[cst_perf_feat_build_id] = "BUILD_ID", [cst_perf_feat_hostname] = "HOSTNAME",
		[cst_perf_feat_osrelease] = "OSRELEASE", [cst_perf_feat_version] = "VERSION",
		[cst_perf_feat_arch] = "ARCH", [cst_perf_feat_nrcpus] = "NRCPUS",
		[cst_perf_feat_cpudesc] = "CPUDESC", [cst_perf_feat_cpuid] = "CPUID",
		[cst_perf_feat_cmdline] = "CMDLINE", [cst_perf_feat_auxtrace] = "AUXTRACE",
		[cst_perf_feat_event_desc] = "EVENT_DESC",
	};

	if (bit >= 0 && bit < (int)(sizeof(names) / sizeof(names[0])) && names[bit])
		return names[bit];
	return "feature";
}

/* Features are optional for decoding: a bad one is a warning, never fatal. */
int pd_read_features(struct cst_perf_reader *r)
{
	uint64_t off = r->data_offset + r->data_size, nfeat = 0;
	uint8_t sec[16];

	for (int bit = 0; bit < cst_perf_feat_max; bit++) {
		uint64_t foff, fsize;
		uint8_t *buf;
		int err;

		if (!cst_perf_reader_has_feature(r, bit))
			continue;
		if (pd_read_exact(r, off + nfeat * 16, sec, 16)) {
			pd_rlog(r, cst_log_warning, off + nfeat * 16,
			     "feature section table ends past EOF (%" PRIu64 " bytes); features ignored",
			     r->file_size);
			return 0;
		}
		nfeat++;
		foff = cst_le64(sec);
		fsize = cst_le64(sec + 8);
		if (bit == cst_perf_feat_compressed) {
			pd_rlog(r, cst_log_error, off, "compressed (zstd) perf.data is not supported");
			return -cste_unsupported;
		}
		/* Sections not read here are not checked either: simpleperf numbers
		 * its own from 128 (its FEAT_FILE can pass the size limit below),
		 * newer perf adds more; a warning about them would be noise. */
		if (bit != cst_perf_feat_build_id && bit != cst_perf_feat_hostname &&
		    bit != cst_perf_feat_osrelease && bit != cst_perf_feat_version &&
		    bit != cst_perf_feat_arch && bit != cst_perf_feat_nrcpus &&
		    bit != cst_perf_feat_cpudesc && bit != cst_perf_feat_cpuid &&
		    bit != cst_perf_feat_cmdline && bit != cst_perf_feat_auxtrace &&
		    bit != cst_perf_feat_event_desc)
			continue;
		if (!pd_in_file(r, foff, fsize) || fsize > MAX_FEATURE_SIZE) {
			pd_rlog(r, cst_log_warning, off + (nfeat - 1) * 16,
			     "%s feature at %" PRIu64 " size %" PRIu64 " lies past EOF; skipped",
			     feature_name(bit), foff, fsize);
			continue;
		}
		buf = malloc(fsize ? fsize : 1);
		if (!buf)
			return -cste_nomem;
		err = pd_read_exact(r, foff, buf, fsize);
		if (!err)
			err = parse_feature(r, bit, buf, fsize);
		free(buf);
		if (err == -cste_nomem)
			return err;
		if (err)
			pd_rlog(r, cst_log_warning, foff, "%s feature of %" PRIu64 " bytes is malformed; skipped",
			     feature_name(bit), fsize);
	}
	return 0;
}

/* ------------------------------------------------------------------- attrs */

int pd_read_attrs(struct cst_perf_reader *r)
{
	uint64_t n;

	if (r->attr_size == 0)
		return 0;
	if (r->attr_entry < 64 + 16) {
		pd_rlog(r, cst_log_error, 16, "attr_size %" PRIu64 ", expected at least 80", r->attr_entry);
		return -cste_format;
	}
	if (!pd_in_file(r, r->attr_offset, r->attr_size)) {
		pd_rlog(r, cst_log_error, 24,
		     "attr section at %" PRIu64 " size %" PRIu64 " ends past EOF (%" PRIu64 " bytes)",
		     r->attr_offset, r->attr_size, r->file_size);
		return -cste_format;
	}
	if (r->attr_size % r->attr_entry) {
		pd_rlog(r, cst_log_error, 32, "attr section size %" PRIu64 " is not a multiple of attr_size %" PRIu64,
		     r->attr_size, r->attr_entry);
		return -cste_format;
	}
	n = r->attr_size / r->attr_entry;
	if (n > 4096) {
		pd_rlog(r, cst_log_error, 32, "%" PRIu64 " attrs, expected at most 4096", n);
		return -cste_format;
	}
	r->attrs = calloc(n ? n : 1, sizeof(*r->attrs));
	if (!r->attrs)
		return -cste_nomem;
	for (uint64_t i = 0; i < n; i++) {
		uint64_t off = r->attr_offset + i * r->attr_entry;
		struct cst_perf_attr *a = &r->attrs[i];
		uint8_t b[136 + 16];
		uint64_t ids_off, ids_size, have;
		uint8_t *idb;

		have = r->attr_entry - 16 < 136 ? r->attr_entry - 16 : 136;
		memset(b, 0, sizeof(b));
		if (pd_read_exact(r, off, b, have) || pd_read_exact(r, off + r->attr_entry - 16, b + 136, 16))
			return -cste_io;
		a->type = cst_le32(b);
		a->size = cst_le32(b + 4);
		if (a->size > r->attr_entry - 16 || (a->size && a->size < 64)) {
			pd_rlog(r, cst_log_error, off + 4, "attr.size %u does not fit attr_size %" PRIu64,
			     a->size, r->attr_entry);
			return -cste_format;
		}
		/* Fields beyond attr.size are zero by definition. */
		if (a->size && a->size < have)
			memset(b + a->size, 0, have - a->size);
		a->config = cst_le64(b + 8);
		a->sample_period = cst_le64(b + 16);
		a->sample_type = cst_le64(b + 24);
		a->read_format = cst_le64(b + 32);
		a->flags = cst_le64(b + 40);
		a->wakeup_events = cst_le32(b + 48);
		a->bp_type = cst_le32(b + 52);
		a->config1 = cst_le64(b + 56);
		a->config2 = cst_le64(b + 64);
		a->aux_watermark = cst_le32(b + 104);
		a->aux_sample_size = cst_le32(b + 112);
		a->config3 = cst_le64(b + 128);
		ids_off = cst_le64(b + 136);
		ids_size = cst_le64(b + 144);
		r->nattrs++;
		if (!ids_size)
			continue;
		if (!pd_in_file(r, ids_off, ids_size) || ids_size % 8 || ids_size / 8 > MAX_IDS) {
			pd_rlog(r, cst_log_warning, off + r->attr_entry - 16,
			     "attr %" PRIu64 " ids at %" PRIu64 " size %" PRIu64 " are not in the file; ignored",
			     i, ids_off, ids_size);
			continue;
		}
		idb = malloc(ids_size);
		a->ids = calloc(ids_size / 8, sizeof(uint64_t));
		if (!idb || !a->ids) {
			free(idb);
			return -cste_nomem;
		}
		if (pd_read_exact(r, ids_off, idb, ids_size)) {
			free(idb);
			return -cste_io;
		}
		for (uint64_t k = 0; k < ids_size / 8; k++)
			a->ids[k] = cst_le64(idb + k * 8);
		a->nids = ids_size / 8;
		free(idb);
	}
	return 0;
}
