/* The decomposition verifier (see decomp_verify.h). */
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "conform.h"
#include "decomp_samples.h"
#include "decomp_verify.h"
#include "runtime/internal.h"
#include "runtime/op_masked.h"

#define SEED 0x5eed5eedull
#define MAX_INPUTS 64

/* ---- one call and its variants ---- */

typedef struct call {
    const tj_op *op;
    tj_value args[TJ_MAX_ARGS];
    tj_tensor *lists[TJ_MAX_ARGS][TJ_CONFORM_MAX_LIST];
    double rtol, atol;
} call;

typedef enum variant { V_CASE, V_RANDOM, V_TRANSPOSED, V_BROADCAST, V_EMPTY, V_COUNT } variant;
static const char *const variant_names[V_COUNT] = {"case", "random", "transposed", "broadcast", "empty"};

static uint64_t next_random(uint64_t *s)
{
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return *s >> 11;
}

/* A contiguous tensor of t's shape and dtype with values uniform in [-3, 3)
 * or, for `unit`, in [0, 1). */
static tj_tensor *random_like(const tj_tensor *t, bool unit, uint64_t *rng)
{
    tj_tensor *r = tj_tensor_empty(t->dtype, t->ndim, t->shape);
    if (!r) return NULL;
    char *p = tj_tensor_ptr(r);
    for (int64_t i = 0; i < r->numel; i++)
        tj_store_f64(p + i * (int64_t)tj_dtype_size(r->dtype), r->dtype,
                     (unit ? 0.0 : -3.0) + (unit ? 1.0 : 6.0) * (double)next_random(rng) / 9007199254740992.0);
    return r;
}

/* t with new values (floats, unless `v` is V_CASE; in [0, 1) for `unit`)
 * and the layout of `v`. */
static tj_tensor *vary(tj_tensor *t, variant v, bool unit, uint64_t *rng)
{
    tj_tensor *x = v != V_CASE && tj_dtype_is_float(t->dtype) ? random_like(t, unit, rng) : t;
    if (!x) return NULL;
    if (v == V_TRANSPOSED && x->ndim >= 2) return tj_transpose(tj_clone(tj_transpose(x, -1, -2)), -1, -2);
    if (v == V_BROADCAST && x->ndim >= 1 && x->shape[0] > 1)
        return tj_expand(tj_slice(x, 0, true, 0, true, 1, 1), x->shape, x->ndim);
    if (v == V_EMPTY && x->ndim >= 1) return tj_slice(x, 0, true, 0, true, 0, 1);
    return x;
}

/* The empty variant applies when every tensor argument of rank >= 1 has the
 * same non-zero leading size (a batch all of them share). */
static bool has_batch(const call *c)
{
    int64_t batch = -1;
    for (int i = 0; i < c->op->nargs; i++) {
        const tj_value *a = &c->args[i];
        int n = a->kind == TJ_V_TENSOR ? 1 : a->kind == TJ_V_TENSORS ? a->n : 0;
        for (int k = 0; k < n; k++) {
            const tj_tensor *t = a->kind == TJ_V_TENSOR ? a->u.t : a->u.ts[k];
            if (!t || t->ndim == 0) continue; /* !t: None in a Tensor?[] */
            if (t->shape[0] == 0 || (batch >= 0 && t->shape[0] != batch)) return false;
            batch = t->shape[0];
        }
    }
    return batch > 0;
}

/* *out = c with every tensor passed through f (NULL: copied as is). */
typedef tj_tensor *(*tensor_map)(tj_tensor *t, void *ctx);

static bool map_call(const call *c, call *out, tensor_map f, void *ctx)
{
    *out = *c;
    for (int i = 0; i < c->op->nargs; i++) {
        tj_value *a = &out->args[i];
        if (a->kind == TJ_V_TENSOR) {
            if (!(a->u.t = f(c->args[i].u.t, ctx))) return false;
        } else if (a->kind == TJ_V_TENSORS) {
            for (int k = 0; k < a->n; k++)
                if (c->args[i].u.ts[k] && !(out->lists[i][k] = f(c->args[i].u.ts[k], ctx))) return false;
            a->u.ts = out->lists[i];
        }
    }
    return true;
}

