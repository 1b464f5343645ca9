/*
 * argext.cu - argmin and argmax with the global index, on the GPU, folded to
 * one record per job in the same launch. Launch: grid blocks of
 * GR_VEC_BLOCK threads; thread t of nt visits the grid-stride share of
 * gr_vec_loop.cuh (head, 16-byte vectors t + k nt for k = 0, 1, ..., tail).
 *
 * The fast loop is specialised by dtype and side (W: GR_VEC_ARG_MIN,
 * GR_VEC_ARG_MAX or both) and compares in the element's own type (f32;
 * f16 / bf16 widened exactly to f32; f64; int32; int64). Per lane of a
 * vector group (4 x 32-bit or 2 x 64-bit elements) a thread keeps the best
 * value and a 32-bit position: its vector number k (times 2 plus the group,
 * for the 8 halves of a vector). A lane sees its elements in increasing index
 * order, so a strict comparison keeps the first of equal values, and the
 * global index base + head + (t + k nt) L + group S + lane is built once, at
 * the end. The start state (+-Inf or the integer limit, position 0) is right
 * whenever the thread has a vector: if no element beats it, the first one
 * (position 0) equals it. NaN compares false, so it never enters a lane; one
 * predicate per element records that a thread saw one, and such a thread
 * redoes its share with the exact per-element path (64-bit indices, the NaN
 * index), so NaN-free data pays one instruction an element for NaN.
 *
 * The merge keeps the lowest global index among equal values and the lowest
 * NaN index, so any grid, lane split and order gives the same record as the
 * cpu backend (src/core/argext.c): -0.0 == +0.0 (IEEE), zeros tie, the lower
 * index wins with its own sign. The side not asked for stays the empty state.
 * Each block merges its threads (warp shuffles), writes rec[blk], and the
 * job's last block (gr_vec_fold.cuh) merges every record into out->arg.
 * argext_batch runs many jobs (any dtypes and sides) in one launch, each block
 * the body of its job's block, so each job's records are its single launch's.
 * One thread's part (the merge, the exact path, the fast loop) is in
 * gr_argext.cuh; this file holds the block merge, the fold and the launches.
 */
#include "gr_argext.cuh"
#include "gr_common.h"
#include "gr_vec_fold.cuh"
#include "gr_vec_kernels.h"

#include <stdint.h>

