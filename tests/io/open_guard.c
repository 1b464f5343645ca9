/*
 * open_guard.c - LD_PRELOAD shim for the io tests.
 *
 * GR_GUARD_PATH=F   every open(2) family call on F is logged to
 *                   GR_GUARD_LOG ("<pid> rdonly|WRITE flags=0x..") and any
 *                   open for writing (O_WRONLY, O_RDWR, O_CREAT, O_TRUNC,
 *                   O_APPEND) fails with EPERM, so a test sees both the flags
 *                   the input was opened with and that no write got through.
 * GR_DENY_PATH=F    opens of F fail with EACCES: "no read permission" for a
 *                   test that runs as root, whom mode 000 does not stop.
 *
 * Paths are compared after realpath(), so "./x.npy" and "/abs/x.npy" match.
 */
#define _GNU_SOURCE
#undef _FORTIFY_SOURCE /* we define open() itself, not the fortified inline wrapper */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int matches(const char *env, int dirfd, const char *path)
{
    const char *want = getenv(env);
    if (!want || !*want || !path)
        return 0;
    char a[PATH_MAX], b[PATH_MAX];
    if (!realpath(want, a))
        return 0;
    if (path[0] != '/' && dirfd != AT_FDCWD)
        return 0; /* relative to another directory: not what the tests open */
    if (!realpath(path, b))
        return 0;
    return strcmp(a, b) == 0;
}

static int writes(int flags)
{
    return (flags & O_ACCMODE) != O_RDONLY || (flags & (O_CREAT | O_TRUNC | O_APPEND)) != 0;
}

/* 0: go ahead; -1 with errno set: refuse. */
static int check(int dirfd, const char *path, int flags)
{
    if (matches("GR_DENY_PATH", dirfd, path)) {
        errno = EACCES;
        return -1;
    }
    if (!matches("GR_GUARD_PATH", dirfd, path))
        return 0;
    const char *log = getenv("GR_GUARD_LOG");
    if (log && *log) {
        /* append with the real syscall path (not through our own open) */
        int (*real_open)(const char *, int, ...) = (int (*)(const char *, int, ...))dlsym(RTLD_NEXT, "open");
        int fd = real_open ? real_open(log, O_WRONLY | O_CREAT | O_APPEND, 0644) : -1;
        if (fd >= 0) {
            char line[128];
            int n = snprintf(line, sizeof(line), "%d %s flags=0x%x\n", (int)getpid(), writes(flags) ? "WRITE" : "rdonly",
                             flags);
            if (n > 0 && write(fd, line, (size_t)n) < 0)
                n = 0;
            close(fd);
        }
    }
    if (writes(flags)) {
        errno = EPERM;
        return -1;
    }
    return 0;
}

#define MODE_ARG(flags, mode)                                 \
    mode_t mode = 0;                                          \
    if ((flags) & (O_CREAT | O_TMPFILE)) {                    \
        va_list ap;                                           \
        va_start(ap, flags);                                  \
        mode = (mode_t)va_arg(ap, int);                       \
        va_end(ap);                                           \
    }

#define GUARD_OPEN(name)                                                            \
    int name(const char *path, int flags, ...)                                      \
    {                                                                               \
        MODE_ARG(flags, mode)                                                       \
        static int (*real)(const char *, int, ...);                                 \
        if (!real)                                                                  \
            real = (int (*)(const char *, int, ...))dlsym(RTLD_NEXT, #name);        \
        if (check(AT_FDCWD, path, flags) != 0)                                      \
            return -1;                                                              \
        return real(path, flags, mode);                                             \
    }

#define GUARD_OPENAT(name)                                                          \
    int name(int dirfd, const char *path, int flags, ...)                           \
    {                                                                               \
        MODE_ARG(flags, mode)                                                       \
        static int (*real)(int, const char *, int, ...);                            \
        if (!real)                                                                  \
            real = (int (*)(int, const char *, int, ...))dlsym(RTLD_NEXT, #name);   \
        if (check(dirfd, path, flags) != 0)                                         \
            return -1;                                                              \
        return real(dirfd, path, flags, mode);                                      \
    }

GUARD_OPEN(open)
GUARD_OPEN(open64)
GUARD_OPENAT(openat)
GUARD_OPENAT(openat64)

/* the fortified entry points (-D_FORTIFY_SOURCE) */
int __open_2(const char *path, int flags);
int __open64_2(const char *path, int flags);
int __open_2(const char *path, int flags) { return open(path, flags); }
int __open64_2(const char *path, int flags) { return open64(path, flags); }

FILE *fopen(const char *path, const char *how)
{
    static FILE *(*real)(const char *, const char *);
    if (!real)
        real = (FILE * (*)(const char *, const char *)) dlsym(RTLD_NEXT, "fopen");
    int flags = strchr(how, 'w') || strchr(how, 'a') || strchr(how, '+') ? O_RDWR : O_RDONLY;
    if (check(AT_FDCWD, path, flags) != 0)
        return NULL;
    return real(path, how);
}
