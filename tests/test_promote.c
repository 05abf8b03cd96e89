/* Type promotion (PyTorch's result_type), broadcasting and dim wrapping:
 * the runtime helpers every shape function relies on (runtime/promote.c). */
#include <criterion/criterion.h>
#include <string.h>

#include "runtime/internal.h"

/* Operand codes: D = a tensor with dims ([2]), Z = a 0-dim tensor, S = a
 * Python Scalar (int 2, float 2.5, bool True); X = absent. */
typedef enum { X, DF32, DF64, DI64, DB, ZF32, ZF64, ZI64, ZB, SI, SF, SB } operand;

static tj_value make_operand(operand o)
{
    static const tj_dtype dt[] = {[DF32] = TJ_FLOAT32, [DF64] = TJ_FLOAT64, [DI64] = TJ_INT64, [DB] = TJ_BOOL,
                                  [ZF32] = TJ_FLOAT32, [ZF64] = TJ_FLOAT64, [ZI64] = TJ_INT64, [ZB] = TJ_BOOL};
    switch (o) {
    case X: return tj_v_none();
    case SI: return tj_v_int(2);
    case SF: return tj_v_float(2.5);
    case SB: return tj_v_bool(true);
    default: break;
    }
    /* fake tensors: promotion looks at dtype and rank only */
    if (o <= DB) return tj_v_tensor(tj_tensor_fake(dt[o], 1, (int64_t[]){2}));
    return tj_v_tensor(tj_tensor_fake(dt[o], 0, NULL));
}

static const char *operand_name(operand o)
{
    static const char *n[] = {"-", "f32[2]", "f64[2]", "i64[2]", "bool[2]", "f32[]", "f64[]", "i64[]", "bool[]",
                              "int", "float", "bool"};
    return n[o];
}

/* Produced with PyTorch 1.13: torch.result_type(a, b) for every pair (first
 * operand a tensor), and torch._prims_common.elementwise_dtypes(a, b, s,
 * type_promotion_kind=DEFAULT)[1] for the triples, with a = torch.zeros(2) or
 * torch.zeros(()) of each dtype and s = 2, 2.5 or True. */
