/*
 * stats.cu - the one-pass statistics kernel (--op stats on the GPU) and its
 * extern "C" launcher (gr_stats_kernels.h says what it computes).
 *
 * Layers, as in the exact reduce (kernels/gr_exact.cuh), whose thread, warp
 * and block layers this file reuses for the float sum:
 *
 * thread: every element is read once (16-byte vectors, scalar head/tail).
 *         floats: the element enters the exact expansion (gr_x_vec /
 *         gr_x_add_checked: NaN, +Inf, -Inf counted there); its order key
 *         (bits ^ ((bits >> 31) & 0x7FFFFFFF): a signed integer order of the
 *         non-NaN values with -0.0 below +0.0) updates kmin/kmax; a finite
 *         one adds t = x - K to S1 and t*t to S2 (f64, fma). K is a value of
 *         the thread's own data (its first finite element), so the shifted
 *         sums do not cancel catastrophically when |mean| >> std.
 *         integers: exact 64-bit (i32; < 2^36 elements a launch can hold on
 *         any GPU keep it far from overflow) or 128-bit (i64) sum, integer
 *         min/max, and the same shifted sums of (double)x.
 *         At the end (n, mean = K + S1/n, M2 = S2 - S1^2/n), M2 clamped at 0.
 * warp:   Chan merge over a shuffle tree (offsets 16, 8, 4, 2, 1; lane i
 *         takes lane i + off): fixed order.
 * block:  warps' partials merged in warp order by thread 0; the float sum's
 *         limbs exactly as gr_exact_kernel (integer atomics, order-free).
 * grid:   each block stores its partial at its index; the last block (ticket)
 *         folds them: thread j merges blocks j, j + BLOCK, ... in order, then
 *         the block layer above. So the fold order is fixed by (n, grid,
 *         block): no float atomics anywhere, bitwise repeatable.
 *
 * Launch assumptions: blockDim.x == BLOCK (128, 256, 512); 1 <= gridDim.x <=
 * GR_STATS_GRID_MAX; `in` aligned to sizeof(T); scratch zero at launch
 * (every launch leaves it zero); launches sharing a scratch ordered. The last
 * block writes *result, count last.
 *
 * Must never be built with fast-math or flush-to-zero (the exact sum's
 * TwoSums need IEEE subnormals; gr_exact.cuh refuses to compile so).
 */
#include "gr_exact.cuh"
#include "gr_stats_kernels.h"
#include "gr_xacc.h"

#include <limits.h>


static_assert(GR_EXACT_LIMBS == GR_XACC_LIMBS, "device limbs must match gr_xacc_t");
static_assert(sizeof(gr_stats_result_t) == (GR_EXACT_LIMBS + 13) * 8, "gr_stats_result_t layout");

/* Expansion terms of the float sum: 2 keeps the kernel's registers within 3
 * blocks of 256 per SM; wide-range data flushes more often (docs/EXACT.md),
 * which costs time, never bits. */
#define GR_STATS_TERMS 2

/* One block's (or thread's, warp's) partial of the variance and min/max.
 * The mean is held as K + delta, K a value of the data: Chan's d = mb - ma
 * is then (Kb - Ka) + (delta_b - delta_a), whose rounding error scales with
 * the data's spread, not with |mean| (a plain mean near 1e6 with a spread
 * near 1 would lose ~1e-10 of M2 at every merge). */
typedef struct gr_spart {
    unsigned long long nf;
    double K, delta, m2;
    long long kmin, kmax; /* order keys (floats) or values (integers) */
} gr_spart_t;

typedef struct gr_stats_scratch {
    gr_exact_scratch_t x; /* the exact sum's grid accumulator, counts and ticket */
    gr_spart_t part[GR_STATS_GRID_MAX];
} gr_stats_scratch_t;

/* ---- order keys ------------------------------------------------------------ */

__device__ __forceinline__ int gr_s_key(float x)
{
    const int s = __float_as_int(x);
    return s ^ ((s >> 31) & 0x7FFFFFFF);
}
__device__ __forceinline__ long long gr_s_key(double x)
{
    const long long s = __double_as_longlong(x);
    return s ^ ((s >> 63) & 0x7FFFFFFFFFFFFFFFll);
}
/* The key is an involution on the bits. */
__device__ __forceinline__ double gr_s_unkey_f32(long long k)
{
    const int s = (int)k;
    return (double)__int_as_float(s ^ ((s >> 31) & 0x7FFFFFFF));
}
__device__ __forceinline__ double gr_s_unkey_f64(long long k)
{
    return __longlong_as_double(k ^ ((k >> 63) & 0x7FFFFFFFFFFFFFFFll));
}

template <typename T>
struct gr_skey;
template <>
struct gr_skey<float> {
    typedef int type;
};
template <>
struct gr_skey<double> {
    typedef long long type;
};

