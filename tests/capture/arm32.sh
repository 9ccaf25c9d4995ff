# The ring consumer on a 32-bit Arm build (its aux_head reads are two 32-bit loads there),
# run under qemu-arm against the kernel model: the same checks as capture_ring_model.
. "$CSTRACE_SOURCE_DIR/tests/lib.sh"
CC=arm-linux-gnueabihf-gcc
command -v $CC >/dev/null || skip "$CC not installed"
command -v qemu-arm >/dev/null || skip "qemu-arm not installed"
S=$CSTRACE_SOURCE_DIR
check "32-bit build" $CC -std=c11 -D_GNU_SOURCE -D_FILE_OFFSET_BITS=64 -O1 -Wall -Wextra -Werror \
  -Wno-unused-parameter -static -I "$S/include" -I "$S/tests" -o "$TMP/ring32" \
  "$S/capture/ring.c" "$S/tests/capture/kmodel.c" "$S/tests/capture/test_ring_model.c" \
  "$S"/common/*.c -lpthread
if [ -x "$TMP/ring32" ]; then
  check "model tests pass on 32-bit Arm" qemu-arm -L /usr/arm-linux-gnueabihf "$TMP/ring32"
fi
finish
