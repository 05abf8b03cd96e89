/* tjit called from inside the user's own OpenMP parallel region: nested
 * regions get a team of one thread (libgomp's default), so a kernel that
 * asks for nt threads must still compute every block (kernels/parallel.h's
 * guarantee). Each region thread's result must equal the one computed
 * outside any region. */
#include <criterion/criterion.h>
#include <omp.h>
#include <string.h>

#include "kernels/gemv.h"
#include "test_util.h"

TestSuite(nested_omp, .init = test_scope_open, .fini = test_scope_close);

typedef tj_tensor *(*op_fn)(tj_tensor *a, tj_tensor *b);

/* Counts, per region thread, the elements of op(a, b) that differ from the
 * result outside any region. */
static void expect_same_inside_a_region(const char *what, op_fn op, tj_tensor *a, tj_tensor *b)
{
    tj_set_num_threads(2);
    tj_tensor *ref = op(a, b);
    cr_assert_not_null(ref, "%s", tj_last_error());
    int64_t n = tj_tensor_numel(ref);
    float *want = malloc(sizeof(float) * (size_t)n);
    cr_assert_not_null(want);
    cr_assert_eq(tj_tensor_copy_to(ref, want), TJ_OK);
    int bad[2] = {0, 0};
    /* Our AVX-512 and AVX2 kernels give the same bytes on any split; without
     * them (TJ_ISA=generic) OpenBLAS's sgemv outside a region and a plain
     * loop inside (kernels/gemv.c) round apart */
    bool exact = tj_k_gemv_on_own_kernel(TJ_FLOAT32, 1);
#pragma omp parallel num_threads(2)
    {
        tj_scope *s = tj_scope_begin();
        tj_tensor *y = op(a, b);
        float *got = y ? malloc(sizeof(float) * (size_t)n) : NULL;
        int me = omp_get_thread_num();
        if (!got || tj_tensor_copy_to(y, got) != TJ_OK) bad[me] = -1;
        else
            for (int64_t j = 0; j < n; j++)
                bad[me] += exact ? memcmp(&got[j], &want[j], sizeof(float)) != 0 : !test_close(got[j], want[j], 1e-5, 1e-5);
        free(got);
        tj_scope_end(s);
    }
    free(want);
    cr_expect(bad[0] == 0 && bad[1] == 0, "%s: %d and %d of %lld outputs differ inside a region", what, bad[0], bad[1],
              (long long)n);
}

static tj_tensor *mm(tj_tensor *a, tj_tensor *b) { return tj_mm(a, b); }
static tj_tensor *mm_bt(tj_tensor *a, tj_tensor *b) { return tj_mm(a, tj_t(b)); }

Test(nested_omp, a_large_vector_matrix_product_computes_every_output_inside_a_region)
{
    /* [1, 1024] x [1024, 512]: our gemv kernels, split over threads from
     * 192 Ki matrix elements */
    tj_tensor *x = test_random_f32(2, (int64_t[]){1, 1024}, 1), *w = test_random_f32(2, (int64_t[]){1024, 512}, 2);
    expect_same_inside_a_region("x @ w", mm, x, w);
    tj_tensor *wt = test_random_f32(2, (int64_t[]){512, 1024}, 3);
    expect_same_inside_a_region("x @ w.t()", mm_bt, x, wt);
}
