# --op stats beyond input files: the GPU kernel (kernels/stats.cu) against the
# host pass (label gpu: exit 77 = SKIP without a GPU), and the CLI on
# synthetic data with the cpu backend against closed forms (label io).
gr_add_script_test(cli_stats_synthetic ${GR_TEST_DIR}/stats_gpu/test_cli_stats.sh LABELS "io;cli" TIMEOUT 300)

if(GR_WITH_CUDA)
  gr_test_exe(test_stats_gpu SOURCES ${GR_TEST_DIR}/stats_gpu/test_stats_gpu.c)
  target_include_directories(test_stats_gpu PRIVATE ${PROJECT_SOURCE_DIR}/kernels)
  target_link_libraries(test_stats_gpu PRIVATE CUDA::cudart)
  gr_add_mpi_test(gpu_stats NP 1 COMMAND $<TARGET_FILE:test_stats_gpu> LABELS gpu TIMEOUT 600)
  # the small run, for compute-sanitizer (jobs/h200-check.sh style)
  gr_add_mpi_test(gpu_stats_small NP 1 COMMAND $<TARGET_FILE:test_stats_gpu> --small LABELS gpu TIMEOUT 300)
endif()
