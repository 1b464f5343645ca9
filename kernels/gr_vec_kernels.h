/*
 * gr_vec_kernels.h - extern "C" launchers of the vector-op kernels (dot.cu,
 * argext.cu): dot and sum of squares (fast and exact), argmin/argmax. Plain
 * C, included by the cuda backend (src/backend/cuda/backend_cuda_vec.c).
 *
 * Every launcher writes one record per block to rec (device memory, grid
 * records) on stream; the host copies them back and folds them in any order:
 * exact limbs and argext states are order-free, fast block sums enter the
 * exact accumulator one by one (so a fixed grid gives fixed bits). The batch
 * launchers run many jobs in one launch with each job's own grid, so each
 * job's records are those of its single launch.
 */
#ifndef GR_VEC_KERNELS_H
#define GR_VEC_KERNELS_H

#include <cuda_runtime.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Wide accumulator geometry, equal to gr_wacc_t's (static-asserted on the host). */
#define GR_VEC_WLIMBS 144
#define GR_VEC_WBIAS 2240
/* Threads per block of every vector kernel. */
#define GR_VEC_BLOCK 256
/* At most this many elements per block per launch keep an exact block's int64 limbs
 * from overflowing (each element adds < 2^33 to a limb). */
#define GR_VEC_EXACT_PER_BLOCK ((uint64_t)1 << 29)

/* Fast dot / sum of squares: s[0] the plain sum, s[1] the sum of (x 2^-538)^2 for |x| > 2^486, s[2]
 * the sum of (x 2^537)^2 for |x| < 2^-511 (f64 nrm2 only: Blue's scaling); each a block's fixed tree. */
typedef struct gr_vec_fast_rec {
    double s[3];
} gr_vec_fast_rec_t;

/* Exact dot / sum of squares: a block's wide-accumulator limbs (unnormalised int64 sums) and counts. */
typedef struct gr_vec_exact_rec {
    int64_t limb[GR_VEC_WLIMBS];
    uint64_t nan, pinf, ninf, nonnegzero;
} gr_vec_exact_rec_t;

/* argmin/argmax: the order-free state of gr_argext_t (src/core/gr_vec.h), field for field. */
typedef struct gr_vec_arg_rec {
    double fmin, fmax;
    int64_t fmin_i, fmax_i;
    int64_t imin, imax;
    int64_t imin_i, imax_i;
    int64_t nan_i;
} gr_vec_arg_rec_t;

/* One folded record, of any kind (out[slot] of a batch: the largest kind's size), and its done word: the
 * job's last block sets done to 1 after the record is visible to the host (gr_vec_fold_done: a
 * system-scope fence first), so a host that zeroed done before the launch may poll it in mapped memory
 * instead of waiting for an event (backend_cuda_vec.c). */
typedef struct gr_vec_out {
    union {
        gr_vec_fast_rec_t fast;
        gr_vec_exact_rec_t exact;
        gr_vec_arg_rec_t arg;
    };
    unsigned int done;
    unsigned int reserved;
} gr_vec_out_t;

/* A job's fold scratch, device memory: all zero before a launch, and left all zero by it (the job's
 * last block resets it after writing out). Zero it once when it is allocated. */
typedef struct gr_vec_fold {
    gr_vec_exact_rec_t acc; /* exact: every block's carried limbs and counts, added with 64-bit atomics */
    unsigned int ticket;    /* blocks of the job that have finished */
    unsigned int reserved;
} gr_vec_fold_t;

/* argext: which sides a job computes (the record's other side stays the empty state). */
#define GR_VEC_ARG_MIN 1
#define GR_VEC_ARG_MAX 2

/*
 * A dot PAIR job: two dot products of one dtype and count that share an array, x.y and x.y2 (y == x
 * allowed: x.x), read in one pass (gr_vec_loop_ny): each product meets its elements in the slots and
 * order of its own single launch with the same grid, so each out record has the bits of its own job's.
 * Floating dtypes only, and only when x, y and y2 lie at the same offset from 16 bytes (else a single
 * job could take the vector path where the pair would not). Batch launches only.
 *
 * One job of a batch launch (gr_cuda_launch_dot_batch, gr_cuda_launch_argext_batch): the arguments of
 * its single launch, and its first block in the batch's grid. Jobs are in launch order: job j's blocks are
 * [first_block, first_block + grid), first_block of job 0 is 0, and they follow one another without gaps.
 */
