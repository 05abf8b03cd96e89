/* Memory overlap in the in-place indexed writers (index_copy_, scatter_'s
 * four overloads, scatter_reduce_.two): each refuses exactly what ATen 1.13
 * refuses (assert_no_internal_overlap on self, assert_no_overlap on index
 * and src), and what ATen accepts, an operand it cannot judge (not dense)
 * or one in self's storage but apart from it, gives ATen's values. The
 * outcomes come from PyTorch 1.13 (/usr/bin/python3, python3-torch) through
 * tests/make_index_overlap.py, which builds the same cases. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "test_util.h"
#include "tjit/tjit.h"

TestSuite(index_overlap, .init = test_scope_open, .fini = test_scope_close);

typedef enum { ACCEPTED, OPERAND, SELF } overlap_outcome;
typedef struct overlap_ref {
    overlap_outcome outcome;
    int n;
    double v[4]; /* self afterwards, when accepted */
} overlap_ref;

#include "index_overlap_ref.h"

static const char *const op_names[NOPS] = {"aten::index_copy_",     "aten::scatter_.src",
                                           "aten::scatter_.value",  "aten::scatter_.reduce",
                                           "aten::scatter_.value_reduce", "aten::scatter_reduce_.two"};

/* OPS of the generator, in its order */
static tj_tensor *call(int op, tj_tensor *self, tj_tensor *index, tj_tensor *src)
{
    switch (op) {
    case 0: return tj_index_copy_(self, 0, index, src);
    case 1: return tj_scatter_(self, 0, index, src);
    case 2: return tj_scatter_value_(self, 0, index, tj_v_int(5));
    case 3: return tj_scatter_src_reduce_(self, 0, index, src, "add");
    case 4: return tj_scatter_value_reduce_(self, 0, index, tj_v_int(5), "add");
    default: return tj_scatter_reduce_(self, 0, index, src, "sum", true);
    }
}

static tj_tensor *f32(int n, const float *v) { return test_f32(1, (const int64_t[]){n}, v); }
static tj_tensor *i64(int n, const int64_t *v) { return test_i64(1, (const int64_t[]){n}, v); }

typedef struct overlap_case {
    tj_tensor *self, *index, *src;
    const char *refused; /* the operand ATen refuses, for OPERAND outcomes */
} overlap_case;

/* CASES of the generator, in its order; vector_index: index_copy_'s 1-D index */
static overlap_case build(int c, bool vector_index)
{
    const float b6[6] = {1, 2, 3, 4, 5, 6};
    tj_tensor *x, *b, *n;
    switch (c) {
    case 0:
        x = f32(4, (const float[]){1, 2, 3, 4});
        return (overlap_case){x, i64(4, (const int64_t[]){1, 0, 3, 2}), x, "src"};
    case 1:
        b = f32(6, b6);
        return (overlap_case){tj_slice(b, 0, true, 0, true, 4, 1), i64(2, (const int64_t[]){1, 0}),
                              tj_slice(b, 0, true, 2, true, 4, 1), "src"};
    case 2:
        n = i64(4, (const int64_t[]){0, 1, 2, 3});
        return (overlap_case){n, tj_slice(n, 0, true, 0, true, 2, 1), i64(2, (const int64_t[]){7, 8}), "index"};
    case 3:
        n = i64(4, (const int64_t[]){0, 1, 2, 3});
        return (overlap_case){n, n, i64(4, (const int64_t[]){7, 8, 9, 10}), "index"};
    case 4:
        return (overlap_case){tj_expand(tj_zeros((const int64_t[]){1}, 1, TJ_FLOAT32), (const int64_t[]){4}, 1),
                              i64(2, (const int64_t[]){1, 0}), f32(2, (const float[]){7, 8}), NULL};
    case 5: {
        const int64_t s22[2] = {2, 2};
        x = test_f32(2, s22, (const float[]){1, 2, 3, 4});
        tj_tensor *ix =
            vector_index ? i64(2, (const int64_t[]){1, 0}) : test_i64(2, s22, (const int64_t[]){1, 0, 0, 1});
        return (overlap_case){x, ix, tj_t(x), "src"};
    }
    case 6:
        x = f32(3, (const float[]){1, 2, 3});
        return (overlap_case){x, i64(0, NULL), vector_index ? tj_slice(x, 0, true, 0, true, 0, 1) : x, "src"};
    case 7:
        b = f32(6, b6);
        return (overlap_case){tj_slice(b, 0, true, 0, true, 4, 1), i64(2, (const int64_t[]){1, 0}),
                              tj_slice(b, 0, true, 4, true, 6, 1), NULL};
    case 8: {
        tj_tensor *y =
            tj_view(tj_arange(tj_v_int(0), tj_v_int(16), tj_v_int(1), TJ_FLOAT32), (const int64_t[]){4, 4}, 2);
        return (overlap_case){tj_select(y, 0, 0), i64(4, (const int64_t[]){1, 0, 3, 2}), tj_select(y, 1, 1), NULL};
    }
    default:
        n = i64(4, (const int64_t[]){0, 1, 0, 3});
        return (overlap_case){n, tj_slice(n, 0, true, 0, true, 4, 2), i64(2, (const int64_t[]){7, 8}), NULL};
    }
}

