/* Hostile inputs for every operator (issue 9; ops.h and dispatch.h): each
 * conformance case (../shared/conformance, one valid call per operator and
 * situation) is called again with one argument at a time made hostile: a
 * NULL tensor, the wrong dtype (int64 where float is needed, bool
 * arithmetic), a shape that does not broadcast, a 0-dim or empty tensor, a
 * non-contiguous copy, dims out of range both ways, negative sizes, sizes
 * whose element count overflows, NaN and infinite scalars, unknown strings,
 * invalid dtypes, list lengths that are negative or too long.
 *
 * Every such call must either succeed or fail with a status and a message
 * naming the operator, with no output left behind; and, whatever happens,
 * leave its inputs as they were (in-place operators: unless they succeed),
 * leak nothing (a counting allocator hook, the storage cache off), and agree
 * with the shape function run on fake tensors: a call its shape function
 * refuses fails for real with the same status, and a call that succeeds has
 * the output types the shape function gives. A non-contiguous input gives
 * the values the contiguous one gives. The allocator refuses blocks beyond
 * 256 MiB, so that a size made huge is an out-of-memory error, not a machine
 * brought to its knees. Under the sanitizer build (.ci/run) any memory or
 * undefined-behaviour error on these paths is a failure too. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc_counter.h"
#include "runtime/internal.h"
#include "tools/conform.h"

#define CAP ((size_t)256 << 20)

static void setup(void)
{
    count_allocations();
    refuse_allocations_over(CAP);
    tj_set_num_threads(1);
}

/* ---- one call's arguments, with the storage its lists point into ---- */

#define MAX_LIST TJ_CONFORM_MAX_LIST

typedef struct argset {
    tj_value v[TJ_MAX_ARGS];
    tj_tensor *lists[TJ_MAX_ARGS][MAX_LIST];
    int64_t ints[TJ_MAX_ARGS][MAX_LIST + 1];
    bool bools[TJ_MAX_ARGS][MAX_LIST];
    double floats[TJ_MAX_ARGS][MAX_LIST + 1];
} argset;

/* A tensor of t's shape whose elements sit two apart (a non-contiguous
 * copy of t): the last dim of a tensor twice as long, every other element.
 * Like every tensor the helpers below make, owned by the open scope (the
 * public constructors register theirs with it). */
static tj_tensor *noncontiguous(tj_tensor *t, bool fake)
{
    int nd = tj_tensor_ndim(t);
    int64_t shape[TJ_MAX_DIMS], strides[TJ_MAX_DIMS];
    memcpy(shape, tj_tensor_shape(t), sizeof(int64_t) * (size_t)nd);
    shape[nd - 1] *= 2;
    tj_tensor *base = fake ? tj_tensor_fake(tj_tensor_dtype(t), nd, shape) : tj_tensor_empty(tj_tensor_dtype(t), nd, shape);
    cr_assert_not_null(base, "%s", tj_last_error());
    memcpy(strides, tj_tensor_strides(base), sizeof(int64_t) * (size_t)nd);
    strides[nd - 1] = 2;
    tj_tensor *v = tj_tensor_new_view(base, nd, tj_tensor_shape(t), strides, 0); /* internal: not adopted */
    cr_assert_not_null(v);
    cr_assert_eq(tj_scope_adopt(v), TJ_OK);
    if (!fake) cr_assert_not_null(tj_copy_(v, t), "%s", tj_last_error());
    return v;
}

static tj_tensor *fake_of(tj_tensor *t)
{
    if (tj_tensor_is_contiguous(t)) {
        tj_tensor *f = tj_tensor_fake(tj_tensor_dtype(t), tj_tensor_ndim(t), tj_tensor_shape(t));
        cr_assert_not_null(f, "%s", tj_last_error());
        return f;
    }
    return noncontiguous(t, true);
}

/* Fresh copies of the case's arguments: clones (real) or fakes of the same
 * geometry. Tensors are owned by the caller's scope. */
