/*
 * input.c - `gpureduce --input PATH` (reduce a .npy or raw file) and
 * `gpureduce gen` (write a synthetic dataset as .npy).
 *
 * Bad input is reported by the library: one line from rank 0 naming the file
 * and the problem, and every rank gets the same error code. So these runs end
 * with MPI_Finalize and exit status 1, without MPI_Abort's extra text and
 * without printing a result.
 */
#define _POSIX_C_SOURCE 200809L
#include "cli.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static int g_rank = 0;

/* A failure that is not the input's fault (context, MPI): end the job. */
/* Every rank already agrees on the failure and rank 0 has said why. */
static int input_failed(gr_ctx_t ctx, gr_file_t f)
{
    cli_progress_end();
    gr_file_close(f);
    gr_ctx_destroy(ctx);
    MPI_Finalize();
    return CLI_EXIT_FAIL;
}

/* The progress phase of pass i of n over the file (what: "warm-up" or "run"). */
static void read_phase(const char *path, uint64_t bytes, const char *what, int i, int n)
{
    char label[160];
    if (n > 1 || strcmp(what, "run") != 0)
        snprintf(label, sizeof(label), "reading %s (%s %d of %d)", path, what, i + 1, n);
    else
        snprintf(label, sizeof(label), "reading %s", path);
    cli_progress_begin(label, CLI_PROG_BYTES, bytes, NULL);
}

/* The first option of names[] that was given, or NULL. */
static const char *first_given(const cli_opts_t *o, const char *const *names, int n)
{
    for (int i = 0; i < n; ++i)
        if (cli_given(o, names[i]))
            return names[i];
    return NULL;
}

static int same_bits(const gr_value_t *a, const gr_value_t *b)
{
    if (a->is_integer && !a->overflow && !b->overflow)
        return a->i == b->i;
    return a->overflow == b->overflow && memcmp(&a->f, &b->f, sizeof(double)) == 0;
}

static void json_number(FILE *f, const gr_value_t *v)
{
    if (v->is_integer && !v->overflow)
        fprintf(f, "%lld", (long long)v->i);
    else if (isfinite(v->f))
        fprintf(f, "%.17g", v->f);
    else
        fprintf(f, "null");
}

static const char *format_name(gr_file_format_t f) { return f == GR_FILE_NPY ? "npy" : "raw"; }

/* Timings of one run, slowest rank, in the order they are printed. */
enum { T_READ, T_H2D, T_REDUCE, T_STALL, T_LOCAL, T_COMBINE, T_TOTAL, T_COUNT };
static const char *const t_names[T_COUNT] = {"read", "h2d", "reduce", "stall", "local", "combine", "total"};

/* Timed copies of the H2D reference (gr_file_h2d_reference: the median of 7 after an untimed one). */
#define H2D_REF_COPIES 7

/* What the cuda input pipeline's copies are measured against, on this rank. */
typedef struct h2d_ref {
    int have;          /* measured (cuda backend, data to read, no error) */
    double bytes;      /* per copy: the pipeline's chunk, or the whole shard when smaller */
    double gbps;       /* pinned cudaMemcpy H2D, median of H2D_REF_COPIES */
    double h2d_pct;    /* this rank's pipeline copies (bytes / copy-engine time) as % of gbps */
    double pipe_pct;   /* this rank's end-to-end local rate (bytes / local time) as % of gbps */
} h2d_ref_t;

#ifdef GR_WITH_CUDA
/* The median of n values (sorted in place). */
static double median_of(double *v, int n)
{
    double med, mn, mx;
    stats3(v, n, &med, &mn, &mx);
    return med;
}
#endif

/* The reference on every rank (one rank at a time: ranks may share a GPU),
 * and each rank's pipeline rates against it; the result at rank 0 is the
 * slowest rank's (MIN). Collective. h2d[k], local[k] and bytes: this rank's
 * runs. A failed reference is reported and left out, not fatal. */
