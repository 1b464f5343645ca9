# The distributed rows of `gpureduce bench` (src/cli/bench_dist.c): `gr` on the
# cpu backend under mpirun np 1..3 anywhere (label cli); gr, cub+mpi and
# cub+nccl on the GPUs where one is visible (label gpu; SKIP, exit 77,
# elsewhere). jobs/h200-check.sh runs the 2-GPU measurement.
if(GR_WITH_CUDA)
  set(GR_BENCH_DIST_ENV "GR_WITH_CUDA=ON")
else()
  set(GR_BENCH_DIST_ENV "GR_WITH_CUDA=OFF")
endif()
gr_add_script_test(bench_dist_cpu ${GR_TEST_DIR}/bench/bench_dist_cpu.sh LABELS cli TIMEOUT 600
  ENV ${GR_BENCH_DIST_ENV})
if(GR_WITH_CUDA)
  gr_add_script_test(gpu_bench_dist ${GR_TEST_DIR}/bench/bench_dist_gpu.sh LABELS gpu TIMEOUT 600)
endif()
