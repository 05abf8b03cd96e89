/* Session 15 (opsC) operators: elu / elu_backward, flip, cumsum,
 * index_select and index_add. Reference values come from PyTorch 1.13
 * (/usr/bin/python3, float32; the expression is named next to each table),
 * stored here so the tests run without it. Each operator is also checked
 * through make_fx (the aten name is recorded), the core decompositions
 * (bit-equal to the kernels) and a compiled plan (bit-equal to eager). */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "kernels/cpu_isa.h"
#include "test_util.h"

TestSuite(opsc, .init = test_scope_open, .fini = test_scope_close_isa);

#define NX 10
/* torch.tensor([nan, inf, -inf, -0.0, 0.0, 0.5, -0.5, -2, 3, 25]) */
static const float xs[NX] = {NAN, INFINITY, -INFINITY, -0.0f, 0.0f, 0.5f, -0.5f, -2, 3, 25};
/* torch.linspace(-1, 2, 10) */
static const float gs[NX] = {-1, -0.666666627f, -0.333333313f, 2.98023224e-08f, 0.333333373f,
                             0.666666627f, 1, 1.33333325f, 1.66666663f, 2};

static tj_tensor *f32(int64_t n, const float *v) { return test_tensor(TJ_FLOAT32, 1, (int64_t[]){n}, v); }
static tj_tensor *i64(int64_t n, const int64_t *v) { return test_tensor(TJ_INT64, 1, (int64_t[]){n}, v); }
/* torch.arange(12.).view(3, 4) times `scale` */
static tj_tensor *a34(float scale)
{
    float v[12];
    for (int i = 0; i < 12; i++) v[i] = (float)i * scale;
    return test_tensor(TJ_FLOAT32, 2, (int64_t[]){3, 4}, v);
}

/* within a few ulp (SLEEF's exp against PyTorch's std::exp); nan, infinities
 * and signed zeros exactly. */
static void expect_f32_close(const tj_tensor *t, const float *want, int64_t n)
{
    cr_assert_not_null(t, "%s", tj_last_error());
    cr_assert_eq(tj_tensor_dtype(t), TJ_FLOAT32);
    cr_assert_eq(tj_tensor_numel(t), n);
    const float *p = tj_tensor_data(t);
    for (int64_t i = 0; i < n; i++) {
        bool zero_ok = want[i] != 0 || test_bits_f32(p[i]) == test_bits_f32(want[i]);
        cr_assert((test_close(p[i], want[i], 3e-7, 1e-30) && zero_ok) || (isnan(p[i]) && isnan(want[i])),
                  "[%lld] = %.9g, want %.9g", (long long)i, p[i], want[i]);
    }
}

static void expect_shape(const tj_tensor *t, int ndim, const int64_t *shape)
{
    cr_assert_not_null(t, "%s", tj_last_error());
    cr_assert_eq(tj_tensor_ndim(t), ndim);
    for (int d = 0; d < ndim; d++) cr_assert_eq(tj_tensor_shape(t)[d], shape[d], "dim %d", d);
}

/* ---- elu ---- */

Test(opsc, elu_and_elu_backward_give_pytorchs_answers_on_every_isa)
{
    for (int k = 0; k < TEST_NISA; k++) {
        if (!tj_k_isa_force(test_isas[k])) continue;
        tj_tensor *x = f32(NX, xs), *g = f32(NX, gs);
        /* torch.ops.aten.elu(x, 1, 1, 1) */
        expect_f32_close(tj_elu(x, tj_v_int(1), tj_v_int(1), tj_v_int(1)),
                         (float[]){NAN, INFINITY, -1.0f, 0.0f, 0.0f, 0.5f, -0.393469334f, -0.864664733f, 3, 25}, NX);
        /* torch.ops.aten.elu(x, 0.3, 1.0507, 1.5) */
        tj_tensor *y = tj_elu(x, tj_v_float(0.3), tj_v_float(1.0507), tj_v_float(1.5));
        expect_f32_close(y, (float[]){NAN, INFINITY, -0.315209985f, 0.0f, 0.0f, 0.525349975f, -0.166315332f,
                                      -0.299516618f, 3.15209985f, 26.267498f},
                         NX);
        /* torch.ops.aten.elu_backward(g, 0.3, 1.0507, 1.5, False, x) (nan: the vectorised kernel's
         * negative side, nan) */
        expect_f32_close(tj_elu_backward(g, tj_v_float(0.3), tj_v_float(1.0507), tj_v_float(1.5), false, x),
                         (float[]){NAN, -0.700466573f, -0.0f, 1.40909844e-08f, 0.157605007f, 0.700466573f,
                                   0.223341972f, 0.0313867591f, 1.75116658f, 2.1013999f},
                         NX);
        /* ... (g, 0.3, 1.0507, 1.5, True, y) */
        expect_f32_close(tj_elu_backward(g, tj_v_float(0.3), tj_v_float(1.0507), tj_v_float(1.5), true, y),
                         (float[]){NAN, -0.700466573f, -0.0f, 1.40909844e-08f, 0.157605007f, 0.700466573f,
                                   0.223341972f, 0.0313867293f, 1.75116658f, 2.1013999f},
                         NX);
    }
}