static void measure_h2d_ref(gr_ctx_t ctx, const gr_file_info_t *info, int np, const double *h2d,
                            const double *local, uint64_t bytes, int R, h2d_ref_t *ref)
{
    memset(ref, 0, sizeof(*ref));
#ifdef GR_WITH_CUDA
    uint64_t shard = (info->count / (uint64_t)np + (info->count % (uint64_t)np ? 1 : 0)) * info->item_bytes;
    uint64_t copy = info->chunk_bytes < shard ? info->chunk_bytes : shard;
    double mine[3] = {HUGE_VAL, HUGE_VAL, HUGE_VAL}; /* gbps, h2d %, pipeline %; HUGE_VAL: nothing to say */
    int ok = gr_ctx_backend(ctx) == GR_BACKEND_CUDA && copy > 0;
    for (int r = 0; ok && r < np; ++r) {
        if (r == g_rank) {
            double gbps = 0;
            if (gr_file_h2d_reference(ctx, (size_t)copy, &gbps) == GR_SUCCESS && gbps > 0)
                mine[0] = gbps;
        }
        if (MPI_Barrier(MPI_COMM_WORLD) != MPI_SUCCESS)
            cli_die("gpureduce", GR_ERR_MPI, "MPI_Barrier");
    }
    if (ok && mine[0] < HUGE_VAL && bytes > 0) {
        double *hr = calloc((size_t)R, sizeof(double)), *pr = calloc((size_t)R, sizeof(double));
        if (!hr || !pr)
            cli_die("gpureduce", GR_ERR_NOMEM, "allocating timing arrays");
        for (int k = 0; k < R; ++k) {
            hr[k] = h2d[k] > 0 ? (double)bytes / h2d[k] / 1e9 : 0;
            pr[k] = local[k] > 0 ? (double)bytes / local[k] / 1e9 : 0;
        }
        mine[1] = median_of(hr, R) / mine[0] * 100.0;
        mine[2] = median_of(pr, R) / mine[0] * 100.0;
        free(hr);
        free(pr);
    }
    double all[3];
    if (MPI_Reduce(mine, all, 3, MPI_DOUBLE, MPI_MIN, 0, MPI_COMM_WORLD) != MPI_SUCCESS)
        cli_die("gpureduce", GR_ERR_MPI, "gathering the H2D reference");
    if (g_rank == 0 && ok && all[0] < HUGE_VAL) {
        ref->have = 1;
        ref->bytes = (double)copy;
        ref->gbps = all[0];
        ref->h2d_pct = all[1] < HUGE_VAL ? all[1] : 0;
        ref->pipe_pct = all[2] < HUGE_VAL ? all[2] : 0;
    }
#else
    (void)ctx, (void)info, (void)np, (void)h2d, (void)local, (void)bytes, (void)R;
#endif
}

static void stats_text(double v, char *dec, size_t dlen, char *hex, size_t hlen)
{
    snprintf(dec, dlen, "%.17g", v);
    snprintf(hex, hlen, "%a", v);
}

/* Every field, bit for bit (no struct padding is compared). */
int cli_same_stats(const gr_stats_t *a, const gr_stats_t *b)
{
    const double fa[] = {a->sum, a->mean, a->var, a->var_sample, a->min, a->max, a->nanmin, a->nanmax};
    const double fb[] = {b->sum, b->mean, b->var, b->var_sample, b->min, b->max, b->nanmin, b->nanmax};
    return memcmp(fa, fb, sizeof(fa)) == 0 && a->count == b->count && a->nan_count == b->nan_count &&
           a->pinf_count == b->pinf_count && a->ninf_count == b->ninf_count && a->isum == b->isum &&
           a->overflow == b->overflow && a->imin == b->imin && a->imax == b->imax;
}

void cli_stats_gather(int root, int rank, int R, const gr_stats_t *vals, double *t1, double *t2, double *m1,
                      double *m2, gr_stats_t *st, int *repeatable)
{
    if (MPI_Reduce(t1, m1, R, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD) != MPI_SUCCESS ||
        MPI_Reduce(t2, m2, R, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD) != MPI_SUCCESS)
        cli_die("gpureduce", GR_ERR_MPI, "gathering timings");
    *st = vals[0];
    *repeatable = 1;
    if (rank == root)
        for (int k = 1; k < R; ++k)
            if (!cli_same_stats(&vals[k], &vals[0]))
                *repeatable = 0;
    cli_root_to_rank0(root, st, sizeof(*st), repeatable);
}

static void json_double(FILE *f, double v)
{
    if (isfinite(v))
        fprintf(f, "%.17g", v);
    else
        fprintf(f, "null");
}

/* The report of --op stats, for --input files and for synthetic data
 * (main.c): text, CSV or JSON of every gr_stats_t field. */
