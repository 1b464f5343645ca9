/*
 * gr_block.cuh - block layer: every warp reduces with gr_warp_reduce, lane 0
 * of each warp parks its result in shared memory, and warp 0 reduces those
 * BLOCK/32 values in warp order.
 *
 * Launch assumptions: blockDim.x == BLOCK, BLOCK a multiple of 32 and at most
 * 1024; every thread of the block calls it (it contains __syncthreads).
 * Result: thread 0 holds the block's reduction.
 * The shared slots are reused by the next call: a caller that calls it twice
 * must __syncthreads() in between (gr_grid.cuh does).
 */
#ifndef GR_BLOCK_CUH
#define GR_BLOCK_CUH

#include "gr_warp.cuh"

template <int BLOCK, typename Op>
__device__ __forceinline__ typename Op::acc_t gr_block_reduce(const Op &op, typename Op::acc_t a)
{
    static_assert(BLOCK % 32 == 0 && BLOCK >= 32 && BLOCK <= 1024, "block size must be a multiple of 32, <= 1024");
    const int NWARPS = BLOCK / 32;
    __shared__ typename Op::acc_t warp_part[NWARPS];
    const int lane = (int)(threadIdx.x & 31u);
    const int warp = (int)(threadIdx.x >> 5);

    a = gr_warp_reduce(op, a);
    if (lane == 0)
        warp_part[warp] = a;
    __syncthreads();
    if (warp == 0) {
        a = lane < NWARPS ? warp_part[lane] : op.identity();
        a = gr_warp_reduce(op, a);
    }
    return a;
}

#endif /* GR_BLOCK_CUH */
