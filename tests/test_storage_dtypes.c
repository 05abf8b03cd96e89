/* The storage dtypes (int32, uint8, int8, int16, float16, bfloat16;
 * tjit/core.h): conversions bit for bit as PyTorch 1.13 makes them on this
 * machine (the reference values below are torch's outputs), promotion,
 * the data-moving operators that take them, make_fx and replay of a
 * uint8 -> float32 input pipeline, and the files and DLPack (arithmetic on
 * them: test_storage_compute.c). */
#include <criterion/criterion.h>
#include <dlpack/dlpack.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "kernels/dtype_convert.h"
#include "test_util.h"
#include "tjit/dlpack.h"
#include "tjit/graph.h"
#include "tjit/inplace.h"
#include "tjit/plan.h"
#include "tjit/safetensors.h"

TestSuite(storage_dtypes, .init = test_scope_open, .fini = test_scope_close);

static const tj_dtype STORAGE[] = {TJ_INT32, TJ_UINT8, TJ_INT8, TJ_INT16, TJ_FLOAT16, TJ_BFLOAT16};
#define N_STORAGE (int)(sizeof STORAGE / sizeof *STORAGE)

static tj_tensor *converted(tj_tensor *x, tj_dtype dt)
{
    tj_tensor *y = tj_to_copy(x, (int)dt);
    cr_assert_not_null(y, "%s", tj_last_error());
    cr_assert_eq(tj_tensor_dtype(y), dt);
    return y;
}

/* torch.tensor([65519., 65520., 1e-8, 5.96e-8, 0.1, nan, -0.0]).to(torch.float16).view(torch.int16) */
Test(storage_dtypes, float32_to_float16_rounds_as_torch)
{
    const float x[] = {65519.0f, 65520.0f, 1e-8f, 5.96e-8f, 0.1f, NAN, -0.0f, -65520.0f, 1.0f, 0x1p-14f, 0x1.ffcp-15f};
    const uint16_t want[] = {0x7bff, 0x7c00, 0x0000, 0x0001, 0x2e66, 0x7e00, 0x8000, 0xfc00, 0x3c00, 0x0400, 0x0400};
    tj_tensor *h = converted(test_f32(1, (int64_t[]){11}, x), TJ_FLOAT16);
    cr_expect_arr_eq(tj_tensor_data(h), want, sizeof want);
    /* float64 goes through float32, as c10::Half(double) does: 0.1 -> 0x2e66 too */
    tj_tensor *d = converted(test_f64(1, (int64_t[]){1}, (double[]){0.1}), TJ_FLOAT16);
    cr_expect_eq(*(uint16_t *)tj_tensor_data(d), 0x2e66);
}

/* Every float16 value goes to float32 exactly and back unchanged; a NaN
 * stays a NaN of its sign. */
Test(storage_dtypes, every_float16_round_trips_through_float32)
{
    uint16_t all[65536];
    for (int i = 0; i < 65536; i++) all[i] = (uint16_t)i;
    tj_tensor *h = test_tensor(TJ_FLOAT16, 1, (int64_t[]){65536}, all);
    tj_tensor *f = converted(h, TJ_FLOAT32), *back = converted(f, TJ_FLOAT16);
    const float *fv = tj_tensor_data(f);
    const uint16_t *bv = tj_tensor_data(back);
    cr_expect_eq(fv[0x0001], 0x1p-24f);
    cr_expect_eq(fv[0x3c00], 1.0f);
    cr_expect_eq(fv[0x7bff], 65504.0f);
    cr_expect(isinf(fv[0xfc00]) && fv[0xfc00] < 0);
    for (int i = 0; i < 65536; i++) {
        bool nan = (i & 0x7c00) == 0x7c00 && (i & 0x3ff);
        if (nan) cr_assert(isnan(fv[i]) && (bv[i] & 0x8000) == (i & 0x8000) && (bv[i] & 0x7e00) == 0x7e00, "%04x", i);
        else cr_assert_eq(bv[i], i, "%04x -> %a -> %04x", i, fv[i], bv[i]);
    }
}

