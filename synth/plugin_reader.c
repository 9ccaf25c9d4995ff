/* Reads the synth TCG plugin's stream: instruction definitions (ID, address, bytes)
 * and executed instruction IDs, in execution order. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "synth_int.h"

#define DEF_MARK 0xffffffffu
#define CPU_MARK 0xfffffffeu
#define THREAD_MARK 0xfffffffdu

/* The plugin's tail file (synth_plugin.c): three native 64-bit words (the same
 * host wrote them), then the bytes. */
#define TAIL_MAGIC 0x4c49415448545953ull
#define TAIL_HEAD 24

struct pr_state {
	FILE *f;           /* the FIFO, then the tail file */
	uint8_t buf[1 << 16];
	size_t len, pos;
	bool eof;
	uint64_t consumed; /* bytes the FIFO brought */
	const char *tail_path;
	bool in_tail;
	uint64_t tail_left; /* bytes of the tail still to read */
	const struct cst_log *log;
	int err;
	bool cut; /* the stream ended inside a record */
};

/* The FIFO ended: QEMU has gone (every writer closed it). Go on with what its
 * tail holds past what the FIFO brought; false when there is nothing. */
static bool pr_to_tail(struct pr_state *s)
{
	uint64_t head[3];
	FILE *t;

	s->in_tail = true;
	if (!s->tail_path || !(t = fopen(s->tail_path, "rb")))
		return false; /* an older plugin writes none */
	if (fread(head, 1, sizeof(head), t) != sizeof(head) || head[0] != TAIL_MAGIC ||
	    head[1] + head[2] <= s->consumed) {
		fclose(t);
		return false; /* all went through the FIFO */
	}
	if (head[1] > s->consumed ||
	    fseeko(t, (off_t)(TAIL_HEAD + s->consumed - head[1]), SEEK_SET) != 0) {
		cst_logf(s->log, cst_log_error,
			 "%s: the plugin's tail starts at byte %" PRIu64 " of its stream, "
			 "past the %" PRIu64 " that came before it",
			 s->tail_path, head[1], s->consumed);
		s->err = -cste_format;
		fclose(t);
		return false;
	}
	s->tail_left = head[1] + head[2] - s->consumed;
	cst_logf(s->log, cst_log_info,
		 "QEMU ended without the plugin's exit (a fatal signal): its last %" PRIu64
		 " bytes came from its tail file",
		 s->tail_left);
	fclose(s->f);
	s->f = t;
	return true;
}

/* More bytes into the buffer: from the FIFO, then from the tail. */
static size_t pr_read(struct pr_state *s)
{
	size_t room = sizeof(s->buf) - s->len, n;

	if (!s->in_tail) {
		n = fread(s->buf + s->len, 1, room, s->f);
		s->consumed += n;
		if (n || !pr_to_tail(s))
			return n;
	}
	if (room > s->tail_left)
		room = (size_t)s->tail_left;
	n = room ? fread(s->buf + s->len, 1, room, s->f) : 0;
	s->tail_left -= n;
	return n;
}

/* Next u32 of the stream; false at its end. */
static bool pr_next(struct pr_state *s, uint32_t *v)
{
	if (s->len - s->pos < 4) {
		memmove(s->buf, s->buf + s->pos, s->len - s->pos);
		s->len -= s->pos;
		s->pos = 0;
		while (!s->eof && s->len < 4) {
			size_t n = pr_read(s);
			if (n == 0)
				s->eof = true;
			s->len += n;
		}
		if (s->len < 4)
			return false;
	}
	*v = cst_le32(s->buf + s->pos);
	s->pos += 4;
	return true;
}

/* The next u32 of a record begun: false, and the record cut, at the end. */
static bool pr_more(struct pr_state *s, uint32_t *v)
{
	if (pr_next(s, v))
		return true;
	s->cut = true;
	return false;
}

int synth_plugin_read(int fd, const char *path, const char *tail_path,
		      struct synth_codemap *code, synth_qlog_insn_fn fn,
		      synth_plugin_thread_fn thread_fn, void *ctx, const struct cst_log *log)
{
	struct pr_state *s = calloc(1, sizeof(*s));
	if (!s) {
		close(fd);
		return -cste_nomem;
	}
	s->tail_path = tail_path;
	s->log = log;
	/* the descriptor itself: opening the FIFO again by name would wait for a
	 * writer, for ever when QEMU has gone already */
	s->f = fdopen(fd, "rb");
	if (!s->f) {
		close(fd);
		free(s);
		cst_logf(log, cst_log_error, "%s: cannot read the plugin stream: %s", path,
			 strerror(errno));
		return -cste_io;
	}
	uint64_t *pcs = NULL;
	size_t npcs = 0;
	int rc = 0;
	uint32_t v;
	int cpu = 0;
	while (!rc && pr_next(s, &v)) {
		if (v == CPU_MARK) {
			if (!pr_more(s, &v)) {
				rc = -cste_format;
				break;
			}
			cpu = (int)v;
			continue;
		}
		if (v == THREAD_MARK) {
			if (!pr_more(s, &v)) {
				rc = -cste_format;
				break;
			}
			rc = thread_fn ? thread_fn(ctx, cpu, v) : 0;
			continue;
		}
		if (v != DEF_MARK) {
			if (v >= npcs) {
				cst_logf(log, cst_log_error, "%s: instruction %u used before defined",
					 path, v);
				rc = -cste_format;
				break;
			}
			rc = fn(ctx, cpu, pcs[v], false);
			continue;
		}
		uint32_t id, lo, hi, size, w;
		if (!pr_more(s, &id) || !pr_more(s, &lo) || !pr_more(s, &hi) || !pr_more(s, &size) ||
		    size > 16 || id > (1u << 30)) {
			rc = -cste_format;
			break;
		}
		uint8_t bytes[16];
		for (uint32_t b = 0; b < size; b += 4) {
			if (!pr_more(s, &w)) {
				rc = -cste_format;
				break;
			}
			cst_put_le32(bytes + b, w);
		}
		if (rc)
			break;
		if (id >= npcs && CST_GROW(pcs, npcs, (size_t)id + 1) < 0) {
			rc = -cste_nomem;
			break;
		}
		pcs[id] = (uint64_t)lo | ((uint64_t)hi << 32);
		rc = synth_codemap_put(code, pcs[id], bytes, size);
	}
	/* QEMU died while another thread wrote a record: the run ends before it */
	if (rc == -cste_format && s->cut && s->in_tail && !s->err)
		rc = 0;
	if (!rc && s->err)
		rc = s->err;
	else if (rc == -cste_format)
		cst_logf(log, cst_log_error, "%s: the plugin stream is cut or malformed", path);
	free(pcs);
	fclose(s->f);
	free(s);
	return rc;
}
