/* Native code for fused elementwise steps (tj_compile_options.native_code),
 * as Inductor generates C++ for its pointwise kernels: each run of two or
 * more consecutive members of a fused step (tracer/fuse_pointwise.c) whose
 * arithmetic is exactly rounded IEEE operations (+, -, *, /, sqrt,
 * comparisons, selections, conversions, floor/ceil/trunc, min/max with ATen's nan
 * rule) becomes one C loop over the chunk, every intermediate in a
 * register, instead of one pass of each member's loop over chunk buffers.
 * The loops are compiled together, once per plan, by the system compiler
 * (tracer/native_build.h: cached per user, so a plan compiled again loads
 * them without compiling).
 *
 * Same bits as the members' loops: each member's C expression is the one
 * its kernel computes lane by lane (kernels/elementwise_simd.h, copy.c),
 * compiled without contraction into fused multiply-adds and without errno,
 * so the compiler may vectorise but not reassociate; constants are written
 * as their bits. A segment stores what the loops would have left behind:
 * results read after it (buffers, the step's results), never the others.
 * Members with transcendental functions run their own loops between
 * segments.
 *
 * In steps walking whole rows, segments take the row members too: a row
 * sum accumulates as kernels/reduce.c does (in 8 float64 lanes over whole
 * blocks of 8 from the row's start, the rest into lane 0, the lanes folded
 * pairwise, then added to 0.0; amax and amin run their kernel between
 * segments), a member computing
 * on one value per row (a mean, a 1/std) is a statement once per row, and
 * a member with a transcendental function (exp, log, tanh, ...; their SIMD
 * polynomials live in the kernels) calls its own loop on the row (whose
 * bits do not depend on where a run begins, tracer/fuse_pointwise.c). A
 * whole decomposed layer_norm, forward or backward, is then one function
 * walking each row in a few passes (see emitter); a softmax two, around its
 * amax. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuse_pointwise.h"
#include "kernels/cpu_isa.h"
#include "native_build.h"

/* ---- one member's expression ---- */

#define EXPR_BYTES 1024 /* a member's C expression, at most */
#define OPERAND_BYTES 48 /* an operand's: t12, r3[i], F64(0x...ull) */

/* The C type of dtype t. Bools are bool_u8, a name no generated variable
 * (a letter or two and a number: t3, u8, sg7) can take. */
static const char *ctype(tj_dtype t) { return t == TJ_FLOAT32 ? "float" : t == TJ_FLOAT64 ? "double" : "bool_u8"; }

/* Whether C has dtype t here (float, double, bool_u8 for bool). */
static bool c_dtype(tj_dtype t) { return t == TJ_FLOAT32 || t == TJ_FLOAT64 || t == TJ_BOOL; }

/* The dtype a member's loop writes. */
static tj_dtype result_dtype(const pw_member *mb)
{
    const tj_pointwise *pw = &mb->pw;
    if (pw->fn == tj_k_unary_loop) return pw->ctx.unary.dtype;
    if (pw->fn == tj_k_binary_loop) return pw->ctx.binary.dtype;
    if (pw->fn == tj_k_add_loop) return pw->ctx.axpby.dtype;
    if (pw->fn == tj_k_pow_scalar_loop) return pw->ctx.pow.dtype;
    if (pw->fn == tj_k_where_loop) return pw->ctx.select.dtype;
    if (pw->fn == tj_k_compare_where_loop) return pw->ctx.compare_where.dtype;
    if (pw->fn == tj_k_mul_add_loop) return pw->ctx.mul_add.dtype;
    if (pw->fn == tj_pointwise_copy_loop) return pw->ctx.convert[0];
    return TJ_BOOL; /* tj_k_compare_loop */
}

/* A literal of value v in dtype t, as its bits (nan payloads, -0). */
static void literal(char *s, size_t size, tj_dtype t, tj_k_scalar v)
{
    if (t == TJ_FLOAT32) {
        uint32_t u;
        memcpy(&u, &v.f32, 4);
        snprintf(s, size, "F32(0x%08xu)", (unsigned)u);
    } else if (t == TJ_FLOAT64) {
        uint64_t u;
        memcpy(&u, &v.f64, 8);
        snprintf(s, size, "F64(0x%016llxull)", (unsigned long long)u);
    } else {
        snprintf(s, size, "(bool_u8)%u", (unsigned)v.b);
    }
}

/* The C expression member mb computes from its operands x[k], into s;
 * false when it has none here (transcendental functions, integer dtypes). */
