# Writes conformance-format cases (plus grad_out / grads keys for gradients)
# for the session-19 operators, reference = torch 1.13 in float64 rounded to
# the output dtype; cases torch refuses go to cases_err/ with torch's message.
# run: /usr/bin/python3 gen.py OUTDIR
import json, math, os, sys, shutil
import numpy as np
import torch
A = torch.ops.aten
OUT = sys.argv[1]
ERR = OUT + "_err"
for d in (OUT, ERR):
    shutil.rmtree(d, ignore_errors=True); os.makedirs(d)
torch.manual_seed(0)
names = set()

def enc_scalar(v):
    if isinstance(v, bool): return v
    if isinstance(v, int): return v
    if isinstance(v, float):
        if math.isnan(v): return {"float": "nan"}
        if math.isinf(v): return {"float": "inf" if v > 0 else "-inf"}
        return v
    raise TypeError(v)

def to64(x):
    if isinstance(x, torch.Tensor) and x.is_floating_point(): return x.detach().double()
    if isinstance(x, list): return [to64(e) for e in x]
    return x

def case(name, op, args, grad=(), tol=None, native_ref=False):
    """op: OpOverload; args: positional list (every schema arg);
    grad: indices of tensor args (float) to differentiate."""
    base = str(op).replace("aten.", "").replace(".default", "")
    cname = f"{base}__{name}"
    assert cname not in names, cname
    names.add(cname)
    files = {}
    def save(d, t, stem):
        fn = f"{stem}{len(files)}.npy"
        files[fn] = t
        np.save(os.path.join(d, fn), t.detach().contiguous().numpy())
        return fn
    try:
        nat = op(*args)
    except Exception as e:
        d = os.path.join(ERR, cname); os.makedirs(d)
        jargs = encode(args, d, save)
        json.dump({"op": "aten::" + base, "args": jargs, "torch_error": f"{type(e).__name__}: {e}"[:300]},
                  open(os.path.join(d, "case.json"), "w"), indent=0)
        return
    d = os.path.join(OUT, cname); os.makedirs(d)
    jargs = encode(args, d, save)
    if native_ref:
        ref = nat
    else:
        ref = op(*[to64(a) for a in args])
    outs = ref if isinstance(ref, tuple) else (ref,)
    nats = nat if isinstance(nat, tuple) else (nat,)
    ofiles = []
    for k, (r, n) in enumerate(zip(outs, nats)):
        r = r.to(n.dtype)
        fn = f"out{k}.npy"; np.save(os.path.join(d, fn), r.contiguous().numpy()); ofiles.append(fn)
        np.save(os.path.join(d, f"torch_out{k}.npy"), n.contiguous().numpy())
    dt = nats[0].dtype
    rtol, atol = (1e-5, 1e-6) if dt == torch.float32 else (1e-10, 1e-12)
    if tol: rtol, atol = tol
    j = {"op": "aten::" + base, "args": jargs, "outputs": ofiles, "rtol": rtol, "atol": atol, "note": name}
    if grad:
        a64 = [to64(a) for a in args]
        leaves = []
        for i in grad:
            a64[i] = a64[i].clone().requires_grad_(True); leaves.append(a64[i])
        o = op(*a64)
        o0 = o[0] if isinstance(o, tuple) else o
        g = torch.randn(o0.shape, dtype=torch.float64)
        gs = torch.autograd.grad(o0, leaves, g, allow_unused=True)
        j["grad_out"] = "gout.npy"; np.save(os.path.join(d, "gout.npy"), g.to(nats[0].dtype).numpy())
        gl = []
        for i, gi in zip(grad, gs):
            if gi is None: gi = torch.zeros_like(a64[i])
            fn = f"grad{i}.npy"; np.save(os.path.join(d, fn), gi.to(args[i].dtype).numpy()); gl.append([i, fn])
        j["grads"] = gl
    json.dump(j, open(os.path.join(d, "case.json"), "w"), indent=0)

