/* Extra samples for the decomposition verifier (see decomp_samples.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "decomp_samples.h"
#include "runtime/internal.h"

static const tj_decomp_sample samples[] = {
    /* operators without a conformance case */
    {"aten::clamp.Tensor", "f32[3,4] f32[3,4] f32[4]", "both bounds, broadcast"},
    {"aten::clamp.Tensor", "f32[3,4] None f32[1,4]", "max only"},
    {"aten::clamp.Tensor", "i64[3,4]<9 i64[4]<3 f32[]", "promotion to float32"},
    {"aten::clamp.Tensor", "f32[4]{1,nan,3,-2} f32[4]{0,0,nan,0} f32[]{2}", "nan from self and from a bound"},
    {"aten::clamp", "f32[5]{1,nan,3,-2,0.5} 0.0 nan", "a nan bound with both bounds gives nan"},
    {"aten::clamp", "f32[5]{1,nan,3,-2,0.5} nan None", "a single nan bound is ignored"},
    {"aten::clamp", "i64[6]<9 2 5", "int64 stays int64"},
    {"aten::clamp", "i64[6]<9 2.5 None", "a float bound promotes int64 to float32"},
    {"aten::logaddexp", "f32[3,4] f32[4]", "broadcast"},
    {"aten::logaddexp", "f32[5]{inf,-inf,inf,1,-inf} f32[5]{inf,-inf,-inf,2,3}", "equal infinities"},
    {"aten::copy", "f32[3,4] f32[4] false", "broadcast source"},
    {"aten::copy", "f32[3,4] i64[3,4]<7 false", "converts the source"},
    {"aten::zero", "f32[3,4]", ""},
    {"aten::bitwise_and.Scalar", "i64[3,4]<9 6", ""},
    {"aten::bitwise_and.Scalar", "b[5] 2", "a bool self with an int Scalar: int64"},
    {"aten::bitwise_or.Scalar", "i64[3,4]<9 -8", ""},
    {"aten::bitwise_or.Scalar", "b[5] 4", "a bool self: int64"},
    {"aten::bitwise_xor.Scalar", "i64[3,4]<9 5", ""},
    {"aten::bitwise_xor.Scalar", "b[5] 1", "a bool self: int64"},
    {"aten::fill.Scalar", "f32[3,4] 2.5", ""},
    {"aten::fill.Scalar", "i64[3]<5 3", ""},
    {"aten::fill.Tensor", "f32[3,4] i64[]<9", "an int64 value into float32"},
    {"aten::fill.Tensor", "i64[2,3]<5 f64[]", "a float64 value truncated into int64"},
    {"aten::fill_.Tensor", "f32[3,4] f32[]", ""},
    {"aten::select_scatter", "f32[3,4] f32[4] 0 -1", ""},
    {"aten::select_scatter", "f32[3,4] f32[3] 1 2", ""},
    {"aten::diagonal_backward", "f32[3] [3,4] 1 0 1", "above the main diagonal"},
    {"aten::diagonal_backward", "f64[2,2] [3,2,4] -1 -1 0", "below it, negative dims, a batch dim kept"},
    {"aten::diagonal_backward", "f32[0] [3,4] 7 0 1", "an offset beyond the size: zeros"},
    {"aten::select_backward", "f32[4] [3,4] 0 -1", "the last row"},
    {"aten::select_backward", "f64[2,4] [2,3,4] -2 1", "a middle dim, negative"},
    {"aten::slice_backward", "f32[3,2] [3,5] 1 1 5 2", "every other column"},
    {"aten::slice_backward", "f32[2,4] [4,4] 0 -2 9223372036854775807 1", "negative start, to the end"},
    {"aten::slice_backward", "f32[0,4] [3,4] 0 5 9 1", "a start beyond the size: zeros"},
    {"aten::diag_embed", "f32[2,3] 0 -2 -1", "the default dims"},
    {"aten::diag_embed", "f64[2,3] -1 2 0", "below, swapped dims, the batch dim in the middle"},
    {"aten::diag_embed", "b[4] 2 0 1", "bool, above"},
    {"aten::diag", "f32[3] -2", "a vector below the main diagonal"},
    {"aten::diag", "i64[3,4]<9 1", "a matrix's diagonal above the main one"},
    {"aten::diag", "f32[3,2] -5", "an offset past the rows: empty"},
    {"aten::trace", "f32[3,4]", ""},
    {"aten::trace", "i64[5,2]<9", "int64"},
    {"aten::trace", "f64[0,3]", "empty: zero"},
    {"aten::constant_pad_nd", "f32[3,4] [1,2] 0.5", "last dim"},
    {"aten::constant_pad_nd", "f32[3,4] [-1,2,1,-2] 7", "crop and pad two dims"},
    {"aten::constant_pad_nd", "i64[3,4]<9 [1,1,1,1] 2.7", "float value into int64 truncates"},
    {"aten::constant_pad_nd", "f32[3,4] [-1,-1] 0", "only crops: a copy"},
    {"aten::constant_pad_nd", "f32[3,4] [0,0,1,0] -inf", "leading dim only"},
    {"aten::addcmul", "f32[3,4] f32[3,4] f32[1,4] 0.5", ""},
    {"aten::addcdiv", "f32[3,4] f32[3,4] f32[1,4] 0.5", ""},
    {"aten::lerp.Scalar", "f32[3,4] f32[3,4] 0.3", "weight below 0.5"},
    {"aten::lerp.Scalar", "f32[3,4] f32[4] 0.7", "weight above 0.5"},
    {"aten::add_.Tensor", "f32[3,4] f32[4] 2", ""},
    {"aten::add_.Scalar", "f32[3,4] 1.5 2", ""},
    {"aten::sub_.Tensor", "f32[3,4] f32[3,1] 1", ""},
    {"aten::mul_.Tensor", "f32[3,4] f32[4]", ""},
    {"aten::mul_.Scalar", "f32[3,4] 0.1", ""},
    {"aten::div_.Tensor", "f32[3,4] f32[3,4]", ""},
    {"aten::div_.Scalar", "f32[3,4] 3", ""},
    {"aten::sqrt_", "f32[3,4]", ""},
    {"aten::zero_", "f32[3,4]", ""},
    {"aten::fill_.Scalar", "f32[3,4] -1.5", ""},
    {"aten::addcmul_", "f32[3,4] f32[3,4] f32[4] 2", ""},
    {"aten::addcdiv_", "f32[3,4] f32[3,4] f32[4] -0.5", ""},
    {"aten::lerp_.Scalar", "f32[3,4] f32[3,4] 0.9", ""},
    {"aten::_fused_adamw_step", "f32[3,4] f32[3,4] f32[3,4] f32[3,4]{0.5,1,2,0.1,0.3,2.5,1,0.01,0.7,0.2,1.5,3} None f32[]{3} 0.001 0.9 0.999 0.01 1e-08", "step 3"},
    {"aten::_fused_adamw_step", "f32[2,3] f32[2,3] f32[2,3] f32[2,3]{1,0,2,0.5,0.25,4} f32[2,3]{2,0.5,nan,0,1,1} f32[]{1} 0.01 0.8 0.9 0.1 1e-08", "amsgrad, nan in max_exp_avg_sq"},
    {"aten::_fused_adamw_step", "f64[4] f64[4] f64[4] f64[4]{0.5,1,2,0.1} None f64[]{10} 0.1 0.5 0.75 0.0 0.001", "float64"},
    {"aten::_fused_sgd_step", "f32[3,4] f32[3,4] f32[3,4] 0.01 0.9 0.0 0.0 false false", "momentum"},
    {"aten::_fused_sgd_step", "f32[2,3] f32[2,3]{0.5,-1,nan,0,2,-0.25} f32[2,3] 0.1 0.8 0.3 0.01 false true", "dampening, weight decay, maximize, nan in grad"},
    {"aten::_fused_sgd_step", "f64[5] f64[5] f64[5] 0.05 0.9 0.0 0.001 true false", "nesterov, float64"},
    {"aten::_fused_sgd_step", "f32[4] f64[4] f32[4] 0.01 0.9 0.0 0.0 false false", "grad of another dtype: an error"},
    {"aten::add_.Tensor", "i64[3]<5 f32[3] 1", "in place cannot change the dtype: an error"},
    {"aten::add_.Tensor", "f32[3,1] f32[3,4] 1", "in place cannot broadcast self: an error"},
    {"aten::div.Tensor_mode", "f32[6]{7,-7,7,-7,1,0.3} f32[6]{2,2,-2,-2,0.1,0.1} 'floor'", "floor on the exact quotient"},
    {"aten::div.Tensor_mode", "f32[6]{7,-7,7,-7,1,0.3} f32[6]{2,2,-2,-2,0.1,0.1} 'trunc'", "trunc on the exact quotient"},
    {"aten::frac", "f32[3,4]", ""},
    {"aten::frac", "f64[8]{nan,inf,-inf,-0.0,2.5,-2.5,0.3,1e20}", "infinities give nan"},
    {"aten::trunc", "f32[8]{-0.5,0.5,-0.0,2.5,-7.9,inf,-inf,nan}", "signed zeros, infinities, nan"},
    {"aten::floor", "f32[8]{-0.5,0.5,-0.0,2.5,-7.9,inf,-inf,nan}", "signed zeros, infinities, nan"},
    {"aten::ceil", "f64[8]{-0.5,0.5,-0.0,2.5,-7.9,inf,-inf,nan}", "signed zeros, infinities, nan"},
    {"aten::floor", "i64[6]<9", "int64: a copy"},
    {"aten::remainder.Tensor", "f32[8]{5,-5,5,-5,0,-0.0,inf,3} f32[8]{3,3,-3,-3,2,2,2,inf}", "signs, zeros, infinities"},
    {"aten::remainder.Tensor", "i64[4]{7,-7,7,-7} i64[4]{2,2,-2,-2}", "int64 signs"},
    {"aten::remainder.Tensor", "f32[3,4] f64[]{-0.75}", "a 0-dim float64 divisor"},
    {"aten::remainder.Scalar", "f32[3,4] -0.75", "the sign of the divisor"},
    {"aten::remainder.Scalar", "i64[6]<9 -4", "int64"},
    {"aten::remainder.Scalar", "i64[6]<9 2.5", "a float Scalar promotes int64 to float32"},
    {"aten::remainder.Scalar", "i64[6]<9 0", "int64 division by zero: an error"},
    {"aten::fmod.Scalar", "f32[3,4] 0.3", "the sign of the dividend"},
    {"aten::fmod.Scalar", "i64[6]<9 -4", "int64"},
    {"aten::isnan", "f32[6]{nan,inf,-inf,0,-0.0,1}", ""},
    {"aten::isnan", "i64[4]<5", "int64: never"},
    {"aten::isinf", "f64[6]{nan,inf,-inf,0,-0.0,1}", ""},
    {"aten::isinf", "i64[4]<5", "int64: never"},
    {"aten::nan_to_num", "f32[6]{nan,inf,-inf,0,-0.0,1} None None None", "the dtype's extremes"},
    {"aten::nan_to_num", "f32[6]{nan,inf,-inf,0,-0.0,1} 1.5 1e300 -2.0", "1e300 overflows float32 to inf"},
    {"aten::nan_to_num", "i64[4]<5 1.5 None None", "int64: a copy"},
    {"aten::clamp_min", "f32[6]{nan,inf,-inf,0,-0.0,1} 0.0", "-0.0 stays -0.0"},
    {"aten::clamp_min", "f32[3,4] nan", "a nan bound gives nan"},
    {"aten::clamp_min", "i64[6]<9 2.5", "a float bound promotes int64 to float32"},
    {"aten::clamp_max", "f32[3,4] 0.25", ""},
    {"aten::clamp_max", "f32[3,4] nan", "a nan bound gives nan"},
    {"aten::exp2", "f32[3,4]", ""},
    {"aten::exp2", "i64[5]<9", "int64 computes in float32"},
    {"aten::div.Tensor_mode", "i64[4]{7,-7,7,-7} i64[4]{2,2,-2,-2} 'floor'", "integer floor division"},
    {"aten::ne.Scalar", "f32[5]{nan,1,0.5,-inf,2} 0.5", "nan is not equal"},
    {"aten::lt.Scalar", "f32[5]{nan,1,0.5,-inf,2} 0.5", ""},
    {"aten::lt.Scalar", "i64[6]<9 2.5", "int64 against a float compares in float32"},
    {"aten::le.Scalar", "f32[5]{nan,1,0.5,-inf,2} 0.5", "ties"},
    {"aten::le.Scalar", "i64[6]<9 4", ""},
    {"aten::ge.Scalar", "f32[5]{nan,1,0.5,inf,2} 0.5", "ties"},
    {"aten::ge.Scalar", "f64[3,4] nan", "a nan Scalar"},
    /* session 14 (opsA): where with Scalars, logical ops, sign, rsub, leaky_relu, softplus (square is
     * implicit since session 27: no kernel to verify against) */
    {"aten::where.ScalarOther", "b[3,4] f32[3,4] 0.5", ""},
    {"aten::where.ScalarOther", "b[3,1] i64[4]<9 2.5", "int64 with a float Scalar gives float32, broadcast"},
    {"aten::where.ScalarSelf", "b[3,4] -1 f64[4]", "an int Scalar keeps float64"},
    {"aten::where.Scalar", "b[2,3] 1.0 0", "two Scalars: float32"},
    {"aten::where.Scalar", "b[5] 3 -2", "two ints: int64"},
    {"aten::logical_not", "f32[6]{0,-0,nan,1,-inf,2}", "nan is true, -0 false"},
    {"aten::logical_not", "i64[6]<3", ""},
    {"aten::logical_and", "f32[6]{0,-0,nan,1,-inf,2} i64[6]{1,1,1,0,2,3}", "mixed dtypes"},
    {"aten::logical_or", "b[3,4] f32[4]{0,nan,1,0}", "broadcast"},
    {"aten::logical_xor", "i64[3,4]<2 b[3,1]", ""},
    {"aten::logical_and", "f32[3] f64[]{1e-300}", "the 0-dim float64 becomes float32 0"},
    {"aten::sign", "f32[7]{nan,-0,0,-2,3,inf,-inf}", "nan and -0 give +0"},
    {"aten::sign", "i64[6]{-5,0,7,-1,1,2}", ""},
    {"aten::sign", "b[4]", "bool is the identity"},
    {"aten::rsub.Tensor", "f32[3,4] f32[4] 2", "other - 2 self, broadcast"},
    {"aten::rsub.Tensor", "i64[5]<9 i64[5]<9 3", ""},
    {"aten::rsub.Scalar", "i64[4]<9 2.5 1", "int64 with a float Scalar gives float32"},
    {"aten::rsub.Scalar", "f64[3,4] 1 0.5", ""},
    {"aten::leaky_relu", "f32[7]{nan,-0,0,-2,3,inf,-inf} 0.01", "nan, zeros, infinities"},
    {"aten::leaky_relu", "f64[3,4] -0.2", "a negative slope"},
    {"aten::softplus", "f32[7]{nan,-0,-30,-2,3,25,inf} 1 20", "beyond the threshold self"},
    {"aten::softplus", "f64[3,4] 2.5 1.5", ""},
    {"aten::leaky_relu_backward", "f32[6] f32[6]{nan,-0,0,-2,3,-inf} 0.1 false", ""},
    {"aten::leaky_relu_backward", "f32[3,4] f64[4] 0.3 true", "broadcast and promotion"},
    {"aten::softplus_backward", "f32[7] f32[7]{nan,-0,-30,-2,3,25,inf} 1 20", ""},
    {"aten::softplus_backward", "f64[3,4] f64[3,4] 0.5 2", ""},
    /* session 15 (opsC): elu, index_select, index_add */
    {"aten::elu", "f32[7]{nan,-0,0,-2,3,inf,-inf} 1 1 1", "nan, zeros, infinities"},
    {"aten::elu", "f32[3,4] 0.3 1.0507 1.5", "alpha * scale rounded in float32"},
    {"aten::elu", "f64[3,4] -0.7 2 0.5", "a negative alpha"},
    {"aten::elu_backward", "f32[6] 1 1 1 false f32[6]{nan,-0,0,-2,3,-inf}", ""},
    {"aten::elu_backward", "f32[3,4] 0.3 1.0507 1.5 false f64[4]", "broadcast and promotion"},
    {"aten::elu_backward", "f64[3,4] 0.7 2 0.5 true f64[3,4]", "is_result"},
    {"aten::index_select", "f32[4,3] 0 i64[5]{3,0,0,2,1}", "repeats"},
    {"aten::index_select", "f64[2,3,4] -1 i64[]{2}", "a 0-dim index, negative dim"},
    {"aten::index_select", "i64[3,5]<9 1 i64[0]", "an empty index"},
    {"aten::index_select", "f32[] 0 i64[2]{0,0}", "0-dim self"},
    {"aten::index_add", "f32[4,3] 0 i64[5]{3,0,0,2,3} f32[5,3] 1", "repeated indices accumulate in order"},
    {"aten::index_add", "f64[2,3,4] 1 i64[2]{2,0} f64[2,2,1] 0.5", "broadcast source, alpha"},
    {"aten::index_add", "i64[3,4]<9 -1 i64[3]{1,1,3} i64[3,3]<9 2", "int64, negative dim"},
    {"aten::index_add", "f32[] 0 i64[]{0} f32[] 3", "0-dim"},
    /* session 16 (convops): adaptive average pooling */
    {"aten::_adaptive_avg_pool2d", "f32[2,3,7,5] [3,2]", "windows of uneven length in both dims"},
    {"aten::_adaptive_avg_pool2d", "f32[2,3,8,6] [4,3]", "sizes divide: avg_pool2d"},
    {"aten::_adaptive_avg_pool2d", "f32[1,2,6,5] [3,2]", "divides in H only"},
    {"aten::_adaptive_avg_pool2d", "f32[1,2,5,4] [2,3]", "overlapping windows of one length in H"},
    {"aten::_adaptive_avg_pool2d", "f64[3,5,7] [2,3]", "unbatched, float64"},
    {"aten::_adaptive_avg_pool2d", "f32[1,2,4,3] [7,5]", "output larger than input: windows repeat"},
    {"aten::_adaptive_avg_pool2d", "f32[1,1,3,3]{nan,1,2,inf,3,4,-inf,5,6} [2,2]", "nan and infinities"},
    {"aten::_adaptive_avg_pool2d", "f32[2,0,4,5] [2,3]", "empty channels"},
    {"aten::_adaptive_avg_pool2d", "f32[1,2,4,5] [0,2]", "no output rows"},
    {"aten::_adaptive_avg_pool2d", "i64[1,2,4,4]<5 [2,2]", "int64: an error"},
    {"aten::_adaptive_avg_pool2d", "f32[4,4] [2,2]", "2-d: an error"},
    {"aten::_adaptive_avg_pool2d", "f32[1,2,4,4] [2,-1]", "negative output size: an error"},
    {"aten::_adaptive_avg_pool2d_backward", "f32[2,3,3,2] f32[2,3,7,5]", "windows of uneven length"},
    {"aten::_adaptive_avg_pool2d_backward", "f32[2,3,4,3] f32[2,3,8,6]", "sizes divide"},
    {"aten::_adaptive_avg_pool2d_backward", "f64[5,2,3] f64[5,7,7]", "unbatched, float64"},
    {"aten::_adaptive_avg_pool2d_backward", "f32[1,2,7,5] f32[1,2,4,3]", "output larger than input"},
    {"aten::_adaptive_avg_pool2d_backward", "f32[1,1,2,2]{nan,1,inf,-2} f32[1,1,3,3]", "nan and inf gradients"},
    {"aten::_adaptive_avg_pool2d_backward", "f32[0,3,2,2] f32[0,3,4,5]", "empty batch"},
    {"aten::_adaptive_avg_pool2d_backward", "f32[2,3,2,2] f64[2,3,4,5]", "mixed dtypes: an error"},
    {"aten::_adaptive_avg_pool2d_backward", "f32[1,3,2,2] f32[2,3,4,5]", "another batch size: an error"},
    /* semantic traps */
    {"aten::addmm", "f32[2,3]{nan,1,2,inf,nan,-inf} f32[2,4] f32[4,3] 0 1", "beta = 0 ignores nan and inf in self"},
    {"aten::addmm", "f32[3] f32[2,4] f32[4,3] 0.5 2", "beta and alpha, broadcast self"},
    {"aten::var.correction", "f32[3,4] [1] None false", "correction None means 1"},
    {"aten::var.correction", "f32[3,4] [1] 4 false", "correction = N divides by 0"},
    {"aten::var.correction", "f32[3,4] [1] 6 true", "correction > N divides by max(0, N - correction)"},
    {"aten::var.correction", "f32[0,4] [0] None false", "empty gives nan"},
    {"aten::var_mean.correction", "f32[3,4] None None false", "every dim, correction None"},
    {"aten::var_mean.correction", "f32[3,4] [0] 7 true", "correction > N"},
    {"aten::var_mean.correction", "f32[0,4] [0] 0 false", "empty gives nan"},
    {"aten::nll_loss_forward", "f32[3,4] i64[3]{-100,-100,-100} None 1 -100", "every target ignored: mean nan"},
    {"aten::nll_loss_forward", "f32[3,4] i64[3]{7,1,7} f32[4] 1 7", "a custom ignore_index out of range is never read"},
    {"aten::nll_loss_forward", "f32[3,4] i64[3]{-100,2,1} f32[4] 0 -100", "reduction none, ignored gives 0"},
    {"aten::nll_loss_forward", "f32[4] i64[]{-100} None 2 -100", "1-d input, ignored target"},
    {"aten::nll_loss_backward", "f32[] f32[3,4] i64[3]{-100,-100,-100} None 1 -100 f32[]{0}",
     "every target ignored: zero gradient"},
    {"aten::nll_loss_backward", "f32[] f32[3,4] i64[3]{7,1,7} f32[4] 1 7 f32[]{2}", "custom ignore_index out of range"},
    {"aten::nll_loss_backward", "f32[3] f32[3,4] i64[3]{-100,2,1} None 0 -100 f32[]{2}", "reduction none"},
    {"aten::binary_cross_entropy", "f32[6]{0,1,0.5,1e-30,0.999,1} f32[6]{0,1,0.3,1,0,0} None 0", "log clamped at -100"},
    {"aten::binary_cross_entropy", "f32[2,3]{0.1,0.2,0.3,0.4,0.5,0.6} f32[3]{0,0.5,1} f32[2,1]{2,0.5} 1", "weighted mean, broadcasting"},
    {"aten::binary_cross_entropy", "f64[4]{0.25,0.75,0,1} f64[4]{1,1,0,0} None 2", "sum"},
    {"aten::binary_cross_entropy_backward", "f32[] f32[4]{0.2,0.5,1e-9,0.999} f32[4]{0,1,0.5,1} None 1", "mean"},
    {"aten::binary_cross_entropy_backward", "f32[2,2] f32[2,2]{0.2,0.5,0.9,0.01} f32[2,2]{0,1,0.5,1} f32[2]{2,3} 0",
     "none, weighted"},
    /* session 16 (lossact): hard activations, smooth L1 / Huber losses */
    {"aten::hardtanh", "f32[9]{nan,-inf,-1.5,-1,-0.5,0,1,2,inf} -1 1", "nan, infinities, at the bounds"},
    {"aten::hardtanh", "f64[3,4] -0.25 0.5", ""},
    {"aten::hardtanh", "i64[6]<9 1.5 6.7", "int64 truncates the bounds"},
    {"aten::hardtanh", "f32[5] 1.0 -1.0", "min_val above max_val gives max_val"},
    {"aten::hardtanh", "f32[5] nan 1.0", "a nan bound gives nan"},
    {"aten::hardtanh", "b[3] -1 1", "bool: an error"},
    {"aten::hardsigmoid", "f32[9]{nan,-inf,-4,-3,-1,0,3,4,inf}", "nan, infinities, the kinks"},
    {"aten::hardsigmoid", "f64[3,4]", ""},
    {"aten::hardsigmoid", "i64[3]<5", "int64: an error"},
    {"aten::hardswish", "f32[9]{nan,-inf,-4,-3,-1,0,3,4,inf}", "nan, infinities, the kinks"},
    {"aten::hardswish", "f64[3,4]", ""},
    {"aten::hardtanh_backward", "f32[9] f32[9]{nan,-inf,-1.5,-1,-0.5,0,1,2,inf} -1 1", "0 at both bounds, nan lets grad through"},
    {"aten::hardtanh_backward", "f32[3,4] f64[4] -0.5 0.5", "broadcast and promotion"},
    {"aten::hardtanh_backward", "f32[4] f32[4]{-2,0,0.5,2} nan 1", "a nan bound"},
    {"aten::hardsigmoid_backward", "f32[7] f32[7]{nan,-3,-2.9,0,2.9,3,inf}", "0 at -3 and 3"},
    {"aten::hardsigmoid_backward", "f64[3,4] f64[3,4]", "1/6 rounded to float32"},
    {"aten::hardswish_backward", "f32[8] f32[8]{nan,-inf,-3.5,-3,0,3,3.5,inf}", "the kinks, nan keeps grad"},
    {"aten::hardswish_backward", "f64[3,4] f32[3,1]", "broadcast and promotion"},
    {"aten::smooth_l1_loss", "f32[3,4] f32[3,4] 0 1.0", ""},
    {"aten::smooth_l1_loss", "f32[3,1] f32[4] 1 0.5", "broadcast, mean"},
    {"aten::smooth_l1_loss", "f32[5]{0,1,-2,nan,inf} f32[5]{0,0.5,0,0,0} 2 0.0", "beta 0: the l1 loss, sum"},
    {"aten::smooth_l1_loss", "f32[3,4] f64[3,4] 1 2.5", "promotion to float64"},
    {"aten::smooth_l1_loss", "f32[0,3] f32[0,3] 1 1.0", "empty mean: nan"},
    {"aten::smooth_l1_loss", "f32[3] f32[3] 1 -0.5", "negative beta: an error"},
    /* session 20 (fxparity): composites that make_fx records as torch does */
    {"aten::stack", "(f32[2,3];f32[2,3];f32[2,3]) 0", ""},
    {"aten::stack", "(f32[2,3];f64[2,3]) -1", "the new last dim, promotion to float64"},
    {"aten::stack", "(i64[]{3};i64[]{-4}) 0", "0-dim int64"},
    {"aten::stack", "(f32[2,3];f32[3,2]) 1", "shapes differ: an error"},
    {"aten::mse_loss", "f32[3,4] f32[3,4] 0", ""},
    {"aten::mse_loss", "f32[3,1] f32[4] 1", "broadcast, mean"},
    {"aten::mse_loss", "f32[5]{0,1,-2,nan,inf} f32[5]{0,0.5,0,0,0} 2", "nan, inf, sum"},
    {"aten::mse_loss", "f32[3,4] f64[3,4] 1", "promotion to float64"},
    {"aten::mse_loss", "f32[0,3] f32[0,3] 1", "empty mean: nan"},
    {"aten::mse_loss", "i64[3]<5 i64[3]<5 1", "int64: an error"},
    {"aten::mse_loss_backward", "f32[] f32[3,4] f32[3,4] 1", "mean"},
    {"aten::mse_loss_backward", "f32[3,4] f32[3,4] f32[4] 0", "none, broadcast target"},
    {"aten::mse_loss_backward", "f64[] f32[3,4] f32[3,4] 2", "float64 grad, float32 result"},
    {"aten::huber_loss", "f32[3,4] f32[3,4] 0 1.0", ""},
    {"aten::huber_loss", "f32[3,1] f32[4] 1 0.5", "broadcast, mean"},
    {"aten::huber_loss", "f32[5]{0,1,-2,nan,inf} f32[5]{0,0.5,0,0,0} 2 2.0", "nan, inf, sum"},
    {"aten::huber_loss", "f32[3,4] f64[3,4] 0 0.7", "computed in float64, float32 result"},
    {"aten::huber_loss", "f32[3] f32[3] 1 0.0", "delta 0: an error"},
    {"aten::smooth_l1_loss_backward", "f32[] f32[3,4] f32[3,4] 1 1.0", "mean"},
    {"aten::smooth_l1_loss_backward", "f32[5] f32[5]{0,1,-1,0.25,nan} f32[5]{0,0,0,0,0} 0 0.0", "beta 0: -grad at x = 0"},
    {"aten::smooth_l1_loss_backward", "f64[3,4] f32[3,4] f32[4] 0 0.5", "promoted, self's dtype"},
    {"aten::huber_loss_backward", "f32[] f32[3,4] f32[3,4] 2 1.0", "sum"},
    {"aten::huber_loss_backward", "f32[5] f32[5]{-1,1,-0.5,0.5,nan} f32[5]{0,0,0,0,0} 0 1.0", "at -delta and delta, nan"},
    {"aten::huber_loss_backward", "f32[] f32[3,4] f32[1,4] 1 0.5", "broadcast target, mean over self"},
    {"aten::binary_cross_entropy_backward", "f32[2,1] f32[2,2]{0.2,0.7,0.9,0.4} f32[2,2]{0,1,1,0} None 0",
     "grad_output [2, 1] pairs with self's columns (ATen squeezes both)"},
    {"aten::binary_cross_entropy_backward", "f32[2,2] f32[2,1,2]{0.2,0.7,0.9,0.4} f32[2,1,2]{0,1,1,0} f32[2] 0",
     "grad_output without self's size-1 dim"},
    {"aten::binary_cross_entropy_backward", "f32[1,1] f32[2]{0.2,0.7} f32[2]{0,1} None 1", "a [1, 1] grad_output"},
    {"aten::_log_softmax", "f32[2,3]{0,-200,-1000,5,4,-90} 1 false", "entries far below the row max stay finite"},
    {"aten::_log_softmax", "f32[2,3]{-inf,-inf,-inf,1,-inf,2} 1 false", "an all -inf row"},
    {"aten::logsumexp", "f32[2,3]{-inf,-inf,-inf,1,-inf,2} [1] false", "an all -inf row gives -inf"},
    {"aten::logsumexp", "f32[2,3]{inf,1,2,1e30,1e30,1e30} [1] true", "+inf and huge values"},
    {"aten::native_layer_norm", "f32[3,8]{3,3,3,3,3,3,3,3,-7,-7,-7,-7,-7,-7,-7,-7,1e4,1e4,1e4,1e4,1e4,1e4,1e4,1e4} [8] "
                                "None None 1e-5",
     "constant rows"},
    {"aten::native_layer_norm",
     "f32[2,4]{10000.5,10001,10000,10001.5,-50000.25,-50000,-50000.5,-50000.75} [4] f32[4] f32[4] 1e-5",
     "rows with a large offset"},
    {"aten::native_batch_norm", "f32[4,3,5] f32[3] f32[3] f32[3] f32[3]{1,2,0.5} true 0.1 1e-5", "training, [N, C, L]"},
    {"aten::native_batch_norm", "f32[4,3,2,2] f32[3] f32[3] f32[3] f32[3]{1,2,0.5} false 0.1 1e-5", "evaluation"},
    {"aten::native_batch_norm", "f32[6,3] None None None None true 0.1 1e-5", "[N, C] without weight, bias, stats"},
    {"aten::native_batch_norm", "f64[2,2,3]{1e4,1e4,1e4,5,6,7,10001,10002,10003,8,9,10} None None None None true 0.1 1e-5",
     "a large offset, float64"},
    {"aten::native_batch_norm", "f32[4,2]{1.5,2,1.5,-1,1.5,4,1.5,0.5} f32[2] f32[2] f32[2] f32[2]{1,2} true 0.1 0",
     "eps 0 and a constant channel: invstd 0 (ATen's InvStd)"},
    {"aten::native_batch_norm", "f32[4,2]{-1,2,1,-1,2,4,0,1} f32[2] f32[2] f32[2]{1,-1} f32[2]{0,0} false 0.1 0",
     "evaluation with running_var 0 and eps 0: ATen's infinities"},
    {"aten::native_batch_norm", "f32[3,2]{1,inf,inf,-1,2,-inf} None None f32[2] f32[2]{1,2} true 0.1 1e-5",
     "infinities: mean inf or nan, variance nan"},
    {"aten::_native_batch_norm_legit_functional", "f32[4,3,2,2] f32[3] f32[3] f32[3] f32[3]{1,2,0.5} true 0.1 1e-5",
     "training"},
    {"aten::native_batch_norm_backward",
     "f32[4,3,5] f32[4,3,5] f32[3] None None f32[3] f32[3]{1,2,0.5} true 1e-5 [true,true,true]", "training"},
    {"aten::native_batch_norm_backward",
     "f32[4,3,5] f32[4,3,5] None f32[3] f32[3]{1,2,0.5} None None false 1e-5 [true,false,true]", "evaluation"},
    {"aten::native_group_norm", "f32[2,6,5] f32[6] f32[6] 2 6 5 3 1e-5", ""},
    {"aten::native_group_norm", "f64[2,4,2,2] None None 2 4 4 2 1e-5", "float64, no weight or bias"},
    {"aten::native_group_norm", "f32[24] f32[6] f32[6] 2 6 2 3 1e-5", "a 1-D input read as [N, C, HxW]"},
    {"aten::native_group_norm", "f32[2,6,2] None None 1 6 4 3 1e-5", "[2, 6, 2] read as N 1, HxW 4"},
    {"aten::native_group_norm_backward",
     "f32[2,6,5] f32[2,6,5] f32[2,3] f32[2,3]{1,2,0.5,3,1.5,0.7} f32[6] 2 6 5 3 [true,true,true]", ""},
    {"aten::gelu", "f32[8]{-6,-3,-1,-0.1,0,0.1,1,3} 'tanh'", "tanh approximation in float32"},
    {"aten::gelu_backward", "f32[8] f32[8]{-6,-3,-1,-0.1,0,0.1,1,3} 'tanh'", "tanh approximation in float32"},
    {"aten::_softmax", "f32[2,3]{-inf,-inf,-inf,1,-inf,2} 1 false", "an all -inf row gives nan"},
    /* full reductions, argmin / min.dim, std (session 14) */
    {"aten::mean", "f32[3,4] None", ""},
    {"aten::mean", "i64[2,3]<9 float64", "int64 with a float dtype"},
    {"aten::mean", "f32[0,3] None", "empty gives nan"},
    {"aten::max", "f32[3,4]", ""},
    {"aten::max", "f32[5]{1,nan,3,-inf,nan}", "nan propagates"},
    {"aten::max", "i64[2,3]<9", ""},
    {"aten::max", "f32[0]", "empty: an error"},
    {"aten::min", "f32[3,4]", ""},
    {"aten::min", "f64[5]{1,-0.0,nan,-inf,2}", "nan propagates"},
    {"aten::min", "b[4]", "bool"},
    {"aten::min.dim", "f32[3,4] 1 false", ""},
    {"aten::min.dim", "f32[2,3]{2,1,1,nan,0,nan} -1 true", "ties take the first index, nan the first nan"},
    {"aten::min.dim", "i64[3,4]<3 0 false", "int64 ties"},
    {"aten::argmin", "f32[3,4] 0 false", ""},
    {"aten::argmin", "f32[2,3]{2,1,1,0,nan,nan} None false", "flattened, first nan"},
    {"aten::argmin", "i64[3,4]<3 -1 true", "int64 ties"},
    {"aten::std.correction", "f32[3,4] [1] None false", "correction None means 1"},
    {"aten::std.correction", "f32[3,4] None 0 true", "every dim, population"},
    {"aten::std.correction", "f32[3,4] [0] 5 false", "correction > N"},
    {"aten::std.correction", "f32[0,4] [0] None false", "empty gives nan"},
    /* sorting (session 15) */
    {"aten::sort.stable", "f32[3,4]<3 true 1 false", "ties keep their order"},
    {"aten::sort.stable", "f32[6]{1,nan,-0.0,0,-inf,nan} None 0 true", "nan first descending, signed zeros tie"},
    {"aten::sort.stable", "i64[4,3]<2 false 0 true", "int64 along dim 0"},
    {"aten::topk", "f32[3,4] 2 1 true true", ""},
    {"aten::topk", "f32[6]{1,nan,-0.0,0,-inf,nan} 3 0 true true", "nan counts as the largest"},
    {"aten::topk", "f64[4,3]<3 2 0 false true", "smallest, ties"},
    {"aten::topk", "i64[5]<9 0 -1 true false", "k = 0"},
    {"aten::topk", "f32[] 1 0 true true", "0-dim"},
    {"aten::topk", "f32[3,4] 5 1 true true", "k past the size: an error"},
    {"aten::linalg_vector_norm", "f32[3,4] 2 None false None", "2-norm of everything"},
    {"aten::linalg_vector_norm", "f32[3,4] 1 [1] true None", ""},
    {"aten::linalg_vector_norm", "f32[3,4] inf [0] false None", ""},
    {"aten::linalg_vector_norm", "f32[3,4] -inf [-1] false None", ""},
    {"aten::linalg_vector_norm", "f32[6]{0,-0,nan,1,-2,0} 0 None false None", "count of non-zeros, nan counts"},
    {"aten::linalg_vector_norm", "f32[2,3] 3.5 [0,1] false float64", "general p, wider dtype"},
    {"aten::linalg_vector_norm", "f64[2,3] -1.5 [1] false None", "negative p"},
    {"aten::linalg_vector_norm", "f32[0,3] 2 [0] false None", "empty: 0"},
    {"aten::linalg_vector_norm", "f32[0,3] inf [0] false None", "empty inf norm: an error"},
    /* session 17 (trirep): tril, triu, repeat */
    {"aten::tril", "f32[4,5] 0", ""},
    {"aten::tril", "f64[2,3,4] -1", "batched, below the diagonal"},
    {"aten::tril", "i64[3,4]<9 2", "int64"},
    {"aten::tril", "b[4,3] 1", "bool"},
    {"aten::tril", "f32[2,3]{nan,-0,inf,-inf,nan,-0} 0", "nan, -0 and infinities kept or zeroed"},
    {"aten::tril", "f32[3,4] 9223372036854775807", "a huge diagonal keeps everything"},
    {"aten::tril", "f32[3,4] -9223372036854775808", "a huge negative one keeps nothing"},
    {"aten::tril", "f32[5] 0", "1-d: an error"},
    {"aten::triu", "f32[4,5] 0", ""},
    {"aten::triu", "f64[2,4,3] 1", "batched, above the diagonal"},
    {"aten::triu", "i64[3,4]<9 -2", "int64"},
    {"aten::triu", "b[3,3] 0", "bool"},
    {"aten::triu", "f32[3,4] -9223372036854775808", "a huge negative diagonal keeps everything"},
    {"aten::triu", "f32[] 0", "0-dim: an error"},
    {"aten::tril_", "f32[3,4] 1", ""},
    {"aten::triu_", "f64[2,3,4] -1", "batched"},
    {"aten::index_put_", "f32[3,4] (i64[6]<3) f32[6,4] true", "repeated rows summed"},
    {"aten::index_put_", "f64[2,3,4] (None;i64[2,2]{0,2,-1,1}) f64[4] false", "a None entry, values broadcast"},
    {"aten::repeat", "f32[2,3] [2,3]", ""},
    {"aten::repeat", "f32[3] [2,1,2]", "new leading dims"},
    {"aten::repeat", "i64[2,3]<9 [1,1]", "all ones: a copy"},
    {"aten::repeat", "b[2,3] [0,2]", "a zero repeat: empty"},
    {"aten::repeat", "f32[] [3,2]", "0-dim self"},
    {"aten::repeat", "f64[] []", "0-dim self, no repeats"},
    {"aten::repeat", "f32[2,3,2,2,2] [2,1,3,2,2]", "past 8 dims in one copy: a copy per repeated dim"},
    {"aten::repeat", "f32[0,3] [-2,2]", "a negative repeat of an empty dim gives 0"},
    {"aten::repeat", "f32[2,3] [2]", "fewer repeats than dims: an error"},
    {"aten::repeat", "f32[2,3] [2,-1]", "a negative repeat: an error"},
    /* session 19: roll */
    {"aten::roll", "f32[3,4] [1,-2] [0,1]", "two dims"},
    {"aten::roll", "f32[3,4] [7] []", "no dims: the flattened self"},
    {"aten::roll", "i64[2,3,4]<9 [5,-1,2] [2,0,2]", "a dim twice"},
    {"aten::roll", "b[5] [-9223372036854775808] [0]", "the most negative shift"},
    {"aten::roll", "f64[] [3] []", "0-dim self"},
    {"aten::roll", "f32[0,3] [1] [5]", "empty self: dims unchecked"},
    {"aten::roll", "f32[3,4] [1,2] []", "two shifts without dims: an error"},
    {"aten::roll", "f32[3,4] [1] [2]", "dim out of range: an error"},
    /* all / any (session 17) */
    {"aten::all", "f32[3,4]", ""},
    {"aten::all", "f32[6]{1,nan,-0.0,2,inf,-3}", "-0 is false, nan true"},
    {"aten::all", "f64[4]{1,nan,0.5,-inf}", "nan and infinities are true"},
    {"aten::all", "i64[2,3]<3", "int64"},
    {"aten::all", "b[2,3]", "bool"},
    {"aten::all", "f32[0,3]", "empty: true"},
    {"aten::any", "f32[6]{0,-0.0,0,0,nan,0}", "nan is true"},
    {"aten::any", "f64[4]{0,-0.0,0,0}", "only zeros: false"},
    {"aten::any", "i64[2,3]<2", "int64"},
    {"aten::any", "f32[3]{1.5,-1.5,0}", "non-zeros adding up to 0: true"},
    {"aten::any", "b[5]", "bool"},
    {"aten::any", "f32[0]", "empty: false"},
    {"aten::all.dim", "f32[2,3]{1,0,2,nan,3,-1} 1 false", ""},
    {"aten::all.dim", "i64[3,4]<2 0 true", "int64, keepdim"},
    {"aten::all.dim", "b[3,4] -1 false", "bool"},
    {"aten::all.dim", "f32[0,3] 0 false", "empty dim: true"},
    {"aten::all.dim", "f32[] 0 true", "0-dim"},
    {"aten::all.dim", "f32[3,4] 2 false", "dim out of range: an error"},
    {"aten::any.dim", "f32[2,3]{0,0,-0.0,nan,0,0} 0 false", "nan is true"},
    {"aten::any.dim", "f64[3,4] -1 true", "keepdim"},
    {"aten::any.dim", "i64[2,3]{2,-2,0,0,0,0} 1 false", "int64 adding up to 0: true"},
    {"aten::any.dim", "b[3,4] 0 true", "bool"},
    {"aten::any.dim", "f32[3,0] 1 true", "empty dim: false"},
    {"aten::any.dim", "f32[3,4] -3 false", "dim out of range: an error"},
    /* session 19 (upsample): pixel_shuffle, pixel_unshuffle */
    {"aten::pixel_shuffle", "f32[2,8,3,4] 2", "4-d"},
    {"aten::pixel_shuffle", "f64[9,2,3] 3", "unbatched, float64"},
    {"aten::pixel_shuffle", "i64[2,1,4,1,2]<9 2", "two batch dims, int64"},
    {"aten::pixel_shuffle", "f32[1,4,1,1]{nan,inf,-inf,-0} 2", "nan, infinities, a 1 x 1 plane"},
    {"aten::pixel_shuffle", "f32[2,3,4,5] 1", "factor 1: a copy"},
    {"aten::pixel_shuffle", "f32[0,4,2,2] 2", "empty batch"},
    {"aten::pixel_shuffle", "f32[1,5,2,2] 2", "channels not divisible: an error"},
    {"aten::pixel_shuffle", "f32[4,2] 2", "2-d: an error"},
    {"aten::pixel_shuffle", "f32[1,4,2,2] 0", "factor 0: an error"},
    {"aten::pixel_unshuffle", "f32[2,3,4,6] 2", "4-d"},
    {"aten::pixel_unshuffle", "f64[2,6,9] 3", "unbatched, float64"},
    {"aten::pixel_unshuffle", "b[2,1,1,2,2] 2", "two batch dims, bool"},
    {"aten::pixel_unshuffle", "f32[1,1,2,2]{nan,inf,-inf,-0} 2", "nan, infinities"},
    {"aten::pixel_unshuffle", "f32[0,2,4,4] 2", "empty batch"},
    {"aten::pixel_unshuffle", "f32[1,2,3,4] 2", "height not divisible: an error"},
    {"aten::pixel_unshuffle", "f32[1,2,4,4] -1", "negative factor: an error"},
    /* session 21 (inplace21): the new overloads, and in-place forms whose
     * out-of-place partner is a primitive (no sample or case of its own) */
    {"aten::clamp_min.Tensor", "f32[3,4] f32[4]", "broadcast bound"},
    {"aten::clamp_min.Tensor", "f32[4]{1,nan,3,-2} f32[4]{0,0,nan,0}", "nan from self and from the bound"},
    {"aten::clamp_min.Tensor", "i64[6]<9 f32[]{2.5}", "promotion to float32"},
    {"aten::clamp_max.Tensor", "f32[3,4] f32[3,1]", "broadcast bound"},
    {"aten::clamp_max.Tensor", "f64[4]{1,nan,3,-2} f64[4]{0,0,nan,0}", "nan from self and from the bound"},
    {"aten::clamp_min_.Tensor", "f32[3,4] f32[4]", ""},
    {"aten::clamp_min_.Tensor", "i64[6]<9 f32[6]", "a float bound into int64 self: an error"},
    {"aten::clamp_max_.Tensor", "f32[3,4] f32[3,1]", ""},
    {"aten::clamp_max_.Tensor", "f32[3,1] f32[3,4]", "in place cannot broadcast self: an error"},
    {"aten::remainder.Scalar_Tensor", "5 i64[6]{2,3,-4,7,-1,5}", "int64"},
    {"aten::remainder.Scalar_Tensor", "5.5 i64[6]{2,3,-4,7,-1,5}", "a float Scalar gives float32"},
    {"aten::remainder.Scalar_Tensor", "-3 f64[3,4]", "float64 other"},
    {"aten::remainder.Scalar_Tensor", "5 i64[3]{1,0,2}", "int64 division by zero: an error"},
    {"aten::round.decimals", "f32[6]{1234.5678,-2.5,0.125,15,25,nan} 2", "two decimals"},
    {"aten::round.decimals", "f32[6]{1234.5678,-2.5,0.125,15,25,-inf} -1", "tens"},
    {"aten::round.decimals", "f64[3,4] 3", ""},
    {"aten::round.decimals", "f32[3,4] 0", "decimals 0 is round"},
    {"aten::round.decimals", "i64[4]<9 1", "int64: an error"},
    {"aten::round_.decimals", "f32[3,4] 1", ""},
    {"aten::round_", "f32[8]{-0.5,0.5,1.5,2.5,-7.9,inf,-inf,nan}", "halves to even"},
    {"aten::round_", "i64[4]<9", ""},
    {"aten::asin_", "f32[3,4]", ""},
    {"aten::acos_", "f64[3,4]", ""},
    {"aten::atan_", "f32[3,4]", ""},
    {"aten::sinh_", "f32[3,4]", ""},
    {"aten::cosh_", "f32[3,4]", ""},
    {"aten::log2_", "f32[3,4]", ""},
    {"aten::log10_", "f32[3,4]", ""},
    {"aten::log2_", "i64[4]<9", "a float result into int64 self: an error"},
    {"aten::atan2_", "f32[3,4] f32[4]", ""},
    {"aten::atan2_", "f32[3,4] f64[3,4]", "computed in float64, rounded into self"},
    {"aten::fmod_.Tensor", "f32[3,4] f32[4]{0.5,-0.75,2,-3}", ""},
    {"aten::fmod_.Tensor", "i64[6]<9 i64[6]{2,-3,4,5,-2,3}", "int64"},
    /* lerp.Tensor, masked_fill.Tensor, div.Scalar_mode and their in-place forms */
    {"aten::lerp.Tensor", "f32[3,4] f32[3,4] f32[3,4]", "weights on both sides of 0.5"},
    {"aten::lerp.Tensor", "f32[3,4] f32[4] f32[3,1]", "broadcast"},
    {"aten::lerp.Tensor", "f64[6]{1,nan,3,-2,0,5} f64[6]{0,0,nan,4,inf,1} f64[6]{0.5,-0.5,0.25,nan,0.75,1}", "nan, inf, weights at +-0.5"},
    {"aten::lerp.Tensor", "f32[3] f32[3] f64[3]", "a weight of another dtype: an error"},
    {"aten::lerp.Tensor", "i64[3]<5 i64[3]<5 i64[3]<5", "int64: an error"},
    {"aten::lerp_.Tensor", "f32[3,4] f32[4] f32[3,4]", ""},
    {"aten::lerp_.Tensor", "f32[4] f32[3,4] f32[4]", "in place cannot broadcast self: an error"},
    {"aten::masked_fill.Tensor", "f32[3,4] b[3,4] f32[]{2.5}", ""},
    {"aten::masked_fill.Tensor", "i64[3,4]<9 b[4] f64[]{-7.5}", "a float value into int64 truncates"},
    {"aten::masked_fill.Tensor", "f32[3] b[3,1] b[]{1}", "broadcast mask, bool value"},
    {"aten::masked_fill.Tensor", "f32[3,4] b[4] f32[1]{2}", "a 1-d value: an error"},
    {"aten::masked_fill.Tensor", "f32[3,4] i64[4]<2 f32[]{2}", "an int64 mask: an error"},
    {"aten::masked_fill_.Tensor", "f32[3,4] b[3,1] f32[]{-inf}", ""},
    {"aten::div.Scalar_mode", "f32[6]{7,-7,7,-7,1,0.3} 2 'floor'", ""},
    {"aten::div.Scalar_mode", "f32[6]{7,-7,7,-7,1,0.3} 0.1 'floor'", "floor on the exact quotient"},
    {"aten::div.Scalar_mode", "f32[6]{7,-7,7,-7,1,0.3} -0.1 'trunc'", "trunc on the exact quotient"},
    {"aten::div.Scalar_mode", "i64[6]{7,-7,7,-7,1,0} 2 'floor'", "integer floor division"},
    {"aten::div.Scalar_mode", "i64[6]{7,-7,7,-7,1,0} -2 'trunc'", "integer trunc division"},
    {"aten::div.Scalar_mode", "i64[6]{7,-7,7,-7,1,0} 2.5 'floor'", "a float Scalar gives float32"},
    {"aten::div.Scalar_mode", "i64[4]<9 2 None", "true division of int64 gives float32"},
    {"aten::div.Scalar_mode", "f64[3,4] 0.0 'floor'", "float division by zero"},
    {"aten::div.Scalar_mode", "i64[4]<9 0 'trunc'", "integer division by zero: an error"},
    {"aten::div.Scalar_mode", "f32[4] 2 'round'", "an unknown rounding mode: an error"},
    {"aten::div_.Scalar_mode", "f32[3,4] -1.5 'floor'", ""},
    {"aten::div_.Scalar_mode", "i64[4]<9 2.5 'floor'", "a float result into int64 self: an error"},
    /* session 22 (opsbatch): the *_like family, eye, linspace */
    {"aten::zeros_like", "f32[3,4] None None None None None", ""},
    {"aten::zeros_like", "i64[2,3]<9 float64 None None None None", "another dtype"},
    {"aten::ones_like", "f64[2,3] None None None None None", ""},
    {"aten::ones_like", "f32[0,3] bool None None None None", "empty, bool"},
    {"aten::full_like", "f32[3,4] 2.5 None None None None None", ""},
    {"aten::full_like", "i64[3]<5 2.7 None None None None None", "a float into int64 truncates"},
    {"aten::full_like", "f32[2] 1e39 None None None None None", "overflows float32: an error"},
    {"aten::empty_like", "f64[3,4] None None None None None", "zero-filled"},
    {"aten::rand_like", "f32[3,4] None None None None None", ""},
    {"aten::rand_like", "i64[5]<4 float64 None None None None", "an int64 self with a float dtype"},
    {"aten::rand_like", "i64[5]<4 None None None None None", "int64: an error"},
    {"aten::randn_like", "f64[2,5] None None None None None", ""},
    {"aten::eye", "3 None None None None", ""},
    {"aten::eye", "4 bool None None None", "bool"},
    {"aten::eye", "-1 None None None None", "negative: an error"},
    {"aten::eye.m", "2 5 float64 None None None", "wide"},
    {"aten::eye.m", "5 2 int64 None None None", "tall"},
    {"aten::eye.m", "3 0 None None None None", "empty"},
    {"aten::linspace", "-2.5 7 7 None None None None", ""},
    {"aten::linspace", "3 -1 40 None None None None", "descending, past one vector"},
    {"aten::linspace", "0.1 0.7 20 float64 None None None", ""},
    {"aten::linspace", "-7 7 33 int64 None None None", "int64 truncates each value"},
    {"aten::linspace", "2 1 1 None None None None", "one step: start"},
    {"aten::linspace", "0 1 0 None None None None", "no step: empty"},
    {"aten::linspace", "0 inf 4 None None None None", "an infinite end"},
    {"aten::linspace", "0 1 -1 None None None None", "negative steps: an error"},
    /* session 22 (opsbatch): binary_cross_entropy_with_logits, baddbmm */
    {"aten::binary_cross_entropy_with_logits", "f32[3,4] f32[3,4] None None 1", "mean"},
    {"aten::binary_cross_entropy_with_logits", "f64[3,4] f64[3,4] f64[4] f64[4] 0", "weight, pos_weight, none"},
    {"aten::binary_cross_entropy_with_logits", "f32[6]{-100,100,0,-0.0,30,-30} f32[6]{0,1,0.5,1,0,1} None f32[]{3} 2",
     "large logits, sum"},
    {"aten::binary_cross_entropy_with_logits", "f32[4]{nan,inf,-inf,1} f32[4]{0.5,1,0,1} None None 0", "nan, infinities"},
    {"aten::binary_cross_entropy_with_logits", "f32[3,4] f32[4] None None 1", "target of another shape: an error"},
    {"aten::binary_cross_entropy_with_logits", "f32[3,4] f64[3,4] None None 1", "target of another dtype: an error"},
    {"aten::baddbmm", "f32[2,3,4] f32[2,3,5] f32[2,5,4] 0.5 2", ""},
    {"aten::baddbmm", "f64[4] f64[3,2,5] f64[3,5,4] 1 1", "broadcast self"},
    {"aten::baddbmm", "f32[2,3,4]{nan,nan,nan,nan,nan,nan,nan,nan,nan,nan,nan,nan,nan,nan,nan,nan,nan,nan,nan,nan,nan,nan,nan,nan} f32[2,3,5] f32[2,5,4] 0 1",
     "beta 0 ignores nan in self"},
    {"aten::baddbmm", "i64[2,2,2]<5 i64[2,2,3]<5 i64[2,3,2]<5 2.7 -1", "int64 truncates the scalars"},
    {"aten::baddbmm", "f32[2,3,4] f32[2,3,5] f32[3,5,4] 1 1", "batch sizes differ: an error"},
    {"aten::scatter.value", "f32[3,4] 0 i64[2,4]{0,1,2,0,0,0,2,1} -2.5", "duplicate indices"},
    {"aten::scatter.value", "i64[2,5]<9 1 i64[2,3]<5 2.7", "int64 truncates the value"},
    {"aten::scatter.value", "f64[3] 0 i64[0] 1.0", "empty index: a copy"},
    {"aten::scatter.value", "f32[3,4] 0 i64[1,2]{0,3} 1.0", "index out of range: an error"},
    {"aten::mish", "f32[9]{nan,inf,-inf,-0.0,0,-30,30,90,-2}", "nan, infinities, beyond softplus' threshold"},
    {"aten::mish", "f64[3,4]", ""},
    {"aten::mish", "i64[3]<4", "int64: an error"},
    {"aten::log_sigmoid_forward", "f32[8]{nan,inf,-inf,-0.0,0,-100,100,-2}", "nan, infinities, large values"},
    {"aten::log_sigmoid_forward", "f64[3,4]", ""},
    {"aten::log_sigmoid_backward", "f32[3,4] f32[3,4] f32[3,4]", ""},
    {"aten::log_sigmoid_backward", "f64[6] f64[6]{-2,-0.0,0,3,nan,-inf} f64[6]{0.1,1,1,0.05,nan,0}", "signs, nan"},
    {"aten::log_sigmoid_backward", "f32[3,4] f32[4] f32[3,4]", "broadcast"},
    {"aten::glu", "f32[3,4] -1", ""},
    {"aten::glu", "f64[4,2,3] 0", "first dim"},
    {"aten::glu", "f32[3,5] 1", "odd size: an error"},
    {"aten::glu_backward", "f32[3,2] f32[3,4] -1", ""},
    {"aten::glu_backward", "f64[2,2,3] f64[4,2,3] 0", "first dim"},
    {"aten::glu_backward", "f32[3,4] f32[3,4] 1", "grad of the wrong shape: an error"},
    /* session 24 (opsbatch2): reflection / replication padding */
    {"aten::reflection_pad1d", "f32[2,3,5] [2,4]", "batched"},
    {"aten::reflection_pad1d", "f64[3,4] [-1,3]", "unbatched, a crop on the left"},
    {"aten::reflection_pad1d", "f32[2,3] [3,0]", "pad as large as the dim: an error"},
    {"aten::reflection_pad2d", "f32[2,3,4,5] [1,4,3,2]", ""},
    {"aten::reflection_pad2d", "f64[2,4,3] [-2,2,0,-1]", "unbatched, crops"},
    {"aten::replication_pad1d", "f32[2,3,4] [5,1]", "pads longer than the dim"},
    {"aten::replication_pad1d", "f32[2,3] [-3,0]", "empty result: an error"},
    {"aten::replication_pad2d", "f32[2,3,4,5] [2,7,0,3]", ""},
    {"aten::replication_pad2d", "f64[0,2,3,3] [1,1,1,1]", "empty batch"},
    {"aten::reflection_pad1d_backward", "f32[2,3,11] f32[2,3,5] [2,4]", ""},
    {"aten::reflection_pad1d_backward", "f64[3,6] f64[3,4] [-1,3]", "unbatched, a crop"},
    {"aten::reflection_pad2d_backward", "f32[2,3,9,10] f32[2,3,4,5] [1,4,3,2]", ""},
    {"aten::replication_pad1d_backward", "f32[2,3,10] f32[2,3,4] [5,1]", ""},
    {"aten::replication_pad2d_backward", "f32[2,3,7,14] f32[2,3,4,5] [2,7,0,3]", ""},
    {"aten::replication_pad2d_backward", "f32[2,3,7,13] f32[2,3,4,5] [2,7,0,3]", "wrong grad_output: an error"},
    {"aten::scatter_reduce_.two", "f32[3,4] 0 i64[2,4]{0,1,2,0,0,0,2,1} f32[2,4] 'amax' false",
     "duplicates, without self"},
    {"aten::scatter_reduce_.two", "f64[3,4] 1 i64[3,2]{3,3,0,2,1,1} f64[3,3] 'mean' true", "along the last dim, a larger src"},
    {"aten::scatter_reduce_.two", "i64[2,3]<9 0 i64[2,3]<2 i64[2,3]<9 'prod' true", "int64"},
    {"aten::index_copy", "f32[4,3] 0 i64[3]{3,0,3} f32[3,3]", "duplicates: the last wins"},
    {"aten::index_copy", "f64[3,5] -1 i64[]{2} f64[3,1]", "a 0-dim index"},
    {"aten::index_copy", "i64[2,3]<9 1 i64[0] i64[2,0]", "no index: a copy"},
    {"aten::index_copy", "f32[3,4] 0 i64[2]{0,3} f32[2,4]", "index out of range: an error"},
    {"aten::index_copy", "f32[3,4] 0 i64[2]{0,1} f32[2,3]", "source of another shape: an error"},
    {"aten::index_fill.int_Scalar", "f32[3,4] 1 i64[3]{0,-1,0} 2.5", "negative and repeated indices"},
    {"aten::index_fill.int_Scalar", "i64[4,2]<9 0 i64[]{1} 2.7", "int64 truncates the value"},
    {"aten::index_fill.int_Scalar", "f32[] 0 i64[1]{0} -inf", "0-dim self"},
    {"aten::index_fill.int_Scalar", "f32[3,4] 1 i64[1]{-5} 1.0", "index out of range: an error"},
    {"aten::index_copy_", "f32[4,3] 1 i64[2]{2,0} f32[4,2]", ""},
    {"aten::index_fill_.int_Scalar", "f64[2,3,4] 2 i64[2]{3,1} nan", ""},
    {"aten::index_fill.int_Tensor", "f32[3,4] 1 i64[3]{0,-1,0} f64[]{2.5}", "a float64 value into float32"},
    {"aten::index_fill.int_Tensor", "i64[4,2]<9 0 i64[]{1} f32[]{2.7}", "int64 truncates the value"},
    {"aten::index_fill.int_Tensor", "f64[] 0 i64[1]{0} f64[]{-inf}", "0-dim self"},
    {"aten::index_fill.int_Tensor", "f32[3,4] 1 i64[1]{0} f32[1]{1}", "1-D value: an error"},
    {"aten::index_fill_.int_Tensor", "f32[4,3] 0 i64[2]{3,0} i64[]{7}", ""},
    {"aten::celu_", "f32[3,4] 0.5", ""},
    {"aten::mish_", "f64[3,4]", ""},
    {"aten::scatter_.src", "f32[3,4] 0 i64[2,3]{0,1,2,2,0,1} f32[2,4]", ""},
    {"aten::scatter_.value", "i64[3,4]<9 1 i64[2,2]{3,0,1,1} -2", ""},
    /* session 24 (scatred): scatter with reduce 'add' / 'multiply' */
    {"aten::scatter.reduce", "f32[3,4] 0 i64[2,4]{0,1,2,0,0,0,2,1} f32[2,4] 'add'", "duplicate indices"},
    {"aten::scatter.reduce", "f64[3,4] 1 i64[3,2]{3,3,0,2,1,1} f64[3,3] 'multiply'", "along the last dim, a larger src"},
    {"aten::scatter.reduce", "i64[2,3]<9 0 i64[2,3]<2 i64[2,3]<9 'multiply'", "int64"},
    {"aten::scatter.reduce", "f32[] 0 i64[]{0} f32[] 'multiply'", "0-dim"},
    {"aten::scatter.reduce", "f32[3,4] 0 i64[1,2]{0,1} f32[2,4] 'sum'", "another reduce: an error"},
    {"aten::scatter.value_reduce", "f32[3,4] 0 i64[2,4]{0,1,2,0,0,0,2,1} -2.5 'multiply'", "duplicate indices"},
    {"aten::scatter.value_reduce", "i64[2,5]<9 1 i64[2,3]<5 2.7 'add'", "int64 truncates the value"},
    {"aten::scatter.value_reduce", "f64[3] 0 i64[0] 1.0 'add'", "empty index: a copy"},
    {"aten::scatter.value_reduce", "f32[3,4] 0 i64[1,2]{0,3} 1.0 'multiply'", "index out of range: an error"},
    {"aten::scatter_.reduce", "f32[3,4] 1 i64[3,2]{3,3,0,2,1,1} f32[3,3] 'multiply'", ""},
    {"aten::scatter_.value_reduce", "f64[3,4] 0 i64[2,4]{0,1,2,0,0,0,2,1} 0.5 'add'", ""},
    {"aten::mv", "f32[5,7] f32[7]", ""},
    {"aten::mv", "i64[3,4]<9 i64[4]<9", "int64"},
    {"aten::mv", "f64[3,0] f64[0]", "empty inner size: zeros"},
    {"aten::mv", "f32[3,4] f32[5]", "sizes differ: an error"},
    {"aten::dot", "f32[9] f32[9]", ""},
    {"aten::dot", "f64[0] f64[0]", "empty: zero"},
    {"aten::dot", "f32[3] f64[3]", "dtypes differ: an error"},
    {"aten::addmv", "f32[5] f32[5,7] f32[7] 0.5 2", ""},
    {"aten::addmv", "f64[] f64[4,3] f64[3] -1 1", "0-dim self"},
    {"aten::addmv", "f32[3]{nan,1,2} f32[3,2] f32[2] 0 1", "beta 0 ignores nan in self"},
    {"aten::addmv", "f32[3,1] f32[3,2] f32[2] 1 1", "self [3, 1]: an error"},
    {"aten::addr", "f32[4,5] f32[4] f32[5] 0.5 -2", ""},
    {"aten::addr", "i64[5]<9 i64[3]<9 i64[5]<9 2 3", "int64, a broadcast self"},
    {"aten::addr", "f32[4,5] f32[4,1] f32[5] 1 1", "2-D vec1: an error"},
    {"aten::celu", "f32[9]{nan,inf,-inf,-0.0,0,-30,30,-0.5,2} 0.5", "nan, infinities"},
    {"aten::celu", "f64[3,4] 2", ""},
    {"aten::celu", "f32[3] 0", "alpha 0: an error"},
    {"aten::celu", "i64[3]<4 1", "int64: an error"},
    {"aten::prelu", "f32[2,3,4] f32[3]", "a weight per channel"},
    {"aten::prelu", "f64[2,3] f64[1]", "one weight"},
    {"aten::prelu", "f32[5]{nan,-0.0,0,-inf,2} f32[]{0.25}", "1-D self, 0-dim weight, nan and -0"},
    {"aten::prelu", "f32[] f32[1]", "0-dim self"},
    {"aten::prelu", "f32[2,3] f32[2]", "mismatched weight: an error"},
    {"aten::prelu", "f32[2,3] f64[3]", "weight of another dtype: an error"},
    {"aten::prelu_backward", "f32[2,3,4,2] f32[2,3,4,2] f32[3]", "a weight per channel"},
    {"aten::prelu_backward", "f64[2,3,4] f64[2,3,4] f64[]", "0-dim weight"},
    {"aten::prelu_backward", "f32[3] f32[2,3] f32[1]", "broadcast grad_output"},
    {"aten::prelu_backward", "f32[2,3] f32[2,3] f32[1,3]", "2-D weight: an error"},
    /* session 27 (parity27): sgn, sign for the real dtypes */
    {"aten::sgn", "f32[7]{nan,-0,0,-2,3,inf,-inf}", "nan and -0 give +0"},
    {"aten::sgn", "f64[3,4]", ""},
    {"aten::sgn", "i64[6]{-5,0,7,-1,1,2}", ""},
    {"aten::sgn", "b[4]", "bool is the identity"},
    /* randint and the randint_like forms (randint.low under the same seed) */
    {"aten::randint", "10 [3,4] None None None None", "int64"},
    {"aten::randint", "5 [7] float64 None None None", "float64"},
    {"aten::randint", "0 [2] None None None None", "high 0: an error"},
    {"aten::randint_like", "f32[3,4] 6 None None None None None", "self's dtype"},
    {"aten::randint_like", "f32[5] 2 bool None None None None", "bool"},
    {"aten::randint_like.low_dtype", "f64[2,3] -4 4 None None None None None", "a negative low"},
    {"aten::randint_like.low_dtype", "i64[6]<3 7 7 None None None None None", "low == high: an error"},
    /* the float fills (rand / randn draws under the same seed, then pointwise) */
    {"aten::uniform", "f32[3,4] -1.0 2.0 None", ""},
    {"aten::uniform", "i64[3]<5 0.0 1.0 None", "int64: an error"},
    {"aten::uniform", "f32[3] 2.0 1.0 None", "from > to: an error"},
    {"aten::uniform_", "f64[2,3] 0.0 1.0 None", ""},
    {"aten::normal_functional", "f64[2,3] 1.0 3.0 None", ""},
    {"aten::normal_", "f32[5] 0.0 2.0 None", ""},
    {"aten::normal_", "f32[5] 0.0 -1.0 None", "std < 0: an error"},
    {"aten::exponential", "f32[3,4] 2.0 None", ""},
    {"aten::exponential_", "f64[6] 0.5 None", ""},
    {"aten::normal.Tensor_float", "f32[3,4] 2.0 None", ""},
    {"aten::normal.float_Tensor", "1.0 f64[4]{0.5,1,2,0} None", ""},
    {"aten::normal.Tensor_Tensor", "f32[3,4] f64[4]{1,2,3,4} None", "broadcast, mean's float32"},
    {"aten::normal.float_float", "0.0 1.0 [2,3] None float64 None None None", ""},
};

