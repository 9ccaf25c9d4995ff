# Shared part of the Debian cross toolchain files: set CSTRACE_CROSS_TRIPLET and
# CSTRACE_CROSS_QEMU, then include this. The target's libraries are Debian's, either
# installed as multiarch packages (/usr/lib/<triplet>, the default) or unpacked
# into a sysroot of their own, CSTRACE_CROSS_SYSROOT (scripts/cross.sh falls back
# to that when the multiarch install is impossible). Tests run under QEMU user mode.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_C_COMPILER ${CSTRACE_CROSS_TRIPLET}-gcc)
set(CMAKE_LIBRARY_ARCHITECTURE ${CSTRACE_CROSS_TRIPLET})
# try_compile projects read this file too: they must see the same sysroot
list(APPEND CMAKE_TRY_COMPILE_PLATFORM_VARIABLES CSTRACE_CROSS_SYSROOT)

# Programs (the compilers that build the test inputs, python3) are the host's.
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)

if(CSTRACE_CROSS_SYSROOT)
  # A complete Debian root of the target: its own C library, headers and loader.
  set(CMAKE_SYSROOT ${CSTRACE_CROSS_SYSROOT})
  set(ENV{PKG_CONFIG_SYSROOT_DIR} ${CSTRACE_CROSS_SYSROOT})
  set(ENV{PKG_CONFIG_LIBDIR}
      ${CSTRACE_CROSS_SYSROOT}/usr/lib/${CSTRACE_CROSS_TRIPLET}/pkgconfig:${CSTRACE_CROSS_SYSROOT}/usr/share/pkgconfig)
  set(CSTRACE_CROSS_QEMU_ROOT ${CSTRACE_CROSS_SYSROOT})
else()
  # The cross compiler's C library (/usr/<triplet>) and the multiarch libraries in
  # /usr/lib/<triplet>, which CMAKE_LIBRARY_ARCHITECTURE adds under /.
  set(CMAKE_FIND_ROOT_PATH /usr/${CSTRACE_CROSS_TRIPLET} /)
  set(ENV{PKG_CONFIG_SYSROOT_DIR} "")
  set(ENV{PKG_CONFIG_LIBDIR}
      /usr/lib/${CSTRACE_CROSS_TRIPLET}/pkgconfig:/usr/share/pkgconfig)
  # At run time the loader and every library are the multiarch ones: libc6:<arch>
  # puts its loader where the binary asks (/lib/ld-linux-*.so.*). `-L /` keeps QEMU
  # from looking under another prefix first: with -L /usr/<triplet> it took the
  # cross package's ld.so (2.36-8cross1) with multiarch's libc.so.6
  # (2.36-9+deb12u*), a mismatched pair under which cstrace's forked decoder hung;
  # a default prefix (/etc/qemu-binfmt/<cpu> of qemu-user-binfmt) would do the same.
  set(CSTRACE_CROSS_QEMU_ROOT /)
endif()
# pkg-config must see only the target's .pc files: the host's would hand the
# x86-64 library directory to the linker.
set(ENV{PKG_CONFIG_PATH} "")

set(CMAKE_CROSSCOMPILING_EMULATOR ${CSTRACE_CROSS_QEMU} -L ${CSTRACE_CROSS_QEMU_ROOT})