def encode(args, d, save):
    out = []
    for a in args:
        if isinstance(a, torch.Tensor): out.append({"tensor": save(d, a, "in")})
        elif isinstance(a, list) and a and all(isinstance(e, torch.Tensor) or e is None for e in a) and any(isinstance(e, torch.Tensor) for e in a):
            out.append({"tensors": [save(d, e, "in") if e is not None else None for e in a]})
        elif isinstance(a, list) and all(isinstance(e, float) for e in a) and a:
            out.append([enc_scalar(e) for e in a])
        elif isinstance(a, list): out.append(a)
        elif a is None: out.append(None)
        elif isinstance(a, str): out.append(a)
        else: out.append(enc_scalar(a))
    return out

f32, f64, i64, b8 = torch.float32, torch.float64, torch.int64, torch.bool
SPECIAL = [0.0, -0.0, 0.5, -0.5, 1.5, -1.5, 2.5, -2.5, 1e-30, -1e-30, 3.0, -3.0, 0.49999997, 1e20, -1e20,
           float('inf'), float('-inf'), float('nan'), 8388609.0, -8388609.5, 4503599627370497.0, 1.0, -1.0, 0.9999999]
def special(dt):
    return torch.tensor(SPECIAL, dtype=f64).to(dt)
def rnd(*s, dt=f32, scale=1.0):
    return (torch.randn(*s, dtype=f64) * scale).to(dt)

# ---------------- elementwise unary ----------------
for nm in ["floor", "ceil", "round", "trunc", "frac", "isnan", "isinf", "isfinite", "asin", "acos", "atan",
           "sinh", "cosh", "log2", "log10", "exp2"]:
    op = getattr(A, nm).default
    diff = nm not in ("isnan", "isinf", "isfinite")
    for dt in (f32, f64):
        case(f"special_{dt}", op, [special(dt)])
        case(f"rand_{dt}", op, [rnd(3, 4, dt=dt, scale=3)], grad=(0,) if diff else ())
        case(f"big_{dt}", op, [rnd(50, dt=dt, scale=100)])
        case(f"empty_{dt}", op, [torch.empty(0, 3, dtype=dt)])
        case(f"0d_{dt}", op, [torch.tensor(-0.75, dtype=dt)], grad=(0,) if diff else ())
    case("int64", op, [torch.tensor([-5, 0, 3, 2**40, -2**62], dtype=i64)])
    case("bool", op, [torch.tensor([True, False])])
# exact-domain sweeps for the inverse trig
for nm in ["asin", "acos", "atanh" if False else "atan"]:
    op = getattr(A, nm).default
    for dt in (f32, f64):
        case(f"domain_{dt}", op, [torch.linspace(-1.2, 1.2, 97, dtype=dt)])
for nm in ["sinh", "cosh", "exp2"]:
    op = getattr(A, nm).default
    for dt in (f32, f64):
        case(f"overflow_{dt}", op, [torch.tensor([88.0, 89.5, 710.0, -710.0, 127.9, 128.0, 1024.0, -1075.0, -150.0, 1e-8, -1e-8], dtype=dt)])
for nm in ["log2", "log10"]:
    op = getattr(A, nm).default
    for dt in (f32, f64):
        case(f"pow_{dt}", op, [torch.tensor([1, 2, 4, 1024, 0.5, 2**-149 if dt == f32 else 2**-1074, 10, 100, 1e10, 1e-10, 0, -0.0, -1], dtype=dt)])

