/* tj_allclose against torch.allclose. The truth table's expected column is
 * torch.allclose(a, b, rtol=..., atol=..., equal_nan=...) from PyTorch 1.13
 * (/usr/bin/python3) with a and b made by torch.tensor(values, dtype=...)
 * .reshape(shape), so float32 values are the doubles below rounded to
 * float32, as here. Error cases are PyTorch's errors (RuntimeError). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "alloc_counter.h"
#include "tjit/tjit.h"

#define I64(...) ((const int64_t[]){__VA_ARGS__})

TestSuite(allclose, .init = count_allocations);

typedef struct allclose_case {
    const char *note;
    tj_dtype dtype;
    double rtol, atol;
    bool equal_nan, expected;
    int na;
    int64_t sa[2];
    int nb;
    int64_t sb[2];
    double a[4], b[4];      /* float and bool values */
    int64_t ia[4], ib[4];   /* int64 values */
} allclose_case;

static const allclose_case cases[] = {
    {"f32 equal", TJ_FLOAT32, 1.0000000000000001e-05, 1e-08, false, true,
     .na = 1, .sa = {2}, .nb = 1, .sb = {2}, .a = {1, 2}, .b = {1, 2}},
    {"f32 within rtol", TJ_FLOAT32, 1.0000000000000001e-05, 1e-08, false, true,
     .na = 1, .sa = {2}, .nb = 1, .sb = {2}, .a = {1, 1000}, .b = {1, 1000.005}},
    {"f32 beyond rtol", TJ_FLOAT32, 1.0000000000000001e-05, 1e-08, false, false,
     .na = 1, .sa = {2}, .nb = 1, .sb = {2}, .a = {1, 1000}, .b = {1, 1000.02}},
    {"f32 rtol uses other not self", TJ_FLOAT32, 1, 0, false, true,
     .na = 1, .sa = {1}, .nb = 1, .sb = {1}, .a = {2}, .b = {1}},
    {"f32 rtol uses other (swapped)", TJ_FLOAT32, 0.98999999999999999, 0, false, true,
     .na = 1, .sa = {1}, .nb = 1, .sb = {1}, .a = {1}, .b = {2}},
    {"f32 atol only", TJ_FLOAT32, 1.0000000000000001e-05, 1e-08, false, true,
     .na = 1, .sa = {1}, .nb = 1, .sb = {1}, .a = {0}, .b = {1.0000000000000001e-09}},
    {"f32 atol only, beyond", TJ_FLOAT32, 1.0000000000000001e-05, 1e-08, false, false,
     .na = 1, .sa = {1}, .nb = 1, .sb = {1}, .a = {0}, .b = {9.9999999999999995e-08}},
    {"f32 nan vs nan", TJ_FLOAT32, 1.0000000000000001e-05, 1e-08, false, false,
     .na = 1, .sa = {1}, .nb = 1, .sb = {1}, .a = {NAN}, .b = {NAN}},
    {"f32 nan vs nan, equal_nan", TJ_FLOAT32, 1.0000000000000001e-05, 1e-08, true, true,
     .na = 1, .sa = {1}, .nb = 1, .sb = {1}, .a = {NAN}, .b = {NAN}},
    {"f32 nan vs 1, equal_nan", TJ_FLOAT32, 1.0000000000000001e-05, 1e-08, true, false,
     .na = 1, .sa = {1}, .nb = 1, .sb = {1}, .a = {NAN}, .b = {1}},
    {"f32 nan vs nan, huge tolerances", TJ_FLOAT32, INFINITY, INFINITY, false, false,
     .na = 1, .sa = {1}, .nb = 1, .sb = {1}, .a = {NAN}, .b = {NAN}},
    {"f32 inf vs inf", TJ_FLOAT32, 1.0000000000000001e-05, 1e-08, false, true,
     .na = 1, .sa = {1}, .nb = 1, .sb = {1}, .a = {INFINITY}, .b = {INFINITY}},
    {"f32 -inf vs -inf, zero tolerance", TJ_FLOAT32, 0, 0, false, true,
     .na = 1, .sa = {1}, .nb = 1, .sb = {1}, .a = {-INFINITY}, .b = {-INFINITY}},
    {"f32 inf vs -inf", TJ_FLOAT32, 1.0000000000000001e-05, 1e-08, false, false,
     .na = 1, .sa = {1}, .nb = 1, .sb = {1}, .a = {INFINITY}, .b = {-INFINITY}},
    {"f32 inf vs finite, infinite rtol", TJ_FLOAT32, INFINITY, 1e-08, false, false,
     .na = 1, .sa = {1}, .nb = 1, .sb = {1}, .a = {1}, .b = {INFINITY}},
    {"f32 finite vs inf, infinite atol", TJ_FLOAT32, 1.0000000000000001e-05, INFINITY, false, false,
     .na = 1, .sa = {1}, .nb = 1, .sb = {1}, .a = {INFINITY}, .b = {1}},
    {"f32 zero tolerance, one ulp apart", TJ_FLOAT32, 0, 0, false, false,
     .na = 1, .sa = {1}, .nb = 1, .sb = {1}, .a = {1}, .b = {1.0000001192092896}},
    {"f32 -0 vs 0, zero tolerance", TJ_FLOAT32, 0, 0, false, true,
     .na = 1, .sa = {1}, .nb = 1, .sb = {1}, .a = {-0}, .b = {0}},
    {"f32 broadcast row against matrix", TJ_FLOAT32, 1.0000000000000001e-05, 1e-08, false, true,
     .na = 2, .sa = {1, 2}, .nb = 2, .sb = {2, 2}, .a = {1, 2}, .b = {1, 2, 1, 2.0000010000000001}},
    {"f32 broadcast row against matrix, one off", TJ_FLOAT32, 1.0000000000000001e-05, 1e-08, false, false,
     .na = 2, .sa = {1, 2}, .nb = 2, .sb = {2, 2}, .a = {1, 2}, .b = {1, 2, 1, 2.1000000000000001}},
    {"f32 broadcast column and row", TJ_FLOAT32, 1.0000000000000001e-05, 1e-08, false, true,
     .na = 2, .sa = {2, 1}, .nb = 2, .sb = {1, 2}, .a = {1, 1}, .b = {1, 1}},
    {"f32 broadcast against 0-d", TJ_FLOAT32, 1.0000000000000001e-05, 1e-08, false, true,
     .na = 1, .sa = {3}, .nb = 0, .sb = {0}, .a = {5, 5, 5}, .b = {5}},
    {"f32 broadcast against 0-d, one off", TJ_FLOAT32, 1.0000000000000001e-05, 1e-08, false, false,
     .na = 1, .sa = {3}, .nb = 0, .sb = {0}, .a = {5, 5, 6}, .b = {5}},
    {"f32 empty against empty", TJ_FLOAT32, 1.0000000000000001e-05, 1e-08, false, true,
     .na = 1, .sa = {0}, .nb = 1, .sb = {0}, .a = {0}, .b = {0}},
    {"f32 empty broadcast against row", TJ_FLOAT32, 1.0000000000000001e-05, 1e-08, false, true,
     .na = 2, .sa = {0, 3}, .nb = 1, .sb = {3}, .a = {0}, .b = {1, 2, 3}},
    {"f64 equal", TJ_FLOAT64, 1.0000000000000001e-05, 1e-08, false, true,
     .na = 1, .sa = {2}, .nb = 1, .sb = {2}, .a = {1, 2}, .b = {1, 2}},
    {"f64 within rtol", TJ_FLOAT64, 1.0000000000000001e-05, 1e-08, false, true,
     .na = 1, .sa = {2}, .nb = 1, .sb = {2}, .a = {1, 1000}, .b = {1, 1000.005}},
    {"f64 beyond rtol", TJ_FLOAT64, 1.0000000000000001e-05, 1e-08, false, false,
     .na = 1, .sa = {2}, .nb = 1, .sb = {2}, .a = {1, 1000}, .b = {1, 1000.02}},
    {"f64 rtol uses other not self", TJ_FLOAT64, 1, 0, false, true,
     .na = 1, .sa = {1}, .nb = 1, .sb = {1}, .a = {2}, .b = {1}},
    {"f64 rtol uses other (swapped)", TJ_FLOAT64, 0.98999999999999999, 0, false, true,
     .na = 1, .sa = {1}, .nb = 1, .sb = {1}, .a = {1}, .b = {2}},
    {"f64 atol only", TJ_FLOAT64, 1.0000000000000001e-05, 1e-08, false, true,
     .na = 1, .sa = {1}, .nb = 1, .sb = {1}, .a = {0}, .b = {1.0000000000000001e-09}},
    {"f64 atol only, beyond", TJ_FLOAT64, 1.0000000000000001e-05, 1e-08, false, false,
     .na = 1, .sa = {1}, .nb = 1, .sb = {1}, .a = {0}, .b = {9.9999999999999995e-08}},
    {"f64 nan vs nan", TJ_FLOAT64, 1.0000000000000001e-05, 1e-08, false, false,
     .na = 1, .sa = {1}, .nb = 1, .sb = {1}, .a = {NAN}, .b = {NAN}},
    {"f64 nan vs nan, equal_nan", TJ_FLOAT64, 1.0000000000000001e-05, 1e-08, true, true,
     .na = 1, .sa = {1}, .nb = 1, .sb = {1}, .a = {NAN}, .b = {NAN}},
    {"f64 nan vs 1, equal_nan", TJ_FLOAT64, 1.0000000000000001e-05, 1e-08, true, false,
     .na = 1, .sa = {1}, .nb = 1, .sb = {1}, .a = {NAN}, .b = {1}},
    {"f64 nan vs nan, huge tolerances", TJ_FLOAT64, INFINITY, INFINITY, false, false,
     .na = 1, .sa = {1}, .nb = 1, .sb = {1}, .a = {NAN}, .b = {NAN}},
    {"f64 inf vs inf", TJ_FLOAT64, 1.0000000000000001e-05, 1e-08, false, true,
     .na = 1, .sa = {1}, .nb = 1, .sb = {1}, .a = {INFINITY}, .b = {INFINITY}},
    {"f64 -inf vs -inf, zero tolerance", TJ_FLOAT64, 0, 0, false, true,
     .na = 1, .sa = {1}, .nb = 1, .sb = {1}, .a = {-INFINITY}, .b = {-INFINITY}},
    {"f64 inf vs -inf", TJ_FLOAT64, 1.0000000000000001e-05, 1e-08, false, false,
     .na = 1, .sa = {1}, .nb = 1, .sb = {1}, .a = {INFINITY}, .b = {-INFINITY}},
    {"f64 inf vs finite, infinite rtol", TJ_FLOAT64, INFINITY, 1e-08, false, false,
     .na = 1, .sa = {1}, .nb = 1, .sb = {1}, .a = {1}, .b = {INFINITY}},
    {"f64 finite vs inf, infinite atol", TJ_FLOAT64, 1.0000000000000001e-05, INFINITY, false, false,
     .na = 1, .sa = {1}, .nb = 1, .sb = {1}, .a = {INFINITY}, .b = {1}},
    {"f64 zero tolerance, one ulp apart", TJ_FLOAT64, 0, 0, false, false,
     .na = 1, .sa = {1}, .nb = 1, .sb = {1}, .a = {1}, .b = {1.0000001192092896}},
    {"f64 -0 vs 0, zero tolerance", TJ_FLOAT64, 0, 0, false, true,
     .na = 1, .sa = {1}, .nb = 1, .sb = {1}, .a = {-0}, .b = {0}},
    {"f64 broadcast row against matrix", TJ_FLOAT64, 1.0000000000000001e-05, 1e-08, false, true,
     .na = 2, .sa = {1, 2}, .nb = 2, .sb = {2, 2}, .a = {1, 2}, .b = {1, 2, 1, 2.0000010000000001}},
    {"f64 broadcast row against matrix, one off", TJ_FLOAT64, 1.0000000000000001e-05, 1e-08, false, false,
     .na = 2, .sa = {1, 2}, .nb = 2, .sb = {2, 2}, .a = {1, 2}, .b = {1, 2, 1, 2.1000000000000001}},
    {"f64 broadcast column and row", TJ_FLOAT64, 1.0000000000000001e-05, 1e-08, false, true,
     .na = 2, .sa = {2, 1}, .nb = 2, .sb = {1, 2}, .a = {1, 1}, .b = {1, 1}},
    {"f64 broadcast against 0-d", TJ_FLOAT64, 1.0000000000000001e-05, 1e-08, false, true,
     .na = 1, .sa = {3}, .nb = 0, .sb = {0}, .a = {5, 5, 5}, .b = {5}},
    {"f64 broadcast against 0-d, one off", TJ_FLOAT64, 1.0000000000000001e-05, 1e-08, false, false,
     .na = 1, .sa = {3}, .nb = 0, .sb = {0}, .a = {5, 5, 6}, .b = {5}},
    {"f64 empty against empty", TJ_FLOAT64, 1.0000000000000001e-05, 1e-08, false, true,
     .na = 1, .sa = {0}, .nb = 1, .sb = {0}, .a = {0}, .b = {0}},
    {"f64 empty broadcast against row", TJ_FLOAT64, 1.0000000000000001e-05, 1e-08, false, true,
     .na = 2, .sa = {0, 3}, .nb = 1, .sb = {3}, .a = {0}, .b = {1, 2, 3}},
    {"f32 rounding: 1.0001 vs 1 at rtol 1e-4 (float32 arithmetic)", TJ_FLOAT32, 0.0001, 0, false, false,
     .na = 1, .sa = {1}, .nb = 1, .sb = {1}, .a = {1.0001}, .b = {1}},
    {"f64 rounding: 1.0001 vs 1 at rtol 1e-4", TJ_FLOAT64, 0.0001, 0, false, true,
     .na = 1, .sa = {1}, .nb = 1, .sb = {1}, .a = {1.0001}, .b = {1}},
    {"i64 equal", TJ_INT64, 1.0000000000000001e-05, 1e-08, false, true,
     .na = 1, .sa = {3}, .nb = 1, .sb = {3}, .ia = {1, -2, 3}, .ib = {1, -2, 3}},
    {"i64 within atol", TJ_INT64, 1.0000000000000001e-05, 1, false, true,
     .na = 1, .sa = {1}, .nb = 1, .sb = {1}, .ia = {1}, .ib = {2}},
    {"i64 beyond atol", TJ_INT64, 1.0000000000000001e-05, 0.98999999999999999, false, false,
     .na = 1, .sa = {1}, .nb = 1, .sb = {1}, .ia = {1}, .ib = {2}},
    {"i64 within rtol of other", TJ_INT64, 0.5, 0, false, true,
     .na = 1, .sa = {1}, .nb = 1, .sb = {1}, .ia = {1}, .ib = {2}},
    {"i64 rounded to float32 before subtracting", TJ_INT64, 0, 0.5, false, true,
     .na = 1, .sa = {1}, .nb = 1, .sb = {1}, .ia = {16777217}, .ib = {16777216}},
    {"i64 zero tolerance compares exactly", TJ_INT64, 0, 0, false, false,
     .na = 1, .sa = {1}, .nb = 1, .sb = {1}, .ia = {16777217}, .ib = {16777216}},
    {"i64 rounded to float32 directly, not through float64", TJ_INT64, 0, 0.5, false, true,
     .na = 1, .sa = {1}, .nb = 1, .sb = {1}, .ia = {18014399583223809}, .ib = {18014400656965632}},
    {"i64 equal, zero tolerance", TJ_INT64, 0, 0, false, true,
     .na = 1, .sa = {1}, .nb = 1, .sb = {1}, .ia = {5}, .ib = {5}},
    {"i64 extremes", TJ_INT64, 1.0000000000000001e-05, 1e-08, false, false,
     .na = 1, .sa = {2}, .nb = 1, .sb = {2}, .ia = {INT64_MIN, 9223372036854775807}, .ib = {1, 9223372036854775807}},
    {"i64 equal_nan changes nothing", TJ_INT64, 1.0000000000000001e-05, 1e-08, true, false,
     .na = 1, .sa = {1}, .nb = 1, .sb = {1}, .ia = {3}, .ib = {4}},
    {"i64 broadcast", TJ_INT64, 1.0000000000000001e-05, 1e-08, false, true,
     .na = 2, .sa = {2, 1}, .nb = 1, .sb = {3}, .ia = {7, 7}, .ib = {7, 7, 7}},
    {"bool equal", TJ_BOOL, 1.0000000000000001e-05, 1e-08, false, true,
     .na = 1, .sa = {2}, .nb = 1, .sb = {2}, .a = {1, 0}, .b = {1, 0}},
    {"bool differ", TJ_BOOL, 1.0000000000000001e-05, 1e-08, false, false,
     .na = 1, .sa = {2}, .nb = 1, .sb = {2}, .a = {1, 0}, .b = {1, 1}},
    {"bool differ within atol 1", TJ_BOOL, 1.0000000000000001e-05, 1, false, true,
     .na = 1, .sa = {2}, .nb = 1, .sb = {2}, .a = {1, 0}, .b = {1, 1}},
};

