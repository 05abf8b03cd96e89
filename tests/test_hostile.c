/* Hostile inputs to the public API (issue 9), one suite per header: core.h,
 * tensor.h, dispatch.h, inplace.h and safetensors.h here; graph.h, decomp.h
 * and plan.h in test_hostile_graph.c; autograd.h, optim.h and library.h in
 * test_hostile_train.c; every operator of ops.h in test_hostile_ops.c, and
 * what only the typed API has in test_hostile_api.c. Cases other tests already cover
 * (test_tensor.c, test_dispatch.c, test_npy.c, test_files.c, test_optim.c)
 * are not repeated. Each call must fail with the status and a message naming
 * the function and what was wrong, change nothing else (inputs compared
 * before and after) and leak nothing (alloc_counter.h). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "alloc_counter.h"
#include "hostile.h"

TestSuite(hostile_core, .init = count_allocations);
TestSuite(hostile_tensor, .init = count_allocations);
TestSuite(hostile_dispatch, .init = count_allocations);
TestSuite(hostile_inplace, .init = count_allocations);
TestSuite(hostile_safetensors, .init = count_allocations);

/* ================================ core.h ================================ */

Test(hostile_core, invalid_dtypes_and_statuses_have_safe_names)
{
    cr_expect_eq(tj_dtype_size((tj_dtype)99), 0);
    cr_expect_eq(tj_dtype_size((tj_dtype)-1), 0);
    cr_expect_str_eq(tj_dtype_name((tj_dtype)99), "?");
    cr_expect_not_null(tj_status_name((tj_status)999));
    cr_expect_not_null(tj_status_name((tj_status)-1));
    tj_dtype d = TJ_INT64;
    cr_expect_eq(tj_dtype_from_name(NULL, &d), TJ_ERR_PARSE);
    cr_expect_eq(tj_dtype_from_name("complex64", &d), TJ_ERR_PARSE);
    cr_expect_eq(tj_dtype_from_name("", &d), TJ_ERR_PARSE);
    cr_expect_eq(d, TJ_INT64, "a failed parse changed the output");
    tj_clear_error();
}

Test(hostile_core, a_null_out_or_format_is_refused_or_harmless)
{
    tj_dtype d = TJ_INT64;
    cr_expect_eq(tj_dtype_from_name("float32", NULL), TJ_ERR_INVALID_ARGUMENT);
    EXPECT_ERROR(TJ_ERR_INVALID_ARGUMENT, "tj_dtype_from_name", "NULL out");
    cr_expect_eq(tj_dtype_from_name("half", &d), TJ_ERR_PARSE);
    EXPECT_ERROR(TJ_ERR_PARSE, "tj_dtype_from_name", "'half'");
    cr_expect_eq(d, TJ_INT64);
    const char *no_format = NULL;
    cr_expect_eq(tj_error(TJ_ERR_SHAPE, no_format), TJ_ERR_SHAPE);
    cr_expect_eq(tj_last_status(), TJ_ERR_SHAPE);
    cr_expect_str_eq(tj_last_error(), "");
    tj_clear_error();
    /* the cache is off here (alloc_counter.h): releasing it is harmless */
    tj_storage_cache_release();
    cr_expect_eq(tj_storage_cache_bytes(), 0);
}

Test(hostile_core, an_error_message_longer_than_the_buffer_is_truncated)
{
    char big[10000];
    memset(big, 'x', sizeof big - 1);
    big[sizeof big - 1] = 0;
    cr_expect_eq(tj_error(TJ_ERR_SHAPE, "op: %s", big), TJ_ERR_SHAPE);
    cr_expect_eq(tj_last_status(), TJ_ERR_SHAPE);
    cr_expect(strncmp(tj_last_error(), "op: xxx", 7) == 0);
    cr_expect_lt(strlen(tj_last_error()), sizeof big - 1);
    tj_clear_error();
    cr_expect_eq(tj_last_status(), TJ_OK);
    cr_expect_str_eq(tj_last_error(), "");
}

Test(hostile_core, thread_counts_below_one_are_taken_as_one)
{
    int before = tj_get_num_threads();
    tj_set_num_threads(0);
    cr_expect_eq(tj_get_num_threads(), 1);
    tj_set_num_threads(-7);
    cr_expect_eq(tj_get_num_threads(), 1);
    tj_set_num_threads(before);
}

Test(hostile_core, an_injected_allocation_failure_in_an_operator_names_the_operator)
{
    int64_t base = live_allocations();
    tj_tensor *x = ramp(2, I64(8, 8), 0);
    tj_debug_fail_allocation(1);
    cr_expect_null(tj_exp(x));
    tj_debug_fail_allocation(0);
    EXPECT_ERROR(TJ_ERR_OUT_OF_MEMORY, "aten::exp", "out of memory");
    cr_expect_eq(tj_tensor_item_at(x, 63), 63.0);
    tj_tensor_release(x);
    cr_expect_eq(live_allocations(), base);
}