static void copy_args(const tj_conform_case *c, argset *a, bool fake)
{
    const tj_op *op = c->op;
    for (int i = 0; i < tj_op_num_args(op); i++) {
        tj_value v = c->args[i];
        if (v.kind == TJ_V_TENSOR) {
            tj_tensor *t = fake ? fake_of(v.u.t) : tj_clone(v.u.t);
            cr_assert_not_null(t, "%s", tj_last_error());
            v.u.t = t;
        } else if (v.kind == TJ_V_TENSORS) {
            for (int k = 0; k < v.n; k++) a->lists[i][k] = fake ? fake_of(v.u.ts[k]) : tj_clone(v.u.ts[k]);
            v.u.ts = a->lists[i];
        } else if (v.kind == TJ_V_INTS) {
            memcpy(a->ints[i], v.u.ints, sizeof(int64_t) * (size_t)v.n);
            v.u.ints = a->ints[i];
        } else if (v.kind == TJ_V_BOOLS) {
            memcpy(a->bools[i], v.u.bools, sizeof(bool) * (size_t)v.n);
            v.u.bools = a->bools[i];
        } else if (v.kind == TJ_V_FLOATS) {
            memcpy(a->floats[i], v.u.floats, sizeof(double) * (size_t)v.n);
            v.u.floats = a->floats[i];
        }
        a->v[i] = v;
    }
}

/* ---- the hostile replacements ---- */

/* A real or fake tensor of a dtype and shape (reals filled with 0.5). */
static tj_tensor *make(tj_dtype dt, int nd, const int64_t *shape, bool fake)
{
    if (fake) {
        tj_tensor *f = tj_tensor_fake(dt, nd, shape);
        cr_assert_not_null(f, "%s", tj_last_error());
        return f;
    }
    tj_tensor *t = tj_full(shape, nd, dt == TJ_BOOL ? tj_v_bool(true) : tj_v_float(0.5), (int)dt);
    if (!t) t = tj_full(shape, nd, tj_v_int(1), (int)dt);
    cr_assert_not_null(t, "%s", tj_last_error());
    return t;
}

/* Tensor t replaced by mutation m; sets *done false when m is past the end.
 * *same_values: the replacement holds t's values (compare the results). */
static tj_tensor *mutate_tensor(tj_tensor *t, int m, bool fake, char *what, size_t n, bool *done, bool *same_values)
{
    static const int64_t seven[1] = {7};
    int nd = t ? tj_tensor_ndim(t) : 1;
    const int64_t *shape = t ? tj_tensor_shape(t) : seven;
    int64_t empty[TJ_MAX_DIMS] = {0};
    for (int d = 1; d < nd; d++) empty[d] = shape[d];
    *same_values = false;
    switch (m) {
    case 0: snprintf(what, n, "NULL"); return NULL;
    case 1: snprintf(what, n, "int64"); return (make(TJ_INT64, nd, shape, fake));
    case 2: snprintf(what, n, "bool"); return (make(TJ_BOOL, nd, shape, fake));
    case 3: snprintf(what, n, "float64"); return (make(TJ_FLOAT64, nd, shape, fake));
    case 4: snprintf(what, n, "float32[7]"); return (make(TJ_FLOAT32, 1, seven, fake));
    case 5: snprintf(what, n, "0-dim"); return (make(TJ_FLOAT32, 0, NULL, fake));
    case 6:
        snprintf(what, n, "empty");
        return (make(t ? tj_tensor_dtype(t) : TJ_FLOAT32, nd ? nd : 1, empty, fake));
    case 7:
        snprintf(what, n, "non-contiguous");
        if (!t || nd == 0 || tj_tensor_numel(t) == 0) return t;
        *same_values = true;
        return noncontiguous(t, fake);
    }
    *done = true;
    return t;
}

