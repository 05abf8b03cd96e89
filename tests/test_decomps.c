/* Decompositions: the verification harness over every decomposition, the
 * primitive set, the core table, the semantic traps of issue 5, traced
 * counterparts, run-time registration, cycles, tables and graph-level
 * decomposition. Reference values come from PyTorch 1.13.1 (python3-torch)
 * where noted, e.g.
 *   torch.div(torch.tensor([1., 7, -7]), torch.tensor([0.1, 2, 2]), rounding_mode='floor') -> [9, 3, -4]
 *   torch.nn.functional.gelu(torch.tensor([-3., -1, -0.1, 0.1, 1, 3]), approximate='tanh')
 *     -> [-0.0036374330520629883, -0.15880799293518066, -0.046017248183488846,
 *         0.053982753306627274, 0.8411920070648193, 2.9963626861572266] */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "runtime/internal.h"
#include "tjit/tjit.h"
#include "test_util.h"
#include "tools/decomp_verify.h"

/* The case folders the harness reads: the shared set, and the local one of
 * the operators added after it (tests/conformance/README.md). */
static const char *const *case_dirs(void)
{
    static char shared_cases[4096];
    static const char *dirs[2];
    const char *shared = getenv("TJ_SHARED_DIR"), *local = getenv("TJ_LOCAL_CASES");
    snprintf(shared_cases, sizeof shared_cases, "%s/conformance/cases", shared ? shared : "../shared");
    dirs[0] = shared_cases;
    dirs[1] = local ? local : "tests/conformance/cases";
    return dirs;
}

TestSuite(decomps, .init = test_scope_open, .fini = test_scope_close);

/* ---- helpers: one operator call traced under the core table ---- */

typedef struct one_call {
    const tj_op *op;
    const tj_value *args;
    int n_out;
} one_call;

static tj_status call_op(void *ctx, tj_tensor *const *inputs, int n_inputs, tj_tensor **outputs, int *n_outputs)
{
    one_call *c = ctx;
    tj_value outs[TJ_MAX_RETURNS];
    (void)inputs;
    (void)n_inputs;
    tj_status st = tj_dispatch(c->op, c->args, tj_op_num_args(c->op), outs);
    if (st != TJ_OK) return st;
    *n_outputs = 0;
    for (int i = 0; i < tj_op_num_returns(c->op); i++)
        if (outs[i].kind == TJ_V_TENSOR) outputs[(*n_outputs)++] = outs[i].u.t;
    return TJ_OK;
}

/* Traces `name` on args under the core table (tensor args are the graph's
 * inputs), checks the graph holds primitives only and runs it; the defined
 * outputs land in outs. */
static tj_status decomposed(const char *name, const tj_value *args, tj_tensor **outs)
{
    one_call c = {tj_op_find(name), args, 0};
    cr_assert_not_null(c.op, "%s", name);
    tj_tensor *inputs[TJ_MAX_ARGS];
    int n = 0;
    for (int i = 0; i < tj_op_num_args(c.op); i++)
        if (args[i].kind == TJ_V_TENSOR) inputs[n++] = args[i].u.t;
    tj_decomp_table *core = tj_core_decompositions();
    tj_graph *g = tj_make_fx(call_op, &c, inputs, n, core, TJ_TRACE_REAL);
    tj_decomp_table_free(core);
    if (!g) return tj_last_status();
    cr_expect(test_only_primitives(g), "the decomposed graph of %s keeps a composite", name);
    tj_status st = tj_graph_run(g, inputs, n, outs);
    tj_graph_free(g);
    return st;
}

#define T(x) tj_v_tensor(x)

/* ---- the harness ---- */

static tj_status wrong(const tj_value *args, tj_value *outs);
static tj_status slightly_wrong(const tj_value *args, tj_value *outs);

Test(decomps, every_decomposition_matches_its_kernel_on_cases_and_variants, .timeout = 600)
{
    static tj_verify_row rows[512];
    int n = tj_decomp_verify(case_dirs(), 2, NULL, 0, rows, 512, NULL);
    cr_assert_geq(n, 30, "found %d verified operators under %s and %s (%s)", n, case_dirs()[0], case_dirs()[1],
                  n < 0 ? tj_last_error() : "");
    int failed = 0;
    for (int i = 0; i < n; i++) {
        cr_expect_gt(rows[i].samples, 0, "%s: no sample", tj_op_name(rows[i].op));
        if (rows[i].violations) {
            failed++;
            cr_log_error("%s: %d violation(s); first: %s", tj_op_name(rows[i].op), rows[i].violations,
                         rows[i].first_violation);
        }
    }
    cr_expect_eq(failed, 0, "%d decompositions fail the harness (listed above)", failed);
}

/* The harness's row for `op` with its decomposition replaced by fn. */
static tj_verify_row verify_replaced(const tj_op *op, tj_decomp_fn fn, const char *fn_name)
{
    cr_assert_eq(tj_register_decomposition(op, fn, fn_name), TJ_OK);
    tj_verify_row row;
    cr_assert_eq(tj_decomp_verify(case_dirs(), 2, &op, 1, &row, 1, NULL), 1, "%s", tj_last_error());
    return row;
}

/* The verifier reads the cases of every folder it is given together; a
 * folder named twice (by another path) counts once, and one it cannot read
 * is an error naming it. roll has cases in the local folder only. */
Test(decomps, verifier_reads_the_cases_of_every_folder_given)
{
    const tj_op *op = tj_op_find("aten::roll");
    const char *const *both = case_dirs();
    char again[4200];
    snprintf(again, sizeof again, "%s/", both[1]);
    const char *local[1] = {both[1]}, *twice[3] = {both[0], both[1], again};
    tj_verify_row shared_row, local_row, both_row, twice_row;
    cr_assert_eq(tj_decomp_verify(both, 1, &op, 1, &shared_row, 1, NULL), 1, "%s", tj_last_error());
    cr_assert_eq(tj_decomp_verify(local, 1, &op, 1, &local_row, 1, NULL), 1, "%s", tj_last_error());
    cr_assert_eq(tj_decomp_verify(both, 2, &op, 1, &both_row, 1, NULL), 1, "%s", tj_last_error());
    cr_assert_eq(tj_decomp_verify(twice, 3, &op, 1, &twice_row, 1, NULL), 1, "%s", tj_last_error());
    cr_expect_eq(shared_row.cases, 0);
    cr_expect_geq(local_row.cases, 10);
    cr_expect_eq(both_row.cases, local_row.cases);
    cr_expect_eq(twice_row.cases, local_row.cases);
    cr_expect_eq(both_row.samples, local_row.samples);
    cr_expect_eq(both_row.violations, 0, "%s", both_row.first_violation);
    /* and gelu's shared cases stay when the local folder is added */
    op = tj_op_find("aten::gelu");
    cr_assert_eq(tj_decomp_verify(both, 1, &op, 1, &shared_row, 1, NULL), 1, "%s", tj_last_error());
    cr_assert_eq(tj_decomp_verify(both, 2, &op, 1, &both_row, 1, NULL), 1, "%s", tj_last_error());
    cr_expect_gt(shared_row.cases, 0);
    cr_expect_eq(both_row.cases, shared_row.cases);
    const char *bad[2] = {both[0], "/nonexistent/cases"};
    cr_expect_eq(tj_decomp_verify(bad, 2, &op, 1, &both_row, 1, NULL), -1);
    cr_expect_eq(tj_last_status(), TJ_ERR_IO);
    cr_expect_str_eq(tj_last_error(), "cannot read the conformance cases under '/nonexistent/cases': No such file or "
                                      "directory");
}

/* A case folder of the operator whose case.json is cut short verifies
 * nothing: a violation naming it (it was skipped in silence, and the
 * command passed; tjit conform reports such a case as failed). */
