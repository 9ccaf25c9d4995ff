# Cross build for 64-bit Arm Linux (Arm Juno) with Debian's cross compiler and the
# :arm64 multiarch -dev packages (scripts/cross.sh arm64 installs both).
set(CSTRACE_CROSS_TRIPLET aarch64-linux-gnu)
set(CSTRACE_CROSS_QEMU qemu-aarch64)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
include(${CMAKE_CURRENT_LIST_DIR}/toolchain-debian-multiarch.cmake)