#define GR_VEC_JOBS_MAX 64
typedef struct gr_vec_job {
    const void *x, *y;        /* dot: y NULL for the sum of squares of x; argext: y unused */
    uint64_t n;
    union {
        int64_t base;         /* argext: global index of x[0] */
        const void *y2;       /* dot pair: the second product's other array (x.y and x.y2) */
    };
    void *rec;                /* grid records of the job's kind (fast, argext; exact jobs: unused);
                               * a fast pair: 2 grid, the second product's after the first's */
    int dtype;                /* GR_C_* */
    int grid;                 /* the job's own grid, as its single launch would have */
    unsigned int first_block;
    unsigned short slot;      /* its fold scratch and out record: fold[slot], out[slot] of the batch */
    union {
        unsigned short which; /* argext: GR_VEC_ARG_MIN | GR_VEC_ARG_MAX */
        unsigned short pair;  /* dot: 0, or a pair job: 1 + the second product's slot */
    };
} gr_vec_job_t;
/* An ordered result the kernel writes itself (gr_call_t.ordered; one rank, fast floating dot: the value is
 * the folded record's s[0], gr_vpartial_finish's result for one term): gpureduce.h's gr_value_t, field for
 * field (static-asserted in backend_cuda_vec.c), its padding named so that it is written as zero, as the
 * host's memset leaves it. */
typedef struct gr_vec_value {
    int valid, is_integer, overflow, pad0;
    double f;
    int64_t i;
    uint64_t count, nan_count;
    int dtype, pad1;
    int64_t index;
} gr_vec_value_t;

/* Passed by value as the kernel's parameter (3.6 KB: within the 4 KB every CUDA version takes), declared
 * __grid_constant__ so that its address (a job's) is taken without a per-thread copy. */
typedef struct gr_vec_jobs {
    int njobs;
    int reserved;
    gr_vec_fold_t *fold; /* GR_VEC_JOBS_MAX fold scratches (job j uses fold[job[j].slot]) */
    gr_vec_out_t *out;   /* GR_VEC_JOBS_MAX out records (job j writes out[job[j].slot]) */
    gr_vec_value_t *result; /* fast dot jobs: result[slot] too (device memory), the value of a rank's combine
                             * when it is the only rank; NULL: none */
    gr_vec_job_t job[GR_VEC_JOBS_MAX];
} gr_vec_jobs_t;
#ifdef __cplusplus
static_assert(sizeof(gr_vec_jobs_t) <= 4096, "a batch's parameter must fit the 4 KB kernel parameter space");
#else
_Static_assert(sizeof(gr_vec_jobs_t) <= 4096, "a batch's parameter must fit the 4 KB kernel parameter space");
#endif

/* What a launch's grid is for (gr_vec_grid). */
enum { GR_VEC_GRID_DOT = 0, GR_VEC_GRID_EXACT = 1, GR_VEC_GRID_ARG = 2 };

/*
 * Blocks of one item's launch of n elements of esize bytes (v = n esize / 16 vectors); 1 .. 2^20.
 * grid_override > 0: that many. Else 4 per SM, except at small n:
 *   dot, fast and exact (GR_VEC_GRID_DOT, _EXACT): 2 per SM when 4 would give a thread fewer than one
 *     round of gr_vec_loop (GR_VEC_LOOP_U = 4 vectors), v < 4 SMs 256 4: at 2^20 f32 or f64 two items'
 *     grids then fit one wave, so a batch of two runs as one (PERFORMANCE.md, "small sizes");
 *   argmin/argmax (GR_VEC_GRID_ARG): at most one block per 8 vectors a thread (the tuned sum kernel's
 *     small-n rule; an argext state does not depend on the grid).
 * Never more blocks than 256-element pieces, and enough that no exact block takes more than
 * GR_VEC_EXACT_PER_BLOCK elements. The batch launches give each item this grid too, so its records are
 * those of its own launch (fast dot's bits depend on the grid; exact and argext states do not).
 */