/* ---- thread layer ---------------------------------------------------------- */

template <typename KT>
struct gr_sthread {
    double K, s1, s2;
    unsigned long long nf;
    unsigned int nr; /* finite values of the current round (< 2^19), folded into nf at its end */
    KT kmin, kmax;
};

template <typename KT>
__device__ __forceinline__ void gr_s_finite(gr_sthread<KT> &ss, double d)
{
    const double t = __dsub_rn(d, ss.K);
    ss.s1 = __dadd_rn(ss.s1, t);
    ss.s2 = __fma_rn(t, t, ss.s2);
    ++ss.nr;
}

/* Any float element: exact sum (counts non-finite), key, shifted sums. */
template <int K, typename T>
__device__ __forceinline__ void gr_s_scalar(gr_xthread<K> &st, gr_sthread<typename gr_skey<T>::type> &ss, T x)
{
    const double d = (double)x;
    gr_x_add_checked(st, d);
    if (x != x)
        return;
    const typename gr_skey<T>::type k = gr_s_key(x);
    ss.kmin = min(ss.kmin, k);
    ss.kmax = max(ss.kmax, k);
    if (((unsigned int)__double2hiint(d) & 0x7FF00000u) != 0x7FF00000u)
        gr_s_finite(ss, d);
}

template <int K>
__device__ __forceinline__ void gr_s_vec(gr_xthread<K> &st, gr_sthread<int> &ss, float4 v)
{
    const unsigned int u0 = __float_as_uint(v.x), u1 = __float_as_uint(v.y);
    const unsigned int u2 = __float_as_uint(v.z), u3 = __float_as_uint(v.w);
    const unsigned int e0 = u0 & 0x7F800000u, e1 = u1 & 0x7F800000u;
    const unsigned int e2 = u2 & 0x7F800000u, e3 = u3 & 0x7F800000u;
    const unsigned int emax = max(max(e0, e1), max(e2, e3));
    if (__builtin_expect(emax >= 0x7F800000u, 0)) {
        gr_s_scalar(st, ss, v.x);
        gr_s_scalar(st, ss, v.y);
        gr_s_scalar(st, ss, v.z);
        gr_s_scalar(st, ss, v.w);
        return;
    }
    const double d0 = (double)v.x, d1 = (double)v.y, d2 = (double)v.z, d3 = (double)v.w;
    const unsigned int emin = min(min(e0, e1), min(e2, e3));
    const double t0 = __dsub_rn(d0, ss.K), t1 = __dsub_rn(d1, ss.K);
    const double t2 = __dsub_rn(d2, ss.K), t3 = __dsub_rn(d3, ss.K);
    if (__builtin_expect(emax - emin > (27u << 23), 0)) {
        gr_x_add_checked(st, d0);
        gr_x_add_checked(st, d1);
        gr_x_add_checked(st, d2);
        gr_x_add_checked(st, d3);
        ss.s1 = __dadd_rn(ss.s1, __dadd_rn(__dadd_rn(t0, t1), __dadd_rn(t2, t3)));
    } else {
        const double q = __dadd_rn(__dadd_rn(d0, d1), __dadd_rn(d2, d3)); /* exact (gr_exact.cuh) */
        gr_x_flush(st, gr_fpe_add(st.a, q));
        /* S1 += sum(x - K) = q - 4K: q is exact and 4K too, one rounding as for the t's */
        ss.s1 = __dadd_rn(ss.s1, __dsub_rn(q, 4.0 * ss.K));
    }
    const int k0 = gr_s_key(v.x), k1 = gr_s_key(v.y), k2 = gr_s_key(v.z), k3 = gr_s_key(v.w);
    ss.kmin = min(ss.kmin, min(min(k0, k1), min(k2, k3)));
    ss.kmax = max(ss.kmax, max(max(k0, k1), max(k2, k3)));
    ss.s2 = __fma_rn(t0, t0, ss.s2);
    ss.s2 = __fma_rn(t1, t1, ss.s2);
    ss.s2 = __fma_rn(t2, t2, ss.s2);
    ss.s2 = __fma_rn(t3, t3, ss.s2);
    ss.nr += 4;
}

/*
 * Two vectors of four floats. When all eight are finite and their exponent
 * fields span at most 26, they are multiples of 2^(emin-150) below
 * 2^(emax-123): their sum, and every partial sum of the tree below, fits 53
 * bits, so one exact f64 sum enters the expansion (half the TwoSums of two
 * quads). Otherwise each quad takes its own path.
 */
