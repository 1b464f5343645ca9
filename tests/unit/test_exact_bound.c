/*
 * test_exact_bound.c - the bound under which the exact kernel skips the carry
 * step after its last round (kernels/gr_exact_bound.h): wherever it says
 * "free", the worst case it stands for, recomputed here in 128-bit integers
 * from the limb model of docs/EXACT.md, must stay below 2^59; it must be
 * monotone (fewer vectors, elements or blocks stay free); and the launches the
 * kernel makes at the sizes the docs name must land on the side they say.
 */
#include "gr_exact_bound.h"
#include "test.h"

#include <stdio.h>

typedef unsigned __int128 u128;

/* The worst |limb| of the grid's result after a last round without the carry
 * step: a warp's limb is a normalised value (< 2^33) plus A additions below
 * 2^32; a block sums 16 warps, the grid `blocks` blocks. */
static u128 worst_limb(uint64_t vecs, uint64_t per_vec, uint64_t blocks)
{
    const u128 A = (u128)32 * vecs * per_vec + (u128)2 * per_vec + GR_EXACT_MERGE_FLUSHES;
    const u128 warp = ((u128)1 << 33) + A * ((u128)1 << 32);
    return (u128)blocks * 16u * warp;
}

static unsigned long long g_checks;

/* the kernel's form of the bound (a limit computed once) says the same */
static void check_max(uint64_t vecs, uint64_t per_vec, uint64_t blocks)
{
    const int64_t m = gr_exact_last_carry_max_vecs(per_vec, blocks);
    const int by_max = m >= 0 && vecs <= (uint64_t)m;
    if (by_max != gr_exact_last_carry_free(vecs, per_vec, blocks))
        GR_TEST_FAIL_("vecs %llu per_vec %llu blocks %llu: carry_free %d but max_vecs %lld",
                      (unsigned long long)vecs, (unsigned long long)per_vec, (unsigned long long)blocks,
                      gr_exact_last_carry_free(vecs, per_vec, blocks), (long long)m);
    if (m >= 0 && !gr_exact_last_carry_free((uint64_t)m, per_vec, blocks))
        GR_TEST_FAIL_("max_vecs %lld itself not free at per_vec %llu blocks %llu", (long long)m,
                      (unsigned long long)per_vec, (unsigned long long)blocks);
}

static void check_point(uint64_t vecs, uint64_t per_vec, uint64_t blocks)
{
    check_max(vecs, per_vec, blocks);
    if (!gr_exact_last_carry_free(vecs, per_vec, blocks))
        return;
    ++g_checks;
    if (worst_limb(vecs, per_vec, blocks) >= ((u128)1 << 59))
        GR_TEST_FAIL_("vecs %llu per_vec %llu blocks %llu: said free, but a limb may reach 2^59",
                      (unsigned long long)vecs, (unsigned long long)per_vec, (unsigned long long)blocks);
    if (vecs > 0 && !gr_exact_last_carry_free(vecs - 1, per_vec, blocks))
        GR_TEST_FAIL_("not monotone in vecs at %llu/%llu/%llu", (unsigned long long)vecs,
                      (unsigned long long)per_vec, (unsigned long long)blocks);
    if (blocks > 1 && !gr_exact_last_carry_free(vecs, per_vec, blocks - 1))
        GR_TEST_FAIL_("not monotone in blocks at %llu/%llu/%llu", (unsigned long long)vecs,
                      (unsigned long long)per_vec, (unsigned long long)blocks);
    if (per_vec > 1 && !gr_exact_last_carry_free(vecs, per_vec / 2, blocks))
        GR_TEST_FAIL_("not monotone in per_vec at %llu/%llu/%llu", (unsigned long long)vecs,
                      (unsigned long long)per_vec, (unsigned long long)blocks);
}

/* vectors per thread of one round, as the kernel computes it */
static uint64_t round_vecs(uint64_t n, uint64_t per_vec, uint64_t blocks, uint64_t block)
{
    const uint64_t nvec = n / per_vec, nthreads = blocks * block;
    uint64_t v = (nvec + nthreads - 1) / nthreads;
    return v > (1u << 16) ? (1u << 16) : v;
}

