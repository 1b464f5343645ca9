/* common.c - how every gpureduce subcommand ends on an error. */
#include "cli.h"

#include <stdlib.h>

void cli_die(const char *cmd, gr_result_t r, const char *what)
{
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    fprintf(stderr, "[rank %d] %s: %s failed: %s; the messages above say why and what to do. Aborting the job.\n",
            rank, cmd, what, gr_strerror(r));
    fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, CLI_EXIT_FAIL);
    exit(CLI_EXIT_FAIL); /* not reached */
}

int cli_usage_error(const char *cmd, const char *msg)
{
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0) {
        fprintf(stderr, "%s: %s\nTry 'gpureduce --help' for the options.\n", cmd, msg);
        fflush(stderr);
    }
    MPI_Finalize();
    return CLI_EXIT_USAGE;
}
