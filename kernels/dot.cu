/*
 * dot.cu - dot(x, y) and the sum of squares (nrm2, exact f64 sumsq) on the
 * GPU, fast and exact. Launch: grid blocks of GR_VEC_BLOCK threads, a
 * grid-stride loop; the grid's work folded on the GPU into one out record
 * per job (gr_vec_kernels.h, gr_vec_fold.cuh): fast blocks write a record
 * each and the last block adds them in a fixed order; exact blocks add their
 * carried limbs to the job's scratch with integer atomics (dot_exact_fold).
 *
 * fast:  f32 / f16 / bf16 products (and squares) are exact in f64 and summed
 *        in f64; f64 products are fused into the f64 sum (fma); f64 squares
 *        use Blue's three sums (the constants of src/backend/cpu/cpu_dot.c).
 *        Each thread reads 16-byte vectors, 4 in flight, into 4 independent
 *        sums (gr_vec_loop.cuh: scalar head and tail), folded as
 *        (0 + 1) + (2 + 3); the threads' sums meet in a fixed shared-memory
 *        tree, so a fixed grid gives fixed bits.
 * exact: every product exact (f64: TwoProduct by fma, both factors scaled
 *        into [0.5, 1) where the product or its error would underflow or
 *        overflow), added digit by digit to the block's wide accumulator in
 *        shared memory (the int64 limbs of gr_wacc_t, 2^0 at bit
 *        GR_VEC_WBIAS), each digit by native 32-bit atomics on a limb's two
 *        halves (w_digit). Integer adds commute: any schedule, any
 *        grid gives the same total, hence the same bits as the cpu backend.
 *        Integers always take this path (128-bit products).
 *        In front of the limbs each thread keeps two-term floating-point
 *        expansions (error-free TwoSums, gr_exact.cuh): xp for the products
 *        p = fl(a b), and, for f64, xe for their errors e = fma(a, b, -p)
 *        (f32 / f16 / bf16: p is exact in f64, e = 0, no xe). e is below
 *        2^-53 |p|, so the e's need their own leading term: through xp they
 *        would have taken a third stage (36 additions an element); in xe
 *        they take two, as the p's do in xp (24).
 *   batch (dot_exact_acc::vecs and chunk: gr_vec_loop's rounds of U vector
 *        pairs a thread, U = 4 f32, 2 f64 / f16 / bf16, cut into batches of
 *        N products, 4 f32 (one pair), 4 f64 (two pairs), 8 halves (one);
 *        dot_exact_acc::X_U, X_CHUNK: the most that fit 64 registers):
 *        all N products first, then one check for the batch, integer ops on
 *        the high words of the p's only:
 *          f32 / half: every p finite. A product of finite floats is exact in
 *            f64 and below 2^256 (subnormal factors included: >= 2^-298 when
 *            nonzero); a NaN or Inf factor gives a NaN or Inf p (Inf 0 is
 *            NaN). So "p finite" is "both factors finite".
 *          f64: every p in [2^-968, 2^960). Then p is finite (so are a and
 *            b), e is exact (the exponents of a and b sum to >= -970: a b is
 *            a multiple of 2^-1074 and e, at most half an ulp of p, fits 53
 *            bits, as a subnormal where it must; Boldo and Muller), and p,
 *            e < 2^960. A batch that fails only because some p is +-0 with
 *            a zero factor (zeros_only: a, b read again) takes the batch
 *            too: then p and e are zeros and p's sign is the product's.
 *        Then the p's stage by stage (x_stages, gr_x_batch's order): N
 *        TwoSums into xp[0] (N independent chains), then, only if one of
 *        their errors is nonzero, N into xp[1]; the residuals left after
 *        xp[1], if any, go to the limbs (w_add, exact). The e's the same
 *        through xe, with a zero test before xe[0] too (data whose products
 *        are exact skip xe). A zero test is two integer ops a term.
 *        A batch that fails its check sends each of its elements through the
 *        slow path, read again from memory in a loop that is not unrolled.
 *   slow path (operator(): head, tail, the < U vectors left, failed batches):
 *        NaN / Inf counted (a b as IEEE says: Inf 0 is NaN); f64 products
 *        whose p is outside [2^-968, 2^1020] scaled straight to the limbs
 *        (p, e of the frexp'd factors with their shift), p of a zero factor
 *        dropped; other p into xp, e into xe, one term at a time (x_add:
 *        terms >= 2^960 straight to the limbs, else the K-TwoSum cascade
 *        gr_fpe_add and its residual, when nonzero, to the limbs).
 *        Every step is exact (a TwoSum keeps x[i] + t; w_add is exact), so at
 *        every point sum(xp) + sum(xe) + (the thread's limb adds) is the
 *        exact sum of the thread's products; at the end the thread adds its
 *        four expansion terms to the limbs (flush), so the limbs hold the
 *        block's exact total and the result (rounded once on the host) has
 *        the bits it had, and the cpu backend's.
 *   No overflow: every term that enters an expansion is below 2^960 (batch:
 *        by the check; slow path: x_add). In a TwoSum |x[i]'| <= |x[i]| + |t|
 *        and |t'| <= |t| (round to nearest is monotone; the error of a
 *        rounded sum is at most the smaller addend), so each x[i] stays below
 *        the sum of the magnitudes of the terms that reached it. The host
 *        keeps n <= grid GR_VEC_EXACT_PER_BLOCK (2^29), and a thread of the
 *        nt = grid GR_VEC_BLOCK threads sees at most n / nt + L + 2 elements
 *        (gr_vec_loop.cuh: at most one head and one tail element, whole
 *        L-element vectors of a grid-stride; L <= 8), < 2^21 + 16, at most 2
 *        terms each: |x[i]| < 2^23 2^960 = 2^983 and every TwoSum
 *        intermediate < 2^984, far from 2^1024, so every TwoSum is exact
 *        (Knuth's TwoSum is error-free for finite operands without overflow,
 *        subnormals included: no flush-to-zero here).
 *   Capacity of the limbs: an element makes at most two w_adds (each of its
 *        terms reaches the limbs at most once: as itself, scaled, or as the
 *        residual of its last stage), each digit < 2^32 on one limb, and each
 *        thread flushes 4 expansion terms at its end. A block sees at most
 *        GR_VEC_BLOCK (n / nt + 10) < 2^29 + 2^12 elements, so a limb
 *        receives < (2^29 + 2^12) 2^33 + 4 GR_VEC_BLOCK 2^32 < 2^62 + 2^46 in
 *        magnitude (f32 / half: one term an element, < 2^61 + 2^45), as
 *        before the batch path: far below 2^63.
 *   Signed zero: xp[0] starts at -0.0 and every p of the batch path enters
 *        xp[0] first; in round-to-nearest a sum is -0.0 only when both
 *        addends are -0.0, so xp[0] is still -0.0 at the end exactly when
 *        every batch p was -0.0 (f64 batch p's are nonzero or zeros of a
 *        zero factor). The slow path sets the flag nz itself for every
 *        finite product whose p is not -0.0 (as the cpu backend does), and
 *        flush() adds "xp[0] is not -0.0": the block's cnt[3] (nonnegzero)
 *        is > 0 exactly when some finite product was not -0.0.
 *   Instructions an element (the batch, steady state): f64 1 DMUL + 1 DFMA
 *        + 24 DADD (4 TwoSums) + ~8 integer ops of checks and zero tests,
 *        where the per-element code took 1 DMUL + 1 DFMA + 36 DADD + about
 *        10 FP64 compares and branches (isfinite x2, the window, |t| >= 2^960
 *        per term, e != 0, residual tests) and a 64-bit count; f32 / half
 *        2 conversions + 1 DMUL + 12 DADD + ~6 integer ops, where it took
 *        the same arithmetic plus ~6 FP64 compares, branches and a 64-bit
 *        count an element.
 * Batches: dot_fast_batch / dot_exact_batch run the jobs of a batch (any
 *        dtypes, dot or squares) in one launch; block b runs the body of its
 *        job's block b - first_block of that job's grid, the same code the
 *        single-call kernel runs for that block, so every record, hence every
 *        result, has the bits of the job's own launch. Pair jobs (two products
 *        sharing x) take their own launch: dot_fast_pair_batch /
 *        dot_exact_pair_batch for any dtypes, or, when every pair of the batch
 *        has one dtype and y == x or not, the *_pair_batch_1 kernel of that
 *        dtype (64 registers, 4 blocks per SM; launch_pairs_1).
 * Nothing here may be compiled with fast-math or flush-to-zero.
 */
