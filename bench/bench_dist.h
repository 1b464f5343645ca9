/*
 * bench_dist.h - the distributed rows of `gpureduce bench` (bench_dist.c):
 * end to end over every rank of MPI_COMM_WORLD, the global sum in rank 0's
 * host memory, on the same data as the group's other rows.
 *
 *   gr        gpureduce's pipeline: gr_reduce_device (cuda) or gr_reduce_host
 *             (cpu) on the rank's shard, result at root 0
 *   cub+mpi   cub::DeviceReduce::Sum + cudaMemcpy of the sum + MPI_Reduce (cuda)
 *   cub+nccl  cub::DeviceReduce::Sum + ncclReduce to root 0 + the root's copy to
 *             host memory + stream sync (cuda, built only with NCCL)
 *
 * Method: host clock (gr_now), MPI_Barrier before each run; a run's time is
 * the slowest rank's (MAX over ranks of each run); the median over runs is
 * reported, beside MIN, average and MAX over ranks of each rank's own median
 * (nccl-tests' -a modes: three reductions of one figure per rank, O(rows)
 * per rank, never O(np)). Exact gates first: all ones and iota over global
 * indices (rank r holds [r n, (r+1) n)), the global sum checked on rank 0.
 *
 * The bench harness (bench.c) lists the rows in its variant table (role
 * ROW_DIST, arg = bench_dist_kind_t) and calls the hooks below.
 */
#ifndef GR_BENCH_DIST_H
#define GR_BENCH_DIST_H

#include "bench.h"

typedef enum bench_dist_kind {
    BENCH_DIST_GR = 0,
    BENCH_DIST_CUB_MPI = 1,
    BENCH_DIST_CUB_NCCL = 2,
    BENCH_DIST_KINDS = 3
} bench_dist_kind_t;

/* Timed runs of a distributed row unless --iters is given. */
#define BENCH_DIST_ITERS_DEFAULT 50

/* The CSV columns the distributed rows add after `note` (other rows leave them empty). */
#define BENCH_DIST_CSV_COLUMNS ",np,rank_min_us,rank_avg_us,rank_max_us,x_mpi,x_nccl"
#define BENCH_DIST_CSV_EMPTY ",,,,,,"

typedef struct bench_dist bench_dist_t;

typedef struct bench_dist_config {
    gr_ctx_t ctx;         /* the bench's context on MPI_COMM_WORLD */
    gr_backend_t backend; /* cuda or cpu */
    int iters, warmup, check;
    int want[BENCH_DIST_KINDS];          /* rows selected */
    const char *name[BENCH_DIST_KINDS];  /* from the variant table */
    const char *note[BENCH_DIST_KINDS];
    cli_format_t format;
    int full;             /* --full: min, max, p99 of the per-run maxima too */
    FILE *out;            /* rank 0 prints here */
    double peak_gbps;     /* one GPU's theoretical rate, 0 when unknown */
    int *rows_printed;    /* the harness's row counter (JSON commas) */
    long long *wrong_rows;/* the harness's count of rows that failed their gates */
} bench_dist_config_t;

/* From the harness: the exact sum of gate (ones, iota = i mod 1000, mod 256 for bf16) over global
 * indices [0, n) of dtype t (bench.c). */
uint64_t bench_gate_sum(gr_gen_t gate, gr_dtype_t t, uint64_t n);
#ifdef GR_WITH_CUDA
/* Input buffer k of the group's rotation set (device memory; bench_cuda.c). */
void *bench_cuda_input(bench_cuda_t *c, int k);
#endif

/* 1 when the cub+nccl row is built in (NCCL found by CMake). */
int bench_dist_have_nccl(void);

/* Set up the selected rows; with cub+nccl, the NCCL communicator (unique id
 * broadcast over MPI; NCCL_NVLS_ENABLE=0 set first when unset). Collective. */
gr_result_t bench_dist_open(const bench_dist_config_t *cfg, bench_dist_t **out);
void bench_dist_close(bench_dist_t *d);

/* Rank 0: the method lines of the header (table, CSV) or a "dist" key (JSON). */
void bench_dist_header(const bench_dist_t *d);

/*
 * Check, then time, the selected rows on one group's data: cpu, `host` (the
 * rank's n elements); cuda, the rotation set of `cuda`. The group's timed
 * data is left as it was found. Rank 0 prints the rows. Collective; a failed
 * run ends the job (MPI_Abort) with a message.
 */
void bench_dist_group(bench_dist_t *d, const bench_group_t *g, void *host, bench_cuda_t *cuda);

/* Rank 0, table and CSV: gr's ratios over the baselines, lowest and highest, after the sweep. */
void bench_dist_summary(const bench_dist_t *d);

#endif /* GR_BENCH_DIST_H */
