/* DLPack import and export (runtime/dlpack.c): memory shared both ways,
 * the producer's deleter run once and only when tjit lets go, every refused
 * description left to its caller untouched, and a plan writing straight into
 * DLPack-described output memory. */
#include <criterion/criterion.h>
#include <dlpack/dlpack.h>
#include <string.h>

#include "runtime/internal.h"
#include "test_util.h"

TestSuite(dlpack, .init = test_scope_open, .fini = test_scope_close);

/* A DLManagedTensor over caller memory whose deleter counts its calls. */
typedef struct counted {
    DLManagedTensor m;
    int64_t shape[TJ_MAX_DIMS], strides[TJ_MAX_DIMS];
    int deleted;
} counted;

static void count_delete(DLManagedTensor *m) { ((counted *)m->manager_ctx)->deleted++; }

static void describe(counted *c, void *data, DLDataType dtype, int ndim, const int64_t *shape, const int64_t *strides)
{
    memset(c, 0, sizeof *c);
    for (int k = 0; k < ndim; k++) {
        c->shape[k] = shape[k];
        if (strides) c->strides[k] = strides[k];
    }
    c->m = (DLManagedTensor){.dl_tensor = {.data = data, .device = {kDLCPU, 0}, .ndim = ndim, .dtype = dtype,
                                           .shape = c->shape, .strides = strides ? c->strides : NULL},
                             .manager_ctx = c, .deleter = count_delete};
}

static const DLDataType F32 = {kDLFloat, 32, 1}, F64 = {kDLFloat, 64, 1}, I64 = {kDLInt, 64, 1};

Test(dlpack, import_shares_memory_and_runs_the_deleter_once_at_the_last_reference)
{
    float buf[6] = {1, 2, 3, 4, 5, 6};
    counted c;
    describe(&c, buf, F32, 2, (int64_t[]){2, 3}, NULL);
    tj_tensor *t = tj_scope_keep(tj_tensor_from_dlpack(&c.m));
    cr_assert_not_null(t, "%s", tj_last_error());
    cr_expect_eq(tj_tensor_data(t), buf, "no copy");
    cr_expect_eq(tj_tensor_strides(t)[0], 3);
    test_expect_close(tj_sum(t, TJ_DTYPE_NONE), (double[]){21}, 1, 0, 0);
    cr_assert_not_null(tj_mul_scalar_(t, tj_v_float(2)), "%s", tj_last_error());
    cr_expect_eq(buf[5], 12.0f, "a tjit write reaches the producer's memory");
    buf[0] = 100;
    test_expect_close(tj_sum(t, TJ_DTYPE_NONE), (double[]){140}, 1, 0, 0);

    tj_tensor *row = tj_scope_keep(tj_select(t, 0, 1)); /* a view keeps the memory */
    tj_tensor_release(t);
    cr_expect_eq(c.deleted, 0, "a view still reads the memory");
    test_expect_close(row, (double[]){8, 10, 12}, 3, 0, 0);
    tj_tensor_release(row);
    cr_expect_eq(c.deleted, 1);
}

Test(dlpack, import_reads_strides_and_byte_offset)
{
    double buf[12];
    for (int i = 0; i < 12; i++) buf[i] = i;
    counted c; /* the transpose of rows 1..2 of a [3, 4] matrix */
    describe(&c, buf, F64, 2, (int64_t[]){4, 2}, (int64_t[]){1, 4});
    c.m.dl_tensor.byte_offset = 4 * sizeof(double);
    tj_scope *s = tj_scope_begin();
    tj_tensor *t = tj_tensor_from_dlpack(&c.m);
    cr_assert_not_null(t, "%s", tj_last_error());
    cr_expect_eq(tj_tensor_dtype(t), TJ_FLOAT64);
    test_expect_close(tj_contiguous(t), (double[]){4, 8, 5, 9, 6, 10, 7, 11}, 8, 0, 0);
    tj_scope_end(s);
    cr_expect_eq(c.deleted, 1, "the scope owned the imported tensor");
}