Test(index_overlap, in_place_indexed_writers_refuse_and_accept_overlap_as_aten)
{
    for (int c = 0; c < NCASES; c++)
        for (int op = 0; op < NOPS; op++) {
            const overlap_ref *want = &overlap_refs[c][op];
            overlap_case k = build(c, op == 0);
            tj_tensor *before = tj_clone(k.self);
            tj_tensor *r = call(op, k.self, k.index, k.src);
            if (want->outcome == ACCEPTED) {
                cr_assert_eq(r, k.self, "%s, %s: %s", op_names[op], case_names[c], tj_last_error());
                test_expect_close(k.self, want->v, want->n, 0, 0);
                continue;
            }
            cr_assert_null(r, "%s, %s: accepted, ATen refuses", op_names[op], case_names[c]);
            char needle[160], a[64], s[64];
            const tj_tensor *operand = !k.refused ? NULL : strcmp(k.refused, "index") == 0 ? k.index : k.src;
            if (want->outcome == SELF)
                snprintf(needle, sizeof needle, "more than one element of the written-to tensor (self) refers");
            else
                snprintf(needle, sizeof needle, "some elements of %s %s and of the written-to tensor (self) %s refer",
                         op == 0 && operand == k.src ? "source" : k.refused,
                         tj_shape_str(tj_tensor_ndim(operand), tj_tensor_shape(operand), a, sizeof a),
                         tj_shape_str(tj_tensor_ndim(k.self), tj_tensor_shape(k.self), s, sizeof s));
            test_expect_error(r, TJ_ERR_UNSUPPORTED, op_names[op], needle);
            test_expect_same(k.self, before, "self after a refusal");
        }
}

/* The out-of-place forms write a fresh tensor: self as src or index is fine.
 * torch 1.13: x = tensor([1., 2, 3, 4]), i = tensor([1, 0, 3, 2]),
 * n = tensor([0, 1, 2, 3]):
 *   x.index_copy(0, i, x), x.scatter(0, i, x) -> [2, 1, 4, 3];
 *   x.scatter(0, i, x, reduce='add'), x.scatter_reduce(0, i, x, 'sum') -> [3, 3, 7, 7];
 *   n.scatter(0, n, 5) -> [5, 5, 5, 5]; n.scatter(0, n, 5, reduce='add') -> [5, 6, 7, 8];
 *   n.index_copy(0, n, tensor([7, 8, 9, 10])) -> [7, 8, 9, 10]; x and n unchanged. */
