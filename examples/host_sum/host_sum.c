/*
 * host_sum.c - sum a host array spread over MPI ranks with libgpureduce.
 *
 * Every rank owns 1000 doubles of the global array 1, 2, ..., 1000*np and
 * the library returns the sum on every rank: exact mode, so the bits are the
 * same for any number of ranks. Runs on the cpu backend: no GPU needed.
 *
 *   mpirun -np 3 ./host_sum
 */
#include <gpureduce.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

/* A failed call ends the job: the library returns codes and never exits. */
#define CHECK(call)                                                                        \
    do {                                                                                   \
        gr_result_t r_ = (call);                                                           \
        if (r_ != GR_SUCCESS) {                                                            \
            fprintf(stderr, "host_sum: %s failed: %s\n", #call, gr_strerror(r_));          \
            MPI_Abort(MPI_COMM_WORLD, 1);                                                  \
        }                                                                                  \
    } while (0)

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank = 0, size = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    /* this rank's part of the global array: rank*n+1 .. rank*n+n */
    const uint64_t n = 1000;
    double *x = malloc(n * sizeof(*x));
    if (!x) {
        fprintf(stderr, "host_sum: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    for (uint64_t i = 0; i < n; ++i)
        x[i] = (double)((uint64_t)rank * n + i + 1);

    gr_config_t cfg;
    gr_config_init(&cfg);          /* the defaults bind nothing and pick no GPU */
    cfg.backend = GR_BACKEND_CPU;  /* host data, reduced by the CPU's threads */
    gr_ctx_t ctx = NULL;
    CHECK(gr_ctx_create(MPI_COMM_WORLD, &cfg, &ctx));

    gr_desc_t d;
    gr_desc_init(&d);
    d.dtype = GR_F64;
    d.mode = GR_MODE_EXACT; /* the correctly rounded sum: the same bits for any np */
    d.all_ranks = 1;        /* every rank gets the result */
    gr_value_t v;
    CHECK(gr_reduce_host(ctx, x, n, &d, &v, NULL));

    /* the same sum started without blocking, then waited for */
    gr_request_t req = NULL;
    gr_value_t w;
    CHECK(gr_ireduce_host(ctx, x, n, &d, NULL, &req));
    CHECK(gr_wait(&req, &w, NULL));

    const double total = (double)n * (double)size;
    const double expect = total * (total + 1.0) / 2.0;
    int ok = v.valid && v.f == expect && w.f == v.f && v.count == n * (uint64_t)size;
    if (rank == 0)
        printf("host_sum: %d ranks, %llu values, sum %.1f (expected %.1f): %s\n", size,
               (unsigned long long)v.count, v.f, expect, ok ? "ok" : "WRONG");

    CHECK(gr_ctx_destroy(ctx));
    free(x);
    int all_ok = 0;
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    MPI_Finalize();
    return all_ok ? 0 : 1;
}
