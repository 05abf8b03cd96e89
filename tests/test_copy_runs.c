/* Short contiguous runs in strided copies (kernels/copy.c: a block of runs
 * under 256 bytes moved as overlapping 16-byte moves, or 16/32/64-byte
 * vector moves on AVX-512, kernels/copy_avx512.c) and the copies of
 * slice_scatter, select_scatter and scatter_add (runtime/op_view.c,
 * tj_copy_tensor): every element lands where a naive strided loop puts it,
 * byte for byte, for every run length class, dtype, storage offset and 1-3
 * threads. */
#include <criterion/criterion.h>
#include <stdint.h>
#include <string.h>

#include "kernels/copy.h"
#include "test_util.h"
#include "tjit/inplace.h"
#include "tjit/tjit.h"

/* Distinct byte patterns (NaN payloads and negative zero among the floats). */
static void fill_bytes(tj_tensor *t)
{
    uint8_t *p = tj_tensor_data(t);
    size_t n = (size_t)tj_tensor_numel(t) * tj_dtype_size(tj_tensor_dtype(t));
    if (tj_tensor_dtype(t) == TJ_BOOL) {
        for (size_t i = 0; i < n; i++) p[i] = (uint8_t)(i * 7 % 3 == 0);
        return;
    }
    for (size_t i = 0; i < n; i++) p[i] = (uint8_t)(i * 2654435761u >> 13);
}

/* Byte offset of flat element `flat` (row-major over t's shape) in t. */
static int64_t byte_offset(tj_tensor *t, int64_t flat)
{
    const int64_t *shape = tj_tensor_shape(t), *st = tj_tensor_strides(t);
    int64_t off = 0;
    for (int d = tj_tensor_ndim(t) - 1; d >= 0; d--) {
        off += flat % shape[d] * st[d];
        flat /= shape[d];
    }
    return off * (int64_t)tj_dtype_size(tj_tensor_dtype(t));
}

/* c == x element for element, as bytes (both any strides, same shape). */
static void expect_same_bytes(tj_tensor *c, tj_tensor *x)
{
    cr_assert_not_null(c, "%s", tj_last_error());
    cr_assert_eq(tj_tensor_numel(c), tj_tensor_numel(x));
    size_t es = tj_dtype_size(tj_tensor_dtype(x));
    const uint8_t *xs = tj_tensor_data(x), *cs = tj_tensor_data(c);
    for (int64_t flat = 0; flat < tj_tensor_numel(x); flat++)
        cr_assert(memcmp(cs + byte_offset(c, flat), xs + byte_offset(x, flat), es) == 0, "element %ld differs",
                  (long)flat);
}

/* Run lengths (elements) of `es`-byte elements covering every move class:
 * under 16 bytes, 16-31, 32-63, 64-255 (whole and overlapping tails), and
 * 256 bytes and more (the memcpy path next to them). */
static const int64_t run_lengths[] = {1, 2, 3, 4, 5, 7, 8, 9, 14, 15, 16, 17, 28, 31, 32, 33, 63, 64, 65, 100, 255, 256};

Test(copy_runs, short_runs_of_every_length_and_dtype_copy_exactly)
{
    tj_scope *s = tj_scope_begin();
    int saved = tj_get_num_threads();
    const tj_dtype dtypes[] = {TJ_BOOL, TJ_FLOAT32, TJ_INT64, TJ_FLOAT64};
    for (int threads = 1; threads <= 3; threads++) {
        tj_set_num_threads(threads);
        for (size_t k = 0; k < sizeof dtypes / sizeof *dtypes; k++)
            for (size_t i = 0; i < sizeof run_lengths / sizeof *run_lengths; i++) {
                int64_t len = run_lengths[i];
                /* [5, 3, len + 3] with 2 elements cut at the front of each
                 * row (storage offset 2, rows not mergeable), dims 0 and 1
                 * swapped: runs of len contiguous elements in both operands */
                tj_tensor *x = tj_tensor_empty(dtypes[k], 3, (int64_t[]){5, 3, len + 3});
                fill_bytes(x);
                tj_tensor *v = tj_permute(tj_slice(x, 2, true, 2, true, 2 + len, 1), (int64_t[]){1, 0, 2}, 3);
                cr_assert_not_null(v, "%s", tj_last_error());
                expect_same_bytes(tj_to_copy(v, -1), v);
                expect_same_bytes(tj_clone(v), v);
            }
    }
    tj_set_num_threads(saved);
    tj_scope_end(s);
}

