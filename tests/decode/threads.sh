#!/usr/bin/env bash
# --threads: every verb prints exactly what one thread prints (output, messages and
# exit status), for 2 to 4 threads and chunks small enough that small captures are
# cut many times; that the cutting did happen (decode --stats counts the chunks
# decoded apart, so the test cannot pass by never splitting); corrupt trace that
# needs resync, with a chunk boundary inside the corrupt bytes; and a decoder crash
# on threads, which must end as the crash of a one-thread run does.
. "$CSTRACE_SOURCE_DIR/tests/lib.sh"
. "$CSTRACE_SOURCE_DIR/tests/decode/threads_lib.sh"

ALL="decode --format=elements,decode --format=jsonl,decode,decode --format=none --stats,dump,script,report"
ALL+=",report -g" # the call model followed per stretch, its blocks checked by the caller
sample=$CSTRACE_SOURCE_DIR/testdata/sample/a64-loop
same a64-loop "$sample" "$ALL" "16 64 256"

# Random bytes between syncs as raw ETMv3: OpenCSD reports decoder errors, and on
# threads the buffer is then decoded as one thread decodes it (the errors' text
# comes from OpenCSD's one process-wide logger).
python3 - "$TMP/etmv3.bin" <<'PY'
import random, sys
random.seed(1)
out = bytearray()
for _ in range(40):
    out += bytes(5) + b'\x80' + bytes(11) + b'\x80' + bytes(random.randrange(256) for _ in range(200))
open(sys.argv[1], 'wb').write(out)
PY
"$CSTRACE" decode --format=none --raw-format raw --etmv3 traceid=0x10 --image "$TMP/etmv3.bin@0" \
  "$TMP/etmv3.bin" 2> "$TMP/etmv3.err"
check "etmv3 random: OpenCSD reports decoder errors: $(head -c 300 "$TMP/etmv3.err")" \
  grep -q "trace decoder error" "$TMP/etmv3.err"
same etmv3-random "$TMP/etmv3.bin" "decode --format=elements,decode --format=none --stats" "512 2K" \
  --raw-format raw --etmv3 traceid=0x10 --image "$TMP/etmv3.bin@0"

# A crash in OpenCSD on a worker thread: the run is taken again on one thread past
# what was printed, and ends exactly as a one-thread run (which resumes past the
# crash) ends.
crash=$CSTRACE_SOURCE_DIR/tests/decode/data/opencsd133-etmv4-crash.bin
same opencsd-crash "$crash" "decode --format=elements" "16 64K" \
  --raw-format raw --etmv4 traceid=0x10,trcconfigr=0xc1 --image "$crash@0"

if [ ! -d "$SHARED/opencsd" ]; then
  echo "note: shared captures not found at $SHARED/opencsd: only the in-tree trace tested"
  finish
fi
O=$SHARED/opencsd
# raw (unformatted) PTM with return stack; formatted ETMv4 of one ID; inaccessible
# memory; several IDs in one buffer (one chosen, or all: not split); STM; TPIU
# (not split); a single-step capture
same tc2-ptm-rstk-t32 "$O/tc2-ptm-rstk-t32" "$ALL" "256 1K 4K"
apart tc2-ptm-rstk-t32 5 4K "$O/tc2-ptm-rstk-t32"
same test-file-mem-offsets "$O/test-file-mem-offsets" "$ALL" "1K 4K"
apart test-file-mem-offsets 3 4K "$O/test-file-mem-offsets"
same juno-uname-001 "$O/juno-uname-001" "$ALL" "1K 4K"
apart juno-uname-001 2 4K "$O/juno-uname-001"
same juno_r1_1-0x10 "$O/juno_r1_1" "$ALL" "1K 4K" --id 0x10
apart juno_r1_1-0x10 4 4K "$O/juno_r1_1" --id 0x10
same juno_r1_1 "$O/juno_r1_1" "decode --format=elements,dump" "1K"
same TC2-0x13 "$O/TC2" "decode --format=elements,script" "256 4K" --id 0x13
same TC2-0x10 "$O/TC2" "decode --format=elements,report" "256 4K" --id 0x10
same stm_only "$O/stm_only" "decode --format=elements,dump" "256"
same a55-test-tpiu "$O/a55-test-tpiu" "decode --format=elements,dump" "1K"
same a57_single_step "$O/a57_single_step" "$ALL" "16 64"
same init-short-addr "$O/init-short-addr" "decode --format=elements,dump" "64"
# the largest: 1.7 million elements of one ID
same bugfix-exact-match "$O/bugfix-exact-match" "decode --format=elements" "16K" --id 0x12
apart bugfix-exact-match 12 64K "$O/bugfix-exact-match" --id 0x12
# eleven sources listed, one of them in the frames: split as one stream
same bugfix-all "$O/bugfix-exact-match" "decode --format=elements" "64K"
apart bugfix-all 12 64K "$O/bugfix-exact-match"

# Corrupt trace: random bytes over a chunk boundary (4096 for 1K and 4K chunks) of
# the raw PTM buffer: the decoder loses sync there, decodes garbage as code it
# cannot read, and finds sync again; a worker starting inside it must not be
# joined before the decoders agree.
cp -r "$O/tc2-ptm-rstk-t32" "$TMP/corrupt"
chmod -R u+w "$TMP/corrupt"
printf '\x6b\x21\xc3\x99\x0f\x55\xa7\x10%.0s' $(seq 24) |
  dd of="$TMP/corrupt/PTM_0_2.bin" bs=1 seek=4000 conv=notrunc status=none
"$CSTRACE" decode --format=none --stats --threads 1 "$TMP/corrupt" 2> "$TMP/corrupt.err"
"$CSTRACE" decode --format=none --stats --threads 1 "$O/tc2-ptm-rstk-t32" 2> "$TMP/clean.err"
check "corrupt: the bytes change the decode: $(head -c 300 "$TMP/corrupt.err")" \
  bash -c '! cmp -s "$0" "$1"' "$TMP/clean.err" "$TMP/corrupt.err"
same corrupt "$TMP/corrupt" "decode --format=elements,decode --format=none --stats,script" "1K 4K"
apart corrupt 3 1K "$TMP/corrupt"
# zeros over a boundary (no decoder error: lost sync, then sync found again)
cp -r "$O/tc2-ptm-rstk-t32" "$TMP/zeros"
chmod -R u+w "$TMP/zeros"
dd if=/dev/zero of="$TMP/zeros/PTM_0_2.bin" bs=1 seek=8000 count=400 conv=notrunc status=none
same zeros "$TMP/zeros" "decode --format=elements,decode --format=none --stats" "1K 4K"
apart zeros 3 4K "$TMP/zeros"
finish