#include "gr_common.h"
#include "gr_exact.cuh" /* gr_fpe_add: the TwoSum cascade of the exact sum kernel */
#include "gr_vec_fold.cuh"
#include "gr_vec_kernels.h"
#include "gr_vec_loop.cuh"

#include <stdint.h>

namespace {

template <int DT> __device__ __forceinline__ double vload(const void *p, uint64_t i)
{
    if (DT == GR_C_F32)
        return (double)((const float *)p)[i];
    if (DT == GR_C_F16)
        return (double)gr_f16_bits_to_f32(((const uint16_t *)p)[i]);
    if (DT == GR_C_BF16)
        return (double)gr_bf16_bits_to_f32(((const uint16_t *)p)[i]);
    return ((const double *)p)[i];
}

template <int DT> __device__ __forceinline__ int64_t iload(const void *p, uint64_t i)
{
    if (DT == GR_C_I32)
        return (int64_t)((const int32_t *)p)[i];
    return ((const int64_t *)p)[i];
}

/* One signed digit (magnitude d < 2^32) into limb k: gr_limb_add's native 32-bit shared atomics on the
 * limb's two halves, the carry or borrow from the old value (the int64 limb is hi 2^32 + lo, little
 * endian). 64-bit shared atomics compile to a compare-and-swap loop, under which the 256 threads of a
 * block flushing into the same few limbs took tens of microseconds a launch. */
__device__ __forceinline__ void w_digit(unsigned long long *lim, int k, unsigned int d, bool neg)
{
    unsigned int *w = (unsigned int *)&lim[k];
    gr_limb_add(w, (int *)(w + 1), d, neg);
}

/* d * 2^shift (finite) into the shared limbs: three 32-bit digits, as gr_xacc's add_scaled. */
__device__ __forceinline__ void w_add(unsigned long long *lim, double d, int shift)
{
    uint64_t bits = (uint64_t)__double_as_longlong(d);
    const bool neg = (bits >> 63) != 0;
    int bexp = (int)((bits >> 52) & 0x7FF);
    uint64_t m = bits & ((1ull << 52) - 1);
    int e;
    if (bexp == 0x7FF)
        return;
    if (bexp == 0) {
        if (m == 0)
            return;
        e = -1074;
    } else {
        m |= 1ull << 52;
        e = bexp - 1075;
    }
    int pos = e + shift + GR_VEC_WBIAS;
    int k = pos >> 5, s = pos & 31;
    const unsigned int d0 = (unsigned int)(m << s);
    const uint64_t rest = s ? (m >> (32 - s)) : (m >> 32);
    const unsigned int d1 = (unsigned int)rest, d2 = (unsigned int)(rest >> 32);
    if (d0)
        w_digit(lim, k, d0, neg);
    if (d1)
        w_digit(lim, k + 1, d1, neg);
    if (d2)
        w_digit(lim, k + 2, d2, neg);
}

/* frexp of a finite nonzero double, inline (the library call left a stack slot in the unrolled loop):
 * a = m 2^e with 0.5 <= |m| < 1, exactly. Subnormals are first scaled by 2^54 (exact). */
__device__ __forceinline__ double w_frexp(double a, int &e)
{
    int sh = 0;
    if (fabs(a) < 0x1p-1022) {
        a = __dmul_rn(a, 0x1p54);
        sh = 54;
    }
    const long long bits = __double_as_longlong(a);
    e = (int)((bits >> 52) & 0x7FF) - 1022 - sh;
    return __longlong_as_double((bits & ~(0x7FFll << 52)) | (1022ll << 52));
}

/* One term t (finite) into expansion x; the residual, or t itself when
 * |t| >= 2^960 (no TwoSum may overflow: see the header), to the limbs. */
template <int K>
__device__ __forceinline__ void x_add(unsigned long long *lim, double (&x)[K], double t)
{
    if (fabs(t) >= 0x1p960) {
        w_add(lim, t, 0);
        return;
    }
    const double r = gr_fpe_add(x, t);
    if (r != 0)
        w_add(lim, r, 0);
}

/* The exact product a*b of two finite doubles: p into xp and its error e
 * into xe when both are ordinary doubles, else scaled straight to the limbs. */
template <int KP, int KE>
__device__ __forceinline__ void w_add_product(unsigned long long *lim, double (&xp)[KP], double (&xe)[KE], double a,
                                              double b)
{
    double p = __dmul_rn(a, b);
    double ap = fabs(p);
    if (ap >= 0x1p-968 && ap <= 0x1p1020) {
        double e = __fma_rn(a, b, -p);
        x_add(lim, xp, p);
        if (e != 0)
            x_add(lim, xe, e);
        return;
    }
    if (a == 0 || b == 0)
        return;
    int ea, eb;
    double ma = w_frexp(a, ea), mb = w_frexp(b, eb);
    p = __dmul_rn(ma, mb);
    double e = __fma_rn(ma, mb, -p);
    w_add(lim, p, ea + eb);
    w_add(lim, e, ea + eb);
}

/* High words of 2^-968 and 2^960: the f64 batch takes products p with X_P_LO <= |p|'s high word < X_P_HI. */
#define X_P_LO 0x03700000u
#define X_P_HI 0x7BF00000u

/* Nonzero bits below the sign of t, or'ed into acc (integer ops only): acc != 0 iff some t != +-0. */
__device__ __forceinline__ unsigned int x_nonzero(unsigned int acc, double t)
{
    return acc | (unsigned int)__double2loint(t) | ((unsigned int)__double2hiint(t) << 1);
}

/*
 * N terms (finite, each < 2^960 in magnitude) through expansion x stage by
 * stage, as gr_x_batch does: N TwoSums into x[0] (N independent chains),
 * then, only if some error is nonzero, N into x[1], and so on; the residuals
 * left after x[K-1] go to the limbs. first: test for all-zero terms before
 * x[0] too (the f64 errors e are often all zero).
 */
template <int K, int N>
__device__ __forceinline__ void x_stages(unsigned long long *lim, double (&x)[K], double (&t)[N], bool first)
{
#pragma unroll
    for (int s = 0; s <= K; ++s) {
        if (s > 0 || first) {
            unsigned int nz = 0u;
#pragma unroll
            for (int j = 0; j < N; ++j)
                nz = x_nonzero(nz, t[j]);
            if (nz == 0u)
                return;
        }
        if (s < K) {
#pragma unroll
            for (int j = 0; j < N; ++j)
                x[s] = gr_two_sum(x[s], t[j], t[j]);
        }
    }
#pragma unroll
    for (int j = 0; j < N; ++j)
        if (t[j] != 0)
            w_add(lim, t[j], 0);
}

/* The 128-bit two's complement integer hi:lo at 2^0, as gr_xacc_add_i128: three digits in [0, 2^32)
 * and the signed top one, hi / 2^32 in [-2^31, 2^31). */
__device__ __forceinline__ void w_add_i128(unsigned long long *lim, uint64_t lo, int64_t hi)
{
    const int k = GR_VEC_WBIAS / 32;
    const int64_t top = hi >> 32;
    if ((unsigned int)lo)
        w_digit(lim, k, (unsigned int)lo, false);
    if ((unsigned int)(lo >> 32))
        w_digit(lim, k + 1, (unsigned int)(lo >> 32), false);
    if ((unsigned int)hi)
        w_digit(lim, k + 2, (unsigned int)hi, false);
    if (top)
        w_digit(lim, k + 3, (unsigned int)(top < 0 ? -top : top), top < 0);
}

/*
 * One thread's exact state (header): the expansions xp (products p) and xe
 * (f64: the products' errors e) in front of the block's limbs, its counts and
 * its signed-zero flag. Visitor of gr_vec_loop: whole rounds of U vector
 * pairs through vecs (the batch), every other element through operator()
 * (the slow path, also the batch's fallback).
 */
template <int DT, bool SQ>
struct dot_exact_acc {
    typedef typename gr_vec_elem<DT>::type T;
    enum { whole_vectors = 1 };
    static constexpr bool F64 = DT == GR_C_F64;
    static constexpr int KP = 2, KE = F64 ? 2 : 1; /* f32 / half: p alone, xe stays 0 */
    /* Vector pairs a batch (X_CHUNK) and in flight (X_U, gr_vec_loop's U: whole batches), the most
     * that fit 64 registers without a spill (ptxas -v, sm_90; one more batch a round spills): f32
     * 1 and 4 (4 products a batch), f64 2 and 2 (4 products, 8 terms), halves 1 and 2 (8 products). */
    static constexpr int X_CHUNK = F64 ? 2 : 1;
    static constexpr int X_U = F64 || sizeof(T) == 2 ? 2 : 4;
    unsigned long long *lim;
    double xp[KP], xe[KE];
    unsigned int nan, pinf, ninf; /* < 2^22 each: a thread's elements (header) */
    int nz;                       /* a finite product of the slow path was not -0.0 */
    __device__ __forceinline__ explicit dot_exact_acc(unsigned long long *l) : lim(l), nan(0), pinf(0), ninf(0), nz(0)
    {
        xp[0] = -0.0; /* the signed-zero flag of the batch path (header) */
#pragma unroll
        for (int k = 1; k < KP; ++k)
            xp[k] = 0.0;
#pragma unroll
        for (int k = 0; k < KE; ++k)
            xe[k] = 0.0;
    }
    /* The slow path: any element, checked on its own. */
    __device__ __forceinline__ void operator()(int, double a, double b, uint64_t)
    {
        if (SQ)
            b = a;
        if (isfinite(a) && isfinite(b)) {
            double p = __dmul_rn(a, b);
            if (!(p == 0 && signbit(p)))
                nz = 1;
            if (F64)
                w_add_product(lim, xp, xe, a, b);
            else
                x_add(lim, xp, p); /* exact: 24 + 24 significant bits, |p| < 2^256 */
        } else {
            double t = a * b; /* NaN or Inf as IEEE: Inf * 0 is NaN */
            if (isnan(t))
                ++nan;
            else if (t > 0)
                ++pinf;
            else
                ++ninf;
        }
    }
    /*
     * A round of U vector pairs, in batches of X_CHUNK pairs (chunk): a
     * batch's N = X_CHUNK L products at once, one check for all (f32 / half:
     * every p finite; f64: every p in [2^-968, 2^960), then, for a batch that
     * fails only that, every p outside it a zero of a zero factor), then p
     * stage by stage through xp and (f64) e through xe; else each element
     * through the slow path, read again from memory in a loop that is not
     * unrolled (one copy of it, no registers held for it here).
     */
    template <typename V, int U>
    __device__ __forceinline__ void vecs(const V (&va)[U], const V (&vb)[U], const T *__restrict__ xh,
                                         const T *__restrict__ yh, uint64_t i, uint64_t nt)
    {
        static_assert(U % X_CHUNK == 0, "whole chunks");
#pragma unroll
        for (int c = 0; c < U; c += X_CHUNK)
            chunk(va, vb, c, xh, yh, i + (uint64_t)c * nt, nt);
    }
    /* Vector pairs c .. c + X_CHUNK - 1 of a round (their first vector at i): one batch. */
    template <typename V, int U>
    __device__ __forceinline__ void chunk(const V (&va)[U], const V (&vb)[U], int c, const T *__restrict__ xh,
                                          const T *__restrict__ yh, uint64_t i, uint64_t nt)
    {
        constexpr int L = 16 / sizeof(T), N = X_CHUNK * L;
        double p[N], e[F64 ? N : 1];
        unsigned int worst = 0u; /* f32 / half: max |p| high word; f64: max of (high word - 2^-968's), unsigned */
#pragma unroll
        for (int u = 0; u < X_CHUNK; ++u) {
            double la[L], lb[L];
            gr_lanes(va[c + u], la);
            gr_lanes(vb[c + u], lb);
#pragma unroll
            for (int k = 0; k < L; ++k) {
                const int j = u * L + k;
                p[j] = __dmul_rn(la[k], lb[k]);
                const unsigned int h = (unsigned int)__double2hiint(p[j]) & 0x7FFFFFFFu;
                if (F64) {
                    e[j] = __fma_rn(la[k], lb[k], -p[j]);
                    worst = max(worst, h - X_P_LO);
                } else {
                    worst = max(worst, h);
                }
            }
        }
        const bool ok = F64 ? worst < X_P_HI - X_P_LO : worst < 0x7FF00000u;
        if (__builtin_expect(!ok, 0) && !(F64 && zeros_only<N>(xh, yh, i, nt))) {
#pragma unroll 1
            for (int k = 0; k < N; ++k) {
                const uint64_t idx = (i + (uint64_t)(k / L) * nt) * L + (uint64_t)(k % L);
                (*this)(0, (double)gr_widen(xh[idx]), SQ ? 0.0 : (double)gr_widen(yh[idx]), idx);
            }
            return;
        }
        x_stages(lim, xp, p, false);
        if (F64)
            x_stages(lim, xe, e, true);
    }
    /* f64, a batch that failed the window: true when every p outside [2^-968, 2^960) is +-0 with a
     * zero factor (then e is +-0 too, and p's sign is the product's: the batch may take them). The
     * elements are read again, in a loop that is not unrolled: the vectors need not stay live. */
    template <int N>
    __device__ __forceinline__ static bool zeros_only(const T *__restrict__ xh, const T *__restrict__ yh, uint64_t i,
                                                      uint64_t nt)
    {
        constexpr int L = 16 / sizeof(T);
        bool ok = true;
#pragma unroll 1
        for (int k = 0; k < N; ++k) {
            const uint64_t idx = (i + (uint64_t)(k / L) * nt) * L + (uint64_t)(k % L);
            const double a = gr_widen(xh[idx]), b = SQ ? a : gr_widen(yh[idx]);
            const double p = __dmul_rn(a, b);
            const unsigned int h = (unsigned int)__double2hiint(p) & 0x7FFFFFFFu;
            ok &= h - X_P_LO < X_P_HI - X_P_LO || (p == 0 && (a == 0 || b == 0));
        }
        return ok;
    }
    /* The end of the thread's loop: the expansions to the limbs (now they hold its exact sum). */
    __device__ __forceinline__ void flush()
    {
        nz |= (unsigned long long)__double_as_longlong(xp[0]) != 0x8000000000000000ull;
#pragma unroll
        for (int k = 0; k < KP; ++k)
            if (xp[k] != 0)
                w_add(lim, xp[k], 0);
#pragma unroll
        for (int k = 0; k < KE; ++k)
            if (xe[k] != 0)
                w_add(lim, xe[k], 0);
    }
};

/* An exact block's shared limbs and counts to zero (the caller synchronises before using them). */
__device__ __forceinline__ void dot_exact_begin(unsigned long long *lim, unsigned long long *cnt)
{
    for (int k = threadIdx.x; k < GR_VEC_WLIMBS; k += blockDim.x)
        lim[k] = 0;
    if (threadIdx.x < 4)
        cnt[threadIdx.x] = 0;
}

__device__ __forceinline__ void dot_exact_end(unsigned long long *lim, unsigned long long *cnt, uint64_t nan,
                                              uint64_t pinf, uint64_t ninf, uint64_t nnz, unsigned nblk,
                                              gr_vec_fold_t *fold, gr_vec_out_t *out);

/* The end of an exact block (every thread; the block's state complete in lim and cnt): its limbs
 * carried and added to the job's scratch, then the last block moves the scratch to out (gr_vec_fold.cuh). */
__device__ __forceinline__ void dot_exact_fold(const unsigned long long *lim, const unsigned long long *cnt,
                                               unsigned nblk, gr_vec_fold_t *fold, gr_vec_out_t *out);

/* Block blk of nblk of one exact job: its part of *out. lim, cnt: the block's shared memory. */
template <int DT, bool SQ>
__device__ __forceinline__ void dot_exact_body(const void *x, const void *y, uint64_t n, gr_vec_fold_t *fold,
                                               gr_vec_out_t *out, unsigned blk, unsigned nblk,
                                               unsigned long long *lim, unsigned long long *cnt)
{
    dot_exact_begin(lim, cnt);
    __syncthreads();
    uint64_t nan = 0, pinf = 0, ninf = 0, nnz = 0;
    if constexpr (DT == GR_C_I32 || DT == GR_C_I64) {
        const uint64_t stride = (uint64_t)nblk * GR_VEC_BLOCK;
        for (uint64_t i = (uint64_t)blk * GR_VEC_BLOCK + threadIdx.x; i < n; i += stride) {
            int64_t a = iload<DT>(x, i), b = SQ ? a : iload<DT>(y, i);
            __int128 p = (__int128)a * (__int128)b;
            w_add_i128(lim, (uint64_t)p, (int64_t)(p >> 64));
        }
    } else {
        typedef typename gr_vec_elem<DT>::type T;
        dot_exact_acc<DT, SQ> acc(lim);
        gr_vec_loop<T, !SQ, dot_exact_acc<DT, SQ>::X_U>((const T *)x, (const T *)y, n, (uint64_t)blk * GR_VEC_BLOCK + threadIdx.x,
                               (uint64_t)nblk * GR_VEC_BLOCK, acc);
        acc.flush();
        nan = acc.nan;
        pinf = acc.pinf;
        ninf = acc.ninf;
        nnz = (uint64_t)acc.nz;
    }
    dot_exact_end(lim, cnt, nan, pinf, ninf, nnz, nblk, fold, out);
}

/* The end of an exact product's block (every thread): this thread's counts into the block's, then the fold. */
__device__ __forceinline__ void dot_exact_end(unsigned long long *lim, unsigned long long *cnt, uint64_t nan,
                                              uint64_t pinf, uint64_t ninf, uint64_t nnz, unsigned nblk,
                                              gr_vec_fold_t *fold, gr_vec_out_t *out)
{
    /* the warp's sums first (each < 2^22 a thread, header: < 2^27 a warp), then lane 0 alone: the 64-bit
     * shared atomics are compare-and-swap loops, and nnz is set in nearly every thread */
    const uint64_t v[4] = {nan, pinf, ninf, nnz};
#pragma unroll
    for (int c = 0; c < 4; ++c) {
        const unsigned int w = gr_warp_sum_u32((unsigned int)v[c]);
        if (w != 0u && (threadIdx.x & 31u) == 0u)
            atomicAdd(&cnt[c], (unsigned long long)w);
    }
    __syncthreads();
    dot_exact_fold(lim, cnt, nblk, fold, out);
}

/* An exact pair's two products (gr_vec_kernels.h): x.y into p[0], x.y2 into p[1], each its own limbs. */
template <int DT>
struct dot_exact_pair_acc {
    enum { whole_vectors = 1 };
    dot_exact_acc<DT, false> p0, p1;
    __device__ __forceinline__ dot_exact_pair_acc(unsigned long long *l0, unsigned long long *l1) : p0(l0), p1(l1) {}
    __device__ __forceinline__ void operator()(int u, double a, const double (&b)[2], uint64_t i)
    {
        p0(u, a, b[0], i);
        p1(u, a, b[1], i);
    }
    template <typename V, int U, typename T>
    __device__ __forceinline__ void vecs2(const V (&a)[U], const V (&b0)[U], const V (&b1)[U], const T *xh,
                                          const T *y0h, const T *y1h, uint64_t i, uint64_t nt)
    {
        p0.vecs(a, b0, xh, y0h, i, nt);
        p1.vecs(a, b1, xh, y1h, i, nt);
    }
};

/* Block blk of nblk of an exact pair job J (YX: J->y is J->x): both products' parts of their out records.
 * lim, cnt: the block's shared memory for two products (2 GR_VEC_WLIMBS limbs, 8 counts). */
template <int DT, bool YX>
__device__ __forceinline__ void dot_exact_pair_body(const gr_vec_jobs_t &jobs, const gr_vec_job_t *J, unsigned blk,
                                                    unsigned long long *lim, unsigned long long *cnt)
{
    typedef typename gr_vec_elem<DT>::type T;
    const unsigned nblk = (unsigned)J->grid;
    dot_exact_begin(lim, cnt);
    dot_exact_begin(lim + GR_VEC_WLIMBS, cnt + 4);
    __syncthreads();
    dot_exact_pair_acc<DT> acc(lim, lim + GR_VEC_WLIMBS);
    const T *const ys[2] = {(const T *)J->y, (const T *)J->y2};
    gr_vec_loop_ny<T, 2, YX, dot_exact_acc<DT, false>::X_U>((const T *)J->x, ys, J->n,
                                                             (uint64_t)blk * GR_VEC_BLOCK + threadIdx.x,
                                                             (uint64_t)nblk * GR_VEC_BLOCK, acc);
    acc.p0.flush();
    acc.p1.flush();
    const unsigned s2 = J->pair - 1u;
    dot_exact_end(lim, cnt, acc.p0.nan, acc.p0.pinf, acc.p0.ninf, (uint64_t)acc.p0.nz, nblk, jobs.fold + J->slot,
                  jobs.out + J->slot);
    dot_exact_end(lim + GR_VEC_WLIMBS, cnt + 4, acc.p1.nan, acc.p1.pinf, acc.p1.ninf, (uint64_t)acc.p1.nz, nblk,
                  jobs.fold + s2, jobs.out + s2);
}

static_assert(GR_VEC_WLIMBS <= GR_VEC_BLOCK, "one limb per thread in dot_exact_fold");

/*
 * The carry pass: limb k becomes (limb k mod 2^32) + floor(limb k-1 / 2^32), the top limb keeps its high
 * part; the total is unchanged and each limb (< 2^62 in magnitude before) lies in [-2^31, 2^32 + 2^31),
 * the top one excepted (products reach limb (2048 + GR_VEC_WBIAS) / 32 + 2 = 136 < 143 at most: the top
 * limb stays 0 but for carries). At most 2^20 blocks (gr_vec_grid) add such limbs: < 2^53 in the scratch.
 * The adds are integer atomics, order-free: any grid and schedule give the same scratch.
 */
__device__ __forceinline__ void dot_exact_fold(const unsigned long long *lim, const unsigned long long *cnt,
                                               unsigned nblk, gr_vec_fold_t *fold, gr_vec_out_t *out)
{
    gr_pdl_trigger(); /* this block's reads are done */
    const int k = (int)threadIdx.x;
    unsigned long long *acc = (unsigned long long *)fold->acc.limb;
    if (k < GR_VEC_WLIMBS) {
        const long long v = (long long)lim[k];
        const long long cin = k > 0 ? (long long)lim[k - 1] >> 32 : 0;
        const long long c = (k == GR_VEC_WLIMBS - 1 ? v : (v & 0xFFFFFFFFll)) + cin;
        if (c != 0)
            atomicAdd(&acc[k], (unsigned long long)c);
    }
    if (k < 4 && cnt[k] != 0)
        atomicAdd((unsigned long long *)&fold->acc.nan + k, cnt[k]);
    if (!gr_vec_last_block(&fold->ticket, nblk))
        return;
    if (k < GR_VEC_WLIMBS) {
        out->exact.limb[k] = (int64_t)gr_vec_ld_other(&acc[k]);
        acc[k] = 0ull;
    }
    if (k < 4) {
        unsigned long long *c = (unsigned long long *)&fold->acc.nan + k;
        (&out->exact.nan)[k] = gr_vec_ld_other(c);
        *c = 0ull;
    }
    gr_vec_fold_done(&fold->ticket, out);
}

/* 4 blocks per SM (<= 64 registers): gr_vec_grid launches at most 4 per SM, all resident at once */
template <int DT, bool SQ>
__global__ void __launch_bounds__(GR_VEC_BLOCK, 4) dot_exact(const void *x, const void *y, uint64_t n,
                                                          gr_vec_fold_t *fold, gr_vec_out_t *out)
{
    __shared__ unsigned long long lim[GR_VEC_WLIMBS];
    __shared__ unsigned long long cnt[4];
    dot_exact_body<DT, SQ>(x, y, n, fold, out, blockIdx.x, gridDim.x, lim, cnt);
}

/* One thread's fast sums: GR_VEC_LOOP_U independent slots (gr_vec_loop.cuh), each with the three
 * sums of Blue's f64 squares (s1, s2 only there) or one fused sum. */
template <int DT, bool SQ>
struct dot_fast_acc {
    double s0[GR_VEC_LOOP_U], s1[GR_VEC_LOOP_U], s2[GR_VEC_LOOP_U];
    __device__ __forceinline__ dot_fast_acc()
    {
#pragma unroll
        for (int u = 0; u < GR_VEC_LOOP_U; ++u) {
            /* -0.0: the additive identity, so a sum of only -0.0 products stays -0.0 */
            s0[u] = SQ ? 0.0 : -0.0;
            s1[u] = 0.0;
            s2[u] = 0.0;
        }
    }
    __device__ __forceinline__ void operator()(int u, double a, double b, uint64_t)
    {
        if (SQ && DT == GR_C_F64) {
            double aa = fabs(a);
            if (aa > 0x1p486) {
                aa = __dmul_rn(aa, 0x1p-538);
                s1[u] = __fma_rn(aa, aa, s1[u]);
            } else if (aa < 0x1p-511) {
                aa = __dmul_rn(aa, 0x1p537);
                s2[u] = __fma_rn(aa, aa, s2[u]);
            } else {
                s0[u] = __fma_rn(aa, aa, s0[u]); /* NaN lands here and stays NaN */
            }
        } else {
            /* f32 / half: the product is exact, fma adds it once; f64: fused */
            s0[u] = __fma_rn(a, SQ ? a : b, s0[u]);
        }
    }
};

/* Slot sums combined in a fixed order: (0 + 1) + (2 + 3). */
__device__ __forceinline__ double dot_fold4(const double (&s)[GR_VEC_LOOP_U])
{
    static_assert(GR_VEC_LOOP_U == 4, "dot_fold4 folds four slots");
    return __dadd_rn(__dadd_rn(s[0], s[1]), __dadd_rn(s[2], s[3]));
}

/* The block's fixed tree over its threads' (s0, s1, s2): the totals in sh[0..2][0] (every thread calls it). */
__device__ __forceinline__ void dot_fast_tree(double (*sh)[GR_VEC_BLOCK], double s0, double s1, double s2)
{
    sh[0][threadIdx.x] = s0;
    sh[1][threadIdx.x] = s1;
    sh[2][threadIdx.x] = s2;
    __syncthreads();
    for (int w = GR_VEC_BLOCK / 2; w > 0; w >>= 1) {
        if (threadIdx.x < w) {
            sh[0][threadIdx.x] = __dadd_rn(sh[0][threadIdx.x], sh[0][threadIdx.x + w]);
            sh[1][threadIdx.x] = __dadd_rn(sh[1][threadIdx.x], sh[1][threadIdx.x + w]);
            sh[2][threadIdx.x] = __dadd_rn(sh[2][threadIdx.x], sh[2][threadIdx.x + w]);
        }
        __syncthreads();
    }
}

/*
 * A fast dot's gr_value_t from its folded sum s0, as gr_vpartial_finish makes it of one rank's record
 * (src/core/vecop.c): one term s0 gives f = s0 (its -0.0, its infinities), NaN the canonical quiet NaN
 * and a nan_count of 1; count the elements; index -1; padding zero.
 */
__device__ __forceinline__ void dot_fast_value(gr_vec_value_t *res, double s0, uint64_t n, int dtype /* GR_C_*: gr_dtype_t's values */)
{
    gr_vec_value_t v;
    v.valid = 1;
    v.is_integer = 0;
    v.overflow = 0;
    v.pad0 = 0;
    v.f = isnan(s0) ? __longlong_as_double(0x7ff8000000000000ll) : s0;
    v.i = 0;
    v.count = n;
    v.nan_count = isnan(s0) ? 1u : 0u;
    v.dtype = dtype;
    v.pad1 = 0;
    v.index = -1;
    *res = v;
}

/*
 * The end of block blk of nblk of one fast product (every thread; s0..s2: this thread's sums): the
 * block's record rec[blk]; the job's last block then folds the nblk records in a fixed order (thread t
 * adds records t, t + 256, ... in turn, from -0.0, the identity of every sum; then the block's tree)
 * into *out: a fixed grid gives fixed bits. sh: shared memory.
 */
__device__ __forceinline__ void dot_fast_end(double (*sh)[GR_VEC_BLOCK], double s0, double s1, double s2,
                                             gr_vec_fast_rec_t *rec, gr_vec_fold_t *fold, gr_vec_out_t *out,
                                             unsigned blk, unsigned nblk, gr_vec_value_t *res = nullptr,
                                             uint64_t n = 0, int res_dtype = 0)
{
    gr_pdl_trigger(); /* this block's reads are done */
    dot_fast_tree(sh, s0, s1, s2);
    if (threadIdx.x == 0) {
        rec[blk].s[0] = sh[0][0];
        rec[blk].s[1] = sh[1][0];
        rec[blk].s[2] = sh[2][0];
    }
    if (!gr_vec_last_block(&fold->ticket, nblk))
        return;
    double f0 = -0.0, f1 = -0.0, f2 = -0.0;
    for (unsigned b = threadIdx.x; b < nblk; b += GR_VEC_BLOCK) {
        f0 = __dadd_rn(f0, gr_vec_ld_other(&rec[b].s[0]));
        f1 = __dadd_rn(f1, gr_vec_ld_other(&rec[b].s[1]));
        f2 = __dadd_rn(f2, gr_vec_ld_other(&rec[b].s[2]));
    }
    dot_fast_tree(sh, f0, f1, f2);
    if (threadIdx.x == 0) {
        out->fast.s[0] = sh[0][0];
        out->fast.s[1] = sh[1][0];
        out->fast.s[2] = sh[2][0];
        if (res) /* a dot's value at one rank: the record's s[0], NaN as the host writes it */
            dot_fast_value(res, sh[0][0], n, res_dtype);
    }
    gr_vec_fold_done(&fold->ticket, out);
}

/* Block blk of nblk of one fast job: its part of *out (dot_fast_end). */
template <int DT, bool SQ>
__device__ __forceinline__ void dot_fast_body(const void *x, const void *y, uint64_t n, gr_vec_fast_rec_t *rec,
                                              gr_vec_fold_t *fold, gr_vec_out_t *out, unsigned blk,
                                              unsigned nblk, double (*sh)[GR_VEC_BLOCK],
                                              gr_vec_value_t *res = nullptr, int res_dtype = 0)
{
    double s0, s1 = 0.0, s2 = 0.0;
    if constexpr (DT == GR_C_I32 || DT == GR_C_I64) {
        /* integers always take the exact kernel; this instance only keeps the dispatch whole */
        s0 = SQ ? 0.0 : -0.0;
        const uint64_t stride = (uint64_t)nblk * GR_VEC_BLOCK;
        for (uint64_t i = (uint64_t)blk * GR_VEC_BLOCK + threadIdx.x; i < n; i += stride)
            s0 = __fma_rn((double)iload<DT>(x, i), (double)iload<DT>(SQ ? x : y, i), s0);
    } else {
        typedef typename gr_vec_elem<DT>::type T;
        dot_fast_acc<DT, SQ> acc;
        gr_vec_loop<T, !SQ>((const T *)x, (const T *)y, n, (uint64_t)blk * GR_VEC_BLOCK + threadIdx.x,
                            (uint64_t)nblk * GR_VEC_BLOCK, acc);
        s0 = dot_fold4(acc.s0);
        if (SQ && DT == GR_C_F64) {
            s1 = dot_fold4(acc.s1);
            s2 = dot_fold4(acc.s2);
        }
    }
    dot_fast_end(sh, s0, s1, s2, rec, fold, out, blk, nblk, res, n, res_dtype);
}

/* A fast pair's two products (gr_vec_kernels.h): x.y in p[0], x.y2 in p[1], each as its single job's. */
template <int DT>
struct dot_fast_pair_acc {
    dot_fast_acc<DT, false> p[2];
    __device__ __forceinline__ void operator()(int u, double a, const double (&b)[2], uint64_t i)
    {
        p[0](u, a, b[0], i);
        p[1](u, a, b[1], i);
    }
};

/* Block blk of nblk of a fast pair job J (YX: J->y is J->x): both products' parts of their out records. */
template <int DT, bool YX>
__device__ __forceinline__ void dot_fast_pair_body(const gr_vec_jobs_t &jobs, const gr_vec_job_t *J, unsigned blk,
                                                   double (*sh)[GR_VEC_BLOCK])
{
    typedef typename gr_vec_elem<DT>::type T;
    const unsigned nblk = (unsigned)J->grid;
    dot_fast_pair_acc<DT> acc;
    const T *const ys[2] = {(const T *)J->y, (const T *)J->y2};
    gr_vec_loop_ny<T, 2, YX, GR_VEC_LOOP_U>((const T *)J->x, ys, J->n, (uint64_t)blk * GR_VEC_BLOCK + threadIdx.x,
                                             (uint64_t)nblk * GR_VEC_BLOCK, acc);
    gr_vec_fast_rec_t *rec = (gr_vec_fast_rec_t *)J->rec;
    const unsigned s2 = J->pair - 1u;
    gr_vec_value_t *const res = jobs.result;
    dot_fast_end(sh, dot_fold4(acc.p[0].s0), 0.0, 0.0, rec, jobs.fold + J->slot, jobs.out + J->slot, blk, nblk,
                 res ? res + J->slot : nullptr, J->n, J->dtype);
    dot_fast_end(sh, dot_fold4(acc.p[1].s0), 0.0, 0.0, rec + nblk, jobs.fold + s2, jobs.out + s2, blk, nblk,
                 res ? res + s2 : nullptr, J->n, J->dtype);
}

/* The cases of a switch on dtype * 2 + flag for the floating dtypes: CALL(DT, flag). */
#define GR_VEC_FLOAT_CASES(CALL)                                                                                     \
    case GR_C_F32 * 2: CALL(GR_C_F32, false); break;                                                                 \
    case GR_C_F32 * 2 + 1: CALL(GR_C_F32, true); break;                                                              \
    case GR_C_F64 * 2: CALL(GR_C_F64, false); break;                                                                 \
    case GR_C_F64 * 2 + 1: CALL(GR_C_F64, true); break;                                                              \
    case GR_C_F16 * 2: CALL(GR_C_F16, false); break;                                                                 \
    case GR_C_F16 * 2 + 1: CALL(GR_C_F16, true); break;                                                              \
    case GR_C_BF16 * 2: CALL(GR_C_BF16, false); break;                                                               \
    case GR_C_BF16 * 2 + 1: CALL(GR_C_BF16, true); break;

/* Run a pair body F<DT, YX> for a pair job's runtime dtype (floating) and x == y. */
#define GR_VEC_PAIR_DISPATCH(J, CALL)                                                                                \
    switch ((J)->dtype * 2 + ((J)->y == (J)->x)) {                                                                  \
        GR_VEC_FLOAT_CASES(CALL)                                                                                     \
    default: break;                                                                                                  \
    }

/* 4 blocks per SM (<= 64 registers): gr_vec_grid launches at most 4 per SM, all resident at once */
template <int DT, bool SQ>
__global__ void __launch_bounds__(GR_VEC_BLOCK, 4) dot_fast(const void *x, const void *y, uint64_t n,
                                                         gr_vec_fast_rec_t *rec, gr_vec_fold_t *fold,
                                                         gr_vec_out_t *out)
{
    __shared__ double sh[3][GR_VEC_BLOCK];
    dot_fast_body<DT, SQ>(x, y, n, rec, fold, out, blockIdx.x, gridDim.x, sh);
}

/* Run body F<DT, SQ> for a job's runtime dtype and sq: one switch, every instance. */
#define GR_VEC_DISPATCH(J, CALL)                                                                                     \
    switch ((J)->dtype * 2 + ((J)->y == nullptr)) {                                                                 \
        GR_VEC_FLOAT_CASES(CALL)                                                                                     \
    case GR_C_I32 * 2: CALL(GR_C_I32, false); break;                                                                 \
    case GR_C_I32 * 2 + 1: CALL(GR_C_I32, true); break;                                                              \
    case GR_C_I64 * 2: CALL(GR_C_I64, false); break;                                                                 \
    case GR_C_I64 * 2 + 1: CALL(GR_C_I64, true); break;                                                              \
    default: break;                                                                                                  \
    }

/*
 * A batch of fast jobs in one launch: block b runs the body of its job's block b - first_block. Single
 * jobs and pair jobs go in separate launches (gr_cuda_launch_dot_batch): singles at the single-call
 * kernels' 4 blocks of 256 per SM (64 registers), so a batch's blocks are resident as a single call's
 * are; pairs (three arrays, two sums) at 128 registers.
 */
__global__ void __launch_bounds__(GR_VEC_BLOCK, 4) dot_fast_batch(const __grid_constant__ gr_vec_jobs_t jobs)
{
    gr_pdl_wait();
    __shared__ double sh[3][GR_VEC_BLOCK];
    unsigned blk;
    const gr_vec_job_t *J = gr_vec_find_job(&jobs, blockIdx.x, &blk);
#define GR_FAST_CALL(DT, SQ)                                                                                         \
    dot_fast_body<DT, SQ>(J->x, SQ ? J->x : J->y, J->n, (gr_vec_fast_rec_t *)J->rec, jobs.fold + J->slot,         \
                          jobs.out + J->slot, blk, (unsigned)J->grid, sh,                                          \
                          jobs.result && !SQ ? jobs.result + J->slot : nullptr, J->dtype)
    GR_VEC_DISPATCH(J, GR_FAST_CALL)
#undef GR_FAST_CALL
}

/* A batch of fast pair jobs in one launch. */
__global__ void __maxnreg__(128) dot_fast_pair_batch(const __grid_constant__ gr_vec_jobs_t jobs)
{
    gr_pdl_wait();
    __shared__ double sh[3][GR_VEC_BLOCK];
    unsigned blk;
    const gr_vec_job_t *J = gr_vec_find_job(&jobs, blockIdx.x, &blk);
#define GR_FAST_PAIR_CALL(DT, YX) dot_fast_pair_body<DT, YX>(jobs, J, blk, sh)
    GR_VEC_PAIR_DISPATCH(J, GR_FAST_PAIR_CALL)
#undef GR_FAST_PAIR_CALL
}

/* A batch of exact pair jobs in one launch: two products' limbs and counts per block. */
__global__ void __maxnreg__(128) dot_exact_pair_batch(const __grid_constant__ gr_vec_jobs_t jobs)
{
    gr_pdl_wait();
    __shared__ unsigned long long lim[2 * GR_VEC_WLIMBS];
    __shared__ unsigned long long cnt[8];
    unsigned blk;
    const gr_vec_job_t *J = gr_vec_find_job(&jobs, blockIdx.x, &blk);
#define GR_EXACT_PAIR_CALL(DT, YX) dot_exact_pair_body<DT, YX>(jobs, J, blk, lim, cnt)
    GR_VEC_PAIR_DISPATCH(J, GR_EXACT_PAIR_CALL)
#undef GR_EXACT_PAIR_CALL
}

/*
 * A batch whose pair jobs all have dtype DT and the same YX (CG's r.r and r.Ar: f64, y == x): the pair
 * body without the runtime switch over every dtype, which ptxas fits in 64 registers where the generic
 * kernels above take 122-128, so 4 blocks per SM are resident, as gr_vec_grid's grids assume, instead
 * of 2 (ptxas -v, sm_90: fast f64 YX 60 registers, no stack; f64 and f32 otherwise 64, 0-8 bytes of
 * stack, as dot_fast_batch; exact f64 YX 64, no stack. Exact f32 and f64 without YX spill 32-152
 * bytes at 64 registers: they keep the generic kernel). The same body, hence the same bits.
 */
template <int DT, bool YX>
__global__ void __launch_bounds__(GR_VEC_BLOCK, 4) dot_fast_pair_batch_1(const __grid_constant__ gr_vec_jobs_t jobs)
{
    gr_pdl_wait();
    __shared__ double sh[3][GR_VEC_BLOCK];
    unsigned blk;
    const gr_vec_job_t *J = gr_vec_find_job(&jobs, blockIdx.x, &blk);
    dot_fast_pair_body<DT, YX>(jobs, J, blk, sh);
}

template <int DT, bool YX>
__global__ void __launch_bounds__(GR_VEC_BLOCK, 4) dot_exact_pair_batch_1(const __grid_constant__ gr_vec_jobs_t jobs)
{
    gr_pdl_wait();
    __shared__ unsigned long long lim[2 * GR_VEC_WLIMBS];
    __shared__ unsigned long long cnt[8];
    unsigned blk;
    const gr_vec_job_t *J = gr_vec_find_job(&jobs, blockIdx.x, &blk);
    dot_exact_pair_body<DT, YX>(jobs, J, blk, lim, cnt);
}

/* Launch a batch kernel of grid blocks; pdl: with programmatic stream serialization (gr_pdl_wait). */
static cudaError_t launch_jobs(void (*kernel)(gr_vec_jobs_t), unsigned grid, const gr_vec_jobs_t *jobs, bool pdl,
                               cudaStream_t stream)
{
    if (!pdl) {
        kernel<<<grid, GR_VEC_BLOCK, 0, stream>>>(*jobs);
        return cudaGetLastError();
    }
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3(grid);
    cfg.blockDim = dim3(GR_VEC_BLOCK);
    cfg.stream = stream;
    cudaLaunchAttribute at[1];
    at[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    at[0].val.programmaticStreamSerializationAllowed = 1;
    cfg.attrs = at;
    cfg.numAttrs = 1;
    return cudaLaunchKernelEx(&cfg, kernel, *jobs);
}

/* Launch a pair batch on the kernel of one dtype and YX when every job shares them and there is one;
 * false: the caller launches the generic kernel. */
bool launch_pairs_1(const gr_vec_jobs_t *jobs, int exact, bool pdl, unsigned grid, cudaStream_t stream,
                    cudaError_t *e)
{
    const int dt = jobs->job[0].dtype;
    const bool yx = jobs->job[0].y == jobs->job[0].x;
    for (int j = 1; j < jobs->njobs; ++j)
        if (jobs->job[j].dtype != dt || (jobs->job[j].y == jobs->job[j].x) != yx)
            return false;
    void (*k)(gr_vec_jobs_t) = nullptr;
    if (exact) {
        if (dt != GR_C_F64 || !yx)
            return false;
        k = dot_exact_pair_batch_1<GR_C_F64, true>;
    } else {
        switch (dt * 2 + (int)yx) {
        case GR_C_F32 * 2: k = dot_fast_pair_batch_1<GR_C_F32, false>; break;
        case GR_C_F32 * 2 + 1: k = dot_fast_pair_batch_1<GR_C_F32, true>; break;
        case GR_C_F64 * 2: k = dot_fast_pair_batch_1<GR_C_F64, false>; break;
        case GR_C_F64 * 2 + 1: k = dot_fast_pair_batch_1<GR_C_F64, true>; break;
        default: return false;
        }
    }
    *e = launch_jobs(k, grid, jobs, pdl, stream);
    return true;
}

/* The same as dot_fast_batch for exact single jobs (and every integer job). */
__global__ void __launch_bounds__(GR_VEC_BLOCK, 4) dot_exact_batch(const __grid_constant__ gr_vec_jobs_t jobs)
{
    gr_pdl_wait();
    __shared__ unsigned long long lim[GR_VEC_WLIMBS];
    __shared__ unsigned long long cnt[4];
    unsigned blk;
    const gr_vec_job_t *J = gr_vec_find_job(&jobs, blockIdx.x, &blk);
#define GR_EXACT_CALL(DT, SQ)                                                                                        \
    dot_exact_body<DT, SQ>(J->x, SQ ? J->x : J->y, J->n, jobs.fold + J->slot, jobs.out + J->slot, blk,             \
                           (unsigned)J->grid, lim, cnt)
    GR_VEC_DISPATCH(J, GR_EXACT_CALL)
#undef GR_EXACT_CALL
}

template <int DT>
cudaError_t launch_dt(const void *x, const void *y, uint64_t n, int exact, int grid, void *rec, gr_vec_fold_t *fold,
                      gr_vec_out_t *out, cudaStream_t st)
{
    bool sq = y == nullptr;
    bool ints = DT == GR_C_I32 || DT == GR_C_I64;
    if (exact || ints) {
        if (sq)
            dot_exact<DT, true><<<grid, GR_VEC_BLOCK, 0, st>>>(x, x, n, fold, out);
        else
            dot_exact<DT, false><<<grid, GR_VEC_BLOCK, 0, st>>>(x, y, n, fold, out);
    } else {
        gr_vec_fast_rec_t *r = (gr_vec_fast_rec_t *)rec;
        if (sq)
            dot_fast<DT, true><<<grid, GR_VEC_BLOCK, 0, st>>>(x, x, n, r, fold, out);
        else
            dot_fast<DT, false><<<grid, GR_VEC_BLOCK, 0, st>>>(x, y, n, r, fold, out);
    }
    return cudaGetLastError();
}

} // namespace

extern "C" cudaError_t gr_cuda_launch_dot(const void *x, const void *y, uint64_t n, int dtype, int exact, int grid,
                                          void *rec, gr_vec_fold_t *fold, gr_vec_out_t *out, cudaStream_t stream)
{
    if (grid < 1 || !fold || !out || (!rec && !exact && dtype != GR_C_I32 && dtype != GR_C_I64))
        return cudaErrorInvalidValue;
    switch (dtype) {
    case GR_C_F32:
        return launch_dt<GR_C_F32>(x, y, n, exact, grid, rec, fold, out, stream);
    case GR_C_F64:
        return launch_dt<GR_C_F64>(x, y, n, exact, grid, rec, fold, out, stream);
    case GR_C_F16:
        return launch_dt<GR_C_F16>(x, y, n, exact, grid, rec, fold, out, stream);
    case GR_C_BF16:
        return launch_dt<GR_C_BF16>(x, y, n, exact, grid, rec, fold, out, stream);
    case GR_C_I32:
        return launch_dt<GR_C_I32>(x, y, n, exact, grid, rec, fold, out, stream);
    case GR_C_I64:
        return launch_dt<GR_C_I64>(x, y, n, exact, grid, rec, fold, out, stream);
    default:
        return cudaErrorInvalidValue;
    }
}

extern "C" cudaError_t gr_cuda_launch_dot_batch(const gr_vec_jobs_t *jobs, int exact, int pdl, cudaStream_t stream)
{
    if (jobs->njobs < 1 || jobs->njobs > GR_VEC_JOBS_MAX)
        return cudaErrorInvalidValue;
    const bool pairs = jobs->job[0].pair != 0;
    for (int j = 1; j < jobs->njobs; ++j)
        if ((jobs->job[j].pair != 0) != pairs)
            return cudaErrorInvalidValue; /* singles and pairs go in separate launches */
    const gr_vec_job_t &last = jobs->job[jobs->njobs - 1];
    const unsigned grid = last.first_block + (unsigned)last.grid;
    cudaError_t e = cudaSuccess;
    if (pairs && launch_pairs_1(jobs, exact, pdl != 0, grid, stream, &e))
        return e;
    return launch_jobs(exact && pairs ? dot_exact_pair_batch
                       : exact        ? dot_exact_batch
                       : pairs        ? dot_fast_pair_batch
                                      : dot_fast_batch,
                       grid, jobs, pdl != 0, stream);
}
