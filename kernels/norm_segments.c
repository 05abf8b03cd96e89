/* Segment passes of batch and group norm (see norm_segments.h): segments
 * are spread over threads; float32 goes to the per-ISA loops, float64 (and
 * float32 without AVX2) to the same algorithms in portable C. */
#include <math.h>

#include "cpu_isa.h"
#include "norm_segments.h"
#include "parallel.h"

#define DEFINE_SEGMENTS(T, SUF)                                                                               \
    static void moments_##SUF(const T *x, int64_t len, int64_t s0, int64_t s1, double *mean, double *m2)     \
    {                                                                                                         \
        for (int64_t s = s0; s < s1; s++) {                                                                   \
            const T *xs = x + s * len;                                                                        \
            double shift = isfinite(xs[0]) ? (double)xs[0] : 0.0, sum = 0, sum_sq = 0;                        \
            for (int pass = 0; pass < 2; pass++) {                                                            \
                sum = sum_sq = 0;                                                                             \
                for (int64_t i = 0; i < len; i++) {                                                           \
                    double d = (double)xs[i] - shift;                                                         \
                    sum += d;                                                                                 \
                    sum_sq += d * d;                                                                          \
                }                                                                                             \
                double c = sum / (double)len;                                                                 \
                if (!(c * c * (double)len > sum_sq - sum * c)) break;                                         \
                shift += c;                                                                                   \
            }                                                                                                 \
            double c = sum / (double)len, q = sum_sq - sum * c;                                               \
            mean[s] = shift + c;                                                                              \
            m2[s] = q > 0 || q != q ? q : 0.0;                                                                \
        }                                                                                                     \
    }                                                                                                         \
    static void dots_##SUF(const T *g, const T *x, int64_t len, int64_t s0, int64_t s1, const double *shift, \
                           double *sum_g, double *sum_gx)                                                     \
    {                                                                                                         \
        for (int64_t s = s0; s < s1; s++) {                                                                   \
            const T *gs = g + s * len, *xs = x + s * len;                                                     \
            T sh = (T)shift[s];                                                                               \
            double a = 0, b = 0;                                                                              \
            for (int64_t i = 0; i < len; i++) {                                                               \
                a += gs[i];                                                                                   \
                b += (double)gs[i] * (double)(xs[i] - sh);                                                    \
            }                                                                                                 \
            sum_g[s] = a;                                                                                     \
            sum_gx[s] = b;                                                                                    \
        }                                                                                                     \
    }                                                                                                         \
    static void affine_##SUF(const T *x, const T *g, int64_t len, int64_t s0, int64_t s1, const double *shift, \
                             const double *alpha, const double *beta, const double *gamma, T *y)              \
    {                                                                                                         \
        for (int64_t s = s0; s < s1; s++) {                                                                   \
            T sh = x ? (T)shift[s] : 0, al = x ? (T)alpha[s] : 0, be = g ? (T)beta[s] : 0, ga = (T)gamma[s];  \
            const T *xs = x ? x + s * len : NULL, *gs = g ? g + s * len : NULL;                               \
            T *ys = y + s * len;                                                                              \
            for (int64_t i = 0; i < len; i++) {                                                               \
                T r = ga;                                                                                     \
                if (xs) r += (xs[i] - sh) * al;                                                               \
                if (gs) r += gs[i] * be;                                                                      \
                ys[i] = r;                                                                                    \
            }                                                                                                 \
        }                                                                                                     \
    }
DEFINE_SEGMENTS(float, f32_c)
DEFINE_SEGMENTS(double, f64)

/* One call's operands, for the block bodies below. */
typedef struct seg_args {
    const tj_k_segments *s;
    tj_k_isa isa;
    const void *x, *g;
    const double *shift, *alpha, *beta, *gamma;
    double *o1, *o2;
    void *y;
} seg_args;

