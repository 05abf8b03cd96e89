/* scaled_dot_product_attention decomposed into its "math" form (as
 * PyTorch 2.0 documents it): softmax(q @ k^T * scale + mask) @ v, with
 * the causal mask built from two aranges (query i keeps keys j <= i) and a
 * bool mask applied by masked_fill(-inf). Rows whose scores are all -inf
 * (every key masked) give zeros, as the fused kernel does, through a where
 * on the row maximum. The kernel's shape function checks the arguments. */
#include <math.h>

#include "internal.h"
#include "op_nn.h"

static tj_status done(tj_tensor *r, tj_value *outs)
{
    if (!r) return tj_last_status();
    outs[0] = tj_v_tensor(r);
    return TJ_OK;
}

static tj_tensor *f64(tj_tensor *t) { return tj_tensor_dtype(t) != TJ_FLOAT64 ? tj_to_copy(t, TJ_FLOAT64) : t; }

static tj_status scaled_dot_product_attention(const tj_value *args, tj_value *outs)
{
    tj_meta m[1];
    if (tj_meta_scaled_dot_product_attention(args, m) != TJ_OK) return tj_last_status();
    /* in float64, rounded once: the kernel's accuracy */
    tj_tensor *q = f64(args[0].u.t), *k = f64(args[1].u.t), *v = f64(args[2].u.t);
    tj_tensor *mask = args[3].kind == TJ_V_TENSOR ? args[3].u.t : NULL;
    if (mask && tj_tensor_dtype(mask) != TJ_BOOL) mask = f64(mask);
    int qn = tj_tensor_ndim(q);
    int64_t L = tj_tensor_shape(q)[qn - 2], E = tj_tensor_shape(q)[qn - 1], S = tj_tensor_shape(k)[tj_tensor_ndim(k) - 2];
    if (S == 0) return done(tj_zeros(m[0].shape, m[0].ndim, (int)m[0].dtype), outs);
    tj_tensor *scores = tj_mul_scalar(tj_matmul(q, tj_transpose(k, -2, -1)), tj_v_float(1.0 / sqrt((double)E)));
    if (args[5].u.b) {
        tj_tensor *i = tj_unsqueeze(tj_arange(tj_v_int(0), tj_v_int(L), tj_v_int(1), -1), 1);
        tj_tensor *j = tj_arange(tj_v_int(0), tj_v_int(S), tj_v_int(1), -1);
        scores = tj_masked_fill(scores, tj_lt(i, j), tj_v_float(-INFINITY));
    } else if (mask && tj_tensor_dtype(mask) == TJ_BOOL) {
        scores = tj_masked_fill(scores, tj_eq_scalar(mask, tj_v_int(0)), tj_v_float(-INFINITY));
    } else if (mask) {
        scores = tj_add(scores, mask);
    }
    int64_t last = -1;
    tj_tensor *dead = tj_eq_scalar(tj_amax(scores, &last, 1, true), tj_v_float(-INFINITY));
    tj_tensor *p = tj_where(dead, tj_scalar_tensor(tj_v_int(0), TJ_FLOAT64), tj__softmax(scores, -1, false));
    tj_tensor *r = tj_matmul(p, v);
    return done(r && m[0].dtype != TJ_FLOAT64 ? tj_to_copy(r, (int)m[0].dtype) : r, outs);
}

void tj_register_attention_decompositions(void)
{
    tj_op_set_decomposition(TJ_OPS(scaled_dot_product_attention), scaled_dot_product_attention,
                            "scaled_dot_product_attention");
}
