/* The one run-time choice of vector code for every kernel family (as
 * PyTorch's ATEN_CPU_CAPABILITY): elementwise math, reductions, index,
 * sgd / adamw, softmax, layer / batch / group norm, copies and gathers,
 * pooling, matrix-vector, GEMM, convolution GEMM and attention all ask
 * tj_k_isa_active() before they pick an ISA's loop or a route (our kernels
 * or OpenBLAS).
 *
 * The ISA in use is the lowest of
 *   - what the CPU runs: AVX-512 needs F, DQ, VL and BW (the flags the
 *     *_avx512.c objects are built with), AVX2 needs AVX2 and FMA;
 *   - what the environment variable TJ_ISA names: "generic" (portable C and
 *     OpenBLAS only), "avx2" or "avx512", read at the first call and again
 *     at each tj_k_isa_force(NULL). An unset, empty or unknown value
 *     (names are lower case: "AVX2" is unknown) sets no cap: the CPU's best
 *     runs, as does "avx512" on a CPU without it. TJ_ISA=avx2 on an
 *     AVX-512 machine runs every route an AVX2-only machine takes (CI's
 *     second pass of the test suite);
 *   - what tj_k_isa_force last set (tests and benchmarks).
 * The choice is cached in an atomic: one load per dispatch. */
#ifndef TJIT_KERNELS_CPU_ISA_H
#define TJIT_KERNELS_CPU_ISA_H

#include <stdbool.h>

/** Ordered: a higher value runs everything a lower one runs. */
typedef enum tj_k_isa { TJ_K_ISA_GENERIC, TJ_K_ISA_AVX2, TJ_K_ISA_AVX512 } tj_k_isa;

/** The ISA the kernels use now (the lowest of the three above). */
tj_k_isa tj_k_isa_active(void);

/** What the CPU runs, whatever TJ_ISA and tj_k_isa_force say: for tests that
 *  call one ISA's loop directly. */
tj_k_isa tj_k_isa_cpu(void);

/** tj_k_isa_active() as "generic", "avx2" or "avx512". */
const char *tj_k_isa_name(void);

/** Sets the ISA in use to `name` ("generic", "avx2", "avx512"), or with NULL
 *  back to the default (the CPU's best under TJ_ISA's cap, TJ_ISA read
 *  again), for tests and benchmarks. Returns false, changing nothing, for an
 *  unknown name or one above the CPU or TJ_ISA (forcing only lowers the
 *  cap). Call it while no kernel runs: an operator sizes its scratch for
 *  the route of the ISA in use (attention, convolution, scatter_add) and
 *  asks again when it runs. */
bool tj_k_isa_force(const char *name);

#endif
