/* Parameter files and training checkpoints (see checkpoint.h). */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checkpoint.h"

#define OPTIMIZER_PREFIX "optimizer."
#define STATE_NAME_MAX 192

/* "optimizer.momentum_buffer.fc1.weight": the name of state tensor i. */
static void state_name(const model *m, int i, char *buf, size_t n)
{
    snprintf(buf, n, OPTIMIZER_PREFIX "%s.%s", train_state_key(m, i), m->names[i % m->n_params]);
}

tj_status model_save(const model *m, const char *path)
{
    return tj_safetensors_save(path, m->names, m->params, m->n_params);
}

tj_status checkpoint_save(const model *m, const train_state *s, const checkpoint_info *info, const char *path)
{
    const char *names[4 * MODEL_MAX_PARAMS];
    tj_tensor *tensors[4 * MODEL_MAX_PARAMS];
    char state_names[3 * MODEL_MAX_PARAMS][STATE_NAME_MAX];
    int n = 0;
    for (int i = 0; i < m->n_params; i++, n++) {
        names[n] = m->names[i];
        tensors[n] = m->params[i];
    }
    for (int i = 0; i < s->n; i++, n++) {
        state_name(m, i, state_names[i], sizeof state_names[i]);
        names[n] = state_names[i];
        tensors[n] = s->tensors[i];
    }
    char epoch[24], seed[24], batch[24];
    snprintf(epoch, sizeof epoch, "%d", info->epochs_done);
    snprintf(seed, sizeof seed, "%" PRIu64, info->seed);
    snprintf(batch, sizeof batch, "%d", info->batch_size);
    const char *keys[] = {"model", "epoch", "seed", "batch_size"};
    const char *values[] = {m->def->id, epoch, seed, batch};
    return tj_safetensors_save_metadata(path, names, tensors, n, keys, values, 4);
}

/* Tensor `name` of f with the dtype and shape of `like` (borrowed from f), or
 * NULL with an error naming the file, the tensor and both shapes. */
static tj_tensor *get_like(const tj_safetensors *f, const char *path, const model *m, const char *name, const tj_tensor *like)
{
    tj_tensor *t = tj_safetensors_get(f, name);
    char a[96], b[96];
    if (!t) {
        tj_error(TJ_ERR_NOT_FOUND, "%s: '%s' has no tensor '%s'", m->def->id, path, name);
        return NULL;
    }
    if (tj_tensor_dtype(t) != tj_tensor_dtype(like) || tj_tensor_ndim(t) != tj_tensor_ndim(like) ||
        memcmp(tj_tensor_shape(t), tj_tensor_shape(like), sizeof(int64_t) * (size_t)tj_tensor_ndim(like)) != 0) {
        tj_tensor_describe(t, a, sizeof a);
        tj_tensor_describe(like, b, sizeof b);
        tj_error(TJ_ERR_SHAPE, "%s: tensor '%s' in '%s' is %s, the model needs %s", m->def->id, name, path, a, b);
        return NULL;
    }
    return t;
}

/* Metadata `key` of f as a decimal number in [min, max]. */
static tj_status metadata_number(const tj_safetensors *f, const char *path, const char *key, uint64_t min, uint64_t max,
                                 uint64_t *out)
{
    const char *v = tj_safetensors_metadata(f, key);
    if (!v) return tj_error(TJ_ERR_INVALID_ARGUMENT, "checkpoint '%s' has no \"%s\" in its __metadata__", path, key);
    char *end;
    errno = 0;
    unsigned long long x = strtoull(v, &end, 10);
    if (!(*v >= '0' && *v <= '9') || *end || errno || x < min || x > max)
        return tj_error(TJ_ERR_INVALID_ARGUMENT,
                        "checkpoint '%s': __metadata__ \"%s\" is '%s', not a number in [%" PRIu64 ", %" PRIu64 "]", path, key,
                        v, min, max);
    *out = x;
    return TJ_OK;
}

