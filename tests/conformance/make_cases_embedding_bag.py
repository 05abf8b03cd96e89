#!/usr/bin/python3
"""Writes the conformance cases of _embedding_bag, _embedding_bag_forward_only
(F.embedding_bag / nn.EmbeddingBag, what torch 1.13's make_fx records with and
without weight.requires_grad) and their gradients _embedding_bag_dense_backward
and _embedding_bag_per_sample_weights_backward (what aot_function records in
the backward graph) into OUTDIR (tests/conformance/cases), with PyTorch 1.13:

    /usr/bin/python3 tests/conformance/make_cases_embedding_bag.py tests/conformance/cases

Every argument is written positionally. Inputs are fixed values or seed-0
draws. Float outputs are computed in float64 from the same inputs and rounded
to the output dtype; the int64 outputs of the forward (offset2bag, bag_size,
max_indices) are torch's own on the inputs as given (float32 sum without
padding_idx returns an empty offset2bag). The gradients' saved inputs
(offset2bag, bag_size, max_indices) are torch's float64 forward results."""
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from case_writer import reference_cases, widened, write_case  # noqa: E402

OUT = sys.argv[1]
case = reference_cases(OUT)
A = torch.ops.aten
f32, f64, i64 = torch.float32, torch.float64, torch.int64
torch.manual_seed(0)
SUM, MEAN, MAX = 0, 1, 2


def forward_case(name, op, args, note):
    """A case with the four outputs: out0 from float64, rounded; the int64
    ones torch's on args as given."""
    native = op(*args)
    ref = op(*widened(args))
    write_case(OUT, name, op, args, note, [ref[0].to(native[0].dtype), *native[1:4]])


# weight rows with ties (rows 3 and 7 equal in column 0), negatives, and
# indices with repeats, an empty bag and the padding row 2
w = torch.randn(10, 4, dtype=f64)
w[7, 0] = w[3, 0]
idx = torch.tensor([1, 2, 4, 5, 4, 3, 7, 2, 9, 3, 3], dtype=i64)
off = torch.tensor([0, 4, 4, 6, 8], dtype=i64)  # bags [0:4] [] [4:6] [6:8] [8:11]
off_last = torch.tensor([0, 4, 4, 6, 8, 11], dtype=i64)
psw = torch.randn(11, dtype=f64)

EB, EBF = A._embedding_bag.default, A._embedding_bag_forward_only.default
modes = [(SUM, "sum"), (MEAN, "mean"), (MAX, "max")]
for m, tag in modes:
    for dt, dtag in [(f64, "f64"), (f32, "f32")]:
        wd = w.to(dt)
        forward_case(f"{tag}_{dtag}", EB, [wd, idx, off, False, m, False, None, False, -1],
                     f"mode {tag}: 5 bags, one empty, repeated indices, a tie in column 0")
        forward_case(f"{tag}_pad_{dtag}", EB, [wd, idx, off, False, m, False, None, False, 2],
                     f"mode {tag}, padding_idx 2 (bag 3 holds 7 and the padding row)")
    forward_case(f"{tag}_last_offset_f64", EB, [w, idx, off_last, False, m, False, None, True, -1],
                 f"mode {tag}, include_last_offset: offsets[-1] = n ends the last bag")
    forward_case(f"{tag}_forward_only_f64", EBF, [w, idx, off, False, m, False, None, False, 2],
                 f"mode {tag} without grad, padding_idx 2")
    forward_case(f"{tag}_forward_only_last_offset_f32", EBF, [w.to(f32), idx, off_last, False, m, False, None, True, -1],
                 f"mode {tag} without grad, include_last_offset (sum: bag_size [offsets])")
    forward_case(f"{tag}_all_padding_f64", EB, [w, torch.tensor([2, 2, 5], dtype=i64), torch.tensor([0, 2], dtype=i64),
                                                False, m, False, None, False, 2],
                 f"mode {tag}: a bag of padding only counts as empty")
    forward_case(f"{tag}_no_indices_f64", EB, [w, torch.zeros(0, dtype=i64), torch.tensor([0, 0], dtype=i64),
                                               False, m, False, None, False, -1], f"mode {tag}: no indices, two empty bags")