namespace {

using namespace gr_arg;

/* f(d, s) for each field of the sides W (and the NaN index, floating types) of d and s. */
template <bool INT, int W, typename F>
__device__ __forceinline__ void side_fields(gr_vec_arg_rec_t &d, const gr_vec_arg_rec_t &s, F f)
{
    if constexpr (!INT)
        f(d.nan_i, s.nan_i);
    const auto side = [&](auto lo) {
        constexpr bool LO = decltype(lo)::value;
        f(side_f<INT, LO, false>(d), side_f<INT, LO, false>(s));
        f(side_f<INT, LO, true>(d), side_f<INT, LO, true>(s));
    };
    if constexpr ((W & kMin) != 0)
        side(std::true_type());
    if constexpr ((W & kMax) != 0)
        side(std::false_type());
}

/* Lane + off's record (the fields of the sides W; the rest: a's). */
template <bool INT, int W>
__device__ __forceinline__ gr_vec_arg_rec_t shfl_rec(const gr_vec_arg_rec_t &a, int off)
{
    gr_vec_arg_rec_t b = a;
    side_fields<INT, W>(b, a, [off](auto &d, const auto &s) { d = __shfl_down_sync(0xFFFFFFFFu, s, off); });
    return b;
}

/* The block's records merged into thread 0's a (the others' a: partial). sh: 32 records of shared memory,
 * free on entry (every thread of the block calls it). */
template <bool INT, int W>
__device__ __forceinline__ void block_merge(gr_vec_arg_rec_t &a, gr_vec_arg_rec_t *sh)
{
    constexpr int NW = GR_VEC_BLOCK / 32;
    const unsigned lane = threadIdx.x % 32u, warp = threadIdx.x / 32u;
#pragma unroll
    for (int off = 16; off > 0; off >>= 1)
        merge<INT, W>(a, shfl_rec<INT, W>(a, off));
    if (lane == 0)
        sh[warp] = a;
    __syncthreads();
    if (warp == 0) {
        if (lane < NW)
            a = sh[lane];
        else
            arg_init(a);
#pragma unroll
        for (int off = NW / 2; off > 0; off >>= 1)
            merge<INT, W>(a, shfl_rec<INT, W>(a, off));
    }
}

/* Record r of another block of this launch: the sides W and the NaN index (the rest: the empty state). */
template <bool INT, int W>
__device__ __forceinline__ gr_vec_arg_rec_t load_other(const gr_vec_arg_rec_t *r)
{
    gr_vec_arg_rec_t b;
    arg_init(b);
    side_fields<INT, W>(b, *r, [](auto &d, const auto &s) { d = gr_vec_ld_other(&s); });
    return b;
}

/* Block blk of nblk of one job: its record rec[blk]; the job's last block merges all nblk into out->arg and
 * leaves fold's ticket zero. sh: 32 records of the block's shared memory. */
template <int DT, int W>
__device__ __forceinline__ void argext_body(const void *x, uint64_t n, int64_t base, gr_vec_arg_rec_t *rec,
                                            unsigned blk, unsigned nblk, gr_vec_fold_t *fold, gr_vec_out_t *out,
                                            gr_vec_arg_rec_t *sh)
{
    constexpr bool INT = fast<DT>::INT;
    gr_vec_arg_rec_t a;
    arg_init(a);
    thread_share<DT, W>(x, n, base, (uint64_t)blk * GR_VEC_BLOCK + threadIdx.x, (uint64_t)nblk * GR_VEC_BLOCK, a);
    block_merge<INT, W>(a, sh);
    if (threadIdx.x == 0)
        rec[blk] = a;
    if (!gr_vec_last_block(&fold->ticket, nblk))
        return;
    gr_vec_arg_rec_t f;
    arg_init(f);
    for (unsigned b = threadIdx.x; b < nblk; b += GR_VEC_BLOCK)
        merge<INT, W>(f, load_other<INT, W>(rec + b));
    block_merge<INT, W>(f, sh);
    if (threadIdx.x == 0)
        out->arg = f;
    gr_vec_fold_done(&fold->ticket, out);
}

/* 4 blocks per SM (<= 64 registers): gr_vec_grid launches at most 4 per SM, all resident at once */
template <int DT, int W>
__global__ void __launch_bounds__(GR_VEC_BLOCK, 4)
    argext(const void *x, uint64_t n, int64_t base, gr_vec_arg_rec_t *rec, gr_vec_fold_t *fold, gr_vec_out_t *out)
{
    __shared__ gr_vec_arg_rec_t sh[32];
    argext_body<DT, W>(x, n, base, rec, blockIdx.x, gridDim.x, fold, out, sh);
}

/* The body of a job's block for its sides (which, checked by the launchers). */
template <int DT>
__device__ __forceinline__ void argext_job(const gr_vec_jobs_t &jobs, const gr_vec_job_t *J, unsigned blk,
                                           gr_vec_arg_rec_t *sh)
{
    gr_vec_arg_rec_t *rec = (gr_vec_arg_rec_t *)J->rec;
    gr_vec_fold_t *fold = jobs.fold + J->slot;
    gr_vec_out_t *out = jobs.out + J->slot;
    const unsigned nblk = (unsigned)J->grid;
    switch (J->which) {
    case kMin:
        argext_body<DT, kMin>(J->x, J->n, J->base, rec, blk, nblk, fold, out, sh);
        break;
    case kMax:
        argext_body<DT, kMax>(J->x, J->n, J->base, rec, blk, nblk, fold, out, sh);
        break;
    default:
        argext_body<DT, kMin | kMax>(J->x, J->n, J->base, rec, blk, nblk, fold, out, sh);
        break;
    }
}

/* A batch of jobs in one launch: block b runs the body of its job's block b - first_block, the code the
 * single launch runs for that block, so every record and out record is the single launch's. */
/* __maxnreg__(128), not 4 blocks per SM: a batch holds >= 2 jobs of 4 blocks per SM each, so it runs
 * in waves anyway, and at 64 registers the inlined bodies spill. */
__global__ void __maxnreg__(128) argext_batch(const __grid_constant__ gr_vec_jobs_t jobs)
{
    __shared__ gr_vec_arg_rec_t sh[32];
    unsigned blk;
    const gr_vec_job_t *J = gr_vec_find_job(&jobs, blockIdx.x, &blk);
    switch (J->dtype) {
    case GR_C_F32:
        argext_job<GR_C_F32>(jobs, J, blk, sh);
        break;
    case GR_C_F64:
        argext_job<GR_C_F64>(jobs, J, blk, sh);
        break;
    case GR_C_F16:
        argext_job<GR_C_F16>(jobs, J, blk, sh);
        break;
    case GR_C_BF16:
        argext_job<GR_C_BF16>(jobs, J, blk, sh);
        break;
    case GR_C_I32:
        argext_job<GR_C_I32>(jobs, J, blk, sh);
        break;
    case GR_C_I64:
        argext_job<GR_C_I64>(jobs, J, blk, sh);
        break;
    default:
        break;
    }
}

template <int DT>
cudaError_t launch_dt(const void *x, uint64_t n, int64_t base, int which, int grid, gr_vec_arg_rec_t *rec,
                      gr_vec_fold_t *fold, gr_vec_out_t *out, cudaStream_t stream)
{
    switch (which) {
    case kMin:
        argext<DT, kMin><<<grid, GR_VEC_BLOCK, 0, stream>>>(x, n, base, rec, fold, out);
        break;
    case kMax:
        argext<DT, kMax><<<grid, GR_VEC_BLOCK, 0, stream>>>(x, n, base, rec, fold, out);
        break;
    default:
        argext<DT, kMin | kMax><<<grid, GR_VEC_BLOCK, 0, stream>>>(x, n, base, rec, fold, out);
        break;
    }
    return cudaGetLastError();
}

bool which_ok(int which) { return which >= kMin && which <= (kMin | kMax); }

} // namespace

