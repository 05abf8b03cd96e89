/* Compiled functions (tj_jit): one trace and compile per input signature,
 * the plan reused for every later call with it, in-place updates of inputs
 * written back, and the errors. Values are small integers, so the expected
 * results are exact and written out by hand. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h"

TestSuite(jit, .init = test_scope_open, .fini = test_scope_close);

/* relu(x @ w^T + b) */
static tj_status linear_relu(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx, (void)n;
    out[0] = tj_relu(tj_linear(in[0], in[1], in[2]));
    *n_out = 1;
    return out[0] ? TJ_OK : tj_last_status();
}

static const int64_t W_SHAPE[2] = {2, 3}, B_SHAPE[1] = {2};
static const float W[6] = {1, -1, 2, 0, 1, -3}, B[2] = {1, -2};

/* x [rows, 3] holding 0, 1, 2, ... */
static tj_tensor *x_rows(int64_t rows)
{
    float v[12];
    for (int i = 0; i < 12; i++) v[i] = (float)i;
    int64_t shape[2] = {rows, 3};
    return test_f32(2, shape, v);
}

static void expect_f32(tj_tensor *t, int ndim, const int64_t *shape, const float *want)
{
    cr_assert_not_null(t);
    cr_assert_eq(tj_tensor_ndim(t), ndim);
    for (int d = 0; d < ndim; d++) cr_assert_eq(tj_tensor_size(t, d), shape[d]);
    for (int64_t i = 0; i < tj_tensor_numel(t); i++)
        cr_assert_eq(tj_tensor_item_at(t, i), want[i], "element %ld: %g, expected %g", (long)i,
                     tj_tensor_item_at(t, i), (double)want[i]);
}

static tj_jit_statistics stats_of(const tj_jit *j)
{
    tj_jit_statistics s;
    cr_assert_eq(tj_jit_stats(j, &s), TJ_OK);
    return s;
}

/* row r of x is (3r, 3r + 1, 3r + 2): x w0 + 1 = 6r + 4 (4, 10, 16, 22) and
 * x w1 - 2 = -6r - 7 (relu: 0) */
Test(jit, compiles_once_per_signature_and_reuses_the_plan)
{
    tj_jit *j = tj_jit_new(linear_relu, NULL, NULL);
    cr_assert_not_null(j, "%s", tj_last_error());
    tj_tensor *w = test_f32(2, W_SHAPE, W), *b = test_f32(1, B_SHAPE, B);
    static const float want4[8] = {4, 0, 10, 0, 16, 0, 22, 0};
    const int64_t rows[4] = {4, 4, 3, 4};
    for (int call = 0; call < 4; call++) {
        tj_tensor *in[3] = {x_rows(rows[call]), w, b}, *out[2] = {NULL, NULL};
        int n_out = -1;
        cr_assert_eq(tj_jit_run(j, in, 3, out, 2, &n_out), TJ_OK, "%s", tj_last_error());
        cr_assert_eq(n_out, 1);
        cr_assert_null(out[1]);
        int64_t shape[2] = {rows[call], 2};
        expect_f32(out[0], 2, shape, want4);
    }
    tj_jit_statistics s = stats_of(j);
    cr_assert_eq(s.calls, 4);
    cr_assert_eq(s.compiles, 2); /* batch 4, then batch 3 */
    cr_assert_eq(s.plans, 2);
    cr_assert_eq(s.evictions, 0);
    tj_jit_free(j);
}

