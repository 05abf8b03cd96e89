/* Run-time choice of the vector ISA for the row kernels (softmax, layer
 * norm): their AVX-512 objects are built with -mavx512f/dq/vl/bw, their AVX2
 * objects with -mavx2 -mfma. */
#ifndef TJIT_KERNELS_ROW_ISA_H
#define TJIT_KERNELS_ROW_ISA_H

typedef enum tj_k_row_isa { TJ_K_ROW_GENERIC, TJ_K_ROW_AVX2, TJ_K_ROW_AVX512 } tj_k_row_isa;

static inline tj_k_row_isa tj_k_row_isa_best(void)
{
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
        __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512bw"))
        return TJ_K_ROW_AVX512;
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return TJ_K_ROW_AVX2;
    return TJ_K_ROW_GENERIC;
}

#endif
