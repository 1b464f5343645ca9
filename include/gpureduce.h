/*
 * gpureduce.h - public interface of libgpureduce.
 *
 * A distributed reducer: every MPI rank reduces its shard (on its GPU, or on
 * the CPU), and the ranks' partials are combined so the result is repeatable.
 *
 * Error rule (stated once, holds for every function below that returns
 * gr_result_t): GR_SUCCESS (0) means the call did everything it promises; any
 * other value means it did nothing observable except what its documentation
 * says, logged one line naming rank, host and GPU through the logger (see
 * GR_DEBUG in docs/ENVIRONMENT.md), and left every object passed in still safe to destroy.
 * The library never prints outside the logger, never parses argv and never
 * exits or aborts; the caller decides (the CLI ends the job with MPI_Abort).
 *
 * Collectivity: gr_ctx_create, gr_ctx_destroy, gr_buffer_create_synthetic and
 * every gr_reduce_* call are collective over the context's communicator. All
 * ranks must pass the same descriptor; each passes its own local data.
 *
 * Embedding (docs/LIBRARY.md): with gr_config_init's defaults the library
 * changes no process-wide state the application owns (no CPU or memory
 * binding); every call leaves the calling thread's current CUDA device as it
 * found it; GPU work is ordered after the caller's stream (gr_stream_t), never
 * by a device-wide synchronisation.
 */
#ifndef GPUREDUCE_H
#define GPUREDUCE_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define GR_VERSION_MAJOR 0
#define GR_VERSION_MINOR 3
#define GR_VERSION_PATCH 0
#define GR_VERSION_STRING "0.3.0"

/** Result codes, from one list so names, numbers and messages never drift. */
#define GR_RESULT_LIST(X)                                                    \
    X(GR_SUCCESS, 0, "success")                                              \
    X(GR_ERR_INVALID_ARG, 1, "invalid argument")                             \
    X(GR_ERR_UNSUPPORTED, 2, "unsupported combination of dtype, op, mode")   \
    X(GR_ERR_NO_GPU, 3, "no CUDA GPU is visible to this rank")               \
    X(GR_ERR_CUDA, 4, "CUDA runtime error")                                  \
    X(GR_ERR_MPI, 5, "MPI error")                                            \
    X(GR_ERR_NOMEM, 6, "out of host memory")                                 \
    X(GR_ERR_DEVMEM, 7, "out of device memory")                              \
    X(GR_ERR_SYSTEM, 8, "system call failed")                                \
    X(GR_ERR_TOPOLOGY, 9, "topology or binding error")                       \
    X(GR_ERR_TOO_MANY_RANKS, 10, "more ranks on a node than GPUs")           \
    X(GR_ERR_IO, 11, "input file error")                                     \
    X(GR_ERR_NOT_BUILT, 12, "feature not compiled into this build")          \
    X(GR_ERR_INTERNAL, 13, "internal error")

typedef enum gr_result {
#define GR_RESULT_ENUM_(name, value, msg) name = value,
    GR_RESULT_LIST(GR_RESULT_ENUM_)
#undef GR_RESULT_ENUM_
} gr_result_t;

/** Static message for a result code; never NULL. */
const char *gr_strerror(gr_result_t r);

/**
 * The last error line the library logged in this process (from any thread),
 * as logged but without the trailing newline ("[rank R host H] file:line:
 * error: message"), copied into buf (len bytes, always NUL-terminated when
 * len > 0; cut to fit); "" when none was logged since the start or since
 * gr_clear_last_error(). Returns the line's full length. Error lines are kept
 * whatever GR_DEBUG says. For bindings that report a failed call's message
 * with its code (the Python package); a failure that started on another rank
 * leaves only that rank's line. Does not log.
 */
size_t gr_last_error(char *buf, size_t len);
/** Forget the last error line (gr_last_error then gives ""). */
void gr_clear_last_error(void);

/** The library's version at run time, "MAJOR.MINOR.PATCH" (GR_VERSION_STRING of its build). */
const char *gr_version(void);

/**
 * Element types of the input. Integers accumulate exactly (128-bit). f16 is
 * IEEE binary16, bf16 is bfloat16 (the top half of an f32); both are held in
 * memory as 2-byte bit patterns (uint16_t) and accumulate in f64 (fast) or
 * exactly (exact), like f32. See docs/NUMERICS.md.
 */
typedef enum gr_dtype { GR_F32 = 0, GR_F64 = 1, GR_I32 = 2, GR_I64 = 3, GR_F16 = 4, GR_BF16 = 5 } gr_dtype_t;
#define GR_DTYPE_COUNT 6

