/* tril_indices and triu_indices as torch._refs (1.13, after ATen's CUDA
 * kernels): the triangle's rows split into a trapezoid, whose positions x
 * give their row by the root of the triangle-number quadratic (float64
 * sqrt, then floor), and a rectangle of whole rows (x // col, x % col). */
#include "util.h"

static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }
static int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }
static int64_t floordiv(int64_t a, int64_t b) { return a / b - (a % b != 0 && (a < 0) != (b < 0)); }

/* torch._refs' _get_tril_sizes: the trapezoid's and rectangle's element
 * counts and the trapezoid's first row length. */
static void tril_sizes(int64_t row, int64_t col, int64_t offset, int64_t *trap, int64_t *rect, int64_t *first)
{
    *trap = *rect = *first = 0;
    if (row == 0 || col == 0) return;
    int64_t m_first = offset > 0 ? min64(col, 1 + offset) : row + offset > 0;
    int64_t m_last = max64(0, min64(col, row + offset)), n_all = max64(0, min64(row, row + offset));
    int64_t n_trap = m_last - m_first + 1;
    *trap = floordiv((m_first + m_last) * n_trap, 2);
    *rect = max64(0, (n_all - n_trap) * col);
    *first = m_first;
}

static tj_tensor *f64_range(int64_t n) { return tj_arange(tj_v_int(0), tj_v_int(n), tj_v_int(1), TJ_FLOAT64); }

/* stack([cat(rows_a, rows_b), cat(cols_a, cols_b)]) */
static tj_status stacked(tj_tensor *ra, tj_tensor *rb, tj_tensor *ca, tj_tensor *cb, tj_value *outs)
{
    tj_tensor *parts[2] = {tj_cat((tj_tensor *[]){ra, rb}, 2, 0), tj_cat((tj_tensor *[]){ca, cb}, 2, 0)};
    if (!parts[0] || !parts[1]) return tj_last_status();
    return tj_dc_done(tj_stack(parts, 2, 0), outs);
}

static tj_status tril_indices(const tj_value *args, tj_value *outs)
{
    TJ_DC_CHECK(tril_indices, args, m);
    int64_t row = args[0].u.i, col = args[1].u.i, offset = args[2].u.i, trap, rect, first;
    tril_sizes(row, col, offset, &trap, &rect, &first);
    int64_t row_offset = max64(0, -offset);
    /* top trapezoid */
    tj_tensor *xs1 = f64_range(trap);
    double b = (double)first - 0.5;
    tj_tensor *r1 = tj_floor(tj_add_scalar(tj_sqrt(tj_add_scalar(tj_mul_scalar(xs1, tj_v_int(2)), tj_v_float(b * b))),
                                           tj_v_float(-b)));
    tj_tensor *c1 = tj_floor(
        tj_sub(xs1, tj_mul_scalar(tj_mul(tj_add_scalar(r1, tj_v_int(2 * first - 1)), r1), tj_v_float(0.5))));
    r1 = tj_to_copy(tj_add_scalar(r1, tj_v_int(row_offset)), TJ_INT64);
    c1 = tj_to_copy(c1, TJ_INT64);
    /* bottom rectangle (col 0 has none: any divisor) */
    tj_tensor *xs2 = tj_arange(tj_v_int(0), tj_v_int(rect), tj_v_int(1), TJ_INT64);
    int64_t div = col ? col : 1;
    tj_tensor *r2 = tj_add_scalar(tj_floor_divide_scalar(xs2, tj_v_int(div)), tj_v_int(col - first + 1 + row_offset));
    tj_tensor *c2 = tj_remainder_scalar(xs2, tj_v_int(div));
    return stacked(r1, r2, c1, c2, outs);
}

static tj_status triu_indices(const tj_value *args, tj_value *outs)
{
    TJ_DC_CHECK(triu_indices, args, m);
    int64_t row = args[0].u.i, col = args[1].u.i, offset = args[2].u.i, trap = 0, rect = 0, first = 0;
    if (row && col) { /* torch._refs' _get_triu_sizes */
        int64_t ttrap, trect, unused;
        first = offset > 0 ? max64(0, col - offset) : col;
        rect = max64(0, min64(row, -offset) * col);
        tril_sizes(row, col, offset - 1, &ttrap, &trect, &unused);
        trap = row * col - (ttrap + trect) - rect;
    }
    int64_t col_offset = max64(0, offset), div = col ? col : 1;
    /* top rectangle */
    tj_tensor *xs2 = tj_arange(tj_v_int(0), tj_v_int(rect), tj_v_int(1), TJ_INT64);
    tj_tensor *r2 = tj_floor_divide_scalar(xs2, tj_v_int(div)), *c2 = tj_remainder_scalar(xs2, tj_v_int(div));
    /* bottom trapezoid */
    tj_tensor *xs1 = f64_range(trap);
    double b = -0.5 - (double)first;
    tj_tensor *r1 = tj_floor(tj_add_scalar(
        tj_neg(tj_sqrt(tj_add_scalar(tj_mul_scalar(xs1, tj_v_int(-2)), tj_v_float(b * b)))), tj_v_float(-b)));
    tj_tensor *c1 = tj_floor(tj_sub(
        xs1, tj_mul_scalar(tj_mul(tj_rsub_scalar(r1, tj_v_int(2 * first - 1), tj_v_int(1)), r1), tj_v_float(0.5))));
    r1 = tj_add_scalar(tj_to_copy(r1, TJ_INT64), tj_v_int(col ? floordiv(rect, col) : 0));
    c1 = tj_add_scalar(tj_to_copy(c1, TJ_INT64), tj_v_int(col_offset));
    return stacked(r2, r1, c2, c1, outs);
}

void tj_register_trilu_indices_decompositions(void);
void tj_register_trilu_indices_decompositions(void)
{
    tj_op_set_decomposition(TJ_OPS(tril_indices), tril_indices, "tril_indices");
    tj_op_set_decomposition(TJ_OPS(triu_indices), triu_indices, "triu_indices");
}
