/* gpt: byte-level GPT (vocab 256, context 64, d_model 128, 4 heads, 2
 * layers, pre-LayerNorm, MLP 4d with GELU (tanh), final LayerNorm, LM head
 * tied to the token embedding, learned position embedding); and block768,
 * one GPT-2-small block (d 768, 12 heads, MLP 3072) on x [1, 128, 768]. */
#include <stdio.h>

#include "layers.h"

#define VOCAB 256
#define CONTEXT 64
#define D 128
#define HEADS 4
#define LAYERS 2
#define BLOCK_PARAMS 12

static tj_status gpt_init(model *m)
{
    tj_status st = param_normal(m, "wte.weight", 2, (int64_t[]){VOCAB, D});
    if (st == TJ_OK) st = param_normal(m, "wpe.weight", 2, (int64_t[]){CONTEXT, D});
    for (int l = 0; l < LAYERS && st == TJ_OK; l++) {
        char prefix[32];
        snprintf(prefix, sizeof prefix, "h.%d", l);
        st = block_params(m, prefix, D, 4 * D);
    }
    if (st == TJ_OK) st = layer_norm_params(m, "ln_f", D);
    if (st == TJ_OK && !(m->causal_mask = causal_mask_new(CONTEXT))) st = tj_last_status();
    return st;
}

static tj_tensor *gpt_forward(const model *m, tj_tensor *const *p, tj_tensor *tokens)
{
    int64_t T = tj_tensor_size(tokens, 1);
    tj_tensor *pos = tj_arange(tj_v_int(0), tj_v_int(T), tj_v_int(1), TJ_INT64);
    /* the token embedding first, as PyTorch's wte(tokens) + wpe(pos) (the
     * engine runs the later one's gradient first) */
    tj_tensor *tok = tj_embedding(p[0], tokens, -1);
    tj_tensor *x = tj_add(tok, tj_embedding(p[1], pos, -1));
    for (int l = 0; l < LAYERS; l++) x = block_forward(p + 2 + l * BLOCK_PARAMS, x, HEADS, m->causal_mask);
    int64_t d[1] = {D};
    tj_tensor *const *lnf = p + 2 + LAYERS * BLOCK_PARAMS;
    x = tj_layer_norm(x, d, 1, lnf[0], lnf[1], 1e-5);
    return tj_linear(x, p[0], NULL);
}

static tj_tensor *gpt_loss(const model *m, tj_tensor *logits, tj_tensor *y)
{
    (void)m;
    int64_t flat_logits[2] = {-1, VOCAB}, flat_y[1] = {-1};
    return tj_cross_entropy(tj_view(logits, flat_logits, 2), tj_reshape(y, flat_y, 1), NULL, 1, -100, 0.0);
}

const model_def gpt_def = {
    .id = "gpt",
    .x_dtype = TJ_INT64,
    .x_ndim = 2,
    .x_shape = {8, CONTEXT},
    .y_ndim = 2,
    .y_shape = {8, CONTEXT},
    .trainable = true,
    .init = gpt_init,
    .forward = gpt_forward,
    .loss = gpt_loss,
};

static tj_status block768_init(model *m)
{
    tj_status st = block_params(m, "block", 768, 3072);
    if (st == TJ_OK && !(m->causal_mask = causal_mask_new(128))) st = tj_last_status();
    return st;
}

static tj_tensor *block768_forward(const model *m, tj_tensor *const *p, tj_tensor *x)
{
    return block_forward(p, x, 12, m->causal_mask);
}

const model_def block768_def = {
    .id = "block768",
    .x_dtype = TJ_FLOAT32,
    .x_ndim = 3,
    .x_shape = {1, 128, 768},
    .trainable = false,
    .init = block768_init,
    .forward = block768_forward,
};
