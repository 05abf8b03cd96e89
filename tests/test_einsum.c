/* aten::einsum (implicit): values against PyTorch 1.13 on a table of
 * equations, the calls make_fx records (bmm and mul where ATen 1.13 records
 * them, never einsum) and their replay, gradients, and ATen's errors.
 *
 * Operand number s (1, 2, 3 in order) holds ((k * 7 + 5 * s) % 13 - 6) / 4
 * at row-major element k (without the / 4 for int64), so every product and
 * sum below is exact in float32: results must match whatever the order of
 * summation. The reference values, dtypes, shapes and bmm / mul counts were
 * produced with PyTorch 1.13 on the same operands:
 *     r = torch.einsum(equation, *operands)   (values equal to the float64 einsum)
 *     g = make_fx(lambda *a: torch.einsum(equation, *a))(*operands)
 *     bmm, mul = the call nodes of g that are aten.bmm.default, aten.mul.Tensor */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h"

typedef struct operand_spec {
    int ndim;
    int64_t shape[TJ_MAX_DIMS];
    tj_dtype dtype;
} operand_spec;

typedef struct einsum_case {
    const char *name, *equation;
    int nbmm, nmul; /* calls in PyTorch's make_fx graph */
    int n;
    operand_spec in[3];
    tj_dtype out_dtype;
    int out_ndim;
    int64_t out_shape[4];
    const double *want;
} einsum_case;

