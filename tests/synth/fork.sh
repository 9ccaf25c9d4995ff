#!/usr/bin/env bash
# A program that forks (testdata/src/forker.c: the child calls child_work 300
# times, then a thread thread_work 200 times, then the parent parent_work 100
# times). QEMU's user mode runs the child in a QEMU process of its own.
# - With the TCG plugin (AArch64): the trace is the parent's alone, its thread on
#   vCPU 1, the child untraced and said so; the fork is no thread (no vCPU shared,
#   no stand-in ID). Before, the child went on writing the parent's stream with
#   IDs the parent handed out too, and the fork counted as a thread.
# - From the exec log (both architectures): the child's instructions cannot be
#   told from the parent's there, so synth refuses, in one line, and writes
#   nothing. Before, the child's were traced as the parent's.
# Usage: fork.sh ARCH PROG
. "$CSTRACE_SOURCE_DIR/tests/lib.sh"
here=$(cd "$(dirname "$0")" && pwd)
arch=$1 prog=$2
need_synth "$arch" "$prog"
addr() { nm "$prog" | awk -v f="$1" '$3 == f {print "0x" $1}' | python3 -c 'import sys; print(hex(int(sys.stdin.read(), 16)))'; }
# how often a truth file holds the function's first instruction
entries() { python3 -c 'import sys; a = int(sys.argv[2], 16); print(sum(1 for l in open(sys.argv[1]) if l.strip() and int(l.split()[0], 16) == a))' "$1" "$(addr "$2")"; }

if [ "$arch" = aarch64 ]; then
	check "plugin: synth runs" sh -c '"$0" synth --arch aarch64 --plugin -o "$1" --truth "$2" -- "$3" 2> "$4" > "$5"' \
		"$CSTRACE" "$TMP/p.snap" "$TMP/truth" "$prog" "$TMP/p.err" "$TMP/p.out"
	check "plugin: says the child went untraced: $(head -c 300 "$TMP/p.err")" \
		grep -q "^cstrace: warning: .*forker forked 1 time: .*the trace is the parent's alone" "$TMP/p.err"
	check "plugin: the fork made no thread (no vCPU shared): $(head -c 300 "$TMP/p.err")" \
		bash -c '! grep -q "vCPUs" "$0"' "$TMP/p.err"
	check "plugin: two guest threads, two truths" test -s "$TMP/truth" -a -s "$TMP/truth.1" -a ! -e "$TMP/truth.2"
	for t in truth truth.1; do
		n=$(entries "$TMP/$t" child_work)
		check "plugin: the child's calls are in no truth ($t: $n)" [ "$n" = 0 ]
	done
	n=$(entries "$TMP/truth.1" thread_work); check "plugin: the thread's 200 calls on vCPU 1 ($n)" [ "$n" = 200 ]
	n=$(entries "$TMP/truth" parent_work); check "plugin: the parent's 100 calls on vCPU 0 ($n)" [ "$n" = 100 ]
	n=$(entries "$TMP/truth" thread_work); check "plugin: none of the thread's on vCPU 0 ($n)" [ "$n" = 0 ]
	check "plugin: decode" sh -c '"$0" decode "$1" --format=jsonl > "$2"' "$CSTRACE" "$TMP/p.snap" "$TMP/p.jsonl"
	check "plugin: decode equals the truth (vCPU 0)" python3 "$here/compare.py" --truth "$TMP/truth" \
		--jsonl "$TMP/p.jsonl" --snapshot "$TMP/p.snap" --trace-id 0x10
	check "plugin: decode equals the truth (vCPU 1)" python3 "$here/compare.py" --truth "$TMP/truth.1" \
		--jsonl "$TMP/p.jsonl" --snapshot "$TMP/p.snap" --trace-id 0x12
	# the plugin names each vCPU's thread: the context IDs are the program's own
	# IDs (before, the thread got a stand-in, with a warning)
	check "plugin: no stand-in thread ID: $(head -c 300 "$TMP/p.err")" \
		bash -c '! grep -q "no thread ID is known" "$0"' "$TMP/p.err"
	ids=$(python3 -c '
import json, sys
ids = {}
for l in open(sys.argv[1]):
    e = json.loads(l)
    if e["type"] == "pe_context" and "context_id" in e:
        ids.setdefault(e["trace_id"], set()).add(e["context_id"])
print(" ".join("%d" % min(ids.get(t, {0})) if len(ids.get(t, ())) == 1 else "?" for t in (0x10, 0x12)))' "$TMP/p.jsonl")
	said=$(sed -n 's/^forker: process \([0-9]*\) thread \([0-9]*\)$/\1 \2/p' "$TMP/p.out")
	check "plugin: context IDs ($ids) are the process's and its thread's ($said)" \
		[ -n "$said" -a "$ids" = "$said" ]
fi

"$CSTRACE" synth --arch "$arch" -o "$TMP/e.snap" --keep-log "$TMP/e.log" -- "$prog" 2> "$TMP/e.err"
rc=$?
check "exec log: synth fails (exit $rc)" [ "$rc" != 0 ]
check "exec log: one line naming the program and the fork: $(head -c 400 "$TMP/e.err")" \
	sh -c '[ "$(wc -l < "$0")" = 1 ] && grep -q "^cstrace: synth: .*/forker forked (1 clone() call without CLONE_THREAD): " "$0"' "$TMP/e.err"
check "exec log: no snapshot, no log kept" [ ! -e "$TMP/e.snap" -a ! -e "$TMP/e.log" ]
# the same from a log made before (--from-log): the log is named
qemu=qemu-aarch64
[ "$arch" = arm ] && qemu=qemu-arm
check "a log made by QEMU alone" "$qemu" -d exec,nochain,page,strace,in_asm -D "$TMP/k.log" "$prog"
"$CSTRACE" synth --arch "$arch" -o "$TMP/f.snap" --from-log "$TMP/k.log" -- "$prog" 2> "$TMP/f.err"
rc=$?
check "--from-log: synth fails (exit $rc) naming the log: $(head -c 400 "$TMP/f.err")" \
	sh -c '[ "$0" != 0 ] && grep -q "^cstrace: synth: $1: .*/forker forked (1 clone() call" "$2"' "$rc" "$TMP/k.log" "$TMP/f.err"
check "--from-log: no snapshot" [ ! -e "$TMP/f.snap" ]
finish
