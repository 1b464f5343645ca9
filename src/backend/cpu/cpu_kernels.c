/*
 * cpu_kernels.c - the cpu backend's inner loops; see cpu_kernels.h.
 *
 * Specialisation: each loop is written once as an always_inline body over
 * (dtype, op) and instantiated by a switch with constant arguments, so the
 * compiler removes every per-element switch and the body is plain arithmetic.
 *
 * Vectorisation: GCC/Clang vector extensions on 16-byte vectors of two f64
 * (v2d), the width every 64-bit target has in its baseline (SSE2 on x86-64,
 * NEON on aarch64); no -march=native, the library must run on any x86-64.
 * Fast mode keeps 8 lanes as 4 such vectors, the exact path 4 lanes per level
 * as 2. Checked on x86-64 (GCC 12, -O3) with
 *   objdump -d --no-show-raw-insn CMakeFiles/gpureduce.dir/src/backend/cpu/cpu_kernels.c.o
 * : the f64 sum loop is 4 movupd + 4 addpd per 8 elements, the f32 one 2
 * movups + 4 cvtps2pd + 4 addpd, the exact block loop packed adds, subtracts,
 * ands and ors only - no scalar code in the loops, accumulators in registers
 * (what the comments at v8d, load4_f32 and v8_orbits say was not the case
 * before). Four independent vector accumulators keep a latency-3/4 add unit
 * busy: 16 B/cycle of f64, above what DRAM gives one core.
 *
 * No -ffast-math, no FMA contraction (-ffp-contract=off for this file): the
 * exact path depends on every add and subtract rounding as IEEE says.
 */
#include "cpu_kernels.h"

#include <float.h>
#include <math.h>
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h> /* f32 -> f64 widening: part of every x86-64 */
#endif

#if !defined(FLT_EVAL_METHOD) || FLT_EVAL_METHOD != 0
#error "the exact fast path needs doubles evaluated in double precision (FLT_EVAL_METHOD 0, e.g. SSE2, not x87)"
#endif

#define GR_KI static inline __attribute__((always_inline))

/*
 * 8 f64 lanes as four 16-byte vectors (lanes 0-1, 2-3, 4-5, 6-7): a type the
 * baseline of every 64-bit target holds in registers (SSE2, NEON). A single
 * 64-byte vector type would be lowered through the stack on x86-64 without
 * AVX-512 (seen in the assembly: a store-to-load chain per add).
 */
typedef double v2d __attribute__((vector_size(16)));
typedef int64_t v2l __attribute__((vector_size(16)));
typedef float v2f __attribute__((vector_size(8)));
typedef struct v8d {
    v2d a, b, c, d;
} v8d;

#define V8_MAP1(r, x, expr_a, expr_b, expr_c, expr_d) \
    do {                                              \
        (r).a = (expr_a);                             \
        (r).b = (expr_b);                             \
        (r).c = (expr_c);                             \
        (r).d = (expr_d);                             \
    } while (0)

GR_KI v8d v8_splat(double x)
{
    v8d r;
    const v2d s = {x, x};
    r.a = r.b = r.c = r.d = s;
    return r;
}
GR_KI v8d v8_add(v8d x, v8d y)
{
    v8d r;
    V8_MAP1(r, x, x.a + y.a, x.b + y.b, x.c + y.c, x.d + y.d);
    return r;
}
GR_KI v8d v8_sub(v8d x, v8d y)
{
    v8d r;
    V8_MAP1(r, x, x.a - y.a, x.b - y.b, x.c - y.c, x.d - y.d);
    return r;
}
GR_KI v8d v8_mul(v8d x, v8d y)
{
    v8d r;
    V8_MAP1(r, x, x.a * y.a, x.b * y.b, x.c * y.c, x.d * y.d);
    return r;
}
/* fabs lane by lane: clear the sign bit (NaN stays NaN, as with fabs) */
GR_KI v8d v8_abs(v8d x)
{
    const v2l m = {INT64_MAX, INT64_MAX};
    v8d r;
    V8_MAP1(r, x, (v2d)((v2l)x.a & m), (v2d)((v2l)x.b & m), (v2d)((v2l)x.c & m), (v2d)((v2l)x.d & m));
    return r;
}
/* The 8 lanes' bit patterns OR-ed into 2: the magnitude bits are all 0 only
 * if every lane is +-0. (An integer OR: a `!= 0` mask accumulated with |=
 * was turned into scalar cmovs through the stack by GCC 12.) */
GR_KI v2l v8_orbits(v8d x)
{
    return (v2l)x.a | (v2l)x.b | (v2l)x.c | (v2l)x.d;
}
GR_KI void v8_store(double *out, v8d x)
{
    memcpy(out, &x.a, 16);
    memcpy(out + 2, &x.b, 16);
    memcpy(out + 4, &x.c, 16);
    memcpy(out + 6, &x.d, 16);
}

