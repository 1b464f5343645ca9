/*
 * gr_exact.cuh - device layers of the exact reduce: a floating-point
 * expansion per thread in front of an integer superaccumulator per warp.
 *
 * thread: every term is added to a K-term expansion a[0..K) (K = 2 or 3) by a
 *         cascade of error-free TwoSums (Knuth). The cascade's last error r is
 *         what the expansion could not hold; when r != 0 it is added exactly to
 *         the warp's superaccumulator. So sum(a) + (everything flushed) is the
 *         exact sum of the terms at every step. f32 sum/abssum first adds the
 *         four floats of a 16-byte vector in f64, which is exact when their
 *         exponents lie within 27 of each other (checked with integer ops).
 *         f16 / bf16 input is read 8 halves per 16-byte vector and widened to
 *         f32 (exact); sum/abssum add the eight in f64 when that is exact
 *         (always for finite f16, exponent span <= 42 for bf16; gr_x_vec8),
 *         else two float4 take the f32 path: the state is the f32 exact
 *         state of the same values.
 *         Non-finite terms are counted, not added; terms of magnitude >= 2^960
 *         go straight to the superaccumulator so no TwoSum can overflow.
 *         The body reads GR_EXACT_BATCH vectors per thread at once; when all
 *         of them are ordinary (gr_xterms) their terms enter the expansion
 *         stage by stage with one zero test per stage (gr_x_batch), else each
 *         vector takes the term-by-term path above (gr_x_vec).
 * warp:   at the end of a round the 32 expansions are merged exactly (a[2..K)
 *         flushed, then a shuffle tree over (a[0], a[1]), three TwoSums a
 *         level, residuals flushed) and lane 0 flushes the result.
 * block:  one superaccumulator of 70 int64 limbs per warp, in shared memory,
 *         limb k holding 32-bit digits at 2^(32k - 1088) as in gr_xacc_t; a
 *         finite double m 2^e adds to three limbs. Each limb is two 32-bit
 *         words updated with native 32-bit shared atomics (carry from the
 *         returned old value). Integer adds commute, so the order of flushes
 *         never matters.
 * grid:   each block carries its limb sums once and adds them, its counts
 *         and its signed-zero flag to a tally of 75 words with 64-bit integer
 *         atomics (order-free: deterministic for any grid); each word counts
 *         the blocks that have added to it in its top bits, so the block
 *         whose add is the last one for a word writes that word's total to
 *         mapped host memory and zeroes it for the next launch
 *         (gr_x_block_tally). No ticket: no block waits for another.
 *
 * Capacity (the proof; docs/EXACT.md restates it). An int64 limb holding
 * digits < 2^32 overflows only after more than 2^31 additions. The kernel
 * works in rounds of at most GR_EXACT_ROUND_VECS = 2^16 vectors per thread,
 * i.e. at most 2^16 * 512 * 8 = 2^28 elements per block (512: the widest block
 * built; 8: halves per vector, 4 for f32, 2 for f64), plus the < 16 scalar
 * head/tail elements in round 0. Within a round a
 * limb of a warp receives at most one addition per element (each element is
 * flushed at most once: either directly, or as its cascade's residual), plus
 * fewer than GR_EXACT_MERGE_FLUSHES = 2^11 from the end-of-round merge: < 2^28 +
 * 2^11 additions, each of magnitude < 2^32. At the end of every round the
 * block renormalises its limbs in one parallel carry step (limb[k] =
 * (limb[k] mod 2^32) + floor(limb[k-1] / 2^32)), which leaves every limb in
 * [-2^31, 2^32 + 2^31). So a limb never exceeds 2^33 + 2^60 < 2^63 in
 * magnitude, for any n: the capacity is the 64-bit element count. At the end
 * a block sums its <= 16 warps' limbs (< 2^38; < 2^59 when the carry step
 * after the last round was skipped, which gr_exact_last_carry_free in
 * gr_exact_bound.h allows only then) and carries the sums once, leaving each
 * below 2^33; at most GR_EXACT_GRID_MAX = 2^14 blocks add those into a tally
 * word (< 2^47, under the word's block count: gr_x_block_tally).
 * Overflow of the expansion: a round gives a thread at most 2^19 terms of
 * magnitude < 2^960, and a warp merges 32 of them, so every expansion term
 * and every TwoSum intermediate stays below 2^984 (1 + 2^-30), far from
 * 2^1024: the TwoSums stay error-free.
 *
 * Signed zero: a[0] starts each round as -0.0; in round-to-nearest a sum is
 * -0.0 only when both addends are -0.0, so a[0] is still -0.0 at the end of a
 * round exactly when every term it saw was -0.0. Terms that bypass the
 * expansion set the flag themselves.
 *
 * Nothing here may be compiled with fast-math or flush-to-zero: TwoSum
 * needs IEEE round-to-nearest on subnormals too. The __dadd_rn/__dsub_rn
 * intrinsics keep nvcc from contracting or reassociating.
 */
#ifndef GR_EXACT_CUH
#define GR_EXACT_CUH

#include <stdint.h>

#include "gr_dispatch.cuh"
#include "gr_exact_bound.h"
#include "gr_exact_kernels.h"
#include "gr_sync.cuh"
#include "gr_vec.cuh"

/* The one guard of every kernel that includes this file (exact, stats). */
#if defined(__CUDA_FTZ) && __CUDA_FTZ
#error "the exact kernels must not be built with -ftz=true or fast-math: they need IEEE subnormals"
#endif

#define GR_X_NL GR_EXACT_LIMBS
/* High word of 2^960: terms at or above it bypass the expansion. */
#define GR_X_BIG_HI 0x7BF00000u
#define GR_X_NEGZERO 0x8000000000000000ull
/* Vectors per thread per batch (loads in flight): the tuning policy's
 * (gr_tuning_sm90.h: 4 keeps the kernel within 64 registers, so 1024 threads
 * fit an SM, __launch_bounds__ below). */
#define GR_EXACT_BATCH GR_TUNE_EXACT_BATCH

/*
 * The kernel's policy (the last template argument of gr_exact_kernel and its
 * layers): gr_exact_policy is production and the only one the library builds.
 * The tests' ablation instances (tests/exact_gpu/exact_ablate.cu) pass
 * policies that each put back the earlier design of one part, so
 * `test_exact_gpu --bench` prices that part in the same run; each gives the
 * production result bits except the timing-only ones (cut_*, no_counts),
 * which stop the kernel early or drop a part. A policy is a type with these
 * enum members (0 or 1) and a stamp hook.
 */
