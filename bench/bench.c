/*
 * bench.c - `gpureduce bench`: sweep sizes, dtypes and rows; check each row
 * against exact gates, then time it; print one fixed-column table (or CSV,
 * JSON) with every figure relative to the copy ceiling and to CUB measured
 * in the same process on the same buffers.
 *
 * Method, once:
 *   - every row of a group reads the same n elements; GB/s = n x size / time
 *     (the copy row moves them twice: read + write), never a kernel's count;
 *   - before a row is timed it is checked: the input is all ones, then iota
 *     (i mod 1000), whose sums are known in closed form; outputs are poisoned
 *     before each checked run; a row that fails prints its #wrong and no speed;
 *   - timed data is the product's generators (uniform for floats, randint for
 *     integers), rotated over a set of at least 2 x L2 where it fits; groups
 *     whose set fits in L2 anyway are labelled L2;
 *   - each rank runs everything on its own GPU; rank 0 prints the slowest
 *     rank's times (max over ranks) and the sum of #wrong over ranks.
 */
#include "bench.h"
#include "bench_dist.h"
#include "gr_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------------------
 * Options
 * ------------------------------------------------------------------------- */

typedef struct bench_opts {
    uint64_t min, max, factor;
    int have_min, have_max;
    int dtypes[GR_DTYPE_COUNT];
    int ndtypes;
    const char *variants; /* NULL = all */
    int iters, warmup, check;
    int have_iters; /* the distributed rows run BENCH_DIST_ITERS_DEFAULT unless --iters is given */
    gr_backend_t backend;
    int full, help, quiet;
    int timing_launch; /* --timing launch: no hold kernel, runs go at the host's launch rate */
    int cache_hot;     /* --cache hot: one buffer, every run reads it again (no rotation) */
    cli_format_t format;
    gr_config_t cfg;
} bench_opts_t;

typedef int (*bench_setter)(bench_opts_t *o, const char *arg, char *err, size_t len);

typedef struct bench_option {
    const char *name;
    const char *arg;
    const char *help;
    bench_setter set;
} bench_option_t;

#define BERR(...)                        \
    do {                                 \
        snprintf(err, len, __VA_ARGS__); \
        return CLI_EXIT_USAGE;           \
    } while (0)

static int set_min(bench_opts_t *o, const char *a, char *err, size_t len)
{
    if (gr_parse_size(a, &o->min) != GR_SUCCESS || o->min == 0)
        BERR("--min: cannot parse size '%s' (an element count >= 1: 1000, 2^20, 16M)", a);
    o->have_min = 1;
    return 0;
}

static int set_max(bench_opts_t *o, const char *a, char *err, size_t len)
{
    if (gr_parse_size(a, &o->max) != GR_SUCCESS || o->max == 0)
        BERR("--max: cannot parse size '%s' (an element count >= 1: 1000, 2^30, 1G)", a);
    o->have_max = 1;
    return 0;
}

static int set_factor(bench_opts_t *o, const char *a, char *err, size_t len)
{
    int f;
    if (cli_parse_int(a, 2, 1 << 20, &f))
        BERR("--factor: '%s' is not an integer in 2..1048576", a);
    o->factor = (uint64_t)f;
    return 0;
}

static int set_dtype(bench_opts_t *o, const char *a, char *err, size_t len)
{
    static const char *const names[GR_DTYPE_COUNT] = {"f32", "f64", "i32", "i64", "f16", "bf16"};
    o->ndtypes = 0;
    if (!strcmp(a, "all")) {
        for (int t = 0; t < GR_DTYPE_COUNT; ++t)
            if (names[t]) /* f16/bf16 join the list with their kernels */
                o->dtypes[o->ndtypes++] = t;
        return 0;
    }
    const char *p = a;
    while (*p) {
        size_t n = strcspn(p, ",");
        int found = -1;
        for (int t = 0; t < GR_DTYPE_COUNT; ++t)
            if (names[t] && strlen(names[t]) == n && !strncmp(p, names[t], n))
                found = t;
        if (found < 0)
            BERR("--dtype: unknown type '%.*s' (use f32, f64, i32, i64, f16, bf16, a comma list of them, or all)",
                 (int)n, p);
        int dup = 0;
        for (int k = 0; k < o->ndtypes; ++k)
            dup |= o->dtypes[k] == found;
        if (!dup)
            o->dtypes[o->ndtypes++] = found;
        p += n;
        if (*p == ',')
            ++p;
    }
    if (o->ndtypes == 0)
        BERR("--dtype: empty list");
    return 0;
}

static int set_variants(bench_opts_t *o, const char *a, char *err, size_t len)
{
    if (!*a)
        BERR("--variants: empty list (use all, or names such as cub,tuned,v7)");
    o->variants = strcmp(a, "all") ? a : NULL;
    return 0;
}

static int set_iters(bench_opts_t *o, const char *a, char *err, size_t len)
{
    if (cli_parse_int(a, 1, 1000000, &o->iters))
        BERR("--iters: '%s' is not an integer in 1..1000000", a);
    o->have_iters = 1;
    return 0;
}

static int set_warmup(bench_opts_t *o, const char *a, char *err, size_t len)
{
    if (cli_parse_int(a, 0, 1000000, &o->warmup))
        BERR("--warmup: '%s' is not an integer in 0..1000000", a);
    return 0;
}

static int set_check(bench_opts_t *o, const char *a, char *err, size_t len)
{
    if (cli_parse_int(a, 0, 1000, &o->check))
        BERR("--check: '%s' is not an integer in 0..1000", a);
    return 0;
}

static int set_backend(bench_opts_t *o, const char *a, char *err, size_t len)
{
    if (!strcmp(a, "auto"))
        o->backend = GR_BACKEND_AUTO;
    else if (!strcmp(a, "cuda"))
        o->backend = GR_BACKEND_CUDA;
    else if (!strcmp(a, "cpu"))
        o->backend = GR_BACKEND_CPU;
    else
        BERR("--backend: unknown backend '%s' (use cuda, cpu or auto)", a);
    return 0;
}

static int set_format(bench_opts_t *o, const char *a, char *err, size_t len)
{
    if (!strcmp(a, "table"))
        o->format = CLI_FMT_TABLE;
    else if (!strcmp(a, "csv"))
        o->format = CLI_FMT_CSV;
    else if (!strcmp(a, "json"))
        o->format = CLI_FMT_JSON;
    else
        BERR("--format: unknown format '%s' (use table, csv or json)", a);
    return 0;
}

static int set_timing(bench_opts_t *o, const char *a, char *err, size_t len)
{
    if (!strcmp(a, "gpu"))
        o->timing_launch = 0;
    else if (!strcmp(a, "launch"))
        o->timing_launch = 1;
    else
        BERR("--timing: unknown mode '%s' (use gpu or launch)", a);
    return 0;
}

static int set_cache(bench_opts_t *o, const char *a, char *err, size_t len)
{
    if (!strcmp(a, "cold"))
        o->cache_hot = 0;
    else if (!strcmp(a, "hot"))
        o->cache_hot = 1;
    else
        BERR("--cache: unknown mode '%s' (use cold or hot)", a);
    return 0;
}

static int set_bind(bench_opts_t *o, const char *a, char *err, size_t len)
{
    static const char *const names[] = {"gpu", "launcher", "none"};
    for (int i = 0; i < 3; ++i)
        if (!strcmp(a, names[i])) {
            o->cfg.bind = (gr_bind_policy_t)i;
            return 0;
        }
    BERR("--bind: unknown policy '%s' (use gpu, launcher or none)", a);
}

static int set_threads(bench_opts_t *o, const char *a, char *err, size_t len)
{
    if (cli_parse_int(a, 1, 256, &o->cfg.cpu_threads))
        BERR("--threads: '%s' is not an integer in 1..256", a);
    return 0;
}

static int set_full(bench_opts_t *o, const char *a, char *err, size_t len)
{
    o->full = 1;
    return 0;
}

static int set_help(bench_opts_t *o, const char *a, char *err, size_t len)
{
    o->help = 1;
    return 0;
}

static int set_quiet(bench_opts_t *o, const char *a, char *err, size_t len)
{
    o->quiet = 1;
    return 0;
}

