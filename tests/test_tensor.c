/* Core tensor objects: creation and its argument checks (NULL, negative
 * sizes, rank, element-count overflow), reference counting, storage shared
 * by views, strides and storage offsets, reading values back
 * (tj_tensor_copy_to, tj_tensor_item_at), descriptions, and scopes (nesting,
 * keep to the parent or the caller). Ownership is checked by counting live
 * allocations through the allocator hook. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "alloc_counter.h"
#include "runtime/internal.h"
#include "test_util.h"

#define I64(...) ((const int64_t[]){__VA_ARGS__})


TestSuite(tensor, .init = count_allocations);
TestSuite(scope, .init = count_allocations);

static void expect_status(tj_status st, const char *part)
{
    cr_expect_eq(tj_last_status(), st, "status %s, expected %s (%s)", tj_status_name(tj_last_status()),
                 tj_status_name(st), tj_last_error());
    cr_expect(strstr(tj_last_error(), part) != NULL, "'%s' not in '%s'", part, tj_last_error());
}

/* ============================== creation ============================== */

Test(tensor, empty_is_contiguous_with_row_major_strides)
{
    tj_tensor *t = tj_tensor_empty(TJ_FLOAT64, 3, I64(2, 3, 4));
    cr_assert_not_null(t, "%s", tj_last_error());
    cr_expect_eq(tj_tensor_dtype(t), TJ_FLOAT64);
    cr_expect_eq(tj_tensor_ndim(t), 3);
    cr_expect_eq(tj_tensor_numel(t), 24);
    cr_expect_eq(memcmp(tj_tensor_strides(t), I64(12, 4, 1), 3 * sizeof(int64_t)), 0);
    cr_expect_eq(tj_tensor_storage_offset(t), 0);
    cr_expect(tj_tensor_is_contiguous(t));
    cr_expect(!tj_tensor_is_fake(t));
    cr_expect_eq((uintptr_t)tj_tensor_data(t) % 64, 0, "storage is 64-byte aligned");
    tj_tensor_release(t);
}

/* PyTorch: torch.empty(2,0,3).stride() == (3,3,1) */
Test(tensor, empty_dims_count_as_one_in_strides)
{
    tj_tensor *t = tj_tensor_empty(TJ_FLOAT32, 3, I64(2, 0, 3));
    cr_assert_not_null(t, "%s", tj_last_error());
    cr_expect_eq(tj_tensor_numel(t), 0);
    cr_expect_eq(memcmp(tj_tensor_strides(t), I64(3, 3, 1), 3 * sizeof(int64_t)), 0);
    tj_tensor_release(t);
}

Test(tensor, from_data_copies_values_of_every_dtype)
{
    float f[3] = {1.5f, -2, 0};
    int64_t i[2] = {-(1LL << 40), 7};
    bool b[3] = {true, false, true};
    tj_tensor *tf = tj_tensor_from_data(TJ_FLOAT32, 1, I64(3), f);
    tj_tensor *ti = tj_tensor_from_data(TJ_INT64, 2, I64(2, 1), i);
    tj_tensor *tb = tj_tensor_from_data(TJ_BOOL, 1, I64(3), b);
    f[0] = 99; /* the tensor holds its own copy */
    cr_expect_eq(tj_tensor_item_at(tf, 0), 1.5);
    cr_expect_eq(tj_tensor_item_at(tf, 1), -2);
    cr_expect_eq(((const int64_t *)tj_tensor_data(ti))[0], -(1LL << 40));
    cr_expect_eq(tj_tensor_item_at(tb, 0), 1);
    cr_expect_eq(tj_tensor_item_at(tb, 1), 0);
    tj_tensor_release(tf);
    tj_tensor_release(ti);
    tj_tensor_release(tb);
}

Test(tensor, scalars_are_0dim_with_one_element)
{
    tj_tensor *s[3] = {tj_tensor_scalar_f32(2.5f), tj_tensor_scalar_f64(-1e300), tj_tensor_scalar_i64(INT64_MIN)};
    tj_dtype want[3] = {TJ_FLOAT32, TJ_FLOAT64, TJ_INT64};
    for (int k = 0; k < 3; k++) {
        cr_expect_eq(tj_tensor_ndim(s[k]), 0);
        cr_expect_eq(tj_tensor_numel(s[k]), 1);
        cr_expect_eq(tj_tensor_dtype(s[k]), want[k]);
        cr_expect(tj_tensor_is_contiguous(s[k]));
    }
    cr_expect_eq(tj_tensor_item_at(s[0], 0), 2.5);
    cr_expect_eq(tj_tensor_item_at(s[1], 0), -1e300);
    cr_expect_eq(*(const int64_t *)tj_tensor_data(s[2]), INT64_MIN);
    for (int k = 0; k < 3; k++) tj_tensor_release(s[k]);
}

