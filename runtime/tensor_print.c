/* tj_tensor_print / tj_tensor_to_string: PyTorch's repr of a tensor, after
 * torch/_tensor_str.py (1.13) with the default print options (precision 4,
 * threshold 1000, edgeitems 3, linewidth 80). Two walks over the elements
 * that are shown: the first picks the float format and the common width, as
 * _Formatter does; the second writes the nested brackets, as
 * _tensor_str_with_formatter and _vector_str do. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "tjit/autograd.h"

enum { PRECISION = 4, THRESHOLD = 1000, EDGEITEMS = 3, LINEWIDTH = 80 };
#define PREFIX "tensor("
#define MAX_ELEMENT 400 /* "%.4f" of DBL_MAX needs 314 characters */

typedef struct printer {
    const tj_tensor *t;
    FILE *f;
    bool summarize;   /* more than THRESHOLD elements: EDGEITEMS per end of each dim */
    bool int_mode;    /* float tensor whose finite values are all integers */
    bool sci_mode;    /* float tensor printed as %.4e */
    double abs_min, abs_max; /* over the nonzero finite values */
    bool any_nonzero_finite;
    int width;        /* every element is right-aligned to this width */
} printer;

/* Whether index i of a dim of `size` elements is hidden by the summary. */
static bool hidden(const printer *p, int64_t size, int64_t i)
{
    return p->summarize && size > 2 * EDGEITEMS && i >= EDGEITEMS && i < size - EDGEITEMS;
}

/* The bytes between elements along dim: 0 for a size-1 dim, never stepped
 * over, whose stride may be any value (as_strided's, up to INT64_MAX). */
static int64_t byte_step(const tj_tensor *t, int dim)
{
    return t->shape[dim] > 1 ? t->strides[dim] * (int64_t)tj_dtype_size(t->dtype) : 0;
}

/* Calls fn on every shown element, in row-major order (the summarised data
 * of get_summarized_data). */
static void visit(printer *p, int dim, const char *base, void (*fn)(printer *, const char *))
{
    const tj_tensor *t = p->t;
    if (dim >= t->ndim || dim >= TJ_MAX_DIMS) { /* the second test keeps GCC's -Warray-bounds quiet */
        fn(p, base);
        return;
    }
    int64_t step = byte_step(t, dim);
    for (int64_t i = 0; i < t->shape[dim]; i++)
        if (!hidden(p, t->shape[dim], i)) visit(p, dim + 1, base + i * step, fn);
}

/* One element without padding, as _Formatter.format writes it before padding
 * (Python's format(): nan is "nan" whatever its sign bit). */
static int format_element(const printer *p, const char *e, char *out)
{
    if (p->t->dtype == TJ_BOOL) return snprintf(out, MAX_ELEMENT, "%s", *(const uint8_t *)e ? "True" : "False");
    if (tj_dtype_category(p->t->dtype) == TJ_CAT_INT)
        return snprintf(out, MAX_ELEMENT, "%" PRId64, tj_load_i64(e, p->t->dtype));
    double v = tj_load_f64(e, p->t->dtype);
    if (isnan(v)) return snprintf(out, MAX_ELEMENT, "nan");
    if (isinf(v)) return snprintf(out, MAX_ELEMENT, "%sinf", v < 0 ? "-" : "");
    if (p->sci_mode) return snprintf(out, MAX_ELEMENT, "%.*e", PRECISION, v);
    if (p->int_mode) return snprintf(out, MAX_ELEMENT, "%.0f.", v);
    return snprintf(out, MAX_ELEMENT, "%.*f", PRECISION, v);
}

static void gather_range(printer *p, const char *e)
{
    double v = tj_load_f64(e, p->t->dtype);
    if (!isfinite(v) || v == 0) return;
    double a = fabs(v);
    p->abs_min = p->any_nonzero_finite ? fmin(p->abs_min, a) : a;
    p->abs_max = p->any_nonzero_finite ? fmax(p->abs_max, a) : a;
    p->any_nonzero_finite = true;
    if (v != ceil(v)) p->int_mode = false;
}

