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
 * The backward of 2 x 2 pooling writes each input element once (the
 * window's gradient where its index names the element, else 0) instead of
 * zeroing the plane and scattering into it. */
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

/* The running maximum of 16 lanes takes v where tm allows and v wins
 * (larger, or nan); its index becomes pos. */
#define MAX_UPDATE(cur, at, v, pos, tm)                                                                   \
    do {                                                                                              \
        __mmask16 gt_ = _mm512_cmp_ps_mask(v, cur, _CMP_GT_OQ), nan_ = _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q); \
        __mmask16 take_ = (gt_ | nan_) & (tm);                                                        \
        cur = _mm512_mask_mov_ps(cur, take_, v);                                                      \
        at = _mm512_mask_mov_epi32(at, take_, pos);                                                   \
    } while (0)

static inline void store_row(float *o, int64_t *ix, __mmask16 m, __m512 cur, __m512i at)
{
    _mm512_mask_storeu_ps(o, m, cur);
    _mm512_mask_storeu_epi64(ix, (__mmask8)m, _mm512_cvtepi32_epi64(_mm512_castsi512_si256(at)));
    _mm512_mask_storeu_epi64(ix + 8, (__mmask8)(m >> 8), _mm512_cvtepi32_epi64(_mm512_extracti64x4_epi64(at, 1)));
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
    bool two = tj_k_max_pool_is_2x2(p);
    for (int64_t oy = 0; oy < p->out_h; oy++) {
        float *o = out + oy * p->out_w;
        int64_t *ix = idx + oy * p->out_w;
        if (two) max_pool_row_2x2(p, plane, oy, o, ix);
        else max_pool_row(p, plane, oy, tap_lo, tap_hi, o, ix);
    }
}

/* Lanes of a 16-bit mask from the 8-bit compare masks of two int64 halves. */
static __mmask16 eq64(__m512i lo, __m512i hi, __m512i want_lo, __m512i want_hi)
{
    return (__mmask16)(_mm512_cmpeq_epi64_mask(lo, want_lo) | (_mm512_cmpeq_epi64_mask(hi, want_hi) << 8));
}

/* One input row of a 2 x 2 window row: the gradient where the even / odd
 * column won, interleaved, stored over `cols` columns. */
static void store_pairs(float *row, int64_t cols, __m512 g, __mmask16 even_won, __mmask16 odd_won)
{
    const __m512i lanes = _mm512_loadu_si512(lane_ids);
    const __m512i half = _mm512_srli_epi32(lanes, 1);
    const __m512i from_odd = _mm512_slli_epi32(_mm512_and_si512(lanes, _mm512_set1_epi32(1)), 4);
    const __m512i pick_lo = _mm512_add_epi32(half, from_odd); /* 0, 16, 1, 17, ... */
    const __m512i pick_hi = _mm512_add_epi32(pick_lo, _mm512_set1_epi32(8));
    __m512 e = _mm512_maskz_mov_ps(even_won, g), o = _mm512_maskz_mov_ps(odd_won, g);
    _mm512_mask_storeu_ps(row, lanes_below(cols), _mm512_permutex2var_ps(e, pick_lo, o));
    _mm512_mask_storeu_ps(row + 16, lanes_below(cols - 16), _mm512_permutex2var_ps(e, pick_hi, o));
}

bool tj_k_max_pool2d_backward_plane_2x2_f32_avx512(const tj_k_pool2d *p, const float *go, const int64_t *ix,
                                                  float *gi)
{
    const __m512i lanes8 = _mm512_set_epi64(14, 12, 10, 8, 6, 4, 2, 0);
    int64_t width = p->width, height = p->height, ow = p->out_w;
    const __m512i one = _mm512_set1_epi64(1), below = _mm512_set1_epi64(width);
    for (int64_t oy = 0; oy < p->out_h; oy++) {
        int64_t y = 2 * oy;
        bool two_rows = y + 1 < height;
        float *row = gi + y * width;
        for (int64_t ox0 = 0; ox0 < ow; ox0 += 16) {
            int64_t n = ow - ox0 < 16 ? ow - ox0 : 16, x = 2 * ox0, cols = width - x < 2 * n ? width - x : 2 * n;
            __mmask16 m = lanes_below(n), m_odd = lanes_below(cols / 2);
            const int64_t *at = ix + oy * ow + ox0;
            __m512i lo = _mm512_maskz_loadu_epi64((__mmask8)m, at);
            __m512i hi = _mm512_maskz_loadu_epi64((__mmask8)(m >> 8), at + 8);
            __m512i e_lo = _mm512_add_epi64(lanes8, _mm512_set1_epi64(y * width + x));
            __m512i e_hi = _mm512_add_epi64(e_lo, _mm512_set1_epi64(16));
            __mmask16 m0 = eq64(lo, hi, e_lo, e_hi) & m;
            __mmask16 m1 = eq64(lo, hi, _mm512_add_epi64(e_lo, one), _mm512_add_epi64(e_hi, one)) & m_odd;
            __mmask16 m2 = 0, m3 = 0;
            if (two_rows) {
                __m512i d_lo = _mm512_add_epi64(e_lo, below), d_hi = _mm512_add_epi64(e_hi, below);
                m2 = eq64(lo, hi, d_lo, d_hi) & m;
                m3 = eq64(lo, hi, _mm512_add_epi64(d_lo, one), _mm512_add_epi64(d_hi, one)) & m_odd;
            }
            if ((__mmask16)(m0 | m1 | m2 | m3) != m) return false; /* an index outside its own window */
            __m512 g = _mm512_maskz_loadu_ps(m, go + oy * ow + ox0);
            store_pairs(row + x, cols, g, m0, m1);
            if (two_rows) store_pairs(row + width + x, cols, g, m2, m3);
        }
        /* columns no window covers */
        for (int64_t xx = 2 * ow; xx < width; xx++) {
            row[xx] = 0;
            if (two_rows) row[width + xx] = 0;
        }
    }
    for (int64_t y = 2 * p->out_h; y < height; y++)
        for (int64_t xx = 0; xx < width; xx++) gi[y * width + xx] = 0;
    return true;
}
