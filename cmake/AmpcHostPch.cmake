# The runtime headers every generated CPU model file includes
# (runtime/cpu/GeneratedPrelude.h), precompiled for `ampc compile`: parsing
# them was about 1.1 s of a 3 s compile of the mlp example's C++, and the
# test suite compiles some 160 models. A precompiled header must be made
# with the compile's own options (Clang stops on a mismatch; GCC 12 took one
# made at -O1 for an -O2 compile and crashed), so this list is the one
# ampc::hostCompileCommand builds (compiler/HostCompiler.cpp), in its order;
# the driver compares it with its own list (AMPC_HOST_PCH_FLAGS in
# compiler/RuntimeConfig.inc) and leaves the header out on any difference,
# and test/Tools/compile-pch.test checks that it is used.
#
# Sets AMPC_HOST_PCH (the header to pass with -include; empty: none) and
# AMPC_HOST_PCH_FLAGS, and the target ampc_host_pch that makes it.
set(AMPC_HOST_PCH "")
set(AMPC_HOST_PCH_FLAGS "")
if(NOT AMPC_PCH OR NOT TARGET ampc_cpu_kernels)
  return()
endif()
if(AMPC_SANITIZE)
  # sanitizerFlags' list: -g1, then the runtime's (CMakeLists.txt).
  list(APPEND AMPC_HOST_PCH_FLAGS -g1 ${AMPC_SANITIZE_FLAGS})
endif()
list(APPEND AMPC_HOST_PCH_FLAGS ${AMPC_HOST_ISA_FLAGS}
     -O2 -std=c++20 -ffp-contract=off ${AMPC_VECTORIZE_FLAGS})

set(_ampc_pch_dir ${PROJECT_BINARY_DIR}/host-pch)
set(AMPC_HOST_PCH ${_ampc_pch_dir}/GeneratedPrelude.h)
# GCC finds NAME.gch beside an -include'd NAME, Clang NAME.pch.
if(CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
  set(_ampc_pch_out ${AMPC_HOST_PCH}.pch)
else()
  set(_ampc_pch_out ${AMPC_HOST_PCH}.gch)
endif()
file(CONFIGURE OUTPUT ${AMPC_HOST_PCH} CONTENT
     "#include \"runtime/cpu/GeneratedPrelude.h\"\n")
add_custom_command(
  OUTPUT ${_ampc_pch_out}
  COMMAND ${CMAKE_CXX_COMPILER} ${AMPC_HOST_PCH_FLAGS}
          -I${PROJECT_SOURCE_DIR} -x c++-header ${AMPC_HOST_PCH}
          -o ${_ampc_pch_out} -MD -MT ${_ampc_pch_out} -MF ${_ampc_pch_out}.d
  DEPENDS ${AMPC_HOST_PCH} ${PROJECT_SOURCE_DIR}/runtime/cpu/GeneratedPrelude.h
  DEPFILE ${_ampc_pch_out}.d
  COMMENT "Precompiling the generated code's runtime headers"
  VERBATIM)
add_custom_target(ampc_host_pch DEPENDS ${_ampc_pch_out})
