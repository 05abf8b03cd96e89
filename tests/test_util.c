#include "test_util.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/cpu_isa.h"
#include "runtime/internal.h"

static tj_scope *scope;
static int saved_threads;

void test_scope_open(void)
{
    scope = tj_scope_begin();
    saved_threads = tj_get_num_threads();
}

void test_scope_close(void)
{
    tj_scope_end(scope);
    /* zero when a test's own .init replaced test_scope_open */
    if (saved_threads) tj_set_num_threads(saved_threads);
}

void test_scope_close_isa(void)
{
    test_scope_close();
    tj_k_isa_force(NULL);
}

const char *const test_isas[TEST_NISA] = {"generic", "avx2", "avx512"};

uint64_t test_env_count(const char *name, uint64_t fallback)
{
    const char *e = getenv(name);
    long long v = e ? atoll(e) : 0;
    return v > 0 ? (uint64_t)v : fallback;
}

bool test_cpu_has_avx512(void) { return tj_k_isa_cpu() >= TJ_K_ISA_AVX512; }

bool test_cpu_has_avx2(void) { return tj_k_isa_cpu() >= TJ_K_ISA_AVX2; }

float test_f32_bits(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

double test_f64_bits(uint64_t u)
{
    double d;
    memcpy(&d, &u, sizeof d);
    return d;
}

uint32_t test_bits_f32(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

uint64_t test_bits_f64(double d)
{
    uint64_t u;
    memcpy(&u, &d, sizeof u);
    return u;
}

tj_tensor *test_tensor(tj_dtype dt, int ndim, const int64_t *shape, const void *data)
{
    tj_tensor *t = tj_tensor_from_data(dt, ndim, shape, data);
    cr_assert_not_null(t, "%s", tj_last_error());
    return t;
}

tj_tensor *test_f32(int ndim, const int64_t *shape, const float *data)
{
    return test_tensor(TJ_FLOAT32, ndim, shape, data);
}

tj_tensor *test_random_f32(int ndim, const int64_t *shape, unsigned seed)
{
    tj_tensor *t = tj_tensor_empty(TJ_FLOAT32, ndim, shape);
    cr_assert_not_null(t, "%s", tj_last_error());
    float *p = tj_tensor_data(t);
    srand(seed);
    for (int64_t i = 0; i < tj_tensor_numel(t); i++) p[i] = 2.0f * (float)rand() / (float)RAND_MAX - 1.0f;
    return t;
}

tj_tensor *test_f64(int ndim, const int64_t *shape, const double *data)
{
    return test_tensor(TJ_FLOAT64, ndim, shape, data);
}

tj_tensor *test_i64(int ndim, const int64_t *shape, const int64_t *data)
{
    return test_tensor(TJ_INT64, ndim, shape, data);
}

int64_t test_assert_dtype_shape(const tj_tensor *t, tj_dtype dtype, int ndim, const int64_t *shape)
{
    cr_assert_not_null(t, "%s", tj_last_error());
    cr_assert_eq(tj_tensor_dtype(t), dtype, "dtype %s, want %s", tj_dtype_name(tj_tensor_dtype(t)),
                 tj_dtype_name(dtype));
    cr_assert_eq(tj_tensor_ndim(t), ndim, "rank %d, want %d", tj_tensor_ndim(t), ndim);
    int64_t n = 1;
    for (int d = 0; d < ndim; d++) {
        cr_assert_eq(tj_tensor_shape(t)[d], shape[d], "dim %d: %lld, want %lld", d, (long long)tj_tensor_shape(t)[d],
                     (long long)shape[d]);
        n *= shape[d];
    }
    return n;
}

void test_expect_f32(const tj_tensor *t, const float *want, int64_t n, double rtol)
{
    cr_assert_not_null(t, "%s", tj_last_error());
    cr_assert_eq(tj_tensor_dtype(t), TJ_FLOAT32, "dtype %s", tj_dtype_name(tj_tensor_dtype(t)));
    cr_assert_eq(tj_tensor_numel(t), n);
    for (int64_t i = 0; i < n; i++) {
        double got = tj_tensor_item_at(t, i);
        bool ok = (isnan(got) && isnan(want[i])) || (rtol == 0 ? test_bits_f32((float)got) == test_bits_f32(want[i])
                                                               : test_close(got, want[i], rtol, 1e-7));
        cr_expect(ok, "[%lld] = %.9g, want %.9g", (long long)i, got, want[i]);
    }
}

void test_expect_error(const void *result, tj_status status, const char *op, const char *needle)
{
    cr_assert_null(result);
    cr_assert_eq(tj_last_status(), status, "status %s: %s", tj_status_name(tj_last_status()), tj_last_error());
    cr_assert(strstr(tj_last_error(), op), "message '%s' does not name %s", tj_last_error(), op);
    cr_assert(strstr(tj_last_error(), needle), "message '%s' lacks '%s'", tj_last_error(), needle);
}

bool test_close(double got, double want, double rtol, double atol)
{
    if (isnan(want)) return isnan(got);
    /* an infinity matches only itself: rtol * inf would accept anything */
    if (isinf(want) || isinf(got)) return got == want;
    return got == want || fabs(got - want) <= rtol * fabs(want) + atol;
}

void test_expect_close(const tj_tensor *t, const double *want, int64_t n, double rtol, double atol)
{
    cr_assert_not_null(t, "%s", tj_last_error());
    cr_assert_eq(tj_tensor_numel(t), n, "numel %lld, want %lld", (long long)tj_tensor_numel(t), (long long)n);
    for (int64_t i = 0; i < n; i++) {
        double got = tj_tensor_item_at(t, i);
        cr_expect(test_close(got, want[i], rtol, atol), "element %lld: got %.10g, want %.10g", (long long)i, got,
                  want[i]);
    }
}

void test_replay(const tj_graph *g, tj_tensor *const *in, int n, tj_tensor **out, int nout)
{
    tj_plan *p = tj_compile(g, NULL);
    cr_assert_not_null(p, "%s", tj_last_error());
    cr_assert_eq(tj_plan_num_outputs(p), nout);
    cr_assert_eq(tj_plan_run(p, in, n, out), TJ_OK, "%s", tj_last_error());
    tj_plan_free(p);
}

tj_tensor *test_replay1(const tj_graph *g, tj_tensor *const *in, int n)
{
    tj_tensor *out[1];
    test_replay(g, in, n, out, 1);
    return out[0];
}

void test_expect_op_count(const tj_graph *g, const char *const *names, int n, int count)
{
    for (int k = 0; k < n; k++) {
        const tj_op *op = tj_op_find(names[k]);
        cr_assert_not_null(op, "%s", names[k]);
        cr_expect_eq(tj_graph_count_op(g, op), count, "%s", names[k]);
    }
}

void test_run_eager(tj_trace_fn fn, tj_tensor *const *in, int n, tj_tensor **out, int nout)
{
    int n_out = 0;
    cr_assert_eq(fn(NULL, in, n, out, &n_out), TJ_OK, "%s", tj_last_error());
    cr_assert_eq(n_out, nout);
}

tj_tensor *test_grad1(tj_tensor *x, tj_tensor *y, tj_tensor *gy)
{
    cr_assert_not_null(y, "%s", tj_last_error());
    tj_tensor *g = NULL;
    cr_assert_eq(tj_autograd_grad(&y, 1, &gy, &x, 1, &g), TJ_OK, "%s", tj_last_error());
    cr_assert_not_null(g);
    return g;
}

bool test_only_primitives(const tj_graph *g)
{
    for (int i = 0; i < tj_graph_num_nodes(g); i++) {
        const tj_op *op = tj_graph_node_op(g, i);
        if (op && tj_op_kind_of(op) != TJ_OP_PRIMITIVE) return false;
    }
    return true;
}

void test_expect_same(const tj_tensor *a, const tj_tensor *b, const char *what)
{
    cr_assert_not_null(a, "%s: %s", what, tj_last_error());
    cr_assert_not_null(b, "%s", what);
    cr_assert_eq(tj_tensor_dtype(a), tj_tensor_dtype(b), "%s: dtype", what);
    cr_assert_eq(tj_tensor_ndim(a), tj_tensor_ndim(b), "%s: rank", what);
    for (int d = 0; d < tj_tensor_ndim(a); d++)
        cr_assert_eq(tj_tensor_shape(a)[d], tj_tensor_shape(b)[d], "%s: size of dim %d", what, d);
    for (int64_t i = 0; i < tj_tensor_numel(a); i++) {
        double x = tj_tensor_item_at(a, i), y = tj_tensor_item_at(b, i);
        cr_expect(x == y || (isnan(x) && isnan(y)), "%s: element %lld: %.17g vs %.17g", what, (long long)i, x, y);
    }
}

bool test_run_core(tj_trace_fn fn, void *ctx, tj_tensor *const *in, int n, tj_tensor **out)
{
    tj_decomp_table *core = tj_core_decompositions();
    tj_graph *g = tj_make_fx(fn, ctx, in, n, core, TJ_TRACE_FAKE);
    tj_decomp_table_free(core);
    cr_assert_not_null(g, "%s", tj_last_error());
    bool primitives = test_only_primitives(g);
    cr_assert_eq(tj_graph_run(g, in, n, out), TJ_OK, "%s", tj_last_error());
    tj_graph_free(g);
    return primitives;
}

tj_tensor *test_f64_grad(const double *v, int ndim, const int64_t *shape, bool requires_grad)
{
    tj_tensor *t = test_f64(ndim, shape, v);
    if (requires_grad) cr_assert_eq(tj_tensor_set_requires_grad(t, true), TJ_OK, "%s", tj_last_error());
    return t;
}

void test_expect_traced(tj_trace_fn step, tj_tensor *const *in, int n, int nout, const char *const *want, int nwant,
                        const char *absent, double rtol)
{
    tj_tensor *eager[4], *got[4];
    int n_out;
    cr_assert(nout <= 4);
    cr_assert_eq(step(NULL, in, n, eager, &n_out), TJ_OK, "%s", tj_last_error());
    cr_assert_eq(n_out, nout);
    tj_graph *g = tj_make_fx(step, NULL, in, n, NULL, TJ_TRACE_FAKE);
    cr_assert_not_null(g, "%s", tj_last_error());
    char *text = tj_graph_to_string(g);
    for (int k = 0; k < nwant; k++) cr_expect(strstr(text, want[k]), "%s lacks %s", text, want[k]);
    if (absent) cr_expect(!strstr(text, absent), "%s holds %s", text, absent);
    free(text);
    tj_plan *p = tj_compile(g, NULL);
    cr_assert_not_null(p, "%s", tj_last_error());
    cr_assert_eq(tj_plan_run(p, in, n, got), TJ_OK, "%s", tj_last_error());
    for (int k = 0; k < nout; k++) test_expect_same(got[k], eager[k], "replayed");
    tj_plan_free(p);
    tj_graph_free(g);
    cr_expect(test_run_core(step, NULL, in, n, got));
    for (int k = 0; k < nout; k++) {
        if (rtol == 0) {
            test_expect_same(got[k], eager[k], "decomposed");
            continue;
        }
        double w[256];
        int64_t numel = tj_tensor_numel(eager[k]);
        cr_assert(numel <= 256);
        cr_assert_eq(tj_tensor_copy_to(tj_to_copy(eager[k], TJ_FLOAT64), w), TJ_OK, "%s", tj_last_error());
        test_expect_close(got[k], w, numel, rtol, rtol);
    }
}

void test_expect_round_trip(const char *text)
{
    tj_graph *g = tj_graph_parse(text);
    cr_assert_not_null(g, "%s", tj_last_error());
    char *again = tj_graph_to_string(g);
    cr_expect_str_eq(again, text);
    free(again);
    tj_graph_free(g);
}

char *test_decomp_table_text(const tj_decomp_table *t)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    cr_assert_not_null(f);
    tj_decomp_table_print(t, f);
    fclose(f);
    return text;
}

/* What print writes for obj, into a string the caller frees (asserts the
 * print succeeds). */
static char *captured_text(tj_status (*print)(const void *, FILE *), const void *obj)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    cr_assert_not_null(f);
    cr_assert_eq(print(obj, f), TJ_OK, "%s", tj_last_error());
    fclose(f);
    return text;
}