void cli_print_stats(FILE *out, cli_format_t fmt, const cli_stats_report_t *r, gr_ctx_t ctx)
{
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank != 0) {
        if (fmt != CLI_FMT_CSV)
            report_placements(ctx, MPI_COMM_WORLD, fmt, out);
        return;
    }
    const gr_stats_t *st = &r->st;
    const char *names[] = {"sum", "mean", "var", "var_sample", "min", "max", "nanmin", "nanmax"};
    double v[] = {st->sum, st->mean, st->var, st->var_sample, st->min, st->max, st->nanmin, st->nanmax};
    char dec[64], hex[64];
    double g1 = r->t1 > 0 ? r->bytes / r->t1 / 1e9 : 0.0, gt = r->total > 0 ? r->bytes / r->total / 1e9 : 0.0;
    if (fmt == CLI_FMT_JSON) {
        fprintf(out, "{\n  \"np\": %d,\n", r->np);
        if (r->input) {
            fprintf(out, "  \"input\": ");
            json_string(out, r->input);
            fprintf(out, ",\n  \"dtype\": \"%s\",\n  \"storage\": \"%s\",\n", r->dtype, r->storage_json);
        } else {
            fprintf(out, "  \"n\": %llu,\n  \"gen\": \"%s\",\n  \"seed\": %llu,\n  \"dtype\": \"%s\",\n"
                         "  \"backend\": \"%s\",\n",
                    (unsigned long long)r->n, gr_gen_name(r->gen), (unsigned long long)r->seed, r->dtype, r->backend);
        }
        report_placements(ctx, MPI_COMM_WORLD, fmt, out);
        fprintf(out, ",\n  \"op\": \"stats\",\n  \"stats\": {\n    \"count\": %llu, \"nan\": %llu, \"pinf\": %llu, "
                     "\"ninf\": %llu",
                (unsigned long long)st->count, (unsigned long long)st->nan_count, (unsigned long long)st->pinf_count,
                (unsigned long long)st->ninf_count);
        for (int i = 0; i < 8; ++i) {
            stats_text(v[i], dec, sizeof(dec), hex, sizeof(hex));
            fprintf(out, ",\n    \"%s\": ", names[i]);
            json_double(out, v[i]);
            fprintf(out, ", \"%s_hex\": \"%s\"", names[i], hex);
        }
        if (st->is_integer)
            fprintf(out, ",\n    \"isum\": %lld, \"overflow\": %s, \"imin\": %lld, \"imax\": %lld",
                    (long long)st->isum, st->overflow ? "true" : "false", (long long)st->imin, (long long)st->imax);
        fprintf(out, "\n  },\n  \"repeat\": %d,\n  \"repeatable\": %s,\n  \"time\": {\"%s\": %.9g, "
                     "\"total\": %.9g},\n  \"gbps\": {\"%s\": %.6g, \"aggregate\": %.6g}\n}\n",
                r->repeat, cli_repeatable_json(r->repeatable, r->repeat), r->t1_name, r->t1, r->total, r->t1_name, g1,
                gt);
    } else if (fmt == CLI_FMT_CSV) {
        /* isum, overflow, imin, imax: integers' exact values; empty for floating types */
        if (r->input) {
            fprintf(out, "np,input,dtype,count,nan,pinf,ninf,sum,mean,var,var_sample,min,max,nanmin,nanmax,"
                         "isum,overflow,imin,imax,%s_s,total_s\n%d,",
                    r->t1_name, r->np);
            csv_string(out, r->input);
            fprintf(out, ",%s,%llu,%llu,%llu,%llu", r->dtype, (unsigned long long)st->count,
                    (unsigned long long)st->nan_count, (unsigned long long)st->pinf_count,
                    (unsigned long long)st->ninf_count);
        } else {
            fprintf(out, "np,n,gen,seed,dtype,backend,count,nan,pinf,ninf,sum,mean,var,var_sample,min,max,nanmin,"
                         "nanmax,isum,overflow,imin,imax,%s_s,total_s\n%d,%llu,%s,%llu,%s,%s,%llu,%llu,%llu,%llu",
                    r->t1_name, r->np, (unsigned long long)r->n, gr_gen_name(r->gen), (unsigned long long)r->seed,
                    r->dtype, r->backend, (unsigned long long)st->count, (unsigned long long)st->nan_count,
                    (unsigned long long)st->pinf_count, (unsigned long long)st->ninf_count);
        }
        for (int i = 0; i < 8; ++i)
            fprintf(out, ",%.17g", v[i]);
        if (st->is_integer)
            fprintf(out, ",%lld,%d,%lld,%lld", (long long)st->isum, st->overflow ? 1 : 0, (long long)st->imin,
                    (long long)st->imax);
        else
            fprintf(out, ",,,,");
        fprintf(out, ",%.9g,%.9g\n", r->t1, r->total);
    } else {
        if (r->input)
            fprintf(out, "# gpureduce %s: np %d, input %s (shape %s), dtype %s%s%s, op stats, backend %s, "
                         "repeat %d\n",
                    GR_VERSION_STRING, r->np, r->input, r->shape, r->dtype, r->storage ? " stored as " : "",
                    r->storage ? r->storage : "", r->backend, r->repeat);
        else
            fprintf(out, "# gpureduce %s: np %d, n %llu, dtype %s, op stats, gen %s, seed %llu, backend %s, "
                         "repeat %d\n",
                    GR_VERSION_STRING, r->np, (unsigned long long)r->n, r->dtype, gr_gen_name(r->gen),
                    (unsigned long long)r->seed, r->backend, r->repeat);
        report_placements(ctx, MPI_COMM_WORLD, fmt, out);
        fprintf(out, "%-12s %llu (NaN %llu, +Inf %llu, -Inf %llu)\n", "count", (unsigned long long)st->count,
                (unsigned long long)st->nan_count, (unsigned long long)st->pinf_count,
                (unsigned long long)st->ninf_count);
        for (int i = 0; i < 8; ++i) {
            stats_text(v[i], dec, sizeof(dec), hex, sizeof(hex));
            if (st->is_integer && i == 0 && !st->overflow)
                snprintf(dec, sizeof(dec), "%lld", (long long)st->isum);
            fprintf(out, "%-12s %-24s %s\n", names[i], dec, hex);
        }
        if (st->is_integer) { /* the exact integers (min/max above are their f64 values) */
            if (st->overflow)
                fprintf(out, "%-12s OVERFLOW: the exact sum does not fit in int64\n", "isum");
            else
                fprintf(out, "%-12s %lld\n", "isum", (long long)st->isum);
            fprintf(out, "%-12s %lld\n", "imin", (long long)st->imin);
            fprintf(out, "%-12s %lld\n", "imax", (long long)st->imax);
        }
        char runs[32] = "1 run";
        if (r->repeat > 1)
            snprintf(runs, sizeof(runs), "median of %d runs", r->repeat);
        fprintf(out, "%-12s %s %.3f GB/s, end to end %.3f GB/s (slowest rank, %s)\n", "bandwidth", r->t1_name, g1,
                gt, runs);
        cli_print_repeatable(out, r->repeatable, r->repeat);
    }
    fflush(out);
}

