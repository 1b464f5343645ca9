# Unit tests (label unit): one small process each. The pure ones run directly;
# the ones that go through the library API need MPI and run under mpirun -np 1.
# ASAN_OPTIONS: Open MPI's own allocations show up as leaks under ASan builds.

foreach(t generators shard parse_size desc_validate term_i partial)
  gr_test_exe(unit_${t} SOURCES ${GR_TEST_DIR}/unit/test_${t}.c)
  add_test(NAME unit_${t} COMMAND unit_${t})
  set_tests_properties(unit_${t} PROPERTIES LABELS unit TIMEOUT 60 SKIP_RETURN_CODE ${GR_SKIP_CODE})
endforeach()

# the exact kernel's last-round carry bound (kernels/gr_exact_bound.h, plain C)
gr_test_exe(unit_exact_bound SOURCES ${GR_TEST_DIR}/unit/test_exact_bound.c)
target_include_directories(unit_exact_bound PRIVATE ${PROJECT_SOURCE_DIR}/kernels)
add_test(NAME unit_exact_bound COMMAND unit_exact_bound)
set_tests_properties(unit_exact_bound PROPERTIES LABELS "unit;exact" TIMEOUT 60)

foreach(t cpu_closed_forms cpu_ieee cpu_threads)
  gr_test_exe(unit_${t} SOURCES ${GR_TEST_DIR}/unit/test_${t}.c)
  # 600 s: unit_cpu_threads sweeps every dtype x op x gen x mode on 5 thread
  # counts, ~30 s in a Release build but past 120 s under ASan on a loaded
  # 2-core machine (a CI timeout once)
  gr_add_mpi_test(unit_${t} NP 1 COMMAND $<TARGET_FILE:unit_${t}> LABELS unit TIMEOUT 600
    ENV "ASAN_OPTIONS=detect_leaks=0")
endforeach()

# f16 / bf16 on the cpu backend: closed forms and exact identity for np 1, 2, 3.
gr_test_exe(unit_half_cpu SOURCES ${GR_TEST_DIR}/unit/test_half_cpu.c)
foreach(np 1 2 3)
  gr_add_mpi_test(unit_half_cpu_np${np} NP ${np} COMMAND $<TARGET_FILE:unit_half_cpu> LABELS "unit;exact" TIMEOUT 300
    ENV "ASAN_OPTIONS=detect_leaks=0")
endforeach()