/* Applies mutation m to argument i; false when there is no mutation m. */
static bool mutate(const tj_op *op, argset *a, int i, int m, bool fake, char *what, size_t n, bool *same_values)
{
    tj_value *v = &a->v[i];
    const tj_arg_spec *spec = &op->args[i];
    bool done = false;
    *same_values = false;
    switch (spec->type) {
    case TJ_A_TENSOR: {
        tj_tensor *t = mutate_tensor(v->kind == TJ_V_TENSOR ? v->u.t : NULL, m, fake, what, n, &done, same_values);
        if (done) return false;
        *v = tj_v_tensor(t);
        return true;
    }
    case TJ_A_TENSOR_LIST:
        if (m == 0) snprintf(what, n, "n = 0"), v->n = 0;
        else if (m == 1) snprintf(what, n, "n = -1"), v->n = -1;
        else if (m == 2) snprintf(what, n, "list NULL"), v->u.ts = NULL;
        else if (v->n > 0) {
            char sub[48];
            tj_tensor *t = mutate_tensor(a->lists[i][0], m - 3, fake, sub, sizeof sub, &done, same_values);
            if (done) return false;
            snprintf(what, n, "element 0 %s", sub);
            a->lists[i][0] = t;
        } else return false;
        return true;
    case TJ_A_INT: {
        static const int64_t vals[] = {-100, 100, -1, INT64_MAX, INT64_MIN, 0, (int64_t)1 << 40};
        if (m >= (int)(sizeof vals / sizeof *vals)) return false;
        snprintf(what, n, "%lld", (long long)vals[m]);
        *v = tj_v_int(vals[m]);
        return true;
    }
    case TJ_A_INT_LIST: {
        int64_t *ints = a->ints[i];
        int len = v->kind == TJ_V_INTS ? v->n : 0;
        if (m <= 3 && !len) return false;
        if (m > 9) return false;
        if (v->kind != TJ_V_INTS) *v = tj_v_ints(ints, 0);
        switch (m) {
        case 0: ints[0] = -3; snprintf(what, n, "[0] = -3"); return true;
        case 1: ints[len - 1] = INT64_MAX; snprintf(what, n, "[last] = INT64_MAX"); return true;
        case 2: ints[0] = (int64_t)1 << 40; snprintf(what, n, "[0] = 2^40"); return true;
        case 3: ints[0] = INT64_MIN; snprintf(what, n, "[0] = INT64_MIN"); return true;
        case 4: for (int k = 0; k < len; k++) ints[k] = 0; snprintf(what, n, "all 0"); return true;
        case 5: v->n = 0; snprintf(what, n, "n = 0"); return true;
        case 6: ints[len] = 1, v->n = len + 1; snprintf(what, n, "one more (1)"); return true;
        case 7: v->n = -1; snprintf(what, n, "n = -1"); return true;
        case 8: v->n = 2, v->u.ints = NULL; snprintf(what, n, "NULL with n = 2"); return true;
        case 9: v->n = 65; snprintf(what, n, "n = 65"); return true;
        }
        return false;
    }
    case TJ_A_FLOAT_LIST: {
        double *fs = a->floats[i];
        int len = v->kind == TJ_V_FLOATS ? v->n : 0;
        if ((m <= 3 && !len) || m > 7) return false;
        if (v->kind != TJ_V_FLOATS) *v = tj_v_floats(fs, 0);
        switch (m) {
        case 0: fs[0] = NAN; snprintf(what, n, "[0] = nan"); return true;
        case 1: fs[len - 1] = INFINITY; snprintf(what, n, "[last] = inf"); return true;
        case 2: fs[0] = -1.0; snprintf(what, n, "[0] = -1"); return true;
        case 3: fs[0] = 1e300; snprintf(what, n, "[0] = 1e300"); return true;
        case 4: v->n = 0; snprintf(what, n, "n = 0"); return true;
        case 5: fs[len] = 1.0, v->n = len + 1; snprintf(what, n, "one more (1.0)"); return true;
        case 6: v->n = -1; snprintf(what, n, "n = -1"); return true;
        case 7: v->n = 2, v->u.floats = NULL; snprintf(what, n, "NULL with n = 2"); return true;
        }
        return false;
    }
    case TJ_A_FLOAT: {
        static const double vals[] = {NAN, INFINITY, -INFINITY, -1.0, 1e300};
        if (m >= 5) return false;
        snprintf(what, n, "%g", vals[m]);
        *v = tj_v_float(vals[m]);
        return true;
    }
    case TJ_A_SCALAR:
        switch (m) {
        case 0: *v = tj_v_int(INT64_MAX); break;
        case 1: *v = tj_v_int(INT64_MIN); break;
        case 2: *v = tj_v_float(NAN); break;
        case 3: *v = tj_v_float(INFINITY); break;
        case 4: *v = tj_v_bool(true); break;
        case 5: *v = tj_v_float(1e300); break;
        default: return false;
        }
        tj_value_describe(v, what, n);
        return true;
    case TJ_A_BOOL:
        if (m > 0 || v->kind != TJ_V_BOOL) return false;
        v->u.b = !v->u.b;
        snprintf(what, n, "flipped");
        return true;
    case TJ_A_BOOL_LIST:
        if (m == 0 && v->kind == TJ_V_BOOLS && v->n > 0) a->bools[i][0] = !a->bools[i][0], snprintf(what, n, "[0] flipped");
        else if (m == 1) *v = tj_v_bools(a->bools[i], -1), snprintf(what, n, "n = -1");
        else if (m == 2) *v = tj_v_bools(NULL, 3), snprintf(what, n, "NULL with n = 3");
        else return false;
        return true;
    case TJ_A_STR:
        if (m == 0) *v = tj_v_str("hostile"), snprintf(what, n, "'hostile'");
        else if (m == 1) *v = tj_v_str(""), snprintf(what, n, "''");
        else if (m == 2) *v = tj_v_none(), snprintf(what, n, "None");
        else return false;
        return true;
    case TJ_A_SCALAR_TYPE:
        if (m < TJ_NUM_DTYPES) *v = tj_v_dtype((tj_dtype)m), snprintf(what, n, "%s", tj_dtype_name((tj_dtype)m));
        else if (m == TJ_NUM_DTYPES) *v = tj_v_dtype((tj_dtype)99), snprintf(what, n, "dtype 99");
        else if (m == TJ_NUM_DTYPES + 1) *v = tj_v_dtype((tj_dtype)-1), snprintf(what, n, "dtype -1");
        else return false;
        return true;
    case TJ_A_IGNORED: return false;
    }
    return false;
}

