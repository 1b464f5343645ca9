/*
 * progress.c - the progress line of long work (progress.h). The main thread
 * only stores numbers under a mutex; a helper thread, one per phase, wakes
 * every 0.2 s (terminal) or 0.5 s (elsewhere) and draws. Everything goes to
 * stderr, one write(2) per line.
 */
#define _POSIX_C_SOURCE 200809L /* isatty, clock_gettime, pthread_condattr_setclock */
#include "progress.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

/* Drawing: at most 5 times a second on a terminal; a log line every 10 s,
 * looked at twice a second (the helper stays out of the timed work's way). */
#define PROG_TICK_S 0.2
#define PROG_LOG_TICK_S 0.5
#define PROG_LOG_EVERY_S 10.0
/* Seconds a phase runs before its first line, unless GR_PROGRESS_AFTER says. */
#define PROG_AFTER_TTY_S 0.5
#define PROG_AFTER_LOG_S 5.0

typedef struct prog {
    int on;            /* rank 0 and not quiet */
    int tty;           /* stderr is a terminal: redraw in place */
    double after;      /* seconds before the first line */
    pthread_mutex_t m;
    pthread_cond_t c;
    int cond_ok;       /* c was made on CLOCK_MONOTONIC */
    /* the phase */
    int active, stop, paused, have_thread;
    pthread_t tid;
    char label[160], unit[16], detail[128];
    cli_prog_kind_t kind;
    uint64_t total, done;
    double t0;
    double t_done;     /* seconds into the phase when done last changed */
    int shown;         /* a line of this phase was printed */
    int drawn;         /* a terminal line is open (no newline yet) */
    size_t drawn_len;  /* its length, to blank it */
    double last;       /* when the last line was printed */
} prog_t;

static prog_t P = {.m = PTHREAD_MUTEX_INITIALIZER};

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* "4.2 s", "3m07s", "2h05m" */
static void fmt_time(char *b, size_t len, double s)
{
    if (s < 0)
        s = 0;
    if (s < 60)
        snprintf(b, len, "%.1f s", s);
    else if (s < 3600)
        snprintf(b, len, "%dm%02ds", (int)(s / 60), (int)s % 60);
    else
        snprintf(b, len, "%dh%02dm", (int)(s / 3600), (int)(s / 60) % 60);
}

/* Seconds left at the rate so far (done by t_done), counted from t; 0: unknown. */
static double eta_s(double t)
{
    if (P.done == 0 || P.done >= P.total || P.t_done <= 0)
        return 0;
    double left = P.t_done / (double)P.done * (double)(P.total - P.done) - (t - P.t_done);
    return left > 0.05 ? left : 0.05;
}

/* The phase's line, without a line end. final: the phase is over. */
static void render(char *b, size_t len, double t, int final)
{
    char el[32], eta[32] = "";
    fmt_time(el, sizeof(el), t);
    int n = snprintf(b, len, "gpureduce: %s", P.label);
    if (n < 0 || (size_t)n >= len)
        return;
    b += n;
    len -= (size_t)n;
    const char *unit = P.unit[0] ? P.unit : "run";
    switch (P.kind) {
    case CLI_PROG_RUNS:
    case CLI_PROG_STEPS:
        if (final) {
            snprintf(b, len, ": %llu %s%s in %s", (unsigned long long)P.done, unit, P.done == 1 ? "" : "s", el);
            return;
        }
        if (P.kind == CLI_PROG_RUNS && eta_s(t) > 0)
            fmt_time(eta, sizeof(eta), eta_s(t));
        if (P.total > 0) /* the one under way; the last until the phase ends */
            n = snprintf(b, len, ": %s %llu of %llu", unit,
                         (unsigned long long)(P.done < P.total ? P.done + 1 : P.total), (unsigned long long)P.total);
        else
            n = snprintf(b, len, ": %s %llu", unit, (unsigned long long)P.done + 1);
        if (n < 0 || (size_t)n >= len)
            return;
        b += n;
        len -= (size_t)n;
        snprintf(b, len, "%s%s%s, %s%s%s", P.detail[0] ? " (" : "", P.detail, P.detail[0] ? ")" : "", el,
                 eta[0] ? ", ETA " : "", eta);
        return;
    case CLI_PROG_BYTES: {
        const double gb = P.total >= 1000000000u ? 1e9 : 1e6;
        const char *u = gb == 1e9 ? "GB" : "MB";
        if (final) {
            snprintf(b, len, ": %.2f %s in %s (%.2f GB/s)", (double)P.done / gb, u, el,
                     t > 0 ? (double)P.done / t / 1e9 : 0.0);
            return;
        }
        if (P.done == 0) {
            snprintf(b, len, ": 0 of %.2f %s, %s", (double)P.total / gb, u, el);
            return;
        }
        if (eta_s(t) > 0)
            fmt_time(eta, sizeof(eta), eta_s(t));
        snprintf(b, len, ": %.2f of %.2f %s (%.0f%%), %.2f GB/s, %s%s%s", (double)P.done / gb,
                 (double)P.total / gb, u, P.total ? 100.0 * (double)P.done / (double)P.total : 0.0,
                 P.t_done > 0 ? (double)P.done / P.t_done / 1e9 : 0.0, el, eta[0] ? ", ETA " : "", eta);
        return;
    }
    default:
        snprintf(b, len, final ? ": done in %s" : ": %s", el);
        return;
    }
}