/* ---- loads and terms (constant dt / op after inlining) ------------------ */

GR_KI double load1(const void *in, int dt, uint64_t i)
{
    switch (dt) {
    case GR_C_F32:
        return (double)((const float *)in)[i];
    case GR_C_F16:
        return (double)gr_f16_bits_to_f32(((const uint16_t *)in)[i]);
    case GR_C_BF16:
        return (double)gr_bf16_bits_to_f32(((const uint16_t *)in)[i]);
    default:
        return ((const double *)in)[i];
    }
}

GR_KI v2d load2(const void *in, int dt, uint64_t i)
{
    v2d v;
    if (dt == GR_C_F64) {
        memcpy(&v, (const double *)in + i, sizeof(v));
    } else if (dt == GR_C_F32) {
        v2f f;
        memcpy(&f, (const float *)in + i, sizeof(f));
        v = __builtin_convertvector(f, v2d);
    } else {
        v[0] = load1(in, dt, i);
        v[1] = load1(in, dt, i + 1);
    }
    return v;
}

/* Four f32 widened exactly to two v2d. GCC 12 lowers the generic
 * __builtin_convertvector(v2f -> v2d) to two scalar cvtss2sd; the SSE2
 * intrinsic is one cvtps2pd per pair. */
GR_KI void load4_f32(const float *p, v2d *lo, v2d *hi)
{
#if defined(__SSE2__)
    __m128 f = _mm_loadu_ps(p);
    *lo = (v2d)_mm_cvtps_pd(f);
    *hi = (v2d)_mm_cvtps_pd(_mm_movehl_ps(f, f));
#else
    v2f a, b;
    memcpy(&a, p, sizeof(a));
    memcpy(&b, p + 2, sizeof(b));
    *lo = __builtin_convertvector(a, v2d);
    *hi = __builtin_convertvector(b, v2d);
#endif
}

/* Elements i..i+7 widened exactly to f64. */
GR_KI v8d load8(const void *in, int dt, uint64_t i)
{
    v8d r;
    if (dt == GR_C_F32) {
        load4_f32((const float *)in + i, &r.a, &r.b);
        load4_f32((const float *)in + i + 4, &r.c, &r.d);
        return r;
    }
    r.a = load2(in, dt, i);
    r.b = load2(in, dt, i + 2);
    r.c = load2(in, dt, i + 4);
    r.d = load2(in, dt, i + 6);
    return r;
}

/* gr_term_f lane by lane: the same IEEE operations, so the same bits. */
GR_KI v8d term8(int op, int pw, v8d x)
{
    switch (op) {
    case GR_C_ABSSUM:
        return v8_abs(x);
    case GR_C_SUMSQ:
        return v8_mul(x, x);
    case GR_C_POWSUM: {
        v8d r = x;
        for (int k = 1; k < pw; ++k)
            r = v8_mul(r, x);
        return r;
    }
    default:
        return x;
    }
}

/* ---- fast mode ------------------------------------------------------------ */

GR_KI double fast_sum_body(const void *in, int dt, int op, int pw, uint64_t n)
{
    /* -0.0 is the additive identity: an all -0.0 chunk stays -0.0 */
    v8d acc = v8_splat(-0.0);
    uint64_t i = 0;
    for (; i + 8 <= n; i += 8)
        acc = v8_add(acc, term8(op, pw, load8(in, dt, i)));
    double a[8];
    v8_store(a, acc);
    for (int l = 0; i < n; ++i, ++l)
        a[l] += gr_term_f(op, pw, load1(in, dt, i));
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

double gr_cpu_fast_sum_f(const void *in, int dtype, int op, int power, uint64_t n)
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
    /* plain lanes: the vectoriser turns `x < m ? x : m` into minpd (NaN x keeps m) */
    for (; i + 8 <= n; i += 8)
        for (int l = 0; l < 8; ++l) {
            double x = load1(in, dt, i + (uint64_t)l);
            nan[l] |= x != x;
            m[l] = is_min ? (x < m[l] ? x : m[l]) : (x > m[l] ? x : m[l]);
        }
    for (int l = 0; i < n; ++i, ++l) {
        double x = load1(in, dt, i);
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
            double x = load1(in, dt, j);
            if (x == 0 && (signbit(x) != 0) == is_min)
                return x;
        }
    }
    return r;
}

double gr_cpu_minmax_f(const void *in, int dtype, int op, uint64_t n)
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
        gr_partial_add_term(p, gr_term_f(op, pw, load1(in, dt, i)));
}

