/* The elementwise engine (see iter.h). */
#include <omp.h>
#include <string.h>

#include "iter.h"

#define BLOCK 512

int tj_threads_for(int64_t work)
{
    int nt = tj_get_num_threads();
    if (nt <= 1 || work < 32768) return 1;
    int64_t by_work = work / 32768;
    return by_work < nt ? (int)by_work : nt;
}

void tj_convert(void *dst, tj_dtype dd, const void *src, tj_dtype sd, int64_t n)
{
    if (dd == sd) {
        memcpy(dst, src, (size_t)n * tj_dtype_size(dd));
        return;
    }
#define CONV(DT, ST, EXPR)                                                      \
    do {                                                                        \
        DT *d_ = dst;                                                           \
        const ST *s_ = src;                                                     \
        for (int64_t i = 0; i < n; i++) d_[i] = EXPR;                           \
    } while (0)
#define FROM(DT, DD)                                                            \
    switch (sd) {                                                               \
    case TJ_FLOAT32: CONV(DT, float, (DD ? s_[i] != 0 : (DT)s_[i])); break;     \
    case TJ_FLOAT64: CONV(DT, double, (DD ? s_[i] != 0 : (DT)s_[i])); break;    \
    case TJ_INT64: CONV(DT, int64_t, (DD ? s_[i] != 0 : (DT)s_[i])); break;     \
    case TJ_BOOL: CONV(DT, uint8_t, (DT)(s_[i] != 0)); break;                   \
    }
    switch (dd) {
    case TJ_FLOAT32: FROM(float, 0); break;
    case TJ_FLOAT64: FROM(double, 0); break;
    case TJ_INT64: FROM(int64_t, 0); break;
    case TJ_BOOL: FROM(uint8_t, 1); break;
    }
#undef FROM
#undef CONV
}

/* Operand geometry after merging dims that are contiguous in every operand. */
typedef struct {
    int ndim;
    int64_t shape[TJ_MAX_DIMS];
    int64_t strides[TJ_ITER_MAX_INPUTS + 1][TJ_MAX_DIMS]; /* [0] is out */
} geometry;

static void coalesce(geometry *g, int nops)
{
    int nd = 0;
    for (int d = 0; d < g->ndim; d++) {
        if (g->shape[d] == 1) continue;
        if (nd > 0) {
            bool merge = true;
            for (int k = 0; k < nops; k++)
                if (g->strides[k][nd - 1] != g->strides[k][d] * g->shape[d]) merge = false;
            if (merge) {
                g->shape[nd - 1] *= g->shape[d];
                for (int k = 0; k < nops; k++) g->strides[k][nd - 1] = g->strides[k][d];
                continue;
            }
        }
        g->shape[nd] = g->shape[d];
        for (int k = 0; k < nops; k++) g->strides[k][nd] = g->strides[k][d];
        nd++;
    }
    if (nd == 0) { /* a single element */
        g->shape[0] = 1;
        for (int k = 0; k < nops; k++) g->strides[k][0] = 0;
        nd = 1;
    }
    g->ndim = nd;
}

/* Gathers (or scatters, when `scatter`) n elements starting at flat index
 * `start` between strided memory `base` and the contiguous buffer `buf`,
 * converting between dtypes. */
static void move_block(const geometry *g, int k, char *base, tj_dtype bd, char *buf, tj_dtype fd,
                       int64_t start, int64_t n, bool scatter)
{
    int nd = g->ndim;
    int64_t idx[TJ_MAX_DIMS];
    int64_t rem = start;
    for (int d = nd - 1; d >= 0; d--) {
        idx[d] = rem % g->shape[d];
        rem /= g->shape[d];
    }
    size_t bes = tj_dtype_size(bd), fes = tj_dtype_size(fd);
    const int64_t *st = g->strides[k];
    int64_t inner = g->shape[nd - 1], is = st[nd - 1];
    int64_t done = 0;
    while (done < n) {
        int64_t off = 0;
        for (int d = 0; d < nd; d++) off += idx[d] * st[d];
        int64_t run = inner - idx[nd - 1];
        if (run > n - done) run = n - done;
        char *p = base + off * (int64_t)bes;
        char *b = buf + done * (int64_t)fes;
        if (is == 1) {
            if (scatter) tj_convert(p, bd, b, fd, run);
            else tj_convert(b, fd, p, bd, run);
        } else if (is == 0 && !scatter) {
            tj_convert(b, fd, p, bd, 1);
            for (int64_t i = 1; i < run; i++) memcpy(b + i * (int64_t)fes, b, fes);
        } else {
            for (int64_t i = 0; i < run; i++) {
                if (scatter) tj_convert(p + i * is * (int64_t)bes, bd, b + i * (int64_t)fes, fd, 1);
                else tj_convert(b + i * (int64_t)fes, fd, p + i * is * (int64_t)bes, bd, 1);
            }
        }
        done += run;
        /* advance the index by `run` */
        idx[nd - 1] += run;
        for (int d = nd - 1; d > 0 && idx[d] >= g->shape[d]; d--) {
            idx[d] = 0;
            idx[d - 1]++;
        }
    }
}

