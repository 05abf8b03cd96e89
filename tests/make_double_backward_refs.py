#!/usr/bin/python3
"""Writes tests/double_backward_ref.h, the reference values of
tests/test_double_backward.c, with PyTorch (1.13, Debian's python3-torch):

    OPENBLAS_CORETYPE=Haswell /usr/bin/python3 tests/make_double_backward_refs.py \\
        > tests/double_backward_ref.h

For each case, in float64: y = f(x); g = torch.autograd.grad(sum(y * c), x,
create_graph=True) (the traced training step's backward, which calls the
backward operator under test with grad_output c); then gg_x, gg_c =
torch.autograd.grad(sum(g * c2), [x, c]), the derivatives of that backward
operator with respect to its input and to its grad_output. The inputs hold
points on both sides of every kink and on the kinks themselves. Each case
writes <TAG>_X, _C (y's shape), _C2 (x's shape), _G, _GGX and _GGC; printed
with %.17g."""
import torch
import torch.nn.functional as F

from ref_tables import emit, print_header, ramp

torch.set_default_dtype(torch.float64)
A = torch.ops.aten

# kinks: 0 (elu, relu, leaky_relu), -0.25 and 0.5 (hardtanh below), both sides of each
X_ACT = [-3.0, -1.5, -0.25, 0.0, 0.5, 2.0, -0.75, 1.25]
# hardsigmoid / hardswish: -3 and 3 and both sides
X_HARD = [-4.0, -3.0, -1.0, 0.0, 1.5, 3.0, 4.0, 2.5]
# softplus (beta 1, threshold 20): the threshold itself and both sides
# hardswish: 3 last of 9, where 1.13's scalar loop (which tjit follows) gives
# grad_output * 1.5 at 3; its vectorised loop, on the first 8, gives grad_output
X_HSWISH = [-4.0, -3.0, -1.0, 0.0, 1.5, 4.0, 2.5, -2.0, 3.0]
X_SP = [-3.0, -0.5, 0.0, 1.0, 20.0, 21.0, 19.5, 2.0]
# softplus (beta 2, threshold 3): 1.5 is the threshold
X_SP2 = [-1.0, 0.5, 1.5, 2.0, 1.25, 0.0, 1.75, -0.25]
X_GLU = [-2.0, 0.5, 1.5, -0.25, 0.0, 3.0, -1.0, 2.0]

CASES = [
    # (tag, f, x values, x shape)
    ("ELU", lambda x: A.elu(x, 1.3, 1.0, 1.0), X_ACT, [2, 4]),
    ("CELU", lambda x: A.celu(x, 2.0), X_ACT, [2, 4]),
    ("SELU", lambda x: A.selu(x), X_ACT, [2, 4]),
    ("RELU", lambda x: A.relu(x), X_ACT, [2, 4]),
    ("LEAKY_RELU", lambda x: A.leaky_relu(x, 0.1), X_ACT, [2, 4]),
    ("HARDTANH", lambda x: A.hardtanh(x, -0.25, 0.5), X_ACT, [2, 4]),
    ("HARDSWISH", lambda x: A.hardswish(x), X_HSWISH, [3, 3]),
    ("TANH", lambda x: A.tanh(x), X_ACT, [2, 4]),
    ("SIGMOID", lambda x: A.sigmoid(x), X_ACT, [2, 4]),
    ("SOFTPLUS", lambda x: A.softplus(x, 1, 20), X_SP, [2, 4]),
    ("SOFTPLUS_B2", lambda x: A.softplus(x, 2, 3), X_SP2, [2, 4]),
    ("GELU", lambda x: A.gelu(x), X_ACT, [2, 4]),
    ("GELU_TANH", lambda x: A.gelu(x, approximate="tanh"), X_ACT, [2, 4]),
    ("LOG_SIGMOID", lambda x: A.log_sigmoid(x), X_ACT, [2, 4]),
    ("GLU", lambda x: A.glu(x, -1), X_GLU, [2, 4]),
    ("GLU0", lambda x: A.glu(x, 0), X_GLU, [4, 2]),
]


def case(tag, f, xs, shape):
    x = torch.tensor(xs).reshape(shape).requires_grad_()
    y = f(x)
    c = torch.tensor(ramp(max(y.numel(), 1), 0.5, 1.25, 11)).reshape(y.shape).requires_grad_()
    c2 = torch.tensor(ramp(x.numel(), 0.25, 0.875, 7)).reshape(shape)
    g, = torch.autograd.grad((y * c).sum(), [x], create_graph=True)
    ggx, ggc = torch.autograd.grad((g * c2).sum(), [x, c])
    emit(tag + "_X", x.detach())
    emit(tag + "_C", c.detach())
    emit(tag + "_C2", c2)
    emit(tag + "_G", g.detach())
    emit(tag + "_GGX", ggx)
    emit(tag + "_GGC", ggc)