Test(decomps, verifier_reports_a_case_it_cannot_decode)
{
    char dir[] = "/tmp/tjit-verify-XXXXXX", folder[64], file[96];
    cr_assert_not_null(mkdtemp(dir));
    snprintf(folder, sizeof folder, "%s/neg__cut_short", dir);
    snprintf(file, sizeof file, "%s/case.json", folder);
    cr_assert_eq(mkdir(folder, 0700), 0);
    FILE *f = fopen(file, "w");
    cr_assert_not_null(f);
    fputs("{\"op\": \"aten::neg\", \"args\": [", f);
    fclose(f);
    const tj_op *op = tj_op_find("aten::neg");
    const char *dirs[1] = {dir};
    tj_verify_row row;
    cr_assert_eq(tj_decomp_verify(dirs, 1, &op, 1, &row, 1, NULL), 1, "%s", tj_last_error());
    cr_expect_eq(row.cases, 0);
    cr_expect_eq(row.violations, 2, "%d", row.violations); /* and then: no case, no sample */
    cr_expect(strstr(row.first_violation, "neg__cut_short: cannot decode: ") != NULL, "%s", row.first_violation);
    remove(file);
    remove(folder);
    remove(dir);
}

Test(decomps, verifier_reports_a_wrong_decomposition)
{
    /* relu's decomposition replaced by a wrong one */
    tj_verify_row row = verify_replaced(tj_op_find("aten::relu"), wrong, "wrong_relu");
    cr_expect_gt(row.violations, 0);
    cr_expect(strstr(row.first_violation, "exceeds") || strstr(row.first_violation, "outside"), "%s",
              row.first_violation);
}

/* relu times 1 + 2^-20: a few float32 ulps off */
static tj_status slightly_wrong(const tj_value *args, tj_value *outs)
{
    tj_tensor *x = args[0].u.t;
    tj_tensor *r = tj_mul_scalar(tj_maximum(x, tj_zeros(NULL, 0, (int)tj_tensor_dtype(x))), tj_v_float(1 + 0x1p-20));
    outs[0] = tj_v_tensor(r);
    return r ? TJ_OK : tj_last_status();
}

/* relu plus 1e-3: a decomposition the harness must reject */
static tj_status wrong(const tj_value *args, tj_value *outs)
{
    tj_tensor *x = args[0].u.t;
    tj_tensor *r = tj_add_scalar(tj_maximum(x, tj_zeros(NULL, 0, (int)tj_tensor_dtype(x))), tj_v_float(1e-3));
    outs[0] = tj_v_tensor(r);
    return r ? TJ_OK : tj_last_status();
}

/* convolution moved by `scale` times n u sum |x*w| (u the unit roundoff
 * of the dtype, 2^-24 or 2^-53 as the verifier's bound; n the terms of
 * each output): the registered decomposition run on the inputs,
 * on their absolute values and on ones. */
static tj_decomp_fn real_convolution;

static tj_tensor *ones_like(tj_tensor *t) { return tj_ones(tj_tensor_shape(t), tj_tensor_ndim(t), (int)tj_tensor_dtype(t)); }
static tj_tensor *same(tj_tensor *t) { return t; }

static tj_tensor *convolution_of(const tj_value *args, tj_tensor *(*f)(tj_tensor *))
{
    tj_value a[9], out;
    memcpy(a, args, sizeof a);
    for (int i = 0; i < 3; i++)
        if (a[i].kind == TJ_V_TENSOR) a[i].u.t = f(a[i].u.t);
    return real_convolution(a, &out) == TJ_OK ? out.u.t : NULL;
}

static tj_status shifted_convolution(const tj_value *args, tj_value *outs, double scale)
{
    tj_tensor *y = convolution_of(args, same), *sum_abs = convolution_of(args, tj_abs);
    tj_tensor *terms = convolution_of(args, ones_like);
    double u = y && tj_tensor_dtype(y) == TJ_FLOAT64 ? 0x1p-53 : 0x1p-24;
    tj_tensor *r = tj_add(y, tj_mul_scalar(tj_mul(terms, sum_abs), tj_v_float(scale * u)));
    outs[0] = tj_v_tensor(r);
    return r ? TJ_OK : tj_last_status();
}

static tj_status half_bound_convolution(const tj_value *args, tj_value *outs) { return shifted_convolution(args, outs, 0.5); }
static tj_status twice_bound_convolution(const tj_value *args, tj_value *outs) { return shifted_convolution(args, outs, 2); }

static tj_verify_row verify_convolution_with(tj_decomp_fn fn)
{
    const tj_op *conv = tj_op_find("aten::convolution");
    real_convolution = conv->decomp;
    return verify_replaced(conv, fn, "shifted_convolution");
}

Test(decomps, verifier_allows_a_reordered_sum_its_float32_bound_covers)
{
    /* off by half the bound: beyond the kernel's error in some samples,
     * accepted there only thanks to the bound */
    tj_verify_row row = verify_convolution_with(half_bound_convolution);
    cr_expect_eq(row.violations, 0, "%s", row.first_violation);
    cr_expect_gt(row.reordered, 0);
}

Test(decomps, verifier_rejects_a_sum_beyond_its_float32_bound)
{
    tj_verify_row row = verify_convolution_with(twice_bound_convolution);
    cr_expect_gt(row.violations, 0);
    cr_expect(strstr(row.first_violation, "beyond the reordering bound"), "%s", row.first_violation);
}

Test(decomps, verifier_keeps_the_plain_rule_for_operators_that_do_not_reorder)
{
    /* relu is not in the reordering table: off by 2^-20 relative fails */
    tj_verify_row row = verify_replaced(tj_op_find("aten::relu"), slightly_wrong, "slightly_wrong_relu");
    cr_expect_gt(row.violations, 0);
    cr_expect_eq(row.reordered, 0);
}

/* ---- the primitive set ---- */

Test(decomps, primitive_set_is_small_and_every_composite_has_a_decomposition)
{
    int primitives = 0;
    for (int i = 0; i < tj_op_count(); i++) {
        const tj_op *op = tj_op_at(i);
        switch (tj_op_kind_of(op)) {
        case TJ_OP_PRIMITIVE:
            primitives++;
            cr_expect_null(op->decomp, "primitive %s has a decomposition", tj_op_name(op));
            break;
        case TJ_OP_COMPOSITE:
        case TJ_OP_IMPLICIT: cr_expect_not_null(op->decomp, "%s has no decomposition", tj_op_name(op)); break;
        }
    }
    /* README's "Primitive operators" lists them and why each stays */
    cr_expect_leq(primitives, 137, "%d primitives", primitives);
    cr_expect_geq(primitives, 20);
}

/* A function calling implicit composites (which no conformance case runs
 * directly): linear, layer_norm, softmax, cross_entropy, conv2d, max_pool2d,
 * reshape, split; and mse_loss and stack, composites since session 20. */
static tj_status model_like(void *ctx, tj_tensor *const *in, int n_in, tj_tensor **out, int *n_out)
{
    (void)ctx;
    (void)n_in;
    tj_tensor *x = in[0], *w = in[1], *b = in[2], *img = in[3], *k = in[4];
    int64_t ln[1] = {4}, one[2] = {1, 1}, zero[2] = {0, 0}, two[2] = {2, 2}, flat[2] = {2, -1};
    tj_tensor *h = tj_layer_norm(tj_linear(x, w, b), ln, 1, NULL, NULL, 1e-5);
    tj_tensor *p = tj_softmax(h, -1);
    int64_t tv[2] = {1, 3};
    tj_tensor *target = tj_tensor_from_data(TJ_INT64, 1, (const int64_t[]){2}, tv);
    tj_tensor *loss = tj_cross_entropy(p, target, NULL, 1, -100, 0.1);
    tj_tensor *c = tj_max_pool2d(tj_relu(tj_conv2d(img, k, NULL, one, one, one, 1)), two, two, zero, one, false);
    tj_tensor *parts[2];
    int np;
    tj_status st = tj_split(tj_reshape(c, flat, 2), 4, 1, parts, 2, &np);
    if (st != TJ_OK) return st;
    tj_tensor *s = tj_stack(parts, np, 0);
    out[0] = loss;
    out[1] = tj_mse_loss(tj_sum(s, -1), loss, 1);
    *n_out = 2;
    return out[0] && out[1] ? TJ_OK : tj_last_status();
}

