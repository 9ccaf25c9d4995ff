# Recipe for the synth test programs: small C programs cross-built for AArch64 and
# AArch32 (static, except shlib which calls its own shared library). Included by
# tests/synth; sets CST_SYNTH_PROG_DIR and the target synth_test_programs.
find_program(CST_AARCH64_CC aarch64-linux-gnu-gcc)
find_program(CST_ARM_CC arm-linux-gnueabihf-gcc)
set(CST_SYNTH_SRC ${CMAKE_SOURCE_DIR}/testdata/src)
set(CST_SYNTH_PROG_DIR ${CMAKE_BINARY_DIR}/testdata)
# Recursions must stay calls; -g lets symbolize and perf name what they see.
set(CST_SYNTH_CFLAGS -O2 -g -fno-optimize-sibling-calls -Wl,--build-id)
set(CST_SYNTH_STATIC loop recurse fptr switch longjmp signal bigloop threads fault inline
  lossy forker crash)
set(CST_SYNTH_OUTPUTS)

function(cst_synth_programs arch cc)
  set(dir ${CST_SYNTH_PROG_DIR}/${arch})
  set(outs)
  foreach(p ${CST_SYNTH_STATIC})
    add_custom_command(OUTPUT ${dir}/${p}
      COMMAND ${CMAKE_COMMAND} -E make_directory ${dir}
      COMMAND ${cc} ${CST_SYNTH_CFLAGS} -static -pthread -o ${dir}/${p} ${CST_SYNTH_SRC}/${p}.c
      DEPENDS ${CST_SYNTH_SRC}/${p}.c VERBATIM)
    list(APPEND outs ${dir}/${p})
  endforeach()
  # shlib finds its library through an absolute rpath: QEMU falls back to host
  # paths for files missing under its -L prefix.
  add_custom_command(OUTPUT ${dir}/libsynthlib.so ${dir}/shlib
    COMMAND ${CMAKE_COMMAND} -E make_directory ${dir}
    COMMAND ${cc} ${CST_SYNTH_CFLAGS} -fPIC -shared -o ${dir}/libsynthlib.so ${CST_SYNTH_SRC}/shlib_lib.c
    COMMAND ${cc} ${CST_SYNTH_CFLAGS} -o ${dir}/shlib ${CST_SYNTH_SRC}/shlib.c
            -L${dir} -lsynthlib -Wl,-rpath,${dir}
    DEPENDS ${CST_SYNTH_SRC}/shlib.c ${CST_SYNTH_SRC}/shlib_lib.c VERBATIM)
  list(APPEND outs ${dir}/shlib)
  if(arch STREQUAL "aarch64")
    # the bundled sample's program (testdata/sample/make-a64-loop.sh builds it alike)
    add_custom_command(OUTPUT ${dir}/a64_loop
      COMMAND ${CMAKE_COMMAND} -E make_directory ${dir}
      COMMAND ${cc} -O1 -fno-inline -nostdlib -static -Wl,--build-id -o ${dir}/a64_loop
              ${CST_SYNTH_SRC}/a64_loop.c
      DEPENDS ${CST_SYNTH_SRC}/a64_loop.c VERBATIM)
    list(APPEND outs ${dir}/a64_loop)
  endif()
  if(arch STREQUAL "arm")
    add_custom_command(OUTPUT ${dir}/interwork
      COMMAND ${CMAKE_COMMAND} -E make_directory ${dir}
      COMMAND ${cc} ${CST_SYNTH_CFLAGS} -static -o ${dir}/interwork ${CST_SYNTH_SRC}/interwork.c
      DEPENDS ${CST_SYNTH_SRC}/interwork.c VERBATIM)
    list(APPEND outs ${dir}/interwork)
  endif()
  set(CST_SYNTH_OUTPUTS ${CST_SYNTH_OUTPUTS} ${outs} PARENT_SCOPE)
endfunction()

if(CST_AARCH64_CC)
  cst_synth_programs(aarch64 ${CST_AARCH64_CC})
endif()
if(CST_ARM_CC)
  cst_synth_programs(arm ${CST_ARM_CC})
endif()
if(CST_SYNTH_OUTPUTS)
  add_custom_target(synth_test_programs ALL DEPENDS ${CST_SYNTH_OUTPUTS})
endif()
