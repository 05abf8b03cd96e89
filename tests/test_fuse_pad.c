/* Zero padding in one pass (tracer/fuse_pad.c, tj_kernel_zero_padded):
 * zeros + one slice_scatter per padded dim, as the core table pads a
 * convolution's input, runs as one step per chain (the step's label, the
 * kernels fewer), and every output has the bits of the interpreter and of
 * the plan compiled with no_fusion, at 1 to 3 threads: 2-d and 1-d
 * padding, symmetric, asymmetric and zero-width on one dim, a strided
 * source; an intermediate something else reads breaks the chain in two
 * (each still one pass); a non-zero fill and a slice step of 2 stay as
 * slice_scatter steps. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h"
#include "tjit/tjit.h"

TestSuite(fuse_pad, .init = test_scope_open, .fini = test_scope_close);

typedef struct pad_case {
    const char *what;
    int ndim;             /* 3: [n, c, l], padded along dim 2; 4: [n, c, h, w], along dims 2 then 3 */
    int64_t shape[4];     /* the source's */
    int64_t lo[2], hi[2]; /* per padded dim (2, 3): zeros before and after; both 0: no slice_scatter */
    bool transposed;      /* the source is the input's last two dims swapped (a strided view) */
    bool intermediate_out; /* the first slice_scatter's result is an output too */
    double fill;          /* the zeros' value */
    int64_t step;         /* the slice_scatters' step */
    int steps;            /* padded steps expected in the fused plan */
} pad_case;

static int n_pads(const pad_case *c)
{
    int n = 0;
    for (int i = 0; i < c->ndim - 2; i++) n += c->lo[i] || c->hi[i];
    return n;
}

/* in: the source (its dims 2, 3 swapped when transposed); out: relu of the padded
 * buffer (a reader of it) and the buffer itself, and with
 * intermediate_out the first slice_scatter's result. */
static tj_status fn_pad(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    const pad_case *c = ctx;
    (void)n;
    tj_tensor *x = c->transposed ? tj_transpose(in[0], 2, 3) : in[0], *first = NULL;
    for (int i = 0; i < c->ndim - 2 && x; i++) {
        if (!c->lo[i] && !c->hi[i]) continue;
        int d = 2 + i;
        int64_t shape[4];
        memcpy(shape, tj_tensor_shape(x), sizeof shape);
        int64_t size = shape[d];
        shape[d] += c->lo[i] + c->hi[i];
        tj_tensor *zeros = tj_full(shape, c->ndim, tj_v_float(c->fill), TJ_FLOAT32);
        int64_t end = c->step == 1 ? c->lo[i] + size : c->lo[i] + c->step * (size - 1) + 1;
        x = tj_slice_scatter(zeros, x, d, true, c->lo[i], true, end, c->step);
        if (!first) first = x;
    }
    out[0] = tj_relu(x);
    out[1] = x;
    out[2] = first;
    *n_out = c->intermediate_out ? 3 : 2;
    return out[0] && out[1] ? TJ_OK : tj_last_status();
}

/* Occurrences of `needle` in text. */
static int count_of(const char *text, const char *needle)
{
    int k = 0;
    for (const char *s = strstr(text, needle); s; s = strstr(s + 1, needle)) k++;
    return k;
}

