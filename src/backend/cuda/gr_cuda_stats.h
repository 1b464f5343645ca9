/*
 * gr_cuda_stats.h - --op stats on the cuda backend (backend_cuda_stats.c):
 * the one-pass statistics kernel of kernels/stats.cu, launched into a result
 * slot and collected into a gr_stats_part_t. Library-private.
 *
 * Each slot (0 .. GR_CUDA_SLOTS-1) has its own device scratch, mapped result
 * and event, so two slots may be in flight at once, on the same stream or on
 * different ones; launches on one slot must be collected before the slot is
 * launched again. The partial a launch produces depends only on the data and
 * on the launch shape (grid, block): the sum and every count and min/max are
 * exact, the variance's (nf, mean, m2) is folded in a fixed order.
 */
#ifndef GR_CUDA_STATS_H
#define GR_CUDA_STATS_H

#include "gr_cuda_state.h"
#include "gr_stats.h"

/*
 * Enqueue the statistics of n elements of type t at device pointer dptr on
 * `stream`, into slot `slot` (< GR_CUDA_SLOTS). f32, f64, i32, i64 only
 * (GR_ERR_UNSUPPORTED otherwise). The grid follows cfg.cuda_grid when set
 * (1..GR_STATS_GRID_MAX), else occupancy; the block cfg.cuda_block (capped
 * at 512) or the tuning policy's (gr_tuning_for(GR_KF_STATS, t, cc)).
 */
gr_result_t gr_cuda_stats_launch(cuda_state_t *s, const void *dptr, uint64_t n, gr_dtype_t t, int slot,
                                 cudaStream_t stream);

/* Wait for slot `slot`'s launch and merge its partial into *p (Chan et al.
 * for mean and m2, exact for the rest). */
gr_result_t gr_cuda_stats_collect(cuda_state_t *s, int slot, gr_stats_part_t *p);

/* The local part of count elements at device pointer ptr, on ctx's GPU and
 * after the caller's stream (the backend's stats op for device memory). */
gr_result_t gr_cuda_stats_local(gr_ctx_t ctx, const void *ptr, uint64_t count, gr_dtype_t t, gr_stats_part_t *p);

/* Free what the two calls above allocated (cuda_fini calls it). */
void gr_cuda_stats_release(cuda_state_t *s);

#endif /* GR_CUDA_STATS_H */
