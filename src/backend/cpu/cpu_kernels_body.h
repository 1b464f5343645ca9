/*
 * cpu_kernels_body.h - the cpu backend's loops, written once and compiled once
 * per instruction-set level (cpu_kernels.h). Not an ordinary header: the file
 * that includes it (cpu_kernels.c, cpu_kernels_avx2.c, cpu_kernels_avx512.c)
 * first defines
 *   GR_CPU_VBYTES  the vector width in bytes: 16 (SSE2, or plain C off
 *                  x86-64), 32 (AVX2), 64 (AVX-512F); the file's flags must
 *                  provide the instructions (-mavx2, -mavx512f: CMakeLists.txt)
 *   GR_CPU_TABLE   the name of the gr_cpu_kernels_t it defines
 *   GR_CPU_LEVEL   its gr_cpu_isa_t
 * and includes it once. Everything else here is static.
 *
 * Specialisation: each loop is an always_inline body over (dtype, op),
 * instantiated by a switch with constant arguments, so the compiler removes
 * every per-element switch and the body is plain arithmetic.
 *
 * Vectorisation: GCC/Clang vector extensions on vectors of GR_CPU_VBYTES
 * bytes, and the f32 -> f64 widening and float max/min as intrinsics (GCC 12
 * lowers the generic __builtin_convertvector(v2f -> v2d) to two scalar
 * cvtss2sd). Checked on x86-64 (GCC 12, -O3) with
 *   objdump -d --no-show-raw-insn CMakeFiles/gpureduce.dir/src/backend/cpu/cpu_kernels_avx2.c.o
 * (and the baseline's cpu_kernels.c.o, the AVX-512 level's cpu_kernels_avx512.c.o)
 * (what each loop compiles to is said at the loop): packed instructions on
 * xmm / ymm / zmm registers in the hot loops, accumulators in registers, no
 * scalar code or stack traffic in them.
 *
 * No -ffast-math, no FMA contraction (-ffp-contract=off for these files, and
 * the AVX2 level is built without -mfma): fast mode's bits and the exact
 * paths depend on every add, subtract and multiply rounding on its own, as
 * IEEE says, in round to nearest, with subnormals kept (no FTZ / DAZ).
 */
#include "cpu_kernels.h"

#include <float.h>
#include <math.h>
#include <string.h>
#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

#if !defined(GR_CPU_VBYTES) || !defined(GR_CPU_TABLE) || !defined(GR_CPU_LEVEL)
#error "cpu_kernels_body.h: define GR_CPU_VBYTES, GR_CPU_TABLE and GR_CPU_LEVEL first"
#endif
#if GR_CPU_VBYTES == 32 && !defined(__AVX2__)
#error "the AVX2 level must be compiled with -mavx2"
#endif
#if GR_CPU_VBYTES == 64 && !defined(__AVX512F__)
#error "the AVX-512 level must be compiled with -mavx512f"
#endif
#if GR_CPU_VBYTES != 16 && GR_CPU_VBYTES != 32 && GR_CPU_VBYTES != 64
#error "GR_CPU_VBYTES is 16, 32 or 64"
#endif
#if !defined(FLT_EVAL_METHOD) || FLT_EVAL_METHOD != 0
#error "the exact fast paths need doubles evaluated in double precision (FLT_EVAL_METHOD 0, e.g. SSE2, not x87)"
#endif

#define GR_KI static inline __attribute__((always_inline))

#define VW (GR_CPU_VBYTES / 8) /* f64 lanes of a vector */
#define NV8 (8 / VW)           /* vectors that hold fast mode's 8 lanes */
#define XSTEP (4 * VW)         /* elements an iteration of the exact loops takes: 4 vectors */

typedef double vd __attribute__((vector_size(GR_CPU_VBYTES)));
typedef int64_t vl __attribute__((vector_size(GR_CPU_VBYTES)));
typedef float vf __attribute__((vector_size(GR_CPU_VBYTES))); /* 2 VW floats */
typedef int32_t vi __attribute__((vector_size(GR_CPU_VBYTES)));

