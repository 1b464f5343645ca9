/*
 * gr_io.h - checked file transfers: every MPI-IO read and write is checked
 * for its byte count as well as its return code, and a short transfer is
 * finished (or diagnosed) with POSIX I/O so the error names its cause.
 *
 * Open MPI 4.1's MPI-IO returns MPI_SUCCESS for a write that the file system
 * cut short (a full disk): only the count in the status tells. POSIX allows a
 * short transfer, so the missing part is retried with pwrite/pread; that
 * either completes it or fails with the errno that names the cause (ENOSPC,
 * EDQUOT, EIO, ...).
 */
#ifndef GR_IO_H
#define GR_IO_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

/* The first failure of a transfer on one rank, shareable as bytes. */
typedef struct gr_io_fault {
    int32_t failed; /* 0: no failure */
    int32_t err;    /* errno of the cause; 0 when none is known */
    int32_t rank;
    int32_t eof;    /* a read found the end of the file before the data */
    int32_t xfer;   /* a transfer (off, len, done apply), not a step such as sync or close */
    uint64_t off, len, done; /* the transfer: byte offset, bytes asked, bytes moved */
    char what[96];  /* what failed, e.g. "MPI_File_write_at_all" or "MPI_File_sync" */
    char host[64];
} gr_io_fault_t;

/* "ENOSPC" for ENOSPC etc. (NULL for an errno without a short name here). */
const char *gr_io_errno_name(int err);
/* The cause and what to do, one phrase: "no space left on the device
 * (ENOSPC): free space or write elsewhere". */
void gr_io_cause(int err, char *buf, size_t cap);

/* Record a failure in f (the first one wins). */
void gr_io_fault_set(gr_io_fault_t *f, const char *what, int err, uint64_t off, uint64_t len, uint64_t done);

/* Read want bytes at off of an open file (fd) with POSIX pread (retried on EINTR and short
 * reads): 0, or -1 with *f filled (errno, or eof for a file that ended early).
 * The input pipeline reads its chunks this way: Open MPI 4.1.6's ompio was seen
 * (H200 image, tests/fault read-eio) to return MPI_SUCCESS with the full count
 * from MPI_File_read_at after its preadv failed with EIO, so a status cannot
 * be trusted for reads; pread's return value can. gr_file_open opens the fd on
 * every rank before the MPI handle and before the agreement that precedes any
 * read, so a file replaced while it is read is still the one opened, on every rank. */
int gr_io_pread(int fd, uint64_t off, void *buf, size_t want, gr_io_fault_t *f);

/* After an MPI-IO transfer of want bytes at off that returned rc and st:
 * return 0 when all bytes moved (after finishing a short transfer with POSIX
 * I/O on path), else -1 with the failure recorded in f. writing selects
 * pwrite (buf is read) or pread (buf is filled). */
int gr_io_check_transfer(const char *path, int writing, const char *what, int rc, MPI_Status *st, uint64_t off,
                         void *buf, size_t want, gr_io_fault_t *f);

/* Collective: the lowest rank's fault (or none) on every rank. Returns 1 when
 * some rank failed. */
int gr_io_fault_agree(MPI_Comm comm, gr_io_fault_t *f);

/* The one line for a fault, e.g. "rank 1 (host h): MPI_File_write_at_all of
 * 4194304 bytes at offset 128 wrote 1048576: no space left ... (ENOSPC): ...". */
void gr_io_fault_text(const gr_io_fault_t *f, char *buf, size_t cap);

#endif
