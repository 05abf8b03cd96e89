/* Stride-1 float32 convolutions without im2col (see conv_implicit.h). */
#include <string.h>

#include "conv_gemm.h"
#include "conv_implicit.h"
#include "elementwise.h"
#include "gemm.h"
#include "parallel.h"

#define MR TJ_K_GEMM_MR
#define NR TJ_K_GEMM_NR

static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }
static size_t round64(size_t n) { return (n + 63) / 64 * 64; }

bool tj_k_conv_implicit_ok(const tj_k_conv *cv) { return cv->geom.sh == 1 && cv->geom.sw == 1; }

/* One convolution on a zero-padded copy of `src`: the source image (c, h,
 * w) is placed at (pt, pl) in an hp x wp frame (negative offsets crop), the
 * kernel (kh, kw, dilation dh, dw) slides with stride 1, and out_c output
 * channels of out_h x out_w are kept. Each output's sum runs over the taps
 * in order in one chain (block 0), or in blocks of `block` taps as our GEMM
 * sums (the window products: tj_k_gemm_f32_block). */
typedef struct frame {
    int64_t c, h, w, pt, pl, hp, wp;
    int64_t kh, kw, dh, dw;
    int64_t out_c, out_h, out_w;
    int64_t block;
} frame;

static int64_t frame_k(const frame *f) { return f->c * f->kh * f->kw; }
/* Zeros after the frame: the wide grid reads up to (kw-1)*dw + NR past it. */
static int64_t frame_floats(const frame *f) { return f->c * f->hp * f->wp + (f->kw - 1) * f->dw + NR; }
static int64_t round_up(int64_t n, int64_t m) { return (n + m - 1) / m * m; }

/* Tile orientation of the forward-type operations (unfold_mm, mm_fold):
 * the wide grid (tile rows = MR output channels, columns = NR wide-grid
 * positions, the ox >= out_w ones wasted) or by positions (tile rows = MR
 * output positions, each read through its own pointer into the frame,
 * columns = NR output channels, the [P][channels] result transposed
 * afterwards). Whichever wastes fewer multiply-adds on padding, with a
 * margin for the transposition. */
/* Channels per tile by positions (and per tile of the weight gradient):
 * NR, or 16 when that wastes less (the 16-column kernels run at about 90%
 * of the speed of the 32-column ones). */
static int64_t tile_width(int64_t channels)
{
    return 0.9 / (double)round_up(channels, 16) > 1.0 / (double)round_up(channels, NR) ? 16 : NR;
}
/* (The 16-column kernel sums even and odd taps apart: not the GEMM's order.) */
static int64_t positions_width(const frame *f) { return f->block ? NR : tile_width(f->out_c); }

static bool by_positions(const frame *f)
{
    double wide = (double)round_up(f->out_h * f->wp, NR) * (double)round_up(f->out_c, MR);
    double positions = (double)round_up(f->out_h * f->out_w, MR) * (double)round_up(f->out_c, positions_width(f));
    if (positions_width(f) == 16) positions /= 0.9;
    return 0.95 * wide > positions;
}

/* Panels of packed weights per group: MR output channels each on the wide
 * grid, positions_width by positions. */
static int64_t frame_panel_width(const frame *f) { return by_positions(f) ? positions_width(f) : MR; }
static int64_t frame_panels(const frame *f) { return (f->out_c + frame_panel_width(f) - 1) / frame_panel_width(f); }

/* unfold_mm: the image padded by (ph, pw); outputs = matrix side. */
static frame forward_frame(const tj_k_conv *cv)
{
    const tj_k_im2col_geom *g = &cv->geom;
    return (frame){g->channels, g->height, g->width, g->ph, g->pw, g->height + 2 * g->ph, g->width + 2 * g->pw,
                   g->kh, g->kw, g->dh, g->dw, cv->mat_channels, g->out_h, g->out_w, 0};
}

/* mm_fold: the matrix side padded by (k-1)*d - p, so that the flipped
 * kernel's outputs cover the image exactly. */
