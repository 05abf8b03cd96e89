/* maximum / minimum, the comparisons, where and masked_fill, bit for bit
 * against the plain C expressions that define them: the float loops of
 * every instruction set the CPU has (generic, AVX2, AVX-512) at every
 * length 0..40 (the vector tails) on nan (signs, payloads), signed zeros,
 * infinities and denormals (a comparison merged into its where too); then
 * the public operators on broadcast, 0-dim
 * and non-contiguous operands, which go through the iterator's constant
 * and row-constant operand buffers (a [1, C, 1, 1] bias, a [4, 1, 1, 1]
 * scale), at 1, 2 and 3 threads. */
#include <criterion/criterion.h>
#include <float.h>
#include <math.h>
#include <string.h>

#include "kernels/cpu_isa.h"
#include "kernels/elementwise.h"
#include "runtime/internal.h"
#include "test_util.h"

TestSuite(select_compare, .init = test_scope_open, .fini = test_scope_close_isa);

#define MAXN 40

/* ---- special values ---- */

/* nan of both signs with distinct payloads, signed zeros, infinities,
 * denormals, ordinary and extreme values */
static float f32_special(int i)
{
    static const uint32_t nans[] = {0x7fc00000u, 0xffc00000u, 0x7fc00123u, 0xff800001u, 0x7f800abcu};
    const float vals[] = {0.0f, -0.0f, INFINITY, -INFINITY, 1.0f, -1.0f, 2.5f, -2.5f, FLT_MIN, -FLT_MIN,
                          FLT_TRUE_MIN, -FLT_TRUE_MIN, 3 * FLT_TRUE_MIN, FLT_MAX, -FLT_MAX, 1e-3f, -7.0f};
    int nn = (int)(sizeof nans / sizeof nans[0]), nv = (int)(sizeof vals / sizeof vals[0]);
    i %= nn + nv;
    return i < nn ? test_f32_bits(nans[i]) : vals[i - nn];
}

static double f64_special(int i)
{
    static const uint64_t nans[] = {0x7ff8000000000000u, 0xfff8000000000000u, 0x7ff8000000000123u,
                                    0xfff0000000000001u, 0x7ff0000000000abcu};
    const double vals[] = {0.0, -0.0, INFINITY, -INFINITY, 1.0, -1.0, 2.5, -2.5, DBL_MIN, -DBL_MIN,
                           DBL_TRUE_MIN, -DBL_TRUE_MIN, 3 * DBL_TRUE_MIN, DBL_MAX, -DBL_MAX, 1e-3, -7.0};
    int nn = (int)(sizeof nans / sizeof nans[0]), nv = (int)(sizeof vals / sizeof vals[0]);
    i %= nn + nv;
    return i < nn ? test_f64_bits(nans[i]) : vals[i - nn];
}

#define NSPECIAL 22 /* nans + vals above */

/* a[i], b[i] over every pair of special values (shifted by `shift`) */
static void fill_pairs_f32(float *a, float *b, int n, int shift)
{
    for (int i = 0; i < n; i++) {
        int p = i + shift;
        a[i] = f32_special(p % NSPECIAL);
        b[i] = f32_special(p / NSPECIAL + p);
    }
}

static void fill_pairs_f64(double *a, double *b, int n, int shift)
{
    for (int i = 0; i < n; i++) {
        int p = i + shift;
        a[i] = f64_special(p % NSPECIAL);
        b[i] = f64_special(p / NSPECIAL + p);
    }
}

/* The definitions the vector loops must match bit for bit. */
#define MAX_REF(a, b) ((a) != (a) ? (a) : (b) != (b) ? (b) : (a) > (b) ? (a) : (b))
#define MIN_REF(a, b) ((a) != (a) ? (a) : (b) != (b) ? (b) : (a) < (b) ? (a) : (b))

static float max_f32(float a, float b) { return MAX_REF(a, b); }
static float min_f32(float a, float b) { return MIN_REF(a, b); }
static double max_f64(double a, double b) { return MAX_REF(a, b); }
static double min_f64(double a, double b) { return MIN_REF(a, b); }

static bool same_f32(float x, float y) { return memcmp(&x, &y, 4) == 0; }
static bool same_f64(double x, double y) { return memcmp(&x, &y, 8) == 0; }

/* ---- the loops, every instruction set and length ---- */

/* Runs the binary loop at every length and offset (unaligned starts) over
 * all pairs of special values; checks each result's bits and that nothing
 * past n is written. */