/* Where the run stands, from f's metadata: every value present and a number. */
static tj_status read_info(const tj_safetensors *f, const char *path, checkpoint_info *info)
{
    uint64_t epoch, seed, batch;
    tj_status st = metadata_number(f, path, "epoch", 0, INT_MAX, &epoch);
    if (st == TJ_OK) st = metadata_number(f, path, "seed", 0, UINT64_MAX, &seed);
    if (st == TJ_OK) st = metadata_number(f, path, "batch_size", 1, INT_MAX, &batch);
    if (st == TJ_OK) *info = (checkpoint_info){(int)epoch, seed, (int)batch};
    return st;
}

/* True when f holds optimiser state or an epoch count: a checkpoint, which
 * must then be whole, rather than a parameter file. */
static bool holds_training_state(const tj_safetensors *f)
{
    for (int i = 0; i < tj_safetensors_count(f); i++)
        if (!strncmp(tj_safetensors_name(f, i), OPTIMIZER_PREFIX, strlen(OPTIMIZER_PREFIX))) return true;
    bool has_epoch = tj_safetensors_metadata(f, "epoch") != NULL;
    tj_clear_error(); /* a parameter file has no metadata: not an error */
    return has_epoch;
}

/* Every tensor of f is one of names[0..n), or (when ignore_optimizer) an
 * optimiser tensor that a parameters-only load skips. */
static tj_status check_no_extra(const tj_safetensors *f, const char *path, const model *m, const char *const *names, int n,
                                bool ignore_optimizer)
{
    for (int i = 0; i < tj_safetensors_count(f); i++) {
        const char *name = tj_safetensors_name(f, i);
        bool known = ignore_optimizer && !strncmp(name, OPTIMIZER_PREFIX, strlen(OPTIMIZER_PREFIX));
        for (int k = 0; !known && k < n; k++) known = !strcmp(name, names[k]);
        if (!known)
            return tj_error(TJ_ERR_INVALID_ARGUMENT, "%s: '%s' holds a tensor '%s' that is %s of %s", m->def->id, path, name,
                            ignore_optimizer ? "not a parameter" : "neither a parameter nor optimiser state", m->def->id);
    }
    return TJ_OK;
}

tj_status checkpoint_load(model *m, train_state *s, const char *path, checkpoint_info *info, bool *resumable)
{
    tj_safetensors *f = tj_safetensors_load(path);
    if (!f) return tj_last_status();
    const char *names[4 * MODEL_MAX_PARAMS];
    char state_names[3 * MODEL_MAX_PARAMS][STATE_NAME_MAX];
    tj_tensor *loaded[4 * MODEL_MAX_PARAMS];
    bool with_state = s && holds_training_state(f);
    int n_state = with_state ? s->n : 0, n = 0;
    checkpoint_info got = {0};
    tj_status st = TJ_OK;
    const char *owner = tj_safetensors_metadata(f, "model");
    if (!owner) tj_clear_error(); /* optional: a parameter file has none */
    else if (strcmp(owner, m->def->id))
        st = tj_error(TJ_ERR_INVALID_ARGUMENT, "%s: '%s' is a checkpoint of %s, not %s", m->def->id, path, owner, m->def->id);
    for (int i = 0; st == TJ_OK && i < m->n_params + n_state; i++, n++) {
        bool param = i < m->n_params;
        if (!param) state_name(m, i - m->n_params, state_names[i - m->n_params], STATE_NAME_MAX);
        names[n] = param ? m->names[i] : state_names[i - m->n_params];
        if (!(loaded[n] = get_like(f, path, m, names[n], param ? m->params[i] : s->tensors[i - m->n_params])))
            st = tj_last_status();
    }
    if (st == TJ_OK) st = check_no_extra(f, path, m, names, n, !with_state);
    if (st == TJ_OK && with_state) st = read_info(f, path, &got);
    /* all checked: only now replace the tensors, so a bad file changes nothing */
    for (int i = 0; st == TJ_OK && i < n; i++) {
        tj_tensor **slot = i < m->n_params ? &m->params[i] : &s->tensors[i - m->n_params];
        tj_tensor_release(*slot);
        *slot = tj_tensor_retain(loaded[i]);
    }
    if (st == TJ_OK && info) *info = got;
    if (st == TJ_OK && resumable) *resumable = with_state;
    tj_safetensors_free(f);
    return st;
}

tj_status model_load(model *m, const char *path) { return checkpoint_load(m, NULL, path, NULL, NULL); }