/* =============================== tensor.h =============================== */

Test(hostile_tensor, out_of_range_element_and_dim_queries_are_harmless)
{
    tj_tensor *t = ramp(2, I64(2, 3), 0);
    cr_expect(isnan(tj_tensor_item_at(t, -1)));
    cr_expect(isnan(tj_tensor_item_at(t, 6)));
    cr_expect(isnan(tj_tensor_item_at(t, INT64_MAX)));
    cr_expect_eq(tj_tensor_size(t, 2), -1);
    cr_expect_eq(tj_tensor_size(t, -3), -1);
    cr_expect_eq(tj_tensor_size(t, -2), 2);
    cr_expect_eq(tj_tensor_copy_to(t, NULL), TJ_ERR_INVALID_ARGUMENT);
    EXPECT_ERROR(TJ_ERR_INVALID_ARGUMENT, "tj_tensor_copy_to");
    tj_tensor_release(t);
}

/* The accessors test_tensor.c does not already call with NULL. */
Test(hostile_tensor, accessors_of_a_null_tensor_give_neutral_answers)
{
    tj_tensor *t = ramp(1, I64(2), 0);
    cr_expect_eq(tj_tensor_dtype(NULL), TJ_FLOAT32);
    cr_expect(!tj_tensor_is_fake(NULL));
    cr_expect_eq(tj_tensor_storage_offset(NULL), 0);
    cr_expect(!tj_tensor_shares_storage(NULL, t));
    cr_expect(!tj_tensor_shares_storage(t, NULL));
    cr_expect_eq(tj_last_status(), TJ_OK, "an accessor set an error: %s", tj_last_error());
    tj_tensor_release(t);
}

Test(hostile_tensor, creation_errors_name_the_function_and_the_bad_argument)
{
    int64_t base = live_allocations();
    cr_expect_null(tj_tensor_fake(TJ_FLOAT32, 2, NULL));
    EXPECT_ERROR(TJ_ERR_INVALID_ARGUMENT, "tj_tensor_fake", "shape is NULL for rank 2");
    cr_expect_null(tj_tensor_fake((tj_dtype)TJ_NUM_DTYPES, 1, I64(2)));
    EXPECT_ERROR(TJ_ERR_INVALID_ARGUMENT, "tj_tensor_fake", "invalid dtype 10");
    cr_expect_null(tj_tensor_empty(TJ_FLOAT32, 9, I64(1, 1, 1, 1, 1, 1, 1, 1, 1)));
    EXPECT_ERROR(TJ_ERR_INVALID_ARGUMENT, "tj_tensor_empty", "rank 9 is outside 0..8");
    cr_expect_null(tj_tensor_from_data(TJ_INT64, 1, I64(-2), NULL));
    EXPECT_ERROR(TJ_ERR_SHAPE, "tj_tensor_empty", "negative size -2");
    /* 2^40 floats: no overflow, but more than the allocator gives */
    refuse_allocations_over((size_t)256 << 20);
    cr_expect_null(tj_tensor_empty(TJ_FLOAT32, 2, I64(1 << 20, 1 << 20)));
    /* refused before malloc: 4 TiB is more than the memory available */
    EXPECT_ERROR(TJ_ERR_OUT_OF_MEMORY, "tj_tensor_empty", "not enough memory: a block needs 4398046511104 bytes");
    refuse_allocations_over(0);
    cr_expect_eq(live_allocations(), base);
}

Test(hostile_tensor, descriptions_fit_any_buffer)
{
    tj_tensor *t = ramp(2, I64(2, 3), 0);
    char buf[4] = "zzz";
    cr_expect_eq(tj_tensor_describe(t, NULL, 0), (int)strlen("f32[2, 3]"));
    tj_tensor_describe(t, buf, sizeof buf);
    cr_expect_str_eq(buf, "f32");
    cr_expect_str_eq(tj_shape_str(2, I64(123456, 7), buf, sizeof buf), "[12");
    cr_expect_str_eq(tj_shape_str(0, NULL, buf, sizeof buf), "[]");
    cr_expect_str_eq(tj_shape_str(-3, I64(1), buf, sizeof buf), "[]");
    cr_expect_str_eq(tj_shape_str(2, NULL, buf, sizeof buf), "(nu");
    buf[0] = 'q';
    tj_shape_str(2, I64(1, 2), buf, 0); /* nothing written */
    cr_expect_eq(buf[0], 'q');
    tj_tensor_release(t);
}

Test(hostile_tensor, scopes_ignore_bad_handles_and_foreign_tensors)
{
    int64_t base = live_allocations();
    tj_scope_end(NULL);
    tj_scope_end((tj_scope *)(uintptr_t)12345);
    cr_expect_null(tj_scope_keep(NULL));
    tj_tensor *own = ramp(1, I64(3), 0); /* made outside any scope: the caller's */
    tj_scope *s = tj_scope_begin();
    cr_expect_eq(tj_scope_keep(own), own); /* not the scope's: left alone */
    tj_scope *inner = tj_scope_begin();
    tj_tensor *y = tj_neg(own);
    tj_scope_end(s); /* ends the inner scope too, releasing y */
    tj_scope_end(inner); /* already closed: ignored */
    (void)y;
    cr_expect_eq(tj_tensor_item_at(own, 2), 2.0);
    tj_tensor_release(own);
    cr_expect_eq(live_allocations(), base);
}

