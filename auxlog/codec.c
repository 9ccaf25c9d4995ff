/* Event payloads of a recorded AUX stream, encoded and decoded side by side so the
 * layout has one home (docs/auxlog.md describes it). Little-endian throughout;
 * strings are a u32 length, the bytes and a NUL; byte blocks are padded to 8. */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

/* ---- encoding ---- */

static void put_bytes(struct cst_buf *b, const void *data, uint64_t n)
{
	size_t pad = (size_t)((8 - (n & 7)) & 7);
	uint8_t *p = n <= SIZE_MAX - 8 ? cst_buf_room(b, (size_t)n + pad) : NULL;

	if (!p) {
		b->failed = true; /* a block this host cannot hold (a 32-bit build) */
		return;
	}
	if (n)
		memcpy(p, data, (size_t)n);
	memset(p + n, 0, pad);
}

static void put_str(struct cst_buf *b, const char *s)
{
	size_t n = s ? strlen(s) : 0;
	uint8_t *p = cst_buf_room(b, 4 + n + 1);

	if (!p)
		return;
	cst_put_le32(p, (uint32_t)n);
	memcpy(p + 4, s ? s : "", n + 1);
}

static void pad8(struct cst_buf *b)
{
	cst_buf_zeros(b, (8 - (b->len & 7)) & 7);
}

static int enc_etm_info(struct cst_buf *b, const struct cst_perf_etm_info *info)
{
	uint64_t n = cst_perf_etm_info_words(info);
	uint8_t *p;

	if (!n)
		return -cste_invalid;
	cst_buf_put_le64(b, n);
	p = cst_buf_room(b, (size_t)(n * 8));
	return p ? cst_perf_etm_info_encode(info, p, n) : 0;
}

static void enc_attr(struct cst_buf *b, const struct cst_perf_attr *a)
{
	cst_buf_put_le32(b, a->type);
	cst_buf_put_le32(b, a->size);
	cst_buf_put_le64(b, a->config);
	cst_buf_put_le64(b, a->sample_period);
	cst_buf_put_le64(b, a->sample_type);
	cst_buf_put_le64(b, a->read_format);
	cst_buf_put_le64(b, a->flags);
	cst_buf_put_le32(b, a->wakeup_events);
	cst_buf_put_le32(b, a->bp_type);
	cst_buf_put_le64(b, a->config1);
	cst_buf_put_le64(b, a->config2);
	cst_buf_put_le64(b, a->config3);
	cst_buf_put_le32(b, a->aux_watermark);
	cst_buf_put_le32(b, a->aux_sample_size);
	cst_buf_put_le64(b, a->nids);
	for (uint64_t i = 0; i < a->nids; i++)
		cst_buf_put_le64(b, a->ids[i]);
}

static int enc_read(struct cst_buf *b, const struct cst_auxlog_read *r)
{
	if (r->nctl > CST_AUXLOG_MAX_CTL || (r->data_len && !r->data) ||
	    (r->aux_len && !r->aux && !r->aux_omitted))
		return -cste_invalid;
	cst_buf_put_le32(b, r->idx);
	cst_buf_put_le32(b, (r->snapshot ? 1u : 0) | (r->aux_omitted ? 2u : 0));
	cst_buf_put_le64(b, r->data_tail);
	cst_buf_put_le64(b, r->data_head);
	cst_buf_put_le64(b, r->data_tail_after);
	cst_buf_put_le64(b, r->aux_head);
	cst_buf_put_le64(b, r->aux_pos);
	cst_buf_put_le64(b, r->aux_tail_after);
	cst_buf_put_le64(b, r->unwritten);
	cst_buf_put_le64(b, (uint64_t)r->result);
	cst_buf_put_le32(b, r->nctl);
	cst_buf_put_le32(b, 0);
	for (int i = 0; i < CST_AUXLOG_MAX_CTL; i++) {
		cst_buf_put_le32(b, i < (int)r->nctl ? (uint32_t)r->ctl[i].op : 0);
		cst_buf_put_le32(b, i < (int)r->nctl ? (uint32_t)r->ctl[i].result : 0);
	}
	cst_buf_put_le64(b, r->data_len);
	cst_buf_put_le64(b, r->aux_len);
	put_bytes(b, r->data, r->data_len);
	if (!r->aux_omitted)
		put_bytes(b, r->aux, r->aux_len);
	return 0;
}

