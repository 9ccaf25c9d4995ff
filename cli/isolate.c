/* Crash containment for the verbs that decode: OpenCSD 1.3.3 (Debian 12) can crash
 * on some corrupt trace (fuzzing found reads through bad pointers in its ETMv4
 * exception handling and element printer). Those verbs run in a child process. If
 * OpenCSD kills it, the parent says where decoding had got to, in one line; for a
 * snapshot or raw dump decoded by `decode` or `dump` it then starts a new child
 * past that point (the skipped bytes are reported as a gap), otherwise it exits 1.
 * perf.data resumes the same way, in the AUX fragment that crashed.
 * Output written before the crash is complete: the child flushes it as it dies. */
#include "cli.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#define RESUME_ENV "CSTRACE_RESUME_AT" /* internal: parent to restarted child */
#define RESUME_FROM_ENV "CSTRACE_RESUME_FROM"
#define MAX_RESTARTS 64

/* Shared with the child: what it is decoding and how far it got. */
struct crash_note {
	char input[1024];
	uint64_t offset;
	bool have_offset;
	bool resumable; /* the input can be decoded from a byte offset */
};

static struct crash_note *note; /* NULL when not isolated */
static FILE *crash_out;          /* the child's output stream, flushed as it dies */

void cli_note_input(const char *path)
{
	if (note && path)
		snprintf(note->input, sizeof(note->input), "%s", path);
}

void cli_note_offset(uint64_t offset)
{
	if (note) {
		note->offset = offset;
		note->have_offset = true;
	}
}

void cli_note_resumable(bool resumable, FILE *out)
{
	if (note)
		note->resumable = resumable;
	crash_out = out;
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

static bool is_crash(int sig)
{
	return sig == SIGSEGV || sig == SIGBUS || sig == SIGILL || sig == SIGFPE || sig == SIGABRT;
}

/* In the child: write out what stdio still holds, then die of the same signal.
 * The crash is inside OpenCSD, never inside stdio, and the unlocked flush cannot
 * wait on a lock the crashed code holds. */
static void on_crash(int sig)
{
	if (crash_out && crash_out != stdout)
		fflush_unlocked(crash_out);
	fflush_unlocked(stdout);
	signal(sig, SIG_DFL);
	raise(sig);
}

static void child_handlers(void)
{
	static char altstack[64 * 1024];
	stack_t ss = {.ss_sp = altstack, .ss_size = sizeof(altstack)};
	struct sigaction sa = {.sa_handler = on_crash, .sa_flags = SA_ONSTACK | SA_RESETHAND};
	int sigs[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT};

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
	int status;

	note = mmap(NULL, sizeof(*note), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (note == MAP_FAILED) {
		note = NULL;
		return run(argc, argv); /* no shared page: run unprotected */
	}
	unsetenv(RESUME_ENV);
	unsetenv(RESUME_FROM_ENV);
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
		if (!is_crash(WTERMSIG(status))) {
			/* SIGPIPE (`| head`), SIGINT, SIGTERM: end the way the child ended */
			signal(WTERMSIG(status), SIG_DFL);
			raise(WTERMSIG(status));
			return 128 + WTERMSIG(status);
		}
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
