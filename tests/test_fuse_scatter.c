/* Product-scatter fusion in replay (tracer/fuse_scatter.c): a bmm or mm
 * whose result only a scatter_add over a constant index reads runs as one
 * step, blocks of the product's columns scattered as they are computed.
 * The fused plan must give the bits of the plan compiled with no_fusion
 * and of the interpreter, at 1, 2 and 3 threads, on decomposed
 * convolutions' input gradients (col2im) of several geometries; and the
 * pair must stay apart when the product is read elsewhere or when no order
 * of the blocks keeps every target's additions in the entries' order. */
#include <criterion/criterion.h>
#include <string.h>

#include "kernels/cpu_isa.h"
#include "test_util.h"
#include "tjit/tjit.h"

TestSuite(fuse_scatter, .init = test_scope_open, .fini = test_scope_close);

static int n_scattered(const tj_plan *p) { return test_plan_stats(p).n_scattered_products; }

/* Compiles g fused and with no_fusion at one thread on the CPU's kernels,
 * runs both (twice: the second run reuses the arena) and the interpreter at
 * `threads` threads on the kernels of instruction set `isa` (NULL: the
 * CPU's; generic: the fused step's fallback, the whole product then every
 * entry); expects `fused` product-scatter steps in the first plan, none in
 * the second and every output the same bits. */
static void expect_plans_match(const tj_graph *g, tj_tensor *const *in, int n_in, int fused, int threads,
                               const char *isa, const char *what)
{
    tj_set_num_threads(1);
    tj_k_isa_force(NULL);
    tj_compile_options fo = {0}, uo = {.no_fusion = true};
    tj_plan *pf = tj_compile(g, &fo), *pu = tj_compile(g, &uo);
    cr_assert(pf && pu, "%s: tj_compile: %s", what, tj_last_error());
    if (!tj_k_isa_force(isa)) { /* above the CPU or TJ_ISA */
        tj_plan_free(pf);
        tj_plan_free(pu);
        tj_k_isa_force(NULL);
        return;
    }
    tj_set_num_threads(threads);
    cr_expect_eq(n_scattered(pf), fused, "%s: fused steps", what);
    cr_expect_eq(n_scattered(pu), 0, "%s", what);
    int no = tj_plan_num_outputs(pf);
    tj_tensor *ref[4], *got[4], *sep[4];
    cr_assert(no <= 4);
    cr_assert_eq(tj_graph_run(g, in, n_in, ref), TJ_OK, "%s: %s", what, tj_last_error());
    for (int run = 0; run < 2; run++) {
        cr_assert_eq(tj_plan_run(pf, in, n_in, got), TJ_OK, "%s: %s", what, tj_last_error());
        cr_assert_eq(tj_plan_run(pu, in, n_in, sep), TJ_OK, "%s: %s", what, tj_last_error());
        for (int k = 0; k < no; k++) {
            test_expect_same_bits(got[k], ref[k], what);
            test_expect_same_bits(sep[k], ref[k], what);
        }
    }
    tj_plan_free(pf);
    tj_plan_free(pu);
    tj_set_num_threads(1);
    tj_k_isa_force(NULL);
}

typedef struct conv_case {
    const char *what;
    int64_t n, c, h, w, oc, kh, kw;
    int64_t stride, pad, dilation, groups;
} conv_case;

/* in: x, w, b, gy (the convolution's result's gradient); out: d(sum(conv(x,
 * w, b) * gy)) / dx, whose decomposition scatters W^T @ gy's columns into
 * the padded image (col2im) */
static tj_status fn_conv_input_grad(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    const conv_case *c = ctx;
    (void)n;
    int64_t st[2] = {c->stride, c->stride}, pad[2] = {c->pad, c->pad}, dil[2] = {c->dilation, c->dilation};
    tj_tensor *x = tj_tensor_detach(in[0]);
    tj_tensor_set_requires_grad(x, true);
    tj_tensor *y = tj_conv2d(x, in[1], in[2], st, pad, dil, c->groups);
    *n_out = 1;
    return y ? tj_autograd_grad(&y, 1, &in[3], &x, 1, out) : tj_last_status();
}

/* Blocks of columns (512 KiB of the product's rows each, in 64s): cnn's
 * second layer has 400 rows, 320 columns a block, 3 blocks at batch 4. */
static const conv_case convs[] = {
    {"cnn's second layer at batch 4 (3 blocks)", 4, 16, 14, 14, 32, 5, 5, 1, 2, 1, 1},
    {"stride 2, no padding (2 blocks)", 6, 32, 23, 23, 8, 3, 3, 2, 0, 1, 1},
    {"dilation 2, odd sizes", 3, 20, 17, 13, 7, 3, 3, 1, 1, 2, 1},
    {"two groups (bmm batch 2)", 4, 32, 12, 12, 16, 3, 3, 1, 1, 1, 2},
    {"stride 3 with padding, kernel 2x4", 5, 24, 19, 25, 6, 2, 4, 3, 2, 1, 1},
    {"one block", 2, 3, 9, 9, 4, 3, 3, 1, 1, 1, 1},
};