/** Reductions. GR_OP_POWSUM uses gr_op_t.power (1..8). */
typedef enum gr_op_kind {
    GR_OP_SUM = 0,
    GR_OP_MIN = 1,
    GR_OP_MAX = 2,
    GR_OP_ABSSUM = 3,
    GR_OP_SUMSQ = 4,
    GR_OP_POWSUM = 5,
    /* Vector ops (docs/NUMERICS.md): gr_dot_* / gr_reduce_batch_* for dot;
     * nrm2, argmin and argmax also through gr_reduce_host and gr_reduce_buffer. */
    GR_OP_DOT = 6,    /**< sum of x[i]*y[i] over two arrays of one dtype and count */
    GR_OP_NRM2 = 7,   /**< sqrt of the sum of squares, no spurious overflow or underflow */
    GR_OP_ARGMIN = 8, /**< smallest value and its lowest global index (gr_value_t.index) */
    GR_OP_ARGMAX = 9  /**< largest value and its lowest global index */
} gr_op_kind_t;
/** The elementwise ops every backend kernel implements (sum .. powsum). */
#define GR_OP_COUNT 6
/** Every op kind, vector ops included. */
#define GR_OP_KIND_COUNT 10

typedef struct gr_op {
    gr_op_kind_t kind;
    int power; /**< exponent for GR_OP_POWSUM (1..8); ignored otherwise */
} gr_op_t;

/** Numeric contract, see docs/NUMERICS.md. */
typedef enum gr_mode {
    GR_MODE_FAST = 0,  /**< repeatable for a fixed np, GPU model and build */
    GR_MODE_EXACT = 1  /**< correctly rounded exact sum: same bits for any np */
} gr_mode_t;

typedef enum gr_backend {
    GR_BACKEND_AUTO = 0, /**< cuda when a GPU is visible, else cpu */
    GR_BACKEND_CUDA = 1,
    GR_BACKEND_CPU = 2
} gr_backend_t;

/** Synthetic data: pure functions of (seed, global index); see docs/CLI.md "Generators". */
typedef enum gr_gen {
    GR_GEN_ONES = 0,
    GR_GEN_IOTA = 1,
    GR_GEN_UNIFORM = 2,
    GR_GEN_NORMAL = 3,
    GR_GEN_RANDINT = 4,
    GR_GEN_STRESS = 5
} gr_gen_t;
#define GR_GEN_COUNT 6

/** Names for printing and parsing ("f32", "sum", "exact", "cuda", "ones"). */
const char *gr_dtype_name(gr_dtype_t t);
size_t gr_dtype_size(gr_dtype_t t);
const char *gr_op_name(gr_op_kind_t k);
const char *gr_mode_name(gr_mode_t m);
const char *gr_backend_name(gr_backend_t b);
const char *gr_gen_name(gr_gen_t g);

/** Opaque context: one per communicator; owns the backend and its GPU. */
typedef struct gr_ctx *gr_ctx_t;

/** How the context's ranks are placed on GPUs and cores. */
typedef enum gr_bind_policy {
    GR_BIND_GPU = 0,      /**< bind cores and memory to the GPU's locality (the CLI's default) */
    GR_BIND_LAUNCHER = 1, /**< keep whatever binding the launcher set */
    GR_BIND_NONE = 2      /**< unbind nothing, bind nothing (the library's default) */
} gr_bind_policy_t;

/** The long library calls that report progress (gr_config_t.progress). */
typedef enum gr_progress_phase {
    GR_PROGRESS_GENERATE = 0, /**< gr_buffer_create_synthetic: the shard is generated */
    GR_PROGRESS_READ = 1,     /**< gr_reduce_file, gr_stats_file: the shard is read (and reduced) */
    GR_PROGRESS_WRITE = 2     /**< gr_file_write_synthetic: the shard is generated and written */
} gr_progress_phase_t;

/**
 * Progress of a long call: done of total bytes of rank 0's shard. Ranks read
 * in collective lockstep and shards differ by at most one element, so done /
 * total stands for the job's fraction.
 * Called only on rank 0 of the context's communicator, only in the thread
 * that made the call, after each piece (a chunk, or 2^24 elements generated),
 * the last time with done == total; never called with an empty shard. It must
 * not call the library or MPI. The library itself never prints progress.
 */
typedef void (*gr_progress_fn)(gr_progress_phase_t phase, uint64_t done, uint64_t total, void *arg);

/** gr_config_t.device: let the library pick a GPU by node-local rank (the CLI's way). */
#define GR_DEVICE_AUTO (-1)
/** gr_config_t.device: the calling thread's current CUDA device at gr_ctx_create. */
#define GR_DEVICE_CURRENT (-2)

/**
 * A CUDA stream, as a cudaStream_t cast to void * (NULL: none given), so this
 * header needs no CUDA header: `gr_stream_t s = (gr_stream_t)my_cuda_stream;`.
 * cudaStreamPerThread and cudaStreamLegacy are accepted too.
 */
typedef void *gr_stream_t;

/**
 * Context configuration. Always fill it with gr_config_init() first, then set
 * fields: `size` records the layout this program was compiled with, so a
 * newer library keeps working with it (fields it does not know get their
 * defaults). The defaults are an application's: no CPU or memory binding,
 * the GPU picked by node-local rank, no stream of the caller's.
 * See docs/LIBRARY.md "The embedding contract".
 */