static const bench_option_t bench_options[] = {
    {"min", "SIZE", "smallest element count per rank (default 2^20 with cuda, 2^10 with cpu)", set_min},
    {"max", "SIZE", "largest element count per rank, always measured (default 2^30 with cuda, 2^24 with cpu)",
     set_max},
    {"factor", "F", "each size is F times the last (default 4)", set_factor},
    {"dtype", "T", "f32 | f64 | i32 | i64 | f16 | bf16 | a comma list | all (default f32)", set_dtype},
    {"variants", "LIST", "comma list of rows, or all (default); copy and cub always run", set_variants},
    {"iters", "N", "timed runs per row; the table shows their median (default 20; distributed rows 50)", set_iters},
    {"warmup", "N", "untimed runs per row first (default 3; GPU-timed rows get at least 1)", set_warmup},
    {"check", "N", "checked runs per row and gate (ones, iota) before timing; 0 skips (default 1)", set_check},
    {"backend", "B", "cuda | cpu | auto (default auto: cuda when a GPU is visible)", set_backend},
    {"full", NULL, "also print min, max and p99 of the timed runs", set_full},
    {"format", "F", "table | csv | json (default table)", set_format},
    {"timing", "M", "gpu (default): GPU-timed rows run back to back behind a hold kernel, so the table shows GPU "
                    "time; launch: no hold, each run is issued when the host gets to it (what a loop of calls sees: "
                    "small sizes then pay each launch's host cost)", set_timing},
    {"cache", "M", "cold (default): rotate over buffers of >= 2x L2 so every run reads HBM; hot: one buffer, read "
                   "again by every run (data a previous kernel just wrote; mem column L2 when it fits)", set_cache},
    {"bind", "P", "gpu | launcher | none (default gpu), as for a reduction", set_bind},
    {"threads", "N", "cpu backend threads (default: cores this rank may use)", set_threads},
    {"quiet", NULL, "no progress lines on stderr (also GR_PROGRESS=off)", set_quiet},
    {"help", NULL, "this text", set_help},
};
#define BENCH_NOPTIONS ((int)(sizeof(bench_options) / sizeof(bench_options[0])))

static int bench_parse(int argc, char **argv, bench_opts_t *o, char *err, size_t len)
{
    memset(o, 0, sizeof(*o));
    gr_config_init(&o->cfg);
    o->cfg.bind = GR_BIND_GPU; /* as the reduce command: bind near the GPU unless told not to */
    o->factor = 4;
    o->dtypes[0] = GR_F32;
    o->ndtypes = 1;
    o->iters = 20;
    o->warmup = 3;
    o->check = 1;
    o->backend = GR_BACKEND_AUTO;
    for (int i = 1; i < argc; ++i) {
        int k = 0;
        const char *val = NULL;
        if (cli_next_option(argc, argv, &i, bench_options, sizeof(bench_options[0]), BENCH_NOPTIONS, "", &k,
                            &val, err, len))
            return CLI_EXIT_USAGE;
        if (bench_options[k].set(o, val, err, len))
            return CLI_EXIT_USAGE;
    }
    return 0;
}

/* ---------------------------------------------------------------------------
 * The cpu rows
 * ------------------------------------------------------------------------- */

typedef struct bench_cpu {
    gr_ctx_t ctx;
    int np;
    bench_group_t g;
    void *buf;
} bench_cpu_t;

static volatile double bench_sink_f;
static volatile int64_t bench_sink_i;

static void cpu_fill(bench_cpu_t *e, gr_gen_t gen)
{
    const gr_gen_keys_t k = gr_gen_make_keys(1);
    const uint64_t n = e->g.n;
    switch (e->g.dtype) {
    case GR_F32:
        for (uint64_t i = 0; i < n; ++i)
            ((float *)e->buf)[i] = (float)gr_gen_float((int)gen, GR_C_F32, k, i);
        break;
    case GR_F64:
        for (uint64_t i = 0; i < n; ++i)
            ((double *)e->buf)[i] = gr_gen_float((int)gen, GR_C_F64, k, i);
        break;
    case GR_I32:
        for (uint64_t i = 0; i < n; ++i)
            ((int32_t *)e->buf)[i] = (int32_t)gr_gen_int((int)gen, GR_C_I32, k, i);
        break;
    case GR_I64:
        for (uint64_t i = 0; i < n; ++i)
            ((int64_t *)e->buf)[i] = gr_gen_int((int)gen, GR_C_I64, k, i);
        break;
    case GR_F16:
    case GR_BF16:
        for (uint64_t i = 0; i < n; ++i)
            ((uint16_t *)e->buf)[i] = gr_gen_half_bits((int)gen, (int)e->g.dtype, k, i);
        break;
    }
}

/* The library's cpu backend through the public call; its own local time. */
static int run_cpu_backend(void *env, int arg, int buf, bench_result_t *res, double *self_s)
{
    bench_cpu_t *e = env;
    gr_desc_t d;
    gr_desc_init(&d);
    d.dtype = e->g.dtype;
    d.all_ranks = 1; /* every rank checks its own answer */
    gr_value_t v;
    gr_timing_t tm;
    GR_CHECK(gr_reduce_host(e->ctx, e->buf, e->g.n, &d, &v, &tm));
    if (self_s)
        *self_s = tm.local;
    if (res) {
        memset(res, 0, sizeof(*res));
        res->kind = BENCH_RES_VALUE;
        res->is_int = v.is_integer;
        res->i = v.overflow ? INT64_MIN : v.i;
        res->f = v.f;
        res->ranks = (uint64_t)e->np; /* the combined sum of every rank's copy */
    }
    return 0;
}

/* One thread, one plain loop, the same accumulators as every other row. */
static int run_cpu_loop(void *env, int arg, int buf, bench_result_t *res, double *self_s)
{
    bench_cpu_t *e = env;
    const uint64_t n = e->g.n;
    double f = 0;
    int64_t s = 0;
    switch (e->g.dtype) {
    case GR_F32:
        for (uint64_t i = 0; i < n; ++i)
            f += (double)((const float *)e->buf)[i];
        break;
    case GR_F64:
        for (uint64_t i = 0; i < n; ++i)
            f += ((const double *)e->buf)[i];
        break;
    case GR_I32:
        for (uint64_t i = 0; i < n; ++i)
            s += ((const int32_t *)e->buf)[i];
        break;
    case GR_I64:
        for (uint64_t i = 0; i < n; ++i)
            s = (int64_t)((uint64_t)s + (uint64_t)((const int64_t *)e->buf)[i]);
        break;
    case GR_F16:
    case GR_BF16:
        for (uint64_t i = 0; i < n; ++i)
            f += (double)gr_half_bits_to_f32(((const uint16_t *)e->buf)[i], e->g.dtype == GR_BF16);
        break;
    }
    bench_sink_f = f;
    bench_sink_i = s;
    if (res) {
        memset(res, 0, sizeof(*res));
        res->kind = BENCH_RES_VALUE;
        res->is_int = e->g.dtype == GR_I32 || e->g.dtype == GR_I64;
        res->i = s;
        res->f = f;
    }
    return 0;
}

/* ---------------------------------------------------------------------------
 * The rows: one table, nccl-tests style
 * ------------------------------------------------------------------------- */

/* ROW_DIST: a distributed row (bench_dist.c; arg = bench_dist_kind_t), run by bench_dist_group() */
enum { ROW_PLAIN = 0, ROW_COPY = 1, ROW_CUB = 2, ROW_CUB_E2E = 3, ROW_DIST = 4 };

typedef struct bench_variant {
    const char *name;
    const char *note;
    gr_backend_t backend;
    bench_timer_t timer;
    int role;       /* ROW_COPY and ROW_CUB always run: every row is measured against them */
    int bytes;      /* bytes moved per byte of input: 2 for the copy (read + write) and dot (x and y), 4 for
                       batch2, else 1 */
    bench_run_fn run;
    int arg;
    const char *e2e_ref; /* xCUB is the time of this row over this one's (host-timed rows: cub-e2e; the vector
                            rows: their CUB form), not cub's */
} bench_variant_t;

