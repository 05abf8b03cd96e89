/* safetensors files (see include/tjit/safetensors.h). The JSON header goes
 * through jansson; every field is checked before any tensor is made. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "tjit/safetensors.h"

#define WHO "tj_safetensors_load"
#define MAX_HEADER ((uint64_t)100 << 20)

struct tj_safetensors {
    int n;
    size_t cap; /* entries of names and tensors */
    char **names;
    tj_tensor **tensors;
    int n_meta;
    size_t meta_cap; /* entries of meta_keys and meta_values */
    char **meta_keys, **meta_values;
};

static const char *st_dtype_name(tj_dtype d)
{
    static const char *const n[TJ_NUM_DTYPES] = {
        [TJ_FLOAT32] = "F32", [TJ_FLOAT64] = "F64", [TJ_INT64] = "I64", [TJ_BOOL] = "BOOL", [TJ_INT32] = "I32",
        [TJ_UINT8] = "U8",    [TJ_INT8] = "I8",     [TJ_INT16] = "I16", [TJ_FLOAT16] = "F16", [TJ_BFLOAT16] = "BF16"};
    return n[d];
}

static bool st_dtype_parse(const char *s, tj_dtype *d)
{
    for (int i = 0; i < TJ_NUM_DTYPES; i++)
        if (!strcmp(s, st_dtype_name((tj_dtype)i))) {
            *d = (tj_dtype)i;
            return true;
        }
    return false;
}

void tj_safetensors_free(tj_safetensors *f)
{
    if (!f) return;
    for (int i = 0; i < f->n; i++) {
        tj_free_str(f->names[i]);
        tj_tensor_release(f->tensors[i]);
    }
    for (int i = 0; i < f->n_meta; i++) {
        tj_free_str(f->meta_keys[i]);
        tj_free_str(f->meta_values[i]);
    }
    tj_free(f->names, sizeof *f->names * f->cap);
    tj_free(f->tensors, sizeof *f->tensors * f->cap);
    tj_free(f->meta_keys, sizeof *f->meta_keys * f->meta_cap);
    tj_free(f->meta_values, sizeof *f->meta_values * f->meta_cap);
    tj_free(f, sizeof *f);
}

int tj_safetensors_count(const tj_safetensors *f) { return f ? f->n : 0; }
const char *tj_safetensors_name(const tj_safetensors *f, int i) { return f && i >= 0 && i < f->n ? f->names[i] : NULL; }

tj_tensor *tj_safetensors_get(const tj_safetensors *f, const char *name)
{
    if (!f || !name) { /* a file that failed to load: say so, not "no tensor named" */
        tj_error(TJ_ERR_INVALID_ARGUMENT, "tj_safetensors_get: NULL %s", f ? "name" : "file");
        return NULL;
    }
    for (int i = 0; i < f->n; i++)
        if (!strcmp(f->names[i], name)) return f->tensors[i];
    tj_error(TJ_ERR_NOT_FOUND, "safetensors: no tensor named '%s'", name);
    return NULL;
}

const char *tj_safetensors_metadata(const tj_safetensors *f, const char *key)
{
    if (!f || !key) {
        tj_error(TJ_ERR_INVALID_ARGUMENT, "tj_safetensors_metadata: NULL %s", f ? "key" : "file");
        return NULL;
    }
    for (int i = 0; i < f->n_meta; i++)
        if (!strcmp(f->meta_keys[i], key)) return f->meta_values[i];
    tj_error(TJ_ERR_NOT_FOUND, "safetensors: no __metadata__ entry '%s'", key);
    return NULL;
}

typedef struct span {
    uint64_t begin, end;
    int tensor; /* index in the file object */
} span;

static int cmp_span(const void *a, const void *b)
{
    const span *x = a, *y = b;
    if (x->begin != y->begin) return x->begin < y->begin ? -1 : 1;
    return x->end < y->end ? -1 : x->end > y->end;
}

/* The format's reference reader (safetensors' validate): the tensors,
 * sorted by data_offsets, tile the data from byte 0 to its end: no
 * overlap, no hole, nothing after the last one. */
