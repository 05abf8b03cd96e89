/* gather, scatter_add and unfold (the indexing primitives). Reference values
 * from PyTorch 1.13.1 (python3-torch):
 *   x = torch.arange(12.).reshape(3, 4); i = torch.tensor([[2,0,1,1],[0,0,2,1]])
 *   torch.gather(x, 0, i)  -> [[8,1,6,7],[0,1,10,7]]
 *   torch.gather(x, 1, torch.tensor([[3,0],[1,1],[2,0]])) -> [[3,0],[5,5],[10,8]]
 *   torch.scatter_add(torch.zeros(3,4), 0, i, torch.ones(2,4) * torch.tensor([1.,2,3,4]))
 *       -> [[1,4,0,0],[0,0,3,8],[1,0,3,0]]
 *   torch.arange(7.).unfold(0, 3, 2) -> [[0,1,2],[2,3,4],[4,5,6]] */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "kernels/cpu_isa.h"
#include "test_util.h"
#include "tjit/tjit.h"

static tj_tensor *arange_f32(int64_t n, int ndim, const int64_t *shape)
{
    tj_tensor *a = tj_arange(tj_v_int(0), tj_v_int(n), tj_v_int(1), TJ_FLOAT32);
    return tj_view(a, shape, ndim);
}

static void expect_values(const tj_tensor *t, const double *want, int64_t n)
{
    test_expect_close(t, want, n, 0, 0);
}

TestSuite(index, .init = test_scope_open, .fini = test_scope_close);

static const int64_t S34[2] = {3, 4}, S24[2] = {2, 4};
static const int64_t I24[8] = {2, 0, 1, 1, 0, 0, 2, 1};

Test(index, gather_dim0_matches_pytorch)
{
    tj_tensor *r = tj_gather(arange_f32(12, 2, S34), 0, test_i64(2, S24, I24));
    const double want[8] = {8, 1, 6, 7, 0, 1, 10, 7};
    expect_values(r, want, 8);
    cr_expect_eq(tj_tensor_dtype(r), TJ_FLOAT32);
}

Test(index, gather_last_dim_with_transposed_self_and_index)
{
    /* self given as the transpose of a [4, 3] contiguous tensor; index as the
     * transpose of [[3,1,2],[0,1,0]] */
    tj_tensor *self = tj_transpose(tj_clone(tj_transpose(arange_f32(12, 2, S34), 0, 1)), 0, 1);
    const int64_t s23[2] = {2, 3}, it[6] = {3, 1, 2, 0, 1, 0};
    tj_tensor *index = tj_transpose(test_i64(2, s23, it), 0, 1);
    const double want[6] = {3, 0, 5, 5, 10, 8};
    expect_values(tj_gather(self, 1, index), want, 6);
}

Test(index, gather_out_of_range_index_is_an_index_error)
{
    const int64_t bad[8] = {2, 0, 1, 3, 0, 0, 2, 1};
    cr_expect_null(tj_gather(arange_f32(12, 2, S34), 0, test_i64(2, S24, bad)));
    cr_expect_eq(tj_last_status(), TJ_ERR_INDEX);
    cr_expect(strstr(tj_last_error(), "index 3 is out of bounds for dimension 0 with size 3"), "%s", tj_last_error());
    const int64_t neg[8] = {-1, 0, 1, 1, 0, 0, 2, 1};
    cr_expect_null(tj_gather(arange_f32(12, 2, S34), 0, test_i64(2, S24, neg)));
}

Test(index, gather_checks_dtype_rank_and_sizes)
{
    tj_tensor *x = arange_f32(12, 2, S34);
    cr_expect_null(tj_gather(x, 0, tj_zeros(S24, 2, TJ_FLOAT32)));
    cr_expect_eq(tj_last_status(), TJ_ERR_DTYPE);
    const int64_t one[1] = {2}, v[2] = {0, 1};
    cr_expect_null(tj_gather(x, 0, test_i64(1, one, v)));
    cr_expect_eq(tj_last_status(), TJ_ERR_SHAPE);
    const int64_t s35[2] = {3, 5};
    cr_expect_null(tj_gather(x, 0, tj_zeros(s35, 2, TJ_INT64)));
    cr_expect(strstr(tj_last_error(), "size does not match at dimension 1"), "%s", tj_last_error());
    cr_expect_null(tj_gather(x, 2, test_i64(2, S24, I24)));
    cr_expect_eq(tj_last_status(), TJ_ERR_INDEX);
}