struct gr_exact_policy {
    enum {
        eager = 0,       /* batch: every expansion stage for every term (no zero tests) */
        other_body = 0,  /* the body gr_xbody does not pick for the element type (batched <-> per vector) */
        full_merge = 0,  /* warp merge: each of the partner's K terms through all K (K^2 TwoSums a level) */
        last_carry = 0,  /* the carry step after the last round even when the bound makes it unneeded */
        ticket = 0,      /* the grid's end before the tally: the block's nonzero limbs into one
                          * accumulator, a ticket, and the last block takes the accumulator */
        fences = 0,      /* with ticket: __threadfence in every thread before the ticket,
                          * __threadfence_system at the end */
        cnt_atomics = 0, /* counters: every thread's 64-bit shared atomicAdd into one slot */
        stamps = 0,      /* stamp() records each warp's stages (gr_exact_block_tally's stages 5, 6) */
        /* timing only (wrong results): */
        cut_body = 0,   /* return after the body: no merge, no accumulator, no result */
        cut_merge = 0,  /* return after the warp merge and the block's flushes to shared memory */
        cut_block = 0,  /* return after the block's limb sums (the ticket end: after its atomics) */
        cut_ticket = 0, /* return after the tally's atomics (the ticket end: the ticket): no result */
        no_counts = 0   /* skip the counters at the end of a round */
    };
    /* Stage s reached (lane 0 of each warp records it where a policy probes:
     * the stage numbers are exact_ablate.cu's); dep: a value the probe must
     * wait for. Production: nothing. */
    static __device__ __forceinline__ void stamp(int, double = 0.0) {}
};

/* Global scratch of a ticket end: the grid's accumulator and ticket (zero
 * between launches). The stats kernel's exact sum and the exact kernel's
 * ticket-end ablation (policy ticket) uses it; the exact kernel itself uses the tally. */
typedef struct gr_exact_scratch {
    unsigned long long limb[GR_X_NL];
    unsigned long long cnt[4]; /* nan, +inf, -inf, flushes */
    unsigned int nonnegzero;
    unsigned int ticket;
} gr_exact_scratch_t;

/* Sum of a 32-bit value over the warp (every lane gets it; full mask). */
__device__ __forceinline__ unsigned int gr_warp_sum_u32(unsigned int v)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    return __reduce_add_sync(0xFFFFFFFFu, v);
#else
#pragma unroll
    for (int off = 16; off > 0; off >>= 1)
        v += __shfl_xor_sync(0xFFFFFFFFu, v, off);
    return v;
#endif
}

/* ---- thread layer ------------------------------------------------------- */

/* Knuth's TwoSum: s + err == a + b exactly, for any finite a, b without overflow. */
__device__ __forceinline__ double gr_two_sum(double a, double b, double &err)
{
    const double s = __dadd_rn(a, b);
    const double bv = __dsub_rn(s, a);
    const double av = __dsub_rn(s, bv);
    err = __dadd_rn(__dsub_rn(a, av), __dsub_rn(b, bv));
    return s;
}

/* Add x to the expansion; returns the residual it could not hold (often 0). */
template <int K>
__device__ __forceinline__ double gr_fpe_add(double (&a)[K], double x)
{
#pragma unroll
    for (int i = 0; i < K; ++i)
        a[i] = gr_two_sum(a[i], x, x);
    return x;
}

/*
 * One signed digit into a limb held as two 32-bit words (lo unsigned, hi
 * signed: limb = hi 2^32 + lo). Shared memory has native 32-bit atomic adds
 * (64-bit ones compile to a compare-and-swap loop), and the carry or borrow
 * of each add follows from the old value its atomic returns, so concurrent
 * adds leave the exact total.
 */
__device__ __forceinline__ void gr_limb_add(unsigned int *lo, int *hi, unsigned int d, bool neg)
{
    if (!neg) {
        const unsigned int old = atomicAdd(lo, d);
        if (old > 0xFFFFFFFFu - d)
            atomicAdd(hi, 1);
    } else {
        const unsigned int old = atomicAdd(lo, 0u - d);
        if (old < d)
            atomicAdd(hi, -1);
    }
}

/* A superaccumulator in shared memory: GR_X_NL limbs as (lo, hi) words. */
struct gr_xsuper {
    unsigned int *lo;
    int *hi;
};

/* Add a finite double exactly to a superaccumulator. */
__device__ __forceinline__ void gr_super_add(gr_xsuper acc, double x)
{
    const unsigned long long bits = (unsigned long long)__double_as_longlong(x);
    int bexp = (int)((bits >> 52) & 0x7FF);
    unsigned long long m = bits & 0xFFFFFFFFFFFFFull;
    if (bexp != 0)
        m |= 1ull << 52;
    else
        bexp = 1; /* subnormal: m * 2^-1074 */
    if (m == 0)
        return;
    const int pos = bexp - 1075 + GR_EXACT_BIAS; /* bit index of m's last place, >= 14 */
    const int k = pos >> 5, s = pos & 31;
    const unsigned long long v = m << s; /* bits 0..63 of m 2^s; m 2^s < 2^84 */
    const unsigned int d0 = (unsigned int)v, d1 = (unsigned int)(v >> 32);
    const unsigned int d2 = s ? (unsigned int)(m >> (64 - s)) : 0u;
    const bool neg = (bits >> 63) != 0;
    if (d0)
        gr_limb_add(acc.lo + k, acc.hi + k, d0, neg);
    if (d1)
        gr_limb_add(acc.lo + k + 1, acc.hi + k + 1, d1, neg);
    if (d2)
        gr_limb_add(acc.lo + k + 2, acc.hi + k + 2, d2, neg);
}

__device__ __forceinline__ long long gr_limb_get(const unsigned int *lo, const int *hi, int i)
{
    return (long long)(((unsigned long long)(unsigned int)hi[i] << 32) | lo[i]);
}

__device__ __forceinline__ void gr_limb_set(unsigned int *lo, int *hi, int i, long long v)
{
    lo[i] = (unsigned int)v;
    hi[i] = (int)(v >> 32);
}

/* Limb k and counter c of a block: the sums over its NW warps' accumulators
 * (s_lo/s_hi: NW x GR_X_NL limbs; s_cnt: NW x 4 counters). */
