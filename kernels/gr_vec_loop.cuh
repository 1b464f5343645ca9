/*
 * gr_vec_loop.cuh - the element loop of the vector-op kernels (dot.cu,
 * argext.cu): thread t of nt visits its grid-stride share of x[0..n) (and
 * y[0..n)) with 16-byte vector loads (gr_vec.cuh: float4, double2, 8 halves),
 * U (default GR_VEC_LOOP_U) vectors of each input in flight, as gr_thread.cuh does for
 * the reduce:
 *   head: the elements before x's first 16-byte boundary (scalar, slot 0),
 *   body: whole vectors, grid-stride, in rounds of U: vector i + u nt of a
 *         round goes to slot u (the visitor's independent accumulator u),
 *   rest: the thread's last < U vectors, one by one, slot 0,
 *   tail: the elements after the last whole vector (scalar, slot 0).
 * When x is not aligned to its element, or y is given and lies at another
 * offset from 16 bytes than x, everything is scalar (head = n, slot 0).
 * Each slot sees its elements in increasing index order, and which elements a
 * slot sees depends only on (n, x mod 16, y mod 16, t, nt): a fixed grid
 * gives fixed bits, and the batch kernels (the same body) the single call's.
 * The visitor: f(slot, a, b, i) for element i, a = x[i] and b = y[i] (0 when
 * y is not read) as double; halves are widened exactly (gr_widen, gr_widen8).
 * slot is a constant once the loop is unrolled, so arrays indexed by it stay
 * in registers.
 * A visitor with a member `enum { whole_vectors = 1 }` takes each round of
 * the body whole instead: f.vecs(a, b, xh, yh, i, nt) with a[u], b[u] vectors
 * i + u nt of x and y (b = a when y is not read), xh = x + head and yh (= xh
 * when y is not read), so element k of a[u] is xh[(i + u nt) L + k]; with two
 * y (a pair) f.vecs2(a, b0, b1, xh, y0h, y1h, i, nt) alike (b0 = a, y0h = xh
 * for x.x). Every other part of the loop, and every other visitor, is as above.
 */
#ifndef GR_VEC_LOOP_CUH
#define GR_VEC_LOOP_CUH

#include <stdint.h>

#include "gr_vec.cuh"

/* Vectors of each input in flight per thread, and accumulators per visitor. */
#define GR_VEC_LOOP_U 4

/* Whether visitor F takes the body's rounds whole (F::whole_vectors, above). */
template <typename F, typename = int>
struct gr_vec_whole {
    enum { value = 0 };
};
template <typename F>
struct gr_vec_whole<F, decltype((void)F::whole_vectors, 0)> {
    enum { value = F::whole_vectors };
};

/* The lanes of one 16-byte vector as doubles, in index order. */
__device__ __forceinline__ void gr_lanes(float4 v, double (&o)[4])
{
    o[0] = v.x;
    o[1] = v.y;
    o[2] = v.z;
    o[3] = v.w;
}
__device__ __forceinline__ void gr_lanes(double2 v, double (&o)[2])
{
    o[0] = v.x;
    o[1] = v.y;
}
template <typename H>
__device__ __forceinline__ void gr_lanes(H v, double (&o)[8])
{
    float4 lo, hi;
    gr_widen8(v, lo, hi);
    o[0] = lo.x;
    o[1] = lo.y;
    o[2] = lo.z;
    o[3] = lo.w;
    o[4] = hi.x;
    o[5] = hi.y;
    o[6] = hi.z;
    o[7] = hi.w;
}

/*
 * The loop over x and NY (0, 1 or 2) arrays y[0..NY) of the same n: visitor
 * f(slot, a, b, i) with b[j] = y[j][i] (double b[2]; entries past NY are 0).
 * YX: y[0] is x itself (a pair's x.x): not loaded again, b[0] = a. Every y
 * must lie at x's offset from 16 bytes for the vector path (else all scalar,
 * as for one y). With NY <= 1 this is gr_vec_loop below, element for element;
 * a pair (NY = 2) gives each of its two products the slots and order of its
 * own single loop (the same head, rounds and tail), hence the same bits.
 */
