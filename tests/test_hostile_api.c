/* Hostile inputs to the typed operator API (issue 9; ops.h and inplace.h),
 * continued from test_hostile_ops.c, which sweeps every operator through
 * tj_dispatch: here the parts only the typed functions have. Array arguments
 * passed as a pointer and a length (NULL with a positive length, negative,
 * too long), result pointers (NULL where one is required, NULL where a
 * result is not wanted), the in-place and functional forms of inplace.h
 * with NULL tensors, and sizes so large that the dispatcher cannot allocate
 * the output. Each call must fail with a message naming the ATen operator
 * and the argument, leave its inputs unchanged, and leak nothing. */
#include <criterion/criterion.h>
#include <string.h>

#include "alloc_counter.h"
#include "hostile.h"

TestSuite(hostile_api, .init = count_allocations);

Test(hostile_api, a_null_array_with_a_positive_length_is_refused_naming_the_argument)
{
    int64_t base = live_allocations();
    tj_tensor *x = ramp(2, I64(2, 3), 0);
    cr_expect_null(tj_view(x, NULL, 2));
    EXPECT_ERROR(TJ_ERR_INVALID_ARGUMENT, "aten::view", "'size' is a NULL array of length 2");
    cr_expect_null(tj_zeros(NULL, 3, -1));
    EXPECT_ERROR(TJ_ERR_INVALID_ARGUMENT, "aten::zeros", "'size' is a NULL array of length 3");
    cr_expect_null(tj_sum_dim(x, NULL, 1, false, -1));
    EXPECT_ERROR(TJ_ERR_INVALID_ARGUMENT, "aten::sum.dim_IntList", "'dim' is a NULL array of length 1");
    cr_expect_null(tj_cat(NULL, 2, 0));
    EXPECT_ERROR(TJ_ERR_INVALID_ARGUMENT, "aten::cat", "'tensors' is a NULL array of length 2");
    tj_tensor *mean = NULL, *rstd = NULL, *out = NULL, *gi = NULL;
    cr_assert_eq(tj_native_layer_norm(x, I64(3), 1, NULL, NULL, 1e-5, &out, &mean, &rstd), TJ_OK, "%s",
                 tj_last_error());
    cr_expect_eq(tj_native_layer_norm_backward(x, x, I64(3), 1, mean, rstd, NULL, NULL, NULL, &gi, NULL, NULL),
                 TJ_ERR_INVALID_ARGUMENT);
    EXPECT_ERROR(TJ_ERR_INVALID_ARGUMENT, "aten::native_layer_norm_backward", "'output_mask' is a NULL array");
    cr_expect_null(gi);
    tj_tensor_release(out);
    tj_tensor_release(mean);
    tj_tensor_release(rstd);
    expect_values(x, (const float[]){0, 1, 2, 3, 4, 5}, 6);
    tj_tensor_release(x);
    cr_expect_eq(live_allocations(), base);
}

Test(hostile_api, negative_and_overlong_array_lengths_are_refused_naming_the_length)
{
    int64_t base = live_allocations();
    tj_tensor *x = ramp(2, I64(2, 3), 0);
    cr_expect_null(tj_view(x, I64(6), -1));
    EXPECT_ERROR(TJ_ERR_INVALID_ARGUMENT, "aten::view", "'size' has a negative length (-1)");
    cr_expect_null(tj_cat((tj_tensor *[]){x}, -3, 0));
    EXPECT_ERROR(TJ_ERR_INVALID_ARGUMENT, "aten::cat", "'tensors' has a negative length (-3)");
    int64_t ones[65];
    for (int i = 0; i < 65; i++) ones[i] = 1;
    cr_expect_null(tj_ones(ones, 65, -1));
    EXPECT_ERROR(TJ_ERR_INVALID_ARGUMENT, "aten::ones", "'size' has 65 elements, more than 64");
    cr_expect_null(tj_permute(x, ones, 65));
    EXPECT_ERROR(TJ_ERR_INVALID_ARGUMENT, "aten::permute", "'dims' has 65 elements");
    expect_values(x, (const float[]){0, 1, 2, 3, 4, 5}, 6);
    tj_tensor_release(x);
    cr_expect_eq(live_allocations(), base);
}

