/*
 * io_file.c - input files (.npy and raw) opened read-only with MPI-IO, and
 * the parallel .npy writer of `gpureduce gen`.
 *
 * Opening is checked on rank 0 and the verdict broadcast, so bad input gives
 * one line (from rank 0, naming the file) and the same GR_ERR_IO on every
 * rank, and no rank is left waiting in a collective. The input is opened
 * with MPI_MODE_RDONLY (and probed with O_RDONLY); nothing here opens it for
 * writing.
 */
#define _POSIX_C_SOURCE 200809L
#include "gr_half.h"
#include "gr_io.h"
#include "gr_internal.h"
#include "gr_npy.h"
#include "gr_stats.h"
#include "gr_stream.h"

#include <errno.h>
#include <math.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct gr_file {
    gr_ctx_t ctx;
    MPI_File fh;
    int fd; /* the same file for pread (gr_io.h says why): opened on every rank before any rank reads */
    char *path;
    gr_file_info_t info;
    size_t esz; /* bytes per stored element */
};

static gr_result_t vec_file(gr_ctx_t ctx, gr_file_t fx, gr_file_t fy, const gr_desc_t *d, gr_value_t *out,
                            gr_io_timing_t *timing);

/* What rank 0 found out, broadcast as bytes. */
typedef struct probe {
    int32_t code; /* gr_result_t */
    int32_t format;
    int32_t dtype;
    int32_t npy_version;
    int32_t storage; /* gr_storage_t */
    int32_t item_bytes;
    uint64_t file_bytes, data_offset, count;
    char descr[32];
    char shape[160];
    char msg[768];
} probe_t;

static void probe_fail(probe_t *p, gr_result_t code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

static void probe_fail(probe_t *p, gr_result_t code, const char *fmt, ...)
{
    if (p->code != GR_SUCCESS)
        return; /* keep the first problem */
    p->code = code;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(p->msg, sizeof(p->msg), fmt, ap);
    va_end(ap);
}

void gr_file_config_init(gr_file_config_t *c)
{
    memset(c, 0, sizeof(*c));
    c->format = GR_FILE_AUTO;
    c->storage = GR_STORE_NATIVE;
    c->dtype = GR_F32;
}

const char *gr_storage_name(gr_storage_t s)
{
    switch (s) {
    case GR_STORE_NATIVE:
        return "native";
    case GR_STORE_F16:
        return "f16";
    case GR_STORE_BF16:
        return "bf16";
    }
    return "?";
}

static int ends_with_npy(const char *path)
{
    size_t n = strlen(path);
    if (n < 4)
        return 0;
    const char *e = path + n - 4;
    return e[0] == '.' && (e[1] == 'n' || e[1] == 'N') && (e[2] == 'p' || e[2] == 'P') &&
           (e[3] == 'y' || e[3] == 'Y');
}

static void shape_text(const uint64_t *shape, int ndim, char *out, size_t cap)
{
    size_t o = (size_t)snprintf(out, cap, "(");
    for (int k = 0; k < ndim && o < cap; ++k)
        o += (size_t)snprintf(out + o, cap - o, k + 1 < ndim ? "%llu, " : ndim == 1 ? "%llu," : "%llu",
                              (unsigned long long)shape[k]);
    if (o < cap)
        snprintf(out + o, cap - o, ")");
    if (o >= cap && cap > 4)
        memcpy(out + cap - 4, "...", 4);
}

/* Rank 0, before any MPI-IO: is path a regular file this process can read? */
static void probe_path(const char *path, probe_t *p)
{
    struct stat sb;
    if (stat(path, &sb) != 0) {
        int e = errno;
        if (e == ENOENT)
            probe_fail(p, GR_ERR_IO, "no such file; check the path");
        else if (e == EACCES)
            probe_fail(p, GR_ERR_IO, "permission denied on a directory of the path; check its permissions");
        else
            probe_fail(p, GR_ERR_IO, "cannot stat it: %s", strerror(e));
        return;
    }
    if (S_ISDIR(sb.st_mode)) {
        probe_fail(p, GR_ERR_IO, "is a directory, not a file; give the path of a .npy or raw file");
        return;
    }
    if (!S_ISREG(sb.st_mode)) {
        probe_fail(p, GR_ERR_IO, "is not a regular file (a FIFO, socket or device); give a .npy or raw file");
        return;
    }
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        int e = errno;
        if (e == EACCES || e == EPERM)
            probe_fail(p, GR_ERR_IO, "permission denied: this process may not read it; check its mode and owner");
        else
            probe_fail(p, GR_ERR_IO, "cannot open it for reading: %s", strerror(e));
        return;
    }
    close(fd);
    if (sb.st_size == 0)
        probe_fail(p, GR_ERR_IO, "the file is empty (0 bytes)");
    p->file_bytes = (uint64_t)sb.st_size;
}

/* Independent read of exactly n bytes at off on rank 0. */
static int read_exact(MPI_File fh, uint64_t off, void *buf, size_t n)
{
    MPI_Status st;
    if (MPI_File_read_at(fh, (MPI_Offset)off, buf, (int)n, MPI_BYTE, &st) != MPI_SUCCESS)
        return -1;
    int got = 0;
    MPI_Get_count(&st, MPI_BYTE, &got);
    return got == (int)n ? 0 : -1;
}

static const char *dtype_names_hint = "f32, f64, i32, i64, f16 or bf16";

