/*
 * gr_internal.h - library-private declarations: logger, check macros, the
 * context, the backend table and the cross-rank partial.
 */
#ifndef GR_INTERNAL_H
#define GR_INTERNAL_H

#include "gpureduce.h"
#include "gr_common.h"
#include "gr_xacc.h"

#include <stdarg.h>
#include <stdint.h>

/* ---------------------------------------------------------------------------
 * Logger. Every line starts "[rank R host H gpu G] file:line: ". The level
 * comes from GR_DEBUG (error|warn|info|debug, default warn) and the
 * subsystems from GR_DEBUG_SUBSYS (comma list of init,bind,cuda,cpu,mpi,io,
 * bench or all; default all).
 * ------------------------------------------------------------------------- */
typedef enum gr_log_level { GR_LOG_ERROR = 0, GR_LOG_WARN = 1, GR_LOG_INFO = 2, GR_LOG_DEBUG = 3 } gr_log_level_t;

enum {
    GR_SUB_INIT = 1 << 0,
    GR_SUB_BIND = 1 << 1,
    GR_SUB_CUDA = 1 << 2,
    GR_SUB_CPU = 1 << 3,
    GR_SUB_MPI = 1 << 4,
    GR_SUB_IO = 1 << 5,
    GR_SUB_BENCH = 1 << 6,
    GR_SUB_ALL = 0x7F
};

/* Identity that prefixes every line; set as soon as it is known. */
void gr_log_set_rank(int rank);
void gr_log_set_gpu(int gpu);
int gr_log_rank(void);
const char *gr_log_host(void);
int gr_log_enabled(gr_log_level_t lvl, unsigned subsys);
void gr_log(gr_log_level_t lvl, unsigned subsys, const char *file, int line, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 5, 6)))
#endif
    ;
/* The prefix "[rank R host H gpu G]" into buf (for the CLI's own messages). */
void gr_log_prefix(char *buf, size_t len);

#define GR_LOG_AT(lvl, sub, ...)                                    \
    do {                                                            \
        if (gr_log_enabled((lvl), (sub)))                           \
            gr_log((lvl), (sub), __FILE__, __LINE__, __VA_ARGS__);  \
    } while (0)
/* An error where it is found (always shown); GR_FAIL also returns the code. */
#define GR_ERROR(sub, ...) gr_log(GR_LOG_ERROR, (sub), __FILE__, __LINE__, __VA_ARGS__)
#define GR_WARN(sub, ...) GR_LOG_AT(GR_LOG_WARN, sub, __VA_ARGS__)
#define GR_INFO(sub, ...) GR_LOG_AT(GR_LOG_INFO, sub, __VA_ARGS__)
#define GR_DEBUGLOG(sub, ...) GR_LOG_AT(GR_LOG_DEBUG, sub, __VA_ARGS__)

/* Where an error starts: log it once (always shown) and return the code. */
#define GR_FAIL(res, ...)                                                    \
    do {                                                                     \
        gr_log(GR_LOG_ERROR, GR_SUB_ALL, __FILE__, __LINE__, __VA_ARGS__);   \
        return (res);                                                        \
    } while (0)

