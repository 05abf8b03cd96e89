#!/usr/bin/python3
"""Writes kernels/gelu_tables.h: the polynomial tables of the float32 GELU
kernels (gelu_isa.h; GELU_EXP also serves softmax_isa.h), fitted with mpmath (50 digits) by least squares on
Chebyshev nodes with relative weights, coefficients rounded to float32 one at
a time from the constant term up, each rounding compensated by refitting the
higher ones.

    /usr/bin/python3 kernels/gelu_tables.py > kernels/gelu_tables.h
"""
import mpmath as mp
import numpy as np

mp.mp.dps = 50
f32 = np.float32


def q(a):
    """Phi(-a), the standard normal tail."""
    return 0.5 * mp.erfc(mp.mpf(a) / mp.sqrt(2))


def g(a):
    """Phi(-a) exp(a^2 / 2): smooth, from 0.5 at 0 down to about 1 / (a sqrt(2 pi))."""
    a = mp.mpf(a)
    return q(a) * mp.exp(a * a / 2)


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


def fast(prefix, intervals, width, degree, out, notes):
    """q(a) for a in [k width, (k + 1) width), as polynomials in w = a / width - k - 1/2,
    the constant term as a sum of two floats (C0 + C0LO)."""
    cs, los = [], []
    worst = 0
    w0 = 0.5
    for k in range(intervals):
        f = lambda w, k=k: q((k + w0 + w) * width)
        u = nodes(-w0, 1.0 - w0)
        y = np.array([float(f(x)) for x in u])
        v = np.vander(u, degree + 1, increasing=True) / y[:, None]
        exact, *_ = np.linalg.lstsq(v, np.ones_like(y), rcond=None)
        hi = float(f32(exact[0]))
        lo = float(f32(exact[0] - hi))
        c = fit(f, -w0, 1.0 - w0, degree, c0=hi + lo)
        worst = max(worst, rel_error(f, c, -w0, 1.0 - w0))
        c[0] = hi
        cs.append(c)
        los.append(lo)
    notes.append("%s: Phi(-a) on [0, %g) in %d intervals, degree %d: relative error %.2e"
                 % (prefix, intervals * width, intervals, degree, worst))
    for i in range(degree + 1):
        out.append(table("%s_C%d" % (prefix, i), [c[i] for c in cs]))
    out.append(table("%s_C0LO" % prefix, los))


def general(out, notes):
    """g(a) on 16 intervals indexed by (bits(a + 1) >> 21) & 15, as polynomials
    in u = a - centre, with the centre a multiple of 2^-10 (so that a - centre
    is exact) at which g is closest to a float32."""
    bounds = [0, .25, .5, .75, 1, 1.5, 2, 2.5, 3, 4, 5, 6, 7, 9, 11, 13, 15]
    by_index = [None] * 16
    worst = 0
    for i in range(16):
        lo, hi = bounds[i], bounds[i + 1]
        mid, w = (lo + hi) / 2, hi - lo
        best = None
        for c in np.arange(np.ceil((mid - w / 8) * 1024) / 1024, mid + w / 8, 2.0**-10):
            gc = g(c)
            e = abs(float(f32(float(gc))) - gc) / gc
            if best is None or e < best[0]:
                best = (e, float(c), float(f32(float(gc))))
        _, c, gc = best
        f = lambda u, c=c: g(c + u)
        coeffs = fit(f, (lo - c) * 1.02, (hi - c) * 1.02, 6, c0=gc)
        worst = max(worst, rel_error(f, coeffs, lo - c, hi - c))
        idx = (int(np.frombuffer(f32(lo + 1.0).tobytes(), np.uint32)[0]) >> 21) & 15
        by_index[idx] = (c, coeffs)
    notes.append("GELU_G: Phi(-a) exp(a^2/2) on [0, 15) in 16 intervals, degree 6: relative error %.2e" % worst)
    out.append(table("GELU_G_CENTRE", [b[0] for b in by_index]))
    for i in range(7):
        out.append(table("GELU_G_C%d" % i, [b[1][i] for b in by_index]))
    r = 0.3466 + 0.001
    f = lambda x: (mp.exp(x) - 1) / x if x != 0 else mp.mpf(1)
    coeffs = fit(f, -r, r, 5, c0=1.0, weight=lambda x: abs(x) / mp.exp(x) if x != 0 else mp.mpf(1e-9))
    uu = np.linspace(-r, r, 4001)
    err = np.max(np.abs((1 + uu * np.polyval(coeffs[::-1], uu)) / np.array([float(mp.exp(x)) for x in uu]) - 1))
    notes.append("GELU_EXP: exp(r) = 1 + r P(r), |r| <= ln2/2, P of degree 5: relative error %.2e" % err)
    out.append(table("GELU_EXP", coeffs))


def main():
    out, notes = [], []
    fast("GELU_FAST32", 32, 0.125, 5, out, notes)  # AVX-512: two-table permutes
    fast("GELU_FAST16", 16, 0.25, 6, out, notes)   # AVX2: two permutes and a blend
    general(out, notes)
    print("/* Generated by kernels/gelu_tables.py: do not edit. Tables of the float32")
    print(" * GELU kernels (gelu_isa.h). Fitted errors (before float32 evaluation):")
    for n in notes:
        print(" *   " + n)
    print(" */")
    print("#ifndef TJIT_KERNELS_GELU_TABLES_H\n#define TJIT_KERNELS_GELU_TABLES_H\n")
    print("\n".join(out))
    print("\n#endif")


main()