GR_KI vd vsplat(double x)
{
    vd r;
    for (int l = 0; l < VW; ++l)
        r[l] = x;
    return r;
}

/* fabs lane by lane: clear the sign bit (NaN stays NaN, as with fabs) */
GR_KI vd vabs(vd x)
{
    vl m;
    for (int l = 0; l < VW; ++l)
        m[l] = INT64_MAX;
    return (vd)((vl)x & m);
}

/* Lane by lane on floats a > b ? a : b (max) or a < b ? a : b: b where a
 * is NaN (maxps and minps take their second operand then). */
GR_KI vf vextf(vf a, vf b, int max)
{
#if GR_CPU_VBYTES == 64
    return (vf)(max ? _mm512_max_ps((__m512)a, (__m512)b) : _mm512_min_ps((__m512)a, (__m512)b));
#elif GR_CPU_VBYTES == 32
    return (vf)(max ? _mm256_max_ps((__m256)a, (__m256)b) : _mm256_min_ps((__m256)a, (__m256)b));
#elif defined(__SSE2__)
    return (vf)(max ? _mm_max_ps((__m128)a, (__m128)b) : _mm_min_ps((__m128)a, (__m128)b));
#else
    for (int l = 0; l < 2 * VW; ++l)
        a[l] = (max ? a[l] > b[l] : a[l] < b[l]) ? a[l] : b[l];
    return a;
#endif
}

/* ---- loads and terms (constant dt / op after inlining) ------------------ */

/* VW floats at p widened exactly to f64: one cvtps2pd with a memory operand
 * (xmm: 2 floats, ymm: 4, zmm: 8). */
GR_KI vd cvt_f32(const float *p)
{
#if GR_CPU_VBYTES == 64
    return (vd)_mm512_cvtps_pd(_mm256_loadu_ps(p));
#elif GR_CPU_VBYTES == 32
    return (vd)_mm256_cvtps_pd(_mm_loadu_ps(p));
#elif defined(__SSE2__)
    return (vd)_mm_cvtps_pd(_mm_castsi128_ps(_mm_loadl_epi64((const __m128i *)(const void *)p)));
#else
    typedef float v2f __attribute__((vector_size(8)));
    v2f f;
    memcpy(&f, p, sizeof(f));
    return __builtin_convertvector(f, vd);
#endif
}

/* Elements i .. i + VW - 1 widened exactly to f64. */
GR_KI vd loadv(const void *in, int dt, uint64_t i)
{
    vd v;
    if (dt == GR_C_F64) {
        memcpy(&v, (const double *)in + i, sizeof(v));
    } else if (dt == GR_C_F32) {
        v = cvt_f32((const float *)in + i);
    } else {
        for (int l = 0; l < VW; ++l)
            v[l] = gr_load_f(in, dt, i + (uint64_t)l);
    }
    return v;
}

/* gr_term_f lane by lane: the same IEEE operations (|x|; x^p by gr_powd's
 * left-to-right products, sumsq as p = 2), so the same bits. */
GR_KI vd termv(int op, int pw, vd x)
{
    if (op == GR_C_ABSSUM)
        return vabs(x);
    const int p = op == GR_C_SUMSQ ? 2 : op == GR_C_POWSUM ? pw : 1;
    vd r = x;
    for (int k = 1; k < p; ++k)
        r = r * x;
    return r;
}

/* The term of element i + k VW .. as one vector. */
#define TERMV(src, i, k) termv(op, pw, loadv((src), dt, (i) + (uint64_t)(k) * VW))

/* ---- fast mode ------------------------------------------------------------ */