int auxlog_encode(struct cst_buf *b, const struct cst_auxlog_event *ev)
{
	const struct cst_auxlog_session *s = &ev->u.session;
	const struct cst_auxlog_ring *g = &ev->u.ring;
	int err = 0;

	switch (ev->type) {
	case cst_auxlog_session:
		if (s->argc && !s->argv)
			return -cste_invalid;
		cst_buf_put_le64(b, s->page_size);
		cst_buf_put_le32(b, (s->snapshot ? 1u : 0) | (s->sideband_only ? 2u : 0) |
			      (s->aux_omitted ? 4u : 0));
		cst_buf_put_le32(b, s->nr_cpus_avail);
		cst_buf_put_le32(b, s->nr_cpus_online);
		cst_buf_put_le32(b, s->argc);
		put_str(b, s->hostname);
		put_str(b, s->osrelease);
		put_str(b, s->arch);
		put_str(b, s->version);
		for (uint32_t i = 0; i < s->argc; i++)
			put_str(b, s->argv[i]);
		break;
	case cst_auxlog_attr:
		if (ev->u.attr.nids && !ev->u.attr.ids)
			return -cste_invalid;
		enc_attr(b, &ev->u.attr);
		break;
	case cst_auxlog_etm_info:
		err = enc_etm_info(b, &ev->u.etm_info);
		break;
	case cst_auxlog_ring:
		cst_buf_put_le32(b, g->idx);
		cst_buf_put_le32(b, g->cpu);
		cst_buf_put_le32(b, g->tid);
		cst_buf_put_le32(b, g->overwrite ? 1 : 0);
		cst_buf_put_le64(b, g->data_size);
		cst_buf_put_le64(b, g->aux_size);
		cst_buf_put_le64(b, g->data_head);
		cst_buf_put_le64(b, g->data_tail);
		cst_buf_put_le64(b, g->aux_head);
		cst_buf_put_le64(b, g->aux_tail);
		break;
	case cst_auxlog_wake:
		cst_buf_put_le32(b, ev->u.wake.nready);
		cst_buf_put_le32(b, 0);
		cst_buf_put_le64(b, ev->u.wake.ring_mask);
		break;
	case cst_auxlog_signal:
		cst_buf_put_le32(b, (uint32_t)ev->u.signo);
		cst_buf_put_le32(b, 0);
		break;
	case cst_auxlog_drain:
		cst_buf_put_le32(b, (uint32_t)ev->u.drain.kind);
		cst_buf_put_le32(b, ev->u.drain.nrings);
		break;
	case cst_auxlog_read:
		err = enc_read(b, &ev->u.read);
		break;
	case cst_auxlog_build_id: {
		const struct cst_perf_build_id *bi = &ev->u.build_id;

		if (bi->size > 20)
			return -cste_invalid;
		cst_buf_put_le32(b, (uint32_t)bi->pid);
		cst_buf_put_le32(b, (uint32_t)bi->misc | ((uint32_t)bi->size << 16));
		put_bytes(b, bi->id, 20);
		put_str(b, bi->filename);
		break;
	}
	case cst_auxlog_end:
		cst_buf_put_le32(b, (uint32_t)ev->u.end.result);
		cst_buf_put_le32(b, (uint32_t)ev->u.end.exit_status);
		cst_buf_put_le32(b, (ev->u.end.interrupted ? 1u : 0) | (ev->u.end.output_failed ? 2u : 0));
		cst_buf_put_le32(b, 0);
		break;
	default:
		return -cste_invalid;
	}
	pad8(b);
	if (err)
		return err;
	return b->failed ? -cste_nomem : 0;
}

/* ---- decoding ---- */

static const uint8_t *take(struct acur *c, uint64_t n)
{
	if (c->bad || n > c->len - c->pos) {
		c->bad = true;
		return NULL;
	}
	c->pos += n;
	return c->p + c->pos - n;
}

static uint32_t get32(struct acur *c)
{
	const uint8_t *p = take(c, 4);

	return p ? cst_le32(p) : 0;
}