typedef struct gr_config {
    size_t size;             /**< sizeof(gr_config_t), set by gr_config_init; do not change */
    gr_backend_t backend;    /**< default GR_BACKEND_AUTO */
    gr_bind_policy_t bind;   /**< default GR_BIND_NONE: process-wide binding only when asked */
    int share_gpus;          /**< allow more ranks than GPUs on a node (GR_DEVICE_AUTO only) */
    int cpu_threads;         /**< cpu backend threads; 0 = cores available */
    int cuda_grid;           /**< debug: force the grid size; 0 = occupancy */
    int cuda_block;          /**< debug: force the block size; 0 = tuned */
    gr_progress_fn progress; /**< progress of long calls (see gr_progress_fn); default NULL: off */
    void *progress_arg;      /**< passed to progress as arg */
    int device;              /**< GR_DEVICE_AUTO (default), GR_DEVICE_CURRENT, or a CUDA ordinal of this
                                  process: with the last two the library makes no GPU choice of its own */
    gr_stream_t stream;      /**< the caller's stream for every call of this context (default NULL: none;
                                  work is then ordered only after the legacy default stream) */
} gr_config_t;

/** Fill *cfg with the defaults above (and its size). */
void gr_config_init(gr_config_t *cfg);

/**
 * Create a context on comm (duplicated internally). Picks the GPU (cuda
 * backend; see gr_config_t.device) or the thread pool (cpu backend), and
 * binds CPUs and memory only when cfg->bind asks for it. NULL cfg: the
 * defaults. The caller's current CUDA device is as it was on return. Collective.
 */
gr_result_t gr_ctx_create(MPI_Comm comm, const gr_config_t *cfg, gr_ctx_t *ctx);

/** Destroy a context; NULL is accepted. Requests still outstanding are
 *  completed first (their results dropped). Collective. */
gr_result_t gr_ctx_destroy(gr_ctx_t ctx);

/**
 * Set the stream of the context's later calls, as gr_config_t.stream does at
 * creation (NULL: none). Local to this rank, not collective; not to be called
 * while another thread uses the context. For callers whose data arrive on a
 * stream of their own per call (a __cuda_array_interface__ stream in Python).
 * GR_ERR_INVALID_ARG for a NULL ctx.
 */
gr_result_t gr_ctx_set_stream(gr_ctx_t ctx, gr_stream_t stream);

/** The backend this context runs (never GR_BACKEND_AUTO). */
gr_backend_t gr_ctx_backend(gr_ctx_t ctx);

/** Where a rank runs: its GPU, cores and NUMA node, and why (see docs/BINDING.md). */
typedef struct gr_placement {
    int rank, local_rank, local_size, pid;
    char host[256];
    int gpu;               /* CUDA ordinal in this process, -1 for none */
    char gpu_name[128];
    char pci_bus_id[32];   /* "0000:07:00.0", "" for none */
    char cpuset[512];      /* hwloc list syntax, e.g. "0-7,16-23" */
    int numa;              /* NUMA node os index, -1 unknown */
    char bound[128];       /* what was bound and by whom */
    char gpu_choice[128];  /* how the GPU was chosen */
} gr_placement_t;

/** This rank's placement (valid for the context's lifetime). */
const gr_placement_t *gr_ctx_placement(gr_ctx_t ctx);

/** This rank's CUDA device ordinal, or -1 for the cpu backend. */
int gr_ctx_device(gr_ctx_t ctx);

/** What a reduction computes and where the result goes. */
typedef struct gr_desc {
    gr_dtype_t dtype;
    gr_op_t op;
    gr_mode_t mode;
    int root;        /**< rank that receives the result (default 0) */
    int all_ranks;   /**< non-zero: every rank receives the result */
} gr_desc_t;

/** Fill *d with f32, sum, fast, root 0. */
void gr_desc_init(gr_desc_t *d);

/** Check a descriptor for sense (op/dtype/mode); GR_ERR_UNSUPPORTED says why in the log. */
gr_result_t gr_desc_validate(const gr_desc_t *d);
/** The same check without logging: the reason goes to msg (may be NULL). */
gr_result_t gr_desc_check(const gr_desc_t *d, char *msg, size_t len);

/**
 * A reduced value. Valid on the root (or on every rank with all_ranks).
 *
 * Floating inputs: value in .f (f32, f16 and bf16 input is accumulated and
 * reported in f64 in fast mode; in exact mode .f holds the exact result
 * rounded once to the input type: an f32, f16 or bf16 value). Integer inputs
 * with sum-like ops: exact value in .i when .overflow is 0; when the exact
 * result does not fit int64, .overflow is non-zero and .f holds the exact
 * result rounded to double; when a term (|x| or x^P) did not fit int64,
 * .overflow is non-zero and .f is NaN. min/max of integers: .i.
 * With all_ranks = 0, a rank that is neither the root nor failed itself
 * returns GR_SUCCESS with .valid = 0 even when another rank failed.
 */
typedef struct gr_value {
    int valid;         /**< non-zero on ranks that hold the result */
    int is_integer;    /**< the result lives in .i */
    int overflow;      /**< integer result did not fit in int64 */
    double f;
    int64_t i;
    uint64_t count;    /**< number of elements reduced, all ranks */
    uint64_t nan_count;/**< NaN inputs seen (floating sum-like ops, exact mode) */
    int dtype;         /**< the descriptor's dtype (gr_dtype_t) on ranks with .valid, so printers know f16/bf16 */
    int64_t index;     /**< argmin/argmax: global index of the value (the lowest one among ties,
                            the first NaN when any); -1 for an empty input and for every other op */
} gr_value_t;

