/* The window decompositions (decomps/conv.c, decomps/pool.c) against their
 * kernels on the cases the harness samples rarely (nan and ties in pooling
 * windows, padding, ceil mode, dilation, groups, transposed convolutions,
 * strides that leave rows unused), and the data-movement kernels they
 * lean on: the strided copy (kernels/copy.c) and the index checks and
 * scatter_add of kernels/index.c with broadcast indices. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/copy.h"
#include "kernels/index.h"
#include "runtime/internal.h"
#include "test_util.h"
#include "tjit/tjit.h"

TestSuite(window_decomps, .init = test_scope_open, .fini = test_scope_close);

/* Runs the registered decomposition of `name` eagerly. */
static void decompose(const char *name, const tj_value *args, tj_value *outs)
{
    const tj_op *op = tj_op_find(name);
    cr_assert(op && op->decomp, "%s has no decomposition", name);
    tj_status st = op->decomp(args, outs);
    cr_assert_eq(st, TJ_OK, "%s: %s", name, tj_last_error());
}

static tj_tensor *random_tensor(tj_dtype dt, int ndim, const int64_t *shape, unsigned *seed)
{
    tj_tensor *t = tj_tensor_empty(dt, ndim, shape);
    for (int64_t i = 0; i < tj_tensor_numel(t); i++) {
        double v = (double)(rand_r(seed) % 2001 - 1000) / 337.0;
        if (dt == TJ_FLOAT32) ((float *)tj_tensor_data(t))[i] = (float)v;
        else ((double *)tj_tensor_data(t))[i] = v;
    }
    return t;
}

/* Runs the kernel of `name` (the dispatcher, no mode active). */
static void kernel(const char *name, const tj_value *args, tj_value *outs)
{
    const tj_op *op = tj_op_find(name);
    cr_assert_not_null(op, "%s", name);
    tj_status st = tj_dispatch(op, args, tj_op_num_args(op), outs);
    cr_assert_eq(st, TJ_OK, "%s: %s", name, tj_last_error());
}

/* Largest |a - b| relative to max(1, |b|). */
static double max_rel_diff(const tj_tensor *a, const tj_tensor *b)
{
    cr_assert_eq(tj_tensor_numel(a), tj_tensor_numel(b));
    double worst = 0;
    for (int64_t i = 0; i < tj_tensor_numel(a); i++) {
        double x = tj_tensor_item_at(a, i), y = tj_tensor_item_at(b, i), m = fabs(y) > 1 ? fabs(y) : 1;
        if (fabs(x - y) / m > worst) worst = fabs(x - y) / m;
    }
    return worst;
}

/* ---- max_pool2d_with_indices ---- */

typedef struct pool_case {
    int64_t k[2], s[2], p[2], d[2];
    bool ceil;
} pool_case;

static void check_pool(tj_tensor *x, const pool_case *c)
{
    tj_value args[6] = {tj_v_tensor(x), tj_v_ints(c->k, 2), tj_v_ints(c->s, 2), tj_v_ints(c->p, 2),
                        tj_v_ints(c->d, 2), tj_v_bool(c->ceil)};
    tj_tensor *out = NULL, *idx = NULL;
    cr_assert_eq(tj_max_pool2d_with_indices(x, c->k, c->s, c->p, c->d, c->ceil, &out, &idx), TJ_OK, "%s",
                 tj_last_error());
    tj_value d[2];
    decompose("aten::max_pool2d_with_indices", args, d);
    test_expect_same(d[0].u.t, out, "values");
    test_expect_same(d[1].u.t, idx, "indices");
}

Test(window_decomps, max_pool_decomposition_takes_the_kernels_tap_for_nan_ties_and_infinities)
{
    /* two planes of 4 x 5: ties (0 and 2 repeated), -inf everywhere in a
     * corner, +inf, and nan taps (two in one window: the last one wins) */
    const float n = NAN, i = INFINITY;
    const float v[40] = {0, 0, 2, 2, -i, 0, 0, 2, n, -i, -i, -i, 1, 1, 5, -i, -i, n, n, 5,
                         3, 3, i, 1, 0, i, 3, 1, 1, 0, 7, 7, -1, -1, n, 7, 7, -1, -1, 2};
    tj_tensor *x = tj_tensor_from_data(TJ_FLOAT32, 4, (int64_t[]){1, 2, 4, 5}, v);
    const pool_case cases[] = {
        {{2, 2}, {2, 2}, {0, 0}, {1, 1}, false}, /* no padding: every tap inside */
        {{2, 2}, {2, 2}, {0, 0}, {1, 1}, true},  /* ceil mode: the last column window hangs out */
        {{3, 3}, {2, 2}, {1, 1}, {1, 1}, false}, /* padding: -inf taps must never win a tie */
        {{2, 3}, {1, 2}, {1, 1}, {2, 1}, true},  /* dilation and uneven sizes */
        {{1, 1}, {1, 1}, {0, 0}, {1, 1}, false}, /* one tap */
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) check_pool(x, &cases[k]);
    check_pool(tj_squeeze_dim(x, 0), &cases[2]); /* unbatched */
}

