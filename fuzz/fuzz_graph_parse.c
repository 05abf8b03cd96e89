/* libFuzzer target: the graph text parser (tj_graph_parse), and what a
 * parsed graph goes through next. A text that parses must print back to a
 * text that parses and prints the same; the graph then runs through the
 * interpreter, the passes, tj_compile and tj_plan_run on inputs of its
 * placeholders' types. Every failure must give an error with a message. */
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"
#include "tracer/graph_internal.h"

FUZZ_INITIALIZE_DEFAULT

/* A contiguous input of the placeholder's dtype and shape, small values
 * (valid as indices into small dims). */
static tj_tensor *make_input(const tj_gvalue *v)
{
    tj_tensor *t = tj_tensor_empty(v->dtype, v->ndim, v->shape);
    if (!t) return NULL;
    void *d = tj_tensor_data(t);
    for (int64_t i = 0; i < tj_tensor_numel(t); i++) switch (v->dtype) {
        case TJ_FLOAT32: ((float *)d)[i] = (float)(i % 7) - 3.0f; break;
        case TJ_FLOAT64: ((double *)d)[i] = (double)(i % 5) - 2.0; break;
        case TJ_INT64: ((int64_t *)d)[i] = i % 2; break;
        case TJ_BOOL: ((bool *)d)[i] = i % 3 == 0; break;
        default: memset((char *)d + i * (int64_t)tj_dtype_size(v->dtype), 0, tj_dtype_size(v->dtype)); break;
        }
    return t;
}

/* Reprinting a parsed graph gives text that parses to the same print. */
static void check_round_trip(const tj_graph *g)
{
    char *printed = tj_graph_to_string(g);
    if (!printed) return;
    tj_graph *again = tj_graph_parse(printed);
    if (!again) {
        if (tj_last_status() == TJ_ERR_OUT_OF_MEMORY) return free(printed);
        fprintf(stderr, "the printed graph does not parse: %s\n%s", tj_last_error(), printed);
        abort();
    }
    char *reprinted = tj_graph_to_string(again);
    if (reprinted && strcmp(reprinted, printed)) {
        fprintf(stderr, "the graph prints differently after a round trip:\n%s\n---\n%s", printed, reprinted);
        abort();
    }
    free(reprinted);
    free(printed);
    tj_graph_free(again);
}

static void run(tj_graph *g)
{
    int n = tj_graph_num_inputs(g);
    tj_tensor **inputs = calloc((size_t)n + 1, sizeof *inputs);
    tj_tensor **outs = calloc(TJ_MAX_GRAPH_OUTPUTS, sizeof *outs);
    bool ok = inputs && outs;
    for (int i = 0; ok && i < g->n_nodes; i++) {
        const tj_gnode *node = &g->nodes[i];
        if (node->kind != TJ_NODE_PLACEHOLDER) continue;
        ok = (inputs[node->input_index] = make_input(&g->values[node->outs[0]])) != NULL;
    }
    if (ok) {
        tj_scope *s = tj_scope_begin();
        if (tj_graph_run(g, inputs, n, outs) != TJ_OK) fuzz_expect_error("tj_graph_run");
        tj_plan *plan = tj_compile(g, NULL);
        if (!plan) fuzz_expect_error("tj_compile");
        else if (tj_plan_run(plan, inputs, n, outs) != TJ_OK) fuzz_expect_error("tj_plan_run");
        tj_plan_free(plan);
        tj_scope_end(s);
    }
    for (int i = 0; inputs && i < n; i++) tj_tensor_release(inputs[i]);
    free(inputs);
    free(outs);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (!text) return 0;
    memcpy(text, data, size);
    text[size] = 0;
    tj_clear_error();
    tj_graph *g = tj_graph_parse(text);
    free(text);
    if (!g) {
        fuzz_expect_error("tj_graph_parse");
        return 0;
    }
    check_round_trip(g);
    run(g);
    static const tj_graph_pass passes[] = {tj_pass_functionalize, tj_pass_dead_code, tj_pass_cse, tj_pass_noop};
    for (size_t i = 0; i < sizeof passes / sizeof *passes; i++) {
        tj_clear_error();
        if (passes[i](g) < 0) {
            fuzz_expect_error("a graph pass");
            break;
        }
        check_round_trip(g);
    }
    tj_graph_free(g);
    return 0;
}