/** Per-call timings of this rank, in seconds. */
typedef struct gr_timing {
    double local;   /**< local reduction, launch to partial in host memory */
    double combine; /**< MPI combine, partial to result at the root */
    double total;   /**< both, as seen by this rank */
} gr_timing_t;

/**
 * Reduce count elements at a device pointer this application owns (cuda
 * backend), or at a host pointer (any backend). timing may be NULL.
 * gr_reduce_device is ordered after the work queued on the context's stream
 * (gr_config_t.stream) and returns when the result is on the host.
 */
gr_result_t gr_reduce_device(gr_ctx_t ctx, const void *dev_ptr, uint64_t count,
                             const gr_desc_t *d, gr_value_t *out, gr_timing_t *timing);
gr_result_t gr_reduce_host(gr_ctx_t ctx, const void *host_ptr, uint64_t count,
                           const gr_desc_t *d, gr_value_t *out, gr_timing_t *timing);

/* ---------------------------------------------------------------------------
 * Vector ops and batches (see docs/NUMERICS.md for the numeric contract).
 *
 * dot(x, y), nrm2(x), argmin(x), argmax(x), and batches of k reductions of
 * any ops, combined with ONE MPI collective for all k results; each result
 * has the bits of its own separate call. nrm2, argmin and argmax of one array
 * also go through gr_reduce_host and gr_reduce_buffer (argmin/argmax there
 * take the buffer's shard start, or 0 for gr_reduce_host, as index base).
 * Host memory is reduced by the host kernels on every backend; device memory
 * (cuda backend) by the GPU kernels of kernels/dot.cu and kernels/argext.cu,
 * with the same exact-mode bits and argmin/argmax results.
 * ------------------------------------------------------------------------- */

/** One reduction of a batch. */
typedef struct gr_batch_item {
    gr_desc_t desc;     /**< dtype, op, mode; root and all_ranks are taken from items[0] */
    const void *x;      /**< this rank's count elements */
    const void *y;      /**< GR_OP_DOT: the second operand (same dtype and count); else NULL */
    uint64_t count;     /**< elements on this rank */
    int64_t index_base; /**< argmin/argmax: global index of x[0] on this rank (e.g. from gr_shard_range) */
} gr_batch_item_t;

/** Fill *it: gr_desc_init's descriptor, no data, count 0, index_base 0. */
void gr_batch_item_init(gr_batch_item_t *it);

/**
 * Reduce k items (1 <= k <= GR_BATCH_MAX) at host memory: out[j] is item j's
 * result (gr_value_t rules). One MPI collective for the whole batch. timing
 * (may be NULL) covers the batch. Collective; every rank passes the same k
 * and the same descriptors.
 */
#define GR_BATCH_MAX 64
gr_result_t gr_reduce_batch_host(gr_ctx_t ctx, const gr_batch_item_t *items, int k, gr_value_t *out,
                                 gr_timing_t *timing);

/** As gr_reduce_batch_host, every x and y in device memory of this rank's GPU (cuda backend):
 *  the vector items' kernels queued together, one MPI collective for the batch. Collective. */
gr_result_t gr_reduce_batch_device(gr_ctx_t ctx, const gr_batch_item_t *items, int k, gr_value_t *out,
                                   gr_timing_t *timing);

/** dot(x, y) of count elements in device memory (cuda backend); d->op is ignored. Collective. */
gr_result_t gr_dot_device(gr_ctx_t ctx, const void *x, const void *y, uint64_t count, const gr_desc_t *d,
                          gr_value_t *out, gr_timing_t *timing);

/** dot(x, y) of count elements on this rank, host memory; d->op is ignored. Collective. */
gr_result_t gr_dot_host(gr_ctx_t ctx, const void *x, const void *y, uint64_t count, const gr_desc_t *d,
                        gr_value_t *out, gr_timing_t *timing);

/* ---------------------------------------------------------------------------
 * Non-blocking reductions (docs/LIBRARY.md). gr_ireduce_device queues the
 * local reduction on the GPU, ordered after the work already queued on the
 * call's stream (gr_call_t.stream, else the context's), with no device-wide
 * synchronisation, and returns a request at once; gr_wait / gr_test complete
 * it: the local result is folded and combined across ranks (an MPI
 * non-blocking collective on the context's own communicator). The result has
 * the same bits as the blocking call's, on every rank.
 *
 * Rules: every rank starts its requests of a context in the same order, with
 * the same descriptors, and completes each of them (gr_wait, or gr_test until
 * done; gr_test may be called any number of times on each rank). At most
 * GR_REQUEST_MAX requests of a context are outstanding at once. Work the
 * caller queues on the stream after the start is ordered after the library
 * has read the input, so the buffer may be reused in stream order. Host data
 * (gr_ireduce_host, and every call on the cpu backend) is reduced locally
 * before the start returns: only the combine is left to wait for.
 * A rank-local failure (a bad pointer, a CUDA error) is logged at once and
 * returned by gr_wait / gr_test, as the blocking call returns it.
 * ------------------------------------------------------------------------- */

