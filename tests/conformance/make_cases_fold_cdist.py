#!/usr/bin/python3
"""Writes the conformance cases of im2col, col2im (F.unfold / F.fold),
_cdist_forward, _cdist_backward, _euclidean_dist (torch.cdist, its gradient
and its matrix-product path for p = 2 past 25 rows) and
repeat_interleave (.Tensor, .self_int, .self_Tensor) into OUTDIR
(tests/conformance/cases), in the folder's final format, with PyTorch 1.13:

    /usr/bin/python3 tests/conformance/make_cases_fold_cdist.py tests/conformance/cases

Every argument is written positionally, keyword-only ones included. Inputs
are fixed values or seed-0 draws; expected float outputs are computed in
float64 from the same inputs and rounded to the output dtype, int64 ones are
torch's. The gradients: col2im is im2col's and the reverse, _cdist_backward
is _cdist_forward's (its cdist input is torch's float64 forward result, some
rows repeated so that distances and differences of 0 are met);
repeat_interleave's is index_select's, which has cases of its own."""
import os, sys
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from case_writer import reference_cases  # noqa: E402

case = reference_cases(sys.argv[1])
A = torch.ops.aten
f32, f64, i64 = torch.float32, torch.float64, torch.int64
torch.manual_seed(0)
inf = float("inf")


# ---- im2col / col2im: args (self, [output_size,] kernel_size, dilation, padding, stride)
x = torch.randn(2, 3, 5, 6, dtype=f64)
case("batched_f64", A.im2col.default, [x, [2, 3], [1, 1], [1, 0], [1, 2]], "[2, 3, 5, 6], kernel 2x3, padding (1, 0), stride (1, 2)")
case("unbatched_dilated_f32", A.im2col.default, [x[0, :, :4, :5].to(f32), [2, 2], [2, 1], [1, 1], [2, 1]],
     "unbatched [3, 4, 5], dilation (2, 1), padding 1, stride (2, 1)")
case("empty_batch_f64", A.im2col.default, [torch.zeros(0, 2, 3, 3, dtype=f64), [2, 2], [1, 1], [0, 0], [1, 1]], "N = 0")
case("1x1_f64", A.im2col.default, [x, [1, 1], [1, 1], [0, 0], [1, 1]], "1x1 kernel: the image, flattened")
case("kernel_as_image_f32", A.im2col.default, [x[:1].to(f32), [5, 6], [1, 1], [0, 0], [1, 1]], "one block, the whole image")

cols = torch.randn(2, 18, 12, dtype=f64)  # 3 channels x 2x3 taps, blocks of a 5x6 image (padding (1, 0), stride (1, 2))
case("batched_f64", A.col2im.default, [cols, [5, 6], [2, 3], [1, 1], [1, 0], [1, 2]], "the adjoint of im2col's batched_f64 case")
case("unbatched_dilated_f32", A.col2im.default, [torch.randn(12, 12).to(f32), [4, 5], [2, 2], [2, 1], [1, 1], [2, 1]],
     "unbatched, overlapping blocks, dilation (2, 1)")
case("overlap_stride1_f64", A.col2im.default, [torch.randn(1, 9 * 2, 16, dtype=f64), [6, 6], [3, 3], [1, 1], [0, 0], [1, 1]],
     "3x3 blocks at stride 1: up to 9 sums per pixel")
case("gaps_f64", A.col2im.default, [torch.randn(2, 4, 4, dtype=f64), [5, 5], [2, 2], [1, 1], [0, 0], [3, 3]],
     "stride 3 > kernel 2: pixels no block reaches are 0")

# ---- _cdist_forward: (x1, x2, p, compute_mode)
a, b = torch.randn(2, 5, 3, dtype=f64), torch.randn(2, 4, 3, dtype=f64)
b[0, 1] = a[0, 2]          # a distance of 0
b[1, 3, 0] = a[1, 0, 0]    # a difference of 0
for p, tag in [(2.0, "p2"), (1.0, "p1"), (0.0, "p0"), (inf, "pinf"), (3.0, "p3"), (0.5, "p0_5"), (1.5, "p1_5")]:
    case(f"{tag}_f64", A._cdist_forward.default, [a, b, p, None], f"p = {p}, batch 2, a repeated row")
case("p2_f32", A._cdist_forward.default, [a.to(f32), b.to(f32), 2.0, None], "float32")
case("p1_5_f32", A._cdist_forward.default, [a.to(f32), b.to(f32), 1.5, None], "float32, general p")
case("bcast_batch_f64", A._cdist_forward.default, [torch.randn(2, 1, 4, 3, dtype=f64), torch.randn(3, 5, 3, dtype=f64), 2.0, None],
     "batch [2, 1] with [3]: [2, 3, 4, 5]")
