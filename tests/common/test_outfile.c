/* common's output writer (cst_out) and file identities (cst_file_set): a file
 * appears whole or not at all, private when asked, never through a symlink at
 * its name, never over an input however named, and a failed write names the file
 * and its cause. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "test.h"

static char last[1024];

static void keep_log(void *ctx, enum cst_log_level level, const char *msg)
{
	(void)ctx;
	(void)level;
	snprintf(last, sizeof(last), "%s", msg);
}

static const struct cst_log log_ = {keep_log, NULL};

static char *slurp(const char *path)
{
	static char buf[256];
	FILE *f = fopen(path, "r");
	size_t n;

	if (!f)
		return NULL;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = 0;
	fclose(f);
	return buf;
}

static void put(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

/* Files beside @path whose names start "<base>.tmp.": temporaries left behind. */
static int temporaries(const char *dir)
{
	char cmd[600];
	FILE *p;
	int n = 0;

	snprintf(cmd, sizeof(cmd), "ls -a '%s' | grep -c '\\.tmp\\.'", dir);
	p = popen(cmd, "r");
	if (p) {
		if (fscanf(p, "%d", &n) != 1)
			n = -1;
		pclose(p);
	}
	return n;
}

static void test_whole(const char *dir)
{
	struct cst_out_opts oo = {.sz = sizeof(oo), .log = &log_, .stream = true};
	struct cst_out o;
	char path[512];
	struct stat st;
	mode_t mask = umask(022);

	snprintf(path, sizeof(path), "%s/view.txt", dir);
	put(path, "previous\n");
	CHECK_EQ_INT(cst_out_open(&o, path, &oo), 0);
	fputs("new\n", o.f);
	/* until the commit the destination is the old file */
	CHECK_EQ_STR(slurp(path), "previous\n");
	CHECK_EQ_INT(temporaries(dir), 1);
	CHECK_EQ_INT(cst_out_commit(&o), 0);
	CHECK_EQ_STR(slurp(path), "new\n");
	CHECK_EQ_INT(temporaries(dir), 0);
	CHECK(stat(path, &st) == 0 && (st.st_mode & 0777) == 0644);
	/* thrown away: the destination is untouched, nothing left */
	CHECK_EQ_INT(cst_out_open(&o, path, &oo), 0);
	fputs("lost\n", o.f);
	cst_out_abort(&o);
	cst_out_abort(&o); /* twice: a no-op */
	CHECK_EQ_STR(slurp(path), "new\n");
	CHECK_EQ_INT(temporaries(dir), 0);
	/* private: 0600 whatever the umask */
	oo.private_file = true;
	umask(0);
	CHECK_EQ_INT(cst_out_open(&o, path, &oo), 0);
	CHECK_EQ_INT(cst_out_commit(&o), 0);
	CHECK(stat(path, &st) == 0 && (st.st_mode & 0777) == 0600);
	umask(mask);
}

/* A symlink at the output's name is replaced, its target never written. */
static void test_symlink(const char *dir)
{
	struct cst_out_opts oo = {.sz = sizeof(oo), .log = &log_, .stream = true};
	struct cst_out o;
	char path[512], victim[512];
	struct stat st;

	snprintf(victim, sizeof(victim), "%s/victim", dir);
	snprintf(path, sizeof(path), "%s/link.svg", dir);
	put(victim, "precious\n");
	CHECK(symlink(victim, path) == 0);
	CHECK_EQ_INT(cst_out_open(&o, path, &oo), 0);
	fputs("<svg/>\n", o.f);
	CHECK_EQ_INT(cst_out_commit(&o), 0);
	CHECK_EQ_STR(slurp(victim), "precious\n");
	CHECK(lstat(path, &st) == 0 && S_ISREG(st.st_mode));
	CHECK_EQ_STR(slurp(path), "<svg/>\n");
}

