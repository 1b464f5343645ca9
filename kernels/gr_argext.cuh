/*
 * gr_argext.cuh - one thread's part of argmin/argmax (argext.cu): the
 * record's merge and the exact per-element path, and the fast loop over the
 * thread's grid-stride share (the scheme is described in argext.cu). Only
 * per-thread code, so tests/vec_gpu/test_argext_loop.cpp runs it on the host
 * (CUDA's intrinsics replaced by plain C++) against the exact path.
 */
#ifndef GR_ARGEXT_CUH
#define GR_ARGEXT_CUH

#include "gr_common.h"
#include "gr_vec_kernels.h"
#include "gr_vec_loop.cuh"

#include <stdint.h>
#include <type_traits>

namespace gr_arg {

constexpr int kMin = GR_VEC_ARG_MIN, kMax = GR_VEC_ARG_MAX;

/* The empty state: no value seen. */
__device__ __forceinline__ void arg_init(gr_vec_arg_rec_t &a)
{
    a.fmin = __longlong_as_double(0x7FF0000000000000ll);             /* +Inf */
    a.fmax = __longlong_as_double((long long)0xFFF0000000000000ull); /* -Inf */
    a.imin = INT64_MAX;
    a.imax = INT64_MIN;
    a.fmin_i = a.fmax_i = a.imin_i = a.imax_i = a.nan_i = INT64_MAX;
}

/* A record's field of one side (LO: the min side): its value, or its index (IDX), of the integer (INT) or the
 * floating fields. */
template <bool INT, bool LO, bool IDX, typename R>
__device__ __forceinline__ auto &side_f(R &r)
{
    if constexpr (IDX)
        return INT ? (LO ? r.imin_i : r.imax_i) : (LO ? r.fmin_i : r.fmax_i);
    else if constexpr (INT)
        return LO ? r.imin : r.imax;
    else
        return LO ? r.fmin : r.fmax;
}

/* (v, i) into a side: the lower value (LO) or the higher, the lower index on ties. */
template <bool INT, bool LO, typename C>
__device__ __forceinline__ void side_put(gr_vec_arg_rec_t &a, C v, int64_t i)
{
    auto &best = side_f<INT, LO, false>(a);
    int64_t &best_i = side_f<INT, LO, true>(a);
    const std::remove_reference_t<decltype(best)> w = v; /* exact: f32 in f64, int32 in int64 */
    if ((LO ? w < best : w > best) || (w == best && i < best_i)) {
        best = w;
        best_i = i;
    }
}

/* b into a: the sides W of the floating (INT false) or integer fields, and the NaN index. */
template <bool INT, int W>
__device__ __forceinline__ void merge(gr_vec_arg_rec_t &a, const gr_vec_arg_rec_t &b)
{
    if constexpr (!INT) {
        if (b.nan_i < a.nan_i)
            a.nan_i = b.nan_i;
    }
    if constexpr ((W & kMin) != 0)
        side_put<INT, true>(a, side_f<INT, true, false>(b), side_f<INT, true, true>(b));
    if constexpr ((W & kMax) != 0)
        side_put<INT, false>(a, side_f<INT, false, false>(b), side_f<INT, false, true>(b));
}

/* One element by the exact path: v (floating: double, halves widened; integer: int64) at global index gi. */
template <bool INT, int W, typename C>
__device__ __forceinline__ void put_one(gr_vec_arg_rec_t &a, C v, int64_t gi)
{
    if constexpr (!INT) {
        if (v != v) {
            if (gi < a.nan_i)
                a.nan_i = gi;
            return;
        }
    }
    if constexpr ((W & kMin) != 0)
        side_put<INT, true>(a, v, gi);
    if constexpr ((W & kMax) != 0)
        side_put<INT, false>(a, v, gi);
}

/* The start states of the lanes: the compare type's lowest (lo) and highest (hi) value. */
template <typename C>
struct lim;
template <>
struct lim<float> {
    __device__ static float lo() { return __int_as_float(0xFF800000); }
    __device__ static float hi() { return __int_as_float(0x7F800000); }
};
template <>
struct lim<double> {
    __device__ static double lo() { return __longlong_as_double((long long)0xFFF0000000000000ull); }
    __device__ static double hi() { return __longlong_as_double(0x7FF0000000000000ll); }
};
template <>
struct lim<int32_t> {
    __device__ static int32_t lo() { return INT32_MIN; }
    __device__ static int32_t hi() { return INT32_MAX; }
};
template <>
struct lim<long long> {
    __device__ static long long lo() { return INT64_MIN; }
    __device__ static long long hi() { return INT64_MAX; }
};

/*
 * Per dtype: T the element, its 16-byte vector (gr_vec16) as R groups of S lanes of the compare type C
 * (groups(v, g): lanes in index order, group h holds elements h S .. h S + S - 1; halves widen exactly to
 * f32, 2 groups), INT for the integer fields of the record, lo/hi the start states.
 */
template <typename TT, typename CC, bool I>
struct fast_of : lim<CC> {
    typedef TT T;
    typedef CC C;
    static constexpr bool INT = I;
    static constexpr int R = sizeof(TT) == 2 ? 2 : 1, S = 16 / (int)sizeof(TT) / R;
    template <typename V>
    __device__ static void groups(V v, C (&g)[R][S])
    {
        if constexpr (R == 1) {
            const C *e = reinterpret_cast<const C *>(&v); /* C: the vector's field type */
#pragma unroll
            for (int j = 0; j < S; ++j)
                g[0][j] = e[j];
        } else {
            float4 w[2];
            gr_widen8(v, w[0], w[1]);
#pragma unroll
            for (int h = 0; h < R; ++h) {
                const float *e = reinterpret_cast<const float *>(&w[h]);
#pragma unroll
                for (int j = 0; j < S; ++j)
                    g[h][j] = e[j];
            }
        }
    }
};
template <int DT>
struct fast;
template <>
struct fast<GR_C_F32> : fast_of<float, float, false> {
};
template <>
struct fast<GR_C_F64> : fast_of<double, double, false> {
};
template <>
struct fast<GR_C_F16> : fast_of<__half, float, false> {
};
template <>
struct fast<GR_C_BF16> : fast_of<__nv_bfloat16, float, false> {
};
template <>
struct fast<GR_C_I32> : fast_of<int32_t, int32_t, true> {
};
template <>
struct fast<GR_C_I64> : fast_of<int64_t, long long, true> {
};

/* Element i of x by the exact path, at global index gi. */
template <int DT, int W>
__device__ __forceinline__ void put_elem(gr_vec_arg_rec_t &a, const typename fast<DT>::T *x, uint64_t i,
                                         int64_t gi)
{
    if constexpr (fast<DT>::INT)
        put_one<true, W>(a, (int64_t)x[i], gi);
    else
        put_one<false, W>(a, (double)gr_widen(x[i]), gi);
}

/* The exact path as a gr_vec_loop visitor (one slot). */
template <int W>
struct exact_visit {
    gr_vec_arg_rec_t a;
    int64_t base;
    __device__ __forceinline__ void operator()(int, double v, double, uint64_t i)
    {
        put_one<false, W>(a, v, base + (int64_t)i);
    }
};

/* Vectors in flight per thread. */
#define ARG_U 4
/* Vectors of a thread per 32-bit position range (positions k R + h < 2^31). */
#define ARG_CHUNK ((uint64_t)1 << 29)

/* Element c at position p into a lane's best (LO: the lower) and its position: strict, the earlier wins ties. */
template <bool LO, typename C>
__device__ __forceinline__ void lane_put(C c, C &best, uint32_t &pos, uint32_t p)
{
    const bool b = LO ? c < best : c > best;
    best = b ? c : best;
    pos = b ? p : pos;
}

/* One thread's lanes: best value and position per side. */
template <int DT, int W>
struct lanes {
    typedef fast<DT> F;
    typename F::C mn[F::S], mx[F::S];
    uint32_t pmn[F::S], pmx[F::S];
    __device__ __forceinline__ lanes()
    {
#pragma unroll
        for (int j = 0; j < F::S; ++j) {
            mn[j] = F::hi();
            mx[j] = F::lo();
            pmn[j] = pmx[j] = 0u;
        }
    }
    /* Vector v at position kr = k R: strict comparisons, later positions lose ties. */
    __device__ __forceinline__ void put(typename gr_vec16<typename F::T>::type v, uint32_t kr, bool &nan)
    {
        typename F::C g[F::R][F::S];
        F::groups(v, g);
#pragma unroll
        for (int h = 0; h < F::R; ++h) {
            const uint32_t p = kr + (uint32_t)h;
#pragma unroll
            for (int j = 0; j < F::S; ++j) {
                const typename F::C c = g[h][j];
                if constexpr ((W & kMin) != 0)
                    lane_put<true>(c, mn[j], pmn[j], p);
                if constexpr ((W & kMax) != 0)
                    lane_put<false>(c, mx[j], pmx[j], p);
                if constexpr (!F::INT)
                    nan |= c != c;
            }
        }
    }
};

/* The whole fast state of lanes (positions from vector kb of thread t) into a; the element of position p,
 * lane j is x[head + (t + (kb + p / R) nt) L + (p % R) S + j]. */
template <int DT, int W>
__device__ __forceinline__ void lanes_out(const lanes<DT, W> &s, gr_vec_arg_rec_t &a, int64_t base, uint64_t head,
                                          uint64_t t, uint64_t nt, uint64_t kb)
{
    typedef fast<DT> F;
    constexpr int L = F::R * F::S;
    const int64_t b0 = base + (int64_t)head;
    const auto out = [&](auto lo, const typename F::C(&v)[F::S], const uint32_t(&pos)[F::S]) {
        constexpr bool LO = decltype(lo)::value;
#pragma unroll
        for (int j = 0; j < F::S; ++j)
            side_put<F::INT, LO>(a, v[j],
                                 b0 + (int64_t)((t + (kb + pos[j] / F::R) * nt) * L + (pos[j] % F::R) * F::S + j));
    };
    if constexpr ((W & kMin) != 0)
        out(std::true_type(), s.mn, s.pmn);
    if constexpr ((W & kMax) != 0)
        out(std::false_type(), s.mx, s.pmx);
}

/* Elements [lo + t, hi) step nt by the exact path. */
template <int DT, int W>
__device__ __forceinline__ void exact_range(gr_vec_arg_rec_t &a, const typename fast<DT>::T *x, int64_t base,
                                            uint64_t lo, uint64_t hi, uint64_t t, uint64_t nt)
{
    for (uint64_t i = lo + t; i < hi; i += nt)
        put_elem<DT, W>(a, x, i, base + (int64_t)i);
}

/* Thread t of nt: its share of x[0..n) (global indices base + i) into a (the empty state on entry). */
template <int DT, int W>
__device__ __forceinline__ void thread_share(const void *xv, uint64_t n, int64_t base, uint64_t t, uint64_t nt,
                                             gr_vec_arg_rec_t &a)
{
    typedef fast<DT> F;
    typedef typename F::T T;
    typedef typename gr_vec16<T>::type V;
    constexpr int L = 16 / (int)sizeof(T);
    const T *x = (const T *)xv;
    const uintptr_t ax = (uintptr_t)x;
    /* the split of gr_vec_loop.cuh (the exact path below takes it again) */
    uint64_t head = n;
    if (ax % sizeof(T) == 0) {
        head = (uint64_t)((16u - (ax & 15u)) & 15u) / sizeof(T);
        if (head > n)
            head = n;
    }
    const uint64_t nvec = (n - head) / L;
    const uint64_t nk = t < nvec ? (nvec - t - 1) / nt + 1 : 0; /* this thread's vectors */
    const V *vx = (const V *)(x + head);
    const uint32_t nt32 = (uint32_t)nt; /* nt <= 2^20 GR_VEC_BLOCK */
    bool nan = false;
    for (uint64_t kb = 0; kb < nk && !nan; kb += ARG_CHUNK) {
        const uint32_t kn = (uint32_t)(nk - kb < ARG_CHUNK ? nk - kb : ARG_CHUNK);
        lanes<DT, W> s;
        const V *p = vx + (t + kb * nt);
        uint32_t k = 0;
        for (; k + ARG_U <= kn; k += ARG_U, p += (uint64_t)ARG_U * nt32) {
            V v[ARG_U];
#pragma unroll
            for (int u = 0; u < ARG_U; ++u)
                v[u] = gr_ldg(p + (uint64_t)((uint32_t)u * nt32));
#pragma unroll
            for (int u = 0; u < ARG_U; ++u)
                s.put(v[u], (k + (uint32_t)u) * F::R, nan);
        }
        if (k < kn) {
            /* the last, partial round: past the end, vector 0 of the round again (already seen, it
             * ties and loses) */
            V v[ARG_U];
#pragma unroll
            for (int u = 0; u < ARG_U; ++u)
                v[u] = gr_ldg(p + (uint64_t)(k + (uint32_t)u < kn ? (uint32_t)u * nt32 : 0u));
#pragma unroll
            for (int u = 0; u < ARG_U; ++u)
                s.put(v[u], (k + (uint32_t)u) * F::R, nan);
        }
        if (!nan)
            lanes_out<DT, W>(s, a, base, head, t, nt, kb);
    }
    if constexpr (!F::INT) {
        if (nan) { /* a NaN: this thread's share again by the exact path */
            exact_visit<W> e;
            arg_init(e.a);
            e.base = base;
            gr_vec_loop<T, false, 1>(x, (const T *)nullptr, n, t, nt, e);
            a = e.a;
            return;
        }
    }
    exact_range<DT, W>(a, x, base, 0, head, t, nt);
    exact_range<DT, W>(a, x, base, head + nvec * L, n, t, nt);
}

} // namespace gr_arg

#endif /* GR_ARGEXT_CUH */
