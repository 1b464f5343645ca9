/*
 * scale.c - `gpureduce scale`: a weak or strong scaling study inside one
 * launch of np ranks.
 *
 * The same reduction runs on sub-communicators of 1, 2, 4, ..., np ranks
 * (np last even when it is not a power of two). Step p uses world ranks
 * 0..p-1 (MPI_Comm_split, key = world rank, so rank 0 leads every step);
 * the other ranks wait in a world barrier before and after the step, so
 * they neither run nor disturb the timing. Each step has its own context
 * and its own synthetic dataset, made for exactly p ranks.
 *
 * Binding: gr_ctx_create() binds cores and picks a GPU every time it is
 * called (binding.c recomputes the node's plan over the context's own
 * communicator and binds again). That is not idempotent: a second call sees
 * the first call's CPU mask as the launcher's, and plans over fewer ranks.
 * So the world context is created first with the user's --bind policy, and
 * every sub-context keeps that binding (GR_BIND_LAUNCHER); each step then
 * checks that every rank landed on the same GPU as in the world context and
 * says so when one did not.
 *
 * Scale: per rank, memory and time are O(repeat + log2 np) beyond what MPI
 * itself costs (split, barrier, reduce, allreduce); nothing is gathered
 * per rank. Rows are printed as each step ends.
 */
#define _POSIX_C_SOURCE 200809L /* nanosleep */
#include "cli.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct scale_step {
    int ranks, nodes, gpus, moved;
    uint64_t n;
    double bytes;
    double tmed, tmin, tmax, lmed, cmed;
    int repeatable;
    gr_value_t result;
} scale_step_t;

static int g_rank;

static int same_bits(const gr_value_t *a, const gr_value_t *b)
{
    if (a->is_integer != b->is_integer || a->overflow != b->overflow)
        return 0;
    if (a->is_integer && !a->overflow)
        return a->i == b->i;
    return memcmp(&a->f, &b->f, sizeof(double)) == 0;
}

/* Median/min/max of a copy of v: stats3 reorders its input. */
static void stats_copy(const double *v, double *tmp, int n, double *med, double *min, double *max)
{
    memcpy(tmp, v, sizeof(double) * (size_t)n);
    stats3(tmp, n, med, min, max);
}

/* A world barrier that a rank outside the running step waits in asleep:
 * a blocking MPI_Barrier spins on a core, which steals cycles from the
 * step's ranks when they share the node (and always with the cpu backend).
 * Every rank uses MPI_Ibarrier, so the collectives match. */
static void world_barrier(int sleep_while_waiting)
{
    MPI_Request req;
    if (MPI_Ibarrier(MPI_COMM_WORLD, &req) != MPI_SUCCESS)
        cli_die("gpureduce scale", GR_ERR_MPI, "MPI_Ibarrier");
    if (!sleep_while_waiting) {
        if (MPI_Wait(&req, MPI_STATUS_IGNORE) != MPI_SUCCESS)
            cli_die("gpureduce scale", GR_ERR_MPI, "MPI_Wait");
        return;
    }
    for (int done = 0;;) {
        if (MPI_Test(&req, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS)
            cli_die("gpureduce scale", GR_ERR_MPI, "MPI_Test");
        if (done)
            return;
        struct timespec ts = {0, 500000}; /* 0.5 ms: idle, yet quick to follow */
        nanosleep(&ts, NULL);
    }
}

/* Distinct hosts of comm: one per shared-memory node. Collective. */
static int count_nodes(MPI_Comm comm)
{
    MPI_Comm node;
    int node_rank = 0, one, nodes = 0;
    if (MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node) != MPI_SUCCESS)
        cli_die("gpureduce scale", GR_ERR_MPI, "MPI_Comm_split_type (counting nodes)");
    MPI_Comm_rank(node, &node_rank);
    MPI_Comm_free(&node);
    one = node_rank == 0;
    if (MPI_Allreduce(&one, &nodes, 1, MPI_INT, MPI_SUM, comm) != MPI_SUCCESS)
        cli_die("gpureduce scale", GR_ERR_MPI, "MPI_Allreduce (counting nodes)");
    return nodes;
}

