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

/* A copy of index that the traced function makes, which the graph then
 * holds alone (make_fx's snapshot, as of a decomposition's col2im index):
 * an index captured in ctx is the caller's, read at every run, not fused. */
static tj_tensor *own_index(const tj_tensor *index)
{
    return tj_tensor_from_data(TJ_INT64, tj_tensor_ndim(index), tj_tensor_shape(index), tj_tensor_data(index));
}

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
    if (fused >= 0) cr_expect_eq(n_scattered(pf), fused, "%s: fused steps", what);
    cr_expect_eq(n_scattered(pu), 0, "%s", what);
    test_expect_plans_match_interpreter(g, in, n_in, pf, pu, what);
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

/* Traces fn (ctx: the case) on random x, w, b and output gradient of
 * each of the n convolutions with the core decompositions, and expects
 * fused and unfused plans alike on every ISA's kernels at 1..max_threads
 * threads (`fused` product-scatter steps; -1: not checked). */
static void expect_convolutions_match(const conv_case *cases, size_t n, tj_trace_fn fn, int fused, int max_threads)
{
    tj_decomp_table *core = tj_core_decompositions();
    cr_assert_not_null(core, "%s", tj_last_error());
    for (size_t i = 0; i < n; i++) {
        const conv_case *c = &cases[i];
        int64_t oh = (c->h + 2 * c->pad - c->dilation * (c->kh - 1) - 1) / c->stride + 1;
        int64_t ow = (c->w + 2 * c->pad - c->dilation * (c->kw - 1) - 1) / c->stride + 1;
        tj_tensor *in[4] = {
            test_random_f32(4, (int64_t[]){c->n, c->c, c->h, c->w}, 41),
            test_random_f32(4, (int64_t[]){c->oc, c->c / c->groups, c->kh, c->kw}, 42),
            test_random_f32(1, (int64_t[]){c->oc}, 43),
            test_random_f32(4, (int64_t[]){c->n, c->oc, oh, ow}, 44),
        };
        tj_graph *g = tj_make_fx(fn, (void *)c, in, 4, core, TJ_TRACE_REAL);
        cr_assert_not_null(g, "make_fx: %s", tj_last_error());
        for (int isa = 0; isa < TEST_NISA; isa++)
            for (int threads = 1; threads <= max_threads; threads++) {
                char what[160];
                snprintf(what, sizeof what, "%s, %s kernels, %d threads", c->what, test_isas[isa], threads);
                expect_plans_match(g, in, 4, fused, threads, test_isas[isa], what);
            }
        tj_graph_free(g);
    }
    tj_decomp_table_free(core);
}