/* The dtype a (compatibility) storage value names: GR_STORE_F16 is --dtype f16, GR_STORE_BF16 --dtype bf16. */
static gr_dtype_t storage_dtype(gr_storage_t s) { return s == GR_STORE_BF16 ? GR_BF16 : GR_F16; }

/* Rank 0, file open: read and check the header (or the raw layout). */
static void probe_layout(MPI_File fh, const gr_file_config_t *cfg, const char *path, probe_t *p)
{
    MPI_Offset size = 0;
    if (MPI_File_get_size(fh, &size) != MPI_SUCCESS) {
        probe_fail(p, GR_ERR_IO, "MPI_File_get_size failed");
        return;
    }
    p->file_bytes = (uint64_t)size;
    if (p->file_bytes == 0) {
        probe_fail(p, GR_ERR_IO, "the file is empty (0 bytes)");
        return;
    }
    unsigned char pre[GR_NPY_PREAMBLE_MAX];
    size_t npre = p->file_bytes < sizeof(pre) ? (size_t)p->file_bytes : sizeof(pre);
    if (read_exact(fh, 0, pre, npre) != 0) {
        probe_fail(p, GR_ERR_IO, "cannot read its first %zu bytes", npre);
        return;
    }
    gr_file_format_t fmt = cfg->format;
    if (fmt == GR_FILE_AUTO) {
        int magic = npre >= 6 && !memcmp(pre, "\x93NUMPY", 6);
        fmt = (magic || ends_with_npy(path)) ? GR_FILE_NPY : GR_FILE_RAW;
    }
    p->format = (int32_t)fmt;
    char err[512];

    if (fmt == GR_FILE_RAW) {
        if (!cfg->have_dtype && cfg->storage == GR_STORE_NATIVE) {
            probe_fail(p, GR_ERR_IO, "not a .npy file (it does not start with \\x93NUMPY): give --dtype %s to "
                                     "read it as raw binary", dtype_names_hint);
            return;
        }
        gr_dtype_t dt = cfg->storage == GR_STORE_NATIVE ? cfg->dtype : storage_dtype(cfg->storage);
        if (cfg->storage != GR_STORE_NATIVE && cfg->have_dtype && cfg->dtype != dt) {
            probe_fail(p, GR_ERR_IO, "%s storage was asked for with --dtype %s; give one of them (storage f16/bf16 "
                                     "is the old spelling of --dtype f16/bf16)",
                       gr_storage_name(cfg->storage), gr_dtype_name(cfg->dtype));
            return;
        }
        size_t esz = gr_dtype_size(dt);
        const char *tname = gr_dtype_name(dt);
        if (cfg->offset > p->file_bytes) {
            probe_fail(p, GR_ERR_IO, "--offset %llu is past the end of the file (%llu bytes)",
                       (unsigned long long)cfg->offset, (unsigned long long)p->file_bytes);
            return;
        }
        uint64_t data = p->file_bytes - cfg->offset;
        if (data % esz != 0) {
            probe_fail(p, GR_ERR_IO, "raw data of %llu bytes (file size %llu minus offset %llu) is not a multiple of "
                                     "the %s item size (%zu bytes); check --dtype and --offset",
                       (unsigned long long)data, (unsigned long long)p->file_bytes, (unsigned long long)cfg->offset,
                       tname, esz);
            return;
        }
        p->dtype = (int32_t)dt;
        p->storage = (int32_t)GR_STORE_NATIVE;
        p->item_bytes = (int32_t)esz;
        p->data_offset = cfg->offset;
        p->count = data / esz;
        snprintf(p->shape, sizeof(p->shape), "(%llu,)", (unsigned long long)p->count);
        return;
    }

    if (cfg->offset != 0) {
        probe_fail(p, GR_ERR_IO, "--offset applies to raw files only; a .npy header says where its data starts");
        return;
    }
    uint64_t total = 0;
    if (gr_npy_header_size(pre, npre, &total, err, sizeof(err)) != GR_SUCCESS) {
        probe_fail(p, GR_ERR_IO, "%s", err);
        return;
    }
    size_t have = (size_t)(total < p->file_bytes ? total : p->file_bytes);
    unsigned char *hdr = (unsigned char *)malloc(have);
    if (!hdr) {
        probe_fail(p, GR_ERR_NOMEM, "cannot allocate %zu bytes for the header", have);
        return;
    }
    gr_npy_header_t h;
    if (read_exact(fh, 0, hdr, have) != 0)
        probe_fail(p, GR_ERR_IO, "cannot read its %zu-byte header", have);
    else if (gr_npy_parse(hdr, have, &h, err, sizeof(err)) != GR_SUCCESS)
        probe_fail(p, GR_ERR_IO, "%s", err);
    free(hdr);
    if (p->code != GR_SUCCESS)
        return;
    p->npy_version = h.major;
    snprintf(p->descr, sizeof(p->descr), "%s", h.descr);
    shape_text(h.shape, h.ndim, p->shape, sizeof(p->shape));
    int dt = gr_npy_type_to_dtype(h.type);
    /* '<V2' is bfloat16 when the caller says so: --dtype bf16 (or the old storage = GR_STORE_BF16) */
    int want_bf16 = cfg->storage == GR_STORE_BF16 || (cfg->have_dtype && cfg->dtype == GR_BF16);
    if (h.type == GR_NPY_V2 && want_bf16)
        dt = GR_BF16;
    if (h.type == GR_NPY_V2 && dt < 0) {
        probe_fail(p, GR_ERR_UNSUPPORTED, "descr '%s' is 2 opaque bytes per item (np.save writes ml_dtypes bfloat16 "
                                          "this way, losing the type); save it with descr 'bfloat16', or read it as "
                                          "bfloat16 with --dtype bf16",
                   h.descr);
        return;
    }
    if (cfg->storage != GR_STORE_NATIVE && dt != (int)storage_dtype(cfg->storage)) {
        probe_fail(p, GR_ERR_IO, "%s storage was asked for, but the file's descr is '%s'",
                   gr_storage_name(cfg->storage), h.descr);
        return;
    }
    if (dt < 0) {
        probe_fail(p, GR_ERR_UNSUPPORTED, "%s data (descr '%s') is not supported", gr_npy_type_name(h.type), h.descr);
        return;
    }
    if (cfg->have_dtype && (int)cfg->dtype != dt) {
        probe_fail(p, GR_ERR_IO, "--dtype %s does not match the file's descr '%s' (%s); leave --dtype out for "
                                 ".npy files", gr_dtype_name(cfg->dtype), h.descr, gr_dtype_name((gr_dtype_t)dt));
        return;
    }
    uint64_t avail = p->file_bytes - h.data_offset;
    if (avail < h.data_bytes) {
        probe_fail(p, GR_ERR_IO, "truncated: the header promises %llu bytes of data (shape %s of '%s') but only %llu "
                                 "follow the header",
                   (unsigned long long)h.data_bytes, p->shape, h.descr, (unsigned long long)avail);
        return;
    }
    if (avail > h.data_bytes)
        GR_WARN(GR_SUB_IO, "'%s': %llu bytes after the array data are ignored", path,
                (unsigned long long)(avail - h.data_bytes));
    p->dtype = (int32_t)dt;
    p->storage = (int32_t)GR_STORE_NATIVE; /* f16/bf16 are dtypes now: elements are of the file's dtype */
    p->item_bytes = (int32_t)h.itemsize;
    p->data_offset = h.data_offset;
    p->count = h.count;
}

