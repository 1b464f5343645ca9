/*
 * output.c - where the results go, and proof that they got there.
 *
 * A result that did not reach the disk must not look like one: stdout is
 * flushed and checked before the exit status says success. With --output
 * PATH, rank 0 writes to a temporary file in PATH's directory, syncs it and
 * renames it to PATH only when every byte is on the file system, so PATH is
 * either complete or absent (an older PATH is replaced only by a complete
 * one). Under mpirun without --output, stdout passes through mpirun, which
 * does not report a failed write; --output is the checked way there.
 */
#define _POSIX_C_SOURCE 200809L
#include "cli.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char g_tmp[4096];   /* the temporary file while it exists, else "" */
static char g_final[4096];

/* Called by cli_die before MPI_Abort: no temporary file is left behind. */
void cli_output_discard(void)
{
    if (g_tmp[0]) {
        unlink(g_tmp);
        g_tmp[0] = '\0';
    }
}

int cli_output_begin(const char *path)
{
    if (!path)
        return 0;
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    char msg[1024] = "";
    if (rank == 0) {
        int n = snprintf(g_tmp, sizeof(g_tmp), "%s.tmp.%ld", path, (long)getpid());
        snprintf(g_final, sizeof(g_final), "%s", path);
        int fd = n > 0 && (size_t)n < sizeof(g_tmp) ? open(g_tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644) : -1;
        if (fd < 0) {
            int e = n > 0 && (size_t)n < sizeof(g_tmp) ? errno : ENAMETOOLONG;
            snprintf(msg, sizeof(msg), "gpureduce: --output '%s': cannot create a file in its directory: %s; check "
                     "that the directory exists and is writable", path, strerror(e));
            g_tmp[0] = '\0';
        } else {
            fflush(stdout);
            if (dup2(fd, STDOUT_FILENO) < 0) {
                snprintf(msg, sizeof(msg), "gpureduce: --output '%s': cannot redirect the results: %s", path,
                         strerror(errno));
                cli_output_discard();
            }
            close(fd);
        }
    }
    int bad = msg[0] != '\0';
    MPI_Bcast(&bad, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (bad) {
        if (rank == 0)
            fprintf(stderr, "%s\n", msg);
        MPI_Finalize();
        return -1;
    }
    return 0;
}

int cli_output_finish(int status)
{
    int e = 0;
    const char *step = NULL;
    errno = 0;
    if (fflush(stdout) != 0) {
        e = errno;
        step = "writing";
    } else if (ferror(stdout)) {
        e = 0; /* an earlier write failed; its errno is gone */
        step = "writing";
    } else if (g_tmp[0]) {
        if (fsync(STDOUT_FILENO) != 0) {
            e = errno;
            step = "syncing";
        } else if (status == CLI_EXIT_OK && rename(g_tmp, g_final) != 0) {
            e = errno;
            step = "renaming into place";
        } else if (status == CLI_EXIT_OK) {
            g_tmp[0] = '\0';
        }
    }
    if (step) {
        const char *why = e ? strerror(e) : "a write was cut short (a full disk?)";
        if (g_tmp[0])
            fprintf(stderr, "gpureduce: %s the results to '%s' failed: %s; free space or choose another --output; "
                    "nothing was written there\n", step, g_final, why);
        else
            fprintf(stderr, "gpureduce: %s the results to standard output failed: %s; free space on the file system "
                    "stdout goes to, or use --output PATH\n", step, why);
        status = CLI_EXIT_FAIL;
    }
    cli_output_discard(); /* a failed run leaves no result file */
    return status;
}
