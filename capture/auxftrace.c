/* The kernel's own view of AUX writes, from ftrace text (/sys/kernel/tracing/trace or
 * `trace-cmd report`): kprobe or trace_printk lines of perf_aux_output_end (old/new
 * head, size), the consumer's trace_marker lines (__auxtrace_mmap__read: old/head
 * offsets), and sched_waking/sched_wakeup/sched_switch. Each write is paired with the
 * perf.data AUX record that reports it and checked against the AUXTRACE chunks that
 * hold its bytes; each read drains writes; a backlog reaching the ring size is an
 * overflow. ftrace's clock and perf's sample time are both the kernel's local clock. */
#include "cstrace/capture.h"
#include "auxftrace_int.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_RINGS (CST_ETM_MAX_CPUS + 1)

struct cst_aux_ftrace {
	struct cst_aux_ft_event *ev;
	size_t nev, cap;
	struct cst_aux_ft_ring rings[MAX_RINGS];
	int nrings;
	uint64_t lines, skipped;
	uint64_t aux_size; /* --aux-size, for rings the consumer log does not size */
	bool paired;       /* writes were matched against a perf.data */
};

/* "12345.678901" -> ns; false when @s is not a timestamp */
static bool parse_time(const char *s, size_t n, uint64_t *ns)
{
	uint64_t sec = 0, frac = 0, scale = 1000000000;
	size_t i = 0;
	bool dot = false, digits = false;

	for (; i < n; i++) {
		if (s[i] == '.' && !dot) {
			dot = true;
		} else if (isdigit((unsigned char)s[i])) {
			digits = true;
			if (!dot) {
				if (sec > UINT64_MAX / 10 / 1000000000)
					return false;
				sec = sec * 10 + (uint64_t)(s[i] - '0');
			} else if (scale > 1) {
				scale /= 10;
				frac += (uint64_t)(s[i] - '0') * scale;
			}
		} else {
			return false;
		}
	}
	*ns = sec * 1000000000 + frac;
	return digits && dot;
}

/* The value of "key=" (or "key: ") in @s, hex with 0x or decimal. The search goes
 * on from the key, not from the value: a key ending the line has its value at the
 * NUL, and a search from past it would read beyond the string. */
static bool field(const char *s, const char *key, uint64_t *v)
{
	size_t k = strlen(key);

	for (const char *p = strstr(s, key); p; p = strstr(p + 1, key)) {
		const char *val = p + k + 1;
		char *end;

		if (p > s && (isalnum((unsigned char)p[-1]) || p[-1] == '_'))
			continue;
		if (p[k] != '=' && p[k] != ':')
			continue;
		while (*val == ' ')
			val++;
		errno = 0;
		*v = strtoull(val, &end, 0);
		if (end != val && !errno)
			return true;
	}
	return false;
}

static struct cst_aux_ft_ring *ring_of(struct cst_aux_ftrace *f, int cpu)
{
	for (int i = 0; i < f->nrings; i++)
		if (f->rings[i].cpu == cpu)
			return &f->rings[i];
	if (f->nrings >= MAX_RINGS)
		return NULL;
	memset(&f->rings[f->nrings], 0, sizeof(f->rings[0]));
	f->rings[f->nrings].cpu = cpu;
	f->rings[f->nrings].aux_size = f->aux_size;
	return &f->rings[f->nrings++];
}

