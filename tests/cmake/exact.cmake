# Exact-mode tests (label exact): the accumulator and the cpu backend's exact
# mode against a correctly rounded MPFR reference. MPFR is required when tests
# are built (CI installs Debian's libmpfr-dev): without it configure fails,
# unless GR_MPFR_TESTS=OFF drops these tests openly.

# GR_MPFR_TESTS=OFF leaves out the tests that need MPFR, and says so: for
# machines that cannot install it (the GPU machines: no package registry);
# CI builds them.
option(GR_MPFR_TESTS "build the exact-mode tests that need MPFR" ON)
find_package(PkgConfig REQUIRED)
if(NOT GR_MPFR_TESTS)
  message(STATUS "GR_MPFR_TESTS=OFF: exact_xacc_mpfr, exact_cpu_mpfr and exact_vec_mpfr_np* are not built")
else()
pkg_check_modules(GR_MPFR QUIET IMPORTED_TARGET mpfr)
if(GR_MPFR_FOUND)
  set(GR_MPFR_LIBS PkgConfig::GR_MPFR)
else()
  find_path(GR_MPFR_INCLUDE_DIR mpfr.h)
  find_library(GR_MPFR_LIBRARY mpfr)
  find_library(GR_GMP_LIBRARY gmp)
  if(NOT GR_MPFR_INCLUDE_DIR OR NOT GR_MPFR_LIBRARY OR NOT GR_GMP_LIBRARY)
    message(FATAL_ERROR
      "MPFR was not found, and the exact-mode tests need it as their correctly rounded reference.\n"
      "Install it (Debian/Ubuntu: apt-get install libmpfr-dev) or configure with -DGR_BUILD_TESTS=OFF.")
  endif()
  add_library(gr_mpfr INTERFACE)
  target_include_directories(gr_mpfr INTERFACE ${GR_MPFR_INCLUDE_DIR})
  target_link_libraries(gr_mpfr INTERFACE ${GR_MPFR_LIBRARY} ${GR_GMP_LIBRARY})
  set(GR_MPFR_LIBS gr_mpfr)
endif()

gr_test_exe(exact_xacc_mpfr SOURCES ${GR_TEST_DIR}/unit/test_xacc_mpfr.c LIBS ${GR_MPFR_LIBS})
add_test(NAME exact_xacc_mpfr COMMAND exact_xacc_mpfr)
set_tests_properties(exact_xacc_mpfr PROPERTIES LABELS exact TIMEOUT 120)

gr_test_exe(exact_cpu_mpfr SOURCES ${GR_TEST_DIR}/unit/test_exact_cpu.c LIBS ${GR_MPFR_LIBS})
gr_add_mpi_test(exact_cpu_mpfr NP 1 COMMAND $<TARGET_FILE:exact_cpu_mpfr> LABELS exact TIMEOUT 120
  ENV "ASAN_OPTIONS=detect_leaks=0")

# dot, nrm2, argmin/argmax and batches (issue 20): MPFR and closed forms through
# the API, every np meets the same references (np 1..5)
gr_test_exe(exact_vec_mpfr SOURCES ${GR_TEST_DIR}/unit/test_vec_mpfr.c LIBS ${GR_MPFR_LIBS})
foreach(np 1 2 3 4 5)
  gr_add_mpi_test(exact_vec_mpfr_np${np} NP ${np} COMMAND $<TARGET_FILE:exact_vec_mpfr> LABELS "exact;mpi"
    TIMEOUT 120 ENV "ASAN_OPTIONS=detect_leaks=0")
endforeach()
endif()

gr_test_exe(exact_xacc_i64 SOURCES ${GR_TEST_DIR}/unit/test_xacc_i64.c)
add_test(NAME exact_xacc_i64 COMMAND exact_xacc_i64)
set_tests_properties(exact_xacc_i64 PROPERTIES LABELS exact TIMEOUT 60)