/* torch.tensor([0.1, 1.00390625, 1.01171875, 3e38]).to(torch.bfloat16).view(torch.int16):
 * ties go to even */
Test(storage_dtypes, float32_to_bfloat16_rounds_to_nearest_even)
{
    const float x[] = {0.1f, 1.00390625f, 1.01171875f, -2.0f, INFINITY};
    const uint16_t want[] = {15821, 16256, 16258, 0xc000, 0x7f80};
    tj_tensor *b = converted(test_f32(1, (int64_t[]){5}, x), TJ_BFLOAT16);
    cr_expect_arr_eq(tj_tensor_data(b), want, sizeof want);
    tj_tensor *f = converted(b, TJ_FLOAT32);
    cr_expect_eq(((float *)tj_tensor_data(f))[1], 1.0f);
    cr_expect_eq(((float *)tj_tensor_data(f))[2], 1.015625f);
}

/* torch.tensor([300., -1., nan, 3e9, -3.7, 1e20]).to(dt): through int32 on x86 */
Test(storage_dtypes, floats_to_integers_as_torch_on_x86)
{
    tj_tensor *x = test_f32(1, (int64_t[]){6}, (float[]){300.0f, -1.0f, NAN, 3e9f, -3.7f, 1e20f});
    const uint8_t u8[] = {44, 255, 0, 0, 253, 0};
    const int8_t i8[] = {44, -1, 0, 0, -3, 0};
    const int16_t i16[] = {300, -1, 0, 0, -3, 0};
    const int32_t i32[] = {300, -1, INT32_MIN, INT32_MIN, -3, INT32_MIN};
    cr_expect_arr_eq(tj_tensor_data(converted(x, TJ_UINT8)), u8, sizeof u8);
    cr_expect_arr_eq(tj_tensor_data(converted(x, TJ_INT8)), i8, sizeof i8);
    cr_expect_arr_eq(tj_tensor_data(converted(x, TJ_INT16)), i16, sizeof i16);
    cr_expect_arr_eq(tj_tensor_data(converted(x, TJ_INT32)), i32, sizeof i32);
    /* uint8 goes through int64 (c10's static_cast_with_inter_type): torch.tensor([4294967295.7, 4294967301.0,
     * -6669795369.4], dtype=torch.float64).to(torch.uint8) */
    tj_tensor *big = test_f64(1, (int64_t[]){3}, (double[]){4294967295.7, 4294967301.0, -6669795369.4});
    cr_expect_arr_eq(tj_tensor_data(converted(big, TJ_UINT8)), ((uint8_t[]){255, 5, 215}), 3);
}

/* Integers narrow by wrapping and widen exactly; every pair of dtypes
 * converts (here 1, 0, 255 -> each dtype -> int64). */
Test(storage_dtypes, integers_wrap_and_every_pair_converts)
{
    tj_tensor *x = test_i64(1, (int64_t[]){4}, (int64_t[]){70000, -129, 255, 1});
    const int16_t i16[] = {4464, -129, 255, 1};
    const int8_t i8[] = {112, 127, -1, 1};
    cr_expect_arr_eq(tj_tensor_data(converted(x, TJ_INT16)), i16, sizeof i16);
    cr_expect_arr_eq(tj_tensor_data(converted(x, TJ_INT8)), i8, sizeof i8);
    tj_tensor *small = test_i64(1, (int64_t[]){3}, (int64_t[]){1, 0, 100});
    for (int from = 0; from < TJ_NUM_DTYPES; from++)
        for (int to = 0; to < TJ_NUM_DTYPES; to++) {
            tj_tensor *a = converted(converted(small, (tj_dtype)from), (tj_dtype)to);
            tj_tensor *back = converted(a, TJ_INT64);
            const int64_t *v = tj_tensor_data(back);
            bool boolean = from == TJ_BOOL || to == TJ_BOOL;
            cr_expect(v[0] == 1 && v[1] == 0 && v[2] == (boolean ? 1 : 100), "%s -> %s: %ld %ld %ld",
                      tj_dtype_name((tj_dtype)from), tj_dtype_name((tj_dtype)to), (long)v[0], (long)v[1], (long)v[2]);
        }
}