static bool expression_of(const pw_member *mb, char x[][OPERAND_BYTES], char *s, size_t size)
{
    const tj_pointwise *pw = &mb->pw;
    if (pw->fn == tj_pointwise_copy_loop) {
        tj_dtype to = pw->ctx.convert[0], from = pw->ctx.convert[1];
        if (to == from) snprintf(s, size, "%s", x[0]);
        else if (from == TJ_BOOL || to == TJ_BOOL) snprintf(s, size, "(%s)(%s != 0)", ctype(to), x[0]);
        else snprintf(s, size, "(%s)%s", ctype(to), x[0]);
        return true;
    }
    if (pw->fn == tj_k_where_loop) {
        snprintf(s, size, "%s != 0 ? %s : %s", x[0], x[1], x[2]);
        return c_dtype(pw->ctx.select.dtype);
    }
    static const char *const ops[] = {[TJ_K_EQ] = "==", [TJ_K_NE] = "!=", [TJ_K_LT] = "<", [TJ_K_LE] = "<=",
                                      [TJ_K_GT] = ">",  [TJ_K_GE] = ">="};
    if (pw->fn == tj_k_compare_where_loop) {
        snprintf(s, size, "%s %s %s ? %s : %s", x[0], ops[pw->ctx.compare_where.op], x[1], x[2], x[3]);
        return c_dtype(pw->ctx.compare_where.dtype);
    }
    if (pw->fn == tj_k_compare_loop) {
        static const char *const logical[] = {[TJ_K_LOGICAL_AND] = "&", [TJ_K_LOGICAL_OR] = "|",
                                              [TJ_K_LOGICAL_XOR] = "^"};
        tj_k_compare_op op = pw->ctx.compare.op;
        if (op <= TJ_K_GE) snprintf(s, size, "(bool_u8)(%s %s %s)", x[0], ops[op], x[1]);
        else snprintf(s, size, "(bool_u8)((%s != 0) %s (%s != 0))", x[0], logical[op], x[1]);
        return true;
    }
    tj_dtype t = result_dtype(mb);
    if (!tj_dtype_is_float(t)) return false;
    const char *T = ctype(t), *f = t == TJ_FLOAT32 ? "f" : ""; /* sqrtf or sqrt, ... */
    const char *sfx = t == TJ_FLOAT32 ? "f32" : "f64";
    if (pw->fn == tj_k_add_loop || pw->fn == tj_k_mul_add_loop) { /* a + alpha b; the product (x0 * x1) is one */
        bool fma = pw->fn == tj_k_mul_add_loop, first = fma && pw->ctx.mul_add.product_first;
        double alpha = fma ? pw->ctx.mul_add.alpha : pw->ctx.axpby.alpha;
        char p[2 * OPERAND_BYTES + 8];
        snprintf(p, sizeof p, "(%s * %s)", x[0], x[1]);
        const char *a = !fma ? x[0] : first ? p : x[2], *b = !fma ? x[1] : first ? x[2] : p;
        tj_k_scalar al;
        if (t == TJ_FLOAT32) al.f32 = (float)alpha;
        else al.f64 = alpha;
        if (t == TJ_FLOAT32 ? al.f32 == 1 : al.f64 == 1) {
            snprintf(s, size, "%s + %s", a, b);
        } else {
            char l[OPERAND_BYTES];
            literal(l, sizeof l, t, al);
            snprintf(s, size, "%s + %s * %s", a, l, b);
        }
        return true;
    }
    if (pw->fn == tj_k_pow_scalar_loop) {
        double e = t == TJ_FLOAT32 ? pw->ctx.pow.exponent.f32 : pw->ctx.pow.exponent.f64;
        const char *a = x[0];
        if (e == 0) snprintf(s, size, "(%s)1", T);
        else if (e == 1) snprintf(s, size, "%s", a);
        else if (e == 2) snprintf(s, size, "%s * %s", a, a);
        else if (e == 3) snprintf(s, size, "%s * %s * %s", a, a, a);
        else if (e == 0.5) snprintf(s, size, "sqrt%s(%s)", f, a);
        else if (e == -0.5) snprintf(s, size, "(%s)1 / sqrt%s(%s)", T, f, a);
        else if (e == -1) snprintf(s, size, "(%s)1 / %s", T, a);
        else if (e == -2) snprintf(s, size, "(%s)1 / (%s * %s)", T, a, a);
        else return false; /* SLEEF's pow */
        return true;
    }
    if (pw->fn == tj_k_binary_loop) {
        const char *a = x[0], *b = x[1];
        switch (pw->ctx.binary.op) {
        case TJ_K_MUL: snprintf(s, size, "%s * %s", a, b); return true;
        case TJ_K_DIV: snprintf(s, size, "%s / %s", a, b); return true;
        case TJ_K_DIV_TRUNC: snprintf(s, size, "trunc%s(%s / %s)", f, a, b); return true;
        case TJ_K_MAXIMUM: snprintf(s, size, "max_%s(%s, %s)", sfx, a, b); return true;
        case TJ_K_MINIMUM: snprintf(s, size, "min_%s(%s, %s)", sfx, a, b); return true;
        case TJ_K_SIGMOID_BACKWARD: snprintf(s, size, "%s * ((%s)1 - %s) * %s", a, T, b, b); return true;
        case TJ_K_TANH_BACKWARD: snprintf(s, size, "%s * ((%s)1 - %s * %s)", a, T, b, b); return true;
        default: return false;
        }
    }
    if (pw->fn != tj_k_unary_loop) return false;
    const char *a = x[0];
    switch (pw->ctx.unary.op) {
    case TJ_K_ABS: snprintf(s, size, "fabs%s(%s)", f, a); return true;
    case TJ_K_NEG: snprintf(s, size, "-%s", a); return true;
    case TJ_K_SQRT: snprintf(s, size, "sqrt%s(%s)", f, a); return true;
    case TJ_K_RSQRT: snprintf(s, size, "(%s)1 / sqrt%s(%s)", T, f, a); return true;
    case TJ_K_RECIPROCAL: snprintf(s, size, "(%s)1 / %s", T, a); return true;
    case TJ_K_RELU: snprintf(s, size, "(%s)0 > %s ? (%s)0 : %s", T, a, T, a); return true;
    case TJ_K_SIGN:
        snprintf(s, size, "%s > 0 ? (%s)1 : (0 > %s ? (%s)-1 : (%s)0)", a, T, a, T, T);
        return true;
    case TJ_K_FLOOR: snprintf(s, size, "floor%s(%s)", f, a); return true;
    case TJ_K_CEIL: snprintf(s, size, "ceil%s(%s)", f, a); return true;
    case TJ_K_TRUNC: snprintf(s, size, "trunc%s(%s)", f, a); return true;
    case TJ_K_FRAC: snprintf(s, size, "%s - trunc%s(%s)", a, f, a); return true;
    default: return false; /* round too: the vector kernels halve to even whatever fesetround says;
                              C's nearbyint follows it, and roundeven does not vectorise */
    }
}

/* expression_of, false too when it does not fit s (EXPR_BYTES). */
static bool expression(const pw_member *mb, char x[][OPERAND_BYTES], char *s)
{
    return expression_of(mb, x, s, EXPR_BYTES) && strlen(s) + 1 < EXPR_BYTES;
}

/* How a member takes part in a segment: an expression per element
 * (M_ELEMENT) or per row (M_ROWS, a row member), a row reduction
 * (M_REDUCE), or a call of its own loop on each row's elements (M_CALL:
 * transcendental functions, in steps walking rows only) or on the row's
 * value (M_ROW_CALL: a row member's); M_NONE: not at all. */
typedef enum { M_NONE, M_ELEMENT, M_ROWS, M_REDUCE, M_CALL, M_ROW_CALL } member_kind;

/* The plan's calls member mb stands for: two for a comparison merged into
 * its where and a mul merged into its add (tracer/fuse_pointwise.c). */
static int calls_merged(const pw_member *mb)
{
    return mb->pw.fn == tj_k_compare_where_loop || mb->pw.fn == tj_k_mul_add_loop ? 2 : 1;
}

/* The calls members [first, first + n) of pg stand for. Fewer than two
 * make no segment: one loop call does as well. */
static int calls_in(const pw_program *pg, int first, int n)
{
    int c = 0;
    for (int m = first; m < first + n; m++) c += calls_merged(&pg->members[m]);
    return c;
}

/* Whether a member of kind k computes one value per row. */
static bool per_row(member_kind k) { return k == M_ROWS || k == M_REDUCE || k == M_ROW_CALL; }

/* Whether C computes member mb's loop: one of the loops above, on dtypes
 * C has here (float, double, bool_u8 for bool). */
static bool has_expression(const pw_member *mb)
{
    tj_loop_fn fn = mb->pw.fn;
    if (fn != tj_k_unary_loop && fn != tj_k_binary_loop && fn != tj_k_add_loop && fn != tj_k_pow_scalar_loop &&
        fn != tj_k_where_loop && fn != tj_pointwise_copy_loop && fn != tj_k_compare_loop &&
        fn != tj_k_compare_where_loop && fn != tj_k_mul_add_loop)
        return false;
    if (!c_dtype(result_dtype(mb))) return false;
    char x[TJ_ITER_MAX_INPUTS][OPERAND_BYTES], s[EXPR_BYTES];
    for (int k = 0; k < mb->pw.nin; k++) {
        if (!c_dtype(mb->pw.loop[k])) return false;
        snprintf(x[k], sizeof x[k], "x%d", k);
    }
    return expression(mb, x, s);
}