/*
 * 8 lanes as NV8 vectors, whatever the width, so every level gives the bits
 * of the loop this backend always had. f64 sum: per 8 elements 4 addpd (SSE2),
 * 2 vaddpd ymm (AVX2), 1 vaddpd zmm (AVX-512), each with a memory operand; f32:
 * the same adds after 4 / 2 / 1 vcvtps2pd. The adds of a lane depend on each
 * other, so the AVX-512 loop is one chain of 8-wide adds: 8 elements per add
 * latency (~3 cycles), well above what DRAM gives one core.
 */
GR_KI double fast_sum_body(const void *in, int dt, int op, int pw, uint64_t n)
{
    vd acc[NV8];
    /* -0.0 is the additive identity: an all -0.0 chunk stays -0.0 */
    for (int k = 0; k < NV8; ++k)
        acc[k] = vsplat(-0.0);
    uint64_t i = 0;
    for (; i + 8 <= n; i += 8)
        for (int k = 0; k < NV8; ++k)
            acc[k] += TERMV(in, i, k);
    double a[8];
    memcpy(a, acc, sizeof(a));
    for (int l = 0; i < n; ++i, ++l)
        a[l] += gr_term_f(op, pw, gr_load_f(in, dt, i));
    for (int w = 4; w > 0; w /= 2)
        for (int l = 0; l < w; ++l)
            a[l] += a[l + w];
    return a[0];
}

#define GR_FAST_OPS(dt)                                                         \
    switch (op) {                                                               \
    case GR_C_ABSSUM:                                                           \
        return fast_sum_body(in, dt, GR_C_ABSSUM, 1, n);                        \
    case GR_C_SUMSQ:                                                            \
        return fast_sum_body(in, dt, GR_C_SUMSQ, 2, n);                         \
    case GR_C_POWSUM:                                                           \
        return fast_sum_body(in, dt, GR_C_POWSUM, power, n);                    \
    default:                                                                    \
        return fast_sum_body(in, dt, GR_C_SUM, 1, n);                           \
    }

static double fast_sum_f(const void *in, int dtype, int op, int power, uint64_t n)
{
    switch (dtype) {
    case GR_C_F32:
        GR_FAST_OPS(GR_C_F32)
    case GR_C_F16:
        GR_FAST_OPS(GR_C_F16)
    case GR_C_BF16:
        GR_FAST_OPS(GR_C_BF16)
    default:
        GR_FAST_OPS(GR_C_F64)
    }
}

/* ---- floating min / max ------------------------------------------------- */

GR_KI double minmax_body(const void *in, int dt, int is_min, uint64_t n)
{
    double m[8];
    int64_t nan[8];
    for (int l = 0; l < 8; ++l) {
        m[l] = is_min ? INFINITY : -INFINITY;
        nan[l] = 0;
    }
    uint64_t i = 0;
    /* plain lanes: the vectoriser turns `x < m ? x : m` into minpd (NaN x
     * keeps m), on the level's vector width */
    for (; i + 8 <= n; i += 8)
        for (int l = 0; l < 8; ++l) {
            double x = gr_load_f(in, dt, i + (uint64_t)l);
            nan[l] |= x != x;
            m[l] = is_min ? (x < m[l] ? x : m[l]) : (x > m[l] ? x : m[l]);
        }
    for (int l = 0; i < n; ++i, ++l) {
        double x = gr_load_f(in, dt, i);
        nan[l] |= x != x;
        m[l] = is_min ? (x < m[l] ? x : m[l]) : (x > m[l] ? x : m[l]);
    }
    double r = m[0];
    int64_t anynan = nan[0];
    for (int l = 1; l < 8; ++l) {
        r = is_min ? gr_fmin_total(r, m[l]) : gr_fmax_total(r, m[l]);
        anynan |= nan[l];
    }
    if (anynan)
        return NAN;
    if (r == 0) {
        /* the lanes kept the first zero they met; the order -0.0 < +0.0 wants
         * -0.0 for min and +0.0 for max when the chunk holds one */
        for (uint64_t j = 0; j < n; ++j) {
            double x = gr_load_f(in, dt, j);
            if (x == 0 && (signbit(x) != 0) == is_min)
                return x;
        }
    }
    return r;
}

