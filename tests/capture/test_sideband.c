/* Sideband against the real kernel: a software dummy event on a child works here even
 * without cs_etm (facts §2), so capture's event, ring and writer code runs for real. */
#include "test.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cstrace/capture.h"
#include "cstrace/perfdata.h"

struct seen {
	uint32_t comm_pid;
	bool comm_exec, mmap2_prog, exit_rec, mmap2_libc;
	uint64_t records, mmap2, rounds;
	uint32_t exit_pid;
	char comm[32];
};

static int read_back(const char *path, const char *prog, struct seen *s)
{
	struct cst_perf_reader_opts ro = {.sz = sizeof(ro)};
	struct cst_perf_reader *r;
	struct cst_perf_record rec;
	int err;

	memset(s, 0, sizeof(*s));
	err = cst_perf_reader_open(&r, path, &ro);
	if (err < 0)
		return err;
	if (cst_perf_reader_incomplete(r))
		err = -cste_truncated;
	while (cst_perf_reader_next(r, &rec) == 0) {
		s->records++;
		s->rounds += rec.type == cst_perf_rec_finished_round;
		if (rec.type == cst_perf_rec_comm && (rec.misc & (1u << 13))) {
			s->comm_exec = true;
			s->comm_pid = rec.u.comm.pid;
			snprintf(s->comm, sizeof(s->comm), "%s", rec.u.comm.comm);
		} else if (rec.type == cst_perf_rec_mmap2) {
			const char *f = rec.u.mmap.filename;
			size_t n = strlen(f), m = strlen(prog);

			s->mmap2++;
			if (n >= m && !strcmp(f + n - m, prog) && (rec.u.mmap.prot & 4))
				s->mmap2_prog = true;
			if (strstr(f, "libc.so"))
				s->mmap2_libc = true;
		} else if (rec.type == cst_perf_rec_exit) {
			s->exit_rec = true;
			s->exit_pid = rec.u.fork.pid;
		}
	}
	cst_perf_reader_free(r);
	return err;
}

/* Record; what the recorder logged last is in @msg. */
static void record(enum cst_record_scope scope, char *const *argv, const char *path,
		   struct cst_record_result *res, int *err, char *msg, size_t msglen)
{
	struct cst_record_opts o = {.sz = sizeof(o), .log = log_capture(), .scope = scope,
				    .sideband_only = true, .output = path, .argv = argv};

	log_captured()[0] = '\0';
	*err = cst_record_run(&o, res);
	snprintf(msg, msglen, "%s", log_captured());
}

static void test_program(enum cst_record_scope scope, const char *tag)
{
	char path[256], msg[1024];
	char *argv[] = {"/bin/true", NULL};
	struct cst_record_result res;
	struct seen s;
	int err;

	snprintf(path, sizeof(path), "%s/capture-sb-%s-%d.data",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", tag, (int)getpid());
	record(scope, argv, path, &res, &err, msg, sizeof(msg));
	if (err == -cste_permission || err == -cste_unsupported)
		TEST_SKIP("the kernel refused a dummy event here: %s", msg);
	CHECK_EQ_INT(err, 0);
	if (err)
		fprintf(stderr, "%s: %s\n", tag, msg);
	CHECK(WIFEXITED(res.exit_status) && WEXITSTATUS(res.exit_status) == 0);
	CHECK_EQ_INT(read_back(path, "/true", &s), 0);
	CHECK(s.comm_exec);
	CHECK_EQ_STR(s.comm, "true");
	CHECK(s.mmap2_prog);
	CHECK(s.mmap2_libc);
	CHECK(s.exit_rec);
	CHECK_EQ_INT(s.exit_pid, s.comm_pid);
	/* the summary's counts are the file's */
	CHECK_EQ_INT(res.total.records, s.records - s.rounds); /* rounds are ours */
	CHECK(res.total.records >= 3);
	CHECK_EQ_INT(res.total.lost_events, 0);
	CHECK_EQ_INT(res.total.aux_bytes, 0);
	if (scope == cst_scope_per_thread)
		CHECK_EQ_INT(res.nrings, 1);
	else
		CHECK_EQ_INT(res.nrings, (int)sysconf(_SC_NPROCESSORS_ONLN));
	/* Linux perf reads it too */
	if (!access("/usr/bin/perf", X_OK)) {
		char cmd[1536];

		snprintf(cmd, sizeof(cmd),
			 "perf script -D -i %s 2>&1 | grep -q 'PERF_RECORD_COMM exec: true' && "
			 "perf script -D -i %s 2>&1 | grep -q 'PERF_RECORD_MMAP2 .*r-xp .*/true' && "
			 "perf report -D -i %s 2>&1 | grep -q 'EXIT events: *1'",
			 path, path, path);
		CHECK_EQ_INT(system(cmd), 0);
	}
	unlink(path);
}

/* The command crashes: the file is still finished and the summary says so. */
static void test_crash(void)
{
	char path[256], msg[1024], *buf = NULL;
	char *argv[] = {"/bin/sh", "-c", "kill -SEGV $$", NULL};
	struct cst_record_result res;
	struct seen s;
	size_t len = 0;
	FILE *mem;
	int err;

	snprintf(path, sizeof(path), "%s/capture-sb-crash-%d.data",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", (int)getpid());
	record(cst_scope_per_thread, argv, path, &res, &err, msg, sizeof(msg));
	CHECK_EQ_INT(err, 0);
	CHECK(WIFSIGNALED(res.exit_status) && WTERMSIG(res.exit_status) == SIGSEGV);
	CHECK_EQ_INT(read_back(path, "/dash", &s), 0); /* finished, not cut */
	CHECK(s.comm_exec && s.exit_rec);
	mem = open_memstream(&buf, &len);
	cst_record_summary(&res, mem);
	fclose(mem);
	CHECK(buf && strstr(buf, "killed by signal 11"));
	CHECK(buf && strstr(buf, "nothing lost"));
	free(buf);
	unlink(path);
}

static void test_errors(void)
{
	char msg[1024];
	char *argv[] = {"/nonexistent/cstrace-prog", NULL};
	struct cst_record_result res;
	struct cst_record_opts o = {.sz = sizeof(o), .log = log_capture(), .sideband_only = true,
				    .output = "/nonexistent-dir/x.data", .argv = argv};
	int err;

	record(cst_scope_per_thread, argv, "/dev/null/x", &res, &err, msg, sizeof(msg));
	CHECK(err < 0);
	o.output = NULL;
	o.argv = NULL;
	CHECK_EQ_INT(cst_record_run(&o, &res), -cste_invalid);
	CHECK(strstr(log_captured(), "no command") != NULL);
	CHECK_EQ_INT(cst_record_run(NULL, &res), -cste_invalid);

	char path[256];
	snprintf(path, sizeof(path), "%s/capture-sb-noprog-%d.data",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", (int)getpid());
	record(cst_scope_per_thread, argv, path, &res, &err, msg, sizeof(msg));
	CHECK_EQ_INT(err, -cste_not_found);
	CHECK(strstr(msg, "cannot run '/nonexistent/cstrace-prog'") != NULL);
	unlink(path);
}

int main(void)
{
	test_program(cst_scope_per_thread, "thread");
	test_program(cst_scope_cpus, "cpus");
	test_crash();
	test_errors();
	return test_done();
}
