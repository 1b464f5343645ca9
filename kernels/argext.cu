/*
 * argext.cu - argmin and argmax with the global index, on the GPU. Launch:
 * grid blocks of GR_VEC_BLOCK threads, grid-stride loop (floating types:
 * 16-byte vectors, 2 in flight, gr_vec_loop.cuh); each thread keeps 2 states
 * of gr_argext_t (src/core/gr_vec.h) and merges them, the block merges its threads'
 * states in shared memory and thread 0 writes one record per block. The merge
 * keeps the lowest global index among equal values and the lowest NaN index,
 * so any grid and any order gives the same value and index as the cpu
 * backend. -0.0 == +0.0 (IEEE): zeros tie, the lower index wins.
 * argext_batch runs many jobs (any dtypes) in one launch, each block the
 * body of its job's block, so each job's records are its single launch's.
 */
#include "gr_common.h"
#include "gr_vec_kernels.h"
#include "gr_vec_loop.cuh"

#include <stdint.h>

namespace {

__device__ __forceinline__ void merge(gr_vec_arg_rec_t &a, const gr_vec_arg_rec_t &b)
{
    if (b.nan_i < a.nan_i)
        a.nan_i = b.nan_i;
    if (b.fmin < a.fmin || (b.fmin == a.fmin && b.fmin_i < a.fmin_i)) {
        a.fmin = b.fmin;
        a.fmin_i = b.fmin_i;
    }
    if (b.fmax > a.fmax || (b.fmax == a.fmax && b.fmax_i < a.fmax_i)) {
        a.fmax = b.fmax;
        a.fmax_i = b.fmax_i;
    }
    if (b.imin < a.imin || (b.imin == a.imin && b.imin_i < a.imin_i)) {
        a.imin = b.imin;
        a.imin_i = b.imin_i;
    }
    if (b.imax > a.imax || (b.imax == a.imax && b.imax_i < a.imax_i)) {
        a.imax = b.imax;
        a.imax_i = b.imax_i;
    }
}

/* The empty state: no value seen. */
__device__ __forceinline__ void arg_init(gr_vec_arg_rec_t &a)
{
    a.fmin = __longlong_as_double(0x7FF0000000000000ll);  /* +Inf */
    a.fmax = __longlong_as_double((long long)0xFFF0000000000000ull); /* -Inf */
    a.imin = INT64_MAX;
    a.imax = INT64_MIN;
    a.fmin_i = a.fmax_i = a.imin_i = a.imax_i = a.nan_i = INT64_MAX;
}

/* One thread's floating states: ARG_U independent slots (gr_vec_loop.cuh), merged at the end.
 * Comparisons take the index on ties, so neither the slots nor their order change the result. */
#define ARG_U 2
struct arg_acc {
    gr_vec_arg_rec_t st[ARG_U];
    int64_t base;
    __device__ __forceinline__ explicit arg_acc(int64_t b) : base(b)
    {
#pragma unroll
        for (int u = 0; u < ARG_U; ++u)
            arg_init(st[u]);
    }
    __device__ __forceinline__ void operator()(int u, double v, double, uint64_t i)
    {
        const int64_t gi = base + (int64_t)i;
        gr_vec_arg_rec_t &a = st[u];
        if (v != v) {
            if (gi < a.nan_i)
                a.nan_i = gi;
            return;
        }
        if (v < a.fmin || (v == a.fmin && gi < a.fmin_i)) {
            a.fmin = v;
            a.fmin_i = gi;
        }
        if (v > a.fmax || (v == a.fmax && gi < a.fmax_i)) {
            a.fmax = v;
            a.fmax_i = gi;
        }
    }
};

/* Block blk of nblk: its record rec[blk]. sh: the block's shared memory. */
template <int DT>
__device__ __forceinline__ void argext_body(const void *x, uint64_t n, int64_t base, gr_vec_arg_rec_t *rec,
                                            unsigned blk, unsigned nblk, gr_vec_arg_rec_t *sh)
{
    gr_vec_arg_rec_t a;
    arg_init(a);
    if constexpr (DT == GR_C_I32 || DT == GR_C_I64) {
        const uint64_t stride = (uint64_t)nblk * GR_VEC_BLOCK;
        for (uint64_t i = (uint64_t)blk * GR_VEC_BLOCK + threadIdx.x; i < n; i += stride) {
            int64_t gi = base + (int64_t)i;
            int64_t v = DT == GR_C_I32 ? (int64_t)((const int32_t *)x)[i] : ((const int64_t *)x)[i];
            /* a thread's indices grow: strict comparisons keep its first */
            if (v < a.imin) {
                a.imin = v;
                a.imin_i = gi;
            }
            if (v > a.imax) {
                a.imax = v;
                a.imax_i = gi;
            }
        }
    } else {
        typedef typename gr_vec_elem<DT>::type T;
        arg_acc acc(base);
        /* 2 vectors in flight, 2 states (8 halves: 1 vector, slot 0 only): more spill at the 64
         * registers of 4 blocks per SM (ptxas, sm_90) */
        constexpr int U = sizeof(T) == 2 ? 1 : ARG_U;
        gr_vec_loop<T, false, U>((const T *)x, (const T *)nullptr, n, (uint64_t)blk * GR_VEC_BLOCK + threadIdx.x,
                                 (uint64_t)nblk * GR_VEC_BLOCK, acc);
        a = acc.st[0];
#pragma unroll
        for (int u = 1; u < ARG_U; ++u)
            merge(a, acc.st[u]);
    }
    sh[threadIdx.x] = a;
    __syncthreads();
    for (int w = GR_VEC_BLOCK / 2; w > 0; w >>= 1) {
        if (threadIdx.x < w)
            merge(sh[threadIdx.x], sh[threadIdx.x + w]);
        __syncthreads();
    }
    if (threadIdx.x == 0)
        rec[blk] = sh[0];
}

/* 4 blocks per SM (<= 64 registers): gr_vec_grid launches 4 per SM, all resident at once */
template <int DT>
__global__ void __launch_bounds__(GR_VEC_BLOCK, 4) argext(const void *x, uint64_t n, int64_t base,
                                                          gr_vec_arg_rec_t *rec)
{
    __shared__ gr_vec_arg_rec_t sh[GR_VEC_BLOCK];
    argext_body<DT>(x, n, base, rec, blockIdx.x, gridDim.x, sh);
}

/* A batch of jobs in one launch: block b runs the body of its job's block b - first_block, the code the
 * single launch runs for that block, so every record is the single launch's. */
/* __maxnreg__(128), not 4 blocks per SM: a batch holds >= 2 jobs of 4 blocks per SM each, so it runs
 * in waves anyway, and at 64 registers the inlined bodies spill. */
__global__ void __maxnreg__(128) argext_batch(const __grid_constant__ gr_vec_jobs_t jobs)
{
    __shared__ gr_vec_arg_rec_t sh[GR_VEC_BLOCK];
    unsigned blk;
    const gr_vec_job_t *J = gr_vec_find_job(&jobs, blockIdx.x, &blk);
    const unsigned nblk = (unsigned)J->grid;
    gr_vec_arg_rec_t *rec = (gr_vec_arg_rec_t *)J->rec;
    switch (J->dtype) {
    case GR_C_F32:
        argext_body<GR_C_F32>(J->x, J->n, J->base, rec, blk, nblk, sh);
        break;
    case GR_C_F64:
        argext_body<GR_C_F64>(J->x, J->n, J->base, rec, blk, nblk, sh);
        break;
    case GR_C_F16:
        argext_body<GR_C_F16>(J->x, J->n, J->base, rec, blk, nblk, sh);
        break;
    case GR_C_BF16:
        argext_body<GR_C_BF16>(J->x, J->n, J->base, rec, blk, nblk, sh);
        break;
    case GR_C_I32:
        argext_body<GR_C_I32>(J->x, J->n, J->base, rec, blk, nblk, sh);
        break;
    case GR_C_I64:
        argext_body<GR_C_I64>(J->x, J->n, J->base, rec, blk, nblk, sh);
        break;
    default:
        break;
    }
}

} // namespace

