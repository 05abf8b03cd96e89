/* Training and evaluation on Fashion-MNIST in four modes: eager (the step
 * function called directly), traced (the whole step captured once with
 * make_fx and replayed as a plan), decomposed (the same, traced with the core
 * decomposition table) and jit (torch.compile's way: the model and its loss
 * compiled by tj_jit with gradients, tj_backward through its compiled
 * backward, then the eager optimiser). */
#ifndef TJIT_MODELS_TRAINER_H
#define TJIT_MODELS_TRAINER_H

#include <stdio.h>

#include "fashion_mnist.h"
#include "step.h"

typedef enum run_mode {
    MODE_EAGER,
    MODE_TRACED,
    MODE_DECOMPOSED,
    MODE_JIT,
    N_RUN_MODES /**< the number of modes, not a mode */
} run_mode;

/** The modes for a message: "eager, traced, decomposed or jit". */
#define RUN_MODE_CHOICES "eager, traced, decomposed or jit"

/** Parses "eager", "traced", "decomposed", "jit"; false for anything else. */
bool run_mode_parse(const char *s, run_mode *out);
const char *run_mode_name(run_mode m);

/** A model's step runner in one mode: plans are compiled per batch size on
 * first use (a data set whose size is not a multiple of the batch ends with
 * a smaller batch). In jit mode, a step is what a PyTorch user writes
 * around `torch.compile(model)`: the loss of the model through one tj_jit
 * (step_function(STEP_LOSS) on step_loss_inputs: the parameters as inputs
 * requiring grad), then step_backward_update (tj_backward through the
 * compiled backward plan, the optimiser's eager update as eager mode's). */
typedef struct runner runner;

/** native_code: the traced modes' plans are compiled with
 * tj_compile_options.native_code; a plan whose native code cannot be built
 * fails its step with the reason (TJ_ERR_UNSUPPORTED) rather than running
 * the loops unnoticed. NULL on out of memory. */
runner *runner_new(model *m, run_mode mode, bool native_code);
void runner_free(runner *r);
/** The runner's optimiser state (step.h), which its steps read and update
 * in place: a checkpoint saves it and loads into it. Borrowed. */
train_state *runner_state(runner *r);
/** One training step on (x, y); writes the loss value. Updates the model's
 * parameters and the runner's optimiser state in place. */
tj_status runner_train_step(runner *r, tj_tensor *x, tj_tensor *y, double *loss);
/** Logits of x (no gradients recorded). Borrowed until the next call. */
tj_tensor *runner_forward(runner *r, tj_tensor *x);
/** Plan statistics of the training step compiled for `batch` (traced and
 * decomposed modes; jit mode: its forward plan's, the backward plan being
 * the loss's history). Compiles it when there is none yet. Errors:
 * TJ_ERR_INVALID_ARGUMENT in eager mode, those of compiling. */
tj_status runner_train_stats(runner *r, int64_t batch, tj_plan_statistics *out);
/** Counts of the jit of the training step (calls, compiles: one per batch
 * size) in the modes other than eager; TJ_ERR_INVALID_ARGUMENT in eager mode. */
tj_status runner_train_jit_stats(runner *r, tj_jit_statistics *out);

/** Copies samples idx[0..n) of the data set into a batch x [n, ...model x
 * shape] and y [n] (new tensors). */
tj_status make_batch(const model *m, const fashion_mnist *d, const int64_t *idx, int64_t n, tj_tensor **x, tj_tensor **y);
/** A permutation of 0..n-1 from (seed, epoch) (Fisher-Yates on splitmix64). */
void shuffle_indices(int64_t *idx, int64_t n, uint64_t seed, int epoch);
/** Called after each step of train_epoch: steps done of `total`, samples
 * done, and the step's loss. */
typedef void (*batch_done_fn)(void *ctx, int64_t done, int64_t total, int64_t samples, double loss);
/** One epoch of training on d: the batches of `batch` samples (the last one
 * smaller when batch does not divide d->n) in the order of
 * shuffle_indices(seed, epoch), a step each; on_batch (may be NULL) after
 * each. The order depends on (seed, epoch) only, so that a run resumed at
 * an epoch sees the batches an uninterrupted run would. Errors: those of
 * runner_train_step, TJ_ERR_OUT_OF_MEMORY. */
tj_status train_epoch(runner *r, const fashion_mnist *d, int64_t batch, uint64_t seed, int epoch, batch_done_fn on_batch,
                      void *ctx);
/** Fraction of the test set classified correctly, in batches of 1000. */
tj_status evaluate(runner *r, const fashion_mnist *test, double *accuracy);

#endif
