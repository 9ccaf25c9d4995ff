/* cstrace common definitions: what every library shares, in this order:
 *  - errors (one enum, cste_*) and the log callback every stage reports through;
 *  - byte access: little-endian reads and writes for trace and file formats,
 *    never host casts;
 *  - memory: growable arrays, byte buffers, strings, binary search, indexes;
 *  - the sized options structs' rule;
 *  - files: inputs (devices and FIFOs refused, mapped, spilled to a temporary),
 *    outputs (whole or not at all, never over an input);
 *  - text: names from inputs made printable, numbers parsed, lines built;
 *  - binaries: build-ids compared, "FILE@ADDR" placement of an ELF. */
#ifndef CSTRACE_COMMON_H
#define CSTRACE_COMMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------
 * Errors and logging.
 * ------------------------------------------------------------------------ */

/** Error codes. Functions return int: negative is one of these (negated),
 *  zero or positive is success and may carry a count or status. */
enum cst_error_code {
	cste_ok = 0,
	cste_internal,     /* a bug in cstrace */
	cste_invalid,      /* an invalid argument (NULL, out of range) */
	cste_nomem,        /* out of memory */
	cste_io,           /* a read or write failed; errno says more */
	cste_not_found,    /* a file, section, key or device is missing */
	cste_format,       /* input does not follow its format */
	cste_unsupported,  /* a valid input this build cannot handle */
	cste_decoder,      /* the OpenCSD decoder failed */
	cste_eos,          /* end of stream: nothing more to read */
	cste_truncated,    /* input ends inside a record */
	cste_no_trace,     /* nothing could be decoded */
	cste_busy,         /* a resource is in use; try again */
	cste_permission,   /* the kernel refused (paranoid level, capabilities) */
	cste_interrupted,  /* stopped on request (a signal): nothing was finished */
	cste_crashed,      /* the decoding thread crashed: what it decoded before was delivered */
	cste_max
};

/** A word for an error code (negative or positive accepted). Never NULL. */
const char *cst_strerror(int err);

/** Severity of a message given to a log callback. */
enum cst_log_level {
	cst_log_error = 0,
	cst_log_warning,
	cst_log_info,
	cst_log_debug
};

/** A log callback: every stage reports problems through one of these so that the
 *  CLI decides how they look. @msg is one line without a trailing newline. */
typedef void (*cst_log_fn)(void *ctx, enum cst_log_level level, const char *msg);

/** A log sink: callback plus its context. A NULL fn drops messages. */
struct cst_log {
	cst_log_fn fn;
	void *ctx;
};

/** Send a printf-style message to @log (NULL @log or fn: dropped). */
void cst_logf(const struct cst_log *log, enum cst_log_level level, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/** The one-line form of a problem in a file: "<path>: offset <n>: <message>". */
void cst_vlogf_at(const struct cst_log *log, enum cst_log_level level, const char *path,
		  uint64_t offset, const char *fmt, va_list ap) __attribute__((format(printf, 5, 0)));

/* ------------------------------------------------------------------------
 * Byte access: trace and perf.data are little-endian whatever the host is,
 * and buffers need not be aligned.
 * ------------------------------------------------------------------------ */


static inline uint16_t cst_le16(const uint8_t *p)
{
	return (uint16_t)(p[0] | (p[1] << 8));
}
static inline uint32_t cst_le32(const uint8_t *p)
{
	return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) |
	       ((uint32_t)p[3] << 24);
}
static inline uint64_t cst_le64(const uint8_t *p)
{
	return (uint64_t)cst_le32(p) | ((uint64_t)cst_le32(p + 4) << 32);
}
static inline void cst_put_le16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}
static inline void cst_put_le32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}
static inline void cst_put_le64(uint8_t *p, uint64_t v)
{
	cst_put_le32(p, (uint32_t)v);
	cst_put_le32(p + 4, (uint32_t)(v >> 32));
}

/* ------------------------------------------------------------------------
 * Memory: growable arrays (one helper instead of a realloc block per table),
 * byte buffers, strings, binary search, open-addressing indexes.
 * ------------------------------------------------------------------------ */

