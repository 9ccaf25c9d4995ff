#!/usr/bin/env bash
# Build the perf.data reader fuzzer with clang's libFuzzer and run it for a bounded
# time from seeds written by perf_gen. Skips when clang or libFuzzer is absent.
# usage: fuzz_run.sh PERF_GEN A64_ELF SECONDS
. "$CSTRACE_SOURCE_DIR/tests/lib.sh"
GEN=$1 A64=$2 SECS=${3:-20}
CLANG=${CLANG:-clang}
command -v "$CLANG" >/dev/null 2>&1 || skip "clang is not installed"
S=$CSTRACE_SOURCE_DIR
if ! "$CLANG" -std=c11 -D_GNU_SOURCE -D_FILE_OFFSET_BITS=64 -g -O1 \
	-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
	-I"$S/include" "$S"/perfdata/*.c "$S"/common/*.c "$S/tests/perfdata/fuzz_perf_reader.c" \
	-o "$TMP/fuzz" 2>"$TMP/cc.err"; then
	grep -q -i "fuzzer" "$TMP/cc.err" && skip "clang has no libFuzzer runtime (libclang-rt-dev)"
	cat "$TMP/cc.err" >&2
	fail "fuzzer does not build"
	finish
fi
mkdir -p "$TMP/corpus"
if [ -f "$A64" ]; then
	n=0
	for o in "" "--cpu-wide" "--raw" "--snapshot" "--no-finish"; do
		"$GEN" --elf "$A64" --out "$TMP/corpus/seed$n" --proto etmv4 $o && n=$((n + 1))
	done
	"$GEN" --elf "$A64" --out "$TMP/corpus/seed$n" --proto etmv3
fi
printf 'PERFILE2' >"$TMP/corpus/magic"
# -max_total_time bounds the run; a crash, leak or timeout makes libFuzzer exit non-zero
check "fuzzer ran ${SECS}s without a crash, leak or hang" \
	"$TMP/fuzz" -max_total_time="$SECS" -timeout=10 -rss_limit_mb=1024 \
	-max_len=65536 -print_final_stats=1 "$TMP/corpus" >"$TMP/fuzz.log" 2>&1
[ "$fails" -eq 0 ] || tail -40 "$TMP/fuzz.log" >&2
grep -E "stat::number_of_executed_units|cov:" "$TMP/fuzz.log" | tail -2
finish
