/* Fashion-MNIST loader: IDX files, normalised as WORKLOADS.md says. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "fashion_mnist.h"
#include "idx.h"

#define MEAN 0.2860f
#define STD 0.3530f

tj_status fashion_mnist_load(const char *dir, bool train, fashion_mnist *out)
{
    memset(out, 0, sizeof *out);
    if (!dir) dir = FASHION_MNIST_DEFAULT_DIR;
    const char *prefix = train ? "train" : "t10k";
    char ipath[4096], lpath[4096];
    snprintf(ipath, sizeof ipath, "%s/%s-images-idx3-ubyte.gz", dir, prefix);
    snprintf(lpath, sizeof lpath, "%s/%s-labels-idx1-ubyte.gz", dir, prefix);
    if (access(ipath, R_OK) != 0 || access(lpath, R_OK) != 0)
        return tj_error(TJ_ERR_IO,
                        "Fashion-MNIST not found in %s (expected %s-images-idx3-ubyte.gz and %s-labels-idx1-ubyte.gz): "
                        "install Debian's package with `apt-get install dataset-fashion-mnist`, or pass --data DIR",
                        dir, prefix, prefix);
    tj_scope *scope = tj_scope_begin();
    tj_tensor *raw = idx_load_u8(ipath), *labels = raw ? idx_load_u8(lpath) : NULL;
    tj_status st = TJ_OK;
    if (!labels) {
        st = tj_last_status();
    } else if (tj_tensor_ndim(raw) != 3 || tj_tensor_ndim(labels) != 1 || tj_tensor_size(raw, 0) != tj_tensor_size(labels, 0) ||
               tj_tensor_size(raw, 1) != 28 || tj_tensor_size(raw, 2) != 28) {
        char ishape[128], lshape[128];
        st = tj_error(TJ_ERR_PARSE, "Fashion-MNIST in %s: %s-images-idx3-ubyte.gz holds %s, %s-labels-idx1-ubyte.gz %s: "
                      "expected [N, 28, 28] images and [N] labels", dir, prefix,
                      tj_shape_str(tj_tensor_ndim(raw), tj_tensor_shape(raw), ishape, sizeof ishape), prefix,
                      tj_shape_str(tj_tensor_ndim(labels), tj_tensor_shape(labels), lshape, sizeof lshape));
    } else if (tj_tensor_size(raw, 0) == 0) {
        /* nothing to train on or to measure (an accuracy of 0 / 0) */
        st = tj_error(TJ_ERR_PARSE, "Fashion-MNIST in %s: %s-images-idx3-ubyte.gz has no images", dir, prefix);
    } else {
        int64_t n = tj_tensor_size(raw, 0);
        int64_t shape[4] = {n, 1, 28, 28};
        tj_tensor *img = tj_tensor_empty(TJ_FLOAT32, 4, shape);
        if (!img) {
            st = tj_last_status();
        } else {
            const int64_t *src = tj_tensor_data(raw);
            float *dst = tj_tensor_data(img);
            for (int64_t i = 0; i < n * 784; i++) dst[i] = ((float)src[i] / 255.0f - MEAN) / STD;
            const int64_t *lab = tj_tensor_data(labels);
            for (int64_t i = 0; i < n; i++)
                if (lab[i] < 0 || lab[i] > 9) {
                    st = tj_error(TJ_ERR_PARSE, "Fashion-MNIST in %s: label %lld at %lld is not 0..9", dir, (long long)lab[i], (long long)i);
                    break;
                }
            if (st == TJ_OK) {
                out->images = tj_tensor_retain(img);
                out->labels = tj_tensor_retain(labels);
                out->n = n;
            }
        }
    }
    tj_scope_end(scope);
    return st;
}

tj_status fashion_mnist_load_splits(const char *dir, fashion_mnist *train, fashion_mnist *test)
{
    memset(test, 0, sizeof *test);
    tj_status st = fashion_mnist_load(dir, true, train);
    if (st == TJ_OK && (st = fashion_mnist_load(dir, false, test)) != TJ_OK) fashion_mnist_free(train);
    return st;
}

void fashion_mnist_free(fashion_mnist *d)
{
    tj_tensor_release(d->images);
    tj_tensor_release(d->labels);
    memset(d, 0, sizeof *d);
}
