/* The training modes (eager, traced, decomposed, jit) from one seed give the
 * same losses and parameters, to within float32 round-off (jit mode: bit for
 * bit); a run resumed from a checkpoint gives the bits of an uninterrupted
 * one. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "models/checkpoint.h"
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

/* STEPS steps of 64 samples in `mode` from seed 0: their losses, the trained
 * model in m, and the counts of the training step's jit in *jit (may be
 * NULL; not in eager mode). */
static void train_losses(const char *model_id, run_mode mode, bool native_code, const fashion_mnist *d, double *losses,
                         model *m, tj_jit_statistics *jit)
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
    if (jit) cr_assert_eq(runner_train_jit_stats(r, jit), TJ_OK, "%s", tj_last_error());
    runner_free(r);
}

static void all_modes_agree(const char *model_id)
{
    fashion_mnist d;
    synthetic(&d, 256);
    double losses[N_RUN_MODES][STEPS];
    model m[N_RUN_MODES];
    for (int mode = 0; mode < N_RUN_MODES; mode++)
        train_losses(model_id, (run_mode)mode, false, &d, losses[mode], &m[mode], NULL);
    for (int step = 0; step < STEPS; step++)
        for (int mode = 1; mode < N_RUN_MODES; mode++)
            cr_expect(fabs(losses[mode][step] - losses[0][step]) <= 1e-5 * fabs(losses[0][step]) + 1e-6,
                      "%s step %d: %s loss %.9g, eager %.9g", model_id, step, run_mode_name((run_mode)mode),
                      losses[mode][step], losses[0][step]);
    cr_expect(losses[0][STEPS - 1] != losses[0][0], "the loss did not move");
    for (int p = 0; p < m[0].n_params; p++)
        for (int mode = 1; mode < N_RUN_MODES; mode++)
            for (int64_t i = 0; i < tj_tensor_numel(m[0].params[p]); i += 101) {
                double e = tj_tensor_item_at(m[0].params[p], i), g = tj_tensor_item_at(m[mode].params[p], i);
                cr_expect(fabs(g - e) <= 1e-5 * fabs(e) + 1e-6, "%s %s[%ld]: %s %.9g, eager %.9g", model_id, m[0].names[p],
                          (long)i, run_mode_name((run_mode)mode), g, e);
            }
    for (int mode = 0; mode < N_RUN_MODES; mode++) model_free(&m[mode]);
    fashion_mnist_free(&d);
}

Test(training, mlp_all_modes_agree) { all_modes_agree("mlp"); }
Test(training, cnn_all_modes_agree) { all_modes_agree("cnn"); }

/* jit mode (the model and loss through tj_jit, tj_backward through its
 * compiled backward, the eager optimiser) gives eager mode's losses and
 * parameters bit for bit: the compiled forward and backward run the
 * kernels eager mode runs. Its jit traced and compiled on the first step
 * only; the other steps replayed its plans. */
static void jit_mode_keeps_the_bits(const char *model_id)
{
    fashion_mnist d;
    synthetic(&d, 256);
    double losses[2][STEPS];
    model m[2];
    tj_jit_statistics st;
    train_losses(model_id, MODE_EAGER, false, &d, losses[0], &m[0], NULL);
    train_losses(model_id, MODE_JIT, false, &d, losses[1], &m[1], &st);
    for (int step = 0; step < STEPS; step++)
        cr_expect(!memcmp(&losses[0][step], &losses[1][step], sizeof(double)), "%s step %d: jit %.17g, eager %.17g",
                  model_id, step, losses[1][step], losses[0][step]);
    cr_expect(losses[0][STEPS - 1] != losses[0][0], "the loss did not move");
    for (int p = 0; p < m[0].n_params; p++) {
        size_t bytes = (size_t)tj_tensor_numel(m[0].params[p]) * sizeof(float);
        cr_expect(!memcmp(tj_tensor_data(m[0].params[p]), tj_tensor_data(m[1].params[p]), bytes), "%s %s differs",
                  model_id, m[0].names[p]);
        cr_expect(!tj_tensor_requires_grad(m[1].params[p]), "%s %s: jit mode marked the model's own tensor", model_id,
                  m[1].names[p]);
    }
    cr_expect(st.compiles == 1 && st.calls == STEPS && st.eager_calls == 0, "%s: %lld compiles, %lld calls, %lld eager",
              model_id, (long long)st.compiles, (long long)st.calls, (long long)st.eager_calls);
    for (int i = 0; i < 2; i++) model_free(&m[i]);
    fashion_mnist_free(&d);
}

Test(training, mlp_jit_mode_gives_the_bits_of_eager_mode) { jit_mode_keeps_the_bits("mlp"); }
Test(training, cnn_jit_mode_gives_the_bits_of_eager_mode) { jit_mode_keeps_the_bits("cnn"); }

/* Native code (tjit train --native) changes no bit of the decomposed step:
 * the same losses and parameters as the plan's own loops. */
