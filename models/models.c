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
