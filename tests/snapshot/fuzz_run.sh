#!/usr/bin/env bash
# Build the snapshot-directory fuzzer (fuzz_snapshot.c: reader and decode) with clang's
# libFuzzer, ASan and UBSan, and run it for a bounded time, seeded with the repository's
# sample snapshot and the shared real ones, each packed into one input. Skips when
# clang or libFuzzer is absent. usage: fuzz_run.sh SECONDS
. "$CSTRACE_SOURCE_DIR/tests/lib.sh"
. "$CSTRACE_SOURCE_DIR/tests/fuzz_lib.sh"
SECS=${1:-20}
S=$CSTRACE_SOURCE_DIR
fuzz_build "$TMP/fuzz" "$S"/snapshot/*.c "$S"/decode/*.c "$S"/decode/*/*.c "$S"/perfdata/*.c "$S"/source/*.c \
	"$S"/common/*.c "$S/tests/snapshot/fuzz_snapshot.c" -I"$S/decode" -I"$S/snapshot" \
	$(pkg-config --cflags --libs inih jansson libelf) -lopencsd_c_api -lopencsd -lstdc++ -lpthread

# pack DIR: the directory as one input (snapshot.ini, then "%%NAME" and each file;
# buffers and dumps cut to 4 KiB, as the fuzzer's inputs are small)
pack() {
	cat "$1/snapshot.ini"
	for f in "$1"/*; do
		[ -f "$f" ] && [ "$(basename "$f")" != snapshot.ini ] || continue
		case "$f" in *.txt | *.md) continue ;; esac
		printf '\n%%%%%s\n' "$(basename "$f")"
		case "$f" in *.ini) cat "$f" ;; *) head -c 4096 "$f" ;; esac
	done
}
mkdir -p "$TMP/corpus"
pack "$S/testdata/sample/a64-loop" >"$TMP/corpus/a64-loop"
for d in "$SHARED"/opencsd/*/; do
	[ -f "$d/snapshot.ini" ] && pack "$d" >"$TMP/corpus/$(basename "$d")"
done
fuzz_run "$TMP/fuzz" "$SECS" "$TMP/corpus" -max_len=32768
finish