/* The signature: dtype, strides, requires_grad, grad mode; not the values. */
Test(jit, dtype_strides_and_grad_mode_are_part_of_the_signature)
{
    tj_jit *j = tj_jit_new(linear_relu, NULL, NULL);
    tj_tensor *w = test_f32(2, W_SHAPE, W), *b = test_f32(1, B_SHAPE, B), *out[1];
    int n_out;
    tj_tensor *in[3] = {x_rows(2), w, b};
    cr_assert_eq(tj_jit_run(j, in, 3, out, 1, &n_out), TJ_OK, "%s", tj_last_error());
    /* same signature, other values: no new trace */
    tj_tensor *x2 = tj_mul_scalar(x_rows(2), tj_v_int(2));
    tj_tensor *in2[3] = {x2, w, b};
    cr_assert_eq(tj_jit_run(j, in2, 3, out, 1, &n_out), TJ_OK, "%s", tj_last_error());
    static const float want2[4] = {7, 0, 19, 0};
    expect_f32(out[0], 2, (int64_t[]){2, 2}, want2);
    cr_assert_eq(stats_of(j).compiles, 1);
    /* w^T^T: a transposed layout of the same values */
    tj_tensor *wt = tj_contiguous(tj_t(w));
    tj_tensor *in3[3] = {x_rows(2), tj_t(wt), b};
    cr_assert_eq(tj_jit_run(j, in3, 3, out, 1, &n_out), TJ_OK, "%s", tj_last_error());
    static const float want1[4] = {4, 0, 10, 0};
    expect_f32(out[0], 2, (int64_t[]){2, 2}, want1);
    cr_assert_eq(stats_of(j).compiles, 2);
    /* requires grad, then the same under no_grad */
    tj_tensor *wg = test_f32(2, W_SHAPE, W);
    tj_tensor_set_requires_grad(wg, true);
    tj_tensor *in4[3] = {x_rows(2), wg, b};
    cr_assert_eq(tj_jit_run(j, in4, 3, out, 1, &n_out), TJ_OK, "%s", tj_last_error());
    cr_assert_eq(stats_of(j).compiles, 3);
    bool prev = tj_no_grad_begin();
    cr_assert_eq(tj_jit_run(j, in4, 3, out, 1, &n_out), TJ_OK, "%s", tj_last_error());
    tj_no_grad_end(prev);
    cr_assert_eq(stats_of(j).compiles, 4);
    /* float64 */
    tj_tensor *in5[3] = {tj_to_copy(x_rows(2), TJ_FLOAT64), tj_to_copy(w, TJ_FLOAT64), tj_to_copy(b, TJ_FLOAT64)};
    cr_assert_eq(tj_jit_run(j, in5, 3, out, 1, &n_out), TJ_OK, "%s", tj_last_error());
    cr_assert_eq(tj_tensor_dtype(out[0]), TJ_FLOAT64);
    expect_f32(out[0], 2, (int64_t[]){2, 2}, want1);
    cr_assert_eq(stats_of(j).compiles, 5);
    cr_assert_eq(stats_of(j).calls, 6);
    tj_jit_free(j);
}

Test(jit, evicts_the_least_recently_used_plan_beyond_the_cache_limit)
{
    tj_jit_options o = {.cache_limit = 2};
    tj_jit *j = tj_jit_new(linear_relu, NULL, &o);
    tj_tensor *w = test_f32(2, W_SHAPE, W), *b = test_f32(1, B_SHAPE, B), *out[1];
    int n_out;
    const int64_t rows[5] = {1, 2, 1, 3, 2}; /* 3 replaces 2 (1 was used since), then 2 replaces 1 */
    for (int call = 0; call < 5; call++) {
        tj_tensor *in[3] = {x_rows(rows[call]), w, b};
        cr_assert_eq(tj_jit_run(j, in, 3, out, 1, &n_out), TJ_OK, "%s", tj_last_error());
    }
    tj_jit_statistics s = stats_of(j);
    cr_assert_eq(s.compiles, 4);
    cr_assert_eq(s.evictions, 2);
    cr_assert_eq(s.plans, 2);
    /* 3 and 2 are held: no compile */
    tj_tensor *in[3] = {x_rows(3), w, b};
    cr_assert_eq(tj_jit_run(j, in, 3, out, 1, &n_out), TJ_OK, "%s", tj_last_error());
    cr_assert_eq(stats_of(j).compiles, 4);
    tj_jit_free(j);
}

/* w.add_(x); returns sum(w): a parameter updated in place */
static tj_status accumulate(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx, (void)n;
    if (!tj_add_(in[0], in[1], tj_v_int(1))) return tj_last_status();
    out[0] = tj_sum(in[0], TJ_DTYPE_NONE);
    *n_out = 1;
    return out[0] ? TJ_OK : tj_last_status();
}