/* Run one step on comm (this rank is a member). Results valid on comm's
 * rank 0, which is world rank 0. */
static void run_step(const cli_opts_t *o, gr_ctx_t wctx, MPI_Comm comm, int p, uint64_t n, scale_step_t *s,
                     double *work)
{
    gr_ctx_t ctx = wctx;
    int R = o->repeat;
    double *tl = work, *tc = work + R, *tt = work + 2 * R, *ml = work + 3 * R, *mc = work + 4 * R,
           *mt = work + 5 * R, *tmp = work + 6 * R;
    gr_result_t r;
    if (comm != MPI_COMM_WORLD) {
        gr_config_t cfg = o->cfg;
        /* keep the world context's binding: see the header comment */
        if (cfg.bind == GR_BIND_GPU)
            cfg.bind = GR_BIND_LAUNCHER;
        r = gr_ctx_create(comm, &cfg, &ctx);
        if (r != GR_SUCCESS)
            cli_die("gpureduce scale", r, "creating the context of a scaling step");
    }
    const gr_placement_t *wp = gr_ctx_placement(wctx), *sp = gr_ctx_placement(ctx);
    int counts[2] = {gr_ctx_device(ctx) >= 0, wp->gpu != sp->gpu || strcmp(wp->pci_bus_id, sp->pci_bus_id) != 0};
    int sums[2] = {0, 0};
    if (MPI_Allreduce(counts, sums, 2, MPI_INT, MPI_SUM, comm) != MPI_SUCCESS)
        cli_die("gpureduce scale", GR_ERR_MPI, "MPI_Allreduce (counting GPUs)");
    s->gpus = sums[0];
    s->moved = sums[1];
    s->nodes = count_nodes(comm);
    s->ranks = p;
    s->n = n;
    s->bytes = (double)n * (double)gr_dtype_size(o->desc.dtype);

    gr_buffer_t buf = NULL;
    r = gr_buffer_create_synthetic(ctx, o->desc.dtype, o->gen, o->seed, n, &buf);
    if (r != GR_SUCCESS)
        cli_die("gpureduce scale", r, "creating the synthetic dataset of a scaling step");
    gr_desc_t d = o->desc;
    d.root = 0;
    d.all_ranks = 0;
    cli_warmup("gpureduce scale", ctx, comm, buf, &d, o->warmup, 0);
    s->repeatable = 1;
    for (int k = 0; k < R; ++k) {
        gr_timing_t t;
        gr_value_t v;
        if (MPI_Barrier(comm) != MPI_SUCCESS)
            cli_die("gpureduce scale", GR_ERR_MPI, "MPI_Barrier");
        r = gr_reduce_buffer(ctx, buf, &d, &v, &t);
        if (r != GR_SUCCESS)
            cli_die("gpureduce scale", r, "a timed reduction");
        tl[k] = t.local;
        tc[k] = t.combine;
        tt[k] = t.total;
        if (k == 0)
            s->result = v;
        else if (v.valid && !same_bits(&v, &s->result))
            s->repeatable = 0;
    }
    /* what a user waits for: the slowest rank, run by run */
    if (MPI_Reduce(tl, ml, R, MPI_DOUBLE, MPI_MAX, 0, comm) != MPI_SUCCESS ||
        MPI_Reduce(tc, mc, R, MPI_DOUBLE, MPI_MAX, 0, comm) != MPI_SUCCESS ||
        MPI_Reduce(tt, mt, R, MPI_DOUBLE, MPI_MAX, 0, comm) != MPI_SUCCESS)
        cli_die("gpureduce scale", GR_ERR_MPI, "gathering timings");
    double lo, hi;
    stats_copy(mt, tmp, R, &s->tmed, &s->tmin, &s->tmax);
    stats_copy(ml, tmp, R, &s->lmed, &lo, &hi);
    stats_copy(mc, tmp, R, &s->cmed, &lo, &hi);
    gr_buffer_destroy(buf);
    if (ctx != wctx)
        gr_ctx_destroy(ctx);
}