/* ---- what must hold after each call ---- */

/* A checksum of every tensor argument's shape, strides and elements. */
static uint64_t fingerprint(const tj_op *op, const argset *a)
{
    uint64_t h = 1469598103934665603ull;
#define MIX(p, len)                                                     \
    for (size_t b_ = 0; b_ < (len); b_++) h = (h ^ ((const unsigned char *)(p))[b_]) * 1099511628211ull
    for (int i = 0; i < tj_op_num_args(op); i++) {
        const tj_value *v = &a->v[i];
        int n = v->kind == TJ_V_TENSOR ? 1 : v->kind == TJ_V_TENSORS && v->u.ts ? v->n : 0;
        for (int k = 0; k < n; k++) {
            tj_tensor *t = v->kind == TJ_V_TENSOR ? v->u.t : v->u.ts[k];
            if (!t || tj_tensor_is_fake(t)) continue;
            int nd = tj_tensor_ndim(t);
            MIX(tj_tensor_shape(t), sizeof(int64_t) * (size_t)nd);
            MIX(tj_tensor_strides(t), sizeof(int64_t) * (size_t)nd);
            size_t bytes = (size_t)tj_tensor_numel(t) * tj_dtype_size(tj_tensor_dtype(t));
            unsigned char *buf = malloc(bytes + 1);
            cr_assert_not_null(buf);
            cr_assert_eq(tj_tensor_copy_to(t, buf), TJ_OK);
            MIX(buf, bytes);
            free(buf);
        }
    }
#undef MIX
    return h;
}