Test(index, gather_empty_index_and_0dim)
{
    const int64_t s04[2] = {0, 4};
    tj_tensor *r = tj_gather(arange_f32(12, 2, S34), 0, tj_zeros(s04, 2, TJ_INT64));
    cr_assert_not_null(r);
    cr_expect_eq(tj_tensor_shape(r)[0], 0);
    tj_tensor *s = tj_tensor_scalar_f32(7.5f), *z = tj_tensor_scalar_i64(0);
    tj_tensor *r0 = tj_gather(s, 0, z);
    cr_assert_not_null(r0, "%s", tj_last_error());
    cr_expect_eq(tj_tensor_ndim(r0), 0);
    cr_expect_eq(tj_tensor_item_at(r0, 0), 7.5);
    tj_tensor_release(s);
    tj_tensor_release(z);
}

Test(index, scatter_add_accumulates_in_index_order)
{
    const double w[4] = {1, 2, 3, 4};
    tj_tensor *src = tj_mul(tj_ones(S24, 2, TJ_FLOAT32), tj_tensor_from_data(TJ_FLOAT64, 1, (const int64_t[]){4}, w));
    tj_tensor *r = tj_scatter_add(tj_zeros(S34, 2, TJ_FLOAT32), 0, test_i64(2, S24, I24), tj_to_copy(src, TJ_FLOAT32));
    const double want[12] = {1, 4, 0, 0, 0, 0, 3, 8, 1, 0, 3, 0};
    expect_values(r, want, 12);
}

Test(index, scatter_add_keeps_self_and_handles_broadcast_src)
{
    /* self = arange; src a stride-0 expand of [5]; duplicate indices add up */
    const int64_t s1[1] = {1}, s4[1] = {4}, idx[4] = {1, 1, 0, 1};
    tj_tensor *self = tj_arange(tj_v_int(0), tj_v_int(3), tj_v_int(1), TJ_INT64);
    tj_tensor *src = tj_expand(tj_full(s1, 1, tj_v_int(5), TJ_INT64), s4, 1);
    tj_tensor *r = tj_scatter_add(self, 0, test_i64(1, s4, idx), src);
    const double want[3] = {5, 16, 2};
    expect_values(r, want, 3);
    cr_expect_eq(tj_tensor_item_at(self, 1), 1); /* self is not modified */
}

Test(index, scatter_add_errors)
{
    tj_tensor *self = tj_zeros(S34, 2, TJ_FLOAT32);
    cr_expect_null(tj_scatter_add(self, 0, test_i64(2, S24, I24), tj_ones(S24, 2, TJ_FLOAT64)));
    cr_expect_eq(tj_last_status(), TJ_ERR_DTYPE);
    const int64_t s21[2] = {2, 1};
    cr_expect_null(tj_scatter_add(self, 0, test_i64(2, S24, I24), tj_ones(s21, 2, TJ_FLOAT32)));
    cr_expect_eq(tj_last_status(), TJ_ERR_SHAPE);
    const int64_t bad[8] = {2, 0, 1, 1, 0, 0, 2, 9};
    cr_expect_null(tj_scatter_add(self, 0, test_i64(2, S24, bad), tj_ones(S24, 2, TJ_FLOAT32)));
    cr_expect_eq(tj_last_status(), TJ_ERR_INDEX);
}

Test(index, unfold_is_a_window_view)
{
    const int64_t s7[1] = {7};
    tj_tensor *x = arange_f32(7, 1, s7);
    tj_tensor *u = tj_unfold(x, 0, 3, 2);
    const double want[9] = {0, 1, 2, 2, 3, 4, 4, 5, 6};
    expect_values(u, want, 9);
    cr_expect(tj_tensor_shares_storage(u, x));
    cr_expect_eq(tj_tensor_strides(u)[0], 2);
    cr_expect_eq(tj_tensor_strides(u)[1], 1);
}