/* One event line (header and fields joined). Returns 0, or 1 when not ours. */
static int take_line(struct cst_aux_ftrace *f, const char *line, uint64_t lineno)
{
	const char *lb = strchr(line, '['), *rb, *p, *colon;
	struct cst_aux_ft_event e = {0};
	char *end;
	uint64_t v;
	long cpu;

	/* "comm-pid [cpu] flags time: event: fields" (trace-cmd: no flags column) */
	if (!lb)
		return 1;
	cpu = strtol(lb + 1, &end, 10);
	if (end == lb + 1 || *end != ']' || cpu < 0 || cpu > 4095)
		return 1;
	rb = end;
	for (p = lb; p > line && p[-1] == ' '; p--)
		;
	{
		const char *dash = p;

		while (dash > line && dash[-1] != '-')
			dash--;
		e.pid = dash > line ? (uint32_t)strtoul(dash, NULL, 10) : 0;
	}
	p = rb + 1;
	for (;;) { /* tokens until the timestamp */
		const char *t;

		while (*p == ' ')
			p++;
		t = p;
		while (*p && *p != ' ')
			p++;
		if (p == t)
			return 1;
		if (p[-1] == ':' && parse_time(t, (size_t)(p - t - 1), &e.time))
			break;
	}
	while (*p == ' ')
		p++;
	colon = strchr(p, ':');
	if (!colon)
		return 1;
	e.cpu = (int)cpu;
	e.line = lineno;
	e.rec = -1;
	if (strstr(p, "__auxtrace_mmap__read") || (strstr(p, "aux_read") && field(p, "head_offset", &v))) {
		e.kind = cst_aux_ft_read;
		if (!field(p, "old_offset", &e.old) || !field(p, "head_offset", &e.head))
			return 1;
		if (!field(p, "size", &e.size))
			e.size = e.head - e.old;
	} else if (strstr(p, "perf_aux_output_end") || strstr(p, "aux_end") ||
		   (field(p, "old_head", &v) && field(p, "new_head", &v))) {
		e.kind = cst_aux_ft_write;
		if (!field(p, "old_head", &e.old))
			return 1;
		if (!field(p, "size", &e.size) && !field(p, "new_head", &v))
			return 1;
		if (field(p, "new_head", &e.head)) {
			if (!field(p, "size", &e.size))
				e.size = e.head - e.old;
		} else {
			e.head = e.old + e.size;
		}
	} else if (!strncmp(p, "sched_waking:", 13) || !strncmp(p, "sched_wakeup:", 13)) {
		e.kind = cst_aux_ft_wake;
		if (!field(p, "pid", &v))
			return 1;
		e.target = (uint32_t)v;
		e.target_cpu = field(p, "target_cpu", &v) ? (int)v : -1;
		e.waking = p[10] == 'i';
	} else if (!strncmp(p, "sched_switch:", 13)) {
		e.kind = cst_aux_ft_switch;
		if (!field(p, "next_pid", &v))
			return 1;
		e.target = (uint32_t)v;
	} else {
		return 1;
	}
	if (CST_GROW(f->ev, f->cap, f->nev + 1) < 0)
		return -cste_nomem;
	f->ev[f->nev++] = e;
	return 0;
}

static int cmp_time(const void *a, const void *b)
{
	const struct cst_aux_ft_event *x = a, *y = b;

	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return x->line < y->line ? -1 : x->line > y->line;
}