/** Make room for @need elements of @elem_size bytes in the array whose pointer is at
 *  @arrp (a T **) and whose capacity in elements is *@cap. The capacity at least
 *  doubles (from 16) so that appending one at a time is amortised O(1); bytes past
 *  the old capacity are zeroed. On failure (no memory, or a size that overflows) the
 *  array and *@cap are unchanged. Returns 0 or -cste_nomem. */
int cst_grow(void *arrp, size_t *cap, size_t need, size_t elem_size);

/** A growable byte buffer for encoding (a feature section, a stream event).
 *  Appends never fail one by one: once memory runs out the buffer stops growing,
 *  @failed is set and later appends do nothing, so a run is checked once. */
struct cst_buf {
	uint8_t *p;
	size_t len, cap;
	bool failed;
};
/** Append @n bytes, left as they are; NULL once @failed. */
uint8_t *cst_buf_room(struct cst_buf *b, size_t n);
/** Append a copy of @n bytes at @bytes; false once @failed. */
bool cst_buf_put(struct cst_buf *b, const void *bytes, size_t n);
/** Append @n zero bytes; NULL once @failed. */
uint8_t *cst_buf_zeros(struct cst_buf *b, size_t n);
void cst_buf_put_le32(struct cst_buf *b, uint32_t v);
void cst_buf_put_le64(struct cst_buf *b, uint64_t v);
/** Free the bytes; the buffer is empty again. */
void cst_buf_fini(struct cst_buf *b);

/** Append @sep then @more to the heap string *@s, or make it a copy of @more when
 *  *@s is NULL. Returns 0, or -cste_nomem with *@s unchanged. */
int cst_str_append(char **s, const char *sep, const char *more);

/** Binary search: the first index in [@from, @to) at which the condition @below is
 *  false, or @to if none is. @below is an expression in the index @i (declared by
 *  the macro, of the type of @from + @to) that holds on a prefix of the range and
 *  fails from there on, as "element i sorts before the key" does on a sorted array.
 *  A macro, not a function with a comparison callback: lookups in the hot paths
 *  (line tables, symbols, address spaces) keep their comparison inline. */
#define CST_PARTITION(i, from, to, below)                                          \
	__extension__({                                                            \
		__typeof__((from) + (to)) cst_lo_ = (from), cst_hi_ = (to);        \
		while (cst_lo_ < cst_hi_) {                                        \
			__typeof__(cst_lo_) i = cst_lo_ + (cst_hi_ - cst_lo_) / 2; \
			if (below)                                                 \
				cst_lo_ = i + 1;                                   \
			else                                                       \
				cst_hi_ = i;                                       \
		}                                                                  \
		cst_lo_;                                                           \
	})

/** cst_grow for an array pointer @arr and a size_t capacity @cap. The common case,
 *  room already there, is decided inline: per-element paths grow per element.
 *  @need is evaluated twice. */
#define CST_GROW(arr, cap, need)                                                   \
	((size_t)(need) <= (cap) && (arr) ? 0 : cst_grow(&(arr), &(cap), (need), sizeof(*(arr))))

/** An open-addressing index over an array: each slot holds an element's index
 *  plus one (0: empty), at the slot its hash picks or the next free one. Rebuild
 *  *@index at twice *@cap (at least @min_cap, a power of two) holding elements
 *  0..@n-1, hashed by @hash(@ctx, i). Callers grow it before it is half full.
 *  Errors: -cste_nomem (the old index is kept). */
int cst_index_grow(uint32_t **index, uint32_t *cap, uint32_t min_cap, uint32_t n,
		   uint64_t (*hash)(const void *ctx, uint32_t i), const void *ctx);

/* ------------------------------------------------------------------------
 * Options structs. Optional parameters of a library call live in a struct whose
 * first field is `size_t sz` (mandatory ones are plain arguments), so that the
 * struct can grow without breaking callers. One rule for every library:
 *  - NULL options: every field takes its default (zero);
 *  - sz 0: the caller's struct is this header's (fields copied as they are);
 *  - sz below sizeof(size_t): invalid;
 *  - sz smaller than the library's struct: the fields that fit are copied, the
 *    rest take their defaults (a caller built against an older header);
 *  - sz larger: the bytes the library does not know must be zero (a caller built
 *    against a newer header asking for nothing this library lacks).
 * Padding is never initialised, so a struct grows only past every older
 * version's sizeof: when a version ends in padding, the next names it (a
 * reserved member) before adding fields, and structs end without padding.
 * ------------------------------------------------------------------------ */

