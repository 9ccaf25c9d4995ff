#!/usr/bin/env bash
# Bad input never crashes or hangs cstrace: each case must end (timeout), exit
# without a signal, print a one-line error naming the file (and the byte offset
# where one applies), and exit non-zero when nothing could be decoded.
. "$CSTRACE_SOURCE_DIR/tests/lib.sh"
need_shared
SRC=$SHARED/opencsd

# run NAME EXPECTED_RC PATTERN ARGS...: decode with ARGS; check rc and that stderr
# has a line matching PATTERN.
run() {
  local name=$1 want=$2 pat=$3; shift 3
  timeout "${limit:-120}" "$CSTRACE" decode --format=elements "$@" > "$TMP/out" 2> "$TMP/err"
  local rc=$?
  checks=$((checks + 1))
  if [ $rc -ge 124 ]; then fail "$name: crashed or hung (rc $rc)"; return; fi
  if [ "$want" != any ] && [ $rc -ne "$want" ]; then
    fail "$name: exit $rc, expected $want; stderr: $(head -c 400 "$TMP/err")"; return
  fi
  if ! grep -qE -- "$pat" "$TMP/err"; then
    fail "$name: stderr lacks /$pat/: $(head -c 400 "$TMP/err")"; return
  fi
}
copy() { rm -rf "$TMP/$2"; cp -r "$SRC/$1" "$TMP/$2"; chmod -R u+w "$TMP/$2"; }
rand() { python3 -c "import random,sys; random.seed($2); sys.stdout.buffer.write(bytes(random.getrandbits(8) for _ in range($1)))"; }

run "missing path" 1 "nosuch: No such file" "$TMP/nosuch"
copy a57_single_step a57
rm "$TMP/a57/snapshot.ini"
run "missing snapshot.ini" 1 "a57/snapshot.ini: cannot open" "$TMP/a57"

copy a57_single_step a57
printf 'this line is not ini\n' >> "$TMP/a57/snapshot.ini"
run "malformed snapshot.ini" 1 "a57/snapshot.ini:[0-9]+: malformed line" "$TMP/a57"

copy a57_single_step a57
head -c 3000 /dev/urandom > /dev/null
rand 4000 7 > "$TMP/a57/device2.ini"
run "binary device file" 1 "device2.ini:[0-9]+: malformed line|no trace source" "$TMP/a57"

copy a57_single_step a57
sed -i 's/^type=ETM4.*/type=FOO9/' "$TMP/a57/device2.ini"
run "unknown device type" 1 "device2.ini: device CSETM_0 has type 'FOO9'" "$TMP/a57"

copy a57_single_step a57
sed -i '/TRCIDR0(/d' "$TMP/a57/device2.ini"
run "missing register" 1 "device2.ini: register TRCIDR0 missing" "$TMP/a57"

copy a57_single_step a57
sed -i 's/^format=coresight/format=zigzag/' "$TMP/a57/trace.ini"
run "unknown buffer format" 1 "trace.ini: buffer format 'zigzag' unknown" "$TMP/a57"

copy a57_single_step a57
rm "$TMP/a57/CSTMC_TRACE_FIFO.bin"
run "missing buffer file" 1 "CSTMC_TRACE_FIFO.bin: cannot open trace buffer" "$TMP/a57"

copy a57_single_step a57
: > "$TMP/a57/CSTMC_TRACE_FIFO.bin"
run "empty buffer" 1 "CSTMC_TRACE_FIFO.bin: trace buffer is empty" "$TMP/a57"

copy a57_single_step a57
rm "$TMP/a57/CSTMC_TRACE_FIFO.bin"; mkdir "$TMP/a57/CSTMC_TRACE_FIFO.bin"
run "buffer is a directory" 1 "CSTMC_TRACE_FIFO.bin: not a regular file" "$TMP/a57"

