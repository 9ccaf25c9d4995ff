#!/usr/bin/env bash
# Build a decode fuzzer with clang's libFuzzer (ASan + UBSan) and run it for a bounded
# time, seeded with real captures' buffers where ../shared has them (and the sample
# snapshot's). Skips when clang or its libFuzzer runtime is absent.
#   fuzz_run.sh SECONDS [decoder]  fuzz_decoder.c: bytes fed to the decoders
#   fuzz_run.sh SECONDS rawdump    fuzz_rawdump.c: a raw sink dump through a session
# OpenCSD 1.3.3 itself crashes on some inputs; fuzz_run (tests/fuzz_lib.sh) goes on
# after a crash, replays each and fails only on those in cstrace's own code.
. "$CSTRACE_SOURCE_DIR/tests/lib.sh"
. "$CSTRACE_SOURCE_DIR/tests/fuzz_lib.sh"
SECS=${1:-20} WHAT=${2:-decoder}
S=$CSTRACE_SOURCE_DIR
case "$WHAT" in
decoder)
	fuzz_build "$TMP/fuzz" "$S"/decode/engine/*.c "$S"/decode/{elem,trace}.c \
		"$S"/source/*.c "$S"/common/*.c "$S/tests/decode/fuzz_decoder.c" -I"$S/decode" \
		-lopencsd_c_api -lopencsd -ljansson -lelf -lstdc++ -lpthread ;;
rawdump)
	fuzz_build "$TMP/fuzz" "$S"/decode/*.c "$S"/decode/*/*.c "$S"/snapshot/*.c "$S"/perfdata/*.c "$S"/boards/*.c \
		"$S"/source/*.c "$S"/common/*.c "$S/tests/decode/fuzz_rawdump.c" -I"$S/decode" \
		-DCSTRACE_BOARDS_SRC_DIR="\"$S/boards\"" -DCSTRACE_BOARDS_INSTALL_DIR="\"/nonexistent\"" \
		-DCSTRACE_BUILD_DIR="\"/nonexistent\"" $(pkg-config --cflags --libs inih jansson libelf zlib) \
		-lopencsd_c_api -lopencsd -lstdc++ -lpthread
	# the profile the target's board sources come from
	export CSTRACE_BOARDS_DIR="$S/boards" ;;
*) fail "unknown fuzzer $WHAT"; finish ;;
esac
# Seeds: each snapshot's first buffer, cut to 8 KiB; for rawdump behind the control
# byte that names its format (0 CoreSight frames, 1 raw, 3 DSTREAM).
mkdir -p "$TMP/corpus"
for d in "$S/testdata/sample/a64-loop" "$SHARED"/opencsd/*/; do
	t=$d/trace.ini
	[ -f "$t" ] || continue
	file=$(grep -i -m1 '^ *file *=' "$t" | sed 's/^[^=]*= *//; s/[" \r]//g')
	[ -f "$d/$file" ] || continue
	case "$(grep -i -m1 '^ *format *=' "$t" | sed 's/^[^=]*= *//; s/[ \r]//g')" in
	source_data) ctl='\001' ;;
	dstream_coresight) ctl='\003' ;;
	*) ctl='\000' ;;
	esac
	seed="$TMP/corpus/$(basename "$d")"
	if [ "$WHAT" = rawdump ]; then
		{ printf "$ctl"'\000\000'; head -c 8192 "$d/$file"; } >"$seed"
	else
		head -c 8192 "$d/$file" >"$seed"
	fi
done
printf '\x00\x00\x00\x00' >"$TMP/corpus/zero"
fuzz_run "$TMP/fuzz" "$SECS" "$TMP/corpus" -max_len=16384
finish
