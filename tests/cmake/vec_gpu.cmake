# Vector ops on the GPU (issue 20, label gpu): dot, nrm2, argmin/argmax, exact
# f64 sumsq and batches through kernels/dot.cu and kernels/argext.cu against
# the cpu kernels; exit 77 (SKIP) without a visible GPU.
if(GR_WITH_CUDA)
  gr_test_exe(test_vec_gpu SOURCES ${GR_TEST_DIR}/vec_gpu/test_vec_gpu.c)
  target_link_libraries(test_vec_gpu PRIVATE CUDA::cudart)
  foreach(np 1 3)
    gr_add_mpi_test(gpu_vec_np${np} NP ${np} COMMAND $<TARGET_FILE:test_vec_gpu> LABELS gpu TIMEOUT 600)
  endforeach()
endif()