static bool same_type(const tj_tensor *a, const tj_tensor *b)
{
    return tj_tensor_dtype(a) == tj_tensor_dtype(b) && tj_tensor_ndim(a) == tj_tensor_ndim(b) &&
           !memcmp(tj_tensor_shape(a), tj_tensor_shape(b), sizeof(int64_t) * (size_t)tj_tensor_ndim(a));
}

static bool trace; /* debugging (TJ_HOSTILE_TRACE set): print each call to stderr first */

typedef struct sweep_stats {
    int calls, failed, cases;
} sweep_stats;

/* One hostile call: real and fake, the checks above. base: the outputs of
 * the unmutated call (for a non-contiguous input's values). */
static void hostile_call(const tj_conform_case *c, const char *name, int i, int m, tj_value *base, sweep_stats *st)
{
    const tj_op *op = c->op;
    int nargs = tj_op_num_args(op), nret = tj_op_num_returns(op);
    argset *ra = calloc(1, sizeof *ra), *fa = calloc(1, sizeof *fa);
    cr_assert(ra && fa);
    tj_scope *outer = tj_scope_begin();
    copy_args(c, ra, false);
    copy_args(c, fa, true);
    char what[96] = "";
    bool same_values, unused;
    if (!mutate(op, ra, i, m, false, what, sizeof what, &same_values)) goto done;
    mutate(op, fa, i, m, true, what, sizeof what, &unused);
    st->calls++;
    const char *arg = op->args[i].name;
    if (trace) fprintf(stderr, "%s: arg %d '%s' = %s\n", name, i, arg, what);

    /* fake first: the shape function's verdict */
    tj_value fouts[TJ_MAX_RETURNS];
    tj_clear_error();
    tj_scope *fs = tj_scope_begin();
    tj_status fst = tj_dispatch(op, fa->v, nargs, fouts);
    char fmsg[512];
    snprintf(fmsg, sizeof fmsg, "%s", tj_last_error());
    bool draws = tj_op_is_random(op); /* its values differ from call to call */

    uint64_t before = fingerprint(op, ra);
    int64_t live_before = live_allocations();
    tj_value outs[TJ_MAX_RETURNS];
    tj_clear_error();
    tj_scope *s = tj_scope_begin();
    tj_status rst = tj_dispatch(op, ra->v, nargs, outs);
    const char *msg = tj_last_error();
    if (rst != TJ_OK) {
        st->failed++;
        cr_expect(msg[0], "%s arg %d '%s' = %s: failed (%s) without a message", name, i, arg, what,
                  tj_status_name(rst));
        bool named = strstr(msg, op->base) || (tj_op_kind_of(op) == TJ_OP_IMPLICIT && strstr(msg, "aten::"));
        cr_expect(named, "%s arg %d '%s' = %s: the message does not name %s: %s", name, i, arg, what, op->name, msg);
        for (int k = 0; k < nret; k++)
            cr_expect_eq(outs[k].kind, TJ_V_NONE, "%s arg %d = %s: output %d left behind on failure", name, i, what, k);
        if (fst != TJ_OK && fst != TJ_ERR_UNSUPPORTED && fst != TJ_ERR_OUT_OF_MEMORY && rst != TJ_ERR_OUT_OF_MEMORY)
            cr_expect_eq(rst, fst, "%s arg %d '%s' = %s: fake says %s (%s), real says %s (%s)", name, i, arg, what,
                         tj_status_name(fst), fmsg, tj_status_name(rst), msg);
    } else {
        cr_expect(fst == TJ_OK || fst == TJ_ERR_UNSUPPORTED, "%s arg %d '%s' = %s: runs, but fake refuses it: %s", name,
                  i, arg, what, fmsg);
        for (int k = 0; k < nret && fst == TJ_OK; k++)
            if (outs[k].kind == TJ_V_TENSOR && fouts[k].kind == TJ_V_TENSOR)
                cr_expect(same_type(outs[k].u.t, fouts[k].u.t), "%s arg %d = %s: output %d real and fake types differ",
                          name, i, what, k);
        if (same_values && !draws && !tj_op_is_inplace(op))
            for (int k = 0; k < nret; k++) {
                if (outs[k].kind != TJ_V_TENSOR || base[k].kind != TJ_V_TENSOR) continue;
                char why[600];
                cr_expect(tj_conform_compare(outs[k].u.t, base[k].u.t, 1e-5, 1e-6, why, sizeof why),
                          "%s arg %d '%s' non-contiguous: output %d differs: %s", name, i, arg, k, why);
            }
    }
    if (rst != TJ_OK || !tj_op_is_inplace(op))
        cr_expect_eq(fingerprint(op, ra), before, "%s arg %d '%s' = %s: an input changed (%s)", name, i, arg, what,
                     rst == TJ_OK ? "call succeeded" : msg);
    tj_scope_end(s);
    cr_expect_eq(live_allocations(), live_before, "%s arg %d '%s' = %s: %lld blocks leaked", name, i, arg, what,
                 (long long)(live_allocations() - live_before));
    tj_scope_end(fs);
done:
    tj_scope_end(outer);
    free(ra);
    free(fa);
}

