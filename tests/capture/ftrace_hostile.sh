#!/usr/bin/env bash
# cstrace aux --ftrace on damaged text: every key the reader looks for left without
# a value at the end of a line (old_head= there once made the reader search past the
# line's NUL, a heap overflow under ASan), and real event lines cut at every byte.
# Each run ends with exit 0 or 1 and at most an error line naming the file; in the
# sanitizer stage (label hostile) any read out of bounds ends the run with a report.
. "$CSTRACE_SOURCE_DIR/tests/lib.sh"
san() { grep -qE 'AddressSanitizer|runtime error|LeakSanitizer' "$1"; }
run() { # DESC FILE
	"$CSTRACE" aux --ftrace "$2" >"$TMP/out" 2>"$TMP/err"
	local rc=$?
	checks=$((checks + 1))
	if san "$TMP/err" || [ "$rc" -gt 1 ]; then
		fail "$1: exit $rc: $(grep -m3 -E 'ERROR|runtime error|#[0-3] ' "$TMP/err" | tr '\n' ' ')"
	elif [ "$rc" -eq 1 ] && ! grep -q "$2" "$TMP/err"; then
		fail "$1: exit 1 without naming the file: $(head -1 "$TMP/err")"
	fi
}
hdr=' cstrace-42 [000] d... 100.000001:'
# each key with nothing after it, ending a line of each kind (one file per key and
# separator: the lines are events of their own)
for key in old_head new_head size old_offset head_offset pid target_cpu next_pid; do
	for sep in '=' ': ' '=  '; do
		{
			printf '%s aux_end: %s%s\n' "$hdr" "$key" "$sep"
			printf '%s aux_end: old_head=0x1000 %s%s\n' "$hdr" "$key" "$sep"
			printf '%s aux_read: old_offset=0 %s%s\n' "$hdr" "$key" "$sep"
			printf '%s sched_waking: comm=x %s%s\n' "$hdr" "$key" "$sep"
			printf '%s sched_switch: prev_pid=1 %s%s\n' "$hdr" "$key" "$sep"
		} >"$TMP/k.txt"
		run "lines ending in '$key$sep'" "$TMP/k.txt"
	done
done
# a line of each kind cut at every byte, the cuts one after another (one cut short
# of its header continues the event above it, as a wrapped line would)
n=0
for line in \
	"$hdr aux_end: (perf_aux_output_end+0x0/0x60) old_head=0x1000 size=0x2000" \
	"$hdr tracing_mark_write: __auxtrace_mmap__read: old_offset=0x1000 head_offset=0x3000 size=0x2000" \
	"$hdr sched_waking: comm=cstrace pid=42 prio=120 target_cpu=001" \
	"$hdr sched_switch: prev_comm=a prev_pid=1 ==> next_comm=b next_pid=42"; do
	for i in $(seq 1 ${#line}); do printf '%s\n' "${line:0:i}"; done >"$TMP/cut$n.txt"
	run "'$line' cut at every byte" "$TMP/cut$n.txt"
	n=$((n + 1))
done
finish
