/* tjit demo: a short tour of the tensor API, the dispatcher's modes and a
 * compiled function. */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "tjit/tjit.h"

static void show(const char *label, tj_tensor *t)
{
    char d[128];
    if (!t) {
        printf("%-28s error: %s\n", label, tj_last_error());
        return;
    }
    tj_tensor_describe(t, d, sizeof d);
    printf("%-28s %s = [", label, d);
    for (int64_t i = 0; i < tj_tensor_numel(t) && i < 8; i++) printf(i ? ", %g" : "%g", tj_tensor_item_at(t, i));
    printf("%s]\n", tj_tensor_numel(t) > 8 ? ", ..." : "");
}

/* gelu(x) * w: the function the demo compiles */
static tj_status gelu_scaled(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx, (void)n;
    out[0] = tj_mul(tj_gelu(in[0], "none"), in[1]);
    *n_out = 1;
    return out[0] ? TJ_OK : tj_last_status();
}

static tj_status print_graph(void *ctx, tj_graph *g)
{
    (void)ctx;
    return tj_graph_print(g, stdout);
}

/* A compiled function traces once per input signature and replays the plan. */
static void compiled_function(tj_tensor *x, tj_tensor *w)
{
    printf("\nA compiled function (tj_jit, as torch.compile) traces and compiles once per input signature:\n");
    tj_jit *f = tj_jit_new(gelu_scaled, NULL, &(tj_jit_options){.on_graph = print_graph, .log = stdout});
    tj_tensor *rows[3] = {x, tj_mul_scalar(x, tj_v_int(2)), tj_slice(x, 0, true, 0, true, 1, 1)};
    const char *labels[3] = {"f(x, w)", "f(2 x, w) (replayed)", "f(x[:1], w) (new shape)"};
    for (int i = 0; f && i < 3; i++) {
        tj_tensor *in[2] = {rows[i], w}, *out[1] = {NULL};
        int n_out;
        tj_jit_run(f, in, 2, out, 1, &n_out);
        show(labels[i], out[0]);
    }
    /* as torch.compile's AOTAutograd: the joint graph split in two, both compiled */
    printf("\nWith w requiring grad, the output gets a history whose backward is compiled too (the forward\n"
           "graph returns what the backward graph reads):\n");
    tj_tensor *wg = tj_clone(w), *out[1] = {NULL};
    tj_tensor_set_requires_grad(wg, true);
    tj_tensor *in[2] = {x, wg};
    int n_out;
    if (f && tj_jit_run(f, in, 2, out, 1, &n_out) == TJ_OK && tj_backward(tj_sum(out[0], TJ_DTYPE_NONE), NULL) == TJ_OK)
        show("w.grad (sum(f(x, w)))", tj_tensor_grad(wg));
    else
        printf("error: %s\n", tj_last_error());
    tj_jit_statistics st = {0};
    tj_jit_stats(f, &st);
    printf("%" PRId64 " calls, %" PRId64 " traced and compiled\n", st.calls, st.compiles);
    tj_jit_free(f);
}

int cmd_demo(int argc, char **argv)
{
    if (argc > 1) {
        bool help = argc == 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"));
        /* worded as getopt words it for the other commands */
        if (!help)
            fprintf(stderr, argv[1][0] == '-' ? "tjit demo: unrecognized option '%s'\n" : "tjit demo: unexpected argument '%s'\n\n",
                    argv[1]);
        fprintf(help ? stdout : stderr, "usage: tjit demo\n\nA short tour of the tensor API, the dispatcher's modes and a compiled function.\n");
        return help ? 0 : 2;
    }
    tj_scope *scope = tj_scope_begin();
    float xs[6] = {-1.5f, -0.5f, 0.0f, 0.5f, 1.0f, 2.0f};
    float ws[3] = {10, 20, 30};
    tj_tensor *x = tj_tensor_from_data(TJ_FLOAT32, 2, (int64_t[]){2, 3}, xs);
    tj_tensor *w = tj_tensor_from_data(TJ_FLOAT32, 1, (int64_t[]){3}, ws);
    show("x", x);
    show("x + w (broadcast)", tj_add(x, w));
    show("gelu(x)", tj_gelu(x, "none"));
    show("sum(x, dim=1)", tj_sum_dim(x, (int64_t[]){1}, 1, false, TJ_DTYPE_NONE));
    show("x @ x.t()", tj_mm(x, tj_t(x)));
    show("x + [1, 2] (error path)", tj_add(x, tj_tensor_from_data(TJ_FLOAT32, 1, (int64_t[]){2}, ws)));

    printf("\nA logger mode sees every call the dispatcher makes:\n");
    tj_logger_mode *logger = tj_logger_mode_new(stdout);
    tj_mode_push(tj_logger_mode_base(logger));
    tj_tensor *y = tj_softmax(tj_mul(x, w), -1);
    tj_mode_pop(tj_logger_mode_base(logger));
    tj_logger_mode_free(logger);
    show("softmax(x * w, -1)", y);
    compiled_function(x, w);
    tj_scope_end(scope);
    return 0;
}
