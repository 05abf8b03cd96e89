/* Fixtures and constructors shared by the Criterion test executables. */
#ifndef TJIT_TESTS_TEST_UTIL_H
#define TJIT_TESTS_TEST_UTIL_H

#include <stdbool.h>
#include <stdint.h>

#include "tjit/tjit.h"

/** Opens a scope that owns the test's results (none needs a release by
 *  hand) and remembers the thread count. Use as a Criterion .init, with
 *  test_scope_close as its .fini. */
void test_scope_open(void);

/** Ends the scope test_scope_open opened and restores the thread count a
 *  test may have changed. */
void test_scope_close(void);

/** test_scope_close, then back to the default instruction set (the CPU's
 *  best under TJ_ISA's cap) for a test that forced one (tj_k_isa_force).
 *  Use as a Criterion .fini. */
void test_scope_close_isa(void);

/** The instruction sets tj_k_isa_force takes, every one a test should try
 *  (forcing one above the CPU or TJ_ISA returns false). */
#define TEST_NISA 3
extern const char *const test_isas[TEST_NISA];

/** The positive integer in environment variable `name`, or `fallback`
 *  when it is unset, zero, negative or not a number (the strides CI's
 *  sanitizer run sets for the exhaustive sweeps). */
uint64_t test_env_count(const char *name, uint64_t fallback);

/** Whether this CPU runs tjit's AVX-512 (F, DQ, VL, BW) / AVX2 (with FMA)
 *  kernels, whatever TJ_ISA says: for tests that call one ISA's loop
 *  directly. Tests whose expectations follow the route the library takes
 *  ask the ISA in use instead (kernels/cpu_isa.h: tj_k_isa_active) or the
 *  route's own predicate (tj_k_conv_own_kernels, tj_k_gemm_f32_supported). */
bool test_cpu_has_avx512(void);
bool test_cpu_has_avx2(void);

/** Bit casts: the float32 / float64 with these bits, and the bits of one. */
float test_f32_bits(uint32_t u);
double test_f64_bits(uint64_t u);
uint32_t test_bits_f32(float f);
uint64_t test_bits_f64(double d);

/** A tensor of dtype `dt` and `shape` holding a copy of `data` (row-major);
 *  the test fails when it cannot be made. */
tj_tensor *test_tensor(tj_dtype dt, int ndim, const int64_t *shape, const void *data);

/** test_tensor for float32, float64 and int64 data. */
tj_tensor *test_f32(int ndim, const int64_t *shape, const float *data);
tj_tensor *test_f64(int ndim, const int64_t *shape, const double *data);
tj_tensor *test_i64(int ndim, const int64_t *shape, const int64_t *data);

/** A float32 tensor of `shape` with values uniform in [-1, 1) from rand()
 *  seeded with `seed`; the test fails when it cannot be made. */
tj_tensor *test_random_f32(int ndim, const int64_t *shape, unsigned seed);

/** Asserts that t is a tensor (else fails with the last error) of `dtype`
 *  and `shape` (ndim dims); returns its number of elements. */
int64_t test_assert_dtype_shape(const tj_tensor *t, tj_dtype dtype, int ndim, const int64_t *shape);

/** Expects t (else fails with the last error) to hold n elements close to
 *  want in its logical order: |got - want| <= rtol |want| + atol, nan
 *  matching nan and infinities matching exactly. Reports every element that
 *  differs (cr_expect), not only the first. */
void test_expect_close(const tj_tensor *t, const double *want, int64_t n, double rtol, double atol);

/** test_expect_close's comparison of one element. */
bool test_close(double got, double want, double rtol, double atol);

/** Expects t to be float32 with n elements equal to want's in logical order:
 *  the same bits (-0 told from +0) when rtol is 0, else within rtol relative
 *  and 1e-7 absolute; nan matches nan. Reports every element that differs. */
void test_expect_f32(const tj_tensor *t, const float *want, int64_t n, double rtol);

/** Asserts that a call failed: result NULL, tj_last_status() == status and
 *  tj_last_error() naming op and containing needle. */
void test_expect_error(const void *result, tj_status status, const char *op, const char *needle);

/** g, which must have nout outputs, compiled (tj_compile) and run once on
 *  in (n inputs) into out; the results outlive the plan, freed here. The
 *  test fails on any error. */
void test_replay(const tj_graph *g, tj_tensor *const *in, int n, tj_tensor **out, int nout);

/** test_replay of a graph with one output; returns it. */
tj_tensor *test_replay1(const tj_graph *g, tj_tensor *const *in, int n);

/** fn run eagerly (ctx NULL) on in (n inputs) into out; the test fails
 *  unless it succeeds with nout results. */
void test_run_eager(tj_trace_fn fn, tj_tensor *const *in, int n, tj_tensor **out, int nout);

/** The gradient of sum(gy * y) with respect to x (tj_autograd_grad); the
 *  test fails when y is NULL or on any error. */
tj_tensor *test_grad1(tj_tensor *x, tj_tensor *y, tj_tensor *gy);

/** Expects g to hold exactly `count` call nodes of each of the n operators
 *  names[0..n) (ATen names; the test fails on a name tjit does not know). */