# softmax / log_softmax (their backward operators' output argument holds
# the forward's result)
X_SOFTMAX = [-2.0, 0.5, 1.5, -0.25, 0.0, 3.0]
CASES += [
    ("SOFTMAX", lambda x: A._softmax(x, 1, False), X_SOFTMAX, [2, 3]),
    ("SOFTMAX0", lambda x: A._softmax(x, 0, False), X_SOFTMAX, [2, 3]),
    ("LOG_SOFTMAX", lambda x: A._log_softmax(x, 1, False), X_SOFTMAX, [2, 3]),
    ("LOG_SOFTMAX0", lambda x: A._log_softmax(x, 0, False), X_SOFTMAX, [2, 3]),
]

# regression losses: x - t is -1, 1 and 1 (beta / delta 1's kink), -0.5 and
# 0.5 (0.5's), 0, -0.75 and -2.5; reduction 0 none, 1 mean, 2 sum
X_REG = [-1.0, 0.0, 1.0, 0.0, 0.5, 2.0, -0.5, 1.5]
T_REG = torch.tensor([0.0, 0.5, 0.0, -1.0, 3.0, 2.0, 0.25, 1.0]).reshape(2, 4)
# binary cross entropy: x in (0, 1), t in [0, 1], a weight of x's shape
X_BCE = [0.2, 0.5, 0.7, 0.3, 0.9, 0.05, 0.6, 0.45]
T_BCE = torch.tensor([0.0, 0.5, 1.0, 0.3, 1.0, 0.0, 0.25, 0.45]).reshape(2, 4)
W_BCE = torch.tensor([1.0, 0.5, 2.0, 1.5, 0.25, 1.0, 3.0, 0.75]).reshape(2, 4)
# nll_loss: x [3, 4] (log-probabilities or not: nll is linear), targets, class weights
X_NLL = [-1.5, -0.25, -2.0, -0.75, -0.5, -3.0, -1.25, -1.0, -2.5, -0.125, -1.75, -0.625]
T_NLL = torch.tensor([1, 3, 0])
W_NLL = torch.tensor([0.5, 2.0, 1.0, 1.5])
emit("T_REG", T_REG)
emit("T_BCE", T_BCE)
emit("W_BCE", W_BCE)
emit("T_NLL", T_NLL, "int64_t")
emit("W_NLL", W_NLL)
CASES += [
    ("SMOOTH_L1", lambda x: A.smooth_l1_loss(x, T_REG, 0, 1.0), X_REG, [2, 4]),
    ("SMOOTH_L1_MEAN", lambda x: A.smooth_l1_loss(x, T_REG, 1, 0.5), X_REG, [2, 4]),
    ("SMOOTH_L1_SUM_B0", lambda x: A.smooth_l1_loss(x, T_REG, 2, 0.0), X_REG, [2, 4]),
    ("HUBER", lambda x: A.huber_loss(x, T_REG, 0, 1.0), X_REG, [2, 4]),
    ("HUBER_MEAN", lambda x: A.huber_loss(x, T_REG, 1, 0.5), X_REG, [2, 4]),
    ("BCE", lambda x: A.binary_cross_entropy(x, T_BCE, None, 1), X_BCE, [2, 4]),
    ("BCE_NONE", lambda x: A.binary_cross_entropy(x, T_BCE, None, 0), X_BCE, [2, 4]),
    ("BCE_SUM_W", lambda x: A.binary_cross_entropy(x, T_BCE, W_BCE, 2), X_BCE, [2, 4]),
    ("NLL", lambda x: A.nll_loss(x, T_NLL, None, 1, -100), X_NLL, [3, 4]),
    ("NLL_SUM", lambda x: A.nll_loss(x, T_NLL, None, 2, -100), X_NLL, [3, 4]),
    ("NLL_NONE_W", lambda x: A.nll_loss(x, T_NLL, W_NLL, 0, -100), X_NLL, [3, 4]),
    ("NLL_MEAN_W_IGNORE", lambda x: A.nll_loss(x, T_NLL, W_NLL, 1, 3), X_NLL, [3, 4]),
]
for args in CASES:
    case(*args)