big1, big2 = torch.randn(30, 4, dtype=f64), torch.randn(7, 4, dtype=f64)
case("p2_mm_path_f64", A._cdist_forward.default, [big1, big2, 2.0, None], "30 rows > 25: ATen's matrix-product path")
case("p2_mode2_f64", A._cdist_forward.default, [big1, big2, 2.0, 2], "compute_mode 2: the differences")
case("p2_mode1_f32", A._cdist_forward.default, [torch.randn(5, 3), torch.randn(4, 3), 2.0, 1],
     "compute_mode 1: the product path (no zero distance: see _euclidean_dist's float32 case)")
case("no_columns_f64", A._cdist_forward.default, [torch.zeros(3, 0, dtype=f64), torch.zeros(2, 0, dtype=f64), 2.0, None], "c = 0: zeros")
case("no_rows_f64", A._cdist_forward.default, [torch.zeros(0, 3, dtype=f64), b[0], 1.0, None], "r1 = 0: empty")

case("x30_f64", A._euclidean_dist.default, [big1, big2], "what torch.cdist records for 30 rows, p = 2")
# no zero distance here: the formula's rounding there is magnified by the
# square root (kernel, torch and decomposition differ by up to ~sqrt(eps) |x|)
case("batched_f32", A._euclidean_dist.default, [torch.randn(2, 5, 3), torch.randn(2, 4, 3)], "float32, batch 2")

# ---- _cdist_backward: (grad, x1, x2, p, cdist)
for p, tag in [(2.0, "p2"), (1.0, "p1"), (0.0, "p0"), (inf, "pinf"), (3.0, "p3"), (0.5, "p0_5"), (1.5, "p1_5")]:
    d = A._cdist_forward.default(a, b, p, None)
    g = torch.randn(d.shape, dtype=f64)
    case(f"{tag}_f64", A._cdist_backward.default, [g, a, b, p, d], f"x1's gradient, p = {p} (zero distance and difference met)")
    dt = d.transpose(-2, -1).contiguous()
    case(f"{tag}_x2_f64", A._cdist_backward.default, [g.transpose(-2, -1).contiguous(), b, a, p, dt], f"x2's gradient, p = {p}")
d = A._cdist_forward.default(a.to(f32), b.to(f32), 2.0, None)
case("p2_f32", A._cdist_backward.default, [torch.randn(d.shape), a.to(f32), b.to(f32), 2.0, d], "float32")
bx1, bx2 = torch.randn(2, 1, 4, 3, dtype=f64), torch.randn(3, 5, 3, dtype=f64)
d = A._cdist_forward.default(bx1, bx2, 3.0, None)
case("bcast_batch_f64", A._cdist_backward.default, [torch.randn(d.shape, dtype=f64), bx1, bx2, 3.0, d],
     "broadcast batch: the gradient has the broadcast batch [2, 3, 4, 3]")

# ---- repeat_interleave
case("counts", A.repeat_interleave.Tensor, [torch.tensor([1, 0, 3, 2]), None], "0, 2, 2, 2, 3, 3")
case("counts_output_size", A.repeat_interleave.Tensor, [torch.tensor([2, 1]), 3], "output_size given")
case("empty", A.repeat_interleave.Tensor, [torch.zeros(0, dtype=i64), None], "no counts")
case("zeros", A.repeat_interleave.Tensor, [torch.tensor([0, 0]), None], "all counts 0: empty")
y = torch.randn(2, 3, dtype=f64)
case("dim1_f64", A.repeat_interleave.self_int, [y, 2, 1, None], "[2, 3] along dim 1: [2, 6]")
case("flat_f32", A.repeat_interleave.self_int, [y.to(f32), 3, None, None], "no dim: flattened, [18]")
case("dim_neg2_i64", A.repeat_interleave.self_int, [torch.tensor([[1, 2], [3, 4]]), 2, -2, 4], "dim -2, output_size 4")
case("zero_times_f64", A.repeat_interleave.self_int, [y, 0, 0, None], "repeats 0: [0, 3]")
case("rows_f64", A.repeat_interleave.self_Tensor, [y, torch.tensor([1, 2]), 0, None], "a count per row")
case("cols_output_size_f32", A.repeat_interleave.self_Tensor, [y.to(f32), torch.tensor([0, 2, 1]), 1, 3], "a count per column, output_size 3")
case("one_count_f64", A.repeat_interleave.self_Tensor, [y, torch.tensor(2), None, None], "a 0-dim count for every element")
case("bool", A.repeat_interleave.self_Tensor, [torch.tensor([True, False]), torch.tensor([2]), 0, None], "bool, a [1] count")
