/*
 * gr_thread.cuh - thread layer: one thread folds its share of a grid-stride
 * range into a private accumulator, reading the bulk with 16-byte vector loads.
 * f16 / bf16 elements are read as 8 halves per vector and widened to f32 in
 * registers (exact; gr_vec.cuh), so the operators see f32 values.
 *
 * A shard starts wherever its rank's range starts, so `in` is in general not
 * 16-byte aligned. The range is cut into
 *   head: the 0..VEC-1 elements before the first 16-byte boundary (scalar),
 *   body: whole 16-byte vectors, grid-stride, 8 vectors in flight per thread,
 *   tail: the 0..VEC-1 elements after the last whole vector (scalar).
 * A pointer not even aligned to its element size (never produced by
 * cudaMalloc plus an element offset) is read all-scalar. Indices are 64-bit
 * everywhere, so n may exceed 2^32.
 *
 * The order in which one thread folds its elements depends only on (n, the
 * pointer's offset from 16 bytes, thread id, thread count): repeatable.
 */
#ifndef GR_THREAD_CUH
#define GR_THREAD_CUH

#include <stdint.h>

#include "gr_ops.cuh"
#include "gr_tuning.h"
#include "gr_vec.cuh"

/* How to fold the lanes of each 16-byte vector (gr_vec.cuh) into an accumulator. */
template <typename Op>
__device__ __forceinline__ void gr_add_vec(const Op &op, typename Op::acc_t &a, float4 v)
{
    op.add(a, v.x);
    op.add(a, v.y);
    op.add(a, v.z);
    op.add(a, v.w);
}
template <typename Op>
__device__ __forceinline__ void gr_add_vec(const Op &op, typename Op::acc_t &a, int4 v)
{
    op.add(a, (int32_t)v.x);
    op.add(a, (int32_t)v.y);
    op.add(a, (int32_t)v.z);
    op.add(a, (int32_t)v.w);
}
template <typename Op>
__device__ __forceinline__ void gr_add_vec(const Op &op, typename Op::acc_t &a, double2 v)
{
    op.add(a, v.x);
    op.add(a, v.y);
}
template <typename Op>
__device__ __forceinline__ void gr_add_vec(const Op &op, typename Op::acc_t &a, longlong2 v)
{
    op.add(a, (int64_t)v.x);
    op.add(a, (int64_t)v.y);
}
/* 8 halves: widened to f32 (exact), folded in index order */
template <typename Op>
__device__ __forceinline__ void gr_add_vec(const Op &op, typename Op::acc_t &a, gr_f16x8 v)
{
    float4 lo, hi;
    gr_widen8(v, lo, hi);
    gr_add_vec(op, a, lo);
    gr_add_vec(op, a, hi);
}
template <typename Op>
__device__ __forceinline__ void gr_add_vec(const Op &op, typename Op::acc_t &a, gr_bf16x8 v)
{
    float4 lo, hi;
    gr_widen8(v, lo, hi);
    gr_add_vec(op, a, lo);
    gr_add_vec(op, a, hi);
}

/* Vectors each thread has in flight in the body: all GR_THREAD_UNROLL loads
 * are issued before the first is used (the tuning policy's, gr_tuning_sm90.h). */
#define GR_THREAD_UNROLL GR_TUNE_FAST_LOADS

/*
 * The body over vectors v[0..nvec) for thread t of nthreads, index type I
 * (uint32_t when every index the loop forms fits, else uint64_t; the order is
 * the same either way). Whole rounds of GR_THREAD_UNROLL vectors first; the
 * thread's last 0..GR_THREAD_UNROLL-1 vectors as one predicated batch, so a
 * short remainder also costs one round trip, not one per vector.
 */
template <typename I, typename Op, typename V>
__device__ __forceinline__ void gr_thread_body(const Op &op, typename Op::acc_t &acc, const V *__restrict__ v, I nvec,
                                               I t, I nthreads)
{
    const int U = GR_THREAD_UNROLL;
    I i = t;
    for (; i + (I)(U - 1) * nthreads < nvec; i += (I)U * nthreads) {
        V x[U];
#pragma unroll
        for (int u = 0; u < U; ++u)
            x[u] = gr_ldg(v + (i + (I)u * nthreads));
#pragma unroll
        for (int u = 0; u < U; ++u)
            gr_add_vec(op, acc, x[u]);
    }
    V x[U - 1];
#pragma unroll
    for (int u = 0; u < U - 1; ++u)
        if (i + (I)u * nthreads < nvec)
            x[u] = gr_ldg(v + (i + (I)u * nthreads));
#pragma unroll
    for (int u = 0; u < U - 1; ++u)
        if (i + (I)u * nthreads < nvec)
            gr_add_vec(op, acc, x[u]);
}

/*
 * Fold elements in[i] owned by thread t of nthreads into a fresh accumulator
 * and return it. Any launch shape works; every thread returns a valid
 * accumulator (the identity when it owns nothing). A thread folds at most
 * n / nthreads + 6 elements (one head and one tail element, and a partial
 * last vector's worth of rounding).
 */
template <typename T, typename Op>
__device__ __forceinline__ typename Op::acc_t gr_thread_accumulate(const Op &op, const T *__restrict__ in, uint64_t n,
                                                                   uint64_t t, uint64_t nthreads)
{
    typedef typename gr_vec16<T>::type vec_t;
    const uint64_t VEC = 16 / sizeof(T);
    typename Op::acc_t acc = op.identity();

    const uintptr_t addr = (uintptr_t)in;
    uint64_t head;
    if (addr % sizeof(T) != 0) {
        head = n; /* misaligned elements: everything scalar */
    } else {
        head = (uint64_t)((16u - (addr & 15u)) & 15u) / sizeof(T);
        if (head > n)
            head = n;
    }
    const uint64_t nvec = (n - head) / VEC;
    const uint64_t tail = head + nvec * VEC;

    for (uint64_t i = t; i < head; i += nthreads)
        op.add(acc, gr_widen(in[i]));

    const vec_t *__restrict__ v = (const vec_t *)(in + head);
    /* 32-bit index arithmetic when no index the body forms (< nvec + U x
     * nthreads) can reach 2^32: fewer instructions per load address */
    if (nvec + (uint64_t)GR_THREAD_UNROLL * nthreads < ((uint64_t)1 << 32))
        gr_thread_body<uint32_t>(op, acc, v, (uint32_t)nvec, (uint32_t)t, (uint32_t)nthreads);
    else
        gr_thread_body<uint64_t>(op, acc, v, nvec, t, nthreads);

    for (uint64_t j = tail + t; j < n; j += nthreads)
        op.add(acc, gr_widen(in[j]));
    return acc;
}

#endif /* GR_THREAD_CUH */