/* The width pass: torch measures only the nonzero finite values of a float
 * tensor (and every value of the others). */
static void gather_width(printer *p, const char *e)
{
    if (tj_dtype_category(p->t->dtype) == TJ_CAT_FLOAT) {
        double v = tj_load_f64(e, p->t->dtype);
        if (!isfinite(v) || v == 0) return;
    }
    char s[MAX_ELEMENT];
    int n = format_element(p, e, s);
    if (n > p->width) p->width = n;
}

/* _Formatter.__init__: the float mode (int, fixed or scientific) and the width. */
static void choose_format(printer *p)
{
    p->int_mode = true;
    p->width = 1;
    bool is_float = tj_dtype_category(p->t->dtype) == TJ_CAT_FLOAT;
    if (is_float) {
        visit(p, 0, tj_tensor_ptr(p->t), gather_range);
        if (!p->any_nonzero_finite) return;
        double ratio = p->abs_max / p->abs_min;
        p->sci_mode = ratio > 1000.0 || p->abs_max > 1.0e8 || (!p->int_mode && p->abs_min < 1.0e-4);
    }
    visit(p, 0, tj_tensor_ptr(p->t), gather_width);
}

static void put_spaces(FILE *f, int n)
{
    for (int i = 0; i < n; i++) fputc(' ', f);
}

static void put_element(const printer *p, const char *e)
{
    char s[MAX_ELEMENT];
    int n = format_element(p, e, s);
    put_spaces(p->f, p->width - n);
    fputs(s, p->f);
}

/* _vector_str: a 1-d slice, wrapped so that a line holds at most
 * (LINEWIDTH - indent) / (width + 2) items (the summary's " ..." counts as one). */
static void put_vector(const printer *p, const char *base, int indent)
{
    const tj_tensor *t = p->t;
    int dim = t->ndim - 1;
    int64_t size = t->shape[dim];
    int64_t step = byte_step(t, dim);
    int per_line = (LINEWIDTH - indent) / (p->width + 2);
    if (per_line < 1) per_line = 1;
    int64_t item = 0;
    fputc('[', p->f);
    for (int64_t i = 0; i < size; i++) {
        bool gap = hidden(p, size, i);
        if (gap && i != EDGEITEMS) continue;
        if (item > 0) {
            fputc(',', p->f);
            if (item % per_line == 0) {
                fputc('\n', p->f);
                put_spaces(p->f, indent + 1);
            } else {
                fputc(' ', p->f);
            }
        }
        item++;
        if (gap)
            fputs(" ...", p->f);
        else
            put_element(p, base + i * step);
    }
    fputc(']', p->f);
}

/* _tensor_str_with_formatter: slices of dim `dim` separated by a comma and
 * one newline per remaining dim beyond the first. */
static void put_slices(const printer *p, int dim, const char *base, int indent)
{
    const tj_tensor *t = p->t;
    if (dim == t->ndim) {
        put_element(p, base);
        return;
    }
    if (dim == t->ndim - 1) {
        put_vector(p, base, indent);
        return;
    }
    int64_t size = t->shape[dim];
    int64_t step = byte_step(t, dim);
    fputc('[', p->f);
    for (int64_t i = 0; i < size; i++) {
        bool gap = hidden(p, size, i);
        if (gap && i != EDGEITEMS) continue;
        if (i > 0) {
            fputc(',', p->f);
            for (int d = dim + 1; d < t->ndim; d++) fputc('\n', p->f);
            put_spaces(p->f, indent + 1);
        }
        if (gap)
            fputs("...", p->f);
        else
            put_slices(p, dim + 1, base + i * step, indent + 1);
    }
    fputc(']', p->f);
}

