/* cpu_pool.c - persistent pthread workers for the cpu backend; see cpu_pool.h. */
#include "cpu_pool.h"

#include "gr_internal.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct pool_worker {
    gr_cpu_pool_t *pool;
    int tid;
} pool_worker_t;

struct gr_cpu_pool {
    pthread_mutex_t call_mu; /* one call at a time */
    pthread_mutex_t mu;      /* guards everything below */
    pthread_cond_t go;       /* generation advanced or stop */
    pthread_cond_t done;     /* pending reached 0 */
    uint64_t generation;     /* one per call that wakes workers */
    int pending;             /* workers of this call still running */
    int stop;
    gr_cpu_pool_fn fn;
    void *arg;
    int active;              /* threads of this call, the caller included */
    int nworkers;            /* created workers: tids 1..nworkers */
    pthread_t *tids;
    pool_worker_t *workers;
};

static void *worker_main(void *a)
{
    pool_worker_t *w = (pool_worker_t *)a;
    gr_cpu_pool_t *p = w->pool;
    uint64_t seen = 0;
    pthread_mutex_lock(&p->mu);
    for (;;) {
        while (p->generation == seen && !p->stop)
            pthread_cond_wait(&p->go, &p->mu);
        if (p->stop)
            break;
        seen = p->generation;
        if (w->tid >= p->active)
            continue; /* not needed for this call */
        gr_cpu_pool_fn fn = p->fn;
        void *arg = p->arg;
        int n = p->active;
        pthread_mutex_unlock(&p->mu);
        fn(arg, w->tid, n);
        pthread_mutex_lock(&p->mu);
        if (--p->pending == 0)
            pthread_cond_signal(&p->done);
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

gr_cpu_pool_t *gr_cpu_pool_create(int threads)
{
    gr_cpu_pool_t *p = (gr_cpu_pool_t *)calloc(1, sizeof(*p));
    if (!p)
        return NULL;
    int want = threads > 1 ? threads - 1 : 0;
    if (want > 0) {
        p->tids = (pthread_t *)calloc((size_t)want, sizeof(pthread_t));
        p->workers = (pool_worker_t *)calloc((size_t)want, sizeof(pool_worker_t));
        if (!p->tids || !p->workers) {
            free(p->tids);
            free(p->workers);
            free(p);
            return NULL;
        }
    }
    pthread_mutex_init(&p->call_mu, NULL);
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->go, NULL);
    pthread_cond_init(&p->done, NULL);
    for (int i = 0; i < want; ++i) {
        p->workers[i].pool = p;
        p->workers[i].tid = i + 1;
        int rc = pthread_create(&p->tids[i], NULL, worker_main, &p->workers[i]);
        if (rc != 0) {
            GR_WARN(GR_SUB_CPU, "cpu backend: could create only %d of %d worker threads (%s); running with %d "
                    "thread(s); raise the process's thread limit (ulimit -u) or set fewer cpu threads",
                    i, want, strerror(rc), i + 1);
            break;
        }
        p->nworkers = i + 1;
    }
    return p;
}

int gr_cpu_pool_size(const gr_cpu_pool_t *p) { return p ? p->nworkers + 1 : 1; }

void gr_cpu_pool_run(gr_cpu_pool_t *p, int nthreads, gr_cpu_pool_fn fn, void *arg)
{
    if (nthreads > gr_cpu_pool_size(p))
        nthreads = gr_cpu_pool_size(p);
    if (nthreads <= 1) {
        fn(arg, 0, 1);
        return;
    }
    pthread_mutex_lock(&p->call_mu);
    pthread_mutex_lock(&p->mu);
    p->fn = fn;
    p->arg = arg;
    p->active = nthreads;
    p->pending = nthreads - 1;
    p->generation++;
    pthread_cond_broadcast(&p->go);
    pthread_mutex_unlock(&p->mu);
    fn(arg, 0, nthreads);
    pthread_mutex_lock(&p->mu);
    while (p->pending > 0)
        pthread_cond_wait(&p->done, &p->mu);
    pthread_mutex_unlock(&p->mu);
    pthread_mutex_unlock(&p->call_mu);
}

void gr_cpu_pool_destroy(gr_cpu_pool_t *p)
{
    if (!p)
        return;
    pthread_mutex_lock(&p->mu);
    p->stop = 1;
    pthread_cond_broadcast(&p->go);
    pthread_mutex_unlock(&p->mu);
    for (int i = 0; i < p->nworkers; ++i)
        pthread_join(p->tids[i], NULL);
    pthread_cond_destroy(&p->done);
    pthread_cond_destroy(&p->go);
    pthread_mutex_destroy(&p->mu);
    pthread_mutex_destroy(&p->call_mu);
    free(p->tids);
    free(p->workers);
    free(p);
}