static const einsum_case cases[] = {
    {"matrix product", "ij,jk->ik", 1, 0, 2, {{2, {2, 3}, TJ_FLOAT32}, {2, {3, 4}, TJ_FLOAT32}},
     TJ_FLOAT32, 2, {2, 4}, (const double[]){2.0, 0.125, -2.5625, 0.4375, 0.4375, 0.125, -1.0, -0.5}},
    {"implicit output", "ij,jk", 1, 0, 2, {{2, {2, 3}, TJ_FLOAT32}, {2, {3, 4}, TJ_FLOAT32}},
     TJ_FLOAT32, 2, {2, 4}, (const double[]){2.0, 0.125, -2.5625, 0.4375, 0.4375, 0.125, -1.0, -0.5}},
    {"batched attention scores", "bhqd,bhkd->bhqk", 1, 0, 2,
     {{4, {2, 2, 3, 4}, TJ_FLOAT32}, {4, {2, 2, 5, 4}, TJ_FLOAT32}},
     TJ_FLOAT32, 4, {2, 2, 3, 5}, (const double[]){-0.625, -0.75, -0.0625, -0.1875, 4.5625, 1.75, -0.625, -2.1875,
         -2.9375, -0.4375, 2.5, -0.5, -2.6875, -2.4375, -0.5625, 1.375, 2.625, 3.875, -3.8125, -2.5625, -1.8125,
         -2.8125, -3.8125, 4.125, 3.125, -2.5625, -2.5625, -2.5625, 3.125, 3.125, 4.125, -3.8125, -2.8125, -1.8125,
         0.0, -3.8125, 3.875, 2.625, 1.375, -0.6875, -2.8125, 2.625, 2.375, 2.125, -0.5625, -2.9375, -2.1875,
         -0.625, 1.75, 2.5, -0.1875, -0.0625, -0.75, -0.625, -0.5, 3.375, 2.875, -0.0625, -2.1875, -2.6875}},
    {"batched product", "bij,bjk->bik", 1, 0, 2, {{3, {2, 3, 4}, TJ_FLOAT32}, {3, {2, 4, 2}, TJ_FLOAT32}},
     TJ_FLOAT32, 3, {2, 3, 2}, (const double[]){3.875, -0.625, 0.9375, -0.0625, 2.0625, -0.3125, -2.4375, 1.9375,
         2.3125, -1.1875, 0.5625, 0.5625}},
    {"product with a transposed operand", "ij,kj->ik", 1, 0, 2, {{2, {3, 4}, TJ_FLOAT32}, {2, {2, 4}, TJ_FLOAT32}},
     TJ_FLOAT32, 2, {3, 2}, (const double[]){-0.625, -0.75, 1.75, -0.625, 2.5, -0.5}},
    {"two labels contracted out of order", "ijk,jil->kl", 1, 0, 2,
     {{3, {2, 3, 4}, TJ_FLOAT32}, {3, {3, 2, 5}, TJ_FLOAT32}},
     TJ_FLOAT32, 2, {4, 5}, (const double[]){-1.4375, -3.125, -1.5625, -3.25, 3.1875, 2.3125, 0.3125, 2.375, 0.375,
         1.625, -1.25, -3.5625, -1.0, -3.3125, 3.3125, -0.75, 1.5, -1.125, 1.125, -3.125}},
    {"outer product", "i,j->ij", 0, 1, 2, {{1, {3}, TJ_FLOAT32}, {1, {4}, TJ_FLOAT32}},
     TJ_FLOAT32, 2, {3, 4}, (const double[]){-0.25, 0.125, -0.3125, 0.0625, 1.5, -0.75, 1.875, -0.375, 0.0, -0.0,
         0.0, -0.0}},
    {"dot product", "i,i->", 1, 0, 2, {{1, {5}, TJ_FLOAT32}, {1, {5}, TJ_FLOAT32}},
     TJ_FLOAT32, 0, {0}, (const double[]){-0.25}},
    {"elementwise product", "i,i->i", 0, 1, 2, {{1, {5}, TJ_FLOAT32}, {1, {5}, TJ_FLOAT32}},
     TJ_FLOAT32, 1, {5}, (const double[]){-0.25, -0.75, 0.0, 0.375, 0.375}},
    {"trace", "ii", 0, 0, 1, {{2, {3, 3}, TJ_FLOAT32}},
     TJ_FLOAT32, 0, {0}, (const double[]){0.75}},
    {"diagonal", "ii->i", 0, 0, 1, {{2, {3, 3}, TJ_FLOAT32}},
     TJ_FLOAT32, 1, {3}, (const double[]){-0.25, 0.25, 0.75}},
    {"diagonal across a middle dim", "iji->j", 0, 0, 1, {{3, {2, 3, 2}, TJ_FLOAT32}},
     TJ_FLOAT32, 1, {3}, (const double[]){-1.25, -0.75, -0.25}},
    {"explicit trace", "ii->", 0, 0, 1, {{2, {3, 3}, TJ_FLOAT32}},
     TJ_FLOAT32, 0, {0}, (const double[]){0.75}},
    {"batched diagonal", "bii->bi", 0, 0, 1, {{3, {2, 3, 3}, TJ_FLOAT32}},
     TJ_FLOAT32, 2, {2, 3}, (const double[]){-0.25, 0.25, 0.75, -0.75, -0.25, 0.25}},
    {"diagonal moved in front of a kept dim", "iij->ij", 0, 0, 1, {{3, {3, 3, 2}, TJ_FLOAT32}},
     TJ_FLOAT32, 2, {3, 2}, (const double[]){-0.25, 1.5, 0.75, -0.75, -1.5, 0.25}},
    {"diagonal of the outer dims", "iji->ij", 0, 0, 1, {{3, {3, 2, 3}, TJ_FLOAT32}},
     TJ_FLOAT32, 2, {3, 2}, (const double[]){-0.25, -1.5, -1.0, 1.0, 1.5, 0.25}},
    {"label repeated four times", "iiii->i", 0, 0, 1, {{4, {2, 2, 2, 2}, TJ_FLOAT32}},
     TJ_FLOAT32, 1, {2}, (const double[]){-0.25, 0.0}},
    {"transpose", "ij->ji", 0, 0, 1, {{2, {2, 3}, TJ_FLOAT32}},
     TJ_FLOAT32, 2, {3, 2}, (const double[]){-0.25, -1.5, 1.5, 0.25, 0.0, -1.25}},
    {"sum of all", "ij->", 0, 0, 1, {{2, {2, 3}, TJ_FLOAT32}},
     TJ_FLOAT32, 0, {0}, (const double[]){-1.25}},
    {"column sums", "ij->j", 0, 0, 1, {{2, {3, 4}, TJ_FLOAT32}},
     TJ_FLOAT32, 1, {4}, (const double[]){0.75, -0.5, 1.5, -3.0}},
    {"ellipsis batched product with broadcast batch", "...ij,...jk->...ik", 1, 0, 2,
     {{4, {2, 1, 2, 3}, TJ_FLOAT32}, {3, {3, 3, 4}, TJ_FLOAT32}},
     TJ_FLOAT32, 4, {2, 3, 2, 4}, (const double[]){2.0, 0.125, -2.5625, 0.4375, 0.4375, 0.125, -1.0, -0.5, -0.1875,
         2.0, 0.125, -2.5625, 0.75, 0.4375, 0.125, -1.0, 1.6875, -0.1875, 2.0, 0.125, 1.0625, 0.75, 0.4375, 0.125,
         -1.9375, 0.125, 1.375, 0.1875, 1.375, 0.125, -1.9375, 0.0625, 0.0625, -1.9375, 0.125, 1.375, 0.1875,
         1.375, 0.125, -1.9375, -2.0, 0.0625, -1.9375, 0.125, 1.4375, 0.1875, 1.375, 0.125}},
    {"ellipsis diagonal", "...ii->...i", 0, 0, 1, {{3, {2, 3, 3}, TJ_FLOAT32}},
     TJ_FLOAT32, 2, {2, 3}, (const double[]){-0.25, 0.25, 0.75, -0.75, -0.25, 0.25}},
    {"ellipsis summed away", "i...->", 0, 0, 1, {{3, {3, 2, 2}, TJ_FLOAT32}},
     TJ_FLOAT32, 0, {0}, (const double[]){-1.25}},
    {"implicit output puts the ellipsis first", "j...i", 0, 0, 1, {{3, {2, 3, 4}, TJ_FLOAT32}},
     TJ_FLOAT32, 3, {3, 4, 2}, (const double[]){-0.25, 1.25, 1.5, -0.25, 0.0, 1.5, -1.5, 0.0, 0.25, -1.5, -1.25,
         0.25, 0.5, -1.25, -1.0, 0.5, 0.75, -1.0, -0.75, 0.75, 1.0, -0.75, -0.5, 1.0}},
    {"three operands", "ij,jk,kl->il", 2, 0, 3,
     {{2, {2, 3}, TJ_FLOAT32}, {2, {3, 4}, TJ_FLOAT32}, {2, {4, 2}, TJ_FLOAT32}},
     TJ_FLOAT32, 2, {2, 2}, (const double[]){-0.921875, -0.921875, 0.09375, -1.546875}},
    {"three operand outer product", "i,j,k->ijk", 0, 2, 3,
     {{1, {2}, TJ_FLOAT32}, {1, {3}, TJ_FLOAT32}, {1, {2}, TJ_FLOAT32}},
     TJ_FLOAT32, 3, {2, 3, 2}, (const double[]){0.25, -0.1875, -0.125, 0.09375, 0.3125, -0.234375, -1.5, 1.125,
         0.75, -0.5625, -1.875, 1.40625}},
    {"bilinear form", "bn,anm,bm->ba", 2, 0, 3,
     {{2, {2, 3}, TJ_FLOAT32}, {3, {4, 3, 2}, TJ_FLOAT32}, {2, {2, 2}, TJ_FLOAT32}},
     TJ_FLOAT32, 2, {2, 4}, (const double[]){-1.8125, 2.015625, 1.78125, -1.5, 2.984375, -3.578125, -4.046875,
         3.609375}},
    {"label shared by three operands", "ab,ab,ab->", 1, 1, 3,
     {{2, {2, 3}, TJ_FLOAT32}, {2, {2, 3}, TJ_FLOAT32}, {2, {2, 3}, TJ_FLOAT32}},
     TJ_FLOAT32, 0, {0}, (const double[]){-0.125}},
    {"size one dims broadcast", "ij,ij->ij", 0, 1, 2, {{2, {2, 1}, TJ_FLOAT32}, {2, {1, 3}, TJ_FLOAT32}},
     TJ_FLOAT32, 2, {2, 3}, (const double[]){-0.25, 0.125, -0.3125, 1.5, -0.75, 1.875}},
    {"size one contracted label", "ij,jk->ik", 0, 1, 2, {{2, {2, 1}, TJ_FLOAT32}, {2, {3, 4}, TJ_FLOAT32}},
     TJ_FLOAT32, 2, {2, 4}, (const double[]){-0.3125, -0.0, 0.3125, -0.1875, 1.875, 0.0, -1.875, 1.125}},
    {"upper case labels", "Ab,bC->AC", 1, 0, 2, {{2, {2, 3}, TJ_FLOAT32}, {2, {3, 2}, TJ_FLOAT32}},
     TJ_FLOAT32, 2, {2, 2}, (const double[]){1.625, -0.25, -3.0625, 0.6875}},
    {"implicit order puts upper case first", "aB", 0, 0, 1, {{2, {2, 3}, TJ_FLOAT32}},
     TJ_FLOAT32, 2, {3, 2}, (const double[]){-0.25, -1.5, 1.5, 0.25, 0.0, -1.25}},
    {"spaces", " i j , j k -> i k ", 1, 0, 2, {{2, {2, 3}, TJ_FLOAT32}, {2, {3, 4}, TJ_FLOAT32}},
     TJ_FLOAT32, 2, {2, 4}, (const double[]){2.0, 0.125, -2.5625, 0.4375, 0.4375, 0.125, -1.0, -0.5}},
    {"scalar operand", "i,->i", 0, 1, 2, {{1, {3}, TJ_FLOAT32}, {0, {0}, TJ_FLOAT32}},
     TJ_FLOAT32, 1, {3}, (const double[]){-0.25, 1.5, 0.0}},
    {"int64 product stays int64", "ij,jk->ik", 1, 0, 2, {{2, {2, 3}, TJ_INT64}, {2, {3, 2}, TJ_INT64}},
     TJ_INT64, 2, {2, 2}, (const double[]){26, -4, -49, 11}},
    {"mixed dtypes promote in a mul", "i,j->ij", 0, 1, 2, {{1, {2}, TJ_FLOAT32}, {1, {3}, TJ_FLOAT64}},
     TJ_FLOAT64, 2, {2, 3}, (const double[]){-0.25, 0.125, -0.3125, 1.5, -0.75, 1.875}},
    {"int64 sum of one operand", "ij->i", 0, 0, 1, {{2, {2, 3}, TJ_INT64}},
     TJ_INT64, 1, {2}, (const double[]){5, -10}},
    {"empty contraction gives zeros", "ij,jk->ik", 1, 0, 2, {{2, {2, 0}, TJ_FLOAT32}, {2, {0, 3}, TJ_FLOAT32}},
     TJ_FLOAT32, 2, {2, 3}, (const double[]){0.0, 0.0, 0.0, 0.0, 0.0, 0.0}},
};
#define NCASES ((int)(sizeof cases / sizeof cases[0]))