# Inputs that are not regular files are refused, not read: an .ini that is
# /dev/urandom grew without bound, /dev/zero looped forever, a FIFO nobody
# writes would block the open. (20 s each: a hang fails quickly.)
mkfifo "$TMP/fifo"
limit=20
for dev in /dev/zero /dev/urandom "$TMP/fifo"; do
  copy a57_single_step a57
  ln -sf "$dev" "$TMP/a57/snapshot.ini"
  run "snapshot.ini is $dev" 1 "a57/snapshot.ini: cannot open: not a regular file" "$TMP/a57"
  copy a57_single_step a57
  rm "$TMP/a57/device2.ini"; ln -s "$dev" "$TMP/a57/device2.ini"
  run "device .ini is $dev" 1 "device2.ini: cannot open: not a regular file" "$TMP/a57"
  run "raw dump is $dev" 1 "$dev: not a regular file" --etmv4 traceid=0x10 "$dev"
  run "--image is $dev" 1 "$dev: cannot open memory image: not a regular file" \
    --etmv4 traceid=0x10 --image "$dev@0x400000" "$SRC/a57_single_step/CSTMC_TRACE_FIFO.bin"
done
unset limit

# A buffer whose size is not a whole number of frames: the whole frames decode
# exactly as before, the tail is reported with its offset.
copy a57_single_step a57
printf 'abcde' >> "$TMP/a57/CSTMC_TRACE_FIFO.bin"
run "buffer of wrong size" 0 "CSTMC_TRACE_FIFO.bin: offset 128: size 133 is not a whole number of 16-byte frames" "$TMP/a57"
"$CSTRACE" decode --format=elements "$SRC/a57_single_step" > "$TMP/clean" 2>/dev/null
check "wrong-size buffer still decodes its whole frames" cmp -s "$TMP/out" "$TMP/clean"

# Random bytes as trace, formatted and raw: never sync, never crash.
copy a57_single_step a57
rand 65536 1 > "$TMP/a57/CSTMC_TRACE_FIFO.bin"
run "random bytes as formatted trace" 1 "no trace decoded" "$TMP/a57"
rand 65536 2 > "$TMP/random.bin"
run "random raw dump, no source given" 1 "random.bin: not a snapshot directory or perf.data" "$TMP/random.bin"
run "random raw dump as ETMv4 frames" 1 "random.bin: no trace decoded" --etmv4 traceid=0x10 "$TMP/random.bin"
run "random raw dump as raw ETMv4" 1 "random.bin: no trace decoded" --raw-format raw --etmv4 traceid=0x10 "$TMP/random.bin"
run "random raw dump as ETMv3" 1 "random.bin: no trace decoded" --etmv3 traceid=0x10 "$TMP/random.bin"

# An input found by fuzzing that makes OpenCSD 1.3.3's ETMv4 decoder read through a
# bad pointer. cstrace must never die of a signal: it reports the crash with the
# file and byte offset, keeps what was printed before it (the dying child flushes
# its output), skips past the bad data and decodes on. (Should a fixed OpenCSD
# decode it without crashing, a normal run is fine too.)
crash=$CSTRACE_SOURCE_DIR/tests/decode/data/opencsd133-etmv4-crash.bin
timeout 60 "$CSTRACE" decode --format=elements --raw-format raw --etmv4 traceid=0x10,trcconfigr=0xc1 \
  --image "$crash@0" "$crash" > "$TMP/out" 2> "$TMP/err"
rc=$?
check "OpenCSD crash input: no signal (rc $rc)" [ $rc -lt 124 ]
if grep -q "crashed" "$TMP/err"; then
  check "OpenCSD crash input: the crash names the file and offset: $(head -c 300 "$TMP/err")" \
    grep -q "opencsd133-etmv4-crash.bin: the OpenCSD decoder crashed (signal [0-9]*) near byte [0-9]*" "$TMP/err"
  check "OpenCSD crash input: decoding resumes past it" grep -q "decoding resumes there" "$TMP/err"
  check "OpenCSD crash input: what was printed before the crash is kept" \
    grep -q "^Idx:0; ID:10; OCSD_GEN_TRC_ELEM_NO_SYNC" "$TMP/out"
  check "OpenCSD crash input: the run reaches the end of the trace" grep -q "EO_TRACE" "$TMP/out"
  check "OpenCSD crash input: blamed on OpenCSD, not reported as cstrace's bug" \
    bash -c '! grep -q "backtrace of the crash\|in its own code" "$0"' "$TMP/err"
