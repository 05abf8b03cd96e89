/* Training checkpoints (models/checkpoint.c): what a checkpoint holds, that
 * tjit eval's model_load reads one, that a parameter file is a warm start,
 * and that a bad file is refused naming the problem, changing nothing and
 * leaking nothing. (That resuming gives the bits of an uninterrupted run is
 * test_training.c's.) */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "models/checkpoint.h"
#include "alloc_counter.h"

static char *tmp_path(const char *name)
{
    static char path[256];
    snprintf(path, sizeof path, "/tmp/tjit_test_%d_%s", (int)getpid(), name);
    return path;
}

/* An mlp with its momentum buffers set to i + k / 8 (not the zeros of a new
 * state, so that a load that skipped them would show). */
static void mlp_with_state(uint64_t seed, model *m, train_state *s)
{
    cr_assert_eq(model_create(model_find("mlp"), seed, m), TJ_OK, "%s", tj_last_error());
    cr_assert_eq(train_state_init(m, s), TJ_OK, "%s", tj_last_error());
    for (int i = 0; i < s->n; i++) {
        float *p = tj_tensor_data(s->tensors[i]);
        for (int64_t k = 0; k < tj_tensor_numel(s->tensors[i]); k++) p[k] = (float)seed + (float)i + (float)k / 8;
    }
}

static double sum_of(const tj_tensor *t)
{
    double sum = 0;
    for (int64_t k = 0; k < tj_tensor_numel(t); k++) sum += tj_tensor_item_at(t, k);
    return sum;
}

/* One number for every parameter (m may be NULL) and state value (s may be
 * NULL), weighted by position. */
static double checksum(const model *m, const train_state *s)
{
    double sum = 0;
    for (int i = 0; m && i < m->n_params; i++) sum += (i + 1) * sum_of(m->params[i]);
    for (int i = 0; s && i < s->n; i++) sum += (i + 100) * sum_of(s->tensors[i]);
    return sum;
}

Test(checkpoint, round_trip_keeps_parameters_state_and_metadata)
{
    model a, b;
    train_state sa, sb;
    mlp_with_state(1, &a, &sa);
    mlp_with_state(2, &b, &sb);
    const char *path = tmp_path("ck.safetensors");
    checkpoint_info info = {7, UINT64_MAX, 33};
    cr_assert_eq(checkpoint_save(&a, &sa, &info, path), TJ_OK, "%s", tj_last_error());

    tj_safetensors *f = tj_safetensors_load(path);
    cr_assert_not_null(f, "%s", tj_last_error());
    cr_expect_eq(tj_safetensors_count(f), 2 * a.n_params);
    cr_expect_str_eq(tj_safetensors_name(f, a.n_params), "optimizer.momentum_buffer.fc1.weight");
    cr_expect_str_eq(tj_safetensors_metadata(f, "model"), "mlp");
    cr_expect_str_eq(tj_safetensors_metadata(f, "epoch"), "7");
    cr_expect_str_eq(tj_safetensors_metadata(f, "seed"), "18446744073709551615");
    cr_expect_str_eq(tj_safetensors_metadata(f, "batch_size"), "33");
    tj_safetensors_free(f);

    checkpoint_info got = {0};
    bool resumable = false;
    cr_assert_eq(checkpoint_load(&b, &sb, path, &got, &resumable), TJ_OK, "%s", tj_last_error());
    cr_expect(resumable);
    cr_expect(got.epochs_done == 7 && got.seed == UINT64_MAX && got.batch_size == 33);
    cr_expect_eq(checksum(&b, &sb), checksum(&a, &sa));

    /* tjit eval: the parameters of a checkpoint, its optimiser state skipped */
    model c;
    cr_assert_eq(model_create(model_find("mlp"), 3, &c), TJ_OK);
    cr_assert_eq(model_load(&c, path), TJ_OK, "%s", tj_last_error());
    cr_expect_eq(checksum(&c, NULL), checksum(&a, NULL));

    /* a parameter file (an older --save): the parameters, the state left as it is */
    cr_assert_eq(model_save(&c, path), TJ_OK, "%s", tj_last_error());
    model d;
    train_state sd;
    mlp_with_state(4, &d, &sd);
    double state_before = checksum(NULL, &sd);
    got = (checkpoint_info){-1, 9, 9};
    resumable = true;
    cr_assert_eq(checkpoint_load(&d, &sd, path, &got, &resumable), TJ_OK, "%s", tj_last_error());
    cr_expect(!resumable);
    cr_expect(got.epochs_done == 0 && got.seed == 0 && got.batch_size == 0, "a parameter file has no position");
    cr_expect_eq(checksum(&d, NULL), checksum(&a, NULL));
    cr_expect_eq(checksum(NULL, &sd), state_before);

    remove(path);
    train_state_free(&sa);
    train_state_free(&sb);
    train_state_free(&sd);
    model_free(&a);
    model_free(&b);
    model_free(&c);
    model_free(&d);
}