int tj_decomp_sample_count(void) { return (int)(sizeof samples / sizeof *samples); }

const tj_decomp_sample *tj_decomp_sample_at(int i)
{
    return i >= 0 && i < tj_decomp_sample_count() ? &samples[i] : NULL;
}

/* ---- decoding ---- */

static uint64_t next_random(uint64_t *s)
{
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return *s >> 11;
}

static double parse_number(const char *s, char **end)
{
    if (!strncmp(s, "inf", 3)) return *end = (char *)s + 3, INFINITY;
    if (!strncmp(s, "-inf", 4)) return *end = (char *)s + 4, -INFINITY;
    if (!strncmp(s, "nan", 3)) return *end = (char *)s + 3, NAN;
    return strtod(s, end);
}

/* "f32[2,3]", "i64[4]<5", "b[2]{1,0}" -> a tensor adopted by the open scope. */
static tj_tensor *parse_tensor(const char *tok, uint64_t *rng)
{
    static const struct { const char *prefix; tj_dtype dt; } kinds[] = {
        {"f32[", TJ_FLOAT32}, {"f64[", TJ_FLOAT64}, {"i64[", TJ_INT64}, {"b[", TJ_BOOL}};
    for (size_t k = 0; k < sizeof kinds / sizeof *kinds; k++) {
        size_t plen = strlen(kinds[k].prefix);
        if (strncmp(tok, kinds[k].prefix, plen)) continue;
        int64_t shape[TJ_MAX_DIMS];
        int nd = 0;
        char *p = (char *)tok + plen;
        while (*p != ']' && nd < TJ_MAX_DIMS) {
            shape[nd++] = strtoll(p, &p, 10);
            if (*p == ',') p++;
            else if (*p != ']') return NULL;
        }
        if (*p++ != ']') return NULL;
        tj_tensor *t = tj_tensor_empty(kinds[k].dt, nd, shape);
        if (!t) return NULL;
        char *data = tj_tensor_ptr(t);
        size_t es = tj_dtype_size(t->dtype);
        int64_t bound = *p == '<' ? strtoll(p + 1, &p, 10) : 0;
        bool explicit_values = *p == '{';
        if (explicit_values) p++;
        for (int64_t i = 0; i < t->numel; i++) {
            double v;
            if (explicit_values) {
                v = parse_number(p, &p);
                if (*p == ',') p++;
            } else if (t->dtype == TJ_BOOL) {
                v = (double)(next_random(rng) & 1);
            } else if (t->dtype == TJ_INT64) {
                v = (double)(int64_t)(next_random(rng) % (uint64_t)(bound > 0 ? bound : 10));
            } else {
                v = -3.0 + 6.0 * (double)next_random(rng) / 9007199254740992.0;
            }
            if (t->dtype == TJ_INT64) *(int64_t *)(data + (size_t)i * es) = (int64_t)v;
            else tj_store_f64(data + (size_t)i * es, t->dtype, v);
        }
        if (explicit_values && *p != '}') return NULL;
        return t;
    }
    return NULL;
}

