/* The per-ISA float32 pieces of the layer-norm and softmax backward and of
 * the fused AdamW update, called directly: the dispatcher only ever runs the
 * best ISA of the machine, so the AVX2 variants are checked here against a
 * reference for every tail length (the row lengths 1..70 cover empty, one
 * and several vectors plus every partial last vector of both widths). */
#include <criterion/criterion.h>
#include <math.h>

#include "kernels/adamw.h"
#include "kernels/layer_norm.h"
#include "kernels/softmax.h"
#include "test_util.h"

#define MAXN 70

typedef void (*grad_input_fn)(const float *, const float *, float, float, const float *, float *, int64_t);
typedef void (*grad_params_fn)(const float *, const float *, const float *, const float *, int64_t, int64_t, int64_t,
                               int64_t, float *, float *);
typedef void (*softmax_bwd_fn)(const float *, const float *, float *, int64_t, bool);
typedef void (*adamw_fn)(int64_t, const tj_k_adamw_buffers *, const tj_k_adamw_scalars *);

static void check_layer_norm(const char *isa, grad_input_fn grad_input, grad_params_fn grad_params)
{
    enum { ROWS = 5 };
    float g[ROWS * MAXN], x[ROWS * MAXN], w[MAXN], mean[ROWS], rstd[ROWS], gx[MAXN], gw[MAXN], gb[MAXN];
    for (int n = 1; n <= MAXN; n++) {
        for (int i = 0; i < ROWS * n; i++) g[i] = sinf(1.3f * (float)i), x[i] = 3 * cosf(0.7f * (float)i);
        for (int i = 0; i < n; i++) w[i] = 1 + 0.1f * (float)i;
        for (int r = 0; r < ROWS; r++) mean[r] = 0.1f * (float)r, rstd[r] = 1.5f;
        for (int with_w = 0; with_w < 2; with_w++) {
            const float *wp = with_w ? w : NULL;
            double sa = 0, sb = 0;
            for (int j = 0; j < n; j++) {
                double wg = g[j] * (wp ? wp[j] : 1.0);
                sa += wg;
                sb += wg * (x[j] - mean[0]) * rstd[0];
            }
            grad_input(g, x, mean[0], rstd[0], wp, gx, n);
            for (int j = 0; j < n; j++) {
                double wg = g[j] * (wp ? wp[j] : 1.0);
                double want = rstd[0] * (wg - sa / n - (x[j] - mean[0]) * rstd[0] * sb / n);
                cr_expect(fabs(gx[j] - want) <= 1e-5 * (1 + fabs(want)), "%s grad_input n=%d j=%d: %g vs %g", isa, n, j,
                          gx[j], want);
            }
        }
        int j0 = n > 3 ? 2 : 0;
        grad_params(g, x, mean, rstd, ROWS, n, j0, n - j0, gw, gb);
        for (int j = j0; j < n; j++) {
            double ww = 0, wb = 0;
            for (int r = 0; r < ROWS; r++) {
                ww += g[r * n + j] * (x[r * n + j] - mean[r]) * rstd[r];
                wb += g[r * n + j];
            }
            cr_expect(fabs(gw[j] - ww) <= 1e-5 * (1 + fabs(ww)), "%s grad_weight n=%d j=%d", isa, n, j);
            cr_expect(fabs(gb[j] - wb) <= 1e-5 * (1 + fabs(wb)), "%s grad_bias n=%d j=%d", isa, n, j);
        }
    }
}

Test(row_backward, layer_norm_avx512_matches_the_reference_for_every_tail)
{
    if (!test_cpu_has_avx512()) cr_skip_test("no AVX-512");
    check_layer_norm("avx512", tj_k_layer_norm_grad_input_f32_avx512, tj_k_layer_norm_grad_params_f32_avx512);
}

Test(row_backward, layer_norm_avx2_matches_the_reference_for_every_tail)
{
    if (!test_cpu_has_avx2()) cr_skip_test("no AVX2");
    check_layer_norm("avx2", tj_k_layer_norm_grad_input_f32_avx2, tj_k_layer_norm_grad_params_f32_avx2);
}