template <int K>
__device__ __forceinline__ void gr_s_vec2(gr_xthread<K> &st, gr_sthread<int> &ss, float4 v, float4 w)
{
    const unsigned int u0 = __float_as_uint(v.x), u1 = __float_as_uint(v.y);
    const unsigned int u2 = __float_as_uint(v.z), u3 = __float_as_uint(v.w);
    const unsigned int u4 = __float_as_uint(w.x), u5 = __float_as_uint(w.y);
    const unsigned int u6 = __float_as_uint(w.z), u7 = __float_as_uint(w.w);
    const unsigned int e0 = u0 & 0x7F800000u, e1 = u1 & 0x7F800000u, e2 = u2 & 0x7F800000u, e3 = u3 & 0x7F800000u;
    const unsigned int e4 = u4 & 0x7F800000u, e5 = u5 & 0x7F800000u, e6 = u6 & 0x7F800000u, e7 = u7 & 0x7F800000u;
    const unsigned int emax = max(max(max(e0, e1), max(e2, e3)), max(max(e4, e5), max(e6, e7)));
    const unsigned int emin = min(min(min(e0, e1), min(e2, e3)), min(min(e4, e5), min(e6, e7)));
    if (__builtin_expect(emax >= 0x7F800000u || emax - emin > (26u << 23), 0)) {
        gr_s_vec(st, ss, v);
        gr_s_vec(st, ss, w);
        return;
    }
    const double d0 = (double)v.x, d1 = (double)v.y, d2 = (double)v.z, d3 = (double)v.w;
    const double d4 = (double)w.x, d5 = (double)w.y, d6 = (double)w.z, d7 = (double)w.w;
    const double q = __dadd_rn(__dadd_rn(__dadd_rn(d0, d1), __dadd_rn(d2, d3)),
                               __dadd_rn(__dadd_rn(d4, d5), __dadd_rn(d6, d7))); /* exact */
    gr_x_flush(st, gr_fpe_add(st.a, q));
    ss.s1 = __dadd_rn(ss.s1, __dsub_rn(q, 8.0 * ss.K));
    const int k0 = gr_s_key(v.x), k1 = gr_s_key(v.y), k2 = gr_s_key(v.z), k3 = gr_s_key(v.w);
    const int k4 = gr_s_key(w.x), k5 = gr_s_key(w.y), k6 = gr_s_key(w.z), k7 = gr_s_key(w.w);
    ss.kmin = min(ss.kmin, min(min(min(k0, k1), min(k2, k3)), min(min(k4, k5), min(k6, k7))));
    ss.kmax = max(ss.kmax, max(max(max(k0, k1), max(k2, k3)), max(max(k4, k5), max(k6, k7))));
    const double t0 = __dsub_rn(d0, ss.K), t1 = __dsub_rn(d1, ss.K), t2 = __dsub_rn(d2, ss.K);
    const double t3 = __dsub_rn(d3, ss.K), t4 = __dsub_rn(d4, ss.K), t5 = __dsub_rn(d5, ss.K);
    const double t6 = __dsub_rn(d6, ss.K), t7 = __dsub_rn(d7, ss.K);
    ss.s2 = __fma_rn(t0, t0, ss.s2);
    ss.s2 = __fma_rn(t1, t1, ss.s2);
    ss.s2 = __fma_rn(t2, t2, ss.s2);
    ss.s2 = __fma_rn(t3, t3, ss.s2);
    ss.s2 = __fma_rn(t4, t4, ss.s2);
    ss.s2 = __fma_rn(t5, t5, ss.s2);
    ss.s2 = __fma_rn(t6, t6, ss.s2);
    ss.s2 = __fma_rn(t7, t7, ss.s2);
    ss.nr += 8;
}

template <int K>
__device__ __forceinline__ void gr_s_vec(gr_xthread<K> &st, gr_sthread<long long> &ss, double2 v)
{
    const unsigned int hx = (unsigned int)__double2hiint(v.x) & 0x7FFFFFFFu;
    const unsigned int hy = (unsigned int)__double2hiint(v.y) & 0x7FFFFFFFu;
    if (__builtin_expect(max(hx, hy) >= 0x7FF00000u, 0)) {
        gr_s_scalar(st, ss, v.x);
        gr_s_scalar(st, ss, v.y);
        return;
    }
    gr_x_vec<GR_C_SUM>(st, v);
    const long long k0 = gr_s_key(v.x), k1 = gr_s_key(v.y);
    ss.kmin = min(ss.kmin, min(k0, k1));
    ss.kmax = max(ss.kmax, max(k0, k1));
    const double t0 = __dsub_rn(v.x, ss.K), t1 = __dsub_rn(v.y, ss.K);
    ss.s1 = __dadd_rn(ss.s1, __dadd_rn(t0, t1));
    ss.s2 = __fma_rn(t0, t0, ss.s2);
    ss.s2 = __fma_rn(t1, t1, ss.s2);
    ss.nr += 2;
}

template <int K>
__device__ __forceinline__ void gr_s_vec2(gr_xthread<K> &st, gr_sthread<long long> &ss, double2 v, double2 w)
{
    gr_s_vec(st, ss, v);
    gr_s_vec(st, ss, w);
}

