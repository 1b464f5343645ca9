/*
 * gpureduce-cg - conjugate gradient for the 3-D Poisson equation, every dot
 * product and norm through gpureduce (docs/CG.md).
 *
 * -lap(u) = f on the unit cube, zero Dirichlet boundary, the 7-point stencil
 * on n^3 interior points, split in z-slabs over the MPI ranks (uneven splits
 * allowed); halo planes go through MPI. The vectors live on the GPU (one per
 * rank; ranks may share one) or, on the cpu backend, in host memory.
 *
 * The solver is Chronopoulos and Gear's form of CG: the same iterates as
 * textbook CG in exact arithmetic, with both inner products of an iteration
 * (r.r and r.Ar) taken at one point, so they are ONE batch of two dot
 * products: one non-blocking gpureduce batch started on the solver's own
 * stream (gr_ireduce_batch_device, then gr_wait), one MPI
 * collective. With --mode exact the dots are correctly rounded, so the
 * iterates, the iteration count, the residual and the solution hash are the
 * same bits for any number of ranks and on the CPU and the GPU: everything
 * else is per point (cg_point.h).
 *
 *   mpirun -np 4 gpureduce-cg --n 128 --mode exact --format json
 */
#include "cg.h"
#include "cg_point.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef enum { DOTS_GPUREDUCE, DOTS_CUB_MPI } dots_t;

/* The choices' names, in the order of their values (gr_mode_t, gr_backend_t, dots_t, json). */
static const char *const mode_names[] = {"fast", "exact", NULL};
static const char *const backend_names[] = {"auto", "cuda", "cpu", NULL};
static const char *const dots_names[] = {"gpureduce", "cub-mpi", NULL};
static const char *const format_names[] = {"table", "json", NULL};
enum { UPDATE_AUTO, UPDATE_HOST, UPDATE_DEVICE };
static const char *const update_names[] = {"auto", "host", "device", NULL};

typedef struct opts {
    int64_t n, maxit;
    double tol;
    int mode;    /* gr_mode_t */
    int backend; /* gr_backend_t */
    int dots;    /* dots_t */
    int update;  /* UPDATE_*; after main resolves auto: UPDATE_HOST or UPDATE_DEVICE */
    int json, help;
    int time_dots; /* --time-dots: the dots' share of an iteration (the vectors synchronised before them) */
    int phases;    /* --phases: the GPU time of each phase of an iteration, from events on the stream */
} opts_t;

typedef struct result {
    int64_t iterations;
    int converged;
    double residual;     /* ||b - A x|| / ||b||, recomputed at the end */
    double recursive;    /* sqrt(r.r) / ||b|| of the recurrence: the stopping test */
    uint64_t hash;
    double time_per_iteration;
    double dots_per_iteration; /* --time-dots: the dots' time per iteration (from an idle GPU) */
    double phase[CG_PHASES];   /* --phases: each phase's time per iteration (the slowest rank's) */
    int64_t phase_iters;       /* --phases: the iterations they are the mean of (rank 0's) */
} result_t;

static const char *usage_text =
    "usage: mpirun -np P gpureduce-cg [options]\n"
    "  --n N                  points per dimension: N^3 unknowns, split in z-slabs over the ranks (64)\n"
    "  --tol T                stop when ||r|| / ||b|| <= T (1e-8)\n"
    "  --maxit K              at most K iterations (1000)\n"
    "  --mode fast|exact      gpureduce's numeric mode (fast); exact: the same bits for any np, CPU or GPU\n"
    "  --backend auto|cuda|cpu  where the vectors live (auto: the GPU when every rank sees one)\n"
    "  --dots gpureduce|cub-mpi  who computes the dot products (gpureduce); cub-mpi: CUB, a copy to the\n"
    "                         host and MPI_Allreduce (cpu backend: a host loop and MPI_Allreduce)\n"
    "  --update auto|host|device  who computes alpha and beta (auto: device with --dots gpureduce on the\n"
    "                         GPU, else host); device: the update is queued before the dots' values reach\n"
    "                         the host, from gpureduce's ordered result in device memory (the same bits)\n"
    "  --format table|json    output (table)\n"
    "  --time-dots            also time the dot products alone (dots_time_per_iteration): the GPU is\n"
    "                         synchronised before them, so time_per_iteration grows a little\n"
    "  --phases               also time each phase of an iteration on the GPU (cuda backend): stencil,\n"
    "                         dots, values (to the host), update; from CUDA events on the solver's stream\n"
    "  --help                 this text\n"
    "docs/CG.md has the method and the numbers.\n";