extern "C" cudaError_t gr_cuda_launch_argext(const void *x, uint64_t n, int dtype, int64_t base, int grid,
                                             gr_vec_arg_rec_t *rec, cudaStream_t stream)
{
    if (grid < 1)
        return cudaErrorInvalidValue;
    switch (dtype) {
    case GR_C_F32:
        argext<GR_C_F32><<<grid, GR_VEC_BLOCK, 0, stream>>>(x, n, base, rec);
        break;
    case GR_C_F64:
        argext<GR_C_F64><<<grid, GR_VEC_BLOCK, 0, stream>>>(x, n, base, rec);
        break;
    case GR_C_F16:
        argext<GR_C_F16><<<grid, GR_VEC_BLOCK, 0, stream>>>(x, n, base, rec);
        break;
    case GR_C_BF16:
        argext<GR_C_BF16><<<grid, GR_VEC_BLOCK, 0, stream>>>(x, n, base, rec);
        break;
    case GR_C_I32:
        argext<GR_C_I32><<<grid, GR_VEC_BLOCK, 0, stream>>>(x, n, base, rec);
        break;
    case GR_C_I64:
        argext<GR_C_I64><<<grid, GR_VEC_BLOCK, 0, stream>>>(x, n, base, rec);
        break;
    default:
        return cudaErrorInvalidValue;
    }
    return cudaGetLastError();
}

extern "C" cudaError_t gr_cuda_launch_argext_batch(const gr_vec_jobs_t *jobs, cudaStream_t stream)
{
    if (jobs->njobs < 1 || jobs->njobs > GR_VEC_JOBS_MAX)
        return cudaErrorInvalidValue;
    const gr_vec_job_t &last = jobs->job[jobs->njobs - 1];
    argext_batch<<<last.first_block + (unsigned)last.grid, GR_VEC_BLOCK, 0, stream>>>(*jobs);
    return cudaGetLastError();
}