/* Speedup and efficiency of step s against the 1-rank step s1. */
static void figures(int kind, const scale_step_t *s1, const scale_step_t *s, double *speedup, double *eff)
{
    double p = (double)s->ranks;
    if (s->tmed <= 0 || s1->tmed <= 0) {
        *speedup = *eff = 0;
    } else if (kind == CLI_SCALE_STRONG) {
        *speedup = s1->tmed / s->tmed;
        *eff = *speedup / p;
    } else {
        /* weak: p times the work in time tp, as a throughput ratio */
        *speedup = p * s1->tmed / s->tmed;
        *eff = s1->tmed / s->tmed;
    }
}

static void print_header(const cli_opts_t *o, int np, gr_backend_t backend, FILE *out)
{
    const char *study = o->scale_kind == CLI_SCALE_WEAK ? "weak" : "strong";
    char op[32];
    if (o->desc.op.kind == GR_OP_POWSUM)
        snprintf(op, sizeof(op), "%s:%d", gr_op_name(o->desc.op.kind), o->desc.op.power);
    else
        snprintf(op, sizeof(op), "%s", gr_op_name(o->desc.op.kind));
    if (o->format == CLI_FMT_TABLE) {
        fprintf(out, "# gpureduce %s scale: %s, %llu elements %s, dtype %s, op %s, mode %s, gen %s, seed %llu\n",
                GR_VERSION_STRING, study, (unsigned long long)o->scale_size,
                o->scale_kind == CLI_SCALE_WEAK ? "per rank" : "in total", gr_dtype_name(o->desc.dtype), op,
                gr_mode_name(o->desc.mode), gr_gen_name(o->gen), (unsigned long long)o->seed);
        fprintf(out, "# backend %s, world np %d, repeat %d, warmup %d; time = slowest rank per run, then median\n",
                gr_backend_name(backend), np, o->repeat, o->warmup);
    } else if (o->format == CLI_FMT_JSON) {
        fprintf(out, "{\n  \"command\": \"scale\",\n  \"study\": \"%s\",\n  \"%s\": %llu,\n  \"np\": %d,\n", study,
                o->scale_kind == CLI_SCALE_WEAK ? "size_per_rank" : "size_total", (unsigned long long)o->scale_size,
                np);
        fprintf(out, "  \"dtype\": \"%s\",\n  \"op\": \"%s\",\n  \"mode\": \"%s\",\n  \"backend\": \"%s\",\n"
                     "  \"gen\": \"%s\",\n  \"seed\": %llu,\n  \"repeat\": %d,\n  \"warmup\": %d,\n",
                gr_dtype_name(o->desc.dtype), op, gr_mode_name(o->desc.mode), gr_backend_name(backend),
                gr_gen_name(o->gen), (unsigned long long)o->seed, o->repeat, o->warmup);
    }
}

static void print_row_header(const cli_opts_t *o, FILE *out)
{
    if (o->format == CLI_FMT_TABLE)
        fprintf(out, "%6s %6s %5s %15s %12s %12s %12s %12s %12s %10s %8s %8s  %s\n", "ranks", "nodes", "gpus",
                "elements", "median(us)", "min(us)", "max(us)", "local(us)", "combine(us)", "GB/s", "speedup",
                "eff(%)", "result");
    else if (o->format == CLI_FMT_CSV)
        fprintf(out, "study,ranks,nodes,gpus,n,bytes,dtype,op,mode,backend,gen,seed,repeat,time_median_s,"
                     "time_min_s,time_max_s,local_median_s,combine_median_s,gbps,speedup,efficiency,result,"
                     "result_hex,repeatable\n");
    else
        fprintf(out, ",\n  \"rows\": [");
}