static const bench_variant_t bench_variants[] = {
#ifdef GR_WITH_CUDA
    {"copy", "ceiling: device copy kernel, 16-byte loads and stores; GB/s counts read + write", GR_BACKEND_CUDA,
     BENCH_TIME_GPU, ROW_COPY, 2, bench_cuda_run_copy, 0, NULL},
    {"memcpy", "cudaMemcpyAsync device to device (the driver's copy); GB/s counts read + write", GR_BACKEND_CUDA,
     BENCH_TIME_GPU, ROW_PLAIN, 2, bench_cuda_run_memcpy, 0, NULL},
    {"cub", "cub::DeviceReduce::Sum, toolkit CCCL, two-phase, temp allocated once", GR_BACKEND_CUDA,
     BENCH_TIME_GPU, ROW_CUB, 1, bench_cuda_run_cub, 0, NULL},
    {"cub-g2g", "cub::DeviceReduce::Sum, gpu_to_gpu determinism (newer CCCL)", GR_BACKEND_CUDA, BENCH_TIME_GPU,
     ROW_PLAIN, 1, bench_cuda_run_cub_g2g, 0, NULL},
    {"cub-g2g-f32", "cub-g2g with the sum in the input's type (f32 data into a float); gate: exact sum in f32 +-1 ulp",
     GR_BACKEND_CUDA, BENCH_TIME_GPU, ROW_PLAIN, 1, bench_cuda_run_cub_g2g, 1, NULL},
    {"cub-e2e", "cub + cudaMemcpyAsync of the sum to pinned host memory + sync; host clock", GR_BACKEND_CUDA,
     BENCH_TIME_HOST, ROW_CUB_E2E, 1, bench_cuda_run_cub_e2e, 0, NULL},
    {"tuned", "gpureduce fast mode: one launch, last block writes mapped host memory", GR_BACKEND_CUDA,
     BENCH_TIME_GPU, ROW_PLAIN, 1, bench_cuda_run_tuned, 0, NULL},
    {"tuned-e2e", "tuned + the backend's wait: poll the mapped result (then sync); host clock", GR_BACKEND_CUDA,
     BENCH_TIME_HOST, ROW_PLAIN, 1, bench_cuda_run_tuned_e2e, 0, "cub-e2e"},
    {"exact", "gpureduce --mode exact: correctly rounded sum, TwoSum expansions + integer limbs", GR_BACKEND_CUDA,
     BENCH_TIME_GPU, ROW_PLAIN, 1, bench_cuda_run_exact, 0, NULL},
    {"exact-e2e", "exact + event sync until the exact state is readable on the host; host clock",
     GR_BACKEND_CUDA, BENCH_TIME_HOST, ROW_PLAIN, 1, bench_cuda_run_exact_e2e, 0, "cub-e2e"},
    {"stats", "gpureduce --op stats: one pass for count, NaN/Inf counts, exact sum, min/max, mean and variance",
     GR_BACKEND_CUDA, BENCH_TIME_GPU, ROW_PLAIN, 1, bench_cuda_run_stats, 0, NULL},
    {"dot", "gpureduce dot(x, y) fast: kernels/dot.cu, the grid folded on the GPU (in the time); x and y read",
     GR_BACKEND_CUDA, BENCH_TIME_GPU, ROW_PLAIN, 2, bench_cuda_run_dot, 0, "cub-dot"},
    {"dot-exact", "gpureduce dot(x, y) --mode exact: every product exact, limbs folded on the GPU; x and y read",
     GR_BACKEND_CUDA, BENCH_TIME_GPU, ROW_PLAIN, 2, bench_cuda_run_dot, 1, "cub-dot"},
    {"cub-dot", "cub::DeviceReduce::TransformReduce over a zip of x and y (products summed in f64 / int64)",
     GR_BACKEND_CUDA, BENCH_TIME_GPU, ROW_PLAIN, 2, bench_cuda_run_cub_dot, 0, NULL},
    {"argmax", "gpureduce argmax (kernels/argext.cu: value and lowest global index), folded on the GPU",
     GR_BACKEND_CUDA, BENCH_TIME_GPU, ROW_PLAIN, 1, bench_cuda_run_argmax, 0, "cub-argmax"},
    {"cub-argmax", "cub::DeviceReduce::ArgMax (value and index outputs)", GR_BACKEND_CUDA, BENCH_TIME_GPU, ROW_PLAIN,
     1, bench_cuda_run_cub_argmax, 0, NULL},
    {"batch2", "gpureduce batch of two dot products (x1.y1, x2.y2) in one launch; four arrays read",
     GR_BACKEND_CUDA, BENCH_TIME_GPU, ROW_PLAIN, 4, bench_cuda_run_batch2, 0, "cub-batch2"},
    {"cub-batch2", "two cub-dot calls (x1.y1, x2.y2); four arrays read", GR_BACKEND_CUDA, BENCH_TIME_GPU, ROW_PLAIN,
     4, bench_cuda_run_cub_dot, 2, NULL},
    {"v0", "interleaved addressing, tid % 2s picks threads (divergent)", GR_BACKEND_CUDA, BENCH_TIME_GPU, ROW_PLAIN,
     1, bench_cuda_run_ladder, 0, NULL},
    {"v1", "interleaved, strided index: no divergence, bank conflicts", GR_BACKEND_CUDA, BENCH_TIME_GPU, ROW_PLAIN,
     1, bench_cuda_run_ladder, 1, NULL},
    {"v2", "sequential addressing: conflict free", GR_BACKEND_CUDA, BENCH_TIME_GPU, ROW_PLAIN, 1,
     bench_cuda_run_ladder, 2, NULL},
    {"v3", "first add during load: 2 elements a thread", GR_BACKEND_CUDA, BENCH_TIME_GPU, ROW_PLAIN, 1,
     bench_cuda_run_ladder, 3, NULL},
    {"v4", "last warp unrolled, __syncwarp() per step (not volatile)", GR_BACKEND_CUDA, BENCH_TIME_GPU, ROW_PLAIN,
     1, bench_cuda_run_ladder, 4, NULL},
    {"v5", "complete unroll: block size a template argument", GR_BACKEND_CUDA, BENCH_TIME_GPU, ROW_PLAIN, 1,
     bench_cuda_run_ladder, 5, NULL},
    {"v6", "grid-stride cascade over resident blocks", GR_BACKEND_CUDA, BENCH_TIME_GPU, ROW_PLAIN, 1,
     bench_cuda_run_ladder, 6, NULL},
    {"v7", "shuffle tail + 16-byte loads, scalar head/tail", GR_BACKEND_CUDA, BENCH_TIME_GPU, ROW_PLAIN, 1,
     bench_cuda_run_ladder, 7, NULL},
    {"v8", "v7 + second launch of one block: one value", GR_BACKEND_CUDA, BENCH_TIME_GPU, ROW_PLAIN, 1,
     bench_cuda_run_ladder, 8, NULL},
    {"gr", "gpureduce: gr_reduce_device on the rank's shard, exact partials combined at root 0 (MPI_Reduce)",
     GR_BACKEND_CUDA, BENCH_TIME_HOST, ROW_DIST, 1, NULL, BENCH_DIST_GR, NULL},
    {"cub+mpi", "cub::DeviceReduce::Sum + cudaMemcpy of the sum + MPI_Reduce to rank 0", GR_BACKEND_CUDA,
     BENCH_TIME_HOST, ROW_DIST, 1, NULL, BENCH_DIST_CUB_MPI, NULL},
    {"cub+nccl", "cub::DeviceReduce::Sum + ncclReduce to rank 0 + copy to host + stream sync", GR_BACKEND_CUDA,
     BENCH_TIME_HOST, ROW_DIST, 1, NULL, BENCH_DIST_CUB_NCCL, NULL},
#endif
    {"cpu", "gpureduce cpu backend, fast mode, all its threads (local time)", GR_BACKEND_CPU, BENCH_TIME_HOST,
     ROW_PLAIN, 1, run_cpu_backend, 0, NULL},
    {"loop", "one thread, plain loop, same accumulators", GR_BACKEND_CPU, BENCH_TIME_HOST, ROW_PLAIN, 1,
     run_cpu_loop, 0, NULL},
    {"gr", "gpureduce: gr_reduce_host on the rank's shard, exact partials combined at root 0 (MPI_Reduce)",
     GR_BACKEND_CPU, BENCH_TIME_HOST, ROW_DIST, 1, NULL, BENCH_DIST_GR, NULL},
};
#define BENCH_NVARIANTS ((int)(sizeof(bench_variants) / sizeof(bench_variants[0])))

static int variant_built(const bench_variant_t *v)
{
#ifdef GR_WITH_CUDA
    if (!strncmp(v->name, "cub-g2g", 7))
        return bench_cuda_have_g2g();
#endif
    if (!strcmp(v->name, "cub+nccl"))
        return bench_dist_have_nccl();
    return 1;
}

