/* Special functions, scalar float64, and their elementwise loops (see
 * special.h for the methods). */
#define _DEFAULT_SOURCE /* lgamma_r */
#include "special.h"

#include <math.h>
#include <stdbool.h>

#define MACHEP 1.11022302462515654042e-16 /* 2^-53 */
#define SQRT_PI 1.77245385090551602730

/* libm's, as torch's kernels (std::lgamma, std::erfc): the reentrant
 * lgamma, since lgamma writes the global signgam from every thread */
double tj_k_lgamma(double x)
{
    int sign;
    return lgamma_r(x, &sign);
}
double tj_k_erfc(double x) { return erfc(x); }

/* Cephes' asymptotic digamma: log(x) - 1/(2x) - sum B_2k / (2k x^2k), the
 * Bernoulli terms up to k = 7, in Horner order of 1 / x^2 */
static double digamma_asymptotic(double x)
{
    static const double b[] = {1.0 / 12, -691.0 / 32760, 1.0 / 132, -1.0 / 240, 1.0 / 252, -1.0 / 120, 1.0 / 12};
    double y = 0;
    if (x < 1e17) {
        double z = 1 / (x * x), p = 0;
        for (int i = 0; i < 7; i++) p = p * z + b[i];
        y = z * p;
    }
    return log(x) - 0.5 / x - y;
}

double tj_k_digamma(double x)
{
    const double psi_10 = 2.25175258906672110764; /* digamma(10) */
    if (x == 0) return copysign(INFINITY, -x);
    if (x < 0) {
        if (x == trunc(x)) return NAN; /* the poles, and -inf */
        /* reflection; tan of pi times the fractional part, which is exact,
         * rather than of pi x */
        return tj_k_digamma(1 - x) - M_PI / tan(M_PI * (x - trunc(x)));
    }
    double acc = 0;
    while (x < 10) {
        acc -= 1 / x;
        x += 1;
    }
    if (x == 10) return acc + psi_10;
    return acc + digamma_asymptotic(x);
}

/* torch's trigamma (calc_trigamma), in the operand's precision as ATen's
 * float and double overloads: reflection below 1/2, six recurrence steps,
 * then the asymptotic series (whose constants are double in both). At the
 * poles -1, -2, ... sin(pi x) is pi's rounding error rather than 0, so the
 * result is a huge finite number that depends on the precision (float32
 * 1.29e15 at -1, float64 6.58e32); at 0 it is inf. */
#define TRIGAMMA_DEFINE(T, SIN, NAME)                                                      \
    T NAME(T x)                                                                            \
    {                                                                                      \
        const T pi = (T)M_PI;                                                              \
        T sign = 1, r = 0;                                                                 \
        if (x < (T)0.5) {                                                                  \
            sign = -1;                                                                     \
            T s = SIN(pi * x);                                                             \
            r -= pi * pi / (s * s);                                                        \
            x = 1 - x;                                                                     \
        }                                                                                  \
        for (int i = 0; i < 6; i++) {                                                      \
            r += 1 / (x * x);                                                              \
            x += 1;                                                                        \
        }                                                                                  \
        T ixx = 1 / (x * x);                                                               \
        r += (1 + 1 / (2 * x) + ixx * (1.0 / 6 - ixx * (1.0 / 30 - ixx * (1.0 / 42)))) / x; \
        return sign * r;                                                                   \
    }
static TRIGAMMA_DEFINE(double, sin, trigamma)
TRIGAMMA_DEFINE(float, sinf, tj_k_trigamma_f32)
#undef TRIGAMMA_DEFINE

/* The Hurwitz zeta function sum_k (k + q)^-x (Cephes zeta.c): direct
 * summation to k + q > 9, then the Euler-Maclaurin tail with the
 * coefficients (2j)! / B_2j */
