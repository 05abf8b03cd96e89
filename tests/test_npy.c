/* NumPy .npy files: round trips of every dtype and odd shape, headers of
 * versions 1.0 to 3.0, Fortran order, and malformed files, each of which must
 * give an error with a message (never a crash); allocation failures while
 * loading leak nothing. */
#include <criterion/criterion.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "alloc_counter.h"
#include "runtime/internal.h"

/* ---- temporary files ---- */

static char tmp_dir[64];

static void make_tmp_dir(void)
{
    snprintf(tmp_dir, sizeof tmp_dir, "/tmp/tjit_npy_XXXXXX");
    cr_assert_not_null(mkdtemp(tmp_dir));
}

static void remove_tmp_dir(void)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp_dir);
    cr_expect_eq(system(cmd), 0);
}

static const char *tmp_path(const char *name)
{
    static char path[128];
    snprintf(path, sizeof path, "%s/%s", tmp_dir, name);
    return path;
}

static size_t read_file(const char *path, unsigned char *buf, size_t cap)
{
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f, "%s", path);
    size_t n = fread(buf, 1, cap, f);
    fclose(f);
    return n;
}

static void write_file(const char *path, const void *buf, size_t n)
{
    FILE *f = fopen(path, "wb");
    cr_assert_not_null(f, "%s", path);
    cr_assert_eq(fwrite(buf, 1, n, f), n);
    fclose(f);
}

/* ---- hand-made files ---- */

/* Writes a .npy image of format `major`.0 with `header` as the dict text
 * (unpadded, as some writers do) followed by `n` data bytes. Returns its size. */
static size_t make_npy(unsigned char *out, int major, const char *header, const void *data, size_t n)
{
    size_t hl = strlen(header), k = 0;
    memcpy(out, "\x93NUMPY", 6);
    out[6] = (unsigned char)major;
    out[7] = 0;
    k = 8;
    out[k++] = (unsigned char)(hl & 0xff);
    out[k++] = (unsigned char)(hl >> 8);
    if (major >= 2) {
        out[k++] = (unsigned char)(hl >> 16);
        out[k++] = (unsigned char)(hl >> 24);
    }
    memcpy(out + k, header, hl);
    k += hl;
    if (n) memcpy(out + k, data, n);
    return k + n;
}

static void expect_shape(const tj_tensor *t, int ndim, const int64_t *shape)
{
    cr_assert_eq(tj_tensor_ndim(t), ndim);
    for (int d = 0; d < ndim; d++) cr_expect_eq(tj_tensor_size(t, d), shape[d], "dim %d", d);
}

#define SHAPE(...) (int)(sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t)), (int64_t[]){__VA_ARGS__}

/* Saves t, loads it back and checks dtype, shape and the exact bytes of the
 * elements in row-major order; returns the loaded tensor. */
static tj_tensor *round_trip(const tj_tensor *t, const char *name)
{
    const char *path = tmp_path(name);
    cr_assert_eq(tj_npy_save(path, t), TJ_OK, "%s", tj_last_error());
    tj_tensor *u = tj_npy_load(path);
    cr_assert_not_null(u, "%s", tj_last_error());
    cr_expect_eq(tj_tensor_dtype(u), tj_tensor_dtype(t));
    expect_shape(u, tj_tensor_ndim(t), tj_tensor_shape(t));
    cr_expect(tj_tensor_is_contiguous(u));
    size_t nbytes = (size_t)tj_tensor_numel(t) * tj_dtype_size(tj_tensor_dtype(t));
    unsigned char *want = malloc(nbytes + 1), *got = malloc(nbytes + 1);
    cr_assert_eq(tj_tensor_copy_to(t, want), TJ_OK);
    cr_assert_eq(tj_tensor_copy_to(u, got), TJ_OK);
    cr_expect_eq(memcmp(want, got, nbytes), 0, "%s: data differs", name);
    free(want);
    free(got);
    return u;
}

/* Checks the file tj_npy_save wrote: version 1.0, the header text, padding to
 * a multiple of 64 bytes ending in '\n'. */
static void expect_header(const char *name, const char *dict)
{
    unsigned char buf[4096];
    size_t n = read_file(tmp_path(name), buf, sizeof buf);
    cr_assert_geq(n, 10);
    cr_expect_eq(memcmp(buf, "\x93NUMPY\x01\x00", 8), 0);
    size_t hl = buf[8] | (size_t)buf[9] << 8;
    cr_expect_eq((10 + hl) % 64, 0, "data starts at a multiple of 64");
    cr_expect_eq(buf[10 + hl - 1], '\n');
    cr_expect_eq(strncmp((const char *)buf + 10, dict, strlen(dict)), 0, "header %.*s", (int)hl, buf + 10);
}

TestSuite(npy, .init = make_tmp_dir, .fini = remove_tmp_dir);

/* ================================ round trips ================================ */

