/* Elementwise loops: plain C for integer, bool, selections and cheap float
 * arithmetic (the compiler vectorises these), and the entry points that
 * route float math, float comparisons, where and maximum / minimum to the
 * vector code of the running CPU. */
#include <stdlib.h>
#include <string.h>
#include <tgmath.h>

#include "cpu_isa.h"
#include "elementwise.h"
#include "elementwise_isa.h"

/* ---- instruction set ---- */

/* The loops of the ISA in use (cpu_isa.h: the CPU's best, capped by TJ_ISA
 * and tj_k_isa_force). */
static const tj_k_math_isa *isa(void)
{
    static const tj_k_math_isa *const tables[] = {[TJ_K_ISA_GENERIC] = &tj_k_math_generic,
                                                  [TJ_K_ISA_AVX2] = &tj_k_math_avx2,
                                                  [TJ_K_ISA_AVX512] = &tj_k_math_avx512};
    return tables[tj_k_isa_active()];
}

static const tj_k_math_fns *float_fns(tj_dtype dt) { return dt == TJ_FLOAT32 ? isa()->f32 : isa()->f64; }

/* The dtypes with per-ISA float loops (float_fns). */
static inline bool is_float(tj_dtype dt) { return dt == TJ_FLOAT32 || dt == TJ_FLOAT64; }

/* ---- helpers ---- */

/* Expands M(T, field) for the C type and tj_k_scalar field of `dtype`. */
#define DISPATCH_ALL(dtype, M)                                                  \
    switch (dtype) {                                                            \
    case TJ_FLOAT32: M(float, f32); break;                                      \
    case TJ_FLOAT64: M(double, f64); break;                                     \
    case TJ_INT64: M(int64_t, i64); break;                                      \
    case TJ_BOOL: M(uint8_t, b); break;                                         \
    default: break; /* storage dtypes never reach a compute kernel */          \
    }

/* o[i] = EXPR over n elements, with a = in[0] and b = in[1] of type T. */
#define LOOP_AB(T, OT, EXPR)                                                    \
    do {                                                                        \
        OT *o = out;                                                            \
        const T *a = in[0], *b = in[1];                                         \
        for (int64_t i = 0; i < n; i++) o[i] = (EXPR);                          \
    } while (0)

/* int64 arithmetic wraps around, as PyTorch's does in practice. */
static inline int64_t wrap_add(int64_t a, int64_t b) { return (int64_t)((uint64_t)a + (uint64_t)b); }
static inline int64_t wrap_mul(int64_t a, int64_t b) { return (int64_t)((uint64_t)a * (uint64_t)b); }
static inline int64_t wrap_neg(int64_t a) { return (int64_t)(0 - (uint64_t)a); }

/* PyTorch's powi: negative exponents give 1 for base 1, +-1 for base -1 and
 * 0 otherwise (no error for 0). */
static int64_t pow_i64(int64_t a, int64_t e)
{
    if (e < 0) {
        if (a == 1) return 1;
        if (a == -1) return (e % 2) ? -1 : 1;
        return 0;
    }
    int64_t r = 1;
    while (e) {
        if (e & 1) r = wrap_mul(r, a);
        a = wrap_mul(a, a);
        e >>= 1;
    }
    return r;
}

/* Python's floor division (PyTorch's div_floor_floating): floor of the exact
 * quotient, from fmod, rather than floor of the rounded a / b. */
#define DIV_FLOOR_FLOAT(T)                                                      \
    static inline T div_floor_##T(T a, T b)                                     \
    {                                                                           \
        if (b == 0) return a / b;                                               \
        T mod = fmod(a, b);                                                     \
        T div = (a - mod) / b;                                                  \
        if (mod != 0 && (b < 0) != (mod < 0)) div -= 1;                         \
        if (div == 0) return copysign((T)0, a / b);                             \
        T fl = floor(div);                                                      \
        return div - fl > (T)0.5 ? fl + 1 : fl;                                 \
    }
DIV_FLOOR_FLOAT(float)
DIV_FLOOR_FLOAT(double)

