/* The per-instruction-set tables of vectorised float loops (internal to
 * kernels/). Each of elementwise_generic.c, elementwise_avx2.c and
 * elementwise_avx512.c instantiates elementwise_simd.h for float32 and
 * float64 and exports one table; elementwise.c picks the one of the ISA in
 * use (cpu_isa.h). */
#ifndef TJIT_KERNELS_ELEMENTWISE_ISA_H
#define TJIT_KERNELS_ELEMENTWISE_ISA_H

#include "elementwise.h"

/** n contiguous elements: out = f(a). */
typedef void (*tj_k_math1_fn)(int64_t n, void *out, const void *a);
/** n contiguous elements: out = f(a, b). */
typedef void (*tj_k_math2_fn)(int64_t n, void *out, const void *a, const void *b);
/** n contiguous elements: out = a ^ e. */
typedef void (*tj_k_powc_fn)(int64_t n, void *out, const void *a, double e);
/** n contiguous elements: out = the element at value (bits unchanged). */
typedef void (*tj_k_splat_fn)(int64_t n, void *out, const void *value);
/* nr rows of len copies each: row i of the nr values at vals (tj_k_spread). */
typedef void (*tj_k_spread_fn)(int64_t nr, int64_t len, void *out, const void *vals);
/** n contiguous elements: out = a + alpha b (alpha rounded to the element
 * type first; a + b when it is 1), each rounded once: no fused
 * multiply-add, so that every width gives the scalar loop's bits. */
typedef void (*tj_k_axpy_fn)(int64_t n, void *out, const void *a, const void *b, double alpha);
/** tj_k_rows_loop on the table's float type. */
typedef void (*tj_k_rows_arith_fn)(int64_t nr, int64_t len, void *out, const void *a, const void *vals,
                                   const tj_k_rows_args *k);
/** tj_k_mul_add_loop on the table's float type: a b + alpha c
 * (product_first) or c + alpha a b; one_b: b[0] for every b[i]. */
typedef void (*tj_k_mul_add_fn)(int64_t n, void *out, const void *a, const void *b, const void *c, double alpha,
                                bool product_first, bool one_b);
/** n contiguous elements: out = c != 0 ? a : b, c of bool. */
typedef void (*tj_k_where_fn)(int64_t n, void *out, const uint8_t *c, const void *a, const void *b);

/** n contiguous elements: out = a op b ? x : y, a and b of the table's
 * float type, x, y and out of it too (compare_where) or bool
 * (compare_where_b8); bit k of one: operand k (a, b, x, y) is its [0]
 * for every element. */
typedef void (*tj_k_compare_where_fn)(int64_t n, void *out, const void *a, const void *b, const void *x,
                                      const void *y, unsigned one);

/** n contiguous elements: out = f(a; p), p the activation's parameters. */
typedef void (*tj_k_act1_fn)(int64_t n, void *out, const void *a, const double *p);
/** n contiguous elements: out = f'(grad = a, self = b; p). */
typedef void (*tj_k_act2_fn)(int64_t n, void *out, const void *a, const void *b, const double *p);

/** The loops of one element type. binary[] is NULL for operators that the
 * plain C loops in elementwise.c serve. compare[] writes bool. */
typedef struct tj_k_math_fns {
    tj_k_math1_fn unary[TJ_K_UNARY_COUNT];
    tj_k_math2_fn binary[TJ_K_BINARY_COUNT];
    tj_k_math2_fn compare[TJ_K_COMPARE_COUNT];
    tj_k_axpy_fn add;
    tj_k_where_fn where;
    tj_k_compare_where_fn compare_where[TJ_K_GE + 1]; /* the comparisons, not the logical ops */
    tj_k_compare_where_fn compare_where_b8[TJ_K_GE + 1];
    tj_k_splat_fn splat;
    tj_k_spread_fn spread;
    tj_k_rows_arith_fn rows_arith;
    tj_k_mul_add_fn mul_add;
    tj_k_powc_fn pow_scalar;
    tj_k_act1_fn act[TJ_K_ACT_COUNT];
    tj_k_act2_fn act_backward[TJ_K_ACT_COUNT];
} tj_k_math_fns;

typedef struct tj_k_math_isa {
    const tj_k_math_fns *f32, *f64;
} tj_k_math_isa;

extern const tj_k_math_isa tj_k_math_generic;
extern const tj_k_math_isa tj_k_math_avx2;
extern const tj_k_math_isa tj_k_math_avx512;

#endif
