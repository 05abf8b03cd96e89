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
 * Members with transcendental functions (exp, tanh, erf, ...; their SIMD
 * polynomials live in the kernels), row members and reductions run their
 * own loops between segments; a segment member reading a row member's
 * result (a mean, a 1/std) reads it once per row, in a loop over the rows
 * of the chunk around the loop over the row's elements. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuse_pointwise.h"
#include "kernels/cpu_isa.h"
#include "native_build.h"

/* ---- one member's expression ---- */

#define EXPR_BYTES 1024 /* a member's C expression, at most */
#define OPERAND_BYTES 48 /* an operand's: t12, r3[i], F64(0x...ull) */

static const char *ctype(tj_dtype t) { return t == TJ_FLOAT32 ? "float" : t == TJ_FLOAT64 ? "double" : "u8"; }

/* Whether C has dtype t here (float, double, u8 for bool). */
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
        snprintf(s, size, "(u8)%u", (unsigned)v.b);
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
    if (pw->fn == tj_k_compare_loop) {
        static const char *const ops[] = {[TJ_K_EQ] = "==", [TJ_K_NE] = "!=", [TJ_K_LT] = "<", [TJ_K_LE] = "<=",
                                          [TJ_K_GT] = ">",  [TJ_K_GE] = ">="};
        static const char *const logical[] = {[TJ_K_LOGICAL_AND] = "&", [TJ_K_LOGICAL_OR] = "|",
                                              [TJ_K_LOGICAL_XOR] = "^"};
        tj_k_compare_op op = pw->ctx.compare.op;
        if (op <= TJ_K_GE) snprintf(s, size, "(u8)(%s %s %s)", x[0], ops[op], x[1]);
        else snprintf(s, size, "(u8)((%s != 0) %s (%s != 0))", x[0], logical[op], x[1]);
        return true;
    }
    tj_dtype t = result_dtype(mb);
    if (!tj_dtype_is_float(t)) return false;
    const char *T = ctype(t), *f = t == TJ_FLOAT32 ? "f" : ""; /* sqrtf or sqrt, ... */
    const char *sfx = t == TJ_FLOAT32 ? "f32" : "f64";
    if (pw->fn == tj_k_add_loop) {
        tj_k_scalar al;
        if (t == TJ_FLOAT32) al.f32 = (float)pw->ctx.axpby.alpha;
        else al.f64 = pw->ctx.axpby.alpha;
        if (t == TJ_FLOAT32 ? al.f32 == 1 : al.f64 == 1) {
            snprintf(s, size, "%s + %s", x[0], x[1]);
        } else {
            char a[OPERAND_BYTES];
            literal(a, sizeof a, t, al);
            snprintf(s, size, "%s + %s * %s", x[0], a, x[1]);
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

/* Whether member mb can be part of a segment: one of the loops below, on
 * dtypes C has here (float, double, u8 for bool). */
static bool native_member(const pw_member *mb)
{
    tj_loop_fn fn = mb->pw.fn;
    if (mb->reduces || mb->rows_in || mb->rows_out) return false;
    if (fn != tj_k_unary_loop && fn != tj_k_binary_loop && fn != tj_k_add_loop && fn != tj_k_pow_scalar_loop &&
        fn != tj_k_where_loop && fn != tj_pointwise_copy_loop && fn != tj_k_compare_loop)
        return false;
    if (!c_dtype(result_dtype(mb))) return false;
    char x[TJ_ITER_MAX_INPUTS][OPERAND_BYTES], s[EXPR_BYTES];
    for (int k = 0; k < mb->pw.nin; k++) {
        if (!c_dtype(mb->pw.loop[k])) return false;
        snprintf(x[k], sizeof x[k], "x%d", k);
    }
    return expression(mb, x, s);
}

/* ---- one segment's function ---- */

typedef struct emitter {
    const pw_program *pg;
    pw_segment *sg;
    tj_dtype ref_dtype[PW_MAX_REFS];
    bool ref_written[PW_MAX_REFS];
    bool ref_rows[PW_MAX_REFS]; /* one value per row, read once per row into w<k> */
    bool declared[PW_MAX_REFS]; /* its scalar c<k> is declared */
    bool has_rows;
    int writer[PW_MAX_BUFS]; /* member whose local t<m> holds buffer b's value, or -1 */
} emitter;

/* The pointer p[k] for (kind, index) read or written as dtype t (rows:
 * read as one value per row); -1 when the segment has no room for another,
 * or for rows read from a buffer the segment writes (a store of the first
 * row's elements would overwrite later rows' values). */
static int ref(emitter *e, ref_kind kind, int index, tj_dtype t, bool written, bool rows)
{
    pw_segment *sg = e->sg;
    for (int k = 0; k < sg->n_refs; k++) {
        if (sg->refs[k].kind != kind || sg->refs[k].index != index) continue;
        if (rows && e->ref_written[k]) return -1;
        if (e->ref_dtype[k] == t && e->ref_rows[k] == rows) {
            e->ref_written[k] |= written;
            return k;
        }
    }
    if (sg->n_refs == PW_MAX_REFS) return -1;
    int k = sg->n_refs++;
    sg->refs[k] = (pw_ref){kind, index, tj_dtype_bytes(t)};
    e->ref_dtype[k] = t;
    e->ref_written[k] = written;
    e->ref_rows[k] = rows;
    e->has_rows |= rows;
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

/* Whether the segment reads buffer b as elements of other than es bytes
 * or as rows, before the store about to be made: a store element by
 * element would overwrite values not read yet (the loops read a whole
 * chunk first). */
static bool read_otherwise(const emitter *e, int b, size_t es)
{
    for (int k = 0; k < e->sg->n_refs; k++)
        if (e->sg->refs[k].kind == REF_BUF && e->sg->refs[k].index == b && (e->sg->refs[k].es != es || e->ref_rows[k]))
            return true;
    return false;
}

/* Writes the loop body of segment sg's first n members into f (the
 * statements for element i) and fills sg's refs; scalars read once per
 * call (one-element tensors) are declared into `head`. Returns how many
 * members it could take, from the first: fewer than n when a member needs
 * more than PW_MAX_REFS pointers or would store over elements of another
 * size still to be read. */
static int emit_body(emitter *e, int n, FILE *f, FILE *head)
{
    const pw_program *pg = e->pg;
    pw_segment *sg = e->sg;
    sg->n_refs = 0;
    e->has_rows = false;
    for (int b = 0; b < PW_MAX_BUFS; b++) e->writer[b] = -1;
    for (int m = sg->first; m < sg->first + n; m++) {
        const pw_member *mb = &pg->members[m];
        char x[TJ_ITER_MAX_INPUTS][OPERAND_BYTES], s[EXPR_BYTES];
        for (int k = 0; k < mb->pw.nin; k++) {
            const pw_src *src = &mb->in[k];
            tj_dtype t = mb->pw.loop[k];
            if (src->kind == SRC_BUF && e->writer[src->index] >= 0) {
                snprintf(x[k], sizeof x[k], "t%d", e->writer[src->index]);
            } else if (src->kind == SRC_BUF && src->index < pg->n_splats && !pg->splats[src->index].gather) {
                const pw_splat *sp = &pg->splats[src->index];
                if (sp->arg < 0) {
                    literal(x[k], sizeof x[k], t, sp->value);
                } else { /* a one-element tensor: its value, converted once per run into the splat */
                    int r = ref(e, REF_BUF, src->index, t, false, false);
                    if (r < 0) return m - sg->first;
                    snprintf(x[k], sizeof x[k], "c%d", r);
                    if (!e->declared[r])
                        fprintf(head, "    const %s c%d = ((const %s *)p[%d])[0];\n", ctype(t), r, ctype(t), r);
                    e->declared[r] = true;
                }
            } else if (src->kind == SRC_ROWS) { /* a row member's result, one value per row */
                int r = ref(e, REF_BUF, src->index, t, false, true);
                if (r < 0) return m - sg->first;
                snprintf(x[k], sizeof x[k], "w%d", r);
            } else {
                int r = ref(e, src->kind == SRC_BUF ? REF_BUF : REF_ARG, src->index, t, false, false);
                if (r < 0) return m - sg->first;
                snprintf(x[k], sizeof x[k], "r%d[i]", r);
            }
        }
        tj_dtype rt = result_dtype(mb);
        if (mb->buf < 0 || mb->out >= 0 || read_after(pg, sg, m)) {
            if (mb->buf >= 0 && read_otherwise(e, mb->buf, tj_dtype_bytes(rt))) return m - sg->first;
            int r = mb->buf < 0 ? ref(e, REF_OUT, mb->out, rt, true, false) : ref(e, REF_BUF, mb->buf, rt, true, false);
            if (r < 0) return m - sg->first;
            expression(mb, x, s);
            fprintf(f, "        const %s t%d = %s;\n        r%d[i] = t%d;\n", ctype(rt), m, s, r, m);
        } else {
            expression(mb, x, s);
            fprintf(f, "        const %s t%d = %s;\n", ctype(rt), m, s);
        }
        if (mb->buf >= 0) e->writer[mb->buf] = m;
    }
    return n;
}

/* Segment sg's function into *text (malloc'd), from its parameter list
 * on (the name goes before it). sg->n shrinks to the members emit_body
 * takes; false when fewer than two, or out of memory (*oom set). */
static bool emit_function(const pw_program *pg, pw_segment *sg, char **text, bool *oom)
{
    emitter e = {.pg = pg, .sg = sg};
    char *body = NULL, *head = NULL;
    size_t body_len = 0, head_len = 0;
    bool ok = false;
    while (sg->n >= 2 && !ok) {
        free(body);
        free(head);
        body = head = NULL;
        memset(e.declared, 0, sizeof e.declared);
        FILE *fb = open_memstream(&body, &body_len), *fh = open_memstream(&head, &head_len);
        int took = fb && fh ? emit_body(&e, sg->n, fb, fh) : 0;
        if (fb) fclose(fb);
        if (fh) fclose(fh);
        if (!fb || !fh) {
            *oom = true;
            break;
        }
        ok = took == sg->n;
        sg->n = took;
    }
    size_t len = 0;
    FILE *f = ok ? open_memstream(text, &len) : NULL;
    if (f) {
        fprintf(f, "(int64_t n, void *const *p)\n{\n");
        for (int k = 0; k < sg->n_refs; k++)
            fprintf(f, "    %s%s *r%d = p[%d];\n", e.ref_written[k] ? "" : "const ", ctype(e.ref_dtype[k]), k, k);
        if (!e.has_rows) {
            fprintf(f, "%s#pragma GCC ivdep\n    for (int64_t i = 0; i < n; i++) {\n%s    }\n}\n", head, body);
        } else { /* the chunk is whole rows of row_len elements */
            fprintf(f, "%s    for (int64_t row = 0, i0 = 0; i0 < n; row++, i0 += %lld) {\n", head,
                    (long long)pg->row_len);
            for (int k = 0; k < sg->n_refs; k++)
                if (e.ref_rows[k]) fprintf(f, "        const %s w%d = r%d[row];\n", ctype(e.ref_dtype[k]), k, k);
            fprintf(f, "#pragma GCC ivdep\n        for (int64_t i = i0; i < i0 + %lld; i++) {\n%s        }\n    }\n}\n",
                    (long long)pg->row_len, body);
        }
        fclose(f);
    }
    *oom |= ok && !f;
    free(body);
    free(head);
    return f != NULL;
}

/* ---- the pass ---- */

static const char prelude[] =
    "/* tjit: fused elementwise steps (tracer/fuse_native.c) */\n"
    "#include <math.h>\n#include <stdint.h>\n#include <string.h>\n"
    "typedef uint8_t u8;\n"
    "static inline float F32(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }\n"
    "static inline double F64(uint64_t u) { double f; memcpy(&f, &u, 8); return f; }\n"
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

/* Finds program pg's segments (pool memory) and adds their functions. */
static tj_status segments_of(tj_plan *p, pw_program *pg, unit *u)
{
    pw_segment *segs = tj_pool_alloc(p->pool, sizeof *segs * (size_t)(pg->n_members / 2 + 1));
    if (!segs) return TJ_ERR_OUT_OF_MEMORY;
    int n = 0;
    for (int m = 0; m < pg->n_members;) {
        int end = m;
        while (end < pg->n_members && native_member(&pg->members[end])) end++;
        if (end - m < 2) {
            m = end > m ? end : m + 1;
            continue;
        }
        pw_segment *sg = &segs[n];
        *sg = (pw_segment){.first = m, .n = end - m};
        if (unit_add(u, pg, sg)) n++;
        else if (u->oom) return tj_oom("tj_compile", 0);
        m += sg->n >= 2 ? sg->n : 1; /* a shorter segment: the rest may make another */
    }
    pg->segments = segs;
    pg->n_segments = n;
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
            p->stats.n_native_calls += sg->n;
        }
    }
    free(source);
    unit_free(&u);
    return st;
}