static double hurwitz_zeta(double x, double q)
{
    static const double A[] = {
        12.0, -720.0, 30240.0, -1209600.0, 47900160.0,
        479001600.0 / (-691.0 / 2730), 87178291200.0 / (7.0 / 6),
        20922789888000.0 / (-3617.0 / 510), 6402373705728000.0 / (43867.0 / 798),
        2432902008176640000.0 / (-174611.0 / 330), 1124000727777607680000.0 / (854513.0 / 138),
        620448401733239439360000.0 / (-236364091.0 / 2730),
    };
    if (x == 1) return INFINITY;
    if (x < 1) return NAN;
    if (q <= 0) {
        if (q == floor(q)) return INFINITY;
        if (x != floor(x)) return NAN; /* q^-x is not real */
        /* far below 0 the direct sum would step |q| times (forever past
         * ~1e15): with f = q - floor(q) and N = -floor(q), the terms up to
         * k = N - 1 are (-1)^x (j - f)^-x, j = 1..N, so zeta(x, q) =
         * zeta(x, f) + (-1)^x (zeta(x, 1 - f) - zeta(x, N + 1 - f)) */
        if (q < -64) {
            double f = q - floor(q), n = -floor(q), sign = fmod(x, 2) == 0 ? 1 : -1;
            return hurwitz_zeta(x, f) + sign * (hurwitz_zeta(x, 1 - f) - hurwitz_zeta(x, n + 1 - f));
        }
    }
    double s = pow(q, -x), a = q, b = 0;
    int i = 0;
    while (i < 9 || a <= 9) {
        i++;
        a += 1;
        b = pow(a, -x);
        s += b;
        if (-MACHEP * s < b && b < MACHEP * s) return s;
    }
    double w = a, k = 0;
    s += b * w / (x - 1);
    s -= 0.5 * b;
    a = 1;
    for (i = 0; i < 12; i++) {
        a *= x + k;
        b /= w;
        double t = a * b / A[i];
        s += t;
        if (fabs(t / s) < MACHEP) return s;
        k += 1;
        a *= x + k;
        b /= w;
        k += 1;
    }
    return s;
}

double tj_k_polygamma(int64_t n, double x)
{
    if (n == 0) return tj_k_digamma(x);
    if (n == 1) return trigamma(x);
    double factorial = 1;
    for (int64_t k = 2; k <= n && factorial < INFINITY; k++) factorial *= (double)k;
    return (n % 2 ? 1 : -1) * factorial * hurwitz_zeta((double)n + 1, x);
}

/* Giles' single-precision erfinv(y) / y, of w = -log((1 - y)(1 + y)) < 16
 * ("Approximating the erfinv function", GPU Computing Gems, 2011) */
static double giles(double w)
{
    double p;
    if (w < 5) {
        w -= 2.5;
        p = 2.81022636e-08;
        p = 3.43273939e-07 + p * w;
        p = -3.5233877e-06 + p * w;
        p = -4.39150654e-06 + p * w;
        p = 0.00021858087 + p * w;
        p = -0.00125372503 + p * w;
        p = -0.00417768164 + p * w;
        p = 0.246640727 + p * w;
        p = 1.50140941 + p * w;
    } else {
        w = sqrt(w) - 3;
        p = -0.000200214257;
        p = 0.000100950558 + p * w;
        p = 0.00134934322 + p * w;
        p = -0.00367342844 + p * w;
        p = 0.00573950773 + p * w;
        p = -0.0076224613 + p * w;
        p = 0.00943887047 + p * w;
        p = 1.00167406 + p * w;
        p = 2.83297682 + p * w;
    }
    return p;
}

/* t >= 0 with erfc(t) = q, for 0 < q <= 1. Halley steps on erfc(t) - q,
 * whose second derivative is -2t times the first: t -= u / (1 + t u), u
 * the Newton step. q is exact where erf(t) - y would cancel. Beyond
 * Giles' range (q < ~1e-7) the first guess solves erfc(t) ~ exp(-t^2) /
 * (t sqrt(pi)) (1 - 1 / (2t^2)) by fixed-point steps. */
static double erfc_inverse(double q)
{
    double w = -log(q * (2 - q)), t;
    int steps = 1; /* Giles' ~4e-7 becomes ~1e-19 in one step (cubic convergence) */
    if (w < 16) {
        t = giles(w) * (1 - q);
    } else {
        double L = -log(q);
        t = sqrt(L);
        for (int i = 0; i < 3; i++) t = sqrt(L - log(t * SQRT_PI) + log1p(-0.5 / (t * t)));
        steps = 3; /* from ~1e-3 */
    }
    for (int i = 0; i < steps; i++) {
        double d = -2 / SQRT_PI * exp(-t * t);
        if (d == 0) break;
        double u = (erfc(t) - q) / d;
        t -= u / (1 + t * u);
    }
    return t;
}

double tj_k_erfinv(double y)
{
    double a = fabs(y), x;
    if (!(a <= 1)) return NAN;
    if (a == 1) return copysign(INFINITY, y);
    if (a <= 0.5) {
        x = giles(-log((1 - a) * (1 + a))) * a;
        double u = (erf(x) - a) / (2 / SQRT_PI * exp(-x * x)); /* one Halley step, as above */
        x -= u / (1 + x * u);
    } else {
        x = erfc_inverse(1 - a); /* 1 - a is exact for a >= 1/2 */
    }
    return copysign(x, y);
}

/* Phi(x) = erfc(-x / sqrt 2) / 2: p below 1/2 is 2p = erfc(-x / sqrt 2),
 * above 2 (1 - p) = erfc(x / sqrt 2), both exact arguments */