static frame fold_frame(const tj_k_conv *cv)
{
    const tj_k_im2col_geom *g = &cv->geom;
    int64_t eh = (g->kh - 1) * g->dh, ew = (g->kw - 1) * g->dw;
    return (frame){cv->mat_channels, g->out_h, g->out_w, eh - g->ph, ew - g->pw, g->height + eh, g->width + ew,
                   g->kh, g->kw, g->dh, g->dw, g->channels, g->height, g->width, 0};
}

/* Zeros the whole frame (slack included): done once per thread and call,
 * since every item of a call has the same frame and frame_copy only writes
 * the source's rows. */
static void frame_clear(const frame *f, float *dst) { memset(dst, 0, sizeof(float) * (size_t)frame_floats(f)); }

/* Copies the source into its place in a cleared frame. */
static void frame_copy(const frame *f, const float *src, float *dst)
{
    int64_t x0 = f->pl < 0 ? 0 : f->pl, x1 = min64(f->wp, f->pl + f->w);
    int64_t y0 = f->pt < 0 ? 0 : f->pt, y1 = min64(f->hp, f->pt + f->h);
    if (x1 <= x0 || y1 <= y0) return;
    tj_k_copy_rows copy = tj_k_pick_copy_rows();
    for (int64_t c = 0; c < f->c; c++)
        copy(src + (c * f->h + y0 - f->pt) * f->w + (x0 - f->pl), f->w, dst + (c * f->hp + y0) * f->wp + x0, f->wp,
             y1 - y0, x1 - x0);
}

/* off[k] for k = (c, i, j): where tap k's row of B starts in the frame. */
static void frame_offsets(const frame *f, int64_t *off)
{
    for (int64_t c = 0; c < f->c; c++)
        for (int64_t i = 0; i < f->kh; i++)
            for (int64_t j = 0; j < f->kw; j++)
                off[(c * f->kh + i) * f->kw + j] = c * f->hp * f->wp + i * f->dh * f->wp + j * f->dw;
}

/* The weight gradient's items are summed in chunks, a partial gradient
 * each, added in chunk order at the end: more chunks than threads, so that
 * a thread slowed by other processes hands its chunks to the others
 * (tj_k_parallel_steal), and the sums depend on the thread count only
 * (not on which thread ran a chunk). One chunk on one thread. */
static int64_t grad_chunks(const tj_k_conv *cv)
{
    int nt = tj_k_conv_threads(cv, TJ_FLOAT32);
    return nt == 1 ? 1 : min64(cv->batch * cv->groups, 4 * (int64_t)nt);
}

/* Scratch layout. Shared: packed weights of every group (forward), tap
 * offsets, the chunks' partial weight gradients (weight_grad). Per thread:
 * the frame, then the wide output (forward) or the packed gradient
 * (weight_grad). */
typedef struct layout {
    size_t packed, offsets, partials, part, per_thread, frame, wide, gradt;
} layout;

static layout make_layout(const tj_k_conv *cv, tj_k_conv_op op, const frame *f)
{
    layout l = {0};
    int64_t k = frame_k(f);
    l.offsets = round64(sizeof(int64_t) * (size_t)k);
    l.frame = round64(sizeof(float) * (size_t)frame_floats(f));
    if (op == TJ_K_CONV_WEIGHT_GRAD) {
        int64_t r = cv->mat_channels, p = f->out_h * f->out_w;
        l.gradt = round64(sizeof(float) * (size_t)(round_up(r, tile_width(r)) * p));
        l.part = round64(sizeof(float) * (size_t)(cv->groups * k * r));
        l.partials = (size_t)grad_chunks(cv) * l.part;
        l.per_thread = l.frame + l.gradt;
    } else {
        l.packed = round64(sizeof(float) * (size_t)(cv->groups * frame_panels(f) * frame_panel_width(f) * k));
        /* the wide output, or the [P][channels] tiles to transpose */
        int64_t p_tiles = round_up(f->out_h * f->out_w, MR);
        size_t out = by_positions(f) ? (size_t)(p_tiles * frame_panels(f) * frame_panel_width(f))
                                     : (size_t)(f->out_c * f->out_h * f->wp);
        l.wide = round64(sizeof(float) * out);
        l.per_thread = l.frame + l.wide;
    }
    return l;
}