static tj_status write_graph_json(const void *g, FILE *f) { return tj_graph_write_json(g, f); }
static tj_status print_plan_memory(const void *p, FILE *f) { return tj_plan_print_memory(p, f); }
static tj_status print_plan_profile(const void *p, FILE *f) { return tj_plan_profile_print(p, f); }

char *test_graph_json(const tj_graph *g) { return captured_text(write_graph_json, g); }

char *test_plan_memory_text(const tj_plan *p) { return captured_text(print_plan_memory, p); }

char *test_profile_table(const tj_plan *p) { return captured_text(print_plan_profile, p); }

tj_plan_statistics test_plan_stats(const tj_plan *p)
{
    tj_plan_statistics s;
    cr_assert_eq(tj_plan_stats(p, &s), TJ_OK);
    return s;
}

void test_expect_same_bits(tj_tensor *a, tj_tensor *b, const char *what)
{
    cr_assert_not_null(a, "%s: %s", what, tj_last_error());
    cr_assert_not_null(b, "%s: %s", what, tj_last_error());
    cr_assert_eq(tj_tensor_dtype(a), tj_tensor_dtype(b), "%s", what);
    cr_assert_eq(tj_tensor_numel(a), tj_tensor_numel(b), "%s", what);
    tj_tensor *ca = tj_contiguous(a), *cb = tj_contiguous(b);
    int64_t n = tj_tensor_numel(a);
    size_t es = tj_dtype_size(tj_tensor_dtype(a));
    const char *x = tj_tensor_data(ca), *y = tj_tensor_data(cb);
    for (int64_t i = 0; i < n; i++) {
        if (!memcmp(x + i * es, y + i * es, es)) continue;
        double u = tj_tensor_item_at(ca, i), v = tj_tensor_item_at(cb, i);
        cr_assert(isnan(u) && isnan(v), "%s: element %ld of %ld: %.17g vs %.17g", what, (long)i, (long)n, u, v);
    }
}

