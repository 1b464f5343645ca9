/*
 * ladder.cu - the seed ladder v0..v8 for `gpureduce bench`: the classic
 * shared-memory reduction rebuilt one idea at a time (seeds 000, 001, 003,
 * 004), so the bench shows what each idea buys on the card in hand.
 *
 * Common to every rung:
 *   - T is the element type (float, double, int, long long); A the 8-byte
 *     accumulator (double for floating input, long long for integers). f32 is
 *     widened on load, as the product's fast mode does, so the exact gates
 *     (all ones, iota) hold at every size the bench sweeps. The seeds keep
 *     the native type; with f32 that loses integers above 2^24.
 *   - Launch: GR_BENCH_BLOCK threads a block (a power of two, >= 64), the
 *     grid from gr_bench_ladder_grid(). 64-bit indices throughout.
 *   - Result: thread 0 of each block writes the block's sum to
 *     partials[blockIdx.x]; v8 adds one block that sums those into result.
 *   - None of them is deterministic across grid sizes, and none needs to be:
 *     they are the teaching ladder, not the product (kernels/gr_grid.cuh).
 */
#include "gr_bench_kernels.h"

#define LADDER_WARP 32
#define LADDER_FULL_MASK 0xffffffffu

/* ---- types -------------------------------------------------------------- */

template <typename T> struct ladder_acc;
template <> struct ladder_acc<float> { typedef double type; };
template <> struct ladder_acc<double> { typedef double type; };
template <> struct ladder_acc<int> { typedef long long type; };
template <> struct ladder_acc<long long> { typedef long long type; };

/* One 16-byte vector of T and the sum of its lanes into A (v7, v8). */
template <typename T> struct ladder_vec;
template <> struct ladder_vec<float> { typedef float4 type; enum { lanes = 4 }; };
template <> struct ladder_vec<double> { typedef double2 type; enum { lanes = 2 }; };
template <> struct ladder_vec<int> { typedef int4 type; enum { lanes = 4 }; };
template <> struct ladder_vec<long long> { typedef longlong2 type; enum { lanes = 2 }; };

__device__ __forceinline__ double vec_add(double a, float4 v)
{
    return a + (double)v.x + (double)v.y + (double)v.z + (double)v.w;
}
__device__ __forceinline__ double vec_add(double a, double2 v) { return a + v.x + v.y; }
__device__ __forceinline__ long long vec_add(long long a, int4 v)
{
    return a + (long long)v.x + (long long)v.y + (long long)v.z + (long long)v.w;
}
__device__ __forceinline__ long long vec_add(long long a, longlong2 v) { return a + v.x + v.y; }

/* ---- v0: interleaved addressing, divergent ------------------------------
 * Level s keeps the threads whose id is a multiple of 2s: every warp stays
 * busy deciding, while fewer and fewer of its lanes do work, and the `%`
 * is a slow integer operation on the critical path. */
template <typename T, typename A>
__global__ void __launch_bounds__(GR_BENCH_BLOCK) ladder_v0(const T *__restrict__ in, uint64_t n, A *partials)
{
    __shared__ A tile[GR_BENCH_BLOCK];
    const unsigned tid = threadIdx.x;
    const uint64_t i = (uint64_t)blockIdx.x * blockDim.x + tid;
    tile[tid] = i < n ? (A)in[i] : (A)0;
    __syncthreads();
    for (unsigned s = 1; s < blockDim.x; s *= 2) {
        if (tid % (2 * s) == 0)
            tile[tid] += tile[tid + s];
        __syncthreads();
    }
    if (tid == 0)
        partials[blockIdx.x] = tile[0];
}

/* ---- v1: interleaved addressing, strided index --------------------------
 * The active threads are now contiguous (thread t works on 2st), so whole
 * warps retire instead of diverging; but lanes of a warp hit addresses 2s
 * words apart, so shared memory serves them in several bank-conflicted
 * passes. */
template <typename T, typename A>
__global__ void __launch_bounds__(GR_BENCH_BLOCK) ladder_v1(const T *__restrict__ in, uint64_t n, A *partials)
{
    __shared__ A tile[GR_BENCH_BLOCK];
    const unsigned tid = threadIdx.x;
    const uint64_t i = (uint64_t)blockIdx.x * blockDim.x + tid;
    tile[tid] = i < n ? (A)in[i] : (A)0;
    __syncthreads();
    for (unsigned s = 1; s < blockDim.x; s *= 2) {
        const unsigned idx = 2 * s * tid;
        if (idx < blockDim.x)
            tile[idx] += tile[idx + s];
        __syncthreads();
    }
    if (tid == 0)
        partials[blockIdx.x] = tile[0];
}

