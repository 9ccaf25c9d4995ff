# The boards and doctor verbs: help, listing, profile errors as one FILE:LINE line,
# the profile directory override, and doctor on this machine (no CoreSight here).
. "$CSTRACE_SOURCE_DIR/tests/lib.sh"
BOARDS="$CSTRACE_SOURCE_DIR/boards"

check "doctor --help" "$CSTRACE" doctor --help
"$CSTRACE" doctor --help | grep -q "Exit status" || fail "doctor --help lacks the exit statuses"; pass
check "boards --help" "$CSTRACE" boards --help
"$CSTRACE" boards --help | grep -q "missing-sink" || fail "boards --help lacks the faults"; pass
"$CSTRACE" --help | grep -q "^  doctor" || fail "doctor not in the command list"; pass

out=$("$CSTRACE" boards list --boards-dir "$BOARDS")
for b in stm32mp157 juno-r0 juno-r1 juno-r2; do
	checks=$((checks + 1)); printf '%s\n' "$out" | grep -q "^$b " || fail "boards list lacks $b"
done

out=$("$CSTRACE" boards show stm32mp157 --boards-dir "$BOARDS")
for re in "etm0 +0x500dc000 +ETMv3.5 +cpu0 Cortex-A7, trace ID 0x10" "etmidr +0x410cf250" \
	"etf +etf +0x50092000 +4 KiB +perf sink \(use this one\)" "CONFIG_CORESIGHT_SOURCE_ETM3X=y" \
	"stm32mp157-coresight.dtso needed before Linux 7.1" "\+-\[in 1\]-- etm etm0 @ 0x500dc000 \(cpu0\)" \
	"\+-\[in 0\]-- stm stm @ 0x500a0000"; do
	checks=$((checks + 1)); printf '%s\n' "$out" | grep -Eq -- "$re" || fail "boards show stm32mp157: no '$re'"
done
out=$("$CSTRACE" boards sources juno-r1 --cpu 1,2 --boards-dir "$BOARDS")
checks=$((checks + 1))
[ "$(printf '%s\n' "$out" | wc -l)" = 2 ] || fail "sources --cpu 1,2: not two lines: $out"
checks=$((checks + 1))
printf '%s\n' "$out" | grep -q "^etm_big0 cpu=1 core=Cortex-A57 protocol=ETMv4 .*trcidr1=0x4100f402 .*traceid=0x12$" \
	|| fail "sources: etm_big0 line wrong: $out"

# CSTRACE_BOARDS_DIR points the binary at another profile directory.
mkdir -p "$TMP/boards"
cp "$BOARDS/juno-r1.ini" "$TMP/boards/myboard.ini"
sed -i 's/^name = juno-r1/name = myboard/' "$TMP/boards/myboard.ini"
out=$(CSTRACE_BOARDS_DIR="$TMP/boards" "$CSTRACE" boards list)
checks=$((checks + 1)); [ "$out" = "myboard        Arm Juno r1: 2x Cortex-A57 + 4x Cortex-A53" ] || fail "CSTRACE_BOARDS_DIR: got '$out'"

# A malformed profile: one error line naming file and line, non-zero exit.
printf '[board]\nname = bad\n[etm e0]\nbase = 0x1000\ncpu = zero\n' > "$TMP/boards/bad.ini"
err=$("$CSTRACE" boards show bad --boards-dir "$TMP/boards" 2>&1 >/dev/null); rc=$?
checks=$((checks + 1)); [ $rc -ne 0 ] || fail "malformed profile: exit 0"
checks=$((checks + 1))
[ "$err" = "cstrace: error: $TMP/boards/bad.ini:5: cpu 'zero' is not a CPU number (0-63)" ] \
	|| fail "malformed profile: got '$err'"
# ... and does not hide the good ones from list.
out=$("$CSTRACE" boards list --boards-dir "$TMP/boards" 2>/dev/null)
checks=$((checks + 1)); printf '%s\n' "$out" | grep -q "^myboard " || fail "a bad profile hid myboard"

