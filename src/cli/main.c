/*
 * main.c - the gpureduce command line. Owns argv, output and the exit
 * status; everything numeric happens in libgpureduce.
 */
#define _DEFAULT_SOURCE /* readlink */
#include "cli.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int g_rank = 0;

/* A runtime failure: say so once per rank that saw it, end the whole job. */
/* Largest |term| a generator can produce for op, or 0 when unbounded. */
static double term_bound(gr_gen_t g, const gr_desc_t *d)
{
    double x;
    switch (g) {
    case GR_GEN_ONES:
        x = 1;
        break;
    case GR_GEN_IOTA:
        x = 999;
        break;
    case GR_GEN_RANDINT:
        x = 9;
        break;
    default:
        return 0;
    }
    int p = d->op.kind == GR_OP_SUMSQ ? 2 : d->op.kind == GR_OP_POWSUM ? d->op.power : 1;
    return pow(x, p);
}

/* The run must match the reference bit for bit (docs/CLI.md: --verify). */
static int must_be_exact(gr_gen_t g, uint64_t n, const gr_desc_t *d)
{
    if (d->dtype == GR_I32 || d->dtype == GR_I64)
        return 1;
    if (d->mode == GR_MODE_EXACT || d->op.kind == GR_OP_MIN || d->op.kind == GR_OP_MAX)
        return 1;
    double b = term_bound(g, d);
    /* integer terms whose every partial sum stays below 2^53 are exact in f64 */
    return b > 0 && b * (double)n < 9007199254740992.0;
}

static int same_value(const gr_value_t *a, const gr_value_t *b)
{
    if (a->is_integer && !a->overflow && !b->overflow)
        return a->i == b->i;
    if (a->overflow != b->overflow)
        return 0;
    return memcmp(&a->f, &b->f, sizeof(double)) == 0;
}

static void print_time_json(FILE *f, const char *name, double *v, int n, int last)
{
    double med, mn, mx;
    stats3(v, n, &med, &mn, &mx);
    fprintf(f, "    \"%s\": {\"median\": %.9g, \"min\": %.9g, \"max\": %.9g}%s\n", name, med, mn, mx, last ? "" : ",");
}

static void print_json_number(FILE *f, const gr_value_t *v)
{
    if (v->is_integer && !v->overflow)
        fprintf(f, "%lld", (long long)v->i);
    else if (isfinite(v->f))
        fprintf(f, "%.17g", v->f);
    else
        fprintf(f, "null");
}

