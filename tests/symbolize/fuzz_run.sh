#!/usr/bin/env bash
# Build a symbolize fuzzer with clang's libFuzzer (ASan + UBSan) and run it for a
# bounded time. Skips when clang or its libFuzzer runtime is absent.
#   fuzz_run.sh SECONDS merge   fuzz_merge.c: merge's readers (folded, autofdo,
#                               profgen, lcov, report JSON) and its writers
#   fuzz_run.sh SECONDS views   fuzz_views.c: a symbolized element stream through
#                               the report models into every report writer
. "$CSTRACE_SOURCE_DIR/tests/lib.sh"
. "$CSTRACE_SOURCE_DIR/tests/fuzz_lib.sh"
SECS=${1:-20} WHAT=${2:-merge}
S=$CSTRACE_SOURCE_DIR
mkdir -p "$TMP/corpus"
case "$WHAT" in
merge)
	fuzz_build "$TMP/fuzz" "$S"/symbolize/merge.c "$S"/symbolize/merge_json.c "$S"/common/*.c \
		"$S/tests/symbolize/fuzz_merge.c" -I"$S/symbolize" $(pkg-config --cflags --libs jansson)
	# a file per format (byte 0 picks the format: 0 auto, 1 folded, 2 autofdo,
	# 3 profgen, 4 lcov, 5 json), two inputs split at "%%"
	printf '\001main;f;g 10\nmain;f 3\n%%%%\nmain;f;g 5\n' >"$TMP/corpus/folded"
	printf '\0022\n400000-400010:3\n400020-400030:1\n1\n400004:2\n1\n40000c->400020:4\n// build_id: 0x1234\n// /bin/prog\n\n%%%%\n1\n400000-400010:1\n0\n0\n// build_id: 0x1234\n// /bin/prog\n' \
		>"$TMP/corpus/autofdo"
	printf '\0032\n0-10:3\n20-30:1\n1\nc->20:4\n%%%%\n1\n0-10:2\n0\n' >"$TMP/corpus/profgen"
	printf '\004TN:\nSF:/x.c\nFN:3,main\nFNDA:2,main\nBRDA:3,0,0,-\nBRDA:5,0,1,2\nDA:3,2\nDA:5,0\nLF:2\nLH:1\nend_of_record\n%%%%\nTN:\nSF:/x.c\nDA:3,1\nend_of_record\n' \
		>"$TMP/corpus/lcov"
	printf '\005{"total_insns": 30, "ranges": 4, "rows": [{"sym": "main", "dso": "prog", "srcline": "x.c:3", "insns": 20, "entries": 1, "taken": 2, "not_taken": 1, "lines_hit": 2, "lines_total": 4}]}\n%%%%\n{"total_insns": 5, "ranges": 1, "rows": []}\n' \
		>"$TMP/corpus/json"
	printf '\000main;f 1\n' >"$TMP/corpus/auto"
	max=8192 ;;
views)
	fuzz_build "$TMP/fuzz" "$S"/symbolize/*.c $(find "$S/decode" -name '*.c') "$S"/snapshot/*.c \
		"$S"/perfdata/*.c "$S"/source/*.c "$S"/common/*.c "$S/tests/symbolize/fuzz_views.c" \
		-I"$S/symbolize" $(find "$S/decode" -type d -printf '-I%p ') \
		$(pkg-config --cflags --libs inih jansson libelf libdw capstone zlib) \
		-lopencsd_c_api -lopencsd -lstdc++ -lpthread
	# the A64 and T32 builds of the symbolize test program, with DWARF
	progs=$CSTRACE_BUILD_DIR/tests/symbolize/progs
	[ -f "$progs/prog-a64" ] && export FUZZ_ELF=$progs/prog-a64
	[ -f "$progs/prog-t32" ] && export FUZZ_ELF32=$progs/prog-t32
	# seeds: runs of calls and returns through the program's first 64 KiB
	python3 - "$TMP/corpus" <<'PY'
import os, random, sys
random.seed(7)
for n in range(8):
    b = bytearray([3])
    for i in range(64 * (n + 1)):
        kind = random.choice([0, 0, 0, 0, 8, 9, 10, 11, 12])
        b += bytes([kind, random.randrange(256) & (0x4f if n % 2 else 0x43),
                    random.randrange(256), random.randrange(4), random.randrange(16),
                    random.randrange(256), random.randrange(8), random.randrange(64)])
    open(os.path.join(sys.argv[1], f"seed{n}"), "wb").write(b)
PY
	max=16384 ;;
*) fail "unknown fuzzer $WHAT"; finish ;;
esac
fuzz_run "$TMP/fuzz" "$SECS" "$TMP/corpus" -max_len=$max
finish
