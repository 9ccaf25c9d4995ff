/* Whose code crashed (blame.h): the faulting frame's object, found with dladdr
 * over the backtrace, so that a crash in cstrace's own code is never taken for
 * OpenCSD's. */
#include "blame.h"

#include <dlfcn.h>
#include <execinfo.h>
#include <stdio.h>
#include <string.h>
#include <ucontext.h>
#include <unistd.h>

void *cli_fault_pc(const void *ucontext)
{
	const ucontext_t *uc = ucontext;

#if defined(__x86_64__)
	return (void *)uc->uc_mcontext.gregs[REG_RIP];
#elif defined(__aarch64__)
	return (void *)uc->uc_mcontext.pc;
#elif defined(__arm__)
	return (void *)uc->uc_mcontext.arm_pc;
#else
	(void)uc;
	return NULL;
#endif
}

void *cli_fault_lr(const void *ucontext)
{
	const ucontext_t *uc = ucontext;

#if defined(__aarch64__)
	return (void *)uc->uc_mcontext.regs[30];
#elif defined(__arm__)
	return (void *)uc->uc_mcontext.arm_lr;
#else
	(void)uc;
	return NULL;
#endif
}

/* The C and C++ runtime: a crash there (memcpy, abort) belongs to its caller. */
static bool is_runtime(const char *object)
{
	return strstr(object, "/libc.so") || strstr(object, "/libstdc++") ||
	       strstr(object, "/libgcc_s") || strstr(object, "/libm.so");
}

bool cli_blame(void *pc, void *lr, char *object, size_t size, uint64_t *offset,
	       bool *in_opencsd)
{
	void *frames[64];
	int n = backtrace(frames, 64), first = n;
	Dl_info di;

	for (int i = 0; i < n; i++)
		if (frames[i] == pc) {
			first = i;
			break;
		}
	for (int i = first; i < n; i++) {
		if (dladdr(frames[i], &di) && di.dli_fname && !is_runtime(di.dli_fname)) {
			pc = frames[i];
			break;
		}
	}
	/* the unwinder could not step out of the signal frame (ARM's EHABI
	 * tables often cannot): a fault in the runtime's leaf functions
	 * (memcpy, a libstdc++ helper) returns to its caller through the link
	 * register */
	if (first == n && lr && pc && dladdr(pc, &di) && di.dli_fname &&
	    is_runtime(di.dli_fname) && dladdr(lr, &di) && di.dli_fname &&
	    !is_runtime(di.dli_fname))
		pc = lr;
	if (!pc || !dladdr(pc, &di) || !di.dli_fname)
		return false;
	snprintf(object, size, "%s", di.dli_fname);
	*offset = (uint64_t)((uintptr_t)pc - (uintptr_t)di.dli_fbase);
	*in_opencsd = strstr(di.dli_fname, "libopencsd") != NULL;
	if (!*in_opencsd) {
		fputs("cstrace: backtrace of the crash:\n", stderr);
		backtrace_symbols_fd(frames, n, STDERR_FILENO);
	}
	return true;
}
