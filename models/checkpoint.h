/* Training checkpoints, as a PyTorch user's torch.save({'model': ...,
 * 'optimizer': ..., 'epoch': ...}): one safetensors file holding
 *   - the parameters under their state_dict names ("fc1.weight", ...), so
 *     that a checkpoint is also a parameter file for model_load (tjit eval);
 *   - the optimiser state as "optimizer.<key>.<parameter>" tensors, the keys
 *     of torch.optim's per-parameter state ("optimizer.momentum_buffer.fc1.weight"
 *     for SGD; exp_avg, exp_avg_sq and step for AdamW);
 *   - "__metadata__" strings: "model" (its id), "epoch" (epochs done),
 *     "seed" and "batch_size" (what the shuffle of the epochs to come needs).
 * model_save / model_load (models.h) are the parameters-only side of the
 * same files. */
#ifndef TJIT_MODELS_CHECKPOINT_H
#define TJIT_MODELS_CHECKPOINT_H

#include <stdbool.h>

#include "step.h"

/** Where a training run stands. */
typedef struct checkpoint_info {
    int epochs_done;
    uint64_t seed;
    int batch_size;
} checkpoint_info;

/** Writes m's parameters, s's optimiser state and `info` to `path` through a
 * temporary file renamed over it (tj_safetensors_save_metadata: a failed
 * write leaves the file as it was). Errors: those of
 * tj_safetensors_save_metadata (TJ_ERR_IO naming the path and the reason,
 * TJ_ERR_OUT_OF_MEMORY). */
tj_status checkpoint_save(const model *m, const train_state *s, const checkpoint_info *info, const char *path);

/** Reads a checkpoint written by checkpoint_save into m (parameters) and s
 * (optimiser state, as train_state_init made it for m) and writes where the
 * run stands to *info. A parameter file (model_save, an older `tjit train
 * --save`: no optimiser tensor and no "epoch") loads too: the parameters
 * only, s left as it is and *resumable false; otherwise *resumable is true.
 * Every tensor's name, dtype and shape and every metadata value is checked
 * before anything is replaced: on error m and s are as they were. Errors:
 * those of tj_safetensors_load (TJ_ERR_IO, TJ_ERR_PARSE, ...);
 * TJ_ERR_INVALID_ARGUMENT for a checkpoint of another model (its "model"),
 * a tensor that is neither a parameter nor optimiser state of m, or a
 * missing or malformed metadata value; TJ_ERR_NOT_FOUND for a missing
 * parameter or state tensor; TJ_ERR_SHAPE for a wrong dtype or shape (each
 * message names the file and the tensor or key). */
tj_status checkpoint_load(model *m, train_state *s, const char *path, checkpoint_info *info, bool *resumable);

#endif
