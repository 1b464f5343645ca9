/*
 * cpu_kernels.c - the cpu backend's loops at the baseline level (SSE2 on
 * x86-64: 16-byte vectors; plain C elsewhere), the term-by-term reference,
 * and the choice of a level (cpu_kernels.h). The loops themselves are in
 * cpu_kernels_body.h; cpu_kernels_avx2.c and cpu_kernels_avx512.c compile
 * them again for wider vectors, where CMake finds the flags (x86-64).
 */
#define GR_CPU_VBYTES 16
#define GR_CPU_TABLE gr_cpu_kernels_baseline
#define GR_CPU_LEVEL GR_CPU_ISA_BASELINE
#include "cpu_kernels_body.h"

#if defined(GR_CPU_KERNELS_AVX2)
extern const gr_cpu_kernels_t gr_cpu_kernels_avx2;
#endif
#if defined(GR_CPU_KERNELS_AVX512)
extern const gr_cpu_kernels_t gr_cpu_kernels_avx512;
#endif

void gr_cpu_exact_f_reference(gr_partial_t *p, const void *in, int dtype, int op, int power, uint64_t n)
{
    for (uint64_t i = 0; i < n; ++i)
        gr_partial_add_term(p, gr_term_f(op, power, gr_load_f(in, dtype, i)));
}

const char *gr_cpu_isa_name(gr_cpu_isa_t isa)
{
    static const char *const names[GR_CPU_ISA_COUNT] = {"baseline", "avx2", "avx512"};
    return (unsigned)isa < GR_CPU_ISA_COUNT ? names[isa] : "unknown";
}

const gr_cpu_kernels_t *gr_cpu_kernels_isa(gr_cpu_isa_t isa)
{
    /* __builtin_cpu_supports also asks whether the OS saves the ymm / zmm
     * state (XGETBV), so a level it grants can run. */
    switch (isa) {
    case GR_CPU_ISA_BASELINE:
        return &gr_cpu_kernels_baseline;
#if defined(GR_CPU_KERNELS_AVX2)
    case GR_CPU_ISA_AVX2:
        __builtin_cpu_init();
        return __builtin_cpu_supports("avx2") ? &gr_cpu_kernels_avx2 : NULL;
#endif
#if defined(GR_CPU_KERNELS_AVX512)
    case GR_CPU_ISA_AVX512:
        __builtin_cpu_init();
        return __builtin_cpu_supports("avx512f") ? &gr_cpu_kernels_avx512 : NULL;
#endif
    default:
        return NULL;
    }
}

const gr_cpu_kernels_t *gr_cpu_kernels_select(const char *want)
{
    int top = GR_CPU_ISA_COUNT - 1, asked = 0;
    if (want && strcmp(want, "auto") != 0) {
        int i = 0;
        while (i < GR_CPU_ISA_COUNT && strcmp(want, gr_cpu_isa_name((gr_cpu_isa_t)i)) != 0)
            ++i;
        if (i < GR_CPU_ISA_COUNT) {
            top = i;
            asked = 1;
        } else {
            GR_WARN(GR_SUB_CPU, "GR_CPU_ISA=%s is not one of auto, baseline, avx2, avx512; using the best level "
                                "this CPU has", want);
        }
    }
    for (int i = top; i > 0; --i) {
        const gr_cpu_kernels_t *k = gr_cpu_kernels_isa((gr_cpu_isa_t)i);
        if (!k)
            continue;
        if (asked && i < top)
            GR_WARN(GR_SUB_CPU, "GR_CPU_ISA=%s: this CPU or this build lacks it; using %s", want,
                    gr_cpu_isa_name((gr_cpu_isa_t)i));
        return k;
    }
    if (asked && top > 0)
        GR_WARN(GR_SUB_CPU, "GR_CPU_ISA=%s: this CPU or this build lacks it; using baseline", want);
    return &gr_cpu_kernels_baseline;
}