# ---------------- binary ----------------
for nm in ["remainder", "fmod"]:
    opT = getattr(A, nm).Tensor; opS = getattr(A, nm).Scalar
    for dt in (f32, f64):
        a = special(dt).view(-1, 1); b = torch.tensor([0.0, -0.0, 1.0, -1.0, 0.3, -2.5, 1e-30, 1e20, float('inf'), float('-inf'), float('nan')], dtype=dt)
        case(f"special_{dt}", opT, [a, b])
        case(f"rand_{dt}", opT, [rnd(3, 4, dt=dt, scale=5), rnd(4, dt=dt, scale=2)], grad=(0, 1))
        case(f"scalar_{dt}", opS, [rnd(3, 4, dt=dt, scale=5), 1.5])
        case(f"scalar_neg_{dt}", opS, [rnd(3, 4, dt=dt, scale=5), -2])
        case(f"scalar_zero_{dt}", opS, [rnd(5, dt=dt), 0.0])
        case(f"empty_{dt}", opT, [torch.empty(0, 4, dtype=dt), rnd(4, dt=dt)])
        case(f"0d_{dt}", opT, [torch.tensor(7.5, dtype=dt), torch.tensor(-2.0, dtype=dt)], grad=(0, 1))
    ai = torch.tensor([-7, 7, -7, 7, 0, -2**63, 2**63 - 1, -1], dtype=i64)
    bi = torch.tensor([2, -2, -2, 2, 3, -3, 2**62, 5], dtype=i64)
    case("int64", opT, [ai, bi])
    case("int64_zero", opT, [ai, torch.zeros(8, dtype=i64)])
    case("int64_scalar_float", opS, [ai, 2.5])
    case("int64_scalar_int", opS, [ai, -3])
    case("int_float_mix", opT, [ai, torch.tensor(2.5, dtype=f32)])
    case("float_int_mix", opT, [rnd(8), bi])
    case("f32_f64_mix", opT, [rnd(8), rnd(8, dt=f64)])
    case("bool_bool", opT, [torch.tensor([True, False]), torch.tensor([True, True])])
    case("bcast_fail", opT, [rnd(3), rnd(4)])
    case("bcast", opT, [rnd(2, 1, 3, scale=4), rnd(4, 1, scale=2)], grad=(0, 1))
for dt in (f32, f64):
    a = special(dt).view(-1, 1); b = torch.tensor([0.0, -0.0, 1.0, -1.0, float('inf'), float('-inf'), float('nan'), 1e-30], dtype=dt)
    case(f"special_{dt}", A.atan2.default, [a, b])
    case(f"rand_{dt}", A.atan2.default, [rnd(3, 4, dt=dt), rnd(4, dt=dt)], grad=(0, 1))
    case(f"zeros_{dt}", A.atan2.default, [torch.zeros(3, dtype=dt), torch.zeros(3, dtype=dt)], grad=(0, 1))
case("int64", A.atan2.default, [torch.tensor([1, -1, 0]), torch.tensor([0, 0, -1])])
case("bool", A.atan2.default, [torch.tensor([True, False]), torch.tensor([True, True])])
case("f32_i64", A.atan2.default, [rnd(3), torch.tensor([1, -1, 0])])
case("bcast_fail", A.atan2.default, [rnd(3), rnd(4)])
case("empty", A.atan2.default, [torch.empty(0), rnd(1)])

# ---------------- nan_to_num / clamp_min / clamp_max ----------------
for dt in (f32, f64):
    s = special(dt)
    case(f"default_{dt}", A.nan_to_num.default, [s, None, None, None])
    case(f"given_{dt}", A.nan_to_num.default, [s, 1.5, 100.0, -100.0], grad=(0,))
    case(f"huge_{dt}", A.nan_to_num.default, [s, 1e300, 1e300, -1e300])
    case(f"nanrepl_{dt}", A.nan_to_num.default, [s, float('nan'), float('inf'), float('-inf')])
    case(f"grad_{dt}", A.nan_to_num.default, [torch.tensor([1.0, float('nan'), float('inf'), -float('inf'), 2], dtype=dt), None, None, None], grad=(0,))
    for nm, opn in (("clamp_min", A.clamp_min.default), ("clamp_max", A.clamp_max.default)):
        case(f"sp_{dt}", opn, [s, 0.5])
        case(f"negzero_{dt}", opn, [s, -0.0])
        case(f"zero_{dt}", opn, [s, 0])
        case(f"nanbound_{dt}", opn, [s, float('nan')])
        case(f"infbound_{dt}", opn, [s, float('inf')])
        case(f"grad_{dt}", opn, [torch.tensor([-1.0, 0.0, 0.5, 1.0, 2.0], dtype=dt), 0.5], grad=(0,))
        case(f"hugebound_{dt}", opn, [s, 1e300])