Test(npy, float32_round_trip_keeps_every_bit)
{
    float v[6] = {1.5f, -0.0f, INFINITY, -INFINITY, NAN, 1e-45f};
    tj_tensor *t = tj_tensor_from_data(TJ_FLOAT32, 2, (int64_t[]){2, 3}, v);
    tj_tensor_release(round_trip(t, "f32.npy"));
    expect_header("f32.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }");
    tj_tensor_release(t);
}

Test(npy, float64_round_trip_keeps_every_bit)
{
    double v[4] = {0.1, -0.0, NAN, 4.9e-324};
    tj_tensor *t = tj_tensor_from_data(TJ_FLOAT64, 1, (int64_t[]){4}, v);
    tj_tensor_release(round_trip(t, "f64.npy"));
    expect_header("f64.npy", "{'descr': '<f8', 'fortran_order': False, 'shape': (4,), }");
    tj_tensor_release(t);
}

Test(npy, int64_round_trip_keeps_extremes)
{
    int64_t v[3] = {INT64_MIN, -1, INT64_MAX};
    tj_tensor *t = tj_tensor_from_data(TJ_INT64, 3, (int64_t[]){1, 3, 1}, v);
    tj_tensor *u = round_trip(t, "i64.npy");
    cr_expect_eq(((int64_t *)tj_tensor_data(u))[0], INT64_MIN);
    expect_header("i64.npy", "{'descr': '<i8', 'fortran_order': False, 'shape': (1, 3, 1), }");
    tj_tensor_release(t);
    tj_tensor_release(u);
}

Test(npy, bool_round_trip)
{
    uint8_t v[5] = {1, 0, 0, 1, 1};
    tj_tensor *t = tj_tensor_from_data(TJ_BOOL, 1, (int64_t[]){5}, v);
    tj_tensor_release(round_trip(t, "b.npy"));
    expect_header("b.npy", "{'descr': '|b1', 'fortran_order': False, 'shape': (5,), }");
    tj_tensor_release(t);
}

Test(npy, zero_dim_round_trip)
{
    tj_tensor *t = tj_tensor_scalar_f64(-2.5);
    tj_tensor *u = round_trip(t, "scalar.npy");
    cr_expect_eq(tj_tensor_ndim(u), 0);
    cr_expect_eq(tj_tensor_numel(u), 1);
    cr_expect_eq(tj_tensor_item_at(u, 0), -2.5);
    expect_header("scalar.npy", "{'descr': '<f8', 'fortran_order': False, 'shape': (), }");
    tj_tensor_release(t);
    tj_tensor_release(u);
}

Test(npy, empty_round_trips)
{
    tj_tensor *t = tj_tensor_empty(TJ_FLOAT32, 1, (int64_t[]){0});
    tj_tensor *u = round_trip(t, "empty.npy");
    cr_expect_eq(tj_tensor_numel(u), 0);
    expect_header("empty.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (0,), }");
    tj_tensor *t3 = tj_tensor_empty(TJ_INT64, 3, (int64_t[]){2, 0, 3});
    tj_tensor *u3 = round_trip(t3, "empty3.npy");
    expect_shape(u3, SHAPE(2, 0, 3));
    tj_tensor_release(t);
    tj_tensor_release(u);
    tj_tensor_release(t3);
    tj_tensor_release(u3);
}

Test(npy, non_contiguous_views_are_saved_in_row_major_order)
{
    float v[6] = {0, 1, 2, 3, 4, 5};
    tj_tensor *base = tj_tensor_from_data(TJ_FLOAT32, 2, (int64_t[]){2, 3}, v);
    /* the transpose [3, 2] */
    tj_tensor *tr = tj_tensor_new_view(base, 2, (int64_t[]){3, 2}, (int64_t[]){1, 3}, 0);
    cr_assert(!tj_tensor_is_contiguous(tr));
    tj_tensor *u = round_trip(tr, "transposed.npy");
    static const float want_t[6] = {0, 3, 1, 4, 2, 5};
    for (int i = 0; i < 6; i++) cr_expect_eq(((float *)tj_tensor_data(u))[i], want_t[i], "element %d", i);
    /* every other element from offset 1, and a broadcast (stride 0) row */
    tj_tensor *odd = tj_tensor_new_view(base, 1, (int64_t[]){3}, (int64_t[]){2}, 1);
    tj_tensor *uo = round_trip(odd, "strided.npy");
    static const float want_o[3] = {1, 3, 5};
    for (int i = 0; i < 3; i++) cr_expect_eq(((float *)tj_tensor_data(uo))[i], want_o[i]);
    tj_tensor *bc = tj_tensor_new_view(base, 2, (int64_t[]){2, 3}, (int64_t[]){0, 1}, 3);
    tj_tensor *ub = round_trip(bc, "broadcast.npy");
    static const float want_b[6] = {3, 4, 5, 3, 4, 5};
    for (int i = 0; i < 6; i++) cr_expect_eq(((float *)tj_tensor_data(ub))[i], want_b[i]);
    tj_tensor_release(base);
    tj_tensor_release(tr);
    tj_tensor_release(u);
    tj_tensor_release(odd);
    tj_tensor_release(uo);
    tj_tensor_release(bc);
    tj_tensor_release(ub);
}