static double minmax_f(const void *in, int dtype, int op, uint64_t n)
{
    int mn = op == GR_C_MIN;
    switch (dtype) {
    case GR_C_F32:
        return mn ? minmax_body(in, GR_C_F32, 1, n) : minmax_body(in, GR_C_F32, 0, n);
    case GR_C_F16:
        return mn ? minmax_body(in, GR_C_F16, 1, n) : minmax_body(in, GR_C_F16, 0, n);
    case GR_C_BF16:
        return mn ? minmax_body(in, GR_C_BF16, 1, n) : minmax_body(in, GR_C_BF16, 0, n);
    default:
        return mn ? minmax_body(in, GR_C_F64, 1, n) : minmax_body(in, GR_C_F64, 0, n);
    }
}

/* ---- exact mode ------------------------------------------------------------ */

GR_KI void exact_ref_body(gr_partial_t *p, const void *in, int dt, int op, int pw, uint64_t n)
{
    for (uint64_t i = 0; i < n; ++i)
        gr_partial_add_term(p, gr_term_f(op, pw, gr_load_f(in, dt, i)));
}

/*
 * Blocks of at most EXACT_BLOCK = 2^11 terms (a multiple of XSTEP, which is
 * at most 32) enter the exact accumulator as one or two doubles instead of
 * 2048. Two ways to prove a block's doubles exact:
 *
 * (1) f32 sum and abssum: the plain f64 sum. Let the block's nonzero |t| have
 * exponent fields (of the f32 encoding) emin <= e <= emax, emin taken as 1
 * for subnormals. Every t is then a multiple of g = 2^(emin - 150) and below
 * 2^(emax - 126) in magnitude, so every partial sum of any subset, in any
 * order and lane split, is a multiple of g below 2^11 2^(emax - 126). When
 * emax - emin <= 29 - 11 = 18 that is at most 2^53 g: every such sum is a
 * double, every add exact, and the lanes' total is the block's exact sum.
 * One pass reads the block once: per element the widening and one add, and
 * per vector of floats an and (|t| as bits), a float max (emax) and a float
 * min of the bits of |t| - 1, in which a zero becomes a NaN that minps skips.
 * The check comes after the sum (nothing was added yet when it fails); a
 * NaN or Inf makes the sum NaN or Inf (finite f32 terms cannot overflow a
 * 2^11-term f64 sum). Uniform [0, 1) f32 data fails it in about one block in
 * 256 (a term below 2^-19); such a block takes way (2).
 *
 * (2) Every floating type and op: two levels of biased Fast2Sum.
 * A = sum |t| over the block in floating point (relative rounding error
 * below 2^-41 for 2^11 terms, in any order), A < 2^(eA + 1),
 * sigma1 = 2^(eA + 4) > 8 A, about 8 sum|t|. Each lane starts at S = sigma1
 * and does
 *     S' = S + t;  q = S' - S;  r = t - q;  S = S'
 * which is Fast2Sum (Dekker): when |S| >= |t|, q and r are exact and
 * q + r = t. S moves by at most sum |q| <= sum |t| + 2048 ulp(S) / 2
 * < sigma1 / 8 + 2^(s1 - 42) < sigma1 / 4, so S stays in (3/4, 5/4) sigma1,
 * above 6 sum|t| >= |t|: the condition holds at every step. Hence
 * sum t = sum_lanes (S - sigma1) + sum r exactly. Each S - sigma1 is exact
 * (Sterbenz) and a multiple of 2^(s1 - 53); together they are below
 * sigma1 / 4 in magnitude, so every partial sum over the lanes is such a
 * multiple below 2^s1: exact too. |r| <= ulp(S) / 2 <= 2^(s1 - 53).
 * Level 2: the residuals r the same way, sigma2 = 2^(s1 - 40) >= 4 * 2048 *
 * 2^(s1 - 53) >= 4 sum|r|. Exact unless some residual r2 of level 2 is not
 * 0, which needs bits more than ~90 below the block's sum of |t|. (The
 * bounds count the whole block, so they hold for any number of lanes: 2 VW
 * a level here.)
 *
 * When some r2 is not 0 the block is discarded (nothing was added yet) and
 * summed term by term. So are blocks with NaN, Inf, or an A that overflows or
 * reaches 2^1019 (sigma1 must be finite); blocks of zeros only are counted
 * here directly. sigma is never below 2^-1022 (the smallest normal): a larger
 * sigma keeps every bound, and r is then 0 as every double is a multiple of
 * 2^-1074. All of this needs rounding to nearest, no FMA contraction and no
 * excess precision (checked at the top of this file).
 */