/* The sequential-addressing tree over tile[0..blockDim.x), shared by v2, v3. */
template <typename A>
__device__ __forceinline__ void tree_sequential(A *tile, unsigned tid)
{
    for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
        if (tid < s)
            tile[tid] += tile[tid + s];
        __syncthreads();
    }
}

/* ---- v2: sequential addressing ------------------------------------------
 * Thread t adds t + s: consecutive lanes touch consecutive words, no bank
 * conflicts, and the active threads stay contiguous. Half the threads still
 * idle from the first level on. */
template <typename T, typename A>
__global__ void __launch_bounds__(GR_BENCH_BLOCK) ladder_v2(const T *__restrict__ in, uint64_t n, A *partials)
{
    __shared__ A tile[GR_BENCH_BLOCK];
    const unsigned tid = threadIdx.x;
    const uint64_t i = (uint64_t)blockIdx.x * blockDim.x + tid;
    tile[tid] = i < n ? (A)in[i] : (A)0;
    __syncthreads();
    tree_sequential(tile, tid);
    if (tid == 0)
        partials[blockIdx.x] = tile[0];
}

/* Two loads a thread, blockDim.x apart (both coalesced): the v3..v5 load. */
template <typename T, typename A>
__device__ __forceinline__ A load_two(const T *__restrict__ in, uint64_t n, unsigned tid)
{
    const uint64_t i = (uint64_t)blockIdx.x * (2u * blockDim.x) + tid;
    A a = i < n ? (A)in[i] : (A)0;
    if (i + blockDim.x < n)
        a += (A)in[i + blockDim.x];
    return a;
}

/* ---- v3: first add during load ------------------------------------------
 * Each thread adds two elements before the tree, so no thread is idle at the
 * first level and half as many blocks are launched. */
template <typename T, typename A>
__global__ void __launch_bounds__(GR_BENCH_BLOCK) ladder_v3(const T *__restrict__ in, uint64_t n, A *partials)
{
    __shared__ A tile[GR_BENCH_BLOCK];
    const unsigned tid = threadIdx.x;
    tile[tid] = load_two<T, A>(in, n, tid);
    __syncthreads();
    tree_sequential(tile, tid);
    if (tid == 0)
        partials[blockIdx.x] = tile[0];
}

/*
 * The last six levels by warp 0 alone, without __syncthreads(). The seeds
 * do this with a `volatile` pointer and no barrier, relying on the 32 lanes
 * moving in lock step; since Volta's independent thread scheduling that is
 * a data race (undefined, and flagged by racecheck). Here each level reads,
 * then __syncwarp(), then writes, then __syncwarp(): the same idea (no
 * block-wide barrier for the last warp), made correct. Needs 64 live values
 * in tile[0..64); returns the block's sum in lane 0.
 */
template <typename A>
__device__ __forceinline__ A warp_tail_syncwarp(A *tile, unsigned tid)
{
    A v = tile[tid] + tile[tid + 32];
    tile[tid] = v;
    __syncwarp();
#pragma unroll
    for (unsigned off = 16; off > 0; off >>= 1) {
        v += tile[tid + off];
        __syncwarp();
        tile[tid] = v;
        __syncwarp();
    }
    return v;
}

/* ---- v4: unrolled last warp ---------------------------------------------
 * The tree stops at 64 live values; warp 0 finishes without block barriers. */
template <typename T, typename A>
__global__ void __launch_bounds__(GR_BENCH_BLOCK) ladder_v4(const T *__restrict__ in, uint64_t n, A *partials)
{
    __shared__ A tile[GR_BENCH_BLOCK];
    const unsigned tid = threadIdx.x;
    tile[tid] = load_two<T, A>(in, n, tid);
    __syncthreads();
    for (unsigned s = blockDim.x / 2; s > LADDER_WARP; s >>= 1) {
        if (tid < s)
            tile[tid] += tile[tid + s];
        __syncthreads();
    }
    if (tid < LADDER_WARP) {
        const A v = warp_tail_syncwarp(tile, tid);
        if (tid == 0)
            partials[blockIdx.x] = v;
    }
}

/* The v4 tree with the block size known at compile time: the loop below has
 * a constant trip count, so it compiles to straight-line levels with no loop
 * counter and no test on s (the seeds' cascade of `if (BS >= 512)` blocks). */
template <unsigned BS, typename A>
__device__ __forceinline__ void tree_unrolled(A *tile, unsigned tid)
{
#pragma unroll
    for (unsigned s = BS / 2; s > LADDER_WARP; s >>= 1) {
        if (tid < s)
            tile[tid] += tile[tid + s];
        __syncthreads();
    }
}

