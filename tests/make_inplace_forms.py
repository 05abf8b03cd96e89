#!/usr/bin/python3
"""Writes tests/inplace_forms_ref.h, the reference values of
tests/test_inplace_forms.c, with PyTorch (1.13, Debian's python3-torch):

    /usr/bin/python3 tests/make_inplace_forms.py > tests/inplace_forms_ref.h

Each case calls the in-place operator through torch.ops.aten on a [2, 3]
self (float32 unless stated) and records self afterwards, as float64 text
(%.17g of the float32 result). Tensor arguments are [2, 3], [3]
(broadcast) or 0-dim (one value). The out-of-place overloads' cases
(remainder.Scalar_Tensor, clamp_min.Tensor, clamp_max.Tensor, round.decimals,
lerp.Tensor, masked_fill.Tensor, div.Scalar_mode) record their result.

For the operators of GRAD_OPS, the first case of each also records the
gradients of sum(W * op(self * 1, args)) with respect to self and to each
float tensor argument (leaves requiring grad; in place, the operator writes
the non-leaf self * 1)."""
import math
import torch

F32, F64, I64, B = torch.float32, torch.float64, torch.int64, torch.bool
CNAME = {F32: "TJ_FLOAT32", F64: "TJ_FLOAT64", I64: "TJ_INT64", B: "TJ_BOOL"}

X = [-2.5, -0.75, 0.0, 0.3, 1.5, 3.0]
P = [0.1, 0.5, 1.0, 2.0, 7.5, 100.0]
U = [-0.9, -0.5, 0.0, 0.25, 0.5, 0.95]
Y = [1.5, -2.0, 0.7, -0.3, 2.0, 0.5]
YEQ = [-2.5, 1.0, 0.0, 0.5, 1.5, -3.0]   # equal to X at 0, 2, 4
Z = [0.0, 1.0, 0.0, 2.0, 0.0, -1.0]
N = [math.nan, math.inf, -math.inf, 1.5, -0.0, 2.0]
R = [1234.5678, -2.5, 0.125, 15.0, 25.0, 0.0351]
MASK = [True, False, False, True, False, True]
XI = [-7, -2, 0, 3, 5, 9]
XNZ = [-7, -2, 1, 3, 5, 9]   # no zero divisor
T3 = [0.5, -1.0, 2.0]
W3 = [0.25, -0.5, 0.75]                # lerp weights on both sides of 0.5
W = [0.5, -1.0, 2.0, 0.25, 1.5, -3.0]  # the gradient cases' loss weights
U01 = [0.1, 0.5, 0.3, 0.25, 0.9, 0.75]  # inside logit's domain
U01E = [0.0, 1.0, 0.1, 0.5, 0.8, 0.3]   # clamped by eps 0.25 at 0, 1, 0.1, 0.8

# (op, self, self dtype, args): args in schema order after self, each
# ('t', values, dtype) for a tensor, ('f', x) float, ('i', n) int,
# ('s', text) str, ('n',) None, ('b', v) bool.
def t(v, dt=F32): return ('t', v, dt)
def f(x): return ('f', x)
def i(n): return ('i', n)
def s(x): return ('s', x)
NONE = ('n',)

UNARY_X = ["abs_", "neg_", "exp_", "tanh_", "sigmoid_", "erf_", "reciprocal_", "sin_", "cos_", "expm1_",
           "relu_", "silu_", "sign_", "square_", "hardsigmoid_", "hardswish_", "floor_", "ceil_", "round_",
           "trunc_", "frac_", "atan_", "sinh_", "cosh_", "exp2_", "logical_not_"]
UNARY_P = ["log_", "rsqrt_", "log1p_", "log2_", "log10_"]
UNARY_U = ["asin_", "acos_"]

