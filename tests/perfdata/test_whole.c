/* The writers of files made at once (synth's perf.data and AUX stream, opts.whole):
 * nothing at the path until finish, nothing left when freed unfinished, the
 * previous file kept until then and no .old; neither may be one of the inputs. */
#include "test.h"

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cstrace/auxlog.h"
#include "cstrace/perfdata.h"

static char dir[] = "/tmp/cstrace-whole-XXXXXX";

static void path_of(char *buf, size_t size, const char *name)
{
	snprintf(buf, size, "%s/%s", dir, name);
}

static void test_whole(void)
{
	char path[512], old[512], log[512];
	struct cst_perf_writer_opts wo = {.sz = sizeof(wo), .whole = true};
	struct cst_auxlog_writer_opts lo = {.sz = sizeof(lo), .whole = true};
	struct cst_file_set inputs = {0};
	struct cst_perf_writer *w = NULL;
	struct cst_auxlog_writer *lw = NULL;
	struct stat st;
	FILE *f;
	char buf[16] = "";

	path_of(path, sizeof(path), "whole.data");
	path_of(old, sizeof(old), "whole.data.old");
	path_of(log, sizeof(log), "whole.auxlog");
	unlink(path);
	unlink(old);
	CHECK_EQ_INT(cst_perf_writer_open(&w, path, &wo), 0);
	CHECK(access(path, F_OK) != 0);
	cst_perf_writer_free(w); /* unfinished: nothing */
	CHECK(access(path, F_OK) != 0);
	f = fopen(path, "w");
	if (f) {
		fputs("previous", f);
		fclose(f);
	}
	w = NULL;
	CHECK_EQ_INT(cst_perf_writer_open(&w, path, &wo), 0);
	f = fopen(path, "r");
	CHECK(f && fgets(buf, sizeof(buf), f) && !strcmp(buf, "previous"));
	if (f)
		fclose(f);
	CHECK_EQ_INT(cst_perf_writer_finish(w), 0);
	cst_perf_writer_free(w);
	CHECK(stat(path, &st) == 0 && (st.st_mode & 0777) == 0600 && st.st_size > 8);
	CHECK(access(old, F_OK) != 0);
	/* an input is refused, whole or not */
	CHECK_EQ_INT(cst_file_set_add(&inputs, path), 0);
	wo.inputs = &inputs;
	w = NULL;
	CHECK_EQ_INT(cst_perf_writer_open(&w, path, &wo), -cste_invalid);
	wo.whole = false;
	CHECK_EQ_INT(cst_perf_writer_open(&w, path, &wo), -cste_invalid);
	CHECK(w == NULL && access(old, F_OK) != 0);
	/* the stream */
	unlink(log);
	CHECK_EQ_INT(cst_auxlog_writer_open(&lw, log, &lo), 0);
	CHECK(access(log, F_OK) != 0);
	cst_auxlog_writer_free(lw);
	CHECK(access(log, F_OK) != 0);
	lw = NULL;
	CHECK_EQ_INT(cst_auxlog_writer_open(&lw, log, &lo), 0);
	CHECK_EQ_INT(cst_auxlog_writer_finish(lw), 0);
	cst_auxlog_writer_free(lw);
	CHECK(stat(log, &st) == 0 && (st.st_mode & 0777) == 0600);
	lo.inputs = &inputs;
	CHECK_EQ_INT(cst_auxlog_writer_open(&lw, path, &lo), -cste_invalid);
	unlink(log);
	cst_file_set_fini(&inputs);
}

int main(void)
{
	char cmd[64];

	if (!mkdtemp(dir))
		return 1;
	test_whole();
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		return 1;
	return test_done();
}