Test(tensor, fake_tensor_has_geometry_but_no_data)
{
    int64_t base = live_allocations();
    tj_tensor *t = tj_tensor_fake(TJ_FLOAT32, 2, I64(1000, 1000));
    cr_assert_not_null(t, "%s", tj_last_error());
    cr_expect(tj_tensor_is_fake(t));
    cr_expect_null(tj_tensor_data(t));
    cr_expect_eq(tj_tensor_numel(t), 1000000);
    cr_expect_eq(live_allocations(), base + 1, "only the tensor object is allocated");
    cr_expect(isnan(tj_tensor_item_at(t, 0)));
    cr_expect_eq(tj_tensor_copy_to(t, &(float){0}), TJ_ERR_INVALID_ARGUMENT);
    expect_status(TJ_ERR_INVALID_ARGUMENT, "fake tensor");
    tj_tensor_release(t);
    cr_expect_eq(live_allocations(), base);
}

/* ========================= creation errors ========================= */

Test(tensor, negative_sizes_are_shape_errors)
{
    cr_expect_null(tj_tensor_empty(TJ_FLOAT32, 2, I64(3, -1)));
    expect_status(TJ_ERR_SHAPE, "negative size -1 in shape [3, -1]");
    cr_expect_null(tj_tensor_fake(TJ_INT64, 1, I64(-5)));
    expect_status(TJ_ERR_SHAPE, "negative size -5");
}

Test(tensor, element_counts_that_overflow_are_refused)
{
    int64_t base = live_allocations();
    /* 2^32 * 2^32 wraps to exactly 0 in int64: still an overflow, not an empty tensor */
    cr_expect_null(tj_tensor_empty(TJ_FLOAT32, 2, I64(1LL << 32, 1LL << 32)));
    expect_status(TJ_ERR_OVERFLOW, "[4294967296, 4294967296] overflows");
    cr_expect_null(tj_tensor_empty(TJ_FLOAT32, 2, I64(INT64_MAX, 2)));
    expect_status(TJ_ERR_OVERFLOW, "overflows");
    cr_expect_null(tj_tensor_fake(TJ_FLOAT64, 1, I64(1LL << 61))); /* the byte count would overflow */
    expect_status(TJ_ERR_OVERFLOW, "overflows");
    cr_expect_eq(live_allocations(), base);
    /* an empty dim gives 0 elements, but its contiguous strides must still
     * be representable (in bytes): [0, 2^31, 2^31] would need a 2^62-element stride */
    cr_expect_null(tj_tensor_empty(TJ_FLOAT32, 3, I64(0, 1LL << 31, 1LL << 31)));
    expect_status(TJ_ERR_OVERFLOW, "[0, 2147483648, 2147483648] overflows");
    tj_tensor *e = tj_tensor_empty(TJ_FLOAT32, 3, I64(0, 1LL << 20, 1LL << 20));
    cr_assert_not_null(e, "%s", tj_last_error());
    cr_expect_eq(tj_tensor_numel(e), 0);
    tj_tensor_release(e);
}

