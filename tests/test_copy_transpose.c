/* Transposed copies (kernels/copy.c: 32 x 32 tiles; float32 tiles as
 * 16 x 16 register transposes on AVX-512, kernels/copy_avx512.c): every
 * element lands where a naive strided loop puts it, bit for bit, for
 * shapes that leave partial tiles and partial 16 x 16 blocks, on 1 and 2
 * threads. */
#include <criterion/criterion.h>
#include <stdint.h>
#include <string.h>

#include "tjit/tjit.h"

/* Distinct bit patterns, NaN payloads and negative zero among them. */
static void fill_bits(tj_tensor *t)
{
    uint32_t *p = tj_tensor_data(t);
    for (int64_t i = 0; i < tj_tensor_numel(t); i++)
        p[i] = i % 97 == 5 ? 0x7fc00000u + (uint32_t)i : i % 89 == 3 ? 0x80000000u : 0x3f000000u + (uint32_t)i * 2654435761u % 0x800000u;
}

/* c == x element for element (x of any strides, c contiguous), as bits. */
static void expect_same_bits(tj_tensor *c, tj_tensor *x)
{
    cr_assert_not_null(c, "%s", tj_last_error());
    int nd = tj_tensor_ndim(x);
    const int64_t *shape = tj_tensor_shape(x), *st = tj_tensor_strides(x);
    const uint32_t *xs = tj_tensor_data(x), *cs = tj_tensor_data(c);
    int64_t idx[8] = {0};
    for (int64_t flat = 0; flat < tj_tensor_numel(x); flat++) {
        int64_t off = 0, rem = flat;
        for (int d = nd - 1; d >= 0; d--) {
            idx[d] = rem % shape[d];
            rem /= shape[d];
            off += idx[d] * st[d];
        }
        cr_assert_eq(cs[flat], xs[off], "element %ld: %08x != %08x", (long)flat, cs[flat], xs[off]);
    }
}

Test(copy_transpose, float32_tiles_with_partial_blocks_keep_every_bit)
{
    tj_scope *s = tj_scope_begin();
    int saved = tj_get_num_threads();
    /* [rows, cols] before the transpose: whole tiles, partial 32-tiles,
     * partial 16-blocks, the smallest transposed case (16) */
    const int64_t shapes[][2] = {{64, 32}, {37, 45}, {16, 16}, {17, 100}, {33, 31}, {128, 384}};
    for (int threads = 1; threads <= 2; threads++) {
        tj_set_num_threads(threads);
        for (size_t i = 0; i < sizeof shapes / sizeof *shapes; i++) {
            tj_tensor *x = tj_tensor_empty(TJ_FLOAT32, 2, shapes[i]);
            fill_bits(x);
            tj_tensor *xt = tj_t(x);
            expect_same_bits(tj_clone(xt), xt);
        }
    }
    tj_set_num_threads(saved);
    tj_scope_end(s);
}

Test(copy_transpose, attention_key_transpose_of_a_fused_projection_is_exact)
{
    /* gpt's k^T: [512, 384] viewed [8, 64, 3, 4, 32], k selected and
     * permuted to [8, 4, 32, 64] (a row stride of 384 in the source) */
    tj_scope *s = tj_scope_begin();
    int saved = tj_get_num_threads();
    tj_tensor *qkv = tj_tensor_empty(TJ_FLOAT32, 2, (int64_t[]){512, 384});
    fill_bits(qkv);
    tj_tensor *v = tj_view(qkv, (int64_t[]){8, 64, 3, 4, 32}, 5);
    tj_tensor *kt = tj_permute(tj_select(v, 2, 1), (int64_t[]){0, 2, 3, 1}, 4);
    for (int threads = 1; threads <= 2; threads++) {
        tj_set_num_threads(threads);
        expect_same_bits(tj_clone(kt), kt);
    }
    tj_set_num_threads(saved);
    tj_scope_end(s);
}