static frame op_frame(const tj_k_conv *cv, tj_k_conv_op op)
{
    return op == TJ_K_CONV_MM_FOLD ? fold_frame(cv) : forward_frame(cv);
}

size_t tj_k_conv_implicit_work_bytes(const tj_k_conv *cv, tj_k_conv_op op)
{
    frame f = op_frame(cv, op);
    layout l = make_layout(cv, op, &f);
    return l.packed + l.offsets + l.partials + (size_t)tj_k_conv_threads(cv, TJ_FLOAT32) * l.per_thread;
}

static char *thread_base(const layout *l, void *work, int t)
{
    return (char *)work + l->packed + l->offsets + l->partials + (size_t)t * l->per_thread;
}

/* Chunk c's partial weight gradient [G][K][R]. */
static float *chunk_part(const layout *l, void *work, int64_t c)
{
    return (float *)(void *)((char *)work + l->packed + l->offsets + (size_t)c * l->part);
}

/* Packs out_c x k weights of each group into panels of frame_panel_width
 * output channels (the A side of the wide grid, the B side by positions):
 * element (row, tap) of group g is at(g, row, tap). */
#define PACK_PANELS(f, groups, ap, AT)                                                       \
    do {                                                                                     \
        int64_t k_ = frame_k(f), np_ = frame_panels(f), w_ = frame_panel_width(f);           \
        for (int64_t g = 0; g < (groups); g++)                                               \
            for (int64_t q = 0; q < np_; q++)                                                \
                for (int64_t t = 0; t < k_; t++)                                             \
                    for (int64_t r = 0; r < w_; r++) {                                       \
                        int64_t row = q * w_ + r;                                            \
                        (ap)[((g * np_ + q) * k_ + t) * w_ + r] = row < (f)->out_c ? AT(g, row, t) : 0; \
                    }                                                                        \
    } while (0)

/* Whether the wide grid's tiles may follow the output rows (each tile NR
 * columns of one row, stored straight into the output) at no more waste
 * than tiles over the whole wide grid (whose valid columns must then be
 * copied out): when the row length rounded to NR is at most the padded width. */
static bool row_tiles(const frame *f)
{
    return round_up(f->out_w, NR) * f->out_h <= round_up(f->out_h * f->wp, NR);
}

/* One tile of the wide grid (A packed at ap, MR rows a tap), over the
 * whole sum or in blocks of f->block taps, each added to the tile so far. */
static void wide_tile(const frame *f, tj_k_sgemm_ukernel_offsets uk, const float *ap, const float *b,
                      const int64_t *off, float *c, int64_t ldc, int mr, int nr, const float *bias)
{
    int64_t k = frame_k(f), block = f->block ? f->block : k;
    for (int64_t p0 = 0; p0 < k; p0 += block)
        uk(min64(block, k - p0), ap + p0 * MR, b, off + p0, c, ldc, mr, nr, p0 ? 1.0f : 0.0f, p0 ? NULL : bias);
}

/* One tile by positions (B packed at bp, nw columns a tap), as wide_tile. */
static void positions_tile(const frame *f, tj_k_sgemm_ukernel_taps uk, const float *const *arows, const float *bp,
                           int64_t nw, const int64_t *off, float *c, int64_t ldc, int mr, int nr)
{
    int64_t k = frame_k(f), block = f->block ? f->block : k;
    for (int64_t p0 = 0; p0 < k; p0 += block)
        uk(min64(block, k - p0), arows, off + p0, bp + p0 * nw, c, ldc, mr, nr, p0 ? 1.0f : 0.0f, NULL);
}

/* One item on its frame `pad` (the wide grid may read past its last
 * element: see frame_floats): the wide-grid GEMM row by row into dst, or
 * over the whole wide grid and keep the valid columns. `epi` (NULL: none)
 * runs on the final sums: row by row, on each band of MR channels as it is
 * finished (still in L1); else on the item's kept columns. */