static const struct {
    operand a, b, c;
    tj_dtype want;
} cases[] = {
    {DF32, DF32, X, TJ_FLOAT32},
    {DF32, DF64, X, TJ_FLOAT64},
    {DF32, DI64, X, TJ_FLOAT32},
    {DF32, DB, X, TJ_FLOAT32},
    {DF32, ZF32, X, TJ_FLOAT32},
    {DF32, ZF64, X, TJ_FLOAT32},
    {DF32, ZI64, X, TJ_FLOAT32},
    {DF32, ZB, X, TJ_FLOAT32},
    {DF32, SI, X, TJ_FLOAT32},
    {DF32, SF, X, TJ_FLOAT32},
    {DF32, SB, X, TJ_FLOAT32},
    {DF64, DF32, X, TJ_FLOAT64},
    {DF64, DF64, X, TJ_FLOAT64},
    {DF64, DI64, X, TJ_FLOAT64},
    {DF64, DB, X, TJ_FLOAT64},
    {DF64, ZF32, X, TJ_FLOAT64},
    {DF64, ZF64, X, TJ_FLOAT64},
    {DF64, ZI64, X, TJ_FLOAT64},
    {DF64, ZB, X, TJ_FLOAT64},
    {DF64, SI, X, TJ_FLOAT64},
    {DF64, SF, X, TJ_FLOAT64},
    {DF64, SB, X, TJ_FLOAT64},
    {DI64, DF32, X, TJ_FLOAT32},
    {DI64, DF64, X, TJ_FLOAT64},
    {DI64, DI64, X, TJ_INT64},
    {DI64, DB, X, TJ_INT64},
    {DI64, ZF32, X, TJ_FLOAT32},
    {DI64, ZF64, X, TJ_FLOAT64},
    {DI64, ZI64, X, TJ_INT64},
    {DI64, ZB, X, TJ_INT64},
    {DI64, SI, X, TJ_INT64},
    {DI64, SF, X, TJ_FLOAT32},
    {DI64, SB, X, TJ_INT64},
    {DB, DF32, X, TJ_FLOAT32},
    {DB, DF64, X, TJ_FLOAT64},
    {DB, DI64, X, TJ_INT64},
    {DB, DB, X, TJ_BOOL},
    {DB, ZF32, X, TJ_FLOAT32},
    {DB, ZF64, X, TJ_FLOAT64},
    {DB, ZI64, X, TJ_INT64},
    {DB, ZB, X, TJ_BOOL},
    {DB, SI, X, TJ_INT64},
    {DB, SF, X, TJ_FLOAT32},
    {DB, SB, X, TJ_BOOL},
    {ZF32, DF32, X, TJ_FLOAT32},
    {ZF32, DF64, X, TJ_FLOAT64},
    {ZF32, DI64, X, TJ_FLOAT32},
    {ZF32, DB, X, TJ_FLOAT32},
    {ZF32, ZF32, X, TJ_FLOAT32},
    {ZF32, ZF64, X, TJ_FLOAT64},
    {ZF32, ZI64, X, TJ_FLOAT32},
    {ZF32, ZB, X, TJ_FLOAT32},
    {ZF32, SI, X, TJ_FLOAT32},
    {ZF32, SF, X, TJ_FLOAT32},
    {ZF32, SB, X, TJ_FLOAT32},
    {ZF64, DF32, X, TJ_FLOAT32},
    {ZF64, DF64, X, TJ_FLOAT64},
    {ZF64, DI64, X, TJ_FLOAT64},
    {ZF64, DB, X, TJ_FLOAT64},
    {ZF64, ZF32, X, TJ_FLOAT64},
    {ZF64, ZF64, X, TJ_FLOAT64},
    {ZF64, ZI64, X, TJ_FLOAT64},
    {ZF64, ZB, X, TJ_FLOAT64},
    {ZF64, SI, X, TJ_FLOAT64},
    {ZF64, SF, X, TJ_FLOAT64},
    {ZF64, SB, X, TJ_FLOAT64},
    {ZI64, DF32, X, TJ_FLOAT32},
    {ZI64, DF64, X, TJ_FLOAT64},
    {ZI64, DI64, X, TJ_INT64},
    {ZI64, DB, X, TJ_INT64},
    {ZI64, ZF32, X, TJ_FLOAT32},
    {ZI64, ZF64, X, TJ_FLOAT64},
    {ZI64, ZI64, X, TJ_INT64},
    {ZI64, ZB, X, TJ_INT64},
    {ZI64, SI, X, TJ_INT64},
    {ZI64, SF, X, TJ_FLOAT32},
    {ZI64, SB, X, TJ_INT64},
    {ZB, DF32, X, TJ_FLOAT32},
    {ZB, DF64, X, TJ_FLOAT64},
    {ZB, DI64, X, TJ_INT64},
    {ZB, DB, X, TJ_BOOL},
    {ZB, ZF32, X, TJ_FLOAT32},
    {ZB, ZF64, X, TJ_FLOAT64},
    {ZB, ZI64, X, TJ_INT64},
    {ZB, ZB, X, TJ_BOOL},
    {ZB, SI, X, TJ_INT64},
    {ZB, SF, X, TJ_FLOAT32},
    {ZB, SB, X, TJ_BOOL},
    {DF32, ZF32, SI, TJ_FLOAT32},
    {DF32, ZF32, SF, TJ_FLOAT32},
    {DF32, ZF32, SB, TJ_FLOAT32},
    {DF32, ZF64, SI, TJ_FLOAT32},
    {DF32, ZF64, SF, TJ_FLOAT32},
    {DF32, ZF64, SB, TJ_FLOAT32},
    {DF32, ZI64, SI, TJ_FLOAT32},
    {DF32, ZI64, SF, TJ_FLOAT32},
    {DF32, ZI64, SB, TJ_FLOAT32},
    {DF32, ZB, SI, TJ_FLOAT32},
    {DF32, ZB, SF, TJ_FLOAT32},
    {DF32, ZB, SB, TJ_FLOAT32},
    {DF64, ZF32, SI, TJ_FLOAT64},
    {DF64, ZF32, SF, TJ_FLOAT64},
    {DF64, ZF32, SB, TJ_FLOAT64},
    {DF64, ZF64, SI, TJ_FLOAT64},
    {DF64, ZF64, SF, TJ_FLOAT64},
    {DF64, ZF64, SB, TJ_FLOAT64},
    {DF64, ZI64, SI, TJ_FLOAT64},
    {DF64, ZI64, SF, TJ_FLOAT64},
    {DF64, ZI64, SB, TJ_FLOAT64},
    {DF64, ZB, SI, TJ_FLOAT64},
    {DF64, ZB, SF, TJ_FLOAT64},
    {DF64, ZB, SB, TJ_FLOAT64},
    {DI64, ZF32, SI, TJ_FLOAT32},
    {DI64, ZF32, SF, TJ_FLOAT32},
    {DI64, ZF32, SB, TJ_FLOAT32},
    {DI64, ZF64, SI, TJ_FLOAT64},
    {DI64, ZF64, SF, TJ_FLOAT64},
    {DI64, ZF64, SB, TJ_FLOAT64},
    {DI64, ZI64, SI, TJ_INT64},
    {DI64, ZI64, SF, TJ_FLOAT32},
    {DI64, ZI64, SB, TJ_INT64},
    {DI64, ZB, SI, TJ_INT64},
    {DI64, ZB, SF, TJ_FLOAT32},
    {DI64, ZB, SB, TJ_INT64},
    {DB, ZF32, SI, TJ_FLOAT32},
    {DB, ZF32, SF, TJ_FLOAT32},
    {DB, ZF32, SB, TJ_FLOAT32},
    {DB, ZF64, SI, TJ_FLOAT64},
    {DB, ZF64, SF, TJ_FLOAT64},
    {DB, ZF64, SB, TJ_FLOAT64},
    {DB, ZI64, SI, TJ_INT64},
    {DB, ZI64, SF, TJ_FLOAT32},
    {DB, ZI64, SB, TJ_INT64},
    {DB, ZB, SI, TJ_INT64},
    {DB, ZB, SF, TJ_FLOAT32},
    {DB, ZB, SB, TJ_BOOL},
    {ZF32, ZF32, SI, TJ_FLOAT32},
    {ZF32, ZF32, SF, TJ_FLOAT32},
    {ZF32, ZF32, SB, TJ_FLOAT32},
    {ZF32, ZF64, SI, TJ_FLOAT64},
    {ZF32, ZF64, SF, TJ_FLOAT64},
    {ZF32, ZF64, SB, TJ_FLOAT64},
    {ZF32, ZI64, SI, TJ_FLOAT32},
    {ZF32, ZI64, SF, TJ_FLOAT32},
    {ZF32, ZI64, SB, TJ_FLOAT32},
    {ZF32, ZB, SI, TJ_FLOAT32},
    {ZF32, ZB, SF, TJ_FLOAT32},
    {ZF32, ZB, SB, TJ_FLOAT32},
    {ZF64, ZF32, SI, TJ_FLOAT64},
    {ZF64, ZF32, SF, TJ_FLOAT64},
    {ZF64, ZF32, SB, TJ_FLOAT64},
    {ZF64, ZF64, SI, TJ_FLOAT64},
    {ZF64, ZF64, SF, TJ_FLOAT64},
    {ZF64, ZF64, SB, TJ_FLOAT64},
    {ZF64, ZI64, SI, TJ_FLOAT64},
    {ZF64, ZI64, SF, TJ_FLOAT64},
    {ZF64, ZI64, SB, TJ_FLOAT64},
    {ZF64, ZB, SI, TJ_FLOAT64},
    {ZF64, ZB, SF, TJ_FLOAT64},
    {ZF64, ZB, SB, TJ_FLOAT64},
    {ZI64, ZF32, SI, TJ_FLOAT32},
    {ZI64, ZF32, SF, TJ_FLOAT32},
    {ZI64, ZF32, SB, TJ_FLOAT32},
    {ZI64, ZF64, SI, TJ_FLOAT64},
    {ZI64, ZF64, SF, TJ_FLOAT64},
    {ZI64, ZF64, SB, TJ_FLOAT64},
    {ZI64, ZI64, SI, TJ_INT64},
    {ZI64, ZI64, SF, TJ_FLOAT32},
    {ZI64, ZI64, SB, TJ_INT64},
    {ZI64, ZB, SI, TJ_INT64},
    {ZI64, ZB, SF, TJ_FLOAT32},
    {ZI64, ZB, SB, TJ_INT64},
    {ZB, ZF32, SI, TJ_FLOAT32},
    {ZB, ZF32, SF, TJ_FLOAT32},
    {ZB, ZF32, SB, TJ_FLOAT32},
    {ZB, ZF64, SI, TJ_FLOAT64},
    {ZB, ZF64, SF, TJ_FLOAT64},
    {ZB, ZF64, SB, TJ_FLOAT64},
    {ZB, ZI64, SI, TJ_INT64},
    {ZB, ZI64, SF, TJ_FLOAT32},
    {ZB, ZI64, SB, TJ_INT64},
    {ZB, ZB, SI, TJ_INT64},
    {ZB, ZB, SF, TJ_FLOAT32},
    {ZB, ZB, SB, TJ_BOOL},
};

