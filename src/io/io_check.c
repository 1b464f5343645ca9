/*
 * io_check.c - checked MPI-IO transfers and the one-line account of a
 * failure (see gr_io.h).
 */
#define _POSIX_C_SOURCE 200809L
#include "gr_io.h"
#include "gr_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

const char *gr_io_errno_name(int err)
{
    switch (err) {
    case ENOSPC: return "ENOSPC";
    case EDQUOT: return "EDQUOT";
    case EIO: return "EIO";
    case EACCES: return "EACCES";
    case EPERM: return "EPERM";
    case EROFS: return "EROFS";
    case ENOENT: return "ENOENT";
    case EFBIG: return "EFBIG";
    case ESTALE: return "ESTALE";
    case EBADF: return "EBADF";
    case EINVAL: return "EINVAL";
    case ENOMEM: return "ENOMEM";
    }
    return NULL;
}

void gr_io_cause(int err, char *buf, size_t cap)
{
    const char *advice;
    switch (err) {
    case 0: snprintf(buf, cap, "cause unknown (the file system reported no error number)"); return;
    case ENOSPC: advice = "free space on that file system or write elsewhere"; break;
    case EDQUOT: advice = "your disk quota is used up; free space or write elsewhere"; break;
    case EIO: advice = "the device or file system failed; check it (dmesg) and retry"; break;
    case EACCES:
    case EPERM: advice = "check the permissions of the file and its directory"; break;
    case EROFS: advice = "the file system is read-only; write elsewhere"; break;
    case ENOENT: advice = "the file or its directory was removed while in use"; break;
    case EFBIG: advice = "the file is too large for this file system or the process's limit (ulimit -f)"; break;
    case ESTALE: advice = "the network file system lost the file; retry"; break;
    default: advice = "check the file system"; break;
    }
    const char *name = gr_io_errno_name(err);
    if (name)
        snprintf(buf, cap, "%s (%s): %s", strerror(err), name, advice);
    else
        snprintf(buf, cap, "%s (errno %d): %s", strerror(err), err, advice);
}

void gr_io_fault_set(gr_io_fault_t *f, const char *what, int err, uint64_t off, uint64_t len, uint64_t done)
{
    if (f->failed)
        return;
    f->failed = 1;
    f->err = err;
    f->off = off;
    f->len = len;
    f->done = done;
    snprintf(f->what, sizeof(f->what), "%s", what);
    int r = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    f->rank = r;
    if (gethostname(f->host, sizeof(f->host) - 1) != 0)
        snprintf(f->host, sizeof(f->host), "?");
    f->host[sizeof(f->host) - 1] = '\0';
}

/* Finish bytes [done, want) with POSIX I/O; returns 0 or the errno (-1 for
 * end of file on a read). */
/* Bytes [done, want) on an open fd; returns 0 or the errno (-1 for end of
 * file on a read). */
static int fd_finish(int fd, int writing, uint64_t off, char *buf, size_t want, size_t *done)
{
    while (*done < want) {
        ssize_t k = writing ? pwrite(fd, buf + *done, want - *done, (off_t)(off + *done))
                            : pread(fd, buf + *done, want - *done, (off_t)(off + *done));
        if (k < 0) {
            if (errno == EINTR)
                continue;
            return errno;
        }
        if (k == 0)
            return writing ? ENOSPC : -1; /* a write of 0 bytes makes no progress: the device is full */
        *done += (size_t)k;
    }
    return 0;
}

static int posix_finish(const char *path, int writing, uint64_t off, char *buf, size_t want, size_t *done)
{
    int fd = open(path, writing ? O_WRONLY | O_CLOEXEC : O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return errno;
    int e = fd_finish(fd, writing, off, buf, want, done);
    close(fd);
    return e;
}

int gr_io_pread(int fd, uint64_t off, void *buf, size_t want, gr_io_fault_t *f)
{
    size_t done = 0;
    int e = fd_finish(fd, 0, off, (char *)buf, want, &done);
    if (e == 0)
        return 0;
    gr_io_fault_set(f, "pread", e > 0 ? e : 0, off, want, done);
    f->eof = e < 0;
    f->xfer = 1;
    return -1;
}

int gr_io_check_transfer(const char *path, int writing, const char *what, int rc, MPI_Status *st, uint64_t off,
                         void *buf, size_t want, gr_io_fault_t *f)
{
    int got = 0;
    if (rc == MPI_SUCCESS && MPI_Get_count(st, MPI_BYTE, &got) != MPI_SUCCESS)
        got = 0;
    if (rc == MPI_SUCCESS && got == (int)want)
        return 0;
    /* rc != MPI_SUCCESS says nothing of how much moved: redo all of it */
    size_t done = rc == MPI_SUCCESS && got > 0 ? (size_t)got : 0;
    int e = posix_finish(path, writing, off, (char *)buf, want, &done);
    if (e == 0) {
        GR_INFO(GR_SUB_IO, "%s of %zu bytes at offset %llu on '%s' moved %d bytes; finished with %s", what, want,
                (unsigned long long)off, path, got, writing ? "pwrite" : "pread");
        return 0;
    }
    gr_io_fault_set(f, what, e > 0 ? e : 0, off, want, done);
    f->eof = e < 0;
    f->xfer = 1;
    return -1;
}

int gr_io_fault_agree(MPI_Comm comm, gr_io_fault_t *f)
{
    int me = 0, np = 1;
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &np);
    int mine = f->failed ? me : np, first = np;
    if (MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, comm) != MPI_SUCCESS)
        return 1;
    if (first == np)
        return 0;
    if (MPI_Bcast(f, (int)sizeof(*f), MPI_BYTE, first, comm) != MPI_SUCCESS)
        f->failed = 1;
    return 1;
}

void gr_io_fault_text(const gr_io_fault_t *f, char *buf, size_t cap)
{
    char cause[256];
    if (f->eof)
        snprintf(cause, sizeof(cause), "the file ended early: it shrank or was replaced while it was read");
    else
        gr_io_cause(f->err, cause, sizeof(cause));
    if (f->xfer)
        snprintf(buf, cap, "rank %d (host %s): %s of %llu bytes at offset %llu stopped after %llu bytes: %s",
                 (int)f->rank, f->host, f->what, (unsigned long long)f->len, (unsigned long long)f->off,
                 (unsigned long long)f->done, cause);
    else
        snprintf(buf, cap, "rank %d (host %s): %s failed: %s", (int)f->rank, f->host, f->what, cause);
}
