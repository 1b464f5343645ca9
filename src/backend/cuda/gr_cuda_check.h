/*
 * gr_cuda_check.h - the CUDA adapter of the GR_CHECK family (host C only).
 *
 * GR_CUDA_CHECK(call): on failure, log where it starts (the call's text,
 * file:line through the logger, the CUDA error name and string, and what to
 * do) and return GR_ERR_DEVMEM for cudaErrorMemoryAllocation, GR_ERR_CUDA for
 * anything else. The error is also cleared from the runtime's last-error slot
 * so a later launch check does not report it a second time.
 * GR_CUDA_CHECK_GOTO(call, res, label): the same, but sets res and jumps to a
 * cleanup label.
 * GR_CUDA_IGNORE(call): cleanup paths; a failure is logged at info level
 * only, so the first error stays the one reported.
 */
#ifndef GR_CUDA_CHECK_H
#define GR_CUDA_CHECK_H

#include <cuda_runtime_api.h>

#include "gr_internal.h"

#define GR_CUDA_RESULT_(e) ((e) == cudaErrorMemoryAllocation ? GR_ERR_DEVMEM : GR_ERR_CUDA)
#define GR_CUDA_HINT_(e)                                                                              \
    ((e) == cudaErrorMemoryAllocation                                                                 \
         ? "the GPU is out of memory: use fewer elements per rank or more ranks, or free the GPU (nvidia-smi shows " \
           "who holds it)"                                                                            \
         : "check the GPU with nvidia-smi, that the driver supports this CUDA runtime, and "           \
           "CUDA_VISIBLE_DEVICES; a kernel fault is located by running under compute-sanitizer")

#define GR_CUDA_LOG_(call, e)                                                                         \
    gr_log(GR_LOG_ERROR, GR_SUB_ALL, __FILE__, __LINE__, "%s failed: %s (%s); %s", call,              \
           cudaGetErrorName(e), cudaGetErrorString(e), GR_CUDA_HINT_(e))

#define GR_CUDA_CHECK(call)                                                                           \
    do {                                                                                              \
        cudaError_t gr_cu_e_ = (call);                                                                \
        if (gr_cu_e_ != cudaSuccess) {                                                                \
            (void)cudaGetLastError();                                                                 \
            GR_CUDA_LOG_(#call, gr_cu_e_);                                                            \
            return GR_CUDA_RESULT_(gr_cu_e_);                                                         \
        }                                                                                             \
    } while (0)

#define GR_CUDA_CHECK_GOTO(call, res, label)                                                          \
    do {                                                                                              \
        cudaError_t gr_cu_e_ = (call);                                                                \
        if (gr_cu_e_ != cudaSuccess) {                                                                \
            (void)cudaGetLastError();                                                                 \
            GR_CUDA_LOG_(#call, gr_cu_e_);                                                            \
            (res) = GR_CUDA_RESULT_(gr_cu_e_);                                                        \
            goto label;                                                                               \
        }                                                                                             \
    } while (0)

#define GR_CUDA_IGNORE(call)                                                                          \
    do {                                                                                              \
        cudaError_t gr_cu_e_ = (call);                                                                \
        if (gr_cu_e_ != cudaSuccess) {                                                                \
            (void)cudaGetLastError();                                                                 \
            GR_INFO(GR_SUB_CUDA, "%s failed during cleanup: %s", #call, cudaGetErrorString(gr_cu_e_)); \
        }                                                                                             \
    } while (0)

#endif /* GR_CUDA_CHECK_H */