Test(promote, result_type_matches_pytorch_for_every_combination)
{
    tj_scope *s = tj_scope_begin();
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        tj_value v[3] = {make_operand(cases[i].a), make_operand(cases[i].b), make_operand(cases[i].c)};
        tj_dtype got = tj_result_type(v, 3);
        cr_expect_eq(got, cases[i].want, "%s, %s, %s: got %s, want %s", operand_name(cases[i].a),
                     operand_name(cases[i].b), operand_name(cases[i].c), tj_dtype_name(got),
                     tj_dtype_name(cases[i].want));
        /* the order of the operands does not matter */
        tj_value r[3] = {v[2], v[1], v[0]};
        cr_expect_eq(tj_result_type(r, 3), cases[i].want, "reversed %s, %s, %s", operand_name(cases[i].a),
                     operand_name(cases[i].b), operand_name(cases[i].c));
    }
    tj_scope_end(s);
}

Test(promote, readme_examples)
{
    tj_scope *s = tj_scope_begin();
    struct { operand a, b; tj_dtype want; const char *what; } ex[] = {
        {DF32, ZF64, TJ_FLOAT32, "float32[2,3] + float64 0-dim"},
        {DI64, ZF32, TJ_FLOAT32, "int64[2,3] + float32 0-dim"},
        {DI64, SF, TJ_FLOAT32, "int64 + float Scalar (the default dtype)"},
        {DI64, SI, TJ_INT64, "int64 + int Scalar"},
        {DI64, ZF64, TJ_FLOAT64, "int64[2,3] * float64 0-dim brings its own dtype"},
        {DB, SI, TJ_INT64, "bool + int Scalar"},
        {DB, SB, TJ_BOOL, "bool + bool Scalar"},
        {DB, ZI64, TJ_INT64, "bool + int64 0-dim"},
        {ZI64, SF, TJ_FLOAT32, "int64 0-dim + float Scalar"},
        {ZF64, DF32, TJ_FLOAT32, "0-dim float64 first"},
    };
    for (size_t i = 0; i < sizeof ex / sizeof *ex; i++) {
        tj_value v[2] = {make_operand(ex[i].a), make_operand(ex[i].b)};
        cr_expect_eq(tj_result_type(v, 2), ex[i].want, "%s", ex[i].what);
    }
    tj_scope_end(s);
}

