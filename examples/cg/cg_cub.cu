/*
 * cg_cub.cu - the dot products of --dots cub-mpi: what a user of CUB writes
 * without gpureduce. cub::DeviceReduce::TransformReduce over the indices,
 * the transform reading x[i] * y[i], one call per dot into device memory;
 * cg.c then copies the k sums to the host and MPI_Allreduces them.
 * Compiled with nvcc's defaults (no -fmad=false): this is the baseline, not
 * the reproducible path.
 */
#include "cg_kernels.h"

#include <cub/device/device_reduce.cuh>
#include <cuda/std/functional>
#include <thrust/iterator/counting_iterator.h>

namespace {
struct product_at {
    const double *x, *y;
    __device__ double operator()(int64_t i) const { return x[i] * y[i]; }
};

cudaError_t dot(void *temp, size_t &bytes, const double *x, const double *y, int64_t count, double *out,
                cudaStream_t stream)
{
    return cub::DeviceReduce::TransformReduce(temp, bytes, thrust::counting_iterator<int64_t>(0), out, count,
                                              cuda::std::plus<double>{}, product_at{x, y}, 0.0, stream);
}
} // namespace

extern "C" cudaError_t cg_cub_dot_temp_bytes(int64_t count, size_t *bytes)
{
    *bytes = 0;
    return dot(nullptr, *bytes, nullptr, nullptr, count, nullptr, 0);
}

extern "C" cudaError_t cg_cub_dots(const double *const *x, const double *const *y, int k, int64_t count, double *out,
                                   void *temp, size_t temp_bytes, cudaStream_t stream)
{
    for (int j = 0; j < k; ++j) {
        size_t bytes = temp_bytes;
        cudaError_t e = dot(temp, bytes, x[j], y[j], count, out + j, stream);
        if (e != cudaSuccess)
            return e;
    }
    return cudaSuccess;
}