Test(window_decomps, max_pool_decomposition_of_an_all_minus_inf_padded_window_names_an_inside_tap)
{
    const float v[4] = {-INFINITY, -INFINITY, -INFINITY, -INFINITY};
    tj_tensor *x = tj_tensor_from_data(TJ_FLOAT32, 4, (int64_t[]){1, 1, 2, 2}, v);
    check_pool(x, &(pool_case){{2, 2}, {1, 1}, {1, 1}, {1, 1}, false});
}

/* ---- convolution ---- */

typedef struct conv_case {
    int n;                    /* spatial dims */
    int64_t N, C, OC, size[2], k[2];
    int64_t s[2], p[2], d[2], op[2], groups;
    bool transposed, bias;
} conv_case;

static void conv_args(const conv_case *c, tj_tensor *x, tj_tensor *w, tj_tensor *b, tj_value *args)
{
    args[0] = tj_v_tensor(x);
    args[1] = tj_v_tensor(w);
    args[2] = b ? tj_v_tensor(b) : tj_v_none();
    args[3] = tj_v_ints(c->s, c->n);
    args[4] = tj_v_ints(c->p, c->n);
    args[5] = tj_v_ints(c->d, c->n);
    args[6] = tj_v_bool(c->transposed);
    args[7] = tj_v_ints(c->op, c->n);
    args[8] = tj_v_int(c->groups);
}

/* x, weight and bias of the case in dtype dt. */
static void conv_operands(const conv_case *c, tj_dtype dt, unsigned seed, tj_tensor **x, tj_tensor **w, tj_tensor **b)
{
    int64_t xs[4] = {c->N, c->C}, ws[4];
    ws[0] = c->transposed ? c->C : c->OC;
    ws[1] = c->transposed ? c->OC / c->groups : c->C / c->groups;
    for (int i = 0; i < c->n; i++) xs[2 + i] = c->size[i], ws[2 + i] = c->k[i];
    *x = random_tensor(dt, 2 + c->n, xs, &seed);
    *w = random_tensor(dt, 2 + c->n, ws, &seed);
    *b = c->bias ? random_tensor(dt, 1, (int64_t[]){c->OC}, &seed) : NULL;
}

static const conv_case conv_cases[] = {
    {2, 2, 3, 4, {7, 6}, {3, 2}, {1, 1}, {1, 0}, {1, 1}, {0, 0}, 1, false, true},
    {2, 2, 4, 6, {9, 8}, {3, 3}, {2, 3}, {1, 2}, {2, 1}, {0, 0}, 2, false, false}, /* stride leaves rows unused */
    {1, 3, 4, 4, {11}, {3}, {2}, {2}, {2}, {0}, 4, false, true},                   /* 1-d, depthwise */
    {2, 2, 4, 6, {4, 5}, {3, 2}, {2, 1}, {1, 0}, {1, 2}, {1, 0}, 2, true, true},    /* transposed, output_padding */
    {1, 1, 2, 3, {5}, {4}, {3}, {2}, {1}, {2}, 1, true, false},                    /* output_padding > padding */
};

Test(window_decomps, convolution_decomposition_matches_the_kernel_in_float64)
{
    for (size_t k = 0; k < sizeof conv_cases / sizeof conv_cases[0]; k++) {
        const conv_case *c = &conv_cases[k];
        tj_tensor *x, *w, *b;
        conv_operands(c, TJ_FLOAT64, 7 + (unsigned)k, &x, &w, &b);
        tj_value args[9], d, y;
        conv_args(c, x, w, b, args);
        kernel("aten::convolution", args, &y);
        decompose("aten::convolution", args, &d);
        cr_expect_lt(max_rel_diff(d.u.t, y.u.t), 1e-12, "case %zu", k);
    }
}

/* float64 copies of the float tensors among args[0..n): as they are (`how`
 * 0), their absolute values (1) or ones (2). */
