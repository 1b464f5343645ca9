/*
 * gr_stats.h - the partial of --op stats (stats.c): what one block, chunk or
 * rank contributes, and how two of them combine.
 */
#ifndef GR_STATS_H
#define GR_STATS_H

#include "gr_internal.h"

/* Elements per block of the single pass: (count, mean, M2) are updated by
 * Welford within a block and blocks are merged by Chan's formula. */
#define GR_STATS_BLOCK (1u << 16)

typedef struct gr_stats_part {
    gr_xacc_t sum;       /* exact sum of the finite values (floats) or of all values (integers) */
    int64_t adds;        /* additions into sum since its last normalisation */
    uint64_t count, nan, pinf, ninf, nonnegzero;
    uint64_t nf;         /* values that entered mean and m2 (finite ones) */
    double mean, m2;     /* their mean and sum of squared deviations */
    double min, max;     /* over non-NaN values, -0.0 below +0.0; +Inf / -Inf when none */
    int64_t imin, imax;  /* integers */
    int64_t failed_code; /* gr_result_t of a rank that could not compute its part */
} gr_stats_part_t;

void gr_stats_part_init(gr_stats_part_t *p);
/* Fold n values of type t at buf into p, block by block, in order. */
void gr_stats_part_add(gr_stats_part_t *p, const void *buf, uint64_t n, gr_dtype_t t);
/* p += q (Chan et al. for mean and m2; exact for the rest). */
void gr_stats_part_merge(gr_stats_part_t *p, const gr_stats_part_t *q);
/* Combine every rank's part in rank order at d's root (or everywhere). */
gr_result_t gr_stats_combine(gr_ctx_t ctx, const gr_desc_t *d, const gr_stats_part_t *p, gr_stats_t *out);

#endif /* GR_STATS_H */
