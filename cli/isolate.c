/* Crash containment for the verbs that decode: OpenCSD 1.3.3 (Debian 12) can crash
 * on some corrupt trace (fuzzing found reads through bad pointers in its ETMv4
 * exception handling and element printer). Those verbs run in a child process. If
 * OpenCSD kills it, the parent says where decoding had got to, in one line; for a
 * snapshot or raw dump decoded by `decode` or `dump` it then starts a new child
 * past that point (the skipped bytes are reported as a gap), otherwise it exits 1.
 * perf.data resumes the same way, in the AUX fragment that crashed.
 * Output written before the crash is complete: the child flushes it as it dies.
 * A crash in cstrace's own code is not OpenCSD's: the child names the object of
 * the faulting frame, and a crash outside libopencsd is reported as a bug in
 * cstrace, with a backtrace, and never resumed past. */
#include "blame.h"
#include "cli.h"

#include <execinfo.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define RESUME_ENV "CSTRACE_RESUME_AT" /* internal: parent to restarted child */
#define RESUME_FROM_ENV "CSTRACE_RESUME_FROM"
#define SKIP_ENV "CSTRACE_SKIP_ELEMENTS" /* internal: after a crash on threads */
#define RECOVER_ENV "CSTRACE_RECOVER" /* internal: after OpenCSD crashed, its own decoders */
#define MAX_RESTARTS 64

/* Shared with the child: what it is decoding and how far it got. */
struct crash_note {
	char input[1024];
	uint64_t offset;
	bool have_offset;
	bool resumable; /* the input can be decoded from a byte offset */
	bool recoverable; /* cstrace's decoders may decode it (not OpenCSD's asked for) */
	/* decoding on threads: elements printed, and how many the crash flushed;
	 * skippable: a symbolizing verb, which can leave out the output of those
	 * (cli_quiet) once the pipe was drained */
	bool threaded, skippable;
	uint64_t printed, flushed;
	/* decoding on threads beside the printing one (cst_session_watch_crashes):
	 * -1 while they run, 1 once one crashed; drained once the printing thread
	 * has written what was decoded before the crash. The decoding thread reads
	 * the watch at every element, the delivering one counts @printed at every
	 * element: a cache line of its own, or the two would pass it back and
	 * forth. */
	_Alignas(64) struct cst_crash_watch watch;
	volatile sig_atomic_t drained;
	/* outputs being written under a temporary name (cli_out_open), removed by
	 * the parent when the child dies before it renames them */
	char tmp[4][1024];
	/* the crash: the object of the first frame that is not the C/C++ runtime */
	bool blamed, in_opencsd;
	char object[256];
	uint64_t object_offset;
};

static struct crash_note *note; /* NULL when not isolated */
static uint64_t test_crash_at;   /* CSTRACE_TEST_CRASH_AT: crash here on purpose */
static FILE *crash_out;          /* the child's output stream, flushed as it dies */
static pthread_t printer;        /* the thread that prints (cli_note_threaded) */

void cli_note_input(const char *path)
{
	if (note && path)
		snprintf(note->input, sizeof(note->input), "%s", path);
}

/* A crash in cstrace's own code, on purpose: the test of the blame below. A real
 * SIGSEGV even on a sanitized build (scripts/sanitize.sh), where UBSan would stop
 * the null store before it faults. */
static void __attribute__((noinline, no_sanitize("undefined"))) crash_in_cstrace(void)
{
	volatile int *volatile p = NULL;

	*p = 1;
}

void cli_note_offset(uint64_t offset)
{
	if (note) {
		note->offset = offset;
		note->have_offset = true;
		if (test_crash_at && offset >= test_crash_at)
			crash_in_cstrace();
	}
}

void cli_note_resumable(bool resumable, FILE *out)
{
	if (note)
		note->resumable = resumable;
	crash_out = out;
}

int cli_session_open(struct cst_session **s, const char *path,
		     const struct cst_session_opts *opts)
{
	int ret = cst_session_open(s, path, opts);

	if (!ret && note)
		ret = cst_session_watch_crashes(*s, &note->watch);
	return ret;
}

void cli_pipe_drained(void)
{
	fflush(stdout);
	if (note) {
		note->flushed = note->printed;
		note->drained = 1;
	}
	for (;;)
		pause(); /* the crashed thread ends the process now */
}

void cli_note_threaded(bool threaded)
{
	if (note)
		note->threaded = threaded;
	printer = pthread_self();
}

void cli_note_tmp(const char *path, bool open)
{
	for (size_t i = 0; note && path && i < sizeof(note->tmp) / sizeof(note->tmp[0]); i++) {
		if (open && !note->tmp[i][0]) {
			snprintf(note->tmp[i], sizeof(note->tmp[i]), "%s", path);
			return;
		}
		if (!open && !strcmp(note->tmp[i], path)) {
			note->tmp[i][0] = '\0';
			return;
		}
	}
}

/* The child died: what it was writing will never be complete. Returns whether
 * it was writing any file. */