static tj_status check_tiling(const tj_safetensors *f, span *spans, uint64_t data_len)
{
    qsort(spans, (size_t)f->n, sizeof *spans, cmp_span);
    uint64_t at = 0;
    for (int i = 0; i < f->n; i++) {
        const span *s = &spans[i];
        const char *name = f->names[s->tensor];
        if (s->begin < at)
            return tj_error(TJ_ERR_PARSE, WHO ": tensor '%s' (data bytes [%llu, %llu)) overlaps tensor '%s', which "
                            "ends at byte %llu", name, (unsigned long long)s->begin, (unsigned long long)s->end,
                            f->names[spans[i - 1].tensor], (unsigned long long)at);
        if (s->begin > at)
            return tj_error(TJ_ERR_PARSE, WHO ": %llu unused data byte%s [%llu, %llu) before tensor '%s': the "
                            "tensors must cover the data without gaps", (unsigned long long)(s->begin - at),
                            s->begin - at == 1 ? "" : "s", (unsigned long long)at, (unsigned long long)s->begin, name);
        at = s->end;
    }
    if (at != data_len)
        return tj_error(TJ_ERR_PARSE, WHO ": %llu trailing byte%s [%llu, %llu) after the last tensor's data: the "
                        "tensors must cover the data to its end", (unsigned long long)(data_len - at),
                        data_len - at == 1 ? "" : "s", (unsigned long long)at, (unsigned long long)data_len);
    return TJ_OK;
}

/* "__metadata__": an object of strings (the format's free-form text map),
 * copied into f. */
static tj_status read_metadata(tj_safetensors *f, json_t *meta)
{
    if (!json_is_object(meta)) return tj_error(TJ_ERR_PARSE, WHO ": __metadata__ is not an object of strings");
    size_t cap = json_object_size(meta) ? json_object_size(meta) : 1;
    f->meta_keys = tj_alloc(sizeof *f->meta_keys * cap);
    f->meta_values = tj_alloc(sizeof *f->meta_values * cap);
    f->meta_cap = cap;
    if (!f->meta_keys || !f->meta_values) return tj_oom(WHO, sizeof *f->meta_keys * cap);
    const char *key;
    json_t *val;
    json_object_foreach(meta, key, val) {
        if (!json_is_string(val))
            return tj_error(TJ_ERR_PARSE, WHO ": __metadata__ entry '%s' is not a string", key);
        /* the value is freed with the key when its copy fails: no pair half made */
        char *k = tj_strdup(key, WHO), *v = k ? tj_strdup(json_string_value(val), WHO) : NULL;
        if (!v) {
            tj_free_str(k);
            return tj_last_status();
        }
        f->meta_keys[f->n_meta] = k;
        f->meta_values[f->n_meta++] = v;
    }
    return TJ_OK;
}

