#!/usr/bin/env bash
# Build the perf.data reader fuzzer with clang's libFuzzer, ASan and UBSan and run
# it for a bounded time from seeds written by perf_gen. Skips when clang or
# libFuzzer is absent. usage: fuzz_run.sh PERF_GEN A64_ELF SECONDS
. "$CSTRACE_SOURCE_DIR/tests/lib.sh"
. "$CSTRACE_SOURCE_DIR/tests/fuzz_lib.sh"
GEN=$1 A64=$2 SECS=${3:-20}
S=$CSTRACE_SOURCE_DIR
fuzz_build "$TMP/fuzz" "$S"/perfdata/*.c "$S"/common/*.c "$S/tests/perfdata/fuzz_perf_reader.c"
mkdir -p "$TMP/corpus"
if [ -f "$A64" ]; then
	n=0
	for o in "" "--cpu-wide" "--raw" "--snapshot" "--no-finish"; do
		"$GEN" --elf "$A64" --out "$TMP/corpus/seed$n" --proto etmv4 $o && n=$((n + 1))
	done
	"$GEN" --elf "$A64" --out "$TMP/corpus/seed$n" --proto etmv3
fi
printf 'PERFILE2' >"$TMP/corpus/magic"
fuzz_run "$TMP/fuzz" "$SECS" "$TMP/corpus" -max_len=65536
finish