Test(jit, inputs_updated_in_place_are_written_back)
{
    tj_jit *j = tj_jit_new(accumulate, NULL, NULL);
    static const float w0[3] = {1, 2, 3}, x[3] = {10, 20, 30};
    tj_tensor *w = test_f32(1, (int64_t[]){3}, w0), *in[2] = {w, test_f32(1, (int64_t[]){3}, x)}, *out[1];
    int n_out;
    for (int call = 1; call <= 3; call++) {
        cr_assert_eq(tj_jit_run(j, in, 2, out, 1, &n_out), TJ_OK, "%s", tj_last_error());
        cr_assert_eq(n_out, 1);
        cr_assert_eq(tj_tensor_item_at(out[0], 0), 6 + 60 * call);
    }
    static const float want[3] = {31, 62, 93};
    expect_f32(w, 1, (int64_t[]){3}, want);
    /* the plan has the written-back output too; the caller sees fn's own */
    tj_plan *p = tj_jit_plan(j, in, 2);
    cr_assert_not_null(p, "%s", tj_last_error());
    cr_assert_eq(tj_plan_num_outputs(p), 2);
    cr_assert_eq(stats_of(j).compiles, 1);
    tj_jit_free(j);
}

typedef struct hook_log {
    int graphs;
    bool has_addmm, has_linear;
    tj_status status;
} hook_log;

static tj_status record_graph(void *ctx, tj_graph *g)
{
    hook_log *log = ctx;
    log->graphs++;
    log->has_addmm = tj_graph_count_op(g, tj_op_find("aten::addmm.default")) > 0;
    log->has_linear = tj_graph_count_op(g, tj_op_find("aten::linear.default")) > 0;
    cr_assert_str_eq(tj_graph_node_name(g, 0), "x");
    if (log->status != TJ_OK) return tj_error(log->status, "record_graph: refused");
    return TJ_OK;
}

Test(jit, on_graph_sees_each_new_graph_with_the_table_and_names_applied)
{
    static const char *const names[3] = {"x", "weight", "bias"};
    hook_log log = {0};
    tj_decomp_table *core = tj_core_decompositions();
    tj_jit_options o = {.decompositions = core, .input_names = names, .on_graph = record_graph, .on_graph_ctx = &log};
    tj_jit *j = tj_jit_new(linear_relu, NULL, &o);
    tj_tensor *w = test_f32(2, W_SHAPE, W), *b = test_f32(1, B_SHAPE, B), *out[1];
    int n_out;
    tj_tensor *in[3] = {x_rows(2), w, b};
    cr_assert_eq(tj_jit_run(j, in, 3, out, 1, &n_out), TJ_OK, "%s", tj_last_error());
    cr_assert_eq(tj_jit_run(j, in, 3, out, 1, &n_out), TJ_OK, "%s", tj_last_error());
    cr_assert_eq(log.graphs, 1);
    cr_assert(!log.has_addmm && !log.has_linear, "the core table lowers linear to primitives");
    static const float want[4] = {4, 0, 10, 0};
    expect_f32(out[0], 2, (int64_t[]){2, 2}, want);
    /* the hook's error fails the call and nothing is cached */
    log.status = TJ_ERR_UNSUPPORTED;
    tj_tensor *in1[3] = {x_rows(1), w, b};
    cr_assert_eq(tj_jit_run(j, in1, 3, out, 1, &n_out), TJ_ERR_UNSUPPORTED);
    cr_assert_str_eq(tj_last_error(), "record_graph: refused");
    cr_assert_eq(n_out, 0);
    cr_assert_eq(stats_of(j).plans, 1);
    cr_assert_eq(stats_of(j).compiles, 1);
    tj_jit_free(j);
    tj_decomp_table_free(core);
}

/* calls its own jit while traced */
static tj_status reenter(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    tj_jit **j = ctx;
    return tj_jit_run(*j, in, n, out, 1, n_out);
}

static tj_status fails(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx, (void)in, (void)n, (void)out, (void)n_out;
    return tj_error(TJ_ERR_SHAPE, "fails: no");
}

