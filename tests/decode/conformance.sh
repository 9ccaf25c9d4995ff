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
if [ ! -s "$TMP/expected" ]; then
  # Packet-level captures (no memory images, or DSTREAM framing): the reference is
  # the packet lines of the full listing; compare `cstrace dump` with them, raw
  # bytes left out as the listings made without a packet monitor leave them out.
  full=$SHARED/opencsd/expected-full/$name.ppl.xz
  [ -s "$full" ] || skip "no expected elements or packets for $name"
  norm() { sed -E 's/^(Idx:[0-9]+; ID:[0-9a-f]+;) \[[^]]*\];/\1/'; }
  # (trc_pkt_lister prints a packet error on the same line, before the packet)
  xz -dc "$full" | grep -aoE "Idx:[0-9]+; ID:[0-9a-f]+;( \\[|$(printf '\t')).*" | norm > "$TMP/expected"
  "$CSTRACE" dump "$dir" 2> "$TMP/err" | norm > "$TMP/got"
  check "$name: dump decodes packets: $(head -c 300 "$TMP/err")" [ -s "$TMP/got" ]
  check "$name: packets equal trc_pkt_lister's ($(wc -l < "$TMP/expected") expected, $(wc -l < "$TMP/got") got)" \
    cmp -s "$TMP/expected" "$TMP/got"
  echo "$name: $(wc -l < "$TMP/got") packets"
  finish
fi
"$CSTRACE" decode --format=elements "$dir" > "$TMP/got" 2> "$TMP/err"
rc=$?
# one rule on every verb: nothing decoded (no instruction, no software trace, as
# in juno-uname-001, whose code images are missing on purpose) is exit 1 with one
# line saying why; the elements are printed all the same
if grep -qE "OCSD_GEN_TRC_ELEM_(INSTR_RANGE|SWTRACE)" "$TMP/expected"; then
  check "decode exits 0 (got $rc: $(head -c 300 "$TMP/err"))" [ $rc -eq 0 ]
else
  check "nothing decoded: exit 1 (got $rc) saying why" \
    bash -c "[ $rc -eq 1 ] && [ \$(grep -c ': no instructions decoded: ' '$TMP/err') -eq 1 ]"
fi
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
# Where OpenCSD prints an STM master and channel as unknown, the text and JSON say
# so too (they printed what OpenCSD's packet held there, different run to run).
unknown=$(grep -c 'Ma:0x??' "$TMP/expected")
if [ "$unknown" -gt 0 ]; then
  "$CSTRACE" decode "$dir" > "$TMP/text" 2>/dev/null
  "$CSTRACE" decode --format=jsonl "$dir" > "$TMP/jsonl" 2>/dev/null
  check "$name: $unknown swtrace IDs unknown in the text too" \
    [ "$(grep -c 'swtrace  master=? channel=?' "$TMP/text")" = "$unknown" ]
  check "$name: and left out of the JSON" \
    [ "$(grep '"type":"swtrace"' "$TMP/jsonl" | grep -vc '"master"')" = "$unknown" ]
fi
echo "$name: $(wc -l < "$TMP/got") elements"
finish
