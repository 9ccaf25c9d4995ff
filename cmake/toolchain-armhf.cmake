# Cross build for 32-bit Arm Linux, hard float (STM32MP157) with Debian's cross
# compiler and the :armhf multiarch -dev packages (scripts/cross.sh armhf installs both).
set(CSTRACE_CROSS_TRIPLET arm-linux-gnueabihf)
set(CSTRACE_CROSS_QEMU qemu-arm)
set(CMAKE_SYSTEM_PROCESSOR arm)
include(${CMAKE_CURRENT_LIST_DIR}/toolchain-debian-multiarch.cmake)
