/* AVX-512 max pooling (see pool.h).
 *
 * The tap update handles 16 output columns of one tap at a time: a
 * contiguous load for stride 1, two loads and a permute for stride 2, a
 * gather otherwise; masked stores keep the values and indices of the
 * columns where the tap does not win.
 *
 * The plane kernel does the same row by row for every tap of a window while
 * the 16 running maxima and their (32-bit) indices stay in registers, so
 * that a small window (2 x 2, stride 2) costs a few instructions per output
 * instead of a call and a load and store of value and index per tap.
 *
 * The backward keeps pool.c's scatter: a scatter-free 2 x 2 backward here
 * (each input element written once, by masked stores) took 1.3-1.9x the
 * scatter's time on AMD EPYC (Zen 5), packed rows or not. */
#include <immintrin.h>
#include <limits.h>
#include <math.h>

#include "pool.h"

static const int32_t lane_ids[16] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};

static __mmask16 lanes_below(int64_t n)
{
    return n >= 16 ? (__mmask16)0xFFFF : n <= 0 ? 0 : (__mmask16)((1u << n) - 1);
}

void tj_k_max_pool_tap_f32_avx512(const float *row, int64_t y, int64_t width, int64_t lo, int64_t hi, int64_t sw,
                                  int64_t off, int64_t xs, float *o, int64_t *ix)
{
    int64_t step = sw * xs;
    if (step > INT_MAX / 16) {
        tj_k_max_pool_tap_f32_generic(row, y, width, lo, hi, sw, off, xs, o, ix);
        return;
    }
    const __m512i lanes = _mm512_loadu_si512(lane_ids);
    const __m512i gather_idx = _mm512_mullo_epi32(lanes, _mm512_set1_epi32((int)step));
    const __m512i even = _mm512_add_epi32(lanes, lanes);
    const __m512i lanes_lo = _mm512_set_epi64(7, 6, 5, 4, 3, 2, 1, 0);
    const __m512i pos_lo = _mm512_mullo_epi64(lanes_lo, _mm512_set1_epi64(sw));
    const __m512i pos_hi = _mm512_add_epi64(pos_lo, _mm512_set1_epi64(8 * sw));
    for (int64_t ox = lo; ox < hi; ox += 16) {
        int64_t n = hi - ox;
        __mmask16 m = lanes_below(n);
        int64_t x = ox * sw + off;
        const float *base = row + x * xs;
        __m512 v;
        if (step == 1) {
            v = _mm512_maskz_loadu_ps(m, base);
        } else if (step == 2) {
            /* the even elements of 2n-1 consecutive ones */
            int64_t span = 2 * (n >= 16 ? 16 : n) - 1;
            v = _mm512_permutex2var_ps(_mm512_maskz_loadu_ps(lanes_below(span), base), even,
                                       _mm512_maskz_loadu_ps(lanes_below(span - 16), base + 16));
        } else {
            v = _mm512_mask_i32gather_ps(_mm512_setzero_ps(), m, gather_idx, base, 4);
        }
        __m512 cur = _mm512_maskz_loadu_ps(m, o + ox);
        __mmask16 take = (_mm512_cmp_ps_mask(v, cur, _CMP_GT_OQ) | _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q)) & m;
        _mm512_mask_storeu_ps(o + ox, take, v);
        __m512i first = _mm512_set1_epi64(y * width + x);
        _mm512_mask_storeu_epi64(ix + ox, (__mmask8)take, _mm512_add_epi64(first, pos_lo));
        _mm512_mask_storeu_epi64(ix + ox + 8, (__mmask8)(take >> 8), _mm512_add_epi64(first, pos_hi));
    }
}

bool tj_k_max_pool_plane_f32_avx512_ok(const tj_k_pool2d *p)
{
    /* indices and lane offsets in 32 bits */
    return p->xs == 1 && p->height * p->width <= INT_MAX / 2 && p->sw <= INT_MAX / 64;
}

/* Lanes l of the chunk starting at column ox0 with lo <= ox0 + l < hi. */
static __mmask16 lanes_in(int64_t ox0, int64_t lo, int64_t hi)
{
    return (__mmask16)(lanes_below(hi - ox0) & ~lanes_below(lo - ox0));
}

/* Lanes where v wins over the running maximum cur: larger, or nan. */
static inline __mmask16 wins(__m512 v, __m512 cur)
{
    return _mm512_cmp_ps_mask(v, cur, _CMP_GT_OQ) | _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
}

/* The running maximum of 16 lanes takes v where tm allows and v wins
 * (larger, or nan); its index becomes pos. */
