# GPU tests (label gpu): the cuda backend against the cpu reference. They need
# a visible GPU and exit 77 (SKIP) where there is none; jobs/h200-check.sh runs
# them on the GPU machine, plus compute-sanitizer on the same program.
if(GR_WITH_CUDA)
  gr_test_exe(test_cuda_backend SOURCES ${GR_TEST_DIR}/gpu/test_cuda_backend.c)
  # the test drives the launchers directly too (gr_kernels.h)
  target_include_directories(test_cuda_backend PRIVATE ${PROJECT_SOURCE_DIR}/kernels)
  target_link_libraries(test_cuda_backend PRIVATE CUDA::cudart)

  # np 3: shards start at odd global indices, so no shard is 16-byte aligned
  gr_add_mpi_test(gpu_cuda_backend_np1 NP 1 COMMAND $<TARGET_FILE:test_cuda_backend>
                  LABELS gpu TIMEOUT 600)
  gr_add_mpi_test(gpu_cuda_backend_np3 NP 3 COMMAND $<TARGET_FILE:test_cuda_backend>
                  LABELS gpu TIMEOUT 600)
  # N = 2^32 + 3 (i32 and f32, exact answers); skips itself without ~18 GB free
  gr_add_mpi_test(gpu_cuda_backend_big NP 1 COMMAND $<TARGET_FILE:test_cuda_backend> --big
                  LABELS gpu TIMEOUT 300)
endif()