tj_safetensors *tj_safetensors_load_buffer(const void *buf, size_t n)
{
    const unsigned char *b = buf;
    if (!b) {
        tj_error(TJ_ERR_INVALID_ARGUMENT, WHO ": NULL buffer");
        return NULL;
    }
    if (n < 8) {
        tj_error(TJ_ERR_PARSE, WHO ": file shorter than its 8-byte header length");
        return NULL;
    }
    uint64_t hlen = 0;
    for (int i = 7; i >= 0; i--) hlen = hlen << 8 | b[i];
    if (hlen > MAX_HEADER) { /* the reference reader's limit (HeaderTooLarge) */
        tj_error(TJ_ERR_PARSE, WHO ": header length %llu is larger than the %llu bytes allowed", (unsigned long long)hlen,
                 (unsigned long long)MAX_HEADER);
        return NULL;
    }
    if (hlen > n - 8) {
        tj_error(TJ_ERR_PARSE, WHO ": header length %llu runs past the end of the file (%zu bytes)", (unsigned long long)hlen, n);
        return NULL;
    }
    json_error_t jerr;
    json_t *root = json_loadb((const char *)b + 8, (size_t)hlen, JSON_REJECT_DUPLICATES, &jerr);
    if (!root && json_error_code(&jerr) == json_error_out_of_memory) {
        tj_oom(WHO, (size_t)hlen);
        return NULL;
    }
    if (!root && json_error_code(&jerr) == json_error_duplicate_key) {
        tj_error(TJ_ERR_PARSE, WHO ": header names a key twice (%s, at byte %d of the header)", jerr.text,
                 jerr.position);
        return NULL;
    }
    if (!root && json_error_code(&jerr) == json_error_numeric_overflow) { /* a shape of 2**70 */
        tj_error(TJ_ERR_PARSE, WHO ": header holds a number out of range (%s, at byte %d of the header)", jerr.text,
                 jerr.position);
        return NULL;
    }
    if (!root || !json_is_object(root)) {
        tj_error(TJ_ERR_PARSE, WHO ": header is not a JSON object (%s)", root ? "not an object" : jerr.text);
        json_decref(root);
        return NULL;
    }
    const unsigned char *data = b + 8 + hlen;
    uint64_t data_len = n - 8 - hlen;
    /* through tj_alloc, so that failure injection reaches every block */
    size_t cap = json_object_size(root) ? json_object_size(root) : 1;
    tj_safetensors *f = tj_alloc(sizeof *f);
    span *spans = tj_alloc(sizeof *spans * cap);
    if (f) {
        *f = (tj_safetensors){.cap = cap, .names = tj_alloc(sizeof *f->names * cap),
                              .tensors = tj_alloc(sizeof *f->tensors * cap)};
    }
    if (!f || !spans || !f->names || !f->tensors) {
        tj_oom(WHO, cap * sizeof(span));
        goto fail;
    }
    const char *key;
    json_t *val;
    json_object_foreach(root, key, val) {
        if (!strcmp(key, "__metadata__")) {
            if (read_metadata(f, val) != TJ_OK) goto fail;
            continue;
        }
        tj_dtype dt;
        json_t *jd = json_object_get(val, "dtype"), *js = json_object_get(val, "shape"), *jo = json_object_get(val, "data_offsets");
        if (!json_is_object(val) || !json_is_string(jd) || !json_is_array(js) || !json_is_array(jo) || json_array_size(jo) != 2) {
            tj_error(TJ_ERR_PARSE, WHO ": tensor '%s' needs dtype, shape and data_offsets [begin, end]", key);
            goto fail;
        }
        if (!st_dtype_parse(json_string_value(jd), &dt)) {
            tj_error(TJ_ERR_UNSUPPORTED, WHO ": tensor '%s' has dtype %s (F32, F64, F16, BF16, I64, I32, I16, I8, U8 and BOOL are supported)", key, json_string_value(jd));
            goto fail;
        }
        int ndim = (int)json_array_size(js);
        int64_t shape[TJ_MAX_DIMS], numel;
        if (ndim > TJ_MAX_DIMS) {
            tj_error(TJ_ERR_UNSUPPORTED, WHO ": tensor '%s' has %d dims (at most %d)", key, ndim, TJ_MAX_DIMS);
            goto fail;
        }
        for (int d = 0; d < ndim; d++) {
            json_t *e = json_array_get(js, (size_t)d);
            if (!json_is_integer(e) || json_integer_value(e) < 0) {
                tj_error(TJ_ERR_PARSE, WHO ": tensor '%s' has a bad size in its shape", key);
                goto fail;
            }
            shape[d] = json_integer_value(e);
        }
        if (tj_checked_numel(ndim, shape, &numel, WHO) != TJ_OK) goto fail;
        json_t *j0 = json_array_get(jo, 0), *j1 = json_array_get(jo, 1);
        if (!json_is_integer(j0) || !json_is_integer(j1) || json_integer_value(j0) < 0 || json_integer_value(j1) < json_integer_value(j0) ||
            (uint64_t)json_integer_value(j1) > data_len) {
            tj_error(TJ_ERR_PARSE, WHO ": tensor '%s' has data_offsets outside the %llu data bytes", key, (unsigned long long)data_len);
            goto fail;
        }
        uint64_t begin = (uint64_t)json_integer_value(j0), end = (uint64_t)json_integer_value(j1);
        if (end - begin != (uint64_t)numel * tj_dtype_size(dt)) {
            tj_error(TJ_ERR_PARSE, WHO ": tensor '%s' spans %llu bytes, its shape needs %llu", key,
                     (unsigned long long)(end - begin), (unsigned long long)numel * tj_dtype_size(dt));
            goto fail;
        }
        /* the file object owns its tensors: made outside any scope */
        tj_meta m = {.dtype = dt, .ndim = ndim, .alias = -1};
        memcpy(m.shape, shape, sizeof(int64_t) * (size_t)ndim);
        tj_tensor *t = tj_tensor_new_meta(&m, false);
        if (!t) goto fail;
        memcpy(tj_tensor_ptr(t), data + begin, (size_t)(end - begin));
        if (dt == TJ_BOOL) {
            unsigned char *p = tj_tensor_data(t);
            for (int64_t i = 0; i < numel; i++) p[i] = p[i] != 0;
        }
        spans[f->n] = (span){begin, end, f->n};
        f->tensors[f->n] = t;
        if (!(f->names[f->n++] = tj_strdup(key, WHO))) goto fail;
    }
    if (check_tiling(f, spans, data_len) != TJ_OK) goto fail;
    tj_free(spans, sizeof *spans * cap);
    json_decref(root);
    return f;
fail:
    tj_free(spans, sizeof *spans * cap);
    tj_safetensors_free(f);
    json_decref(root);
    return NULL;
}