#define MAX_UPDATE(cur, at, v, pos, tm)                                                                   \
    do {                                                                                              \
        __mmask16 take_ = wins(v, cur) & (tm);                                                        \
        cur = _mm512_mask_mov_ps(cur, take_, v);                                                      \
        at = _mm512_mask_mov_epi32(at, take_, pos);                                                   \
    } while (0)

static inline void store_row(float *o, int64_t *ix, __mmask16 m, __m512 cur, __m512i at)
{
    _mm512_mask_storeu_ps(o, m, cur);
    _mm512_mask_storeu_epi64(ix, (__mmask8)m, _mm512_cvtepi32_epi64(_mm512_castsi512_si256(at)));
    _mm512_mask_storeu_epi64(ix + 8, (__mmask8)(m >> 8), _mm512_cvtepi32_epi64(_mm512_extracti64x4_epi64(at, 1)));
}

/* ---- the common MaxPool2d(2): 2 x 2 windows, stride 2, no padding, no
 * dilation ----
 *
 * A vector holds 16 windows: 16 of one output row, or, in planes of up to
 * 8 windows a row, those of 2 (or 4) consecutive output rows packed 8 (or
 * 4) lanes apart, so that the cnn's 7-window rows fill 14 lanes instead of
 * 7. Either way lane l's window starts at float 2l of the 32 floats
 * [a | b] its input rows are loaded into (a packed row slot q at float
 * 2 * lanes * q): one permute of a and b gives the windows' first columns,
 * another their second columns. */

/* Row packing of a plane whose rows hold out_w <= 8 windows. */
typedef struct pack2x2 {
    int lanes;               /* lanes per output row: 8 or 4 */
    int64_t rows;            /* output rows packed: whole vectors of rows with both input rows */
    __m512i first;           /* lane l's window's first element, from the vector's first window's */
    __mmask16 lane_mask;     /* lanes holding a window */
    __mmask16 second_col;    /* lanes whose window has a second column (not a ceil_mode edge) */
    __mmask16 cols;          /* the input columns of one row slot */
} pack2x2;

/* Whether the plane has a vector of packed rows: out_w <= 8 and enough
 * rows with both input rows (else the packing's set-up is all cost). */
static bool packs_rows(const tj_k_pool2d *p)
{
    int64_t slots = p->out_w > 4 ? 2 : 4, full = p->out_h < p->height / 2 ? p->out_h : p->height / 2;
    return p->out_w <= 8 && full >= slots;
}

static pack2x2 pack2x2_make(const tj_k_pool2d *p)
{
    int lanes = p->out_w > 4 ? 8 : 4, shift = lanes == 8 ? 3 : 2, slots = 16 / lanes;
    int64_t cols = p->width < 2 * p->out_w ? p->width : 2 * p->out_w;
    int64_t full = p->out_h < p->height / 2 ? p->out_h : p->height / 2;
    const __m512i l = _mm512_loadu_si512(lane_ids);
    __m512i slot = _mm512_srli_epi32(l, (unsigned)shift), col = _mm512_and_si512(l, _mm512_set1_epi32(lanes - 1));
    pack2x2 k = {.lanes = lanes, .rows = full - full % slots, .cols = lanes_below(cols)};
    k.first = _mm512_add_epi32(_mm512_mullo_epi32(slot, _mm512_set1_epi32((int32_t)(2 * p->width))),
                               _mm512_add_epi32(col, col));
    for (int q = 0; q < slots; q++) {
        k.lane_mask |= (__mmask16)(lanes_below(p->out_w) << (q * lanes));
        k.second_col |= (__mmask16)(lanes_below(cols / 2) << (q * lanes));
    }
    return k;
}

/* One input row of each of a vector's row slots: slot q from
 * row + q * step, its k->cols columns. */
static inline void load_packed(const pack2x2 *k, const float *row, int64_t step, __m512 *a, __m512 *b)
{
    if (k->lanes == 8) {
        *a = _mm512_maskz_loadu_ps(k->cols, row);
        *b = _mm512_maskz_loadu_ps(k->cols, row + step);
        return;
    }
    __mmask8 m = (__mmask8)k->cols;
    *a = _mm512_insertf32x8(_mm512_castps256_ps512(_mm256_maskz_loadu_ps(m, row)),
                            _mm256_maskz_loadu_ps(m, row + step), 1);
    *b = _mm512_insertf32x8(_mm512_castps256_ps512(_mm256_maskz_loadu_ps(m, row + 2 * step)),
                            _mm256_maskz_loadu_ps(m, row + 3 * step), 1);
}