Test(hostile_tensor, npy_calls_with_null_or_unreadable_arguments_are_errors)
{
    cr_expect_null(tj_npy_load(NULL));
    cr_expect_neq(tj_last_status(), TJ_OK);
    cr_expect(strstr(tj_last_error(), "tj_npy_load"), "%s", tj_last_error());
    tj_clear_error();
    cr_expect_null(tj_npy_load("/"));
    cr_expect(strstr(tj_last_error(), "tj_npy_load"), "%s", tj_last_error());
    cr_expect_eq(tj_last_status(), TJ_ERR_IO);
    cr_expect_null(tj_npy_load_buffer(NULL, 100));
    EXPECT_ERROR(TJ_ERR_INVALID_ARGUMENT, "tj_npy_load", "NULL buffer");
    cr_expect_null(tj_npy_load_buffer("\x93NUMPY", 0));
    EXPECT_ERROR(TJ_ERR_PARSE, "tj_npy_load");
    tj_tensor *t = ramp(1, I64(2), 0);
    cr_expect_eq(tj_npy_save("/nonexistent-dir/x.npy", t), TJ_ERR_IO);
    EXPECT_ERROR(TJ_ERR_IO, "tj_npy_save");
    tj_tensor_release(t);
}

/* ============================== dispatch.h ============================== */

Test(hostile_dispatch, operator_lookups_with_bad_names_or_indices_fail_cleanly)
{
    cr_expect_null(tj_op_find(NULL));
    EXPECT_ERROR(TJ_ERR_INVALID_ARGUMENT, "tj_op_find");
    const char *bad[] = {"", "aten::", "::", "aten::add.", ".Tensor", "aten::add.Tensor.x", "nosuchns::add",
                         "aten::add.NoSuchOverload"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        cr_expect_null(tj_op_find(bad[i]), "'%s' found", bad[i]);
        EXPECT_ERROR(TJ_ERR_NOT_FOUND, "unknown operator");
    }
    char longname[5000];
    memset(longname, 'a', sizeof longname - 1);
    longname[sizeof longname - 1] = 0;
    cr_expect_null(tj_op_find(longname));
    EXPECT_ERROR(TJ_ERR_NOT_FOUND, "unknown operator");
    cr_expect_null(tj_op_at(-1));
    cr_expect_null(tj_op_at(tj_op_count()));
    cr_expect_null(tj_op_at(INT32_MAX));
    cr_expect_str_eq(tj_op_name(NULL), "");
    cr_expect_str_eq(tj_op_schema(NULL), "");
    cr_expect_eq(tj_op_num_args(NULL), 0);
    cr_expect(!tj_op_is_inplace(NULL));
}

Test(hostile_dispatch, queries_of_a_null_operator_or_mode_are_empty)
{
    cr_expect_str_eq(tj_op_base_name(NULL), "");
    cr_expect_str_eq(tj_op_overload(NULL), "");
    cr_expect_str_eq(tj_op_namespace(NULL), "");
    cr_expect_eq(tj_op_kind_of(NULL), TJ_OP_PRIMITIVE);
    cr_expect_str_eq(tj_op_kind_name((tj_op_kind)99), "?");
    cr_expect_eq(tj_op_num_returns(NULL), 0);
    cr_expect(!tj_op_is_view(NULL));
    cr_expect(!tj_op_is_random(NULL));
    cr_expect_null(tj_counter_mode_base(NULL));
    cr_expect_null(tj_logger_mode_base(NULL));
}

/* tj_dispatch_kernel and tj_dispatch_fake (the bottom of the mode stack)
 * check their arguments as tj_dispatch does. */
