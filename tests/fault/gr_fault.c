/*
 * gr_fault.c - an LD_PRELOAD shim that makes file I/O fail on purpose, for
 * the fault-injection tests (tests/fault/run_faults.sh).
 *
 * It watches only file descriptors opened on paths that contain
 * GR_FAULT_PATH, and only in the process whose MPI rank is GR_FAULT_RANK
 * (from OMPI_COMM_WORLD_RANK / PMIX_RANK / SLURM_PROCID; unset = every rank).
 * GR_FAULT_OP says what fails:
 *   write     pwrite/pwritev/write on such an fd: after GR_FAULT_AFTER bytes
 *             (counted over all writes) a write is cut short at the limit and
 *             the next one fails with GR_FAULT_ERRNO (as a full disk does)
 *   read      the same for pread/preadv/read
 *   open      open/openat of such a path fails with GR_FAULT_ERRNO
 *   fsync     fsync/fdatasync of such an fd fails with GR_FAULT_ERRNO
 *   truncate  after GR_FAULT_AFTER bytes read, the file is truncated to
 *             GR_FAULT_SIZE bytes (it shrinks while it is read)
 *   rmdir     after GR_FAULT_AFTER bytes written, the file is unlinked and
 *             its directory removed (the output directory vanishes)
 *   replace   after GR_FAULT_AFTER bytes read, the file GR_FAULT_WITH is
 *             renamed over it (the path now names another file)
 * GR_FAULT_ERRNO: ENOSPC (default), EIO, EDQUOT, EACCES, EPERM or a number.
 * Each triggered fault prints one line to stderr when GR_FAULT_VERBOSE=1.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

enum { OP_NONE, OP_WRITE, OP_READ, OP_OPEN, OP_FSYNC, OP_TRUNCATE, OP_RMDIR, OP_REPLACE };

static int g_op = -1; /* -1: not configured yet */
static int g_errno = ENOSPC;
static long long g_after, g_size;
static const char *g_path;
static long long g_count; /* bytes moved on watched fds */
static int g_fired;
static char g_watched_path[PATH_MAX];
static unsigned char g_watch[65536];
static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;

static int parse_errno(const char *s)
{
    static const struct { const char *n; int e; } t[] = {
        {"ENOSPC", ENOSPC}, {"EIO", EIO}, {"EDQUOT", EDQUOT}, {"EACCES", EACCES}, {"EPERM", EPERM}, {"EROFS", EROFS}};
    for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); ++i)
        if (!strcmp(s, t[i].n))
            return t[i].e;
    return atoi(s) > 0 ? atoi(s) : ENOSPC;
}

static void config(void)
{
    if (g_op >= 0)
        return;
    g_op = OP_NONE;
    const char *op = getenv("GR_FAULT_OP"), *path = getenv("GR_FAULT_PATH");
    if (!op || !path || !*path)
        return;
    const char *want = getenv("GR_FAULT_RANK");
    if (want && *want) {
        const char *r = getenv("OMPI_COMM_WORLD_RANK");
        if (!r)
            r = getenv("PMIX_RANK");
        if (!r)
            r = getenv("SLURM_PROCID");
        if (!r)
            r = "0";
        if (atoi(r) != atoi(want))
            return;
    }
    static const char *const names[] = {"", "write", "read", "open", "fsync", "truncate", "rmdir", "replace"};
    for (int i = 1; i < 8; ++i)
        if (!strcmp(op, names[i]))
            g_op = i;
    g_path = path;
    if (getenv("GR_FAULT_ERRNO"))
        g_errno = parse_errno(getenv("GR_FAULT_ERRNO"));
    if (getenv("GR_FAULT_AFTER"))
        g_after = atoll(getenv("GR_FAULT_AFTER"));
    if (getenv("GR_FAULT_SIZE"))
        g_size = atoll(getenv("GR_FAULT_SIZE"));
}

