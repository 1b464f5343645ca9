/*
 * exact_ablate.cu - test-only instances of gr_exact_kernel with ablation
 * policies: each flag below puts back the earlier design of one part of the
 * kernel, so `test_exact_gpu --bench` prices every part against the
 * production instance in the same run, and checks that each variant returns
 * the production result bits. f32 and f64 sum, 3 terms, blocks of 512 (the
 * defaults). The production instance (gr_exact_policy) is the library's; it
 * is not instantiated here a second time. The stamps variant (GR_XF_STAMPS) is
 * the production kernel with a %globaltimer/clock64 probe at each stage:
 * `test_exact_gpu --stamps` reads them. The flags, the probe and its buffer
 * live here only: the library's kernel header has the policy's hooks
 * (gr_exact_policy, kernels/gr_exact.cuh) and nothing else of them.
 */
#include "gr_exact.cuh"

#include "exact_ablate.h"

/* Each flag restores the earlier design of one part (gr_exact_policy's members say which). */
#define GR_XF_EAGER 1     /* eager */
#define GR_XF_OTHERBODY 2 /* other_body */
#define GR_XF_FULLMERGE 4 /* full_merge */
#define GR_XF_LASTCARRY 8 /* last_carry */
#define GR_XF_FENCES 16   /* fences (with GR_XF_TICKET) */
/* Timing only (wrong results): stop the kernel early, to price its stages. */
#define GR_XF_CUT_BODY 64     /* cut_body */
#define GR_XF_CUT_MERGE 128   /* cut_merge */
#define GR_XF_CUT_BLOCK 256   /* cut_block */
#define GR_XF_NOCNT 512       /* no_counts */
#define GR_XF_CUT_TICKET 1024 /* cut_ticket */
#define GR_XF_CNTATOM 2048    /* cnt_atomics */
#define GR_XF_STAMPS 4096     /* stamps: lane 0 of every warp records %globaltimer and clock64 at each stage */
#define GR_XF_TICKET 8192     /* ticket */

/*
 * Stage stamps (GR_XF_STAMPS): for warp w of block b < GR_TEST_STAMP_BLOCKS,
 * gr_x_stamps[(b NW + w) 2 GR_TEST_NSTAMP + s] is the %globaltimer (ns) and
 * [... + GR_TEST_NSTAMP + s] the clock64 at stage s: 0 entry, 1 body done (the
 * last round's), 2 warp merged and counted, 3 round end passed (block
 * barriers, carry), 4 the block's words ready (the tally: summed and carried;
 * the ticket end: its atomics issued), 5 the grid's answer known (the tally's
 * atomics returned; the ticket), 6 result written (warps that completed a word
 * of it; the ticket end: the last block); inside the round end: 7 the merge
 * done (before the counters), 8 the a[2..K) flushes done (before the merge);
 * slots 9 and 10 unused; slot 11 holds the SM id.
 */
__device__ unsigned long long gr_x_stamps[GR_TEST_STAMP_BLOCKS * 16 * GR_TEST_NSTAMP * 2];

/* The policy of flag set F (gr_exact_policy's members, from the flags). */
template <int F>
struct gr_xf_policy {
    enum {
        eager = (F & GR_XF_EAGER) != 0,
        other_body = (F & GR_XF_OTHERBODY) != 0,
        full_merge = (F & GR_XF_FULLMERGE) != 0,
        last_carry = (F & GR_XF_LASTCARRY) != 0,
        ticket = (F & GR_XF_TICKET) != 0,
        fences = (F & GR_XF_FENCES) != 0,
        cnt_atomics = (F & GR_XF_CNTATOM) != 0,
        stamps = (F & GR_XF_STAMPS) != 0,
        cut_body = (F & GR_XF_CUT_BODY) != 0,
        cut_merge = (F & GR_XF_CUT_MERGE) != 0,
        cut_block = (F & GR_XF_CUT_BLOCK) != 0,
        cut_ticket = (F & GR_XF_CUT_TICKET) != 0,
        no_counts = (F & GR_XF_NOCNT) != 0
    };
    static __device__ __forceinline__ void stamp(int s, double dep = 0.0)
    {
        if (!(F & GR_XF_STAMPS) || (threadIdx.x & 31u) || blockIdx.x >= GR_TEST_STAMP_BLOCKS)
            return;
        /* dep: a value the stamp must wait for (the body's stamp takes the expansion's
         * a[0], which depends on every load: without it the stamp records when the
         * last loads were issued, not when their data arrived and was added) */
        unsigned long long g;
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(g) : "d"(dep) : "memory");
        const unsigned long long c = clock64();
        unsigned long long *p =
            gr_x_stamps + (size_t)(blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5)) * 2 * GR_TEST_NSTAMP;
        p[s] = g;
        p[GR_TEST_NSTAMP + s] = c;
        if (s == 0) {
            unsigned int sm;
            asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
            p[11] = sm;
        }
    }
};

/* every flag: the kernel before the 2026-11-30 round (docs/EXACT.md) */
#define GR_XF_END (GR_XF_FULLMERGE | GR_XF_LASTCARRY | GR_XF_TICKET | GR_XF_FENCES | GR_XF_CNTATOM)
#define GR_XF_OLD (GR_XF_EAGER | GR_XF_OTHERBODY | GR_XF_END)

#define GR_ABLATE_CASE(F)                                                                                              \
    case F:                                                                                                            \
        return (const void *)gr_exact_kernel<512, T, GR_C_SUM, 3, gr_xf_policy<F> >;