static int run_reduce(cli_opts_t *o)
{
    int np;
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    if (o->desc.root >= np) {
        char m[128];
        snprintf(m, sizeof(m), "--root %d: the job has only %d rank(s)", o->desc.root, np);
        return cli_usage_error("gpureduce", m);
    }
    char why[256];
    if (gr_desc_check(&o->desc, why, sizeof(why)) != GR_SUCCESS)
        return cli_usage_error("gpureduce", why);
    uint64_t n = 0;
    int bad_count = cli_synthetic_count(o, np, &n);
    if (bad_count)
        return bad_count;

    gr_ctx_t ctx = NULL;
    gr_result_t r = gr_ctx_create(MPI_COMM_WORLD, &o->cfg, &ctx);
    if (r != GR_SUCCESS)
        cli_die("gpureduce", r, "creating the context");
    gr_backend_t backend = gr_ctx_backend(ctx);
    FILE *out = stdout;

    if (o->topo) {
        if (g_rank == 0 && o->format == CLI_FMT_JSON) {
            fprintf(out, "{\n  \"np\": %d,\n  \"backend\": \"%s\",\n", np, gr_backend_name(backend));
        } else if (g_rank == 0 && o->format == CLI_FMT_TABLE) {
            fprintf(out, "# gpureduce %s placement: np %d, backend %s\n", GR_VERSION_STRING, np,
                    gr_backend_name(backend));
        }
        report_placements(ctx, MPI_COMM_WORLD, o->format, out);
        if (g_rank == 0 && o->format == CLI_FMT_JSON)
            fprintf(out, "\n}\n");
        fflush(out);
        gr_ctx_destroy(ctx);
        MPI_Finalize();
        return CLI_EXIT_OK;
    }

    gr_buffer_t buf = NULL;
    cli_progress_generating(n, o->desc.dtype, o->gen);
    r = gr_buffer_create_synthetic(ctx, o->desc.dtype, o->gen, o->seed, n, &buf);
    if (r != GR_SUCCESS)
        cli_die("gpureduce", r, "creating the synthetic dataset");
    cli_progress_end();

    int R = o->repeat;
    double *tl = calloc((size_t)R, sizeof(double)), *tc = calloc((size_t)R, sizeof(double)),
           *tt = calloc((size_t)R, sizeof(double));
    double *ml = calloc((size_t)R, sizeof(double)), *mc = calloc((size_t)R, sizeof(double)),
           *mt = calloc((size_t)R, sizeof(double));
    gr_value_t *vals = calloc((size_t)R, sizeof(gr_value_t));
    if (!tl || !tc || !tt || !ml || !mc || !mt || !vals)
        cli_die("gpureduce", GR_ERR_NOMEM, "allocating timing arrays");

    cli_warmup("gpureduce", ctx, MPI_COMM_WORLD, buf, &o->desc, o->warmup, 1);
    cli_progress_begin("timed runs", CLI_PROG_RUNS, (uint64_t)R, NULL);
    for (int k = 0; k < R; ++k) {
        gr_timing_t t;
        if (MPI_Barrier(MPI_COMM_WORLD) != MPI_SUCCESS)
            cli_die("gpureduce", GR_ERR_MPI, "MPI_Barrier");
        r = gr_reduce_buffer(ctx, buf, &o->desc, &vals[k], &t);
        if (r != GR_SUCCESS)
            cli_die("gpureduce", r, "the reduction");
        tl[k] = t.local;
        tc[k] = t.combine;
        tt[k] = t.total;
        cli_progress_set((uint64_t)k + 1);
    }
    cli_progress_end();
    /* What a user waits for: the slowest rank, run by run. */
    if (MPI_Reduce(tl, ml, R, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD) != MPI_SUCCESS ||
        MPI_Reduce(tc, mc, R, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD) != MPI_SUCCESS ||
        MPI_Reduce(tt, mt, R, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD) != MPI_SUCCESS)
        cli_die("gpureduce", GR_ERR_MPI, "gathering timings");

    /* The result lives on the root; rank 0 prints, so move it there. */
    gr_value_t res = vals[0];
    int repeatable = 1;
    if (g_rank == o->desc.root)
        for (int k = 1; k < R; ++k)
            if (!same_value(&vals[k], &vals[0]))
                repeatable = 0;
    cli_root_to_rank0(o->desc.root, &res, sizeof(res), &repeatable);

    int verify_fail = 0;
    gr_value_t ref;
    memset(&ref, 0, sizeof(ref));
    int exact_needed = must_be_exact(o->gen, n, &o->desc);
    double abs_err = 0, rel_err = 0;
    if (o->verify) {
        gr_desc_t rd = o->desc;
        rd.root = 0;
        rd.all_ranks = 0;
        cli_progress_begin("--verify: the exact CPU reference", CLI_PROG_TIME, 0, NULL);
        r = gr_reference_synthetic(ctx, o->gen, o->seed, n, &rd, &ref);
        if (r != GR_SUCCESS)
            cli_die("gpureduce", r, "the CPU reference for --verify");
        cli_progress_end();
        if (g_rank == 0) {
            if (res.is_integer && !res.overflow && !ref.overflow) {
                abs_err = fabs((double)res.i - (double)ref.i);
            } else {
                abs_err = fabs(res.f - ref.f);
            }
            double scale = fabs(ref.is_integer && !ref.overflow ? (double)ref.i : ref.f);
            rel_err = scale > 0 ? abs_err / scale : abs_err;
            if (isnan(res.f) != isnan(ref.f))
                verify_fail = 1;
            if (exact_needed && !same_value(&res, &ref))
                verify_fail = 1;
        }
    }

    if (g_rank == 0) {
        double lmed, lmin, lmax, cmed, cmin, cmax, tmed, tmin, tmax;
        double *cl = malloc(sizeof(double) * (size_t)R), *cc = malloc(sizeof(double) * (size_t)R),
               *ct = malloc(sizeof(double) * (size_t)R);
        memcpy(cl, ml, sizeof(double) * (size_t)R);
        memcpy(cc, mc, sizeof(double) * (size_t)R);
        memcpy(ct, mt, sizeof(double) * (size_t)R);
        stats3(cl, R, &lmed, &lmin, &lmax);
        stats3(cc, R, &cmed, &cmin, &cmax);
        stats3(ct, R, &tmed, &tmin, &tmax);
        free(cl);
        free(cc);
        free(ct);
        double bytes = (double)n * (double)gr_dtype_size(o->desc.dtype);
        uint64_t shard = n / (uint64_t)np + (n % (uint64_t)np ? 1 : 0);
        double rank_bytes = (double)shard * (double)gr_dtype_size(o->desc.dtype);
        double gbps = tmed > 0 ? bytes / tmed / 1e9 : 0;
        double gbps_rank = lmed > 0 ? rank_bytes / lmed / 1e9 : 0;
        char dec[64], hex[64], rdec[64], rhex[64];
        value_text(&res, dec, sizeof(dec), hex, sizeof(hex));
        value_text(&ref, rdec, sizeof(rdec), rhex, sizeof(rhex));
        char mpiver[MPI_MAX_LIBRARY_VERSION_STRING];
        int mlen = 0;
        MPI_Get_library_version(mpiver, &mlen);
        char *nl = strchr(mpiver, ',');
        if (nl)
            *nl = 0;
        int cuda_aware = gr_mpi_cuda_aware();

        if (o->format == CLI_FMT_TABLE) {
            fprintf(out, "# gpureduce %s: np %d, n %llu, dtype %s, op %s", GR_VERSION_STRING, np,
                    (unsigned long long)n, gr_dtype_name(o->desc.dtype), gr_op_name(o->desc.op.kind));
            if (o->desc.op.kind == GR_OP_POWSUM)
                fprintf(out, ":%d", o->desc.op.power);
            fprintf(out, ", mode %s, gen %s, seed %llu\n", gr_mode_name(o->desc.mode), gr_gen_name(o->gen),
                    (unsigned long long)o->seed);
            /* CUDA-awareness matters only where device buffers could reach MPI */
            char aware[32] = "";
            if (backend == GR_BACKEND_CUDA)
                snprintf(aware, sizeof(aware), " (CUDA-aware: %s)", cuda_aware ? "yes" : "no");
            fprintf(out, "# backend %s, %s%s, repeat %d, warmup %d\n", gr_backend_name(backend), mpiver, aware, R,
                    o->warmup);
        } else if (o->format == CLI_FMT_JSON) {
            fprintf(out, "{\n  \"np\": %d,\n  \"n\": %llu,\n  \"dtype\": \"%s\",\n  \"op\": \"%s", np,
                    (unsigned long long)n, gr_dtype_name(o->desc.dtype), gr_op_name(o->desc.op.kind));
            if (o->desc.op.kind == GR_OP_POWSUM)
                fprintf(out, ":%d", o->desc.op.power);
            fprintf(out, "\",\n  \"mode\": \"%s\",\n  \"backend\": \"%s\",\n  \"gen\": \"%s\",\n  \"seed\": %llu,\n",
                    gr_mode_name(o->desc.mode), gr_backend_name(backend), gr_gen_name(o->gen),
                    (unsigned long long)o->seed);
        }
        fflush(out);
        /* placement is collective: other ranks are waiting in report_placements below */
        if (o->format != CLI_FMT_CSV)
            report_placements(ctx, MPI_COMM_WORLD, o->format, out);
        if (o->format == CLI_FMT_TABLE) {
            fprintf(out, "%-12s %-24s %-24s backend %s%s\n", "result", dec, hex, gr_backend_name(backend),
                    res.overflow ? "  OVERFLOW: the exact integer result does not fit in int64" : "");
            fprintf(out, "%-12s %12s %12s %12s\n", "time (us)", "median", "min", "max");
            fprintf(out, "%-12s %12.2f %12.2f %12.2f   (slowest rank)\n", "local", lmed * 1e6, lmin * 1e6, lmax * 1e6);
            fprintf(out, "%-12s %12.2f %12.2f %12.2f\n", "combine", cmed * 1e6, cmin * 1e6, cmax * 1e6);
            fprintf(out, "%-12s %12.2f %12.2f %12.2f\n", "total", tmed * 1e6, tmin * 1e6, tmax * 1e6);
            fprintf(out, "%-12s aggregate %.2f GB/s, per rank %.2f GB/s\n", "bandwidth", gbps, gbps_rank);
            cli_print_repeatable(out, repeatable, R);
            if (o->verify)
                fprintf(out, "%-12s reference %s (%s): abs err %.3g, rel err %.3g, %s%s\n", "verify", rdec, rhex,
                        abs_err, rel_err, exact_needed ? "must be exact" : "rounding expected",
                        verify_fail ? ": FAILED" : ": ok");
        } else if (o->format == CLI_FMT_CSV) {
            /* --verify adds the reference and the verdict (of the result above) to every row */
            fprintf(out, "np,n,dtype,op,mode,backend,gen,seed,run,result,result_hex,overflow,local_s,combine_s,"
                         "total_s,gbps%s\n", o->verify ? ",reference_hex,abs_err,rel_err,must_be_exact,verify_ok" : "");
            for (int k = 0; k < R; ++k) {
                char d2[64], h2[64];
                gr_value_t vk = g_rank == o->desc.root ? vals[k] : res;
                value_text(&vk, d2, sizeof(d2), h2, sizeof(h2));
                fprintf(out, "%d,%llu,%s,%s,%s,%s,%s,%llu,%d,%s,%s,%d,%.9g,%.9g,%.9g,%.6g", np,
                        (unsigned long long)n, gr_dtype_name(o->desc.dtype), gr_op_name(o->desc.op.kind),
                        gr_mode_name(o->desc.mode), gr_backend_name(backend), gr_gen_name(o->gen),
                        (unsigned long long)o->seed, k, d2, h2, vk.overflow, ml[k], mc[k], mt[k],
                        mt[k] > 0 ? bytes / mt[k] / 1e9 : 0.0);
                if (o->verify)
                    fprintf(out, ",%s,%.6g,%.6g,%d,%d", rhex, abs_err, rel_err, exact_needed ? 1 : 0,
                            verify_fail ? 0 : 1);
                fputc('\n', out);
            }
        } else {
            fprintf(out, ",\n  \"result\": ");
            print_json_number(out, &res);
            fprintf(out, ",\n  \"result_hex\": \"%s\",\n  \"result_str\": \"%s\",\n  \"overflow\": %s,\n", hex, dec,
                    res.overflow ? "true" : "false");
            fprintf(out, "  \"count\": %llu,\n  \"repeat\": %d,\n  \"warmup\": %d,\n  \"repeatable\": %s,\n",
                    (unsigned long long)res.count, R, o->warmup, cli_repeatable_json(repeatable, R));
            fprintf(out, "  \"time\": {\n");
            print_time_json(out, "local", ml, R, 0);
            print_time_json(out, "combine", mc, R, 0);
            print_time_json(out, "total", mt, R, 1);
            fprintf(out, "  },\n  \"gbps\": {\"aggregate\": %.6g, \"per_rank\": %.6g},\n", gbps, gbps_rank);
            fprintf(out, "  \"mpi\": {\"library\": ");
            json_string(out, mpiver);
            fprintf(out, ", \"cuda_aware\": %s, \"cuda_aware_compiled\": %s}", cuda_aware ? "true" : "false",
                    gr_mpi_cuda_aware_compiled() ? "true" : "false");
            if (o->verify) {
                fprintf(out, ",\n  \"verify\": {\"reference\": ");
                print_json_number(out, &ref);
                fprintf(out, ", \"reference_hex\": \"%s\", \"abs_err\": %.6g, \"rel_err\": %.6g, "
                             "\"must_be_exact\": %s, \"ok\": %s}",
                        rhex, abs_err, rel_err, exact_needed ? "true" : "false", verify_fail ? "false" : "true");
            }
            fprintf(out, "\n}\n");
        }
        fflush(out);
    } else if (o->format != CLI_FMT_CSV) {
        report_placements(ctx, MPI_COMM_WORLD, o->format, out);
    }

    free(tl);
    free(tc);
    free(tt);
    free(ml);
    free(mc);
    free(mt);
    free(vals);
    gr_buffer_destroy(buf);
    gr_ctx_destroy(ctx);
    return cli_end_run(verify_fail, repeatable);
}

