/* log.c - the one logger: "[rank R host H gpu G] file:line: message". */
#define _POSIX_C_SOURCE 200809L
#include "gr_env.h"
#include "gr_internal.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

static int g_rank = -1;
static int g_gpu = -1;
static char g_host[256];
static int g_level = -1;
static unsigned g_subsys = GR_SUB_ALL;
/* gr_last_error: the last error line of any thread */
static pthread_mutex_t g_last_mu = PTHREAD_MUTEX_INITIALIZER;
static char g_last_error[2600];

/* Read GR_DEBUG and GR_DEBUG_SUBSYS once, whichever thread logs first (the
 * cpu backend's workers may). */
static void log_init(void)
{
    g_level = GR_LOG_WARN;
    const char *lv = gr_env(GR_ENV_DEBUG);
    if (lv && *lv) {
        if (!strcasecmp(lv, "error"))
            g_level = GR_LOG_ERROR;
        else if (!strcasecmp(lv, "warn"))
            g_level = GR_LOG_WARN;
        else if (!strcasecmp(lv, "info"))
            g_level = GR_LOG_INFO;
        else if (!strcasecmp(lv, "debug") || !strcasecmp(lv, "trace"))
            g_level = GR_LOG_DEBUG;
        else
            fprintf(stderr, "gpureduce: GR_DEBUG='%s' is not a log level (error, warn, info, debug); using warn\n",
                    lv);
    }
    const char *ss = gr_env(GR_ENV_DEBUG_SUBSYS);
    if (ss && *ss) {
        static const struct {
            const char *name;
            unsigned bit;
        } names[] = {{"init", GR_SUB_INIT}, {"bind", GR_SUB_BIND}, {"cuda", GR_SUB_CUDA},
                     {"cpu", GR_SUB_CPU},   {"mpi", GR_SUB_MPI},   {"io", GR_SUB_IO},
                     {"bench", GR_SUB_BENCH}, {"all", GR_SUB_ALL}};
        char buf[256];
        snprintf(buf, sizeof(buf), "%s", ss);
        g_subsys = 0;
        for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
            size_t i = 0;
            while (i < sizeof(names) / sizeof(names[0]) && strcasecmp(tok, names[i].name))
                ++i;
            if (i < sizeof(names) / sizeof(names[0]))
                g_subsys |= names[i].bit;
            else
                fprintf(stderr, "gpureduce: GR_DEBUG_SUBSYS: '%s' is not a subsystem (init, bind, cuda, cpu, mpi, io, "
                                "bench, all); ignored\n", tok);
        }
    }
    if (!g_host[0] && gethostname(g_host, sizeof(g_host) - 1) != 0)
        snprintf(g_host, sizeof(g_host), "unknown");
}

static void log_setup(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, log_init);
}

void gr_log_set_rank(int rank) { g_rank = rank; }
void gr_log_set_gpu(int gpu) { g_gpu = gpu; }
int gr_log_rank(void) { return g_rank; }

const char *gr_log_host(void)
{
    log_setup();
    return g_host;
}

int gr_log_enabled(gr_log_level_t lvl, unsigned subsys)
{
    log_setup();
    return (int)lvl <= g_level && (lvl == GR_LOG_ERROR || (subsys & g_subsys) != 0);
}

void gr_log_prefix(char *buf, size_t len)
{
    log_setup();
    if (g_gpu >= 0)
        snprintf(buf, len, "[rank %d host %s gpu %d]", g_rank, g_host, g_gpu);
    else
        snprintf(buf, len, "[rank %d host %s]", g_rank, g_host);
}

void gr_log(gr_log_level_t lvl, unsigned subsys, const char *file, int line, const char *fmt, ...)
{
    (void)subsys;
    static const char *tags[] = {"error", "warn", "info", "debug"};
    char prefix[400], msg[2048];
    const char *base = strrchr(file, '/');
    base = base ? base + 1 : file;
    gr_log_prefix(prefix, sizeof(prefix));
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    /* one fprintf per line so ranks' lines do not interleave mid-line */
    fprintf(stderr, "%s %s:%d: %s: %s\n", prefix, base, line, tags[lvl], msg);
    fflush(stderr);
    if (lvl == GR_LOG_ERROR) {
        pthread_mutex_lock(&g_last_mu);
        snprintf(g_last_error, sizeof(g_last_error), "%s %s:%d: %s: %s", prefix, base, line, tags[lvl], msg);
        pthread_mutex_unlock(&g_last_mu);
    }
}

size_t gr_last_error(char *buf, size_t len)
{
    pthread_mutex_lock(&g_last_mu);
    size_t n = strlen(g_last_error);
    if (buf && len > 0)
        snprintf(buf, len, "%s", g_last_error);
    pthread_mutex_unlock(&g_last_mu);
    return n;
}

void gr_clear_last_error(void)
{
    pthread_mutex_lock(&g_last_mu);
    g_last_error[0] = '\0';
    pthread_mutex_unlock(&g_last_mu);
}

double gr_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}
