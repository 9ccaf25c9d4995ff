/* Starts QEMU user mode on the program with the logging synth needs. QEMU is named
 * explicitly (binfmt_misc is not mounted on the build machines). */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "synth_int.h"

const char *cst_synth_default_plugin(void)
{
#ifdef CSTRACE_SYNTH_PLUGIN
	return CSTRACE_SYNTH_PLUGIN;
#else
	return "";
#endif
}

/* QEMU takes the program by path (it searches no PATH): one that is missing or
 * cannot be run is said at once, where the plugin's stream would wait for it. */
int synth_program_check(const struct cst_synth_opts *o, const char *prog)
{
	struct stat st;

	if (stat(prog, &st) == 0) {
		if (!S_ISREG(st.st_mode))
			errno = S_ISDIR(st.st_mode) ? EISDIR : EACCES;
		else if (access(prog, X_OK) == 0)
			return 0;
	}
	cst_logf(o->log, cst_log_error, "%s: cannot run it: %s", prog, strerror(errno));
	return -cste_not_found;
}

int synth_qemu_spawn(const struct cst_synth_opts *opts, char *const argv[], const char *log_path,
		     const char *plugin, const char *plugin_args)
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
	char plugin_arg[8192];
	const char *pre[12];
	size_t npre = 0;
	pre[npre++] = qemu;
	pre[npre++] = "-L";
	pre[npre++] = sysroot;
	if (plugin) {
		/* The plugin sees every instruction itself: normal blocks, and the log
		 * only for load addresses. */
		snprintf(plugin_arg, sizeof(plugin_arg), "%s,%s", plugin, plugin_args);
		pre[npre++] = "-plugin";
		pre[npre++] = plugin_arg;
		pre[npre++] = "-d";
		pre[npre++] = "page,strace";
	} else {
		/* -singlestep makes every instruction its own block, so that the exec
		 * log names each executed instruction once (facts 5). */
		pre[npre++] = "-singlestep";
		pre[npre++] = "-d";
		pre[npre++] = "exec,nochain,page,strace,in_asm";
	}
	pre[npre++] = "-D";
	pre[npre++] = log_path;
	char **args = calloc(npre + (size_t)argc + 1, sizeof(char *));
	if (!args)
		return -cste_nomem;
	for (size_t i = 0; i < npre; i++)
		args[i] = (char *)pre[i];
	for (int i = 0; i < argc; i++)
		args[npre + (size_t)i] = argv[i];
	pid_t parent = getpid(), pid = fork();
	if (pid < 0) {
		free(args);
		return -cste_io;
	}
	if (pid == 0) {
		/* QEMU must not outlive cstrace, however cstrace ends */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(127); /* it ended before prctl took effect */
		execvp(qemu, args);
		_exit(127);
	}
	free(args);
	return (int)pid;
}

int synth_qemu_wait(const struct cst_synth_opts *opts, int pid)
{
	int status;
	bool stopped = false;
	while (waitpid((pid_t)pid, &status, 0) < 0) {
		if (errno != EINTR)
			return -cste_io;
		if (opts->stop && *opts->stop && !stopped) {
			kill((pid_t)pid, SIGKILL); /* then reap it */
			stopped = true;
		}
	}
	if (stopped || (opts->stop && *opts->stop))
		return -cste_interrupted;
	if (WIFEXITED(status)) {
		if (WEXITSTATUS(status) == 127) {
			cst_logf(opts->log, cst_log_error, "could not run %s",
				 opts->qemu ? opts->qemu : "qemu");
			return -cste_io;
		}
		return WEXITSTATUS(status);
	}
	/* A guest killed by a signal is still a valid run to trace. */
	return 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

int synth_qemu_run(const struct cst_synth_opts *opts, char *const argv[], const char *log_path)
{
	int pid = synth_qemu_spawn(opts, argv, log_path, NULL, NULL);
	return pid < 0 ? pid : synth_qemu_wait(opts, pid);
}
