#!/usr/bin/env bash
# Snapshots as OpenCSD's own test snapshots write them: several buffers, one
# source each, every source naming the same core ("cpu_0=" once per source,
# which starts a new [core_trace_sources] in the ini reader). cstrace saw only
# the first, skipped the others as "not linked to a core", and a buffer without
# a source then failed the whole snapshot with no word (exit 1). Each buffer
# must decode to the elements trc_pkt_lister (OpenCSD 1.3.3) prints for it, and
# a snapshot that holds nothing decodable must say so in one error, exit 1.
. "$CSTRACE_SOURCE_DIR/tests/lib.sh"
command -v trc_pkt_lister >/dev/null || skip "trc_pkt_lister (libopencsd-bin) not installed"
sample=$CSTRACE_SOURCE_DIR/testdata/sample/a64-loop
s=$TMP/ms
mkdir -p "$s"
cp "$sample/cpu_0.ini" "$sample/mem_0.bin" "$s/"
# three buffers that differ: the whole trace (384 bytes), its first 192, and the
# trace twice over (the decoder finds sync again in the second)
cp "$sample/cstrace.bin" "$s/session1.bin"
head -c 192 "$sample/cstrace.bin" > "$s/session2.bin"
cat "$sample/cstrace.bin" "$sample/cstrace.bin" > "$s/session3.bin"
for i in 1 2 3; do
	sed "s/^name=.*/name=ETM_0_s$i/" "$sample/device_1.ini" > "$s/ETM_0_s$i.ini"
done
cat > "$s/snapshot.ini" <<'INI'
[snapshot]
version=1.0

[device_list]
device0=cpu_0.ini
device1=ETM_0_s1.ini
device2=ETM_0_s2.ini
device3=ETM_0_s3.ini

[trace]
metadata=trace.ini
INI
{
	printf '[trace_buffers]\nbuffers=buffer1,buffer2,buffer3\n\n'
	for i in 1 2 3; do printf '[buffer%d]\nname=ETB_%d\nfile=session%d.bin\nformat=coresight\n\n' $i $i $i; done
	printf '[source_buffers]\nETM_0_s1=ETB_1\nETM_0_s2=ETB_2\nETM_0_s3=ETB_3\n\n'
	printf '[core_trace_sources]\ncpu_0=ETM_0_s1\ncpu_0=ETM_0_s2\ncpu_0=ETM_0_s3\n'
} > "$s/trace.ini"

for i in 1 2 3; do
	# (it writes trc_pkt_lister.ppl where it runs)
	(cd "$TMP" && trc_pkt_lister -ss_dir "$s" -src_name "ETB_$i" -decode 2>/dev/null) |
		grep -aE '^Idx:[0-9]+; ID:[0-9a-f]+; OCSD_GEN_TRC_ELEM' > "$TMP/exp$i"
	"$CSTRACE" decode --format=elements --buffer "ETB_$i" "$s" > "$TMP/got$i" 2> "$TMP/err$i"
	rc=$?
	check "buffer ETB_$i: exit 0 (rc $rc: $(head -c 300 "$TMP/err$i"))" [ $rc -eq 0 ]
	check "buffer ETB_$i: trc_pkt_lister's $(wc -l < "$TMP/exp$i") elements" \
		sh -c 'test -s "$1" && cmp -s "$1" "$2"' _ "$TMP/exp$i" "$TMP/got$i"
	check "buffer ETB_$i: no source skipped" sh -c '! grep -q "not linked" "$1"' _ "$TMP/err$i"
done
check "the buffers differ" sh -c '! cmp -s "$1" "$2"' _ "$TMP/got1" "$TMP/got3"
"$CSTRACE" dump --buffer all "$s" > "$TMP/dump" 2> "$TMP/dumperr"
check "dump --buffer all: exit 0" [ $? -eq 0 ]
check "dump --buffer all: packets of each source" \
	test "$(grep -c I_ASYNC "$TMP/dump")" -ge 3

# nothing linked to a core: every source named, one error, exit 1
sed -i '/^cpu_0=/d' "$s/trace.ini"
for verb in decode dump; do
	"$CSTRACE" $verb "$s" > /dev/null 2> "$TMP/none.err"
	rc=$?
	check "no source linked, $verb: exit 1 (rc $rc)" [ $rc -eq 1 ]
	check "no source linked, $verb: one error saying so" \
		test "$(grep -c '^cstrace: error: .*trace.ini: no trace source cstrace can decode$' "$TMP/none.err")" -eq 1
	check "no source linked, $verb: each source named" test "$(grep -c 'not linked' "$TMP/none.err")" -eq 3
done
finish