/* ---- v5: complete unroll, block size as a template argument -------------- */
template <unsigned BS, typename T, typename A>
__global__ void __launch_bounds__(BS) ladder_v5(const T *__restrict__ in, uint64_t n, A *partials)
{
    static_assert(BS >= 64 && (BS & (BS - 1)) == 0, "the warp tail needs a power-of-two block of >= 64 threads");
    __shared__ A tile[BS];
    const unsigned tid = threadIdx.x;
    const uint64_t i = (uint64_t)blockIdx.x * (2u * BS) + tid;
    A a = i < n ? (A)in[i] : (A)0;
    if (i + BS < n)
        a += (A)in[i + BS];
    tile[tid] = a;
    __syncthreads();
    tree_unrolled<BS>(tile, tid);
    if (tid < LADDER_WARP) {
        const A v = warp_tail_syncwarp(tile, tid);
        if (tid == 0)
            partials[blockIdx.x] = v;
    }
}

/* ---- v6: grid-stride, cascaded ------------------------------------------
 * A fixed grid of resident blocks; each thread walks the input two loads at
 * a time with a grid stride and keeps a running sum in a register, so the
 * tree runs once per block instead of once per 2*BS elements (Brent's
 * theorem: O(n/p + log p) work per thread). */
template <unsigned BS, typename T, typename A>
__global__ void __launch_bounds__(BS) ladder_v6(const T *__restrict__ in, uint64_t n, A *partials)
{
    __shared__ A tile[BS];
    const unsigned tid = threadIdx.x;
    const uint64_t stride = (uint64_t)gridDim.x * (2u * BS);
    A a = (A)0;
    for (uint64_t i = (uint64_t)blockIdx.x * (2u * BS) + tid; i < n; i += stride) {
        a += (A)in[i];
        if (i + BS < n)
            a += (A)in[i + BS];
    }
    tile[tid] = a;
    __syncthreads();
    tree_unrolled<BS>(tile, tid);
    if (tid < LADDER_WARP) {
        const A v = warp_tail_syncwarp(tile, tid);
        if (tid == 0)
            partials[blockIdx.x] = v;
    }
}

template <typename A>
__device__ __forceinline__ A warp_sum_shfl(A v)
{
#pragma unroll
    for (int off = LADDER_WARP / 2; off > 0; off >>= 1)
        v += __shfl_down_sync(LADDER_FULL_MASK, v, off);
    return v;
}

/* ---- v7: shuffle tail + 16-byte loads -----------------------------------
 * The grid-stride loop reads one 16-byte vector a lane per step (a quarter
 * of the load instructions for 4-byte types). The elements before the first
 * 16-byte boundary (pointers into an array need not be aligned) and after
 * the last whole vector are taken one each by the first threads of the grid,
 * so no element is dropped or read twice. The tree is gone: each warp sums
 * in registers with __shfl_down_sync, warp 0 sums the warps' values. */
template <unsigned BS, typename T, typename A>
__global__ void __launch_bounds__(BS) ladder_v7(const T *__restrict__ in, uint64_t n, A *partials)
{
    typedef typename ladder_vec<T>::type V;
    const unsigned lanes = ladder_vec<T>::lanes;
    __shared__ A warp_sums[BS / LADDER_WARP];
    const unsigned tid = threadIdx.x;
    const uint64_t gtid = (uint64_t)blockIdx.x * BS + tid;
    const uint64_t stride = (uint64_t)gridDim.x * BS;

    uint64_t head = (uint64_t)((16u - ((uintptr_t)in & 15u)) & 15u) / sizeof(T);
    if (head > n)
        head = n;
    const uint64_t nvec = (n - head) / lanes;
    const V *vin = reinterpret_cast<const V *>(in + head);

    A a = (A)0;
    for (uint64_t k = gtid; k < nvec; k += stride)
        a = vec_add(a, vin[k]);
    const uint64_t tail = head + nvec * lanes;
    if (gtid < head)
        a += (A)in[gtid];
    if (tail + gtid < n)
        a += (A)in[tail + gtid];

    a = warp_sum_shfl(a);
    if ((tid & (LADDER_WARP - 1)) == 0)
        warp_sums[tid / LADDER_WARP] = a;
    __syncthreads();
    if (tid < LADDER_WARP) {
        a = tid < BS / LADDER_WARP ? warp_sums[tid] : (A)0;
        a = warp_sum_shfl(a);
        if (tid == 0)
            partials[blockIdx.x] = a;
    }
}

/* ---- dispatch -------------------------------------------------------------- */

template <typename T>
static const void *kernel_for(int rung)
{
    typedef typename ladder_acc<T>::type A;
    switch (rung) {
    case 0:
        return (const void *)ladder_v0<T, A>;
    case 1:
        return (const void *)ladder_v1<T, A>;
    case 2:
        return (const void *)ladder_v2<T, A>;
    case 3:
        return (const void *)ladder_v3<T, A>;
    case 4:
        return (const void *)ladder_v4<T, A>;
    case 5:
        return (const void *)ladder_v5<GR_BENCH_BLOCK, T, A>;
    case 6:
        return (const void *)ladder_v6<GR_BENCH_BLOCK, T, A>;
    case 7:
    case 8:
        return (const void *)ladder_v7<GR_BENCH_BLOCK, T, A>;
    default:
        return 0;
    }
}

