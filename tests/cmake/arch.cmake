# Older GPUs (label arch): every kernel source compiles for sm_75 (Turing), the oldest
# architecture issue 3 asks the ladder to run on and the fast kernel to be correct on.
# Compile only (no such GPU here); the default build is sm_90.
if(GR_WITH_CUDA)
  gr_add_script_test(arch_sm75 ${GR_TEST_DIR}/arch/compile_sm75.sh LABELS arch TIMEOUT 900
    ENV "NVCC=${CMAKE_CUDA_COMPILER}")
endif()
