"""Shared by the table generators of the float32 function kernels
(gelu_tables.py, gelu_tanh_tables.py): polynomials fitted with mpmath
(50 digits) by least squares on Chebyshev nodes with relative weights,
coefficients rounded to float32 one at a time from the constant term up,
each rounding compensated by refitting the higher ones; the tables printed
as a C header."""
import mpmath as mp
import numpy as np

mp.mp.dps = 50
f32 = np.float32


def nodes(lo, hi, n=400):
    t = np.cos(np.pi * (np.arange(n) + 0.5) / n)
    return (lo + hi) / 2 + t * (hi - lo) / 2


def fit(f, lo, hi, degree, c0=None, weight=None):
    """float32 coefficients of a polynomial in u on [lo, hi] close to f in
    relative error (or weighted by weight(u))."""
    u = nodes(lo, hi)
    y = np.array([float(f(x)) for x in u])
    w = np.array([float(weight(x)) for x in u]) if weight else 1 / np.abs(y)
    coeffs = [] if c0 is None else [c0]
    while len(coeffs) <= degree:
        k = len(coeffs)
        res = y - sum(c * u**i for i, c in enumerate(coeffs))
        v = np.stack([u**i for i in range(k, degree + 1)], 1) * w[:, None]
        c, *_ = np.linalg.lstsq(v, res * w, rcond=None)
        coeffs.append(float(f32(c[0])))
    return coeffs


def rel_error(f, coeffs, lo, hi):
    u = np.linspace(lo, hi, 2001)
    y = np.array([float(f(x)) for x in u])
    return float(np.max(np.abs(np.polyval(coeffs[::-1], u) / y - 1)))


def table(name, rows):
    vals = ", ".join("%.9ef" % v for v in rows)
    return "static const float %s[%d] __attribute__((aligned(64))) = {%s};" % (name, len(rows), vals)


def fast(prefix, q, what, intervals, width, degree, out, notes):
    """q(a) (positive; `what` names it in the note) for a in
    [k width, (k + 1) width), as polynomials in w = a / width - k - 1/2 in
    [-1/2, 1/2), the constant term as a sum of two floats (C0 + C0LO):
    appends the tables PREFIX_C0 .. _C<degree>, _C0LO to out and the fitted
    error to notes."""
    cs, los, worst = [], [], 0
    for k in range(intervals):
        f = lambda w, k=k: q((k + 0.5 + w) * width)
        u = nodes(-0.5, 0.5)
        y = np.array([float(f(x)) for x in u])
        v = np.vander(u, degree + 1, increasing=True) / y[:, None]
        exact, *_ = np.linalg.lstsq(v, np.ones_like(y), rcond=None)
        hi = float(f32(exact[0]))
        lo = float(f32(exact[0] - hi))
        c = fit(f, -0.5, 0.5, degree, c0=hi + lo)
        worst = max(worst, rel_error(f, c, -0.5, 0.5))
        c[0] = hi
        cs.append(c)
        los.append(lo)
    notes.append("%s: %s on [0, %g) in %d intervals, degree %d: relative error %.2e"
                 % (prefix, what, intervals * width, intervals, degree, worst))
    for i in range(degree + 1):
        out.append(table("%s_C%d" % (prefix, i), [c[i] for c in cs]))
    out.append(table("%s_C0LO" % prefix, los))


def print_header(intro, guard, notes, out):
    """Prints the header: the comment lines intro, the fitted errors, then
    the tables out inside the include guard."""
    print("/* " + intro[0])
    for line in intro[1:]:
        print(" * " + line)
    for n in notes:
        print(" *   " + n)
    print(" */")
    print("#ifndef %s\n#define %s\n" % (guard, guard))
    print("\n".join(out))
    print("\n#endif")