Test(decomps, core_table_lowers_implicit_composites_to_primitives_in_both_modes)
{
    int64_t sx[2] = {2, 3}, sw[2] = {4, 3}, sb[1] = {4}, si[4] = {2, 1, 4, 4}, sk[4] = {2, 1, 3, 3};
    tj_tensor *in[5] = {tj_randn(sx, 2, -1), tj_randn(sw, 2, -1), tj_randn(sb, 1, -1), tj_randn(si, 4, -1),
                        tj_randn(sk, 4, -1)};
    tj_decomp_table *core = tj_core_decompositions();
    for (int mode = 0; mode < 2; mode++) {
        tj_graph *g = tj_make_fx(model_like, NULL, in, 5, core, mode ? TJ_TRACE_FAKE : TJ_TRACE_REAL);
        cr_assert_not_null(g, "%s", tj_last_error());
        cr_expect(test_only_primitives(g));
        cr_expect_gt(tj_graph_num_calls(g), 20);
        tj_graph_free(g);
    }
    tj_decomp_table_free(core);
}

/* ---- semantic traps (each also a sample of the harness) ---- */

Test(decomps, addmm_with_beta_zero_ignores_nan_in_self)
{
    int64_t s2[2] = {2, 2};
    const float nan_self[4] = {NAN, INFINITY, -INFINITY, NAN}, a[4] = {1, 2, 3, 4}, b[4] = {1, 0, 0, 1};
    tj_value args[5] = {T(test_f32(2, s2, nan_self)), T(test_f32(2, s2, a)), T(test_f32(2, s2, b)), tj_v_int(0),
                        tj_v_int(1)};
    tj_tensor *r;
    cr_assert_eq(decomposed("aten::addmm", args, &r), TJ_OK, "%s", tj_last_error());
    for (int i = 0; i < 4; i++) cr_expect_eq(tj_tensor_item_at(r, i), a[i]);
}

Test(decomps, var_correction_none_large_and_empty)
{
    int64_t s[1] = {4}, e[1] = {0}, dim[1] = {0};
    const float v[4] = {1, 2, 3, 4}; /* sum of squared deviations 5 */
    tj_tensor *x = test_f32(1, s, v), *r;
    tj_value none[4] = {T(x), tj_v_ints(dim, 1), tj_v_none(), tj_v_bool(false)};
    cr_assert_eq(decomposed("aten::var.correction", none, &r), TJ_OK);
    cr_expect_float_eq(tj_tensor_item_at(r, 0), 5.0 / 3.0, 1e-6);
    tj_value big[4] = {T(x), tj_v_ints(dim, 1), tj_v_int(4), tj_v_bool(false)};
    cr_assert_eq(decomposed("aten::var.correction", big, &r), TJ_OK);
    cr_expect(isinf(tj_tensor_item_at(r, 0)), "5 / max(0, 4 - 4) is inf");
    tj_value bigger[4] = {T(x), tj_v_ints(dim, 1), tj_v_int(9), tj_v_bool(false)};
    cr_assert_eq(decomposed("aten::var.correction", bigger, &r), TJ_OK);
    cr_expect(isinf(tj_tensor_item_at(r, 0)), "divisor max(0, 4 - 9) = 0");
    tj_tensor *outs[2];
    tj_value empty[4] = {T(tj_zeros(e, 1, -1)), tj_v_ints(dim, 1), tj_v_none(), tj_v_bool(false)};
    cr_assert_eq(decomposed("aten::var_mean.correction", empty, outs), TJ_OK);
    cr_expect(isnan(tj_tensor_item_at(outs[0], 0)) && isnan(tj_tensor_item_at(outs[1], 0)));
    /* empty is nan with a negative correction too (PyTorch), not 0 / (0 + 1),
     * kernel and decomposition alike */
    const char *ops[2] = {"aten::var.correction", "aten::std.correction"};
    for (int k = 0; k < 2; k++) {
        tj_value neg[4] = {T(tj_zeros(e, 1, -1)), tj_v_ints(dim, 1), tj_v_int(-1), tj_v_bool(false)}, eager;
        cr_assert_eq(decomposed(ops[k], neg, &r), TJ_OK, "%s", tj_last_error());
        cr_expect(isnan(tj_tensor_item_at(r, 0)), "%s decomposed: %g", ops[k], tj_tensor_item_at(r, 0));
        cr_assert_eq(tj_call(ops[k], neg, 4, &eager), TJ_OK, "%s", tj_last_error());
        cr_expect(isnan(tj_tensor_item_at(eager.u.t, 0)), "%s kernel: %g", ops[k], tj_tensor_item_at(eager.u.t, 0));
    }
}

Test(decomps, nll_loss_never_reads_ignored_targets)
{
    int64_t s[2] = {3, 4}, st[1] = {3};
    const float v[12] = {0};
    tj_tensor *self = test_f32(2, s, v), *outs[2];
    const int64_t ignored[3] = {-100, -100, -100}, custom[3] = {7, 1, 7};
    tj_tensor *t_ign = tj_tensor_from_data(TJ_INT64, 1, st, ignored), *t_custom = tj_tensor_from_data(TJ_INT64, 1, st, custom);
    /* all ignored, mean: nan loss, zero total weight, zero gradient */
    tj_value fwd[5] = {T(self), T(t_ign), tj_v_none(), tj_v_int(1), tj_v_int(-100)};
    cr_assert_eq(decomposed("aten::nll_loss_forward", fwd, outs), TJ_OK, "%s", tj_last_error());
    cr_expect(isnan(tj_tensor_item_at(outs[0], 0)));
    cr_expect_eq(tj_tensor_item_at(outs[1], 0), 0);
    tj_tensor *grad;
    tj_value bwd[7] = {T(tj_tensor_scalar_f32(1)), T(self), T(t_ign), tj_v_none(), tj_v_int(1), tj_v_int(-100),
                       T(outs[1])};
    cr_assert_eq(decomposed("aten::nll_loss_backward", bwd, &grad), TJ_OK, "%s", tj_last_error());
    for (int i = 0; i < 12; i++) cr_expect_eq(tj_tensor_item_at(grad, i), 0);
    /* ignore_index 7 lies outside the 4 classes: never used as an index */
    tj_value fwd7[5] = {T(self), T(t_custom), tj_v_none(), tj_v_int(2), tj_v_int(7)};
    cr_expect_eq(decomposed("aten::nll_loss_forward", fwd7, outs), TJ_OK, "%s", tj_last_error());
}

/* nll_loss_forward(self, target, weight, mean, ignore_index -1) */
static tj_status nll_mean(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    *n_out = 2;
    return tj_nll_loss_forward(in[0], in[1], in[2], 1, -1, &out[0], &out[1]);
}

/* fn traced in fake mode with the core decompositions (primitives only)
 * and compiled. */
static tj_plan *compile_core_fake(tj_trace_fn fn, tj_tensor *const *in, int n_in)
{
    tj_decomp_table *core = tj_core_decompositions();
    tj_graph *g = tj_make_fx(fn, NULL, in, n_in, core, TJ_TRACE_FAKE);
    tj_decomp_table_free(core);
    cr_assert_not_null(g, "%s", tj_last_error());
    cr_expect(test_only_primitives(g));
    tj_plan *p = tj_compile(g, NULL);
    tj_graph_free(g);
    cr_assert_not_null(p, "%s", tj_last_error());
    return p;
}