static inline int64_t div_floor_i64(int64_t a, int64_t b)
{
    if (b == -1) return wrap_neg(a); /* INT64_MIN / -1 would trap */
    int64_t q = a / b;
    if (a % b != 0 && ((a < 0) != (b < 0))) q--;
    return q;
}

static inline int64_t div_trunc_i64(int64_t a, int64_t b) { return b == -1 ? wrap_neg(a) : a / b; }

/* C's `%` (the sign of a); INT64_MIN % -1 would trap. */
static inline int64_t fmod_i64(int64_t a, int64_t b) { return b == -1 ? 0 : a % b; }

/* Python's modulo (the sign of b), as ATen's remainder kernels. */
static inline int64_t remainder_i64(int64_t a, int64_t b)
{
    int64_t r = fmod_i64(a, b);
    return r != 0 && (r < 0) != (b < 0) ? r + b : r;
}

static bool has_zero(int64_t n, const int64_t *b)
{
    for (int64_t i = 0; i < n; i++)
        if (b[i] == 0) return true;
    return false;
}

/* ---- unary ---- */

void tj_k_unary_loop(int64_t n, void *out, const void *const *in, const void *ctx)
{
    const tj_k_unary_args *k = ctx;
    if (is_float(k->dtype)) {
        float_fns(k->dtype)->unary[k->op](n, out, in[0]);
        return;
    }
    if (k->dtype == TJ_BOOL) {
        if (k->op == TJ_K_SIGN) memmove(out, in[0], (size_t)n); /* the only unary op taking bool */
        return;
    }
    if (k->dtype != TJ_INT64) return;
    int64_t *o = out;
    const int64_t *a = in[0];
    if (k->op == TJ_K_FLOOR || k->op == TJ_K_CEIL || k->op == TJ_K_ROUND || k->op == TJ_K_TRUNC) {
        memmove(out, in[0], (size_t)n * sizeof *o);
        return;
    }
    switch (k->op) {
    case TJ_K_ABS:
        for (int64_t i = 0; i < n; i++) o[i] = a[i] < 0 ? wrap_neg(a[i]) : a[i];
        break;
    case TJ_K_NEG:
        for (int64_t i = 0; i < n; i++) o[i] = wrap_neg(a[i]);
        break;
    case TJ_K_RELU:
        for (int64_t i = 0; i < n; i++) o[i] = a[i] > 0 ? a[i] : 0;
        break;
    case TJ_K_SIGN:
        for (int64_t i = 0; i < n; i++) o[i] = (0 < a[i]) - (a[i] < 0);
        break;
    default: break; /* float-only operators promote int64 to float32 */
    }
}

/* ---- binary ---- */

void tj_k_add_loop(int64_t n, void *out, const void *const *in, const void *ctx)
{
    const tj_k_axpby_args *k = ctx;
    switch (k->dtype) {
    case TJ_FLOAT32:
    case TJ_FLOAT64: float_fns(k->dtype)->add(n, out, in[0], in[1], k->alpha); break;
    case TJ_INT64: {
        int64_t al = k->ialpha;
        if (al == 1) LOOP_AB(int64_t, int64_t, wrap_add(a[i], b[i]));
        else LOOP_AB(int64_t, int64_t, wrap_add(a[i], wrap_mul(al, b[i])));
        break;
    }
    case TJ_BOOL: {
        uint8_t al = k->ialpha != 0;
        LOOP_AB(uint8_t, uint8_t, (uint8_t)((a[i] != 0) | (al & (b[i] != 0))));
        break;
    }
    default: break; /* storage dtypes: the dispatcher keeps them from compute kernels */
    }
}

