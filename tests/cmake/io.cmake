# Input files (label io): the .npy header parser, bad input, gen -> --input
# round trips, formats, and that the input is never opened for writing.
# The fuzz target of the parser (label fuzz) is built with clang's libFuzzer
# when clang is found; its seed corpus is replayed by every build.

foreach(t npy_parse half)
  gr_test_exe(io_${t} SOURCES ${GR_TEST_DIR}/io/test_${t}.c)
  add_test(NAME io_${t} COMMAND io_${t})
  set_tests_properties(io_${t} PROPERTIES LABELS "io;unit" TIMEOUT 60)
endforeach()

# LD_PRELOAD shim: logs and refuses opens of the input for writing, and
# simulates EACCES (tests run as root, whom mode 000 does not stop).
add_library(gr_open_guard SHARED ${GR_TEST_DIR}/io/open_guard.c)
target_compile_options(gr_open_guard PRIVATE ${GR_C_WARNINGS})
target_link_libraries(gr_open_guard PRIVATE ${CMAKE_DL_LIBS})

foreach(t errors roundtrip formats readonly stats)
  gr_add_script_test(io_${t} ${GR_TEST_DIR}/io/test_io_${t}.sh LABELS io TIMEOUT 600
    ENV "GR_OPEN_GUARD=$<TARGET_FILE:gr_open_guard>")
endforeach()

# The seed corpus through the fuzz entry point, under this build's compiler
# (and its sanitizers, with -DGR_SANITIZE=address,undefined).
gr_test_exe(fuzz_npy_replay SOURCES ${GR_TEST_DIR}/fuzz/replay_npy.c ${GR_TEST_DIR}/fuzz/fuzz_npy.c)
add_test(NAME fuzz_npy_replay COMMAND fuzz_npy_replay ${GR_TEST_DIR}/fuzz/corpus)
set_tests_properties(fuzz_npy_replay PROPERTIES LABELS "io;fuzz" TIMEOUT 60)

# libFuzzer: a separate compiler, so a custom command rather than a target of
# this project's C compiler. GR_FUZZ_SECONDS bounds fuzz_npy_short.
find_program(GR_CLANG NAMES clang clang-19 clang-18 clang-17 clang-16 clang-15 clang-14)
set(GR_FUZZ_SECONDS 60 CACHE STRING "how long fuzz_npy_short fuzzes the .npy header parser")
# a clang without its sanitizer runtimes (compiler-rt) cannot link a fuzzer: probe once
if(GR_CLANG AND NOT DEFINED GR_CLANG_FUZZ_LINKS)
  set(probe ${CMAKE_CURRENT_BINARY_DIR}/fuzz_probe.c)
  file(WRITE ${probe} "#include <stddef.h>\n#include <stdint.h>\nint LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) { (void)d; (void)n; return 0; }\n")
  execute_process(COMMAND ${GR_CLANG} -fsanitize=fuzzer,address,undefined ${probe} -o ${CMAKE_CURRENT_BINARY_DIR}/fuzz_probe
                  RESULT_VARIABLE probe_rc OUTPUT_QUIET ERROR_QUIET)
  if(probe_rc EQUAL 0)
    set(GR_CLANG_FUZZ_LINKS ON CACHE INTERNAL "clang links libFuzzer + ASan/UBSan")
  else()
    set(GR_CLANG_FUZZ_LINKS OFF CACHE INTERNAL "clang links libFuzzer + ASan/UBSan")
    message(STATUS "fuzz_npy: ${GR_CLANG} cannot link -fsanitize=fuzzer (no compiler-rt?): the fuzz target is left out")
  endif()
endif()
if(GR_CLANG AND GR_CLANG_FUZZ_LINKS)
  set(fuzz_inc "")
  foreach(d ${PROJECT_SOURCE_DIR}/include ${GR_PRIVATE_INCLUDES} ${MPI_C_INCLUDE_DIRS})
    list(APPEND fuzz_inc -I${d})
  endforeach()
  add_custom_command(OUTPUT ${CMAKE_CURRENT_BINARY_DIR}/fuzz_npy
    COMMAND ${GR_CLANG} -g -O1 -std=c11 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined
            ${fuzz_inc} ${GR_TEST_DIR}/fuzz/fuzz_npy.c ${PROJECT_SOURCE_DIR}/src/io/io_npy.c
            -o ${CMAKE_CURRENT_BINARY_DIR}/fuzz_npy
    DEPENDS ${GR_TEST_DIR}/fuzz/fuzz_npy.c ${PROJECT_SOURCE_DIR}/src/io/io_npy.c ${PROJECT_SOURCE_DIR}/src/io/gr_npy.h
    COMMENT "libFuzzer target fuzz_npy (${GR_CLANG})" VERBATIM)
  add_custom_target(fuzz_npy ALL DEPENDS ${CMAKE_CURRENT_BINARY_DIR}/fuzz_npy)
  # new inputs go to a scratch corpus in the build tree; the committed seeds are read only
  add_test(NAME fuzz_npy_short COMMAND ${CMAKE_COMMAND} -E env ASAN_OPTIONS=detect_leaks=1
    bash -c "mkdir -p fuzz_npy_work && exec \"$0\" -max_total_time=${GR_FUZZ_SECONDS} -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 -dict=\"$1\" fuzz_npy_work \"$2\""
    ${CMAKE_CURRENT_BINARY_DIR}/fuzz_npy ${GR_TEST_DIR}/fuzz/npy.dict ${GR_TEST_DIR}/fuzz/corpus)
  math(EXPR fuzz_timeout "${GR_FUZZ_SECONDS} + 120")
  set_tests_properties(fuzz_npy_short PROPERTIES LABELS fuzz TIMEOUT ${fuzz_timeout}
    WORKING_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR})
else()
  message(STATUS "clang not found: fuzz_npy_short is not built; fuzz_npy_replay replays the seed corpus")
endif()

# The cuda stream of the file pipeline (--input on --backend cuda) against the
# cpu backend: exact bits, fast closed forms, chunks, np 1-3, empty shards.
# Label gpu: exits 77 (SKIP) where no GPU is visible.
if(GR_WITH_CUDA)
  gr_add_script_test(io_gpu ${GR_TEST_DIR}/io_gpu/test_io_gpu.sh LABELS "gpu;io" TIMEOUT 600)
endif()
