/* The batch / group norm segment passes (kernels/norm_segments.h: moments,
 * dots, affine) on each float32 path against PyTorch's values. The AVX-512
 * and AVX2 loops (norm_segments_isa.h) are called directly, each where the
 * CPU has it; the dispatched entry points run float32 under each ISA
 * tj_k_isa_force allows here (kernels/cpu_isa.h: the generic one always)
 * and float64 on the portable C loops. Segments: "long", 3 of 70 elements (every
 * unrolled loop and a tail at both widths): a wave, a constant (M2 exactly
 * 0), 1000 plus a wave whose first 16 elements sit 50 higher (the moments
 * pass runs again around the mean); "short", 4 of 5 (tails only). Produced
 * by PyTorch 1.13 (/usr/bin/python3, CPU) in float64 from the float32 data
 * that make_x / make_g build: */
#if 0
import torch, math
def xa(s, i):
    if s == 0: return 2 * math.sin(0.37 * i) + 0.1 * (i % 7)
    if s == 1: return 3.25
    return 1000 + 2 * math.sin(0.37 * i + 1) + (50 if i < 16 else 0)
xb = lambda s, i: math.sin(0.9 * (5 * s + i)) * (1 + s)
for tag, count, length, fx in (("long", 3, 70, xa), ("short", 4, 5, xb)):
    x = torch.tensor([[fx(s, i) for i in range(length)] for s in range(count)], dtype=torch.float32).double()
    g = torch.tensor([math.cos(0.23 * k) - 0.1 for k in range(count * length)],
                     dtype=torch.float32).reshape(count, length).double()
    mean = x.mean(1); m2 = ((x - mean[:, None]) ** 2).sum(1)
    sh = mean.float().double()  # the shift handed to dots and affine, float32-exact
    s = torch.arange(count, dtype=torch.float64)
    alpha, beta, gamma = 0.5 + 0.25 * s, -0.75 + 0.5 * s, 0.1 * s - 0.2
    # tag_mean: mean, tag_m2: m2, tag_sum_g: g.sum(1), tag_sum_gx: (g * (x - sh[:, None])).sum(1),
    # tag_y_x: (x - sh[:, None]) * alpha[:, None] + gamma[:, None], tag_y_g: g * beta[:, None] + gamma[:, None]
#endif
#include <criterion/criterion.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "kernels/cpu_isa.h"
#include "kernels/norm_segments.h"
#include "test_util.h"

/* long: 3 segments of 70 */
static const double long_mean[3] = {
    0.31147178056250724, 3.25, 1011.4827270507812};
static const double long_m2[3] = {
    140.59201912465855, 0.0, 30796.889519773424};
static const double long_sum_g[3] = {
    -7.6917840940877795, -3.1054820120334625, -13.506319587118924};
static const double long_sum_gx[3] = {
    15.857885094007134, 0.0, -252.14314220344642};