Test(promote, absent_operands_are_skipped)
{
    cr_expect_eq(tj_result_type(NULL, 0), TJ_FLOAT32, "nothing at all: the default dtype");
    tj_value only_int[2] = {tj_v_none(), tj_v_int(3)};
    cr_expect_eq(tj_result_type(only_int, 2), TJ_INT64);
    tj_value only_float[1] = {tj_v_float(3)};
    cr_expect_eq(tj_result_type(only_float, 1), TJ_FLOAT32);
    tj_value only_bool[1] = {tj_v_bool(false)};
    cr_expect_eq(tj_result_type(only_bool, 1), TJ_BOOL);
    /* lists, strings and dtypes take no part */
    tj_tensor *t = tj_tensor_fake(TJ_INT64, 1, (int64_t[]){2});
    tj_value mixed[4] = {tj_v_tensor(t), tj_v_ints((int64_t[]){1}, 1), tj_v_str("x"), tj_v_dtype(TJ_FLOAT64)};
    cr_expect_eq(tj_result_type(mixed, 4), TJ_INT64);
    tj_tensor_release(t);
}

Test(promote, categories)
{
    cr_expect_eq(tj_dtype_category(TJ_BOOL), TJ_CAT_BOOL);
    cr_expect_eq(tj_dtype_category(TJ_INT64), TJ_CAT_INT);
    cr_expect_eq(tj_dtype_category(TJ_FLOAT32), TJ_CAT_FLOAT);
    cr_expect_eq(tj_dtype_category(TJ_FLOAT64), TJ_CAT_FLOAT);
}