/* Which rows run: sel[i] for bench_variants[i]. Returns 0 or a usage error. */
static int select_variants(const bench_opts_t *o, gr_backend_t be, int np, int *sel, char *err, size_t len)
{
    /* `all`: the distributed rows only with more than one rank (with one, they are the -e2e rows again) */
    for (int i = 0; i < BENCH_NVARIANTS; ++i)
        sel[i] = !o->variants && bench_variants[i].backend == be && variant_built(&bench_variants[i]) &&
                 (bench_variants[i].role != ROW_DIST || np > 1);
    if (o->variants) {
        const char *p = o->variants;
        while (*p) {
            size_t n = strcspn(p, ",");
            int found = -1;
            for (int i = 0; i < BENCH_NVARIANTS; ++i) /* a name with a row on each backend: this backend's */
                if (strlen(bench_variants[i].name) == n && !strncmp(p, bench_variants[i].name, n) &&
                    (found < 0 || bench_variants[i].backend == be))
                    found = i;
            if (found < 0) {
                char names[512] = "";
                for (int i = 0; i < BENCH_NVARIANTS; ++i)
                    if (bench_variants[i].backend == be) {
                        strncat(names, bench_variants[i].name, sizeof(names) - strlen(names) - 1);
                        strncat(names, " ", sizeof(names) - strlen(names) - 1);
                    }
                BERR("--variants: unknown row '%.*s' (this backend has: %sor all)", (int)n, p, names);
            }
            if (bench_variants[found].backend != be)
                BERR("--variants: '%s' is a %s row, and this run uses --backend %s", bench_variants[found].name,
                     gr_backend_name(bench_variants[found].backend), gr_backend_name(be));
            if (!variant_built(&bench_variants[found]) && !strcmp(bench_variants[found].name, "cub+nccl"))
                BERR("--variants: 'cub+nccl' is not built into this gpureduce: CMake found no NCCL (nccl.h and "
                     "libnccl in the CUDA toolkit, or -DGR_NCCL_ROOT=<dir>)");
            if (!variant_built(&bench_variants[found]))
                BERR("--variants: '%s' is not built into this gpureduce: configure CMake with "
                     "-DGR_CCCL_INCLUDE=<CCCL include dir with gpu_to_gpu determinism>",
                     bench_variants[found].name);
            sel[found] = 1;
            p += n;
            if (*p == ',')
                ++p;
        }
    }
    /* the references every row is a ratio of */
    for (int i = 0; i < BENCH_NVARIANTS; ++i) {
        const bench_variant_t *v = &bench_variants[i];
        if (v->backend == be && (v->role == ROW_COPY || v->role == ROW_CUB))
            sel[i] = 1;
        if (sel[i] && v->e2e_ref)
            for (int k = 0; k < BENCH_NVARIANTS; ++k)
                if (!strcmp(bench_variants[k].name, v->e2e_ref))
                    sel[k] = 1;
    }
    return 0;
}

/* ---------------------------------------------------------------------------
 * Gates and statistics
 * ------------------------------------------------------------------------- */

/* Sum of gate over [0, n): ones gives n; iota (i mod 1000, i mod 256 for bf16) a closed form. */
uint64_t bench_gate_sum(gr_gen_t gate, gr_dtype_t t, uint64_t n)
{
    if (gate == GR_GEN_ONES)
        return n;
    /* iota wraps at 256 for bf16 (its integers are exact up to 256), else at 1000 */
    const uint64_t m = t == GR_BF16 ? 256u : 1000u;
    const uint64_t q = n / m, r = n % m;
    return q * (m * (m - 1u) / 2u) + r * (r - (r ? 1u : 0u)) / 2u;
}

/*
 * Rows that have no f16/bf16 form: the ladder (its rungs are built for
 * 4- and 8-byte types), the gpu_to_gpu CUB rows (a determinism mode over
 * float/double/integer input only), stats (f32/f64/i32/i64) and argmax
 * (cub::DeviceReduce::ArgMax is not instantiated for halves here). For halves
 * they are left out of the group, and the table says so.
 */
static int row_takes_dtype(const bench_variant_t *v, gr_dtype_t t)
{
#ifdef GR_WITH_CUDA
    if (gr_c_is_half((int)t))
        return v->run != bench_cuda_run_ladder && strcmp(v->name, "cub-g2g") && strcmp(v->name, "cub-g2g-f32") &&
               strcmp(v->name, "stats") && strcmp(v->name, "argmax") && strcmp(v->name, "cub-argmax");
#else
    (void)v;
    (void)t;
#endif
    return 1;
}

static int result_ok(const bench_result_t *res, uint64_t expected)
{
    if (res->kind == BENCH_RES_MISMATCH)
        return res->mismatches == 0;
    const uint64_t want = expected * (res->ranks ? res->ranks : 1u);
    if (res->is_int)
        return res->i == (int64_t)want;
    if (res->f32_out) { /* a float sum: the exact sum rounded to f32, give or take one ulp of it */
        const float w = (float)want;
        return res->f == (double)w || res->f == (double)nextafterf(w, INFINITY) ||
               res->f == (double)nextafterf(w, 0.0f);
    }
    return res->f == (double)want; /* exact: every partial sum is an integer below 2^53 */
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* median, min, max, p99 (nearest rank) of t[0..n); t is sorted. */
static void time_stats(double *t, int n, double st[4])
{
    qsort(t, (size_t)n, sizeof(double), cmp_double);
    st[0] = (n & 1) ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]);
    st[1] = t[0];
    st[2] = t[n - 1];
    int k = (int)ceil(0.99 * n) - 1;
    st[3] = t[k < 0 ? 0 : k];
}

/* ---------------------------------------------------------------------------
 * Output
 * ------------------------------------------------------------------------- */

typedef struct row_out {
    const bench_variant_t *v;
    int checked;
    long long wrong;
    int timed;
    double st[4]; /* median, min, max, p99 in seconds: max over ranks */
    int late;
} row_out_t;

typedef struct bench_run {
    bench_opts_t *o;
    int rank, np;
    gr_backend_t backend;
    FILE *out;
    bench_device_info_t dev;
    int have_dev;
    int rows_printed;
    long long wrong_rows;
    int late_rows;
    bench_dist_t *dist; /* the distributed rows, when any is selected */
} bench_run_t;

static const char *mem_label(const bench_run_t *b, const bench_group_t *g)
{
    if (b->backend == GR_BACKEND_CPU)
        return "host";
    return g->in_l2 ? "L2" : "hbm";
}

void bench_fmt_num(char *buf, size_t len, int ok, const char *fmt, double x)
{
    if (ok && isfinite(x))
        snprintf(buf, len, fmt, x);
    else
        snprintf(buf, len, "-");
}

void bench_json_num(FILE *f, int ok, double x)
{
    if (ok && isfinite(x))
        fprintf(f, "%.6g", x);
    else
        fprintf(f, "null");
}

static void print_column_header(bench_run_t *b)
{
    FILE *f = b->out;
    if (b->o->format == CLI_FMT_TABLE) {
        fprintf(f, "#%13s %12s %5s  %-10s %-4s %11s", "size(B)", "count", "dtype", "variant", "mem", "time(us)");
        if (b->o->full)
            fprintf(f, " %10s %10s %10s", "min(us)", "max(us)", "p99(us)");
        fprintf(f, " %9s %7s %7s %7s %7s  %s\n", "GB/s", "%copy", "%peak", "xCUB", "#wrong", "note");
    } else if (b->o->format == CLI_FMT_CSV) {
        fprintf(f, "size_bytes,count,dtype,variant,mem,time_us");
        if (b->o->full)
            fprintf(f, ",min_us,max_us,p99_us");
        fprintf(f, ",gbps,pct_copy,pct_peak,x_cub,wrong,note%s\n", b->dist ? BENCH_DIST_CSV_COLUMNS : "");
    }
}