/* The shift of a thread: its first finite element (vector first, as the
 * loop reads them), 0 when it has none. */
__device__ __forceinline__ bool gr_s_finite_bits(float x)
{
    return (__float_as_uint(x) & 0x7F800000u) != 0x7F800000u;
}
__device__ __forceinline__ bool gr_s_finite_bits(double x)
{
    return ((unsigned int)__double2hiint(x) & 0x7FF00000u) != 0x7FF00000u;
}
__device__ __forceinline__ bool gr_s_finite_bits(int) { return true; }
__device__ __forceinline__ bool gr_s_finite_bits(long long) { return true; }

__device__ __forceinline__ double gr_s_pick(float4 a)
{
    return gr_s_finite_bits(a.x) ? a.x : gr_s_finite_bits(a.y) ? a.y : gr_s_finite_bits(a.z) ? a.z
                                      : gr_s_finite_bits(a.w) ? a.w : 0.0f;
}
__device__ __forceinline__ double gr_s_pick(double2 a)
{
    return gr_s_finite_bits(a.x) ? a.x : gr_s_finite_bits(a.y) ? a.y : 0.0;
}
__device__ __forceinline__ double gr_s_pick(int4 a) { return (double)a.x; }
__device__ __forceinline__ double gr_s_pick(longlong2 a) { return (double)a.x; }

template <typename T, typename V>
__device__ __forceinline__ double gr_s_shift(const T *in, const V *v, uint64_t t, uint64_t head, uint64_t nvec,
                                             uint64_t tail, uint64_t n)
{
    T x;
    if (t < nvec)
        return gr_s_pick(__ldg(v + t));
    if (t < head)
        x = in[t];
    else if (tail + t < n)
        x = in[tail + t];
    else
        return 0.0;
    return gr_s_finite_bits(x) ? (double)x : 0.0;
}

/* (n, mean, M2) of a thread's shifted sums. */
template <typename KT>
__device__ __forceinline__ gr_spart_t gr_s_to_part(const gr_sthread<KT> &ss, long long kmin, long long kmax)
{
    gr_spart_t p;
    p.nf = ss.nf;
    p.kmin = kmin;
    p.kmax = kmax;
    p.K = ss.K;
    p.delta = 0.0;
    p.m2 = 0.0;
    if (ss.nf > 0) {
        p.delta = ss.s1 / (double)ss.nf;
        p.m2 = fmax(ss.s2 - ss.s1 * p.delta, 0.0);
    }
    return p;
}

/* ---- merging: Chan, Golub and LeVeque ------------------------------------- */

__device__ __forceinline__ void gr_s_chan(gr_spart_t &a, const gr_spart_t &b)
{
    a.kmin = min(a.kmin, b.kmin);
    a.kmax = max(a.kmax, b.kmax);
    if (b.nf == 0)
        return;
    if (a.nf == 0) {
        a.nf = b.nf;
        a.K = b.K;
        a.delta = b.delta;
        a.m2 = b.m2;
        return;
    }
    const double n = (double)(a.nf + b.nf);
    const double d = (b.K - a.K) + (b.delta - a.delta); /* mb - ma */
    a.delta += d * ((double)b.nf / n);
    a.m2 += b.m2 + d * d * ((double)a.nf * (double)b.nf / n);
    a.nf += b.nf;
}

__device__ __forceinline__ gr_spart_t gr_s_empty(void)
{
    gr_spart_t p;
    p.nf = 0;
    p.K = 0.0;
    p.delta = 0.0;
    p.m2 = 0.0;
    p.kmin = LLONG_MAX;
    p.kmax = LLONG_MIN;
    return p;
}

/* Block layer: the partial of the whole block, in thread 0. Every thread
 * calls it; s_part holds BLOCK/32 entries and is free on entry. */
template <int BLOCK>
__device__ __forceinline__ gr_spart_t gr_s_block(gr_spart_t p, gr_spart_t *s_part)
{
    const int lane = (int)(threadIdx.x & 31u), warp = (int)(threadIdx.x >> 5);
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) {
        gr_spart_t b;
        b.nf = __shfl_down_sync(0xFFFFFFFFu, p.nf, off);
        b.K = __shfl_down_sync(0xFFFFFFFFu, p.K, off);
        b.delta = __shfl_down_sync(0xFFFFFFFFu, p.delta, off);
        b.m2 = __shfl_down_sync(0xFFFFFFFFu, p.m2, off);
        b.kmin = __shfl_down_sync(0xFFFFFFFFu, p.kmin, off);
        b.kmax = __shfl_down_sync(0xFFFFFFFFu, p.kmax, off);
        if (lane < off)
            gr_s_chan(p, b);
    }
    if (lane == 0)
        s_part[warp] = p;
    __syncthreads();
    if (threadIdx.x == 0)
        for (int w = 1; w < BLOCK / 32; ++w)
            gr_s_chan(p, s_part[w]);
    return p;
}