CASES = [(op, X, F32, []) for op in UNARY_X] + [(op, P, F32, []) for op in UNARY_P] + \
        [(op, U, F32, []) for op in UNARY_U] + [
    ("exp_", X, F64, []),
    ("abs_", XI, I64, []),
    ("floor_", XI, I64, []),
    ("gelu_", X, F32, [s("none")]),
    ("gelu_", X, F32, [s("tanh")]),
    ("leaky_relu_", X, F32, [f(0.2)]),
    ("elu_", X, F32, [f(0.5), f(2.0), f(1.5)]),
    ("hardtanh_", X, F32, [f(-1.0), f(2.0)]),
    ("round_.decimals", R, F32, [i(2)]),
    ("round_.decimals", R, F32, [i(-1)]),
    ("nan_to_num_", N, F32, [NONE, NONE, NONE]),
    ("nan_to_num_", N, F32, [f(0.5), f(100.0), f(-100.0)]),
    ("sub_.Scalar", X, F32, [f(2.0), f(3.0)]),
    ("div_.Tensor_mode", X, F32, [t(Y), s("floor")]),
    ("div_.Tensor_mode", X, F32, [t(Y), s("trunc")]),
    ("pow_.Tensor", P, F32, [t(Y)]),
    ("pow_.Scalar", X, F32, [i(2)]),
    ("pow_.Scalar", P, F32, [f(0.5)]),
    ("pow_.Scalar", XI, I64, [i(3)]),
    ("remainder_.Tensor", X, F32, [t(Y)]),
    ("remainder_.Tensor", X, F32, [t(T3)]),
    ("remainder_.Scalar", X, F32, [f(-0.75)]),
    ("remainder_.Scalar", XI, I64, [i(-4)]),
    ("fmod_.Tensor", X, F32, [t(Y)]),
    ("fmod_.Scalar", X, F32, [f(0.7)]),
    ("atan2_", X, F32, [t(Y)]),
    ("atan2_", X, F32, [t(T3)]),
    ("atan2_", X, F32, [t(Y, F64)]),
    ("masked_fill_.Scalar", X, F32, [t(MASK, B), f(9.0)]),
    ("clamp_", X, F32, [f(-1.0), f(2.0)]),
    ("clamp_", X, F32, [NONE, f(0.5)]),
    ("clamp_", XI, I64, [i(-1), i(4)]),
    ("clamp_.Tensor", X, F32, [t(Z), t(T3)]),
    ("clamp_.Tensor", X, F32, [NONE, t(Y)]),
    ("clamp_min_", X, F32, [f(0.2)]),
    ("clamp_min_", XI, I64, [i(2)]),
    ("clamp_max_", X, F32, [f(0.2)]),
    ("clamp_min_.Tensor", X, F32, [t(Y)]),
    ("clamp_max_.Tensor", X, F32, [t(T3)]),
    ("eq_.Tensor", X, F32, [t(YEQ)]),
    ("ne_.Tensor", X, F32, [t(YEQ)]),
    ("lt_.Tensor", X, F32, [t(YEQ)]),
    ("le_.Tensor", X, F32, [t(YEQ)]),
    ("gt_.Tensor", X, F32, [t(YEQ)]),
    ("ge_.Tensor", X, F32, [t(YEQ)]),
    ("eq_.Scalar", X, F32, [f(0.3)]),
    ("ne_.Scalar", X, F32, [f(0.3)]),
    ("lt_.Scalar", X, F32, [f(0.3)]),
    ("le_.Scalar", X, F32, [f(0.3)]),
    ("gt_.Scalar", X, F32, [f(0.3)]),
    ("ge_.Scalar", XI, I64, [i(3)]),
    ("logical_and_", X, F32, [t(Z)]),
    ("logical_or_", X, F32, [t(Z)]),
    ("logical_xor_", X, F32, [t(Z)]),
    ("lerp_.Tensor", X, F32, [t(Y), t(U)]),
    ("lerp_.Tensor", X, F32, [t(T3), t(W3)]),
    ("masked_fill_.Tensor", X, F32, [t(MASK, B), t([9.5], F64)]),
    ("masked_fill_.Tensor", XI, I64, [t(MASK, B), t([-7.5])]),
    ("div_.Scalar_mode", X, F32, [i(2), NONE]),
    ("div_.Scalar_mode", X, F32, [f(0.7), s("floor")]),
    ("div_.Scalar_mode", X, F32, [f(-0.7), s("trunc")]),
    ("div_.Scalar_mode", XI, I64, [i(-4), s("floor")]),
    ("add_.Tensor", X, F32, [t(T3), f(2.0)]),
    ("add_.Scalar", X, F32, [f(1.5), f(-2.0)]),
    ("sub_.Tensor", X, F32, [t(Y), f(0.5)]),
    ("mul_.Tensor", X, F32, [t(Y)]),
    ("mul_.Scalar", X, F32, [f(-1.5)]),
    ("div_.Tensor", X, F32, [t(Y)]),
    ("div_.Scalar", X, F32, [f(0.3)]),
    ("sqrt_", P, F32, []),
    ("addcmul_", X, F32, [t(Y), t(T3), f(0.5)]),
    ("addcdiv_", X, F32, [t(Y), t(P), f(-2.0)]),
    ("lerp_.Scalar", X, F32, [t(Y), f(0.3)]),
    ("lerp_.Scalar", X, F32, [t(T3), f(0.75)]),
    ("tril_", X, F32, [i(0)]),
    ("triu_", X, F32, [i(1)]),
    # int64 only: a float32 case would be expanded to [ROWS, 2, 3], which its [2, 3] index does not fit
    ("scatter_reduce_.two", XI, I64, [i(0), t([1, 0, 1, 1, 1, 0], I64), t(XNZ, I64), s("prod"), ('b', False)]),
    ("index_copy_", XI, I64, [i(-1), t([2, 0, 2], I64), t(XNZ, I64)]),   # int64 only, as scatter_reduce_
    ("index_fill_.int_Scalar", X, F32, [i(-1), t([2, -3, 2], I64), f(2.5)]),
    ("index_fill_.int_Tensor", X, F32, [i(-1), t([2, -3, 2], I64), t([-1.25], F64)]),
    ("celu_", X, F32, [f(0.5)]),
    ("mish_", X, F32, []),
    ("scatter_.src", XI, I64, [i(0), t([1, 0, 1, 1, 1, 0], I64), t(XNZ, I64)]),   # int64 only, as scatter_reduce_
    ("scatter_.value", XI, I64, [i(1), t([2, 2, 0, 1, 0, 0], I64), f(-3.5)]),
    ("scatter_.reduce", XI, I64, [i(0), t([1, 0, 1, 1, 1, 0], I64), t(XNZ, I64), s("multiply")]),   # int64 only
    ("scatter_.value_reduce", XI, I64, [i(1), t([2, 2, 0, 1, 0, 0], I64), f(-3.5), s("add")]),
    ("scatter_add_", XI, I64, [i(0), t([1, 0, 1, 1, 1, 0], I64), t(XNZ, I64)]),   # int64 only, as scatter_reduce_
    ("index_add_", XI, I64, [i(-1), t([2, 0, 2], I64), t(XNZ, I64), i(-3)]),   # int64 only, as index_copy_
    ("bitwise_not_", XI, I64, []),   # bool and int64 only
    ("bitwise_not_", MASK, B, []),
    # special functions (op_special.def)
    ("lgamma_", X, F32, []),
    ("digamma_", X, F32, []),
    ("erfinv_", U, F32, []),
    ("erfc_", X, F32, []),
    ("i0_", X, F32, []),
    ("sinc_", X, F32, []),
    ("logit_", U01, F32, [NONE]),
    ("logit_", U01E, F32, [f(0.25)]),
    ("hypot_", X, F32, [t(Y)]),
    ("copysign_.Tensor", X, F32, [t(T3)]),
    ("copysign_.Scalar", X, F32, [f(-0.0)]),
    ("xlogy_.Tensor", X, F32, [t(P)]),
    ("xlogy_.Scalar_Other", X, F32, [f(2.5)]),
    # random: p = 1 and p = 0 draw the same in every generator
    ("bernoulli_.float", X, F32, [f(1.0), NONE]),
    ("bernoulli_.float", XI, I64, [f(0.0), NONE]),
    # the float fills, at the parameters whose result draws nothing random
    ("uniform_", X, F32, [f(0.5), f(0.5), NONE]),
    ("normal_", X, F32, [f(-1.5), f(0.0), NONE]),
    ("exponential_", X, F32, [f(math.inf), NONE]),
    # out of place overloads
    ("clamp_min.Tensor", X, F32, [t(T3)]),
    ("clamp_max.Tensor", X, F32, [t(N)]),
    ("round.decimals", R, F32, [i(3)]),
    ("round.decimals", R, F64, [i(-2)]),
    ("lerp.Tensor", X, F32, [t(T3), t(U)]),
    ("masked_fill.Tensor", X, F32, [t(MASK[:3], B), t([-1.25])]),
    ("div.Scalar_mode", XI, I64, [f(2.5), s("floor")]),
    ("div.Scalar_mode", XI, I64, [i(3), s("trunc")]),
]
GRAD_OPS = ["lerp.Tensor", "lerp_.Tensor", "masked_fill.Tensor", "masked_fill_.Tensor", "div_.Scalar_mode",
            "lgamma_", "digamma_", "erfinv_", "logit_", "hypot_", "copysign_.Tensor",
            "copysign_.Scalar", "xlogy_.Tensor", "xlogy_.Scalar_Other"]