/* Float operators the vector tables leave to plain C. */
#define FLOAT_BINARY(T)                                                         \
    static void binary_##T(tj_k_binary_op op, int64_t n, void *out, const void *const *in) \
    {                                                                           \
        switch (op) {                                                           \
        case TJ_K_MUL: LOOP_AB(T, T, a[i] * b[i]); break;                       \
        case TJ_K_DIV: LOOP_AB(T, T, a[i] / b[i]); break;                       \
        case TJ_K_DIV_TRUNC: LOOP_AB(T, T, trunc(a[i] / b[i])); break;          \
        case TJ_K_DIV_FLOOR: LOOP_AB(T, T, div_floor_##T(a[i], b[i])); break;   \
        case TJ_K_SIGMOID_BACKWARD: LOOP_AB(T, T, a[i] * ((T)1 - b[i]) * b[i]); break; \
        case TJ_K_TANH_BACKWARD: LOOP_AB(T, T, a[i] * ((T)1 - b[i] * b[i])); break; \
        default: break; /* in the vector tables */                              \
        }                                                                       \
    }
FLOAT_BINARY(float)
FLOAT_BINARY(double)

static void binary_i64(const tj_k_binary_args *k, int64_t n, void *out, const void *const *in)
{
    switch (k->op) {
    case TJ_K_MUL: LOOP_AB(int64_t, int64_t, wrap_mul(a[i], b[i])); break;
    case TJ_K_DIV_TRUNC:
    case TJ_K_DIV_FLOOR:
    case TJ_K_FMOD:
    case TJ_K_REMAINDER:
        if (has_zero(n, in[1])) {
            atomic_store_explicit(k->div_by_zero, 1, memory_order_relaxed);
            return;
        }
        if (k->op == TJ_K_DIV_TRUNC) LOOP_AB(int64_t, int64_t, div_trunc_i64(a[i], b[i]));
        else if (k->op == TJ_K_DIV_FLOOR) LOOP_AB(int64_t, int64_t, div_floor_i64(a[i], b[i]));
        else if (k->op == TJ_K_FMOD) LOOP_AB(int64_t, int64_t, fmod_i64(a[i], b[i]));
        else LOOP_AB(int64_t, int64_t, remainder_i64(a[i], b[i]));
        break;
    case TJ_K_MAXIMUM: LOOP_AB(int64_t, int64_t, a[i] > b[i] ? a[i] : b[i]); break;
    case TJ_K_MINIMUM: LOOP_AB(int64_t, int64_t, a[i] < b[i] ? a[i] : b[i]); break;
    case TJ_K_POW: LOOP_AB(int64_t, int64_t, pow_i64(a[i], b[i])); break;
    case TJ_K_BITAND: LOOP_AB(int64_t, int64_t, a[i] & b[i]); break;
    case TJ_K_BITOR: LOOP_AB(int64_t, int64_t, a[i] | b[i]); break;
    case TJ_K_BITXOR: LOOP_AB(int64_t, int64_t, a[i] ^ b[i]); break;
    default: break; /* float-only operators */
    }
}

static void binary_bool(const tj_k_binary_args *k, int64_t n, void *out, const void *const *in)
{
    switch (k->op) {
    case TJ_K_MUL:
    case TJ_K_MINIMUM:
    case TJ_K_BITAND: LOOP_AB(uint8_t, uint8_t, (uint8_t)((a[i] != 0) & (b[i] != 0))); break;
    case TJ_K_MAXIMUM:
    case TJ_K_BITOR: LOOP_AB(uint8_t, uint8_t, (uint8_t)((a[i] != 0) | (b[i] != 0))); break;
    case TJ_K_BITXOR: LOOP_AB(uint8_t, uint8_t, (uint8_t)((a[i] != 0) ^ (b[i] != 0))); break;
    default: break; /* rejected for bool by the shape functions */
    }
}

void tj_k_binary_loop(int64_t n, void *out, const void *const *in, const void *ctx)
{
    const tj_k_binary_args *k = ctx;
    switch (k->dtype) {
    case TJ_FLOAT32:
    case TJ_FLOAT64: {
        tj_k_math2_fn f = float_fns(k->dtype)->binary[k->op];
        if (f) f(n, out, in[0], in[1]);
        else if (k->dtype == TJ_FLOAT32) binary_float(k->op, n, out, in);
        else binary_double(k->op, n, out, in);
        break;
    }
    case TJ_INT64: binary_i64(k, n, out, in); break;
    case TJ_BOOL: binary_bool(k, n, out, in); break;
    default: break; /* storage dtypes: the dispatcher keeps them from compute kernels */
    }
}

/* ---- comparisons ---- */

/* int64 and bool; the vector tables hold the float loops */
#define COMPARE(T)                                                              \
    do {                                                                        \
        switch (k->op) {                                                        \
        case TJ_K_EQ: LOOP_AB(T, uint8_t, a[i] == b[i]); break;                 \
        case TJ_K_NE: LOOP_AB(T, uint8_t, a[i] != b[i]); break;                 \
        case TJ_K_LT: LOOP_AB(T, uint8_t, a[i] < b[i]); break;                  \
        case TJ_K_LE: LOOP_AB(T, uint8_t, a[i] <= b[i]); break;                 \
        case TJ_K_GT: LOOP_AB(T, uint8_t, a[i] > b[i]); break;                  \
        case TJ_K_GE: LOOP_AB(T, uint8_t, a[i] >= b[i]); break;                 \
        case TJ_K_LOGICAL_AND: LOOP_AB(T, uint8_t, (a[i] != 0) & (b[i] != 0)); break; \
        case TJ_K_LOGICAL_OR: LOOP_AB(T, uint8_t, (a[i] != 0) | (b[i] != 0)); break; \
        case TJ_K_LOGICAL_XOR: LOOP_AB(T, uint8_t, (a[i] != 0) ^ (b[i] != 0)); break; \
        case TJ_K_COMPARE_COUNT: break;                                         \
        }                                                                       \
    } while (0)

void tj_k_compare_loop(int64_t n, void *out, const void *const *in, const void *ctx)
{
    const tj_k_compare_args *k = ctx;
    if (is_float(k->dtype)) float_fns(k->dtype)->compare[k->op](n, out, in[0], in[1]);
    else if (k->dtype == TJ_INT64) COMPARE(int64_t);
    else COMPARE(uint8_t);
}

/* ---- float classification ---- */

#define CLASSIFY(T)                                                             \
    do {                                                                        \
        uint8_t *o = out;                                                       \
        const T *a = in[0];                                                     \
        if (k->op == TJ_K_ISNAN)                                                \
            for (int64_t i = 0; i < n; i++) o[i] = a[i] != a[i];                \
        else                                                                    \
            for (int64_t i = 0; i < n; i++) o[i] = fabs(a[i]) == (T)INFINITY;   \
    } while (0)

void tj_k_classify_loop(int64_t n, void *out, const void *const *in, const void *ctx)
{
    const tj_k_classify_args *k = ctx;
    if (k->dtype == TJ_FLOAT32) CLASSIFY(float);
    else if (k->dtype == TJ_FLOAT64) CLASSIFY(double);
    else memset(out, 0, (size_t)n); /* integers are never nan or infinite */
}

void tj_k_splat(void *out, const void *value, int64_t n, size_t es)
{
    if (es == 1) memset(out, *(const uint8_t *)value, (size_t)n);
    else if (es == 2) { /* the 2-byte storage dtypes, moved by the iterator's copies */
        uint16_t v, *o = out;
        memcpy(&v, value, sizeof v);
        for (int64_t i = 0; i < n; i++) o[i] = v;
    } else float_fns(es == 4 ? TJ_FLOAT32 : TJ_FLOAT64)->splat(n, out, value);
}

void tj_k_spread(void *out, const void *vals, int64_t nr, int64_t len, size_t es)
{
    if (es == 1)
        for (int64_t i = 0; i < nr; i++) memset((char *)out + i * len, ((const uint8_t *)vals)[i], (size_t)len);
    else if (es == 2)
        for (int64_t i = 0; i < nr; i++) tj_k_splat((uint16_t *)out + i * len, (const uint16_t *)vals + i, len, 2);
    else float_fns(es == 4 ? TJ_FLOAT32 : TJ_FLOAT64)->spread(nr, len, out, vals);
}

void tj_k_mul_add_loop(int64_t n, void *out, const void *const *in, const void *ctx)
{
    const tj_k_mul_add_args *k = ctx;
    float_fns(k->dtype)->mul_add(n, out, in[0], in[1], in[2], k->alpha, k->product_first, k->one_b);
}

void tj_k_rows_loop(int64_t nr, int64_t len, void *out, const void *x, const void *vals, const tj_k_rows_args *k)
{
    float_fns(k->dtype)->rows_arith(nr, len, out, x, vals, k);
}

/* ---- activations with Scalar parameters ---- */

void tj_k_act_loop(int64_t n, void *out, const void *const *in, const void *ctx)
{
    const tj_k_act_args *k = ctx;
    float_fns(k->dtype)->act[k->op](n, out, in[0], k->p);
}

void tj_k_act_backward_loop(int64_t n, void *out, const void *const *in, const void *ctx)
{
    const tj_k_act_args *k = ctx;
    float_fns(k->dtype)->act_backward[k->op](n, out, in[0], in[1], k->p);
}

/* ---- loops with scalar operands ---- */

void tj_k_pow_scalar_loop(int64_t n, void *out, const void *const *in, const void *ctx)
{
    const tj_k_pow_scalar_args *k = ctx;
    switch (k->dtype) {
    case TJ_FLOAT32: isa()->f32->pow_scalar(n, out, in[0], k->exponent.f32); break;
    case TJ_FLOAT64: isa()->f64->pow_scalar(n, out, in[0], k->exponent.f64); break;
    case TJ_INT64: {
        int64_t *o = out, e = k->exponent.i64;
        const int64_t *a = in[0];
        for (int64_t i = 0; i < n; i++) o[i] = pow_i64(a[i], e);
        break;
    }
    case TJ_BOOL: break; /* rejected by the shape function */
    default: break; /* storage dtypes: the dispatcher keeps them from compute kernels */
    }
}

/* std::min(std::max(a, lo), hi): a nan `a` survives both comparisons. */
#define CLAMP(T, f)                                                             \
    do {                                                                        \
        T *o = out, lo = k->min.f, hi = k->max.f;                               \
        const T *a = in[0];                                                     \
        if (k->has_min && k->has_max)                                           \
            for (int64_t i = 0; i < n; i++) {                                   \
                T x = a[i] < lo ? lo : a[i];                                    \
                o[i] = hi < x ? hi : x;                                         \
            }                                                                   \
        else if (k->has_min)                                                    \
            for (int64_t i = 0; i < n; i++) o[i] = a[i] < lo ? lo : a[i];       \
        else                                                                    \
            for (int64_t i = 0; i < n; i++) o[i] = hi < a[i] ? hi : a[i];       \
    } while (0)

void tj_k_clamp_loop(int64_t n, void *out, const void *const *in, const void *ctx)
{
    const tj_k_clamp_args *k = ctx;
    DISPATCH_ALL(k->dtype, CLAMP)
}

/* A nan bound gives nan (x != x is false for integers). */
#define CLAMP3(T, f)                                                            \
    do {                                                                        \
        T *o = out;                                                             \
        const T *a = in[0], *lo = in[1], *hi = in[2];                           \
        for (int64_t i = 0; i < n; i++) {                                       \
            T x = a[i] < lo[i] ? lo[i] : a[i];                                  \
            x = hi[i] < x ? hi[i] : x;                                          \
            o[i] = lo[i] != lo[i] ? lo[i] : hi[i] != hi[i] ? hi[i] : x;         \
        }                                                                       \
    } while (0)

void tj_k_clamp3_loop(int64_t n, void *out, const void *const *in, const void *ctx)
{
    const tj_k_select_args *k = ctx;
    DISPATCH_ALL(k->dtype, CLAMP3)
}

/* Both operands loaded unconditionally: the select then compiles to a
 * vector blend instead of a branch mispredicted on mixed conditions (20x
 * slower on relu masks). Floats: the vector tables' copy of this loop. */
#define WHERE(T)                                                                \
    do {                                                                        \
        T *o = out;                                                             \
        const uint8_t *c = in[0];                                               \
        const T *a = in[1], *b = in[2];                                         \
        for (int64_t i = 0; i < n; i++) {                                       \
            T x = a[i], y = b[i];                                               \
            o[i] = c[i] != 0 ? x : y;                                           \
        }                                                                       \
    } while (0)

void tj_k_where_loop(int64_t n, void *out, const void *const *in, const void *ctx)
{
    const tj_k_select_args *k = ctx;
    if (is_float(k->dtype)) float_fns(k->dtype)->where(n, out, in[0], in[1], in[2]);
    else if (k->dtype == TJ_INT64) WHERE(int64_t);
    else WHERE(uint8_t);
}

/* Compare in TC, select in TS: a float type selecting the other, rare
 * enough to do without vector loops. */
#define COMPARE_WHERE_OP(TC, TS, OP)                                            \
    do {                                                                        \
        TS *o = out;                                                            \
        const TC *a = in[0], *b = in[1];                                        \
        const TS *x = in[2], *y = in[3];                                        \
        int64_t sa = !(k->one & 1), sb = !(k->one & 2), sx = !(k->one & 4), sy = !(k->one & 8); \
        for (int64_t i = 0; i < n; i++) {                                       \
            TS u = x[i * sx], v = y[i * sy];                                    \
            o[i] = a[i * sa] OP b[i * sb] ? u : v;                              \
        }                                                                       \
    } while (0)

#define COMPARE_WHERE(TC, TS)                                                   \
    do {                                                                        \
        switch (k->op) {                                                        \
        case TJ_K_EQ: COMPARE_WHERE_OP(TC, TS, ==); break;                      \
        case TJ_K_NE: COMPARE_WHERE_OP(TC, TS, !=); break;                      \
        case TJ_K_LT: COMPARE_WHERE_OP(TC, TS, <); break;                       \
        case TJ_K_LE: COMPARE_WHERE_OP(TC, TS, <=); break;                      \
        case TJ_K_GT: COMPARE_WHERE_OP(TC, TS, >); break;                       \
        case TJ_K_GE: COMPARE_WHERE_OP(TC, TS, >=); break;                      \
        default: break; /* the logical ops are not merged */                    \
        }                                                                       \
    } while (0)

void tj_k_compare_where_loop(int64_t n, void *out, const void *const *in, const void *ctx)
{
    const tj_k_compare_where_args *k = ctx;
    const tj_k_math_fns *f = float_fns(k->compare);
    if (k->dtype == k->compare) f->compare_where[k->op](n, out, in[0], in[1], in[2], in[3], k->one);
    else if (k->dtype == TJ_BOOL) f->compare_where_b8[k->op](n, out, in[0], in[1], in[2], in[3], k->one);
    else if (k->compare == TJ_FLOAT32) COMPARE_WHERE(float, double);
    else COMPARE_WHERE(double, float);
}

/* a[i] loaded unconditionally, as in WHERE: a blend, not a branch */
#define MASKED_FILL(T, f)                                                       \
    do {                                                                        \
        T v = k->value.f, *o = out;                                             \
        const T *a = in[0];                                                     \
        const uint8_t *b = in[1];                                               \
        for (int64_t i = 0; i < n; i++) {                                       \
            T x = a[i];                                                         \
            o[i] = b[i] != 0 ? v : x;                                           \
        }                                                                       \
    } while (0)

void tj_k_masked_fill_loop(int64_t n, void *out, const void *const *in, const void *ctx)
{
    const tj_k_select_args *k = ctx;
    DISPATCH_ALL(k->dtype, MASKED_FILL)
}

/* PyTorch: self <= threshold ? 0 : grad, so a nan self lets the gradient pass. */
#define THRESHOLD_BACKWARD(T, f)                                                \
    do {                                                                        \
        T t = k->value.f, *o = out;                                             \
        const T *a = in[0], *b = in[1];                                         \
        for (int64_t i = 0; i < n; i++) {                                       \
            T g = a[i];                                                         \
            o[i] = b[i] <= t ? (T)0 : g;                                        \
        }                                                                       \
    } while (0)

void tj_k_threshold_backward_loop(int64_t n, void *out, const void *const *in, const void *ctx)
{
    const tj_k_select_args *k = ctx;
    DISPATCH_ALL(k->dtype, THRESHOLD_BACKWARD)
}

#define FILL(T, f)                                                              \
    do {                                                                        \
        T *o = out, v = k->value.f;                                             \
        for (int64_t i = 0; i < n; i++) o[i] = v;                               \
    } while (0)

void tj_k_fill_loop(int64_t n, void *out, const void *const *in, const void *ctx)
{
    const tj_k_select_args *k = ctx;
    DISPATCH_ALL(k->dtype, FILL)
}