/* How member mb of program pg takes part in a segment. A call needs only
 * C types for its operands and result: its loop's bits do not depend on
 * where a run begins (tracer/fuse_pointwise.c). */
static member_kind kind_of(const pw_program *pg, const pw_member *mb)
{
    if (mb->reduces) { /* sums; amax and amin stay on their kernel, whose vector scan (the first holder of
                          the extreme found by a tree and the sign mask) beats 32 lanes folded in C on every
                          row: gpt's attention softmax took 1.5x as long with them (bench/RESULTS.md,
                          session 34) */
        const tj_row_reduce *rr = &mb->red;
        bool fl = tj_dtype_is_float(rr->dtype) && c_dtype(rr->dtype) && tj_dtype_is_float(rr->out) && c_dtype(rr->out);
        return fl && rr->kind == TJ_K_RED_SUM ? M_REDUCE : M_NONE;
    }
    if (has_expression(mb)) return mb->rows_in ? M_ROWS : M_ELEMENT;
    if (!pg->row_len || !c_dtype(mb->dtype)) return M_NONE;
    for (int k = 0; k < mb->pw.nin; k++)
        if (!c_dtype(mb->pw.loop[k])) return M_NONE;
    return mb->rows_in ? M_ROW_CALL : M_CALL;
}

/* ---- one segment's function ---- */

#define ROW_SCRATCH_BYTES (48 << 10) /* a segment's row arrays, on the stack of the thread running it */

/* Text growing at its end; oom: an append failed. */
typedef struct text {
    char *s;
    size_t len, cap;
    bool oom;
} text;

static bool put(text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static bool put(text *t, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0) return !(t->oom = true);
    if (t->len + (size_t)n + 1 > t->cap) {
        size_t cap = 2 * (t->len + (size_t)n + 1) + 256;
        char *s = realloc(t->s, cap);
        if (!s) return !(t->oom = true);
        t->s = s;
        t->cap = cap;
    }
    va_start(ap, fmt);
    vsnprintf(t->s + t->len, t->cap - t->len, fmt, ap);
    va_end(ap);
    t->len += (size_t)n;
    return true;
}

static const char *str(const text *t) { return t->len ? t->s : ""; }

/* A segment's function is, per row of the chunk (steps walking rows), a
 * sequence of phases: a loop over the row's elements (the element members,
 * the row reductions' accumulations, in member order), then the statements
 * once per row (the reductions' folds, the row members, the calls of
 * members' own loops on the row), in member order. A member goes into the
 * phase of the member before it, or the next one when it reads a value
 * computed once per row or by a call in that phase (or, an element member,
 * when that phase calls a loop: the call reads memory the loop might
 * store to). An element value read in a later phase, or by a call, is
 * kept in a row array s<m>, a value per row read in a later phase in
 * v<m>: each phase runs for a group of rows before the next (emit_rows).
 * In steps not walking rows, a segment is one loop over the chunk's
 * elements. */
typedef struct emitter {
    const pw_program *pg;
    pw_segment *sg;
    tj_dtype ref_dtype[PW_MAX_REFS];
    bool ref_written[PW_MAX_REFS];
    bool ref_rows[PW_MAX_REFS];      /* one value per row: read once per row into w<k>, or written per row */
    bool ref_read_rows[PW_MAX_REFS]; /* ... and read */
    bool declared[PW_MAX_REFS];      /* its scalar c<k> is declared */
    bool has_rows;                   /* a loop over the rows */
    int writer[PW_MAX_BUFS];         /* member whose value buffer b holds, or -1 */
    member_kind kind[PW_MAX_MEMBERS]; /* by m - first */
    int phase[PW_MAX_MEMBERS];
    bool kept[PW_MAX_MEMBERS];       /* its elements kept in s<m> */
    bool carried[PW_MAX_MEMBERS];    /* its value per row read in a later phase: kept in v<m> */
    bool phase_calls[PW_MAX_MEMBERS];
    bool rounded[PW_MAX_MEMBERS];    /* its value a float32 rounding of a float64 value (rounding) */
    bool one_declared;               /* one32 is declared */
    size_t scratch;                  /* bytes of the function's stack arrays, counting one row of each
                                      * kept member (group_rows sizes groups from it) */
    text elem[PW_MAX_MEMBERS];       /* its statements per element */
    text once[PW_MAX_MEMBERS];       /* its statements per row */
} emitter;

/* Bytes of a copy of the rows of a chunk of buffer values of es bytes. */
static size_t rows_copy_bytes(const pw_program *pg, size_t es) { return (size_t)(pg->chunk / pg->row_len) * es; }

/* The pointer p[k] for (kind, index) read or written as dtype t (rows:
 * one value per row); -1 when the segment has no room for another, or for
 * rows read from a buffer the segment writes. A buffer's rows read are
 * copied when the function starts (a store of the first row's elements
 * would overwrite later rows' values). */
static int ref(emitter *e, ref_kind kind, int index, tj_dtype t, bool written, bool rows)
{
    pw_segment *sg = e->sg;
    bool read_rows = rows && !written, copied = read_rows && kind == REF_BUF;
    for (int k = 0; k < sg->n_refs; k++) {
        if (sg->refs[k].kind != kind || sg->refs[k].index != index || sg->refs[k].cols) continue;
        if (read_rows && e->ref_written[k]) return -1;
        if (e->ref_dtype[k] == t && e->ref_rows[k] == rows) {
            if (copied && !e->ref_read_rows[k]) {
                if (e->scratch + rows_copy_bytes(e->pg, sg->refs[k].es) > ROW_SCRATCH_BYTES) return -1;
                e->scratch += rows_copy_bytes(e->pg, sg->refs[k].es);
            }
            e->ref_written[k] |= written;
            e->ref_read_rows[k] |= read_rows;
            return k;
        }
    }
    if (sg->n_refs == PW_MAX_REFS) return -1;
    if (copied) {
        if (e->scratch + rows_copy_bytes(e->pg, tj_dtype_bytes(t)) > ROW_SCRATCH_BYTES) return -1;
        e->scratch += rows_copy_bytes(e->pg, tj_dtype_bytes(t));
    }
    int k = sg->n_refs++;
    sg->refs[k] = (pw_ref){kind, index, tj_dtype_bytes(t), rows};
    e->ref_dtype[k] = t;
    e->ref_written[k] = written;
    e->ref_rows[k] = rows;
    e->ref_read_rows[k] = read_rows;
    e->has_rows |= rows;
    return k;
}

/* The pointer p[k] for argument `arg` holding one row's values (a [D]
 * weight over rows of D: pw_splat.row_vector), read in place by each
 * element's place in its row instead of gathered into a buffer chunk by
 * chunk; -1 when the segment has no room for another. */