/* Operand number `seed` of `spec` (see the top of the file). */
static tj_tensor *operand(const operand_spec *spec, int seed)
{
    double v[128];
    int64_t n = 1;
    for (int d = 0; d < spec->ndim; d++) n *= spec->shape[d];
    cr_assert_leq(n, 128);
    for (int64_t k = 0; k < n; k++) v[k] = (double)((k * 7 + 5 * seed) % 13 - 6) / (spec->dtype == TJ_INT64 ? 1 : 4);
    tj_tensor *t = test_f64(spec->ndim, spec->shape, v);
    return spec->dtype == TJ_FLOAT64 ? t : tj_to_copy(t, (int)spec->dtype);
}

/* t's values laid out in the reverse order of dims: strided, not contiguous. */
static tj_tensor *reversed_layout(tj_tensor *t)
{
    int nd = tj_tensor_ndim(t);
    int64_t rev[TJ_MAX_DIMS];
    for (int d = 0; d < nd; d++) rev[d] = nd - 1 - d;
    return tj_permute(tj_contiguous(tj_permute(t, rev, nd)), rev, nd);
}

static void expect_case(const einsum_case *c, const tj_tensor *r, const char *layout)
{
    cr_assert_not_null(r, "%s (%s): %s", c->name, layout, tj_last_error());
    cr_expect_eq(tj_tensor_dtype(r), c->out_dtype, "%s: dtype %s", c->name, tj_dtype_name(tj_tensor_dtype(r)));
    cr_assert_eq(tj_tensor_ndim(r), c->out_ndim, "%s: rank %d", c->name, tj_tensor_ndim(r));
    int64_t n = 1;
    for (int d = 0; d < c->out_ndim; d++) {
        cr_expect_eq(tj_tensor_shape(r)[d], c->out_shape[d], "%s: size of dim %d", c->name, d);
        n *= c->out_shape[d];
    }
    cr_assert_eq(tj_tensor_numel(r), n, "%s", c->name);
    for (int64_t k = 0; k < n; k++)
        cr_expect_eq(tj_tensor_item_at(r, k), c->want[k], "%s (%s): element %lld is %g, PyTorch %g", c->name, layout,
                     (long long)k, tj_tensor_item_at(r, k), c->want[k]);
}