#define EXACT_BLOCK_LOG2 11
#define EXACT_BLOCK (1u << EXACT_BLOCK_LOG2)

/* Way (1) for one block of n f32 terms (n a multiple of XSTEP, <= EXACT_BLOCK)
 * of sum (abs 0) or abssum (abs 1): returns 1 when it added them to p,
 * 0 (nothing added) when the check fails. Per XSTEP floats (AVX2: 16) the loop
 * is 2 vandps, 2 vmaxps, 2 vpsubd, 2 vminps, 4 vcvtps2pd and 4 vaddpd into
 * 4 independent accumulators (ymm; xmm and zmm alike). */
GR_KI int exact_f32_plain_block(gr_partial_t *p, const float *x, int abs, uint64_t n)
{
    vd acc[4];
    for (int k = 0; k < 4; ++k)
        acc[k] = vsplat(-0.0); /* an all -0.0 block stays -0.0 */
    vi absmask, one, zero, inf;
    for (int l = 0; l < 2 * VW; ++l) {
        absmask[l] = INT32_MAX;
        one[l] = 1;
        zero[l] = 0;
        inf[l] = 0x7F800000;
    }
    vf top = (vf)zero, low = (vf)inf; /* max |t|; min over nonzero |t| of the bits of |t| - 1 */
    for (uint64_t i = 0; i < n; i += XSTEP) {
        for (int h = 0; h < 2; ++h) {
            vi u;
            memcpy(&u, x + i + (uint64_t)h * 2 * VW, sizeof(u));
            vi a = u & absmask;
            top = vextf((vf)a, top, 1);
            low = vextf((vf)(a - one), low, 0); /* a zero: -1, a NaN, skipped */
        }
        for (int k = 0; k < 4; ++k) {
            vd t = cvt_f32(x + i + (uint64_t)k * VW);
            acc[k] += abs ? vabs(t) : t;
        }
    }
    vd s = (acc[0] + acc[1]) + (acc[2] + acc[3]);
    double d = -0.0;
    for (int l = 0; l < VW; ++l)
        d += s[l];
    if (!isfinite(d))
        return 0; /* a NaN or an Inf: term by term, which counts them */
    /* the lanes' extremes as bits: nonnegative floats order as their bits */
    int32_t tb[2 * VW], lb[2 * VW], hi = 0, lo = 0x7F800000;
    memcpy(tb, &top, sizeof(tb));
    memcpy(lb, &low, sizeof(lb));
    for (int l = 0; l < 2 * VW; ++l) {
        hi = tb[l] > hi ? tb[l] : hi;
        lo = lb[l] < lo ? lb[l] : lo;
    }
    if (hi == 0) {
        /* zeros only: d is -0.0 exactly when every term is */
        if (!signbit(d))
            p->nonnegzero++;
        return 1;
    }
    int emax = hi >> 23, emin = lo >> 23; /* exponent fields; emin of |t| - 1: at most |t|'s */
    if (emin < 1)
        emin = 1;
    if (emax - emin > 29 - EXACT_BLOCK_LOG2)
        return 0;
    gr_xacc_add_double(&p->sum, d);
    p->adds++;
    gr_partial_maybe_normalize(p);
    p->nonnegzero += (int64_t)n; /* some term is not zero, so not -0.0: > 0 is all that counts */
    return 1;
}

