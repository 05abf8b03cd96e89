/* Plans run on memory the caller lends (tj_plan_run_ctx_memory, the path of
 * python/tjit.py): values in the caller's arrays, strides, an address given
 * twice being one tensor, overlaps found by address, every refused argument
 * named without a run, and no allocation in a run. */
#include <criterion/criterion.h>
#include <stdint.h>
#include <string.h>

#include "alloc_counter.h"
#include "test_util.h"
#include "tjit/graph.h"
#include "tjit/plan.h"

TestSuite(plan_memory, .init = test_scope_open, .fini = test_scope_close);

typedef struct compiled {
    tj_graph *g;
    tj_plan *p;
    tj_plan_context *c;
} compiled;

static compiled compile_text(const char *text)
{
    compiled k = {.g = tj_graph_parse(text)};
    cr_assert_not_null(k.g, "%s", tj_last_error());
    k.p = tj_compile(k.g, NULL);
    cr_assert_not_null(k.p, "%s", tj_last_error());
    k.c = tj_plan_context_new(k.p);
    cr_assert_not_null(k.c, "%s", tj_last_error());
    return k;
}

static void release(compiled *k)
{
    tj_plan_free(k->p); /* frees its contexts */
    tj_graph_free(k->g);
}

static const char *ADD_RELU = "graph(%x : f32[2, 3], %y : f32[3]):\n"
                              "    %add = aten.add.Tensor(%x, %y)\n"
                              "    %relu = aten.relu.default(%add)\n"
                              "    %gt = aten.gt.Scalar(%relu, 2)\n"
                              "    return (%relu, %gt)\n";

Test(plan_memory, runs_on_the_callers_arrays)
{
    compiled k = compile_text(ADD_RELU);
    float x[6] = {-1, 2, -3, 4, -5, 6}, y[3] = {1, 1, 0.5f}, relu[6];
    bool gt[6];
    cr_assert_eq(tj_plan_run_ctx_memory(k.c, (void *[]){x, y, relu, gt}, NULL), TJ_OK, "%s", tj_last_error());
    const float want[6] = {0, 3, 0, 5, 0, 6.5f};
    const bool want_gt[6] = {false, true, false, true, false, true};
    cr_expect_arr_eq(relu, want, sizeof want);
    cr_expect_arr_eq(gt, want_gt, sizeof want_gt);

    /* x column-major (strides 1, 2), y every other element of a buffer; gt left in the context */
    float xt[6] = {-1, 4, 2, -5, -3, 6}, ys[5] = {1, 99, 1, 99, 0.5f};
    int64_t strides[4 * TJ_MAX_DIMS] = {0};
    memcpy(strides, (int64_t[]){1, 2}, 2 * sizeof(int64_t));
    strides[TJ_MAX_DIMS] = 2;
    memcpy(strides + 2 * TJ_MAX_DIMS, (int64_t[]){3, 1}, 2 * sizeof(int64_t));
    memset(relu, 0, sizeof relu);
    cr_assert_eq(tj_plan_run_ctx_memory(k.c, (void *[]){xt, ys, relu, NULL}, strides), TJ_OK, "%s", tj_last_error());
    cr_expect_arr_eq(relu, want, sizeof want);
    test_expect_close(tj_plan_context_output(k.c, 1), (double[]){0, 1, 0, 1, 0, 1}, 6, 0, 0);
    release(&k);
}

/* One address with one layout is one tensor (an output that is an input,
 * as an array given twice in Python); other overlaps are found by address. */
Test(plan_memory, an_address_given_twice_is_one_tensor)
{
    compiled k = compile_text("graph(%a : f32[2, 2], %b : f32[2, 2]):\n"
                              "    %mm = aten.mm.default(%a, %b)\n"
                              "    return (%mm,)\n");
    float m[4] = {1, 2, 3, 4};
    cr_assert_eq(tj_plan_run_ctx_memory(k.c, (void *[]){m, m, m}, NULL), TJ_OK, "%s", tj_last_error());
    const float want[4] = {7, 10, 15, 22};
    cr_expect_arr_eq(m, want, sizeof want, "the product was copied in after the operands were read");
    release(&k);

    k = compile_text("graph(%a : f32[3], %b : f32[3]):\n"
                     "    %add_ = aten.add_.Tensor(%a, %b)\n"
                     "    return (%add_,)\n");
    float v[4] = {1, 2, 3, 4}, out[3];
    cr_expect_eq(tj_plan_run_ctx_memory(k.c, (void *[]){v, v + 1, out}, NULL), TJ_ERR_UNSUPPORTED,
                 "v[0:3] += v[1:4] would read elements already written");
    cr_expect(strstr(tj_last_error(), "refer to a single memory location"), "%s", tj_last_error());
    const float untouched[4] = {1, 2, 3, 4};
    cr_expect_arr_eq(v, untouched, sizeof untouched);
    cr_assert_eq(tj_plan_run_ctx_memory(k.c, (void *[]){v, v, out}, NULL), TJ_OK, "%s", tj_last_error());
    cr_expect(v[0] == 2 && v[1] == 4 && v[2] == 6 && out[2] == 6, "x += x, as eagerly");
    release(&k);
}

