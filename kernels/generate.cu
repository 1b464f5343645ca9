/*
 * generate.cu - synthetic shard on the device: out[i] = generator value of
 * global index begin + i, from the same gr_gen_float / gr_gen_int code as
 * the cpu backend (integer arithmetic and exact conversions only, so the
 * bits match). f16 / bf16 elements are gr_gen_half_bits: the f32 value
 * rounded to the half type with integer operations (src/core/gr_half.h).
 *
 * Launch assumptions: any grid and block; grid-stride over 64-bit indices.
 * Every thread writes its own elements; nothing is reduced.
 */
#include "gr_kernels.h"

#define GR_GEN_BLOCK 256
/* Enough blocks to fill any current GPU many times over; the loop covers the rest. */
#define GR_GEN_GRID_MAX 65535u

template <typename T, int DTYPE>
__global__ void __launch_bounds__(GR_GEN_BLOCK)
    gr_generate_float_kernel(T *out, int gen, gr_gen_keys_t keys, uint64_t begin, uint64_t n)
{
    const uint64_t stride = (uint64_t)gridDim.x * blockDim.x;
    for (uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        out[i] = (T)gr_gen_float(gen, DTYPE, keys, begin + i);
}

template <typename T, int DTYPE>
__global__ void __launch_bounds__(GR_GEN_BLOCK)
    gr_generate_int_kernel(T *out, int gen, gr_gen_keys_t keys, uint64_t begin, uint64_t n)
{
    const uint64_t stride = (uint64_t)gridDim.x * blockDim.x;
    for (uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        out[i] = (T)gr_gen_int(gen, DTYPE, keys, begin + i);
}

/* f16 / bf16: the f32 generator's value rounded to the half type (gr_gen_half_bits), stored as its bits */
template <int DTYPE>
__global__ void __launch_bounds__(GR_GEN_BLOCK)
    gr_generate_half_kernel(uint16_t *out, int gen, gr_gen_keys_t keys, uint64_t begin, uint64_t n)
{
    const uint64_t stride = (uint64_t)gridDim.x * blockDim.x;
    for (uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        out[i] = gr_gen_half_bits(gen, DTYPE, keys, begin + i);
}

extern "C" cudaError_t gr_cuda_launch_generate(void *out, int dtype, int gen, uint64_t seed, uint64_t begin,
                                               uint64_t n, cudaStream_t stream)
{
    if (n == 0)
        return cudaSuccess;
    if (!out)
        return cudaErrorInvalidValue;
    uint64_t blocks = (n + GR_GEN_BLOCK - 1) / GR_GEN_BLOCK;
    unsigned grid = blocks > GR_GEN_GRID_MAX ? GR_GEN_GRID_MAX : (unsigned)blocks;
    gr_gen_keys_t keys = gr_gen_make_keys(seed);
    switch (dtype) {
    case GR_C_F32:
        gr_generate_float_kernel<float, GR_C_F32><<<grid, GR_GEN_BLOCK, 0, stream>>>((float *)out, gen, keys, begin, n);
        break;
    case GR_C_F64:
        gr_generate_float_kernel<double, GR_C_F64><<<grid, GR_GEN_BLOCK, 0, stream>>>((double *)out, gen, keys, begin, n);
        break;
    case GR_C_I32:
        gr_generate_int_kernel<int32_t, GR_C_I32><<<grid, GR_GEN_BLOCK, 0, stream>>>((int32_t *)out, gen, keys, begin, n);
        break;
    case GR_C_I64:
        gr_generate_int_kernel<int64_t, GR_C_I64><<<grid, GR_GEN_BLOCK, 0, stream>>>((int64_t *)out, gen, keys, begin, n);
        break;
    case GR_C_F16:
        gr_generate_half_kernel<GR_C_F16><<<grid, GR_GEN_BLOCK, 0, stream>>>((uint16_t *)out, gen, keys, begin, n);
        break;
    case GR_C_BF16:
        gr_generate_half_kernel<GR_C_BF16><<<grid, GR_GEN_BLOCK, 0, stream>>>((uint16_t *)out, gen, keys, begin, n);
        break;
    default:
        return cudaErrorInvalidValue;
    }
    return cudaGetLastError();
}