static bool remove_tmp(void)
{
	bool any = false;

	for (size_t i = 0; i < sizeof(note->tmp) / sizeof(note->tmp[0]); i++)
		if (note->tmp[i][0]) {
			unlink(note->tmp[i]);
			any = true;
		}
	return any;
}

void cli_note_skippable(void)
{
	if (note)
		note->skippable = true;
}

/* A restarted child leaving out what the crashed one printed. */
static bool quiet;

void cli_set_quiet(bool q)
{
	quiet = q;
}

bool cli_quiet(void)
{
	return quiet;
}

void cli_note_printed(uint64_t nelems)
{
	if (note)
		note->printed += nelems;
}

static uint64_t env_u64(const char *name)
{
	const char *s = getenv(name);
	uint64_t v = 0;

	return s && cst_parse_u64(s, &v) == 0 ? v : 0;
}

uint64_t cli_resume_offset(void)
{
	return env_u64(RESUME_ENV);
}

uint64_t cli_resume_crash_offset(void)
{
	return env_u64(RESUME_FROM_ENV);
}

int64_t cli_skip_elements(void)
{
	return getenv(SKIP_ENV) ? (int64_t)env_u64(SKIP_ENV) : -1;
}

bool cli_recovering(void)
{
	return getenv(RECOVER_ENV) != NULL;
}

void cli_note_recoverable(bool recoverable)
{
	if (note)
		note->recoverable = recoverable;
}

static bool is_crash(int sig)
{
	return sig == SIGSEGV || sig == SIGBUS || sig == SIGILL || sig == SIGFPE || sig == SIGABRT;
}

/* Name the object of the faulting frame (cli_blame) in the note the parent reads. */
static void blame(void *pc, void *lr)
{
	note->blamed = cli_blame(pc, lr, note->object, sizeof(note->object), &note->object_offset,
				 &note->in_opencsd);
}

/* In the child: say whose code crashed, write out what stdio still holds, then
 * die of the same signal. The unlocked flush cannot wait on a lock the crashed
 * code holds. */
static void on_crash(int sig, siginfo_t *si, void *ucontext)
{
	(void)si;
	if (note)
		blame(cli_fault_pc(ucontext), cli_fault_lr(ucontext));
	if (note && note->watch.state < 0 && note->blamed && note->in_opencsd) {
		/* OpenCSD runs on the decoding thread and its workers (or on
		 * workers only, whose lists the delivering thread replays), and the
		 * delivering one holds elements decoded before the crash: let it
		 * write them first (the decoding thread stops between two of them,
		 * decode/run/pipe.c; the replay between two blocks,
		 * decode/run/split_join.c) */
		struct timespec tick = {0, 10 * 1000 * 1000};

		__atomic_store_n(&note->watch.state, 1, __ATOMIC_SEQ_CST);
		for (int i = 0; i < 2000 && !note->drained; i++)
			nanosleep(&tick, NULL);
	}
	if (note && note->threaded && note->blamed && note->in_opencsd &&
	    pthread_equal(pthread_self(), printer)) {
		/* OpenCSD crashed on the printing thread itself (a buffer the threads
		 * handed back to it): it was between two elements, all it counted as
		 * printed is in stdio, so the run can go again on one thread past them */
		fflush_unlocked(stdout);
		note->flushed = note->printed;
		note->drained = 1;
	}
	if (note && note->threaded && crash_out) {
		/* a decoding thread crashed while the printing one goes on: wait
		 * for it to finish its element (it prints holding the lock) */
		flockfile(crash_out);
		fflush_unlocked(crash_out);
		note->flushed = note->printed;
	} else if (crash_out && crash_out != stdout) {
		fflush_unlocked(crash_out);
	}
	fflush_unlocked(stdout);
	if (note && !note->threaded)
		note->flushed = note->printed; /* decoded and printed on this thread */
	signal(sig, SIG_DFL);
	raise(sig);
}

static void child_handlers(void)
{
	static char altstack[64 * 1024];
	stack_t ss = {.ss_sp = altstack, .ss_size = sizeof(altstack)};
	struct sigaction sa = {.sa_sigaction = on_crash,
			       .sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESETHAND};
	int sigs[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT};
	void *warm[1];

	/* the first backtrace() loads the unwinder: not in a signal handler */
	backtrace(warm, 1);
	sigaltstack(&ss, NULL);
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigaction(sigs[i], &sa, NULL);
}

static int wait_child(pid_t pid)
{
	struct sigaction ign = {.sa_handler = SIG_IGN}, old_int, old_term;
	int status;

	/* Ctrl-C reaches the child too: let it finish its output, then follow it. */
	sigaction(SIGINT, &ign, &old_int);
	sigaction(SIGTERM, &ign, &old_term);
	while (waitpid(pid, &status, 0) < 0)
		;
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	return status;
}