static void widen(tj_value *args, int n, int how)
{
    for (int i = 0; i < n; i++) {
        if (args[i].kind != TJ_V_TENSOR) continue;
        tj_tensor *t = tj_to_copy(args[i].u.t, TJ_FLOAT64);
        args[i].u.t = how == 0 ? t : how == 1 ? tj_abs(t) : tj_ones(tj_tensor_shape(t), tj_tensor_ndim(t), TJ_FLOAT64);
    }
}

/* Each float32 element of `got` is within Higham's bound for a sum of n
 * products in any order, gamma_n * sum |a*b| (n from `terms`, sum |a*b|
 * from `sum_abs`, both float64 kernel runs), plus one float32 ulp for
 * rounding, of `exact` (the float64 kernel). */
static void expect_within_summation_bound(const tj_tensor *got, const tj_tensor *exact, const tj_tensor *sum_abs,
                                          const tj_tensor *terms, const char *what, size_t k)
{
    cr_assert_eq(tj_tensor_dtype(got), TJ_FLOAT32);
    cr_assert_eq(tj_tensor_numel(got), tj_tensor_numel(exact));
    for (int64_t i = 0; i < tj_tensor_numel(got); i++) {
        double e = tj_tensor_item_at(exact, i), nu = tj_tensor_item_at(terms, i) * 0x1p-24;
        double bound = nu / (1 - nu) * tj_tensor_item_at(sum_abs, i) + 0x1p-23 * fabs(e);
        cr_expect_leq(fabs(tj_tensor_item_at(got, i) - e), bound, "%s case %zu element %lld: %.9g vs %.9g", what, k,
                      (long long)i, tj_tensor_item_at(got, i), e);
    }
}

Test(window_decomps, float32_convolution_decomposition_is_within_the_summation_bound)
{
    for (size_t k = 0; k < sizeof conv_cases / sizeof conv_cases[0]; k++) {
        const conv_case *c = &conv_cases[k];
        tj_tensor *x, *w, *b;
        conv_operands(c, TJ_FLOAT32, 11 + (unsigned)k, &x, &w, &b);
        tj_value args[9], ref[3], d;
        conv_args(c, x, w, b, args);
        decompose("aten::convolution", args, &d);
        for (int how = 0; how < 3; how++) {
            conv_args(c, x, w, b, args);
            widen(args, 3, how);
            kernel("aten::convolution", args, &ref[how]);
        }
        expect_within_summation_bound(d.u.t, ref[0].u.t, ref[1].u.t, ref[2].u.t, "output", k);
    }
}

/* Operands of convolution_backward for case c: x and w as conv_operands
 * makes them from `seed`, grad_output random (from go_seed) of the forward
 * result's shape. */
static void backward_operands(const conv_case *c, tj_dtype dt, unsigned seed, unsigned go_seed, tj_tensor **x,
                              tj_tensor **w, tj_tensor **go)
{
    tj_tensor *b;
    conv_operands(c, dt, seed, x, w, &b);
    tj_value fwd[9], y;
    conv_args(c, *x, *w, NULL, fwd);
    kernel("aten::convolution", fwd, &y);
    *go = random_tensor(dt, tj_tensor_ndim(y.u.t), tj_tensor_shape(y.u.t), &go_seed);
}

/* convolution_backward's 11 arguments for case c (bias_sizes holds c->OC and
 * outlives args). */
static void backward_args(const conv_case *c, tj_tensor *go, tj_tensor *x, tj_tensor *w, const int64_t *bias_sizes,
                          const bool *mask, tj_value *args)
{
    const tj_value a[11] = {tj_v_tensor(go), tj_v_tensor(x), tj_v_tensor(w), tj_v_ints(bias_sizes, 1),
                            tj_v_ints(c->s, c->n), tj_v_ints(c->p, c->n), tj_v_ints(c->d, c->n),
                            tj_v_bool(c->transposed), tj_v_ints(c->op, c->n), tj_v_int(c->groups), tj_v_bools(mask, 3)};
    memcpy(args, a, sizeof a);
}