case("int64", A.nan_to_num.default, [torch.tensor([1, -2, 3]), 1.0, 2.0, 3.0])
case("bool", A.nan_to_num.default, [torch.tensor([True, False]), None, None, None])
for nm, opn in (("clamp_min", A.clamp_min.default), ("clamp_max", A.clamp_max.default)):
    case("int64_int", opn, [torch.tensor([-5, 0, 5, 2**62]), 1])
    case("int64_float", opn, [torch.tensor([-5, 0, 5]), 0.5])
    case("int64_huge", opn, [torch.tensor([-5, 0, 5]), 2**63 - 1])
    case("bool_int", opn, [torch.tensor([True, False]), 0])
    case("bool_bool", opn, [torch.tensor([True, False]), True])
    case("empty", opn, [torch.empty(0, 2), 1.0])

# ---------------- roll ----------------
x = torch.arange(24, dtype=f64).view(2, 3, 4)
for dt in (f32, f64, i64, b8):
    xt = x.to(dt) if dt != b8 else (x.long() % 3 == 0)
    case(f"one_{dt}", A.roll.default, [xt, [1], [2]])
    case(f"flat_{dt}", A.roll.default, [xt, [5], []])
case("multi", A.roll.default, [x, [1, -2, 7], [0, 1, 2]], grad=(0,))
case("repeat_dim", A.roll.default, [x, [1, 2], [2, 2]], grad=(0,))
case("neg_dim", A.roll.default, [x, [1], [-1]])
case("huge_shift", A.roll.default, [x, [2**62 + 1], [2]])
case("min_shift", A.roll.default, [x, [-2**63], [2]])
case("flat_neg", A.roll.default, [x, [-25], []], grad=(0,))
case("empty", A.roll.default, [torch.empty(0, 3), [1], [1]])
case("empty_baddim", A.roll.default, [torch.empty(0, 3), [1], [5]])
case("0d", A.roll.default, [torch.tensor(3.0), [1], [0]])
case("0d_flat", A.roll.default, [torch.tensor(3.0), [1], []])
case("no_shift", A.roll.default, [x, [], []])
case("mismatch", A.roll.default, [x, [1, 2], [0]])
case("two_no_dims", A.roll.default, [x, [1, 2], []])
case("bad_dim", A.roll.default, [x, [1], [3]])
case("size1", A.roll.default, [torch.ones(1, 5), [3], [0]])

# ---------------- index / index_put ----------------
x = rnd(4, 5, 6, dt=f64)
I = lambda *v: torch.tensor(v, dtype=i64)
for dt in (f32, f64, i64, b8):
    xt = x.to(dt) if dt != b8 else x > 0
    case(f"first_{dt}", A.index.Tensor, [xt, [I(0, 3, -1, 2)]], grad=(0,) if dt.is_floating_point else ())
    case(f"put_{dt}", A.index_put.default, [xt, [I(0, 3, -1)], torch.ones(3, 5, 6, dtype=dt), False])
