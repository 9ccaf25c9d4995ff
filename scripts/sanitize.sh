#!/usr/bin/env bash
# CI stage: the whole project and its tests built with AddressSanitizer and
# UndefinedBehaviorSanitizer (any undefined behaviour is fatal) into its own build
# directory, then every hostile-input test (ctest label "hostile": corrupt, truncated,
# mutated and extreme inputs) run on that build, LeakSanitizer on.
#   scripts/sanitize.sh [BUILD-DIR] [CTEST ARGS...]     (default build-sanitize)
# docs/testing.md says what runs and why the options below are set.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build-sanitize}
[ $# -eq 0 ] || shift
san="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer"
werror=OFF
[ "${CI:-}" = "true" ] && werror=ON
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCSTRACE_WERROR=$werror \
  -DCMAKE_C_FLAGS="$san" -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined" \
  ${CSTRACE_SHARED_TESTDATA:+-DCSTRACE_SHARED_TESTDATA="$CSTRACE_SHARED_TESTDATA"} >/dev/null
cmake --build "$build" -j"$(nproc)"
# LeakSanitizer on, with OpenCSD 1.3.3's own leak suppressed by name (tests/lsan.supp);
# naming it needs whole stacks on malloc, which the fast unwinder cannot give
# through libstdc++. cstrace's crash isolation (cli/isolate.c) contains OpenCSD's
# own crashes in a forked child with its own SIGSEGV handler: ASan must let it have
# that handler (allow_user_segv_handler) and not report the contained crash.
export ASAN_OPTIONS="detect_leaks=1:fast_unwind_on_malloc=0:allow_user_segv_handler=1:abort_on_error=0:detect_stack_use_after_return=0"
export LSAN_OPTIONS="suppressions=$PWD/tests/lsan.supp:print_suppressions=0"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
ctest --test-dir "$build" -L hostile -j"$(nproc)" --output-on-failure "$@"