/* torch.cat promotes as torch.promote_types */
Test(storage_dtypes, cat_promotes_as_torch)
{
    const struct {
        tj_dtype a, b, want;
    } cases[] = {{TJ_UINT8, TJ_INT8, TJ_INT16},       {TJ_FLOAT16, TJ_BFLOAT16, TJ_FLOAT32},
                 {TJ_INT32, TJ_FLOAT16, TJ_FLOAT16},  {TJ_UINT8, TJ_BOOL, TJ_UINT8},
                 {TJ_INT32, TJ_INT64, TJ_INT64},      {TJ_BFLOAT16, TJ_FLOAT64, TJ_FLOAT64},
                 {TJ_INT16, TJ_UINT8, TJ_INT16},      {TJ_INT8, TJ_FLOAT32, TJ_FLOAT32}};
    tj_tensor *x = test_f32(1, (int64_t[]){2}, (float[]){1.0f, 2.0f});
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        tj_tensor *parts[2] = {converted(x, cases[i].a), converted(x, cases[i].b)};
        tj_tensor *c = tj_cat(parts, 2, 0);
        cr_assert_not_null(c, "%s", tj_last_error());
        cr_expect_eq(tj_tensor_dtype(c), cases[i].want, "%s with %s: %s", tj_dtype_name(cases[i].a),
                     tj_dtype_name(cases[i].b), tj_dtype_name(tj_tensor_dtype(c)));
        tj_tensor *f = converted(c, TJ_FLOAT32);
        const float *v = tj_tensor_data(f);
        float a2 = cases[i].a == TJ_BOOL ? 1 : 2, b2 = cases[i].b == TJ_BOOL ? 1 : 2; /* bool(2) is true */
        cr_expect(v[0] == 1 && v[1] == a2 && v[2] == 1 && v[3] == b2, "%s with %s: %g %g %g %g",
                  tj_dtype_name(cases[i].a), tj_dtype_name(cases[i].b), v[0], v[1], v[2], v[3]);
    }
}

/* Views, a transposed copy, flip, padding and fills on int16 data keep
 * the values bit for bit. */
Test(storage_dtypes, views_copies_and_fills_move_the_data)
{
    int16_t data[6] = {1, -2, 3, -4, 5, 30000};
    tj_tensor *x = test_tensor(TJ_INT16, 2, (int64_t[]){2, 3}, data);
    tj_tensor *t = tj_contiguous(tj_permute(x, (int64_t[]){1, 0}, 2));
    cr_assert_not_null(t, "%s", tj_last_error());
    const int16_t want_t[] = {1, -4, -2, 5, 3, 30000};
    cr_expect_arr_eq(tj_tensor_data(t), want_t, sizeof want_t);
    tj_tensor *f = tj_flip(x, (int64_t[]){1}, 1);
    cr_assert_not_null(f, "%s", tj_last_error());
    const int16_t want_f[] = {3, -2, 1, 30000, 5, -4};
    cr_expect_arr_eq(tj_tensor_data(f), want_f, sizeof want_f);
    tj_tensor *p = tj_constant_pad_nd(x, (int64_t[]){1, 0}, 2, tj_v_int(-7));
    cr_assert_not_null(p, "%s", tj_last_error());
    const int16_t want_p[] = {-7, 1, -2, 3, -7, -4, 5, 30000};
    cr_expect_arr_eq(tj_tensor_data(p), want_p, sizeof want_p);
    tj_tensor *h = tj_full((int64_t[]){3}, 1, tj_v_float(0.1), TJ_FLOAT16);
    cr_assert_not_null(h, "%s", tj_last_error());
    const uint16_t want_h[] = {0x2e66, 0x2e66, 0x2e66};
    cr_expect_arr_eq(tj_tensor_data(h), want_h, sizeof want_h);
    tj_tensor *u = tj_full((int64_t[]){2}, 1, tj_v_int(-1), TJ_UINT8); /* torch.full((2,), -1, dtype=torch.uint8) */
    cr_assert_not_null(u, "%s", tj_last_error());
    cr_expect_eq(((uint8_t *)tj_tensor_data(u))[1], 255);
    tj_tensor *s = tj_select(x, 0, 1);
    cr_assert_not_null(s, "%s", tj_last_error());
    cr_expect_eq(tj_tensor_item_at(s, 2), 30000.0);
    /* in place through a strided view: fill_ and zero_ */
    cr_assert_not_null(tj_fill_(tj_select(x, 1, 1), tj_v_int(-9)), "%s", tj_last_error());
    cr_assert_not_null(tj_zero_(tj_select(x, 1, 2)), "%s", tj_last_error());
    const int16_t want_x[] = {1, -9, 0, -4, -9, 0};
    cr_expect_arr_eq(tj_tensor_data(x), want_x, sizeof want_x);
}

