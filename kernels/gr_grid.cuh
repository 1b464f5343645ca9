/*
 * gr_grid.cuh - grid layer: the single-pass, deterministic reduce kernel.
 *
 * One launch reduces any n. Each block reduces its grid-stride share
 * (gr_thread_accumulate, then gr_block_reduce) and thread 0 writes the block
 * partial to scratch[blockIdx.x]. It then makes that store visible device-wide
 * (__threadfence) and takes a ticket (atomicAdd). The block that draws the
 * last ticket knows every other partial is visible; it folds
 * scratch[0..gridDim.x) in a fixed order (thread t takes t, t+BLOCK, ... in
 * index order, then a block reduction), so the result depends on the launch
 * shape but never on block scheduling: no floating-point atomics anywhere.
 *
 * Launch assumptions: blockDim.x == BLOCK; gridDim.x >= 1 and no larger than
 * the scratch array; *ticket == 0 at launch; launches sharing scratch and
 * ticket are ordered (same stream).
 * Result: thread 0 of the last block writes the whole gr_local_t to *result
 * (mapped pinned host memory: the host reads it after a stream or event
 * sync, with no copy call), with count = n, and resets *ticket to 0 so the
 * next launch starts clean.
 */
#ifndef GR_GRID_CUH
#define GR_GRID_CUH

#include <stdint.h>

#include "gr_block.cuh"
#include "gr_thread.cuh"

template <int BLOCK, typename T, typename Op>
__global__ void __launch_bounds__(BLOCK)
    gr_reduce_kernel(const void *in_, uint64_t n, int power, void *scratch_, unsigned int *ticket, gr_local_t *result)
{
    typedef typename Op::acc_t acc_t;
    static_assert(sizeof(acc_t) <= 32, "accumulator larger than GR_CUDA_SCRATCH_BYTES_PER_BLOCK");
    const Op op = {power};
    const T *in = (const T *)in_;
    acc_t *scratch = (acc_t *)scratch_;
    __shared__ int am_last;

    const uint64_t t = (uint64_t)blockIdx.x * BLOCK + threadIdx.x;
    const uint64_t nthreads = (uint64_t)gridDim.x * BLOCK;
    acc_t a = gr_thread_accumulate<T>(op, in, n, t, nthreads);
    a = gr_block_reduce<BLOCK>(op, a);

    if (threadIdx.x == 0) {
        scratch[blockIdx.x] = a;
        __threadfence(); /* partial visible device-wide before the ticket */
        unsigned int prev = atomicAdd(ticket, 1u);
        am_last = prev == gridDim.x - 1u;
    }
    __syncthreads(); /* also separates the two gr_block_reduce calls */
    if (!am_last)
        return;
    __threadfence(); /* order the ticket before the reads of other partials */

    acc_t b = op.identity();
    for (unsigned int i = threadIdx.x; i < gridDim.x; i += BLOCK)
        b = op.combine(b, gr_load_cg(scratch + i));
    b = gr_block_reduce<BLOCK>(op, b);
    if (threadIdx.x == 0) {
        op.store(b, n, result);
        *ticket = 0u;
        __threadfence_system();
    }
}

/* The kernel instance for (T, Op, block), or NULL for a block size not built. */
template <typename T, typename Op>
static const void *gr_reduce_kernel_for_block(int block)
{
    switch (block) {
    case 128:
        return (const void *)gr_reduce_kernel<128, T, Op>;
    case 256:
        return (const void *)gr_reduce_kernel<256, T, Op>;
    case 512:
        return (const void *)gr_reduce_kernel<512, T, Op>;
    case 1024:
        return (const void *)gr_reduce_kernel<1024, T, Op>;
    default:
        return 0;
    }
}

/* Floating element types: every op. */
template <typename T>
static const void *gr_reduce_kernel_float(int op, int block)
{
    switch (op) {
    case GR_C_SUM:
        return gr_reduce_kernel_for_block<T, gr_op_fsum<GR_C_SUM> >(block);
    case GR_C_ABSSUM:
        return gr_reduce_kernel_for_block<T, gr_op_fsum<GR_C_ABSSUM> >(block);
    case GR_C_SUMSQ:
        return gr_reduce_kernel_for_block<T, gr_op_fsum<GR_C_SUMSQ> >(block);
    case GR_C_POWSUM:
        return gr_reduce_kernel_for_block<T, gr_op_fsum<GR_C_POWSUM> >(block);
    case GR_C_MIN:
        return gr_reduce_kernel_for_block<T, gr_op_fminmax<0> >(block);
    case GR_C_MAX:
        return gr_reduce_kernel_for_block<T, gr_op_fminmax<1> >(block);
    default:
        return 0;
    }
}

/* Integer element types: every op. */
template <typename T>
static const void *gr_reduce_kernel_int(int op, int block)
{
    switch (op) {
    case GR_C_SUM:
        return gr_reduce_kernel_for_block<T, gr_op_isum<GR_C_SUM> >(block);
    case GR_C_ABSSUM:
        return gr_reduce_kernel_for_block<T, gr_op_isum<GR_C_ABSSUM> >(block);
    case GR_C_SUMSQ:
        return gr_reduce_kernel_for_block<T, gr_op_isum<GR_C_SUMSQ> >(block);
    case GR_C_POWSUM:
        return gr_reduce_kernel_for_block<T, gr_op_isum<GR_C_POWSUM> >(block);
    case GR_C_MIN:
        return gr_reduce_kernel_for_block<T, gr_op_iminmax<0> >(block);
    case GR_C_MAX:
        return gr_reduce_kernel_for_block<T, gr_op_iminmax<1> >(block);
    default:
        return 0;
    }
}

#endif /* GR_GRID_CUH */