void test_expect_op_count(const tj_graph *g, const char *const *names, int n, int count);

/** True when every call node of g is a primitive operator. */
bool test_only_primitives(const tj_graph *g);

/** a (not NULL: the test fails with the last error) has b's dtype and
 *  shape, and every element equals b's (nan where b has nan). */
void test_expect_same(const tj_tensor *a, const tj_tensor *b, const char *what);

/** Traces fn on in (n inputs) with the core table in fake mode and runs the
 *  graph on in into out (the test fails when either fails). Returns whether
 *  the graph holds primitives only. */
bool test_run_core(tj_trace_fn fn, void *ctx, tj_tensor *const *in, int n, tj_tensor **out);

/** A float64 tensor of `shape` holding v (test_f64), requiring grad when
 *  asked. */
tj_tensor *test_f64_grad(const double *v, int ndim, const int64_t *shape, bool requires_grad);

/** Runs step eagerly and traced (make_fx, fake mode) on in (n inputs): the
 *  graph text holds every string of want[0..nwant) and not `absent` (NULL:
 *  no check); its replay (tj_compile, tj_plan_run) gives eager's nout (<= 4)
 *  results exactly, and the core-decomposed trace (primitives only, each
 *  result of at most 256 elements) within rtol relative and absolute (0:
 *  exactly). */
void test_expect_traced(tj_trace_fn step, tj_tensor *const *in, int n, int nout, const char *const *want, int nwant,
                        const char *absent, double rtol);

/** Parses a graph text (the test fails when it does not parse) and expects
 *  the graph to print back to the same text. */
void test_expect_round_trip(const char *text);

/** What tj_decomp_table_print writes for t, as a string the caller frees. */
char *test_decomp_table_text(const tj_decomp_table *t);

/** What tj_graph_write_json writes for g, as a string the caller frees
 *  (asserts the export succeeds). */
char *test_graph_json(const tj_graph *g);

/** What tj_plan_print_memory writes for p (every intermediate's offset,
 *  size and steps), as a string the caller frees (asserts the print
 *  succeeds). */
char *test_plan_memory_text(const tj_plan *p);

/** What tj_plan_profile_print writes for p (its per-operator table), as a
 *  string the caller frees (asserts the print succeeds). */
char *test_profile_table(const tj_plan *p);

/** The plan's statistics (tj_plan_stats), asserting it answers. */
tj_plan_statistics test_plan_stats(const tj_plan *p);

/** Every element of a and b identical bit for bit (a NaN equal to a NaN of
 *  any payload); same dtype and element count. Asserts. */
void test_expect_same_bits(tj_tensor *a, tj_tensor *b, const char *what);

/** Asserts that t (else fails with the last error) is an int64 / bool tensor
 *  of n elements and expects each, in logical order, to equal want's. */
void test_expect_i64(const tj_tensor *t, int64_t n, const int64_t *want);
void test_expect_bool(const tj_tensor *t, int64_t n, const uint8_t *want);

/** Asserts that got (else fails with the last error) has want's dtype and
 *  shape and expects the same bytes in logical order: signed zeros and nan
 *  payloads told apart, unlike test_expect_same_bits. */
void test_expect_identical(const tj_tensor *got, const tj_tensor *want, const char *what);

/** Runs g in the interpreter once and the plans `fused` and `unfused`
 *  (compiled from g) twice each on in, the second run reusing each arena,
 *  and expects every output's bits equal to the interpreter's (at most 8
 *  outputs). Asserts that every run succeeds. */
void test_expect_plans_match_interpreter(const tj_graph *g, tj_tensor *const *in, int n_in, tj_plan *fused,
                                         tj_plan *unfused, const char *what);

/** True when TJ_TEST_NATIVE_CODE is set (the fuse_*_native entries of
 *  meson test, which rerun the loop-fusion tests): their fused plans are
 *  compiled with tj_compile_options.native_code, which must then build. */
bool test_native_code(void);
/* A meminfo file standing for a machine with 48 MiB available (MemAvailable
 * 32 MiB + SwapFree 16 MiB), made the one the memory check reads
 * (tj_debug_set_meminfo_path); `path` (32 bytes or more) receives its name:
 * tj_debug_set_meminfo_path(NULL) and unlink it after. */
void test_small_machine(char *path);

/** Compiles g with and without loop fusion (no_pointwise_fusion), runs both
 *  plans twice on `in` (the second run reuses the arena) and the interpreter
 *  (tj_graph_run) once, and expects the same bits from all three on every
 *  output (at most 8). Returns the fused plan's statistics, and the unfused
 *  one's in *unfused when not NULL; the unfused plan must have fused
 *  nothing. With test_native_code() the fused plan has native code. */
tj_plan_statistics test_expect_fused_plans_match(const tj_graph *g, tj_tensor *const *in, int n_in, const char *what,
                                                 tj_plan_statistics *unfused);

/** A float32 or float64 tensor of `shape` filled from rand() seeded with
 *  `seed`, uniform in [lo, hi]. */
tj_tensor *test_random_tensor(tj_dtype dt, int ndim, const int64_t *shape, unsigned seed, double lo, double hi);

#endif