static bool is_direct(const tj_tensor *t, const tj_tensor *out, tj_dtype dt)
{
    if (t->dtype != dt || t->ndim != out->ndim || !tj_tensor_is_contiguous(t)) return false;
    for (int d = 0; d < t->ndim; d++)
        if (t->shape[d] != out->shape[d]) return false;
    return true;
}

void tj_elementwise(tj_tensor *out, tj_tensor *const *in, int nin, tj_dtype compute, tj_loop_fn fn,
                    const void *ctx)
{
    int64_t n = out->numel;
    if (n == 0) return;
    bool direct = tj_tensor_is_contiguous(out);
    for (int k = 0; k < nin && direct; k++) direct = is_direct(in[k], out, compute);
    int nt = tj_threads_for(n);
    if (direct) {
        size_t oes = tj_dtype_size(out->dtype), ies = tj_dtype_size(compute);
        char *o = tj_tensor_ptr(out);
        const char *ip[TJ_ITER_MAX_INPUTS];
        for (int k = 0; k < nin; k++) ip[k] = tj_tensor_ptr(in[k]);
        if (nt == 1) {
            fn(n, o, (const void *const *)ip, ctx);
            return;
        }
#pragma omp parallel num_threads(nt)
        {
            int t = omp_get_thread_num(), got = omp_get_num_threads();
            int64_t chunk = (n + got - 1) / got;
            chunk = (chunk + 15) & ~(int64_t)15;
            int64_t s = t * chunk, e = s + chunk < n ? s + chunk : n;
            if (s < e) {
                const void *p[TJ_ITER_MAX_INPUTS];
                for (int k = 0; k < nin; k++) p[k] = ip[k] + s * (int64_t)ies;
                fn(e - s, o + s * (int64_t)oes, p, ctx);
            }
        }
        return;
    }

    geometry g;
    g.ndim = out->ndim;
    memcpy(g.shape, out->shape, sizeof(int64_t) * (size_t)out->ndim);
    memcpy(g.strides[0], out->strides, sizeof(int64_t) * (size_t)out->ndim);
    for (int k = 0; k < nin; k++) tj_broadcast_strides(in[k], out->ndim, out->shape, g.strides[k + 1]);
    coalesce(&g, nin + 1);
    bool out_direct = tj_tensor_is_contiguous(out);
    int64_t nblocks = (n + BLOCK - 1) / BLOCK;
#pragma omp parallel for num_threads(nt) schedule(static)
    for (int64_t b = 0; b < nblocks; b++) {
        _Alignas(64) char ibuf[TJ_ITER_MAX_INPUTS][BLOCK * 8];
        _Alignas(64) char obuf[BLOCK * 8];
        int64_t s = b * BLOCK, cnt = n - s < BLOCK ? n - s : BLOCK;
        const void *p[TJ_ITER_MAX_INPUTS];
        for (int k = 0; k < nin; k++) {
            move_block(&g, k + 1, tj_tensor_ptr(in[k]), in[k]->dtype, ibuf[k], compute, s, cnt, false);
            p[k] = ibuf[k];
        }
        if (out_direct) {
            fn(cnt, tj_tensor_ptr(out) + s * (int64_t)tj_dtype_size(out->dtype), p, ctx);
        } else {
            fn(cnt, obuf, p, ctx);
            move_block(&g, 0, tj_tensor_ptr(out), out->dtype, obuf, out->dtype, s, cnt, true);
        }
    }
}

static void copy_loop(int64_t n, void *out, const void *const *in, const void *ctx)
{
    const tj_dtype *dt = ctx;
    memcpy(out, in[0], (size_t)n * tj_dtype_size(*dt));
}

void tj_copy_convert(tj_tensor *dst, const tj_tensor *src)
{
    /* gather src converted to dst's dtype; the loop is then a plain copy */
    tj_tensor *in[1] = {(tj_tensor *)src};
    tj_elementwise(dst, in, 1, dst->dtype, copy_loop, &dst->dtype);
}
