/* A decomposed convolution's zero padding (zeros + one slice_scatter per
 * padded dim) read only by its gathered product runs inside the product's
 * step (tracer/fuse_gather.c, tj_kernel_bmm_gathered_padded): the
 * slice_scatter steps leave the plan (two kernels fewer per 2-d layer, the
 * fused step's label) and every output has the bits of the plan compiled
 * with no_fusion and of the interpreter, at 1 to 3 threads, on the window
 * route (the padding in each thread's scratch) and the others (stride 2:
 * the buffer made in the arena); a buffer that two products read stays,
 * made in one pass (tracer/fuse_pad.c); a plan compiled for the window route and run where the route is another
 * (the generic ISA) makes the buffer for the step. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/cpu_isa.h"
#include "test_util.h"
#include "tjit/tjit.h"

TestSuite(gathered_padding, .init = test_scope_open, .fini = test_scope_close);

typedef struct pad_case {
    const char *what;
    int dims; /* 1: conv1d on [n, c, w]; 2: conv2d */
    int64_t n, c, h, w, oc, k, stride, ph, pw;
    bool twice;  /* a second convolution of the same input: the padded buffer has two readers, and is
                    made in one step (tracer/fuse_pad.c) */
    int dropped; /* kernels fewer than with the padding apart */
} pad_case;

/* in: x, w, b (and w2 when twice); out: relu(conv(x, w, b)) (and conv(x, w2, b)) */
static tj_status fn_conv(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    const pad_case *c = ctx;
    (void)n;
    int64_t st[2] = {c->stride, c->stride}, pad[2] = {c->ph, c->pw}, dil[2] = {1, 1};
    for (int i = 0; i < 1 + c->twice; i++) {
        tj_tensor *y = c->dims == 1 ? tj_conv1d(in[0], in[1 + 2 * i], in[2], c->stride, c->pw, 1, 1)
                                    : tj_conv2d(in[0], in[1 + 2 * i], in[2], st, pad, dil, 1);
        out[i] = tj_relu(y);
    }
    *n_out = 1 + c->twice;
    return out[0] && out[*n_out - 1] ? TJ_OK : tj_last_status();
}

/* Whether the profile of plan p has a step of its own named aten::slice_scatter
 * (its name padded to the column; a fused label goes on with " + "). */
static bool pads_apart(const tj_plan *p)
{
    char *text = test_profile_table(p);
    bool apart = strstr(text, "\naten::slice_scatter  ") != NULL;
    free(text);
    return apart;
}

/* Whether the profile of plan p has a step labelled `label`. */
static bool has_step(const tj_plan *p, const char *label)
{
    char *text = test_profile_table(p);
    bool has = strstr(text, label) != NULL;
    free(text);
    return has;
}

static void check_case(const pad_case *c)
{
    int64_t xs[4] = {c->n, c->c, c->h, c->w}, ws[4] = {c->oc, c->c, c->k, c->k};
    if (c->dims == 1) xs[2] = c->w, ws[2] = c->k;
    tj_tensor *in[4] = {test_random_f32(c->dims + 2, xs, 71), test_random_f32(c->dims + 2, ws, 72),
                        test_random_f32(1, (int64_t[]){c->oc}, 73), test_random_f32(c->dims + 2, ws, 74)};
    float *x = tj_tensor_data(in[0]);
    x[1] = NAN; /* next to the padding: it stays where it is */
    x[c->c * c->w - 1] = -INFINITY;
    int n_in = c->twice ? 4 : 3;
    tj_decomp_table *core = tj_core_decompositions();
    cr_assert_not_null(core, "%s", tj_last_error());
    tj_graph *g = tj_make_fx(fn_conv, (void *)c, in, n_in, core, TJ_TRACE_REAL);
    cr_assert_not_null(g, "make_fx: %s", tj_last_error());
    tj_compile_options fo = {0}, uo = {.no_fusion = true};
    tj_set_num_threads(1);
    tj_plan *pf = tj_compile(g, &fo), *pu = tj_compile(g, &uo);
    cr_assert(pf && pu, "%s: tj_compile: %s", c->what, tj_last_error());
    for (int threads = 1; threads <= 3; threads++) {
        char at[200];
        snprintf(at, sizeof at, "%s, %d threads", c->what, threads);
        tj_set_num_threads(threads);
        tj_plan_set_profiling(pf, true);
        test_expect_plans_match_interpreter(g, in, n_in, pf, pu, at);
        cr_expect_eq(has_step(pf, "aten::slice_scatter + aten::_to_copy + aten::bmm"), !c->twice,
                     "%s: the padding in the product's step", at);
        cr_expect_eq(has_step(pf, "aten::slice_scatter (padded)"), c->twice, "%s: the padding in one step", at);
        cr_expect(!pads_apart(pf), "%s: slice_scatter steps", at);
        tj_plan_set_profiling(pf, false);
    }
    /* the same plan with the padding apart has `dropped` kernels more: no_fusion's count less the
     * epilogues (add, maximum) and copies (one per product) that fusion takes anyway */
    int others = 3 * (1 + c->twice);
    cr_expect_eq(test_plan_stats(pu).n_kernels - test_plan_stats(pf).n_kernels, others + c->dropped,
                 "%s: kernels", c->what);
    tj_plan_free(pf);
    tj_plan_free(pu);
    tj_graph_free(g);
    tj_decomp_table_free(core);
}

