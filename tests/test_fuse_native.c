/* Native code for fused elementwise steps (tj_compile_options.native_code,
 * tracer/fuse_native.c, tracer/native_build.c). The loop-fusion tests run
 * again with it (test_fuse_pointwise_native, test_fuse_rows_native); here:
 * every operator it compiles on the values where C and the kernels could
 * part (nans, signed zeros, infinities, subnormals, halves), the
 * cache, and the ways a build fails, which leave the plan as it would be
 * without the option. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <fcntl.h>
#include <float.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "test_util.h"
#include "tjit/tjit.h"

TestSuite(fuse_native, .init = test_scope_open, .fini = test_scope_close);

#define N_OUTS 46

/* in: x, y of one shape, float32 or float64: every operator native code
 * compiles, each result an output of its own (so that a wrong sign of
 * zero or a lost nan shows), and chains through them that fuse. */
static tj_status fn_every_op(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx, (void)n;
    tj_tensor *x = in[0], *y = in[1];
    tj_dtype dt = tj_tensor_dtype(x), other = dt == TJ_FLOAT32 ? TJ_FLOAT64 : TJ_FLOAT32;
    tj_tensor *o[N_OUTS] = {
        tj_mul(x, y), tj_div(x, y), tj_maximum(x, y), tj_minimum(x, y), tj_maximum(y, x), tj_minimum(y, x),
        tj_add(x, y), tj_sub_alpha(x, y, tj_v_float(0.3)), tj_rsub(x, y, tj_v_int(2)), tj_add_alpha(x, y, tj_v_int(-1)),
        tj_add_alpha(x, y, tj_v_float(1.0 + 0x1p-30)), /* alpha 1 in float32 (the kernel adds y), not in float64 */
        tj_relu(x), tj_abs(x), tj_neg(x), tj_sign(x), tj_sqrt(x), tj_rsqrt(x), tj_reciprocal(x), tj_floor(x),
        tj_ceil(x), tj_round(x), tj_trunc(x), tj_frac(x),
        tj_pow_scalar(x, tj_v_int(0)), tj_pow_scalar(x, tj_v_int(1)), tj_pow_scalar(x, tj_v_int(2)),
        tj_pow_scalar(x, tj_v_int(3)), tj_pow_scalar(x, tj_v_float(0.5)), tj_pow_scalar(x, tj_v_float(-0.5)),
        tj_pow_scalar(x, tj_v_int(-1)), tj_pow_scalar(x, tj_v_int(-2)),
        tj_sigmoid_backward(x, y), tj_tanh_backward(x, y),
        tj_where(tj_lt(x, y), x, y), tj_where(tj_le(x, y), y, x), tj_where(tj_gt(x, y), x, y), tj_where(tj_ge(x, y), y, x),
        tj_where(tj_eq(x, y), x, y), tj_where(tj_ne(x, y), y, x), tj_where(tj_logical_and(x, y), x, y),
        tj_where(tj_logical_or(x, y), y, x), tj_where(tj_logical_xor(x, y), x, y),
        tj_where(tj_lt(x, y), tj_ne(x, x), tj_ge(y, x)), /* of masks: bool */
        tj_to_copy(tj_to_copy(x, other), dt), tj_to_copy(tj_to_copy(x, TJ_BOOL), dt), NULL};
    /* a chain: every intermediate only the chain reads */
    tj_tensor *r = tj_add(tj_mul(x, y), tj_div(x, y));
    r = tj_mul(tj_maximum(r, x), tj_relu(tj_sub(r, y)));
    r = tj_to_copy(tj_add_scalar(tj_to_copy(tj_sqrt(tj_abs(r)), other), tj_v_float(0.5)), dt);
    o[N_OUTS - 1] = tj_where(tj_lt(r, y), tj_floor(r), tj_neg(r));
    for (int k = 0; k < N_OUTS; k++) {
        if (!o[k]) return tj_last_status();
        out[k] = o[k];
    }
    *n_out = N_OUTS;
    return TJ_OK;
}

/* Values where C's and the kernels' arithmetic could part. */
static const double specials[] = {0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.5, -3.5, 1.5, 3.7, -2.2, 1e-39, -1e-310,
                                  1e38, -1e300, INFINITY, -INFINITY, NAN, -NAN};
