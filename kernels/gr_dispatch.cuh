/*
 * gr_dispatch.cuh - the one instance table of every kernel family:
 * (dtype x op x variant x block) -> the kernel instance, or NULL when that
 * combination is not built. Which instances exist is written here, once;
 * which of them a run takes by default is the tuning policy's business
 * (tuning/gr_tuning.h).
 *
 *   family  dtypes                     ops                          variant          blocks
 *   fast    f32 f64 i32 i64 f16 bf16   sum min max abssum sumsq     narrow 0/1 (*)   128 256 512 1024
 *                                      powsum
 *   exact   f32 f64 f16 bf16           sum abssum sumsq (not f64)   terms 2, 3       128 256 512 (**)
 *   stats   f32 f64 i32 i64            (one: 0)                     (one: 0)         128 256 512
 *
 *   (*)  per-thread accumulators of gr_thread_op (gr_ops.cuh), taken when the
 *        launcher has checked their bound; ops without them have variant 0
 *        only (variant 1 returns the same instance).
 *   (**) 1024 would cap the exact kernel's registers at 64 and spill.
 *
 * How it is used, for a family F (fast, exact, stats):
 *   - each kernel header defines gr_kernel_of<F, DT, OP, V, BLOCK>::get(),
 *     the address of its instance (gr_grid.cuh, gr_exact.cuh, stats.cu);
 *   - one translation unit per dtype (so the instances compile in parallel)
 *     says GR_INSTANCES(F, tag, DT): it defines the extern "C" function
 *     gr_cuda_F_kernel_tag(op, variant, block), which walks this table;
 *   - the family's launcher says GR_DISPATCH(F), which defines
 *     gr_F_kernel_for(dtype, op, variant, block) over the dtype list.
 */
#ifndef GR_DISPATCH_CUH
#define GR_DISPATCH_CUH

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <stdint.h>
#include <type_traits>

#include "gr_common.h"
#include "gr_tuning.h"

/* A list of ints, and "the element of the list equal to v". */
template <int... V>
struct gr_ints {
};

/* fn(std::integral_constant<int, V>()) for the V in the list equal to v; NULL when none is. */
template <typename Fn, int... V>
static const void *gr_pick(int v, gr_ints<V...>, Fn &&fn)
{
    const void *k = 0;
    (void)((v == V && ((k = fn(std::integral_constant<int, V>())), true)) || ...);
    return k;
}

/* 1 when v is in the list. */
template <int... V>
static constexpr bool gr_in(int v, gr_ints<V...>)
{
    return ((v == V) || ...);
}

/* ---- the table --------------------------------------------------------------- */

template <int FAMILY>
struct gr_family;

template <>
struct gr_family<GR_KF_FAST> {
    typedef gr_ints<GR_C_SUM, GR_C_ABSSUM, GR_C_SUMSQ, GR_C_POWSUM, GR_C_MIN, GR_C_MAX> ops;
    typedef gr_ints<0, 1> variants;
    typedef gr_ints<128, 256, 512, 1024> blocks;
};
template <>
struct gr_family<GR_KF_EXACT> {
    typedef gr_ints<GR_C_SUM, GR_C_ABSSUM, GR_C_SUMSQ> ops;
    typedef gr_ints<2, 3> variants;
    typedef gr_ints<128, 256, 512> blocks;
};
template <>
struct gr_family<GR_KF_STATS> {
    typedef gr_ints<0> ops;
    typedef gr_ints<0> variants;
    typedef gr_ints<128, 256, 512> blocks;
};

/* The dtypes each family is built for: X(family, tag, GR_C_ dtype). */
#define GR_DTYPES_fast(X)                                                                                              \
    X(fast, f32, GR_C_F32) X(fast, f64, GR_C_F64) X(fast, i32, GR_C_I32) X(fast, i64, GR_C_I64) X(fast, f16, GR_C_F16) \
        X(fast, bf16, GR_C_BF16)