/* 16 windows from their rows' first and second columns (t, b: top and
 * bottom row): the maximum and its plane position (from `first`, the
 * window's first element). The taps' updates in window order are taken as
 * a tree, each row's pair and then the two rows: the update keeps the first
 * maximum, or the last nan, of what it has seen, and that composes. */
static inline void reduce_2x2(__m512 t0, __m512 t1, __m512 b0, __m512 b1, __mmask16 second_col,
                              __mmask16 second_row, __m512i first, int64_t width, __m512 *v, __m512i *at)
{
    const __m512i one = _mm512_set1_epi32(1);
    __mmask16 kt = wins(t1, t0) & second_col, kb = wins(b1, b0) & second_col;
    __m512 top = _mm512_mask_mov_ps(t0, kt, t1), bottom = _mm512_mask_mov_ps(b0, kb, b1);
    __mmask16 kv = wins(bottom, top) & second_row;
    __m512i below = _mm512_add_epi32(first, _mm512_set1_epi32((int32_t)width));
    *v = _mm512_mask_mov_ps(top, kv, bottom);
    *at = _mm512_mask_mov_epi32(_mm512_mask_add_epi32(first, kt, first, one), kv,
                                _mm512_mask_add_epi32(below, kb, below, one));
}

/* Output row oy of the common MaxPool2d(2): 2 x 2 windows, stride 2, no
 * padding, no dilation. Each input row of a window is two loads split into
 * its even and odd columns; a ceil_mode edge window may lack its second row
 * or column. */
static void max_pool_row_2x2(const tj_k_pool2d *p, const float *plane, int64_t oy, float *o, int64_t *ix)
{
    const __m512i lanes = _mm512_loadu_si512(lane_ids);
    const __m512i even = _mm512_add_epi32(lanes, lanes), odd = _mm512_add_epi32(even, _mm512_set1_epi32(1));
    int64_t width = p->width, ow = p->out_w, rows = 2 * oy + 1 < p->height ? 2 : 1;
    for (int64_t ox0 = 0; ox0 < ow; ox0 += 16) {
        int64_t x = 2 * ox0, n = ow - ox0 < 16 ? ow - ox0 : 16, cols = width - x < 2 * n ? width - x : 2 * n;
        __mmask16 m = lanes_below(n), m_odd = lanes_below(cols / 2);
        __m512 cur = _mm512_set1_ps(-INFINITY);
        __m512i at = _mm512_add_epi32(even, _mm512_set1_epi32((int32_t)(2 * oy * width + x)));
        for (int64_t i = 0; i < rows; i++) {
            const float *src = plane + (2 * oy + i) * p->ys + x;
            __m512 v0 = _mm512_maskz_loadu_ps(lanes_below(cols), src);
            __m512 v1 = _mm512_maskz_loadu_ps(lanes_below(cols - 16), src + 16);
            __m512i pos = _mm512_add_epi32(even, _mm512_set1_epi32((int32_t)((2 * oy + i) * width + x)));
            __m512 ve = _mm512_permutex2var_ps(v0, even, v1), vo = _mm512_permutex2var_ps(v0, odd, v1);
            MAX_UPDATE(cur, at, ve, pos, m);
            MAX_UPDATE(cur, at, vo, _mm512_add_epi32(pos, _mm512_set1_epi32(1)), m_odd);
        }
        store_row(o + ox0, ix + ox0, m, cur, at);
    }
}

/* The packed rows [0, k->rows) of a plane. */
static void max_pool_packed_2x2(const tj_k_pool2d *p, const pack2x2 *k, const float *plane, float *out,
                                int64_t *idx)
{
    const __m512i lanes = _mm512_loadu_si512(lane_ids);
    const __m512i even = _mm512_add_epi32(lanes, lanes), odd = _mm512_add_epi32(even, _mm512_set1_epi32(1));
    int slots = 16 / k->lanes;
    int64_t ys = p->ys, width = p->width, n = slots * p->out_w;
    __mmask16 stored = lanes_below(n);
    for (int64_t oy = 0; oy < k->rows; oy += slots) {
        const float *row = plane + 2 * oy * ys;
        __m512 a0, b0, a1, b1, v;
        __m512i at, first = _mm512_add_epi32(k->first, _mm512_set1_epi32((int32_t)(2 * oy * width)));
        load_packed(k, row, 2 * ys, &a0, &b0);
        load_packed(k, row + ys, 2 * ys, &a1, &b1);
        reduce_2x2(_mm512_permutex2var_ps(a0, even, b0), _mm512_permutex2var_ps(a0, odd, b0),
                   _mm512_permutex2var_ps(a1, even, b1), _mm512_permutex2var_ps(a1, odd, b1), k->second_col,
                   k->lane_mask, first, width, &v, &at);
        /* the slots' rows are consecutive in the output: close the gaps between them */
        store_row(out + oy * p->out_w, idx + oy * p->out_w, stored, _mm512_maskz_compress_ps(k->lane_mask, v),
                  _mm512_maskz_compress_epi32(k->lane_mask, at));
    }
}