/* The shapes-only trace cannot check the targets: the replayed graph must,
 * as the kernel does, instead of giving an out-of-range target no weight
 * (a silently wrong loss in a compiled training step). */
Test(decomps, replayed_nll_loss_fails_on_a_target_out_of_range)
{
    const float logp[6] = {-0.5f, -1.5f, -2.5f, -0.25f, -1.25f, -3.0f}, weight[3] = {1.0f, 2.0f, 0.5f};
    tj_tensor *in[3] = {test_f32(2, (int64_t[]){2, 3}, logp), test_i64(1, (int64_t[]){2}, (int64_t[]){2, -1}),
                        test_f32(1, (int64_t[]){3}, weight)};
    tj_plan *p = compile_core_fake(nll_mean, in, 3);
    tj_tensor *out[2];
    /* row 0 takes class 2 (weight 0.5), row 1 is ignored: 2.5 * 0.5 / 0.5 */
    cr_assert_eq(tj_plan_run(p, in, 3, out), TJ_OK, "%s", tj_last_error());
    cr_expect_eq(tj_tensor_item_at(out[0], 0), 2.5);
    cr_expect_eq(tj_tensor_item_at(out[1], 0), 0.5);
    /* the suite's scope owns the tensors made here and the plan's outputs */
    for (int k = 0; k < 2; k++) {
        const int64_t bad[2][2] = {{2, 3}, {-2, 0}};
        tj_tensor *args[3] = {in[0], test_i64(1, (int64_t[]){2}, bad[k]), in[2]};
        cr_expect_eq(tj_plan_run(p, args, 3, out), TJ_ERR_INDEX, "target %lld of 3 classes", (long long)bad[k][k]);
        cr_expect(strstr(tj_last_error(), "out of bounds"), "%s", tj_last_error());
        cr_expect(!out[0] && !out[1]);
    }
    tj_plan_free(p);
}

static tj_status index_copy_rows(void *ctx, tj_tensor *const *in, int n_in, tj_tensor **out, int *n_out)
{
    (void)ctx;
    (void)n_in;
    out[0] = tj_index_copy(in[0], 0, in[1], in[2]);
    *n_out = 1;
    return out[0] ? TJ_OK : tj_last_status();
}

/* index_copy refuses a negative index as its kernel does (torch 1.13: its
 * decomposition too, "index_copy_(): index -1 is out of bounds for
 * dimension 0 with size 5"), where index_put would wrap it: traced on the
 * real index and replayed with a new one. A repeated index keeps its last
 * row; torch:
 *   torch.arange(10.).view(5, 2).index_copy(0, torch.tensor([4, 0, 4]),
 *       torch.tensor([[1., 2], [3, 4], [5, 6]])) -> [3, 4, 2, 3, 4, 5, 6, 7, 5, 6] */
Test(decomps, decomposed_index_copy_refuses_a_negative_index_traced_and_replayed)
{
    const float x[10] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, src[6] = {1, 2, 3, 4, 5, 6};
    const double want[10] = {3, 4, 2, 3, 4, 5, 6, 7, 5, 6};
    tj_tensor *in[3] = {test_f32(2, (int64_t[]){5, 2}, x), test_i64(1, (int64_t[]){3}, (int64_t[]){4, 0, 4}),
                        test_f32(2, (int64_t[]){3, 2}, src)};
    tj_tensor *neg = test_i64(1, (int64_t[]){3}, (int64_t[]){0, -1, 2});
    tj_tensor *bad[3] = {in[0], neg, in[2]};
    tj_decomp_table *core = tj_core_decompositions();
    cr_expect_null(tj_make_fx(index_copy_rows, NULL, bad, 3, core, TJ_TRACE_REAL));
    cr_expect_eq(tj_last_status(), TJ_ERR_INDEX, "%s", tj_last_error());
    cr_expect(strstr(tj_last_error(), "index -1 is out of bounds") != NULL, "%s", tj_last_error());
    tj_decomp_table_free(core);
    tj_plan *p = compile_core_fake(index_copy_rows, in, 3);
    tj_tensor *out[1];
    cr_assert_eq(tj_plan_run(p, in, 3, out), TJ_OK, "%s", tj_last_error());
    test_expect_close(out[0], want, 10, 0, 0);
    cr_expect_eq(tj_plan_run(p, bad, 3, out), TJ_ERR_INDEX);
    cr_expect(strstr(tj_last_error(), "index -1 is out of bounds") != NULL, "%s", tj_last_error());
    tj_plan_free(p);
}

Test(decomps, log_softmax_far_below_the_max_stays_finite)
{
    int64_t s[2] = {1, 3};
    const float v[3] = {0, -200, -1000}; /* PyTorch: [0, -200, -1000] */
    tj_value args[3] = {T(test_f32(2, s, v)), tj_v_int(1), tj_v_bool(false)};
    tj_tensor *r;
    cr_assert_eq(decomposed("aten::_log_softmax", args, &r), TJ_OK);
    for (int i = 0; i < 3; i++) cr_expect_float_eq(tj_tensor_item_at(r, i), v[i], 1e-4);
}

Test(decomps, logsumexp_of_an_all_minus_inf_row_is_minus_inf)
{
    int64_t s[2] = {2, 2}, dim[1] = {1};
    const float v[4] = {-INFINITY, -INFINITY, 0, 0};
    tj_value args[3] = {T(test_f32(2, s, v)), tj_v_ints(dim, 1), tj_v_bool(false)};
    tj_tensor *r;
    cr_assert_eq(decomposed("aten::logsumexp", args, &r), TJ_OK);
    cr_expect(isinf(tj_tensor_item_at(r, 0)) && tj_tensor_item_at(r, 0) < 0);
    cr_expect_float_eq(tj_tensor_item_at(r, 1), log(2.0), 1e-6);
}

/* Integer input converts to float32 and shifts by its max as the kernel (and
 * torch) does: unshifted, exp(100) overflowed float32 and the result was inf. */
Test(decomps, logsumexp_of_large_integers_shifts_by_the_max)
{
    int64_t s[2] = {2, 2}, dim[1] = {1};
    const int64_t v[4] = {100, 100, 4611686018427387904LL, 3};
    tj_value args[3] = {T(test_i64(2, s, v)), tj_v_ints(dim, 1), tj_v_bool(false)};
    tj_tensor *r;
    cr_assert_eq(decomposed("aten::logsumexp", args, &r), TJ_OK, "%s", tj_last_error());
    cr_assert_eq(tj_tensor_dtype(r), TJ_FLOAT32);
    /* PyTorch 1.13: [100.6931, 4.6117e+18] */
    cr_expect_float_eq(tj_tensor_item_at(r, 0), (float)(100 + log(2.0)), 1e-5);
    cr_expect_eq(tj_tensor_item_at(r, 1), (float)4611686018427387904.0);
}

/* A negative correction is valid (torch.std(x, correction=-1) divides by
 * N + 1): the decomposition passed it to tj_var, which takes it for None. */
Test(decomps, std_with_a_negative_correction_divides_by_n_plus_its_magnitude)
{
    int64_t s[1] = {4}, dim[1] = {0};
    tj_tensor *x = test_f64(1, s, (const double[]){1, 2, 4, 7});
    tj_value args[4] = {T(x), tj_v_ints(dim, 1), tj_v_int(-1), tj_v_bool(false)};
    tj_tensor *r;
    cr_assert_eq(decomposed("aten::std.correction", args, &r), TJ_OK, "%s", tj_last_error());
    cr_expect_eq(tj_tensor_item_at(r, 0), sqrt(21.0 / 5), "PyTorch: sqrt(4.2) = 2.04939015319192");
}