/* Pair writes with AUX records, reads with rings, and follow each ring's backlog. */
static int analyse(struct cst_aux_ftrace *f, const struct cst_aux_report *r)
{
	struct ft_recs recs = {0};
	struct ft_chunks chunks = {0};
	struct ft_heads heads[MAX_RINGS] = {{0}};
	int err = 0;
	uint64_t tail[MAX_RINGS] = {0};
	bool have_tail[MAX_RINGS] = {false}, over[MAX_RINGS] = {false};
	uint64_t wake_time = 0;
	bool woke = false;
	uint32_t consumer = 0;

	for (size_t i = 0; i < f->nev; i++)
		if (f->ev[i].kind == cst_aux_ft_read && !f->ev[i].from_log) {
			consumer = f->ev[i].pid;
			break;
		}
	if (r && ((err = cap_ft_recs_build(&recs, r)) || (err = cap_ft_chunks_build(&chunks, r))))
		goto out;
	for (size_t i = 0; i < f->nev && !err; i++) {
		struct cst_aux_ft_event *e = &f->ev[i];
		struct cst_aux_ft_ring *g;
		int ri_;

		if (e->kind == cst_aux_ft_wake) {
			if (consumer && e->target == consumer && !woke) {
				wake_time = e->time;
				woke = true;
			}
			continue;
		}
		if (e->kind == cst_aux_ft_switch)
			continue;
		if (e->kind == cst_aux_ft_read && e->from_log && !e->size)
			continue; /* the consumer found nothing there */
		if (e->kind == cst_aux_ft_read) {
			/* the ring whose writes this read's range takes */
			int best = -1;

			for (int k = 0; k < f->nrings && e->from_log; k++)
				if (f->rings[k].cpu == e->ring_cpu)
					best = k;
			for (int k = 0; k < f->nrings && best < 0; k++)
				if (have_tail[k] && f->rings[k].last_head >= e->head &&
				    f->rings[k].first_head <= e->old)
					best = k;
			if (best < 0)
				for (int k = 0; k < f->nrings && best < 0; k++)
					if (f->rings[k].last_head == e->head)
						best = k;
			if (best < 0) {
				e->ring_cpu = -1;
				continue;
			}
			g = &f->rings[best];
			e->ring_cpu = g->cpu;
			g->reads++;
			g->read_bytes += e->size;
			e->drained = cap_ft_heads_between(&heads[best], e->old, e->head);
			if (woke && consumer && e->pid == consumer && !e->from_log) {
				e->latency = e->time - wake_time;
				if (e->latency > g->max_latency)
					g->max_latency = e->latency;
				woke = false;
			}
			tail[best] = e->head;
			over[best] = false;
			continue;
		}
		/* a kernel write */
		g = ring_of(f, e->cpu);
		if (!g)
			continue;
		ri_ = (int)(g - f->rings);
		if (!have_tail[ri_]) {
			tail[ri_] = e->old;
			have_tail[ri_] = true;
			g->first_head = e->old;
		}
		g->last_head = e->head;
		err = cap_ft_heads_add(&heads[ri_], e->head);
		e->ring_cpu = g->cpu;
		g->writes++;
		g->write_bytes += e->size;
		e->backlog = e->head - tail[ri_];
		if (e->backlog > g->peak_backlog) {
			g->peak_backlog = e->backlog;
			g->peak_time = e->time;
		}
		if (g->aux_size && e->backlog >= g->aux_size) {
			/* one overflow lasts until the consumer reads the ring again */
			e->overflow = true;
			if (!over[ri_] && !g->overflows++)
				g->first_overflow_time = e->time;
			over[ri_] = true;
		}
		if (!r)
			continue;
		e->rec = cap_ft_recs_take(&recs, e->cpu, e->old, e->size);
		if (e->rec < 0) {
			g->unreported++;
			g->unreported_bytes += e->size;
		} else {
			e->unheld = cap_ft_chunks_unheld(&chunks, e->cpu, e->old, e->head);
			e->unheld_start = e->old;
			g->unheld_bytes += e->unheld;
		}
	}
out:
	cap_ft_recs_free(&recs);
	cap_ft_chunks_free(&chunks);
	for (int k = 0; k < MAX_RINGS; k++)
		free(heads[k].v);
	return err;
}

/* The consumer's reads from cstrace's consumer log, moved onto the kernel's clock, and
 * the log's ring sizes. */
