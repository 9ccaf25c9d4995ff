/* Starts QEMU user mode on the program with the logging synth needs. QEMU is named
 * explicitly (binfmt_misc is not mounted on the build machines). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "synth_int.h"

int synth_qemu_run(const struct cst_synth_opts *opts, char *const argv[], const char *log_path)
{
	const char *qemu = opts->qemu;
	const char *sysroot = opts->sysroot;
	if (!qemu)
		qemu = opts->arch == cst_synth_arm ? "qemu-arm" : "qemu-aarch64";
	if (!sysroot)
		sysroot = opts->arch == cst_synth_arm ? "/usr/arm-linux-gnueabihf"
						      : "/usr/aarch64-linux-gnu";
	int argc = 0;
	while (argv[argc])
		argc++;
	/* -singlestep makes every instruction its own block, so that the exec log
	 * names each executed instruction once (facts 5). */
	const char *pre[] = {qemu, "-L", sysroot, "-singlestep", "-d",
			     "exec,nochain,page,strace,in_asm", "-D", log_path};
	size_t npre = sizeof(pre) / sizeof(pre[0]);
	char **args = calloc(npre + (size_t)argc + 1, sizeof(char *));
	if (!args)
		return -cste_nomem;
	for (size_t i = 0; i < npre; i++)
		args[i] = (char *)pre[i];
	for (int i = 0; i < argc; i++)
		args[npre + (size_t)i] = argv[i];
	pid_t pid = fork();
	if (pid < 0) {
		free(args);
		return -cste_io;
	}
	if (pid == 0) {
		execvp(qemu, args);
		_exit(127);
	}
	free(args);
	int status;
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -cste_io;
	if (WIFEXITED(status)) {
		if (WEXITSTATUS(status) == 127) {
			cst_logf(opts->log, cst_log_error, "could not run %s", qemu);
			return -cste_io;
		}
		return WEXITSTATUS(status);
	}
	/* A guest killed by a signal is still a valid run to trace. */
	return 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}
