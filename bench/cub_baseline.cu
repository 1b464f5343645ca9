/*
 * cub_baseline.cu - the `cub` row of `gpureduce bench`: cub::DeviceReduce::Sum
 * from the toolkit's CCCL, behind an extern "C" launcher. C++ stays inside
 * this translation unit.
 *
 * The output is one 8-byte accumulator: double for f32 and f64 input, int64
 * for i32 and i64. CUB's Sum accumulates in the output type (its initial
 * value has that type), so f32 is summed in f64 and i32 in i64, the same
 * arithmetic as the product's fast mode and the ladder rows; that keeps the
 * exact gates valid for CUB too (an f32 accumulator loses iota sums above
 * 2^24). CUB still loads the input in its own type.
 */
#include <cub/device/device_reduce.cuh>
#include <cub/version.cuh>

#include "gr_bench_kernels.h"

template <typename T, typename A>
static cudaError_t cub_sum_typed(const void *in, uint64_t n, void *out, void *temp, size_t *temp_bytes,
                                 cudaStream_t stream)
{
    /* int64_t item count: CUB picks 64-bit offsets, so n may exceed 2^31 */
    return cub::DeviceReduce::Sum(temp, *temp_bytes, static_cast<const T *>(in), static_cast<A *>(out),
                                  static_cast<int64_t>(n), stream);
}

extern "C" cudaError_t gr_bench_cub_sum(int dtype, const void *in, uint64_t n, void *out, void *temp,
                                        size_t *temp_bytes, cudaStream_t stream)
{
    if (!temp_bytes)
        return cudaErrorInvalidValue;
    switch (dtype) {
    case GR_C_F32:
        return cub_sum_typed<float, double>(in, n, out, temp, temp_bytes, stream);
    case GR_C_F64:
        return cub_sum_typed<double, double>(in, n, out, temp, temp_bytes, stream);
    case GR_C_I32:
        return cub_sum_typed<int, long long>(in, n, out, temp, temp_bytes, stream);
    case GR_C_I64:
        return cub_sum_typed<long long, long long>(in, n, out, temp, temp_bytes, stream);
    default:
        return cudaErrorInvalidValue;
    }
}

extern "C" int gr_bench_cub_version(void) { return CUB_VERSION; }