/** Most requests of one context outstanding at once. */
#define GR_REQUEST_MAX 32

/** An outstanding reduction; gr_wait / gr_test free it and set it to NULL. */
typedef struct gr_request *gr_request_t;

/** Per-call options; fill with gr_call_init() first (size: as for gr_config_t). */
typedef struct gr_call {
    size_t size;             /**< sizeof(gr_call_t), set by gr_call_init */
    gr_stream_t stream;      /**< the caller's stream for this call; NULL = the context's (gr_config_t.stream) */
    void *result_dev;        /**< cuda: device address (of the context's GPU) that receives the gr_value_t,
                                  written on the stream after the combine, on ranks that hold the result;
                                  NULL = none */
    int ordered;             /**< with result_dev (device data, a stream given): the values reach result_dev
                                  in stream order, so work queued on the stream after the start may read
                                  them (rather than after gr_wait); see "Ordered results" below. 0 = no */
} gr_call_t;

/*
 * Ordered results (gr_call_t.ordered = 1, docs/LIBRARY.md). The start queues,
 * on the call's stream, the delivery of every value to result_dev (on ranks
 * that do not hold the result: gr_value_t.valid 0), so the caller may queue
 * the work that consumes the values (a solver's update computing its step on
 * the GPU) before it waits, and the GPU does not wait for the host to launch
 * it. One rank, every item a fast floating dot: the kernels write the values
 * themselves, nothing waits for the host. Otherwise the values need this
 * rank's combine: the stream waits for it (a one-block kernel watching a host
 * flag) until gr_wait or gr_test completes the request. Complete it before
 * anything waits for that stream (cudaStreamSynchronize, a blocking copy, an
 * event): as with NCCL's collectives, the stream depends on the host here.
 * Freeing the context completes outstanding requests, so no stream is left
 * waiting. A failed request delivers values with valid 0.
 */

/** Fill *call with the defaults (no stream of its own, no device result, not ordered). */
void gr_call_init(gr_call_t *call);

/**
 * Start the reduction of count elements at dev_ptr (memory of the context's
 * GPU, cuda backend). call may be NULL. On success *req is a request to
 * complete with gr_wait or gr_test. Collective when completed.
 */
gr_result_t gr_ireduce_device(gr_ctx_t ctx, const void *dev_ptr, uint64_t count, const gr_desc_t *d,
                              const gr_call_t *call, gr_request_t *req);
/** The same for host memory (any backend); the local pass runs before it returns. */
gr_result_t gr_ireduce_host(gr_ctx_t ctx, const void *host_ptr, uint64_t count, const gr_desc_t *d,
                            const gr_call_t *call, gr_request_t *req);

/**
 * Start a batch of k items (1 <= k <= GR_BATCH_MAX), every x and y in device
 * memory of the context's GPU (cuda backend), without blocking: the rules of
 * gr_ireduce_device (the call's stream, else the context's; no device-wide
 * synchronisation; the caller's stream may reuse the inputs after the start)
 * and of gr_reduce_batch_device (root and all_ranks from items[0]; every rank
 * the same k and descriptors; each item's result has the bits of its own
 * blocking call). The local results of all k items are combined by one MPI
 * non-blocking collective. gr_wait / gr_test then write k values,
 * out[0..k-1]; gr_call_t.result_dev, if set, receives the same k values
 * (k * sizeof(gr_value_t) bytes). The items array is copied: it need not
 * outlive the call; the data must, until the request completes. A batch
 * takes one of the GR_REQUEST_MAX request places, plus one for each item
 * beyond the first that is not dot, nrm2, argmin, argmax or the exact f64
 * sum of squares (those other ops keep a result slot each). dot, nrm2,
 * argmin and argmax also go through gr_ireduce_device / gr_ireduce_host as a
 * batch of one (dot only here: it needs y).
 */
gr_result_t gr_ireduce_batch_device(gr_ctx_t ctx, const gr_batch_item_t *items, int k, const gr_call_t *call,
                                    gr_request_t *req);
/** The same for host memory (any backend); every item is reduced before it returns, the combine is left
 *  to gr_wait / gr_test. */
gr_result_t gr_ireduce_batch_host(gr_ctx_t ctx, const gr_batch_item_t *items, int k, const gr_call_t *call,
                                  gr_request_t *req);

/**
 * Complete *req: the result into out (see gr_value_t; for a request of
 * gr_ireduce_batch_* out holds k values, out[j] the result of item j) and
 * timing (may be NULL: local = start to local result seen, combine = the
 * rest). Frees the request and sets *req to NULL, whatever the result.
 * Collective in the sense above.
 */
gr_result_t gr_wait(gr_request_t *req, gr_value_t *out, gr_timing_t *timing);

/**
 * Like gr_wait when the request can complete without blocking (*done = 1);
 * else *done = 0, nothing is written and the request stays outstanding.
 * For a batch request out holds k values, as for gr_wait.
 */