/* The creation operators make every storage dtype with its values. */
Test(storage_dtypes, creation_operators_make_them)
{
    for (int k = 0; k < N_STORAGE; k++) {
        tj_dtype dt = STORAGE[k];
        tj_tensor *made[] = {tj_ones((int64_t[]){3}, 1, dt), tj_zeros((int64_t[]){3}, 1, dt),
                             tj_new_full(tj_ones((int64_t[]){1}, 1, dt), (int64_t[]){3}, 1, tj_v_int(5), TJ_DTYPE_NONE),
                             tj_ones_like(tj_zeros((int64_t[]){3}, 1, TJ_FLOAT32), dt),
                             tj_scalar_tensor(tj_v_float(-2.0), dt)};
        const double want[] = {1, 0, 5, 1, -2};
        for (int i = 0; i < 5; i++) {
            cr_assert_not_null(made[i], "%s %d: %s", tj_dtype_name(dt), i, tj_last_error());
            cr_expect_eq(tj_tensor_dtype(made[i]), dt);
            double w = dt == TJ_UINT8 && want[i] < 0 ? 256 + want[i] : want[i];
            cr_expect_eq(tj_tensor_item_at(made[i], 0), w, "%s %d: %g", tj_dtype_name(dt), i,
                         tj_tensor_item_at(made[i], 0));
        }
    }
}

/* copy_ goes through the elementwise iterator, whose gathers, scatters and
 * broadcast values move 2-byte elements too: a transposed source and
 * destination, a broadcast column and a 0-dim value into float16 / int16
 * (these moved 8 bytes an element, past the buffer's end). */