TestSuite(einsum, .init = test_scope_open, .fini = test_scope_close);

Test(einsum, matches_pytorch_on_every_equation_with_contiguous_and_strided_operands)
{
    for (int i = 0; i < NCASES; i++) {
        const einsum_case *c = &cases[i];
        tj_tensor *in[3], *strided[3];
        for (int k = 0; k < c->n; k++) {
            in[k] = operand(&c->in[k], k + 1);
            strided[k] = reversed_layout(in[k]);
        }
        expect_case(c, tj_einsum(c->equation, in, c->n, NULL, 0), "contiguous");
        expect_case(c, tj_einsum(c->equation, strided, c->n, NULL, 0), "strided");
    }
}

Test(einsum, permutation_and_diagonal_are_views_of_the_input_as_in_pytorch)
{
    const operand_spec m = {2, {3, 3}, TJ_FLOAT32};
    tj_tensor *x = operand(&m, 1);
    tj_tensor *t = tj_einsum("ij->ji", &x, 1, NULL, 0), *d = tj_einsum("ii->i", &x, 1, NULL, 0);
    cr_assert(t && d, "%s", tj_last_error());
    cr_expect(tj_tensor_shares_storage(t, x));
    cr_expect(tj_tensor_shares_storage(d, x));
    cr_expect_eq(tj_tensor_strides(t)[0], 1);
    cr_expect_eq(tj_tensor_strides(d)[0], 4, "the diagonal steps over a row and one element");
    tj_tensor *xt = tj_t(x), *dt = tj_einsum("ii->i", &xt, 1, NULL, 0);
    cr_assert_not_null(dt, "%s", tj_last_error());
    cr_expect(tj_tensor_shares_storage(dt, x), "also for a transposed matrix");
    for (int i = 0; i < 3; i++) cr_expect_eq(tj_tensor_item_at(dt, i), tj_tensor_item_at(d, i));
}

/* ---- tracing and replay ---- */

static tj_status trace_case(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    const einsum_case *c = ctx;
    out[0] = tj_einsum(c->equation, in, n, NULL, 0);
    *n_out = 1;
    return out[0] ? TJ_OK : tj_last_status();
}

Test(einsum, traces_into_pytorchs_bmm_and_mul_calls_and_replays_to_eager_values)
{
    const tj_op *bmm = tj_op_find("aten::bmm"), *mul = tj_op_find("aten::mul.Tensor");
    for (int i = 0; i < NCASES; i++) {
        const einsum_case *c = &cases[i];
        tj_tensor *in[3], *other[3], *out[1];
        for (int k = 0; k < c->n; k++) {
            in[k] = operand(&c->in[k], k + 1);
            other[k] = operand(&c->in[k], k + 4);
        }
        tj_graph *g = tj_make_fx(trace_case, (void *)c, in, c->n, NULL, TJ_TRACE_REAL);
        cr_assert_not_null(g, "%s: %s", c->name, tj_last_error());
        cr_expect_eq(tj_graph_count_op(g, tj_op_find("aten::einsum")), 0, "%s", c->name);
        cr_expect_eq(tj_graph_count_op(g, bmm), c->nbmm, "%s: %d bmm", c->name, tj_graph_count_op(g, bmm));
        cr_expect_eq(tj_graph_count_op(g, mul), c->nmul, "%s: %d mul", c->name, tj_graph_count_op(g, mul));
        tj_plan *plan = tj_compile(g, NULL);
        tj_graph_free(g);
        cr_assert_not_null(plan, "%s: %s", c->name, tj_last_error());
        tj_status st = tj_plan_run(plan, other, c->n, out);
        tj_plan_free(plan);
        cr_assert_eq(st, TJ_OK, "%s: %s", c->name, tj_last_error());
        tj_tensor *eager = tj_einsum(c->equation, other, c->n, NULL, 0);
        cr_assert_not_null(eager, "%s", tj_last_error());
        cr_assert_eq(tj_tensor_numel(out[0]), tj_tensor_numel(eager), "%s", c->name);
        cr_expect_eq(tj_tensor_dtype(out[0]), tj_tensor_dtype(eager), "%s", c->name);
        for (int64_t k = 0; k < tj_tensor_numel(eager); k++)
            cr_expect_eq(tj_tensor_item_at(out[0], k), tj_tensor_item_at(eager, k), "%s: element %lld", c->name,
                         (long long)k);
    }
}

static tj_status trace_attention(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx;
    out[0] = tj_einsum("bhqd,bhkd->bhqk", in, n, NULL, 0);
    *n_out = 1;
    return out[0] ? TJ_OK : tj_last_status();
}