/** Declare options struct @NAME of type struct @TYPE with its size set and the
 *  given designated initialisers: CST_OPTS(cst_decoder_opts, o, .log = &log); */
#define CST_OPTS(TYPE, NAME, ...) struct TYPE NAME = {.sz = sizeof(struct TYPE), __VA_ARGS__}

/** Copy the caller's options @src (NULL allowed) into the library's own copy @dst
 *  of @dst_sz bytes by the rule above; dst's sz becomes @dst_sz. A refusal is
 *  logged through @log naming @what ("cst_decoder_opts"). Returns 0 or
 *  -cste_invalid (then @dst holds the defaults). */
int cst_opts_load(void *dst, size_t dst_sz, const void *src, const char *what,
		  const struct cst_log *log);

/* ------------------------------------------------------------------------
 * Input files: whatever names a file to read (a command-line path, a name a
 * snapshot or perf.data records) may name a device, a FIFO or a directory, and
 * /dev/zero or /dev/urandom never end. Inputs are opened through these, which
 * accept regular files only.
 * ------------------------------------------------------------------------ */

/** Open @path read-only (close-on-exec). Returns an fd, or -1 with errno set:
 *  EINVAL when @path is not a regular file. */
int cst_open_input(const char *path);

/** Create @path for a file that holds trace, as perf record does: a previous file
 *  is kept as @path.old, the new one is 0600 (trace holds the program's own
 *  addresses and data) and never reached through a symlink. A device (say
 *  /dev/null) is opened as it is. Returns a write-only fd or -1 (errno set). */
int cst_create_private(const char *path);

/* ------------------------------------------------------------------------
 * Output files. Whatever cstrace makes at once (a view, a profile, a perf.data
 * synth writes, a log) appears whole or not at all: it is written under a
 * temporary name in the destination's directory, created new (so never through
 * a symlink planted there), and renamed over the destination when complete; on
 * failure the temporary is removed and the destination is as it was. An output
 * that is one of the command's inputs is refused before anything is written.
 * ------------------------------------------------------------------------ */

/** A file by identity, device and inode: an output is compared with the inputs
 *  however a path spells them (symlinks, hard links, ../). */
struct cst_file_id {
	uint64_t dev, ino;
	char *name; /* the path it was added by */
};
/** The files a command reads. Zero-initialize. */
struct cst_file_set {
	struct cst_file_id *v;
	size_t n, cap;
};
/** Add the file @path names (symlinks followed). A path that names nothing adds
 *  nothing: the reader will say it is missing. Returns 0 or -cste_nomem. */
int cst_file_set_add(struct cst_file_set *s, const char *path);
/** The name the file @path names was added by, or NULL when it is not in @s
 *  (or @s is NULL, or @path names nothing). */
const char *cst_file_set_find(const struct cst_file_set *s, const char *path);
void cst_file_set_fini(struct cst_file_set *s);

struct cst_out_opts {
	size_t sz;                         /* sizeof(struct cst_out_opts) */
	const struct cst_log *log;         /* a failure's one line, naming the output */
	const struct cst_file_set *inputs; /* refused as the destination */
	bool private_file;                 /* 0600 whatever the umask (trace, memory, logs
					    * of a program's run); else as the umask allows */
	bool stream;                       /* open a buffered stdio stream too (@f) */
	uint8_t reserved[6];
};

/** An output being written: open while @path is set. While @f is open @o must
 *  stay where it is (the stream keeps a pointer to it, for the first write error). */
struct cst_out {
	int fd;         /* the temporary file, or a device written in place; -1 closed */
	FILE *f;        /* with opts.stream: on @fd, writes counted in @error */
	char *path;     /* the destination */
	char *tmp;      /* the temporary name; NULL for a device (/dev/null, a pipe) */
	int error;      /* errno of the first failed write through @f, else 0 */
	char *buf;      /* @f's buffer (cst_stream_buffer), freed after @f is closed */
	struct cst_log log;
	/* opts->inputs, asked again at the commit: files found while the output
	 * was made (a recorded binary) may be among them by then */
	const struct cst_file_set *inputs;
};