static const void *ladder_kernel(int rung, int dtype)
{
    switch (dtype) {
    case GR_C_F32:
        return kernel_for<float>(rung);
    case GR_C_F64:
        return kernel_for<double>(rung);
    case GR_C_I32:
        return kernel_for<int>(rung);
    case GR_C_I64:
        return kernel_for<long long>(rung);
    default:
        return 0;
    }
}

static uint64_t dtype_bytes(int dtype) { return (dtype == GR_C_F32 || dtype == GR_C_I32) ? 4u : 8u; }

extern "C" int gr_bench_ladder_grid(int rung, int dtype, uint64_t n, int resident_blocks)
{
    uint64_t per_block;
    if (rung <= 2)
        per_block = GR_BENCH_BLOCK;
    else if (rung <= 6)
        per_block = 2u * GR_BENCH_BLOCK;
    else
        per_block = (uint64_t)GR_BENCH_BLOCK * (16u / dtype_bytes(dtype));
    uint64_t g = (n + per_block - 1) / per_block;
    if (rung >= 6 && g > (uint64_t)resident_blocks)
        g = (uint64_t)resident_blocks;
    if (g > 0x7fffffffu)
        g = 0x7fffffffu; /* v0..v5 cover this many blocks' worth only: ~5e11 elements */
    return g < 1 ? 1 : (int)g;
}

extern "C" cudaError_t gr_bench_ladder_occupancy(int rung, int dtype, int *blocks_per_sm)
{
    const void *k = ladder_kernel(rung, dtype);
    *blocks_per_sm = 0;
    if (!k)
        return cudaErrorInvalidValue;
    return cudaOccupancyMaxActiveBlocksPerMultiprocessor(blocks_per_sm, k, GR_BENCH_BLOCK, 0);
}

template <typename T>
static void launch_typed(const gr_bench_ladder_launch_t *l)
{
    typedef typename ladder_acc<T>::type A;
    const T *in = static_cast<const T *>(l->in);
    A *p = static_cast<A *>(l->partials);
    const dim3 grid((unsigned)l->grid), block(GR_BENCH_BLOCK);
    cudaStream_t s = l->stream;
    switch (l->rung) {
    case 0:
        ladder_v0<T, A><<<grid, block, 0, s>>>(in, l->n, p);
        break;
    case 1:
        ladder_v1<T, A><<<grid, block, 0, s>>>(in, l->n, p);
        break;
    case 2:
        ladder_v2<T, A><<<grid, block, 0, s>>>(in, l->n, p);
        break;
    case 3:
        ladder_v3<T, A><<<grid, block, 0, s>>>(in, l->n, p);
        break;
    case 4:
        ladder_v4<T, A><<<grid, block, 0, s>>>(in, l->n, p);
        break;
    case 5:
        ladder_v5<GR_BENCH_BLOCK, T, A><<<grid, block, 0, s>>>(in, l->n, p);
        break;
    case 6:
        ladder_v6<GR_BENCH_BLOCK, T, A><<<grid, block, 0, s>>>(in, l->n, p);
        break;
    case 7:
        ladder_v7<GR_BENCH_BLOCK, T, A><<<grid, block, 0, s>>>(in, l->n, p);
        break;
    case 8:
        /* ---- v8: two launches. v7 leaves `grid` partials, then one block of
         * the same kernel sums them: one value on the device, at the price of
         * a second launch and a second pass over grid accumulators. */
        ladder_v7<GR_BENCH_BLOCK, T, A><<<grid, block, 0, s>>>(in, l->n, p);
        if (cudaPeekAtLastError() == cudaSuccess)
            ladder_v7<GR_BENCH_BLOCK, A, A><<<1, block, 0, s>>>(p, (uint64_t)l->grid, static_cast<A *>(l->result));
        break;
    }
}

extern "C" cudaError_t gr_bench_launch_ladder(const gr_bench_ladder_launch_t *l)
{
    if (!l || l->rung < 0 || l->rung >= GR_BENCH_LADDER_RUNGS || l->grid < 1 || !l->partials || !l->in ||
        (l->rung == 8 && !l->result) || !ladder_kernel(l->rung, l->dtype))
        return cudaErrorInvalidValue;
    if (l->n == 0)
        return cudaErrorInvalidValue;
    switch (l->dtype) {
    case GR_C_F32:
        launch_typed<float>(l);
        break;
    case GR_C_F64:
        launch_typed<double>(l);
        break;
    case GR_C_I32:
        launch_typed<int>(l);
        break;
    case GR_C_I64:
        launch_typed<long long>(l);
        break;
    }
    return cudaGetLastError();
}