static const double long_y_x[210] = {
    -0.355735895, 0.0558795363, 0.418552044, 0.689962748, 0.840144995, 0.855539325, 0.74082959, 0.16830844,
    -0.125139621, -0.443030556, -0.735572037, -0.956402656, -1.06886685, -1.05097574, -1.24838358, -0.974975762,
    -0.610989448, -0.19892126, 0.212224606, 0.573568764, 0.842972162, 0.640739742, 0.653638962, 0.536691251,
    0.312492314, 0.018153581, -0.299720255, -0.591339228, -1.16046679, -1.2706778, -1.25028848, -1.09529113,
    -0.819896606, -0.454611082, -0.0421069235, 0.0185526043, 0.37855393, 0.64593983, 0.79128826, 0.801694039,
    0.68251622, 0.456652108, -0.188561273, -0.50640094, -0.797081557, -1.01449358, -1.12244403, -1.09955507,
    -0.942157325, -1.01478666, -0.648216513, -0.235293244, 0.174863222, 0.53350735, 0.798865679, 0.941790465,
    0.599704626, 0.478304449, 0.250788096, -0.0452838808, -0.363072316, -0.652798739, -0.868482766, -1.32416528,
    -1.29877549, -1.13898241, -0.859646079, -0.491806042, -0.0784805089, 0.331156138, -0.1, -0.1, -0.1, -0.1, -0.1,
    -0.1, -0.1, -0.1, -0.1, -0.1, -0.1, -0.1, -0.1, -0.1, -0.1, -0.1, -0.1, -0.1, -0.1, -0.1, -0.1, -0.1, -0.1,
    -0.1, -0.1, -0.1, -0.1, -0.1, -0.1, -0.1, -0.1, -0.1, -0.1, -0.1, -0.1, -0.1, -0.1, -0.1, -0.1, -0.1, -0.1,
    -0.1, -0.1, -0.1, -0.1, -0.1, -0.1, -0.1, -0.1, -0.1, -0.1, -0.1, -0.1, -0.1, -0.1, -0.1, -0.1, -0.1, -0.1,
    -0.1, -0.1, -0.1, -0.1, -0.1, -0.1, -0.1, -0.1, -0.1, -0.1, -0.1, 40.2002563, 40.4771118, 40.4887085,
    40.2334595, 39.7460327, 39.0922241, 38.3606567, 37.6502075, 37.0571899, 36.6616821, 36.517395, 36.6438599,
    37.0237427, 37.6057739, 38.3112183, 39.0446167, -10.293457, -9.79248047, -9.52026367, -9.51361084, -9.77355957,
    -10.2647705, -10.9208374, -11.6529541, -12.3620605, -12.9521484, -13.3433228, -13.482666, -13.3513794,
    -12.9671631, -12.382019, -11.6751709, -10.9422607, -10.2825317, -9.78521729, -9.51763916, -9.51605225,
    -9.78063965, -10.2755737, -10.93396, -11.6665649, -12.3742676, -12.9613647, -13.3482666, -13.4827271,
    -13.3464966, -12.9580078, -12.369812, -11.6616211, -10.9291382, -10.2716675, -9.77807617, -9.51513672,
    -9.51861572, -9.7878418, -10.286499, -10.9470215, -11.6801147, -12.3864746, -12.970459, -13.3531494, -13.482666,
    -13.3414917, -12.9487305, -12.357605, -11.6480103, -10.9160767, -10.2608032, -9.77093506, -9.51275635};