/* Log the problem once, on rank 0, and hand every rank the same code. */
#define IO_FAIL_ROOT(ctx, code, ...)                                            \
    do {                                                                        \
        if ((ctx)->rank == 0)                                                   \
            GR_ERROR(GR_SUB_IO, __VA_ARGS__);   \
        return (code);                                                          \
    } while (0)

/* Every rank sees the file rank 0 probed, before the collective
 * MPI_File_open: a path that exists on one node only (node-local disk where a
 * shared file system was meant) must fail here, on every rank alike. Open
 * MPI's collective open does not return on the ranks whose open worked when
 * another rank's failed: across two hosts that was a hang (tests/multinode).
 * BYTES, when not 0, is the size rank 0 saw: a different size on another
 * node is a different file (a stale copy), though MPI-IO may read rank 0's. */
static gr_result_t check_same_file(gr_ctx_t ctx, const char *path, const char *what, int amode, uint64_t bytes)
{
    gr_result_t r = GR_SUCCESS;
    struct stat sb;
    if (ctx->rank != 0) {
        if (stat(path, &sb) != 0 || access(path, amode) != 0) {
            GR_ERROR(GR_SUB_IO,
                     "%s '%s' cannot be %s on this host (%s), though rank 0 can; every node must see the same "
                     "file: put it on a file system all nodes share",
                     what, path, amode == W_OK ? "written" : "read", strerror(errno));
            r = GR_ERR_IO;
        } else if (bytes && (uint64_t)sb.st_size != bytes) {
            GR_ERROR(GR_SUB_IO,
                     "%s '%s' has %llu bytes on this host but %llu where rank 0 runs: the nodes see different "
                     "files; put it on a file system all nodes share",
                     what, path, (unsigned long long)sb.st_size, (unsigned long long)bytes);
            r = GR_ERR_IO;
        }
    }
    return gr_agree(ctx->comm, r);
}

