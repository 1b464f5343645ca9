/*
 * vec_run.c - `gpureduce --op dot|nrm2|argmin|argmax`, on synthetic data (x
 * from --seed S, y from S+1 for dot) or on files (--input X, and --input Y
 * for dot). Prints the value, and for argmin/argmax the global index: a table
 * column, the JSON integer key "index", the CSV column index.
 */
#include "cli.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int is_arg(const gr_desc_t *d) { return d->op.kind == GR_OP_ARGMIN || d->op.kind == GR_OP_ARGMAX; }

static int same_result(const gr_value_t *a, const gr_value_t *b)
{
    if (a->index != b->index || a->overflow != b->overflow || a->is_integer != b->is_integer)
        return 0;
    if (a->is_integer && !a->overflow)
        return a->i == b->i;
    return memcmp(&a->f, &b->f, sizeof(double)) == 0 || (isnan(a->f) && isnan(b->f));
}

/* One run: the reduction into *v and this rank's timings. */
static gr_result_t run_once(gr_ctx_t ctx, const cli_opts_t *o, gr_buffer_t bx, gr_buffer_t by, gr_file_t fx,
                            gr_file_t fy, gr_value_t *v, double t[3])
{
    gr_result_t r;
    if (fx) {
        gr_io_timing_t it;
        memset(&it, 0, sizeof(it));
        r = fy ? gr_dot_file(ctx, fx, fy, &o->desc, v, &it) : gr_reduce_file(ctx, fx, &o->desc, v, &it);
        t[0] = it.local;
        t[1] = it.combine;
        t[2] = it.total;
        return r;
    }
    gr_timing_t tm;
    memset(&tm, 0, sizeof(tm));
    r = by ? gr_dot_buffer(ctx, bx, by, &o->desc, v, &tm) : gr_reduce_buffer(ctx, bx, &o->desc, v, &tm);
    t[0] = tm.local;
    t[1] = tm.combine;
    t[2] = tm.total;
    return r;
}

static void print_index_json(FILE *f, const gr_value_t *v) { fprintf(f, ",\n  \"index\": %lld", (long long)v->index); }