Test(window_decomps, float32_convolution_backward_decomposition_is_within_the_summation_bound)
{
    const bool all[3] = {true, true, true};
    for (size_t k = 0; k < sizeof conv_cases / sizeof conv_cases[0]; k++) {
        const conv_case *c = &conv_cases[k];
        tj_tensor *x, *w, *go;
        backward_operands(c, TJ_FLOAT32, 23 + (unsigned)k, 5, &x, &w, &go);
        int64_t bias_sizes[1] = {c->OC};
        tj_value args[11];
        backward_args(c, go, x, w, bias_sizes, all, args);
        tj_value d[3], ref[3][3];
        decompose("aten::convolution_backward", args, d);
        for (int how = 0; how < 3; how++) {
            tj_value wide[11];
            memcpy(wide, args, sizeof wide);
            widen(wide, 3, how);
            kernel("aten::convolution_backward", wide, ref[how]);
        }
        static const char *const names[3] = {"grad_input", "grad_weight", "grad_bias"};
        for (int o = 0; o < 3; o++)
            expect_within_summation_bound(d[o].u.t, ref[0][o].u.t, ref[1][o].u.t, ref[2][o].u.t, names[o], k);
    }
}

Test(window_decomps, convolution_backward_decomposition_matches_the_kernel_for_every_mask)
{
    const bool masks[4][3] = {{true, true, true}, {true, false, false}, {false, true, false}, {false, false, true}};
    for (size_t k = 0; k < sizeof conv_cases / sizeof conv_cases[0]; k++) {
        const conv_case *c = &conv_cases[k];
        tj_tensor *x, *w, *go;
        backward_operands(c, TJ_FLOAT64, 19 + (unsigned)k, 3, &x, &w, &go);
        for (int m = 0; m < 4; m++) {
            int64_t bias_sizes[1] = {c->OC};
            tj_value args[11];
            backward_args(c, go, x, w, bias_sizes, masks[m], args);
            tj_value kg[3];
            kernel("aten::convolution_backward", args, kg);
            tj_value d[3];
            decompose("aten::convolution_backward", args, d);
            for (int o = 0; o < 3; o++) {
                cr_assert_eq(d[o].kind == TJ_V_TENSOR, masks[m][o], "case %zu mask %d output %d", k, m, o);
                if (masks[m][o]) cr_expect_lt(max_rel_diff(d[o].u.t, kg[o].u.t), 1e-12, "case %zu output %d", k, o);
            }
        }
    }
}

/* ---- the strided copy ---- */

static size_t esize(tj_dtype d) { return d == TJ_BOOL ? 1 : d == TJ_FLOAT32 ? 4 : 8; }

/* Random geometries (permuted, stepped and broadcast sources; permuted
 * destinations), dtypes and thread counts against an element-by-element
 * copy. */
Test(window_decomps, strided_copy_matches_an_element_loop_on_random_layouts)
{
    unsigned seed = 1;
    const tj_dtype dts[3] = {TJ_FLOAT32, TJ_FLOAT64, TJ_INT64};
    for (int it = 0; it < 3000; it++) {
        int nd = rand_r(&seed) % 6;
        int64_t shape[6], ss[6], ds[6], numel = 1;
        for (int d = 0; d < nd; d++) {
            shape[d] = rand_r(&seed) % 5 + (rand_r(&seed) % 4 == 0 ? rand_r(&seed) % 40 : 0);
            numel *= shape[d];
        }
        if (numel > 100000) continue;
        int perm[6];
        for (int d = 0; d < nd; d++) perm[d] = d;
        for (int d = nd - 1; d > 0; d--) {
            int j = rand_r(&seed) % (d + 1), t = perm[d];
            perm[d] = perm[j], perm[j] = t;
        }
        int64_t span = 1;
        for (int k = nd - 1; k >= 0; k--) {
            int d = perm[k], step = 1 + rand_r(&seed) % 3;
            ss[d] = rand_r(&seed) % 6 == 0 ? 0 : span * step;
            if (ss[d]) span *= shape[d] * step + 1;
        }
        int64_t dt = 1; /* destination: row-major, or with two dims swapped */
        int swap_a = nd ? rand_r(&seed) % nd : 0, swap_b = nd ? rand_r(&seed) % nd : 0;
        for (int k = nd - 1; k >= 0; k--) {
            int d = k == swap_a ? swap_b : k == swap_b ? swap_a : k;
            ds[d] = dt;
            dt *= shape[d] ? shape[d] : 1;
        }
        tj_dtype sd = dts[rand_r(&seed) % 3], dd = dts[rand_r(&seed) % 3];
        char *src = malloc((size_t)span * 8 + 8), *dst = calloc((size_t)numel + 1, 8), *ref = calloc((size_t)numel + 1, 8);
        for (int64_t i = 0; i <= span; i++) {
            double v = (rand_r(&seed) % 2000 - 1000) / 7.0;
            if (sd == TJ_FLOAT32) ((float *)src)[i] = (float)v;
            else if (sd == TJ_FLOAT64) ((double *)src)[i] = v;
            else ((int64_t *)src)[i] = (int64_t)v;
        }
        tj_k_copy_strided((tj_k_strided){dst, dd, ds}, (tj_k_strided){src, sd, ss}, nd, shape, 1 + it % 2);
        int64_t idx[6] = {0};
        for (int64_t f = 0; f < numel; f++) {
            int64_t so = 0, dof = 0;
            for (int d = 0; d < nd; d++) so += idx[d] * ss[d], dof += idx[d] * ds[d];
            tj_k_convert(ref + dof * (int64_t)esize(dd), dd, src + so * (int64_t)esize(sd), sd, 1);
            for (int d = nd - 1; d >= 0 && ++idx[d] == shape[d]; d--) idx[d] = 0;
        }
        cr_expect(memcmp(dst, ref, (size_t)numel * esize(dd)) == 0, "iteration %d: rank %d, %lld elements", it, nd,
                  (long long)numel);
        free(src);
        free(dst);
        free(ref);
    }
}