tj_safetensors *tj_safetensors_load(const char *path)
{
    size_t size;
    char *buf = tj_read_file(path, WHO, &size);
    if (!buf) return NULL;
    tj_safetensors *f = tj_safetensors_load_buffer(buf, size);
    tj_free_file(buf, size);
    const char *prefix = WHO ": ";
    if (!f && strncmp(tj_last_error(), prefix, strlen(prefix)) == 0) { /* the message names the file */
        char msg[768];
        snprintf(msg, sizeof msg, "%s", tj_last_error() + strlen(prefix));
        tj_error(tj_last_status(), "%s'%s': %s", prefix, path, msg);
    }
    return f;
}

/* The "__metadata__" object of n string pairs, or NULL with the error. */
static json_t *metadata_json(const char *const *keys, const char *const *values, int n)
{
    json_t *meta = json_object();
    if (!meta) {
        tj_oom("tj_safetensors_save", 0);
        return NULL;
    }
    for (int i = 0; i < n; i++) {
        bool utf8 = keys[i] && values[i] && tj_utf8_valid(keys[i]) && tj_utf8_valid(values[i]);
        const char *bad = !keys[i] || !values[i]         ? "is NULL"
                          : !utf8                          ? "is not UTF-8"
                          : json_object_get(meta, keys[i]) ? "is a duplicate"
                                                           : NULL;
        if (bad) {
            json_decref(meta);
            const char *key = keys[i] && tj_utf8_valid(keys[i]) ? keys[i] : "?";
            tj_error(TJ_ERR_INVALID_ARGUMENT, "tj_safetensors_save: metadata entry %d ('%s') %s", i, key, bad);
            return NULL;
        }
        json_t *v = json_string(values[i]);
        if (!v || json_object_set_new_nocheck(meta, keys[i], v) != 0) {
            json_decref(meta);
            tj_oom("tj_safetensors_save", 0);
            return NULL;
        }
    }
    return meta;
}

/* The header object: every jansson call checked, so that no tensor goes
 * missing from it when jansson runs out of memory. The metadata (when there
 * is any) comes first, as the format's reference writer puts it. */