template <int NW>
__device__ __forceinline__ long long gr_x_block_limb(const unsigned int *s_lo, const int *s_hi, int k)
{
    long long s = 0;
#pragma unroll
    for (int w = 0; w < NW; ++w)
        s += gr_limb_get(s_lo, s_hi, w * GR_X_NL + k);
    return s;
}

template <int NW>
__device__ __forceinline__ unsigned long long gr_x_block_count(const unsigned long long *s_cnt, int c)
{
    unsigned long long v = 0ull;
#pragma unroll
    for (int w = 0; w < NW; ++w)
        v += s_cnt[w * 4 + c];
    return v;
}

/* Per-thread state; P: the policy (gr_exact_policy in production). */
template <int K, typename P = gr_exact_policy>
struct gr_xthread {
    double a[K];
    unsigned int cnt[4]; /* this round's NaN, +Inf, -Inf terms and flushes (< 2^19 each) */
    int nz;              /* some finite term was not -0.0 */
    gr_xsuper acc;       /* this warp's superaccumulator */
};

template <int K, typename P>
__device__ __forceinline__ void gr_x_reset(gr_xthread<K, P> &st)
{
    st.a[0] = -0.0;
#pragma unroll
    for (int i = 1; i < K; ++i)
        st.a[i] = 0.0;
}

template <int K, typename P>
__device__ __forceinline__ void gr_x_flush(gr_xthread<K, P> &st, double r)
{
    if (r != 0.0) {
        ++st.cnt[3];
        gr_super_add(st.acc, r);
    }
}

/* Any term, checked: non-finite counted, huge flushed, the rest expanded. */
template <int K, typename P>
__device__ __forceinline__ void gr_x_add_checked(gr_xthread<K, P> &st, double t)
{
    const unsigned int hi = (unsigned int)__double2hiint(t) & 0x7FFFFFFFu;
    if (hi >= 0x7FF00000u) {
        if (t != t)
            ++st.cnt[0];
        else if (t > 0.0)
            ++st.cnt[1];
        else
            ++st.cnt[2];
    } else if (hi >= GR_X_BIG_HI) {
        st.nz = 1;
        ++st.cnt[3];
        gr_super_add(st.acc, t);
    } else {
        gr_x_flush(st, gr_fpe_add(st.a, t));
    }
}

/* The f64 term of an element for op (sum, abssum, sumsq). */
template <int OP>
__device__ __forceinline__ double gr_x_term(double x)
{
    if (OP == GR_C_ABSSUM)
        return fabs(x);
    if (OP == GR_C_SUMSQ)
        return __dmul_rn(x, x); /* exact for f32 inputs only; f64 sumsq is not built */
    return x;
}

template <int OP, int K, typename P>
__device__ __forceinline__ void gr_x_scalar(gr_xthread<K, P> &st, float x)
{
    gr_x_add_checked(st, gr_x_term<OP>((double)x));
}
template <int OP, int K, typename P>
__device__ __forceinline__ void gr_x_scalar(gr_xthread<K, P> &st, double x)
{
    gr_x_add_checked(st, gr_x_term<OP>(x));
}
/* f16 / bf16: the f32 value (exact widening); sumsq squares it exactly in f64 */
template <int OP, int K, typename P>
__device__ __forceinline__ void gr_x_scalar(gr_xthread<K, P> &st, __half x)
{
    gr_x_scalar<OP>(st, gr_widen(x));
}
template <int OP, int K, typename P>
__device__ __forceinline__ void gr_x_scalar(gr_xthread<K, P> &st, __nv_bfloat16 x)
{
    gr_x_scalar<OP>(st, gr_widen(x));
}

/* Two doubles: one branch for the rare cases of both. */
template <int OP, int K, typename P>
__device__ __forceinline__ void gr_x_vec(gr_xthread<K, P> &st, double2 v)
{
    const double x = gr_x_term<OP>(v.x), y = gr_x_term<OP>(v.y);
    const unsigned int hx = (unsigned int)__double2hiint(x) & 0x7FFFFFFFu;
    const unsigned int hy = (unsigned int)__double2hiint(y) & 0x7FFFFFFFu;
    if (__builtin_expect(max(hx, hy) >= GR_X_BIG_HI, 0)) {
        gr_x_add_checked(st, x);
        gr_x_add_checked(st, y);
        return;
    }
    const double r0 = gr_fpe_add(st.a, x);
    const double r1 = gr_fpe_add(st.a, y);
    if (__builtin_expect(r0 != 0.0 || r1 != 0.0, 0)) {
        gr_x_flush(st, r0);
        gr_x_flush(st, r1);
    }
}

/*
 * Four floats: their expansion terms from gr_xterms<float4> (below: for
 * sum/abssum one exact f64 sum of the four when their exponent fields span at
 * most 27, for sumsq four exact squares), else, for a NaN, an Inf or a wider
 * span, each float checked on its own.
 */
template <int OP, int K, typename P>
__device__ __forceinline__ void gr_x_vec(gr_xthread<K, P> &st, float4 v);

/*
 * Eight halves (their f32 values: exact widening, gr_vec.cuh). sum/abssum:
 * one exact f64 sum of the eight enters the expansion, half the TwoSum work
 * of two quads, when that sum is exact (every partial sum then is too):
 *   f16: always, for finite values: every f16 is a multiple of 2^-24 below
 *        2^16, so eight sum to a multiple of 2^-24 below 2^19 (43 bits);
 *   bf16: when the exponent fields span at most 42: 8-bit significands make
 *        the eight multiples of 2^(emin-7) below 2^(emax+1), their sum below
 *        2^(emax+4): at most 53 bits. (A subnormal's field 0 counts as the
 *        smallest exponent: only more conservative.)
 * Otherwise (a NaN or Inf, a wider span), and for sumsq, two float4 through
 * the f32 path, which handles everything.
 */
