/*
 * gr_exact_kernels.h - extern "C" launcher of the exact (correctly rounded)
 * reduce on the GPU: kernels/gr_exact.cuh holds the device layers and
 * docs/EXACT.md the method, its capacity proof and its cost. Includable from
 * C11 and from .cu files.
 *
 * The kernel returns the exact sum of the finite terms as integer limbs in the
 * layout of gr_xacc_t (limb k holds 32-bit digits at 2^(32k - 1088)), plus the
 * counts of NaN, +Inf and -Inf terms and whether any term was not -0.0. The
 * host folds that into its gr_partial_t and rounds once (gr_partial_finish),
 * so the value is bitwise the cpu backend's for any grid, block, expansion
 * size, shard or offset.
 *
 * Like every launcher in kernels/, it enqueues on the given stream and returns
 * the launch status, never an error of the kernel's execution.
 */
#ifndef GR_EXACT_KERNELS_H
#define GR_EXACT_KERNELS_H

#include <cuda_runtime_api.h>
#include <stddef.h>
#include <stdint.h>

#include "gr_common.h"
#include "gr_tuning.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The limb layout of gr_xacc_t (src/core/gr_xacc.h; static-asserted in exact.cu). */
#define GR_EXACT_LIMBS 70
#define GR_EXACT_BIAS 1088

/* Default vectors (16 bytes) one thread reduces between two normalisations
 * of its block's accumulator; see the capacity note in gr_exact.cuh. */
#define GR_EXACT_ROUND_VECS (1u << 16)

/*
 * What one launch leaves in mapped pinned host memory. Each field is written
 * by the block that completes it (the tally, kernels/gr_exact.cuh), `count`
 * (= n) with limb 0, so a host that poisons it before the launch and reads it
 * after the kernel has completed can tell a result that was never written.
 */
typedef struct gr_exact_result {
    int64_t limb[GR_EXACT_LIMBS]; /* exact sum of the finite terms, not normalised: |limb| < 2^47 */
    uint64_t count;               /* n */
    uint64_t nan;                 /* NaN terms */
    uint64_t pinf;                /* +Inf terms */
    uint64_t ninf;                /* -Inf terms */
    uint64_t nonnegzero;          /* 1 when some finite term was not -0.0, else 0 */
    uint64_t flushes;             /* diagnostics: values added to the integer accumulator */
} gr_exact_result_t;

/*
 * One launch.
 *
 * in:         n < GR_EXACT_LAUNCH_MAX_N elements of dtype (GR_C_F32, GR_C_F64, GR_C_F16 or
 *             GR_C_BF16), device-accessible, aligned to the element size
 *             (else cudaErrorMisalignedAddress); any element offset from a
 *             16-byte boundary is fine. f16 / bf16 elements are read 8 per
 *             16-byte load and reduced as their f32 values (exact widening):
 *             the result is the f32 exact state; the host rounds it to the
 *             half type.
 * op, power:  GR_C_SUM, GR_C_ABSSUM, GR_C_SUMSQ (f32, f16, bf16: x*x is exact
 *             in f64), or GR_C_POWSUM with power 1 (= sum) or 2 (= sumsq).
 * terms:      floating-point expansion size per thread, 2 or 3; 0 = the
 *             tuning policy's for the dtype on the current GPU (a device
 *             query per launch: callers on a hot path pass the policy's).
 * grid:       1..GR_EXACT_GRID_MAX blocks; block: 128, 256 or 512.
 * round_vecs: debug: vectors per thread between normalisations, 1..2^16;
 *             0 = GR_EXACT_ROUND_VECS. Any value gives the same result.
 * scratch:    gr_cuda_exact_scratch_bytes() of device memory, zeroed once
 *             before the first launch; every launch leaves it zeroed.
 * result:     device view of mapped pinned host memory (cudaHostAllocMapped).
 * Launches on one scratch must be ordered (one stream).
 */
typedef struct gr_cuda_exact_launch {
    const void *in;
    uint64_t n;
    int dtype;
    int op;
    int power;
    int terms;
    int grid;
    int block;
    unsigned int round_vecs;
    void *scratch;
    gr_exact_result_t *result;
    cudaStream_t stream;
} gr_cuda_exact_launch_t;

/* Expansion terms, block size and grid when the caller has none:
 * tuning/gr_tuning.h (gr_tuning_for(GR_KF_EXACT, ...), gr_cuda_grid). */
/* Most blocks and elements one launch may take: the tally's words keep a
 * count of blocks (< 2^15) above a sum below 2^47 (gr_exact.cuh). */
#define GR_EXACT_GRID_MAX (1 << 14)
#define GR_EXACT_LAUNCH_MAX_N ((uint64_t)1 << 41)

cudaError_t gr_cuda_launch_reduce_exact(const gr_cuda_exact_launch_t *l);

/* The launch itself, for an instance k of gr_exact_kernel that the caller
 * picked and whose arguments it has checked (the tests' ablation instances,
 * tests/exact_gpu/exact_ablate.cu; l->terms, dtype and op are not read). */
cudaError_t gr_cuda_exact_launch_instance(const void *k, const gr_cuda_exact_launch_t *l);

/* Bytes of device scratch a launch needs (independent of the grid). */
size_t gr_cuda_exact_scratch_bytes(void);

/* 1 when (dtype, op, power) has an exact GPU kernel, else 0. */
int gr_cuda_exact_supported(int dtype, int op, int power);

/* Resident blocks per SM of the exact kernel, on the current device. */
cudaError_t gr_cuda_exact_occupancy(int dtype, int op, int power, int terms, int block, int *blocks_per_sm);

#ifdef __cplusplus
}
#endif

#if !defined(__CUDACC__)
#include "gr_xacc.h"
/* The exact value of a result as a normalised gr_xacc_t (host C only). */
static inline void gr_exact_result_to_xacc(const gr_exact_result_t *r, gr_xacc_t *x)
{
    for (int k = 0; k < GR_EXACT_LIMBS; ++k)
        x->limb[k] = r->limb[k];
    gr_xacc_normalize(x);
}
#endif

#endif /* GR_EXACT_KERNELS_H */