Test(fuse_scatter, decomposed_convolution_input_gradient_equals_unfused_bit_for_bit)
{
    expect_convolutions_match(convs, sizeof convs / sizeof *convs, fn_conv_input_grad, 1, 3);
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
    out[0] = tj_scatter_add(zeros, 1, own_index(c->index), tj_view(y, (int64_t[]){1, M * N}, 2));
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

/* ---- products of several layouts scattered ---- */
typedef struct gen_case {
    const char *what;
    int64_t batch, m, k, n; /* batch 0: mm */
    int vnd;
    int64_t vshape[4]; /* the src: the product viewed so (vnd 0: as is) */
    bool transpose;    /* then its last two dims swapped */
    int64_t dim;
    int snd;
    int64_t sshape[4]; /* self: zeros of this shape */
    int ind;
    int64_t ishape[4]; /* the index constant's shape, expanded to src's */
    int64_t (*value)(const int64_t *pos, const int64_t *shape, int64_t size); /* at pos of ishape; size: self's dim */
    int dtype;
    int fused;
    tj_tensor *index;
} gen_case;

static tj_status fn_gen(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    const gen_case *c = ctx;
    (void)n;
    tj_tensor *y = c->batch ? tj_bmm(in[0], in[1]) : tj_mm(in[0], in[1]);
    if (c->vnd) y = tj_view(y, c->vshape, c->vnd);
    if (c->transpose) y = tj_transpose(y, -1, -2);
    tj_tensor *ix = tj_expand(own_index(c->index), tj_tensor_shape(y), tj_tensor_ndim(y));
    out[0] = tj_scatter_add(tj_zeros(c->sshape, c->snd, c->dtype), c->dim, ix, y);
    *n_out = 1;
    return out[0] ? TJ_OK : tj_last_status();
}

/* c's graph (index values from c->value) traced as `mode`. */
static tj_graph *trace_gen(gen_case *c, tj_tensor *const *in, tj_tracing_mode mode)
{
    tj_tensor *index = tj_tensor_empty(TJ_INT64, c->ind, c->ishape);
    int64_t *e = tj_tensor_data(index), pos[4] = {0};
    int d = c->dim < 0 ? c->dim + c->snd : c->dim;
    for (int64_t i = 0; i < tj_tensor_numel(index); i++) {
        e[i] = c->value(pos, c->ishape, c->sshape[d]);
        for (int q = c->ind - 1; q >= 0; q--) {
            if (++pos[q] < c->ishape[q]) break;
            pos[q] = 0;
        }
    }
    c->index = index;
    tj_graph *g = tj_make_fx(fn_gen, c, in, 2, NULL, mode);
    cr_assert_not_null(g, "%s: make_fx: %s", c->what, tj_last_error());
    return g;
}

static void gen_inputs(const gen_case *c, tj_tensor **in)
{
    int64_t ash[3] = {c->batch, c->m, c->k}, bsh[3] = {c->batch, c->k, c->n};
    int o = c->batch ? 0 : 1, nd = c->batch ? 3 : 2;
    in[0] = test_random_tensor(c->dtype, nd, ash + o, 61, -1, 1);
    in[1] = test_random_tensor(c->dtype, nd, bsh + o, 62, -1, 1);
}

/* c fused (c->fused steps) or not, the same bits as unfused and the
 * interpreter on every ISA at 1-3 threads. */
static void run_gen(gen_case *c)
{
    tj_tensor *in[2];
    gen_inputs(c, in);
    tj_graph *g = trace_gen(c, in, TJ_TRACE_REAL);
    for (int isa = 0; isa < TEST_NISA; isa++)
        for (int threads = 1; threads <= 3; threads++) {
            char what[200];
            snprintf(what, sizeof what, "%s, %s kernels, %d threads", c->what, test_isas[isa], threads);
            expect_plans_match(g, in, 2, c->fused, threads, test_isas[isa], what);
        }
    tj_graph_free(g);
}

static int64_t v_col_half(const int64_t *pos, const int64_t *shape, int64_t size)
{
    (void)shape;
    return pos[1] / 2 % size;
}
static int64_t v_last_half(const int64_t *pos, const int64_t *shape, int64_t size)
{
    (void)shape;
    return pos[2] / 2 % size;
}
static int64_t v_bounds(const int64_t *pos, const int64_t *shape, int64_t size)
{
    (void)shape;
    return pos[2] % 2 ? size - 1 : 0;
}
/* col2im-like: target col + line * 2048 (a product of 4100 columns) */
static int64_t v_diag(const int64_t *pos, const int64_t *shape, int64_t size)
{
    (void)shape;
    (void)size;
    return pos[1] % 4100 + pos[1] / 4100 * 2048;
}
static int64_t v_reverse(const int64_t *pos, const int64_t *shape, int64_t size)
{
    return (shape[2] - 1 - pos[2]) / 2 % size;
}

/* Ragged last blocks (n not a multiple of 64 nor of the block), batches
 * with a broadcast index and negative dim, values at both bounds, a self
 * larger than the index; and refusals that must keep the bits: lines
 * across batch items, a transposed src, float64, a one-row product
 * (matrix-vector route). */
Test(fuse_scatter, products_of_several_layouts_scattered_equal_unfused_bit_for_bit)
{
    gen_case cs[] = {
        /* mm viewed [1, m*n]: each line's column pairs; n ragged; several blocks */
        {"mm 37x5x7100 col/2", 0, 37, 5, 7100, 2, {37, 7100}, false, 1, 2, {37, 3550}, 2, {37, 7100}, v_col_half, TJ_FLOAT32, 1},
        {"bmm 3 broadcast index dim -1", 3, 6, 7, 130, 0, {0}, false, -1, 3, {3, 6, 65}, 3, {1, 6, 130}, v_last_half, TJ_FLOAT32, 1},
        {"bmm 3 broadcast rows lines 1", 3, 5, 9, 200, 0, {0}, false, 2, 3, {3, 5, 100}, 3, {1, 1, 200}, v_last_half, TJ_FLOAT32, 1},
        {"bmm bounds values", 2, 4, 3, 70, 0, {0}, false, 2, 3, {2, 4, 9}, 3, {1, 1, 70}, v_bounds, TJ_FLOAT32, 1},
        {"mm col2im-like descending ragged", 0, 64, 5, 4100, 2, {1, 64 * 4100}, false, 1, 2, {1, 4100 + 63 * 2048}, 2, {1, 64 * 4100}, v_diag, TJ_FLOAT32, 1},
        {"bmm reversed targets", 2, 64, 3, 4100, 0, {0}, false, 2, 3, {2, 64, 2050}, 3, {1, 1, 4100}, v_reverse, TJ_FLOAT32, 1},
        {"bmm self larger", 2, 4, 3, 70, 0, {0}, false, 2, 3, {3, 6, 40}, 3, {1, 1, 70}, v_last_half, TJ_FLOAT32, 1},
        {"lines across batch items", 2, 3, 4, 80, 3, {3, 2, 80}, false, 2, 3, {3, 2, 40}, 3, {1, 2, 80}, v_last_half, TJ_FLOAT32, 0},
        {"transposed src", 2, 80, 4, 70, 0, {0}, true, 2, 3, {2, 70, 40}, 3, {1, 1, 80}, v_last_half, TJ_FLOAT32, 0},
        {"float64", 2, 4, 3, 70, 0, {0}, false, 2, 3, {2, 4, 35}, 3, {1, 1, 70}, v_last_half, TJ_FLOAT64, 0},
        {"mm 1 row k 1", 0, 1, 1, 64, 3, {1, 1, 64}, false, 2, 3, {1, 1, 32}, 3, {1, 1, 64}, v_last_half, TJ_FLOAT32, 0},
    };
    for (size_t i = 0; i < sizeof cs / sizeof *cs; i++) run_gen(&cs[i]);
}

/* in: x, w, b, gy; out: conv(x, w, b) and its gradients in x, w, b */
static tj_status fn_conv_all(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    const conv_case *c = ctx;
    (void)n;
    int64_t st[2] = {c->stride, c->stride}, pad[2] = {c->pad, c->pad}, dil[2] = {c->dilation, c->dilation};
    tj_tensor *x = tj_tensor_detach(in[0]), *w = tj_tensor_detach(in[1]), *b = tj_tensor_detach(in[2]);
    tj_tensor_set_requires_grad(x, true);
    tj_tensor_set_requires_grad(w, true);
    tj_tensor_set_requires_grad(b, true);
    tj_tensor *y = tj_conv2d(x, w, b, st, pad, dil, c->groups);
    if (!y) return tj_last_status();
    out[0] = y;
    *n_out = 4;
    tj_tensor *wrt[3] = {x, w, b};
    return tj_autograd_grad(&y, 1, &in[3], wrt, 3, out + 1);
}

static const conv_case odd_convs[] = {
    {"1x1 kernel stride 2", 2, 8, 9, 9, 16, 1, 1, 2, 0, 1, 1},
    {"1x1 kernel batch 1", 1, 16, 7, 5, 24, 1, 1, 1, 0, 1, 1},
    {"tiny image 1x1 pad 1 3x3", 1, 4, 1, 1, 8, 3, 3, 1, 1, 1, 1},
    {"tiny image 2x3", 1, 3, 2, 3, 70, 2, 2, 1, 0, 1, 1},
    {"dilation 3 stride 2 pad 3", 2, 6, 15, 11, 40, 3, 3, 2, 3, 3, 1},
    {"groups 4 depthwise-ish", 1, 8, 10, 10, 8, 3, 3, 1, 1, 1, 4},
    {"depthwise", 2, 8, 12, 12, 8, 3, 3, 1, 1, 1, 8},
    {"kernel as large as image", 3, 5, 6, 6, 33, 6, 6, 1, 0, 1, 1},
    {"wide image 1 row", 2, 16, 1, 300, 64, 1, 3, 1, 0, 1, 1},
    {"many channels batch 1", 1, 130, 8, 8, 65, 3, 3, 1, 1, 1, 1},
    {"stride 4 kernel 5", 2, 3, 33, 33, 96, 5, 5, 4, 2, 1, 1},
    {"cnn first layer", 1, 1, 28, 28, 16, 5, 5, 1, 2, 1, 1},
};

/* The forward convolution and all three gradients (gathered products, the
 * scattered one) at unusual geometries: the same bits fused or not. */
Test(fuse_scatter, unusual_convolutions_and_their_gradients_equal_unfused_bit_for_bit)
{
    expect_convolutions_match(odd_convs, sizeof odd_convs / sizeof *odd_convs, fn_conv_all, -1, 2);
}

static int64_t v_out_of_bounds(const int64_t *pos, const int64_t *shape, int64_t size)
{
    (void)shape;
    return pos[2] == 69 ? size : pos[2] / 2 % size;
}

/* An index value out of bounds (traced fake: eager would refuse it): the
 * pair stays apart and the run fails with scatter_add's error. */
Test(fuse_scatter, an_index_out_of_bounds_is_left_to_scatter_adds_error)
{
    gen_case c = {"out of bounds", 2, 4, 3, 70, 0, {0}, false, 2, 3, {2, 4, 35}, 3, {1, 1, 70}, v_out_of_bounds, TJ_FLOAT32, 0, NULL};
    tj_tensor *in[2], *got[1];
    gen_inputs(&c, in);
    tj_graph *g = trace_gen(&c, in, TJ_TRACE_FAKE);
    tj_compile_options fo = {0};
    tj_plan *p = tj_compile(g, &fo);
    cr_assert_not_null(p, "%s", tj_last_error());
    cr_expect_eq(n_scattered(p), 0);
    cr_expect_eq(tj_plan_run(p, in, 2, got), TJ_ERR_INDEX);
    cr_expect(strstr(tj_last_error(), "aten::scatter_add: index 35 is out of bounds for dimension 2 with size 35"), "%s",
              tj_last_error());
    tj_plan_free(p);
    tj_graph_free(g);
}

/* ---- an index the caller holds ---- */
typedef struct held_case {
    tj_tensor *index; /* [1, 70], captured: a constant held by reference */
    tj_tensor *big;   /* [2, 70] whose row 0 the index views, or NULL */
} held_case;

/* in: a [4, 3], b [3, 70]; out: scatter_add(zeros [4, 40], 1, index
 * expanded, a @ b), then (with big) big += 1, which writes the index */
static tj_status fn_held_index(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    const held_case *c = ctx;
    (void)n;
    tj_tensor *ix = tj_expand(c->index, (int64_t[]){4, 70}, 2);
    out[0] = tj_scatter_add(tj_zeros((int64_t[]){4, 40}, 2, TJ_FLOAT32), 1, ix, tj_mm(in[0], in[1]));
    if (c->big && !tj_add_scalar_(c->big, tj_v_int(1), tj_v_int(1))) return tj_last_status();
    *n_out = 1;
    return out[0] ? TJ_OK : tj_last_status();
}

/* What the second run must give: scatter_add eagerly over the index as the
 * first run left it (held_case.big: incremented) or as the caller set it. */
static tj_tensor *eager_held(tj_tensor *const *in, const held_case *c)
{
    tj_tensor *ix = tj_expand(c->index, (int64_t[]){4, 70}, 2);
    return tj_scatter_add(tj_zeros((int64_t[]){4, 40}, 2, TJ_FLOAT32), 1, ix, tj_mm(in[0], in[1]));
}

/* A captured index is the caller's tensor, read by reference at every run
 * (graph.h): its values may change between runs, through the caller or a
 * constant of the graph sharing its memory, so the compiler must not
 * bake them into a fused step (the fused plan kept the first run's targets
 * and its second run differed from eager mode's). Small integers: the
 * products and sums are exact. */
Test(fuse_scatter, an_index_the_caller_holds_is_read_at_every_run)
{
    for (int aliased = 1; aliased >= 0; aliased--) {
        tj_tensor *a = tj_tensor_empty(TJ_FLOAT32, 2, (int64_t[]){4, 3}), *b = tj_tensor_empty(TJ_FLOAT32, 2, (int64_t[]){3, 70});
        for (int i = 0; i < 12; i++) ((float *)tj_tensor_data(a))[i] = (float)(i % 5 - 2);
        for (int i = 0; i < 210; i++) ((float *)tj_tensor_data(b))[i] = (float)(i % 7 - 3);
        tj_tensor *big = tj_tensor_empty(TJ_INT64, 2, (int64_t[]){2, 70});
        int64_t *e = tj_tensor_data(big);
        for (int i = 0; i < 140; i++) e[i] = i % 70 / 2;
        held_case c = {tj_slice(big, 0, true, 0, true, 1, 1), aliased ? big : NULL};
        tj_tensor *in[2] = {a, b}, *got[1];
        tj_graph *g = tj_make_fx(fn_held_index, &c, in, 2, NULL, TJ_TRACE_FAKE);
        cr_assert_not_null(g, "make_fx: %s", tj_last_error());
        tj_plan *p = tj_compile(g, NULL);
        cr_assert_not_null(p, "%s", tj_last_error());
        cr_assert_eq(tj_plan_run(p, in, 2, got), TJ_OK, "%s", tj_last_error());
        if (!aliased) tj_add_scalar_(c.index, tj_v_int(3), tj_v_int(1)); /* the caller moves every target by 3 */
        tj_tensor *want = eager_held(in, &c);
        cr_assert_eq(tj_plan_run(p, in, 2, got), TJ_OK, "%s", tj_last_error());
        test_expect_same_bits(got[0], want, aliased ? "an index the graph writes through another constant"
                                                    : "an index the caller changed");
        tj_plan_free(p);
        tj_graph_free(g);
    }
}