# remainder.Scalar_Tensor takes a Scalar self: written as its own cases
SCALAR_SELF = [
    (5, XNZ, I64),
    (5.5, XNZ, I64),
    (-3, Y, F32),
]


def overload(op):
    base, _, name = op.partition(".")
    return getattr(getattr(torch.ops.aten, base), name or "default")


def boxed(op, args):
    """The keyword arguments after self."""
    kwargs = {}
    for a, spec in zip(overload(op)._schema.arguments[1:], args):
        if spec[0] == 't':
            v = torch.tensor(spec[1], dtype=spec[2])
            kwargs[a.name] = v.reshape(2, 3) if len(spec[1]) == 6 else v.reshape(()) if len(spec[1]) == 1 else v
        elif spec[0] == 'n':
            kwargs[a.name] = None
        else:
            kwargs[a.name] = spec[1]
    return kwargs


def call(op, self, kwargs):
    r = overload(op)(self, **kwargs)
    return self if op.partition(".")[0].endswith("_") else r


def grads(op, sv, dt, args):
    """d sum(W * op(self * 1, args)) / d(self, float tensor arguments)."""
    self = torch.tensor(sv, dtype=dt).reshape(2, 3).requires_grad_()
    kwargs = boxed(op, args)
    leaves = [self] + [v.requires_grad_() for v in kwargs.values()
                       if isinstance(v, torch.Tensor) and v.is_floating_point()]
    r = call(op, self * 1, kwargs)
    loss = (r * torch.tensor(W, dtype=torch.float64).reshape(2, 3).to(r.dtype)).sum()
    return torch.autograd.grad(loss, leaves)