template <int OP>
__device__ __forceinline__ bool gr_xterms_half(float4 lo, float4 hi, unsigned int max_span, double *t);
template <int OP, int K, typename P>
__device__ __forceinline__ void gr_x_vec8(gr_xthread<K, P> &st, float4 lo, float4 hi, unsigned int max_span)
{
    double q;
    if (__builtin_expect(gr_xterms_half<OP>(lo, hi, max_span, &q), 1)) {
        gr_x_flush(st, gr_fpe_add(st.a, q));
        return;
    }
    gr_x_vec<OP>(st, lo);
    gr_x_vec<OP>(st, hi);
}
template <int OP, int K, typename P>
__device__ __forceinline__ void gr_x_vec(gr_xthread<K, P> &st, gr_f16x8 v)
{
    float4 lo, hi;
    gr_widen8(v, lo, hi);
    gr_x_vec8<OP>(st, lo, hi, 0xFFFFFFFFu); /* any span: finite f16 octets always sum exactly */
}
template <int OP, int K, typename P>
__device__ __forceinline__ void gr_x_vec(gr_xthread<K, P> &st, gr_bf16x8 v)
{
    float4 lo, hi;
    gr_widen8(v, lo, hi);
    gr_x_vec8<OP>(st, lo, hi, 42u << 23);
}

/* ---- batches: the body's fast path ---------------------------------------- */

/*
 * The expansion terms of one 16-byte vector on the batch path, T per vector;
 * false sends the vector through gr_x_vec instead (a NaN, an Inf, a term of
 * 2^960 or more, or f32/half values whose exponents are too far apart for the
 * exact pre-add; f16/bf16 sumsq always).
 */
template <typename V, int OP>
struct gr_xterms;
template <int OP>
struct gr_xterms<double2, OP> {
    enum { T = 2 };
    static __device__ __forceinline__ bool get(double2 v, double *t)
    {
        t[0] = gr_x_term<OP>(v.x);
        t[1] = gr_x_term<OP>(v.y);
        const unsigned int hx = (unsigned int)__double2hiint(t[0]) & 0x7FFFFFFFu;
        const unsigned int hy = (unsigned int)__double2hiint(t[1]) & 0x7FFFFFFFu;
        return max(hx, hy) < GR_X_BIG_HI;
    }
};
template <int OP>
struct gr_xterms<float4, OP> {
    enum { T = OP == GR_C_SUMSQ ? 4 : 1 };
    static __device__ __forceinline__ bool get(float4 v, double *t)
    {
        unsigned int u0 = __float_as_uint(v.x), u1 = __float_as_uint(v.y);
        unsigned int u2 = __float_as_uint(v.z), u3 = __float_as_uint(v.w);
        if (OP == GR_C_ABSSUM) {
            u0 &= 0x7FFFFFFFu;
            u1 &= 0x7FFFFFFFu;
            u2 &= 0x7FFFFFFFu;
            u3 &= 0x7FFFFFFFu;
        }
        const unsigned int e0 = u0 & 0x7F800000u, e1 = u1 & 0x7F800000u;
        const unsigned int e2 = u2 & 0x7F800000u, e3 = u3 & 0x7F800000u;
        const unsigned int emax = max(max(e0, e1), max(e2, e3));
        const double d0 = (double)__uint_as_float(u0), d1 = (double)__uint_as_float(u1);
        const double d2 = (double)__uint_as_float(u2), d3 = (double)__uint_as_float(u3);
        if (OP == GR_C_SUMSQ) { /* squares of finite floats: exact, below 2^256 */
            t[0] = __dmul_rn(d0, d0);
            t[1] = __dmul_rn(d1, d1);
            t[2] = __dmul_rn(d2, d2);
            t[3] = __dmul_rn(d3, d3);
            return emax < 0x7F800000u;
        }
        const unsigned int emin = min(min(e0, e1), min(e2, e3));
        /* exact when the exponent fields span at most 27: the four are then
         * multiples of 2^(emin-150) below 2^(emax-124), so every partial sum
         * fits 53 bits */
        t[0] = __dadd_rn(__dadd_rn(d0, d1), __dadd_rn(d2, d3));
        return emax - emin <= (27u << 23) && emax < 0x7F800000u;
    }
};
/* gr_x_vec(float4), declared above: the batch's terms, or each float checked */
template <int OP, int K, typename P>
__device__ __forceinline__ void gr_x_vec(gr_xthread<K, P> &st, float4 v)
{
    typedef gr_xterms<float4, OP> X;
    double t[X::T];
    if (__builtin_expect(!X::get(v, t), 0)) {
        gr_x_add_checked(st, gr_x_term<OP>((double)v.x));
        gr_x_add_checked(st, gr_x_term<OP>((double)v.y));
        gr_x_add_checked(st, gr_x_term<OP>((double)v.z));
        gr_x_add_checked(st, gr_x_term<OP>((double)v.w));
        return;
    }
    double r[X::T];
    bool any = false;
#pragma unroll
    for (int j = 0; j < X::T; ++j) {
        r[j] = gr_fpe_add(st.a, t[j]);
        any |= r[j] != 0.0;
    }
    if (__builtin_expect(any, 0)) {
#pragma unroll
        for (int j = 0; j < X::T; ++j)
            gr_x_flush(st, r[j]);
    }
}

/* eight halves: their exact f64 sum under gr_x_vec8's rule (max_span: f16 any, bf16 42) */
template <int OP>
__device__ __forceinline__ bool gr_xterms_half(float4 lo, float4 hi, unsigned int max_span, double *t)
{
    if (OP == GR_C_SUMSQ)
        return false;
    unsigned int u[8] = {__float_as_uint(lo.x), __float_as_uint(lo.y), __float_as_uint(lo.z), __float_as_uint(lo.w),
                         __float_as_uint(hi.x), __float_as_uint(hi.y), __float_as_uint(hi.z), __float_as_uint(hi.w)};
    unsigned int emax = 0u, emin = 0x7F800000u;
    double d[8];
#pragma unroll
    for (int j = 0; j < 8; ++j) {
        if (OP == GR_C_ABSSUM)
            u[j] &= 0x7FFFFFFFu;
        const unsigned int e = u[j] & 0x7F800000u;
        emax = max(emax, e);
        emin = min(emin, e);
        d[j] = (double)__uint_as_float(u[j]);
    }
    t[0] = __dadd_rn(__dadd_rn(__dadd_rn(d[0], d[1]), __dadd_rn(d[2], d[3])),
                     __dadd_rn(__dadd_rn(d[4], d[5]), __dadd_rn(d[6], d[7])));
    return emax < 0x7F800000u && emax - emin <= max_span;
}
template <int OP>
struct gr_xterms<gr_f16x8, OP> {
    enum { T = 1 };
    static __device__ __forceinline__ bool get(gr_f16x8 v, double *t)
    {
        float4 lo, hi;
        gr_widen8(v, lo, hi);
        return gr_xterms_half<OP>(lo, hi, 0xFFFFFFFFu, t);
    }
};
template <int OP>
struct gr_xterms<gr_bf16x8, OP> {
    enum { T = 1 };
    static __device__ __forceinline__ bool get(gr_bf16x8 v, double *t)
    {
        float4 lo, hi;
        gr_widen8(v, lo, hi);
        return gr_xterms_half<OP>(lo, hi, 42u << 23, t);
    }
};