Test(opsc, elu_gradient_matches_pytorchs)
{
    /* x (without the nan).requires_grad_(); elu(x, 0.3, 1.0507, 1.5).backward(g) */
    tj_tensor *x = f32(NX - 1, xs + 1);
    tj_tensor_set_requires_grad(x, true);
    tj_tensor *y = tj_elu(x, tj_v_float(0.3), tj_v_float(1.0507), tj_v_float(1.5));
    cr_assert_eq(tj_backward(y, f32(NX - 1, gs + 1)), TJ_OK, "%s", tj_last_error());
    expect_f32_close(tj_tensor_grad(x), (float[]){-0.700466573f, -0.0f, 1.40909844e-08f, 0.157605007f, 0.700466573f,
                                                  0.223341972f, 0.0313867591f, 1.75116658f, 2.1013999f},
                     NX - 1);
}

/* ---- flip ---- */

Test(opsc, flip_reverses_the_listed_dims)
{
    /* torch.flip(torch.arange(24.).view(2, 3, 4).transpose(0, 2), [0, -1]) */
    float v[24];
    for (int i = 0; i < 24; i++) v[i] = (float)i;
    tj_tensor *t = tj_transpose(test_tensor(TJ_FLOAT32, 3, (int64_t[]){2, 3, 4}, v), 0, 2);
    tj_tensor *r = tj_flip(t, (int64_t[]){0, -1}, 2);
    expect_shape(r, 3, (int64_t[]){4, 3, 2});
    test_expect_f32(r, (float[]){15, 3, 19, 7, 23, 11, 14, 2, 18, 6, 22, 10, 13, 1, 17, 5, 21, 9, 12, 0, 16, 4, 20, 8},
                    24, 0);
    /* values kept bit for bit (nan, -0), int64, no dims, 0-dim, empty */
    test_expect_f32(tj_flip(f32(NX, xs), (int64_t[]){0}, 1),
                    (float[]){25, 3, -2, -0.5f, 0.5f, 0, -0.0f, -INFINITY, INFINITY, NAN}, NX, 0);
    test_expect_i64(tj_flip(i64(3, (int64_t[]){INT64_MIN, 0, 7}), (int64_t[]){-1}, 1), 3, (int64_t[]){7, 0, INT64_MIN});
    test_expect_f32(tj_flip(a34(1), NULL, 0), (float[]){0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, 12, 0);
    tj_tensor *s = tj_flip(tj_scalar_tensor(tj_v_float(2.5), TJ_FLOAT32), (int64_t[]){0}, 1);
    expect_shape(s, 0, NULL);
    test_expect_f32(s, (float[]){2.5f}, 1, 0);
    expect_shape(tj_flip(tj_zeros((int64_t[]){0, 3}, 2, TJ_FLOAT32), (int64_t[]){0, 1}, 2), 2, (int64_t[]){0, 3});
    /* the gradient is the flipped gradient */
    tj_tensor *x = a34(1);
    tj_tensor_set_requires_grad(x, true);
    cr_assert_eq(tj_backward(tj_flip(x, (int64_t[]){1}, 1), a34(0.5f)), TJ_OK, "%s", tj_last_error());
    test_expect_f32(tj_tensor_grad(x), (float[]){1.5f, 1, 0.5f, 0, 3.5f, 3, 2.5f, 2, 5.5f, 5, 4.5f, 4}, 12, 0);
}

/* ---- cumsum ---- */

Test(opsc, cumsum_sums_float32_in_float64_as_pytorch)
{
    /* torch.cumsum(torch.tensor([1e8, 1, 1, 1, -1e8, 0.1, inf, -1, 3, 2]), 0): a float32 accumulator would give
     * 0 and 0.1 at [4] and [5] */
    tj_tensor *c = f32(NX, (float[]){1e8f, 1, 1, 1, -1e8f, 0.1f, INFINITY, -1, 3, 2});
    test_expect_f32(tj_cumsum(c, 0, TJ_DTYPE_NONE),
                    (float[]){1e8f, 1e8f, 1e8f, 1e8f, 3, 3.0999999f, INFINITY, INFINITY, INFINITY, INFINITY}, NX, 0);
    /* nan propagates from where it appears */
    test_expect_f32(tj_cumsum(f32(3, (float[]){1, NAN, 2}), -1, TJ_DTYPE_NONE), (float[]){1, NAN, NAN}, 3, 0);
    /* a transposed input along both dims: torch.cumsum((torch.arange(12.).view(3, 4) * 0.1).t(), 0 / -1) */
    tj_tensor *mt = tj_transpose(a34(0.1f), 0, 1);
    test_expect_f32(tj_cumsum(mt, 0, TJ_DTYPE_NONE),
                    (float[]){0, 0.400000006f, 0.800000012f, 0.100000001f, 0.899999976f, 1.70000005f, 0.300000012f,
                              1.5f, 2.70000005f, 0.600000024f, 2.20000005f, 3.80000019f},
                    12, 0);
    test_expect_f32(tj_cumsum(mt, -1, TJ_DTYPE_NONE),
                    (float[]){0, 0.400000006f, 1.20000005f, 0.100000001f, 0.600000024f, 1.5f, 0.200000003f,
                              0.800000012f, 1.80000007f, 0.300000012f, 1, 2.0999999f},
                    12, 0);
}

Test(opsc, cumsum_dtypes_follow_pytorch)
{
    /* int64 wraps: torch.cumsum(tensor([[5, -3, 2**63 - 1], [1, 2, 3]]), 1) */
    tj_tensor *i = test_i64(2, (int64_t[]){2, 3}, (int64_t[]){5, -3, INT64_MAX, 1, 2, 3});
    test_expect_i64(tj_cumsum(i, 1, TJ_DTYPE_NONE), 6, (int64_t[]){5, 2, -INT64_MAX, 1, 3, 6});
    /* bool gives int64 */
    tj_tensor *b = test_tensor(TJ_BOOL, 1, (int64_t[]){4}, (uint8_t[]){1, 0, 1, 1});
    test_expect_i64(tj_cumsum(b, 0, TJ_DTYPE_NONE), 4, (int64_t[]){1, 1, 2, 3});
    /* dtype=float64 converts first: [0.10000000149011612, 0.30000000447034836, 0.6000000163912773] */
    tj_tensor *d = tj_cumsum(f32(3, (float[]){0.1f, 0.2f, 0.3f}), 0, TJ_FLOAT64);
    cr_assert_not_null(d, "%s", tj_last_error());
    cr_assert_eq(tj_tensor_dtype(d), TJ_FLOAT64);
    const double *p = tj_tensor_data(d);
    cr_expect_eq(p[0], 0.10000000149011612);
    cr_expect_eq(p[1], 0.30000000447034836);
    cr_expect_eq(p[2], 0.6000000163912773);
    /* dtype=int64 truncates each element first: [1, -1, 2] */
    test_expect_i64(tj_cumsum(f32(3, (float[]){1.5f, -2.7f, 3.9f}), 0, TJ_INT64), 3, (int64_t[]){1, -1, 2});
    /* 0-dim and empty */
    tj_tensor *s = tj_cumsum(tj_scalar_tensor(tj_v_float(3), TJ_FLOAT32), -1, TJ_DTYPE_NONE);
    expect_shape(s, 0, NULL);
    test_expect_f32(s, (float[]){3}, 1, 0);
    expect_shape(tj_cumsum(tj_zeros((int64_t[]){0, 3}, 2, TJ_FLOAT32), 1, TJ_DTYPE_NONE), 2, (int64_t[]){0, 3});
}

Test(opsc, cumsum_gradient_is_the_reversed_cumsum)
{
    /* m = arange(12.).view(3, 4) * 0.1; (cumsum(m, 1) * arange(12.).view(3, 4)).sum().backward() */
    tj_tensor *m = a34(0.1f);
    tj_tensor_set_requires_grad(m, true);
    cr_assert_eq(tj_backward(tj_cumsum(m, 1, TJ_DTYPE_NONE), a34(1)), TJ_OK, "%s", tj_last_error());
    test_expect_f32(tj_tensor_grad(m), (float[]){6, 6, 5, 3, 22, 18, 13, 7, 38, 30, 21, 11}, 12, 0);
    /* with dtype=torch.float64 along dim 0: the gradient comes back as float32 */
    tj_tensor *m2 = a34(0.1f);
    tj_tensor_set_requires_grad(m2, true);
    cr_assert_eq(tj_backward(tj_cumsum(m2, 0, TJ_FLOAT64), tj_to_copy(a34(1), TJ_FLOAT64)), TJ_OK, "%s",
                 tj_last_error());
    test_expect_f32(tj_tensor_grad(m2), (float[]){12, 15, 18, 21, 12, 14, 16, 18, 8, 9, 10, 11}, 12, 0);
}

/* ---- index_select / index_add ---- */

Test(opsc, index_select_gives_pytorchs_answers)
{
    /* torch.index_select(arange(12.).view(3, 4), 0, tensor([2, 0, 2])) */
    tj_tensor *s = a34(1);
    tj_tensor *r = tj_index_select(s, 0, i64(3, (int64_t[]){2, 0, 2}));
    expect_shape(r, 2, (int64_t[]){3, 4});
    test_expect_f32(r, (float[]){8, 9, 10, 11, 0, 1, 2, 3, 8, 9, 10, 11}, 12, 0);
    /* transposed self, negative dim: torch.index_select(s.t(), -1, tensor([1, 0])) */
    r = tj_index_select(tj_transpose(s, 0, 1), -1, i64(2, (int64_t[]){1, 0}));
    expect_shape(r, 2, (int64_t[]){4, 2});
    test_expect_f32(r, (float[]){4, 0, 5, 1, 6, 2, 7, 3}, 8, 0);
    /* a 0-dim index keeps a dim of 1; a 0-dim self gives its element; an empty index; int64 and nan, -0 */
    tj_tensor *i0 = test_i64(0, NULL, (int64_t[]){2});
    expect_shape(tj_index_select(s, 1, i0), 2, (int64_t[]){3, 1});
    test_expect_f32(tj_index_select(s, 1, i0), (float[]){2, 6, 10}, 3, 0);
    tj_tensor *e = tj_index_select(tj_scalar_tensor(tj_v_float(5), TJ_FLOAT32), 0, i64(2, (int64_t[]){0, 0}));
    expect_shape(e, 0, NULL);
    test_expect_f32(e, (float[]){5}, 1, 0);
    expect_shape(tj_index_select(s, 0, i64(0, NULL)), 2, (int64_t[]){0, 4});
    test_expect_i64(tj_index_select(i64(3, (int64_t[]){INT64_MIN, 1, 2}), 0, i64(2, (int64_t[]){0, 0})), 2,
                    (int64_t[]){INT64_MIN, INT64_MIN});
    test_expect_f32(tj_index_select(f32(NX, xs), 0, i64(3, (int64_t[]){3, 0, 2})), (float[]){-0.0f, NAN, -INFINITY}, 3,
                    0);
}

Test(opsc, index_add_accumulates_in_index_order)
{
    tj_tensor *s = a34(1);
    /* torch.index_add(s, 0, tensor([1, 1, 0]), tensor([[0.1]*4, [0.2]*4, [nan]*4])) */
    float src[12];
    for (int k = 0; k < 4; k++) src[k] = 0.1f, src[4 + k] = 0.2f, src[8 + k] = NAN;
    tj_tensor *r = tj_index_add(s, 0, i64(3, (int64_t[]){1, 1, 0}), test_f32(2, (int64_t[]){3, 4}, src), tj_v_int(1));
    test_expect_f32(r, (float[]){NAN, NAN, NAN, NAN, 4.29999971f, 5.29999971f, 6.29999971f, 7.29999971f, 8, 9, 10, 11},
                    12, 0);
    /* torch.index_add(s, 1, tensor([3, 3]), ones(3, 2), alpha=2) */
    tj_tensor *ones = tj_ones((int64_t[]){3, 2}, 2, TJ_FLOAT32);
    test_expect_f32(tj_index_add(s, 1, i64(2, (int64_t[]){3, 3}), ones, tj_v_int(2)),
                    (float[]){0, 1, 2, 7, 4, 5, 6, 11, 8, 9, 10, 15}, 12, 0);
    /* a broadcast source [3, 1] and a transposed self give the same */
    tj_tensor *col = tj_ones((int64_t[]){3, 1}, 2, TJ_FLOAT32);
    tj_tensor *st = tj_transpose(tj_contiguous(tj_transpose(s, 0, 1)), 0, 1);
    test_expect_f32(tj_index_add(st, -1, i64(1, (int64_t[]){3}), col, tj_v_float(4.0)),
                    (float[]){0, 1, 2, 7, 4, 5, 6, 11, 8, 9, 10, 15}, 12, 0);
    /* int64 wraps: index_add(tensor([[1, 2], [3, 4]]), 0, tensor([1, 1]), tensor([[2**63 - 1, 1], [2, 3]])) */
    tj_tensor *ia = tj_index_add(test_i64(2, (int64_t[]){2, 2}, (int64_t[]){1, 2, 3, 4}), 0, i64(2, (int64_t[]){1, 1}),
                                 test_i64(2, (int64_t[]){2, 2}, (int64_t[]){INT64_MAX, 1, 2, 3}), tj_v_int(1));
    test_expect_i64(ia, 4, (int64_t[]){1, 2, -9223372036854775804LL, 8});
    /* 0-dim */
    tj_tensor *z = tj_index_add(tj_scalar_tensor(tj_v_float(1), TJ_FLOAT32), 0, test_i64(0, NULL, (int64_t[]){0}),
                                tj_scalar_tensor(tj_v_float(2), TJ_FLOAT32), tj_v_int(1));
    expect_shape(z, 0, NULL);
    test_expect_f32(z, (float[]){3}, 1, 0);
}

Test(opsc, index_select_and_index_add_gradients_match_pytorchs)
{
    /* (index_select(s, 1, tensor([3, 0, 3])) * arange(9.).view(3, 3)).sum().backward() */
    tj_tensor *s = a34(1);
    tj_tensor_set_requires_grad(s, true);
    float w[9];
    for (int i = 0; i < 9; i++) w[i] = (float)i;
    tj_tensor *y = tj_index_select(s, 1, i64(3, (int64_t[]){3, 0, 3}));
    cr_assert_eq(tj_backward(y, test_f32(2, (int64_t[]){3, 3}, w)), TJ_OK, "%s", tj_last_error());
    test_expect_f32(tj_tensor_grad(s), (float[]){1, 0, 0, 2, 4, 0, 0, 8, 7, 0, 0, 14}, 12, 0);
    /* (index_add(s, 1, tensor([3, 3]), src, alpha=2) * arange(12.).view(3, 4)).sum().backward() */
    tj_tensor *s2 = a34(1), *src = tj_ones((int64_t[]){3, 2}, 2, TJ_FLOAT32);
    tj_tensor_set_requires_grad(s2, true);
    tj_tensor_set_requires_grad(src, true);
    tj_tensor *y2 = tj_index_add(s2, 1, i64(2, (int64_t[]){3, 3}), src, tj_v_int(2));
    cr_assert_eq(tj_backward(y2, a34(1)), TJ_OK, "%s", tj_last_error());
    test_expect_f32(tj_tensor_grad(s2), (float[]){0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, 12, 0);
    test_expect_f32(tj_tensor_grad(src), (float[]){6, 6, 14, 14, 22, 22}, 6, 0);
}

/* ---- errors ---- */

Test(opsc, bad_input_names_the_operator_and_the_offender)
{
    tj_tensor *s = a34(1), *i = i64(2, (int64_t[]){1, 2});
    test_expect_error(tj_elu(i, tj_v_int(1), tj_v_int(1), tj_v_int(1)), TJ_ERR_DTYPE, "aten::elu", "int64");
    test_expect_error(tj_elu(s, tj_v_float(1e300), tj_v_int(1), tj_v_int(1)), TJ_ERR_INVALID_ARGUMENT, "aten::elu",
                      "alpha");
    test_expect_error(tj_elu_backward(s, tj_v_float(-1), tj_v_int(1), tj_v_int(1), true, s), TJ_ERR_INVALID_ARGUMENT,
                      "aten::elu_backward", "negative alpha");
    test_expect_error(tj_elu_backward(s, tj_v_int(1), tj_v_int(1), tj_v_int(1), false, f32(3, (float[]){1, 2, 3})),
                      TJ_ERR_SHAPE, "aten::elu_backward", "[3, 4] and [3]");
    test_expect_error(tj_flip(s, (int64_t[]){0, -2}, 2), TJ_ERR_INVALID_ARGUMENT, "aten::flip",
                      "dim 0 appears multiple");
    test_expect_error(tj_flip(s, (int64_t[]){2}, 1), TJ_ERR_INDEX, "aten::flip", "2");
    test_expect_error(tj_cumsum(s, -3, TJ_DTYPE_NONE), TJ_ERR_INDEX, "aten::cumsum", "-3");
    test_expect_error(tj_cumsum(s, 0, TJ_BOOL), TJ_ERR_DTYPE, "aten::cumsum", "bool");
    test_expect_error(tj_index_select(s, 0, i64(2, (int64_t[]){1, 3})), TJ_ERR_INDEX, "aten::index_select",
                      "index 3 is out of bounds for dimension 0 with size 3");
    test_expect_error(tj_index_select(s, 1, i64(2, (int64_t[]){-1, 0})), TJ_ERR_INDEX, "aten::index_select",
                      "index -1");
    test_expect_error(tj_index_select(s, 0, f32(1, (float[]){1})), TJ_ERR_DTYPE, "aten::index_select", "float32");
    test_expect_error(tj_index_select(s, 0, test_i64(2, (int64_t[]){1, 1}, (int64_t[]){0})), TJ_ERR_SHAPE,
                      "aten::index_select", "[1, 1]");
    test_expect_error(tj_index_select(s, 2, i), TJ_ERR_INDEX, "aten::index_select", "2");
    tj_tensor *src = tj_ones((int64_t[]){2, 4}, 2, TJ_FLOAT32);
    test_expect_error(tj_index_add(s, 0, i64(2, (int64_t[]){0, 7}), src, tj_v_int(1)), TJ_ERR_INDEX, "aten::index_add",
                      "index 7 is out of bounds");
    test_expect_error(tj_index_add(s, 0, i64(3, (int64_t[]){0, 1, 2}), src, tj_v_int(1)), TJ_ERR_SHAPE,
                      "aten::index_add",
                      "number of indices (3)");
    test_expect_error(tj_index_add(s, 0, i, tj_ones((int64_t[]){2, 4}, 2, TJ_FLOAT64), tj_v_int(1)), TJ_ERR_DTYPE,
                      "aten::index_add", "float64");
    test_expect_error(tj_index_add(s, 0, i, tj_ones((int64_t[]){2, 3}, 2, TJ_FLOAT32), tj_v_int(1)), TJ_ERR_SHAPE,
                      "aten::index_add", "[2, 3]");
}

/* ---- tracing, decomposition, replay ---- */

/* Every new operator once, on x (float32 [2, 5]), i (int64 [3]) and the
 * upstream gradient of an index_select traced through autograd. */
static tj_status all_ops(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx;
    (void)n;
    tj_tensor *x = in[0], *i = in[1];
    int k = 0;
    out[k++] = tj_elu(x, tj_v_float(0.3), tj_v_float(1.0507), tj_v_float(1.5));
    out[k++] = tj_elu_backward(x, tj_v_float(0.3), tj_v_float(1.0507), tj_v_float(1.5), false, tj_transpose(
                                   tj_contiguous(tj_transpose(x, 0, 1)), 0, 1));
    out[k++] = tj_elu_backward(x, tj_v_int(1), tj_v_int(2), tj_v_int(1), true, x);
    out[k++] = tj_flip(x, (int64_t[]){-1, 0}, 2);
    out[k++] = tj_cumsum(tj_transpose(x, 0, 1), 0, TJ_DTYPE_NONE);
    out[k++] = tj_cumsum(i, 0, TJ_DTYPE_NONE);
    out[k++] = tj_index_select(x, 1, i);
    out[k++] = tj_index_add(x, 1, i, tj_index_select(x, 1, i), tj_v_float(0.5));
    *n_out = k;
    for (int j = 0; j < k; j++)
        if (!out[j]) return tj_last_status();
    return TJ_OK;
}

#define NOPS 8
static const char *const op_names[] = {"aten::elu", "aten::elu_backward", "aten::flip", "aten::cumsum",
                                       "aten::index_select", "aten::index_add"};
static const int op_counts[] = {1, 2, 1, 2, 2, 1};

static void inputs(tj_tensor **in)
{
    in[0] = test_tensor(TJ_FLOAT32, 2, (int64_t[]){2, 5}, xs);
    in[1] = i64(3, (int64_t[]){4, 0, 4});
}

Test(opsc, make_fx_records_the_aten_names)
{
    tj_tensor *in[2];
    inputs(in);
    tj_graph *g = tj_make_fx(all_ops, NULL, in, 2, NULL, TJ_TRACE_FAKE);
    cr_assert_not_null(g, "%s", tj_last_error());
    for (int k = 0; k < 6; k++) {
        const tj_op *op = tj_op_find(op_names[k]);
        cr_assert_not_null(op, "%s", op_names[k]);
        cr_expect_eq(tj_graph_count_op(g, op), op_counts[k], "%s", op_names[k]);
    }
    tj_graph_free(g);
}

/* The backward of index_select and cumsum, traced: PyTorch 1.13 records
 * zeros + index_add, and flip + cumsum + flip. */
static tj_status grads(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx;
    (void)n;
    tj_tensor *x = tj_clone(in[0]);
    tj_tensor_set_requires_grad(x, true);
    tj_tensor *y = tj_add(tj_index_select(x, 1, in[1]), tj_cumsum(tj_slice(x, 1, true, 0, true, 3, 1), 1,
                                                                   TJ_DTYPE_NONE));
    tj_status st = tj_backward(y, tj_mul(y, y));
    if (st != TJ_OK) return st;
    out[0] = tj_tensor_grad(x);
    *n_out = 1;
    return out[0] ? TJ_OK : tj_last_status();
}

Test(opsc, traced_backward_records_index_add_and_flipped_cumsum)
{
    tj_tensor *in[2];
    in[0] = test_random_f32(2, (int64_t[]){2, 5}, 7);
    in[1] = i64(3, (int64_t[]){4, 0, 4});
    tj_graph *g = tj_make_fx(grads, NULL, in, 2, NULL, TJ_TRACE_REAL);
    cr_assert_not_null(g, "%s", tj_last_error());
    cr_expect_eq(tj_graph_count_op(g, tj_op_find("aten::index_add")), 1);
    cr_expect_eq(tj_graph_count_op(g, tj_op_find("aten::zeros")), 1); /* index_add's */
    cr_expect_eq(tj_graph_count_op(g, tj_op_find("aten::slice_backward")), 1);
    cr_expect_eq(tj_graph_count_op(g, tj_op_find("aten::flip")), 2);
    cr_expect_eq(tj_graph_count_op(g, tj_op_find("aten::cumsum")), 2);
    tj_tensor *eager[1], *got[1];
    int n_out;
    cr_assert_eq(grads(NULL, in, 2, eager, &n_out), TJ_OK, "%s", tj_last_error());
    cr_assert_eq(tj_graph_run(g, in, 2, got), TJ_OK, "%s", tj_last_error());
    test_expect_identical(got[0], eager[0], "traced gradient");
    tj_graph_free(g);
}

Test(opsc, decomposed_graph_and_plan_give_the_kernels_bits)
{
    tj_tensor *in[2];
    inputs(in);
    tj_tensor *eager[NOPS];
    test_run_eager(all_ops, in, 2, eager, NOPS);
    tj_decomp_table *core = tj_core_decompositions();
    tj_graph *g = tj_make_fx(all_ops, NULL, in, 2, core, TJ_TRACE_FAKE);
    tj_decomp_table_free(core);
    cr_assert_not_null(g, "%s", tj_last_error());
    cr_expect(test_only_primitives(g));
    cr_expect_eq(tj_graph_count_op(g, tj_op_find("aten::index_select")), 0);
    tj_tensor *got[NOPS];
    cr_assert_eq(tj_graph_run(g, in, 2, got), TJ_OK, "%s", tj_last_error());
    for (int k = 0; k < NOPS; k++) test_expect_identical(got[k], eager[k], "decomposed");
    tj_graph_free(g);
    g = tj_make_fx(all_ops, NULL, in, 2, NULL, TJ_TRACE_FAKE);
    cr_assert_not_null(g, "%s", tj_last_error());
    test_replay(g, in, 2, got, NOPS);
    for (int k = 0; k < NOPS; k++) test_expect_identical(got[k], eager[k], "replayed");
    tj_graph_free(g);
}