Test(hostile_dispatch, kernel_and_fake_dispatch_refuse_null_arrays_and_wrong_counts)
{
    int64_t base = live_allocations();
    tj_tensor *x = ramp(1, I64(3), 0);
    const tj_op *neg = tj_op_find("aten::neg");
    tj_value args[1] = {tj_v_tensor(x)}, outs[TJ_MAX_RETURNS];
    typedef tj_status (*dispatch_fn)(const tj_op *, const tj_value *, int, tj_value *);
    dispatch_fn fns[2] = {tj_dispatch_kernel, tj_dispatch_fake};
    for (int i = 0; i < 2; i++) {
        cr_expect_eq(fns[i](NULL, args, 1, outs), TJ_ERR_INVALID_ARGUMENT);
        EXPECT_ERROR(TJ_ERR_INVALID_ARGUMENT, "NULL operator");
        cr_expect_eq(fns[i](neg, NULL, 1, outs), TJ_ERR_INVALID_ARGUMENT);
        EXPECT_ERROR(TJ_ERR_INVALID_ARGUMENT, "aten::neg", "NULL argument array");
        cr_expect_eq(fns[i](neg, args, 1, NULL), TJ_ERR_INVALID_ARGUMENT);
        EXPECT_ERROR(TJ_ERR_INVALID_ARGUMENT, "NULL outputs array");
        cr_expect_eq(fns[i](neg, args, 4, outs), TJ_ERR_INVALID_ARGUMENT);
        EXPECT_ERROR(TJ_ERR_INVALID_ARGUMENT, "aten::neg", "expected 1 arguments, got 4");
        cr_expect_eq(fns[i](neg, (tj_value[]){tj_v_int(3)}, 1, outs), TJ_ERR_INVALID_ARGUMENT);
        EXPECT_ERROR(TJ_ERR_INVALID_ARGUMENT, "aten::neg", "'self'");
    }
    expect_values(x, (const float[]){0, 1, 2}, 3);
    tj_tensor_release(x);
    cr_expect_eq(live_allocations(), base);
}

Test(hostile_dispatch, tj_call_with_bad_counts_or_a_null_array_is_an_error)
{
    int64_t base = live_allocations();
    tj_tensor *x = ramp(1, I64(3), 0);
    tj_value outs[TJ_MAX_RETURNS];
    tj_value args[1] = {tj_v_tensor(x)};
    cr_expect_eq(tj_call(NULL, args, 1, outs), TJ_ERR_INVALID_ARGUMENT);
    EXPECT_ERROR(TJ_ERR_INVALID_ARGUMENT, "tj_op_find");
    cr_expect_eq(tj_call("aten::abs", args, -1, outs), TJ_ERR_INVALID_ARGUMENT);
    EXPECT_ERROR(TJ_ERR_INVALID_ARGUMENT, "aten::abs", "got -1");
    cr_expect_eq(tj_call("aten::abs", args, 7, outs), TJ_ERR_INVALID_ARGUMENT);
    EXPECT_ERROR(TJ_ERR_INVALID_ARGUMENT, "aten::abs", "at most 1 arguments, got 7");
    cr_expect_eq(tj_call("aten::abs", NULL, 1, outs), TJ_ERR_INVALID_ARGUMENT);
    EXPECT_ERROR(TJ_ERR_INVALID_ARGUMENT, "aten::abs", "NULL argument array");
    cr_expect_eq(tj_call("aten::abs", args, 1, NULL), TJ_ERR_INVALID_ARGUMENT);
    EXPECT_ERROR(TJ_ERR_INVALID_ARGUMENT, "NULL outputs array");
    cr_expect_eq(tj_dispatch(tj_op_find("aten::abs"), args, -1, outs), TJ_ERR_INVALID_ARGUMENT);
    EXPECT_ERROR(TJ_ERR_INVALID_ARGUMENT, "aten::abs", "expected 1 arguments, got -1");
    /* a Tensor argument of kind TENSOR holding NULL, a list with a negative count */
    tj_value null_tensor = {TJ_V_TENSOR, 0, {0}};
    cr_expect_eq(tj_call("aten::abs", &null_tensor, 1, outs), TJ_ERR_INVALID_ARGUMENT);
    EXPECT_ERROR(TJ_ERR_INVALID_ARGUMENT, "aten::abs", "'self'");
    tj_tensor *list[1] = {x};
    cr_expect_eq(tj_call("aten::cat", (tj_value[]){tj_v_tensors(list, -2), tj_v_int(0)}, 2, outs),
                 TJ_ERR_INVALID_ARGUMENT);
    EXPECT_ERROR(TJ_ERR_INVALID_ARGUMENT, "aten::cat", "'tensors'");
    cr_expect_eq(tj_call("aten::sum.dim_IntList", (tj_value[]){tj_v_tensor(x), tj_v_ints(NULL, 2)}, 2, outs),
                 TJ_ERR_INVALID_ARGUMENT);
    EXPECT_ERROR(TJ_ERR_INVALID_ARGUMENT, "aten::sum.dim_IntList", "'dim'");
    cr_expect_eq(tj_call("aten::gelu", (tj_value[]){tj_v_tensor(x), (tj_value){TJ_V_STR, 0, {0}}}, 2, outs),
                 TJ_ERR_INVALID_ARGUMENT);
    EXPECT_ERROR(TJ_ERR_INVALID_ARGUMENT, "aten::gelu", "'approximate'");
    cr_expect_eq(tj_tensor_item_at(x, 2), 2.0);
    tj_tensor_release(x);
    cr_expect_eq(live_allocations(), base);
}

static tj_status forward_handler(tj_mode *m, const tj_op *op, const tj_value *args, int nargs, tj_value *outs)
{
    return tj_redispatch(m, op, args, nargs, outs);
}