Test(index, unfold_of_a_transposed_tensor_and_errors)
{
    /* x.t() is [4, 3] with strides [1, 4]; unfold dim 0, size 2, step 1 */
    tj_tensor *xt = tj_t(arange_f32(12, 2, S34));
    tj_tensor *u = tj_unfold(xt, 0, 2, 1);
    cr_assert_not_null(u);
    cr_expect_eq(tj_tensor_ndim(u), 3);
    cr_expect_eq(tj_tensor_shape(u)[0], 3);
    cr_expect_eq(tj_tensor_shape(u)[2], 2);
    /* u[1, 2, :] = xt[1:3, 2] = x[2, 1:3] = {9, 10} */
    cr_expect_eq(tj_tensor_item_at(u, 1 * 6 + 2 * 2 + 0), 9);
    cr_expect_eq(tj_tensor_item_at(u, 1 * 6 + 2 * 2 + 1), 10);
    cr_expect_null(tj_unfold(xt, 0, 5, 1));
    cr_expect(strstr(tj_last_error(), "maximum size for tensor at dimension 0 is 4 but size is 5"), "%s",
              tj_last_error());
    cr_expect_null(tj_unfold(xt, 0, 2, 0));
    cr_expect_eq(tj_last_status(), TJ_ERR_INVALID_ARGUMENT);
    tj_tensor *s = tj_tensor_scalar_f32(3.0f);
    tj_tensor *u0 = tj_unfold(s, 0, 1, 1);
    cr_assert_not_null(u0, "%s", tj_last_error());
    cr_expect_eq(tj_tensor_ndim(u0), 1);
    tj_tensor_release(s);
}

/* A step whose product with the stride overflows (signed overflow, caught
 * by UBSan) leaves one window: its stride is the dim's own, as slice does. */
Test(index, unfold_with_a_huge_step_has_one_window_and_no_overflowed_stride)
{
    tj_tensor *x = arange_f32(12, 2, S34);
    tj_tensor *u = tj_unfold(x, 0, 2, INT64_MAX);
    cr_assert_not_null(u, "%s", tj_last_error());
    cr_expect_eq(tj_tensor_shape(u)[0], 1);
    cr_expect_eq(tj_tensor_strides(u)[0], 4);
    const double want[8] = {0, 4, 1, 5, 2, 6, 3, 7};
    expect_values(u, want, 8);
}

/* Index rows of `n` entries (positions in [0, size)), shared by every row of
 * a scatter_add: pattern 0 col2im-like (runs of 14, 18 apart, for 3 taps
 * one position apart: targets overlap between taps), 1 one long run
 * (split into runs of 16), 2 runs of 1..40 at random starts (duplicates
 * across runs), 3 scattered (too few long runs: the element loop). */
static void fill_index(int pattern, int64_t *idx, int64_t n, int64_t size)
{
    srand(17 + (unsigned)pattern);
    for (int64_t j = 0; j < n;) {
        int64_t len = pattern == 0 ? 14 : pattern == 1 ? n : pattern == 2 ? 1 + rand() % 40 : 1;
        int64_t start = pattern == 0 ? (j / 1000) + (j % 1000) / 14 * 18 : pattern == 1 ? 0 : rand() % (size - 40);
        for (int64_t l = 0; l < len && j < n; l++, j++) idx[j] = (start + l) % size;
    }
}

/* scatter_add of [R, N] values (rows W apart in src) into [R, SIZE], the
 * index one row of N entries shared by every row (expanded) or copied, for
 * each fill_index pattern at 1, 2 and 3 threads: the same bits as the
 * element-by-element sums in index order. */