/* t's elements in logical order (t itself when contiguous, else a copy the
 * open scope owns), after asserting its dtype and size. */
static const void *expect_data(const tj_tensor *t, tj_dtype dtype, int64_t n)
{
    cr_assert_not_null(t, "%s", tj_last_error());
    cr_assert_eq(tj_tensor_dtype(t), dtype, "dtype %s", tj_dtype_name(tj_tensor_dtype(t)));
    cr_assert_eq(tj_tensor_numel(t), n);
    tj_tensor *c = tj_contiguous((tj_tensor *)t);
    cr_assert_not_null(c, "%s", tj_last_error());
    return tj_tensor_data(c);
}

void test_expect_i64(const tj_tensor *t, int64_t n, const int64_t *want)
{
    const int64_t *p = expect_data(t, TJ_INT64, n);
    for (int64_t i = 0; i < n; i++)
        cr_expect_eq(p[i], want[i], "[%lld] = %lld, want %lld", (long long)i, (long long)p[i], (long long)want[i]);
}

void test_expect_bool(const tj_tensor *t, int64_t n, const uint8_t *want)
{
    const uint8_t *p = expect_data(t, TJ_BOOL, n);
    for (int64_t i = 0; i < n; i++) cr_expect_eq(p[i], want[i], "[%lld] = %d, want %d", (long long)i, p[i], want[i]);
}

