#!/usr/bin/env bash
# Snapshots written by other tools decode the same: keys and sections in any case,
# CRLF line ends, absolute paths, memory dumps listed once per core, and several
# [dump] sections of the same name in a row.
. "$CSTRACE_SOURCE_DIR/tests/lib.sh"
need_shared
SRC=$SHARED/opencsd
copy() { rm -rf "$TMP/$2"; cp -r "$SRC/$1" "$TMP/$2"; chmod -R u+w "$TMP/$2"; }
same() { # NAME DIR REF_DIR
  "$CSTRACE" decode --format=elements "$3" > "$TMP/ref" 2>/dev/null
  local want=$?
  "$CSTRACE" decode --format=elements "$2" > "$TMP/got" 2> "$TMP/err"
  local rc=$?
  # juno-uname-001 decodes no instruction (its code images are missing on
  # purpose): exit 1, as its original; the elements are the same
  check "$1: exit as the original's, $want (rc $rc: $(head -c 300 "$TMP/err"))" [ $rc -eq $want ]
  check "$1: same elements as the original" cmp -s "$TMP/ref" "$TMP/got"
  check "$1: some elements decoded" [ -s "$TMP/got" ]
}

copy juno-uname-001 up
for f in "$TMP"/up/*.ini; do
  # upper-case section names and keys, leave values (file names) alone
  awk -F'=' -v OFS='=' '/^\[/ { print toupper($0); next }
                         /=/ { $1 = toupper($1); print; next } { print }' "$f" > "$f.new"
  mv "$f.new" "$f"
done
same "upper-case keys" "$TMP/up" "$SRC/juno-uname-001"

copy juno-uname-001 crlf
for f in "$TMP"/crlf/*.ini; do sed -i 's/$/\r/' "$f"; done
same "CRLF line ends" "$TMP/crlf" "$SRC/juno-uname-001"

copy juno-uname-001 abs
sed -i "s|^file=|file=$TMP/abs/|" "$TMP"/abs/*.ini
same "absolute paths" "$TMP/abs" "$SRC/juno-uname-001"

# the same dumps listed by a second core: mapped once, same decode
copy juno-uname-001 dup
sed 's/name=cpu_0/name=cpu_1/' "$TMP/dup/cpu_0.ini" > "$TMP/dup/cpu_1.ini"
sed 's/name=ETM_0/name=ETM_1/; s/TRCTRACEIDR(0x010)=0x00000010/TRCTRACEIDR(0x010)=0x00000011/' \
  "$TMP/dup/device_6.ini" > "$TMP/dup/device_7.ini"
sed -i 's/^device6=device_6.ini/device6=device_6.ini\ndevice7=cpu_1.ini\ndevice8=device_7.ini/' "$TMP/dup/snapshot.ini"
sed -i 's/^ETM_0=ETB_0/ETM_0=ETB_0\nETM_1=ETB_0/; s/^cpu_0=ETM_0/cpu_0=ETM_0\ncpu_1=ETM_1/' "$TMP/dup/snapshot.ini" "$TMP/dup/trace.ini"
# (the second source has no trace: only its end-of-trace element is added)
"$CSTRACE" decode --format=elements "$TMP/dup" > "$TMP/got" 2> "$TMP/err"
"$CSTRACE" decode --format=elements "$SRC/juno-uname-001" > "$TMP/ref" 2>/dev/null
check "dumps listed once per core: same elements" cmp -s "$TMP/ref" <(grep -v '; ID:11; ' "$TMP/got")
check "dumps listed once per core: a missing dump is reported once" \
  [ "$(grep -c 'libc-2.21.so.bin.*is missing' "$TMP/err")" -eq 1 ]
check "dumps listed once per core: no mapping warning" bash -c "! grep -q 'cannot map' '$TMP/err'"

# [dump] sections of the same name in a row stay separate dumps
copy juno-uname-001 samename
sed -i 's/^\[dump[0-9]*\]/[dump]/' "$TMP/samename/cpu_0.ini"
same "repeated [dump] sections" "$TMP/samename" "$SRC/juno-uname-001"

# snapshot.ini given instead of its directory
same "path to snapshot.ini" "$SRC/juno-uname-001/snapshot.ini" "$SRC/juno-uname-001"
finish
