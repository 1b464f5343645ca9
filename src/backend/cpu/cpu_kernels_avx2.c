/*
 * cpu_kernels_avx2.c - the cpu backend's loops (cpu_kernels_body.h) on
 * 32-byte vectors, built with -mavx2 (CMakeLists.txt, x86-64 only) and chosen
 * at run time when the CPU has it (cpu_kernels.c).
 */
#define GR_CPU_VBYTES 32
#define GR_CPU_TABLE gr_cpu_kernels_avx2
#define GR_CPU_LEVEL GR_CPU_ISA_AVX2
#include "cpu_kernels_body.h"