Test(tensor, rank_above_eight_and_bad_arguments_are_invalid)
{
    int64_t nine[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
    cr_expect_null(tj_tensor_empty(TJ_FLOAT32, 9, nine));
    expect_status(TJ_ERR_INVALID_ARGUMENT, "rank 9");
    cr_expect_null(tj_tensor_empty(TJ_FLOAT32, -1, nine));
    expect_status(TJ_ERR_INVALID_ARGUMENT, "rank -1");
    cr_expect_null(tj_tensor_empty(TJ_FLOAT32, 2, NULL));
    expect_status(TJ_ERR_INVALID_ARGUMENT, "shape is NULL");
    cr_expect_null(tj_tensor_empty((tj_dtype)17, 1, I64(2)));
    expect_status(TJ_ERR_INVALID_ARGUMENT, "invalid dtype 17");
    cr_expect_null(tj_tensor_from_data(TJ_FLOAT32, 1, I64(2), NULL));
    expect_status(TJ_ERR_INVALID_ARGUMENT, "NULL data for 8 bytes");
    tj_tensor *e = tj_tensor_from_data(TJ_FLOAT32, 1, I64(0), NULL); /* nothing to copy */
    cr_expect_not_null(e, "%s", tj_last_error());
    tj_tensor_release(e);
    tj_tensor *s = tj_tensor_empty(TJ_FLOAT32, 0, NULL); /* rank 0 needs no shape */
    cr_expect_eq(tj_tensor_numel(s), 1);
    tj_tensor_release(s);
}

/* An allocator that never reuses a block: freed blocks are kept unchanged
 * (quarantined) until quarantine_end, so that a block freed twice is seen
 * as such instead of corrupting a free list. */
#define QUARANTINE 256
static void *quarantined[QUARANTINE];
static int n_quarantined, double_frees;

static void *quarantine_alloc(void *ctx, size_t n) { return aligned_alloc(64, (n + 63) / 64 * 64); }

static void quarantine_free(void *ctx, void *p, size_t n)
{
    for (int i = 0; i < n_quarantined; i++)
        if (quarantined[i] == p) {
            double_frees++;
            return;
        }
    if (n_quarantined < QUARANTINE) quarantined[n_quarantined++] = p;
    else free(p);
}

static void quarantine_begin(void)
{
    static const tj_allocator a = {quarantine_alloc, quarantine_free, NULL};
    n_quarantined = double_frees = 0;
    tj_set_allocator(&a);
    tj_storage_cache_set_limit(0); /* every release reaches the allocator */
}

static void quarantine_end(void)
{
    tj_set_allocator(NULL); /* the default allocator is aligned_alloc / free too */
    for (int i = 0; i < n_quarantined; i++) free(quarantined[i]);
    n_quarantined = 0;
}

/* The failed tensor is the scope's: releasing it by hand as well freed it
 * twice when the scope ended (heap corruption, a crash later). */
Test(tensor, from_data_failing_inside_a_scope_frees_nothing_twice, .init = quarantine_begin, .fini = quarantine_end)
{
    tj_scope *scope = tj_scope_begin();
    float v[2] = {1, 2};
    tj_tensor *kept = tj_tensor_from_data(TJ_FLOAT32, 1, I64(2), v);
    cr_assert_null(tj_tensor_from_data(TJ_FLOAT32, 1, I64(3), NULL));
    expect_status(TJ_ERR_INVALID_ARGUMENT, "NULL data for 12 bytes");
    cr_expect_eq(tj_tensor_item_at(kept, 1), 2.0, "the scope's other tensors are untouched");
    int freed_before_end = n_quarantined;
    tj_scope_end(scope);
    cr_expect_eq(double_frees, 0, "%d blocks freed twice", double_frees);
    cr_expect_gt(n_quarantined, freed_before_end, "the scope released its tensor");
}

Test(tensor, null_tensors_are_handled_everywhere)
{
    tj_clear_error();
    cr_expect_null(tj_tensor_retain(NULL));
    tj_tensor_release(NULL);
    cr_expect_eq(tj_tensor_dtype(NULL), TJ_FLOAT32);
    cr_expect_eq(tj_tensor_ndim(NULL), 0);
    cr_expect_eq(tj_tensor_storage_offset(NULL), 0);
    cr_expect(!tj_tensor_is_fake(NULL));
    cr_expect_null(tj_tensor_shape(NULL));
    cr_expect_null(tj_tensor_strides(NULL));
    cr_expect_eq(tj_tensor_numel(NULL), 0);
    cr_expect_eq(tj_tensor_size(NULL, 0), -1);
    cr_expect_null(tj_tensor_data(NULL));
    cr_expect(!tj_tensor_is_contiguous(NULL));
    cr_expect(!tj_tensor_shares_storage(NULL, NULL));
    cr_expect(isnan(tj_tensor_item_at(NULL, 0)));
    cr_expect_eq(tj_last_status(), TJ_OK, "an accessor set an error: %s", tj_last_error()); /* as tensor.h says */
    cr_expect_eq(tj_tensor_copy_to(NULL, &(float){0}), TJ_ERR_INVALID_ARGUMENT);
    char buf[16];
    tj_tensor_describe(NULL, buf, sizeof buf);
    cr_expect_str_eq(buf, "None");
    /* an operator given NULL fails with a message instead of crashing */
    tj_clear_error();
    cr_expect_null(tj_view(NULL, I64(2), 1));
    expect_status(TJ_ERR_INVALID_ARGUMENT, "aten::view: argument 0 'self'");
    cr_expect_null(tj_clone(tj_view(NULL, I64(2), 1)));
    expect_status(TJ_ERR_INVALID_ARGUMENT, "aten::clone");
}

Test(tensor, allocation_failure_gives_out_of_memory_and_leaks_nothing)
{
    int64_t base = live_allocations();
    /* a large tensor: the tensor object, its storage header, its data */
    for (uint64_t k = 1; k <= 3; k++) {
        tj_debug_fail_allocation(k);
        cr_expect_null(tj_tensor_empty(TJ_FLOAT32, 1, I64(1024)));
        expect_status(TJ_ERR_OUT_OF_MEMORY, "out of memory");
        tj_debug_fail_allocation(0);
        cr_expect_eq(live_allocations(), base);
    }
    /* a small one (up to 256 bytes of data) takes one block for all three */
    tj_debug_fail_allocation(1);
    cr_expect_null(tj_tensor_empty(TJ_FLOAT32, 1, I64(16)));
    expect_status(TJ_ERR_OUT_OF_MEMORY, "out of memory");
    tj_debug_fail_allocation(0);
    cr_expect_eq(live_allocations(), base);
}

/* ==================== reference counts and storage ==================== */

Test(tensor, retain_and_release_balance)
{
    int64_t base = live_allocations();
    tj_tensor *t = tj_tensor_empty(TJ_FLOAT32, 1, I64(8));
    cr_expect_eq(tj_tensor_retain(t), t);
    tj_tensor_release(t);
    cr_expect_gt(live_allocations(), base, "one reference is left");
    tj_tensor_release(t);
    cr_expect_eq(live_allocations(), base);
}

Test(tensor, a_view_keeps_the_storage_alive_after_its_base_is_released)
{
    int64_t base = live_allocations();
    float d[6] = {0, 1, 2, 3, 4, 5};
    tj_tensor *x = tj_tensor_from_data(TJ_FLOAT32, 2, I64(2, 3), d);
    tj_tensor *row = tj_select(x, 0, 1);
    cr_expect(tj_tensor_shares_storage(x, row));
    tj_tensor_release(x);
    cr_expect_eq(tj_tensor_item_at(row, 2), 5);
    tj_tensor_release(row);
    cr_expect_eq(live_allocations(), base);
}

/* A second release of a tensor whose last reference went is refused while
 * its memory is not reused. The storage cache stays on here (no
 * count_allocations): freed headers stay ours to read. Before, the second
 * release decremented the cache's free-list link stored over the refcount
 * (later allocations crashed or got one block twice), or, for a small
 * tensor whose block a view keeps, freed the storage under the view. */
TestSuite(release);

Test(release, a_second_release_is_refused_and_the_allocator_stays_intact)
{
    tj_tensor *other = tj_tensor_empty(TJ_FLOAT32, 1, I64(1024));
    tj_tensor *big = tj_tensor_empty(TJ_FLOAT32, 1, I64(1024)); /* header and data apart */
    cr_assert_not_null(other, "%s", tj_last_error());
    cr_assert_not_null(big, "%s", tj_last_error());
    tj_tensor_release(other); /* then big's header links to other's in the cache */
    tj_tensor_release(big);
    tj_clear_error();
    tj_tensor_release(big);
    expect_status(TJ_ERR_INVALID_ARGUMENT, "tj_tensor_release: tensor");
    expect_status(TJ_ERR_INVALID_ARGUMENT, "no reference left (refcount 0)");
    /* the caches hand out distinct blocks that hold their own values */
    tj_tensor *t[6];
    for (int i = 0; i < 6; i++) {
        t[i] = tj_tensor_empty(TJ_FLOAT32, 1, I64(i % 2 ? 1024 : 4));
        cr_assert_not_null(t[i], "%s", tj_last_error());
        for (int64_t k = 0; k < tj_tensor_numel(t[i]); k++) ((float *)tj_tensor_data(t[i]))[k] = (float)i;
        for (int j = 0; j < i; j++) cr_assert_neq(t[i], t[j], "tensors %d and %d share a header", i, j);
    }
    for (int i = 0; i < 6; i++) {
        cr_expect_eq(tj_tensor_item_at(t[i], 0), (double)i, "tensor %d", i);
        tj_tensor_release(t[i]);
    }
}

/* A view keeps its base (PyTorch's _base): a second release of the base by
 * hand takes the view's reference, which the view's release then finds
 * gone, and the block stays the view's until then. */
Test(release, a_second_release_of_a_small_tensor_leaves_its_view_alone)
{
    float d[6] = {0, 1, 2, 3, 4, 5};
    tj_tensor *x = tj_tensor_from_data(TJ_FLOAT32, 2, I64(2, 3), d); /* one block: header, storage, data */
    tj_tensor *row = tj_select(x, 0, 1);
    cr_assert_not_null(row, "%s", tj_last_error());
    tj_tensor_release(x);
    tj_clear_error();
    tj_tensor_release(x);
    cr_expect_eq(tj_last_status(), TJ_OK, "the view's reference: %s", tj_last_error());
    tj_tensor_release(x);
    expect_status(TJ_ERR_INVALID_ARGUMENT, "no reference left");
    /* new small tensors must not get row's block */
    tj_tensor *t[4];
    for (int i = 0; i < 4; i++) {
        t[i] = tj_tensor_from_data(TJ_FLOAT32, 2, I64(2, 3), (float[]){9, 9, 9, 9, 9, 9});
        cr_assert_not_null(t[i], "%s", tj_last_error());
    }
    for (int k = 0; k < 3; k++) cr_expect_eq(tj_tensor_item_at(row, k), 3 + k, "row[%d]", k);
    for (int i = 0; i < 4; i++) tj_tensor_release(t[i]);
    tj_clear_error();
    tj_tensor_release(row);
    expect_status(TJ_ERR_INVALID_ARGUMENT, "no reference left");
}

/* Small results share one block with their tensor and storage headers
 * (runtime/tensor.c); large ones have separate data. Either way the data is
 * 64-byte aligned and the last of base and view to go frees everything. */
Test(tensor, small_and_large_storage_is_aligned_and_freed_in_either_order)
{
    int64_t base = live_allocations();
    for (int64_t n = 1; n <= 4096; n *= 64) { /* 4, 256 and 16384 bytes */
        for (int view_last = 0; view_last < 2; view_last++) {
            tj_tensor *x = tj_tensor_empty(TJ_FLOAT32, 1, I64(n));
            cr_assert_not_null(x, "%s", tj_last_error());
            cr_expect_eq((uintptr_t)tj_tensor_data(x) % 64, 0, "n = %lld", (long long)n);
            for (int64_t i = 0; i < n; i++) ((float *)tj_tensor_data(x))[i] = (float)i;
            tj_tensor *v = tj_select(x, 0, n - 1);
            tj_tensor_release(view_last ? x : v);
            if (view_last) cr_expect_eq(tj_tensor_item_at(v, 0), (double)(n - 1));
            else cr_expect_eq(tj_tensor_item_at(x, n - 1), (double)(n - 1));
            tj_tensor_release(view_last ? v : x);
            cr_expect_eq(live_allocations(), base, "n = %lld, view released %s", (long long)n, view_last ? "last" : "first");
        }
    }
}

Test(tensor, views_share_storage_and_writes_show_through)
{
    float d[6] = {0, 1, 2, 3, 4, 5};
    tj_tensor *x = tj_tensor_from_data(TJ_FLOAT32, 2, I64(2, 3), d);
    tj_tensor *tr = tj_t(x);
    tj_tensor *other = tj_tensor_from_data(TJ_FLOAT32, 2, I64(2, 3), d);
    cr_expect(tj_tensor_shares_storage(x, tr));
    cr_expect(!tj_tensor_shares_storage(x, other));
    ((float *)tj_tensor_data(tr))[3] = -7; /* tr[0, 1] (strides (1, 3)) is x[1, 0] */
    cr_expect_eq(tj_tensor_item_at(x, 3), -7);
    cr_expect(!tj_tensor_is_contiguous(tr));
    tj_tensor_release(x);
    tj_tensor_release(tr);
    tj_tensor_release(other);
}

Test(tensor, strides_offsets_and_sizes_of_a_view)
{
    float d[12];
    for (int i = 0; i < 12; i++) d[i] = (float)i;
    tj_tensor *x = tj_tensor_from_data(TJ_FLOAT32, 2, I64(3, 4), d);
    tj_tensor *tr = tj_t(x);
    tj_tensor *v = tj_slice(tr, 0, true, 1, true, 4, 2); /* x.t()[1:4:2] */
    cr_assert_not_null(v, "%s", tj_last_error());
    cr_expect_eq(memcmp(tj_tensor_shape(v), I64(2, 3), 2 * sizeof(int64_t)), 0);
    cr_expect_eq(memcmp(tj_tensor_strides(v), I64(2, 4), 2 * sizeof(int64_t)), 0);
    cr_expect_eq(tj_tensor_storage_offset(v), 1);
    cr_expect_eq(tj_tensor_size(v, -1), 3);
    cr_expect_eq(tj_tensor_size(v, 0), 2);
    cr_expect_eq(tj_tensor_size(v, 2), -1);
    cr_expect_eq(tj_tensor_size(v, -3), -1);
    cr_expect_eq((float *)tj_tensor_data(v) - (float *)tj_tensor_data(x), 1);
    tj_tensor_release(x);
    tj_tensor_release(tr);
    tj_tensor_release(v);
}

/* ============================ reading back ============================ */

Test(tensor, copy_to_writes_row_major_for_any_strides)
{
    float d[12];
    for (int i = 0; i < 12; i++) d[i] = (float)i;
    tj_tensor *x = tj_tensor_from_data(TJ_FLOAT32, 2, I64(3, 4), d);
    float out[12];
    cr_expect_eq(tj_tensor_copy_to(x, out), TJ_OK);
    cr_expect_eq(memcmp(out, d, sizeof d), 0);
    tj_tensor *tr = tj_t(x);
    tj_tensor *v = tj_slice(tr, 0, true, 1, true, 4, 2);
    cr_expect_eq(tj_tensor_copy_to(v, out), TJ_OK);
    float want[6] = {1, 5, 9, 3, 7, 11};
    cr_expect_eq(memcmp(out, want, sizeof want), 0);
    cr_expect_eq(tj_tensor_copy_to(x, NULL), TJ_ERR_INVALID_ARGUMENT);
    tj_tensor_release(x);
    tj_tensor_release(tr);
    tj_tensor_release(v);
}

Test(tensor, item_at_reads_the_logical_order_and_bounds_checks)
{
    int64_t d[6] = {0, 1, 2, 3, 4, 5};
    tj_tensor *x = tj_tensor_from_data(TJ_INT64, 2, I64(2, 3), d);
    tj_tensor *tr = tj_t(x);
    cr_expect_eq(tj_tensor_item_at(tr, 1), 3);
    cr_expect_eq(tj_tensor_item_at(tr, 5), 5);
    cr_expect(isnan(tj_tensor_item_at(tr, 6)));
    cr_expect(isnan(tj_tensor_item_at(tr, -1)));
    tj_tensor_release(x);
    tj_tensor_release(tr);
}

Test(tensor, describe_gives_dtype_and_shape)
{
    char buf[64];
    tj_tensor *a = tj_tensor_empty(TJ_FLOAT32, 2, I64(3, 4));
    tj_tensor *b = tj_tensor_fake(TJ_FLOAT64, 1, I64(2));
    tj_tensor *c = tj_tensor_scalar_i64(1);
    tj_tensor *d = tj_tensor_empty(TJ_BOOL, 1, I64(0));
    tj_tensor_describe(a, buf, sizeof buf);
    cr_expect_str_eq(buf, "f32[3, 4]");
    tj_tensor_describe(b, buf, sizeof buf);
    cr_expect_str_eq(buf, "~f64[2]");
    tj_tensor_describe(c, buf, sizeof buf);
    cr_expect_str_eq(buf, "i64[]");
    tj_tensor_describe(d, buf, sizeof buf);
    cr_expect_str_eq(buf, "b8[0]");
    char small[6];
    tj_tensor_describe(a, small, sizeof small); /* truncated, still terminated */
    cr_expect_str_eq(small, "f32[3");
    cr_expect_str_eq(tj_shape_str(3, I64(1, 2, 3), buf, sizeof buf), "[1, 2, 3]");
    cr_expect_str_eq(tj_shape_str(0, NULL, buf, sizeof buf), "[]");
    tj_tensor_release(a);
    tj_tensor_release(b);
    tj_tensor_release(c);
    tj_tensor_release(d);
}

/* ================================ scopes ================================ */

Test(scope, end_releases_what_was_created_inside)
{
    int64_t base = live_allocations();
    tj_scope *s = tj_scope_begin();
    cr_assert_not_null(s);
    tj_tensor *x = tj_tensor_empty(TJ_FLOAT32, 1, I64(4));
    tj_tensor *v = tj_view(x, I64(2, 2), 2);
    tj_tensor *c = tj_clone(v);
    cr_expect_not_null(c);
    cr_expect_gt(live_allocations(), base);
    tj_scope_end(s);
    cr_expect_eq(live_allocations(), base);
}

Test(scope, keep_hands_a_tensor_to_the_parent_scope)
{
    int64_t base = live_allocations();
    tj_scope *outer = tj_scope_begin();
    tj_scope *inner = tj_scope_begin();
    tj_tensor *x = tj_tensor_scalar_f32(3);
    tj_tensor *kept = tj_scope_keep(tj_clone(x));
    cr_expect_not_null(kept);
    tj_scope_end(inner);
    cr_expect_eq(tj_tensor_item_at(kept, 0), 3, "kept alive by the outer scope");
    int64_t with_kept = live_allocations();
    cr_expect_lt(with_kept - base, 4, "x and the inner scope's other tensors are gone");
    tj_scope_end(outer);
    cr_expect_eq(live_allocations(), base);
}

Test(scope, keep_from_the_outermost_scope_hands_it_to_the_caller)
{
    int64_t base = live_allocations();
    tj_scope *s = tj_scope_begin();
    tj_tensor *kept = tj_scope_keep(tj_tensor_scalar_i64(42));
    tj_tensor_scalar_i64(0); /* released by the scope */
    tj_scope_end(s);
    cr_expect_eq(*(const int64_t *)tj_tensor_data(kept), 42);
    tj_tensor_release(kept); /* the caller's reference */
    cr_expect_eq(live_allocations(), base);
}

Test(scope, keep_twice_moves_up_two_levels)
{
    int64_t base = live_allocations();
    tj_scope *a = tj_scope_begin();
    tj_scope *b = tj_scope_begin();
    tj_scope *c = tj_scope_begin();
    tj_tensor *t = tj_tensor_scalar_f32(1);
    tj_scope_keep(t); /* to b */
    tj_scope_end(c);
    tj_scope_keep(t); /* to a */
    tj_scope_end(b);
    cr_expect_eq(tj_tensor_item_at(t, 0), 1);
    tj_scope_end(a);
    cr_expect_eq(live_allocations(), base);
}

Test(scope, ending_an_outer_scope_closes_the_inner_ones)
{
    int64_t base = live_allocations();
    tj_scope *outer = tj_scope_begin();
    tj_tensor_scalar_f32(1);
    tj_scope_begin();
    tj_tensor_scalar_f32(2);
    tj_scope_end(outer);
    cr_expect_eq(live_allocations(), base);
    tj_scope *again = tj_scope_begin();
    cr_expect_not_null(again);
    tj_scope_end(again);
}

Test(scope, keep_of_a_tensor_no_scope_owns_is_a_no_op)
{
    int64_t base = live_allocations();
    tj_tensor *mine = tj_tensor_scalar_f32(5); /* no scope open: the caller owns it */
    tj_scope *s = tj_scope_begin();
    cr_expect_eq(tj_scope_keep(mine), mine);
    cr_expect_null(tj_scope_keep(NULL));
    tj_scope_end(s);
    cr_expect_eq(tj_tensor_item_at(mine, 0), 5);
    tj_tensor_release(mine);
    cr_expect_eq(live_allocations(), base);
}

Test(scope, nesting_is_bounded_and_recovers)
{
    tj_scope *first = tj_scope_begin();
    int depth = 1;
    while (tj_scope_begin()) depth++;
    expect_status(TJ_ERR_OVERFLOW, "nested scopes");
    cr_expect_eq(depth, 256);
    tj_scope_end(first);
    tj_scope *s = tj_scope_begin();
    cr_expect_not_null(s);
    tj_scope_end(s);
}

Test(scope, failed_operators_inside_a_scope_leak_nothing)
{
    int64_t base = live_allocations();
    tj_scope *s = tj_scope_begin();
    tj_tensor *x = tj_tensor_empty(TJ_FLOAT32, 2, I64(2, 3));
    tj_tensor *y = tj_tensor_empty(TJ_FLOAT32, 2, I64(3, 2));
    for (uint64_t k = 1; k <= 8; k++) { /* every allocation of stack and cat fails once */
        tj_debug_fail_allocation(k);
        tj_stack((tj_tensor *[]){x, x, x}, 3, 1);
        tj_cat((tj_tensor *[]){x, tj_t(y)}, 2, 0);
        tj_reshape(tj_t(y), I64(6), 1);
    }
    tj_debug_fail_allocation(0);
    tj_scope_end(s);
    cr_expect_eq(live_allocations(), base);
}

/* ========================= AddressSanitizer ========================= */

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>

/* The storage cache keeps released blocks allocated; under ASan they are
 * poisoned past the free-list link, so a use after release is reported, and
 * unpoisoned when handed out again. */
static void cached_allocations(void) { tj_storage_cache_set_limit((size_t)1 << 30); }

Test(tensor, released_storage_is_poisoned_under_asan_until_reused, .init = cached_allocations)
{
    int64_t shape[1] = {1000};
    tj_tensor *t = tj_tensor_empty(TJ_FLOAT32, 1, shape);
    cr_assert_not_null(t);
    float *data = tj_tensor_data(t);
    cr_expect(!__asan_region_is_poisoned(data, 4000), "a live tensor's data is addressable");
    tj_tensor_release(t);
    cr_expect(__asan_address_is_poisoned(data + 500), "released data is poisoned");
    cr_expect(__asan_address_is_poisoned(data + 999), "to its last element");
    tj_tensor *again = tj_tensor_empty(TJ_FLOAT32, 1, shape);
    cr_assert_eq(tj_tensor_data(again), data, "the cache hands the same block out again");
    cr_expect(!__asan_region_is_poisoned(data, 4000), "and unpoisons it");
    tj_tensor_release(again);
}
#endif

Test(tensor, storage_larger_than_the_memory_available_is_refused_and_leaks_nothing)
{
    /* breaker43: `tjit profile mlp --batch 7000000` made a 21.9 GiB input on
     * a 23 GiB machine: malloc succeeded (overcommit), randn filled it and
     * the process was OOM-killed */
    char path[32];
    test_small_machine(path);
    int64_t live = live_allocations(), n = 20 << 20;
    cr_expect_null(tj_tensor_empty(TJ_FLOAT32, 1, &n));
    cr_expect_eq(tj_last_status(), TJ_ERR_OUT_OF_MEMORY);
    /* the reason of the refusal, not a bare "out of memory" (which the
     * tensor's allocation wrote over it before) */
    const char *want = "tj_tensor_empty: tensor storage: not enough memory: a block needs 83886080 bytes (0.08 GiB), "
                       "more than 7/8 of the 0.05 GiB available (MemAvailable + SwapFree in /tmp/tjit-meminfo-";
    cr_expect(strncmp(tj_last_error(), want, strlen(want)) == 0, "%s", tj_last_error());
    cr_expect_null(tj_randn(&n, 1, TJ_FLOAT32));
    cr_expect(strstr(tj_last_error(), "aten::randn: output 0: tensor storage: not enough memory: a block needs 83886080") != NULL,
              "%s", tj_last_error());
    cr_expect_eq(live_allocations(), live);
    tj_debug_set_meminfo_path(NULL);
    unlink(path);
    tj_tensor *t = tj_tensor_empty(TJ_FLOAT32, 1, &n);
    cr_assert_not_null(t, "%s", tj_last_error());
    tj_tensor_release(t);
    cr_expect_eq(live_allocations(), live);
}

TestSuite(storage_cache); /* the caching allocator on (count_allocations turns it off) */

Test(storage_cache, a_cached_block_is_given_whatever_the_memory_available)
{
    /* the process holds it already: taking it back needs nothing more */
    int64_t n = 20 << 20;
    tj_tensor *t = tj_tensor_empty(TJ_FLOAT32, 1, &n);
    cr_assert_not_null(t, "%s", tj_last_error());
    tj_tensor_release(t);
    char path[32];
    test_small_machine(path);
    t = tj_tensor_empty(TJ_FLOAT32, 1, &n);
    cr_expect_not_null(t, "%s", tj_last_error());
    tj_tensor_release(t);
    int64_t m = 21 << 20; /* another class: fresh memory */
    cr_expect_null(tj_tensor_empty(TJ_FLOAT32, 1, &m));
    tj_debug_set_meminfo_path(NULL);
    unlink(path);
}

Test(storage_cache, a_refusal_first_gives_the_cached_blocks_back)
{
    /* MemAvailable counts the cache's idle blocks as used: given back they
     * may make the room (here the meminfo file does not change: still refused) */
    int64_t n = 20 << 20, m = 21 << 20;
    tj_tensor *t = tj_tensor_empty(TJ_FLOAT32, 1, &n);
    cr_assert_not_null(t, "%s", tj_last_error());
    tj_tensor_release(t);
    cr_assert_geq(tj_storage_cache_bytes(), (size_t)n * 4);
    char path[32];
    test_small_machine(path);
    cr_expect_null(tj_tensor_empty(TJ_FLOAT32, 1, &m));
    cr_expect_eq(tj_last_status(), TJ_ERR_OUT_OF_MEMORY);
    cr_expect_eq(tj_storage_cache_bytes(), 0, "%zu bytes still cached", tj_storage_cache_bytes());
    tj_debug_set_meminfo_path(NULL);
    unlink(path);
}