# hardsigmoid_backward: PyTorch 1.13 has no derivative for it; its gradient
# is linear in grad_output and piecewise constant in self, as later versions'
# formula: gg_x = 0, gg_c = hardsigmoid_backward(c2, x)
x = torch.tensor(X_HARD).reshape(2, 4)
c = torch.tensor(ramp(8, 0.5, 1.25, 11)).reshape(2, 4)
c2 = torch.tensor(ramp(8, 0.25, 0.875, 7)).reshape(2, 4)
emit("HARDSIGMOID_X", x)
emit("HARDSIGMOID_C", c)
emit("HARDSIGMOID_C2", c2)
emit("HARDSIGMOID_G", A.hardsigmoid_backward(c, x))
emit("HARDSIGMOID_GGX", torch.zeros(8))
emit("HARDSIGMOID_GGC", A.hardsigmoid_backward(c2, x))

# elu_backward on elu's result (is_result, the form elu_'s derivative
# calls), differentiated directly: out = elu_backward(go, 1.3, 1, 1, True, r),
# gradients of sum(out * c2) with respect to go and r; r holds 0 and both signs
r = torch.tensor([-1.0, -0.5, 0.0, 0.25, 2.0, -0.125]).requires_grad_()
go = torch.tensor(ramp(6, 0.5, 1.25, 11)).requires_grad_()
c2 = torch.tensor(ramp(6, 0.25, 0.875, 7))
out = A.elu_backward(go, 1.3, 1.0, 1.0, True, r)
ggo, ggr = torch.autograd.grad((out * c2).sum(), [go, r])
emit("ELU_RESULT_R", r.detach())
emit("ELU_RESULT_GO", go.detach())
emit("ELU_RESULT_C2", c2)
emit("ELU_RESULT_OUT", out.detach())
emit("ELU_RESULT_GGO", ggo)
emit("ELU_RESULT_GGR", ggr)


def case_multi(tag, f, inputs):
    """A forward y = f(*inputs) of several inputs (input, weight, bias), each
    (values, shape): g_i = grad(sum(y * c), x_i, create_graph=True), then
    the gradients of sum_i sum(g_i * c2_i) with respect to every x_i and to
    c (zeros where torch finds none). Writes <TAG>_X<i>, _C, _C2_<i>, _G<i>,
    _GG<i> and _GGC."""
    xs = [torch.tensor(v).reshape(shape).requires_grad_() for v, shape in inputs]
    y = f(*xs)
    c = torch.tensor(ramp(y.numel(), 0.5, 1.25, 11)).reshape(y.shape).requires_grad_()
    gs = torch.autograd.grad((y * c).sum(), xs, create_graph=True)
    c2s = [torch.tensor(ramp(x.numel(), 0.25, 0.875 - 0.125 * i, 7)).reshape(x.shape) for i, x in enumerate(xs)]
    loss2 = sum((g * c2).sum() for g, c2 in zip(gs, c2s))
    ggs = torch.autograd.grad(loss2, xs + [c], allow_unused=True)
    ggs = [torch.zeros_like(t) if gg is None else gg for gg, t in zip(ggs, xs + [c])]
    for i, (x, c2, g, gg) in enumerate(zip(xs, c2s, gs, ggs)):
        emit("%s_X%d" % (tag, i), x.detach())
        emit("%s_C2_%d" % (tag, i), c2)
        emit("%s_G%d" % (tag, i), g.detach())
        emit("%s_GG%d" % (tag, i), gg)
    emit(tag + "_C", c.detach())
    emit(tag + "_GGC", ggs[-1])


# layer norm: x [3, 4] over its last dim with weight and bias, x [2, 2, 3]
# over its last two without; rows of distinct values
X_LN = ramp(12, 0.375, 1.5, 13)
W_LN = [0.5, 1.5, -0.75, 2.0]
B_LN = [0.125, -0.25, 0.375, 0.0]
case_multi("LAYER_NORM", lambda x, w, b: A.native_layer_norm(x, [4], w, b, 1e-5)[0],
           [(X_LN, [3, 4]), (W_LN, [4]), (B_LN, [4])])
case_multi("LAYER_NORM2", lambda x: A.native_layer_norm(x, [2, 3], None, None, 1e-5)[0], [(X_LN, [2, 2, 3])])
# over every dim of x [2, 3], with weight and bias: no leading dim to sum over
case_multi("LAYER_NORM_ALL", lambda x, w, b: A.native_layer_norm(x, [2, 3], w, b, 1e-5)[0],
           [(X_LN[:6], [2, 3]), (W_LN + W_LN[:2], [2, 3]), (B_LN + B_LN[:2], [2, 3])])