/* A contiguous tensor of `dtype` from doubles (or int64 values for int64). */
static tj_tensor *tensor_of(tj_dtype dtype, int ndim, const int64_t *shape, const double *v, const int64_t *iv)
{
    tj_tensor *t = tj_tensor_empty(dtype, ndim, shape);
    cr_assert_not_null(t, "%s", tj_last_error());
    for (int64_t i = 0; i < tj_tensor_numel(t); i++) {
        void *p = (char *)tj_tensor_data(t) + i * (int64_t)tj_dtype_size(dtype);
        switch (dtype) {
        case TJ_FLOAT32: *(float *)p = (float)v[i]; break;
        case TJ_FLOAT64: *(double *)p = v[i]; break;
        case TJ_INT64: *(int64_t *)p = iv[i]; break;
        case TJ_BOOL: *(bool *)p = v[i] != 0; break;
        default: cr_assert(false, "no values for dtype %s", tj_dtype_name(dtype)); break;
        }
    }
    return t;
}

Test(allclose, truth_table_matches_pytorch)
{
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        const allclose_case *c = &cases[k];
        tj_tensor *a = tensor_of(c->dtype, c->na, c->sa, c->a, c->ia);
        tj_tensor *b = tensor_of(c->dtype, c->nb, c->sb, c->b, c->ib);
        bool got = !c->expected;
        cr_expect_eq(tj_allclose(a, b, c->rtol, c->atol, c->equal_nan, &got), TJ_OK, "%s: %s", c->note,
                     tj_last_error());
        cr_expect_eq(got, c->expected, "%s: got %d, PyTorch %d", c->note, got, c->expected);
        tj_tensor_release(a);
        tj_tensor_release(b);
    }
}