/* A float32 norm of a small order is computed in float64 and rounded once,
 * as the kernel: in float32, |x|^0.001 rounds and the power 1000 makes that
 * a 1e-4 relative error (3.79309 for 3.79322). */
Test(decomps, vector_norm_of_a_small_order_rounds_once_as_the_kernel)
{
    int64_t s[1] = {3}, dim[1] = {-1};
    tj_tensor *x = test_f32(1, s, (const float[]){3.7932234f, -0.25f, 1e-3f});
    const double ords[3] = {0.001, 3.5, -1.5};
    for (int k = 0; k < 3; k++) {
        tj_value args[5] = {T(x), tj_v_float(ords[k]), tj_v_ints(dim, 1), tj_v_bool(false), tj_v_none()}, eager;
        tj_tensor *r;
        cr_assert_eq(decomposed("aten::linalg_vector_norm", args, &r), TJ_OK, "%s", tj_last_error());
        cr_assert_eq(tj_call("aten::linalg_vector_norm", args, 5, &eager), TJ_OK, "%s", tj_last_error());
        cr_expect_eq(tj_tensor_item_at(r, 0), tj_tensor_item_at(eager.u.t, 0), "ord %g: decomposed %.9g, kernel %.9g",
                     ords[k], tj_tensor_item_at(r, 0), tj_tensor_item_at(eager.u.t, 0));
    }
}

Test(decomps, layer_norm_constant_and_offset_rows_exact_to_float32)
{
    int64_t s[2] = {2, 4}, ns[1] = {4};
    const float v[8] = {3, 3, 3, 3, 10000.5f, 10000, 10001, 10001.5f};
    tj_value args[5] = {T(test_f32(2, s, v)), tj_v_ints(ns, 1), tj_v_none(), tj_v_none(), tj_v_float(1e-5)};
    tj_tensor *outs[3];
    cr_assert_eq(decomposed("aten::native_layer_norm", args, outs), TJ_OK, "%s", tj_last_error());
    /* float64: mean 10000.75, var 0.3125, rstd 1/sqrt(0.31251) */
    double rstd = 1.0 / sqrt(0.3125 + 1e-5), dev[4] = {-0.25, -0.75, 0.25, 0.75};
    for (int i = 0; i < 4; i++) {
        cr_expect_eq(tj_tensor_item_at(outs[0], i), 0, "constant row -> 0");
        cr_expect_float_eq(tj_tensor_item_at(outs[0], 4 + i), dev[i] * rstd, 1e-5);
    }
    cr_expect_float_eq(tj_tensor_item_at(outs[2], 0), 1.0 / sqrt(1e-5), 1e-2);
    cr_expect_float_eq(tj_tensor_item_at(outs[1], 1), 10000.75, 1e-3);
}

Test(decomps, div_rounding_modes_work_on_the_exact_quotient)
{
    int64_t s[1] = {3};
    const float a[3] = {1, 7, -7}, b[3] = {0.1f, 2, 2}, floor_ref[3] = {9, 3, -4}, trunc_ref[3] = {10, 3, -3};
    tj_tensor *x = test_f32(1, s, a), *y = test_f32(1, s, b);
    tj_tensor *fl = tj_div_mode(x, y, "floor"), *tr = tj_div_mode(x, y, "trunc");
    cr_assert_not_null(fl);
    for (int i = 0; i < 3; i++) {
        cr_expect_eq(tj_tensor_item_at(fl, i), floor_ref[i], "floor %d", i);
        cr_expect_eq(tj_tensor_item_at(tr, i), trunc_ref[i], "trunc %d", i);
    }
    /* div.Tensor_mode is the rounding primitive: the core table keeps it */
    tj_decomp_table *core = tj_core_decompositions();
    cr_expect_not(tj_decomp_table_contains(core, tj_op_find("aten::div.Tensor_mode")));
    tj_decomp_table_free(core);
}

Test(decomps, gelu_tanh_uses_the_float32_formula)
{
    int64_t s[1] = {6};
    const float v[6] = {-3, -1, -0.1f, 0.1f, 1, 3};
    const double ref[6] = {-0.0036374330520629883, -0.15880799293518066, -0.046017248183488846,
                           0.053982753306627274,  0.8411920070648193,   2.9963626861572266};
    tj_tensor *x = test_f32(1, s, v), *r;
    tj_value args[2] = {T(x), tj_v_str("tanh")};
    cr_assert_eq(decomposed("aten::gelu", args, &r), TJ_OK);
    tj_tensor *k = tj_gelu(x, "tanh");
    for (int i = 0; i < 6; i++) {
        /* the kernel avoids 1 + tanh's cancellation (x sigmoid(2u)): close, not bit-equal */
        cr_expect_float_eq(tj_tensor_item_at(r, i), tj_tensor_item_at(k, i), 1e-7, "close to the kernel at %d", i);
        cr_expect_float_eq(tj_tensor_item_at(r, i), ref[i], 3e-7);
    }
}

Test(decomps, clamp_propagates_nan_from_tensor_bounds)
{
    int64_t s[1] = {3};
    const float x[3] = {1, 2, 3}, lo[3] = {NAN, 0, 0}, hi[3] = {5, NAN, 2};
    tj_value args[3] = {T(test_f32(1, s, x)), T(test_f32(1, s, lo)), T(test_f32(1, s, hi))};
    tj_tensor *r;
    cr_assert_eq(decomposed("aten::clamp.Tensor", args, &r), TJ_OK);
    cr_expect(isnan(tj_tensor_item_at(r, 0)) && isnan(tj_tensor_item_at(r, 1)));
    cr_expect_eq(tj_tensor_item_at(r, 2), 2);
}

/* A float result may come from a bool operand (bool with float promotes to
 * the float): the kernels accept it, and so must the decompositions, which
 * used to call abs / neg on the bool operand and fail. */
Test(decomps, float_results_of_bool_operands_decompose_like_their_kernels)
{
    int64_t s[1] = {4};
    const bool m[4] = {true, false, true, false};
    const float v[4] = {-1.5f, 0.25f, 2, INFINITY};
    tj_tensor *b = test_tensor(TJ_BOOL, 1, s, m), *f = test_f32(1, s, v);
    const char *ops[5] = {"aten::logaddexp", "aten::sigmoid_backward", "aten::tanh_backward", "aten::gelu_backward",
                          "aten::gelu_backward"};
    const char *approximate[5] = {NULL, NULL, NULL, "tanh", "none"};
    for (int i = 0; i < 5; i++) {
        for (int order = 0; order < 2; order++) {
            tj_value args[3] = {T(order ? f : b), T(order ? b : f), tj_v_str(approximate[i])};
            tj_value want;
            cr_assert_eq(tj_call(ops[i], args, approximate[i] ? 3 : 2, &want), TJ_OK, "%s: %s", ops[i],
                         tj_last_error());
            tj_tensor *got = NULL;
            cr_assert_eq(decomposed(ops[i], args, &got), TJ_OK, "%s (bool operand %d): %s", ops[i], order,
                         tj_last_error());
            double w[4];
            for (int k = 0; k < 4; k++) w[k] = tj_tensor_item_at(want.u.t, k);
            test_assert_dtype_shape(got, TJ_FLOAT32, 1, s);
            test_expect_close(got, w, 4, 1e-6, 0);
        }
    }
}

/* The loss promotes a bool operand as its kernel does (torch._decomp's
 * mse_loss computes in the promoted dtype: bool - float is no subtraction
 * of a bool tensor there). torch:
 *   torch.ops.aten.mse_loss(torch.tensor([True, False, True, False]), torch.tensor([-1.5, 0.25, 2, 3]), r)
 *   -> [6.25, 0.0625, 1, 9] (r = 0), 4.078125 (1), 16.3125 (2); the same with the operands swapped */