gr_result_t gr_file_open(gr_ctx_t ctx, const char *path, const gr_file_config_t *cfg_in, gr_file_t *out)
{
    if (!ctx || !path || !out)
        GR_FAIL(GR_ERR_INVALID_ARG, "gr_file_open: ctx, path and file must not be NULL");
    *out = NULL;
    gr_file_config_t cfg;
    if (cfg_in)
        cfg = *cfg_in;
    else
        gr_file_config_init(&cfg);
    if (!*path)
        IO_FAIL_ROOT(ctx, GR_ERR_INVALID_ARG, "the input path is empty");
    if ((unsigned)cfg.format > GR_FILE_RAW || (cfg.have_dtype && (unsigned)cfg.dtype >= GR_DTYPE_COUNT) ||
        (unsigned)cfg.storage > GR_STORE_BF16)
        IO_FAIL_ROOT(ctx, GR_ERR_INVALID_ARG, "'%s': unknown format %d, dtype %d or storage %d", path, (int)cfg.format,
                     (int)cfg.dtype, (int)cfg.storage);
    if (cfg.chunk_bytes > GR_FILE_CHUNK_MAX)
        IO_FAIL_ROOT(ctx, GR_ERR_INVALID_ARG, "chunk of %llu bytes is larger than the most one read may take (%llu)",
                     (unsigned long long)cfg.chunk_bytes, (unsigned long long)GR_FILE_CHUNK_MAX);
    if (cfg.format == GR_FILE_RAW && !cfg.have_dtype && cfg.storage == GR_STORE_NATIVE)
        IO_FAIL_ROOT(ctx, GR_ERR_INVALID_ARG, "'%s': a raw file needs its dtype (--dtype %s)", path, dtype_names_hint);

    probe_t p;
    memset(&p, 0, sizeof(p));
    if (ctx->rank == 0)
        probe_path(path, &p);
    GR_MPI_CHECK(MPI_Bcast(&p, (int)sizeof(p), MPI_BYTE, 0, ctx->comm));
    if (p.code != GR_SUCCESS)
        IO_FAIL_ROOT(ctx, (gr_result_t)p.code, "input '%s': %s", path, p.msg);
    gr_result_t r = check_same_file(ctx, path, "input", R_OK, p.file_bytes);
    if (r != GR_SUCCESS)
        return r;

    /* The pread descriptor first: the agreement below orders every rank's open
     * before any rank's first read, so a file replaced while it is read (a
     * rename over the path) is read whole from the file that was opened. */
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        gr_io_fault_t fault;
        memset(&fault, 0, sizeof(fault));
        gr_io_fault_set(&fault, "open (for pread)", errno, 0, 0, 0);
        char line[768];
        gr_io_fault_text(&fault, line, sizeof(line));
        GR_ERROR(GR_SUB_IO, "input '%s': %s", path, line);
        r = GR_ERR_IO;
    }
    MPI_File fh = MPI_FILE_NULL;
    int rc = MPI_File_open(ctx->comm, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh);
    if (rc != MPI_SUCCESS) {
        char msg[MPI_MAX_ERROR_STRING];
        int mlen = 0;
        MPI_Error_string(rc, msg, &mlen);
        GR_ERROR(GR_SUB_IO, "input '%s': MPI_File_open (read-only) failed: %s", path,
               msg);
        r = GR_ERR_IO;
    }
    r = gr_agree(ctx->comm, r);
    if (r != GR_SUCCESS) {
        /* A handle some ranks hold is left to MPI_Finalize: closing is
         * collective, and the ranks whose open failed have none. */
        if (fd >= 0)
            close(fd);
        return r;
    }

    memset(&p, 0, sizeof(p));
    if (ctx->rank == 0)
        probe_layout(fh, &cfg, path, &p);
    rc = MPI_Bcast(&p, (int)sizeof(p), MPI_BYTE, 0, ctx->comm);
    if (rc != MPI_SUCCESS || p.code != GR_SUCCESS) {
        MPI_File_close(&fh);
        close(fd);
        if (rc != MPI_SUCCESS)
            GR_FAIL(GR_ERR_MPI, "MPI_Bcast of the input header failed");
        IO_FAIL_ROOT(ctx, (gr_result_t)p.code, "input '%s': %s", path, p.msg);
    }

    gr_file_t f = (gr_file_t)calloc(1, sizeof(*f));
    char *pcopy = f ? strdup(path) : NULL;
    r = (f && pcopy) ? GR_SUCCESS : GR_ERR_NOMEM;
    if (r != GR_SUCCESS)
        GR_ERROR(GR_SUB_IO, "cannot allocate the file object");
    r = gr_agree(ctx->comm, r);
    if (r != GR_SUCCESS) {
        free(pcopy);
        free(f);
        MPI_File_close(&fh);
        close(fd);
        return r;
    }
    f->ctx = ctx;
    f->fh = fh;
    f->fd = fd;
    f->path = pcopy;
    f->esz = (size_t)p.item_bytes;
    gr_file_info_t *in = &f->info;
    in->path = f->path;
    in->format = (gr_file_format_t)p.format;
    in->dtype = (gr_dtype_t)p.dtype;
    in->storage = (gr_storage_t)p.storage;
    in->item_bytes = (uint64_t)p.item_bytes;
    in->count = p.count;
    in->data_offset = p.data_offset;
    in->file_bytes = p.file_bytes;
    in->npy_version = p.npy_version;
    snprintf(in->descr, sizeof(in->descr), "%s", p.descr);
    snprintf(in->shape, sizeof(in->shape), "%s", p.shape);
    uint64_t chunk = cfg.chunk_bytes ? cfg.chunk_bytes : GR_FILE_CHUNK_DEFAULT;
    uint64_t elems = chunk / f->esz;
    in->chunk_bytes = (elems ? elems : 1) * f->esz;
    GR_INFO(GR_SUB_IO, "input '%s': %s, %s (stored %s) %s, %llu elements at byte %llu, chunk %llu bytes", path,
            in->format == GR_FILE_NPY ? "npy" : "raw", gr_dtype_name(in->dtype), gr_storage_name(in->storage), in->shape,
            (unsigned long long)in->count, (unsigned long long)in->data_offset, (unsigned long long)in->chunk_bytes);
    *out = f;
    return GR_SUCCESS;
}

gr_result_t gr_file_close(gr_file_t f)
{
    if (!f)
        return GR_SUCCESS;
    int rc = MPI_File_close(&f->fh);
    close(f->fd);
    free(f->path);
    free(f);
    if (rc != MPI_SUCCESS)
        GR_FAIL(GR_ERR_MPI, "MPI_File_close of an input file failed");
    return GR_SUCCESS;
}

void gr_file_get_info(gr_file_t f, gr_file_info_t *info) { *info = f->info; }