Test(copy_runs, run_movers_copy_every_byte_length_and_touch_nothing_else)
{
    /* both movers (the generic one runs only on machines without AVX-512),
     * 3 runs of every length 0-255 bytes at odd steps and misalignment; the
     * bytes between runs keep their canary */
    enum { RUNS = 3, DSTEP = 263, SSTEP = 259, PAD = 5 };
    static char src[RUNS * SSTEP + PAD], dst[RUNS * DSTEP + PAD];
    for (size_t i = 0; i < sizeof src; i++) src[i] = (char)(i * 31 + 7);
    void (*const movers[2])(char *, int64_t, const char *, int64_t, int64_t, int64_t) = {tj_k_copy_runs_generic,
                                                                                        tj_k_copy_runs_avx512};
    for (int m = 0; m < (test_cpu_has_avx512() ? 2 : 1); m++)
        for (int64_t n = 0; n < 256; n++) {
            memset(dst, 0x5a, sizeof dst);
            movers[m](dst + PAD, DSTEP, src + 3, SSTEP, RUNS, n);
            for (int64_t i = 0; i < (int64_t)sizeof dst; i++) {
                int64_t r = (i - PAD) / DSTEP, at = (i - PAD) % DSTEP;
                bool in_run = i >= PAD && r < RUNS && at < n;
                char want = in_run ? src[3 + r * SSTEP + at] : (char)0x5a;
                cr_assert_eq(dst[i], want, "mover %d, %ld bytes: byte %ld", m, (long)n, (long)i);
            }
        }
}

Test(copy_runs, im2col_of_a_sliced_image_matches_the_window_definition)
{
    /* the core decomposition's convolution input: unfold(unfold(x, 2, k, 1),
     * 3, k, 1) viewed [n, 1, c, oh, ow, k, k] and permuted [1, 2, 5, 6, 0, 3,
     * 4] (runs of ow elements), on a sliced x (storage offset); 147000
     * elements, so 2 and 3 threads split the runs (3 threads mid-way through
     * a block of oh runs) */
    enum { N = 7, C = 4, H = 19, W = 18, K = 5, OH = H - K + 1, OW = W - K + 1 };
    tj_scope *s = tj_scope_begin();
    int saved = tj_get_num_threads();
    tj_tensor *big = tj_tensor_empty(TJ_FLOAT32, 4, (int64_t[]){N + 1, C, H, W});
    fill_bytes(big);
    tj_tensor *x = tj_slice(big, 0, true, 1, true, N + 1, 1);
    tj_tensor *u = tj_unfold(tj_unfold(x, 2, K, 1), 3, K, 1);
    tj_tensor *v = tj_view(u, (int64_t[]){N, 1, C, OH, OW, K, K}, 7);
    tj_tensor *p = tj_permute(v, (int64_t[]){1, 2, 5, 6, 0, 3, 4}, 7);
    cr_assert_not_null(p, "%s", tj_last_error());
    for (int threads = 1; threads <= 3; threads++) {
        tj_set_num_threads(threads);
        tj_tensor *c = tj_to_copy(p, -1);
        expect_same_bytes(c, p);
        /* and against the definition: c[0, ch, i, j, b, y, z] = x[b, ch, y + i, z + j] */
        const float *cs = tj_tensor_data(c), *xs = (const float *)tj_tensor_data(big) + C * H * W;
        int64_t at = 0;
        for (int64_t ch = 0; ch < C; ch++)
            for (int64_t i = 0; i < K; i++)
                for (int64_t j = 0; j < K; j++)
                    for (int64_t b = 0; b < N; b++)
                        for (int64_t y = 0; y < OH; y++)
                            for (int64_t z = 0; z < OW; z++, at++)
                                cr_assert(memcmp(&cs[at], &xs[((b * C + ch) * H + y + i) * W + z + j], 4) == 0,
                                          "%d threads, element %ld", threads, (long)at);
    }
    tj_set_num_threads(saved);
    tj_scope_end(s);
}

