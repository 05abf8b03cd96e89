/* Arithmetic on the storage dtypes (runtime/widen.c): float16 and bfloat16
 * computed in float32 and rounded once, the integer ones in int64 and
 * truncated; the dtypes of the results as PyTorch gives them; in-place
 * writes; autograd; make_fx (the call recorded as made, or widened into its
 * pieces for a decomposition) and plans (lowered, allocation-free runs).
 * Values against torch: tests/conformance/make_cases_storage_compute.py. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "alloc_counter.h"
#include "test_util.h"
#include "tjit/decomp.h"
#include "tjit/graph.h"
#include "tjit/inplace.h"
#include "tjit/plan.h"

TestSuite(storage_compute, .init = test_scope_open, .fini = test_scope_close);

static const tj_dtype HALVES[] = {TJ_FLOAT16, TJ_BFLOAT16};

static tj_tensor *as(tj_tensor *x, tj_dtype dt)
{
    tj_tensor *y = tj_to_copy(x, (int)dt);
    cr_assert_not_null(y, "%s", tj_last_error());
    return y;
}

static tj_tensor *checked(tj_tensor *t)
{
    cr_assert_not_null(t, "%s", tj_last_error());
    return t;
}

/* An operator on float16 / bfloat16 gives the bits of the same operator on
 * the float32 values, rounded once: one conversion in, one out. */
Test(storage_compute, halves_compute_in_float32_and_round_once)
{
    tj_tensor *x = test_random_tensor(TJ_FLOAT32, 2, (int64_t[]){4, 6}, 1, -3, 3);
    tj_tensor *w = test_random_tensor(TJ_FLOAT32, 2, (int64_t[]){6, 5}, 2, -1, 1);
    for (int k = 0; k < 2; k++) {
        tj_dtype dt = HALVES[k];
        tj_tensor *h = as(x, dt), *hw = as(w, dt);
        tj_tensor *f = as(h, TJ_FLOAT32), *fw = as(hw, TJ_FLOAT32); /* the float32 values of the inputs */
        struct {
            const char *what;
            tj_tensor *got, *f32;
        } cases[] = {
            {"add", tj_add(h, h), tj_add(f, f)},
            {"exp", tj_exp(h), tj_exp(f)},
            {"mm", tj_mm(h, hw), tj_mm(f, fw)},
            {"sum", tj_sum(h, TJ_DTYPE_NONE), tj_sum(f, TJ_DTYPE_NONE)},
            {"softmax", tj_softmax(h, 1), tj_softmax(f, 1)},
            {"var", tj_var(h, (int64_t[]){0}, 1, 1, false), tj_var(f, (int64_t[]){0}, 1, 1, false)},
        };
        for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
            checked(cases[i].got);
            cr_expect_eq(tj_tensor_dtype(cases[i].got), dt, "%s", cases[i].what);
            test_expect_same_bits(cases[i].got, as(checked(cases[i].f32), dt), cases[i].what);
        }
    }
}

static void expect_ints(const tj_tensor *t, tj_dtype dt, int64_t n, const int64_t *want)
{
    cr_assert_not_null(t, "%s", tj_last_error());
    cr_assert_eq(tj_tensor_dtype(t), dt, "dtype %s", tj_dtype_name(tj_tensor_dtype(t)));
    test_expect_i64(as((tj_tensor *)t, TJ_INT64), n, want);
}

/* int64 arithmetic truncated is the narrow type's: overflow wraps as in
 * PyTorch; sum and cumsum of integers are int64; max.dim's values keep the
 * dtype and its indices are int64. */
Test(storage_compute, integers_wrap_and_take_torchs_result_dtypes)
{
    tj_tensor *a = as(test_i64(1, (int64_t[]){3}, (int64_t[]){INT32_MAX, -7, 100000}), TJ_INT32);
    tj_tensor *one = as(test_i64(1, (int64_t[]){3}, (int64_t[]){1, 2, 100000}), TJ_INT32);
    expect_ints(tj_add(a, one), TJ_INT32, 3, (int64_t[]){INT32_MIN, -5, 200000});
    expect_ints(tj_mul(a, one), TJ_INT32, 3, (int64_t[]){INT32_MAX, -14, 1410065408});
    expect_ints(tj_sum(a, TJ_DTYPE_NONE), TJ_INT64, 1, (int64_t[]){(int64_t)INT32_MAX + 99993});
    tj_tensor *values, *indices;
    cr_assert_eq(tj_max_dim(a, 0, false, &values, &indices), TJ_OK, "%s", tj_last_error());
    expect_ints(values, TJ_INT32, 1, (int64_t[]){INT32_MAX});
    expect_ints(indices, TJ_INT64, 1, (int64_t[]){0});
    expect_ints(tj_argmax(a, true, 0, false), TJ_INT64, 1, (int64_t[]){0});
    tj_tensor *u = as(test_i64(1, (int64_t[]){2}, (int64_t[]){0, 200}), TJ_UINT8);
    tj_tensor *v = as(test_i64(1, (int64_t[]){2}, (int64_t[]){1, 100}), TJ_UINT8);
    expect_ints(tj_sub(u, v), TJ_UINT8, 2, (int64_t[]){255, 100});
    expect_ints(tj_bitwise_and(a, one), TJ_INT32, 3, (int64_t[]){1, 0, 100000});
    tj_tensor *q = checked(tj_div(a, one));
    cr_expect_eq(tj_tensor_dtype(q), TJ_FLOAT32, "true division of integers is float32");
    /* int32 indices select as int64 ones do */
    tj_tensor *table = test_f32(1, (int64_t[]){4}, (float[]){10, 11, 12, 13});
    tj_tensor *idx = as(test_i64(1, (int64_t[]){2}, (int64_t[]){3, 1}), TJ_INT32);
    test_expect_f32(checked(tj_index_select(table, 0, idx)), (float[]){13, 11}, 2, 0);
}

