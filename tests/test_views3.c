/* Session 24 (views3): matmul recorded as torch 1.13's dispatch records it
 * for every rank combination (dot, mv, mm, folded mv / mm, bmm), values and
 * gradients against PyTorch 1.13 in float64, replayed and decomposed.
 * Reference values and the operator sequences make_fx records:
 * tests/views3_ref.h, written by tests/make_views3_refs.py, so the tests run
 * without PyTorch. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "test_util.h"
#include "views3_ref.h"

TestSuite(views3, .init = test_scope_open, .fini = test_scope_close);

static int64_t numel_of(int ndim, const int64_t *shape)
{
    int64_t n = 1;
    for (int d = 0; d < ndim; d++) n *= shape[d];
    return n;
}

/* A float64 tensor of `shape` holding src's first elements from `start`. */
static tj_tensor *ramp(const double *src, int start, int ndim, const int64_t *shape, bool requires_grad)
{
    tj_tensor *t = test_f64(ndim, shape, src + start);
    if (requires_grad) cr_assert_eq(tj_tensor_set_requires_grad(t, true), TJ_OK, "%s", tj_last_error());
    return t;
}

/* The call nodes of g are exactly ops[0..n), in order (operator names). */
static void expect_ops(const tj_graph *g, const char *const *ops, int n, const char *what)
{
    int k = 0;
    char *text = tj_graph_to_string(g);
    for (int i = 0; i < tj_graph_num_nodes(g); i++) {
        if (tj_graph_node_kind(g, i) != TJ_NODE_CALL) continue;
        const char *name = tj_op_name(tj_graph_node_op(g, i));
        cr_expect(k < n && strcmp(name, ops[k]) == 0, "%s: call %d is %s, PyTorch records %s\n%s", what, k, name,
                  k < n ? ops[k] : "nothing more", text);
        k++;
    }
    cr_expect_eq(k, n, "%s: %d calls, PyTorch records %d\n%s", what, k, n, text);
    free(text);
}

/* Traces step (fake mode): its call nodes are ops[0..nops); the graph
 * replayed (tj_compile + tj_plan_run) gives eager's nout results exactly,
 * and the core-decomposed trace (primitives only) within rtol. */
static void expect_traced(tj_trace_fn step, void *ctx, tj_tensor *const *in, int n, int nout,
                          const char *const *ops, int nops, double rtol, const char *what)
{
    tj_tensor *eager[4], *got[4];
    int n_out;
    cr_assert_eq(step(ctx, in, n, eager, &n_out), TJ_OK, "%s: %s", what, tj_last_error());
    cr_assert_eq(n_out, nout);
    tj_graph *g = tj_make_fx(step, ctx, in, n, NULL, TJ_TRACE_FAKE);
    cr_assert_not_null(g, "%s: %s", what, tj_last_error());
    if (ops) expect_ops(g, ops, nops, what);
    tj_plan *p = tj_compile(g, NULL);
    cr_assert_not_null(p, "%s: %s", what, tj_last_error());
    cr_assert_eq(tj_plan_run(p, in, n, got), TJ_OK, "%s: %s", what, tj_last_error());
    for (int k = 0; k < nout; k++) test_expect_same(got[k], eager[k], what);
    tj_plan_free(p);
    tj_graph_free(g);
    cr_expect(test_run_core(step, ctx, in, n, got), "%s: the core trace holds primitives only", what);
    for (int k = 0; k < nout; k++) {
        double w[512];
        int64_t numel = tj_tensor_numel(eager[k]);
        cr_assert(numel <= 512);
        cr_assert_eq(tj_tensor_copy_to(tj_to_copy(eager[k], TJ_FLOAT64), w), TJ_OK, "%s", tj_last_error());
        test_expect_close(got[k], w, numel, rtol, rtol);
    }
}

/* ---- matmul ---- */

typedef struct matmul_case {
    const char *tag;
    int na, nb;
    int64_t sa[4], sb[4];
    bool transposed; /* self built of its last two dims swapped, transposed back */
    const double *out, *ga, *gb;
    const char *const *ops;
    int nops;
} matmul_case;

