#!/usr/bin/env bash
# Build the recorded-AUX-stream fuzzer (reader, aux timeline, replay) with clang's
# libFuzzer, ASan and UBSan, and run it for a bounded time from the streams in
# testdata/auxlog. Skips when clang or libFuzzer is absent. usage: fuzz_run.sh SECONDS
. "$CSTRACE_SOURCE_DIR/tests/lib.sh"
. "$CSTRACE_SOURCE_DIR/tests/fuzz_lib.sh"
SECS=${1:-20}
S=$CSTRACE_SOURCE_DIR
fuzz_build "$TMP/fuzz" "$S"/capture/*.c "$S"/auxlog/*.c "$S"/perfdata/*.c "$S"/boards/*.c \
	"$S"/snapshot/*.c "$S"/source/*.c "$S"/common/*.c "$S/tests/capture/fuzz_auxlog.c" \
	$(pkg-config --cflags --libs inih zlib libelf) -lm
mkdir -p "$TMP/corpus"
cp "$S"/testdata/auxlog/*.auxlog "$TMP/corpus/"
# a cut seed of each, so that the mutator starts from small inputs as well
for f in "$S"/testdata/auxlog/*.auxlog; do head -c 3000 "$f" >"$TMP/corpus/$(basename "$f").head"; done
fuzz_run "$TMP/fuzz" "$SECS" "$TMP/corpus" -max_len=200000
finish