Test(copy_runs, slice_scatter_over_broadcast_and_strided_operands_is_exact)
{
    tj_scope *s = tj_scope_begin();
    int saved = tj_get_num_threads();
    const tj_dtype dtypes[] = {TJ_BOOL, TJ_FLOAT32, TJ_INT64, TJ_FLOAT64};
    for (int threads = 1; threads <= 3; threads++) {
        tj_set_num_threads(threads);
        for (size_t k = 0; k < sizeof dtypes / sizeof *dtypes; k++) {
            /* self: one value expanded to [6, 5, 18] (a fill); src: a
             * transposed [6, 5, 14] (a strided gather) */
            tj_tensor *one = tj_tensor_empty(dtypes[k], 0, NULL);
            fill_bytes(one);
            tj_tensor *self = tj_expand(one, (int64_t[]){6, 5, 18}, 3);
            tj_tensor *raw = tj_tensor_empty(dtypes[k], 3, (int64_t[]){5, 6, 14});
            fill_bytes(raw);
            tj_tensor *src = tj_permute(raw, (int64_t[]){1, 0, 2}, 3);
            tj_tensor *a = tj_slice_scatter(self, src, 2, true, 2, true, 16, 1);
            expect_same_bytes(tj_slice(a, 2, true, 2, true, 16, 1), src);
            /* outside the slice: self's value */
            expect_same_bytes(tj_slice(a, 2, true, 0, true, 2, 1), tj_slice(self, 2, true, 0, true, 2, 1));
            expect_same_bytes(tj_slice(a, 2, true, 16, true, 18, 1), tj_slice(self, 2, true, 16, true, 18, 1));
            /* a contiguous self with a storage offset, src rows of 14 */
            tj_tensor *base = tj_tensor_empty(dtypes[k], 3, (int64_t[]){7, 5, 18});
            fill_bytes(base);
            tj_tensor *self2 = tj_slice(base, 0, true, 1, true, 7, 1);
            tj_tensor *b = tj_slice_scatter(self2, src, 2, true, 2, true, 16, 1);
            expect_same_bytes(tj_slice(b, 2, true, 2, true, 16, 1), src);
            expect_same_bytes(tj_slice(b, 2, true, 16, true, 18, 1), tj_slice(self2, 2, true, 16, true, 18, 1));
            /* step 2 along dim 0, from every other row of base */
            tj_tensor *src3 = tj_slice(base, 0, true, 0, true, 6, 2);
            tj_tensor *c = tj_slice_scatter(self2, src3, 0, true, 0, true, 6, 2);
            expect_same_bytes(tj_slice(c, 0, true, 0, true, 6, 2), src3);
            expect_same_bytes(tj_slice(c, 0, true, 1, true, 6, 2), tj_slice(self2, 0, true, 1, true, 6, 2));
        }
    }
    tj_set_num_threads(saved);
    tj_scope_end(s);
}

