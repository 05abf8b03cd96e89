/* Constant and progression fills (see fill.h). */
#include <string.h>

#include "copy.h"
#include "fill.h"
#include "parallel.h"

/* One fill: what goes to out[i]. */
typedef enum fill_kind {
    FILL_1, FILL_2, FILL_4, FILL_8, ARANGE_F32, ARANGE_F64, ARANGE_I64, LINSPACE_F32, LINSPACE_F64, LINSPACE_I64
} fill_kind;

typedef struct fill_args {
    fill_kind kind;
    void *out;
    uint64_t value;        /* FILL_*: the value's bytes */
    double start, step;    /* ARANGE_F* */
    int64_t istart, istep; /* ARANGE_I64 */
    double end;            /* LINSPACE_*: start, step (rounded to float for F32), end */
    int64_t n;             /* LINSPACE_*: the number of values */
} fill_args;

/* LINSPACE_*: value i, in T arithmetic (the int64 loop computes in double) */
#define LINSPACE_AT(T, start, end, step, i, n) \
    ((i) < (n) / 2 ? (T)(start) + (T)(step) * (T)(i) : (T)(end) - (T)(step) * (T)((n) - (i) - 1))

/* Elements [s, e). */
static void fill_range(void *ctx, int t, int64_t s, int64_t e)
{
    const fill_args *a = ctx;
    (void)t;
    switch (a->kind) {
    case FILL_1: memset((uint8_t *)a->out + s, (uint8_t)a->value, (size_t)(e - s)); break;
    case FILL_2: {
        uint16_t v = (uint16_t)a->value, *o = a->out;
        for (int64_t i = s; i < e; i++) o[i] = v;
        break;
    }
    case FILL_4: {
        uint32_t v = (uint32_t)a->value, *o = a->out;
        for (int64_t i = s; i < e; i++) o[i] = v;
        break;
    }
    case FILL_8: {
        uint64_t v = a->value, *o = a->out;
        for (int64_t i = s; i < e; i++) o[i] = v;
        break;
    }
    case ARANGE_F32: {
        float *o = a->out;
        double start = a->start, step = a->step;
        for (int64_t i = s; i < e; i++) o[i] = (float)(start + step * (double)i);
        break;
    }
    case ARANGE_F64: {
        double *o = a->out, start = a->start, step = a->step;
        for (int64_t i = s; i < e; i++) o[i] = start + step * (double)i;
        break;
    }
    case ARANGE_I64: {
        int64_t *o = a->out;
        uint64_t start = (uint64_t)a->istart, step = (uint64_t)a->istep;
        for (int64_t i = s; i < e; i++) o[i] = (int64_t)(start + step * (uint64_t)i);
        break;
    }
    case LINSPACE_F32: {
        float *o = a->out;
        for (int64_t i = s; i < e; i++) o[i] = LINSPACE_AT(float, a->start, a->end, a->step, i, a->n);
        break;
    }
    case LINSPACE_F64: {
        double *o = a->out;
        for (int64_t i = s; i < e; i++) o[i] = LINSPACE_AT(double, a->start, a->end, a->step, i, a->n);
        break;
    }
    case LINSPACE_I64: {
        int64_t *o = a->out;
        for (int64_t i = s; i < e; i++) o[i] = tj_k_float_to_i64(LINSPACE_AT(double, a->start, a->end, a->step, i, a->n));
        break;
    }
    }
}

void tj_k_fill(void *out, size_t elem_size, const void *value, int64_t n, int nthreads)
{
    fill_args a = {.kind = elem_size == 1 ? FILL_1 : elem_size == 2 ? FILL_2 : elem_size == 4 ? FILL_4 : FILL_8,
                   .out = out};
    if (elem_size == 1) a.value = *(const uint8_t *)value;
    else if (elem_size == 2) {
        uint16_t v;
        memcpy(&v, value, 2);
        a.value = v;
    } else if (elem_size == 4) {
        uint32_t v;
        memcpy(&v, value, 4);
        a.value = v;
    } else memcpy(&a.value, value, 8);
    tj_k_parallel(nthreads, n, fill_range, &a);
}

void tj_k_arange_f(void *out, tj_dtype dtype, double start, double step, int64_t n, int nthreads)
{
    fill_args a = {.kind = dtype == TJ_FLOAT32 ? ARANGE_F32 : ARANGE_F64, .out = out, .start = start, .step = step};
    tj_k_parallel(nthreads, n, fill_range, &a);
}

void tj_k_arange_i64(int64_t *out, int64_t start, int64_t step, int64_t n, int nthreads)
{
    fill_args a = {.kind = ARANGE_I64, .out = out, .istart = start, .istep = step};
    tj_k_parallel(nthreads, n, fill_range, &a);
}

/* ATen: (end - start) / (steps - 1) in the result's type (double for integers) */
double tj_k_linspace_step(tj_dtype dtype, double start, double end, int64_t n)
{
    return dtype == TJ_FLOAT32 ? (double)(((float)end - (float)start) / (float)(n - 1)) : (end - start) / (double)(n - 1);
}

void tj_k_linspace(void *out, tj_dtype dtype, double start, double end, int64_t n, int nthreads)
{
    fill_args a = {.kind = dtype == TJ_FLOAT32 ? LINSPACE_F32 : dtype == TJ_FLOAT64 ? LINSPACE_F64 : LINSPACE_I64,
                   .out = out, .start = start, .end = end, .n = n};
    /* ATen fills start for one step: the formula would give end - inf * 0 */
    if (n == 1) a.end = start;
    else a.step = tj_k_linspace_step(dtype, start, end, n);
    if (n > 0) tj_k_parallel(nthreads, n, fill_range, &a);
}