gr_result_t gr_reduce_file(gr_ctx_t ctx, gr_file_t f, const gr_desc_t *d, gr_value_t *out, gr_io_timing_t *timing)
{
    if (!ctx || !f || !d || !out)
        GR_FAIL(GR_ERR_INVALID_ARG, "gr_reduce_file: ctx, file, desc and out must not be NULL");
    GR_CHECK(gr_desc_validate(d));
    if (d->op.kind == GR_OP_DOT)
        GR_FAIL(GR_ERR_INVALID_ARG, "dot needs two files: use gr_dot_file");
    if (d->dtype != f->info.dtype)
        GR_FAIL(GR_ERR_INVALID_ARG, "descriptor dtype %s differs from the file's %s", gr_dtype_name(d->dtype),
                gr_dtype_name(f->info.dtype));
    if (d->root < 0 || d->root >= ctx->size)
        GR_FAIL(GR_ERR_INVALID_ARG, "root %d is not a rank of the communicator (size %d)", d->root, ctx->size);
    if (gr_desc_is_vec(d))
        return vec_file(ctx, f, NULL, d, out, timing);
    gr_io_timing_t t;
    memset(&t, 0, sizeof(t));
    uint64_t n = f->info.count, b, e;
    gr_shard_range(n, ctx->size, ctx->rank, &b, &e);
    /* shards differ by at most one element: every rank can count the reads */
    uint64_t max_shard = n / (uint64_t)ctx->size + (n % (uint64_t)ctx->size ? 1 : 0);
    uint64_t chunk_elems = f->info.chunk_bytes / f->esz;
    uint64_t nchunks = (max_shard + chunk_elems - 1) / chunk_elems;

    gr_partial_t part;
    double t0 = gr_now();
    gr_result_t r = gr_pipeline_reduce_file(ctx, f->fh, f->fd, f->path, f->info.data_offset + b * f->esz, e - b, f->esz, chunk_elems,
                                            nchunks, f->info.storage, d, &part, &t);
    if (r != GR_SUCCESS) {
        gr_partial_init(&part);
        part.failed = 1;
        part.failed_rank = ctx->rank;
        part.failed_code = r;
    }
    double t1 = gr_now();
    gr_result_t rc = gr_combine(ctx, d, &part, out); /* exact f16/bf16: rounded once to the half type */
    double t2 = gr_now();
    t.local = t1 - t0;
    t.combine = t2 - t1;
    t.total = t2 - t0;
    if (timing)
        *timing = t;
    /* only the root learns of a peer's failure in the combine: tell everyone */
    return gr_agree(ctx->comm, r != GR_SUCCESS ? r : rc);
}

gr_result_t gr_stats_file(gr_ctx_t ctx, gr_file_t f, const gr_desc_t *d_in, gr_stats_t *out, gr_io_timing_t *timing)
{
    if (!ctx || !f || !d_in || !out)
        GR_FAIL(GR_ERR_INVALID_ARG, "gr_stats_file: ctx, file, desc and out must not be NULL");
    if (d_in->root < 0 || d_in->root >= ctx->size)
        GR_FAIL(GR_ERR_INVALID_ARG, "root %d is not a rank of the communicator (size %d)", d_in->root, ctx->size);
    gr_desc_t d = *d_in;
    d.dtype = f->info.dtype; /* the values are what the file holds */
    /* the host statistics take f32, f64, i32, i64: f16/bf16 chunks are widened exactly to f32 on the way */
    gr_storage_t widen = GR_STORE_NATIVE;
    if (d.dtype == GR_F16 || d.dtype == GR_BF16) {
        widen = d.dtype == GR_F16 ? GR_STORE_F16 : GR_STORE_BF16;
        d.dtype = GR_F32;
    }
    gr_io_timing_t t;
    memset(&t, 0, sizeof(t));
    uint64_t n = f->info.count, b, e;
    gr_shard_range(n, ctx->size, ctx->rank, &b, &e);
    uint64_t max_shard = n / (uint64_t)ctx->size + (n % (uint64_t)ctx->size ? 1 : 0);
    uint64_t chunk_elems = f->info.chunk_bytes / f->esz;
    uint64_t nchunks = (max_shard + chunk_elems - 1) / chunk_elems;
    gr_stats_part_t part;
    double t0 = gr_now();
    gr_result_t r = gr_pipeline_stats_file(ctx, f->fh, f->fd, f->path, f->info.data_offset + b * f->esz, e - b, f->esz, chunk_elems,
                                           nchunks, widen, &d, &part, &t);
    if (r != GR_SUCCESS) {
        gr_stats_part_init(&part);
        part.failed_code = r;
    }
    double t1 = gr_now();
    gr_result_t rc = gr_stats_combine(ctx, &d, &part, out);
    double t2 = gr_now();
    t.local = t1 - t0;
    t.combine = t2 - t1;
    t.total = t2 - t0;
    if (timing)
        *timing = t;
    return gr_agree(ctx->comm, r != GR_SUCCESS ? r : rc);
}

/* ---- gen: the synthetic dataset as a .npy ----------------------------- */

