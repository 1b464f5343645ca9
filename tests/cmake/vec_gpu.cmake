# Vector ops on the GPU (issue 20, label gpu): dot, nrm2, argmin/argmax, exact
# f64 sumsq and batches through kernels/dot.cu and kernels/argext.cu against
# the cpu kernels; exit 77 (SKIP) without a visible GPU. unit_argext_loop: the
# per-thread argmin/argmax loop (kernels/gr_argext.cuh) run on the host against
# the exact path; it needs the CUDA headers only, no GPU.
if(GR_WITH_CUDA)
  gr_test_exe(test_vec_gpu SOURCES ${GR_TEST_DIR}/vec_gpu/test_vec_gpu.c)
  target_link_libraries(test_vec_gpu PRIVATE CUDA::cudart)
  foreach(np 1 3)
    gr_add_mpi_test(gpu_vec_np${np} NP ${np} COMMAND $<TARGET_FILE:test_vec_gpu> LABELS gpu TIMEOUT 600)
  endforeach()
  add_executable(test_argext_loop ${GR_TEST_DIR}/vec_gpu/test_argext_loop.cpp)
  target_include_directories(test_argext_loop PRIVATE ${PROJECT_SOURCE_DIR}/kernels ${PROJECT_SOURCE_DIR}/src/core)
  target_link_libraries(test_argext_loop PRIVATE CUDA::cudart)
  target_compile_options(test_argext_loop PRIVATE -Wall -Wextra -Werror -Wno-unknown-pragmas ${GR_SAN_FLAGS})
  target_link_options(test_argext_loop PRIVATE ${GR_SAN_FLAGS})
  add_test(NAME unit_argext_loop COMMAND test_argext_loop)
  set_tests_properties(unit_argext_loop PROPERTIES LABELS unit TIMEOUT 120)
endif()