/* result_type as torch: a 0-dim operand of a higher dtype does not promote
 * a tensor with dims of the same category, one with dims does; float16 with
 * bfloat16 is float32. */
Test(storage_compute, promotion_follows_result_type)
{
    tj_tensor *x = test_f32(1, (int64_t[]){2}, (float[]){1.0f, 2.0f});
    tj_tensor *h = as(x, TJ_FLOAT16), *b = as(x, TJ_BFLOAT16);
    tj_tensor *zero_dim = tj_scalar_tensor(tj_v_float(0.5), TJ_FLOAT32);
    cr_expect_eq(tj_tensor_dtype(checked(tj_add(h, zero_dim))), TJ_FLOAT16);
    cr_expect_eq(tj_tensor_dtype(checked(tj_add(h, x))), TJ_FLOAT32);
    cr_expect_eq(tj_tensor_dtype(checked(tj_add(h, b))), TJ_FLOAT32);
    tj_tensor *i = as(x, TJ_INT32);
    cr_expect_eq(tj_tensor_dtype(checked(tj_mul(i, h))), TJ_FLOAT16);
    cr_expect_eq(tj_tensor_dtype(checked(tj_add(i, tj_scalar_tensor(tj_v_int(1), TJ_INT64)))), TJ_INT32);
    /* a dtype argument decides: sum in float32, random numbers in float16 */
    cr_expect_eq(tj_tensor_dtype(checked(tj_sum(h, TJ_FLOAT32))), TJ_FLOAT32);
    cr_expect_eq(tj_tensor_dtype(checked(tj_rand((int64_t[]){3}, 1, TJ_FLOAT16))), TJ_FLOAT16);
    expect_ints(tj_arange_default(tj_v_int(3), TJ_INT32), TJ_INT32, 3, (int64_t[]){0, 1, 2});
}

/* An in-place operator writes the rounded value into self, returns self
 * and bumps its version once. */
Test(storage_compute, in_place_writes_back_rounded)
{
    tj_tensor *h = as(test_f32(1, (int64_t[]){2}, (float[]){1.0f, 2048.0f}), TJ_FLOAT16);
    uint32_t before = tj_tensor_version(h);
    tj_tensor *r = checked(tj_add_(h, tj_scalar_tensor(tj_v_float(1.0), TJ_FLOAT32), tj_v_int(1)));
    cr_expect_eq(r, h);
    cr_expect_eq(tj_tensor_version(h), before + 1);
    /* 2049 is no float16: it rounds to even, 2048 */
    test_expect_f32(as(h, TJ_FLOAT32), (float[]){2.0f, 2048.0f}, 2, 0);
}

/* Float16 and bfloat16 tensors carry gradients, computed in their dtype as
 * PyTorch does; integer ones refuse requires_grad. */
Test(storage_compute, halves_carry_gradients)
{
    tj_tensor *x = test_f32(1, (int64_t[]){3}, (float[]){1.5f, -2.0f, 0.25f});
    for (int k = 0; k < 2; k++) {
        tj_tensor *h = as(x, HALVES[k]);
        cr_assert_eq(tj_tensor_set_requires_grad(h, true), TJ_OK, "%s", tj_last_error());
        tj_tensor *g = test_grad1(h, tj_sum(tj_mul(h, h), TJ_DTYPE_NONE), NULL);
        cr_expect_eq(tj_tensor_dtype(g), HALVES[k]);
        test_expect_f32(as(g, TJ_FLOAT32), (float[]){3.0f, -4.0f, 0.5f}, 3, 0);
    }
    tj_tensor *i = as(x, TJ_INT32);
    cr_expect_eq(tj_tensor_set_requires_grad(i, true), TJ_ERR_DTYPE);
    cr_expect(strstr(tj_last_error(), "not int32"), "%s", tj_last_error());
}