gr_result_t gr_test(gr_request_t *req, int *done, gr_value_t *out, gr_timing_t *timing);

/** A rank's shard held by the backend (device memory for cuda). */
typedef struct gr_buffer *gr_buffer_t;

/**
 * Materialise this rank's shard of the synthetic global dataset of global_n
 * elements: rank r owns [floor(r*N/np), floor((r+1)*N/np)). Collective.
 */
gr_result_t gr_buffer_create_synthetic(gr_ctx_t ctx, gr_dtype_t dtype, gr_gen_t gen,
                                       uint64_t seed, uint64_t global_n, gr_buffer_t *buf);
gr_result_t gr_buffer_destroy(gr_buffer_t buf);
/** Global element range of this rank's shard. */
void gr_buffer_range(gr_buffer_t buf, uint64_t *begin, uint64_t *end);
gr_dtype_t gr_buffer_dtype(gr_buffer_t buf);

/** Reduce a buffer; d->dtype must match the buffer's. Collective. */
gr_result_t gr_reduce_buffer(gr_ctx_t ctx, gr_buffer_t buf, const gr_desc_t *d,
                             gr_value_t *out, gr_timing_t *timing);

/** Convenience: create, reduce and destroy a synthetic buffer. Collective. */
gr_result_t gr_reduce_synthetic(gr_ctx_t ctx, gr_gen_t gen, uint64_t seed, uint64_t global_n,
                                const gr_desc_t *d, gr_value_t *out, gr_timing_t *timing);

/** dot of two buffers of one dtype and shape (host buffers: cpu backend). Collective. */
gr_result_t gr_dot_buffer(gr_ctx_t ctx, gr_buffer_t x, gr_buffer_t y, const gr_desc_t *d, gr_value_t *out,
                          gr_timing_t *timing);

/**
 * Parse an element count: "1000", "2^30", or a number with K, M, G or T
 * (powers of 1024: "4M" = 4194304). GR_ERR_INVALID_ARG on anything else,
 * negative numbers and overflow included. Does not log.
 */
gr_result_t gr_parse_size(const char *s, uint64_t *out);

/**
 * Reference for a synthetic run, computed on the CPU from the generator
 * formulas (not from any buffer): the exact sum of the f64 terms, rounded
 * once (in exact mode to the input type for f32, f16 and bf16 input, else to
 * f64). Vector ops: the exact host kernels on the generator's values (dot: y
 * from seed + 1, as the CLI's synthetic y), finished in d's mode; argmin/argmax
 * with the global index. Collective.
 */
gr_result_t gr_reference_synthetic(gr_ctx_t ctx, gr_gen_t gen, uint64_t seed, uint64_t global_n,
                                   const gr_desc_t *d, gr_value_t *ref);

/** Rank r's shard [*begin, *end) of n elements over np ranks. */
void gr_shard_range(uint64_t n, int np, int r, uint64_t *begin, uint64_t *end);

/** 1 when the MPI library reports CUDA-aware support at run time, else 0. */
int gr_mpi_cuda_aware(void);
/** 1 when the MPI headers this library was built with declare CUDA-aware support. */
int gr_mpi_cuda_aware_compiled(void);

/* ---------------------------------------------------------------------------
 * Input files: NumPy .npy (format 1.0, 2.0, 3.0) and raw binary, opened
 * read-only with MPI-IO on every rank; each rank reads only its shard
 * [floor(r*N/np), floor((r+1)*N/np)) of the flat array, in chunks, with
 * collective reads, and reduces chunk k while chunk k+1 is read. The input
 * file is never opened for writing. See docs/INPUT.md.
 *
 * Bad input (missing, a directory, unreadable, empty, bad magic or version,
 * a header that lies, fortran_order True, big-endian, unsupported dtype,
 * overflowing shape, truncated data, raw size not a multiple of the item
 * size, offset past the end) makes every rank return GR_ERR_IO, after one
 * line from rank 0 that names the file and the problem.
 * ------------------------------------------------------------------------- */

typedef enum gr_file_format {
    GR_FILE_AUTO = 0, /**< .npy when the name ends in ".npy" or the data starts with the NumPy magic, else raw */
    GR_FILE_NPY = 1,
    GR_FILE_RAW = 2
} gr_file_format_t;

/** Default and largest read chunk per rank, in bytes. */
#define GR_FILE_CHUNK_DEFAULT ((uint64_t)64 << 20)
#define GR_FILE_CHUNK_MAX ((uint64_t)1 << 30)

/**
 * Compatibility alias from before f16 and bf16 were dtypes (0.3): asking for
 * GR_STORE_F16 / GR_STORE_BF16 is the same as have_dtype = 1 with GR_F16 /
 * GR_BF16 (a raw file's element type; for .npy it must match the header, and
 * GR_STORE_BF16 reads descr '<V2' as bfloat16). Files of those types now open
 * as dtype GR_F16 / GR_BF16 and are reduced natively; gr_file_info_t.storage
 * is always GR_STORE_NATIVE.
 */