static int ref_cols(emitter *e, int arg, tj_dtype t)
{
    pw_segment *sg = e->sg;
    for (int k = 0; k < sg->n_refs; k++)
        if (sg->refs[k].kind == REF_ARG && sg->refs[k].cols && sg->refs[k].index == arg && e->ref_dtype[k] == t)
            return k;
    if (sg->n_refs == PW_MAX_REFS) return -1;
    int k = sg->n_refs++;
    sg->refs[k] = (pw_ref){.kind = REF_ARG, .index = arg, .es = tj_dtype_bytes(t), .cols = true};
    e->ref_dtype[k] = t;
    e->ref_written[k] = e->ref_rows[k] = e->ref_read_rows[k] = false;
    e->has_rows = true; /* the loop over a row's elements gives the place in the row */
    return k;
}

/* Whether member m's buffer value is read after the segment (before a
 * later member writes that buffer). */
static bool read_after(const pw_program *pg, const pw_segment *sg, int m)
{
    int b = pg->members[m].buf;
    for (int q = m + 1; q < sg->first + sg->n; q++)
        if (pg->members[q].buf == b) return false; /* overwritten inside */
    for (int q = sg->first + sg->n; q < pg->n_members; q++) {
        const pw_member *mb = &pg->members[q];
        for (int k = 0; k < mb->pw.nin; k++)
            if ((mb->in[k].kind == SRC_BUF || mb->in[k].kind == SRC_ROWS) && mb->in[k].index == b) return true;
        if (mb->buf == b) return false;
    }
    return false;
}

/* Whether the segment reads buffer b as other than values of es bytes,
 * one per element (one per row with rows), before the store about to be
 * made: a store element by element (row by row) would overwrite values not
 * read yet (the loops read a whole chunk first). Rows read only are copied
 * first (ref). */
static bool read_otherwise(const emitter *e, int b, size_t es, bool rows)
{
    for (int k = 0; k < e->sg->n_refs; k++)
        if (e->sg->refs[k].kind == REF_BUF && e->sg->refs[k].index == b && (e->ref_written[k] || !e->ref_rows[k]) &&
            (e->sg->refs[k].es != es || e->ref_rows[k] != rows))
            return true;
    return false;
}

/* Row array s<j + first> for member j's elements; false past
 * ROW_SCRATCH_BYTES. */
static bool keep(emitter *e, int j)
{
    if (e->kept[j]) return true;
    size_t bytes = (size_t)e->pg->row_len * e->pg->members[e->sg->first + j].es;
    if (e->scratch + bytes > ROW_SCRATCH_BYTES) return false;
    e->scratch += bytes;
    return e->kept[j] = true;
}

/* Whether member mb, of kind k, computes a float32 rounding of a float64
 * value: a conversion, or a row sum of float32 result (summed in float64).
 * Every read of such a value in the segment is x * one32, one32 a 1 the
 * compiler cannot know (opaque_one32: a volatile read). GCC 12 folds a
 * float64 -> float32 -> float64 pair of vector conversions of as many
 * lanes into nothing (FRE, by match.pd's rule for two conversions in a
 * row, which compares TYPE_PRECISION: of a vector type, its lane count,
 * not its elements' bits), and its basic-block vectoriser makes such pairs
 * of a row's unrolled blocks on every ISA: a row sum's 8 lanes
 * (-mavx512f), an element member's 4 or 2 (-mavx2, SSE2;
 * tests/test_fuse_rows.c, rounded_values_read_as_float64). A product
 * between them is no conversion to fold, and x * 1 is x (signed zeros,
 * subnormals, nans): the same bits for one multiplication, once per row
 * for a row's value. */
static bool rounding(const pw_member *mb, member_kind k)
{
    if (k == M_REDUCE) return mb->red.out == TJ_FLOAT32;
    return (k == M_ELEMENT || k == M_ROWS) && mb->pw.fn == tj_pointwise_copy_loop &&
           mb->pw.ctx.convert[0] == TJ_FLOAT32 && mb->pw.ctx.convert[1] == TJ_FLOAT64;
}

/* x, an expression of member j's value, as read: a rounding (rounding)
 * times one32, declared into head the first time. */
static void read_value(emitter *e, int j, char *x, FILE *head)
{
    if (!e->rounded[j]) return;
    char v[OPERAND_BYTES];
    snprintf(v, sizeof v, "%s", x);
    snprintf(x, OPERAND_BYTES, "(%s * one32)", v);
    if (!e->one_declared) fprintf(head, "    const float one32 = opaque_one32();\n");
    e->one_declared = true;
}

/* Operand k of member m, in phase ph, into x: an expression of the
 * element i (of the row's element jj) or, for a row member, of the row;
 * for a call, a pointer to the row's elements (to the row's value). False
 * when the segment cannot take it. */
static bool operand(emitter *e, int m, int k, int ph, char *x, FILE *head)
{
    const pw_program *pg = e->pg;
    const pw_member *mb = &pg->members[m];
    member_kind kind = e->kind[m - e->sg->first];
    const pw_src *src = &mb->in[k];
    tj_dtype t = mb->pw.loop[k];
    bool call = kind == M_CALL, row_call = kind == M_ROW_CALL;
    int q = src->kind != SRC_ARG ? e->writer[src->index] : -1;
    if (q >= 0) { /* a value of the segment's */
        int j = q - e->sg->first;
        member_kind qk = e->kind[j];
        if (per_row(qk)) {
            e->carried[j] |= ph > e->phase[j];
            snprintf(x, OPERAND_BYTES, row_call ? "&t%d" : "t%d", q);
            if (!row_call) read_value(e, j, x, head);
            return !call;
        }
        if (!call && qk == M_ELEMENT && e->phase[j] == ph) {
            snprintf(x, OPERAND_BYTES, "t%d", q);
            read_value(e, j, x, head);
            return true;
        }
        if (!keep(e, j)) return false;
        snprintf(x, OPERAND_BYTES, call ? "s%d" : "s%d[jj]", q);
        if (!call) read_value(e, j, x, head);
        return true;
    }
    if (src->kind == SRC_BUF && src->index < pg->n_splats && !pg->splats[src->index].gather && !call && !row_call) {
        const pw_splat *sp = &pg->splats[src->index];
        if (sp->arg < 0) {
            literal(x, OPERAND_BYTES, t, sp->value);
            return true;
        }
        /* a one-element tensor: its value, converted once per run into the splat */
        int r = ref(e, REF_BUF, src->index, t, false, false);
        if (r < 0) return false;
        snprintf(x, OPERAND_BYTES, "c%d", r);
        if (!e->declared[r]) fprintf(head, "    const %s c%d = ((const %s *)p[%d])[0];\n", ctype(t), r, ctype(t), r);
        e->declared[r] = true;
        return true;
    }
    if (src->kind == SRC_BUF && src->index < pg->n_splats && pg->splats[src->index].row_vector && !call &&
        !row_call && kind != M_ROWS) {
        int r = ref_cols(e, pg->splats[src->index].arg, t);
        if (r < 0) return false;
        snprintf(x, OPERAND_BYTES, "r%d[jj]", r);
        return true;
    }
    bool splat = src->kind == SRC_BUF && src->index < pg->n_splats && !pg->splats[src->index].gather;
    bool rows = !splat && (src->kind == SRC_ROWS || kind == M_ROWS || row_call); /* read once per row */
    if (rows && call) return false;
    int r = ref(e, src->kind == SRC_ARG ? REF_ARG : REF_BUF, src->index, t, false, rows);
    if (r < 0) return false;
    if (row_call) snprintf(x, OPERAND_BYTES, rows ? "&w%d" : "r%d", r); /* a splat: its first element */
    else snprintf(x, OPERAND_BYTES, rows ? "w%d" : call ? "r%d + i0" : "r%d[i]", r);
    return true;
}

