/*
 * cpu_kernels_avx512.c - the cpu backend's loops (cpu_kernels_body.h) on
 * 64-byte vectors, built with -mavx512f (CMakeLists.txt, x86-64 only) and chosen
 * at run time when the CPU has it (cpu_kernels.c).
 */
#define GR_CPU_VBYTES 64
#define GR_CPU_TABLE gr_cpu_kernels_avx512
#define GR_CPU_LEVEL GR_CPU_ISA_AVX512
#include "cpu_kernels_body.h"