static inline int gr_vec_grid(int sm_count, int grid_override, uint64_t n, unsigned esize, int what)
{
    uint64_t g = (uint64_t)sm_count * 4u;
    const uint64_t v = (n * esize + 15u) / 16u;
    if (grid_override > 0) {
        g = (uint64_t)grid_override;
    } else if (what == GR_VEC_GRID_ARG) {
        const uint64_t cap = (v + (uint64_t)GR_VEC_BLOCK * 8u - 1u) / ((uint64_t)GR_VEC_BLOCK * 8u);
        if (g > cap)
            g = cap;
    } else if (v < g * GR_VEC_BLOCK * 4u) {
        g = (uint64_t)sm_count * 2u;
    }
    uint64_t need = (n + GR_VEC_BLOCK - 1) / GR_VEC_BLOCK;
    if (g > need)
        g = need;
    if (what == GR_VEC_GRID_EXACT) {
        uint64_t min = (n + GR_VEC_EXACT_PER_BLOCK - 1) / GR_VEC_EXACT_PER_BLOCK;
        if (g < min)
            g = min;
    }
    if (g < 1)
        g = 1;
    if (g > (uint64_t)1 << 20)
        g = (uint64_t)1 << 20;
    return (int)g;
}

#ifdef __CUDACC__
/* The job of block b of a batch launch; *blk: b's block in that job's own grid. */
static __device__ __forceinline__ const gr_vec_job_t *gr_vec_find_job(const gr_vec_jobs_t *jobs, unsigned b,
                                                                      unsigned *blk)
{
    int j = 0;
    while (j + 1 < jobs->njobs && b >= jobs->job[j + 1].first_block)
        ++j;
    *blk = b - jobs->job[j].first_block;
    return &jobs->job[j];
}
#endif

/*
 * dot(x, y) (y == NULL: sum of squares of x) of n elements of dtype (GR_C_*) into *out.
 * exact != 0: an exact record (integers always take this path), else a fast record. grid blocks of
 * GR_VEC_BLOCK threads; exact needs n <= grid * GR_VEC_EXACT_PER_BLOCK. rec: grid fast records
 * (exact: unused, may be NULL); fold: the job's zeroed scratch (left zero).
 */
cudaError_t gr_cuda_launch_dot(const void *x, const void *y, uint64_t n, int dtype, int exact, int grid, void *rec,
                               gr_vec_fold_t *fold, gr_vec_out_t *out, cudaStream_t stream);

/* The argmin and/or argmax state (which: GR_VEC_ARG_MIN | GR_VEC_ARG_MAX) of n elements of dtype, global
 * indices base + i, into *out. rec: grid records; fold: the job's zeroed scratch (left zero). */
cudaError_t gr_cuda_launch_argext(const void *x, uint64_t n, int dtype, int64_t base, int which, int grid,
                                  gr_vec_arg_rec_t *rec, gr_vec_fold_t *fold, gr_vec_out_t *out,
                                  cudaStream_t stream);

/* Every job of a batch in one launch (exact: exact records, and every integer job; else fast records):
 * each job's out record has the bits of its own gr_cuda_launch_dot with the same arguments and grid.
 * The jobs are all single or all pairs (cudaErrorInvalidValue otherwise): one launch each. pdl: launched
 * with programmatic stream serialization (gr_vec_fold.cuh: gr_pdl_wait before any read, so the same
 * bits), which lets its blocks start as the stream's previous kernel ends. */
cudaError_t gr_cuda_launch_dot_batch(const gr_vec_jobs_t *jobs, int exact, int pdl, cudaStream_t stream);
/* The same for argmin/argmax jobs (gr_cuda_launch_argext). */
cudaError_t gr_cuda_launch_argext_batch(const gr_vec_jobs_t *jobs, cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#endif /* GR_VEC_KERNELS_H */
