/* The WORKLOADS.md models (mlp, cnn, gpt, block768), written against the
 * public API the way a PyTorch user writes nn.Modules: parameters are plain
 * tensors in a fixed order, and forward takes them as arguments, so that a
 * traced step can make them graph inputs. */
#ifndef TJIT_MODELS_MODELS_H
#define TJIT_MODELS_MODELS_H

#include "tjit/tjit.h"

#define MODEL_MAX_PARAMS 64

typedef struct model_def model_def;

/** A model instance: its definition and its parameters (owned). */
typedef struct model {
    const model_def *def;
    int n_params;
    const char *names[MODEL_MAX_PARAMS];
    tj_tensor *params[MODEL_MAX_PARAMS];
    tj_tensor *causal_mask; /**< gpt/block768: bool [T, T] lower triangle, made once */
} model;

struct model_def {
    const char *id;
    /** Input shapes for a batch: x (dtype x_dtype) and, for training, y (int64). */
    tj_dtype x_dtype;
    int x_ndim;
    int64_t x_shape[4];
    int y_ndim;
    int64_t y_shape[4];
    bool trainable;
    /** Creates the parameters, initialised like PyTorch's defaults. */
    tj_status (*init)(model *m);
    /** logits = forward(params, x). */
    tj_tensor *(*forward)(const model *m, tj_tensor *const *params, tj_tensor *x);
    /** The loss of logits against targets (cross entropy, mean). */
    tj_tensor *(*loss)(const model *m, tj_tensor *logits, tj_tensor *y);
};

/** The model definition with this id, or NULL. */
const model_def *model_find(const char *id);
/** Creates a model with parameters from `seed`. */
tj_status model_create(const model_def *def, uint64_t seed, model *out);
void model_free(model *m);
/** Saves / loads the parameters as safetensors (names as in PyTorch's
 * state_dict: "fc1.weight", ...; defined in checkpoint.c). Loading checks
 * every name, dtype and shape and changes nothing on error; it reads a
 * training checkpoint's parameters too (its "optimizer." tensors skipped,
 * its "model" metadata checked; see checkpoint.h for the errors). */
tj_status model_save(const model *m, const char *path);
tj_status model_load(model *m, const char *path);

#endif
