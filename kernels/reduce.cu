/*
 * reduce.cu - extern "C" launchers of the single-pass reduce (gr_grid.cuh).
 *
 * The kernel instances live in reduce_{f32,f64,i32,i64}.cu; every instance
 * has the same parameter list, so one table lookup and cudaLaunchKernel
 * serve all of them.
 */
#include "gr_kernels.h"

extern "C" const void *gr_cuda_reduce_kernel_f32(int op, int block);
extern "C" const void *gr_cuda_reduce_kernel_f64(int op, int block);
extern "C" const void *gr_cuda_reduce_kernel_i32(int op, int block);
extern "C" const void *gr_cuda_reduce_kernel_i64(int op, int block);

static const void *kernel_for(int dtype, int op, int block)
{
    switch (dtype) {
    case GR_C_F32:
        return gr_cuda_reduce_kernel_f32(op, block);
    case GR_C_F64:
        return gr_cuda_reduce_kernel_f64(op, block);
    case GR_C_I32:
        return gr_cuda_reduce_kernel_i32(op, block);
    case GR_C_I64:
        return gr_cuda_reduce_kernel_i64(op, block);
    default:
        return 0;
    }
}

static uint64_t elem_size(int dtype) { return (dtype == GR_C_F32 || dtype == GR_C_I32) ? 4u : 8u; }

extern "C" int gr_cuda_reduce_block_supported(int block)
{
    return block == 128 || block == 256 || block == 512 || block == 1024;
}

extern "C" cudaError_t gr_cuda_reduce_occupancy(int dtype, int op, int block, int *blocks_per_sm)
{
    const void *k = kernel_for(dtype, op, block);
    *blocks_per_sm = 0;
    if (!k)
        return cudaErrorInvalidValue;
    return cudaOccupancyMaxActiveBlocksPerMultiprocessor(blocks_per_sm, k, block, 0);
}

extern "C" int gr_cuda_reduce_grid(uint64_t n, int dtype, int block, int max_grid)
{
    /* one 16-byte vector per thread at least; more blocks would only idle */
    uint64_t per_block = (uint64_t)block * (16u / elem_size(dtype));
    uint64_t g = (n + per_block - 1) / per_block;
    if (g > (uint64_t)max_grid)
        g = (uint64_t)max_grid;
    if (g > (uint64_t)GR_CUDA_GRID_MAX)
        g = GR_CUDA_GRID_MAX;
    return g < 1 ? 1 : (int)g;
}

extern "C" cudaError_t gr_cuda_launch_reduce(const gr_cuda_reduce_launch_t *l)
{
    const void *k = kernel_for(l->dtype, l->op, l->block);
    if (!k || l->grid < 1 || l->grid > GR_CUDA_GRID_MAX || !l->scratch || !l->ticket || !l->result)
        return cudaErrorInvalidValue;
    const void *in = l->in;
    uint64_t n = l->n;
    int power = l->power;
    void *scratch = l->scratch;
    unsigned int *ticket = l->ticket;
    gr_local_t *result = l->result;
    void *args[] = {(void *)&in, (void *)&n, (void *)&power, (void *)&scratch, (void *)&ticket, (void *)&result};
    cudaError_t e = cudaLaunchKernel(k, dim3((unsigned)l->grid), dim3((unsigned)l->block), args, 0, l->stream);
    if (e != cudaSuccess)
        return e;
    return cudaGetLastError();
}