static uint64_t get64(struct acur *c)
{
	const uint8_t *p = take(c, 8);

	return p ? cst_le64(p) : 0;
}

/* A block of @n bytes and its padding; NULL (and @c bad) when it does not fit. */
static const uint8_t *get_bytes(struct acur *c, uint64_t n)
{
	const uint8_t *p;

	if (n > c->len)
		n = c->len + 1; /* cannot fit; avoids overflow in the padding below */
	p = take(c, n);
	take(c, (8 - (n & 7)) & 7);
	return c->bad ? NULL : p;
}

static const char *get_str(struct acur *c)
{
	uint32_t n = get32(c);
	const uint8_t *p = take(c, (uint64_t)n + 1);

	if (!p || p[n] || memchr(p, 0, n)) {
		c->bad = true;
		return NULL;
	}
	return (const char *)p;
}

static int dec_session(struct acur *c, struct cst_auxlog_session *s, struct ascratch *sc)
{
	uint32_t flags;

	s->page_size = get64(c);
	flags = get32(c);
	s->snapshot = flags & 1;
	s->sideband_only = flags & 2;
	s->aux_omitted = flags & 4;
	s->nr_cpus_avail = get32(c);
	s->nr_cpus_online = get32(c);
	s->argc = get32(c);
	s->hostname = get_str(c);
	s->osrelease = get_str(c);
	s->arch = get_str(c);
	s->version = get_str(c);
	/* each argument takes at least 5 bytes: a count beyond that is a lie */
	if (c->bad || s->argc > (c->len - c->pos) / 5)
		return -cste_format;
	if (CST_GROW(sc->argv, sc->argv_cap, (size_t)s->argc + 1) < 0)
		return -cste_nomem;
	for (uint32_t i = 0; i < s->argc; i++)
		sc->argv[i] = get_str(c);
	sc->argv[s->argc] = NULL;
	s->argv = sc->argv;
	return 0;
}

static int dec_attr(struct acur *c, struct cst_perf_attr *a, struct ascratch *sc)
{
	a->type = get32(c);
	a->size = get32(c);
	a->config = get64(c);
	a->sample_period = get64(c);
	a->sample_type = get64(c);
	a->read_format = get64(c);
	a->flags = get64(c);
	a->wakeup_events = get32(c);
	a->bp_type = get32(c);
	a->config1 = get64(c);
	a->config2 = get64(c);
	a->config3 = get64(c);
	a->aux_watermark = get32(c);
	a->aux_sample_size = get32(c);
	a->nids = get64(c);
	if (c->bad || a->nids > (c->len - c->pos) / 8)
		return -cste_format;
	if (CST_GROW(sc->ids, sc->ids_cap, (size_t)a->nids + 1) < 0)
		return -cste_nomem;
	for (uint64_t i = 0; i < a->nids; i++)
		sc->ids[i] = get64(c);
	a->ids = sc->ids;
	return 0;
}

static int dec_read(struct acur *c, struct cst_auxlog_read *r)
{
	uint32_t flags;

	r->idx = get32(c);
	flags = get32(c);
	r->snapshot = flags & 1;
	r->aux_omitted = flags & 2;
	r->data_tail = get64(c);
	r->data_head = get64(c);
	r->data_tail_after = get64(c);
	r->aux_head = get64(c);
	r->aux_pos = get64(c);
	r->aux_tail_after = get64(c);
	r->unwritten = get64(c);
	r->result = (int64_t)get64(c);
	r->nctl = get32(c);
	get32(c);
	for (int i = 0; i < CST_AUXLOG_MAX_CTL; i++) {
		r->ctl[i].op = (enum cst_auxlog_ctl_op)get32(c);
		r->ctl[i].result = (int32_t)get32(c);
	}
	if (r->nctl > CST_AUXLOG_MAX_CTL)
		return -cste_format;
	for (uint32_t i = 0; i < r->nctl; i++)
		if (r->ctl[i].op != cst_auxlog_ctl_enable && r->ctl[i].op != cst_auxlog_ctl_disable)
			return -cste_format;
	r->data_len = get64(c);
	r->aux_len = get64(c);
	r->data = r->data_len ? get_bytes(c, r->data_len) : NULL;
	r->aux = r->aux_len && !r->aux_omitted ? get_bytes(c, r->aux_len) : NULL;
	return c->bad ? -cste_format : 0;
}

