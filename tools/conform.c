/* The conformance runner (see conform.h). Cases are decoded with jansson,
 * which keeps integer and real JSON tokens apart (Scalar arguments depend on
 * it) and holds integers as 64-bit values. */
#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "conform.h"
#include "runtime/internal.h"

#define MAX_LIST TJ_CONFORM_MAX_LIST

typedef tj_conform_case decoded;

void tj_conform_case_free(tj_conform_case *d)
{
    for (int i = 0; d && i < TJ_MAX_ARGS; i++) {
        free(d->strs[i]);
        d->strs[i] = NULL;
    }
}

static tj_tensor *load_input(const char *dir, const char *file, char *why, size_t n)
{
    char path[8192];
    if (strchr(file, '/') || strstr(file, "..")) {
        snprintf(why, n, "input name '%s' leaves the case folder", file);
        return NULL;
    }
    snprintf(path, sizeof path, "%s/%s", dir, file);
    tj_tensor *t = tj_npy_load(path);
    if (!t) {
        snprintf(why, n, "%s", tj_last_error());
        return NULL;
    }
    return t;
}

static bool decode_float(json_t *j, double *out)
{
    if (json_is_number(j)) {
        *out = json_number_value(j);
        return true;
    }
    json_t *f = json_is_object(j) ? json_object_get(j, "float") : NULL;
    const char *s = json_string_value(f);
    if (!s) return false;
    if (!strcmp(s, "inf")) *out = INFINITY;
    else if (!strcmp(s, "-inf")) *out = -INFINITY;
    else if (!strcmp(s, "nan")) *out = NAN;
    else return false;
    return true;
}

/* Decodes argument i of the case against the schema's argument type. */
static bool decode_arg(decoded *d, int i, const tj_arg_spec *spec, json_t *j, const char *dir, char *why, size_t n)
{
    tj_value *v = &d->args[i];
    if (json_is_null(j)) {
        *v = tj_v_none();
        return true;
    }
    switch (spec->type) {
    case TJ_A_TENSOR: {
        const char *f = json_string_value(json_object_get(j, "tensor"));
        if (!f) break;
        tj_tensor *t = load_input(dir, f, why, n);
        if (!t) return false;
        *v = tj_v_tensor(t);
        return true;
    }
    case TJ_A_TENSOR_LIST: {
        json_t *arr = json_object_get(j, "tensors");
        if (!json_is_array(arr) || json_array_size(arr) > MAX_LIST) break;
        for (size_t k = 0; k < json_array_size(arr); k++) {
            const char *f = json_string_value(json_array_get(arr, k));
            if (!f && spec->elem_optional && json_is_null(json_array_get(arr, k))) {
                d->lists[i][k] = NULL; /* None entry of a Tensor?[] */
                continue;
            }
            if (!f) goto bad;
            if (!(d->lists[i][k] = load_input(dir, f, why, n))) return false;
        }
        *v = tj_v_tensors(d->lists[i], (int)json_array_size(arr));
        return true;
    }
    case TJ_A_INT:
        if (!json_is_integer(j)) break;
        *v = tj_v_int(json_integer_value(j));
        return true;
    case TJ_A_FLOAT: {
        double f;
        if (!decode_float(j, &f)) break;
        *v = tj_v_float(f);
        return true;
    }
    case TJ_A_SCALAR: {
        if (json_is_integer(j)) {
            *v = tj_v_int(json_integer_value(j));
            return true;
        }
        if (json_is_boolean(j)) {
            *v = tj_v_bool(json_is_true(j));
            return true;
        }
        double f;
        if (!decode_float(j, &f)) break;
        *v = tj_v_float(f);
        return true;
    }
    case TJ_A_BOOL:
        if (!json_is_boolean(j)) break;
        *v = tj_v_bool(json_is_true(j));
        return true;
    case TJ_A_INT_LIST:
    case TJ_A_BOOL_LIST:
    case TJ_A_FLOAT_LIST: {
        if (!json_is_array(j) || json_array_size(j) > MAX_LIST) break;
        size_t cnt = json_array_size(j);
        for (size_t k = 0; k < cnt; k++) {
            json_t *e = json_array_get(j, k);
            if (spec->type == TJ_A_INT_LIST) {
                if (!json_is_integer(e)) goto bad;
                d->ints[i][k] = json_integer_value(e);
            } else if (spec->type == TJ_A_FLOAT_LIST) {
                if (!decode_float(e, &d->floats[i][k])) goto bad;
            } else {
                if (!json_is_boolean(e)) goto bad;
                d->bools[i][k] = json_is_true(e);
            }
        }
        *v = spec->type == TJ_A_INT_LIST     ? tj_v_ints(d->ints[i], (int)cnt)
             : spec->type == TJ_A_FLOAT_LIST ? tj_v_floats(d->floats[i], (int)cnt)
                                             : tj_v_bools(d->bools[i], (int)cnt);
        return true;
    }
    case TJ_A_STR:
        if (!json_is_string(j)) break;
        d->strs[i] = strdup(json_string_value(j));
        *v = tj_v_str(d->strs[i]);
        return true;
    case TJ_A_SCALAR_TYPE: {
        tj_dtype dt;
        const char *s = json_string_value(json_object_get(j, "dtype"));
        if (!s || tj_dtype_from_name(s, &dt) != TJ_OK) break;
        *v = tj_v_dtype(dt);
        return true;
    }
    case TJ_A_IGNORED:
        break;
    }
bad:
    snprintf(why, n, "argument %d '%s' cannot be decoded as the schema's type", i, spec->name);
    return false;
}

