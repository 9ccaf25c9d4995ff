/* `cstrace decode`: every element of a trace, as readable text, as OpenCSD's
 * conformance lines, or as JSON lines. Option parsing and wiring only. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "trace_opts.h"
#include "verb.h"

enum out_format { out_text, out_elements, out_jsonl, out_none };

struct decode_out {
	FILE *f;
	enum out_format format;
	int io_errno; /* a write failed (cli_write_failed) */
	/* decoding threads write lines too: under the stream's lock (on one thread
	 * the lock, taken per element, was a third of decode --format=none) */
	bool threaded;
};

static const char decode_usage[] =
	"usage: cstrace decode [options] [TRACE]\n"
	"\n"
	"Decode a captured trace into instruction ranges, exceptions, context changes,\n"
	"timestamps and gaps, per trace ID in trace order. TRACE is a snapshot directory,\n"
	"a perf.data file, or a raw sink dump (with --etmv4/--etmv3/... or --board).\n"
	"\n"
	"options:\n"
	"  --format=F           text (default), elements (OpenCSD's conformance format:\n"
	"                       'Idx:<offset>; ID:<id>; <element>'), jsonl, none\n"
	"  -o, --output FILE    write to FILE instead of standard output\n"
	"  --stats              print totals on standard error\n"
	TRACE_OPTS_ELF_HELP
	VERB_INPUT_HELP TRACE_OPTS_HELP
	"  -h, --help           this text\n"
	"\n"
	"exit status: 0 decoded, 1 nothing could be decoded or an error, 2 usage.\n";

/* One element as a line (with its newline) in the chosen format; nothing for
 * --format=none. Runs on decoding threads: it only reads @ctx. */
static int print_elem(void *ctx, const struct cst_elem *e, char *buf, size_t size)
{
	const struct decode_out *o = ctx;
	int n = 0, m;

	switch (o->format) {
	case out_none:
		return 0;
	case out_elements:
		n = snprintf(buf, size, "Idx:%" PRIu64 "; ID:%x; ", e->offset, e->trace_id);
		m = cst_elem_format_ocsd(e, buf + n, size - (size_t)n - 1);
		break;
	case out_jsonl:
		m = cst_elem_format_json(e, buf, size - 1);
		break;
	case out_text:
	default:
		m = cst_elem_format_text(e, buf, size - 1);
		break;
	}
	if (m < 0)
		return 0;
	/* text and JSON return the length they wrote; OpenCSD's may say more than
	 * fits */
	n = o->format == out_elements ? (int)strlen(buf) : m;
	buf[n++] = '\n';
	return n;
}

/* Lines in trace order, written under the stream's lock: a decoding thread that
 * crashes flushes whole elements only (cli_note_printed). */
static int write_lines(void *ctx, const char *bytes, size_t len, uint64_t nelems, uint64_t offset,
		       bool has_offset)
{
	struct decode_out *o = ctx;
	int ret = 0;

	if (o->threaded)
		flockfile(o->f);
	if (!trace_opts_skip(nelems)) {
		if (len && fwrite_unlocked(bytes, 1, len, o->f) != len) {
			cli_write_failed(&o->io_errno);
			ret = -cste_io; /* stop: the reader went away or the disk is full */
		}
		cli_note_printed(nelems);
	}
	if (has_offset)
		trace_opts_note_offset(offset);
	if (o->threaded)
		funlockfile(o->f);
	return ret;
}

/* What decode's own options ask for. */
struct decode_args {
	struct trace_opts *topts;
	struct decode_out *out;
	const char *output;
	bool stats;
};

static int decode_option(void *ctx, int opt, const char *arg)
{
	struct decode_args *d = ctx;

	switch (opt) {
	case 'f':
		if (!strcmp(arg, "text"))
			d->out->format = out_text;
		else if (!strcmp(arg, "elements"))
			d->out->format = out_elements;
		else if (!strcmp(arg, "jsonl") || !strcmp(arg, "json"))
			d->out->format = out_jsonl;
		else if (!strcmp(arg, "none"))
			d->out->format = out_none;
		else {
			cli_error("--format %s: expected text, elements, jsonl or none", arg);
			return -1;
		}
		return 0;
	case 'o':
		d->output = arg;
		return 0;
	case 's':
		d->stats = true;
		return 0;
	case 0x2000:
		return trace_opts_add_elf(d->topts, arg);
	default:
		return -1;
	}
}