static void print_group(bench_run_t *b, const bench_group_t *g, row_out_t *rows, int nrows)
{
    FILE *f = b->out;
    /* references of this group */
    double copy_gbps = NAN, cub_t = NAN, cub_e2e_t = NAN;
    for (int r = 0; r < nrows; ++r) {
        if (!rows[r].timed)
            continue;
        if (rows[r].v->role == ROW_COPY)
            copy_gbps = 2.0 * (double)g->bytes / rows[r].st[0] / 1e9;
        else if (rows[r].v->role == ROW_CUB)
            cub_t = rows[r].st[0];
        else if (rows[r].v->role == ROW_CUB_E2E)
            cub_e2e_t = rows[r].st[0];
    }
    for (int r = 0; r < nrows; ++r) {
        const row_out_t *ro = &rows[r];
        const bench_variant_t *v = ro->v;
        const int ok = ro->timed;
        const double t = ro->st[0];
        const double gbps = ok ? (double)v->bytes * (double)g->bytes / t / 1e9 : NAN;
        const int is_cuda = v->backend == GR_BACKEND_CUDA;
        const double pct_copy = is_cuda && v->role != ROW_COPY ? 100.0 * gbps / copy_gbps
                                : v->role == ROW_COPY          ? 100.0
                                                               : NAN;
        const double pct_peak = is_cuda && b->have_dev && b->dev.peak_gbps > 0 ? 100.0 * gbps / b->dev.peak_gbps : NAN;
        double ref = v->role == ROW_CUB_E2E ? cub_e2e_t : cub_t;
        for (int q = 0; v->e2e_ref && q < nrows; ++q) /* the row it is compared with */
            if (!strcmp(rows[q].v->name, v->e2e_ref))
                ref = rows[q].timed ? rows[q].st[0] : NAN;
        /* copies and the CUB forms of the two-array rows: no xCUB */
        const double xcub = is_cuda && v->role != ROW_COPY && (v->bytes == 1 || v->e2e_ref) ? ref / t : NAN;
        char wrong[24];
        if (ro->checked)
            snprintf(wrong, sizeof(wrong), "%lld", ro->wrong);
        else
            snprintf(wrong, sizeof(wrong), "-");
        char note[256];
        snprintf(note, sizeof(note), "%s%s%s", ro->wrong ? "WRONG: not timed; " : "", v->note,
                 ro->late ? " [host queued late: time may include launch gaps]" : "");

        if (b->o->format == CLI_FMT_TABLE) {
            char c_t[32], c_min[32], c_max[32], c_p99[32], c_gb[32], c_pc[32], c_pp[32], c_x[32];
            bench_fmt_num(c_t, sizeof(c_t), ok, "%.2f", t * 1e6);
            bench_fmt_num(c_min, sizeof(c_min), ok, "%.2f", ro->st[1] * 1e6);
            bench_fmt_num(c_max, sizeof(c_max), ok, "%.2f", ro->st[2] * 1e6);
            bench_fmt_num(c_p99, sizeof(c_p99), ok, "%.2f", ro->st[3] * 1e6);
            bench_fmt_num(c_gb, sizeof(c_gb), ok, "%.1f", gbps);
            bench_fmt_num(c_pc, sizeof(c_pc), ok, "%.1f", pct_copy);
            bench_fmt_num(c_pp, sizeof(c_pp), ok, "%.1f", pct_peak);
            bench_fmt_num(c_x, sizeof(c_x), ok, "%.2f", xcub);
            fprintf(f, "%14llu %12llu %5s  %-10s %-4s %11s", (unsigned long long)g->bytes, (unsigned long long)g->n,
                    gr_dtype_name(g->dtype), v->name, mem_label(b, g), c_t);
            if (b->o->full)
                fprintf(f, " %10s %10s %10s", c_min, c_max, c_p99);
            fprintf(f, " %9s %7s %7s %7s %7s  %s\n", c_gb, c_pc, c_pp, c_x, wrong, note);
        } else if (b->o->format == CLI_FMT_CSV) {
            fprintf(f, "%llu,%llu,%s,%s,%s,", (unsigned long long)g->bytes, (unsigned long long)g->n,
                    gr_dtype_name(g->dtype), v->name, mem_label(b, g));
            double cols[] = {t * 1e6, ro->st[1] * 1e6, ro->st[2] * 1e6, ro->st[3] * 1e6};
            for (int k = 0; k < (b->o->full ? 4 : 1); ++k) {
                if (ok)
                    fprintf(f, "%.4f", cols[k]);
                fputc(',', f);
            }
            double more[] = {gbps, pct_copy, pct_peak, xcub};
            for (int k = 0; k < 4; ++k) {
                if (ok && isfinite(more[k]))
                    fprintf(f, "%.4f", more[k]);
                fputc(',', f);
            }
            fprintf(f, "%s,\"%s\"%s\n", ro->checked ? wrong : "", note, b->dist ? BENCH_DIST_CSV_EMPTY : "");
        } else {
            fprintf(f, "%s\n    {\"size_bytes\": %llu, \"count\": %llu, \"dtype\": \"%s\", \"variant\": \"%s\", "
                       "\"mem\": \"%s\", \"time_us\": ",
                    b->rows_printed ? "," : "", (unsigned long long)g->bytes, (unsigned long long)g->n,
                    gr_dtype_name(g->dtype), v->name, mem_label(b, g));
            if (ok && b->o->full)
                fprintf(f, "{\"median\": %.4f, \"min\": %.4f, \"max\": %.4f, \"p99\": %.4f}", t * 1e6,
                        ro->st[1] * 1e6, ro->st[2] * 1e6, ro->st[3] * 1e6);
            else
                bench_json_num(f, ok, t * 1e6);
            fprintf(f, ", \"gbps\": ");
            bench_json_num(f, ok, gbps);
            fprintf(f, ", \"pct_copy\": ");
            bench_json_num(f, ok, pct_copy);
            fprintf(f, ", \"pct_peak\": ");
            bench_json_num(f, ok, pct_peak);
            fprintf(f, ", \"x_cub\": ");
            bench_json_num(f, ok, xcub);
            fprintf(f, ", \"wrong\": ");
            if (ro->checked)
                fprintf(f, "%lld", ro->wrong);
            else
                fprintf(f, "null");
            fprintf(f, ", \"note\": ");
            json_string(f, note);
            fprintf(f, "}");
        }
        b->rows_printed++;
    }
    if (b->o->format == CLI_FMT_TABLE && nrows > 0)
        fprintf(f, "\n");
    fflush(f);
}

static void print_skip(bench_run_t *b, uint64_t n, gr_dtype_t t, const char *why)
{
    if (b->rank != 0)
        return;
    if (b->o->format == CLI_FMT_JSON)
        return; /* JSON lists what ran; the skip is on stderr */
    cli_progress_pause();
    fprintf(b->out, "# skipped %llu x %s: %s\n", (unsigned long long)n, gr_dtype_name(t), why);
    fflush(b->out);
    cli_progress_resume();
}

/* ---------------------------------------------------------------------------
 * One run of the whole sweep
 * ------------------------------------------------------------------------- */

/* Time one row on this rank into st[]: GPU events or the host clock. */
static gr_result_t time_row(bench_run_t *b, void *env, const bench_variant_t *v, int nbuf, double st[4], int *late)
{
    const int R = b->o->iters;
    double *t = calloc((size_t)R, sizeof(double));
    if (!t)
        GR_FAIL(GR_ERR_NOMEM, "out of host memory for %d timings", R);
    gr_result_t r = GR_SUCCESS;
    *late = 0;
#ifdef GR_WITH_CUDA
    if (v->timer == BENCH_TIME_GPU) {
        r = bench_cuda_time(env, v->run, v->arg, R, b->o->warmup, t, late);
        if (r != GR_SUCCESS)
            goto done;
        time_stats(t, R, st);
        goto done;
    }
#endif
    for (int w = 0; w < b->o->warmup; ++w) {
        double self = -1;
        if ((r = (gr_result_t)v->run(env, v->arg, w % nbuf, NULL, &self)) != GR_SUCCESS)
            goto done;
    }
    for (int k = 0; k < R; ++k) {
        double self = -1;
        const double t0 = gr_now();
        if ((r = (gr_result_t)v->run(env, v->arg, (b->o->warmup + k) % nbuf, NULL, &self)) != GR_SUCCESS)
            goto done;
        const double t1 = gr_now();
        t[k] = self >= 0 ? self : t1 - t0;
    }
    time_stats(t, R, st);
done:
    free(t);
    return r;
}

typedef struct group_hooks {
    void *env;
    gr_result_t (*fill)(void *env, gr_gen_t gen, int all);
    gr_result_t (*poison)(void *env);
} group_hooks_t;

