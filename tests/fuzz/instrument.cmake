# Included by the top-level CMakeLists.txt when SLUICE_FUZZ is ON, before src/: every target
# of this build directory (our libraries included) is compiled for libFuzzer with ASan and
# UBSan; the fuzz targets of tests/fuzz link the fuzzer's main (-fsanitize=fuzzer).
if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
  message(FATAL_ERROR "SLUICE_FUZZ needs clang (libFuzzer): configure with CXX=clang++-15")
endif()
set(SLUICE_FUZZ_SANITIZERS "address,undefined")
add_compile_options(-fsanitize=fuzzer-no-link,${SLUICE_FUZZ_SANITIZERS}
  -fno-sanitize-recover=all -fno-omit-frame-pointer -g1)
add_link_options(-fsanitize=${SLUICE_FUZZ_SANITIZERS})
