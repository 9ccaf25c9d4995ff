#!/usr/bin/env bash
# ETMv3 exceptions that cancel the last traced instruction, which QEMU's runs never
# make: PROG's SVCs are synthesized, then each exception's cancel bit is set
# (set_cancel.py). cstrace's ETMv3 decoder must give OpenCSD's elements (OpenCSD
# 1.3.3 takes back the last instruction only after a one-atom P-header), and
# script and report on threads, where the decoder joins a P-header's instructions
# into runs, what one thread with OpenCSD's decoder gives.
# Usage: cancel.sh PROG (an armhf program that makes system calls)
. "$CSTRACE_SOURCE_DIR/tests/lib.sh"
. "$CSTRACE_SOURCE_DIR/tests/decode/threads_lib.sh"
here=$(cd "$(dirname "$0")" && pwd)
prog=$1
need_synth arm "$prog"

check "synth runs" "$CSTRACE" synth --arch arm -o "$TMP/snap" -- "$prog"
"$CSTRACE" dump "$TMP/snap" > "$TMP/dump" 2>/dev/null
n=$(python3 "$here/set_cancel.py" "$TMP/snap/cstrace.bin" "$TMP/dump" "$TMP/cancel.bin")
check "exceptions found to cancel (${n:-none})" [ "${n:-0}" -gt 5 ]
cp -r "$TMP/snap" "$TMP/canc"
cp "$TMP/cancel.bin" "$TMP/canc/cstrace.bin"
check "OpenCSD's packets say each cancels" \
	[ "$("$CSTRACE" dump "$TMP/canc" 2>/dev/null | grep -c 'Exception=.*Cancel prev instr')" -eq "$n" ]

insns() { # TRACE [ARGS]: the instructions decode counts
	"$CSTRACE" decode --format=none --stats --threads 1 "$@" 2>&1 |
		sed -n 's/.* ranges, \([0-9]*\) instructions,.*/\1/p'
}
before=$(insns "$TMP/snap")
after=$(insns "$TMP/canc")
check "cancels take instructions back ($before before, $after after)" \
	sh -c '[ "$0" -gt 0 ] && [ "$0" -lt "$1" ]' "${after:-0}" "${before:-0}"

"$CSTRACE" decode --format=jsonl --threads 1 --decoder=opencsd "$TMP/canc" > "$TMP/ocsd"
"$CSTRACE" decode --format=jsonl --threads 1 --decoder=cstrace "$TMP/canc" > "$TMP/own" 2>&1
check "cstrace's decoder gives OpenCSD's elements: $(diff "$TMP/ocsd" "$TMP/own" | head -4)" \
	cmp -s "$TMP/ocsd" "$TMP/own"

# On threads, by cstrace's decoder, in chunks that cut the trace between cancels.
"$CSTRACE" decode --format=none --stats --threads 2 --chunk-size 4K "$TMP/canc" \
	> /dev/null 2> "$TMP/stats"
check "threads: chunks by cstrace's decoder: $(tail -1 "$TMP/stats")" \
	grep -q "chunks, .*, [1-9][0-9]* by cstrace's own decoder" "$TMP/stats"
# (one thread decodes with OpenCSD's decoder: the reference)
same cancel "$TMP/canc" "script,report" "4K"
finish
