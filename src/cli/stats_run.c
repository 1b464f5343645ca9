/*
 * stats_run.c - `gpureduce --op stats` on synthetic data (--gen, --n or
 * --per-rank, --dtype), any backend and any np: the one-pass statistics of
 * each rank's shard (the GPU kernel on cuda, the host pass on cpu), combined
 * in rank order. The report is input.c's (cli_print_stats), as for --input.
 */
#include "cli.h"

#include <stdlib.h>
#include <string.h>

int cli_stats_run(cli_opts_t *o)
{
    int np, rank;
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (o->desc.root >= np) {
        char m[128];
        snprintf(m, sizeof(m), "--root %d: the job has only %d rank(s)", o->desc.root, np);
        return cli_usage_error("gpureduce", m);
    }
    if (cli_given(o, "mode"))
        return cli_usage_error("gpureduce", "--mode does not apply to --op stats: the sum is exact, the variance one-pass");
    if (o->verify)
        return cli_usage_error("gpureduce", "--verify does not apply to --op stats; the gpu test suite (label gpu) "
                                            "checks the GPU statistics against the host's");
    char why[256];
    if (o->desc.dtype != GR_F32 && o->desc.dtype != GR_F64 && o->desc.dtype != GR_I32 && o->desc.dtype != GR_I64) {
        snprintf(why, sizeof(why), "--op stats on synthetic data takes --dtype f32, f64, i32 or i64, not %s (f16/bf16 "
                                   "files are widened to f32: use --input)",
                 gr_dtype_name(o->desc.dtype));
        return cli_usage_error("gpureduce", why);
    }
    uint64_t n = 0;
    int bad_count = cli_synthetic_count(o, np, &n);
    if (bad_count)
        return bad_count;

    gr_ctx_t ctx = NULL;
    gr_result_t r = gr_ctx_create(MPI_COMM_WORLD, &o->cfg, &ctx);
    if (r != GR_SUCCESS)
        cli_die("gpureduce", r, "creating the context");
    gr_backend_t backend = gr_ctx_backend(ctx);
    gr_buffer_t buf = NULL;
    cli_progress_generating(n, o->desc.dtype, o->gen);
    r = gr_buffer_create_synthetic(ctx, o->desc.dtype, o->gen, o->seed, n, &buf);
    if (r != GR_SUCCESS)
        cli_die("gpureduce", r, "creating the synthetic dataset");
    cli_progress_end();

    int R = o->repeat;
    gr_stats_t *vals = calloc((size_t)R, sizeof(gr_stats_t));
    double *tl = calloc((size_t)R, sizeof(double)), *tt = calloc((size_t)R, sizeof(double));
    double *ml = calloc((size_t)R, sizeof(double)), *mt = calloc((size_t)R, sizeof(double));
    if (!vals || !tl || !tt || !ml || !mt)
        cli_die("gpureduce", GR_ERR_NOMEM, "allocating result arrays");
    if (o->warmup > 0)
        cli_progress_begin("warm-up", CLI_PROG_RUNS, (uint64_t)o->warmup, NULL);
    for (int w = 0; w < o->warmup; ++w) {
        gr_stats_t v;
        r = gr_stats_buffer(ctx, buf, &o->desc, &v, NULL);
        if (r != GR_SUCCESS)
            cli_die("gpureduce", r, "a warm-up run of --op stats");
        cli_progress_set((uint64_t)w + 1);
    }
    cli_progress_begin("timed runs", CLI_PROG_RUNS, (uint64_t)R, NULL);
    for (int k = 0; k < R; ++k) {
        gr_timing_t t;
        if (MPI_Barrier(MPI_COMM_WORLD) != MPI_SUCCESS)
            cli_die("gpureduce", GR_ERR_MPI, "MPI_Barrier");
        r = gr_stats_buffer(ctx, buf, &o->desc, &vals[k], &t);
        if (r != GR_SUCCESS)
            cli_die("gpureduce", r, "--op stats");
        tl[k] = t.local;
        tt[k] = t.total;
        cli_progress_set((uint64_t)k + 1);
    }
    cli_progress_end();
    gr_stats_t st;
    int repeatable;
    cli_stats_gather(o->desc.root, rank, R, vals, tl, tt, ml, mt, &st, &repeatable);
    cli_stats_report_t rep; /* filled at rank 0; every rank calls cli_print_stats (the placement is collective) */
    memset(&rep, 0, sizeof(rep));
    if (rank == 0) {
        double lmed, lmin, lmax, tmed, tmin, tmax;
        stats3(ml, R, &lmed, &lmin, &lmax);
        stats3(mt, R, &tmed, &tmin, &tmax);
        rep.np = np;
        rep.repeat = R;
        rep.repeatable = repeatable;
        rep.n = n;
        rep.seed = o->seed;
        rep.gen = o->gen;
        rep.dtype = gr_dtype_name(o->desc.dtype);
        rep.backend = gr_backend_name(backend);
        rep.t1_name = "local";
        rep.t1 = lmed;
        rep.total = tmed;
        rep.bytes = (double)n * (double)gr_dtype_size(o->desc.dtype);
        rep.st = st;
    }
    cli_print_stats(stdout, o->format, &rep, ctx);
    free(vals);
    free(tl);
    free(tt);
    free(ml);
    free(mt);
    gr_buffer_destroy(buf);
    gr_ctx_destroy(ctx);
    int status = repeatable ? CLI_EXIT_OK : CLI_EXIT_FAIL;
    MPI_Bcast(&status, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (status != CLI_EXIT_OK && rank == 0)
        fprintf(stderr, "gpureduce: repeated runs of --op stats gave different bits\n");
    MPI_Finalize();
    return status;
}