static void expect_runs_match_the_sums(int64_t R, int64_t N, int64_t SIZE, int64_t W)
{
    int64_t *idx = malloc(sizeof(int64_t) * (size_t)N);
    float *self = malloc(sizeof(float) * (size_t)(R * SIZE)), *src = malloc(sizeof(float) * (size_t)(R * W));
    float *want = malloc(sizeof(float) * (size_t)(R * SIZE));
    cr_assert(idx && self && src && want);
    /* magnitudes 1e-3..1e5: a different order of additions changes the bits */
    for (int64_t i = 0; i < R * SIZE; i++) self[i] = (float)((i * 7919) % 1000) * ((i % 3) ? 1e-3f : 1e2f);
    for (int64_t i = 0; i < R * W; i++) src[i] = (float)((i * 104729) % 997 - 498) * ((i % 5) ? 1e-2f : 1e3f);
    tj_tensor *selft = test_f32(2, (const int64_t[]){R, SIZE}, self);
    /* src rows W apart, N of them read: inner stride 1, rows not packed */
    tj_tensor *srct = tj_slice(test_f32(2, (const int64_t[]){R, W}, src), 1, true, 0, true, N, 1);
    cr_assert_not_null(srct, "%s", tj_last_error());
    for (int pattern = 0; pattern < 4; pattern++) {
        fill_index(pattern, idx, N, SIZE);
        memcpy(want, self, sizeof(float) * (size_t)(R * SIZE));
        for (int64_t r = 0; r < R; r++)
            for (int64_t j = 0; j < N; j++) want[r * SIZE + idx[j]] += src[r * W + j];
        tj_tensor *row = test_i64(2, (const int64_t[]){1, N}, idx);
        /* the same index shared by every row (stride 0), and as a full copy */
        tj_tensor *shared = tj_expand(row, (const int64_t[]){R, N}, 2), *full = tj_contiguous(shared);
        for (int nt = 1; nt <= 3; nt++) {
            tj_set_num_threads(nt);
            for (int k = 0; k < 2; k++) {
                tj_tensor *r = tj_scatter_add(selft, 1, k ? full : shared, srct);
                cr_assert_not_null(r, "%s", tj_last_error());
                const float *got = tj_tensor_data(r);
                for (int64_t i = 0; i < R * SIZE; i++)
                    cr_assert(memcmp(&got[i], &want[i], 4) == 0,
                              "[%ld, %ld], pattern %d, %s index, %d threads, at %ld: %a != %a", (long)R, (long)N,
                              pattern, k ? "full" : "shared", nt, (long)i, (double)got[i], (double)want[i]);
            }
        }
    }
    tj_set_num_threads(1);
    free(idx), free(self), free(src), free(want);
}

/* 5 rows: two pairs added side by side and a single row at 1 thread; at 2
 * and 3 threads, blocks of 3, 2 or 1 rows. */
Test(index, scatter_add_of_runs_of_consecutive_indices_matches_the_element_by_element_sums)
{
    expect_runs_match_the_sums(5, 3000, 1300, 3100);
}

/* 50000 entries: the run list is built in 2 or 3 blocks (runs cut at their
 * ends) and the 4 rows split over the threads. */
Test(index, scatter_add_of_runs_built_on_several_threads_gives_the_same_bits)
{
    expect_runs_match_the_sums(4, 50000, 20000, 50100);
}

/* [4, 50000] index values in [0, 10), two out of range: the error names the
 * first in row-major order however many threads check blocks of them, with
 * the index expanded over the rows (only its first row checked) or not. */
Test(index, first_invalid_index_is_reported_at_any_thread_count)
{
    enum { R = 4, N = 50000 };
    int64_t *idx = malloc(sizeof(int64_t) * R * N);
    cr_assert(idx);
    for (int64_t i = 0; i < R * N; i++) idx[i] = i % 10;
    idx[N + 41000] = -3; /* the first; the next one in a later block at 2 and 4 threads */
    idx[2 * N + 7] = 12;
    tj_tensor *self = tj_zeros((const int64_t[]){R, 10}, 2, TJ_FLOAT32);
    tj_tensor *full = test_i64(2, (const int64_t[]){R, N}, idx);
    tj_tensor *shared = tj_expand(test_i64(2, (const int64_t[]){1, N}, idx + N), (const int64_t[]){R, N}, 2);
    for (int nt = 1; nt <= 4; nt++) {
        tj_set_num_threads(nt);
        cr_expect_null(tj_gather(self, 1, full));
        cr_expect_eq(tj_last_status(), TJ_ERR_INDEX);
        cr_expect(strstr(tj_last_error(), "index -3 is out of bounds for dimension 1 with size 10"), "%d threads: %s",
                  nt, tj_last_error());
        cr_expect_null(tj_gather(self, 1, shared));
        cr_expect(strstr(tj_last_error(), "index -3 is out of"), "%d threads, shared: %s", nt, tj_last_error());
    }
    tj_set_num_threads(1);
    free(idx);
}

/* scatter_add and scatter along dim 0 of [50, 3000] from [200, 3000]
 * (each element hit ~4 times) give the bits of the row-major loop (sums in
 * order, last write wins) at 1, 2 and 3 threads. The kernel runs this case
 * on one thread (index.c: splitting the positions measured 2x slower);
 * the test holds any future split to the same bits. */