static const double long_y_g[210] = {
    -0.874999982, -0.855249804, -0.797039387, -0.703434494, -0.579365116, -0.431365584, -0.267230625, -0.0956047706,
    0.0744729072, 0.234044898, 0.374707001, 0.489050958, 0.571054536, 0.616398889, 0.622695822, 0.589613634,
    0.518894824, 0.414263862, 0.281231347, 0.126803766, -0.0408856057, -0.213005051, -0.380489521, -0.534518068,
    -0.666978446, -0.770894331, -0.840792742, -0.872992349, -0.865797323, -0.819586527, -0.736793843, -0.621779647,
    -0.480601464, -0.320694734, -0.15048132, 0.0210741267, 0.184936243, 0.332474905, 0.455919641, 0.548768955,
    0.606132734, 0.624989736, 0.604346919, 0.545291471, 0.450933638, 0.326242927, 0.177786547, 0.0133832499,
    -0.158308324, -0.328245633, -0.487478559, -0.627620783, -0.741291326, -0.822503564, -0.866980222, -0.872378838,
    -0.838415098, -0.766877767, -0.661534545, -0.527933557, -0.373111156, -0.205221446, -0.0331066966, 0.134168285,
    0.287793595, 0.419678259, 0.522876206, 0.591952342, 0.623268563, 0.615175533, 0.156033212, 0.128173345,
    0.0896129102, 0.0423827708, -0.0110295922, -0.0678110927, -0.124971215, -0.179499491, -0.22852408, -0.269462964,
    -0.300160041, -0.318998566, -0.324986359, -0.317808083, -0.297841763, -0.266139007, -0.224369487, -0.174733086,
    -0.119844029, -0.0625931606, -0.00599572659, 0.0469674557, 0.0935069412, 0.131171638, 0.157977843, 0.172513777,
    0.174013817, 0.162399018, 0.138281071, 0.102930212, 0.058208251, 0.00647059232, -0.0495578967, -0.106926352,
    -0.162613338, -0.213685966, -0.257454401, -0.291613466, -0.314364097, -0.324508107, -0.321511215, -0.305531254,
    -0.277409858, -0.23862811, -0.191228515, -0.137707496, -0.0808838461, -0.0237503111, 0.0306840479, 0.0795523167,
    0.120280752, 0.150724286, 0.169279569, 0.17496931, 0.167493874, 0.147246966, 0.115294927, 0.0733205914,
    0.0235346049, -0.0314409122, -0.0887105655, -0.145258123, -0.198105378, -0.244469023, -0.281907207,
    -0.308448157, -0.322694054, -0.323894581, -0.311986542, -0.287597081, 0.152010709, 0.107101694, 0.0552352443,
    -0.000856969738, -0.058220733, -0.11383485, -0.16477029, -0.208344415, -0.242262289, -0.264737576, -0.274586558,
    -0.271290511, -0.255023032, -0.226640865, -0.187638849, -0.140071094, -0.0864428729, -0.0295786224,
    0.0275267698, 0.0818657279, 0.130576357, 0.171093225, 0.201282397, 0.219553918, 0.224945456, 0.21717307,
    0.196646109, 0.164445668, 0.122267641, 0.0723334402, 0.0172729604, -0.0400139168, -0.0965100527, -0.149239957,
    -0.195426494, -0.232637122, -0.258912116, -0.27286759, -0.273768574, -0.261567593, -0.236907274, -0.201086402,
    -0.155991539, -0.103997707, -0.0478432998, 0.00951420423, 0.0650539398, 0.115850791, 0.159229413, 0.192905203,
    0.21510452, 0.224658206, 0.221063092, 0.204508513, 0.175866365, 0.136645153, 0.0889105424, 0.0351765752,
    -0.0217267238, -0.0788024142, -0.133044481, -0.18159616, -0.221900344, -0.251834333, -0.269821584, -0.274914801,
    -0.266845673, -0.246039212, -0.213591233, -0.171210676};
/* short: 4 segments of 5 */
static const double short_mean[4] = {
    0.3484067976474762, 0.012030778825283051, -1.052828486263752, 0.5677566528320312};
static const double short_m2[4] = {
    1.3335216864648707, 12.493707292805254, 11.76625517523753, 45.22880384332345};
static const double short_sum_g[4] = {
    3.746785044670105, -0.685755766928196, -4.898542940616608, -3.9077432453632355};
static const double short_sum_gx[4] = {
    0.21723618690827884, -2.4415941157277543, 0.5594526366914581, -3.240811512050243};
static const double short_y_x[20] = {
    -0.374203396, 0.0174600661, 0.112720418, -0.160513458, -0.595463616, -1.57531827, -1.26816984, -0.0838022334,
    1.0814787, 1.34581165, 2.28918386, -0.319779277, -1.8899802, -1.23312223, 1.15369757, 3.40922633, 4.21859304,
    1.37400711, -2.97180569, -5.5300208};
static const double short_y_g[20] = {
    -0.874999982, -0.855249804, -0.797039387, -0.703434494, -0.579365116, -0.177121861, -0.122410208, -0.0652015902,
    -0.00850903094, 0.0446816325, -0.191569, -0.229683653, -0.257018179, -0.272132963, -0.274231941, -0.689613634,
    -0.618894824, -0.514263862, -0.381231347, -0.226803766};

typedef struct geometry {
    const char *name;
    int64_t count, len;
    double (*x_at)(int64_t s, int64_t i);
    const double *mean, *m2, *sum_g, *sum_gx, *y_x, *y_g;
} geometry;

static double long_x(int64_t s, int64_t i)
{
    if (s == 0) return 2 * sin(0.37 * (double)i) + 0.1 * (double)(i % 7);
    if (s == 1) return 3.25;
    return 1000 + 2 * sin(0.37 * (double)i + 1) + (i < 16 ? 50 : 0);
}

static double short_x(int64_t s, int64_t i) { return sin(0.9 * (double)(5 * s + i)) * (double)(1 + s); }

