/*
 * gr_npy.h - the NumPy .npy header: parse and write.
 *
 * Pure functions over memory: no I/O, no allocation, no logging, no globals,
 * so the parser can be fuzzed on its own (tests/fuzz/fuzz_npy.c). Errors come
 * back as GR_ERR_IO with one sentence in err (without the file name: the
 * caller knows it).
 *
 * Format (numpy.lib.format): the magic "\x93NUMPY", major and minor version
 * bytes, the header length (2 bytes little-endian in version 1.0, 4 bytes in
 * 2.0 and 3.0), then the header: a Python dict literal with exactly the keys
 * 'descr', 'fortran_order' and 'shape', padded with spaces and ended by '\n'.
 * The data follows immediately.
 *
 * Accepted element types: '<f2' '<f4' '<f8' '<i4' '<i8', also with '=' or '|'
 * as the byte order (both mean native, and this library only builds on
 * little-endian hosts), and bfloat16 as ml_dtypes' name 'bfloat16'. '<V2' /
 * '|V2' is what np.save writes for an ml_dtypes bfloat16 array: it parses as
 * GR_NPY_V2 (opaque 2-byte items) and the caller may read it as bfloat16
 * when the user says so. Big-endian, structured, object and other types are
 * refused with the reason.
 */
#ifndef GR_NPY_H
#define GR_NPY_H

#include "gpureduce.h"

#include <stddef.h>
#include <stdint.h>

/* Magic, version, header length: at most 12 bytes before the dict. */
#define GR_NPY_PREAMBLE_MAX 12
/* Largest header accepted. numpy itself refuses more than 10000 bytes by
 * default; 1 MiB leaves room for any honest shape and bounds what a corrupt
 * length can make us read. */
#define GR_NPY_HEADER_MAX ((uint64_t)1 << 20)
/* numpy's NPY_MAXDIMS (64 since numpy 2.0). */
#define GR_NPY_MAXDIMS 64

typedef enum gr_npy_type {
    GR_NPY_F16 = 0,  /* '<f2' IEEE binary16 */
    GR_NPY_BF16 = 1, /* 'bfloat16' (ml_dtypes name) */
    GR_NPY_F32 = 2,
    GR_NPY_F64 = 3,
    GR_NPY_I32 = 4,
    GR_NPY_I64 = 5,
    GR_NPY_V2 = 6    /* '<V2' or '|V2': 2 opaque bytes (np.save of ml_dtypes bfloat16) */
} gr_npy_type_t;

typedef struct gr_npy_header {
    int major, minor;         /* format version */
    uint64_t data_offset;     /* bytes before the data: preamble + header length */
    char descr[32];           /* the descr string as written */
    gr_npy_type_t type;
    size_t itemsize;
    int ndim;                 /* 0 for a scalar (shape ()) */
    uint64_t shape[GR_NPY_MAXDIMS];
    uint64_t count;           /* product of shape (1 for a scalar, 0 if a dimension is 0) */
    uint64_t data_bytes;      /* count * itemsize, checked for overflow */
} gr_npy_header_t;

/*
 * From the first bytes of a file, the size of its whole header (preamble +
 * header length) into *total. Needs 10 bytes for version 1.0 and 12 for 2.0
 * and 3.0; fewer, a wrong magic or an unknown version give GR_ERR_IO.
 */
gr_result_t gr_npy_header_size(const void *buf, size_t len, uint64_t *total, char *err, size_t errlen);

/*
 * Parse the header at the start of buf[0..len). len must cover the whole
 * header (see gr_npy_header_size); the data need not be there.
 */
gr_result_t gr_npy_parse(const void *buf, size_t len, gr_npy_header_t *h, char *err, size_t errlen);

/* Name of a parsed type ("f32", "bf16", "v2", ...). */
const char *gr_npy_type_name(gr_npy_type_t t);
/* Map to the library's dtype; -1 for types it cannot reduce. */
int gr_npy_type_to_dtype(gr_npy_type_t t);

/*
 * Write a header for a C-order array of the given descr and shape into buf:
 * version 1.0 when it fits in 65535 bytes, else 2.0; padded with spaces so
 * the data starts on a 64-byte boundary, ended by '\n', as numpy writes it.
 * Returns the header's size in bytes, or 0 if cap is too small or the
 * arguments make no sense.
 */
size_t gr_npy_format_header(char *buf, size_t cap, const char *descr, const uint64_t *shape, int ndim);

/* The descr string this library writes for a dtype ("<f4", ...). */
const char *gr_npy_descr_of(gr_dtype_t t);

#endif /* GR_NPY_H */
