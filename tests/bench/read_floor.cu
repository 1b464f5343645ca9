/*
 * read_floor.cu - the read-floor probe's kernels (read_floor.h). Test code:
 * these kernels measure the GPU, the product's kernels are in kernels/.
 */
#include "read_floor.h"

__global__ void rf_empty_kernel(void) {}

__global__ void rf_ones_kernel(float *p, uint64_t n)
{
    for (uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (uint64_t)gridDim.x * blockDim.x)
        p[i] = 1.0f;
}

template <int HINT>
__device__ __forceinline__ float4 rf_load(const float4 *p)
{
    float4 r;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    if (HINT) { /* the prefetch-size hint is PTX for sm_80 and later; older GPUs load plainly */
        asm("ld.global.nc.L2::256B.v4.f32 {%0, %1, %2, %3}, [%4];"
            : "=f"(r.x), "=f"(r.y), "=f"(r.z), "=f"(r.w)
            : "l"(p));
        return r;
    }
#endif
    r = __ldg(p);
    return r;
}

__device__ __forceinline__ float rf_lanes(float4 r) { return (r.x + r.y) + (r.z + r.w); }

template <int B>
__device__ __forceinline__ float rf_block_sum(float a)
{
    __shared__ float w[B / 32];
#pragma unroll
    for (int o = 16; o > 0; o >>= 1)
        a += __shfl_xor_sync(0xffffffffu, a, o);
    if ((threadIdx.x & 31) == 0)
        w[threadIdx.x >> 5] = a;
    __syncthreads();
    a = 0.0f;
    if (threadIdx.x < 32) {
        a = threadIdx.x < B / 32 ? w[threadIdx.x] : 0.0f;
#pragma unroll
        for (int o = 16; o > 0; o >>= 1)
            a += __shfl_xor_sync(0xffffffffu, a, o);
    }
    return a; /* valid in thread 0 */
}

template <int B, int U, int CHUNK, int HINT, int FIN>
__global__ void __launch_bounds__(B) rf_read_kernel(const float4 *__restrict__ v, uint32_t nvec, float *partials,
                                                    unsigned int *ticket, float *result)
{
    uint32_t i, stride, end;
    if (CHUNK) {
        const uint32_t per = (nvec + gridDim.x - 1) / gridDim.x;
        const uint32_t lo = blockIdx.x * per;
        end = lo + per < nvec ? lo + per : nvec;
        i = lo + threadIdx.x;
        stride = B;
    } else {
        i = blockIdx.x * B + threadIdx.x;
        stride = gridDim.x * B;
        end = nvec;
    }
    /* all U loads of a round are issued before any is used (as in kernels/gr_thread.cuh) */
    float acc = 0.0f;
    for (; i + (uint32_t)(U - 1) * stride < end; i += (uint32_t)U * stride) {
        float4 x[U];
#pragma unroll
        for (int u = 0; u < U; ++u)
            x[u] = rf_load<HINT>(v + i + (uint32_t)u * stride);
#pragma unroll
        for (int u = 0; u < U; ++u)
            acc += rf_lanes(x[u]);
    }
    /* the last 0..U-1 vectors as one predicated batch: one round trip */
    float4 x[U - 1];
#pragma unroll
    for (int u = 0; u < U - 1; ++u)
        if (i + (uint32_t)u * stride < end)
            x[u] = rf_load<HINT>(v + i + (uint32_t)u * stride);
#pragma unroll
    for (int u = 0; u < U - 1; ++u)
        if (i + (uint32_t)u * stride < end)
            acc += rf_lanes(x[u]);

    acc = rf_block_sum<B>(acc);
    if (!FIN) {
        if (threadIdx.x == 0)
            partials[blockIdx.x] = acc;
        return;
    }
    __shared__ int last;
    if (threadIdx.x == 0) {
        partials[blockIdx.x] = acc;
        __threadfence();
        last = atomicAdd(ticket, 1u) == gridDim.x - 1u;
    }
    __syncthreads();
    if (!last || threadIdx.x >= 32)
        return;
    __threadfence();
    /* the partials 8 a lane at a time, loaded before any is added (one round trip per 256) */
    float b = 0.0f;
    for (uint32_t k = threadIdx.x; k < gridDim.x; k += 256) {
        float y[8];
#pragma unroll
        for (int u = 0; u < 8; ++u)
            y[u] = k + 32u * u < gridDim.x ? __ldcg(partials + k + 32u * u) : 0.0f;
#pragma unroll
        for (int u = 0; u < 8; ++u)
            b += y[u];
    }
#pragma unroll
    for (int o = 16; o > 0; o >>= 1)
        b += __shfl_xor_sync(0xffffffffu, b, o);
    if (threadIdx.x == 0) {
        *ticket = 0u;
        *result = b;
    }
}

