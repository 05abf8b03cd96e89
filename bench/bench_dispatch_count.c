/* Instruction counts of the dispatch micro-benchmark (WORKLOADS.md
 * `dispatch`), for callgrind: timings on this shared machine swing by 2x,
 * instruction counts repeat exactly.
 *
 *   valgrind --tool=callgrind --toggle-collect=counted_calls \
 *       --callgrind-out-file=cg.out build/bench/bench_dispatch_count 20000 [mode]
 *   callgrind_annotate cg.out | grep 'PROGRAM TOTALS'     # / 20000 = per call
 *
 * Only counted_calls is collected: N calls of tj_add on two float32[1]
 * tensors, each result released, after a warm-up (storage cache, uid block,
 * lazy initialisation). With `mode`, a pass-through mode that redispatches
 * is pushed first. One thread. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tjit/tjit.h"

static tj_status pass_through(tj_mode *mode, const tj_op *op, const tj_value *args, int nargs, tj_value *outs)
{
    return tj_redispatch(mode, op, args, nargs, outs);
}

static void add_calls(tj_tensor *a, tj_tensor *b, int n)
{
    for (int i = 0; i < n; i++) {
        tj_tensor *r = tj_add(a, b);
        if (!r) {
            fprintf(stderr, "bench_dispatch_count: tj_add: %s\n", tj_last_error());
            exit(1);
        }
        tj_tensor_release(r);
    }
}

/* The collected part (callgrind --toggle-collect=counted_calls). */
__attribute__((noinline)) void counted_calls(tj_tensor *a, tj_tensor *b, int n) { add_calls(a, b, n); }

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 20000;
    bool moded = argc > 2 && strcmp(argv[2], "mode") == 0;
    tj_set_num_threads(1);
    const int64_t one[1] = {1};
    tj_tensor *a = tj_tensor_from_data(TJ_FLOAT32, 1, one, (float[]){1});
    tj_tensor *b = tj_tensor_from_data(TJ_FLOAT32, 1, one, (float[]){2});
    tj_mode mode = {pass_through, NULL, "pass-through"};
    if (!a || !b || (moded && tj_mode_push(&mode) != TJ_OK)) {
        fprintf(stderr, "bench_dispatch_count: %s\n", tj_last_error());
        return 1;
    }
    add_calls(a, b, 100); /* warm-up, not collected */
    counted_calls(a, b, n);
    if (moded) tj_mode_pop(&mode);
    printf("%d calls of tj_add f32[1] + f32[1]%s\n", n, moded ? " under one pass-through mode" : "");
    tj_tensor_release(a);
    tj_tensor_release(b);
    return 0;
}