fi
# A crash in cstrace's own code (made on purpose at byte 100 by a test hook, from
# an element callback that OpenCSD calls) is not OpenCSD's: reported as a bug in
# cstrace with the object and offset and a backtrace, never resumed past.
sample=$CSTRACE_SOURCE_DIR/testdata/sample/a64-loop
"$CSTRACE" decode "$sample" > "$TMP/whole" 2>/dev/null
CSTRACE_TEST_CRASH_AT=100 timeout 60 "$CSTRACE" decode "$sample" > "$TMP/out" 2> "$TMP/err"
check "crash in cstrace: exit 1" [ $? -eq 1 ]
check "crash in cstrace: named as cstrace's bug: $(tail -1 "$TMP/err" | head -c 300)" \
  grep -q "a64-loop: cstrace crashed (signal 11) in its own code (.*cstrace+0x[0-9a-f]*), not in OpenCSD: this is a bug" "$TMP/err"
check "crash in cstrace: a backtrace for the report" grep -q "^cstrace: backtrace of the crash:" "$TMP/err"
check "crash in cstrace: not resumed" bash -c '! grep -q "resumes there" "$0"' "$TMP/err"
check "crash in cstrace: the output before it is kept whole" \
  bash -c '[ -s "$0" ] && [ "$(head -n "$(wc -l < "$0")" "$1")" = "$(cat "$0")" ]' "$TMP/out" "$TMP/whole"
# the same with the packet listing
timeout 60 "$CSTRACE" dump --raw-format raw --etmv4 traceid=0x10 "$crash" > /dev/null 2> "$TMP/err"
rc=$?
check "OpenCSD crash input, dump: no signal (rc $rc)" [ $rc -lt 124 ]

# Corruption in the middle of a real buffer: decode resynchronises, reports the
# gap, and everything before the damage is exactly what the clean buffer gives.
copy juno_r1_1 juno
python3 - "$TMP/juno/cstrace.bin" <<'PY'
import random, sys
random.seed(3)
p = sys.argv[1]
b = bytearray(open(p, 'rb').read())
for i in range(4096, 4096 + 256):
    b[i] = random.getrandbits(8)
open(p, 'wb').write(b)
PY
"$CSTRACE" decode --format=elements "$SRC/juno_r1_1" > "$TMP/juno_clean" 2>/dev/null
timeout 120 "$CSTRACE" decode --format=elements --stats "$TMP/juno" > "$TMP/juno_bad" 2> "$TMP/err"
rc=$?
check "corrupt buffer: decodes (rc $rc)" [ $rc -eq 0 ]
check "corrupt buffer: gaps reported in stats" grep -qE "[1-9][0-9]* gaps" "$TMP/err"
# (elements of packets just before the damage may be emitted only once a later
# packet commits them, so the comparison stops 1 KiB short of it)
awk -F'[:;]' '$2 < 3072 && !/EO_TRACE/' "$TMP/juno_clean" > "$TMP/prefix_clean"
awk -F'[:;]' '$2 < 3072 && !/EO_TRACE/' "$TMP/juno_bad" > "$TMP/prefix_bad"
check "corrupt buffer: elements before the damage unchanged" cmp -s "$TMP/prefix_clean" "$TMP/prefix_bad"
check "corrupt buffer: a resync (NO_SYNC) after the damage" \
  awk -F'[:;]' '$2 >= 4096 && /NO_SYNC/ { found = 1 } END { exit !found }' "$TMP/juno_bad"
check "corrupt buffer: decoding resumes after the damage" \
  awk -F'[:;]' '$2 > 4352 && /INSTR_RANGE/ { found = 1 } END { exit !found }' "$TMP/juno_bad"

