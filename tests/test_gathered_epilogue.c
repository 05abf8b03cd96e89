/* A decomposed convolution's bias add and relu (maximum(0, x) in the core
 * table) run inside its gathered product's step (tracer/fuse_gather.c,
 * tj_kernel_bmm_gathered_epilogue): the fused step is taken (its label in
 * the profile, the plan's count of fused epilogues) and gives the bits of
 * the plan compiled with no_fusion and of the interpreter, at 1 to 3
 * threads, on the implicit convolution's route and the others; an add
 * whose result something else reads keeps its relu apart, and operands that
 * are not one value per row of the product are not taken. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h"
#include "tjit/tjit.h"

TestSuite(gathered_epilogue, .init = test_scope_open, .fini = test_scope_close);

#define WITH_RELU "aten::_to_copy + aten::bmm + aten::add.Tensor + aten::maximum"
#define BIAS_ONLY "aten::_to_copy + aten::bmm + aten::add.Tensor"

/* The label of the step with the epilogue that plan p ran last, judged by
 * its profile table: WITH_RELU, BIAS_ONLY or "" (none). */
static const char *fused_label(tj_plan *p)
{
    char *text = test_profile_table(p);
    const char *label = strstr(text, WITH_RELU) ? WITH_RELU : strstr(text, BIAS_ONLY) ? BIAS_ONLY : "";
    free(text);
    return label;
}

/* Compiles g fused and with no_fusion at one thread and runs both and the
 * interpreter at 1 to 3 threads; expects the fused plan's step `label`
 * ("" for none) with `fused` epilogue nodes, and the same bits from all
 * three for every output. */
static void expect_fused(const tj_graph *g, tj_tensor *const *in, int n_in, const char *label, int fused,
                         const char *what)
{
    tj_compile_options fo = {0}, uo = {.no_fusion = true};
    tj_set_num_threads(1);
    tj_plan *pf = tj_compile(g, &fo), *pu = tj_compile(g, &uo);
    cr_assert(pf && pu, "%s: tj_compile: %s", what, tj_last_error());
    cr_expect_eq(test_plan_stats(pf).n_fused, fused, "%s: fused epilogue nodes", what);
    for (int threads = 1; threads <= 3; threads++) {
        char at[200];
        snprintf(at, sizeof at, "%s, %d threads", what, threads);
        tj_set_num_threads(threads);
        tj_plan_set_profiling(pf, true);
        test_expect_plans_match_interpreter(g, in, n_in, pf, pu, at);
        cr_expect_str_eq(fused_label(pf), label, "%s: the fused step", at);
        tj_plan_set_profiling(pf, false);
    }
    tj_plan_free(pf);
    tj_plan_free(pu);
}

typedef struct conv_case {
    const char *what;
    int64_t n, c, h, w, oc, k, stride, pad, groups;
    bool pre_relu_out; /* the add's result is also an output: only the add joins */
} conv_case;

/* in: x, w, b; out: relu(conv2d(x, w, b)), and conv2d(x, w, b) itself when
 * pre_relu_out */
static tj_status fn_conv_relu(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    const conv_case *c = ctx;
    (void)n;
    int64_t st[2] = {c->stride, c->stride}, pad[2] = {c->pad, c->pad}, dil[2] = {1, 1};
    tj_tensor *y = tj_conv2d(in[0], in[1], in[2], st, pad, dil, c->groups);
    out[0] = tj_relu(y);
    out[1] = y;
    *n_out = c->pre_relu_out ? 2 : 1;
    return out[0] ? TJ_OK : tj_last_status();
}

static void check_conv(const conv_case *c, const char *label, int fused)
{
    tj_tensor *in[3] = {
        test_random_f32(4, (int64_t[]){c->n, c->c, c->h, c->w}, 51),
        test_random_f32(4, (int64_t[]){c->oc, c->c / c->groups, c->k, c->k}, 52),
        test_random_f32(1, (int64_t[]){c->oc}, 53),
    };
    /* a nan, an infinity and zeros in the image: the maximum keeps nan */
    float *x = tj_tensor_data(in[0]);
    x[3] = NAN;
    x[c->c * c->h * c->w + 1] = INFINITY;
    memset(x + 2 * c->c * c->h * c->w, 0, sizeof(float) * (size_t)(c->c * c->h * c->w));
    tj_decomp_table *core = tj_core_decompositions();
    cr_assert_not_null(core, "%s", tj_last_error());
    tj_graph *g = tj_make_fx(fn_conv_relu, (void *)c, in, 3, core, TJ_TRACE_REAL);
    cr_assert_not_null(g, "make_fx: %s", tj_last_error());
    expect_fused(g, in, 3, label, fused, c->what);
    tj_graph_free(g);
    tj_decomp_table_free(core);
}

