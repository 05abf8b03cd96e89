/* Static memory planning (tracer/memory_plan.c) on the models' plans, read
 * back from tj_plan_print_memory: no two blocks live at one step share a
 * byte (an in-place result takes its dying donor's block exactly), at 1
 * and 2 threads and without placement by last writer; and at one thread the
 * placement that knows every lifetime beforehand brings the arena down to
 * the bytes live at once where best fit in schedule order left gaps. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models.h"
#include "step.h"
#include "test_util.h"
#include "tjit/tjit.h"

#define MAX_BLOCKS 4096

typedef struct placed_value {
    char name[96];
    size_t off, size;
    int first, last; /* steps, inclusive */
    bool inplace;
} placed_value;

/* The arena values of p's memory plan (those in the write-back fallback
 * left out), into v; returns how many. */
static int read_placement(const tj_plan *p, placed_value *v)
{
    char *text = test_plan_memory_text(p);
    int n = 0;
    for (char *line = strchr(text, '\n'); line && line[1]; line = strchr(line + 1, '\n')) {
        char *at = strstr(line, " offset ");
        char *end = strchr(line + 1, '\n');
        if (!at || (end && at > end)) continue; /* a fallback block */
        cr_assert_lt(n, MAX_BLOCKS);
        placed_value *x = &v[n++];
        cr_assert_eq(sscanf(line + 1, " %%%95s", x->name), 1, "%.200s", line + 1);
        cr_assert_eq(sscanf(at, " offset %zu size %zu steps %d..%d", &x->off, &x->size, &x->first, &x->last), 4,
                     "%.200s", line + 1);
        char *tag = strstr(at, "(in place)");
        x->inplace = tag && (!end || tag < end);
    }
    free(text);
    return n;
}

/* The one way two blocks live at one step may share bytes: b computed in
 * place over a, which dies at the step b is made. */
static bool in_place_over(const placed_value *a, const placed_value *b)
{
    return b->inplace && a->off == b->off && a->size == b->size && a->last == b->first;
}

static void expect_disjoint_while_live(const tj_plan *p, const char *what)
{
    static placed_value v[MAX_BLOCKS];
    int n = read_placement(p, v);
    cr_assert_gt(n, 0, "%s: no arena values", what);
    for (int i = 0; i < n; i++) {
        for (int j = i + 1; j < n; j++) {
            const placed_value *a = &v[i], *b = &v[j];
            bool live_together = a->first <= b->last && b->first <= a->last;
            bool share_bytes = a->off < b->off + b->size && b->off < a->off + a->size && a->size && b->size;
            if (live_together && share_bytes && !in_place_over(a, b) && !in_place_over(b, a))
                cr_expect(false, "%s: %%%s (offset %zu, %zu bytes, steps %d..%d) and %%%s (offset %zu, %zu bytes, steps %d..%d) share bytes",
                          what, a->name, a->off, a->size, a->first, a->last, b->name, b->off, b->size, b->first, b->last);
        }
    }
}

static tj_plan *compile_model(const char *id, step_kind kind, bool decompose, const tj_compile_options *opts)
{
    model m;
    cr_assert_eq(model_create(model_find(id), 0, &m), TJ_OK, "%s", tj_last_error());
    tj_decomp_table *table = decompose ? tj_core_decompositions() : NULL;
    tj_graph *g = step_trace(&m, kind, 0, table, TJ_TRACE_FAKE);
    cr_assert_not_null(g, "%s: %s", id, tj_last_error());
    tj_plan *p = tj_compile(g, opts);
    cr_assert_not_null(p, "%s: %s", id, tj_last_error());
    tj_graph_free(g);
    tj_decomp_table_free(table);
    model_free(&m);
    return p;
}

Test(memory_plan, no_two_live_blocks_share_a_byte_in_any_model_plan, .timeout = 600)
{
    const char *ids[] = {"mlp", "cnn", "gpt"};
    struct {
        int threads;
        tj_compile_options opts;
    } configs[] = {{1, {0}}, {2, {0}}, {2, {.no_thread_placement = true}}};
    for (size_t c = 0; c < sizeof configs / sizeof *configs; c++) {
        tj_set_num_threads(configs[c].threads);
        for (size_t i = 0; i < sizeof ids / sizeof *ids; i++)
            for (int kind = 0; kind < 2; kind++)
                for (int decompose = 0; decompose < 2; decompose++) {
                    char what[128];
                    snprintf(what, sizeof what, "%s %s%s, %d thread(s)%s", ids[i], kind ? "training step" : "forward",
                             decompose ? " decomposed" : "", configs[c].threads,
                             configs[c].opts.no_thread_placement ? ", no thread placement" : "");
                    tj_plan *p = compile_model(ids[i], kind ? STEP_TRAIN : STEP_FORWARD, decompose, &configs[c].opts);
                    tj_plan_statistics s = test_plan_stats(p);
                    cr_expect_geq(s.arena_bytes, s.lower_bound_bytes, "%s", what);
                    expect_disjoint_while_live(p, what);
                    tj_plan_free(p);
                }
    }
}

/* Best fit in schedule order left the cnn's training step 19% above the
 * bytes live at once (12.35 against 10.34 MiB) and its decomposed forward
 * pass 8% (6.64 against 6.17 MiB); placed largest block first, neither has
 * a gap. */
Test(memory_plan, offline_placement_reaches_the_lower_bound_at_one_thread, .timeout = 300)
{
    tj_set_num_threads(1);
    struct {
        step_kind kind;
        bool decompose;
    } cases[] = {{STEP_TRAIN, false}, {STEP_FORWARD, true}};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        tj_plan *p = compile_model("cnn", cases[i].kind, cases[i].decompose, NULL);
        tj_plan_statistics s = test_plan_stats(p);
        cr_expect_eq(s.arena_bytes, s.lower_bound_bytes, "cnn case %zu: arena %zu, lower bound %zu", i,
                     s.arena_bytes, s.lower_bound_bytes);
        tj_plan_free(p);
    }
}
