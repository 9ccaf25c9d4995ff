/* cstrace common definitions: error codes, the log callback every stage takes,
 * and little-endian byte access for trace and file formats (never host casts). */
#ifndef CSTRACE_COMMON_H
#define CSTRACE_COMMON_H

#include <stddef.h>
#include <stdarg.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

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

/* Little-endian access to byte buffers: trace and perf.data are little-endian
 * whatever the host is, and buffers need not be aligned. */
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

/** Parse an unsigned number (decimal, 0x hex, 0 octal) filling all of @s.
 *  Returns 0 or -cste_format. */
int cst_parse_u64(const char *s, uint64_t *out);

#ifdef __cplusplus
}
#endif

#endif /* CSTRACE_COMMON_H */