Test(decomps, mse_loss_of_a_bool_operand_decomposes_like_its_kernel)
{
    int64_t s[1] = {4};
    const bool m[4] = {true, false, true, false};
    const float v[4] = {-1.5f, 0.25f, 2, 3};
    const double none[4] = {6.25, 0.0625, 1, 9}, mean = 4.078125, sum = 16.3125;
    tj_tensor *b = test_tensor(TJ_BOOL, 1, s, m), *f = test_f32(1, s, v);
    for (int reduction = 0; reduction < 3; reduction++)
        for (int order = 0; order < 2; order++) {
            tj_value args[3] = {T(order ? f : b), T(order ? b : f), tj_v_int(reduction)};
            tj_tensor *got = NULL;
            cr_assert_eq(decomposed("aten::mse_loss", args, &got), TJ_OK, "reduction %d, bool operand %d: %s",
                         reduction, order, tj_last_error());
            cr_assert_eq(tj_tensor_dtype(got), TJ_FLOAT32);
            if (reduction == 0) test_expect_close(got, none, 4, 0, 0);
            else cr_expect_eq(tj_tensor_item_at(got, 0), reduction == 1 ? mean : sum, "reduction %d", reduction);
        }
}

/* Mixed dtypes compute in the result dtype, as the kernel and torch._refs'
 * promotion wrapper: float32 0.1 * int64 3 for a float64 self is the float64
 * product 0.30000000447..., not float32's 0.30000001192... */
Test(decomps, addcmul_and_addcdiv_of_mixed_dtypes_compute_in_the_result_dtype)
{
    int64_t s[1] = {1};
    tj_tensor *self = test_f64(1, s, (const double[]){0}), *t1 = test_f32(1, s, (const float[]){0.1f}),
              *t2 = test_i64(1, s, (const int64_t[]){3});
    const char *ops[2] = {"aten::addcmul", "aten::addcdiv"};
    for (int k = 0; k < 2; k++) {
        tj_value args[4] = {T(self), T(t1), T(t2), tj_v_int(1)};
        tj_tensor *r, *want = k == 0 ? tj_addcmul(self, t1, t2, tj_v_int(1)) : tj_addcdiv(self, t1, t2, tj_v_int(1));
        cr_assert_not_null(want, "%s", tj_last_error());
        cr_assert_eq(decomposed(ops[k], args, &r), TJ_OK, "%s", tj_last_error());
        cr_assert_eq(tj_tensor_dtype(r), TJ_FLOAT64);
        double expected = k == 0 ? (double)0.1f * 3 : (double)0.1f / 3;
        cr_expect_eq(tj_tensor_item_at(want, 0), expected, "%s kernel", ops[k]);
        cr_expect_eq(tj_tensor_item_at(r, 0), expected, "%s decomposed: %.17g", ops[k], tj_tensor_item_at(r, 0));
    }
}

/* clamp.Tensor of a bool self between float32 and float64 0-dim bounds is
 * float64 (the 0-dim bounds promote together): the decomposition took
 * maximum(self, lo) in float32 first and rounded hi to it. */
Test(decomps, clamp_tensor_converts_every_operand_to_the_result_dtype)
{
    int64_t s[1] = {2};
    tj_tensor *self = test_tensor(TJ_BOOL, 1, s, (const bool[]){true, false});
    tj_tensor *lo = test_f32(0, NULL, (const float[]){0.5f}), *hi = test_f64(0, NULL, (const double[]){0.945264809265531});
    tj_value args[3] = {T(self), T(lo), T(hi)}, eager;
    tj_tensor *r;
    cr_assert_eq(decomposed("aten::clamp.Tensor", args, &r), TJ_OK, "%s", tj_last_error());
    cr_assert_eq(tj_call("aten::clamp.Tensor", args, 3, &eager), TJ_OK, "%s", tj_last_error());
    cr_assert_eq(tj_tensor_dtype(r), TJ_FLOAT64);
    /* PyTorch: [0.945264809265531, 0.5] */
    cr_expect_eq(tj_tensor_item_at(eager.u.t, 0), 0.945264809265531);
    cr_expect_eq(tj_tensor_item_at(r, 0), 0.945264809265531, "decomposed %.17g", tj_tensor_item_at(r, 0));
    cr_expect_eq(tj_tensor_item_at(r, 1), 0.5);
}

/* A decomposed call refuses the dtypes its kernel refuses, with the
 * kernel's message (torch: "addcmul_cpu_out" not implemented for 'Bool';
 * "Integer division with addcdiv is no longer supported"; lerp: "expected
 * dtype float for `end` but got dtype double"), instead of tracing a graph
 * the eager call never runs. */
Test(decomps, decompositions_refuse_the_dtypes_their_kernels_refuse)
{
    int64_t s[1] = {3};
    const bool m[3] = {true, false, true};
    const int64_t iv[3] = {-3, 1, 7};
    const float fv[3] = {1.5f, -2.25f, 0};
    const double dv[3] = {1.5, -2.25, 0};
    tj_tensor *b = test_tensor(TJ_BOOL, 1, s, m), *i = test_i64(1, s, iv), *f = test_f32(1, s, fv),
              *d = test_f64(1, s, dv);
    struct {
        const char *op;
        tj_value args[4];
        int n;
        const char *message;
    } cases[4] = {
        {"aten::addcmul", {T(b), T(b), T(b), tj_v_int(1)}, 4, "aten::addcmul"},
        {"aten::addcdiv", {T(i), T(i), T(i), tj_v_int(1)}, 4, "aten::addcdiv"},
        {"aten::lerp.Scalar", {T(f), T(d), tj_v_float(0.5)}, 3, "aten::lerp.Scalar"},
        {"aten::lerp.Scalar", {T(i), T(i), tj_v_float(0.25)}, 3, "aten::lerp.Scalar"},
    };
    for (int k = 0; k < 4; k++) {
        tj_value eager;
        tj_status want = tj_call(cases[k].op, cases[k].args, cases[k].n, &eager);
        cr_assert_neq(want, TJ_OK, "%s (case %d) runs eagerly", cases[k].op, k);
        tj_tensor *got = NULL;
        cr_expect_eq(decomposed(cases[k].op, cases[k].args, &got), want, "%s (case %d): %s", cases[k].op, k,
                     tj_last_error());
        cr_expect(strstr(tj_last_error(), cases[k].message) != NULL, "case %d: %s", k, tj_last_error());
    }
}

/* A shape function accepts an output whose element count overflows (the
 * kernel's call fails when it makes the tensor); a decomposition must fail
 * there too, as the kernel does, before it multiplies those sizes (signed
 * overflow: UBSan in decomps/conv.c's im2col). */
Test(decomps, an_output_whose_element_count_overflows_fails_decomposed_as_eagerly)
{
    int64_t xs[4] = {1, 1, 4, 4}, ws[4] = {1, 1, 2, 2}, one[2] = {1, 1}, pad[2] = {INT64_MAX / 4, 0}, zero[2] = {0, 0};
    float v[16] = {0};
    tj_tensor *x = test_f32(4, xs, v), *w = test_f32(4, ws, v);
    tj_value args[9] = {T(x), T(w), tj_v_none(), tj_v_ints(one, 2), tj_v_ints(pad, 2), tj_v_ints(one, 2),
                        tj_v_bool(false), tj_v_ints(zero, 2), tj_v_int(1)};
    tj_value eager;
    cr_assert_eq(tj_call("aten::convolution", args, 9, &eager), TJ_ERR_OVERFLOW);
    tj_tensor *got = NULL;
    cr_expect_eq(decomposed("aten::convolution", args, &got), TJ_ERR_OVERFLOW, "%s", tj_last_error());
    cr_expect(strstr(tj_last_error(), "aten::convolution: output 0") && strstr(tj_last_error(), "overflows"), "%s",
              tj_last_error());
}