/* "[1,2]", "[true,false]" or (floats non-NULL) "[1.5,2]" into ints /
 * bools / floats; the count, or -1. */
static int parse_list(const char *tok, int64_t *ints, bool *bools, double *floats)
{
    if (*tok != '[') return -1;
    const char *p = tok + 1;
    int n = 0;
    while (*p && *p != ']' && n < TJ_CONFORM_MAX_LIST) {
        if (!strncmp(p, "true", 4) || !strncmp(p, "false", 5)) {
            bools[n++] = *p == 't';
            p += *p == 't' ? 4 : 5;
        } else if (floats) {
            char *e;
            floats[n++] = parse_number(p, &e);
            if (e == p) return -1;
            p = e;
        } else {
            char *e;
            ints[n++] = strtoll(p, &e, 10);
            if (e == p) return -1;
            p = e;
        }
        if (*p == ',') p++;
    }
    return *p == ']' ? n : -1;
}

static bool is_int_token(const char *tok)
{
    const char *p = tok + (*tok == '-');
    if (!*p) return false;
    for (; *p; p++)
        if (*p < '0' || *p > '9') return false;
    return true;
}

static bool decode_token(tj_conform_case *c, int i, const tj_arg_spec *spec, char *tok, uint64_t *rng)
{
    tj_value *v = &c->args[i];
    if (!strcmp(tok, "None")) {
        *v = tj_v_none();
        return true;
    }
    switch (spec->type) {
    case TJ_A_TENSOR: {
        tj_tensor *t = parse_tensor(tok, rng);
        *v = tj_v_tensor(t);
        return t != NULL;
    }
    case TJ_A_TENSOR_LIST: {
        size_t len = strlen(tok);
        if (tok[0] != '(' || tok[len - 1] != ')') return false;
        tok[len - 1] = 0;
        int n = 0;
        for (char *save = NULL, *part = strtok_r(tok + 1, ";", &save); part; part = strtok_r(NULL, ";", &save)) {
            if (n == TJ_CONFORM_MAX_LIST) return false;
            if (spec->elem_optional && !strcmp(part, "None")) c->lists[i][n++] = NULL; /* a Tensor?[] entry */
            else if (!(c->lists[i][n++] = parse_tensor(part, rng))) return false;
        }
        *v = tj_v_tensors(c->lists[i], n);
        return n > 0;
    }
    case TJ_A_INT:
        *v = tj_v_int(strtoll(tok, NULL, 10));
        return is_int_token(tok);
    case TJ_A_FLOAT:
    case TJ_A_SCALAR: {
        if (is_int_token(tok)) {
            *v = spec->type == TJ_A_SCALAR ? tj_v_int(strtoll(tok, NULL, 10)) : tj_v_float(strtod(tok, NULL));
            return true;
        }
        char *end;
        *v = tj_v_float(parse_number(tok, &end));
        return *end == 0;
    }
    case TJ_A_BOOL:
        *v = tj_v_bool(!strcmp(tok, "true"));
        return !strcmp(tok, "true") || !strcmp(tok, "false");
    case TJ_A_INT_LIST:
    case TJ_A_BOOL_LIST: {
        int n = parse_list(tok, c->ints[i], c->bools[i], NULL);
        *v = spec->type == TJ_A_INT_LIST ? tj_v_ints(c->ints[i], n) : tj_v_bools(c->bools[i], n);
        return n >= 0;
    }
    case TJ_A_FLOAT_LIST: {
        int n = parse_list(tok, NULL, NULL, c->floats[i]);
        *v = tj_v_floats(c->floats[i], n);
        return n >= 0;
    }
    case TJ_A_STR: {
        size_t len = strlen(tok);
        if (len < 2 || tok[0] != '\'' || tok[len - 1] != '\'') return false;
        c->strs[i] = strndup(tok + 1, len - 2);
        *v = tj_v_str(c->strs[i]);
        return c->strs[i] != NULL;
    }
    case TJ_A_SCALAR_TYPE: {
        tj_dtype dt;
        *v = tj_v_dtype(TJ_FLOAT32);
        if (tj_dtype_from_name(tok, &dt) != TJ_OK) return false;
        v->u.dtype = dt;
        return true;
    }
    case TJ_A_IGNORED: return false;
    }
    return false;
}

