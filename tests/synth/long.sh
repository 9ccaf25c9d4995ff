#!/usr/bin/env bash
# synth long run: millions of instructions through the encoder; OpenCSD's packet
# processor (trc_pkt_lister -pkt_mon) must see no bad packets, periodic syncs must be
# there, and the decode must still equal QEMU's run. Usage: long.sh ARCH PROG COUNT
. "$CSTRACE_SOURCE_DIR/tests/lib.sh"
here=$(cd "$(dirname "$0")" && pwd)
. "$here/synth_run.sh"
synth_long_run "$1" "$2" "$3"
cat "$TMP/stats"
n=$(wc -l < "$TMP/truth")
[ "$n" -ge 1000000 ] || fail "only $n instructions: not a long run"
if command -v trc_pkt_lister >/dev/null; then
	(cd "$TMP" && trc_pkt_lister -ss_dir snap -pkt_mon -logfilename pkts.txt >/dev/null 2>&1)
	bad=$(grep -cE 'ERROR|BAD_|RESERVED|NOTSYNC|I_NOT_SYNC|Malformed' "$TMP/pkts.txt")
	[ "$bad" -eq 0 ] || { fail "$bad packet errors"; grep -m5 -E 'ERROR|BAD_|RESERVED|NOTSYNC|Malformed' "$TMP/pkts.txt"; }
	syncs=$(grep -cE 'I_ASYNC|A_SYNC' "$TMP/pkts.txt")
	bytes=$(stat -c %s "$TMP/snap/cstrace.bin")
	echo "$syncs A-sync packets in $bytes bytes"
	[ "$syncs" -ge $((bytes / 8192)) ] || fail "too few periodic syncs ($syncs for $bytes bytes)"
	pass
else
	echo "trc_pkt_lister not installed: packet check skipped"
fi
check "decode runs" sh -c '"$0" decode "$1" --format=jsonl > "$2"' "$CSTRACE" "$TMP/snap" "$TMP/dec.jsonl"
check "decode equals QEMU" python3 "$here/compare.py" --truth "$TMP/truth" --jsonl "$TMP/dec.jsonl" \
	--snapshot "$TMP/snap"
finish