Test(index, scatter_along_an_outer_dim_gives_the_same_bits_at_any_thread_count)
{
    enum { V = 50, R = 200, C = 3000 };
    int64_t *idx = malloc(sizeof(int64_t) * R * C);
    float *self = malloc(sizeof(float) * V * C), *src = malloc(sizeof(float) * R * C);
    float *sum = malloc(sizeof(float) * V * C), *last = malloc(sizeof(float) * V * C);
    cr_assert(idx && self && src && sum && last);
    srand(5);
    for (int i = 0; i < V * C; i++) self[i] = (float)((i * 7919) % 1000) * ((i % 3) ? 1e-3f : 1e2f);
    for (int i = 0; i < R * C; i++) {
        idx[i] = rand() % V;
        src[i] = (float)(((int64_t)i * 104729) % 997 - 498) * ((i % 5) ? 1e-2f : 1e3f);
    }
    memcpy(sum, self, sizeof(float) * V * C);
    memcpy(last, self, sizeof(float) * V * C);
    for (int r = 0; r < R; r++)
        for (int j = 0; j < C; j++) {
            sum[idx[r * C + j] * C + j] += src[r * C + j];
            last[idx[r * C + j] * C + j] = src[r * C + j];
        }
    tj_tensor *selft = test_f32(2, (const int64_t[]){V, C}, self), *srct = test_f32(2, (const int64_t[]){R, C}, src);
    tj_tensor *index = test_i64(2, (const int64_t[]){R, C}, idx);
    for (int nt = 1; nt <= 3; nt++) {
        tj_set_num_threads(nt);
        tj_tensor *added = tj_scatter_add(selft, 0, index, srct), *written = tj_scatter(selft, 0, index, srct);
        cr_assert(added && written, "%s", tj_last_error());
        const float *a = tj_tensor_data(added), *w = tj_tensor_data(written);
        for (int i = 0; i < V * C; i++) {
            cr_assert(memcmp(&a[i], &sum[i], 4) == 0, "scatter_add, %d threads, at %d: %a != %a", nt, i, (double)a[i],
                      (double)sum[i]);
            cr_assert(memcmp(&w[i], &last[i], 4) == 0, "scatter, %d threads, at %d: %a != %a", nt, i, (double)w[i],
                      (double)last[i]);
        }
    }
    tj_set_num_threads(1);
    free(idx), free(self), free(src), free(sum), free(last);
}

/* The index check reports the first value outside [0, 10) at every place
 * of the vector loop's blocks of 8 (first lane, last lane, the masked tail)
 * and for the extremes (-1, INT64_MIN, 10, INT64_MAX), the invalid value
 * right after it ignored; an index read with stride 2 (the element loop,
 * invalid values between the elements it reads) agrees. */
Test(index, first_invalid_index_is_found_at_every_lane_and_in_the_tail)
{
    enum { N = 23 };
    const int64_t bad[4] = {-1, INT64_MIN, 10, INT64_MAX};
    tj_tensor *self = tj_zeros((const int64_t[]){1, 10}, 2, TJ_FLOAT32);
    int64_t packed[N], spaced[2 * N];
    for (int at = 0; at < N; at++)
        for (int k = 0; k < 4; k++) {
            for (int64_t j = 0; j < N; j++) {
                packed[j] = spaced[2 * j] = j % 10;
                spaced[2 * j + 1] = -5;
            }
            packed[at] = spaced[2 * at] = bad[k];
            if (at + 1 < N) packed[at + 1] = spaced[2 * at + 2] = 11;
            char want[80];
            snprintf(want, sizeof want, "index %lld is out of bounds for dimension 1", (long long)bad[k]);
            cr_expect_null(tj_gather(self, 1, test_i64(2, (const int64_t[]){1, N}, packed)));
            cr_expect_eq(tj_last_status(), TJ_ERR_INDEX);
            cr_expect(strstr(tj_last_error(), want), "at %d: %s", at, tj_last_error());
            tj_tensor *strided = tj_slice(test_i64(2, (const int64_t[]){1, 2 * N}, spaced), 1, true, 0, true, 2 * N, 2);
            cr_expect_null(tj_gather(self, 1, strided));
            cr_expect(strstr(tj_last_error(), want), "at %d, stride 2: %s", at, tj_last_error());
        }
    /* every value valid: the 23 gathered */
    for (int64_t j = 0; j < N; j++) packed[j] = j % 10;
    tj_tensor *x = tj_arange(tj_v_int(0), tj_v_int(10), tj_v_int(1), TJ_FLOAT32);
    tj_tensor *g = tj_gather(tj_view(x, (const int64_t[]){1, 10}, 2), 1, test_i64(2, (const int64_t[]){1, N}, packed));
    cr_assert_not_null(g, "%s", tj_last_error());
    for (int64_t j = 0; j < N; j++) cr_expect_eq(tj_tensor_item_at(g, j), (double)(j % 10));
}

