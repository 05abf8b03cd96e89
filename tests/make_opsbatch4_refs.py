#!/usr/bin/python3
"""Writes tests/opsbatch4_ref.h, the gradient references of
tests/test_ops_batch4.c, with PyTorch (1.13, Debian's python3-torch):

    OPENBLAS_CORETYPE=Haswell /usr/bin/python3 tests/make_opsbatch4_refs.py > tests/opsbatch4_ref.h

(the values of these operators are conformance cases:
tests/conformance/make_cases_opsbatch4.py). Inputs are the fixed lists
below (written to the header too), so that the tests build the same
tensors; every operator runs in float64, gradients are torch.autograd.grad
of sum(out * GY) (GY of the output's shape). Values are printed with %.17g."""
import torch

from ref_tables import emit, print_header, ramp

torch.set_default_dtype(torch.float64)

# X [3, 4]: ties along both dims (multiples of 1/2 from a ramp of period 5)
# and one nan; GY mixes signs and zeros (logcumsumexp's gradient splits them)
X = ramp(12, 0.5, 1.0, 5)
X[7] = float("nan")
GY = ramp(12, 0.75, 2.0, 7)
emit("CUM_X", X)
emit("CUM_GY", GY)
x = torch.tensor(X).reshape(3, 4)
gy = torch.tensor(GY).reshape(3, 4)
for name, fn in [("CUMMAX", lambda t, d: torch.cummax(t, d).values),
                 ("CUMMIN", lambda t, d: torch.cummin(t, d).values),
                 ("LCSE", torch.logcumsumexp)]:
    for d in (0, 1):
        src = x.nan_to_num(0.25) if name == "LCSE" else x  # logcumsumexp: no nan (its gradient is nan everywhere after)
        t = src.clone().requires_grad_()
        out = fn(t, d)
        (g,) = torch.autograd.grad((out * gy).sum(), t)
        emit("%s_D%d_GX" % (name, d), g)
# kthvalue / median.dim / nanmedian.dim along each dim of X (its nan
# included) and the full median / nanmedian: gradients of sum(values * GYR)
# (GYR: GY's first elements, of the reduced shape), and for the full ones
# of 2.5 * value; XT: ties of one value (the full reductions share it)
XT = [1.0, 2.0, 1.0, 1.0, 3.0, 1.0]
emit("SEL_XT", XT)
for name, fn in [("KTH2", lambda t, d: torch.kthvalue(t, 2, d).values),
                 ("MED", lambda t, d: torch.median(t, d).values),
                 ("NANMED", lambda t, d: torch.nanmedian(t, d).values)]:
    for d in (0, 1):
        t = x.clone().requires_grad_()
        out = fn(t, d)
        (g,) = torch.autograd.grad((out * gy.flatten()[:out.numel()].reshape(out.shape)).sum(), t)
        emit("%s_D%d_GX" % (name, d), g)
for name, fn in [("MED", torch.median), ("NANMED", torch.nanmedian)]:
    for tag, src in [("X", x), ("XT", torch.tensor(XT))]:
        t = src.clone().requires_grad_()
        (g,) = torch.autograd.grad(fn(t) * 2.5, t)
        emit("%s_ALL_%s_GX" % (name, tag), g)
# std_mean.correction over dim 1 of X (its nan as 0.25), correction 1 and
# 0: the gradient of sum(std * GY[:3]) + sum(mean * GY[3:6])
xs = x.nan_to_num(0.25)
for corr in (1, 0):
    t = xs.clone().requires_grad_()
    sd, mn = torch.std_mean(t, 1, correction=corr)
    (g,) = torch.autograd.grad((sd * gy.flatten()[:3]).sum() + (mn * gy.flatten()[3:6]).sum(), t)
    emit("STDMEAN_C%d_GX" % corr, g)
print_header("tests/make_opsbatch4_refs.py")