void test_expect_identical(const tj_tensor *got, const tj_tensor *want, const char *what)
{
    cr_assert_not_null(got, "%s: %s", what, tj_last_error());
    cr_assert_eq(tj_tensor_dtype(got), tj_tensor_dtype(want), "%s", what);
    cr_assert_eq(tj_tensor_ndim(got), tj_tensor_ndim(want), "%s", what);
    for (int d = 0; d < tj_tensor_ndim(got); d++)
        cr_assert_eq(tj_tensor_shape(got)[d], tj_tensor_shape(want)[d], "%s: dim %d", what, d);
    tj_tensor *g = tj_contiguous((tj_tensor *)got), *w = tj_contiguous((tj_tensor *)want);
    cr_assert(g && w, "%s: %s", what, tj_last_error());
    size_t nb = (size_t)tj_tensor_numel(got) * tj_dtype_size(tj_tensor_dtype(got));
    cr_expect(memcmp(tj_tensor_data(g), tj_tensor_data(w), nb) == 0, "%s: bits differ", what);
}

bool test_native_code(void) { return getenv("TJ_TEST_NATIVE_CODE") != NULL; }

void test_expect_plans_match_interpreter(const tj_graph *g, tj_tensor *const *in, int n_in, tj_plan *fused,
                                         tj_plan *unfused, const char *what)
{
    int no = tj_plan_num_outputs(fused);
    tj_tensor *ref[8], *got[8], *sep[8];
    cr_assert(no <= 8, "%s: %d outputs", what, no);
    cr_assert_eq(tj_graph_run(g, in, n_in, ref), TJ_OK, "%s: %s", what, tj_last_error());
    for (int run = 0; run < 2; run++) {
        cr_assert_eq(tj_plan_run(fused, in, n_in, got), TJ_OK, "%s: %s", what, tj_last_error());
        cr_assert_eq(tj_plan_run(unfused, in, n_in, sep), TJ_OK, "%s: %s", what, tj_last_error());
        for (int k = 0; k < no; k++) {
            char w[240];
            snprintf(w, sizeof w, "%s, output %d", what, k);
            test_expect_same_bits(got[k], ref[k], w);
            test_expect_same_bits(sep[k], ref[k], w);
        }
    }
}

