/* common.c - how every gpureduce subcommand ends on an error. */
#include "cli.h"

#include <stdlib.h>

void cli_die(const char *cmd, gr_result_t r, const char *what)
{
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    cli_progress_break_line();
    fprintf(stderr, "[rank %d] %s: %s failed: %s; the messages above say why and what to do. Aborting the job.\n",
            rank, cmd, what, gr_strerror(r));
    fflush(stderr);
    cli_output_discard();
    MPI_Abort(MPI_COMM_WORLD, CLI_EXIT_FAIL);
    exit(CLI_EXIT_FAIL); /* not reached */
}

int cli_usage_error(const char *cmd, const char *msg)
{
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0) {
        fprintf(stderr, "%s: %s\nTry '%s --help' for the options.\n", cmd, msg, cmd);
        fflush(stderr);
    }
    MPI_Finalize();
    return CLI_EXIT_USAGE;
}

/*
 * Warm-up: at least min_runs untimed reductions and, on GPUs, at least
 * GR_CLI_WARMUP_SECONDS of them. An idle H200 sits at a low SM clock and
 * needs tens of milliseconds of work to reach its boost clock; a warm-up of a
 * few runs left half the timed runs of a 2-GPU strong-scaling step on the
 * slow clock (1.10 ms instead of 0.97 ms at 2^30 f32 per rank). Rank 0 of
 * comm decides when to stop, so every rank makes the same collective calls.
 */
#define GR_CLI_WARMUP_SECONDS 0.25
#define GR_CLI_WARMUP_MAX_RUNS 100000

void cli_warmup(const char *cmd, gr_ctx_t ctx, MPI_Comm comm, gr_buffer_t buf, const gr_desc_t *d, int min_runs,
                int report)
{
    double min_s = gr_ctx_backend(ctx) == GR_BACKEND_CUDA ? GR_CLI_WARMUP_SECONDS : 0.0;
    report = report && (min_runs > 0 || min_s > 0);
    if (report)
        cli_progress_begin("warm-up", CLI_PROG_RUNS, min_s > 0 ? 0 : (uint64_t)min_runs, NULL); /* GPU: timed */
    double t0 = MPI_Wtime();
    for (int k = 0;; ++k) {
        int more = k < min_runs || (MPI_Wtime() - t0 < min_s && k < GR_CLI_WARMUP_MAX_RUNS);
        if (MPI_Bcast(&more, 1, MPI_INT, 0, comm) != MPI_SUCCESS)
            cli_die(cmd, GR_ERR_MPI, "MPI_Bcast during the warm-up");
        if (!more)
            break;
        gr_value_t v;
        gr_result_t r = gr_reduce_buffer(ctx, buf, d, &v, NULL);
        if (r != GR_SUCCESS)
            cli_die(cmd, r, "a warm-up reduction");
        if (report)
            cli_progress_set((uint64_t)k + 1);
    }
    if (report)
        cli_progress_end();
}

void cli_root_to_rank0(int root, void *result, size_t bytes, int *repeatable)
{
    int rank = 0;
    if (root == 0)
        return;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == root) {
        if (MPI_Send(result, (int)bytes, MPI_BYTE, 0, 7201, MPI_COMM_WORLD) != MPI_SUCCESS ||
            MPI_Send(repeatable, 1, MPI_INT, 0, 7202, MPI_COMM_WORLD) != MPI_SUCCESS)
            cli_die("gpureduce", GR_ERR_MPI, "sending the result to rank 0");
    } else if (rank == 0) {
        if (MPI_Recv(result, (int)bytes, MPI_BYTE, root, 7201, MPI_COMM_WORLD, MPI_STATUS_IGNORE) != MPI_SUCCESS ||
            MPI_Recv(repeatable, 1, MPI_INT, root, 7202, MPI_COMM_WORLD, MPI_STATUS_IGNORE) != MPI_SUCCESS)
            cli_die("gpureduce", GR_ERR_MPI, "receiving the result from the root");
    }
}

int cli_synthetic_count(const cli_opts_t *o, int np, uint64_t *n)
{
    if ((o->desc.dtype == GR_I32 || o->desc.dtype == GR_I64) && (o->gen == GR_GEN_UNIFORM || o->gen == GR_GEN_NORMAL)) {
        char why[256];
        snprintf(why, sizeof(why), "--gen %s makes real numbers: use --dtype f32 or f64, or --gen ones, iota, "
                                   "randint or stress with --dtype %s",
                 gr_gen_name(o->gen), gr_dtype_name(o->desc.dtype));
        return cli_usage_error("gpureduce", why);
    }
    *n = o->n;
    if (o->have_per_rank) {
        if (o->per_rank > UINT64_MAX / (uint64_t)np)
            return cli_usage_error("gpureduce", "--per-rank times the number of ranks overflows 64 bits");
        *n = o->per_rank * (uint64_t)np;
    }
    return 0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

void stats3(double *v, int n, double *med, double *min, double *max)
{
    if (n <= 0) {
        *med = *min = *max = 0;
        return;
    }
    qsort(v, (size_t)n, sizeof(double), cmp_double);
    *min = v[0];
    *max = v[n - 1];
    *med = (n & 1) ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

int cli_end_run(int verify_fail, int repeatable)
{
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    int status = (verify_fail || !repeatable) ? CLI_EXIT_FAIL : CLI_EXIT_OK;
    MPI_Bcast(&status, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (status != CLI_EXIT_OK && rank == 0)
        fprintf(stderr, "gpureduce: %s\n",
                verify_fail ? "--verify FAILED: the result differs from the reference where it must be exact"
                            : "repeated runs gave different bits");
    MPI_Finalize();
    return status;
}
