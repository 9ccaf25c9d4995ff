#!/usr/bin/env bash
# The decode and dump verbs: formats, ID and buffer selection, raw dumps given on
# the command line, and packet listings checked against trc_pkt_lister's.
. "$CSTRACE_SOURCE_DIR/tests/lib.sh"
need_shared
SRC=$SHARED/opencsd

check "decode --help" bash -c "'$CSTRACE' decode --help | grep -q 'usage: cstrace decode'"
check "dump --help" bash -c "'$CSTRACE' dump --help | grep -q 'usage: cstrace dump'"
"$CSTRACE" decode 2>/dev/null; check "decode without TRACE: exit 2" [ $? -eq 2 ]
"$CSTRACE" frobnicate 2>/dev/null; check "unknown verb: exit 2" [ $? -eq 2 ]

# jsonl: one valid object per element, same count and order as the elements format
"$CSTRACE" decode --format=jsonl "$SRC/juno_r1_1" > "$TMP/j" 2>/dev/null
"$CSTRACE" decode --format=elements "$SRC/juno_r1_1" > "$TMP/e" 2>/dev/null
check "jsonl: one line per element" [ "$(wc -l < "$TMP/j")" -eq "$(wc -l < "$TMP/e")" ]
check "jsonl: valid JSON, offsets and IDs as in the elements format" python3 - "$TMP/j" "$TMP/e" <<'PY'
import json, re, sys
js = [json.loads(l) for l in open(sys.argv[1])]
es = [re.match(r'Idx:(\d+); ID:([0-9a-f]+); OCSD_GEN_TRC_ELEM_(\w+)', l).groups() for l in open(sys.argv[2])]
assert len(js) == len(es)
for j, (idx, tid, kind) in zip(js, es):
    assert j["offset"] == int(idx) and j["trace_id"] == int(tid, 16), (j, idx, tid)
    if kind == "INSTR_RANGE":
        assert j["type"] == "instr_range" and j["end"] > j["start"] and j["insns"] > 0
PY

# Addresses above 2^63 (juno_r1_1 traces the kernel) are unsigned, as in the
# elements format: they were negative ("start":-274877289984).
check "jsonl: kernel addresses unsigned, as in the elements format" python3 - "$TMP/j" "$TMP/e" <<'PY'
import json, re, sys
js = [json.loads(l) for l in open(sys.argv[1])]
es = [re.search(r'range=0x([0-9a-f]+):\[0x([0-9a-f]+)\]', l) for l in open(sys.argv[2])]
kernel = 0
for j, m in zip(js, es):
    assert all(v >= 0 for v in j.values() if isinstance(v, int) and not isinstance(v, bool)), j
    if j["type"] == "instr_range" and m:
        assert (j["start"], j["end"]) == (int(m.group(1), 16), int(m.group(2), 16)), (j, m.group(0))
        kernel += j["start"] >= 1 << 63
assert kernel > 1000, kernel
PY

# CPU numbers come from the traced core devices (cpu_N): on TC2, PTM_0 traces
# cpu_3, so its trace ID 0x13 is CPU 3, not 0; DS-5 core names give no CPU.
check "jsonl: CPUs from [core_trace_sources]" python3 - "$CSTRACE" "$SRC" <<'PY'
import json, subprocess, sys
def cpus(snap):
    out = subprocess.run([sys.argv[1], "decode", "--format=jsonl", sys.argv[2] + "/" + snap],
                         capture_output=True, text=True).stdout
    m = {}
    for line in out.splitlines():
        j = json.loads(line)
        m[j["trace_id"]] = j.get("cpu")
    return m
assert cpus("TC2") == {0x10: 0, 0x11: 1, 0x12: 2, 0x13: 3, 0x14: 4}, cpus("TC2")
assert set(cpus("tc2-ptm-rstk-t32").values()) == {None}
PY

# text: one range line per INSTR_RANGE element, and --stats totals agree
"$CSTRACE" decode --stats "$SRC/juno_r1_1" > "$TMP/t" 2> "$TMP/stats"
n_text=$(grep -c ' range ' "$TMP/t")
n_elem=$(grep -c 'INSTR_RANGE' "$TMP/e")
check "text: range lines ($n_text) == INSTR_RANGE elements ($n_elem)" [ "$n_text" -eq "$n_elem" ]
check "stats: ranges total" grep -q " $n_elem ranges" "$TMP/stats"