extern "C" cudaError_t gr_cuda_launch_argext(const void *x, uint64_t n, int dtype, int64_t base, int which, int grid,
                                             gr_vec_arg_rec_t *rec, gr_vec_fold_t *fold, gr_vec_out_t *out,
                                             cudaStream_t stream)
{
    if (grid < 1 || !which_ok(which))
        return cudaErrorInvalidValue;
    switch (dtype) {
    case GR_C_F32:
        return launch_dt<GR_C_F32>(x, n, base, which, grid, rec, fold, out, stream);
    case GR_C_F64:
        return launch_dt<GR_C_F64>(x, n, base, which, grid, rec, fold, out, stream);
    case GR_C_F16:
        return launch_dt<GR_C_F16>(x, n, base, which, grid, rec, fold, out, stream);
    case GR_C_BF16:
        return launch_dt<GR_C_BF16>(x, n, base, which, grid, rec, fold, out, stream);
    case GR_C_I32:
        return launch_dt<GR_C_I32>(x, n, base, which, grid, rec, fold, out, stream);
    case GR_C_I64:
        return launch_dt<GR_C_I64>(x, n, base, which, grid, rec, fold, out, stream);
    default:
        return cudaErrorInvalidValue;
    }
}

extern "C" cudaError_t gr_cuda_launch_argext_batch(const gr_vec_jobs_t *jobs, cudaStream_t stream)
{
    if (jobs->njobs < 1 || jobs->njobs > GR_VEC_JOBS_MAX)
        return cudaErrorInvalidValue;
    for (int j = 0; j < jobs->njobs; ++j)
        if (!which_ok(jobs->job[j].which) || jobs->job[j].grid < 1)
            return cudaErrorInvalidValue;
    const gr_vec_job_t &last = jobs->job[jobs->njobs - 1];
    argext_batch<<<last.first_block + (unsigned)last.grid, GR_VEC_BLOCK, 0, stream>>>(*jobs);
    return cudaGetLastError();
}