static int dispatch(cli_opts_t *o)
{
    if (!strcmp(o->cmd, "scale") && o->desc.op.kind >= GR_OP_DOT)
        return cli_usage_error("gpureduce", "scale runs the elementwise ops; dot, nrm2, argmin and argmax run as "
                                            "gpureduce --op OP");
    if (!strcmp(o->cmd, "scale"))
        return cli_scale_run(o);
    if (!strcmp(o->cmd, "gen"))
        return cli_gen_run(o);
    if (!strcmp(o->cmd, "reduce") && o->desc.op.kind >= GR_OP_DOT && !o->stats)
        return cli_vec_run(o);
    if (o->input2)
        return cli_usage_error("gpureduce", "--input is given twice: only --op dot reads two files (x and y)");
    if (o->input)
        return cli_input_run(o);
    if (o->stats && !o->topo)
        return cli_stats_run(o);
    return run_reduce(o);
}

/* `gpureduce bench ARGS` is gpureduce-bench ARGS: the benchmark is its own
 * program (bench/), found beside this one. Before MPI_Init, so the
 * benchmark's process is the one MPI starts in. Returns only on failure. */
static int exec_bench(int argc, char **argv)
{
    char self[4096], path[4200];
    ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
    if (n <= 0) {
        snprintf(path, sizeof(path), "gpureduce-bench"); /* from PATH */
    } else {
        self[n] = '\0';
        char *slash = strrchr(self, '/');
        if (slash)
            *slash = '\0';
        snprintf(path, sizeof(path), "%s/gpureduce-bench", self);
    }
    argv[1] = path;
    execvp(path, argv + 1);
    fprintf(stderr, "gpureduce bench: cannot run %s: %s; the benchmark is the program gpureduce-bench, installed "
            "beside gpureduce (build it with the project, or run it directly)\n", path, strerror(errno));
    (void)argc;
    return CLI_EXIT_FAIL;
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "bench"))
        return exec_bench(argc, argv);
    if (MPI_Init(&argc, &argv) != MPI_SUCCESS) {
        fprintf(stderr, "gpureduce: MPI_Init failed; run under mpirun or srun, or check the MPI installation\n");
        return CLI_EXIT_FAIL;
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    /* Errors return to us so ranks can agree instead of dying mid-collective. */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    if (argc > 1 && !strcmp(argv[1], "--help-env")) {
        if (g_rank == 0) {
            printf("%-28s %-5s %-28s %s\n", "variable", "owner", "default", "meaning");
            for (int i = 0; i < gr_env_count(); ++i) {
                const gr_env_info_t *t = gr_env_info(i);
                printf("%-28s %-5s %-28s %s\n", t->name, t->ours ? "ours" : "other", t->def, t->meaning);
            }
        }
        MPI_Finalize();
        return cli_output_finish(CLI_EXIT_OK);
    }
    cli_opts_t o;
    char err[512];
    if (cli_parse(argc, argv, &o, err, sizeof(err)) != 0)
        return cli_usage_error("gpureduce", err);
    cli_progress_init(o.quiet);
    cli_progress_attach(&o.cfg);
    if (o.help || o.version) {
        if (g_rank == 0) {
            if (o.help)
                cli_usage(stdout);
            else
                printf("gpureduce %s\n", GR_VERSION_STRING);
        }
        MPI_Finalize();
        return cli_output_finish(CLI_EXIT_OK);
    }
    if (cli_output_begin(o.output) != 0)
        return CLI_EXIT_FAIL;
    return cli_output_finish(dispatch(&o));
}
