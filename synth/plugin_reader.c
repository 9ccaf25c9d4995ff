/* Reads the synth TCG plugin's stream: instruction definitions (ID, address, bytes)
 * and executed instruction IDs, in execution order. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "synth_int.h"

#define DEF_MARK 0xffffffffu
#define CPU_MARK 0xfffffffeu

struct pr_state {
	FILE *f;
	uint8_t buf[1 << 16];
	size_t len, pos;
	bool eof;
};

/* Next u32 of the stream; false at its end. */
static bool pr_next(struct pr_state *s, uint32_t *v)
{
	if (s->len - s->pos < 4) {
		memmove(s->buf, s->buf + s->pos, s->len - s->pos);
		s->len -= s->pos;
		s->pos = 0;
		while (!s->eof && s->len < 4) {
			size_t n = fread(s->buf + s->len, 1, sizeof(s->buf) - s->len, s->f);
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

int synth_plugin_read(int fd, const char *path, struct synth_codemap *code,
		      synth_qlog_insn_fn fn, void *ctx, const struct cst_log *log)
{
	struct pr_state *s = calloc(1, sizeof(*s));
	if (!s) {
		close(fd);
		return -cste_nomem;
	}
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
			if (!pr_next(s, &v)) {
				rc = -cste_format;
				break;
			}
			cpu = (int)v;
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
		if (!pr_next(s, &id) || !pr_next(s, &lo) || !pr_next(s, &hi) || !pr_next(s, &size) ||
		    size > 16 || id > (1u << 30)) {
			rc = -cste_format;
			break;
		}
		uint8_t bytes[16];
		for (uint32_t b = 0; b < size; b += 4) {
			if (!pr_next(s, &w)) {
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
	if (rc == -cste_format)
		cst_logf(log, cst_log_error, "%s: the plugin stream is cut or malformed", path);
	free(pcs);
	fclose(s->f);
	free(s);
	return rc;
}