static json_t *header_json(const char *const *names, tj_tensor *const *tensors, int n, json_t *meta)
{
    json_t *header = json_object();
    if (!header || (meta && json_object_set_nocheck(header, "__metadata__", meta) != 0)) {
        json_decref(header);
        tj_oom("tj_safetensors_save", 0);
        return NULL;
    }
    uint64_t offset = 0;
    for (int i = 0; i < n; i++) {
        const char *bad = !names[i] || !names[i][0]           ? "is unnamed"
                          : !tj_utf8_valid(names[i])            ? "has a name that is not UTF-8"
                          : !strcmp(names[i], "__metadata__") ? "has the name the metadata takes"
                          : json_object_get(header, names[i])   ? "has a duplicate name"
                          : !tensors[i]                         ? "is NULL"
                          : tensors[i]->fake                    ? "is fake (no data)"
                                                                : NULL;
        if (bad) {
            json_decref(header);
            const char *name = names[i] && tj_utf8_valid(names[i]) ? names[i] : "?";
            if (!tensors[i]) tj_error_null("tj_safetensors_save: tensor %d ('%s') is NULL", i, name);
            else tj_error(TJ_ERR_INVALID_ARGUMENT, "tj_safetensors_save: tensor %d ('%s') %s", i, name, bad);
            return NULL;
        }
        const tj_tensor *t = tensors[i];
        json_t *shape = json_array();
        bool ok = shape != NULL;
        for (int d = 0; ok && d < t->ndim; d++) ok = json_array_append_new(shape, json_integer(t->shape[d])) == 0;
        uint64_t bytes = (uint64_t)t->numel * tj_dtype_size(t->dtype);
        json_t *entry = ok ? json_pack("{s:s, s:O, s:[I, I]}", "dtype", st_dtype_name(t->dtype), "shape", shape, "data_offsets",
                                       (json_int_t)offset, (json_int_t)(offset + bytes))
                           : NULL;
        json_decref(shape);
        if (!entry || json_object_set_new_nocheck(header, names[i], entry) != 0) { /* the name is checked above */
            json_decref(header);
            tj_oom("tj_safetensors_save", 0);
            return NULL;
        }
        offset += bytes;
    }
    return header;
}

/* What follows the header text: its padding, then every tensor's data. */
typedef struct st_file {
    const char *text;
    size_t text_len, padded;
    tj_tensor *const *tensors;
    int n;
} st_file;

static tj_status write_file(FILE *fp, void *ctx)
{
    const st_file *sf = ctx;
    unsigned char len8[8];
    for (int i = 0; i < 8; i++) len8[i] = (unsigned char)((uint64_t)sf->padded >> (8 * i));
    bool ok = fwrite(len8, 1, 8, fp) == 8 && fwrite(sf->text, 1, sf->text_len, fp) == sf->text_len;
    for (size_t i = sf->text_len; ok && i < sf->padded; i++) ok = fputc(' ', fp) != EOF;
    for (int i = 0; ok && i < sf->n; i++) {
        size_t bytes = (size_t)sf->tensors[i]->numel * tj_dtype_size(sf->tensors[i]->dtype);
        char *data = tj_alloc(bytes ? bytes : 1);
        if (!data) return tj_oom("tj_safetensors_save", bytes);
        tj_tensor_copy_to(sf->tensors[i], data);
        ok = fwrite(data, 1, bytes, fp) == bytes;
        tj_free(data, bytes ? bytes : 1);
    }
    return ok ? TJ_OK : TJ_ERR_IO;
}

tj_status tj_safetensors_save(const char *path, const char *const *names, tj_tensor *const *tensors, int n)
{
    return tj_safetensors_save_metadata(path, names, tensors, n, NULL, NULL, 0);
}

tj_status tj_safetensors_save_metadata(const char *path, const char *const *names, tj_tensor *const *tensors, int n,
                                       const char *const *keys, const char *const *values, int n_meta)
{
    if (n < 0 || n_meta < 0)
        return tj_error(TJ_ERR_INVALID_ARGUMENT, "tj_safetensors_save: negative %s count %d", n < 0 ? "tensor" : "metadata",
                        n < 0 ? n : n_meta);
    if (!path || (n > 0 && (!names || !tensors)) || (n_meta > 0 && (!keys || !values)))
        return tj_error(TJ_ERR_INVALID_ARGUMENT, "tj_safetensors_save: NULL path, names, tensors, keys or values");
    json_t *meta = NULL;
    if (n_meta > 0 && !(meta = metadata_json(keys, values, n_meta))) return tj_last_status();
    json_t *header = header_json(names, tensors, n, meta);
    json_decref(meta);
    if (!header) return tj_last_status();
    char *text = json_dumps(header, JSON_COMPACT | JSON_PRESERVE_ORDER);
    json_decref(header);
    if (!text) return tj_oom("tj_safetensors_save", 0);
    size_t tl = strlen(text);
    st_file sf = {.text = text, .text_len = tl, .padded = (tl + 7) / 8 * 8, /* keep the data 8-byte aligned */
                  .tensors = tensors, .n = n};
    tj_status st = tj_write_file_replacing(path, "tj_safetensors_save", write_file, &sf);
    free(text);
    return st;
}
