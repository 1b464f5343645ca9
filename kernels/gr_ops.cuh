/*
 * gr_ops.cuh - reduction operators as functors, shared by every layer.
 *
 * An operator says how to fold one input element into an accumulator
 * (add), how to merge two accumulators (combine, applied in a fixed order by
 * the layers above so results are repeatable), its identity, and how to
 * write the final accumulator as the gr_local_t the host consumes (store).
 * The numeric behaviour copies the cpu backend (src/backend/cpu/backend_cpu.c):
 *
 * f16 / bf16 input reaches these operators widened to f32 (gr_vec.cuh), so
 * it is reduced exactly as f32 data holding the same values would be.
 *
 *   gr_op_fsum<OP>      f32/f64 input, sum-like op (sum, abssum, sumsq,
 *                       powsum:P): term gr_term_f in double, summed in
 *                       double from -0.0 (so all -0.0 input gives -0.0).
 *                       Additions use __dadd_rn so nvcc never contracts a
 *                       term's product into an FMA with the sum: the terms
 *                       are bit-identical to the cpu backend's.
 *   gr_op_fminmax<MAX>  f32/f64 min/max in double; a NaN anywhere gives
 *                       NaN; -0.0 orders below +0.0 (gr_fmin_total).
 *   gr_op_isum<OP>      i32/i64 sum-like op: checked int64 terms
 *                       (gr_term_i) summed exactly in 128 bits; the overflow
 *                       flag records a term that did not fit.
 *   gr_op_iminmax<MAX>  i32/i64 min/max in int64.
 */
#ifndef GR_OPS_CUH
#define GR_OPS_CUH

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <stdint.h>

#include "gr_common.h"

/* Exact integer accumulator: 128-bit two's complement hi:lo and a flag. */
typedef struct gr_acc_i128 {
    uint64_t lo;
    int64_t hi;
    int32_t ovf;
} gr_acc_i128_t;

/* ---- shuffles and coherent loads per accumulator type ---------------- */

__device__ __forceinline__ double gr_shfl_down(double a, int off)
{
    return __shfl_down_sync(0xFFFFFFFFu, a, off);
}

__device__ __forceinline__ long long gr_shfl_down(long long a, int off)
{
    return __shfl_down_sync(0xFFFFFFFFu, a, off);
}

__device__ __forceinline__ gr_acc_i128_t gr_shfl_down(gr_acc_i128_t a, int off)
{
    gr_acc_i128_t r;
    r.lo = (uint64_t)__shfl_down_sync(0xFFFFFFFFu, (unsigned long long)a.lo, off);
    r.hi = (int64_t)__shfl_down_sync(0xFFFFFFFFu, (long long)a.hi, off);
    r.ovf = __shfl_down_sync(0xFFFFFFFFu, a.ovf, off);
    return r;
}

/* Loads of other blocks' partials: bypass L1, which is not coherent. */
__device__ __forceinline__ double gr_load_cg(const double *p) { return __ldcg(p); }
__device__ __forceinline__ long long gr_load_cg(const long long *p) { return __ldcg(p); }
__device__ __forceinline__ gr_acc_i128_t gr_load_cg(const gr_acc_i128_t *p)
{
    gr_acc_i128_t r;
    r.lo = (uint64_t)__ldcg((const unsigned long long *)&p->lo);
    r.hi = (int64_t)__ldcg((const long long *)&p->hi);
    r.ovf = __ldcg(&p->ovf);
    return r;
}

/*
 * The final gr_local_t, written field by field into mapped host memory with
 * relaxed system-scope stores: each field is one single-copy-atomic store,
 * so a host that polls sees a field either still holding the poison it wrote
 * before the launch or holding this launch's value, never a torn mix. No
 * fence orders the fields: the host accepts the result only when every field
 * differs from its poison and `reserved` holds the launch's sequence number
 * (gr_cuda_reduce_wait), or after the kernel has completed.
 */