/* --input PATH --op stats: one pass, every statistic (gr_stats_t). */
static int run_stats(cli_opts_t *o, gr_ctx_t ctx, gr_file_t f, const gr_file_info_t *info, int R, int W)
{
    int np;
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    if (cli_given(o, "mode")) {
        gr_file_close(f);
        gr_ctx_destroy(ctx);
        return cli_usage_error("gpureduce", "--mode does not apply to --op stats: the sum is exact, the variance one-pass");
    }
    gr_stats_t *vals = calloc((size_t)R, sizeof(gr_stats_t));
    double *tr = calloc((size_t)R, sizeof(double)), *tt = calloc((size_t)R, sizeof(double));
    double *mr = calloc((size_t)R, sizeof(double)), *mt = calloc((size_t)R, sizeof(double));
    if (!vals || !tr || !tt || !mr || !mt)
        cli_die("gpureduce", GR_ERR_NOMEM, "allocating result arrays");
    const uint64_t data_bytes = info->count * info->item_bytes;
    for (int w = 0; w < W; ++w) {
        gr_stats_t v;
        read_phase(info->path, data_bytes, "warm-up", w, W);
        if (gr_stats_file(ctx, f, &o->desc, &v, NULL) != GR_SUCCESS)
            return input_failed(ctx, f);
    }
    for (int k = 0; k < R; ++k) {
        gr_io_timing_t io;
        if (MPI_Barrier(MPI_COMM_WORLD) != MPI_SUCCESS)
            cli_die("gpureduce", GR_ERR_MPI, "MPI_Barrier");
        read_phase(info->path, data_bytes, "run", k, R);
        if (gr_stats_file(ctx, f, &o->desc, &vals[k], &io) != GR_SUCCESS)
            return input_failed(ctx, f);
        tr[k] = io.read;
        tt[k] = io.total;
    }
    cli_progress_end();
    gr_stats_t st;
    int repeatable;
    cli_stats_gather(o->desc.root, g_rank, R, vals, tr, tt, mr, mt, &st, &repeatable);
    cli_stats_report_t rep; /* filled at rank 0; every rank calls cli_print_stats (the placement is collective) */
    memset(&rep, 0, sizeof(rep));
    if (g_rank == 0) {
        double rmed, rmin, rmax, tmed, tmin, tmax;
        stats3(mr, R, &rmed, &rmin, &rmax);
        stats3(mt, R, &tmed, &tmin, &tmax);
        rep.np = np;
        rep.repeat = R;
        rep.repeatable = repeatable;
        rep.input = info->path;
        rep.shape = info->shape;
        rep.storage = info->storage != GR_STORE_NATIVE ? gr_storage_name(info->storage) : NULL;
        rep.storage_json = gr_storage_name(info->storage);
        rep.dtype = gr_dtype_name(info->dtype);
        rep.backend = "host pass";
        rep.t1_name = "read";
        rep.t1 = rmed;
        rep.total = tmed;
        rep.bytes = (double)info->count * (double)info->item_bytes;
        rep.st = st;
    }
    cli_print_stats(stdout, o->format, &rep, ctx);
    free(vals);
    free(tr);
    free(tt);
    free(mr);
    free(mt);
    gr_file_close(f);
    gr_ctx_destroy(ctx);
    int status = repeatable ? CLI_EXIT_OK : CLI_EXIT_FAIL;
    MPI_Bcast(&status, 1, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Finalize();
    return status;
}

int cli_input_run(cli_opts_t *o)
{
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    int np;
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    static const char *const synthetic[] = {"n", "per-rank", "gen", "seed", "verify", "topo"};
    const char *bad = first_given(o, synthetic, 6);
    if (bad) {
        char m[160];
        snprintf(m, sizeof(m), "--%s does not apply to --input: the values come from the file", bad);
        return cli_usage_error("gpureduce", m);
    }
    if (o->desc.root >= np) {
        char m[128];
        snprintf(m, sizeof(m), "--root %d: the job has only %d rank(s)", o->desc.root, np);
        return cli_usage_error("gpureduce", m);
    }
    int R = cli_given(o, "repeat") ? o->repeat : 1;    /* a file is read once unless asked */
    int W = cli_given(o, "warmup") ? o->warmup : 0;

    gr_ctx_t ctx = NULL;
    gr_result_t r = gr_ctx_create(MPI_COMM_WORLD, &o->cfg, &ctx);
    if (r != GR_SUCCESS)
        cli_die("gpureduce", r, "creating the context");
    gr_backend_t backend = gr_ctx_backend(ctx);

    gr_file_config_t fc;
    gr_file_config_init(&fc);
    fc.have_dtype = cli_given(o, "dtype");
    fc.dtype = o->desc.dtype;
    fc.offset = o->offset;
    fc.chunk_bytes = o->chunk;
    gr_file_t f = NULL;
    r = gr_file_open(ctx, o->input, &fc, &f);
    if (r != GR_SUCCESS)
        return input_failed(ctx, NULL);
    gr_file_info_t info;
    gr_file_get_info(f, &info);
    o->desc.dtype = info.dtype;
    if (o->stats)
        return run_stats(o, ctx, f, &info, R, W);
    char why[256];
    if (gr_desc_check(&o->desc, why, sizeof(why)) != GR_SUCCESS) {
        gr_file_close(f);
        gr_ctx_destroy(ctx);
        char m[400];
        snprintf(m, sizeof(m), "input '%s' holds %s: %s", o->input, gr_dtype_name(info.dtype), why);
        return cli_usage_error("gpureduce", m);
    }

    double *t[T_COUNT], *tm[T_COUNT];
    for (int k = 0; k < T_COUNT; ++k) {
        t[k] = calloc((size_t)R, sizeof(double));
        tm[k] = calloc((size_t)R, sizeof(double));
        if (!t[k] || !tm[k])
            cli_die("gpureduce", GR_ERR_NOMEM, "allocating timing arrays");
    }
    gr_value_t *vals = calloc((size_t)R, sizeof(gr_value_t));
    if (!vals)
        cli_die("gpureduce", GR_ERR_NOMEM, "allocating result arrays");
    uint64_t chunks = 0, my_bytes = 0;
    double *my_h2d = calloc((size_t)R, sizeof(double)), *my_local = calloc((size_t)R, sizeof(double));
    if (!my_h2d || !my_local)
        cli_die("gpureduce", GR_ERR_NOMEM, "allocating timing arrays");
    const uint64_t data_bytes = info.count * info.item_bytes;
    for (int w = 0; w < W; ++w) {
        gr_value_t v;
        read_phase(info.path, data_bytes, "warm-up", w, W);
        if (gr_reduce_file(ctx, f, &o->desc, &v, NULL) != GR_SUCCESS)
            return input_failed(ctx, f);
    }
    for (int k = 0; k < R; ++k) {
        gr_io_timing_t io;
        if (MPI_Barrier(MPI_COMM_WORLD) != MPI_SUCCESS)
            cli_die("gpureduce", GR_ERR_MPI, "MPI_Barrier");
        read_phase(info.path, data_bytes, "run", k, R);
        if (gr_reduce_file(ctx, f, &o->desc, &vals[k], &io) != GR_SUCCESS)
            return input_failed(ctx, f);
        t[T_READ][k] = io.read;
        t[T_H2D][k] = io.h2d;
        t[T_REDUCE][k] = io.reduce;
        t[T_STALL][k] = io.stall;
        t[T_LOCAL][k] = io.local;
        t[T_COMBINE][k] = io.combine;
        t[T_TOTAL][k] = io.total;
        chunks = io.chunks;
        my_bytes = io.bytes;
        my_h2d[k] = io.h2d;
        my_local[k] = io.local;
    }
    cli_progress_end();
    for (int k = 0; k < T_COUNT; ++k)
        if (MPI_Reduce(t[k], tm[k], R, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD) != MPI_SUCCESS)
            cli_die("gpureduce", GR_ERR_MPI, "gathering timings");
    h2d_ref_t ref;
    measure_h2d_ref(ctx, &info, np, my_h2d, my_local, my_bytes, R, &ref);
    free(my_h2d);
    free(my_local);

    gr_value_t res = vals[0];
    int repeatable = 1;
    if (g_rank == o->desc.root)
        for (int k = 1; k < R; ++k)
            if (!same_bits(&vals[k], &vals[0]))
                repeatable = 0;
    cli_root_to_rank0(o->desc.root, &res, sizeof(res), &repeatable);

    FILE *out = stdout;
    if (g_rank == 0) {
        double med[T_COUNT], mn[T_COUNT], mx[T_COUNT];
        double *tmp = malloc(sizeof(double) * (size_t)R);
        if (!tmp)
            cli_die("gpureduce", GR_ERR_NOMEM, "allocating timing arrays");
        for (int k = 0; k < T_COUNT; ++k) {
            memcpy(tmp, tm[k], sizeof(double) * (size_t)R);
            stats3(tmp, R, &med[k], &mn[k], &mx[k]);
        }
        free(tmp);
        double bytes = (double)info.count * (double)info.item_bytes; /* as stored in the file */
        double gb_read = med[T_READ] > 0 ? bytes / med[T_READ] / 1e9 : 0;
        double gb_h2d = med[T_H2D] > 0 ? bytes / med[T_H2D] / 1e9 : 0;
        double gb_reduce = med[T_REDUCE] > 0 ? bytes / med[T_REDUCE] / 1e9 : 0;
        double gb_pipe = med[T_LOCAL] > 0 ? bytes / med[T_LOCAL] / 1e9 : 0;
        double gb_total = med[T_TOTAL] > 0 ? bytes / med[T_TOTAL] / 1e9 : 0;
        /* copies to a GPU were timed (the cuda stream): else no h2d figure means anything */
        const int have_h2d = mx[T_H2D] > 0;
        char dec[64], hex[64];
        value_text(&res, dec, sizeof(dec), hex, sizeof(hex));
        char opname[32];
        snprintf(opname, sizeof(opname), "%s", gr_op_name(o->desc.op.kind));
        if (o->desc.op.kind == GR_OP_POWSUM)
            snprintf(opname, sizeof(opname), "powsum:%d", o->desc.op.power);
        char dtype[48];
        snprintf(dtype, sizeof(dtype), "%s", gr_dtype_name(info.dtype));
        if (info.storage != GR_STORE_NATIVE)
            snprintf(dtype, sizeof(dtype), "%s (stored as %s)", gr_dtype_name(info.dtype), gr_storage_name(info.storage));
        char version[16] = "";
        if (info.format == GR_FILE_NPY)
            snprintf(version, sizeof(version), " v%d.0", info.npy_version);

        if (o->format == CLI_FMT_TABLE) {
            fprintf(out, "# gpureduce %s: np %d, input %s (%s%s%s%s%s, shape %s, data at byte %llu)\n",
                    GR_VERSION_STRING, np, info.path, format_name(info.format), version,
                    info.descr[0] ? ", descr '" : "", info.descr, info.descr[0] ? "'" : "", info.shape,
                    (unsigned long long)info.data_offset);
            fprintf(out, "# n %llu, dtype %s, op %s, mode %s, backend %s, chunk %llu bytes (%llu reads per rank), "
                         "repeat %d, warmup %d\n",
                    (unsigned long long)info.count, dtype, opname, gr_mode_name(o->desc.mode),
                    gr_backend_name(backend), (unsigned long long)info.chunk_bytes, (unsigned long long)chunks, R, W);
        } else if (o->format == CLI_FMT_JSON) {
            fprintf(out, "{\n  \"np\": %d,\n  \"input\": {\"path\": ", np);
            json_string(out, info.path);
            fprintf(out, ", \"format\": \"%s\", \"npy_version\": %d, \"descr\": ", format_name(info.format),
                    info.npy_version);
            json_string(out, info.descr);
            fprintf(out, ", \"shape\": ");
            json_string(out, info.shape);
            fprintf(out, ", \"storage\": \"%s\", \"data_offset\": %llu, \"file_bytes\": %llu, \"chunk_bytes\": %llu, "
                         "\"reads\": %llu},\n",
                    gr_storage_name(info.storage), (unsigned long long)info.data_offset, (unsigned long long)info.file_bytes,
                    (unsigned long long)info.chunk_bytes, (unsigned long long)chunks);
            fprintf(out, "  \"n\": %llu,\n  \"dtype\": \"%s\",\n  \"op\": \"%s\",\n  \"mode\": \"%s\",\n"
                         "  \"backend\": \"%s\",\n",
                    (unsigned long long)info.count, gr_dtype_name(info.dtype), opname, gr_mode_name(o->desc.mode),
                    gr_backend_name(backend));
        }
        fflush(out);
        if (o->format != CLI_FMT_CSV)
            report_placements(ctx, MPI_COMM_WORLD, o->format, out);
        if (o->format == CLI_FMT_TABLE) {
            fprintf(out, "%-12s %-24s %-24s backend %s%s\n", "result", dec, hex, gr_backend_name(backend),
                    res.overflow ? "  OVERFLOW: the exact integer result does not fit in int64" : "");
            fprintf(out, "%-12s %12s %12s %12s\n", "time (us)", "median", "min", "max");
            for (int k = 0; k < T_COUNT; ++k)
                if (k != T_H2D || have_h2d)
                    fprintf(out, "%-12s %12.2f %12.2f %12.2f%s\n", t_names[k], med[k] * 1e6, mn[k] * 1e6,
                            mx[k] * 1e6, k == 0 ? "   (slowest rank)" : "");
            char h2d_text[48] = "";
            if (have_h2d)
                snprintf(h2d_text, sizeof(h2d_text), "h2d %.3f GB/s, ", gb_h2d);
            fprintf(out, "%-12s read %.3f GB/s, %sreduce %.3f GB/s, pipeline %.3f GB/s, end to end "
                         "%.3f GB/s (aggregate, %.0f bytes)\n",
                    "bandwidth", gb_read, h2d_text, gb_reduce, gb_pipe, gb_total, bytes);
            if (ref.have) {
                char pct[48] = ""; /* the pipeline's own copies, when they were timed */
                if (have_h2d)
                    snprintf(pct, sizeof(pct), "pipeline H2D %.1f%%, ", ref.h2d_pct);
                fprintf(out, "%-12s pinned cudaMemcpy H2D %.3f GB/s (%.0f-byte copies, median of %d); %spipeline end "
                             "to end %.1f%% of it (slowest rank)\n",
                        "h2d ref", ref.gbps, ref.bytes, H2D_REF_COPIES, pct, ref.pipe_pct);
            }
            cli_print_repeatable(out, repeatable, R);
        } else if (o->format == CLI_FMT_CSV) {
            fprintf(out, "np,input,format,n,dtype,op,mode,backend,chunk_bytes,run,result,result_hex,overflow,read_s,"
                         "reduce_s,local_s,combine_s,total_s,read_gbps,reduce_gbps,gbps,h2d_s,h2d_gbps\n");
            for (int k = 0; k < R; ++k) {
                char d2[64], h2[64];
                gr_value_t vk = g_rank == o->desc.root ? vals[k] : res;
                value_text(&vk, d2, sizeof(d2), h2, sizeof(h2));
                fprintf(out, "%d,", np);
                csv_string(out, info.path);
                fprintf(out, ",%s,%llu,%s,%s,%s,%s,%llu,%d,%s,%s,%d,%.9g,%.9g,%.9g,%.9g,%.9g,%.6g,%.6g,%.6g,",
                        format_name(info.format), (unsigned long long)info.count,
                        gr_dtype_name(info.dtype), opname, gr_mode_name(o->desc.mode), gr_backend_name(backend),
                        (unsigned long long)info.chunk_bytes, k, d2, h2, vk.overflow, tm[T_READ][k], tm[T_REDUCE][k],
                        tm[T_LOCAL][k], tm[T_COMBINE][k], tm[T_TOTAL][k],
                        tm[T_READ][k] > 0 ? bytes / tm[T_READ][k] / 1e9 : 0.0,
                        tm[T_REDUCE][k] > 0 ? bytes / tm[T_REDUCE][k] / 1e9 : 0.0,
                        tm[T_TOTAL][k] > 0 ? bytes / tm[T_TOTAL][k] / 1e9 : 0.0);
                if (have_h2d) /* h2d_s, h2d_gbps: empty without timed copies to a GPU */
                    fprintf(out, "%.9g,%.6g", tm[T_H2D][k], tm[T_H2D][k] > 0 ? bytes / tm[T_H2D][k] / 1e9 : 0.0);
                else
                    fputc(',', out);
                fputc('\n', out);
            }
        } else {
            fprintf(out, ",\n  \"result\": ");
            json_number(out, &res);
            fprintf(out, ",\n  \"result_hex\": \"%s\",\n  \"result_str\": \"%s\",\n  \"overflow\": %s,\n", hex, dec,
                    res.overflow ? "true" : "false");
            fprintf(out, "  \"count\": %llu,\n  \"repeat\": %d,\n  \"warmup\": %d,\n  \"repeatable\": %s,\n",
                    (unsigned long long)res.count, R, W, cli_repeatable_json(repeatable, R));
            fprintf(out, "  \"time\": {\n");
            /* time.h2d and gbps.h2d: null without timed copies to a GPU */
            for (int k = 0; k < T_COUNT; ++k)
                if (k == T_H2D && !have_h2d)
                    fprintf(out, "    \"%s\": null,\n", t_names[k]);
                else
                    fprintf(out, "    \"%s\": {\"median\": %.9g, \"min\": %.9g, \"max\": %.9g}%s\n", t_names[k],
                            med[k], mn[k], mx[k], k + 1 < T_COUNT ? "," : "");
            fprintf(out, "  },\n  \"gbps\": {\"read\": %.6g, \"h2d\": ", gb_read);
            if (have_h2d)
                fprintf(out, "%.6g", gb_h2d);
            else
                fprintf(out, "null");
            fprintf(out, ", \"reduce\": %.6g, \"pipeline\": %.6g, \"aggregate\": %.6g},\n", gb_reduce, gb_pipe,
                    gb_total);
            if (ref.have) {
                char pct[32] = "null"; /* h2d_pct: null when the pipeline's copies were not timed */
                if (have_h2d)
                    snprintf(pct, sizeof(pct), "%.4g", ref.h2d_pct);
                fprintf(out, "  \"h2d_reference\": {\"what\": \"pinned cudaMemcpy H2D\", \"copy_bytes\": %.0f, "
                             "\"copies\": %d, \"gbps\": %.6g, \"h2d_pct\": %s, \"pipeline_pct\": %.4g}\n}\n",
                        ref.bytes, H2D_REF_COPIES, ref.gbps, pct, ref.pipe_pct);
            } else
                fprintf(out, "  \"h2d_reference\": null\n}\n");
        }
        fflush(out);
    } else if (o->format != CLI_FMT_CSV) {
        report_placements(ctx, MPI_COMM_WORLD, o->format, out);
    }

    for (int k = 0; k < T_COUNT; ++k) {
        free(t[k]);
        free(tm[k]);
    }
    free(vals);
    gr_file_close(f);
    gr_ctx_destroy(ctx);
    int status = repeatable ? CLI_EXIT_OK : CLI_EXIT_FAIL;
    MPI_Bcast(&status, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (status != CLI_EXIT_OK && g_rank == 0)
        fprintf(stderr, "gpureduce: repeated runs gave different bits\n");
    MPI_Finalize();
    return status;
}

/* Same file: the same path, or the same device and inode. */
static int same_file(const char *a, const char *b)
{
    if (!strcmp(a, b))
        return 1;
    struct stat sa, sb;
    return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

int cli_gen_run(cli_opts_t *o)
{
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    int np;
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    if (!o->out)
        return cli_usage_error("gpureduce", "gen needs --out PATH (the .npy file to write)");
    if (o->input)
        return cli_usage_error("gpureduce", same_file(o->input, o->out)
                                     ? "gen: refusing to write over the --input file"
                                     : "gen writes --out; --input does not apply to gen");
    if (!o->have_n && !o->have_per_rank)
        return cli_usage_error("gpureduce", "gen needs --n SIZE (or --per-rank SIZE): how many elements to write");
    static const char *const reduce_only[] = {"op", "mode", "repeat", "warmup", "verify", "root", "all-ranks",
                                              "topo", "offset", "cuda-grid", "cuda-block"};
    const char *bad = first_given(o, reduce_only, (int)(sizeof(reduce_only) / sizeof(reduce_only[0])));
    if (bad) {
        char m[160];
        snprintf(m, sizeof(m), "--%s does not apply to gen", bad);
        return cli_usage_error("gpureduce", m);
    }
    uint64_t n = 0;
    int bad_count = cli_synthetic_count(o, np, &n);
    if (bad_count)
        return bad_count;
    /* the generators run on the host: no GPU is needed unless asked for */
    if (!cli_given(o, "backend"))
        o->cfg.backend = GR_BACKEND_CPU;
    gr_ctx_t ctx = NULL;
    gr_result_t r = gr_ctx_create(MPI_COMM_WORLD, &o->cfg, &ctx);
    if (r != GR_SUCCESS)
        cli_die("gpureduce", r, "creating the context");
    char label[160];
    snprintf(label, sizeof(label), "writing %s", o->out);
    cli_progress_begin(label, CLI_PROG_BYTES, n * (uint64_t)gr_dtype_size(o->desc.dtype), NULL);
    double t0 = MPI_Wtime();
    r = gr_file_write_synthetic(ctx, o->out, o->desc.dtype, o->gen, o->seed, n, o->force, o->chunk);
    double dt = MPI_Wtime() - t0;
    cli_progress_end();
    gr_ctx_destroy(ctx);
    if (r != GR_SUCCESS) {
        MPI_Finalize();
        return CLI_EXIT_FAIL;
    }
    if (g_rank == 0) {
        double bytes = (double)n * (double)gr_dtype_size(o->desc.dtype);
        if (o->format == CLI_FMT_JSON) {
            printf("{\n  \"out\": ");
            json_string(stdout, o->out);
            printf(",\n  \"np\": %d,\n  \"n\": %llu,\n  \"dtype\": \"%s\",\n  \"gen\": \"%s\",\n  \"seed\": %llu,\n"
                   "  \"data_bytes\": %.0f,\n  \"seconds\": %.6g,\n  \"gbps\": %.6g\n}\n",
                   np, (unsigned long long)n, gr_dtype_name(o->desc.dtype), gr_gen_name(o->gen),
                   (unsigned long long)o->seed, bytes, dt, dt > 0 ? bytes / dt / 1e9 : 0.0);
        } else if (o->format == CLI_FMT_CSV) {
            printf("out,np,n,dtype,gen,seed,data_bytes,seconds,gbps\n");
            csv_string(stdout, o->out);
            printf(",%d,%llu,%s,%s,%llu,%.0f,%.6g,%.6g\n", np, (unsigned long long)n, gr_dtype_name(o->desc.dtype),
                   gr_gen_name(o->gen), (unsigned long long)o->seed, bytes, dt, dt > 0 ? bytes / dt / 1e9 : 0.0);
        } else {
            printf("wrote %s: n %llu, dtype %s, gen %s, seed %llu, np %d, %.0f data bytes in %.3f s (%.3f GB/s)\n",
                   o->out, (unsigned long long)n, gr_dtype_name(o->desc.dtype), gr_gen_name(o->gen),
                   (unsigned long long)o->seed, np, bytes, dt, dt > 0 ? bytes / dt / 1e9 : 0.0);
        }
        fflush(stdout);
    }
    MPI_Finalize();
    return CLI_EXIT_OK;
}