Test(copy_runs, select_scatter_of_zero_dim_and_empty_operands_is_exact)
{
    tj_scope *s = tj_scope_begin();
    /* a 0-dim src into a 1-dim self */
    tj_tensor *self = tj_tensor_empty(TJ_FLOAT32, 1, (int64_t[]){5});
    fill_bytes(self);
    tj_tensor *v = tj_tensor_scalar_f32(-2.5f);
    tj_tensor *a = tj_select_scatter(self, v, 0, 3);
    cr_assert_not_null(a, "%s", tj_last_error());
    const float *as = tj_tensor_data(a), *ss = tj_tensor_data(self);
    for (int i = 0; i < 5; i++)
        cr_assert(i == 3 ? as[i] == -2.5f : memcmp(&as[i], &ss[i], 4) == 0, "element %d", i);
    /* an empty self: nothing to copy */
    tj_tensor *e = tj_tensor_empty(TJ_INT64, 2, (int64_t[]){0, 4});
    tj_tensor *src = tj_tensor_empty(TJ_INT64, 1, (int64_t[]){0});
    tj_tensor *b = tj_select_scatter(e, src, 1, 2);
    cr_assert_not_null(b, "%s", tj_last_error());
    cr_assert_eq(tj_tensor_numel(b), 0);
    /* a row of an int64 matrix from a strided src */
    tj_tensor *m = tj_tensor_empty(TJ_INT64, 2, (int64_t[]){4, 6});
    fill_bytes(m);
    tj_tensor *col = tj_select(m, 1, 5); /* stride 6 */
    tj_tensor *c = tj_select_scatter(tj_tensor_empty(TJ_INT64, 2, (int64_t[]){3, 4}), col, 0, 1);
    cr_assert_not_null(c, "%s", tj_last_error());
    expect_same_bytes(tj_select(c, 0, 1), col);
    tj_scope_end(s);
}

Test(copy_runs, scatter_add_over_an_expanded_self_starts_from_its_value)
{
    /* col2im's form: self a broadcast value, index one row expanded */
    tj_scope *s = tj_scope_begin();
    int saved = tj_get_num_threads();
    tj_tensor *idx = tj_tensor_empty(TJ_INT64, 2, (int64_t[]){1, 6});
    int64_t *ip = tj_tensor_data(idx);
    const int64_t iv[6] = {0, 1, 2, 4, 5, 1};
    memcpy(ip, iv, sizeof iv);
    tj_tensor *src = tj_tensor_empty(TJ_FLOAT32, 2, (int64_t[]){3, 6});
    float *sp = tj_tensor_data(src);
    for (int i = 0; i < 18; i++) sp[i] = (float)(i + 1) * 0.5f;
    for (int threads = 1; threads <= 3; threads++) {
        tj_set_num_threads(threads);
        tj_tensor *self = tj_expand(tj_tensor_scalar_f32(0.25f), (int64_t[]){3, 7}, 2);
        tj_tensor *out = tj_scatter_add(self, 1, tj_expand(idx, (int64_t[]){3, 6}, 2), src);
        cr_assert_not_null(out, "%s", tj_last_error());
        const float *o = tj_tensor_data(out);
        for (int r = 0; r < 3; r++) {
            float want[7] = {0.25f, 0.25f, 0.25f, 0.25f, 0.25f, 0.25f, 0.25f};
            for (int j = 0; j < 6; j++) want[iv[j]] += sp[r * 6 + j];
            for (int c = 0; c < 7; c++) cr_assert_eq(o[r * 7 + c], want[c], "[%d, %d]: %g != %g", r, c, o[r * 7 + c], want[c]);
        }
    }
    tj_set_num_threads(saved);
    tj_scope_end(s);
}

Test(copy_runs, fills_from_an_expanded_value_write_every_element_once_at_any_thread_count)
{
    /* kernels/copy.c's fill: a value broadcast into a contiguous result,
     * split into blocks over the threads (n not a multiple of 2 or 3: the
     * first blocks one element longer); zero fills (memset) and others,
     * -0.0 among the others (its bytes are not zero) */
    tj_scope *s = tj_scope_begin();
    int saved = tj_get_num_threads();
    const int64_t n = 100003;
    tj_tensor *values[] = {tj_tensor_scalar_f32(0.0f), tj_tensor_scalar_f32(-0.0f), tj_tensor_scalar_f32(1.5f),
                           tj_tensor_scalar_i64(-3), tj_tensor_scalar_f64(0.0), tj_tensor_scalar_f64(2.25)};
    for (size_t v = 0; v < sizeof values / sizeof values[0]; v++) {
        tj_tensor *x = tj_expand(values[v], (int64_t[]){n}, 1);
        size_t es = tj_dtype_size(tj_tensor_dtype(x));
        for (int threads = 1; threads <= 3; threads++) {
            tj_set_num_threads(threads);
            tj_tensor *c = tj_clone(x);
            cr_assert_not_null(c, "%s", tj_last_error());
            const char *cp = tj_tensor_data(c), *vp = tj_tensor_data(values[v]);
            for (int64_t i = 0; i < n; i++)
                cr_assert(memcmp(cp + i * (int64_t)es, vp, es) == 0, "value %zu at %d threads: element %ld differs", v,
                          threads, (long)i);
        }
    }
    tj_set_num_threads(saved);
    tj_scope_end(s);
}