case("mid", A.index.Tensor, [x, [None, I(4, 0, -5)]], grad=(0,))
case("last", A.index.Tensor, [x, [None, None, I(5, 0)]], grad=(0,))
case("adjacent_bcast", A.index.Tensor, [x, [None, I(0, 1, 2).view(3, 1), I(5, 4)]], grad=(0,))
case("nonadjacent", A.index.Tensor, [x, [I(0, 1, 2).view(3, 1), None, I(5, 4)]], grad=(0,))
case("all3", A.index.Tensor, [x, [I(0, 1), I(1, 2), I(3, -6)]], grad=(0,))
case("dup", A.index.Tensor, [x, [I(1, 1, 1)]], grad=(0,))
case("idx_0d", A.index.Tensor, [x, [torch.tensor(2)]], grad=(0,))
case("idx_0d_mid", A.index.Tensor, [x, [None, torch.tensor(-1)]], grad=(0,))
case("idx_empty", A.index.Tensor, [x, [torch.empty(0, dtype=i64)]], grad=(0,))
case("idx_2d", A.index.Tensor, [x, [I(0, 1, 2, 3).view(2, 2), I(1, 2)]], grad=(0,))
case("self_empty", A.index.Tensor, [torch.empty(0, 3), [None, I(1, 2)]])
case("self_0d", A.index.Tensor, [torch.tensor(2.0), [I(0)]])
case("oob", A.index.Tensor, [x, [I(4)]])
case("oob_neg", A.index.Tensor, [x, [None, I(-6)]])
case("float_idx", A.index.Tensor, [x, [torch.tensor([0.0])]])
case("bool_mask", A.index.Tensor, [x, [torch.tensor([True, False, True, False])]])
case("too_many", A.index.Tensor, [x, [I(0), I(0), I(0), I(0)]])
case("bcast_fail", A.index.Tensor, [x, [I(0, 1), I(0, 1, 2)]])
case("trailing_none", A.index.Tensor, [x, [I(1, 2), None, None]], grad=(0,))
case("uint8_mask", A.index.Tensor, [x, [torch.tensor([1, 0, 1, 0], dtype=torch.uint8)]]) if False else None
for acc in (False, True):
    case(f"dup_{acc}", A.index_put.default, [x, [I(1, 1, 2, 1)], rnd(4, 5, 6, dt=f64), acc], grad=(0, 2))
    case(f"dup_bcastval_{acc}", A.index_put.default, [x, [None, I(1, 1, -4)], rnd(6, dt=f64), acc], grad=(0, 2))
    case(f"nonadj_{acc}", A.index_put.default, [x, [I(0, 0, 3), None, I(1, 1, 1)], rnd(3, 5, dt=f64), acc], grad=(0, 2))
    case(f"scalarval_{acc}", A.index_put.default, [x, [I(0, 0)], torch.tensor(2.5, dtype=f64), acc], grad=(0, 2))
    case(f"f32_{acc}", A.index_put.default, [x.float(), [I(0, 0, 0)], rnd(3, 5, 6), acc])
    case(f"int64_{acc}", A.index_put.default, [torch.zeros(5, dtype=i64), [I(1, 1, 4)], I(2**62, 2**62, 7), acc])
    case(f"bool_{acc}", A.index_put.default, [torch.zeros(5, dtype=b8), [I(1, 1, 4)], torch.tensor([True, False, True]), acc])
    case(f"empty_idx_{acc}", A.index_put.default, [x, [torch.empty(0, dtype=i64)], torch.tensor(1.0, dtype=f64), acc])
    case(f"oob_{acc}", A.index_put.default, [x, [I(0, 9)], torch.tensor(1.0, dtype=f64), acc])
    case(f"valdtype_{acc}", A.index_put.default, [x, [I(0)], torch.tensor(1.0, dtype=f32), acc])
    case(f"valshape_{acc}", A.index_put.default, [x, [I(0, 1)], rnd(3, 5, 6, dt=f64), acc])
    case(f"0d_idx_{acc}", A.index_put.default, [x, [None, torch.tensor(3)], rnd(4, 6, dt=f64), acc], grad=(0, 2))
    case(f"inplace_{acc}", A.index_put_.default, [x.clone(), [I(1, 1, 2, 1)], rnd(4, 5, 6, dt=f64), acc])
    case(f"inplace_bcast_{acc}", A.index_put_.default, [x.clone(), [None, I(0, 0), I(1, 1)], torch.tensor([5.0, 6.0], dtype=f64), acc])