/* log Phi(x). From -1 up, log1p(-erfc(t) / 2) with t = x / sqrt 2, as
 * ATen. Below, ATen's log(erfcx(-t) / 2) - t^2 equals log(erfc(-t) / 2),
 * which libm's erfc gives to a few ulps of relative error while erfc(-t)
 * is a normal number (-t < 26.5); past that the asymptotic series of the
 * Mills ratio, log Phi(x) = -x^2 / 2 - log(-x sqrt(2 pi)) + log(1 - 1/x^2
 * + 3/x^4 - 15/x^6 + ...), whose terms shrink by (2k - 1) / x^2 < 1/13
 * each: eight of them are below float64's rounding from x = -37 on. */
double tj_k_log_ndtr(double x)
{
    double t = x * M_SQRT1_2;
    if (x >= -1 || isnan(x)) return log1p(-erfc(t) / 2);
    if (t > -26) return log(erfc(-t) / 2);
    if (isinf(x)) return -INFINITY;
    double ix2 = 1 / (x * x), term = 1, sum = 1;
    for (int k = 1; k <= 8; k++) {
        term *= -(2 * k - 1) * ix2;
        sum += term;
    }
    return -0.5 * x * x - log(-x) - 0.5 * log(2 * M_PI) + log(sum);
}

double tj_k_ndtri(double p)
{
    if (!(p >= 0 && p <= 1)) return NAN;
    if (p == 0) return -INFINITY;
    if (p == 1) return INFINITY;
    if (p < 0.5) return -M_SQRT2 * erfc_inverse(2 * p);
    return M_SQRT2 * erfc_inverse(2 * (1 - p));
}

/* sum_k (x^2 / 4)^k / (k! (k + nu)!), nu = 0 or 1: all terms positive,
 * so every partial sum is accurate */
static double bessel_series(double x, int nu)
{
    double h = x * x / 4, term = 1, sum = 1;
    for (int k = 1; k < 200 && term > MACHEP * sum; k++) {
        term *= h / ((double)k * (double)(k + nu));
        sum += term;
    }
    return sum;
}

/* I_nu(x) e^-x sqrt(2 pi x) ~ sum_k prod_{j <= k} ((2j - 1)^2 - 4nu^2) /
 * (8 j x), x > 30, where the terms fall below MACHEP long before they
 * start growing (at k ~ 2x) */
static double bessel_asymptotic(double x, int nu)
{
    double term = 1, sum = 1;
    for (int k = 1; k < 60 && fabs(term) > MACHEP * fabs(sum); k++) {
        double m = 2.0 * k - 1;
        term *= (m * m - 4.0 * nu * nu) / (8.0 * k * x);
        sum += term;
    }
    return sum / sqrt(2 * M_PI * x);
}

/* I_nu(|x|) times exp(-|x|) when scaled: the series below |x| = 30, the
 * asymptotic expansion above (unscaled, exp(|x|) times it: inf from
 * |x| > 709.78 on, as Cephes' and torch's, though I0 overflows only at
 * 713.98) */
static double bessel_i(double x, int nu, bool scaled)
{
    double a = fabs(x);
    if (a <= 30) {
        double s = bessel_series(a, nu) * (nu ? a / 2 : 1);
        return scaled ? s * exp(-a) : s;
    }
    double s = bessel_asymptotic(a, nu);
    return scaled ? s : exp(a) * s;
}

double tj_k_i0(double x) { return bessel_i(x, 0, false); }
double tj_k_i0e(double x) { return bessel_i(x, 0, true); }
/* odd: negated for x < 0 only (+0 for -0, as torch) */
double tj_k_i1(double x) { return x < 0 ? -bessel_i(x, 1, false) : bessel_i(x, 1, false); }
double tj_k_i1e(double x) { return x < 0 ? -bessel_i(x, 1, true) : bessel_i(x, 1, true); }

void tj_k_special1_loop(int64_t n, void *out, const void *const *in, const void *ctx)
{
    const tj_k_special_args *k = ctx;
    if (k->dtype == TJ_FLOAT32) {
        const float *a = in[0];
        float *o = out;
        for (int64_t i = 0; i < n; i++) o[i] = (float)k->fn1(a[i], k->param);
    } else {
        const double *a = in[0];
        double *o = out;
        for (int64_t i = 0; i < n; i++) o[i] = k->fn1(a[i], k->param);
    }
}

void tj_k_special2_loop(int64_t n, void *out, const void *const *in, const void *ctx)
{
    const tj_k_special_args *k = ctx;
    if (k->dtype == TJ_FLOAT32) {
        const float *a = in[0], *b = in[1];
        float *o = out;
        for (int64_t i = 0; i < n; i++) o[i] = (float)k->fn2(a[i], b[i]);
    } else {
        const double *a = in[0], *b = in[1];
        double *o = out;
        for (int64_t i = 0; i < n; i++) o[i] = k->fn2(a[i], b[i]);
    }
}