# --id selects trace IDs
"$CSTRACE" decode --format=elements --id 0x11 "$SRC/juno_r1_1" > "$TMP/id" 2>/dev/null
check "--id 0x11: only ID 11" bash -c "[ -s '$TMP/id' ] && ! grep -qv 'ID:11;' '$TMP/id'"
grep 'ID:11;' "$TMP/e" > "$TMP/e11"
check "--id 0x11: same elements as unfiltered ID 11" cmp -s "$TMP/e11" "$TMP/id"

# --buffer: the second buffer of juno_r1_1 carries STM
"$CSTRACE" decode --format=elements --buffer ETB_1 "$SRC/juno_r1_1" > "$TMP/b1" 2>/dev/null
check "--buffer ETB_1: STM elements" grep -q "SWTRACE" "$TMP/b1"
"$CSTRACE" decode --format=elements --buffer all "$SRC/juno_r1_1" > "$TMP/ball" 2>/dev/null
check "--buffer all: both buffers" [ "$(wc -l < "$TMP/ball")" -eq $(( $(wc -l < "$TMP/e") + $(wc -l < "$TMP/b1") )) ]
"$CSTRACE" decode --buffer nosuch "$SRC/juno_r1_1" 2> "$TMP/err" >/dev/null
check "--buffer nosuch: error names it" grep -q "no trace buffer named 'nosuch'" "$TMP/err"

# A raw sink dump with the source given on the command line decodes exactly as
# the snapshot that describes it.
a57=$SRC/a57_single_step
"$CSTRACE" decode --format=elements \
  --etmv4 trcconfigr=0x1,traceid=0x10,trcidr0=0x08000CA1,trcidr1=0x4200F410,trcidr2=0x20001088,core=Cortex-A57 \
  --image "$a57/mem_Cortex-A57_0.bin@0xFFFEB448" "$a57/CSTMC_TRACE_FIFO.bin" > "$TMP/raw" 2> "$TMP/err"
check "raw dump decodes (rc $?): $(head -c 200 "$TMP/err")" [ -s "$TMP/raw" ]
"$CSTRACE" decode --format=elements "$a57" > "$TMP/snap" 2>/dev/null
check "raw dump == snapshot decode" cmp -s "$TMP/raw" "$TMP/snap"

# --board: a raw ETB dump of the Juno r1 decodes with the profile's registers; CPU 0
# (trace ID 0x10 under the legacy policy) gives exactly the snapshot's elements.
j=$SRC/juno_r1_1
"$CSTRACE" decode --format=elements --board juno-r1 --image "$j/kernel_dump.bin@0xFFFFFFC000081000" \
  "$j/cstrace.bin" > "$TMP/board" 2> "$TMP/err"
check "--board juno-r1: decodes (rc $?): $(head -c 200 "$TMP/err")" grep -q "ID:10; OCSD_GEN_TRC_ELEM_INSTR_RANGE" "$TMP/board"
check "--board juno-r1: CPU 0 as in the snapshot" cmp -s <(grep "ID:10;" "$TMP/board") <(grep "ID:10;" "$TMP/e")
"$CSTRACE" decode --board nosuch "$j/cstrace.bin" 2> "$TMP/err"; rc=$?
check "--board nosuch: exit 2" [ $rc -eq 2 ]
check "--board nosuch: names the profile" grep -q "no board profile 'nosuch'" "$TMP/err"

# A TPIU stream (frame syncs, no alignment): the DSTREAM capture with its 8-byte
# block footers taken out, given as a raw dump, lists the same packets.
a55=$SRC/a55-test-tpiu
python3 - "$a55/DSTREAM_0.bin" "$TMP/a55.tpiu" <<'PY'
import sys
d = open(sys.argv[1], 'rb').read()
open(sys.argv[2], 'wb').write(b''.join(d[i:i + 504] for i in range(0, len(d), 512)))
PY
"$CSTRACE" dump --raw-format tpiu \
  --etmv4 trcconfigr=0x1,traceid=0x1,trcidr0=0x08000CA1,trcidr1=0x4200F410,trcidr2=0x20001088,core=Cortex-A55 \
  "$TMP/a55.tpiu" > "$TMP/tpiu" 2> "$TMP/err"