Test(hostile_dispatch, modes_without_a_handler_or_not_pushed_are_refused)
{
    tj_mode no_handler = {NULL, NULL, "no handler"};
    cr_expect_eq(tj_mode_push(NULL), TJ_ERR_INVALID_ARGUMENT);
    EXPECT_ERROR(TJ_ERR_INVALID_ARGUMENT, "tj_mode_push");
    cr_expect_eq(tj_mode_push(&no_handler), TJ_ERR_INVALID_ARGUMENT);
    EXPECT_ERROR(TJ_ERR_INVALID_ARGUMENT, "tj_mode_push", "handler");
    cr_expect_eq(tj_mode_depth(), 0);
    cr_expect_eq(tj_mode_pop(NULL), TJ_ERR_INVALID_ARGUMENT);
    EXPECT_ERROR(TJ_ERR_INVALID_ARGUMENT, "tj_mode_pop");
    tj_value outs[TJ_MAX_RETURNS];
    cr_expect_eq(tj_redispatch(NULL, tj_op_find("aten::abs"), NULL, 0, outs), TJ_ERR_INVALID_ARGUMENT);
    EXPECT_ERROR(TJ_ERR_INVALID_ARGUMENT, "tj_redispatch");
    /* a mode forwarding a NULL operator */
    tj_mode fwd = {forward_handler, NULL, "forward"};
    cr_assert_eq(tj_mode_push(&fwd), TJ_OK);
    cr_expect_eq(tj_redispatch(&fwd, NULL, NULL, 0, outs), TJ_ERR_INVALID_ARGUMENT);
    cr_expect_neq(tj_last_error()[0], 0);
    tj_clear_error();
    cr_expect_eq(tj_mode_pop(&fwd), TJ_OK);
    cr_expect_eq(tj_counter_mode_count(NULL, tj_op_find("aten::abs")), 0);
    cr_expect_eq(tj_counter_mode_total(NULL), 0);
    tj_counter_mode_free(NULL);
    cr_expect_null(tj_logger_mode_new(NULL));
    EXPECT_ERROR(TJ_ERR_INVALID_ARGUMENT, "tj_logger_mode_new");
    tj_logger_mode_free(NULL);
}

Test(hostile_dispatch, values_of_any_kind_and_count_describe_safely)
{
    char buf[64];
    tj_value_release(NULL);
    tj_value none = tj_v_none();
    tj_value_release(&none);
    tj_value bad[] = {tj_v_ints(NULL, 3), tj_v_ints(I64(1, 2), -4), tj_v_bools(NULL, 2), tj_v_tensors(NULL, 5),
                      {TJ_V_STR, 0, {0}}, tj_v_dtype((tj_dtype)42), {(tj_value_kind)77, 0, {0}}};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        int n = tj_value_describe(&bad[i], buf, sizeof buf);
        cr_expect_geq(n, 0, "value %zu", i);
        cr_expect_lt(strlen(buf), sizeof buf);
        tj_value_describe(&bad[i], NULL, 0);
    }
    cr_expect_eq(tj_value_describe(NULL, buf, sizeof buf), (int)strlen(buf));
}

/* ============================== inplace.h ============================== */

/* x.add_(x.t()) reads elements it has already written: refused as PyTorch
 * refuses it, with x unchanged. */