static void sweep_case(const char *dir, const char *name, sweep_stats *st)
{
    tj_conform_case *c = calloc(1, sizeof *c);
    cr_assert_not_null(c);
    char why[1024];
    tj_scope *s = tj_scope_begin();
    if (tj_conform_decode_case(dir, c, why, sizeof why) == TJ_CASE_PASS) {
        st->cases++;
        tj_value base[TJ_MAX_RETURNS];
        tj_manual_seed(1);
        cr_expect_eq(tj_dispatch(c->op, c->args, tj_op_num_args(c->op), base), TJ_OK, "%s: %s", name, tj_last_error());
        for (int i = 0; i < tj_op_num_args(c->op); i++)
            for (int m = 0; m < 16; m++) hostile_call(c, name, i, m, base, st); /* past its last one, mutate() says no */
    }
    tj_scope_end(s);
    tj_conform_case_free(c);
    free(c);
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

Test(hostile_ops, every_operator_survives_one_hostile_argument_at_a_time, .init = setup, .timeout = 1200)
{
    char root[4096];
    const char *shared = getenv("TJ_SHARED_DIR");
    snprintf(root, sizeof root, "%s/conformance/cases", shared ? shared : "../shared");
    DIR *d = opendir(root);
    cr_assert_not_null(d, "%s", root);
    char **names = NULL;
    int n = 0;
    for (struct dirent *e; (e = readdir(d));) {
        if (e->d_name[0] == '.') continue;
        names = realloc(names, sizeof *names * (size_t)(n + 1));
        names[n++] = strdup(e->d_name);
    }
    closedir(d);
    qsort(names, (size_t)n, sizeof *names, cmp_str);
    const char *only = getenv("TJ_HOSTILE_ONLY"); /* debugging: a prefix of case names */
    trace = getenv("TJ_HOSTILE_TRACE") != NULL;
    sweep_stats st = {0};
    for (int k = 0; k < n; k++) {
        if (!only || !strncmp(names[k], only, strlen(only))) {
            char dir[8192];
            snprintf(dir, sizeof dir, "%s/%s", root, names[k]);
            sweep_case(dir, names[k], &st);
        }
        free(names[k]);
    }
    free(names);
    cr_log_info("%d cases, %d hostile calls, %d refused", st.cases, st.calls, st.failed);
    cr_expect_gt(st.cases, only ? 0 : 400);
}