Test(jit, errors_name_the_problem_and_cache_nothing)
{
    tj_tensor *w = test_f32(2, W_SHAPE, W), *b = test_f32(1, B_SHAPE, B), *out[1];
    int n_out;
    tj_tensor *in[3] = {x_rows(2), w, b};

    cr_assert_null(tj_jit_new(NULL, NULL, NULL));
    cr_assert_eq(tj_last_status(), TJ_ERR_INVALID_ARGUMENT);
    cr_assert_null(tj_jit_new(linear_relu, NULL, &(tj_jit_options){.cache_limit = -1}));
    cr_assert(strstr(tj_last_error(), "cache_limit"));
    cr_assert_null(tj_jit_new(linear_relu, NULL, &(tj_jit_options){.compile.writeback = (const int[]){0}}));
    cr_assert(strstr(tj_last_error(), "writeback"));

    tj_jit *j = tj_jit_new(linear_relu, NULL, NULL);
    cr_assert_eq(tj_jit_run(j, in, 3, out, 0, &n_out), TJ_ERR_INVALID_ARGUMENT);
    cr_assert(strstr(tj_last_error(), "returns 1 output, outputs has room for 0"), "%s", tj_last_error());
    cr_assert_eq(tj_jit_run(j, in, 3, NULL, 1, &n_out), TJ_ERR_INVALID_ARGUMENT);
    cr_assert_eq(tj_jit_run(NULL, in, 3, out, 1, &n_out), TJ_ERR_INVALID_ARGUMENT);
    tj_tensor *fake[3] = {tj_tensor_fake(TJ_FLOAT32, 2, (int64_t[]){2, 3}), w, b};
    cr_assert_eq(tj_jit_run(j, fake, 3, out, 1, &n_out), TJ_ERR_INVALID_ARGUMENT);
    cr_assert(strstr(tj_last_error(), "input 0 is a fake tensor"), "%s", tj_last_error());
    /* a shape error of the traced function */
    tj_tensor *bad[3] = {test_f32(2, (int64_t[]){1, 2}, W), w, b};
    cr_assert_eq(tj_jit_run(j, bad, 3, out, 1, &n_out), TJ_ERR_SHAPE);
    cr_assert(strstr(tj_last_error(), "aten::"), "%s", tj_last_error());
    tj_jit_statistics s = stats_of(j);
    cr_assert_eq(s.plans, 1); /* the too-few-outputs call compiled; nothing since */
    cr_assert_eq(s.calls, 0);
    /* usable after failed calls */
    cr_assert_eq(tj_jit_run(j, in, 3, out, 1, &n_out), TJ_OK, "%s", tj_last_error());
    cr_assert_eq(stats_of(j).calls, 1);
    tj_jit_free(j);

    j = tj_jit_new(fails, NULL, NULL);
    cr_assert_eq(tj_jit_run(j, in, 3, out, 1, &n_out), TJ_ERR_SHAPE);
    cr_assert_str_eq(tj_last_error(), "fails: no");
    cr_assert_eq(stats_of(j).plans, 0);
    tj_jit_free(j);

    tj_jit *self = NULL;
    self = tj_jit_new(reenter, &self, NULL);
    cr_assert_eq(tj_jit_run(self, in, 3, out, 1, &n_out), TJ_ERR_UNSUPPORTED);
    cr_assert(strstr(tj_last_error(), "another call of this jit is in progress"), "%s", tj_last_error());
    tj_jit_free(self);
}

/* reads a value to choose what to compute: no graph can hold that */
static tj_status branchy(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx, (void)n;
    out[0] = tj_tensor_item_at(in[0], 0) > 0 ? tj_mul_scalar(in[0], tj_v_int(2)) : tj_neg(in[0]);
    *n_out = 1;
    return out[0] ? TJ_OK : tj_last_status();
}

Test(jit, eager_fallback_calls_a_function_that_cannot_be_traced)
{
    static const float pos[2] = {1, -3}, neg[2] = {-1, 3};
    tj_tensor *in_pos[1] = {test_f32(1, (int64_t[]){2}, pos)}, *in_neg[1] = {test_f32(1, (int64_t[]){2}, neg)}, *out[1];
    int n_out;
    tj_jit *strict = tj_jit_new(branchy, NULL, NULL);
    cr_assert_eq(tj_jit_run(strict, in_pos, 1, out, 1, &n_out), TJ_ERR_UNSUPPORTED);
    cr_assert(strstr(tj_last_error(), "(tj_jit: set eager_fallback to call the function eagerly"), "%s", tj_last_error());
    cr_assert_eq(stats_of(strict).plans, 0);
    tj_jit_free(strict);

    tj_jit *j = tj_jit_new(branchy, NULL, &(tj_jit_options){.eager_fallback = true});
    cr_assert_eq(tj_jit_run(j, in_pos, 1, out, 1, &n_out), TJ_OK, "%s", tj_last_error());
    cr_assert_eq(n_out, 1);
    static const float want_pos[2] = {2, -6}, want_neg[2] = {1, -3};
    expect_f32(out[0], 1, (int64_t[]){2}, want_pos);
    cr_assert_eq(tj_jit_run(j, in_neg, 1, out, 1, &n_out), TJ_OK, "%s", tj_last_error());
    expect_f32(out[0], 1, (int64_t[]){2}, want_neg);
    cr_assert_eq(tj_jit_run(j, in_neg, 1, out, 0, &n_out), TJ_ERR_INVALID_ARGUMENT);
    cr_assert(strstr(tj_last_error(), "returns 1 output, outputs has room for 0"), "%s", tj_last_error());
    cr_assert_null(tj_jit_plan(j, in_pos, 1));
    cr_assert_eq(tj_last_status(), TJ_ERR_UNSUPPORTED);
    tj_jit_statistics s = stats_of(j);
    cr_assert_eq(s.compiles, 1);
    cr_assert_eq(s.eager_signatures, 1);
    cr_assert_eq(s.eager_calls, 2);
    cr_assert_eq(s.calls, 2);
    tj_jit_free(j);
}

