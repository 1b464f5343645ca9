/*
 * gr_tuning_sm90.h - the policy for sm_90 (H100, H200). Every entry was
 * measured on one NVIDIA H200 (132 SMs, driver 580.159.04, CUDA 13.0); the
 * comment beside it names the run, the figures and the log (docs/perf/, or
 * the notebook in git: `git show ff851c6:docs/PERFORMANCE.md` / EXACT.md).
 * gr_tuning.h says what each field means. To re-tune: run the command named,
 * change the entry, and put the new figures beside it.
 */
#ifndef GR_TUNING_SM90_H
#define GR_TUNING_SM90_H

/* ---- device entries (compile time) ---------------------------------------- */

/* fast: 16-byte loads in flight per thread (gr_thread.cuh). 8 (round 2, C1):
 * f32/f64 2^30 at 0.998-0.9996x CUB, 94.0-94.05% of peak (was 93.7% with 4);
 * 4 again (round 7b): f32 2^24 2.7% faster, but f64 2^20 4% and every 2^30 row
 * 0.2-0.4% slower (perf/h200-ab-u4.txt). */
#define GR_SM90_FAST_LOADS 8

/* exact: 16-byte vectors per batch of the body (gr_exact.cuh). 4 keeps the
 * kernel within 64 registers; 8 loads took ~120 registers (one block of 512 an
 * SM, f32 2^30 0.91 of fast mode against 0.98) and, in the f32 body, made f32
 * 2^24 1.16x and 2^30 1.15x slower (a233906, perf/h200-exact-ablate-loads8.txt). */
#define GR_SM90_EXACT_BATCH 4

/* exact: 1024 resident threads an SM (__launch_bounds__(BLOCK, 1024 / BLOCK),
 * 64 registers, no spills for the sums). 1536 (3 blocks of 512, 40 registers,
 * ~110 bytes of spills): f32 2^24 1.31x and 2^30 1.61x slower (a233906,
 * perf/h200-exact-ablate-loads8.txt); 2048 does not fit (~62 registers). */
#define GR_SM90_EXACT_MINB(BLOCK) (1024 / (BLOCK))

/* stats: blocks of 256 held to 768 resident threads (85 registers, none
 * spilled), 128 and 512 to 1024 (64 registers, a few spilled): the sweep of
 * perf/h200-stats-blocks.txt (commit 2805679) under these bounds. */
#define GR_SM90_STATS_MINB(BLOCK) ((BLOCK) == 256 ? 3 : 1024 / (BLOCK))

/* ---- host entries (run time) ----------------------------------------------- */

GR_TUNING_FN gr_tuning_t gr_tuning_sm90(int family, int dtype)
{
    gr_tuning_t t = {0, 0, 0, 0};
    switch (family) {
    case GR_KF_FAST:
        /* Every dtype (the backend sizes one scratch and one occupancy table
         * from one block, so the family has one block size):
         * block 256: 2^30 through the backend, median of 20, f32 957.5 us (256)
         *   against 976.0 (512), i32 968.7 against 963.8 (within the spread)
         *   (round 2, perf/h200-checks-round2.txt);
         * vecs_per_thread 8: the small-n grid (round 2, A1): 2^20 f32 128 blocks,
         *   was 1024; 0.5-1 us faster at 2^20 (perf/h200-bench-all-round2.csv);
         * threads_per_sm 0: every resident block (occupancy; 5 blocks of 256 at
         *   48 registers): 2^30 at 94.05% of peak, 0.9996x CUB (round 2). */
        t.block = 256;
        t.vecs_per_thread = 8;
        t.threads_per_sm = 0;
        break;
    case GR_KF_EXACT:
        /* f32, f64, f16, bf16 (the halves take the f32 path: its entry).
         * terms 3: 2 terms are 1-4% faster on narrow data but flush a third of
         *   all stress elements (280 million at 2^30, against 13 thousand);
         * block 512, threads_per_sm 1024 (2 blocks an SM): against t3 b256 x4,
         *   f64 uniform 2^24 2994 GB/s vs 2923 (f32 2341 vs 2305); 512 threads
         *   an SM 5-15% slower at every size (f574a17, `test_exact_gpu --bench`,
         *   the notebook's first table); 1024-thread blocks would cap
         *   registers at 64 and spill;
         * vecs_per_thread 4: the small-n grid leaves each thread one batch
         *   (GR_SM90_EXACT_BATCH); fewer blocks would not be faster. */
        t.block = 512;
        t.vecs_per_thread = 4;
        t.threads_per_sm = 1024;
        t.terms = 3;
        break;
    case GR_KF_STATS:
        /* block: GR_BENCH_STATS_BLOCK=128|256|512 at 2^30 (commit 2805679,
         * perf/h200-stats-blocks.txt): f32 3812 / 3874 / 3781 GB/s -> 256;
         * f64 4056 / 3919 / 4101 GB/s -> 512; i32, i64 take f32's;
         * threads_per_sm 1024, vecs_per_thread 4: the exact kernel's (the
         *   float sum is its thread, warp and block layers). */
        t.block = dtype == GR_C_F64 ? 512 : 256;
        t.vecs_per_thread = 4;
        t.threads_per_sm = 1024;
        break;
    default:
        break;
    }
    return t;
}

#endif /* GR_TUNING_SM90_H */
