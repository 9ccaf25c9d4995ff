/* synth's outputs besides the main one (truth files, the kept QEMU log, code pages
 * beside a perf.data): each appears whole through cst_out, and all go again when
 * the run fails after they were moved into place, so a failed run leaves nothing. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "synth_int.h"

struct cst_out_opts synth_out_opts(const struct cst_synth_opts *o, bool stream)
{
	return (struct cst_out_opts){.sz = sizeof(struct cst_out_opts), .log = o->log,
				     .inputs = o->inputs, .private_file = true, .stream = stream};
}

int synth_outs_commit(struct synth_outs *s, struct cst_out *o)
{
	char *path = strdup(o->path);

	if (!path || CST_GROW(s->path, s->cap, s->n + 1) < 0) {
		free(path);
		cst_out_abort(o);
		return -cste_nomem;
	}
	if (cst_out_commit(o) < 0) {
		free(path);
		return -cste_io;
	}
	s->path[s->n++] = path;
	return 0;
}

void synth_outs_undo(struct synth_outs *s)
{
	for (size_t i = 0; i < s->n; i++)
		unlink(s->path[i]);
	synth_outs_fini(s);
}

void synth_outs_fini(struct synth_outs *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->path[i]);
	free(s->path);
	memset(s, 0, sizeof(*s));
}

int synth_log_cut(const char *path)
{
	struct stat st;
	int fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC), e = 0;

	if (fd < 0)
		return 0;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
		if (write(fd, "\n", 1) != 1)
			e = errno;
		else if (ftruncate(fd, st.st_size) < 0)
			e = errno;
	}
	close(fd);
	return e == ENOSPC || e == EDQUOT ? e : 0;
}

/* An output that is one of the run's inputs is refused before QEMU runs (each
 * writer checks again as it creates its file). */
int synth_outputs_check(const struct cst_synth_opts *o, const char *out)
{
	const char *outs[] = {out, o->truth, o->from_log ? NULL : o->keep_log};

	for (size_t i = 0; i < sizeof(outs) / sizeof(outs[0]); i++) {
		const char *in = cst_file_set_find(o->inputs, outs[i]);

		if (in) {
			cst_logf(o->log, cst_log_error, "%s: is the input %s; refusing to overwrite it",
				 outs[i], in);
			return -cste_invalid;
		}
	}
	return 0;
}
