# Shared by the libFuzzer runs (tests/*/fuzz_*.sh). Source it after tests/lib.sh.
#   fuzz_build OUT CLANG-ARGS...   build a target with libFuzzer, ASan and UBSan;
#                                  skips the test when clang or libFuzzer is absent
#   fuzz_run FUZZER SECS CORPUS [LIBFUZZER-ARGS...]
#                                  fuzz for SECS seconds, going on after crashes, then
#                                  replay each crash and blame it (below)
# A crash whose first frame in known code is OpenCSD's is upstream's (OpenCSD 1.3.3
# reads through bad pointers on some inputs; cstrace contains those with its crash
# isolation: tests decode_bad_input) and is counted; one in cstrace's own code fails
# the test, with its stack. A hang (timeout) or a run out of memory fails the test.
# Leaks: OpenCSD 1.3.3 leaks on every decode, so a per-input leak check would run
# (and symbolize, to match the suppression) on every input, a fifth of the speed;
# the fuzzing runs without, and then every input the corpus gained is run once more
# with LeakSanitizer on, which finds a leak of cstrace's on any of them.
CLANG=${CLANG:-clang}
FUZZ_SUPP="$CSTRACE_SOURCE_DIR/tests/lsan.supp"
FUZZ_ASAN_OPTIONS="detect_leaks=0:allocator_may_return_null=1"
# for the leak pass: only OpenCSD 1.3.3's own leak is suppressed, by name (which needs
# whole stacks on malloc: the fast unwinder stops in libstdc++'s operator new)
FUZZ_LEAK_OPTIONS="detect_leaks=1:fast_unwind_on_malloc=0:allocator_may_return_null=1"
export LSAN_OPTIONS="suppressions=$FUZZ_SUPP:print_suppressions=0"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"

fuzz_build() {
	local out=$1
	shift
	command -v "$CLANG" >/dev/null 2>&1 || skip "clang is not installed"
	if ! "$CLANG" -std=c11 -D_GNU_SOURCE -D_FILE_OFFSET_BITS=64 -g -O1 \
		-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
		-I"$CSTRACE_SOURCE_DIR/include" "$@" -o "$out" 2>"$TMP/cc.err"; then
		grep -q -i "fuzzer" "$TMP/cc.err" && skip "clang has no libFuzzer runtime (libclang-rt-dev)"
		cat "$TMP/cc.err" >&2
		fail "fuzzer does not build"
		finish
	fi
}

# fuzz_blame LOG: "ours", "upstream" or "unknown" from a sanitizer report's stack:
# the first frame in cstrace's sources or in an OpenCSD library decides.
fuzz_blame() {
	grep -E '^ +#[0-9]+ ' "$1" | while read -r line; do
		case "$line" in
		*libopencsd*) echo upstream; return ;;
		*"$CSTRACE_SOURCE_DIR"/*) echo ours; return ;;
		esac
	done | head -1
}

fuzz_run() {
	local fuzz=$1 secs=$2 corpus=$3 c who last ours=0 upstream=0
	shift 3
	mkdir -p "$TMP/crashes" "$TMP/work"
	checks=$((checks + 1))
	# TMPDIR: where targets that need files put them (gone with $TMP)
	env ASAN_OPTIONS="$FUZZ_ASAN_OPTIONS" TMPDIR="$TMP/work" "$fuzz" -fork=1 -ignore_crashes=1 \
		-ignore_timeouts=1 -ignore_ooms=1 -max_total_time="$secs" -timeout=10 \
		-rss_limit_mb=2048 -artifact_prefix="$TMP/crashes/" "$@" "$corpus" \
		>"$TMP/fuzz.log" 2>&1
	# the leak pass over the corpus (fork mode added what it found to it); it stops
	# at the first leak, which the replay below blames
	env ASAN_OPTIONS="$FUZZ_LEAK_OPTIONS" TMPDIR="$TMP/work" "$fuzz" -runs=0 -detect_leaks=1 \
		-timeout=10 -rss_limit_mb=2048 -artifact_prefix="$TMP/crashes/" "$@" "$corpus" \
		>"$TMP/leaks.log" 2>&1
	for c in "$TMP"/crashes/timeout-* "$TMP"/crashes/oom-*; do
		[ -f "$c" ] || continue
		fail "$(basename "$c" | cut -d- -f1) on an input ($(od -An -tx1 -N48 "$c" | tr -d '\n')...)"
		cp "$c" "${FUZZ_KEEP:-$TMP}/" 2>/dev/null
	done
	for c in "$TMP"/crashes/crash-* "$TMP"/crashes/leak-*; do
		[ -f "$c" ] || continue
		env ASAN_OPTIONS="$FUZZ_LEAK_OPTIONS" TMPDIR="$TMP/work" "$fuzz" "$c" >"$TMP/replay.log" 2>&1
		who=$(fuzz_blame "$TMP/replay.log")
		if [ "$who" = upstream ]; then
			upstream=$((upstream + 1))
		else
			ours=$((ours + 1))
			echo "crash ($who) on $(basename "$c"):" >&2
			grep -E 'ERROR|SUMMARY|runtime error|^ +#[0-9]+ ' "$TMP/replay.log" | head -16 >&2
			cp "$c" "${FUZZ_KEEP:-$TMP}/" 2>/dev/null
		fi
	done
	[ "$ours" -eq 0 ] || fail "$ours crashes in cstrace's own code (inputs kept in ${FUZZ_KEEP:-nowhere: set FUZZ_KEEP=DIR})"
	# fork mode's status lines: "#RUNS: cov: N ft: N corp: N exec/s N oom/timeout/crash: ..."
	last=$(grep -E '^#[0-9]+: cov: ' "$TMP/fuzz.log" | tail -1)
	[ -n "$last" ] || { tail -20 "$TMP/fuzz.log" >&2; fail "the fuzzer did not run"; }
	echo "fuzzed ${secs}s (${last%% ft:*}), corpus of $(ls "$corpus" | wc -l) leak-checked:" \
		"crashes inside OpenCSD 1.3.3: $upstream; in cstrace's code: $ours"
}
