/* Parameter creation shared by the models: PyTorch's default initialisation. */
#ifndef TJIT_MODELS_LAYERS_H
#define TJIT_MODELS_LAYERS_H

#include "models.h"

/** Adds a parameter of `shape` drawn from U(-bound, bound). */
tj_status param_uniform(model *m, const char *name, int ndim, const int64_t *shape, double bound);
/** Adds a parameter drawn from N(0, 1) (nn.Embedding). */
tj_status param_normal(model *m, const char *name, int ndim, const int64_t *shape);
/** Adds a parameter filled with `value` (LayerNorm: 1 and 0). */
tj_status param_fill(model *m, const char *name, int ndim, const int64_t *shape, double value);
/** nn.Linear(in, out): weight [out, in] kaiming-uniform (a = sqrt(5), i.e.
 * bound 1/sqrt(in)), bias [out] U(-1/sqrt(in), 1/sqrt(in)). */
tj_status linear_params(model *m, const char *prefix, int64_t in, int64_t out, bool bias);
/** nn.Conv2d(cin, cout, k): weight [cout, cin, k, k], bias [cout], fan_in cin*k*k. */
tj_status conv2d_params(model *m, const char *prefix, int64_t cin, int64_t cout, int64_t k);
/** nn.LayerNorm(d): weight ones, bias zeros. */
tj_status layer_norm_params(model *m, const char *prefix, int64_t d);
/** A transformer block's parameters (pre-LayerNorm, fused qkv, MLP 4d). */
tj_status block_params(model *m, const char *prefix, int64_t d, int64_t hidden);
/** One pre-LayerNorm transformer block on x [B, T, d]: causal self-attention
 * (matmul, causal mask, softmax, matmul) then an MLP with GELU (tanh).
 * `p` points at the block's parameters in block_params order. */
tj_tensor *block_forward(tj_tensor *const *p, tj_tensor *x, int64_t heads, tj_tensor *causal_mask);
/** nn.CrossEntropyLoss() (mean) of logits [N, C] against int64 targets [N]. */
tj_tensor *classification_loss(const model *m, tj_tensor *logits, tj_tensor *y);
/** A bool [t, t] lower-triangular mask (true where key <= query). */
tj_tensor *causal_mask_new(int64_t t);

#endif