Test(npy, save_errors)
{
    tj_tensor *t = tj_tensor_scalar_f32(1);
    cr_expect_eq(tj_npy_save(tmp_path("no/such/dir.npy"), t), TJ_ERR_IO);
    cr_expect(strstr(tj_last_error(), "cannot create") != NULL, "%s", tj_last_error());
    tj_tensor *fake = tj_tensor_fake(TJ_FLOAT32, 1, (int64_t[]){2});
    cr_expect_eq(tj_npy_save(tmp_path("fake.npy"), fake), TJ_ERR_INVALID_ARGUMENT);
    cr_expect(strstr(tj_last_error(), "fake") != NULL);
    cr_expect_eq(access(tmp_path("fake.npy"), F_OK), -1, "nothing written");
    cr_expect_eq(tj_npy_save(NULL, t), TJ_ERR_INVALID_ARGUMENT);
    cr_expect_eq(tj_npy_save(tmp_path("x.npy"), NULL), TJ_ERR_INVALID_ARGUMENT);
    tj_tensor_release(t);
    tj_tensor_release(fake);
}

/* A write that fails (here past a 1 KiB file size limit: EFBIG once
 * SIGXFSZ is ignored; Criterion runs each test in its own process) leaves
 * the file as it was and says why. */
Test(npy, a_failed_save_leaves_the_old_file_and_names_the_reason)
{
    const char *path = tmp_path("keep.npy");
    FILE *f = fopen(path, "wb");
    cr_assert_not_null(f);
    fputs("old", f);
    fclose(f);
    signal(SIGXFSZ, SIG_IGN);
    struct rlimit lim = {1024, 1024};
    cr_assert_eq(setrlimit(RLIMIT_FSIZE, &lim), 0);
    tj_tensor *big = tj_zeros((int64_t[]){4096}, 1, TJ_FLOAT32);
    cr_expect_eq(tj_npy_save(path, big), TJ_ERR_IO);
    char want[512];
    snprintf(want, sizeof want, "tj_npy_save: cannot write '%s': File too large (left as it was)", path);
    cr_expect(strstr(tj_last_error(), want) != NULL, "'%s' lacks '%s'", tj_last_error(), want);
    char got[8] = "";
    f = fopen(path, "rb");
    cr_assert_not_null(f, "the file is gone");
    size_t n = fread(got, 1, sizeof got - 1, f);
    fclose(f);
    cr_expect(n == 3 && strcmp(got, "old") == 0, "the file holds %zu bytes: '%s'", n, got);
    remove(path);
    tj_tensor_release(big);
}

/* ============================ header variants ============================ */

Test(npy, versions_2_and_3_have_four_byte_header_lengths)
{
    unsigned char buf[256];
    const int64_t data[2] = {7, -7};
    for (int major = 2; major <= 3; major++) {
        size_t n = make_npy(buf, major, "{'descr': '<i8', 'fortran_order': False, 'shape': (2,), }\n", data, 16);
        tj_tensor *t = tj_npy_load_buffer(buf, n);
        cr_assert_not_null(t, "version %d: %s", major, tj_last_error());
        expect_shape(t, SHAPE(2));
        cr_expect_eq(tj_tensor_item_at(t, 1), -7.0);
        tj_tensor_release(t);
    }
    /* through a file too */
    size_t n = make_npy(buf, 3, "{\"descr\": \"<f4\", \"fortran_order\": False, \"shape\": ()}", (float[]){3.5f}, 4);
    write_file(tmp_path("v3.npy"), buf, n);
    tj_tensor *t = tj_npy_load(tmp_path("v3.npy"));
    cr_assert_not_null(t, "%s", tj_last_error());
    cr_expect_eq(tj_tensor_ndim(t), 0);
    cr_expect_eq(tj_tensor_item_at(t, 0), 3.5);
    tj_tensor_release(t);
}

Test(npy, keys_in_any_order_with_any_spacing)
{
    unsigned char buf[256];
    size_t n = make_npy(buf, 1, "{ 'shape' :( 2 , 1 ) ,'fortran_order':False,'descr':'<f8' }", (double[]){1, 2}, 16);
    tj_tensor *t = tj_npy_load_buffer(buf, n);
    cr_assert_not_null(t, "%s", tj_last_error());
    expect_shape(t, SHAPE(2, 1));
    cr_expect_eq(tj_tensor_item_at(t, 1), 2.0);
    tj_tensor_release(t);
}