#define MM_CASE(tag, na, sa, nb, sb, tr)                                                                              \
    {#tag, na, nb, sa, sb, tr, MATMUL_##tag##_OUT, MATMUL_##tag##_GA, MATMUL_##tag##_GB, MATMUL_##tag##_OPS,         \
     MATMUL_##tag##_OPS_N}
#define S(...) {__VA_ARGS__}

/* make_views3_refs.py's MATMUL_CASES */
static const matmul_case matmul_cases[] = {
    MM_CASE(DOT, 1, S(4), 1, S(4), false),
    MM_CASE(MV, 2, S(3, 4), 1, S(4), false),
    MM_CASE(VM, 1, S(4), 2, S(4, 5), false),
    MM_CASE(MM, 2, S(3, 4), 2, S(4, 5), false),
    MM_CASE(FOLD3_1, 3, S(2, 3, 4), 1, S(4), false),
    MM_CASE(FOLD3_2, 3, S(2, 3, 4), 2, S(4, 5), false),
    MM_CASE(FOLD1_3, 1, S(4), 3, S(2, 4, 5), false),
    MM_CASE(FOLD2_3, 2, S(3, 4), 3, S(2, 4, 5), false),
    MM_CASE(BMM, 3, S(2, 3, 4), 3, S(2, 4, 5), false),
    MM_CASE(BCAST, 4, S(2, 1, 3, 4), 3, S(5, 4, 6), false),
    MM_CASE(FOLD4_1, 4, S(2, 2, 3, 4), 1, S(4), false),
    MM_CASE(FOLD1_4, 1, S(4), 4, S(2, 2, 4, 5), false),
    MM_CASE(T3_2, 3, S(2, 3, 4), 2, S(4, 5), true),
};
#define NMATMUL ((int)(sizeof matmul_cases / sizeof *matmul_cases))

static tj_tensor *matmul_self(const matmul_case *mc, bool requires_grad)
{
    if (!mc->transposed) return ramp(V3_X, 0, mc->na, mc->sa, requires_grad);
    int64_t s[4];
    memcpy(s, mc->sa, sizeof s);
    s[mc->na - 1] = mc->sa[mc->na - 2], s[mc->na - 2] = mc->sa[mc->na - 1];
    tj_tensor *t = ramp(V3_X, 0, mc->na, s, requires_grad);
    return tj_transpose(t, -2, -1);
}

static tj_status matmul_step(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx, (void)n;
    out[0] = tj_matmul(in[0], in[1]);
    *n_out = 1;
    return out[0] ? TJ_OK : tj_last_status();
}

Test(views3, matmul_matches_pytorch_values_and_gradients_for_every_rank)
{
    for (int k = 0; k < NMATMUL; k++) {
        const matmul_case *mc = &matmul_cases[k];
        tj_tensor *a = matmul_self(mc, true), *b = ramp(V3_X, 100, mc->nb, mc->sb, true);
        tj_tensor *out = tj_matmul(a, b);
        cr_assert_not_null(out, "%s: %s", mc->tag, tj_last_error());
        int64_t n = tj_tensor_numel(out);
        test_expect_close(out, mc->out, n, 1e-15, 1e-15);
        tj_tensor *gy = ramp(V3_GY, 0, tj_tensor_ndim(out), tj_tensor_shape(out), false), *g[2];
        tj_tensor *y = tj_sum(tj_mul(out, gy), TJ_DTYPE_NONE);
        cr_assert_eq(tj_autograd_grad(&y, 1, NULL, (tj_tensor *[]){a, b}, 2, g), TJ_OK, "%s: %s", mc->tag,
                     tj_last_error());
        test_expect_close(g[0], mc->ga, numel_of(mc->na, mc->sa), 1e-14, 1e-14);
        test_expect_close(g[1], mc->gb, numel_of(mc->nb, mc->sb), 1e-14, 1e-14);
    }
}

Test(views3, matmul_records_what_pytorch_records_replays_and_decomposes)
{
    for (int k = 0; k < NMATMUL; k++) {
        const matmul_case *mc = &matmul_cases[k];
        tj_tensor *in[2] = {matmul_self(mc, false), ramp(V3_X, 100, mc->nb, mc->sb, false)};
        expect_traced(matmul_step, NULL, in, 2, 1, mc->ops, mc->nops, 1e-14, mc->tag);
    }
}

/* ---- diagonal ---- */

typedef struct diag_case {
    const char *tag;
    int ndim;
    int64_t shape[3], offset, dim1, dim2;
    const double *out, *gx, *inplace, *inplace_gx;
    const int64_t *geom; /* PyTorch's shape, strides and storage offset */
} diag_case;

#define DIAG_CASE(tag, nd, shape, off, d1, d2)                                                                       \
    {#tag, nd, shape, off, d1, d2, DIAG_##tag##_OUT, DIAG_##tag##_GX, DIAG_##tag##_INPLACE,                            \
     DIAG_##tag##_INPLACE_GX, DIAG_##tag##_GEOM}

/* make_views3_refs.py's DIAG_CASES */
static const diag_case diag_cases[] = {
    DIAG_CASE(MAIN, 2, S(3, 4), 0, 0, 1),          DIAG_CASE(ABOVE, 2, S(3, 4), 1, 0, 1),
    DIAG_CASE(BELOW, 2, S(4, 3), -2, 0, 1),        DIAG_CASE(NEG_DIMS, 3, S(2, 3, 4), 1, -1, -3),
    DIAG_CASE(BATCH, 3, S(2, 3, 4), -1, 1, 2),     DIAG_CASE(SWAPPED, 2, S(3, 4), 1, 1, 0),
    DIAG_CASE(BEYOND, 2, S(3, 4), 5, 0, 1),        DIAG_CASE(BEYOND_NEG, 2, S(3, 4), -3, 0, 1),
};
#define NDIAG ((int)(sizeof diag_cases / sizeof *diag_cases))

/* The view's shape, strides and storage offset are PyTorch's. */
static void expect_geometry(const tj_tensor *t, const int64_t *geom, const char *what)
{
    int nd = tj_tensor_ndim(t);
    for (int d = 0; d < nd; d++) {
        cr_expect_eq(tj_tensor_shape(t)[d], geom[d], "%s: size %d", what, d);
        cr_expect_eq(tj_tensor_strides(t)[d], geom[nd + d], "%s: stride %d", what, d);
    }
    cr_expect_eq(tj_tensor_storage_offset(t), geom[2 * nd], "%s: storage offset", what);
}

Test(views3, diagonal_is_a_view_with_pytorch_values_strides_and_gradients)
{
    for (int k = 0; k < NDIAG; k++) {
        const diag_case *dc = &diag_cases[k];
        tj_tensor *x = ramp(V3_X, 0, dc->ndim, dc->shape, true);
        tj_tensor *out = tj_diagonal(x, dc->offset, dc->dim1, dc->dim2);
        cr_assert_not_null(out, "%s: %s", dc->tag, tj_last_error());
        cr_expect_eq(tj_tensor_ndim(out), dc->ndim - 1, "%s", dc->tag);
        expect_geometry(out, dc->geom, dc->tag);
        int64_t n = tj_tensor_numel(out);
        test_expect_close(out, dc->out, n, 0, 0);
        tj_tensor *gy = ramp(V3_GY, 0, tj_tensor_ndim(out), tj_tensor_shape(out), false);
        test_expect_close(test_grad1(x, out, gy), dc->gx, numel_of(dc->ndim, dc->shape), 0, 0);
        /* int64: a view of any dtype */
        tj_tensor *xi = tj_to_copy(x, TJ_INT64), *oi = tj_diagonal(xi, dc->offset, dc->dim1, dc->dim2);
        cr_assert_not_null(oi, "%s", tj_last_error());
        expect_geometry(oi, dc->geom, dc->tag);
    }
}

Test(views3, writing_through_a_diagonal_writes_its_base_and_records_copyslices)
{
    for (int k = 0; k < NDIAG; k++) {
        const diag_case *dc = &diag_cases[k];
        /* without autograd: the view shares the base's storage */
        tj_tensor *plain = ramp(V3_X, 0, dc->ndim, dc->shape, false);
        cr_assert_not_null(tj_mul_scalar_(tj_diagonal(plain, dc->offset, dc->dim1, dc->dim2), tj_v_int(3)), "%s",
                           tj_last_error());
        test_expect_close(plain, dc->inplace, numel_of(dc->ndim, dc->shape), 0, 0);
        /* with autograd: base = x * 1, its diagonal *= 3, gradient of sum(base * GY) */
        tj_tensor *x = ramp(V3_X, 0, dc->ndim, dc->shape, true), *base = tj_mul_scalar(x, tj_v_int(1));
        cr_assert_not_null(tj_mul_scalar_(tj_diagonal(base, dc->offset, dc->dim1, dc->dim2), tj_v_int(3)), "%s: %s",
                           dc->tag, tj_last_error());
        test_expect_close(base, dc->inplace, numel_of(dc->ndim, dc->shape), 0, 0);
        tj_tensor *gy = ramp(V3_GY, 0, dc->ndim, dc->shape, false);
        test_expect_close(test_grad1(x, base, gy), dc->inplace_gx, numel_of(dc->ndim, dc->shape), 0, 0);
    }
}

Test(views3, diagonal_refuses_what_pytorch_refuses)
{
    tj_tensor *x = ramp(V3_X, 0, 2, (int64_t[]){3, 4}, false), *v = ramp(V3_X, 0, 1, (int64_t[]){4}, false);
    test_expect_error(tj_diagonal(x, 0, 1, -1), TJ_ERR_INVALID_ARGUMENT, "aten::diagonal",
                      "diagonal dimensions cannot be identical 1, -1");
    test_expect_error(tj_diagonal(x, 0, 0, 2), TJ_ERR_INDEX, "aten::diagonal", "out of range");
    test_expect_error(tj_diagonal(v, 0, 0, 1), TJ_ERR_INDEX, "aten::diagonal", "a diagonal needs 2");
    test_expect_error(tj_diagonal_scatter(x, v, 0, 0, 1), TJ_ERR_SHAPE, "aten::diagonal_scatter",
                      "src size [4], diagonal size [3]");
    test_expect_error(tj_diagonal_backward(v, (int64_t[]){3, 4}, 2, 0, 0, 1), TJ_ERR_SHAPE, "aten::diagonal_backward",
                      "src size [4], diagonal size [3]");
    test_expect_error(tj_diagonal_backward(v, (int64_t[]){3, -4}, 2, 0, 0, 1), TJ_ERR_SHAPE,
                      "aten::diagonal_backward", "negative size");
    test_expect_error(tj_diagonal_backward(v, (int64_t[]){4}, 1, 0, 0, 1), TJ_ERR_INDEX, "aten::diagonal_backward",
                      "a diagonal needs 2");
    /* size-1 dims of any strides (as_strided's): their sum, the diagonal's
     * stride, overflows; PyTorch's diagonal then refuses it ("Negative
     * strides are not supported", the sum wrapped) */
    tj_tensor *huge = tj_as_strided(x, (int64_t[]){2, 1}, (int64_t[]){1, INT64_MAX}, 2, true, 0);
    cr_assert_not_null(huge, "%s", tj_last_error());
    test_expect_error(tj_diagonal(huge, 0, 0, 1), TJ_ERR_INVALID_ARGUMENT, "aten::diagonal",
                      "strides 1 and 9223372036854775807 of dims 0 and 1, overflows");
}

Test(views3, diagonal_backward_and_diagonal_scatter_match_their_definitions)
{
    tj_tensor *g = ramp(V3_GY, 0, 1, (int64_t[]){3}, true);
    tj_tensor *b = tj_diagonal_backward(g, (int64_t[]){3, 4}, 2, 1, 0, 1);
    cr_assert_not_null(b, "%s", tj_last_error());
    /* zeros with g on the diagonal above the main one: DIAG_ABOVE's gradient */
    test_expect_close(b, DIAG_ABOVE_GX, 12, 0, 0);
    /* its own gradient is the diagonal of the incoming one */
    tj_tensor *gg = ramp(V3_X, 0, 2, (int64_t[]){3, 4}, false);
    test_expect_close(test_grad1(g, b, gg), DIAG_ABOVE_OUT, 3, 0, 0);
    /* diagonal_scatter: self outside the diagonal, src on it; gradients split so */
    tj_tensor *self = ramp(V3_X, 0, 2, (int64_t[]){3, 4}, true), *src = ramp(V3_GY, 0, 1, (int64_t[]){3}, true);
    tj_tensor *sc = tj_diagonal_scatter(self, src, 1, 0, 1), *gy = ramp(V3_GY, 0, 2, (int64_t[]){3, 4}, false);
    cr_assert_not_null(sc, "%s", tj_last_error());
    tj_tensor *view = tj_diagonal(tj_clone(sc), 1, 0, 1);
    test_expect_same(view, tj_tensor_detach(src), "the scattered diagonal");
    tj_tensor *y = tj_sum(tj_mul(sc, gy), TJ_DTYPE_NONE), *grads[2];
    cr_assert_eq(tj_autograd_grad(&y, 1, NULL, (tj_tensor *[]){self, src}, 2, grads), TJ_OK, "%s", tj_last_error());
    test_expect_same(grads[1], tj_diagonal(gy, 1, 0, 1), "src's gradient");
    test_expect_same(grads[0], tj_diagonal_scatter(gy, tj_zeros((int64_t[]){3}, 1, TJ_FLOAT64), 1, 0, 1),
                     "self's gradient");
}

static tj_status diag_step(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    const diag_case *dc = ctx;
    (void)n;
    out[0] = tj_sum(tj_diagonal(in[0], dc->offset, dc->dim1, dc->dim2), TJ_DTYPE_NONE);
    *n_out = 1;
    return out[0] ? TJ_OK : tj_last_status();
}

/* A grad step's one output: the gradient of sum(op(ctx, x) * in[1]) in x, a
 * detached in[0] requiring grad. */
static tj_status weighted_sum_grad(tj_tensor *(*op)(const void *ctx, tj_tensor *x), const void *ctx,
                                   tj_tensor *const *in, tj_tensor **out, int *n_out)
{
    tj_tensor *x = tj_tensor_detach(in[0]);
    if (!x || tj_tensor_set_requires_grad(x, true) != TJ_OK) return tj_last_status();
    tj_tensor *y = tj_sum(tj_mul(op(ctx, x), in[1]), TJ_DTYPE_NONE);
    *n_out = 1;
    return y ? tj_autograd_grad(&y, 1, NULL, &x, 1, out) : tj_last_status();
}

static tj_tensor *diagonal_of(const void *ctx, tj_tensor *x)
{
    const diag_case *dc = ctx;
    return tj_diagonal(x, dc->offset, dc->dim1, dc->dim2);
}

/* the gradient of sum(diagonal(x) * gy), traced: diagonal_backward */
static tj_status diag_grad_step(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)n;
    return weighted_sum_grad(diagonal_of, ctx, in, out, n_out);
}

/* base = x * 1; base.diagonal() *= 3; base * 2: functionalised into
 * diagonal_scatter */
static tj_status diag_inplace_step(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    const diag_case *dc = ctx;
    (void)n;
    tj_tensor *base = tj_mul_scalar(in[0], tj_v_int(1));
    if (!tj_mul_scalar_(tj_diagonal(base, dc->offset, dc->dim1, dc->dim2), tj_v_int(3))) return tj_last_status();
    out[0] = tj_mul_scalar(base, tj_v_int(2));
    *n_out = 1;
    return out[0] ? TJ_OK : tj_last_status();
}

Test(views3, diagonal_traces_replays_functionalises_and_decomposes_as_eager)
{
    for (int k = 0; k < NDIAG; k++) {
        const diag_case *dc = &diag_cases[k];
        tj_tensor *x = ramp(V3_X, 0, dc->ndim, dc->shape, false);
        expect_traced(diag_step, (void *)dc, &x, 1, 1, k == 1 ? DIAG_OPS : NULL, DIAG_OPS_N, 0, dc->tag);
        tj_tensor *d = tj_diagonal(x, dc->offset, dc->dim1, dc->dim2);
        tj_tensor *in[2] = {x, ramp(V3_GY, 0, tj_tensor_ndim(d), tj_tensor_shape(d), false)};
        expect_traced(diag_grad_step, (void *)dc, in, 2, 1, NULL, 0, 0, dc->tag);
        expect_traced(diag_inplace_step, (void *)dc, &x, 1, 1, NULL, 0, 0, dc->tag);
    }
    /* the graphs hold PyTorch's operators */
    const diag_case *above = &diag_cases[1];
    tj_tensor *in[2] = {ramp(V3_X, 0, 2, (int64_t[]){3, 4}, false), ramp(V3_GY, 0, 1, (int64_t[]){3}, false)};
    tj_graph *g = tj_make_fx(diag_grad_step, (void *)above, in, 2, NULL, TJ_TRACE_FAKE);
    cr_assert_not_null(g, "%s", tj_last_error());
    char *text = tj_graph_to_string(g);
    cr_expect(strstr(text, "aten.diagonal.default(%detach, 1)"), "%s", text);
    cr_expect(strstr(text, "aten.diagonal_backward.default(%mul_1, [3, 4], 1, 0, 1)"), "%s", text);
    free(text);
    tj_graph_free(g);
    g = tj_make_fx(diag_inplace_step, (void *)above, in, 1, NULL, TJ_TRACE_FAKE);
    cr_assert_not_null(g, "%s", tj_last_error());
    cr_assert_geq(tj_pass_functionalize(g), 1, "%s", tj_last_error());
    text = tj_graph_to_string(g);
    cr_expect(strstr(text, "aten.diagonal_scatter.default(%mul, %mul_1, 1)"), "%s", text);
    free(text);
    tj_graph_free(g);
}

/* ---- as_strided ---- */

typedef enum strided_source { SRC_X, SRC_SLICE, SRC_EXPANDED } strided_source;

typedef struct strided_case {
    const char *tag;
    int ndim;
    int64_t size[3], stride[3];
    bool has_offset;
    int64_t offset;
    strided_source source;
    const double *out, *gx;
    const int64_t *geom;
} strided_case;

#define STRIDED_CASE(tag, nd, size, stride, has, off, src)                                                           \
    {#tag, nd, size, stride, has, off, src, STRIDED_##tag##_OUT, STRIDED_##tag##_GX, STRIDED_##tag##_GEOM}

/* make_views3_refs.py's STRIDED_CASES */
static const strided_case strided_cases[] = {
    STRIDED_CASE(WINDOW, 2, S(2, 2), S(1, 2), true, 1, SRC_X),
    STRIDED_CASE(OVERLAP, 2, S(3, 3), S(1, 1), true, 0, SRC_X),
    STRIDED_CASE(EXPAND, 2, S(2, 3), S(0, 1), true, 2, SRC_X),
    STRIDED_CASE(DEFAULT_OFF, 2, S(4, 3), S(1, 4), false, 0, SRC_X),
    STRIDED_CASE(SIZE1, 3, S(1, 3, 1), S(5, 2, 7), true, 3, SRC_X),
    STRIDED_CASE(EMPTY, 2, S(0, 2), S(1, 1), true, 0, SRC_X),
    STRIDED_CASE(OF_SLICE, 2, S(2, 2), S(4, 1), false, 0, SRC_SLICE),
    STRIDED_CASE(OF_SLICE_OFF, 1, S(3), S(3), true, 2, SRC_SLICE),
    STRIDED_CASE(IN_OVERLAP, 2, S(2, 3), S(1, 1), true, 1, SRC_EXPANDED),
};
#define NSTRIDED ((int)(sizeof strided_cases / sizeof *strided_cases))

static tj_tensor *strided_input(tj_tensor *x, strided_source source)
{
    if (source == SRC_SLICE) return tj_slice(x, 0, true, 1, false, 0, 1);
    if (source == SRC_EXPANDED) return tj_expand(tj_select(x, 0, 0), (int64_t[]){3, 4}, 2);
    return x;
}

static tj_tensor *strided_of(tj_tensor *x, const strided_case *sc)
{
    return tj_as_strided(strided_input(x, sc->source), sc->size, sc->stride, sc->ndim, sc->has_offset, sc->offset);
}

Test(views3, as_strided_is_a_view_with_pytorch_values_strides_and_gradients)
{
    for (int k = 0; k < NSTRIDED; k++) {
        const strided_case *sc = &strided_cases[k];
        tj_tensor *x = ramp(V3_X, 0, 2, (int64_t[]){3, 4}, true), *out = strided_of(x, sc);
        cr_assert_not_null(out, "%s: %s", sc->tag, tj_last_error());
        cr_expect_eq(tj_tensor_ndim(out), sc->ndim);
        expect_geometry(out, sc->geom, sc->tag);
        test_expect_close(out, sc->out, tj_tensor_numel(out), 0, 0);
        tj_tensor *gy = ramp(V3_GY, 0, sc->ndim, sc->size, false);
        test_expect_close(test_grad1(x, out, gy), sc->gx, 12, 1e-15, 1e-15);
    }
}

Test(views3, writing_through_as_strided_writes_its_base)
{
    static const struct {
        int64_t size[2], stride[2];
        bool has_offset;
        int64_t offset;
        const double *inplace, *gx;
    } cases[] = {{{2, 2}, {1, 2}, true, 1, STRIDED_WINDOW_INPLACE, STRIDED_WINDOW_INPLACE_GX},
                 {{4, 3}, {1, 4}, false, 0, STRIDED_DEFAULT_OFF_INPLACE, STRIDED_DEFAULT_OFF_INPLACE_GX}};
    for (int k = 0; k < 2; k++) {
        tj_tensor *plain = ramp(V3_X, 0, 2, (int64_t[]){3, 4}, false);
        tj_tensor *v = tj_as_strided(plain, cases[k].size, cases[k].stride, 2, cases[k].has_offset, cases[k].offset);
        cr_assert_not_null(tj_mul_scalar_(v, tj_v_int(3)), "%s", tj_last_error());
        test_expect_close(plain, cases[k].inplace, 12, 0, 0);
        tj_tensor *x = ramp(V3_X, 0, 2, (int64_t[]){3, 4}, true), *base = tj_mul_scalar(x, tj_v_int(1));
        v = tj_as_strided(base, cases[k].size, cases[k].stride, 2, cases[k].has_offset, cases[k].offset);
        cr_assert_not_null(tj_mul_scalar_(v, tj_v_int(3)), "%s", tj_last_error());
        test_expect_close(base, cases[k].inplace, 12, 0, 0);
        test_expect_close(test_grad1(x, base, ramp(V3_GY, 0, 2, (int64_t[]){3, 4}, false)), cases[k].gx, 12, 0, 0);
    }
}

Test(views3, as_strided_refuses_reads_outside_the_storage)
{
    tj_tensor *x = ramp(V3_X, 0, 2, (int64_t[]){3, 4}, false);
    test_expect_error(tj_as_strided(x, (int64_t[]){3, 4}, (int64_t[]){4, 1}, 2, true, 1), TJ_ERR_SHAPE,
                      "aten::as_strided", "size [3, 4], stride [4, 1] and storage offset 1 reach element 12, out of "
                      "bounds for a storage of 12 elements");
    test_expect_error(tj_as_strided(tj_slice(x, 0, true, 1, false, 0, 1), (int64_t[]){9}, (int64_t[]){1}, 1, false, 0),
                      TJ_ERR_SHAPE, "aten::as_strided", "storage offset 4 reach element 12");
    test_expect_error(tj_as_strided(x, (int64_t[]){2}, (int64_t[]){INT64_MAX}, 1, true, 0), TJ_ERR_SHAPE,
                      "aten::as_strided", "out of bounds");
    test_expect_error(tj_as_strided(x, (int64_t[]){2, -1}, (int64_t[]){1, 1}, 2, true, 0), TJ_ERR_SHAPE,
                      "aten::as_strided", "negative dimension");
    test_expect_error(tj_as_strided(x, (int64_t[]){2, 2}, (int64_t[]){1, -1}, 2, true, 0), TJ_ERR_INVALID_ARGUMENT,
                      "aten::as_strided", "Negative strides");
    test_expect_error(tj_as_strided(x, (int64_t[]){2}, (int64_t[]){1}, 1, true, -1), TJ_ERR_INVALID_ARGUMENT,
                      "aten::as_strided", "invalid storage offset -1");
    test_expect_error(tj_as_strided_scatter(x, x, (int64_t[]){2, 2}, (int64_t[]){1, 1}, 2, true, 0), TJ_ERR_SHAPE,
                      "aten::as_strided_scatter", "src size [3, 4]");
    test_expect_error(tj_as_strided_scatter(x, tj_zeros((int64_t[]){13}, 1, TJ_FLOAT64), (int64_t[]){13},
                                            (int64_t[]){1}, 1, false, 0),
                      TJ_ERR_SHAPE, "aten::as_strided_scatter", "out of bounds for a storage of 12 elements");
    /* an empty view may sit at the storage's end */
    cr_expect_not_null(tj_as_strided(x, (int64_t[]){0}, (int64_t[]){1}, 1, true, 12), "%s", tj_last_error());
    /* a 0-dim view takes no size or stride arrays (NULL, length 0) */
    test_expect_close(tj_as_strided(x, NULL, NULL, 0, true, 11), V3_X + 11, 1, 0, 0);
    test_expect_error(tj_as_strided(x, NULL, NULL, 0, true, 12), TJ_ERR_SHAPE, "aten::as_strided", "out of bounds");
}

static tj_status strided_step(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    const strided_case *sc = ctx;
    (void)n;
    out[0] = tj_sum(strided_of(in[0], sc), TJ_DTYPE_NONE);
    *n_out = 1;
    return out[0] ? TJ_OK : tj_last_status();
}

static tj_tensor *strided_view(const void *ctx, tj_tensor *x) { return strided_of(x, ctx); }

static tj_status strided_grad_step(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)n;
    return weighted_sum_grad(strided_view, ctx, in, out, n_out);
}

/* base = x * 1; base.as_strided(...) *= 3; base * 2 */
static tj_status strided_inplace_step(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    const strided_case *sc = ctx;
    (void)n;
    tj_tensor *base = tj_mul_scalar(in[0], tj_v_int(1));
    tj_tensor *v = tj_as_strided(base, sc->size, sc->stride, sc->ndim, sc->has_offset, sc->offset);
    if (!tj_mul_scalar_(v, tj_v_int(3))) return tj_last_status();
    out[0] = tj_mul_scalar(base, tj_v_int(2));
    *n_out = 1;
    return out[0] ? TJ_OK : tj_last_status();
}

Test(views3, as_strided_traces_replays_functionalises_and_decomposes_as_eager)
{
    for (int k = 0; k < NSTRIDED; k++) {
        const strided_case *sc = &strided_cases[k];
        tj_tensor *in[2] = {ramp(V3_X, 0, 2, (int64_t[]){3, 4}, false), ramp(V3_GY, 0, sc->ndim, sc->size, false)};
        expect_traced(strided_step, (void *)sc, in, 1, 1, k == 0 ? STRIDED_OPS : NULL, STRIDED_OPS_N, 0, sc->tag);
        expect_traced(strided_grad_step, (void *)sc, in, 2, 1, NULL, 0, 0, sc->tag);
        if (sc->source == SRC_X && k != 1 && k != 2) /* writes through a non-overlapping view */
            expect_traced(strided_inplace_step, (void *)sc, in, 1, 1, NULL, 0, 0, sc->tag);
    }
    const strided_case *window = &strided_cases[0];
    tj_tensor *x = ramp(V3_X, 0, 2, (int64_t[]){3, 4}, false);
    tj_graph *g = tj_make_fx(strided_inplace_step, (void *)window, &x, 1, NULL, TJ_TRACE_FAKE);
    cr_assert_not_null(g, "%s", tj_last_error());
    cr_assert_geq(tj_pass_functionalize(g), 1, "%s", tj_last_error());
    char *text = tj_graph_to_string(g);
    cr_expect(strstr(text, "aten.as_strided_scatter.default(%mul, %mul_1, [2, 2], [1, 2], 1)"), "%s", text);
    free(text);
    tj_graph_free(g);
}

/* ---- diag, diag_embed, trace ---- */

typedef enum diagm_op { OP_DIAG, OP_DIAG_EMBED, OP_TRACE } diagm_op;

typedef struct diagm_case {
    const char *tag;
    diagm_op op;
    int ndim;
    int64_t shape[2], args[3];
    const double *out, *gx;
    const int64_t *out_shape; /* rank, then sizes */
} diagm_case;

#define DIAGM_CASE(tag, op, nd, shape, ...)                                                                          \
    {#tag, op, nd, shape, {__VA_ARGS__}, DIAGM_##tag##_OUT, DIAGM_##tag##_GX, DIAGM_##tag##_SHAPE}

/* make_views3_refs.py's DIAGM_CASES */
static const diagm_case diagm_cases[] = {
    DIAGM_CASE(VEC, OP_DIAG, 1, S(3), 0),
    DIAGM_CASE(VEC_BELOW, OP_DIAG, 1, S(3), -2),
    DIAGM_CASE(VEC_ABOVE, OP_DIAG, 1, S(4), 1),
    DIAGM_CASE(SQUARE, OP_DIAG, 2, S(3, 3), 1),
    DIAGM_CASE(WIDE, OP_DIAG, 2, S(3, 4), -1),
    DIAGM_CASE(TALL_BEYOND, OP_DIAG, 2, S(3, 2), -3),
    DIAGM_CASE(EMBED, OP_DIAG_EMBED, 2, S(2, 3), 0, -2, -1),
    DIAGM_CASE(EMBED_SWAPPED, OP_DIAG_EMBED, 2, S(2, 3), -1, 2, 0),
    DIAGM_CASE(EMBED_MID, OP_DIAG_EMBED, 2, S(2, 3), 1, 0, 2),
    DIAGM_CASE(EMBED_1D, OP_DIAG_EMBED, 1, S(3), 2, 0, 1),
    DIAGM_CASE(TRACE, OP_TRACE, 2, S(3, 4), 0),
    DIAGM_CASE(TRACE_TALL, OP_TRACE, 2, S(5, 2), 0),
};
#define NDIAGM ((int)(sizeof diagm_cases / sizeof *diagm_cases))

static tj_tensor *diagm_call(const void *ctx, tj_tensor *x)
{
    const diagm_case *dc = ctx;
    switch (dc->op) {
    case OP_DIAG: return tj_diag(x, dc->args[0]);
    case OP_DIAG_EMBED: return tj_diag_embed(x, dc->args[0], dc->args[1], dc->args[2]);
    default: return tj_trace(x);
    }
}

Test(views3, diag_diag_embed_and_trace_match_pytorch_values_shapes_and_gradients)
{
    for (int k = 0; k < NDIAGM; k++) {
        const diagm_case *dc = &diagm_cases[k];
        tj_tensor *x = ramp(V3_X, 0, dc->ndim, dc->shape, true);
        tj_tensor *out = diagm_call(dc, x);
        cr_assert_not_null(out, "%s: %s", dc->tag, tj_last_error());
        int nd = (int)dc->out_shape[0];
        cr_assert_eq(tj_tensor_ndim(out), nd, "%s", dc->tag);
        for (int d = 0; d < nd; d++) cr_expect_eq(tj_tensor_shape(out)[d], dc->out_shape[1 + d], "%s: size %d", dc->tag, d);
        test_expect_close(out, dc->out, tj_tensor_numel(out), 0, 0);
        tj_tensor *gy = ramp(V3_GY, 0, nd, tj_tensor_shape(out), false);
        test_expect_close(test_grad1(x, out, gy), dc->gx, numel_of(dc->ndim, dc->shape), 0, 0);
        /* a transposed copy of self gives the same values */
        if (dc->ndim == 2) {
            tj_tensor *xt = tj_t(tj_contiguous(tj_t(x)));
            test_expect_close(diagm_call(dc, xt), dc->out, tj_tensor_numel(out), 0, 0);
        }
    }
}

Test(views3, diag_and_trace_keep_pytorch_dtypes_and_sums)
{
    /* int64 and bool keep their dtype through diag / diag_embed */
    tj_tensor *b = test_tensor(TJ_BOOL, 1, (int64_t[]){2}, (const bool[]){true, true});
    tj_tensor *db = tj_diag(b, 0);
    cr_assert_not_null(db, "%s", tj_last_error());
    cr_expect_eq(tj_tensor_dtype(db), TJ_BOOL);
    bool got[4];
    cr_assert_eq(tj_tensor_copy_to(db, got), TJ_OK);
    cr_expect(got[0] && !got[1] && !got[2] && got[3]);
    /* trace sums float32 in double, as ATen's trace_cpu (acc_type): 2^24 + 1 + 1 */
    tj_tensor *f = tj_diag(test_f32(1, (int64_t[]){3}, (const float[]){16777216.f, 1.f, 1.f}), 0);
    float tf;
    cr_assert_eq(tj_tensor_copy_to(tj_trace(f), &tf), TJ_OK, "%s", tj_last_error());
    cr_expect_eq(tf, 16777218.f, "%.1f", tf);
    /* int64 stays int64 and wraps, as ATen's */
    int64_t ti;
    tj_tensor *i = tj_diag(test_i64(1, (int64_t[]){2}, (const int64_t[]){INT64_C(1) << 62, INT64_C(1) << 62}), 0);
    cr_assert_eq(tj_tensor_copy_to(tj_trace(i), &ti), TJ_OK, "%s", tj_last_error());
    cr_expect_eq(ti, INT64_MIN);
    /* an empty matrix's trace is zero */
    double te;
    cr_assert_eq(tj_tensor_copy_to(tj_trace(tj_zeros((int64_t[]){0, 3}, 2, TJ_FLOAT64)), &te), TJ_OK);
    cr_expect_eq(te, 0.0);
}

Test(views3, diag_diag_embed_and_trace_refuse_what_pytorch_refuses)
{
    tj_tensor *x3 = tj_zeros((int64_t[]){2, 2, 2}, 3, TJ_FLOAT32), *v = tj_zeros((int64_t[]){3}, 1, TJ_FLOAT32);
    tj_tensor *s = tj_zeros(NULL, 0, TJ_FLOAT32);
    test_expect_error(tj_trace(v), TJ_ERR_SHAPE, "aten::trace", "expected a matrix, but got tensor with dim 1");
    test_expect_error(tj_trace(x3), TJ_ERR_SHAPE, "aten::trace", "with dim 3");
    test_expect_error(tj_trace(tj_zeros((int64_t[]){2, 2}, 2, TJ_BOOL)), TJ_ERR_DTYPE, "aten::trace", "bool");
    test_expect_error(tj_diag(x3, 0), TJ_ERR_SHAPE, "aten::diag", "matrix or a vector expected, got self of shape [2, 2, 2]");
    test_expect_error(tj_diag(s, 0), TJ_ERR_SHAPE, "aten::diag", "shape []");
    test_expect_error(tj_diag(v, INT64_MAX), TJ_ERR_SHAPE, "aten::diag", "needs more than INT64_MAX rows");
    test_expect_error(tj_diag_embed(v, 0, 0, 0), TJ_ERR_INVALID_ARGUMENT, "aten::diag_embed",
                      "diagonal dimensions cannot be identical 0, 0");
    test_expect_error(tj_diag_embed(v, 0, 0, 2), TJ_ERR_INDEX, "aten::diag_embed", "out of range");
    test_expect_error(tj_diag_embed(s, 0, -2, -1), TJ_ERR_INDEX, "aten::diag_embed", "out of range");
    test_expect_error(tj_diag_embed(v, INT64_MIN, 0, 1), TJ_ERR_SHAPE, "aten::diag_embed", "INT64_MAX");
}

static tj_status diagm_grad_step(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)n;
    return weighted_sum_grad(diagm_call, ctx, in, out, n_out);
}

static tj_status diagm_step(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)n;
    out[0] = diagm_call(ctx, in[0]);
    *n_out = 1;
    return out[0] ? TJ_OK : tj_last_status();
}

