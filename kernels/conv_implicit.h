/* Stride-1 float32 convolutions without im2col ("implicit GEMM").
 *
 * With stride 1, row k = (c, i, j) of the im2col matrix, read over a "wide"
 * grid of positions q = oy*Wp + ox (Wp the padded width, ox running over the
 * whole padded row), is the padded image itself shifted by
 * off(k) = c*Hp*Wp + i*dh*Wp + j*dw. The GEMM micro-kernel can therefore
 * load B straight from one zero-padded copy of the image (a few KB, in L1)
 * instead of an unfolded matrix K times larger: the columns ox >= out_w of
 * the wide grid are computed and dropped. For small channel counts, where
 * writing im2col costs as much as the GEMM, this halves the time or better.
 *
 * Operations as in conv.h:
 *   unfold_mm    the wide-grid GEMM on the padded image
 *   mm_fold      the same on the padded matrix side with the kernel flipped
 *                and its channel dims swapped (a stride-1 transposed
 *                convolution is a convolution with padding (k-1)*d - p)
 *   weight_grad  Σ over the valid positions of image · grad (the reduction
 *                skips the wide grid's extra columns, so a nan or inf there
 *                cannot leak into the sums) */
#ifndef TJIT_KERNELS_CONV_IMPLICIT_H
#define TJIT_KERNELS_CONV_IMPLICIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "conv.h"

/** True when `cv` has stride 1 (the implicit path applies). */
bool tj_k_conv_implicit_ok(const tj_k_conv *cv);
/** Scratch bytes for `op` on the implicit path. */
size_t tj_k_conv_implicit_work_bytes(const tj_k_conv *cv, tj_k_conv_op op);

void tj_k_conv_implicit_unfold_mm(const tj_k_conv *cv, const float *img, const float *w, const float *bias,
                                  float *mat, void *work);
void tj_k_conv_implicit_mm_fold(const tj_k_conv *cv, const float *mat, const float *w, const float *bias, float *img,
                                void *work);
void tj_k_conv_implicit_weight_grad(const tj_k_conv *cv, const float *img, const float *mat, float *gw, void *work);

/** A float32 product's epilogue by rows (a convolution's bias is one value
 * per output channel, a row of C): bias[i] (NULL: none) added to every
 * element of row i after its whole sum, as tj_k_rows_loop adds it (the add
 * kernel's bits for the bias broadcast); then, with relu, tj_k_unary_loop's
 * relu, max(0, x) with nan and -0.0 kept: the bits of aten::maximum(0, x),
 * relu as the core table writes it. */
typedef struct tj_k_row_epilogue {
    const float *bias;
    bool relu;
} tj_k_row_epilogue;

/** Applies `e` to C [rows, n] (contiguous), row i taking bias[i]. */
void tj_k_row_epilogue_apply(const tj_k_row_epilogue *e, float *c, int64_t rows, int64_t n);

/** A batch of float32 products whose B is read over stride-1 windows of
 * frames, as the implicit convolution reads its padded image: a decomposed
 * convolution's im2col columns read where the padded input lies
 * (runtime/op_linalg.c's gathered products). For each item b of `batch`:
 * C_b [m, n] = A_b [m, k] @ B_b with n = out_h * out_w, A_b element (i, p)
 * at a[b * a_bs + i * ars + p * acs], B_b element (p, y * out_w + x) at
 * frames[item_off[b] + taps[p] + y * row_stride + x], C_b at c + b * m * n
 * (contiguous). taps[] and item_off[] are >= 0, row_stride >= out_w, and
 * the first `readable` elements from `frames` may be read: the wide grid
 * reads (and drops) columns past out_w, and an item whose tiles would read
 * past them runs from a zero-padded copy. Each element of C is summed as
 * tj_k_gemm_f32 sums it for B copied out (blocks of tj_k_gemm_f32_block()
 * taps, each a chain of fused multiply-adds from 0, added in order), so
 * the bytes are the GEMM's, on any number of threads: call only when
 * tj_k_gemm_f32_supported(). `epi` (bias of m elements, relu; both off:
 * none) runs on each item's C once its sums are final, by the thread that
 * computed them while C is still in its cache. Items are spread over up to
 * `nthreads` threads (tj_k_parallel_steal).
 * With pad.src set, the frames are never made (`frames` and `readable`
 * unused): they stand for the zero-padded contiguous [n, c, hp, wp] buffer
 * whose element (i, j, y, x) is src's (i, j, y - pt, x - pl) where that
 * lies in src, else 0 (a decomposed convolution's zeros + slice_scatter),
 * and each item's reach of them is padded into the thread's copy from src
 * (exact: the same values the buffer holds). */
typedef struct tj_k_window_pad {
    const float *src;       /* NULL: the frames are given */
    int64_t n, c, h, w;     /* src's sizes */
    int64_t sn, sc, sh, sw; /* src's strides (elements) */
    int64_t hp, wp, pt, pl; /* the frames' last two sizes; src's place in them */
} tj_k_window_pad;

typedef struct tj_k_window_product {
    int64_t batch, m, k, out_h, out_w, row_stride;
    const float *a;
    int64_t ars, acs, a_bs;
    const float *frames;
    const int64_t *item_off, *taps;
    int64_t readable;
    float *c;
    tj_k_row_epilogue epi;
    int nthreads;
    tj_k_window_pad pad;
} tj_k_window_product;

/** Elements [o0, o0 + len) of the zero-padded buffer `pd` stands for
 * (pd->src set) into dst: src's part of each row in the range, zeros past
 * the buffer's end and, with `borders`, at the padding's places (the traced
 * convolution's frame_copy, for any range of the frames rather than one
 * item's channels whole). Without `borders`, dst must hold zeros there
 * already: a fill of a range starting at the same place in a padded plane
 * (o0 modulo Hp * Wp) and at least as long, with borders, or without
 * after such a fill. */
void tj_k_window_pad_fill(const tj_k_window_pad *pd, int64_t o0, int64_t len, bool borders, float *dst);

/** Scratch bytes tj_k_window_product_run needs for `w`. */
size_t tj_k_window_product_work_bytes(const tj_k_window_product *w);
/** Computes the products `w` describes, with `work` of
 * tj_k_window_product_work_bytes(w) bytes (64-byte aligned). */
void tj_k_window_product_run(const tj_k_window_product *w, void *work);

#endif