/* Rank 0: may we write path? Creates it when it does not exist. */
static void probe_output(const char *path, int overwrite, probe_t *p, int *created)
{
    struct stat sb;
    *created = 0;
    if (stat(path, &sb) == 0) {
        if (S_ISDIR(sb.st_mode)) {
            probe_fail(p, GR_ERR_IO, "is a directory; give a file name such as data.npy");
            return;
        }
        if (!overwrite) {
            probe_fail(p, GR_ERR_IO, "exists; pass --force to overwrite it");
            return;
        }
        if (!S_ISREG(sb.st_mode)) {
            probe_fail(p, GR_ERR_IO, "is not a regular file; refusing to write to it");
            return;
        }
        int fd = open(path, O_WRONLY | O_CLOEXEC);
        if (fd < 0) {
            probe_fail(p, GR_ERR_IO, "cannot open it for writing: %s", strerror(errno));
            return;
        }
        close(fd);
        return;
    }
    if (errno != ENOENT) {
        probe_fail(p, GR_ERR_IO, "cannot stat it: %s", strerror(errno));
        return;
    }
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0) {
        int e = errno;
        if (e == ENOENT)
            probe_fail(p, GR_ERR_IO, "cannot create it: its directory does not exist");
        else
            probe_fail(p, GR_ERR_IO, "cannot create it: %s", strerror(e));
        return;
    }
    close(fd);
    *created = 1;
}

/* A failed write: rank 0 names the file, the rank, offset and cause, and
 * removes the partial file (created says whether this call made it; an
 * existing file given with --force was already overwritten in part, so it is
 * removed as well once writing has begun). Every rank returns GR_ERR_IO. */
static gr_result_t write_failed(gr_ctx_t ctx, const char *path, int remove_it, const gr_io_fault_t *f)
{
    if (ctx->rank == 0) {
        char line[768];
        gr_io_fault_text(f, line, sizeof(line));
        int removed = remove_it && unlink(path) == 0;
        GR_ERROR(GR_SUB_IO, "output '%s' not written: %s%s", path, line,
               removed ? "; the partial file was removed" : "");
    }
    return GR_ERR_IO;
}