/* Strided operands: a transposed view against its contiguous copy, and a
 * stride-0 expanded row; the first mismatch is found at the last element. */
Test(allclose, views_compare_by_logical_index)
{
    tj_tensor *m = tj_tensor_from_data(TJ_FLOAT32, 2, I64(2, 3), (const float[]){1, 2, 3, 4, 5, 6});
    tj_tensor *mt = tj_t(m);
    tj_tensor *c = tj_tensor_from_data(TJ_FLOAT32, 2, I64(3, 2), (const float[]){1, 4, 2, 5, 3, 6});
    bool out = false;
    cr_expect_eq(tj_allclose(mt, c, 1e-5, 1e-8, false, &out), TJ_OK, "%s", tj_last_error());
    cr_expect(out);
    ((float *)tj_tensor_data(c))[5] = 6.5f;
    cr_expect_eq(tj_allclose(mt, c, 1e-5, 1e-8, false, &out), TJ_OK);
    cr_expect(!out);
    tj_tensor *row = tj_tensor_from_data(TJ_FLOAT32, 1, I64(3), (const float[]){1, 2, 3});
    tj_tensor *rows = tj_expand(row, I64(4, 3), 2);
    tj_tensor *dense = tj_tensor_from_data(TJ_FLOAT32, 2, I64(4, 3), (const float[]){1, 2, 3, 1, 2, 3, 1, 2, 3, 1, 2, 3});
    cr_expect_eq(tj_allclose(rows, dense, 0, 0, false, &out), TJ_OK);
    cr_expect(out);
    ((float *)tj_tensor_data(dense))[11] = 3.5f;
    cr_expect_eq(tj_allclose(rows, dense, 0, 0, false, &out), TJ_OK);
    cr_expect(!out);
    tj_tensor *handles[] = {m, mt, c, row, rows, dense};
    for (int i = 0; i < 6; i++) tj_tensor_release(handles[i]);
}

