/* The files a command reads, gathered as options and arguments name them, so that
 * no output replaces one of them, whichever option named either (see cli.h). */
#include "cli.h"

#include <ftw.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cstrace/snapshot.h"

/* One command per process: the verb's options fill it, its outputs are checked.
 * Files found while decoding (cli_input_found) come from decoding threads too. */
static struct cst_file_set inputs;
static pthread_mutex_t inputs_lock = PTHREAD_MUTEX_INITIALIZER;

const struct cst_file_set *cli_inputs(void)
{
	return &inputs;
}

static void add(const char *path)
{
	int err;

	pthread_mutex_lock(&inputs_lock);
	err = cst_file_set_add(&inputs, path);
	pthread_mutex_unlock(&inputs_lock);
	if (err < 0) {
		cli_error("out of memory");
		exit(1);
	}
}

int cli_input_found(void *ctx, const char *path)
{
	(void)ctx;
	add(path);
	return 0;
}

static int snap_file(void *ctx, const char *path)
{
	(void)ctx;
	add(path);
	return 0;
}

static int snap_buffer(void *ctx, const struct cst_buffer_info *info)
{
	(void)ctx;
	(void)info;
	return 0;
}

static int snap_source(void *ctx, int buffer, const struct cst_source_cfg *cfg)
{
	(void)ctx;
	(void)buffer;
	(void)cfg;
	return 0;
}

void cli_input(const char *path)
{
	struct stat st;

	if (!path || stat(path, &st) < 0)
		return;
	add(path);
	if (S_ISDIR(st.st_mode)) {
		/* a snapshot: its .ini files, buffers and memory dumps, as its reader
		 * names them (read once more here, without messages: the decode says
		 * what is wrong) */
		struct cst_snap_reader_cbs cbs = {.sz = sizeof(cbs), .buffer = snap_buffer,
						  .source = snap_source, .file = snap_file};

		cst_snap_read(path, &cbs, NULL, NULL);
	}
}

static int tree_file(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)ftw;
	if (type == FTW_F && S_ISREG(st->st_mode))
		add(path);
	return 0;
}

void cli_input_tree(const char *dir)
{
	if (dir)
		nftw(dir, tree_file, 32, FTW_PHYS);
}

const char *cli_input_named(const char *path)
{
	return cst_file_set_find(&inputs, path);
}

bool cli_output_refused(const char *path)
{
	const char *in = cli_input_named(path);

	if (in && !strcmp(in, path))
		cli_error("%s: is the input; refusing to overwrite it", path);
	else if (in)
		cli_error("%s: is the input %s; refusing to overwrite it", path, in);
	return in != NULL;
}