/* A checkpoint of `m` and `s` as checkpoint_save writes it, changed in one
 * way: a tensor left out, one added, one misshaped or in float64, a
 * metadata entry changed or left out (value NULL), or no metadata at all. */
typedef struct variant {
    const char *drop, *extra, *misshape, *retype;
    const char *key, *value;
    bool no_metadata;
    tj_status status;
    const char *needle; /* in the message */
} variant;

static void write_variant(const model *m, const train_state *s, const variant *v, const char *path)
{
    const char *names[4 * MODEL_MAX_PARAMS];
    char state_names[3 * MODEL_MAX_PARAMS][96];
    tj_tensor *tensors[4 * MODEL_MAX_PARAMS];
    int n = 0;
    tj_scope *scope = tj_scope_begin();
    for (int i = 0; i < m->n_params + s->n; i++) {
        const char *name = i < m->n_params ? m->names[i] : state_names[i - m->n_params];
        if (i >= m->n_params)
            snprintf(state_names[i - m->n_params], sizeof state_names[0], "optimizer.momentum_buffer.%s",
                     m->names[i - m->n_params]);
        if (v->drop && !strcmp(name, v->drop)) continue;
        tj_tensor *t = i < m->n_params ? m->params[i] : s->tensors[i - m->n_params];
        if (v->misshape && !strcmp(name, v->misshape)) t = tj_zeros((int64_t[]){3}, 1, TJ_FLOAT32);
        if (v->retype && !strcmp(name, v->retype)) t = tj_to_copy(t, TJ_FLOAT64);
        names[n] = name;
        tensors[n++] = t;
    }
    if (v->extra) {
        names[n] = v->extra;
        tensors[n++] = tj_zeros((int64_t[]){2}, 1, TJ_FLOAT32);
    }
    const char *keys[4] = {"model", "epoch", "seed", "batch_size"}, *values[4] = {"mlp", "1", "0", "64"};
    int n_meta = 0;
    for (int k = 0; !v->no_metadata && k < 4; k++) {
        bool changed = v->key && !strcmp(keys[k], v->key);
        if (changed && !v->value) continue;
        keys[n_meta] = keys[k];
        values[n_meta++] = changed ? v->value : values[k];
    }
    cr_assert_eq(tj_safetensors_save_metadata(path, names, tensors, n, keys, values, n_meta), TJ_OK, "%s",
                 tj_last_error());
    tj_scope_end(scope);
}