/* The error paths leave *out alone, name aten::allclose and leak nothing. */
static void expect_error(const tj_tensor *a, const tj_tensor *b, double rtol, double atol, tj_status st,
                         const char *part)
{
    int64_t live = live_allocations();
    bool out = true;
    cr_expect_eq(tj_allclose(a, b, rtol, atol, false, &out), st, "%s", tj_last_error());
    cr_expect(out, "*out written on error");
    cr_expect(strstr(tj_last_error(), "aten::allclose") != NULL, "%s", tj_last_error());
    cr_expect(strstr(tj_last_error(), part) != NULL, "'%s' not in '%s'", part, tj_last_error());
    cr_expect_eq(live_allocations(), live);
}

Test(allclose, shapes_that_do_not_broadcast_are_a_shape_error)
{
    tj_tensor *a = tj_tensor_empty(TJ_FLOAT32, 1, I64(2));
    tj_tensor *b = tj_tensor_empty(TJ_FLOAT32, 1, I64(3));
    tj_tensor *c = tj_tensor_empty(TJ_FLOAT32, 2, I64(4, 2));
    expect_error(a, b, 1e-5, 1e-8, TJ_ERR_SHAPE, "[2] and [3]");
    expect_error(c, b, 1e-5, 1e-8, TJ_ERR_SHAPE, "[4, 2] and [3]");
    tj_tensor_release(a);
    tj_tensor_release(b);
    tj_tensor_release(c);
}

