/*
 * gr_vec_fold.cuh - the end of every vector-op kernel (dot.cu, argext.cu):
 * the grid's work folded into one record per job in the same launch.
 *
 * Each block first puts its part where the last block will find it (its
 * record rec[blk], or atomics into the job's fold scratch), then calls
 * gr_vec_last_block: a barrier and the grid ticket of the single-launch
 * kernels (gr_sync.cuh: one acq_rel add, cumulative over the block's writes),
 * so the block whose ticket is grid - 1 sees every other block's writes. The
 * last block folds, writes out, and calls gr_vec_fold_done to leave the
 * ticket zero for the next launch on the same scratch and to set out->done,
 * the word the host polls.
 */
#ifndef GR_VEC_FOLD_CUH
#define GR_VEC_FOLD_CUH

#include "gr_sync.cuh"
#include "gr_vec_kernels.h"

/* Every thread of the block calls it after the block's writes; true in the job's last block. */
__device__ __forceinline__ bool gr_vec_last_block(unsigned int *ticket, unsigned nblk)
{
    __shared__ bool last;
    __syncthreads(); /* the block's record / atomics before thread 0's ticket */
    if (threadIdx.x == 0)
        last = gr_ticket_take(ticket) == nblk - 1u;
    __syncthreads();
    return last;
}

/* The last block, after its reads of the other blocks' parts and its writes of *out (every thread of the
 * block calls it): the ticket back to zero, then out->done = 1 behind a system-scope fence, so a host that
 * sees done (mapped memory) sees the whole record, and the ticket is zero for any later launch. */
__device__ __forceinline__ void gr_vec_fold_done(unsigned int *ticket, gr_vec_out_t *out)
{
    __syncthreads(); /* every thread's writes of *out before thread 0's fence (cumulative) */
    if (threadIdx.x == 0) {
        *ticket = 0u;
        __threadfence_system();
        *(volatile unsigned int *)&out->done = 1u;
    }
}

/*
 * Programmatic dependent launch (gr_cuda_launch_dot_batch with pdl): the batch kernels may be launched
 * while the stream's previous kernel ends; they read nothing before gr_pdl_wait (griddepcontrol.wait: the
 * previous grid complete and its writes visible). gr_pdl_trigger, once a block's reads are done, lets the
 * stream's next kernel launch early if it was launched so (a user's update reading an ordered result): it
 * still waits for this grid's end before it reads. Both are no-ops for launches without the attribute.
 */
__device__ __forceinline__ void gr_pdl_wait()
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}
__device__ __forceinline__ void gr_pdl_trigger()
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.launch_dependents;" :::);
#endif
}

/* A value another block wrote in this launch: through L2 (no stale L1 line). */
template <typename T> __device__ __forceinline__ T gr_vec_ld_other(const T *p) { return __ldcg(p); }

#endif /* GR_VEC_FOLD_CUH */