int main(void)
{
    /* the sweep: every block count up to 4096 and powers of two beyond, vectors
     * geometric with neighbours, each element size */
    const uint64_t per_vecs[] = {2, 4, 8};
    for (int p = 0; p < 3; ++p) {
        for (uint64_t b = 1; b <= GR_EXACT_BOUND_MAX_BLOCKS + 1; b = b < 4096 ? b + 1 : b * 2) {
            for (uint64_t v = 1; v <= ((uint64_t)1 << 24); v *= 2) {
                check_point(v - 1, per_vecs[p], b);
                check_point(v, per_vecs[p], b);
                check_point(v + 1, per_vecs[p], b);
                check_point(v + v / 2, per_vecs[p], b);
            }
        }
    }
    ASSERT(g_checks > 1000);

    /* out of the stated ranges: never free */
    ASSERT(!gr_exact_last_carry_free(GR_EXACT_BOUND_MAX_VECS + 1, 2, 1));
    ASSERT(!gr_exact_last_carry_free(0, GR_EXACT_BOUND_MAX_PER_VEC + 1, 1));
    ASSERT(!gr_exact_last_carry_free(0, 2, GR_EXACT_BOUND_MAX_BLOCKS + 1));
    ASSERT(gr_exact_last_carry_max_vecs(GR_EXACT_BOUND_MAX_PER_VEC + 1, 1) == -1);
    ASSERT(gr_exact_last_carry_max_vecs(2, GR_EXACT_BOUND_MAX_BLOCKS + 1) == -1);
    /* the limit against the predicate at every element width, a few grids, and
     * the vectors around the limit itself */
    for (uint64_t pv = 0; pv <= GR_EXACT_BOUND_MAX_PER_VEC + 1; ++pv) {
        const uint64_t grids[] = {0, 1, 2, 7, 132, 264, 1000, 4095, 4096, 16384, GR_EXACT_BOUND_MAX_BLOCKS};
        for (int gi = 0; gi < (int)(sizeof(grids) / sizeof(grids[0])); ++gi) {
            const int64_t m = gr_exact_last_carry_max_vecs(pv, grids[gi]);
            for (int64_t d = -2; d <= 2; ++d)
                if (m + d >= 0)
                    check_max((uint64_t)(m + d), pv, grids[gi]);
            check_max(0, pv, grids[gi]);
            check_max(GR_EXACT_BOUND_MAX_VECS, pv, grids[gi]);
            check_max(GR_EXACT_BOUND_MAX_VECS + 1, pv, grids[gi]);
        }
    }
    /* 2^24 f32 on the H200's grid: the limit is what the kernel compares with */
    ASSERT(gr_exact_last_carry_max_vecs(4, 264) >= 32);

    /* the launches docs/EXACT.md names (132 SMs x 2 blocks of 512): 2^24 f32 is
     * one round without the carry step; 2^30 f32 and f64 take it; so does the
     * widest grid even with one vector a thread */
    ASSERT(gr_exact_last_carry_free(round_vecs((uint64_t)1 << 24, 4, 264, 512), 4, 264));
    ASSERT(gr_exact_last_carry_free(round_vecs((uint64_t)1 << 24, 2, 264, 512), 2, 264));
    ASSERT(!gr_exact_last_carry_free(round_vecs((uint64_t)1 << 30, 4, 264, 512), 4, 264));
    ASSERT(!gr_exact_last_carry_free(round_vecs((uint64_t)1 << 30, 2, 264, 512), 2, 264));
    ASSERT(!gr_exact_last_carry_free(1, 4, GR_EXACT_BOUND_MAX_BLOCKS));
    /* on that grid the step is skipped up to 2^26 elements (f32 and f64), not at 2^27 */
    ASSERT(gr_exact_last_carry_free(round_vecs((uint64_t)1 << 26, 4, 264, 512), 4, 264));
    ASSERT(gr_exact_last_carry_free(round_vecs((uint64_t)1 << 26, 2, 264, 512), 2, 264));
    ASSERT(!gr_exact_last_carry_free(round_vecs((uint64_t)1 << 27, 4, 264, 512), 4, 264));
    ASSERT(!gr_exact_last_carry_free(round_vecs((uint64_t)1 << 27, 2, 264, 512), 2, 264));
    /* EXACT.md's figure for 2^24 f32: blocks x (A + 2) = 1.6 x 10^6 */
    {
        const uint64_t v = round_vecs((uint64_t)1 << 24, 4, 264, 512);
        const uint64_t a2 = 32u * v * 4u + 8u + GR_EXACT_MERGE_FLUSHES + 2u;
        ASSERT(v == 32u);
        ASSERT(264u * a2 > 1500000u && 264u * a2 < 1700000u);
    }
    printf("%llu free points checked against the 2^59 bound\n", g_checks);
    return 0;
}