Test(hostile_api, required_result_pointers_must_not_be_null_and_unwanted_results_are_released)
{
    int64_t base = live_allocations();
    tj_tensor *x = ramp(2, I64(2, 3), 0), *parts[3];
    int n = 7;
    cr_expect_eq(tj_split(x, 1, 0, NULL, 3, &n), TJ_ERR_INVALID_ARGUMENT);
    EXPECT_ERROR(TJ_ERR_INVALID_ARGUMENT, "aten::split.Tensor", "NULL outs");
    cr_expect_eq(tj_split(x, 1, 0, parts, 3, NULL), TJ_ERR_INVALID_ARGUMENT);
    EXPECT_ERROR(TJ_ERR_INVALID_ARGUMENT, "aten::split.Tensor", "n_outs");
    cr_expect_eq(tj_split(x, 1, 0, parts, 1, &n), TJ_ERR_INVALID_ARGUMENT);
    EXPECT_ERROR(TJ_ERR_INVALID_ARGUMENT, "aten::split.Tensor", "2 chunks do not fit in 1 outputs");
    cr_expect_eq(n, 0);
    /* max.dim with neither result wanted, then only the indices */
    cr_expect_eq(tj_max_dim(x, 1, false, NULL, NULL), TJ_OK, "%s", tj_last_error());
    tj_tensor *idx = NULL;
    cr_assert_eq(tj_max_dim(x, 1, false, NULL, &idx), TJ_OK, "%s", tj_last_error());
    cr_expect_eq(tj_tensor_item_at(idx, 0), 2.0);
    tj_tensor_release(idx);
    /* the fused AdamW step writes four results: its outs array is required */
    tj_tensor *step = tj_tensor_scalar_f32(1);
    cr_expect_eq(tj__fused_adamw_step(x, x, x, x, NULL, step, 0.1, 0.9, 0.999, 0.0, 1e-8, NULL),
                 TJ_ERR_INVALID_ARGUMENT);
    EXPECT_ERROR(TJ_ERR_INVALID_ARGUMENT, "aten::_fused_adamw_step", "NULL outs");
    tj_tensor_release(step);
    expect_values(x, (const float[]){0, 1, 2, 3, 4, 5}, 6);
    tj_tensor_release(x);
    cr_expect_eq(live_allocations(), base);
}

/* `call` returns NULL with TJ_ERR_INVALID_ARGUMENT and a message holding the
 * other arguments. */
#define REFUSED(call, ...)                                  \
    do {                                                    \
        cr_expect_null(call, "%s succeeded", #call);        \
        EXPECT_ERROR(TJ_ERR_INVALID_ARGUMENT, __VA_ARGS__); \
    } while (0)

Test(hostile_api, in_place_and_functional_forms_refuse_null_tensors_and_change_nothing)
{
    int64_t base = live_allocations();
    tj_tensor *x = ramp(2, I64(2, 3), 0), *row = ramp(1, I64(3), 10);
    REFUSED(tj_div_scalar_(NULL, tj_v_int(2)), "aten::div_.Scalar", "'self'");
    REFUSED(tj_copy_(x, NULL), "aten::copy_", "'src'");
    REFUSED(tj_addcmul(x, NULL, x, tj_v_int(1)), "aten::addcmul", "'tensor1'");
    REFUSED(tj_addcdiv(x, x, NULL, tj_v_int(1)), "aten::addcdiv", "'tensor2'");
    REFUSED(tj_lerp(NULL, x, tj_v_float(0.5)), "aten::lerp.Scalar", "'self'");
    REFUSED(tj_copy(x, NULL), "aten::copy", "'src'");
    REFUSED(tj_zero(NULL), "aten::zero", "'self'");
    REFUSED(tj_fill(NULL, tj_v_int(1)), "aten::fill.Scalar", "'self'");
    REFUSED(tj_slice_scatter(NULL, row, 0, false, 0, false, 0, 1), "aten::slice_scatter", "'self'");
    REFUSED(tj_select_scatter(x, NULL, 0, 0), "aten::select_scatter", "'src'");
    expect_values(x, (const float[]){0, 1, 2, 3, 4, 5}, 6);
    expect_values(row, (const float[]){10, 11, 12}, 3);
    tj_tensor_release(x);
    tj_tensor_release(row);
    cr_expect_eq(live_allocations(), base);
}

/* `call` returns NULL with TJ_ERR_OUT_OF_MEMORY and a message naming `op`
 * and why: these sizes (TiBs) are more than the memory available. */
#define OUT_OF_MEMORY(call, op)                                                   \
    do {                                                                          \
        cr_expect_null(call, "%s succeeded", #call);                              \
        EXPECT_ERROR(TJ_ERR_OUT_OF_MEMORY, op ": output 0", "not enough memory"); \
    } while (0)

/* 2^40 elements do not overflow but cannot be allocated (more than the
 * memory available, and the counting allocator refuses blocks over 256 MiB
 * here): the error names the operator whose output could not be allocated,
 * not only the byte count. */
Test(hostile_api, an_output_too_large_to_allocate_is_an_out_of_memory_error_naming_the_operator)
{
    refuse_allocations_over((size_t)256 << 20);
    int64_t base = live_allocations();
    const int64_t huge[2] = {(int64_t)1 << 20, (int64_t)1 << 20};
    OUT_OF_MEMORY(tj_zeros(huge, 2, -1), "aten::zeros");
    OUT_OF_MEMORY(tj_ones(huge, 2, -1), "aten::ones");
    OUT_OF_MEMORY(tj_full(huge, 2, tj_v_float(2), -1), "aten::full");
    OUT_OF_MEMORY(tj_rand(huge, 2, -1), "aten::rand");
    tj_tensor *grad = ramp(2, I64(2, 3), 0);
    tj_tensor *idx = tj_tensor_from_data(TJ_INT64, 1, I64(2), (const int64_t[]){0, 1});
    OUT_OF_MEMORY(tj_embedding_dense_backward(grad, idx, (int64_t)1 << 40, -1, false),
                  "aten::embedding_dense_backward");
    expect_values(grad, (const float[]){0, 1, 2, 3, 4, 5}, 6);
    tj_tensor_release(grad);
    tj_tensor_release(idx);
    cr_expect_eq(live_allocations(), base);
    refuse_allocations_over(0);
}
