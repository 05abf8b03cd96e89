/* The three training modes (eager, traced, decomposed) from one seed give the
 * same losses and parameters, to within float32 round-off. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "models/trainer.h"

#define STEPS 4

/* A small synthetic data set with the Fashion-MNIST layout. */
static void synthetic(fashion_mnist *d, int64_t n)
{
    d->n = n;
    d->images = tj_tensor_empty(TJ_FLOAT32, 4, (int64_t[]){n, 1, 28, 28});
    d->labels = tj_tensor_empty(TJ_INT64, 1, &n);
    float *x = tj_tensor_data(d->images);
    int64_t *y = tj_tensor_data(d->labels);
    uint64_t s = 12345;
    for (int64_t i = 0; i < n * 784; i++) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        x[i] = (float)((s >> 40) & 0xffff) / 65536.0f - 0.5f;
    }
    for (int64_t i = 0; i < n; i++) y[i] = (i * 7) % 10;
}

static void train_losses(const char *model_id, run_mode mode, bool native_code, const fashion_mnist *d, double *losses,
                         model *m)
{
    cr_assert_eq(model_create(model_find(model_id), 0, m), TJ_OK, "%s", tj_last_error());
    runner *r = runner_new(m, mode, native_code);
    cr_assert_not_null(r, "%s", tj_last_error());
    int64_t idx[64];
    for (int step = 0; step < STEPS; step++) {
        for (int64_t i = 0; i < 64; i++) idx[i] = (step * 64 + i) % d->n;
        tj_scope *s = tj_scope_begin();
        tj_tensor *x, *y;
        cr_assert_eq(make_batch(m, d, idx, 64, &x, &y), TJ_OK);
        cr_assert_eq(runner_train_step(r, x, y, &losses[step]), TJ_OK, "%s step %d: %s", run_mode_name(mode), step,
                     tj_last_error());
        tj_scope_end(s);
    }
    if (native_code) { /* else the bits compared below would be the loops' on both sides */
        tj_plan_statistics st;
        cr_assert_eq(runner_train_stats(r, 64, &st), TJ_OK, "%s", tj_last_error());
        cr_assert_gt(st.n_native_segments, 0);
    }
    runner_free(r);
}

static void three_modes_agree(const char *model_id)
{
    fashion_mnist d;
    synthetic(&d, 256);
    double losses[3][STEPS];
    model m[3];
    for (int mode = 0; mode < 3; mode++) train_losses(model_id, (run_mode)mode, false, &d, losses[mode], &m[mode]);
    for (int step = 0; step < STEPS; step++)
        for (int mode = 1; mode < 3; mode++)
            cr_expect(fabs(losses[mode][step] - losses[0][step]) <= 1e-5 * fabs(losses[0][step]) + 1e-6,
                      "%s step %d: %s loss %.9g, eager %.9g", model_id, step, run_mode_name((run_mode)mode),
                      losses[mode][step], losses[0][step]);
    cr_expect(losses[0][STEPS - 1] != losses[0][0], "the loss did not move");
    for (int p = 0; p < m[0].n_params; p++)
        for (int mode = 1; mode < 3; mode++)
            for (int64_t i = 0; i < tj_tensor_numel(m[0].params[p]); i += 101) {
                double e = tj_tensor_item_at(m[0].params[p], i), g = tj_tensor_item_at(m[mode].params[p], i);
                cr_expect(fabs(g - e) <= 1e-5 * fabs(e) + 1e-6, "%s %s[%ld]: %s %.9g, eager %.9g", model_id, m[0].names[p],
                          (long)i, run_mode_name((run_mode)mode), g, e);
            }
    for (int mode = 0; mode < 3; mode++) model_free(&m[mode]);
    fashion_mnist_free(&d);
}

Test(training, mlp_eager_traced_and_decomposed_agree) { three_modes_agree("mlp"); }
Test(training, cnn_eager_traced_and_decomposed_agree) { three_modes_agree("cnn"); }

/* Native code (tjit train --native) changes no bit of the decomposed step:
 * the same losses and parameters as the plan's own loops. */
Test(training, mlp_decomposed_with_native_code_keeps_the_bits)
{
    fashion_mnist d;
    synthetic(&d, 256);
    double losses[2][STEPS];
    model m[2];
    for (int native = 0; native < 2; native++) train_losses("mlp", MODE_DECOMPOSED, native, &d, losses[native], &m[native]);
    for (int step = 0; step < STEPS; step++)
        cr_expect(!memcmp(&losses[0][step], &losses[1][step], sizeof(double)), "step %d: %.17g with native code, %.17g without",
                  step, losses[1][step], losses[0][step]);
    for (int p = 0; p < m[0].n_params; p++) {
        size_t bytes = (size_t)tj_tensor_numel(m[0].params[p]) * sizeof(float);
        cr_expect(!memcmp(tj_tensor_data(m[0].params[p]), tj_tensor_data(m[1].params[p]), bytes), "%s differs",
                  m[0].names[p]);
    }
    for (int native = 0; native < 2; native++) model_free(&m[native]);
    fashion_mnist_free(&d);
}

/* A compiler that cannot run stops the step with the reason instead of
 * training on the loops unnoticed. */
Test(training, native_code_that_cannot_be_built_fails_the_step)
{
    char dir[] = "/tmp/tjit-train-cache-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    setenv("TJ_CACHE_DIR", dir, 1);
    setenv("TJ_CC", "/nonexistent/cc", 1);
    fashion_mnist d;
    synthetic(&d, 64);
    model m;
    cr_assert_eq(model_create(model_find("mlp"), 0, &m), TJ_OK, "%s", tj_last_error());
    runner *r = runner_new(&m, MODE_DECOMPOSED, true);
    cr_assert_not_null(r, "%s", tj_last_error());
    int64_t idx[64];
    for (int64_t i = 0; i < 64; i++) idx[i] = i;
    tj_scope *s = tj_scope_begin();
    tj_tensor *x, *y;
    double loss = 0;
    cr_assert_eq(make_batch(&m, &d, idx, 64, &x, &y), TJ_OK);
    cr_expect_eq(runner_train_step(r, x, y, &loss), TJ_ERR_UNSUPPORTED);
    cr_expect(strstr(tj_last_error(), "native code not built") && strstr(tj_last_error(), "/nonexistent/cc"), "%s",
              tj_last_error());
    tj_scope_end(s);
    runner_free(r);
    model_free(&m);
    fashion_mnist_free(&d);
    rmdir(dir);
}
