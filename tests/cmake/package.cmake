# libgpureduce inside an application (issue 19): the installed package, the
# examples built against it, and the embedding contract (docs/LIBRARY.md).

# Install into a temporary prefix, check the files, build examples/host_sum
# with find_package and with pkg-config, run it under mpirun -np 1 and 3;
# build examples/stream_sum too when CUDA is on.
gr_add_script_test(package_install ${GR_TEST_DIR}/package/package.sh ARGS cpu LABELS package TIMEOUT 300)

# Config defaults and size, affinity unchanged by the defaults, overlapped
# non-blocking reductions with the blocking bits, limits and failures.
gr_test_exe(test_embed SOURCES ${GR_TEST_DIR}/package/test_embed.c)
foreach(np 1 3)
  gr_add_mpi_test(embed_np${np} NP ${np} COMMAND $<TARGET_FILE:test_embed> LABELS mpi TIMEOUT 120)
endforeach()

# The non-blocking batch (gr_ireduce_batch_*) on the cpu backend: each item's
# bits equal its own blocking call's, overlapped requests, errors, limits.
gr_test_exe(test_embed_batch SOURCES ${GR_TEST_DIR}/package/test_embed_batch.c)
foreach(np 1 2 3)
  gr_add_mpi_test(embed_batch_np${np} NP ${np} COMMAND $<TARGET_FILE:test_embed_batch> LABELS mpi TIMEOUT 120)
endforeach()

# Ordered results, the core's side (src/core/request.c) without a GPU: a cpu
# context with a recording order_arm / order_release; each request released
# once, as soon as the rank has the values, with gr_wait's bits; failures,
# request order, gr_ctx_destroy.
gr_test_exe(test_request_ordered SOURCES ${GR_TEST_DIR}/unit/test_request_ordered.c)
foreach(np 1 2)
  gr_add_mpi_test(request_ordered_np${np} NP ${np} COMMAND $<TARGET_FILE:test_request_ordered> LABELS mpi TIMEOUT 60)
endforeach()

if(GR_WITH_CUDA)
  # The same on the GPU: stream order after a late producer on the caller's
  # non-blocking stream, result delivered to device memory, overlapped
  # requests, the caller's current device kept. Label gpu: 77 without a GPU.
  add_library(gr_embed_producer STATIC ${GR_TEST_DIR}/package/embed_producer.cu)
  target_link_libraries(gr_embed_producer PUBLIC CUDA::cudart)
  gr_test_exe(test_embed_gpu SOURCES ${GR_TEST_DIR}/package/test_embed_gpu.c LIBS gr_embed_producer CUDA::cudart)
  foreach(np 1 2)
    gr_add_mpi_test(gpu_embed_np${np} NP ${np} COMMAND $<TARGET_FILE:test_embed_gpu> LABELS gpu TIMEOUT 180)
  endforeach()
  # the same with the application's cudaDeviceScheduleBlockingSync: the waits sleep in the driver
  gr_add_mpi_test(gpu_embed_blocking_sync NP 1 COMMAND $<TARGET_FILE:test_embed_gpu> --blocking-sync LABELS gpu
                  TIMEOUT 180)
  # examples/stream_sum against the installed tree, under mpirun -np 1 and 2.
  gr_add_script_test(gpu_package_stream_sum ${GR_TEST_DIR}/package/package.sh ARGS gpu LABELS gpu TIMEOUT 300)
endif()

# bench/embed_cost.c runs and checks its results (tiny sizes; its numbers
# mean nothing here: docs/LIBRARY.md "Cost" has the real run).
gr_add_mpi_test(embed_cost_smoke NP 2 COMMAND $<TARGET_FILE:gr_embed_cost> --sizes 2^10,2^16 --iters 3 --warmup 1
  LABELS cli TIMEOUT 120)