/* Reads a value (no graph can hold it), then returns `want` outputs: the
 * negated input, or NULL where `null_at` says. */
typedef struct eager_outputs {
    int room;    /* *n_out as fn saw it */
    int want;    /* the count fn reports */
    int null_at; /* -1: none */
} eager_outputs;

static tj_status read_then_return(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)n;
    eager_outputs *e = ctx;
    e->room = *n_out;
    if (tj_tensor_item_at(in[0], 0) > 1e9) return tj_error(TJ_ERR_INVALID_ARGUMENT, "read_then_return: large");
    for (int k = 0; k < e->want && k < *n_out; k++)
        if (!(out[k] = k == e->null_at ? NULL : tj_neg(in[0]))) return k == e->null_at ? TJ_OK : tj_last_status();
    *n_out = e->want;
    return TJ_OK;
}

/* fn called eagerly gets the room a trace gives it (tj_trace_fn: *n_outputs
 * is the room), and its count and outputs are checked as make_fx checks
 * them: it had room for 0, and a count beyond TJ_MAX_GRAPH_OUTPUTS read
 * past the end of the array (a crash). */
Test(jit, eager_fallback_gives_fn_room_and_checks_its_outputs)
{
    static const float x[2] = {1, 2};
    eager_outputs e = {.want = 1, .null_at = -1};
    tj_jit *j = tj_jit_new(read_then_return, &e, &(tj_jit_options){.eager_fallback = true});
    tj_tensor *in[1] = {test_f32(1, (int64_t[]){2}, x)}, *out[TJ_MAX_GRAPH_OUTPUTS + 8];
    int n_out;
    cr_assert_eq(tj_jit_run(j, in, 1, out, TJ_MAX_GRAPH_OUTPUTS + 8, &n_out), TJ_OK, "%s", tj_last_error());
    cr_assert_eq(e.room, TJ_MAX_GRAPH_OUTPUTS);
    cr_assert_eq(n_out, 1);
    static const float want[2] = {-1, -2};
    expect_f32(out[0], 1, (int64_t[]){2}, want);
    e.want = TJ_MAX_GRAPH_OUTPUTS + 1;
    cr_assert_eq(tj_jit_run(j, in, 1, out, TJ_MAX_GRAPH_OUTPUTS + 8, &n_out), TJ_ERR_INVALID_ARGUMENT);
    cr_assert(strstr(tj_last_error(), "the traced function returned 1025 outputs"), "%s", tj_last_error());
    e.want = -1;
    cr_assert_eq(tj_jit_run(j, in, 1, out, 1, &n_out), TJ_ERR_INVALID_ARGUMENT);
    e = (eager_outputs){.want = 2, .null_at = 1};
    cr_assert_eq(tj_jit_run(j, in, 1, out, 2, &n_out), TJ_ERR_INVALID_ARGUMENT);
    cr_assert(strstr(tj_last_error(), "output 1 of the traced function is NULL"), "%s", tj_last_error());
    cr_assert_eq(n_out, 0);
    tj_jit_statistics s = stats_of(j);
    cr_assert_eq(s.calls, 1);
    cr_assert_eq(s.eager_calls, 1);
    tj_jit_free(j);
}

static tj_status refuse_graph(void *ctx, tj_graph *g)
{
    (void)ctx, (void)g;
    return TJ_ERR_UNSUPPORTED; /* without tj_error: the jit records one */
}

/* on_graph's error fails the call also with eager_fallback on: it is the
 * hook's refusal, not a graph break (it fell back to eager and cached that). */