static void put(const char *s, size_t n)
{
    while (n > 0) {
        ssize_t w = write(STDERR_FILENO, s, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return;
        s += w;
        n -= (size_t)w;
    }
}

/* Under P.m: print the line now (terminal: in place; log: one line). */
static void draw(int final)
{
    char line[512], buf[600];
    render(line, sizeof(line), now_s() - P.t0, final);
    size_t len = strlen(line);
    if (P.tty) {
        /* \r, the text, blanks over what is left of a longer previous line */
        size_t pad = P.drawn && P.drawn_len > len ? P.drawn_len - len : 0;
        if (pad > sizeof(buf) - len - 3)
            pad = sizeof(buf) - len - 3;
        buf[0] = '\r';
        memcpy(buf + 1, line, len);
        memset(buf + 1 + len, ' ', pad);
        size_t n = 1 + len + pad;
        if (final)
            buf[n++] = '\n';
        put(buf, n);
        P.drawn = !final;
        P.drawn_len = len;
    } else {
        memcpy(buf, line, len);
        buf[len] = '\n';
        put(buf, len + 1);
    }
    P.shown = 1;
    P.last = now_s();
}

/* Under P.m: take an open terminal line away. */
static void blank(void)
{
    if (!P.drawn)
        return;
    char buf[600];
    size_t n = P.drawn_len + 2 < sizeof(buf) ? P.drawn_len : sizeof(buf) - 2;
    buf[0] = '\r';
    memset(buf + 1, ' ', n);
    buf[n + 1] = '\r';
    put(buf, n + 2);
    P.drawn = 0;
}

static void *ticker(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&P.m);
    while (!P.stop) {
        double wake = now_s() + (P.tty ? PROG_TICK_S : PROG_LOG_TICK_S);
        if (P.cond_ok) {
            struct timespec ts;
            ts.tv_sec = (time_t)wake;
            ts.tv_nsec = (long)((wake - (double)ts.tv_sec) * 1e9);
            while (!P.stop && pthread_cond_timedwait(&P.c, &P.m, &ts) != ETIMEDOUT)
                ;
        } else { /* no monotonic wait: sleep unlocked */
            pthread_mutex_unlock(&P.m);
            struct timespec ts = {0, (long)((P.tty ? PROG_TICK_S : PROG_LOG_TICK_S) * 1e9)};
            nanosleep(&ts, NULL);
            pthread_mutex_lock(&P.m);
        }
        if (P.stop)
            break;
        double t = now_s();
        if (P.paused || t - P.t0 < P.after)
            continue;
        if (P.tty || !P.shown || t - P.last >= PROG_LOG_EVERY_S)
            draw(0);
    }
    pthread_mutex_unlock(&P.m);
    return NULL;
}