Test(views3, diag_diag_embed_and_trace_trace_replay_and_decompose_as_eager)
{
    for (int k = 0; k < NDIAGM; k++) {
        const diagm_case *dc = &diagm_cases[k];
        tj_tensor *x = ramp(V3_X, 0, dc->ndim, dc->shape, false);
        expect_traced(diagm_step, (void *)dc, &x, 1, 1, NULL, 0, 1e-15, dc->tag);
        tj_tensor *in[2] = {x, ramp(V3_GY, 0, (int)dc->out_shape[0], dc->out_shape + 1, false)};
        expect_traced(diagm_grad_step, (void *)dc, in, 2, 1, NULL, 0, 0, dc->tag);
    }
}

/* The backward graphs hold what PyTorch 1.13's make_fx records (its texts,
 * printed by tjit's names). */
Test(views3, diag_diag_embed_and_trace_gradients_record_pytorch_operators)
{
    static const struct {
        int k;
        const char *want[4];
    } expect[] = {
        {3, {"aten.diag.default(%mul_1, 1)"}},                           /* SQUARE: diag of the gradient */
        {4, {"aten.diagonal_backward.default(%mul_1, [3, 4], -1, 0, 1)"}}, /* WIDE */
        {0, {"aten.diag.default(%mul_1)"}},                              /* VEC */
        {7, {"aten.diagonal.default(%mul_1, -1, 2, 0)"}},                /* EMBED_SWAPPED */
        {10,
         {"aten.zeros.default([12], dtype = torch.float64", "aten.arange.start_step(0, 12, 5, dtype = torch.int64",
          "aten.index_fill.int_Tensor(%zeros, 0, %arange, %mul_1)", "aten.view.default(%index_fill, [3, 4])"}},
    };
    for (size_t e = 0; e < sizeof expect / sizeof *expect; e++) {
        const diagm_case *dc = &diagm_cases[expect[e].k];
        tj_tensor *in[2] = {ramp(V3_X, 0, dc->ndim, dc->shape, false),
                            ramp(V3_GY, 0, (int)dc->out_shape[0], dc->out_shape + 1, false)};
        tj_graph *g = tj_make_fx(diagm_grad_step, (void *)dc, in, 2, NULL, TJ_TRACE_FAKE);
        cr_assert_not_null(g, "%s: %s", dc->tag, tj_last_error());
        char *text = tj_graph_to_string(g);
        for (int w = 0; w < 4 && expect[e].want[w]; w++)
            cr_expect(strstr(text, expect[e].want[w]), "%s: no %s in\n%s", dc->tag, expect[e].want[w], text);
        free(text);
        tj_graph_free(g);
    }
}