static bool is_implemented(const tj_op *op)
{
    if (op->kind == TJ_OP_IMPLICIT) return op->decomp != NULL;
    return op->meta && (op->kernel || op->is_view);
}

/* Element at a row-major flat index as its full 64-bit value (a double
 * would round values above 2^53). */
static int64_t int64_at(const tj_tensor *t, int64_t flat)
{
    int64_t off = 0;
    for (int d = t->ndim - 1; d >= 0; d--) {
        off += flat % t->shape[d] * t->strides[d];
        flat /= t->shape[d];
    }
    return ((const int64_t *)tj_tensor_ptr(t))[off];
}

bool tj_conform_compare(const tj_tensor *got, const tj_tensor *exp, double rtol, double atol, char *why, size_t n)
{
    char a[160], b[160];
    if (got->dtype != exp->dtype) {
        snprintf(why, n, "dtype %s, expected %s", tj_dtype_name(got->dtype), tj_dtype_name(exp->dtype));
        return false;
    }
    bool same_shape = got->ndim == exp->ndim;
    for (int k = 0; same_shape && k < got->ndim; k++) same_shape = got->shape[k] == exp->shape[k];
    if (!same_shape) {
        snprintf(why, n, "shape %s, expected %s", tj_shape_str(got->ndim, got->shape, a, sizeof a),
                 tj_shape_str(exp->ndim, exp->shape, b, sizeof b));
        return false;
    }
    double worst_abs = 0, worst_rel = 0;
    int64_t bad = -1, nbad = 0;
    bool exact = tj_dtype_category(exp->dtype) != TJ_CAT_FLOAT;
    for (int64_t i = 0; i < exp->numel; i++) {
        double e = tj_tensor_item_at(exp, i), g = tj_tensor_item_at(got, i);
        bool ok;
        if (exact) {
            /* int64 beyond 2^53 is not a double; the narrower ones are */
            ok = exp->dtype == TJ_INT64 ? int64_at(exp, i) == int64_at(got, i)
                 : exp->dtype == TJ_BOOL ? (e != 0) == (g != 0)
                                         : e == g;
        } else if (isnan(e)) {
            ok = isnan(g);
        } else if (isinf(e)) {
            ok = g == e;
        } else {
            double err = fabs(g - e);
            ok = isfinite(g) && err <= atol + rtol * fabs(e);
            if (isfinite(g)) {
                if (err > worst_abs) worst_abs = err;
                if (e != 0 && err / fabs(e) > worst_rel) worst_rel = err / fabs(e);
            }
        }
        if (!ok) {
            if (bad < 0) bad = i;
            nbad++;
        }
    }
    if (nbad) {
        snprintf(why, n, "%lld of %lld %s %s (first at flat index %lld: got %.9g, expected %.9g); worst abs %.3g, worst rel %.3g",
                 (long long)nbad, (long long)exp->numel, tj_noun(exp->numel, "value", "values"),
                 tj_noun(nbad, "differs", "differ"), (long long)bad, tj_tensor_item_at(got, bad),
                 tj_tensor_item_at(exp, bad), worst_abs, worst_rel);
        return false;
    }
    return true;
}

