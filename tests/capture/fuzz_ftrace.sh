#!/usr/bin/env bash
# Build the ftrace text fuzzer (fuzz_ftrace.c: aux --ftrace's reader, pairing and
# SVG) with clang's libFuzzer, ASan and UBSan, and run it for a bounded time, seeded
# with the text tests/capture/ftrace.py makes (the trace file's one-line form and
# trace-cmd's wrapped form) and the damaged lines of ftrace_hostile.sh's kind.
# Skips when clang or libFuzzer is absent. usage: fuzz_ftrace.sh SECONDS
. "$CSTRACE_SOURCE_DIR/tests/lib.sh"
. "$CSTRACE_SOURCE_DIR/tests/fuzz_lib.sh"
SECS=${1:-20}
S=$CSTRACE_SOURCE_DIR
fuzz_build "$TMP/fuzz" "$S"/capture/*.c "$S"/auxlog/*.c "$S"/perfdata/*.c "$S"/boards/*.c \
	"$S"/snapshot/*.c "$S"/source/*.c "$S"/common/*.c "$S/tests/capture/fuzz_ftrace.c" \
	-DCSTRACE_BOARDS_SRC_DIR="\"$S/boards\"" -DCSTRACE_BOARDS_INSTALL_DIR="\"/nonexistent\"" \
	-DCSTRACE_BUILD_DIR="\"/nonexistent\"" $(pkg-config --cflags --libs inih zlib libelf) -lm
mkdir -p "$TMP/corpus"
quiet "$CSTRACE" replay -q -o "$TMP/n.data" "$S/testdata/auxlog/normal.auxlog" || fail "replay"
export FUZZ_PERF=$TMP/n.data
for form in line wrapped; do
	python3 "$S/tests/capture/ftrace.py" "$TMP/n.data" 5 20 "$form" \
		"$TMP/corpus/$form" "$TMP/$form.data" >/dev/null || fail "ftrace.py $form"
	head -c 2000 "$TMP/corpus/$form" >"$TMP/corpus/$form.head"
done
hdr=' cstrace-42 [000] d... 100.000001:'
printf '%s aux_end: old_head=0x1000 size=0x2000\n%s aux_end: old_head=\n' "$hdr" "$hdr" \
	>"$TMP/corpus/keys"
printf '%s sched_waking: comm=c pid=42 prio=120 target_cpu=001\n%s sched_switch: prev_pid=1 next_pid=42\n' \
	"$hdr" "$hdr" >"$TMP/corpus/sched"
printf '%s tracing_mark_write: __auxtrace_mmap__read: old_offset=0x1000 head_offset=0x3000 size=0x2000\n' \
	"$hdr" >"$TMP/corpus/read"
fuzz_run "$TMP/fuzz" "$SECS" "$TMP/corpus" -max_len=16384
finish