Test(storage_dtypes, copy_through_strided_and_broadcast_2_byte_operands)
{
    int64_t n = 64;
    tj_tensor *src = tj_contiguous(tj_t(tj_view(tj_arange(tj_v_int(0), tj_v_int(n * n), tj_v_int(1), TJ_FLOAT32), (int64_t[]){n, n}, 2)));
    tj_tensor *h = tj_zeros((int64_t[]){n, n}, 2, TJ_FLOAT16);
    cr_assert_not_null(tj_copy_(tj_t(h), src), "%s", tj_last_error()); /* h = the arange, row-major */
    tj_tensor *back = converted(h, TJ_FLOAT32);
    for (int64_t i = 0; i < n * n; i++) /* float16 holds integers up to 2048 exactly, then steps of 2 */
        cr_assert_eq(((float *)tj_tensor_data(back))[i], (float)tj_k_f16_to_f32(tj_k_f32_to_f16((float)i)), "%ld",
                     (long)i);
    int16_t data[12];
    for (int i = 0; i < 12; i++) data[i] = (int16_t)i;
    tj_tensor *x16 = test_tensor(TJ_INT16, 2, (int64_t[]){3, 4}, data);
    tj_tensor *col = tj_empty((int64_t[]){3}, 1, TJ_INT16);
    cr_assert_not_null(tj_copy_(col, tj_select(x16, 1, 1)), "%s", tj_last_error());
    cr_expect_arr_eq(tj_tensor_data(col), ((int16_t[]){1, 5, 9}), 6);
    tj_tensor *wide = tj_zeros((int64_t[]){3, 600}, 2, TJ_FLOAT16);
    cr_assert_not_null(tj_copy_(wide, test_f32(2, (int64_t[]){3, 1}, (float[]){1.5f, -2.0f, 0.25f})), "%s",
                       tj_last_error());
    const double rows[3] = {1.5, -2.0, 0.25};
    for (int r = 0; r < 3; r++)
        for (int c = 0; c < 600; c++) cr_assert_eq(tj_tensor_item_at(wide, r * 600 + c), rows[r], "%d %d", r, c);
    tj_tensor *b = tj_zeros((int64_t[]){7, 600}, 2, TJ_BFLOAT16);
    cr_assert_not_null(tj_copy_(b, tj_scalar_tensor(tj_v_float(3.0), TJ_FLOAT64)), "%s", tj_last_error());
    for (int i = 0; i < 7 * 600; i++) cr_assert_eq(tj_tensor_item_at(b, i), 3.0, "%d", i);
}

/* c10::checked_convert's messages: "value cannot be converted to type
 * uint8_t without overflow" for torch.full((1,), 300, dtype=torch.uint8). */
Test(storage_dtypes, fill_values_that_overflow_are_refused)
{
    const struct {
        tj_value v;
        tj_dtype dt;
    } bad[] = {{tj_v_int(300), TJ_UINT8},       {tj_v_int(-256), TJ_UINT8},       {tj_v_float(255.5), TJ_UINT8},
               {tj_v_int(200), TJ_INT8},        {tj_v_int(-40000), TJ_INT16},     {tj_v_int(2147483648), TJ_INT32},
               {tj_v_float(70000.0), TJ_FLOAT16}, {tj_v_float(65519.0), TJ_FLOAT16}, {tj_v_int(70000), TJ_FLOAT16},
               {tj_v_float(1e39), TJ_BFLOAT16}};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        cr_expect_null(tj_full((int64_t[]){1}, 1, bad[i].v, bad[i].dt), "case %zu", i);
        char want[64];
        snprintf(want, sizeof want, "cannot be converted to type %s without overflow", tj_dtype_name(bad[i].dt));
        cr_expect(strstr(tj_last_error(), want) && strstr(tj_last_error(), "aten::full"), "case %zu: %s", i,
                  tj_last_error());
    }
    cr_expect_not_null(tj_full((int64_t[]){1}, 1, tj_v_float(INFINITY), TJ_FLOAT16), "%s", tj_last_error());
    cr_expect_not_null(tj_full((int64_t[]){1}, 1, tj_v_int(-255), TJ_UINT8), "%s", tj_last_error());
}

/* The input pipeline of an image model: uint8 pixels -> float32 / 255. */
static tj_status normalise(void *ctx, tj_tensor *const *in, int n, tj_tensor **out, int *n_out)
{
    (void)ctx, (void)n;
    out[0] = tj_mul(tj_to_copy(tj_permute(in[0], (int64_t[]){1, 0}, 2), TJ_FLOAT32),
                    tj_scalar_tensor(tj_v_float(1.0 / 255.0), TJ_FLOAT32));
    *n_out = 1;
    return out[0] ? TJ_OK : tj_last_status();
}