/* self [4, 5, 19] of `dtype` (values 0..379 scrambled, booleans 0/1) laid
 * out as `layout`: 0 contiguous, 1 a transpose of its last two dims (inner
 * stride 5), 2 one [1, 5, 19] row expanded over dim 0 (stride 0, as the
 * decomposed max pool's constant of window positions). */
static tj_tensor *gather_self(tj_dtype dtype, int layout)
{
    enum { A = 4, B = 5, C = 19 };
    double v[A * B * C];
    for (int i = 0; i < A * B * C; i++) v[i] = (double)((i * 37) % (A * B * C));
    if (layout == 2) {
        tj_tensor *row = tj_to_copy(test_f64(3, (const int64_t[]){1, B, C}, v), dtype);
        return tj_expand(row, (const int64_t[]){A, B, C}, 3);
    }
    if (layout == 1) {
        tj_tensor *t = tj_to_copy(test_f64(3, (const int64_t[]){A, C, B}, v), dtype);
        return tj_transpose(t, 1, 2);
    }
    return tj_to_copy(test_f64(3, (const int64_t[]){A, B, C}, v), dtype);
}

/* gather of self (gather_self) along each dim with an index of
 * [4, 5 - d, n] (n 1 to 19: whole vectors of 8 and tails, index values
 * pseudo-random in range) equals out[p] = self[p with p[dim] = index[p]]
 * read element by element, for float32, float64, int64 and bool on every
 * ISA (the vector gathers take 8 and 4 byte elements, the scalar loop the
 * others and the strided index). */
Test(index, gather_equals_the_element_by_element_definition_for_every_layout_dtype_dim_and_isa)
{
    const tj_dtype dtypes[4] = {TJ_FLOAT32, TJ_FLOAT64, TJ_INT64, TJ_BOOL};
    const int64_t self_shape[3] = {4, 5, 19};
    int64_t idx[4 * 5 * 19];
    for (int k = 0; k < TEST_NISA; k++) {
        if (!tj_k_isa_force(test_isas[k])) continue;
        for (int dt = 0; dt < 4; dt++)
            for (int layout = 0; layout < 3; layout++) {
                tj_tensor *self = gather_self(dtypes[dt], layout), *dense = tj_contiguous(self);
                cr_assert_not_null(dense, "%s", tj_last_error());
                for (int dim = 0; dim < 3; dim++)
                    for (int64_t n = 1; n <= 19; n += 3) {
                        const int64_t shape[3] = {4, 5 - dim, n};
                        for (int64_t i = 0; i < shape[0] * shape[1] * n; i++)
                            idx[i] = (i * 7 + i / 3) % self_shape[dim];
                        tj_tensor *out = tj_gather(self, dim, test_i64(3, shape, idx));
                        cr_assert_not_null(out, "%s", tj_last_error());
                        for (int64_t i = 0; i < shape[0] * shape[1] * n; i++) {
                            int64_t p[3] = {i / (shape[1] * n), i / n % shape[1], i % n};
                            p[dim] = idx[i];
                            double want = tj_tensor_item_at(dense, (p[0] * 5 + p[1]) * 19 + p[2]);
                            cr_assert_eq(tj_tensor_item_at(out, i), want, "%s, %s, layout %d, dim %d, n %ld, at %ld",
                                         test_isas[k], tj_dtype_name(dtypes[dt]), layout, dim, (long)n, (long)i);
                        }
                    }
            }
    }
    tj_k_isa_force(NULL);
}

/* An invalid value in an index [4, 16, 19] over the stride-0 self (the
 * first negative or too large one, in the vector block, its tail, or a
 * later row, at 1 to 3 threads) is reported as for any index, naming the
 * first in row-major order. */