static int threads_for(const tj_k_segments *s)
{
    int nt = (double)s->count * (double)s->len < 16384 ? 1 : s->nthreads;
    return nt > s->count ? (int)s->count : nt < 1 ? 1 : nt;
}

static void moments_block(void *ctx, int t, int64_t s0, int64_t s1)
{
    const seg_args *a = ctx;
    int64_t n = a->s->len;
    (void)t;
    if (a->s->dtype == TJ_FLOAT64) moments_f64(a->x, n, s0, s1, a->o1, a->o2);
    else if (a->isa == TJ_K_ISA_AVX512) tj_k_segment_moments_f32_avx512(a->x, n, s0, s1, a->o1, a->o2);
    else if (a->isa == TJ_K_ISA_AVX2) tj_k_segment_moments_f32_avx2(a->x, n, s0, s1, a->o1, a->o2);
    else moments_f32_c(a->x, n, s0, s1, a->o1, a->o2);
}

static void dots_block(void *ctx, int t, int64_t s0, int64_t s1)
{
    const seg_args *a = ctx;
    int64_t n = a->s->len;
    (void)t;
    if (a->s->dtype == TJ_FLOAT64) dots_f64(a->g, a->x, n, s0, s1, a->shift, a->o1, a->o2);
    else if (a->isa == TJ_K_ISA_AVX512) tj_k_segment_dots_f32_avx512(a->g, a->x, n, s0, s1, a->shift, a->o1, a->o2);
    else if (a->isa == TJ_K_ISA_AVX2) tj_k_segment_dots_f32_avx2(a->g, a->x, n, s0, s1, a->shift, a->o1, a->o2);
    else dots_f32_c(a->g, a->x, n, s0, s1, a->shift, a->o1, a->o2);
}

static void affine_block(void *ctx, int t, int64_t s0, int64_t s1)
{
    const seg_args *a = ctx;
    int64_t n = a->s->len;
    (void)t;
    if (a->s->dtype == TJ_FLOAT64)
        affine_f64(a->x, a->g, n, s0, s1, a->shift, a->alpha, a->beta, a->gamma, a->y);
    else if (a->isa == TJ_K_ISA_AVX512)
        tj_k_segment_affine_f32_avx512(a->x, a->g, n, s0, s1, a->shift, a->alpha, a->beta, a->gamma, a->y);
    else if (a->isa == TJ_K_ISA_AVX2)
        tj_k_segment_affine_f32_avx2(a->x, a->g, n, s0, s1, a->shift, a->alpha, a->beta, a->gamma, a->y);
    else affine_f32_c(a->x, a->g, n, s0, s1, a->shift, a->alpha, a->beta, a->gamma, a->y);
}

void tj_k_segment_moments(const tj_k_segments *s, const void *x, double *mean, double *m2)
{
    seg_args a = {.s = s, .isa = tj_k_isa_active(), .x = x, .o1 = mean, .o2 = m2};
    if (s->count > 0) tj_k_parallel(threads_for(s), s->count, moments_block, &a);
}

void tj_k_segment_dots(const tj_k_segments *s, const void *g, const void *x, const double *shift, double *sum_g,
                       double *sum_gx)
{
    seg_args a = {.s = s, .isa = tj_k_isa_active(), .x = x, .g = g, .shift = shift, .o1 = sum_g, .o2 = sum_gx};
    if (s->count > 0) tj_k_parallel(threads_for(s), s->count, dots_block, &a);
}

void tj_k_segment_affine(const tj_k_segments *s, const void *x, const void *g, const double *shift,
                         const double *alpha, const double *beta, const double *gamma, void *y)
{
    seg_args a = {.s = s, .isa = tj_k_isa_active(), .x = x, .g = g, .shift = shift, .alpha = alpha,
                  .beta = beta, .gamma = gamma, .y = y};
    if (s->count > 0) tj_k_parallel(threads_for(s), s->count, affine_block, &a);
}