/* PyTorch 1.13's make_fx graph of the same call, _reshape_alias spelled view. */
Test(einsum, records_attention_scores_as_pytorch_does)
{
    tj_tensor *in[2] = {tj_tensor_fake(TJ_FLOAT32, 4, (int64_t[]){2, 3, 4, 5}),
                        tj_tensor_fake(TJ_FLOAT32, 4, (int64_t[]){2, 3, 6, 5})};
    tj_graph *g = tj_make_fx(trace_attention, NULL, in, 2, NULL, TJ_TRACE_FAKE);
    cr_assert_not_null(g, "%s", tj_last_error());
    char *text = tj_graph_to_string(g);
    cr_expect_str_eq(text, "graph(%arg0_1 : f32[2, 3, 4, 5], %arg1_1 : f32[2, 3, 6, 5]):\n"
                           "    %unsqueeze = aten.unsqueeze.default(%arg0_1, 4)\n"
                           "    %permute = aten.permute.default(%unsqueeze, [0, 1, 2, 4, 3])\n"
                           "    %unsqueeze_1 = aten.unsqueeze.default(%arg1_1, 4)\n"
                           "    %permute_1 = aten.permute.default(%unsqueeze_1, [0, 1, 4, 2, 3])\n"
                           "    %permute_2 = aten.permute.default(%permute, [0, 1, 2, 4, 3])\n"
                           "    %view = aten.view.default(%permute_2, [6, 4, 5])\n"
                           "    %permute_3 = aten.permute.default(%permute_1, [0, 1, 4, 3, 2])\n"
                           "    %view_1 = aten.view.default(%permute_3, [6, 5, 6])\n"
                           "    %bmm = aten.bmm.default(%view, %view_1)\n"
                           "    %view_2 = aten.view.default(%bmm, [2, 3, 4, 1, 6])\n"
                           "    %permute_4 = aten.permute.default(%view_2, [0, 1, 2, 4, 3])\n"
                           "    %view_3 = aten.view.default(%permute_4, [2, 3, 4, 6])\n"
                           "    return (%view_3,)\n");
    free(text);
    tj_graph_free(g);
}

/* A repeated label's diagonal: x.diagonal(0, d1, d2).movedim(-1, d1) as
 * ATen 1.13 takes it, recorded as diagonal and the permute of movedim,
 * then its gradient through diagonal_backward. PyTorch 1.13's make_fx graph
 * of torch.autograd.grad(torch.einsum("iij->ij", x), x, go) with x a leaf
 * that requires grad; torch also records aten.is_same_size(permute_1, go),
 * the unused check of go's shape that torch.autograd.grad makes, which tjit
 * does not, and tjit's x is the detached input. */
static tj_status trace_diagonal_grad(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx, (void)n;
    tj_tensor *x = tj_tensor_detach(in[0]);
    if (!x || tj_tensor_set_requires_grad(x, true) != TJ_OK) return tj_last_status();
    tj_tensor *y = tj_einsum("iij->ij", &x, 1, NULL, 0);
    *n_out = 1;
    return y ? tj_autograd_grad(&y, 1, &in[1], &x, 1, out) : tj_last_status();
}

Test(einsum, records_a_repeated_label_as_diagonal_and_permute_as_pytorch_does)
{
    tj_tensor *in[2] = {tj_tensor_fake(TJ_FLOAT32, 3, (int64_t[]){3, 3, 2}),
                        tj_tensor_fake(TJ_FLOAT32, 2, (int64_t[]){3, 2})};
    tj_graph *g = tj_make_fx(trace_diagonal_grad, NULL, in, 2, NULL, TJ_TRACE_FAKE);
    cr_assert_not_null(g, "%s", tj_last_error());
    char *text = tj_graph_to_string(g);
    cr_expect_str_eq(text, "graph(%arg0_1 : f32[3, 3, 2], %arg1_1 : f32[3, 2]):\n"
                           "    %detach = aten.detach.default(%arg0_1)\n"
                           "    %diagonal = aten.diagonal.default(%detach)\n"
                           "    %permute = aten.permute.default(%diagonal, [1, 0])\n"
                           "    %permute_1 = aten.permute.default(%permute, [0, 1])\n"
                           "    %permute_2 = aten.permute.default(%arg1_1, [0, 1])\n"
                           "    %permute_3 = aten.permute.default(%permute_2, [1, 0])\n"
                           "    %diagonal_backward = aten.diagonal_backward.default(%permute_3, [3, 3, 2], 0, 0, 1)\n"
                           "    return (%diagonal_backward,)\n");
    free(text);
    tj_graph_free(g);
}

/* Every repeated label takes its own diagonal: PyTorch 1.13's make_fx graph
 * of torch.einsum("jiji->ij", x). */
Test(einsum, records_two_repeated_labels_as_two_diagonals)
{
    const einsum_case c = {.equation = "jiji->ij", .n = 1};
    tj_tensor *x = tj_tensor_fake(TJ_FLOAT32, 4, (int64_t[]){2, 3, 2, 3});
    tj_graph *g = tj_make_fx(trace_case, (void *)&c, &x, 1, NULL, TJ_TRACE_FAKE);
    cr_assert_not_null(g, "%s", tj_last_error());
    char *text = tj_graph_to_string(g);
    cr_expect_str_eq(text, "graph(%arg0_1 : f32[2, 3, 2, 3]):\n"
                           "    %diagonal = aten.diagonal.default(%arg0_1, 0, 0, 2)\n"
                           "    %permute = aten.permute.default(%diagonal, [2, 0, 1])\n"
                           "    %diagonal_1 = aten.diagonal.default(%permute, 0, 1, 2)\n"
                           "    %permute_1 = aten.permute.default(%diagonal_1, [0, 1])\n"
                           "    %permute_2 = aten.permute.default(%permute_1, [1, 0])\n"
                           "    return (%permute_2,)\n");
    free(text);
    tj_graph_free(g);
}