__device__ __forceinline__ void gr_st_sys(uint64_t *p, uint64_t v)
{
    asm volatile("st.relaxed.sys.global.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}
__device__ __forceinline__ void gr_st_sys(int32_t *p, int32_t v)
{
    asm volatile("st.relaxed.sys.global.s32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}

__device__ __forceinline__ void gr_store_local(gr_local_t *r, double f, uint64_t lo, int64_t hi, uint64_t n,
                                               int32_t ovf, uint32_t seq)
{
    gr_st_sys((uint64_t *)&r->f, (uint64_t)__double_as_longlong(f));
    gr_st_sys(&r->lo, lo);
    gr_st_sys((uint64_t *)&r->hi, (uint64_t)hi);
    gr_st_sys(&r->count, n);
    gr_st_sys(&r->overflow, ovf);
    gr_st_sys(&r->reserved, (int32_t)seq);
}

/* ---- floating sum-like ------------------------------------------------- */

template <int OP>
struct gr_op_fsum {
    typedef double acc_t;
    int power;

    __device__ __forceinline__ acc_t identity() const { return -0.0; }
    template <typename T>
    __device__ __forceinline__ void add(acc_t &a, T x) const
    {
        a = __dadd_rn(a, gr_term_f(OP, power, (double)x));
    }
    __device__ __forceinline__ acc_t combine(acc_t a, acc_t b) const { return __dadd_rn(a, b); }
    __device__ __forceinline__ void store(acc_t a, uint64_t n, uint32_t seq, gr_local_t *r) const
    {
        gr_store_local(r, a, 0, 0, n, 0, seq);
    }
};

/* ---- floating min / max ------------------------------------------------ */

template <int IS_MAX>
struct gr_op_fminmax {
    typedef double acc_t;
    int power; /* unused; keeps every operator constructible from {power} */

    __device__ __forceinline__ acc_t identity() const { return IS_MAX ? -INFINITY : INFINITY; }
    __device__ __forceinline__ acc_t combine(acc_t a, acc_t b) const
    {
        if (isnan(a))
            return a;
        if (isnan(b))
            return b;
        if (a == b) /* equal values differ only in the sign of a zero */
            return (signbit(a) != 0) == (IS_MAX == 0) ? a : b;
        return IS_MAX ? (a > b ? a : b) : (a < b ? a : b);
    }
    template <typename T>
    __device__ __forceinline__ void add(acc_t &a, T x) const
    {
        a = combine(a, (double)x);
    }
    __device__ __forceinline__ void store(acc_t a, uint64_t n, uint32_t seq, gr_local_t *r) const
    {
        gr_store_local(r, a, 0, 0, n, 0, seq);
    }
};

/* ---- integer sum-like -------------------------------------------------- */

template <int OP>
struct gr_op_isum {
    typedef gr_acc_i128_t acc_t;
    int power;

    __device__ __forceinline__ acc_t identity() const
    {
        acc_t a;
        a.lo = 0;
        a.hi = 0;
        a.ovf = 0;
        return a;
    }
    template <typename T>
    __device__ __forceinline__ void add(acc_t &a, T x) const
    {
        gr_acc128_add(&a.lo, &a.hi, gr_term_i(OP, power, (int64_t)x, &a.ovf));
    }
    __device__ __forceinline__ acc_t combine(acc_t a, acc_t b) const
    {
        gr_acc128_add128(&a.lo, &a.hi, b.lo, b.hi);
        a.ovf |= b.ovf;
        return a;
    }
    __device__ __forceinline__ void store(acc_t a, uint64_t n, uint32_t seq, gr_local_t *r) const
    {
        gr_store_local(r, 0.0, a.lo, a.hi, n, a.ovf, seq);
    }
};

/* ---- integer min / max ------------------------------------------------- */

template <int IS_MAX>
struct gr_op_iminmax {
    typedef long long acc_t;
    int power; /* unused */

    __device__ __forceinline__ acc_t identity() const { return IS_MAX ? (acc_t)INT64_MIN : (acc_t)INT64_MAX; }
    __device__ __forceinline__ acc_t combine(acc_t a, acc_t b) const
    {
        return IS_MAX ? (a > b ? a : b) : (a < b ? a : b);
    }
    template <typename T>
    __device__ __forceinline__ void add(acc_t &a, T x) const
    {
        a = combine(a, (acc_t)x);
    }
    __device__ __forceinline__ void store(acc_t a, uint64_t n, uint32_t seq, gr_local_t *r) const
    {
        gr_store_local(r, 0.0, (uint64_t)a, 0, n, 0, seq);
    }
};

/* ---- per-thread accumulators ------------------------------------------------
 *
 * A thread folds its share with gr_thread_op<T, Op>::type and the block layer
 * widens the result to Op::acc_t. By default that is Op itself. For integer
 * sums whose terms are at most 2^31 in magnitude (i32 sum and abssum) a
 * thread accumulates in int64; for i64 sum it sums the high and low 32-bit
 * halves of each element in two 64-bit words. Neither can overflow while a
 * thread folds fewer than 2^32 elements (2^32 x 2^31 = 2^63, and int64 holds
 * -2^63; the low halves stay below 2^32 x 2^32 = 2^64 unsigned): the launcher
 * uses these only when n / (grid x block) < 2^31 (gr_thread_accumulate gives
 * a thread at most n / threads + 6 elements), else the 128-bit Op throughout.
 * Integer sums are exact, so the result is the same bits either way.
 */
template <int OP>
struct gr_op_i32acc64 {
    typedef long long acc_t;
    __device__ __forceinline__ acc_t identity() const { return 0; }
    __device__ __forceinline__ void add(acc_t &a, int32_t x) const
    {
        /* abssum: |INT32_MIN| = 2^31 fits in int64 */
        a += OP == GR_C_ABSSUM && x < 0 ? -(long long)x : (long long)x;
    }
};

typedef struct gr_acc_halves {
    unsigned long long lo; /* sum of the low 32 bits of each element, unsigned */
    long long hi;          /* sum of the high 32 bits of each element, signed */
} gr_acc_halves_t;

struct gr_op_i64halves {
    typedef gr_acc_halves_t acc_t;
    __device__ __forceinline__ acc_t identity() const
    {
        acc_t a;
        a.lo = 0;
        a.hi = 0;
        return a;
    }
    __device__ __forceinline__ void add(acc_t &a, int64_t x) const
    {
        a.lo += (unsigned long long)(uint32_t)x;
        a.hi += (long long)(int32_t)(x >> 32);
    }
};

template <typename T, typename Op>
struct gr_thread_op {
    enum { narrow = 0 };
    typedef Op type;
    __device__ __forceinline__ static type make(const Op &op) { return op; }
    __device__ __forceinline__ static typename Op::acc_t widen(const Op &, typename Op::acc_t a) { return a; }
};

template <int OP>
struct gr_thread_op_i32 {
    enum { narrow = 1 };
    typedef gr_op_i32acc64<OP> type;
    __device__ __forceinline__ static type make(const gr_op_isum<OP> &) { return type(); }
    __device__ __forceinline__ static gr_acc_i128_t widen(const gr_op_isum<OP> &, long long a)
    {
        gr_acc_i128_t w;
        w.lo = (uint64_t)a;
        w.hi = a < 0 ? -1 : 0;
        w.ovf = 0;
        return w;
    }
};
template <>
struct gr_thread_op<int32_t, gr_op_isum<GR_C_SUM> > : gr_thread_op_i32<GR_C_SUM> {
};
template <>
struct gr_thread_op<int32_t, gr_op_isum<GR_C_ABSSUM> > : gr_thread_op_i32<GR_C_ABSSUM> {
};

/*
 * f16 / bf16 min and max: a thread keeps its extreme in f32, the type the
 * halves widen to, and the block layer widens it to double. Selection is
 * exact and f32 -> f64 is exact and monotone, so this is the same value as
 * gr_op_fminmax in double (NaN wins, -0.0 below +0.0), with no f64
 * conversion or compare per element. No bound on n: every launch may use it.
 */
template <int IS_MAX>
struct gr_op_fminmax_f32 {
    typedef float acc_t;
    __device__ __forceinline__ acc_t identity() const { return IS_MAX ? -INFINITY : INFINITY; }
    __device__ __forceinline__ void add(acc_t &a, float x) const
    {
        if (isnan(a))
            return;
        if (isnan(x)) {
            a = x;
            return;
        }
        if (a == x) { /* equal values differ only in the sign of a zero */
            if ((signbit(a) != 0) != (IS_MAX == 0))
                a = x;
            return;
        }
        a = IS_MAX ? (a > x ? a : x) : (a < x ? a : x);
    }
};

template <int IS_MAX>
struct gr_thread_op_half_minmax {
    enum { narrow = 1 };
    typedef gr_op_fminmax_f32<IS_MAX> type;
    __device__ __forceinline__ static type make(const gr_op_fminmax<IS_MAX> &) { return type(); }
    __device__ __forceinline__ static double widen(const gr_op_fminmax<IS_MAX> &, float a) { return (double)a; }
};
template <>
struct gr_thread_op<__half, gr_op_fminmax<0> > : gr_thread_op_half_minmax<0> {
};
template <>
struct gr_thread_op<__half, gr_op_fminmax<1> > : gr_thread_op_half_minmax<1> {
};
template <>
struct gr_thread_op<__nv_bfloat16, gr_op_fminmax<0> > : gr_thread_op_half_minmax<0> {
};
template <>
struct gr_thread_op<__nv_bfloat16, gr_op_fminmax<1> > : gr_thread_op_half_minmax<1> {
};

template <>
struct gr_thread_op<int64_t, gr_op_isum<GR_C_SUM> > {
    enum { narrow = 1 };
    typedef gr_op_i64halves type;
    __device__ __forceinline__ static type make(const gr_op_isum<GR_C_SUM> &) { return type(); }
    /* value = hi x 2^32 + lo, exactly, in 128 bits */
    __device__ __forceinline__ static gr_acc_i128_t widen(const gr_op_isum<GR_C_SUM> &, gr_acc_halves_t a)
    {
        gr_acc_i128_t w;
        w.lo = (uint64_t)a.hi << 32;
        w.hi = a.hi >> 32; /* arithmetic: the sign of hi extends into the high word */
        w.ovf = 0;
        gr_acc128_add128(&w.lo, &w.hi, a.lo, 0);
        return w;
    }
};

#endif /* GR_OPS_CUH */