template <typename T, int NY, bool YX, int U, typename F>
__device__ __forceinline__ void gr_vec_loop_ny(const T *__restrict__ x, const T *const (&y)[2], uint64_t n,
                                               uint64_t t, uint64_t nt, F &f)
{
    static_assert(NY >= 0 && NY <= 2 && (!YX || NY >= 1), "x and at most two y arrays");
    typedef typename gr_vec16<T>::type V;
    constexpr int L = 16 / sizeof(T);
    const uintptr_t ax = (uintptr_t)x;
    uint64_t head;
    bool scalar = ax % sizeof(T) != 0;
#pragma unroll
    for (int j = 0; j < NY; ++j)
        scalar |= ((ax ^ (uintptr_t)y[j]) & 15u) != 0;
    if (scalar) {
        head = n;
    } else {
        head = (uint64_t)((16u - (ax & 15u)) & 15u) / sizeof(T);
        if (head > n)
            head = n;
    }
    const uint64_t nvec = (n - head) / L;
    /* y[j] of element i, as double (y[0] of a pair x.x: x's) */
    auto yv = [&](int j, uint64_t i, double a) -> double {
        return j >= NY ? 0.0 : (YX && j == 0) ? a : (double)gr_widen(y[j][i]);
    };

    for (uint64_t i = t; i < head; i += nt) {
        const double a = (double)gr_widen(x[i]);
        double b[2] = {yv(0, i, a), yv(1, i, a)};
        f(0, a, b, i);
    }

    const V *__restrict__ vx = (const V *)(x + head);
    const V *__restrict__ vy0 = NY >= 1 ? (const V *)(y[0] + head) : vx;
    const V *__restrict__ vy1 = NY >= 2 ? (const V *)(y[1] + head) : vx;
    uint64_t i = t;
    for (; i + (uint64_t)(U - 1) * nt < nvec; i += (uint64_t)U * nt) {
        V a[U], b0[U], b1[U];
#pragma unroll
        for (int u = 0; u < U; ++u) {
            a[u] = gr_ldg(vx + (i + (uint64_t)u * nt));
            if constexpr (NY >= 1 && !YX)
                b0[u] = gr_ldg(vy0 + (i + (uint64_t)u * nt));
            if constexpr (NY >= 2)
                b1[u] = gr_ldg(vy1 + (i + (uint64_t)u * nt));
        }
        if constexpr (gr_vec_whole<F>::value) {
            static_assert(NY <= 1 ? !YX : true, "whole rounds: one y is x's own");
            if constexpr (NY == 2 && YX)
                f.vecs2(a, a, b1, x + head, x + head, y[1] + head, i, nt);
            else if constexpr (NY == 2)
                f.vecs2(a, b0, b1, x + head, y[0] + head, y[1] + head, i, nt);
            else if constexpr (NY == 1)
                f.vecs(a, b0, x + head, y[0] + head, i, nt);
            else
                f.vecs(a, a, x + head, x + head, i, nt);
        } else {
#pragma unroll
            for (int u = 0; u < U; ++u) {
                double la[L], lb0[L], lb1[L];
                gr_lanes(a[u], la);
                if constexpr (NY >= 1 && !YX)
                    gr_lanes(b0[u], lb0);
                if constexpr (NY >= 2)
                    gr_lanes(b1[u], lb1);
                const uint64_t i0 = head + (i + (uint64_t)u * nt) * L;
#pragma unroll
                for (int j = 0; j < L; ++j) {
                    double b[2] = {NY < 1 ? 0.0 : YX ? la[j] : lb0[j], NY < 2 ? 0.0 : lb1[j]};
                    f(u, la[j], b, i0 + j);
                }
            }
        }
    }
    for (; i < nvec; i += nt) {
        double la[L], lb0[L], lb1[L];
        gr_lanes(gr_ldg(vx + i), la);
        if constexpr (NY >= 1 && !YX)
            gr_lanes(gr_ldg(vy0 + i), lb0);
        if constexpr (NY >= 2)
            gr_lanes(gr_ldg(vy1 + i), lb1);
        const uint64_t i0 = head + i * L;
#pragma unroll
        for (int j = 0; j < L; ++j) {
            double b[2] = {NY < 1 ? 0.0 : YX ? la[j] : lb0[j], NY < 2 ? 0.0 : lb1[j]};
            f(0, la[j], b, i0 + j);
        }
    }

    for (uint64_t j = head + nvec * L + t; j < n; j += nt) {
        const double a = (double)gr_widen(x[j]);
        double b[2] = {yv(0, j, a), yv(1, j, a)};
        f(0, a, b, j);
    }
}

/* A one-y visitor f(slot, a, b, i) seen through gr_vec_loop_ny's f(slot, a, b[2], i). */
template <typename F>
struct gr_vec_visit1 {
    F &f;
    enum { whole_vectors = gr_vec_whole<F>::value };
    __device__ __forceinline__ void operator()(int u, double a, const double (&b)[2], uint64_t i) { f(u, a, b[0], i); }
    template <typename V, int U, typename T>
    __device__ __forceinline__ void vecs(const V (&a)[U], const V (&b)[U], const T *xh, const T *yh, uint64_t i,
                                         uint64_t nt)
    {
        f.vecs(a, b, xh, yh, i, nt);
    }
};

/* T: float, double, __half or __nv_bfloat16. Y: whether y is read. U: vectors in flight (slots 0..U-1). */
template <typename T, bool Y, int U = GR_VEC_LOOP_U, typename F>
__device__ __forceinline__ void gr_vec_loop(const T *__restrict__ x, const T *__restrict__ y, uint64_t n,
                                            uint64_t t, uint64_t nt, F &f)
{
    const T *const ys[2] = {y, nullptr};
    gr_vec_visit1<F> v{f};
    gr_vec_loop_ny<T, Y ? 1 : 0, false, U>(x, ys, n, t, nt, v);
}

/* The element type of a floating dtype (GR_C_*), for gr_vec_loop. */
template <int DT>
struct gr_vec_elem {
    typedef double type;
};
template <>
struct gr_vec_elem<GR_C_F32> {
    typedef float type;
};
template <>
struct gr_vec_elem<GR_C_F16> {
    typedef __half type;
};
template <>
struct gr_vec_elem<GR_C_BF16> {
    typedef __nv_bfloat16 type;
};

#endif /* GR_VEC_LOOP_CUH */