static const geometry geometries[2] = {
    {"long", 3, 70, long_x, long_mean, long_m2, long_sum_g, long_sum_gx, long_y_x, long_y_g},
    {"short", 4, 5, short_x, short_mean, short_m2, short_sum_g, short_sum_gx, short_y_x, short_y_g},
};

enum { MAX_N = 256, MAX_S = 4 };

/* The float32 inputs of g (x, g) and the per-segment arguments: shift (the
 * mean, float32-exact), alpha, beta, gamma. */
typedef struct inputs {
    float x[MAX_N], g[MAX_N];
    double shift[MAX_S], alpha[MAX_S], beta[MAX_S], gamma[MAX_S];
} inputs;

static void make_inputs(const geometry *geo, inputs *in)
{
    cr_assert(geo->count * geo->len <= MAX_N && geo->count <= MAX_S);
    for (int64_t s = 0; s < geo->count; s++) {
        for (int64_t i = 0; i < geo->len; i++) in->x[s * geo->len + i] = (float)geo->x_at(s, i);
        in->shift[s] = (double)(float)geo->mean[s];
        in->alpha[s] = 0.5 + 0.25 * (double)s;
        in->beta[s] = -0.75 + 0.5 * (double)s;
        in->gamma[s] = 0.1 * (double)s - 0.2;
    }
    for (int64_t k = 0; k < geo->count * geo->len; k++) in->g[k] = (float)(cos(0.23 * (double)k) - 0.1);
}

static void expect_all(const char *path, const char *what, const geometry *geo, const double *got, const double *want,
                       int64_t n, double rtol, double atol)
{
    for (int64_t k = 0; k < n; k++)
        cr_expect(test_close(got[k], want[k], rtol, atol), "%s %s %s[%lld] = %.17g, want %.17g", path, geo->name, what,
                  (long long)k, got[k], want[k]);
}

/* y = (x - shift) alpha + g beta + gamma over all segments, from the two
 * stored halves (both terms: y_x + y_g - gamma). */
static void expect_affine(const char *path, const geometry *geo, const inputs *in, const double *y, bool x, bool g,
                          double rtol)
{
    double want[MAX_N];
    for (int64_t k = 0; k < geo->count * geo->len; k++)
        want[k] = x && g ? geo->y_x[k] + geo->y_g[k] - in->gamma[k / geo->len] : x ? geo->y_x[k] : geo->y_g[k];
    expect_all(path, x && g ? "y (x and g)" : x ? "y (x)" : "y (g)", geo, y, want, geo->count * geo->len, rtol, rtol);
}

/* The float32 loops of one ISA, each over the segments in two calls ([0, 1)
 * and [1, count)), so that s0 / s1 offset them. */
typedef struct isa_loops {
    void (*moments)(const float *, int64_t, int64_t, int64_t, double *, double *);
    void (*dots)(const float *, const float *, int64_t, int64_t, int64_t, const double *, double *, double *);
    void (*affine)(const float *, const float *, int64_t, int64_t, int64_t, const double *, const double *,
                   const double *, const double *, float *);
} isa_loops;

static void check_isa(const char *path, const isa_loops *f)
{
    for (int k = 0; k < 2; k++) {
        const geometry *geo = &geometries[k];
        inputs in;
        make_inputs(geo, &in);
        int64_t c = geo->count, n = geo->len, splits[3] = {0, 1, c};
        double mean[MAX_S], m2[MAX_S], sg[MAX_S], sgx[MAX_S], y[MAX_N];
        float yf[MAX_N];
        for (int p = 0; p < 2; p++) {
            f->moments(in.x, n, splits[p], splits[p + 1], mean, m2);
            f->dots(in.g, in.x, n, splits[p], splits[p + 1], in.shift, sg, sgx);
        }
        expect_all(path, "mean", geo, mean, geo->mean, c, 1e-7, 1e-6);
        expect_all(path, "m2", geo, m2, geo->m2, c, 1e-5, 0);
        expect_all(path, "sum_g", geo, sg, geo->sum_g, c, 1e-6, 1e-6);
        expect_all(path, "sum_gx", geo, sgx, geo->sum_gx, c, 1e-6, 1e-6);
        for (int terms = 1; terms < 4; terms++) {
            const float *xp = terms & 1 ? in.x : NULL, *gp = terms & 2 ? in.g : NULL;
            for (int p = 0; p < 2; p++)
                f->affine(xp, gp, n, splits[p], splits[p + 1], in.shift, in.alpha, in.beta, in.gamma, yf);
            for (int64_t i = 0; i < c * n; i++) y[i] = yf[i];
            expect_affine(path, geo, &in, y, xp, gp, 1e-6);
        }
    }
}