/*
 * The fast path: a block of at most EXACT_BLOCK = 2048 terms (a multiple of
 * 8) is summed in two levels of f64 accumulators (4 lanes each) and enters
 * the exact accumulator as two doubles instead of 2048. Why no bit is lost
 * (the bounds count the whole block, so they hold for any number of lanes):
 *
 * Level 1. A = sum |t| over the block in floating point (relative rounding
 * error below 2^-41 for 2^11 terms), A < 2^(eA + 1), sigma1 = 2^(eA + 4) > 8 A,
 * about 8 sum|t|. Each lane starts at S = sigma1 and does
 *     S' = S + t;  q = S' - S;  r = t - q;  S = S'
 * which is Fast2Sum (Dekker): when |S| >= |t|, q and r are exact and
 * q + r = t. S moves by at most sum |q| <= sum |t| + 2048 ulp(S) / 2
 * < sigma1 / 8 + 2^(s1 - 42) < sigma1 / 4, so S stays in (3/4, 5/4) sigma1,
 * above 6 sum|t| >= |t|: the condition holds at every step. Hence
 * sum t = sum_lanes (S - sigma1) + sum r exactly. Each S - sigma1 is exact
 * (Sterbenz) and a multiple of 2^(s1 - 53); together they are below
 * sigma1 / 4 in magnitude, so every partial sum over the lanes is such a
 * multiple below 2^s1: exact too. |r| <= ulp(S) / 2 <= 2^(s1 - 53).
 *
 * Level 2. The residuals r the same way, sigma2 = 2^(s1 - 40) >= 4 * 2048 *
 * 2^(s1 - 53) >= 4 sum|r|. Exact unless some residual r2 of level 2 is not
 * 0, which needs bits more than ~90 below the block's sum of |t|.
 *
 * When some r2 is not 0 the block is discarded (nothing was added yet) and
 * summed term by term as before. So are blocks with NaN, Inf, or an A that
 * overflows or reaches 2^1019 (sigma1 must be finite); blocks of zeros only
 * are counted here directly. sigma is never below 2^-1022 (the smallest
 * normal): a larger sigma keeps every bound, and r is then 0 as every double
 * is a multiple of 2^-1074. All of this needs rounding to nearest, no FMA
 * contraction and no excess precision (checked at the top of this file).
 */
#define EXACT_BLOCK 2048

/* sum |t| of n terms (n a multiple of 8), in 8 lanes */
GR_KI double abs_sum_body(const void *in, int dt, int op, int pw, uint64_t n)
{
    v2d a = {0, 0};
    for (uint64_t i = 0; i < n; i += 8) {
        v8d u = v8_abs(term8(op, pw, load8(in, dt, i)));
        a += (u.a + u.b) + (u.c + u.d);
    }
    return a[0] + a[1];
}

/*
 * One block of n terms (a multiple of 8, <= EXACT_BLOCK) whose sum of |t| is
 * A, into p: returns 0, adding nothing, when the block cannot be proved exact
 * (the caller then sums it term by term). levels 1: level 1 only, refused
 * when any r is not 0 (for f32 and the half types, whose 24 or fewer
 * significant bits nearly always fit level 1: a third of the work); levels 2:
 * as described above. While it runs over this block (from L1: its |t| were
 * just summed) it sums the |t| of the next nx terms at next (nx <= n) into
 * *A_next, so one loop both computes and keeps DRAM streaming.
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
            pos += !signbit(gr_term_f(op, pw, load1(in, dt, i)));
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
    /* 4 lanes (2 vectors) per level suffice here: the exact sum does not
     * depend on the lanes, an iteration's ~50 operations hide the add
     * latency of the 2 chained adds per lane, and 7 live vectors fit the 16
     * registers of SSE2 (8 lanes spilled the accumulators to the stack). */
    const v2d sg1 = {sigma1, sigma1}, sg2 = {sigma2, sigma2};
    v2d S1x = sg1, S1y = sg1, S2x = sg2, S2y = sg2, an = {0, 0};
    v2l nz = {0, 0};
#define EXACT_STEP(t, S1, S2)                                                    \
    do {                                                                         \
        v2d S1n_ = S1 + (t);                                                     \
        v2d r_ = (t) - (S1n_ - S1);                                              \
        S1 = S1n_;                                                               \
        if (levels == 1) {                                                       \
            nz |= (v2l)r_;                                                       \
        } else {                                                                 \
            v2d S2n_ = S2 + r_;                                                  \
            nz |= (v2l)(r_ - (S2n_ - S2));                                       \
            S2 = S2n_;                                                           \
        }                                                                        \
    } while (0)
    for (uint64_t i = 0; i < n; i += 8) {
        if (i < nx) { /* the same for all but the shard's last block: predicted */
            v8d u = v8_abs(term8(op, pw, load8(next, dt, i)));
            an += (u.a + u.b) + (u.c + u.d);
        }
        v8d t = term8(op, pw, load8(in, dt, i));
        EXACT_STEP(t.a, S1x, S2x);
        EXACT_STEP(t.b, S1y, S2y);
        EXACT_STEP(t.c, S1x, S2x);
        EXACT_STEP(t.d, S1y, S2y);
    }
