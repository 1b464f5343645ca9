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
 * A visitor with a member `enum { whole_vectors = 1 }` takes each round of the
 * body whole instead: f.vecs(a, b, xh, yh, i, nt) with a[u], b[u] vectors
 * i + u nt of x and y (b = a when y is not read), xh = x + head and yh (= xh
 * when y is not read), so element k of a[u] is xh[(i + u nt) L + k]. Every
 * other part of the loop, and every other visitor, is as above.
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

/* T: float, double, __half or __nv_bfloat16. Y: whether y is read. U: vectors in flight (slots 0..U-1). */
template <typename T, bool Y, int U = GR_VEC_LOOP_U, typename F>
__device__ __forceinline__ void gr_vec_loop(const T *__restrict__ x, const T *__restrict__ y, uint64_t n,
                                            uint64_t t, uint64_t nt, F &f)
{
    typedef typename gr_vec16<T>::type V;
    constexpr int L = 16 / sizeof(T);
    const uintptr_t ax = (uintptr_t)x;
    uint64_t head;
    if (ax % sizeof(T) != 0 || (Y && ((ax ^ (uintptr_t)y) & 15u) != 0)) {
        head = n;
    } else {
        head = (uint64_t)((16u - (ax & 15u)) & 15u) / sizeof(T);
        if (head > n)
            head = n;
    }
    const uint64_t nvec = (n - head) / L;

    for (uint64_t i = t; i < head; i += nt)
        f(0, (double)gr_widen(x[i]), Y ? (double)gr_widen(y[i]) : 0.0, i);

    const V *__restrict__ vx = (const V *)(x + head);
    const V *__restrict__ vy = Y ? (const V *)(y + head) : vx;
    uint64_t i = t;
    for (; i + (uint64_t)(U - 1) * nt < nvec; i += (uint64_t)U * nt) {
        V a[U], b[U];
#pragma unroll
        for (int u = 0; u < U; ++u) {
            a[u] = gr_ldg(vx + (i + (uint64_t)u * nt));
            if constexpr (Y)
                b[u] = gr_ldg(vy + (i + (uint64_t)u * nt));
        }
        if constexpr (gr_vec_whole<F>::value) {
            if constexpr (Y)
                f.vecs(a, b, x + head, y + head, i, nt);
            else
                f.vecs(a, a, x + head, x + head, i, nt);
        } else {
#pragma unroll
            for (int u = 0; u < U; ++u) {
                double la[L], lb[L];
                gr_lanes(a[u], la);
                if constexpr (Y)
                    gr_lanes(b[u], lb);
                const uint64_t i0 = head + (i + (uint64_t)u * nt) * L;
#pragma unroll
                for (int j = 0; j < L; ++j) {
                    if constexpr (Y)
                        f(u, la[j], lb[j], i0 + j);
                    else
                        f(u, la[j], 0.0, i0 + j);
                }
            }
        }
    }
    for (; i < nvec; i += nt) {
        double la[L], lb[L];
        gr_lanes(gr_ldg(vx + i), la);
        if constexpr (Y)
            gr_lanes(gr_ldg(vy + i), lb);
        const uint64_t i0 = head + i * L;
#pragma unroll
        for (int j = 0; j < L; ++j) {
            if constexpr (Y)
                f(0, la[j], lb[j], i0 + j);
            else
                f(0, la[j], 0.0, i0 + j);
        }
    }

    for (uint64_t j = head + nvec * L + t; j < n; j += nt)
        f(0, (double)gr_widen(x[j]), Y ? (double)gr_widen(y[j]) : 0.0, j);
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