Test(index, gather_from_an_expanded_self_reports_the_first_invalid_index_on_every_isa_and_thread_count)
{
    enum { R = 64, N = 19 };
    tj_tensor *self = gather_self(TJ_INT64, 2);
    int64_t idx[R * N];
    const int64_t at[3] = {5, 3 * N + 18, (R - 1) * N + 18}, value[3] = {-1, 5, INT64_MIN};
    for (int k = 0; k < TEST_NISA; k++) {
        if (!tj_k_isa_force(test_isas[k])) continue;
        for (int nt = 1; nt <= 3; nt++) {
            tj_set_num_threads(nt);
            for (int c = 0; c < 3; c++) {
                for (int i = 0; i < R * N; i++) idx[i] = i % 5;
                idx[at[c]] = value[c];
                if (c < 2) idx[at[c] + N] = 9; /* a later invalid value, not the one named */
                cr_expect_null(tj_gather(self, 1, test_i64(3, (const int64_t[]){R / 16, 16, N}, idx)));
                char want[96];
                snprintf(want, sizeof want, "index %lld is out of bounds for dimension 1 with size 5",
                         (long long)value[c]);
                cr_expect_eq(tj_last_status(), TJ_ERR_INDEX);
                cr_expect(strstr(tj_last_error(), want), "%s, %d threads: %s", test_isas[k], nt, tj_last_error());
            }
        }
    }
    tj_set_num_threads(1);
    tj_k_isa_force(NULL);
}

/* scatter_add's self [64, 80, 13] as `layout`: 0 a zero expanded from one
 * element (the decomposed max pool backward's), 1 a nonzero one expanded,
 * 2 one row [1, 1, 13] expanded, 3 contiguous, 4 a transpose (inner
 * stride 80). Values of magnitudes 1e-3..1e2: sums in another order give
 * other bits. */
static tj_tensor *scatter_add_self(int layout)
{
    enum { A = 64, B = 80, C = 13 };
    static float v[A * B * C];
    for (int i = 0; i < A * B * C; i++) v[i] = (float)((i * 7919) % 1000) * ((i % 3) ? 1e-3f : 1e2f);
    const int64_t shape[3] = {A, B, C};
    switch (layout) {
    case 0: return tj_expand(tj_zeros((const int64_t[]){1, 1, 1}, 3, TJ_FLOAT32), shape, 3);
    case 1: return tj_expand(test_f32(3, (const int64_t[]){1, 1, 1}, v + 3), shape, 3);
    case 2: return tj_expand(test_f32(3, (const int64_t[]){1, 1, C}, v), shape, 3);
    case 3: return test_f32(3, shape, v);
    default: return tj_transpose(test_f32(3, (const int64_t[]){A, C, B}, v), 1, 2);
    }
}

/* scatter_add along each dim of self (scatter_add_self) with an index of
 * pseudo-random values (duplicates within a row: they add in index order)
 * and src contiguous or read with inner stride 2, at 1 to 3 threads, gives
 * the bits of the row-major loop over the index positions. Along the last
 * dim: the one-pass kernel, and (index [64, 79, n], not covering every row
 * of self) the checked copy and scatter. */