int cg_fail(cg_t *cg, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cg->err, sizeof(cg->err), fmt, ap);
    va_end(ap);
    return -1;
}

/* End the job: a rank-local error, named with this rank's place. */
static void die(const cg_t *cg)
{
    if (cg->gpu >= 0)
        fprintf(stderr, "gpureduce-cg: [rank %d host %s gpu %d] %s\n", cg->rank, cg->host, cg->gpu, cg->err);
    else
        fprintf(stderr, "gpureduce-cg: [rank %d host %s] %s\n", cg->rank, cg->host, cg->err);
    fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

#define TRY(cg, call)                                                                                          \
    do {                                                                                                       \
        if ((call) != 0)                                                                                       \
            die(cg);                                                                                           \
    } while (0)

/* A libgpureduce call; the library has logged its own line (rank, host, GPU) before this one. */
#define GR_TRY(cg, call)                                                                                       \
    do {                                                                                                       \
        gr_result_t r_ = (call);                                                                               \
        if (r_ != GR_SUCCESS) {                                                                                \
            cg_fail(cg, "%s failed: %s; the line above from libgpureduce says why", #call, gr_strerror(r_)); \
            die(cg);                                                                                           \
        }                                                                                                      \
    } while (0)

#define MPI_TRY(cg, call)                                                                                      \
    do {                                                                                                       \
        if ((call) != MPI_SUCCESS) {                                                                           \
            cg_fail(cg, "%s failed", #call);                                                                   \
            die(cg);                                                                                           \
        }                                                                                                      \
    } while (0)

/* A usage error: every rank parsed the same argv, rank 0 says what to do, the job ends. */
static void usage_error(const cg_t *cg, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
static void usage_error(const cg_t *cg, const char *fmt, ...)
{
    if (cg->rank == 0) {
        va_list ap;
        va_start(ap, fmt);
        fprintf(stderr, "gpureduce-cg: [rank 0 host %s] ", cg->host);
        vfprintf(stderr, fmt, ap);
        fprintf(stderr, "\n%s", usage_text);
        fflush(stderr);
        va_end(ap);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Abort(MPI_COMM_WORLD, 2);
}

static int parse_i64(const char *s, int64_t lo, int64_t *out)
{
    char *end = NULL;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || !end || end == s || *end || v < lo)
        return -1;
    *out = (int64_t)v;
    return 0;
}

static void parse_options(cg_t *cg, int argc, char **argv, opts_t *o)
{
    o->n = 64;
    o->maxit = 1000;
    o->tol = 1e-8;
    o->mode = GR_MODE_FAST;
    o->backend = GR_BACKEND_AUTO;
    o->dots = DOTS_GPUREDUCE;
    o->update = UPDATE_AUTO;
    o->json = 0;
    o->help = 0;
    o->time_dots = 0;
    o->phases = 0;
    const struct {
        const char *opt;
        const char *const *names;
        int *out;
    } choices[] = {{"--mode", mode_names, &o->mode},
                   {"--backend", backend_names, &o->backend},
                   {"--dots", dots_names, &o->dots},
                   {"--update", update_names, &o->update},
                   {"--format", format_names, &o->json}};
    for (int a = 1; a < argc; ++a) {
        const char *opt = argv[a];
        if (strcmp(opt, "--help") == 0 || strcmp(opt, "-h") == 0) {
            o->help = 1;
            continue;
        }
        if (strcmp(opt, "--time-dots") == 0) {
            o->time_dots = 1;
            continue;
        }
        if (strcmp(opt, "--phases") == 0) {
            o->phases = 1;
            continue;
        }
        char name[32];
        const char *val = NULL;
        const char *eq = strchr(opt, '=');
        if (eq && (size_t)(eq - opt) < sizeof(name)) { /* --opt=value */
            memcpy(name, opt, (size_t)(eq - opt));
            name[eq - opt] = '\0';
            val = eq + 1;
        } else {
            snprintf(name, sizeof(name), "%s", opt);
            if (a + 1 < argc)
                val = argv[++a];
        }
        if (!val)
            usage_error(cg, "option %s needs a value", opt);
        size_t c = 0;
        while (c < sizeof(choices) / sizeof(choices[0]) && strcmp(name, choices[c].opt) != 0)
            ++c;
        if (c < sizeof(choices) / sizeof(choices[0])) {
            int k = 0;
            while (choices[c].names[k] && strcmp(val, choices[c].names[k]) != 0)
                ++k;
            if (!choices[c].names[k]) {
                char list[96] = "";
                for (int j = 0; choices[c].names[j]; ++j) {
                    const char *sep = j == 0 ? "" : choices[c].names[j + 1] ? ", " : " or ";
                    snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s", sep, choices[c].names[j]);
                }
                usage_error(cg, "%s %s: use %s", name, val, list);
            }
            *choices[c].out = k;
        } else if (strcmp(name, "--n") == 0) {
            if (parse_i64(val, 1, &o->n) != 0 || o->n > 46340)
                usage_error(cg, "--n %s: give the points per dimension, 1 to 46340", val);
        } else if (strcmp(name, "--maxit") == 0) {
            if (parse_i64(val, 0, &o->maxit) != 0)
                usage_error(cg, "--maxit %s: give a count >= 0", val);
        } else if (strcmp(name, "--tol") == 0) {
            char *end = NULL;
            o->tol = strtod(val, &end);
            if (!end || end == val || *end || !(o->tol >= 0))
                usage_error(cg, "--tol %s: give a number >= 0", val);
        } else {
            usage_error(cg, "unknown option %s (see --help)", name);
        }
    }
    if (o->dots == DOTS_CUB_MPI && o->mode == GR_MODE_EXACT)
        usage_error(cg, "--dots cub-mpi --mode exact: the cub-mpi baseline has no exact mode; use --mode fast "
                        "with it, or --dots gpureduce");
}

int cg_halo_mpi(cg_t *cg, const double *send_lo, const double *send_hi, double *recv_lo, double *recv_hi)
{
    const int count = (int)cg->plane;
    /* my lowest plane goes down, the upper neighbour's lowest comes into my upper halo; then upwards */
    if (MPI_Sendrecv(send_lo, count, MPI_DOUBLE, cg->below, 11, recv_hi, count, MPI_DOUBLE, cg->above, 11, cg->comm,
                     MPI_STATUS_IGNORE) != MPI_SUCCESS ||
        MPI_Sendrecv(send_hi, count, MPI_DOUBLE, cg->above, 12, recv_lo, count, MPI_DOUBLE, cg->below, 12, cg->comm,
                     MPI_STATUS_IGNORE) != MPI_SUCCESS)
        return cg_fail(cg, "halo exchange with ranks %d and %d failed (MPI_Sendrecv)", cg->below, cg->above);
    return 0;
}

/* Start k reductions over the interior points with the call's options: x[j] . y[j], or ||x[j]|| when y[j]
 * is NULL (whole vectors, halos included), every rank gets them. */
static gr_request_t batch_start(cg_t *cg, const double *const *x, const double *const *y, int k,
                                const gr_call_t *call)
{
    gr_batch_item_t items[4];
    for (int j = 0; j < k; ++j) {
        gr_batch_item_init(&items[j]);
        items[j].desc.dtype = GR_F64;
        items[j].desc.mode = cg->mode;
        items[j].desc.all_ranks = 1;
        items[j].desc.op.kind = y[j] ? GR_OP_DOT : GR_OP_NRM2;
        items[j].x = x[j] + cg->plane;
        items[j].y = y[j] ? y[j] + cg->plane : NULL;
        items[j].count = (uint64_t)(cg->nz * cg->plane);
    }
    gr_request_t req = NULL;
    if (cg->stream)
        GR_TRY(cg, gr_ireduce_batch_device(cg->ctx, items, k, call, &req));
    else
        GR_TRY(cg, gr_ireduce_batch_host(cg->ctx, items, k, call, &req));
    return req;
}

/* Complete a batch of k (at most 4): the values into out. */
static void batch_wait(cg_t *cg, gr_request_t *req, int k, double *out)
{
    gr_value_t v[4];
    GR_TRY(cg, gr_wait(req, v, NULL));
    for (int j = 0; j < k; ++j)
        out[j] = v[j].f;
}

/*
 * k reductions over the interior points, every rank gets them:
 * out[j] = x[j] . y[j], or ||x[j]|| when y[j] is NULL (whole vectors, halos included).
 */
static void reduce(cg_t *cg, int dots, const double *const *x, const double *const *y, int k, double *out)
{
    enum { KMAX = 4 };
    if (dots == DOTS_CUB_MPI) {
        /* what a user writes without gpureduce: local sums, then MPI_Allreduce */
        const double *yy[KMAX];
        double local[KMAX];
        for (int j = 0; j < k; ++j)
            yy[j] = y[j] ? y[j] : x[j];
        TRY(cg, cg->ops->local_dots(cg, x, yy, k, local));
        MPI_TRY(cg, MPI_Allreduce(local, out, k, MPI_DOUBLE, MPI_SUM, cg->comm));
        for (int j = 0; j < k; ++j)
            if (!y[j])
                out[j] = sqrt(out[j]);
        return;
    }
    /* Started on the solver's stream: ordered after the stencil queued there, no host synchronisation
     * before it; the host blocks once, in gr_wait, for the k values. */
    gr_call_t call;
    gr_call_init(&call);
    call.stream = (gr_stream_t)cg->stream;
    gr_request_t req = batch_start(cg, x, y, k, &call);
    if (cg->mark_it >= 0) /* --phases: after the GPU work of the dots, before the host waits */
        TRY(cg, cg->ops->mark(cg, cg->mark_it, CG_MARK_DOTS));
    batch_wait(cg, &req, k, out);
}

/*
 * --update device: gamma = r.r and delta = r.w as gpureduce's ORDERED result: the two gr_value_t reach
 * cg->vals_dev in stream order (one rank, fast: written by the batch's kernel; else after this rank's
 * combine), so the update that reads them is queued (queue: not after the last iteration) before the host
 * waits, and the GPU goes from the dots to the update without waiting for the host. The host then waits
 * for the same values (its stopping test and bookkeeping). The update computes alpha and beta as the
 * host does (cg_step) and skips itself where the host stops (cg_recursive_residual), so the bits are those
 * of --update host.
 */
static void dots_then_update(cg_t *cg, const double *const *x, const double *const *y, double *out, int queue,
                             double gamma_prev, double alpha_prev, int first, double bnorm, double tol)
{
    gr_call_t call;
    gr_call_init(&call);
    call.stream = (gr_stream_t)cg->stream;
    call.result_dev = cg->vals_dev;
    call.ordered = 1;
    gr_request_t req = batch_start(cg, x, y, 2, &call);
    if (cg->mark_it >= 0) { /* nothing on the stream waits for the host: values takes no GPU time */
        TRY(cg, cg->ops->mark(cg, cg->mark_it, CG_MARK_DOTS));
        TRY(cg, cg->ops->mark(cg, cg->mark_it, CG_MARK_VALUES));
    }
    if (queue) {
        TRY(cg, cg->ops->update_dev(cg, gamma_prev, alpha_prev, first, bnorm, tol));
        if (cg->mark_it >= 0)
            TRY(cg, cg->ops->mark(cg, cg->mark_it, CG_MARK_UPDATE));
    }
    batch_wait(cg, &req, 2, out);
}

static uint64_t mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull; /* splitmix64's finalizer */
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/*
 * 64-bit hash of the solution's bits in global order: the sum mod 2^64 of
 * mix64(bits(x_g) ^ mix64(g ^ K)) over the global index g. Each term is
 * fixed by (g, x_g) alone, so the slabs' sums add up to the same hash for
 * any split over the ranks.
 */
static uint64_t solution_hash(cg_t *cg)
{
    double *plane = (double *)malloc((size_t)cg->plane * sizeof(double));
    if (!plane) {
        cg_fail(cg, "out of host memory for one plane of %lld points", (long long)cg->plane);
        die(cg);
    }
    uint64_t h = 0;
    for (int64_t kz = 0; kz < cg->nz; ++kz) {
        TRY(cg, cg->ops->plane_to_host(cg, cg->v[CG_X], kz, plane));
        const uint64_t g0 = (uint64_t)((cg->z0 + kz) * cg->plane);
        for (int64_t c = 0; c < cg->plane; ++c) {
            uint64_t bits;
            memcpy(&bits, &plane[c], sizeof(bits));
            h += mix64(bits ^ mix64((g0 + (uint64_t)c) ^ 0x9e3779b97f4a7c15ull));
        }
    }
    free(plane);
    uint64_t all = 0;
    MPI_TRY(cg, MPI_Allreduce(&h, &all, 1, MPI_UINT64_T, MPI_SUM, cg->comm));
    return all;
}

/* Chronopoulos-Gear CG from x = 0 (docs/CG.md): one batch of two dots per iteration. */
static void solve(cg_t *cg, const opts_t *o, result_t *res)
{
    double *x = cg->v[CG_X], *r = cg->v[CG_R], *w = cg->v[CG_W], *b = cg->v[CG_B];
    const double *bx[1] = {b}, *none[1] = {NULL};
    double bnorm = 0;
    reduce(cg, o->dots, bx, none, 1, &bnorm);
    const double *dx[2] = {r, w}, *dy[2] = {r, r};
    double gamma_prev = 0, alpha_prev = 0, t_second = 0, t_last = 0, t_dots = 0;
    const double t_start = MPI_Wtime();
    int64_t it = 0;
    for (;;) {
        const double now = MPI_Wtime();
        if (it == 1)
            t_second = now;
        t_last = now;
        if (o->phases) {
            cg->mark_it = it;
            TRY(cg, cg->ops->mark(cg, it, CG_MARK_START));
        }
        TRY(cg, cg->ops->halo(cg, r));
        TRY(cg, cg->ops->apply(cg, w, r, NULL));
        if (o->phases)
            TRY(cg, cg->ops->mark(cg, it, CG_MARK_STENCIL));
        double gd[2], t0 = 0;
        if (o->time_dots) { /* from an idle GPU: the stencil done, the dots alone */
            TRY(cg, cg->ops->sync(cg));
            t0 = MPI_Wtime();
        }
        /* gamma = r.r, delta = r.Ar */
        if (o->update == UPDATE_DEVICE) {
            dots_then_update(cg, dx, dy, gd, it < o->maxit, gamma_prev, alpha_prev, it == 0, bnorm, o->tol);
        } else {
            reduce(cg, o->dots, dx, dy, 2, gd);
            if (o->phases)
                TRY(cg, cg->ops->mark(cg, it, CG_MARK_VALUES));
        }
        if (o->time_dots && it >= 1)
            t_dots += MPI_Wtime() - t0;
        cg->mark_it = -1;
        const double gamma = gd[0], delta = gd[1];
        res->recursive = cg_recursive_residual(gamma, bnorm);
        res->converged = res->recursive <= o->tol;
        if (res->converged || it >= o->maxit || !isfinite(res->recursive))
            break; /* --update device: the queued update has skipped itself on the same test */
        double alpha, beta;
        cg_step(gamma, delta, gamma_prev, alpha_prev, it == 0, &alpha, &beta);
        if (o->update != UPDATE_DEVICE) {
            TRY(cg, cg->ops->update(cg, alpha, beta));
            if (o->phases)
                TRY(cg, cg->ops->mark(cg, it, CG_MARK_UPDATE));
        }
        gamma_prev = gamma;
        alpha_prev = alpha;
        ++it;
    }
    TRY(cg, cg->ops->sync(cg));
    const double t_end = MPI_Wtime();
    /* from the second iteration on (the first one's calls allocate), one interval per iteration */
    double tpi = it >= 2 ? (t_last - t_second) / (double)(it - 1) : (t_end - t_start) / (double)(it + 1);
    MPI_TRY(cg, MPI_Allreduce(&tpi, &res->time_per_iteration, 1, MPI_DOUBLE, MPI_MAX, cg->comm));
    /* the dots of iterations 1..it (the last one's included: it ends the loop) */
    double dpi = it >= 1 ? t_dots / (double)it : 0.0;
    MPI_TRY(cg, MPI_Allreduce(&dpi, &res->dots_per_iteration, 1, MPI_DOUBLE, MPI_MAX, cg->comm));
    if (o->phases) {
        double t[CG_PHASES];
        TRY(cg, cg->ops->phases(cg, t, &res->phase_iters));
        for (int p = 0; p < CG_PHASES; ++p)
            t[p] = res->phase_iters > 0 ? t[p] / (double)res->phase_iters : 0.0;
        MPI_TRY(cg, MPI_Allreduce(t, res->phase, CG_PHASES, MPI_DOUBLE, MPI_MAX, cg->comm));
    }
    res->iterations = it;

    /* the true residual b - A x, in w */
    TRY(cg, cg->ops->halo(cg, x));
    TRY(cg, cg->ops->apply(cg, w, x, b));
    const double *wx[1] = {w};
    double rnorm = 0;
    reduce(cg, o->dots, wx, none, 1, &rnorm);
    res->residual = rnorm / bnorm;
    res->hash = solution_hash(cg);
}

static void print_result(const cg_t *cg, const opts_t *o, const result_t *res)
{
    const char *mode = mode_names[o->mode];
    const char *dots = dots_names[o->dots];
    if (o->json) {
        printf("{\"np\": %d, \"n\": %lld, \"unknowns\": %lld, \"mode\": \"%s\", \"backend\": \"%s\", \"dots\": \"%s\", "
               "\"update\": \"%s\", \"tol\": %.17g, \"maxit\": %lld, \"iterations\": %lld, \"converged\": %s, \"residual\": %.17g, "
               "\"residual_hex\": \"%a\", \"recursive_residual\": %.17g, \"solution_hash\": \"%016llx\", "
               "\"time_per_iteration\": %.6e",
               cg->np, (long long)o->n, (long long)(o->n * o->n * o->n), mode, cg->ops->name, dots,
               update_names[o->update], o->tol,
               (long long)o->maxit, (long long)res->iterations, res->converged ? "true" : "false", res->residual,
               res->residual, res->recursive, (unsigned long long)res->hash, res->time_per_iteration);
        if (o->time_dots)
            printf(", \"dots_time_per_iteration\": %.6e", res->dots_per_iteration);
        if (o->phases)
            printf(", \"phases\": {\"iterations\": %lld, \"stencil\": %.6e, \"dots\": %.6e, \"values\": %.6e, "
                   "\"update\": %.6e}",
                   (long long)res->phase_iters, res->phase[0], res->phase[1], res->phase[2], res->phase[3]);
        printf("}\n");
        return;
    }
    printf("gpureduce-cg: 3-D Poisson, 7-point stencil, %lld^3 = %lld unknowns in z-slabs over %d rank(s)\n",
           (long long)o->n, (long long)(o->n * o->n * o->n), cg->np);
    printf("  %-20s %d\n", "np", cg->np);
    printf("  %-20s %lld\n", "n", (long long)o->n);
    printf("  %-20s %s\n", "mode", mode);
    printf("  %-20s %s\n", "backend", cg->ops->name);
    printf("  %-20s %s\n", "dots", dots);
    printf("  %-20s %s\n", "update", update_names[o->update]);
    printf("  %-20s %lld (%s, tol %g, maxit %lld)\n", "iterations", (long long)res->iterations,
           res->converged ? "converged" : "not converged", o->tol, (long long)o->maxit);
    printf("  %-20s %.6e  ||b - Ax|| / ||b||\n", "residual", res->residual);
    printf("  %-20s %a\n", "residual_hex", res->residual);
    printf("  %-20s %016llx\n", "solution_hash", (unsigned long long)res->hash);
    printf("  %-20s %.3f ms\n", "time_per_iteration", res->time_per_iteration * 1e3);
    if (o->time_dots)
        printf("  %-20s %.3f ms  (the dots alone, from an idle GPU)\n", "dots_time_per_iter",
               res->dots_per_iteration * 1e3);
    if (o->phases)
        printf("  %-20s stencil %.1f us, dots %.1f us, values %.1f us, update %.1f us  (GPU events, mean of %lld "
               "iterations)\n",
               "phases", res->phase[0] * 1e6, res->phase[1] * 1e6, res->phase[2] * 1e6, res->phase[3] * 1e6,
               (long long)res->phase_iters);
}

/* The backend every rank agrees on: cuda when asked (and seen), cpu when asked, auto: cuda when all see a GPU. */
static const cg_ops_t *choose_backend(cg_t *cg, gr_backend_t want, int *ngpu)
{
    *ngpu = 0;
    if (want == GR_BACKEND_CPU)
        return &cg_cpu_ops;
#ifdef CG_WITH_CUDA
    char why[256] = "";
    *ngpu = cg_cuda_device_count(why, sizeof(why));
    int mine = *ngpu > 0, all = 0;
    MPI_TRY(cg, MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD));
    if (want == GR_BACKEND_CUDA && !mine) {
        cg_fail(cg, "--backend cuda, but this rank sees no CUDA GPU (%s); run on a GPU node, check "
                    "CUDA_VISIBLE_DEVICES, or use --backend cpu",
                why);
        die(cg);
    }
    return all ? &cg_cuda_ops : &cg_cpu_ops;
#else
    if (want == GR_BACKEND_CUDA) {
        cg_fail(cg, "--backend cuda, but this gpureduce-cg was built without CUDA; rebuild it with a CUDA "
                    "toolkit and a CUDA-enabled libgpureduce, or use --backend cpu");
        die(cg);
    }
    return &cg_cpu_ops;
#endif
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    cg_t cg_s;
    cg_t *cg = &cg_s;
    memset(cg, 0, sizeof(*cg));
    cg->comm = MPI_COMM_WORLD;
    cg->gpu = -1;
    cg->mark_it = -1;
    MPI_Comm_rank(cg->comm, &cg->rank);
    MPI_Comm_size(cg->comm, &cg->np);
    int len = 0;
    MPI_Get_processor_name(cg->host, &len);

    opts_t o;
    parse_options(cg, argc, argv, &o);
    if (o.help) {
        if (cg->rank == 0)
            fputs(usage_text, stdout);
        MPI_Finalize();
        return 0;
    }
    if (o.n < cg->np) {
        usage_error(cg, "--n %lld with %d ranks: every rank needs at least one z-plane; use --n >= np",
                    (long long)o.n, cg->np);
    }

    /* this rank's slab: planes [z0, z0 + nz), uneven splits as gpureduce shards arrays */
    uint64_t zb = 0, ze = 0;
    gr_shard_range((uint64_t)o.n, cg->np, cg->rank, &zb, &ze);
    cg->n = o.n;
    cg->z0 = (int64_t)zb;
    cg->nz = (int64_t)(ze - zb);
    cg->plane = o.n * o.n;
    cg->below = cg->rank > 0 ? cg->rank - 1 : MPI_PROC_NULL;
    cg->above = cg->rank + 1 < cg->np ? cg->rank + 1 : MPI_PROC_NULL;

    int ngpu = 0;
    cg->ops = choose_backend(cg, (gr_backend_t)o.backend, &ngpu);
    if (o.phases && !cg->ops->mark)
        usage_error(cg, "--phases times the GPU's work from CUDA events; the %s backend has none: use --backend cuda "
                        "on a GPU node, or leave --phases out", cg->ops->name);
#ifdef CG_WITH_CUDA
    if (cg->ops == &cg_cuda_ops) {
        /* the application's choice of GPU: node-local rank modulo the GPUs seen (ranks may share one) */
        MPI_Comm node;
        int local_rank = 0;
        MPI_TRY(cg, MPI_Comm_split_type(cg->comm, MPI_COMM_TYPE_SHARED, cg->rank, MPI_INFO_NULL, &node));
        MPI_Comm_rank(node, &local_rank);
        MPI_Comm_free(&node);
        TRY(cg, cg_cuda_select(cg, local_rank % ngpu));
    }
#endif
    TRY(cg, cg->ops->init(cg));

    if (o.dots == DOTS_GPUREDUCE) {
        gr_config_t cfg;
        gr_config_init(&cfg);
        cg->mode = (gr_mode_t)o.mode;
        if (cg->stream) {
            cfg.backend = GR_BACKEND_CUDA;
            cfg.device = GR_DEVICE_CURRENT;       /* the GPU chosen above; sharing one is fine */
            cfg.stream = (gr_stream_t)cg->stream; /* every reduction ordered on the solver's stream */
        } else {
            cfg.backend = GR_BACKEND_CPU;
        }
        GR_TRY(cg, gr_ctx_create(cg->comm, &cfg, &cg->ctx));
    }

    /* --update device needs gpureduce's ordered result in device memory, so the GPU and --dots gpureduce */
    const int can_dev = o.dots == DOTS_GPUREDUCE && cg->stream && cg->ops->update_dev;
    if (o.update == UPDATE_DEVICE && !can_dev)
        usage_error(cg, "--update device queues the update before the dots' values reach the host, from "
                        "gpureduce's ordered result on the GPU: it needs --dots gpureduce and the cuda backend; "
                        "use --update host (or auto)");
    if (o.update == UPDATE_AUTO)
        o.update = can_dev ? UPDATE_DEVICE : UPDATE_HOST;

    result_t res;
    memset(&res, 0, sizeof(res));
    solve(cg, &o, &res);
    if (cg->rank == 0) {
        print_result(cg, &o, &res);
        fflush(stdout);
    }
    if (cg->ctx)
        GR_TRY(cg, gr_ctx_destroy(cg->ctx));
    cg->ops->fini(cg);
    MPI_Finalize();
    return 0;
}