/* The contraction path of "ij,jk,kl->il": [1, 2, 0, 1] multiplies jk and kl
 * first (a [3, 2] product) and puts that product at the back of the list,
 * so ij is the left operand of the second. The graph is PyTorch 1.13's
 * (make_fx of torch.ops.aten.einsum with path=[1, 2, 0, 1]), _reshape_alias
 * spelled view. */
static tj_status trace_path(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    out[0] = tj_einsum("ij,jk,kl->il", in, n, ctx, 4);
    *n_out = 1;
    return out[0] ? TJ_OK : tj_last_status();
}

Test(einsum, path_orders_the_contractions_as_opt_einsum_lists_them)
{
    const einsum_case *c = NULL;
    for (int i = 0; i < NCASES; i++)
        if (strcmp(cases[i].name, "three operands") == 0) c = &cases[i];
    cr_assert_not_null(c);
    tj_tensor *in[3] = {operand(&c->in[0], 1), operand(&c->in[1], 2), operand(&c->in[2], 3)};
    const int64_t path[4] = {1, 2, 0, 1}, swapped[4] = {2, 1, 1, 0};
    expect_case(c, tj_einsum(c->equation, in, 3, path, 4), "path");
    expect_case(c, tj_einsum(c->equation, in, 3, swapped, 4), "path with pairs reversed");
    tj_graph *g = tj_make_fx(trace_path, (void *)path, in, 3, NULL, TJ_TRACE_FAKE);
    cr_assert_not_null(g, "%s", tj_last_error());
    char *text = tj_graph_to_string(g);
    cr_expect_str_eq(text, "graph(%arg0_1 : f32[2, 3], %arg1_1 : f32[3, 4], %arg2_1 : f32[4, 2]):\n"
                           "    %unsqueeze = aten.unsqueeze.default(%arg0_1, 2)\n"
                           "    %unsqueeze_1 = aten.unsqueeze.default(%unsqueeze, 3)\n"
                           "    %permute = aten.permute.default(%unsqueeze_1, [0, 2, 1, 3])\n"
                           "    %unsqueeze_2 = aten.unsqueeze.default(%arg1_1, 2)\n"
                           "    %unsqueeze_3 = aten.unsqueeze.default(%unsqueeze_2, 3)\n"
                           "    %permute_1 = aten.permute.default(%unsqueeze_3, [2, 3, 0, 1])\n"
                           "    %unsqueeze_4 = aten.unsqueeze.default(%arg2_1, 2)\n"
                           "    %unsqueeze_5 = aten.unsqueeze.default(%unsqueeze_4, 3)\n"
                           "    %permute_2 = aten.permute.default(%unsqueeze_5, [2, 1, 3, 0])\n"
                           "    %permute_3 = aten.permute.default(%permute_1, [2, 3, 0, 1])\n"
                           "    %view = aten.view.default(%permute_3, [1, 3, 4])\n"
                           "    %permute_4 = aten.permute.default(%permute_2, [3, 0, 1, 2])\n"
                           "    %view_1 = aten.view.default(%permute_4, [1, 4, 2])\n"
                           "    %bmm = aten.bmm.default(%view, %view_1)\n"
                           "    %view_2 = aten.view.default(%bmm, [3, 1, 1, 2])\n"
                           "    %permute_5 = aten.permute.default(%view_2, [2, 3, 0, 1])\n"
                           "    %permute_6 = aten.permute.default(%permute, [0, 2, 1, 3])\n"
                           "    %view_3 = aten.view.default(%permute_6, [1, 2, 3])\n"
                           "    %permute_7 = aten.permute.default(%permute_5, [2, 1, 3, 0])\n"
                           "    %view_4 = aten.view.default(%permute_7, [1, 3, 2])\n"
                           "    %bmm_1 = aten.bmm.default(%view_3, %view_4)\n"
                           "    %view_5 = aten.view.default(%bmm_1, [2, 1, 2, 1])\n"
                           "    %permute_8 = aten.permute.default(%view_5, [0, 2, 1, 3])\n"
                           "    %view_6 = aten.view.default(%permute_8, [2, 2])\n"
                           "    return (%view_6,)\n");
    free(text);
    tj_graph_free(g);
}

/* ---- gradients (PyTorch 1.13: out.backward(g) / s.backward() on the same
 * operands, .grad printed) ---- */

Test(einsum, gradients_of_a_diagonal_and_a_contraction_match_pytorch)
{
    const operand_spec sx = {3, {2, 3, 3}, TJ_FLOAT32}, sy = {2, {3, 4}, TJ_FLOAT32}, sg = {2, {2, 4}, TJ_FLOAT32};
    tj_tensor *x = operand(&sx, 1), *y = operand(&sy, 2), *g = operand(&sg, 3);
    tj_tensor_set_requires_grad(x, true);
    tj_tensor_set_requires_grad(y, true);
    tj_tensor *in[2] = {x, y};
    tj_tensor *out = tj_einsum("bii,ij->bj", in, 2, NULL, 0);
    test_expect_close(out, (const double[]){-0.8125, 0.5, -1.4375, 0.6875, -1.4375, 0.5, -0.8125, 0.3125}, 8, 0, 0);
    cr_assert_eq(tj_backward(out, g), TJ_OK, "%s", tj_last_error());
    test_expect_close(tj_tensor_grad(x),
                      (const double[]){-2.5625, 0, 0, 0, -0.125, 0, 0, 0, 3.125, -1.8125, 0, 0, 0, 0, 0, 0, 0, 2.625},
                      18, 0, 0);
    test_expect_close(tj_tensor_grad(y),
                      (const double[]){0.625, -1.125, 0.375, -1.375, -0.125, -0.125, -0.125, -0.125, -0.875, 0.875,
                                       -0.625, 1.125},
                      12, 0, 0);
}