/* diag of a square matrix with an offset past its sizes is empty (where
 * PyTorch 1.13 fails): its gradient is zeros of self's shape, not diag of
 * the empty gradient (a matrix of side |offset|) */
Test(views3, diag_of_a_square_matrix_past_its_sizes_has_a_zero_gradient)
{
    static const double zeros[9];
    static const int64_t offsets[] = {4, -4, 5, -5};
    for (int i = 0; i < 4; i++) {
        int64_t k = offsets[i];
        tj_tensor *x = ramp(V3_X, 0, 2, (int64_t[]){3, 3}, true), *out = tj_diag(x, k);
        cr_assert_not_null(out, "offset %lld: %s", (long long)k, tj_last_error());
        cr_assert_eq(tj_tensor_numel(out), 0, "offset %lld", (long long)k);
        tj_tensor *g = test_grad1(x, out, tj_zeros((int64_t[]){0}, 1, TJ_FLOAT64));
        test_assert_dtype_shape(g, TJ_FLOAT64, 2, (int64_t[]){3, 3});
        test_expect_close(g, zeros, 9, 0, 0);
    }
}

/* in[0].as_strided([6], [1], 0), cloned */
static tj_status whole_storage_step(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx, (void)n;
    out[0] = tj_clone(tj_as_strided(in[0], (int64_t[]){6}, (int64_t[]){1}, 1, true, 0));
    *n_out = 1;
    return out[0] ? TJ_OK : tj_last_status();
}