static int add_log(struct cst_aux_ftrace *f, const struct cst_aux_timeline *t, uint64_t aux_size)
{
	struct cst_aux_tl_info ti = cst_aux_timeline_get_info(t);

	for (int i = 0; i < ti.nrings; i++) {
		const struct cst_aux_tl_ring *g = cst_aux_timeline_ring(t, i);
		struct cst_aux_ft_ring *fr = ring_of(f, g->cpu == UINT32_MAX ? -1 : (int)g->cpu);

		if (fr && !aux_size)
			fr->aux_size = g->aux_size;
	}
	for (uint64_t i = 0; ti.has_kernel_time && i < ti.nevents; i++) {
		const struct cst_aux_tl_event *e = cst_aux_timeline_event(t, i);
		const struct cst_aux_tl_ring *g = cst_aux_timeline_ring(t, e->ring);
		struct cst_aux_ft_event fe = {0};

		if (e->kind != cst_aux_tl_read || !g || g->overwrite)
			continue;
		fe.kind = cst_aux_ft_read;
		fe.from_log = true;
		fe.time = (uint64_t)((int64_t)e->time + ti.kernel_base);
		fe.cpu = -1;
		fe.ring_cpu = g->cpu == UINT32_MAX ? -1 : (int)g->cpu;
		fe.old = e->tail;
		fe.head = e->tail + e->copied;
		fe.size = e->copied;
		fe.rec = -1;
		fe.line = UINT64_MAX; /* after ftrace's own at the same time */
		if (CST_GROW(f->ev, f->cap, f->nev + 1) < 0)
			return -cste_nomem;
		f->ev[f->nev++] = fe;
	}
	return 0;
}

int cst_aux_ftrace_build(struct cst_aux_ftrace **out, const char *path,
			 const struct cst_aux_report *perf, const struct cst_aux_timeline *consumer,
			 uint64_t aux_size, const struct cst_log *log)
{
	struct cst_aux_ftrace *f;
	FILE *fp;
	char *line = NULL, *ev = NULL;
	size_t cap = 0, evlen = 0;
	uint64_t lineno = 0, evline = 0;
	ssize_t n;
	int err = 0;

	if (!out || !path)
		return -cste_invalid;
	*out = NULL;
	fp = cst_fopen_input(path, "r");
	if (!fp) {
		cst_logf(log, cst_log_error, "cannot read %s: %s", path, cst_input_strerror(errno));
		return errno == ENOENT ? -cste_not_found : -cste_io;
	}
	f = calloc(1, sizeof(*f));
	if (!f) {
		fclose(fp);
		return -cste_nomem;
	}
	/* An event is a header line plus the lines that continue it: a line with no
	 * "[cpu] ... time:" header belongs to the event above (a wrapped line). */
	while (!err && (n = getline(&line, &cap, fp)) >= 0) {
		bool header;
		uint64_t t;

		lineno++;
		while (n && (line[n - 1] == '\n' || line[n - 1] == '\r'))
			line[--n] = 0;
		if (line[0] == '#' || !n)
			continue;
		{
			const char *lb = strchr(line, '['), *p;

			header = false;
			if (lb && isdigit((unsigned char)lb[1])) {
				for (p = strchr(lb, ']'); p && *p; p++)
					if (*p == ':' && p > lb && isdigit((unsigned char)p[-1])) {
						const char *q = p;

						while (q > lb && (isdigit((unsigned char)q[-1]) || q[-1] == '.'))
							q--;
						header = parse_time(q, (size_t)(p - q), &t);
						break;
					}
			}
		}
		if (header || !ev) {
			if (ev) {
				err = take_line(f, ev, evline) < 0 ? -cste_nomem : 0;
				f->lines++;
			}
			free(ev);
			ev = strdup(line);
			evlen = ev ? strlen(ev) : 0;
			evline = lineno;
			if (!ev)
				err = -cste_nomem;
		} else if (evlen + (size_t)n < (1 << 16)) {
			/* a line of its own that continues the event: joined by a space */
			if (cst_str_append(&ev, " ", line) < 0) {
				err = -cste_nomem;
				break;
			}
			evlen += (size_t)n + 1;
		}
	}
	if (!err && ev) {
		err = take_line(f, ev, evline) < 0 ? -cste_nomem : 0;
		f->lines++;
	}
	free(ev);
	free(line);
	fclose(fp);
	if (err) {
		cst_aux_ftrace_free(f);
		return err;
	}
	if (!f->nev) {
		cst_logf(log, cst_log_error,
			 "%s: no perf_aux_output_end, __auxtrace_mmap__read or sched event in %llu "
			 "line(s) (see cstrace aux --probes for what to enable)",
			 path, (unsigned long long)lineno);
		cst_aux_ftrace_free(f);
		return -cste_no_trace;
	}
	f->aux_size = aux_size;
	if (consumer && add_log(f, consumer, aux_size) < 0) {
		cst_aux_ftrace_free(f);
		return -cste_nomem;
	}
	qsort(f->ev, f->nev, sizeof(*f->ev), cmp_time);
	err = analyse(f, perf);
	if (err) {
		cst_aux_ftrace_free(f);
		return err;
	}
	f->paired = perf != NULL;
	*out = f;
	return 0;
}