static void wide_grid(const frame *f, const float *pad, const float *ap, const int64_t *off, const float *bias,
                      float *dst, float *wide, tj_k_sgemm_ukernel_offsets uk, const tj_k_row_epilogue *epi)
{
    int64_t k = frame_k(f), q_all = f->out_h * f->wp, p_all = f->out_h * f->out_w;
    if (row_tiles(f)) {
        for (int64_t ir = 0; ir < f->out_c; ir += MR) {
            int mr = (int)min64(MR, f->out_c - ir);
            for (int64_t oy = 0; oy < f->out_h; oy++)
                for (int64_t x0 = 0; x0 < f->out_w; x0 += NR)
                    wide_tile(f, uk, ap + ir * k, pad + oy * f->wp + x0, off, dst + ir * p_all + oy * f->out_w + x0,
                              p_all, mr, (int)min64(NR, f->out_w - x0), bias ? bias + ir : NULL);
            if (epi) {
                tj_k_row_epilogue band = {.bias = epi->bias ? epi->bias + ir : NULL, .relu = epi->relu};
                tj_k_row_epilogue_apply(&band, dst + ir * p_all, mr, p_all);
            }
        }
        return;
    }
    for (int64_t ir = 0; ir < f->out_c; ir += MR)
        for (int64_t q0 = 0; q0 < q_all; q0 += NR)
            wide_tile(f, uk, ap + ir * k, pad + q0, off, wide + ir * q_all + q0, q_all, (int)min64(MR, f->out_c - ir),
                      (int)min64(NR, q_all - q0), bias ? bias + ir : NULL);
    /* the out_c * out_h rows of the wide grid lie wp apart */
    tj_k_pick_copy_rows()(wide, f->wp, dst, f->out_w, f->out_c * f->out_h, f->out_w);
    if (epi) tj_k_row_epilogue_apply(epi, dst, f->out_c, p_all);
}

/* One item: frame the source (in a cleared frame), then wide_grid. */
static void forward_item(const frame *f, const float *src, const float *ap, const int64_t *off, const float *bias,
                         float *dst, float *pad, float *wide, tj_k_sgemm_ukernel_offsets uk)
{
    frame_copy(f, src, pad);
    wide_grid(f, pad, ap, off, bias, dst, wide, uk, NULL);
}

/* One item by positions on its frame `pad` (read at the output positions
 * only): the tiles of MR positions x nw channels into ct ([positions][panels
 * * nw]), transposed into dst. */
static void positions_grid(const frame *f, const float *pad, const float *bp, const int64_t *off, const float *bias,
                           float *dst, float *ct, tj_k_sgemm_ukernel_taps uk, tj_k_transpose_bias tr)
{
    int64_t k = frame_k(f), p_all = f->out_h * f->out_w, np = frame_panels(f), nw = frame_panel_width(f), ldc = np * nw;
    int64_t y = 0, x = 0; /* output position of the next tile row */
    for (int64_t q0 = 0; q0 < p_all; q0 += MR) {
        const float *arows[MR];
        for (int r = 0; r < MR; r++) {
            /* rows past the end repeat the last position (not stored) */
            arows[r] = q0 + r < p_all ? pad + y * f->wp + x : arows[r - 1];
            if (++x == f->out_w) x = 0, y++;
        }
        for (int64_t n = 0; n < np; n++)
            positions_tile(f, uk, arows, bp + n * nw * k, nw, off, ct + q0 * ldc + n * nw, ldc,
                           (int)min64(MR, p_all - q0), (int)min64(nw, f->out_c - n * nw));
    }
    tr(ct, p_all, f->out_c, ldc, bias, dst, p_all);
}

/* One item by positions: frame the source (in a cleared frame), then positions_grid. */
static void positions_item(const frame *f, const float *src, const float *bp, const int64_t *off, const float *bias,
                           float *dst, float *pad, float *ct, tj_k_sgemm_ukernel_taps uk, tj_k_transpose_bias tr)
{
    frame_copy(f, src, pad);
    positions_grid(f, pad, bp, off, bias, dst, ct, uk, tr);
}

/* The operands of the loops over (sample, group) items; participant t
 * uses thread slice t of work, whose frame (and packed gradient) it clears
 * before its first item (cleared[t]). */