/* A plan replays as_strided's geometry on the storage of the input it gets
 * at run time: one the geometry reaches past (a plain tensor of the traced
 * shape where a slice of a larger storage was traced, or a broadcast input
 * of fewer elements) fails as eager as_strided fails on it, instead of
 * reading outside the storage (before its start, or past its end). */
Test(views3, a_replayed_as_strided_refuses_an_input_whose_storage_it_reaches_past)
{
    static const double v[6] = {0, 1, 2, 3, 4, 5};
    tj_tensor *base = test_f64(1, (int64_t[]){6}, v), *slice = tj_slice(base, 0, true, 2, false, 0, 1);
    tj_tensor *expanded = tj_expand(test_f64(2, (int64_t[]){1, 2}, v), (int64_t[]){2, 2}, 2);
    struct {
        tj_tensor *traced, *other;
        tj_tracing_mode mode;
    } cases[] = {{slice, test_f64(1, (int64_t[]){4}, v + 2), TJ_TRACE_FAKE},
                 {slice, test_f64(1, (int64_t[]){4}, v + 2), TJ_TRACE_REAL},
                 {expanded, NULL, TJ_TRACE_FAKE}};
    for (int k = 0; k < 3; k++) {
        tj_graph *g = tj_make_fx(whole_storage_step, NULL, &cases[k].traced, 1, NULL, cases[k].mode);
        cr_assert_not_null(g, "%d: %s", k, tj_last_error());
        tj_plan *p = tj_compile(g, NULL);
        cr_assert_not_null(p, "%d: %s", k, tj_last_error());
        tj_tensor *got;
        if (cases[k].other) { /* the traced input still runs */
            cr_assert_eq(tj_plan_run(p, &cases[k].traced, 1, &got), TJ_OK, "%d: %s", k, tj_last_error());
            test_expect_close(got, v, 6, 0, 0);
        }
        tj_tensor *x = cases[k].other ? cases[k].other : cases[k].traced;
        cr_expect_eq(tj_plan_run(p, &x, 1, &got), TJ_ERR_SHAPE, "%d: %s", k, tj_last_error());
        cr_expect(strstr(tj_last_error(), "aten::as_strided") && strstr(tj_last_error(), "out of bounds"), "%d: %s", k,
                  tj_last_error());
        cr_expect_null(tj_as_strided(x, (int64_t[]){6}, (int64_t[]){1}, 1, true, 0), "%d: eager takes it", k);
        tj_plan_free(p);
        tj_graph_free(g);
    }
}