Test(gathered_epilogue, bias_and_relu_run_in_the_gathered_product_bit_for_bit)
{
    static const conv_case cases[] = {
        {"cnn's first layer (implicit tiles, k 25)", 3, 1, 28, 28, 16, 5, 1, 2, 1, false},
        {"cnn's second layer (implicit tiles, k 400)", 3, 16, 14, 14, 32, 5, 1, 2, 1, false},
        {"odd sizes", 5, 3, 9, 7, 7, 3, 1, 1, 1, false},
        {"stride 2 (no windows: after the product)", 3, 3, 11, 11, 5, 3, 2, 0, 1, false},
        {"two output channels (matrix-vector route)", 5, 3, 12, 12, 2, 3, 1, 1, 1, false},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) check_conv(&cases[i], WITH_RELU, 2);
}

Test(gathered_epilogue, an_add_read_elsewhere_keeps_the_relu_apart)
{
    static const conv_case cases[] = {
        {"pre-relu also an output, cnn's second layer", 3, 16, 14, 14, 32, 5, 1, 2, 1, true},
        {"pre-relu also an output, stride 2", 3, 3, 11, 11, 5, 3, 2, 0, 1, true},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) check_conv(&cases[i], BIAS_ONLY, 1);
}

Test(gathered_epilogue, a_bias_per_group_is_not_one_per_row_and_stays_apart)
{
    /* two groups: the product's items are (image, group), the bias varies with the group */
    conv_case c = {"two groups", 3, 4, 8, 8, 6, 3, 1, 1, 2, false};
    check_conv(&c, "", 0);
}

typedef enum { BIAS_M11, BIAS_1M11, BIAS_M1, PER_COLUMN, FULL } bias_shape;

static const int64_t B = 3, M = 8, K = 10, H = 5, W = 7;

/* in: a [B, M, K], x [K, B, H, W], r (bias_shape); out: maximum(0,
 * (a @ x.permute(1, 0, 2, 3).contiguous() as [B, K, H*W]) viewed as
 * [B, M, H, W] + r) */
static tj_status fn_product_bias(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx, (void)n;
    tj_tensor *copy = tj_contiguous(tj_permute(in[1], (int64_t[]){1, 0, 2, 3}, 4));
    tj_tensor *y = tj_bmm(in[0], tj_view(copy, (int64_t[]){B, K, H * W}, 3));
    out[0] = tj_relu(tj_add(tj_view(y, (int64_t[]){B, M, H, W}, 4), in[2]));
    *n_out = 1;
    return out[0] ? TJ_OK : tj_last_status();
}

Test(gathered_epilogue, bias_broadcast_shapes)
{
    static const struct {
        const char *what;
        int ndim;
        int64_t shape[4];
        bool per_row;
    } shapes[] = {
        {"[M, 1, 1]", 3, {M, 1, 1}, true},   {"[1, M, 1, 1]", 4, {1, M, 1, 1}, true},
        {"[H, 1] (per position)", 2, {H, 1}, false}, {"[W] (per column)", 1, {W}, false},
        {"[B, M, H, W] (no broadcast)", 4, {B, M, H, W}, false},
    };
    tj_decomp_table *core = tj_core_decompositions();
    cr_assert_not_null(core, "%s", tj_last_error());
    for (size_t i = 0; i < sizeof shapes / sizeof *shapes; i++) {
        tj_tensor *in[3] = {test_random_f32(3, (int64_t[]){B, M, K}, 61),
                            test_random_f32(4, (int64_t[]){K, B, H, W}, 62),
                            test_random_f32(shapes[i].ndim, shapes[i].shape, 63)};
        tj_graph *g = tj_make_fx(fn_product_bias, NULL, in, 3, core, TJ_TRACE_REAL);
        cr_assert_not_null(g, "make_fx: %s", tj_last_error());
        expect_fused(g, in, 3, shapes[i].per_row ? WITH_RELU : "", shapes[i].per_row ? 2 : 0, shapes[i].what);
        tj_graph_free(g);
    }
    tj_decomp_table_free(core);
}