static tj_status eval_abs_and_norm(void *ctx, tj_tensor *const *in, int n_in, tj_tensor **out, int *n_out)
{
    (void)ctx;
    (void)n_in;
    out[0] = tj_abs(in[0]);
    out[1] = tj_linalg_vector_norm(in[0], tj_v_float(-1), NULL, 0, false, TJ_DTYPE_NONE);
    *n_out = 2;
    return out[0] && out[1] ? TJ_OK : tj_last_status();
}

/* maximum(x, -x) keeps one of two equal zeros: abs(-0) must still be +0, or
 * the order -1 norm's 1 / |x| is -inf and its sum with +inf nan. torch:
 *   torch.linalg.vector_norm(torch.tensor([0., -0., 3.]), ord=-1) -> 0 */
Test(decomps, abs_gives_plus_zero_for_both_zeros_and_the_negative_order_norm_stays_finite)
{
    tj_tensor *x = test_f32(1, (int64_t[]){3}, (float[]){0.0f, -0.0f, 3});
    tj_decomp_table *core = tj_core_decompositions();
    tj_graph *g = tj_make_fx(eval_abs_and_norm, NULL, &x, 1, core, TJ_TRACE_REAL);
    tj_decomp_table_free(core);
    cr_assert_not_null(g, "%s", tj_last_error());
    tj_tensor *out[2];
    cr_assert_eq(tj_graph_run(g, &x, 1, out), TJ_OK, "%s", tj_last_error());
    tj_graph_free(g);
    for (int i = 0; i < 3; i++) {
        float v = ((const float *)tj_tensor_data(out[0]))[i];
        cr_expect(v == (i == 2 ? 3 : 0) && !signbit(v), "abs[%d] = %g", i, v);
    }
    cr_expect_eq(tj_tensor_item_at(out[1], 0), 0);
}

/* ---- traced counterparts, registration, cycles ---- */

static double p_drop = 0.5;

static tj_status eval_dropout(void *ctx, tj_tensor *const *in, int n_in, tj_tensor **out, int *n_out)
{
    (void)ctx;
    (void)n_in;
    out[0] = tj_dropout(in[0], p_drop, false);
    out[1] = tj_ones(tj_tensor_shape(in[0]), tj_tensor_ndim(in[0]), TJ_BOOL);
    *n_out = 2;
    return out[0] && out[1] ? TJ_OK : tj_last_status();
}

static tj_status train_dropout(void *ctx, tj_tensor *const *in, int n_in, tj_tensor **out, int *n_out)
{
    (void)ctx;
    (void)n_in;
    out[0] = tj_dropout(in[0], p_drop, true);
    *n_out = 1;
    return out[0] ? TJ_OK : tj_last_status();
}

Test(decomps, traced_counterpart_replaces_native_dropout)
{
    int64_t s[2] = {4, 5};
    tj_tensor *x = tj_randn(s, 2, -1);
    tj_graph *eval = tj_make_fx(eval_dropout, NULL, &x, 1, NULL, TJ_TRACE_REAL);
    cr_assert_not_null(eval, "%s", tj_last_error());
    tj_decomp_table *t = tj_decomp_table_new();
    cr_assert_eq(tj_decomp_table_add_graph(t, tj_op_find("aten::native_dropout"), eval), TJ_OK, "%s", tj_last_error());
    tj_graph *g = tj_make_fx(train_dropout, NULL, &x, 1, t, TJ_TRACE_REAL);
    cr_assert_not_null(g, "%s", tj_last_error());
    for (int i = 0; i < tj_graph_num_nodes(g); i++) {
        const tj_op *op = tj_graph_node_op(g, i);
        if (!op) continue;
        cr_expect_not(tj_op_is_random(op), "random %s left", tj_op_name(op));
        cr_expect_null(strstr(tj_op_name(op), "dropout"), "%s left", tj_op_name(op));
    }
    tj_tensor *r;
    cr_assert_eq(tj_graph_run(g, &x, 1, &r), TJ_OK);
    for (int i = 0; i < 20; i++) cr_expect_eq(tj_tensor_item_at(r, i), tj_tensor_item_at(x, i));
    char *text = test_decomp_table_text(t);
    cr_expect(strstr(text, "aten::native_dropout.default -> graph(1 inputs"), "%s", text);
    free(text);
    tj_graph_free(g);
    tj_graph_free(eval);
    tj_decomp_table_free(t);
}

static tj_status relu_as_maximum(const tj_value *args, tj_value *outs)
{
    tj_tensor *x = args[0].u.t;
    tj_tensor *r = tj_maximum(x, tj_zeros(NULL, 0, (int)tj_tensor_dtype(x)));
    outs[0] = tj_v_tensor(r);
    return r ? TJ_OK : tj_last_status();
}

static tj_status trace_relu(void *ctx, tj_tensor *const *in, int n_in, tj_tensor **out, int *n_out)
{
    (void)ctx;
    (void)n_in;
    out[0] = tj_relu(in[0]);
    *n_out = 1;
    return out[0] ? TJ_OK : tj_last_status();
}

Test(decomps, a_decomposition_registered_at_run_time_is_used_by_the_core_table)
{
    const tj_op *relu = tj_op_find("aten::relu");
    cr_assert_eq(tj_register_decomposition(relu, relu_as_maximum, "relu_as_maximum"), TJ_OK);
    tj_decomp_table *core = tj_core_decompositions();
    int64_t s[1] = {3};
    tj_tensor *x = tj_randn(s, 1, -1);
    tj_graph *g = tj_make_fx(trace_relu, NULL, &x, 1, core, TJ_TRACE_REAL);
    cr_assert_not_null(g);
    cr_expect_eq(tj_graph_count_op(g, tj_op_find("aten::maximum")), 1);
    const char *names[1] = {"aten::relu"};
    tj_decomp_table *t = tj_get_decompositions(names, 1);
    char *text = test_decomp_table_text(t);
    cr_expect_str_eq(text, "aten::relu.default -> relu_as_maximum\n");
    free(text);
    tj_decomp_table_free(t);
    tj_graph_free(g);
    tj_decomp_table_free(core);
}

static tj_status relu_via_gelu(const tj_value *args, tj_value *outs)
{
    tj_tensor *r = tj_gelu(args[0].u.t, "none");
    outs[0] = tj_v_tensor(r);
    return r ? TJ_OK : tj_last_status();
}

static tj_status gelu_via_relu(const tj_value *args, tj_value *outs)
{
    tj_tensor *r = tj_relu(args[0].u.t);
    outs[0] = tj_v_tensor(r);
    return r ? TJ_OK : tj_last_status();
}

Test(decomps, a_cycle_through_the_core_table_is_reported_with_its_chain)
{
    cr_assert_eq(tj_register_decomposition(tj_op_find("aten::relu"), relu_via_gelu, "relu_via_gelu"), TJ_OK);
    cr_assert_eq(tj_register_decomposition(tj_op_find("aten::gelu"), gelu_via_relu, "gelu_via_relu"), TJ_OK);
    tj_decomp_table *core = tj_core_decompositions();
    int64_t s[1] = {3};
    tj_tensor *x = tj_randn(s, 1, -1);
    cr_expect_null(tj_make_fx(trace_relu, NULL, &x, 1, core, TJ_TRACE_FAKE));
    cr_expect_eq(tj_last_status(), TJ_ERR_CYCLE);
    cr_expect(strstr(tj_last_error(), "aten::relu -> aten::gelu -> aten::relu"), "%s", tj_last_error());
    tj_decomp_table_free(core);
}

/* ---- tables ---- */

