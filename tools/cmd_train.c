/* tjit train mlp|cnn [--epochs N] [--batch-size B] [--mode eager|traced|decomposed|jit]
 *                    [--threads T] [--seed S] [--save FILE] [--resume FILE] [--data DIR] [--native]
 *                    [--flush-denormal]
 * tjit eval MODEL --load FILE [--mode ...] [--data DIR] */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "checkpoint.h"
#include "commands.h"
#include "runtime/internal.h"
#include "trainer.h"

static void train_usage(FILE *f)
{
    fprintf(f, "usage: tjit train mlp|cnn [--epochs N] [--batch-size B] [--mode eager|traced|decomposed|jit]\n"
               "                  [--threads T] [--seed S] [--save FILE] [--resume FILE] [--data DIR] [--native]\n"
               "                  [--flush-denormal]\n\n"
               "Trains a model on Fashion-MNIST (Debian's dataset-fashion-mnist, or --data DIR)\n"
               "with the WORKLOADS.md recipe: cross entropy, SGD lr 0.01 momentum 0.9, batches\n"
               "shuffled each epoch from the seed. traced mode captures the whole training step\n"
               "(forward, loss, backward, optimiser) once with make_fx and replays it as a plan;\n"
               "decomposed mode does the same with the core decomposition table. jit mode trains\n"
               "as with `torch.compile(model)`: the model and loss compiled (tj_jit: a forward\n"
               "and a backward plan), loss.backward() through the compiled backward, the\n"
               "optimiser eager (eager mode's bits). Prints the test accuracy after each epoch\n"
               "and ends with 'test accuracy: 0.xxxx'. --native compiles the replayed plans'\n"
               "fused elementwise steps to machine code with the system C compiler\n"
               "(tj_compile_options.native_code, as `tjit bench --native`; cached per user);\n"
               "when it cannot be built, training stops with the reason. --flush-denormal\n"
               "flushes denormal numbers to zero (tj_set_flush_denormal, as\n"
               "torch.set_flush_denormal(True)): faster where values underflow into denormals\n"
               "on an Intel CPU; results then differ from IEEE's there.\n\n"
               "--save writes a checkpoint to FILE after every epoch, through a temporary file\n"
               "renamed over it (a kill never leaves half a file): safetensors with the parameters\n"
               "under their state_dict names (`tjit eval` reads it), the SGD momentum buffers as\n"
               "optimizer.momentum_buffer.NAME, and __metadata__ model, epoch (epochs done), seed\n"
               "and batch_size. A failed save after an earlier epoch is a warning (the file keeps\n"
               "the epoch before; the next epoch tries again); after the last one (a full disk)\n"
               "the checkpoint goes to tjit-train-MODEL-PID.safetensors in the current folder,\n"
               "else in $TMPDIR or /tmp, stderr says where, and it exits 1.\n\n"
               "--resume FILE continues a checkpoint: --epochs N is the total, so epochs\n"
               "done+1..N run, with the shuffle of an uninterrupted run and, in the same --mode\n"
               "and --threads, its bits (--save may name the same FILE). --seed and --batch-size\n"
               "default to the checkpoint's; other values are used with a warning, as the run\n"
               "then differs from an uninterrupted one. When the checkpoint has N or more epochs\n"
               "done, it says so, trains nothing, prints the accuracy, saves (with --save) and\n"
               "exits 0, as PyTorch's `for epoch in range(start, N)` ends a finished run: a\n"
               "re-run after a kill is safe. A parameter file without optimiser state (an older\n"
               "--save) is a warm start, as `model.load_state_dict(...)` with a new\n"
               "torch.optim.SGD: its parameters, zero momentum buffers (the first step's buffer\n"
               "is then its gradient, as PyTorch's), epochs counted from 1, with a warning. A\n"
               "checkpoint of another model, a missing, extra or misshaped tensor, or bad\n"
               "metadata is refused (exit 1, nothing written).\n\n"
               "defaults: --epochs 1 --batch-size 64 --mode traced --threads (TJ_NUM_THREADS, else all cores) --seed 0\n");
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* What the progress display of an epoch keeps between its steps. */
typedef struct progress {
    int epoch, last_decile;
    bool tty;
    double t0, running_loss;
} progress;

/* A progress bar on a terminal; a line every 10% otherwise (a batch_done_fn). */
static void show_progress(void *ctx, int64_t done, int64_t total, int64_t images, double loss)
{
    progress *p = ctx;
    p->running_loss = done > 1 ? 0.98 * p->running_loss + 0.02 * loss : loss;
    double images_per_s = (double)images / (now_s() - p->t0);
    if (p->tty) {
        int width = 30, filled = (int)(width * done / total);
        printf("\repoch %d [", p->epoch);
        for (int i = 0; i < width; i++) putchar(i < filled ? '=' : i == filled ? '>' : ' ');
        printf("] %lld/%lld  %7.0f img/s  loss %.4f ", (long long)done, (long long)total, images_per_s, p->running_loss);
        if (done == total) putchar('\n');
        fflush(stdout);
        return;
    }
    int decile = (int)(10 * done / total);
    if (decile > p->last_decile || done == total) {
        p->last_decile = decile;
        printf("epoch %d: %lld/%lld %s, %.0f img/s, loss %.4f\n", p->epoch, (long long)done, (long long)total,
               tj_noun(total, "batch", "batches"), images_per_s, p->running_loss);
        fflush(stdout);
    }
}

/* The model operand of train and eval, the one argument left after the
 * options: mlp or cnn (the Fashion-MNIST classifiers). NULL when it is
 * missing or another model, after saying which on stderr. */
static const model_def *classifier_arg(const char *cmd, int argc, char **argv)
{
    if (!cmd_operands(cmd, argc, argv, 1, "the model (mlp or cnn)")) return NULL;
    const model_def *def = model_find(argv[optind]);
    if (!def) fprintf(stderr, "tjit %s: unknown model '%s'\n\n", cmd, argv[optind]);
    else if (strcmp(def->id, "mlp") && strcmp(def->id, "cnn"))
        fprintf(stderr, "tjit %s: %s is not a Fashion-MNIST model (mlp or cnn)\n\n", cmd, def->id);
    else return def;
    return NULL;
}

/* Saves the checkpoint to `path` (through a temporary file renamed over
 * it: a failed write leaves no truncated file there). When that fails at
 * the end of a run (a full disk, /dev/full, a folder removed meanwhile), it
 * goes to a new file tjit-train-MODEL-PID.safetensors in the current
 * folder, else in $TMPDIR (/tmp without it), never replacing a file, and
 * stderr says where: the run is not lost at its last step. Returns the exit
 * status: 0 when saved to `path`, 1 otherwise, saved elsewhere or not. */
static int save_or_rescue(const model *m, const train_state *s, const checkpoint_info *info, const char *path)
{
    if (checkpoint_save(m, s, info, path) == TJ_OK) {
        printf("saved the checkpoint of epoch %d to %s\n", info->epochs_done, path);
        return 0;
    }
    fprintf(stderr, "tjit train: %s\n", tj_last_error());
    const char *tmpdir = getenv("TMPDIR");
    const char *dirs[] = {".", tmpdir && *tmpdir ? tmpdir : "/tmp"};
    char rescue[PATH_MAX];
    struct stat sb;
    for (size_t i = 0; i < sizeof dirs / sizeof *dirs; i++) {
        int n = snprintf(rescue, sizeof rescue, "%s/tjit-train-%s-%ld.safetensors", dirs[i], m->def->id, (long)getpid());
        if (n < 0 || (size_t)n >= sizeof rescue || lstat(rescue, &sb) == 0) continue;
        if (checkpoint_save(m, s, info, rescue) == TJ_OK) {
            fprintf(stderr, "tjit train: the checkpoint (trained parameters and optimiser state) is saved to '%s' instead\n",
                    rescue);
            return 1;
        }
        fprintf(stderr, "tjit train: %s\n", tj_last_error());
    }
    fprintf(stderr, "tjit train: the trained parameters could not be saved anywhere\n");
    return 1;
}

/* Loads the checkpoint `path` into m and r's optimiser state for --resume
 * and settles where the run starts: *epochs_done, and *seed and *batch
 * from the checkpoint unless given (a warning when they differ). False
 * after saying why on stderr. */
static bool resume_from(const char *path, model *m, runner *r, bool seed_given, unsigned long long *seed, bool batch_given,
                        int *batch, int *epochs_done)
{
    checkpoint_info info;
    bool resumable;
    if (checkpoint_load(m, runner_state(r), path, &info, &resumable) != TJ_OK) {
        fprintf(stderr, "tjit train: --resume: %s\n", tj_last_error());
        return false;
    }
    if (!resumable) {
        fprintf(stderr, "tjit train: warning: '%s' holds parameters only (no optimiser state, no epoch count): training "
                        "from them with zero momentum buffers, from epoch 1\n", path);
        *epochs_done = 0;
        return true;
    }
    if (!seed_given) *seed = info.seed;
    else if (*seed != info.seed)
        fprintf(stderr, "tjit train: warning: --seed %llu, the checkpoint's is %" PRIu64 ": the epochs to come are "
                        "shuffled differently from an uninterrupted run\n", *seed, info.seed);
    if (!batch_given) *batch = info.batch_size;
    else if (*batch != info.batch_size)
        fprintf(stderr, "tjit train: warning: --batch-size %d, the checkpoint's is %d: the epochs to come differ from "
                        "an uninterrupted run\n", *batch, info.batch_size);
    *epochs_done = info.epochs_done;
    return true;
}

int cmd_train(int argc, char **argv)
{
    static const struct option opts[] = {
        {"epochs", required_argument, 0, 'e'}, {"batch-size", required_argument, 0, 'b'}, {"mode", required_argument, 0, 'm'},
        {"threads", required_argument, 0, 't'}, {"seed", required_argument, 0, 's'},      {"save", required_argument, 0, 'o'},
        {"resume", required_argument, 0, 'r'},  {"data", required_argument, 0, 'd'},      {"native", no_argument, 0, 'n'},
        {"flush-denormal", no_argument, 0, 'z'}, {"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
    int epochs = 1, threads = 0, batch = 64;
    unsigned long long seed = 0;
    bool seed_given = false, batch_given = false;
    run_mode mode = MODE_TRACED;
    const char *save = NULL, *resume = NULL, *data = NULL;
    bool native_code = false, flush = false;
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "e:b:m:t:s:o:r:d:nzh", opts, NULL)) != -1) {
        char *end = NULL;
        bool ok = true;
        switch (c) {
        case 'e': ok = cmd_parse_int(optarg, 1, INT_MAX, &epochs); break;
        case 'b': ok = batch_given = cmd_parse_int(optarg, 1, INT_MAX, &batch); break;
        case 'm': ok = run_mode_parse(optarg, &mode); break;
        case 't': ok = cmd_parse_int(optarg, 1, INT_MAX, &threads); break; /* as profile: omit for all cores */
        case 's':
            errno = 0;
            seed = strtoull(optarg, &end, 10);
            ok = seed_given = isdigit((unsigned char)optarg[0]) && !*end && !errno; /* digits only, as cmd_parse_int */
            break;
        case 'o': save = optarg; break;
        case 'r': resume = optarg; break;
        case 'd': data = optarg; break;
        case 'n': native_code = true; break;
        case 'z': flush = true; break;
        default: return cmd_usage_exit(train_usage, c);
        }
        if (!ok)
            return cmd_bad_value("train", opts, c, optarg,
                                 c == 'm'   ? RUN_MODE_CHOICES
                                 : c == 't' ? "a positive number of threads; omit for all cores"
                                 : c == 's' ? "a non-negative integer"
                                            : "a positive integer",
                                 train_usage);
    }
    const model_def *def = classifier_arg("train", argc, argv);
    if (!def) {
        train_usage(stderr);
        return 2;
    }
    if (save && cmd_check_output_path("train", save)) return 1; /* before the epochs, not after */
    if (flush && cmd_flush_denormal("train")) return 1;
    if (threads) tj_set_num_threads(threads);
    model m;
    runner *r = NULL;
    fashion_mnist train = {0}, test = {0};
    int rc = 1, epochs_done = 0;
    if (model_create(def, seed, &m) != TJ_OK) {
        fprintf(stderr, "tjit train: %s\n", tj_last_error());
        return 1;
    }
    if (!(r = runner_new(&m, mode, native_code))) goto fail;
    /* the checkpoint before the data: a bad one is refused at once */
    if (resume && !resume_from(resume, &m, r, seed_given, &seed, batch_given, &batch, &epochs_done)) goto done;
    if (fashion_mnist_load_splits(data, &train, &test) != TJ_OK) goto fail;
    printf("training %s on Fashion-MNIST (%lld %s), %s mode%s, batch %d, %d %s, seed %llu%s\n", def->id,
           (long long)train.n, tj_noun(train.n, "image", "images"), run_mode_name(mode),
           native_code && mode != MODE_EAGER ? " with native code" : "", batch, tj_get_num_threads(),
           tj_noun(tj_get_num_threads(), "thread", "threads"), seed, flush ? ", denormals flushed to zero" : "");
    if (resume && epochs_done >= epochs)
        printf("'%s' has %d %s done, --epochs %d: nothing to train\n", resume, epochs_done,
               tj_noun(epochs_done, "epoch", "epochs"), epochs);
    else if (resume)
        printf("resuming '%s' at epoch %d of %d\n", resume, epochs_done + 1, epochs);
    double accuracy = 0;
    checkpoint_info info = {epochs_done, seed, batch};
    /* counted by epochs done: a checkpoint may hold INT_MAX of them, and
     * epochs_done + 1 overflowed (epoch -2147483648 on trained) */
    for (int done = epochs_done; done < epochs; done++) {
        int epoch = done + 1;
        progress p = {.epoch = epoch, .tty = isatty(STDOUT_FILENO), .t0 = now_s()};
        if (train_epoch(r, &train, batch, seed, epoch, show_progress, &p) != TJ_OK ||
            evaluate(r, &test, &accuracy) != TJ_OK)
            goto fail;
        printf("epoch %d: test accuracy %.4f (%.1f s)\n", epoch, accuracy, now_s() - p.t0);
        info.epochs_done = epoch;
        if (!save || epoch == epochs) continue; /* the last one is saved below, rescued if need be */
        if (checkpoint_save(&m, runner_state(r), &info, save) == TJ_OK)
            printf("saved the checkpoint of epoch %d to %s\n", epoch, save);
        else
            fprintf(stderr, "tjit train: warning: the checkpoint of epoch %d is not saved (%s); training on\n", epoch,
                    tj_last_error());
    }
    if (epochs_done >= epochs && evaluate(r, &test, &accuracy) != TJ_OK) goto fail;
    if (native_code && mode != MODE_EAGER) { /* what --native changed: a plan without fused steps has nothing to build */
        tj_plan_statistics st;
        if (runner_train_stats(r, batch < train.n ? batch : train.n, &st) != TJ_OK) goto fail;
        printf("native code: %d %s of %d elementwise %s in the %s\n", st.n_native_segments,
               tj_noun(st.n_native_segments, "run", "runs"), st.n_native_calls,
               tj_noun(st.n_native_calls, "call", "calls"),
               mode == MODE_JIT ? "compiled forward (jit mode's backward plan not counted)" : "training step");
    }
    rc = save ? save_or_rescue(&m, runner_state(r), &info, save) : 0; /* says itself what failed */
    printf("test accuracy: %.4f\n", accuracy);
    goto done;
fail:
    fprintf(stderr, "tjit train: %s\n", tj_last_error());
done:
    runner_free(r);
    model_free(&m);
    fashion_mnist_free(&train);
    fashion_mnist_free(&test);
    return rc;
}