/* Check, then time, every selected row of one group; rank 0 prints. Collective. */
static void run_group(bench_run_t *b, const bench_group_t *g, const int *sel, group_hooks_t *h)
{
    row_out_t rows[BENCH_NVARIANTS];
    long long wrong[BENCH_NVARIANTS], wrong_all[BENCH_NVARIANTS];
    int nrows = 0;
    char left_out[256] = "";
    for (int i = 0; i < BENCH_NVARIANTS; ++i)
        if (sel[i] && bench_variants[i].role != ROW_DIST && !row_takes_dtype(&bench_variants[i], g->dtype)) {
            strncat(left_out, " ", sizeof(left_out) - strlen(left_out) - 1);
            strncat(left_out, bench_variants[i].name, sizeof(left_out) - strlen(left_out) - 1);
        } else if (sel[i] && bench_variants[i].role != ROW_DIST) { /* those: bench_dist_group() */
            memset(&rows[nrows], 0, sizeof(rows[nrows]));
            rows[nrows].v = &bench_variants[i];
            rows[nrows].checked = b->o->check > 0;
            nrows++;
        }
    gr_result_t r;
    memset(wrong, 0, sizeof(wrong));
    if (b->o->check > 0) {
        const gr_gen_t gates[2] = {GR_GEN_ONES, GR_GEN_IOTA};
        for (int gi = 0; gi < 2; ++gi) {
            if ((r = h->fill(h->env, gates[gi], 0)) != GR_SUCCESS)
                cli_die("gpureduce bench", r, "filling a gate");
            const uint64_t want = bench_gate_sum(gates[gi], g->dtype, g->n);
            for (int k = 0; k < nrows; ++k)
                for (int c = 0; c < b->o->check; ++c) {
                    bench_result_t res;
                    memset(&res, 0, sizeof(res));
                    if (h->poison && (r = h->poison(h->env)) != GR_SUCCESS)
                        cli_die("gpureduce bench", r, "poisoning outputs");
                    if ((r = (gr_result_t)rows[k].v->run(h->env, rows[k].v->arg, 0, &res, NULL)) != GR_SUCCESS)
                        cli_die("gpureduce bench", r, rows[k].v->name);
                    if (!result_ok(&res, want)) {
                        wrong[k]++;
                        if (gr_log_enabled(GR_LOG_INFO, GR_SUB_BENCH))
                            gr_log(GR_LOG_INFO, GR_SUB_BENCH, __FILE__, __LINE__,
                                   "bench: %s %s n=%llu gate %s: got %s %.17g / %lld, mismatches %llu, want %llu",
                                   rows[k].v->name, gr_dtype_name(g->dtype), (unsigned long long)g->n,
                                   gr_gen_name(gates[gi]), res.is_int ? "int" : "float", res.f, (long long)res.i,
                                   (unsigned long long)res.mismatches, (unsigned long long)want);
                    }
                }
        }
    }
    /* every rank times the same rows: agree on who failed first */
    if (MPI_Allreduce(wrong, wrong_all, nrows, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD) != MPI_SUCCESS)
        cli_die("gpureduce bench", GR_ERR_MPI, "MPI_Allreduce of #wrong");
    if ((r = h->fill(h->env, gr_c_is_float((int)g->dtype) ? GR_GEN_UNIFORM : GR_GEN_RANDINT, 1)) != GR_SUCCESS)
        cli_die("gpureduce bench", r, "filling the timed data");
    double st[BENCH_NVARIANTS][4], st_max[BENCH_NVARIANTS][4];
    int late[BENCH_NVARIANTS], late_max[BENCH_NVARIANTS];
    memset(st, 0, sizeof(st));
    memset(late, 0, sizeof(late));
    for (int k = 0; k < nrows; ++k) {
        rows[k].wrong = wrong_all[k];
        if (wrong_all[k])
            continue; /* never a speed for a wrong row */
        if ((r = time_row(b, h->env, rows[k].v, g->nbuf, st[k], &late[k])) != GR_SUCCESS)
            cli_die("gpureduce bench", r, rows[k].v->name);
    }
    if (MPI_Reduce(st, st_max, 4 * nrows, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD) != MPI_SUCCESS ||
        MPI_Reduce(late, late_max, nrows, MPI_INT, MPI_MAX, 0, MPI_COMM_WORLD) != MPI_SUCCESS)
        cli_die("gpureduce bench", GR_ERR_MPI, "MPI_Reduce of the timings");
    if (b->rank != 0)
        return;
    for (int k = 0; k < nrows; ++k) {
        rows[k].timed = rows[k].wrong == 0;
        memcpy(rows[k].st, st_max[k], sizeof(rows[k].st));
        rows[k].late = late_max[k];
        if (rows[k].wrong)
            b->wrong_rows++;
        if (rows[k].late)
            b->late_rows++;
    }
    cli_progress_pause(); /* the rows go to stdout, maybe the same terminal */
    if (left_out[0] && b->o->format != CLI_FMT_JSON)
        fprintf(b->out, "# %s: rows with no 2-byte form left out:%s\n", gr_dtype_name(g->dtype), left_out);
    print_group(b, g, rows, nrows);
    cli_progress_resume();
}

/* ---- group hooks of each backend -------------------------------------------- */

static gr_result_t cpu_fill_hook(void *env, gr_gen_t gen, int all)
{
    cpu_fill(env, gen);
    return GR_SUCCESS;
}

#ifdef GR_WITH_CUDA
static gr_result_t cuda_fill_hook(void *env, gr_gen_t gen, int all) { return bench_cuda_fill(env, gen, all); }
static gr_result_t cuda_poison_hook(void *env) { return bench_cuda_poison(env); }
#endif

/* ---- header --------------------------------------------------------------------- */

static void print_sizes(FILE *f, const uint64_t *sizes, int nsizes)
{
    for (int i = 0; i < nsizes; ++i) {
        uint64_t s = sizes[i];
        if (s && !(s & (s - 1))) {
            int e = 0;
            while ((1ull << e) != s)
                ++e;
            fprintf(f, "%s2^%d", i ? " " : "", e);
        } else {
            fprintf(f, "%s%llu", i ? " " : "", (unsigned long long)s);
        }
    }
}

