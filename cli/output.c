/* The verbs' output files: common's writer (cst_out: whole or not at all, never
 * over an input) for a path, standard output for none or "-"; the temporary is
 * told to the crash isolation, which removes it when the child dies. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

bool cli_same_file(const char *a, const char *b)
{
	struct stat sa, sb;

	return a && b && !stat(a, &sa) && !stat(b, &sb) && sa.st_dev == sb.st_dev &&
	       sa.st_ino == sb.st_ino;
}

static void out_log_fn(void *ctx, enum cst_log_level level, const char *msg)
{
	(void)ctx;
	if (level == cst_log_error)
		cli_error("%s", msg);
	else
		cli_log.fn(cli_log.ctx, level, msg);
}

const struct cst_log cli_out_log = {out_log_fn, NULL};

struct cst_out_opts cli_out_opts(bool private_file)
{
	return (struct cst_out_opts){.sz = sizeof(struct cst_out_opts), .log = &cli_out_log,
				     .inputs = cli_inputs(), .private_file = private_file};
}

int cli_out_open(struct cli_out *o, const char *path, const char *input, bool private_file)
{
	struct cst_out_opts opts = cli_out_opts(private_file);

	memset(o, 0, sizeof(*o));
	o->f = stdout;
	/* the verb's input, with all a snapshot directory reads */
	cli_input(input);
	if (!path || !strcmp(path, "-"))
		return 0;
	opts.stream = true;
	if (cst_out_open(&o->file, path, &opts) < 0)
		return -1;
	o->f = o->file.f;
	o->path = path;
	/* a device written in place has no temporary: its own name marks it open */
	o->tmp = o->file.tmp ? o->file.tmp : o->file.path;
	if (o->file.tmp)
		cli_note_tmp(o->file.tmp, true);
	return 0;
}

void cli_out_buffer(FILE *f)
{
	if (f == stdout)
		(void)cst_stream_buffer(stdout);
}

int cli_out_commit(struct cli_out *o)
{
	int err;

	if (!o->tmp) {
		if (fflush(o->f) == EOF || ferror(o->f)) {
			cli_error("standard output: write failed: %s", strerror(errno));
			return -1;
		}
		return 0;
	}
	if (o->file.tmp)
		cli_note_tmp(o->file.tmp, false);
	err = cst_out_commit(&o->file);
	o->f = stdout;
	o->tmp = NULL;
	return err < 0 ? -1 : 0;
}

void cli_out_abort(struct cli_out *o)
{
	if (!o->tmp)
		return;
	if (o->file.tmp)
		cli_note_tmp(o->file.tmp, false);
	cst_out_abort(&o->file);
	o->f = stdout;
	o->tmp = NULL;
}

int cli_out_close(struct cli_out *o, int status)
{
	if (status == 0 && o->tmp && cli_out_commit(o) < 0)
		return 1;
	if (status)
		cli_out_abort(o);
	return status;
}

int cli_out_fail(struct cli_out *o, int err)
{
	/* a writer that failed on the file: its own errno, kept by the stream, names
	 * the cause better than the writer's error code */
	if (o->tmp && o->file.error) {
		cli_out_commit(o); /* fails, saying why, and removes the temporary */
		return -1;
	}
	cli_error("%s: %s", o->path ? o->path : "standard output", cst_strerror(err));
	cli_out_abort(o);
	return -1;
}

int cli_out_write(const char *path, const char *input, int (*write)(const void *obj, FILE *f),
		  const void *obj)
{
	struct cli_out o;
	int err;

	if (cli_out_open(&o, path, input, false) < 0)
		return -1;
	err = write(obj, o.f);
	if (err < 0)
		return cli_out_fail(&o, err);
	return cli_out_commit(&o);
}