/* The phase of member m: that of the member before it (cur), or the next
 * one when it reads a value computed once per row or by a call in it. */
static int phase_of(const emitter *e, int m, int cur)
{
    const pw_member *mb = &e->pg->members[m];
    member_kind kind = e->kind[m - e->sg->first];
    if (kind == M_ROWS || kind == M_CALL || kind == M_ROW_CALL) return cur;
    int ph = e->phase_calls[cur] ? cur + 1 : cur;
    for (int k = 0; k < mb->pw.nin; k++) {
        int q = mb->in[k].kind != SRC_ARG ? e->writer[mb->in[k].index] : -1;
        if (q < 0) continue;
        int j = q - e->sg->first;
        if (e->kind[j] != M_ELEMENT && e->phase[j] + 1 > ph) ph = e->phase[j] + 1;
    }
    return ph;
}

/* Member m's statements (reduction: the value of its operand per element,
 * then its fold once per row). */
static bool emit_member(emitter *e, int m, char x[][OPERAND_BYTES])
{
    const pw_program *pg = e->pg;
    const pw_member *mb = &pg->members[m];
    int j = m - e->sg->first;
    text *el = &e->elem[j], *on = &e->once[j];
    char s[EXPR_BYTES];
    bool ok = true;
    switch (e->kind[j]) {
    case M_ELEMENT:
        expression(mb, x, s);
        ok = put(el, "        const %s t%d = %s;\n", ctype(result_dtype(mb)), m, s);
        break;
    case M_ROWS:
        expression(mb, x, s);
        ok = put(on, "        const %s t%d = %s;\n", ctype(result_dtype(mb)), m, s);
        break;
    case M_REDUCE: { /* kernels/reduce.c: DEF_FFOLD's sum, finish (added to 0.0, divided by 1) */
        const tj_row_reduce *rr = &mb->red;
        const char *O = ctype(rr->out);
        size_t bytes = 0; /* of the row arrays u<q> summed apart (split_sums) */
        int before = -1, n_before = 0;
        for (int q = 0; q < j; q++)
            if (e->kind[q] == M_REDUCE && e->phase[q] == e->phase[j]) n_before++, before = q;
        if (pg->chunk > pg->row_len || n_before) bytes += (size_t)pg->row_len * tj_dtype_bytes(rr->dtype);
        if (pg->chunk == pg->row_len && n_before == 1)
            bytes += (size_t)pg->row_len * tj_dtype_bytes(pg->members[e->sg->first + before].red.dtype);
        if (e->scratch + bytes > ROW_SCRATCH_BYTES) return false;
        e->scratch += bytes;
        ok = put(el, "        const %s x%d = %s;\n", ctype(rr->dtype), m, x[0]) &&
             put(on, "        for (int h = 4; h > 0; h /= 2)\n"
                     "            for (int k = 0; k < h; k++) a%d[k] += a%d[k + h];\n"
                     "        const %s t%d = (%s)(0.0 + a%d[0]);\n", m, m, O, m, O, m);
        break;
    }
    case M_CALL:
    case M_ROW_CALL: {
        bool row = e->kind[j] == M_ROW_CALL;
        if (row) ok = put(on, "        %s t%d;\n", ctype(mb->dtype), m);
        ok = ok && put(on, "        {\n            const void *in%d[%d] = {", m, mb->pw.nin);
        for (int k = 0; k < mb->pw.nin; k++) ok = ok && put(on, "%s%s", k ? ", " : "", x[k]);
        int f = ref(e, REF_LOOP, m, TJ_BOOL, false, false), c = ref(e, REF_CTX, m, TJ_BOOL, false, false);
        if (f < 0 || c < 0 || (!row && !keep(e, j))) return false;
        if (row) ok = ok && put(on, "};\n            f%d(1, &t%d, in%d, p[%d]);\n        }\n", f, m, m, c);
        else ok = ok && put(on, "};\n            f%d(%lld, s%d, in%d, p[%d]);\n        }\n", f, (long long)pg->row_len, m, m, c);
        break;
    }
    case M_NONE: return false;
    }
    return ok;
}

/* The dtype of t<m>, member mb's value, of kind k. */
static tj_dtype value_dtype(const pw_member *mb, member_kind k)
{
    return k == M_REDUCE ? mb->red.out : k == M_CALL || k == M_ROW_CALL ? mb->dtype : result_dtype(mb);
}

/* Member m's store of its result, where it is read after the segment or
 * written out; false when the segment cannot make it. */
static bool emit_store(emitter *e, int m)
{
    const pw_program *pg = e->pg;
    const pw_member *mb = &pg->members[m];
    int j = m - e->sg->first;
    member_kind kind = e->kind[j];
    if (!(mb->buf < 0 || mb->out >= 0 || read_after(pg, e->sg, m))) return true;
    bool rows = per_row(kind);
    tj_dtype rt = value_dtype(mb, kind);
    if (mb->buf >= 0 && read_otherwise(e, mb->buf, tj_dtype_bytes(rt), rows)) return false;
    int r = mb->buf < 0 ? ref(e, REF_OUT, mb->out, rt, true, rows) : ref(e, REF_BUF, mb->buf, rt, true, rows);
    if (r < 0) return false;
    if (kind == M_ELEMENT) return put(&e->elem[j], "        r%d[i] = t%d;\n", r, m);
    if (rows) return put(&e->once[j], "        r%d[row] = t%d;\n", r, m);
    return put(&e->once[j], "        memcpy(r%d + i0, s%d, sizeof *s%d * %lld);\n", r, m, m, (long long)pg->row_len);
}

/* Takes segment sg's first n members, filling sg's refs and e's phases and
 * statements; scalars read once per call (one-element tensors) are declared
 * into `head`. Returns how many members it could take, from the first:
 * fewer than n when a member needs more than PW_MAX_REFS pointers, more
 * row arrays than ROW_SCRATCH_BYTES, or would store over values of another
 * size (or per row) still to be read. */