/* What cannot be told apart is refused: an int64 result of an int32 self
 * could be a value (int32) or an index (int64). The operator's own errors
 * name the dtypes it computed in. */
Test(storage_compute, ambiguous_and_failing_calls_explain)
{
    tj_tensor *weight = as(test_i64(2, (int64_t[]){2, 2}, (int64_t[]){1, 2, 3, 4}), TJ_INT32);
    tj_tensor *r = tj_embedding(weight, test_i64(1, (int64_t[]){1}, (int64_t[]){1}), -1);
    test_expect_error(r, TJ_ERR_DTYPE, "aten::embedding", "result 0 of an int32 input");
    tj_tensor *h = as(test_f32(1, (int64_t[]){2}, (float[]){1, 2}), TJ_FLOAT16);
    test_expect_error(tj_bitwise_and(h, h), TJ_ERR_DTYPE, "aten::bitwise_and.Tensor",
                      "(the float16 arguments computed in float32)");
    /* a conversion that cannot be made (2^40 float32 elements) is the user's operator's error */
    tj_tensor *huge = tj_expand(tj_narrow(h, 0, 0, 1), (int64_t[]){(int64_t)1 << 40}, 1);
    test_expect_error(tj_sum(huge, TJ_DTYPE_NONE), TJ_ERR_OUT_OF_MEMORY, "aten::sum", "aten::_to_copy");
}

/* A written argument overlapping another one partly is refused, as ATen
 * refuses it (the widened copies would read the values before the call);
 * x.add_(x) stays allowed. A uint8 index is a mask, as in torch 1.13. */
Test(storage_compute, aliasing_and_uint8_masks_keep_their_meaning)
{
    tj_tensor *x = as(test_f32(1, (int64_t[]){4}, (float[]){1, 2, 3, 4}), TJ_FLOAT16);
    test_expect_error(tj_add_(tj_narrow(x, 0, 1, 3), tj_narrow(x, 0, 0, 3), tj_v_int(1)), TJ_ERR_INVALID_ARGUMENT,
                      "aten::add_.Tensor", "refer to a single memory location");
    test_expect_f32(as(x, TJ_FLOAT32), (float[]){1, 2, 3, 4}, 4, 0);
    checked(tj_add_(x, x, tj_v_int(1)));
    test_expect_f32(as(x, TJ_FLOAT32), (float[]){2, 4, 6, 8}, 4, 0);
    tj_tensor *mask = as(test_i64(1, (int64_t[]){4}, (int64_t[]){1, 0, 1, 0}), TJ_UINT8);
    tj_tensor *picked = checked(tj_index(x, &mask, 1));
    test_expect_f32(as(picked, TJ_FLOAT32), (float[]){2, 6}, 2, 0);
}

/* The other operands of an elementwise call take the narrow dtype first,
 * as TensorIterator casts them (values from torch 1.13): a Python number
 * rounds or wraps, so does a 0-dim tensor of a wider dtype; fill values and
 * clamp bounds that do not fit are refused; nan_to_num's infinities become
 * the dtype's largest finite values. */
Test(storage_compute, scalar_operands_take_the_narrow_dtype_first)
{
    tj_tensor *three = as(test_f32(1, (int64_t[]){1}, (float[]){3.0f}), TJ_BFLOAT16);
    test_expect_f32(as(checked(tj_mul_scalar(three, tj_v_float(1.1))), TJ_FLOAT32), (float[]){3.3125f}, 1, 0);
    tj_tensor *f32_zero_dim = tj_scalar_tensor(tj_v_float(1.1), TJ_FLOAT32);
    test_expect_f32(as(checked(tj_mul(three, f32_zero_dim)), TJ_FLOAT32), (float[]){3.3125f}, 1, 0);
    tj_tensor *tenth = as(test_f32(1, (int64_t[]){1}, (float[]){0.1f}), TJ_FLOAT16);
    test_expect_bool(checked(tj_eq_scalar(tenth, tj_v_float(0.1))), 1, (uint8_t[]){1});
    tj_tensor *u = as(test_i64(1, (int64_t[]){1}, (int64_t[]){255}), TJ_UINT8);
    test_expect_bool(checked(tj_eq_scalar(u, tj_v_int(-1))), 1, (uint8_t[]){1});
    tj_tensor *i8 = as(test_i64(1, (int64_t[]){1}, (int64_t[]){5}), TJ_INT8);
    test_expect_bool(checked(tj_lt_scalar(i8, tj_v_int(200))), 1, (uint8_t[]){0});
    test_expect_error(tj_clamp(i8, tj_v_int(200), tj_v_none()), TJ_ERR_INVALID_ARGUMENT, "aten::clamp",
                      "min 200 cannot be converted to type int8 without overflow");
    test_expect_error(tj_masked_fill(tenth, tj_scalar_tensor(tj_v_bool(true), TJ_BOOL), tj_v_float(1e5)),
                      TJ_ERR_INVALID_ARGUMENT, "aten::masked_fill.Scalar", "value 100000 cannot be converted");
    tj_tensor *inf = as(test_f32(1, (int64_t[]){2}, (float[]){INFINITY, -INFINITY}), TJ_FLOAT16);
    tj_tensor *finite = checked(tj_nan_to_num(inf, tj_v_none(), tj_v_none(), tj_v_none()));
    test_expect_f32(as(finite, TJ_FLOAT32), (float[]){65504.0f, -65504.0f}, 2, 0);
}

