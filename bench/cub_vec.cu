/*
 * cub_vec.cu - the CUB baselines of the bench's vector rows (issue 20):
 * dot(x, y) as cub::DeviceReduce::TransformReduce over a zip of x and y
 * (the product of each pair, summed), and cub::DeviceReduce::ArgMax (the
 * two-iterator form: value and int64 index), behind extern "C" launchers.
 *
 * The dot accumulates as the product's fast mode does, so the exact gates
 * hold for CUB too: f32, f16 and bf16 products are formed in double (exact)
 * and summed in double, f64 in double, integers in int64. The output is one
 * 8-byte accumulator (double or int64). ArgMax writes the maximum in the
 * input's type and its index (the first among equal maxima); f16 and bf16
 * have no ArgMax row (the bench leaves them out).
 */
#include <cub/device/device_reduce.cuh>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <thrust/iterator/zip_iterator.h>
#include <thrust/tuple.h>

#include "gr_bench_kernels.h"

namespace {

/* x * y in the accumulator type A: each factor widened first (exact for f32 and the halves into double) */
template <typename A>
struct gr_cub_product {
    template <typename Tuple>
    __host__ __device__ __forceinline__ A operator()(const Tuple &t) const
    {
        return static_cast<A>(thrust::get<0>(t)) * static_cast<A>(thrust::get<1>(t));
    }
};

struct gr_cub_plus {
    template <typename A>
    __host__ __device__ __forceinline__ A operator()(const A &a, const A &b) const
    {
        return a + b;
    }
};

/* halves widen through float (exact) */
__host__ __device__ __forceinline__ float gr_widen_half(__half h) { return __half2float(h); }
__host__ __device__ __forceinline__ float gr_widen_half(__nv_bfloat16 h) { return __bfloat162float(h); }

template <typename H>
struct gr_cub_half_product {
    template <typename Tuple>
    __host__ __device__ __forceinline__ double operator()(const Tuple &t) const
    {
        return static_cast<double>(gr_widen_half(thrust::get<0>(t))) *
               static_cast<double>(gr_widen_half(thrust::get<1>(t)));
    }
};

template <typename T, typename A, typename Product>
cudaError_t cub_dot_typed(const void *x, const void *y, uint64_t n, void *out, void *temp, size_t *temp_bytes,
                          cudaStream_t stream)
{
    auto zip = thrust::make_zip_iterator(thrust::make_tuple(static_cast<const T *>(x), static_cast<const T *>(y)));
    return cub::DeviceReduce::TransformReduce(temp, *temp_bytes, zip, static_cast<A *>(out), static_cast<int64_t>(n),
                                              gr_cub_plus(), Product(), A(0), stream);
}

template <typename T>
cudaError_t cub_argmax_typed(const void *x, uint64_t n, void *val, int64_t *idx, void *temp, size_t *temp_bytes,
                             cudaStream_t stream)
{
    return cub::DeviceReduce::ArgMax(temp, *temp_bytes, static_cast<const T *>(x), static_cast<T *>(val), idx,
                                     static_cast<int64_t>(n), stream);
}

} // namespace

extern "C" cudaError_t gr_bench_cub_dot(int dtype, const void *x, const void *y, uint64_t n, void *out, void *temp,
                                        size_t *temp_bytes, cudaStream_t stream)
{
    if (!temp_bytes)
        return cudaErrorInvalidValue;
    switch (dtype) {
    case GR_C_F32:
        return cub_dot_typed<float, double, gr_cub_product<double>>(x, y, n, out, temp, temp_bytes, stream);
    case GR_C_F64:
        return cub_dot_typed<double, double, gr_cub_product<double>>(x, y, n, out, temp, temp_bytes, stream);
    case GR_C_I32:
        return cub_dot_typed<int, long long, gr_cub_product<long long>>(x, y, n, out, temp, temp_bytes, stream);
    case GR_C_I64:
        return cub_dot_typed<long long, long long, gr_cub_product<long long>>(x, y, n, out, temp, temp_bytes,
                                                                             stream);
    case GR_C_F16:
        return cub_dot_typed<__half, double, gr_cub_half_product<__half>>(x, y, n, out, temp, temp_bytes, stream);
    case GR_C_BF16:
        return cub_dot_typed<__nv_bfloat16, double, gr_cub_half_product<__nv_bfloat16>>(x, y, n, out, temp,
                                                                                       temp_bytes, stream);
    default:
        return cudaErrorInvalidValue;
    }
}

extern "C" cudaError_t gr_bench_cub_argmax(int dtype, const void *x, uint64_t n, void *val, int64_t *idx, void *temp,
                                           size_t *temp_bytes, cudaStream_t stream)
{
    if (!temp_bytes)
        return cudaErrorInvalidValue;
    switch (dtype) {
    case GR_C_F32:
        return cub_argmax_typed<float>(x, n, val, idx, temp, temp_bytes, stream);
    case GR_C_F64:
        return cub_argmax_typed<double>(x, n, val, idx, temp, temp_bytes, stream);
    case GR_C_I32:
        return cub_argmax_typed<int>(x, n, val, idx, temp, temp_bytes, stream);
    case GR_C_I64:
        return cub_argmax_typed<long long>(x, n, val, idx, temp, temp_bytes, stream);
    default:
        return cudaErrorInvalidValue; /* f16 / bf16: no ArgMax row */
    }
}
