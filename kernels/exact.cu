/*
 * exact.cu - extern "C" launchers of the exact reduce (gr_exact.cuh). The
 * kernel instances live in exact_f32.cu, exact_f16.cu, exact_bf16.cu (sum,
 * abssum, sumsq) and exact_f64.cu (sum, abssum), for expansion sizes 2 and 3
 * and blocks of 128, 256 and 512 threads (1024 would cap registers at 64 and
 * spill).
 *
 * Must never be built with fast-math or flush-to-zero (-use_fast_math,
 * -ftz=true): TwoSum and the subnormal terms rely on IEEE arithmetic
 * (gr_exact.cuh refuses to compile so).
 */
#include "gr_exact.cuh"
#include "gr_xacc.h"

static_assert(GR_EXACT_LIMBS == GR_XACC_LIMBS, "device limbs must match gr_xacc_t");
static_assert(GR_EXACT_BIAS == GR_XACC_BIAS, "device limb bias must match gr_xacc_t");
static_assert(sizeof(gr_exact_result_t) == (GR_EXACT_LIMBS + 6) * 8, "gr_exact_result_t layout");

/* (dtype, op, power) -> the op of the kernel, or -1 when none is exact. */
static int exact_op(int dtype, int op, int power)
{
    if (op == GR_C_POWSUM)
        op = power == 1 ? GR_C_SUM : power == 2 ? GR_C_SUMSQ : -1;
    if (op == GR_C_SUM || op == GR_C_ABSSUM)
        return op;
    if (op == GR_C_SUMSQ && dtype != GR_C_F64)
        return op; /* x*x of an f32 (so of an f16 or bf16) is exact in f64; of an f64 it is not */
    return -1;
}

/* gr_exact_kernel_for(dtype, op, terms, block): the instance table's walk (gr_dispatch.cuh) */
GR_DISPATCH(exact)

static int exact_dtype(int dtype)
{
    return dtype == GR_C_F32 || dtype == GR_C_F64 || dtype == GR_C_F16 || dtype == GR_C_BF16;
}

/* terms 0: the tuning policy's for the dtype on the current GPU (halves take the f32 path's) */
static const void *kernel_for(int dtype, int op, int power, int terms, int block)
{
    op = exact_op(dtype, op, power);
    if (op < 0)
        return 0;
    if (terms == 0) {
        int dev = 0;
        if (cudaGetDevice(&dev) != cudaSuccess)
            return 0;
        terms = gr_tuning_for(GR_KF_EXACT, dtype, gr_cuda_device_cc(dev)).terms;
    }
    return gr_exact_kernel_for(dtype, op, terms, block);
}

/* the tally, or the ticket's accumulator of the tests' ticket-end instances:
 * both leave their words zero, so one buffer serves both */
extern "C" size_t gr_cuda_exact_scratch_bytes(void)
{
    return sizeof(gr_exact_tally_t) > sizeof(gr_exact_scratch_t) ? sizeof(gr_exact_tally_t)
                                                                  : sizeof(gr_exact_scratch_t);
}

extern "C" int gr_cuda_exact_supported(int dtype, int op, int power)
{
    return exact_dtype(dtype) && exact_op(dtype, op, power) >= 0;
}

extern "C" cudaError_t gr_cuda_exact_occupancy(int dtype, int op, int power, int terms, int block, int *blocks_per_sm)
{
    const void *k = kernel_for(dtype, op, power, terms, block);
    *blocks_per_sm = 0;
    if (!k)
        return cudaErrorInvalidValue;
    return cudaOccupancyMaxActiveBlocksPerMultiprocessor(blocks_per_sm, k, block, 0);
}

extern "C" cudaError_t gr_cuda_launch_reduce_exact(const gr_cuda_exact_launch_t *l)
{
    const void *k = kernel_for(l->dtype, l->op, l->power, l->terms, l->block);
    if (!k || l->grid < 1 || l->grid > GR_EXACT_GRID_MAX || l->round_vecs > GR_EXACT_ROUND_VECS || !l->scratch ||
        !l->result || (l->n > 0 && !l->in) || l->n >= GR_EXACT_LAUNCH_MAX_N)
        return cudaErrorInvalidValue;
    if ((uintptr_t)l->in % gr_c_elem_size(l->dtype) != 0)
        return cudaErrorMisalignedAddress; /* no GPU load could read it */
    return gr_cuda_exact_launch_instance(k, l);
}

extern "C" cudaError_t gr_cuda_exact_launch_instance(const void *k, const gr_cuda_exact_launch_t *l)
{
    const void *in = l->in;
    uint64_t n = l->n;
    uint64_t round_vecs = l->round_vecs ? l->round_vecs : GR_EXACT_ROUND_VECS;
    void *scratch = l->scratch;
    gr_exact_result_t *result = l->result;
    void *args[] = {(void *)&in, (void *)&n, (void *)&round_vecs, (void *)&scratch, (void *)&result};
    cudaError_t e = cudaLaunchKernel(k, dim3((unsigned)l->grid), dim3((unsigned)l->block), args, 0, l->stream);
    if (e != cudaSuccess)
        return e;
    return cudaGetLastError();
}