typedef struct items_args {
    const tj_k_conv *cv;
    const frame *f;
    layout l;
    void *work;
    const float *src, *bias, *mat; /* mat: weight_grad's gradient matrix */
    float *dst;
    int64_t chunks; /* weight_grad */
    bool cleared[TJ_K_MAX_PARTICIPANTS];
} items_args;

/* Item `it` of forward_all. */
static void forward_items(void *ctx, int t, int64_t it)
{
    items_args *a = ctx;
    const frame *f = a->f;
    const float *ap = a->work;
    const int64_t *off = (const int64_t *)(const void *)((char *)a->work + a->l.packed);
    int64_t src_size = f->c * f->h * f->w, dst_size = f->out_c * f->out_h * f->out_w, k = frame_k(f);
    int64_t G = a->cv->groups, panel = frame_panels(f) * frame_panel_width(f) * k;
    tj_k_sgemm_ukernel_offsets uk = tj_k_sgemm_pick_ukernel_offsets();
    tj_k_sgemm_ukernel_taps uk_taps =
        positions_width(f) == 16 ? tj_k_sgemm_pick_ukernel_taps16() : tj_k_sgemm_pick_ukernel_taps();
    tj_k_transpose_bias tr = tj_k_pick_transpose_bias();
    bool positions = by_positions(f);
    char *base = thread_base(&a->l, a->work, t);
    float *pad = (float *)(void *)base, *out = (float *)(void *)(base + a->l.frame);
    if (!a->cleared[t]) frame_clear(f, pad), a->cleared[t] = true;
    int64_t g = it % G;
    const float *b = a->bias ? a->bias + g * f->out_c : NULL;
    if (positions)
        positions_item(f, a->src + it * src_size, ap + g * panel, off, b, a->dst + it * dst_size, pad, out, uk_taps,
                       tr);
    else
        forward_item(f, a->src + it * src_size, ap + g * panel, off, b, a->dst + it * dst_size, pad, out, uk);
}

/* Runs forward_item over every (sample, group) item. */
static void forward_all(const tj_k_conv *cv, tj_k_conv_op op, const frame *f, const float *src, const float *bias,
                        float *dst, void *work)
{
    items_args a = {.cv = cv, .f = f, .l = make_layout(cv, op, f), .work = work, .src = src, .bias = bias, .dst = dst};
    tj_k_parallel_steal(tj_k_conv_threads(cv, TJ_FLOAT32), cv->batch * cv->groups, forward_items, &a);
}

void tj_k_conv_implicit_unfold_mm(const tj_k_conv *cv, const float *img, const float *w, const float *bias,
                                  float *mat, void *work)
{
    frame f = forward_frame(cv);
    layout l = make_layout(cv, TJ_K_CONV_UNFOLD_MM, &f);
    int64_t k = frame_k(&f);
    float *ap = work;
    /* weight [G][R][K] as it is */
#define W_AT(g, row, t) w[((g) * f.out_c + (row)) * k + (t)]
    PACK_PANELS(&f, cv->groups, ap, W_AT);
#undef W_AT
    frame_offsets(&f, (int64_t *)(void *)((char *)work + l.packed));
    forward_all(cv, TJ_K_CONV_UNFOLD_MM, &f, img, bias, mat, work);
}

void tj_k_conv_implicit_mm_fold(const tj_k_conv *cv, const float *mat, const float *w, const float *bias, float *img,
                                void *work)
{
    frame f = fold_frame(cv);
    layout l = make_layout(cv, TJ_K_CONV_MM_FOLD, &f);
    int64_t kh = f.kh, kw = f.kw, R = f.c, C = f.out_c;
    float *ap = work;
    /* flipped kernel, channel dims swapped: row c, tap (r, i, j) reads
     * weight [g][r][c][kh-1-i][kw-1-j] */
#define W_FLIP_AT(g, row, t)                                                                                  \
    w[((((g) * R + (t) / (kh * kw)) * C + (row)) * kh + (kh - 1 - (t) / kw % kh)) * kw + (kw - 1 - (t) % kw)]
    PACK_PANELS(&f, cv->groups, ap, W_FLIP_AT);
#undef W_FLIP_AT
    frame_offsets(&f, (int64_t *)(void *)((char *)work + l.packed));
    forward_all(cv, TJ_K_CONV_MM_FOLD, &f, mat, bias, img, work);
}