/* sum |t| of n terms (n a multiple of XSTEP): two accumulators of VW lanes */
GR_KI double abs_sum_body(const void *in, int dt, int op, int pw, uint64_t n)
{
    vd a = vsplat(0), b = vsplat(0);
    for (uint64_t i = 0; i < n; i += XSTEP) {
        a += vabs(TERMV(in, i, 0)) + vabs(TERMV(in, i, 1));
        b += vabs(TERMV(in, i, 2)) + vabs(TERMV(in, i, 3));
    }
    a += b;
    double s = 0;
    for (int l = 0; l < VW; ++l)
        s += a[l];
    return s;
}

/*
 * Way (2) for one block of n terms (a multiple of XSTEP, <= EXACT_BLOCK) whose
 * sum of |t| is A, into p: returns 0, adding nothing, when the block cannot be
 * proved exact. levels 1: level 1 only, refused when any r is not 0 (for f32
 * and the half types, whose 24 or fewer significant bits nearly always fit
 * level 1: a third of the work); levels 2: as described above. While it runs
 * over this block (from L1: its |t| were just summed) it sums the |t| of the
 * next nx terms at next (nx <= n) into *A_next, so one loop both computes and
 * keeps DRAM streaming. Per 4 vectors of f64 terms, levels 2: 4 loads, 12
 * adds / subtracts and 4 ors for the two levels, 4 loads, 4 ands and 4 adds
 * for A_next (SSE2: xmm; AVX2: ymm; AVX-512: zmm).
 */
GR_KI int exact_block_body(gr_partial_t *p, const void *in, int dt, int op, int pw, uint64_t n, double A, int levels,
                           const void *next, uint64_t nx, double *A_next)
{
    *A_next = 0;
    if (!(A < 0x1p1019))
        return 0; /* NaN, Inf, or too close to overflow for sigma */
    if (A == 0) {
        /* zeros only: the value is 0; count the +0.0 terms for the sign */
        int64_t pos = 0;
        for (uint64_t i = 0; i < n; ++i)
            pos += !signbit(gr_term_f(op, pw, gr_load_f(in, dt, i)));
        p->nonnegzero += pos;
        *A_next = abs_sum_body(next, dt, op, pw, nx);
        return 1;
    }
    uint64_t bits;
    memcpy(&bits, &A, sizeof(bits));
    int eA = (int)((bits >> 52) & 0x7FF) - 1023; /* A < 2^(eA + 1); -1023 for subnormal A */
    int s1 = eA + 4, s2 = s1 - 40;
    if (s1 < -1022)
        s1 = -1022;
    if (s2 < -1022)
        s2 = -1022;
    const double sigma1 = gr_pow2(s1), sigma2 = gr_pow2(s2);
    /* 2 vectors (2 VW lanes) per level: the exact sum does not depend on the
     * lanes, an iteration's ~50 operations hide the add latency of the 2
     * chained adds per lane, and the 7 live vectors fit the 16 registers of
     * SSE2 and AVX2 (8 lanes of 2-wide vectors spilled the accumulators). */
    vd S1[2], S2[2], an = vsplat(0);
    vl nz;
    for (int k = 0; k < 2; ++k) {
        S1[k] = vsplat(sigma1);
        S2[k] = vsplat(sigma2);
    }
    for (int l = 0; l < VW; ++l)
        nz[l] = 0;
    for (uint64_t i = 0; i < n; i += XSTEP) {
        if (i < nx) /* the same for all but the shard's last block: predicted */
            an += (vabs(TERMV(next, i, 0)) + vabs(TERMV(next, i, 1))) +
                  (vabs(TERMV(next, i, 2)) + vabs(TERMV(next, i, 3)));
        for (int k = 0; k < 4; ++k) {
            vd t = TERMV(in, i, k);
            vd S1n = S1[k & 1] + t;
            vd r = t - (S1n - S1[k & 1]);
            S1[k & 1] = S1n;
            if (levels == 1) {
                nz |= (vl)r;
            } else {
                vd S2n = S2[k & 1] + r;
                nz |= (vl)(r - (S2n - S2[k & 1]));
                S2[k & 1] = S2n;
            }
        }
    }
    double an_sum = 0;
    int64_t nzall = 0;
    for (int l = 0; l < VW; ++l) {
        an_sum += an[l];
        nzall |= nz[l];
    }
    *A_next = an_sum;
    if (((uint64_t)nzall << 1) != 0)
        return 0; /* some r (levels 1) or r2 is not +-0 */
    /* exact: see above */
    double d1 = 0, d2 = 0;
    for (int k = 0; k < 2; ++k)
        for (int l = 0; l < VW; ++l) {
            d1 += S1[k][l] - sigma1;
            d2 += S2[k][l] - sigma2;
        }
    gr_xacc_add_double(&p->sum, d1);
    gr_xacc_add_double(&p->sum, d2);
    p->adds += 2;
    gr_partial_maybe_normalize(p);
    p->nonnegzero += (int64_t)n; /* some term is not zero, so not -0.0: > 0 is all that counts */
    return 1;
}