static void eval_usage(FILE *f)
{
    fprintf(f, "usage: tjit eval mlp|cnn --load FILE [--mode eager|traced|decomposed|jit] [--data DIR]\n\n"
               "Prints the Fashion-MNIST test accuracy of parameters saved by `tjit train --save`.\n"
               "defaults: --mode eager\n");
}

int cmd_eval(int argc, char **argv)
{
    static const struct option opts[] = {{"load", required_argument, 0, 'l'}, {"mode", required_argument, 0, 'm'},
                                         {"data", required_argument, 0, 'd'}, {"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
    const char *load = NULL, *data = NULL;
    run_mode mode = MODE_EAGER;
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "l:m:d:h", opts, NULL)) != -1) {
        switch (c) {
        case 'l': load = optarg; break;
        case 'd': data = optarg; break;
        case 'm':
            if (!run_mode_parse(optarg, &mode))
                return cmd_bad_value("eval", opts, c, optarg, RUN_MODE_CHOICES, eval_usage);
            break;
        default: return cmd_usage_exit(eval_usage, c);
        }
    }
    const model_def *def = classifier_arg("eval", argc, argv);
    if (!def || !load) {
        if (def) fprintf(stderr, "tjit eval: --load FILE is required\n\n");
        eval_usage(stderr);
        return 2;
    }
    fashion_mnist test;
    model m;
    runner *r = NULL;
    double accuracy;
    int rc = 1;
    if (fashion_mnist_load(data, false, &test) != TJ_OK) {
        fprintf(stderr, "tjit eval: %s\n", tj_last_error());
        return 1;
    }
    if (model_create(def, 0, &m) == TJ_OK) {
        if (model_load(&m, load) == TJ_OK && (r = runner_new(&m, mode, false)) && evaluate(r, &test, &accuracy) == TJ_OK) {
            printf("test accuracy: %.4f\n", accuracy);
            rc = 0;
        }
        runner_free(r);
        model_free(&m);
    }
    if (rc) fprintf(stderr, "tjit eval: %s\n", tj_last_error());
    fashion_mnist_free(&test);
    return rc;
}
