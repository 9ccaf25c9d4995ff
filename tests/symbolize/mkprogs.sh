#!/usr/bin/env bash
# Build the symbolize test programs into $1: A64, A32 and T32 variants with -g, and
# a stripped A64 copy whose debug info sits in $1/debug/.build-id/ by build-id.
set -eu
out=$1 src=$2
mkdir -p "$out"
a64=aarch64-linux-gnu arm=arm-linux-gnueabihf
if ! command -v $a64-gcc >/dev/null || ! command -v $arm-gcc >/dev/null; then
  echo "cross compilers missing: symbolize tests will skip" >&2
  : >"$out/.missing"; exit 0
fi
cflags="-g -O1 -fno-optimize-sibling-calls -Wl,--build-id"
$a64-gcc $cflags -o "$out/prog-a64" "$src"
$arm-gcc $cflags -marm -o "$out/prog-a32" "$src"
$arm-gcc $cflags -mthumb -o "$out/prog-t32" "$src"
# stripped + separate debug file found by build-id
$a64-objcopy --only-keep-debug "$out/prog-a64" "$out/prog-a64.debug"
$a64-strip -o "$out/prog-a64.stripped" "$out/prog-a64"
id=$($a64-readelf -n "$out/prog-a64" | sed -n 's/.*Build ID: *\([0-9a-f]*\).*/\1/p')
mkdir -p "$out/debug/.build-id/${id:0:2}"
cp "$out/prog-a64.debug" "$out/debug/.build-id/${id:0:2}/${id:2}.debug"
echo "$id" >"$out/prog-a64.buildid"
# stripped + .gnu_debuglink naming a debug file that sits beside it
mkdir -p "$out/linked"
$a64-strip -o "$out/linked/prog-a64" "$out/prog-a64"
cp "$out/prog-a64.debug" "$out/linked/prog-a64.dbg"
(cd "$out/linked" && $a64-objcopy --add-gnu-debuglink=prog-a64.dbg prog-a64)
rm -f "$out/.missing"
