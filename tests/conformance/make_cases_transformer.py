#!/usr/bin/python3
"""Writes the conformance cases of _native_multi_head_attention and
_transformer_encoder_layer_fwd (PyTorch 1.13's eval fast paths of
nn.MultiheadAttention and nn.TransformerEncoderLayer) into OUTDIR
(tests/conformance/cases), with PyTorch 1.13:

    /usr/bin/python3 tests/conformance/make_cases_transformer.py tests/conformance/cases

Every argument is written positionally. Inputs are seed-0 draws; expected
outputs are torch's operator on float64 copies, rounded to the input dtype.
need_weights=False leaves the weights undefined (torch returns None): that
output is null. A batch item whose keys are all masked gets nan (ATen's
masked softmax), which one case checks."""
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from case_writer import call, reference_cases, widened, write_case  # noqa: E402

OUT = sys.argv[1]
case = reference_cases(OUT)
A = torch.ops.aten
MHA = A._native_multi_head_attention.default
f32, f64 = torch.float32, torch.float64
torch.manual_seed(0)
B, T, E, H, F = 2, 4, 8, 2, 12


def randn(*shape, scale=1.0):
    return torch.randn(*shape, dtype=f64) * scale


def mha_case(name, args, note):
    """A case of MHA's two outputs, the weights null when torch returns
    None (need_weights=False)."""
    out, weights = call(MHA, widened(args))
    dtype = args[0].dtype
    write_case(OUT, name, MHA, args, note, [out.to(dtype), None if weights is None else weights.to(dtype)])


x, y, z = randn(B, T, E), randn(B, T, E), randn(B, T, E)
w = [randn(3 * E, E, scale=0.3), randn(3 * E), randn(E, E, scale=0.3), randn(E)]
padding = torch.zeros(B, T, dtype=torch.bool)
padding[0, 2:] = True
padding[1, 3] = True
full = torch.rand(B, H, T, T) < 0.3
full[..., 0] = False  # every query keeps a key
dead = padding.clone()
dead[1] = True


def mha(q, k, v, mask=None, need_weights=True, average=True, mask_type=None, dtype=f64):
    cast = lambda t: t.to(dtype) if t is not None and t.is_floating_point() else t
    return [cast(q), cast(k), cast(v), E, H] + [cast(t) for t in w] + [cast(mask), need_weights, average, mask_type]


mha_case("self_f64", mha(x, x, x), "self-attention, weights averaged over the heads")
mha_case("distinct_qkv_per_head_f64", mha(x, y, z, average=False), "query, key, value differ; weights per head")
mha_case("key_padding_f64", mha(x, x, x, padding, mask_type=1), "bool key padding mask [B, T], mask_type 1")
mha_case("full_mask_type2_f64", mha(x, y, z, full, average=False, mask_type=2), "bool mask [B, H, T, T], mask_type 2")
mha_case("padding_as_type2_f64", mha(x, x, x, padding, mask_type=2), "[B, T] with mask_type 2: key padding too")
mha_case("float_mask_f64", mha(x, x, x, padding.to(f64), mask_type=1), "a float mask counts where nonzero")
mha_case("no_weights_f32", mha(x, x, x, padding, need_weights=False, mask_type=1, dtype=f32),
         "need_weights=False: the weights are undefined")
mha_case("all_keys_masked_f64", mha(x, x, x, dead, mask_type=1), "batch item 1 masks every key: nan, as ATen")

LAYER = A._transformer_encoder_layer_fwd.default
norms = [1 + 0.1 * randn(E), 0.1 * randn(E), 1 + 0.1 * randn(E), 0.1 * randn(E)]
ffn = [randn(F, E, scale=0.3), randn(F), randn(E, F, scale=0.3), randn(E)]


def layer(src, gelu, norm_first, mask=None, mask_type=None, eps=1e-5, dtype=f64):
    cast = lambda t: t.to(dtype) if t is not None and t.is_floating_point() else t
    return ([cast(src), E, H] + [cast(t) for t in w] + [gelu, norm_first, eps] + [cast(t) for t in norms + ffn]
            + [mask, mask_type])


case("relu_post_norm_f64", LAYER, layer(x, False, False), "relu, norm after each block")
case("gelu_pre_norm_f64", LAYER, layer(x, True, True, eps=1e-3), "erf gelu, norm first, eps 1e-3")
case("key_padding_pre_norm_f64", LAYER, layer(y, False, True, padding, 1), "key padding mask [B, T], mask_type 1")
case("full_mask_gelu_f64", LAYER, layer(z, True, False, full, 2), "mask [B, H, T, T], mask_type 2")
case("relu_post_norm_f32", LAYER, layer(x, False, False, dtype=f32), "float32")