static void check_softmax(const char *isa, softmax_bwd_fn row)
{
    float g[MAXN], y[MAXN], gx[MAXN];
    for (int n = 1; n <= MAXN; n++)
        for (int take_log = 0; take_log < 2; take_log++) {
            for (int i = 0; i < n; i++) {
                g[i] = sinf((float)i);
                y[i] = take_log ? -1 - cosf((float)i) * cosf((float)i) : 1.0f / (float)n;
            }
            double s = 0;
            for (int i = 0; i < n; i++) s += take_log ? g[i] : (double)g[i] * y[i];
            row(g, y, gx, n, take_log);
            for (int i = 0; i < n; i++) {
                double want = take_log ? g[i] - exp(y[i]) * s : y[i] * (g[i] - s);
                cr_expect(fabs(gx[i] - want) <= 1e-5 * (1 + fabs(want)), "%s %s n=%d i=%d: %g vs %g", isa,
                          take_log ? "log_softmax" : "softmax", n, i, gx[i], want);
            }
        }
}

Test(row_backward, softmax_avx512_matches_the_reference_for_every_tail)
{
    if (!test_cpu_has_avx512()) cr_skip_test("no AVX-512");
    check_softmax("avx512", tj_k_softmax_backward_row_f32_avx512);
}

Test(row_backward, softmax_avx2_matches_the_reference_for_every_tail)
{
    if (!test_cpu_has_avx2()) cr_skip_test("no AVX2");
    check_softmax("avx2", tj_k_softmax_backward_row_f32_avx2);
}

/* The vector loops round exactly as the formula of adamw.h in scalar float
 * (this file builds without contraction: -std=c11). */
static void check_adamw(const char *isa, adamw_fn loop)
{
    float p[MAXN], g[MAXN], m[MAXN], v[MAXN], mx[MAXN], po[MAXN], mo[MAXN], vo[MAXN], mxo[MAXN];
    tj_k_adamw_scalars s;
    tj_k_adamw_scalars_init(&s, 3e-3, 0.9, 0.999, 0.05, 1e-8, 4);
    for (int n = 1; n <= MAXN; n++)
        for (int ams = 0; ams < 2; ams++) {
            for (int i = 0; i < n; i++) {
                p[i] = sinf((float)i), g[i] = 0.1f * cosf(1.1f * (float)i), m[i] = 0.05f * sinf(0.3f * (float)i);
                v[i] = 1e-3f * (1 + sinf(0.9f * (float)i)), mx[i] = i % 3 ? 1.2e-3f : NAN;
            }
            tj_k_adamw_buffers b = {p, g, m, v, ams ? mx : NULL, po, mo, vo, ams ? mxo : NULL};
            loop(n, &b, &s);
            for (int i = 0; i < n; i++) {
                float pp = p[i] * (float)s.decay;
                float mm = m[i] * (float)s.beta1 + (float)s.one_minus_beta1 * g[i];
                float vv = v[i] * (float)s.beta2 + (float)s.one_minus_beta2 * g[i] * g[i];
                float sq = ams ? (isnan(mx[i]) ? mx[i] : mx[i] > vv ? mx[i] : vv) : vv;
                float want = pp + (float)s.neg_step_size * mm / (sqrtf(sq) / (float)s.bc2_sqrt + (float)s.eps);
                cr_expect(mo[i] == mm && vo[i] == vv, "%s n=%d i=%d: moments differ", isa, n, i);
                cr_expect(po[i] == want || (isnan(po[i]) && isnan(want)), "%s n=%d amsgrad=%d i=%d: %.9g vs %.9g",
                          isa, n, ams, i, po[i], want);
                if (ams) cr_expect(mxo[i] == sq || (isnan(mxo[i]) && isnan(sq)), "%s n=%d i=%d: max", isa, n, i);
            }
        }
}

Test(row_backward, adamw_avx512_rounds_as_the_scalar_formula)
{
    if (!test_cpu_has_avx512()) cr_skip_test("no AVX-512");
    check_adamw("avx512", tj_k_adamw_f32_avx512);
}

Test(row_backward, adamw_avx2_rounds_as_the_scalar_formula)
{
    if (!test_cpu_has_avx2()) cr_skip_test("no AVX2");
    check_adamw("avx2", tj_k_adamw_f32_avx2);
}
