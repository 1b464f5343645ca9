# MPI tests (label mpi): the cpu backend on MPI_COMM_WORLD under mpirun with
# np 1..5 (and 8 in the np sweep), --oversubscribe. ASAN_OPTIONS: under an
# ASan build, Open MPI's own allocations would be reported as leaks.
set(GR_MPI_TEST_ENV "ASAN_OPTIONS=detect_leaks=0")

foreach(t bits repeat all_ranks rank_failure threads)
  gr_test_exe(mpi_${t} SOURCES ${GR_TEST_DIR}/mpi/mpi_${t}.c)
endforeach()

# (a) np-invariant results identical over np = 1..5, 8 and thread counts
gr_add_script_test(mpi_np_identity ${GR_TEST_DIR}/mpi/test_np_identity.sh
  ARGS $<TARGET_FILE:mpi_bits> LABELS mpi TIMEOUT 600 ENV ${GR_MPI_TEST_ENV})
# (c) every Open MPI reduce algorithm gives the same bits at np 4 and 5
gr_add_script_test(mpi_reduce_algorithms ${GR_TEST_DIR}/mpi/test_reduce_algorithms.sh
  ARGS $<TARGET_FILE:mpi_bits> LABELS mpi TIMEOUT 600 ENV ${GR_MPI_TEST_ENV})

foreach(np 1 2 3 4 5)
  # (d) all_ranks: the same bits everywhere
  gr_add_mpi_test(mpi_all_ranks_np${np} NP ${np} COMMAND $<TARGET_FILE:mpi_all_ranks> LABELS mpi
    TIMEOUT 60 ENV ${GR_MPI_TEST_ENV})
  # (e) a failing rank: errors, no hang
  gr_add_mpi_test(mpi_rank_failure_np${np} NP ${np} COMMAND $<TARGET_FILE:mpi_rank_failure> LABELS mpi
    TIMEOUT 60 ENV ${GR_MPI_TEST_ENV})
endforeach()
foreach(np 2 5)
  # (b) repeat-run bit identity in fast mode
  gr_add_mpi_test(mpi_repeat_np${np} NP ${np} COMMAND $<TARGET_FILE:mpi_repeat> LABELS mpi
    TIMEOUT 60 ENV ${GR_MPI_TEST_ENV})
endforeach()
# thread-count identity under MPI
gr_add_mpi_test(mpi_threads_np3 NP 3 COMMAND $<TARGET_FILE:mpi_threads> LABELS mpi TIMEOUT 60
  ENV ${GR_MPI_TEST_ENV})
