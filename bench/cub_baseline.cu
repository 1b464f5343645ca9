/*
 * cub_baseline.cu - the `cub` row of `gpureduce bench`: cub::DeviceReduce::Sum
 * from the toolkit's CCCL, behind an extern "C" launcher. C++ stays inside
 * this translation unit.
 *
 * The output is one 8-byte accumulator: double for f32, f64, f16 and bf16 input, int64
 * for i32 and i64. CUB's Sum accumulates in the output type (its initial
 * value has that type), so f32 is summed in f64 and i32 in i64, the same
 * arithmetic as the product's fast mode and the ladder rows; that keeps the
 * exact gates valid for CUB too (an f32 accumulator loses iota sums above
 * 2^24). CUB still loads the input in its own type.
 *
 * f16 / bf16 input (__half / __nv_bfloat16, 2 bytes per element read) sums
 * into a double too. cub::DeviceReduce::Sum cannot be instantiated for it:
 * its accumulator type is decltype(double + __half), which is ambiguous (the
 * half types convert to float and construct from double). So the row calls
 * cub::DeviceReduce::Reduce with a plus over double and initial value 0.0:
 * the same kernels as Sum, each half widened exactly to double as it is
 * folded in, the arithmetic of gpureduce's fast mode.
 */
#include <cub/device/device_reduce.cuh>
#include <cub/version.cuh>
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "gr_bench_kernels.h"

template <typename T, typename A>
static cudaError_t cub_sum_typed(const void *in, uint64_t n, void *out, void *temp, size_t *temp_bytes,
                                 cudaStream_t stream)
{
    /* int64_t item count: CUB picks 64-bit offsets, so n may exceed 2^31 */
    return cub::DeviceReduce::Sum(temp, *temp_bytes, static_cast<const T *>(in), static_cast<A *>(out),
                                  static_cast<int64_t>(n), stream);
}

/* a + b in double; a half argument converts to double exactly (through float) */
struct gr_cub_plus_f64 {
    __host__ __device__ __forceinline__ double operator()(double a, double b) const { return a + b; }
};

template <typename T>
static cudaError_t cub_sum_half(const void *in, uint64_t n, void *out, void *temp, size_t *temp_bytes,
                                cudaStream_t stream)
{
    return cub::DeviceReduce::Reduce(temp, *temp_bytes, static_cast<const T *>(in), static_cast<double *>(out),
                                     static_cast<int64_t>(n), gr_cub_plus_f64(), 0.0, stream);
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
    case GR_C_F16:
        return cub_sum_half<__half>(in, n, out, temp, temp_bytes, stream);
    case GR_C_BF16:
        return cub_sum_half<__nv_bfloat16>(in, n, out, temp, temp_bytes, stream);
    default:
        return cudaErrorInvalidValue;
    }
}

extern "C" int gr_bench_cub_version(void) { return CUB_VERSION; }