Test(fuse_scatter, decomposed_convolution_input_gradient_equals_unfused_bit_for_bit)
{
    tj_decomp_table *core = tj_core_decompositions();
    cr_assert_not_null(core, "%s", tj_last_error());
    for (size_t i = 0; i < sizeof convs / sizeof *convs; i++) {
        const conv_case *c = &convs[i];
        int64_t oh = (c->h + 2 * c->pad - c->dilation * (c->kh - 1) - 1) / c->stride + 1;
        int64_t ow = (c->w + 2 * c->pad - c->dilation * (c->kw - 1) - 1) / c->stride + 1;
        tj_tensor *in[4] = {
            test_random_f32(4, (int64_t[]){c->n, c->c, c->h, c->w}, 41),
            test_random_f32(4, (int64_t[]){c->oc, c->c / c->groups, c->kh, c->kw}, 42),
            test_random_f32(1, (int64_t[]){c->oc}, 43),
            test_random_f32(4, (int64_t[]){c->n, c->oc, oh, ow}, 44),
        };
        tj_graph *g = tj_make_fx(fn_conv_input_grad, (void *)c, in, 4, core, TJ_TRACE_REAL);
        cr_assert_not_null(g, "make_fx: %s", tj_last_error());
        for (int isa = 0; isa < TEST_NISA; isa++)
            for (int threads = 1; threads <= 3; threads++) {
                char what[160];
                snprintf(what, sizeof what, "%s, %s kernels, %d threads", c->what, test_isas[isa], threads);
                expect_plans_match(g, in, 4, 1, threads, test_isas[isa], what);
            }
        tj_graph_free(g);
    }
    tj_decomp_table_free(core);
}

/* A product of 64 rows by 4096 columns (two blocks of 2048) scattered into
 * [1, 512] along an index given as ctx. */
#define M 64
#define K 8
#define N 4096
#define TARGETS 512

typedef struct scatter_case {
    tj_tensor *index; /* [1, M * N] */
    bool read_elsewhere; /* the product is also an output */
} scatter_case;

/* in: a [M, K], b [K, N]; out: scatter_add(zeros [1, TARGETS], 1, index,
 * (a @ b).view(1, M * N)) (and a @ b) */
static tj_status fn_mm_scatter(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    const scatter_case *c = ctx;
    (void)n;
    tj_tensor *y = tj_mm(in[0], in[1]);
    tj_tensor *zeros = tj_zeros((int64_t[]){1, TARGETS}, 2, TJ_FLOAT32);
    out[0] = tj_scatter_add(zeros, 1, c->index, tj_view(y, (int64_t[]){1, M * N}, 2));
    out[1] = y;
    *n_out = c->read_elsewhere ? 2 : 1;
    return out[0] ? TJ_OK : tj_last_status();
}

/* An index of entry (line, column) -> target; `crossing`: target 0 also
 * gets (0, N - 1), so its entries (0, 0), (0, N - 1), (1, 0) fall in
 * blocks 0, 1, 0: neither order of the blocks keeps them in order. */
static tj_tensor *make_index(bool crossing)
{
    tj_tensor *index = tj_tensor_empty(TJ_INT64, 2, (int64_t[]){1, M * N});
    int64_t *e = tj_tensor_data(index);
    for (int64_t line = 0; line < M; line++)
        for (int64_t col = 0; col < N; col++) e[line * N + col] = col / (N / TARGETS);
    if (crossing) e[N - 1] = 0;
    return index;
}

static void check_scatter(bool crossing, bool read_elsewhere, int fused, const char *what)
{
    tj_tensor *in[2] = {test_random_f32(2, (int64_t[]){M, K}, 51), test_random_f32(2, (int64_t[]){K, N}, 52)};
    scatter_case c = {make_index(crossing), read_elsewhere};
    tj_graph *g = tj_make_fx(fn_mm_scatter, &c, in, 2, NULL, TJ_TRACE_REAL);
    cr_assert_not_null(g, "make_fx: %s", tj_last_error());
    for (int threads = 1; threads <= 2; threads++) expect_plans_match(g, in, 2, fused, threads, NULL, what);
    tj_graph_free(g);
}

Test(fuse_scatter, an_mm_scattered_in_column_order_is_fused)
{
    /* target col / 8: every line's same 8 columns, in one block */
    check_scatter(false, false, 1, "entries of a target in one block");
}

Test(fuse_scatter, an_index_no_block_order_keeps_in_order_is_refused)
{
    check_scatter(true, false, 0, "target 0 in blocks 0, 1, 0");
}

Test(fuse_scatter, a_product_read_elsewhere_is_refused)
{
    check_scatter(false, true, 0, "the product is an output too");
}