/* A NULL name is refused by both, so that missing() never reports a name
 * get_decompositions() did not skip, or the other way round. */
Test(decomps, get_decompositions_and_missing_both_refuse_null_names)
{
    const char *names[3] = {"aten::gelu", NULL, "aten::exp"};
    cr_expect_null(tj_get_decompositions(names, 3));
    cr_expect_eq(tj_last_status(), TJ_ERR_INVALID_ARGUMENT);
    cr_expect(strstr(tj_last_error(), "tj_get_decompositions: operator name 1 of 3 is NULL"), "%s", tj_last_error());
    cr_expect_eq(tj_decompositions_missing(names, 3, NULL), -1);
    cr_expect(strstr(tj_last_error(), "tj_decompositions_missing: operator name 1 of 3 is NULL"), "%s",
              tj_last_error());
    cr_expect_null(tj_get_decompositions(NULL, 2));
    cr_expect_eq(tj_decompositions_missing(NULL, 2, NULL), -1);
    cr_expect(strstr(tj_last_error(), "NULL operator list"), "%s", tj_last_error());
    /* without the NULL: one table entry (gelu), one missing name (exp) */
    const char *ok[2] = {"aten::gelu", "aten::exp"};
    tj_decomp_table *t = tj_get_decompositions(ok, 2);
    cr_assert_not_null(t, "%s", tj_last_error());
    cr_expect_eq(tj_decomp_table_size(t), 1);
    cr_expect_eq(tj_decompositions_missing(ok, 2, NULL), 1);
    tj_decomp_table_free(t);
}

Test(decomps, get_decompositions_selects_overloads_and_reports_missing_names)
{
    const char *names[4] = {"aten::add", "aten::sub.Tensor", "aten::exp", "aten::no_such_op"};
    tj_decomp_table *t = tj_get_decompositions(names, 4);
    cr_assert_not_null(t);
    /* add.Scalar has one (add.Tensor is a primitive); exp is a primitive */
    cr_expect(tj_decomp_table_contains(t, tj_op_find("aten::add.Scalar")));
    cr_expect_not(tj_decomp_table_contains(t, tj_op_find("aten::add.Tensor")));
    cr_expect(tj_decomp_table_contains(t, tj_op_find("aten::sub.Tensor")));
    cr_expect_not(tj_decomp_table_contains(t, tj_op_find("aten::sub.Scalar")));
    cr_expect_eq(tj_decomp_table_size(t), 2);
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    cr_expect_eq(tj_decompositions_missing(names, 4, f), 2);
    fclose(f);
    cr_expect_str_eq(text, "aten::exp\naten::no_such_op\n");
    free(text);
    tj_decomp_table *other = tj_decomp_table_new();
    tj_decomp_table_add_fn(other, tj_op_find("aten::relu"), relu_as_maximum, "mine");
    cr_assert_eq(tj_decomp_table_merge(t, other), TJ_OK);
    cr_expect_eq(tj_decomp_table_size(t), 3);
    tj_decomp_table_remove(t, tj_op_find("aten::add.Scalar"));
    cr_expect_eq(tj_decomp_table_size(t), 2);
    tj_decomp_table_free(other);
    tj_decomp_table_free(t);
}

Test(decomps, core_table_holds_every_composite_and_no_primitive)
{
    tj_decomp_table *core = tj_core_decompositions();
    int composites = 0;
    for (int i = 0; i < tj_op_count(); i++) {
        const tj_op *op = tj_op_at(i);
        bool in = tj_decomp_table_contains(core, op);
        if (tj_op_kind_of(op) == TJ_OP_COMPOSITE) {
            composites++;
            cr_expect(in, "%s missing", tj_op_name(op));
        } else {
            cr_expect_not(in, "%s in the core table", tj_op_name(op));
        }
    }
    cr_expect_eq(tj_decomp_table_size(core), composites);
    tj_decomp_table_free(core);
}

/* ---- graph-level decomposition ---- */

static tj_status gelu_softmax_(void *ctx, tj_tensor *const *in, int n_in, tj_tensor **out, int *n_out)
{
    (void)ctx;
    (void)n_in;
    tj_tensor *h = tj__softmax(tj_gelu(in[0], "tanh"), -1, false);
    out[0] = tj_add_(in[1], h, tj_v_int(1)) ? h : NULL;
    *n_out = 1;
    return out[0] ? TJ_OK : tj_last_status();
}

Test(decomps, graph_decompose_keeps_values_names_and_write_backs)
{
    int64_t s[2] = {3, 5};
    tj_tensor *in[2] = {tj_randn(s, 2, -1), tj_zeros(s, 2, -1)};
    tj_graph *g = tj_make_fx(gelu_softmax_, NULL, in, 2, NULL, TJ_TRACE_FAKE);
    cr_assert_not_null(g, "%s", tj_last_error());
    cr_assert_gt(tj_pass_functionalize(g), 0);
    cr_assert_eq(tj_graph_set_input_name(g, 0, "x"), TJ_OK);
    cr_expect_eq(tj_graph_count_op(g, tj_op_find("aten::gelu")), 1);
    tj_decomp_table *core = tj_core_decompositions();
    tj_graph *d = tj_graph_decompose(g, core);
    cr_assert_not_null(d, "%s", tj_last_error());
    cr_expect(test_only_primitives(d));
    cr_expect_gt(tj_graph_num_calls(d), tj_graph_num_calls(g));
    cr_expect_str_eq(tj_graph_node_name(d, 0), "x");
    cr_expect_eq(tj_graph_num_outputs(d), tj_graph_num_outputs(g));
    for (int i = 0; i < tj_graph_num_outputs(g); i++)
        cr_expect_eq(tj_graph_output_writeback(d, i), tj_graph_output_writeback(g, i));
    /* same results, same write-back into the second input */
    tj_tensor *acc_a = tj_zeros(s, 2, -1), *acc_b = tj_zeros(s, 2, -1), *ra[2], *rb[2];
    tj_tensor *ia[2] = {in[0], acc_a}, *ib[2] = {in[0], acc_b};
    cr_assert_eq(tj_graph_run(g, ia, 2, ra), TJ_OK);
    cr_assert_eq(tj_graph_run(d, ib, 2, rb), TJ_OK, "%s", tj_last_error());
    for (int i = 0; i < 15; i++) {
        cr_expect_float_eq(tj_tensor_item_at(ra[0], i), tj_tensor_item_at(rb[0], i), 1e-6);
        cr_expect_float_eq(tj_tensor_item_at(acc_a, i), tj_tensor_item_at(acc_b, i), 1e-6);
        cr_expect_gt(tj_tensor_item_at(acc_b, i), 0);
    }
    tj_graph_free(d);
    tj_graph_free(g);
    tj_decomp_table_free(core);
}

Test(decomps, graph_decompose_reports_a_cycle)
{
    cr_assert_eq(tj_register_decomposition(tj_op_find("aten::relu"), relu_via_gelu, "relu_via_gelu"), TJ_OK);
    cr_assert_eq(tj_register_decomposition(tj_op_find("aten::gelu"), gelu_via_relu, "gelu_via_relu"), TJ_OK);
    int64_t s[1] = {3};
    tj_tensor *x = tj_randn(s, 1, -1);
    tj_graph *g = tj_make_fx(trace_relu, NULL, &x, 1, NULL, TJ_TRACE_FAKE);
    cr_assert_not_null(g);
    tj_decomp_table *core = tj_core_decompositions();
    cr_expect_null(tj_graph_decompose(g, core));
    cr_expect_eq(tj_last_status(), TJ_ERR_CYCLE);
    cr_expect_null(tj_graph_decompose(NULL, core));
    cr_expect_eq(tj_last_status(), TJ_ERR_INVALID_ARGUMENT);
    tj_graph_free(g);
    tj_decomp_table_free(core);
}