/* A vector of -0.0: the identity of every op's batch (its terms are -0.0 or
 * +0.0 and the pre-add checks pass), for the slots past the end of a round. */
__device__ __forceinline__ void gr_x_pad(float4 &v) { v = make_float4(-0.0f, -0.0f, -0.0f, -0.0f); }
__device__ __forceinline__ void gr_x_pad(double2 &v) { v = make_double2(-0.0, -0.0); }
__device__ __forceinline__ void gr_x_pad(gr_f16x8 &v) { v.u = make_uint4(0x80008000u, 0x80008000u, 0x80008000u, 0x80008000u); }
__device__ __forceinline__ void gr_x_pad(gr_bf16x8 &v) { v.u = make_uint4(0x80008000u, 0x80008000u, 0x80008000u, 0x80008000u); }

/*
 * B vectors at once. When every vector passes gr_xterms, their N = B T terms
 * go through the expansion stage by stage: N TwoSums into a[0], then, only if
 * some error is nonzero, N into a[1], and so on; the residuals left after a[K-1]
 * are flushed. Straight-line code within a stage (N independent error terms
 * for the scheduler), and a zero test per stage and batch rather than per
 * term, so data whose bits fit a[0] (uniform f32) or a[0..1] (uniform f64)
 * skips the later stages without a branch per element. Each step is an
 * error-free TwoSum, so sum(a) + flushed stays the exact total whatever the
 * order: the state differs from a term-by-term cascade's, its value does not.
 * Otherwise it returns false with the state untouched, and the caller sends
 * each vector through gr_x_vec (from memory again, in a loop that is not
 * unrolled: one copy of the slow path, and no registers held for it in the
 * fast one). Padding slots (gr_x_pad) add -0.0 or
 * +0.0: the value is unchanged, and a -0.0 a[0] stays -0.0 (sum); for abssum
 * and sumsq every term is >= +0.0, so a batch with one real vector has already
 * made a[0] non-negative-zero.
 */
template <int OP, int K, typename P, typename V, int B>
__device__ __forceinline__ bool gr_x_batch(gr_xthread<K, P> &st, const V (&x)[B])
{
    typedef gr_xterms<V, OP> X;
    const int N = B * X::T;
    double t[N];
    bool ok = true;
#pragma unroll
    for (int j = 0; j < B; ++j)
        ok &= X::get(x[j], t + j * X::T);
    if (__builtin_expect(!ok, 0))
        return false; /* the caller sends each vector through gr_x_vec */
#pragma unroll
    for (int i = 0; i < K; ++i) {
        if (i > 0 && !P::eager) {
            bool any = false;
#pragma unroll
            for (int j = 0; j < N; ++j)
                any |= t[j] != 0.0;
            if (!any)
                return true;
        }
#pragma unroll
        for (int j = 0; j < N; ++j)
            st.a[i] = gr_two_sum(st.a[i], t[j], t[j]);
    }
    bool any = false;
#pragma unroll
    for (int j = 0; j < N; ++j)
        any |= t[j] != 0.0;
    if (__builtin_expect(any, 0)) {
#pragma unroll
        for (int j = 0; j < N; ++j)
            gr_x_flush(st, t[j]);
    }
    return true;
}

/* ---- warp and block layers ---------------------------------------------- */

/*
 * End of a round: merge the warp's expansions exactly into lane 0 (residuals
 * flushed), lane 0 flushes the merged expansion, every thread restarts from
 * -0.0, and, when `carry`, the block renormalises its limbs (the caller may
 * skip that after its last round when the bound of gr_exact_last_carry_free
 * holds). Every thread of the block calls it (it contains __syncthreads and
 * full-mask shuffles).
 *
 * The merge: terms a[2..K) hold what a[0] and a[1] could not (rarely nonzero;
 * flushed as they are), then a tree of 5 shuffle levels over (a[0], a[1]):
 * the partner's b0 goes into a[0] and the error of that into a[1], the
 * partner's b1 into a[1]; both residuals are flushed. Three TwoSums a level
 * (a full K-term merge takes K^2 = 9), and every step is error-free, so the
 * warp's total is unchanged.
 */