Test(norm_segments, avx512_loops_match_pytorch)
{
    if (!test_cpu_has_avx512()) cr_skip_test("no AVX-512");
    check_isa("avx512", &(isa_loops){tj_k_segment_moments_f32_avx512, tj_k_segment_dots_f32_avx512,
                                     tj_k_segment_affine_f32_avx512});
}

Test(norm_segments, avx2_loops_match_pytorch)
{
    if (!test_cpu_has_avx2()) cr_skip_test("no AVX2");
    check_isa("avx2", &(isa_loops){tj_k_segment_moments_f32_avx2, tj_k_segment_dots_f32_avx2,
                                   tj_k_segment_affine_f32_avx2});
}

/* The entry points under the ISA in use (`isa` names it): float32 on its
 * loops, float64 on the portable C ones (tighter: the sums are double
 * throughout). */
static void check_dispatched(const char *isa)
{
    for (int k = 0; k < 2; k++) {
        const geometry *geo = &geometries[k];
        inputs in;
        make_inputs(geo, &in);
        int64_t c = geo->count, n = geo->len;
        double xd[MAX_N], gd[MAX_N], yd[MAX_N], y[MAX_N], mean[MAX_S], m2[MAX_S], sg[MAX_S], sgx[MAX_S];
        float yf[MAX_N];
        for (int64_t i = 0; i < c * n; i++) xd[i] = in.x[i], gd[i] = in.g[i];
        for (int f64 = 0; f64 < 2; f64++) {
            char path[32];
            snprintf(path, sizeof path, "%s %s", f64 ? "float64" : "float32", isa);
            double tol = f64 ? 1e-12 : 1e-6;
            tj_k_segments s = {.dtype = f64 ? TJ_FLOAT64 : TJ_FLOAT32, .count = c, .len = n, .nthreads = 2};
            const void *x = f64 ? (const void *)xd : in.x, *g = f64 ? (const void *)gd : in.g;
            tj_k_segment_moments(&s, x, mean, m2);
            tj_k_segment_dots(&s, g, x, in.shift, sg, sgx);
            expect_all(path, "mean", geo, mean, geo->mean, c, f64 ? tol : 1e-7, f64 ? tol : 1e-6);
            expect_all(path, "m2", geo, m2, geo->m2, c, f64 ? tol : 1e-5, 0);
            expect_all(path, "sum_g", geo, sg, geo->sum_g, c, tol, tol);
            expect_all(path, "sum_gx", geo, sgx, geo->sum_gx, c, tol, tol);
            for (int terms = 1; terms < 4; terms++) {
                const void *xp = terms & 1 ? x : NULL, *gp = terms & 2 ? g : NULL;
                tj_k_segment_affine(&s, xp, gp, in.shift, in.alpha, in.beta, in.gamma, f64 ? (void *)yd : yf);
                for (int64_t i = 0; i < c * n; i++) y[i] = f64 ? yd[i] : yf[i];
                /* the stored y are rounded to 9 digits */
                expect_affine(path, geo, &in, y, xp, gp, f64 ? 1e-8 : 1e-6);
            }
        }
    }
}

/* Each ISA tj_k_isa_force allows here (kernels/cpu_isa.h; generic always):
 * the float32 generic loops run on every machine, not only on one
 * without AVX2. */
Test(norm_segments, dispatched_float32_and_float64_match_pytorch, .init = test_scope_open,
     .fini = test_scope_close_isa)
{
    cr_assert(tj_k_isa_force("generic"));
    for (int k = 0; k < TEST_NISA; k++)
        if (tj_k_isa_force(test_isas[k])) check_dispatched(test_isas[k]);
}
