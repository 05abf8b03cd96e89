/* tjit demo: a short tour of the tensor API and the dispatcher's modes. */
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

int cmd_demo(int argc, char **argv)
{
    if (argc > 1) {
        bool help = argc == 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"));
        /* worded as getopt words it for the other commands */
        if (!help)
            fprintf(stderr, argv[1][0] == '-' ? "tjit demo: unrecognized option '%s'\n" : "tjit demo: unexpected argument '%s'\n\n",
                    argv[1]);
        fprintf(help ? stdout : stderr, "usage: tjit demo\n\nA short tour of the tensor API and the dispatcher's modes.\n");
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
    tj_scope_end(scope);
    return 0;
}