gr_result_t gr_file_write_synthetic(gr_ctx_t ctx, const char *path, gr_dtype_t dtype, gr_gen_t gen, uint64_t seed,
                                    uint64_t n, int overwrite, uint64_t chunk_bytes)
{
    if (!ctx || !path || !*path)
        GR_FAIL(GR_ERR_INVALID_ARG, "gr_file_write_synthetic: ctx and path must be given");
    if ((unsigned)dtype >= GR_DTYPE_COUNT || (unsigned)gen >= GR_GEN_COUNT)
        IO_FAIL_ROOT(ctx, GR_ERR_INVALID_ARG, "unknown dtype %d or generator %d", (int)dtype, (int)gen);
    if ((dtype == GR_I32 || dtype == GR_I64) && (gen == GR_GEN_UNIFORM || gen == GR_GEN_NORMAL))
        IO_FAIL_ROOT(ctx, GR_ERR_UNSUPPORTED, "generator %s makes real numbers; use it with f32 or f64, or use ones, "
                                              "iota, randint or stress with %s", gr_gen_name(gen), gr_dtype_name(dtype));
    if (chunk_bytes > GR_FILE_CHUNK_MAX)
        IO_FAIL_ROOT(ctx, GR_ERR_INVALID_ARG, "chunk of %llu bytes is larger than the most one write may take (%llu)",
                     (unsigned long long)chunk_bytes, (unsigned long long)GR_FILE_CHUNK_MAX);
    size_t esz = gr_dtype_size(dtype);
    if (n > (UINT64_MAX - 4096) / esz)
        IO_FAIL_ROOT(ctx, GR_ERR_INVALID_ARG, "%llu %s elements overflow a 64-bit file size", (unsigned long long)n,
                     gr_dtype_name(dtype));
    char header[4096];
    size_t hlen = gr_npy_format_header(header, sizeof(header), gr_npy_descr_of(dtype), &n, 1);
    if (hlen == 0)
        GR_FAIL(GR_ERR_INTERNAL, "cannot format a .npy header; report this as a bug");

    probe_t p;
    memset(&p, 0, sizeof(p));
    int created = 0;
    if (ctx->rank == 0)
        probe_output(path, overwrite, &p, &created);
    GR_MPI_CHECK(MPI_Bcast(&p, (int)sizeof(p), MPI_BYTE, 0, ctx->comm));
    if (p.code != GR_SUCCESS)
        IO_FAIL_ROOT(ctx, (gr_result_t)p.code, "output '%s': %s", path, p.msg);

    /* every rank sees the file rank 0 made, before the collective open */
    gr_result_t r = check_same_file(ctx, path, "output", W_OK, 0);
    if (r != GR_SUCCESS) {
        if (ctx->rank == 0 && created)
            unlink(path);
        return r;
    }
    /* From here on every failure is recorded in fault (first one wins on
     * this rank), every rank still takes part in every collective, and the
     * ranks agree at the end: rank 0 reports the lowest failing rank's fault. */
    gr_io_fault_t fault;
    memset(&fault, 0, sizeof(fault));
    MPI_File fh = MPI_FILE_NULL;
    int rc = MPI_File_open(ctx->comm, path, MPI_MODE_WRONLY, MPI_INFO_NULL, &fh);
    if (rc != MPI_SUCCESS) {
        int e = errno;
        int fd = open(path, O_WRONLY | O_CLOEXEC); /* the cause, as POSIX sees it */
        if (fd >= 0)
            close(fd);
        else
            e = errno;
        gr_io_fault_set(&fault, "MPI_File_open (write)", e, 0, 0, 0);
    }
    if (gr_io_fault_agree(ctx->comm, &fault)) {
        /* a handle some ranks hold is left to MPI_Finalize: closing is
         * collective, and the ranks whose open failed have none */
        return write_failed(ctx, path, created, &fault);
    }
    uint64_t total = (uint64_t)hlen + n * esz;
    if (MPI_File_set_size(fh, (MPI_Offset)total) != MPI_SUCCESS)
        gr_io_fault_set(&fault, "MPI_File_set_size", errno, 0, total, 0);
    if (!fault.failed && ctx->rank == 0) {
        MPI_Status st;
        memset(&st, 0, sizeof(st));
        rc = MPI_File_write_at(fh, 0, header, (int)hlen, MPI_BYTE, &st);
        gr_io_check_transfer(path, 1, "writing the .npy header", rc, &st, 0, header, hlen, &fault);
    }

    /* every rank: its shard, generated on the host in chunks */
    uint64_t b, e;
    gr_shard_range(n, ctx->size, ctx->rank, &b, &e);
    uint64_t max_shard = n / (uint64_t)ctx->size + (n % (uint64_t)ctx->size ? 1 : 0);
    uint64_t celems = (chunk_bytes ? chunk_bytes : GR_FILE_CHUNK_DEFAULT) / esz;
    if (celems == 0)
        celems = 1;
    uint64_t nchunks = (max_shard + celems - 1) / celems;
    void *cpu = NULL;
    void *buf = NULL;
    if (!fault.failed && e > b) {
        r = gr_backend_cpu_ops.init(ctx, &cpu);
        if (r == GR_SUCCESS) {
            buf = malloc((size_t)celems * esz);
            if (!buf) {
                GR_ERROR(GR_SUB_IO, "cannot allocate a %llu-byte write buffer; use "
                                                                    "a smaller --chunk", (unsigned long long)(celems * esz));
                r = GR_ERR_NOMEM;
            }
        }
    }
    for (uint64_t k = 0; k < nchunks; ++k) {
        uint64_t first = b + k * celems;
        int ok = r == GR_SUCCESS && !fault.failed;
        uint64_t cnt = (!ok || first >= e) ? 0 : (e - first < celems ? e - first : celems);
        if (cnt)
            r = gr_backend_cpu_ops.generate(ctx, cpu, buf, dtype, gen, seed, first, cnt);
        if (r != GR_SUCCESS)
            cnt = 0;
        MPI_Status st;
        memset(&st, 0, sizeof(st));
        uint64_t off = hlen + first * esz;
        if (!cnt)
            continue;
        /* independent I/O: a rank's shard is contiguous, and Open MPI 4.1's
         * collective write hangs the other ranks when an aggregator's write
         * fails (np 3, a full disk; tests/fault) */
        rc = MPI_File_write_at(fh, (MPI_Offset)off, buf, (int)(cnt * esz), MPI_BYTE, &st);
        gr_io_check_transfer(path, 1, "MPI_File_write_at", rc, &st, off, buf, (size_t)(cnt * esz), &fault);
        if (r == GR_SUCCESS && !fault.failed)
            gr_progress(ctx, GR_PROGRESS_WRITE, (first + cnt - b) * esz, (e - b) * esz);
    }
    free(buf);
    if (cpu)
        gr_backend_cpu_ops.fini(ctx, cpu);
    /* the data must be on the file system before anything says "wrote" */
    rc = MPI_File_sync(fh);
    if (rc != MPI_SUCCESS) {
        int fd = open(path, O_WRONLY | O_CLOEXEC), e2 = errno;
        if (fd >= 0) {
            e2 = fsync(fd) == 0 ? 0 : errno;
            close(fd);
        }
        gr_io_fault_set(&fault, "MPI_File_sync", e2, 0, total, 0);
    }
    if (MPI_File_close(&fh) != MPI_SUCCESS)
        gr_io_fault_set(&fault, "MPI_File_close", errno, 0, total, 0);
    if (ctx->rank == 0 && !fault.failed) {
        struct stat sb;
        if (stat(path, &sb) != 0)
            gr_io_fault_set(&fault, "the final check of the file (stat)", errno, 0, total, 0);
        else if ((uint64_t)sb.st_size != total) {
            char what[96];
            snprintf(what, sizeof(what), "the final size check (%llu bytes on disk, %llu written)",
                     (unsigned long long)sb.st_size, (unsigned long long)total);
            gr_io_fault_set(&fault, what, 0, 0, total, (uint64_t)sb.st_size);
        }
    }
    r = gr_agree(ctx->comm, r);
    if (gr_io_fault_agree(ctx->comm, &fault))
        return write_failed(ctx, path, 1, &fault);
    if (r != GR_SUCCESS && ctx->rank == 0)
        unlink(path); /* no half-written dataset left behind */
    return r;
}

/* ---------------------------------------------------------------------------
 * Vector ops over files (dot, nrm2, argmin/argmax, exact f64 sumsq): each
 * rank reads its whole shard into host memory with collective reads of at
 * most chunk_bytes, then reduces it as a batch of one.
 * ------------------------------------------------------------------------- */

/* Read this rank's shard of f into a new host buffer (*out, count *n). Collective: every rank
 * issues the same number of reads even after a local failure. */