tj_status tj_decomp_sample_decode(const tj_decomp_sample *s, tj_conform_case *c, uint64_t *rng, char *why, size_t n)
{
    memset(c, 0, sizeof *c);
    const tj_op *op = tj_op_find(s->op);
    if (!op) {
        snprintf(why, n, "unknown operator %s", s->op);
        return TJ_ERR_PARSE;
    }
    c->op = op;
    c->rtol = 1e-4;
    c->atol = 1e-5;
    char *text = strdup(s->args), *save = NULL;
    if (!text) {
        snprintf(why, n, "out of memory");
        return TJ_ERR_OUT_OF_MEMORY;
    }
    int i = 0;
    tj_status st = TJ_OK;
    for (char *tok = strtok_r(text, " ", &save); tok; tok = strtok_r(NULL, " ", &save), i++) {
        if (i >= op->nargs || !decode_token(c, i, &op->args[i], tok, rng)) {
            snprintf(why, n, "argument %d '%s' of %s", i, tok, s->op);
            st = TJ_ERR_PARSE;
            break;
        }
    }
    if (st == TJ_OK && i != op->nargs) {
        snprintf(why, n, "%d %s, %s takes %d", i, tj_noun(i, "argument", "arguments"), s->op, op->nargs);
        st = TJ_ERR_PARSE;
    }
    free(text);
    return st;
}
