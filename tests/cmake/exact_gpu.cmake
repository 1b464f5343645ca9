# GPU exact-mode tests (labels gpu, exact): the exact reduce kernel
# (kernels/gr_exact.cuh) against the CPU exact accumulator, bit for bit, and
# the CLI's --mode exact against --backend cpu. They need a visible GPU and
# exit 77 (SKIP) where there is none.
if(GR_WITH_CUDA)
  gr_test_exe(test_exact_gpu SOURCES ${GR_TEST_DIR}/exact_gpu/test_exact_gpu.c)
  target_include_directories(test_exact_gpu PRIVATE ${PROJECT_SOURCE_DIR}/kernels)
  # test-only ablation instances of the exact kernel (--bench prices each part)
  add_library(gr_exact_ablate OBJECT ${GR_TEST_DIR}/exact_gpu/exact_ablate.cu)
  target_include_directories(gr_exact_ablate PRIVATE ${PROJECT_SOURCE_DIR}/include ${GR_PRIVATE_INCLUDES})
  target_compile_options(gr_exact_ablate PRIVATE -Xcompiler=-Wall -lineinfo --Werror=all-warnings)
  set_target_properties(gr_exact_ablate PROPERTIES CUDA_RUNTIME_LIBRARY Shared)
  target_link_libraries(test_exact_gpu PRIVATE gr_exact_ablate CUDA::cudart Threads::Threads)

  add_test(NAME gpu_exact COMMAND test_exact_gpu)
  set_tests_properties(gpu_exact PROPERTIES LABELS "gpu;exact" TIMEOUT 600 SKIP_RETURN_CODE ${GR_SKIP_CODE}
    ENVIRONMENT "${GR_MPI_ENV}")
  # N > 2^31 elements (f32 ones, f32/f64 stress); skips itself without ~18 GB free
  add_test(NAME gpu_exact_big COMMAND test_exact_gpu --big)
  set_tests_properties(gpu_exact_big PROPERTIES LABELS "gpu;exact" TIMEOUT 600 SKIP_RETURN_CODE ${GR_SKIP_CODE}
    ENVIRONMENT "${GR_MPI_ENV}")
  # the stage probe (GR_XF_STAMPS): its stamps are consistent (every warp's in order, some
  # warp writes the result; the ticket end: one last block) and its result is the production
  # kernel's (--bench checks the latter too)
  add_test(NAME gpu_exact_stamps COMMAND test_exact_gpu --stamps)
  set_tests_properties(gpu_exact_stamps PROPERTIES LABELS "gpu;exact" TIMEOUT 300 SKIP_RETURN_CODE ${GR_SKIP_CODE}
    ENVIRONMENT "${GR_MPI_ENV}")
  # the CLI: --mode exact on cuda gives the result_hex of --backend cpu (np 1 and 2)
  gr_add_script_test(gpu_exact_cli ${GR_TEST_DIR}/exact_gpu/cli_exact.sh LABELS "gpu;exact" TIMEOUT 600)
endif()