/* Chunk c of the weight gradient: its items (tj_k_parallel's split of
 * the items into a->chunks blocks) summed in order into its partial
 * gradient part[G][K][R]. */
static void weight_grad_chunk(void *ctx, int t, int64_t c)
{
    items_args *a = ctx;
    const frame *f = a->f;
    int64_t G = a->cv->groups, R = f->out_c, K = frame_k(f), P = f->out_h * f->out_w, img_size = f->c * f->h * f->w;
    const int64_t *off = (const int64_t *)(const void *)((char *)a->work + a->l.packed);
    int64_t nw = tile_width(R);
    tj_k_sgemm_ukernel_rows uk = nw == 16 ? tj_k_sgemm_pick_ukernel_rows16() : tj_k_sgemm_pick_ukernel_rows();
    tj_k_sgemm_pack_transposed pack = tj_k_sgemm_pick_pack_transposed();
    char *base = thread_base(&a->l, a->work, t);
    float *pad = (float *)(void *)base, *gradt = (float *)(void *)(base + a->l.frame);
    float *part = chunk_part(&a->l, a->work, c);
    if (!a->cleared[t]) {
        memset(gradt, 0, a->l.gradt);
        frame_clear(f, pad);
        a->cleared[t] = true;
    }
    memset(part, 0, sizeof(float) * (size_t)(G * K * R));
    int64_t n = a->cv->batch * G, q = n / a->chunks, r = n % a->chunks, begin = c * q + min64(c, r);
    for (int64_t it = begin; it < begin + q + (c < r); it++) {
        int64_t g = it % G;
        frame_copy(f, a->src + it * img_size, pad);
        pack(a->mat + it * R * P, R, P, (int)nw, gradt); /* its other columns stay 0 */
        for (int64_t kb = 0; kb < K; kb += MR) {
            const float *arows[MR];
            for (int i = 0; i < MR; i++) arows[i] = pad + off[min64(kb + i, K - 1)];
            for (int64_t j = 0; j < R; j += nw)
                uk(f->out_h, f->out_w, f->wp, arows, gradt + j * P, part + (g * K + kb) * R + j, R,
                   (int)min64(MR, K - kb), (int)min64(nw, R - j), 1.0f, NULL);
        }
    }
}

/* Rows [begin, end) of (g, k) of the weight gradient: gw[g][r][k] = Σ over
 * the chunks, in order, of part[g][k][r]. */
static void weight_grad_sum(void *ctx, int t, int64_t begin, int64_t end)
{
    (void)t;
    items_args *a = ctx;
    int64_t R = a->f->out_c, K = frame_k(a->f);
    for (int64_t gk = begin; gk < end; gk++) {
        int64_t g = gk / K, k = gk % K;
        for (int64_t r = 0; r < R; r++) {
            float acc = 0;
            for (int64_t c = 0; c < a->chunks; c++) acc += chunk_part(&a->l, a->work, c)[gk * R + r];
            a->dst[(g * R + r) * K + k] = acc;
        }
    }
}

void tj_k_conv_implicit_weight_grad(const tj_k_conv *cv, const float *img, const float *mat, float *gw, void *work)
{
    frame f = forward_frame(cv);
    layout l = make_layout(cv, TJ_K_CONV_WEIGHT_GRAD, &f);
    frame_offsets(&f, (int64_t *)(void *)((char *)work + l.packed));
    int nt = tj_k_conv_threads(cv, TJ_FLOAT32);
    items_args a = {.cv = cv, .f = &f, .l = l, .work = work, .src = img, .mat = mat, .dst = gw,
                    .chunks = grad_chunks(cv)};
    tj_k_parallel_steal(nt, a.chunks, weight_grad_chunk, &a);
    tj_k_parallel(nt, cv->groups * frame_k(&f), weight_grad_sum, &a);
}

/* ---- products over the windows of frames the caller padded ---- */