Test(storage_dtypes, make_fx_and_replay_a_uint8_input)
{
    uint8_t pixels[6] = {0, 17, 255, 128, 3, 250};
    tj_tensor *x = test_tensor(TJ_UINT8, 2, (int64_t[]){2, 3}, pixels);
    for (int mode = TJ_TRACE_REAL; mode <= TJ_TRACE_FAKE; mode++) {
        tj_graph *g = tj_make_fx(normalise, NULL, &x, 1, NULL, (tj_tracing_mode)mode);
        cr_assert_not_null(g, "%s", tj_last_error());
        char *text = tj_graph_to_string(g);
        cr_assert_not_null(text);
        cr_expect(strstr(text, "u8[2, 3]") && strstr(text, "dtype = torch.float32"), "%s", text);
        tj_graph *again = tj_graph_parse(text);
        cr_assert_not_null(again, "%s\n%s", tj_last_error(), text);
        free(text);
        tj_plan *p = tj_compile(again, NULL);
        cr_assert_not_null(p, "%s", tj_last_error());
        tj_tensor *y = NULL;
        cr_assert_eq(tj_plan_run(p, &x, 1, &y), TJ_OK, "%s", tj_last_error());
        const float *v = tj_tensor_data(y);
        const int order[6] = {0, 3, 1, 4, 2, 5};
        for (int i = 0; i < 6; i++) cr_expect_eq(v[i], (float)pixels[order[i]] * (float)(1.0 / 255.0), "%d", i);
        tj_tensor_release(y);
        tj_plan_free(p);
        tj_graph_free(again);
        tj_graph_free(g);
    }
}

/* A graph constant of each storage dtype prints and parses back exactly. */
Test(storage_dtypes, graph_constants_print_and_parse_back)
{
    const char *text = "graph(%x : f32[2]):\n"
                       "    %c : bf16[2] = constant([0.10009765625, -3.0])\n"
                       "    %d : i32[2] = constant([2147483647, -5])\n"
                       "    %e : u8[2] = constant([255, 0])\n"
                       "    %f = aten._to_copy.default(%c, dtype = torch.float32)\n"
                       "    return (%f, %d, %e)\n";
    tj_graph *g = tj_graph_parse(text);
    cr_assert_not_null(g, "%s", tj_last_error());
    char *printed = tj_graph_to_string(g);
    cr_assert_not_null(printed);
    cr_expect(strstr(printed, "bf16[2] = constant([0.100097656, -3.0])") &&
                  strstr(printed, "i32[2] = constant([2147483647, -5])") && strstr(printed, "u8[2] = constant([255, 0])"),
              "%s", printed);
    free(printed);
    tj_graph_free(g);
    cr_expect_null(tj_graph_parse("graph(%x : f32[2]):\n"
                                  "    %e : u8[1] = constant([256])\n"
                                  "    return (%e,)\n"));
    cr_expect(strstr(tj_last_error(), "cannot be converted to type uint8 without overflow"), "%s", tj_last_error());
}

static char *tmp_path(const char *name)
{
    static char path[256];
    snprintf(path, sizeof path, "/tmp/tjit_storage_%d_%s", (int)getpid(), name);
    return path;
}

/* Every dtype through a safetensors file (huggingface's names: I32, U8,
 * I8, I16, F16, BF16) and, but bfloat16, a .npy file. */