static void print_row(const cli_opts_t *o, gr_backend_t backend, const scale_step_t *s1, const scale_step_t *s,
                      int first, FILE *out)
{
    double speedup, eff;
    figures(o->scale_kind, s1, s, &speedup, &eff);
    double gbps = s->tmed > 0 ? s->bytes / s->tmed / 1e9 : 0;
    char dec[64], hex[64];
    value_text(&s->result, dec, sizeof(dec), hex, sizeof(hex));
    if (o->format == CLI_FMT_TABLE) {
        fprintf(out, "%6d %6d %5d %15llu %12.2f %12.2f %12.2f %12.2f %12.2f %10.2f %8.3f %8.1f  %s%s\n", s->ranks,
                s->nodes, s->gpus, (unsigned long long)s->n, s->tmed * 1e6, s->tmin * 1e6, s->tmax * 1e6,
                s->lmed * 1e6, s->cmed * 1e6, gbps, speedup, 100 * eff, dec,
                s->repeatable ? "" : "  NOT REPEATABLE");
    } else if (o->format == CLI_FMT_CSV) {
        fprintf(out, "%s,%d,%d,%d,%llu,%.0f,%s,%s", o->scale_kind == CLI_SCALE_WEAK ? "weak" : "strong", s->ranks,
                s->nodes, s->gpus, (unsigned long long)s->n, s->bytes, gr_dtype_name(o->desc.dtype),
                gr_op_name(o->desc.op.kind));
        if (o->desc.op.kind == GR_OP_POWSUM)
            fprintf(out, ":%d", o->desc.op.power);
        /* repeatable: empty for --repeat 1 (one run compares nothing) */
        fprintf(out, ",%s,%s,%s,%llu,%d,%.9g,%.9g,%.9g,%.9g,%.9g,%.6g,%.6g,%.6g,%s,%s,%s\n",
                gr_mode_name(o->desc.mode), gr_backend_name(backend), gr_gen_name(o->gen),
                (unsigned long long)o->seed, o->repeat, s->tmed, s->tmin, s->tmax, s->lmed, s->cmed, gbps, speedup,
                eff, dec, hex, o->repeat < 2 ? "" : s->repeatable ? "1" : "0");
    } else {
        fprintf(out, "%s\n    {\"ranks\": %d, \"nodes\": %d, \"gpus\": %d, \"n\": %llu, \"bytes\": %.0f, ",
                first ? "" : ",", s->ranks, s->nodes, s->gpus, (unsigned long long)s->n, s->bytes);
        fprintf(out, "\"time\": {\"median\": %.9g, \"min\": %.9g, \"max\": %.9g}, \"local_median\": %.9g, "
                     "\"combine_median\": %.9g, \"gbps\": %.6g, \"speedup\": %.6g, \"efficiency\": %.6g, ",
                s->tmed, s->tmin, s->tmax, s->lmed, s->cmed, gbps, speedup, eff);
        fprintf(out, "\"result_str\": \"%s\", \"result_hex\": \"%s\", \"repeatable\": %s}", dec, hex,
                cli_repeatable_json(s->repeatable, o->repeat));
    }
    fflush(out);
}

/* Usage checks that need no MPI communication; returns a message or NULL. */
static const char *check_opts(const cli_opts_t *o, int np, char *why, size_t len)
{
    if (!o->scale_kind)
        return "give the study: --weak SIZE (elements per rank) or --strong SIZE (elements in total)";
    if (o->have_n || o->have_per_rank)
        return "--n and --per-rank are for a single reduction; scale takes --strong TOTAL or --weak PER_RANK";
    if (o->topo)
        return "--topo is not a scaling study: run 'gpureduce --topo' for the placement";
    if (o->input)
        return "--input is for a single reduction; scale reduces synthetic data made for each step (--gen)";
    if (o->stats)
        return "--op stats is not supported by scale; use sum, min, max, abssum, sumsq or powsum:P";
    if (o->verify)
        return "--verify is not supported by scale; run 'gpureduce --n SIZE --verify' at the sizes of interest";
    if (o->desc.root != 0 || o->desc.all_ranks)
        return "--root and --all-ranks are not supported by scale: every step reduces to rank 0";
    if (gr_desc_check(&o->desc, why, len) != GR_SUCCESS)
        return why;
    if ((o->desc.dtype == GR_I32 || o->desc.dtype == GR_I64) &&
        (o->gen == GR_GEN_UNIFORM || o->gen == GR_GEN_NORMAL)) {
        snprintf(why, len, "--gen %s makes real numbers: use --dtype f32 or f64, or --gen ones, iota, randint or "
                           "stress with --dtype %s",
                 gr_gen_name(o->gen), gr_dtype_name(o->desc.dtype));
        return why;
    }
    if (o->scale_kind == CLI_SCALE_WEAK && o->scale_size > UINT64_MAX / (uint64_t)np)
        return "--weak SIZE times the number of ranks overflows 64 bits";
    return NULL;
}