#define N_SPECIALS (sizeof specials / sizeof *specials)

/* x, y [N_SPECIALS^2 + 5]: every pair of specials, then a nan with a
 * payload against numbers and a short tail for the vector remainder. */
static void special_inputs(tj_dtype dt, tj_tensor **x, tj_tensor **y)
{
    int64_t n = N_SPECIALS * N_SPECIALS + 5;
    *x = tj_tensor_empty(dt, 1, &n);
    *y = tj_tensor_empty(dt, 1, &n);
    for (int64_t i = 0; i < n; i++) {
        double a = i < (int64_t)(N_SPECIALS * N_SPECIALS) ? specials[i / N_SPECIALS] : 0.25 * (double)i;
        double b = i < (int64_t)(N_SPECIALS * N_SPECIALS) ? specials[i % N_SPECIALS] : -1.0 / (double)i;
        if (dt == TJ_FLOAT32) {
            ((float *)tj_tensor_data(*x))[i] = (float)a;
            ((float *)tj_tensor_data(*y))[i] = (float)b;
        } else {
            ((double *)tj_tensor_data(*x))[i] = a;
            ((double *)tj_tensor_data(*y))[i] = b;
        }
    }
    uint32_t nan32 = 0x7fc0beefu; /* a payload (which nan an operation passes on is the compiler's choice, as
                                     in the kernels: any nan compares equal) */
    uint64_t nan64 = 0xfff800000000beefull;
    if (dt == TJ_FLOAT32) memcpy((float *)tj_tensor_data(*x) + n - 5, &nan32, 4);
    else memcpy((double *)tj_tensor_data(*x) + n - 5, &nan64, 8);
}

static tj_plan *compile_native(const tj_graph *g, bool native)
{
    tj_compile_options o = {.native_code = native};
    tj_plan *p = tj_compile(g, &o);
    cr_assert_not_null(p, "tj_compile: %s", tj_last_error());
    return p;
}

/* A fresh private cache directory (TJ_CACHE_DIR) for one test. */
static void fresh_cache(char *dir, size_t size)
{
    snprintf(dir, size, "/tmp/tjit-native-test-XXXXXX");
    cr_assert_not_null(mkdtemp(dir));
    setenv("TJ_CACHE_DIR", dir, 1);
}

static int count_files(const char *dir, const char *suffix)
{
    DIR *d = opendir(dir);
    cr_assert_not_null(d);
    int n = 0;
    for (struct dirent *e; (e = readdir(d));) {
        size_t len = strlen(e->d_name), sl = strlen(suffix);
        n += e->d_name[0] != '.' && len > sl && !strcmp(e->d_name + len - sl, suffix);
    }
    closedir(d);
    return n;
}

static void remove_cache(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) return;
    char path[512];
    for (struct dirent *e; (e = readdir(d));) {
        if (e->d_name[0] == '.') continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        unlink(path);
    }
    closedir(d);
    rmdir(dir);
}

static tj_graph *every_op_graph(tj_dtype dt, tj_tensor **in)
{
    special_inputs(dt, &in[0], &in[1]);
    tj_graph *g = tj_make_fx(fn_every_op, NULL, in, 2, NULL, TJ_TRACE_REAL);
    cr_assert_not_null(g, "make_fx: %s", tj_last_error());
    return g;
}