tj_case_result tj_conform_decode_case(const char *dir, tj_conform_case *d, char *why, size_t n)
{
    char path[8192];
    memset(d, 0, sizeof *d);
    snprintf(path, sizeof path, "%s/case.json", dir);
    json_error_t jerr;
    size_t len;
    char *text = tj_read_text_file(path, "case.json", TJ_TEXT_FILE_MAX, &len); /* bounded, unlike json_load_file */
    json_t *root = text ? json_loadb(text, len, JSON_DECODE_ANY, &jerr) : NULL;
    tj_free_file(text, len);
    if (!text) snprintf(why, n, "%s", tj_last_error());
    else if (!root) snprintf(why, n, "cannot read %s: %s (line %d)", path, jerr.text, jerr.line);
    if (!root) return TJ_CASE_FAIL;
    tj_case_result result = TJ_CASE_FAIL;
    const char *opname = json_string_value(json_object_get(root, "op"));
    json_t *args = json_object_get(root, "args");
    json_t *expect = json_object_get(root, "outputs");
    d->rtol = json_number_value(json_object_get(root, "rtol"));
    d->atol = json_number_value(json_object_get(root, "atol"));
    if (!opname || !json_is_array(args) || !json_is_array(expect)) {
        snprintf(why, n, "case.json lacks op, args or outputs");
        goto done;
    }
    tj_clear_error();
    const tj_op *op = tj_op_find(opname);
    if (!op || !is_implemented(op)) {
        snprintf(why, n, "%s is not implemented", opname);
        result = TJ_CASE_SKIP;
        goto done;
    }
    d->op = op;
    if ((int)json_array_size(args) != op->nargs || (int)json_array_size(expect) != op->nreturns) {
        int n_args = (int)json_array_size(args), n_outs = (int)json_array_size(expect);
        snprintf(why, n, "%d %s / %d %s, schema has %d / %d", n_args, tj_noun(n_args, "arg", "args"), n_outs,
                 tj_noun(n_outs, "output", "outputs"), op->nargs, op->nreturns);
        goto done;
    }
    for (int i = 0; i < op->nargs; i++)
        if (!decode_arg(d, i, &op->args[i], json_array_get(args, (size_t)i), dir, why, n)) goto done;
    for (int i = 0; i < op->nreturns; i++) {
        json_t *e = json_array_get(expect, (size_t)i);
        if (json_is_null(e)) continue;
        const char *f = json_string_value(e);
        if (!f) {
            snprintf(why, n, "output %d is neither a file name nor null", i);
            goto done;
        }
        if (!(d->expected[i] = load_input(dir, f, why, n))) goto done;
    }
    result = TJ_CASE_PASS;
done:
    json_decref(root);
    return result;
}

