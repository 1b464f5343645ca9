/*
 * gr_grid.cuh - grid layer: the single-pass, deterministic reduce kernel.
 *
 * One launch reduces any n. Each block reduces its grid-stride share
 * (gr_thread_accumulate with the per-thread accumulator of gr_thread_op,
 * widened, then gr_block_reduce) and thread 0 writes the block partial to
 * scratch[blockIdx.x] and takes a ticket with one acq_rel fetch_add: the
 * release publishes the partial, and the acquire of the block that draws the
 * last ticket sees every other block's partial (the RMWs on the ticket form
 * one release sequence); its __syncthreads passes that on to the block's
 * other threads, which read the partials with L1-bypassing loads. The last
 * block folds scratch[0..gridDim.x) in a fixed order: thread t takes t,
 * t+W, t+2W, ... in index order (W = 32 when there are at most
 * 32 x GR_FOLD_BATCH partials and warp 0 folds alone, with no block barrier;
 * else W = BLOCK), loading GR_FOLD_BATCH partials before combining any, then
 * a warp or block reduction. So the result depends on the launch shape but
 * never on block scheduling: no floating-point atomics anywhere.
 *
 * Launch assumptions: blockDim.x == BLOCK; gridDim.x >= 1 and no larger than
 * the scratch array; *ticket == 0 at launch; launches sharing scratch and
 * ticket are ordered (same stream). NARROW: the launcher has checked that
 * n / (grid x BLOCK) < 2^31 (gr_ops.cuh, per-thread accumulators).
 * Result: thread 0 of the last block resets *ticket to 0 for the next
 * launch, then writes the whole gr_local_t to *result (mapped pinned host
 * memory) with count = n and reserved = seq, one relaxed system-scope store
 * per field (gr_store_local), with no trailing fence: a host that polls
 * checks every field (gr_cuda_reduce_wait); one that syncs on the stream or
 * an event sees the whole result once the kernel has completed.
 */
#ifndef GR_GRID_CUH
#define GR_GRID_CUH

#include <stdint.h>

#include "gr_block.cuh"
#include "gr_dispatch.cuh"
#include "gr_sync.cuh"
#include "gr_thread.cuh"

/* Partials the last block loads per thread before combining them: 8 for
 * 8-byte accumulators, 2 for the 24-byte integer one (registers). */
template <typename acc_t>
struct gr_fold_batch {
    enum { value = sizeof(acc_t) <= 8 ? 8 : 2 };
};

/* b combined with p[i], p[i+W], ... (i < count) in index order, batches of B. */
template <int W, int B, typename Op>
__device__ __forceinline__ typename Op::acc_t gr_fold_partials(const Op &op, const typename Op::acc_t *p,
                                                               unsigned int i, unsigned int count)
{
    typedef typename Op::acc_t acc_t;
    acc_t b = op.identity();
    for (; i < count; i += (unsigned int)(W * B)) {
        acc_t x[B];
#pragma unroll
        for (int u = 0; u < B; ++u)
            x[u] = i + (unsigned int)(u * W) < count ? gr_load_cg(p + i + u * W) : op.identity();
#pragma unroll
        for (int u = 0; u < B; ++u)
            b = op.combine(b, x[u]);
    }
    return b;
}

template <int BLOCK, typename T, typename Op, int NARROW>
__global__ void __launch_bounds__(BLOCK) gr_reduce_kernel(const void *in_, uint64_t n, int power, void *scratch_,
                                                          unsigned int *ticket, gr_local_t *result, unsigned int seq)
{
    typedef typename Op::acc_t acc_t;
    typedef gr_thread_op<T, Op> tops;
    static_assert(sizeof(acc_t) <= 32, "accumulator larger than GR_CUDA_SCRATCH_BYTES_PER_BLOCK");
    const int FOLD = gr_fold_batch<acc_t>::value;
    const Op op = {power};
    const T *in = (const T *)in_;
    acc_t *scratch = (acc_t *)scratch_;
    __shared__ int am_last;

    const uint64_t t = (uint64_t)blockIdx.x * BLOCK + threadIdx.x;
    const uint64_t nthreads = (uint64_t)gridDim.x * BLOCK;
    acc_t a;
    if constexpr (NARROW && tops::narrow)
        a = tops::widen(op, gr_thread_accumulate<T>(tops::make(op), in, n, t, nthreads));
    else
        a = gr_thread_accumulate<T>(op, in, n, t, nthreads);
    a = gr_block_reduce<BLOCK>(op, a);

    if (threadIdx.x == 0) {
        scratch[blockIdx.x] = a;
        am_last = gr_ticket_take(ticket) == gridDim.x - 1u;
    }
    __syncthreads(); /* also separates the two gr_block_reduce calls */
    if (!am_last)
        return;

    acc_t b;
    if (gridDim.x <= 32u * FOLD) {
        if (threadIdx.x >= 32)
            return;
        b = gr_fold_partials<32, FOLD>(op, scratch, threadIdx.x, gridDim.x);
        b = gr_warp_reduce(op, b);
    } else {
        b = gr_fold_partials<BLOCK, FOLD>(op, scratch, threadIdx.x, gridDim.x);
        b = gr_block_reduce<BLOCK>(op, b);
    }
    if (threadIdx.x == 0) {
        *ticket = 0u;
        op.store(b, n, seq, result);
    }
}

/* ---- the fast family's entry of the instance table (gr_dispatch.cuh) -------- */

/* The operator of (floating or integer element, op). */
template <int FLOAT, int OP>
struct gr_fast_op {
    typedef gr_op_fsum<OP> type; /* sum, abssum, sumsq, powsum */
};
template <>
struct gr_fast_op<1, GR_C_MIN> {
    typedef gr_op_fminmax<0> type;
};
template <>
struct gr_fast_op<1, GR_C_MAX> {
    typedef gr_op_fminmax<1> type;
};
template <int OP>
struct gr_fast_op<0, OP> {
    typedef gr_op_isum<OP> type;
};
template <>
struct gr_fast_op<0, GR_C_MIN> {
    typedef gr_op_iminmax<0> type;
};
template <>
struct gr_fast_op<0, GR_C_MAX> {
    typedef gr_op_iminmax<1> type;
};

/* variant 1: the per-thread accumulator of gr_thread_op where the op has one
 * (the launcher has checked its bound); ops without one have one instance. */
template <int DT, int OP, int V, int BLOCK>
struct gr_kernel_of<GR_KF_FAST, DT, OP, V, BLOCK> {
    typedef typename gr_ctype<DT>::type T;
    typedef typename gr_fast_op<DT != GR_C_I32 && DT != GR_C_I64, OP>::type Op;
    static const void *get() { return (const void *)gr_reduce_kernel<BLOCK, T, Op, (V && gr_thread_op<T, Op>::narrow)>; }
};

#endif /* GR_GRID_CUH */