Test(fuse_native, every_operator_gives_the_loops_bits_on_special_values)
{
    char dir[64];
    fresh_cache(dir, sizeof dir);
    for (int dt = 0; dt < 2; dt++) {
        for (int threads = 1; threads <= 2; threads++) {
            tj_set_num_threads(threads);
            tj_tensor *in[2];
            tj_graph *g = every_op_graph(dt ? TJ_FLOAT64 : TJ_FLOAT32, in);
            tj_plan *pn = compile_native(g, true), *pl = compile_native(g, false);
            cr_assert_null(tj_plan_native_code_error(pn), "%s", tj_plan_native_code_error(pn));
            tj_plan_statistics s = test_plan_stats(pn);
            /* every call but the few each chain starts apart (a group's
             * first reads of x and y) runs in native code */
            cr_expect_geq(s.n_native_calls, s.n_fused_pointwise_nodes - 8, "%d of %d calls native",
                          s.n_native_calls, s.n_fused_pointwise_nodes);
            tj_tensor *a[N_OUTS], *b[N_OUTS], *ref[N_OUTS];
            cr_assert_eq(tj_graph_run(g, in, 2, ref), TJ_OK, "%s", tj_last_error());
            for (int run = 0; run < 2; run++) {
                cr_assert_eq(tj_plan_run(pn, in, 2, a), TJ_OK, "%s", tj_last_error());
                cr_assert_eq(tj_plan_run(pl, in, 2, b), TJ_OK, "%s", tj_last_error());
                for (int k = 0; k < N_OUTS; k++) {
                    char what[96];
                    snprintf(what, sizeof what, "%s output %d, %d threads", dt ? "float64" : "float32", k, threads);
                    test_expect_same_bits(a[k], b[k], what);
                    test_expect_same_bits(a[k], ref[k], what);
                }
            }
            tj_plan_free(pn);
            tj_plan_free(pl);
            tj_graph_free(g);
        }
    }
    remove_cache(dir);
}

/* Compiles the every-op graph natively with the environment as set: the
 * plan exists, has no native code, says why (containing `reason`) and runs
 * with the bits of the plan compiled without the option. */
static void expect_fallback(const char *reason)
{
    tj_tensor *in[2];
    tj_graph *g = every_op_graph(TJ_FLOAT32, in);
    tj_plan *pn = compile_native(g, true), *pl = compile_native(g, false);
    const char *why = tj_plan_native_code_error(pn);
    cr_assert_not_null(why);
    cr_expect(strstr(why, reason) != NULL, "'%s' does not say '%s'", why, reason);
    cr_expect_eq(test_plan_stats(pn).n_native_segments, 0);
    cr_expect_null(tj_plan_native_code_error(pl));
    tj_tensor *a[N_OUTS], *b[N_OUTS];
    cr_assert_eq(tj_plan_run(pn, in, 2, a), TJ_OK, "%s", tj_last_error());
    cr_assert_eq(tj_plan_run(pl, in, 2, b), TJ_OK, "%s", tj_last_error());
    for (int k = 0; k < N_OUTS; k++) test_expect_same_bits(a[k], b[k], reason);
    tj_plan_free(pn);
    tj_plan_free(pl);
    tj_graph_free(g);
}

/* expect_fallback with TJ_CC set to cc, in a fresh cache left empty. */
static void expect_compiler_fallback(const char *cc, const char *reason)
{
    char dir[64];
    fresh_cache(dir, sizeof dir);
    setenv("TJ_CC", cc, 1);
    expect_fallback(reason);
    cr_expect_eq(count_files(dir, ""), 0, "no build directory left behind");
    remove_cache(dir);
}

Test(fuse_native, a_missing_compiler_leaves_the_loops)
{
    expect_compiler_fallback("/nonexistent/cc", "cannot run the compiler '/nonexistent/cc'");
}

Test(fuse_native, a_failing_compiler_is_quoted)
{
    /* cat refuses -std=c11 (at its d): its message ends the error */
    expect_compiler_fallback("cat", "the compiler 'cat' failed (exit status 1): cat: invalid option -- 'd'");
}

Test(fuse_native, a_cache_others_may_write_is_refused)
{
    char dir[64];
    fresh_cache(dir, sizeof dir);
    cr_assert_eq(chmod(dir, 0777), 0);
    expect_fallback("is not a private directory of this user (mode 777)");
    cr_expect_eq(count_files(dir, ""), 0);
    remove_cache(dir);
}

Test(fuse_native, a_cache_path_that_is_a_file_is_an_io_error)
{
    char dir[64], file[80];
    fresh_cache(dir, sizeof dir);
    snprintf(file, sizeof file, "%s/plain", dir);
    FILE *f = fopen(file, "w");
    cr_assert_not_null(f);
    fclose(f);
    setenv("TJ_CACHE_DIR", file, 1);
    expect_fallback("plain");
    remove_cache(dir);
}

/* A "compiler": an executable shell script running `body`, in a fresh
 * folder bin (its path into cc), made the compiler (TJ_CC) with a fresh
 * cache; script_remove undoes it. */
