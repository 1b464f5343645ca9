/*
 * gr_exact_bound.h - the bound that lets the exact kernel skip the carry
 * step after its last round (kernels/gr_exact.cuh; the proof is in
 * docs/EXACT.md, "Capacity", item 4). Plain C in a header of its own, so the
 * host's unit tests check its arithmetic (tests/unit/test_exact_bound.c).
 */
#ifndef GR_EXACT_BOUND_H
#define GR_EXACT_BOUND_H

#include <stdint.h>

#if defined(__CUDACC__)
#define GR_EXACT_BOUND_FN static inline __host__ __device__
#else
#define GR_EXACT_BOUND_FN static inline
#endif

/* Flushes one end-of-round warp merge adds to a limb of its warp, rounded up:
 * per lane at most (K - 2) + 2 x 5 + 2 for the two-term merge and 5 K^2 + K
 * <= 48 for the full K-term one (K <= 3), times 32 lanes. */
#define GR_EXACT_MERGE_FLUSHES 2048u

/* Largest arguments the bound is stated for (the kernel's own limits: 2^16
 * vectors per round, 8 elements per vector, 2^20 blocks; the rest is margin). */
#define GR_EXACT_BOUND_MAX_VECS ((uint64_t)1 << 23)
#define GR_EXACT_BOUND_MAX_PER_VEC 8u
#define GR_EXACT_BOUND_MAX_BLOCKS ((uint64_t)1 << 20)

/*
 * 1 when the carry step after the last round may be skipped. That round gives
 * a thread at most `vecs` vectors of `per_vec` elements, so a warp's limb takes
 * at most A = 32 vecs per_vec + 2 per_vec (head and tail) + GR_EXACT_MERGE_FLUSHES
 * additions below 2^32 on top of a normalised value (|limb| < 2^33):
 * |limb| < 2^32 (A + 2). A block sums at most 16 warps and the grid `blocks`
 * blocks, so the result's limbs stay below 2^59 (the bound gr_exact_result_t
 * promises) when blocks (A + 2) < 2^23. 0 outside the stated ranges.
 */
GR_EXACT_BOUND_FN int gr_exact_last_carry_free(uint64_t vecs, uint64_t per_vec, uint64_t blocks)
{
    if (vecs > GR_EXACT_BOUND_MAX_VECS || per_vec > GR_EXACT_BOUND_MAX_PER_VEC || blocks > GR_EXACT_BOUND_MAX_BLOCKS)
        return 0;
    const uint64_t A = 32u * vecs * per_vec + 2u * per_vec + GR_EXACT_MERGE_FLUSHES;
    return blocks * (A + 2u) < ((uint64_t)1 << 23);
}

/*
 * The same bound as a limit on the vectors: the largest v for which
 * gr_exact_last_carry_free(v, per_vec, blocks) holds (it holds for every
 * smaller v too), or -1 when it holds for none. The kernel computes it once at
 * entry and compares, so no division lies between its last body and its merge.
 * 32-bit divisions: blocks <= 2^20 and per_vec <= 8 in the stated ranges.
 */
GR_EXACT_BOUND_FN int64_t gr_exact_last_carry_max_vecs(uint64_t per_vec, uint64_t blocks)
{
    if (per_vec > GR_EXACT_BOUND_MAX_PER_VEC || blocks > GR_EXACT_BOUND_MAX_BLOCKS)
        return -1;
    /* blocks (A + 2) < 2^23 with A + 2 = 32 v per_vec + fixed */
    const uint32_t room = blocks ? (((uint32_t)1 << 23) - 1u) / (uint32_t)blocks : UINT32_MAX;
    const uint32_t fixed = 2u * (uint32_t)per_vec + GR_EXACT_MERGE_FLUSHES + 2u;
    if (room < fixed)
        return -1;
    const uint64_t v = per_vec ? (room - fixed) / (32u * (uint32_t)per_vec) : GR_EXACT_BOUND_MAX_VECS;
    return (int64_t)(v < GR_EXACT_BOUND_MAX_VECS ? v : GR_EXACT_BOUND_MAX_VECS);
}

#endif /* GR_EXACT_BOUND_H */