template <int BLOCK, int K, typename P>
__device__ __forceinline__ void gr_x_round_end(gr_xthread<K, P> &st, unsigned int *s_lo, int *s_hi,
                                               unsigned long long *s_cnt, bool carry = true)
{
    const int lane = (int)(threadIdx.x & 31u);
    st.nz |= (unsigned long long)__double_as_longlong(st.a[0]) != GR_X_NEGZERO;
    if (P::full_merge) {
#pragma unroll
        for (int off = 16; off > 0; off >>= 1) {
            double b[K];
#pragma unroll
            for (int j = 0; j < K; ++j)
                b[j] = __shfl_down_sync(0xFFFFFFFFu, st.a[j], off);
            if (lane < off) {
#pragma unroll
                for (int j = 0; j < K; ++j)
                    gr_x_flush(st, gr_fpe_add(st.a, b[j]));
            }
        }
        if (lane == 0) {
#pragma unroll
            for (int j = 0; j < K; ++j)
                gr_x_flush(st, st.a[j]);
        }
    } else {
#pragma unroll
        for (int j = 2; j < K; ++j)
            gr_x_flush(st, st.a[j]);
        P::stamp(8, st.a[0] + st.a[1]);
#pragma unroll
        for (int off = 16; off > 0; off >>= 1) {
            const double b0 = __shfl_down_sync(0xFFFFFFFFu, st.a[0], off);
            const double b1 = __shfl_down_sync(0xFFFFFFFFu, st.a[1], off);
            if (lane < off) {
                double e, r1 = 0.0, r2;
                st.a[0] = gr_two_sum(st.a[0], b0, e);
                if (e != 0.0)
                    st.a[1] = gr_two_sum(st.a[1], e, r1);
                st.a[1] = gr_two_sum(st.a[1], b1, r2);
                if (__builtin_expect(r1 != 0.0 || r2 != 0.0, 0)) {
                    gr_x_flush(st, r1);
                    gr_x_flush(st, r2);
                }
            }
        }
        if (lane == 0) {
            gr_x_flush(st, st.a[0]);
            gr_x_flush(st, st.a[1]);
        }
    }
    P::stamp(7);
    gr_x_reset(st);
    if (P::no_counts) {
        /* timing only: the counts are dropped */
    } else if (P::cnt_atomics) {
#pragma unroll
        for (int c = 0; c < 4; ++c)
            if (st.cnt[c])
                atomicAdd(&s_cnt[c], (unsigned long long)st.cnt[c]);
    } else {
        /* the warp's totals into its own slots, by lane 0 alone: no atomics
         * (64-bit shared atomics are compare-and-swap loops, and every warp's
         * lane 0 has flushed). A warp's round total is < 2^24: fits 32 bits. */
        unsigned long long *mine = s_cnt + (threadIdx.x >> 5) * 4;
        const unsigned int fl = gr_warp_sum_u32(st.cnt[3]);
        if (__any_sync(0xFFFFFFFFu, (st.cnt[0] | st.cnt[1] | st.cnt[2]) != 0u)) {
#pragma unroll
            for (int c = 0; c < 3; ++c) {
                const unsigned int v = gr_warp_sum_u32(st.cnt[c]);
                if (lane == 0)
                    mine[c] += v;
            }
        }
        if (lane == 0)
            mine[3] += fl;
    }
#pragma unroll
    for (int c = 0; c < 4; ++c)
        st.cnt[c] = 0u;
    P::stamp(2);
    __syncthreads();
    if (!carry)
        return;

    /* One parallel carry step over every warp's limbs (see the capacity note). */
    const int TOT = (BLOCK / 32) * GR_X_NL;
    const int PER = (TOT + BLOCK - 1) / BLOCK;
    long long nv[PER];
#pragma unroll
    for (int p = 0; p < PER; ++p) {
        const int idx = (int)threadIdx.x + p * BLOCK;
        if (idx < TOT) {
            const int k = idx % GR_X_NL;
            const long long v = gr_limb_get(s_lo, s_hi, idx);
            long long w = k == GR_X_NL - 1 ? v : (v & 0xFFFFFFFFll);
            if (k > 0)
                w += gr_limb_get(s_lo, s_hi, idx - 1) >> 32; /* arithmetic shift: floor division */
            nv[p] = w;
        }
    }
    __syncthreads();
#pragma unroll
    for (int p = 0; p < PER; ++p) {
        const int idx = (int)threadIdx.x + p * BLOCK;
        if (idx < TOT)
            gr_limb_set(s_lo, s_hi, idx, nv[p]);
    }
    __syncthreads();
}

/*
 * Block -> grid: every limb summed over the block's NW warps (one thread a
 * limb) and added to the grid's accumulator with 64-bit integer atomics (any
 * order gives the same state); the block's last 4 threads each sum one
 * counter over the warps' slots (s_cnt[NW][4]) and add it; thread 0 sets the
 * flag. The caller has passed a __syncthreads since the last shared-memory
 * update.
 */
template <int BLOCK>
__device__ __forceinline__ void gr_x_block_to_grid(const unsigned int *s_lo, const int *s_hi,
                                                   const unsigned long long *s_cnt, int any_nz,
                                                   gr_exact_scratch_t *g)
{
    const int NW = BLOCK / 32;
    for (int k = (int)threadIdx.x; k < GR_X_NL; k += BLOCK) {
        const long long s = gr_x_block_limb<NW>(s_lo, s_hi, k);
        if (s != 0)
            atomicAdd(&g->limb[k], (unsigned long long)s);
    }
    static_assert(BLOCK - 4 >= GR_X_NL, "the counters' threads would also take limbs");
    if ((int)threadIdx.x >= BLOCK - 4) {
        const int c = (int)threadIdx.x - (BLOCK - 4);
        const unsigned long long v = gr_x_block_count<NW>(s_cnt, c);
        if (v)
            atomicAdd(&g->cnt[c], v);
    }
    if (threadIdx.x == 0 && any_nz)
        atomicOr(&g->nonnegzero, 1u);
}

/*
 * The last block: moves the grid's accumulator and counters into *result
 * (atomicExch, which also zeroes them for the next launch) and resets the
 * ticket. R: gr_exact_result_t or a result that starts with the same fields.
 */
template <int BLOCK, typename R>
__device__ __forceinline__ void gr_x_result_take(gr_exact_scratch_t *g, R *result)
{
    for (int k = (int)threadIdx.x; k < GR_X_NL; k += BLOCK)
        result->limb[k] = (int64_t)atomicExch(&g->limb[k], 0ull);
    if (threadIdx.x == 0) {
        result->nan = atomicExch(&g->cnt[0], 0ull);
        result->pinf = atomicExch(&g->cnt[1], 0ull);
        result->ninf = atomicExch(&g->cnt[2], 0ull);
        result->flushes = atomicExch(&g->cnt[3], 0ull);
        result->nonnegzero = atomicExch(&g->nonnegzero, 0u);
        g->ticket = 0u;
    }
}

/*
 * The tally: the exact kernel's grid accumulator without a ticket. Word j
 * (limbs 0..69, then the NaN, +Inf, -Inf and flush counts, then the count of
 * blocks with a term that was not -0.0) holds (blocks that have added to it)
 * 2^48 + (the sum of their values). Every block adds to every word once, with
 * one atomicAdd whose returned old value says how many blocks came before: the
 * block that finds gridDim.x - 1 of them holds the word's total, writes it to
 * the result and zeroes the word for the next launch. So no block waits for
 * any other, and each of the 75 words costs its block one atomic round trip,
 * in parallel, where the ticket cost a block its atomics, a barrier, the ticket
 * and, for the last block, a second round trip to read the accumulator.
 *
 * Bounds (docs/EXACT.md, "Capacity" item 6): before adding, the block carries
 * its limb sums once (|sum| < 2^63, so the carry is at most 2^31), which
 * leaves every value below 2^33 in magnitude (the top limb too: the sum's
 * value is below 2^1088, the top limb's weight is 2^1120); the counts of one
 * launch stay below 2^47 for n < GR_EXACT_LAUNCH_MAX_N; with at most
 * GR_EXACT_GRID_MAX = 2^14 blocks every partial sum stays below 2^47 and the
 * count below 2^15, so a word never carries into the count's bits and
 * (old + 2^47) >> 48 is the count of the blocks before.
 */