int cli_run_isolated(int (*run)(int, char **), int argc, char **argv)
{
	uint64_t resume = 0, step = 0;
	bool had_tmp;
	int status;

	note = mmap(NULL, sizeof(*note), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (note == MAP_FAILED) {
		note = NULL;
		return run(argc, argv); /* no shared page: run unprotected */
	}
	unsetenv(RESUME_ENV);
	unsetenv(RESUME_FROM_ENV);
	unsetenv(SKIP_ENV);
	unsetenv(RECOVER_ENV);
	test_crash_at = env_u64("CSTRACE_TEST_CRASH_AT");
	for (int restarts = 0;; restarts++) {
		pid_t pid;

		memset(note, 0, sizeof(*note));
		fflush(NULL);
		pid = fork();
		if (pid < 0)
			return run(argc, argv);
		if (pid == 0) {
			child_handlers();
			/* exit, not _exit: stdio buffers must be written */
			exit(cli_stdout_done(run(argc, argv)));
		}
		status = wait_child(pid);
		if (WIFEXITED(status))
			return WEXITSTATUS(status);
		had_tmp = remove_tmp();
		if (!is_crash(WTERMSIG(status))) {
			/* SIGPIPE (`| head`), SIGINT, SIGTERM: end the way the child ended */
			signal(WTERMSIG(status), SIG_DFL);
			raise(WTERMSIG(status));
			return 128 + WTERMSIG(status);
		}
		if (note->blamed && !note->in_opencsd) {
			cli_error("%s: cstrace crashed (signal %d) in its own code (%s+0x%llx), "
				  "not in OpenCSD: this is a bug in cstrace, please report it "
				  "with the backtrace above; output before that point is complete",
				  note->input[0] ? note->input : "trace", WTERMSIG(status),
				  note->object, (unsigned long long)note->object_offset);
			return 1;
		}
		if (note->threaded && (note->resumable || (note->skippable && note->drained)) &&
		    restarts < MAX_RESTARTS) {
			/* where a serial run would have crashed is not known: run again on
			 * one thread from the same point, past what was printed */
			char num[32];

			snprintf(num, sizeof(num), "%llu", (unsigned long long)note->flushed);
			setenv(SKIP_ENV, num, 1);
			if (getenv("CSTRACE_DEBUG"))
				cli_error("debug: %s: crashed on threads; again on one thread past "
					  "%s elements", note->input, num);
			continue;
		}
		if (note->in_opencsd && note->recoverable && !getenv(RECOVER_ENV) &&
		    restarts < MAX_RESTARTS) {
			/* Once: from where this child began, past what it printed (an
			 * output file it was writing is gone: all of it again), with
			 * cstrace's decoders, which do not run OpenCSD's decoder and
			 * resynchronise where the trace is bad. Where they do not cover
			 * the trace, OpenCSD's crashes again and bytes are skipped. */
			char num[32], where[64] = "";

			/* a child restarted on one thread before left out what its
			 * parent printed, and printed on from there */
			snprintf(num, sizeof(num), "%llu",
				 had_tmp ? 0ull
					 : (unsigned long long)(env_u64(SKIP_ENV) + note->flushed));
			setenv(SKIP_ENV, num, 1);
			setenv(RECOVER_ENV, "1", 1);

			if (note->have_offset)
				snprintf(where, sizeof(where), " near byte %llu",
					 (unsigned long long)note->offset);
			cli_error("warning: %s: the OpenCSD decoder crashed (signal %d)%s; decoding "
				  "again with cstrace's own decoder, which goes on past bad packets",
				  note->input[0] ? note->input : "trace", WTERMSIG(status), where);
			continue;
		}
		/* any later child runs on one thread too */
		if (getenv(SKIP_ENV))
			setenv(SKIP_ENV, "0", 1);
		if (!note->resumable || !note->have_offset || restarts >= MAX_RESTARTS) {
			char where[64] = "";

			if (note->have_offset)
				snprintf(where, sizeof(where), " near byte %llu of the trace",
					 (unsigned long long)note->offset);
			cli_error("%s: the OpenCSD decoder crashed (signal %d)%s, on data it cannot "
				  "handle (corrupt trace, or the wrong sources or format); output "
				  "before that point is complete",
				  note->input[0] ? note->input : "trace", WTERMSIG(status), where);
			return 1;
		}
		/* Skip past where it crashed. A crash again just past where the last run
		 * resumed is the same bad stretch: skip twice as far each time; a crash
		 * elsewhere starts again with a small step. Restarts always move forward
		 * in decode order. The restarted child gets both the crash point
		 * (perf.data: which AUX fragment it was in, as fragments need not lie in
		 * file order) and where to resume. */
		{
			uint64_t from = note->offset;
			char num[32];

			step = resume && from >= resume && from < resume + step && step < (64ull << 16)
				       ? step * 2
				       : 64;
			resume = from + step;
			snprintf(num, sizeof(num), "%llu", (unsigned long long)from);
			setenv(RESUME_FROM_ENV, num, 1);
			cli_error("warning: %s: the OpenCSD decoder crashed (signal %d) near byte "
				  "%llu; trace up to byte %llu is skipped and decoding resumes there",
				  note->input[0] ? note->input : "trace", WTERMSIG(status),
				  (unsigned long long)note->offset, (unsigned long long)resume);
			snprintf(num, sizeof(num), "%llu", (unsigned long long)resume);
			setenv(RESUME_ENV, num, 1);
		}
	}
}