Test(storage_dtypes, files_keep_every_dtype)
{
    tj_tensor *x = test_f32(2, (int64_t[]){2, 2}, (float[]){1.5f, -2.0f, 0.0f, 100.0f});
    tj_tensor *ts[N_STORAGE];
    const char *names[N_STORAGE] = {"i32", "u8", "i8", "i16", "f16", "bf16"};
    for (int k = 0; k < N_STORAGE; k++) ts[k] = converted(x, STORAGE[k]);
    const char *path = tmp_path("all.safetensors");
    cr_assert_eq(tj_safetensors_save(path, names, ts, N_STORAGE), TJ_OK, "%s", tj_last_error());
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f);
    char head[1024] = {0};
    size_t got = fread(head, 1, sizeof head - 1, f);
    fclose(f);
    cr_assert_gt(got, 8u);
    for (int k = 0; k < N_STORAGE; k++) {
        const char *st[] = {"\"I32\"", "\"U8\"", "\"I8\"", "\"I16\"", "\"F16\"", "\"BF16\""};
        cr_expect(memmem(head, got, st[k], strlen(st[k])), "%s", st[k]);
    }
    tj_safetensors *loaded = tj_safetensors_load(path);
    cr_assert_not_null(loaded, "%s", tj_last_error());
    for (int k = 0; k < N_STORAGE; k++) {
        tj_tensor *t = tj_safetensors_get(loaded, names[k]);
        cr_assert_not_null(t, "%s", names[k]);
        cr_expect_eq(tj_tensor_dtype(t), STORAGE[k]);
        cr_expect_arr_eq(tj_tensor_data(t), tj_tensor_data(ts[k]), 4 * tj_dtype_size(STORAGE[k]), "%s", names[k]);
    }
    tj_safetensors_free(loaded);
    unlink(path);
    for (int k = 0; k < N_STORAGE; k++) {
        const char *npy = tmp_path("one.npy");
        tj_status st = tj_npy_save(npy, ts[k]);
        if (STORAGE[k] == TJ_BFLOAT16) {
            cr_expect_eq(st, TJ_ERR_DTYPE);
            cr_expect(strstr(tj_last_error(), "numpy has no bfloat16"), "%s", tj_last_error());
            continue;
        }
        cr_assert_eq(st, TJ_OK, "%s", tj_last_error());
        tj_tensor *back = tj_npy_load(npy);
        cr_assert_not_null(back, "%s", tj_last_error());
        cr_expect_eq(tj_tensor_dtype(back), STORAGE[k]);
        cr_expect_arr_eq(tj_tensor_data(back), tj_tensor_data(ts[k]), 4 * tj_dtype_size(STORAGE[k]), "%s", names[k]);
        unlink(npy);
    }
}

/* DLPack carries the storage dtypes both ways (torch.utils.dlpack's
 * codes: kDLUInt 8, kDLFloat 16, kDLBfloat 16, ...). */
Test(storage_dtypes, dlpack_carries_them)
{
    tj_tensor *x = test_f32(1, (int64_t[]){3}, (float[]){1.0f, 2.5f, -4.0f});
    const uint8_t codes[N_STORAGE] = {kDLInt, kDLUInt, kDLInt, kDLInt, kDLFloat, kDLBfloat};
    const uint8_t bits[N_STORAGE] = {32, 8, 8, 16, 16, 16};
    for (int k = 0; k < N_STORAGE; k++) {
        tj_tensor *s = converted(x, STORAGE[k]);
        DLManagedTensor *m = tj_tensor_to_dlpack(s);
        cr_assert_not_null(m, "%s", tj_last_error());
        cr_expect(m->dl_tensor.dtype.code == codes[k] && m->dl_tensor.dtype.bits == bits[k], "%s",
                  tj_dtype_name(STORAGE[k]));
        tj_tensor *back = tj_tensor_from_dlpack(m);
        cr_assert_not_null(back, "%s", tj_last_error());
        cr_expect_eq(tj_tensor_dtype(back), STORAGE[k]);
        cr_expect_eq(tj_tensor_data(back), tj_tensor_data(s));
        tj_tensor_release(back);
    }
}

/* torch's repr: integers without a point, float16 as floats, the dtype named. */
Test(storage_dtypes, print_as_torch)
{
    tj_tensor *x = test_f32(1, (int64_t[]){2}, (float[]){1.5f, -2.0f});
    char *s = tj_tensor_to_string(converted(x, TJ_INT32));
    cr_expect_str_eq(s, "tensor([ 1, -2], dtype=torch.int32)");
    free(s);
    s = tj_tensor_to_string(converted(x, TJ_FLOAT16));
    cr_expect_str_eq(s, "tensor([ 1.5000, -2.0000], dtype=torch.float16)");
    free(s);
}