tj_plan_statistics test_expect_fused_plans_match(const tj_graph *g, tj_tensor *const *in, int n_in, const char *what,
                                                 tj_plan_statistics *unfused)
{
    tj_compile_options fo = {.native_code = test_native_code()}, uo = {.no_pointwise_fusion = true};
    tj_plan *pf = tj_compile(g, &fo), *pu = tj_compile(g, &uo);
    cr_assert(pf && pu, "%s: tj_compile: %s", what, tj_last_error());
    cr_assert_null(tj_plan_native_code_error(pf), "%s: %s", what, tj_plan_native_code_error(pf));
    test_expect_plans_match_interpreter(g, in, n_in, pf, pu, what);
    tj_plan_statistics s = test_plan_stats(pf), u = test_plan_stats(pu);
    cr_expect_eq(u.n_fused_pointwise, 0, "%s", what);
    cr_expect_eq(u.n_fused_row_reductions, 0, "%s", what);
    if (unfused) *unfused = u;
    tj_plan_free(pf);
    tj_plan_free(pu);
    return s;
}

tj_tensor *test_random_tensor(tj_dtype dt, int ndim, const int64_t *shape, unsigned seed, double lo, double hi)
{
    tj_tensor *t = tj_tensor_empty(dt, ndim, shape);
    cr_assert_not_null(t, "%s", tj_last_error());
    srand(seed);
    int64_t n = tj_tensor_numel(t);
    for (int64_t i = 0; i < n; i++) {
        double v = lo + (hi - lo) * (double)rand() / RAND_MAX;
        if (dt == TJ_FLOAT32) ((float *)tj_tensor_data(t))[i] = (float)v;
        else ((double *)tj_tensor_data(t))[i] = v;
    }
    return t;
}

void test_small_machine(char *path)
{
    strcpy(path, "/tmp/tjit-meminfo-XXXXXX");
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    FILE *f = fdopen(fd, "w");
    fprintf(f, "MemTotal:       65536 kB\nMemAvailable:   32768 kB\nSwapFree:       16384 kB\n");
    cr_assert_eq(fclose(f), 0);
    tj_debug_set_meminfo_path(path);
}