Test(npy, fortran_order_is_converted_to_c_order)
{
    unsigned char buf[512];
    /* a = [[0, 1, 2], [3, 4, 5]] in column-major order */
    const float colmajor[6] = {0, 3, 1, 4, 2, 5};
    size_t n = make_npy(buf, 1, "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }", colmajor, 24);
    tj_tensor *t = tj_npy_load_buffer(buf, n);
    cr_assert_not_null(t, "%s", tj_last_error());
    expect_shape(t, SHAPE(2, 3));
    for (int i = 0; i < 6; i++) cr_expect_eq(tj_tensor_item_at(t, i), (double)i, "element %d", i);
    tj_tensor_release(t);
    /* three dims: element [i][j][k] = 100i + 10j + k, shape (2, 3, 2) */
    int64_t f[12];
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 3; j++)
            for (int k = 0; k < 2; k++) f[i + 2 * j + 6 * k] = 100 * i + 10 * j + k;
    n = make_npy(buf, 1, "{'descr': '<i8', 'fortran_order': True, 'shape': (2, 3, 2), }", f, sizeof f);
    t = tj_npy_load_buffer(buf, n);
    cr_assert_not_null(t, "%s", tj_last_error());
    const int64_t *d = tj_tensor_data(t);
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 3; j++)
            for (int k = 0; k < 2; k++) cr_expect_eq(d[i * 6 + j * 2 + k], 100 * i + 10 * j + k);
    tj_tensor_release(t);
    /* one dim: Fortran and C order agree */
    n = make_npy(buf, 1, "{'descr': '<f4', 'fortran_order': True, 'shape': (3,), }", colmajor, 12);
    t = tj_npy_load_buffer(buf, n);
    cr_assert_not_null(t);
    cr_expect_eq(tj_tensor_item_at(t, 1), 3.0);
    tj_tensor_release(t);
}

Test(npy, bool_bytes_other_than_one_read_as_true)
{
    unsigned char buf[256];
    size_t n = make_npy(buf, 1, "{'descr': '|b1', 'fortran_order': False, 'shape': (3,), }", "\x00\x02\xff", 3);
    tj_tensor *t = tj_npy_load_buffer(buf, n);
    cr_assert_not_null(t, "%s", tj_last_error());
    const uint8_t *d = tj_tensor_data(t);
    cr_expect_eq(d[0], 0);
    cr_expect_eq(d[1], 1);
    cr_expect_eq(d[2], 1);
    tj_tensor_release(t);
}

Test(npy, bytes_after_the_data_are_ignored)
{
    unsigned char buf[256];
    size_t n = make_npy(buf, 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }", (float[]){1, 2}, 8);
    tj_tensor *t = tj_npy_load_buffer(buf, n);
    cr_assert_not_null(t, "%s", tj_last_error());
    cr_expect_eq(tj_tensor_numel(t), 1);
    tj_tensor_release(t);
}

/* ============================= malformed files ============================= */

/* Loads `n` bytes from a buffer and from a file: both must fail with `status`
 * and a message containing `fragment` (the file's message names the file). */
static void expect_rejected(const unsigned char *buf, size_t n, tj_status status, const char *fragment)
{
    tj_clear_error();
    cr_expect_null(tj_npy_load_buffer(buf, n), "accepted a file that should give: %s", fragment);
    cr_expect_eq(tj_last_status(), status, "%s: got %s (%s)", fragment, tj_status_name(tj_last_status()),
                 tj_last_error());
    cr_expect(strstr(tj_last_error(), fragment) != NULL, "message '%s' lacks '%s'", tj_last_error(), fragment);
    cr_expect(strncmp(tj_last_error(), "tj_npy_load:", 12) == 0, "message '%s' names no function", tj_last_error());
    const char *path = tmp_path("bad.npy");
    write_file(path, buf, n);
    tj_clear_error();
    cr_expect_null(tj_npy_load(path));
    cr_expect_eq(tj_last_status(), status, "file: %s", tj_last_error());
    cr_expect(strstr(tj_last_error(), fragment) != NULL, "file: message '%s' lacks '%s'", tj_last_error(), fragment);
    cr_expect(strstr(tj_last_error(), path) != NULL, "file: message '%s' lacks the path", tj_last_error());
}

#define HEADER(descr, fortran, shape) "{'descr': '" descr "', 'fortran_order': " fortran ", 'shape': " shape ", }"

Test(npy, bad_magic_and_short_files)
{
    unsigned char buf[256];
    size_t n = make_npy(buf, 1, HEADER("<f4", "False", "(1,)"), (float[]){1}, 4);
    buf[1] = 'M';
    expect_rejected(buf, n, TJ_ERR_PARSE, "not a .npy file (bad magic)");
    expect_rejected((const unsigned char *)"", 0, TJ_ERR_PARSE, "bad magic");
    expect_rejected((const unsigned char *)"\x93NUMPY\x01", 7, TJ_ERR_PARSE, "bad magic");
    make_npy(buf, 2, HEADER("<f4", "False", "(1,)"), NULL, 0);
    expect_rejected(buf, 11, TJ_ERR_PARSE, "truncated header");
}