/* Values through a real kernel: the result dtype and the converted values. */
Test(promote, add_converts_operands_to_the_result_dtype)
{
    tj_scope *s = tj_scope_begin();
    tj_tensor *i = tj_tensor_from_data(TJ_INT64, 1, (int64_t[]){3}, (int64_t[]){1, 2, -3});
    tj_tensor *h = tj_tensor_scalar_f64(0.25);
    tj_tensor *r = tj_add(i, h);
    cr_assert_not_null(r, "%s", tj_last_error());
    cr_expect_eq(tj_tensor_dtype(r), TJ_FLOAT64);
    cr_expect_float_eq(tj_tensor_item_at(r, 2), -2.75, 0);

    tj_tensor *f = tj_tensor_from_data(TJ_FLOAT32, 1, (int64_t[]){2}, (float[]){0.1f, 1e30f});
    tj_tensor *big = tj_tensor_scalar_f64(1e30);
    r = tj_add(f, big);
    cr_expect_eq(tj_tensor_dtype(r), TJ_FLOAT32);
    cr_expect_eq((float)tj_tensor_item_at(r, 1), 2e30f);

    tj_tensor *b = tj_tensor_from_data(TJ_BOOL, 1, (int64_t[]){4}, (uint8_t[]){0, 1, 0, 1});
    tj_tensor *c = tj_tensor_from_data(TJ_BOOL, 1, (int64_t[]){4}, (uint8_t[]){0, 0, 1, 1});
    r = tj_add(b, c);
    cr_expect_eq(tj_tensor_dtype(r), TJ_BOOL, "bool + bool stays bool (logical or)");
    for (int k = 0; k < 4; k++) cr_expect_eq(tj_tensor_item_at(r, k), k ? 1.0 : 0.0);
    r = tj_add(b, tj_tensor_scalar_i64(5));
    cr_expect_eq(tj_tensor_dtype(r), TJ_INT64);
    cr_expect_eq(tj_tensor_item_at(r, 3), 6.0);
    tj_scope_end(s);
}

/* ---- broadcasting ---- */

static void expect_broadcast(int na, const int64_t *a, int nb, const int64_t *b, int nwant, const int64_t *want)
{
    int n = -1;
    int64_t out[TJ_MAX_DIMS];
    char sa[64], sb[64];
    tj_shape_str(na, a, sa, sizeof sa);
    tj_shape_str(nb, b, sb, sizeof sb);
    cr_assert_eq(tj_broadcast_shapes("test", na, a, nb, b, &n, out), TJ_OK, "%s with %s: %s", sa, sb, tj_last_error());
    cr_expect_eq(n, nwant, "%s with %s: rank %d", sa, sb, n);
    for (int d = 0; d < n && d < nwant; d++) cr_expect_eq(out[d], want[d], "%s with %s: dim %d", sa, sb, d);
}

#define SHAPE(...) (int)(sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t)), (int64_t[]){__VA_ARGS__}
#define SCALAR_SHAPE 0, NULL

