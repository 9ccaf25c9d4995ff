#!/usr/bin/env bash
# Conformance: `cstrace decode --format=elements` on a real capture must equal the
# elements OpenCSD 1.3.3's trc_pkt_lister printed for it, line for line.
# The only tolerated difference is 1.3.3's quirk of printing some ADDR_NACC lines
# twice in a row: if the outputs differ, they are compared again with adjacent
# duplicate ADDR_NACC lines collapsed, and only that difference is accepted.
. "$CSTRACE_SOURCE_DIR/tests/lib.sh"
name=$1
need_shared
dir=$SHARED/opencsd/$name
exp=$SHARED/opencsd/expected/$name.elements.xz
[ -d "$dir" ] || skip "snapshot $name not in $SHARED/opencsd"
[ -s "$exp" ] || skip "no expected elements for $name"

xz -dc "$exp" > "$TMP/expected"
[ -s "$TMP/expected" ] || skip "expected elements for $name are empty (packet-level capture)"
"$CSTRACE" decode --format=elements "$dir" > "$TMP/got" 2> "$TMP/err"
rc=$?
check "decode exits 0 (got $rc: $(head -c 300 "$TMP/err"))" [ $rc -eq 0 ]
if cmp -s "$TMP/expected" "$TMP/got"; then
  pass
else
  collapse() { awk '!(/OCSD_GEN_TRC_ELEM_ADDR_NACC/ && $0 == prev) { print } { prev = $0 }' "$1"; }
  if cmp -s <(collapse "$TMP/expected") <(collapse "$TMP/got"); then
    echo "note: outputs differ only in duplicated ADDR_NACC lines (OpenCSD 1.3.3 quirk)"
    pass
  else
    diff "$TMP/expected" "$TMP/got" | head -20 >&2
    fail "$name: elements differ from trc_pkt_lister's ($(wc -l < "$TMP/expected") expected, $(wc -l < "$TMP/got") got)"
  fi
fi
echo "$name: $(wc -l < "$TMP/got") elements"
finish