void cli_progress_init(int quiet)
{
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    /* GR_PROGRESS: off (0, no), tty (redraw in place), log (plain lines), else auto. mpirun
     * hands ranks a pipe for stderr, so under it auto means log: tty asks for the redrawn line */
    const char *env = gr_env_value("GR_PROGRESS");
    int off = env && (!strcmp(env, "0") || !strcasecmp(env, "off") || !strcasecmp(env, "no"));
    P.on = rank == 0 && !quiet && !off;
    P.tty = isatty(STDERR_FILENO);
    if (env && !strcasecmp(env, "tty"))
        P.tty = 1;
    else if (env && !strcasecmp(env, "log"))
        P.tty = 0;
    P.after = P.tty ? PROG_AFTER_TTY_S : PROG_AFTER_LOG_S;
    const char *a = gr_env_value("GR_PROGRESS_AFTER");
    if (a) {
        char *end = NULL;
        double v = strtod(a, &end);
        if (end && !*end && v >= 0)
            P.after = v;
    }
    pthread_condattr_t ca;
    if (P.on && pthread_condattr_init(&ca) == 0) {
        if (pthread_condattr_setclock(&ca, CLOCK_MONOTONIC) == 0 && pthread_cond_init(&P.c, &ca) == 0)
            P.cond_ok = 1;
        pthread_condattr_destroy(&ca);
    }
}

int cli_progress_on(void) { return P.on; }

void cli_progress_begin(const char *label, cli_prog_kind_t kind, uint64_t total, const char *unit)
{
    if (!P.on)
        return;
    cli_progress_end();
    pthread_mutex_lock(&P.m);
    snprintf(P.label, sizeof(P.label), "%s", label);
    snprintf(P.unit, sizeof(P.unit), "%s", unit ? unit : "");
    P.detail[0] = 0;
    P.kind = kind;
    P.total = total;
    P.done = 0;
    P.t_done = 0;
    P.t0 = now_s();
    P.last = P.t0;
    P.shown = P.drawn = P.stop = P.paused = 0;
    P.active = 1;
    P.have_thread = pthread_create(&P.tid, NULL, ticker, NULL) == 0;
    pthread_mutex_unlock(&P.m);
}

void cli_progress_set(uint64_t done)
{
    if (!P.on)
        return;
    pthread_mutex_lock(&P.m);
    if (done != P.done)
        P.t_done = now_s() - P.t0;
    P.done = done;
    pthread_mutex_unlock(&P.m);
}

void cli_progress_detail(const char *fmt, ...)
{
    if (!P.on)
        return;
    pthread_mutex_lock(&P.m);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(P.detail, sizeof(P.detail), fmt, ap);
    va_end(ap);
    pthread_mutex_unlock(&P.m);
}

void cli_progress_end(void)
{
    if (!P.on || !P.active)
        return;
    pthread_mutex_lock(&P.m);
    P.stop = 1;
    if (P.cond_ok)
        pthread_cond_signal(&P.c);
    pthread_mutex_unlock(&P.m);
    if (P.have_thread)
        pthread_join(P.tid, NULL);
    pthread_mutex_lock(&P.m);
    if (P.shown || now_s() - P.t0 >= P.after)
        draw(1);
    P.active = P.have_thread = P.drawn = 0;
    pthread_mutex_unlock(&P.m);
}

void cli_progress_pause(void)
{
    if (!P.on)
        return;
    pthread_mutex_lock(&P.m);
    P.paused = 1;
    blank();
    pthread_mutex_unlock(&P.m);
}

void cli_progress_resume(void)
{
    if (!P.on)
        return;
    pthread_mutex_lock(&P.m);
    P.paused = 0;
    pthread_mutex_unlock(&P.m);
}

void cli_progress_break_line(void)
{
    if (!P.on)
        return;
    /* the caller is about to abort: do not wait long for the ticker */
    int locked = pthread_mutex_trylock(&P.m) == 0;
    if (P.drawn)
        put("\n", 1);
    P.drawn = 0;
    P.paused = 1;
    if (locked)
        pthread_mutex_unlock(&P.m);
}

static void lib_progress(gr_progress_phase_t phase, uint64_t done, uint64_t total, void *arg)
{
    (void)phase;
    (void)arg;
    pthread_mutex_lock(&P.m);
    if (P.active && P.kind == CLI_PROG_BYTES && total > 0) {
        P.done = done >= total ? P.total : (uint64_t)((double)P.total * ((double)done / (double)total));
        P.t_done = now_s() - P.t0;
    }
    pthread_mutex_unlock(&P.m);
}

void cli_progress_attach(gr_config_t *cfg)
{
    if (!P.on)
        return;
    cfg->progress = lib_progress;
    cfg->progress_arg = NULL;
}
