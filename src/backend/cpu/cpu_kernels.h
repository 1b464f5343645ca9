/*
 * cpu_kernels.h - the cpu backend's inner loops (private), one specialised
 * loop per dtype x op, built -O3 (CMakeLists.txt) and vectorised.
 *
 * Callers hand them one chunk of at most GR_CPU_CHUNK elements. The fast-mode
 * loop is the one this backend always had: 8 f64 lanes, element i to lane
 * i % 8, lanes folded pairwise (l += l + 4, l += l + 2, l += l + 1); each
 * chunk's value enters the exact partial, so the thread count never changes
 * the bits, and they are the same as before this file existed.
 */
#ifndef GR_CPU_KERNELS_H
#define GR_CPU_KERNELS_H

#include "gr_internal.h"

#include <stdint.h>

/* Elements a chunk holds: the unit of work of a thread and of fast mode's
 * rounding (each chunk's f64 sum is added exactly to the partial). */
#define GR_CPU_CHUNK (1u << 16)

/* Fast mode: the f64 sum of the terms of in[0..n) of a floating dtype (GR_C_*)
 * for a sum-like op (GR_C_SUM, ABSSUM, SUMSQ, POWSUM). n <= GR_CPU_CHUNK. */
double gr_cpu_fast_sum_f(const void *in, int dtype, int op, int power, uint64_t n);

/* Floating min (op GR_C_MIN) or max of in[0..n), n > 0: the extreme in the
 * order -0.0 < +0.0, NaN when any element is NaN. */
double gr_cpu_minmax_f(const void *in, int dtype, int op, uint64_t n);

/* Exact mode: every term of in[0..n) of a floating dtype added exactly to p
 * (sum, NaN / Inf counts, the sign of a zero sum; p->count is the caller's).
 * The same value, hence the same bits after rounding, as
 * gr_cpu_exact_f_reference; only whether p->nonnegzero is 0 is kept, not its
 * count (gr_partial_finish reads no more). Returns how many of the n terms
 * went through the block fast path (the rest went one by one). */
uint64_t gr_cpu_exact_f(gr_partial_t *p, const void *in, int dtype, int op, int power, uint64_t n);

/* Exact mode, one term at a time through gr_partial_add_term: the path this
 * backend had before the fast one, and what the fast one falls back to for a
 * block it cannot prove exact. Kept public for the tests that compare them. */
void gr_cpu_exact_f_reference(gr_partial_t *p, const void *in, int dtype, int op, int power, uint64_t n);

/* Integer dtypes (GR_C_I32, GR_C_I64): the local result of in[0..n) for any op
 * (sum-like: 128-bit exact, overflow counted; min/max in .lo). */
void gr_cpu_int(const void *in, int dtype, int op, int power, uint64_t n, gr_local_t *loc);

#endif /* GR_CPU_KERNELS_H */
