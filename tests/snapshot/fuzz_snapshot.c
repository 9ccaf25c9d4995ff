/* libFuzzer target for snapshot directories: one input is a whole directory, its
 * files one after another, each starting with a line "%%NAME" (the text before the
 * first such line is snapshot.ini). The files are written to a directory of this
 * process's own, which is then read (confined, as a service decoding uploads
 * would) and decoded: the ini texts, the buffer and the memory dumps all come
 * from the input. fuzz_seed.sh turns a real snapshot into this form. */
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cstrace/decode.h"
#include "../decode/fuzz_sink.h"

#define MAX_FILES 24
#define MAX_NAME 40

static char dir[PATH_MAX];

static void clear_dir(void)
{
	DIR *d = opendir(dir);
	struct dirent *e;

	while (d && (e = readdir(d)))
		if (e->d_name[0] != '.' || (e->d_name[1] && strcmp(e->d_name, "..")))
			unlinkat(dirfd(d), e->d_name, 0);
	if (d)
		closedir(d);
}

/* A name the input gives, kept to one plain file inside the directory. */
static void clean_name(const uint8_t *p, size_t n, char *out)
{
	size_t k = 0;

	for (size_t i = 0; i < n && k < MAX_NAME; i++)
		if ((p[i] >= 'a' && p[i] <= 'z') || (p[i] >= 'A' && p[i] <= 'Z') ||
		    (p[i] >= '0' && p[i] <= '9') || p[i] == '_' || p[i] == '.' || p[i] == '-')
			out[k++] = (char)p[i];
	out[k] = '\0';
	if (!k || !strcmp(out, ".") || !strcmp(out, ".."))
		strcpy(out, "unnamed");
}

static void write_file(const char *name, const uint8_t *p, size_t n)
{
	char path[PATH_MAX + 64];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd < 0)
		return;
	if (n && write(fd, p, n) != (ssize_t)n)
		abort();
	close(fd);
}

/* Split at each "\n%%" (or a leading "%%"): NAME up to the line's end, then data. */
static void write_dir(const uint8_t *data, size_t size)
{
	const uint8_t *end = data + size, *p = data;
	char name[MAX_NAME + 1] = "snapshot.ini";
	int files = 0;

	if (size >= 2 && data[0] == '%' && data[1] == '%')
		p = data; /* no snapshot.ini text before the first file */
	else {
		const uint8_t *next = memmem(p, size, "\n%%", 3);

		write_file(name, p, (size_t)((next ? next + 1 : end) - p));
		p = next ? next + 1 : end;
		files++;
	}
	while (p < end && files < MAX_FILES) {
		const uint8_t *nl = memchr(p, '\n', (size_t)(end - p));
		const uint8_t *body = nl ? nl + 1 : end, *next;

		clean_name(p + 2, (size_t)(body - p - 2), name);
		next = memmem(body, (size_t)(end - body), "\n%%", 3);
		write_file(name, body, (size_t)((next ? next + 1 : end) - body));
		p = next ? next + 1 : end;
		files++;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct cst_log log = {fuzz_quiet, NULL};
	struct cst_session_opts o = {.sz = sizeof(o), .log = &log, .kind = cst_input_snapshot,
				     .buffer = "all", .confine = true};
	struct cst_session *s;
	uint64_t n = 0;

	if (!dir[0]) {
		/* under $TMPDIR, which fuzz_run.sh removes with what the jobs left */
		const char *tmp = getenv("TMPDIR");

		snprintf(dir, sizeof(dir), "%s/cst-fuzz-snap.XXXXXX", tmp ? tmp : "/tmp");
		if (!mkdtemp(dir))
			abort();
	}
	clear_dir();
	write_dir(data, size);
	if (cst_session_open(&s, dir, &o) == 0) {
		cst_session_run(s, fuzz_elem, NULL, &n);
		cst_session_dump(s, fuzz_packet, &n);
		cst_session_free(s);
	}
	return 0;
}