# embedding: weight [5, 3], indices [2, 3] repeating rows, padding_idx 2
# (its row gets no gradient) and none; indices are constants of the trace
IDX_EMB = torch.tensor([[1, 2, 4], [1, 0, 2]])
emit("IDX_EMB", IDX_EMB, "int64_t")
X_EMB = ramp(15, 0.25, 1.0, 11)
case_multi("EMBEDDING_PAD", lambda w: A.embedding(w, IDX_EMB, 2), [(X_EMB, [5, 3])])
case_multi("EMBEDDING", lambda w: A.embedding(w, IDX_EMB), [(X_EMB, [5, 3])])

# max pool: overlapping windows (kernel 3, stride 2, padding 1) over planes
# with ties (values repeat every 7), and ceil_mode windows past the edge
X_POOL = ramp(50, 0.5, 1.0, 7)
case_multi("MAX_POOL", lambda x: A.max_pool2d_with_indices(x, [3, 3], [2, 2], [1, 1], [1, 1], False)[0],
           [(X_POOL, [1, 2, 5, 5])])
case_multi("MAX_POOL_CEIL", lambda x: A.max_pool2d_with_indices(x, [2, 2], [2, 2], [0, 0], [1, 1], True)[0],
           [(X_POOL[:20], [1, 4, 5])])

# batch norm: x [3, 3, 2] (3 channels of 6 values) with weight and bias, in
# training (the batch statistics, no running ones) and in evaluation (the
# running statistics, constants); group norm: x [2, 4, 3] in 2 groups with
# weight and bias, x [1, 6, 2, 2] in 3 groups without
X_BN = ramp(18, 0.375, 1.5, 13)
W_BN = [0.5, 1.5, -0.75]
B_BN = [0.125, -0.25, 0.375]
RM_BN = torch.tensor([0.25, -0.5, 0.125])
RV_BN = torch.tensor([0.5, 2.0, 1.25])
emit("RM_BN", RM_BN)
emit("RV_BN", RV_BN)
case_multi("BATCH_NORM", lambda x, w, b: A.native_batch_norm(x, w, b, None, None, True, 0.1, 1e-5)[0],
           [(X_BN, [3, 3, 2]), (W_BN, [3]), (B_BN, [3])])
case_multi("BATCH_NORM_EVAL", lambda x, w, b: A.native_batch_norm(x, w, b, RM_BN, RV_BN, False, 0.1, 1e-5)[0],
           [(X_BN, [3, 3, 2]), (W_BN, [3]), (B_BN, [3])])
X_GN = ramp(24, 0.375, 1.5, 13)
W_GN = [0.5, 1.5, -0.75, 2.0]
B_GN = [0.125, -0.25, 0.375, 0.0]
case_multi("GROUP_NORM", lambda x, w, b: A.native_group_norm(x, w, b, 2, 4, 3, 2, 1e-5)[0],
           [(X_GN, [2, 4, 3]), (W_GN, [4]), (B_GN, [4])])
case_multi("GROUP_NORM4", lambda x: A.native_group_norm(x, None, None, 1, 6, 4, 3, 1e-5)[0], [(X_GN, [1, 6, 2, 2])])

# convolution: padded with weight and bias; strided, dilated, two groups;
# transposed (stride 2, output_padding 1)
X_CONV = ramp(50, 0.25, 1.0, 13)
W_CONV = ramp(24, 0.375, 0.75, 11)
case_multi("CONV", lambda x, w, b: A.convolution(x, w, b, [1, 1], [1, 1], [1, 1], False, [0, 0], 1),
           [(X_CONV[:18], [1, 2, 3, 3]), (W_CONV[:24], [3, 2, 2, 2]), ([0.5, -0.25, 0.125], [3])])
case_multi("CONV_GROUPS", lambda x, w: A.convolution(x, w, None, [2, 1], [0, 1], [1, 2], False, [0, 0], 2),
           [(X_CONV, [1, 2, 5, 5]), (W_CONV[:8], [4, 1, 2, 1])])
case_multi("CONV_T", lambda x, w, b: A.convolution(x, w, b, [2, 2], [1, 1], [1, 1], True, [1, 1], 1),
           [(X_CONV[:18], [1, 2, 3, 3]), (W_CONV[:18], [2, 1, 3, 3]), ([0.25], [1])])

print_header("tests/make_double_backward_refs.py")
