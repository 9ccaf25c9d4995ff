#!/usr/bin/env bash
# synth exact ground truth: run PROG under QEMU, synthesize a snapshot, decode it with
# cstrace and with OpenCSD's trc_pkt_lister: both must equal QEMU's instruction stream.
# Usage: exact.sh ARCH PROG [ARGS...]; SYNTH_OPTS adds synth options (--timestamps is
# then also checked: timestamps present and never going backwards); SYNTH_SAYS is a
# warning synth must give (without it, synth must not say that threads shared a vCPU).
. "$CSTRACE_SOURCE_DIR/tests/lib.sh"
here=$(cd "$(dirname "$0")" && pwd)
arch=$1; prog=$2; shift 2
need_synth "$arch" "$prog"

check "synth runs" "$CSTRACE" synth --arch "$arch" ${SYNTH_OPTS:-} -o "$TMP/snap" --truth "$TMP/truth" \
	--keep-log "$TMP/qemu.log" -- "$prog" "$@" 2> "$TMP/synth.err"
[ -s "$TMP/truth" ] || { fail "no ground truth written"; finish; }
if [ -n "${SYNTH_SAYS:-}" ]; then
	check "synth says: $SYNTH_SAYS ($(head -c 300 "$TMP/synth.err"))" \
		grep -qxF "cstrace: warning: $SYNTH_SAYS" "$TMP/synth.err"
else
	check "synth says no threads shared a vCPU" bash -c '! grep -q "vCPUs" "$0"' "$TMP/synth.err"
fi
check "cstrace decode" sh -c '"$0" decode "$1" --format=jsonl > "$2"' "$CSTRACE" "$TMP/snap" "$TMP/dec.jsonl"
# cstrace's own decoders (ETMv4, ETMv3) give OpenCSD's elements on every program
"$CSTRACE" decode "$TMP/snap" --format=jsonl --threads 1 --decoder=opencsd > "$TMP/ocsd.jsonl" 2>&1
"$CSTRACE" decode "$TMP/snap" --format=jsonl --threads 1 --decoder=cstrace > "$TMP/own.jsonl" 2>&1
check "cstrace's decoder gives OpenCSD's elements: $(diff "$TMP/ocsd.jsonl" "$TMP/own.jsonl" | head -3)" \
	cmp -s "$TMP/ocsd.jsonl" "$TMP/own.jsonl"
# one ground truth per guest thread (vCPU K: truth.K), one trace ID each (0x10 + 2K)
truths() { for t in "$TMP"/truth "$TMP"/truth.[0-9]*; do [ -f "$t" ] && echo "$t"; done; }
idof() { local k=${1##*/truth}; k=${k#.}; printf '0x%x' $((0x10 + 2 * ${k:-0})); }
for t in $(truths); do
	check "cstrace decode equals QEMU (${t##*/})" python3 "$here/compare.py" --truth "$t" \
		--jsonl "$TMP/dec.jsonl" --snapshot "$TMP/snap" --trace-id "$(idof "$t")"
done
# guest threads: each trace ID carries one context ID, and no two the same
# (PID_IN_CONTEXTIDR: the thread's ID); also from QEMU's log with every decimal
# syscall result taken out, where synth knows no thread's ID and says so
one_id_each() {
	python3 -c '
import json, sys
ids = {}
for l in open(sys.argv[1]):
    e = json.loads(l)
    if e["type"] == "pe_context" and "context_id" in e:
        ids.setdefault(e["trace_id"], set()).add(e["context_id"])
print({hex(t): sorted(v) for t, v in sorted(ids.items())})
one = [next(iter(v)) for v in ids.values() if len(v) == 1]
sys.exit(0 if len(ids) == int(sys.argv[2]) and len(set(one)) == len(ids) else 1)' "$@"
}
n=$(truths | wc -l)
if [ "$n" -gt 1 ]; then
	check "$n threads, one context ID each" one_id_each "$TMP/dec.jsonl" "$n"
	sed -E 's/ = [0-9]+$//' "$TMP/qemu.log" > "$TMP/noids.log"
	check "synth from a log without thread IDs" sh -c 'c=$0 a=$1 o=$2 l=$3 e=$4; shift 4
		"$c" synth --arch "$a" -o "$o" --from-log "$l" -- "$@" 2> "$e"' "$CSTRACE" "$arch" \
		"$TMP/noids.snap" "$TMP/noids.log" "$TMP/noids.err" "$prog" "$@"
	check "... says which threads have no known ID" \
		test "$(grep -c 'no thread ID is known' "$TMP/noids.err")" -eq $((n - 1))
	"$CSTRACE" decode --format=jsonl "$TMP/noids.snap" > "$TMP/noids.jsonl"
	check "... and still gives each its own context ID" one_id_each "$TMP/noids.jsonl" "$n"
fi
case " ${SYNTH_OPTS:-} " in *" --core cortex-a57 "*)
	check "the snapshot describes a Cortex-A57 ETM" grep -q "TRCIDR1(0x079)=0x4100F402" "$TMP/snap/device_1.ini"
	check "the snapshot's core is a Cortex-A57" grep -q "type=Cortex-A57" "$TMP/snap/cpu_0.ini" ;;
esac
case " ${SYNTH_OPTS:-} " in *" --timestamps "*)
	check "timestamps present and monotonic" python3 -c '
import json, sys
ts = [json.loads(l)["timestamp"] for l in open(sys.argv[1]) if "\"timestamp\"" in l]
print("%d timestamps" % len(ts))
sys.exit(0 if ts and all(a <= b for a, b in zip(ts, ts[1:])) else 1)' "$TMP/dec.jsonl" ;;
esac
if command -v trc_pkt_lister >/dev/null; then
	(cd "$TMP" && trc_pkt_lister -ss_dir snap -decode_only -logfilename lister.txt >/dev/null 2>&1)
	for t in $(truths); do
		check "trc_pkt_lister decode equals QEMU (${t##*/})" python3 "$here/compare.py" \
			--truth "$t" --lister "$TMP/lister.txt" --snapshot "$TMP/snap" --trace-id "$(idof "$t")"
	done
fi
finish
