/*
 * cpu_kernels.h - the cpu backend's inner loops (private), one specialised
 * loop per dtype x op, built -O3 (CMakeLists.txt) and vectorised.
 *
 * The loops are written once (cpu_kernels_body.h) and compiled once per
 * instruction-set level: the baseline of the architecture (SSE2 on x86-64),
 * and on x86-64 also AVX2 and AVX-512F (cpu_kernels_avx2.c,
 * cpu_kernels_avx512.c, built with -mavx2 / -mavx512f). Each level is a table
 * of function pointers; the backend picks one table per context
 * (gr_cpu_kernels_select: the best level the CPU has, or GR_CPU_ISA's).
 *
 * Every level gives the same bits. Exact mode: each returns the exact sum.
 * Fast mode: the loop this backend always had, whatever the vector width:
 * 8 f64 lanes, element i to lane i % 8, lanes folded pairwise (l += l + 4,
 * l += l + 2, l += l + 1); each chunk's value enters the exact partial, so
 * the thread count never changes the bits either. test_cpu_isa compares the
 * levels bit for bit.
 *
 * Callers hand the loops one chunk of at most GR_CPU_CHUNK elements.
 */
#ifndef GR_CPU_KERNELS_H
#define GR_CPU_KERNELS_H

#include "gr_internal.h"

#include <stdint.h>

/* Elements a chunk holds: the unit of work of a thread and of fast mode's
 * rounding (each chunk's f64 sum is added exactly to the partial). */
#define GR_CPU_CHUNK (1u << 16)

typedef enum gr_cpu_isa {
    GR_CPU_ISA_BASELINE, /* the architecture's baseline: SSE2 on x86-64, plain C elsewhere */
    GR_CPU_ISA_AVX2,     /* x86-64 with AVX2 (no FMA: a fused multiply-add would change fast-mode bits) */
    GR_CPU_ISA_AVX512,   /* x86-64 with AVX-512F */
    GR_CPU_ISA_COUNT
} gr_cpu_isa_t;

typedef struct gr_cpu_kernels {
    gr_cpu_isa_t isa;

    /* Fast mode: the f64 sum of the terms of in[0..n) of a floating dtype
     * (GR_C_*) for a sum-like op (GR_C_SUM, ABSSUM, SUMSQ, POWSUM). */
    double (*fast_sum_f)(const void *in, int dtype, int op, int power, uint64_t n);

    /* Floating min (op GR_C_MIN) or max of in[0..n), n > 0: the extreme in
     * the order -0.0 < +0.0, NaN when any element is NaN. */
    double (*minmax_f)(const void *in, int dtype, int op, uint64_t n);

    /* Exact mode: every term of in[0..n) of a floating dtype added exactly to
     * p (sum, NaN / Inf counts, the sign of a zero sum; p->count is the
     * caller's). The same value, hence the same bits after rounding, as
     * gr_cpu_exact_f_reference; only whether p->nonnegzero is 0 is kept, not
     * its count (gr_partial_finish reads no more). Returns how many of the n
     * terms went through a block fast path (the rest went one by one). */
    uint64_t (*exact_f)(gr_partial_t *p, const void *in, int dtype, int op, int power, uint64_t n);

    /* Integer dtypes (GR_C_I32, GR_C_I64): the local result of in[0..n) for
     * any op (sum-like: 128-bit exact, overflow counted; min/max in .lo). */
    void (*int_local)(const void *in, int dtype, int op, int power, uint64_t n, gr_local_t *loc);
} gr_cpu_kernels_t;

/* "baseline", "avx2", "avx512": the names GR_CPU_ISA takes. */
const char *gr_cpu_isa_name(gr_cpu_isa_t isa);

/* The kernels of one level; NULL when this build or this CPU lacks it. */
const gr_cpu_kernels_t *gr_cpu_kernels_isa(gr_cpu_isa_t isa);

/* The kernels a context uses: the best level available, or the one the
 * value of GR_CPU_ISA names (want: "auto", "baseline", "avx2", "avx512";
 * NULL or "auto": the best). A level this build or CPU lacks gives the best
 * one below it, an unknown name the best; both with a warning. */
const gr_cpu_kernels_t *gr_cpu_kernels_select(const char *want);

/* Exact mode, one term at a time through gr_partial_add_term: the path this
 * backend had before the fast ones, and what they fall back to for a block
 * they cannot prove exact. Kept public for the tests that compare them. */
void gr_cpu_exact_f_reference(gr_partial_t *p, const void *in, int dtype, int op, int power, uint64_t n);

#endif /* GR_CPU_KERNELS_H */
