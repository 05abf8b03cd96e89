/* The vector ISA every kernel family uses (cpu_isa.h). */
#include "cpu_isa.h"

#include <cpuid.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

static const char *const names[] = {[TJ_K_ISA_GENERIC] = "generic", [TJ_K_ISA_AVX2] = "avx2",
                                    [TJ_K_ISA_AVX512] = "avx512"};

/* A tj_k_isa, or -1 before the first call. */
static atomic_int active = -1;

/* F16C (the AVX2 kernels' float16 conversions): clang's
 * __builtin_cpu_supports has no name for it, so CPUID leaf 1 directly. */
static bool has_f16c(void)
{
    unsigned a, b, c, d;
    return __get_cpuid(1, &a, &b, &c, &d) && (c & bit_F16C);
}

tj_k_isa tj_k_isa_cpu(void)
{
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
        __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512bw"))
        return TJ_K_ISA_AVX512;
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && has_f16c()) return TJ_K_ISA_AVX2;
    return TJ_K_ISA_GENERIC;
}

/* The ISA `name` names, or -1. */
static int parse(const char *name)
{
    for (int i = 0; name && i < (int)(sizeof names / sizeof *names); i++)
        if (!strcmp(name, names[i])) return i;
    return -1;
}

/* The CPU's best under TJ_ISA's cap (none when TJ_ISA is unset or unknown). */
static tj_k_isa ceiling(void)
{
    tj_k_isa cpu = tj_k_isa_cpu();
    int cap = parse(getenv("TJ_ISA"));
    return cap >= 0 && cap < (int)cpu ? (tj_k_isa)cap : cpu;
}

tj_k_isa tj_k_isa_active(void)
{
    int v = atomic_load_explicit(&active, memory_order_relaxed);
    if (v < 0) {
        v = (int)ceiling();
        /* a concurrent tj_k_isa_force wins: it was called after this began */
        int unset = -1;
        if (!atomic_compare_exchange_strong_explicit(&active, &unset, v, memory_order_relaxed, memory_order_relaxed))
            v = unset;
    }
    return (tj_k_isa)v;
}

const char *tj_k_isa_name(void) { return names[tj_k_isa_active()]; }

bool tj_k_isa_force(const char *name)
{
    tj_k_isa top = ceiling();
    int want = name ? parse(name) : (int)top;
    if (want < 0 || want > (int)top) return false;
    atomic_store_explicit(&active, want, memory_order_relaxed);
    return true;
}