/* Python's str(tuple(shape)): "(2, 3)", "(0,)". */
static int shape_tuple(const tj_tensor *t, char *buf, size_t n)
{
    int len = snprintf(buf, n, "(");
    for (int d = 0; d < t->ndim && (size_t)len < n; d++)
        len += snprintf(buf + len, n - (size_t)len, "%s%" PRId64, d ? ", " : "", t->shape[d]);
    if ((size_t)len < n) len += snprintf(buf + len, n - (size_t)len, t->ndim == 1 ? ",)" : ")");
    return len;
}

tj_status tj_tensor_print(const tj_tensor *t, FILE *f)
{
    if (!t) return tj_error_null("tj_tensor_print: NULL tensor");
    if (!f) return tj_error(TJ_ERR_INVALID_ARGUMENT, "tj_tensor_print: NULL file");
    /* The text before the suffixes goes to a string first: where a suffix
     * goes (same line or next) depends on the length of its last line. */
    char *body = NULL;
    size_t body_len = 0;
    FILE *m = open_memstream(&body, &body_len);
    if (!m) return tj_oom("tj_tensor_print", 0);
    fputs(PREFIX, m);
    char suffixes[3][96];
    int n_suffixes = 0;
    char shape[TJ_MAX_DIMS * 22 + 4];
    if (t->fake || t->numel == 0) {
        /* As torch prints meta tensors (fake) and empty ones. */
        fputs(t->fake ? "..." : "[]", m);
        if (t->fake || t->ndim != 1) {
            shape_tuple(t, shape, sizeof shape);
            snprintf(suffixes[n_suffixes++], sizeof suffixes[0], "size=%s", shape);
        }
        if (t->dtype != TJ_FLOAT32)
            snprintf(suffixes[n_suffixes++], sizeof suffixes[0], "dtype=torch.%s", tj_dtype_name(t->dtype));
    } else {
        printer p = {.t = t, .f = m, .summarize = t->numel > THRESHOLD};
        choose_format(&p);
        put_slices(&p, 0, tj_tensor_ptr(t), (int)strlen(PREFIX));
        /* float32 is the default dtype; int64 and bool are never named. */
        if (t->dtype != TJ_FLOAT32 && t->dtype != TJ_INT64 && t->dtype != TJ_BOOL)
            snprintf(suffixes[n_suffixes++], sizeof suffixes[0], "dtype=torch.%s", tj_dtype_name(t->dtype));
    }
    if (tj_tensor_requires_grad(t) && tj_tensor_is_leaf(t))
        snprintf(suffixes[n_suffixes++], sizeof suffixes[0], "requires_grad=True");
    bool failed = ferror(m) != 0;
    if (fclose(m) != 0 || failed || !body) {
        free(body);
        return tj_oom("tj_tensor_print", 0);
    }
    /* _add_suffixes: a suffix moves to a new line, indented under the first
     * bracket, when the line would pass LINEWIDTH (torch's count is the last
     * line's length plus 2). */
    const char *nl = strrchr(body, '\n');
    size_t line = (nl ? strlen(nl + 1) : body_len) + 2;
    fputs(body, f);
    free(body);
    for (int i = 0; i < n_suffixes; i++) {
        size_t len = strlen(suffixes[i]);
        if (line + len + 2 > LINEWIDTH) {
            fprintf(f, ",\n%*s%s", (int)strlen(PREFIX), "", suffixes[i]);
            line = strlen(PREFIX) + len;
        } else {
            fprintf(f, ", %s", suffixes[i]);
            line += len + 2;
        }
    }
    fputs(")\n", f);
    return tj_check_written(f, "tj_tensor_print", NULL);
}

static tj_status print_tensor(const void *t, FILE *f) { return tj_tensor_print(t, f); }

/* the repr, without print's newline */
char *tj_tensor_to_string(const tj_tensor *t) { return tj_print_to_string(print_tensor, t, "tj_tensor_to_string", true); }