"$CSTRACE" dump "$a55" > "$TMP/dstream" 2>/dev/null
check "TPIU raw dump: packets listed: $(head -c 200 "$TMP/err")" [ "$(wc -l < "$TMP/tpiu")" -gt 1000 ]
check "TPIU raw dump == DSTREAM snapshot packets" cmp -s "$TMP/tpiu" "$TMP/dstream"

# dump of ETE: OpenCSD's C API has no packet callback for ETE, so the listing goes
# through its printer; the a57 stream read as ETE still starts with an A-sync.
"$CSTRACE" dump --ete traceid=0x10,core=ARMv9.0-A "$a57/CSTMC_TRACE_FIFO.bin" > "$TMP/ete" 2> "$TMP/err"
check "dump --ete: packets listed: $(head -c 200 "$TMP/err")" \
  grep -q "^Idx:0; ID:10; \[0x00 0x00 0x00 0x00 0x00 0x00 0x00 0x00 0x00 0x00 0x00 0x80 \];.I_ASYNC" "$TMP/ete"
check "dump --ete: trace info with offset 12" grep -q "^Idx:12; ID:10; \[0x01 0x00 \];.I_TRACE_INFO" "$TMP/ete"

# dump: the packet lines equal trc_pkt_lister's (from its full listings)
for snap in a57_single_step TC2 init-short-addr juno_r1_1; do
  full=$SRC/expected-full/$snap.ppl.xz
  [ -s "$full" ] || continue
  xz -dc "$full" | grep -a '^Idx:[0-9]*; ID:[0-9a-f]*; \[' > "$TMP/pexp"
  "$CSTRACE" dump "$SRC/$snap" > "$TMP/pgot" 2>/dev/null
  check "dump $snap: $(wc -l < "$TMP/pgot") packets, as trc_pkt_lister lists them" cmp -s "$TMP/pexp" "$TMP/pgot"
  if ! cmp -s "$TMP/pexp" "$TMP/pgot"; then diff "$TMP/pexp" "$TMP/pgot" | head -5 >&2; fi
done
# -o: the file appears whole and only when decoding succeeded; an input is never
# overwritten (decode -o X X once emptied X before reading it)
cp "$a57/CSTMC_TRACE_FIFO.bin" "$TMP/fifo.bin"
"$CSTRACE" decode --ete traceid=0x10,core=ARMv9.0-A -o "$TMP/fifo.bin" "$TMP/fifo.bin" 2> "$TMP/err"
check "decode -o INPUT INPUT: refused" [ $? -ne 0 ]
check "decode -o INPUT INPUT: says why" grep -q "is the input" "$TMP/err"
check "decode -o INPUT INPUT: the input is intact" cmp -s "$a57/CSTMC_TRACE_FIFO.bin" "$TMP/fifo.bin"
"$CSTRACE" decode "$SRC/juno_r1_1" > "$TMP/stdout" 2>/dev/null
"$CSTRACE" decode -o "$TMP/dec.out" "$SRC/juno_r1_1" 2>/dev/null
check "decode -o: the same bytes as standard output" cmp -s "$TMP/stdout" "$TMP/dec.out"
echo previous > "$TMP/dec.out"
yes "not trace" | head -c 4096 > "$TMP/noise.bin"
"$CSTRACE" decode --ete traceid=0x10,core=ARMv9.0-A -o "$TMP/dec.out" "$TMP/noise.bin" 2>/dev/null
check "decode -o of data that never syncs: exit 1" [ $? -eq 1 ]
check "decode -o that failed: the previous file is untouched" [ "$(cat "$TMP/dec.out")" = previous ]
check "decode -o that failed: no temporary left" bash -c '! ls "$0"/dec.out.tmp.* 2>/dev/null' "$TMP"
finish