def num(x):
    if isinstance(x, bool):
        return "1" if x else "0"
    if math.isnan(x):
        return "NAN"
    if math.isinf(x):
        return "INFINITY" if x > 0 else "-INFINITY"
    return repr(float(x))


def arr(v):
    return "{" + ", ".join(num(x) for x in v) + "}"


def main():
    print("/* Generated by tests/make_inplace_forms.py with PyTorch %s: do not edit. */" % torch.__version__)
    print("static const form_case form_cases[] = {")
    for op, sv, dt, args in CASES:
        self = torch.tensor(sv, dtype=dt).reshape(2, 3)
        r = call(op, self.clone(), boxed(op, args))
        items = []
        for a in args:
            if a[0] == 't':
                items.append("{'t', .n = %d, .dtype = %s, .v = %s}" % (len(a[1]), CNAME[a[2]], arr(a[1])))
            elif a[0] == 'n':
                items.append("{'n'}")
            elif a[0] == 's':
                items.append("{'s', .s = \"%s\"}" % a[1])
            else:
                items.append("{'%s', .x = %s}" % (a[0], num(a[1])))
        print('    {"aten::%s", %s, %s, %d, {%s}, %s, %s},' % (
            op, CNAME[dt], arr(sv), len(args), ", ".join(items), CNAME[r.dtype], arr(r.flatten().tolist())))
    print("};")
    print("static const scalar_self_case scalar_self_cases[] = {")
    for sc, ov, dt in SCALAR_SELF:
        other = torch.tensor(ov, dtype=dt)
        r = torch.ops.aten.remainder.Scalar_Tensor(sc, other)
        print("    {{'%s', .x = %s}, %s, %s, %s, %s}," % ('f' if isinstance(sc, float) else 'i', num(sc), CNAME[dt],
                                                     arr(ov), CNAME[r.dtype], arr(r.tolist())))
    print("};")
    print("static const grad_case grad_cases[] = {")
    for name in GRAD_OPS:
        op, sv, dt, args = next(c for c in CASES if c[0] == name)
        gs = grads(op, sv, dt, args)
        print('    {"aten::%s", %d, {%s}, {%s}},' % (op, len(gs), ", ".join(str(g.numel()) for g in gs),
                                                  ", ".join(arr(g.flatten().tolist()) for g in gs)))
    print("};")


main()