typedef enum gr_storage {
    GR_STORE_NATIVE = 0, /**< elements are of the file's dtype */
    GR_STORE_F16 = 1,    /**< alias of dtype GR_F16 (IEEE binary16, '<f2') */
    GR_STORE_BF16 = 2    /**< alias of dtype GR_BF16 (descr 'bfloat16', or '<V2' when asked for) */
} gr_storage_t;

typedef struct gr_file_config {
    gr_file_format_t format; /**< default GR_FILE_AUTO */
    gr_storage_t storage;    /**< compatibility alias, see gr_storage_t; GR_STORE_NATIVE (default) = unused */
    int have_dtype;          /**< dtype is set: required for raw; for .npy it must match the header
                                  (GR_BF16 also reads descr '<V2' as bfloat16) */
    gr_dtype_t dtype;
    uint64_t offset;         /**< raw only: bytes before the first element (default 0) */
    uint64_t chunk_bytes;    /**< bytes per read per rank, 1..GR_FILE_CHUNK_MAX; 0 = default */
} gr_file_config_t;

/** Fill *c with the defaults above. */
void gr_file_config_init(gr_file_config_t *c);

/** "native", "f16", "bf16". */
const char *gr_storage_name(gr_storage_t s);

/** An open input file. */
typedef struct gr_file *gr_file_t;

/** What the file holds (valid while it is open). */
typedef struct gr_file_info {
    const char *path;
    gr_file_format_t format;  /**< GR_FILE_NPY or GR_FILE_RAW */
    gr_dtype_t dtype;         /**< the element type (GR_F16 for '<f2', GR_BF16 for 'bfloat16') */
    gr_storage_t storage;     /**< always GR_STORE_NATIVE (kept for compatibility) */
    uint64_t count;           /**< elements, all ranks */
    uint64_t data_offset;     /**< bytes before the first element */
    uint64_t file_bytes;
    uint64_t item_bytes;      /**< bytes per stored element */
    uint64_t chunk_bytes;     /**< bytes per read per rank (a multiple of item_bytes) */
    int npy_version;          /**< 1, 2 or 3 for .npy; 0 for raw */
    char descr[32];           /**< .npy descr as written ("<f4"), "" for raw */
    char shape[160];          /**< .npy shape as text ("(2, 3)"), "(N,)" for raw */
} gr_file_info_t;

/** Open path and check it (see the list above). Collective. */
gr_result_t gr_file_open(gr_ctx_t ctx, const char *path, const gr_file_config_t *cfg, gr_file_t *file);

/** Close a file; NULL is accepted. Collective. */
gr_result_t gr_file_close(gr_file_t file);

/** What the file holds. */
void gr_file_get_info(gr_file_t file, gr_file_info_t *info);

/** Per-call timings of a file reduction on this rank, in seconds. */
typedef struct gr_io_timing {
    double read;     /**< in MPI-IO reads (collective, so it includes waiting for peers) */
    double reduce;   /**< the backend busy reducing chunks (cuda: the kernels alone, by events; see h2d) */
    double stall;    /**< waiting for a chunk's reduction before its buffer could be refilled */
    double local;    /**< open buffers, read and reduce the whole shard */
    double combine;  /**< MPI combine */
    double total;    /**< both */
    uint64_t bytes;  /**< bytes this rank read */
    uint64_t chunks; /**< collective reads issued (the same on every rank) */
    double h2d;      /**< cuda: the chunks' host-to-GPU copies, by events (copy engine busy); 0 otherwise */
} gr_io_timing_t;

/**
 * Reduce the file's values, all ranks' shards, into out (see gr_value_t).
 * d->dtype must be the file's dtype. In exact mode the result does not depend
 * on np or on the chunk size. timing may be NULL. Collective.
 */
gr_result_t gr_reduce_file(gr_ctx_t ctx, gr_file_t file, const gr_desc_t *d, gr_value_t *out,
                           gr_io_timing_t *timing);

/**
 * The ceiling of gr_io_timing_t.h2d: GB/s of a pinned host-to-GPU copy of
 * bytes (use the file's chunk_bytes, or the shard when smaller) on the
 * context's GPU, on a stream of its own, the median of 7 timed copies after
 * an untimed one. GR_ERR_UNSUPPORTED where the backend's file input copies
 * nothing (the cpu backend). Not collective; ranks sharing a GPU should take
 * turns.
 */
gr_result_t gr_file_h2d_reference(gr_ctx_t ctx, size_t bytes, double *gbps);

/**
 * dot of two files of one dtype and count (d->op is ignored). The vector ops
 * (dot, nrm2, argmin/argmax, exact f64 sumsq; the last three through
 * gr_reduce_file) read each rank's whole shard into host memory first, in
 * collective reads of chunk_bytes. Collective.
 */
gr_result_t gr_dot_file(gr_ctx_t ctx, gr_file_t x, gr_file_t y, const gr_desc_t *d, gr_value_t *out,
                        gr_io_timing_t *timing);

/**
 * Write the synthetic dataset of gr_buffer_create_synthetic (same generator,
 * seed and values) as a 1-D C-order .npy: rank 0 writes the header, every
 * rank its shard with collective writes in chunks of chunk_bytes (0 =
 * default). An existing path is refused unless overwrite is non-zero; a
 * failed write removes the partial file. Collective.
 */
