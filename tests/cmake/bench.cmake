# `gpureduce bench`: the harness on the cpu backend anywhere (label cli), and a
# short cuda sweep of every row and dtype where a GPU is visible (label gpu;
# SKIP, exit 77, elsewhere). jobs/h200-check.sh runs the full sweep.
if(GR_WITH_CUDA)
  set(GR_BENCH_CUDA_ENV "GR_WITH_CUDA=ON")
else()
  set(GR_BENCH_CUDA_ENV "GR_WITH_CUDA=OFF")
endif()
gr_add_script_test(bench_cpu ${GR_TEST_DIR}/bench/bench_cpu.sh LABELS cli TIMEOUT 600 ENV ${GR_BENCH_CUDA_ENV})
if(GR_WITH_CUDA)
  gr_add_script_test(gpu_bench ${GR_TEST_DIR}/bench/bench_gpu.sh LABELS gpu TIMEOUT 600)
  # the read floor (docs/PERFORMANCE.md, Round 7): how fast any kernel shape reads n
  # f32 under the bench's timing. The test checks every probe kernel's sum of all ones;
  # `test_read_floor --sweep` (jobs/h200-check.sh) times them.
  add_library(gr_read_floor OBJECT ${GR_TEST_DIR}/bench/read_floor.cu)
  target_compile_options(gr_read_floor PRIVATE -Xcompiler=-Wall -lineinfo --Werror=all-warnings)
  set_target_properties(gr_read_floor PROPERTIES CUDA_RUNTIME_LIBRARY Shared)
  gr_test_exe(test_read_floor SOURCES ${GR_TEST_DIR}/bench/read_floor.c)
  target_include_directories(test_read_floor PRIVATE ${PROJECT_SOURCE_DIR}/kernels ${GR_TEST_DIR}/bench)
  target_link_libraries(test_read_floor PRIVATE gr_read_floor gr_bench CUDA::cudart)
  add_test(NAME gpu_read_floor COMMAND test_read_floor)
  set_tests_properties(gpu_read_floor PROPERTIES LABELS gpu TIMEOUT 300 SKIP_RETURN_CODE ${GR_SKIP_CODE}
    ENVIRONMENT "${GR_MPI_ENV}")
endif()
