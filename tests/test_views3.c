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