/* A block the first try did not prove exact: way (2) from `levels` up, then
 * term by term. Returns the terms that took a fast path (n or 0). */
GR_KI uint64_t exact_block_retry(gr_partial_t *p, const void *b, int dt, int op, int pw, uint64_t n, double A,
                                 int levels)
{
    double unused;
    if (levels <= 1 && exact_block_body(p, b, dt, op, pw, n, A, 1, b, 0, &unused))
        return n;
    if (levels <= 2 && exact_block_body(p, b, dt, op, pw, n, A, 2, b, 0, &unused))
        return n;
    exact_ref_body(p, b, dt, op, pw, n);
    return 0;
}

GR_KI uint64_t exact_body(gr_partial_t *p, const void *in, int dt, int op, int pw, uint64_t n)
{
    const size_t esz = dt == GR_C_F64 ? 8 : dt == GR_C_F32 ? 4 : 2;
    const int plain = dt == GR_C_F32 && (op == GR_C_SUM || op == GR_C_ABSSUM);
    /* way (2)'s first try: f64 two levels; narrower types level 1 */
    const int levels = dt == GR_C_F64 ? 2 : 1;
    const char *base = (const char *)in;
    /* blocks of EXACT_BLOCK, the last one shorter (a multiple of XSTEP); < XSTEP left over */
#define BLOCK_AT(i) (n - (i) >= EXACT_BLOCK ? (uint64_t)EXACT_BLOCK : (n - (i)) & ~(uint64_t)(XSTEP - 1))
    uint64_t i = 0, fast = 0;
    double A = plain ? 0 : abs_sum_body(base, dt, op, pw, BLOCK_AT(0));
    while (n - i >= XSTEP) {
        const uint64_t nb = BLOCK_AT(i), nx = BLOCK_AT(i + nb);
        const void *b = base + i * esz, *next = base + (i + nb) * esz;
        if (plain) {
            if (exact_f32_plain_block(p, (const float *)b, op == GR_C_ABSSUM, nb))
                fast += nb;
            else
                fast += exact_block_retry(p, b, dt, op, pw, nb, abs_sum_body(b, dt, op, pw, nb), 1);
        } else {
            double A_next = 0;
            if (exact_block_body(p, b, dt, op, pw, nb, A, levels, next, nx, &A_next))
                fast += nb;
            else
                fast += exact_block_retry(p, b, dt, op, pw, nb, A, levels + 1);
            if (!(A < 0x1p1019))
                A_next = abs_sum_body(next, dt, op, pw, nx); /* the block loop did not run */
            A = A_next;
        }
        i += nb;
    }
#undef BLOCK_AT
    exact_ref_body(p, base + i * esz, dt, op, pw, n - i);
    return fast;
}