static void print_header(bench_run_t *b, gr_ctx_t ctx, const uint64_t *sizes, int nsizes, const int *sel)
{
    FILE *f = b->out;
    const bench_opts_t *o = b->o;
    if (b->rank == 0) {
        if (o->format == CLI_FMT_JSON) {
            fprintf(f, "{\n  \"bench\": {\"version\": \"%s\", \"np\": %d, \"backend\": \"%s\", \"iters\": %d, "
                       "\"warmup\": %d, \"check\": %d, \"sizes\": [",
                    GR_VERSION_STRING, b->np, gr_backend_name(b->backend), o->iters, o->warmup, o->check);
            for (int i = 0; i < nsizes; ++i)
                fprintf(f, "%s%llu", i ? ", " : "", (unsigned long long)sizes[i]);
            fprintf(f, "], \"dtypes\": [");
            for (int i = 0; i < o->ndtypes; ++i)
                fprintf(f, "%s\"%s\"", i ? ", " : "", gr_dtype_name((gr_dtype_t)o->dtypes[i]));
            fprintf(f, "], \"block\": %d, \"timing\": \"%s\", \"cache\": \"%s\"},\n",
                    b->backend == GR_BACKEND_CUDA ? 256 : 0, o->timing_launch ? "launch" : "gpu",
                    o->cache_hot ? "hot" : "cold");
            if (b->have_dev) {
                const bench_device_info_t *d = &b->dev;
                fprintf(f, "  \"device\": {\"name\": ");
                json_string(f, d->name);
                fprintf(f, ", \"cc\": \"%d.%d\", \"sm_count\": %d, \"l2_bytes\": %llu, \"mem_clock_khz\": %d, "
                           "\"bus_bits\": %d, \"peak_gbps\": %.1f, \"driver\": %d, \"runtime\": %d, \"cub\": %d, "
                           "\"cub_g2g\": %d},\n",
                        d->cc_major, d->cc_minor, d->sm_count, (unsigned long long)d->l2_bytes, d->mem_clock_khz,
                        d->bus_bits, d->peak_gbps, d->driver, d->runtime, d->cub_version, d->cub_g2g_version);
            }
        } else {
            fprintf(f, "# gpureduce %s bench: np %d, backend %s, iters %d (median shown), warmup %d, check %d per "
                       "gate (all ones, iota)\n",
                    GR_VERSION_STRING, b->np, gr_backend_name(b->backend), o->iters, o->warmup, o->check);
            if (b->backend == GR_BACKEND_CUDA)
                fprintf(f, "# timing %s, cache %s\n",
                        o->timing_launch ? "launch (no hold kernel: runs go at the host's launch rate)"
                                         : "gpu (runs queued behind a hold kernel: GPU time)",
                        o->cache_hot ? "hot (one buffer, read by every run)"
                                     : "cold (rotation over >= 2x L2 where the buffer is smaller)");
            fprintf(f, "# sizes (elements per rank): ");
            print_sizes(f, sizes, nsizes);
            fprintf(f, "; dtypes:");
            for (int i = 0; i < o->ndtypes; ++i)
                fprintf(f, " %s", gr_dtype_name((gr_dtype_t)o->dtypes[i]));
            fprintf(f, "\n");
            if (b->have_dev) {
                const bench_device_info_t *d = &b->dev;
                fprintf(f, "# rank 0 GPU: %s, sm_%d%d, %d SMs, L2 %.1f MiB, memory %.0f GB/s theoretical "
                           "(%d MHz x %d bit x 2), driver %d.%d, runtime %d.%d, CUB %d.%d.%d",
                        d->name, d->cc_major, d->cc_minor, d->sm_count, (double)d->l2_bytes / 1048576.0,
                        d->peak_gbps, d->mem_clock_khz / 1000, d->bus_bits, d->driver / 1000, d->driver % 1000 / 10,
                        d->runtime / 1000, d->runtime % 1000 / 10, d->cub_version / 100000,
                        d->cub_version / 100 % 1000, d->cub_version % 100);
                if (d->cub_g2g_version)
                    fprintf(f, ", cub-g2g CCCL %d.%d.%d", d->cub_g2g_version / 100000,
                            d->cub_g2g_version / 100 % 1000, d->cub_g2g_version % 100);
                else
                    fprintf(f, ", cub-g2g not built (-DGR_CCCL_INCLUDE)");
                fprintf(f, "\n");
            }
            fprintf(f, "# every row reads the same count x size bytes per array; GB/s = bytes / median time "
                       "(copy: read + write, so 2x; dot: x and y, 2x; batch2: 4 arrays, 4x); %%copy = GB/s / copy "
                       "GB/s;\n"
                       "# %%peak = GB/s / theoretical; xCUB = cub time / row time (-e2e rows: cub-e2e time / row "
                       "time; dot, dot-exact, argmax, batch2: the time of cub-dot, cub-argmax, cub-batch2); mem: hbm "
                       "= rotated over >= 2x L2, L2 = the set fits in L2, host = cpu memory;\n"
                       "# accumulators: f32 and f64 sum in f64, i32 and i64 in i64, in every row (CUB too: its "
                       "output type); time = max over ranks; #wrong = failed checks summed over ranks\n");
        }
        fflush(f);
    }
    if (b->dist)
        bench_dist_header(b->dist); /* rank 0 */
    /* placement: every rank's (collective); in CSV it stays a '#' comment block */
    report_placements(ctx, MPI_COMM_WORLD, o->format == CLI_FMT_CSV ? CLI_FMT_TABLE : o->format, f);
    if (b->rank == 0) {
        if (o->format == CLI_FMT_JSON)
            fprintf(f, ",\n  \"rows\": [");
        else
            print_column_header(b);
        fflush(f);
    }
    (void)sel;
}

static void bench_usage(FILE *f)
{
    fprintf(f, "usage: mpirun -np N gpureduce bench [options]\n\n"
               "Sweep sizes, dtypes and rows on every rank's own GPU (or CPU), check each row against exact\n"
               "answers, time it, and print it against the copy ceiling and CUB measured in the same process.\n\n"
               "options:\n");
    for (int i = 0; i < BENCH_NOPTIONS; ++i) {
        char lhs[64];
        snprintf(lhs, sizeof(lhs), "--%s%s%s", bench_options[i].name, bench_options[i].arg ? " " : "",
                 bench_options[i].arg ? bench_options[i].arg : "");
        fprintf(f, "  %-18s %s\n", lhs, bench_options[i].help);
    }
    fprintf(f, "\nrows (--variants):\n");
    for (int i = 0; i < BENCH_NVARIANTS; ++i) {
        const bench_variant_t *v = &bench_variants[i];
        if (variant_built(v) && v->role != ROW_DIST)
            fprintf(f, "  %-10s %-4s %s\n", v->name, gr_backend_name(v->backend), v->note);
    }
    fprintf(f, "\ndistributed rows (--variants; in all when np > 1): end to end on every rank at once, the global\n"
               "sum in rank 0's host memory; host clock, MPI_Barrier before each run, time = median over runs (--iters,\n"
               "default %d) of the slowest rank; also min/avg/max over ranks of each rank's median. Sizes per rank.\n",
            BENCH_DIST_ITERS_DEFAULT);
    for (int i = 0; i < BENCH_NVARIANTS; ++i) {
        const bench_variant_t *v = &bench_variants[i];
        if (variant_built(v) && v->role == ROW_DIST)
            fprintf(f, "  %-10s %-4s %s\n", v->name, gr_backend_name(v->backend), v->note);
    }
#ifdef GR_WITH_CUDA
    if (!bench_dist_have_nccl())
        fprintf(f, "  (cub+nccl, cub::DeviceReduce::Sum + ncclReduce, is absent from this build: CMake found no NCCL;\n"
                   "   it looks for nccl.h and libnccl in the CUDA toolkit, or under -DGR_NCCL_ROOT=<dir>)\n");
#endif
#ifdef GR_WITH_CUDA
    if (!bench_cuda_have_g2g())
        fprintf(f, "  (cub-g2g, cub::DeviceReduce::Sum with gpu_to_gpu determinism, is absent from this build: "
                   "configure\n   CMake with -DGR_CCCL_INCLUDE=<include dir of a newer CCCL, e.g. from the PyPI "
                   "package cuda-cccl>)\n");
#else
    fprintf(f, "  (this gpureduce was built without CUDA: only the cpu rows exist)\n");
#endif
    fprintf(f, "\nSIZE: 1000, 2^30, 16M, 4G (K M G T = 2^10..2^40). Sizes run min, min x F, ... and max.\n"
               "Columns: size(B) count dtype variant mem time(us) [min max p99 with --full] GB/s %%copy %%peak "
               "xCUB #wrong note;\n"
               "distributed rows add rk-min rk-avg rk-max (over ranks, each rank's median) x-mpi x-nccl (baseline time / "
               "row time).\nExit status: 0, 1 when any row was wrong or a run failed, 2 for bad options.\n"
               "\nexample: gpureduce bench --min 2^20 --max 2^30 --factor 16 --dtype all --variants all\n");
}

/* ---- entry ------------------------------------------------------------------------ */

#ifdef GR_WITH_CUDA
static int sel_has(const int *sel, const char *name)
{
    for (int i = 0; i < BENCH_NVARIANTS; ++i)
        if (sel[i] && !strcmp(bench_variants[i].name, name))
            return 1;
    return 0;
}
#endif

