/*
 * copy.cu - the bench's ceiling (a device-to-device copy) and its two
 * helpers: a word compare that checks the copy, and a hold kernel that keeps
 * the stream waiting while the host queues a batch of timed runs.
 */
#include "gr_bench_kernels.h"

/* Independent 16-byte loads in flight per thread before the first store:
 * a copy is pure latency hiding, and one load at a time leaves HBM idle. */
#define COPY_UNROLL 8

/*
 * Copy nvec 16-byte vectors, then ntail 2-byte items after them (any element
 * size the bench has, f16 and bf16 included, is a whole number of 2 bytes).
 * Launch: any grid of GR_BENCH_BLOCK threads; grid-stride; each thread moves
 * COPY_UNROLL vectors per step, all loads issued before the stores. Loads and
 * stores are marked streaming (evict first): nothing is read twice, so
 * neither side should hold L2 lines the other needs.
 */
__global__ void __launch_bounds__(GR_BENCH_BLOCK)
    gr_bench_copy_kernel(const uint4 *__restrict__ in, uint4 *__restrict__ out, uint64_t nvec,
                         const unsigned short *__restrict__ in_tail, unsigned short *__restrict__ out_tail,
                         unsigned ntail)
{
    const uint64_t stride = (uint64_t)gridDim.x * blockDim.x;
    const uint64_t gtid = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    uint64_t i = gtid;
    for (; i + (COPY_UNROLL - 1) * stride < nvec; i += COPY_UNROLL * stride) {
        uint4 v[COPY_UNROLL];
#pragma unroll
        for (int u = 0; u < COPY_UNROLL; ++u)
            v[u] = __ldcs(in + i + u * stride);
#pragma unroll
        for (int u = 0; u < COPY_UNROLL; ++u)
            __stcs(out + i + u * stride, v[u]);
    }
    for (; i < nvec; i += stride)
        __stcs(out + i, __ldcs(in + i));
    if (gtid < ntail)
        out_tail[gtid] = in_tail[gtid];
}

extern "C" cudaError_t gr_bench_copy_occupancy(int *blocks_per_sm)
{
    return cudaOccupancyMaxActiveBlocksPerMultiprocessor(blocks_per_sm, (const void *)gr_bench_copy_kernel,
                                                         GR_BENCH_BLOCK, 0);
}

extern "C" cudaError_t gr_bench_launch_copy(const void *in, void *out, uint64_t bytes, int max_grid,
                                            cudaStream_t stream)
{
    if (!in || !out || ((uintptr_t)in & 15u) || ((uintptr_t)out & 15u) || (bytes & 1u) || max_grid < 1)
        return cudaErrorInvalidValue;
    const uint64_t nvec = bytes / 16u;
    const unsigned ntail = (unsigned)((bytes - nvec * 16u) / 2u);
    uint64_t g = (nvec + (uint64_t)GR_BENCH_BLOCK * COPY_UNROLL - 1) / ((uint64_t)GR_BENCH_BLOCK * COPY_UNROLL);
    if (g > (uint64_t)max_grid)
        g = (uint64_t)max_grid;
    if (g < 1)
        g = 1;
    const unsigned short *in_tail = (const unsigned short *)((const char *)in + nvec * 16u);
    unsigned short *out_tail = (unsigned short *)((char *)out + nvec * 16u);
    gr_bench_copy_kernel<<<(unsigned)g, GR_BENCH_BLOCK, 0, stream>>>((const uint4 *)in, (uint4 *)out, nvec, in_tail,
                                                                     out_tail, ntail);
    return cudaGetLastError();
}

/* Counts differing 2-byte words; one atomic per thread that saw any. */
__global__ void __launch_bounds__(GR_BENCH_BLOCK)
    gr_bench_compare_kernel(const unsigned short *__restrict__ a, const unsigned short *__restrict__ b, uint64_t words,
                            unsigned long long *mismatches)
{
    const uint64_t stride = (uint64_t)gridDim.x * blockDim.x;
    unsigned long long bad = 0;
    for (uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i < words; i += stride)
        bad += a[i] != b[i];
    if (bad)
        atomicAdd(mismatches, bad);
}

extern "C" cudaError_t gr_bench_launch_compare(const void *a, const void *b, uint64_t bytes,
                                               unsigned long long *mismatches, cudaStream_t stream)
{
    if (!a || !b || !mismatches || ((uintptr_t)a & 1u) || ((uintptr_t)b & 1u) || (bytes & 1u))
        return cudaErrorInvalidValue;
    const uint64_t words = bytes / 2u;
    uint64_t g = (words + GR_BENCH_BLOCK - 1) / GR_BENCH_BLOCK;
    if (g > 65535u)
        g = 65535u;
    if (g < 1)
        g = 1;
    gr_bench_compare_kernel<<<(unsigned)g, GR_BENCH_BLOCK, 0, stream>>>((const unsigned short *)a,
                                                                        (const unsigned short *)b, words, mismatches);
    return cudaGetLastError();
}

__device__ __forceinline__ unsigned long long global_ns(void)
{
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

/* One thread polls the host's flag; the stream's next work waits for it. */
__global__ void gr_bench_hold_kernel(const volatile int *flag, int gen, unsigned long long timeout_ns, int *timed_out)
{
    const unsigned long long t0 = global_ns();
    while (*flag < gen) {
        if (global_ns() - t0 > timeout_ns) {
            *timed_out = 1;
            break;
        }
        __nanosleep(500);
    }
}

extern "C" cudaError_t gr_bench_launch_hold(const volatile int *flag, int gen, unsigned long long timeout_ns,
                                            int *timed_out, cudaStream_t stream)
{
    if (!flag || !timed_out)
        return cudaErrorInvalidValue;
    gr_bench_hold_kernel<<<1, 1, 0, stream>>>(flag, gen, timeout_ns, timed_out);
    return cudaGetLastError();
}