/* Ticket, then the last block folds the blocks' partials in block order.
 * Returns true in the last block (every thread), whose thread 0 holds *all. */
template <int BLOCK>
__device__ __forceinline__ bool gr_s_grid(gr_stats_scratch_t *g, const gr_spart_t &mine, gr_spart_t *s_part,
                                          int *s_last, gr_spart_t *all)
{
    if (threadIdx.x == 0) {
        g->part[blockIdx.x] = mine;
        __threadfence(); /* the partial (and this block's atomics) before the ticket */
        *s_last = atomicAdd(&g->x.ticket, 1u) == gridDim.x - 1u;
    }
    __syncthreads();
    if (!*s_last)
        return false;
    __threadfence(); /* the ticket before the reads */
    gr_spart_t q = gr_s_empty();
    for (unsigned int b = threadIdx.x; b < gridDim.x; b += BLOCK) {
        const gr_spart_t *src = &g->part[b];
        gr_spart_t r;
        r.nf = __ldcg(&src->nf);
        r.K = __ldcg(&src->K);
        r.delta = __ldcg(&src->delta);
        r.m2 = __ldcg(&src->m2);
        r.kmin = __ldcg(&src->kmin);
        r.kmax = __ldcg(&src->kmax);
        gr_s_chan(q, r);
    }
    *all = gr_s_block<BLOCK>(q, s_part);
    return true;
}

/* The last block's thread 0: the variance part and min/max into *result. */
__device__ __forceinline__ void gr_s_write(gr_stats_result_t *result, const gr_spart_t &p, int dtype)
{
    result->nf = p.nf;
    result->mean = p.K + p.delta;
    result->m2 = p.m2;
    if (dtype == GR_C_I32 || dtype == GR_C_I64) {
        result->imin = p.kmin;
        result->imax = p.kmax;
        result->min = __longlong_as_double(0x7FF0000000000000ll);  /* +Inf, as the host part */
        result->max = __longlong_as_double((long long)0xFFF0000000000000ull); /* -Inf */
    } else {
        result->imin = LLONG_MAX;
        result->imax = LLONG_MIN;
        result->min = dtype == GR_C_F32 ? gr_s_unkey_f32(p.kmin) : gr_s_unkey_f64(p.kmin);
        result->max = dtype == GR_C_F32 ? gr_s_unkey_f32(p.kmax) : gr_s_unkey_f64(p.kmax);
    }
}

/* ---- float kernel ----------------------------------------------------------- */

/* Resident blocks an SM: the tuning policy's (gr_tuning_sm90.h; docs/PERFORMANCE.md
 * "Stats on the GPU" has the measurement). */
#define GR_STATS_MINB(BLOCK) GR_TUNE_STATS_MINB(BLOCK)