Test(broadcast, compatible_shapes)
{
    expect_broadcast(SHAPE(3, 1), SHAPE(4), SHAPE(3, 4));
    expect_broadcast(SHAPE(4), SHAPE(3, 1), SHAPE(3, 4));
    expect_broadcast(SCALAR_SHAPE, SHAPE(2, 3), SHAPE(2, 3));
    expect_broadcast(SHAPE(2, 3), SCALAR_SHAPE, SHAPE(2, 3));
    expect_broadcast(SCALAR_SHAPE, SCALAR_SHAPE, SCALAR_SHAPE);
    expect_broadcast(SHAPE(5, 1, 4), SHAPE(3, 1), SHAPE(5, 3, 4));
    expect_broadcast(SHAPE(1), SHAPE(1), SHAPE(1));
    expect_broadcast(SHAPE(0), SHAPE(1), SHAPE(0));
    expect_broadcast(SHAPE(2, 0, 3), SHAPE(1, 3), SHAPE(2, 0, 3));
    expect_broadcast(SHAPE(1, 0), SHAPE(7, 1), SHAPE(7, 0));
    expect_broadcast(SHAPE(1, 2, 1, 2, 1, 2, 1, 2), SHAPE(2, 1, 2, 1, 2, 1, 2, 1), SHAPE(2, 2, 2, 2, 2, 2, 2, 2));
}

Test(broadcast, incompatible_shapes_name_the_dim)
{
    int n = 7;
    int64_t out[TJ_MAX_DIMS] = {42};
    cr_expect_eq(tj_broadcast_shapes("aten::add.Tensor", SHAPE(3), SHAPE(4), &n, out), TJ_ERR_SHAPE);
    cr_expect_str_eq(tj_last_error(), "aten::add.Tensor: shapes [3] and [4] cannot be broadcast (dim 0: 3 vs 4)");
    cr_expect_eq(n, 7, "outputs untouched on error");
    cr_expect_eq(out[0], 42);
    cr_expect_eq(tj_broadcast_shapes("aten::mul.Tensor", SHAPE(2, 3, 4), SHAPE(5, 1), &n, out), TJ_ERR_SHAPE);
    cr_expect_str_eq(tj_last_error(), "aten::mul.Tensor: shapes [2, 3, 4] and [5, 1] cannot be broadcast (dim 1: 3 vs 5)");
    cr_expect_eq(tj_broadcast_shapes("x", SHAPE(0), SHAPE(3), &n, out), TJ_ERR_SHAPE, "0 does not broadcast to 3");
}

Test(broadcast, strides_of_broadcast_dims_are_zero)
{
    tj_tensor *t = tj_tensor_fake(TJ_FLOAT32, 2, (int64_t[]){3, 1});
    int64_t st[3];
    tj_broadcast_strides(t, 3, (int64_t[]){2, 3, 4}, st);
    cr_expect_eq(st[0], 0);
    cr_expect_eq(st[1], 1);
    cr_expect_eq(st[2], 0);
    tj_tensor_release(t);
    tj_tensor *u = tj_tensor_fake(TJ_FLOAT32, 2, (int64_t[]){2, 5});
    tj_broadcast_strides(u, 2, (int64_t[]){2, 5}, st);
    cr_expect_eq(st[0], 5);
    cr_expect_eq(st[1], 1);
    tj_tensor_release(u);
}

Test(broadcast, add_of_broadcast_operands_has_the_broadcast_shape)
{
    tj_scope *s = tj_scope_begin();
    tj_tensor *a = tj_tensor_from_data(TJ_FLOAT32, 3, (int64_t[]){2, 1, 2}, (float[]){1, 2, 3, 4});
    tj_tensor *b = tj_tensor_from_data(TJ_FLOAT32, 2, (int64_t[]){3, 1}, (float[]){10, 20, 30});
    tj_tensor *r = tj_add(a, b);
    cr_assert_not_null(r, "%s", tj_last_error());
    cr_assert_eq(tj_tensor_ndim(r), 3);
    cr_expect_eq(tj_tensor_size(r, 0), 2);
    cr_expect_eq(tj_tensor_size(r, 1), 3);
    cr_expect_eq(tj_tensor_size(r, 2), 2);
    static const float want[12] = {11, 12, 21, 22, 31, 32, 13, 14, 23, 24, 33, 34};
    for (int i = 0; i < 12; i++) cr_expect_eq(tj_tensor_item_at(r, i), want[i], "element %d", i);
    tj_tensor *e = tj_add(tj_tensor_empty(TJ_FLOAT32, 2, (int64_t[]){0, 2}), a);
    cr_assert_not_null(e, "%s", tj_last_error());
    cr_expect_eq(tj_tensor_numel(e), 0, "[0, 2] with [2, 1, 2] is an empty [2, 0, 2]");
    cr_expect_eq(tj_tensor_size(e, 0), 2);
    cr_expect_eq(tj_tensor_size(e, 1), 0);
    cr_expect_null(tj_add(a, tj_tensor_empty(TJ_FLOAT32, 1, (int64_t[]){3})));
    cr_expect_eq(tj_last_status(), TJ_ERR_SHAPE);
    tj_scope_end(s);
}