Test(npy, unknown_versions_are_unsupported)
{
    unsigned char buf[256];
    size_t n = make_npy(buf, 1, HEADER("<f4", "False", "(1,)"), (float[]){1}, 4);
    buf[6] = 4;
    expect_rejected(buf, n, TJ_ERR_UNSUPPORTED, "format version 4.0");
    buf[6] = 0;
    expect_rejected(buf, n, TJ_ERR_UNSUPPORTED, "format version 0.0");
}

Test(npy, header_length_past_the_end)
{
    unsigned char buf[256];
    size_t n = make_npy(buf, 1, HEADER("<f4", "False", "(1,)"), (float[]){1}, 4);
    buf[8] = 0xff;
    buf[9] = 0xff;
    expect_rejected(buf, n, TJ_ERR_PARSE, "header length 65535 runs past the end");
    n = make_npy(buf, 2, HEADER("<f4", "False", "(1,)"), (float[]){1}, 4);
    memset(buf + 8, 0xff, 4);
    expect_rejected(buf, n, TJ_ERR_PARSE, "runs past the end");
    /* the header itself cut short */
    n = make_npy(buf, 1, HEADER("<f4", "False", "(1,)"), NULL, 0);
    expect_rejected(buf, n - 20, TJ_ERR_PARSE, "runs past the end");
}

Test(npy, truncated_data)
{
    unsigned char buf[256];
    size_t n = make_npy(buf, 1, HEADER("<f8", "False", "(2, 2)"), (double[]){1, 2, 3, 4}, 32);
    expect_rejected(buf, n - 1, TJ_ERR_PARSE, "data for shape [2, 2] needs 32 bytes, file has 31");
    expect_rejected(buf, n - 32, TJ_ERR_PARSE, "needs 32 bytes, file has 0");
    n = make_npy(buf, 1, HEADER("<f4", "False", "()"), NULL, 0);
    expect_rejected(buf, n, TJ_ERR_PARSE, "data for shape [] needs 4 bytes");
}

Test(npy, unsupported_dtypes_and_byte_orders)
{
    static const char *descrs[] = {"<u4", "<u2", "<u8", ">u4", "<c8", "|O", "<U3", "f", "<f4 ", "xf4"};
    unsigned char buf[256];
    for (size_t i = 0; i < sizeof descrs / sizeof *descrs; i++) {
        char header[128];
        snprintf(header, sizeof header, "{'descr': '%s', 'fortran_order': False, 'shape': (1,), }", descrs[i]);
        size_t n = make_npy(buf, 1, header, "\0\0\0\0\0\0\0\0", 8);
        char fragment[64];
        snprintf(fragment, sizeof fragment, "dtype '%s' is not supported", descrs[i]);
        expect_rejected(buf, n, TJ_ERR_UNSUPPORTED, fragment);
    }
    /* a structured dtype is a list, not a string */
    size_t n = make_npy(buf, 1, "{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (1,), }", "\0\0\0\0", 4);
    expect_rejected(buf, n, TJ_ERR_PARSE, "'descr'");
}

/* numpy.load reads every one of these descrs as the same values (numpy
 * 1.24: '=f4', 'f4' and '|f4' are native float32, '>f4' big-endian
 * float32, '?' and '=b1' bool); a big-endian file's bytes are swapped. */
Test(npy, byte_orders_numpy_reads)
{
    static const struct {
        const char *descr;
        tj_dtype dtype;
        bool big;
    } cases[] = {{"=f4", TJ_FLOAT32, false}, {"f4", TJ_FLOAT32, false}, {"|f4", TJ_FLOAT32, false},
                 {">f4", TJ_FLOAT32, true},  {"!f4", TJ_FLOAT32, true},  {"=f8", TJ_FLOAT64, false},
                 {">f8", TJ_FLOAT64, true},  {"i8", TJ_INT64, false},    {">i8", TJ_INT64, true},
                 {"?", TJ_BOOL, false},      {"=b1", TJ_BOOL, false},    {">b1", TJ_BOOL, false}};
    const float f32[3] = {1.5f, -2.0f, 3.25e-3f};
    const double f64[3] = {1.5, -2.0, 3.25e-300};
    const int64_t i64[3] = {INT64_MIN, -2, 0x0102030405060708};
    const bool b[3] = {true, false, true};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        const void *want = cases[i].dtype == TJ_FLOAT32   ? (const void *)f32
                           : cases[i].dtype == TJ_FLOAT64 ? (const void *)f64
                           : cases[i].dtype == TJ_INT64   ? (const void *)i64
                                                          : (const void *)b;
        size_t es = tj_dtype_size(cases[i].dtype);
        unsigned char data[24], buf[256];
        memcpy(data, want, 3 * es);
        if (cases[i].big)
            for (size_t e = 0; e < 3; e++)
                for (size_t k = 0; k < es / 2; k++) {
                    unsigned char c = data[e * es + k];
                    data[e * es + k] = data[e * es + es - 1 - k];
                    data[e * es + es - 1 - k] = c;
                }
        char header[128];
        snprintf(header, sizeof header, "{'descr': '%s', 'fortran_order': False, 'shape': (3,), }", cases[i].descr);
        size_t n = make_npy(buf, 1, header, data, 3 * es);
        tj_tensor *t = tj_npy_load_buffer(buf, n);
        cr_assert_not_null(t, "%s: %s", cases[i].descr, tj_last_error());
        cr_expect_eq(tj_tensor_dtype(t), cases[i].dtype, "%s", cases[i].descr);
        cr_expect_eq(memcmp(tj_tensor_data(t), want, 3 * es), 0, "%s: values differ", cases[i].descr);
        tj_tensor_release(t);
    }
}