static void say(const char *what)
{
    const char *v = getenv("GR_FAULT_VERBOSE");
    if (v && *v == '1') {
        char line[512];
        int n = snprintf(line, sizeof(line), "gr_fault: pid %d: %s on %s after %lld bytes\n", (int)getpid(), what,
                         g_watched_path, g_count);
        if (n > 0)
            (void)!write(2, line, (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1);
    }
}

static int watched(int fd) { return g_op > OP_NONE && fd >= 0 && fd < (int)sizeof(g_watch) && g_watch[fd]; }

static int matches(const char *path)
{
    config();
    return g_op > OP_NONE && path && strstr(path, g_path);
}

static void track(int fd, const char *path)
{
    if (fd >= 0 && fd < (int)sizeof(g_watch) && matches(path)) {
        g_watch[fd] = 1;
        snprintf(g_watched_path, sizeof(g_watched_path), "%s", path);
    }
}

#define REAL(ret, name, args)                                                  \
    static ret(*real_##name) args;                                             \
    static void load_##name(void)                                              \
    {                                                                          \
        if (!real_##name)                                                      \
            *(void **)(&real_##name) = dlsym(RTLD_NEXT, #name);                \
    }

REAL(int, open, (const char *, int, ...))
REAL(int, open64, (const char *, int, ...))
REAL(int, openat, (int, const char *, int, ...))
REAL(int, openat64, (int, const char *, int, ...))
REAL(int, close, (int))
REAL(ssize_t, pwrite, (int, const void *, size_t, off_t))
REAL(ssize_t, pwrite64, (int, const void *, size_t, off_t))
REAL(ssize_t, pwritev, (int, const struct iovec *, int, off_t))
REAL(ssize_t, pwritev64, (int, const struct iovec *, int, off_t))
REAL(ssize_t, write, (int, const void *, size_t))
REAL(ssize_t, pread, (int, void *, size_t, off_t))
REAL(ssize_t, pread64, (int, void *, size_t, off_t))
REAL(ssize_t, preadv, (int, const struct iovec *, int, off_t))
REAL(ssize_t, preadv64, (int, const struct iovec *, int, off_t))
REAL(ssize_t, read, (int, void *, size_t))
REAL(ssize_t, writev, (int, const struct iovec *, int))
REAL(ssize_t, readv, (int, const struct iovec *, int))
REAL(int, fsync, (int))
REAL(int, fdatasync, (int))

/* How many of want bytes may move now: want, fewer (cut at the limit), or
 * -1 with errno set. Also fires the truncate / rmdir actions. */
static ssize_t allow(int fd, int writing, size_t want)
{
    if (!watched(fd))
        return (ssize_t)want;
    pthread_mutex_lock(&g_mu);
    ssize_t ok = (ssize_t)want;
    int limit_op = writing ? OP_WRITE : OP_READ;
    if (g_op == limit_op) {
        if (g_count >= g_after) {
            say(writing ? "write fails" : "read fails");
            errno = g_errno;
            ok = -1;
        } else if (g_count + (long long)want > g_after) {
            ok = (ssize_t)(g_after - g_count);
            say(writing ? "write cut short" : "read cut short");
        }
    } else if (!g_fired && g_count + (long long)want > g_after &&
               ((g_op == OP_TRUNCATE && !writing) || (g_op == OP_REPLACE && !writing) || (g_op == OP_RMDIR && writing))) {
        g_fired = 1;
        if (g_op == OP_REPLACE) {
            say("replacing the file");
            const char *with = getenv("GR_FAULT_WITH");
            if (!with || rename(with, g_watched_path) != 0)
                perror("gr_fault: rename GR_FAULT_WITH over the file");
        } else if (g_op == OP_TRUNCATE) {
            say("truncating the file");
            if (truncate(g_watched_path, (off_t)g_size) != 0)
                perror("gr_fault: truncate");
        } else {
            char dir[PATH_MAX];
            snprintf(dir, sizeof(dir), "%s", g_watched_path);
            say("removing the file and its directory");
            if (unlink(g_watched_path) != 0 || rmdir(dirname(dir)) != 0)
                perror("gr_fault: unlink/rmdir");
        }
    }
    if (ok > 0)
        g_count += ok;
    pthread_mutex_unlock(&g_mu);
    return ok;
}

static ssize_t iov_total(const struct iovec *v, int n)
{
    size_t t = 0;
    for (int i = 0; i < n; ++i)
        t += v[i].iov_len;
    return (ssize_t)t;
}

/* A vector transfer cut to k bytes: the leading iovecs that fit. */
static int iov_cut(const struct iovec *v, int n, size_t k, struct iovec *out)
{
    int m = 0;
    for (int i = 0; i < n && k > 0 && m < 64; ++i) {
        out[m] = v[i];
        if (out[m].iov_len > k)
            out[m].iov_len = k;
        k -= out[m].iov_len;
        ++m;
    }
    return m;
}

static int do_open(int (*fn)(const char *, int, ...), const char *path, int flags, mode_t mode)
{
    if (matches(path) && g_op == OP_OPEN) {
        snprintf(g_watched_path, sizeof(g_watched_path), "%s", path);
        say("open fails");
        errno = g_errno;
        return -1;
    }
    int fd = fn(path, flags, mode);
    track(fd, path);
    return fd;
}

#define OPEN_WRAPPER(name)                                                     \
    int name(const char *path, int flags, ...)                                 \
    {                                                                          \
        mode_t mode = 0;                                                       \
        if (flags & (O_CREAT | O_TMPFILE)) {                                   \
            va_list ap;                                                        \
            va_start(ap, flags);                                               \
            mode = (mode_t)va_arg(ap, int);                                    \
            va_end(ap);                                                        \
        }                                                                      \
        load_##name();                                                         \
        return do_open(real_##name, path, flags, mode);                        \
    }
OPEN_WRAPPER(open)
OPEN_WRAPPER(open64)

#define OPENAT_WRAPPER(name)                                                   \
    int name(int dirfd, const char *path, int flags, ...)                      \
    {                                                                          \
        mode_t mode = 0;                                                       \
        if (flags & (O_CREAT | O_TMPFILE)) {                                   \
            va_list ap;                                                        \
            va_start(ap, flags);                                               \
            mode = (mode_t)va_arg(ap, int);                                    \
            va_end(ap);                                                        \
        }                                                                      \
        load_##name();                                                         \
        if (matches(path) && g_op == OP_OPEN) {                                \
            say("open fails");                                                 \
            errno = g_errno;                                                   \
            return -1;                                                         \
        }                                                                      \
        int fd = real_##name(dirfd, path, flags, mode);                        \
        track(fd, path);                                                       \
        return fd;                                                             \
    }
OPENAT_WRAPPER(openat)
OPENAT_WRAPPER(openat64)

int close(int fd)
{
    load_close();
    if (fd >= 0 && fd < (int)sizeof(g_watch))
        g_watch[fd] = 0;
    return real_close(fd);
}

#define PIO_WRAPPER(name, W, bufT)                                             \
    ssize_t name(int fd, bufT buf, size_t n, off_t off)                        \
    {                                                                          \
        load_##name();                                                         \
        ssize_t k = allow(fd, W, n);                                           \
        if (k < 0)                                                             \
            return -1;                                                         \
        return real_##name(fd, buf, (size_t)k, off);                           \
    }
PIO_WRAPPER(pwrite, 1, const void *)
PIO_WRAPPER(pwrite64, 1, const void *)
PIO_WRAPPER(pread, 0, void *)
PIO_WRAPPER(pread64, 0, void *)

#define PIOV_WRAPPER(name, W)                                                  \
    ssize_t name(int fd, const struct iovec *v, int cnt, off_t off)            \
    {                                                                          \
        load_##name();                                                         \
        ssize_t want = iov_total(v, cnt);                                      \
        ssize_t k = allow(fd, W, (size_t)want);                                \
        if (k < 0)                                                             \
            return -1;                                                         \
        if (k == want)                                                         \
            return real_##name(fd, v, cnt, off);                               \
        struct iovec cut[64];                                                  \
        int m = iov_cut(v, cnt, (size_t)k, cut);                               \
        return m ? real_##name(fd, cut, m, off) : 0;                           \
    }
PIOV_WRAPPER(pwritev, 1)
PIOV_WRAPPER(pwritev64, 1)
PIOV_WRAPPER(preadv, 0)
PIOV_WRAPPER(preadv64, 0)

ssize_t write(int fd, const void *buf, size_t n)
{
    load_write();
    ssize_t k = allow(fd, 1, n);
    return k < 0 ? -1 : real_write(fd, buf, (size_t)k);
}

ssize_t read(int fd, void *buf, size_t n)
{
    load_read();
    ssize_t k = allow(fd, 0, n);
    return k < 0 ? -1 : real_read(fd, buf, (size_t)k);
}

#define IOV_WRAPPER(name, W)                                                   \
    ssize_t name(int fd, const struct iovec *v, int cnt)                       \
    {                                                                          \
        load_##name();                                                         \
        ssize_t want = iov_total(v, cnt);                                      \
        ssize_t k = allow(fd, W, (size_t)want);                                \
        if (k < 0)                                                             \
            return -1;                                                         \
        if (k == want)                                                         \
            return real_##name(fd, v, cnt);                                    \
        struct iovec cut[64];                                                  \
        int m = iov_cut(v, cnt, (size_t)k, cut);                               \
        return m ? real_##name(fd, cut, m) : 0;                                \
    }
IOV_WRAPPER(writev, 1)
IOV_WRAPPER(readv, 0)

static int sync_fault(int fd)
{
    if (watched(fd) && g_op == OP_FSYNC) {
        say("fsync fails");
        errno = g_errno;
        return 1;
    }
    return 0;
}

int fsync(int fd)
{
    load_fsync();
    return sync_fault(fd) ? -1 : real_fsync(fd);
}

int fdatasync(int fd)
{
    load_fdatasync();
    return sync_fault(fd) ? -1 : real_fdatasync(fd);
}