forward_case("psw_f64", EB, [w, idx, off, False, SUM, False, psw, False, -1], "per_sample_weights")
forward_case("psw_pad_f32", EB, [w.to(f32), idx, off, False, SUM, False, psw.to(f32), False, 2],
             "per_sample_weights, padding_idx 2")
forward_case("psw_f32", EB, [w.to(f32), idx, off, False, SUM, False, psw.to(f32), False, -1],
             "per_sample_weights, float32 (empty offset2bag)")
forward_case("from_2d_mean_f64", EB, [w, idx[:8], torch.arange(0, 8, 4), False, MEAN, False, None, False, -1],
             "what F.embedding_bag records for a [2, 4] input: offsets arange(0, 8, 4)")
# no case without offsets: torch 1.13 crashes there (tjit gives no bag, every
# position in none; tests/test_embedding_bag.c checks it)
nan_w = torch.tensor([[1.0, float("nan")], [2.0, 2.0], [float("nan"), 3.0]], dtype=f64)
forward_case("max_nan_f64", EB, [nan_w, torch.tensor([0, 1, 2, 1], dtype=i64), torch.tensor([0, 2], dtype=i64),
                                 False, MAX, False, None, False, -1],
             "max with NaN: a leading NaN stays, a later one does not replace a number")

# ---- the gradients, from torch's float64 forward results
DB, PB = A._embedding_bag_dense_backward.default, A._embedding_bag_per_sample_weights_backward.default
for m, tag in modes:
    for pad in (-1, 2):
        r = EB(w, idx, off, False, m, False, None, False, pad)
        g = torch.randn(r[0].shape, dtype=f64)
        ptag = "_pad" if pad >= 0 else ""
        case(f"{tag}{ptag}_f64", DB, [g, idx, r[1], r[2], r[3], 10, False, m, None, pad],
             f"mode {tag}{', padding_idx 2' if pad >= 0 else ''}")
        case(f"{tag}{ptag}_f32", DB, [g.to(f32), idx, r[1], r[2], r[3], 10, False, m, None, pad], "float32")
    if m != MAX:
        case(f"{tag}_freq_f64", DB, [g, idx, r[1], r[2], r[3], 10, True, m, None, 2],
             f"mode {tag}, scale_grad_by_freq (index 3 occurs 3 times), padding_idx 2")
    r = EB(w, idx, off_last, False, m, False, None, True, -1)
    case(f"{tag}_last_offset_f64", DB, [torch.randn(r[0].shape, dtype=f64), idx, r[1], r[2], r[3], 10, False, m, None, -1],
         f"mode {tag}, include_last_offset")
r = EB(w, idx, off, False, SUM, False, psw, False, 2)
g = torch.randn(r[0].shape, dtype=f64)
case("psw_pad_f64", DB, [g, idx, r[1], r[2], r[3], 10, False, SUM, psw, 2], "per_sample_weights, padding_idx 2")
case("psw_freq_f32", DB, [g.to(f32), idx, r[1], r[2], r[3], 12, True, SUM, psw.to(f32), -1],
     "per_sample_weights, scale_grad_by_freq, float32, 12 rows (2 never used)")

case("pad_f64", PB, [g, w, idx, off, r[1], SUM, 2], "padding_idx 2: its positions get 0")
case("f32", PB, [g.to(f32), w.to(f32), idx, off, r[1], SUM, -1], "float32")
case("empty_offset2bag_f32", PB, [g.to(f32), w.to(f32), idx, off, torch.zeros(0, dtype=i64), SUM, -1],
     "the empty offset2bag of float32 sum: rebuilt from the offsets")
r = EB(w, idx, off_last, False, SUM, False, psw, True, -1)
case("last_offset_f64", PB, [torch.randn(r[0].shape, dtype=f64), w, idx, off_last, r[1], SUM, -1], "include_last_offset")