Test(jit, on_graph_error_is_no_graph_break)
{
    tj_jit *j = tj_jit_new(linear_relu, NULL, &(tj_jit_options){.eager_fallback = true, .on_graph = refuse_graph});
    tj_tensor *in[3] = {x_rows(2), test_f32(2, W_SHAPE, W), test_f32(1, B_SHAPE, B)}, *out[1];
    int n_out;
    for (int call = 0; call < 2; call++) {
        cr_assert_eq(tj_jit_run(j, in, 3, out, 1, &n_out), TJ_ERR_UNSUPPORTED);
        cr_assert(strstr(tj_last_error(), "tj_jit_run: on_graph returned"), "%s", tj_last_error());
    }
    tj_jit_statistics s = stats_of(j);
    cr_assert_eq(s.plans, 0);
    cr_assert_eq(s.eager_signatures, 0);
    cr_assert_eq(s.calls, 0);
    tj_jit_free(j);
}

/* input_names follow tj_graph_set_input_name's rules: an invalid, NULL or
 * repeated name was taken (a graph that prints "a b" does not parse back;
 * a repeat was suffixed, NULL gave arg1_1). */
Test(jit, input_names_follow_the_rules_of_set_input_name)
{
    static const char *const bad[][3] = {{"x", "a b", "bias"}, {"x", NULL, "bias"}, {"x", "x", "bias"}, {"x", "w", "9"}};
    static const char *const why[] = {"input_names[1]: tj_graph_set_input_name: 'a b' is not a valid name",
                                      "input_names[1]: tj_graph_set_input_name: NULL name",
                                      "input_names[1]: tj_graph_set_input_name: name 'x' is already used",
                                      "input_names[2]: tj_graph_set_input_name: '9' is not a valid name"};
    tj_tensor *in[3] = {x_rows(2), test_f32(2, W_SHAPE, W), test_f32(1, B_SHAPE, B)}, *out[1];
    int n_out;
    for (int c = 0; c < 4; c++) {
        tj_jit *j = tj_jit_new(linear_relu, NULL, &(tj_jit_options){.input_names = bad[c], .eager_fallback = true});
        cr_assert_eq(tj_jit_run(j, in, 3, out, 1, &n_out), TJ_ERR_INVALID_ARGUMENT, "case %d", c);
        cr_assert(strstr(tj_last_error(), why[c]), "%s", tj_last_error());
        cr_assert_eq(stats_of(j).plans, 0);
        tj_jit_free(j);
    }
    /* a name a call would take is fine: the names are claimed first */
    static const char *const ok[3] = {"relu", "linear", "addmm"};
    tj_jit *j = tj_jit_new(linear_relu, NULL, &(tj_jit_options){.input_names = ok});
    cr_assert_eq(tj_jit_run(j, in, 3, out, 1, &n_out), TJ_OK, "%s", tj_last_error());
    tj_jit_free(j);
}

/* 3x + 1 through a jit of x + 1 */
static tj_status add_one(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx, (void)n;
    out[0] = tj_add_scalar(in[0], tj_v_int(1));
    *n_out = 1;
    return out[0] ? TJ_OK : tj_last_status();
}

static tj_status triple_then_jit(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)n;
    tj_tensor *x = tj_mul_scalar(in[0], tj_v_int(3));
    if (!x) return tj_last_status();
    return tj_jit_run(ctx, &x, 1, out, 1, n_out);
}

/* A jit called while traced (tj_make_fx of a function calling it, or
 * another jit's fn) is traced through, as make_fx traces through a
 * torch.compile'd function: it refused its fake inputs, or its plan's run
 * on a traced tensor. */