static void script_compiler(const char *body, char *bin, char *cc, char *cache)
{
    snprintf(bin, 64, "/tmp/tjit-native-cc-XXXXXX");
    cr_assert_not_null(mkdtemp(bin));
    snprintf(cc, 96, "%s/cc", bin);
    FILE *f = fopen(cc, "w");
    cr_assert_not_null(f);
    fprintf(f, "#!/bin/sh\n%s", body);
    cr_assert_eq(fclose(f), 0);
    cr_assert_eq(chmod(cc, 0700), 0);
    fresh_cache(cache, 64);
    setenv("TJ_CC", cc, 1);
}

static void script_remove(const char *bin, const char *cc, const char *cache)
{
    remove_cache(cache);
    unlink(cc);
    rmdir(bin);
}

Test(fuse_native, a_compile_error_is_quoted_not_gccs_function_line)
{
    /* GCC starts with the function it is in; the message quoted that
     * line alone, which says nothing of what failed */
    char bin[64], cc[96], dir[64];
    script_compiler("echo \"k.c: In function 'tjg_0':\"\necho 'k.c:55:18: error: expected something'\n"
                    "echo 'k.c:56:1: error: a second error'\nexit 1\n", bin, cc, dir);
    expect_fallback("failed (exit status 1): k.c:55:18: error: expected something");
    script_remove(bin, cc, dir);
}

/* Lines in the file at path (0 when there is none). */
static int count_lines(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    int n = 0;
    for (int c; (c = fgetc(f)) != EOF;) n += c == '\n';
    fclose(f);
    return n;
}

/* Compiles g natively (no error, native segments) and frees the plan. */
static void compile_natively(const tj_graph *g)
{
    tj_plan *p = compile_native(g, true);
    cr_expect_null(tj_plan_native_code_error(p), "%s", tj_plan_native_code_error(p));
    cr_expect_gt(test_plan_stats(p).n_native_segments, 0);
    tj_plan_free(p);
}

Test(fuse_native, the_cache_is_keyed_by_the_source_and_the_compiler_program)
{
    /* a compiler counting its runs: cc, and a line in <script>.log */
    char bin[64], cc[96], dir[64], log[112];
    script_compiler("echo run >> \"$0.log\"\nexec cc \"$@\"\n", bin, cc, dir);
    snprintf(log, sizeof log, "%s.log", cc);
    tj_tensor *in[2];
    tj_graph *g = every_op_graph(TJ_FLOAT32, in);
    compile_natively(g);
    cr_expect_eq(count_lines(log), 1);
    cr_expect_eq(count_files(dir, ".so"), 1);
    cr_expect_eq(count_files(dir, ".c"), 1, "the source is kept next to the object");
    compile_natively(g);
    cr_expect_eq(count_lines(log), 1, "the second compile loads the cached object");
    /* the same compiler name, another program (as after an upgrade): built anew */
    struct timespec times[2] = {{.tv_nsec = UTIME_OMIT}, {.tv_sec = 1}};
    cr_assert_eq(utimensat(AT_FDCWD, cc, times, 0), 0);
    compile_natively(g);
    cr_expect_eq(count_lines(log), 2, "an object of another compiler is not used");
    cr_expect_eq(count_files(dir, ".so"), 2);
    /* an object is used only next to the very source asked for: one whose
     * kept source differs (a name collision) is built anew */
    DIR *d = opendir(dir);
    cr_assert_not_null(d);
    char kept[512];
    for (struct dirent *e; (e = readdir(d));) {
        if (!strstr(e->d_name, ".c")) continue;
        snprintf(kept, sizeof kept, "%s/%s", dir, e->d_name);
        FILE *f = fopen(kept, "a");
        cr_assert_not_null(f, "%s", kept);
        fputs("/* changed */\n", f);
        fclose(f);
    }
    closedir(d);
    compile_natively(g);
    cr_expect_eq(count_lines(log), 3, "an object whose kept source differs is not used");
    tj_graph_free(g);
    unlink(log);
    script_remove(bin, cc, dir);
}

/* The one cached object in dir, its path into path. */
static void cached_object(const char *dir, char *path, size_t size)
{
    DIR *d = opendir(dir);
    cr_assert_not_null(d);
    int n = 0;
    for (struct dirent *e; (e = readdir(d));) {
        size_t len = strlen(e->d_name);
        if (len < 3 || strcmp(e->d_name + len - 3, ".so")) continue;
        snprintf(path, size, "%s/%s", dir, e->d_name);
        n++;
    }
    closedir(d);
    cr_assert_eq(n, 1, "%d objects in %s", n, dir);
}