Test(hostile_inplace, an_operand_overlapping_self_in_another_layout_is_refused)
{
    int64_t base = live_allocations();
    tj_tensor *x = ramp(2, I64(3, 3), 0);
    tj_scope *s = tj_scope_begin();
    cr_expect_null(tj_add_(x, tj_t(x), tj_v_int(1)));
    EXPECT_ERROR(TJ_ERR_UNSUPPORTED, "aten::add_.Tensor", "argument 1", "single memory location");
    cr_expect_null(tj_mul_(x, tj_select(x, 0, 1))); /* row 1 broadcast over every row, row 1 included */
    EXPECT_ERROR(TJ_ERR_UNSUPPORTED, "aten::mul_.Tensor", "single memory location");
    cr_expect_null(tj_addcmul_(x, x, tj_t(x), tj_v_int(1)));
    EXPECT_ERROR(TJ_ERR_UNSUPPORTED, "aten::addcmul_", "argument 2");
    cr_expect_null(tj_lerp_(x, tj_t(x), tj_v_float(0.5)));
    EXPECT_ERROR(TJ_ERR_UNSUPPORTED, "aten::lerp_.Scalar");
    tj_scope_end(s);
    expect_values(x, (const float[]){0, 1, 2, 3, 4, 5, 6, 7, 8}, 9);
    /* self itself, and a disjoint part of the same storage, are fine */
    cr_expect_eq(tj_add_(x, x, tj_v_int(1)), x);
    s = tj_scope_begin();
    cr_expect_not_null(tj_sub_(tj_select(x, 0, 0), tj_select(x, 0, 2), tj_v_int(1)), "%s", tj_last_error());
    tj_scope_end(s);
    expect_values(x, (const float[]){-12, -12, -12, 6, 8, 10, 12, 14, 16}, 9);
    /* nor do interleaved columns share an element (PyTorch takes them too) */
    s = tj_scope_begin();
    cr_expect_not_null(tj_sub_(tj_select(x, 1, 0), tj_select(x, 1, 1), tj_v_int(1)), "%s", tj_last_error());
    tj_scope_end(s);
    expect_values(x, (const float[]){0, -12, -12, -2, 8, 10, -2, 14, 16}, 9);
    tj_tensor_release(x);
    /* nor do column blocks of one tensor whose byte ranges interleave (a
     * GRU cell's gates, chunks of one product, as make_fx records it:
     * gates[:, :2].mul_(gates[:, 4:])); blocks that share a column still
     * are refused */
    tj_tensor *gates = ramp(2, I64(2, 6), 0);
    s = tj_scope_begin();
    tj_tensor *first = tj_slice(gates, 1, true, 0, true, 2, 1), *last = tj_slice(gates, 1, true, 4, true, 6, 1);
    cr_expect_not_null(tj_mul_(first, last), "%s", tj_last_error());
    cr_expect_null(tj_add_(tj_slice(gates, 1, true, 0, true, 3, 1), tj_slice(gates, 1, true, 2, true, 5, 1),
                           tj_v_int(1)));
    EXPECT_ERROR(TJ_ERR_UNSUPPORTED, "aten::add_.Tensor", "single memory location");
    tj_scope_end(s);
    expect_values(gates, (const float[]){0, 5, 2, 3, 4, 5, 60, 77, 8, 9, 10, 11}, 12);
    tj_tensor_release(gates);
    cr_expect_eq(live_allocations(), base);
}

/* y[1:].copy_(y[:-1]) would smear y[0] along; PyTorch refuses it. */
Test(hostile_inplace, copy_from_an_overlapping_slice_is_refused_and_from_a_disjoint_one_works)
{
    int64_t base = live_allocations();
    tj_tensor *y = ramp(1, I64(5), 0);
    tj_scope *s = tj_scope_begin();
    cr_expect_null(tj_copy_(tj_slice(y, 0, true, 1, false, 0, 1), tj_slice(y, 0, false, 0, true, 4, 1)));
    EXPECT_ERROR(TJ_ERR_UNSUPPORTED, "aten::copy_", "single memory location");
    expect_values(y, (const float[]){0, 1, 2, 3, 4}, 5);
    cr_expect_not_null(tj_copy_(tj_slice(y, 0, false, 0, true, 2, 1), tj_slice(y, 0, true, 3, false, 0, 1)),
                       "%s", tj_last_error());
    expect_values(y, (const float[]){3, 4, 2, 3, 4}, 5);
    cr_expect_eq(tj_copy_(y, y), y); /* onto itself: nothing to do */
    tj_scope_end(s);
    tj_tensor_release(y);
    cr_expect_eq(live_allocations(), base);
}

/* A broadcast (stride 0) self would receive several results in one place:
 * refused, except by fill_ and zero_, which write one value everywhere. */
Test(hostile_inplace, a_self_with_repeated_elements_is_refused_unless_the_value_is_constant)
{
    int64_t base = live_allocations();
    tj_tensor *z = ramp(2, I64(1, 3), 0);
    tj_scope *s = tj_scope_begin();
    tj_tensor *e = tj_expand(z, I64(3, 3), 2);
    cr_expect_null(tj_add_scalar_(e, tj_v_int(1), tj_v_int(1)));
    EXPECT_ERROR(TJ_ERR_UNSUPPORTED, "aten::add_.Scalar", "more than one element of the written-to tensor");
    cr_expect_null(tj_sqrt_(e));
    EXPECT_ERROR(TJ_ERR_UNSUPPORTED, "aten::sqrt_");
    cr_expect_null(tj_copy_(e, ramp(2, I64(3, 3), 0)));
    EXPECT_ERROR(TJ_ERR_UNSUPPORTED, "aten::copy_");
    tj_tensor *w = tj_unfold(ramp(1, I64(4), 0), 0, 2, 1); /* overlapping windows [[0,1],[1,2],[2,3]] */
    cr_expect_null(tj_mul_scalar_(w, tj_v_int(2)));
    EXPECT_ERROR(TJ_ERR_UNSUPPORTED, "aten::mul_.Scalar");
    expect_values(z, (const float[]){0, 1, 2}, 3);
    cr_expect_eq(tj_fill_(e, tj_v_int(7)), e);
    expect_values(z, (const float[]){7, 7, 7}, 3);
    cr_expect_eq(tj_zero_(e), e);
    expect_values(z, (const float[]){0, 0, 0}, 3);
    tj_scope_end(s);
    tj_tensor_release(z);
    cr_expect_eq(live_allocations(), base);
}