/** Buffer @f's writes in 1 MiB. glibc's setvbuf given no buffer of the caller's
 *  keeps its own of st_blksize (4 KiB) whatever size is asked: a write per 4 KiB,
 *  540 000 of them for `script`'s 2 GB. Call before any I/O on @f. Returns the
 *  buffer, which must outlive @f (free it after fclose), or NULL when there is
 *  no memory (@f keeps its own). */
char *cst_stream_buffer(FILE *f);

/** Start writing @path. A destination that is a character device or a FIFO is
 *  written in place; a directory or another kind of file is refused, and so is
 *  one of opts->inputs ("OUT: is the input IN; refusing to overwrite it").
 *  Errors (logged): -cste_invalid (refused), -cste_io (errno set), -cste_nomem. */
int cst_out_open(struct cst_out *o, const char *path, const struct cst_out_opts *opts);
/** Flush, sync and rename the file into place. A write that failed before (@f's,
 *  or one given to cst_out_failed) or now makes it fail instead: the temporary
 *  is removed, "OUT: write failed: <strerror>" logged. So does a destination that
 *  is now one of opts->inputs (-cste_invalid, "refusing to overwrite it").
 *  Returns 0, -cste_io (errno set) or -cste_invalid; @o is closed either way. */
int cst_out_commit(struct cst_out *o);
/** Throw the partial file away (the destination is untouched); @o closed. A
 *  closed or zero-initialized @o is ignored. */
void cst_out_abort(struct cst_out *o);
/** A write of the caller's own to @o->fd failed with @errnum: the first one is
 *  what cst_out_commit reports. */
void cst_out_failed(struct cst_out *o, int errnum);

/** An input open for reading, mapped whole where it can be (a read then costs a
 *  memcpy, not a system call) and read with pread where not (@map NULL). */
struct cst_mapped_input {
	int fd;             /* -1: not open */
	const uint8_t *map; /* the whole file, or NULL */
	uint64_t size;      /* the file's size (0 until cst_mapped_input_map) */
};

/** Map @in->fd whole when it is a regular, non-empty file, and set @in->size.
 *  Returns 0 (mapped or not), or -1 with errno when the file cannot be stat'ed. */
int cst_mapped_input_map(struct cst_mapped_input *in);

/** Unmap and close, keeping errno; @in is empty (fd -1) after. */
void cst_mapped_input_close(struct cst_mapped_input *in);

/** A temporary file for what a bounded-memory stage holds too long to keep in
 *  memory (elements waiting for their turn in a merge). It has no name (O_TMPFILE
 *  under $TMPDIR, else /tmp; where that is refused, a 0600 file unlinked at once),
 *  so nothing is left behind, whatever ends the process. Zero-initialize; it is
 *  created on the first write. */
struct cst_spill {
	int fd_plus1;  /* 0: not created yet */
	uint64_t end;  /* bytes written since the last reset */
};

/** Append @n bytes at @p; *@off gets where they start. Returns 0, -cste_io (errno
 *  set: a full disk, no temporary directory). */
int cst_spill_write(struct cst_spill *s, const void *p, size_t n, uint64_t *off);
/** Read @n bytes back from @off. Returns 0 or -cste_io. */
int cst_spill_read(struct cst_spill *s, uint64_t off, void *p, size_t n);
/** Nothing written is needed any more: give the space back. */
void cst_spill_reset(struct cst_spill *s);
/** Close (and so delete) the file; @s is as zero-initialized after. */
void cst_spill_close(struct cst_spill *s);

/** cst_open_input as a stdio stream read in @mode ("r", "rb"); NULL with errno. */
FILE *cst_fopen_input(const char *path, const char *mode);

/** Why cst_open_input failed, for a one-line message: strerror(@err), but for
 *  EINVAL "not a regular file (a device, FIFO or directory is not read)". */
const char *cst_input_strerror(int err);

/* ------------------------------------------------------------------------
 * Text: names from inputs made printable, numbers parsed, lines built
 * without printf.
 * ------------------------------------------------------------------------ */

/** A name recorded in an input (a file name, a command) made fit for a terminal:
 *  control characters (below 0x20, 0x7f, and the UTF-8 forms of 0x80-0x9f) and
 *  bytes that are not UTF-8 as \\xNN, so that an ESC in a perf.data name cannot
 *  reach the terminal as an escape sequence; other UTF-8 stays as it is. Returns
 *  a malloc'd string, or NULL without memory. */