static int emit_body(emitter *e, int n, FILE *head)
{
    const pw_program *pg = e->pg;
    pw_segment *sg = e->sg;
    sg->n_refs = 0;
    e->has_rows = false;
    e->scratch = 0;
    for (int b = 0; b < PW_MAX_BUFS; b++) e->writer[b] = -1;
    for (int j = 0; j < n; j++) {
        e->kind[j] = kind_of(pg, &pg->members[sg->first + j]);
        e->rounded[j] = rounding(&pg->members[sg->first + j], e->kind[j]);
        e->kept[j] = e->phase_calls[j] = e->carried[j] = false;
        e->elem[j].len = e->once[j].len = 0;
        if (e->kind[j] != M_ELEMENT) e->has_rows = true;
    }
    int cur = 0;
    for (int m = sg->first; m < sg->first + n; m++) {
        const pw_member *mb = &pg->members[m];
        int j = m - sg->first, ph = phase_of(e, m, cur);
        char x[TJ_ITER_MAX_INPUTS][OPERAND_BYTES];
        for (int k = 0; k < mb->pw.nin; k++)
            if (!operand(e, m, k, ph, x[k], head)) return j;
        e->phase[j] = cur = ph;
        e->phase_calls[ph] |= e->kind[j] == M_CALL;
        if (!emit_member(e, m, x) || !emit_store(e, m)) return j;
        if (mb->buf >= 0) e->writer[mb->buf] = m;
    }
    return n;
}

/* Whether phase ph sums apart (emit_phase_loops): with two sums or more,
 * or rows walked in groups, where the other rows' work hides a sum's chain
 * of additions (gpt's layer_norm: 0.65x as long as summed in the element
 * loop); a sum alone in one-row chunks (rows of 1024 elements and more)
 * takes 1.4x as long apart. */
static bool split_sums(const emitter *e, int ph)
{
    int sums = 0;
    for (int j = 0; j < e->sg->n; j++) sums += e->phase[j] == ph && e->kind[j] == M_REDUCE;
    return sums >= 2 || (sums && e->pg->chunk > e->pg->row_len);
}

/* The loops of phase ph over a row's elements, into f, each element's
 * statements the same. Summing apart (split_sums): one loop over the
 * elements' statements keeping each sum's operands in a row array u<m>,
 * then one per sum adding them up in blocks of 8 for its lanes
 * (kernels/reduce.c, LANES), the rest into lane 0; GCC 12 vectorises a
 * loop with two sums in it (float32 values read as float64) nowhere: it
 * takes a loop's sums together or not at all, and sums in order only as
 * lanes (gpt's layer_norm backward ran scalar, 2.6x as long). Otherwise
 * the sums' lanes accumulate in the element loop, blocks of 8 then the
 * rest. */
static void emit_phase_loops(const emitter *e, int ph, FILE *f)
{
    const pw_program *pg = e->pg;
    const pw_segment *sg = e->sg;
    long long L = (long long)pg->row_len, l8 = L / 8 * 8;
    bool any = false, sums = false, apart = split_sums(e, ph);
    for (int j = 0; j < sg->n; j++) {
        if (e->phase[j] != ph) continue;
        any |= e->elem[j].len > 0;
        if (e->kind[j] != M_REDUCE) continue;
        sums = true;
        fprintf(f, "        double a%d[8] = {0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0};\n", sg->first + j);
        if (apart)
            fprintf(f, "        %s u%d[%lld];\n", ctype(pg->members[sg->first + j].red.dtype), sg->first + j, L);
    }
    if (!any) return;
    bool blocked = sums && !apart; /* the sums' lanes in the element loop */
    long long split = blocked ? l8 : 0;
    struct { long long a, b; int w; } parts[2] = {{0, split, 8}, {split, L, 1}};
    for (int p = 0; p < 2; p++) {
        long long a = parts[p].a, b = parts[p].b;
        int w = parts[p].w;
        if (a >= b) continue;
        if (!blocked) fprintf(f, "#pragma GCC ivdep\n"); /* the sums' lanes carry from block to block */
        if (w > 1)
            fprintf(f, "        for (int64_t jb = %lld; jb < %lld; jb += %d)\n        for (int k = 0; k < %d; k++) {\n"
                       "        const int64_t jj = jb + k, i = i0 + jj;\n", a, b, w, w);
        else
            fprintf(f, "        for (int64_t jj = %lld; jj < %lld; jj++) {\n", a, b);
        if (w == 1) fprintf(f, "        const int64_t i = i0 + jj;\n");
        fprintf(f, "        (void)i, (void)jj;\n");
        for (int j = 0; j < sg->n; j++)
            if (e->phase[j] == ph) fputs(str(&e->elem[j]), f);
        for (int j = 0; j < sg->n; j++) {
            int m = sg->first + j;
            if (e->phase[j] != ph) continue;
            if (e->kept[j] && e->kind[j] == M_ELEMENT) fprintf(f, "        s%d[jj] = t%d;\n", m, m);
            if (e->kind[j] == M_REDUCE && apart) fprintf(f, "        u%d[jj] = x%d;\n", m, m);
            if (e->kind[j] == M_REDUCE && !apart)
                fprintf(f, "        a%d[%s] += (double)x%d;\n", m, w == 8 ? "k" : "0", m);
        }
        fprintf(f, "        }\n");
    }
    for (int j = 0; j < sg->n; j++) {
        int m = sg->first + j;
        if (!apart || e->phase[j] != ph || e->kind[j] != M_REDUCE) continue;
        if (l8)
            fprintf(f, "        for (int64_t jb = 0; jb < %lld; jb += 8)\n"
                       "            for (int k = 0; k < 8; k++) a%d[k] += (double)u%d[jb + k];\n", l8, m, m);
        if (l8 < L)
            fprintf(f, "        for (int64_t jj = %lld; jj < %lld; jj++) a%d[0] += (double)u%d[jj];\n", l8, L, m, m);
    }
}

/* Rows of a chunk walked phase by phase together: the per-row values
 * that link phases (a fold, a 1/sqrt) are short chains of long latency,
 * and a row's chain would otherwise wait on the one before it, when rows
 * are short (gpt's are 64 to 128 elements). As many rows as the row
 * arrays of all of them fit ROW_SCRATCH_BYTES, at most the chunk's; one
 * when there is a single phase (nothing waits on a row's statements). */
static int64_t group_rows(const emitter *e)
{
    const pw_program *pg = e->pg;
    const pw_segment *sg = e->sg;
    if (e->phase[sg->n - 1] == 0) return 1;
    size_t row_bytes = 0, once = e->scratch; /* once: the rows' copies and the sums' operands */
    for (int j = 0; j < sg->n; j++) {
        size_t kept = e->kept[j] ? (size_t)pg->row_len * pg->members[sg->first + j].es : 0;
        once -= kept;
        row_bytes += kept + (e->carried[j] ? sizeof(double) : 0);
    }
    int64_t rows = pg->chunk / pg->row_len;
    int64_t fit = row_bytes ? (int64_t)((ROW_SCRATCH_BYTES - once) / row_bytes) : rows;
    return fit < 1 ? 1 : fit < rows ? fit : rows;
}

/* The loop over a chunk's rows of segment e->sg, into f: groups of
 * group_rows rows, each phase a loop over the group's rows (the last group
 * may be shorter). Element values kept for a later phase or a call go in
 * row arrays s<m>, slices of sg<m> holding the group's rows; per-row values
 * read in a later phase in v<m>; rows read once per row in w<k> (rows of a
 * buffer from its copy wa<k>, made before any store). The same statements
 * per row as one row at a time: the same bits. */