Test(jit, a_jit_called_while_traced_is_traced_through)
{
    static const float x[3] = {1, 2, 3}, want[3] = {4, 7, 10};
    tj_tensor *in[1] = {test_f32(1, (int64_t[]){3}, x)}, *out[1];
    tj_jit *inner = tj_jit_new(add_one, NULL, NULL);
    for (int mode = TJ_TRACE_REAL; mode <= TJ_TRACE_FAKE; mode++) {
        tj_graph *g = tj_make_fx(triple_then_jit, inner, in, 1, NULL, (tj_tracing_mode)mode);
        cr_assert_not_null(g, "%s", tj_last_error());
        cr_assert_eq(tj_graph_count_op(g, tj_op_find("aten::add.Tensor")) +
                         tj_graph_count_op(g, tj_op_find("aten::add.Scalar")), 1);
        cr_assert_eq(tj_graph_run(g, in, 1, out), TJ_OK, "%s", tj_last_error());
        expect_f32(out[0], 1, (int64_t[]){3}, want);
        tj_graph_free(g);
    }
    tj_jit *outer = tj_jit_new(triple_then_jit, inner, NULL);
    int n_out;
    for (int call = 0; call < 2; call++) {
        cr_assert_eq(tj_jit_run(outer, in, 1, out, 1, &n_out), TJ_OK, "%s", tj_last_error());
        expect_f32(out[0], 1, (int64_t[]){3}, want);
    }
    cr_assert_eq(stats_of(outer).compiles, 1);
    cr_assert_eq(stats_of(outer).eager_calls, 0);
    tj_jit_statistics s = stats_of(inner);
    cr_assert_eq(s.compiles, 0); /* traced through 3 times, never compiled */
    cr_assert_eq(s.eager_calls, 3);
    tj_jit_free(outer);
    tj_jit_free(inner);
}

/* sum(in[0] * in[1]), backward into the inputs' .grad */
static tj_status backward_inside(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx, (void)n;
    tj_tensor *loss = tj_sum(tj_mul(in[0], in[1]), TJ_DTYPE_NONE);
    tj_status st = loss ? tj_backward(loss, NULL) : tj_last_status();
    out[0] = loss;
    *n_out = 1;
    return st;
}

/* in[0].add_(in[1]): in[0] takes in[1]'s history when in[1] requires grad */
static tj_status add_into_first(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx, (void)n;
    out[0] = tj_add_(in[0], in[1], tj_v_int(1)) ? tj_neg(in[1]) : NULL;
    *n_out = 1;
    return out[0] ? TJ_OK : tj_last_status();
}

static tj_status mark_first(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx, (void)n;
    tj_status st = tj_tensor_set_requires_grad(in[0], true);
    out[0] = in[1];
    *n_out = 1;
    return st;
}

/* What fn does to its inputs' autograd state eagerly, a plan cannot do to
 * the caller's tensors: such a function is refused (a graph break), or with
 * eager_fallback called eagerly. The plan ran without it: w.grad stayed
 * NULL, x kept no history, w did not require grad, all with TJ_OK. */
Test(jit, autograd_state_changes_of_inputs_are_a_graph_break)
{
    static const float w0[3] = {1, 2, 3}, x0[3] = {4, 5, 6}, want_grad[3] = {4, 5, 6}, want_x[3] = {5, 7, 9};
    static const tj_trace_fn fns[3] = {backward_inside, add_into_first, mark_first};
    static const char *const why[3] = {"stored a gradient into input 0's .grad", "made input 0 require grad",
                                       "made input 0 require grad"};
    for (int f = 0; f < 3; f++)
        for (int eager = 0; eager < 2; eager++) {
            tj_tensor *w = test_f32(1, (int64_t[]){3}, w0), *x = test_f32(1, (int64_t[]){3}, x0), *out[1];
            tj_tensor *in[2] = {f == 0 ? w : x, f == 1 ? w : x};
            if (f < 2) tj_tensor_set_requires_grad(w, true);
            if (f == 2) in[0] = w;
            tj_jit *j = tj_jit_new(fns[f], NULL, &(tj_jit_options){.eager_fallback = eager});
            int n_out;
            tj_status st = tj_jit_run(j, in, 2, out, 1, &n_out);
            if (!eager) {
                cr_assert_eq(st, TJ_ERR_UNSUPPORTED, "fn %d", f);
                cr_assert(strstr(tj_last_error(), why[f]), "%s", tj_last_error());
                cr_assert_eq(stats_of(j).plans, 0);
            } else {
                cr_assert_eq(st, TJ_OK, "%s", tj_last_error());
                cr_assert_eq(stats_of(j).eager_calls, 1);
                if (f == 0) expect_f32(tj_tensor_grad(w), 1, (int64_t[]){3}, want_grad);
                if (f == 1) {
                    cr_assert(tj_tensor_requires_grad(x) && !tj_tensor_is_leaf(x));
                    expect_f32(x, 1, (int64_t[]){3}, want_x);
                }
                if (f == 2) cr_assert(tj_tensor_requires_grad(w));
            }
            tj_jit_free(j);
        }
}

