/* libFuzzer target for raw sink dumps decoded as `cstrace decode DUMP --etmv4 ...
 * --board juno-r1 --image DUMP@ADDR:OFF --start-offset N` does: a session on the input
 * as a file. fuzz_decoder.c feeds bytes to a decoder; this covers what lies before
 * that on the raw-dump path: the four buffer formats (CoreSight frames, raw, TPIU,
 * DSTREAM blocks) read from a file, --start-offset's search for the next unit, a
 * board's sources merged with those given, file-backed memory images, packet dumps,
 * and cst_decoder_run's read windows (a small window splits frames and blocks).
 * Byte 0 chooses: bits 0-1 the format, bit 2 packets instead of elements, bit 3 an
 * ID filter, bits 4-7 the start offset (x 37 bytes); byte 1 the image's file offset
 * and byte 2 the read window. The rest is the dump file, also the image's. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "cstrace/boards.h"
#include "cstrace/decode.h"
#include "fuzz_sink.h"

static struct cst_source_cfg srcs[6];
static int nsrcs;
static struct cst_source_cfg board_srcs[8];
static int nboard;

static const struct cst_log log_quiet = {fuzz_quiet, NULL};

static void add(enum cst_protocol p, const char *spec)
{
	if (cst_source_cfg_parse(&srcs[nsrcs], p, spec, NULL) == 0)
		nsrcs++;
}

int LLVMFuzzerInitialize(int *argc, char ***argv);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	struct cst_board *b = NULL;

	add(cst_proto_etmv4i, "traceid=0x10,trcconfigr=0xc1");
	add(cst_proto_etmv3, "traceid=0x11,etmcr=0x10001860");
	add(cst_proto_ptm, "traceid=0x13,etmcr=0x20000400");
	add(cst_proto_ete, "traceid=0x15");
	add(cst_proto_stm, "traceid=0x20");
	if (cst_board_find(&b, NULL, "juno-r1", NULL) == 0) {
		nboard = cst_board_sources(b, NULL, board_srcs, 8);
		nboard = nboard < 0 ? 0 : nboard > 8 ? 8 : nboard;
		cst_board_free(b);
	}
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const enum cst_buffer_format formats[] = {cst_bufmt_frames, cst_bufmt_raw,
							 cst_bufmt_tpiu, cst_bufmt_dstream};
	static int fd = -1;
	char path[64];
	struct cst_mem_image img = {.path = path, .address = 0x400000};
	struct cst_session_opts o = {
		.sz = sizeof(o), .log = &log_quiet, .kind = cst_input_raw,
		.raw_sources = srcs, .nraw_sources = nsrcs, .raw_images = &img, .nraw_images = 1,
		.board_sources = board_srcs, .nboard_sources = nboard};
	struct cst_session *s;
	uint64_t n = 0;

	if (size < 3)
		return 0;
	if (fd < 0)
		fd = memfd_create("rawdump-fuzz", 0);
	if (fd < 0 || ftruncate(fd, 0) || pwrite(fd, data + 3, size - 3, 0) != (ssize_t)size - 3)
		return 0;
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	o.raw_format = formats[data[0] & 3];
	o.start_offset = (uint64_t)(data[0] >> 4) * 37;
	if (data[0] & 8)
		o.id_filter[0] = 1ull << 0x10 | 1ull << 0x20 | 1ull << 0x15;
	img.file_offset = data[1];
	if (cst_session_open(&s, path, &o))
		return 0;
	if (data[0] & 4)
		cst_session_dump(s, fuzz_packet, &n);
	else
		cst_session_run(s, fuzz_elem, NULL, &n);
	{
		/* the same buffer through a small read window */
		struct cst_decoder_opts d = {.sz = sizeof(d), .log = &log_quiet,
					     .window = 1 + data[2] % 700};
		struct cst_decoder *dec = NULL;

		if (!cst_decoder_alloc(&dec, cst_session_trace(s), 0, &d)) {
			cst_decoder_set_elem_cb(dec, fuzz_elem, &n);
			cst_decoder_run(dec);
			cst_decoder_free(dec);
		}
	}
	cst_session_free(s);
	return 0;
}