Test(hostile_inplace, wrong_dtypes_and_shapes_leave_self_unchanged)
{
    int64_t base = live_allocations();
    tj_tensor *b = tj_tensor_from_data(TJ_BOOL, 1, I64(3), (const bool[]){true, false, true});
    tj_tensor *i = tj_tensor_from_data(TJ_INT64, 1, I64(3), (const int64_t[]){4, 9, 16});
    tj_tensor *x = ramp(1, I64(3), 0);
    tj_scope *s = tj_scope_begin();
    cr_expect_null(tj_sub_(b, b, tj_v_int(1)));
    EXPECT_ERROR(TJ_ERR_DTYPE, "aten::sub_.Tensor");
    cr_expect_null(tj_add_(b, x, tj_v_int(1)));
    EXPECT_ERROR(TJ_ERR_DTYPE, "aten::add_.Tensor", "can't be cast");
    cr_expect_null(tj_sqrt_(i));
    EXPECT_ERROR(TJ_ERR_DTYPE, "aten::sqrt_");
    cr_expect_null(tj_div_(i, i));
    EXPECT_ERROR(TJ_ERR_DTYPE, "aten::div_.Tensor");
    cr_expect_null(tj_lerp_(x, tj_to_copy(x, TJ_FLOAT64), tj_v_float(0.5)));
    EXPECT_ERROR(TJ_ERR_DTYPE, "aten::lerp_.Scalar");
    cr_expect_null(tj_addcdiv_(i, i, i, tj_v_int(1)));
    EXPECT_ERROR(TJ_ERR_DTYPE, "aten::addcdiv_");
    /* ATen refuses integer tensor1 / tensor2 whatever self is (a float self
     * made it a float division) */
    cr_expect_null(tj_addcdiv_(x, i, b, tj_v_int(1)));
    EXPECT_ERROR(TJ_ERR_DTYPE, "aten::addcdiv_", "integer division", "tensor1 int64, tensor2 bool");
    cr_expect_null(tj_addcdiv(x, i, i, tj_v_int(1)));
    EXPECT_ERROR(TJ_ERR_DTYPE, "aten::addcdiv", "integer division");
    cr_expect_null(tj_mul_(x, ramp(1, I64(4), 0)));
    EXPECT_ERROR(TJ_ERR_SHAPE, "aten::mul_.Tensor");
    cr_expect_null(tj_add_(NULL, x, tj_v_int(1)));
    EXPECT_ERROR(TJ_ERR_INVALID_ARGUMENT, "aten::add_.Tensor", "'self'");
    cr_expect_null(tj_select_scatter(x, tj_tensor_scalar_f32(1), 0, 3));
    EXPECT_ERROR(TJ_ERR_INDEX, "select");
    cr_expect_null(tj_select_scatter(x, tj_tensor_scalar_f32(1), 1, 0));
    EXPECT_ERROR(TJ_ERR_INDEX, "select");
    cr_expect_null(tj_slice_scatter(x, ramp(1, I64(2), 0), 0, true, 0, true, 3, 1));
    EXPECT_ERROR(TJ_ERR_SHAPE, "aten::slice_scatter", "[2]", "[3]");
    cr_expect_null(tj_slice_scatter(x, ramp(1, I64(3), 0), 0, true, 0, true, 3, 0));
    cr_expect_neq(tj_last_status(), TJ_OK);
    cr_expect(strstr(tj_last_error(), "slice"), "%s", tj_last_error());
    tj_clear_error();
    tj_scope_end(s);
    expect_values(x, (const float[]){0, 1, 2}, 3);
    expect_values(i, (const float[]){4, 9, 16}, 3);
    expect_values(b, (const float[]){1, 0, 1}, 3);
    tj_tensor_release(b);
    tj_tensor_release(i);
    tj_tensor_release(x);
    cr_expect_eq(live_allocations(), base);
}

/* ============================ safetensors.h ============================ */

static char *tmp_path(const char *name)
{
    static char path[256];
    snprintf(path, sizeof path, "/tmp/tjit_hostile_%d_%s", (int)getpid(), name);
    return path;
}