/* torch.allclose(float32, float64) raises "Float did not match Double", and
 * int64 against float32 "Long did not match Float": no promotion. */
Test(allclose, different_dtypes_are_a_dtype_error)
{
    tj_tensor *f = tj_tensor_scalar_f32(1);
    tj_tensor *d = tj_tensor_scalar_f64(1);
    tj_tensor *i = tj_tensor_scalar_i64(1);
    expect_error(f, d, 1e-5, 1e-8, TJ_ERR_DTYPE, "self is float32 and other is float64");
    expect_error(i, f, 1e-5, 1e-8, TJ_ERR_DTYPE, "self is int64 and other is float32");
    tj_tensor_release(f);
    tj_tensor_release(d);
    tj_tensor_release(i);
}

/* torch: "rtol must be greater than or equal to zero, but got -1" (nan too). */
Test(allclose, negative_or_nan_tolerance_is_invalid)
{
    tj_tensor *a = tj_tensor_scalar_f32(1);
    expect_error(a, a, -1, 1e-8, TJ_ERR_INVALID_ARGUMENT, "rtol must be >= 0, got -1");
    expect_error(a, a, 1e-5, -1e-9, TJ_ERR_INVALID_ARGUMENT, "atol must be >= 0, got -1e-09");
    expect_error(a, a, NAN, 1e-8, TJ_ERR_INVALID_ARGUMENT, "rtol must be >= 0, got nan");
    tj_tensor_release(a);
}

Test(allclose, null_and_fake_arguments_are_invalid)
{
    tj_tensor *a = tj_tensor_scalar_f32(1);
    tj_tensor *fake = tj_tensor_fake(TJ_FLOAT32, 0, NULL);
    expect_error(NULL, a, 1e-5, 1e-8, TJ_ERR_INVALID_ARGUMENT, "NULL self");
    expect_error(a, NULL, 1e-5, 1e-8, TJ_ERR_INVALID_ARGUMENT, "NULL other");
    expect_error(a, fake, 1e-5, 1e-8, TJ_ERR_INVALID_ARGUMENT, "fake tensor has no data");
    cr_expect_eq(tj_allclose(a, a, 1e-5, 1e-8, false, NULL), TJ_ERR_INVALID_ARGUMENT);
    tj_tensor_release(a);
    tj_tensor_release(fake);
}
