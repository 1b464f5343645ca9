/*
 * gr_warp.cuh - warp layer: tree reduction of one accumulator per lane with
 * register shuffles.
 *
 * Launch assumptions: all 32 lanes of the warp are active and call it (full
 * mask), i.e. the block size is a multiple of 32.
 * Result: lane 0 holds the warp's reduction; other lanes hold partial trees.
 * Lane l combines with lane l+16, l+8, l+4, l+2, l+1 in that order, always as
 * combine(own, higher lane): a fixed order, so the result is repeatable.
 */
#ifndef GR_WARP_CUH
#define GR_WARP_CUH

#include "gr_ops.cuh"

template <typename Op>
__device__ __forceinline__ typename Op::acc_t gr_warp_reduce(const Op &op, typename Op::acc_t a)
{
#pragma unroll
    for (int off = 16; off > 0; off >>= 1)
        a = op.combine(a, gr_shfl_down(a, off));
    return a;
}

#endif /* GR_WARP_CUH */
