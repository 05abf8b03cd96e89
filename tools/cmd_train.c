/* tjit train mlp|cnn [--epochs N] [--batch-size B] [--mode eager|traced|decomposed]
 *                    [--threads T] [--seed S] [--save FILE] [--data DIR] [--native]
 * tjit eval MODEL --load FILE [--mode ...] [--data DIR] */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "commands.h"
#include "trainer.h"

static void train_usage(FILE *f)
{
    fprintf(f, "usage: tjit train mlp|cnn [--epochs N] [--batch-size B] [--mode eager|traced|decomposed]\n"
               "                  [--threads T] [--seed S] [--save FILE] [--data DIR] [--native]\n\n"
               "Trains a model on Fashion-MNIST (Debian's dataset-fashion-mnist, or --data DIR)\n"
               "with the WORKLOADS.md recipe: cross entropy, SGD lr 0.01 momentum 0.9, batches\n"
               "shuffled each epoch from the seed. traced mode captures the whole training step\n"
               "(forward, loss, backward, optimiser) once with make_fx and replays it as a plan;\n"
               "decomposed mode does the same with the core decomposition table. Prints the test\n"
               "accuracy after each epoch and ends with 'test accuracy: 0.xxxx'. --native compiles\n"
               "the replayed plans' fused elementwise steps to machine code with the system C\n"
               "compiler (tj_compile_options.native_code, as `tjit bench --native`; cached per\n"
               "user); when it cannot be built, training stops with the reason. --save writes\n"
               "FILE through a temporary file renamed over it; when that fails after training\n"
               "(a full disk), the parameters go to tjit-train-MODEL-PID.safetensors in the\n"
               "current folder, else in $TMPDIR or /tmp, stderr says where, and it exits 1.\n\n"
               "defaults: --epochs 1 --batch-size 64 --mode traced --threads (all cores) --seed 0\n");
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* A progress bar on a terminal; a line every 10% otherwise. */
static void progress(int epoch, int64_t done, int64_t total, double images_per_s, double loss, bool tty, int *last_decile)
{
    if (tty) {
        int width = 30, filled = (int)(width * done / total);
        printf("\repoch %d [", epoch);
        for (int i = 0; i < width; i++) putchar(i < filled ? '=' : i == filled ? '>' : ' ');
        printf("] %lld/%lld  %7.0f img/s  loss %.4f ", (long long)done, (long long)total, images_per_s, loss);
        if (done == total) putchar('\n');
        fflush(stdout);
        return;
    }
    int decile = (int)(10 * done / total);
    if (decile > *last_decile || done == total) {
        *last_decile = decile;
        printf("epoch %d: %lld/%lld batches, %.0f img/s, loss %.4f\n", epoch, (long long)done, (long long)total, images_per_s, loss);
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

/* Saves the trained parameters to `path` (through a temporary file renamed
 * over it: a failed write leaves no truncated file there). When that fails
 * at the end of a run (a full disk, /dev/full, a folder removed meanwhile),
 * they go to a new file tjit-train-MODEL-PID.safetensors in the current
 * folder, else in $TMPDIR (/tmp without it), never replacing a file, and
 * stderr says where: the run is not lost at its last step. Returns the exit
 * status: 0 when saved to `path`, 1 otherwise, saved elsewhere or not. */
static int save_or_rescue(const model *m, const char *path)
{
    if (model_save(m, path) == TJ_OK) {
        printf("saved parameters to %s\n", path);
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
        if (model_save(m, rescue) == TJ_OK) {
            fprintf(stderr, "tjit train: the trained parameters are saved to '%s' instead\n", rescue);
            return 1;
        }
        fprintf(stderr, "tjit train: %s\n", tj_last_error());
    }
    fprintf(stderr, "tjit train: the trained parameters could not be saved anywhere\n");
    return 1;
}

int cmd_train(int argc, char **argv)
{
    static const struct option opts[] = {
        {"epochs", required_argument, 0, 'e'}, {"batch-size", required_argument, 0, 'b'}, {"mode", required_argument, 0, 'm'},
        {"threads", required_argument, 0, 't'}, {"seed", required_argument, 0, 's'},      {"save", required_argument, 0, 'o'},
        {"data", required_argument, 0, 'd'},    {"native", no_argument, 0, 'n'},           {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0}};
    int epochs = 1, threads = 0, batch = 64;
    unsigned long long seed = 0;
    run_mode mode = MODE_TRACED;
    const char *save = NULL, *data = NULL;
    bool native_code = false;
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "e:b:m:t:s:o:d:nh", opts, NULL)) != -1) {
        char *end = NULL;
        bool ok = true;
        switch (c) {
        case 'e': ok = cmd_parse_int(optarg, 1, INT_MAX, &epochs); break;
        case 'b': ok = cmd_parse_int(optarg, 1, INT_MAX, &batch); break;
        case 'm': ok = run_mode_parse(optarg, &mode); break;
        case 't': ok = cmd_parse_int(optarg, 1, INT_MAX, &threads); break; /* as profile: omit for all cores */
        case 's':
            errno = 0;
            seed = strtoull(optarg, &end, 10);
            ok = isdigit((unsigned char)optarg[0]) && !*end && !errno; /* digits only, as cmd_parse_int */
            break;
        case 'o': save = optarg; break;
        case 'd': data = optarg; break;
        case 'n': native_code = true; break;
        default: return cmd_usage_exit(train_usage, c);
        }
        if (!ok)
            return cmd_bad_value("train", opts, c, optarg,
                                 c == 'm'   ? "eager, traced or decomposed"
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
    if (threads) tj_set_num_threads(threads);
    fashion_mnist train, test;
    if (fashion_mnist_load_splits(data, &train, &test) != TJ_OK) {
        fprintf(stderr, "tjit train: %s\n", tj_last_error());
        return 1;
    }
    model m;
    runner *r = NULL;
    int64_t *idx = malloc(sizeof(int64_t) * (size_t)train.n);
    int rc = 1;
    if (model_create(def, seed, &m) != TJ_OK) {
        fprintf(stderr, "tjit train: %s\n", tj_last_error());
        goto free_data;
    }
    if (!idx || !(r = runner_new(&m, mode, native_code))) goto fail;
    printf("training %s on Fashion-MNIST (%lld images), %s mode%s, batch %d, %d thread%s, seed %llu\n", def->id,
           (long long)train.n, run_mode_name(mode), native_code && mode != MODE_EAGER ? " with native code" : "", batch,
           tj_get_num_threads(), tj_get_num_threads() > 1 ? "s" : "", seed);
    bool tty = isatty(STDOUT_FILENO);
    double accuracy = 0;
    int64_t n_batches = (train.n + batch - 1) / batch;
    for (int epoch = 1; epoch <= epochs; epoch++) {
        shuffle_indices(idx, train.n, seed, epoch);
        double t0 = now_s(), running = 0;
        int last_decile = 0;
        for (int64_t b = 0; b < n_batches; b++) {
            int64_t start = b * batch, n = train.n - start < batch ? train.n - start : batch;
            tj_scope *scope = tj_scope_begin();
            tj_tensor *x, *y;
            double loss = 0;
            tj_status st = make_batch(&m, &train, idx + start, n, &x, &y);
            if (st == TJ_OK) st = runner_train_step(r, x, y, &loss);
            tj_scope_end(scope);
            if (st != TJ_OK) goto fail;
            running = b ? 0.98 * running + 0.02 * loss : loss;
            progress(epoch, b + 1, n_batches, (double)(start + n) / (now_s() - t0), running, tty, &last_decile);
        }
        if (evaluate(r, &test, &accuracy) != TJ_OK) goto fail;
        printf("epoch %d: test accuracy %.4f (%.1f s)\n", epoch, accuracy, now_s() - t0);
    }
    if (native_code && mode != MODE_EAGER) { /* what --native changed: a plan without fused steps has nothing to build */
        tj_plan_statistics st;
        if (runner_train_stats(r, batch < train.n ? batch : train.n, &st) != TJ_OK) goto fail;
        printf("native code: %d runs of %d elementwise calls in the training step\n", st.n_native_segments,
               st.n_native_calls);
    }
    rc = save ? save_or_rescue(&m, save) : 0; /* says itself what failed */
    printf("test accuracy: %.4f\n", accuracy);
    goto done;
fail:
    fprintf(stderr, "tjit train: %s\n", tj_last_error());
done:
    runner_free(r);
    model_free(&m);
free_data:
    free(idx);
    fashion_mnist_free(&train);
    fashion_mnist_free(&test);
    return rc;
}

static void eval_usage(FILE *f)
{
    fprintf(f, "usage: tjit eval mlp|cnn --load FILE [--mode eager|traced|decomposed] [--data DIR]\n\n"
               "Prints the Fashion-MNIST test accuracy of parameters saved by `tjit train --save`.\n");
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
                return cmd_bad_value("eval", opts, c, optarg, "eager, traced or decomposed", eval_usage);
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