/* Old numpy (Python 2) wrote sizes as longs; numpy 1.24 reads (4L,) and
 * (2L, 3L) in 1.0 and 2.0 files and refuses them in 3.0 ("Cannot parse
 * header"). */
Test(npy, python2_long_sizes)
{
    unsigned char buf[256];
    const float v[6] = {0, 1, 2, 3, 4, 5};
    for (int major = 1; major <= 2; major++) {
        size_t n = make_npy(buf, major, HEADER("<f4", "False", "(2L, 3L)"), v, sizeof v);
        tj_tensor *t = tj_npy_load_buffer(buf, n);
        cr_assert_not_null(t, "%s", tj_last_error());
        expect_shape(t, 2, (int64_t[]){2, 3});
        cr_expect_eq(memcmp(tj_tensor_data(t), v, sizeof v), 0);
        tj_tensor_release(t);
        n = make_npy(buf, major, HEADER("<f4", "False", "(4L,)"), v, 16);
        t = tj_npy_load_buffer(buf, n);
        cr_assert_not_null(t, "%s", tj_last_error());
        expect_shape(t, 1, (int64_t[]){4});
        tj_tensor_release(t);
    }
    size_t n = make_npy(buf, 3, HEADER("<f4", "False", "(4L,)"), v, 16);
    expect_rejected(buf, n, TJ_ERR_PARSE, "'shape'");
    n = make_npy(buf, 1, HEADER("<f4", "False", "(4LL,)"), v, 16);
    expect_rejected(buf, n, TJ_ERR_PARSE, "'shape'");
}

Test(npy, missing_keys)
{
    unsigned char buf[256];
    size_t n = make_npy(buf, 1, "{'fortran_order': False, 'shape': (1,), }", "\0\0\0\0", 4);
    expect_rejected(buf, n, TJ_ERR_PARSE, "header has no 'descr'");
    n = make_npy(buf, 1, "{'descr': '<f4', 'shape': (1,), }", "\0\0\0\0", 4);
    expect_rejected(buf, n, TJ_ERR_PARSE, "header has no 'fortran_order'");
    n = make_npy(buf, 1, "{'descr': '<f4', 'fortran_order': False, }", "\0\0\0\0", 4);
    expect_rejected(buf, n, TJ_ERR_PARSE, "header has no 'shape'");
    n = make_npy(buf, 1, "", "\0\0\0\0", 4);
    expect_rejected(buf, n, TJ_ERR_PARSE, "header has no 'descr'");
    n = make_npy(buf, 1, "{'descr': '<f4', 'fortran_order': False, 'shape': [1], }", "\0\0\0\0", 4);
    expect_rejected(buf, n, TJ_ERR_PARSE, "header has no 'shape' tuple");
    n = make_npy(buf, 1, "{'descr': '<f4', 'fortran_order': maybe, 'shape': (1,), }", "\0\0\0\0", 4);
    expect_rejected(buf, n, TJ_ERR_PARSE, "'fortran_order' is not True or False");
    n = make_npy(buf, 1, "{'descr': '<f4", "\0\0\0\0", 0);
    expect_rejected(buf, n, TJ_ERR_PARSE, "'descr'");
    n = make_npy(buf, 1, "{'descr'", "", 0);
    expect_rejected(buf, n, TJ_ERR_PARSE, "header has no 'descr'");
}

/* numpy reads the header as a Python dict literal and refuses any key but
 * the three: a repeated key (numpy keeps its last value, the reader read
 * its first: shape [2, 3] where numpy reads [6]), another key, and a shape
 * that is no tuple ((2) is the number 2, (2 3) no Python at all) are
 * refused, not read otherwise than numpy reads them. */