/* Compiles g natively (no error, native segments) and checks that its
 * plan gives the bits of the plan without native code on in. */
static void expect_native_bits(const tj_graph *g, tj_tensor **in)
{
    tj_plan *pn = compile_native(g, true), *pl = compile_native(g, false);
    cr_expect_null(tj_plan_native_code_error(pn), "%s", tj_plan_native_code_error(pn));
    cr_expect_gt(test_plan_stats(pn).n_native_segments, 0);
    tj_tensor *a[N_OUTS], *b[N_OUTS];
    cr_assert_eq(tj_plan_run(pn, in, 2, a), TJ_OK, "%s", tj_last_error());
    cr_assert_eq(tj_plan_run(pl, in, 2, b), TJ_OK, "%s", tj_last_error());
    for (int k = 0; k < N_OUTS; k++) test_expect_same_bits(a[k], b[k], "native against the loops");
    tj_plan_free(pn);
    tj_plan_free(pl);
}

Test(fuse_native, a_cached_object_cut_short_or_changed_is_built_anew)
{
    /* a cached object cut short (a copy out of room, a crash before its
     * blocks reached the disk) loaded, and the process died of SIGBUS on
     * pages past its end; one changed since could run other code */
    char bin[64], cc[96], dir[64], log[112], obj[512];
    script_compiler("echo run >> \"$0.log\"\nexec cc \"$@\"\n", bin, cc, dir);
    snprintf(log, sizeof log, "%s.log", cc);
    tj_tensor *in[2];
    tj_graph *g = every_op_graph(TJ_FLOAT32, in);
    expect_native_bits(g, in);
    cr_expect_eq(count_lines(log), 1);
    cached_object(dir, obj, sizeof obj);
    struct stat st;
    cr_assert_eq(stat(obj, &st), 0);
    cr_assert_eq(truncate(obj, st.st_size / 2), 0);
    expect_native_bits(g, in);
    cr_expect_eq(count_lines(log), 2, "an object cut short is built anew");
    /* one byte changed in the middle: built anew too */
    int fd = open(obj, O_RDWR);
    cr_assert_geq(fd, 0);
    unsigned char byte;
    cr_assert_eq(pread(fd, &byte, 1, st.st_size / 2), 1);
    byte ^= 0x40;
    cr_assert_eq(pwrite(fd, &byte, 1, st.st_size / 2), 1);
    close(fd);
    expect_native_bits(g, in);
    cr_expect_eq(count_lines(log), 3, "an object changed since it was built is built anew");
    expect_native_bits(g, in);
    cr_expect_eq(count_lines(log), 3, "the object built anew is used");
    tj_graph_free(g);
    unlink(log);
    script_remove(bin, cc, dir);
}

Test(fuse_native, a_failed_link_quotes_the_linker_not_gccs_summary)
{
    /* GCC's driver ends a failed link with "collect2: error: ld returned 1
     * exit status", which says nothing of why */
    char bin[64], cc[96], dir[64];
    script_compiler("echo '/usr/bin/ld: final link failed: No space left on device'\n"
                    "echo 'collect2: error: ld returned 1 exit status'\nexit 1\n",
                    bin, cc, dir);
    expect_fallback("failed (exit status 1): /usr/bin/ld: final link failed: No space left on device");
    script_remove(bin, cc, dir);
}

Test(fuse_native, a_source_that_cannot_be_written_says_why)
{
    /* a file size limit stands for a full disk: the write fails with
     * EFBIG, which the message gave as "an earlier write to the stream
     * failed" */
    char dir[64];
    fresh_cache(dir, sizeof dir);
    signal(SIGXFSZ, SIG_IGN);
    struct rlimit limit = {.rlim_cur = 1024, .rlim_max = RLIM_INFINITY};
    cr_assert_eq(setrlimit(RLIMIT_FSIZE, &limit), 0);
    expect_fallback("k.c': File too large");
    limit.rlim_cur = RLIM_INFINITY;
    cr_assert_eq(setrlimit(RLIMIT_FSIZE, &limit), 0);
    cr_expect_eq(count_files(dir, ""), 0, "no build directory left behind");
    remove_cache(dir);
}

