/* Crash containment for the verbs that decode: OpenCSD 1.3.3 (Debian 12) can crash
 * on some corrupt trace (fuzzing found reads through bad pointers in its ETMv4
 * exception handling and element printer). Those verbs run in a child process; if
 * OpenCSD kills it, the parent reports where decoding had got to, in one line,
 * and exits 1 instead of dumping core. Output written before then is complete. */
#include "cli.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

/* Shared with the child: what it is decoding and how far it got. */
struct crash_note {
	char input[1024];
	uint64_t offset;
	bool have_offset;
};

static struct crash_note *note; /* NULL when not isolated */

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

static bool is_crash(int sig)
{
	return sig == SIGSEGV || sig == SIGBUS || sig == SIGILL || sig == SIGFPE || sig == SIGABRT;
}

int cli_run_isolated(int (*run)(int, char **), int argc, char **argv)
{
	struct sigaction ign = {.sa_handler = SIG_IGN}, old_int, old_term;
	int status;
	pid_t pid;

	note = mmap(NULL, sizeof(*note), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (note == MAP_FAILED) {
		note = NULL;
		return run(argc, argv); /* no shared page: run unprotected */
	}
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		munmap(note, sizeof(*note));
		note = NULL;
		return run(argc, argv);
	}
	if (pid == 0)
		exit(run(argc, argv)); /* exit, not _exit: stdio buffers must be written */

	/* Ctrl-C reaches the child too: let it finish its output, then follow it. */
	sigaction(SIGINT, &ign, &old_int);
	sigaction(SIGTERM, &ign, &old_term);
	while (waitpid(pid, &status, 0) < 0)
		;
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	if (is_crash(WTERMSIG(status))) {
		char where[64] = "";

		if (note->have_offset)
			snprintf(where, sizeof(where), " near byte %llu of the trace",
				 (unsigned long long)note->offset);
		cli_error("%s: the OpenCSD decoder crashed (signal %d)%s, on data it cannot "
			  "handle (corrupt trace, or the wrong sources or format); output before "
			  "that point is complete",
			  note->input[0] ? note->input : "trace", WTERMSIG(status), where);
		return 1;
	}
	/* SIGPIPE (`| head`), SIGINT, SIGTERM: end the way the child ended */
	signal(WTERMSIG(status), SIG_DFL);
	raise(WTERMSIG(status));
	return 128 + WTERMSIG(status);
}