void tj_k_row_epilogue_apply(const tj_k_row_epilogue *e, float *c, int64_t rows, int64_t n)
{
    if (e->bias) {
        tj_k_rows_args add = {.op = TJ_K_ROWS_ADD, .dtype = TJ_FLOAT32, .alpha = 1.0};
        tj_k_rows_loop(rows, n, c, c, e->bias, &add);
    }
    if (e->relu) {
        tj_k_unary_args relu = {.op = TJ_K_RELU, .dtype = TJ_FLOAT32};
        tj_k_unary_loop(rows * n, c, (const void *const[]){c}, &relu);
    }
}

/* The product's frame: k taps at the caller's offsets, rows row_stride apart. */
static frame window_frame(const tj_k_window_product *w)
{
    return (frame){w->k, 0, 0, 0, 0, 0, w->row_stride, 1, 1, 1, 1, w->m, w->out_h, w->out_w, tj_k_gemm_f32_block()};
}

/* Elements of an item's B from its first one on: to the last tap's last
 * output position. */
static int64_t window_valid(const tj_k_window_product *w)
{
    int64_t top = 0;
    for (int64_t p = 0; p < w->k; p++) top = w->taps[p] > top ? w->taps[p] : top;
    return top + (w->out_h - 1) * w->row_stride + w->out_w;
}

/* Elements from an item's first one that its tiles read: those of its B by
 * positions; the wide grid's whole tiles of NR columns further. */
static int64_t window_reach(const tj_k_window_product *w, const frame *f)
{
    int64_t last_row = window_valid(w) - w->out_w;
    if (by_positions(f)) return last_row + w->out_w;
    if (row_tiles(f)) return last_row + round_up(w->out_w, NR);
    return last_row - (w->out_h - 1) * w->row_stride + round_up(w->out_h * w->row_stride, NR);
}

/* Per thread: the packed A, a copy of an item whose tiles would read past
 * the readable elements, the wide output (or the positions' tiles). */
typedef struct window_layout {
    size_t packed, copy, out;
} window_layout;

static window_layout make_window_layout(const tj_k_window_product *w, const frame *f)
{
    window_layout l;
    int64_t p_tiles = round_up(w->out_h * w->out_w, MR);
    l.packed = round64(sizeof(float) * (size_t)(frame_panels(f) * frame_panel_width(f) * w->k));
    l.copy = round64(sizeof(float) * (size_t)window_reach(w, f));
    l.out = round64(sizeof(float) * (size_t)(by_positions(f) ? p_tiles * frame_panels(f) * frame_panel_width(f)
                                                                : w->m * w->out_h * w->row_stride));
    return l;
}

size_t tj_k_window_product_work_bytes(const tj_k_window_product *w)
{
    frame f = window_frame(w);
    window_layout l = make_window_layout(w, &f);
    int nt = w->nthreads < 1 ? 1 : w->nthreads;
    return (size_t)nt * (l.packed + l.copy + l.out) + round64(sizeof(const float *) * (size_t)nt) +
           round64(sizeof(int64_t) * (size_t)nt);
}

/* dst[0, n) = 0 in a loop: the runs are a few elements (a row's border) */
static void zero_run(float *dst, int64_t n)
{
    for (int64_t i = 0; i < n; i++) dst[i] = 0.0f;
}

void tj_k_window_pad_fill(const tj_k_window_pad *pd, int64_t o0, int64_t len, bool borders, float *dst)
{
    int64_t end = o0 + len, total = pd->n * pd->c * pd->hp * pd->wp, stop = end < total ? end : total;
    if (stop < o0) stop = o0;
    memset(dst + (stop - o0), 0, sizeof(float) * (size_t)(end - stop)); /* past the buffer */
    for (int64_t row = o0 / pd->wp; row * pd->wp < stop; row++) {
        int64_t first = row * pd->wp, y = row % pd->hp - pd->pt, ic = row / pd->hp;
        int64_t x0 = (first < o0 ? o0 : first) - first, x1 = min64(first + pd->wp, stop) - first; /* in the range */
        float *d = dst + first - o0;
        if (y < 0 || y >= pd->h) { /* a padding row */
            if (borders) zero_run(d + x0, x1 - x0);
            continue;
        }
        int64_t c0 = min64(x0 > pd->pl ? x0 : pd->pl, x1), c1 = min64(x1, pd->pl + pd->w); /* src's columns */
        if (c1 < c0) c1 = c0;
        if (borders) {
            zero_run(d + x0, c0 - x0);
            zero_run(d + c1, x1 - c1);
        }
        const float *s = pd->src + ic / pd->c * pd->sn + ic % pd->c * pd->sc + y * pd->sh;
        if (pd->sw == 1 && c1 > c0) memcpy(d + c0, s + (c0 - pd->pl), sizeof(float) * (size_t)(c1 - c0));
        else
            for (int64_t x = c0; x < c1; x++) d[x] = s[(x - pd->pl) * pd->sw];
    }
}