#define GR_X_NTALLY (GR_X_NL + 5)
#define GR_X_TALLY_SHIFT 48
typedef struct gr_exact_tally {
    unsigned long long w[GR_X_NTALLY];
} gr_exact_tally_t;

/*
 * Block -> tally (every thread of the block calls it; one __syncthreads).
 * s_sum: GR_X_NL words of shared scratch. The caller has passed a
 * __syncthreads since the last shared-memory update. Timing only:
 * P::cut_block returns before the atomics, P::cut_ticket after them
 * without writing (both leave the tally dirty: the tests zero it).
 */
template <int BLOCK, typename P>
__device__ __forceinline__ void gr_x_block_tally(const unsigned int *s_lo, const int *s_hi,
                                                 const unsigned long long *s_cnt, long long *s_sum, int any_nz,
                                                 gr_exact_tally_t *tally, gr_exact_result_t *result, uint64_t n)
{
    const int NW = BLOCK / 32;
    const int j = (int)threadIdx.x;
    static_assert(BLOCK >= GR_X_NTALLY, "one thread a word");
    long long s = 0;
    if (j < GR_X_NL) {
        s = gr_x_block_limb<NW>(s_lo, s_hi, j);
        s_sum[j] = s;
    }
    __syncthreads();
    P::stamp(4);
    if (P::cut_block)
        return;
    bool last = false;
    if (j < GR_X_NTALLY) {
        unsigned long long v;
        if (j < GR_X_NL) {
            long long c = j == GR_X_NL - 1 ? s : (s & 0xFFFFFFFFll);
            if (j > 0)
                c += s_sum[j - 1] >> 32; /* arithmetic shift: floor division */
            v = (unsigned long long)c;
        } else if (j < GR_X_NL + 4) {
            v = gr_x_block_count<NW>(s_cnt, j - GR_X_NL);
        } else {
            v = (unsigned long long)(any_nz != 0);
        }
        const unsigned long long add = (1ull << GR_X_TALLY_SHIFT) + v;
        const unsigned long long old = atomicAdd(&tally->w[j], add);
        last = ((old + (1ull << (GR_X_TALLY_SHIFT - 1))) >> GR_X_TALLY_SHIFT) == gridDim.x - 1u;
        if (last && !P::cut_ticket) {
            const unsigned long long total = old + add - ((unsigned long long)gridDim.x << GR_X_TALLY_SHIFT);
            tally->w[j] = 0ull; /* no block adds to it again in this launch */
            if (j < GR_X_NL)
                result->limb[j] = (int64_t)total;
            else if (j == GR_X_NL + 0)
                result->nan = total;
            else if (j == GR_X_NL + 1)
                result->pinf = total;
            else if (j == GR_X_NL + 2)
                result->ninf = total;
            else if (j == GR_X_NL + 3)
                result->flushes = total;
            else
                result->nonnegzero = total != 0ull;
            if (j == 0)
                result->count = n;
        }
    }
    if (P::stamps) { /* 5: this warp's atomics returned; 6: it wrote part of the result */
        P::stamp(5, (double)last);
        if (__any_sync(0xFFFFFFFFu, last) && !P::cut_ticket)
            P::stamp(6);
    }
}

/* 16-byte vector of each element type. */
template <typename T>
struct gr_xvec;
template <>
struct gr_xvec<float> {
    typedef float4 type;
};
template <>
struct gr_xvec<double> {
    typedef double2 type;
};
template <>
struct gr_xvec<__half> {
    typedef gr_f16x8 type;
};
template <>
struct gr_xvec<__nv_bfloat16> {
    typedef gr_bf16x8 type;
};

/*
 * The body each element type takes, measured on the H200 (docs/EXACT.md,
 * test_exact_gpu --bench): f32 each vector through its own cascade (its quad
 * pre-add already leaves one term per vector; batches were 3-7% slower at
 * 2^24 elements, level at 2^30, and ~45% slower on wide-range data, where many
 * batches fail gr_xterms); f64 and the halves in batches (f64: 1-20% faster
 * at 2^24 and 2^30 on uniform data, over four runs).
 */
template <typename T>
struct gr_xbody {
    enum { batched = 1 };
};
template <>
struct gr_xbody<float> {
    enum { batched = 0 };
};

/* ---- grid layer: the kernel ------------------------------------------------ */

/*
 * Launch assumptions: blockDim.x == BLOCK; 1 <= gridDim.x <= GR_EXACT_GRID_MAX;
 * n < GR_EXACT_LAUNCH_MAX_N; `in` aligned to sizeof(T) (any offset from 16
 * bytes is fine); 1 <= round_vecs <= GR_EXACT_ROUND_VECS; scratch
 * (gr_exact_tally_t, or gr_exact_scratch_t with P::ticket) zero at launch;
 * launches sharing it are ordered. Result: each field of *result is written
 * by the block that completes it (the tally), and scratch is left zero. The
 * result's stores carry no fence: the host reads it once the kernel has
 * completed (a stream or event sync), which makes every store visible.
 * P: the policy, gr_exact_policy in every build but the tests'.
 */