#define GR_DTYPES_exact(X) X(exact, f32, GR_C_F32) X(exact, f64, GR_C_F64) X(exact, f16, GR_C_F16) X(exact, bf16, GR_C_BF16)
#define GR_DTYPES_stats(X) X(stats, f32, GR_C_F32) X(stats, f64, GR_C_F64) X(stats, i32, GR_C_I32) X(stats, i64, GR_C_I64)
#define GR_FAMILY_fast GR_KF_FAST
#define GR_FAMILY_exact GR_KF_EXACT
#define GR_FAMILY_stats GR_KF_STATS

/* Every policy names a block its family builds (the sm_90 one; the others take its values). */
static_assert(gr_in(gr_tuning_sm90(GR_KF_FAST, GR_C_F32).block, gr_family<GR_KF_FAST>::blocks()), "fast block");
static_assert(gr_in(gr_tuning_sm90(GR_KF_EXACT, GR_C_F32).block, gr_family<GR_KF_EXACT>::blocks()), "exact block");
static_assert(gr_in(gr_tuning_sm90(GR_KF_STATS, GR_C_F32).block, gr_family<GR_KF_STATS>::blocks()), "stats block");
static_assert(gr_in(gr_tuning_sm90(GR_KF_STATS, GR_C_F64).block, gr_family<GR_KF_STATS>::blocks()), "stats block");
static_assert(gr_in(gr_tuning_sm90(GR_KF_EXACT, GR_C_F32).terms, gr_family<GR_KF_EXACT>::variants()), "exact terms");

/* The element type of each dtype. */
template <int DT>
struct gr_ctype;
template <>
struct gr_ctype<GR_C_F32> {
    typedef float type;
};
template <>
struct gr_ctype<GR_C_F64> {
    typedef double type;
};
template <>
struct gr_ctype<GR_C_I32> {
    typedef int32_t type;
};
template <>
struct gr_ctype<GR_C_I64> {
    typedef int64_t type;
};
template <>
struct gr_ctype<GR_C_F16> {
    typedef __half type;
};
template <>
struct gr_ctype<GR_C_BF16> {
    typedef __nv_bfloat16 type;
};

/* The instance of FAMILY for (DT, OP, V, BLOCK): get() returns its address or
 * NULL. Specialised beside each family's kernel. */
template <int FAMILY, int DT, int OP, int V, int BLOCK>
struct gr_kernel_of;

/* The walk over op x variant x block for one dtype. */
template <int FAMILY, int DT>
static const void *gr_instance(int op, int variant, int block)
{
    typedef gr_family<FAMILY> F;
    return gr_pick(op, typename F::ops(), [&](auto o) {
        return gr_pick(variant, typename F::variants(), [&](auto v) {
            return gr_pick(block, typename F::blocks(), [&](auto b) {
                return gr_kernel_of<FAMILY, DT, decltype(o)::value, decltype(v)::value, decltype(b)::value>::get();
            });
        });
    });
}

#define GR_INSTANCE_FN(fam, tag) gr_cuda_##fam##_kernel_##tag
#define GR_INSTANCE_DECL(fam, tag, DT) extern "C" const void *GR_INSTANCE_FN(fam, tag)(int op, int variant, int block);
#define GR_INSTANCE_CASE(fam, tag, DT)                                                                                 \
    case DT:                                                                                                           \
        return GR_INSTANCE_FN(fam, tag)(op, variant, block);

/* The instances of family fam for one dtype (in that dtype's translation unit). */
#define GR_INSTANCES(fam, tag, DT)                                                                                     \
    extern "C" const void *GR_INSTANCE_FN(fam, tag)(int op, int variant, int block)                                     \
    {                                                                                                                  \
        return gr_instance<GR_FAMILY_##fam, DT>(op, variant, block);                                                   \
    }

/* In the family's launcher: gr_<fam>_kernel_for(dtype, op, variant, block). */
#define GR_DISPATCH(fam)                                                                                               \
    GR_DTYPES_##fam(GR_INSTANCE_DECL) static const void *gr_##fam##_kernel_for(int dtype, int op, int variant,         \
                                                                              int block)                               \
    {                                                                                                                  \
        switch (dtype) {                                                                                               \
            GR_DTYPES_##fam(GR_INSTANCE_CASE) default : return 0;                                                      \
        }                                                                                                              \
    }

#endif /* GR_DISPATCH_CUH */