template <int BLOCK, typename T, int K>
__global__ void __launch_bounds__(BLOCK, GR_STATS_MINB(BLOCK))
    gr_stats_float_kernel(const T *__restrict__ in, uint64_t n, uint64_t round_vecs, gr_stats_scratch_t *g,
                          gr_stats_result_t *result)
{
    typedef typename gr_xvec<T>::type vec_t;
    typedef typename gr_skey<T>::type key_t;
    const uint64_t VEC = 16 / sizeof(T);
    const int NW = BLOCK / 32;
    __shared__ unsigned int s_lo[NW * GR_X_NL];
    __shared__ int s_hi[NW * GR_X_NL];
    __shared__ unsigned long long s_cnt[NW * 4]; /* per warp (gr_x_round_end) */
    __shared__ gr_spart_t s_part[NW];
    __shared__ int s_last;

    for (int i = (int)threadIdx.x; i < NW * GR_X_NL; i += BLOCK) {
        s_lo[i] = 0u;
        s_hi[i] = 0;
    }
    if (threadIdx.x < NW * 4)
        s_cnt[threadIdx.x] = 0ull;
    __syncthreads();

    gr_xthread<K> st;
    gr_x_reset(st);
    for (int c = 0; c < 4; ++c)
        st.cnt[c] = 0u;
    st.nz = 0;
    st.acc.lo = s_lo + (threadIdx.x >> 5) * GR_X_NL;
    st.acc.hi = s_hi + (threadIdx.x >> 5) * GR_X_NL;

    const uint64_t t = (uint64_t)blockIdx.x * BLOCK + threadIdx.x;
    const uint64_t nthreads = (uint64_t)gridDim.x * BLOCK;
    const uintptr_t addr = (uintptr_t)in;
    uint64_t head = (uint64_t)((16u - (addr & 15u)) & 15u) / sizeof(T);
    if (head > n)
        head = n;
    const uint64_t nvec = (n - head) / VEC;
    const uint64_t tail = head + nvec * VEC;
    const vec_t *__restrict__ v = (const vec_t *)(in + head);

    gr_sthread<key_t> ss;
    ss.K = gr_s_shift(in, v, t, head, nvec, tail, n);
    ss.s1 = 0.0;
    ss.s2 = 0.0;
    ss.nf = 0ull;
    ss.nr = 0u;
    ss.kmin = gr_s_key((T)__longlong_as_double(0x7FF0000000000000ll));            /* +Inf */
    ss.kmax = gr_s_key((T)__longlong_as_double((long long)0xFFF0000000000000ull)); /* -Inf */

    const uint64_t per_round = round_vecs * nthreads;
    uint64_t lo = 0;
    for (bool first = true; first || lo < nvec; first = false) {
        const uint64_t hi = nvec - lo < per_round ? nvec : lo + per_round;
        uint64_t i = lo + t;
        for (; i + 3 * nthreads < hi; i += 4 * nthreads) {
            const vec_t a = __ldg(v + i);
            const vec_t b = __ldg(v + i + nthreads);
            const vec_t c = __ldg(v + i + 2 * nthreads);
            const vec_t d = __ldg(v + i + 3 * nthreads);
            gr_s_vec2(st, ss, a, b);
            gr_s_vec2(st, ss, c, d);
        }
        for (; i < hi; i += nthreads)
            gr_s_vec(st, ss, __ldg(v + i));
        if (first) {
            for (uint64_t j = t; j < head; j += nthreads)
                gr_s_scalar(st, ss, in[j]);
            for (uint64_t j = tail + t; j < n; j += nthreads)
                gr_s_scalar(st, ss, in[j]);
        }
        lo = hi;
        gr_x_round_end<BLOCK>(st, s_lo, s_hi, s_cnt);
        ss.nf += ss.nr;
        ss.nr = 0u;
    }

    /* the exact sum: block -> grid accumulator, as gr_exact_kernel */
    const int any_nz = __syncthreads_or(st.nz);
    gr_x_block_to_grid<BLOCK>(s_lo, s_hi, s_cnt, any_nz, &g->x);

    /* variance and min/max: thread -> warp -> block -> grid, fixed order */
    const gr_spart_t mine = gr_s_block<BLOCK>(gr_s_to_part(ss, ss.kmin, ss.kmax), s_part);
    __threadfence(); /* this thread's atomics before the block's ticket */
    __syncthreads(); /* and s_part is reused below */
    gr_spart_t all;
    if (!gr_s_grid<BLOCK>(g, mine, s_part, &s_last, &all))
        return;
    gr_x_result_take<BLOCK>(&g->x, result);
    if (threadIdx.x == 0)
        gr_s_write(result, all, sizeof(T) == 4 ? GR_C_F32 : GR_C_F64);
    __syncthreads();
    if (threadIdx.x == 0) {
        __threadfence_system(); /* cumulative: the block's result words (seen through the barrier) before count */
        result->count = n;
        __threadfence_system();
    }
}

/* ---- integer kernel --------------------------------------------------------- */

template <typename T>
struct gr_ivec;
template <>
struct gr_ivec<int> {
    typedef int4 type;
};
template <>
struct gr_ivec<long long> {
    typedef longlong2 type;
};

/* 128-bit two's complement accumulator (i32 only ever touches lo). */
struct gr_i128 {
    unsigned long long lo;
    long long hi;
};

__device__ __forceinline__ void gr_s_iadd(gr_i128 &a, int x) { a.lo += (unsigned long long)(long long)x; }
__device__ __forceinline__ void gr_s_iadd(gr_i128 &a, long long x)
{
    const unsigned long long u = (unsigned long long)x;
    a.lo += u;
    a.hi += (long long)(a.lo < u) - (long long)(x < 0);
}

template <typename T>
__device__ __forceinline__ void gr_s_int(gr_i128 &acc, gr_sthread<T> &ss, T x)
{
    gr_s_iadd(acc, x);
    ss.kmin = min(ss.kmin, x);
    ss.kmax = max(ss.kmax, x);
    gr_s_finite(ss, (double)x);
}

__device__ __forceinline__ void gr_s_ivec(gr_i128 &acc, gr_sthread<int> &ss, int4 v)
{
    /* i32: lo is a signed 64-bit sum; four elements of |x| <= 2^31 */
    acc.lo += (unsigned long long)(((long long)v.x + (long long)v.y) + ((long long)v.z + (long long)v.w));
    ss.kmin = min(ss.kmin, min(min(v.x, v.y), min(v.z, v.w)));
    ss.kmax = max(ss.kmax, max(max(v.x, v.y), max(v.z, v.w)));
    const double t0 = __dsub_rn((double)v.x, ss.K), t1 = __dsub_rn((double)v.y, ss.K);
    const double t2 = __dsub_rn((double)v.z, ss.K), t3 = __dsub_rn((double)v.w, ss.K);
    ss.s1 = __dadd_rn(ss.s1, __dadd_rn(__dadd_rn(t0, t1), __dadd_rn(t2, t3)));
    ss.s2 = __fma_rn(t0, t0, ss.s2);
    ss.s2 = __fma_rn(t1, t1, ss.s2);
    ss.s2 = __fma_rn(t2, t2, ss.s2);
    ss.s2 = __fma_rn(t3, t3, ss.s2);
    ss.nr += 4;
}

