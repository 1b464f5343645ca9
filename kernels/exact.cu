/*
 * exact.cu - extern "C" launchers of the exact reduce (gr_exact.cuh). The
 * kernel instances live in exact_f32.cu, exact_f16.cu, exact_bf16.cu (sum,
 * abssum, sumsq) and exact_f64.cu (sum, abssum), for expansion sizes 2 and 3
 * and blocks of 128, 256 and 512 threads (1024 would cap registers at 64 and
 * spill).
 *
 * Must never be built with fast-math or flush-to-zero (-use_fast_math,
 * -ftz=true): TwoSum and the subnormal terms rely on IEEE arithmetic.
 */
#include "gr_exact.cuh"
#include "gr_xacc.h"

#if defined(__CUDA_FTZ) && __CUDA_FTZ
#error "kernels/exact.cu must not be built with -ftz=true or fast-math: the exact mode needs IEEE subnormals"
#endif

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

extern "C" const void *gr_cuda_exact_kernel_f32(int op, int terms, int block);
extern "C" const void *gr_cuda_exact_kernel_f64(int op, int terms, int block);
extern "C" const void *gr_cuda_exact_kernel_f16(int op, int terms, int block);
extern "C" const void *gr_cuda_exact_kernel_bf16(int op, int terms, int block);

static int exact_dtype(int dtype)
{
    return dtype == GR_C_F32 || dtype == GR_C_F64 || dtype == GR_C_F16 || dtype == GR_C_BF16;
}

static unsigned elem_size(int dtype)
{
    return dtype == GR_C_F64 ? 8u : gr_c_is_half(dtype) ? 2u : 4u;
}

/* halves take the f32 path: its measured expansion size */
static int default_terms(int dtype) { return dtype == GR_C_F64 ? GR_EXACT_TERMS_F64 : GR_EXACT_TERMS_F32; }

static const void *kernel_for(int dtype, int op, int power, int terms, int block)
{
    op = exact_op(dtype, op, power);
    if (op < 0)
        return 0;
    if (terms == 0)
        terms = default_terms(dtype);
    if (dtype == GR_C_F32)
        return gr_cuda_exact_kernel_f32(op, terms, block);
    if (dtype == GR_C_F64)
        return gr_cuda_exact_kernel_f64(op, terms, block);
    if (dtype == GR_C_F16)
        return gr_cuda_exact_kernel_f16(op, terms, block);
    if (dtype == GR_C_BF16)
        return gr_cuda_exact_kernel_bf16(op, terms, block);
    return 0;
}

/* the tally, or the ticket's accumulator of the tests' GR_XF_TICKET instances:
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

extern "C" int gr_cuda_exact_grid(uint64_t n, int dtype, int block, int sm_count, int max_blocks_per_sm)
{
    int per_sm = GR_EXACT_THREADS_PER_SM / block;
    if (per_sm < 1)
        per_sm = 1;
    if (max_blocks_per_sm > 0 && per_sm > max_blocks_per_sm)
        per_sm = max_blocks_per_sm;
    uint64_t g = (uint64_t)per_sm * (uint64_t)(sm_count > 0 ? sm_count : 1);
    /* at least 4 vectors per thread; fewer blocks would not be slower */
    const uint64_t per_block = (uint64_t)block * 4u * (16u / elem_size(dtype));
    const uint64_t want = (n + per_block - 1) / per_block;
    if (g > want)
        g = want;
    if (g > (uint64_t)GR_EXACT_GRID_MAX)
        g = GR_EXACT_GRID_MAX;
    return g < 1 ? 1 : (int)g;
}

extern "C" cudaError_t gr_cuda_launch_reduce_exact(const gr_cuda_exact_launch_t *l)
{
    const void *k = kernel_for(l->dtype, l->op, l->power, l->terms, l->block);
    if (!k || l->grid < 1 || l->grid > GR_EXACT_GRID_MAX || l->round_vecs > GR_EXACT_ROUND_VECS || !l->scratch ||
        !l->result || (l->n > 0 && !l->in) || l->n >= GR_EXACT_LAUNCH_MAX_N)
        return cudaErrorInvalidValue;
    if ((uintptr_t)l->in % elem_size(l->dtype) != 0)
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