Test(npy, headers_numpy_reads_otherwise_are_refused)
{
    unsigned char buf[256];
    static const char zeros[24] = {0};
    static const struct {
        const char *header, *fragment;
    } bad[] = {
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), 'shape': (6,), }", "header key 'shape' given twice"},
        {"{'descr': '<f4', 'descr': '<f8', 'fortran_order': False, 'shape': (3,), }", "header key 'descr' given twice"},
        {"{'descr': '<f4', 'fortran_order': True, 'fortran_order': False, 'shape': (3,), }",
         "header key 'fortran_order' given twice"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'extra': 1}",
         "header key 'extra' is not one of 'descr', 'fortran_order' and 'shape'"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (2), }", "'shape' (2) is a number, not a tuple: (2,)"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (2 3), }", "expected ',' or ')' after a size in 'shape'"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        size_t n = make_npy(buf, 1, bad[i].header, zeros, sizeof zeros);
        expect_rejected(buf, n, TJ_ERR_PARSE, bad[i].fragment);
    }
    /* a key's name inside a value is no key; a trailing comma is fine */
    size_t n = make_npy(buf, 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3,), }", zeros, sizeof zeros);
    tj_tensor *t = tj_npy_load_buffer(buf, n);
    cr_assert_not_null(t, "%s", tj_last_error());
    expect_shape(t, SHAPE(2, 3));
    tj_tensor_release(t);
}

/* A NUL byte inside the dtype string: numpy understands no '<f4\0' (the
 * reader's strcmp stopped at the NUL and read float32). */
Test(npy, descr_with_a_nul_byte_is_refused)
{
    unsigned char buf[256];
    size_t n = make_npy(buf, 1, "{'descr': '<f4#', 'fortran_order': False, 'shape': (1,), }", "\0\0\0\0", 4);
    unsigned char *mark = memchr(buf, '#', n);
    cr_assert_not_null(mark);
    *mark = '\0';
    expect_rejected(buf, n, TJ_ERR_UNSUPPORTED, "dtype 'descr' holds a NUL byte (byte 3 of 4)");
}

Test(npy, garbage_in_shape)
{
    static const char *shapes[] = {"(2, x)", "(-1,)", "(2.5,)", "(,)", "(2,,3)", "(1", "(", "(0x10,)", "(1e3,)"};
    unsigned char buf[256];
    for (size_t i = 0; i < sizeof shapes / sizeof *shapes; i++) {
        char header[128];
        snprintf(header, sizeof header, "{'descr': '<f4', 'fortran_order': False, 'shape': %s", shapes[i]);
        size_t n = make_npy(buf, 1, header, "\0\0\0\0\0\0\0\0", 8);
        tj_clear_error();
        cr_expect_null(tj_npy_load_buffer(buf, n), "accepted shape %s", shapes[i]);
        cr_expect_eq(tj_last_status(), TJ_ERR_PARSE, "shape %s: %s", shapes[i], tj_last_error());
        cr_expect(strstr(tj_last_error(), "'shape'") != NULL, "shape %s: %s", shapes[i], tj_last_error());
    }
}

Test(npy, shape_overflow)
{
    unsigned char buf[256];
    size_t n = make_npy(buf, 1, HEADER("<f4", "False", "(99999999999999999999,)"), "\0\0\0\0", 4);
    expect_rejected(buf, n, TJ_ERR_OVERFLOW, "a size in 'shape' overflows");
    n = make_npy(buf, 1, HEADER("<f4", "False", "(4294967296, 4294967296, 16)"), "\0\0\0\0", 4);
    expect_rejected(buf, n, TJ_ERR_OVERFLOW, "element count of shape [4294967296, 4294967296, 16] overflows");
    /* fits in int64 elements, but not in bytes */
    n = make_npy(buf, 1, HEADER("<f8", "False", "(1152921504606846976, 2)"), "\0\0\0\0", 4);
    expect_rejected(buf, n, TJ_ERR_OVERFLOW, "overflows");
    /* large but representable: a clean "file too short" */
    n = make_npy(buf, 1, HEADER("<f8", "False", "(1000000, 1000000)"), "\0\0\0\0", 4);
    expect_rejected(buf, n, TJ_ERR_PARSE, "needs 8000000000000 bytes, file has 4");
    n = make_npy(buf, 1, HEADER("<f4", "False", "(1, 1, 1, 1, 1, 1, 1, 1, 1)"), "\0\0\0\0", 4);
    expect_rejected(buf, n, TJ_ERR_UNSUPPORTED, "more than 8 dims");
    /* an empty dim gives 0 elements, but the other sizes must still give
     * representable strides */
    n = make_npy(buf, 1, HEADER("<f4", "False", "(0, 9223372036854775807)"), NULL, 0);
    expect_rejected(buf, n, TJ_ERR_OVERFLOW, "element count of shape [0, 9223372036854775807] overflows");
    n = make_npy(buf, 1, HEADER("<f4", "False", "(0, 1000000000000)"), NULL, 0);
    tj_tensor *t = tj_npy_load_buffer(buf, n);
    cr_expect_not_null(t, "%s", tj_last_error());
    cr_expect_eq(tj_tensor_numel(t), 0);
    tj_tensor_release(t);
}