Test(index_overlap, out_of_place_forms_accept_self_as_an_operand)
{
    tj_tensor *x = f32(4, (const float[]){1, 2, 3, 4}), *i = i64(4, (const int64_t[]){1, 0, 3, 2});
    tj_tensor *n = i64(4, (const int64_t[]){0, 1, 2, 3});
    const double swapped[4] = {2, 1, 4, 3}, summed[4] = {3, 3, 7, 7};
    test_expect_close(tj_index_copy(x, 0, i, x), swapped, 4, 0, 0);
    test_expect_close(tj_scatter(x, 0, i, x), swapped, 4, 0, 0);
    test_expect_close(tj_scatter_src_reduce(x, 0, i, x, "add"), summed, 4, 0, 0);
    test_expect_close(tj_scatter_reduce(x, 0, i, x, "sum", true), summed, 4, 0, 0);
    test_expect_close(tj_scatter_value(n, 0, n, tj_v_int(5)), (const double[]){5, 5, 5, 5}, 4, 0, 0);
    test_expect_close(tj_scatter_value_reduce(n, 0, n, tj_v_int(5), "add"), (const double[]){5, 6, 7, 8}, 4, 0, 0);
    test_expect_close(tj_index_copy(n, 0, n, i64(4, (const int64_t[]){7, 8, 9, 10})), (const double[]){7, 8, 9, 10},
                      4, 0, 0);
    test_expect_close(x, (const double[]){1, 2, 3, 4}, 4, 0, 0);
    test_expect_close(n, (const double[]){0, 1, 2, 3}, 4, 0, 0);
}

/* Where two things are wrong the error is ATen's. torch 1.13, x = tensor([1., 2, 3, 4]):
 *   x.index_copy_(0, tensor([[0, 1], [2, 3]]), x), x.index_copy_(0, x, ones(4)),
 *   zeros(1).expand(4).index_copy_(0, tensor([[0]]), ones(1, 1)): the overlap
 *     ("some elements of the input tensor ...", "more than one element of the
 *     written-to tensor ..."): index_copy_ checks it right after dim;
 *   x.index_copy_(3, tensor([0, 1, 2, 3]), x): "Dimension out of range";
 *   x.scatter_(0, x, 1.): "scatter(): Expected dtype int64 for index" (the
 *     scatters check their arguments first). */
Test(index_overlap, errors_come_in_aten_order_when_overlap_is_not_the_only_fault)
{
    tj_tensor *x = f32(4, (const float[]){1, 2, 3, 4});
    tj_tensor *i22 = test_i64(2, (const int64_t[]){2, 2}, (const int64_t[]){0, 1, 2, 3});
    test_expect_error(tj_index_copy_(x, 0, i22, x), TJ_ERR_UNSUPPORTED, "aten::index_copy_",
                      "some elements of source [4] and of the written-to tensor (self) [4]");
    test_expect_error(tj_index_copy_(x, 0, x, tj_ones((const int64_t[]){4}, 1, TJ_FLOAT32)), TJ_ERR_UNSUPPORTED,
                      "aten::index_copy_", "some elements of index [4] and of the written-to tensor (self) [4]");
    tj_tensor *e = tj_expand(tj_zeros((const int64_t[]){1}, 1, TJ_FLOAT32), (const int64_t[]){4}, 1);
    test_expect_error(tj_index_copy_(e, 0, test_i64(2, (const int64_t[]){1, 1}, (const int64_t[]){0}),
                                     tj_ones((const int64_t[]){1, 1}, 2, TJ_FLOAT32)),
                      TJ_ERR_UNSUPPORTED, "aten::index_copy_", "more than one element of the written-to tensor");
    tj_tensor *r = tj_index_copy_(x, 3, i64(4, (const int64_t[]){0, 1, 2, 3}), x);
    cr_assert_null(r);
    cr_expect_eq(tj_last_status(), TJ_ERR_INDEX, "%s", tj_last_error());
    cr_expect(strstr(tj_last_error(), "aten::index_copy_") && strstr(tj_last_error(), "out of range"), "%s",
              tj_last_error());
    r = tj_scatter_value_(x, 0, x, tj_v_float(1));
    cr_assert_null(r);
    cr_expect_eq(tj_last_status(), TJ_ERR_DTYPE, "%s", tj_last_error());
    test_expect_close(x, (const double[]){1, 2, 3, 4}, 4, 0, 0);
}