int auxlog_decode(struct acur *c, uint32_t type, struct cst_auxlog_event *ev, struct ascratch *s,
		  const char **why)
{
	struct cst_auxlog_ring *g = &ev->u.ring;
	uint32_t v;
	int err = 0;

	*why = "an event shorter than its fields";
	memset(&ev->u, 0, sizeof(ev->u));
	ev->type = (enum cst_auxlog_type)type;
	switch (type) {
	case cst_auxlog_session:
		err = dec_session(c, &ev->u.session, s);
		break;
	case cst_auxlog_attr:
		err = dec_attr(c, &ev->u.attr, s);
		break;
	case cst_auxlog_etm_info: {
		uint64_t n = get64(c);
		const uint8_t *p = n <= c->len / 8 ? take(c, n * 8) : NULL;

		if (!p)
			return -cste_format;
		*why = "ETM metadata that does not parse";
		err = cst_perf_etm_info_parse(&ev->u.etm_info, p, n, NULL);
		if (err == -cste_nomem)
			return err;
		if (err < 0)
			return -cste_format;
		break;
	}
	case cst_auxlog_ring:
		g->idx = get32(c);
		g->cpu = get32(c);
		g->tid = get32(c);
		g->overwrite = get32(c) & 1;
		g->data_size = get64(c);
		g->aux_size = get64(c);
		g->data_head = get64(c);
		g->data_tail = get64(c);
		g->aux_head = get64(c);
		g->aux_tail = get64(c);
		break;
	case cst_auxlog_wake:
		ev->u.wake.nready = get32(c);
		get32(c);
		ev->u.wake.ring_mask = get64(c);
		break;
	case cst_auxlog_signal:
		ev->u.signo = (int32_t)get32(c);
		break;
	case cst_auxlog_drain:
		v = get32(c);
		ev->u.drain.kind = (enum cst_auxlog_drain_kind)v;
		ev->u.drain.nrings = get32(c);
		if (v > cst_auxlog_drain_snapshot) {
			*why = "an unknown drain kind";
			return -cste_format;
		}
		break;
	case cst_auxlog_read:
		err = dec_read(c, &ev->u.read);
		break;
	case cst_auxlog_build_id: {
		const uint8_t *id;

		ev->u.build_id.pid = (int32_t)get32(c);
		v = get32(c);
		ev->u.build_id.misc = (uint16_t)v;
		ev->u.build_id.size = (uint8_t)(v >> 16);
		id = get_bytes(c, 20);
		if (id)
			memcpy(ev->u.build_id.id, id, 20);
		ev->u.build_id.filename = (char *)get_str(c);
		if (ev->u.build_id.size > 20) {
			*why = "a build-id longer than 20 bytes";
			return -cste_format;
		}
		break;
	}
	case cst_auxlog_end:
		ev->u.end.result = (int32_t)get32(c);
		ev->u.end.exit_status = (int32_t)get32(c);
		v = get32(c);
		ev->u.end.interrupted = v & 1;
		ev->u.end.output_failed = v & 2;
		break;
	default:
		*why = "an unknown event type";
		return -cste_format;
	}
	if (err == -cste_nomem)
		return err;
	if (err < 0 || c->bad) {
		if (type == cst_auxlog_etm_info)
			cst_perf_etm_info_fini(&ev->u.etm_info);
		return -cste_format;
	}
	return 0;
}

const char *cst_auxlog_type_name(enum cst_auxlog_type type)
{
	static const char *const names[] = {
		[cst_auxlog_session] = "session", [cst_auxlog_attr] = "attr",
		[cst_auxlog_etm_info] = "etm-info", [cst_auxlog_ring] = "ring",
		[cst_auxlog_wake] = "wake", [cst_auxlog_signal] = "signal",
		[cst_auxlog_drain] = "drain", [cst_auxlog_read] = "read", [cst_auxlog_end] = "end",
		[cst_auxlog_build_id] = "build-id",
	};

	return type > 0 && type < cst_auxlog_ntypes ? names[type] : "?";
}
