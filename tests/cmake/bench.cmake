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
endif()
