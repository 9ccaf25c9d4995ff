#!/usr/bin/env bash
# Build the board profile fuzzer (fuzz_profile.c: parser, sources, fixture, doctor) with
# clang's libFuzzer, ASan and UBSan, and run it for a bounded time, seeded with the
# shipped profiles and the parser's regression inputs. Skips when clang or libFuzzer
# is absent. usage: fuzz_run.sh SECONDS
. "$CSTRACE_SOURCE_DIR/tests/lib.sh"
. "$CSTRACE_SOURCE_DIR/tests/fuzz_lib.sh"
SECS=${1:-20}
S=$CSTRACE_SOURCE_DIR
fuzz_build "$TMP/fuzz" "$S"/boards/*.c "$S"/source/*.c "$S"/common/*.c \
	"$S/tests/boards/fuzz_profile.c" -DCSTRACE_BOARDS_SRC_DIR="\"$S/boards\"" \
	-DCSTRACE_BOARDS_INSTALL_DIR="\"/nonexistent\"" -DCSTRACE_BUILD_DIR="\"/nonexistent\"" \
	$(pkg-config --cflags --libs inih zlib libelf)
mkdir -p "$TMP/corpus"
cp "$S"/boards/*.ini "$S"/tests/boards/regress/*.ini "$TMP/corpus/"
fuzz_run "$TMP/fuzz" "$SECS" "$TMP/corpus" -max_len=32768
finish
