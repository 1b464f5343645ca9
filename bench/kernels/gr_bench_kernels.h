/*
 * gr_bench_kernels.h - the extern "C" launchers of the benchmark's own
 * kernels: the seed ladder v0..v8 (kernels/ladder.cu), the copy ceiling and
 * the harness helpers (kernels/copy.cu), and the CUB baselines
 * (bench/cub_baseline.cu, bench/cub_g2g.cu). Includable from C11 and from .cu
 * files. None of this is part of libgpureduce: it is linked into the CLI
 * (library gr_bench) only, for `gpureduce bench`.
 *
 * Like gr_kernels.h: every launcher enqueues work on the given stream and
 * returns the launch status, never an error of the kernel's execution; dtype
 * numbers are the GR_C_* values of gr_common.h.
 *
 * Accumulators. Every reduction here writes 8-byte accumulators: double for
 * f32 and f64 input (f32 is widened on load, like the product's fast mode)
 * and int64 for i32 and i64 input. So every row's exact gate (all ones, iota)
 * has one right answer, and no row is faster for doing less arithmetic.
 */
#ifndef GR_BENCH_KERNELS_H
#define GR_BENCH_KERNELS_H

#include <cuda_runtime_api.h>
#include <stddef.h>
#include <stdint.h>

#include "gr_common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Threads per block of every ladder rung and of the copy kernel. */
#define GR_BENCH_BLOCK 256
/* Bytes of one accumulator (double or int64). */
#define GR_BENCH_ACC_BYTES 8

/* ---------------------------------------------------------------------------
 * The ladder, kernels/ladder.cu. Rung v (0..8):
 *   v0 interleaved addressing, `tid % (2s)` picks the active threads (divergent warps)
 *   v1 interleaved addressing by a strided index (no divergence, bank conflicts)
 *   v2 sequential addressing (conflict free)
 *   v3 first add during the global load (two elements a thread, half the blocks)
 *   v4 v3 with the last warp unrolled (__syncwarp() between steps)
 *   v5 v4 with the block size a template argument: every level unrolled
 *   v6 v5 over a grid-stride loop with a resident-sized grid (cascading)
 *   v7 v6 with a warp-shuffle tail and 16-byte loads (scalar head and tail)
 *   v8 v7, then a second launch of one block over its partials: one value
 * v0..v7 leave one accumulator per block in `partials`; v8 leaves one in `result`.
 * ------------------------------------------------------------------------- */
#define GR_BENCH_LADDER_RUNGS 9

typedef struct gr_bench_ladder_launch {
    int rung;           /* 0..8 */
    int dtype;          /* GR_C_F32 .. GR_C_I64 (no f16/bf16 rungs) */
    const void *in;     /* n elements, naturally aligned for dtype */
    uint64_t n;
    int grid;           /* gr_bench_ladder_grid() */
    void *partials;     /* grid accumulators (device) */
    void *result;       /* v8: one accumulator (device); ignored by v0..v7 */
    cudaStream_t stream;
} gr_bench_ladder_launch_t;

/*
 * Blocks rung `rung` launches for n elements: v0..v2 one element a thread,
 * v3..v5 two, v6..v8 min(resident_blocks, enough blocks for the data).
 * resident_blocks: gr_bench_ladder_occupancy() x the number of SMs.
 */
int gr_bench_ladder_grid(int rung, int dtype, uint64_t n, int resident_blocks);

/* Resident blocks per SM of rung `rung` for dtype, on the current device. */
cudaError_t gr_bench_ladder_occupancy(int rung, int dtype, int *blocks_per_sm);

cudaError_t gr_bench_launch_ladder(const gr_bench_ladder_launch_t *l);

/* ---------------------------------------------------------------------------
 * The ceiling and helpers, kernels/copy.cu.
 * ------------------------------------------------------------------------- */

