/* Reflection, replication and zero padding (kernels/pad.h). Each output
 * row is three runs: the left edge (mapped element by element, or zeros),
 * the block of input columns the row covers (copied or added as one run),
 * the right edge. */
#include "pad.h"

#include <string.h>

#include "parallel.h"

/* The output columns [*m0, *m1) that read input columns in order, from
 * column m0 - left. */
static void middle_run(const tj_k_pad_geom *g, int64_t *m0, int64_t *m1)
{
    int64_t a = g->left < 0 ? 0 : g->left, b = g->left + g->iw;
    if (a > g->ow) a = g->ow;
    if (b > g->ow) b = g->ow;
    *m0 = a;
    *m1 = b < a ? a : b;
}

/* The offset (elements) of plane p = (n, c) of an array with strides st. */
static int64_t plane_offset(const tj_k_pad_geom *g, const int64_t *st, int64_t p)
{
    return p / g->c * st[0] + p % g->c * st[1];
}

typedef struct fwd_ctx {
    tj_k_pad_mode mode;
    size_t esize;
    const char *in;
    const int64_t *st;
    char *out;
    const tj_k_pad_geom *g;
} fwd_ctx;

static void forward_rows(void *vctx, int t, int64_t begin, int64_t end)
{
    (void)t;
    const fwd_ctx *c = vctx;
    const tj_k_pad_geom *g = c->g;
    size_t es = c->esize;
    int64_t m0, m1, sw = c->st[3];
    middle_run(g, &m0, &m1);
    for (int64_t r = begin; r < end; r++) {
        int64_t p = r / g->oh, ir = tj_k_pad_source(c->mode, r % g->oh, g->top, g->ih);
        const char *src = c->in + (plane_offset(g, c->st, p) + ir * c->st[2]) * (int64_t)es;
        char *dst = c->out + r * g->ow * (int64_t)es;
        for (int64_t j = 0; j < m0; j++)
            memcpy(dst + j * es, src + tj_k_pad_source(c->mode, j, g->left, g->iw) * sw * (int64_t)es, es);
        const char *run = src + (m0 - g->left) * sw * (int64_t)es;
        if (sw == 1) memcpy(dst + m0 * es, run, (size_t)(m1 - m0) * es);
        else
            for (int64_t j = m0; j < m1; j++) memcpy(dst + j * es, run + (j - m0) * sw * (int64_t)es, es);
        for (int64_t j = m1; j < g->ow; j++)
            memcpy(dst + j * es, src + tj_k_pad_source(c->mode, j, g->left, g->iw) * sw * (int64_t)es, es);
    }
}

void tj_k_pad_forward(tj_k_pad_mode mode, size_t esize, const void *in, const int64_t *in_strides, void *out,
                      const tj_k_pad_geom *g, int nthreads)
{
    fwd_ctx c = {mode, esize, in, in_strides, out, g};
    int64_t rows = g->n * g->c * g->oh;
    if (rows == 0 || g->ow == 0) return;
    tj_k_parallel(rows < nthreads ? (int)rows : nthreads, rows, forward_rows, &c);
}

static void zero_rows(void *vctx, int t, int64_t begin, int64_t end)
{
    (void)t;
    const fwd_ctx *c = vctx;
    const tj_k_pad_geom *g = c->g;
    size_t es = c->esize, row_bytes = (size_t)g->ow * es;
    int64_t m0, m1, sw = c->st[3];
    middle_run(g, &m0, &m1);
    int64_t p = begin / g->oh, y = begin % g->oh; /* stepped along, no division per row */
    const char *plane = c->in + plane_offset(g, c->st, p) * (int64_t)es;
    char *dst = c->out + begin * (int64_t)row_bytes;
    for (int64_t r = begin; r < end; r++, dst += row_bytes) {
        int64_t ir = y - g->top;
        if (ir < 0 || ir >= g->ih) {
            memset(dst, 0, row_bytes);
        } else {
            const char *run = plane + (ir * c->st[2] + (m0 - g->left) * sw) * (int64_t)es;
            memset(dst, 0, (size_t)m0 * es);
            if (sw == 1) memcpy(dst + m0 * (int64_t)es, run, (size_t)(m1 - m0) * es);
            else
                for (int64_t j = m0; j < m1; j++) memcpy(dst + j * (int64_t)es, run + (j - m0) * sw * (int64_t)es, es);
            memset(dst + m1 * (int64_t)es, 0, (size_t)(g->ow - m1) * es);
        }
        if (++y == g->oh && r + 1 < end) {
            y = 0;
            plane = c->in + plane_offset(g, c->st, ++p) * (int64_t)es;
        }
    }
}

void tj_k_pad_zeros(size_t esize, const void *in, const int64_t *in_strides, void *out, const tj_k_pad_geom *g,
                    int nthreads)
{
    fwd_ctx c = {.esize = esize, .in = in, .st = in_strides, .out = out, .g = g};
    int64_t rows = g->n * g->c * g->oh;
    if (rows == 0 || g->ow == 0) return;
    tj_k_parallel(rows < nthreads ? (int)rows : nthreads, rows, zero_rows, &c);
}

typedef struct bwd_ctx {
    tj_k_pad_mode mode;
    const void *gout;
    const int64_t *st;
    void *gin;
    const tj_k_pad_geom *g;
} bwd_ctx;

/* One plane's gradient in row-major order of the output positions. */
#define PAD_BACKWARD_PLANES(T, name)                                                                   \
    static void name(void *vctx, int t, int64_t begin, int64_t end)                                    \
    {                                                                                                  \
        (void)t;                                                                                       \
        const bwd_ctx *c = vctx;                                                                       \
        const tj_k_pad_geom *g = c->g;                                                                 \
        int64_t m0, m1, sw = c->st[3];                                                                 \
        middle_run(g, &m0, &m1);                                                                       \
        for (int64_t p = begin; p < end; p++) {                                                        \
            T *gi = (T *)c->gin + p * g->ih * g->iw;                                                   \
            memset(gi, 0, sizeof(T) * (size_t)(g->ih * g->iw));                                        \
            for (int64_t r = 0; r < g->oh; r++) {                                                      \
                const T *go = (const T *)c->gout + plane_offset(g, c->st, p) + r * c->st[2];           \
                T *row = gi + tj_k_pad_source(c->mode, r, g->top, g->ih) * g->iw;                      \
                for (int64_t j = 0; j < m0; j++) row[tj_k_pad_source(c->mode, j, g->left, g->iw)] += go[j * sw]; \
                T *run = row + (m0 - g->left);                                                         \
                for (int64_t j = m0; j < m1; j++) run[j - m0] += go[j * sw];                           \
                for (int64_t j = m1; j < g->ow; j++)                                                   \
                    row[tj_k_pad_source(c->mode, j, g->left, g->iw)] += go[j * sw];                    \
            }                                                                                          \
        }                                                                                              \
    }
PAD_BACKWARD_PLANES(float, backward_f32)
PAD_BACKWARD_PLANES(double, backward_f64)

void tj_k_pad_backward(tj_k_pad_mode mode, tj_dtype dtype, const void *grad_out, const int64_t *gout_strides,
                       void *grad_in, const tj_k_pad_geom *g, int nthreads)
{
    bwd_ctx c = {mode, grad_out, gout_strides, grad_in, g};
    int64_t planes = g->n * g->c;
    if (planes == 0) return;
    int nt = planes < nthreads ? (int)planes : nthreads;
    tj_k_parallel(nt, planes, dtype == TJ_FLOAT32 ? backward_f32 : backward_f64, &c);
}
