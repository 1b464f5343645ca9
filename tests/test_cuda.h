/*
 * test_cuda.h - the GPU test programs' CUDA check: CU(call) fails the test
 * (test.h) with the call's text and CUDA's error name and message.
 */
#ifndef GR_TEST_CUDA_H
#define GR_TEST_CUDA_H

#include <cuda_runtime_api.h>

#include "test.h"

#define CU(call)                                                                               \
    do {                                                                                       \
        cudaError_t e_ = (call);                                                               \
        if (e_ != cudaSuccess)                                                                 \
            GR_TEST_FAIL_("%s: %s (%s)", #call, cudaGetErrorName(e_), cudaGetErrorString(e_)); \
    } while (0)

#endif /* GR_TEST_CUDA_H */