char *cst_printable_dup(const char *s);

/** Copy @s into @out (@size bytes, at least 1) as cst_printable_dup, clipped;
 *  returns @out. */
const char *cst_printable(const char *s, char *out, size_t size);

/** The last component of @path (what follows its last '/'), or @path itself
 *  when it has no '/'; NULL gives NULL. */
const char *cst_path_base(const char *path);

/* A text line built without printf: views print millions of lines, and printf's
 * format parsing was their largest cost. Appends past the capacity are cut, never
 * overflow; the caller writes b[0..n) once per line. Widths follow printf's: a
 * positive width right-aligns, a negative one left-aligns. */
#define CST_LINE_MAX 65536 /* C++ names can run to kilobytes */
struct cst_line {
	size_t n;
	char b[CST_LINE_MAX];
};

static inline void cst_line_reset(struct cst_line *l) { l->n = 0; }
/** End the line with '\n', in its last byte if it is full (a cut line stays one line). */
void cst_line_end(struct cst_line *l);
void cst_line_mem(struct cst_line *l, const char *s, size_t len);
/* Inline, as the pieces of a line are many and short: a literal's length is
 * known where it is written. */
static inline void cst_line_char(struct cst_line *l, char c)
{
	if (l->n < sizeof(l->b))
		l->b[l->n++] = c;
}
/** "%*s" where @width is not 0 (cst_line_str). */
void cst_line_str_padded(struct cst_line *l, const char *s, int width);
/** "%*s": @s padded with spaces to @width. */
static inline void cst_line_str(struct cst_line *l, const char *s, int width)
{
	if (s && !width)
		cst_line_mem(l, s, strlen(s));
	else
		cst_line_str_padded(l, s, width);
}
/** "%*lld", or "%0*lld" with @zero (right-aligned only). */
void cst_line_dec(struct cst_line *l, int64_t v, int width, int zero);
/** "%*llu". */
void cst_line_udec(struct cst_line *l, uint64_t v, int width);
/** "%*llx", or "%0*llx" with @zero; "%#*llx" with @alt (0 prints "0", as printf;
 *  @zero and @alt are not combined). */
void cst_line_hex(struct cst_line *l, uint64_t v, int width, int zero, int alt);

/** Parse an unsigned number (decimal, 0x hex, 0 octal) filling all of @s.
 *  Returns 0 or -cste_format. */
int cst_parse_u64(const char *s, uint64_t *out);

/* ------------------------------------------------------------------------
 * Binaries: build-ids, and where "FILE@ADDR" places an ELF.
 * ------------------------------------------------------------------------ */

/** Whether two build-ids (@a, @a_len bytes; @b, @b_len bytes) are the same id:
 *  a file's ELF note, a recorded one, in either order. perf.data stores 20 bytes
 *  whatever the id's length (20: sha1; 16: md5, uuid; 8: `--build-id=0x...`, as
 *  Android kernel modules have), zero-padded when the size is not recorded, so
 *  ids are compared over the shorter's length and the longer's other bytes must
 *  be zeros (padding). An empty id matches nothing. Returns 1 or 0. */
int cst_build_id_equal(const uint8_t *a, size_t a_len, const uint8_t *b, size_t b_len);

/** Split "FILE[@ADDR]" (the --elf form) into @path (of @size bytes) and @addr.
 *  Returns 1 with an address, 0 without (addr 0), -cste_invalid when the path
 *  does not fit or ADDR is not a number. */
int cst_parse_file_at(const char *spec, char *path, size_t size, uint64_t *addr);

/** Where "FILE@ADDR" puts an ELF, for its code (decode) and its symbols alike:
 *  every PT_LOAD moves by the bias returned, which takes the first PT_LOAD (link
 *  address @first_vaddr) to @addr; "FILE" (@placed 0, cst_parse_file_at's 0) stays
 *  at its link addresses, bias 0. "FILE@0" moves it to 0. */
static inline uint64_t cst_elf_place_bias(int placed, uint64_t addr, uint64_t first_vaddr)
{
	return placed ? addr - first_vaddr : 0;
}

#ifdef __cplusplus
}
#endif

#endif /* CSTRACE_COMMON_H */