Test(index, scatter_add_equals_the_row_major_sums_for_every_self_layout_dim_and_thread_count)
{
    enum { A = 64, B = 80, C = 13, W = 46 };
    const int64_t self_shape[3] = {A, B, C}, ns[3] = {1, 9, 23};
    float *srcv = malloc(sizeof(float) * A * B * W), *want = malloc(sizeof(float) * A * B * C);
    int64_t *idx = malloc(sizeof(int64_t) * A * B * 23);
    cr_assert(srcv && want && idx);
    for (int64_t i = 0; i < A * B * W; i++) srcv[i] = (float)((i * 104729) % 997 - 498) * ((i % 5) ? 1e-2f : 1e3f);
    tj_tensor *strided = tj_slice(test_f32(3, (const int64_t[]){A, B, W}, srcv), 2, true, 0, true, W, 2);
    tj_tensor *srcs[2] = {tj_contiguous(strided), strided};
    cr_assert(srcs[0] && srcs[1], "%s", tj_last_error());
    for (int layout = 0; layout < 5; layout++) {
        tj_tensor *self = scatter_add_self(layout), *dense = tj_contiguous(self);
        cr_assert_not_null(dense, "%s", tj_last_error());
        for (int dim = 0; dim < 3; dim++)
            for (int k = 0; k < 3; k++)
                for (int cover = 0; cover < (dim == 2 ? 2 : 1); cover++) {
                    int64_t shape[3] = {A, B - cover, C}, n = ns[k];
                    shape[dim] = n;
                    int64_t total = shape[0] * shape[1] * shape[2];
                    for (int64_t i = 0; i < total; i++) idx[i] = (i * 7 + i / 5) % self_shape[dim];
                    memcpy(want, tj_tensor_data(dense), sizeof(float) * A * B * C);
                    for (int64_t i = 0; i < total; i++) {
                        int64_t p[3] = {i / (shape[1] * shape[2]), i / shape[2] % shape[1], i % shape[2]};
                        float v = srcv[(p[0] * B + p[1]) * W + 2 * p[2]];
                        p[dim] = idx[i];
                        want[(p[0] * B + p[1]) * C + p[2]] += v;
                    }
                    tj_tensor *index = test_i64(3, shape, idx);
                    for (int s = 0; s < 2; s++)
                        for (int nt = 1; nt <= 3; nt++) {
                            tj_set_num_threads(nt);
                            tj_tensor *r = tj_scatter_add(self, dim, index, srcs[s]);
                            cr_assert_not_null(r, "%s", tj_last_error());
                            const float *got = tj_tensor_data(r);
                            for (int i = 0; i < A * B * C; i++)
                                cr_assert(memcmp(&got[i], &want[i], 4) == 0,
                                          "layout %d, dim %d, n %ld, cover %d, src %d, %d threads, at %d: %a != %a",
                                          layout, dim, (long)n, cover, s, nt, i, (double)got[i], (double)want[i]);
                            tj_tensor_release(r);
                        }
                }
    }
    tj_set_num_threads(1);
    free(srcv), free(want), free(idx);
}

/* An invalid value (negative or too large) in the index [64, 80, 23] of a
 * scatter_add along the last dim, in the first row, a row's tail or the
 * last row, with a later invalid value in another row: the error names the
 * first in row-major order at 1 to 3 threads, for the one-pass kernel
 * (expanded zero self) and the copy then scatter (index [64, 79, 23]), and
 * self is left as it was. */
Test(index, scatter_add_along_the_last_dim_reports_the_first_invalid_index)
{
    enum { A = 64, B = 80, N = 23 };
    int64_t *idx = malloc(sizeof(int64_t) * A * B * N);
    cr_assert(idx);
    const int64_t value[4] = {-1, 13, INT64_MIN, 14};
    tj_tensor *src = tj_ones((const int64_t[]){A, B, N}, 3, TJ_FLOAT32);
    for (int layout = 0; layout < 4; layout += 3) {
        tj_tensor *self = scatter_add_self(layout), *before = tj_contiguous(tj_clone(self));
        for (int cover = 0; cover < 2; cover++)
            for (int nt = 1; nt <= 3; nt++) {
                tj_set_num_threads(nt);
                int64_t rows = A * (B - cover), at[4] = {0, N - 1, 37 * N + 22, (rows - 1) * N + 22};
                for (int c = 0; c < 4; c++) {
                    for (int i = 0; i < A * B * N; i++) idx[i] = i % 13;
                    idx[at[c]] = value[c];
                    if (c < 3) idx[(rows - 2) * N + 5] = 20; /* a later invalid value, not the one named */
                    tj_tensor *index = test_i64(3, (const int64_t[]){A, B - cover, N}, idx);
                    cr_expect_null(tj_scatter_add(self, 2, index, src));
                    cr_expect_eq(tj_last_status(), TJ_ERR_INDEX);
                    char want[112];
                    snprintf(want, sizeof want,
                             "aten::scatter_add: index %lld is out of bounds for dimension 2 with size 13",
                             (long long)value[c]);
                    cr_expect(strstr(tj_last_error(), want), "layout %d, cover %d, %d threads, case %d: %s", layout,
                              cover, nt, c, tj_last_error());
                }
            }
        tj_tensor *now = tj_contiguous(self);
        cr_assert_not_null(now, "%s", tj_last_error());
        cr_expect(memcmp(tj_tensor_data(now), tj_tensor_data(before), sizeof(float) * A * B * 13) == 0,
                  "layout %d: self changed", layout);
    }
    tj_set_num_threads(1);
    free(idx);
}
