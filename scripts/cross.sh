#!/usr/bin/env bash
# Cross build cstrace for the boards and run it under QEMU user mode (as root on
# Debian 12; docs/building.md).
#   scripts/cross.sh ARCH                  install what the build needs, build build-ARCH/cstrace
#   scripts/cross.sh ARCH run -- ARGS...   run build-ARCH/cstrace ARGS under QEMU
#   scripts/cross.sh ARCH test [CTEST...]  build, then run the tests that can run under
#                                          QEMU (ctest -LE host-only) on build-ARCH
# ARCH is arm64 (Arm Juno) or armhf (STM32MP157).
set -euo pipefail
cd "$(dirname "$0")/.."

usage() { echo "usage: $0 arm64|armhf [run -- ARGS... | test [CTEST ARGS...]]" >&2; exit 2; }
[ $# -ge 1 ] || usage
arch=$1
shift
case "$arch" in
  arm64 | armhf) ;;
  *) usage ;;
esac
action=${1:-build}
[ $# -eq 0 ] || shift
build=build-$arch

# The target's libraries, as the top-level CMakeLists.txt finds them. Debian's
# multiarch -dev packages are Multi-Arch: same, so they install beside the host's.
TARGET_PACKAGES=(libopencsd-dev libdw-dev libelf-dev libcapstone-dev libinih-dev
                 libjansson-dev zlib1g-dev liblzma-dev libsqlite3-dev)
# Host tools: both cross compilers, since the tests build their A64 and A32 trace
# inputs whatever the target; QEMU runs the target's binaries.
HOST_PACKAGES=(cmake pkg-config python3 qemu-user gcc-aarch64-linux-gnu
               gcc-arm-linux-gnueabihf binutils-aarch64-linux-gnu
               binutils-arm-linux-gnueabihf)
# A mirror caught mid-sync fails one architecture's index for a while ("Mirror sync
# in progress"): apt is tried again after a pause before giving up.
APT_TRIES=${CROSS_APT_TRIES:-4}
APT_PAUSE=${CROSS_APT_PAUSE:-30}
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO=sudo
# The target's libraries unpacked under build-ARCH/sysroot: the fallback when the
# multiarch packages cannot be installed (below).
sysroot=$PWD/$build/sysroot

say() { echo "cross.sh $arch: $*" >&2; }

not_installed() { # PACKAGE... -> those dpkg does not have installed
  local p
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || echo "$p"
  done
}

# apt_retry LOG CMD...: apt-get update, then CMD, up to APT_TRIES times.
apt_retry() {
  local log=$1 try
  shift
  for try in $(seq 1 "$APT_TRIES"); do
    # a failed index (exit 100) may still leave what CMD needs installable
    $SUDO apt-get update -q >>"$log" 2>&1 || echo "cross.sh: apt-get update failed (try $try)" >>"$log"
    if "$@" >>"$log" 2>&1; then
      return 0
    fi
    [ "$try" -eq "$APT_TRIES" ] || sleep "$APT_PAUSE"
  done
  return 1
}

apt_install() { DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends "$@"; }

install_host_packages() {
  local missing log
  mapfile -t missing < <(not_installed "${HOST_PACKAGES[@]}")
  [ ${#missing[@]} -gt 0 ] || return 0
  log=$(mktemp "${TMPDIR:-/tmp}/cross-apt-$arch.XXXXXX")
  say "installing ${missing[*]} (apt's output: $log)"
  apt_retry "$log" apt_install "${missing[@]}" || true
  mapfile -t missing < <(not_installed "${HOST_PACKAGES[@]}")
  if [ ${#missing[@]} -gt 0 ]; then
    say "could not install after $APT_TRIES tries: ${missing[*]} (apt's output: $log)"
    exit 1
  fi
  rm -f "$log"
}

# Multi-Arch: same packages must have the host's exact version, so a host library
# updated from an index the target architecture's copy of is missing (the armhf
# security index mid-sync while amd64's is current) blocks the whole install. Then
# the same Debian packages, as that architecture's index has them, are unpacked
# into a sysroot of their own instead (build-ARCH/sysroot), which no version of
# the host's constrains.
make_sysroot() {
  local log=$1 names debs
  mapfile -t names < <(apt-cache depends --recurse --no-recommends --no-suggests \
    --no-conflicts --no-breaks --no-replaces --no-enhances "${TARGET_PACKAGES[@]/%/:$arch}" |
    grep -E "^[a-z0-9][^ ]*:$arch\$" | sort -u)
  debs=$(mktemp -d "${TMPDIR:-/tmp}/cross-debs-$arch.XXXXXX")
  # apt-get download writes into the current directory
  if ! apt_retry "$log" bash -c 'cd "$0" && apt-get download "$@"' "$debs" "${names[@]}"; then
    rm -rf "$debs"
    return 1
  fi
  rm -rf "$sysroot"
  mkdir -p "$sysroot"
  local deb link target
  for deb in "$debs"/*.deb; do
    dpkg-deb -x "$deb" "$sysroot"
  done
  rm -rf "$debs"
  # absolute links (libz.so -> /lib/<triplet>/...) must stay inside the sysroot
  while IFS= read -r -d '' link; do
    target=$(readlink "$link")
    ln -sfn "$(realpath -m --relative-to="$(dirname "$link")" "$sysroot$target")" "$link"
  done < <(find "$sysroot" -type l -lname '/*' -print0)
  printf '%s\n' "${TARGET_PACKAGES[@]}" >"$sysroot/.complete"
}

# Sets target_root: "" when the multiarch packages are installed, else $sysroot.
install_target_packages() {
  local missing log
  target_root=""
  mapfile -t missing < <(not_installed "${TARGET_PACKAGES[@]/%/:$arch}")
  [ ${#missing[@]} -gt 0 ] || return 0
  if [ -f "$sysroot/.complete" ] &&
     [ "$(cat "$sysroot/.complete")" = "$(printf '%s\n' "${TARGET_PACKAGES[@]}")" ]; then
    target_root=$sysroot
    return 0
  fi
  local added=false
  if ! dpkg --print-foreign-architectures | grep -qx "$arch"; then
    $SUDO dpkg --add-architecture "$arch"
    added=true
  fi
  log=$(mktemp "${TMPDIR:-/tmp}/cross-apt-$arch.XXXXXX")
  say "installing ${missing[*]} (apt's output: $log)"
  apt_retry "$log" apt_install "${missing[@]}" || true
  mapfile -t missing < <(not_installed "${TARGET_PACKAGES[@]/%/:$arch}")
  if [ ${#missing[@]} -eq 0 ]; then
    rm -f "$log"
    return 0
  fi
  say "could not install after $APT_TRIES tries: ${missing[*]} (apt's output: $log); unpacking them into $sysroot instead"
  local got=true
  make_sysroot "$log" || got=false
  # an architecture whose index is broken fails every later apt-get update (and
  # scripts/setup.sh with it): drop it again if this run added it
  if $added && [ -z "$(dpkg-query -W -f='${Package}\n' "*:$arch" 2>/dev/null)" ]; then
    $SUDO dpkg --remove-architecture "$arch" || true
  fi
  if ! $got; then
    say "could not install after $APT_TRIES tries: ${missing[*]}, nor download them for $sysroot (apt's output: $log)"
    exit 1
  fi
  target_root=$sysroot
  rm -f "$log"
}

configure_and_build() {
  local werror=OFF
  [ "${CI:-}" = "true" ] && werror=ON
  cmake -S . -B "$build" -DCMAKE_TOOLCHAIN_FILE="$PWD/cmake/toolchain-$arch.cmake" \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCSTRACE_WERROR=$werror \
    -DCSTRACE_CROSS_SYSROOT="$target_root" \
    ${CSTRACE_SHARED_TESTDATA:+-DCSTRACE_SHARED_TESTDATA="$CSTRACE_SHARED_TESTDATA"} >/dev/null
  cmake --build "$build" -j"$(nproc)"
}

setup() {
  install_host_packages
  install_target_packages
  configure_and_build
}

case "$action" in
  build)
    setup
    ;;
  run)
    [ "${1:-}" != "--" ] || shift
    [ -x "$build/emu/cstrace" ] || setup >&2
    # the wrapper the tests use: the emulator as the toolchain file sets it
    exec "$build/emu/cstrace" "$@"
    ;;
  test)
    setup
    ctest --test-dir "$build" -LE host-only -j"$(nproc)" --output-on-failure "$@"
    ;;
  *) usage ;;
esac