#undef EXACT_STEP
    *A_next = an[0] + an[1];
    if (((uint64_t)(nz[0] | nz[1]) << 1) != 0)
        return 0; /* some r (levels 1) or r2 is not +-0 */
    /* exact: see above (4 values of each level instead of 8, same bounds) */
    double d1 = ((S1x[0] - sigma1) + (S1x[1] - sigma1)) + ((S1y[0] - sigma1) + (S1y[1] - sigma1));
    double d2 = ((S2x[0] - sigma2) + (S2x[1] - sigma2)) + ((S2y[0] - sigma2) + (S2y[1] - sigma2));
    gr_xacc_add_double(&p->sum, d1);
    gr_xacc_add_double(&p->sum, d2);
    p->adds += 2;
    gr_partial_maybe_normalize(p);
    p->nonnegzero += (int64_t)n; /* some term is not zero, so not -0.0: > 0 is all that counts */
    return 1;
}

GR_KI uint64_t exact_body(gr_partial_t *p, const void *in, int dt, int op, int pw, uint64_t n)
{
    const size_t esz = dt == GR_C_F64 ? 8 : dt == GR_C_F32 ? 4 : 2;
    const char *base = (const char *)in;
    /* blocks of EXACT_BLOCK, the last one shorter (a multiple of 8); < 8 left over */
#define BLOCK_AT(i) (n - (i) >= EXACT_BLOCK ? (uint64_t)EXACT_BLOCK : (n - (i)) & ~(uint64_t)7)
    uint64_t i = 0, fast = 0;
    double A = abs_sum_body(base, dt, op, pw, BLOCK_AT(0));
    while (n - i >= 8) {
        const uint64_t nb = BLOCK_AT(i), nx = BLOCK_AT(i + nb);
        const void *b = base + i * esz, *next = base + (i + nb) * esz;
        double A_next = 0, unused;
        /* f64: two levels; narrower types: level 1, then two levels */
        int ok = exact_block_body(p, b, dt, op, pw, nb, A, dt == GR_C_F64 ? 2 : 1, next, nx, &A_next);
        if (!ok && dt != GR_C_F64)
            ok = exact_block_body(p, b, dt, op, pw, nb, A, 2, next, 0, &unused);
        if (ok)
            fast += nb;
        else
            exact_ref_body(p, b, dt, op, pw, nb);
        if (!(A < 0x1p1019))
            A_next = abs_sum_body(next, dt, op, pw, nx); /* the block loop did not run */
        A = A_next;
        i += nb;
    }
#undef BLOCK_AT
    exact_ref_body(p, base + i * esz, dt, op, pw, n - i);
    return fast;
}

#define GR_EXACT_OPS(body, dt)                                                  \
    switch (op) {                                                               \
    case GR_C_ABSSUM:                                                           \
        return body(p, in, dt, GR_C_ABSSUM, 1, n);                              \
    case GR_C_SUMSQ:                                                            \
        return body(p, in, dt, GR_C_SUMSQ, 2, n);                               \
    case GR_C_POWSUM:                                                           \
        return body(p, in, dt, GR_C_POWSUM, power, n);                          \
    default:                                                                    \
        return body(p, in, dt, GR_C_SUM, 1, n);                                 \
    }

uint64_t gr_cpu_exact_f(gr_partial_t *p, const void *in, int dtype, int op, int power, uint64_t n)
{
    switch (dtype) {
    case GR_C_F32:
        GR_EXACT_OPS(exact_body, GR_C_F32)
    case GR_C_F16:
        GR_EXACT_OPS(exact_body, GR_C_F16)
    case GR_C_BF16:
        GR_EXACT_OPS(exact_body, GR_C_BF16)
    default:
        GR_EXACT_OPS(exact_body, GR_C_F64)
    }
}

void gr_cpu_exact_f_reference(gr_partial_t *p, const void *in, int dtype, int op, int power, uint64_t n)
{
    for (uint64_t i = 0; i < n; ++i)
        gr_partial_add_term(p, gr_term_f(op, power, load1(in, dtype, i)));
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

void gr_cpu_int(const void *in, int dtype, int op, int power, uint64_t n, gr_local_t *loc)
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
