/*
 * fuzz_npy.c - libFuzzer target for the .npy header parser (src/io/io_npy.c).
 *
 * Build (clang): clang -fsanitize=fuzzer,address -Isrc -I<mpi include>
 *   tests/fuzz/fuzz_npy.c src/io/io_npy.c; tests/fuzz/replay_npy.c runs the
 *   same entry point over a corpus under any C compiler.
 *
 * Besides "no crash, no out-of-bounds read", every accepted header must
 * round-trip: formatting it again and parsing that gives the same header.
 */
#include "gr_npy.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char err[512];
    uint64_t total = 0;
    gr_npy_header_t h;
    if (gr_npy_header_size(data, size, &total, err, sizeof(err)) == GR_SUCCESS && total < 10)
        abort(); /* a header is never shorter than its preamble */
    if (gr_npy_parse(data, size, &h, err, sizeof(err)) != GR_SUCCESS) {
        if (!memchr(err, 0, sizeof(err)) || !err[0])
            abort(); /* every refusal says why */
        return 0;
    }
    if (h.data_offset > size || h.itemsize == 0 || h.ndim < 0 || h.ndim > GR_NPY_MAXDIMS)
        abort();
    uint64_t count = 1;
    for (int k = 0; k < h.ndim; ++k)
        count *= h.shape[k]; /* overflow-free: the parser checked the product */
    if (count != h.count || h.data_bytes != h.count * h.itemsize)
        abort();
    static char again[8192];
    size_t n = gr_npy_format_header(again, sizeof(again), h.descr, h.shape, h.ndim);
    if (n == 0)
        return 0; /* a descr longer than this library writes */
    gr_npy_header_t h2;
    if (gr_npy_parse(again, n, &h2, err, sizeof(err)) != GR_SUCCESS)
        abort();
    if (h2.type != h.type || h2.count != h.count || h2.ndim != h.ndim || strcmp(h2.descr, h.descr) != 0 ||
        memcmp(h2.shape, h.shape, sizeof(uint64_t) * (size_t)h.ndim) != 0)
        abort();
    return 0;
}