typedef struct vary_ctx {
    variant v;
    bool unit;
    uint64_t *rng;
} vary_ctx;

static tj_tensor *vary_map(tj_tensor *t, void *ctx)
{
    vary_ctx *c = ctx;
    return vary(t, c->v, c->unit, c->rng);
}

/* Operators whose kernel refuses float inputs outside [0, 1] while their
 * decomposition cannot check that (a data-dependent error, as in PyTorch):
 * their random variants draw from [0, 1). */
static bool unit_domain(const tj_op *op) { return strcmp(op->name, "aten::binary_cross_entropy") == 0; }

/* float32 tensors as float64 copies (the reference's inputs). */
static tj_tensor *to_f64_map(tj_tensor *t, void *ctx)
{
    (void)ctx;
    return t->dtype == TJ_FLOAT32 ? tj_to_copy(t, TJ_FLOAT64) : t;
}

/* In-place operators change their first argument: each run gets a copy. */
static tj_tensor *fresh_self(const call *c, tj_value *args)
{
    memcpy(args, c->args, sizeof c->args);
    if (!c->op->is_inplace || args[0].kind != TJ_V_TENSOR) return NULL;
    tj_tensor *self = c->args[0].u.t;
    tj_tensor *copy = tj_tensor_empty(self->dtype, self->ndim, self->shape);
    if (!copy) return NULL;
    tj_tensor_copy_to(self, tj_tensor_ptr(copy));
    args[0] = tj_v_tensor(copy);
    return copy;
}

/* ---- running the kernel and the decomposition ---- */

typedef struct result {
    tj_status st;
    char err[256];
    tj_value outs[TJ_MAX_RETURNS];
} result;

static void run_kernel(const call *c, result *r)
{
    tj_value args[TJ_MAX_ARGS];
    fresh_self(c, args);
    tj_manual_seed(SEED);
    r->st = tj_dispatch(c->op, args, c->op->nargs, r->outs);
    snprintf(r->err, sizeof r->err, "%s", r->st ? tj_last_error() : "");
}

typedef struct trace_ctx {
    const call *c;
    bool defined[TJ_MAX_RETURNS];
    tj_tensor *kept[TJ_MAX_RETURNS]; /* fake mode: the fake results */
} trace_ctx;

static int call_inputs(const tj_value *args, int nargs, tj_tensor **inputs)
{
    int n = 0;
    for (int i = 0; i < nargs; i++) {
        if (args[i].kind == TJ_V_TENSOR && n < MAX_INPUTS) inputs[n++] = args[i].u.t;
        for (int k = 0; args[i].kind == TJ_V_TENSORS && k < args[i].n && n < MAX_INPUTS; k++)
            if (args[i].u.ts[k]) inputs[n++] = args[i].u.ts[k];
    }
    return n;
}

/* The traced function: the operator applied to the (traced) inputs. */
static tj_status traced_call(void *ctx, tj_tensor *const *inputs, int n_inputs, tj_tensor **outputs, int *n_outputs)
{
    trace_ctx *t = ctx;
    const tj_op *op = t->c->op;
    tj_value args[TJ_MAX_ARGS], outs[TJ_MAX_RETURNS];
    tj_tensor *lists[TJ_MAX_ARGS][TJ_CONFORM_MAX_LIST];
    int k = 0;
    (void)n_inputs;
    for (int i = 0; i < op->nargs; i++) {
        args[i] = t->c->args[i];
        if (args[i].kind == TJ_V_TENSOR) args[i].u.t = inputs[k++];
        if (args[i].kind == TJ_V_TENSORS) {
            for (int j = 0; j < args[i].n; j++) lists[i][j] = t->c->args[i].u.ts[j] ? inputs[k++] : NULL;
            args[i].u.ts = lists[i];
        }
    }
    tj_status st = tj_dispatch(op, args, op->nargs, outs);
    if (st != TJ_OK) return st;
    int n = 0;
    for (int i = 0; i < op->nreturns; i++) {
        t->defined[i] = outs[i].kind == TJ_V_TENSOR;
        if (!t->defined[i]) continue;
        outputs[n++] = outs[i].u.t;
        t->kept[i] = tj_tensor_retain(outs[i].u.t);
    }
    *n_outputs = n;
    return TJ_OK;
}