Test(dlpack, import_of_scalars_empty_tensors_and_bool)
{
    tj_scope *scope = tj_scope_begin(); /* ends before the counted structs on this stack do */
    int64_t v = 42;
    counted c0;
    describe(&c0, &v, I64, 0, NULL, NULL);
    tj_tensor *s = tj_tensor_from_dlpack(&c0.m);
    cr_assert_not_null(s, "%s", tj_last_error());
    cr_expect_eq(tj_tensor_ndim(s), 0);
    cr_expect_eq(tj_tensor_item_at(s, 0), 42.0);

    counted ce; /* NULL data is fine for zero elements */
    describe(&ce, NULL, F32, 2, (int64_t[]){0, 5}, NULL);
    tj_tensor *e = tj_tensor_from_dlpack(&ce.m);
    cr_assert_not_null(e, "%s", tj_last_error());
    cr_expect_eq(tj_tensor_numel(tj_add(e, e)), 0);

    bool mask[3] = {true, false, true};
    float row[3] = {1, 2, 3};
    counted cf; /* NumPy's x[::-1] of a [1, 3] array: the stride of the size-1 dim is never used */
    describe(&cf, row, F32, 2, (int64_t[]){1, 3}, (int64_t[]){-3, 1});
    tj_tensor *f = tj_tensor_from_dlpack(&cf.m);
    cr_assert_not_null(f, "%s", tj_last_error());
    test_expect_close(tj_mul_scalar(f, tj_v_float(2)), (double[]){2, 4, 6}, 3, 0, 0);

    counted cb;
    describe(&cb, mask, (DLDataType){6, 8, 1}, 1, (int64_t[]){3}, NULL);
    tj_tensor *b = tj_tensor_from_dlpack(&cb.m);
    cr_assert_not_null(b, "%s", tj_last_error());
    cr_expect_eq(tj_tensor_dtype(b), TJ_BOOL);
    test_expect_close(tj_sum(b, TJ_DTYPE_NONE), (double[]){2}, 1, 0, 0);
    tj_scope_end(scope);
    cr_expect(c0.deleted == 1 && ce.deleted == 1 && cf.deleted == 1 && cb.deleted == 1);
}

/* Each refused description: NULL, the status and a message naming the
 * function and the fault, and the managed tensor still the caller's. */
static void expect_refused(counted *c, tj_status status, const char *needle)
{
    tj_tensor *t = tj_tensor_from_dlpack(&c->m);
    test_expect_error(t, status, "tj_tensor_from_dlpack", needle);
    cr_expect_eq(c->deleted, 0, "a refused import leaves the deleter to its caller (%s)", needle);
}

Test(dlpack, import_refusals_name_the_fault_and_leave_ownership)
{
    float buf[8] = {0};
    counted c;
    describe(&c, buf, F32, 1, (int64_t[]){4}, NULL);
    c.m.dl_tensor.device.device_type = kDLCUDA;
    expect_refused(&c, TJ_ERR_UNSUPPORTED, "device type 2");
    describe(&c, buf, (DLDataType){kDLFloat, 8, 1}, 1, (int64_t[]){4}, NULL);
    expect_refused(&c, TJ_ERR_UNSUPPORTED, "8 bits");
    describe(&c, buf, (DLDataType){kDLFloat, 32, 4}, 1, (int64_t[]){2}, NULL);
    expect_refused(&c, TJ_ERR_UNSUPPORTED, "4 lanes");
    describe(&c, buf, (DLDataType){kDLUInt, 32, 1}, 1, (int64_t[]){4}, NULL);
    expect_refused(&c, TJ_ERR_UNSUPPORTED, "code 1");
    describe(&c, buf + 3, F32, 1, (int64_t[]){4}, (int64_t[]){-1});
    expect_refused(&c, TJ_ERR_UNSUPPORTED, "negative");
    describe(&c, (char *)buf + 2, F32, 1, (int64_t[]){4}, NULL);
    expect_refused(&c, TJ_ERR_INVALID_ARGUMENT, "not aligned");
    describe(&c, buf, F32, 1, (int64_t[]){-3}, NULL);
    expect_refused(&c, TJ_ERR_SHAPE, "-3");
    describe(&c, NULL, F32, 1, (int64_t[]){4}, NULL);
    expect_refused(&c, TJ_ERR_INVALID_ARGUMENT, "NULL data");
    describe(&c, buf, F32, 1, (int64_t[]){2}, (int64_t[]){INT64_MAX / 2});
    expect_refused(&c, TJ_ERR_OVERFLOW, "past int64");
    describe(&c, buf, F32, 1, (int64_t[]){4}, NULL);
    c.m.dl_tensor.ndim = TJ_MAX_DIMS + 1;
    expect_refused(&c, TJ_ERR_UNSUPPORTED, "rank");
    test_expect_error(tj_tensor_from_dlpack(NULL), TJ_ERR_INVALID_ARGUMENT, "tj_tensor_from_dlpack", "NULL");
}