Test(npy, unreadable_paths_are_io_errors)
{
    cr_expect_null(tj_npy_load(tmp_path("missing.npy")));
    cr_expect_eq(tj_last_status(), TJ_ERR_IO);
    cr_expect(strstr(tj_last_error(), "cannot open") != NULL, "%s", tj_last_error());
    cr_expect(strstr(tj_last_error(), "missing.npy") != NULL, "%s", tj_last_error());
    cr_expect_null(tj_npy_load(tmp_dir), "a directory");
    cr_expect_eq(tj_last_status(), TJ_ERR_IO, "a directory: %s", tj_last_error());
    cr_expect_null(tj_npy_load(NULL));
    cr_expect_eq(tj_last_status(), TJ_ERR_INVALID_ARGUMENT);
    cr_expect_null(tj_npy_load_buffer(NULL, 10));
    cr_expect_eq(tj_last_status(), TJ_ERR_INVALID_ARGUMENT);
    write_file(tmp_path("empty.npy"), "", 0);
    cr_expect_null(tj_npy_load(tmp_path("empty.npy")));
    cr_expect_eq(tj_last_status(), TJ_ERR_PARSE, "%s", tj_last_error());
}

/* Every single-byte corruption of the header and every truncation either
 * loads a tensor or reports an error: none crashes (run under ASan/valgrind
 * to catch out-of-bounds reads). */
Test(npy, corrupted_bytes_never_crash)
{
    unsigned char good[256], buf[256];
    size_t n = make_npy(good, 1, HEADER("<f4", "False", "(2, 3)"), (float[]){1, 2, 3, 4, 5, 6}, 24);
    static const unsigned char subst[] = {0, ' ', '\'', '(', ')', ',', '9', 'x', 0xff};
    for (size_t i = 0; i < n - 24; i++) {
        for (size_t s = 0; s < sizeof subst; s++) {
            memcpy(buf, good, n);
            buf[i] = subst[s];
            tj_clear_error();
            tj_tensor *t = tj_npy_load_buffer(buf, n);
            if (t) tj_tensor_release(t);
            else cr_expect_neq(tj_last_status(), TJ_OK, "byte %zu = %u: NULL without an error", i, subst[s]);
        }
    }
    for (size_t len = 0; len < n; len++) {
        tj_clear_error();
        cr_expect_null(tj_npy_load_buffer(good, len), "truncated to %zu bytes", len);
        cr_expect_neq(tj_last_status(), TJ_OK);
    }
}

/* ======================== allocation-failure injection ======================== */

/* count_allocations (alloc_counter.h), with the temporary directory made. */
static void count_allocations_in_tmp(void)
{
    make_tmp_dir();
    count_allocations();
}

/* Fails the 1st, 2nd, ... allocation of a load until one succeeds. */
static void load_with_failures(const char *path, bool scoped)
{
    int64_t base = live_allocations();
    for (uint64_t k = 1;; k++) {
        cr_assert_lt(k, 100, "never succeeded");
        tj_clear_error();
        tj_scope *s = scoped ? tj_scope_begin() : NULL;
        tj_debug_fail_allocation(k);
        tj_tensor *t = tj_npy_load(path);
        tj_debug_fail_allocation(0);
        if (t) {
            cr_expect_gt(k, 1, "the first allocation was never failed");
            cr_expect_eq(tj_tensor_item_at(t, 5), 5.0);
            if (scoped) tj_scope_end(s);
            else tj_tensor_release(t);
            break;
        }
        cr_expect_eq(tj_last_status(), TJ_ERR_OUT_OF_MEMORY, "allocation %d: %s", (int)k, tj_last_error());
        cr_expect(strstr(tj_last_error(), "out of memory") != NULL, "%s", tj_last_error());
        if (scoped) tj_scope_end(s);
        /* a scope's own bookkeeping vector, once allocated, stays */
        cr_expect_leq(live_allocations() - base, scoped ? 1 : 0, "allocation %d failed: %lld allocations leaked", (int)k,
                      (long long)(live_allocations() - base));
    }
    cr_expect_leq(live_allocations() - base, scoped ? 1 : 0, "after success");
}

Test(npy_alloc, every_failing_allocation_is_out_of_memory_and_leaks_nothing, .init = count_allocations_in_tmp,
     .fini = remove_tmp_dir)
{
    float v[8] = {0, 1, 2, 3, 4, 5, 6, 7};
    unsigned char buf[256];
    size_t n = make_npy(buf, 1, HEADER("<f4", "False", "(2, 4)"), v, sizeof v);
    write_file(tmp_path("a.npy"), buf, n);
    load_with_failures(tmp_path("a.npy"), false);
    load_with_failures(tmp_path("a.npy"), true);
    cr_expect_eq(tj_debug_fail_allocation(0), 0, "injection is off again");
}