#define CHECK_MINMAX(T, SFX)                                                    \
    static void check_minmax_##SFX(const char *isa, tj_k_binary_op op)          \
    {                                                                           \
        enum { CAP = MAXN + 8, PAIRS = NSPECIAL * NSPECIAL };                   \
        for (int shift = 0; shift < PAIRS; shift += MAXN)                       \
            for (int n = 0; n <= MAXN; n++)                                     \
                for (int off = 0; off < 3; off += 2) {                          \
                    T a[CAP], b[CAP], o[CAP];                                   \
                    fill_pairs_##SFX(a + off, b + off, n, shift);               \
                    for (int i = 0; i < CAP; i++) o[i] = (T)1234;               \
                    const void *in[2] = {a + off, b + off};                     \
                    tj_k_binary_args k = {.op = op, .dtype = TJ_DTYPE_##SFX};   \
                    tj_k_binary_loop(n, o + off, in, &k);                       \
                    for (int i = 0; i < n; i++) {                               \
                        T x = a[off + i], y = b[off + i];                       \
                        T want = op == TJ_K_MAXIMUM ? max_##SFX(x, y) : min_##SFX(x, y); \
                        cr_assert(same_##SFX(o[off + i], want),                 \
                                  "%s %s n=%d i=%d: %a, %a gave %a, want %a", isa, \
                                  op == TJ_K_MAXIMUM ? "maximum" : "minimum", n, i, \
                                  (double)x, (double)y, (double)o[off + i], (double)want); \
                    }                                                           \
                    for (int i = 0; i < CAP; i++)                               \
                        if (i < off || i >= off + n) cr_assert_eq(o[i], (T)1234, "%s n=%d: wrote [%d]", isa, n, i); \
                }                                                               \
    }
#define TJ_DTYPE_f32 TJ_FLOAT32
#define TJ_DTYPE_f64 TJ_FLOAT64
CHECK_MINMAX(float, f32)
CHECK_MINMAX(double, f64)

Test(select_compare, maximum_minimum_loops_match_the_scalar_nan_rule_on_every_isa_and_tail)
{
    for (size_t s = 0; s < TEST_NISA; s++) {
        if (!tj_k_isa_force(test_isas[s])) continue;
        for (int op = TJ_K_MAXIMUM; op <= TJ_K_MINIMUM; op++) {
            check_minmax_f32(test_isas[s], op);
            check_minmax_f64(test_isas[s], op);
        }
    }
}

/* mul, div and add with alpha (add.Tensor, sub as add with -alpha): the
 * vector loops against the scalar C expressions, one rounding per
 * operation (a nan result: any nan, as x86 picks between two nan operands
 * by their order, which C leaves to the compiler). */
#define CHECK_ARITH(T, SFX)                                                     \
    static void check_arith_##SFX(const char *isa)                              \
    {                                                                           \
        enum { CAP = MAXN + 8, PAIRS = NSPECIAL * NSPECIAL };                   \
        static const double alphas[] = {1, -1, 0.1, -2.5};                      \
        for (int shift = 0; shift < PAIRS; shift += MAXN)                       \
            for (int n = 0; n <= MAXN; n++)                                     \
                for (int op = 0; op < 6; op++) {                                \
                    T a[CAP], b[CAP], o[CAP];                                   \
                    fill_pairs_##SFX(a + 1, b + 1, n, shift);                   \
                    for (int i = 0; i < CAP; i++) o[i] = (T)1234;               \
                    const void *in[2] = {a + 1, b + 1};                         \
                    T al = (T)alphas[op < 2 ? 0 : op - 2];                      \
                    if (op < 2) {                                               \
                        tj_k_binary_args k = {.op = op ? TJ_K_DIV : TJ_K_MUL, .dtype = TJ_DTYPE_##SFX}; \
                        tj_k_binary_loop(n, o + 1, in, &k);                     \
                    } else {                                                    \
                        tj_k_axpby_args k = {.alpha = alphas[op - 2], .dtype = TJ_DTYPE_##SFX}; \
                        tj_k_add_loop(n, o + 1, in, &k);                        \
                    }                                                           \
                    for (int i = 0; i < n; i++) {                               \
                        T x = a[1 + i], y = b[1 + i];                           \
                        T want = op == 0 ? x * y : op == 1 ? x / y : al == 1 ? x + y : x + al * y; \
                        cr_assert(same_##SFX(o[1 + i], want) || (want != want && o[1 + i] != o[1 + i]), \
                                  "%s op %d n=%d i=%d: %a, %a gave %a, want %a", isa, op, n, i, \
                                  (double)x, (double)y, (double)o[1 + i], (double)want); \
                    }                                                           \
                    cr_assert(o[0] == (T)1234 && o[n + 1] == (T)1234, "%s n=%d: wrote outside", isa, n); \
                }                                                               \
    }
CHECK_ARITH(float, f32)
CHECK_ARITH(double, f64)

Test(select_compare, arithmetic_loops_match_the_scalar_expressions_on_every_isa_and_tail)
{
    for (size_t s = 0; s < TEST_NISA; s++) {
        if (!tj_k_isa_force(test_isas[s])) continue;
        check_arith_f32(test_isas[s]);
        check_arith_f64(test_isas[s]);
    }
}

Test(select_compare, maximum_keeps_the_first_nan_and_the_second_of_equal_zeros)
{
    /* spelled out: a nan `a` wins over a nan `b` (payload and sign kept),
     * maximum(+0, -0) = -0 and maximum(-0, +0) = +0 (neither is greater) */
    for (size_t s = 0; s < TEST_NISA; s++) {
        if (!tj_k_isa_force(test_isas[s])) continue;
        float a[20], b[20], o[20];
        for (int i = 0; i < 20; i++) a[i] = b[i] = 1.0f;
        a[3] = test_f32_bits(0xffc00123u), b[3] = test_f32_bits(0x7fc00000u);
        a[4] = 5.0f, b[4] = test_f32_bits(0xff800001u);
        a[17] = 0.0f, b[17] = -0.0f;
        a[18] = -0.0f, b[18] = 0.0f;
        const void *in[2] = {a, b};
        tj_k_binary_args k = {.op = TJ_K_MAXIMUM, .dtype = TJ_FLOAT32};
        tj_k_binary_loop(20, o, in, &k);
        cr_expect(same_f32(o[3], test_f32_bits(0xffc00123u)), "%s", test_isas[s]);
        cr_expect(same_f32(o[4], test_f32_bits(0xff800001u)), "%s", test_isas[s]);
        cr_expect(same_f32(o[17], -0.0f) && same_f32(o[18], 0.0f), "%s", test_isas[s]);
        k.op = TJ_K_MINIMUM;
        tj_k_binary_loop(20, o, in, &k);
        cr_expect(same_f32(o[3], test_f32_bits(0xffc00123u)), "%s", test_isas[s]);
        cr_expect(same_f32(o[17], -0.0f) && same_f32(o[18], 0.0f), "%s", test_isas[s]);
    }
}

#define CHECK_COMPARE(T, SFX)                                                   \
    static void check_compare_##SFX(const char *isa)                            \
    {                                                                           \
        enum { CAP = MAXN + 8, PAIRS = NSPECIAL * NSPECIAL };                   \
        for (int op = TJ_K_EQ; op <= TJ_K_GE; op++)                             \
            for (int shift = 0; shift < PAIRS; shift += MAXN)                   \
                for (int n = 0; n <= MAXN; n++) {                               \
                    T a[CAP], b[CAP];                                           \
                    uint8_t o[CAP];                                             \
                    fill_pairs_##SFX(a + 1, b + 1, n, shift);                   \
                    memset(o, 7, sizeof o);                                     \
                    const void *in[2] = {a + 1, b + 1};                         \
                    tj_k_compare_args k = {.op = op, .dtype = TJ_DTYPE_##SFX};  \
                    tj_k_compare_loop(n, o + 1, in, &k);                        \
                    for (int i = 0; i < n; i++) {                               \
                        T x = a[1 + i], y = b[1 + i];                           \
                        bool want = op == TJ_K_EQ ? x == y : op == TJ_K_NE ? x != y : op == TJ_K_LT ? x < y \
                                  : op == TJ_K_LE ? x <= y : op == TJ_K_GT ? x > y : x >= y; \
                        cr_assert_eq(o[1 + i], want, "%s op %d n=%d i=%d: %a %a", isa, op, n, i, \
                                     (double)x, (double)y);                     \
                    }                                                           \
                    cr_assert(o[0] == 7 && o[n + 1] == 7, "%s op %d n=%d wrote outside", isa, op, n); \
                }                                                               \
    }
CHECK_COMPARE(float, f32)
CHECK_COMPARE(double, f64)

Test(select_compare, comparison_loops_give_0_or_1_bytes_with_nan_unordered_on_every_isa)
{
    for (size_t s = 0; s < TEST_NISA; s++) {
        if (!tj_k_isa_force(test_isas[s])) continue;
        check_compare_f32(test_isas[s]);
        check_compare_f64(test_isas[s]);
    }
}

/* where with a bool condition of 0, 1 and other nonzero bytes */
#define CHECK_WHERE(T, SFX)                                                     \
    static void check_where_##SFX(const char *isa)                              \
    {                                                                           \
        enum { CAP = MAXN + 8 };                                                \
        for (int n = 0; n <= MAXN; n++) {                                       \
            T a[CAP], b[CAP], o[CAP];                                           \
            uint8_t c[CAP];                                                     \
            fill_pairs_##SFX(a + 1, b + 1, n, 3 * n);                           \
            for (int i = 0; i < CAP; i++) {                                     \
                c[i] = (uint8_t)((i * 7 + n) % 3 == 0 ? 0 : (i % 5 == 0 ? 2 : 1)); \
                o[i] = (T)99;                                                   \
            }                                                                   \
            const void *in[3] = {c + 1, a + 1, b + 1};                          \
            tj_k_select_args k = {.dtype = TJ_DTYPE_##SFX};                     \
            tj_k_where_loop(n, o + 1, in, &k);                                  \
            for (int i = 0; i < n; i++) {                                       \
                T want = c[1 + i] ? a[1 + i] : b[1 + i];                        \
                cr_assert(same_##SFX(o[1 + i], want), "%s n=%d i=%d", isa, n, i); \
            }                                                                   \
            cr_assert(o[0] == (T)99 && o[n + 1] == (T)99, "%s n=%d wrote outside", isa, n); \
        }                                                                       \
    }
CHECK_WHERE(float, f32)
CHECK_WHERE(double, f64)

Test(select_compare, where_loops_select_bit_for_bit_on_every_isa_and_tail)
{
    for (size_t s = 0; s < TEST_NISA; s++) {
        if (!tj_k_isa_force(test_isas[s])) continue;
        check_where_f32(test_isas[s]);
        check_where_f64(test_isas[s]);
    }
}

/* a comparison merged into its where (the replay's loop fusion): the
 * bits of the two loops it replaces, tj_k_compare_loop into a mask and
 * tj_k_where_loop on it, for every comparison, the compare and select
 * dtypes a fused step pairs (the same float type, the other one, bool),
 * every tail, nan and signed zeros on both sides, and out over an operand */
static void fill_specials(tj_dtype dt, char *x, char *y, int n, int shift)
{
    if (dt == TJ_FLOAT32) fill_pairs_f32((float *)x, (float *)y, n, shift);
    else if (dt == TJ_FLOAT64) fill_pairs_f64((double *)x, (double *)y, n, shift);
    else
        for (int i = 0; i < n; i++) x[i] = (char)((i * 7 + shift) % 3 == 0), y[i] = (char)((i + shift) % 2);
}

static void check_compare_where(const char *isa, tj_dtype tc, tj_dtype ts)
{
    enum { CAP = MAXN + 8, PAIRS = NSPECIAL * NSPECIAL };
    size_t ec = tj_dtype_bytes(tc), es = tj_dtype_bytes(ts);
    for (int op = TJ_K_EQ; op <= TJ_K_GE; op++)
        for (int shift = 0; shift < PAIRS; shift += MAXN)
            for (int n = 0; n <= MAXN; n++) {
                _Alignas(64) char a[CAP * 8], b[CAP * 8], x[CAP * 8], y[CAP * 8], want[CAP * 8], got[CAP * 8];
                uint8_t mask[CAP];
                fill_specials(tc, a + ec, b + ec, n, shift);
                fill_specials(ts, x + es, y + es, n, 3 * shift + n);
                memset(want, 0x5a, sizeof want);
                memset(got, 0x5a, sizeof got);
                tj_k_compare_args ck = {.op = op, .dtype = tc};
                tj_k_select_args wk = {.dtype = ts};
                tj_k_compare_where_args k = {.op = op, .compare = tc, .dtype = ts};
                const void *cin[2] = {a + ec, b + ec}, *win[3] = {mask, x + es, y + es};
                tj_k_compare_loop(n, mask, cin, &ck);
                tj_k_where_loop(n, want + es, win, &wk);
                const void *in[4] = {a + ec, b + ec, x + es, y + es};
                tj_k_compare_where_loop(n, got + es, in, &k);
                cr_assert(memcmp(got, want, (size_t)(n + 2) * es) == 0, "%s op %d %s -> %s n=%d shift %d", isa, op,
                          tj_dtype_name(tc), tj_dtype_name(ts), n, shift);
                /* out over x, then (same dtype) over a: each element read before it is written */
                memcpy(got, x, sizeof got);
                in[2] = got + es;
                tj_k_compare_where_loop(n, got + es, in, &k);
                cr_assert(memcmp(got + es, want + es, (size_t)n * es) == 0, "%s op %d n=%d out over x", isa, op, n);
                if (tc != ts) continue;
                memcpy(got, a, sizeof got);
                in[0] = got + es, in[2] = x + es;
                tj_k_compare_where_loop(n, got + es, in, &k);
                cr_assert(memcmp(got + es, want + es, (size_t)n * es) == 0, "%s op %d n=%d out over a", isa, op, n);
            }
}

Test(select_compare, a_comparison_merged_into_its_where_gives_the_two_loops_bits_on_every_isa)
{
    const tj_dtype pairs[][2] = {{TJ_FLOAT32, TJ_FLOAT32}, {TJ_FLOAT64, TJ_FLOAT64}, {TJ_FLOAT32, TJ_BOOL},
                                 {TJ_FLOAT64, TJ_BOOL},     {TJ_FLOAT32, TJ_FLOAT64}, {TJ_FLOAT64, TJ_FLOAT32}};
    for (size_t s = 0; s < TEST_NISA; s++) {
        if (!tj_k_isa_force(test_isas[s])) continue;
        for (size_t k = 0; k < sizeof pairs / sizeof pairs[0]; k++) check_compare_where(test_isas[s], pairs[k][0], pairs[k][1]);
    }
}

/* ---- the public operators ---- */

static tj_tensor *special_f32(int ndim, const int64_t *shape, int shift)
{
    int64_t n = 1;
    for (int d = 0; d < ndim; d++) n *= shape[d];
    float *v = malloc(sizeof(float) * (size_t)(n ? n : 1));
    cr_assert_not_null(v);
    for (int64_t i = 0; i < n; i++) v[i] = (i * 5 + shift) % 3 == 0 ? f32_special((int)((i + shift) % NSPECIAL)) : (float)((i * 37 + shift) % 101) - 50.0f;
    tj_tensor *t = test_tensor(TJ_FLOAT32, ndim, shape, v);
    free(v);
    return t;
}

static tj_tensor *mask_b8(int ndim, const int64_t *shape, unsigned seed)
{
    int64_t n = 1;
    for (int d = 0; d < ndim; d++) n *= shape[d];
    uint8_t *v = malloc((size_t)(n ? n : 1));
    cr_assert_not_null(v);
    srand(seed);
    for (int64_t i = 0; i < n; i++) v[i] = (uint8_t)(rand() & 1);
    tj_tensor *t = test_tensor(TJ_BOOL, ndim, shape, v);
    free(v);
    return t;
}

/* Element of `t` (any strides, broadcast to out_shape) at the row-major
 * index `flat` of out_shape. */
static const char *elem(const tj_tensor *t, int ndim, const int64_t *out_shape, int64_t flat)
{
    int64_t st[TJ_MAX_DIMS];
    tj_broadcast_strides(t, ndim, out_shape, st);
    int64_t off = 0;
    for (int d = ndim - 1; d >= 0; d--) {
        off += flat % out_shape[d] * st[d];
        flat /= out_shape[d];
    }
    return (const char *)tj_tensor_data(t) + off * (int64_t)tj_dtype_size(tj_tensor_dtype(t));
}

static float elem_f32(const tj_tensor *t, int ndim, const int64_t *shape, int64_t flat)
{
    float v;
    memcpy(&v, elem(t, ndim, shape, flat), 4);
    return v;
}

static int64_t numel_of(int ndim, const int64_t *shape)
{
    int64_t n = 1;
    for (int d = 0; d < ndim; d++) n *= shape[d];
    return n;
}

typedef enum { OP_MAX, OP_MIN, OP_ADD, OP_LT, OP_EQ } bin_op;

static tj_tensor *run_bin(bin_op op, tj_tensor *a, tj_tensor *b)
{
    switch (op) {
    case OP_MAX: return tj_maximum(a, b);
    case OP_MIN: return tj_minimum(a, b);
    case OP_ADD: return tj_add(a, b);
    case OP_LT: return tj_lt(a, b);
    case OP_EQ: return tj_eq(a, b);
    }
    return NULL;
}

/* Checks op(a, b) (float32 operands broadcast to `shape`) element by element
 * against the scalar definition, at 1, 2 and 3 threads. */
static void expect_binary(bin_op op, tj_tensor *a, tj_tensor *b, int ndim, const int64_t *shape)
{
    int64_t n = numel_of(ndim, shape);
    for (int nt = 1; nt <= 3; nt++) {
        tj_set_num_threads(nt);
        tj_tensor *r = run_bin(op, a, b);
        cr_assert_not_null(r, "%s", tj_last_error());
        cr_assert_eq(tj_tensor_numel(r), n);
        for (int64_t i = 0; i < n; i++) {
            float x = elem_f32(a, ndim, shape, i), y = elem_f32(b, ndim, shape, i);
            if (op == OP_LT || op == OP_EQ) {
                uint8_t got = ((const uint8_t *)tj_tensor_data(r))[i];
                cr_assert_eq(got, op == OP_LT ? x < y : x == y, "op %d at %ld (%d threads)", op, (long)i, nt);
                continue;
            }
            float want = op == OP_MAX ? max_f32(x, y) : op == OP_MIN ? min_f32(x, y) : x + y;
            float got = ((const float *)tj_tensor_data(r))[i];
            /* which nan's payload x + y keeps is the compiler's choice
             * (the operands commute), so add only checks that it is nan */
            if (op == OP_ADD && isnan(want) && isnan(got)) continue;
            cr_assert(same_f32(got, want), "op %d at %ld (%d threads): %a, %a gave %a, want %a", op, (long)i, nt,
                      (double)x, (double)y, (double)got, (double)want);
        }
    }
}

Test(select_compare, maximum_and_minimum_with_broadcast_and_0dim_operands_match_the_scalar_rule)
{
    const int64_t s4[4] = {3, 5, 9, 70}, sc[4] = {1, 5, 1, 1}, row[2] = {1, 70}, col[2] = {6, 1}, s2[2] = {6, 70};
    tj_tensor *x = special_f32(4, s4, 0), *c = special_f32(4, sc, 4);
    tj_tensor *z = tj_tensor_scalar_f32(0.0f), *nz = tj_tensor_scalar_f32(-0.0f);
    tj_tensor *qn = tj_tensor_scalar_f32(test_f32_bits(0xffc00123u));
    for (bin_op op = OP_MAX; op <= OP_MIN; op++) {
        expect_binary(op, x, z, 4, s4);  /* decomposed relu */
        expect_binary(op, nz, x, 4, s4); /* the 0-dim first */
        expect_binary(op, x, qn, 4, s4);
        expect_binary(op, x, c, 4, s4); /* constant along rows */
        expect_binary(op, c, x, 4, s4);
        expect_binary(op, special_f32(2, row, 1), special_f32(2, col, 2), 2, s2);
        /* non-contiguous: x transposed */
        tj_tensor *xt = tj_transpose(special_f32(2, (const int64_t[]){70, 6}, 3), 0, 1);
        cr_assert_not_null(xt, "%s", tj_last_error());
        expect_binary(op, xt, special_f32(2, s2, 5), 2, s2);
    }
}

Test(select_compare, comparisons_and_bias_add_broadcast_along_inner_dims_exactly)
{
    /* inner extents below ROW_MIN (49), between (100) and above one block
     * (784, two blocks a row) */
    const int64_t shapes[3][4] = {{2, 16, 7, 7}, {2, 16, 10, 10}, {2, 16, 28, 28}};
    const int64_t sb[4] = {1, 16, 1, 1};
    for (int s = 0; s < 3; s++) {
        tj_tensor *x = special_f32(4, shapes[s], s), *y = special_f32(4, shapes[s], s + 7);
        tj_tensor *bias = special_f32(4, sb, 2 * s + 1);
        for (bin_op op = OP_ADD; op <= OP_EQ; op++) {
            expect_binary(op, x, bias, 4, shapes[s]);
            expect_binary(op, bias, x, 4, shapes[s]);
            expect_binary(op, x, y, 4, shapes[s]);
        }
    }
}

Test(select_compare, row_constant_operand_refills_when_only_the_zero_sign_or_nan_payload_changes)
{
    /* consecutive channels whose values compare equal (or are nan) but
     * differ in bits: a value cache comparing numbers would keep the wrong
     * one */
    const float cv[6] = {0.0f, -0.0f, 0.0f, test_f32_bits(0x7fc00001u), test_f32_bits(0x7fc00002u), test_f32_bits(0xffc00002u)};
    const int64_t sc[3] = {1, 6, 1}, sx[3] = {2, 6, 600};
    tj_tensor *c = test_f32(3, sc, cv), *x = tj_tensor_empty(TJ_FLOAT32, 3, sx);
    cr_assert_not_null(x, "%s", tj_last_error());
    float *xd = tj_tensor_data(x);
    for (int64_t i = 0; i < 2 * 6 * 600; i++) xd[i] = i % 2 ? -0.0f : 0.0f;
    expect_binary(OP_ADD, x, c, 3, sx);
    expect_binary(OP_MAX, x, c, 3, sx);
    expect_binary(OP_MIN, c, x, 3, sx);
}

Test(select_compare, row_constant_operand_converts_int64_and_float64_to_the_loop_dtype)
{
    const int64_t sc[4] = {1, 3, 1, 1}, sx[4] = {2, 3, 4, 80};
    tj_tensor *ci = test_i64(4, sc, (const int64_t[]){-3, 0, 1 << 25 | 1});
    tj_tensor *cd = test_f64(4, sc, (const double[]){0.1, -0.0, 1e300});
    tj_tensor *x = special_f32(4, sx, 0);
    tj_tensor *ri = tj_add(x, ci), *rd = tj_add(x, cd);
    cr_assert(ri && rd, "%s", tj_last_error());
    cr_assert_eq(tj_tensor_dtype(ri), TJ_FLOAT32);
    cr_assert_eq(tj_tensor_dtype(rd), TJ_FLOAT64);
    for (int64_t i = 0; i < tj_tensor_numel(x); i++) {
        int ch = (int)(i / 320 % 3);
        float xv = ((const float *)tj_tensor_data(x))[i];
        float wi = xv + (float)((const int64_t[]){-3, 0, 1 << 25 | 1})[ch];
        double wd = (double)xv + ((const double[]){0.1, -0.0, 1e300})[ch];
        cr_assert(same_f32(((const float *)tj_tensor_data(ri))[i], wi), "int64 at %ld", (long)i);
        cr_assert(same_f64(((const double *)tj_tensor_data(rd))[i], wd), "float64 at %ld", (long)i);
    }
}

/* where(c, a, b) against the definition, at 1, 2 and 3 threads. */
static void expect_where(tj_tensor *c, tj_tensor *a, tj_tensor *b, int ndim, const int64_t *shape)
{
    int64_t n = numel_of(ndim, shape);
    for (int nt = 1; nt <= 3; nt++) {
        tj_set_num_threads(nt);
        tj_tensor *r = tj_where(c, a, b);
        cr_assert_not_null(r, "%s", tj_last_error());
        cr_assert_eq(tj_tensor_numel(r), n);
        for (int64_t i = 0; i < n; i++) {
            bool cv = *elem(c, ndim, shape, i) != 0;
            float want = cv ? elem_f32(a, ndim, shape, i) : elem_f32(b, ndim, shape, i);
            float got = ((const float *)tj_tensor_data(r))[i];
            cr_assert(same_f32(got, want), "at %ld (%d threads): got %a want %a", (long)i, nt, (double)got,
                      (double)want);
        }
    }
}

Test(select_compare, where_with_bool_condition_and_broadcast_values_selects_exactly)
{
    const int64_t s4[4] = {4, 8, 16, 49}, s1[4] = {4, 1, 1, 1}, sc[4] = {1, 8, 1, 1}, sl[4] = {4, 8, 16, 196};
    tj_tensor *c = mask_b8(4, s4, 1), *x = special_f32(4, s4, 0), *y = special_f32(4, s4, 9);
    tj_tensor *z = tj_tensor_scalar_f32(-0.0f);
    expect_where(c, x, y, 4, s4);
    expect_where(c, z, x, 4, s4);
    expect_where(c, x, z, 4, s4);
    expect_where(c, special_f32(4, s1, 3), x, 4, s4);
    expect_where(c, x, special_f32(4, sc, 4), 4, s4);
    tj_tensor *cl = mask_b8(4, sl, 2), *xl = special_f32(4, sl, 5);
    expect_where(cl, special_f32(4, s1, 6), xl, 4, sl);
    expect_where(cl, z, xl, 4, sl);
    /* a broadcast condition and a transposed one */
    expect_where(mask_b8(4, sc, 3), x, y, 4, s4);
    const int64_t s2[2] = {70, 90};
    tj_tensor *ct = tj_transpose(mask_b8(2, (const int64_t[]){90, 70}, 4), 0, 1);
    cr_assert_not_null(ct, "%s", tj_last_error());
    expect_where(ct, special_f32(2, s2, 1), special_f32(2, s2, 2), 2, s2);
    /* a 0-dim condition */
    tj_tensor *c0 = test_tensor(TJ_BOOL, 0, NULL, (const uint8_t[]){1});
    expect_where(c0, x, y, 4, s4);
}

Test(select_compare, where_promotes_mixed_dtypes_and_handles_int64_and_bool)
{
    const int64_t s[1] = {37};
    tj_tensor *c = mask_b8(1, s, 5);
    int64_t iv[37], jv[37];
    for (int i = 0; i < 37; i++) iv[i] = (int64_t)i * 1000003 - 7, jv[i] = -((int64_t)i << 40);
    tj_tensor *ri = tj_where(c, test_i64(1, s, iv), test_i64(1, s, jv));
    cr_assert_not_null(ri, "%s", tj_last_error());
    cr_assert_eq(tj_tensor_dtype(ri), TJ_INT64);
    const uint8_t *cd = tj_tensor_data(c);
    for (int i = 0; i < 37; i++) cr_expect_eq(((const int64_t *)tj_tensor_data(ri))[i], cd[i] ? iv[i] : jv[i]);
    tj_tensor *x = special_f32(1, s, 0);
    tj_tensor *rm = tj_where(c, test_i64(1, s, iv), x); /* int64 with float32: float32 */
    cr_assert_not_null(rm, "%s", tj_last_error());
    cr_assert_eq(tj_tensor_dtype(rm), TJ_FLOAT32);
    for (int i = 0; i < 37; i++) {
        float want = cd[i] ? (float)iv[i] : ((const float *)tj_tensor_data(x))[i];
        cr_expect(same_f32(((const float *)tj_tensor_data(rm))[i], want), "at %d", i);
    }
    tj_tensor *rb = tj_where(c, c, mask_b8(1, s, 6));
    cr_assert_not_null(rb, "%s", tj_last_error());
    cr_assert_eq(tj_tensor_dtype(rb), TJ_BOOL);
}

Test(select_compare, masked_fill_with_a_broadcast_bool_mask_fills_exactly)
{
    const int64_t s4[4] = {2, 8, 9, 70}, sm[4] = {1, 1, 9, 70};
    tj_tensor *x = special_f32(4, s4, 0), *m = mask_b8(4, sm, 7);
    for (int nt = 1; nt <= 3; nt++) {
        tj_set_num_threads(nt);
        tj_tensor *r = tj_masked_fill(x, m, tj_v_float(-0.0));
        cr_assert_not_null(r, "%s", tj_last_error());
        for (int64_t i = 0; i < tj_tensor_numel(x); i++) {
            float want = *elem(m, 4, s4, i) ? -0.0f : ((const float *)tj_tensor_data(x))[i];
            cr_assert(same_f32(((const float *)tj_tensor_data(r))[i], want), "at %ld", (long)i);
        }
    }
}

/* An f64 view [rows, cols] of a new tensor holding v(i) at flat index i of
 * a [rows, 2 * cols] buffer, taking every other column (inner stride 2). */
static tj_tensor *f64_stride2(int64_t rows, int64_t cols)
{
    tj_tensor *base = tj_tensor_empty(TJ_FLOAT64, 2, (const int64_t[]){rows, 2 * cols});
    cr_assert_not_null(base, "%s", tj_last_error());
    double *d = tj_tensor_data(base);
    for (int64_t i = 0; i < rows * 2 * cols; i++) d[i] = (double)(i % 1013) * 0.37 - 150.0;
    tj_tensor *v = tj_tensor_new_view(base, 2, (const int64_t[]){rows, cols}, (const int64_t[]){2 * cols, 2}, 0);
    cr_assert_not_null(v, "%s", tj_last_error());
    tj_scope_adopt(v);
    return v;
}

static double elem_f64(const tj_tensor *t, int ndim, const int64_t *shape, int64_t flat)
{
    double v;
    memcpy(&v, elem(t, ndim, shape, flat), 8);
    return v;
}

Test(select_compare, rows_longer_than_a_block_and_mixed_dtype_rows_give_exact_results)
{
    /* rows of 9000 read in place (blocks of 4096, 4096, 808) */
    const int64_t s[2] = {3, 9000}, s1[2] = {1, 9000};
    tj_tensor *x = special_f32(2, s, 0), *r = special_f32(2, s1, 5);
    expect_binary(OP_EQ, x, r, 2, s);
    expect_binary(OP_MAX, r, x, 2, s);
    /* float32 rows converted to float64 next to a gathered float64 operand
     * (blocks limited to the buffers' 512 doubles) */
    const int64_t sd[2] = {2, 3000};
    tj_tensor *xf = special_f32(2, sd, 2), *yd = f64_stride2(2, 3000);
    for (int nt = 1; nt <= 3; nt++) {
        tj_set_num_threads(nt);
        tj_tensor *sum = tj_add(xf, yd);
        cr_assert_not_null(sum, "%s", tj_last_error());
        for (int64_t i = 0; i < 6000; i++) {
            double want = (double)elem_f32(xf, 2, sd, i) + elem_f64(yd, 2, sd, i);
            double got = ((const double *)tj_tensor_data(sum))[i];
            cr_assert(same_f64(got, want) || (isnan(got) && isnan(want)), "at %ld (%d threads)", (long)i, nt);
        }
    }
}

Test(select_compare, in_place_add_of_a_row_constant_into_a_strided_output_is_exact)
{
    /* out is a transposed view (inner stride 2): results go through the
     * output buffer and are scattered, the [2, 1] operand is row-constant */
    for (int nt = 1; nt <= 3; nt++) {
        tj_set_num_threads(nt);
        const int64_t sb[2] = {3000, 2};
        tj_tensor *base = special_f32(2, sb, nt);
        float *before = malloc(sizeof(float) * 6000);
        cr_assert_not_null(before);
        memcpy(before, tj_tensor_data(base), sizeof(float) * 6000);
        tj_tensor *xt = tj_transpose(base, 0, 1);
        tj_tensor *c = test_f32(2, (const int64_t[]){2, 1}, (const float[]){-0.0f, 2.5f});
        cr_assert_not_null(tj_add_(xt, c, tj_v_int(1)), "%s", tj_last_error());
        const float *after = tj_tensor_data(base);
        for (int64_t i = 0; i < 6000; i++) {
            float want = before[i] + (i % 2 ? 2.5f : -0.0f);
            cr_assert(same_f32(after[i], want) || (isnan(after[i]) && isnan(want)), "at %ld (%d threads)", (long)i,
                      nt);
        }
        free(before);
    }
}

Test(select_compare, row_constant_operand_over_blocks_of_several_rows_matches_the_definition)
{
    /* rows of 64-200 elements next to a [.., 1] operand: each block covers
     * several whole rows (the last block fewer), the operand's buffer is
     * filled row by row */
    const int64_t sx[4] = {8, 4, 64, 64}, sr[4] = {8, 4, 64, 1};
    tj_tensor *x = special_f32(4, sx, 1), *r = special_f32(4, sr, 2);
    expect_binary(OP_ADD, x, r, 4, sx);
    expect_binary(OP_MAX, r, x, 4, sx);
    expect_binary(OP_LT, x, r, 4, sx);
    /* 7 consecutive rows share a value, +0 and -0 alternate between
     * groups, 61 rows of 200 (5 rows a block, 13 blocks): the buffer keeps
     * a value across blocks only while it is bit-for-bit the same */
    const int64_t sy[3] = {3, 61, 200}, sv[3] = {1, 61, 1};
    float v[61];
    for (int i = 0; i < 61; i++) v[i] = i / 7 % 3 == 0 ? (i / 7 % 2 ? -0.0f : 0.0f) : (float)(i / 7) - 3.5f;
    tj_tensor *y = special_f32(3, sy, 3), *c = test_f32(3, sv, v);
    expect_binary(OP_ADD, y, c, 3, sy);
    expect_binary(OP_MIN, c, y, 3, sy);
    expect_binary(OP_EQ, c, y, 3, sy);
    /* an in-place operand whose rows do not follow each other (a slice of
     * wider rows) keeps blocks of one row */
    tj_tensor *wide = special_f32(2, (const int64_t[]){61, 300}, 4);
    tj_tensor *sl = tj_slice(wide, 1, true, 50, true, 250, 1);
    cr_assert_not_null(sl, "%s", tj_last_error());
    expect_binary(OP_ADD, sl, tj_view(c, (const int64_t[]){61, 1}, 2), 2, (const int64_t[]){61, 200});
}

Test(select_compare, row_constant_int64_operand_over_several_rows_converts_each_row)
{
    const int64_t sc[4] = {1, 3, 5, 1}, sx[4] = {4, 3, 5, 100};
    int64_t cv[15];
    for (int i = 0; i < 15; i++) cv[i] = (i % 4 == 0 ? 1 << 25 | 1 : i - 7); /* 2^25 + 1 rounds in float32 */
    tj_tensor *ci = test_i64(4, sc, cv), *x = special_f32(4, sx, 0);
    for (int nt = 1; nt <= 3; nt++) {
        tj_set_num_threads(nt);
        tj_tensor *ri = tj_add(x, ci);
        cr_assert_not_null(ri, "%s", tj_last_error());
        cr_assert_eq(tj_tensor_dtype(ri), TJ_FLOAT32);
        for (int64_t i = 0; i < tj_tensor_numel(x); i++) {
            float xv = ((const float *)tj_tensor_data(x))[i];
            float want = xv + (float)cv[i / 100 % 15];
            float got = ((const float *)tj_tensor_data(ri))[i];
            cr_assert(same_f32(got, want) || (isnan(got) && isnan(want)), "at %ld (%d threads)", (long)i, nt);
        }
    }
}

Test(select_compare, row_constant_next_to_an_operand_broadcast_along_an_outer_dim_reads_only_its_rows)
{
    /* x [5, 64] broadcast to [3, 5, 64] (strides 0, 64, 1) next to r
     * [3, 5, 1]: x's rows continue within a [5, 64] but not from one
     * outer index to the next, so a block of rows must not read x as one
     * run of 15 rows (it has 5) */
    const int64_t sx[2] = {5, 64}, sr[3] = {3, 5, 1}, so[3] = {3, 5, 64};
    tj_tensor *x = special_f32(2, sx, 1), *r = special_f32(3, sr, 2);
    expect_binary(OP_ADD, x, r, 3, so);
    expect_binary(OP_MAX, r, x, 3, so);
}

Test(select_compare, row_constant_next_to_a_slice_with_gaps_between_outer_blocks_reads_only_its_rows)
{
    /* x: rows 0..4 of each [7, 64] of a [3, 7, 64] tensor (strides 448,
     * 64, 1): the rows of one outer index follow each other, then 2 rows
     * are skipped */
    const int64_t sw[3] = {3, 7, 64}, sr[3] = {3, 5, 1}, so[3] = {3, 5, 64};
    tj_tensor *wide = special_f32(3, sw, 3), *r = special_f32(3, sr, 4);
    tj_tensor *x = tj_slice(wide, 1, true, 0, true, 5, 1);
    cr_assert_not_null(x, "%s", tj_last_error());
    expect_binary(OP_ADD, x, r, 3, so);
    expect_binary(OP_MIN, r, x, 3, so);
}

Test(select_compare, in_place_add_of_a_row_constant_into_a_slice_with_gaps_writes_only_the_slice)
{
    /* self: rows 0..4 of each [7, 64] (strides 448, 64, 1); rows 5 and 6
     * of the base must keep their values */
    for (int nt = 1; nt <= 3; nt++) {
        tj_set_num_threads(nt);
        const int64_t sw[3] = {3, 7, 64}, sr[3] = {3, 5, 1};
        tj_tensor *wide = special_f32(3, sw, nt), *r = special_f32(3, sr, 5);
        float before[3 * 7 * 64];
        memcpy(before, tj_tensor_data(wide), sizeof before);
        tj_tensor *x = tj_slice(wide, 1, true, 0, true, 5, 1);
        cr_assert_not_null(x, "%s", tj_last_error());
        cr_assert_not_null(tj_add_(x, r, tj_v_int(1)), "%s", tj_last_error());
        const float *after = tj_tensor_data(wide);
        for (int64_t i = 0; i < 3 * 7 * 64; i++) {
            int64_t a = i / (7 * 64), row = i / 64 % 7;
            float want = row < 5 ? before[i] + ((const float *)tj_tensor_data(r))[a * 5 + row] : before[i];
            cr_assert(same_f32(after[i], want) || (isnan(after[i]) && isnan(want)),
                      "at %ld (row %ld of [%ld]; %d threads): %a, want %a", (long)i, (long)row, (long)a, nt,
                      (double)after[i], (double)want);
        }
    }
}

Test(select_compare, broadcast_operand_next_to_a_gathered_one_reads_only_its_rows)
{
    /* no row-constant operand: z (every other element of rows of 140,
     * strides 700, 140, 2) keeps the dims apart, x [5, 64] broadcast to
     * [3, 5, 64] (strides 0, 64, 1) is read in place; blocks of several
     * rows must not read x past its 5 rows */
    const int64_t sx[2] = {5, 64}, sw[3] = {3, 5, 140}, so[3] = {3, 5, 64};
    tj_tensor *x = special_f32(2, sx, 6), *wide = special_f32(3, sw, 7);
    tj_tensor *z = tj_slice(wide, 2, true, 0, true, 128, 2);
    cr_assert_not_null(z, "%s", tj_last_error());
    expect_binary(OP_ADD, x, z, 3, so);
    expect_binary(OP_MAX, z, x, 3, so);
}