Test(dlpack, export_describes_a_view_and_outlives_the_tensor)
{
    tj_scope *s = tj_scope_begin();
    tj_tensor *x = test_f32(2, (int64_t[]){3, 4}, (float[]){0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11});
    tj_tensor *col = tj_select(x, 1, 2); /* [2, 6, 10], stride 4, offset 2 */
    DLManagedTensor *m = tj_tensor_to_dlpack(col);
    cr_assert_not_null(m, "%s", tj_last_error());
    tj_scope_end(s); /* x and col are gone; m holds the memory */
    const DLTensor *d = &m->dl_tensor;
    cr_expect_eq(d->device.device_type, kDLCPU);
    cr_expect(d->dtype.code == kDLFloat && d->dtype.bits == 32 && d->dtype.lanes == 1);
    cr_expect_eq(d->ndim, 1);
    cr_expect_eq(d->shape[0], 3);
    cr_expect_eq(d->strides[0], 4);
    cr_expect_eq(d->byte_offset, 0);
    const float *data = d->data;
    cr_expect(data[0] == 2 && data[4] == 6 && data[8] == 10, "data starts at the view's first element");
    m->deleter(m); /* frees x's storage: the sanitizer build checks nothing leaks or is read after */

    tj_tensor *b = test_tensor(TJ_BOOL, 1, (int64_t[]){2}, (bool[]){true, false});
    DLManagedTensor *mb = tj_tensor_to_dlpack(b);
    cr_assert_not_null(mb, "%s", tj_last_error());
    cr_expect(mb->dl_tensor.dtype.code == 6 && mb->dl_tensor.dtype.bits == 8, "bool as kDLBool");
    mb->deleter(mb);
    test_expect_error(tj_tensor_to_dlpack(tj_tensor_fake(TJ_FLOAT32, 1, (int64_t[]){2})), TJ_ERR_INVALID_ARGUMENT,
                      "tj_tensor_to_dlpack", "fake");
    test_expect_error(tj_tensor_to_dlpack(NULL), TJ_ERR_INVALID_ARGUMENT, "tj_tensor_to_dlpack", "NULL");
}

Test(dlpack, export_then_import_is_the_same_memory)
{
    tj_tensor *x = test_f64(1, (int64_t[]){3}, (double[]){1, 2, 3});
    DLManagedTensor *m = tj_tensor_to_dlpack(x);
    cr_assert_not_null(m, "%s", tj_last_error());
    tj_tensor *y = tj_tensor_from_dlpack(m); /* y now owns m */
    cr_assert_not_null(y, "%s", tj_last_error());
    cr_expect_eq(tj_tensor_data(y), tj_tensor_data(x));
    cr_expect(tj_tensor_shares_storage(x, y), "the import's storage holds x's bytes");
    cr_expect_not_null(tj_add_scalar_(y, tj_v_float(1), tj_v_int(1)));
    test_expect_close(x, (double[]){2, 3, 4}, 3, 0, 0);
}

/* What a binding does with a plan: ask for the output's type, describe
 * memory of its own for it, and let the plan's last kernel write there. */
Test(dlpack, plan_writes_into_dlpack_outputs)
{
    tj_graph *g = tj_graph_parse("graph(%x : f32[2, 3], %y : f32[3]):\n"
                                 "    %add = aten.add.Tensor(%x, %y)\n"
                                 "    %relu = aten.relu.default(%add)\n"
                                 "    return (%relu,)\n");
    cr_assert_not_null(g, "%s", tj_last_error());
    tj_plan *p = tj_compile(g, NULL);
    cr_assert_not_null(p, "%s", tj_last_error());
    tj_dtype dtype;
    int ndim;
    int64_t shape[TJ_MAX_DIMS];
    cr_assert_eq(tj_plan_output_type(p, 0, &dtype, &ndim, shape), TJ_OK, "%s", tj_last_error());
    cr_expect(dtype == TJ_FLOAT32 && ndim == 2 && shape[0] == 2 && shape[1] == 3);
    cr_assert_eq(tj_plan_input_type(p, 1, &dtype, &ndim, shape), TJ_OK);
    cr_expect(dtype == TJ_FLOAT32 && ndim == 1 && shape[0] == 3);
    cr_expect_eq(tj_plan_output_type(p, 1, &dtype, &ndim, shape), TJ_ERR_INDEX);
    cr_expect(strstr(tj_last_error(), "tj_plan_output_type: output 1 of 1"), "%s", tj_last_error());

    float x[6] = {-1, 2, -3, 4, -5, 6}, y[3] = {1, 1, 1}, out[6];
    counted cx, cy, co;
    describe(&cx, x, F32, 2, (int64_t[]){2, 3}, NULL);
    describe(&cy, y, F32, 1, (int64_t[]){3}, NULL);
    describe(&co, out, F32, 2, (int64_t[]){2, 3}, NULL);
    tj_scope *s = tj_scope_begin();
    tj_tensor *in[2] = {tj_tensor_from_dlpack(&cx.m), tj_tensor_from_dlpack(&cy.m)};
    tj_tensor *o = tj_tensor_from_dlpack(&co.m);
    cr_assert(in[0] && in[1] && o, "%s", tj_last_error());
    cr_assert_eq(tj_plan_run_into(p, in, 2, &o), TJ_OK, "%s", tj_last_error());
    tj_scope_end(s);
    const float want[6] = {0, 3, 0, 5, 0, 7};
    cr_expect_arr_eq(out, want, sizeof want);
    cr_expect(cx.deleted == 1 && cy.deleted == 1 && co.deleted == 1);
    tj_plan_free(p);
    tj_graph_free(g);
}

