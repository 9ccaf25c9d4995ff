# Shared helpers for script tests. Source it: . "$CSTRACE_SOURCE_DIR/tests/lib.sh"
set -u
CSTRACE=${CSTRACE:?CSTRACE must name the cstrace binary}
SHARED=${CSTRACE_SHARED_TESTDATA:-$CSTRACE_SOURCE_DIR/../shared/testdata}
fails=0
checks=0
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

skip() { echo "SKIP: $*"; exit 77; }
fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }
pass() { checks=$((checks + 1)); }
# check DESC CMD...: run CMD, count a failure if it exits non-zero.
check() { local d=$1; shift; checks=$((checks + 1)); if ! "$@"; then fail "$d"; fi; }
# quiet CMD...: run CMD with its output kept in $TMP/stdout.log and stderr.log.
quiet() { "$@" >>"$TMP/stdout.log" 2>>"$TMP/stderr.log"; }
need_shared() { [ -d "$SHARED/opencsd" ] || skip "shared captures not found at $SHARED/opencsd"; }
# need_synth ARCH PROG: what a test of a synth run needs (PROG built by the cross
# compiler, QEMU for ARCH, python3 for the comparisons), or skip it
need_synth() {
  local q=qemu-aarch64
  [ "$1" = arm ] && q=qemu-arm
  [ -x "$2" ] || skip "test program $2 not built (cross compiler missing?)"
  command -v $q >/dev/null || skip "$q not installed"
  command -v python3 >/dev/null || skip "python3 not installed"
}
# scribble IN OUT: OUT is IN with 2,000 random bytes (the same each run) over its
# middle: in a perf.data, corrupt trace that decoders must resync after
scribble() {
  python3 -c 'import random, sys
random.seed(1)
b = bytearray(open(sys.argv[1], "rb").read())
for i in range(2000):
    b[len(b) // 2 + i] = random.randrange(256)
open(sys.argv[2], "wb").write(b)' "$1" "$2"
}
finish() { echo "$checks checks, $fails failed"; [ "$fails" -eq 0 ]; exit $?; }
