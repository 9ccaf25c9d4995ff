#!/usr/bin/env bash
# Regenerate testdata/sample/a64-loop: build testdata/src/a64_loop.c for AArch64 and
# synthesize its ETMv4 trace under QEMU. Usage: make-a64-loop.sh [path/to/cstrace]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cstrace=${1:-$here/../../build/cstrace}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
aarch64-linux-gnu-gcc -O1 -fno-inline -nostdlib -static -Wl,--build-id \
	-o "$tmp/a64_loop" "$here/../src/a64_loop.c"
rm -rf "$here/a64-loop"
"$cstrace" synth --arch aarch64 --core cortex-a53 -o "$here/a64-loop" -- "$tmp/a64_loop"