# Profiles that are not regular files are refused, not read: /dev/zero looped
# and /dev/urandom grew without bound in the profile reader.
mkdir "$TMP/odd"
for dev in /dev/zero /dev/urandom; do
	ln -sf "$dev" "$TMP/odd/dev.ini"
	err=$(timeout 20 "$CSTRACE" boards show dev --boards-dir "$TMP/odd" 2>&1 >/dev/null); rc=$?
	checks=$((checks + 1)); [ $rc -eq 1 ] || fail "profile is $dev: exit $rc"
	checks=$((checks + 1))
	[ "$err" = "cstrace: error: $TMP/odd/dev.ini: not a regular file (a device, FIFO or directory is not read)" ] \
		|| fail "profile is $dev: got '$err'"
done

# Usage errors
"$CSTRACE" boards fixture juno-r1 "$TMP/x" --fault no-such-fault 2>/dev/null; rc=$?
checks=$((checks + 1)); [ $rc = 2 ] || fail "unknown fault: exit $rc"
"$CSTRACE" doctor --board no-such-board --boards-dir "$BOARDS" 2>/dev/null; rc=$?
checks=$((checks + 1)); [ $rc = 2 ] || fail "unknown board: exit $rc"
"$CSTRACE" doctor extra-arg 2>/dev/null; rc=$?
checks=$((checks + 1)); [ $rc = 2 ] || fail "extra argument: exit $rc"

# A fixture tree appears whole, as its directory, or not at all: into a missing or
# empty directory (parents made); never over a directory that holds files (it was
# written into, leaving a mix), and nothing beside it afterwards.
check "fixture: into a new directory" quiet "$CSTRACE" boards fixture juno-r1 "$TMP/fx/a/b"
check "fixture: the tree is there" test -f "$TMP/fx/a/b/proc/device-tree/compatible"
mkdir -p "$TMP/fx/empty"
check "fixture: into an empty directory" quiet "$CSTRACE" boards fixture stm32mp157 "$TMP/fx/empty"
mkdir -p "$TMP/fx/full"
echo mine >"$TMP/fx/full/notes"
"$CSTRACE" boards fixture juno-r1 "$TMP/fx/full" >/dev/null 2>"$TMP/err"; rc=$?
check "fixture: over a directory with files: exit 1" test $rc -eq 1
check "fixture: ... says why: $(head -1 "$TMP/err")" \
	grep -q "^cstrace: $TMP/fx/full: cannot write the fixture tree: Directory not empty$" "$TMP/err"
check "fixture: ... its files untouched, nothing added" \
	bash -c "[ \"\$(ls -A '$TMP/fx/full')\" = notes ] && grep -qx mine '$TMP/fx/full/notes'"
check "fixture: no temporary tree left" bash -c "! ls '$TMP/fx' | grep -q tmp"

# This machine: no CoreSight, said plainly, non-zero exit.
if [ -d /sys/bus/coresight ] || [ -e /sys/bus/event_source/devices/cs_etm ]; then
	echo "note: this machine has CoreSight; skipping the no-CoreSight check"
else
	out=$("$CSTRACE" doctor 2>&1); rc=$?
	checks=$((checks + 1)); [ $rc = 3 ] || fail "doctor on this machine: exit $rc, expected 3"
	checks=$((checks + 1))
	printf '%s\n' "$out" | grep -Eq "^problem +coresight +CoreSight: this system has no CoreSight" \
		|| fail "doctor on this machine: $out"
	checks=$((checks + 1))
	printf '%s\n' "$out" | grep -q "^no CoreSight on this system" || fail "doctor: no plain summary"
	# Forced to a profile, it checks anyway and reports the missing pieces as problems.
	out=$("$CSTRACE" doctor --board juno-r1 --boards-dir "$BOARDS" 2>&1); rc=$?
	checks=$((checks + 1)); [ $rc = 1 ] || fail "doctor --board on this machine: exit $rc"
	# (a consequence of the kernel config when that lacks CoreSight: under it, "so")
	checks=$((checks + 1)); printf '%s\n' "$out" | grep -Eq "^(problem|  so) +pmu" || fail "doctor --board: no pmu problem"
fi
finish