static void check_case(const pad_case *c)
{
    int64_t shape[4];
    memcpy(shape, c->shape, sizeof shape);
    if (c->transposed) shape[2] = c->shape[3], shape[3] = c->shape[2];
    tj_tensor *in[1] = {test_random_f32(c->ndim, shape, 91)};
    float *x = tj_tensor_data(in[0]);
    x[0] = NAN; /* at the padding's edge: it stays where it is */
    x[1] = -0.0f;
    x[tj_tensor_numel(in[0]) - 1] = -INFINITY;
    tj_graph *g = tj_make_fx(fn_pad, (void *)c, in, 1, NULL, TJ_TRACE_REAL);
    cr_assert_not_null(g, "%s: make_fx: %s", c->what, tj_last_error());
    tj_compile_options fo = {0}, uo = {.no_fusion = true};
    tj_set_num_threads(1);
    tj_plan *pf = tj_compile(g, &fo), *pu = tj_compile(g, &uo);
    cr_assert(pf && pu, "%s: tj_compile: %s", c->what, tj_last_error());
    for (int threads = 1; threads <= 3; threads++) {
        char at[200];
        snprintf(at, sizeof at, "%s, %d threads", c->what, threads);
        tj_set_num_threads(threads);
        tj_plan_set_profiling(pf, true);
        test_expect_plans_match_interpreter(g, in, 1, pf, pu, at);
        tj_plan_set_profiling(pf, false);
    }
    char *text = test_profile_table(pf);
    /* one profile line per label: the padded steps' calls over all runs */
    const char *line = strstr(text, "aten::slice_scatter (padded)"), *runs = strstr(text, "Runs: ");
    cr_assert_not_null(runs, "%s", text);
    int calls = line ? atoi(line + strlen("aten::slice_scatter (padded)")) : 0;
    cr_expect_eq(calls, c->steps * atoi(runs + strlen("Runs: ")), "%s: padded steps\n%s", c->what, text);
    cr_expect_eq(count_of(text, "\naten::slice_scatter  "), c->steps ? 0 : 1, "%s: slice_scatter steps\n%s", c->what,
                 text);
    free(text);
    int fewer = c->steps ? n_pads(c) - c->steps : 0;
    cr_expect_eq(test_plan_stats(pu).n_kernels - test_plan_stats(pf).n_kernels, fewer, "%s: kernels", c->what);
    tj_plan_free(pf);
    tj_plan_free(pu);
    tj_graph_free(g);
}

Test(fuse_pad, a_padding_chain_runs_as_one_step_bit_for_bit)
{
    static const pad_case cases[] = {
        {"cnn's second layer, pad 2", 4, {4, 16, 14, 14}, {2, 2}, {2, 2}, false, false, 0.0, 1, 1},
        {"pad 1, odd sizes", 4, {3, 5, 9, 7}, {1, 1}, {1, 1}, false, false, 0.0, 1, 1},
        {"asymmetric (2, 0) x (1, 3)", 4, {2, 3, 8, 10}, {2, 1}, {0, 3}, false, false, 0.0, 1, 1},
        {"rows only, pad (1, 2) x 0", 4, {2, 4, 8, 10}, {1, 0}, {2, 0}, false, false, 0.0, 1, 1},
        {"columns only, pad 0 x (3, 1)", 4, {2, 4, 8, 10}, {0, 3}, {0, 1}, false, false, 0.0, 1, 1},
        {"a strided source", 4, {2, 3, 6, 9}, {1, 2}, {2, 1}, true, false, 0.0, 1, 1},
        {"one image of one channel", 4, {1, 1, 28, 28}, {2, 2}, {2, 2}, false, false, 0.0, 1, 1},
        {"conv1d, pad 2", 3, {3, 4, 30}, {2}, {2}, false, false, 0.0, 1, 1},
        {"conv1d, asymmetric (0, 5)", 3, {2, 6, 17}, {0}, {5}, false, false, 0.0, 1, 1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) check_case(&cases[i]);
}

Test(fuse_pad, an_intermediate_read_elsewhere_breaks_the_chain)
{
    pad_case c = {"the first padding an output too", 4, {2, 3, 6, 7}, {1, 2}, {2, 1}, false, true, 0.0, 1, 2};
    check_case(&c);
}

Test(fuse_pad, other_fills_and_steps_stay_slice_scatters)
{
    static const pad_case cases[] = {
        {"fill 1 (rows only)", 4, {2, 3, 6, 7}, {1, 0}, {1, 0}, false, false, 1.0, 1, 0},
        {"fill -0.0 (columns only)", 4, {2, 3, 6, 7}, {0, 1}, {0, 1}, false, false, -0.0, 1, 0},
        {"step 2 (conv1d)", 3, {2, 3, 3}, {1}, {2}, false, false, 0.0, 2, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) check_case(&cases[i]);
}