/* An input, through a symlink or a hard link, is refused with both names. */
static void test_inputs(const char *dir)
{
	struct cst_file_set in = {0};
	struct cst_out_opts oo = {.sz = sizeof(oo), .log = &log_, .inputs = &in};
	struct cst_out o;
	char prog[512], sym[512], hard[512], other[512], want[1200];

	snprintf(prog, sizeof(prog), "%s/prog", dir);
	snprintf(sym, sizeof(sym), "%s/prog.sym", dir);
	snprintf(hard, sizeof(hard), "%s/prog.hard", dir);
	snprintf(other, sizeof(other), "%s/other", dir);
	put(prog, "ELF\n");
	CHECK(symlink("prog", sym) == 0);
	CHECK(link(prog, hard) == 0);
	CHECK_EQ_INT(cst_file_set_add(&in, prog), 0);
	CHECK_EQ_INT(cst_file_set_add(&in, "/no/such/file"), 0); /* nothing to protect */
	CHECK_EQ_INT(in.n, 1);
	CHECK_EQ_STR(cst_file_set_find(&in, hard), prog);
	CHECK(cst_file_set_find(&in, other) == NULL);
	CHECK(cst_file_set_find(NULL, prog) == NULL);
	CHECK_EQ_INT(cst_out_open(&o, prog, &oo), -cste_invalid);
	snprintf(want, sizeof(want), "%s: is the input; refusing to overwrite it", prog);
	CHECK_EQ_STR(last, want);
	CHECK_EQ_INT(cst_out_open(&o, sym, &oo), -cste_invalid);
	snprintf(want, sizeof(want), "%s: is the input %s; refusing to overwrite it", sym, prog);
	CHECK_EQ_STR(last, want);
	CHECK_EQ_INT(cst_out_open(&o, hard, &oo), -cste_invalid);
	CHECK_EQ_STR(slurp(prog), "ELF\n");
	CHECK_EQ_INT(temporaries(dir), 0);
	CHECK_EQ_INT(cst_out_open(&o, other, &oo), 0);
	CHECK_EQ_INT(cst_out_commit(&o), 0);
	cst_file_set_fini(&in);
}

/* Devices are written in place; a write that fails is named with its cause. */
static void test_devices(void)
{
	struct cst_out_opts oo = {.sz = sizeof(oo), .log = &log_, .stream = true};
	struct cst_out o;

	CHECK_EQ_INT(cst_out_open(&o, "/dev/null", &oo), 0);
	CHECK(o.tmp == NULL);
	fputs("nothing\n", o.f);
	CHECK_EQ_INT(cst_out_commit(&o), 0);
	if (access("/dev/full", W_OK) == 0) {
		CHECK_EQ_INT(cst_out_open(&o, "/dev/full", &oo), 0);
		for (int i = 0; i < 100000; i++)
			fputs("a line of a view that fills the disk\n", o.f);
		last[0] = 0;
		CHECK_EQ_INT(cst_out_commit(&o), -cste_io);
		CHECK_EQ_INT(errno, ENOSPC);
		CHECK_EQ_STR(last, "/dev/full: write failed: No space left on device");
	}
	CHECK_EQ_INT(cst_out_open(&o, "/", &oo), -cste_invalid);
	CHECK_EQ_STR(last, "/: not a regular file");
	CHECK_EQ_INT(cst_out_open(&o, "/no/such/dir/x", &oo), -cste_io);
	CHECK_EQ_STR(last, "/no/such/dir/x: cannot create: No such file or directory");
}

/* A write of the caller's own (cst_out_failed) fails the commit and keeps nothing. */
static void test_failed(const char *dir)
{
	struct cst_out_opts oo = {.sz = sizeof(oo), .log = &log_};
	struct cst_out o, z = {0};
	char path[512];

	snprintf(path, sizeof(path), "%s/data", dir);
	unlink(path);
	CHECK_EQ_INT(cst_out_open(&o, path, &oo), 0);
	CHECK(write(o.fd, "abc", 3) == 3);
	cst_out_failed(&o, ENOSPC);
	cst_out_failed(&o, EIO); /* the first one counts */
	CHECK_EQ_INT(cst_out_commit(&o), -cste_io);
	CHECK(access(path, F_OK) != 0);
	CHECK_EQ_INT(temporaries(dir), 0);
	cst_out_abort(&z); /* zero-initialized: nothing to do */
	CHECK_EQ_INT(cst_out_commit(&z), -cste_invalid);
}

int main(void)
{
	char dir[] = "/tmp/cstrace-outfile-XXXXXX";
	char cmd[64];

	if (!mkdtemp(dir))
		return 1;
	test_whole(dir);
	test_symlink(dir);
	test_inputs(dir);
	test_devices();
	test_failed(dir);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		return 1;
	return test_done();
}
