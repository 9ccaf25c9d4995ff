/* Helpers shared by the verbs: stderr logging, progress on a tty, ID lists. */
#include "cli.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static void cli_log_fn(void *ctx, enum cst_log_level level, const char *msg)
{
	static const char *const prefix[] = {"error: ", "warning: ", "", ""};
	char shown[4096];

	if ((level == cst_log_debug && !getenv("CSTRACE_DEBUG")) || cli_quiet())
		return;
	cli_progress_end();
	/* messages quote names from the inputs, which may hold escapes */
	fprintf(stderr, "cstrace: %s%s\n", prefix[level], cst_printable(msg, shown, sizeof(shown)));
}

const struct cst_log cli_log = {cli_log_fn, NULL};

void cli_error(const char *fmt, ...)
{
	va_list ap;

	cli_progress_end();
	fputs("cstrace: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

void cli_write_failed(int *io_errno)
{
	if (!*io_errno)
		*io_errno = errno ? errno : EIO;
}

bool cli_flush_output(FILE *f, const char *name, int io_errno)
{
	if (fflush(f) == EOF)
		cli_write_failed(&io_errno);
	if (!io_errno)
		return true;
	cli_error("%s: write failed: %s", name ? name : "standard output", strerror(io_errno));
	return false;
}

int cli_stdout_done(int status)
{
	int failed = fflush(stdout) == EOF, err = errno;

	if (!failed && !ferror(stdout))
		return status;
	/* a verb that failed has said why; one that thought it succeeded has not */
	if (status == 0) {
		if (failed)
			cli_error("standard output: write failed: %s", strerror(err));
		else
			cli_error("standard output: write failed");
	}
	return status ? status : 1;
}

bool cli_check_decoded(const char *trace, const struct cst_decoder_stats *st)
{
	/* trace, but not one instruction (nor software trace): a listing, a
	 * profile or a branch list of nothing would look like a program that ran
	 * nothing */
	if (st->synced && !st->instructions && !st->swtrace) {
		if (st->nacc)
			cli_error("%s: no instructions decoded: the code at the traced addresses "
				  "could not be read (%" PRIu64 " inaccessible-memory gaps); give its "
				  "binaries (--elf, --image, --symfs, --buildid-dir)",
				  trace, st->nacc);
		else
			cli_error("%s: no instructions decoded: the trace (%" PRIu64 " bytes) has "
				  "sync but no executed instruction, only %" PRIu64
				  " elements of context, timing and gaps",
				  trace, st->bytes, st->elements);
		return false;
	}
	if (st->synced)
		return true;
	if (st->aux_missing && !st->bytes)
		cli_error("%s: no trace decoded: the file does not hold the trace of its %" PRIu64
			  " AUX record%s (it lies past the end of a file cut short, or was lost)",
			  trace, st->aux_missing, st->aux_missing == 1 ? "" : "s");
	else if (st->frame_ids[0] || st->frame_ids[1]) {
		char ids[128 * 6];

		cst_id_set_format(st->frame_ids, ids, sizeof(ids));
		cli_error("%s: no trace decoded: the decoder never found sync in %" PRIu64
			  " bytes; its frames carry trace IDs %s (is a source given another "
			  "ID, or the wrong protocol?)",
			  trace, st->bytes, ids);
	} else {
		cli_error("%s: no trace decoded: the decoder never found sync in %" PRIu64
			  " bytes (not trace data, or the wrong sources/format?)",
			  trace, st->bytes);
	}
	return false;
}

static bool progress_drawn;
static struct timespec progress_last, progress_start;
static uint64_t progress_total, progress_done;
static const char *progress_what;
static int progress_off; /* the output streams to the terminal (cli_progress_off) */

static double seconds_between(const struct timespec *a, const struct timespec *b)
{
	return (double)(b->tv_sec - a->tv_sec) + (double)(b->tv_nsec - a->tv_nsec) / 1e9;
}

bool cli_progress_enabled(void)
{
	/* asked once: decoding reports progress per piece of trace, and on a
	 * per-CPU recording in time order a piece is 64 bytes (a system call
	 * each was about 3 % of the merge's thread) */
	static int enabled = -1;
	int e = __atomic_load_n(&enabled, __ATOMIC_RELAXED);

	if (e < 0) {
		e = isatty(STDERR_FILENO) && !getenv("CSTRACE_NO_PROGRESS");
		__atomic_store_n(&enabled, e, __ATOMIC_RELAXED);
	}
	return e && !__atomic_load_n(&progress_off, __ATOMIC_RELAXED);
}

void cli_progress_off(FILE *out)
{
	/* lines streaming to the terminal show the progress themselves, and a
	 * progress line drawn over them would tear them */
	if (out && isatty(fileno(out))) {
		cli_progress_end();
		__atomic_store_n(&progress_off, 1, __ATOMIC_RELAXED);
	}
}

void cli_progress(const char *what, uint64_t done, uint64_t total)
{
	struct timespec now;

	if (!cli_progress_enabled())
		return;
	clock_gettime(CLOCK_MONOTONIC, &now);
	/* a new job (another buffer, another total) starts its own clock */
	if (!progress_start.tv_sec || total != progress_total) {
		progress_start = now;
		progress_total = total;
	}
	progress_what = what;
	progress_done = done;
	if (progress_drawn && seconds_between(&progress_last, &now) < 0.2)
		return;
	progress_last = now;
	progress_drawn = true;
	double secs = seconds_between(&progress_start, &now), rate = secs > 0 ? done / secs : 0;

	if (total && done <= total && rate > 0)
		fprintf(stderr, "\r%s %.1f/%.1f MB (%d%%), %.1f MB/s, %.0f s left\033[K", what,
			done / 1e6, total / 1e6, (int)(done * 100 / total), rate / 1e6,
			(double)(total - done) / rate);
	else if (total)
		fprintf(stderr, "\r%s %.1f/%.1f MB (%d%%)\033[K", what, done / 1e6, total / 1e6,
			done <= total ? (int)(done * 100 / total) : 100);
	else
		fprintf(stderr, "\r%s %.1f MB\033[K", what, done / 1e6);
}

void cli_progress_end(void)
{
	if (progress_drawn) {
		fputs("\r\033[K", stderr);
		progress_drawn = false;
	}
}

void cli_progress_finish(void)
{
	struct timespec now;

	if (!progress_drawn)
		return;
	clock_gettime(CLOCK_MONOTONIC, &now);
	/* the whole input was read: 100 %, however far the last report got */
	if (progress_total)
		fprintf(stderr, "\r%s %.1f/%.1f MB (100%%) in %.1f s\033[K", progress_what,
			progress_total / 1e6, progress_total / 1e6,
			seconds_between(&progress_start, &now));
	else
		fprintf(stderr, "\r%s %.1f MB in %.1f s\033[K", progress_what, progress_done / 1e6,
			seconds_between(&progress_start, &now));
	/* what the verb prints next on the terminal starts on a clean line; with
	 * its output elsewhere, the line stays as a summary */
	if (isatty(STDOUT_FILENO))
		fputs("\r\033[K", stderr);
	else
		fputc('\n', stderr);
	progress_drawn = false;
}

int cli_parse_id_list(const char *s, uint64_t filter[2])
{
	char buf[512], *tok, *save = NULL;

	if (strlen(s) >= sizeof(buf)) {
		cli_error("--id: list too long");
		return -1;
	}
	strcpy(buf, s);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		uint64_t id;

		if (cst_parse_u64(tok, &id) < 0 || id > 0x7f) {
			cli_error("--id: '%s' is not a trace ID (0x00-0x7f expected)", tok);
			return -1;
		}
		filter[id / 64] |= 1ull << (id % 64);
	}
	return 0;
}

static void verb_log_fn(void *ctx, enum cst_log_level level, const char *msg)
{
	struct cli_verb_log *vl = ctx;

	if (level != cst_log_error) {
		cli_log.fn(cli_log.ctx, level, msg);
		return;
	}
	cli_error("%s: %s", vl->verb, msg);
	vl->told = true;
}

void cli_verb_log(struct cli_verb_log *vl, const char *verb)
{
	vl->verb = verb;
	vl->told = false;
	vl->log = (struct cst_log){verb_log_fn, vl};
}

int cli_parse_size(const char *s, uint64_t *out)
{
	char buf[64];
	size_t n = s ? strlen(s) : 0;
	uint64_t mul = 1, v;

	if (n == 0 || n >= sizeof(buf))
		return -1;
	memcpy(buf, s, n + 1);
	switch (buf[n - 1]) {
	case 'k': case 'K': mul = 1ull << 10; break;
	case 'm': case 'M': mul = 1ull << 20; break;
	case 'g': case 'G': mul = 1ull << 30; break;
	default: break;
	}
	if (mul != 1)
		buf[n - 1] = 0;
	if (cst_parse_u64(buf, &v) < 0 || v > UINT64_MAX / mul)
		return -1;
	*out = v * mul;
	return 0;
}

uint64_t cli_first_difference(const char *a, const char *b)
{
	FILE *fa = cst_fopen_input(a, "rb"), *fb = cst_fopen_input(b, "rb");
	uint64_t at = 0;
	int ca, cb;

	if (!fa || !fb) {
		if (fa)
			fclose(fa);
		if (fb)
			fclose(fb);
		return 0;
	}
	do {
		ca = getc(fa);
		cb = getc(fb);
		if (ca != cb)
			break;
		at++;
	} while (ca != EOF);
	fclose(fa);
	fclose(fb);
	return ca == cb ? UINT64_MAX : at;
}

bool cli_str_opt_set(const struct cli_str_opt *v, size_t n, int opt, const char *arg)
{
	for (size_t i = 0; i < n; i++)
		if (v[i].opt == opt) {
			*v[i].dst = arg;
			return true;
		}
	return false;
}