/* in[0].as_strided([2, 2], [4, 1], 1) and its row 1, in[0].as_strided([2, 2], [4, 1]), cloned */
static tj_status offset_views_step(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx, (void)n;
    tj_tensor *a = tj_as_strided(in[0], (int64_t[]){2, 2}, (int64_t[]){4, 1}, 2, true, 1);
    out[0] = tj_clone(a);
    out[1] = tj_clone(tj_select(a, 0, 1));
    out[2] = tj_clone(tj_as_strided(in[0], (int64_t[]){2, 2}, (int64_t[]){4, 1}, 2, false, 0));
    *n_out = 3;
    return out[0] && out[1] && out[2] ? TJ_OK : tj_last_status();
}

/* An explicit storage offset of as_strided counts from the start of the
 * storage, not from the input's own offset: replayed on an input of the
 * traced strides at another storage offset (a slice), the plan reads what
 * eager as_strided reads; without the argument the view starts at the
 * input's offset. torch:
 *   x = torch.arange(14.)[2:].view(3, 4)
 *   x.as_strided((2, 2), (4, 1), 1) -> [[1, 2], [5, 6]]; its [1] -> [5, 6]
 *   x.as_strided((2, 2), (4, 1)) -> [[2, 3], [6, 7]] */
Test(views3, a_replayed_as_strided_offset_counts_from_the_storage_start)
{
    double v[14];
    for (int i = 0; i < 14; i++) v[i] = i;
    tj_tensor *traced = test_f64(2, (int64_t[]){3, 4}, v);
    tj_tensor *shifted = tj_view(tj_slice(test_f64(1, (int64_t[]){14}, v), 0, true, 2, false, 0, 1),
                                 (int64_t[]){3, 4}, 2);
    cr_assert_not_null(shifted, "%s", tj_last_error());
    for (int mode = 0; mode < 2; mode++) {
        tj_graph *g = tj_make_fx(offset_views_step, NULL, &traced, 1, NULL, mode ? TJ_TRACE_FAKE : TJ_TRACE_REAL);
        cr_assert_not_null(g, "%s", tj_last_error());
        tj_plan *p = tj_compile(g, NULL);
        tj_graph_free(g);
        cr_assert_not_null(p, "%s", tj_last_error());
        tj_tensor *got[3];
        cr_assert_eq(tj_plan_run(p, &shifted, 1, got), TJ_OK, "%s", tj_last_error());
        test_expect_close(got[0], (const double[]){1, 2, 5, 6}, 4, 0, 0);
        test_expect_close(got[1], (const double[]){5, 6}, 2, 0, 0);
        test_expect_close(got[2], (const double[]){2, 3, 6, 7}, 4, 0, 0);
        cr_assert_eq(tj_plan_run(p, &traced, 1, got), TJ_OK, "%s", tj_last_error());
        test_expect_close(got[0], (const double[]){1, 2, 5, 6}, 4, 0, 0);
        test_expect_close(got[2], (const double[]){0, 1, 4, 5}, 4, 0, 0);
        tj_plan_free(p);
    }
}