Test(window_decomps, strided_copy_of_a_broadcast_value_fills)
{
    const double one = 1.5, zero = 0;
    float out[1000];
    int64_t shape[2] = {10, 100}, bcast[2] = {0, 0}, rows[2] = {100, 1};
    tj_k_copy_strided((tj_k_strided){out, TJ_FLOAT32, rows}, (tj_k_strided){(void *)&one, TJ_FLOAT64, bcast}, 2, shape, 2);
    for (int i = 0; i < 1000; i++) cr_assert_eq(out[i], 1.5f);
    tj_k_copy_strided((tj_k_strided){out, TJ_FLOAT32, rows}, (tj_k_strided){(void *)&zero, TJ_FLOAT64, bcast}, 2, shape, 1);
    for (int i = 0; i < 1000; i++) cr_assert_eq(out[i], 0.0f);
}

/* ---- indices ---- */

Test(window_decomps, invalid_index_in_a_broadcast_index_is_found_at_its_first_position)
{
    /* [3, 4] with the rows broadcast: column 2 is out of range */
    int64_t row[4] = {0, 1, 9, 2}, shape[2] = {3, 4}, strides[2] = {0, 1}, value = 0;
    cr_expect_eq(tj_k_index_find_invalid((tj_k_index_array){row, strides}, 2, shape, 5, &value, 1), 2);
    cr_expect_eq(value, 9);
    /* [2, 3] with the columns broadcast: row 1 is out of range */
    int64_t col[2] = {4, -1}, cstrides[2] = {1, 0}, cshape[2] = {2, 3};
    cr_expect_eq(tj_k_index_find_invalid((tj_k_index_array){col, cstrides}, 2, cshape, 5, &value, 1), 3);
    cr_expect_eq(value, -1);
    cr_expect_eq(tj_k_index_find_invalid((tj_k_index_array){row, strides}, 2, shape, 10, &value, 1), -1);
}

Test(window_decomps, scatter_add_with_an_expanded_index_sums_in_order_and_reports_bad_values)
{
    const int64_t idx[4] = {0, 2, 2, 5};
    const float src[8] = {1, 2, 3, 4, 10, 20, 30, 40};
    tj_tensor *index = tj_expand(tj_tensor_from_data(TJ_INT64, 2, (int64_t[]){1, 4}, idx), (int64_t[]){2, 4}, 2);
    tj_tensor *zeros = tj_expand(tj_scalar_tensor(tj_v_float(0), TJ_FLOAT32), (int64_t[]){2, 6}, 2);
    tj_tensor *r = tj_scatter_add(zeros, 1, index, tj_tensor_from_data(TJ_FLOAT32, 2, (int64_t[]){2, 4}, src));
    cr_assert_not_null(r, "%s", tj_last_error());
    const float want[12] = {1, 0, 5, 0, 0, 4, 10, 0, 50, 0, 0, 40};
    for (int i = 0; i < 12; i++) cr_expect_eq(tj_tensor_item_at(r, i), want[i], "element %d", i);
    const int64_t bad[4] = {0, 6, 1, 1};
    index = tj_expand(tj_tensor_from_data(TJ_INT64, 2, (int64_t[]){1, 4}, bad), (int64_t[]){2, 4}, 2);
    cr_expect_null(tj_scatter_add(zeros, 1, index, tj_tensor_from_data(TJ_FLOAT32, 2, (int64_t[]){2, 4}, src)));
    cr_expect(strstr(tj_last_error(), "index 6 is out of bounds for dimension 1 with size 6") != NULL, "%s",
              tj_last_error());
}