Test(fuse_native, an_object_without_the_functions_leaves_the_loops_and_says_so)
{
    /* builds an object, but not of the source it is given */
    char bin[64], cc[96], dir[64];
    script_compiler("while [ $# -gt 0 ]; do [ \"$1\" = -o ] && out=$2; shift; done\n"
                    "echo 'int tj_unrelated(void) { return 0; }' | cc -x c -shared -fPIC -o \"$out\" -\n",
                    bin, cc, dir);
    expect_fallback("the compiled object has no function 'tjg_0'");
    script_remove(bin, cc, dir);
}

Test(fuse_native, a_compiler_that_hangs_is_stopped_after_tj_cc_timeout)
{
    char bin[64], cc[96], dir[64];
    script_compiler("exec sleep 60\n", bin, cc, dir);
    setenv("TJ_CC_TIMEOUT", "1", 1);
    expect_fallback("took more than 1 s (TJ_CC_TIMEOUT); stopped");
    cr_expect_eq(count_files(dir, ""), 0, "no build directory left behind");
    script_remove(bin, cc, dir);
}

Test(fuse_native, a_malformed_tj_cc_timeout_is_refused_by_name)
{
    /* strtol read "10x" as 10 and "0" as the default 300 */
    static const char *const bad[] = {"10x", "0", "-5", "abc", "", "86401", "99999999999999999999"};
    char bin[64], cc[96], dir[64];
    script_compiler("exec sleep 60\n", bin, cc, dir);
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char want[96];
        snprintf(want, sizeof want, "TJ_CC_TIMEOUT='%s' is not a whole number of seconds from 1 to 86400", bad[i]);
        setenv("TJ_CC_TIMEOUT", bad[i], 1);
        expect_fallback(want);
    }
    cr_expect_eq(count_files(dir, ""), 0, "no build directory left behind");
    script_remove(bin, cc, dir);
}

static mode_t object_mode(const char *dir)
{
    DIR *d = opendir(dir);
    cr_assert_not_null(d);
    mode_t mode = 0;
    char path[512];
    int n = 0;
    for (struct dirent *e; (e = readdir(d));) {
        size_t len = strlen(e->d_name);
        if (len < 3 || strcmp(e->d_name + len - 3, ".so")) continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        struct stat st;
        cr_assert_eq(stat(path, &st), 0);
        mode = st.st_mode & 0777;
        n++;
    }
    closedir(d);
    cr_assert_eq(n, 1, "%d objects in %s", n, dir);
    return mode;
}

Test(fuse_native, only_the_user_may_write_a_cached_object_whatever_the_umask)
{
    /* a cache directory others may read and enter (allowed), and umask 0:
     * the object the compiler writes would be writable by everyone, code
     * that a later compile loads and runs as this user */
    char dir[64];
    fresh_cache(dir, sizeof dir);
    cr_assert_eq(chmod(dir, 0755), 0);
    mode_t old = umask(0);
    tj_tensor *in[2];
    tj_graph *g = every_op_graph(TJ_FLOAT32, in);
    tj_plan *p = compile_native(g, true);
    cr_expect_null(tj_plan_native_code_error(p), "%s", tj_plan_native_code_error(p));
    tj_plan_free(p);
    cr_expect_eq(object_mode(dir) & 022, 0, "object mode %03o", (unsigned)object_mode(dir));
    /* one left writable by others (an earlier build) is not loaded but built anew */
    char path[512];
    DIR *d = opendir(dir);
    cr_assert_not_null(d);
    for (struct dirent *e; (e = readdir(d));)
        if (strstr(e->d_name, ".so")) snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    closedir(d);
    cr_assert_eq(chmod(path, 0777), 0);
    p = compile_native(g, true);
    cr_expect_null(tj_plan_native_code_error(p), "%s", tj_plan_native_code_error(p));
    cr_expect_gt(test_plan_stats(p).n_native_segments, 0);
    tj_plan_free(p);
    cr_expect_eq(object_mode(dir) & 022, 0, "object mode %03o", (unsigned)object_mode(dir));
    umask(old);
    tj_graph_free(g);
    remove_cache(dir);
}
