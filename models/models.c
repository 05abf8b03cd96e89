/* The model registry, creation from a seed, and parameter files. */
#include <stdlib.h>
#include <string.h>

#include "models.h"

extern const model_def mlp_def, cnn_def, gpt_def, block768_def;
static const model_def *const all_models[] = {&mlp_def, &cnn_def, &gpt_def, &block768_def};

const model_def *model_find(const char *id)
{
    for (size_t i = 0; id && i < sizeof all_models / sizeof *all_models; i++)
        if (!strcmp(all_models[i]->id, id)) return all_models[i];
    return NULL;
}

tj_status model_create(const model_def *def, uint64_t seed, model *out)
{
    memset(out, 0, sizeof *out);
    out->def = def;
    tj_manual_seed(seed);
    tj_status st = def->init(out);
    if (st != TJ_OK) model_free(out);
    return st;
}

void model_free(model *m)
{
    for (int i = 0; i < m->n_params; i++) {
        tj_tensor_release(m->params[i]);
        free((char *)m->names[i]);
    }
    tj_tensor_release(m->causal_mask);
    memset(m, 0, sizeof *m);
}

tj_status model_save(const model *m, const char *path)
{
    return tj_safetensors_save(path, m->names, m->params, m->n_params);
}

tj_status model_load(model *m, const char *path)
{
    tj_safetensors *f = tj_safetensors_load(path);
    if (!f) return tj_last_status();
    tj_status st = TJ_OK;
    tj_tensor *loaded[MODEL_MAX_PARAMS];
    for (int i = 0; i < m->n_params && st == TJ_OK; i++) {
        tj_tensor *t = tj_safetensors_get(f, m->names[i]);
        const tj_tensor *p = m->params[i];
        char a[96], b[96];
        if (!t) st = tj_error(TJ_ERR_NOT_FOUND, "%s: '%s' has no parameter '%s'", m->def->id, path, m->names[i]);
        else if (tj_tensor_dtype(t) != tj_tensor_dtype(p) || tj_tensor_ndim(t) != tj_tensor_ndim(p) ||
                 memcmp(tj_tensor_shape(t), tj_tensor_shape(p), sizeof(int64_t) * (size_t)tj_tensor_ndim(p)) != 0) {
            tj_tensor_describe(t, a, sizeof a);
            tj_tensor_describe(p, b, sizeof b);
            st = tj_error(TJ_ERR_SHAPE, "%s: parameter '%s' in '%s' is %s, the model has %s", m->def->id, m->names[i], path, a, b);
        }
        loaded[i] = t;
    }
    if (st == TJ_OK && tj_safetensors_count(f) != m->n_params)
        st = tj_error(TJ_ERR_INVALID_ARGUMENT, "%s: '%s' holds %d tensors, the model has %d parameters", m->def->id, path,
                      tj_safetensors_count(f), m->n_params);
    /* all checked: only now replace the parameters, so a bad file changes nothing */
    for (int i = 0; st == TJ_OK && i < m->n_params; i++) {
        tj_tensor_release(m->params[i]);
        m->params[i] = tj_tensor_retain(loaded[i]);
    }
    tj_safetensors_free(f);
    return st;
}
