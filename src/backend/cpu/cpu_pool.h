/*
 * cpu_pool.h - the cpu backend's persistent worker threads (private).
 *
 * A pool is created once per context (cpu_init) with threads - 1 workers; the
 * calling thread is always worker 0, so a call of one thread never touches
 * the pool. Workers sleep on a condition variable between calls and are woken
 * by one broadcast per call; the caller waits for the last of them on a
 * second one. gr_cpu_pool_destroy joins every worker.
 *
 * Why pthreads and not OpenMP: libgpureduce lives inside other applications.
 * OpenMP would impose its runtime (libgomp, libomp or the vendor's) on every
 * program that links us, could meet the application's own OpenMP (two
 * runtimes in one process, OMP_NUM_THREADS and OMP_PROC_BIND meant for the
 * application, nested parallel regions), and would take the thread count and
 * placement out of our hands: here cfg.cpu_threads decides the count, and the
 * workers inherit the affinity the binding code gave the creating thread (the
 * cores near the rank's GPU). What we need - a fork/join of one function over
 * a fixed number of threads - is ~120 lines.
 */
#ifndef GR_CPU_POOL_H
#define GR_CPU_POOL_H

typedef struct gr_cpu_pool gr_cpu_pool_t;

/* fn(arg, tid, nthreads) runs once for each tid in [0, nthreads). */
typedef void (*gr_cpu_pool_fn)(void *arg, int tid, int nthreads);

/*
 * A pool for up to `threads` threads (the caller counts as one). Returns
 * NULL only when memory is short; threads that cannot be created are left
 * out (gr_cpu_pool_size says how many there are, a warning says why).
 */
gr_cpu_pool_t *gr_cpu_pool_create(int threads);
/* Threads a call can use, the caller included (>= 1). */
int gr_cpu_pool_size(const gr_cpu_pool_t *p);
/*
 * Run fn on min(nthreads, size) threads, the caller as tid 0, and return when
 * every one has finished. Calls from several application threads at once are
 * serialised. p may be NULL: fn then runs on the caller alone.
 */
void gr_cpu_pool_run(gr_cpu_pool_t *p, int nthreads, gr_cpu_pool_fn fn, void *arg);
/* Wake, stop and join every worker; free p (NULL is fine). */
void gr_cpu_pool_destroy(gr_cpu_pool_t *p);

#endif /* GR_CPU_POOL_H */