#define GR_EXACT_OPS(dt)                                                        \
    switch (op) {                                                               \
    case GR_C_ABSSUM:                                                           \
        return exact_body(p, in, dt, GR_C_ABSSUM, 1, n);                        \
    case GR_C_SUMSQ:                                                            \
        return exact_body(p, in, dt, GR_C_SUMSQ, 2, n);                         \
    case GR_C_POWSUM:                                                           \
        return exact_body(p, in, dt, GR_C_POWSUM, power, n);                    \
    default:                                                                    \
        return exact_body(p, in, dt, GR_C_SUM, 1, n);                           \
    }

static uint64_t exact_f(gr_partial_t *p, const void *in, int dtype, int op, int power, uint64_t n)
{
    switch (dtype) {
    case GR_C_F32:
        GR_EXACT_OPS(GR_C_F32)
    case GR_C_F16:
        GR_EXACT_OPS(GR_C_F16)
    case GR_C_BF16:
        GR_EXACT_OPS(GR_C_BF16)
    default:
        GR_EXACT_OPS(GR_C_F64)
    }
}

/* ---- integers ------------------------------------------------------------ */

GR_KI int64_t load_i(const void *in, int dt, uint64_t i)
{
    return dt == GR_C_I32 ? (int64_t)((const int32_t *)in)[i] : ((const int64_t *)in)[i];
}

GR_KI void int_body(const void *in, int dt, int op, int pw, uint64_t n, gr_local_t *loc)
{
    memset(loc, 0, sizeof(*loc));
    loc->count = n;
    if (op == GR_C_MIN || op == GR_C_MAX) {
        int64_t m = op == GR_C_MIN ? INT64_MAX : INT64_MIN;
        for (uint64_t i = 0; i < n; ++i) {
            int64_t x = load_i(in, dt, i);
            m = op == GR_C_MIN ? (x < m ? x : m) : (x > m ? x : m);
        }
        loc->lo = (uint64_t)m;
        return;
    }
    if (dt == GR_C_I32 && (op == GR_C_SUM || op == GR_C_ABSSUM)) {
        /* |x| <= 2^31: 2^31 of them fit an int64; vectorises */
        for (uint64_t b = 0; b < n; b += 1u << 31) {
            uint64_t e = n - b < (1u << 31) ? n : b + (1u << 31);
            int64_t s = 0;
            for (uint64_t i = b; i < e; ++i) {
                int64_t x = load_i(in, dt, i);
                s += op == GR_C_ABSSUM ? (x < 0 ? -x : x) : x;
            }
            gr_acc128_add(&loc->lo, &loc->hi, s);
        }
        return;
    }
    int32_t ovf = 0;
    for (uint64_t i = 0; i < n; ++i)
        gr_acc128_add(&loc->lo, &loc->hi, gr_term_i(op, pw, load_i(in, dt, i), &ovf));
    loc->overflow = ovf;
}

static void int_local(const void *in, int dtype, int op, int power, uint64_t n, gr_local_t *loc)
{
#define GR_INT_CASE(o, pw)                                                      \
    if (dtype == GR_C_I32)                                                      \
        int_body(in, GR_C_I32, o, pw, n, loc);                                  \
    else                                                                        \
        int_body(in, GR_C_I64, o, pw, n, loc);                                  \
    break;
    switch (op) {
    case GR_C_SUM:
        GR_INT_CASE(GR_C_SUM, 1)
    case GR_C_MIN:
        GR_INT_CASE(GR_C_MIN, 1)
    case GR_C_MAX:
        GR_INT_CASE(GR_C_MAX, 1)
    case GR_C_ABSSUM:
        GR_INT_CASE(GR_C_ABSSUM, 1)
    default:
        GR_INT_CASE(op, power)
    }
#undef GR_INT_CASE
}

extern const gr_cpu_kernels_t GR_CPU_TABLE;
const gr_cpu_kernels_t GR_CPU_TABLE = {GR_CPU_LEVEL, fast_sum_f, minmax_f, exact_f, int_local};
