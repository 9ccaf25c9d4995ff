#!/usr/bin/env bash
# The fleet recipe of docs/symbolize.md, as written, over SSH: an sshd started
# here on 127.0.0.1 (a free port, its keys and configuration in the test's
# temporary directory, a throwaway client key; stopped at the end) stands for
# two hosts, and GNU parallel --sshlogin runs one report per capture on them,
# sending each capture with --transferfile and bringing the profile back with
# --return (rsync over ssh at both ends), then removing both there (--cleanup).
# `cstrace merge` of what the hosts returned must be byte for byte what one
# process makes of all the captures, one after another, then merged; and a
# capture changed in one count must not be.
. "$CSTRACE_SOURCE_DIR/tests/lib.sh"
progs=$CSTRACE_BUILD_DIR/testdata
sshd=$(command -v sshd || echo /usr/sbin/sshd)
[ -x "$sshd" ] || skip "sshd not installed (package openssh-server)"
for c in ssh ssh-keygen rsync parallel; do
  command -v $c >/dev/null || skip "$c not installed (scripts/setup.sh installs it)"
done
need_synth aarch64 "$progs/aarch64/recurse"
cd "$TMP" || exit 1

# the server: only on 127.0.0.1, keys and configuration here
dir=$TMP/ssh
mkdir -p "$dir" remote captures
chmod 700 "$dir"
ssh-keygen -q -t ed25519 -N '' -f "$dir/hostkey" || fail "host key"
ssh-keygen -q -t ed25519 -N '' -f "$dir/id" || fail "client key"
cp "$dir/id.pub" "$dir/authorized_keys"
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
cat >"$dir/sshd_config" <<EOF
ListenAddress 127.0.0.1
Port $port
HostKey $dir/hostkey
PidFile $dir/sshd.pid
AuthorizedKeysFile $dir/authorized_keys
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
PermitRootLogin prohibit-password
StrictModes no
UsePAM no
Subsystem sftp internal-sftp
EOF
# sshd running as root separates privileges into an empty directory of its own
# (the openssh-server package makes it at boot)
if [ "$(id -u)" -eq 0 ] && [ ! -d /run/sshd ]; then
  mkdir -p /run/sshd && chmod 755 /run/sshd
fi
"$sshd" -f "$dir/sshd_config" -E "$dir/sshd.log" || { cat "$dir/sshd.log"; skip "sshd does not start"; }
trap 'kill "$(cat "$dir/sshd.pid" 2>/dev/null)" 2>/dev/null; rm -rf "$TMP"' EXIT
cat >"$dir/config" <<EOF
Host host1 host2
  HostName 127.0.0.1
  Port $port
  User $(id -un)
  IdentityFile $dir/id
  IdentitiesOnly yes
  StrictHostKeyChecking no
  UserKnownHostsFile $dir/known_hosts
  BatchMode yes
  LogLevel ERROR
EOF
for _ in $(seq 50); do ssh -F "$dir/config" host1 true 2>/dev/null && break; sleep 0.1; done
check "ssh to the test's sshd" ssh -F "$dir/config" host1 true
check "... as another host name" ssh -F "$dir/config" host2 true

# four captures: three runs of one program, one of another
for i in 1 2 3; do
  check "synth $i" quiet "$CSTRACE" synth --arch aarch64 --out perf -o captures/c$i.data -- \
    "$progs/aarch64/recurse"
done
check "synth 4" quiet "$CSTRACE" synth --arch aarch64 --out perf -o captures/c4.data -- \
  "$progs/aarch64/fptr"

# the recipe as docs/symbolize.md writes it; the hosts are this machine, so
# cstrace is where it is here, and the work directory is the test's
recipe() { # format [report options]: over the captures in $set
  local fmt=$1; shift
  parallel --will-cite --ssh "ssh -F $dir/config" --sshlogin host1,host2 --workdir "$TMP/remote" \
    --transferfile {} --return {.}.$fmt --cleanup \
    "$CSTRACE" report --format=$fmt "$@" -o {.}.$fmt {} ::: $set
}
for fmt in profgen folded; do
  # a profgen profile is one binary's: the three captures of recurse
  extra=() set=captures/*.data n=4
  [ $fmt = profgen ] && extra=(--dso recurse) set="captures/c[123].data" n=3
  rm -f captures/*.$fmt
  check "$fmt: parallel --sshlogin host1,host2 runs a report per capture" quiet recipe $fmt "${extra[@]}"
  check "$fmt: each capture's profile came back" test "$(ls captures/*.$fmt | wc -l)" -eq $n
  check "$fmt: and nothing was left on the hosts (--cleanup)" test -z "$(find remote -type f)"
  check "$fmt: merge what the hosts returned" quiet "$CSTRACE" merge -o fleet.$fmt captures/*.$fmt
  # one process, one capture after another, then merged
  rm -rf local
  mkdir -p local
  for i in $(seq $n); do
    "$CSTRACE" report --format=$fmt "${extra[@]}" -o local/c$i.$fmt captures/c$i.data 2>/dev/null
  done
  check "$fmt: one process over all captures" quiet "$CSTRACE" merge -o local.$fmt local/*.$fmt
  check "$fmt: the fleet's merge equals it, byte for byte" cmp -s fleet.$fmt local.$fmt
  check "$fmt: (and it holds counts)" test "$(wc -l <fleet.$fmt)" -gt 5
done
# a host returning a different profile makes a different merge
sed -i '0,/^\([0-9a-f]*-[0-9a-f]*\):\([0-9]*\)$/s//\1:999999/' captures/c2.profgen
check "a changed capture: merge" quiet "$CSTRACE" merge -o changed.profgen captures/*.profgen
check "... differs from one process's" bash -c "! cmp -s changed.profgen local.profgen"
finish
