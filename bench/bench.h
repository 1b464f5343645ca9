/*
 * bench.h - `gpureduce bench`: the harness (bench.c) and its cuda rows
 * (bench_cuda.c, built only with CUDA). One harness, one table of rows
 * {name, note, run, bytes}, in the manner of nccl-tests.
 *
 * A row's run function does one reduction of the group's data (buffer `buf`
 * of the rotation set). With res == NULL it is a timed run: it only enqueues
 * (GPU-timed rows) or does the whole job (host-timed rows). With res != NULL
 * it is a checked run: it finishes, and reports what it computed in *res.
 */
#ifndef GR_BENCH_H
#define GR_BENCH_H

#include "cli.h"

#include <stdint.h>

/* At most this many input buffers rotate, so small sizes are read from HBM
 * rather than from L2 (rotation needs a set of 2 x L2; below that, label L2). */
#define BENCH_MAX_BUFS 64
/* Timed runs queued behind one hold kernel (see gr_bench_launch_hold). */
#define BENCH_BATCH 32

/* One (size, dtype) of the sweep and its rotation set. */
typedef struct bench_group {
    uint64_t n;        /* elements per rank */
    gr_dtype_t dtype;
    uint64_t bytes;    /* n x element size: what every row reads */
    int nbuf;          /* input buffers in rotation */
    int in_l2;         /* the rotation set is smaller than 2 x L2 (--cache hot: the buffer fits in L2) */
} bench_group_t;

typedef enum bench_res_kind { BENCH_RES_VALUE = 0, BENCH_RES_MISMATCH = 1 } bench_res_kind_t;

/* What a checked run produced. */
typedef struct bench_result {
    bench_res_kind_t kind;
    int is_int;          /* value in .i, else in .f */
    int64_t i;
    double f;
    uint64_t mismatches; /* BENCH_RES_MISMATCH: words that differ from the input */
    uint64_t ranks;      /* the value sums this many ranks' data (0 = 1) */
    int f32_out;         /* .f is a float result: the gate is the exact sum rounded to f32, +-1 ulp */
} bench_result_t;

/*
 * run(env, arg, buf, res, self_s): 0 on success, else a gr_result_t (the
 * cause already logged). self_s (host-timed rows only, else NULL): a row
 * that measures itself stores its seconds there; otherwise it stays < 0.
 */
typedef int (*bench_run_fn)(void *env, int arg, int buf, bench_result_t *res, double *self_s);

/* A table cell: x in fmt when ok and finite, else "-". A json number, else null. */
void bench_fmt_num(char *buf, size_t len, int ok, const char *fmt, double x);
void bench_json_num(FILE *f, int ok, double x);

typedef enum bench_timer { BENCH_TIME_GPU = 0, BENCH_TIME_HOST = 1 } bench_timer_t;

/* ---- bench_cuda.c ---------------------------------------------------------- */

typedef struct bench_device_info {
    char name[256];
    int sm_count;
    int cc_major, cc_minor;
    uint64_t l2_bytes;
    double peak_gbps;   /* memory clock x bus width x 2 (DDR), from device attributes */
    int mem_clock_khz, bus_bits;
    int driver, runtime; /* CUDA versions, e.g. 13000 */
    int cub_version, cub_g2g_version;
    size_t free_bytes, total_bytes;
} bench_device_info_t;

typedef struct bench_cuda bench_cuda_t;

#ifdef GR_WITH_CUDA
/* Set up on `device` (the context's GPU). */
gr_result_t bench_cuda_open(int device, bench_cuda_t **out, bench_device_info_t *info);
/* use_hold: GPU-timed rows queue behind the hold kernel (--timing gpu); hot:
 * one buffer per group, no rotation (--cache hot). GR_BENCH_HOLD=0 in the
 * environment still turns the hold off (tools that serialize launches). */
void bench_cuda_set_modes(bench_cuda_t *c, int use_hold, int hot);
void bench_cuda_close(bench_cuda_t *c);
/* Plan the group's rotation set within free memory; GR_ERR_DEVMEM when even one buffer pair does not fit. */
gr_result_t bench_cuda_plan(bench_cuda_t *c, uint64_t n, gr_dtype_t t, bench_group_t *g);
/* Allocate the group's buffers and every row's scratch. */
gr_result_t bench_cuda_group_begin(bench_cuda_t *c, const bench_group_t *g, int want_g2g, int want_tuned);
void bench_cuda_group_end(bench_cuda_t *c);
/* Fill input buffer 0 (gate) or all of them (timing data) from generator gen. */
gr_result_t bench_cuda_fill(bench_cuda_t *c, gr_gen_t gen, int all_buffers);
/* Poison every output a row writes, before a checked run. */
gr_result_t bench_cuda_poison(bench_cuda_t *c);
/* GPU-timed rows: warm-up, then iters runs queued in batches behind a hold
 * kernel, each timed by its own pair of events; seconds into t[0..iters).
 * *late counts batches whose hold timed out (the host queued too slowly). */
gr_result_t bench_cuda_time(bench_cuda_t *c, bench_run_fn run, int arg, int iters, int warmup, double *t, int *late);

/* Row functions (env = bench_cuda_t *). arg: the ladder rung for ladder rows. */
int bench_cuda_run_copy(void *env, int arg, int buf, bench_result_t *res, double *self_s);
int bench_cuda_run_memcpy(void *env, int arg, int buf, bench_result_t *res, double *self_s);
int bench_cuda_run_cub(void *env, int arg, int buf, bench_result_t *res, double *self_s);
int bench_cuda_run_cub_g2g(void *env, int arg, int buf, bench_result_t *res, double *self_s);
/* arg 1: the sum in the input's own type (cub-g2g-f32) */
int bench_cuda_run_cub_e2e(void *env, int arg, int buf, bench_result_t *res, double *self_s);
int bench_cuda_run_tuned(void *env, int arg, int buf, bench_result_t *res, double *self_s);
int bench_cuda_run_tuned_e2e(void *env, int arg, int buf, bench_result_t *res, double *self_s);
int bench_cuda_run_ladder(void *env, int arg, int buf, bench_result_t *res, double *self_s);
int bench_cuda_run_exact(void *env, int arg, int buf, bench_result_t *res, double *self_s);
int bench_cuda_run_exact_e2e(void *env, int arg, int buf, bench_result_t *res, double *self_s);
/* --op stats on the GPU: one pass, every statistic (gate: all of them in closed form) */
int bench_cuda_run_stats(void *env, int arg, int buf, bench_result_t *res, double *self_s);
/* The vector rows (issue 20): dot (arg 1: exact) and batch2 (two dot products in one batch launch) read
 * x and y; argmax; CUB's dot (TransformReduce over a zip; arg 2: two of them) and ArgMax. */
int bench_cuda_run_dot(void *env, int arg, int buf, bench_result_t *res, double *self_s);
int bench_cuda_run_batch2(void *env, int arg, int buf, bench_result_t *res, double *self_s);
int bench_cuda_run_cub_dot(void *env, int arg, int buf, bench_result_t *res, double *self_s);
int bench_cuda_run_argmax(void *env, int arg, int buf, bench_result_t *res, double *self_s);
int bench_cuda_run_cub_argmax(void *env, int arg, int buf, bench_result_t *res, double *self_s);
/* 1 when the cub-g2g row was built in (-DGR_CCCL_INCLUDE). */
int bench_cuda_have_g2g(void);
#endif

#endif /* GR_BENCH_H */
