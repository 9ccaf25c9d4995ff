/* The cstrace command line: each verb lives in cmd_<verb>.c and only parses options
 * and wires stage libraries together. Shared helpers for those files are here. */
#ifndef CSTRACE_CLI_H
#define CSTRACE_CLI_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "cstrace/common.h"
#include "cstrace/decode.h"

#define CSTRACE_VERSION "0.1.0"

/* Each verb: argc/argv start at the verb itself (argv[0] == "decode"). */
int cmd_decode(int argc, char **argv);
int cmd_dump(int argc, char **argv);
int cmd_record(int argc, char **argv);
int cmd_aux(int argc, char **argv);
int cmd_synth(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_script(int argc, char **argv);
int cmd_boards(int argc, char **argv);
int cmd_doctor(int argc, char **argv);
int cmd_merge(int argc, char **argv);
int cmd_replay(int argc, char **argv);
int cmd_export(int argc, char **argv);

/** Run a verb in a child process so that a crash inside OpenCSD becomes a one-line
 *  error (exit 1) naming the input and how far decoding got. */
int cli_run_isolated(int (*run)(int, char **), int argc, char **argv);
/** Tell the crash report what is being decoded, and the latest byte offset reached
 *  (no-ops outside cli_run_isolated). */
void cli_note_input(const char *path);
void cli_note_offset(uint64_t offset);
/** Say whether the input can be decoded from a byte offset onwards (then a crash is
 *  skipped and decoding resumes) and which stream carries the output (flushed if the
 *  child dies). */
void cli_note_resumable(bool resumable, FILE *out);
/** The byte offset a restarted child resumes at (0: from the start). */
uint64_t cli_resume_offset(void);
/** Where the previous child crashed (0: it did not). */
uint64_t cli_resume_crash_offset(void);
/** Decoding runs on threads that go ahead of what is printed: a crash restarts
 *  the child on one thread from the same point, and that child leaves out the
 *  elements printed already (cli_skip_elements) before it decodes on as a serial
 *  run would. cli_note_printed counts elements printed, with the output
 *  stream locked (flockfile) so that a crash on another thread flushes whole
 *  elements only. */
void cli_note_threaded(bool threaded);
void cli_note_printed(uint64_t nelems);
/** The symbolizing verbs restart that way too, after a crash on the decoding
 *  thread or its workers, when the thread that prints has drained what was decoded
 *  before (cli_pipe_drained); a restarted child symbolizes the elements printed
 *  already with its output to stdout and its messages left out (cli_quiet). */
void cli_note_skippable(void);
/** An output file being written under temporary name @path (@open), or renamed or
 *  removed (!@open): a child that dies leaves none behind. */
void cli_note_tmp(const char *path, bool open);
void cli_set_quiet(bool quiet);
bool cli_quiet(void);
/** Elements a restarted child leaves out, or -1 when this is no such child. */
int64_t cli_skip_elements(void);
/** This child runs again after OpenCSD's decoder crashed: with cstrace's
 *  decoders recovering (cst_decoder_recover) where they cover the trace. */
bool cli_recovering(void);
/** Whether, should OpenCSD's decoder crash, cstrace's may decode the input
 *  again (not when OpenCSD's decoder or its element text was asked for). */
void cli_note_recoverable(bool recoverable);
/** cst_session_open for a decoding verb, with the child's crash watch installed:
 *  its crash handler lets the thread that prints finish with what was decoded
 *  before OpenCSD crashed on a decoding thread. */
int cli_session_open(struct cst_session **s, const char *path,
		     const struct cst_session_opts *opts);
/** That thread has what was decoded before the crash (the run returned
 *  -cste_crashed): flush the output and wait for the process to end. */
void cli_pipe_drained(void) __attribute__((noreturn));

/** A log sink printing "cstrace: warning: ..." lines on stderr. */
extern const struct cst_log cli_log;

/** A log for one verb: errors as "cstrace: VERB: message", the rest as cli_log;
 *  @told says whether an error was printed, so that a bare error code is not
 *  told twice. Fill with cli_verb_log(). */
struct cli_verb_log {
	const char *verb;
	bool told;
	struct cst_log log;
};
void cli_verb_log(struct cli_verb_log *vl, const char *verb);

/** getopt_long for verb @verb: an unknown option or a missing value is told in
 *  one line (the closest long option named: "did you mean --symfs?") and '?' is
 *  returned; the caller exits 2 without printing its usage. */
struct option;
int cli_getopt(const char *verb, int argc, char **argv, const char *shortopts,
	       const struct option *longopts);

/** Print "cstrace: <message>" on stderr. */
void cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/** A write to a verb's output failed: keep the first failure's errno (later
 *  calls change errno); *@io_errno non-zero means the output is incomplete. */
void cli_write_failed(int *io_errno);
/** After a run: flush @f. False, with one line naming @name (NULL: standard
 *  output) and the first failure's reason, when a write failed then or before
 *  (@io_errno from cli_write_failed). */
bool cli_flush_output(FILE *f, const char *name, int io_errno);

/** After a verb: flush standard output; a write that failed makes a verb that
 *  returned 0 say so and return 1 (the disk is full, the reader went away). */
int cli_stdout_done(int status);

/** False, with one line saying why, when nothing of @trace was decoded: a
 *  perf.data cut short before its AUX data, bytes that never gave sync, or
 *  trace without one instruction (its code not found, or none in it) nor
 *  software trace. The one rule of every verb that decodes: exit 1 then. */
bool cli_check_decoded(const char *trace, const struct cst_decoder_stats *st);

/** True when progress should be drawn (stderr is a terminal). */
bool cli_progress_enabled(void);
/** Draw "<what> <done>/<total> MB" on stderr, at most a few times a second. */
void cli_progress(const char *what, uint64_t done, uint64_t total);
/** Clear the progress line if one was drawn. */
void cli_progress_end(void);
/** The input is read: the line is drawn at 100 % with the time taken, then
 *  cleared when standard output is a terminal (the output follows), else left
 *  as a summary. Call before writing to standard output. */
void cli_progress_finish(void);
/** No progress while @out (a verb's output) streams to a terminal. */
void cli_progress_off(FILE *out);

/** The offset of the first byte where files @a and @b differ (one being shorter
 *  counts), UINT64_MAX when they are the same; 0 when one cannot be read. */
uint64_t cli_first_difference(const char *a, const char *b);

/** Parse a byte count with an optional K, M or G suffix (powers of 1024):
 *  "4M", "0x1000". Returns 0 or -1 (nothing printed). */
int cli_parse_size(const char *s, uint64_t *out);

/** An option whose value is kept as given: getopt's value @opt and where it goes. */
struct cli_str_opt {
	int opt;
	const char **dst;
};
/** Store @arg where @opt's row of @v (@n rows) says: true when @opt has one. */
bool cli_str_opt_set(const struct cli_str_opt *v, size_t n, int opt, const char *arg);

/** Parse a trace ID list ("0x10,0x11,18") into a 128-bit filter.
 *  Returns 0 or -1 (with a message printed). */
int cli_parse_id_list(const char *s, uint64_t filter[2]);

/* ------------------------------------------------------------------------
 * Inputs and outputs. Every file a command reads is noted (cli_input) as its
 * option or argument names it; no output may be one of them, whichever option
 * named either: outputs go through common's writer (cst_out) with this set.
 * ------------------------------------------------------------------------ */

/** Note @path as read by this command (NULL and missing paths are ignored). A
 *  snapshot directory brings every file it reads: .ini files, buffers, dumps. */
void cli_input(const char *path);
/** cst_session_opts.file and cst_symbolizer_opts.file: a file found while
 *  decoding (a recorded binary) is an input too; an output that turns out to be
 *  one is refused when it is committed. */
int cli_input_found(void *ctx, const char *path);
/** Note every regular file under directory @dir (--symdir). */
void cli_input_tree(const char *dir);
/** The files noted, for libraries that write (synth, capture) and cst_out_open. */
const struct cst_file_set *cli_inputs(void);
/** The name an input @path was noted by, or NULL when it is none. */
const char *cli_input_named(const char *path);
/** True, with one line naming both, when output @path (NULL: none) is an input. */
bool cli_output_refused(const char *path);
/** cst_out options for the CLI: errors as "cstrace: <message>", the inputs
 *  refused, 0600 with @private_file (trace and memory dumps). */
struct cst_out_opts cli_out_opts(bool private_file);
/** The log cst_out_opts gives: errors as "cstrace: <message>". */
extern const struct cst_log cli_out_log;

/** An output file that appears atomically (see output.c). */
struct cli_out {
	FILE *f;                   /* stdout when no path was given */
	const char *path;
	char *tmp;                 /* set while a file is open (a device: its path) */
	struct cst_out file;
};
/** Start writing @path ("-" or NULL: standard output). @input (when given) is
 *  noted as an input (cli_input); a path that is an input or not a regular file
 *  (a device or a pipe is written in place) is refused. @private_file: created
 *  0600 (trace and memory dumps), else as the umask allows. Returns 0 or -1
 *  (message printed). */
int cli_out_open(struct cli_out *o, const char *path, const char *input, bool private_file);
/** Buffer @f (cli_out_open's stream) in 1 MiB, fully: a verb whose output is
 *  its lines in bulk. Standard output's buffer (cst_stream_buffer) is kept for
 *  the life of the process, which flushes it at exit; a file's is cst_out's. */
void cli_out_buffer(FILE *f);
/** True when @a and @b name the same existing file (however they are spelt). */
bool cli_same_file(const char *a, const char *b);
/** Write all of @path at once through @write(@obj, file) (cli_out_open's rules;
 *  @write returns < 0 on failure). Returns 0 or -1 (message printed; the
 *  destination is untouched). */
int cli_out_write(const char *path, const char *input, int (*write)(const void *obj, FILE *f),
		  const void *obj);
/** Flush and move the file into place. Returns 0 or -1 (message printed, naming
 *  the file and why: "OUT: write failed: No space left on device"; the
 *  destination is untouched). */
int cli_out_commit(struct cli_out *o);
/** Throw the partial file away (the destination is untouched). */
void cli_out_abort(struct cli_out *o);
/** The end of a verb that streamed to @o: commit when @status is 0, else abort.
 *  Returns the verb's status (1 when the commit failed). */
int cli_out_close(struct cli_out *o, int status);
/** A writer returned @err (< 0) on @o: one line naming the file and the cause (a
 *  failed write's errno when there was one), the partial file removed. Returns -1. */
int cli_out_fail(struct cli_out *o, int err);

#endif