Test(hostile_safetensors, bad_save_arguments_are_refused_and_the_old_file_stays)
{
    int64_t base = live_allocations();
    tj_tensor *a = ramp(1, I64(2), 0), *fake = tj_tensor_fake(TJ_FLOAT32, 1, I64(2));
    const char *path = tmp_path("keep.safetensors");
    cr_assert_eq(tj_safetensors_save(path, (const char *[]){"a"}, (tj_tensor *[]){a}, 1), TJ_OK, "%s",
                 tj_last_error());
    struct {
        const char *path;
        const char *const *names;
        tj_tensor *const *tensors;
        int n;
        tj_status st;
        const char *needle;
    } bad[] = {
        {NULL, (const char *[]){"a"}, (tj_tensor *[]){a}, 1, TJ_ERR_INVALID_ARGUMENT, "NULL path"},
        {path, NULL, (tj_tensor *[]){a}, 1, TJ_ERR_INVALID_ARGUMENT, "NULL"},
        {path, (const char *[]){"a"}, NULL, 1, TJ_ERR_INVALID_ARGUMENT, "NULL"},
        {path, (const char *[]){"a"}, (tj_tensor *[]){a}, -1, TJ_ERR_INVALID_ARGUMENT, "negative tensor count -1"},
        {path, (const char *[]){"a", "a"}, (tj_tensor *[]){a, a}, 2, TJ_ERR_INVALID_ARGUMENT, "duplicate"},
        {path, (const char *[]){""}, (tj_tensor *[]){a}, 1, TJ_ERR_INVALID_ARGUMENT, "unnamed"},
        {path, (const char *[]){NULL}, (tj_tensor *[]){a}, 1, TJ_ERR_INVALID_ARGUMENT, "unnamed"},
        {path, (const char *[]){"a"}, (tj_tensor *[]){NULL}, 1, TJ_ERR_INVALID_ARGUMENT, "('a') is NULL"},
        {path, (const char *[]){"a"}, (tj_tensor *[]){fake}, 1, TJ_ERR_INVALID_ARGUMENT, "fake"},
        {path, (const char *[]){"\xff\xfe"}, (tj_tensor *[]){a}, 1, TJ_ERR_INVALID_ARGUMENT, "UTF-8"},
        /* the header key of the metadata: a reader would take the tensor for it */
        {path, (const char *[]){"__metadata__"}, (tj_tensor *[]){a}, 1, TJ_ERR_INVALID_ARGUMENT, "the name the metadata takes"},
        {"/nonexistent-dir/x.safetensors", (const char *[]){"a"}, (tj_tensor *[]){a}, 1, TJ_ERR_IO, "cannot create"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        cr_expect_eq(tj_safetensors_save(bad[i].path, bad[i].names, bad[i].tensors, bad[i].n), bad[i].st,
                     "case %zu: %s", i, tj_last_error());
        cr_expect(strstr(tj_last_error(), "tj_safetensors_save"), "case %zu: %s", i, tj_last_error());
        cr_expect(strstr(tj_last_error(), bad[i].needle), "case %zu: '%s' lacks '%s'", i, tj_last_error(),
                  bad[i].needle);
        tj_clear_error();
    }
    tj_safetensors *f = tj_safetensors_load(path);
    cr_assert_not_null(f, "%s", tj_last_error());
    cr_expect_eq(tj_safetensors_count(f), 1);
    cr_expect_eq(tj_tensor_item_at(tj_safetensors_get(f, "a"), 1), 1.0);
    tj_safetensors_free(f);
    unlink(path);
    tj_tensor_release(a);
    tj_tensor_release(fake);
    cr_expect_eq(live_allocations(), base);
}

Test(hostile_safetensors, lookups_with_null_or_out_of_range_arguments_fail_cleanly)
{
    int64_t base = live_allocations();
    cr_expect_null(tj_safetensors_load(NULL));
    cr_expect_neq(tj_last_status(), TJ_OK);
    cr_expect(strstr(tj_last_error(), "safetensors"), "%s", tj_last_error());
    tj_clear_error();
    cr_expect_null(tj_safetensors_load("/nonexistent-dir/x.safetensors"));
    EXPECT_ERROR(TJ_ERR_IO, "safetensors");
    cr_expect_null(tj_safetensors_load_buffer(NULL, 16));
    EXPECT_ERROR(TJ_ERR_INVALID_ARGUMENT, "tj_safetensors_load", "NULL buffer");
    cr_expect_eq(tj_safetensors_count(NULL), 0);
    cr_expect_null(tj_safetensors_name(NULL, 0));
    cr_expect_null(tj_safetensors_get(NULL, "a"));
    EXPECT_ERROR(TJ_ERR_INVALID_ARGUMENT, "tj_safetensors_get", "NULL file");
    tj_safetensors_free(NULL);
    tj_tensor *a = ramp(1, I64(2), 0);
    const char *path = tmp_path("lookup.safetensors");
    cr_assert_eq(tj_safetensors_save(path, (const char *[]){"a"}, (tj_tensor *[]){a}, 1), TJ_OK);
    tj_safetensors *f = tj_safetensors_load(path);
    cr_assert_not_null(f, "%s", tj_last_error());
    cr_expect_null(tj_safetensors_name(f, -1));
    cr_expect_null(tj_safetensors_name(f, 1));
    cr_expect_null(tj_safetensors_get(f, NULL)); /* not "no tensor named '(null)'" */
    EXPECT_ERROR(TJ_ERR_INVALID_ARGUMENT, "tj_safetensors_get", "NULL name");
    cr_expect_null(tj_safetensors_get(f, ""));
    EXPECT_ERROR(TJ_ERR_NOT_FOUND, "no tensor named ''");
    tj_safetensors_free(f);
    unlink(path);
    tj_tensor_release(a);
    cr_expect_eq(live_allocations(), base);
}