/* The first call of g that is not a primitive, or NULL. */
static const tj_op *non_primitive(const tj_graph *g)
{
    for (int i = 0; i < tj_graph_num_nodes(g); i++) {
        const tj_op *op = tj_graph_node_op(g, i);
        if (op && tj_op_kind_of(op) != TJ_OP_PRIMITIVE) return op;
    }
    return NULL;
}

/* make_fx of the single call under `table`, then (real mode) the graph run
 * on the same inputs. `graph_why` receives a complaint about the graph. */
static void run_decomp(const call *c, const tj_decomp_table *table, tj_tracing_mode mode, result *r, char *graph_why,
                       size_t n)
{
    tj_value args[TJ_MAX_ARGS];
    tj_tensor *inputs[MAX_INPUTS];
    fresh_self(c, args);
    call fresh = *c;
    memcpy(fresh.args, args, sizeof args);
    int n_in = call_inputs(args, c->op->nargs, inputs);
    trace_ctx t;
    memset(&t, 0, sizeof t);
    t.c = &fresh;
    tj_manual_seed(SEED);
    tj_graph *g = tj_make_fx(traced_call, &t, inputs, n_in, table, mode);
    for (int i = 0; i < TJ_MAX_RETURNS; i++) r->outs[i] = tj_v_none();
    if (!g) {
        r->st = tj_last_status();
        snprintf(r->err, sizeof r->err, "%s", tj_last_error());
    } else {
        const tj_op *bad = non_primitive(g);
        if (bad) snprintf(graph_why, n, "its graph keeps %s (%s)", tj_op_name(bad), tj_op_kind_name(tj_op_kind_of(bad)));
        r->st = TJ_OK;
        if (mode == TJ_TRACE_REAL) {
            tj_tensor *gout[TJ_MAX_RETURNS];
            if (c->op->is_inplace) fresh_self(c, args), n_in = call_inputs(args, c->op->nargs, inputs);
            tj_manual_seed(SEED);
            r->st = tj_graph_run(g, inputs, n_in, gout);
            snprintf(r->err, sizeof r->err, "%s", r->st ? tj_last_error() : "");
            for (int i = 0, k = 0; r->st == TJ_OK && i < c->op->nreturns; i++)
                if (t.defined[i]) r->outs[i] = tj_v_tensor(gout[k++]);
        }
        tj_graph_free(g);
    }
    for (int i = 0; i < TJ_MAX_RETURNS; i++) {
        if (mode == TJ_TRACE_FAKE && t.kept[i]) r->outs[i] = tj_v_tensor(t.kept[i]), tj_scope_adopt(t.kept[i]);
        else tj_tensor_release(t.kept[i]);
    }
}

/* The float64 reference: the kernel on float64 copies (made by f), float32
 * dtype arguments read as float64 (retried as given when the kernel
 * refuses). */
static void run_reference(const call *c, tensor_map f, result *r)
{
    call ref;
    r->st = TJ_ERR_INVALID_ARGUMENT;
    if (!map_call(c, &ref, f, NULL)) return;
    call widened = ref;
    for (int i = 0; i < c->op->nargs; i++)
        if (widened.args[i].kind == TJ_V_DTYPE && widened.args[i].u.dtype == TJ_FLOAT32) widened.args[i].u.dtype = TJ_FLOAT64;
    run_kernel(&widened, r);
    if (r->st != TJ_OK) run_kernel(&ref, r);
}

/* ---- reordered sums of products ---- */

/* Operators whose decomposition computes each output element as a sum of
 * products (plus a bias) in another order than the kernel: the im2col /
 * col2im decomposition runs one bmm over the whole batch and sums the taps
 * with scatter_add, the kernel runs its own GEMM tiling. Both sum in the
 * input dtype and neither is correctly rounded, so which one lands nearer
 * the float64 reference varies by element. They get the reordering bound
 * of decomp_verify.h, which stays below one term's size while n^2 u < 1
 * (n < 4096 terms in float32): a dropped, doubled or misplaced term is
 * still caught. */