Test(gathered_padding, the_padding_runs_in_the_product_bit_for_bit)
{
    static const pad_case cases[] = {
        {"cnn's first layer, pad 2", 2, 3, 1, 28, 28, 16, 5, 1, 2, 2, false, 2},
        {"cnn's second layer, pad 2", 2, 3, 16, 14, 14, 32, 5, 1, 2, 2, false, 2},
        {"pad 1, odd sizes", 2, 5, 3, 9, 7, 7, 3, 1, 1, 1, false, 2},
        {"pad (2, 1)", 2, 2, 4, 8, 10, 6, 3, 1, 2, 1, false, 2},
        {"rows only, pad (1, 0)", 2, 2, 4, 8, 10, 6, 3, 1, 1, 0, false, 1},
        {"columns only, pad (0, 2)", 2, 2, 4, 8, 10, 6, 3, 1, 0, 2, false, 1},
        {"stride 2, pad 1 (the buffer made for the step)", 2, 3, 3, 11, 11, 5, 3, 2, 1, 1, false, 2},
        {"two output channels (matrix-vector route)", 2, 3, 3, 12, 12, 2, 3, 1, 1, 1, false, 2},
        {"conv1d, pad 2", 1, 3, 4, 1, 30, 8, 5, 1, 0, 2, false, 1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) check_case(&cases[i]);
}

Test(gathered_padding, a_padded_buffer_read_twice_stays)
{
    pad_case c = {"two convolutions of one input", 2, 3, 4, 10, 10, 6, 3, 1, 1, 1, true, 1};
    check_case(&c);
}

Test(gathered_padding, a_route_other_than_foreseen_makes_the_buffer_for_the_step)
{
    if (tj_k_isa_active() == TJ_K_ISA_GENERIC) return; /* no window route to foresee */
    int64_t xs[4] = {3, 16, 14, 14}, ws[4] = {32, 16, 5, 5};
    pad_case c = {"cnn's second layer, pad 2", 2, 3, 16, 14, 14, 32, 5, 1, 2, 2, false, 2};
    tj_tensor *in[3] = {test_random_f32(4, xs, 81), test_random_f32(4, ws, 82),
                        test_random_f32(1, (int64_t[]){32}, 83)};
    tj_decomp_table *core = tj_core_decompositions();
    tj_graph *g = tj_make_fx(fn_conv, &c, in, 3, core, TJ_TRACE_REAL);
    cr_assert_not_null(g, "make_fx: %s", tj_last_error());
    tj_compile_options fo = {0};
    tj_set_num_threads(1);
    tj_plan *p = tj_compile(g, &fo);
    cr_assert_not_null(p, "%s", tj_last_error());
    tj_plan_set_profiling(p, true);
    cr_assert(tj_k_isa_force("generic"));
    for (int threads = 1; threads <= 2; threads++) {
        tj_set_num_threads(threads);
        tj_tensor *ref[1], *got[1];
        cr_assert_eq(tj_graph_run(g, in, 3, ref), TJ_OK, "%s", tj_last_error());
        for (int run = 0; run < 2; run++) {
            cr_assert_eq(tj_plan_run(p, in, 3, got), TJ_OK, "%s", tj_last_error());
            test_expect_same_bits(got[0], ref[0], "generic ISA, padding in the product");
        }
    }
    tj_k_isa_force(NULL);
    cr_expect(has_step(p, "aten::slice_scatter + aten::_to_copy + aten::bmm"),
              "the plan was compiled with the padding in the product");
    tj_plan_free(p);
    tj_graph_free(g);
    tj_decomp_table_free(core);
}