# Bad option values: usage errors, exit 2.
"$CSTRACE" decode --etmv4 trcidr0=zz "$TMP/random.bin" 2> "$TMP/err"; rc=$?
check "bad register value: exit 2" [ $rc -eq 2 ]
check "bad register value: message" grep -q "trcidr0=zz': value is not a number" "$TMP/err"
"$CSTRACE" decode --etmv4 bogus=1 "$TMP/random.bin" 2> "$TMP/err"; rc=$?
check "unknown register: message" grep -q "unknown register 'bogus'" "$TMP/err"
"$CSTRACE" decode --image nofile "$TMP/random.bin" 2> "$TMP/err"; rc=$?
check "bad --image: exit 2" [ $rc -eq 2 ]
"$CSTRACE" decode --id 0x99 "$TMP/random.bin" 2> "$TMP/err"; rc=$?
check "bad --id: exit 2" [ $rc -eq 2 ]
# A snapshot naming files outside its directory (other tools write absolute and
# ../ paths): read, with each such file named once in a warning; --confine
# refuses it (dump once printed the bytes of any readable file named so).
rm -rf "$TMP/out-snap" "$TMP/elsewhere"
cp -r "$CSTRACE_SOURCE_DIR/testdata/sample/a64-loop" "$TMP/out-snap"
chmod -R u+w "$TMP/out-snap"
mkdir -p "$TMP/elsewhere"
mv "$TMP/out-snap/cstrace.bin" "$TMP/out-snap/mem_0.bin" "$TMP/elsewhere/"
sed -i 's|^file=cstrace.bin|file=../elsewhere/cstrace.bin|' "$TMP/out-snap/trace.ini"
sed -i "s|^file=mem_0.bin|file=$TMP/elsewhere/mem_0.bin|" "$TMP/out-snap/cpu_0.ini"
"$CSTRACE" decode "$CSTRACE_SOURCE_DIR/testdata/sample/a64-loop" > "$TMP/in.txt" 2>/dev/null
"$CSTRACE" decode "$TMP/out-snap" > "$TMP/outside.txt" 2> "$TMP/err"
check "outside files: decoded as before" cmp -s "$TMP/in.txt" "$TMP/outside.txt"
check "outside files: the buffer is named once" \
  test "$(grep -c 'trace.ini: reads ../elsewhere/cstrace.bin, outside the snapshot directory' "$TMP/err")" -eq 1
check "outside files: the memory dump is named once" \
  test "$(grep -c "cpu_0.ini: reads $TMP/elsewhere/mem_0.bin, outside the snapshot directory" "$TMP/err")" -eq 1
for v in decode dump report; do
  "$CSTRACE" $v --confine "$TMP/out-snap" > "$TMP/confined" 2> "$TMP/err"
  check "--confine, $v: refused, exit 1" [ $? -eq 1 ]
  check "--confine, $v: nothing printed" [ ! -s "$TMP/confined" ]
  check "--confine, $v: says which file and why: $(head -1 "$TMP/err")" \
    grep -q "names .*elsewhere/.*, outside the snapshot directory: refused" "$TMP/err"
done
"$CSTRACE" decode --confine "$CSTRACE_SOURCE_DIR/testdata/sample/a64-loop" > "$TMP/confined" 2>/dev/null
check "--confine: a snapshot that stays inside decodes as before" cmp -s "$TMP/in.txt" "$TMP/confined"
# Names that stay inside but are symlinks out of the directory (the buffer, a memory
# dump, a device file, snapshot.ini itself): --confine resolves them and refuses
# (it read through them). A symlink that stays inside is fine.
for f in cstrace.bin mem_0.bin cpu_0.ini snapshot.ini; do
  rm -rf "$TMP/sym-snap" "$TMP/sym-out"
  cp -r "$CSTRACE_SOURCE_DIR/testdata/sample/a64-loop" "$TMP/sym-snap"
  chmod -R u+w "$TMP/sym-snap"
  mkdir -p "$TMP/sym-out"
  mv "$TMP/sym-snap/$f" "$TMP/sym-out/$f"
  ln -s "../sym-out/$f" "$TMP/sym-snap/$f"
  for v in decode dump; do
    "$CSTRACE" $v --confine "$TMP/sym-snap" > "$TMP/confined" 2> "$TMP/err"
    check "--confine, $v, $f a symlink out: refused, exit 1" [ $? -eq 1 ]
    check "--confine, $v, $f a symlink out: nothing printed" [ ! -s "$TMP/confined" ]
    check "--confine, $v, $f a symlink out: says which and where it goes: $(head -1 "$TMP/err")" \
      grep -q "names $TMP/sym-snap/$f, which resolves to .*sym-out/$f, outside the snapshot directory: refused" "$TMP/err"
  done
  "$CSTRACE" decode "$TMP/sym-snap" > "$TMP/unconfined" 2>/dev/null
  check "$f a symlink out, not confined: decoded as before" cmp -s "$TMP/in.txt" "$TMP/unconfined"