# ---------------- upsample ----------------
inp = rnd(2, 3, 5, 7, dt=f64)
for dt in (f32, f64):
    xi = inp.to(dt)
    for ac in (False, True):
        case(f"size_up_{ac}_{dt}", A.upsample_bilinear2d.vec, [xi, [11, 13], ac, None], grad=(0,))
        case(f"size_down_{ac}_{dt}", A.upsample_bilinear2d.vec, [xi, [3, 4], ac, None], grad=(0,))
        case(f"size_same_{ac}_{dt}", A.upsample_bilinear2d.vec, [xi, [5, 7], ac, None], grad=(0,))
        case(f"size_one_{ac}_{dt}", A.upsample_bilinear2d.vec, [xi, [1, 1], ac, None], grad=(0,))
        case(f"scale2_{ac}_{dt}", A.upsample_bilinear2d.vec, [xi, None, ac, [2.0, 2.0]], grad=(0,))
        case(f"scale_frac_{ac}_{dt}", A.upsample_bilinear2d.vec, [xi, None, ac, [1.7, 0.6]], grad=(0,))
        case(f"scale_third_{ac}_{dt}", A.upsample_bilinear2d.vec, [xi, None, ac, [1/3 + 1, 2.5]], grad=(0,))
        case(f"scale_big_{ac}_{dt}", A.upsample_bilinear2d.vec, [xi[:, :, :2, :2], None, ac, [7.3, 9.9]], grad=(0,))
        case(f"from1_{ac}_{dt}", A.upsample_bilinear2d.vec, [xi[:, :, :1, :1], [4, 3], ac, None], grad=(0,))
    case(f"size_up_{dt}", A.upsample_nearest2d.vec, [xi, [11, 13], None], grad=(0,))
    case(f"size_down_{dt}", A.upsample_nearest2d.vec, [xi, [3, 4], None], grad=(0,))
    case(f"size_2x_{dt}", A.upsample_nearest2d.vec, [xi, [10, 14], None], grad=(0,))
    case(f"scale2_{dt}", A.upsample_nearest2d.vec, [xi, None, [2.0, 2.0]], grad=(0,))
    case(f"scale_frac_{dt}", A.upsample_nearest2d.vec, [xi, None, [1.7, 0.6]], grad=(0,))
    case(f"scale_third_{dt}", A.upsample_nearest2d.vec, [xi, None, [1/3 + 1, 2.5]], grad=(0,))
    case(f"scale_big_{dt}", A.upsample_nearest2d.vec, [xi[:, :, :2, :2], None, [7.3, 9.9]], grad=(0,))
    case(f"specials_{dt}", A.upsample_bilinear2d.vec, [torch.tensor([[[[1.0, float('inf')], [float('nan'), -0.0]]]], dtype=dt), [3, 3], False, None])
    case(f"negzero_{dt}", A.upsample_bilinear2d.vec, [torch.full((1, 1, 2, 2), -0.0, dtype=dt), [3, 5], True, None])
    case(f"specials_{dt}", A.upsample_nearest2d.vec, [torch.tensor([[[[1.0, float('inf')], [float('nan'), -0.0]]]], dtype=dt), [3, 3], None])
    case(f"batch0_{dt}", A.upsample_bilinear2d.vec, [torch.empty(0, 2, 3, 3, dtype=dt), [5, 5], False, None])
    case(f"batch0_{dt}", A.upsample_nearest2d.vec, [torch.empty(0, 2, 3, 3, dtype=dt), [5, 5], None])
