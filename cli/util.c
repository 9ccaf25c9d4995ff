/* Helpers shared by the verbs: stderr logging, progress on a tty, ID lists. */
#include "cli.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static void cli_log_fn(void *ctx, enum cst_log_level level, const char *msg)
{
	static const char *const prefix[] = {"error: ", "warning: ", "", ""};

	if (level == cst_log_debug && !getenv("CSTRACE_DEBUG"))
		return;
	cli_progress_end();
	fprintf(stderr, "cstrace: %s%s\n", prefix[level], msg);
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

static bool progress_drawn;
static struct timespec progress_last;

bool cli_progress_enabled(void)
{
	return isatty(STDERR_FILENO) && !getenv("CSTRACE_NO_PROGRESS");
}

void cli_progress(const char *what, uint64_t done, uint64_t total)
{
	struct timespec now;

	if (!cli_progress_enabled())
		return;
	clock_gettime(CLOCK_MONOTONIC, &now);
	if (progress_drawn && (now.tv_sec - progress_last.tv_sec) * 1000000000L +
				      (now.tv_nsec - progress_last.tv_nsec) < 200000000L)
		return;
	progress_last = now;
	progress_drawn = true;
	if (total)
		fprintf(stderr, "\r%s %.1f/%.1f MB (%d%%)\033[K", what, done / 1e6, total / 1e6,
			(int)(done * 100 / total));
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