static void max_pool_plane_2x2(const tj_k_pool2d *p, const float *plane, float *out, int64_t *idx)
{
    int64_t oy = 0;
    if (packs_rows(p)) {
        pack2x2 k = pack2x2_make(p);
        max_pool_packed_2x2(p, &k, plane, out, idx);
        oy = k.rows;
    }
    for (; oy < p->out_h; oy++) max_pool_row_2x2(p, plane, oy, out + oy * p->out_w, idx + oy * p->out_w);
}

/* Output row oy of any geometry. */
static void max_pool_row(const tj_k_pool2d *p, const float *plane, int64_t oy, const int64_t *tap_lo,
                         const int64_t *tap_hi, float *o, int64_t *ix)
{
    const __m512i lanes = _mm512_loadu_si512(lane_ids);
    const __m512i lane_pos = _mm512_mullo_epi32(lanes, _mm512_set1_epi32((int32_t)p->sw));
    const __m512i even = _mm512_add_epi32(lanes, lanes);
    int64_t sw = p->sw, y0 = oy * p->sh - p->ph;
    while (y0 < 0) y0 += p->dh;
    for (int64_t ox0 = 0; ox0 < p->out_w; ox0 += 16) {
        __mmask16 m = lanes_below(p->out_w - ox0);
        /* PyTorch's start index: the window's first in-bounds row and column */
        int64_t x_lane0 = ox0 * sw - p->pw;
        __m512i at = _mm512_add_epi32(lane_pos, _mm512_set1_epi32((int32_t)(y0 * p->width + x_lane0)));
        if (x_lane0 < 0) {
            int32_t s[16];
            for (int l = 0; l < 16; l++) {
                int64_t x0 = x_lane0 + l * sw;
                while (x0 < 0) x0 += p->dw;
                s[l] = (int32_t)(y0 * p->width + x0);
            }
            at = _mm512_loadu_si512(s);
        }
        __m512 cur = _mm512_set1_ps(-INFINITY);
        for (int64_t i = 0; i < p->kh; i++) {
            int64_t y = oy * p->sh - p->ph + i * p->dh;
            if (y < 0 || y >= p->height) continue;
            const float *row = plane + y * p->ys;
            for (int64_t j = 0; j < p->kw; j++) {
                __mmask16 tm = lanes_in(ox0, tap_lo[j], tap_hi[j]) & m;
                if (!tm) continue;
                int64_t x = x_lane0 + j * p->dw; /* lane 0's column */
                const float *base = row + x;
                __m512 v;
                if (sw == 1) {
                    v = _mm512_maskz_loadu_ps(tm, base);
                } else if (sw == 2) {
                    /* lanes [a, b) read the even elements among [2a, 2b - 1) */
                    int a = __builtin_ctz(tm), b = 32 - __builtin_clz((unsigned)tm);
                    uint64_t em = ((1ull << (2 * b - 1)) - 1) & ~((1ull << (2 * a)) - 1);
                    v = _mm512_permutex2var_ps(_mm512_maskz_loadu_ps((__mmask16)em, base), even,
                                               _mm512_maskz_loadu_ps((__mmask16)(em >> 16), base + 16));
                } else {
                    v = _mm512_mask_i32gather_ps(_mm512_setzero_ps(), tm, lane_pos, base, 4);
                }
                __m512i pos = _mm512_add_epi32(lane_pos, _mm512_set1_epi32((int32_t)(y * p->width + x)));
                MAX_UPDATE(cur, at, v, pos, tm);
            }
        }
        store_row(o + ox0, ix + ox0, m, cur, at);
    }
}

void tj_k_max_pool_plane_f32_avx512(const tj_k_pool2d *p, const float *plane, const int64_t *tap_lo,
                                    const int64_t *tap_hi, float *out, int64_t *idx)
{
    if (tj_k_max_pool_is_2x2(p)) {
        max_pool_plane_2x2(p, plane, out, idx);
        return;
    }
    for (int64_t oy = 0; oy < p->out_h; oy++)
        max_pool_row(p, plane, oy, tap_lo, tap_hi, out + oy * p->out_w, idx + oy * p->out_w);
}