__device__ __forceinline__ void gr_s_ivec(gr_i128 &acc, gr_sthread<long long> &ss, longlong2 v)
{
    gr_s_int(acc, ss, v.x);
    gr_s_int(acc, ss, v.y);
}

template <int BLOCK, typename T>
__global__ void __launch_bounds__(BLOCK)
    gr_stats_int_kernel(const T *__restrict__ in, uint64_t n, gr_stats_scratch_t *g, gr_stats_result_t *result)
{
    typedef typename gr_ivec<T>::type vec_t;
    const uint64_t VEC = 16 / sizeof(T);
    const int NW = BLOCK / 32;
    __shared__ gr_spart_t s_part[NW];
    __shared__ unsigned long long s_ilo[NW];
    __shared__ long long s_ihi[NW];
    __shared__ int s_last;

    const uint64_t t = (uint64_t)blockIdx.x * BLOCK + threadIdx.x;
    const uint64_t nthreads = (uint64_t)gridDim.x * BLOCK;
    const uintptr_t addr = (uintptr_t)in;
    uint64_t head = (uint64_t)((16u - (addr & 15u)) & 15u) / sizeof(T);
    if (head > n)
        head = n;
    const uint64_t nvec = (n - head) / VEC;
    const uint64_t tail = head + nvec * VEC;
    const vec_t *__restrict__ v = (const vec_t *)(in + head);

    gr_i128 acc;
    acc.lo = 0ull;
    acc.hi = 0ll;
    gr_sthread<T> ss;
    ss.K = gr_s_shift(in, v, t, head, nvec, tail, n);
    ss.s1 = 0.0;
    ss.s2 = 0.0;
    ss.nf = 0ull;
    ss.nr = 0u;
    ss.kmin = sizeof(T) == 4 ? (T)INT_MAX : (T)LLONG_MAX;
    ss.kmax = sizeof(T) == 4 ? (T)INT_MIN : (T)LLONG_MIN;

    uint64_t i = t;
    for (; i + 3 * nthreads < nvec; i += 4 * nthreads) {
        const vec_t a = __ldg(v + i);
        const vec_t b = __ldg(v + i + nthreads);
        const vec_t c = __ldg(v + i + 2 * nthreads);
        const vec_t d = __ldg(v + i + 3 * nthreads);
        gr_s_ivec(acc, ss, a);
        gr_s_ivec(acc, ss, b);
        gr_s_ivec(acc, ss, c);
        gr_s_ivec(acc, ss, d);
    }
    for (; i < nvec; i += nthreads)
        gr_s_ivec(acc, ss, __ldg(v + i));
    for (uint64_t j = t; j < head; j += nthreads)
        gr_s_int(acc, ss, in[j]);
    for (uint64_t j = tail + t; j < n; j += nthreads)
        gr_s_int(acc, ss, in[j]);
    if (sizeof(T) == 4) /* lo held a signed 64-bit sum */
        acc.hi = (long long)acc.lo < 0 ? -1ll : 0ll;
    ss.nf = ss.nr; /* < 2^32 values a thread: a GPU holds < 2^36 elements, a launch has >= 128 threads */

    /* the exact sum: a warp shuffle tree of 128-bit adds, warps by thread 0,
     * then four 32-bit digits into the grid's limbs at 2^0 (limb 34). */
    const int lane = (int)(threadIdx.x & 31u), warp = (int)(threadIdx.x >> 5);
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) {
        const unsigned long long blo = __shfl_down_sync(0xFFFFFFFFu, acc.lo, off);
        const long long bhi = __shfl_down_sync(0xFFFFFFFFu, acc.hi, off);
        if (lane < off) {
            acc.lo += blo;
            acc.hi += bhi + (long long)(acc.lo < blo);
        }
    }
    if (lane == 0) {
        s_ilo[warp] = acc.lo;
        s_ihi[warp] = acc.hi;
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        for (int w = 1; w < NW; ++w) {
            acc.lo += s_ilo[w];
            acc.hi += s_ihi[w] + (long long)(acc.lo < s_ilo[w]);
        }
        const int k0 = GR_EXACT_BIAS / 32;
        const long long dg[4] = {(long long)(acc.lo & 0xFFFFFFFFull), (long long)(acc.lo >> 32),
                                 (long long)((unsigned long long)acc.hi & 0xFFFFFFFFull), acc.hi >> 32};
        for (int k = 0; k < 4; ++k)
            if (dg[k] != 0)
                atomicAdd(&g->x.limb[k0 + k], (unsigned long long)dg[k]);
    }

    const long long kmin = ss.nf ? (long long)ss.kmin : LLONG_MAX;
    const long long kmax = ss.nf ? (long long)ss.kmax : LLONG_MIN;
    const gr_spart_t mine = gr_s_block<BLOCK>(gr_s_to_part(ss, kmin, kmax), s_part);
    __threadfence();
    __syncthreads();
    gr_spart_t all;
    if (!gr_s_grid<BLOCK>(g, mine, s_part, &s_last, &all))
        return;
    for (int k = (int)threadIdx.x; k < GR_X_NL; k += BLOCK)
        result->limb[k] = (int64_t)atomicExch(&g->x.limb[k], 0ull);
    if (threadIdx.x == 0) {
        result->nan = 0;
        result->pinf = 0;
        result->ninf = 0;
        result->flushes = 0;
        result->nonnegzero = n > 0;
        gr_s_write(result, all, sizeof(T) == 4 ? GR_C_I32 : GR_C_I64);
        g->x.ticket = 0u;
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        __threadfence_system(); /* cumulative: the block's result words (seen through the barrier) before count */
        result->count = n;
        __threadfence_system();
    }
}