void cst_aux_ftrace_free(struct cst_aux_ftrace *f)
{
	if (!f)
		return;
	free(f->ev);
	free(f);
}

bool cst_aux_ftrace_paired(const struct cst_aux_ftrace *f)
{
	return f && f->paired;
}

uint64_t cst_aux_ftrace_nevents(const struct cst_aux_ftrace *f)
{
	return f ? f->nev : 0;
}

const struct cst_aux_ft_event *cst_aux_ftrace_event(const struct cst_aux_ftrace *f, uint64_t i)
{
	return f && i < f->nev ? &f->ev[i] : NULL;
}

int cst_aux_ftrace_nrings(const struct cst_aux_ftrace *f)
{
	return f ? f->nrings : 0;
}

const struct cst_aux_ft_ring *cst_aux_ftrace_ring(const struct cst_aux_ftrace *f, int i)
{
	return f && i >= 0 && i < f->nrings ? &f->rings[i] : NULL;
}

void cst_aux_ftrace_probes(void *fp)
{
	FILE *f = fp;

	fprintf(f,
		"# The kernel's view of AUX writes and the consumer's wake-ups, with ftrace.\n"
		"# As root, before the recording:\n"
		"cd /sys/kernel/tracing\n"
		"echo 0 > tracing_on; echo > trace\n"
		"# perf_aux_output_end(handle, size): the old head is handle->head.\n"
		"# Kernels with BTF function arguments (6.x with CONFIG_PROBE_EVENTS_BTF_ARGS):\n"
		"echo 'p:cstrace/aux_end perf_aux_output_end old_head=handle->head:x64 size:x64' >> "
		"kprobe_events\n"
		"# Other kernels: the offset of 'head' in struct perf_output_handle (run\n"
		"#   pahole -C perf_output_handle vmlinux   and use it for OFF), then on arm64:\n"
		"#   echo 'p:cstrace/aux_end perf_aux_output_end old_head=+OFF(%%x0):x64 size=%%x1:x64' >> kprobe_events\n"
		"# and on x86-64:\n"
		"#   echo 'p:cstrace/aux_end perf_aux_output_end old_head=+OFF(%%di):x64 size=%%si:x64' >> kprobe_events\n"
		"echo 1 > events/cstrace/aux_end/enable\n"
		"echo 1 > events/sched/sched_waking/enable\n"
		"echo 1 > events/sched/sched_wakeup/enable\n"
		"echo 1 > events/sched/sched_switch/enable\n"
		"echo 1 > tracing_on\n"
		"# ... record (cstrace record keeps the consumer's side itself, in OUTPUT.auxlog;\n"
		"# a consumer of your own can write lines like this one to trace_marker:\n"
		"#   __auxtrace_mmap__read: old_offset=0x1000 head_offset=0x3000 size=0x2000)\n"
		"echo 0 > tracing_on\n"
		"cat trace > aux.ftrace   # or: trace-cmd record ... && trace-cmd report > aux.ftrace\n"
		"cstrace aux --ftrace aux.ftrace --aux-size 4M perf.data\n");
}