int cli_vec_run(cli_opts_t *o)
{
    int rank = 0, np = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    int dot = o->desc.op.kind == GR_OP_DOT;
    if (o->desc.root >= np) {
        char m[128];
        snprintf(m, sizeof(m), "--root %d: the job has only %d rank(s)", o->desc.root, np);
        return cli_usage_error("gpureduce", m);
    }
    if (o->input2 && !dot)
        return cli_usage_error("gpureduce", "--input is given twice: only --op dot reads two files (x and y)");
    if (o->input && dot && !o->input2)
        return cli_usage_error("gpureduce", "--op dot with files needs two: --input X --input Y");
    if (o->stats || o->topo)
        return cli_usage_error("gpureduce", "--op stats and --topo do not combine with dot, nrm2, argmin, argmax");
    if (o->input) {
        static const char *const synthetic[] = {"n", "per-rank", "gen", "seed", "verify"};
        for (int i = 0; i < 5; ++i)
            if (cli_given(o, synthetic[i])) {
                char m[160];
                snprintf(m, sizeof(m), "--%s does not apply to --input: the values come from the file",
                         synthetic[i]);
                return cli_usage_error("gpureduce", m);
            }
    }
    uint64_t n = 0;
    if (!o->input) {
        char why[256];
        if (gr_desc_check(&o->desc, why, sizeof(why)) != GR_SUCCESS)
            return cli_usage_error("gpureduce", why);
        int bad = cli_synthetic_count(o, np, &n);
        if (bad)
            return bad;
        if (dot && o->seed == UINT64_MAX)
            return cli_usage_error("gpureduce", "--op dot takes y from --seed + 1: use a seed below 2^64 - 1");
    }
    int R = o->input && !cli_given(o, "repeat") ? 1 : o->repeat;
    int W = o->input && !cli_given(o, "warmup") ? 0 : o->warmup;

    gr_ctx_t ctx = NULL;
    gr_result_t r = gr_ctx_create(MPI_COMM_WORLD, &o->cfg, &ctx);
    if (r != GR_SUCCESS)
        cli_die("gpureduce", r, "creating the context");
    gr_backend_t backend = gr_ctx_backend(ctx);

    gr_buffer_t bx = NULL, by = NULL;
    gr_file_t fx = NULL, fy = NULL;
    if (o->input) {
        gr_file_config_t fc;
        gr_file_config_init(&fc);
        fc.have_dtype = cli_given(o, "dtype");
        fc.dtype = o->desc.dtype;
        fc.offset = o->offset;
        fc.chunk_bytes = o->chunk;
        r = gr_file_open(ctx, o->input, &fc, &fx);
        if (r == GR_SUCCESS && o->input2)
            r = gr_file_open(ctx, o->input2, &fc, &fy);
        if (r != GR_SUCCESS) {
            /* every rank agrees and rank 0 has said why */
            gr_file_close(fx);
            gr_ctx_destroy(ctx);
            MPI_Finalize();
            return CLI_EXIT_FAIL;
        }
        gr_file_info_t info;
        gr_file_get_info(fx, &info);
        o->desc.dtype = info.dtype;
        n = info.count;
    } else {
        r = gr_buffer_create_synthetic(ctx, o->desc.dtype, o->gen, o->seed, n, &bx);
        if (r == GR_SUCCESS && dot)
            r = gr_buffer_create_synthetic(ctx, o->desc.dtype, o->gen, o->seed + 1, n, &by);
        if (r != GR_SUCCESS)
            cli_die("gpureduce", r, "creating the synthetic dataset");
    }

    double *tl = calloc((size_t)R * 6, sizeof(double));
    gr_value_t *vals = calloc((size_t)R, sizeof(gr_value_t));
    if (!tl || !vals)
        cli_die("gpureduce", GR_ERR_NOMEM, "allocating result arrays");
    double *tc = tl + R, *tt = tl + 2 * R, *ml = tl + 3 * R, *mc = tl + 4 * R, *mt = tl + 5 * R;
    for (int k = 0; k < W + R; ++k) {
        double t[3];
        gr_value_t v;
        if (MPI_Barrier(MPI_COMM_WORLD) != MPI_SUCCESS)
            cli_die("gpureduce", GR_ERR_MPI, "MPI_Barrier");
        r = run_once(ctx, o, bx, by, fx, fy, &v, t);
        if (r != GR_SUCCESS) {
            if (fx) { /* file errors: every rank agreed, rank 0 said why */
                gr_file_close(fy);
                gr_file_close(fx);
                gr_ctx_destroy(ctx);
                MPI_Finalize();
                return CLI_EXIT_FAIL;
            }
            cli_die("gpureduce", r, k < W ? "a warm-up reduction" : "the reduction");
        }
        if (k >= W) {
            vals[k - W] = v;
            tl[k - W] = t[0];
            tc[k - W] = t[1];
            tt[k - W] = t[2];
        }
    }
    if (MPI_Reduce(tl, ml, R, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD) != MPI_SUCCESS ||
        MPI_Reduce(tc, mc, R, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD) != MPI_SUCCESS ||
        MPI_Reduce(tt, mt, R, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD) != MPI_SUCCESS)
        cli_die("gpureduce", GR_ERR_MPI, "gathering timings");
    gr_value_t res = vals[0];
    int repeatable = 1;
    if (rank == o->desc.root)
        for (int k = 1; k < R; ++k)
            if (!same_result(&vals[k], &vals[0]))
                repeatable = 0;
    cli_root_to_rank0(o->desc.root, &res, sizeof(res), &repeatable);

    /* --verify: the exact kernels on the generator's values (MPFR-checked in the tests) */
    int verify_fail = 0, exact_needed = 0;
    double abs_err = 0, rel_err = 0;
    gr_value_t ref;
    memset(&ref, 0, sizeof(ref));
    if (o->verify) {
        gr_desc_t rd = o->desc;
        rd.root = 0;
        rd.all_ranks = 0;
        r = gr_reference_synthetic(ctx, o->gen, o->seed, n, &rd, &ref);
        if (r != GR_SUCCESS)
            cli_die("gpureduce", r, "the CPU reference for --verify");
        exact_needed = o->desc.mode == GR_MODE_EXACT || is_arg(&o->desc) || o->desc.dtype == GR_I32 || o->desc.dtype == GR_I64;
        if (rank == 0) {
            abs_err = res.is_integer && !res.overflow && !ref.overflow ? fabs((double)res.i - (double)ref.i)
                                                                        : fabs(res.f - ref.f);
            double scale = fabs(ref.is_integer && !ref.overflow ? (double)ref.i : ref.f);
            rel_err = scale > 0 ? abs_err / scale : abs_err;
            if (isnan(res.f) != isnan(ref.f))
                verify_fail = 1;
            if (exact_needed && !same_result(&res, &ref))
                verify_fail = 1;
        }
    }

    if (rank == 0) {
        FILE *out = stdout;
        double lmed, lmin, lmax, cmed, cmin, cmax, tmed, tmin, tmax;
        double *cp = malloc(sizeof(double) * 3 * (size_t)R);
        if (!cp)
            cli_die("gpureduce", GR_ERR_NOMEM, "allocating timing arrays");
        memcpy(cp, ml, sizeof(double) * 3 * (size_t)R);
        stats3(cp, R, &lmed, &lmin, &lmax);
        stats3(cp + R, R, &cmed, &cmin, &cmax);
        stats3(cp + 2 * R, R, &tmed, &tmin, &tmax);
        free(cp);
        double bytes = (double)n * (double)gr_dtype_size(o->desc.dtype) * (dot ? 2 : 1);
        double gbps = tmed > 0 ? bytes / tmed / 1e9 : 0;
        char dec[64], hex[64], rdec[64], rhex[64];
        value_text(&res, dec, sizeof(dec), hex, sizeof(hex));
        value_text(&ref, rdec, sizeof(rdec), rhex, sizeof(rhex));
        const char *src = o->input ? o->input : gr_gen_name(o->gen);
        if (o->format == CLI_FMT_TABLE) {
            fprintf(out, "# gpureduce %s: np %d, n %llu, dtype %s, op %s, mode %s, ", GR_VERSION_STRING, np,
                    (unsigned long long)n, gr_dtype_name(o->desc.dtype), gr_op_name(o->desc.op.kind),
                    gr_mode_name(o->desc.mode));
            if (o->input)
                fprintf(out, "input %s%s%s\n", o->input, o->input2 ? ", " : "", o->input2 ? o->input2 : "");
            else
                fprintf(out, "gen %s, seed %llu%s\n", src, (unsigned long long)o->seed, dot ? " (y: seed + 1)" : "");
            fprintf(out, "%-12s %-24s %-24s backend %s%s\n", "result", dec, hex, gr_backend_name(backend),
                    res.overflow ? "  OVERFLOW: the exact integer result does not fit in int64" : "");
            if (is_arg(&o->desc))
                fprintf(out, "%-12s %lld (global, lowest among ties)\n", "index", (long long)res.index);
            fprintf(out, "%-12s %12s %12s %12s\n", "time (us)", "median", "min", "max");
            fprintf(out, "%-12s %12.2f %12.2f %12.2f   (slowest rank)\n", "local", lmed * 1e6, lmin * 1e6,
                    lmax * 1e6);
            fprintf(out, "%-12s %12.2f %12.2f %12.2f\n", "combine", cmed * 1e6, cmin * 1e6, cmax * 1e6);
            fprintf(out, "%-12s %12.2f %12.2f %12.2f\n", "total", tmed * 1e6, tmin * 1e6, tmax * 1e6);
            fprintf(out, "%-12s aggregate %.2f GB/s%s\n", "bandwidth", gbps, dot ? " (both arrays)" : "");
            fprintf(out, "%-12s %s (%d runs)\n", "repeatable", repeatable ? "yes, same bits every run" : "NO", R);
            if (o->verify) {
                fprintf(out, "%-12s reference %s (%s)", "verify", rdec, rhex);
                if (is_arg(&o->desc))
                    fprintf(out, " index %lld", (long long)ref.index);
                fprintf(out, ": abs err %.3g, rel err %.3g, %s%s\n", abs_err, rel_err,
                        exact_needed ? "must be exact" : "rounding expected", verify_fail ? ": FAILED" : ": ok");
            }
        } else if (o->format == CLI_FMT_CSV) {
            fprintf(out, "np,n,dtype,op,mode,backend,source,seed,run,result,result_hex,%soverflow,local_s,"
                         "combine_s,total_s,gbps%s\n",
                    is_arg(&o->desc) ? "index," : "",
                    o->verify ? ",reference_hex,abs_err,rel_err,must_be_exact,verify_ok" : "");
            for (int k = 0; k < R; ++k) {
                char d2[64], h2[64];
                gr_value_t vk = rank == o->desc.root ? vals[k] : res;
                value_text(&vk, d2, sizeof(d2), h2, sizeof(h2));
                fprintf(out, "%d,%llu,%s,%s,%s,%s,", np, (unsigned long long)n, gr_dtype_name(o->desc.dtype),
                        gr_op_name(o->desc.op.kind), gr_mode_name(o->desc.mode), gr_backend_name(backend));
                csv_string(out, src);
                fprintf(out, ",%llu,%d,%s,%s,", (unsigned long long)o->seed, k, d2, h2);
                if (is_arg(&o->desc))
                    fprintf(out, "%lld,", (long long)vk.index);
                fprintf(out, "%d,%.9g,%.9g,%.9g,%.6g", vk.overflow, ml[k], mc[k], mt[k],
                        mt[k] > 0 ? bytes / mt[k] / 1e9 : 0.0);
                if (o->verify)
                    fprintf(out, ",%s,%.6g,%.6g,%d,%d", rhex, abs_err, rel_err, exact_needed, !verify_fail);
                fputc('\n', out);
            }
        } else {
            fprintf(out, "{\n  \"np\": %d,\n  \"n\": %llu,\n  \"dtype\": \"%s\",\n  \"op\": \"%s\",\n  \"mode\": "
                         "\"%s\",\n  \"backend\": \"%s\",\n",
                    np, (unsigned long long)n, gr_dtype_name(o->desc.dtype), gr_op_name(o->desc.op.kind),
                    gr_mode_name(o->desc.mode), gr_backend_name(backend));
            if (o->input) {
                fprintf(out, "  \"input\": ");
                json_string(out, o->input);
                if (o->input2) {
                    fprintf(out, ",\n  \"input_y\": ");
                    json_string(out, o->input2);
                }
                fprintf(out, ",\n");
            } else {
                fprintf(out, "  \"gen\": \"%s\",\n  \"seed\": %llu,\n", src, (unsigned long long)o->seed);
            }
            fprintf(out, "  \"result\": ");
            if (res.is_integer && !res.overflow)
                fprintf(out, "%lld", (long long)res.i);
            else if (isfinite(res.f))
                fprintf(out, "%.17g", res.f);
            else
                fprintf(out, "null");
            fprintf(out, ",\n  \"result_hex\": \"%s\",\n  \"result_str\": \"%s\"", hex, dec);
            if (is_arg(&o->desc))
                print_index_json(out, &res);
            fprintf(out, ",\n  \"overflow\": %s,\n  \"count\": %llu,\n  \"repeat\": %d,\n  \"repeatable\": %s,\n",
                    res.overflow ? "true" : "false", (unsigned long long)res.count, R,
                    repeatable ? "true" : "false");
            fprintf(out, "  \"time\": {\"local\": {\"median\": %.9g, \"min\": %.9g, \"max\": %.9g}, "
                         "\"combine\": {\"median\": %.9g, \"min\": %.9g, \"max\": %.9g}, "
                         "\"total\": {\"median\": %.9g, \"min\": %.9g, \"max\": %.9g}},\n",
                    lmed, lmin, lmax, cmed, cmin, cmax, tmed, tmin, tmax);
            fprintf(out, "  \"gbps\": {\"aggregate\": %.6g}", gbps);
            if (o->verify) {
                fprintf(out, ",\n  \"verify\": {\"reference_hex\": \"%s\", \"reference_index\": %lld, \"abs_err\": "
                             "%.6g, \"rel_err\": %.6g, \"must_be_exact\": %s, \"ok\": %s}",
                        rhex, (long long)ref.index, abs_err, rel_err, exact_needed ? "true" : "false",
                        verify_fail ? "false" : "true");
            }
            fprintf(out, "\n}\n");
        }
        fflush(out);
    }
    free(tl);
    free(vals);
    gr_buffer_destroy(by);
    gr_buffer_destroy(bx);
    gr_file_close(fy);
    gr_file_close(fx);
    gr_ctx_destroy(ctx);
    return cli_end_run(verify_fail, repeatable);
}