/* as_strided_scatter's geometry addresses the storage of self.clone(),
 * which keeps the strides of a self whose elements fill their span (a
 * transposed one): PyTorch 1.13's values. The gradient is self's with the
 * written elements zeroed, and src's read from them, whatever self's and
 * the incoming gradient's layouts (PyTorch 1.13 refuses a non-contiguous
 * self requiring grad, and reads a transposed incoming gradient in its own
 * storage order: wrong positions). */
Test(views3, as_strided_scatter_addresses_the_storage_order_of_a_transposed_self)
{
    double v[12], w[12];
    for (int i = 0; i < 12; i++) v[i] = i, w[i] = i + 1;
    tj_tensor *x = test_f64_grad(v, 2, (int64_t[]){3, 4}, true), *src = test_f64_grad((const double[]){100, 200}, 1,
                                                                                         (int64_t[]){2}, true);
    tj_tensor *y = tj_as_strided_scatter(tj_t(x), src, (int64_t[]){2}, (int64_t[]){1}, 1, true, 0);
    test_expect_close(y, (const double[]){100, 4, 8, 200, 5, 9, 2, 6, 10, 3, 7, 11}, 12, 0, 0);
    tj_tensor *loss = tj_sum(tj_mul(y, test_f64(2, (int64_t[]){4, 3}, w)), TJ_DTYPE_NONE), *g[2];
    cr_assert_eq(tj_autograd_grad(&loss, 1, NULL, (tj_tensor *[]){x, src}, 2, g), TJ_OK, "%s", tj_last_error());
    test_expect_close(g[0], (const double[]){0, 0, 7, 10, 2, 5, 8, 11, 3, 6, 9, 12}, 12, 0, 0);
    test_expect_close(g[1], (const double[]){1, 4}, 2, 0, 0);
    /* a contiguous self, its gradient arriving transposed */
    tj_tensor *src4 = test_f64_grad((const double[]){100, 200, 300, 400}, 2, (int64_t[]){2, 2}, true);
    y = tj_as_strided_scatter(x, src4, (int64_t[]){2, 2}, (int64_t[]){1, 4}, 2, true, 1);
    test_expect_close(y, (const double[]){0, 100, 300, 3, 4, 200, 400, 7, 8, 9, 10, 11}, 12, 0, 0);
    loss = tj_sum(tj_mul(tj_t(y), test_f64(2, (int64_t[]){4, 3}, w)), TJ_DTYPE_NONE);
    cr_assert_eq(tj_autograd_grad(&loss, 1, NULL, (tj_tensor *[]){x, src4}, 2, g), TJ_OK, "%s", tj_last_error());
    test_expect_close(g[0], (const double[]){1, 0, 0, 10, 2, 0, 0, 11, 3, 6, 9, 12}, 12, 0, 0);
    test_expect_close(g[1], (const double[]){4, 5, 7, 8}, 4, 0, 0);
}