Test(training, mlp_decomposed_with_native_code_keeps_the_bits)
{
    fashion_mnist d;
    synthetic(&d, 256);
    double losses[2][STEPS];
    model m[2];
    for (int native = 0; native < 2; native++)
        train_losses("mlp", MODE_DECOMPOSED, native, &d, losses[native], &m[native], NULL);
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

/* Resuming: 2 epochs in one run give the bits of 1 epoch, a checkpoint, and
 * the 2nd epoch in new objects (another init, plans compiled before the
 * load), in each mode. 40 samples in batches of 16: 3 steps an epoch, the
 * last one of 8 (a second plan), shuffled per epoch. */
#define RESUME_SEED 5
#define RESUME_BATCH 16

static void train_epochs(runner *r, const fashion_mnist *d, int first, int last)
{
    for (int e = first; e <= last; e++)
        cr_assert_eq(train_epoch(r, d, RESUME_BATCH, RESUME_SEED, e, NULL, NULL), TJ_OK, "epoch %d: %s", e, tj_last_error());
}

/* Whether every parameter and state tensor of (a, sa) and (b, sb) has the same bits. */
static bool same_bits(const model *a, const train_state *sa, const model *b, const train_state *sb)
{
    bool same = sa->n == sb->n;
    for (int i = 0; same && i < a->n_params + sa->n; i++) {
        const tj_tensor *x = i < a->n_params ? a->params[i] : sa->tensors[i - a->n_params];
        const tj_tensor *y = i < a->n_params ? b->params[i] : sb->tensors[i - a->n_params];
        same = tj_tensor_numel(x) == tj_tensor_numel(y) &&
               !memcmp(tj_tensor_data(x), tj_tensor_data(y), sizeof(float) * (size_t)tj_tensor_numel(x));
    }
    return same;
}

/* A model trained from the checkpoint at `path` for epoch 2; with
 * zero_momentum, its loaded momentum buffers are zeroed first. */
static runner *resumed(const char *model_id, run_mode mode, const char *path, const fashion_mnist *d, bool zero_momentum,
                       model *m)
{
    cr_assert_eq(model_create(model_find(model_id), 99, m), TJ_OK, "%s", tj_last_error());
    runner *r = runner_new(m, mode, false);
    cr_assert_not_null(r, "%s", tj_last_error());
    tj_plan_statistics st;
    if (mode != MODE_EAGER) cr_assert_eq(runner_train_stats(r, RESUME_BATCH, &st), TJ_OK, "%s", tj_last_error());
    checkpoint_info info;
    bool resumable = false;
    cr_assert_eq(checkpoint_load(m, runner_state(r), path, &info, &resumable), TJ_OK, "%s", tj_last_error());
    cr_expect(resumable);
    cr_expect(info.epochs_done == 1 && info.seed == RESUME_SEED && info.batch_size == RESUME_BATCH, "info %d %llu %d",
              info.epochs_done, (unsigned long long)info.seed, info.batch_size);
    train_state *s = runner_state(r);
    for (int i = 0; zero_momentum && i < s->n; i++)
        memset(tj_tensor_data(s->tensors[i]), 0, sizeof(float) * (size_t)tj_tensor_numel(s->tensors[i]));
    train_epochs(r, d, 2, 2);
    return r;
}

static void resume_keeps_the_bits(const char *model_id)
{
    fashion_mnist d;
    synthetic(&d, 40);
    char path[128];
    snprintf(path, sizeof path, "/tmp/tjit_test_%d_resume_%s.safetensors", (int)getpid(), model_id);
    for (int mode = 0; mode < N_RUN_MODES; mode++) {
        const char *name = run_mode_name((run_mode)mode);
        model whole, part, again, zeroed;
        cr_assert_eq(model_create(model_find(model_id), RESUME_SEED, &whole), TJ_OK, "%s", tj_last_error());
        runner *rw = runner_new(&whole, (run_mode)mode, false);
        cr_assert_not_null(rw, "%s", tj_last_error());
        train_epochs(rw, &d, 1, 2);

        cr_assert_eq(model_create(model_find(model_id), RESUME_SEED, &part), TJ_OK, "%s", tj_last_error());
        runner *rp = runner_new(&part, (run_mode)mode, false);
        cr_assert_not_null(rp, "%s", tj_last_error());
        train_epochs(rp, &d, 1, 1);
        cr_expect(!same_bits(&whole, runner_state(rw), &part, runner_state(rp)), "%s %s: epoch 2 changed nothing",
                  model_id, name);
        checkpoint_info info = {1, RESUME_SEED, RESUME_BATCH};
        cr_assert_eq(checkpoint_save(&part, runner_state(rp), &info, path), TJ_OK, "%s", tj_last_error());
        runner_free(rp);
        model_free(&part);

        runner *ra = resumed(model_id, (run_mode)mode, path, &d, false, &again);
        cr_expect(same_bits(&whole, runner_state(rw), &again, runner_state(ra)),
                  "%s %s: 1 epoch + resume differs from 2 epochs in one run", model_id, name);
        /* the control: without the momentum buffers the bits differ */
        runner *rz = resumed(model_id, (run_mode)mode, path, &d, true, &zeroed);
        cr_expect(!same_bits(&whole, runner_state(rw), &zeroed, runner_state(rz)),
                  "%s %s: the momentum buffers made no difference", model_id, name);
        runner_free(rz);
        runner_free(ra);
        runner_free(rw);
        model_free(&zeroed);
        model_free(&again);
        model_free(&whole);
    }
    remove(path);
    fashion_mnist_free(&d);
}

Test(training, mlp_resumed_after_an_epoch_matches_an_uninterrupted_run_in_every_mode) { resume_keeps_the_bits("mlp"); }
Test(training, cnn_resumed_after_an_epoch_matches_an_uninterrupted_run_in_every_mode) { resume_keeps_the_bits("cnn"); }