static gr_result_t read_shard(gr_file_t f, void **out, uint64_t *n, gr_io_timing_t *t)
{
    gr_ctx_t ctx = f->ctx;
    uint64_t cnt = f->info.count, b, e;
    gr_shard_range(cnt, ctx->size, ctx->rank, &b, &e);
    uint64_t max_shard = cnt / (uint64_t)ctx->size + (cnt % (uint64_t)ctx->size ? 1 : 0);
    uint64_t chunk_elems = f->info.chunk_bytes / f->esz;
    uint64_t nchunks = (max_shard + chunk_elems - 1) / chunk_elems;
    gr_result_t r = GR_SUCCESS;
    char *buf = NULL;
    static char dummy[64];
    if ((e - b) > (uint64_t)(SIZE_MAX / 2) / f->esz) {
        gr_log(GR_LOG_ERROR, GR_SUB_IO, __FILE__, __LINE__,
               "%s: shard of %llu elements does not fit this process's memory; use more ranks", f->path,
               (unsigned long long)(e - b));
        r = GR_ERR_NOMEM;
    } else {
        buf = (char *)malloc((size_t)((e - b) ? (e - b) : 1) * f->esz);
        if (!buf) {
            gr_log(GR_LOG_ERROR, GR_SUB_IO, __FILE__, __LINE__,
                   "%s: cannot allocate %llu bytes for this rank's shard; use more ranks", f->path,
                   (unsigned long long)((e - b) * f->esz));
            r = GR_ERR_NOMEM;
        }
    }
    for (uint64_t k = 0; k < nchunks; ++k) {
        uint64_t first = k * chunk_elems;
        uint64_t m = r == GR_SUCCESS && first < e - b ? ((e - b) - first < chunk_elems ? (e - b) - first : chunk_elems)
                                                      : 0;
        void *dst = m ? buf + first * f->esz : dummy;
        int want = (int)(m * f->esz);
        MPI_Offset off = (MPI_Offset)(f->info.data_offset + (b + first) * f->esz);
        MPI_Status st;
        memset(&st, 0, sizeof(st));
        double t0 = gr_now();
        int rc = MPI_File_read_at_all(f->fh, off, dst, want, MPI_BYTE, &st);
        t->read += gr_now() - t0;
        t->chunks++;
        if (r != GR_SUCCESS)
            continue;
        int got = 0;
        if (rc == MPI_SUCCESS)
            MPI_Get_count(&st, MPI_BYTE, &got);
        if (rc != MPI_SUCCESS || got != want) {
            gr_log(GR_LOG_ERROR, GR_SUB_IO, __FILE__, __LINE__,
                   "%s: read of %d bytes at offset %lld failed (got %d); check the file system", f->path, want,
                   (long long)off, got);
            r = GR_ERR_IO;
        }
        t->bytes += (uint64_t)got;
    }
    if (r != GR_SUCCESS) {
        free(buf);
        buf = NULL;
    }
    *out = buf;
    *n = e - b;
    return r;
}

/* k = 1 (x) or 2 (x, y for dot) files reduced as one batch item. */
static gr_result_t vec_file(gr_ctx_t ctx, gr_file_t fx, gr_file_t fy, const gr_desc_t *d, gr_value_t *out,
                            gr_io_timing_t *timing)
{
    gr_io_timing_t t;
    memset(&t, 0, sizeof(t));
    double t0 = gr_now();
    void *x = NULL, *y = NULL;
    uint64_t n = 0, ny = 0;
    gr_result_t r = read_shard(fx, &x, &n, &t);
    if (fy) {
        gr_result_t ry = read_shard(fy, &y, &ny, &t);
        if (r == GR_SUCCESS)
            r = ry;
    }
    gr_batch_item_t it;
    gr_batch_item_init(&it);
    it.desc = *d;
    it.x = x;
    it.y = y;
    it.count = r == GR_SUCCESS ? n : 0;
    uint64_t b, e;
    gr_shard_range(fx->info.count, ctx->size, ctx->rank, &b, &e);
    it.index_base = (int64_t)b;
    if (r != GR_SUCCESS) {
        /* the batch still runs its collective, so nobody waits; this rank reports r */
        it.count = 0;
    }
    gr_timing_t bt;
    memset(&bt, 0, sizeof(bt));
    gr_result_t rb = gr_vec_batch_run(ctx, &it, 1, 0, out, &bt);
    free(x);
    free(y);
    double t2 = gr_now();
    t.combine = bt.combine;
    t.local = (t2 - t0) - bt.combine;
    t.reduce = bt.local;
    t.total = t2 - t0;
    if (timing)
        *timing = t;
    return gr_agree(ctx->comm, r != GR_SUCCESS ? r : rb);
}

gr_result_t gr_dot_file(gr_ctx_t ctx, gr_file_t x, gr_file_t y, const gr_desc_t *d_in, gr_value_t *out,
                        gr_io_timing_t *timing)
{
    if (!ctx || !x || !y || !d_in || !out)
        GR_FAIL(GR_ERR_INVALID_ARG, "gr_dot_file: ctx, files, desc and out must not be NULL");
    gr_desc_t d = *d_in;
    d.op.kind = GR_OP_DOT;
    GR_CHECK(gr_desc_validate(&d));
    if (x->info.dtype != y->info.dtype || x->info.count != y->info.count || d.dtype != x->info.dtype)
        GR_FAIL(GR_ERR_INVALID_ARG, "dot of %s (%s, %llu elements) and %s (%s, %llu elements) as %s: both files "
                                    "must hold the descriptor's dtype and the same count",
                x->path, gr_dtype_name(x->info.dtype), (unsigned long long)x->info.count, y->path,
                gr_dtype_name(y->info.dtype), (unsigned long long)y->info.count, gr_dtype_name(d.dtype));
    if (d.root < 0 || d.root >= ctx->size)
        GR_FAIL(GR_ERR_INVALID_ARG, "root %d is not a rank of the communicator (size %d)", d.root, ctx->size);
    return vec_file(ctx, x, y, &d, out, timing);
}