/* ---- dims ---- */

Test(wrap_dim, accepts_minus_rank_to_rank_minus_one)
{
    int d = -9;
    for (int64_t dim = -3; dim < 3; dim++) {
        cr_assert_eq(tj_wrap_dim("test", dim, 3, &d), TJ_OK, "dim %d", (int)dim);
        cr_expect_eq(d, dim < 0 ? dim + 3 : dim);
    }
    cr_expect_eq(tj_wrap_dim("test", -1, 0, &d), TJ_OK, "rank 0 accepts -1");
    cr_expect_eq(d, 0);
    cr_expect_eq(tj_wrap_dim("test", 0, 0, &d), TJ_OK, "rank 0 accepts 0");
    cr_expect_eq(d, 0);
    cr_expect_eq(tj_wrap_dim("test", 7, 8, &d), TJ_OK);
    cr_expect_eq(d, 7);
}

/* A dim the result adds (unsqueeze, stack, diag_embed) wraps over rank + 1
 * positions; the message named that count as the operand's rank
 * ("unsqueeze of a 0-dim tensor: ... a tensor of rank 1"). torch:
 * "Dimension out of range (expected to be in range of [-1, 0], but got 1)". */
Test(wrap_dim, a_new_dim_names_the_operands_rank)
{
    tj_scope *s = tj_scope_begin();
    tj_tensor *z = tj_ones(NULL, 0, TJ_FLOAT32), *v = tj_ones((int64_t[]){2}, 1, TJ_FLOAT32);
    cr_expect_null(tj_unsqueeze(z, 1));
    cr_expect_eq(tj_last_status(), TJ_ERR_INDEX);
    cr_expect_str_eq(tj_last_error(), "aten::unsqueeze: dim 1 is out of range for a new dim of a tensor of rank 0 (expected -1..0)");
    cr_expect_null(tj_stack((tj_tensor *[]){v, v}, 2, 2));
    cr_expect(strstr(tj_last_error(), "dim 2 is out of range for a new dim of a tensor of rank 1 (expected -2..1)"), "%s",
              tj_last_error());
    int d = 7;
    cr_expect_eq(tj_wrap_new_dim("op", -2, 1, &d), TJ_OK);
    cr_expect_eq(d, 0);
    tj_scope_end(s);
}

Test(wrap_dim, out_of_range_is_an_index_error_naming_the_range)
{
    int d = 5;
    cr_expect_eq(tj_wrap_dim("aten::sum.dim_IntList", 3, 3, &d), TJ_ERR_INDEX);
    cr_expect_str_eq(tj_last_error(),
                     "aten::sum.dim_IntList: dim 3 is out of range for a tensor of rank 3 (expected -3..2)");
    cr_expect_eq(d, 5, "output untouched on error");
    cr_expect_eq(tj_wrap_dim("op", -4, 3, &d), TJ_ERR_INDEX);
    cr_expect_eq(tj_wrap_dim("op", 1, 0, &d), TJ_ERR_INDEX);
    cr_expect_str_eq(tj_last_error(), "op: dim 1 is out of range for a tensor of rank 0 (expected -1..0)");
    cr_expect_eq(tj_wrap_dim("op", -2, 0, &d), TJ_ERR_INDEX);
    cr_expect_eq(tj_wrap_dim("op", INT64_MAX, 2, &d), TJ_ERR_INDEX);
    cr_expect_eq(tj_wrap_dim("op", INT64_MIN, 2, &d), TJ_ERR_INDEX);
    cr_expect_eq(tj_wrap_dim("op", (int64_t)1 << 32, 2, &d), TJ_ERR_INDEX, "no truncation to int");
}
