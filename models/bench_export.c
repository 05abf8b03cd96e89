/* Reference files for bench/torch_ref.py: the weights, batch and results
 * PyTorch must reproduce before its figures count (see bench.h). */
#include <errno.h>
#include <math.h>
#include <string.h>
#include <sys/stat.h>

#include "bench.h"
#include "runtime/internal.h"

/* dir/MODEL<suffix> into buf. */
static const char *path_of(char *buf, size_t n, const char *dir, const char *id, const char *suffix)
{
    snprintf(buf, n, "%s/%s%s", dir, id, suffix);
    return buf;
}

/* Writes one model's files; *loss gets its first training step's loss (NAN
 * for a forward-only model). */
static tj_status export_model(const char *dir, const model_def *def, double *loss)
{
    char path[4096];
    model m;
    train_state s = {0};
    tj_status st = model_create(def, 0, &m);
    if (st != TJ_OK) return st;
    tj_scope *scope = tj_scope_begin();
    tj_tensor *x = NULL, *y = NULL, *in[MODEL_MAX_PARAMS + 1];
    *loss = NAN;
    if ((st = model_save(&m, path_of(path, sizeof path, dir, def->id, ".safetensors"))) != TJ_OK ||
        (st = bench_batch(&m, 0, &x, &y)) != TJ_OK)
        goto done;
    if ((st = tj_npy_save(path_of(path, sizeof path, dir, def->id, "_x.npy"), x)) != TJ_OK) goto done;
    if (y && (st = tj_npy_save(path_of(path, sizeof path, dir, def->id, "_y.npy"), y)) != TJ_OK) goto done;
    step_inputs(&m, NULL, x, NULL, in);
    bool prev = tj_no_grad_begin();
    tj_tensor *out = def->forward(&m, in, x);
    tj_no_grad_end(prev);
    if (!out || (st = tj_npy_save(path_of(path, sizeof path, dir, def->id, "_out.npy"), out)) != TJ_OK) {
        if (!out) st = tj_last_status();
        goto done;
    }
    if (def->trainable) {
        tj_tensor *l = train_state_init(&m, &s) == TJ_OK ? step_train_eager(&m, &s, x, y) : NULL;
        if (!l) {
            st = tj_last_status();
            goto done;
        }
        *loss = tj_tensor_item_at(l, 0);
        st = model_save(&m, path_of(path, sizeof path, dir, def->id, "_step1.safetensors"));
    }
done:
    tj_tensor_release(x);
    tj_tensor_release(y);
    tj_scope_end(scope);
    train_state_free(&s);
    model_free(&m);
    return st;
}

tj_status bench_export(const char *dir, const char *const *ids, int n)
{
    if (mkdir(dir, 0777) != 0 && errno != EEXIST)
        return tj_error(TJ_ERR_IO, "bench: cannot create directory '%s': %s", dir, strerror(errno));
    char path[4096];
    snprintf(path, sizeof path, "%s/reference.json", dir);
    FILE *f = fopen(path, "w");
    if (!f) return tj_error(TJ_ERR_IO, "bench: cannot write '%s': %s", path, strerror(errno));
    fprintf(f, "{\n  \"seed\": 0,\n  \"models\": {");
    tj_status st = TJ_OK;
    for (int i = 0; i < n && st == TJ_OK; i++) {
        const model_def *def = model_find(ids[i]);
        double loss;
        if ((st = export_model(dir, def, &loss)) != TJ_OK) break;
        const char *id = def->id;
        fprintf(f, "%s\n    \"%s\": {\"params\": \"%s.safetensors\", \"x\": \"%s_x.npy\", \"out\": \"%s_out.npy\"", i ? "," : "",
                id, id, id, id);
        if (def->trainable)
            fprintf(f, ", \"y\": \"%s_y.npy\", \"step1\": \"%s_step1.safetensors\", \"loss\": %.9g", id, id, loss);
        fprintf(f, "}");
    }
    fprintf(f, "\n  }\n}\n");
    if (st == TJ_OK) st = tj_check_written(f, "bench", path);
    fclose(f); /* flushed above: nothing is left to fail */
    return st;
}
