#!/usr/bin/env bash
# Install everything cstrace needs on Debian 12 (as root), then configure and build
# into ./build. Safe to run again: apt and cmake skip what is already done.
set -euo pipefail
cd "$(dirname "$0")/.."

PACKAGES=(
  build-essential cmake pkg-config git xz-utils python3
  libopencsd-dev libopencsd-bin libinih-dev libjansson-dev libcapstone-dev
  libelf-dev libdw-dev zlib1g-dev liblzma-dev
  linux-perf qemu-user binutils-multiarch
  gcc-aarch64-linux-gnu gcc-arm-linux-gnueabihf libc6-dev-arm64-cross libc6-dev-armhf-cross
  clang libclang-rt-14-dev
  chromium lcov llvm-19 parallel
  # cstrace export (docs/export.md) and the tests that check it against perf's
  # export scripts and viewer, a PostgreSQL server, and the fleet recipe over SSH
  sqlite3 libsqlite3-dev libpq-dev libpq5 postgresql python3-pyside2.qtsql libqt5sql5-sqlite
  libqt5sql5-psql openssh-server openssh-client rsync
)

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO=sudo
  $SUDO apt-get update -q
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

werror=OFF
[ "${CI:-}" = "true" ] && werror=ON
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCSTRACE_WERROR=$werror >/dev/null
cmake --build build -j"$(nproc)"