int cli_bench_main(int argc, char **argv)
{
    int rank = 0, np = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    bench_opts_t o;
    char err[512];
    if (bench_parse(argc, argv, &o, err, sizeof(err)) != 0)
        return cli_usage_error("gpureduce bench", err);
    cli_progress_init(o.quiet);
    if (o.help) {
        if (rank == 0)
            bench_usage(stdout);
        MPI_Finalize();
        return CLI_EXIT_OK;
    }

    /* backend */
    gr_backend_t be = o.backend;
#ifndef GR_WITH_CUDA
    if (be == GR_BACKEND_CUDA) {
        if (rank == 0)
            fprintf(stderr, "gpureduce bench: --backend cuda: this gpureduce was built without CUDA "
                            "(-DGR_WITH_CUDA=OFF, or no nvcc was found), so it has no GPU rows; rebuild with the "
                            "CUDA toolkit, or run the cpu rows with --backend cpu\n");
        MPI_Finalize();
        return CLI_EXIT_FAIL;
    }
#endif
    if (be == GR_BACKEND_AUTO)
        be = gr_cuda_device_count() > 0 ? GR_BACKEND_CUDA : GR_BACKEND_CPU;
    /* every rank must run the same rows */
    int be_min = (int)be, be_max = (int)be;
    MPI_Allreduce(MPI_IN_PLACE, &be_min, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    MPI_Allreduce(MPI_IN_PLACE, &be_max, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (be_min != be_max)
        return cli_usage_error("gpureduce bench", "--backend auto chose cuda on some ranks and cpu on others; "
                                       "give --backend cuda or --backend cpu");

    if (!o.have_min)
        o.min = be == GR_BACKEND_CPU ? (uint64_t)1 << 10 : (uint64_t)1 << 20;
    if (!o.have_max)
        o.max = be == GR_BACKEND_CPU ? (uint64_t)1 << 24 : (uint64_t)1 << 30;
    if (o.min > o.max) {
        snprintf(err, sizeof(err), "--min %llu%s is larger than --max %llu%s; give both, --min <= --max",
                 (unsigned long long)o.min, o.have_min ? "" : " (the default)", (unsigned long long)o.max,
                 o.have_max ? "" : " (the default)");
        return cli_usage_error("gpureduce bench", err);
    }
    uint64_t sizes[128];
    int nsizes = 0;
    for (uint64_t s = o.min; s <= o.max && nsizes < 127; s *= o.factor) {
        sizes[nsizes++] = s;
        if (s > o.max / o.factor)
            break;
    }
    if (sizes[nsizes - 1] != o.max)
        sizes[nsizes++] = o.max;

    int sel[BENCH_NVARIANTS];
    if (select_variants(&o, be, np, sel, err, sizeof(err)) != 0)
        return cli_usage_error("gpureduce bench", err);

    /* context: binding and this rank's GPU, as for a reduction */
    o.cfg.backend = be;
    gr_ctx_t ctx = NULL;
    gr_result_t r = gr_ctx_create(MPI_COMM_WORLD, &o.cfg, &ctx);
    if (r != GR_SUCCESS)
        cli_die("gpureduce bench", r, "creating the context");

    bench_run_t b;
    memset(&b, 0, sizeof(b));
    b.o = &o;
    b.rank = rank;
    b.np = np;
    b.backend = be;
    b.out = stdout;

    bench_cpu_t cpu;
    memset(&cpu, 0, sizeof(cpu));
    cpu.ctx = ctx;
    cpu.np = np;
#ifdef GR_WITH_CUDA
    bench_cuda_t *cuda = NULL;
    if (be == GR_BACKEND_CUDA) {
        r = bench_cuda_open(gr_ctx_device(ctx), &cuda, &b.dev);
        if (r != GR_SUCCESS)
            cli_die("gpureduce bench", r, "setting up the GPU");
        bench_cuda_set_modes(cuda, !o.timing_launch, o.cache_hot);
        b.have_dev = 1;
    }
#endif
    /* the distributed rows (bench_dist.c), when any is selected */
    bench_dist_config_t dc;
    memset(&dc, 0, sizeof(dc));
    int ndist = 0;
    for (int i = 0; i < BENCH_NVARIANTS; ++i)
        if (sel[i] && bench_variants[i].role == ROW_DIST) {
            const int k = bench_variants[i].arg;
            dc.want[k] = 1;
            dc.name[k] = bench_variants[i].name;
            dc.note[k] = bench_variants[i].note;
            ndist++;
        }
    if (ndist) {
        dc.ctx = ctx;
        dc.backend = be;
        dc.iters = o.have_iters ? o.iters : BENCH_DIST_ITERS_DEFAULT;
        dc.warmup = o.warmup;
        dc.check = o.check;
        dc.format = o.format;
        dc.full = o.full;
        dc.out = b.out;
        dc.peak_gbps = b.have_dev ? b.dev.peak_gbps : 0;
        dc.rows_printed = &b.rows_printed;
        dc.wrong_rows = &b.wrong_rows;
        r = bench_dist_open(&dc, &b.dist);
        if (r != GR_SUCCESS)
            cli_die("gpureduce bench", r, "setting up the distributed rows");
    }
    print_header(&b, ctx, sizes, nsizes, sel);

    /* progress (progress.h): the (size, dtype) group being measured */
    cli_progress_begin("bench", CLI_PROG_STEPS, (uint64_t)nsizes * (uint64_t)o.ndtypes, "group");
    for (int si = 0; si < nsizes; ++si)
        for (int ti = 0; ti < o.ndtypes; ++ti) {
            const uint64_t n = sizes[si];
            const gr_dtype_t t = (gr_dtype_t)o.dtypes[ti];
            cli_progress_set((uint64_t)si * (uint64_t)o.ndtypes + (uint64_t)ti);
            cli_progress_detail("%llu x %s", (unsigned long long)n, gr_dtype_name(t));
            bench_group_t g;
            memset(&g, 0, sizeof(g));
            group_hooks_t h;
            memset(&h, 0, sizeof(h));
            int ok = 1;
            char why[160] = "";
            if (be == GR_BACKEND_CPU) {
                g.n = n;
                g.dtype = t;
                g.bytes = n * (uint64_t)gr_dtype_size(t);
                g.nbuf = 1;
                cpu.g = g;
                cpu.buf = g.bytes <= (uint64_t)SIZE_MAX ? malloc((size_t)g.bytes) : NULL;
                ok = cpu.buf != NULL;
                if (!ok)
                    snprintf(why, sizeof(why), "%.2f GB of host memory not available", (double)g.bytes / 1e9);
                h.env = &cpu;
                h.fill = cpu_fill_hook;
            }
#ifdef GR_WITH_CUDA
            else {
                const int want_g2g = sel_has(sel, "cub-g2g") || sel_has(sel, "cub-g2g-f32");
                r = bench_cuda_plan(cuda, n, t, &g);
                if (r == GR_SUCCESS)
                    r = bench_cuda_group_begin(cuda, &g, want_g2g, sel_has(sel, "tuned") ||
                                                                                     sel_has(sel, "tuned-e2e") ||
                                                                                     sel_has(sel, "exact") ||
                                                                                     sel_has(sel, "exact-e2e"));
                ok = r == GR_SUCCESS;
                if (!ok)
                    snprintf(why, sizeof(why), "%s (needs about %.2f GB of GPU memory: input + copy target)",
                             gr_strerror(r), 2.0 * (double)n * (double)gr_dtype_size(t) / 1e9);
                h.env = cuda;
                h.fill = cuda_fill_hook;
                h.poison = cuda_poison_hook;
            }
#endif
            int all_ok = ok;
            MPI_Allreduce(MPI_IN_PLACE, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
            if (all_ok) {
                run_group(&b, &g, sel, &h);
                if (b.dist)
                    bench_dist_group(b.dist, &g, be == GR_BACKEND_CPU ? cpu.buf : NULL,
#ifdef GR_WITH_CUDA
                                     cuda
#else
                                     NULL
#endif
                    );
            } else
                print_skip(&b, n, t, ok ? "another rank could not allocate it" : why);
            if (be == GR_BACKEND_CPU) {
                free(cpu.buf);
                cpu.buf = NULL;
            }
#ifdef GR_WITH_CUDA
            else if (ok) {
                bench_cuda_group_end(cuda);
            }
#endif
            cli_progress_set((uint64_t)si * (uint64_t)o.ndtypes + (uint64_t)ti + 1);
        }
    cli_progress_end();

    if (rank == 0) {
        FILE *f = b.out;
        if (o.format == CLI_FMT_JSON) {
            fprintf(f, "\n  ],\n  \"wrong_rows\": %lld\n}\n", b.wrong_rows);
        } else {
            if (b.dist)
                bench_dist_summary(b.dist);
            if (b.wrong_rows)
                fprintf(f, "# WRONG: %lld row(s) failed their exact gates and were not timed\n", b.wrong_rows);
            else if (o.check > 0)
                fprintf(f, "# checks: every row matched the exact gates (all ones, iota)\n");
            else
                fprintf(f, "# checks: skipped (--check 0); #wrong is '-'\n");
            if (b.late_rows)
                fprintf(f, "# note: %d row(s) marked: the host queued runs slower than the GPU ran them\n",
                        b.late_rows);
        }
        fflush(f);
    }
    bench_dist_close(b.dist);
#ifdef GR_WITH_CUDA
    bench_cuda_close(cuda);
#endif
    gr_ctx_destroy(ctx);
    long long wrong = b.wrong_rows;
    MPI_Bcast(&wrong, 1, MPI_LONG_LONG, 0, MPI_COMM_WORLD);
    MPI_Finalize();
    return wrong ? CLI_EXIT_FAIL : CLI_EXIT_OK;
}