/* As TORCH_LOGS=recompiles: each trace says which guard the last plan failed. */
Test(jit, log_says_why_each_signature_was_traced)
{
    char *text = NULL;
    size_t size = 0;
    FILE *log = open_memstream(&text, &size);
    cr_assert_not_null(log);
    tj_jit *j = tj_jit_new(linear_relu, NULL, &(tj_jit_options){.log = log, .cache_limit = 1});
    tj_tensor *w = test_f32(2, W_SHAPE, W), *b = test_f32(1, B_SHAPE, B), *out[1];
    int n_out;
    tj_tensor *in2[3] = {x_rows(2), w, b}, *in3[3] = {x_rows(3), w, b};
    tj_tensor *in_t[3] = {x_rows(3), tj_t(tj_contiguous(tj_t(w))), b};
    tj_tensor *in_bad[3] = {x_rows(3), test_f32(1, (int64_t[]){3}, W), b};
    cr_assert_eq(tj_jit_run(j, in2, 3, out, 1, &n_out), TJ_OK, "%s", tj_last_error());
    cr_assert_eq(tj_jit_run(j, in2, 3, out, 1, &n_out), TJ_OK, "%s", tj_last_error());
    cr_assert_eq(tj_jit_run(j, in3, 3, out, 1, &n_out), TJ_OK, "%s", tj_last_error());
    cr_assert_eq(tj_jit_run(j, in_t, 3, out, 1, &n_out), TJ_OK, "%s", tj_last_error());
    cr_assert_neq(tj_jit_run(j, in_bad, 3, out, 1, &n_out), TJ_OK);
    fclose(log);
    const char *want[] = {"tj_jit: traced and compiled in ", " ms (first call)\n",
                          " ms (input 0: shape [3, 3], was [2, 3]); evicting the least recently used plan\n",
                          " ms (input 1: strides [1, 2], was [3, 1]); evicting the least recently used plan\n",
                          "tj_jit: tracing or compiling failed in ", " ms (input 1: shape [3], was [2, 3])\n  aten::"};
    const char *at = text;
    for (size_t i = 0; i < sizeof want / sizeof *want; i++) {
        const char *hit = strstr(at, want[i]);
        cr_assert_not_null(hit, "missing '%s' after: %s", want[i], at);
        at = hit + strlen(want[i]);
    }
    cr_assert_eq(stats_of(j).compiles, 3);
    tj_jit_free(j);
    free(text);
}

/* With several plans, the log names the guard of the closest one: after
 * calls with two batch sizes, a w that requires grad is named as such
 * (the most recently used plan differs in x's shape too). A graph break
 * logs its cause. */
Test(jit, log_names_the_guard_of_the_closest_plan_and_a_graph_breaks_cause)
{
    char *text = NULL;
    size_t size = 0;
    FILE *log = open_memstream(&text, &size);
    cr_assert_not_null(log);
    tj_jit *j = tj_jit_new(linear_relu, NULL, &(tj_jit_options){.log = log});
    tj_tensor *w = test_f32(2, W_SHAPE, W), *wg = test_f32(2, W_SHAPE, W), *b = test_f32(1, B_SHAPE, B), *out[1];
    tj_tensor_set_requires_grad(wg, true);
    int n_out;
    tj_tensor *in2[3] = {x_rows(2), w, b}, *in3[3] = {x_rows(3), w, b}, *in2g[3] = {x_rows(2), wg, b};
    cr_assert_eq(tj_jit_run(j, in2, 3, out, 1, &n_out), TJ_OK, "%s", tj_last_error());
    cr_assert_eq(tj_jit_run(j, in3, 3, out, 1, &n_out), TJ_OK, "%s", tj_last_error());
    cr_assert_eq(tj_jit_run(j, in2g, 3, out, 1, &n_out), TJ_OK, "%s", tj_last_error());
    tj_jit_free(j);
    tj_jit *reads = tj_jit_new(branchy, NULL, &(tj_jit_options){.log = log, .eager_fallback = true});
    tj_tensor *x[1] = {x_rows(1)};
    cr_assert_eq(tj_jit_run(reads, x, 1, out, 1, &n_out), TJ_OK, "%s", tj_last_error());
    tj_jit_free(reads);
    fclose(log);
    cr_assert(strstr(text, " ms (input 1: requires_grad true, was false)\n"), "%s", text);
    cr_assert(strstr(text, "running eagerly (eager_fallback) in "), "%s", text);
    cr_assert(strstr(text, "(first call)\n  tj_make_fx: "), "the graph break's cause on the next line: %s", text);
    free(text);
}