static const char *const reordered_ops[] = {"aten::convolution", "aten::convolution_backward"};

static bool reorders(const tj_op *op)
{
    for (size_t i = 0; i < sizeof reordered_ops / sizeof *reordered_ops; i++)
        if (tj_op_find(reordered_ops[i]) == op) return true;
    return false;
}

/* Float tensors as float64 |t|: the kernel then gives sum |a*b|. */
static tj_tensor *abs_f64_map(tj_tensor *t, void *ctx)
{
    (void)ctx;
    return tj_dtype_is_float(t->dtype) ? tj_abs(tj_to_copy(t, TJ_FLOAT64)) : t;
}

/* Float tensors as float64 ones: the kernel then counts the terms. */
static tj_tensor *ones_f64_map(tj_tensor *t, void *ctx)
{
    (void)ctx;
    return tj_dtype_is_float(t->dtype) ? tj_ones(t->shape, t->ndim, TJ_FLOAT64) : t;
}

/* The reordering bound of one output: gamma_n * sum |a*b| per element. */
typedef struct reorder_bound {
    const tj_tensor *sum_abs, *terms; /* float64, of the output's shape */
    double u;                         /* unit roundoff of the output dtype */
} reorder_bound;

static double bound_at(const reorder_bound *b, int64_t i)
{
    double nu = tj_tensor_item_at(b->terms, i) * b->u;
    return nu < 1 ? nu / (1 - nu) * tj_tensor_item_at(b->sum_abs, i) : INFINITY;
}

/* ---- comparing ---- */

/* Worst |x - ref| (infinite where nan or an infinity is not matched), |ref|
 * there (*at), and whether every element is within atol + rtol * |ref|;
 * with a bound b, each finite error first reduced by b's (not below 0). */
static double float_error(const tj_tensor *x, const tj_tensor *ref, const reorder_bound *b, double rtol, double atol,
                          bool *within, double *at)
{
    double worst = 0;
    *within = true;
    *at = 0;
    for (int64_t i = 0; i < ref->numel; i++) {
        double e = tj_tensor_item_at(ref, i), g = tj_tensor_item_at(x, i), err;
        if (isnan(e)) err = isnan(g) ? 0 : INFINITY;
        else if (isinf(e)) err = g == e ? 0 : INFINITY;
        else err = isfinite(g) ? fabs(g - e) : INFINITY;
        double allowed = b && isfinite(err) ? bound_at(b, i) : 0;
        if (allowed > 0) err = err > allowed ? err - allowed : 0;
        if (err > atol + rtol * (isfinite(e) ? fabs(e) : 0)) *within = false;
        if (err > worst) worst = err, *at = isfinite(e) ? fabs(e) : 0;
    }
    return worst;
}

static bool same_geometry(const tj_tensor *a, const tj_tensor *b)
{
    if (a->dtype != b->dtype || a->ndim != b->ndim) return false;
    for (int d = 0; d < a->ndim; d++)
        if (a->shape[d] != b->shape[d]) return false;
    return true;
}

static bool equal_values(const tj_tensor *a, const tj_tensor *b)
{
    for (int64_t i = 0; i < a->numel; i++) {
        double x = tj_tensor_item_at(a, i), y = tj_tensor_item_at(b, i);
        if (x != y && !(isnan(x) && isnan(y))) return false;
    }
    return true;
}