static void emit_rows(const emitter *e, FILE *f)
{
    const pw_program *pg = e->pg;
    const pw_segment *sg = e->sg;
    long long L = (long long)pg->row_len, G = (long long)group_rows(e);
    for (int j = 0; j < sg->n; j++) {
        const pw_member *mb = &pg->members[sg->first + j];
        if (e->kept[j]) fprintf(f, "    %s sg%d[%lld];\n", ctype(mb->dtype), sg->first + j, G * L);
        if (e->carried[j]) fprintf(f, "    %s v%d[%lld];\n", ctype(value_dtype(mb, e->kind[j])), sg->first + j, G);
    }
    for (int k = 0; k < sg->n_refs; k++)
        if (e->ref_read_rows[k] && sg->refs[k].kind == REF_BUF)
            fprintf(f, "    %s wa%d[%lld];\n    memcpy(wa%d, r%d, sizeof *wa%d * (size_t)(n / %lld));\n",
                    ctype(e->ref_dtype[k]), k, (long long)(pg->chunk / L), k, k, k, L);
    fprintf(f, "    for (int64_t row0 = 0; row0 < n / %lld; row0 += %lld) {\n", L, G);
    fprintf(f, "    const int64_t rows = n / %lld - row0 < %lld ? n / %lld - row0 : %lld;\n", L, G, L, G);
    for (int ph = 0; ph <= e->phase[sg->n - 1]; ph++) {
        fprintf(f, "    for (int64_t g = 0; g < rows; g++) {\n"
                   "        const int64_t row = row0 + g, i0 = row * %lld;\n        (void)row, (void)i0;\n", L);
        for (int j = 0; j < sg->n; j++) {
            int m = sg->first + j;
            const pw_member *mb = &pg->members[m];
            if (e->kept[j]) fprintf(f, "        %s *const s%d = sg%d + g * %lld;\n", ctype(mb->dtype), m, m, L);
            if (e->carried[j] && e->phase[j] < ph)
                fprintf(f, "        const %s t%d = v%d[g];\n", ctype(value_dtype(mb, e->kind[j])), m, m);
        }
        for (int k = 0; k < sg->n_refs; k++)
            if (e->ref_read_rows[k])
                fprintf(f, "        const %s w%d = %s%d[row];\n", ctype(e->ref_dtype[k]), k,
                        sg->refs[k].kind == REF_BUF ? "wa" : "r", k);
        emit_phase_loops(e, ph, f);
        for (int j = 0; j < sg->n; j++)
            if (e->phase[j] == ph) fputs(str(&e->once[j]), f);
        for (int j = 0; j < sg->n; j++)
            if (e->carried[j] && e->phase[j] == ph)
                fprintf(f, "        v%d[g] = t%d;\n", sg->first + j, sg->first + j);
        fprintf(f, "    }\n");
    }
    fprintf(f, "    }\n}\n");
}

/* Segment sg's function into *out (malloc'd), from its parameter list
 * on (the name goes before it). sg->n shrinks to the members emit_body
 * takes; false when they stand for fewer than two calls (calls_in), or
 * out of memory (*oom set). */
static bool emit_function(const pw_program *pg, pw_segment *sg, char **out, bool *oom)
{
    emitter *e = calloc(1, sizeof *e);
    if (!e) return !(*oom = true);
    e->pg = pg;
    e->sg = sg;
    char *head = NULL;
    size_t head_len = 0;
    bool ok = false;
    while (calls_in(pg, sg->first, sg->n) >= 2 && !ok) {
        free(head);
        head = NULL;
        memset(e->declared, 0, sizeof e->declared);
        e->one_declared = false;
        FILE *fh = open_memstream(&head, &head_len);
        int took = fh ? emit_body(e, sg->n, fh) : 0;
        if (fh) fclose(fh);
        if (!fh) {
            *oom = true;
            break;
        }
        ok = took == sg->n;
        sg->n = took;
    }
    for (int j = 0; j < PW_MAX_MEMBERS; j++)
        if (e->elem[j].oom || e->once[j].oom) ok = !(*oom = true);
    size_t len = 0;
    FILE *f = ok ? open_memstream(out, &len) : NULL;
    if (f) {
        fprintf(f, "(int64_t n, void *const *p)\n{\n");
        for (int k = 0; k < sg->n_refs; k++) {
            if (sg->refs[k].kind == REF_LOOP)
                fprintf(f, "    loop_fn f%d;\n    memcpy(&f%d, &p[%d], sizeof f%d);\n", k, k, k, k);
            else if (sg->refs[k].kind != REF_CTX)
                fprintf(f, "    %s%s *r%d = p[%d];\n", e->ref_written[k] ? "" : "const ", ctype(e->ref_dtype[k]), k, k);
        }
        fputs(head ? head : "", f);
        if (!e->has_rows) {
            fprintf(f, "#pragma GCC ivdep\n    for (int64_t i = 0; i < n; i++) {\n");
            for (int j = 0; j < sg->n; j++) fputs(str(&e->elem[j]), f);
            fprintf(f, "    }\n}\n");
        } else {
            emit_rows(e, f);
        }
        fclose(f);
    }
    *oom |= ok && !f;
    free(head);
    for (int j = 0; j < PW_MAX_MEMBERS; j++) {
        free(e->elem[j].s);
        free(e->once[j].s);
    }
    free(e);
    return f != NULL;
}

/* ---- the pass ---- */

static const char prelude[] =
    "/* tjit: fused elementwise steps (tracer/fuse_native.c) */\n"
    "#include <math.h>\n#include <stdint.h>\n#include <string.h>\n"
    "typedef uint8_t bool_u8;\n"
    "typedef void (*loop_fn)(int64_t n, void *out, const void *const *in, const void *ctx);\n"
    "static inline float F32(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }\n"
    "static inline double F64(uint64_t u) { double f; memcpy(&f, &u, 8); return f; }\n"
    "/* 1, which the compiler cannot know: a float32 rounding of a float64 value is read times it (fuse_native.c) */\n"
    "static inline float opaque_one32(void) { volatile float one = 1.0f; return one; }\n"
    "/* ATen's nan rule (kernels/elementwise_simd.h) */\n"
    "static inline float max_f32(float a, float b) { return a != a ? a : a > b ? a : b; }\n"
    "static inline float min_f32(float a, float b) { return a != a ? a : a < b ? a : b; }\n"
    "static inline double max_f64(double a, double b) { return a != a ? a : a > b ? a : b; }\n"
    "static inline double min_f64(double a, double b) { return a != a ? a : a < b ? a : b; }\n";

/* The instruction set tjit's kernels use (TJ_ISA may lower it). */
static const char *const *isa_flags(void)
{
    static const char *const avx512[] = {"-mavx512f", "-mavx512dq", "-mavx512vl", "-mavx512bw",
                                         "-mprefer-vector-width=512", NULL};
    static const char *const avx2[] = {"-mavx2", NULL};
    static const char *const generic[] = {NULL};
    tj_k_isa isa = tj_k_isa_active();
    return isa == TJ_K_ISA_AVX512 ? avx512 : isa == TJ_K_ISA_AVX2 ? avx2 : generic;
}