int cli_scale_run(cli_opts_t *o)
{
    int np;
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    char why[256];
    const char *bad = check_opts(o, np, why, sizeof(why));
    if (bad)
        return cli_usage_error("gpureduce scale", bad);

    /* 1, 2, 4, ..., then np: at most 33 steps for any int np */
    int steps[40], nsteps = 0;
    for (int p = 1; p < np && nsteps < 32; p *= 2)
        steps[nsteps++] = p;
    steps[nsteps++] = np;

    gr_ctx_t wctx = NULL;
    gr_result_t r = gr_ctx_create(MPI_COMM_WORLD, &o->cfg, &wctx);
    if (r != GR_SUCCESS)
        cli_die("gpureduce scale", r, "creating the context");
    gr_backend_t backend = gr_ctx_backend(wctx);
    FILE *out = stdout;

    if (g_rank == 0)
        print_header(o, np, backend, out);
    fflush(out);
    if (o->format != CLI_FMT_CSV) {
        report_placements(wctx, MPI_COMM_WORLD, o->format, out);
        fflush(out);
    }
    if (g_rank == 0)
        print_row_header(o, out);

    double *work = calloc((size_t)o->repeat * 7, sizeof(double));
    if (!work)
        cli_die("gpureduce scale", GR_ERR_NOMEM, "allocating timing arrays");
    scale_step_t first;
    memset(&first, 0, sizeof(first));
    int nonrepeatable = 0;
    /* long sweeps report progress (progress.h): the row being measured */
    cli_progress_begin("scale", CLI_PROG_STEPS, (uint64_t)nsteps, "row");
    for (int k = 0; k < nsteps; ++k) {
        int p = steps[k];
        uint64_t n = o->scale_kind == CLI_SCALE_WEAK ? o->scale_size * (uint64_t)p : o->scale_size;
        cli_progress_set((uint64_t)k);
        cli_progress_detail("%d rank%s, %llu elements", p, p == 1 ? "" : "s", (unsigned long long)n);
        /* ranks outside the step wait (asleep) in the barrier after it */
        world_barrier(0);
        MPI_Comm comm = MPI_COMM_WORLD;
        if (p < np && MPI_Comm_split(MPI_COMM_WORLD, g_rank < p ? 0 : MPI_UNDEFINED, g_rank, &comm) != MPI_SUCCESS)
            cli_die("gpureduce scale", GR_ERR_MPI, "MPI_Comm_split");
        scale_step_t s;
        memset(&s, 0, sizeof(s));
        if (g_rank < p)
            run_step(o, wctx, comm, p, n, &s, work);
        if (comm != MPI_COMM_WORLD && comm != MPI_COMM_NULL)
            MPI_Comm_free(&comm);
        world_barrier(g_rank >= p);
        if (g_rank == 0) {
            cli_progress_pause(); /* the row goes to stdout, maybe the same terminal */
            if (k == 0)
                first = s;
            nonrepeatable += !s.repeatable;
            if (s.moved) {
                fprintf(stderr, "gpureduce scale: warning: in the %d-rank step %d rank(s) got another GPU than in "
                                "the full job (the GPU plan is made per communicator); its time is still valid, "
                                "but not the same GPUs. Bind ranks near distinct GPUs (srun --gpu-bind=closest, "
                                "mpirun --map-by numa) to avoid this\n",
                        p, s.moved);
                fflush(stderr);
            }
            print_row(o, backend, &first, &s, k == 0, out);
            fflush(out);
            cli_progress_set((uint64_t)k + 1);
            cli_progress_resume();
        }
    }
    cli_progress_end();
    if (g_rank == 0) {
        if (o->format == CLI_FMT_JSON)
            fprintf(out, "\n  ]\n}\n");
        fflush(out);
    }
    free(work);
    gr_ctx_destroy(wctx);
    int status = nonrepeatable ? CLI_EXIT_FAIL : CLI_EXIT_OK;
    MPI_Bcast(&status, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (status != CLI_EXIT_OK && g_rank == 0)
        fprintf(stderr, "gpureduce scale: repeated runs of a step gave different bits\n");
    MPI_Finalize();
    return status;
}