/* Each import of one array gets a storage of its own: overlap is found by
 * address, so a plan writing into an import of its input's memory copies
 * last (a matmul into its own operand), and an in-place operator refuses an
 * operand that overlaps it in another layout, as for views of one tjit
 * tensor. */
Test(dlpack, imports_of_one_memory_overlap)
{
    tj_graph *g = tj_graph_parse("graph(%a : f32[2, 2], %b : f32[2, 2]):\n"
                                 "    %mm = aten.mm.default(%a, %b)\n"
                                 "    return (%mm,)\n");
    cr_assert_not_null(g, "%s", tj_last_error());
    tj_plan *p = tj_compile(g, NULL);
    cr_assert_not_null(p, "%s", tj_last_error());
    float m[4] = {1, 2, 3, 4};
    counted ca, cb, co;
    describe(&ca, m, F32, 2, (int64_t[]){2, 2}, NULL);
    describe(&cb, m, F32, 2, (int64_t[]){2, 2}, NULL);
    describe(&co, m, F32, 2, (int64_t[]){2, 2}, NULL);
    tj_scope *s = tj_scope_begin();
    tj_tensor *in[2] = {tj_tensor_from_dlpack(&ca.m), tj_tensor_from_dlpack(&cb.m)};
    tj_tensor *o = tj_tensor_from_dlpack(&co.m);
    cr_assert(in[0] && in[1] && o, "%s", tj_last_error());
    cr_expect(tj_tensor_shares_storage(in[0], o));
    cr_expect_eq(tj_overlap_status(in[0], o), TJ_OVERLAP_FULL);
    cr_assert_eq(tj_plan_run_into(p, in, 2, &o), TJ_OK, "%s", tj_last_error());
    const float want[4] = {7, 10, 15, 22};
    cr_expect_arr_eq(m, want, sizeof want, "the matmul read its operands before the copy into them");

    float v[4] = {1, 2, 3, 4};
    counted head, tail; /* v[0:3] and v[1:4], imported apart */
    describe(&head, v, F32, 1, (int64_t[]){3}, NULL);
    describe(&tail, v + 1, F32, 1, (int64_t[]){3}, NULL);
    tj_tensor *h = tj_tensor_from_dlpack(&head.m), *t = tj_tensor_from_dlpack(&tail.m);
    cr_assert(h && t, "%s", tj_last_error());
    cr_expect_eq(tj_overlap_status(h, t), TJ_OVERLAP_PARTIAL);
    cr_expect_null(tj_add_(h, t, tj_v_int(1)), "v[0:3] += v[1:4] would read elements already written");
    float u[8] = {0};
    counted apart; /* u[0:4] and u[4:8] share nothing */
    describe(&apart, u + 4, F32, 1, (int64_t[]){4}, NULL);
    tj_tensor *a = tj_tensor_from_dlpack(&apart.m);
    cr_assert_not_null(a, "%s", tj_last_error());
    cr_expect(!tj_tensor_shares_storage(a, h));
    tj_scope_end(s);
    cr_expect(ca.deleted == 1 && cb.deleted == 1 && co.deleted == 1 && head.deleted == 1 && tail.deleted == 1);
    tj_plan_free(p);
    tj_graph_free(g);
}

/* What a binding asks before it copies an input it cannot share: whether
 * the run writes it (an in-place step here; a written-back output too). */
Test(dlpack, plan_tells_which_inputs_it_writes)
{
    tj_graph *g = tj_graph_parse("graph(%a : f32[3], %b : f32[3], %c : f32[3]):\n"
                                 "    %mul_ = aten.mul_.Tensor(%b, %a)\n"
                                 "    %add = aten.add.Tensor(%c, %mul_)\n"
                                 "    return (%add,)\n");
    cr_assert_not_null(g, "%s", tj_last_error());
    tj_plan *p = tj_compile(g, NULL);
    cr_assert_not_null(p, "%s", tj_last_error());
    cr_expect(!tj_plan_writes_input(p, 0) && tj_plan_writes_input(p, 1) && !tj_plan_writes_input(p, 2));
    cr_expect(!tj_plan_writes_input(p, 3) && !tj_plan_writes_input(p, -1) && !tj_plan_writes_input(NULL, 0));
    tj_plan_free(p);
    tj_graph_free(g);
}