static void violation(tj_verify_row *row, FILE *log, const char *sample, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static void violation(tj_verify_row *row, FILE *log, const char *sample, const char *fmt, ...)
{
    char msg[sizeof row->first_violation];
    char reason[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(reason, sizeof reason, fmt, ap);
    va_end(ap);
    snprintf(msg, sizeof msg, "%s: %s", sample, reason);
    if (!row->violations++) snprintf(row->first_violation, sizeof row->first_violation, "%s", msg);
    if (log) fprintf(log, "VIOLATION %s %s\n", tj_op_name(row->op), msg);
}

/* Whether a decomposition error de (|ref| d_at) fails against the kernel's
 * (ke, within the case's tolerance when k_within). */
static bool too_far(double ke, bool k_within, double de, bool d_within, double d_at)
{
    double slack = TJ_VERIFY_SLACK + TJ_VERIFY_REL_SLACK * d_at;
    return (de > ke + slack && !(isinf(ke) && isinf(de))) || (k_within && !d_within);
}

/* Compares output i of kernel (k), decomposition (d) and reference (ref;
 * sum_abs and terms: the float64 kernel on absolute and on all-one inputs
 * for an operator that reorders, else NULL). Returns whether the output
 * passed only thanks to the reordering bound. */
static bool compare_output(tj_verify_row *row, FILE *log, const char *sample, const call *c, int i, const result *k,
                           const result *d, const result *ref, const result *sum_abs, const result *terms)
{
    const tj_value *kv = &k->outs[i], *dv = &d->outs[i];
    char buf[200], name[300];
    snprintf(name, sizeof name, "%s output %d", sample, i);
    if ((kv->kind == TJ_V_TENSOR) != (dv->kind == TJ_V_TENSOR)) {
        violation(row, log, name, "%s by the kernel only", kv->kind == TJ_V_TENSOR ? "defined" : "undefined");
        return false;
    }
    if (kv->kind != TJ_V_TENSOR) return false;
    const tj_tensor *kt = kv->u.t, *dt = dv->u.t;
    if (!same_geometry(kt, dt)) {
        char a[96], b[96];
        tj_tensor_describe(dt, a, sizeof a);
        tj_tensor_describe(kt, b, sizeof b);
        snprintf(buf, sizeof buf, "%s, kernel %s", a, b);
        violation(row, log, name, "decomposition gives %s", buf);
        return false;
    }
    if (!tj_dtype_is_float(kt->dtype)) {
        if (!equal_values(kt, dt)) violation(row, log, name, "values differ from the kernel's");
        return false;
    }
    if (ref->st != TJ_OK || ref->outs[i].kind != TJ_V_TENSOR) {
        violation(row, log, name, "no float64 reference: %s", ref->err);
        return false;
    }
    tj_tensor *r = ref->outs[i].u.t;
    if (r->dtype != kt->dtype) r = tj_to_copy(r, kt->dtype);
    if (!r || !same_geometry(r, kt)) {
        violation(row, log, name, "the reference has another shape");
        return false;
    }
    bool k_within, d_within;
    double k_at, d_at;
    double ke = float_error(kt, r, NULL, c->rtol, c->atol, &k_within, &k_at);
    double de = float_error(dt, r, NULL, c->rtol, c->atol, &d_within, &d_at);
    if (ke > row->kernel_err) row->kernel_err = ke;
    if (de > row->decomp_err) row->decomp_err = de;
    if (!too_far(ke, k_within, de, d_within, d_at)) return false;
    const char *beyond = "";
    if (sum_abs && sum_abs->st == TJ_OK && terms->st == TJ_OK && sum_abs->outs[i].kind == TJ_V_TENSOR &&
        terms->outs[i].kind == TJ_V_TENSOR) {
        reorder_bound b = {sum_abs->outs[i].u.t, terms->outs[i].u.t, kt->dtype == TJ_FLOAT32 ? 0x1p-24 : 0x1p-53};
        de = float_error(dt, r, &b, c->rtol, c->atol, &d_within, &d_at);
        if (!too_far(ke, k_within, de, d_within, d_at)) return true;
        beyond = " beyond the reordering bound";
    }
    double slack = TJ_VERIFY_SLACK + TJ_VERIFY_REL_SLACK * d_at;
    if (de > ke + slack && !(isinf(ke) && isinf(de)))
        violation(row, log, name, "error%s %.3g exceeds the kernel's %.3g + %.3g", beyond, de, ke, slack);
    else
        violation(row, log, name, "error%s %.3g is outside the tolerance (kernel %.3g)", beyond, de, ke);
    return false;
}

static void check_sample(tj_verify_row *row, const tj_decomp_table *core, const call *c, const char *sample,
                         bool fake_check, FILE *log)
{
    tj_scope *scope = tj_scope_begin();
    result k, d, ref;
    char graph_why[160] = "";
    row->samples++;
    run_kernel(c, &k);
    run_decomp(c, core, TJ_TRACE_REAL, &d, graph_why, sizeof graph_why);
    if (graph_why[0]) violation(row, log, sample, "%s", graph_why);
    if (k.st != TJ_OK || d.st != TJ_OK) {
        if (k.st != d.st) {
            char msg[600];
            snprintf(msg, sizeof msg, "kernel: %s; decomposition: %s", k.st ? k.err : "ok", d.st ? d.err : "ok");
            violation(row, log, sample, "different outcomes (%s)", msg);
        }
        tj_scope_end(scope);
        return;
    }
    run_reference(c, to_f64_map, &ref);
    result sum_abs, terms;
    bool bounded = reorders(c->op);
    if (bounded) run_reference(c, abs_f64_map, &sum_abs), run_reference(c, ones_f64_map, &terms);
    bool needed = false;
    for (int i = 0; i < c->op->nreturns; i++)
        needed |= compare_output(row, log, sample, c, i, &k, &d, &ref, bounded ? &sum_abs : NULL,
                                 bounded ? &terms : NULL);
    row->reordered += needed;
    if (fake_check) {
        result f;
        char fake_why[160] = "";
        run_decomp(c, core, TJ_TRACE_FAKE, &f, fake_why, sizeof fake_why);
        /* a call whose shapes depend on the inputs' values (nonzero, x[mask],
         * x[mask] = one value per true element) is refused in fake mode by
         * specification (runtime/op_masked.h) */
        bool refused = f.st == TJ_ERR_UNSUPPORTED && tj_op_shape_reads_values(c->op);
        if (f.st != TJ_OK && !refused) violation(row, log, sample, "fake-mode trace fails: %s", f.err);
        for (int i = 0; f.st == TJ_OK && i < c->op->nreturns; i++) {
            bool kd = k.outs[i].kind == TJ_V_TENSOR, fd = f.outs[i].kind == TJ_V_TENSOR;
            if (kd != fd || (kd && !same_geometry(k.outs[i].u.t, f.outs[i].u.t)))
                violation(row, log, sample, "fake-mode output %d differs in dtype or shape", i);
        }
    }
    tj_scope_end(scope);
}

/* The call and every variant of it that applies. */
static void check_call(tj_verify_row *row, const tj_decomp_table *core, const call *c, const char *name, uint64_t *rng,
                       FILE *log)
{
    for (int v = 0; v < V_COUNT; v++) {
        if (v == V_EMPTY && !has_batch(c)) continue;
        tj_scope *scope = tj_scope_begin();
        call varied;
        vary_ctx vc = {(variant)v, unit_domain(c->op), rng};
        char sample[256];
        snprintf(sample, sizeof sample, "%s/%s", name, variant_names[v]);
        if (map_call(c, &varied, vary_map, &vc)) check_sample(row, core, &varied, sample, v == V_CASE, log);
        else violation(row, log, sample, "cannot build the variant: %s", tj_last_error());
        tj_scope_end(scope);
    }
}

/* ---- cases ---- */

/* A conformance case folder: its path, and its name (the path's last
 * component, "add.Tensor__bcast"), which says which operator it serves. */
typedef struct case_folder {
    char *path;
    const char *name;
} case_folder;

static int cmp_case(const void *a, const void *b)
{
    const case_folder *x = a, *y = b;
    int c = strcmp(x->name, y->name);
    return c ? c : strcmp(x->path, y->path);
}

static void free_cases(case_folder *cases, int n)
{
    for (int i = 0; i < n; i++) free(cases[i].path);
    free(cases);
}

static tj_status unreadable(const char *dir)
{
    return tj_error(TJ_ERR_IO, "cannot read the conformance cases under '%s': %s", dir, strerror(errno));
}

/* Appends the case folders under dir to cases[*n] (room for *cap, grown). */
static tj_status add_cases(const char *dir, case_folder **cases, int *n, int *cap)
{
    DIR *d = opendir(dir);
    if (!d) return unreadable(dir);
    bool oom = false;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.' || !strstr(e->d_name, "__")) continue;
        if (*n == *cap) {
            int grown = *cap ? *cap * 2 : 512;
            case_folder *more = realloc(*cases, sizeof **cases * (size_t)grown);
            if ((oom = !more)) break;
            *cases = more;
            *cap = grown;
        }
        size_t len = strlen(dir) + 1 + strlen(e->d_name) + 1;
        char *path = malloc(len);
        if ((oom = !path)) break;
        snprintf(path, len, "%s/%s", dir, e->d_name);
        (*cases)[(*n)++] = (case_folder){path, path + strlen(dir) + 1};
    }
    closedir(d);
    return oom ? tj_error(TJ_ERR_OUT_OF_MEMORY, "listing the conformance cases under '%s': out of memory", dir) : TJ_OK;
}

/* The case folders under each of dirs into *cases (n of them, freed with
 * free_cases), sorted by name; a folder named twice, by whatever path, is
 * read once. An error naming the folder when one cannot be read. */
static tj_status list_cases(const char *const *dirs, int n_dirs, case_folder **cases, int *n)
{
    *cases = NULL;
    *n = 0;
    int cap = 0;
    char **seen = calloc((size_t)n_dirs + 1, sizeof *seen);
    tj_status st = seen ? TJ_OK : tj_error(TJ_ERR_OUT_OF_MEMORY, "listing the conformance cases: out of memory");
    for (int i = 0; st == TJ_OK && i < n_dirs; i++) {
        if (!(seen[i] = realpath(dirs[i], NULL))) {
            st = unreadable(dirs[i]);
            break;
        }
        bool again = false;
        for (int k = 0; k < i && !again; k++) again = strcmp(seen[k], seen[i]) == 0;
        if (!again) st = add_cases(dirs[i], cases, n, &cap);
    }
    for (int i = 0; seen && i < n_dirs; i++) free(seen[i]);
    free(seen);
    if (st != TJ_OK) free_cases(*cases, *n);
    else if (*n) qsort(*cases, (size_t)*n, sizeof **cases, cmp_case);
    return st;
}

/* "add.Tensor" of a case folder name "add.Tensor__bcast". */
static bool case_is_of(const char *folder, const char *op_name)
{
    const char *n = strncmp(op_name, "aten::", 6) == 0 ? op_name + 6 : op_name;
    size_t len = strlen(n);
    return strncmp(folder, n, len) == 0 && strncmp(folder + len, "__", 2) == 0;
}

/* The operator whose cases serve `op`: itself, or for an in-place operator
 * (add_.Tensor) its out-of-place form (add.Tensor). */
static bool serves(const tj_op *op, const char *folder)
{
    if (case_is_of(folder, tj_op_name(op))) return true;
    if (!op->is_inplace) return false;
    const tj_op *paired = tj_op_inplace_functional(op);
    if (paired) return case_is_of(folder, tj_op_name(paired));
    char name[96];
    snprintf(name, sizeof name, "%.*s%s%s", (int)strlen(op->base) - 1, op->base, op->overload[0] ? "." : "",
             op->overload);
    return case_is_of(folder, name);
}

/* Runs a decoded case (or sample) and its variants. */
static void check_case(tj_verify_row *row, const tj_decomp_table *core, const tj_conform_case *cs, const char *name,
                       uint64_t *rng, FILE *log)
{
    call c;
    memset(&c, 0, sizeof c);
    c.op = row->op;
    memcpy(c.args, cs->args, sizeof c.args);
    for (int a = 0; a < c.op->nargs; a++)
        if (c.args[a].kind == TJ_V_TENSORS) {
            memcpy(c.lists[a], cs->lists[a], sizeof(tj_tensor *) * (size_t)c.args[a].n);
            c.args[a].u.ts = c.lists[a];
        }
    c.rtol = cs->rtol;
    c.atol = cs->atol;
    check_call(row, core, &c, name, rng, log);
}

static void verify_op(tj_verify_row *row, const tj_decomp_table *core, const case_folder *cases, int n_cases,
                      FILE *log)
{
    const tj_op *op = row->op;
    /* seeded from the name, not the table position: adding an operator to
     * the table must not change the random inputs of the others */
    uint64_t rng = 0x9e3779b97f4a7c15ull;
    for (const char *s = op->name; *s; s++) rng = (rng ^ (unsigned char)*s) * 0x100000001b3ull;
    tj_conform_case *cs = malloc(sizeof *cs);
    if (!cs) return;
    for (int i = 0; i < n_cases; i++) {
        if (!serves(op, cases[i].name)) continue;
        char why[512];
        tj_scope *scope = tj_scope_begin();
        tj_case_result r = tj_conform_decode_case(cases[i].path, cs, why, sizeof why);
        if (r == TJ_CASE_PASS) {
            row->cases++;
            check_case(row, core, cs, cases[i].name, &rng, log);
        } else if (r == TJ_CASE_FAIL) { /* a malformed case verifies nothing: said, as tjit conform says it */
            violation(row, log, cases[i].path, "cannot decode: %s", why);
        }
        tj_conform_case_free(cs);
        tj_scope_end(scope);
    }
    for (int s = 0; s < tj_decomp_sample_count(); s++) {
        const tj_decomp_sample *sm = tj_decomp_sample_at(s);
        const tj_op *sop = tj_op_find(sm->op);
        /* an in-place form is verified on its out-of-place partner's samples too */
        if (sop != op && (!sop || sop != tj_op_inplace_functional(op))) continue;
        tj_scope *scope = tj_scope_begin();
        char why[256], name[64];
        snprintf(name, sizeof name, "sample %d", s);
        if (tj_decomp_sample_decode(sm, cs, &rng, why, sizeof why) == TJ_OK) check_case(row, core, cs, name, &rng, log);
        else violation(row, log, name, "cannot decode: %s", why);
        tj_conform_case_free(cs);
        tj_scope_end(scope);
    }
    tj_clear_error();
    free(cs);
}

int tj_decomp_verify(const char *const *case_dirs, int n_dirs, const tj_op *const *ops, int n, tj_verify_row *rows,
                     int max_rows, FILE *log)
{
    int n_cases;
    case_folder *cases;
    if (list_cases(case_dirs, n_dirs, &cases, &n_cases) != TJ_OK) return -1;
    tj_decomp_table *core = tj_core_decompositions();
    int count = 0;
    int total = ops ? n : tj_op_count();
    for (int i = 0; core && i < total && count < max_rows; i++) {
        const tj_op *op = ops ? ops[i] : tj_op_at(i);
        if (!ops && (op->kind != TJ_OP_COMPOSITE || !op->decomp || !op->kernel)) continue;
        tj_verify_row *row = &rows[count++];
        memset(row, 0, sizeof *row);
        row->op = op;
        verify_op(row, core, cases, n_cases, log);
        if (row->samples == 0 && !row->violations++) /* an earlier violation stays the first */
            snprintf(row->first_violation, sizeof row->first_violation, "no conformance case and no sample");
    }
    tj_decomp_table_free(core);
    free_cases(cases, n_cases);
    return count;
}

void tj_verify_report(const tj_verify_row *rows, int n, FILE *f)
{
    int failed = 0;
    fprintf(f, "%-40s %5s %7s %11s %11s  %s\n", "operator", "cases", "samples", "kernel err", "decomp err", "verdict");
    for (int i = 0; i < n; i++) {
        const tj_verify_row *r = &rows[i];
        failed += r->violations > 0;
        fprintf(f, "%-40s %5d %7d %11.3g %11.3g  %s", tj_op_name(r->op), r->cases, r->samples, r->kernel_err,
                r->decomp_err, r->violations ? "FAIL" : "ok");
        if (!r->violations && r->reordered) fprintf(f, " (%d within the reordering bound)", r->reordered);
        fputc('\n', f);
        if (r->violations)
            fprintf(f, "    %d %s; first: %s\n", r->violations, tj_noun(r->violations, "violation", "violations"),
                    r->first_violation);
    }
    fprintf(f, "%d passed, %d failed\n", n - failed, failed);
}
