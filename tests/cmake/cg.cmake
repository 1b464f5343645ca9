# gpureduce-cg (issue 21, examples/cg, docs/CG.md): conjugate gradient whose
# iterates are the same bits on any number of ranks, CPU or GPU.

# cpu backend, n=26: exact mode identical for np 1..4 (uneven slabs at 3 and 4),
# fast mode repeatable, the cub-mpi baseline converges. A few seconds.
gr_add_script_test(cg_identity_cpu ${GR_TEST_DIR}/cg/cg.sh ARGS cpu $<TARGET_FILE:gpureduce-cg>
  LABELS "mpi;exact" TIMEOUT 120 ENV "ASAN_OPTIONS=detect_leaks=0")

if(GR_WITH_CUDA)
  # the GPU's exact run = the cpu backend's, np 1 and 2 (ranks share a GPU when
  # there is one); fast mode repeatable; cub-mpi converges. 77 without a GPU.
  gr_add_script_test(gpu_cg_identity ${GR_TEST_DIR}/cg/cg.sh ARGS gpu $<TARGET_FILE:gpureduce-cg>
    LABELS gpu TIMEOUT 300)
endif()