/* On the way up: pass the code on, with a trace line at info level. */
#define GR_CHECK(call)                                                       \
    do {                                                                     \
        gr_result_t gr_r_ = (call);                                          \
        if (gr_r_ != GR_SUCCESS) {                                           \
            GR_INFO(GR_SUB_ALL, "<- %s: %s", #call, gr_strerror(gr_r_));     \
            return gr_r_;                                                    \
        }                                                                    \
    } while (0)

#define GR_CHECK_GOTO(call, res, label)                                      \
    do {                                                                     \
        (res) = (call);                                                      \
        if ((res) != GR_SUCCESS) {                                           \
            GR_INFO(GR_SUB_ALL, "<- %s: %s", #call, gr_strerror(res));       \
            goto label;                                                      \
        }                                                                    \
    } while (0)

/* MPI adapter: logs the MPI error string. */
#define GR_MPI_CHECK(call)                                                   \
    do {                                                                     \
        int gr_mpi_rc_ = (call);                                             \
        if (gr_mpi_rc_ != MPI_SUCCESS) {                                     \
            char gr_mpi_msg_[MPI_MAX_ERROR_STRING];                          \
            int gr_mpi_len_ = 0;                                             \
            MPI_Error_string(gr_mpi_rc_, gr_mpi_msg_, &gr_mpi_len_);         \
            GR_FAIL(GR_ERR_MPI, "%s failed: %s; check the MPI installation " \
                    "and that every rank is alive", #call, gr_mpi_msg_);     \
        }                                                                    \
    } while (0)

/* ---------------------------------------------------------------------------
 * Cross-rank partial: only exact state crosses ranks, so the combine is
 * associative and commutative and MPI's choice of reduce tree cannot change
 * the bits. Floating partials of fast mode enter the accumulator exactly.
 * ------------------------------------------------------------------------- */
typedef struct gr_partial {
    gr_xacc_t sum;       /* finite part of sum-like ops, exact */
    int64_t count;       /* elements reduced */
    int64_t nan;         /* NaN terms (exact mode) or NaN partials (fast) */
    int64_t pinf;        /* +Inf terms / partials */
    int64_t ninf;        /* -Inf terms / partials */
    int64_t nonnegzero;  /* contributions that were not -0.0 (sign of a zero sum) */
    int64_t overflow;    /* integer terms that did not fit int64 */
    int64_t adds;        /* additions into sum since its last normalisation */
    int64_t failed;      /* ranks whose local reduction failed */
    int64_t failed_rank; /* lowest such rank, INT64_MAX if none */
    int64_t failed_code; /* its gr_result_t */
    double fmin, fmax;   /* floating min/max, NaN-free; -0.0 orders below +0.0 */
    int64_t imin, imax;  /* integer min/max */
} gr_partial_t;

/* Identity for d's op. */
void gr_partial_init(gr_partial_t *p);
/* Fold a backend's local result into p, exactly. */
void gr_partial_add_local(gr_partial_t *p, const gr_desc_t *d, const gr_local_t *loc);
/* Fold one floating term (exact mode, host side) into p. */
void gr_partial_add_term(gr_partial_t *p, double t);
/* p += q (associative, commutative). */
void gr_partial_merge(gr_partial_t *p, const gr_partial_t *q);
/* Keep the accumulator within headroom after many additions. */
void gr_partial_maybe_normalize(gr_partial_t *p);
/* The final value for descriptor d from a fully combined partial. */
void gr_partial_finish(const gr_partial_t *p, const gr_desc_t *d, gr_value_t *out);
/* min/max of two doubles in the total order -0.0 < +0.0 (no NaN). */
double gr_fmin_total(double a, double b);
double gr_fmax_total(double a, double b);

/* ---------------------------------------------------------------------------
 * Backends: one interface, filled by each backend (src/backend/cpu,
 * src/backend/cuda, and src/backend/none for builds without CUDA), chosen
 * once when the context is created (ctx.c) and reached only as ctx->ops.
 * ------------------------------------------------------------------------- */
struct gr_stream_ops;   /* the file input's stream (src/io/gr_stream.h) */
struct gr_stats_part;   /* --op stats partial (src/core/gr_stats.h) */
struct gr_vpartial;     /* vector-op partial (src/core/gr_vec.h) */
typedef struct gr_backend_ops {
    const char *name;
    /* 0 for the stub of a backend this build lacks: its init says what to do */
    int built;
    gr_result_t (*init)(gr_ctx_t ctx, void **state);
    void (*fini)(gr_ctx_t ctx, void *state);
    /* Memory for count elements where this backend reduces fastest. */
    gr_result_t (*alloc)(gr_ctx_t ctx, void *state, uint64_t count, gr_dtype_t t, void **ptr);
    void (*free)(gr_ctx_t ctx, void *state, void *ptr);
    /* Fill ptr[0..count) with generator values for global indices begin.. */
    gr_result_t (*generate)(gr_ctx_t ctx, void *state, void *ptr, gr_dtype_t t, gr_gen_t g,
                            uint64_t seed, uint64_t begin, uint64_t count);
    /* Reduce count elements at ptr (device memory when on_device) into *out. */
    gr_result_t (*reduce)(gr_ctx_t ctx, void *state, const void *ptr, int on_device,
                          uint64_t count, const gr_desc_t *d, gr_partial_t *out);
    /* Non-blocking device reduce (NULL: the backend has none; host data and
     * the cpu backend reduce eagerly). start queues the reduce of count
     * elements at device memory ptr after the work on stream (NULL: none) and
     * returns a token; poll completes it into *out when it can (block: wait)
     * and frees the token once it reports done (also on failure). */
    gr_result_t (*start)(gr_ctx_t ctx, void *state, const void *ptr, uint64_t count, const gr_desc_t *d,
                         void *stream, int *token);
    gr_result_t (*poll)(gr_ctx_t ctx, void *state, int token, uint64_t count, const gr_desc_t *d, int block,
                        int *done, gr_partial_t *out);
    /* Write bytes[0..n) to device address dst, queued on stream (NULL: the backend's). */
    gr_result_t (*deliver)(gr_ctx_t ctx, void *state, void *stream, void *dst, const void *bytes, size_t n);
    /* --op stats of count elements at ptr (device memory when on_device) into *out (initialised). */
    gr_result_t (*stats)(gr_ctx_t ctx, void *state, const void *ptr, int on_device, uint64_t count, gr_dtype_t t,
                         struct gr_stats_part *out);
    /* The vector items (dot, nrm2, argmin, argmax) of a batch on device memory, as
     * gr_cuda_vec_start / gr_cuda_vec_poll say (gr_vec.h). NULL: the backend has no
     * device memory (host items take the host kernels on every backend, vecop.c). */
    gr_result_t (*vec_start)(gr_ctx_t ctx, const gr_batch_item_t *items, int k, void *stream, int blocking,
                             void *result_dev, int *token);
    gr_result_t (*vec_poll)(gr_ctx_t ctx, int token, const gr_batch_item_t *items, int k, int block, int *done,
                            struct gr_vpartial *part);
    /* The chunked file input's stream (src/io/gr_stream.h): how chunks reach this backend. */
    const struct gr_stream_ops *stream;
    /* Ordered results (gr_call_t.ordered): order_arm queues on stream a wait for this rank's release and,
     * after it, the delivery of n bytes to device address dst, and returns a token; order_release (once
     * per token, whatever happened) hands it the n bytes to deliver. NULL: no device results. */
    gr_result_t (*order_arm)(gr_ctx_t ctx, void *stream, void *dst, size_t n, int *token);
    void (*order_release)(gr_ctx_t ctx, int token, const void *bytes, size_t n);
} gr_backend_ops_t;

extern const gr_backend_ops_t gr_backend_cpu_ops;
/* The cuda backend, or its stub (built 0) in a build without CUDA. */
extern const gr_backend_ops_t gr_backend_cuda_ops;
/* Number of CUDA devices this process sees (0 without CUDA or without a GPU). */
int gr_cuda_device_count(void);
/* The calling thread's current CUDA device (-1 without CUDA or on error). */
int gr_cuda_current_device(void);

/* ---------------------------------------------------------------------------
 * Placement (binding.c): which GPU, cores and NUMA node a rank uses, and why.
 * ------------------------------------------------------------------------- */

/* A GPU as the binding code sees it (real, or from GR_FAKE_GPUS). */
typedef struct gr_gpu_info {
    char pci_bus_id[32];
    char name[128];
} gr_gpu_info_t;

/* Real GPUs visible to this process, in CUDA order; returns how many (<= max). */
int gr_cuda_list_gpus(gr_gpu_info_t *gpus, int max);

/*
 * Pick this rank's GPU and bind cores and memory to it (cfg->bind), before
 * any CUDA context exists. want_gpu: the backend needs a GPU. Fills
 * ctx->placement and ctx->device. Collective over ctx->comm.
 */
gr_result_t gr_bind_rank_to_gpu(gr_ctx_t ctx, int want_gpu);

struct gr_ctx {
    MPI_Comm comm;
    int rank, size;
    int local_rank, local_size;
    char host[256];
    gr_config_t cfg;
    gr_backend_t backend;
    const gr_backend_ops_t *ops; /* chosen once, by choose_backend (ctx.c) */
    void *bstate;
    int stream_generic;          /* GR_INPUT_STREAM=generic: file input through the generic stream */
    int device;          /* CUDA ordinal, -1 for cpu */
    char gpu_name[256];
    char pci_bus_id[32];
    MPI_Datatype partial_type;
    MPI_Op partial_op;
    MPI_Datatype vpartial_type; /* gr_vpartial_t (gr_vec.h): dot, nrm2, argmin/argmax, batches */
    MPI_Op vpartial_op;
    gr_placement_t placement;
    /* non-blocking requests (request.c): their combines run on req_comm,
     * started in request order (FIFO), so every rank starts them alike */
    MPI_Comm req_comm;
    struct gr_request *req_head, *req_tail;
    int req_count;
};

struct gr_buffer {
    gr_ctx_t ctx;
    void *ptr;
    int on_device;
    gr_dtype_t dtype;
    uint64_t begin, end;
};

gr_result_t gr_combine_setup(gr_ctx_t ctx);
void gr_combine_teardown(gr_ctx_t ctx);
/* The vector partial's MPI type and op (vecop.c), set up and freed with the above. */
gr_result_t gr_vec_combine_setup(gr_ctx_t ctx);
void gr_vec_combine_teardown(gr_ctx_t ctx);
/* d runs through the vector path (dot, nrm2, argmin, argmax, exact f64 sum of squares). */
int gr_desc_is_vec(const gr_desc_t *d);
/* gr_reference_synthetic of a vector op (vecop.c): exact kernels on host copies of the
 * generator's values (dot: y from seed + 1), finished in d's mode. Collective. */
gr_result_t gr_vec_reference_synthetic(gr_ctx_t ctx, gr_gen_t gen, uint64_t seed, uint64_t global_n,
                                       const gr_desc_t *d, gr_value_t *out);
/* One batch item of descriptor d over x (and y for dot), count elements numbered from index_base. */
void gr_batch_item_of(gr_batch_item_t *it, const gr_desc_t *d, const void *x, const void *y, uint64_t count,
                      int64_t index_base);
/* A batch of k items (vecop.c): local reduce of each, one collective, finish. */
gr_result_t gr_vec_batch_run(gr_ctx_t ctx, const gr_batch_item_t *items, int k, int on_device, gr_value_t *out,
                             gr_timing_t *timing);
/* Exact CPU reference of generator values [begin, begin+count): every term
 * summed exactly (threads <= 0: all cores). */
gr_result_t gr_cpu_reference(int threads, gr_gen_t g, uint64_t seed, uint64_t begin, uint64_t count,
                             const gr_desc_t *d, gr_partial_t *out);
/* All ranks of comm learn the worst of their local results (collective). */
gr_result_t gr_agree(MPI_Comm comm, gr_result_t local);
/* Combine p over ctx's ranks into the value at d's root (or everywhere). */
gr_result_t gr_combine(gr_ctx_t ctx, const gr_desc_t *d, const gr_partial_t *p, gr_value_t *out);
/* gr_combine in two halves around any MPI reduce of partial_type/partial_op
 * (the non-blocking requests use MPI_Ireduce / MPI_Iallreduce): the partial to
 * send, and the value from the reduced partial `all` (p: this rank's own). */
void gr_combine_prepare(const gr_partial_t *p, gr_partial_t *mine);
gr_result_t gr_combine_result(gr_ctx_t ctx, const gr_desc_t *d, const gr_partial_t *p, const gr_partial_t *all,
                              gr_value_t *out);
/* Complete every outstanding request of ctx, dropping results (gr_ctx_destroy). */
void gr_requests_drain(gr_ctx_t ctx);

/* Report progress through the caller's gr_config_t.progress: rank 0 only,
 * nothing for an empty shard (see gr_progress_fn). */
static inline void gr_progress(gr_ctx_t ctx, gr_progress_phase_t phase, uint64_t done, uint64_t total)
{
    if (ctx->cfg.progress && ctx->rank == 0 && total > 0)
        ctx->cfg.progress(phase, done, total, ctx->cfg.progress_arg);
}

/* Wall clock in seconds (monotonic). The one timing helper. */
double gr_now(void);

#endif /* GR_INTERNAL_H */