static tj_status mlp(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx, (void)n;
    tj_tensor *h = tj_relu(tj_addmm(in[2], in[0], in[1], tj_v_int(1), tj_v_int(1)));
    out[0] = tj_log_softmax(tj_layer_norm(h, (int64_t[]){4}, 1, NULL, NULL, 1e-5), 1);
    *n_out = 1;
    return out[0] ? TJ_OK : tj_last_status();
}

/* make_fx records the calls as made on float16 (as torch's make_fx); the
 * plan lowers them (conversions as nodes) and gives eager's bits; the core
 * table's decompositions run in float32 between conversions. */
Test(storage_compute, traced_and_replayed_as_eager)
{
    tj_tensor *in[3];
    in[0] = as(test_random_tensor(TJ_FLOAT32, 2, (int64_t[]){3, 5}, 3, -2, 2), TJ_FLOAT16);
    in[1] = as(test_random_tensor(TJ_FLOAT32, 2, (int64_t[]){5, 4}, 4, -1, 1), TJ_FLOAT16);
    in[2] = as(test_random_tensor(TJ_FLOAT32, 1, (int64_t[]){4}, 5, -1, 1), TJ_FLOAT16);
    const char *want[] = {"%arg0_1 : f16[3, 5]", "aten.addmm.default(", "aten._log_softmax.default("};
    test_expect_traced(mlp, in, 3, 1, want, 3, "aten._to_copy", 1e-3);
    tj_decomp_table *core = tj_core_decompositions();
    tj_graph *g = tj_make_fx(mlp, NULL, in, 3, core, TJ_TRACE_FAKE);
    tj_decomp_table_free(core);
    cr_assert_not_null(g, "%s", tj_last_error());
    char *text = tj_graph_to_string(g);
    cr_expect(strstr(text, "aten._to_copy.default(%arg0_1, dtype = torch.float32)"), "%s", text);
    cr_expect(strstr(text, "dtype = torch.float16)\n    return ("), "%s", text);
    cr_expect(test_only_primitives(g));
    free(text);
    tj_graph_free(g);
}

TestSuite(storage_compute_allocations, .init = count_allocations);

/* A plan of float16 calls runs with no allocation: the conversions are
 * nodes with arena blocks. */
Test(storage_compute_allocations, a_lowered_plan_run_allocates_nothing)
{
    tj_graph *g = tj_graph_parse("graph(%x : f16[2, 3], %w : f16[3, 3]):\n"
                                 "    %mm = aten.mm.default(%x, %w)\n"
                                 "    %relu = aten.relu.default(%mm)\n"
                                 "    return (%relu,)\n");
    cr_assert_not_null(g, "%s", tj_last_error());
    tj_plan *p = tj_compile(g, NULL);
    cr_assert_not_null(p, "%s", tj_last_error());
    tj_plan_context *c = tj_plan_context_new(p);
    cr_assert_not_null(c, "%s", tj_last_error());
    uint16_t x[6], w[9], out[6];
    for (int i = 0; i < 6; i++) x[i] = (uint16_t)(0x3c00 + i * 0x100); /* 1, 1.25, ... */
    for (int i = 0; i < 9; i++) w[i] = i % 4 == 0 ? 0x3c00 : 0; /* the identity */
    void *data[3] = {x, w, out};
    cr_assert_eq(tj_plan_run_ctx_memory(c, data, NULL), TJ_OK, "%s", tj_last_error());
    int64_t before = allocations_made();
    for (int i = 0; i < 100; i++) cr_assert_eq(tj_plan_run_ctx_memory(c, data, NULL), TJ_OK, "%s", tj_last_error());
    cr_expect_eq(allocations_made(), before, "100 runs made %lld allocations", (long long)(allocations_made() - before));
    cr_expect_arr_eq(out, x, sizeof x);
    tj_plan_free(p);
    tj_graph_free(g);
}