gr_result_t gr_file_write_synthetic(gr_ctx_t ctx, const char *path, gr_dtype_t dtype, gr_gen_t gen, uint64_t seed,
                                    uint64_t global_n, int overwrite, uint64_t chunk_bytes);

/* ---------------------------------------------------------------------------
 * Statistics in one pass (--op stats): host memory and input files on the
 * host, device memory and synthetic buffers on the GPU (cuda backend).
 * ------------------------------------------------------------------------- */

/**
 * One-pass statistics of the values, all ranks. NaN and Inf follow numpy:
 * min, max, mean and the variances are NaN when any value is NaN; nanmin and
 * nanmax ignore NaN. The variances are those of Chan, Golub and LeVeque's
 * pairwise update of (count, mean, M2), applied over fixed blocks of 2^16
 * elements, over chunks and then over ranks in rank order, so they are
 * repeatable for a fixed np (and --chunk); sum is the exact sum, correctly
 * rounded to f64 (and exact in isum for integers), so it and mean = sum/count
 * have the same bits for any np.
 */
typedef struct gr_stats {
    int valid;            /**< non-zero on ranks that hold the result */
    int is_integer;       /**< integer input: isum, imin, imax are exact */
    uint64_t count;       /**< elements */
    uint64_t nan_count, pinf_count, ninf_count;
    double sum;           /**< NaN if any NaN, +-Inf (or NaN for both) if any Inf, else the exact sum rounded to f64 */
    double mean;          /**< sum / count; NaN for count 0 */
    double var;           /**< population variance (ddof 0); NaN with NaN or Inf input or count 0 */
    double var_sample;    /**< sample variance (ddof 1); NaN also for count < 2 */
    double min, max;      /**< NaN when any value is NaN or count is 0 */
    double nanmin, nanmax;/**< ignoring NaN; NaN when no value is a number */
    int64_t isum;         /**< integers: the exact sum when !overflow */
    int overflow;         /**< integers: the exact sum does not fit int64 (sum holds it rounded) */
    int64_t imin, imax;   /**< integers: exact min and max */
} gr_stats_t;

/**
 * Statistics of count elements of d->dtype at host memory (any backend; the
 * work runs on the host). d->root / d->all_ranks say where the result goes;
 * d->op and d->mode are not used. Collective.
 */
gr_result_t gr_stats_host(gr_ctx_t ctx, const void *host_ptr, uint64_t count, const gr_desc_t *d, gr_stats_t *out,
                          gr_timing_t *timing);

/** Statistics of a file's values, read once through the input pipeline. Collective. */
gr_result_t gr_stats_file(gr_ctx_t ctx, gr_file_t file, const gr_desc_t *d, gr_stats_t *out, gr_io_timing_t *timing);

/**
 * Statistics of count elements of d->dtype (f32, f64, i32, i64) at device
 * memory of this rank's GPU (cuda backend), in one kernel pass: the sum is the
 * exact sum (same bits as gr_stats_host, for any np), counts and min/max are
 * exact, and (count, mean, M2) come from per-thread shifted sums merged by
 * Chan et al. in a fixed order (same bits for a fixed np, GPU, grid and
 * block). Collective.
 */
gr_result_t gr_stats_device(gr_ctx_t ctx, const void *dev_ptr, uint64_t count, const gr_desc_t *d, gr_stats_t *out,
                            gr_timing_t *timing);

/** Statistics of a buffer (gr_buffer_create_synthetic), any backend: the GPU
 *  kernel for cuda, the host pass for cpu. d->dtype must match. Collective. */
gr_result_t gr_stats_buffer(gr_ctx_t ctx, gr_buffer_t buf, const gr_desc_t *d, gr_stats_t *out, gr_timing_t *timing);

/* ---------------------------------------------------------------------------
 * Presenting results and settings as the gpureduce command does.
 * ------------------------------------------------------------------------- */

/**
 * The f16 or bf16 bits of v's value when v's dtype is GR_F16 or GR_BF16 and
 * its value is one of that type (exact mode, min, max): returns 1 and sets
 * *bits; else 0 (a NaN, a value between two halves, any other dtype).
 */
int gr_value_half_bits(const gr_value_t *v, uint16_t *bits);

/** One environment variable gpureduce reads (docs/ENVIRONMENT.md). */
typedef struct gr_env_info {
    const char *name;
    const char *def;     /**< what applies when it is unset */
    const char *meaning;
    int ours;            /**< 1: a gpureduce variable; 0: set by the launcher, CUDA or NCCL */
} gr_env_info_t;

/** Number of variables in the registry. */
int gr_env_count(void);
/** Entry i of the registry (0 <= i < gr_env_count()), else NULL. */
const gr_env_info_t *gr_env_info(int i);
/** The value of the registered variable name, or NULL when it is unset, empty or not registered. */
const char *gr_env_value(const char *name);

#ifdef __cplusplus
}
#endif

#endif /* GPUREDUCE_H */