Test(plan_memory, refused_arguments_are_named_and_leave_the_context_usable)
{
    compiled k = compile_text(ADD_RELU);
    float x[7] = {0}, y[3] = {0}, relu[6];
    bool gt[6];
    cr_expect_eq(tj_plan_run_ctx_memory(NULL, (void *[]){x, y, relu, gt}, NULL), TJ_ERR_INVALID_ARGUMENT);
    cr_expect_eq(tj_plan_run_ctx_memory(k.c, NULL, NULL), TJ_ERR_INVALID_ARGUMENT);
    cr_expect(strstr(tj_last_error(), "NULL data for 4 arrays"), "%s", tj_last_error());
    cr_expect_eq(tj_plan_run_ctx_memory(k.c, (void *[]){x, NULL, relu, gt}, NULL), TJ_ERR_INVALID_ARGUMENT);
    cr_expect(strstr(tj_last_error(), "tj_plan_run_memory: input 1: NULL data for 12 bytes"), "%s", tj_last_error());
    cr_expect_eq(tj_plan_run_ctx_memory(k.c, (void *[]){(char *)x + 2, y, relu, gt}, NULL), TJ_ERR_INVALID_ARGUMENT);
    cr_expect(strstr(tj_last_error(), "input 0: data at"), "%s", tj_last_error());
    cr_expect(strstr(tj_last_error(), "not aligned to its 4-byte float32 elements"), "%s", tj_last_error());
    int64_t strides[4 * TJ_MAX_DIMS] = {3, 1, [TJ_MAX_DIMS] = -1, [2 * TJ_MAX_DIMS] = 3, 1, [3 * TJ_MAX_DIMS] = 3, 1};
    cr_expect_eq(tj_plan_run_ctx_memory(k.c, (void *[]){x, y + 2, relu, gt}, strides), TJ_ERR_UNSUPPORTED);
    cr_expect(strstr(tj_last_error(), "input 1: stride -1 of dim 0 is negative"), "%s", tj_last_error());
    strides[TJ_MAX_DIMS] = 1;
    strides[2 * TJ_MAX_DIMS] = INT64_MAX / 2;
    cr_expect_eq(tj_plan_run_ctx_memory(k.c, (void *[]){x, y, relu, gt}, strides), TJ_ERR_OVERFLOW);
    cr_expect(strstr(tj_last_error(), "output 0: the strides reach past int64 bytes"), "%s", tj_last_error());
    float out_of_place[6] = {0};
    cr_expect_eq(tj_plan_run_ctx_memory(k.c, (void *[]){x, y, out_of_place, out_of_place + 1}, NULL),
                 TJ_ERR_INVALID_ARGUMENT);
    cr_expect(strstr(tj_last_error(), "outputs 0 and 1 overlap in memory"), "%s", tj_last_error());
    cr_assert_eq(tj_plan_run_ctx_memory(k.c, (void *[]){x, y, out_of_place, gt}, NULL), TJ_OK, "%s",
                 tj_last_error());
    release(&k);
}

TestSuite(plan_memory_allocations, .init = count_allocations);

Test(plan_memory_allocations, a_run_allocates_nothing)
{
    compiled k = compile_text(ADD_RELU);
    float x[6] = {-1, 2, -3, 4, -5, 6}, y[3] = {1, 1, 0.5f}, relu[6];
    bool gt[6];
    void *data[4] = {x, y, relu, gt};
    cr_assert_eq(tj_plan_run_ctx_memory(k.c, data, NULL), TJ_OK, "%s", tj_last_error());
    int64_t before = allocations_made();
    for (int i = 0; i < 100; i++) cr_assert_eq(tj_plan_run_ctx_memory(k.c, data, NULL), TJ_OK, "%s", tj_last_error());
    cr_expect_eq(allocations_made(), before, "100 runs made %lld allocations", (long long)(allocations_made() - before));
    cr_expect_float_eq(relu[5], 6.5f, 0);
    release(&k);
}