/*
 * Device-to-device copy of `bytes` from in to out with 16-byte loads and
 * stores. in and out 16-byte aligned (cudaMalloc), bytes a multiple of 2.
 * grid <= max_grid, chosen from the size.
 */
cudaError_t gr_bench_launch_copy(const void *in, void *out, uint64_t bytes, int max_grid, cudaStream_t stream);
cudaError_t gr_bench_copy_occupancy(int *blocks_per_sm);

/* *mismatches += the number of 2-byte words where a and b differ (both 2-byte aligned, bytes even). */
cudaError_t gr_bench_launch_compare(const void *a, const void *b, uint64_t bytes, unsigned long long *mismatches,
                                    cudaStream_t stream);

/*
 * Hold the stream until *flag >= gen (flag: device view of mapped host
 * memory the host writes), or until timeout_ns has passed, in which case
 * *timed_out is set to 1. Lets the harness queue a batch of timed runs
 * before any of them starts, so the GPU runs them back to back and the
 * events time the GPU, not the host's launch rate.
 */
cudaError_t gr_bench_launch_hold(const volatile int *flag, int gen, unsigned long long timeout_ns, int *timed_out,
                                 cudaStream_t stream);

/* ---------------------------------------------------------------------------
 * CUB baselines, bench/cub_baseline.cu and bench/cub_g2g.cu.
 * out: one accumulator (double for f32/f64, int64 for i32/i64), as above;
 * gr_bench_cub_sum also takes f16/bf16 (into a double); the g2g ones do not
 * (cudaErrorInvalidValue).
 * temp == NULL: store the temp storage size in *temp_bytes, do nothing else
 * (CUB's two-phase protocol); the harness allocates once, outside timing.
 * ------------------------------------------------------------------------- */

/* cub::DeviceReduce::Sum of the toolkit's CCCL, run-to-run deterministic. */
cudaError_t gr_bench_cub_sum(int dtype, const void *in, uint64_t n, void *out, void *temp, size_t *temp_bytes,
                             cudaStream_t stream);

/* The CCCL version (CUB_VERSION, e.g. 300001 for 3.0.1) the baseline was built with. */
int gr_bench_cub_version(void);

/*
 * cub::DeviceReduce::Sum with cuda::execution::determinism::gpu_to_gpu (newer
 * CCCL given to CMake as -DGR_CCCL_INCLUDE). Built only then: check
 * gr_bench_cub_g2g_available() first; otherwise both return
 * cudaErrorNotSupported / 0.
 */
int gr_bench_cub_g2g_available(void);
int gr_bench_cub_g2g_version(void);
cudaError_t gr_bench_cub_g2g_sum(int dtype, const void *in, uint64_t n, void *out, void *temp, size_t *temp_bytes,
                                 cudaStream_t stream);
/* The same with f32 input summed into a float (the input's own type; the row
 * cub-g2g-f32); f64 and integers as gr_bench_cub_g2g_sum. */
cudaError_t gr_bench_cub_g2g_sum_same(int dtype, const void *in, uint64_t n, void *out, void *temp,
                                      size_t *temp_bytes, cudaStream_t stream);

/*
 * The vector rows' CUB baselines (bench/cub_vec.cu), two-phase as above.
 * gr_bench_cub_dot: cub::DeviceReduce::TransformReduce over a zip of x and y,
 * products formed and summed in out's accumulator (double for floats, the
 * halves included; int64 for integers). gr_bench_cub_argmax:
 * cub::DeviceReduce::ArgMax, the maximum (in the input's type) into val and
 * its index into idx; f32, f64, i32, i64 only.
 */
cudaError_t gr_bench_cub_dot(int dtype, const void *x, const void *y, uint64_t n, void *out, void *temp,
                             size_t *temp_bytes, cudaStream_t stream);
cudaError_t gr_bench_cub_argmax(int dtype, const void *x, uint64_t n, void *val, int64_t *idx, void *temp,
                                size_t *temp_bytes, cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#endif /* GR_BENCH_KERNELS_H */