template <int BLOCK, typename T, int OP, int K, typename P = gr_exact_policy>
__global__ void __launch_bounds__(BLOCK, GR_TUNE_EXACT_MINB(BLOCK))
    gr_exact_kernel(const T *__restrict__ in, uint64_t n, uint64_t round_vecs, void *scratch,
                    gr_exact_result_t *result)
{
    typedef typename gr_xvec<T>::type vec_t;
    const uint64_t VEC = 16 / sizeof(T);
    const int NW = BLOCK / 32;
    __shared__ unsigned int s_lo[NW * GR_X_NL];
    __shared__ int s_hi[NW * GR_X_NL];
    __shared__ unsigned long long s_cnt[NW * 4]; /* per warp: nan, +inf, -inf, flushes */
    __shared__ long long s_sum[GR_X_NL]; /* the tally's carry */
    __shared__ int s_last;                 /* P::ticket */

    P::stamp(0);
    for (int i = (int)threadIdx.x; i < NW * GR_X_NL; i += BLOCK) {
        s_lo[i] = 0u;
        s_hi[i] = 0;
    }
    if (threadIdx.x < NW * 4)
        s_cnt[threadIdx.x] = 0ull;
    __syncthreads();

    gr_xthread<K, P> st;
    gr_x_reset(st);
    for (int c = 0; c < 4; ++c)
        st.cnt[c] = 0u;
    st.nz = 0;
    st.acc.lo = s_lo + (threadIdx.x >> 5) * GR_X_NL;
    st.acc.hi = s_hi + (threadIdx.x >> 5) * GR_X_NL;

    const uint64_t t = (uint64_t)blockIdx.x * BLOCK + threadIdx.x;
    const uint64_t nthreads = (uint64_t)gridDim.x * BLOCK;

    /* head (scalar) | whole 16-byte vectors | tail (scalar) */
    const uintptr_t addr = (uintptr_t)in;
    uint64_t head = (uint64_t)((16u - (addr & 15u)) & 15u) / sizeof(T);
    if (head > n)
        head = n;
    const uint64_t nvec = (n - head) / VEC;
    const uint64_t tail = head + nvec * VEC;
    const vec_t *__restrict__ v = (const vec_t *)(in + head);

    const uint64_t per_round = round_vecs * nthreads;
    /* the last round may skip its carry step when it gives no thread more than
     * gr_exact_last_carry_max_vecs vectors, i.e. when hi - lo < free_lim: the
     * bound's division is done here, not between the last body and the merge */
    const int64_t free_vecs = gr_exact_last_carry_max_vecs(VEC, gridDim.x);
    const uint64_t free_lim = free_vecs < 0 ? 0u : (uint64_t)free_vecs * nthreads + 1u;
    uint64_t lo = 0;
    for (bool first = true; first || lo < nvec; first = false) {
        const uint64_t hi = nvec - lo < per_round ? nvec : lo + per_round;
        uint64_t i = lo + t;
        const bool batched = (gr_xbody<T>::batched != 0) != (P::other_body != 0);
        if (!batched) {
            for (; i + 3 * nthreads < hi; i += 4 * nthreads) {
                const vec_t a = gr_ldg(v + i);
                const vec_t b = gr_ldg(v + i + nthreads);
                const vec_t c = gr_ldg(v + i + 2 * nthreads);
                const vec_t d = gr_ldg(v + i + 3 * nthreads);
                gr_x_vec<OP>(st, a);
                gr_x_vec<OP>(st, b);
                gr_x_vec<OP>(st, c);
                gr_x_vec<OP>(st, d);
            }
            for (; i < hi; i += nthreads)
                gr_x_vec<OP>(st, gr_ldg(v + i));
        } else {
            /* U loads in flight before any is used, then one batch; the
             * round's last batch is padded (one round trip for the < U
             * vectors left, not one each), in the same loop so the body is
             * compiled once */
            const int U = GR_EXACT_BATCH;
            for (; i < hi; i += U * nthreads) {
                vec_t x[U];
#pragma unroll
                for (int u = 0; u < U; ++u) {
                    if (i + u * nthreads < hi)
                        x[u] = gr_ldg(v + i + u * nthreads);
                    else
                        gr_x_pad(x[u]);
                }
                if (__builtin_expect(!gr_x_batch<OP>(st, x), 0)) {
#pragma unroll 1
                    for (int u = 0; u < U; ++u)
                        if (i + u * nthreads < hi)
                            gr_x_vec<OP>(st, gr_ldg(v + i + u * nthreads));
                }
            }
        }
        if (first) {
            for (uint64_t j = t; j < head; j += nthreads)
                gr_x_scalar<OP>(st, in[j]);
            for (uint64_t j = tail + t; j < n; j += nthreads)
                gr_x_scalar<OP>(st, in[j]);
        }
        P::stamp(1, st.a[0] + st.a[1] + st.a[K - 1]);
        if (P::cut_body) { /* a sink the compiler cannot drop: never true for the bench's data */
            if (st.a[0] == 0.125 && st.a[1] == 0.125)
                result->nan = 1u;
            return;
        }
        const bool carry = hi != nvec || P::last_carry || hi - lo >= free_lim;
        lo = hi;
        gr_x_round_end<BLOCK>(st, s_lo, s_hi, s_cnt, carry);
        P::stamp(3);
    }

    if (P::cut_merge)
        return;
    const int any_nz = __syncthreads_or(st.nz);
    if (!P::ticket) {
        /* block -> tally: no block waits for another (gr_x_block_tally) */
        gr_x_block_tally<BLOCK, P>(s_lo, s_hi, s_cnt, s_sum, any_nz, (gr_exact_tally_t *)scratch, result, n);
        return;
    }
    /* P::ticket: block -> grid accumulator (integer atomics: any order
     * gives the same), a ticket, and the last block takes the accumulator */
    gr_exact_scratch_t *g = (gr_exact_scratch_t *)scratch;
    gr_x_block_to_grid<BLOCK>(s_lo, s_hi, s_cnt, any_nz, g);
    P::stamp(4);
    if (P::cut_block)
        return;
    if (P::fences)
        __threadfence(); /* this thread's atomics before the ticket */
    __syncthreads();     /* the block's atomics before thread 0's release (gr_sync.cuh) */
    if (threadIdx.x == 0)
        s_last = (P::fences ? atomicAdd(&g->ticket, 1u) : gr_ticket_take(&g->ticket)) == gridDim.x - 1u;
    __syncthreads();
    P::stamp(5);
    if (!s_last || P::cut_ticket)
        return;
    if (P::fences)
        __threadfence(); /* the ticket before the reads */
    gr_x_result_take<BLOCK>(g, result);
    __syncthreads();
    if (threadIdx.x == 0) {
        result->count = n;
        if (P::fences)
            __threadfence_system();
    }
    P::stamp(6);
}

/* ---- the exact family's entry of the instance table (gr_dispatch.cuh) ------- */

/* variant: the expansion's terms K; f64 has no sumsq (the square of an f64 is
 * not exact in f64). */
template <int DT, int OP, int V, int BLOCK>
struct gr_kernel_of<GR_KF_EXACT, DT, OP, V, BLOCK> {
    static const void *get()
    {
        if constexpr (DT == GR_C_F64 && OP == GR_C_SUMSQ)
            return 0;
        else
            return (const void *)gr_exact_kernel<BLOCK, typename gr_ctype<DT>::type, OP, V>;
    }
};

#endif /* GR_EXACT_CUH */
