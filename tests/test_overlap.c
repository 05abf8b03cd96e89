/* tj_overlap_status (runtime/overlap.c) against the element sets
 * themselves: views of one small storage, drawn at random. NONE must be
 * proven (no element in common, ever), and views with one set of strides
 * (slices of one base) get NONE whenever their elements never meet. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/internal.h"
#include "test_util.h"

TestSuite(overlap, .init = test_scope_open, .fini = test_scope_close);

#define STORAGE 240

/* Marks in `hit` the storage elements view t reaches. */
static void mark(const tj_tensor *t, bool *hit)
{
    int64_t index[TJ_MAX_DIMS] = {0};
    if (tj_tensor_numel(t) == 0) return;
    for (;;) {
        int64_t at = t->offset;
        for (int d = 0; d < t->ndim; d++) at += index[d] * t->strides[d];
        hit[at] = true;
        int d = t->ndim - 1;
        while (d >= 0 && ++index[d] == t->shape[d]) index[d--] = 0;
        if (d < 0) return;
    }
}

static bool meet(const tj_tensor *a, const tj_tensor *b)
{
    bool ha[STORAGE] = {0}, hb[STORAGE] = {0};
    mark(a, ha);
    mark(b, hb);
    for (int i = 0; i < STORAGE; i++)
        if (ha[i] && hb[i]) return true;
    return false;
}

/* A random view of base within its storage: 1 to 3 dims, strides from
 * `strides` (shared between the two views of a pair) or drawn. */
static tj_tensor *random_view(tj_tensor *base, int ndim, const int64_t *strides, unsigned *seed)
{
    int64_t size[3], span = 0;
    for (int d = 0; d < ndim; d++) {
        size[d] = 1 + rand_r(seed) % 4;
        span += (size[d] - 1) * strides[d];
    }
    if (span >= STORAGE) return NULL;
    int64_t offset = rand_r(seed) % (STORAGE - span);
    return tj_as_strided(base, size, strides, ndim, true, offset);
}

Test(overlap, none_is_proven_and_slices_of_one_base_that_never_meet_get_it)
{
    unsigned seed = 7;
    tj_tensor *base = tj_zeros((int64_t[]){STORAGE}, 1, TJ_FLOAT32);
    int pairs = 0, disjoint_same_strides = 0;
    for (int trial = 0; trial < 4000; trial++) {
        int ndim = 1 + rand_r(&seed) % 3;
        int64_t sa[3], sb[3];
        bool same = rand_r(&seed) % 2;
        for (int d = 0; d < ndim; d++) {
            sa[d] = 1 + rand_r(&seed) % 24;
            sb[d] = same ? sa[d] : 1 + rand_r(&seed) % 24;
        }
        tj_scope *s = tj_scope_begin();
        tj_tensor *a = random_view(base, ndim, sa, &seed), *b = random_view(base, ndim, sb, &seed);
        if (a && b) {
            pairs++;
            tj_overlap o = tj_overlap_status(a, b);
            bool met = meet(a, b);
            cr_assert(!(o == TJ_OVERLAP_NONE && met), "trial %d: NONE for views that share an element", trial);
            /* one set of strides, each view without self-overlap: exact */
            if (same && !met && !tj_may_self_overlap(a) && !tj_may_self_overlap(b)) {
                disjoint_same_strides++;
                cr_assert_eq(o, TJ_OVERLAP_NONE, "trial %d: slices of one base that never meet", trial);
            }
        }
        tj_scope_end(s);
    }
    cr_expect_gt(pairs, 2000);
    cr_expect_gt(disjoint_same_strides, 200);
    tj_tensor_release(base);
}

/* Wider draws: 1 to 4 dims, sizes up to 5, zero strides (expand),
 * size-1 dims with any stride, strides shared per dim or not, and views
 * of different ranks. */
static tj_tensor *wide_view(tj_tensor *base, int ndim, const int64_t *strides, unsigned *seed)
{
    int64_t size[4], span = 0;
    for (int d = 0; d < ndim; d++) {
        size[d] = rand_r(seed) % 3 == 0 ? 1 : 1 + rand_r(seed) % 5;
        span += (size[d] - 1) * strides[d];
    }
    if (span >= STORAGE) return NULL;
    int64_t offset = rand_r(seed) % (STORAGE - span);
    return tj_as_strided(base, size, strides, ndim, true, offset);
}

Test(overlap, none_is_proven_for_expanded_and_size_one_dims)
{
    unsigned seed = 11;
    tj_tensor *base = tj_zeros((int64_t[]){STORAGE}, 1, TJ_FLOAT32);
    int pairs = 0;
    for (int trial = 0; trial < 200000; trial++) {
        int na = 1 + rand_r(&seed) % 4, nb = rand_r(&seed) % 4 ? na : 1 + rand_r(&seed) % 4;
        int64_t sa[4], sb[4];
        for (int d = 0; d < 4; d++) {
            sa[d] = rand_r(&seed) % 5 == 0 ? 0 : 1 + rand_r(&seed) % 40;
            sb[d] = rand_r(&seed) % 2 ? sa[d] : (rand_r(&seed) % 5 == 0 ? 0 : 1 + rand_r(&seed) % 40);
        }
        tj_scope *s = tj_scope_begin();
        tj_tensor *a = wide_view(base, na, sa, &seed), *b = wide_view(base, nb, sb, &seed);
        if (a && b) {
            pairs++;
            tj_overlap o = tj_overlap_status(a, b);
            cr_assert(!(o == TJ_OVERLAP_NONE && meet(a, b)), "trial %d: NONE for views that share an element", trial);
        }
        tj_scope_end(s);
    }
    cr_expect_gt(pairs, 50000);
    tj_tensor_release(base);
}