/* out.backward(go) with go operand 3 of out's shape: the gradient is go on
 * x's diagonal, zero elsewhere */
Test(einsum, gradients_of_repeated_labels_match_pytorch)
{
    const struct {
        const char *name;
        const double *want;
    } grads[] = {
        {"explicit trace", (const double[]){-1, 0, 0, 0, -1, 0, 0, 0, -1}},
        {"batched diagonal", (const double[]){-1, 0, 0, 0, 0.75, 0, 0, 0, -0.75, 1, 0, 0, 0, -0.5, 0, 0, 0, 1.25}},
        {"diagonal moved in front of a kept dim",
         (const double[]){-1, 0.75, 0, 0, 0, 0, 0, 0, -0.75, 1, 0, 0, 0, 0, 0, 0, -0.5, 1.25}},
        {"diagonal of the outer dims",
         (const double[]){-1, 0, 0, 0.75, 0, 0, 0, -0.75, 0, 0, 1, 0, 0, 0, -0.5, 0, 0, 1.25}},
        {"label repeated four times", (const double[]){-1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0.75}},
    };
    for (size_t e = 0; e < sizeof grads / sizeof *grads; e++) {
        const einsum_case *c = NULL;
        for (int i = 0; i < NCASES; i++)
            if (strcmp(cases[i].name, grads[e].name) == 0) c = &cases[i];
        cr_assert_not_null(c, "%s", grads[e].name);
        const operand_spec so = {c->out_ndim, {c->out_shape[0], c->out_shape[1]}, TJ_FLOAT32};
        tj_tensor *x = operand(&c->in[0], 1), *go = operand(&so, 3);
        tj_tensor_set_requires_grad(x, true);
        tj_tensor *out = tj_einsum(c->equation, &x, 1, NULL, 0);
        cr_assert_not_null(out, "%s: %s", c->name, tj_last_error());
        cr_assert_eq(tj_backward(out, go), TJ_OK, "%s: %s", c->name, tj_last_error());
        test_expect_close(tj_tensor_grad(x), grads[e].want, tj_tensor_numel(x), 0, 0);
    }
}

Test(einsum, gradients_of_three_operands_with_a_broadcast_label_match_pytorch)
{
    const operand_spec sa = {2, {2, 1}, TJ_FLOAT32}, sm = {2, {3, 4}, TJ_FLOAT32}, sb = {1, {4}, TJ_FLOAT32};
    tj_tensor *in[3] = {operand(&sa, 1), operand(&sm, 2), operand(&sb, 3)};
    for (int k = 0; k < 3; k++) tj_tensor_set_requires_grad(in[k], true);
    tj_tensor *s = tj_einsum("ij,jk,k->", in, 3, NULL, 0), *grads[3];
    test_expect_close(s, (const double[]){0.546875}, 1, 0, 0);
    cr_assert_eq(tj_autograd_grad(&s, 1, NULL, in, 3, grads), TJ_OK, "%s", tj_last_error());
    test_expect_close(grads[0], (const double[]){0.4375, 0.4375}, 2, 0, 0);
    test_expect_close(grads[1],
                      (const double[]){-1.25, 0.9375, -0.9375, 1.25, -1.25, 0.9375, -0.9375, 1.25, -1.25, 0.9375,
                                       -0.9375, 1.25},
                      12, 0, 0);
    test_expect_close(grads[2], (const double[]){1.5625, 0, -1.5625, 0.9375}, 4, 0, 0);
}

/* ---- errors: ATen's messages (PyTorch 1.13's "einsum(): ..." after the
 * operator's name) ---- */

typedef struct error_case {
    const char *equation;
    int n;
    operand_spec in[3];
    const int64_t *path;
    int npath;
    tj_status status;
    const char *message;
} error_case;

#define F32(...) {(int)(sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t)), {__VA_ARGS__}, TJ_FLOAT32}