/* a (the result of scattering src into self's [lo, hi) along dim) holds
 * self outside the band and src inside it. */
static void expect_band(tj_tensor *a, tj_tensor *self, tj_tensor *src, int64_t dim, int64_t lo, int64_t hi)
{
    int64_t size = tj_tensor_shape(self)[dim];
    expect_same_bytes(tj_slice(a, dim, true, 0, true, lo, 1), tj_slice(self, dim, true, 0, true, lo, 1));
    expect_same_bytes(tj_slice(a, dim, true, lo, true, hi, 1), src);
    expect_same_bytes(tj_slice(a, dim, true, hi, true, size, 1), tj_slice(self, dim, true, hi, true, size, 1));
}

/* slice_scatter (step 1) and select_scatter copy only self's elements
 * outside the view's band when its blocks are long (op_inplace.c: dim 0,
 * and dim 1 for bands 4 wide or more), all of self otherwise (the last
 * dim): every dim of a permuted [5, 5, 5] self, start and end given or not, negative, past the end, empty and
 * whole ranges, float64 and int64; select_scatter at negative and edge
 * indices. */
Test(copy_runs, slice_and_select_scatter_keep_self_outside_the_band)
{
    tj_scope *s = tj_scope_begin();
    const tj_dtype dtypes[] = {TJ_FLOAT64, TJ_INT64};
    /* start, end (INT64_MIN: not given) and the range they select in a dim of 5 */
    static const int64_t ranges[][4] = {{1, 4, 1, 4},          {INT64_MIN, INT64_MIN, 0, 5}, {-3, -1, 2, 4},
                                        {2, 100, 2, 5},        {3, 3, 3, 3},                 {4, 1, 4, 4},
                                        {INT64_MIN, 2, 0, 2}, {-100, INT64_MIN, 0, 5}};
    for (size_t k = 0; k < sizeof dtypes / sizeof *dtypes; k++) {
        tj_tensor *raw = tj_tensor_empty(dtypes[k], 3, (int64_t[]){5, 5, 5});
        fill_bytes(raw);
        tj_tensor *self = tj_permute(raw, (int64_t[]){2, 0, 1}, 3); /* strides [1, 25, 5] */
        for (int64_t dim = 0; dim < 3; dim++) {
            for (size_t r = 0; r < sizeof ranges / sizeof *ranges; r++) {
                const int64_t *g = ranges[r];
                int64_t shape[3] = {5, 5, 5};
                shape[dim] = g[3] - g[2];
                tj_tensor *src = tj_tensor_empty(dtypes[k], 3, shape);
                fill_bytes(src);
                tj_tensor *a = tj_slice_scatter(self, src, dim - 3, g[0] != INT64_MIN, g[0], g[1] != INT64_MIN, g[1], 1);
                cr_assert_not_null(a, "%s", tj_last_error());
                expect_band(a, self, src, dim, g[2], g[3]);
            }
            for (int64_t index = -5; index < 5; index++) {
                int64_t shape[2], n = 0;
                for (int d = 0; d < 3; d++)
                    if (d != dim) shape[n++] = 5;
                tj_tensor *src = tj_tensor_empty(dtypes[k], 2, shape);
                fill_bytes(src);
                tj_tensor *a = tj_select_scatter(self, src, dim, index);
                cr_assert_not_null(a, "%s", tj_last_error());
                int64_t lo = index < 0 ? index + 5 : index;
                expect_band(a, self, tj_unsqueeze(src, dim), dim, lo, lo + 1);
            }
        }
    }
    tj_scope_end(s);
}
