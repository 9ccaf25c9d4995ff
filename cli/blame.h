/* Whose code crashed: for the crash containment of cli/isolate.c, called from
 * its signal handler (nothing here allocates or takes a lock). */
#ifndef CSTRACE_CLI_BLAME_H
#define CSTRACE_CLI_BLAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/** The program counter a signal interrupted, from the handler's @ucontext (NULL
 *  on an architecture not known here). */
void *cli_fault_pc(const void *ucontext);

/** The link register a signal interrupted (the return address of a leaf
 *  function), on Arm; NULL elsewhere. */
void *cli_fault_lr(const void *ucontext);

/** Name the object of the frame at @pc, or of the first caller outside the C and
 *  C++ runtime (a crash in memcpy or abort belongs to its caller; where the
 *  backtrace cannot get past the signal frame, the caller is @lr's): its path in
 *  @object (@size bytes), the frame's offset in it, and whether it is OpenCSD's.
 *  A crash outside OpenCSD has its backtrace printed to stderr (a bug report's).
 *  False when no object could be named. */
bool cli_blame(void *pc, void *lr, char *object, size_t size, uint64_t *offset,
	       bool *in_opencsd);

#endif
