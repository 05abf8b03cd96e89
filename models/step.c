/* Traced functions of the models (see step.h). */
#include <string.h>

#include "step.h"

typedef struct step_ctx {
    model *m;
} step_ctx;

static tj_status forward_fn(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    step_ctx *s = ctx;
    out[0] = s->m->def->forward(s->m, in, in[n - 1]);
    *n_out = 1;
    return out[0] ? TJ_OK : tj_last_status();
}

tj_graph *step_trace(model *m, step_kind kind, const tj_decomp_table *table, tj_tracing_mode mode)
{
    if (kind != STEP_FORWARD) {
        tj_error(TJ_ERR_UNSUPPORTED, "%s: tracing the training step needs autograd and optimisers", m->def->id);
        return NULL;
    }
    tj_scope *scope = tj_scope_begin();
    tj_tensor *inputs[MODEL_MAX_PARAMS + 1];
    int n = 0;
    for (int i = 0; i < m->n_params; i++) inputs[n++] = m->params[i];
    inputs[n++] = tj_zeros(m->def->x_shape, m->def->x_ndim, (int)m->def->x_dtype);
    step_ctx ctx = {m};
    tj_graph *g = inputs[n - 1] ? tj_make_fx(forward_fn, &ctx, inputs, n, table, mode) : NULL;
    for (int i = 0; g && i < m->n_params; i++) {
        char name[128];
        /* placeholders named like the state_dict: fc1.weight -> fc1_weight */
        size_t k = 0;
        for (const char *p = m->names[i]; *p && k + 1 < sizeof name; p++) name[k++] = *p == '.' ? '_' : *p;
        name[k] = 0;
        tj_graph_set_input_name(g, i, name);
    }
    if (g) tj_graph_set_input_name(g, m->n_params, "x");
    tj_scope_end(scope);
    return g;
}