case("int64", A.upsample_nearest2d.vec, [torch.ones(1, 1, 2, 2, dtype=i64), [3, 3], None])
case("int64", A.upsample_bilinear2d.vec, [torch.ones(1, 1, 2, 2, dtype=i64), [3, 3], False, None])
case("rank3", A.upsample_nearest2d.vec, [torch.ones(1, 2, 2), [3, 3], None])
case("rank3", A.upsample_bilinear2d.vec, [torch.ones(1, 2, 2), [3, 3], False, None])
case("both", A.upsample_nearest2d.vec, [torch.ones(1, 1, 2, 2), [3, 3], [1.5, 1.5]])
case("neither", A.upsample_bilinear2d.vec, [torch.ones(1, 1, 2, 2), None, False, None])
case("zero_out", A.upsample_bilinear2d.vec, [torch.ones(1, 1, 2, 2), [0, 3], False, None])
case("neg_out", A.upsample_nearest2d.vec, [torch.ones(1, 1, 2, 2), [-1, 3], None])
case("scale_small", A.upsample_nearest2d.vec, [torch.ones(1, 1, 2, 2), None, [0.1, 1.0]])
case("scale_neg", A.upsample_bilinear2d.vec, [torch.ones(1, 1, 2, 2), None, False, [-2.0, 2.0]])
case("scale_nan", A.upsample_bilinear2d.vec, [torch.ones(1, 1, 2, 2), None, False, [float('nan'), 2.0]])
case("scale_inf", A.upsample_nearest2d.vec, [torch.ones(1, 1, 2, 2), None, [float('inf'), 2.0]])
case("C0", A.upsample_nearest2d.vec, [torch.ones(1, 0, 2, 2), [3, 3], None])
case("H0", A.upsample_bilinear2d.vec, [torch.ones(1, 1, 0, 2), [3, 3], False, None])
case("size_len1", A.upsample_nearest2d.vec, [torch.ones(1, 1, 2, 2), [3], None])
case("scale_len1", A.upsample_nearest2d.vec, [torch.ones(1, 1, 2, 2), None, [3.0]])
# backward operators directly
for dt in (f32, f64):
    go = rnd(2, 3, 11, 13, dt=dt)
    case(f"bw_{dt}", A.upsample_bilinear2d_backward.vec, [go, [11, 13], [2, 3, 5, 7], False, None])
    case(f"bw_ac_{dt}", A.upsample_bilinear2d_backward.vec, [go, [11, 13], [2, 3, 5, 7], True, None])
    case(f"bw_{dt}", A.upsample_nearest2d_backward.vec, [go, [11, 13], [2, 3, 5, 7], None])
    go2 = rnd(2, 3, 8, 4, dt=dt)
    case(f"bw_scale_{dt}", A.upsample_bilinear2d_backward.vec, [go2, None, [2, 3, 5, 7], False, [1.7, 0.6]])
    case(f"bw_scale_{dt}", A.upsample_nearest2d_backward.vec, [go2, None, [2, 3, 5, 7], [1.7, 0.6]])
case("bw_badshape", A.upsample_nearest2d_backward.vec, [rnd(2, 3, 11, 12), [11, 13], [2, 3, 5, 7], None])
case("bw_badin", A.upsample_bilinear2d_backward.vec, [rnd(2, 3, 11, 13), [11, 13], [2, 3, 5], False, None])

# ---------------- pixel shuffle ----------------
for dt in (f32, f64, i64, b8):
    xt = torch.arange(2 * 8 * 3 * 2).view(2, 8, 3, 2)
    xt = xt.to(dt) if dt != b8 else xt % 3 == 0
    case(f"r2_{dt}", A.pixel_shuffle.default, [xt, 2])
    case(f"r2_{dt}", A.pixel_unshuffle.default, [xt.reshape(2, 2, 6, 4), 2])
case("r1", A.pixel_shuffle.default, [rnd(2, 3, 4, 5), 1], grad=(0,))
case("3d", A.pixel_shuffle.default, [rnd(9, 2, 2), 3], grad=(0,))
case("5d", A.pixel_shuffle.default, [rnd(2, 2, 4, 2, 3), 2], grad=(0,))
case("6d", A.pixel_shuffle.default, [rnd(1, 2, 2, 4, 2, 3), 2], grad=(0,))
case("7d", A.pixel_shuffle.default, [rnd(1, 1, 2, 2, 4, 2, 3), 2])
case("2d", A.pixel_shuffle.default, [rnd(4, 2), 2])
case("bad_c", A.pixel_shuffle.default, [rnd(1, 6, 2, 2), 2])
case("r0", A.pixel_shuffle.default, [rnd(1, 4, 2, 2), 0])
case("rneg", A.pixel_shuffle.default, [rnd(1, 4, 2, 2), -2])
case("empty", A.pixel_shuffle.default, [rnd(0, 4, 2, 2), 2])
case("empty_hw", A.pixel_shuffle.default, [rnd(1, 4, 0, 2), 2])
case("un_3d", A.pixel_unshuffle.default, [rnd(1, 6, 9), 3], grad=(0,))
case("un_5d", A.pixel_unshuffle.default, [rnd(2, 2, 3, 4, 6), 2], grad=(0,))
case("un_bad_h", A.pixel_unshuffle.default, [rnd(1, 1, 3, 4), 2])
case("un_r0", A.pixel_unshuffle.default, [rnd(1, 1, 4, 4), 0])
case("un_empty", A.pixel_unshuffle.default, [rnd(0, 1, 4, 4), 2])
print(len(names), "cases;", len(os.listdir(ERR)), "torch errors")