/* A function of the translation unit and the segments running it. */
typedef struct unit_fn {
    char *text;
    pw_segment **users;
    int n_users;
    pw_native_fn fn; /* tjg_<i> once loaded */
} unit_fn;

typedef struct unit {
    unit_fn *fns;
    int n_fns, cap;
    bool oom; /* an allocation failed: tj_compile fails */
} unit;

static void unit_free(unit *u)
{
    for (int i = 0; i < u->n_fns; i++) {
        free(u->fns[i].text);
        free(u->fns[i].users);
    }
    free(u->fns);
}

/* Adds segment sg's function (one already there with the same text is
 * shared); false when not emitted, or out of memory (u->oom set). */
static bool unit_add(unit *u, const pw_program *pg, pw_segment *sg)
{
    char *text;
    if (!emit_function(pg, sg, &text, &u->oom)) return false;
    unit_fn *fn = NULL;
    for (int i = 0; i < u->n_fns && !fn; i++)
        if (!strcmp(u->fns[i].text, text)) fn = &u->fns[i];
    if (fn) {
        free(text);
    } else {
        if (u->n_fns == u->cap) {
            int cap = u->cap ? 2 * u->cap : 16;
            unit_fn *grown = realloc(u->fns, sizeof *grown * (size_t)cap);
            if (!grown) {
                free(text);
                return !(u->oom = true);
            }
            u->fns = grown;
            u->cap = cap;
        }
        fn = &u->fns[u->n_fns++];
        *fn = (unit_fn){.text = text};
    }
    pw_segment **users = realloc(fn->users, sizeof *users * (size_t)(fn->n_users + 1));
    if (!users) return !(u->oom = true);
    fn->users = users;
    fn->users[fn->n_users++] = sg;
    return true;
}

static bool calls(const pw_program *pg, int m)
{
    member_kind k = kind_of(pg, &pg->members[m]);
    return k == M_CALL || k == M_ROW_CALL;
}

/* Whether a gathered splat j of pg is read only by the n segments segs,
 * each in place (ref_cols), so that chunks need not be gathered for it. */
static bool read_only_in_place(const pw_program *pg, const pw_segment *segs, int n, int j)
{
    for (int m = 0; m < pg->n_members; m++) {
        bool inside = false, reads = false;
        for (int i = 0; i < n; i++) inside |= m >= segs[i].first && m < segs[i].first + segs[i].n;
        for (int k = 0; k < pg->members[m].pw.nin; k++)
            reads |= pg->members[m].in[k].kind == SRC_BUF && pg->members[m].in[k].index == j;
        if (reads && !inside) return false;
    }
    for (int i = 0; i < n; i++)
        for (int k = 0; k < segs[i].n_refs; k++)
            if (segs[i].refs[k].kind == REF_BUF && segs[i].refs[k].index == j) return false;
    return true;
}

/* Finds program pg's segments (pool memory) and adds their functions: runs
 * of members that can take part, without calls at either end (a call
 * alone saves nothing). */
static tj_status segments_of(tj_plan *p, pw_program *pg, unit *u)
{
    pw_segment *segs = tj_pool_alloc(p->pool, sizeof *segs * (size_t)(pg->n_members + 1)); /* merged members
                                                                                               may stand alone */
    if (!segs) return TJ_ERR_OUT_OF_MEMORY;
    int n = 0;
    for (int m = 0; m < pg->n_members;) {
        int end = m;
        while (end < pg->n_members && kind_of(pg, &pg->members[end]) != M_NONE) end++;
        int first = m, last = end;
        while (first < last && calls(pg, first)) first++;
        while (last > first && calls(pg, last - 1)) last--;
        if (calls_in(pg, first, last - first) < 2) {
            m = end > m ? end : m + 1;
            continue;
        }
        pw_segment *sg = &segs[n];
        *sg = (pw_segment){.first = first, .n = last - first};
        if (unit_add(u, pg, sg)) {
            sg->n_calls = calls_in(pg, sg->first, sg->n);
            n++;
        } else if (u->oom) {
            return tj_oom("tj_compile", 0);
        }
        m = first + (sg->n >= 2 ? sg->n : 1); /* a shorter segment: the rest may make another */
    }
    pg->segments = segs;
    pg->n_segments = n;
    for (int j = 0; j < pg->n_splats; j++)
        pg->splats[j].native_only = pg->splats[j].row_vector && read_only_in_place(pg, segs, n, j);
    return TJ_OK;
}

/* Function tjg_<i> of a loaded unit, or NULL. */
static pw_native_fn native_fn(void *handle, int i)
{
    char name[32];
    snprintf(name, sizeof name, "tjg_%d", i);
    pw_native_fn fn;
    void *sym = tj_native_symbol(handle, name);
    memcpy(&fn, &sym, sizeof fn); /* ISO C has no object-to-function pointer cast */
    return fn;
}

tj_status tj_plan_native_code(tj_plan *p)
{
    unit u = {0};
    tj_status st = TJ_OK;
    for (int i = 0; i < p->n_nodes && st == TJ_OK; i++) {
        tj_pnode *n = &p->nodes[i];
        if (n->is_step && n->kernel == tj_kernel_fused_pointwise)
            st = segments_of(p, (pw_program *)(intptr_t)n->args[0].u.i, &u);
    }
    char *source = NULL;
    size_t len = 0;
    FILE *f = st == TJ_OK && u.n_fns ? open_memstream(&source, &len) : NULL;
    if (f) {
        fputs(prelude, f);
        for (int i = 0; i < u.n_fns; i++) {
            fprintf(f, "\nvoid tjg_%d%s", i, u.fns[i].text);
        }
        fclose(f);
    }
    if (st == TJ_OK && u.n_fns && !source) st = tj_oom("tj_compile", 0);
    void *handle = NULL;
    int missing = -1;
    if (st == TJ_OK && source && tj_native_load(source, isa_flags(), &handle) != TJ_OK)
        snprintf(p->native_error, sizeof p->native_error, "%s", tj_last_error());
    for (int i = 0; handle && i < u.n_fns && missing < 0; i++)
        if (!(u.fns[i].fn = native_fn(handle, i))) missing = i;
    if (missing >= 0) { /* $TJ_CC built something else: all or nothing */
        snprintf(p->native_error, sizeof p->native_error,
                 "tj_compile (native code): the compiled object has no function 'tjg_%d'", missing);
        tj_native_unload(handle);
        handle = NULL;
    }
    p->native_handle = handle;
    for (int i = 0; handle && i < u.n_fns; i++) {
        for (int k = 0; k < u.fns[i].n_users; k++) {
            pw_segment *sg = u.fns[i].users[k];
            sg->fn = u.fns[i].fn;
            p->stats.n_native_segments++;
            p->stats.n_native_calls += sg->n_calls;
        }
    }
    free(source);
    unit_free(&u);
    return st;
}