/* ---- the instance table ------------------------------------------------------------ */

template <int B, int U>
static const void *rf_pick_bu(int chunk, int hint, int fin)
{
    switch ((chunk << 2) | (hint << 1) | fin) {
    case 0: return (const void *)rf_read_kernel<B, U, 0, 0, 0>;
    case 1: return (const void *)rf_read_kernel<B, U, 0, 0, 1>;
    case 2: return (const void *)rf_read_kernel<B, U, 0, 1, 0>;
    case 3: return (const void *)rf_read_kernel<B, U, 0, 1, 1>;
    case 4: return (const void *)rf_read_kernel<B, U, 1, 0, 0>;
    case 5: return (const void *)rf_read_kernel<B, U, 1, 0, 1>;
    case 6: return (const void *)rf_read_kernel<B, U, 1, 1, 0>;
    default: return (const void *)rf_read_kernel<B, U, 1, 1, 1>;
    }
}

template <int B>
static const void *rf_pick_b(const rf_cfg_t *c)
{
    switch (c->unroll) {
    case 4: return rf_pick_bu<B, 4>(c->chunk, c->hint, c->fin);
    case 8: return rf_pick_bu<B, 8>(c->chunk, c->hint, c->fin);
    case 16: return rf_pick_bu<B, 16>(c->chunk, c->hint, c->fin);
    default: return 0;
    }
}

static const void *rf_pick(const rf_cfg_t *c)
{
    if ((c->chunk | c->hint | c->fin) & ~1)
        return 0;
    switch (c->block) {
    case 128: return rf_pick_b<128>(c);
    case 256: return rf_pick_b<256>(c);
    case 512: return rf_pick_b<512>(c);
    case 1024: return rf_pick_b<1024>(c);
    default: return 0;
    }
}

extern "C" cudaError_t rf_read_occupancy(const rf_cfg_t *cfg, int *blocks_per_sm)
{
    const void *k = rf_pick(cfg);
    *blocks_per_sm = 0;
    if (!k)
        return cudaErrorInvalidValue;
    return cudaOccupancyMaxActiveBlocksPerMultiprocessor(blocks_per_sm, k, cfg->block, 0);
}

extern "C" cudaError_t rf_launch_read(const rf_cfg_t *cfg, int grid, const void *v, uint32_t nvec, float *partials,
                                      unsigned int *ticket, float *result, cudaStream_t stream)
{
    const void *k = rf_pick(cfg);
    if (!k || grid < 1 || nvec >= (1u << 28))
        return cudaErrorInvalidValue;
    void *args[] = {(void *)&v, (void *)&nvec, (void *)&partials, (void *)&ticket, (void *)&result};
    cudaError_t e = cudaLaunchKernel(k, dim3((unsigned)grid), dim3((unsigned)cfg->block), args, 0, stream);
    return e != cudaSuccess ? e : cudaGetLastError();
}

extern "C" cudaError_t rf_launch_empty(int grid, int block, cudaStream_t stream)
{
    rf_empty_kernel<<<grid, block, 0, stream>>>();
    return cudaGetLastError();
}

extern "C" cudaError_t rf_launch_ones(float *p, uint64_t n, cudaStream_t stream)
{
    rf_ones_kernel<<<1024, 256, 0, stream>>>(p, n);
    return cudaGetLastError();
}