int cmd_decode(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"format", required_argument, NULL, 'f'},
		{"output", required_argument, NULL, 'o'},
		{"stats", no_argument, NULL, 's'},
		TRACE_OPTS_ELF_LONG,
		VERB_LONG_END,
	};
	struct decode_out out = {.f = stdout, .format = out_text};
	struct cli_out file;
	struct trace_opts topts;
	struct cst_session *session = NULL;
	struct cst_decoder_stats st;
	struct decode_args args = {&topts, &out, NULL, false};
	const char *trace, *output;
	enum verb_parsed parsed;
	bool stats;
	int ret, status = 1;

	trace_opts_init(&topts);
	parsed = verb_parse(&(struct verb){"decode", decode_usage, "o:", longopts, decode_option,
					   &args},
			    argc, argv, &topts, NULL, &trace);
	if (parsed != verb_run)
		return verb_exit(parsed);
	output = args.output;
	stats = args.stats;
	/* -o appears whole, and only when decoding succeeded; never over the input */
	if (cli_out_open(&file, output, trace, false) < 0) {
		trace_opts_fini(&topts);
		return 1;
	}
	out.f = file.f;
	cli_out_buffer(out.f);
	/* OpenCSD's own print of each element needs OpenCSD's element */
	if (out.format == out_elements && (topts.session.decoder == cst_decoder_cstrace ||
					   topts.session.decoder == cst_decoder_recover)) {
		cli_error("--format=elements prints OpenCSD's elements: not with --decoder=%s",
			  topts.session.decoder == cst_decoder_cstrace ? "cstrace" : "recover");
		cli_out_abort(&file);
		trace_opts_fini(&topts);
		return 2;
	}
	if (out.format == out_elements)
		topts.session.decoder = cst_decoder_opencsd;

	/* its lines streaming to a terminal show the progress themselves */
	if (out.format != out_none)
		cli_progress_off(out.f);
	ret = trace_opts_open(&topts, trace, out.f, &session);
	if (ret < 0)
		goto out;
	/* a crash on threads restarts on one thread past the elements printed
	 * (write_lines counts them); perf.data fragments decode on threads too */
	cli_note_threaded(topts.session.threads > 1);
	out.threaded = topts.session.threads > 1;
	ret = cst_session_run_lines(session, print_elem, &out, write_lines, &out);
	ret < 0 ? cli_progress_end() : cli_progress_finish();
	cst_session_get_stats(session, &st);
	if (!cli_flush_output(out.f, output, out.io_errno))
		goto out;
	if (ret < 0)
		goto out;
	if (stats)
		fprintf(stderr,
			"cstrace: %" PRIu64 " bytes, %" PRIu64 " elements, %" PRIu64
			" ranges, %" PRIu64 " instructions, %" PRIu64 " gaps (%" PRIu64
			" inaccessible memory)\n",
			st.bytes, st.elements, st.ranges, st.instructions, st.gaps, st.nacc);
	if (stats && st.chunks > 1)
		fprintf(stderr,
			"cstrace: on %u threads: %" PRIu64 " chunks, %" PRIu64
			" decoded apart (the others by the decoder before them), %" PRIu64
			" by cstrace's own decoder\n",
			topts.session.threads, st.chunks, st.chunks_apart, st.chunks_followed);
	if (stats && st.followed)
		fprintf(stderr, "cstrace: %" PRIu64 " of the elements by cstrace's own decoder\n",
			st.followed);
	if (stats && (st.aux_uncovered || st.aux_duplicate))
		fprintf(stderr,
			"cstrace: %" PRIu64 " AUXTRACE bytes no AUX record covers, decoded; %" PRIu64
			" named again by AUX records, decoded once\n",
			st.aux_uncovered, st.aux_duplicate);
	if (stats && st.queues_ahead)
		fprintf(stderr,
			"cstrace: on %u threads: %" PRIu64 " queues decoded ahead of the time order%s\n",
			topts.session.threads, st.queues_ahead,
			st.ahead_fallbacks ? " (taken again on one thread: a decoder reported errors)"
					   : "");
	if (!topts.session.start_offset && !cli_check_decoded(trace, &st))
		goto out;
	status = 0;
out:
	status = cli_out_close(&file, status);
	cst_session_free(session);
	trace_opts_fini(&topts);
	return status;
}