typedef struct window_args {
    const tj_k_window_product *w;
    const frame *f;
    window_layout l;
    int64_t reach, valid; /* elements read per item; of them, the view's */
    void *work;
    const float **packed_a; /* per thread: the A its packed panels hold */
    int64_t *pad_phase;     /* per thread, with w->pad.src: where in a padded plane the copy's borders were
                               last written from (-1: never) */
} window_args;

static void window_items(void *ctx, int t, int64_t b)
{
    window_args *a = ctx;
    const tj_k_window_product *w = a->w;
    const frame *f = a->f;
    char *base = (char *)a->work + (size_t)t * (a->l.packed + a->l.copy + a->l.out);
    float *ap = (float *)(void *)base, *copy = (float *)(void *)(base + a->l.packed);
    float *out = (float *)(void *)(base + a->l.packed + a->l.copy);
    const float *av = w->a + b * w->a_bs;
    if (a->packed_a[t] != av) { /* items sharing A (a convolution's weight) pack it once per thread */
#define A_AT(g, row, tap) ((void)(g), av[(row) * w->ars + (tap) * w->acs])
        PACK_PANELS(f, 1, ap, A_AT);
#undef A_AT
        a->packed_a[t] = av;
    }
    const float *src = w->pad.src ? copy : w->frames + w->item_off[b];
    if (w->pad.src) { /* items at one place in a plane have their zeros at the same places in the copy */
        int64_t phase = w->item_off[b] % (w->pad.hp * w->pad.wp);
        tj_k_window_pad_fill(&w->pad, w->item_off[b], a->reach, a->pad_phase[t] != phase, copy);
        a->pad_phase[t] = phase;
    } else if (w->item_off[b] + a->reach > w->readable) { /* its last tiles would read past the end: from a copy */
        memcpy(copy, src, sizeof(float) * (size_t)a->valid);
        memset(copy + a->valid, 0, sizeof(float) * (size_t)(a->reach - a->valid));
        src = copy;
    }
    float *dst = w->c + b * w->m * w->out_h * w->out_w;
    if (by_positions(f)) { /* the transposition adds the bias to the final sums */
        positions_grid(f, src, ap, w->taps, w->epi.bias, dst, out, tj_k_sgemm_pick_ukernel_taps(),
                       tj_k_pick_transpose_bias());
        tj_k_row_epilogue relu = {.relu = w->epi.relu};
        tj_k_row_epilogue_apply(&relu, dst, w->m, w->out_h * w->out_w);
    } else {
        wide_grid(f, src, ap, w->taps, NULL, dst, out, tj_k_sgemm_pick_ukernel_offsets(), &w->epi);
    }
}

void tj_k_window_product_run(const tj_k_window_product *w, void *work)
{
    frame f = window_frame(w);
    int nt = w->nthreads < 1 ? 1 : w->nthreads;
    window_layout l = make_window_layout(w, &f);
    char *per_thread = (char *)work + (size_t)nt * (l.packed + l.copy + l.out);
    window_args a = {.w = w, .f = &f, .l = l, .reach = window_reach(w, &f), .valid = window_valid(w), .work = work,
                     .packed_a = (const float **)(void *)per_thread,
                     .pad_phase = (int64_t *)(void *)(per_thread + round64(sizeof(const float *) * (size_t)nt))};
    for (int t = 0; t < nt; t++) a.packed_a[t] = NULL, a.pad_phase[t] = -1;
    tj_k_parallel_steal(nt, w->batch, window_items, &a);
}