tj_case_result tj_conform_run_case(const char *dir, char *why, size_t n)
{
    tj_case_result result = TJ_CASE_FAIL;
    decoded *d = malloc(sizeof *d);
    tj_value outs[TJ_MAX_RETURNS];
    tj_scope *scope = tj_scope_begin();
    if (!d) {
        snprintf(why, n, "out of memory");
        goto done;
    }
    if ((result = tj_conform_decode_case(dir, d, why, n)) != TJ_CASE_PASS) goto done;
    result = TJ_CASE_FAIL;
    const tj_op *op = d->op;
    if (tj_dispatch(op, d->args, op->nargs, outs) != TJ_OK) {
        snprintf(why, n, "error: %s", tj_last_error());
        goto done;
    }
    for (int i = 0; i < op->nreturns; i++) {
        if (!d->expected[i]) continue;
        if (outs[i].kind != TJ_V_TENSOR) {
            snprintf(why, n, "output %d: undefined, expected a tensor", i);
            goto done;
        }
        char sub[600];
        if (!tj_conform_compare(outs[i].u.t, d->expected[i], d->rtol, d->atol, sub, sizeof sub)) {
            snprintf(why, n, "output %d: %s", i, sub);
            goto done;
        }
    }
    result = TJ_CASE_PASS;
done:
    tj_scope_end(scope);
    tj_conform_case_free(d);
    free(d);
    return result;
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static bool is_case_dir(const char *path)
{
    char p[8192];
    struct stat st;
    snprintf(p, sizeof p, "%s/case.json", path);
    return stat(p, &st) == 0;
}

static void run_one(const char *dir, FILE *out, bool verbose, tj_conform_summary *s)
{
    char why[1024] = "";
    tj_case_result r = tj_conform_run_case(dir, why, sizeof why);
    const char *name = strrchr(dir, '/') ? strrchr(dir, '/') + 1 : dir;
    if (r == TJ_CASE_PASS) s->passed++;
    else if (r == TJ_CASE_SKIP) {
        s->skipped++;
        if (verbose && out) fprintf(out, "SKIP %s: %s\n", name, why);
    } else {
        s->failed++;
        if (out) fprintf(out, "FAIL %s: %s\n", name, why);
    }
}

/* Runs the case folders directly under `base`, sorted by name; returns how
 * many there were, or -1 when `base` cannot be read as a folder. */
static int run_folder(const char *base, FILE *out, bool verbose, tj_conform_summary *s)
{
    DIR *dir = opendir(base);
    if (!dir) return -1;
    char **names = NULL;
    size_t cnt = 0, cap = 0;
    struct dirent *e;
    while ((e = readdir(dir))) {
        if (e->d_name[0] == '.') continue;
        if (cnt == cap) {
            cap = cap ? cap * 2 : 256;
            char **nn = realloc(names, cap * sizeof *names);
            if (!nn) break;
            names = nn;
        }
        if (!(names[cnt] = strdup(e->d_name))) break;
        cnt++;
    }
    closedir(dir);
    if (cnt) qsort(names, cnt, sizeof *names, cmp_str);
    int found = 0;
    for (size_t i = 0; i < cnt; i++) {
        char sub[8192];
        snprintf(sub, sizeof sub, "%s/%s", base, names[i]);
        if (is_case_dir(sub)) {
            run_one(sub, out, verbose, s);
            found++;
        }
        free(names[i]);
    }
    free(names);
    return found;
}

tj_conform_summary tj_conform_run_paths(const char *const *paths, int n, FILE *out, bool verbose)
{
    tj_conform_summary s = {0, 0, 0};
    for (int p = 0; p < n; p++) {
        size_t plen = strlen(paths[p]);
        char base[4096], cases[4200];
        snprintf(base, sizeof base, "%.*s", (int)(plen > 1 && paths[p][plen - 1] == '/' ? plen - 1 : plen), paths[p]);
        if (is_case_dir(base)) {
            run_one(base, out, verbose, &s);
            continue;
        }
        int found = run_folder(base, out, verbose, &s), err = errno;
        /* the conformance folder itself keeps its cases in cases/ */
        snprintf(cases, sizeof cases, "%s/cases", base);
        if (found == 0 && run_folder(cases, out, verbose, &s) > 0) continue;
        if (found < 0 && out) fprintf(out, "FAIL %s: cannot read it (%s)\n", base, strerror(err));
        if (found == 0 && out)
            fprintf(out, "FAIL %s: no conformance case in it nor in its cases/ folder (a case folder holds a case.json)\n",
                    base);
        if (found <= 0) s.failed++;
    }
    if (out) {
        fprintf(out, "%d passed, %d failed", s.passed, s.failed);
        if (s.skipped) fprintf(out, ", %d skipped", s.skipped);
        fprintf(out, "\n");
    }
    return s;
}
