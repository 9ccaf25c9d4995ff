#!/usr/bin/env bash
# Trace IDs the file's metadata gets wrong: a CPU whose trace ID in AUXTRACE_INFO
# no frame carries, and a CPU that nr_cpu leaves out while its AUXTRACE records are
# there. perf 6.1 decodes neither CPU's trace; cstrace reads the IDs its frames
# carry, gives the CPU the one no other claims, or a copy of a recorded CPU's
# source, and warns naming the CPU, the IDs and the AUXTRACE record. A QEMU run
# with one CPU per guest thread is mutated with disown.py; each mutation decodes to
# the unmutated file's instructions (QEMU's), in both orders, on 1 to 4 threads.
# Where the frames do not say which ID is the CPU's, nothing is guessed: that
# trace is not decoded, and the warning says so.
# Usage: disowned_ids.sh ARCH PROG [synth options...] (PROG: one CPU per thread)
. "$CSTRACE_SOURCE_DIR/tests/lib.sh"
arch=$1; prog=$2; shift 2
need_synth "$arch" "$prog"
. "$CSTRACE_SOURCE_DIR/tests/decode/threads_lib.sh"
. "$CSTRACE_SOURCE_DIR/tests/perfdata/disowned_lib.sh"

disowned_base "$arch" "$prog" "$@"
[ -s "$TMP/truth.3" ] || fail "no CPU 3 in the run: the test needs four"
ring='AUXTRACE record \(cpu [0-9]+, [0-9]+ bytes in [0-9]+ buffers?\)'

mut "$TMP/base.data" "$TMP/id.data" traceid 2 0x30 > "$TMP/said"
disowned "CPU 2's trace ID wrong" "$TMP/id.data" "$TMP/base.data" "<" \
	"offset $(one auxtrace): ${ring/cpu \[0-9\]+/cpu 2}: AUXTRACE_INFO gives CPU 2 trace ID 0x30, which no frame carries; its frames carry $(one old), which no CPU claims: decoding them as CPU 2's \(perf skips them\)"

mut "$TMP/base.data" "$TMP/cpu.data" drop-cpu 3 > "$TMP/said"
disowned "CPU 3 left out of nr_cpu" "$TMP/cpu.data" "$TMP/base.data" "<" \
	"offset $(one auxtrace): ${ring/cpu \[0-9\]+/cpu 3}: AUXTRACE_INFO has no CPU 3 \(nr_cpu $(one nr_cpu)\); its frames carry trace ID $(one old), which no CPU claims: decoding them as CPU 3 with the registers of CPU 2 \(assumed the same; perf skips them\)"

# CPU 2 given CPU 3's ID: its own is carried by CPU 3's frames, so nothing says
# that 0x14 is CPU 2's: not decoded, as before, and said
id3=$(mut "$TMP/base.data" /dev/null drop-cpu 3 | sed -n 's/.*old=\([^ ]*\).*/\1/p')
mut "$TMP/base.data" "$TMP/amb.data" traceid 2 "$id3" > "$TMP/said"
for order in time file; do
	insns $order "$TMP/amb.data"
	n=$(wc -l < "$TMP/amb.data.$order.insn")
	want=$((qemu - $(wc -l < "$TMP/truth.2")))
	check "two CPUs with one ID, $order order: exit 0" [ "$(cat "$TMP/amb.data.$order.rc")" -eq 0 ]
	check "two CPUs with one ID, $order order: all but CPU 2's $want instructions ($n)" [ "$n" -eq "$want" ]
	check "two CPUs with one ID, $order order: said: $(head -c 400 "$TMP/amb.data.$order.err")" \
		grep -Eq "^cstrace: warning: $TMP/amb.data: offset $(one auxtrace): ${ring/cpu \[0-9\]+/cpu 2}: its frames carry trace ID $(one old), which no CPU of AUXTRACE_INFO claims: that trace cannot be decoded \(perf skips it too\)\$" \
		"$TMP/amb.data.$order.err"
done
same "two CPUs with one ID" "$TMP/amb.data" "decode --format=none --stats,script --raw --insn" "256"
$have_perf || echo "perf not installed: perf's counts not checked"
finish