/* in[0].as_strided([2, 2], [1, 4], 1) *= 3; in[0] * 2 */
static tj_status strided_write_step(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx, (void)n;
    tj_tensor *v = tj_as_strided(in[0], (int64_t[]){2, 2}, (int64_t[]){1, 4}, 2, true, 1);
    if (!tj_mul_scalar_(v, tj_v_int(3))) return tj_last_status();
    out[0] = tj_mul_scalar(in[0], tj_v_int(2));
    *n_out = 1;
    return out[0] ? TJ_OK : tj_last_status();
}

/* Functionalised, the write through as_strided becomes as_strided_scatter
 * of the input: replayed on a transposed input, both read and write its
 * storage order, as the eager in-place call does. */
Test(views3, a_functionalised_write_through_as_strided_replays_on_a_transposed_input_as_eager)
{
    tj_tensor *x = test_f64(2, (int64_t[]){3, 4}, V3_X);
    tj_graph *g = tj_make_fx(strided_write_step, NULL, &x, 1, NULL, TJ_TRACE_FAKE);
    cr_assert_not_null(g, "%s", tj_last_error());
    cr_assert_geq(tj_pass_functionalize(g), 1, "%s", tj_last_error());
    tj_plan *p = tj_compile(g, NULL);
    cr_assert_not_null(p, "%s", tj_last_error());
    tj_tensor *a = tj_t(test_f64(2, (int64_t[]){4, 3}, V3_X)), *b = tj_t(test_f64(2, (int64_t[]){4, 3}, V3_X));
    tj_tensor *got[2], *want; /* the result, and the new value written back into the input */
    int n;
    cr_assert_eq(tj_graph_num_outputs(g), 2);
    cr_assert_eq(tj_plan_run(p, &a, 1, got), TJ_OK, "%s", tj_last_error());
    cr_assert_eq(strided_write_step(NULL, &b, 1, &want, &n), TJ_OK, "%s", tj_last_error());
    test_expect_same(got[0], want, "result");
    test_expect_same(a, b, "input written back");
    tj_plan_free(p);
    tj_graph_free(g);
}

/* ---- squeeze ---- */

static tj_tensor *squeezed(const void *ctx, tj_tensor *x)
{
    (void)ctx;
    return tj_squeeze(x);
}

/* the gradient of sum(squeeze(x) * gy) */
static tj_status squeeze_grad_step(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)n;
    return weighted_sum_grad(squeezed, ctx, in, out, n_out);
}

/* x [2, 1, 3, 1]: the gradient is gy unsqueezed at dims 1 and 3, as
 * PyTorch 1.13's make_fx records it (detach, squeeze, mul, sum, ones_like,
 * expand, mul, unsqueeze, unsqueeze); replayed and decomposed as eager */
Test(views3, squeeze_gradient_unsqueezes_each_dropped_dim_as_pytorch)
{
    static const char *const ops[] = {"aten::detach",    "aten::squeeze", "aten::mul.Tensor", "aten::sum",
                                      "aten::ones_like", "aten::expand",  "aten::mul.Tensor", "aten::unsqueeze",
                                      "aten::unsqueeze"};
    tj_tensor *in[2] = {ramp(V3_X, 0, 4, (int64_t[]){2, 1, 3, 1}, false), ramp(V3_GY, 0, 2, (int64_t[]){2, 3}, false)};
    expect_traced(squeeze_grad_step, NULL, in, 2, 1, ops, sizeof ops / sizeof *ops, 0, "squeeze");
    tj_tensor *gx;
    int n_out;
    cr_assert_eq(squeeze_grad_step(NULL, in, 2, &gx, &n_out), TJ_OK, "%s", tj_last_error());
    test_assert_dtype_shape(gx, TJ_FLOAT64, 4, (int64_t[]){2, 1, 3, 1});
    test_expect_same(gx, tj_view(in[1], (int64_t[]){2, 1, 3, 1}, 4), "the gradient is gy");
    tj_graph *g = tj_make_fx(squeeze_grad_step, NULL, in, 2, NULL, TJ_TRACE_FAKE);
    char *text = tj_graph_to_string(g);
    cr_expect(strstr(text, "aten.unsqueeze.default(%mul_1, 1)") && strstr(text, "aten.unsqueeze.default(%unsqueeze, 3)"),
              "%s", text);
    free(text);
    tj_graph_free(g);
}

/* in[0].reshape(4), in[0].as_strided([2], [1], 1) and
 * in[0].reshape(4).as_strided([2], [1], 1), cloned */
static tj_status staged_strided_step(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx, (void)n;
    out[0] = tj_clone(tj_reshape(in[0], (int64_t[]){4}, 1));
    out[1] = tj_clone(tj_as_strided(in[0], (int64_t[]){2}, (int64_t[]){1}, 1, true, 1));
    out[2] = tj_clone(tj_as_strided(tj_reshape(in[0], (int64_t[]){4}, 1), (int64_t[]){2}, (int64_t[]){1}, 1, true, 1));
    *n_out = 3;
    return out[0] && out[1] && out[2] ? TJ_OK : tj_last_status();
}

/* An input copied into a staging block for a reshape its strides do not
 * allow: as_strided still reads the caller's storage, as eager does, and
 * an as_strided of the reshape the copy's.
 * torch: x = torch.arange(4.).view(2, 2).t(); x.reshape(4) -> [0, 2, 1, 3];
 * x.as_strided((2,), (1,), 1) -> [1, 2];
 * x.reshape(4).as_strided((2,), (1,), 1) -> [2, 1] */
Test(views3, as_strided_of_a_staged_input_reads_the_callers_storage)
{
    double v[4] = {0, 1, 2, 3};
    tj_tensor *traced = test_f64(2, (int64_t[]){2, 2}, v);
    tj_tensor *t = tj_transpose(test_f64(2, (int64_t[]){2, 2}, v), 0, 1);
    tj_graph *g = tj_make_fx(staged_strided_step, NULL, &traced, 1, NULL, TJ_TRACE_REAL);
    cr_assert_not_null(g, "%s", tj_last_error());
    tj_plan *p = tj_compile(g, NULL);
    tj_graph_free(g);
    cr_assert_not_null(p, "%s", tj_last_error());
    tj_tensor *got[3];
    tj_status st = tj_plan_run(p, &t, 1, got);
    cr_assert_eq(st, TJ_OK, "%s", tj_last_error());
    test_expect_close(got[0], (const double[]){0, 2, 1, 3}, 4, 0, 0);
    test_expect_close(got[1], (const double[]){1, 2}, 2, 0, 0);
    test_expect_close(got[2], (const double[]){2, 1}, 2, 0, 0);
    tj_plan_free(p);
}
