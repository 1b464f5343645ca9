/*
 * main.c - gpureduce-bench, the benchmark as a program of its own.
 *
 * Everything only the benchmark needs (the copy ceiling, the seed ladder
 * v0..v8, the CUB and NCCL baselines) lives in bench/ and is linked here, never
 * into libgpureduce or the gpureduce command. `gpureduce bench ARGS` still
 * works: the command replaces itself with this program before MPI starts.
 */
#include "bench.h"

int main(int argc, char **argv)
{
    if (MPI_Init(&argc, &argv) != MPI_SUCCESS) {
        fprintf(stderr, "gpureduce-bench: MPI_Init failed; run under mpirun or srun, or check the MPI installation\n");
        return CLI_EXIT_FAIL;
    }
    /* Errors return to us so ranks can agree instead of dying mid-collective. */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    return cli_output_finish(cli_bench_main(argc, argv));
}