done
mkdir -p "$TMP/sym-snap/data"
mv "$TMP/sym-snap/mem_0.bin" "$TMP/sym-snap/data/mem_0.bin"
ln -s data/mem_0.bin "$TMP/sym-snap/mem_0.bin"
rm "$TMP/sym-snap/snapshot.ini"
cp "$CSTRACE_SOURCE_DIR/testdata/sample/a64-loop/snapshot.ini" "$TMP/sym-snap/"
"$CSTRACE" decode --confine "$TMP/sym-snap" > "$TMP/confined" 2>/dev/null
check "--confine: a symlink that stays inside decodes as before" cmp -s "$TMP/in.txt" "$TMP/confined"
# A raw dump decoded with a source of the wrong trace ID: the error names the IDs
# its frames carry (it said only "never found sync"). The sample's ETM is 0x10.
regs=trcconfigr=0x41,trcidr0=0x28000EA1,trcidr1=0x4100F403,trcidr2=0x488,core=Cortex-A53
"$CSTRACE" decode --etmv4 "traceid=0x12,$regs" "$sample/cstrace.bin" > /dev/null 2> "$TMP/err"
check "wrong trace ID: exit 1" [ $? -eq 1 ]
check "wrong trace ID: the IDs the frames carry are named: $(head -c 300 "$TMP/err")" \
  grep -q "cstrace.bin: no trace decoded: the decoder never found sync in [0-9]* bytes; its frames carry trace IDs 0x10 " "$TMP/err"
"$CSTRACE" decode --etmv4 "traceid=0x10,$regs" "$sample/cstrace.bin" > "$TMP/right" 2>/dev/null
check "the right trace ID decodes" grep -q "instr_range\|0x" "$TMP/right"
# A frame sync in the last bytes of a DSTREAM block: OpenCSD 1.3.3 answers with a
# fatal error and claims 21 bytes of the 8 it was given. Believing it wrapped the
# bytes left and fed OpenCSD a read past the window (found by a mutation
# campaign; AddressSanitizer sees it). The rest of the trace decodes.
copy a55-test-tpiu dsclaim
python3 - "$TMP/dsclaim/DSTREAM_0.bin" <<'PY'
import sys
p = sys.argv[1]
b = bytearray(open(p, 'rb').read()[:52 * 512])
b[26097:26101] = b'\xff\xff\xff\x7f'
open(p, 'wb').write(b)
PY
# (no code image: no instruction is decoded, exit 1 as on every verb)
run "DSTREAM sync that OpenCSD over-claims" 1 \
  "DSTREAM_0.bin: offset [0-9]+: the trace decoder claimed 21 bytes of the 8 it was given" "$TMP/dsclaim"
# (the capture has no code image: its elements are contexts and gaps)
check "DSTREAM over-claim: decoding went on past it" grep -q "^Idx:25712; ID:1; OCSD_GEN_TRC_ELEM_NO_SYNC( \[reset-decoder\])" "$TMP/out"
timeout 120 "$CSTRACE" dump "$TMP/dsclaim" > /dev/null 2> "$TMP/err"
check "DSTREAM over-claim: dump exits 0" [ $? -eq 0 ]
check "DSTREAM over-claim: dump says it" grep -q "claimed 21 bytes of the 8" "$TMP/err"
finish