/* ---- launcher ---------------------------------------------------------------- */

/* The stats family's entry of the instance table (gr_dispatch.cuh): one op,
 * one variant; floats with GR_STATS_TERMS expansion terms; i64 as long long
 * (the 128-bit accumulator's overloads, gr_s_iadd, are written for it). */
template <int DT, int OP, int V, int BLOCK>
struct gr_kernel_of<GR_KF_STATS, DT, OP, V, BLOCK> {
    static const void *get()
    {
        if constexpr (DT == GR_C_F32 || DT == GR_C_F64)
            return (const void *)gr_stats_float_kernel<BLOCK, typename gr_ctype<DT>::type, GR_STATS_TERMS>;
        else if constexpr (DT == GR_C_I32)
            return (const void *)gr_stats_int_kernel<BLOCK, int>;
        else
            return (const void *)gr_stats_int_kernel<BLOCK, long long>;
    }
};

GR_DTYPES_stats(GR_INSTANCES)
GR_DISPATCH(stats)

static const void *kernel_for(int dtype, int block) { return gr_stats_kernel_for(dtype, 0, 0, block); }

extern "C" size_t gr_cuda_stats_scratch_bytes(void) { return sizeof(gr_stats_scratch_t); }

extern "C" int gr_cuda_stats_supported(int dtype)
{
    return dtype == GR_C_F32 || dtype == GR_C_F64 || dtype == GR_C_I32 || dtype == GR_C_I64;
}

extern "C" cudaError_t gr_cuda_stats_occupancy(int dtype, int block, int *blocks_per_sm)
{
    const void *k = kernel_for(dtype, block);
    *blocks_per_sm = 0;
    if (!k)
        return cudaErrorInvalidValue;
    return cudaOccupancyMaxActiveBlocksPerMultiprocessor(blocks_per_sm, k, block, 0);
}

extern "C" cudaError_t gr_cuda_launch_stats(const gr_cuda_stats_launch_t *l)
{
    const void *k = kernel_for(l->dtype, l->block);
    if (!k || l->grid < 1 || l->grid > GR_STATS_GRID_MAX || l->round_vecs > GR_EXACT_ROUND_VECS || !l->scratch ||
        !l->result || (l->n > 0 && !l->in))
        return cudaErrorInvalidValue;
    if ((uintptr_t)l->in % gr_c_elem_size(l->dtype) != 0)
        return cudaErrorMisalignedAddress;
    const void *in = l->in;
    uint64_t n = l->n;
    uint64_t round_vecs = l->round_vecs ? l->round_vecs : GR_EXACT_ROUND_VECS;
    gr_stats_scratch_t *scratch = (gr_stats_scratch_t *)l->scratch;
    gr_stats_result_t *result = l->result;
    void *fargs[] = {(void *)&in, (void *)&n, (void *)&round_vecs, (void *)&scratch, (void *)&result};
    void *iargs[] = {(void *)&in, (void *)&n, (void *)&scratch, (void *)&result};
    const bool is_int = l->dtype == GR_C_I32 || l->dtype == GR_C_I64;
    cudaError_t e = cudaLaunchKernel(k, dim3((unsigned)l->grid), dim3((unsigned)l->block), is_int ? iargs : fargs, 0,
                                     l->stream);
    if (e != cudaSuccess)
        return e;
    return cudaGetLastError();
}