Test(checkpoint, a_bad_checkpoint_is_refused_naming_the_problem_and_changes_nothing, .init = count_allocations)
{
    const variant cases[] = {
        {.key = "model", .value = "cnn", .status = TJ_ERR_INVALID_ARGUMENT, .needle = "is a checkpoint of cnn, not mlp"},
        {.drop = "optimizer.momentum_buffer.fc3.bias", .status = TJ_ERR_NOT_FOUND,
         .needle = "has no tensor 'optimizer.momentum_buffer.fc3.bias'"},
        {.drop = "fc2.weight", .status = TJ_ERR_NOT_FOUND, .needle = "has no tensor 'fc2.weight'"},
        {.extra = "optimizer.momentum_buffer.fc9.weight", .status = TJ_ERR_INVALID_ARGUMENT,
         .needle = "holds a tensor 'optimizer.momentum_buffer.fc9.weight' that is neither a parameter nor optimiser state"},
        {.extra = "fc9.weight", .status = TJ_ERR_INVALID_ARGUMENT, .needle = "holds a tensor 'fc9.weight'"},
        {.misshape = "optimizer.momentum_buffer.fc1.bias", .status = TJ_ERR_SHAPE,
         .needle = "tensor 'optimizer.momentum_buffer.fc1.bias' in "},
        {.retype = "fc2.bias", .status = TJ_ERR_SHAPE, .needle = "tensor 'fc2.bias' in "},
        {.key = "epoch", .value = "one", .status = TJ_ERR_INVALID_ARGUMENT, .needle = "\"epoch\" is 'one', not a number"},
        {.key = "epoch", .value = "-1", .status = TJ_ERR_INVALID_ARGUMENT, .needle = "\"epoch\" is '-1', not a number"},
        {.key = "epoch", .value = "2147483648", .status = TJ_ERR_INVALID_ARGUMENT, .needle = "not a number in [0, 2147483647]"},
        {.key = "seed", .value = NULL, .status = TJ_ERR_INVALID_ARGUMENT, .needle = "has no \"seed\" in its __metadata__"},
        {.key = "batch_size", .value = "0", .status = TJ_ERR_INVALID_ARGUMENT, .needle = "\"batch_size\" is '0', not a number in [1, 2147483647]"},
        {.key = "batch_size", .value = " 64", .status = TJ_ERR_INVALID_ARGUMENT, .needle = "\"batch_size\" is ' 64'"},
        /* optimiser state without metadata, or an epoch without optimiser state: a part of a checkpoint */
        {.no_metadata = true, .status = TJ_ERR_INVALID_ARGUMENT, .needle = "has no \"epoch\" in its __metadata__"},
    };
    model good, m;
    train_state sg, s;
    mlp_with_state(1, &good, &sg);
    mlp_with_state(2, &m, &s);
    const char *path = tmp_path("bad.safetensors");
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        write_variant(&good, &sg, &cases[i], path);
        tj_tensor *p0 = m.params[0], *s0 = s.tensors[0];
        double before = checksum(&m, &s);
        int64_t live = live_allocations();
        checkpoint_info info = {-1, 0, 0};
        cr_expect_eq(checkpoint_load(&m, &s, path, &info, NULL), cases[i].status, "case %zu: %s", i, tj_last_error());
        cr_expect(strstr(tj_last_error(), cases[i].needle) && strstr(tj_last_error(), path), "case %zu: '%s' lacks '%s'",
                  i, tj_last_error(), cases[i].needle);
        cr_expect(m.params[0] == p0 && s.tensors[0] == s0 && checksum(&m, &s) == before, "case %zu changed the model", i);
        cr_expect_eq(info.epochs_done, -1, "case %zu wrote its info", i);
        cr_expect_eq(live_allocations(), live, "case %zu leaked", i);
    }
    /* an epoch count without optimiser state */
    cr_assert_eq(tj_safetensors_save_metadata(path, good.names, good.params, good.n_params, (const char *[]){"epoch"},
                                              (const char *[]){"1"}, 1),
                 TJ_OK, "%s", tj_last_error());
    cr_expect_eq(checkpoint_load(&m, &s, path, NULL, NULL), TJ_ERR_NOT_FOUND);
    cr_expect(strstr(tj_last_error(), "has no tensor 'optimizer.momentum_buffer.fc1.weight'"), "%s", tj_last_error());
    /* model_load (tjit eval) skips optimiser tensors but not others, and reads "model" */
    const variant for_eval[] = {
        {.key = "model", .value = "cnn", .needle = "is a checkpoint of cnn, not mlp"},
        {.extra = "fc9.weight", .needle = "holds a tensor 'fc9.weight' that is not a parameter of mlp"},
    };
    for (size_t i = 0; i < sizeof for_eval / sizeof *for_eval; i++) {
        write_variant(&good, &sg, &for_eval[i], path);
        double before = checksum(&m, NULL);
        cr_expect_eq(model_load(&m, path), TJ_ERR_INVALID_ARGUMENT);
        cr_expect(strstr(tj_last_error(), for_eval[i].needle), "%s", tj_last_error());
        cr_expect_eq(checksum(&m, NULL), before);
    }
    write_variant(&good, &sg, &(variant){.extra = "optimizer.momentum_buffer.fc9.weight"}, path);
    cr_expect_eq(model_load(&m, path), TJ_OK, "%s", tj_last_error());
    cr_expect_eq(checksum(&m, NULL), checksum(&good, NULL));
    remove(path);
    train_state_free(&sg);
    train_state_free(&s);
    model_free(&good);
    model_free(&m);
}