static const error_case errors[] = {
    {"ij,jk", 1, {F32(2, 3)}, NULL, 0, TJ_ERR_INVALID_ARGUMENT,
     "aten::einsum: fewer operands were provided than specified in the equation"},
    {"ij", 2, {F32(2, 3), F32(3, 3)}, NULL, 0, TJ_ERR_INVALID_ARGUMENT,
     "aten::einsum: more operands were provided than specified in the equation"},
    {"ijk", 1, {F32(2, 3)}, NULL, 0, TJ_ERR_SHAPE,
     "aten::einsum: the number of subscripts in the equation (3) does not match the number of dimensions (2) for "
     "operand 0 and no ellipsis was given"},
    {"ij", 1, {F32(2, 3, 4)}, NULL, 0, TJ_ERR_SHAPE,
     "aten::einsum: the number of subscripts in the equation (2) does not match the number of dimensions (3) for "
     "operand 0 and no ellipsis was given"},
    {"i...jk", 1, {F32(2)}, NULL, 0, TJ_ERR_SHAPE,
     "aten::einsum: the number of subscripts in the equation (3) is more than the number of dimensions (1) for "
     "operand 0"},
    {"i1", 1, {F32(2, 2)}, NULL, 0, TJ_ERR_PARSE,
     "aten::einsum: invalid subscript given at index 1 in the equation string, subscripts must be in [a-zA-Z]"},
    {"ij->i1", 1, {F32(2, 2)}, NULL, 0, TJ_ERR_PARSE,
     "aten::einsum: invalid subscript given at index 5 in the equation string, subscripts must be in [a-zA-Z]"},
    {"ij->i->j", 1, {F32(2, 3)}, NULL, 0, TJ_ERR_PARSE,
     "aten::einsum: invalid subscript given at index 5 in the equation string, subscripts must be in [a-zA-Z]"},
    {"ij->ii", 1, {F32(2, 2)}, NULL, 0, TJ_ERR_INVALID_ARGUMENT,
     "aten::einsum: output subscript i appears more than once in the output"},
    {"ij->k", 1, {F32(2, 2)}, NULL, 0, TJ_ERR_INVALID_ARGUMENT,
     "aten::einsum: output subscript k does not appear in the equation for any input operand"},
    {"ij,jk", 2, {F32(2, 3), F32(4, 5)}, NULL, 0, TJ_ERR_SHAPE,
     "aten::einsum: subscript j has size 4 for operand 1 which does not broadcast with previously seen size 3"},
    {"ii", 1, {F32(2, 3)}, NULL, 0, TJ_ERR_SHAPE,
     "aten::einsum: subscript i is repeated for operand 0 but the sizes don't match, 3 != 2"},
    {"i.j", 1, {F32(2, 3)}, NULL, 0, TJ_ERR_PARSE,
     "aten::einsum: found '.' for operand 0 that is not part of any ellipsis"},
    {"i..", 1, {F32(2)}, NULL, 0, TJ_ERR_PARSE,
     "aten::einsum: found '.' for operand 0 that is not part of any ellipsis"},
    {"i......", 1, {F32(2, 3)}, NULL, 0, TJ_ERR_PARSE,
     "aten::einsum: found '.' for operand 0 for which an ellipsis was already found"},
    {"...->....", 1, {F32(2, 3)}, NULL, 0, TJ_ERR_PARSE,
     "aten::einsum: found '.' for output but an ellipsis (...) was already found"},
    {"i,j->i.", 2, {F32(2), F32(2)}, NULL, 0, TJ_ERR_PARSE,
     "aten::einsum: found '.' for output that is not part of any ellipsis (...)"},
    {"...,...", 2, {F32(2, 3), F32(4, 3)}, NULL, 0, TJ_ERR_SHAPE,
     "aten::einsum: dimension 0 covered by ellipsis in operand 1 has size 4 which does not broadcast with previously "
     "seen ellipsis with size 2 for the respective dimension"},
    {"ij,jk,kl", 3, {F32(2, 3), F32(3, 4), F32(4, 5)}, (const int64_t[]){0}, 1, TJ_ERR_INVALID_ARGUMENT,
     "aten::einsum: expected contraction path given in path parameter to have size 4 but got 1"},
    {"i", 1, {F32(2)}, (const int64_t[]){0}, 0, TJ_ERR_INVALID_ARGUMENT,
     "aten::einsum: expected contraction path given in path parameter to have size 1 but got 0"},
    {"ij,jk", 2, {F32(2, 3), F32(3, 4)}, (const int64_t[]){0, 0}, 2, TJ_ERR_INVALID_ARGUMENT,
     "aten::einsum: invalid contraction (0, 0) cannot contract an operand with itself"},
    {"ij,jk", 2, {F32(2, 3), F32(3, 4)}, (const int64_t[]){0, 2}, 2, TJ_ERR_INDEX,
     "aten::einsum: invalid contraction (0, 2) operand index is out of bounds"},
    {"ij,jk", 2, {F32(2, 3), F32(3, 4)}, (const int64_t[]){0, -1}, 2, TJ_ERR_INDEX,
     "aten::einsum: invalid contraction (-1, 0) operand index is out of bounds"},
    {"abcde,efghi->a", 2, {F32(1, 1, 1, 1, 1), F32(1, 1, 1, 1, 1)}, NULL, 0, TJ_ERR_UNSUPPORTED,
     "aten::einsum: the equation aligns the operands on 9 dims (labels and ellipsis dims), more than the 8 a tensor "
     "can have"},
    {"ij,jk", 2, {F32(2, 3), {2, {3, 4}, TJ_FLOAT64}}, NULL, 0, TJ_ERR_DTYPE,
     "aten::einsum: aten::bmm: batch1 (float32) and batch2 (float64) must have the same dtype"},
};

Test(einsum, refuses_bad_equations_and_operands_with_atens_messages)
{
    for (size_t i = 0; i < sizeof errors / sizeof errors[0]; i++) {
        const error_case *e = &errors[i];
        tj_tensor *in[3];
        for (int k = 0; k < e->n; k++) in[k] = operand(&e->in[k], k + 1);
        cr_expect_null(tj_einsum(e->equation, in, e->n, e->path, e->npath), "%s", e->equation);
        cr_expect_eq(tj_last_status(), e->status, "%s: %s", e->equation, tj_status_name(tj_last_status()));
        cr_expect_str_eq(tj_last_error(), e->message, "%s", e->equation);
    }
}

Test(einsum, refuses_null_arguments_and_an_empty_operand_list)
{
    const operand_spec v = {1, {2}, TJ_FLOAT32};
    tj_tensor *x = operand(&v, 1), *with_null[2] = {x, NULL};
    test_expect_error(tj_einsum(NULL, &x, 1, NULL, 0), TJ_ERR_INVALID_ARGUMENT, "aten::einsum",
                      "argument 0 'equation' expects str");
    test_expect_error(tj_einsum("i,i", with_null, 2, NULL, 0), TJ_ERR_INVALID_ARGUMENT, "aten::einsum",
                      "argument 1 'tensors' element 1 is NULL");
    test_expect_error(tj_einsum("i", NULL, 0, NULL, 0), TJ_ERR_INVALID_ARGUMENT, "aten::einsum",
                      "must provide at least one operand");
}
