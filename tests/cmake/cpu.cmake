# The cpu backend (src/backend/cpu): its exact fast path against the
# term-by-term accumulation, bit for bit, on adversarial random data.
gr_test_exe(unit_cpu_exact_fast SOURCES ${GR_TEST_DIR}/unit/test_cpu_exact_fast.c)
add_test(NAME unit_cpu_exact_fast COMMAND unit_cpu_exact_fast)
set_tests_properties(unit_cpu_exact_fast PROPERTIES LABELS "unit;exact" TIMEOUT 120)

# bench/cpu/cpu-vs-numpy.py on a tiny size without numpy: the script, gr_cpu_compare
# and their report work (every row measured, the backend's sums equal the plain
# loop's); it checks no speed.
find_package(Python3 COMPONENTS Interpreter QUIET)
if(Python3_Interpreter_FOUND)
  string(REPLACE ";" " " gr_cpu_mpirun "${GR_MPIRUN}")
  add_test(NAME bench_cpu_vs_numpy
    COMMAND ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/bench/cpu/cpu-vs-numpy.py --no-numpy --n 5000 --reps 1
            --calls 50 --threads 2 --bin $<TARGET_FILE:gr_cpu_compare> --mpirun "${gr_cpu_mpirun} -np 1")
  set_tests_properties(bench_cpu_vs_numpy PROPERTIES LABELS cli TIMEOUT 120
    ENVIRONMENT "${GR_MPI_ENV};ASAN_OPTIONS=detect_leaks=0"
    PASS_REGULAR_EXPRESSION "# goals \\(issue #22\\)")
endif()

# Every instruction-set level of the loops (baseline, avx2, avx512: those this
# build and CPU have) against the baseline, bit for bit, and GR_CPU_ISA through
# the public API; skips where the baseline is the only level.
gr_test_exe(unit_cpu_isa SOURCES ${GR_TEST_DIR}/unit/test_cpu_isa.c)
gr_add_mpi_test(unit_cpu_isa NP 1 COMMAND $<TARGET_FILE:unit_cpu_isa> LABELS "unit;exact" TIMEOUT 300
  ENV "ASAN_OPTIONS=detect_leaks=0")
