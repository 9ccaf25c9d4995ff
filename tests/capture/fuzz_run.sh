#!/usr/bin/env bash
# Build the recorded-AUX-stream fuzzer (reader, aux timeline, replay) with clang's
# libFuzzer and run it for a bounded time from the streams in testdata/auxlog.
# Skips when clang or libFuzzer is absent. usage: fuzz_run.sh SECONDS
. "$CSTRACE_SOURCE_DIR/tests/lib.sh"
SECS=${1:-20}
CLANG=${CLANG:-clang}
command -v "$CLANG" >/dev/null 2>&1 || skip "clang is not installed"
S=$CSTRACE_SOURCE_DIR
if ! "$CLANG" -std=c11 -D_GNU_SOURCE -D_FILE_OFFSET_BITS=64 -g -O1 \
	-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
	-I"$S/include" "$S"/capture/*.c "$S"/auxlog/*.c "$S"/perfdata/*.c "$S"/boards/*.c \
	"$S"/snapshot/*.c "$S"/source/*.c "$S"/common/*.c "$S/tests/capture/fuzz_auxlog.c" \
	$(pkg-config --cflags --libs inih zlib libelf) -lm -o "$TMP/fuzz" 2>"$TMP/cc.err"; then
	grep -q -i "fuzzer" "$TMP/cc.err" && skip "clang has no libFuzzer runtime (libclang-rt-dev)"
	cat "$TMP/cc.err" >&2
	fail "fuzzer does not build"
	finish
fi
mkdir -p "$TMP/corpus"
cp "$S"/testdata/auxlog/*.auxlog "$TMP/corpus/"
# a cut seed of each, so that the mutator starts from small inputs as well
for f in "$S"/testdata/auxlog/*.auxlog; do head -c 3000 "$f" >"$TMP/corpus/$(basename "$f").head"; done
check "fuzzer ran ${SECS}s without a crash, leak or hang" \
	"$TMP/fuzz" -max_total_time="$SECS" -timeout=10 -rss_limit_mb=2048 \
	-max_len=200000 -artifact_prefix="$TMP/" -print_final_stats=1 "$TMP/corpus" >"$TMP/fuzz.log" 2>&1
[ "$fails" -eq 0 ] || tail -40 "$TMP/fuzz.log" >&2
grep -E "stat::number_of_executed_units|cov:" "$TMP/fuzz.log" | tail -2
finish