template <typename T>
static const void *ablate_kernel(int flags)
{
    switch (flags) {
        GR_ABLATE_CASE(GR_XF_EAGER)
        GR_ABLATE_CASE(GR_XF_OTHERBODY)
        GR_ABLATE_CASE(GR_XF_FULLMERGE)
        GR_ABLATE_CASE(GR_XF_LASTCARRY)
        GR_ABLATE_CASE(GR_XF_TICKET)
        GR_ABLATE_CASE(GR_XF_TICKET | GR_XF_FENCES)
        GR_ABLATE_CASE(GR_XF_END)
        GR_ABLATE_CASE(GR_XF_OLD)
        GR_ABLATE_CASE(GR_XF_CUT_BODY)
        GR_ABLATE_CASE(GR_XF_CUT_MERGE)
        GR_ABLATE_CASE(GR_XF_CUT_BLOCK)
        GR_ABLATE_CASE(GR_XF_NOCNT)
        GR_ABLATE_CASE(GR_XF_CUT_TICKET)
        GR_ABLATE_CASE(GR_XF_CNTATOM)
        GR_ABLATE_CASE(GR_XF_STAMPS)
        GR_ABLATE_CASE(GR_XF_STAMPS | GR_XF_TICKET)
        GR_ABLATE_CASE(GR_XF_STAMPS | GR_XF_CUT_BODY)
    default:
        return 0;
    }
}

static const int k_flags[] = {GR_XF_EAGER,     GR_XF_OTHERBODY, GR_XF_FULLMERGE, GR_XF_LASTCARRY,
                              GR_XF_TICKET,    GR_XF_TICKET | GR_XF_FENCES,      GR_XF_CNTATOM,
                              GR_XF_END,       GR_XF_OLD,       GR_XF_CUT_BODY,  GR_XF_CUT_MERGE,
                              GR_XF_CUT_BLOCK, GR_XF_CUT_TICKET, GR_XF_NOCNT,    GR_XF_STAMPS,
                              GR_XF_STAMPS | GR_XF_TICKET,      GR_XF_STAMPS | GR_XF_CUT_BODY};
static const char *const k_names[] = {"eager stages",     "other body",       "full KxK merge",  "carry after last",
                                      "ticket end",       "ticket, fences",   "counter atomics", "end: all five",
                                      "all (the old kernel)", "cut: body only", "cut: +merge",   "cut: +block sum",
                                      "cut: +grid atomics", "cut: no counters", "stage stamps",  "stamps, ticket end",
                                      "stamps, cut: body only"};
static_assert(sizeof(k_flags) / sizeof(k_flags[0]) == sizeof(k_names) / sizeof(k_names[0]), "one name a variant");

extern "C" int gr_test_exact_ablate_count(void) { return (int)(sizeof(k_flags) / sizeof(k_flags[0])); }

/* the cut variants stop early or skip a part: timing only, their results are not the sum */
extern "C" int gr_test_exact_ablate_timing_only(int i)
{
    return i >= 0 && i < gr_test_exact_ablate_count() &&
           (k_flags[i] & (GR_XF_CUT_BODY | GR_XF_CUT_MERGE | GR_XF_CUT_BLOCK | GR_XF_CUT_TICKET | GR_XF_NOCNT)) != 0;
}

extern "C" const char *gr_test_exact_ablate_name(int i) { return k_names[i]; }

static const void *kernel_of(int i, int dtype)
{
    if (i < 0 || i >= gr_test_exact_ablate_count())
        return 0;
    if (dtype == GR_C_F32)
        return ablate_kernel<float>(k_flags[i]);
    if (dtype == GR_C_F64)
        return ablate_kernel<double>(k_flags[i]);
    return 0;
}

extern "C" cudaError_t gr_test_exact_ablate_occupancy(int i, int dtype, int *blocks_per_sm)
{
    const void *k = kernel_of(i, dtype);
    *blocks_per_sm = 0;
    if (!k)
        return cudaErrorInvalidValue;
    return cudaOccupancyMaxActiveBlocksPerMultiprocessor(blocks_per_sm, k, 512, 0);
}

extern "C" cudaError_t gr_test_exact_ablate_launch(int i, const gr_cuda_exact_launch_t *l)
{
    const void *k = kernel_of(i, l->dtype);
    if (!k || l->op != GR_C_SUM || l->block != 512 || l->grid < 1 || l->grid > GR_EXACT_GRID_MAX)
        return cudaErrorInvalidValue;
    return gr_cuda_exact_launch_instance(k, l);
}

/* which: 0 the production kernel with stamps, 1 the same with the ticket end
 * (GR_XF_TICKET), 2 stopped after the body (timing only) */
extern "C" int gr_test_exact_stamps_variant(int which)
{
    const int want = GR_XF_STAMPS | (which == 1 ? GR_XF_TICKET : which == 2 ? GR_XF_CUT_BODY : 0);
    for (int i = 0; i < gr_test_exact_ablate_count(); ++i)
        if (k_flags[i] == want)
            return i;
    return -1;
}

extern "C" size_t gr_test_exact_stamps_count(void) { return sizeof(gr_x_stamps) / sizeof(gr_x_stamps[0]); }

extern "C" cudaError_t gr_test_exact_stamps_clear(cudaStream_t s)
{
    void *p = 0;
    cudaError_t e = cudaGetSymbolAddress(&p, gr_x_stamps);
    if (e != cudaSuccess)
        return e;
    return cudaMemsetAsync(p, 0, sizeof(gr_x_stamps), s);
}

extern "C" cudaError_t gr_test_exact_stamps_read(unsigned long long *h, cudaStream_t s)
{
    cudaError_t e = cudaMemcpyFromSymbolAsync(h, gr_x_stamps, sizeof(gr_x_stamps), 0, cudaMemcpyDeviceToHost, s);
    if (e != cudaSuccess)
        return e;
    return cudaStreamSynchronize(s);
}
